/* Opdefs for sequence and optional values: SequenceConstruct/Empty/At/Insert/Erase/Length, ConcatFromSequence,
   SplitToSequence, Optional, OptionalHasElement, OptionalGetElement. Sequences are sized at run time. */
#include "engine/registry.h"

static mrt_status infer_by_kernel(mrt_op_ctx *ctx) { return mrt_infer_dynamic(ctx); }

static mrt_status infer_length(mrt_op_ctx *ctx) { return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, 0, NULL); }

static mrt_status infer_has_element(mrt_op_ctx *ctx) { return mrt_output_set(ctx, 0, MRT_DTYPE_BOOL, 0, NULL); }

const mrt_opdef mrt_opdefs_sequence[] = {
    {"", "SequenceConstruct", 11, 1, -1, 1, 1, infer_by_kernel, 0},
    {"", "SequenceEmpty", 11, 0, 0, 1, 1, infer_by_kernel, 0},
    {"", "SequenceAt", 11, 2, 2, 1, 1, infer_by_kernel, 0},
    {"", "SequenceInsert", 11, 2, 3, 1, 1, infer_by_kernel, 0},
    {"", "SequenceErase", 11, 1, 2, 1, 1, infer_by_kernel, 0},
    {"", "SequenceLength", 11, 1, 1, 1, 1, infer_length, 0},
    {"", "ConcatFromSequence", 11, 1, 1, 1, 1, infer_by_kernel, 0},
    {"", "SplitToSequence", 11, 1, 2, 1, 1, infer_by_kernel, 0},
    {"", "SplitToSequence", 24, 1, 2, 1, 1, infer_by_kernel, 0},
    {"", "Optional", 15, 0, 1, 1, 1, infer_by_kernel, 0},
    {"", "OptionalHasElement", 15, 0, 1, 1, 1, infer_has_element, 0},
    {"", "OptionalHasElement", 18, 0, 1, 1, 1, infer_has_element, 0},
    {"", "OptionalGetElement", 15, 1, 1, 1, 1, infer_by_kernel, 0},
    {"", "OptionalGetElement", 18, 1, 1, 1, 1, infer_by_kernel, 0},
    {0},
};
