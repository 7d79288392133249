/* Opdefs of Shape 1-25, Size 1-25, Reshape 1-25, Flatten 1-25, Squeeze/Unsqueeze 1-25, Expand 8/13, Identity 1-25
 * (tensors, sequences, optionals), Constant 1-25 (no sparse_value), ConstantOfShape 9-25, Range 11/27, EyeLike 9/22. */
#include <math.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"

static mrt_status input_tensor(mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor **out)
{
    *out = mrt_input(ctx, i);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') must be a tensor", i, name);
    return MRT_STATUS_OK;
}

static mrt_status infer_shape(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int64_t start, end;
    mrt_shape_window(ctx, x->rank, &start, &end);
    int64_t n = end - start;
    return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, 1, &n);
}

static mrt_status infer_size(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, 0, NULL);
}

static mrt_status mul_dims(mrt_op_ctx *ctx, int64_t *acc, int64_t d)
{
    if (d != 0 && *acc > INT64_MAX / d) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "shape overflows int64");
    *acc *= d;
    return MRT_STATUS_OK;
}

static mrt_status infer_reshape(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int64_t req[MRT_MAX_RANK], n;
    if (ctx->opset < 5) {
        const int64_t *v;
        if (!mrt_attr_ints(ctx, "shape", &v, &n))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'shape' is required before opset 5");
        if (n > MRT_MAX_RANK)
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "target rank %lld exceeds %d", (long long)n,
                               MRT_MAX_RANK);
        if (n) memcpy(req, v, (size_t)n * sizeof *req);
    } else {
        const mrt_tensor *s;
        MRT_TRY(input_tensor(ctx, 1, "shape", &s));
        if (!s->data) return mrt_infer_dynamic(ctx);
        MRT_TRY(mrt_tensor_read_ints(ctx, "input 'shape'", s, req, MRT_MAX_RANK, &n));
    }
    bool allowzero = ctx->opset >= 14 && mrt_attr_int(ctx, "allowzero", 0) != 0;
    int64_t out[MRT_MAX_RANK], known = 1, total = mrt_tensor_numel(x);
    int infer_at = -1;
    bool has_zero = false;
    char sx[256], sr[256];
    mrt_shape_describe(x->rank, x->shape, sx, sizeof sx);
    mrt_shape_describe((int)n, req, sr, sizeof sr);
    for (int i = 0; i < n; i++) {
        int64_t v = req[i];
        if (v == -1) {
            if (infer_at >= 0)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "target shape %s has more than one -1", sr);
            infer_at = i;
            out[i] = 1;
            continue;
        }
        if (v < -1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "target shape %s has an invalid dimension %lld", sr,
                               (long long)v);
        if (v == 0) has_zero = true;
        if (v == 0 && !allowzero) {
            if (i >= x->rank)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                   "target shape %s: 0 at position %d copies an input dimension, but the input %s "
                                   "has rank %d",
                                   sr, i, sx, x->rank);
            v = x->shape[i];
        }
        out[i] = v;
        MRT_TRY(mul_dims(ctx, &known, v));
    }
    if (allowzero && has_zero && infer_at >= 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "target shape %s has both 0 and -1 with allowzero=1", sr);
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "cannot reshape input of shape %s (%lld elements) into shape %s: the -1 dimension "
                               "cannot be inferred",
                               sx, (long long)total, sr);
        out[infer_at] = total / known;
    } else if (known != total) {
        char so[256];
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "cannot reshape input of shape %s (%lld elements) into shape %s (%s, %lld elements)", sx,
                           (long long)total, sr, mrt_shape_describe((int)n, out, so, sizeof so), (long long)known);
    }
    return mrt_output_set(ctx, 0, x->dtype, (int)n, out);
}

