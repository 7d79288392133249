/* The CUDA loss family (ops_cuda/loss.cu: NegativeLogLikelihoodLoss 12/13/22, SoftmaxCrossEntropyLoss 12/13) against
 * the CPU kernels (tests/harness.h th_cuda_check): every reduction, weights, ignore_index, log_prob, int32/int64
 * targets, empty, rank 2 to 4, a bad target. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static const struct {
    int rank;
    int64_t shape[4];
} layouts[] = {
    {2, {0, 4}}, {2, {1, 1}}, {2, {7, 3}}, {3, {3, 5, 2}}, {4, {2, 3, 4, 5}}, {2, {600, 10}}, {3, {2, 3, 0}},
};

static void loss_case(const char *op, int opset, mrt_dtype dt, mrt_dtype tdt, const char *red, bool weights,
                      bool ignore, int n_out)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        int rank = layouts[k].rank;
        const int64_t *shape = layouts[k].shape;
        int64_t c = shape[1], tshape[3] = {shape[0], 0, 0};
        for (int i = 2; i < rank; i++) tshape[i - 1] = shape[i];
        th_case *cs = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, rank, shape, -4, 4);
        mrt_tensor t = th_rand(&r, tdt, rank - 1, tshape, 0, (double)c - 1);
        int64_t nt = mrt_tensor_numel(&t);
        if (ignore) /* every third target is the ignored class (one of the real ones, to test the skip) */
            for (int64_t i = 0; i < nt; i += 3) mrt_store_i64(tdt, t.data, i, c - 1);
        mrt_tensor w = th_rand(&r, dt, 1, &c, 0.1, 2);
        th_input(cs, &x);
        th_input(cs, &t);
        if (weights) th_input(cs, &w);
        th_attr_string(cs, "reduction", red);
        if (ignore) th_attr_int(cs, "ignore_index", c - 1);
        char label[160];
        snprintf(label, sizeof label, "%s-%d %s target %s %s%s%s layout %zu", op, opset, mrt_dtype_name(dt),
                 mrt_dtype_name(tdt), red, weights ? " weights" : "", ignore ? " ignore" : "", k);
        th_cuda_check(cs, n_out, 4, label); /* a tree sum, not the CPU's running one */
        mrt_tensor_release(&x);
        mrt_tensor_release(&t);
        mrt_tensor_release(&w);
        th_free(cs);
    }
}

Test(cuda_loss, nll_reductions)
{
    th_cuda_require();
    static const char *const reds[] = {"none", "sum", "mean"};
    for (int i = 0; i < 3; i++)
        for (int f = 0; f < 4; f++) {
            loss_case("NegativeLogLikelihoodLoss", 22, MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, reds[i], f & 1, f & 2, 1);
            loss_case("NegativeLogLikelihoodLoss", 13, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, reds[i], f & 1, f & 2, 1);
        }
}

Test(cuda_loss, sce_reductions_and_log_prob)
{
    th_cuda_require();
    static const char *const reds[] = {"none", "sum", "mean"};
    for (int i = 0; i < 3; i++)
        for (int f = 0; f < 4; f++) {
            loss_case("SoftmaxCrossEntropyLoss", 13, MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, reds[i], f & 1, f & 2, 2);
            loss_case("SoftmaxCrossEntropyLoss", 12, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, reds[i], f & 1, f & 2, 1);
        }
}

Test(cuda_loss, half_precision)
{
    th_cuda_require();
    loss_case("NegativeLogLikelihoodLoss", 13, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT64, "mean", true, false, 1);
    loss_case("SoftmaxCrossEntropyLoss", 13, MRT_DTYPE_BFLOAT16, MRT_DTYPE_INT64, "sum", false, true, 2);
}

/* every target ignored: mean is 0/0 = NaN on both */
Test(cuda_loss, all_ignored_mean_is_nan)
{
    th_cuda_require();
    int64_t xs[2] = {3, 2}, ts[1] = {3};
    double xv[6] = {1, 2, 3, 4, 5, 6}, tv[3] = {1, 1, 1};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, xs, xv), t = th_from_f64(MRT_DTYPE_INT64, 1, ts, tv);
    th_case *c = th_begin("SoftmaxCrossEntropyLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    th_attr_int(c, "ignore_index", 1);
    th_cuda_check(c, 2, 1, "all ignored");
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
    th_free(c);
}

Test(cuda_loss, bad_target_fails)
{
    th_cuda_require();
    int64_t xs[2] = {3, 2}, ts[1] = {3};
    double xv[6] = {1, 2, 3, 4, 5, 6}, tv[3] = {0, 5, 1};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, xs, xv), t = th_from_f64(MRT_DTYPE_INT64, 1, ts, tv);
    th_case *c = th_begin("NegativeLogLikelihoodLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    o.no_cpu_fallback = true;
    mrt_tensor y;
    cr_assert_neq(th_run_opt(c, &o, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "target 5 at index 1") != NULL, "%s", mrt_last_error());
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
    th_free(c);
}
