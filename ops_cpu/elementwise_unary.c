/* Unary elementwise CPU kernels: Abs, Neg, Sqrt, Exp, Log, Reciprocal, Floor, Ceil, Round, Sign, Erf, the
 * trig/hyperbolic family, IsNaN, IsInf, Not, BitwiseNot, the activations (Relu ... Swish-24) and Clip (1-13).
 * float32 math stays in float, float16/bfloat16 are computed in float; float8 only for IsNaN/IsInf. */
#include <float.h>
#include <math.h>

#include "ops_cpu/elementwise.h"
#include "ops_cpu/vmath.h"

#define EW_SQRT1_2 0.70710678118654752440
#define EW_SQRT_2_PI 0.79788456080286535588 /* sqrt(2/pi) */

/* o[i] = EXPR(x) after the prologue PRO (declarations using p); EXPR is the variadic tail so it may hold commas. */
#define UN_LOOP(NAME, TI, TO, PRO, ...)                                                                        \
    static void NAME(void *o_, const void *a_, int64_t n, const mrt_ew_params *p)                             \
    {                                                                                                          \
        TO *o = (TO *)o_;                                                                                      \
        const TI *a = (const TI *)a_;                                                                          \
        (void)p;                                                                                               \
        PRO                                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            TI x = a[i];                                                                                       \
            o[i] = (TO)(__VA_ARGS__);                                                                          \
        }                                                                                                      \
    }