static mrt_status infer_flatten(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    int64_t axis = mrt_attr_int(ctx, "axis", 1);
    int64_t lo = ctx->opset >= 11 ? -(int64_t)x->rank : 0;
    if (axis < lo || axis > x->rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %lld is out of range [%lld, %d] for rank %d",
                           (long long)axis, (long long)lo, x->rank, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t out[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) MRT_TRY(mul_dims(ctx, &out[i < axis ? 0 : 1], x->shape[i]));
    return mrt_output_set(ctx, 0, x->dtype, 2, out);
}

/* Squeeze/Unsqueeze axes: attribute before opset 13, input 1 after. Returns *n = -1 when absent. */
static mrt_status read_axes(mrt_op_ctx *ctx, int64_t *axes, int64_t *n, bool *need_data)
{
    *need_data = false;
    *n = -1;
    if (ctx->opset < 13) {
        const int64_t *v;
        int64_t cnt;
        if (mrt_attr_ints(ctx, "axes", &v, &cnt)) {
            if (cnt > MRT_MAX_RANK)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'axes' has %lld values", (long long)cnt);
            if (cnt) memcpy(axes, v, (size_t)cnt * sizeof *axes);
            *n = cnt;
        }
        return MRT_STATUS_OK;
    }
    const mrt_tensor *t = mrt_input(ctx, 1);
    if (!t) return MRT_STATUS_OK;
    if (!t->data) {
        *need_data = true;
        return MRT_STATUS_OK;
    }
    return mrt_tensor_read_ints(ctx, "input 'axes'", t, axes, MRT_MAX_RANK, n);
}

static mrt_status infer_squeeze(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int64_t axes[MRT_MAX_RANK], n;
    bool need_data;
    MRT_TRY(read_axes(ctx, axes, &n, &need_data));
    if (need_data) return mrt_infer_dynamic(ctx);
    bool drop[MRT_MAX_RANK] = {false};
    if (n < 0) {
        for (int i = 0; i < x->rank; i++) drop[i] = x->shape[i] == 1;
    } else {
        for (int k = 0; k < n; k++) {
            int a;
            MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[k], x->rank, &a));
            if (drop[a]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %d is listed twice in 'axes'", a);
            if (x->shape[a] != 1) {
                char s[256];
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                   "cannot squeeze axis %d of input shape %s: its size is %lld, not 1", a,
                                   mrt_shape_describe(x->rank, x->shape, s, sizeof s), (long long)x->shape[a]);
            }
            drop[a] = true;
        }
    }
    int64_t out[MRT_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) out[r++] = x->shape[i];
    return mrt_output_set(ctx, 0, x->dtype, r, out);
}

static mrt_status infer_unsqueeze(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int64_t axes[MRT_MAX_RANK], n;
    bool need_data;
    MRT_TRY(read_axes(ctx, axes, &n, &need_data));
    if (need_data) return mrt_infer_dynamic(ctx);
    if (n < 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axes are required (%s)",
                           ctx->opset < 13 ? "attribute 'axes'" : "input 'axes'");
    int64_t out_rank = x->rank + n;
    if (out_rank > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output rank %lld exceeds %d", (long long)out_rank,
                           MRT_MAX_RANK);
    bool ins[MRT_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
        int a;
        MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[k], (int)out_rank, &a));
        if (ins[a]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %d is listed twice in 'axes'", a);
        ins[a] = true;
    }
    int64_t out[MRT_MAX_RANK];
    for (int i = 0, j = 0; i < out_rank; i++) out[i] = ins[i] ? 1 : x->shape[j++];
    return mrt_output_set(ctx, 0, x->dtype, (int)out_rank, out);
}

static mrt_status infer_expand(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *s;
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    MRT_TRY(input_tensor(ctx, 1, "shape", &s));
    if (!s->data) return mrt_infer_dynamic(ctx);
    int64_t want[MRT_MAX_RANK], n, out[MRT_MAX_RANK];
    MRT_TRY(mrt_tensor_read_ints(ctx, "input 'shape'", s, want, MRT_MAX_RANK, &n));
    for (int i = 0; i < n; i++)
        if (want[i] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'shape' has a negative dimension %lld",
                               (long long)want[i]);
    int r;
    MRT_TRY(mrt_broadcast_shapes(ctx, x->rank, x->shape, (int)n, want, &r, out));
    return mrt_output_set(ctx, 0, x->dtype, r, out);
}

static mrt_status infer_identity(mrt_op_ctx *ctx)
{
    const mrt_value *v = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!v || v->kind == MRT_VALUE_NONE) return mrt_output_set_none(ctx, 0);
    if (v->kind == MRT_VALUE_SEQUENCE) return mrt_output_set_sequence(ctx, 0, v->seq_dtype);
    return mrt_output_set(ctx, 0, v->tensor.dtype, v->tensor.rank, v->tensor.shape);
}

/* The one value attribute a Constant carries. */
static mrt_status constant_attr(mrt_op_ctx *ctx, const mrt_attr **out)
{
    static const char *const names[] = {"value", "sparse_value", "value_float", "value_floats", "value_int",
                                        "value_ints", "value_string", "value_strings"};
    *out = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const mrt_attr *a = mrt_node_attr(ctx->node, names[i]);
        if (!a) continue;
        if (*out)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "has both '%s' and '%s'; exactly one value attribute is "
                               "allowed", (*out)->name, a->name);
        *out = a;
    }
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "has no value attribute");
    return MRT_STATUS_OK;
}

