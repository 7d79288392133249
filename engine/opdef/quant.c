/* Opdefs: QuantizeLinear and DequantizeLinear 10/13/19/21/23/24/25 (per tensor, per axis, blocked; integer,
 * float8 and float4 quantized types; int32 x; int32 (23+) and float8e8m0 (24+) scales; output_dtype, saturate,
 * precision), DynamicQuantizeLinear 11, QLinearMatMul 10/21 (int8/uint8, a per row / b per column or per tensor;
 * float8 refused) and QLinearConv 10 (int8/uint8, per-channel w; exact integer accumulation, round half to even,
 * saturation). */
#include "engine/opdef/quant.h"

#include <string.h>

#include "engine/opdef/conv.h"
#include "engine/registry.h"

mrt_status mrt_quant_layout_get(const mrt_op_ctx *ctx, mrt_quant_layout *q)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    char a[128], b[128];
    /* the spec's names of inputs 1 and 2, for messages */
    bool quant = strcmp(ctx->node->op_type, "QuantizeLinear") == 0;
    const char *sn = quant ? "y_scale" : "x_scale", *zn = quant ? "y_zero_point" : "x_zero_point";
    if (!x || !s) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x and %s are required tensors", sn);
    memset(q, 0, sizeof *q);
    int axis = 0;
    int64_t block = ctx->opset >= 21 ? mrt_attr_int(ctx, "block_size", 0) : 0;
    if (block < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "block_size %lld is negative", (long long)block);
    bool both_single = z && mrt_tensor_numel(z) == 1 && mrt_tensor_numel(s) == 1; /* [] and [1] are one value */
    if (z && !both_single && (z->rank != s->rank || memcmp(z->shape, s->shape, (size_t)s->rank * sizeof(int64_t))))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has shape %s, expected %s's shape %s", zn,
                           mrt_shape_describe(z->rank, z->shape, a, sizeof a), sn,
                           mrt_shape_describe(s->rank, s->shape, b, sizeof b));
    q->per_tensor = mrt_tensor_numel(s) == 1 && !block;
    q->outer = 1;
    q->len = mrt_tensor_numel(x);
    q->inner = 1;
    if (q->per_tensor) {
        q->outer = 1, q->inner = 1;
        return MRT_STATUS_OK;
    }
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", 1), x->rank, &axis));
    q->outer = 1, q->inner = 1, q->len = x->shape[axis], q->block = block;
    for (int d = 0; d < axis; d++) q->outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) q->inner *= x->shape[d];
    if (!block) {
        if (s->rank != 1 || s->shape[0] != x->shape[axis])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "%s has shape %s, expected a scalar or a vector of %lld (axis %d of x %s)", sn,
                               mrt_shape_describe(s->rank, s->shape, a, sizeof a), (long long)x->shape[axis], axis,
                               mrt_shape_describe(x->rank, x->shape, b, sizeof b));
        return MRT_STATUS_OK;
    }
    bool ok = s->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
        ok = d == axis ? s->shape[d] == (x->shape[d] + block - 1) / block : s->shape[d] == x->shape[d];
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "blocked quantization: %s has shape %s, expected x's shape %s with axis %d divided into "
                           "blocks of %lld", sn,
                           mrt_shape_describe(s->rank, s->shape, a, sizeof a),
                           mrt_shape_describe(x->rank, x->shape, b, sizeof b), axis, (long long)block);
    return MRT_STATUS_OK;
}

static bool is_float(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static bool is_quantized(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: case MRT_DTYPE_INT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_INT16:
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2:
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: case MRT_DTYPE_FLOAT4E2M1: case MRT_DTYPE_INT32:
        return true;
    default:
        return false;
    }
}