/* float + double loops and their table (float16/bfloat16 reach the float loop through the runner). */
#define UN_FLOAT(name, PRO_F, EXPR_F, PRO_D, EXPR_D)                                                           \
    UN_LOOP(name##_f32, float, float, PRO_F, EXPR_F)                                                           \
    UN_LOOP(name##_f64, double, double, PRO_D, EXPR_D)                                                         \
    static const mrt_ew_unary_fn name##_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = name##_f32,             \
                                                                  [MRT_DTYPE_DOUBLE] = name##_f64};

/* float32 arrays of at least this many elements are split over the session's threads (in ranges of at least
   this many): 64 KB per range keeps the hand-off cost small next to the work. */
#define UN_GRAIN 16384

typedef struct un_job {
    mrt_ew_unary_fn fn;
    float *o;
    const float *a;
    const mrt_ew_params *p;
} un_job;

static void un_range(void *arg, int64_t begin, int64_t end)
{
    const un_job *j = (const un_job *)arg;
    j->fn(j->o + begin, j->a + begin, end - begin, j->p);
}

static mrt_status run_unary(mrt_op_ctx *ctx, const mrt_ew_unary_fn *fns, const mrt_ew_params *p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input X is missing");
    mrt_ew_params none = {0};
    if (!p) p = &none;
    int64_t n = mrt_tensor_numel(x);
    /* float32 in and out, contiguous: every loop here is element-wise (o[i] from a[i] alone, the same
       operations whatever the range), so splitting the array leaves the bits independent of the thread count */
    if (x->dtype == MRT_DTYPE_FLOAT && y->dtype == MRT_DTYPE_FLOAT && fns[MRT_DTYPE_FLOAT] && n >= 2 * UN_GRAIN) {
        un_job j = {fns[MRT_DTYPE_FLOAT], (float *)y->data, (const float *)x->data, p};
        mrt_parallel_for(ctx, n, UN_GRAIN, un_range, &j);
        return MRT_STATUS_OK;
    }
    return mrt_ew_run_unary(ctx, fns, x, y, p);
}

/* The float loops of the transcendental ops are ops_cpu/vmath.c's (vectorized; Sigmoid's is also the fused
   epilogues', so fused and stand-alone Sigmoid/SiLU give the same bits). */
#define UN_VMATH(name, VFN, EXPR_D)                                                                            \
    static void name##_f32(void *o, const void *a, int64_t n, const mrt_ew_params *p)                        \
    {                                                                                                          \
        (void)p;                                                                                               \
        VFN((float *)o, (const float *)a, n);                                                                  \
    }                                                                                                          \
    UN_LOOP(name##_f64, double, double, , EXPR_D)                                                              \
    static const mrt_ew_unary_fn name##_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = name##_f32,             \
                                                                  [MRT_DTYPE_DOUBLE] = name##_f64};

/* x * sigmoid(PRE(x)) in blocks through mrt_vsigmoid_f32 (o may alias a: each block reads a before writing o) */
#define UN_X_SIGMOID(name, PRO, PRE, EXPR_D)                                                                   \
    static void name##_f32(void *o_, const void *a_, int64_t n, const mrt_ew_params *p)                      \
    {                                                                                                          \
        float *o = (float *)o_, t[256];                                                                        \
        const float *a = (const float *)a_;                                                                    \
        (void)p;                                                                                               \
        PRO                                                                                                    \
        for (int64_t i = 0; i < n; i += 256) {                                                                 \
            int64_t m = n - i < 256 ? n - i : 256;                                                             \
            for (int64_t k = 0; k < m; k++) {                                                                  \
                float x = a[i + k];                                                                            \
                t[k] = PRE;                                                                                    \
            }                                                                                                  \
            mrt_vsigmoid_f32(t, t, m);                                                                         \
            for (int64_t k = 0; k < m; k++) o[i + k] = a[i + k] * t[k];                                        \
        }                                                                                                      \
    }                                                                                                          \
    UN_LOOP(name##_f64, double, double, PRO##_D, EXPR_D)                                                       \
    static const mrt_ew_unary_fn name##_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = name##_f32,             \
                                                                  [MRT_DTYPE_DOUBLE] = name##_f64};

#define SIMPLE_KERNEL(kname, table) \
    mrt_status mrt_cpu_##kname(mrt_op_ctx *ctx) { return run_unary(ctx, table##_fns, NULL); }

/* ------------------------------------------------------------------ stable helpers */

static inline double sigmoid_d(double x)
{
    double e = exp(-fabs(x));
    double s = 1.0 / (1.0 + e);
    return x >= 0 ? s : e * s;
}

/* log(1 + exp(x)) without overflow; NaN stays NaN */
static inline float softplus_f(float x) { return (x > 0 ? x : 0.0f) + log1pf(expf(-fabsf(x))); }
static inline double softplus_d(double x) { return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x))); }

/* ------------------------------------------------------------------ math */

/* Abs, Neg, Sign and Relu also cover integers. */
#define ABS_S(sfx, T, W, DT) UN_LOOP(abs_##sfx, T, T, , x < 0 ? (T)((W)0 - (W)x) : x)
#define ABS_U(sfx, T, W, DT) UN_LOOP(abs_##sfx, T, T, , x)
#define NEG_S(sfx, T, W, DT) UN_LOOP(neg_##sfx, T, T, , (T)((W)0 - (W)x))
#define SIGN_S(sfx, T, W, DT) UN_LOOP(sign_##sfx, T, T, , (x > 0) - (x < 0))
#define SIGN_U(sfx, T, W, DT) UN_LOOP(sign_##sfx, T, T, , x > 0)
#define RELU_S(sfx, T, W, DT) UN_LOOP(relu_##sfx, T, T, , x < 0 ? 0 : x)
#define BNOT(sfx, T, W, DT) UN_LOOP(bnot_##sfx, T, T, , ~x)
MRT_EW_SINTS(ABS_S)
MRT_EW_UINTS(ABS_U)
MRT_EW_SINTS(NEG_S)
MRT_EW_SINTS(SIGN_S)
MRT_EW_UINTS(SIGN_U)
MRT_EW_SINTS(RELU_S)
MRT_EW_INTS(BNOT)
UN_LOOP(abs_f32, float, float, , fabsf(x))
UN_LOOP(abs_f64, double, double, , fabs(x))
UN_LOOP(neg_f32, float, float, , -x)
UN_LOOP(neg_f64, double, double, , -x)
/* Sign and Relu keep NaN (comparisons with NaN are false) */
UN_LOOP(sign_f32, float, float, , x > 0 ? 1.0f : x < 0 ? -1.0f : x)
UN_LOOP(sign_f64, double, double, , x > 0 ? 1.0 : x < 0 ? -1.0 : x)
UN_LOOP(relu_f32, float, float, , x < 0 ? 0.0f : x)
UN_LOOP(relu_f64, double, double, , x < 0 ? 0.0 : x)

#define ENTRY(name, sfx, T, W, DT) [DT] = name##_##sfx,
#define ABS_E(sfx, T, W, DT) ENTRY(abs, sfx, T, W, DT)
#define NEG_E(sfx, T, W, DT) ENTRY(neg, sfx, T, W, DT)
#define SIGN_E(sfx, T, W, DT) ENTRY(sign, sfx, T, W, DT)
#define RELU_E(sfx, T, W, DT) ENTRY(relu, sfx, T, W, DT)
#define BNOT_E(sfx, T, W, DT) ENTRY(bnot, sfx, T, W, DT)
static const mrt_ew_unary_fn abs_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(ABS_E)[MRT_DTYPE_FLOAT] = abs_f32, [MRT_DTYPE_DOUBLE] = abs_f64};
static const mrt_ew_unary_fn neg_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_SINTS(NEG_E)[MRT_DTYPE_FLOAT] = neg_f32, [MRT_DTYPE_DOUBLE] = neg_f64};
static const mrt_ew_unary_fn sign_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(SIGN_E)[MRT_DTYPE_FLOAT] = sign_f32, [MRT_DTYPE_DOUBLE] = sign_f64};
static const mrt_ew_unary_fn relu_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_SINTS(RELU_E)[MRT_DTYPE_FLOAT] = relu_f32, [MRT_DTYPE_DOUBLE] = relu_f64};
static const mrt_ew_unary_fn bnot_fns[MRT_DTYPE_COUNT_] = {MRT_EW_INTS(BNOT_E)};

