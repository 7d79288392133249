/* Float32 transcendental functions over arrays (see vmath.h).
 *
 * tanh, erf and gelu compute each element in double from the float input and round to float once at the
 * end. The double intermediate is accurate to about 1e-11 relative, far below float's half ulp (3e-8), so the
 * float result is the correctly rounded one except in rare near-halfway cases (then 1 ulp off): well within the
 * 2-ulp target, with no float-only error analysis to get wrong. sigmoid and exp, the hot ones (SiLU in every
 * EfficientNet block, Softmax in every attention layer), are computed in float on twice the lanes, with hi + lo
 * pairs where float alone would lose bits: sigmoid within 0.55 ulp on normal results (0.76 on denormal ones), exp
 * within 0.75 ulp (tests/test_vmath.c). 0.2% of sigmoids are not correctly rounded on inputs spread over [-20, 20]
 * (0.016% over every float, most of which are tiny or huge; checked exhaustively).
 *
 * The loops are written for GCC's auto-vectorizer: no libm calls, no branches (clamps and selects are
 * ternaries that become blends), 2^n built from integer bits; sigmoid and exp also have AVX-512 bodies in
 * intrinsics that do the same operations. MRT_VECTORIZE_CLONES compiles them for AVX-512, AVX2 and baseline x86-64; with
 * contraction off (ISO C11) every clone, and the scalar remainder loop, does the same IEEE operations in the same
 * order, so the bits never depend on the CPU, on the alignment or on how a caller splits an array. NaN propagates
 * through the arithmetic (NaN in, NaN out); infinities are clamped to finite arguments whose results round to the
 * right limit (0, 1, inf). */
#include "ops_cpu/vmath.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops_cpu/reduce.h"
#include "ops_cpu/simd.h"

#ifdef MRT_HAVE_AVX512_INTRINSICS
#define VM_HAVE_AVX512 1
#endif

static inline uint64_t bits_d(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static inline double from_bits_d(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static inline uint32_t bits_f(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static inline float from_bits_f(uint32_t u)
{
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#define VM_LOG2E 1.4426950408889634074
#define VM_LN2 0.69314718055994530942
/* 1.5 * 2^52: adding it rounds a double of magnitude < 2^51 to an integer, which lands in the low mantissa
   bits (as 2^51 + n) */
#define VM_ROUND_SHIFT 6755399441055744.0

/* exp(x) = s * (1 + p) for double x in about [-700, 700]: s = 2^n with n = round(x / ln2), p = expm1(r) for
   r = x - n ln2 in [-0.35, 0.35]. p keeps its relative accuracy near 0 (Taylor to r^10: error below 4e-13
   relative), so callers get expm1 too: s * p + (s - 1). */
static inline double exp_parts(double x, double *s)
{
    double kd = x * VM_LOG2E + VM_ROUND_SHIFT;
    double n = kd - VM_ROUND_SHIFT;
    /* low 12 bits of (2^51 + n + 1023) are n + 1023 (2^51 is a multiple of 4096): the biased exponent */
    *s = from_bits_d((bits_d(kd) + 1023u) << 52);
    double r = x - n * VM_LN2;
    /* fma: with contraction off (ISO C) q * r + c is two operations, and they were half of tanh's */
    double q = 1.0 / 3628800;
    q = fma(q, r, 1.0 / 362880);
    q = fma(q, r, 1.0 / 40320);
    q = fma(q, r, 1.0 / 5040);
    q = fma(q, r, 1.0 / 720);
    q = fma(q, r, 1.0 / 120);
    q = fma(q, r, 1.0 / 24);
    q = fma(q, r, 1.0 / 6);
    q = fma(q, r, 0.5);
    return fma(r, r * q, r);
}

/* x with its magnitude limited to m (NaN passes: the comparison is false), widened to double. Clamping the
   magnitude of a value that went through an integer mask is what GCC 12 if-converts: a clamp compared straight
   on a loaded float leaves "control flow in loop" and no vectorization. */
static inline double clamp_abs(float x, float m)
{
    uint32_t u = bits_f(x);
    float a = from_bits_f(u & 0x7fffffffu);
    a = a > m ? m : a;
    return (double)from_bits_f(bits_f(a) | (u & 0x80000000u));
}

/* c ? a : b through an integer mask. Both a and b are computed anyway; a plain ?: here lets GCC move the
   arithmetic of one arm under a branch, which it then refuses to vectorize without AVX-512 masking (FP math may
   trap, so it is not executed speculatively). */
static inline double select_d(bool c, double a, double b)
{
    uint64_t m = (uint64_t)0 - (uint64_t)c;
    return from_bits_d((bits_d(a) & m) | (bits_d(b) & ~m));
}

/* c ? a : b for floats through an integer mask (see select_d) */
static inline float select_f(bool c, float a, float b)
{
    uint32_t m = (uint32_t)0 - (uint32_t)c;
    return from_bits_f((bits_f(a) & m) | (bits_f(b) & ~m));
}

/* Float exp for the sigmoid (whose double version was a third of EfficientNet-B0's run) and mrt_vexp_f32:
 * twice the lanes of double.
 * exp(x) = 2^n (m_hi + m_lo) for float x in [-104, 89], n = round(x / ln2). Cody-Waite reduction with fmaf:
 * r = x - n VMF_LN2 (the float nearest ln 2) is exact, since it is a multiple of x's ulp or of 2^-24 (n VMF_LN2 is)
 * smaller than 1/2; the rest, c = n (VMF_LN2 - ln 2) (|c| < 3e-7), is applied as exp(r + c) = exp(r) (1 + c), c^2
 * being below 2^-40. exp(r) = 1 + r + r^2 Q(r), Q of degree 4 fitted by scripts/fit_expm1_f32.py (2^-28 relative).
 * 1 + r is split exactly (Fast2Sum) and the small terms are added to its low part, so m = m_hi + m_lo carries
 * about 2^-27 relative error instead of float's 2^-24. */
#define VMF_LOG2E 1.44269502f
#define VMF_LN2 0.693147182f                 /* 0x3f317218 */
#define VMF_LN2_LO -1.90465421e-09f          /* ln 2 - VMF_LN2, 0xb102e308 */
#define VMF_ROUND_SHIFT 12582912.0f          /* 1.5 * 2^23: adding it rounds |v| < 2^22 to an integer */
#define VMF_Q4 0.001381461275741458f
#define VMF_Q3 0.008368710055947304f
#define VMF_Q2 0.04166838899254799f
#define VMF_Q1 0.1666652113199234f
#define VMF_Q0 0.4999999403953552f
static inline float exp_parts_f(float x, float *m_lo, int32_t *n)
{
    float kf = fmaf(x, VMF_LOG2E, VMF_ROUND_SHIFT);
    float nf = kf - VMF_ROUND_SHIFT;
    *n = (int32_t)(bits_f(kf) - bits_f(VMF_ROUND_SHIFT)); /* the ulp at 1.5 * 2^23 is 1 */
    float r = fmaf(nf, -VMF_LN2, x);
    float c = nf * -VMF_LN2_LO;
    float q = fmaf(VMF_Q4, r, VMF_Q3);
    q = fmaf(q, r, VMF_Q2);
    q = fmaf(q, r, VMF_Q1);
    q = fmaf(q, r, VMF_Q0);
    float h = 1.0f + r;
    float l = (1.0f - h) + r;          /* 1 + r == h + l exactly */
    l = fmaf(r * r, q, l);             /* + r^2 Q(r) */
    l = fmaf(c, h + l, l);             /* times 1 + c */
    float m_hi = h + l;
    *m_lo = (h - m_hi) + l;            /* renormalised: |l| < h */
    return m_hi;
}

/* exp in float (Softmax's, after subtracting the row maximum): x clamped to 89 from above, where the result rounds
   to inf; 2^n split in two so denormal and overflowing results get their rounding in the last multiply. In the
   normal range (m_hi + m_lo) 2^n is rounded once, by the fmaf. At x <= -104 the result rounds to +0 and is given
   directly: computed, its steps go through denormals, which cost the CPU a microcode assist each (a causal
   attention mask of -inf or float's lowest fills half of every Softmax row with such x: GPT-2's Softmax, 7 times
   slower than on unmasked rows). */
MRT_VECTORIZE_CLONES
static void exp_generic(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        bool zero = v <= -104.0f;         /* false for NaN */
        v = select_f(zero, 0.0f, v);
        v = select_f(v > 89.0f, 89.0f, v); /* NaN passes */
        float m_lo;
        int32_t e;
        float m_hi = exp_parts_f(v, &m_lo, &e);
        int32_t e1 = e < -120 ? -120 : e > 120 ? 120 : e;
        float s1 = from_bits_f((uint32_t)(e1 + 127) << 23), s2 = from_bits_f((uint32_t)(e - e1 + 127) << 23);
        y[i] = select_f(zero, 0.0f, fmaf(m_hi, s1, m_lo * s1) * s2);
    }
}

#ifdef VM_HAVE_AVX512
/* exp_parts_f on 16 lanes, operation for operation: returns m_hi, sets *m_lo and *nf (e as a float) */
__attribute__((target("avx512f"), always_inline)) static inline __m512 exp_parts16(__m512 v, __m512 *m_lo, __m512 *nf)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 kf = _mm512_fmadd_ps(v, _mm512_set1_ps(VMF_LOG2E), _mm512_set1_ps(VMF_ROUND_SHIFT));
    __m512 n = _mm512_sub_ps(kf, _mm512_set1_ps(VMF_ROUND_SHIFT));
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-VMF_LN2), v);
    __m512 c = _mm512_mul_ps(n, _mm512_set1_ps(-VMF_LN2_LO));
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(VMF_Q4), r, _mm512_set1_ps(VMF_Q3));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(VMF_Q2));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(VMF_Q1));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(VMF_Q0));
    __m512 h = _mm512_add_ps(one, r);
    __m512 l = _mm512_add_ps(_mm512_sub_ps(one, h), r);
    l = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, l);
    l = _mm512_fmadd_ps(c, _mm512_add_ps(h, l), l);
    __m512 m_hi = _mm512_add_ps(h, l);
    *m_lo = _mm512_add_ps(_mm512_sub_ps(h, m_hi), l);
    *nf = n;
    return m_hi;
}

