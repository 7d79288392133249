/* Accuracy-alignment tools: compare's statistics on hand-made arrays, dump -> compare round trips, and
 * `minirt diff` finding a planted fault (tests/plugins/perturb_node.c) in chained and teacher-forced modes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "loader/npy.h"
#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/dump.h"

static mrt_tensor vec(mrt_dtype dt, int64_t n, const double *v) { return th_from_f64(dt, 1, &n, v); }

static compare_result cmp(const double *a, const double *b, int64_t n, double atol, double rtol, error_stat stat)
{
    mrt_tensor ta = vec(MRT_DTYPE_DOUBLE, n, a), tb = vec(MRT_DTYPE_DOUBLE, n, b);
    compare_tolerance tol = {atol, rtol, stat, 0.5};
    compare_result r;
    compare_tensors(&ta, &tb, &tol, &r);
    mrt_tensor_release(&ta);
    mrt_tensor_release(&tb);
    return r;
}

Test(compare, identical_arrays_pass_with_zero_error)
{
    double a[] = {1, -2, 3, 0};
    compare_result r = cmp(a, a, 4, 0, 0, ERROR_STAT_ELEMWISE);
    cr_assert(r.passed);
    cr_assert_eq(r.max_abs, 0);
    cr_assert_eq(r.max_ulp, 0);
    cr_assert_float_eq(r.cosine, 1.0, 1e-15);
    cr_assert(isinf(r.psnr_db));
}

Test(compare, element_fails_only_when_both_tolerances_are_exceeded)
{
    /* element 0: diff 0.01 > atol but rel 1e-5 <= rtol -> passes; element 1: diff 1e-4 <= atol -> passes */
    double a[] = {1000.01, 0.0011}, b[] = {1000.0, 0.001};
    compare_result r = cmp(a, b, 2, 1e-3, 1e-4, ERROR_STAT_ELEMWISE);
    cr_assert(r.passed, "%s", r.reason);
    /* tighter atol: element 1 now exceeds both (diff 1e-4 > 1e-5, rel 0.1 > 1e-4) */
    r = cmp(a, b, 2, 1e-5, 1e-4, ERROR_STAT_ELEMWISE);
    cr_assert(!r.passed);
    cr_assert_float_eq(r.fail_fraction, 0.5, 1e-12);
    cr_assert_float_eq(r.max_abs, 0.01, 1e-9);
    cr_assert_eq(r.worst_index, 0);
    cr_assert_float_eq(r.max_rel, 0.1, 1e-6);
    /* smallest atol that passes with rtol 1e-4: element 1's diff (element 0 is covered by rtol) */
    cr_assert_float_eq(r.min_atol_to_pass, 1e-4, 1e-12);
    /* smallest rtol that passes with atol 1e-5: element 1's relative error 0.1 */
    cr_assert_float_eq(r.min_rtol_to_pass, 0.1, 1e-6);
}

Test(compare, nan_and_inf_must_match)
{
    /* NaN against NaN fails unless equal_nan (tests/test_interop.c); Inf against the same Inf is equal */
    double a[] = {NAN, 1, INFINITY}, b[] = {NAN, 1, INFINITY};
    compare_result r = cmp(a, b, 3, 0, 0, ERROR_STAT_ELEMWISE);
    cr_assert(!r.passed);
    cr_assert_eq(r.nan_mismatch, 1);
    cr_assert_eq(r.inf_mismatch, 0);
    double c[] = {0, 1, INFINITY};
    r = cmp(a, c, 3, 1e9, 1e9, ERROR_STAT_ELEMWISE);
    cr_assert(!r.passed);
    cr_assert_eq(r.nan_mismatch, 1);
    double d[] = {NAN, 1, -INFINITY};
    r = cmp(a, d, 3, 1e9, 1e9, ERROR_STAT_MAX);
    cr_assert(!r.passed, "an inf sign mismatch fails whatever the statistic");
    cr_assert_eq(r.inf_mismatch, 1);
}

Test(compare, zero_reference_uses_atol)
{
    double a[] = {0, 1e-6}, b[] = {0, 0};
    compare_result r = cmp(a, b, 2, 1e-5, 1e-5, ERROR_STAT_ELEMWISE);
    cr_assert(r.passed, "%s", r.reason);
    cr_assert(isinf(r.max_rel), "relative error against 0 is infinite");
    r = cmp(a, b, 2, 1e-7, 1e-5, ERROR_STAT_ELEMWISE);
    cr_assert(!r.passed);
}

