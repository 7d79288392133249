// The CUDA module's entry point: devices, memory, copies, streams and events behind the mrt_cuda_api table, and
// the module's kernel tables. The same source builds the real module (nvcc) and the emulated one (host compiler,
// ops_cuda/emu), where these calls reach the emulation's runtime.
#include "engine/cuda_module.h"
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"

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

int device_malloc_async(void **ptr, size_t bytes, void *stream, char *err, size_t err_len)
{
    *ptr = nullptr;
    MRT_CUDA_TRY(cudaMallocAsync(ptr, bytes ? bytes : 1, (cudaStream_t)stream), "cudaMallocAsync");
    return 0;
}

int device_free_async(void *ptr, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaFreeAsync(ptr, (cudaStream_t)stream), "cudaFreeAsync");
    return 0;
}

int host_alloc(void **ptr, size_t bytes, char *err, size_t err_len)
{
    *ptr = nullptr;
    MRT_CUDA_TRY(cudaMallocHost(ptr, bytes ? bytes : 1), "cudaMallocHost");
    return 0;
}

int host_free(void *ptr, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaFreeHost(ptr), "cudaFreeHost");
    return 0;
}

int copy_to_device(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream), "copy host->device");
    return 0;
}

int copy_to_host(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream), "copy device->host");
    MRT_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream), "copy device->host (synchronising)");
    return 0;
}

int copy_on_device(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream), "copy device->device");
    return 0;
}

int device_memset(void *dst, int byte, size_t bytes, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream), "cudaMemsetAsync");
    return 0;
}

int synchronize(char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return 0;
}

int stream_create(void **stream, char *err, size_t err_len)
{
    cudaStream_t s = nullptr;
    MRT_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    *stream = s;
    return 0;
}

int stream_destroy(void *stream, char *err, size_t err_len)
{
    mrt_cuda_stream_released(stream);
    MRT_CUDA_TRY(cudaStreamDestroy((cudaStream_t)stream), "cudaStreamDestroy");
    return 0;
}

int stream_synchronize(void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    return 0;
}

int event_create(void **event, int timing, char *err, size_t err_len)
{
    cudaEvent_t e = nullptr;
    MRT_CUDA_TRY(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
    *event = e;
    return 0;
}

int event_destroy(void *event, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaEventDestroy((cudaEvent_t)event), "cudaEventDestroy");
    return 0;
}

int event_record(void *event, void *stream, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
    return 0;
}

int stream_wait_event(void *stream, void *event, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent");
    return 0;
}

int event_elapsed_ms(float *ms, void *start, void *end, char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end), "cudaEventElapsedTime");
    return 0;
}

int last_error(char *err, size_t err_len)
{
    MRT_CUDA_TRY(cudaGetLastError(), "CUDA error");
    return 0;
}

int set_allow_tf32(int allow, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    mrt_cuda_allow_tf32 = allow != 0;
    return 0;
}

const mrt_cuda_api module_api = {
    MRT_CUDA_MODULE_ABI, sizeof(mrt_cuda_api),
#ifdef MRT_CUDA_EMULATED
    1,
#else
    0,
#endif
    device_count, device_name, set_device, device_malloc, device_free, device_malloc_async, device_free_async, host_alloc, host_free, copy_to_device,
    copy_to_host, copy_on_device, device_memset, synchronize, stream_create, stream_destroy, stream_synchronize,
    event_create, event_destroy, event_record, stream_wait_event, event_elapsed_ms, last_error, set_allow_tf32,
    mrt_cuda_kernel_tables,
};

} // namespace

bool mrt_cuda_allow_tf32 = false;

extern "C" __attribute__((visibility("default"))) const mrt_cuda_api *mrt_cuda_module_api(void) { return &module_api; }
