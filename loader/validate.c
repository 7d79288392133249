/* onnx.checker's rules, applied to the parsed ModelProto (names, not converted values, so that every problem can be
 * listed, not just the first the converter would stop at). Each rule either refuses the model (run, info and check
 * all fail) or, where real exporters write what the checker refuses, is reported by `minirt check` only and run
 * accepts it (problem.runs; docs/architecture.md lists them). */
#define _GNU_SOURCE /* vasprintf */
#include "loader/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/onnx_schemas.h"
#include "engine/status.h"
#include "engine/strmap.h"
#include "loader/proto_depth.h"
#include "loader/tensor_proto.h"
#include "onnx.pb-c.h"

/* A model with thousands of problems is garbage: list the first ones, count the rest. */
#define MAX_LISTED_PROBLEMS 200

/* Who defines a value in a scope: a node's index, or one of these. */
enum { DEF_INPUT = -1, DEF_INITIALIZER = -2 };

typedef struct scope {
    mrt_strmap defs;            /* name -> node index or DEF_* */
    const struct scope *parent; /* the enclosing graph's scope (subgraphs), NULL at the top and in functions */
    const Onnx__GraphProto *graph;  /* NULL for a function body */
    Onnx__NodeProto *const *nodes;  /* the graph's or the function's nodes */
    const char *prefix;         /* "" for the main graph, "graph 'then': " inside subgraphs, "function 'F': " */
    int current;                /* the node being checked: its subgraphs see the nodes before it (as the checker) */
} scope;

typedef struct vctx {
    const Onnx__ModelProto *mp;
    const Onnx__FunctionProto *fn; /* the function whose body is checked, or NULL */
    mrt_problems *out;
    mrt_status st;                 /* OUT_OF_MEMORY once anything failed to allocate */
} vctx;

static const char *str(const char *s) { return s ? s : ""; }

void mrt_problems_free(mrt_problems *p)
{
    for (int i = 0; i < p->n; i++) free(p->items[i].message);
    free(p->items);
    memset(p, 0, sizeof *p);
}

static void add(vctx *c, bool runs, const char *fmt, ...) MRT_PRINTF(3, 4);
static void add(vctx *c, bool runs, const char *fmt, ...)
{
    mrt_problems *p = c->out;
    p->n_refused += !runs;
    if (p->n >= MAX_LISTED_PROBLEMS) {
        p->n_dropped++;
        return;
    }
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 16;
        mrt_problem *ni = realloc(p->items, (size_t)nc * sizeof *ni);
        if (!ni) {
            c->st = MRT_STATUS_OUT_OF_MEMORY;
            return;
        }
        p->items = ni;
        p->cap = nc;
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    if (!msg) {
        c->st = MRT_STATUS_OUT_OF_MEMORY;
        return;
    }
    p->items[p->n++] = (mrt_problem){msg, runs};
}

/* The name minirt gives a node everywhere (graph.c): its own, else "<op>_<index>". */
static const char *node_label(const Onnx__NodeProto *n, size_t index, char *buf, size_t len)
{
    if (n->name && n->name[0]) return n->name;
    snprintf(buf, len, "%s_%zu", n->op_type && n->op_type[0] ? n->op_type : "node", index);
    return buf;
}

/* Who defines `name` in s or an enclosing scope. visible: in enclosing scopes, only what the node holding the
   subgraph can see (inputs, initializers, earlier nodes): onnx.checker checks a subgraph before it records the
   outputs of the node that holds it, so a body may reuse the names of that node's outputs and of later values. */
static int lookup_ex(const scope *s, const char *name, const scope **where, bool visible)
{
    for (const scope *start = s; s; s = s->parent) {
        int v;
        if (mrt_strmap_get(&s->defs, name, &v) && (!visible || s == start || v < 0 || v < s->current)) {
            if (where) *where = s;
            return v;
        }
    }
    return INT32_MIN;
}

static int lookup(const scope *s, const char *name, const scope **where) { return lookup_ex(s, name, where, false); }

