/* ONNX ModelProto -> mrt_model: opsets, graph values with declared types, initializers (dense and sparse,
 * raw/typed/external data), nodes with typed attributes, subgraphs (outer-scope references marked) and
 * model-local functions. Every error path frees what was built and names what is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/function.h"
#include "engine/graph.h"
#include "engine/status.h"
#include "engine/weights.h"
#include "loader/proto_depth.h"
#include "loader/tensor_proto.h"
#include "loader/validate.h"
#include "loader/wire.h"
#include "minirt/minirt.h"
#include "onnx.pb-c.h"

/* Subgraphs nest (If inside Loop inside Scan...); a bound keeps hostile files from exhausting the stack. The bytes
   are checked against it before protobuf-c parses them (mrt_proto_check_nesting); these checks repeat it for models
   parsed by other means. */
#define MAX_GRAPH_DEPTH MRT_MAX_GRAPH_DEPTH

/* raw_data of the main graph's initializers, located in the file bytes by strip_raw_data (one per initializer, in
   the order protobuf-c lists them; `set` false where the proto keeps its own). */
typedef struct raw_ref {
    const uint8_t *p;
    size_t len;
    bool set;
} raw_ref;

typedef struct load_ctx {
    const char *base_dir; /* folder for external data, or NULL */
    mrt_mapping **maps;   /* the model's mappings (external data is mapped onto it), or NULL */
    bool persistent;      /* the refs point into a mapping the model keeps */
    const raw_ref *refs;
    size_t n_refs;
} load_ctx;

static mrt_status oom(const char *what) { return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (%s)", what); }

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* ------------------------------------------------------------------ declared types */

static mrt_status convert_type(const Onnx__TypeProto *tp, const char *what, int depth, mrt_type_info *out);

static mrt_status convert_elem_type(int32_t elem, const char *what, mrt_dtype *out)
{
    if (elem != 0 && !mrt_dtype_is_known(elem))
        return mrt_fail(elem < 0 ? MRT_STATUS_INVALID_MODEL : MRT_STATUS_NOT_IMPLEMENTED,
                        "%s: element type %d is not supported (minirt knows ONNX data types 1-%d)", what, (int)elem,
                        MRT_DTYPE_COUNT_ - 1);
    *out = (mrt_dtype)elem;
    return MRT_STATUS_OK;
}

static mrt_status convert_shape(const Onnx__TensorShapeProto *sp, const char *what, mrt_type_info *out)
{
    out->rank = -1;
    if (!sp) return MRT_STATUS_OK; /* unknown rank */
    if (sp->n_dim > MRT_MAX_RANK)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "%s: declared rank %zu exceeds minirt's maximum rank %d", what,
                        sp->n_dim, MRT_MAX_RANK);
    out->rank = (int)sp->n_dim;
    for (int i = 0; i < out->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        out->dims[i] = -1;
        if (!d) continue;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            /* some exporters write -1 for "dynamic": treat any negative value as unknown */
            out->dims[i] = d->dim_value >= 0 ? d->dim_value : -1;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                   d->dim_param[0]) {
            if (!(out->dim_params[i] = strdup(d->dim_param))) return oom("dim_param");
        }
    }
    return MRT_STATUS_OK;
}

static mrt_status convert_nested(const Onnx__TypeProto *elem, const char *what, int depth, mrt_type_info *out)
{
    if (!elem) return MRT_STATUS_OK; /* element type not declared */
    out->elem = calloc(1, sizeof *out->elem);
    if (!out->elem) return oom("type info");
    out->elem->rank = -1;
    return convert_type(elem, what, depth + 1, out->elem);
}

/* On failure `out` may hold partial state: the caller clears it. */
static mrt_status convert_type(const Onnx__TypeProto *tp, const char *what, int depth, mrt_type_info *out)
{
    if (depth > MAX_GRAPH_DEPTH) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: type nesting is too deep", what);
    out->rank = -1;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        out->kind = MRT_TYPE_TENSOR;
        if (!tp->tensor_type) return MRT_STATUS_OK;
        MRT_TRY(convert_elem_type(tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : 0, what,
                                  &out->elem_type));
        return convert_shape(tp->tensor_type->shape, what, out);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        out->kind = MRT_TYPE_SPARSE_TENSOR;
        if (!tp->sparse_tensor_type) return MRT_STATUS_OK;
        MRT_TRY(convert_elem_type(tp->sparse_tensor_type->has_elem_type ? tp->sparse_tensor_type->elem_type : 0,
                                  what, &out->elem_type));
        return convert_shape(tp->sparse_tensor_type->shape, what, out);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        out->kind = MRT_TYPE_SEQUENCE;
        return tp->sequence_type ? convert_nested(tp->sequence_type->elem_type, what, depth, out) : MRT_STATUS_OK;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        out->kind = MRT_TYPE_OPTIONAL;
        return tp->optional_type ? convert_nested(tp->optional_type->elem_type, what, depth, out) : MRT_STATUS_OK;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        /* kept as a marker only: minirt has no map values; the value type rides along in elem */
        out->kind = MRT_TYPE_MAP;
        return tp->map_type ? convert_nested(tp->map_type->value_type, what, depth, out) : MRT_STATUS_OK;
    default: out->kind = MRT_TYPE_UNKNOWN; return MRT_STATUS_OK;
    }
}

