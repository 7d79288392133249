/* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul and QLinearConv against the naive
 * references of tests/ref/quant_ref.c (written from the ONNX spec). Quantized outputs must match exactly; real
 * outputs too, since the reference rounds to float32 where the spec computes in float32. Random data, printed
 * seeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/quant_ref.h"

static mrt_tensor ints(mrt_dtype dt, int rank, const int64_t *shape, th_rng *r, int64_t lo, int64_t hi)
{
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, dt, rank, shape), MRT_STATUS_OK);
    for (int64_t i = 0; i < mrt_tensor_numel(&t); i++) mrt_store_i64(dt, t.data, i, th_rng_int(r, lo, hi));
    return t;
}

static mrt_tensor from_i64(mrt_dtype dt, int rank, const int64_t *shape, const int64_t *v)
{
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, dt, rank, shape), MRT_STATUS_OK);
    for (int64_t i = 0; i < mrt_tensor_numel(&t); i++) mrt_store_i64(dt, t.data, i, v[i]);
    return t;
}

/* a tensor's values as int64 (malloc'd; at least one element so that empty tensors work) */
static int64_t *as_i64(const mrt_tensor *t)
{
    int64_t n = mrt_tensor_numel(t);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = mrt_load_i64(t->dtype, t->data, i);
    return v;
}

static void expect_ints(const mrt_tensor *got, mrt_dtype dt, const int64_t *want, int64_t n, const char *what)
{
    cr_assert_eq(got->dtype, dt, "%s: dtype %s, expected %s", what, mrt_dtype_name(got->dtype), mrt_dtype_name(dt));
    cr_assert_eq(mrt_tensor_numel(got), n, "%s: %lld elements, expected %lld", what, (long long)mrt_tensor_numel(got),
                 (long long)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t g = mrt_load_i64(dt, got->data, i);
        cr_assert_eq(g, want[i], "%s: element %lld is %lld, expected %lld", what, (long long)i, (long long)g,
                     (long long)want[i]);
    }
}

/* one QuantizeLinear run (zero point optional) */
static mrt_status run_quantize(int opset, const mrt_tensor *x, const mrt_tensor *s, const mrt_tensor *z, int64_t axis,
                               int64_t block, int64_t out_dt, mrt_tensor *y)
{
    th_case *c = th_begin("QuantizeLinear", "", opset);
    th_input(c, x);
    th_input(c, s);
    if (z) th_input(c, z);
    if (axis != INT64_MIN) th_attr_int(c, "axis", axis);
    if (block) th_attr_int(c, "block_size", block);
    if (out_dt) th_attr_int(c, "output_dtype", out_dt);
    mrt_status st = th_run(c, 1, y);
    th_free(c);
    return st;
}

static mrt_status run_dequantize(int opset, const mrt_tensor *x, const mrt_tensor *s, const mrt_tensor *z,
                                 int64_t axis, int64_t block, int64_t out_dt, mrt_tensor *y)
{
    th_case *c = th_begin("DequantizeLinear", "", opset);
    th_input(c, x);
    th_input(c, s);
    if (z) th_input(c, z);
    if (axis != INT64_MIN) th_attr_int(c, "axis", axis);
    if (block) th_attr_int(c, "block_size", block);
    if (out_dt) th_attr_int(c, "output_dtype", out_dt);
    mrt_status st = th_run(c, 1, y);
    th_free(c);
    return st;
}

#define NO_AXIS INT64_MIN

