/* Parameters of the data-movement ops that both the opdef (shape inference) and the CPU kernel need,
 * computed by one function so the two can't disagree. Implemented in engine/opdef/transform.c. */
#pragma once

#include "engine/host_device.h"
#include "engine/op.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

/* Shape-15: the [start, end) window of dims that Shape returns, clamped to [0, rank]. */
static inline void mrt_shape_window(const mrt_op_ctx *ctx, int rank, int64_t *start, int64_t *end)
{
    int64_t s = ctx->opset >= 15 ? mrt_attr_int(ctx, "start", 0) : 0;
    int64_t e = ctx->opset >= 15 ? mrt_attr_int(ctx, "end", rank) : rank;
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *start = s;
    *end = e < s ? s : e;
}

/* Slice: per input axis, the first element, the step and the output extent. */
typedef struct mrt_slice_params {
    int64_t start[MRT_MAX_RANK];
    int64_t step[MRT_MAX_RANK];
    int64_t out[MRT_MAX_RANK];
} mrt_slice_params;

/* Reads starts/ends/axes/steps (attributes before opset 10, inputs after). *need_data is set (and OK
   returned) when an input they come from has no data yet. */
mrt_status mrt_slice_params_get(const mrt_op_ctx *ctx, mrt_slice_params *p, bool *need_data);

/* Slice as a strided copy: x's element strides per output dim into xstr; returns the first element's offset. */
static inline int64_t mrt_slice_strides(const mrt_slice_params *p, const mrt_tensor *x, int64_t *xstr)
{
    int64_t s[MRT_MAX_RANK], base = 0;
    mrt_shape_strides(x->rank, x->shape, s);
    for (int d = 0; d < x->rank; d++) {
        base += p->start[d] * s[d];
        xstr[d] = p->step[d] * s[d];
    }
    return base;
}

/* Transpose as a strided copy: x's element strides per output dim (the 'perm' attribute, default reversed). */
static inline void mrt_transpose_strides(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t *xstr)
{
    int r = x->rank, perm[MRT_MAX_RANK];
    const int64_t *p;
    int64_t np, s[MRT_MAX_RANK];
    bool given = mrt_attr_ints(ctx, "perm", &p, &np);
    for (int i = 0; i < r; i++) perm[i] = given ? (int)(p[i] < 0 ? p[i] + r : p[i]) : r - 1 - i;
    mrt_shape_strides(r, x->shape, s);
    for (int i = 0; i < r; i++) xstr[i] = s[perm[i]];
}

/* DepthToSpace / SpaceToDepth as a strided copy: y viewed as 6-D (shape), reading x viewed as 6-D xshape6 through
   permutation perm (xstr). */
static inline void mrt_shuffle6_strides(const int64_t *xshape6, const int *perm, int64_t *shape, int64_t *xstr)
{
    int64_t s[6];
    mrt_shape_strides(6, xshape6, s);
    for (int i = 0; i < 6; i++) {
        shape[i] = xshape6[perm[i]];
        xstr[i] = s[perm[i]];
    }
}

/* Split: the size of every output along *axis (sizes has ctx->n_outputs entries), from 'split' (attribute or
   input), 'num_outputs' (opset 18) or an even split. */
mrt_status mrt_split_sizes(const mrt_op_ctx *ctx, int *axis, int64_t *sizes, bool *need_data);

typedef enum mrt_pad_mode { MRT_PAD_CONSTANT, MRT_PAD_REFLECT, MRT_PAD_EDGE, MRT_PAD_WRAP } mrt_pad_mode;

/* Pad: per axis, elements added before/after (negative = cropped) and the output extent. */
typedef struct mrt_pad_params {
    mrt_pad_mode mode;
    int64_t begin[MRT_MAX_RANK];
    int64_t end[MRT_MAX_RANK];
    int64_t out[MRT_MAX_RANK];
} mrt_pad_params;

mrt_status mrt_pad_params_get(const mrt_op_ctx *ctx, mrt_pad_params *p, bool *need_data);

/* Pad's input coordinate for output coordinate o along one axis, or -1 for the constant: one definition for the
   CPU and CUDA kernels (engine/host_device.h). */
static inline MRT_HD int64_t mrt_pad_map(int64_t o, int64_t begin, int64_t dim, mrt_pad_mode mode)
{
    int64_t i = o - begin;
    if (i >= 0 && i < dim) return i;
    switch (mode) {
    case MRT_PAD_EDGE: return i < 0 ? 0 : dim - 1;
    case MRT_PAD_WRAP: return ((i % dim) + dim) % dim;
    case MRT_PAD_REFLECT: {
        if (dim == 1) return 0;
        int64_t period = 2 * (dim - 1), k = ((i % period) + period) % period;
        return k < dim ? k : period - k;
    }
    default: return -1;
    }
}

/* Pad before opset 11: the 'value' attribute as one element of dtype dt at cval. */
static inline void mrt_pad_attr_value(const mrt_op_ctx *ctx, mrt_dtype dt, void *cval)
{
    double v = mrt_attr_float(ctx, "value", 0.0f);
    if (mrt_dtype_is_float(dt)) mrt_store_f64(dt, cval, 0, v);
    else mrt_store_i64(dt, cval, 0, mrt_f64_to_i64_sat(v));
}

/* Range: max(ceil((limit - start) / delta), 0) from the scalar inputs (exact for integer types).
   Implemented in engine/opdef/shape.c. */
mrt_status mrt_range_count(const mrt_op_ctx *ctx, const mrt_tensor *start, const mrt_tensor *limit,
                           const mrt_tensor *delta, int64_t *count);

#ifdef __cplusplus
}
#endif
