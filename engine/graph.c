/* Graph construction, lookup and destruction. */
#include "engine/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/function.h"
#include "engine/weights.h"
#include "engine/status.h"

static mrt_status oom(const char *what) { return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (%s)", what); }

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

const char *mrt_domain_normalize(const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0) return "";
    return domain;
}

mrt_graph *mrt_graph_new(const char *name)
{
    mrt_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = dup_or_empty(name);
    if (!g->name) {
        free(g);
        return NULL;
    }
    mrt_strmap_init(&g->value_index);
    return g;
}

void mrt_type_info_clear(mrt_type_info *t)
{
    if (!t) return;
    for (int i = 0; i < MRT_MAX_RANK; i++) free(t->dim_params[i]);
    if (t->elem) {
        mrt_type_info_clear(t->elem);
        free(t->elem);
    }
    memset(t, 0, sizeof *t);
    t->rank = -1;
}

mrt_status mrt_type_info_copy(mrt_type_info *dst, const mrt_type_info *src)
{
    memset(dst, 0, sizeof *dst);
    dst->kind = src->kind;
    dst->elem_type = src->elem_type;
    dst->rank = src->rank;
    memcpy(dst->dims, src->dims, sizeof dst->dims);
    for (int i = 0; i < MRT_MAX_RANK; i++) {
        if (src->dim_params[i] && !(dst->dim_params[i] = strdup(src->dim_params[i]))) goto fail;
    }
    if (src->elem) {
        dst->elem = calloc(1, sizeof *dst->elem);
        if (!dst->elem || mrt_type_info_copy(dst->elem, src->elem) != MRT_STATUS_OK) goto fail;
    }
    return MRT_STATUS_OK;
fail:
    mrt_type_info_clear(dst);
    return oom("type info");
}

void mrt_attr_clear(mrt_attr *a)
{
    free(a->name);
    free(a->ref_attr_name);
    free(a->s);
    if (a->t) {
        mrt_tensor_release(a->t);
        free(a->t);
    }
    mrt_graph_free(a->g);
    free(a->floats);
    free(a->ints);
    if (a->strings)
        for (int64_t i = 0; i < a->n; i++) free(a->strings[i]);
    free(a->strings);
    if (a->tensors)
        for (int64_t i = 0; i < a->n; i++) mrt_tensor_release(&a->tensors[i]);
    free(a->tensors);
    if (a->graphs)
        for (int64_t i = 0; i < a->n; i++) mrt_graph_free(a->graphs[i]);
    free(a->graphs);
    memset(a, 0, sizeof *a);
}

static void node_clear(mrt_node *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->inputs);
    free(n->outputs);
    for (int i = 0; i < n->n_attrs; i++) mrt_attr_clear(&n->attrs[i]);
    free(n->attrs);
}

void mrt_graph_free(mrt_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_values; i++) {
        free(g->values[i].name);
        mrt_type_info_clear(&g->values[i].type);
        if (g->values[i].initializer) {
            mrt_weight_src *w = g->values[i].weight;
            if (!w) mrt_tensor_release(g->values[i].initializer);
            else if (w->storage == MRT_WEIGHT_COPIED) mrt_weight_copy_free(g->values[i].initializer->data, w->nbytes);
            free(w);
            free(g->values[i].initializer);
        }
    }
    free(g->values);
    mrt_strmap_clear(&g->value_index);
    for (int i = 0; i < g->n_nodes; i++) node_clear(&g->nodes[i]);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->name);
    free(g);
}

int mrt_graph_find_value(const mrt_graph *g, const char *name)
{
    int idx;
    return mrt_strmap_get(&g->value_index, name, &idx) ? idx : -1;
}

