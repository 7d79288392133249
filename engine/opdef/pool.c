/* Opdefs: MaxPool 1/8/10/11/12/22, AveragePool 1/7/10/11/19/22, LpPool 1/2/11/18/22, GlobalAveragePool 1/22,
 * GlobalMaxPool 1/22, GlobalLpPool 1/2/22, MaxRoiPool 1/22, MaxUnpool 9/11/22 (N-D windows via conv.h). */
#include <string.h>

#include "engine/opdef/conv.h"
#include "engine/registry.h"

static const mrt_tensor *need_input(const mrt_op_ctx *ctx, int i, const char *name, mrt_status *st)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    *st = t ? MRT_STATUS_OK
            : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, name);
    return t;
}

static bool is_float_type(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static mrt_status float_input(const mrt_op_ctx *ctx, int i, const char *name, bool allow_8bit, const mrt_tensor **out)
{
    mrt_status st;
    const mrt_tensor *x = need_input(ctx, i, name, &st);
    if (!x) return st;
    bool ok = is_float_type(x->dtype) ||
              (allow_8bit && (x->dtype == MRT_DTYPE_INT8 || x->dtype == MRT_DTYPE_UINT8));
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input '%s' has dtype %s, which %s (opset %lld) does not take",
                           name, mrt_dtype_name(x->dtype), ctx->node->op_type, (long long)ctx->opset);
    *out = x;
    return MRT_STATUS_OK;
}

mrt_status mrt_pool_window(const mrt_op_ctx *ctx, const mrt_tensor *x, mrt_window *w)
{
    const char *op = ctx->node->op_type;
    unsigned flags = 0;
    if (strcmp(op, "MaxPool") == 0) flags = ctx->opset >= 10 ? MRT_WINDOW_DILATIONS | MRT_WINDOW_CEIL : 0;
    else if (strcmp(op, "AveragePool") == 0)
        flags = (ctx->opset >= 10 ? MRT_WINDOW_CEIL : 0) | (ctx->opset >= 19 ? MRT_WINDOW_DILATIONS : 0);
    else if (strcmp(op, "LpPool") == 0) flags = ctx->opset >= 18 ? MRT_WINDOW_DILATIONS | MRT_WINDOW_CEIL : 0;
    char xs[256];
    if (x->rank < 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [N, C, D1, ...] (rank >= 3)",
                           mrt_shape_describe(x->rank, x->shape, xs, sizeof xs));
    const mrt_attr *ks;
    MRT_TRY(mrt_attr_get(ctx, "kernel_shape", MRT_ATTR_INTS, &ks));
    if (!ks) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'kernel_shape' is required");
    if (ks->n != x->rank - 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'kernel_shape' has %lld values but input 'X' %s has %d spatial dims",
                           (long long)ks->n, mrt_shape_describe(x->rank, x->shape, xs, sizeof xs), x->rank - 2);
    return mrt_window_init(ctx, x, ks->ints, flags, w);
}

static mrt_status pool_output(mrt_op_ctx *ctx, const mrt_tensor *x, const mrt_window *w, mrt_dtype dt, int i)
{
    int64_t shape[MRT_MAX_RANK];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 0; d < w->nsp; d++) shape[d + 2] = w->out[d];
    return mrt_output_set(ctx, i, dt, x->rank, shape);
}

static mrt_status infer_maxpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(float_input(ctx, 0, "X", ctx->opset >= 12, &x));
    int64_t so = mrt_attr_int(ctx, "storage_order", 0);
    if (so != 0 && so != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'storage_order' is %lld, expected 0 or 1", (long long)so);
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    MRT_TRY(pool_output(ctx, x, &w, x->dtype, 0));
    return pool_output(ctx, x, &w, MRT_DTYPE_INT64, 1);
}

static mrt_status infer_avgpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(float_input(ctx, 0, "X", false, &x));
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    return pool_output(ctx, x, &w, x->dtype, 0);
}

static mrt_status lp_p_check(const mrt_op_ctx *ctx)
{
    /* opset 1 declares p as a float, later opsets as an int */
    const mrt_attr *a = mrt_node_attr(ctx->node, "p");
    if (!a) return MRT_STATUS_OK;
    double p = a->type == MRT_ATTR_INT ? (double)a->i : a->type == MRT_ATTR_FLOAT ? (double)a->f : -1.0;
    if (!(p > 0))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'p' must be a positive number");
    return MRT_STATUS_OK;
}

static mrt_status infer_lppool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(float_input(ctx, 0, "X", false, &x));
    MRT_TRY(lp_p_check(ctx));
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    return pool_output(ctx, x, &w, x->dtype, 0);
}

static mrt_status infer_global(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(float_input(ctx, 0, "X", false, &x));
    MRT_TRY(lp_p_check(ctx));
    char xs[256];
    if (x->rank < 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [N, C, D1, ...]",
                           mrt_shape_describe(x->rank, x->shape, xs, sizeof xs));
    int64_t shape[MRT_MAX_RANK];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 2; d < x->rank; d++) shape[d] = 1;
    return mrt_output_set(ctx, 0, x->dtype, x->rank, shape);
}

