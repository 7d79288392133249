/* CPU kernels: Attention (23, 24), LinearAttention, CausalConvWithState (being written). */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_attention[] = {
    {0},
};
