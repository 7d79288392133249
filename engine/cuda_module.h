/* The boundary between the engine and the CUDA module (build/libminirt_cuda.so on a GPU, or
 * build/libminirt_cuda_emu.so, the same kernel sources built for the host under an emulation of CUDA's execution
 * model, see docs/cuda.md). The module is loaded with dlopen only when a CUDA device is requested, so CPU-only
 * runs never load cudart/cuBLAS/cuDNN.
 *
 * Plain C types only; the struct is versioned and only grows at its end. Functions return 0 on success, otherwise
 * non-zero with a message in err. Streams and events are opaque pointers (cudaStream_t / cudaEvent_t); stream NULL
 * is the legacy default stream.
 *
 * The module's kernels are ordinary operator-table rows (engine/registry.h) whose run sees device pointers in its
 * inputs' and outputs' `data`, ctx->stream, and a device workspace. They call the engine's mrt_* helpers (inputs,
 * attributes, errors), which the executable exports (ENABLE_EXPORTS) and the module resolves when it is loaded. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MRT_CUDA_MODULE_ABI 3 /* 3: mrt_kernel rows gained `workspace` */

struct mrt_kernel_table;

typedef struct mrt_cuda_api {
    uint32_t abi_version;
    uint32_t struct_size;
    /* true for the emulated module: kernels run on the CPU, cuDNN/cuBLAS are replaced by minirt's own kernels */
    int emulated;
    /* number of usable devices; 0 with a reason in err when there is no device or no driver */
    int (*device_count)(int *count, char *err, size_t err_len);
    int (*device_name)(int device, char *name, size_t name_len, char *err, size_t err_len);
    int (*set_device)(int device, char *err, size_t err_len);
    /* device memory (filled with 0xFF bytes under the emulation, so a kernel that reads before writing shows) */
    int (*malloc)(void **ptr, size_t bytes, char *err, size_t err_len);
    int (*free)(void *ptr, char *err, size_t err_len);
    /* stream-ordered pool memory (cudaMallocAsync/cudaFreeAsync) for values whose shapes are known only at run time */
    int (*malloc_async)(void **ptr, size_t bytes, void *stream, char *err, size_t err_len);
    int (*free_async)(void *ptr, void *stream, char *err, size_t err_len);
    /* pinned host memory for staging inputs and outputs */
    int (*host_alloc)(void **ptr, size_t bytes, char *err, size_t err_len);
    int (*host_free)(void *ptr, char *err, size_t err_len);
    /* stream-ordered copies; copy_to_host synchronises the stream before returning (the host reads the bytes next) */
    int (*copy_to_device)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len);
    int (*copy_to_host)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len);
    int (*copy_on_device)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t err_len);
    int (*memset)(void *dst, int byte, size_t bytes, void *stream, char *err, size_t err_len);
    int (*synchronize)(char *err, size_t err_len);
    int (*stream_create)(void **stream, char *err, size_t err_len);
    int (*stream_destroy)(void *stream, char *err, size_t err_len);
    int (*stream_synchronize)(void *stream, char *err, size_t err_len);
    /* timing events when `timing`, else sync-only events (cheaper) */
    int (*event_create)(void **event, int timing, char *err, size_t err_len);
    int (*event_destroy)(void *event, char *err, size_t err_len);
    int (*event_record)(void *event, void *stream, char *err, size_t err_len);
    int (*stream_wait_event)(void *stream, void *event, char *err, size_t err_len);
    int (*event_elapsed_ms)(float *ms, void *start, void *end, char *err, size_t err_len);
    /* the sticky or pending error of the last launches (cudaGetLastError), 0 when none */
    int (*last_error)(char *err, size_t err_len);
    /* TF32 in cuBLAS/cuDNN (off unless allowed: float32 results stay float32-exact in their products) */
    int (*set_allow_tf32)(int allow, char *err, size_t err_len);
    /* the module's kernel rows: a NULL-terminated list of tables, as mrt_cpu_kernel_tables */
    const struct mrt_kernel_table *kernel_tables;
} mrt_cuda_api;

/* Exported by the module. */
typedef const mrt_cuda_api *(*mrt_cuda_module_entry)(void);
#define MRT_CUDA_MODULE_ENTRY "mrt_cuda_module_api"

/* Engine side: load the module once (MRT_CUDA_MODULE, else next to the executable, else the library search
   path), check that a device exists, and register the module's kernel rows for MRT_DEVICE_CUDA. DEVICE_ERROR with
   the reason otherwise. */
mrt_status mrt_cuda_open(const mrt_cuda_api **api);

#ifdef __cplusplus
}
#endif