/* Declared type of a ValueInfoProto; kind UNKNOWN when it has none. */
static mrt_status value_info_type(const Onnx__ValueInfoProto *vi, const char *what, mrt_type_info *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!vi->type) return MRT_STATUS_OK;
    mrt_status st = convert_type(vi->type, what, 0, out);
    if (st) mrt_type_info_clear(out);
    return st;
}

/* ------------------------------------------------------------------ graphs, nodes, attributes */

static mrt_status convert_graph(load_ctx *c, const Onnx__GraphProto *gp, const mrt_graph *parent, int depth,
                                mrt_graph **out);

/* Values a nested graph reads from outside itself that the enclosing graph `g` does not define either are
   outer references of `g` too: add them so the chain of captures is explicit at every level. */
static mrt_status lift_outer_refs(mrt_graph *g, const mrt_graph *sub)
{
    for (int i = 0; i < sub->n_values; i++) {
        if (!sub->values[i].is_outer || mrt_graph_find_value(g, sub->values[i].name) >= 0) continue;
        int idx;
        MRT_TRY(mrt_graph_value_get(g, sub->values[i].name, &idx));
    }
    return MRT_STATUS_OK;
}

static mrt_attr_type infer_attr_type(const Onnx__AttributeProto *ap)
{
    /* IR version 1 had no `type` field: the set value field tells */
    if (ap->has_f) return MRT_ATTR_FLOAT;
    if (ap->has_i) return MRT_ATTR_INT;
    if (ap->has_s) return MRT_ATTR_STRING;
    if (ap->t) return MRT_ATTR_TENSOR;
    if (ap->g) return MRT_ATTR_GRAPH;
    if (ap->sparse_tensor) return MRT_ATTR_SPARSE_TENSOR;
    if (ap->tp) return MRT_ATTR_TYPE_PROTO;
    if (ap->n_floats) return MRT_ATTR_FLOATS;
    if (ap->n_ints) return MRT_ATTR_INTS;
    if (ap->n_strings) return MRT_ATTR_STRINGS;
    if (ap->n_tensors) return MRT_ATTR_TENSORS;
    if (ap->n_graphs) return MRT_ATTR_GRAPHS;
    if (ap->n_sparse_tensors) return MRT_ATTR_SPARSE_TENSORS;
    if (ap->n_type_protos) return MRT_ATTR_TYPE_PROTOS;
    return MRT_ATTR_UNDEFINED;
}

static char *dup_bytes(const ProtobufCBinaryData *b)
{
    char *s = malloc(b->len + 1);
    if (!s) return NULL;
    if (b->len) memcpy(s, b->data, b->len);
    s[b->len] = '\0';
    return s;
}

/* Fill attribute `a` (already appended to its node, type set) from `ap`. g: the graph that holds the node
   (NULL for function attribute defaults), for subgraph parents and lifted outer references. */
