/* Opdefs (arity, attribute checks, output inference) for the pool family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_pool[] = {
    {0},
};
