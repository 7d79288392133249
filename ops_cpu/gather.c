/* CPU kernels of Gather, GatherElements, GatherND (batch_dims), Scatter/ScatterElements/ScatterND (reduction
 * none/add/mul/max/min; reductions on plain numeric types, float16/bfloat16 and bool), Compress, OneHot, NonZero.
 * Negative indices count from the end; an out-of-range index is an error naming it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"
#include "ops_cpu/movement.h"

static int64_t load_index(const mrt_tensor *t, int64_t i)
{
    return t->dtype == MRT_DTYPE_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

/* Normalise index v (position pos of the indices tensor) into [0, dim). */
static mrt_status fix_index(const mrt_op_ctx *ctx, int64_t *v, int64_t dim, int64_t pos, int axis)
{
    int64_t i = *v < 0 ? *v + dim : *v;
    if (i < 0 || i >= dim)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "index %lld (element %lld of 'indices') is out of range [%lld, %lld] for axis %d of size "
                           "%lld",
                           (long long)*v, (long long)pos, (long long)-dim, (long long)dim - 1, axis, (long long)dim);
    *v = i;
    return MRT_STATUS_OK;
}

/* Gather, GatherElements, GatherND and the scatters check every index into a table of int64 offsets first (at most
   one per index element): their workspace. */
static size_t index_table_bytes(const mrt_tensor *indices)
{
    return (size_t)mrt_tensor_numel(indices) * sizeof(int64_t);
}

static mrt_status mrt_cpu_index_table_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, index_table_bytes(mrt_input(ctx, 1)));
    return MRT_STATUS_OK;
}

static int norm_axis(const mrt_op_ctx *ctx, int rank, int64_t def)
{
    int64_t a = mrt_attr_int(ctx, "axis", def);
    return (int)(a < 0 ? a + rank : a);
}

/* ------------------------------------------------------------------ Gather */

static mrt_status mrt_cpu_gather(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, x->rank, 0);
    int64_t outer = 1, inner = 1, dim = x->shape[axis], n = mrt_tensor_numel(idx);
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    int64_t *ix = mrt_workspace(ctx, index_table_bytes(idx));
    if (!ix) return MRT_STATUS_OUT_OF_MEMORY;
    for (int64_t j = 0; j < n; j++) {
        ix[j] = load_index(idx, j);
        MRT_TRY(fix_index(ctx, &ix[j], dim, j, axis));
    }
    mrt_mover m = mrt_mover_of(x->dtype);
    /* single elements (a gather along the last axis) as typed copies: one memcpy call per element took 6.8 ns
       (ConvBERT's span gathers, 38% of its run) */
#define GATHER_ELEMENTS(T)                                                                                        \
    for (int64_t o = 0; o < outer; o++)                                                                           \
        for (int64_t j = 0; j < n; j++) ((T *)y->data)[o * n + j] = ((const T *)x->data)[o * dim + ix[j]];
    if (inner == 1 && m.esize == 4) GATHER_ELEMENTS(uint32_t)
    else if (inner == 1 && m.esize == 8) GATHER_ELEMENTS(uint64_t)
    else if (inner == 1 && m.esize == 2) GATHER_ELEMENTS(uint16_t)
    else if (inner == 1 && m.esize == 1) GATHER_ELEMENTS(uint8_t)
    else
        for (int64_t o = 0; inner && o < outer; o++)
            for (int64_t j = 0; j < n; j++)
                mrt_mover_copy(&m, y->data, (o * n + j) * inner, x->data, (o * dim + ix[j]) * inner, inner);
#undef GATHER_ELEMENTS
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ GatherElements / ScatterElements */

typedef enum red_kind { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_kind;

static red_kind reduction_of(const mrt_op_ctx *ctx)
{
    const char *r = ctx->opset >= 16 ? mrt_attr_string(ctx, "reduction", "none") : "none";
    return strcmp(r, "add") == 0 ? RED_ADD : strcmp(r, "mul") == 0 ? RED_MUL : strcmp(r, "max") == 0 ? RED_MAX
         : strcmp(r, "min") == 0 ? RED_MIN : RED_NONE;
}

#define RED_INT(T)                                                                                              \
    {                                                                                                           \
        T *d = (T *)y + yo;                                                                                     \
        const T *s = (const T *)u + uo;                                                                         \
        for (int64_t k = 0; k < n; k++) {                                                                       \
            T a = d[k], b = s[k];                                                                               \
            /* wrap like the hardware instead of overflowing */                                                 \
            d[k] = r == RED_ADD ? (T)((uint64_t)a + (uint64_t)b) : r == RED_MUL ? (T)((uint64_t)a * (uint64_t)b) \
                 : r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);                                            \
        }                                                                                                       \
        return;                                                                                                 \
    }
