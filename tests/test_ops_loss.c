/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a naive float64 reference written from the spec. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Reference: for each (n, d) with target t != ignore: loss = -lp[n, t, d] * w[t]; mean divides by sum of w. */
static void ref_loss(const double *x, bool softmax, const int64_t *t, const double *w, int64_t n, int64_t c, int64_t d,
                     const char *red, int64_t ignore, double *out, double *log_prob)
{
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < d; k++) {
            double lp[64];
            double z = 0;
            for (int64_t j = 0; j < c; j++) z += softmax ? exp(x[(i * c + j) * d + k]) : 0;
            for (int64_t j = 0; j < c; j++) {
                lp[j] = softmax ? log(exp(x[(i * c + j) * d + k]) / z) : x[(i * c + j) * d + k];
                if (log_prob) log_prob[(i * c + j) * d + k] = lp[j];
            }
            int64_t cls = t[i * d + k];
            double l = 0, wt = 0;
            if (cls != ignore) {
                wt = w ? w[cls] : 1;
                l = -lp[cls] * wt;
            }
            if (strcmp(red, "none") == 0) out[i * d + k] = l;
            sum += l;
            wsum += wt;
        }
    if (strcmp(red, "sum") == 0) out[0] = sum;
    if (strcmp(red, "mean") == 0) out[0] = sum / wsum;
}

static void check_case(th_rng *r, bool softmax, const char *red, bool weighted, int64_t ignore, mrt_dtype dt)
{
    int64_t n = th_rng_int(r, 1, 4), c = th_rng_int(r, 2, 6), d1 = th_rng_int(r, 1, 3), d2 = th_rng_int(r, 1, 3);
    int64_t xs[4] = {n, c, d1, d2}, ts[3] = {n, d1, d2}, ws[1] = {c}, d = d1 * d2;
    mrt_tensor x = th_rand(r, dt, 4, xs, -3, softmax ? 3 : 0);
    mrt_tensor t = th_rand(r, MRT_DTYPE_INT64, 3, ts, 0, (double)c - 1);
    if (ignore >= 0) ((int64_t *)t.data)[0] = ignore; /* at least one ignored element */
    mrt_tensor w = th_rand(r, dt, 1, ws, 0.2, 2);
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), out[256], lp[1024];
    ref_loss(xd, softmax, t.data, weighted ? wd : NULL, n, c, d, red, ignore, out, lp);
    th_case *cs = th_begin(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", "", 13);
    th_input(cs, &x);
    th_input(cs, &t);
    if (weighted) th_input(cs, &w);
    th_attr_string(cs, "reduction", red);
    if (ignore >= 0) th_attr_int(cs, "ignore_index", ignore);
    mrt_tensor y[2];
    cr_assert_eq(th_run(cs, softmax ? 2 : 1, y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[512];
    double tol = dt == MRT_DTYPE_DOUBLE ? 1e-12 : 1e-5;
    bool none = strcmp(red, "none") == 0;
    cr_assert(th_check_f64(&y[0], out, none ? 3 : 0, ts, tol * tol, tol, tol, why, sizeof why), "%s %s: %s",
              softmax ? "SCE" : "NLL", red, why);
    if (softmax) {
        cr_assert(th_check_f64(&y[1], lp, 4, xs, tol * tol, tol, tol, why, sizeof why), "log_prob: %s", why);
        mrt_tensor_release(&y[1]);
    }
    mrt_tensor_release(&y[0]);
    th_free(cs);
    free(xd);
    free(wd);
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
    mrt_tensor_release(&w);
}

Test(loss, random_cases_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("loss.random"));
    const char *reds[] = {"none", "sum", "mean"};
    for (int iter = 0; iter < 60; iter++)
        check_case(&r, iter % 2, reds[iter % 3], iter % 5 < 3, iter % 4 == 0 ? 1 : -1,
                   iter % 7 == 0 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT);
}

Test(loss, target_out_of_range_is_refused)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 3}, (double[]){-1, -2, -3});
    mrt_tensor t = th_vec_i64(1, (int64_t[]){3}), y;
    th_case *c = th_begin("NegativeLogLikelihoodLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "target 3"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
}
