/* Elementwise family vs the naive reference in tests/ref/elementwise_ref.c: unary math and activations,
 * Clip, binary ops with broadcasting, comparisons and logic, Pow type mixes, PRelu, Max/Min/Sum/Mean, Where,
 * the trig/hyperbolic tails, NaN/inf propagation and error cases. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/elementwise_ref.h"

/* ------------------------------------------------------------------ helpers */

typedef struct tattr {
    const char *name;
    char kind; /* 'i', 'f', 's' */
    int64_t i;
    double f;
    const char *s;
} tattr;
#define AI(n, v) {n, 'i', v, 0, NULL}
#define AF(n, v) {n, 'f', 0, v, NULL}
#define AS(n, v) {n, 's', 0, 0, v}
#define AEND {NULL, 0, 0, 0, NULL}

static mrt_status run_op(const char *op, int opset, int n_in, const mrt_tensor *const *ins, const tattr *attrs,
                         bool constant, mrt_tensor *out)
{
    th_case *c = th_begin(op, "", opset);
    for (int i = 0; i < n_in; i++) {
        if (!ins[i]) th_input_absent(c);
        else if (constant) th_input_const(c, ins[i]);
        else th_input(c, ins[i]);
    }
    for (const tattr *a = attrs; a && a->name; a++) {
        if (a->kind == 'i') th_attr_int(c, a->name, a->i);
        else if (a->kind == 'f') th_attr_float(c, a->name, (float)a->f);
        else th_attr_string(c, a->name, a->s);
    }
    mrt_status st = th_run(c, 1, out);
    th_free(c);
    return st;
}

static tol tol_for(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: return (tol){1e-24, 1e-13, 1e-12};
    case MRT_DTYPE_FLOAT16: return (tol){1e-5, 1e-4, 2e-3};
    case MRT_DTYPE_BFLOAT16: return (tol){1e-3, 1e-3, 1.6e-2};
    default: return (tol){1e-10, 1e-6, 1e-5};
    }
}

static bool is_bool_op(const char *op)
{
    static const char *const ops[] = {"IsNaN", "IsInf", "Not", "Equal", "Less", "LessOrEqual", "Greater",
                                      "GreaterOrEqual", "And", "Or", "Xor"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

/* The ideal output is the reference rounded to the output dtype (a float16 result past 65504 is inf). */
static void round_to(mrt_dtype dt, double *e, int64_t n)
{
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_FLOAT16 && dt != MRT_DTYPE_BFLOAT16) return;
    uint8_t scratch[8];
    for (int64_t i = 0; i < n; i++) {
        mrt_store_f64(dt, scratch, 0, e[i]);
        e[i] = mrt_load_f64(dt, scratch, 0);
    }
}

static const char *shape_str(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* Exact comparison of integer/bool outputs (bit patterns through int64, so uint64 is exact too). */
static bool check_exact(const mrt_tensor *got, const int64_t *expect, int rank, const int64_t *shape, char *why,
                        size_t len)
{
    bool ok = got->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = got->shape[i] == shape[i];
    if (!ok) {
        char a[128], b[128];
        snprintf(why, len, "shape %s, expected %s", shape_str(got, a, sizeof a), mrt_shape_describe(rank, shape, b, sizeof b));
        return false;
    }
    int64_t n = mrt_tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = mrt_load_i64(got->dtype, got->data, i);
        if (v != expect[i]) {
            snprintf(why, len, "element %lld: got %lld, expected %lld", (long long)i, (long long)v, (long long)expect[i]);
            return false;
        }
    }
    return true;
}

static int64_t *to_i64(const mrt_tensor *t)
{
    int64_t n = mrt_tensor_numel(t);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = mrt_load_i64(t->dtype, t->data, i);
    return v;
}

/* Run a unary op and compare with the reference (float ops in double, integer ops exactly). */
static bool unary_matches(const char *op, int opset, const mrt_tensor *x, const tattr *attrs, const ref_ew_attrs *ra,
                          bool constant)
{
    mrt_tensor y;
    const mrt_tensor *ins[1] = {x};
    mrt_status st = run_op(op, opset, 1, ins, attrs, constant, &y);
    if (st) {
        cr_log_error("%s-%d %s: %s", op, opset, mrt_dtype_name(x->dtype), mrt_last_error());
        return false;
    }
    mrt_dtype want = is_bool_op(op) ? MRT_DTYPE_BOOL : x->dtype;
    bool ok = y.dtype == want;
    char why[512] = "dtype mismatch";
    int64_t n = mrt_tensor_numel(x);
    if (ok && mrt_dtype_is_float(x->dtype)) {
        double *vx = th_to_f64(x), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++) e[i] = ref_ew_unary(op, vx[i], ra);
        if (!is_bool_op(op)) round_to(x->dtype, e, n);
        tol t = tol_for(x->dtype);
        ok = th_check_f64(&y, e, x->rank, x->shape, t.nmse, t.abs, t.rel, why, sizeof why);
        free(vx);
        free(e);
    } else if (ok) {
        int64_t *vx = to_i64(x), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++)
            e[i] = x->dtype == MRT_DTYPE_BOOL ? (int64_t)ref_ew_unary(op, (double)vx[i], ra)
                                              : ref_ew_unary_i(op, vx[i], x->dtype, ra);
        ok = check_exact(&y, e, x->rank, x->shape, why, sizeof why);
        free(vx);
        free(e);
    }
    if (!ok) cr_log_error("%s-%d %s: %s", op, opset, mrt_dtype_name(x->dtype), why);
    mrt_tensor_release(&y);
    return ok;
}

/* Expected output of a broadcast binary op; floats in double, integers exactly (as int64 bit patterns). */
static bool binary_matches(const char *op, int opset, const mrt_tensor *a, const mrt_tensor *b, const tattr *attrs,
                           const ref_ew_attrs *ra, bool constant)
{
    mrt_tensor y;
    const mrt_tensor *ins[2] = {a, b};
    char sa[128], sb[128];
    mrt_status st = run_op(op, opset, 2, ins, attrs, constant, &y);
    if (st) {
        cr_log_error("%s-%d %s %s x %s: %s", op, opset, mrt_dtype_name(a->dtype), shape_str(a, sa, sizeof sa),
                     shape_str(b, sb, sizeof sb), mrt_last_error());
        return false;
    }
    int rank;
    int64_t shape[MRT_MAX_RANK];
    cr_assert(ref_ew_broadcast_shape(a->rank, a->shape, b->rank, b->shape, &rank, shape));
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    mrt_dtype want = is_bool_op(op) ? MRT_DTYPE_BOOL : a->dtype;
    bool ok = y.dtype == want;
    char why[512] = "dtype mismatch";
    if (ok && mrt_dtype_is_float(a->dtype) && !is_bool_op(op)) {
        double *va = th_to_f64(a), *vb = th_to_f64(b), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++)
            e[i] = ref_ew_binary_f(op, va[ref_ew_src_index(rank, shape, i, a->rank, a->shape)],
                                   vb[ref_ew_src_index(rank, shape, i, b->rank, b->shape)], ra);
        round_to(a->dtype, e, n);
        tol t = tol_for(a->dtype);
        ok = th_check_f64(&y, e, rank, shape, t.nmse, t.abs, t.rel, why, sizeof why);
        free(va);
        free(vb);
        free(e);
    } else if (ok) {
        bool fl = mrt_dtype_is_float(a->dtype) || a->dtype == MRT_DTYPE_BOOL;
        double *fa = fl ? th_to_f64(a) : NULL, *fb = fl ? th_to_f64(b) : NULL;
        int64_t *va = to_i64(a), *vb = to_i64(b), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++) {
            int64_t ia = ref_ew_src_index(rank, shape, i, a->rank, a->shape);
            int64_t ib = ref_ew_src_index(rank, shape, i, b->rank, b->shape);
            e[i] = fl ? (int64_t)ref_ew_binary_f(op, fa[ia], fb[ib], ra) : ref_ew_binary_i(op, va[ia], vb[ib], a->dtype, ra);
        }
        ok = check_exact(&y, e, rank, shape, why, sizeof why);
        free(fa);
        free(fb);
        free(va);
        free(vb);
        free(e);
    }
    if (!ok)
        cr_log_error("%s-%d %s %s x %s: %s", op, opset, mrt_dtype_name(a->dtype), shape_str(a, sa, sizeof sa),
                     shape_str(b, sb, sizeof sb), why);
    mrt_tensor_release(&y);
    return ok;
}

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