static mrt_status fill_attr(load_ctx *c, mrt_graph *g, mrt_attr *a, const Onnx__AttributeProto *ap,
                            const char *what, int depth)
{
    bool is_ref = ap->ref_attr_name && ap->ref_attr_name[0];
    if (is_ref && !(a->ref_attr_name = strdup(ap->ref_attr_name))) return oom("attribute");
    char sub[600];
    switch (a->type) {
    case MRT_ATTR_FLOAT: a->f = ap->f; break;
    case MRT_ATTR_INT: a->i = ap->i; break;
    case MRT_ATTR_STRING:
        if (!(a->s = dup_bytes(&ap->s))) return oom("string attribute");
        a->s_len = ap->s.len;
        break;
    case MRT_ATTR_TENSOR:
        if (!ap->t) {
            if (is_ref) break;
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: tensor attribute holds no tensor", what);
        }
        if (!(a->t = calloc(1, sizeof *a->t))) return oom("tensor attribute");
        MRT_TRY(mrt_tensor_from_proto(ap->t, c->base_dir, what, a->t));
        break;
    case MRT_ATTR_GRAPH:
        if (!ap->g) {
            if (is_ref) break;
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: graph attribute holds no graph", what);
        }
        MRT_TRY(convert_graph(c, ap->g, g, depth + 1, &a->g));
        if (g) MRT_TRY(lift_outer_refs(g, a->g));
        break;
    case MRT_ATTR_FLOATS:
        if (!(a->floats = malloc((ap->n_floats ? ap->n_floats : 1) * sizeof(float)))) return oom("floats attribute");
        if (ap->n_floats) memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
        a->n = (int64_t)ap->n_floats;
        break;
    case MRT_ATTR_INTS:
        if (!(a->ints = malloc((ap->n_ints ? ap->n_ints : 1) * sizeof(int64_t)))) return oom("ints attribute");
        if (ap->n_ints) memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        a->n = (int64_t)ap->n_ints;
        break;
    case MRT_ATTR_STRINGS:
        if (!(a->strings = calloc(ap->n_strings ? ap->n_strings : 1, sizeof(char *)))) return oom("strings attribute");
        a->n = (int64_t)ap->n_strings;
        for (size_t k = 0; k < ap->n_strings; k++)
            if (!(a->strings[k] = dup_bytes(&ap->strings[k]))) return oom("strings attribute");
        break;
    case MRT_ATTR_TENSORS:
        if (!(a->tensors = calloc(ap->n_tensors ? ap->n_tensors : 1, sizeof(mrt_tensor)))) return oom("tensors attribute");
        a->n = (int64_t)ap->n_tensors;
        for (size_t k = 0; k < ap->n_tensors; k++) {
            snprintf(sub, sizeof sub, "%s[%zu]", what, k);
            MRT_TRY(mrt_tensor_from_proto(ap->tensors[k], c->base_dir, sub, &a->tensors[k]));
        }
        break;
    case MRT_ATTR_GRAPHS:
        if (!(a->graphs = calloc(ap->n_graphs ? ap->n_graphs : 1, sizeof(mrt_graph *)))) return oom("graphs attribute");
        a->n = (int64_t)ap->n_graphs;
        for (size_t k = 0; k < ap->n_graphs; k++) {
            if (!ap->graphs[k]) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s[%zu]: missing graph", what, k);
            MRT_TRY(convert_graph(c, ap->graphs[k], g, depth + 1, &a->graphs[k]));
            if (g) MRT_TRY(lift_outer_refs(g, a->graphs[k]));
        }
        break;
    case MRT_ATTR_SPARSE_TENSOR:
    case MRT_ATTR_SPARSE_TENSORS:
    case MRT_ATTR_TYPE_PROTO:
    case MRT_ATTR_TYPE_PROTOS:
        break; /* the type is kept; no op minirt runs reads these values */
    default:
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: unknown attribute type %d", what, (int)a->type);
    }
    return MRT_STATUS_OK;
}

static mrt_status attr_type_of(const Onnx__AttributeProto *ap, const char *what, mrt_attr_type *out)
{
    int t = ap->has_type ? (int)ap->type : (int)infer_attr_type(ap);
    if (t == MRT_ATTR_UNDEFINED) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: attribute has no type", what);
    if (t < MRT_ATTR_FLOAT || t > MRT_ATTR_TYPE_PROTOS)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: unknown attribute type %d", what, t);
    *out = (mrt_attr_type)t;
    return MRT_STATUS_OK;
}

static mrt_status convert_node(load_ctx *c, mrt_graph *g, const Onnx__NodeProto *np, size_t index, int depth)
{
    if (!np->op_type || !np->op_type[0])
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': node %zu ('%s') has no op_type", g->name, index,
                        str_or_empty(np->name));
    if (np->n_input > INT32_MAX || np->n_output > INT32_MAX)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': node %zu has too many inputs/outputs", g->name, index);
    mrt_node *n;
    MRT_TRY(mrt_graph_add_node(g, np->name, np->op_type, np->domain, (int)np->n_input,
                               (const char *const *)np->input, (int)np->n_output, (const char *const *)np->output, &n));
    char what[600];
    for (size_t k = 0; k < np->n_attribute; k++) {
        const Onnx__AttributeProto *ap = np->attribute[k];
        if (!ap) continue;
        const char *an = str_or_empty(ap->name);
        snprintf(what, sizeof what, "node '%s' (%s), attribute '%s'", n->name, n->op_type, an);
        if (!an[0]) return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): attribute %zu has no name", n->name,
                                    n->op_type, k);
        if (mrt_node_attr(n, an)) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s appears twice", what);
        mrt_attr_type type;
        MRT_TRY(attr_type_of(ap, what, &type));
        mrt_attr *a;
        MRT_TRY(mrt_node_add_attr(n, an, type, &a));
        MRT_TRY(fill_attr(c, g, a, ap, what, depth));
    }
    return MRT_STATUS_OK;
}

