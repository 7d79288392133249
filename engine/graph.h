/* The in-memory model: graph, nodes, values, typed attributes. Built by loader/onnx_load.c or by hand
 * (tests) with the mrt_graph_* builders below. Everything here is owned by its graph/model. */
#pragma once

#include "minirt/minirt.h"
#include "engine/strmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX AttributeProto.AttributeType numbers. */
typedef enum mrt_attr_type {
    MRT_ATTR_UNDEFINED = 0,
    MRT_ATTR_FLOAT = 1,
    MRT_ATTR_INT = 2,
    MRT_ATTR_STRING = 3,
    MRT_ATTR_TENSOR = 4,
    MRT_ATTR_GRAPH = 5,
    MRT_ATTR_FLOATS = 6,
    MRT_ATTR_INTS = 7,
    MRT_ATTR_STRINGS = 8,
    MRT_ATTR_TENSORS = 9,
    MRT_ATTR_GRAPHS = 10,
    MRT_ATTR_SPARSE_TENSOR = 11,
    MRT_ATTR_SPARSE_TENSORS = 12,
    MRT_ATTR_TYPE_PROTO = 13,
    MRT_ATTR_TYPE_PROTOS = 14,
} mrt_attr_type;

typedef struct mrt_graph mrt_graph;

typedef struct mrt_attr {
    char *name;
    mrt_attr_type type;
    char *ref_attr_name; /* inside function bodies: the attribute refers to the caller's attribute */
    float f;
    int64_t i;
    char *s;            /* STRING: NUL-terminated copy; s_len holds the byte length */
    size_t s_len;
    mrt_tensor *t;      /* TENSOR: owned */
    mrt_graph *g;       /* GRAPH: owned */
    int64_t n;          /* element count of the list below that matches `type` */
    float *floats;
    int64_t *ints;
    char **strings;
    mrt_tensor *tensors;
    mrt_graph **graphs;
} mrt_attr;

typedef enum mrt_type_kind {
    MRT_TYPE_UNKNOWN = 0,
    MRT_TYPE_TENSOR,
    MRT_TYPE_SEQUENCE,
    MRT_TYPE_OPTIONAL,
    MRT_TYPE_SPARSE_TENSOR,
    MRT_TYPE_MAP,
} mrt_type_kind;

/* A declared type (ValueInfoProto). rank -1 = unknown; dims[i] -1 = unknown (dim_params[i] may name it). */
typedef struct mrt_type_info {
    mrt_type_kind kind;
    mrt_dtype elem_type;          /* TENSOR: element type */
    int rank;
    int64_t dims[MRT_MAX_RANK];
    char *dim_params[MRT_MAX_RANK];
    struct mrt_type_info *elem;   /* SEQUENCE/OPTIONAL: the element's type (owned) */
} mrt_type_info;

/* Where an initializer's bytes live (docs/memory.md, "Weights"). The loader borrows them from the model file's
   read-only mapping when they are usable in place, else copies them once into an aligned buffer; plans hold them
   while they may read them (engine/weights.c) and let go of the ones a kernel packed, so that the model's weights
   are resident once (packed or not), not twice. */
typedef enum mrt_weight_storage {
    MRT_WEIGHT_MAPPED = 1, /* tensor data points into the mapping: dropping = madvise(DONTNEED), data stays valid */
    MRT_WEIGHT_COPIED = 2, /* an aligned copy of mapped bytes (misaligned, big-endian, bool): dropping frees it and
                              sets data NULL; the next hold copies the mapped bytes again */
} mrt_weight_storage;

typedef struct mrt_weight_src {
    mrt_weight_storage storage;
    const uint8_t *bytes;  /* the tensor's bytes in the mapping (little-endian, as in the file) */
    size_t nbytes;
    int holds;             /* plans that may read the data now (guarded by engine/weights.c's lock) */
    bool dropped;          /* COPIED: freed until the next hold */
} mrt_weight_src;

typedef struct mrt_graph_value {
    char *name;
    mrt_type_info type;           /* from graph input/output/value_info; kind UNKNOWN if not declared */
    int producer;                 /* index of the producing node in its graph, -1 if none */
    bool is_input;                /* graph input */
    bool is_output;               /* graph output */
    bool is_outer;                /* referenced inside a subgraph but defined in an enclosing graph */
    mrt_tensor *initializer;      /* owned, or NULL */
    mrt_weight_src *weight;       /* the initializer's bytes come from the model's mapping (owned), or NULL: its data
                                     is owned (mrt_tensor_alloc) and always present */
} mrt_graph_value;

struct mrt_node {
    char *name;                   /* never NULL; loader invents "<op>_<index>" for unnamed nodes */
    char *op_type;
    char *domain;                 /* "" for the ONNX default domain ("ai.onnx" is normalised to "") */
    int n_inputs;
    int *inputs;                  /* value indices; -1 = omitted optional input (empty name) */
    int n_outputs;
    int *outputs;                 /* value indices; -1 = omitted optional output */
    int n_attrs;
    mrt_attr *attrs;
};