/* Broadcasting cases shared by the binary tests. */
typedef struct bcase {
    int ra;
    int64_t a[4];
    int rb;
    int64_t b[4];
} bcase;
static const bcase bcases[] = {
    {3, {2, 3, 4}, 3, {2, 3, 4}}, /* same shape */
    {2, {3, 4}, 0, {0}},           /* scalar */
    {0, {0}, 2, {3, 4}},           /* scalar first */
    {2, {3, 1}, 2, {1, 4}},        /* both broadcast */
    {3, {2, 3, 4}, 1, {4}},        /* rank mismatch */
    {1, {4}, 3, {2, 3, 4}},
    {3, {2, 1, 4}, 2, {3, 1}},
    {4, {2, 3, 1, 5}, 3, {3, 4, 1}},
    {2, {0, 3}, 2, {1, 3}},        /* zero-size dims */
    {2, {2, 0}, 2, {2, 1}},
    {1, {1}, 1, {5}},
};
#define N_BCASES (sizeof bcases / sizeof bcases[0])

/* ------------------------------------------------------------------ unary float ops */

typedef struct uop {
    const char *op;
    int opset, old_opset;
    double lo, hi;
} uop;
static const uop float_unary[] = {
    {"Abs", 13, 6, -5, 5}, {"Neg", 13, 6, -5, 5}, {"Sqrt", 13, 6, 0, 10}, {"Exp", 13, 6, -10, 10},
    {"Log", 13, 6, 0.01, 100}, {"Reciprocal", 13, 6, -10, 10}, {"Floor", 13, 6, -5, 5}, {"Ceil", 13, 6, -5, 5},
    {"Round", 22, 11, -5, 5}, {"Sign", 13, 9, -5, 5}, {"Erf", 13, 9, -3, 3}, {"Sin", 22, 7, -10, 10},
    {"Cos", 22, 7, -10, 10}, {"Tan", 22, 7, -1.5, 1.5}, {"Asin", 22, 7, -1, 1}, {"Acos", 22, 7, -1, 1},
    {"Atan", 22, 7, -10, 10}, {"Sinh", 22, 9, -5, 5}, {"Cosh", 22, 9, -5, 5}, {"Asinh", 22, 9, -100, 100},
    {"Acosh", 22, 9, 1, 100}, {"Atanh", 22, 9, -0.999, 0.999}, {"Relu", 14, 6, -5, 5},
    {"Sigmoid", 13, 6, -20, 20}, {"Tanh", 13, 6, -5, 5}, {"LeakyRelu", 16, 6, -5, 5}, {"Elu", 22, 6, -5, 5},
    {"Selu", 22, 6, -5, 5}, {"Celu", 12, 12, -5, 5}, {"ThresholdedRelu", 22, 10, -5, 5},
    {"HardSigmoid", 22, 6, -5, 5}, {"HardSwish", 22, 14, -5, 5}, {"Softplus", 22, 1, -20, 20},
    {"Softsign", 22, 1, -5, 5}, {"Gelu", 20, 20, -5, 5}, {"Mish", 22, 18, -5, 5}, {"Swish", 24, 24, -5, 5},
    {"IsNaN", 20, 9, -5, 5}, {"IsInf", 20, 10, -5, 5},
};

static void unary_float_dtype(const char *test, mrt_dtype dt, bool old_versions)
{
    th_rng r;
    th_rng_init(&r, th_seed(test));
    int bad = 0;
    for (size_t k = 0; k < sizeof float_unary / sizeof float_unary[0]; k++) {
        const uop *u = &float_unary[k];
        mrt_tensor x = th_rand(&r, dt, 3, SHAPE(3, 4, 5), u->lo, u->hi);
        ref_ew_attrs ra = ref_ew_defaults(u->op);
        bad += !unary_matches(u->op, u->opset, &x, NULL, &ra, false);
        if (old_versions) bad += !unary_matches(u->op, u->old_opset, &x, NULL, &ra, true);
        mrt_tensor_release(&x);
    }
    cr_assert_eq(bad, 0, "%d unary cases failed (see log)", bad);
}

Test(elementwise_unary, float32) { unary_float_dtype("elementwise_unary.float32", MRT_DTYPE_FLOAT, true); }
Test(elementwise_unary, float64) { unary_float_dtype("elementwise_unary.float64", MRT_DTYPE_DOUBLE, false); }
Test(elementwise_unary, float16) { unary_float_dtype("elementwise_unary.float16", MRT_DTYPE_FLOAT16, false); }
Test(elementwise_unary, bfloat16) { unary_float_dtype("elementwise_unary.bfloat16", MRT_DTYPE_BFLOAT16, false); }

Test(elementwise_unary, activation_attributes)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_unary.activation_attributes"));
    struct {
        const char *op;
        tattr attrs[3];
        ref_ew_attrs ra;
    } cases[] = {
        {"LeakyRelu", {AF("alpha", 0.25), AEND}, {.alpha = 0.25}},
        {"Elu", {AF("alpha", 2.0), AEND}, {.alpha = 2.0}},
        {"Selu", {AF("alpha", 2.0), AF("gamma", 3.0), AEND}, {.alpha = 2.0, .gamma = 3.0}},
        {"Celu", {AF("alpha", 2.0), AEND}, {.alpha = 2.0}},
        {"ThresholdedRelu", {AF("alpha", 0.5), AEND}, {.alpha = 0.5}},
        {"HardSigmoid", {AF("alpha", 0.25), AF("beta", 0.375), AEND}, {.alpha = 0.25, .beta = 0.375}},
        {"Gelu", {AS("approximate", "tanh"), AEND}, {.gelu_tanh = true}},
        {"Gelu", {AS("approximate", "none"), AEND}, {.gelu_tanh = false}},
        {"Swish", {AF("alpha", 0.5), AEND}, {.alpha = 0.5}},
    };
    int opsets[] = {22, 22, 22, 12, 22, 22, 20, 20, 24};
    int bad = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int d = 0; d < 2; d++) {
            mrt_tensor x = th_rand(&r, d ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 2, SHAPE(7, 9), -6, 6);
            bad += !unary_matches(cases[k].op, opsets[k], &x, cases[k].attrs, &cases[k].ra, false);
            mrt_tensor_release(&x);
        }
    }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

/* The inverse trig/hyperbolic family (and friends) in the tails: huge, tiny, +-1, +-inf, NaN. */
Test(elementwise_unary, trig_hyperbolic_tails)
{
    static const double vals[] = {1e4, -1e4, 1e-6, -1e-6, 1.0, -1.0, 0.0, -0.0, 0.5, -0.5, 30.0, -30.0,
                                  INFINITY, -INFINITY, NAN, 1e-30, 3e38};
    static const char *const ops[] = {"Asinh", "Acosh", "Atanh", "Sinh", "Cosh", "Tanh", "Asin", "Acos", "Atan",
                                      "Sin", "Cos", "Tan", "Sigmoid", "Softplus", "Softsign", "Erf", "Mish",
                                      "Gelu", "Exp", "Log", "Sqrt"};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    int64_t n = sizeof vals / sizeof vals[0];
    int bad = 0;
    for (size_t d = 0; d < 3; d++) {
        mrt_tensor x = th_from_f64(dts[d], 1, &n, vals);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            ref_ew_attrs ra = ref_ew_defaults(ops[k]);
            bad += !unary_matches(ops[k], 22, &x, NULL, &ra, false);
        }
        mrt_tensor_release(&x);
    }
    cr_assert_eq(bad, 0, "%d tail cases failed (see log)", bad);
}

/* Large |x| must saturate cleanly (no NaN from inf/inf) in the stable activations. */
Test(elementwise_unary, stable_activations_saturate)
{
    double vals[] = {-1e4, -100, -88.8, 88.8, 100, 1e4};
    int64_t n = 6;
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, vals);
    const char *ops[] = {"Sigmoid", "Softplus", "Mish", "Swish", "Gelu", "Tanh", "Elu", "Selu", "Celu"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        mrt_tensor y;
        const mrt_tensor *ins[1] = {&x};
        cr_assert_eq(run_op(ops[k], 24, 1, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int i = 0; i < n; i++) cr_expect(!isnan(((float *)y.data)[i]), "%s(%g) is NaN", ops[k], vals[i]);
        if (!strcmp(ops[k], "Sigmoid")) {
            cr_expect_eq(((float *)y.data)[0], 0.0f);
            cr_expect_eq(((float *)y.data)[5], 1.0f);
        }
        if (!strcmp(ops[k], "Softplus")) cr_expect_eq(((float *)y.data)[5], 1e4f);
        mrt_tensor_release(&y);
    }
    mrt_tensor_release(&x);
}

