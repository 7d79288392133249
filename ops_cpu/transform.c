/* CPU kernels for the transform family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_transform[] = {
    {0},
};
