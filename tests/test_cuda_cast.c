/* The CUDA cast family (ops_cuda/cast.cu: Cast, CastLike) against the CPU kernel (tests/harness.h th_cuda_check),
 * bit for bit: every pair of bool, the integer types, float, double, float16 and bfloat16, with NaN, infinities,
 * out-of-range values (saturation then wrapping), ties of the 16-bit roundings and subnormals; and every pair with a
 * low-precision type (float8 x4 with saturate on/off, float8e8m0 with each round_mode, float4e2m1, int4/uint4/int2/uint2)
 * over every code of the small type or the awkward values of the small formats, odd and empty shapes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static const mrt_dtype dts[] = {MRT_DTYPE_BOOL,   MRT_DTYPE_UINT8,  MRT_DTYPE_INT8,   MRT_DTYPE_UINT16, MRT_DTYPE_INT16,
                                MRT_DTYPE_UINT32, MRT_DTYPE_INT32,  MRT_DTYPE_UINT64, MRT_DTYPE_INT64,  MRT_DTYPE_FLOAT,
                                MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
#define N_DTS (sizeof dts / sizeof dts[0])

static bool is_float(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

/* Source values: the awkward ones first, then random ones over the type's range. */
static mrt_tensor source(th_rng *r, mrt_dtype dt, int64_t n)
{
    static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -1.5, 2.5, 65504.0, 65520.0, 1e30,
                                      -1e30, 3e9, -3e9, 1e19, 2e19, 5.960464477539063e-08, 1.00048828125,
                                      1.0009765625 + 1e-12, 3.3895313892515355e+38, 300.0, -129.0, 70000.5};
    int64_t shape[1] = {n};
    mrt_tensor t = th_rand(r, dt, 1, shape, is_float(dt) ? -1e5 : dt == MRT_DTYPE_BOOL ? 0 : -1e9,
                           is_float(dt) ? 1e5 : dt == MRT_DTYPE_BOOL ? 1 : 1e9);
    if (is_float(dt))
        for (size_t i = 0; i < sizeof specials / sizeof specials[0] && (int64_t)i < n; i++) mrt_store_f64(dt, t.data, (int64_t)i, specials[i]);
    else if (dt == MRT_DTYPE_INT64 || dt == MRT_DTYPE_UINT64) {
        ((int64_t *)t.data)[0] = INT64_MIN;
        ((int64_t *)t.data)[1] = INT64_MAX;
        ((int64_t *)t.data)[2] = -1;
        ((int64_t *)t.data)[3] = (1LL << 53) + 1; /* rounds in double */
        ((int64_t *)t.data)[4] = 65519;
    }
    return t;
}

Test(cuda_cast, every_pair_bit_for_bit)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cast"));
    for (size_t s = 0; s < N_DTS; s++)
        for (size_t d = 0; d < N_DTS; d++) {
            mrt_tensor x = source(&r, dts[s], 300);
            th_case *c = th_begin("Cast", "", 21);
            th_input(c, &x);
            th_attr_int(c, "to", dts[d]);
            char label[96];
            snprintf(label, sizeof label, "Cast %s -> %s", mrt_dtype_name(dts[s]), mrt_dtype_name(dts[d]));
            th_cuda_check(c, 1, 0, label); /* tolerance 0: the same bits as the CPU */
            th_free(c);
            mrt_tensor_release(&x);
        }
}

Test(cuda_cast, castlike_and_empty)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("castlike"));
    int64_t empty[2] = {0, 4}, one[1] = {1};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, empty, 0, 1), like = th_rand(&r, MRT_DTYPE_FLOAT16, 1, one, 0, 1);
    th_case *c = th_begin("CastLike", "", 21);
    th_input(c, &x);
    th_input(c, &like);
    th_cuda_check(c, 1, 0, "CastLike of an empty tensor");
    th_free(c);
    mrt_tensor_release(&x);
    x = source(&r, MRT_DTYPE_DOUBLE, 1000);
    c = th_begin("CastLike", "", 21);
    th_input(c, &x);
    th_input(c, &like);
    th_cuda_check(c, 1, 0, "CastLike double -> float16");
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&like);
}

/* ------------------------------------------------------------------ the low-precision types */

static const mrt_dtype low[] = {MRT_DTYPE_FLOAT8E4M3FN, MRT_DTYPE_FLOAT8E4M3FNUZ, MRT_DTYPE_FLOAT8E5M2,
                                MRT_DTYPE_FLOAT8E5M2FNUZ, MRT_DTYPE_FLOAT8E8M0, MRT_DTYPE_FLOAT4E2M1,
                                MRT_DTYPE_UINT4, MRT_DTYPE_INT4, MRT_DTYPE_UINT2, MRT_DTYPE_INT2};
#define N_LOW (sizeof low / sizeof low[0])

