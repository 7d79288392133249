/* Opdefs: GridSample, AffineGrid, RoiAlign, NonMaxSuppression, Col2Im (being written). */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_vision[] = {
    {0},
};
