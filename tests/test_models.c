/* Model-level tests on the bundled quick-start model models/tiny_cnn.onnx (made by
 * models/scripts/make_tiny_cnn.py): the whole path loader -> plan -> CPU kernels against ONNX Runtime's output
 * (float32) and PyTorch's float64 output (float64 oracle mode), determinism, and input validation errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "harness.h"
#include "loader/npy.h"
#include "minirt/minirt.h"

#define TINY_MODEL MRT_SOURCE_DIR "/models/tiny_cnn.onnx"
#define TINY_INPUT MRT_SOURCE_DIR "/models/tiny_cnn_input.npy"
#define TINY_EXPECTED MRT_SOURCE_DIR "/models/tiny_cnn_expected.npy"
#define TINY_EXPECTED_FP64 MRT_SOURCE_DIR "/models/tiny_cnn_expected_fp64.npy"

static const char *const input_names[] = {"image"};

static mrt_model *load_tiny(void)
{
    mrt_model *m = NULL;
    mrt_status st = mrt_model_load(TINY_MODEL, &m);
    cr_assert_eq(st, MRT_STATUS_OK, "loading %s: %s", TINY_MODEL, mrt_last_error());
    cr_assert_not_null(m);
    return m;
}

static mrt_tensor read_npy(const char *path)
{
    mrt_tensor t;
    mrt_status st = mrt_npy_read_file(path, &t);
    cr_assert_eq(st, MRT_STATUS_OK, "reading %s: %s", path, mrt_last_error());
    return t;
}

static mrt_session *new_session(const mrt_model *m, mrt_precision precision)
{
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = precision;
    opt.poison_outputs = true; /* kernels that promise to write every output element are held to it */
    mrt_session *s = NULL;
    mrt_status st = mrt_session_new(m, &opt, &s);
    cr_assert_eq(st, MRT_STATUS_OK, "mrt_session_new: %s", mrt_last_error());
    cr_assert_not_null(s);
    return s;
}

static const mrt_tensor *run_tiny(mrt_session *s, const mrt_tensor *x)
{
    mrt_value v = mrt_value_from_tensor(*x);
    mrt_status st = mrt_session_run(s, 1, input_names, &v);
    cr_assert_eq(st, MRT_STATUS_OK, "mrt_session_run: %s", mrt_last_error());
    cr_assert_eq(mrt_session_n_outputs(s), 1);
    const mrt_value *y = mrt_session_output(s, 0);
    cr_assert_not_null(y);
    cr_assert_eq(y->kind, MRT_VALUE_TENSOR);
    return &y->tensor;
}

/* max |got - expect| / max |expect|: the "within R relative" measure. */
static double rel_error(const mrt_tensor *got, const mrt_tensor *expect)
{
    double *a = th_to_f64(got), *b = th_to_f64(expect);
    cr_assert(a && b);
    double max_err = 0, max_ref = 0;
    for (int64_t i = 0; i < mrt_tensor_numel(expect); i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= max_err)) max_err = d; /* NaN propagates */
        if (fabs(b[i]) > max_ref) max_ref = fabs(b[i]);
    }
    free(a);
    free(b);
    return max_ref > 0 ? max_err / max_ref : max_err;
}

static void assert_same_shape(const mrt_tensor *got, const mrt_tensor *expect)
{
    char g[256], e[256];
    bool same = got->rank == expect->rank;
    for (int i = 0; same && i < got->rank; i++) same = got->shape[i] == expect->shape[i];
    cr_assert(same, "output shape %s, expected %s", mrt_shape_describe(got->rank, got->shape, g, sizeof g),
              mrt_shape_describe(expect->rank, expect->shape, e, sizeof e));
}

Test(tiny_cnn, inputs_and_outputs)
{
    mrt_model *m = load_tiny();
    cr_assert_eq(mrt_model_n_inputs(m), 1, "the weights must not be listed as inputs");
    cr_assert_str_eq(mrt_model_input_name(m, 0), "image");
    cr_assert_eq(mrt_model_n_outputs(m), 1);
    cr_assert_str_eq(mrt_model_output_name(m, 0), "probs");
    mrt_model_free(m);
}

Test(tiny_cnn, matches_onnxruntime)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_DEFAULT);
    mrt_tensor x = read_npy(TINY_INPUT), expect = read_npy(TINY_EXPECTED);
    cr_assert_eq(expect.dtype, MRT_DTYPE_FLOAT);

    const mrt_tensor *y = run_tiny(s, &x);
    cr_assert_eq(y->dtype, MRT_DTYPE_FLOAT, "output dtype %s, expected float", mrt_dtype_name(y->dtype));
    assert_same_shape(y, &expect);
    char why[512];
    /* float32 through ~10 layers: ONNX Runtime and PyTorch agree to ~3e-7 relative */
    cr_assert(th_check_tensor(y, &expect, 1e-10, 1e-6, 1e-4, why, sizeof why), "%s", why);
    double rel = rel_error(y, &expect);
    cr_assert(rel <= 1e-5, "max |minirt - onnxruntime| / max |onnxruntime| = %g", rel);

    /* softmax rows sum to one */
    const float *p = y->data;
    for (int64_t r = 0; r < y->shape[0]; r++) {
        double sum = 0;
        for (int64_t k = 0; k < y->shape[1]; k++) sum += p[r * y->shape[1] + k];
        cr_assert(fabs(sum - 1.0) < 1e-5, "row %lld sums to %.9g", (long long)r, sum);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&expect);
    mrt_session_free(s);
    mrt_model_free(m);
}