static bool is_low(mrt_dtype dt)
{
    for (size_t i = 0; i < N_LOW; i++)
        if (low[i] == dt) return true;
    return false;
}

/* Sources for the low-precision casts: every code of a low-precision type (then random bytes); for the wider floats
   the awkward values of the small formats (NaN, infinities, signed zeros, their subnormals, halfway cases of their
   roundings, values just past their largest and far past it, the e8m0 rounding cases), then random magnitudes over
   2^-30..2^20; integers over their range with the small types' edges first. */
static mrt_tensor low_source(th_rng *r, mrt_dtype dt, int64_t n)
{
    static const double specials[] = {
        NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0625, 1.1875, -1.0625, 1.125, 1.375, 0.25, 0.75, 1.25, 1.75,
        2.5, 3.5, 5.0, 6.0, 7.0, -7.0, 448.0, 464.0, 465.0, 480.0, -480.0, 240.0, 248.0, 256.0, 57344.0, 61440.0,
        61441.0, 65536.0, -65536.0, 1e6, -1e30, 0.001953125, 0.0009765625, 0.00048828125, 1.52587890625e-05,
        7.62939453125e-06, 2.288818359375e-05, 1.5, 3.0, 0.75, -1.5, 1.1754943508222875e-38, 5.877471754111438e-39,
        2.938735877055719e-39, 3.4028234663852886e+38, 2.5521177519070385e+38, 1.7014118346046923e+38, 8.0, -8.0,
        7.9, -8.5, 15.5, 16.0, -2.5, 1.9, 2.0, -3.0, 1e20, -1e20, 0.5, -0.5, 65504.0, 65520.0};
    int64_t shape[1] = {n};
    if (is_low(dt)) {
        mrt_tensor t;
        cr_assert_eq(mrt_tensor_alloc(&t, dt, 1, shape), MRT_STATUS_OK);
        uint8_t *b = (uint8_t *)t.data;
        size_t nb = mrt_tensor_nbytes(&t);
        for (size_t i = 0; i < nb; i++) b[i] = i < 256 ? (uint8_t)i : (uint8_t)th_rng_int(r, 0, 255);
        return t;
    }
    bool fl = is_float(dt);
    mrt_tensor t = th_rand(r, dt, 1, shape, fl ? -1 : dt == MRT_DTYPE_BOOL ? 0 : -300, fl ? 1 : dt == MRT_DTYPE_BOOL ? 1 : 300);
    if (!fl) {
        static const int64_t ints[] = {-9, -8, -3, -2, -1, 0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 255, 256, -129, 448};
        for (size_t i = 0; i < sizeof ints / sizeof ints[0] && (int64_t)i < n; i++)
            mrt_store_i64(dt, t.data, (int64_t)i, dt == MRT_DTYPE_BOOL ? ints[i] != 0 : ints[i]);
        return t;
    }
    size_t ns = sizeof specials / sizeof specials[0];
    for (int64_t i = 0; i < n; i++) {
        double v = (size_t)i < ns ? specials[i] : ldexp(th_rng_uniform(r, -2, 2), (int)th_rng_int(r, -30, 20));
        mrt_store_f64(dt, t.data, i, v);
    }
    return t;
}

/* Element i's raw bits: the nibble or crumb of a packed type, else its bytes. */
static uint64_t element_bits(const mrt_tensor *t, int64_t i)
{
    int bits = mrt_dtype_bits(t->dtype);
    const uint8_t *p = (const uint8_t *)t->data;
    if (bits < 8) return (p[i * bits / 8] >> (i * bits % 8)) & ((1u << bits) - 1);
    uint64_t v = 0;
    memcpy(&v, p + i * (bits / 8), (size_t)bits / 8);
    return v;
}

/* Runs c on the CPU and on CUDA and asserts the same bits in every element (float32/float64 outputs: the same
   values, NaN matching any NaN, as a GPU's conversions need not keep a NaN's payload). */
static void check_bits(th_case *c, const char *label)
{
    mrt_tensor cpu, gpu;
    mrt_session_options o = mrt_session_options_default();
    o.poison_outputs = true;
    cr_assert_eq(th_run_opt(c, &o, 1, &cpu), MRT_STATUS_OK, "%s: the CPU run failed: %s", label, mrt_last_error());
    o.device = "cuda";
    o.no_cpu_fallback = true;
    cr_assert_eq(th_run_opt(c, &o, 1, &gpu), MRT_STATUS_OK, "%s: the CUDA run failed: %s", label, mrt_last_error());
    cr_assert_eq(gpu.dtype, cpu.dtype, "%s: dtypes differ", label);
    cr_assert(mrt_tensor_same_shape(&gpu, &cpu), "%s: shapes differ", label);
    int64_t n = mrt_tensor_numel(&cpu);
    bool wide = cpu.dtype == MRT_DTYPE_FLOAT || cpu.dtype == MRT_DTYPE_DOUBLE;
    for (int64_t i = 0; i < n; i++) {
        if (wide) {
            double a = mrt_load_f64(cpu.dtype, cpu.data, i), b = mrt_load_f64(gpu.dtype, gpu.data, i);
            if (isnan(a) && isnan(b)) continue;
            cr_assert(memcmp(&a, &b, sizeof a) == 0, "%s: element %lld: CUDA %.17g, CPU %.17g", label, (long long)i, b, a);
        } else {
            uint64_t a = element_bits(&cpu, i), b = element_bits(&gpu, i);
            cr_assert_eq(b, a, "%s: element %lld: CUDA bits 0x%llx, CPU 0x%llx", label, (long long)i,
                         (unsigned long long)b, (unsigned long long)a);
        }
    }
    mrt_tensor_release(&cpu);
    mrt_tensor_release(&gpu);
}

