/* CPU kernels for the conv family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_conv[] = {
    {0},
};
