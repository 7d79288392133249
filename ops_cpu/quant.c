/* CPU kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv (see
 * engine/opdef/quant.c). Arithmetic follows onnx.reference: x / scale rounded to the type numpy would compute
 * it in, then round half to even and saturate; integer products accumulate exactly in int64. */
#include <math.h>
#include <string.h>

#include "engine/opdef/quant.h"
#include "engine/registry.h"

/* numpy's result type of an arithmetic op between two float types (int32 with a float: float64, like numpy's true
   division; float8e8m0 scales count as a small float) */
static mrt_dtype promote(mrt_dtype a, mrt_dtype b)
{
    if (a == MRT_DTYPE_DOUBLE || b == MRT_DTYPE_DOUBLE) return MRT_DTYPE_DOUBLE;
    if (a == MRT_DTYPE_INT32 || b == MRT_DTYPE_INT32) return MRT_DTYPE_DOUBLE;
    if (a == b) return a;
    return MRT_DTYPE_FLOAT; /* float16 with bfloat16 or float32 */
}

static bool int_range(mrt_dtype dt, double *lo, double *hi)
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

static double float8_max(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT8E4M3FN ? 448 : dt == MRT_DTYPE_FLOAT8E4M3FNUZ ? 240 : 57344;
}

static mrt_status mrt_cpu_quantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool saturate = mrt_attr_int(ctx, "saturate", 1) != 0;
    int64_t precision = ctx->opset >= 23 ? mrt_attr_int(ctx, "precision", 0) : 0;
    mrt_dtype div_dt = precision ? (mrt_dtype)precision : promote(x->dtype, s->dtype);
    double lo, hi;
    bool integer = int_range(y->dtype, &lo, &hi);
    bool f8 = !integer && y->dtype != MRT_DTYPE_FLOAT4E2M1;
    for (int64_t o = 0, e = 0; o < q.outer; o++)
        for (int64_t a = 0; a < q.len; a++)
            for (int64_t i = 0; i < q.inner; i++, e++) {
                int64_t p = mrt_quant_param_index(&q, o, a, i);
                double v = mrt_round_to(div_dt, mrt_round_to(div_dt, mrt_load_f64(x->dtype, x->data, e)) /
                                                mrt_round_to(div_dt, mrt_load_f64(s->dtype, s->data, p)));
                double zp = z ? mrt_load_f64(z->dtype, z->data, p) : 0;
                if (integer) {
                    double r = nearbyint(v) + zp; /* the FE_TONEAREST mode: half to even */
                    r = r != r ? 0 : r < lo ? lo : r > hi ? hi : r;
                    mrt_store_i64(y->dtype, y->data, e, (int64_t)r);
                } else if (f8) {
                    double m = float8_max(y->dtype);
                    if (saturate && fabs(v) > m) v = v < 0 ? -m : m;
                    else if (!saturate && fabs(v) > m && v == v)
                        v = y->dtype == MRT_DTYPE_FLOAT8E5M2 ? (v < 0 ? -INFINITY : INFINITY) : NAN;
                    mrt_store_f64(y->dtype, y->data, e, v);
                } else { /* float4e2m1: the zero point is added, then the (saturating) conversion */
                    mrt_store_f64(y->dtype, y->data, e, v + zp);
                }
            }
    return MRT_STATUS_OK;
}

static bool is_minifloat(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT8E4M3FN || dt == MRT_DTYPE_FLOAT8E4M3FNUZ || dt == MRT_DTYPE_FLOAT8E5M2 ||
           dt == MRT_DTYPE_FLOAT8E5M2FNUZ || dt == MRT_DTYPE_FLOAT4E2M1;
}

