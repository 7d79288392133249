/* MRT_HD marks a function that both the CPU kernels (C11) and the CUDA kernels (nvcc, or the host C++ of the emulated
 * module) compile: `static inline MRT_HD` helpers in the opdef headers (engine/opdef/<family>.h) hold one definition of
 * an op's arithmetic, so a CUDA kernel checked against its CPU twin cannot drift from it. Such a helper is written in
 * the common subset of C11 and C++17 and calls only <math.h> functions that CUDA has on the device. */
#pragma once

#if defined(__CUDACC__)
#define MRT_HD __host__ __device__
#else
#define MRT_HD /* C, and the emulated module (ops_cuda/emu/cuda_emu.h runs device code as host code) */
#endif

/* a * b rounded on its own: nvcc fuses a product and a following add into one fma (rounded once) where the CPU
   kernels, C11 without contraction, round twice; a helper that adds to a product keeps the CPU's bits with this. */
static inline MRT_HD double mrt_mul_rn(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