UN_FLOAT(sqrt, , sqrtf(x), , sqrt(x))
UN_VMATH(exp, mrt_vexp_f32, exp(x))
UN_FLOAT(log, , logf(x), , log(x))
UN_FLOAT(recip, , 1.0f / x, , 1.0 / x)
UN_FLOAT(floor, , floorf(x), , floor(x))
UN_FLOAT(ceil, , ceilf(x), , ceil(x))
/* rint rounds half to even in the default rounding mode, which minirt never changes */
UN_FLOAT(round, , rintf(x), , rint(x))
UN_VMATH(erf, mrt_verf_f32, erf(x))
UN_FLOAT(sin, , sinf(x), , sin(x))
UN_FLOAT(cos, , cosf(x), , cos(x))
UN_FLOAT(tan, , tanf(x), , tan(x))
UN_FLOAT(asin, , asinf(x), , asin(x))
UN_FLOAT(acos, , acosf(x), , acos(x))
UN_FLOAT(atan, , atanf(x), , atan(x))
UN_FLOAT(sinh, , sinhf(x), , sinh(x))
UN_FLOAT(cosh, , coshf(x), , cosh(x))
/* libm's inverse hyperbolics are accurate in the tails (|x| large or tiny, +-1 for atanh) */
UN_FLOAT(asinh, , asinhf(x), , asinh(x))
UN_FLOAT(acosh, , acoshf(x), , acosh(x))
UN_FLOAT(atanh, , atanhf(x), , atanh(x))

