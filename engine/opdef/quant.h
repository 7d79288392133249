/* Quantization parameter layout shared by the opdefs and the CPU kernels of QuantizeLinear/DequantizeLinear:
 * a scale (and zero point) per tensor, per axis, or per block of `block_size` along the axis. */
#pragma once

#include "engine/op.h"
#include "engine/opdef/conv.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

typedef struct mrt_quant_layout {
    int64_t outer, len, inner; /* x viewed as [outer, len (the axis), inner] */
    int64_t block;             /* 0 = per tensor or per axis; else the block size along the axis */
    bool per_tensor;
} mrt_quant_layout;

/* Validates the scale (input 1) and zero point (input 2, optional) against x (input 0) for the node's axis
   and block_size attributes. */
mrt_status mrt_quant_layout_get(const mrt_op_ctx *ctx, mrt_quant_layout *q);

/* The parameter index of element (o, a, i) of the [outer, len, inner] view. */
static inline int64_t mrt_quant_param_index(const mrt_quant_layout *q, int64_t o, int64_t a, int64_t i)
{
    if (q->per_tensor) return 0;
    if (!q->block) return a;
    int64_t nb = (q->len + q->block - 1) / q->block;
    return (o * nb + a / q->block) * q->inner + i;
}

/* QLinearConv: validates x (0), w (3), the scales, zero points and B (8); the window of x for w's kernel. */
mrt_status mrt_qlinear_conv_window(const mrt_op_ctx *ctx, mrt_window *win, int64_t *group);

#ifdef __cplusplus
}
#endif
