/* CPU kernel: Dropout (1, 6, 7, 10, 12, 13, 22). In inference (training_mode absent or false, or ratio 0) the
   output is the input and the mask is all true. In training mode with ratio > 0, elements are dropped with a
   deterministic generator seeded by the `seed` attribute (0 when absent) and kept ones scaled by 1/(1-ratio):
   element i is kept when the i-th uniform of numpy's RandomState(seed) is >= ratio (ops_cpu/random.h), so the
   mask is the one onnx.reference draws, but not the one other engines draw. */
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/random.h"

static mrt_status mrt_cpu_dropout(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *ratio_t = mrt_input(ctx, 1), *train_t = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0), *mask = mrt_output(ctx, 1);
    double ratio = ratio_t ? mrt_load_f64(ratio_t->dtype, ratio_t->data, 0) : mrt_attr_float(ctx, "ratio", 0.5f);
    bool training = train_t ? mrt_load_i64(train_t->dtype, train_t->data, 0) != 0
                            : ctx->opset < 7 && mrt_attr_int(ctx, "is_test", 0) == 0;
    if (!(ratio >= 0 && ratio < 1)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "ratio %g is not in [0, 1)", ratio);
    int64_t n = mrt_tensor_numel(x);
    if (!training || ratio == 0) {
        /* the opdef lets y take over x's buffer (MRT_OPDEF_INPLACE): then there is nothing to copy */
        if (y->data != x->data) memcpy(y->data, x->data, mrt_tensor_nbytes(x));
        if (mask && mask->dtype == MRT_DTYPE_BOOL) memset(mask->data, 1, (size_t)n);
        else for (int64_t i = 0; mask && i < n; i++) mrt_store_f64(mask->dtype, mask->data, i, 1.0);
        return MRT_STATUS_OK;
    }
    mrt_mt19937 stream, *s = &stream; /* 2.5 KB: on the stack, not allocated per call */
    mrt_mt_seed(s, (uint32_t)mrt_attr_int(ctx, "seed", 0)); /* seeds outside [0, 2^32) wrap */
    double scale = 1.0 / (1.0 - ratio);
    /* in place too: element i is read before it is written */
    for (int64_t i = 0; i < n; i++) {
        bool keep = mrt_mt_double(s) >= ratio;
        mrt_store_f64(y->dtype, y->data, i, keep ? mrt_load_f64(x->dtype, x->data, i) * scale : 0.0);
        if (mask) mrt_store_f64(mask->dtype, mask->data, i, keep);
    }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_dropout[] = {
    {"", "Dropout", 1, mrt_cpu_dropout, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {0},
};