/* exp_generic's loop body on 16 lanes, operation for operation. The powers of two come from scalef (exact here:
   1 scaled by an integer in [-150, 128]); GCC's vectorisation of the loop built them from integer bits, and spent
   most of Whisper's Softmax time there. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 exp16(__m512 v, bool nonpositive)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    /* lanes at or below -104 give +0 (exp_generic): they compute from 0 instead, clear of denormals. min(89, v): a
       NaN v is the second operand, which it returns when either is NaN; the upper clamps do nothing when the caller
       knows v <= 0 (or NaN). */
    __mmask16 zero = _mm512_cmp_ps_mask(v, _mm512_set1_ps(-104.0f), _CMP_LE_OQ);
    v = _mm512_mask_mov_ps(v, zero, _mm512_setzero_ps());
    if (!nonpositive) v = _mm512_min_ps(_mm512_set1_ps(89.0f), v);
    __m512 m_lo, nf, m_hi = exp_parts16(v, &m_lo, &nf);
    /* nf is e; s1 = 2^clamp(e, -120, 120), and the product's scaling by 2^(e - e1) rounds once, as the multiply
       by s2 does */
    __m512 e1 = _mm512_max_ps(nf, _mm512_set1_ps(-120.0f));
    if (!nonpositive) e1 = _mm512_min_ps(e1, _mm512_set1_ps(120.0f));
    __m512 s1 = _mm512_scalef_ps(one, e1);
    return _mm512_maskz_scalef_ps((__mmask16)~zero, _mm512_fmadd_ps(m_hi, s1, _mm512_mul_ps(m_lo, s1)),
                                  _mm512_sub_ps(nf, e1));
}

/* exp16's value for v in [-69, 0] (no NaN), in fewer operations: there e = n >= -100, so e1 = e, s1 = 2^e is normal
   and the last scalef is by 0. m_lo s1 is exact, or below 2^-126 and so under half the spacing of floats around
   m_hi s1 > 2^-101 (at least 2^-125); m_hi + m_lo is exactly h + l, whose rounding is m_hi (Fast2Sum). So the
   fmadd rounds to m_hi 2^e, as here: the same bits (tests/test_vmath.c sweeps [-69, 0]), 7 operations fewer. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 exp16_normal(__m512 v)
{
    __m512 m_lo, nf, m_hi = exp_parts16(v, &m_lo, &nf);
    (void)m_lo;
    return _mm512_scalef_ps(m_hi, nf);
}

__attribute__((target("avx512f"))) static void exp_avx512(float *y, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 t0 = exp16(_mm512_loadu_ps(x + i), false), t1 = exp16(_mm512_loadu_ps(x + i + 16), false);
        _mm512_storeu_ps(y + i, t0);
        _mm512_storeu_ps(y + i + 16, t1);
    }
    for (; i < n; i += 16) {
        __mmask16 m = mrt_mask16_first(n - i);
        _mm512_mask_storeu_ps(y + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i), false));
    }
}

/* mrt_vexp_sum_f32's loop on 16 lanes: the differences and exps as exp16 (without the upper clamps: x - max <= 0),
   the sum in part[i % 8] in order of i, two 8-double adds per vector (its lower and upper halves). Four vectors an
   iteration: the adds are one chain. Whisper's two [4, 1500, 1500] Softmaxes, 1 thread: 8.0 ms each with the
   passes apart (GCC's vectorised exp), 4.9 ms;
   with exp16_normal on blocks whose differences are all >= -69, 4.0 -> 3.4 ms. */
