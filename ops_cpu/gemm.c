/* CPU kernels for the gemm family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_gemm[] = {
    {0},
};
