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
