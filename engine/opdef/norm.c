/* Opdefs (arity, attribute checks, output inference) for the norm family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_norm[] = {
    {0},
};
