/* CPU kernels for the elementwise family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_elementwise[] = {
    {0},
};