/* Per tensor (opset 10, default uint8), per axis (negative axis, int8), blocked (uint8, last block short) */
Test(quant, quantize_layouts_exact)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.quantize_layouts_exact"));
    int64_t xs[3] = {3, 5, 2};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, xs, -3, 3);
    int64_t want[30], *zv;
    mrt_tensor y = {0};

    mrt_tensor s1 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.021});
    cr_assert_eq(run_quantize(10, &x, &s1, NULL, NO_AXIS, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    ref_quantize_f32(x.data, 3, xs, 0, 0, s1.data, 1, NULL, 0, 255, want);
    expect_ints(&y, MRT_DTYPE_UINT8, want, 30, "per tensor");
    mrt_tensor_release(&y);

    mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, 0.01, 0.05);
    mrt_tensor z = ints(MRT_DTYPE_INT8, 1, (int64_t[]){5}, &r, -20, 20);
    cr_assert_eq(run_quantize(13, &x, &s, &z, -2, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    zv = as_i64(&z);
    ref_quantize_f32(x.data, 3, xs, 1, 0, s.data, 5, zv, -128, 127, want);
    expect_ints(&y, MRT_DTYPE_INT8, want, 30, "per axis");
    mrt_tensor_release(&y);
    free(zv);

    /* blocks of 2 along axis 1 (size 5): 3 blocks, the last one holding one row */
    mrt_tensor sb = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){3, 3, 2}, 0.01, 0.05);
    mrt_tensor zb = ints(MRT_DTYPE_UINT8, 3, (int64_t[]){3, 3, 2}, &r, 100, 150);
    cr_assert_eq(run_quantize(21, &x, &sb, &zb, 1, 2, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    zv = as_i64(&zb);
    ref_quantize_f32(x.data, 3, xs, 1, 2, sb.data, 18, zv, 0, 255, want);
    expect_ints(&y, MRT_DTYPE_UINT8, want, 30, "blocked");
    mrt_tensor_release(&y);
    free(zv);

    mrt_tensor *all[] = {&x, &s1, &s, &z, &sb, &zb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

/* Round half to even and saturation, with hand-computed integers */
Test(quant, quantize_rounding_and_saturation)
{
    double xv[10] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300, -300, 126.5, -127.5};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){10}, xv);
    mrt_tensor s = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0});
    mrt_tensor z8 = from_i64(MRT_DTYPE_INT8, 0, NULL, (int64_t[]){0});
    mrt_tensor y = {0};
    cr_assert_eq(run_quantize(19, &x, &s, &z8, NO_AXIS, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_ints(&y, MRT_DTYPE_INT8, (int64_t[]){0, 2, 2, -0, -2, -2, 127, -128, 126, -128}, 10, "int8 half even");
    mrt_tensor_release(&y);
    /* uint8 with zero point 10: round(x) + 10 clamped to [0, 255] */
    mrt_tensor zu = from_i64(MRT_DTYPE_UINT8, 0, NULL, (int64_t[]){10});
    cr_assert_eq(run_quantize(19, &x, &s, &zu, NO_AXIS, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_ints(&y, MRT_DTYPE_UINT8, (int64_t[]){10, 12, 12, 10, 8, 8, 255, 0, 136, 0}, 10, "uint8 zero point 10");
    mrt_tensor_release(&y);
    /* int16 / uint16 / int2 / uint2 ranges (output_dtype, no zero point) */
    struct { mrt_dtype dt; int64_t want[10]; } cases[] = {
        {MRT_DTYPE_INT16, {0, 2, 2, 0, -2, -2, 300, -300, 126, -128}},
        {MRT_DTYPE_UINT16, {0, 2, 2, 0, 0, 0, 300, 0, 126, 0}},
        {MRT_DTYPE_INT2, {0, 1, 1, 0, -2, -2, 1, -2, 1, -2}},
        {MRT_DTYPE_UINT2, {0, 2, 2, 0, 0, 0, 3, 0, 3, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(run_quantize(25, &x, &s, NULL, NO_AXIS, 0, cases[i].dt, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        expect_ints(&y, cases[i].dt, cases[i].want, 10, mrt_dtype_name(cases[i].dt));
        mrt_tensor_release(&y);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&s);
    mrt_tensor_release(&z8);
    mrt_tensor_release(&zu);
}

/* int4/uint4: values saturate to [-8, 7] / [0, 15] and pack two per byte, element 2i in the low nibble; an odd
   count leaves the last high nibble zero. DequantizeLinear reads the same packing back. */
Test(quant, int4_packing)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.int4_packing"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){7}, -3, 3);
    mrt_tensor s = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.25});
    int64_t want[7];
    ref_quantize_f32(x.data, 1, (int64_t[]){7}, 0, 0, s.data, 1, NULL, -8, 7, want);
    mrt_tensor y = {0};
    cr_assert_eq(run_quantize(21, &x, &s, NULL, NO_AXIS, 0, MRT_DTYPE_INT4, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_tensor_nbytes(&y), 4);
    const uint8_t *bytes = y.data;
    for (int i = 0; i < 4; i++) {
        unsigned lo = (unsigned)want[2 * i] & 0xfu, hi = 2 * i + 1 < 7 ? (unsigned)want[2 * i + 1] & 0xfu : 0;
        cr_assert_eq(bytes[i], lo | hi << 4, "int4 byte %d is 0x%02x, expected 0x%02x", i, bytes[i], lo | hi << 4);
    }
    /* back: (q - 0) * 0.25 exactly */
    mrt_tensor d = {0};
    cr_assert_eq(run_dequantize(21, &y, &s, NULL, NO_AXIS, 0, 0, &d), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 7; i++) cr_assert_eq(((float *)d.data)[i], (float)want[i] * 0.25f, "int4 dequantized %d", i);
    mrt_tensor_release(&d);
    mrt_tensor_release(&y);
    /* uint4 with a zero point of 8 */
    mrt_tensor z = from_i64(MRT_DTYPE_UINT4, 0, NULL, (int64_t[]){8});
    ref_quantize_f32(x.data, 1, (int64_t[]){7}, 0, 0, s.data, 1, (int64_t[]){8}, 0, 15, want);
    cr_assert_eq(run_quantize(21, &x, &s, &z, NO_AXIS, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    bytes = y.data;
    for (int i = 0; i < 4; i++) {
        unsigned lo = (unsigned)want[2 * i], hi = 2 * i + 1 < 7 ? (unsigned)want[2 * i + 1] : 0;
        cr_assert_eq(bytes[i], lo | hi << 4, "uint4 byte %d is 0x%02x, expected 0x%02x", i, bytes[i], lo | hi << 4);
    }
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&s);
    mrt_tensor_release(&z);
}

/* quantize -> dequantize -> quantize: the dequantized value is within half a step of x (unsaturated elements),
   and quantizing it again gives the same integers; per axis and blocked, int8 */
Test(quant, round_trips)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.round_trips"));
    int64_t xs[2] = {6, 8};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, xs, -2, 2);
    struct { int axis; int64_t block; int rank; int64_t shape[2]; } layouts[] = {
        {0, 0, 1, {6, 0}},
        {1, 0, 1, {8, 0}},
        {1, 3, 2, {6, 3}}, /* blocks of 3 along 8: 3 blocks, the last of 2 */
        {0, 4, 2, {2, 8}},
    };
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, layouts[l].rank, layouts[l].shape, 0.005, 0.02);
        mrt_tensor z = ints(MRT_DTYPE_INT8, layouts[l].rank, layouts[l].shape, &r, -30, 30);
        int64_t *zv = as_i64(&z), want[48], ns = mrt_tensor_numel(&s);
        float back[48];
        mrt_tensor q = {0}, d = {0}, q2 = {0};
        cr_assert_eq(run_quantize(21, &x, &s, &z, layouts[l].axis, layouts[l].block, 0, &q), MRT_STATUS_OK, "%s",
                     mrt_last_error());
        ref_quantize_f32(x.data, 2, xs, layouts[l].axis, layouts[l].block, s.data, ns, zv, -128, 127, want);
        expect_ints(&q, MRT_DTYPE_INT8, want, 48, "round trip: quantized");
        cr_assert_eq(run_dequantize(21, &q, &s, &z, layouts[l].axis, layouts[l].block, 0, &d), MRT_STATUS_OK, "%s",
                     mrt_last_error());
        ref_dequantize_f32(want, 2, xs, layouts[l].axis, layouts[l].block, s.data, ns, zv, back);
        for (int64_t e = 0; e < 48; e++) {
            float got = ((float *)d.data)[e], xe = ((float *)x.data)[e];
            cr_assert_eq(got, back[e], "layout %zu element %lld: dequantized %g, expected %g", l, (long long)e, got,
                         back[e]);
            int64_t p = ref_quant_param_index(2, xs, layouts[l].axis, layouts[l].block, ns, e);
            if (want[e] > -128 && want[e] < 127)
                cr_assert_leq(fabs(got - xe), ((float *)s.data)[p] * 0.5001, "layout %zu element %lld off by > step/2",
                              l, (long long)e);
        }
        cr_assert_eq(run_quantize(21, &d, &s, &z, layouts[l].axis, layouts[l].block, 0, &q2), MRT_STATUS_OK, "%s",
                     mrt_last_error());
        expect_ints(&q2, MRT_DTYPE_INT8, want, 48, "round trip: re-quantized");
        mrt_tensor *all[] = {&s, &z, &q, &d, &q2};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
        free(zv);
    }
    mrt_tensor_release(&x);
}

/* float16 and double inputs, int32 input, float8 saturation, dequantize of int32 with output_dtype float16 */
Test(quant, dtypes)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.dtypes"));
    mrt_tensor y = {0};
    /* double x and scale: division in double */
    mrt_tensor xd = th_rand(&r, MRT_DTYPE_DOUBLE, 1, (int64_t[]){40}, -5, 5);
    mrt_tensor sd = th_from_f64(MRT_DTYPE_DOUBLE, 0, NULL, (double[]){0.037});
    cr_assert_eq(run_quantize(21, &xd, &sd, NULL, NO_AXIS, 0, MRT_DTYPE_INT8, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t want[40];
    for (int i = 0; i < 40; i++)
        want[i] = ref_quant_saturate(ref_quant_round_half_even(((double *)xd.data)[i] / 0.037), -128, 127);
    expect_ints(&y, MRT_DTYPE_INT8, want, 40, "double");
    mrt_tensor_release(&y);
    /* float16 x and scale: division in float16 */
    mrt_tensor xh = th_rand(&r, MRT_DTYPE_FLOAT16, 1, (int64_t[]){40}, -5, 5);
    mrt_tensor sh = th_from_f64(MRT_DTYPE_FLOAT16, 0, NULL, (double[]){0.037});
    cr_assert_eq(run_quantize(19, &xh, &sh, NULL, NO_AXIS, 0, 0, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 40; i++) {
        float q = mrt_f16_to_f32(((mrt_f16 *)xh.data)[i]) / mrt_f16_to_f32(*(mrt_f16 *)sh.data);
        want[i] = ref_quant_saturate(ref_quant_round_half_even(mrt_f16_to_f32(mrt_f32_to_f16(q))), 0, 255);
    }
    expect_ints(&y, MRT_DTYPE_UINT8, want, 40, "float16");
    mrt_tensor_release(&y);
    /* int32 x: true division in double */
    mrt_tensor xi = ints(MRT_DTYPE_INT32, 1, (int64_t[]){40}, &r, -100000, 100000);
    mrt_tensor si = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1000});
    cr_assert_eq(run_quantize(21, &xi, &si, NULL, NO_AXIS, 0, MRT_DTYPE_INT8, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 40; i++)
        want[i] = ref_quant_saturate(ref_quant_round_half_even(((int32_t *)xi.data)[i] / 1000.0), -128, 127);
    expect_ints(&y, MRT_DTYPE_INT8, want, 40, "int32 x");
    mrt_tensor_release(&y);
    /* float8: 1000 saturates to the largest finite value, or becomes NaN (e4m3fn) / inf (e5m2) without saturate */
    mrt_tensor xf = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, (double[]){1000, -1e6, 1.0});
    mrt_tensor s1 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0});
    struct { mrt_dtype dt; int sat; double want[3]; } f8[] = {
        {MRT_DTYPE_FLOAT8E4M3FN, 1, {448, -448, 1}},
        {MRT_DTYPE_FLOAT8E4M3FN, 0, {NAN, NAN, 1}},
        {MRT_DTYPE_FLOAT8E5M2, 1, {1024, -57344, 1}},
        {MRT_DTYPE_FLOAT8E5M2, 0, {1024, -INFINITY, 1}},
    };
    for (size_t k = 0; k < sizeof f8 / sizeof f8[0]; k++) {
        th_case *c = th_begin("QuantizeLinear", "", 21);
        th_input(c, &xf);
        th_input(c, &s1);
        th_attr_int(c, "output_dtype", f8[k].dt);
        th_attr_int(c, "saturate", f8[k].sat);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        cr_assert_eq(y.dtype, f8[k].dt);
        for (int i = 0; i < 3; i++) {
            double g = mrt_load_f64(y.dtype, y.data, i);
            cr_assert(isnan(f8[k].want[i]) ? isnan(g) : g == f8[k].want[i], "%s saturate=%d element %d: %g, expected %g",
                      mrt_dtype_name(f8[k].dt), f8[k].sat, i, g, f8[k].want[i]);
        }
        mrt_tensor_release(&y);
        th_free(c);
    }
    /* DequantizeLinear-23: int32 per axis to float16 */
    mrt_tensor xq = ints(MRT_DTYPE_INT32, 2, (int64_t[]){4, 5}, &r, -5000, 5000);
    mrt_tensor sq = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, 0.001, 0.01);
    mrt_tensor zq = ints(MRT_DTYPE_INT32, 1, (int64_t[]){5}, &r, -50, 50);
    cr_assert_eq(run_dequantize(23, &xq, &sq, &zq, 1, 0, MRT_DTYPE_FLOAT16, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, MRT_DTYPE_FLOAT16);
    int64_t *xv = as_i64(&xq), *zv = as_i64(&zq);
    float back[20];
    ref_dequantize_f32(xv, 2, (int64_t[]){4, 5}, 1, 0, sq.data, 5, zv, back);
    for (int i = 0; i < 20; i++)
        cr_assert_eq(((mrt_f16 *)y.data)[i], mrt_f32_to_f16(back[i]), "int32 -> float16 element %d", i);
    mrt_tensor_release(&y);
    free(xv);
    free(zv);
    mrt_tensor *all[] = {&xd, &sd, &xh, &sh, &xi, &si, &xf, &s1, &xq, &sq, &zq};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

/* float8e8m0 (power-of-two) scales since opset 24; the precision attribute of QuantizeLinear-23 */
Test(quant, e8m0_scale_and_precision)
{
    mrt_tensor y = {0};
    mrt_tensor s = th_from_f64(MRT_DTYPE_FLOAT8E8M0, 0, NULL, (double[]){0.125});
    cr_assert_eq(mrt_load_f64(MRT_DTYPE_FLOAT8E8M0, s.data, 0), 0.125);
    mrt_tensor q = from_i64(MRT_DTYPE_INT8, 1, (int64_t[]){4}, (int64_t[]){1, -2, 3, 127});
    cr_assert_eq(run_dequantize(24, &q, &s, NULL, NO_AXIS, 0, MRT_DTYPE_FLOAT, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, MRT_DTYPE_FLOAT);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(((float *)y.data)[i], (float)mrt_load_i64(MRT_DTYPE_INT8, q.data, i) * 0.125f, "e8m0 element %d", i);
    mrt_tensor_release(&y);
    /* without output_dtype there is no float type to produce */
    cr_assert_eq(run_dequantize(24, &q, &s, NULL, NO_AXIS, 0, 0, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "output_dtype"), "%s", mrt_last_error());
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1.0, -0.3, 2.6, 100});
    cr_assert_eq(run_quantize(24, &x, &s, NULL, NO_AXIS, 0, MRT_DTYPE_INT8, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_ints(&y, MRT_DTYPE_INT8, (int64_t[]){8, -2, 21, 127}, 4, "e8m0 quantize");
    mrt_tensor_release(&y);
    /* 1000.6 / 1: 1001 in float32; in float16 1000.6 is 1000.5, which rounds (half to even) to 1000 */
    mrt_tensor xp = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1000.6});
    mrt_tensor one = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0});
    for (int k = 0; k < 2; k++) {
        th_case *c = th_begin("QuantizeLinear", "", 23);
        th_input(c, &xp);
        th_input(c, &one);
        th_attr_int(c, "output_dtype", MRT_DTYPE_INT16);
        if (k) th_attr_int(c, "precision", MRT_DTYPE_FLOAT16);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        expect_ints(&y, MRT_DTYPE_INT16, (int64_t[]){k ? 1000 : 1001}, 1, k ? "precision float16" : "float32");
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor *all[] = {&s, &q, &x, &xp, &one};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

/* empty x: empty outputs, no failure */
Test(quant, empty)
{
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, (int64_t[]){0, 3}), MRT_STATUS_OK);
    mrt_tensor s = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, (double[]){0.1, 0.2, 0.3});
    mrt_tensor y = {0}, d = {0}, dq[3] = {{0}};
    cr_assert_eq(run_quantize(21, &x, &s, NULL, 1, 0, MRT_DTYPE_INT8, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.rank, 2);
    cr_assert_eq(y.shape[0], 0);
    cr_assert_eq(run_dequantize(21, &y, &s, NULL, 1, 0, 0, &d), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_tensor_numel(&d), 0);
    th_case *c = th_begin("DynamicQuantizeLinear", "", 11);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 3, dq), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_tensor_numel(&dq[0]), 0);
    th_free(c);
    mrt_tensor *all[] = {&x, &s, &y, &d, &dq[0], &dq[1], &dq[2]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

Test(quant, dynamic_quantize_linear)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.dynamic_quantize_linear"));
    double ranges[3][2] = {{-2, 5}, {0.5, 3}, {-4, -1}}; /* mixed, all positive, all negative */
    for (int k = 0; k < 3; k++) {
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 7}, ranges[k][0], ranges[k][1]);
        th_case *c = th_begin("DynamicQuantizeLinear", "", 11);
        th_input(c, &x);
        mrt_tensor out[3] = {{0}};
        cr_assert_eq(th_run(c, 3, out), MRT_STATUS_OK, "%s", mrt_last_error());
        uint8_t want[21], zp;
        float scale;
        ref_dynamic_quantize(x.data, 21, want, &scale, &zp);
        cr_assert_eq(*(float *)out[1].data, scale, "range %d: scale %g, expected %g", k, *(float *)out[1].data, scale);
        cr_assert_eq(*(uint8_t *)out[2].data, zp, "range %d: zero point", k);
        for (int i = 0; i < 21; i++)
            cr_assert_eq(((uint8_t *)out[0].data)[i], want[i], "range %d element %d: %d, expected %d", k, i,
                         ((uint8_t *)out[0].data)[i], want[i]);
        for (int i = 0; i < 3; i++) mrt_tensor_release(&out[i]);
        th_free(c);
        mrt_tensor_release(&x);
    }
}

