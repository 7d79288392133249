/* CPU kernels for the norm family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_norm[] = {
    {0},
};
