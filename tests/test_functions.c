/* ONNX functions. Model-local ones: nested calls, attributes passed by reference and defaulted, compared with
 * ONNX Runtime (models/fixtures/functions, made by models/scripts/make_function_fixture.py). The standard's
 * function bodies (engine/std_functions.c): an op without a kernel, and kernels expanded on request, against
 * the op's formula in double. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loader/npy.h"

#define FIX MRT_SOURCE_DIR "/models/fixtures/functions/"

static void run(mrt_precision precision, mrt_tensor *y)
{
    mrt_model *m;
    cr_assert_eq(mrt_model_load(FIX "model.onnx", &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor x;
    cr_assert_eq(mrt_npy_read_file(FIX "x.npy", &x), MRT_STATUS_OK);
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = precision;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK);
    const char *name = "X";
    mrt_value xv = mrt_value_from_tensor(x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_tensor_copy(y, &mrt_session_output(s, 0)->tensor), MRT_STATUS_OK);
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_model_free(m);
}

Test(functions, nested_calls_with_attribute_references_match_onnxruntime)
{
    mrt_tensor y, want;
    run(MRT_PRECISION_DEFAULT, &y);
    cr_assert_eq(mrt_npy_read_file(FIX "y_ort.npy", &want), MRT_STATUS_OK);
    char why[512];
    cr_assert(th_check_tensor(&y, &want, 1e-12, 1e-6, 1e-5, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    /* the float64 oracle runs through function bodies too */
    run(MRT_PRECISION_FP64, &y);
    cr_assert_eq(y.dtype, MRT_DTYPE_DOUBLE);
    double *ref = th_to_f64(&want);
    bool ok = th_check_f64(&y, ref, want.rank, want.shape, 1e-10, 1e-5, 1e-4, why, sizeof why);
    free(ref);
    cr_assert(ok, "%s", why);
    mrt_tensor_release(&y);
    mrt_tensor_release(&want);
}

/* ------------------------------------------------------------------ the standard's function bodies */

/* SwiGLU (opset 28) has no minirt kernel: it runs through the body the standard defines,
   Y = A * Sigmoid(alpha * A) * B, checked here against that formula in double. */
static void check_swiglu(mrt_dtype dt, bool give_alpha)
{
    th_rng r;
    th_rng_init(&r, th_seed(give_alpha ? "swiglu_alpha" : "swiglu_default"));
    const int64_t shape[2] = {3, 7};
    mrt_tensor a = th_rand(&r, dt, 2, shape, -4, 4), b = th_rand(&r, dt, 2, shape, -2, 2);
    double alpha = give_alpha ? 0.75 : 1.0;
    th_case *c = th_begin("SwiGLU", "", 28);
    th_input(c, &a);
    th_input(c, &b);
    if (give_alpha) th_attr_float(c, "alpha", (float)alpha);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(th_stats(c)->function_nodes, 1, "SwiGLU should run through its function body");
    double *av = th_to_f64(&a), *bv = th_to_f64(&b), *want = th_alloc_f64(21);
    for (int i = 0; i < 21; i++) want[i] = av[i] / (1.0 + exp(-alpha * av[i])) * bv[i];
    th_assert_close(&y, dt, want, 2, shape, give_alpha ? "SwiGLU alpha=0.75" : "SwiGLU default alpha");
    free(av);
    free(bv);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    th_free(c);
}

Test(std_functions, op_without_kernel_runs_the_standard_body)
{
    check_swiglu(MRT_DTYPE_FLOAT, false);
    check_swiglu(MRT_DTYPE_FLOAT, true);
    check_swiglu(MRT_DTYPE_DOUBLE, true);
}

/* MeanVarianceNormalization's body reads `axes` by reference; the schema's default ([0, 2, 3]) must reach it
   (ReduceMean's own default, all axes, would give a different answer). */
static void run_mvn(const mrt_tensor *x, const char *expand, mrt_tensor *y, int *function_nodes)
{
    th_case *c = th_begin("MeanVarianceNormalization", "", 13);
    th_input(c, x);
    mrt_session_options opt = mrt_session_options_default();
    opt.expand_functions = expand;
    cr_assert_eq(th_run_opt(c, &opt, 1, y), MRT_STATUS_OK, "%s", mrt_last_error());
    *function_nodes = th_stats(c)->function_nodes;
    th_free(c);
}

Test(std_functions, expanded_kernel_gets_the_schema_default_attributes)
{
    th_rng r;
    th_rng_init(&r, th_seed("mvn_expanded"));
    const int64_t shape[4] = {2, 3, 4, 5};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, shape, -3, 5);
    double *xv = th_to_f64(&x), *want = th_alloc_f64(120);
    for (int ch = 0; ch < 3; ch++) { /* statistics over N, H, W for each channel */
        double sum = 0, sq = 0;
        for (int n = 0; n < 2; n++)
            for (int k = 0; k < 20; k++) {
                double v = xv[(n * 3 + ch) * 20 + k];
                sum += v;
                sq += v * v;
            }
        double mean = sum / 40, sd = sqrt(sq / 40 - mean * mean);
        for (int n = 0; n < 2; n++)
            for (int k = 0; k < 20; k++) {
                int at = (n * 3 + ch) * 20 + k;
                want[at] = (xv[at] - mean) / (sd + 1e-9);
            }
    }
    mrt_tensor y;
    int fn;
    run_mvn(&x, "MeanVarianceNormalization", &y, &fn);
    cr_assert_eq(fn, 1, "the expanded run should use the function body");
    th_assert_close(&y, MRT_DTYPE_FLOAT, want, 4, shape, "MVN through its body");
    mrt_tensor_release(&y);
    run_mvn(&x, NULL, &y, &fn);
    cr_assert_eq(fn, 0, "without expand_functions the kernel runs");
    th_assert_close(&y, MRT_DTYPE_FLOAT, want, 4, shape, "MVN kernel");
    mrt_tensor_release(&y);
    free(xv);
    free(want);
    mrt_tensor_release(&x);
}

/* Softplus-1's only body draws its ops from opset 18; a model at opset 13 still gets it. */
Test(std_functions, body_from_a_newer_opset_defines_an_older_version)
{
    th_rng r;
    th_rng_init(&r, th_seed("softplus_expanded"));
    const int64_t shape[1] = {50};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_DOUBLE, 1, shape, -20, 20);
    th_case *c = th_begin("Softplus", "", 13);
    th_input(c, &x);
    mrt_session_options opt = mrt_session_options_default();
    opt.expand_functions = "all";
    mrt_tensor y;
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(th_stats(c)->function_nodes, 1);
    double *xv = th_to_f64(&x), *want = th_alloc_f64(50);
    for (int i = 0; i < 50; i++) want[i] = log1p(exp(xv[i]));
    th_assert_close(&y, MRT_DTYPE_DOUBLE, want, 1, shape, "Softplus through its body");
    free(xv);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(std_functions, expanding_an_op_without_a_body_is_an_error)
{
    const int64_t shape[1] = {4};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, shape, (double[]){1, 2, 3, 4});
    th_case *c = th_begin("Relu", "", 14);
    th_input(c, &x);
    mrt_session_options opt = mrt_session_options_default();
    opt.expand_functions = "Relu,Conv";
    mrt_tensor y;
    cr_assert_neq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "op 'Conv' has no ONNX function body"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&x);
}
