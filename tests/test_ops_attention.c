/* Attention, LinearAttention and CausalConvWithState against the naive float64 references of ref/attention_ref.c
 * (written from the ONNX specs): 3-D and 4-D, grouped KV heads, bool and additive masks, causal, past KV, softcap,
 * the four linear-attention rules, carry states, float16 and double, and errors. Random data, printed seeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/attention_ref.h"

typedef struct att_case {
    int64_t b, hq, hkv, sq, skv, past, d, dv;
    bool causal, rank3, bool_mask;
    int mask_last; /* 0 = no mask, else the mask's last dim (<= past + skv) */
    float softcap;
    mrt_dtype dt;
} att_case;

/* [b, h, s, d] -> [b, s, h*d] */
static mrt_tensor to_3d(const mrt_tensor *t)
{
    int64_t b = t->shape[0], h = t->shape[1], s = t->shape[2], d = t->shape[3];
    mrt_tensor o;
    cr_assert_eq(mrt_tensor_alloc(&o, t->dtype, 3, (int64_t[]){b, s, h * d}), MRT_STATUS_OK);
    for (int64_t i0 = 0; i0 < b; i0++)
        for (int64_t i1 = 0; i1 < h; i1++)
            for (int64_t i2 = 0; i2 < s; i2++)
                for (int64_t i3 = 0; i3 < d; i3++)
                    mrt_store_f64(t->dtype, o.data, (i0 * s + i2) * h * d + i1 * d + i3,
                                  mrt_load_f64(t->dtype, t->data, ((i0 * h + i1) * s + i2) * d + i3));
    return o;
}

static void run_case(th_rng *r, const att_case *c, const char *label)
{
    int64_t T = c->past + c->skv;
    mrt_tensor q = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hq, c->sq, c->d}, -1, 1);
    mrt_tensor k = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hkv, c->skv, c->d}, -1, 1);
    mrt_tensor v = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hkv, c->skv, c->dv}, -1, 1);
    mrt_tensor pk = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hkv, c->past, c->d}, -1, 1);
    mrt_tensor pv = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hkv, c->past, c->dv}, -1, 1);
    mrt_tensor mask = {0};
    double *mvals = NULL;
    if (c->mask_last) {
        mvals = malloc((size_t)(c->sq * c->mask_last) * sizeof *mvals);
        cr_assert_eq(mrt_tensor_alloc(&mask, c->bool_mask ? MRT_DTYPE_BOOL : c->dt, 2, (int64_t[]){c->sq, c->mask_last}), MRT_STATUS_OK);
        for (int64_t i = 0; i < c->sq * c->mask_last; i++) {
            bool keep = th_rng_int(r, 0, 3) != 0 || i % c->mask_last == 0; /* every row keeps key 0 */
            double add = th_rng_uniform(r, -2, 0);
            mvals[i] = c->bool_mask ? (keep ? 0 : -INFINITY) : round(add * 8) / 8; /* exact in float16 */
            mrt_store_f64(mask.dtype, mask.data, i, c->bool_mask ? keep : mvals[i]);
        }
    }
    double *dq = th_to_f64(&q), *dk = th_to_f64(&k), *dv = th_to_f64(&v), *dpk = th_to_f64(&pk), *dpv = th_to_f64(&pv);
    double *want = malloc((size_t)(c->b * c->hq * c->sq * c->dv) * sizeof *want);
    double *wk = malloc((size_t)(c->b * c->hkv * T * c->d) * sizeof *wk), *wv = malloc((size_t)(c->b * c->hkv * T * c->dv) * sizeof *wv);
    ref_attention_dims rd = {c->b, c->hq, c->hkv, c->sq, c->skv, c->past, c->d, c->dv, c->mask_last, c->causal, c->softcap};
    ref_attention(&rd, dq, dk, dv, dpk, dpv, mvals, want, wk, wv);
    mrt_tensor q3 = c->rank3 ? to_3d(&q) : q, k3 = c->rank3 ? to_3d(&k) : k, v3 = c->rank3 ? to_3d(&v) : v;
    th_case *tc = th_begin("Attention", "", 23);
    th_input(tc, &q3);
    th_input(tc, &k3);
    th_input(tc, &v3);
    if (c->mask_last) th_input(tc, &mask);
    else th_input_absent(tc);
    if (c->past) {
        th_input(tc, &pk);
        th_input(tc, &pv);
    }
    if (c->causal) th_attr_int(tc, "is_causal", 1);
    if (c->softcap > 0) th_attr_float(tc, "softcap", c->softcap);
    if (c->rank3) {
        th_attr_int(tc, "q_num_heads", c->hq);
        th_attr_int(tc, "kv_num_heads", c->hkv);
    }
    mrt_tensor out[3] = {{0}};
    int n_out = c->past ? 3 : 1;
    cr_assert_eq(th_run(tc, n_out, out), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    double tol = c->dt == MRT_DTYPE_FLOAT16 ? 2e-3 : 1e-5;
    int64_t ny = c->b * c->hq * c->sq * c->dv;
    for (int64_t i = 0; i < ny; i++) {
        int64_t b = i / (c->hq * c->sq * c->dv), h = i / (c->sq * c->dv) % c->hq, s = i / c->dv % c->sq, x = i % c->dv;
        int64_t at = c->rank3 ? (b * c->sq + s) * c->hq * c->dv + h * c->dv + x : i;
        double got = mrt_load_f64(out[0].dtype, out[0].data, at);
        cr_assert(fabs(got - want[i]) <= tol * (1 + fabs(want[i])), "%s: Y[%lld] = %.7g, expected %.7g", label, (long long)i,
                  got, want[i]);
    }
    if (c->past) {
        for (int64_t i = 0; i < c->b * c->hkv * T * c->d; i++)
            cr_assert_eq(mrt_load_f64(c->dt, out[1].data, i), wk[i], "%s: present_key[%lld]", label, (long long)i);
        for (int64_t i = 0; i < c->b * c->hkv * T * c->dv; i++)
            cr_assert_eq(mrt_load_f64(c->dt, out[2].data, i), wv[i], "%s: present_value[%lld]", label, (long long)i);
    }
    for (int i = 0; i < n_out; i++) mrt_tensor_release(&out[i]);
    th_free(tc);
    if (c->rank3) {
        mrt_tensor_release(&q3);
        mrt_tensor_release(&k3);
        mrt_tensor_release(&v3);
    }
    mrt_tensor *all[] = {&q, &k, &v, &pk, &pv, &mask};
    for (int i = 0; i < 6; i++) mrt_tensor_release(all[i]);
    free(dq), free(dk), free(dv), free(dpk), free(dpv), free(want), free(wk), free(wv), free(mvals);
}