Test(elementwise_unary, round_half_to_even)
{
    double vals[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.3, -4.5, 0.9, -0.9, 1e7 + 0.5, 0.49999997};
    double want[] = {0, 2, 2, -0.0, -2, -2, 2, -4, 1, -1, 1e7, 0};
    int64_t n = 12;
    for (int d = 0; d < 3; d++) {
        mrt_dtype dt = d == 0 ? MRT_DTYPE_FLOAT : d == 1 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT16;
        int64_t m = dt == MRT_DTYPE_FLOAT16 ? 10 : n; /* 1e7 and 0.49999997 don't fit in float16 */
        mrt_tensor x = th_from_f64(dt, 1, &m, vals), y;
        const mrt_tensor *ins[1] = {&x};
        cr_assert_eq(run_op("Round", 22, 1, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        char why[256];
        cr_expect(th_check_f64(&y, want, 1, &m, 0, 0, 0, why, sizeof why), "%s: %s", mrt_dtype_name(dt), why);
        mrt_tensor_release(&x);
        mrt_tensor_release(&y);
    }
}

Test(elementwise_unary, isinf_isnan_flags)
{
    double vals[] = {INFINITY, -INFINITY, NAN, 0, -3, 65504};
    int64_t n = 6;
    int bad = 0;
    for (int d = 0; d < 3; d++) {
        mrt_dtype dt = d == 0 ? MRT_DTYPE_FLOAT : d == 1 ? MRT_DTYPE_FLOAT16 : MRT_DTYPE_BFLOAT16;
        mrt_tensor x = th_from_f64(dt, 1, &n, vals);
        for (int neg = 0; neg < 2; neg++)
            for (int pos = 0; pos < 2; pos++) {
                tattr at[] = {AI("detect_negative", neg), AI("detect_positive", pos), AEND};
                ref_ew_attrs ra = ref_ew_defaults("IsInf");
                ra.detect_neg = neg;
                ra.detect_pos = pos;
                bad += !unary_matches("IsInf", 20, &x, at, &ra, false);
            }
        ref_ew_attrs ra = ref_ew_defaults("IsNaN");
        bad += !unary_matches("IsNaN", 20, &x, NULL, &ra, false);
        mrt_tensor_release(&x);
    }
    /* float8e5m2 has inf and NaN: 0x7c = +inf, 0xfc = -inf, 0x7e = NaN, 0x3c = 1.0 */
    int64_t m = 4;
    mrt_tensor x8;
    mrt_tensor_alloc(&x8, MRT_DTYPE_FLOAT8E5M2, 1, &m);
    memcpy(x8.data, (uint8_t[]){0x7c, 0xfc, 0x7e, 0x3c}, 4);
    const mrt_tensor *ins[1] = {&x8};
    mrt_tensor y;
    cr_assert_eq(run_op("IsInf", 20, 1, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t want_inf[] = {1, 1, 0, 0};
    char why[256];
    cr_expect(check_exact(&y, want_inf, 1, &m, why, sizeof why), "IsInf float8: %s", why);
    mrt_tensor_release(&y);
    cr_assert_eq(run_op("IsNaN", 20, 1, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t want_nan[] = {0, 0, 1, 0};
    cr_expect(check_exact(&y, want_nan, 1, &m, why, sizeof why), "IsNaN float8: %s", why);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x8);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_unary, nan_propagation)
{
    double vals[] = {NAN, INFINITY, -INFINITY};
    int64_t n = 3;
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, vals);
    const char *ops[] = {"Relu", "Abs", "Neg", "Sign", "LeakyRelu", "Elu", "HardSigmoid", "HardSwish", "Softsign",
                         "Floor", "Ceil", "Round", "Exp", "Sigmoid", "Tanh", "Selu", "Celu"};
    int bad = 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        ref_ew_attrs ra = ref_ew_defaults(ops[k]);
        bad += !unary_matches(ops[k], 22, &x, NULL, &ra, false);
    }
    mrt_tensor_release(&x);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_unary, integers)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_unary.integers"));
    struct {
        const char *op;
        int opset;
        bool unsigned_ok;
    } ops[] = {{"Abs", 13, true}, {"Neg", 13, false}, {"Sign", 13, true}, {"Relu", 14, false}, {"BitwiseNot", 18, true}};
    mrt_dtype dts[] = {MRT_DTYPE_INT8, MRT_DTYPE_INT16, MRT_DTYPE_INT32, MRT_DTYPE_INT64,
                       MRT_DTYPE_UINT8, MRT_DTYPE_UINT16, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64};
    int bad = 0;
    for (size_t d = 0; d < 8; d++) {
        bool uns = d >= 4;
        int bits = mrt_dtype_bits(dts[d]);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (uns && !ops[k].unsigned_ok) continue;
            mrt_tensor x = th_rand(&r, dts[d], 2, SHAPE(4, 6), uns ? 0 : -100, 100);
            /* the extremes: MIN wraps under Abs/Neg */
            int64_t mn = uns ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
            int64_t mx = uns ? (bits == 64 ? -1 : ((int64_t)1 << bits) - 1) : bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
            mrt_store_i64(dts[d], x.data, 0, mn);
            mrt_store_i64(dts[d], x.data, 1, mx);
            mrt_store_i64(dts[d], x.data, 2, 0);
            ref_ew_attrs ra = ref_ew_defaults(ops[k].op);
            bad += !unary_matches(ops[k].op, ops[k].opset, &x, NULL, &ra, false);
            mrt_tensor_release(&x);
        }
    }
    int64_t n = 4;
    mrt_tensor b = th_from_f64(MRT_DTYPE_BOOL, 1, &n, (double[]){0, 1, 1, 0});
    ref_ew_attrs ra = ref_ew_defaults("Not");
    bad += !unary_matches("Not", 1, &b, NULL, &ra, false);
    mrt_tensor_release(&b);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

/* ------------------------------------------------------------------ Clip */

Test(elementwise_clip, bounds_as_inputs)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_clip.bounds_as_inputs"));
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT8, MRT_DTYPE_INT32,
                       MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_UINT64};
    /* (min, max) with absent bounds as NaN; includes min > max */
    double bounds[][2] = {{-2, 3}, {NAN, 3}, {-2, NAN}, {NAN, NAN}, {4, 1}, {0, 0}};
    int bad = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        bool fl = mrt_dtype_is_float(dts[d]);
        bool uns = dts[d] == MRT_DTYPE_UINT8 || dts[d] == MRT_DTYPE_UINT64;
        for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
            double lo = bounds[k][0], hi = bounds[k][1];
            if (uns && lo < 0) lo = 1;
            mrt_tensor x = th_rand(&r, dts[d], 2, SHAPE(5, 6), uns ? 0 : -6, 6);
            mrt_tensor tl = th_from_f64(dts[d], 0, NULL, &lo), th = th_from_f64(dts[d], 0, NULL, &hi);
            const mrt_tensor *ins[3] = {&x, isnan(lo) ? NULL : &tl, isnan(hi) ? NULL : &th};
            mrt_tensor y;
            for (int c = 0; c < 2; c++) {
                /* bounds as runtime inputs and as initializers */
                th_case *tc = th_begin("Clip", "", 13);
                th_input(tc, ins[0]);
                for (int i = 1; i < 3; i++) {
                    if (!ins[i]) th_input_absent(tc);
                    else if (c) th_input_const(tc, ins[i]);
                    else th_input(tc, ins[i]);
                }
                mrt_status st = th_run(tc, 1, &y);
                th_free(tc);
                if (st) {
                    cr_log_error("Clip %s: %s", mrt_dtype_name(dts[d]), mrt_last_error());
                    bad++;
                    continue;
                }
                ref_ew_attrs ra = ref_ew_defaults("Clip");
                ra.lo = isnan(lo) ? -INFINITY : lo;
                ra.hi = isnan(hi) ? INFINITY : hi;
                int64_t n = mrt_tensor_numel(&x);
                double *vx = th_to_f64(&x), *e = malloc((size_t)n * sizeof *e);
                for (int64_t i = 0; i < n; i++) e[i] = ref_ew_unary("Clip", vx[i], &ra);
                char why[256];
                tol t = tol_for(dts[d]);
                bool ok = y.dtype == x.dtype && th_check_f64(&y, e, x.rank, x.shape, fl ? t.nmse : 0, 0, 0, why, sizeof why);
                if (!ok) {
                    cr_log_error("Clip %s [%g, %g]: %s", mrt_dtype_name(dts[d]), lo, hi, why);
                    bad++;
                }
                free(vx);
                free(e);
                mrt_tensor_release(&y);
            }
            mrt_tensor_release(&x);
            mrt_tensor_release(&tl);
            mrt_tensor_release(&th);
        }
    }
    cr_assert_eq(bad, 0, "%d Clip cases failed (see log)", bad);
}

