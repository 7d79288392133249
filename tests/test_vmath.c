/* ops_cpu/vmath.c against float64 libm over a dense sweep of float bit patterns (every 997th, both signs, all
 * exponents) plus the special values; and the element-wise kernels built on it giving the same bits with 1 and
 * 2 threads. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_cpu/vmath.h"

typedef void (*vfn)(float *, const float *, int64_t);
typedef double (*reffn)(double);

static double ref_exp(double x) { return exp(x); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_tanh(double x) { return tanh(x); }
static double ref_erf(double x) { return erf(x); }
static double ref_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t u_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Error of got against the exact value r, in units of the float ulp at r's magnitude (denormals: 2^-149). */
static double ulp_err(float got, double r)
{
    double a = fabs(r);
    int e;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    double ulp = a < FLT_MIN ? ldexp(1.0, -149) : ldexp(1.0, e - 24);
    return fabs((double)got - r) / ulp;
}

/* The sweep: every 997th bit pattern (997 is prime: the mantissas differ between exponents). */
static float *sweep(int64_t *n)
{
    int64_t cap = (int64_t)(4294967296.0 / 997) + 2;
    float *x = malloc((size_t)cap * sizeof *x);
    int64_t k = 0;
    for (uint64_t u = 0; u < 4294967296u; u += 997) {
        float f = f_of((uint32_t)u);
        if (f == f) x[k++] = f; /* NaNs are checked separately */
    }
    *n = k;
    return x;
}

/* Max ulp error over the sweep; values whose exact result is outside float's range must give inf exactly. */
static void check_sweep(const char *name, vfn f, reffn ref, double bound)
{
    int64_t n;
    float *x = sweep(&n);
    float *y = malloc((size_t)n * sizeof *y);
    f(y, x, n);
    double worst = 0;
    float worst_x = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref(x[i]);
        float rf = (float)r;
        if (isinf(rf)) {
            cr_assert(y[i] == rf, "%s(%a) = %a, want %a", name, x[i], y[i], rf);
            continue;
        }
        cr_assert(!isnan(y[i]), "%s(%a) = NaN", name, x[i]);
        double e = ulp_err(y[i], r);
        if (e > worst) {
            worst = e;
            worst_x = x[i];
        }
    }
    cr_log_info("%s: max error %.3f ulp at %a over %lld inputs", name, worst, worst_x, (long long)n);
    cr_assert(worst <= bound, "%s: %.3f ulp at %a (bound %.1f)", name, worst, worst_x, bound);
    /* the same array in place, and element by element: the vector body and the scalar remainder agree */
    float *z = malloc((size_t)n * sizeof *z);
    memcpy(z, x, (size_t)n * sizeof *z);
    f(z, z, n);
    cr_assert(memcmp(z, y, (size_t)n * sizeof *z) == 0, "%s: in place differs", name);
    for (int64_t i = 0; i < n; i++) { /* every element */
        float one;
        f(&one, &x[i], 1);
        cr_assert(u_of(one) == u_of(y[i]), "%s(%a): alone %a, in an array %a", name, x[i], one, y[i]);
    }
    free(x);
    free(y);
    free(z);
}

/* The AVX-512 body's near path (64-float blocks whose lanes all have |x| <= 87: no clamp, 2^n a normal float) and
   its general one, against the portable loop bit for bit and float64 within the sweep's bound: dense runs of
   consecutive floats at the near range's edge (87), where n = -126 ends (87.35: a near range reaching past it
   fails here), near where results turn denormal (84-87), at 0 and tiny inputs, both signs; each run also as
   blocks with one lane moved out of the range (88, inf, NaN, -104.5), which send the block to the general body. */
