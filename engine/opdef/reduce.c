/* Opdefs: ReduceSum 1/11/13, ReduceMean/Prod/L1/L2/SumSquare 1/11/13/18, ReduceMax/Min 1/11/12/13/18/20,
 * ReduceLogSum/LogSumExp 1/11/13/18/28, ArgMax/ArgMin 1/11/12/13, CumSum 11/14. */
#include "engine/opdef/reduce.h"

#include <string.h>

#include "engine/registry.h"

static const struct {
    const char *op;
    mrt_reduce_kind kind;
} reduce_ops[] = {
    {"ReduceSum", MRT_REDUCE_SUM},         {"ReduceMean", MRT_REDUCE_MEAN},
    {"ReduceMax", MRT_REDUCE_MAX},         {"ReduceMin", MRT_REDUCE_MIN},
    {"ReduceProd", MRT_REDUCE_PROD},       {"ReduceL1", MRT_REDUCE_L1},
    {"ReduceL2", MRT_REDUCE_L2},           {"ReduceLogSum", MRT_REDUCE_LOGSUM},
    {"ReduceLogSumExp", MRT_REDUCE_LOGSUMEXP}, {"ReduceSumSquare", MRT_REDUCE_SUMSQ},
};

int mrt_reduce_kind_of(const char *op_type)
{
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (strcmp(op_type, reduce_ops[i].op) == 0) return (int)reduce_ops[i].kind;
    return -1;
}

static bool is_float4(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static bool is_int(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_INT8: case MRT_DTYPE_UINT8: case MRT_DTYPE_INT16: case MRT_DTYPE_UINT16:
    case MRT_DTYPE_INT32: case MRT_DTYPE_UINT32: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT64:
        return true;
    default:
        return false;
    }
}

static const mrt_tensor *require_input(const mrt_op_ctx *ctx, int i, const char *name, mrt_status *st)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    *st = t ? MRT_STATUS_OK
            : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, name);
    return t;
}

mrt_status mrt_reduce_axes(const mrt_op_ctx *ctx, const mrt_tensor *x, bool *reduced, bool *pending)
{
    *pending = false;
    int rank = x->rank;
    bool from_input = strcmp(ctx->node->op_type, "ReduceSum") == 0 ? ctx->opset >= 13 : ctx->opset >= 18;
    int64_t axes[MRT_MAX_RANK];
    int64_t n = 0;
    bool noop = false;
    if (from_input) {
        noop = mrt_attr_int(ctx, "noop_with_empty_axes", 0) != 0;
        const mrt_tensor *t = mrt_input(ctx, 1);
        if (t && mrt_tensor_numel(t) > 0) { /* an empty axes tensor needs no data */
            if (!t->data) {
                *pending = true;
                return MRT_STATUS_OK;
            }
            if (t->dtype != MRT_DTYPE_INT64 && t->dtype != MRT_DTYPE_INT32)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'axes' must be int64, got %s",
                                   mrt_dtype_name(t->dtype));
            if (mrt_tensor_numel(t) > rank)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                   "input 'axes' has %lld values but input 'data' has rank %d",
                                   (long long)mrt_tensor_numel(t), rank);
            MRT_TRY(mrt_tensor_read_ints(ctx, "input 'axes'", t, axes, MRT_MAX_RANK, &n));
        }
    } else {
        const mrt_attr *a;
        MRT_TRY(mrt_attr_get(ctx, "axes", MRT_ATTR_INTS, &a));
        if (a) {
            if (a->n > rank)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                   "attribute 'axes' has %lld values but input 'data' has rank %d", (long long)a->n,
                                   rank);
            n = a->n;
            if (n) memcpy(axes, a->ints, (size_t)n * sizeof(int64_t));
        }
    }
    for (int i = 0; i < rank; i++) reduced[i] = n == 0 && !noop;
    for (int64_t i = 0; i < n; i++) {
        int ax;
        MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[i], rank, &ax));
        if (reduced[ax])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %lld appears more than once in axes",
                               (long long)axes[i]);
        reduced[ax] = true;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_reduce(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = require_input(ctx, 0, "data", &st);
    if (!x) return st;
    int kind = mrt_reduce_kind_of(ctx->node->op_type);
    mrt_dtype dt = x->dtype;
    bool ok = is_float4(dt) ||
              (is_int(dt) && !(ctx->opset >= 28 && (kind == MRT_REDUCE_LOGSUM || kind == MRT_REDUCE_LOGSUMEXP))) ||
              (dt == MRT_DTYPE_BOOL && ctx->opset >= 20 && (kind == MRT_REDUCE_MAX || kind == MRT_REDUCE_MIN));
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "input 'data' has dtype %s, which %s (opset %lld) does not take", mrt_dtype_name(dt),
                           ctx->node->op_type, (long long)ctx->opset);
    bool reduced[MRT_MAX_RANK], pending;
    MRT_TRY(mrt_reduce_axes(ctx, x, reduced, &pending));
    if (pending) return mrt_infer_dynamic(ctx);
    bool keep = mrt_attr_int(ctx, "keepdims", 1) != 0;
    int64_t shape[MRT_MAX_RANK];
    int r = 0;
    for (int a = 0; a < x->rank; a++) {
        if (!reduced[a]) shape[r++] = x->shape[a];
        else if (keep) shape[r++] = 1;
    }
    return mrt_output_set(ctx, 0, dt, r, shape);
}