__attribute__((target("avx512f"))) static double exp_sum_avx512(float *y, const float *x, float max, int64_t n,
                                                                 const float *pf)
{
    const __m512 s = _mm512_set1_ps(max);
    __m512d part = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 t[4], v[4];
        if (pf)
            for (int k = 0; k < 4; k++) _mm_prefetch((const char *)(pf + i + 16 * k), _MM_HINT_T0);
        __mmask16 fast = 0xffff;
        for (int k = 0; k < 4; k++) {
            v[k] = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16 * k), s);
            fast &= _mm512_cmp_ps_mask(v[k], _mm512_set1_ps(-69.0f), _CMP_GE_OQ);
        }
        if (fast == 0xffff) {
            for (int k = 0; k < 4; k++) t[k] = exp16_normal(v[k]);
        } else {
            for (int k = 0; k < 4; k++) t[k] = exp16(v[k], true);
        }
        for (int k = 0; k < 4; k++) {
            _mm512_storeu_ps(y + i + 16 * k, t[k]);
            part = _mm512_add_pd(part, _mm512_cvtps_pd(_mm512_castps512_ps256(t[k])));
            part = _mm512_add_pd(part, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t[k]), 1))));
        }
    }
    for (; i < n; i += 16) {
        /* lanes past n are zeros: part[k] + 0 is part[k] (the parts are +0 or positive, or NaN) */
        __mmask16 m = mrt_mask16_first(n - i);
        if (pf) _mm_prefetch((const char *)(pf + i), _MM_HINT_T0);
        __m512 t = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s), true));
        _mm512_mask_storeu_ps(y + i, m, t);
        part = _mm512_add_pd(part, _mm512_cvtps_pd(_mm512_castps512_ps256(t)));
        part = _mm512_add_pd(part, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1))));
    }
    _Alignas(64) double p[8];
    _mm512_store_pd(p, part);
    return mrt_fold8_f64(p);
}
#endif

void mrt_vexp_f32(float *y, const float *x, int64_t n)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        exp_avx512(y, x, n);
        return;
    }
#endif
    exp_generic(y, x, n);
}

void mrt_vexp_f32_portable(float *y, const float *x, int64_t n) { exp_generic(y, x, n); }

double mrt_vexp_sum_f32_portable(float *y, const float *x, float max, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[i] - max;
    exp_generic(y, y, n);
    return mrt_sum8_f32(y, n);
}

double mrt_vexp_sum_f32(float *y, const float *x, float max, int64_t n)
{
    return mrt_vexp_sum_f32_fetch(y, x, max, n, NULL);
}

double mrt_vexp_sum_f32_fetch(float *y, const float *x, float max, int64_t n, const float *next)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) return exp_sum_avx512(y, x, max, n, next);
#endif
    (void)next;
    return mrt_vexp_sum_f32_portable(y, x, max, n);
}

/* The sigmoid's exp(-a), a = min(|x|, 104), from a table of 2^(j/32): -a = k ln2/32 + r with k = 32 n + j and
 * |r| <= ln2/64, so e^-a = 2^n (T_HI[j] + m_lo), m_lo = T_LO[j] + T_HI[j] (e^r - 1) within about 2^-30 relative
 * (the reduction is exact in its first FMA and rounded at 2^-24 |r| in the second; e^r - 1 = r + r^2 (1/2 + r/6)).
 * Tables and constants: scripts/gen_exp2_table_f32.py. Against the degree-4 exp above this is a third fewer
 * operations for the sigmoid (SiLU over 4096 floats in L1, best of 20: 1.24 -> 0.98 cycles an element) and more
 * accurate. The cost: the portable loop's table reads do not vectorise (one load per lane), so its AVX2 clone is
 * 15% slower than with the degree-4 exp (3.01 -> 3.46 cycles an element). For exp itself (Softmax) that trade was
 * worse, 0.92 -> 0.67 with AVX-512 against 1.94 -> 2.70 on AVX2, and it keeps the polynomial. */
static const float SIG_T_HI[32] = {
    0x1p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f, 0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f,
    0x1.29e9ep+0f, 0x1.306fep+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f, 0x1.4bfdaep+0f, 0x1.5342b6p+0f,
    0x1.5ab07ep+0f, 0x1.6247ecp+0f, 0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f, 0x1.8ace54p+0f,
    0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f, 0x1.ae89fap+0f, 0x1.b7f77p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
    0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f,
};
static const float SIG_T_LO[32] = {
    0x0p+0f, -0x1.9d4f52p-25f, 0x1.9f3122p-25f, -0x1.fdb496p-25f, -0x1.c15742p-27f, -0x1.d2e8cap-25f,
    0x1.ceac48p-25f, -0x1.5c0424p-25f, 0x1.4636e2p-25f, -0x1.18aac6p-25f, 0x1.824684p-25f, 0x1.8624b4p-30f,
    -0x1.593abcp-25f, -0x1.2c561p-25f, -0x1.5bd5ecp-27f, -0x1.f8b55p-25f, 0x1.9fcef4p-26f, 0x1.1d8beep-25f,
    -0x1.829fdp-25f, -0x1.accc7cp-26f, 0x1.15506ep-27f, -0x1.e64744p-25f, 0x1.51f848p-27f, -0x1.b83b54p-25f,
    -0x1.a94b14p-26f, -0x1.a09438p-25f, -0x1.3d56b2p-27f, -0x1.8837ccp-27f, -0x1.822dbcp-27f, -0x1.908c94p-25f,
    0x1.52486cp-27f, -0x1.246ebp-26f,
};
#define SIG_K 0x1.715476p+5f         /* 32 / ln 2 */
#define SIG_LN2_32_HI 0x1.62e43p-6f  /* ln2/32 rounded to float */
#define SIG_LN2_32_LO -0x1.05c61p-34f /* ln2/32 - SIG_LN2_32_HI */
#define SIG_C3 0x1.555556p-3f         /* 1/6 rounded to float */