Test(attention, against_a_whole_matrix_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("attention.reference"));
    /* b, hq, hkv, sq, skv, past, d, dv, causal, rank3, bool_mask, mask_last, softcap, dtype */
    const att_case cases[] = {
        {2, 4, 4, 3, 5, 0, 8, 8, false, false, false, 0, 0, MRT_DTYPE_FLOAT},
        {1, 4, 2, 3, 3, 2, 8, 6, true, false, false, 0, 0, MRT_DTYPE_FLOAT},   /* GQA, causal with past */
        {2, 6, 3, 4, 4, 0, 4, 4, false, true, true, 4, 0, MRT_DTYPE_FLOAT},    /* 3-D, bool mask */
        {1, 2, 2, 3, 4, 2, 4, 4, true, false, false, 5, 0, MRT_DTYPE_FLOAT},   /* float mask padded 5 -> 6, causal */
        {1, 2, 1, 2, 3, 0, 8, 8, false, false, false, 0, 2.5f, MRT_DTYPE_DOUBLE},
        {1, 2, 2, 3, 3, 1, 8, 8, false, false, false, 0, 0, MRT_DTYPE_FLOAT16},
        {2, 8, 2, 17, 9, 24, 16, 12, true, true, false, 0, 0, MRT_DTYPE_FLOAT},  /* 3-D GQA, past, causal, bigger */
        {1, 4, 1, 5, 7, 0, 8, 8, false, false, true, 7, 3.0f, MRT_DTYPE_FLOAT16}, /* MQA, bool mask, softcap, fp16 */
        {1, 2, 2, 6, 6, 0, 4, 4, true, true, false, 6, 0, MRT_DTYPE_DOUBLE},     /* 3-D causal + float mask, double */
        {1, 2, 2, 0, 3, 0, 4, 4, false, false, false, 0, 0, MRT_DTYPE_FLOAT},    /* no query rows */
        {1, 1, 1, 2100, 2100, 0, 2, 2, true, false, false, 0, 0, MRT_DTYPE_FLOAT}, /* scores in two row blocks */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "case %zu", i);
        run_case(&r, &cases[i], label);
    }
}

