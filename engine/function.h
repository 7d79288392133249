/* ONNX functions (see function.c): model-local ones (FunctionProto in the model) and the standard's own
 * function bodies (engine/std_functions.c), which run an op minirt has no kernel for. */
#pragma once

#include "engine/registry.h"

const mrt_function *mrt_model_find_function(const mrt_model *m, const char *domain, const char *name);
/* The function's own opset import for `domain`, or -1. */
int64_t mrt_function_opset(const mrt_function *f, const char *domain);
/* NULL when the body node refers to no caller attribute; else a shallow copy to hand to kernels. */
mrt_status mrt_function_shadow_node(const mrt_node *node, const mrt_node *caller, const mrt_function *f,
                                    mrt_node **shadow);
void mrt_function_free_shadow(mrt_node *shadow);

/* The function that defines node `nd` at `opset`: the model's own of that name, else the standard's body
   (parsed once per session); *out = NULL when there is none. */
mrt_status mrt_function_for_node(mrt_session *s, const mrt_node *nd, int64_t opset, const mrt_function **out);
/* Whether the session was asked to run `op_type` through its function body even where a kernel exists. */
bool mrt_session_expands(const mrt_session *s, const char *op_type);
void mrt_session_free_std_functions(mrt_session *s);
/* Fails, listing the ops that have one, when an op named in an expand_functions list has no function body. */
mrt_status mrt_expand_list_check(const mrt_model *m, const char *list);

/* The opdef and kernel every function call resolves to. */
extern const mrt_opdef mrt_function_opdef;
extern const mrt_kernel mrt_function_kernel;

/* One version of a standard op whose ONNX schema defines a fixed function body (generated table,
   engine/std_functions.c). `body` is a serialized FunctionProto drawing its ops from opset
   `function_opset`; NULL for a version the standard gives no body. */
typedef struct mrt_std_function {
    const char *domain;
    const char *op_type;
    int since_version;
    int function_opset;
    const unsigned char *body;
    size_t body_len;
} mrt_std_function;

extern const mrt_std_function mrt_std_functions[];
extern const int mrt_n_std_functions;

/* The body that defines (domain, op_type) at `opset`, or NULL when the governing version has none. */
const mrt_std_function *mrt_std_function_find(const char *domain, const char *op_type, int64_t opset);
/* Parse a serialized FunctionProto (loader/onnx_load.c). On success *out owns what it holds. */
mrt_status mrt_function_parse(const void *bytes, size_t len, mrt_function *out);
/* Free what a parsed function holds (not the struct itself). */
void mrt_function_clear(mrt_function *f);