mrt_status mrt_graph_value_get(mrt_graph *g, const char *name, int *index)
{
    int idx = mrt_graph_find_value(g, name);
    if (idx >= 0) {
        *index = idx;
        return MRT_STATUS_OK;
    }
    if (g->n_values == g->cap_values) {
        int ncap = g->cap_values ? g->cap_values * 2 : 32;
        mrt_graph_value *nv = realloc(g->values, (size_t)ncap * sizeof *nv);
        if (!nv) return oom("graph values");
        g->values = nv;
        g->cap_values = ncap;
    }
    mrt_graph_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = strdup(name);
    if (!v->name) return oom("value name");
    v->type.rank = -1;
    v->producer = -1;
    MRT_TRY(mrt_strmap_put(&g->value_index, name, g->n_values));
    *index = g->n_values++;
    return MRT_STATUS_OK;
}

static mrt_status append_index(int **arr, int *n, int v)
{
    int *na = realloc(*arr, (size_t)(*n + 1) * sizeof(int));
    if (!na) return oom("index list");
    na[*n] = v;
    *arr = na;
    (*n)++;
    return MRT_STATUS_OK;
}

static mrt_status set_declared_type(mrt_graph_value *v, const mrt_type_info *type)
{
    if (!type) return MRT_STATUS_OK;
    mrt_type_info_clear(&v->type);
    return mrt_type_info_copy(&v->type, type);
}

mrt_status mrt_graph_add_input(mrt_graph *g, const char *name, const mrt_type_info *type, int *index)
{
    int idx;
    MRT_TRY(mrt_graph_value_get(g, name, &idx));
    if (g->values[idx].is_input)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': input '%s' is declared twice", g->name, name);
    g->values[idx].is_input = true;
    MRT_TRY(set_declared_type(&g->values[idx], type));
    MRT_TRY(append_index(&g->inputs, &g->n_inputs, idx));
    if (index) *index = idx;
    return MRT_STATUS_OK;
}

mrt_status mrt_graph_add_output(mrt_graph *g, const char *name, const mrt_type_info *type, int *index)
{
    int idx;
    MRT_TRY(mrt_graph_value_get(g, name, &idx));
    g->values[idx].is_output = true;
    if (type && type->kind != MRT_TYPE_UNKNOWN) MRT_TRY(set_declared_type(&g->values[idx], type));
    MRT_TRY(append_index(&g->outputs, &g->n_outputs, idx));
    if (index) *index = idx;
    return MRT_STATUS_OK;
}

mrt_status mrt_graph_set_initializer(mrt_graph *g, const char *name, mrt_tensor *t)
{
    return mrt_graph_set_initializer_mapped(g, name, t, NULL);
}

mrt_status mrt_graph_set_initializer_mapped(mrt_graph *g, const char *name, mrt_tensor *t, mrt_weight_src *w)
{
    int idx;
    MRT_TRY(mrt_graph_value_get(g, name, &idx));
    mrt_graph_value *v = &g->values[idx];
    if (v->initializer)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': initializer '%s' is defined twice", g->name, name);
    v->initializer = malloc(sizeof *v->initializer);
    if (!v->initializer) return oom("initializer");
    *v->initializer = *t;
    v->weight = w;
    memset(t, 0, sizeof *t);
    return MRT_STATUS_OK;
}

