/* Quantization ops against references written here from the ONNX spec: quantize = round-half-even(x / scale)
 * + zero point, saturated (the division in float32, as numpy does for float32 operands); dequantize =
 * (x - zero point) * scale; QLinearMatMul/QLinearConv = exact integer accumulation, then requantization.
 * Integer outputs must match exactly. Random data, printed seeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static int64_t sat(double v, double lo, double hi) { return (int64_t)(v < lo ? lo : v > hi ? hi : v); }

static mrt_tensor ints(mrt_dtype dt, int rank, const int64_t *shape, th_rng *r, int64_t lo, int64_t hi)
{
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, dt, rank, shape), MRT_STATUS_OK);
    for (int64_t i = 0; i < mrt_tensor_numel(&t); i++) mrt_store_i64(dt, t.data, i, th_rng_int(r, lo, hi));
    return t;
}

/* x [3, 4, 2]: per-axis (axis 1) int8 with zero points, and blocked (axis 1, block 3 -> 2 blocks) uint8 */
Test(quant, quantize_per_axis_and_blocked)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.quantize"));
    int64_t xs[3] = {3, 4, 2};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, xs, -3, 3);
    /* per axis */
    mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, 0.01, 0.05);
    mrt_tensor z = ints(MRT_DTYPE_INT8, 1, (int64_t[]){4}, &r, -10, 10);
    th_case *c = th_begin("QuantizeLinear", "", 21);
    th_input(c, &x);
    th_input(c, &s);
    th_input(c, &z);
    th_attr_int(c, "axis", 1);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, MRT_DTYPE_INT8);
    for (int64_t i = 0; i < 24; i++) {
        int64_t a = i / 2 % 4;
        float q = ((float *)x.data)[i] / ((float *)s.data)[a];
        int64_t want = sat(nearbyint((double)q) + ((int8_t *)z.data)[a], -128, 127);
        cr_assert_eq(((int8_t *)y.data)[i], want, "per-axis element %lld: got %d, expected %lld", (long long)i,
                     ((int8_t *)y.data)[i], (long long)want);
    }
    mrt_tensor_release(&y);
    th_free(c);
    /* blocked: scale [3, 2, 2], rows 0-2 of axis 1 use block 0, row 3 block 1 */
    mrt_tensor sb = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){3, 2, 2}, 0.01, 0.05);
    mrt_tensor zb = ints(MRT_DTYPE_UINT8, 3, (int64_t[]){3, 2, 2}, &r, 100, 150);
    c = th_begin("QuantizeLinear", "", 21);
    th_input(c, &x);
    th_input(c, &sb);
    th_input(c, &zb);
    th_attr_int(c, "axis", 1);
    th_attr_int(c, "block_size", 3);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int64_t i = 0; i < 24; i++) {
        int64_t o = i / 8, a = i / 2 % 4, in = i % 2, p = (o * 2 + a / 3) * 2 + in;
        float q = ((float *)x.data)[i] / ((float *)sb.data)[p];
        int64_t want = sat(nearbyint((double)q) + ((uint8_t *)zb.data)[p], 0, 255);
        cr_assert_eq(((uint8_t *)y.data)[i], want, "blocked element %lld", (long long)i);
    }
    mrt_tensor_release(&y);
    th_free(c);
    /* int4 output (output_dtype, no zero point), saturating at [-8, 7] */
    mrt_tensor s1 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.25});
    c = th_begin("QuantizeLinear", "", 21);
    th_input(c, &x);
    th_input(c, &s1);
    th_attr_int(c, "output_dtype", MRT_DTYPE_INT4);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, MRT_DTYPE_INT4);
    for (int64_t i = 0; i < 24; i++) {
        int64_t want = sat(nearbyint((double)(((float *)x.data)[i] / 0.25f)), -8, 7);
        cr_assert_eq(mrt_load_i64(MRT_DTYPE_INT4, y.data, i), want, "int4 element %lld", (long long)i);
    }
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor *all[] = {&x, &s, &z, &sb, &zb, &s1};
    for (int i = 0; i < 6; i++) mrt_tensor_release(all[i]);
}

Test(quant, dequantize_blocked_and_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.dequantize"));
    mrt_tensor x = ints(MRT_DTYPE_INT8, 2, (int64_t[]){5, 4}, &r, -128, 127);
    mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 4}, 0.001, 0.1); /* blocks of 2 along axis 0 */
    mrt_tensor z = ints(MRT_DTYPE_INT8, 2, (int64_t[]){3, 4}, &r, -5, 5);
    th_case *c = th_begin("DequantizeLinear", "", 21);
    th_input(c, &x);
    th_input(c, &s);
    th_input(c, &z);
    th_attr_int(c, "axis", 0);
    th_attr_int(c, "block_size", 2);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int64_t i = 0; i < 20; i++) {
        int64_t p = (i / 4 / 2) * 4 + i % 4;
        float want = (float)(((int8_t *)x.data)[i] - ((int8_t *)z.data)[p]) * ((float *)s.data)[p];
        cr_assert_eq(((float *)y.data)[i], want, "element %lld: got %g, expected %g", (long long)i, ((float *)y.data)[i], want);
    }
    mrt_tensor_release(&y);
    th_free(c);
    /* a scale that fits neither per-axis nor blocked */
    mrt_tensor bad = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, 0.01, 0.1);
    c = th_begin("DequantizeLinear", "", 21);
    th_input(c, &x);
    th_input(c, &bad);
    th_attr_int(c, "axis", 1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "must be a scalar or a vector of 4"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&bad);
    mrt_tensor_release(&x);
    mrt_tensor_release(&s);
    mrt_tensor_release(&z);
}