Test(attention, mismatched_heads_are_an_error)
{
    th_rng r;
    th_rng_init(&r, th_seed("attention.error"));
    mrt_tensor q = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 2, 4}, -1, 1);
    mrt_tensor k = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 4}, -1, 1);
    th_case *tc = th_begin("Attention", "", 23);
    th_input(tc, &q);
    th_input(tc, &k);
    th_input(tc, &k);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "3 query heads are not a multiple of 2 KV heads"), "%s", mrt_last_error());
    th_free(tc);
    mrt_tensor_release(&q);
    mrt_tensor_release(&k);
}

Test(attention, mismatched_head_sizes_are_an_error)
{
    th_rng r;
    th_rng_init(&r, th_seed("attention.head_size_error"));
    mrt_tensor q = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 8}, -1, 1);
    mrt_tensor k = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 3, 6}, -1, 1);
    th_case *tc = th_begin("Attention", "", 24);
    th_input(tc, &q);
    th_input(tc, &k);
    th_input(tc, &k);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "head size must agree"), "%s", mrt_last_error());
    th_free(tc);
    mrt_tensor_release(&q);
    mrt_tensor_release(&k);
}

/* ---- LinearAttention */

typedef struct lin_case {
    const char *rule;
    int64_t b, t, hq, hkv, dk, dv;
    bool past, decay_per_key, beta_shared;
    float scale;
    mrt_dtype dt;
} lin_case;

static void run_linear_case(th_rng *r, const lin_case *c, const char *label)
{
    bool gated = strstr(c->rule, "gated") != NULL, delta = strstr(c->rule, "delta") != NULL;
    int64_t decay_last = c->decay_per_key ? c->hkv * c->dk : c->hkv, beta_last = c->beta_shared ? 1 : c->hkv;
    mrt_tensor q = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->t, c->hq * c->dk}, -1, 1);
    mrt_tensor k = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->t, c->hkv * c->dk}, -0.5, 0.5);
    mrt_tensor v = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->t, c->hkv * c->dv}, -1, 1);
    mrt_tensor st = th_rand(r, c->dt, 4, (int64_t[]){c->b, c->hkv, c->dk, c->dv}, -1, 1);
    mrt_tensor decay = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->t, decay_last}, -0.7, 0);
    mrt_tensor beta = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->t, beta_last}, 0.1, 0.9);
    double *dq = th_to_f64(&q), *dk = th_to_f64(&k), *dv = th_to_f64(&v), *dst = th_to_f64(&st);
    double *ddecay = th_to_f64(&decay), *dbeta = th_to_f64(&beta);
    int64_t ny = c->b * c->t * c->hq * c->dv, ns = c->b * c->hkv * c->dk * c->dv;
    double *want = malloc((size_t)(ny + 1) * sizeof *want), *want_s = malloc((size_t)(ns + 1) * sizeof *want_s);
    ref_linear_attention(c->rule, c->b, c->t, c->hq, c->hkv, c->dk, c->dv, c->scale, dq, dk, dv, c->past ? dst : NULL,
                         gated ? ddecay : NULL, decay_last, delta ? dbeta : NULL, beta_last, want, want_s);
    th_case *tc = th_begin("LinearAttention", "", 27);
    th_input(tc, &q);
    th_input(tc, &k);
    th_input(tc, &v);
    if (c->past) th_input(tc, &st);
    else th_input_absent(tc);
    if (gated) th_input(tc, &decay);
    else th_input_absent(tc);
    if (delta) th_input(tc, &beta);
    th_attr_int(tc, "q_num_heads", c->hq);
    th_attr_int(tc, "kv_num_heads", c->hkv);
    th_attr_string(tc, "update_rule", c->rule);
    if (c->scale != 0) th_attr_float(tc, "scale", c->scale);
    mrt_tensor out[2] = {{0}};
    cr_assert_eq(th_run(tc, 2, out), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    char why[256];
    double nmse = c->dt == MRT_DTYPE_FLOAT16 ? 1e-5 : c->dt == MRT_DTYPE_FLOAT ? 1e-10 : 1e-24;
    double tol = c->dt == MRT_DTYPE_FLOAT16 ? 3e-3 : c->dt == MRT_DTYPE_FLOAT ? 1e-5 : 1e-12;
    cr_assert(th_check_f64(&out[0], want, 3, (int64_t[]){c->b, c->t, c->hq * c->dv}, nmse, tol, tol, why, sizeof why),
              "%s: output: %s", label, why);
    cr_assert(th_check_f64(&out[1], want_s, 4, (int64_t[]){c->b, c->hkv, c->dk, c->dv}, nmse, tol, tol, why, sizeof why),
              "%s: present_state: %s", label, why);
    for (int i = 0; i < 2; i++) mrt_tensor_release(&out[i]);
    th_free(tc);
    mrt_tensor *all[] = {&q, &k, &v, &st, &decay, &beta};
    for (int i = 0; i < 6; i++) mrt_tensor_release(all[i]);
    free(dq), free(dk), free(dv), free(dst), free(ddecay), free(dbeta), free(want), free(want_s);
}

