/* Opdefs for the window functions HannWindow, HammingWindow, BlackmanWindow (17). */
#include "engine/registry.h"

static mrt_status infer_window(mrt_op_ctx *ctx)
{
    const mrt_tensor *n = mrt_input(ctx, 0);
    int64_t dt = mrt_attr_int(ctx, "output_datatype", MRT_DTYPE_FLOAT);
    if (!n || mrt_tensor_numel(n) != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'size' must be one integer");
    if (!mrt_dtype_is_known((int)dt) || dt == MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output_datatype %lld is not a numeric type", (long long)dt);
    if (!n->data) return mrt_infer_dynamic(ctx);
    int64_t len = mrt_load_i64(n->dtype, n->data, 0);
    if (len < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "window size %lld is negative", (long long)len);
    return mrt_output_set(ctx, 0, (mrt_dtype)dt, 1, &len);
}

const mrt_opdef mrt_opdefs_signal[] = {
    {"", "HannWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {"", "HammingWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {"", "BlackmanWindow", 17, 1, 1, 1, 1, infer_window, 0},
    {0},
};
