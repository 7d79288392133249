// CUDA elementwise kernels. Relu (float32) is the first: it proves the module path end to end.
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/elementwise.cuh"

namespace {

__global__ void relu_f32_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = x[i];
        y[i] = v > 0.0f ? v : (v != v ? v : 0.0f); // NaN propagates like the CPU kernel
    }
}

} // namespace

int mrt_cuda_relu_f32(const float *x, float *y, int64_t n, char *err, size_t err_len)
{
    if (n <= 0) return 0;
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535) blocks = 65535;
    relu_f32_kernel<<<(unsigned)blocks, threads>>>(x, y, n);
    MRT_CUDA_TRY(cudaGetLastError(), "Relu kernel launch");
    return 0;
}
