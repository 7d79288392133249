/* Opdefs (arity, attribute checks, output inference) for the reduce family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_reduce[] = {
    {0},
};
