/* Element-wise work fused into the node that produces its input (engine/fuse.c decides, at plan time):
 * Conv -> [BatchNormalization] -> [Add(residual)] -> [Relu | Clip | Sigmoid | SiLU (x * Sigmoid(x)) | HardSwish |
 * GELU written out with Erf | a pointwise program], and
 * MatMul/Gemm -> [Add(bias vector)] -> [Add(residual)] -> [the same activations; a program also behind a Reshape],
 * and Add/Sub/Mul/Div -> [GELU written out with Erf | a pointwise program] (ops_cpu/elementwise_binary.c), run as
 * one step whose kernel
 * writes the last node's output, applying these post-ops to each block of results while it is
 * still in cache. Each post-op computes exactly what the stand-alone kernel computes (the same formula, the same
 * functions), so a fused run gives the same bits as an unfused one (--no-fuse). */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A float32 BatchNormalization channel, y = x * A + B with A = scale / sqrt(var + eps) and B = bias - mean * A
 * computed in double, applied as
 *     y = fmaf(x, a_hi, b_hi) + fmaf(x, a_lo, b_lo)
 * where a_hi is the float nearest A and a_lo the float nearest A - a_hi (b likewise): A and B kept to 2^-48, and
 * two roundings instead of the one of (float)((double)x * A + B). So within 1.5 ulp of x * A + B where the result
 * is not cancelled away (that formula: 0.5), and within 2^-23 (|x A| + |B|) anywhere: float rounding, at three
 * vector operations instead of the conversions' nine (those were 13% of MobileNetV2's run). tests/test_epilogue.c
 * checks both bounds. The stand-alone kernel (ops_cpu/norm.c) and the fused post-op use this one formula, so
 * fusion keeps the bits. */
typedef struct mrt_bn_coef {
    float a_hi, a_lo, b_hi, b_lo;
} mrt_bn_coef;

/* A BatchNormalization channel's multiplier and addend in double: the one computation both the stand-alone kernel
   and the fused post-op (engine/fuse.c) use, so they apply the same coefficients */
static inline void mrt_bn_affine(double scale, double bias, double mean, double var, double eps, double *a, double *b)
{
    *a = scale / sqrt(var + eps);
    *b = bias - mean * *a;
}

static inline mrt_bn_coef mrt_bn_coef_make(double a, double b)
{
    mrt_bn_coef k = {(float)a, 0.0f, (float)b, 0.0f};
    /* an infinite or NaN hi carries the whole value (inf - inf would make the lo a NaN) */
    if (isfinite(k.a_hi)) k.a_lo = (float)(a - (double)k.a_hi);
    if (isfinite(k.b_hi)) k.b_lo = (float)(b - (double)k.b_hi);
    return k;
}

static inline float mrt_bn_apply_f32(float x, mrt_bn_coef k)
{
    return fmaf(x, k.a_hi, k.b_hi) + fmaf(x, k.a_lo, k.b_lo);
}

/* GELU as exporters write it out (torch's nn.GELU before opset 20): Div(x, div) -> Erf -> Add(., add) ->
   Mul(x, .) -> Mul(., mul), with div, add and mul scalar float32 constants; the *_first flags say which operand
   came first in the Add (the constant), the first Mul (x) and the last Mul (the constant). */
typedef struct mrt_gelu_erf_nodes {
    float div, add, mul;
    bool add_first, x_first, mul_first;
} mrt_gelu_erf_nodes;

/* A pointwise program: a group of element-wise nodes over one tensor x that engine/fuse.c found closed (each value
   read only inside the group but the last), as straight-line code over registers of x's elements. The arithmetic
   ops take two registers or a register and the scalar constant k (a or b -1: k, in the node's operand order); Pow
   takes a register and a constant exponent; the unary ops read register a, and those with attributes take them as
   k (alpha) and k2 (Selu's gamma, HardSigmoid's beta). Each runs the float32 loop of its own stand-alone kernel
   (ops_cpu/elementwise*.c), so the program gives the nodes' bits. Register 0 holds x on entry and the result on
   exit. GPT-2's GELU in its tanh form is eight such nodes (Mul, Pow, Mul, Add, Mul, Tanh, Add, Mul); Mish written
   out is three; a darknet export's Conv -> LeakyRelu is one. */
#define MRT_PW_UNARY_OPS(X)                                                                                      \
    X(ABS, "Abs") X(NEG, "Neg") X(SQRT, "Sqrt") X(EXP, "Exp") X(LOG, "Log") X(RECIPROCAL, "Reciprocal")         \
    X(FLOOR, "Floor") X(CEIL, "Ceil") X(ROUND, "Round") X(SIGN, "Sign") X(ERF, "Erf") X(SIN, "Sin") X(COS, "Cos") \
    X(TAN, "Tan") X(ASIN, "Asin") X(ACOS, "Acos") X(ATAN, "Atan") X(SINH, "Sinh") X(COSH, "Cosh")                 \
    X(ASINH, "Asinh") X(ACOSH, "Acosh") X(ATANH, "Atanh") X(RELU, "Relu") X(SIGMOID, "Sigmoid") X(TANH, "Tanh")  \
    X(SOFTPLUS, "Softplus") X(SOFTSIGN, "Softsign") X(MISH, "Mish") X(HARD_SWISH, "HardSwish")

/* ONNX's defaults for the attributes of the activations a program takes with them: the kernels
   (ops_cpu/elementwise_unary.c) and engine/fuse.c read these */
