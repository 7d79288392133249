/* Op plugins (engine/plugin.c, include/minirt/minirt_plugin.h): the example plugin customOp2 against
 * PyTorch's output, the unknown-op message without it, load errors (ABI mismatch, not a plugin, init
 * failure, duplicates), replacing built-ins, and the API surface through tests/plugins/testops.c.
 * The plugin table is process-wide and Criterion forks per test: each test loads what it needs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "harness.h"
#include "loader/npy.h"
#include "minirt/minirt.h"

#define CUSTOMOP2_SO MRT_BINARY_DIR "/plugins/libminirt_customop2.so"
#define TEST_SO(name) MRT_BINARY_DIR "/test_plugins/libmrt_test_" name ".so"
#define FIXTURE(name) MRT_SOURCE_DIR "/models/fixtures/customop2/" name

#define assert_msg_has(needle)                                                                         \
    cr_assert(strstr(mrt_last_error(), (needle)) != NULL, "message lacks \"%s\": %s", (needle), mrt_last_error())

static void load_ok(const char *path, bool replace)
{
    mrt_status st = mrt_plugin_load(path, replace);
    cr_assert_eq(st, MRT_STATUS_OK, "loading %s: %s", path, mrt_last_error());
}

/* Reference from the definition, in double: clamp(x, min=0) / (1 + exp(-x)). */
static double customop2_ref(double x)
{
    if (isnan(x)) return x;
    double c = x > 0 ? x : 0;
    return c / (1 + exp(-x));
}

/* Run a loaded model on one input; the output is a deep copy. */
static mrt_status run_model(const mrt_model *m, const mrt_session_options *opt, const mrt_tensor *x,
                            mrt_tensor *y)
{
    mrt_session *s = NULL;
    mrt_status st = mrt_session_new(m, opt, &s);
    if (!st) {
        const char *names[] = {mrt_model_input_name(m, 0)};
        mrt_value in = mrt_value_from_tensor(*x);
        st = mrt_session_run(s, 1, names, &in);
    }
    if (!st) st = mrt_tensor_copy(y, &mrt_session_output(s, 0)->tensor);
    mrt_session_free(s);
    return st;
}

/* ------------------------------------------------------------------ the example plugin */

Test(plugin, customop2_model_matches_pytorch)
{
    load_ok(CUSTOMOP2_SO, false);
    mrt_model *m = NULL;
    cr_assert_eq(mrt_model_load(FIXTURE("model_with_customOp2.onnx"), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor x, y_torch, y;
    cr_assert_eq(mrt_npy_read_file(FIXTURE("x.npy"), &x), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_npy_read_file(FIXTURE("y_torch.npy"), &y_torch), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(x.dtype, MRT_DTYPE_FLOAT);
    mrt_session_options opt = mrt_session_options_default();
    cr_assert_eq(run_model(m, &opt, &x, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[512];
    /* float32 vs PyTorch's float32: a few ulps */
    cr_assert(th_check_tensor(&y, &y_torch, 1e-12, 1e-6, 1e-5, why, sizeof why), "vs PyTorch: %s", why);
    /* and vs the definition in double: the model is customOp2(2x) + x */
    int64_t n = mrt_tensor_numel(&x);
    double *ref = malloc((size_t)n * sizeof *ref);
    for (int64_t i = 0; i < n; i++) {
        double xi = ((const float *)x.data)[i];
        ref[i] = customop2_ref((double)(float)(2 * xi)) + xi;
    }
    cr_assert(th_check_f64(&y, ref, x.rank, x.shape, 1e-12, 1e-6, 1e-5, why, sizeof why), "vs reference: %s", why);
    /* fp64 oracle mode runs the plugin's double path */
    mrt_tensor y64;
    opt.precision = MRT_PRECISION_FP64;
    cr_assert_eq(run_model(m, &opt, &x, &y64), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int64_t i = 0; i < n; i++) {
        double xi = ((const float *)x.data)[i];
        ref[i] = customop2_ref(2 * xi) + xi;
    }
    double tol = y64.dtype == MRT_DTYPE_DOUBLE ? 1e-13 : 1e-6;
    cr_assert(th_check_f64(&y64, ref, x.rank, x.shape, tol * tol, tol, tol, why, sizeof why), "fp64 mode: %s", why);
    free(ref);
    mrt_tensor_release(&y64);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&y_torch);
    mrt_model_free(m);
}

static void check_customop2(mrt_dtype dt, double tol)
{
    load_ok(CUSTOMOP2_SO, false);
    th_rng rng;
    th_rng_init(&rng, th_seed(dt == MRT_DTYPE_DOUBLE ? "plugin::customop2_double" : "plugin::customop2_float"));
    int64_t shape[] = {3, 5, 7};
    mrt_tensor x = th_rand(&rng, dt, 3, shape, -8, 8);
    /* edge values: zeros of both signs, far tails, NaN, infinities */
    const double edges[] = {0.0, -0.0, -1000.0, 1000.0, NAN, INFINITY, -INFINITY, 1e-30, -1e-30};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) mrt_store_f64(dt, x.data, (int64_t)i, edges[i]);
    th_case *c = th_begin("customOp2", "custom_domain", 1);
    th_input(c, &x);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, dt);
    int64_t n = mrt_tensor_numel(&x);
    double *ref = malloc((size_t)n * sizeof *ref);
    for (int64_t i = 0; i < n; i++) ref[i] = customop2_ref(mrt_load_f64(dt, x.data, i));
    char why[512];
    cr_assert(th_check_f64(&y, ref, 3, shape, tol * tol, tol, tol, why, sizeof why), "%s", why);
    free(ref);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(plugin, customop2_float32) { check_customop2(MRT_DTYPE_FLOAT, 1e-6); }
Test(plugin, customop2_float64) { check_customop2(MRT_DTYPE_DOUBLE, 1e-14); }

Test(plugin, customop2_empty_tensor)
{
    load_ok(CUSTOMOP2_SO, false);
    int64_t shape[] = {4, 0};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    th_case *c = th_begin("customOp2", "custom_domain", 1);
    th_input(c, &x);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.rank, 2);
    cr_assert_eq(y.shape[0], 4);
    cr_assert_eq(y.shape[1], 0);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(plugin, customop2_unsupported_dtype_names_plugin)
{
    load_ok(CUSTOMOP2_SO, false);
    int64_t shape[] = {2};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_INT32, 1, shape), MRT_STATUS_OK);
    th_case *c = th_begin("customOp2", "custom_domain", 1);
    th_input(c, &x);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_NOT_IMPLEMENTED, "%s", mrt_last_error());
    assert_msg_has("node 'node'");
    assert_msg_has("int32");
    assert_msg_has("plugin libminirt_customop2.so");
    mrt_tensor_release(&x);
    th_free(c);
}