Test(elementwise_clip, attributes_before_opset_11)
{
    double vals[] = {-5, -1, 0, 0.5, 2, 7, NAN, -INFINITY};
    int64_t n = 8;
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, vals);
    tattr at[] = {AF("min", -1.5), AF("max", 2.5), AEND};
    ref_ew_attrs ra = ref_ew_defaults("Clip");
    ra.lo = -1.5;
    ra.hi = 2.5;
    cr_expect(unary_matches("Clip", 6, &x, at, &ra, false));
    cr_expect(unary_matches("Clip", 1, &x, at, &ra, true));
    /* defaults are the float32 limits: -inf becomes -FLT_MAX */
    ra.lo = -3.4028234663852886e38;
    ra.hi = 3.4028234663852886e38;
    cr_expect(unary_matches("Clip", 6, &x, NULL, &ra, false));
    mrt_tensor_release(&x);
}

Test(elementwise_clip, non_scalar_bound_is_an_error)
{
    int64_t n = 3, two = 2;
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){1, 2, 3});
    mrt_tensor lo = th_from_f64(MRT_DTYPE_FLOAT, 1, &two, (double[]){0, 1});
    const mrt_tensor *ins[2] = {&x, &lo};
    mrt_tensor y;
    mrt_status st = run_op("Clip", 13, 2, ins, NULL, false, &y);
    cr_expect_neq(st, MRT_STATUS_OK);
    cr_expect(strstr(mrt_last_error(), "scalar") != NULL, "message: %s", mrt_last_error());
    mrt_tensor_release(&x);
    mrt_tensor_release(&lo);
}

/* ------------------------------------------------------------------ binary */

static int binary_over_bcases(th_rng *r, const char *op, int opset, mrt_dtype dt, double lo, double hi,
                              double blo, double bhi, const tattr *attrs, const ref_ew_attrs *ra)
{
    int bad = 0;
    for (size_t k = 0; k < N_BCASES; k++) {
        const bcase *c = &bcases[k];
        mrt_tensor a = th_rand(r, dt, c->ra, c->a, lo, hi), b = th_rand(r, dt, c->rb, c->b, blo, bhi);
        bad += !binary_matches(op, opset, &a, &b, attrs, ra, k % 2 == 1);
        mrt_tensor_release(&a);
        mrt_tensor_release(&b);
    }
    return bad;
}

Test(elementwise_binary, float_arithmetic)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.float_arithmetic"));
    struct {
        const char *op;
        int opset;
        double lo, hi, blo, bhi;
        tattr attrs[2];
    } ops[] = {
        {"Add", 14, -5, 5, -5, 5, {AEND}},     {"Sub", 14, -5, 5, -5, 5, {AEND}},
        {"Mul", 14, -5, 5, -5, 5, {AEND}},     {"Div", 14, -5, 5, 0.5, 5, {AEND}},
        {"Pow", 15, 0.1, 3, -3, 3, {AEND}},    {"Mod", 13, -10, 10, 0.5, 4, {AI("fmod", 1), AEND}},
        {"Mod", 13, -10, 10, -4, -0.5, {AI("fmod", 0), AEND}}, {"Add", 7, -5, 5, -5, 5, {AEND}},
        {"Mul", 13, -5, 5, -5, 5, {AEND}},     {"Div", 7, -5, 5, -5, -0.5, {AEND}},
        {"Pow", 7, 0.1, 3, -3, 3, {AEND}},
    };
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    int bad = 0;
    for (size_t d = 0; d < 4; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            ref_ew_attrs ra = ref_ew_defaults(ops[k].op);
            ra.fmod = ops[k].attrs[0].name && ops[k].attrs[0].i;
            bad += binary_over_bcases(&r, ops[k].op, ops[k].opset, dts[d], ops[k].lo, ops[k].hi, ops[k].blo,
                                      ops[k].bhi, ops[k].attrs, &ra);
        }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, integer_arithmetic)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.integer_arithmetic"));
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Mod", "Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
    mrt_dtype dts[] = {MRT_DTYPE_INT8, MRT_DTYPE_INT16, MRT_DTYPE_INT32, MRT_DTYPE_INT64,
                       MRT_DTYPE_UINT8, MRT_DTYPE_UINT16, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64};
    int bad = 0;
    for (size_t d = 0; d < 8; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            bool uns = d >= 4;
            int fm = k == 5;
            tattr at[] = {AI("fmod", fm), AEND};
            ref_ew_attrs ra = ref_ew_defaults(ops[k]);
            ra.fmod = fm;
            int opset = !strncmp(ops[k], "Bitwise", 7) ? 18 : !strcmp(ops[k], "Mod") ? 13 : 14;
            /* ranges wide enough to overflow the narrow types (wraps) and to hit division by zero */
            bad += binary_over_bcases(&r, ops[k], opset, dts[d], uns ? 0 : -120, 120, uns ? 0 : -9, 9,
                                      !strcmp(ops[k], "Mod") ? at : NULL, &ra);
        }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, integer_edge_values)
{
    /* overflow wraps, x / 0 == 0, MIN / -1 == MIN, MIN % -1 == 0, Python-sign modulo */
    int64_t n = 8;
    double av[] = {2147483647, -2147483648.0, -2147483648.0, 7, -7, 7, -7, 0};
    double bv[] = {1, -1, 1, 0, 3, -3, -3, 0};
    mrt_tensor a = th_from_f64(MRT_DTYPE_INT32, 1, &n, av), b = th_from_f64(MRT_DTYPE_INT32, 1, &n, bv);
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Mod"};
    int bad = 0;
    for (size_t k = 0; k < 5; k++)
        for (int fm = 0; fm < 2; fm++) {
            tattr at[] = {AI("fmod", fm), AEND};
            ref_ew_attrs ra = ref_ew_defaults(ops[k]);
            ra.fmod = fm;
            bad += !binary_matches(ops[k], k == 4 ? 13 : 14, &a, &b, k == 4 ? at : NULL, &ra, false);
        }
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    /* int64 extremes */
    mrt_tensor a64, b64;
    mrt_tensor_alloc(&a64, MRT_DTYPE_INT64, 1, &n);
    mrt_tensor_alloc(&b64, MRT_DTYPE_INT64, 1, &n);
    int64_t ai[] = {INT64_MAX, INT64_MIN, INT64_MIN, 5, -5, INT64_MIN, 3, -1};
    int64_t bi[] = {1, -1, 2, 0, 2, INT64_MIN, INT64_MIN, INT64_MAX};
    memcpy(a64.data, ai, sizeof ai);
    memcpy(b64.data, bi, sizeof bi);
    for (size_t k = 0; k < 5; k++) {
        ref_ew_attrs ra = ref_ew_defaults(ops[k]);
        bad += !binary_matches(ops[k], k == 4 ? 13 : 14, &a64, &b64, NULL, &ra, false);
    }
    mrt_tensor_release(&a64);
    mrt_tensor_release(&b64);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, bit_shift)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.bit_shift"));
    mrt_dtype dts[] = {MRT_DTYPE_UINT8, MRT_DTYPE_UINT16, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64};
    int bad = 0;
    for (size_t d = 0; d < 4; d++)
        for (int left = 0; left < 2; left++) {
            tattr at[] = {AS("direction", left ? "LEFT" : "RIGHT"), AEND};
            ref_ew_attrs ra = ref_ew_defaults("BitShift");
            ra.shift_left = left;
            /* shift amounts up to 70: past the width gives 0 */
            bad += binary_over_bcases(&r, "BitShift", 11, dts[d], 0, 255, 0, 70, at, &ra);
        }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, comparisons)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.comparisons"));
    struct {
        const char *op;
        int opset;
    } ops[] = {{"Equal", 19}, {"Less", 13}, {"LessOrEqual", 16}, {"Greater", 13}, {"GreaterOrEqual", 16},
               {"Equal", 7}, {"Less", 9}, {"LessOrEqual", 12}, {"Greater", 7}, {"GreaterOrEqual", 12}};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT8, MRT_DTYPE_INT32,
                       MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_UINT64};
    int bad = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            ref_ew_attrs ra = ref_ew_defaults(ops[k].op);
            /* small integer range so equality happens often */
            bad += binary_over_bcases(&r, ops[k].op, ops[k].opset, dts[d], 0, 3, 0, 3, NULL, &ra);
        }
    /* NaN compares false (and unequal to itself); +0 == -0 */
    int64_t n = 4;
    mrt_tensor a = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){NAN, 1, 0.0, INFINITY});
    mrt_tensor b = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){NAN, NAN, -0.0, INFINITY});
    for (size_t k = 0; k < 5; k++) {
        ref_ew_attrs ra = ref_ew_defaults(ops[k].op);
        bad += !binary_matches(ops[k].op, ops[k].opset, &a, &b, NULL, &ra, false);
    }
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    /* Equal on bool */
    mrt_tensor ba = th_from_f64(MRT_DTYPE_BOOL, 1, &n, (double[]){0, 0, 1, 1});
    mrt_tensor bb = th_from_f64(MRT_DTYPE_BOOL, 1, &n, (double[]){0, 1, 0, 1});
    ref_ew_attrs ra = ref_ew_defaults("Equal");
    bad += !binary_matches("Equal", 11, &ba, &bb, NULL, &ra, false);
    mrt_tensor_release(&ba);
    mrt_tensor_release(&bb);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, equal_strings)
{
    int64_t sa[] = {2, 3}, sb[] = {3};
    mrt_tensor a, b, y;
    mrt_tensor_alloc(&a, MRT_DTYPE_STRING, 2, sa);
    mrt_tensor_alloc(&b, MRT_DTYPE_STRING, 1, sb);
    const char *av[] = {"cat", "dog", "", "cat", "Dog", "bird"}, *bv[] = {"cat", "Dog", ""};
    for (int i = 0; i < 6; i++) ((char **)a.data)[i] = strdup(av[i]);
    for (int i = 0; i < 3; i++) ((char **)b.data)[i] = strdup(bv[i]);
    const mrt_tensor *ins[2] = {&a, &b};
    cr_assert_eq(run_op("Equal", 19, 2, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t want[] = {1, 0, 1, 1, 1, 0};
    char why[256];
    cr_expect_eq(y.dtype, MRT_DTYPE_BOOL);
    cr_expect(check_exact(&y, want, 2, sa, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
}

Test(elementwise_binary, logic)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.logic"));
    const char *ops[] = {"And", "Or", "Xor"};
    int bad = 0;
    for (size_t k = 0; k < 3; k++) {
        ref_ew_attrs ra = ref_ew_defaults(ops[k]);
        bad += binary_over_bcases(&r, ops[k], 7, MRT_DTYPE_BOOL, 0, 1, 0, 1, NULL, &ra);
    }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, nan_and_inf)
{
    int64_t n = 6;
    mrt_tensor a = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){INFINITY, NAN, 1, -INFINITY, 0, 5});
    mrt_tensor b = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){-INFINITY, 1, NAN, -INFINITY, 0, INFINITY});
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Pow"};
    int bad = 0;
    for (size_t k = 0; k < 5; k++) {
        ref_ew_attrs ra = ref_ew_defaults(ops[k]);
        bad += !binary_matches(ops[k], 14, &a, &b, NULL, &ra, false);
    }
    ref_ew_attrs ra = ref_ew_defaults("Mod");
    ra.fmod = true;
    tattr at[] = {AI("fmod", 1), AEND};
    bad += !binary_matches("Mod", 13, &a, &b, at, &ra, false);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_binary, high_rank_broadcast)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.high_rank_broadcast"));
    int64_t sa[16], sb[16];
    for (int i = 0; i < 16; i++) {
        sa[i] = i % 3 == 0 ? 2 : 1;
        sb[i] = i % 3 == 1 ? 2 : 1;
    }
    sb[15] = 3;
    sa[15] = 1;
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 16, sa, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 14, sb + 2, -1, 1);
    ref_ew_attrs ra = ref_ew_defaults("Sub");
    cr_expect(binary_matches("Sub", 14, &a, &b, NULL, &ra, false));
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    int64_t s6a[] = {2, 1, 3, 1, 2, 1}, s6b[] = {1, 2, 1, 3, 1, 2};
    a = th_rand(&r, MRT_DTYPE_INT32, 6, s6a, -50, 50);
    b = th_rand(&r, MRT_DTYPE_INT32, 6, s6b, -50, 50);
    ra = ref_ew_defaults("Mul");
    cr_expect(binary_matches("Mul", 14, &a, &b, NULL, &ra, true));
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
}