static mrt_status name_list_to_indices(mrt_graph *g, int n, const char *const *names, int **out)
{
    *out = calloc((size_t)(n ? n : 1), sizeof(int));
    if (!*out) return oom("node io");
    for (int i = 0; i < n; i++) {
        if (!names || !names[i] || !names[i][0]) {
            (*out)[i] = -1;
            continue;
        }
        MRT_TRY(mrt_graph_value_get(g, names[i], &(*out)[i]));
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_graph_add_node(mrt_graph *g, const char *name, const char *op_type, const char *domain,
                              int n_inputs, const char *const *inputs, int n_outputs,
                              const char *const *outputs, mrt_node **out)
{
    if (g->n_nodes == g->cap_nodes) {
        int ncap = g->cap_nodes ? g->cap_nodes * 2 : 16;
        mrt_node *nn = realloc(g->nodes, (size_t)ncap * sizeof *nn);
        if (!nn) return oom("nodes");
        g->nodes = nn;
        g->cap_nodes = ncap;
    }
    int index = g->n_nodes;
    mrt_node *n = &g->nodes[index];
    memset(n, 0, sizeof *n);
    g->n_nodes++; /* count it now so mrt_graph_free releases partial state on failure */
    if (name && name[0]) {
        n->name = strdup(name);
    } else {
        size_t len = strlen(op_type ? op_type : "node") + 24;
        n->name = malloc(len);
        if (n->name) snprintf(n->name, len, "%s_%d", op_type ? op_type : "node", index);
    }
    n->op_type = dup_or_empty(op_type);
    n->domain = dup_or_empty(mrt_domain_normalize(domain));
    if (!n->name || !n->op_type || !n->domain) return oom("node");
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    MRT_TRY(name_list_to_indices(g, n_inputs, inputs, &n->inputs));
    MRT_TRY(name_list_to_indices(g, n_outputs, outputs, &n->outputs));
    for (int i = 0; i < n_outputs; i++) {
        int v = n->outputs[i];
        if (v < 0) continue;
        if (g->values[v].producer >= 0)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "value '%s' is produced by two nodes ('%s' and '%s')",
                            g->values[v].name, g->nodes[g->values[v].producer].name, n->name);
        /* as the loader's validation refuses it in a file: a graph built through this API must not run either */
        if (g->values[v].initializer || g->values[v].is_input)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "value '%s' is defined twice: %s and the output of node '%s' (%s)",
                            g->values[v].name, g->values[v].initializer ? "an initializer" : "a graph input", n->name,
                            n->op_type);
        g->values[v].producer = index;
    }
    if (out) *out = n;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr(mrt_node *n, const char *name, mrt_attr_type type, mrt_attr **out)
{
    mrt_attr *na = realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *na);
    if (!na) return oom("attributes");
    n->attrs = na;
    mrt_attr *a = &na[n->n_attrs];
    memset(a, 0, sizeof *a);
    a->name = strdup(name ? name : "");
    if (!a->name) return oom("attribute name");
    a->type = type;
    n->n_attrs++;
    if (out) *out = a;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_int(mrt_node *n, const char *name, int64_t v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_INT, &a));
    a->i = v;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_float(mrt_node *n, const char *name, float v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_FLOAT, &a));
    a->f = v;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_string(mrt_node *n, const char *name, const char *v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_STRING, &a));
    a->s = dup_or_empty(v);
    if (!a->s) return oom("string attribute");
    a->s_len = strlen(a->s);
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_ints(mrt_node *n, const char *name, int64_t count, const int64_t *v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_INTS, &a));
    a->ints = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (!a->ints) return oom("ints attribute");
    if (count) memcpy(a->ints, v, (size_t)count * sizeof(int64_t));
    a->n = count;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_floats(mrt_node *n, const char *name, int64_t count, const float *v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_FLOATS, &a));
    a->floats = malloc((size_t)(count ? count : 1) * sizeof(float));
    if (!a->floats) return oom("floats attribute");
    if (count) memcpy(a->floats, v, (size_t)count * sizeof(float));
    a->n = count;
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_strings(mrt_node *n, const char *name, int64_t count, const char *const *v)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_STRINGS, &a));
    a->strings = calloc((size_t)(count ? count : 1), sizeof(char *));
    if (!a->strings) return oom("strings attribute");
    a->n = count;
    for (int64_t i = 0; i < count; i++)
        if (!(a->strings[i] = dup_or_empty(v[i]))) return oom("strings attribute");
    return MRT_STATUS_OK;
}

mrt_status mrt_node_add_attr_tensor(mrt_node *n, const char *name, const mrt_tensor *t)
{
    mrt_attr *a;
    MRT_TRY(mrt_node_add_attr(n, name, MRT_ATTR_TENSOR, &a));
    a->t = calloc(1, sizeof *a->t);
    if (!a->t) return oom("tensor attribute");
    return mrt_tensor_copy(a->t, t);
}

mrt_status mrt_node_add_attr_graph(mrt_node *n, const char *name, mrt_graph *g)
{
    mrt_attr *a;
    mrt_status st = mrt_node_add_attr(n, name, MRT_ATTR_GRAPH, &a);
    if (st) {
        mrt_graph_free(g);
        return st;
    }
    a->g = g;
    return MRT_STATUS_OK;
}

