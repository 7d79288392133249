// Shared by the CUDA module's .cu files: error reporting into the caller's buffer.
#pragma once

#include <cstdio>

#include <cuda_runtime.h>

// Evaluate a CUDA runtime call; on failure write "<what>: <CUDA error>" to err and return 1.
#define MRT_CUDA_TRY(call, what)                                                              \
    do {                                                                                      \
        cudaError_t mrt_e_ = (call);                                                          \
        if (mrt_e_ != cudaSuccess) {                                                          \
            if (err && err_len) snprintf(err, err_len, "%s: %s (%s)", (what), cudaGetErrorString(mrt_e_), \
                                         cudaGetErrorName(mrt_e_));                           \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)
