/* CPU kernels for the shape family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_shape[] = {
    {0},
};
