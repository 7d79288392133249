/* Opdefs of Gather 1-13, GatherElements 11/13, GatherND 11-13 (batch_dims), ScatterElements 11-18, ScatterND 11-18
 * (reduction none/add/mul/max/min), Scatter 9/11, Compress 9-28, OneHot 9-28, NonZero 9/13 (output sized at run),
 * TensorScatter 24 (KV-cache writes, linear or circular). */
#include <stdio.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"

static mrt_status input_tensor(mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor **out)
{
    *out = mrt_input(ctx, i);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') must be a tensor", i, name);
    return MRT_STATUS_OK;
}

static const char *shape_str(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

static mrt_status index_tensor(mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor **out)
{
    MRT_TRY(input_tensor(ctx, i, name, out));
    if ((*out)->dtype != MRT_DTYPE_INT32 && (*out)->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' must be int32 or int64, got %s", name,
                           mrt_dtype_name((*out)->dtype));
    return MRT_STATUS_OK;
}

static mrt_status infer_gather(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *idx;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    MRT_TRY(index_tensor(ctx, 1, "indices", &idx));
    if (x->rank == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'data' must have rank >= 1");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    int r = x->rank - 1 + idx->rank;
    if (r > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output rank %d exceeds %d", r, MRT_MAX_RANK);
    int64_t out[MRT_MAX_RANK];
    int k = 0;
    for (int d = 0; d < axis; d++) out[k++] = x->shape[d];
    for (int d = 0; d < idx->rank; d++) out[k++] = idx->shape[d];
    for (int d = axis + 1; d < x->rank; d++) out[k++] = x->shape[d];
    return mrt_output_set(ctx, 0, x->dtype, r, out);
}

static mrt_status infer_gather_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *idx;
    char sx[256], si[256];
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    MRT_TRY(index_tensor(ctx, 1, "indices", &idx));
    if (x->rank == 0 || idx->rank != x->rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "indices %s must have the rank of data %s (>= 1)",
                           shape_str(idx, si, sizeof si), shape_str(x, sx, sizeof sx));
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->shape[d] > x->shape[d])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "indices %s is larger than data %s on axis %d (only axis %d may differ)",
                               shape_str(idx, si, sizeof si), shape_str(x, sx, sizeof sx), d, axis);
    return mrt_output_set(ctx, 0, x->dtype, idx->rank, idx->shape);
}

static mrt_status infer_gather_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *idx;
    char sx[256], si[256];
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    MRT_TRY(input_tensor(ctx, 1, "indices", &idx));
    if (idx->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'indices' must be int64, got %s",
                           mrt_dtype_name(idx->dtype));
    int64_t b = ctx->opset >= 12 ? mrt_attr_int(ctx, "batch_dims", 0) : 0;
    if (x->rank < 1 || idx->rank < 1 || b < 0 || b >= x->rank || b >= idx->rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "data %s, indices %s and batch_dims %lld are incompatible",
                           shape_str(x, sx, sizeof sx), shape_str(idx, si, sizeof si), (long long)b);
    int64_t m = idx->shape[idx->rank - 1];
    if (m < 1 || m > x->rank - b)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "the last dimension of indices %s (%lld) must be in [1, %lld] for data %s",
                           shape_str(idx, si, sizeof si), (long long)m, (long long)(x->rank - b),
                           shape_str(x, sx, sizeof sx));
    for (int d = 0; d < b; d++)
        if (x->shape[d] != idx->shape[d])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "batch dimension %d differs: data %s, indices %s", d,
                               shape_str(x, sx, sizeof sx), shape_str(idx, si, sizeof si));
    int64_t out[MRT_MAX_RANK];
    int r = 0;
    for (int d = 0; d < idx->rank - 1; d++) out[r++] = idx->shape[d];
    for (int64_t d = b + m; d < x->rank; d++) {
        if (r >= MRT_MAX_RANK) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output rank exceeds %d", MRT_MAX_RANK);
        out[r++] = x->shape[d];
    }
    return mrt_output_set(ctx, 0, x->dtype, r, out);
}

static mrt_status check_reduction(mrt_op_ctx *ctx, const mrt_tensor *x)
{
    const char *red = ctx->opset >= 16 ? mrt_attr_string(ctx, "reduction", "none") : "none";
    bool ok = strcmp(red, "none") == 0 || strcmp(red, "add") == 0 || strcmp(red, "mul") == 0 ||
              (ctx->opset >= 18 && (strcmp(red, "max") == 0 || strcmp(red, "min") == 0));
    if (!ok) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "unsupported reduction '%s'", red);
    if (strcmp(red, "none") != 0 && (x->dtype == MRT_DTYPE_STRING || mrt_dtype_bits(x->dtype) < 8 ||
                                     (mrt_dtype_is_float(x->dtype) && mrt_dtype_bits(x->dtype) == 8) ||
                                     x->dtype == MRT_DTYPE_COMPLEX64 || x->dtype == MRT_DTYPE_COMPLEX128))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "reduction '%s' on %s is not supported", red,
                           mrt_dtype_name(x->dtype));
    return MRT_STATUS_OK;
}

