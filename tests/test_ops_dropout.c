/* Dropout: identity in inference; in training mode, a deterministic mask with the requested drop rate and
 * kept values scaled by 1/(1-ratio). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "harness.h"

Test(dropout, inference_is_identity_with_an_all_true_mask)
{
    th_rng r;
    th_rng_init(&r, th_seed("dropout.inference"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 5}, -2, 2), y[2];
    th_case *c = th_begin("Dropout", "", 13);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(memcmp(y[0].data, x.data, 15 * sizeof(float)), 0);
    cr_assert_eq(y[1].dtype, MRT_DTYPE_BOOL);
    for (int i = 0; i < 15; i++) cr_assert_eq(((uint8_t *)y[1].data)[i], 1);
    mrt_tensor_release(&y[0]);
    mrt_tensor_release(&y[1]);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(dropout, training_drops_at_the_requested_rate_and_scales)
{
    int64_t n = 20000;
    mrt_tensor x = th_from_f64(MRT_DTYPE_DOUBLE, 1, &n, NULL), y[2];
    for (int64_t i = 0; i < n; i++) ((double *)x.data)[i] = 1.0 + (double)i;
    mrt_tensor ratio = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.25});
    mrt_tensor train = th_from_f64(MRT_DTYPE_BOOL, 0, NULL, (double[]){1});
    th_case *c = th_begin("Dropout", "", 13);
    th_input(c, &x);
    th_input(c, &ratio);
    th_input(c, &train);
    th_attr_int(c, "seed", 7);
    cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t dropped = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = ((double *)y[0].data)[i];
        bool kept = ((uint8_t *)y[1].data)[i];
        if (kept) cr_assert_float_eq(v, (1.0 + (double)i) / 0.75, 1e-9);
        else cr_assert_eq(v, 0.0);
        dropped += !kept;
    }
    /* 25% +- 5 standard deviations */
    cr_assert(fabs((double)dropped / (double)n - 0.25) < 5 * sqrt(0.25 * 0.75 / (double)n), "dropped %lld", (long long)dropped);
    mrt_tensor_release(&y[0]);
    mrt_tensor_release(&y[1]);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&ratio);
    mrt_tensor_release(&train);
}
