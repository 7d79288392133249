/* THE CUDA operator table: one kernel table per op family (ops_cuda/<family>.cu). */
#include "ops_cuda/cuda_kernels.h"

const mrt_kernel_table mrt_cuda_kernel_tables[] = {
#define MRT_CUDA_FAMILY(name) {mrt_cuda_kernels_##name},
#include "ops_cuda/families.def"
#undef MRT_CUDA_FAMILY
    {NULL},
};
