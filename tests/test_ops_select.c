/* TopK, CumProd, Shrink, BitCast against brute-force float64 references written from the spec. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

Test(select, topk_matches_repeated_selection)
{
    th_rng r;
    th_rng_init(&r, th_seed("select.topk"));
    for (int iter = 0; iter < 40; iter++) {
        int64_t rows = th_rng_int(&r, 1, 4), len = th_rng_int(&r, 1, 12), k = th_rng_int(&r, 0, len);
        bool largest = iter % 2, ints = iter % 3 == 0;
        int64_t shape[2] = {rows, len}, out_shape[2] = {rows, k};
        /* integers from a small range force ties, which must keep the lower index first */
        mrt_tensor x = ints ? th_rand(&r, MRT_DTYPE_INT64, 2, shape, -3, 3) : th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -1, 1);
        mrt_tensor kt = th_vec_i64(1, &k), y[2];
        th_case *c = th_begin("TopK", "", 11);
        th_input(c, &x);
        th_input(c, &kt);
        th_attr_int(c, "largest", largest);
        cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
        double *xv = th_to_f64(&x), *want = malloc((size_t)(rows * k + 1) * sizeof(double)),
               *want_i = malloc((size_t)(rows * k + 1) * sizeof(double));
        for (int64_t i = 0; i < rows; i++) {
            bool used[16] = {false};
            for (int64_t j = 0; j < k; j++) { /* pick the best unused element, lowest index on ties */
                int64_t best = -1;
                for (int64_t t = 0; t < len; t++) {
                    if (used[t]) continue;
                    double v = xv[i * len + t];
                    if (best < 0 || (largest ? v > xv[i * len + best] : v < xv[i * len + best])) best = t;
                }
                used[best] = true;
                want[i * k + j] = xv[i * len + best];
                want_i[i * k + j] = (double)best;
            }
        }
        char why[256];
        cr_assert(th_check_f64(&y[0], want, 2, out_shape, 0, 0, 0, why, sizeof why), "values: %s", why);
        cr_assert(th_check_f64(&y[1], want_i, 2, out_shape, 0, 0, 0, why, sizeof why), "indices: %s", why);
        free(xv);
        free(want);
        free(want_i);
        mrt_tensor_release(&y[0]);
        mrt_tensor_release(&y[1]);
        mrt_tensor_release(&x);
        mrt_tensor_release(&kt);
        th_free(c);
    }
}

/* Reference order for topk_selection_matches_a_full_sort: NaN above every number, -0 equal to +0, then the lower
   index. */
static const double *g_sort_v;
static int g_sort_largest;
static int cmp_spec_order(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    double x = g_sort_v[a], y = g_sort_v[b];
    int c = isnan(x) || isnan(y) ? isnan(x) - isnan(y) : (x > y) - (x < y);
    if (g_sort_largest) c = -c;
    return c ? c : (a > b) - (a < b);
}

/* float32 rows long against k take the selection path (k <= len/4): ties, NaN, signed zeros, strided axes and
   ascending or descending runs (each candidate then beats the bar, so the buffer refills over and over). */