#define RED_FLOAT(T, LOAD, STORE)                                                                               \
    {                                                                                                           \
        T *d = (T *)y + yo;                                                                                     \
        const T *s = (const T *)u + uo;                                                                         \
        for (int64_t k = 0; k < n; k++) {                                                                       \
            double a = LOAD(d[k]), b = LOAD(s[k]);                                                              \
            double v = r == RED_ADD ? a + b : r == RED_MUL ? a * b : r == RED_MAX ? (a > b || isnan(a) ? a : b)  \
                     : (a < b || isnan(a) ? a : b);                                                             \
            d[k] = STORE(v);                                                                                    \
        }                                                                                                       \
        return;                                                                                                 \
    }
#define ID(v) (v)
#define F16_LOAD(v) mrt_f16_to_f32(v)
#define F16_STORE(v) mrt_f32_to_f16((float)(v))
#define BF16_LOAD(v) mrt_bf16_to_f32(v)
#define BF16_STORE(v) mrt_f32_to_bf16((float)(v))

/* y[yo .. yo+n) = y (reduction) u[uo .. uo+n); the opdef refused the dtypes this can't reduce. */
static void reduce_into(mrt_mover *m, red_kind r, void *y, int64_t yo, const void *u, int64_t uo, int64_t n)
{
    if (r == RED_NONE) {
        mrt_mover_copy(m, y, yo, u, uo, n);
        return;
    }
    switch (m->dt) {
    case MRT_DTYPE_UINT8: RED_INT(uint8_t)
    case MRT_DTYPE_INT8: RED_INT(int8_t)
    case MRT_DTYPE_UINT16: RED_INT(uint16_t)
    case MRT_DTYPE_INT16: RED_INT(int16_t)
    case MRT_DTYPE_UINT32: RED_INT(uint32_t)
    case MRT_DTYPE_INT32: RED_INT(int32_t)
    case MRT_DTYPE_UINT64: RED_INT(uint64_t)
    case MRT_DTYPE_INT64: RED_INT(int64_t)
    case MRT_DTYPE_FLOAT: RED_FLOAT(float, ID, (float))
    case MRT_DTYPE_DOUBLE: RED_FLOAT(double, ID, ID)
    case MRT_DTYPE_FLOAT16: RED_FLOAT(uint16_t, F16_LOAD, F16_STORE)
    case MRT_DTYPE_BFLOAT16: RED_FLOAT(uint16_t, BF16_LOAD, BF16_STORE)
    case MRT_DTYPE_BOOL: {
        uint8_t *d = (uint8_t *)y + yo;
        const uint8_t *s = (const uint8_t *)u + uo;
        for (int64_t k = 0; k < n; k++) d[k] = (r == RED_ADD || r == RED_MAX) ? (d[k] || s[k]) : (d[k] && s[k]);
        return;
    }
    default: mrt_mover_copy(m, y, yo, u, uo, n); return;
    }
}

/* Shared walk of GatherElements and ScatterElements: for every element of `idx` (row-major), the offset in a
   tensor of shape `shape` where the axis coordinate is replaced by the index. */