static mrt_status run_qmatmul(int opset, const mrt_tensor *const in[8], mrt_tensor *y)
{
    th_case *c = th_begin("QLinearMatMul", "", opset);
    for (int i = 0; i < 8; i++) th_input(c, in[i]);
    mrt_status st = th_run(c, 1, y);
    th_free(c);
    return st;
}

Test(quant, qlinear_matmul)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.qlinear_matmul"));
    /* int8 [2, 3, 5] x [5, 4], per tensor; y_scale small enough that some outputs saturate */
    mrt_tensor a = ints(MRT_DTYPE_INT8, 3, (int64_t[]){2, 3, 5}, &r, -128, 127);
    mrt_tensor b = ints(MRT_DTYPE_INT8, 2, (int64_t[]){5, 4}, &r, -128, 127);
    mrt_tensor as = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.02}), bs = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.03});
    mrt_tensor ys = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.05});
    mrt_tensor az = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3), bz = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3);
    mrt_tensor yz = ints(MRT_DTYPE_INT8, 0, NULL, &r, -3, 3);
    const mrt_tensor *in[8] = {&a, &as, &az, &b, &bs, &bz, &ys, &yz};
    mrt_tensor y = {0};
    cr_assert_eq(run_qmatmul(10, in, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t *av = as_i64(&a), *bv = as_i64(&b), *azv = as_i64(&az), *bzv = as_i64(&bz), want[24];
    ref_qlinear_matmul(av, bv, 2, 3, 5, 4, as.data, azv, false, bs.data, bzv, false, 0.05f, *(int8_t *)yz.data, -128,
                       127, want);
    expect_ints(&y, MRT_DTYPE_INT8, want, 24, "int8 matmul");
    bool saturated = false;
    for (int i = 0; i < 24; i++) saturated |= want[i] == 127 || want[i] == -128;
    cr_assert(saturated, "the case should exercise saturation");
    mrt_tensor_release(&y);
    free(av), free(bv), free(azv), free(bzv);

    /* uint8 [4, 6] x [6, 3], opset 21: a per row, b per column */
    mrt_tensor a2 = ints(MRT_DTYPE_UINT8, 2, (int64_t[]){4, 6}, &r, 0, 255);
    mrt_tensor b2 = ints(MRT_DTYPE_UINT8, 2, (int64_t[]){6, 3}, &r, 0, 255);
    mrt_tensor as2 = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, 0.01, 0.03);
    mrt_tensor az2 = ints(MRT_DTYPE_UINT8, 1, (int64_t[]){4}, &r, 120, 136);
    mrt_tensor bs2 = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, 0.01, 0.03);
    mrt_tensor bz2 = ints(MRT_DTYPE_UINT8, 1, (int64_t[]){3}, &r, 120, 136);
    mrt_tensor ys2 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.4});
    mrt_tensor yz2 = from_i64(MRT_DTYPE_UINT8, 0, NULL, (int64_t[]){128});
    const mrt_tensor *in2[8] = {&a2, &as2, &az2, &b2, &bs2, &bz2, &ys2, &yz2};
    cr_assert_eq(run_qmatmul(21, in2, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    av = as_i64(&a2), bv = as_i64(&b2), azv = as_i64(&az2), bzv = as_i64(&bz2);
    ref_qlinear_matmul(av, bv, 1, 4, 6, 3, as2.data, azv, true, bs2.data, bzv, true, 0.4f, 128, 0, 255, want);
    expect_ints(&y, MRT_DTYPE_UINT8, want, 12, "uint8 matmul per row/column");
    mrt_tensor_release(&y);
    free(av), free(bv), free(azv), free(bzv);

    /* a_scale with a count that is neither 1 nor the rows of a */
    mrt_tensor bad = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, 0.01, 0.03);
    in2[1] = &bad;
    cr_assert_eq(run_qmatmul(21, in2, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "a_scale has shape [5]"), "%s", mrt_last_error());

    mrt_tensor *all[] = {&a, &b, &as, &bs, &ys, &az, &bz, &yz, &a2, &b2, &as2, &az2, &bs2, &bz2, &ys2, &yz2, &bad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

/* One QLinearConv case: explicit pads, or auto_pad (the reference gets the pads it implies). unit: all scales 1
   and x, w within 3 of their zero points, so that every unit of the int32 accumulator shows in the output. */
static void check_qconv(th_rng *r, mrt_dtype dt, ref_qconv2d p, bool per_channel, bool with_bias, const char *auto_pad,
                        bool unit)
{
    int64_t lo = dt == MRT_DTYPE_INT8 ? -128 : 0, hi = dt == MRT_DTYPE_INT8 ? 127 : 255, mid = (lo + hi + 1) / 2;
    mrt_tensor x = ints(dt, 4, (int64_t[]){p.n, p.c, p.h, p.w}, r, unit ? mid - 3 : lo, unit ? mid + 3 : hi);
    mrt_tensor w = ints(dt, 4, (int64_t[]){p.m, p.c / p.group, p.kh, p.kw}, r, unit ? mid - 3 : lo, unit ? mid + 3 : hi);
    int64_t nw = per_channel ? p.m : 1;
    float xs_v = unit ? 1.0f : 0.01f, ys_v = unit ? 1.0f : 0.005f;
    mrt_tensor ws = th_rand(r, MRT_DTYPE_FLOAT, per_channel ? 1 : 0, (int64_t[]){p.m}, unit ? 1 : 0.001, unit ? 1 : 0.004);
    mrt_tensor wz = ints(dt, per_channel ? 1 : 0, (int64_t[]){p.m}, r, unit ? mid : mid - 10, unit ? mid : mid + 10);
    mrt_tensor xs = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){xs_v});
    mrt_tensor xz = ints(dt, 0, NULL, r, unit ? mid : mid - 10, unit ? mid : mid + 10);
    mrt_tensor ys = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){ys_v});
    mrt_tensor yz = ints(dt, 0, NULL, r, mid - 10, mid + 10);
    mrt_tensor bias = ints(MRT_DTYPE_INT32, 1, (int64_t[]){p.m}, r, unit ? -30 : -3000, unit ? 30 : 3000);
    th_case *c = th_begin("QLinearConv", "", 10);
    const mrt_tensor *in[9] = {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &bias};
    for (int i = 0; i < (with_bias ? 9 : 8); i++) th_input(c, in[i]);
    th_attr_int(c, "group", p.group);
    th_attr_ints(c, "strides", 2, p.strides);
    th_attr_ints(c, "dilations", 2, p.dilations);
    if (auto_pad) {
        th_attr_string(c, "auto_pad", auto_pad);
        /* SAME_*: out = ceil(in / stride), the total pad split with the extra one at the end (UPPER) */
        int64_t in_sz[2] = {p.h, p.w}, k[2] = {p.kh, p.kw};
        for (int d = 0; d < 2; d++) {
            int64_t out = (in_sz[d] + p.strides[d] - 1) / p.strides[d];
            int64_t total = (out - 1) * p.strides[d] + (k[d] - 1) * p.dilations[d] + 1 - in_sz[d];
            if (total < 0) total = 0;
            bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
            p.pads[d] = upper ? total / 2 : total - total / 2;
            p.pads[d + 2] = total - p.pads[d];
        }
    } else {
        th_attr_ints(c, "pads", 4, p.pads);
    }
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t oh, ow;
    ref_qconv2d_out_size(&p, &oh, &ow);
    cr_assert_eq(y.rank, 4);
    cr_assert(y.shape[0] == p.n && y.shape[1] == p.m && y.shape[2] == oh && y.shape[3] == ow,
              "output shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld, %lld]", (long long)y.shape[0],
              (long long)y.shape[1], (long long)y.shape[2], (long long)y.shape[3], (long long)p.n, (long long)p.m,
              (long long)oh, (long long)ow);
    int64_t *xv = as_i64(&x), *wv = as_i64(&w), *wzv = as_i64(&wz), *bv = as_i64(&bias);
    int64_t n_out = p.n * p.m * oh * ow;
    int64_t *want = malloc((size_t)n_out * sizeof *want);
    ref_qlinear_conv2d(&p, xv, xs_v, mrt_load_i64(dt, xz.data, 0), wv, ws.data, wzv, nw > 1, ys_v,
                       mrt_load_i64(dt, yz.data, 0), with_bias ? bv : NULL, lo, hi, want);
    expect_ints(&y, dt, want, n_out, auto_pad ? auto_pad : "explicit pads");
    free(xv), free(wv), free(wzv), free(bv), free(want);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor *all[] = {&x, &w, &ws, &wz, &xs, &xz, &ys, &yz, &bias};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