Test(vmath, sigmoid_near_path_edges)
{
    const float starts[] = {87.0f, -87.0f, 87.35f, -87.35f, 86.5f, -86.5f, 84.0f, -84.0f, 0.0f, -0.0f, 1e-30f, -1e-30f, 0.5f, -0.5f,
                            20.0f, -20.0f, 104.0f, -104.0f};
    const float out[] = {88.0f, INFINITY, NAN, -104.5f};
    enum { RUN = 64 * 64 };
    float *x = malloc(RUN * sizeof *x), *s = malloc(RUN * sizeof *s), *sp = malloc(RUN * sizeof *sp);
    float *y = malloc(RUN * sizeof *y), *yp = malloc(RUN * sizeof *yp);
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++)
        for (int dir = -1; dir <= 1; dir += 2)
            for (int outer = -1; outer < 4; outer++) {
                /* RUN consecutive floats from starts[k] towards (dir > 0) or away from 0; with outer >= 0 one lane
                   in every block of 64 (a different one each block) holds out[outer] */
                uint32_t u = u_of(starts[k]);
                for (int i = 0; i < RUN; i++) {
                    uint32_t mag = u & 0x7fffffffu;
                    int64_t m = (int64_t)mag + (int64_t)dir * i;
                    if (m < 0) m = 0;
                    if (m > 0x7f7fffff) m = 0x7f7fffff;
                    x[i] = f_of((uint32_t)m | (u & 0x80000000u));
                    if (outer >= 0 && i % 64 == (i / 64) % 64) x[i] = out[outer];
                }
                mrt_vsigmoid_f32(s, x, RUN);
                mrt_vsigmoid_f32_portable(sp, x, RUN);
                mrt_vsilu_f32(y, x, RUN);
                mrt_vsilu_f32_portable(yp, x, RUN);
                for (int i = 0; i < RUN; i++) {
                    if (isnan(x[i])) {
                        cr_assert(isnan(s[i]) && isnan(y[i]), "sigmoid/silu(NaN) must be NaN");
                        continue;
                    }
                    cr_assert(u_of(s[i]) == u_of(sp[i]), "sigmoid(%a): %a, the portable loop %a", x[i], s[i], sp[i]);
                    cr_assert(u_of(y[i]) == u_of(yp[i]), "silu(%a): %a, the portable loop %a", x[i], y[i], yp[i]);
                    double r = ref_sigmoid(x[i]);
                    cr_assert(ulp_err(s[i], r) <= 1.0, "sigmoid(%a) = %a, want %a", x[i], s[i], r);
                }
            }
    free(x);
    free(s);
    free(sp);
    free(y);
    free(yp);
}

/* BatchNormalization then Sigmoid or SiLU in one pass (mrt_vbn_sigmoid_f32): the bits of mrt_bn_apply_f32 followed
   by the portable sigmoid or SiLU loop, for lengths that end in every lane of a vector and past whole 64-float
   blocks, with inputs in and out of the near range (|x| <= 87), inf and NaN */
Test(vmath, bn_sigmoid_same_bits_as_the_two_passes)
{
    enum { N = 1100 };
    float x[N], y[N], b[N], want[N];
    const mrt_bn_coef k = mrt_bn_coef_make(1.37, -0.21);
    for (int i = 0; i < N; i++) x[i] = (float)((i * 7919 % 2001) - 1000) * (i % 13 == 5 ? 0.2f : 0.011f);
    x[3] = INFINITY, x[400] = -INFINITY, x[777] = NAN, x[1001] = -0.0f;
    const int64_t lens[] = {1, 5, 15, 16, 17, 31, 63, 64, 65, 127, 128, 196, 200, 1000, N};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int silu = 0; silu < 2; silu++) {
            int64_t n = lens[li];
            for (int64_t i = 0; i < n; i++) b[i] = mrt_bn_apply_f32(x[i], k);
            if (silu) mrt_vsilu_f32_portable(want, b, n);
            else mrt_vsigmoid_f32_portable(want, b, n);
            memcpy(y, x, (size_t)n * sizeof *y);
            mrt_vbn_sigmoid_f32(y, n, &k, silu);
            for (int64_t i = 0; i < n; i++)
                cr_assert(u_of(y[i]) == u_of(want[i]) || (isnan(y[i]) && isnan(want[i])),
                          "%s(bn(%a)), n = %lld: %a, want %a", silu ? "silu" : "sigmoid", x[i], (long long)n, y[i],
                          want[i]);
            memcpy(y, x, (size_t)n * sizeof *y);
            mrt_vbn_sigmoid_f32_portable(y, n, &k, silu);
            for (int64_t i = 0; i < n; i++)
                cr_assert(u_of(y[i]) == u_of(want[i]) || (isnan(y[i]) && isnan(want[i])), "portable %s(bn(%a))",
                          silu ? "silu" : "sigmoid", x[i]);
        }
}