/* sigmoid(x) = num / (1 + u) with u = exp(-|x|) = 2^n m (above) and num = u for x < 0, 1 otherwise: no
 * cancellation for either sign. 1 + u is carried as an exact hi + lo pair plus m's low part, the reciprocal is
 * taken of their sum, and the quotient gets one Newton correction: its error is the correction's second-order term,
 * about 2^-30 relative, plus the final rounding (tests/test_vmath.c sweeps it against float64). For x < 0 the
 * quotient is formed with m and scaled by 2^n at the end, rounding once (a denormal result too); u is formed with
 * 2^max(n, -126), a normal float (below that 1 + u is 1 anyway). sigmoid16 does the same IEEE operations in the
 * same order with AVX-512 instructions (a permute for the table, scalef for the last power of two): the same
 * bits, which tests/test_vmath.c checks over its sweep against the portable loop (mrt_vsigmoid_f32_portable).
 * Explicit fmaf, with contraction off, keeps the bits the same in every clone (the baseline one calls libm's exact
 * fmaf). A NaN's lanes compute garbage indices, which stay in the tables (j) and in range (n), and give NaN. */
static inline float sigmoid_one(float x)
{
    uint32_t ux = bits_f(x);
    float v = from_bits_f(ux | 0x80000000u); /* -|x| */
    v = -104.0f > v ? -104.0f : v;           /* exp(-104) < 2^-150 rounds to 0; NaN passes */
    float kf = fmaf(v, SIG_K, VMF_ROUND_SHIFT);
    int32_t k = (int32_t)(bits_f(kf) - bits_f(VMF_ROUND_SHIFT)); /* the ulp at 1.5 * 2^23 is 1 */
    float kn = kf - VMF_ROUND_SHIFT;
    float r = fmaf(kn, -SIG_LN2_32_HI, v);
    r = fmaf(kn, -SIG_LN2_32_LO, r);
    uint32_t j = (uint32_t)k & 31u;
    int32_t n = (k - (int32_t)j) / 32; /* floor(k / 32), exactly */
    float t_hi = SIG_T_HI[j];
    float q = fmaf(r, SIG_C3, 0.5f);
    float p = fmaf(r * r, q, r);
    float m_lo = fmaf(t_hi, p, SIG_T_LO[j]);
    int32_t e1 = n < -126 ? -126 : n;
    float s1 = from_bits_f((uint32_t)(e1 + 127) << 23);
    float u_hi = t_hi * s1, u_lo = m_lo * s1;
    float d_hi = 1.0f + u_hi;
    float d_lo = ((1.0f - d_hi) + u_hi) + u_lo;
    bool neg = (ux >> 31) != 0;
    float num_hi = select_f(neg, t_hi, 1.0f);
    float inv = 1.0f / (d_hi + d_lo);
    float qq = num_hi * inv;
    float rem = fmaf(-qq, d_hi, num_hi);
    rem = fmaf(-qq, d_lo, select_f(neg, rem + m_lo, rem));
    float t = fmaf(rem, inv, qq);
    /* x < 0: t 2^n, rounded once: t > 0.35 and n >= -151, so t 2^(n + 26) is a normal float, exact, and only the
       multiply by 2^-26 rounds */
    int32_t es = neg ? n : 0;
    return t * from_bits_f((uint32_t)(es + 26 + 127) << 23) * 0x1p-26f;
}

MRT_VECTORIZE_CLONES
static void sigmoid_generic(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = sigmoid_one(x[i]);
}

MRT_VECTORIZE_CLONES
static void silu_generic(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = v * sigmoid_one(v);
    }
}

#ifdef VM_HAVE_AVX512
/* sigmoid16's quotient: (1, or t_hi + m_lo for the lanes in neg) / (d_hi + d_lo), from the reciprocal of the
   rounded denominator and one correction of the remainder (sigmoid16_near shares it) */
__attribute__((target("avx512f"), always_inline)) static inline __m512 sig_quotient(__mmask16 neg, __m512 t_hi,
                                                                                  __m512 m_lo, __m512 d_hi,
                                                                                  __m512 d_lo)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 num_hi = _mm512_mask_blend_ps(neg, one, t_hi);
    __m512 inv = _mm512_div_ps(one, _mm512_add_ps(d_hi, d_lo));
    __m512 qq = _mm512_mul_ps(num_hi, inv);
    __m512 rem = _mm512_fnmadd_ps(qq, d_hi, num_hi);
    rem = _mm512_fnmadd_ps(qq, d_lo, _mm512_mask_add_ps(rem, neg, rem, m_lo));
    return _mm512_fmadd_ps(rem, inv, qq);
}

/* sigmoid_one on 16 lanes, operation for operation */
__attribute__((target("avx512f"), always_inline)) static inline __m512 sigmoid16(__m512 xv)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512i xi = _mm512_castps_si512(xv);
    __mmask16 neg = _mm512_cmplt_epi32_mask(xi, _mm512_setzero_si512());
    __m512 v = _mm512_castsi512_ps(_mm512_or_si512(xi, _mm512_set1_epi32((int)0x80000000u)));
    v = _mm512_max_ps(_mm512_set1_ps(-104.0f), v); /* -104 > v ? -104 : v, as the C (a NaN v passes) */
    __m512 kf = _mm512_fmadd_ps(v, _mm512_set1_ps(SIG_K), _mm512_set1_ps(VMF_ROUND_SHIFT));
    __m512i k = _mm512_sub_epi32(_mm512_castps_si512(kf), _mm512_set1_epi32((int)0x4b400000)); /* VMF_ROUND_SHIFT */
    __m512 kn = _mm512_sub_ps(kf, _mm512_set1_ps(VMF_ROUND_SHIFT));
    __m512 r = _mm512_fmadd_ps(kn, _mm512_set1_ps(-SIG_LN2_32_HI), v);
    r = _mm512_fmadd_ps(kn, _mm512_set1_ps(-SIG_LN2_32_LO), r);
    /* the permute reads k's low 5 bits: j */
    __m512 t_hi = _mm512_permutex2var_ps(_mm512_loadu_ps(SIG_T_HI), k, _mm512_loadu_ps(SIG_T_HI + 16));
    __m512 t_lo = _mm512_permutex2var_ps(_mm512_loadu_ps(SIG_T_LO), k, _mm512_loadu_ps(SIG_T_LO + 16));
    __m512i n = _mm512_srai_epi32(k, 5);
    __m512 q = _mm512_fmadd_ps(r, _mm512_set1_ps(SIG_C3), _mm512_set1_ps(0.5f));
    __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
    __m512 m_lo = _mm512_fmadd_ps(t_hi, p, t_lo);
    __m512i e1 = _mm512_max_epi32(n, _mm512_set1_epi32(-126));
    __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(e1, _mm512_set1_epi32(127)), 23));
    __m512 u_hi = _mm512_mul_ps(t_hi, s1), u_lo = _mm512_mul_ps(m_lo, s1);
    __m512 d_hi = _mm512_add_ps(one, u_hi);
    __m512 d_lo = _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(one, d_hi), u_hi), u_lo);
    __m512 t = sig_quotient(neg, t_hi, m_lo, d_hi, d_lo);
    return _mm512_mask_scalef_ps(t, neg, t, _mm512_cvtepi32_ps(n)); /* t 2^n rounded once, for x < 0 */
}