SIMPLE_KERNEL(abs, abs)
SIMPLE_KERNEL(neg, neg)
SIMPLE_KERNEL(sqrt, sqrt)
SIMPLE_KERNEL(exp, exp)
SIMPLE_KERNEL(log, log)
SIMPLE_KERNEL(reciprocal, recip)
SIMPLE_KERNEL(floor, floor)
SIMPLE_KERNEL(ceil, ceil)
SIMPLE_KERNEL(round, round)
SIMPLE_KERNEL(sign, sign)
SIMPLE_KERNEL(erf, erf)
SIMPLE_KERNEL(sin, sin)
SIMPLE_KERNEL(cos, cos)
SIMPLE_KERNEL(tan, tan)
SIMPLE_KERNEL(asin, asin)
SIMPLE_KERNEL(acos, acos)
SIMPLE_KERNEL(atan, atan)
SIMPLE_KERNEL(sinh, sinh)
SIMPLE_KERNEL(cosh, cosh)
SIMPLE_KERNEL(asinh, asinh)
SIMPLE_KERNEL(acosh, acosh)
SIMPLE_KERNEL(atanh, atanh)
SIMPLE_KERNEL(relu, relu)
SIMPLE_KERNEL(bitwise_not, bnot)

/* ------------------------------------------------------------------ predicates and logic */

UN_LOOP(isnan_f32, float, uint8_t, , isnan(x))
UN_LOOP(isnan_f64, double, uint8_t, , isnan(x))
static const mrt_ew_unary_fn isnan_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = isnan_f32,
                                                            [MRT_DTYPE_DOUBLE] = isnan_f64};
#define ISINF_PRO const bool neg = p->mode & 1; const bool pos = (p->mode & 2) != 0;
UN_LOOP(isinf_f32, float, uint8_t, ISINF_PRO, isinf(x) && (x > 0 ? pos : neg))
UN_LOOP(isinf_f64, double, uint8_t, ISINF_PRO, isinf(x) && (x > 0 ? pos : neg))
static const mrt_ew_unary_fn isinf_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = isinf_f32,
                                                            [MRT_DTYPE_DOUBLE] = isinf_f64};
UN_LOOP(not_b, uint8_t, uint8_t, , x == 0)
static const mrt_ew_unary_fn not_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_BOOL] = not_b};

static bool is_float8(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT8E4M3FN || dt == MRT_DTYPE_FLOAT8E4M3FNUZ || dt == MRT_DTYPE_FLOAT8E5M2 ||
           dt == MRT_DTYPE_FLOAT8E5M2FNUZ;
}