Test(elementwise_binary, legacy_broadcast_attributes)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_binary.legacy_broadcast_attributes"));
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 4, SHAPE(2, 3, 4, 5), -1, 1);
    mrt_tensor b = th_rand(&r, MRT_DTYPE_FLOAT, 2, SHAPE(3, 4), -1, 1);
    /* axis=1 places B's dims at A's dims 1..2: the NumPy view of B is [3,4,1] */
    tattr at[] = {AI("broadcast", 1), AI("axis", 1), AEND};
    mrt_tensor y;
    const mrt_tensor *ins[2] = {&a, &b};
    cr_assert_eq(run_op("Add", 6, 2, ins, at, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *va = th_to_f64(&a), *vb = th_to_f64(&b), e[120];
    for (int i = 0; i < 120; i++) e[i] = va[i] + vb[(i / 5) % 12];
    char why[256];
    cr_expect(th_check_f64(&y, e, 4, a.shape, 1e-12, 1e-6, 1e-6, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    /* suffix matching without axis */
    mrt_tensor c = th_rand(&r, MRT_DTYPE_FLOAT, 1, SHAPE(5), -1, 1);
    tattr at2[] = {AI("broadcast", 1), AEND};
    const mrt_tensor *ins2[2] = {&a, &c};
    cr_assert_eq(run_op("Mul", 1, 2, ins2, at2, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *vc = th_to_f64(&c);
    for (int i = 0; i < 120; i++) e[i] = va[i] * vc[i % 5];
    cr_expect(th_check_f64(&y, e, 4, a.shape, 1e-12, 1e-6, 1e-6, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    /* without broadcast=1, different shapes are an error */
    cr_expect_neq(run_op("Add", 6, 2, ins, NULL, false, &y), MRT_STATUS_OK);
    free(va);
    free(vb);
    free(vc);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&c);
}

/* Pow(x, 2) is x * x, correctly rounded (the square of a float is exact in double): squares that are ties between
   two floats (1 + 2^-12: 1 + 2^-11 + 2^-24), NaN, infinities, -0, overflow and underflow, and random values;
   constant and runtime exponents, scalar and [1]-shaped */
Test(elementwise_pow, square_is_correctly_rounded)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_pow.square"));
    enum { N = 4099 };
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){N}, -40, 40);
    float *xv = x.data;
    const float special[] = {1.0f + 0x1p-12f, -(1.0f + 0x1p-12f), 1.0f + 0x1p-12f + 0x1p-23f, NAN, INFINITY, -INFINITY, -0.0f,
                             0.0f, 3e19f, 1e-23f, 0x1p-149f, 0x1.fffffep127f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) xv[i] = special[i];
    for (int form = 0; form < 4; form++) {
        mrt_tensor two = th_from_f64(MRT_DTYPE_FLOAT, form % 2, (int64_t[]){1}, (double[]){2.0});
        th_case *c = th_begin("Pow", "", 15);
        th_input(c, &x);
        if (form < 2) th_input_const(c, &two);
        else th_input(c, &two);
        mrt_tensor y;
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int i = 0; i < N; i++) {
            float want = (float)((double)xv[i] * (double)xv[i]), got = ((float *)y.data)[i];
            cr_assert(memcmp(&want, &got, sizeof want) == 0 || (isnan(want) && isnan(got)),
                      "form %d: %a^2 = %a, want %a", form, (double)xv[i], (double)got, (double)want);
        }
        mrt_tensor_release(&y);
        mrt_tensor_release(&two);
        th_free(c);
    }
    mrt_tensor_release(&x);
}

/* The correctly rounded cube of x = m 2^e (m a 24-bit integer), worked out in integers: m^3 has at most 72 bits, the
   top 24 kept, the rest rounded half to even. Only for cubes in the normal float range. */
static float exact_cube(float x)
{
    int e;
    double f = frexp(fabs((double)x), &e); /* |x| = f 2^e, f in [0.5, 1) */
    unsigned __int128 m = (unsigned __int128)(uint32_t)ldexp(f, 24), c = m * m * m;
    int bits = 0;
    while ((c >> bits) != 0) bits++;
    int drop = bits - 24;
    unsigned __int128 keep = c >> drop, rest = c & (((unsigned __int128)1 << drop) - 1), half = (unsigned __int128)1 << (drop - 1);
    if (rest > half || (rest == half && (keep & 1))) keep++;
    float v = (float)ldexp((double)(uint64_t)keep, drop + 3 * (e - 24));
    return x < 0 ? -v : v;
}

/* Pow(x, 3) is the correctly rounded cube (computed in double; glibc's powf(x, 3) is not always): 200000 random
   floats of magnitude 2^-40 to 2^40 against the cube worked out in integers, and NaN, infinities, signed zeros,
   overflow, underflow to -0 and to subnormals (2^-150 is a tie that goes to 0); a constant and a run-time
   exponent */
Test(elementwise_pow, cube_is_correctly_rounded)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_pow.cube"));
    enum { N = 200000, SPECIAL = 12 };
    static const float special[SPECIAL][2] = {
        {NAN, NAN}, {INFINITY, INFINITY}, {-INFINITY, -INFINITY}, {0.0f, 0.0f}, {-0.0f, -0.0f}, {1e13f, INFINITY},
        {-1e13f, -INFINITY}, {-0x1p-60f, -0.0f}, {0x1p-45f, 0x1p-135f}, {0x1p-50f, 0.0f}, {0x1.8p-50f, 0x1p-148f},
        {-3.0f, -27.0f}};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){N}, -1, 1);
    float *xv = x.data;
    for (int i = 0; i < SPECIAL; i++) xv[i] = special[i][0];
    for (int i = SPECIAL; i < N; i++) /* a random 24-bit significand, sign and exponent */
        xv[i] = (float)ldexp((double)th_rng_int(&r, 1 << 23, (1 << 24) - 1), (int)th_rng_int(&r, -63, 16)) *
                (th_rng_int(&r, 0, 1) ? -1.0f : 1.0f);
    for (int form = 0; form < 2; form++) {
        mrt_tensor three = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){3.0});
        th_case *c = th_begin("Pow", "", 15);
        th_input(c, &x);
        if (form == 0) th_input_const(c, &three);
        else th_input(c, &three);
        mrt_tensor y;
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        const float *got = y.data;
        for (int i = 0; i < N; i++) {
            float want = i < SPECIAL ? special[i][1] : exact_cube(xv[i]);
            cr_assert(memcmp(&want, &got[i], sizeof want) == 0 || (isnan(want) && isnan(got[i])),
                      "form %d: %a^3 = %a, the correctly rounded cube is %a", form, (double)xv[i], (double)got[i],
                      (double)want);
        }
        mrt_tensor_release(&y);
        mrt_tensor_release(&three);
        th_free(c);
    }
    mrt_tensor_release(&x);
}