Test(linear_attention, against_the_recurrence)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear_attention.reference"));
    /* rule, b, t, hq, hkv, dk, dv, past, decay_per_key, beta_shared, scale, dtype */
    const lin_case cases[] = {
        {"linear", 2, 5, 2, 2, 4, 3, false, false, false, 0, MRT_DTYPE_FLOAT},
        {"gated", 1, 4, 3, 3, 5, 4, true, true, false, 0, MRT_DTYPE_FLOAT},
        {"gated", 2, 3, 2, 2, 4, 4, false, false, false, 0.5f, MRT_DTYPE_FLOAT}, /* per-head decay, explicit scale */
        {"delta", 2, 4, 4, 4, 4, 6, true, false, false, 0, MRT_DTYPE_FLOAT},
        {"gated_delta", 2, 6, 8, 4, 8, 8, true, true, false, 0, MRT_DTYPE_FLOAT},  /* GQA */
        {"gated_delta", 1, 5, 6, 1, 4, 5, false, false, true, 0, MRT_DTYPE_FLOAT}, /* MQA, per-head decay, shared beta */
        {"gated_delta", 2, 4, 4, 2, 4, 4, false, true, true, 0, MRT_DTYPE_FLOAT},  /* beta [B, T, 1], 2 KV heads */
        {"gated_delta", 1, 3, 4, 2, 8, 8, true, true, false, 0, MRT_DTYPE_FLOAT16},
        {"delta", 1, 4, 2, 2, 3, 5, true, false, false, 0, MRT_DTYPE_DOUBLE},
        {"linear", 1, 0, 2, 2, 4, 4, true, false, false, 0, MRT_DTYPE_FLOAT}, /* no tokens: the state passes through */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "case %zu (%s)", i, cases[i].rule);
        run_linear_case(&r, &cases[i], label);
    }
}

Test(linear_attention, rule_inputs_are_checked)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear_attention.errors"));
    mrt_tensor q = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 8}, -1, 1);
    mrt_tensor k6 = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 6}, -1, 1);
    /* gated_delta (the default) without decay and beta */
    th_case *tc = th_begin("LinearAttention", "", 27);
    th_input(tc, &q);
    th_input(tc, &q);
    th_input(tc, &q);
    th_attr_int(tc, "q_num_heads", 2);
    th_attr_int(tc, "kv_num_heads", 2);
    mrt_tensor y[2] = {{0}};
    cr_assert_eq(th_run(tc, 2, y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "requires the decay input"), "%s", mrt_last_error());
    th_free(tc);
    /* key head size 3 against query head size 4 */
    tc = th_begin("LinearAttention", "", 27);
    th_input(tc, &q);
    th_input(tc, &k6);
    th_input(tc, &q);
    th_attr_int(tc, "q_num_heads", 2);
    th_attr_int(tc, "kv_num_heads", 2);
    th_attr_string(tc, "update_rule", "linear");
    cr_assert_eq(th_run(tc, 2, y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "do not fit query"), "%s", mrt_last_error());
    th_free(tc);
    mrt_tensor_release(&q);
    mrt_tensor_release(&k6);
}

/* ---- CausalConvWithState */

typedef struct conv_case {
    int64_t b, c, l, kw;
    bool bias, past, silu;
    mrt_dtype dt;
} conv_case;