static mrt_status infer_scatter_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *idx, *upd;
    char sx[256], si[256], su[256];
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    MRT_TRY(index_tensor(ctx, 1, "indices", &idx));
    MRT_TRY(input_tensor(ctx, 2, "updates", &upd));
    bool same = idx->rank == upd->rank && idx->rank == x->rank && x->rank >= 1;
    for (int d = 0; same && d < idx->rank; d++) same = idx->shape[d] == upd->shape[d];
    if (!same || upd->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "data %s%s, indices %s and updates %s%s: indices and updates must have the same shape, "
                           "of data's rank, and updates data's dtype",
                           mrt_dtype_name(x->dtype), shape_str(x, sx, sizeof sx), shape_str(idx, si, sizeof si),
                           mrt_dtype_name(upd->dtype), shape_str(upd, su, sizeof su));
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->shape[d] > x->shape[d])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "indices %s is larger than data %s on axis %d",
                               shape_str(idx, si, sizeof si), shape_str(x, sx, sizeof sx), d);
    MRT_TRY(check_reduction(ctx, x));
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_scatter_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *idx, *upd;
    char sx[256], si[256], su[256];
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    MRT_TRY(input_tensor(ctx, 1, "indices", &idx));
    MRT_TRY(input_tensor(ctx, 2, "updates", &upd));
    if (idx->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'indices' must be int64, got %s",
                           mrt_dtype_name(idx->dtype));
    bool ok = x->rank >= 1 && idx->rank >= 1 && upd->dtype == x->dtype;
    int64_t k = ok ? idx->shape[idx->rank - 1] : 0;
    ok = ok && k >= 1 && k <= x->rank && upd->rank == idx->rank - 1 + x->rank - k;
    for (int d = 0; ok && d < idx->rank - 1; d++) ok = upd->shape[d] == idx->shape[d];
    for (int64_t d = k; ok && d < x->rank; d++) ok = upd->shape[idx->rank - 1 + d - k] == x->shape[d];
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "data %s%s, indices %s, updates %s%s: updates must be indices.shape[:-1] + "
                           "data.shape[indices.shape[-1]:] of data's dtype",
                           mrt_dtype_name(x->dtype), shape_str(x, sx, sizeof sx), shape_str(idx, si, sizeof si),
                           mrt_dtype_name(upd->dtype), shape_str(upd, su, sizeof su));
    MRT_TRY(check_reduction(ctx, x));
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_compress(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *cond;
    char s[256];
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    MRT_TRY(input_tensor(ctx, 1, "condition", &cond));
    if (cond->dtype != MRT_DTYPE_BOOL || cond->rank != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "condition must be a 1-D bool tensor, got %s%s",
                           mrt_dtype_name(cond->dtype), shape_str(cond, s, sizeof s));
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "axis", MRT_ATTR_INT, &a));
    int axis = -1;
    if (a) MRT_TRY(mrt_normalize_axis(ctx, "axis", a->i, x->rank, &axis));
    if (!cond->data) return mrt_infer_dynamic(ctx);
    int64_t len = axis >= 0 ? x->shape[axis] : mrt_tensor_numel(x), n = cond->shape[0] < len ? cond->shape[0] : len;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += ((const uint8_t *)cond->data)[i] != 0;
    if (axis < 0) return mrt_output_set(ctx, 0, x->dtype, 1, &count);
    int64_t out[MRT_MAX_RANK];
    memcpy(out, x->shape, (size_t)x->rank * sizeof *out);
    out[axis] = count;
    return mrt_output_set(ctx, 0, x->dtype, x->rank, out);
}

static mrt_status infer_one_hot(mrt_op_ctx *ctx)
{
    const mrt_tensor *idx, *depth, *vals;
    char s[256];
    MRT_TRY(input_tensor(ctx, 0, "indices", &idx));
    MRT_TRY(input_tensor(ctx, 1, "depth", &depth));
    MRT_TRY(input_tensor(ctx, 2, "values", &vals));
    if (mrt_tensor_numel(vals) != 2 || vals->rank != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "values must be [off_value, on_value], got shape %s",
                           shape_str(vals, s, sizeof s));
    if (mrt_tensor_numel(depth) != 1 || depth->rank > 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "depth must be a scalar, got shape %s",
                           shape_str(depth, s, sizeof s));
    if (!(mrt_dtype_is_integer(idx->dtype) || mrt_dtype_is_float(idx->dtype)) ||
        !(mrt_dtype_is_integer(depth->dtype) || mrt_dtype_is_float(depth->dtype)))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "indices and depth must be numeric");
    int r = idx->rank + 1, axis;
    if (r > MRT_MAX_RANK) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output rank exceeds %d", MRT_MAX_RANK);
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", -1), r, &axis));
    if (!depth->data) return mrt_infer_dynamic(ctx);
    double dv = mrt_dtype_is_float(depth->dtype) ? mrt_load_f64(depth->dtype, depth->data, 0)
                                                 : (double)mrt_load_i64(depth->dtype, depth->data, 0);
    if (!(dv >= 1) || dv > 9e18)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "depth must be >= 1, got %g", dv);
    int64_t out[MRT_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++) out[d] = d == axis ? (int64_t)dv : idx->shape[j++];
    return mrt_output_set(ctx, 0, vals->dtype, r, out);
}