/* sigmoid16 for a vector whose lanes all have -|x| = v >= -87 (no NaN): then the clamp to -104 does nothing and
 * n >= floor(-87 SIG_K / 32) = -126, so 2^max(n, -126) = 2^n is a normal float s1, t_hi s1 is exact (1 + u_hi
 * and its rounding error are each one fma) and t 2^n rounds once as t * s1, as scalef does: the same bits in 31
 * vector operations instead of 35, the range check included (no max, cvt or scalef; k + 127 * 32 gives j and
 * n + 127 at once). The kernel is bound by its operation count: SiLU over 4096 floats in L1 1.01 -> 0.86 cycles an
 * element, EfficientNet-B0's 65 Sigmoids (unfused, 1 thread) 1.55 -> 1.33 ms. tests/test_vmath.c checks it against
 * the portable loop; all 2^32 floats gave sigmoid16's bits when this was written (sigmoid and SiLU). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 sigmoid16_near(__m512 xv, __m512 v)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512i xi = _mm512_castps_si512(xv);
    __mmask16 neg = _mm512_cmplt_epi32_mask(xi, _mm512_setzero_si512());
    __m512 kf = _mm512_fmadd_ps(v, _mm512_set1_ps(SIG_K), _mm512_set1_ps(VMF_ROUND_SHIFT));
    /* kb = k + 127 * 32: its low 5 bits are j, kb >> 5 = n + 127 (kb >= 32 here) */
    __m512i kb = _mm512_sub_epi32(_mm512_castps_si512(kf), _mm512_set1_epi32((int)0x4b400000 - 127 * 32));
    __m512 kn = _mm512_sub_ps(kf, _mm512_set1_ps(VMF_ROUND_SHIFT));
    __m512 r = _mm512_fmadd_ps(kn, _mm512_set1_ps(-SIG_LN2_32_HI), v);
    r = _mm512_fmadd_ps(kn, _mm512_set1_ps(-SIG_LN2_32_LO), r);
    __m512 t_hi = _mm512_permutex2var_ps(_mm512_loadu_ps(SIG_T_HI), kb, _mm512_loadu_ps(SIG_T_HI + 16));
    __m512 t_lo = _mm512_permutex2var_ps(_mm512_loadu_ps(SIG_T_LO), kb, _mm512_loadu_ps(SIG_T_LO + 16));
    __m512 q = _mm512_fmadd_ps(r, _mm512_set1_ps(SIG_C3), _mm512_set1_ps(0.5f));
    __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
    __m512 m_lo = _mm512_fmadd_ps(t_hi, p, t_lo);
    __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_srli_epi32(kb, 5), 23));
    __m512 u_lo = _mm512_mul_ps(m_lo, s1);
    __m512 d_hi = _mm512_fmadd_ps(t_hi, s1, one);                                   /* 1 + u_hi */
    __m512 d_lo = _mm512_add_ps(_mm512_fmadd_ps(t_hi, s1, _mm512_sub_ps(one, d_hi)), u_lo); /* (1 - d_hi) + u_hi */
    __m512 t = sig_quotient(neg, t_hi, m_lo, d_hi, d_lo);
    return _mm512_mask_mul_ps(t, neg, t, s1);
}

/* mrt_bn_apply_f32 on 16 lanes: the same two fmas and add */
__attribute__((target("avx512f"), always_inline)) static inline __m512 bn16(__m512 x, const mrt_bn_coef *k)
{
    return _mm512_add_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(k->a_hi), _mm512_set1_ps(k->b_hi)),
                         _mm512_fmadd_ps(x, _mm512_set1_ps(k->a_lo), _mm512_set1_ps(k->b_lo)));
}

/* x * t with x as the instruction's first source, so a NaN x is the NaN that comes out (t is NaN too then, with the
   sign bit of -|x|): the compiler, free to swap the operands of _mm512_mul_ps, gave +NaN or -NaN depending on the
   code around it */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mul_x_first(__m512 x, __m512 t)
{
    __m512 r;
    __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(x), "v"(t));
    return r;
}

/* NV vectors (1 to 4, a constant) from x + i: sigmoid_one on each lane (x * sigmoid(x) when silu; with bn, of
   mrt_bn_apply_f32(x, *bn) computed in registers), by sigmoid16_near when every lane is within its range (as
   activations nearly always are), else sigmoid16. partial: lanes from n on are neither read nor written (they
   compute on 0, which is in the near range). */
__attribute__((target("avx512f"), always_inline)) static inline void sigmoid_block(float *y, const float *x,
                                                                                  int64_t i, int64_t n, bool silu,
                                                                                  const mrt_bn_coef *bn, const int NV,
                                                                                  bool partial)
{
    __m512 xv[4], v[4], t[4];
    __mmask16 m[4], near = 0xffff;
    for (int k = 0; k < NV; k++) {
        m[k] = partial ? mrt_mask16_first(n - i - 16 * k) : (__mmask16)0xffff;
        xv[k] = partial ? _mm512_maskz_loadu_ps(m[k], x + i + 16 * k) : _mm512_loadu_ps(x + i + 16 * k);
        if (bn) xv[k] = partial ? _mm512_maskz_mov_ps(m[k], bn16(xv[k], bn)) : bn16(xv[k], bn);
        /* -|x|, and whether every lane is >= -87 (false for NaN) */
        v[k] = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(xv[k]), _mm512_set1_epi32((int)0x80000000u)));
        near &= _mm512_cmp_ps_mask(v[k], _mm512_set1_ps(-87.0f), _CMP_GE_OQ);
    }
    if (near == 0xffff) {
        for (int k = 0; k < NV; k++) t[k] = sigmoid16_near(xv[k], v[k]);
    } else {
        for (int k = 0; k < NV; k++) t[k] = sigmoid16(xv[k]);
    }
    for (int k = 0; k < NV; k++) {
        __m512 r = silu ? mul_x_first(xv[k], t[k]) : t[k];
        if (partial) _mm512_mask_storeu_ps(y + i + 16 * k, m[k], r);
        else _mm512_storeu_ps(y + i + 16 * k, r);
    }
}