static void describe_def(const scope *s, int def, char *buf, size_t len)
{
    if (def == DEF_INPUT) snprintf(buf, len, "a graph input");
    else if (def == DEF_INITIALIZER) snprintf(buf, len, "an initializer");
    else {
        char tmp[64];
        const Onnx__NodeProto *n = s->nodes[def];
        snprintf(buf, len, "the output of node '%s' (%s)", node_label(n, (size_t)def, tmp, sizeof tmp),
                 str(n->op_type));
    }
}

/* ------------------------------------------------------------------ opsets */

/* The version of `domain` (normalised) the node sees: the function's imports first, then the model's.
   NOT_IMPORTED: neither imports it (an import of a bad version is reported with the imports). */
#define NOT_IMPORTED INT64_MIN
static int64_t opset_of(const vctx *c, const char *domain)
{
    if (c->fn)
        for (size_t i = 0; i < c->fn->n_opset_import; i++) {
            const Onnx__OperatorSetIdProto *o = c->fn->opset_import[i];
            if (o && strcmp(mrt_domain_normalize(o->domain), domain) == 0) return o->has_version ? o->version : 1;
        }
    int64_t v = NOT_IMPORTED;
    for (size_t i = 0; i < c->mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = c->mp->opset_import[i];
        if (o && strcmp(mrt_domain_normalize(o->domain), domain) == 0) v = o->has_version ? o->version : 0;
    }
    return v;
}

