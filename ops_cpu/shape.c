/* CPU kernels of Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Expand, Identity (tensor/sequence/optional),
 * Constant (no sparse_value), ConstantOfShape, Range, EyeLike: every dtype the spec allows; data is moved, never
 * converted. */
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"
#include "ops_cpu/movement.h"

static mrt_status mrt_cpu_shape(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t start, end;
    mrt_shape_window(ctx, x->rank, &start, &end);
    for (int64_t i = start; i < end; i++) ((int64_t *)y->data)[i - start] = x->shape[i];
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_size(mrt_op_ctx *ctx)
{
    *(int64_t *)mrt_output(ctx, 0)->data = mrt_tensor_numel(mrt_input(ctx, 0));
    return MRT_STATUS_OK;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: same elements, new shape (declared by infer). */
static mrt_status mrt_cpu_reshape(mrt_op_ctx *ctx)
{
    return mrt_mover_copy_all(ctx, mrt_output(ctx, 0), mrt_input(ctx, 0));
}

/* y = x broadcast to y's shape (numpy rules; infer checked compatibility). */
static mrt_status broadcast_copy(const mrt_op_ctx *ctx, mrt_tensor *y, const mrt_tensor *x)
{
    int r = y->rank;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    int64_t xstr[MRT_MAX_RANK], st[MRT_MAX_RANK];
    mrt_shape_strides(x->rank, x->shape, st);
    for (int i = 0; i < r; i++) {
        int j = i - (r - x->rank);
        xstr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
    }
    mrt_mover m = mrt_mover_of(x->dtype);
    int64_t inner = r ? y->shape[r - 1] : 1, inner_str = r ? xstr[r - 1] : 0;
    int64_t idx[MRT_MAX_RANK] = {0}, xoff = 0;
    for (int64_t o = 0; o < n; o += inner) {
        if (inner_str)
            mrt_mover_copy(&m, y->data, o, x->data, xoff, inner);
        else
            mrt_mover_fill(&m, y->data, o, x->data, xoff, inner);
        for (int d = r - 2; d >= 0; d--) {
            xoff += xstr[d];
            if (++idx[d] < y->shape[d]) break;
            xoff -= xstr[d] * idx[d];
            idx[d] = 0;
        }
    }
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_expand(mrt_op_ctx *ctx)
{
    return broadcast_copy(ctx, mrt_output(ctx, 0), mrt_input(ctx, 0));
}

static mrt_status mrt_cpu_identity(mrt_op_ctx *ctx)
{
    const mrt_value *v = ctx->inputs[0];
    if (!ctx->outputs[0]) return MRT_STATUS_OK;
    if (!v || v->kind == MRT_VALUE_NONE) {
        ctx->outputs[0]->kind = MRT_VALUE_NONE;
        return MRT_STATUS_OK;
    }
    if (v->kind == MRT_VALUE_TENSOR) return mrt_mover_copy_all(ctx, mrt_output(ctx, 0), &v->tensor);
    mrt_tensor *items = calloc((size_t)(v->n_items ? v->n_items : 1), sizeof *items);
    if (!items) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory copying a sequence");
    for (int64_t i = 0; i < v->n_items; i++) {
        mrt_status st = mrt_tensor_copy(&items[i], &v->items[i]);
        if (st) {
            for (int64_t k = 0; k < i; k++) mrt_tensor_release(&items[k]);
            free(items);
            return st;
        }
    }
    return mrt_output_take_sequence(ctx, 0, v->seq_dtype, v->n_items, items);
}

static mrt_status mrt_cpu_constant(mrt_op_ctx *ctx)
{
    static const char *const names[] = {"value", "value_float", "value_floats", "value_int",
                                        "value_ints", "value_string", "value_strings"};
    mrt_tensor *y = mrt_output(ctx, 0);
    const mrt_attr *a = NULL;
    for (size_t i = 0; !a && i < sizeof names / sizeof names[0]; i++) a = mrt_node_attr(ctx->node, names[i]);
    if (!a) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "no supported value attribute");
    mrt_mover m = mrt_mover_of(MRT_DTYPE_STRING);
    switch (a->type) {
    case MRT_ATTR_TENSOR: return mrt_mover_copy_all(ctx, y, a->t);
    case MRT_ATTR_FLOAT: *(float *)y->data = a->f; break;
    case MRT_ATTR_INT: *(int64_t *)y->data = a->i; break;
    case MRT_ATTR_FLOATS: if (a->n) memcpy(y->data, a->floats, (size_t)a->n * sizeof(float)); break;
    case MRT_ATTR_INTS: if (a->n) memcpy(y->data, a->ints, (size_t)a->n * sizeof(int64_t)); break;
    case MRT_ATTR_STRING: mrt_mover_put_string(&m, (char **)y->data, a->s); break;
    case MRT_ATTR_STRINGS:
        for (int64_t i = 0; i < a->n; i++) mrt_mover_put_string(&m, &((char **)y->data)[i], a->strings[i]);
        break;
    default: return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "attribute '%s' is not supported", a->name);
    }
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_constant_of_shape(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    const mrt_attr *a = mrt_node_attr(ctx->node, "value");
    if (!a || a->type != MRT_ATTR_TENSOR || !a->t) return MRT_STATUS_OK; /* float zeros */
    mrt_mover m = mrt_mover_of(y->dtype);
    mrt_mover_fill(&m, y->data, 0, a->t->data, 0, mrt_tensor_numel(y));
    return mrt_mover_status(&m, ctx);
}

static mrt_status mrt_cpu_range(mrt_op_ctx *ctx)
{
    const mrt_tensor *start = mrt_input(ctx, 0), *delta = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(y);
    mrt_dtype dt = y->dtype;
    if (mrt_dtype_is_integer(dt)) {
        /* unsigned arithmetic: wraps instead of overflowing like the int type would */
        uint64_t s = (uint64_t)mrt_load_i64(dt, start->data, 0), d = (uint64_t)mrt_load_i64(dt, delta->data, 0);
        for (int64_t i = 0; i < n; i++) mrt_store_i64(dt, y->data, i, (int64_t)(s + (uint64_t)i * d));
    } else {
        double s = mrt_load_f64(dt, start->data, 0), d = mrt_load_f64(dt, delta->data, 0);
        for (int64_t i = 0; i < n; i++) mrt_store_f64(dt, y->data, i, s + (double)i * d);
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_eyelike(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t k = mrt_attr_int(ctx, "k", 0), rows = y->shape[0], cols = y->shape[1];
    for (int64_t i = 0; i < rows; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < cols) mrt_store_i64(y->dtype, y->data, i * cols + j, 1);
    }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_shape[] = {
#define VERSIONS_1_TO_25(op, fn)                                                                             \
    {"", op, 1, fn, NULL}, {"", op, 13, fn, NULL}, {"", op, 19, fn, NULL}, {"", op, 21, fn, NULL},           \
    {"", op, 23, fn, NULL}, {"", op, 24, fn, NULL}, {"", op, 25, fn, NULL}
/* Reshape, Flatten, Squeeze, Unsqueeze (a copy when not an alias of the input) and Expand write every element */
#define W_ALL NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL
#define VERSIONS_1_TO_25_ALL(op, fn)                                                                         \
    {"", op, 1, fn, W_ALL}, {"", op, 13, fn, W_ALL}, {"", op, 19, fn, W_ALL}, {"", op, 21, fn, W_ALL},       \
    {"", op, 23, fn, W_ALL}, {"", op, 24, fn, W_ALL}, {"", op, 25, fn, W_ALL}
    VERSIONS_1_TO_25("Shape", mrt_cpu_shape),
    {"", "Shape", 15, mrt_cpu_shape, NULL},
    VERSIONS_1_TO_25("Size", mrt_cpu_size),
    VERSIONS_1_TO_25_ALL("Reshape", mrt_cpu_reshape),
    {"", "Reshape", 5, mrt_cpu_reshape, W_ALL},
    {"", "Reshape", 14, mrt_cpu_reshape, W_ALL},
#define K(op, v, fn) {"", op, v, fn, W_ALL}
    K("Flatten", 1, mrt_cpu_reshape), K("Flatten", 9, mrt_cpu_reshape), K("Flatten", 11, mrt_cpu_reshape),
    K("Flatten", 13, mrt_cpu_reshape), K("Flatten", 21, mrt_cpu_reshape), K("Flatten", 23, mrt_cpu_reshape),
    K("Flatten", 24, mrt_cpu_reshape), K("Flatten", 25, mrt_cpu_reshape),
    K("Squeeze", 1, mrt_cpu_reshape), K("Squeeze", 11, mrt_cpu_reshape), K("Squeeze", 13, mrt_cpu_reshape),
    K("Squeeze", 21, mrt_cpu_reshape), K("Squeeze", 23, mrt_cpu_reshape), K("Squeeze", 24, mrt_cpu_reshape),
    K("Squeeze", 25, mrt_cpu_reshape),
    K("Unsqueeze", 1, mrt_cpu_reshape), K("Unsqueeze", 11, mrt_cpu_reshape), K("Unsqueeze", 13, mrt_cpu_reshape),
    K("Unsqueeze", 21, mrt_cpu_reshape), K("Unsqueeze", 23, mrt_cpu_reshape), K("Unsqueeze", 24, mrt_cpu_reshape),
    K("Unsqueeze", 25, mrt_cpu_reshape),
#undef K
    {"", "Expand", 8, mrt_cpu_expand, W_ALL},
    {"", "Expand", 13, mrt_cpu_expand, W_ALL},
    VERSIONS_1_TO_25("Identity", mrt_cpu_identity),
    {"", "Identity", 14, mrt_cpu_identity, NULL},
    {"", "Identity", 16, mrt_cpu_identity, NULL},
    VERSIONS_1_TO_25("Constant", mrt_cpu_constant),
    {"", "Constant", 9, mrt_cpu_constant, NULL},
    {"", "Constant", 11, mrt_cpu_constant, NULL},
    {"", "Constant", 12, mrt_cpu_constant, NULL},
    {"", "ConstantOfShape", 9, mrt_cpu_constant_of_shape, NULL},
    {"", "ConstantOfShape", 20, mrt_cpu_constant_of_shape, NULL},
    {"", "ConstantOfShape", 21, mrt_cpu_constant_of_shape, NULL},
    {"", "ConstantOfShape", 23, mrt_cpu_constant_of_shape, NULL},
    {"", "ConstantOfShape", 24, mrt_cpu_constant_of_shape, NULL},
    {"", "ConstantOfShape", 25, mrt_cpu_constant_of_shape, NULL},
    {"", "Range", 11, mrt_cpu_range, NULL},
    {"", "Range", 27, mrt_cpu_range, NULL},
    {"", "EyeLike", 9, mrt_cpu_eyelike, NULL},
    {"", "EyeLike", 22, mrt_cpu_eyelike, NULL},
#undef VERSIONS_1_TO_25
    {0},
};