static mrt_status element_offsets(mrt_op_ctx *ctx, const mrt_tensor *idx, int rank, const int64_t *shape,
                                  int axis, int64_t **out)
{
    int64_t n = mrt_tensor_numel(idx), st[MRT_MAX_RANK], c[MRT_MAX_RANK] = {0}, base = 0;
    int64_t *off = mrt_workspace(ctx, index_table_bytes(idx));
    if (!off) return MRT_STATUS_OUT_OF_MEMORY;
    mrt_shape_strides(rank, shape, st);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = load_index(idx, i);
        MRT_TRY(fix_index(ctx, &v, shape[axis], i, axis));
        off[i] = base + v * st[axis];
        for (int d = rank - 1; d >= 0; d--) {
            if (d != axis) base += st[d];
            if (++c[d] < idx->shape[d]) break;
            if (d != axis) base -= st[d] * c[d];
            c[d] = 0;
        }
    }
    *out = off;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_gather_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t *off, n = mrt_tensor_numel(idx);
    MRT_TRY(element_offsets(ctx, idx, x->rank, x->shape, norm_axis(ctx, x->rank, 0), &off));
    mrt_mover m = mrt_mover_of(x->dtype);
    /* 4- and 8-byte elements as typed copies: a memcpy call each cost 7 ns (Faster R-CNN's box pooling) */
    if (m.esize == 4)
        for (int64_t i = 0; i < n; i++) ((uint32_t *)y->data)[i] = ((const uint32_t *)x->data)[off[i]];
    else if (m.esize == 8)
        for (int64_t i = 0; i < n; i++) ((uint64_t *)y->data)[i] = ((const uint64_t *)x->data)[off[i]];
    else
        for (int64_t i = 0; i < n; i++) mrt_mover_copy(&m, y->data, i, x->data, off[i], 1);
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_scatter_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1), *upd = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t *off, n = mrt_tensor_numel(idx);
    MRT_TRY(element_offsets(ctx, idx, x->rank, x->shape, norm_axis(ctx, x->rank, 0), &off));
    MRT_TRY(mrt_mover_copy_all(ctx, y, x));
    mrt_mover m = mrt_mover_of(x->dtype);
    red_kind r = reduction_of(ctx);
    /* plain stores of 4- and 8-byte elements typed (Faster R-CNN's box pooling: 7.5 ns an element through the
       generic reduce); later indices win, as in the loop below */
    if (r == RED_NONE && m.esize == 4)
        for (int64_t i = 0; i < n; i++) ((uint32_t *)y->data)[off[i]] = ((const uint32_t *)upd->data)[i];
    else if (r == RED_NONE && m.esize == 8)
        for (int64_t i = 0; i < n; i++) ((uint64_t *)y->data)[off[i]] = ((const uint64_t *)upd->data)[i];
    else
        for (int64_t i = 0; i < n; i++) reduce_into(&m, r, y->data, off[i], upd->data, i, 1);
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ GatherND / ScatterND */

/* Offsets (in elements of data) of the slices addressed by the index tuples in the last dim of idx, the first
   b dims of idx and data being batch dims. */
static mrt_status nd_offsets(mrt_op_ctx *ctx, const mrt_tensor *x, const mrt_tensor *idx, int b,
                             int64_t **out, int64_t *n_tuples, int64_t *slice)
{
    int64_t m = idx->shape[idx->rank - 1], batch = 1, per_batch = 1, st[MRT_MAX_RANK];
    for (int d = 0; d < b; d++) batch *= idx->shape[d];
    for (int d = b; d < idx->rank - 1; d++) per_batch *= idx->shape[d];
    mrt_shape_strides(x->rank, x->shape, st);
    *slice = b + m < x->rank ? st[b + m - 1] : 1;
    int64_t batch_stride = b > 0 ? st[b - 1] : 0, nt = batch * per_batch;
    int64_t *off = mrt_workspace(ctx, index_table_bytes(idx)); /* nt <= numel(idx) */
    if (!off) return MRT_STATUS_OUT_OF_MEMORY;
    for (int64_t t = 0; t < nt; t++) {
        int64_t o = (t / (per_batch ? per_batch : 1)) * batch_stride;
        for (int64_t k = 0; k < m; k++) {
            int64_t v = load_index(idx, t * m + k);
            MRT_TRY(fix_index(ctx, &v, x->shape[b + k], t * m + k, (int)(b + k)));
            o += v * st[b + k];
        }
        off[t] = o;
    }
    *out = off;
    *n_tuples = nt;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_gather_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int b = ctx->opset >= 12 ? (int)mrt_attr_int(ctx, "batch_dims", 0) : 0;
    int64_t *off, nt, slice;
    MRT_TRY(nd_offsets(ctx, x, idx, b, &off, &nt, &slice));
    mrt_mover m = mrt_mover_of(x->dtype);
    for (int64_t t = 0; t < nt; t++) mrt_mover_copy(&m, y->data, t * slice, x->data, off[t], slice);
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_scatter_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1), *upd = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t *off, nt, slice;
    MRT_TRY(nd_offsets(ctx, x, idx, 0, &off, &nt, &slice));
    MRT_TRY(mrt_mover_copy_all(ctx, y, x));
    mrt_mover m = mrt_mover_of(x->dtype);
    red_kind r = reduction_of(ctx);
    for (int64_t t = 0; t < nt; t++) reduce_into(&m, r, y->data, off[t], upd->data, t * slice, slice);
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ Compress, OneHot, NonZero */