static bool model_has_function(const vctx *c, const char *domain, const char *op)
{
    for (size_t i = 0; i < c->mp->n_functions; i++) {
        const Onnx__FunctionProto *f = c->mp->functions[i];
        if (f && f->name && strcmp(f->name, op) == 0 && strcmp(mrt_domain_normalize(f->domain), domain) == 0)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ attributes */

static const char *type_name(int t) { return mrt_attr_type_name((mrt_attr_type)t); }

/* How many value fields an attribute sets, and which (as an attribute type) when exactly one. */
static int value_fields(const Onnx__AttributeProto *a, int *which)
{
    int n = 0;
#define F(cond, t) \
    if (cond) {    \
        n++;       \
        *which = t; \
    }
    F(a->has_f, MRT_ATTR_FLOAT) F(a->has_i, MRT_ATTR_INT) F(a->has_s, MRT_ATTR_STRING) F(a->t, MRT_ATTR_TENSOR)
    F(a->g, MRT_ATTR_GRAPH) F(a->sparse_tensor, MRT_ATTR_SPARSE_TENSOR) F(a->tp, MRT_ATTR_TYPE_PROTO)
    F(a->n_floats, MRT_ATTR_FLOATS) F(a->n_ints, MRT_ATTR_INTS) F(a->n_strings, MRT_ATTR_STRINGS)
    F(a->n_tensors, MRT_ATTR_TENSORS) F(a->n_graphs, MRT_ATTR_GRAPHS) F(a->n_sparse_tensors, MRT_ATTR_SPARSE_TENSORS)
    F(a->n_type_protos, MRT_ATTR_TYPE_PROTOS)
#undef F
    return n;
}

static const mrt_schema_attr *schema_attr(const mrt_schema *s, const char *name)
{
    for (int i = 0; i < s->n_attrs; i++)
        if (strcmp(s->attrs[i].name, name) == 0) return &s->attrs[i];
    return NULL;
}

static void check_graph(vctx *c, const Onnx__GraphProto *g, const scope *parent, int depth);

static void check_attributes(vctx *c, const Onnx__NodeProto *n, const char *who, const scope *s, int depth)
{
    mrt_strmap seen; /* names so far (a map: a hostile node may have 100,000 attributes) */
    mrt_strmap_init(&seen);
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *a = n->attribute[k];
        if (!a) continue;
        const char *an = str(a->name);
        if (!an[0]) {
            add(c, false, "%s%s: attribute %zu has no name", s->prefix, who, k);
            continue;
        }
        int prev;
        if (mrt_strmap_get(&seen, an, &prev)) add(c, false, "%s%s: attribute '%s' appears twice", s->prefix, who, an);
        else if (mrt_strmap_put(&seen, an, (int)k)) c->st = MRT_STATUS_OUT_OF_MEMORY;
        if (a->ref_attr_name && a->ref_attr_name[0]) {
            if (!c->fn)
                add(c, false, "%s%s: attribute '%s' refers to a function attribute ('%s') outside a function",
                    s->prefix, who, an, a->ref_attr_name);
            continue;
        }
        int which = MRT_ATTR_UNDEFINED, nf = value_fields(a, &which);
        if (nf > 1) add(c, false, "%s%s: attribute '%s' holds more than one value field", s->prefix, who, an);
        else if (a->has_type && nf == 1 && (int)a->type != which)
            add(c, false, "%s%s: attribute '%s' says type %s but holds a %s value", s->prefix, who, an,
                type_name((int)a->type), type_name(which));
        if (a->g) check_graph(c, a->g, s, depth + 1);
        for (size_t j = 0; j < a->n_graphs; j++)
            if (a->graphs[j]) check_graph(c, a->graphs[j], s, depth + 1);
    }
    mrt_strmap_clear(&seen);
}

/* The node against its op's schema, for the ONNX domains (onnx.checker's schema->Verify). */
static void check_schema(vctx *c, const Onnx__NodeProto *n, const char *who, const scope *s, const char *domain,
                         int64_t opset)
{
    const char *op = n->op_type;
    const char *dom_name = domain[0] ? domain : "ai.onnx";
    const mrt_schema *sc = mrt_schema_find(domain, op, opset);
    if (!sc) {
        if (!model_has_function(c, domain, op))
            add(c, false, "%s%s: %s has no op '%s' at opset %lld", s->prefix, who, dom_name, op, (long long)opset);
        return;
    }
    if (sc->deprecated)
        add(c, true, "%s%s: %s-%d is deprecated at opset %lld", s->prefix, who, op, sc->since_version,
            (long long)opset);
    if ((int64_t)n->n_input < sc->min_inputs || (int64_t)n->n_input > sc->max_inputs)
        add(c, false, "%s%s: has %zu inputs, %s-%d takes %d to %d", s->prefix, who, n->n_input, op,
            sc->since_version, sc->min_inputs, sc->max_inputs);
    if ((int64_t)n->n_output < sc->min_outputs || (int64_t)n->n_output > sc->max_outputs)
        add(c, false, "%s%s: has %zu outputs, %s-%d gives %d to %d", s->prefix, who, n->n_output, op,
            sc->since_version, sc->min_outputs, sc->max_outputs);
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *a = n->attribute[k];
        if (!a || !a->name || !a->name[0]) continue;
        const mrt_schema_attr *sa = schema_attr(sc, a->name);
        if (!sa) {
            add(c, false, "%s%s: '%s' is not an attribute of %s-%d", s->prefix, who, a->name, op, sc->since_version);
            continue;
        }
        if (a->ref_attr_name && a->ref_attr_name[0]) continue; /* typed by the caller */
        int which = MRT_ATTR_UNDEFINED, t = a->has_type ? (int)a->type : (value_fields(a, &which), which);
        if (t == sa->type) continue;
        /* minirt's getters read an int where a float is expected and one int as a one-element list */
        bool lenient = t == MRT_ATTR_INT && (sa->type == MRT_ATTR_FLOAT || sa->type == MRT_ATTR_INTS);
        add(c, lenient, "%s%s: attribute '%s' has type %s, expected %s", s->prefix, who, a->name, type_name(t),
            type_name(sa->type));
    }
    for (int i = 0; i < sc->n_attrs; i++) {
        if (!sc->attrs[i].required) continue;
        bool found = false;
        for (size_t k = 0; k < n->n_attribute && !found; k++)
            found = n->attribute[k] && strcmp(str(n->attribute[k]->name), sc->attrs[i].name) == 0;
        if (!found)
            add(c, false, "%s%s: required attribute '%s' (%s) is missing", s->prefix, who, sc->attrs[i].name,
                type_name(sc->attrs[i].type));
    }
}

