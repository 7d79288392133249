/* CUDA module tests. CUDA is initialised inside test bodies only (Criterion forks each test); without a GPU,
 * a driver or the module, each test is skipped and says why. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda_module.h"
#include "harness.h"

static const mrt_cuda_api *open_or_skip(void)
{
    const mrt_cuda_api *api = NULL;
    if (mrt_cuda_open(&api) != MRT_STATUS_OK) cr_skip_test("skipped: %s", mrt_last_error());
    return api;
}

Test(cuda, relu_matches_cpu_reference)
{
    const mrt_cuda_api *api = open_or_skip();
    char err[512];
    th_rng r;
    th_rng_init(&r, th_seed("cuda.relu"));
    int64_t n = 100003; /* not a multiple of the block size */
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) x[i] = (float)th_rng_uniform(&r, -3, 3);
    x[0] = NAN;
    x[1] = -INFINITY;
    x[2] = INFINITY;
    void *dx, *dy;
    cr_assert_eq(api->malloc(&dx, (size_t)n * 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(api->malloc(&dy, (size_t)n * 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(api->copy_to_device(dx, x, (size_t)n * 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(api->relu_f32(dx, dy, n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(api->synchronize(err, sizeof err), 0, "%s", err);
    cr_assert_eq(api->copy_to_host(y, dy, (size_t)n * 4, err, sizeof err), 0, "%s", err);
    cr_assert(isnan(y[0]), "NaN must propagate");
    cr_assert_eq(y[1], 0.0f);
    cr_assert(isinf(y[2]) && y[2] > 0);
    for (int64_t i = 3; i < n; i++) {
        float want = x[i] > 0 ? x[i] : 0.0f;
        cr_assert_eq(y[i], want, "element %lld: %g vs %g", (long long)i, y[i], want);
    }
    api->free(dx, err, sizeof err);
    api->free(dy, err, sizeof err);
    free(x);
    free(y);
}

Test(cuda, session_on_cuda_reports_why)
{
    /* Without a device this must be a clear DEVICE_ERROR (never a crash); with one, graph execution on CUDA
       is not implemented yet and says so. */
    th_case *c = th_begin("Relu", "", 14);
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){2}, (double[]){-1, 1});
    th_input(c, &x);
    mrt_session_options opt = mrt_session_options_default();
    opt.device = "cuda";
    mrt_tensor y;
    mrt_status st = th_run_opt(c, &opt, 1, &y);
    cr_assert(st == MRT_STATUS_DEVICE_ERROR || st == MRT_STATUS_NOT_IMPLEMENTED, "status %d: %s", st, mrt_last_error());
    cr_assert(strlen(mrt_last_error()) > 10);
    mrt_tensor_release(&x);
    th_free(c);
}