static mrt_status mrt_cpu_compress(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *cond = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    const uint8_t *c = (const uint8_t *)cond->data;
    const mrt_attr *a = mrt_node_attr(ctx->node, "axis");
    mrt_mover m = mrt_mover_of(x->dtype);
    int64_t outer = 1, inner = 1, dim = mrt_tensor_numel(x);
    if (a) {
        int axis = norm_axis(ctx, x->rank, 0);
        dim = x->shape[axis];
        for (int d = 0; d < axis; d++) outer *= x->shape[d];
        for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    }
    int64_t n = cond->shape[0] < dim ? cond->shape[0] : dim, pos = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n; j++)
            if (c[j]) {
                mrt_mover_copy(&m, y->data, pos, x->data, (o * dim + j) * inner, inner);
                pos += inner;
            }
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_one_hot(mrt_op_ctx *ctx)
{
    const mrt_tensor *idx = mrt_input(ctx, 0), *vals = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, y->rank, -1);
    int64_t depth = y->shape[axis], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= y->shape[d];
    for (int d = axis + 1; d < y->rank; d++) inner *= y->shape[d];
    mrt_mover m = mrt_mover_of(vals->dtype);
    mrt_mover_fill(&m, y->data, 0, vals->data, 0, mrt_tensor_numel(y));
    bool fidx = mrt_dtype_is_float(idx->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t p = o * inner + i;
            double dv = fidx ? mrt_load_f64(idx->dtype, idx->data, p) : 0;
            if (fidx && !(dv > -9e18 && dv < 9e18)) continue;
            int64_t v = fidx ? (int64_t)dv : mrt_load_i64(idx->dtype, idx->data, p);
            if (v < 0) v += depth;
            if (v < 0 || v >= depth) continue; /* out of range: all off_value */
            mrt_mover_copy(&m, y->data, (o * depth + v) * inner + i, vals->data, 1, 1);
        }
    return mrt_mover_status(&m, ctx);
}

static bool is_nonzero(const mrt_tensor *x, int64_t i)
{
    if (mrt_dtype_is_float(x->dtype)) return mrt_load_f64(x->dtype, x->data, i) != 0;
    return mrt_load_i64(x->dtype, x->data, i) != 0;
}

/* NonZero of one-byte elements (bool masks: a detector's score > threshold): the count and, along the last axis,
   the positions without a branch per element. RetinaNet's 8.19M-element masks (41% set) took 48 ms each through
   is_nonzero and a branch that the data defeats. */
static void nonzero_bytes(const uint8_t *x, int64_t n, int r, const int64_t *dims, int64_t count, int64_t *out)
{
    int64_t last = dims[r - 1], rows = last ? n / last : 0, k = 0, c[MRT_MAX_RANK] = {0};
    int64_t *lastc = out + (int64_t)(r - 1) * count;
    for (int64_t row = 0; row < rows; row++) {
        const uint8_t *xr = x + row * last;
        int64_t k0 = k;
        /* a slot past the end is written when the last element is zero: the output holds count entries */
        for (int64_t j = 0; j < last; j++) {
            if (k < count) lastc[k] = j;
            k += xr[j] != 0;
        }
        for (int d = 0; d < r - 1; d++)
            for (int64_t t = k0; t < k; t++) out[d * count + t] = c[d];
        for (int d = r - 2; d >= 0; d--) {
            if (++c[d] < dims[d]) break;
            c[d] = 0;
        }
    }
}

static mrt_status mrt_cpu_nonzero(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t n = mrt_tensor_numel(x), count = 0;
    bool bytes = mrt_dtype_bits(x->dtype) == 8 && !mrt_dtype_is_float(x->dtype);
    if (bytes)
        for (int64_t i = 0; i < n; i++) count += ((const uint8_t *)x->data)[i] != 0;
    else
        for (int64_t i = 0; i < n; i++) count += is_nonzero(x, i);
    /* a scalar behaves like a 1-element vector (numpy) */
    int r = x->rank ? x->rank : 1;
    int64_t shape[2] = {r, count}, dims[MRT_MAX_RANK], c[MRT_MAX_RANK] = {0};
    mrt_tensor *y;
    MRT_TRY(mrt_output_alloc(ctx, 0, MRT_DTYPE_INT64, 2, shape, &y));
    if (!y) return MRT_STATUS_OK;
    for (int d = 0; d < r; d++) dims[d] = x->rank ? x->shape[d] : 1;
    int64_t *out = (int64_t *)y->data, k = 0;
    if (bytes) {
        nonzero_bytes(x->data, n, r, dims, count, out);
        return MRT_STATUS_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        if (is_nonzero(x, i)) {
            for (int d = 0; d < r; d++) out[d * count + k] = c[d];
            k++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++c[d] < dims[d]) break;
            c[d] = 0;
        }
    }
    return MRT_STATUS_OK;
}

