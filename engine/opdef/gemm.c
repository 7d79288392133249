/* Opdefs (arity, attribute checks, output inference) for the gemm family. */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_gemm[] = {
    {0},
};