static mrt_status infer_constant(mrt_op_ctx *ctx)
{
    const mrt_attr *a;
    MRT_TRY(constant_attr(ctx, &a));
    int64_t n = a->n;
    switch (a->type) {
    case MRT_ATTR_TENSOR:
        if (!a->t) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has no tensor", a->name);
        return mrt_output_set(ctx, 0, a->t->dtype, a->t->rank, a->t->shape);
    case MRT_ATTR_SPARSE_TENSOR:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "sparse_value constants are not supported");
    case MRT_ATTR_FLOAT: return mrt_output_set(ctx, 0, MRT_DTYPE_FLOAT, 0, NULL);
    case MRT_ATTR_INT: return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, 0, NULL);
    case MRT_ATTR_STRING: return mrt_output_set(ctx, 0, MRT_DTYPE_STRING, 0, NULL);
    case MRT_ATTR_FLOATS: return mrt_output_set(ctx, 0, MRT_DTYPE_FLOAT, 1, &n);
    case MRT_ATTR_INTS: return mrt_output_set(ctx, 0, MRT_DTYPE_INT64, 1, &n);
    case MRT_ATTR_STRINGS: return mrt_output_set(ctx, 0, MRT_DTYPE_STRING, 1, &n);
    default:
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has unexpected type %s", a->name,
                           mrt_attr_type_name(a->type));
    }
}

static mrt_status infer_constant_of_shape(mrt_op_ctx *ctx)
{
    const mrt_tensor *s;
    MRT_TRY(input_tensor(ctx, 0, "input", &s));
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "value", MRT_ATTR_TENSOR, &a));
    mrt_dtype dt = MRT_DTYPE_FLOAT;
    if (a) {
        if (!a->t || mrt_tensor_numel(a->t) != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'value' must hold exactly one element");
        dt = a->t->dtype;
    }
    if (!s->data) return mrt_infer_dynamic(ctx);
    if (s->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' must be int64, got %s", mrt_dtype_name(s->dtype));
    int64_t shape[MRT_MAX_RANK], n;
    MRT_TRY(mrt_tensor_read_ints(ctx, "input 'input'", s, shape, MRT_MAX_RANK, &n));
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'input' has a negative dimension %lld",
                               (long long)shape[i]);
    return mrt_output_set(ctx, 0, dt, (int)n, shape);
}

static bool range_dtype_ok(mrt_dtype dt, int64_t opset)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64:
        return true;
    case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: return opset >= 27;
    default: return false;
    }
}

mrt_status mrt_range_count(const mrt_op_ctx *ctx, const mrt_tensor *start, const mrt_tensor *limit,
                           const mrt_tensor *delta, int64_t *count)
{
    mrt_dtype dt = start->dtype;
    if (mrt_dtype_is_integer(dt)) {
        int64_t s = mrt_load_i64(dt, start->data, 0), l = mrt_load_i64(dt, limit->data, 0);
        int64_t d = mrt_load_i64(dt, delta->data, 0);
        if (d == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "delta is 0");
        /* int16/int32/int64 values below 2^62 in magnitude: the difference cannot overflow */
        if ((s > -(INT64_C(1) << 62) && s < (INT64_C(1) << 62)) && (l > -(INT64_C(1) << 62) && l < (INT64_C(1) << 62))) {
            int64_t diff = l - s;
            if (d > 0)
                *count = diff <= 0 ? 0 : (diff - 1) / d + 1;
            else
                *count = diff >= 0 ? 0 : (-diff - 1) / -(d == INT64_MIN ? INT64_MIN + 1 : d) + 1;
            return MRT_STATUS_OK;
        }
    }
    double s = mrt_load_f64(dt, start->data, 0), l = mrt_load_f64(dt, limit->data, 0);
    double d = mrt_load_f64(dt, delta->data, 0);
    if (d == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "delta is 0");
    double n = ceil((l - s) / d);
    if (!(n == n)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "start/limit/delta give a NaN element count");
    if (n > 4.0e18) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "the range has too many elements (%g)", n);
    *count = n < 0 ? 0 : (int64_t)n;
    return MRT_STATUS_OK;
}

static mrt_status infer_range(mrt_op_ctx *ctx)
{
    static const char *const names[3] = {"start", "limit", "delta"};
    const mrt_tensor *t[3];
    for (int i = 0; i < 3; i++) {
        MRT_TRY(input_tensor(ctx, i, names[i], &t[i]));
        if (mrt_tensor_numel(t[i]) != 1 || t[i]->rank > 1) {
            char s[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' must be a scalar, got shape %s", names[i],
                               mrt_shape_describe(t[i]->rank, t[i]->shape, s, sizeof s));
        }
        if (t[i]->dtype != t[0]->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' is %s but 'start' is %s", names[i],
                               mrt_dtype_name(t[i]->dtype), mrt_dtype_name(t[0]->dtype));
    }
    if (!range_dtype_ok(t[0]->dtype, ctx->opset))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported at opset %lld",
                           mrt_dtype_name(t[0]->dtype), (long long)ctx->opset);
    for (int i = 0; i < 3; i++)
        if (!t[i]->data) return mrt_infer_dynamic(ctx);
    int64_t n;
    MRT_TRY(mrt_range_count(ctx, t[0], t[1], t[2], &n));
    return mrt_output_set(ctx, 0, t[0]->dtype, 1, &n);
}