/* Sigmoid and SiLU: the AVX-512 body (taken on CPUs that have it) gives the portable loop's bits, and SiLU is x
   times the sigmoid, bit for bit, in an array and alone (a masked last vector) */
Test(vmath, sigmoid_and_silu_same_bits_on_every_path)
{
    int64_t n;
    float *x = sweep(&n);
    float *s = malloc((size_t)n * sizeof *s), *sp = malloc((size_t)n * sizeof *sp);
    float *y = malloc((size_t)n * sizeof *y), *yp = malloc((size_t)n * sizeof *yp);
    mrt_vsigmoid_f32(s, x, n);
    mrt_vsigmoid_f32_portable(sp, x, n);
    mrt_vsilu_f32(y, x, n);
    mrt_vsilu_f32_portable(yp, x, n);
    for (int64_t i = 0; i < n; i++) {
        float want = x[i] * s[i], one;
        mrt_vsilu_f32(&one, &x[i], 1);
        if (isnan(want)) {
            cr_assert(isnan(sp[i]) && isnan(y[i]) && isnan(yp[i]) && isnan(one), "silu(%a): want NaN", x[i]);
            continue;
        }
        cr_assert(u_of(s[i]) == u_of(sp[i]), "sigmoid(%a): %a, the portable loop %a", x[i], s[i], sp[i]);
        cr_assert(u_of(y[i]) == u_of(want) && u_of(yp[i]) == u_of(want) && u_of(one) == u_of(want),
                  "silu(%a): %a in an array, %a portable, %a alone, want %a", x[i], y[i], yp[i], one, want);
    }
    free(x);
    free(s);
    free(sp);
    free(y);
    free(yp);
}

/* exp: the AVX-512 body (taken on CPUs that have it) gives the portable loop's bits over the whole sweep */
Test(vmath, exp_same_bits_on_every_path)
{
    int64_t n;
    float *x = sweep(&n);
    float *y = malloc((size_t)n * sizeof *y), *yp = malloc((size_t)n * sizeof *yp);
    mrt_vexp_f32(y, x, n);
    mrt_vexp_f32_portable(yp, x, n);
    for (int64_t i = 0; i < n; i++) cr_assert(u_of(y[i]) == u_of(yp[i]), "exp(%a): %a, the portable loop %a", x[i], y[i], yp[i]);
    free(x);
    free(y);
    free(yp);
}

/* erf and the fused GELU chain (x * (erf(x / div) + add) * mul, in each operand order): the AVX-512 bodies (taken on
   CPUs that have them) give the portable loops' bits over the whole sweep, a partial last vector included */
Test(vmath, erf_and_gelu_chain_same_bits_on_every_path)
{
    int64_t n;
    float *x = sweep(&n);
    n -= 5; /* not a multiple of 16 */
    float *y = malloc((size_t)n * sizeof *y), *yp = malloc((size_t)n * sizeof *yp);
    mrt_verf_f32(y, x, n);
    mrt_verf_f32_portable(yp, x, n);
    for (int64_t i = 0; i < n; i++) cr_assert(u_of(y[i]) == u_of(yp[i]), "erf(%a): %a, the portable loop %a", x[i], y[i], yp[i]);
    for (int order = 0; order < 8; order++) {
        mrt_gelu_erf_nodes g = {1.41421354f, 1.0f, 0.5f, (order & 1) != 0, (order & 2) != 0, (order & 4) != 0};
        memcpy(y, x, (size_t)n * sizeof *y);
        memcpy(yp, x, (size_t)n * sizeof *yp);
        mrt_vgelu_erf_nodes_f32(y, n, &g);
        mrt_vgelu_erf_nodes_f32_portable(yp, n, &g);
        for (int64_t i = 0; i < n; i++) {
            if (y[i] != y[i]) { /* inf * 0 and NaN inputs: NaN on both paths */
                cr_assert(yp[i] != yp[i], "gelu chain(%a): NaN, the portable loop %a", x[i], yp[i]);
                continue;
            }
            cr_assert(u_of(y[i]) == u_of(yp[i]), "gelu chain(%a), order %d: %a, the portable loop %a", x[i], order, y[i],
                      yp[i]);
        }
    }
    free(x);
    free(y);
    free(yp);
}