static void check_node(vctx *c, const Onnx__NodeProto *n, size_t index, const scope *s, int depth)
{
    char buf[64], who[600];
    const char *label = node_label(n, index, buf, sizeof buf);
    snprintf(who, sizeof who, "node '%s' (%s)", label, str(n->op_type));
    if (!n->op_type || !n->op_type[0]) {
        add(c, false, "%snode %zu ('%s') has no op_type", s->prefix, index, str(n->name));
        return;
    }
    if (!n->n_input && !n->n_output) add(c, false, "%s%s has no inputs and no outputs", s->prefix, who);
    check_attributes(c, n, who, s, depth);
    const char *domain = mrt_domain_normalize(n->domain);
    int64_t opset = opset_of(c, domain);
    if (opset == NOT_IMPORTED) {
        if (!domain[0])
            add(c, false, "%s%s: the model imports no opset for the ONNX domain", s->prefix, who);
        else if (mrt_schema_domain_is_onnx(domain))
            add(c, false, "%s%s: the model imports no opset for domain '%s'", s->prefix, who, domain);
        else if (!model_has_function(c, domain, n->op_type))
            add(c, true, "%s%s: domain '%s' is not imported (exporters omit it for custom ops; minirt takes the "
                "newest version it has)", s->prefix, who, domain);
        return;
    }
    if (mrt_schema_domain_is_onnx(domain) && opset >= 1 && opset <= mrt_schema_newest_opset(domain))
        check_schema(c, n, who, s, domain, opset);
}

/* ------------------------------------------------------------------ graphs */

static void define(vctx *c, scope *s, const char *name, int def)
{
    const scope *where = NULL;
    int prev = lookup_ex(s, name, &where, true);
    if (prev == INT32_MIN) {
        if (mrt_strmap_put(&s->defs, name, def)) c->st = MRT_STATUS_OUT_OF_MEMORY;
        return;
    }
    char a[700], b[700];
    describe_def(where, prev, a, sizeof a);
    describe_def(s, def, b, sizeof b);
    if (where != s)
        add(c, false, "%svalue '%s' is %s, and the enclosing graph '%s' defines it already (%s): ONNX values are "
            "assigned once, subgraphs included", s->prefix, name, b, str(where->graph ? where->graph->name : ""), a);
    else if (prev >= 0 && def >= 0) {
        char t1[64], t2[64];
        add(c, false, "%svalue '%s' is produced by two nodes ('%s' and '%s')", s->prefix, name,
            node_label(s->nodes[prev], (size_t)prev, t1, sizeof t1), node_label(s->nodes[def], (size_t)def, t2, sizeof t2));
    } else if (prev == def)
        add(c, false, "%s%s '%s' is defined twice", s->prefix, def == DEF_INPUT ? "graph input" : "initializer", name);
    else
        add(c, false, "%svalue '%s' is defined twice: %s and %s", s->prefix, name, a, b);
}

