// ONNX Dropout 1, 6, 7, 10, 12, 13, 22 on CUDA (float, double, float16, bfloat16; the mask output, bool from opset 10,
// the input's type before), as the CPU kernel (ops_cpu/dropout.c). Inference (or ratio 0): y is a copy of x (nothing
// when the plan ran it in place) and the mask all true. Training: the CPU's draws come from MT19937 (numpy's
// RandomState(seed), ops_cpu/random.h), whose state advances sequentially, so the keep flags are drawn on the host
// exactly as the CPU draws them, copied up, and one thread per element applies them.
#include <cstdlib>

#include "ops_cpu/random.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

// keep NULL: inference, only the mask (all true) is written; y already holds x.
__global__ void dropout_kernel(const void *x, const uint8_t *keep, void *y, void *mask, int dt, int mask_dt,
                               double scale, int64_t n)
{
    MRT_CU_FOR(i, n)
    {
        bool k = keep ? keep[i] != 0 : true;
        if (keep) st_any(dt, y, i, k ? ld_any(dt, x, i) * scale : 0.0);
        if (mask) {
            if (mask_dt == MRT_DTYPE_BOOL) ((uint8_t *)mask)[i] = k;
            else st_any(mask_dt, mask, i, k ? 1.0 : 0.0);
        }
    }
}

mrt_status read_host(mrt_op_ctx *ctx, const mrt_tensor *t, double *out)
{
    unsigned char buf[8];
    size_t nb = (size_t)mrt_dtype_bits(t->dtype) / 8;
    cudaError_t e = cudaMemcpyAsync(buf, t->data, nb, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx));
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading an input: %s", cudaGetErrorString(e));
    *out = t->dtype == MRT_DTYPE_BOOL ? (double)(buf[0] != 0) : mrt_load_f64(t->dtype, buf, 0);
    return MRT_STATUS_OK;
}

mrt_status cu_dropout(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *ratio_t = mrt_input(ctx, 1), *train_t = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0), *mask = mrt_output(ctx, 1);
    cudaStream_t st = mrt_cu_stream(ctx);
    double ratio = mrt_attr_float(ctx, "ratio", 0.5f), train = 0;
    if (ratio_t) MRT_TRY(read_host(ctx, ratio_t, &ratio));
    if (train_t) MRT_TRY(read_host(ctx, train_t, &train));
    bool training = train_t ? train != 0 : ctx->opset < 7 && mrt_attr_int(ctx, "is_test", 0) == 0;
    if (!(ratio >= 0 && ratio < 1)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "ratio %g is not in [0, 1)", ratio);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    uint8_t *keep = NULL;
    if (!training || ratio == 0) {
        if (y->data != x->data) {
            cudaError_t e = cudaMemcpyAsync(y->data, x->data, mrt_tensor_nbytes(x), cudaMemcpyDeviceToDevice, st);
            if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copying x: %s", cudaGetErrorString(e));
        }
        if (!mask) return MRT_STATUS_OK;
    } else {
        keep = (uint8_t *)mrt_workspace(ctx, (size_t)n);
        uint8_t *h = (uint8_t *)malloc((size_t)n);
        if (!keep || !h) {
            free(h);
            return MRT_STATUS_OUT_OF_MEMORY;
        }
        mrt_mt19937 stream;
        mrt_mt_seed(&stream, (uint32_t)mrt_attr_int(ctx, "seed", 0)); // seeds outside [0, 2^32) wrap
        for (int64_t i = 0; i < n; i++) h[i] = mrt_mt_double(&stream) >= ratio;
        cudaError_t e = cudaMemcpyAsync(keep, h, (size_t)n, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st); // h is freed next
        free(h);
        if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "uploading the draws: %s", cudaGetErrorString(e));
    }
    MRT_LAUNCH(dropout_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, st, (const void *)x->data, (const uint8_t *)keep,
               y->data, mask ? mask->data : (void *)NULL, (int)x->dtype, mask ? (int)mask->dtype : 0,
               1.0 / (1.0 - ratio), n);
    MRT_CU_CHECK_LAUNCH(ctx, "dropout kernel");
    return MRT_STATUS_OK;
}

bool cu_dropout_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !seg_float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

} // namespace

// y and the mask are written whole in every mode.
extern "C" const mrt_kernel mrt_cuda_kernels_dropout[] = {
    MRT_CU_ROW_S("Dropout", 1, cu_dropout, cu_dropout_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
