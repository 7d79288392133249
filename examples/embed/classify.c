/* Embedding minirt: load a model, feed each float32 input a constant, run, print every output.
 * Builds against an installed minirt only (pkg-config or find_package; see README.md here):
 *     cc classify.c $(pkg-config --cflags --libs minirt) -o classify
 *     ./classify model.onnx [value]                                                                 */
#include <stdio.h>
#include <stdlib.h>

#include <minirt/minirt.h>

static int fail(const char *what)
{
    fprintf(stderr, "classify: %s: %s\n", what, mrt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [VALUE]\n", argv[0]);
        return 2;
    }
    float value = argc > 2 ? strtof(argv[2], NULL) : 0.5f;
    mrt_model *model = NULL;
    if (mrt_model_load(argv[1], &model) != MRT_STATUS_OK) return fail(argv[1]);
    int n_in = mrt_model_n_inputs(model);
    mrt_value *inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    const char **names = calloc((size_t)n_in + 1, sizeof *names);
    int rc = 0;
    for (int i = 0; i < n_in; i++) {
        mrt_declared_type type;
        mrt_tensor t;
        if (mrt_model_input_type(model, i, &type) != MRT_STATUS_OK) return fail("input type");
        if (type.kind != MRT_DECLARED_TENSOR || type.dtype != MRT_DTYPE_FLOAT || type.rank < 0) {
            fprintf(stderr, "classify: input '%s' is not a float32 tensor of known rank\n", mrt_model_input_name(model, i));
            return 1;
        }
        for (int d = 0; d < type.rank; d++)
            if (type.dims[d] < 0) type.dims[d] = 1; /* a symbolic dimension (batch): 1 */
        if (mrt_tensor_alloc(&t, MRT_DTYPE_FLOAT, type.rank, type.dims) != MRT_STATUS_OK) return fail("alloc");
        for (int64_t k = 0; k < mrt_tensor_numel(&t); k++) ((float *)t.data)[k] = value;
        inputs[i] = mrt_value_from_tensor(t);
        names[i] = mrt_model_input_name(model, i);
    }
    mrt_session_options opt = mrt_session_options_default();
    mrt_session *session = NULL;
    if (mrt_session_new(model, &opt, &session) != MRT_STATUS_OK) return fail("session");
    if (mrt_session_run(session, n_in, names, inputs) != MRT_STATUS_OK) {
        rc = fail("run");
    } else {
        for (int i = 0; i < mrt_session_n_outputs(session); i++) {
            const mrt_value *v = mrt_session_output(session, i);
            char desc[256];
            if (v->kind != MRT_VALUE_TENSOR) continue;
            printf("%s: %s", mrt_session_output_name(session, i), mrt_tensor_describe(&v->tensor, desc, sizeof desc));
            if (v->tensor.dtype == MRT_DTYPE_FLOAT) {
                double sum = 0;
                for (int64_t k = 0; k < mrt_tensor_numel(&v->tensor); k++) sum += ((const float *)v->tensor.data)[k];
                printf("  sum %.6f", sum);
            }
            printf("\n");
        }
    }
    for (int i = 0; i < n_in; i++) mrt_value_release(&inputs[i]);
    free(inputs);
    free(names);
    mrt_session_free(session);
    mrt_model_free(model);
    return rc;
}
