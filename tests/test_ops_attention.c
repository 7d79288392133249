/* Attention against a reference written here from the ONNX spec with whole matrices in double: K and V
 * concatenated after the past, KV heads repeated for grouped queries, softcap, then the mask (bool = may attend,
 * padded to the total length) and the causal frontier j <= i + past, softmax, P x V. Random data, printed seeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

typedef struct att_case {
    int64_t b, hq, hkv, sq, skv, past, d, dv;
    bool causal, rank3, bool_mask;
    int mask_last; /* 0 = no mask, else the mask's last dim (<= past + skv) */
    float softcap;
    mrt_dtype dt;
} att_case;

/* y[b][hq][sq][dv] from 4-D q/k/v (and pk/pv), all as doubles */
static void reference(const att_case *c, const double *q, const double *k, const double *v, const double *pk,
                      const double *pv, const double *mask, double *y, double *present_k, double *present_v)
{
    int64_t T = c->past + c->skv;
    double *kk = malloc((size_t)(c->b * c->hkv * T * c->d) * sizeof *kk), *vv = malloc((size_t)(c->b * c->hkv * T * c->dv) * sizeof *vv);
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hkv; h++)
            for (int64_t t = 0; t < T; t++) {
                for (int64_t x = 0; x < c->d; x++)
                    kk[((b * c->hkv + h) * T + t) * c->d + x] = t < c->past ? pk[((b * c->hkv + h) * c->past + t) * c->d + x]
                                                                            : k[((b * c->hkv + h) * c->skv + t - c->past) * c->d + x];
                for (int64_t x = 0; x < c->dv; x++)
                    vv[((b * c->hkv + h) * T + t) * c->dv + x] = t < c->past ? pv[((b * c->hkv + h) * c->past + t) * c->dv + x]
                                                                             : v[((b * c->hkv + h) * c->skv + t - c->past) * c->dv + x];
            }
    memcpy(present_k, kk, (size_t)(c->b * c->hkv * T * c->d) * sizeof *kk);
    memcpy(present_v, vv, (size_t)(c->b * c->hkv * T * c->dv) * sizeof *vv);
    double *p = malloc((size_t)T * sizeof *p);
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hq; h++) {
            int64_t g = h / (c->hq / c->hkv);
            for (int64_t i = 0; i < c->sq; i++) {
                double mx = -INFINITY, sum = 0;
                bool any = false;
                for (int64_t j = 0; j < T; j++) {
                    double s = 0;
                    for (int64_t x = 0; x < c->d; x++)
                        s += q[((b * c->hq + h) * c->sq + i) * c->d + x] * kk[((b * c->hkv + g) * T + j) * c->d + x];
                    s /= sqrt((double)c->d);
                    if (c->softcap > 0) s = c->softcap * tanh(s / c->softcap);
                    double bias = 0;
                    if (c->mask_last) bias = j < c->mask_last ? mask[i * c->mask_last + j] : -INFINITY; /* mask [sq, last] */
                    if (c->causal && j > i + c->past) bias = -INFINITY;
                    any |= bias != -INFINITY;
                    p[j] = s + bias;
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int64_t j = 0; j < T; j++) sum += p[j] = any ? exp(p[j] - mx) : 0;
                for (int64_t x = 0; x < c->dv; x++) {
                    double a = 0;
                    for (int64_t j = 0; j < T; j++) a += (sum > 0 ? p[j] / sum : 0) * vv[((b * c->hkv + g) * T + j) * c->dv + x];
                    y[((b * c->hq + h) * c->sq + i) * c->dv + x] = a;
                }
            }
        }
    free(p);
    free(kk);
    free(vv);
}

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
    reference(c, dq, dk, dv, dpk, dpv, mvals, want, wk, wv);
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