Test(cuda_cast, low_precision_pairs_bit_for_bit)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cast_low"));
    mrt_dtype all[N_DTS + N_LOW];
    memcpy(all, dts, sizeof dts);
    memcpy(all + N_DTS, low, sizeof low);
    static const char *const modes[] = {"up", "down", "nearest"};
    for (size_t s = 0; s < N_DTS + N_LOW; s++)
        for (size_t d = 0; d < N_DTS + N_LOW; d++) {
            mrt_dtype sd = all[s], dd = all[d];
            if (!is_low(sd) && !is_low(dd)) continue; /* every_pair_bit_for_bit */
            bool f8 = dd >= MRT_DTYPE_FLOAT8E4M3FN && dd <= MRT_DTYPE_FLOAT8E5M2FNUZ, e8 = dd == MRT_DTYPE_FLOAT8E8M0;
            for (int sat = 1; sat >= (f8 || e8 ? 0 : 1); sat--)
                for (int m = 0; m < (e8 ? 3 : 1); m++) {
                    /* odd lengths leave a packed output's last byte part-filled */
                    mrt_tensor x = low_source(&r, sd, 301 + 2 * th_rng_int(&r, 0, 40));
                    th_case *c = th_begin("Cast", "", 25);
                    th_input(c, &x);
                    th_attr_int(c, "to", dd);
                    if (!sat) th_attr_int(c, "saturate", 0);
                    if (e8) th_attr_string(c, "round_mode", modes[m]);
                    char label[128];
                    snprintf(label, sizeof label, "Cast %s -> %s saturate %d%s%s", mrt_dtype_name(sd), mrt_dtype_name(dd),
                             sat, e8 ? " round_mode " : "", e8 ? modes[m] : "");
                    check_bits(c, label);
                    th_free(c);
                    mrt_tensor_release(&x);
                }
        }
}

Test(cuda_cast, low_precision_shapes_and_castlike)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cast_low_shapes"));
    /* empty, a scalar, one element, odd shapes (a packed output's bytes end mid-tensor), a larger tensor */
    static const int64_t shapes[][3] = {{0, 3, 1}, {1, 1, 1}, {3, 5, 7}, {1, 1, 9}, {2, 33, 17}};
    static const int ranks[] = {3, 0, 3, 3, 3};
    static const mrt_dtype pairs[][2] = {{MRT_DTYPE_FLOAT, MRT_DTYPE_INT4}, {MRT_DTYPE_FLOAT, MRT_DTYPE_UINT2},
                                         {MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT4E2M1}, {MRT_DTYPE_INT4, MRT_DTYPE_FLOAT},
                                         {MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT8E4M3FN}, {MRT_DTYPE_INT2, MRT_DTYPE_UINT4}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            int64_t n = th_numel(ranks[k], shapes[k]);
            mrt_tensor src = low_source(&r, pairs[p][0], n ? n : 1), x;
            cr_assert_eq(mrt_tensor_alloc(&x, pairs[p][0], ranks[k], shapes[k]), MRT_STATUS_OK);
            memcpy(x.data, src.data, mrt_tensor_nbytes(&x));
            int64_t one[1] = {1};
            mrt_tensor like;
            cr_assert_eq(mrt_tensor_alloc(&like, pairs[p][1], 1, one), MRT_STATUS_OK);
            for (int castlike = 0; castlike < 2; castlike++) {
                th_case *c = th_begin(castlike ? "CastLike" : "Cast", "", 25);
                th_input(c, &x);
                if (castlike) th_input(c, &like);
                else th_attr_int(c, "to", pairs[p][1]);
                char label[128];
                snprintf(label, sizeof label, "%s %s -> %s, shape %zu", castlike ? "CastLike" : "Cast",
                         mrt_dtype_name(pairs[p][0]), mrt_dtype_name(pairs[p][1]), k);
                check_bits(c, label);
                th_free(c);
            }
            mrt_tensor_release(&like);
            mrt_tensor_release(&x);
            mrt_tensor_release(&src);
        }
}
