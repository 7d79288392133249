/* libFuzzer target: ONNX model bytes -> loader -> session planning and one run on zero-filled inputs.
   Allocations are capped (MRT_MAX_ALLOC_BYTES) so a hostile shape ends in a clear status, not an OOM kill. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "minirt/minirt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("MRT_MAX_ALLOC_BYTES", "67108864", 1);
    setenv("MRT_MAX_LOOP_ITERATIONS", "1000", 1);
    return 0;
}

/* Zero inputs of the declared type; unknown dims are 1; anything large or odd is skipped. */
static int make_inputs(const mrt_model *m, int *n, const char **names, mrt_value *vals)
{
    const mrt_graph *g = m->graph;
    *n = 0;
    for (int i = 0; i < g->n_inputs && *n < 16; i++) {
        const mrt_graph_value *v = &g->values[g->inputs[i]];
        if (v->initializer) continue;
        if (v->type.kind != MRT_TYPE_TENSOR || !mrt_dtype_is_known(v->type.elem_type) || v->type.rank < 0) return -1;
        int64_t shape[MRT_MAX_RANK], numel = 1;
        for (int d = 0; d < v->type.rank; d++) {
            shape[d] = v->type.dims[d] >= 0 ? v->type.dims[d] : 1;
            if (shape[d] > 4096) return -1;
            numel *= shape[d];
            if (numel > (1 << 16)) return -1;
        }
        mrt_tensor t;
        if (mrt_tensor_alloc(&t, v->type.elem_type, v->type.rank, shape) != MRT_STATUS_OK) return -1;
        if (t.dtype == MRT_DTYPE_STRING)
            for (int64_t k = 0; k < numel; k++) ((char **)t.data)[k] = strdup("");
        names[*n] = v->name;
        vals[(*n)++] = mrt_value_from_tensor(t);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mrt_model *m = NULL;
    if (mrt_model_load_from_memory(data, size, NULL, &m) != MRT_STATUS_OK) return 0;
    const char *names[16];
    mrt_value vals[16];
    int n = 0;
    if (m->graph->n_nodes <= 64 && make_inputs(m, &n, names, vals) == 0) {
        mrt_session *s = NULL;
        mrt_session_options opt = mrt_session_options_default();
        opt.n_threads = 1;
        if (mrt_session_new(m, &opt, &s) == MRT_STATUS_OK) (void)mrt_session_run(s, n, names, vals);
        mrt_session_free(s);
    }
    for (int i = 0; i < n; i++) mrt_value_release(&vals[i]);
    mrt_model_free(m);
    return 0;
}
