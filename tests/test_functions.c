/* Model-local functions: nested calls, attributes passed by reference and defaulted, compared with ONNX Runtime
 * (models/fixtures/functions, made by models/scripts/make_function_fixture.py). */
#include <criterion/criterion.h>
#include <stdlib.h>

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