Test(compare, aggregate_statistics)
{
    /* abs errors 0, 0, 0, 4 -> max 4, mean 1, median 0 */
    double a[] = {1, 2, 3, 8}, b[] = {1, 2, 3, 4};
    cr_assert(!cmp(a, b, 4, 1, 0, ERROR_STAT_MAX).passed);
    cr_assert(cmp(a, b, 4, 1, 0, ERROR_STAT_MEAN).passed);
    cr_assert(cmp(a, b, 4, 0, 0, ERROR_STAT_MEDIAN).passed);
    compare_result r = cmp(a, b, 4, 0, 0, ERROR_STAT_ELEMWISE);
    cr_assert_float_eq(r.mean_abs, 1.0, 1e-12);
    cr_assert_float_eq(r.median_abs, 0.0, 1e-12);
    cr_assert_float_eq(r.l2, 4.0, 1e-12);
    double cos = (1 + 4 + 9 + 32) / sqrt((1 + 4 + 9 + 64) * (1 + 4 + 9 + 16.0));
    cr_assert_float_eq(r.cosine, cos, 1e-12);
    /* PSNR = 10 log10(max|b|^2 / mse) = 10 log10(16 / 4) */
    cr_assert_float_eq(r.psnr_db, 10 * log10(4.0), 1e-9);
}

Test(compare, float32_against_float64_counts_ulps_in_float32)
{
    float x = 1.0f, next = nextafterf(1.0f, 2.0f);
    mrt_tensor a = vec(MRT_DTYPE_FLOAT, 1, (double[]){next}), b = vec(MRT_DTYPE_FLOAT, 1, (double[]){x});
    compare_tolerance tol = {0, 0, ERROR_STAT_ELEMWISE, 0.5};
    compare_result r;
    compare_tensors(&a, &b, &tol, &r);
    cr_assert_eq(r.max_ulp, 1);
    mrt_tensor c = vec(MRT_DTYPE_DOUBLE, 1, (double[]){1.0});
    compare_tensors(&a, &c, &tol, &r);
    cr_assert_float_eq(r.max_abs, (double)next - 1.0, 1e-15);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&c);
}

Test(compare, shape_mismatch_fails_with_both_shapes)
{
    mrt_tensor a = vec(MRT_DTYPE_FLOAT, 2, (double[]){1, 2}), b = vec(MRT_DTYPE_FLOAT, 3, (double[]){1, 2, 3});
    compare_tolerance tol = {1, 1, ERROR_STAT_ELEMWISE, 0.5};
    compare_result r;
    compare_tensors(&a, &b, &tol, &r);
    cr_assert(!r.passed);
    cr_assert(strstr(r.reason, "[2]") && strstr(r.reason, "[3]"), "%s", r.reason);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
}

/* ------------------------------------------------------------------ dump round trip */

static char *make_temp_dir(void)
{
    char *d = strdup("/tmp/minirt_test_XXXXXX");
    cr_assert(mkdtemp(d) != NULL);
    return d;
}

static const char *model_path(void) { return MRT_SOURCE_DIR "/models/tiny_cnn.onnx"; }
static const char *input_path(void) { return MRT_SOURCE_DIR "/models/tiny_cnn_input.npy"; }