/* IsNaN/IsInf on float8 (opset 20): decode each element through the generic loader. */
static mrt_status run_float8_predicate(mrt_op_ctx *ctx, const mrt_ew_unary_fn *fns, const mrt_ew_params *p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input X is missing");
    if (!is_float8(x->dtype)) return mrt_ew_run_unary(ctx, fns, x, y, p);
    int64_t n = mrt_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v = mrt_load_f64(x->dtype, x->data, i);
        fns[MRT_DTYPE_DOUBLE]((uint8_t *)y->data + i, &v, 1, p);
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_cpu_isnan(mrt_op_ctx *ctx)
{
    mrt_ew_params p = {0};
    return run_float8_predicate(ctx, isnan_fns, &p);
}

mrt_status mrt_cpu_isinf(mrt_op_ctx *ctx)
{
    mrt_ew_params p = {0};
    p.mode = (mrt_attr_int(ctx, "detect_negative", 1) ? 1 : 0) | (mrt_attr_int(ctx, "detect_positive", 1) ? 2 : 0);
    return run_float8_predicate(ctx, isinf_fns, &p);
}

SIMPLE_KERNEL(not, not)

/* ------------------------------------------------------------------ activations */

UN_VMATH(sigmoid, mrt_vsigmoid_f32, sigmoid_d(x))
UN_VMATH(tanh, mrt_vtanh_f32, tanh(x))
UN_FLOAT(leaky, const float al = (float)p->alpha;, x < 0 ? al * x : x, const double al = p->alpha;,
         x < 0 ? al * x : x)
UN_FLOAT(elu, const float al = (float)p->alpha;, x < 0 ? al * expm1f(x) : x, const double al = p->alpha;,
         x < 0 ? al * expm1(x) : x)
UN_FLOAT(selu, const float al = (float)p->alpha; const float ga = (float)p->gamma;,
         x > 0 ? ga * x : ga * al * expm1f(x), const double al = p->alpha; const double ga = p->gamma;,
         x > 0 ? ga * x : ga * al * expm1(x))
/* max(0,x) + min(0, alpha*(exp(x/alpha)-1)): one branch is always zero */
UN_FLOAT(celu, const float al = (float)p->alpha;, x >= 0 ? x : al * expm1f(x / al), const double al = p->alpha;,
         x >= 0 ? x : al * expm1(x / al))
UN_FLOAT(threlu, const float al = (float)p->alpha;, x > al ? x : 0.0f, const double al = p->alpha;,
         x > al ? x : 0.0)
/* clamp written with comparisons so NaN passes through (fminf/fmaxf would drop it) */
#define HSIG_D(v) ((v) < 0 ? 0.0 : (v) > 1 ? 1.0 : (v))
UN_FLOAT(hsig, const float al = (float)p->alpha; const float be = (float)p->beta;, mrt_clamp01_f32(al * x + be),
         const double al = p->alpha; const double be = p->beta;, HSIG_D(al * x + be))
UN_FLOAT(hswish, , mrt_hardswish_f32(x), , x * HSIG_D(x * (1.0 / 6.0) + 0.5))
UN_FLOAT(softplus, , softplus_f(x), , softplus_d(x))
UN_FLOAT(softsign, , x / (1.0f + fabsf(x)), , x / (1.0 + fabs(x)))
/* 0.5*x*(1+erf(x/sqrt2)) == 0.5*x*erfc(-x/sqrt2), which keeps its precision for negative x */
UN_VMATH(gelu, mrt_vgelu_f32, 0.5 * x * erfc(-x * EW_SQRT1_2))
/* 0.5*x*(1+tanh(u)) == x*sigmoid(2u), without the cancellation for negative x */
#define NO_PRO
#define NO_PRO_D
UN_X_SIGMOID(gelu_tanh, NO_PRO, 2.0f * (float)EW_SQRT_2_PI * (x + 0.044715f * x * x * x),
             x * sigmoid_d(2.0 * EW_SQRT_2_PI * (x + 0.044715 * x * x * x)))
UN_FLOAT(mish, , x * tanhf(softplus_f(x)), , x * tanh(softplus_d(x)))
#define SWISH_PRO const float al = (float)p->alpha;
#define SWISH_PRO_D const double al = p->alpha;
UN_X_SIGMOID(swish, SWISH_PRO, al * x, x * sigmoid_d(al * x))

SIMPLE_KERNEL(sigmoid, sigmoid)
SIMPLE_KERNEL(tanh, tanh)
SIMPLE_KERNEL(softplus, softplus)
SIMPLE_KERNEL(softsign, softsign)
SIMPLE_KERNEL(mish, mish)

static mrt_status run_alpha(mrt_op_ctx *ctx, const mrt_ew_unary_fn *fns, float alpha_default)
{
    mrt_ew_params p = {0};
    p.alpha = mrt_attr_float(ctx, "alpha", alpha_default);
    return run_unary(ctx, fns, &p);
}

mrt_status mrt_cpu_leaky_relu(mrt_op_ctx *ctx) { return run_alpha(ctx, leaky_fns, MRT_LEAKY_RELU_ALPHA); }
mrt_status mrt_cpu_elu(mrt_op_ctx *ctx) { return run_alpha(ctx, elu_fns, MRT_ELU_ALPHA); }
mrt_status mrt_cpu_celu(mrt_op_ctx *ctx) { return run_alpha(ctx, celu_fns, MRT_CELU_ALPHA); }
mrt_status mrt_cpu_thresholded_relu(mrt_op_ctx *ctx) { return run_alpha(ctx, threlu_fns, MRT_THRESHOLDED_RELU_ALPHA); }
mrt_status mrt_cpu_swish(mrt_op_ctx *ctx) { return run_alpha(ctx, swish_fns, 1.0f); }

mrt_status mrt_cpu_selu(mrt_op_ctx *ctx)
{
    mrt_ew_params p = {0};
    p.alpha = mrt_attr_float(ctx, "alpha", MRT_SELU_ALPHA);
    p.gamma = mrt_attr_float(ctx, "gamma", MRT_SELU_GAMMA);
    return run_unary(ctx, selu_fns, &p);
}

mrt_status mrt_cpu_hard_sigmoid(mrt_op_ctx *ctx)
{
    mrt_ew_params p = {0};
    p.alpha = mrt_attr_float(ctx, "alpha", MRT_HARD_SIGMOID_ALPHA);
    p.beta = mrt_attr_float(ctx, "beta", MRT_HARD_SIGMOID_BETA);
    return run_unary(ctx, hsig_fns, &p);
}

mrt_status mrt_cpu_hard_swish(mrt_op_ctx *ctx) { return run_unary(ctx, hswish_fns, NULL); }

mrt_status mrt_cpu_gelu(mrt_op_ctx *ctx)
{
    const char *approx = mrt_attr_string(ctx, "approximate", "none");
    return run_unary(ctx, approx[0] == 't' ? gelu_tanh_fns : gelu_fns, NULL);
}

/* ------------------------------------------------------------------ Clip */

/* v = max(x, lo) then min(v, hi): with lo > hi every element becomes hi, and NaN stays NaN */
#define CLIP_S(sfx, T, W, DT)                                                                                  \
    UN_LOOP(clip_##sfx, T, T, const T lo = (T)p->ilo; const T hi = (T)p->ihi;,                                \
            (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x))
#define CLIP_U(sfx, T, W, DT)                                                                                  \
    UN_LOOP(clip_##sfx, T, T, const T lo = (T)p->ulo; const T hi = (T)p->uhi;,                                \
            (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x))
MRT_EW_SINTS(CLIP_S)
MRT_EW_UINTS(CLIP_U)
UN_LOOP(clip_f32, float, float, const float lo = (float)p->lo; const float hi = (float)p->hi;,
        (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x))
UN_LOOP(clip_f64, double, double, const double lo = p->lo; const double hi = p->hi;,
        (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x))
#define CLIP_E(sfx, T, W, DT) ENTRY(clip, sfx, T, W, DT)
static const mrt_ew_unary_fn clip_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(CLIP_E)[MRT_DTYPE_FLOAT] = clip_f32, [MRT_DTYPE_DOUBLE] = clip_f64};