struct mrt_graph {
    char *name;
    int n_values, cap_values;
    mrt_graph_value *values;
    mrt_strmap value_index;       /* name -> index into values */
    int n_nodes, cap_nodes;
    mrt_node *nodes;
    int n_inputs;
    int *inputs;                  /* graph inputs in order (including ones backed by initializers) */
    int n_outputs;
    int *outputs;
    const mrt_graph *parent;      /* enclosing graph for subgraphs, NULL at the top */
};

typedef struct mrt_opset {
    char *domain;                 /* "" for ai.onnx */
    int64_t version;
} mrt_opset;

/* A model-local function (FunctionProto): a named op whose body is a graph of other ops. */
typedef struct mrt_function {
    char *domain;
    char *name;
    int n_inputs;
    char **inputs;
    int n_outputs;
    char **outputs;
    int n_attr_names;
    char **attr_names;
    mrt_attr *attr_defaults;      /* attribute_proto defaults, n_attr_defaults of them */
    int n_attr_defaults;
    mrt_graph *body;              /* nodes only; inputs/outputs named as above */
    int n_opsets;
    mrt_opset *opsets;
} mrt_function;

struct mrt_model {
    mrt_graph *graph;
    int n_opsets;
    mrt_opset *opsets;
    int64_t ir_version;
    char *producer_name;
    char *path;                   /* file the model came from, or NULL */
    int n_functions;
    mrt_function *functions;
    struct mrt_mapping *mappings; /* the model file and external-data files, mapped read-only (engine/weights.c) */
};

/* Opset version the model imports for `domain` ("" and "ai.onnx" are the same), or -1. */
int64_t mrt_model_opset(const mrt_model *m, const char *domain);
/* Normalise a domain name: NULL and "ai.onnx" become "". Returns a borrowed string. */
const char *mrt_domain_normalize(const char *domain);

/* --------------------------------------------------------------- builders */

mrt_graph *mrt_graph_new(const char *name);
void mrt_graph_free(mrt_graph *g);
mrt_model *mrt_model_new(void);
/* Add (or update) an opset import. */
mrt_status mrt_model_set_opset(mrt_model *m, const char *domain, int64_t version);

/* Index of the value called `name`, creating it if absent. Fails only on OOM. */
mrt_status mrt_graph_value_get(mrt_graph *g, const char *name, int *index);
/* Index of `name` or -1 (this graph only). */
int mrt_graph_find_value(const mrt_graph *g, const char *name);

/* Declare a graph input/output with an optional declared type (NULL = unknown). */
mrt_status mrt_graph_add_input(mrt_graph *g, const char *name, const mrt_type_info *type, int *index);
mrt_status mrt_graph_add_output(mrt_graph *g, const char *name, const mrt_type_info *type, int *index);
/* Attach an initializer; the graph takes ownership of *t (its data must come from mrt_tensor_alloc). */
mrt_status mrt_graph_set_initializer(mrt_graph *g, const char *name, mrt_tensor *t);
/* The same for a tensor whose bytes come from the model's mapping (`w`, malloc'd, taken too): t->data points into
   the mapping (MAPPED) or is an aligned_alloc'd copy (COPIED). */
mrt_status mrt_graph_set_initializer_mapped(mrt_graph *g, const char *name, mrt_tensor *t, mrt_weight_src *w);

/* Append a node; input/output names may be "" or NULL for omitted optionals. Returns a pointer that is
   valid until the next mrt_graph_add_node on this graph. */
mrt_status mrt_graph_add_node(mrt_graph *g, const char *name, const char *op_type, const char *domain,
                              int n_inputs, const char *const *inputs, int n_outputs,
                              const char *const *outputs, mrt_node **out);

/* Attribute builders (copy their arguments). */
mrt_status mrt_node_add_attr_int(mrt_node *n, const char *name, int64_t v);
mrt_status mrt_node_add_attr_float(mrt_node *n, const char *name, float v);
mrt_status mrt_node_add_attr_string(mrt_node *n, const char *name, const char *v);
mrt_status mrt_node_add_attr_ints(mrt_node *n, const char *name, int64_t count, const int64_t *v);
mrt_status mrt_node_add_attr_floats(mrt_node *n, const char *name, int64_t count, const float *v);
mrt_status mrt_node_add_attr_strings(mrt_node *n, const char *name, int64_t count, const char *const *v);
mrt_status mrt_node_add_attr_tensor(mrt_node *n, const char *name, const mrt_tensor *t); /* deep copy */
/* Takes ownership of g. */
mrt_status mrt_node_add_attr_graph(mrt_node *n, const char *name, mrt_graph *g);
/* Append a zero-initialised attribute for the loader to fill; the pointer is valid until the next add. */
mrt_status mrt_node_add_attr(mrt_node *n, const char *name, mrt_attr_type type, mrt_attr **out);

void mrt_attr_clear(mrt_attr *a);
void mrt_type_info_clear(mrt_type_info *t);
mrt_status mrt_type_info_copy(mrt_type_info *dst, const mrt_type_info *src);

/* --------------------------------------------------------------- attribute getters */

/* NULL if the node has no attribute of that name. */
const mrt_attr *mrt_node_attr(const mrt_node *n, const char *name);
const char *mrt_attr_type_name(mrt_attr_type t);

#ifdef __cplusplus
}
#endif
