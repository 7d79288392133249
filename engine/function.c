/* Model-local functions (FunctionProto): a node whose (domain, op_type) names one of the model's functions and
 * has no kernel runs the function body as a subgraph. Body nodes whose attributes refer to the caller's
 * (ref_attr_name) see them resolved through a shadow copy; body nodes resolve opsets from the function's own
 * imports. */
#include "engine/function.h"

#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"

const mrt_function *mrt_model_find_function(const mrt_model *m, const char *domain, const char *name)
{
    domain = mrt_domain_normalize(domain);
    for (int i = 0; m && i < m->n_functions; i++) {
        const mrt_function *f = &m->functions[i];
        if (strcmp(f->name, name) == 0 && strcmp(mrt_domain_normalize(f->domain), domain) == 0) return f;
    }
    return NULL;
}

int64_t mrt_function_opset(const mrt_function *f, const char *domain)
{
    domain = mrt_domain_normalize(domain);
    for (int i = 0; i < f->n_opsets; i++)
        if (strcmp(f->opsets[i].domain, domain) == 0) return f->opsets[i].version;
    return -1;
}

/* The shadow shares every attribute struct with the body node or the caller (nothing is owned but the array):
   a referenced attribute is the caller's (or the function's default) under the body's attribute name. */
mrt_status mrt_function_shadow_node(const mrt_node *node, const mrt_node *caller, const mrt_function *f,
                                    mrt_node **out)
{
    *out = NULL;
    bool any = false;
    for (int i = 0; i < node->n_attrs; i++) any |= node->attrs[i].ref_attr_name != NULL;
    if (!any) return MRT_STATUS_OK;
    mrt_node *s = calloc(1, sizeof *s);
    mrt_attr *attrs = calloc((size_t)node->n_attrs, sizeof *attrs);
    if (!s || !attrs) {
        free(s);
        free(attrs);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (function call)");
    }
    *s = *node;
    s->attrs = attrs;
    s->n_attrs = 0;
    for (int i = 0; i < node->n_attrs; i++) {
        const mrt_attr *a = &node->attrs[i];
        if (!a->ref_attr_name) {
            attrs[s->n_attrs++] = *a;
            continue;
        }
        const mrt_attr *src = mrt_node_attr(caller, a->ref_attr_name);
        for (int k = 0; !src && k < f->n_attr_defaults; k++)
            if (strcmp(f->attr_defaults[k].name, a->ref_attr_name) == 0) src = &f->attr_defaults[k];
        if (!src) continue; /* neither given nor defaulted: the op's own default applies */
        if (src->type != a->type) {
            free(attrs);
            free(s);
            return mrt_fail(MRT_STATUS_INVALID_MODEL,
                            "node '%s' calls function '%s': attribute '%s' is %s, the body's node '%s' expects %s",
                            caller->name, f->name, a->ref_attr_name, mrt_attr_type_name(src->type), node->name,
                            mrt_attr_type_name(a->type));
        }
        attrs[s->n_attrs] = *src;
        attrs[s->n_attrs].name = a->name;
        attrs[s->n_attrs].ref_attr_name = NULL;
        s->n_attrs++;
    }
    *out = s;
    return MRT_STATUS_OK;
}

void mrt_function_free_shadow(mrt_node *shadow)
{
    if (!shadow) return;
    free(shadow->attrs);
    free(shadow);
}

static mrt_status infer_call(mrt_op_ctx *ctx) { return mrt_infer_dynamic(ctx); }

static mrt_status run_call(mrt_op_ctx *ctx)
{
    const mrt_function *f = mrt_model_find_function(ctx->model, ctx->node->domain, ctx->node->op_type);
    if (!f) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the model has no function of that name");
    if (ctx->n_inputs > f->n_inputs || ctx->n_outputs > f->n_outputs)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "function '%s' takes %d inputs and gives %d outputs; the node "
                           "has %d and %d", f->name, f->n_inputs, f->n_outputs, ctx->n_inputs, ctx->n_outputs);
    /* body inputs follow the function's declared order; absent trailing ones are omitted optionals */
    mrt_value *in = calloc((size_t)f->body->n_inputs + 1, sizeof *in), *out = calloc((size_t)f->n_outputs + 1, sizeof *out);
    mrt_status st = in && out ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int i = 0, k = 0; !st && i < f->n_inputs; i++) {
        if (!f->inputs[i][0]) continue;
        const mrt_value *v = mrt_input_value(ctx, i);
        if (v) in[k] = *v;
        else in[k].is_optional = true;
        k++;
    }
    if (!st) st = mrt_exec_call(ctx, f->body, f, f->body->n_inputs, in, f->n_outputs, out);
    for (int i = 0; !st && i < ctx->n_outputs; i++) st = mrt_output_take_value(ctx, i, &out[i]);
    for (int i = 0; out && i < f->n_outputs; i++) mrt_value_release(&out[i]);
    free(in);
    free(out);
    return st;
}

const mrt_opdef mrt_function_opdef = {"", "(model-local function)", 1, 0, -1, 0, -1, infer_call, MRT_OPDEF_HAS_SUBGRAPH};
const mrt_kernel mrt_function_kernel = {"", "(model-local function)", 1, run_call, NULL};