/* Default bounds: numeric_limits<T>::lowest() and max(). */
static void clip_defaults(mrt_dtype dt, mrt_ew_params *p)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: p->lo = -FLT_MAX; p->hi = FLT_MAX; break;
    case MRT_DTYPE_FLOAT16: p->lo = -65504.0; p->hi = 65504.0; break;
    case MRT_DTYPE_BFLOAT16: p->lo = -3.3895313892515355e38; p->hi = 3.3895313892515355e38; break;
    default: p->lo = -DBL_MAX; p->hi = DBL_MAX; break;
    }
    p->ilo = INT64_MIN;
    p->ihi = INT64_MAX;
    p->ulo = 0;
    p->uhi = UINT64_MAX;
    switch (dt) {
    case MRT_DTYPE_INT8: p->ilo = INT8_MIN; p->ihi = INT8_MAX; break;
    case MRT_DTYPE_INT16: p->ilo = INT16_MIN; p->ihi = INT16_MAX; break;
    case MRT_DTYPE_INT32: p->ilo = INT32_MIN; p->ihi = INT32_MAX; break;
    case MRT_DTYPE_UINT8: p->uhi = UINT8_MAX; break;
    case MRT_DTYPE_UINT16: p->uhi = UINT16_MAX; break;
    case MRT_DTYPE_UINT32: p->uhi = UINT32_MAX; break;
    default: break;
    }
}

