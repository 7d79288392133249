/* Opdefs: Softmax, LogSoftmax, Hardmax 1/11 (input coerced to 2-D at `axis`, default 1) and 13 (one axis,
 * default -1); float16, bfloat16, float, double. */
#include "engine/opdef/reduce.h"
#include "engine/registry.h"

mrt_status mrt_softmax_view(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t *outer, int64_t *n, int64_t *inner)
{
    bool v13 = ctx->opset >= 13;
    int ax;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", v13 ? -1 : 1), x->rank, &ax));
    *outer = 1;
    for (int a = 0; a < ax; a++) *outer *= x->shape[a];
    if (v13) {
        *n = x->shape[ax];
        *inner = 1;
        for (int a = ax + 1; a < x->rank; a++) *inner *= x->shape[a];
    } else {
        *n = 1;
        for (int a = ax; a < x->rank; a++) *n *= x->shape[a];
        *inner = 1;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_softmax(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' is missing or not a tensor");
    mrt_dtype dt = x->dtype;
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_DOUBLE && dt != MRT_DTYPE_FLOAT16 && dt != MRT_DTYPE_BFLOAT16)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input 'input' has dtype %s; %s takes float types",
                           mrt_dtype_name(dt), ctx->node->op_type);
    int64_t outer, n, inner;
    MRT_TRY(mrt_softmax_view(ctx, x, &outer, &n, &inner)); /* checks the axis */
    return mrt_output_set(ctx, 0, dt, x->rank, x->shape);
}

#define SOFTMAX_ROWS(op)                                                                                      \
    {"", op, 1, 1, 1, 1, 1, infer_softmax, MRT_OPDEF_INPLACE}, {"", op, 11, 1, 1, 1, 1, infer_softmax, MRT_OPDEF_INPLACE}, \
        {"", op, 13, 1, 1, 1, 1, infer_softmax, MRT_OPDEF_INPLACE}

const mrt_opdef mrt_opdefs_softmax[] = {
    SOFTMAX_ROWS("Softmax"),
    SOFTMAX_ROWS("LogSoftmax"),
    SOFTMAX_ROWS("Hardmax"),
    {0},
};