static mrt_status convert_graph_into(load_ctx *c, const Onnx__GraphProto *gp, mrt_graph *g, int depth)
{
    char what[600];
    mrt_type_info ti;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi || !vi->name || !vi->name[0])
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': input %zu has no name", g->name, i);
        snprintf(what, sizeof what, "graph '%s', input '%s'", g->name, vi->name);
        MRT_TRY(value_info_type(vi, what, &ti));
        mrt_status st = mrt_graph_add_input(g, vi->name, ti.kind == MRT_TYPE_UNKNOWN ? NULL : &ti, NULL);
        mrt_type_info_clear(&ti);
        MRT_TRY(st);
    }
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp || !tp->name || !tp->name[0])
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': initializer %zu has no name", g->name, i);
        snprintf(what, sizeof what, "initializer '%s'", tp->name);
        mrt_tensor t;
        /* the main graph's large raw_data was left out of the parse (strip_raw_data): c->refs has it */
        const raw_ref *r = depth == 0 && !g->parent && i < c->n_refs && c->refs[i].set ? &c->refs[i] : NULL;
        mrt_tensor_load ld = {r != NULL, r ? r->p : NULL, r ? r->len : 0, c->persistent, c->maps, NULL};
        MRT_TRY(mrt_tensor_from_proto_ex(tp, c->base_dir, what, &ld, &t));
        mrt_status st;
        if (ld.weight) {
            st = mrt_graph_set_initializer_mapped(g, tp->name, &t, ld.weight);
            if (st) { /* not taken */
                if (ld.weight->storage == MRT_WEIGHT_COPIED) mrt_weight_copy_free(t.data, ld.weight->nbytes);
                free(ld.weight);
            }
        } else {
            st = mrt_graph_set_initializer(g, tp->name, &t);
            mrt_tensor_release(&t); /* no-op when the graph took it */
        }
        MRT_TRY(st);
    }
    for (size_t i = 0; i < gp->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
        const char *name = sp && sp->values ? sp->values->name : NULL;
        if (!name || !name[0])
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': sparse initializer %zu has no name (values.name)",
                            g->name, i);
        snprintf(what, sizeof what, "sparse initializer '%s'", name);
        mrt_tensor t;
        MRT_TRY(mrt_tensor_from_sparse_proto(sp, c->base_dir, what, &t));
        mrt_status st = mrt_graph_set_initializer(g, name, &t);
        mrt_tensor_release(&t);
        MRT_TRY(st);
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        if (!gp->node[i]) continue;
        MRT_TRY(convert_node(c, g, gp->node[i], i, depth));
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi || !vi->name || !vi->name[0])
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': output %zu has no name", g->name, i);
        snprintf(what, sizeof what, "graph '%s', output '%s'", g->name, vi->name);
        MRT_TRY(value_info_type(vi, what, &ti));
        mrt_status st = mrt_graph_add_output(g, vi->name, &ti, NULL);
        mrt_type_info_clear(&ti);
        MRT_TRY(st);
    }
    /* value_info only annotates values the graph uses; it never creates one (that would invent outer refs) */
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi || !vi->name) continue;
        int idx = mrt_graph_find_value(g, vi->name);
        if (idx < 0 || g->values[idx].type.kind != MRT_TYPE_UNKNOWN) continue;
        snprintf(what, sizeof what, "graph '%s', value_info '%s'", g->name, vi->name);
        MRT_TRY(value_info_type(vi, what, &ti));
        mrt_type_info_clear(&g->values[idx].type);
        g->values[idx].type = ti;
    }
    if (g->parent) {
        /* anything used here but defined by nothing here comes from an enclosing graph */
        for (int i = 0; i < g->n_values; i++) {
            mrt_graph_value *v = &g->values[i];
            if (v->producer < 0 && !v->is_input && !v->initializer) v->is_outer = true;
        }
    }
    return MRT_STATUS_OK;
}

