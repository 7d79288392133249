/* CPU kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv (being written). */
#include "engine/registry.h"

const mrt_kernel mrt_cpu_kernels_quant[] = {
    {0},
};