/* Large binary ops outside the Add/Sub/Mul/Div fast path (here Pow: powf element by element) run as flat ranges on
   the pool when each operand is whole or one element: every element against powf, on 1 and 2 threads */
Test(elementwise_pow, large_operands_split_over_threads)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_pow.large"));
    enum { N = 3 * 4099 };
    for (int form = 0; form < 3; form++) { /* x whole, y one; both whole; x one, y whole */
        int64_t xs = form == 2 ? 1 : N, ys = form == 0 ? 1 : N;
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){xs == 1 ? 1 : 3, xs == 1 ? 1 : 4099}, 0.1, 3);
        mrt_tensor y = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){ys == 1 ? 1 : 3, ys == 1 ? 1 : 4099}, -3, 3);
        for (int threads = 1; threads <= 2; threads++) {
            th_case *c = th_begin("Pow", "", 15);
            th_input(c, &x);
            th_input(c, &y);
            mrt_session_options opt = mrt_session_options_default();
            opt.n_threads = threads;
            mrt_tensor z;
            cr_assert_eq(th_run_opt(c, &opt, 1, &z), MRT_STATUS_OK, "%s", mrt_last_error());
            cr_assert_eq(mrt_tensor_numel(&z), N);
            for (int64_t i = 0; i < N; i++) {
                float want = powf(((float *)x.data)[xs == 1 ? 0 : i], ((float *)y.data)[ys == 1 ? 0 : i]);
                float got = ((float *)z.data)[i];
                cr_assert(memcmp(&want, &got, sizeof want) == 0, "form %d, %d threads: element %lld is %a, want %a", form,
                          threads, (long long)i, (double)got, (double)want);
            }
            mrt_tensor_release(&z);
            th_free(c);
        }
        mrt_tensor_release(&x);
        mrt_tensor_release(&y);
    }
}

/* ------------------------------------------------------------------ Pow type mixes */

Test(elementwise_pow, mixed_types)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_pow.mixed_types"));
    struct {
        mrt_dtype x, y;
        double xlo, xhi, ylo, yhi;
    } cases[] = {
        {MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, -3, 3, -3, 4},  {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, -3, 3, -3, 4},
        {MRT_DTYPE_FLOAT, MRT_DTYPE_UINT32, -3, 3, 0, 4},  {MRT_DTYPE_FLOAT, MRT_DTYPE_UINT64, -3, 3, 0, 4},
        {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, 0.1, 3, -2, 2}, {MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT, 0.1, 3, -2, 2},
        {MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT, 0.1, 3, -2, 2}, {MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT16, 0.1, 3, -2, 2},
        {MRT_DTYPE_INT32, MRT_DTYPE_FLOAT, 0, 6, 0, 3},    {MRT_DTYPE_INT64, MRT_DTYPE_FLOAT, 0, 6, 0, 3},
        {MRT_DTYPE_INT32, MRT_DTYPE_INT32, -5, 5, -2, 7},  {MRT_DTYPE_INT64, MRT_DTYPE_INT64, -9, 9, -2, 12},
        {MRT_DTYPE_INT64, MRT_DTYPE_INT8, -9, 9, -2, 12},  {MRT_DTYPE_INT32, MRT_DTYPE_UINT8, -9, 9, 0, 12},
        {MRT_DTYPE_DOUBLE, MRT_DTYPE_INT16, -3, 3, -3, 3},
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (size_t s = 0; s < 5; s++) {
            const bcase *c = &bcases[s];
            mrt_tensor x = th_rand(&r, cases[k].x, c->ra, c->a, cases[k].xlo, cases[k].xhi);
            mrt_tensor y = th_rand(&r, cases[k].y, c->rb, c->b, cases[k].ylo, cases[k].yhi);
            const mrt_tensor *ins[2] = {&x, &y};
            mrt_tensor z;
            mrt_status st = run_op("Pow", 15, 2, ins, NULL, false, &z);
            if (st) {
                cr_log_error("Pow %s^%s: %s", mrt_dtype_name(cases[k].x), mrt_dtype_name(cases[k].y), mrt_last_error());
                bad++;
                continue;
            }
            int rank;
            int64_t shape[MRT_MAX_RANK], n = 1;
            ref_ew_broadcast_shape(x.rank, x.shape, y.rank, y.shape, &rank, shape);
            for (int i = 0; i < rank; i++) n *= shape[i];
            double *vx = th_to_f64(&x), *vy = th_to_f64(&y), *e = malloc((size_t)n * sizeof *e);
            bool int_x = !mrt_dtype_is_float(cases[k].x), int_y = !mrt_dtype_is_float(cases[k].y);
            for (int64_t i = 0; i < n; i++) {
                double bx = vx[ref_ew_src_index(rank, shape, i, x.rank, x.shape)];
                double ey = vy[ref_ew_src_index(rank, shape, i, y.rank, y.shape)];
                if (int_x && int_y) {
                    ref_ew_attrs ra = ref_ew_defaults("Pow");
                    e[i] = (double)ref_ew_binary_i("Pow", (int64_t)bx, (int64_t)ey, cases[k].x, &ra);
                } else {
                    e[i] = pow(bx, ey);
                    if (int_x) e[i] = trunc(e[i]); /* numpy: float result cast back to the int type */
                }
            }
            round_to(cases[k].x, e, n);
            tol t = tol_for(cases[k].x);
            char why[256];
            bool ok = z.dtype == cases[k].x && th_check_f64(&z, e, rank, shape, t.nmse, t.abs, t.rel, why, sizeof why);
            if (!ok) {
                cr_log_error("Pow %s^%s case %zu: %s", mrt_dtype_name(cases[k].x), mrt_dtype_name(cases[k].y), s, why);
                bad++;
            }
            free(vx);
            free(vy);
            free(e);
            mrt_tensor_release(&x);
            mrt_tensor_release(&y);
            mrt_tensor_release(&z);
        }
    }
    cr_assert_eq(bad, 0, "%d Pow cases failed (see log)", bad);
}

/* ------------------------------------------------------------------ PRelu */

Test(elementwise_prelu, slope_broadcast)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_prelu.slope_broadcast"));
    struct {
        int rs;
        int64_t s[3];
    } slopes[] = {{3, {3, 1, 1}}, {0, {0}}, {1, {5}}, {3, {3, 4, 5}}, {1, {1}}, {2, {4, 1}}};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT32, MRT_DTYPE_INT64,
                       MRT_DTYPE_UINT32};
    int bad = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof slopes / sizeof slopes[0]; k++) {
            bool uns = dts[d] == MRT_DTYPE_UINT32;
            mrt_tensor x = th_rand(&r, dts[d], 4, SHAPE(2, 3, 4, 5), uns ? 0 : -9, 9);
            mrt_tensor s = th_rand(&r, dts[d], slopes[k].rs, slopes[k].s, uns ? 0 : -3, 3);
            ref_ew_attrs ra = ref_ew_defaults("PRelu");
            bad += !binary_matches("PRelu", 16, &x, &s, NULL, &ra, k % 2);
            mrt_tensor_release(&x);
            mrt_tensor_release(&s);
        }
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

