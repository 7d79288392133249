/* Opdefs for string ops: StringNormalizer (10), StringConcat (20), StringSplit (20), RegexFullMatch (20). */
#include <string.h>

#include "engine/registry.h"

static mrt_status need_strings(mrt_op_ctx *ctx, int i)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    if (!t || t->dtype != MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d must be a string tensor, got %s", i,
                           t ? mrt_dtype_name(t->dtype) : "nothing");
    return MRT_STATUS_OK;
}

static mrt_status infer_normalizer(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (x->rank != 1 && !(x->rank == 2 && x->shape[0] == 1))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X must be [C] or [1, C], got rank %d", x->rank);
    const char *action = mrt_attr_string(ctx, "case_change_action", "NONE");
    if (strcmp(action, "NONE") && strcmp(action, "LOWER") && strcmp(action, "UPPER"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "case_change_action '%s' is not NONE, LOWER or UPPER", action);
    return mrt_infer_dynamic(ctx); /* stopwords remove a data-dependent number of elements */
}

static mrt_status infer_concat(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    MRT_TRY(need_strings(ctx, 1));
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    int rank;
    int64_t shape[MRT_MAX_RANK];
    MRT_TRY(mrt_broadcast_shapes(ctx, a->rank, a->shape, b->rank, b->shape, &rank, shape));
    return mrt_output_set(ctx, 0, MRT_DTYPE_STRING, rank, shape);
}

static mrt_status infer_split(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    const mrt_tensor *x = mrt_input(ctx, 0);
    MRT_TRY(mrt_output_set(ctx, 1, MRT_DTYPE_INT64, x->rank, x->shape));
    return mrt_infer_dynamic(ctx); /* the padded width depends on the data */
}

static mrt_status infer_regex(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    if (!mrt_attr_string(ctx, "pattern", NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'pattern' is required");
    const mrt_tensor *x = mrt_input(ctx, 0);
    return mrt_output_set(ctx, 0, MRT_DTYPE_BOOL, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_text[] = {
    {"", "StringNormalizer", 10, 1, 1, 1, 1, infer_normalizer, 0},
    {"", "StringConcat", 20, 2, 2, 1, 1, infer_concat, 0},
    {"", "StringSplit", 20, 1, 1, 2, 2, infer_split, 0},
    {"", "RegexFullMatch", 20, 1, 1, 1, 1, infer_regex, 0},
    {0},
};