static mrt_status infer_nonzero(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "X", &x));
    if (x->dtype == MRT_DTYPE_STRING || x->dtype == MRT_DTYPE_COMPLEX64 || x->dtype == MRT_DTYPE_COMPLEX128)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    /* the output length is the count of non-zeros: the kernel sizes it */
    return mrt_infer_dynamic(ctx);
}

/* TensorScatter: past_cache [batch, ..., max_seq (axis), ...], update the same but seq <= max_seq, optional
   write_indices [batch]. */
static mrt_status infer_tensor_scatter(mrt_op_ctx *ctx)
{
    const mrt_tensor *past = mrt_input(ctx, 0), *upd = mrt_input(ctx, 1), *wi = mrt_input(ctx, 2);
    char a[128], b[128];
    if (!past || !upd || past->dtype != upd->dtype || past->rank != upd->rank || past->rank < 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "past_cache and update must be tensors of one dtype and rank >= 2");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -2), past->rank, &axis));
    if (axis == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis must not be the batch axis 0");
    for (int d = 0; d < past->rank; d++)
        if (d == axis ? upd->shape[d] > past->shape[d] : upd->shape[d] != past->shape[d])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "update %s must match past_cache %s except along axis %d, where it may be shorter",
                               mrt_shape_describe(upd->rank, upd->shape, a, sizeof a),
                               mrt_shape_describe(past->rank, past->shape, b, sizeof b), axis);
    if (wi && (wi->rank != 1 || wi->shape[0] != past->shape[0] || (wi->dtype != MRT_DTYPE_INT64 && wi->dtype != MRT_DTYPE_INT32)))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "write_indices must be %lld integers (one per batch entry)",
                           (long long)past->shape[0]);
    const char *mode = mrt_attr_string(ctx, "mode", "linear");
    if (strcmp(mode, "linear") && strcmp(mode, "circular"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not linear or circular", mode);
    return mrt_output_set(ctx, 0, past->dtype, past->rank, past->shape);
}

const mrt_opdef mrt_opdefs_gather[] = {
    {"", "TensorScatter", 24, 2, 3, 1, 1, infer_tensor_scatter, 0},
    {"", "Gather", 1, 2, 2, 1, 1, infer_gather, 0},
    {"", "Gather", 11, 2, 2, 1, 1, infer_gather, 0},
    {"", "Gather", 13, 2, 2, 1, 1, infer_gather, 0},
    {"", "GatherElements", 11, 2, 2, 1, 1, infer_gather_elements, 0},
    {"", "GatherElements", 13, 2, 2, 1, 1, infer_gather_elements, 0},
    {"", "GatherND", 11, 2, 2, 1, 1, infer_gather_nd, 0},
    {"", "GatherND", 12, 2, 2, 1, 1, infer_gather_nd, 0},
    {"", "GatherND", 13, 2, 2, 1, 1, infer_gather_nd, 0},
    {"", "Scatter", 9, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "Scatter", 11, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "ScatterElements", 11, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "ScatterElements", 13, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "ScatterElements", 16, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "ScatterElements", 18, 3, 3, 1, 1, infer_scatter_elements, 0},
    {"", "ScatterND", 11, 3, 3, 1, 1, infer_scatter_nd, 0},
    {"", "ScatterND", 13, 3, 3, 1, 1, infer_scatter_nd, 0},
    {"", "ScatterND", 16, 3, 3, 1, 1, infer_scatter_nd, 0},
    {"", "ScatterND", 18, 3, 3, 1, 1, infer_scatter_nd, 0},
    {"", "Compress", 9, 2, 2, 1, 1, infer_compress, 0},
    {"", "Compress", 11, 2, 2, 1, 1, infer_compress, 0},
    {"", "Compress", 28, 2, 2, 1, 1, infer_compress, 0},
    {"", "OneHot", 9, 3, 3, 1, 1, infer_one_hot, 0},
    {"", "OneHot", 11, 3, 3, 1, 1, infer_one_hot, 0},
    {"", "OneHot", 28, 3, 3, 1, 1, infer_one_hot, 0},
    {"", "NonZero", 9, 1, 1, 1, 1, infer_nonzero, 0},
    {"", "NonZero", 13, 1, 1, 1, 1, infer_nonzero, 0},
    {0},
};
