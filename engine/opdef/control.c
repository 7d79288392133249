/* Opdefs for control flow with subgraphs: If, Loop, Scan, SequenceMap. Their outputs depend on running a body
   graph, so they are always sized at run time by the kernel. */
#include "engine/registry.h"

static mrt_status infer_by_kernel(mrt_op_ctx *ctx)
{
    static const char *const graph_attrs[] = {"then_branch", "else_branch", "body"};
    bool needs_body = false;
    for (size_t i = 0; i < sizeof graph_attrs / sizeof graph_attrs[0]; i++) {
        const mrt_attr *a = mrt_node_attr(ctx->node, graph_attrs[i]);
        if (a && (a->type != MRT_ATTR_GRAPH || !a->g))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' must be a graph", graph_attrs[i]);
        needs_body |= a != NULL;
    }
    if (!needs_body) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "has no subgraph attribute");
    return mrt_infer_dynamic(ctx);
}

#define SUB MRT_OPDEF_HAS_SUBGRAPH
const mrt_opdef mrt_opdefs_control[] = {
    {"", "If", 1, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 11, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 13, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 16, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 19, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 21, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "If", 23, 1, 1, 1, -1, infer_by_kernel, SUB},
    {"", "Loop", 1, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 11, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 13, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 16, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 19, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 21, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Loop", 23, 2, -1, 1, -1, infer_by_kernel, SUB | MRT_OPDEF_OPTIONAL_LEADING},
    {"", "Scan", 8, 0, -1, 1, -1, infer_by_kernel, SUB}, /* input 0 (sequence_lens) may be ""; the kernel checks the count */
    {"", "Scan", 9, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "Scan", 11, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "Scan", 16, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "Scan", 19, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "Scan", 21, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "Scan", 23, 1, -1, 1, -1, infer_by_kernel, SUB},
    {"", "SequenceMap", 17, 1, -1, 1, -1, infer_by_kernel, SUB},
    {0},
};