/* TensorScatter: a copy of past_cache with update's rows written from write_indices[batch] on along axis. */
static mrt_status mrt_cpu_tensor_scatter(mrt_op_ctx *ctx)
{
    const mrt_tensor *past = mrt_input(ctx, 0), *upd = mrt_input(ctx, 1), *wi = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -2), past->rank, &axis));
    bool circular = strcmp(mrt_attr_string(ctx, "mode", "linear"), "circular") == 0;
    int64_t batch = past->shape[0], mid = 1, inner = 1, max_seq = past->shape[axis], seq = upd->shape[axis];
    for (int d = 1; d < axis; d++) mid *= past->shape[d];
    for (int d = axis + 1; d < past->rank; d++) inner *= past->shape[d];
    mrt_mover mv = mrt_mover_of(past->dtype);
    mrt_mover_copy(&mv, y->data, 0, past->data, 0, mrt_tensor_numel(past));
    for (int64_t b = 0; b < batch; b++) {
        int64_t start = wi ? mrt_load_i64(wi->dtype, wi->data, b) : 0;
        if (start > INT64_MAX - seq)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "write_indices[%lld] = %lld overflows", (long long)b, (long long)start);
        for (int64_t s = 0; s < seq; s++) {
            int64_t at = start + s;
            if (circular && max_seq > 0) at = ((at % max_seq) + max_seq) % max_seq;
            if (at < 0 || at >= max_seq)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                                   "batch %lld writes position %lld of a cache of %lld (write_indices %lld + %lld; linear mode)",
                                   (long long)b, (long long)at, (long long)max_seq, (long long)start, (long long)s);
            for (int64_t m = 0; m < mid; m++)
                mrt_mover_copy(&mv, y->data, ((b * mid + m) * max_seq + at) * inner, upd->data, ((b * mid + m) * seq + s) * inner,
                               inner);
        }
    }
    return mv.oom ? mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)") : MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_gather[] = {
    {"", "TensorScatter", 24, mrt_cpu_tensor_scatter, NULL},
#define K(op, v, fn) {"", op, v, fn, NULL}
/* the gathers write every output element */
#define KG(op, v, fn) {"", op, v, fn, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_index_table_workspace}
/* the scatters, with their index table */
#define KS(op, v, fn) {"", op, v, fn, NULL, NULL, NULL, 0, mrt_cpu_index_table_workspace}
    KG("Gather", 1, mrt_cpu_gather), KG("Gather", 11, mrt_cpu_gather), KG("Gather", 13, mrt_cpu_gather),
    KG("GatherElements", 11, mrt_cpu_gather_elements), KG("GatherElements", 13, mrt_cpu_gather_elements),
    KG("GatherND", 11, mrt_cpu_gather_nd), KG("GatherND", 12, mrt_cpu_gather_nd), KG("GatherND", 13, mrt_cpu_gather_nd),
    KS("Scatter", 9, mrt_cpu_scatter_elements), KS("Scatter", 11, mrt_cpu_scatter_elements),
    KS("ScatterElements", 11, mrt_cpu_scatter_elements), KS("ScatterElements", 13, mrt_cpu_scatter_elements),
    KS("ScatterElements", 16, mrt_cpu_scatter_elements), KS("ScatterElements", 18, mrt_cpu_scatter_elements),
    KS("ScatterND", 11, mrt_cpu_scatter_nd), KS("ScatterND", 13, mrt_cpu_scatter_nd),
    KS("ScatterND", 16, mrt_cpu_scatter_nd), KS("ScatterND", 18, mrt_cpu_scatter_nd),
    K("Compress", 9, mrt_cpu_compress), K("Compress", 11, mrt_cpu_compress), K("Compress", 28, mrt_cpu_compress),
    K("OneHot", 9, mrt_cpu_one_hot), K("OneHot", 11, mrt_cpu_one_hot), K("OneHot", 28, mrt_cpu_one_hot),
    K("NonZero", 9, mrt_cpu_nonzero), K("NonZero", 13, mrt_cpu_nonzero),
#undef K
#undef KG
#undef KS
    {0},
};
