// One kernel source for two compilers. Every .cu of the CUDA module (and a plugin's CUDA kernel) includes this first:
//  - under nvcc: the CUDA runtime, and MRT_LAUNCH as nvcc's <<<...>>>;
//  - under the host C++ compiler: ops_cuda/emu/cuda_emu.h, an emulation of CUDA's execution model on the CPU
//    (MRT_CUDA_EMULATED is then defined), for the emulated module every CI run tests the kernels with.
// Launch only with MRT_LAUNCH(kernel, grid, block, shmem, stream, args...). A kernel name with template commas goes
// through a function pointer first: `auto *k = my_kernel<float, 4>; MRT_LAUNCH(k, ...)` (the emulation also needs a
// named instantiation where nvcc would deduce the template arguments). Dynamic shared memory is declared inside the
// kernel with MRT_DYNAMIC_SHARED(T, name): `name` is a T* to the launch's dynamic shared bytes.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define MRT_LAUNCH(kernel, grid, block, shmem, stream, ...) kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
// One byte array for every kernel, cast to T: `extern __shared__ T name[]` with two different T under one name in a
// file (two kernels, or two instantiations of a template) is an nvcc error ("declaration is incompatible").
#define MRT_DYNAMIC_SHARED(T, name)                                                                               \
    extern __shared__ __align__(16) unsigned char mrt_dynamic_smem_[];                                            \
    T *const name = reinterpret_cast<T *>(mrt_dynamic_smem_)
#else
#ifndef MRT_CUDA_EMULATED
#define MRT_CUDA_EMULATED 1
#endif
#include "ops_cuda/emu/cuda_emu.h"
#endif
