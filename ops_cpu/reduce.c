/* CPU kernels for the reduce family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_reduce[] = {
    {0},
};