static mrt_status mrt_cpu_dequantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool use_zp = z && !is_minifloat(x->dtype); /* float8/float4 zero points must be 0 and are ignored */
    /* numpy: float32(x) - zero point, times the scale (promoted with float32), then cast to the output type */
    mrt_dtype mul_dt = promote(MRT_DTYPE_FLOAT, s->dtype);
    for (int64_t o = 0, e = 0; o < q.outer; o++)
        for (int64_t a = 0; a < q.len; a++)
            for (int64_t i = 0; i < q.inner; i++, e++) {
                int64_t p = mrt_quant_param_index(&q, o, a, i);
                double dx = mrt_round_to(MRT_DTYPE_FLOAT, mrt_load_f64(x->dtype, x->data, e));
                if (use_zp) dx -= mrt_load_f64(z->dtype, z->data, p);
                double v = mrt_round_to(mul_dt, dx * mrt_load_f64(s->dtype, s->data, p));
                mrt_store_f64(y->dtype, y->data, e, v);
            }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_dynamic_quantize(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0), *ys = mrt_output(ctx, 1), *yz = mrt_output(ctx, 2);
    const float *xv = x->data;
    int64_t n = mrt_tensor_numel(x);
    float mx = 0, mn = 0; /* the range always includes 0 */
    for (int64_t i = 0; i < n; i++) {
        mx = xv[i] > mx ? xv[i] : mx;
        mn = xv[i] < mn ? xv[i] : mn;
    }
    float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zp0 = 0.0f - mn / scale;
    float zp = nearbyintf(zp0 < 0 ? 0 : zp0 > 255 ? 255 : zp0);
    for (int64_t i = 0; i < n; i++) {
        float r = nearbyintf(xv[i] / scale) + zp;
        ((uint8_t *)y->data)[i] = (uint8_t)(r != r ? 0 : r < 0 ? 0 : r > 255 ? 255 : r);
    }
    if (ys) *(float *)ys->data = scale;
    if (yz) *(uint8_t *)yz->data = (uint8_t)zp;
    return MRT_STATUS_OK;
}

/* requantize an exact int32-range accumulator: acc * multiplier + zero point, half to even, saturated */
static int64_t requantize(double acc, double mult, double zp, mrt_dtype dt)
{
    double lo, hi;
    int_range(dt, &lo, &hi);
    double r = nearbyint(acc * mult + zp);
    return (int64_t)(r != r ? 0 : r < lo ? lo : r > hi ? hi : r);
}