/* Softmax's exp-and-sum pass: the same y bits as subtracting the maximum and calling mrt_vexp_f32, the same sum bits as
   mrt_sum8_f32 on them, and the AVX-512 body's bits the portable loop's. Rows of many lengths (partial vectors, the
   four-vector loop and its remainder), with differences that reach the underflow clamp, denormal results and -inf,
   and a row whose maximum is +inf (its exps NaN). */
Test(vmath, exp_sum_matches_exp_then_sum)
{
    static const int64_t lens[] = {1, 7, 8, 15, 16, 17, 63, 64, 65, 100, 1500};
    uint32_t seed = 12345;
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int variant = 0; variant < 3; variant++) {
            int64_t n = lens[li];
            float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
            float *yp = malloc((size_t)n * sizeof *yp), *want = malloc((size_t)n * sizeof *want);
            float mx = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                seed = seed * 1664525u + 1013904223u;
                float u = (float)(seed >> 8) / 16777216.0f; /* [0, 1) */
                /* variant 0: differences in [-20, 0]; 1: in [-110, 0] (the clamp, denormals); 2: also -inf and +inf */
                x[i] = variant == 0 ? 20.0f * u - 10.0f : -110.0f * u + 3.0f;
                if (variant == 2 && i % 5 == 1) x[i] = -INFINITY;
                if (variant == 2 && i == n / 2 && n > 1) x[i] = INFINITY;
                mx = x[i] > mx ? x[i] : mx;
            }
            for (int64_t i = 0; i < n; i++) want[i] = x[i] - mx;
            mrt_vexp_f32_portable(want, want, n);
            double want_sum = 0; /* mrt_sum8_f32's order */
            double part[8] = {0};
            for (int64_t i = 0; i < n; i++) part[i % 8] += want[i];
            want_sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
            double sum = mrt_vexp_sum_f32(y, x, mx, n), sum_p = mrt_vexp_sum_f32_portable(yp, x, mx, n);
            /* fetching another row alongside (Softmax's next) changes nothing */
            float *yf = malloc((size_t)n * sizeof *yf);
            double sum_f = mrt_vexp_sum_f32_fetch(yf, x, mx, n, want);
            cr_assert(memcmp(yf, y, (size_t)n * sizeof *yf) == 0 && (sum_f == sum || (sum_f != sum_f && sum != sum)),
                      "n %lld: the fetching pass differs", (long long)n);
            free(yf);
            for (int64_t i = 0; i < n; i++) {
                if (want[i] != want[i]) {
                    cr_assert(y[i] != y[i] && yp[i] != yp[i], "n %lld: exp(%a - %a) not NaN", (long long)n, x[i], mx);
                    continue;
                }
                cr_assert(u_of(y[i]) == u_of(want[i]) && u_of(yp[i]) == u_of(want[i]),
                          "n %lld, x %a, max %a: %a, portable %a, want %a", (long long)n, x[i], mx, y[i], yp[i], want[i]);
            }
            if (want_sum != want_sum) cr_assert(sum != sum && sum_p != sum_p, "n %lld: the sum should be NaN", (long long)n);
            else
                cr_assert(sum == want_sum && sum_p == want_sum, "n %lld variant %d: sum %a, portable %a, want %a",
                          (long long)n, variant, sum, sum_p, want_sum);
            free(x);
            free(y);
            free(yp);
            free(want);
        }
}

