// The CUDA module's kernel tables and the state its families share (plain C types).
#pragma once

#include "engine/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MRT_CUDA_FAMILY(name) extern const mrt_kernel mrt_cuda_kernels_##name[];
#include "ops_cuda/families.def"
#undef MRT_CUDA_FAMILY

// THE CUDA operator table: a NULL-terminated list of the families' tables (ops_cuda/cuda_kernels.c).
extern const mrt_kernel_table mrt_cuda_kernel_tables[];

#ifdef __cplusplus
}

// The session's TF32 choice for cuBLAS/cuDNN (mrt_cuda_api.set_allow_tf32; off by default).
extern bool mrt_cuda_allow_tf32;
// A stream is going away: drop the library handles bound to it (cuBLAS/cuDNN handles are cached per stream).
void mrt_cuda_stream_released(void *stream);
#endif
