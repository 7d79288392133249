/* CPU kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv (see
 * engine/opdef/quant.c). Arithmetic follows onnx.reference: x / scale rounded to the type numpy would compute
 * it in, then round half to even and saturate; integer products accumulate exactly in int64. */
#include <math.h>
#include <string.h>

#include "engine/opdef/quant.h"
#include "engine/registry.h"

static mrt_status mrt_cpu_quantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool saturate = mrt_attr_int(ctx, "saturate", 1) != 0;
    int64_t precision = ctx->opset >= 23 ? mrt_attr_int(ctx, "precision", 0) : 0;
    mrt_dtype div_dt = precision ? (mrt_dtype)precision : mrt_quant_promote(x->dtype, s->dtype);
    double lo, hi;
    bool integer = mrt_quant_int_range(y->dtype, &lo, &hi);
    bool f8 = !integer && y->dtype != MRT_DTYPE_FLOAT4E2M1;
    for (int64_t o = 0, e = 0; o < q.outer; o++)
        for (int64_t a = 0; a < q.len; a++)
            for (int64_t i = 0; i < q.inner; i++, e++) {
                int64_t p = mrt_quant_param_index(&q, o, a, i);
                double v = mrt_round_to(div_dt, mrt_round_to(div_dt, mrt_load_f64(x->dtype, x->data, e)) /
                                                mrt_round_to(div_dt, mrt_load_f64(s->dtype, s->data, p)));
                double zp = z ? mrt_load_f64(z->dtype, z->data, p) : 0;
                if (integer) {
                    mrt_store_i64(y->dtype, y->data, e, (int64_t)mrt_quantize_int(v, zp, lo, hi));
                } else if (f8) {
                    mrt_store_f64(y->dtype, y->data, e, mrt_quantize_float8(v, y->dtype, saturate));
                } else { /* float4e2m1: the zero point is added, then the (saturating) conversion */
                    mrt_store_f64(y->dtype, y->data, e, v + zp);
                }
            }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_dequantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool use_zp = z && !mrt_quant_is_minifloat(x->dtype); /* float8/float4 zero points must be 0 and are ignored */
    /* numpy: float32(x) - zero point, times the scale (promoted with float32), then cast to the output type */
    mrt_dtype mul_dt = mrt_quant_promote(MRT_DTYPE_FLOAT, s->dtype);
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
    float scale, zp;
    mrt_dyn_quant_params(mx, mn, &scale, &zp);
    for (int64_t i = 0; i < n; i++) ((uint8_t *)y->data)[i] = mrt_dyn_quantize(xv[i], scale, zp);
    if (ys) *(float *)ys->data = scale;
    if (yz) *(uint8_t *)yz->data = (uint8_t)zp;
    return MRT_STATUS_OK;
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
    mrt_dtype st = mrt_quant_promote(mrt_quant_promote(as->dtype, bs->dtype), ys->dtype);
    bool as_v = mrt_tensor_numel(as) > 1, az_v = mrt_tensor_numel(az) > 1;
    bool bs_v = mrt_tensor_numel(bs) > 1, bz_v = mrt_tensor_numel(bz) > 1;
    double ysv = mrt_load_f64(ys->dtype, ys->data, 0);
    double yzp = (double)mrt_load_i64(yz->dtype, yz->data, 0);
    int64_t nb = 1;
    for (int i = 0; i < d.batch_rank; i++) nb *= d.batch[i];
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t ia, ib;
        mrt_qlinear_batch_offsets(&d, bi, &ia, &ib);
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
                mrt_store_i64(y->dtype, y->data, (bi * d.m + i) * d.n + j, mrt_quant_requantize((double)acc, mult, yzp, y->dtype));
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
    mrt_dtype st = mrt_quant_promote(mrt_quant_promote(xs->dtype, ws->dtype), ys->dtype);
    int64_t pos[MRT_MAX_RANK];
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
                        int64_t xoff;
                        if (!mrt_qconv_tap(&win, pos, t, &xoff)) continue;
                        int64_t xv = mrt_load_i64(x->dtype, x->data, (b * c + g * cg + ci) * in_sp + xoff) - xzp;
                        int64_t wv = mrt_load_i64(w->dtype, w->data, (oc * cg + ci) * k_sp + t) - wzp;
                        acc += xv * wv;
                    }
                mrt_store_i64(y->dtype, y->data, (b * m + oc) * out_sp + o, mrt_quant_requantize((double)acc, mult, yzp, y->dtype));
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
