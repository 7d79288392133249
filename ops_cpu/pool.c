/* CPU kernels for the pool family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_pool[] = {
    {0},
};