Test(elementwise_prelu, errors_and_legacy_channel_slope)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_prelu.errors_and_legacy_channel_slope"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, SHAPE(2, 3, 4, 5), -2, 2);
    mrt_tensor s = th_rand(&r, MRT_DTYPE_FLOAT, 1, SHAPE(3), 0, 1);
    const mrt_tensor *ins[2] = {&x, &s};
    mrt_tensor y;
    /* opset 16: a [3] slope aligns with the last axis (5): not broadcastable to X */
    cr_expect_neq(run_op("PRelu", 16, 2, ins, NULL, false, &y), MRT_STATUS_OK);
    /* opset 6: a [C] slope is per channel */
    cr_assert_eq(run_op("PRelu", 6, 2, ins, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *vx = th_to_f64(&x), *vs = th_to_f64(&s), e[120];
    for (int i = 0; i < 120; i++) e[i] = vx[i] < 0 ? vx[i] * vs[(i / 20) % 3] : vx[i];
    char why[256];
    cr_expect(th_check_f64(&y, e, 4, x.shape, 1e-12, 1e-6, 1e-6, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    /* slope bigger than X is not unidirectional */
    mrt_tensor big = th_rand(&r, MRT_DTYPE_FLOAT, 5, SHAPE(2, 2, 3, 4, 5), 0, 1);
    const mrt_tensor *ins2[2] = {&x, &big};
    cr_expect_neq(run_op("PRelu", 16, 2, ins2, NULL, false, &y), MRT_STATUS_OK);
    free(vx);
    free(vs);
    mrt_tensor_release(&x);
    mrt_tensor_release(&s);
    mrt_tensor_release(&big);
}

/* ------------------------------------------------------------------ variadic */

static bool variadic_matches(const char *op, int opset, int n_in, const mrt_tensor *const *ins)
{
    mrt_tensor y;
    mrt_status st = run_op(op, opset, n_in, ins, NULL, false, &y);
    if (st) {
        cr_log_error("%s-%d %s x%d: %s", op, opset, mrt_dtype_name(ins[0]->dtype), n_in, mrt_last_error());
        return false;
    }
    int rank = ins[0]->rank;
    int64_t shape[MRT_MAX_RANK];
    memcpy(shape, ins[0]->shape, sizeof(int64_t) * (size_t)rank);
    for (int k = 1; k < n_in; k++) cr_assert(ref_ew_broadcast_shape(rank, shape, ins[k]->rank, ins[k]->shape, &rank, shape));
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    bool fl = mrt_dtype_is_float(ins[0]->dtype);
    double *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    double *v[8];
    int64_t *vi[8];
    for (int k = 0; k < n_in; k++) {
        v[k] = th_to_f64(ins[k]);
        vi[k] = to_i64(ins[k]);
    }
    const char *pair = !strcmp(op, "Mean") ? "Sum" : op;
    ref_ew_attrs ra = ref_ew_defaults(pair);
    for (int64_t i = 0; i < n; i++) {
        int64_t i0 = ref_ew_src_index(rank, shape, i, ins[0]->rank, ins[0]->shape);
        double acc = v[0][i0];
        int64_t iacc = vi[0][i0];
        for (int k = 1; k < n_in; k++) {
            int64_t ik = ref_ew_src_index(rank, shape, i, ins[k]->rank, ins[k]->shape);
            acc = ref_ew_binary_f(pair, acc, v[k][ik], &ra);
            iacc = ref_ew_binary_i(pair, iacc, vi[k][ik], ins[0]->dtype, &ra);
        }
        e[i] = fl ? (!strcmp(op, "Mean") ? acc / n_in : acc) : (double)iacc;
    }
    round_to(ins[0]->dtype, e, n);
    tol t = tol_for(ins[0]->dtype);
    char why[256] = "dtype mismatch";
    bool ok = y.dtype == ins[0]->dtype && th_check_f64(&y, e, rank, shape, t.nmse, t.abs, t.rel, why, sizeof why);
    if (!ok) cr_log_error("%s-%d %s x%d: %s", op, opset, mrt_dtype_name(ins[0]->dtype), n_in, why);
    for (int k = 0; k < n_in; k++) {
        free(v[k]);
        free(vi[k]);
    }
    free(e);
    mrt_tensor_release(&y);
    return ok;
}

Test(elementwise_variadic, max_min_sum_mean)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_variadic.max_min_sum_mean"));
    struct {
        const char *op;
        int opset;
        bool ints;
    } ops[] = {{"Max", 13, true}, {"Min", 13, true}, {"Sum", 13, false}, {"Mean", 13, false}, {"Max", 8, true},
               {"Sum", 8, false}, {"Mean", 6, false}, {"Min", 12, true}};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16, MRT_DTYPE_INT32,
                       MRT_DTYPE_UINT8, MRT_DTYPE_INT64};
    struct {
        int n;
        int r[4];
        int64_t s[4][3];
    } shapes[] = {
        {1, {2}, {{3, 4}}},
        {2, {2, 2}, {{3, 4}, {3, 4}}},
        {3, {2, 1, 2}, {{3, 1}, {4}, {1, 4}}},
        {4, {3, 0, 2, 1}, {{2, 3, 4}, {0}, {3, 1}, {4}}},
        {2, {2, 2}, {{0, 4}, {1, 4}}},
    };
    int bad = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (!mrt_dtype_is_float(dts[d]) && !ops[k].ints) continue;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                mrt_tensor t[4];
                const mrt_tensor *ins[4];
                for (int i = 0; i < shapes[s].n; i++) {
                    t[i] = th_rand(&r, dts[d], shapes[s].r[i], shapes[s].s[i], 0, 50);
                    ins[i] = &t[i];
                }
                bad += !variadic_matches(ops[k].op, ops[k].opset, shapes[s].n, ins);
                for (int i = 0; i < shapes[s].n; i++) mrt_tensor_release(&t[i]);
            }
        }
    /* NaN propagates through Max/Min */
    int64_t n = 3;
    mrt_tensor a = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){NAN, 1, 2});
    mrt_tensor b = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, (double[]){0, NAN, INFINITY});
    const mrt_tensor *ins[2] = {&a, &b};
    bad += !variadic_matches("Max", 13, 2, ins);
    bad += !variadic_matches("Min", 13, 2, ins);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    cr_assert_eq(bad, 0, "%d cases failed (see log)", bad);
}

/* ------------------------------------------------------------------ Where */

Test(elementwise_where, three_way_broadcast)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_where.three_way_broadcast"));
    struct {
        int rc, rx, ry;
        int64_t c[3], x[3], y[3];
    } shapes[] = {
        {2, 2, 2, {3, 4}, {3, 4}, {3, 4}},
        {2, 1, 0, {3, 1}, {4}, {0}},
        {1, 3, 2, {4}, {2, 1, 4}, {3, 1}},
        {0, 2, 2, {0}, {3, 4}, {1, 4}},
        {2, 2, 1, {0, 4}, {1, 4}, {1}},
    };
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT64, MRT_DTYPE_INT8,
                       MRT_DTYPE_BOOL, MRT_DTYPE_UINT16};
    int bad = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            mrt_tensor c = th_rand(&r, MRT_DTYPE_BOOL, shapes[s].rc, shapes[s].c, 0, 1);
            mrt_tensor x = th_rand(&r, dts[d], shapes[s].rx, shapes[s].x, 0, 100);
            mrt_tensor y = th_rand(&r, dts[d], shapes[s].ry, shapes[s].y, 0, 100);
            const mrt_tensor *ins[3] = {&c, &x, &y};
            mrt_tensor z;
            mrt_status st = run_op("Where", d % 2 ? 9 : 16, 3, ins, NULL, s % 2, &z);
            if (st) {
                cr_log_error("Where %s: %s", mrt_dtype_name(dts[d]), mrt_last_error());
                bad++;
                continue;
            }
            int rank;
            int64_t shape[MRT_MAX_RANK], n = 1;
            ref_ew_broadcast_shape(c.rank, c.shape, x.rank, x.shape, &rank, shape);
            ref_ew_broadcast_shape(rank, shape, y.rank, y.shape, &rank, shape);
            for (int i = 0; i < rank; i++) n *= shape[i];
            double *vc = th_to_f64(&c), *vx = th_to_f64(&x), *vy = th_to_f64(&y), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
            for (int64_t i = 0; i < n; i++)
                e[i] = vc[ref_ew_src_index(rank, shape, i, c.rank, c.shape)] != 0
                           ? vx[ref_ew_src_index(rank, shape, i, x.rank, x.shape)]
                           : vy[ref_ew_src_index(rank, shape, i, y.rank, y.shape)];
            char why[256] = "dtype mismatch";
            bool ok = z.dtype == dts[d] && th_check_f64(&z, e, rank, shape, 0, 0, 0, why, sizeof why);
            if (!ok) {
                cr_log_error("Where %s shapes %zu: %s", mrt_dtype_name(dts[d]), s, why);
                bad++;
            }
            free(vc);
            free(vx);
            free(vy);
            free(e);
            mrt_tensor_release(&c);
            mrt_tensor_release(&x);
            mrt_tensor_release(&y);
            mrt_tensor_release(&z);
        }
    cr_assert_eq(bad, 0, "%d Where cases failed (see log)", bad);
}