static void check_value_info_declared(vctx *c, const scope *s, const Onnx__ValueInfoProto *vi, const char *what)
{
    if (!vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        add(c, true, "%s%s '%s' declares no type", s->prefix, what, vi->name);
    else if (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
             (!vi->type->tensor_type || !vi->type->tensor_type->shape))
        add(c, true, "%s%s '%s' declares no shape (the ONNX checker wants one, of unknown dimensions if need be)",
            s->prefix, what, vi->name);
}

/* The body of a graph: inputs and initializers, node outputs (defined once), node inputs (defined somewhere in
   scope), graph outputs (produced). Nodes may come in any order (minirt sorts them), which check reports. */
static void check_body(vctx *c, scope *s, const Onnx__GraphProto *g, int depth, bool main)
{
    for (size_t i = 0; g && i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (!vi || !vi->name || !vi->name[0]) {
            add(c, false, "%sgraph '%s': input %zu has no name", s->prefix, str(g->name), i);
            continue;
        }
        if (mrt_strmap_get(&s->defs, vi->name, &(int){0})) {
            add(c, false, "%sgraph input '%s' is declared twice", s->prefix, vi->name);
            continue;
        }
        define(c, s, vi->name, DEF_INPUT);
        if (main) check_value_info_declared(c, s, vi, "graph input");
    }
    for (size_t i = 0; g && i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t || !t->name || !t->name[0]) {
            add(c, false, "%sgraph '%s': initializer %zu has no name", s->prefix, str(g->name), i);
            continue;
        }
        int prev;
        if (mrt_strmap_get(&s->defs, t->name, &prev) && prev == DEF_INPUT) continue; /* an input's default */
        define(c, s, t->name, DEF_INITIALIZER);
    }
    for (size_t i = 0; g && i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[i];
        const char *name = sp && sp->values ? sp->values->name : NULL;
        if (!name || !name[0]) {
            add(c, false, "%sgraph '%s': sparse initializer %zu has no name", s->prefix, str(g->name), i);
            continue;
        }
        int prev;
        if (mrt_strmap_get(&s->defs, name, &prev) && prev == DEF_INPUT) continue;
        define(c, s, name, DEF_INITIALIZER);
    }
    size_t n_nodes = g ? g->n_node : c->fn->n_node;
    Onnx__NodeProto **nodes = g ? g->node : c->fn->node;
    for (size_t k = 0; k < n_nodes; k++)
        for (size_t o = 0; nodes[k] && o < nodes[k]->n_output; o++)
            if (nodes[k]->output[o] && nodes[k]->output[o][0]) define(c, s, nodes[k]->output[o], (int)k);
    bool reported_order = false;
    for (size_t k = 0; k < n_nodes && c->st == MRT_STATUS_OK; k++) {
        const Onnx__NodeProto *n = nodes[k];
        if (!n) continue;
        char buf[64];
        for (size_t i = 0; i < n->n_input; i++) {
            const char *in = n->input[i];
            if (!in || !in[0]) continue;
            const scope *where = NULL;
            int def = lookup(s, in, &where);
            if (def == INT32_MIN)
                add(c, false, "%snode '%s' (%s): input '%s' is not defined (no node produces it and it is not a graph "
                    "input or initializer)", s->prefix, node_label(n, k, buf, sizeof buf), str(n->op_type), in);
            else if (where == s && def >= (int)k && !reported_order) {
                char b2[64];
                add(c, true, "%snodes are not in topological order: node '%s' (%s) reads '%s' before node '%s' "
                    "writes it", s->prefix, node_label(n, k, buf, sizeof buf), str(n->op_type), in,
                    node_label(nodes[def], (size_t)def, b2, sizeof b2));
                reported_order = true;
            }
        }
        s->current = (int)k;
        check_node(c, n, k, s, depth);
    }
    s->current = INT32_MAX;
    if (!g) return;
    for (size_t i = 0; i < g->n_output; i++) {
        const Onnx__ValueInfoProto *vi = g->output[i];
        if (!vi || !vi->name || !vi->name[0]) {
            add(c, false, "%sgraph '%s': output %zu has no name", s->prefix, str(g->name), i);
            continue;
        }
        if (lookup(s, vi->name, NULL) == INT32_MIN)
            add(c, false, "%sgraph output '%s' is not produced by any node", s->prefix, vi->name);
        if (main) check_value_info_declared(c, s, vi, "graph output");
    }
}

static void check_graph(vctx *c, const Onnx__GraphProto *g, const scope *parent, int depth)
{
    if (depth > MRT_MAX_GRAPH_DEPTH) { /* mrt_proto_check_nesting refuses this first; kept for any other caller */
        add(c, false, "subgraphs nest more than %d levels deep", MRT_MAX_GRAPH_DEPTH);
        return;
    }
    char prefix[600] = "";
    if (parent) snprintf(prefix, sizeof prefix, "%sgraph '%s': ", parent->prefix, str(g->name));
    if (!g->name || !g->name[0]) add(c, true, "%sa graph has no name", parent ? parent->prefix : "");
    scope s = {.parent = parent, .graph = g, .nodes = g->node, .prefix = prefix, .current = INT32_MAX};
    mrt_strmap_init(&s.defs);
    check_body(c, &s, g, depth, parent == NULL);
    mrt_strmap_clear(&s.defs);
}