/* ------------------------------------------------------------------ without the plugin */

Test(plugin, unknown_op_without_plugin)
{
    mrt_model *m = NULL;
    cr_assert_eq(mrt_model_load(FIXTURE("model_with_customOp2.onnx"), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t shape[] = {2, 3, 8};
    mrt_tensor x, y;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
    mrt_session_options opt = mrt_session_options_default();
    cr_assert_eq(run_model(m, &opt, &x, &y), MRT_STATUS_NOT_IMPLEMENTED, "%s", mrt_last_error());
    assert_msg_has("/customOp2");     /* the node */
    assert_msg_has("custom_domain");
    assert_msg_has("'customOp2'");
    assert_msg_has("opset 1");
    assert_msg_has("plugins loaded: none");
    assert_msg_has("--plugin");
    assert_msg_has("docs/custom_ops.md");
    mrt_tensor_release(&x);
    mrt_model_free(m);
}

Test(plugin, unknown_op_lists_loaded_plugins)
{
    load_ok(TEST_SO("testops"), false);
    mrt_model *m = NULL;
    cr_assert_eq(mrt_model_load(FIXTURE("model_with_customOp2.onnx"), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t shape[] = {2, 3, 8};
    mrt_tensor x, y;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
    mrt_session_options opt = mrt_session_options_default();
    cr_assert_eq(run_model(m, &opt, &x, &y), MRT_STATUS_NOT_IMPLEMENTED, "%s", mrt_last_error());
    assert_msg_has("plugins loaded: libmrt_test_testops.so");
    mrt_tensor_release(&x);
    mrt_model_free(m);
}

/* ------------------------------------------------------------------ load errors */

Test(plugin, abi_mismatch_is_refused)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("abi_future"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("plugin libmrt_test_abi_future.so was built for minirt plugin ABI 3, this minirt provides 2");
    cr_assert(strstr(mrt_last_error(), "must never be called") == NULL, "init ran: %s", mrt_last_error());
}

Test(plugin, missing_abi_symbol_is_refused)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("no_abi"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("mrt_plugin_abi_version");
    assert_msg_has("MRT_PLUGIN_DECLARE_ABI");
}

Test(plugin, library_without_init_is_refused)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("no_init"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("libmrt_test_no_init.so");
    assert_msg_has("does not export mrt_plugin_init");
}

Test(plugin, missing_file)
{
    cr_assert_eq(mrt_plugin_load(MRT_BINARY_DIR "/plugins/libdoes_not_exist.so", false), MRT_STATUS_IO_ERROR);
    assert_msg_has("libdoes_not_exist.so");
    assert_msg_has("No such file");
}

Test(plugin, not_a_shared_library)
{
    cr_assert_eq(mrt_plugin_load(FIXTURE("x.npy"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("x.npy");
    assert_msg_has("could not be loaded as a shared library");
    cr_assert_eq(mrt_plugin_load(MRT_SOURCE_DIR "/models", false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("not a regular file");
    cr_assert_eq(mrt_plugin_load("", false), MRT_STATUS_INVALID_ARG);
}

Test(plugin, init_failure_registers_nothing)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("bad_init"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("libmrt_test_bad_init.so failed to initialise");
    assert_msg_has("returned 7");
    assert_msg_has("the frobnicator is not configured (set FROB=1)");
    /* the op it registered before failing must not be there, nor the plugin in the list */
    cr_assert_null(mrt_registry_find_opdef(mrt_registry_default(), "bad_domain", "Half", 1));
    char list[256];
    cr_assert_str_eq(mrt_registry_plugin_list(mrt_registry_default(), list, sizeof list), "none");
}

Test(plugin, registering_twice_fails_even_if_ignored)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("twice"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("twice_domain::Op version 1 is registered twice");
    cr_assert_null(mrt_registry_find_opdef(mrt_registry_default(), "twice_domain", "Op", 1));
}

Test(plugin, duplicate_across_plugins)
{
    load_ok(CUSTOMOP2_SO, false);
    cr_assert_eq(mrt_plugin_load(TEST_SO("dup_customop2"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("custom_domain::customOp2 version 1 is already registered by plugin libminirt_customop2.so");
    cr_assert_eq(mrt_plugin_load(TEST_SO("dup_customop2"), true), MRT_STATUS_INVALID_ARG);
    /* the first plugin still serves the op */
    double xv[] = {-1, 0.5, 3};
    int64_t shape[] = {3};
    mrt_tensor x = th_from_f64(MRT_DTYPE_DOUBLE, 1, shape, xv), y;
    th_case *c = th_begin("customOp2", "custom_domain", 1);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 3; i++) cr_assert_float_eq(((double *)y.data)[i], customop2_ref(xv[i]), 1e-15);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(plugin, loading_the_same_plugin_twice_is_a_no_op)
{
    load_ok(CUSTOMOP2_SO, false);
    load_ok(CUSTOMOP2_SO, false);
    char list[256];
    cr_assert_str_eq(mrt_registry_plugin_list(mrt_registry_default(), list, sizeof list), "libminirt_customop2.so");
}

/* ------------------------------------------------------------------ replacing built-ins */

static void run_relu(int opset, const mrt_tensor *x, mrt_tensor *y)
{
    th_case *c = th_begin("Relu", "", opset);
    th_input(c, x);
    cr_assert_eq(th_run(c, 1, y), MRT_STATUS_OK, "Relu opset %d: %s", opset, mrt_last_error());
    th_free(c);
}

/* max |y - relu(x) * scale| */
static double relu_err(const mrt_tensor *x, const mrt_tensor *y, double scale)
{
    double worst = 0;
    for (int64_t i = 0; i < mrt_tensor_numel(x); i++) {
        double xi = mrt_load_f64(x->dtype, x->data, i), yi = mrt_load_f64(y->dtype, y->data, i);
        double d = fabs(yi - (xi > 0 ? xi * scale : 0));
        worst = d > worst ? d : worst;
    }
    return worst;
}

Test(plugin, replacing_builtin_is_refused_without_flag)
{
    cr_assert_eq(mrt_plugin_load(TEST_SO("perturb_relu"), false), MRT_STATUS_INVALID_ARG);
    assert_msg_has("libmrt_test_perturb_relu.so");
    assert_msg_has("ai.onnx::Relu is built into minirt");
    assert_msg_has("--plugin-replace");
    th_rng rng;
    th_rng_init(&rng, th_seed("plugin::replacing_builtin_is_refused_without_flag"));
    int64_t shape[] = {64};
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_DOUBLE, 1, shape, -2, 2), y;
    run_relu(14, &x, &y);
    cr_assert_eq(relu_err(&x, &y, 1.0), 0.0, "the built-in Relu must still be used");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
}

Test(plugin, replacing_builtin_with_flag)
{
    setenv("MRT_PERTURB_EPS", "0.01", 1);
    load_ok(TEST_SO("perturb_relu"), true);
    th_rng rng;
    th_rng_init(&rng, th_seed("plugin::replacing_builtin_with_flag"));
    int64_t shape[] = {64};
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_DOUBLE, 1, shape, -2, 2), y;
    /* the plugin says since_version 6: it serves every opset >= 6, including newer built-in versions */
    const int opsets[] = {6, 12, 13, 14, 21};
    for (size_t k = 0; k < sizeof opsets / sizeof opsets[0]; k++) {
        run_relu(opsets[k], &x, &y);
        cr_assert_lt(relu_err(&x, &y, 1.01), 1e-15, "opset %d: plugin Relu not used", opsets[k]);
        mrt_tensor_release(&y);
    }
    /* below 6 the built-in (if minirt has a Relu version < 6) stays */
    int versions[16];
    int nv = mrt_registry_versions(NULL, "", "Relu", versions, 16);
    if (nv > 0 && versions[0] < 6) {
        run_relu(5, &x, &y);
        cr_assert_eq(relu_err(&x, &y, 1.0), 0.0, "opset 5 must use the built-in Relu");
        mrt_tensor_release(&y);
    }
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ the API through testops */

Test(plugin, api_attributes_and_generic_dtypes)
{
    load_ok(TEST_SO("testops"), false);
    double xv[] = {-2, -0.5, 0, 1, 4};
    int64_t shape[] = {5};
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT32};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        mrt_tensor x = th_from_f64(dts[k], 1, shape, xv), y;
        th_case *c = th_begin("Scale", "test_domain", 1);
        th_input(c, &x);
        th_attr_float(c, "alpha", 2.5f);
        th_attr_int(c, "offset", 3);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", mrt_dtype_name(dts[k]), mrt_last_error());
        cr_assert_eq(y.dtype, dts[k]);
        double ref[5];
        for (int i = 0; i < 5; i++) {
            ref[i] = 2.5 * mrt_load_f64(dts[k], x.data, i) + 3;
            if (dts[k] == MRT_DTYPE_INT32) ref[i] = trunc(ref[i]); /* stored like a C cast */
        }
        char why[256];
        cr_assert(th_check_f64(&y, ref, 1, shape, 0, 0, 0, why, sizeof why), "%s: %s", mrt_dtype_name(dts[k]), why);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(plugin, api_attribute_errors)
{
    load_ok(TEST_SO("testops"), false);
    int64_t shape[] = {2};
    mrt_tensor x, y;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 1, shape), MRT_STATUS_OK);
    th_case *c = th_begin("Scale", "test_domain", 1);
    th_input(c, &x);
    th_attr_string(c, "mode", "cubic");
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    assert_msg_has("node 'node' (test_domain::Scale, plugin libmrt_test_testops.so)");
    assert_msg_has("'mode' is 'cubic'");
    th_free(c);
    c = th_begin("Scale", "test_domain", 1);
    th_input(c, &x);
    th_attr_int(c, "alpha", 2);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    assert_msg_has("'alpha' must be a float (got type 2)");
    th_free(c);
    mrt_tensor_release(&x);
}

Test(plugin, api_version_resolution)
{
    load_ok(TEST_SO("testops"), false);
    double xv[] = {1, 2};
    int64_t shape[] = {2};
    const int opsets[] = {1, 2, 3, 7};
    const double add[] = {1, 1, 3, 3};
    for (int k = 0; k < 4; k++) {
        mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, shape, xv), y;
        th_case *c = th_begin("Versioned", "test_domain", opsets[k]);
        th_input(c, &x);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int i = 0; i < 2; i++)
            cr_assert_float_eq(((float *)y.data)[i], xv[i] + add[k], 0, "opset %d", opsets[k]);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(plugin, api_dynamic_output)
{
    load_ok(TEST_SO("testops"), false);
    double xv[] = {-1, 2, 0, 5, -3, 7};
    int64_t shape[] = {2, 3};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, shape, xv), y;
    th_case *c = th_begin("Positive", "test_domain", 1);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.dtype, MRT_DTYPE_INT64);
    cr_assert_eq(y.rank, 1);
    cr_assert_eq(y.shape[0], 3);
    const int64_t expect[] = {1, 3, 5};
    for (int i = 0; i < 3; i++) cr_assert_eq(((int64_t *)y.data)[i], expect[i]);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(plugin, api_errors_without_message_and_undeclared_outputs)
{
    load_ok(TEST_SO("testops"), false);
    int64_t shape[] = {2};
    mrt_tensor x, y;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 1, shape), MRT_STATUS_OK);
    th_case *c = th_begin("Silent", "test_domain", 1);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_NOT_IMPLEMENTED);
    assert_msg_has("node 'node' (test_domain::Silent, plugin libmrt_test_testops.so)");
    assert_msg_has("run_cpu returned 3 without a message");
    th_free(c);
    c = th_begin("Forgetful", "test_domain", 1);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    assert_msg_has("infer did not declare output 0");
    th_free(c);
    mrt_tensor_release(&x);
}
