/* Element-wise work fused into the node that produces its input (engine/fuse.c decides, at plan time):
 * Conv -> [BatchNormalization] -> [Add(residual)] -> [Relu | Clip | Sigmoid | SiLU (x * Sigmoid(x))], and
 * MatMul/Gemm -> [Add(bias vector)] -> [Add(residual)] -> [the same activations], run as one step whose kernel
 * writes the last node's output, applying these post-ops to each block of results while it is
 * still in cache. Each post-op computes exactly what the stand-alone kernel computes (the same formula, the same
 * functions), so a fused run gives the same bits as an unfused one (--no-fuse). */
#pragma once

#include <stdint.h>

#include "engine/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mrt_post_kind {
    MRT_POST_BATCHNORM, /* y = (float)((double)x * a[c] + b[c]), a and b as BatchNormalization computes them */
    MRT_POST_ADD,       /* y = x + other[i]: a tensor of the output's shape (a residual connection) */
    MRT_POST_ADD_ROW,   /* y = x + other[i % n_cols]: a vector along the last axis (a Linear layer's bias) */
    MRT_POST_RELU,      /* y = max(x, 0) */
    MRT_POST_CLIP,      /* y = min(max(x, lo), hi) */
    MRT_POST_SIGMOID,   /* y = sigmoid(x) (mrt_vsigmoid_f32) */
    MRT_POST_SILU,      /* y = x * sigmoid(x): the Sigmoid + Mul pair */
} mrt_post_kind;

typedef struct mrt_post_op {
    mrt_post_kind kind;
    const double *a, *b;  /* BATCHNORM: per-channel multiplier and addend */
    const float *other;   /* ADD: the other operand, laid out like the output; ADD_ROW: the vector */
    int64_t n_cols;       /* ADD_ROW: the output's last dimension */
    float lo, hi;         /* CLIP */
} mrt_post_op;

enum { MRT_MAX_POST_OPS = 4 };

typedef struct mrt_epilogue {
    int n_ops;
    mrt_post_op ops[MRT_MAX_POST_OPS];
} mrt_epilogue;

#ifdef __cplusplus
}
#endif
