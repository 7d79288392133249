// cuBLAS / cuDNN handles bound to a node's stream (real module only; the emulated module has no vendor libraries).
#pragma once

#include "engine/op.h"

#ifndef MRT_CUDA_EMULATED
#include <cublas_v2.h>
#include <cudnn.h>

// The handle for ctx->stream, with the session's math mode (TF32 only when allowed). Fails the node on error.
mrt_status mrt_cuda_cublas(const mrt_op_ctx *ctx, cublasHandle_t *out);
mrt_status mrt_cuda_cudnn(const mrt_op_ctx *ctx, cudnnHandle_t *out);
#endif
