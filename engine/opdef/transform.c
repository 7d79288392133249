/* Opdefs (arity, attribute checks, output inference) for the transform family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_transform[] = {
    {0},
};