static void check_function(vctx *c, const Onnx__FunctionProto *f)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "function '%s%s%s': ", str(f->domain), f->domain && f->domain[0] ? "::" : "",
             str(f->name));
    c->fn = f;
    scope s = {.nodes = f->node, .prefix = prefix, .current = INT32_MAX};
    mrt_strmap_init(&s.defs);
    for (size_t i = 0; i < f->n_input; i++)
        if (f->input[i] && f->input[i][0]) define(c, &s, f->input[i], DEF_INPUT);
    check_body(c, &s, NULL, 0, false);
    for (size_t i = 0; i < f->n_output; i++)
        if (f->output[i] && f->output[i][0] && lookup(&s, f->output[i], NULL) == INT32_MIN)
            add(c, false, "%soutput '%s' is not produced by any node", prefix, f->output[i]);
    mrt_strmap_clear(&s.defs);
    c->fn = NULL;
}

/* ------------------------------------------------------------------ models */

mrt_status mrt_validate_model_proto(const Onnx__ModelProto *mp, mrt_problems *out)
{
    vctx c = {mp, NULL, out, MRT_STATUS_OK};
    if (!mp->graph) add(&c, false, "the model has no graph");
    int64_t ir = mp->has_ir_version ? mp->ir_version : 0;
    if (ir <= 0)
        add(&c, false, "ir_version %lld: the model does not say which IR version it follows (minirt reads 1 to %d)",
            (long long)ir, MRT_IR_VERSION_MAX);
    else if (ir > MRT_IR_VERSION_MAX)
        add(&c, false, "ir_version %lld is newer than the newest IR version minirt knows (%d)", (long long)ir,
            MRT_IR_VERSION_MAX);
    if (ir >= 3 && !mp->n_opset_import) add(&c, false, "the model imports no opsets (IR version 3 and later must)");
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        if (!o) continue;
        const char *d = mrt_domain_normalize(o->domain);
        int64_t newest = mrt_schema_newest_opset(d);
        if (newest < 0) continue; /* a custom domain: its versions are its own */
        const char *name = d[0] ? d : "ai.onnx";
        if (!o->has_version || o->version < 1)
            add(&c, false, "opset import %s version %lld: versions start at 1", name,
                (long long)(o->has_version ? o->version : 0));
        else if (o->version > newest)
            add(&c, false, "opset import %s version %lld is newer than the newest opset minirt knows (%lld)", name,
                (long long)o->version, (long long)newest);
    }
    mrt_strmap keys;
    mrt_strmap_init(&keys);
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const char *key = mp->metadata_props[i] ? str(mp->metadata_props[i]->key) : "";
        int prev;
        if (mrt_strmap_get(&keys, key, &prev)) add(&c, true, "metadata_props has the key '%s' twice", key);
        else if (mrt_strmap_put(&keys, key, 0)) c.st = MRT_STATUS_OUT_OF_MEMORY;
    }
    mrt_strmap_clear(&keys);
    for (size_t i = 0; i < mp->n_functions; i++)
        if (mp->functions[i]) check_function(&c, mp->functions[i]);
    if (mp->graph) check_graph(&c, mp->graph, NULL, 0);
    return c.st ? mrt_fail(c.st, "out of memory (validating the model)") : MRT_STATUS_OK;
}

mrt_status mrt_model_check_file(const char *path, mrt_problems *out)
{
    memset(out, 0, sizeof *out);
    void *bytes;
    size_t len;
    MRT_TRY(mrt_read_whole_file(path, &bytes, &len));
    vctx c = {NULL, NULL, out, MRT_STATUS_OK};
    mrt_status st = mrt_proto_check_nesting(&onnx__model_proto__descriptor, bytes, len);
    Onnx__ModelProto *mp = st ? NULL : onnx__model_proto__unpack(NULL, len, bytes);
    free(bytes);
    if (st) {
        add(&c, false, "%s", mrt_last_error());
        return c.st;
    }
    if (!mp) {
        add(&c, false, "not a valid ONNX model (protobuf parse failed)");
        return c.st;
    }
    st = mrt_validate_model_proto(mp, out);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (st || out->n_refused) return st;
    /* the rest of loading: initializers' data, external data, types the converter refuses */
    mrt_model *m = NULL;
    if (mrt_model_load(path, &m) != MRT_STATUS_OK) {
        const char *msg = mrt_last_error();
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "loading '%s': ", path);
        add(&c, false, "%s", strncmp(msg, prefix, strlen(prefix)) == 0 ? msg + strlen(prefix) : msg);
    }
    mrt_model_free(m);
    return c.st;
}