static mrt_status infer_quantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    if (!is_float(x->dtype) && x->dtype != MRT_DTYPE_INT32)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x is %s, expected a float type or int32",
                           mrt_dtype_name(x->dtype));
    /* y_scale: float types; int32 since 23, float8e8m0 (power-of-two scales) since 24 */
    if (!is_float(s->dtype) && !(ctx->opset >= 23 && s->dtype == MRT_DTYPE_INT32) &&
        !(ctx->opset >= 24 && s->dtype == MRT_DTYPE_FLOAT8E8M0))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "y_scale is %s, not a scale type of QuantizeLinear-%lld",
                           mrt_dtype_name(s->dtype), (long long)ctx->opset);
    int64_t precision = ctx->opset >= 23 ? mrt_attr_int(ctx, "precision", 0) : 0;
    if (precision && !is_float((mrt_dtype)precision))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "precision %lld: only float, double, float16 and bfloat16",
                           (long long)precision);
    int64_t attr_dt = ctx->opset >= 21 ? mrt_attr_int(ctx, "output_dtype", 0) : 0;
    mrt_dtype out = z ? z->dtype : attr_dt ? (mrt_dtype)attr_dt : MRT_DTYPE_UINT8;
    if (z && attr_dt && attr_dt != (int64_t)z->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output_dtype %lld contradicts the zero point's dtype %s",
                           (long long)attr_dt, mrt_dtype_name(z->dtype));
    if (!is_quantized(out) || out == MRT_DTYPE_INT32)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "quantizing to %s is not supported", mrt_dtype_name(out));
    return mrt_output_set(ctx, 0, out, x->rank, x->shape);
}

static mrt_status infer_dequantize(mrt_op_ctx *ctx)
{
    mrt_quant_layout q;
    MRT_TRY(mrt_quant_layout_get(ctx, &q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    if (!is_quantized(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dequantizing %s is not supported", mrt_dtype_name(x->dtype));
    if (z && z->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x is %s but its zero point is %s", mrt_dtype_name(x->dtype),
                           mrt_dtype_name(z->dtype));
    int64_t attr_dt = ctx->opset >= 23 ? mrt_attr_int(ctx, "output_dtype", 0) : 0;
    mrt_dtype out = attr_dt ? (mrt_dtype)attr_dt : s->dtype;
    if (ctx->opset >= 24 && s->dtype == MRT_DTYPE_FLOAT8E8M0) {
        /* a power-of-two scale is not itself an output type: output_dtype says which float to produce */
        if (!attr_dt)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x_scale is float8e8m0: output_dtype is required");
        if (!is_float(out))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output_dtype %s is not a float type",
                               mrt_dtype_name(out));
        return mrt_output_set(ctx, 0, out, x->rank, x->shape);
    }
    if (!is_float(s->dtype) || !is_float(out))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x_scale (%s) and the output (%s) must be floating point",
                           mrt_dtype_name(s->dtype), mrt_dtype_name(out));
    return mrt_output_set(ctx, 0, out, x->rank, x->shape);
}

static mrt_status infer_dynamic_quantize(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || x->dtype != MRT_DTYPE_FLOAT)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x must be a float32 tensor");
    MRT_TRY(mrt_output_set(ctx, 0, MRT_DTYPE_UINT8, x->rank, x->shape));
    MRT_TRY(mrt_output_set(ctx, 1, MRT_DTYPE_FLOAT, 0, NULL));
    return mrt_output_set(ctx, 2, MRT_DTYPE_UINT8, 0, NULL);
}

static bool is_8bit(mrt_dtype dt) { return dt == MRT_DTYPE_INT8 || dt == MRT_DTYPE_UINT8; }

/* QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point */
static bool is_float8(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT8E4M3FN || dt == MRT_DTYPE_FLOAT8E4M3FNUZ || dt == MRT_DTYPE_FLOAT8E5M2 ||
           dt == MRT_DTYPE_FLOAT8E5M2FNUZ;
}

/* One scale/zero-point pair of QLinearMatMul: `count` values (1 = per tensor, else `per` = rows of a or columns of
   b), the zero point of the quantized tensor's dtype. */
static mrt_status check_qparams(mrt_op_ctx *ctx, int si, const char *sname, const char *zname, mrt_dtype qdt,
                                int64_t per, const char *per_what)
{
    const mrt_tensor *s = mrt_input(ctx, si), *z = mrt_input(ctx, si + 1);
    char a[128];
    if (!s || !is_float(s->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s must be a float tensor", sname);
    if (!z) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s is required", zname);
    if (z->dtype != qdt)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s is %s, expected %s", zname, mrt_dtype_name(z->dtype),
                           mrt_dtype_name(qdt));
    const mrt_tensor *t[2] = {s, z};
    const char *names[2] = {sname, zname};
    for (int i = 0; i < 2; i++) {
        int64_t n = mrt_tensor_numel(t[i]);
        if (n == 1 && t[i]->rank <= 1) continue;
        if (per < 0 && (t[i]->rank > 1 || n != 1))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has shape %s, expected a scalar", names[i],
                               mrt_shape_describe(t[i]->rank, t[i]->shape, a, sizeof a));
        if (t[i]->rank != 1 || n != per)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has shape %s, expected a scalar or [%lld] (one per %s)",
                               names[i], mrt_shape_describe(t[i]->rank, t[i]->shape, a, sizeof a), (long long)per,
                               per_what);
    }
    return MRT_STATUS_OK;
}

/* QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point. a's parameters may be
   per row of a, b's per column of b (1-D vectors, as the spec allows). */
static mrt_status infer_qlinear_matmul(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 3), *yz = mrt_input(ctx, 7);
    if (!a || !b || !yz) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "a, b and y_zero_point are required");
    if (ctx->opset >= 21 && (is_float8(a->dtype) || is_float8(b->dtype) || is_float8(yz->dtype)))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "float8 QLinearMatMul (a %s, b %s, y %s) is not supported",
                           mrt_dtype_name(a->dtype), mrt_dtype_name(b->dtype), mrt_dtype_name(yz->dtype));
    if (!is_8bit(a->dtype) || !is_8bit(b->dtype) || !is_8bit(yz->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "a (%s), b (%s) and y_zero_point (%s) must be int8/uint8",
                           mrt_dtype_name(a->dtype), mrt_dtype_name(b->dtype), mrt_dtype_name(yz->dtype));
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    MRT_TRY(check_qparams(ctx, 1, "a_scale", "a_zero_point", a->dtype, a->rank >= 2 ? d.m : -1, "row of a"));
    MRT_TRY(check_qparams(ctx, 4, "b_scale", "b_zero_point", b->dtype, b->rank >= 2 ? d.n : -1, "column of b"));
    MRT_TRY(check_qparams(ctx, 6, "y_scale", "y_zero_point", yz->dtype, -1, ""));
    return mrt_output_set(ctx, 0, yz->dtype, d.y_rank, d.y_shape);
}

/* QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B */
mrt_status mrt_qlinear_conv_window(const mrt_op_ctx *ctx, mrt_window *win, int64_t *group)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 3);
    char a[128], b[128];
    if (!x || !w || x->rank < 3 || w->rank != x->rank || !is_8bit(x->dtype) || !is_8bit(w->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x and w must be int8/uint8 [N, C, ...] tensors of one rank");
    *group = mrt_attr_int(ctx, "group", 1);
    if (*group < 1 || x->shape[1] % *group || w->shape[0] % *group || w->shape[1] * *group != x->shape[1])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "w %s does not fit x %s with group %lld",
                           mrt_shape_describe(w->rank, w->shape, a, sizeof a),
                           mrt_shape_describe(x->rank, x->shape, b, sizeof b), (long long)*group);
    const mrt_tensor *ws = mrt_input(ctx, 4), *wz = mrt_input(ctx, 5), *bias = ctx->n_inputs > 8 ? mrt_input(ctx, 8) : NULL;
    if (!ws || (mrt_tensor_numel(ws) != 1 && mrt_tensor_numel(ws) != w->shape[0]) ||
        (wz && mrt_tensor_numel(wz) != 1 && mrt_tensor_numel(wz) != w->shape[0]))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "w_scale and w_zero_point must be scalars or one per output channel (%lld)",
                           (long long)w->shape[0]);
    if (bias && (bias->dtype != MRT_DTYPE_INT32 || mrt_tensor_numel(bias) != w->shape[0]))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "B must be %lld int32 values", (long long)w->shape[0]);
    if (!is_float(ws->dtype)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "w_scale must be a float tensor");
    if (wz && wz->dtype != w->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "w_zero_point is %s, expected w's %s",
                           mrt_dtype_name(wz->dtype), mrt_dtype_name(w->dtype));
    /* x's and y's parameters are per tensor */
    static const int singles[4] = {1, 2, 6, 7};
    static const char *const single_names[4] = {"x_scale", "x_zero_point", "y_scale", "y_zero_point"};
    for (int i = 0; i < 4; i++) {
        const mrt_tensor *t = mrt_input(ctx, singles[i]);
        bool scale = i % 2 == 0;
        if (!t && scale) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s is required", single_names[i]);
        if (t && (mrt_tensor_numel(t) != 1 || t->rank > 1))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has shape %s, expected a scalar", single_names[i],
                               mrt_shape_describe(t->rank, t->shape, a, sizeof a));
        if (t && (scale ? !is_float(t->dtype) : !is_8bit(t->dtype)))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has the wrong dtype %s", single_names[i],
                               mrt_dtype_name(t->dtype));
    }
    const mrt_tensor *xz = mrt_input(ctx, 2);
    if (xz && xz->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "x_zero_point is %s, expected x's %s",
                           mrt_dtype_name(xz->dtype), mrt_dtype_name(x->dtype));
    const int64_t *ks;
    int64_t nks;
    if (mrt_attr_ints(ctx, "kernel_shape", &ks, &nks)) {
        bool ok = nks == w->rank - 2;
        for (int64_t i = 0; ok && i < nks; i++) ok = ks[i] == w->shape[2 + i];
        if (!ok)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "kernel_shape does not match w %s",
                               mrt_shape_describe(w->rank, w->shape, a, sizeof a));
    }
    return mrt_window_init(ctx, x, w->shape + 2, MRT_WINDOW_DILATIONS, win);
}

static mrt_status infer_qlinear_conv(mrt_op_ctx *ctx)
{
    mrt_window win;
    int64_t group;
    MRT_TRY(mrt_qlinear_conv_window(ctx, &win, &group));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 3), *yz = mrt_input(ctx, 7);
    int64_t shape[MRT_MAX_RANK] = {x->shape[0], w->shape[0]};
    for (int i = 0; i < win.nsp; i++) shape[2 + i] = win.out[i];
    return mrt_output_set(ctx, 0, yz ? yz->dtype : x->dtype, x->rank, shape);
}

#define QDQ(op, infer, v) {"", op, v, 2, 3, 1, 1, infer, 0}
const mrt_opdef mrt_opdefs_quant[] = {
    QDQ("QuantizeLinear", infer_quantize, 10), QDQ("QuantizeLinear", infer_quantize, 13),
    QDQ("QuantizeLinear", infer_quantize, 19), QDQ("QuantizeLinear", infer_quantize, 21),
    QDQ("QuantizeLinear", infer_quantize, 23), QDQ("QuantizeLinear", infer_quantize, 24),
    QDQ("QuantizeLinear", infer_quantize, 25),
    QDQ("DequantizeLinear", infer_dequantize, 10), QDQ("DequantizeLinear", infer_dequantize, 13),
    QDQ("DequantizeLinear", infer_dequantize, 19), QDQ("DequantizeLinear", infer_dequantize, 21),
    QDQ("DequantizeLinear", infer_dequantize, 23), QDQ("DequantizeLinear", infer_dequantize, 24),
    QDQ("DequantizeLinear", infer_dequantize, 25),
    {"", "DynamicQuantizeLinear", 11, 1, 1, 3, 3, infer_dynamic_quantize, 0},
    {"", "QLinearMatMul", 10, 8, 8, 1, 1, infer_qlinear_matmul, 0},
    {"", "QLinearMatMul", 21, 8, 8, 1, 1, infer_qlinear_matmul, 0},
    {"", "QLinearConv", 10, 8, 9, 1, 1, infer_qlinear_conv, 0},
    {0},
};