Test(quant, dynamic_quantize_linear)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.dynamic"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){17}, -2, 5);
    th_case *c = th_begin("DynamicQuantizeLinear", "", 11);
    th_input(c, &x);
    mrt_tensor out[3] = {{0}};
    cr_assert_eq(th_run(c, 3, out), MRT_STATUS_OK, "%s", mrt_last_error());
    float mx = 0, mn = 0;
    for (int i = 0; i < 17; i++) {
        float v = ((float *)x.data)[i];
        mx = v > mx ? v : mx;
        mn = v < mn ? v : mn;
    }
    float scale = (mx - mn) / 255.0f, zp = (float)sat(nearbyint((double)(0.0f - mn / scale)), 0, 255);
    cr_assert_eq(*(float *)out[1].data, scale);
    cr_assert_eq(*(uint8_t *)out[2].data, (uint8_t)zp);
    for (int i = 0; i < 17; i++) {
        int64_t want = sat(nearbyint((double)(((float *)x.data)[i] / scale)) + zp, 0, 255);
        cr_assert_eq(((uint8_t *)out[0].data)[i], want, "element %d", i);
    }
    for (int i = 0; i < 3; i++) mrt_tensor_release(&out[i]);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(quant, qlinear_matmul_and_conv)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.qlinear"));
    /* QLinearMatMul [2, 3, 5] x [5, 4], int8 */
    mrt_tensor a = ints(MRT_DTYPE_INT8, 3, (int64_t[]){2, 3, 5}, &r, -128, 127);
    mrt_tensor b = ints(MRT_DTYPE_INT8, 2, (int64_t[]){5, 4}, &r, -128, 127);
    mrt_tensor as = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.02}), bs = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.03});
    mrt_tensor ys = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.5});
    mrt_tensor az = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3), bz = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3);
    mrt_tensor yz = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3);
    th_case *c = th_begin("QLinearMatMul", "", 21);
    const mrt_tensor *in[8] = {&a, &as, &az, &b, &bs, &bz, &ys, &yz};
    for (int i = 0; i < 8; i++) th_input(c, in[i]);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    float mult = 0.02f * 0.03f / 0.5f;
    for (int bt = 0; bt < 2; bt++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) {
                int64_t acc = 0;
                for (int p = 0; p < 5; p++)
                    acc += (int64_t)(((int8_t *)a.data)[(bt * 3 + i) * 5 + p] - *(int8_t *)az.data) *
                           (((int8_t *)b.data)[p * 4 + j] - *(int8_t *)bz.data);
                int64_t want = sat(nearbyint((double)acc * (double)mult + *(int8_t *)yz.data), -128, 127);
                cr_assert_eq(((int8_t *)y.data)[(bt * 3 + i) * 4 + j], want, "matmul (%d,%d,%d)", bt, i, j);
            }
    mrt_tensor_release(&y);
    th_free(c);
    /* QLinearConv uint8 [1, 2, 5, 5] * [3, 2, 3, 3], pads 1, per-channel w_scale, int32 bias */
    mrt_tensor x = ints(MRT_DTYPE_UINT8, 4, (int64_t[]){1, 2, 5, 5}, &r, 0, 255);
    mrt_tensor w = ints(MRT_DTYPE_UINT8, 4, (int64_t[]){3, 2, 3, 3}, &r, 0, 255);
    mrt_tensor xz = ints(MRT_DTYPE_UINT8, 0, NULL, &r, 100, 130), wz = ints(MRT_DTYPE_UINT8, 0, NULL, &r, 100, 130);
    mrt_tensor yz8 = ints(MRT_DTYPE_UINT8, 0, NULL, &r, 100, 130);
    mrt_tensor xs = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.01});
    mrt_tensor wsc = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, (double[]){0.002, 0.003, 0.004});
    mrt_tensor ysc = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.3});
    mrt_tensor bias = ints(MRT_DTYPE_INT32, 1, (int64_t[]){3}, &r, -1000, 1000);
    c = th_begin("QLinearConv", "", 10);
    const mrt_tensor *cin[9] = {&x, &xs, &xz, &w, &wsc, &wz, &ysc, &yz8, &bias};
    for (int i = 0; i < 9; i++) th_input(c, cin[i]);
    th_attr_ints(c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.shape[2], 5);
    for (int m = 0; m < 3; m++)
        for (int oh = 0; oh < 5; oh++)
            for (int ow = 0; ow < 5; ow++) {
                int64_t acc = ((int32_t *)bias.data)[m];
                for (int ci = 0; ci < 2; ci++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int h = oh - 1 + kh, wc = ow - 1 + kw;
                            if (h < 0 || h >= 5 || wc < 0 || wc >= 5) continue;
                            acc += (int64_t)(((uint8_t *)x.data)[(ci * 5 + h) * 5 + wc] - *(uint8_t *)xz.data) *
                                   (((uint8_t *)w.data)[((m * 2 + ci) * 3 + kh) * 3 + kw] - *(uint8_t *)wz.data);
                        }
                float mlt = 0.01f * ((float *)wsc.data)[m] / 0.3f;
                int64_t want = sat(nearbyint((double)acc * (double)mlt + *(uint8_t *)yz8.data), 0, 255);
                cr_assert_eq(((uint8_t *)y.data)[(m * 5 + oh) * 5 + ow], want, "conv (%d,%d,%d)", m, oh, ow);
            }
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor *all[] = {&a, &b, &as, &bs, &ys, &az, &bz, &yz, &x, &w, &xz, &wz, &yz8, &xs, &wsc, &ysc, &bias};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}
