/* Opdefs of Cast 1-25 (opset 1's string 'to' included) and CastLike 15-25: every numeric type, bool and string;
 * complex types are refused (NOT_IMPLEMENTED). */
#include <string.h>
#include <strings.h>

#include "engine/registry.h"

static bool castable(mrt_dtype dt)
{
    return mrt_dtype_is_known((int)dt) && dt != MRT_DTYPE_COMPLEX64 && dt != MRT_DTYPE_COMPLEX128;
}

/* Opset 1 spelled 'to' as a TensorProto.DataType name. */
static int dtype_from_name(const char *s)
{
    static const struct { const char *name; mrt_dtype dt; } names[] = {
        {"FLOAT", MRT_DTYPE_FLOAT},   {"UINT8", MRT_DTYPE_UINT8},     {"INT8", MRT_DTYPE_INT8},
        {"UINT16", MRT_DTYPE_UINT16}, {"INT16", MRT_DTYPE_INT16},     {"INT32", MRT_DTYPE_INT32},
        {"INT64", MRT_DTYPE_INT64},   {"STRING", MRT_DTYPE_STRING},   {"BOOL", MRT_DTYPE_BOOL},
        {"FLOAT16", MRT_DTYPE_FLOAT16}, {"DOUBLE", MRT_DTYPE_DOUBLE}, {"UINT32", MRT_DTYPE_UINT32},
        {"UINT64", MRT_DTYPE_UINT64}, {"BFLOAT16", MRT_DTYPE_BFLOAT16},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) return names[i].dt;
    return -1;
}

static mrt_status check_source(mrt_op_ctx *ctx, const mrt_tensor **x)
{
    *x = mrt_input(ctx, 0);
    if (!*x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 ('input') must be a tensor");
    if (!castable((*x)->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "casting from %s is not supported",
                           mrt_dtype_name((*x)->dtype));
    return MRT_STATUS_OK;
}

static mrt_status infer_cast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(check_source(ctx, &x));
    const mrt_attr *a = mrt_node_attr(ctx->node, "to");
    int64_t to;
    if (!a) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'to' is required");
    if (a->type == MRT_ATTR_INT) {
        to = a->i;
    } else if (a->type == MRT_ATTR_STRING) {
        to = dtype_from_name(a->s);
        if (to < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'to' names unknown type '%s'", a->s);
    } else {
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'to' has type %s", mrt_attr_type_name(a->type));
    }
    if (to <= 0 || to >= MRT_DTYPE_COUNT_ || !castable((mrt_dtype)to))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "casting to data type %lld (%s) is not supported",
                           (long long)to, mrt_dtype_name((mrt_dtype)to));
    const char *rm = mrt_attr_string(ctx, "round_mode", "up");
    if (strcmp(rm, "up") != 0 && strcmp(rm, "down") != 0 && strcmp(rm, "nearest") != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "round_mode '%s' is not one of up, down, nearest", rm);
    return mrt_output_set(ctx, 0, (mrt_dtype)to, x->rank, x->shape);
}

static mrt_status infer_cast_like(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *like = mrt_input(ctx, 1);
    MRT_TRY(check_source(ctx, &x));
    if (!like) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 1 ('target_type') must be a tensor");
    if (!castable(like->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "casting to %s is not supported",
                           mrt_dtype_name(like->dtype));
    return mrt_output_set(ctx, 0, like->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_cast[] = {
    {"", "Cast", 1, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 6, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 9, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 13, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 19, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 21, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 23, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 24, 1, 1, 1, 1, infer_cast, 0},
    {"", "Cast", 25, 1, 1, 1, 1, infer_cast, 0},
    {"", "CastLike", 15, 2, 2, 1, 1, infer_cast_like, 0},
    {"", "CastLike", 19, 2, 2, 1, 1, infer_cast_like, 0},
    {"", "CastLike", 21, 2, 2, 1, 1, infer_cast_like, 0},
    {"", "CastLike", 23, 2, 2, 1, 1, infer_cast_like, 0},
    {"", "CastLike", 24, 2, 2, 1, 1, infer_cast_like, 0},
    {"", "CastLike", 25, 2, 2, 1, 1, infer_cast_like, 0},
    {0},
};
