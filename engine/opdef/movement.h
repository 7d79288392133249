/* Parameters of the data-movement ops that both the opdef (shape inference) and the CPU kernel need,
 * computed by one function so the two can't disagree. Implemented in engine/opdef/transform.c. */
#pragma once

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

/* Range: max(ceil((limit - start) / delta), 0) from the scalar inputs (exact for integer types).
   Implemented in engine/opdef/shape.c. */
mrt_status mrt_range_count(const mrt_op_ctx *ctx, const mrt_tensor *start, const mrt_tensor *limit,
                           const mrt_tensor *delta, int64_t *count);

#ifdef __cplusplus
}
#endif