Test(quant, qlinear_conv)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.qlinear_conv"));
    /* uint8, 2 groups, strides (2, 1), dilations (1, 2), asymmetric pads, per-channel w, bias */
    check_qconv(&r, MRT_DTYPE_UINT8,
                (ref_qconv2d){.n = 2, .c = 4, .h = 7, .w = 6, .m = 6, .kh = 3, .kw = 2, .group = 2,
                              .pads = {1, 0, 2, 1}, .strides = {2, 1}, .dilations = {1, 2}},
                true, true, NULL, false);
    /* int8, one group, per-tensor w, no bias, SAME_UPPER / SAME_LOWER with stride 2 */
    ref_qconv2d p = {.n = 1, .c = 3, .h = 5, .w = 6, .m = 2, .kh = 3, .kw = 3, .group = 1,
                     .strides = {2, 2}, .dilations = {1, 1}};
    check_qconv(&r, MRT_DTYPE_INT8, p, false, false, "SAME_UPPER", false);
    check_qconv(&r, MRT_DTYPE_INT8, p, true, true, "SAME_LOWER", false);
    check_qconv(&r, MRT_DTYPE_INT8, p, true, true, "SAME_UPPER", true);
    /* depthwise (group = channels) */
    check_qconv(&r, MRT_DTYPE_UINT8,
                (ref_qconv2d){.n = 1, .c = 3, .h = 4, .w = 4, .m = 3, .kh = 2, .kw = 2, .group = 3,
                              .pads = {0, 0, 0, 0}, .strides = {1, 1}, .dilations = {1, 1}},
                true, true, NULL, false);
    /* unit scales: the int32 accumulator itself, grouped, strided, dilated, padded */
    check_qconv(&r, MRT_DTYPE_UINT8,
                (ref_qconv2d){.n = 2, .c = 4, .h = 7, .w = 6, .m = 6, .kh = 3, .kw = 2, .group = 2,
                              .pads = {1, 0, 2, 1}, .strides = {2, 1}, .dilations = {1, 2}},
                true, true, NULL, true);
}