static mrt_status infer_arg(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = require_input(ctx, 0, "data", &st);
    if (!x) return st;
    if (!is_float4(x->dtype) && !is_int(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input 'data' has dtype %s, which %s does not take",
                           mrt_dtype_name(x->dtype), ctx->node->op_type);
    int ax;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", 0), x->rank, &ax));
    char buf[256];
    int64_t others = 1;
    for (int a = 0; a < x->rank; a++)
        if (a != ax) others *= x->shape[a];
    if (x->shape[ax] == 0 && others > 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "cannot take %s over axis %d of size 0 (input 'data' is %s)",
                           ctx->node->op_type, ax, mrt_shape_describe(x->rank, x->shape, buf, sizeof buf));
    bool keep = mrt_attr_int(ctx, "keepdims", 1) != 0;
    int64_t shape[MRT_MAX_RANK];
    int r = 0;
    for (int a = 0; a < x->rank; a++) {
        if (a != ax) shape[r++] = x->shape[a];
        else if (keep) shape[r++] = 1;
    }
    return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, r, shape);
}

static mrt_status infer_cumsum(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = require_input(ctx, 0, "x", &st);
    if (!x) return st;
    const mrt_tensor *axis = require_input(ctx, 1, "axis", &st);
    if (!axis) return st;
    if (!is_float4(x->dtype) && !is_int(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input 'x' has dtype %s, which CumSum does not take",
                           mrt_dtype_name(x->dtype));
    if (axis->dtype != MRT_DTYPE_INT32 && axis->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'axis' must be int32 or int64, got %s",
                           mrt_dtype_name(axis->dtype));
    if (mrt_tensor_numel(axis) != 1 || axis->rank > 1) {
        char buf[128];
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'axis' must be a scalar, got shape %s",
                           mrt_shape_describe(axis->rank, axis->shape, buf, sizeof buf));
    }
    if (x->rank == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'x' must have rank >= 1");
    if (axis->data) {
        int64_t v, n;
        int ax;
        MRT_TRY(mrt_tensor_read_ints(ctx, "input 'axis'", axis, &v, 1, &n));
        MRT_TRY(mrt_normalize_axis(ctx, "input 'axis'", v, x->rank, &ax));
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

#define REDUCE_ATTR(op, v) {"", op, v, 1, 1, 1, 1, infer_reduce, 0}
#define REDUCE_INPUT(op, v) {"", op, v, 1, 2, 1, 1, infer_reduce, 0}
#define REDUCE_ROWS(op) REDUCE_ATTR(op, 1), REDUCE_ATTR(op, 11), REDUCE_ATTR(op, 13), REDUCE_INPUT(op, 18)

const mrt_opdef mrt_opdefs_reduce[] = {
    REDUCE_ATTR("ReduceSum", 1), REDUCE_ATTR("ReduceSum", 11), REDUCE_INPUT("ReduceSum", 13),
    REDUCE_ROWS("ReduceMean"),
    REDUCE_ROWS("ReduceProd"),
    REDUCE_ROWS("ReduceL1"),
    REDUCE_ROWS("ReduceL2"),
    REDUCE_ROWS("ReduceSumSquare"),
    REDUCE_ROWS("ReduceLogSum"), REDUCE_INPUT("ReduceLogSum", 28),
    REDUCE_ROWS("ReduceLogSumExp"), REDUCE_INPUT("ReduceLogSumExp", 28),
    REDUCE_ROWS("ReduceMax"), REDUCE_ATTR("ReduceMax", 12), REDUCE_INPUT("ReduceMax", 20),
    REDUCE_ROWS("ReduceMin"), REDUCE_ATTR("ReduceMin", 12), REDUCE_INPUT("ReduceMin", 20),
    {"", "ArgMax", 1, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMax", 11, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMax", 12, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMax", 13, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMin", 1, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMin", 11, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMin", 12, 1, 1, 1, 1, infer_arg, 0},
    {"", "ArgMin", 13, 1, 1, 1, 1, infer_arg, 0},
    {"", "CumSum", 11, 2, 2, 1, 1, infer_cumsum, 0},
    {"", "CumSum", 14, 2, 2, 1, 1, infer_cumsum, 0},
    {0},
};