Test(elementwise_where, strings)
{
    int64_t sc[] = {2, 2}, sx[] = {2}, sy[] = {1};
    mrt_tensor c = th_from_f64(MRT_DTYPE_BOOL, 2, sc, (double[]){1, 0, 0, 1});
    mrt_tensor x, y, z;
    mrt_tensor_alloc(&x, MRT_DTYPE_STRING, 1, sx);
    mrt_tensor_alloc(&y, MRT_DTYPE_STRING, 1, sy);
    ((char **)x.data)[0] = strdup("a");
    ((char **)x.data)[1] = strdup("b");
    ((char **)y.data)[0] = strdup("no");
    const mrt_tensor *ins[3] = {&c, &x, &y};
    cr_assert_eq(run_op("Where", 16, 3, ins, NULL, false, &z), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(z.dtype, MRT_DTYPE_STRING);
    const char *want[] = {"a", "no", "no", "b"};
    for (int i = 0; i < 4; i++) cr_expect_str_eq(((char **)z.data)[i], want[i], "element %d", i);
    mrt_tensor_release(&z);
    mrt_tensor_release(&c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&y);
}

/* ------------------------------------------------------------------ errors */

Test(elementwise_errors, bad_inputs_give_a_status)
{
    int64_t s34[] = {3, 4}, s5[] = {5};
    mrt_tensor a = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_FLOAT, 2, s34, 0, 1);
    mrt_tensor b = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_FLOAT, 1, s5, 0, 1);
    mrt_tensor i = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_INT32, 2, s34, 0, 1);
    mrt_tensor y;
    const mrt_tensor *ab[2] = {&a, &b}, *ai[2] = {&a, &i}, *ii[1] = {&i}, *aa[2] = {&a, &a};
    /* incompatible shapes: the message names both */
    cr_expect_eq(run_op("Add", 14, 2, ab, NULL, false, &y), MRT_STATUS_INVALID_MODEL);
    cr_expect(strstr(mrt_last_error(), "[3,4]") && strstr(mrt_last_error(), "[5]"), "message: %s", mrt_last_error());
    cr_expect_neq(run_op("Max", 13, 2, ab, NULL, true, &y), MRT_STATUS_OK);
    /* dtype mismatch and dtypes the spec doesn't allow */
    cr_expect_neq(run_op("Mul", 14, 2, ai, NULL, false, &y), MRT_STATUS_OK);
    cr_expect_neq(run_op("Sqrt", 13, 1, ii, NULL, false, &y), MRT_STATUS_OK);
    cr_expect(strstr(mrt_last_error(), "int32") != NULL, "message: %s", mrt_last_error());
    cr_expect_neq(run_op("And", 7, 2, aa, NULL, false, &y), MRT_STATUS_OK);
    cr_expect_neq(run_op("BitShift", 11, 2, aa, NULL, false, &y), MRT_STATUS_OK);
    /* bad attribute values */
    const mrt_tensor *a1[1] = {&a};
    tattr gelu_bad[] = {AS("approximate", "erf"), AEND};
    cr_expect_neq(run_op("Gelu", 20, 1, a1, gelu_bad, false, &y), MRT_STATUS_OK);
    mrt_tensor u = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_UINT8, 1, s5, 0, 9);
    const mrt_tensor *uu[2] = {&u, &u};
    tattr dir_bad[] = {AS("direction", "UP"), AEND};
    cr_expect_neq(run_op("BitShift", 11, 2, uu, dir_bad, false, &y), MRT_STATUS_OK);
    cr_expect_neq(run_op("BitShift", 11, 2, uu, NULL, false, &y), MRT_STATUS_OK);
    /* Where: condition must be bool, X and Y must agree */
    const mrt_tensor *w1[3] = {&a, &a, &a}, *w2[3] = {&u, &a, &i};
    cr_expect_neq(run_op("Where", 16, 3, w1, NULL, false, &y), MRT_STATUS_OK);
    cr_expect_neq(run_op("Where", 16, 3, w2, NULL, false, &y), MRT_STATUS_OK);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&i);
    mrt_tensor_release(&u);
}

Test(elementwise_errors, empty_tensors)
{
    int64_t s0[] = {0, 5};
    mrt_tensor a = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_FLOAT, 2, s0, 0, 1), y;
    const mrt_tensor *a1[1] = {&a}, *a2[2] = {&a, &a}, *a3[3] = {NULL, &a, &a};
    const char *un[] = {"Relu", "Sigmoid", "Abs", "Gelu", "Clip", "IsNaN"};
    for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
        cr_expect_eq(run_op(un[k], 20, 1, a1, NULL, false, &y), MRT_STATUS_OK, "%s: %s", un[k], mrt_last_error());
        cr_expect(y.rank == 2 && y.shape[0] == 0 && y.shape[1] == 5, "%s", un[k]);
        mrt_tensor_release(&y);
    }
    cr_expect_eq(run_op("Add", 14, 2, a2, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor_release(&y);
    cr_expect_eq(run_op("Sum", 13, 2, a2, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor_release(&y);
    mrt_tensor c = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_BOOL, 2, s0, 0, 1);
    a3[0] = &c;
    cr_expect_eq(run_op("Where", 16, 3, a3, NULL, false, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_expect(y.rank == 2 && y.shape[0] == 0);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&c);
}

/* ------------------------------------------------------------------ float64 oracle mode */

/* Under MRT_PRECISION_FP64 every float32 value is widened to double: the double loops must serve each op. */
Test(elementwise_fp64, ops_run_in_double)
{
    th_rng r;
    th_rng_init(&r, th_seed("elementwise_fp64.ops_run_in_double"));
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    const char *un[] = {"Sigmoid", "Gelu", "Asinh", "Softplus", "HardSwish", "Round", "Relu", "IsNaN"};
    int bad = 0;
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, SHAPE(4, 5), -4, 4);
    double *vx = th_to_f64(&x);
    for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
        th_case *c = th_begin(un[k], "", 22);
        th_input(c, &x);
        mrt_tensor y;
        mrt_status st = th_run_opt(c, &opt, 1, &y);
        th_free(c);
        if (st) {
            cr_log_error("%s fp64: %s", un[k], mrt_last_error());
            bad++;
            continue;
        }
        ref_ew_attrs ra = ref_ew_defaults(un[k]);
        double e[20];
        for (int i = 0; i < 20; i++) e[i] = ref_ew_unary(un[k], vx[i], &ra);
        char why[256];
        /* the output comes back as float32 or float64 depending on the engine: allow float32 rounding */
        if (!th_check_f64(&y, e, 2, x.shape, 1e-12, 1e-6, 1e-6, why, sizeof why)) {
            cr_log_error("%s fp64: %s", un[k], why);
            bad++;
        }
        mrt_tensor_release(&y);
    }
    /* a broadcast binary op and a mixed-type Pow */
    mrt_tensor b = th_rand(&r, MRT_DTYPE_FLOAT, 1, SHAPE(5), 0.5, 2);
    mrt_tensor ei = th_rand(&r, MRT_DTYPE_INT32, 1, SHAPE(5), -2, 3);
    struct {
        const char *op;
        const mrt_tensor *b;
    } bins[] = {{"Div", &b}, {"Pow", &ei}, {"Max", &b}};
    double *vb = th_to_f64(&b), *ve = th_to_f64(&ei);
    for (size_t k = 0; k < 3; k++) {
        th_case *c = th_begin(bins[k].op, "", 15);
        th_input(c, &x);
        th_input(c, bins[k].b);
        mrt_tensor y;
        mrt_status st = th_run_opt(c, &opt, 1, &y);
        th_free(c);
        if (st) {
            cr_log_error("%s fp64: %s", bins[k].op, mrt_last_error());
            bad++;
            continue;
        }
        ref_ew_attrs ra = ref_ew_defaults(bins[k].op);
        double e[20];
        for (int i = 0; i < 20; i++) e[i] = ref_ew_binary_f(bins[k].op, vx[i], k == 1 ? ve[i % 5] : vb[i % 5], &ra);
        char why[256];
        if (!th_check_f64(&y, e, 2, x.shape, 1e-12, 1e-6, 1e-6, why, sizeof why)) {
            cr_log_error("%s fp64: %s", bins[k].op, why);
            bad++;
        }
        mrt_tensor_release(&y);
    }
    free(vx);
    free(vb);
    free(ve);
    mrt_tensor_release(&x);
    mrt_tensor_release(&b);
    mrt_tensor_release(&ei);
    cr_assert_eq(bad, 0, "%d fp64 cases failed (see log)", bad);
}