/* Scale and zero-point shapes that fit no layout: INVALID_MODEL naming the tensor */
Test(quant, errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("quant.errors"));
    mrt_tensor x = ints(MRT_DTYPE_INT8, 2, (int64_t[]){5, 4}, &r, -128, 127);
    mrt_tensor bad = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, 0.01, 0.1);
    mrt_tensor y = {0};
    cr_assert_eq(run_dequantize(21, &x, &bad, NULL, 1, 0, 0, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "x_scale has shape [3]"), "%s", mrt_last_error());
    /* blocked: 5 rows in blocks of 2 need 3 scales along axis 0, not 2 */
    mrt_tensor sb = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 4}, 0.01, 0.1);
    cr_assert_eq(run_dequantize(21, &x, &sb, NULL, 0, 2, 0, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "x_scale has shape [2,4]") || strstr(mrt_last_error(), "x_scale has shape [2, 4]"),
              "%s", mrt_last_error());
    /* QuantizeLinear: zero point of another shape than the scale */
    mrt_tensor xf = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){5, 4}, -1, 1);
    mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, 0.01, 0.1);
    mrt_tensor z = ints(MRT_DTYPE_UINT8, 1, (int64_t[]){5}, &r, 0, 10);
    cr_assert_eq(run_quantize(21, &xf, &s, &z, 1, 0, 0, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "y_zero_point has shape [5]"), "%s", mrt_last_error());
    /* output_dtype contradicting the zero point */
    mrt_tensor z4 = ints(MRT_DTYPE_UINT8, 1, (int64_t[]){4}, &r, 0, 10);
    cr_assert_eq(run_quantize(21, &xf, &s, &z4, 1, 0, MRT_DTYPE_INT8, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "output_dtype"), "%s", mrt_last_error());
    mrt_tensor *all[] = {&x, &bad, &sb, &xf, &s, &z, &z4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
}