/* sigmoid_one on 16 lanes, operation for operation (GCC's vectorisation of it builds the powers of two from
   integer bits, and was 45 instructions a vector), four vectors at a time: one is a chain of some 30 dependent
   operations, and the last partial block goes as one too, of as many vectors as it needs (vector by vector, SiLU on
   arrays of 49 floats took 1.42 cycles an element, now 1.28; of 100, 1.11 -> 1.03). With bn, a fused
   BatchNormalization -> SiLU epilogue in one pass over y, not two: EfficientNet-B0 on 1 thread, the two passes'
   share of perf samples 23.0% -> 22.3%. (EfficientNet-B0's 7x7 planes left 1 of 49 to the portable loop once,
   which costs a vector's time per element.) */
__attribute__((target("avx512f"), always_inline)) static inline void sigmoid_avx512_body(float *y, const float *x,
                                                                                         int64_t n, bool silu,
                                                                                         const mrt_bn_coef *bn)
{
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) sigmoid_block(y, x, i, n, silu, bn, 4, false);
    switch ((n - i + 15) / 16) {
    case 1: sigmoid_block(y, x, i, n, silu, bn, 1, true); break;
    case 2: sigmoid_block(y, x, i, n, silu, bn, 2, true); break;
    case 3: sigmoid_block(y, x, i, n, silu, bn, 3, true); break;
    case 4: sigmoid_block(y, x, i, n, silu, bn, 4, true); break;
    default: break;
    }
}

__attribute__((target("avx512f"))) static void sigmoid_avx512(float *y, const float *x, int64_t n, bool silu)
{
    if (silu) sigmoid_avx512_body(y, x, n, true, NULL);
    else sigmoid_avx512_body(y, x, n, false, NULL);
}

__attribute__((target("avx512f"))) static void bn_sigmoid_avx512(float *y, int64_t n, const mrt_bn_coef *bn, bool silu)
{
    if (silu) sigmoid_avx512_body(y, y, n, true, bn);
    else sigmoid_avx512_body(y, y, n, false, bn);
}
#endif

/* the AVX-512 body where the CPU has it, else the portable loop */
static void sigmoid_any(float *y, const float *x, int64_t n, bool silu)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        sigmoid_avx512(y, x, n, silu);
        return;
    }
#endif
    if (silu) silu_generic(y, x, n);
    else sigmoid_generic(y, x, n);
}

MRT_VECTORIZE_CLONES
static void bn_sigmoid_generic(float *y, int64_t n, const mrt_bn_coef *bn, bool silu)
{
    mrt_bn_coef k = *bn;
    if (silu) {
        for (int64_t i = 0; i < n; i++) {
            float v = mrt_bn_apply_f32(y[i], k);
            y[i] = v * sigmoid_one(v);
        }
    } else {
        for (int64_t i = 0; i < n; i++) y[i] = sigmoid_one(mrt_bn_apply_f32(y[i], k));
    }
}

void mrt_vbn_sigmoid_f32(float *y, int64_t n, const mrt_bn_coef *bn, bool silu)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        bn_sigmoid_avx512(y, n, bn, silu);
        return;
    }
#endif
    bn_sigmoid_generic(y, n, bn, silu);
}

void mrt_vbn_sigmoid_f32_portable(float *y, int64_t n, const mrt_bn_coef *bn, bool silu)
{
    bn_sigmoid_generic(y, n, bn, silu);
}

void mrt_vsigmoid_f32(float *y, const float *x, int64_t n) { sigmoid_any(y, x, n, false); }
void mrt_vsilu_f32(float *y, const float *x, int64_t n) { sigmoid_any(y, x, n, true); }

void mrt_vsigmoid_f32_portable(float *y, const float *x, int64_t n) { sigmoid_generic(y, x, n); }
void mrt_vsilu_f32_portable(float *y, const float *x, int64_t n) { silu_generic(y, x, n); }

MRT_VECTORIZE_CLONES
void mrt_vtanh_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t sign = bits_f(x[i]) & 0x80000000u;
        /* tanh(x) = expm1(2x) / (expm1(2x) + 2): no cancellation for either sign; |x| > 10 rounds to +-1 */
        double s, p = exp_parts(2.0 * clamp_abs(x[i], 10.0f), &s);
        double em1 = s * p + (s - 1.0);
        float t = (float)(em1 / (em1 + 2.0));
        /* tanh is odd: the sign is x's (this keeps -0, which em1's sum would turn into +0) */
        y[i] = from_bits_f((bits_f(t) & 0x7fffffffu) | sign);
    }
}

/* c[0] x^(n-1) + ... + c[n-1] by Horner's rule, each step one fma (the fits below list their coefficients
   highest power first) */
static inline double horner(const double *c, int n, double x)
{
    double p = c[0];
    _Pragma("GCC unroll 24") for (int i = 1; i < n; i++) p = fma(p, x, c[i]);
    return p;
}

/* erf(a) = a * P(a^2) below 0.75, P a fit of erf(a)/a (relative error 6e-15): erf_pair's small range */
static inline double erf_small(double a)
{
    double w = a * a;
    static const double c[] = {1.2828569663771478e-06, -1.4559609325060184e-05, 0.00012034993805898452,
                               -0.00085476622920771744, 0.0052239648047169148, -0.026866169252373652,
                               0.11283791663362774, -0.37612638903024209, 1.1283791670955072};
    double ps = horner(c, (int)(sizeof c / sizeof *c), w);
    return a * ps;
}

/* erf(a) and erfc(a) for a >= 0 (a NaN gives NaNs). Below 0.75: erf(a) = a * P(a^2), P a fit of erf(a)/a
   (relative error 6e-15). From 0.75: erfc(a) = exp(-a^2) * Q(t), Q a fit of erfcx = exp(a^2) erfc(a) in
   t = (a - 3) / (a + 3) over a in [0.75, 12] (relative error 1.4e-11); a is clamped to 12, where erfc(12) ~ 1e-64
   is 0 for any float use. Both fits: Chebyshev interpolation in float64 against mpmath, then power form. The Horner
   steps (horner) are fma() (one rounding, on every clone: libm's fma on the baseline build):
   a third of the time off ConvNeXt's and MaxViT's GELUs, and over every float the results of mrt_vgelu_f32 are the
   same bits as with a rounded multiply then add (checked exhaustively). */
