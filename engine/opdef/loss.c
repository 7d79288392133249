/* Opdefs for NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13). */
#include <string.h>

#include "engine/registry.h"

/* input/scores [N, C, d1..dk], target [N, d1..dk] int32/int64, weight [C]. */
static mrt_status check_loss_inputs(mrt_op_ctx *ctx, const char *xname)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *t = mrt_input(ctx, 1), *w = mrt_input(ctx, 2);
    char a[256], b[256];
    if (!x || !t) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'%s' and the target are required", xname);
    if (!mrt_dtype_is_float(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'%s' must be a float tensor, got %s", xname, mrt_dtype_name(x->dtype));
    if (t->dtype != MRT_DTYPE_INT32 && t->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the target must be int32 or int64, got %s", mrt_dtype_name(t->dtype));
    bool ok = x->rank >= 2 && t->rank == x->rank - 1 && t->shape[0] == x->shape[0];
    for (int d = 1; ok && d < t->rank; d++) ok = t->shape[d] == x->shape[d + 1];
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "target %s does not fit '%s' %s (expected [N, d1, ...] for [N, C, d1, ...])",
                           mrt_shape_describe(t->rank, t->shape, a, sizeof a), xname,
                           mrt_shape_describe(x->rank, x->shape, b, sizeof b));
    if (w && (w->rank != 1 || w->shape[0] != x->shape[1] || w->dtype != x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "weight %s must be %s[%lld] (one per class)",
                           mrt_tensor_describe(w, a, sizeof a), mrt_dtype_name(x->dtype), (long long)x->shape[1]);
    const char *red = mrt_attr_string(ctx, "reduction", "mean");
    if (strcmp(red, "mean") && strcmp(red, "sum") && strcmp(red, "none"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "reduction '%s' is not none, sum or mean", red);
    if (strcmp(red, "none") == 0) return mrt_output_set(ctx, 0, x->dtype, t->rank, t->shape);
    return mrt_output_set(ctx, 0, x->dtype, 0, NULL);
}

static mrt_status infer_nll(mrt_op_ctx *ctx) { return check_loss_inputs(ctx, "input"); }

static mrt_status infer_sce(mrt_op_ctx *ctx)
{
    MRT_TRY(check_loss_inputs(ctx, "scores"));
    const mrt_tensor *x = mrt_input(ctx, 0);
    return mrt_output_set(ctx, 1, x->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 2, 3, 1, 1, infer_nll, 0},
    {"", "NegativeLogLikelihoodLoss", 13, 2, 3, 1, 1, infer_nll, 0},
    {"", "NegativeLogLikelihoodLoss", 22, 2, 3, 1, 1, infer_nll, 0},
    {"", "SoftmaxCrossEntropyLoss", 12, 2, 3, 1, 2, infer_sce, 0},
    {"", "SoftmaxCrossEntropyLoss", 13, 2, 3, 1, 2, infer_sce, 0},
    {0},
};
