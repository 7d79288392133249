/* Naive references for the quantization ops (see quant_ref.h), from the ONNX operator specs. */
#include "quant_ref.h"

#include <math.h>

double ref_quant_round_half_even(double v)
{
    if (v != v || fabs(v) >= 4503599627370496.0) return v; /* NaN, or already an integer (>= 2^52) */
    double f = floor(v), frac = v - f;
    if (frac > 0.5) return f + 1;
    if (frac < 0.5) return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}

int64_t ref_quant_saturate(double v, int64_t lo, int64_t hi)
{
    if (v != v) return 0;
    if (v < (double)lo) return lo;
    if (v > (double)hi) return hi;
    return (int64_t)v;
}

int64_t ref_quant_param_index(int rank, const int64_t *shape, int axis, int64_t block, int64_t scale_numel,
                              int64_t e)
{
    if (scale_numel == 1 && block == 0) return 0;
    /* the coordinates of e */
    int64_t coord[16], rem = e;
    for (int d = rank - 1; d >= 0; d--) {
        coord[d] = rem % shape[d];
        rem /= shape[d];
    }
    if (block == 0) return coord[axis];
    /* the scale's index: same coordinates except along the axis, where it is the block number */
    int64_t idx = 0;
    for (int d = 0; d < rank; d++) {
        int64_t dim = d == axis ? (shape[d] + block - 1) / block : shape[d];
        int64_t c = d == axis ? coord[d] / block : coord[d];
        idx = idx * dim + c;
    }
    return idx;
}

static int64_t numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    return n;
}

void ref_quantize_f32(const float *x, int rank, const int64_t *shape, int axis, int64_t block, const float *scale,
                      int64_t scale_numel, const int64_t *zp, int64_t lo, int64_t hi, int64_t *y)
{
    int64_t n = numel(rank, shape);
    for (int64_t e = 0; e < n; e++) {
        int64_t p = ref_quant_param_index(rank, shape, axis, block, scale_numel, e);
        float q = x[e] / scale[p]; /* float32 / float32 -> float32 */
        double r = ref_quant_round_half_even((double)q) + (double)(zp ? zp[p] : 0);
        y[e] = ref_quant_saturate(r, lo, hi);
    }
}

void ref_dequantize_f32(const int64_t *x, int rank, const int64_t *shape, int axis, int64_t block, const float *scale,
                        int64_t scale_numel, const int64_t *zp, float *y)
{
    int64_t n = numel(rank, shape);
    for (int64_t e = 0; e < n; e++) {
        int64_t p = ref_quant_param_index(rank, shape, axis, block, scale_numel, e);
        float d = (float)x[e] - (float)(zp ? zp[p] : 0);
        y[e] = d * scale[p];
    }
}

void ref_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    float s = (hi - lo) / 255.0f;
    float z = (float)ref_quant_saturate(ref_quant_round_half_even((double)(0.0f - lo / s)), 0, 255);
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)ref_quant_saturate(ref_quant_round_half_even((double)(x[i] / s)) + z, 0, 255);
    *scale = s;
    *zp = (uint8_t)z;
}

void ref_qlinear_matmul(const int64_t *a, const int64_t *b, int64_t batch, int64_t m, int64_t k, int64_t n,
                        const float *a_scale, const int64_t *a_zp, bool a_per_row, const float *b_scale,
                        const int64_t *b_zp, bool b_per_col, float y_scale, int64_t y_zp, int64_t lo, int64_t hi,
                        int64_t *y)
{
    for (int64_t t = 0; t < batch; t++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t ra = a_per_row ? i : 0, cb = b_per_col ? j : 0;
                int64_t acc = 0;
                for (int64_t p = 0; p < k; p++)
                    acc += (a[(t * m + i) * k + p] - a_zp[ra]) * (b[p * n + j] - b_zp[cb]);
                float mult = a_scale[ra] * b_scale[cb] / y_scale;
                double r = ref_quant_round_half_even((double)acc * (double)mult + (double)y_zp);
                y[(t * m + i) * n + j] = ref_quant_saturate(r, lo, hi);
            }
}

void ref_qconv2d_out_size(const ref_qconv2d *p, int64_t *oh, int64_t *ow)
{
    int64_t ekh = (p->kh - 1) * p->dilations[0] + 1, ekw = (p->kw - 1) * p->dilations[1] + 1;
    *oh = (p->h + p->pads[0] + p->pads[2] - ekh) / p->strides[0] + 1;
    *ow = (p->w + p->pads[1] + p->pads[3] - ekw) / p->strides[1] + 1;
}

void ref_qlinear_conv2d(const ref_qconv2d *p, const int64_t *x, float x_scale, int64_t x_zp, const int64_t *w,
                        const float *w_scale, const int64_t *w_zp, bool w_per_channel, float y_scale, int64_t y_zp,
                        const int64_t *bias, int64_t lo, int64_t hi, int64_t *y)
{
    int64_t oh, ow, cg = p->c / p->group, mg = p->m / p->group;
    ref_qconv2d_out_size(p, &oh, &ow);
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oc = 0; oc < p->m; oc++) {
            int64_t g = oc / mg, wc = w_per_channel ? oc : 0;
            float mult = x_scale * w_scale[wc] / y_scale;
            for (int64_t r = 0; r < oh; r++)
                for (int64_t s = 0; s < ow; s++) {
                    int64_t acc = bias ? bias[oc] : 0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t u = 0; u < p->kh; u++)
                            for (int64_t v = 0; v < p->kw; v++) {
                                int64_t ih = r * p->strides[0] - p->pads[0] + u * p->dilations[0];
                                int64_t iw = s * p->strides[1] - p->pads[1] + v * p->dilations[1];
                                /* padded positions hold the zero point, i.e. contribute nothing */
                                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                                int64_t xv = x[((b * p->c + g * cg + ci) * p->h + ih) * p->w + iw] - x_zp;
                                int64_t wv = w[((oc * cg + ci) * p->kh + u) * p->kw + v] - w_zp[wc];
                                acc += xv * wv;
                            }
                    double q = ref_quant_round_half_even((double)acc * (double)mult + (double)y_zp);
                    y[((b * p->m + oc) * oh + r) * ow + s] = ref_quant_saturate(q, lo, hi);
                }
        }
}
