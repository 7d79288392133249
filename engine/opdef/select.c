/* Opdefs for TopK (1, 10, 11, 24), Unique (11), CenterCropPad (18), CumProd (26), Shrink (9), BitCast (26). */
#include "engine/registry.h"

static mrt_status infer_topk(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *kt = mrt_input(ctx, 1);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' is missing");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    int64_t k;
    if (ctx->opset < 10) {
        k = mrt_attr_int(ctx, "k", -1);
    } else {
        if (!kt) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'K' is missing");
        if (!kt->data) return mrt_infer_dynamic(ctx);
        if (mrt_tensor_numel(kt) != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'K' must hold one value");
        k = mrt_load_i64(kt->dtype, kt->data, 0);
    }
    if (k < 0 || k > x->shape[axis])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "K = %lld is outside [0, %lld] (the size of axis %d)", (long long)k,
                           (long long)x->shape[axis], axis);
    int64_t shape[MRT_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = d == axis ? k : x->shape[d];
    MRT_TRY(mrt_output_set(ctx, 0, x->dtype, x->rank, shape));
    return mrt_output_set(ctx, 1, MRT_DTYPE_INT64, x->rank, shape);
}

static mrt_status infer_same(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || x->dtype == MRT_DTYPE_STRING || x->dtype == MRT_DTYPE_BOOL)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 must be a numeric tensor");
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_bitcast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t to = mrt_attr_int(ctx, "to", 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input is missing");
    if (!mrt_dtype_is_known((int)to) || to == MRT_DTYPE_STRING || x->dtype == MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cannot bit-cast %s to type %lld", mrt_dtype_name(x->dtype),
                           (long long)to);
    if (mrt_dtype_bits(x->dtype) != mrt_dtype_bits((mrt_dtype)to))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "bit-casting %s (%d bits) to %s (%d bits): only equal widths",
                           mrt_dtype_name(x->dtype), mrt_dtype_bits(x->dtype), mrt_dtype_name((mrt_dtype)to),
                           mrt_dtype_bits((mrt_dtype)to));
    return mrt_output_set(ctx, 0, (mrt_dtype)to, x->rank, x->shape);
}

static mrt_status crop_pad_shape(mrt_op_ctx *ctx, int64_t *out)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1);
    if (!x || !s) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input_data and shape are required");
    for (int d = 0; d < x->rank; d++) out[d] = x->shape[d];
    if (!s->data) return MRT_STATUS_OK;
    int64_t want[MRT_MAX_RANK], n, na;
    const int64_t *axes;
    MRT_TRY(mrt_tensor_read_ints(ctx, "'shape'", s, want, MRT_MAX_RANK, &n));
    bool has_axes = mrt_attr_ints(ctx, "axes", &axes, &na);
    if (n != (has_axes ? na : x->rank))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'shape' has %lld values for %lld axes", (long long)n,
                           (long long)(has_axes ? na : x->rank));
    for (int64_t i = 0; i < n; i++) {
        int a = (int)i;
        if (has_axes) MRT_TRY(mrt_normalize_axis(ctx, "axes", axes[i], x->rank, &a));
        if (want[i] < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'shape' value %lld is negative", (long long)want[i]);
        out[a] = want[i];
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_center_crop_pad(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1);
    int64_t out[MRT_MAX_RANK];
    MRT_TRY(crop_pad_shape(ctx, out));
    if (!s->data) return mrt_infer_dynamic(ctx);
    return mrt_output_set(ctx, 0, x->dtype, x->rank, out);
}

static mrt_status infer_unique(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || x->dtype == MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Unique needs a numeric tensor");
    if (mrt_node_attr(ctx->node, "axis")) {
        int a;
        MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &a));
    }
    return mrt_infer_dynamic(ctx); /* sizes depend on the data */
}

const mrt_opdef mrt_opdefs_select[] = {
    {"", "TopK", 1, 1, 1, 2, 2, infer_topk, 0},
    {"", "TopK", 10, 2, 2, 2, 2, infer_topk, 0},
    {"", "TopK", 11, 2, 2, 2, 2, infer_topk, 0},
    {"", "TopK", 24, 2, 2, 2, 2, infer_topk, 0},
    {"", "Unique", 11, 1, 1, 1, 4, infer_unique, 0},
    {"", "CenterCropPad", 18, 2, 2, 1, 1, infer_center_crop_pad, 0},
    {"", "CumProd", 26, 2, 2, 1, 1, infer_same, 0},
    {"", "Shrink", 9, 1, 1, 1, 1, infer_same, 0},
    {"", "BitCast", 26, 1, 1, 1, 1, infer_bitcast, 0},
    {0},
};
