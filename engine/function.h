/* Model-local functions (see function.c). */
#pragma once

#include "engine/registry.h"

const mrt_function *mrt_model_find_function(const mrt_model *m, const char *domain, const char *name);
/* The function's own opset import for `domain`, or -1. */
int64_t mrt_function_opset(const mrt_function *f, const char *domain);
/* NULL when the body node refers to no caller attribute; else a shallow copy to hand to kernels. */
mrt_status mrt_function_shadow_node(const mrt_node *node, const mrt_node *caller, const mrt_function *f,
                                    mrt_node **shadow);
void mrt_function_free_shadow(mrt_node *shadow);

/* The opdef and kernel every call of a model-local function resolves to. */
extern const mrt_opdef mrt_function_opdef;
extern const mrt_kernel mrt_function_kernel;
