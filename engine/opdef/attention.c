/* Opdefs: Attention (23, 24), LinearAttention, CausalConvWithState (being written). */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_attention[] = {
    {0},
};