/* Read a Clip bound input (a one-element tensor of X's dtype) into the fields of its kind. */
static void clip_bound(const mrt_tensor *t, double *f, int64_t *s, uint64_t *u)
{
    if (!t || mrt_tensor_numel(t) < 1 || !t->data) return;
    switch (t->dtype) {
    case MRT_DTYPE_UINT64: *u = *(const uint64_t *)t->data; break;
    case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_UINT32:
        *u = (uint64_t)mrt_load_i64(t->dtype, t->data, 0);
        break;
    case MRT_DTYPE_INT8: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64:
        *s = mrt_load_i64(t->dtype, t->data, 0);
        break;
    default: *f = mrt_load_f64(t->dtype, t->data, 0); break;
    }
}

mrt_status mrt_cpu_clip(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input X is missing");
    mrt_ew_params p = {0};
    clip_defaults(x->dtype, &p);
    if (ctx->opset < 11) { /* Clip-1/6: float bounds as attributes, defaulting to the float32 limits */
        p.lo = mrt_attr_float(ctx, "min", -FLT_MAX);
        p.hi = mrt_attr_float(ctx, "max", FLT_MAX);
    } else {
        clip_bound(mrt_input(ctx, 1), &p.lo, &p.ilo, &p.ulo);
        clip_bound(mrt_input(ctx, 2), &p.hi, &p.ihi, &p.uhi);
    }
    return run_unary(ctx, clip_fns, &p);
}

/* ------------------------------------------------------------------ pointwise programs */

/* The float32 loop each kernel above runs, by pointwise-program code (engine/epilogue.h), with the attributes the
   kernel reads (k: alpha; k2: Selu's gamma, HardSigmoid's beta) in its parameters */
void mrt_ew_pw_unary(mrt_pw_code code, float *o, const float *a, int64_t n, float k, float k2)
{
    mrt_ew_params p = {0};
    p.alpha = k;
    p.beta = code == MRT_PW_HARD_SIGMOID ? k2 : 0.0;
    p.gamma = code == MRT_PW_SELU ? k2 : 0.0;
    switch (code) {
#define PW(name, table) case MRT_PW_##name: table##_fns[MRT_DTYPE_FLOAT](o, a, n, &p); break;
        PW(ABS, abs) PW(NEG, neg) PW(SQRT, sqrt) PW(EXP, exp) PW(LOG, log) PW(RECIPROCAL, recip) PW(FLOOR, floor)
        PW(CEIL, ceil) PW(ROUND, round) PW(SIGN, sign) PW(ERF, erf) PW(SIN, sin) PW(COS, cos) PW(TAN, tan)
        PW(ASIN, asin) PW(ACOS, acos) PW(ATAN, atan) PW(SINH, sinh) PW(COSH, cosh) PW(ASINH, asinh) PW(ACOSH, acosh)
        PW(ATANH, atanh) PW(RELU, relu) PW(SIGMOID, sigmoid) PW(TANH, tanh) PW(SOFTPLUS, softplus)
        PW(SOFTSIGN, softsign) PW(MISH, mish) PW(HARD_SWISH, hswish) PW(GELU, gelu) PW(GELU_TANH, gelu_tanh)
        PW(LEAKY_RELU, leaky) PW(ELU, elu) PW(CELU, celu) PW(THRESHOLDED_RELU, threlu) PW(SELU, selu)
        PW(HARD_SIGMOID, hsig)
#undef PW
    default: break; /* engine/fuse.c makes no other */
    }
}
