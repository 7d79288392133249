/* Quantization parameter layout shared by the opdefs and the CPU kernels of QuantizeLinear/DequantizeLinear:
 * a scale (and zero point) per tensor, per axis, or per block of `block_size` along the axis. The kernels'
 * arithmetic too, one definition for ops_cpu/quant.c and ops_cuda/quant.cu (engine/host_device.h). */
#pragma once

#include <math.h>

#include "engine/host_device.h"
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
static inline MRT_HD int64_t mrt_quant_param_index(const mrt_quant_layout *q, int64_t o, int64_t a, int64_t i)
{
    if (q->per_tensor) return 0;
    if (!q->block) return a;
    int64_t nb = (q->len + q->block - 1) / q->block;
    return (o * nb + a / q->block) * q->inner + i;
}

/* numpy's result type of an arithmetic op between two float types (int32 with a float: float64, like numpy's true
   division; float8e8m0 scales count as a small float) */
static inline MRT_HD mrt_dtype mrt_quant_promote(mrt_dtype a, mrt_dtype b)
{
    if (a == MRT_DTYPE_DOUBLE || b == MRT_DTYPE_DOUBLE) return MRT_DTYPE_DOUBLE;
    if (a == MRT_DTYPE_INT32 || b == MRT_DTYPE_INT32) return MRT_DTYPE_DOUBLE;
    if (a == b) return a;
    return MRT_DTYPE_FLOAT; /* float16 with bfloat16 or float32 */
}

/* An integer type's range [lo, hi]; false for another type. */
static inline MRT_HD bool mrt_quant_int_range(mrt_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: *lo = 0, *hi = 255; return true;
    case MRT_DTYPE_INT8: *lo = -128, *hi = 127; return true;
    case MRT_DTYPE_UINT16: *lo = 0, *hi = 65535; return true;
    case MRT_DTYPE_INT16: *lo = -32768, *hi = 32767; return true;
    case MRT_DTYPE_UINT4: *lo = 0, *hi = 15; return true;
    case MRT_DTYPE_INT4: *lo = -8, *hi = 7; return true;
    case MRT_DTYPE_UINT2: *lo = 0, *hi = 3; return true;
    case MRT_DTYPE_INT2: *lo = -2, *hi = 1; return true;
    case MRT_DTYPE_INT32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    default: return false;
    }
}

static inline MRT_HD bool mrt_quant_is_minifloat(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT8E4M3FN || dt == MRT_DTYPE_FLOAT8E4M3FNUZ || dt == MRT_DTYPE_FLOAT8E5M2 ||
           dt == MRT_DTYPE_FLOAT8E5M2FNUZ || dt == MRT_DTYPE_FLOAT4E2M1;
}

/* QuantizeLinear to an integer type of range [lo, hi]: x / scale (v) rounded half to even, plus the zero point,
   saturated (NaN: 0). */
static inline MRT_HD double mrt_quantize_int(double v, double zp, double lo, double hi)
{
    double r = nearbyint(v) + zp; /* the FE_TONEAREST mode: half to even */
    return r != r ? 0 : r < lo ? lo : r > hi ? hi : r;
}

/* QuantizeLinear to a float8 type: x / scale (v) saturated to the type's largest finite value, or past it made
   infinite (e5m2) or NaN (the others) without saturate. */
static inline MRT_HD double mrt_quantize_float8(double v, mrt_dtype dt, bool saturate)
{
    double m = dt == MRT_DTYPE_FLOAT8E4M3FN ? 448 : dt == MRT_DTYPE_FLOAT8E4M3FNUZ ? 240 : 57344;
    if (saturate && fabs(v) > m) v = v < 0 ? -m : m;
    else if (!saturate && fabs(v) > m && v == v) v = dt == MRT_DTYPE_FLOAT8E5M2 ? (v < 0 ? -INFINITY : INFINITY) : NAN;
    return v;
}

/* Requantize an exact int32-range accumulator to integer type dt: acc * multiplier + zero point, half to even,
   saturated. */
static inline MRT_HD int64_t mrt_quant_requantize(double acc, double mult, double zp, mrt_dtype dt)
{
    double lo = 0, hi = 0;
    mrt_quant_int_range(dt, &lo, &hi);
    double r = nearbyint(mrt_mul_rn(acc, mult) + zp);
    return (int64_t)(r != r ? 0 : r < lo ? lo : r > hi ? hi : r);
}

/* DynamicQuantizeLinear's uint8 scale and zero point for the range [mn, mx] of x (which includes 0). */
static inline MRT_HD void mrt_dyn_quant_params(float mx, float mn, float *scale, float *zp)
{
    *scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zp0 = 0.0f - mn / *scale;
    *zp = nearbyintf(zp0 < 0 ? 0 : zp0 > 255 ? 255 : zp0);
}

/* DynamicQuantizeLinear's value for x. */
static inline MRT_HD uint8_t mrt_dyn_quantize(float x, float scale, float zp)
{
    float r = nearbyintf(x / scale) + zp;
    return (uint8_t)(r != r ? 0 : r < 0 ? 0 : r > 255 ? 255 : r);
}

/* QLinearMatMul: batch index bi's offsets (in matrices) into A (*ia) and B (*ib), size-1 dims broadcast. */
static inline MRT_HD void mrt_qlinear_batch_offsets(const mrt_matmul_dims *d, int64_t bi, int64_t *ia, int64_t *ib)
{
    int64_t rem = bi, sa = 1, sb = 1;
    *ia = 0, *ib = 0;
    for (int i = d->batch_rank - 1; i >= 0; i--) {
        int64_t c = rem % d->batch[i];
        rem /= d->batch[i];
        *ia += (d->a_batch[i] == 1 ? 0 : c) * sa;
        *ib += (d->b_batch[i] == 1 ? 0 : c) * sb;
        sa *= d->a_batch[i];
        sb *= d->b_batch[i];
    }
}

/* QLinearConv: kernel tap t of the output position pos (per spatial dim): false in the padding (the zero point, 0
   after the subtraction), else true with its offset in the input plane in *xoff. */
static inline MRT_HD bool mrt_qconv_tap(const mrt_window *win, const int64_t *pos, int64_t t, int64_t *xoff)
{
    int64_t trem = t, tap[MRT_MAX_RANK];
    bool inside = true;
    *xoff = 0;
    for (int i = win->nsp - 1; i >= 0; i--) {
        tap[i] = trem % win->kernel[i];
        trem /= win->kernel[i];
    }
    for (int i = 0; i < win->nsp && inside; i++) {
        int64_t at = pos[i] * win->stride[i] - win->pad_begin[i] + tap[i] * win->dilation[i];
        inside = at >= 0 && at < win->in[i];
        *xoff = *xoff * win->in[i] + at;
    }
    return inside;
}

/* QLinearConv: validates x (0), w (3), the scales, zero points and B (8); the window of x for w's kernel. */
mrt_status mrt_qlinear_conv_window(const mrt_op_ctx *ctx, mrt_window *win, int64_t *group);

#ifdef __cplusplus
}
#endif
