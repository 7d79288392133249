/* The declared types of a model's graph inputs and outputs (public API, minirt.h): for bindings that report them
 * (the Python package's get_inputs()) and for inputs whose bytes carry no shape (raw .bin files). */
#include <string.h>

#include "engine/graph.h"
#include "engine/status.h"

static void describe(const mrt_type_info *t, mrt_declared_type *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    switch (t->kind) {
    case MRT_TYPE_TENSOR: out->kind = MRT_DECLARED_TENSOR; break;
    case MRT_TYPE_SEQUENCE: out->kind = MRT_DECLARED_SEQUENCE; break;
    case MRT_TYPE_OPTIONAL: out->kind = MRT_DECLARED_OPTIONAL; break;
    case MRT_TYPE_UNKNOWN: out->kind = MRT_DECLARED_UNKNOWN; return;
    default: out->kind = MRT_DECLARED_OTHER; return;
    }
    /* a sequence's or optional's element (an optional of a sequence: the sequence's element) */
    while (t && t->kind != MRT_TYPE_TENSOR) t = t->elem;
    if (!t) return;
    out->dtype = t->elem_type;
    out->rank = t->rank;
    for (int i = 0; i < t->rank && i < MRT_MAX_RANK; i++) {
        out->dims[i] = t->dims[i];
        out->dim_params[i] = t->dim_params[i];
    }
}

mrt_status mrt_model_input_type(const mrt_model *m, int k, mrt_declared_type *out)
{
    const mrt_graph *g = m->graph;
    for (int i = 0, seen = 0; i < g->n_inputs; i++) {
        const mrt_graph_value *v = &g->values[g->inputs[i]];
        if (v->initializer) continue;
        if (seen++ == k) {
            describe(&v->type, out);
            return MRT_STATUS_OK;
        }
    }
    return mrt_fail(MRT_STATUS_INVALID_ARG, "the model has no graph input number %d (it has %d)", k,
                    mrt_model_n_inputs(m));
}

mrt_status mrt_model_output_type(const mrt_model *m, int k, mrt_declared_type *out)
{
    const mrt_graph *g = m->graph;
    if (k < 0 || k >= g->n_outputs)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "the model has no graph output number %d (it has %d)", k, g->n_outputs);
    describe(&g->values[g->outputs[k]].type, out);
    return MRT_STATUS_OK;
}
