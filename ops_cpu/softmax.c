/* CPU kernels for the softmax family. */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_softmax[] = {
    {0},
};
