/* Opdefs (arity, attribute checks, output inference) for the elementwise family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_elementwise[] = {
    {0},
};
