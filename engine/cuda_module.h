/* The boundary between the engine and the CUDA module (build/libminirt_cuda.so). The module is loaded with
 * dlopen only when a CUDA device is requested, so CPU-only runs never load cudart/cuBLAS/cuDNN.
 * Plain C types only; the struct is versioned and only grows at its end. Functions return 0 on success,
 * otherwise non-zero with a message in err. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MRT_CUDA_MODULE_ABI 1

typedef struct mrt_cuda_api {
    uint32_t abi_version;
    uint32_t struct_size;
    /* number of usable devices; 0 with a reason in err when there is no device or no driver */
    int (*device_count)(int *count, char *err, size_t err_len);
    int (*device_name)(int device, char *name, size_t name_len, char *err, size_t err_len);
    int (*set_device)(int device, char *err, size_t err_len);
    int (*malloc)(void **ptr, size_t bytes, char *err, size_t err_len);
    int (*free)(void *ptr, char *err, size_t err_len);
    int (*copy_to_device)(void *dst, const void *src, size_t bytes, char *err, size_t err_len);
    int (*copy_to_host)(void *dst, const void *src, size_t bytes, char *err, size_t err_len);
    int (*synchronize)(char *err, size_t err_len);
    /* one elementwise kernel (float32 Relu) proving the path end to end; pointers are device memory */
    int (*relu_f32)(const float *x, float *y, int64_t n, char *err, size_t err_len);
} mrt_cuda_api;

/* Exported by the module. */
typedef const mrt_cuda_api *(*mrt_cuda_module_entry)(void);
#define MRT_CUDA_MODULE_ENTRY "mrt_cuda_module_api"

/* Engine side: load the module once (MRT_CUDA_MODULE, else next to the executable, else the library search
   path) and check that a device exists. DEVICE_ERROR with the reason otherwise. */
mrt_status mrt_cuda_open(const mrt_cuda_api **api);

#ifdef __cplusplus
}
#endif