static mrt_status convert_graph(load_ctx *c, const Onnx__GraphProto *gp, const mrt_graph *parent, int depth,
                                mrt_graph **out)
{
    *out = NULL;
    if (depth > MAX_GRAPH_DEPTH)
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph '%s': subgraphs nest more than %d levels deep",
                        str_or_empty(gp->name), MAX_GRAPH_DEPTH);
    mrt_graph *g = mrt_graph_new(gp->name);
    if (!g) return oom("graph");
    g->parent = parent;
    mrt_status st = convert_graph_into(c, gp, g, depth);
    if (st) {
        mrt_graph_free(g);
        return st;
    }
    *out = g;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ functions */

static mrt_status dup_names(char **src, size_t n, char ***dst, int *count, const char *what)
{
    if (n > INT32_MAX) return mrt_fail(MRT_STATUS_INVALID_MODEL, "%s: too many names", what);
    *dst = calloc(n ? n : 1, sizeof(char *));
    if (!*dst) return oom(what);
    *count = (int)n;
    for (size_t i = 0; i < n; i++)
        if (!((*dst)[i] = strdup(str_or_empty(src[i])))) return oom(what);
    return MRT_STATUS_OK;
}

/* FunctionProto.attribute_proto (field 11, defaults for the function's attributes) is newer than the
   onnx.proto compiled here, so protobuf-c keeps it as an unknown field: decode each one as AttributeProto. */