/* Softmax's exp-and-sum pass on differences in [-69, 0], which its AVX-512 body computes with fewer operations
   (vmath.c, exp16_normal): the portable loop's bits on every third float there, -0 and -69 included */
Test(vmath, exp_sum_normal_range_matches_portable)
{
    enum { CHUNK = 65536 };
    float *x = malloc(CHUNK * sizeof *x), *y = malloc(CHUNK * sizeof *y), *yp = malloc(CHUNK * sizeof *yp);
    const uint32_t lo = 0x80000000u, hi = 0xc28a0000u; /* -0, -69 */
    for (uint64_t u0 = lo; u0 <= hi; u0 += 3u * CHUNK) {
        int64_t n = 0;
        for (uint64_t u = u0; u < u0 + 3u * CHUNK && u <= hi; u += 3) x[n++] = f_of((uint32_t)u);
        if (u0 + 3u * CHUNK > hi) x[n++] = f_of(hi);
        double sum = mrt_vexp_sum_f32(y, x, 0.0f, n), sum_p = mrt_vexp_sum_f32_portable(yp, x, 0.0f, n);
        for (int64_t i = 0; i < n; i++)
            cr_assert(u_of(y[i]) == u_of(yp[i]), "exp(%a): %a, the portable loop %a", x[i], y[i], yp[i]);
        cr_assert(sum == sum_p, "sum %a, portable %a", sum, sum_p);
    }
    free(x);
    free(y);
    free(yp);
}

/* exp is computed in float like sigmoid: measured 0.75 ulp at most (on a denormal result) */
Test(vmath, exp_sweep) { check_sweep("exp", mrt_vexp_f32, ref_exp, 1.0); }
/* sigmoid is computed in float with hi + lo pairs (vmath.c): measured over every float 0.754 ulp at most (on a
   denormal result), 0.547 on normal ones; the bound holds it to within 1 ulp */
Test(vmath, sigmoid_sweep) { check_sweep("sigmoid", mrt_vsigmoid_f32, ref_sigmoid, 1.0); }
Test(vmath, tanh_sweep) { check_sweep("tanh", mrt_vtanh_f32, ref_tanh, 2.0); }
Test(vmath, erf_sweep) { check_sweep("erf", mrt_verf_f32, ref_erf, 2.0); }
Test(vmath, gelu_sweep) { check_sweep("gelu", mrt_vgelu_f32, ref_gelu, 2.0); }

/* One value through f, checked bit for bit (NaN: any NaN). */
static void expect(const char *name, vfn f, float x, float want)
{
    float y;
    f(&y, &x, 1);
    if (want != want) cr_assert(y != y, "%s(%a) = %a, want NaN", name, x, y);
    else cr_assert(u_of(y) == u_of(want), "%s(%a) = %a, want %a", name, x, y, want);
}