#define MRT_LEAKY_RELU_ALPHA 0.01f
#define MRT_ELU_ALPHA 1.0f
#define MRT_CELU_ALPHA 1.0f
#define MRT_THRESHOLDED_RELU_ALPHA 1.0f
#define MRT_SELU_ALPHA 1.67326319217681884765625f
#define MRT_SELU_GAMMA 1.05070102214813232421875f
#define MRT_HARD_SIGMOID_ALPHA 0.2f
#define MRT_HARD_SIGMOID_BETA 0.5f

typedef enum mrt_pw_code {
    MRT_PW_ADD,
    MRT_PW_SUB,
    MRT_PW_MUL,
    MRT_PW_DIV,
    MRT_PW_POW, /* the last binary code: the unary ones follow */
#define MRT_PW_X(name, op_type) MRT_PW_##name,
    MRT_PW_UNARY_OPS(MRT_PW_X)
#undef MRT_PW_X
    MRT_PW_GELU,      /* Gelu by its approximate attribute */
    MRT_PW_GELU_TANH,
    MRT_PW_LEAKY_RELU, /* alpha */
    MRT_PW_ELU,
    MRT_PW_CELU,
    MRT_PW_THRESHOLDED_RELU,
    MRT_PW_SELU,         /* alpha and gamma */
    MRT_PW_HARD_SIGMOID, /* alpha and beta */
} mrt_pw_code;

enum { MRT_PW_MAX_INSTR = 16, MRT_PW_MAX_REGS = 6 };

typedef struct mrt_pw_instr {
    mrt_pw_code code;
    int8_t dst, a, b; /* registers; a or b -1: the constant k */
    float k, k2;      /* a unary op's attributes */
} mrt_pw_instr;

typedef struct mrt_pw_program {
    int n;
    mrt_pw_instr ins[MRT_PW_MAX_INSTR];
} mrt_pw_program;

typedef enum mrt_post_kind {
    MRT_POST_BATCHNORM, /* y = mrt_bn_apply_f32(x, bn[c]), the coefficients as BatchNormalization computes them */
    MRT_POST_ADD,       /* y = x + other[i]: a tensor of the output's shape (a residual connection) */
    MRT_POST_ADD_ROW,   /* y = x + other[i % n_cols]: a vector along the last axis (a Linear layer's bias) */
    MRT_POST_RELU,      /* y = max(x, 0) */
    MRT_POST_CLIP,      /* y = min(max(x, lo), hi) */
    MRT_POST_SIGMOID,   /* y = sigmoid(x) (mrt_vsigmoid_f32) */
    MRT_POST_SILU,      /* y = x * sigmoid(x): the Sigmoid + Mul pair */
    MRT_POST_HARDSWISH, /* y = mrt_hardswish_f32(x) */
    MRT_POST_GELU_ERF_NODES, /* the five nodes of mrt_gelu_erf_nodes (mrt_vgelu_erf_nodes_f32) */
    MRT_POST_POINTWISE,      /* a pointwise program (mrt_pw_program) */
} mrt_post_kind;

typedef struct mrt_post_op {
    mrt_post_kind kind;
    const mrt_bn_coef *bn; /* BATCHNORM: per channel */
    const float *other;   /* ADD: the other operand, laid out like the output; ADD_ROW: the vector */
    int64_t n_cols;       /* ADD_ROW: the output's last dimension */
    float lo, hi;         /* CLIP */
    mrt_gelu_erf_nodes gelu; /* GELU_ERF_NODES */
    const mrt_pw_program *pw; /* POINTWISE */
} mrt_post_op;

enum { MRT_MAX_POST_OPS = 4 };

typedef struct mrt_epilogue {
    int n_ops;
    mrt_post_op ops[MRT_MAX_POST_OPS];
} mrt_epilogue;

/* A per-channel scale of a pointwise Conv's input fused into the Conv (engine/fuse.c): Mul(x, s) whose only reader
 * is a 1x1 Conv with stride 1, no padding and one group (a squeeze-excite block's output scale feeding its
 * projection). The Conv reads x instead of the Mul's output and packs x[n, c, i] * scale[n * batch_stride +
 * c * channel_stride] into its GEMM operand: the one float multiplication the Mul computes, so the bits are the
 * same, and the Mul's pass over the tensor (written, then read back by the Conv) is gone. */
typedef struct mrt_prologue {
    const float *scale;
    int64_t batch_stride, channel_stride; /* 0 where s is broadcast along that axis */
    /* Or, with scale NULL, an inference BatchNormalization of x [-> Relu] whose only reader is such a Conv
       (DenseNet's pre-activations before its 1x1 Convs): the Conv packs mrt_bn_apply_f32(x, bn[c]) (then Relu's
       formula when relu is set), the nodes' own formulas, so again the same bits without their pass over x. */
    const mrt_bn_coef *bn;
    bool relu;
    /* Or a Pad of x's two spatial axes with zeros (no cropping) whose only reader is a 2-D AveragePool without pads
       of its own (engine/fuse.c): the pool reads x and takes these as its pads, counted in every window
       (count_include_pad), which is what the explicit zeros were. Its sums in double start from +0, so leaving out
       the zero taps changes no bit. pads: top, left, bottom, right. */
    bool pad;
    int64_t pads[4];
} mrt_prologue;

#ifdef __cplusplus
}
#endif