static inline double erf_pair(double a, double *erfc_out)
{
    double e_small = erf_small(a);

    double ab = select_d(a > 12.0, 12.0, a);
    double u = (ab - 3.0) / (ab + 3.0) * (1.0 / 0.6);
    static const double c[] = {-1.4372995735120378e-08, -3.8513810942074434e-08, 3.8339986341212805e-07,
                               4.4623496333042871e-07, -1.0025734137450011e-05, 1.9818169577854118e-05,
                               0.0001991799227246434, -0.001896762420812425, 0.0092878926497975186,
                               -0.032425042076389021, 0.088417368607191626, -0.19574013603320647,
                               0.17900115118148396};
    double q = horner(c, (int)(sizeof c / sizeof *c), u);
    double s, p = exp_parts(-(ab * ab), &s);
    double c_big = (s + s * p) * q;

    bool small = a < 0.75;
    *erfc_out = select_d(small, 1.0 - e_small, c_big);
    return select_d(small, e_small, 1.0 - c_big);
}

/* erf(a) for a >= 0 (NaN gives NaN), for mrt_verf_f32 and the GELU chain: a clamped to 4 (above 3.92 erf rounds to
   1 in float; the clamp gives exactly that) falls in one of 16 intervals of width 1/4, k = round(4a - 1/2) (a tie,
   on a boundary, goes to either), and erf is a degree-9 polynomial in t = a - ctr[k]: fitted to erf(a)/a times t on
   [0, 1/4] (relative accuracy near 0), to erf on [ctr - 1/8, ctr + 1/8] elsewhere (scripts/fit_erf_intervals.py:
   Chebyshev interpolation against mpmath, 3e-14 relative; the fit with one range below 0.75 and one degree-18 polynomial above it was 1.6e-10
   absolute). Nine fmas on coefficients picked by k: the AVX-512 body (erf8) picks them with vpermt2pd from two
   8-double halves, GCC's clones gather; the same IEEE operations in the same order, so the same bits. The 22
   permutes per 16 floats bound it (8 intervals of degree 11, one-table vpermpd: 26, and 6% slower). ViT's four
   GELU chains fused into their MatMuls, 1 thread: 0.61 ms a MatMul against 0.44 without; the chain on its
   197 x 1024 output (L2-resident, best of 200) 175-179 us -> 138-147 us. Over every float, 33437 results differ
   from the previous fit's (which rounded 33098 differently from float(libm's erf); this fit: 361). */
static _Alignas(64) const double erf_ctr[16] = {0.0, 0.375, 0.625, 0.875, 1.125, 1.375, 1.625, 1.875, 2.125, 2.375,
     2.625, 2.875, 3.125, 3.375, 3.625, 3.875};
static _Alignas(64) const double erf_coef[10][16] = {
    {0.004611596176173275, 0.00012856719679216842, -0.003606971959918487, -0.0032416551080639636,
     -0.0003670554076415982, 0.0015647064307067829, 0.001405772118552014, 0.0003651159372072336,
     -0.00028608306675571995, -0.0003362900246150994, -0.00015299968410034835, -1.6716465577261426e-05,
     2.5201595330330943e-05, 2.1239128330120654e-05, 1.0086488603657667e-05, 3.4979354676724383e-06},
    {0.00037928301949436566, 0.011170724831853787, 0.006657518045442788, -0.0018112534647166149,
     -0.005986351554151087, -0.004248364951664495, -0.0005903438391795851, 0.001415296952862556,
     0.0013785350731168025, 0.0005962276654190374, 3.752697206180825e-05, -0.000134301785274119,
     -0.00011110962750440083, -5.50250385550501e-05, -2.023432840990261e-05, -5.913725516857376e-06},
    {-0.026973229833404704, -0.0054589557918153855, 0.013909648322907454, 0.018595518974152684,
     0.009606987848938417, -0.0014188820062976122, -0.006184194328643184, -0.004928432913265679,
     -0.0018693077621199546, 0.0001232526916433979, 0.0006808735380348827, 0.0005285779304936161,
     0.0002664844580030389, 0.00010218655465190723, 3.1513694107307704e-05, 8.032829074564078e-06},
    {1.6709745629318805e-05, -0.05010558775597218, -0.04134444213857055, -0.010368261973996505, 0.01553622206531808,
     0.022161061938501297, 0.014414969675913259, 0.004105394854446179, -0.0018213467599803514,
     -0.0031141078880278527, -0.0022468732217147853, -0.001140092491498211, -0.00045231729502592246,
     -0.00014640644215282268, -3.952712938601438e-05, -9.020203876128616e-06},
    {0.11283642051037614, 0.045475350396233204, -0.027413409056220472, -0.06721587622411908, -0.06132368412758459,
     -0.030605977274917297, -0.002134925215575332, 0.011462583582314194, 0.012495482873179978, 0.00835739292832559,
     0.004217880571401793, 0.001713263235796695, 0.0005769614824581142, 0.00016377394245848626,
     3.9592337726662455e-05, 8.208847247752502e-06},
    {7.428161968197322e-08, 0.1665833816047028, 0.17645985145816592, 0.11239656509064272, 0.027973300555234896,
     -0.030500609555963825, -0.04971886421029123, -0.042259882669743724, -0.026360828776146268,
     -0.013133213402742238, -0.005414293586988544, -0.0018817599712539922, -0.0005575739372295904,
     -0.00014188803574264903, -3.116860335844006e-05, -5.9325161179692745e-06},
    {-0.3761263908638404, -0.23487619395437875, -0.05567184115313495, 0.09292360176786656, 0.16245233298578657,
     0.1579377068580987, 0.11484061964744105, 0.06744109256075992, 0.03303740518573896, 0.01373053350491429,
     0.0048904263176218175, 0.0015025360061553389, 0.00040001978293490326, 9.258295143554342e-05,
     1.8673744893973678e-05, 3.2884895035571593e-06},
    {1.7288520122286864e-11, -0.3676323035680877, -0.477187209846112, -0.4591519146340643, -0.3580582033200465,
     -0.2342446888222239, -0.13076742090952836, -0.06289842829314227, -0.026224243804741122, -0.00951538492178052,
     -0.003013172205870991, -0.0008344063134244813, -0.00020237088513163945, -4.303712517265193e-05,
     -8.032711010167647e-06, -1.3168117197489096e-06},
    {1.128379167095486, 0.9803528095459081, 0.7634995357606061, 0.524745045290149, 0.318273958500769,
     0.17035977368751498, 0.08047225902251094, 0.03354582842421621, 0.012340820614333867, 0.004006477861670277,
     0.0011478751258826565, 0.0002902282828624712, 6.475868323470136e-05, 1.2751740799763865e-05,
     2.2159202846345663e-06, 3.3982238178199934e-07},
    {0.0, 0.40411690943481865, 0.6232408821884167, 0.7840750610598612, 0.8883882317017099, 0.9481700727820909,
     0.978443733239983, 0.9919900576701193, 0.9973459706405174, 0.999217061782109, 0.9997946242638589,
     0.9999521451602563, 0.9999901032653747, 0.9999981847185726, 0.9999997048598075, 0.999999957486056},
};