Test(select, topk_selection_matches_a_full_sort)
{
    th_rng r;
    th_rng_init(&r, th_seed("select.topk_selection"));
    for (int iter = 0; iter < 48; iter++) {
        int64_t len = th_rng_int(&r, 4, 3000), k = th_rng_int(&r, 1, len / 4), inner = iter % 4 == 3 ? 3 : 1;
        int pattern = iter % 6;
        bool largest = iter % 2;
        int64_t shape[3] = {2, len, inner}, out_shape[3] = {2, k, inner}, n = 2 * len * inner;
        double *xv = malloc((size_t)n * sizeof *xv);
        for (int64_t i = 0; i < n; i++) {
            double u = th_rng_uniform(&r, -1, 1);
            xv[i] = pattern == 0 ? u
                    : pattern == 1 ? floor(u * 4) / 4 /* many ties */
                    : pattern == 2 ? (double)(i / inner) /* ascending */
                    : pattern == 3 ? -(double)(i / inner) /* descending */
                    : pattern == 4 ? (u < -0.6 ? NAN : u < -0.2 ? 0.0 : u < 0.2 ? -0.0 : u)
                                   : (u < -0.9 ? INFINITY : u > 0.9 ? -INFINITY : u < 0 ? -0.0 : 0.0);
        }
        mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 3, shape, xv), kt = th_vec_i64(1, &k), y[2];
        double *xf = th_to_f64(&x); /* the float32 values */
        th_case *c = th_begin("TopK", "", 11);
        th_input(c, &x);
        th_input(c, &kt);
        th_attr_int(c, "axis", 1);
        th_attr_int(c, "largest", largest);
        cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
        double *want = malloc((size_t)(2 * k * inner) * sizeof *want), *want_i = malloc((size_t)(2 * k * inner) * sizeof *want_i);
        double *col = malloc((size_t)len * sizeof *col);
        int64_t *ord = malloc((size_t)len * sizeof *ord);
        for (int64_t o = 0; o < 2; o++)
            for (int64_t in = 0; in < inner; in++) {
                for (int64_t j = 0; j < len; j++) {
                    col[j] = xf[(o * len + j) * inner + in];
                    ord[j] = j;
                }
                g_sort_v = col;
                g_sort_largest = largest;
                qsort(ord, (size_t)len, sizeof *ord, cmp_spec_order);
                for (int64_t j = 0; j < k; j++) {
                    want[(o * k + j) * inner + in] = col[ord[j]];
                    want_i[(o * k + j) * inner + in] = (double)ord[j];
                }
            }
        char why[256];
        cr_assert(th_check_f64(&y[0], want, 3, out_shape, 0, 0, 0, why, sizeof why), "iter %d values: %s", iter, why);
        cr_assert(th_check_f64(&y[1], want_i, 3, out_shape, 0, 0, 0, why, sizeof why), "iter %d indices: %s", iter, why);
        /* signed zeros keep their sign: the values are copies */
        double *got = th_to_f64(&y[0]);
        for (int64_t i = 0; i < 2 * k * inner; i++) cr_assert_eq(signbit(got[i]), signbit(want[i]), "iter %d: sign of zero", iter);
        free(got);
        free(xv);
        free(xf);
        free(want);
        free(want_i);
        free(col);
        free(ord);
        mrt_tensor_release(&y[0]);
        mrt_tensor_release(&y[1]);
        mrt_tensor_release(&x);
        mrt_tensor_release(&kt);
        th_free(c);
    }
}

Test(select, cumprod_exclusive_reverse)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_DOUBLE, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    mrt_tensor axis = th_scalar_i64(1), y;
    th_case *c = th_begin("CumProd", "", 26);
    th_input(c, &x);
    th_input(c, &axis);
    th_attr_int(c, "exclusive", 1);
    th_attr_int(c, "reverse", 1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    /* reverse exclusive along rows: [2*3, 3, 1], [5*6, 6, 1] */
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){6, 3, 1, 30, 6, 1}, 2, (int64_t[]){2, 3}, 0, 0, 0, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&axis);
}

Test(select, shrink_and_bitcast)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, (double[]){-2, -0.5, 0, 0.7, 3}), y;
    th_case *c = th_begin("Shrink", "", 9);
    th_input(c, &x);
    th_attr_float(c, "lambd", 0.6f);
    th_attr_float(c, "bias", 0.25f);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){-1.75, 0, 0, 0.45, 2.75}, 1, (int64_t[]){5}, 1e-12, 1e-6, 0, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    c = th_begin("BitCast", "", 26);
    th_input(c, &x);
    th_attr_int(c, "to", MRT_DTYPE_INT32);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(((int32_t *)y.data)[0], (int32_t)0xc0000000); /* -2.0f */
    mrt_tensor_release(&y);
    th_free(c);
    c = th_begin("BitCast", "", 26);
    th_input(c, &x);
    th_attr_int(c, "to", MRT_DTYPE_INT64);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_NOT_IMPLEMENTED, "different widths are refused");
    th_free(c);
    mrt_tensor_release(&x);
}
