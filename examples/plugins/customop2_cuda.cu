// customOp2's CUDA kernel (see customop2.c): y = x * sigmoid(x) for x > 0, 0 for x <= 0, NaN kept; float and double.
// Built with nvcc for a GPU (build/plugins/libminirt_customop2_cuda.so) and with the host compiler against minirt's
// CUDA emulation (libminirt_customop2_emu.so), like the kernels of ops_cuda/: every launch goes through MRT_LAUNCH.
#include <cmath>
#include <cstdint>

#include "ops_cuda/cuda_compat.cuh"

namespace {

template <typename T> __global__ void customop2_kernel(const T *x, T *y, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T v = x[i];
        y[i] = v > 0 ? v / ((T)1 + exp(-v)) : (v != v ? v : (T)0);
    }
}

} // namespace

// 0 on success, else the CUDA error code; is_double picks the element type.
extern "C" int customop2_cuda_launch(const void *x, void *y, int64_t n, int is_double, void *stream)
{
    if (n <= 0) return 0;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65535) blocks = 65535;
    if (is_double) {
        auto *k = customop2_kernel<double>;
        MRT_LAUNCH(k, (unsigned)blocks, 256, 0, (cudaStream_t)stream, (const double *)x, (double *)y, n);
    } else {
        auto *k = customop2_kernel<float>;
        MRT_LAUNCH(k, (unsigned)blocks, 256, 0, (cudaStream_t)stream, (const float *)x, (float *)y, n);
    }
    return (int)cudaGetLastError();
}