static mrt_status mrt_cpu_qlinear_matmul(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *as = mrt_input(ctx, 1), *az = mrt_input(ctx, 2);
    const mrt_tensor *b = mrt_input(ctx, 3), *bs = mrt_input(ctx, 4), *bz = mrt_input(ctx, 5);
    const mrt_tensor *ys = mrt_input(ctx, 6), *yz = mrt_input(ctx, 7);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    /* numpy: (a_scale * b_scale / y_scale) in the scales' type; a's parameters per row or per tensor, b's per
       column or per tensor (the opdef checked the counts) */
    mrt_dtype st = promote(promote(as->dtype, bs->dtype), ys->dtype);
    bool as_v = mrt_tensor_numel(as) > 1, az_v = mrt_tensor_numel(az) > 1;
    bool bs_v = mrt_tensor_numel(bs) > 1, bz_v = mrt_tensor_numel(bz) > 1;
    double ysv = mrt_load_f64(ys->dtype, ys->data, 0);
    double yzp = (double)mrt_load_i64(yz->dtype, yz->data, 0);
    int64_t nb = 1;
    for (int i = 0; i < d.batch_rank; i++) nb *= d.batch[i];
    for (int64_t bi = 0; bi < nb; bi++) {
        /* batch index -> A's and B's batch offsets (size-1 dims broadcast) */
        int64_t ia = 0, ib = 0, rem = bi, sa = 1, sb = 1;
        for (int i = d.batch_rank - 1; i >= 0; i--) {
            int64_t c = rem % d.batch[i];
            rem /= d.batch[i];
            ia += (d.a_batch[i] == 1 ? 0 : c) * sa;
            ib += (d.b_batch[i] == 1 ? 0 : c) * sb;
            sa *= d.a_batch[i];
            sb *= d.b_batch[i];
        }
        for (int64_t i = 0; i < d.m; i++)
            for (int64_t j = 0; j < d.n; j++) {
                int64_t azp = mrt_load_i64(az->dtype, az->data, az_v ? i : 0);
                int64_t bzp = mrt_load_i64(bz->dtype, bz->data, bz_v ? j : 0);
                double mult = mrt_round_to(st, mrt_round_to(st, mrt_load_f64(as->dtype, as->data, as_v ? i : 0) *
                                                            mrt_load_f64(bs->dtype, bs->data, bs_v ? j : 0)) / ysv);
                int64_t acc = 0;
                for (int64_t p = 0; p < d.k; p++)
                    acc += (mrt_load_i64(a->dtype, a->data, (ia * d.m + i) * d.k + p) - azp) *
                           (mrt_load_i64(b->dtype, b->data, (ib * d.k + p) * d.n + j) - bzp);
                mrt_store_i64(y->dtype, y->data, (bi * d.m + i) * d.n + j, requantize((double)acc, mult, yzp, y->dtype));
            }
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_qlinear_conv(mrt_op_ctx *ctx)
{
    mrt_window win;
    int64_t group;
    MRT_TRY(mrt_qlinear_conv_window(ctx, &win, &group));
    const mrt_tensor *x = mrt_input(ctx, 0), *xs = mrt_input(ctx, 1), *xz = mrt_input(ctx, 2);
    const mrt_tensor *w = mrt_input(ctx, 3), *ws = mrt_input(ctx, 4), *wz = mrt_input(ctx, 5);
    const mrt_tensor *ys = mrt_input(ctx, 6), *yz = mrt_input(ctx, 7), *bias = ctx->n_inputs > 8 ? mrt_input(ctx, 8) : NULL;
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = x->shape[0], c = x->shape[1], m = w->shape[0], cg = c / group, mg = m / group;
    int64_t in_sp = 1, out_sp = 1, k_sp = 1;
    for (int i = 0; i < win.nsp; i++) in_sp *= win.in[i], out_sp *= win.out[i], k_sp *= win.kernel[i];
    int64_t xzp = xz ? mrt_load_i64(xz->dtype, xz->data, 0) : 0;
    double yzp = yz ? (double)mrt_load_i64(yz->dtype, yz->data, 0) : 0;
    mrt_dtype st = promote(promote(xs->dtype, ws->dtype), ys->dtype);
    int64_t pos[MRT_MAX_RANK], tap[MRT_MAX_RANK];
    for (int64_t b = 0; b < n; b++)
        for (int64_t oc = 0; oc < m; oc++) {
            int64_t g = oc / mg, wp = mrt_tensor_numel(ws) == 1 ? 0 : oc;
            int64_t wzp = wz ? mrt_load_i64(wz->dtype, wz->data, mrt_tensor_numel(wz) == 1 ? 0 : oc) : 0;
            double mult = mrt_round_to(st, mrt_round_to(st, mrt_load_f64(xs->dtype, xs->data, 0) * mrt_load_f64(ws->dtype, ws->data, wp)) /
                                           mrt_load_f64(ys->dtype, ys->data, 0));
            for (int64_t o = 0; o < out_sp; o++) {
                int64_t rem = o;
                for (int i = win.nsp - 1; i >= 0; i--) {
                    pos[i] = rem % win.out[i];
                    rem /= win.out[i];
                }
                int64_t acc = bias ? mrt_load_i64(bias->dtype, bias->data, oc) : 0;
                for (int64_t ci = 0; ci < cg; ci++)
                    for (int64_t t = 0; t < k_sp; t++) {
                        int64_t trem = t, xoff = 0;
                        bool inside = true;
                        for (int i = win.nsp - 1; i >= 0; i--) {
                            tap[i] = trem % win.kernel[i];
                            trem /= win.kernel[i];
                        }
                        for (int i = 0; i < win.nsp && inside; i++) {
                            int64_t at = pos[i] * win.stride[i] - win.pad_begin[i] + tap[i] * win.dilation[i];
                            inside = at >= 0 && at < win.in[i];
                            xoff = xoff * win.in[i] + at;
                        }
                        if (!inside) continue; /* padding is the zero point: contributes 0 after subtraction */
                        int64_t xv = mrt_load_i64(x->dtype, x->data, (b * c + g * cg + ci) * in_sp + xoff) - xzp;
                        int64_t wv = mrt_load_i64(w->dtype, w->data, (oc * cg + ci) * k_sp + t) - wzp;
                        acc += xv * wv;
                    }
                mrt_store_i64(y->dtype, y->data, (b * m + oc) * out_sp + o, requantize((double)acc, mult, yzp, y->dtype));
            }
        }
    return MRT_STATUS_OK;
}

#define QDQ_ROWS(op, fn)                                                                                          \
    {"", op, 10, fn, NULL}, {"", op, 13, fn, NULL}, {"", op, 19, fn, NULL}, {"", op, 21, fn, NULL},               \
        {"", op, 23, fn, NULL}, {"", op, 24, fn, NULL}, {"", op, 25, fn, NULL}

const mrt_kernel mrt_cpu_kernels_quant[] = {
    QDQ_ROWS("QuantizeLinear", mrt_cpu_quantize),
    QDQ_ROWS("DequantizeLinear", mrt_cpu_dequantize),
    {"", "DynamicQuantizeLinear", 11, mrt_cpu_dynamic_quantize, NULL},
    {"", "QLinearMatMul", 10, mrt_cpu_qlinear_matmul, NULL},
    {"", "QLinearMatMul", 21, mrt_cpu_qlinear_matmul, NULL},
    {"", "QLinearConv", 10, mrt_cpu_qlinear_conv, NULL},
    {0},
};
