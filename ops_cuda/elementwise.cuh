// Elementwise CUDA kernels (host wrappers with C types).
#pragma once

#include <cstddef>
#include <cstdint>

int mrt_cuda_relu_f32(const float *x, float *y, int64_t n, char *err, size_t err_len);
