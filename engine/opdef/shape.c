/* Opdefs (arity, attribute checks, output inference) for the shape family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_shape[] = {
    {0},
};
