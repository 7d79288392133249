/* CPU kernels: GridSample, AffineGrid, RoiAlign, NonMaxSuppression, Col2Im (being written). */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_vision[] = {
    {0},
};
