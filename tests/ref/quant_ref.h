/* Naive references for QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul and QLinearConv,
 * written from the ONNX operator specs (independent of ops_cpu/). Quantized values travel as int64, real values
 * as double; where the spec computes in float32 (x / y_scale, the requantization multiplier) the reference rounds
 * to float32 at the same points so that the expected integers are exact. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Round half to even, written out (no reliance on the FPU rounding mode). */
double ref_quant_round_half_even(double v);

/* Saturate to [lo, hi]; NaN -> 0. */
int64_t ref_quant_saturate(double v, int64_t lo, int64_t hi);

/* Index of the scale / zero point that applies to element e of x (row-major, `rank`, `shape`).
   scale_numel == 1 and block == 0: per tensor; block == 0: per axis (one value per index of `axis`);
   block > 0: the scale has x's shape with shape[axis] divided into ceil(shape[axis] / block) blocks. */
int64_t ref_quant_param_index(int rank, const int64_t *shape, int axis, int64_t block, int64_t scale_numel,
                              int64_t e);

/* y = saturate(round_half_even(x / scale) + zp) with the division done in float32 (both operands float32);
   zp may be NULL (0). lo/hi: the range of the quantized type. */
void ref_quantize_f32(const float *x, int rank, const int64_t *shape, int axis, int64_t block, const float *scale,
                      int64_t scale_numel, const int64_t *zp, int64_t lo, int64_t hi, int64_t *y);

/* y = (x - zp) * scale with (x - zp) in float32 and the product in float32. */
void ref_dequantize_f32(const int64_t *x, int rank, const int64_t *shape, int axis, int64_t block, const float *scale,
                        int64_t scale_numel, const int64_t *zp, float *y);

/* DynamicQuantizeLinear (uint8): the range [min(0, min x), max(0, max x)], scale and zero point in float32. */
void ref_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp);

/* QLinearMatMul on a [batch, m, k] x [k, n] (b shared across the batch). a_scale/a_zp: 1 or m values (per row);
   b_scale/b_zp: 1 or n values (per column); the multiplier a_scale * b_scale / y_scale in float32, then
   acc * multiplier + y_zp in double, rounded half to even and saturated to [lo, hi]. */
void ref_qlinear_matmul(const int64_t *a, const int64_t *b, int64_t batch, int64_t m, int64_t k, int64_t n,
                        const float *a_scale, const int64_t *a_zp, bool a_per_row, const float *b_scale,
                        const int64_t *b_zp, bool b_per_col, float y_scale, int64_t y_zp, int64_t lo, int64_t hi,
                        int64_t *y);

/* 2-D QLinearConv, NCHW: x [n, c, h, w], w [m, c / group, kh, kw]; explicit pads (top, left, bottom, right),
   strides, dilations; w_scale/w_zp: 1 or m values; bias (int32 values) may be NULL. Output [n, m, oh, ow]. */
typedef struct ref_qconv2d {
    int64_t n, c, h, w, m, kh, kw, group;
    int64_t pads[4], strides[2], dilations[2];
} ref_qconv2d;
void ref_qconv2d_out_size(const ref_qconv2d *p, int64_t *oh, int64_t *ow);
void ref_qlinear_conv2d(const ref_qconv2d *p, const int64_t *x, float x_scale, int64_t x_zp, const int64_t *w,
                        const float *w_scale, const int64_t *w_zp, bool w_per_channel, float y_scale, int64_t y_zp,
                        const int64_t *bias, int64_t lo, int64_t hi, int64_t *y);
