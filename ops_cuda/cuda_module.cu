// The CUDA module's entry point: device discovery, memory and copies behind the mrt_cuda_api table.
#include "engine/cuda_module.h"
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/elementwise.cuh"

namespace {

int device_count(int *count, char *err, size_t err_len)
{
    int n = 0; // cudaGetDeviceCount leaves it untouched when there is no driver
    *count = 0;
    MRT_CUDA_TRY(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    *count = n;
    return 0;
}

int device_name(int device, char *name, size_t name_len, char *err, size_t err_len)
{
    cudaDeviceProp prop;
    MRT_CUDA_TRY(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    snprintf(name, name_len, "%s", prop.name);
    return 0;
}

int set_device(int device, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaSetDevice(device), "cudaSetDevice");
    return 0;
}

int device_malloc(void **ptr, size_t bytes, char *err, size_t err_len)
{
    *ptr = nullptr;
    MRT_CUDA_TRY(cudaMalloc(ptr, bytes ? bytes : 1), "cudaMalloc");
    return 0;
}

int device_free(void *ptr, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaFree(ptr), "cudaFree");
    return 0;
}

int copy_to_device(void *dst, const void *src, size_t bytes, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host->device");
    return 0;
}

int copy_to_host(void *dst, const void *src, size_t bytes, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device->host");
    return 0;
}

int synchronize(char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return 0;
}

const mrt_cuda_api module_api = {
    MRT_CUDA_MODULE_ABI, sizeof(mrt_cuda_api), device_count, device_name, set_device, device_malloc,
    device_free, copy_to_device, copy_to_host, synchronize, mrt_cuda_relu_f32,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const mrt_cuda_api *mrt_cuda_module_api(void) { return &module_api; }
