/* The CUDA softmax family (ops_cuda/softmax.cu: Softmax, LogSoftmax, Hardmax 1/11/13) against the CPU kernels
 * (tests/harness.h th_cuda_check): rows along the last axis and strided ones, both axis semantics, NaN rows, ties. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static const struct {
    int rank;
    int64_t shape[4];
} layouts[] = {
    {2, {0, 5}}, {1, {1}}, {1, {7}}, {3, {3, 5, 2}}, {2, {4, 1000}}, {3, {2, 300, 3}}, {4, {2, 3, 4, 5}}, {2, {1, 33}},
};

static void softmax_case(const char *op, int opset, mrt_dtype dt, int64_t axis, bool specials)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        int rank = layouts[k].rank;
        if (axis >= rank || axis < -rank) continue;
        th_case *c = th_begin(op, "", opset);
        /* Hardmax on a coarse grid: ties decide the index */
        bool hard = strcmp(op, "Hardmax") == 0;
        mrt_tensor x = th_rand(&r, hard ? MRT_DTYPE_INT32 : dt, rank, layouts[k].shape, hard ? -3 : -8, hard ? 3 : 8);
        if (hard) {
            double *v = th_to_f64(&x);
            mrt_tensor_release(&x);
            x = th_from_f64(dt, rank, layouts[k].shape, v);
            free(v);
        }
        int64_t n = mrt_tensor_numel(&x);
        if (specials && n > 40) {
            mrt_store_f64(dt, x.data, 3, NAN);
            mrt_store_f64(dt, x.data, n - 2, INFINITY);
            mrt_store_f64(dt, x.data, n / 2, -INFINITY);
        }
        th_input(c, &x);
        th_attr_int(c, "axis", axis);
        char label[128];
        snprintf(label, sizeof label, "%s-%d %s layout %zu axis %lld", op, opset, mrt_dtype_name(dt), k, (long long)axis);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(cuda_softmax, single_axis_semantics)
{
    th_cuda_require();
    static const char *const ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    for (int i = 0; i < 3; i++)
        for (int64_t axis = -1; axis < 3; axis++) {
            softmax_case(ops[i], 13, MRT_DTYPE_FLOAT, axis, false);
            softmax_case(ops[i], 13, MRT_DTYPE_DOUBLE, axis, axis == 1);
        }
}

Test(cuda_softmax, coerced_2d_semantics)
{
    th_cuda_require();
    static const char *const ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    for (int i = 0; i < 3; i++)
        for (int64_t axis = 0; axis < 3; axis++) {
            softmax_case(ops[i], 11, MRT_DTYPE_FLOAT, axis, false);
            softmax_case(ops[i], 1, MRT_DTYPE_DOUBLE, axis - 1, false);
        }
}

Test(cuda_softmax, nan_and_infinities)
{
    th_cuda_require();
    softmax_case("Softmax", 13, MRT_DTYPE_FLOAT, -1, true);
    softmax_case("LogSoftmax", 13, MRT_DTYPE_FLOAT, 1, true);
    softmax_case("Hardmax", 13, MRT_DTYPE_FLOAT, -1, true);
}

Test(cuda_softmax, half_precision)
{
    th_cuda_require();
    softmax_case("Softmax", 13, MRT_DTYPE_FLOAT16, -1, false);
    softmax_case("LogSoftmax", 13, MRT_DTYPE_BFLOAT16, 0, false);
    softmax_case("Hardmax", 13, MRT_DTYPE_FLOAT16, 1, false);
}

/* Two runs of one session give the same bits (no atomics, a fixed summation order). */
Test(cuda_softmax, runs_are_bit_identical)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("softmax determinism"));
    int64_t shape[2] = {8, 5000};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -10, 10);
    th_case *c = th_begin("Softmax", "", 13);
    th_input(c, &x);
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    o.no_cpu_fallback = true;
    mrt_tensor y1, y2;
    cr_assert_eq(th_run_opt(c, &o, 1, &y1), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(th_run_opt(c, &o, 1, &y2), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert(memcmp(y1.data, y2.data, (size_t)mrt_tensor_numel(&y1) * sizeof(float)) == 0);
    mrt_tensor_release(&y1);
    mrt_tensor_release(&y2);
    mrt_tensor_release(&x);
    th_free(c);
}