Test(vmath, special_values)
{
    const float inf = INFINITY, nan = NAN, den = FLT_TRUE_MIN;
    vfn fs[] = {mrt_vexp_f32, mrt_vsigmoid_f32, mrt_vtanh_f32, mrt_verf_f32, mrt_vgelu_f32};
    const char *names[] = {"exp", "sigmoid", "tanh", "erf", "gelu"};
    for (int k = 0; k < 5; k++) {
        expect(names[k], fs[k], nan, nan);
        expect(names[k], fs[k], -nan, nan);
    }
    expect("exp", mrt_vexp_f32, inf, inf);
    expect("exp", mrt_vexp_f32, -inf, 0.0f);
    expect("exp", mrt_vexp_f32, 0.0f, 1.0f);
    expect("exp", mrt_vexp_f32, -0.0f, 1.0f);
    expect("exp", mrt_vexp_f32, den, 1.0f);
    expect("exp", mrt_vexp_f32, 88.8f, inf);      /* overflow */
    expect("exp", mrt_vexp_f32, FLT_MAX, inf);
    expect("exp", mrt_vexp_f32, -104.0f, 0.0f);   /* underflow */
    expect("exp", mrt_vexp_f32, -FLT_MAX, 0.0f);
    expect("exp", mrt_vexp_f32, -103.0f, (float)exp(-103.0)); /* a denormal result */
    expect("sigmoid", mrt_vsigmoid_f32, inf, 1.0f);
    expect("sigmoid", mrt_vsigmoid_f32, -inf, 0.0f);
    expect("sigmoid", mrt_vsigmoid_f32, 0.0f, 0.5f);
    expect("sigmoid", mrt_vsigmoid_f32, -0.0f, 0.5f);
    expect("sigmoid", mrt_vsigmoid_f32, -FLT_MAX, 0.0f);
    expect("sigmoid", mrt_vsigmoid_f32, FLT_MAX, 1.0f);
    expect("sigmoid", mrt_vsigmoid_f32, -100.0f, (float)(1.0 / (1.0 + exp(100.0)))); /* denormal */
    expect("tanh", mrt_vtanh_f32, inf, 1.0f);
    expect("tanh", mrt_vtanh_f32, -inf, -1.0f);
    expect("tanh", mrt_vtanh_f32, 0.0f, 0.0f);
    expect("tanh", mrt_vtanh_f32, -0.0f, -0.0f);
    expect("tanh", mrt_vtanh_f32, den, den);
    expect("tanh", mrt_vtanh_f32, -den, -den);
    expect("erf", mrt_verf_f32, inf, 1.0f);
    expect("erf", mrt_verf_f32, -inf, -1.0f);
    expect("erf", mrt_verf_f32, 0.0f, 0.0f);
    expect("erf", mrt_verf_f32, -0.0f, -0.0f);
    expect("erf", mrt_verf_f32, -FLT_MAX, -1.0f);
    expect("erf", mrt_verf_f32, 1e-30f, (float)erf(1e-30));
    expect("gelu", mrt_vgelu_f32, inf, inf);
    expect("gelu", mrt_vgelu_f32, -inf, nan); /* -inf * 0, as the formula gives */
    expect("gelu", mrt_vgelu_f32, -0.0f, -0.0f);
    expect("gelu", mrt_vgelu_f32, -30.0f, -0.0f);
}

/* ------------------------------------------------------------------ kernels: 1 thread vs 2 */

static mrt_tensor run_threads(const char *op, const mrt_tensor *x, int threads)
{
    th_case *c = th_begin(op, "", op[0] == 'G' ? 20 : 13);
    th_input(c, x);
    mrt_session_options opt = mrt_session_options_default();
    opt.n_threads = threads;
    mrt_tensor y;
    mrt_status st = th_run_opt(c, &opt, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", op, mrt_last_error());
    th_free(c);
    return y;
}

Test(vmath, kernels_same_bits_with_1_and_2_threads)
{
    th_rng r;
    th_rng_init(&r, th_seed("vmath_threads"));
    int64_t shape[2] = {1031, 1037}; /* ~1M elements, odd sizes: ranges end mid-vector */
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -12.0, 12.0);
    const char *ops[] = {"Sigmoid", "Erf", "Exp", "Tanh", "Gelu"};
    for (int k = 0; k < 5; k++) {
        mrt_tensor y1 = run_threads(ops[k], &x, 1), y2 = run_threads(ops[k], &x, 2);
        cr_assert(memcmp(y1.data, y2.data, mrt_tensor_nbytes(&y1)) == 0, "%s: 1 and 2 threads differ", ops[k]);
        /* and the kernel is the vmath function (Sigmoid: the one fused epilogues use) */
        int64_t n = mrt_tensor_numel(&x);
        float *want = malloc((size_t)n * sizeof *want);
        vfn f = k == 0 ? mrt_vsigmoid_f32 : k == 1 ? mrt_verf_f32 : k == 2 ? mrt_vexp_f32 : k == 3 ? mrt_vtanh_f32
                                                                                            : mrt_vgelu_f32;
        f(want, x.data, n);
        cr_assert(memcmp(y1.data, want, (size_t)n * sizeof *want) == 0, "%s: not the vmath bits", ops[k]);
        free(want);
        mrt_tensor_release(&y1);
        mrt_tensor_release(&y2);
    }
    mrt_tensor_release(&x);
}