Test(tiny_cnn, fp64_oracle_matches_pytorch_fp64)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_FP64);
    mrt_tensor x = read_npy(TINY_INPUT), expect = read_npy(TINY_EXPECTED_FP64);
    cr_assert_eq(expect.dtype, MRT_DTYPE_DOUBLE);

    const mrt_tensor *y = run_tiny(s, &x);
    assert_same_shape(y, &expect);
    /* Every weight and constant of this model is a float32 value both sides widen exactly, so only the order of
       double operations differs: float32 rounding anywhere would show up as ~1e-7. */
    double rel = rel_error(y, &expect);
    cr_assert(rel <= 1e-10, "max |minirt fp64 - pytorch fp64| / max |pytorch fp64| = %g (output dtype %s)", rel,
              mrt_dtype_name(y->dtype));
    char why[512];
    cr_assert(th_check_tensor(y, &expect, 1e-18, 1e-12, 1e-9, why, sizeof why), "%s", why);
    mrt_tensor_release(&x);
    mrt_tensor_release(&expect);
    mrt_session_free(s);
    mrt_model_free(m);
}

Test(tiny_cnn, repeated_runs_are_bit_identical)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_DEFAULT);
    mrt_tensor x = read_npy(TINY_INPUT);

    mrt_tensor first;
    cr_assert_eq(mrt_tensor_copy(&first, run_tiny(s, &x)), MRT_STATUS_OK);
    const mrt_tensor *again = run_tiny(s, &x);
    cr_assert_eq(mrt_tensor_nbytes(again), mrt_tensor_nbytes(&first));
    cr_assert(memcmp(again->data, first.data, mrt_tensor_nbytes(&first)) == 0,
              "a second run of the same session gave different bits");

    /* a fresh session on the same model (a new plan and arena) gives the same bits too */
    mrt_session *s2 = new_session(m, MRT_PRECISION_DEFAULT);
    const mrt_tensor *other = run_tiny(s2, &x);
    cr_assert(memcmp(other->data, first.data, mrt_tensor_nbytes(&first)) == 0,
              "a second session gave different bits");

    mrt_tensor_release(&first);
    mrt_tensor_release(&x);
    mrt_session_free(s2);
    mrt_session_free(s);
    mrt_model_free(m);
}

Test(tiny_cnn, wrong_input_shape_is_invalid_arg)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_DEFAULT);
    mrt_tensor bad;
    cr_assert_eq(mrt_tensor_alloc(&bad, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 3, 32, 32}), MRT_STATUS_OK);
    mrt_value v = mrt_value_from_tensor(bad);
    mrt_status st = mrt_session_run(s, 1, input_names, &v);
    const char *msg = mrt_last_error();
    cr_assert_eq(st, MRT_STATUS_INVALID_ARG, "status %s (%s)", mrt_status_name(st), msg);
    cr_assert(strstr(msg, "image"), "the message should name the input: %s", msg);
    cr_assert(strstr(msg, "[2,3,32,32]"), "the message should give the expected shape: %s", msg);
    cr_assert(strstr(msg, "[1,3,32,32]"), "the message should give the given shape: %s", msg);

    /* the session is still usable after a refused run */
    mrt_tensor x = read_npy(TINY_INPUT), expect = read_npy(TINY_EXPECTED);
    const mrt_tensor *y = run_tiny(s, &x);
    double rel = rel_error(y, &expect);
    cr_assert(rel <= 1e-5, "after a refused run: relative error %g", rel);

    mrt_tensor_release(&bad);
    mrt_tensor_release(&x);
    mrt_tensor_release(&expect);
    mrt_session_free(s);
    mrt_model_free(m);
}

Test(tiny_cnn, wrong_input_dtype_is_invalid_arg)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_DEFAULT);
    mrt_tensor bad;
    cr_assert_eq(mrt_tensor_alloc(&bad, MRT_DTYPE_DOUBLE, 4, (int64_t[]){2, 3, 32, 32}), MRT_STATUS_OK);
    mrt_value v = mrt_value_from_tensor(bad);
    mrt_status st = mrt_session_run(s, 1, input_names, &v);
    const char *msg = mrt_last_error();
    cr_assert_eq(st, MRT_STATUS_INVALID_ARG, "status %s (%s)", mrt_status_name(st), msg);
    cr_assert(strstr(msg, "image"), "the message should name the input: %s", msg);
    mrt_tensor_release(&bad);
    mrt_session_free(s);
    mrt_model_free(m);
}

Test(tiny_cnn, missing_input_is_invalid_arg)
{
    mrt_model *m = load_tiny();
    mrt_session *s = new_session(m, MRT_PRECISION_DEFAULT);
    mrt_status st = mrt_session_run(s, 0, NULL, NULL);
    const char *msg = mrt_last_error();
    cr_assert_eq(st, MRT_STATUS_INVALID_ARG, "status %s (%s)", mrt_status_name(st), msg);
    cr_assert(strstr(msg, "image"), "the message should name the missing input: %s", msg);
    mrt_session_free(s);
    mrt_model_free(m);
}
