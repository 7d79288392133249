/* The ONNX domains' op schemas (generated into engine/onnx_schemas.c by scripts/gen_onnx_schemas.py from the same
 * onnx release as engine/std_functions.c): what onnx.checker verifies a node against. Kernels and infer live in
 * the operator table (engine/registry.h); this is only the standard's contract, for loader/validate.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct mrt_schema_attr {
    const char *name;
    int type;      /* mrt_attr_type (AttributeProto.AttributeType) */
    int required;
} mrt_schema_attr;

typedef struct mrt_schema {
    const char *domain; /* "" for ai.onnx */
    const char *op;
    int since_version;
    int min_inputs, max_inputs, min_outputs, max_outputs; /* max INT32_MAX: variadic */
    int deprecated;
    int n_attrs;
    const mrt_schema_attr *attrs; /* sorted by name */
} mrt_schema;

/* The schema that governs `op` of `domain` at `opset` (newest since_version <= opset), or NULL. */
const mrt_schema *mrt_schema_find(const char *domain, const char *op, int64_t opset);
/* The newest opset the table knows for an ONNX domain, or -1 for a domain that is not ONNX's. */
int64_t mrt_schema_newest_opset(const char *domain);
bool mrt_schema_domain_is_onnx(const char *domain);
extern const int mrt_schema_count;
const mrt_schema *mrt_schema_at(int i);