const mrt_attr *mrt_node_attr(const mrt_node *n, const char *name)
{
    /* kernels look attributes up on every run: the first letter rules out most names without a call */
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name[0] == name[0] && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

const char *mrt_attr_type_name(mrt_attr_type t)
{
    static const char *const names[] = {"undefined", "float",  "int",     "string",        "tensor",
                                        "graph",     "floats", "ints",    "strings",       "tensors",
                                        "graphs",    "sparse_tensor", "sparse_tensors", "type_proto",
                                        "type_protos"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* ----------------------------------------------------------------- models */

mrt_model *mrt_model_new(void)
{
    mrt_model *m = calloc(1, sizeof *m);
    return m;
}

void mrt_function_clear(mrt_function *f)
{
    free(f->domain);
    free(f->name);
    for (int i = 0; i < f->n_inputs; i++) free(f->inputs[i]);
    free(f->inputs);
    for (int i = 0; i < f->n_outputs; i++) free(f->outputs[i]);
    free(f->outputs);
    for (int i = 0; i < f->n_attr_names; i++) free(f->attr_names[i]);
    free(f->attr_names);
    for (int i = 0; i < f->n_attr_defaults; i++) mrt_attr_clear(&f->attr_defaults[i]);
    free(f->attr_defaults);
    mrt_graph_free(f->body);
    for (int i = 0; i < f->n_opsets; i++) free(f->opsets[i].domain);
    free(f->opsets);
}

void mrt_model_free(mrt_model *m)
{
    if (!m) return;
    mrt_graph_free(m->graph);
    for (int i = 0; i < m->n_opsets; i++) free(m->opsets[i].domain);
    free(m->opsets);
    for (int i = 0; i < m->n_functions; i++) mrt_function_clear(&m->functions[i]);
    free(m->functions);
    free(m->producer_name);
    free(m->path);
    mrt_mappings_free(m->mappings); /* after the graph: its initializers point into them */
    free(m);
}

mrt_status mrt_model_set_opset(mrt_model *m, const char *domain, int64_t version)
{
    domain = mrt_domain_normalize(domain);
    for (int i = 0; i < m->n_opsets; i++) {
        if (strcmp(m->opsets[i].domain, domain) == 0) {
            m->opsets[i].version = version;
            return MRT_STATUS_OK;
        }
    }
    mrt_opset *no = realloc(m->opsets, (size_t)(m->n_opsets + 1) * sizeof *no);
    if (!no) return oom("opsets");
    m->opsets = no;
    no[m->n_opsets].domain = strdup(domain);
    if (!no[m->n_opsets].domain) return oom("opset domain");
    no[m->n_opsets].version = version;
    m->n_opsets++;
    return MRT_STATUS_OK;
}

int64_t mrt_model_opset(const mrt_model *m, const char *domain)
{
    domain = mrt_domain_normalize(domain);
    for (int i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0) return m->opsets[i].version;
    return -1;
}

static bool is_runtime_input(const mrt_graph *g, int i)
{
    return g->values[g->inputs[i]].initializer == NULL;
}

int mrt_model_n_inputs(const mrt_model *m)
{
    int n = 0;
    for (int i = 0; i < m->graph->n_inputs; i++) n += is_runtime_input(m->graph, i);
    return n;
}

const char *mrt_model_input_name(const mrt_model *m, int k)
{
    for (int i = 0; i < m->graph->n_inputs; i++) {
        if (!is_runtime_input(m->graph, i)) continue;
        if (k-- == 0) return m->graph->values[m->graph->inputs[i]].name;
    }
    return NULL;
}

int mrt_model_n_outputs(const mrt_model *m) { return m->graph->n_outputs; }

const char *mrt_model_output_name(const mrt_model *m, int i)
{
    return i >= 0 && i < m->graph->n_outputs ? m->graph->values[m->graph->outputs[i]].name : NULL;
}