static mrt_status function_attr_defaults(load_ctx *c, const Onnx__FunctionProto *fp, mrt_function *f)
{
    const ProtobufCMessage *base = &fp->base;
    size_t n = 0;
    for (unsigned i = 0; i < base->n_unknown_fields; i++)
        n += base->unknown_fields[i].tag == 11 && base->unknown_fields[i].wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    if (!n) return MRT_STATUS_OK;
    if (!(f->attr_defaults = calloc(n, sizeof *f->attr_defaults))) return oom("function attributes");
    char what[600];
    for (unsigned i = 0; i < base->n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *u = &base->unknown_fields[i];
        if (u->tag != 11 || u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) continue;
        /* protobuf-c stores the length prefix with the payload */
        size_t p = 0, len = 0;
        int shift = 0;
        while (p < u->len && shift < 64) {
            uint8_t b = u->data[p++];
            len |= (size_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (len > u->len - p)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "function '%s': malformed attribute_proto", f->name);
        Onnx__AttributeProto *ap = onnx__attribute_proto__unpack(NULL, len, u->data + p);
        if (!ap) return mrt_fail(MRT_STATUS_INVALID_MODEL, "function '%s': malformed attribute_proto", f->name);
        snprintf(what, sizeof what, "function '%s', attribute default '%s'", f->name, str_or_empty(ap->name));
        mrt_attr *a = &f->attr_defaults[f->n_attr_defaults];
        mrt_attr_type type;
        mrt_status st = attr_type_of(ap, what, &type);
        if (!st && !(a->name = strdup(str_or_empty(ap->name)))) st = oom("function attribute");
        if (!st) {
            f->n_attr_defaults++;
            a->type = type;
            st = fill_attr(c, NULL, a, ap, what, 0);
        }
        onnx__attribute_proto__free_unpacked(ap, NULL);
        MRT_TRY(st);
    }
    return MRT_STATUS_OK;
}

static mrt_status convert_function(load_ctx *c, const Onnx__FunctionProto *fp, mrt_function *f)
{
    if (!fp->name || !fp->name[0]) return mrt_fail(MRT_STATUS_INVALID_MODEL, "a model-local function has no name");
    if (!(f->name = strdup(fp->name)) || !(f->domain = strdup(mrt_domain_normalize(fp->domain))))
        return oom("function");
    MRT_TRY(dup_names(fp->input, fp->n_input, &f->inputs, &f->n_inputs, "function inputs"));
    MRT_TRY(dup_names(fp->output, fp->n_output, &f->outputs, &f->n_outputs, "function outputs"));
    MRT_TRY(dup_names(fp->attribute, fp->n_attribute, &f->attr_names, &f->n_attr_names, "function attributes"));
    if (!(f->opsets = calloc(fp->n_opset_import ? fp->n_opset_import : 1, sizeof *f->opsets)))
        return oom("function opsets");
    for (size_t i = 0; i < fp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = fp->opset_import[i];
        if (!o) continue;
        if (!(f->opsets[f->n_opsets].domain = strdup(mrt_domain_normalize(o->domain)))) return oom("function opsets");
        f->opsets[f->n_opsets++].version = o->has_version ? o->version : 1;
    }
    MRT_TRY(function_attr_defaults(c, fp, f));
    if (!(f->body = mrt_graph_new(fp->name))) return oom("function body");
    /* the body is run like a subgraph: its inputs and outputs are the function's */
    for (int i = 0; i < f->n_inputs; i++) {
        mrt_status st = f->inputs[i][0] ? mrt_graph_add_input(f->body, f->inputs[i], NULL, NULL) : MRT_STATUS_OK;
        if (st) return mrt_fail_prefix(st, "function '%s': ", f->name);
    }
    for (size_t i = 0; i < fp->n_node; i++) {
        if (!fp->node[i]) continue;
        mrt_status st = convert_node(c, f->body, fp->node[i], i, 0);
        if (st) return mrt_fail_prefix(st, "function '%s': ", f->name);
    }
    for (int i = 0; i < f->n_outputs; i++) {
        mrt_status st = mrt_graph_add_output(f->body, f->outputs[i], NULL, NULL);
        if (st) return mrt_fail_prefix(st, "function '%s': ", f->name);
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_function_parse(const void *bytes, size_t len, mrt_function *out)
{
    memset(out, 0, sizeof *out);
    MRT_TRY(mrt_proto_check_nesting(&onnx__function_proto__descriptor, bytes, len));
    Onnx__FunctionProto *fp = onnx__function_proto__unpack(NULL, len, bytes);
    if (!fp) return mrt_fail(MRT_STATUS_INVALID_MODEL, "not a valid FunctionProto (protobuf parse failed)");
    load_ctx c = {NULL};
    mrt_status st = convert_function(&c, fp, out);
    onnx__function_proto__free_unpacked(fp, NULL);
    if (st) mrt_function_clear(out);
    return st;
}

/* ------------------------------------------------------------------ models */

static mrt_status convert_model(load_ctx *c, const Onnx__ModelProto *mp, mrt_model *m)
{
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    if (!(m->producer_name = strdup(str_or_empty(mp->producer_name)))) return oom("model");
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        if (!o) continue;
        if (!o->has_version)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "opset import for domain '%s' has no version",
                            str_or_empty(o->domain));
        MRT_TRY(mrt_model_set_opset(m, o->domain, o->version));
    }
    if (mp->n_functions) {
        if (mp->n_functions > INT32_MAX) return mrt_fail(MRT_STATUS_INVALID_MODEL, "too many functions");
        if (!(m->functions = calloc(mp->n_functions, sizeof *m->functions))) return oom("functions");
        for (size_t i = 0; i < mp->n_functions; i++) {
            if (!mp->functions[i]) continue;
            m->n_functions++; /* counted first so mrt_model_free releases a partial function */
            MRT_TRY(convert_function(c, mp->functions[i], &m->functions[m->n_functions - 1]));
        }
    }
    if (!mp->graph) return mrt_fail(MRT_STATUS_INVALID_MODEL, "the model has no graph");
    return convert_graph(c, mp->graph, NULL, 0, &m->graph);
}

/* ------------------------------------------------------------------ raw_data without copies */

/* protobuf-c copies every bytes field out of the buffer it parses: a model's weights would be held twice (the file,
   the parsed raw_data) before conversion even starts. strip_raw_data writes the model's bytes again without the
   main graph's large raw_data fields (ModelProto.graph = 7 -> GraphProto.initializer = 5 -> TensorProto.raw_data
   = 9; the enclosing lengths re-encoded) and records where each one is in the original, so that the converter reads
   it there (in place from a mapping, or copied once). Anything unexpected (the graph field twice, raw_data twice in
   one tensor, a wire type other than length-delimited, a truncated field) gives up: the original bytes are parsed as
   before and protobuf-c judges them. Small raw_data stays in the proto (copying it costs nothing). */
#define STRIP_MIN_BYTES 64

static uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

typedef struct strip_state {
    raw_ref *refs;
    size_t n_refs, cap_refs;
    size_t stripped;
} strip_state;

/* A TensorProto's fields without a large raw_data, written at o (at most blen bytes); NULL when giving up. */
static uint8_t *strip_tensor(strip_state *s, const uint8_t *b, size_t blen, uint8_t *o)
{
    mrt_wire w = {b, b + blen};
    raw_ref ref = {NULL, 0, false};
    bool seen_raw = false;
    while (w.p < w.end) {
        const uint8_t *start = w.p, *body;
        uint64_t tag, ival;
        size_t len;
        if (!mrt_wire_field(&w, &tag, &ival, &body, &len)) return NULL;
        if (tag >> 3 == 9) {
            if (seen_raw || (tag & 7) != 2) return NULL;
            seen_raw = true;
            if (len >= STRIP_MIN_BYTES) {
                ref = (raw_ref){body, len, true};
                continue;
            }
        }
        memcpy(o, start, (size_t)(w.p - start));
        o += w.p - start;
    }
    if (s->n_refs == s->cap_refs) {
        size_t cap = s->cap_refs ? 2 * s->cap_refs : 64;
        raw_ref *r = realloc(s->refs, cap * sizeof *r);
        if (!r) return NULL;
        s->refs = r;
        s->cap_refs = cap;
    }
    s->refs[s->n_refs++] = ref;
    s->stripped += ref.set;
    return o;
}

/* A GraphProto's fields with its initializers stripped, at o; NULL when giving up. */
static uint8_t *strip_graph(strip_state *s, const uint8_t *b, size_t blen, uint8_t *o, uint8_t *scratch)
{
    mrt_wire w = {b, b + blen};
    while (w.p < w.end) {
        const uint8_t *start = w.p, *body;
        uint64_t tag, ival;
        size_t len;
        if (!mrt_wire_field(&w, &tag, &ival, &body, &len)) return NULL;
        if (tag >> 3 == 5 && (tag & 7) == 2) {
            uint8_t *e = strip_tensor(s, body, len, scratch);
            if (!e) return NULL;
            o = put_varint(o, tag);
            o = put_varint(o, (uint64_t)(e - scratch));
            memcpy(o, scratch, (size_t)(e - scratch));
            o += e - scratch;
            continue;
        }
        memcpy(o, start, (size_t)(w.p - start));
        o += w.p - start;
    }
    return o;
}

/* The model's bytes without its large raw_data (malloc'd, *out_len) and where each was; false when there is
   nothing to strip or the bytes are not as expected (then parse the original). */
static bool strip_raw_data(const uint8_t *b, size_t len, uint8_t **out, size_t *out_len, raw_ref **refs,
                           size_t *n_refs)
{
    *out = NULL;
    *refs = NULL;
    *n_refs = 0;
    mrt_wire w = {b, b + len};
    const uint8_t *graph = NULL;
    size_t graph_len = 0;
    while (w.p < w.end) { /* find the one graph field */
        const uint8_t *body;
        uint64_t tag, ival;
        size_t blen;
        if (!mrt_wire_field(&w, &tag, &ival, &body, &blen)) return false;
        if (tag >> 3 == 7) {
            if (graph || (tag & 7) != 2) return false;
            graph = body;
            graph_len = blen;
        }
    }
    if (!graph) return false;
    /* the output never grows (fields only go, lengths only shrink); pages not written are never touched */
    uint8_t *o = malloc(len ? len : 1), *inner = malloc(graph_len ? graph_len : 1), *scratch = malloc(graph_len ? graph_len : 1);
    strip_state s = {0};
    bool ok = o && inner && scratch;
    uint8_t *gend = ok ? strip_graph(&s, graph, graph_len, inner, scratch) : NULL;
    ok = gend && s.stripped > 0;
    uint8_t *e = o;
    w = (mrt_wire){b, b + len};
    while (ok && w.p < w.end) {
        const uint8_t *start = w.p, *body;
        uint64_t tag, ival;
        size_t blen;
        mrt_wire_field(&w, &tag, &ival, &body, &blen); /* walked once already */
        if (tag >> 3 == 7) {
            size_t n = (size_t)(gend - inner);
            if (varint_len(tag) + varint_len(n) + n > (size_t)(w.p - start)) ok = false; /* cannot grow */
            e = put_varint(e, tag);
            e = put_varint(e, n);
            memcpy(e, inner, n);
            e += n;
            continue;
        }
        memcpy(e, start, (size_t)(w.p - start));
        e += w.p - start;
    }
    free(inner);
    free(scratch);
    if (!ok) {
        free(o);
        free(s.refs);
        return false;
    }
    *out = o;
    *out_len = (size_t)(e - o);
    *refs = s.refs;
    *n_refs = s.n_refs;
    return true;
}

/* Parse, validate and convert. `maps`: the model's mapping list (external data goes on it too), or NULL;
   `persistent`: `bytes` lie in one of those mappings and outlive the model. */
static mrt_status load_model_bytes(const void *bytes, size_t len, const char *base_dir, mrt_mapping **maps,
                                   bool persistent, mrt_model **out)
{
    MRT_TRY(mrt_proto_check_nesting(&onnx__model_proto__descriptor, bytes, len));
    uint8_t *stripped;
    size_t stripped_len = 0;
    raw_ref *refs;
    size_t n_refs;
    bool strip = strip_raw_data(bytes, len, &stripped, &stripped_len, &refs, &n_refs);
    Onnx__ModelProto *mp = strip ? onnx__model_proto__unpack(NULL, stripped_len, stripped)
                                 : onnx__model_proto__unpack(NULL, len, bytes);
    free(stripped); /* protobuf-c copied what it keeps */
    if (!mp) {
        free(refs);
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "not a valid ONNX model (protobuf parse failed)");
    }
    if (strip && (!mp->graph || mp->graph->n_initializer != n_refs)) { /* cannot happen: the walk saw them all */
        free(refs);
        onnx__model_proto__free_unpacked(mp, NULL);
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "internal error: the model's initializers were miscounted");
    }
    /* onnx.checker's rules first (loader/validate.c): the first refused problem is the error */
    mrt_problems problems = {0};
    mrt_status vst = mrt_validate_model_proto(mp, &problems);
    if (!vst && problems.n_refused) {
        const mrt_problem *first = NULL;
        for (int i = 0; i < problems.n && !first; i++)
            if (!problems.items[i].runs) first = &problems.items[i];
        int more = problems.n_refused - 1;
        if (more)
            vst = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s (and %d more problem%s: `minirt check` lists them)",
                           first ? first->message : "?", more, more > 1 ? "s" : "");
        else
            vst = mrt_fail(MRT_STATUS_INVALID_MODEL, "%s", first ? first->message : "?");
    }
    mrt_problems_free(&problems);
    if (vst) {
        free(refs);
        onnx__model_proto__free_unpacked(mp, NULL);
        return vst;
    }
    /* the pages read to parse (and their neighbours, mapped with them) leave the resident set: the initializers'
       pages come back one tensor at a time as they are copied or read */
    if (persistent) mrt_mapping_drop_pages(bytes, len);
    mrt_model *m = mrt_model_new();
    mrt_status st = m ? MRT_STATUS_OK : oom("model");
    load_ctx c = {base_dir, maps, persistent, refs, strip ? n_refs : 0};
    if (!st) st = convert_model(&c, mp, m);
    onnx__model_proto__free_unpacked(mp, NULL); /* as soon as the graph is built */
    free(refs);
    if (st) {
        mrt_model_free(m);
        return st;
    }
    *out = m;
    return MRT_STATUS_OK;
}

