/* Opdefs: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv (being written). */
#include "engine/registry.h"

const mrt_opdef mrt_opdefs_quant[] = {
    {0},
};
