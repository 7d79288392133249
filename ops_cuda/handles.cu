// cuBLAS and cuDNN handles, one per stream, created on first use and dropped when the stream goes
// (mrt_cuda_stream_released). The emulated module has no vendor libraries: its families use minirt's own kernels.
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/handles.cuh"

#ifndef MRT_CUDA_EMULATED
#include <mutex>

namespace {

struct stream_handles {
    void *stream;
    cublasHandle_t cublas;
    cudnnHandle_t cudnn;
};

std::mutex handles_lock;
stream_handles handles[16];
int n_handles;

stream_handles *slot_for(void *stream)
{
    for (int i = 0; i < n_handles; i++)
        if (handles[i].stream == stream) return &handles[i];
    if (n_handles == 16) return nullptr;
    handles[n_handles] = stream_handles{stream, nullptr, nullptr};
    return &handles[n_handles++];
}

} // namespace

mrt_status mrt_cuda_cublas(const mrt_op_ctx *ctx, cublasHandle_t *out)
{
    std::lock_guard<std::mutex> g(handles_lock);
    stream_handles *h = slot_for(ctx->stream);
    if (!h) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "too many CUDA streams for the cuBLAS handle cache");
    if (!h->cublas) {
        cublasStatus_t s = cublasCreate(&h->cublas);
        if (s != CUBLAS_STATUS_SUCCESS) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "cublasCreate failed (%d)", (int)s);
        cublasSetStream(h->cublas, (cudaStream_t)ctx->stream);
    }
    // reference-grade default: exact float32 products unless the session allows TF32
    cublasSetMathMode(h->cublas, mrt_cuda_allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
    *out = h->cublas;
    return MRT_STATUS_OK;
}

mrt_status mrt_cuda_cudnn(const mrt_op_ctx *ctx, cudnnHandle_t *out)
{
    std::lock_guard<std::mutex> g(handles_lock);
    stream_handles *h = slot_for(ctx->stream);
    if (!h) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "too many CUDA streams for the cuDNN handle cache");
    if (!h->cudnn) {
        cudnnStatus_t s = cudnnCreate(&h->cudnn);
        if (s != CUDNN_STATUS_SUCCESS)
            return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "cudnnCreate failed: %s", cudnnGetErrorString(s));
        cudnnSetStream(h->cudnn, (cudaStream_t)ctx->stream);
    }
    *out = h->cudnn;
    return MRT_STATUS_OK;
}

void mrt_cuda_stream_released(void *stream)
{
    std::lock_guard<std::mutex> g(handles_lock);
    for (int i = 0; i < n_handles; i++) {
        if (handles[i].stream != stream) continue;
        if (handles[i].cublas) cublasDestroy(handles[i].cublas);
        if (handles[i].cudnn) cudnnDestroy(handles[i].cudnn);
        handles[i] = handles[--n_handles];
        return;
    }
}
#else
void mrt_cuda_stream_released(void *stream) { (void)stream; }
#endif
