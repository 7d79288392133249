/* Opdefs (arity, attribute checks, output inference) for the softmax family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_softmax[] = {
    {0},
};
