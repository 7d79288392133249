/* Opdefs (arity, attribute checks, output inference) for the conv family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_conv[] = {
    {0},
};