static void run_conv_case(th_rng *r, const conv_case *c, const char *label)
{
    mrt_tensor x = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->c, c->l}, -2, 2);
    mrt_tensor w = th_rand(r, c->dt, 3, (int64_t[]){c->c, 1, c->kw}, -1, 1);
    mrt_tensor bias = th_rand(r, c->dt, 1, (int64_t[]){c->c}, -1, 1);
    mrt_tensor past = th_rand(r, c->dt, 3, (int64_t[]){c->b, c->c, c->kw - 1}, -2, 2);
    double *dx = th_to_f64(&x), *dw = th_to_f64(&w), *db = th_to_f64(&bias), *dp = th_to_f64(&past);
    int64_t ny = c->b * c->c * c->l, np = c->b * c->c * (c->kw - 1);
    double *want = malloc((size_t)(ny + 1) * sizeof *want), *want_p = malloc((size_t)(np + 1) * sizeof *want_p);
    ref_causal_conv_with_state(dx, dw, c->bias ? db : NULL, c->past ? dp : NULL, c->b, c->c, c->l, c->kw, c->silu, want,
                               want_p);
    th_case *tc = th_begin("CausalConvWithState", "", 27);
    th_input(tc, &x);
    th_input_const(tc, &w);
    if (c->bias) th_input_const(tc, &bias);
    else if (c->past) th_input_absent(tc);
    if (c->past) th_input(tc, &past);
    if (c->silu) th_attr_string(tc, "activation", "silu");
    mrt_tensor out[2] = {{0}};
    cr_assert_eq(th_run(tc, 2, out), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    char why[256];
    double nmse = c->dt == MRT_DTYPE_FLOAT16 ? 1e-5 : c->dt == MRT_DTYPE_FLOAT ? 1e-10 : 1e-24;
    double tol = c->dt == MRT_DTYPE_FLOAT16 ? 4e-3 : c->dt == MRT_DTYPE_FLOAT ? 1e-5 : 1e-12;
    cr_assert(th_check_f64(&out[0], want, 3, (int64_t[]){c->b, c->c, c->l}, nmse, tol, tol, why, sizeof why),
              "%s: output: %s", label, why);
    /* the carry state is copied, never rounded: exact */
    cr_assert(th_check_f64(&out[1], want_p, 3, (int64_t[]){c->b, c->c, c->kw - 1}, 0, 0, 0, why, sizeof why),
              "%s: present_state: %s", label, why);
    for (int i = 0; i < 2; i++) mrt_tensor_release(&out[i]);
    th_free(tc);
    mrt_tensor *all[] = {&x, &w, &bias, &past};
    for (int i = 0; i < 4; i++) mrt_tensor_release(all[i]);
    free(dx), free(dw), free(db), free(dp), free(want), free(want_p);
}

Test(causal_conv_with_state, against_a_padded_convolution)
{
    th_rng r;
    th_rng_init(&r, th_seed("causal_conv_with_state.reference"));
    /* b, c, l, kw, bias, past, silu, dtype */
    const conv_case cases[] = {
        {2, 3, 7, 4, false, false, false, MRT_DTYPE_FLOAT},
        {2, 3, 7, 4, true, true, false, MRT_DTYPE_FLOAT},
        {1, 5, 6, 3, false, true, true, MRT_DTYPE_FLOAT},
        {2, 2, 5, 1, true, false, false, MRT_DTYPE_FLOAT}, /* k = 1: an empty carry state */
        {2, 3, 2, 5, false, true, false, MRT_DTYPE_FLOAT}, /* input shorter than k - 1: the state keeps old entries */
        {1, 4, 1, 4, true, true, true, MRT_DTYPE_FLOAT},   /* one decode step */
        {2, 3, 8, 4, true, true, true, MRT_DTYPE_FLOAT16},
        {2, 3, 6, 3, true, true, true, MRT_DTYPE_DOUBLE},
        {2, 3, 0, 3, false, true, false, MRT_DTYPE_FLOAT}, /* empty input: the past passes through */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "case %zu", i);
        run_conv_case(&r, &cases[i], label);
    }
}

Test(causal_conv_with_state, shapes_are_checked)
{
    th_rng r;
    th_rng_init(&r, th_seed("causal_conv_with_state.errors"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 5}, -1, 1);
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){4, 1, 3}, -1, 1);
    th_case *tc = th_begin("CausalConvWithState", "", 27);
    th_input(tc, &x);
    th_input(tc, &w);
    mrt_tensor y[2] = {{0}};
    cr_assert_eq(th_run(tc, 2, y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "weight [4,1,3]") || strstr(mrt_last_error(), "weight [4, 1, 3]"), "%s",
              mrt_last_error());
    th_free(tc);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
}