Test(dump, round_trip_through_compare)
{
    char *dir = make_temp_dir();
    mrt_model *m;
    cr_assert_eq(mrt_model_load(model_path(), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor x;
    cr_assert_eq(mrt_npy_read_file(input_path(), &x), MRT_STATUS_OK, "%s", mrt_last_error());
    dump_ctx *d;
    dump_options dopt = {dir, NULL, NULL};
    cr_assert_eq(dump_begin(&dopt, &d), MRT_STATUS_OK);
    mrt_session_options opt = mrt_session_options_default();
    opt.on_node = dump_on_node;
    opt.on_node_user = d;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK);
    const char *name = mrt_model_input_name(m, 0);
    mrt_value xv = mrt_value_from_tensor(x);
    cr_assert_eq(dump_value(d, name, NULL, NULL, &xv), MRT_STATUS_OK);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    const char *inputs[] = {input_path()};
    dump_provenance prov = {model_path(), "cpu", "fp32", 1, 1, inputs};
    cr_assert_eq(dump_finish(d, &prov), MRT_STATUS_OK, "%s", mrt_last_error());

    tensor_set set;
    cr_assert_eq(compare_load_set(dir, &set), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_gt(set.n, 30, "every intermediate is dumped (%d)", set.n);
    /* the dumped output equals the session's output, bit for bit */
    const char *out_name = mrt_session_output_name(s, 0);
    int k = set_find(&set, out_name);
    cr_assert_geq(k, 0, "output '%s' in the dump", out_name);
    const mrt_tensor *y = &mrt_session_output(s, 0)->tensor;
    cr_assert_eq(memcmp(set.tensors[k].data, y->data, mrt_tensor_nbytes(y)), 0);
    cr_assert_geq(set_find(&set, name), 0, "the input is dumped too");
    /* the manifest carries provenance */
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    char text[4096] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert(strstr(text, "\"sha256\": \"") && strstr(text, "\"blas\"") && strstr(text, "\"producer\""), "%s", text);
    set_free(&set);
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* ------------------------------------------------------------------ diff finds a planted fault */

static void run_diff_with_fault(const char *against, const char *json)
{
    setenv("MRT_PERTURB_NODE", "/block/Relu", 1);
    setenv("MRT_PERTURB_EPS", "1e-2", 1);
    char in_arg[512];
    snprintf(in_arg, sizeof in_arg, "%s", input_path());
    char *argv[] = {"diff", (char *)model_path(), "--input", in_arg, "--against", (char *)against, "--json",
                    (char *)json, "--plugin", MRT_BINARY_DIR "/test_plugins/libmrt_test_perturb_node.so",
                    "--plugin-replace"};
    int rc = cmd_diff((int)(sizeof argv / sizeof argv[0]), argv);
    cr_assert_eq(rc, MRT_EXIT_ERROR, "diff reports a divergence with exit status 1");
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(diff, finds_planted_fault_against_fp64)
{
    char *dir = make_temp_dir(), json[600];
    snprintf(json, sizeof json, "%s/diff.json", dir);
    run_diff_with_fault("fp64", json);
    char *text = read_text(json);
    cr_assert(strstr(text, "\"first_divergence\": \"/block/Relu\""), "teacher-forced mode names the node:\n%.400s", text);
    cr_assert(strstr(text, "\"first_chained_divergence\": \"/block/Relu\""), "chained mode too:\n%.400s", text);
    free(dir);
}

Test(diff, finds_planted_fault_against_a_dump)
{
    /* reference: a clean float32 dump; then the perturbed run is compared with it */
    char *dir = make_temp_dir(), ref[600], json[600];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    char *argv[] = {"run", (char *)model_path(), "--input", (char *)input_path(), "--dump-all", ref};
    cr_assert_eq(cmd_run(6, argv), 0);
    snprintf(json, sizeof json, "%s/diff.json", dir);
    run_diff_with_fault(ref, json);
    char *text = read_text(json);
    cr_assert(strstr(text, "\"first_divergence\": \"/block/Relu\""), "%.400s", text);
    cr_assert(strstr(text, "\"first_chained_divergence\": \"/block/Relu\""), "%.400s", text);
    free(dir);
}

Test(diff, clean_model_has_no_divergence_against_fp64)
{
    char *argv[] = {"diff", (char *)model_path(), "--input", (char *)input_path(), "--against", "fp64"};
    cr_assert_eq(cmd_diff(6, argv), MRT_EXIT_OK, "float32 stays within 1e-4 of the float64 oracle node by node");
}

/* A reference whose tensor names match no node output (a dump named by module, not by ONNX value) must not pass:
   diff fails and says nothing was compared. */
Test(diff, reference_matching_no_node_fails)
{
    char *dir = make_temp_dir(), ref[600], npy[700], json[600];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    snprintf(npy, sizeof npy, "mkdir -p '%s' && cp '%s' '%s/torch:stem.npy'", ref, input_path(), ref);
    cr_assert_eq(system(npy), 0);
    snprintf(json, sizeof json, "%s/diff.json", dir);
    char in_arg[512];
    snprintf(in_arg, sizeof in_arg, "%s", input_path());
    char *argv[] = {"diff", (char *)model_path(), "--input", in_arg, "--against", ref, "--json", json};
    int rc = cmd_diff((int)(sizeof argv / sizeof argv[0]), argv);
    cr_assert_eq(rc, MRT_EXIT_ERROR, "a diff that compared nothing exits 1");
    FILE *f = fopen(json, "r");
    cr_assert_null(f, "and writes no report that could be read as a pass");
    free(dir);
}