static mrt_status infer_maxroipool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *rois;
    MRT_TRY(float_input(ctx, 0, "X", false, &x));
    MRT_TRY(float_input(ctx, 1, "rois", false, &rois));
    char xs[256], rs[256];
    if (x->rank != 4)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [N, C, H, W]",
                           mrt_shape_describe(x->rank, x->shape, xs, sizeof xs));
    if (rois->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'rois' has dtype %s but 'X' has %s",
                           mrt_dtype_name(rois->dtype), mrt_dtype_name(x->dtype));
    if (rois->rank != 2 || rois->shape[1] != 5)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'rois' has shape %s, expected [num_rois, 5]",
                           mrt_shape_describe(rois->rank, rois->shape, rs, sizeof rs));
    const mrt_attr *ps;
    MRT_TRY(mrt_attr_get(ctx, "pooled_shape", MRT_ATTR_INTS, &ps));
    if (!ps || ps->n != 2 || ps->ints[0] < 1 || ps->ints[1] < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'pooled_shape' must be two positive ints");
    int64_t shape[4] = {rois->shape[0], x->shape[1], ps->ints[0], ps->ints[1]};
    return mrt_output_set(ctx, 0, x->dtype, 4, shape);
}

mrt_status mrt_maxunpool_shape(const mrt_op_ctx *ctx, int *rank, int64_t *shape)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *os = mrt_input(ctx, 2);
    char xs[256];
    *rank = x->rank;
    if (os) {
        int64_t n;
        MRT_TRY(mrt_tensor_read_ints(ctx, "input 'output_shape'", os, shape, MRT_MAX_RANK, &n));
        if (n != x->rank)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'output_shape' has %lld values but 'X' %s has rank %d",
                               (long long)n, mrt_shape_describe(x->rank, x->shape, xs, sizeof xs), x->rank);
        for (int d = 0; d < x->rank; d++)
            if (shape[d] < 0)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'output_shape' has a negative value %lld",
                                   (long long)shape[d]);
        return MRT_STATUS_OK;
    }
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 0; d < w.nsp; d++) {
        /* the inverse of the pooling output-size rule */
        shape[d + 2] = (w.in[d] - 1) * w.stride[d] + w.kernel[d] - w.pad_begin[d] - w.pad_end[d];
        if (shape[d + 2] < 0) shape[d + 2] = 0;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_maxunpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *ind;
    mrt_status st;
    MRT_TRY(float_input(ctx, 0, "X", false, &x));
    ind = need_input(ctx, 1, "I", &st);
    if (!ind) return st;
    char xs[256], is[256];
    if (ind->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'I' has dtype %s, expected int64", mrt_dtype_name(ind->dtype));
    if (ind->rank != x->rank || memcmp(ind->shape, x->shape, (size_t)x->rank * sizeof(int64_t)) != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'I' has shape %s, expected the shape of 'X' %s",
                           mrt_shape_describe(ind->rank, ind->shape, is, sizeof is),
                           mrt_shape_describe(x->rank, x->shape, xs, sizeof xs));
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w)); /* validates the attributes even when output_shape is given */
    const mrt_tensor *os = mrt_input(ctx, 2);
    if (os && !os->data) return mrt_infer_dynamic(ctx);
    int rank;
    int64_t shape[MRT_MAX_RANK];
    MRT_TRY(mrt_maxunpool_shape(ctx, &rank, shape));
    return mrt_output_set(ctx, 0, x->dtype, rank, shape);
}

const mrt_opdef mrt_opdefs_pool[] = {
    {"", "MaxPool", 1, 1, 1, 1, 1, infer_maxpool, 0},
    {"", "MaxPool", 8, 1, 1, 1, 2, infer_maxpool, 0},
    {"", "MaxPool", 10, 1, 1, 1, 2, infer_maxpool, 0},
    {"", "MaxPool", 11, 1, 1, 1, 2, infer_maxpool, 0},
    {"", "MaxPool", 12, 1, 1, 1, 2, infer_maxpool, 0},
    {"", "MaxPool", 22, 1, 1, 1, 2, infer_maxpool, 0},
    {"", "AveragePool", 1, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "AveragePool", 7, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "AveragePool", 10, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "AveragePool", 11, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "AveragePool", 19, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "AveragePool", 22, 1, 1, 1, 1, infer_avgpool, 0},
    {"", "LpPool", 1, 1, 1, 1, 1, infer_lppool, 0},
    {"", "LpPool", 2, 1, 1, 1, 1, infer_lppool, 0},
    {"", "LpPool", 11, 1, 1, 1, 1, infer_lppool, 0},
    {"", "LpPool", 18, 1, 1, 1, 1, infer_lppool, 0},
    {"", "LpPool", 22, 1, 1, 1, 1, infer_lppool, 0},
    {"", "GlobalAveragePool", 1, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalAveragePool", 22, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalMaxPool", 1, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalMaxPool", 22, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalLpPool", 1, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalLpPool", 2, 1, 1, 1, 1, infer_global, 0},
    {"", "GlobalLpPool", 22, 1, 1, 1, 1, infer_global, 0},
    {"", "MaxRoiPool", 1, 2, 2, 1, 1, infer_maxroipool, 0},
    {"", "MaxRoiPool", 22, 2, 2, 1, 1, infer_maxroipool, 0},
    {"", "MaxUnpool", 9, 2, 3, 1, 1, infer_maxunpool, 0},
    {"", "MaxUnpool", 11, 2, 3, 1, 1, infer_maxunpool, 0},
    {"", "MaxUnpool", 22, 2, 3, 1, 1, infer_maxunpool, 0},
    {0},
};
