/* Opdefs for Dropout (1, 6, 7, 10, 12, 13, 22). */
#include "engine/registry.h"

static mrt_status infer_dropout(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'data' is missing");
    if (!mrt_dtype_is_float(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'data' must be a float tensor, got %s",
                           mrt_dtype_name(x->dtype));
    const mrt_tensor *ratio = mrt_input(ctx, 1);
    if (ratio && mrt_tensor_numel(ratio) != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'ratio' must be a scalar");
    MRT_TRY(mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape));
    /* the mask is bool from opset 10, the input's type before */
    return mrt_output_set(ctx, 1, ctx->opset >= 10 ? MRT_DTYPE_BOOL : x->dtype, x->rank, x->shape);
}

/* In place: output 0 is input 0 (inference) or input 0's element i scaled or zeroed (training), so it may take
   over input 0's buffer and inference then copies nothing. */
const mrt_opdef mrt_opdefs_dropout[] = {
    {"", "Dropout", 1, 1, 1, 1, 2, infer_dropout, MRT_OPDEF_INPLACE},
    {"", "Dropout", 6, 1, 1, 1, 2, infer_dropout, MRT_OPDEF_INPLACE},
    {"", "Dropout", 7, 1, 1, 1, 2, infer_dropout, MRT_OPDEF_INPLACE},
    {"", "Dropout", 10, 1, 1, 1, 2, infer_dropout, MRT_OPDEF_INPLACE},
    {"", "Dropout", 12, 1, 3, 1, 2, infer_dropout, MRT_OPDEF_NO_FOLD | MRT_OPDEF_INPLACE},
    {"", "Dropout", 13, 1, 3, 1, 2, infer_dropout, MRT_OPDEF_NO_FOLD | MRT_OPDEF_INPLACE},
    {"", "Dropout", 22, 1, 3, 1, 2, infer_dropout, MRT_OPDEF_NO_FOLD | MRT_OPDEF_INPLACE},
    {0},
};
