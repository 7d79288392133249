/* ONNX functions. A node with no kernel whose (domain, op_type) names one of the model's functions
 * (FunctionProto), or a standard op whose ONNX schema defines a fixed function body (engine/std_functions.c),
 * runs that body as a subgraph; so does a node whose op the session was asked to expand
 * (mrt_session_options.expand_functions), which checks a kernel against the standard's definition. Body nodes
 * whose attributes refer to the caller's (ref_attr_name) see them resolved through a shadow copy; body nodes
 * resolve opsets from the function's own imports. */
#include "engine/function.h"

#include <stdio.h>
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

const mrt_std_function *mrt_std_function_find(const char *domain, const char *op_type, int64_t opset)
{
    /* The governing version is the newest one not newer than the opset; among its bodies, the one drawn from
       the newest opset not newer than the model's, else the oldest (a body carries its own opset imports, so
       any of them defines the op). */
    domain = mrt_domain_normalize(domain);
    int governing = -1;
    for (int i = 0; i < mrt_n_std_functions; i++) {
        const mrt_std_function *e = &mrt_std_functions[i];
        if (strcmp(e->op_type, op_type) == 0 && strcmp(e->domain, domain) == 0 && e->since_version <= opset &&
            e->since_version > governing)
            governing = e->since_version;
    }
    const mrt_std_function *best = NULL;
    for (int i = 0; i < mrt_n_std_functions; i++) {
        const mrt_std_function *e = &mrt_std_functions[i];
        if (!e->body || e->since_version != governing || strcmp(e->op_type, op_type) != 0 ||
            strcmp(e->domain, domain) != 0)
            continue;
        bool fits = e->function_opset <= opset, best_fits = best && best->function_opset <= opset;
        if (!best || (fits && !best_fits) || (fits && e->function_opset > best->function_opset) ||
            (!fits && !best_fits && e->function_opset < best->function_opset))
            best = e;
    }
    return best;
}

bool mrt_session_expands(const mrt_session *s, const char *op_type)
{
    const char *list = s->opt.expand_functions;
    if (!list || !list[0]) return false;
    if (strcmp(list, "all") == 0) return true;
    size_t n = strlen(op_type);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, op_type, n) == 0) return true;
        p += len + (end != NULL);
    }
    return false;
}

mrt_status mrt_expand_list_check(const mrt_model *m, const char *list)
{
    if (!list || !list[0] || strcmp(list, "all") == 0) return MRT_STATUS_OK;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        bool found = false;
        for (int i = 0; !found && i < mrt_n_std_functions; i++)
            found = mrt_std_functions[i].body && strlen(mrt_std_functions[i].op_type) == len &&
                    strncmp(mrt_std_functions[i].op_type, p, len) == 0;
        for (int i = 0; !found && m && i < m->n_functions; i++)
            found = strlen(m->functions[i].name) == len && strncmp(m->functions[i].name, p, len) == 0;
        if (!found) {
            char known[1024] = "";
            size_t pos = 0;
            for (int i = 0; i < mrt_n_std_functions && pos < sizeof known; i++) {
                const mrt_std_function *e = &mrt_std_functions[i];
                if (!e->body || (i > 0 && strcmp(mrt_std_functions[i - 1].op_type, e->op_type) == 0 &&
                                 mrt_std_functions[i - 1].body))
                    continue;
                pos += (size_t)snprintf(known + pos, sizeof known - pos, "%s%s", pos ? ", " : "", e->op_type);
            }
            return mrt_fail(MRT_STATUS_INVALID_ARG,
                            "expand functions: op '%.*s' has no ONNX function body in the standard or the model "
                            "(ops with a fixed body: %s)", (int)len, p, known);
        }
        p += len + (end != NULL);
    }
    return MRT_STATUS_OK;
}

static mrt_status session_std_function(mrt_session *s, const mrt_std_function *src, const mrt_function **out)
{
    for (int i = 0; i < s->n_std; i++)
        if (s->std_src[i] == src) {
            *out = s->std_fn[i];
            return MRT_STATUS_OK;
        }
    const mrt_std_function **srcs = realloc(s->std_src, (size_t)(s->n_std + 1) * sizeof *srcs);
    if (srcs) s->std_src = srcs;
    mrt_function **fns = realloc(s->std_fn, (size_t)(s->n_std + 1) * sizeof *fns);
    if (fns) s->std_fn = fns;
    mrt_function *f = srcs && fns ? calloc(1, sizeof *f) : NULL;
    if (!f) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (function body)");
    mrt_status st = mrt_function_parse(src->body, src->body_len, f);
    if (st) {
        free(f);
        return mrt_fail_prefix(st, "the ONNX function body of %s-%d: ", src->op_type, src->since_version);
    }
    s->std_src[s->n_std] = src;
    s->std_fn[s->n_std++] = f;
    *out = f;
    return MRT_STATUS_OK;
}

void mrt_session_free_std_functions(mrt_session *s)
{
    for (int i = 0; i < s->n_std; i++) {
        mrt_function_clear(s->std_fn[i]);
        free(s->std_fn[i]);
    }
    free(s->std_fn);
    free(s->std_src);
}

mrt_status mrt_function_for_node(mrt_session *s, const mrt_node *nd, int64_t opset, const mrt_function **out)
{
    *out = mrt_model_find_function(s->model, nd->domain, nd->op_type);
    if (*out) return MRT_STATUS_OK;
    const mrt_std_function *src = mrt_std_function_find(nd->domain, nd->op_type, opset);
    return src ? session_std_function(s, src, out) : MRT_STATUS_OK;
}

static mrt_status infer_call(mrt_op_ctx *ctx) { return mrt_infer_dynamic(ctx); }

static mrt_status run_call(mrt_op_ctx *ctx)
{
    const mrt_function *f;
    MRT_TRY(mrt_function_for_node(ctx->exec->session, ctx->node, ctx->opset, &f));
    if (!f) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "no function defines this op");
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

const mrt_opdef mrt_function_opdef = {"", "(function)", 1, 0, -1, 0, -1, infer_call, MRT_OPDEF_HAS_SUBGRAPH};
const mrt_kernel mrt_function_kernel = {"", "(function)", 1, run_call, NULL};