static bool eyelike_dtype_ok(mrt_dtype dt)
{
    return dt == MRT_DTYPE_BOOL || dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 ||
           dt == MRT_DTYPE_BFLOAT16 || (mrt_dtype_is_integer(dt) && mrt_dtype_bits(dt) >= 8);
}

static mrt_status infer_eyelike(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    if (x->rank != 2) {
        char s[256];
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must be 2-D, got shape %s",
                           mrt_shape_describe(x->rank, x->shape, s, sizeof s));
    }
    int64_t dt = mrt_attr_int(ctx, "dtype", x->dtype);
    if (!mrt_dtype_is_known((int)dt) || !eyelike_dtype_ok((mrt_dtype)dt))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output dtype %s (%lld) is not supported",
                           mrt_dtype_name((mrt_dtype)dt), (long long)dt);
    return mrt_output_set(ctx, 0, (mrt_dtype)dt, 2, x->shape);
}

const mrt_opdef mrt_opdefs_shape[] = {
#define VERSIONS_1_TO_25(op, mi, ma, fn, fl) \
    {"", op, 1, mi, ma, 1, 1, fn, fl}, {"", op, 13, mi, ma, 1, 1, fn, fl}, {"", op, 19, mi, ma, 1, 1, fn, fl}, \
    {"", op, 21, mi, ma, 1, 1, fn, fl}, {"", op, 23, mi, ma, 1, 1, fn, fl}, {"", op, 24, mi, ma, 1, 1, fn, fl}, \
    {"", op, 25, mi, ma, 1, 1, fn, fl}
    /* Shape and Size read only their input's shape: foldable as soon as that shape is known */
    VERSIONS_1_TO_25("Shape", 1, 1, infer_shape, MRT_OPDEF_FOLD_ON_SHAPE),
    {"", "Shape", 15, 1, 1, 1, 1, infer_shape, MRT_OPDEF_FOLD_ON_SHAPE},
    VERSIONS_1_TO_25("Size", 1, 1, infer_size, MRT_OPDEF_FOLD_ON_SHAPE),
    {"", "Reshape", 1, 1, 1, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 5, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 13, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 14, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 19, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 21, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 23, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 24, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Reshape", 25, 2, 2, 1, 1, infer_reshape, MRT_OPDEF_INPLACE},
    {"", "Flatten", 1, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 9, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 11, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 13, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 21, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 23, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 24, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Flatten", 25, 1, 1, 1, 1, infer_flatten, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 1, 1, 1, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 11, 1, 1, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 13, 1, 2, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 21, 1, 2, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 23, 1, 2, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 24, 1, 2, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Squeeze", 25, 1, 2, 1, 1, infer_squeeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 1, 1, 1, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 11, 1, 1, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 13, 2, 2, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 21, 2, 2, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 23, 2, 2, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 24, 2, 2, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Unsqueeze", 25, 2, 2, 1, 1, infer_unsqueeze, MRT_OPDEF_INPLACE},
    {"", "Expand", 8, 2, 2, 1, 1, infer_expand, 0},
    {"", "Expand", 13, 2, 2, 1, 1, infer_expand, 0},
    VERSIONS_1_TO_25("Identity", 1, 1, infer_identity, MRT_OPDEF_INPLACE),
    {"", "Identity", 14, 1, 1, 1, 1, infer_identity, MRT_OPDEF_INPLACE},
    {"", "Identity", 16, 1, 1, 1, 1, infer_identity, MRT_OPDEF_INPLACE},
    VERSIONS_1_TO_25("Constant", 0, 0, infer_constant, 0),
    {"", "Constant", 9, 0, 0, 1, 1, infer_constant, 0},
    {"", "Constant", 11, 0, 0, 1, 1, infer_constant, 0},
    {"", "Constant", 12, 0, 0, 1, 1, infer_constant, 0},
    {"", "ConstantOfShape", 9, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "ConstantOfShape", 20, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "ConstantOfShape", 21, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "ConstantOfShape", 23, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "ConstantOfShape", 24, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "ConstantOfShape", 25, 1, 1, 1, 1, infer_constant_of_shape, 0},
    {"", "Range", 11, 3, 3, 1, 1, infer_range, 0},
    {"", "Range", 27, 3, 3, 1, 1, infer_range, 0},
    {"", "EyeLike", 9, 1, 1, 1, 1, infer_eyelike, 0},
    {"", "EyeLike", 22, 1, 1, 1, 1, infer_eyelike, 0},
#undef VERSIONS_1_TO_25
    {0},
};
