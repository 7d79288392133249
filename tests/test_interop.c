/* Comparing tensors the way other tools write and judge them: NaN semantics (Polygraphy, numpy.allclose and
 * torch.testing.assert_close fail a NaN; --equal-nan counts NaN against NaN as equal), matching a value to a file
 * named by its sanitised name, and raw .bin inputs sized by the model's declared type. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tools/cli.h"
#include "tools/compare.h"

static mrt_tensor vec(int64_t n, const double *v) { return th_from_f64(MRT_DTYPE_FLOAT, 1, &n, v); }

static compare_result cmp(const double *a, const double *b, int64_t n, bool equal_nan)
{
    mrt_tensor ta = vec(n, a), tb = vec(n, b);
    compare_tolerance tol = {1e-5, 1e-5, ERROR_STAT_ELEMWISE, 0.5, equal_nan};
    compare_result r;
    compare_tensors(&ta, &tb, &tol, &r);
    mrt_tensor_release(&ta);
    mrt_tensor_release(&tb);
    return r;
}

Test(nan, nan_against_nan_fails_by_default)
{
    compare_result r = cmp((double[]){1, NAN, 3}, (double[]){1, NAN, 3}, 3, false);
    cr_assert(!r.passed, "NaN vs NaN passed without --equal-nan");
    cr_assert_eq(r.nan_mismatch, 1);
    cr_assert(strstr(r.reason, "NaN") && strstr(r.reason, "--equal-nan"), "%s", r.reason);
}

Test(nan, equal_nan_counts_nan_against_nan_as_equal)
{
    compare_result r = cmp((double[]){1, NAN, 3}, (double[]){1, NAN, 3}, 3, true);
    cr_assert(r.passed, "%s", r.reason);
    cr_assert_eq(r.nan_mismatch, 0);
}

Test(nan, nan_against_a_number_fails_either_way)
{
    for (int eq = 0; eq < 2; eq++) {
        compare_result r = cmp((double[]){1, NAN, 3}, (double[]){1, 2, 3}, 3, eq);
        cr_assert(!r.passed && r.nan_mismatch == 1, "equal_nan=%d", eq);
        r = cmp((double[]){1, 2, 3}, (double[]){1, 2, NAN}, 3, eq);
        cr_assert(!r.passed && r.nan_mismatch == 1, "reference NaN, equal_nan=%d", eq);
    }
}

Test(nan, max_statistic_also_fails_on_nan)
{
    mrt_tensor ta = vec(2, (double[]){NAN, 1}), tb = vec(2, (double[]){NAN, 1});
    compare_tolerance tol = {1, 1, ERROR_STAT_MAX, 0.5, false};
    compare_result r;
    compare_tensors(&ta, &tb, &tol, &r);
    cr_assert(!r.passed);
    tol.equal_nan = true;
    compare_tensors(&ta, &tb, &tol, &r);
    cr_assert(r.passed, "%s", r.reason);
    mrt_tensor_release(&ta);
    mrt_tensor_release(&tb);
}

static void add(tensor_set *s, const char *name)
{
    mrt_tensor t = vec(1, (double[]){1});
    cr_assert_eq(set_add(s, name, &t), MRT_STATUS_OK);
}

Test(names, a_sanitised_file_stem_matches_the_value_name)
{
    tensor_set s = {0};
    add(&s, "_conv1_Conv_output_0"); /* what --output-dir writes for /conv1/Conv_output_0 */
    add(&s, "probs");
    cr_assert_eq(set_find(&s, "/conv1/Conv_output_0"), 0);
    cr_assert_eq(set_find(&s, "probs"), 1);
    cr_assert_eq(set_find(&s, "/conv2/Conv_output_0"), -1);
    cr_assert_eq(set_find(&s, "_conv1_Conv_output"), -1, "a prefix is not a match");
    set_free(&s);
}

Test(names, the_other_direction_and_exact_names_first)
{
    tensor_set s = {0};
    add(&s, "a/b");
    add(&s, "a_b");
    cr_assert_eq(set_find(&s, "a_b"), 1, "the exact name wins over a sanitised match");
    cr_assert_eq(set_find(&s, "a/b"), 0);
    cr_assert_eq(set_find(&s, "a:b"), -1, "two names sanitise to a_b: ambiguous, no match");
    set_free(&s);
}

/* ------------------------------------------------------------------ raw inputs */

static const char *model_path(void) { return MRT_SOURCE_DIR "/models/tiny_cnn.onnx"; }

static void write_bytes(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    for (size_t i = 0; i < n; i++) fputc((int)(i * 7 % 251), f);
    fclose(f);
}

Test(raw, a_bin_file_takes_the_declared_shape)
{
    mrt_model *m = NULL;
    cr_assert_eq(mrt_model_load(model_path(), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    char path[] = "/tmp/mrt_raw_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    write_bytes(path, 2 * 3 * 32 * 32 * 4);
    mrt_tensor t;
    cr_assert_eq(raw_input_read(m, "image", path, &t), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(t.dtype, MRT_DTYPE_FLOAT);
    cr_assert_eq(t.rank, 4);
    cr_assert(t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 32 && t.shape[3] == 32);
    cr_assert_eq(((unsigned char *)t.data)[5], 35);
    mrt_tensor_release(&t);
    write_bytes(path, 1000);
    cr_assert_eq(raw_input_read(m, "image", path, &t), MRT_STATUS_INVALID_ARG);
    const char *e = mrt_last_error();
    cr_assert(strstr(e, "'image'") && strstr(e, "1000 bytes") && strstr(e, "float32[2,3,32,32]") && strstr(e, "24576"),
              "%s", e);
    cr_assert_eq(raw_input_read(m, "nope", path, &t), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "'nope'"), "%s", mrt_last_error());
    unlink(path);
    mrt_model_free(m);
}

Test(raw, declared_types_of_inputs_and_outputs)
{
    mrt_model *m = NULL;
    cr_assert_eq(mrt_model_load(model_path(), &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_declared_type dt;
    cr_assert_eq(mrt_model_output_type(m, 0, &dt), MRT_STATUS_OK);
    cr_assert(dt.kind == MRT_DECLARED_TENSOR && dt.dtype == MRT_DTYPE_FLOAT && dt.rank == 2 && dt.dims[1] == 10);
    cr_assert_eq(mrt_model_input_type(m, 1, &dt), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "number 1"), "%s", mrt_last_error());
    mrt_model_free(m);
}
