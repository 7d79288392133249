/* Float32 transcendental functions over arrays, for the element-wise kernels and for the epilogues fused into
 * Conv/Gemm (ops_cpu/epilogue.c). One definition serves both, so a fused activation gives the same bits as the
 * stand-alone op. y may alias x. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "engine/epilogue.h" /* mrt_gelu_erf_nodes */

#ifdef __cplusplus
extern "C" {
#endif

void mrt_vexp_f32(float *y, const float *x, int64_t n);
/* Softmax's row pass in one sweep: y[i] = exp(x[i] - max), the bits of subtracting and then calling mrt_vexp_f32,
   and returns the sum of the y[i] in double with mrt_sum8_f32's bits (element i into part i % 8, in order of i).
   max must be at least every x[i] (the row's maximum; a NaN x[i] gives a NaN): the AVX-512 body leaves out the
   clamps that only larger differences need. */
double mrt_vexp_sum_f32(float *y, const float *x, float max, int64_t n);
/* the same, fetching next[0..n) into L1 as it goes (NULL: nothing): Softmax's next row, which its maximum pass would
   otherwise read from memory with no computation to hide it */
double mrt_vexp_sum_f32_fetch(float *y, const float *x, float max, int64_t n, const float *next);
/* 1 / (1 + exp(-x)), without overflow for large |x| */
void mrt_vsigmoid_f32(float *y, const float *x, int64_t n);
/* x * sigmoid(x) (SiLU): the bits of multiplying x by mrt_vsigmoid_f32's result */
void mrt_vsilu_f32(float *y, const float *x, int64_t n);
/* y[i] = sigmoid(b) (b * sigmoid(b) when silu) of b = mrt_bn_apply_f32(y[i], *bn) in place: a BatchNormalization
   -> Sigmoid | SiLU epilogue in one pass, the bits of the two kernels */
void mrt_vbn_sigmoid_f32(float *y, int64_t n, const mrt_bn_coef *bn, bool silu);
void mrt_vbn_sigmoid_f32_portable(float *y, int64_t n, const mrt_bn_coef *bn, bool silu);
/* The portable loops behind exp, exp_sum, sigmoid and SiLU, which take an AVX-512 body on CPUs that have one: the
   same bits, for the tests that check it */
void mrt_vexp_f32_portable(float *y, const float *x, int64_t n);
double mrt_vexp_sum_f32_portable(float *y, const float *x, float max, int64_t n);
void mrt_vsigmoid_f32_portable(float *y, const float *x, int64_t n);
void mrt_vsilu_f32_portable(float *y, const float *x, int64_t n);
void mrt_verf_f32(float *y, const float *x, int64_t n);
/* mrt_verf_f32's and mrt_vgelu_erf_nodes_f32's portable loops (they take an AVX-512 body where the CPU has one): the
   same bits, for the tests that check it */
void mrt_verf_f32_portable(float *y, const float *x, int64_t n);
void mrt_vtanh_f32(float *y, const float *x, int64_t n);
/* Gelu, erf form: 0.5 x (1 + erf(x / sqrt 2)), computed as 0.5 x erfc(-x / sqrt 2) for x < 0 */
void mrt_vgelu_f32(float *y, const float *x, int64_t n);

/* GELU as exporters write it out (engine/epilogue.h's mrt_gelu_erf_nodes), over y in place: each element gets each
   node's float operation in the nodes' operand order, Erf by mrt_verf_f32's formula, so the bits of running the
   five nodes, in one pass (engine/fuse.c fuses the chain into its producer). */
void mrt_vgelu_erf_nodes_f32(float *y, int64_t n, const mrt_gelu_erf_nodes *g);
void mrt_vgelu_erf_nodes_f32_portable(float *y, int64_t n, const mrt_gelu_erf_nodes *g);

/* HardSigmoid's clamp to [0, 1] and HardSwish(x) = x * max(0, min(1, x / 6 + 0.5)), the clamp by comparisons so NaN
   passes through (fminf/fmaxf would drop it). The stand-alone kernels and the post-op fused into a Conv (MobileNetV3,
   EfficientNet-Lite) use these; built with -std=c11, GCC contracts nothing into an FMA, so every clone gives these
   bits. */
static inline float mrt_clamp01_f32(float v) { return v < 0 ? 0.0f : v > 1 ? 1.0f : v; }
static inline float mrt_hardswish_f32(float x) { return x * mrt_clamp01_f32(x * (1.0f / 6.0f) + 0.5f); }

#ifdef __cplusplus
}
#endif