#define ERF_K15 (VM_ROUND_SHIFT + 15.0)
static inline double erf_only(double a)
{
    double ac = select_d(a > 4.0, 4.0, a);
    double kd = (ac * 4.0 - 0.5) + VM_ROUND_SHIFT; /* 1.5 * 2^52 + k, rounded to nearest even */
    kd = select_d(kd > ERF_K15, ERF_K15, kd);
    int k = (int)((bits_d(kd) - bits_d(VM_ROUND_SHIFT)) & 15u); /* any interval for a NaN: t is NaN */
    double t = ac - erf_ctr[k];
    double p = erf_coef[0][k];
    _Pragma("GCC unroll 16") for (int j = 1; j < 10; j++) p = fma(p, t, erf_coef[j][k]);
    return p;
}

/* mrt_verf_f32's value for one element: erf is odd, so x's sign is restored on erf(|x|) (keeps -0) */
static inline float erf_f32(float x)
{
    uint32_t ux = bits_f(x);
    double e = erf_only((double)from_bits_f(ux & 0x7fffffffu));
    return from_bits_f(bits_f((float)e) | (ux & 0x80000000u));
}

MRT_VECTORIZE_CLONES
static void erf_generic(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = erf_f32(x[i]);
}

MRT_VECTORIZE_CLONES
static void gelu_erf_nodes_generic(float *y, int64_t n, const mrt_gelu_erf_nodes *g)
{
    float div = g->div, add = g->add, mul = g->mul;
    for (int64_t i = 0; i < n; i++) {
        float x = y[i], e = erf_f32(x / div);
        float a = g->add_first ? add + e : e + add;
        float m = g->x_first ? x * a : a * x;
        y[i] = g->mul_first ? mul * m : m * mul;
    }
}

#ifdef VM_HAVE_AVX512
/* erf_only on 8 lanes, operation for operation. min(4, a) returns a NaN a (its second operand), as the C's select
   does; min(kd, K15) turns a NaN into interval 15 (t stays NaN). */
__attribute__((target("avx512f"), always_inline)) static inline __m512d erf8(__m512d a)
{
    __m512d ac = _mm512_min_pd(_mm512_set1_pd(4.0), a);
    __m512d kd = _mm512_add_pd(_mm512_sub_pd(_mm512_mul_pd(ac, _mm512_set1_pd(4.0)), _mm512_set1_pd(0.5)),
                               _mm512_set1_pd(VM_ROUND_SHIFT));
    __m512i k = _mm512_castpd_si512(_mm512_min_pd(kd, _mm512_set1_pd(ERF_K15))); /* low 4 bits: k */
    __m512d t = _mm512_sub_pd(ac, _mm512_permutex2var_pd(_mm512_load_pd(erf_ctr), k, _mm512_load_pd(erf_ctr + 8)));
    __m512d p = _mm512_permutex2var_pd(_mm512_load_pd(erf_coef[0]), k, _mm512_load_pd(erf_coef[0] + 8));
    for (int j = 1; j < 10; j++)
        p = _mm512_fmadd_pd(p, t,
                            _mm512_permutex2var_pd(_mm512_load_pd(erf_coef[j]), k, _mm512_load_pd(erf_coef[j] + 8)));
    return p;
}

/* erf_f32 on 16 lanes: erf8 on each half of |x|, rounded to float, x's sign restored */
__attribute__((target("avx512f"), always_inline)) static inline __m512 erf16(__m512 x)
{
    __m512i xi = _mm512_castps_si512(x);
    __m512i sign = _mm512_and_si512(xi, _mm512_set1_epi32((int)0x80000000u));
    __m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32((int)0x80000000u), xi));
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(a));
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    __m256 el = _mm512_cvtpd_ps(erf8(lo)), eh = _mm512_cvtpd_ps(erf8(hi));
    __m512 e = _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(el)), _mm256_castps_pd(eh), 1));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(e), sign));
}

__attribute__((target("avx512f"))) static void erf_avx512(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = mrt_mask16_first(n - i);
        _mm512_mask_storeu_ps(y + i, m, erf16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

/* gelu_erf_nodes_generic on 16 lanes, operation for operation */
__attribute__((target("avx512f"))) static void gelu_erf_nodes_avx512(float *y, int64_t n, const mrt_gelu_erf_nodes *g)
{
    const __m512 div = _mm512_set1_ps(g->div), add = _mm512_set1_ps(g->add), mul = _mm512_set1_ps(g->mul);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = mrt_mask16_first(n - i);
        __m512 x = _mm512_maskz_loadu_ps(m, y + i), e = erf16(_mm512_div_ps(x, div));
        __m512 a = g->add_first ? _mm512_add_ps(add, e) : _mm512_add_ps(e, add);
        __m512 p = g->x_first ? _mm512_mul_ps(x, a) : _mm512_mul_ps(a, x);
        _mm512_mask_storeu_ps(y + i, m, g->mul_first ? _mm512_mul_ps(mul, p) : _mm512_mul_ps(p, mul));
    }
}
#endif

void mrt_verf_f32(float *y, const float *x, int64_t n)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        erf_avx512(y, x, n);
        return;
    }
#endif
    erf_generic(y, x, n);
}

void mrt_vgelu_erf_nodes_f32(float *y, int64_t n, const mrt_gelu_erf_nodes *g)
{
#ifdef VM_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        gelu_erf_nodes_avx512(y, n, g);
        return;
    }
#endif
    gelu_erf_nodes_generic(y, n, g);
}

void mrt_verf_f32_portable(float *y, const float *x, int64_t n) { erf_generic(y, x, n); }
void mrt_vgelu_erf_nodes_f32_portable(float *y, int64_t n, const mrt_gelu_erf_nodes *g)
{
    gelu_erf_nodes_generic(y, n, g);
}

MRT_VECTORIZE_CLONES
void mrt_vgelu_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double xd = x[i], v = xd * 0.70710678118654752440; /* x / sqrt(2) */
        double c, e = erf_pair(v < 0 ? -v : v, &c);
        /* 1 + erf(v) for v >= 0; erfc(-v) for v < 0, which keeps its relative precision far into the tail.
           Beyond the clamp (|v| > 12) erfc is 0: -inf gives -inf * 0 = NaN, as 0.5 x (1 + erf(x / sqrt 2)) does. */
        double phi2 = select_d(v >= 0, 1.0 + e, select_d(v < -12.0, 0.0, c));
        y[i] = (float)(0.5 * xd * phi2);
    }
}