/* The engine's generic store (mrt_store_f64, used wherever a kernel writes a small float by value) saturates +-inf
   in the formats without an infinity, as it does any value past the largest: it once stored 0 (every code's error
   from inf is inf, so the nearest-code search kept its first code; 1e30 likewise). */
Test(quant, store_f64_saturates_infinity)
{
    static const struct { mrt_dtype dt; double max; bool has_inf; } f[] = {
        {MRT_DTYPE_FLOAT8E4M3FN, 448, false},   {MRT_DTYPE_FLOAT8E4M3FNUZ, 240, false},
        {MRT_DTYPE_FLOAT8E5M2FNUZ, 57344, false}, {MRT_DTYPE_FLOAT4E2M1, 6, false},
        {MRT_DTYPE_FLOAT8E5M2, 57344, true},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        uint8_t bytes[2] = {0, 0};
        mrt_store_f64(f[i].dt, bytes, 0, INFINITY);
        mrt_store_f64(f[i].dt, bytes, 1, -INFINITY);
        double hi = mrt_load_f64(f[i].dt, bytes, 0), lo = mrt_load_f64(f[i].dt, bytes, 1);
        double want = f[i].has_inf ? INFINITY : f[i].max;
        cr_expect_eq(hi, want, "%s: +inf stored as %g, expected %g", mrt_dtype_name(f[i].dt), hi, want);
        cr_expect_eq(lo, -want, "%s: -inf stored as %g, expected %g", mrt_dtype_name(f[i].dt), lo, -want);
        mrt_store_f64(f[i].dt, bytes, 0, 1e30); /* finite values past the largest saturate too */
        if (!f[i].has_inf) cr_expect_eq(mrt_load_f64(f[i].dt, bytes, 0), f[i].max, "%s: 1e30", mrt_dtype_name(f[i].dt));
    }
}