mrt_status mrt_model_load_from_memory(const void *bytes, size_t len, const char *base_dir, mrt_model **out)
{
    if (!out) return mrt_fail(MRT_STATUS_INVALID_ARG, "mrt_model_load_from_memory: out is NULL");
    *out = NULL;
    if (!bytes && len) return mrt_fail(MRT_STATUS_INVALID_ARG, "mrt_model_load_from_memory: bytes is NULL");
    /* the caller's bytes may go after this call: initializers copy theirs; external data is mapped by the model */
    mrt_mapping *maps = NULL;
    mrt_status st = load_model_bytes(bytes, len, base_dir, &maps, false, out);
    if (st) mrt_mappings_free(maps);
    else (*out)->mappings = maps;
    return st;
}

mrt_status mrt_model_load(const char *path, mrt_model **out)
{
    if (!out) return mrt_fail(MRT_STATUS_INVALID_ARG, "mrt_model_load: out is NULL");
    *out = NULL;
    if (!path) return mrt_fail(MRT_STATUS_INVALID_ARG, "mrt_model_load: path is NULL");
    /* mapped read-only: initializers borrow their bytes from it (docs/memory.md, "Weights") */
    mrt_mapping *maps = NULL;
    const uint8_t *bytes;
    size_t len;
    mrt_status st = mrt_mapping_open(path, &maps, &bytes, &len);
    if (st) return st;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    st = dir ? load_model_bytes(bytes, len, dir, &maps, true, out) : oom("path");
    free(dir);
    if (!st && *out) {
        (*out)->mappings = maps;
    } else {
        mrt_mappings_free(maps);
    }
    if (st) return mrt_fail_prefix(st, "loading '%s': ", path);
    if (!((*out)->path = strdup(path))) {
        mrt_model_free(*out);
        *out = NULL;
        return oom("model path");
    }
    return MRT_STATUS_OK;
}
