/* Opdefs of the elementwise family: unary math and activations, Clip 1-13, binary arithmetic/logic/comparison
 * (NumPy broadcasting from opset 7, legacy broadcast/axis attributes before), Max/Min/Sum/Mean, Where, PRelu.
 * Each op accepts the dtypes of its newest ONNX version at every version. */
#include <stdio.h>
#include <string.h>

#include "engine/registry.h"

/* dtype classes */
enum {
    TF = 1u << 0,   /* float16, bfloat16, float, double */
    TS = 1u << 1,   /* int8 .. int64 */
    TU = 1u << 2,   /* uint8 .. uint64 */
    TB = 1u << 3,   /* bool */
    TSTR = 1u << 4, /* string */
    TF8 = 1u << 5,  /* float8 formats */
    TCX = 1u << 6,  /* complex64/128 */
};
#define TNUM (TF | TS | TU)
#define TINT (TS | TU)

static unsigned dtype_class(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: return TF;
    case MRT_DTYPE_INT8: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: return TS;
    case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: return TU;
    case MRT_DTYPE_BOOL: return TB;
    case MRT_DTYPE_STRING: return TSTR;
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return TF8;
    case MRT_DTYPE_COMPLEX64: case MRT_DTYPE_COMPLEX128: return TCX;
    default: return 0;
    }
}

static const char *class_names(unsigned mask, char *buf, size_t len)
{
    static const char *const names[] = {"float16/bfloat16/float/double", "int8..int64", "uint8..uint64", "bool",
                                        "string", "float8", "complex"};
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = 0; i < 7 && pos < len; i++)
        if (mask & (1u << i)) pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", names[i]);
    return buf;
}

/* What each op accepts (types of input 0; `types1` for Pow's exponent) and whether its output is bool. */
typedef struct ew_sig {
    const char *op;
    unsigned types;
    bool out_bool;
    unsigned types1;
} ew_sig;

static const ew_sig sigs[] = {
    {"Abs", TNUM, false, 0}, {"Neg", TF | TS, false, 0}, {"Sqrt", TF, false, 0}, {"Exp", TF, false, 0},
    {"Log", TF, false, 0}, {"Reciprocal", TF, false, 0}, {"Floor", TF, false, 0}, {"Ceil", TF, false, 0},
    {"Round", TF, false, 0}, {"Sign", TNUM, false, 0}, {"Erf", TF, false, 0}, {"Sin", TF, false, 0},
    {"Cos", TF, false, 0}, {"Tan", TF, false, 0}, {"Asin", TF, false, 0}, {"Acos", TF, false, 0},
    {"Atan", TF, false, 0}, {"Sinh", TF, false, 0}, {"Cosh", TF, false, 0}, {"Asinh", TF, false, 0},
    {"Acosh", TF, false, 0}, {"Atanh", TF, false, 0}, {"IsNaN", TF | TF8, true, 0}, {"IsInf", TF | TF8, true, 0},
    {"Not", TB, false, 0}, {"BitwiseNot", TINT, false, 0}, {"Relu", TF | TS, false, 0},
    {"Sigmoid", TF, false, 0}, {"Tanh", TF, false, 0}, {"LeakyRelu", TF, false, 0}, {"Elu", TF, false, 0},
    {"Selu", TF, false, 0}, {"Celu", TF, false, 0}, {"ThresholdedRelu", TF, false, 0},
    {"HardSigmoid", TF, false, 0}, {"HardSwish", TF, false, 0}, {"Softplus", TF, false, 0},
    {"Softsign", TF, false, 0}, {"Gelu", TF, false, 0}, {"Mish", TF, false, 0}, {"Swish", TF, false, 0},
    {"Clip", TNUM, false, 0},
    {"Add", TNUM, false, 0}, {"Sub", TNUM, false, 0}, {"Mul", TNUM, false, 0}, {"Div", TNUM, false, 0},
    {"Pow", TF | TS, false, TNUM}, {"Mod", TNUM, false, 0}, {"BitShift", TU, false, 0},
    {"BitwiseAnd", TINT, false, 0}, {"BitwiseOr", TINT, false, 0}, {"BitwiseXor", TINT, false, 0},
    {"And", TB, true, 0}, {"Or", TB, true, 0}, {"Xor", TB, true, 0},
    {"Equal", TNUM | TB | TSTR, true, 0}, {"Less", TNUM, true, 0}, {"LessOrEqual", TNUM, true, 0},
    {"Greater", TNUM, true, 0}, {"GreaterOrEqual", TNUM, true, 0}, {"PRelu", TF | TINT, false, 0},
    {"Max", TNUM, false, 0}, {"Min", TNUM, false, 0}, {"Sum", TF, false, 0}, {"Mean", TF, false, 0},
    {"Where", TNUM | TB | TSTR | TCX, false, 0},
};

static const ew_sig *find_sig(const mrt_op_ctx *ctx)
{
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (!strcmp(sigs[i].op, ctx->node->op_type)) return &sigs[i];
    return NULL;
}

static mrt_status get_input(const mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor **out)
{
    *out = mrt_input(ctx, i);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d (%s) is missing or not a tensor", i, name);
    return MRT_STATUS_OK;
}

static mrt_status check_type(const mrt_op_ctx *ctx, int i, const char *name, mrt_dtype dt, unsigned mask)
{
    if (dtype_class(dt) & mask) return MRT_STATUS_OK;
    char buf[160];
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d (%s) has dtype %s; expected %s", i, name,
                       mrt_dtype_name(dt), class_names(mask, buf, sizeof buf));
}

static mrt_status check_same_type(const mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor *t,
                                  mrt_dtype want)
{
    if (t->dtype == want) return MRT_STATUS_OK;
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d (%s) has dtype %s, expected %s like input 0", i, name,
                       mrt_dtype_name(t->dtype), mrt_dtype_name(want));
}

/* ------------------------------------------------------------------ unary */

static mrt_status infer_unary(mrt_op_ctx *ctx)
{
    const ew_sig *s = find_sig(ctx);
    const mrt_tensor *x;
    MRT_TRY(get_input(ctx, 0, "X", &x));
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "not an elementwise op");
    MRT_TRY(check_type(ctx, 0, "X", x->dtype, s->types));
    if (!strcmp(s->op, "Gelu")) {
        const mrt_attr *a;
        MRT_TRY(mrt_attr_get(ctx, "approximate", MRT_ATTR_STRING, &a));
        if (a && strcmp(a->s, "none") && strcmp(a->s, "tanh"))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"",
                               a->s);
    }
    return mrt_output_set(ctx, 0, s->out_bool ? MRT_DTYPE_BOOL : x->dtype, x->rank, x->shape);
}

static mrt_status infer_clip(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(get_input(ctx, 0, "input", &x));
    if (ctx->opset < 11) {
        MRT_TRY(check_type(ctx, 0, "input", x->dtype, TF));
    } else {
        MRT_TRY(check_type(ctx, 0, "input", x->dtype, TNUM));
        static const char *const names[] = {"", "min", "max"};
        for (int i = 1; i <= 2; i++) {
            const mrt_tensor *b = mrt_input(ctx, i);
            if (!b) continue;
            MRT_TRY(check_same_type(ctx, i, names[i], b, x->dtype));
            int64_t n;
            MRT_TRY(mrt_shape_numel(b->rank, b->shape, &n));
            if (n != 1) {
                char sb[128];
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d (%s) has shape %s, expected a scalar", i,
                                   names[i], mrt_shape_describe(b->rank, b->shape, sb, sizeof sb));
            }
        }
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

/* ------------------------------------------------------------------ binary */

/* B's shape under the legacy (opset < 7) broadcast/axis attributes, as a rank(A) shape. */
static mrt_status legacy_b_shape(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b, int *rank,
                                 int64_t *shape)
{
    int ra = a->rank, rb = b->rank;
    if (!mrt_attr_int(ctx, "broadcast", 0)) {
        bool same = ra == rb;
        for (int i = 0; same && i < ra; i++) same = a->shape[i] == b->shape[i];
        if (!same) {
            char sa[128], sb[128];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "inputs have shapes %s and %s but broadcast=0 (opset < 7 needs broadcast=1 to broadcast)",
                               mrt_shape_describe(ra, a->shape, sa, sizeof sa), mrt_shape_describe(rb, b->shape, sb, sizeof sb));
        }
        *rank = rb;
        memcpy(shape, b->shape, (size_t)rb * sizeof *shape);
        return MRT_STATUS_OK;
    }
    int64_t axis = mrt_node_attr(ctx->node, "axis") ? mrt_attr_int(ctx, "axis", 0) : ra - rb;
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + rb > ra)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "legacy broadcast: axis %lld does not fit B (rank %d) in A (rank %d)",
                           (long long)axis, rb, ra);
    *rank = ra;
    for (int i = 0; i < ra; i++) shape[i] = 1;
    for (int i = 0; i < rb; i++) shape[axis + i] = b->shape[i];
    return MRT_STATUS_OK;
}

static bool same_shape(int ra, const int64_t *a, int rb, const int64_t *b)
{
    if (ra != rb) return false;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static bool has_legacy_broadcast(const char *op)
{
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "Greater"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

static mrt_status infer_binary(mrt_op_ctx *ctx)
{
    const ew_sig *s = find_sig(ctx);
    const mrt_tensor *a, *b;
    MRT_TRY(get_input(ctx, 0, "A", &a));
    MRT_TRY(get_input(ctx, 1, "B", &b));
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "not an elementwise op");
    MRT_TRY(check_type(ctx, 0, "A", a->dtype, s->types));
    if (s->types1) MRT_TRY(check_type(ctx, 1, "B", b->dtype, s->types1));
    else MRT_TRY(check_same_type(ctx, 1, "B", b, a->dtype));
    if (!strcmp(s->op, "BitShift")) {
        const char *dir = mrt_attr_string(ctx, "direction", "");
        if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"",
                               dir);
    }
    if (!strcmp(s->op, "Mod")) {
        int64_t f = mrt_attr_int(ctx, "fmod", 0);
        if (f != 0 && f != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'fmod' must be 0 or 1, got %lld", (long long)f);
    }
    int rank;
    int64_t shape[MRT_MAX_RANK];
    if (ctx->opset < 7 && has_legacy_broadcast(s->op)) {
        int rb = 0;
        int64_t bshape[MRT_MAX_RANK];
        MRT_TRY(legacy_b_shape(ctx, a, b, &rb, bshape));
        MRT_TRY(mrt_broadcast_shapes(ctx, a->rank, a->shape, rb, bshape, &rank, shape));
        if (!same_shape(rank, shape, a->rank, a->shape)) {
            char sa[128], sb[128];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "legacy broadcast: B %s does not broadcast to A %s",
                               mrt_shape_describe(b->rank, b->shape, sb, sizeof sb),
                               mrt_shape_describe(a->rank, a->shape, sa, sizeof sa));
        }
    } else {
        MRT_TRY(mrt_broadcast_shapes(ctx, a->rank, a->shape, b->rank, b->shape, &rank, shape));
    }
    return mrt_output_set(ctx, 0, s->out_bool ? MRT_DTYPE_BOOL : a->dtype, rank, shape);
}

/* PRelu: slope broadcasts unidirectionally to X (before opset 7 a [C] slope may also be per channel). */
static mrt_status infer_prelu(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *slope;
    MRT_TRY(get_input(ctx, 0, "X", &x));
    MRT_TRY(get_input(ctx, 1, "slope", &slope));
    MRT_TRY(check_type(ctx, 0, "X", x->dtype, TF | TINT));
    MRT_TRY(check_same_type(ctx, 1, "slope", slope, x->dtype));
    bool channel = ctx->opset < 7 && slope->rank == 1 && x->rank >= 2 && slope->shape[0] == x->shape[1];
    int rank;
    int64_t shape[MRT_MAX_RANK];
    mrt_status st = mrt_broadcast_shapes(ctx, x->rank, x->shape, slope->rank, slope->shape, &rank, shape);
    if (!channel && (st || !same_shape(rank, shape, x->rank, x->shape))) {
        char sx[128], ss[128];
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "slope %s does not broadcast to X %s",
                           mrt_shape_describe(slope->rank, slope->shape, ss, sizeof ss),
                           mrt_shape_describe(x->rank, x->shape, sx, sizeof sx));
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

/* Max/Min/Sum/Mean: every input has input 0's dtype; shapes broadcast together (opset 8+; earlier versions
   needed equal shapes, which broadcasting accepts too). */
static mrt_status infer_variadic(mrt_op_ctx *ctx)
{
    const ew_sig *s = find_sig(ctx);
    const mrt_tensor *t;
    MRT_TRY(get_input(ctx, 0, "data_0", &t));
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "not an elementwise op");
    MRT_TRY(check_type(ctx, 0, "data_0", t->dtype, s->types));
    int rank = t->rank;
    int64_t shape[MRT_MAX_RANK];
    memcpy(shape, t->shape, (size_t)rank * sizeof *shape);
    for (int i = 1; i < ctx->n_inputs; i++) {
        char name[24];
        snprintf(name, sizeof name, "data_%d", i);
        MRT_TRY(get_input(ctx, i, name, &t));
        MRT_TRY(check_same_type(ctx, i, name, t, mrt_input(ctx, 0)->dtype));
        MRT_TRY(mrt_broadcast_shapes(ctx, rank, shape, t->rank, t->shape, &rank, shape));
    }
    return mrt_output_set(ctx, 0, mrt_input(ctx, 0)->dtype, rank, shape);
}

static mrt_status infer_where(mrt_op_ctx *ctx)
{
    const mrt_tensor *c, *x, *y;
    MRT_TRY(get_input(ctx, 0, "condition", &c));
    MRT_TRY(get_input(ctx, 1, "X", &x));
    MRT_TRY(get_input(ctx, 2, "Y", &y));
    MRT_TRY(check_type(ctx, 0, "condition", c->dtype, TB));
    MRT_TRY(check_type(ctx, 1, "X", x->dtype, TNUM | TB | TSTR | TCX));
    if (y->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 2 (Y) has dtype %s, expected %s like X",
                           mrt_dtype_name(y->dtype), mrt_dtype_name(x->dtype));
    int rank;
    int64_t shape[MRT_MAX_RANK];
    MRT_TRY(mrt_broadcast_shapes(ctx, c->rank, c->shape, x->rank, x->shape, &rank, shape));
    MRT_TRY(mrt_broadcast_shapes(ctx, rank, shape, y->rank, y->shape, &rank, shape));
    return mrt_output_set(ctx, 0, x->dtype, rank, shape);
}

/* ------------------------------------------------------------------ table */

#define U(op, v) {"", op, v, 1, 1, 1, 1, infer_unary, MRT_OPDEF_INPLACE}
#define B(op, v) {"", op, v, 2, 2, 1, 1, infer_binary, MRT_OPDEF_INPLACE}
#define V(op, v) {"", op, v, 1, -1, 1, 1, infer_variadic, 0}

const mrt_opdef mrt_opdefs_elementwise[] = {
    U("Abs", 1), U("Abs", 6), U("Abs", 13),
    U("Neg", 1), U("Neg", 6), U("Neg", 13),
    U("Sqrt", 1), U("Sqrt", 6), U("Sqrt", 13),
    U("Exp", 1), U("Exp", 6), U("Exp", 13),
    U("Log", 1), U("Log", 6), U("Log", 13),
    U("Reciprocal", 1), U("Reciprocal", 6), U("Reciprocal", 13),
    U("Floor", 1), U("Floor", 6), U("Floor", 13),
    U("Ceil", 1), U("Ceil", 6), U("Ceil", 13),
    U("Round", 11), U("Round", 22),
    U("Sign", 9), U("Sign", 13),
    U("Erf", 9), U("Erf", 13),
    U("Sin", 7), U("Sin", 22), U("Cos", 7), U("Cos", 22), U("Tan", 7), U("Tan", 22),
    U("Asin", 7), U("Asin", 22), U("Acos", 7), U("Acos", 22), U("Atan", 7), U("Atan", 22),
    U("Sinh", 9), U("Sinh", 22), U("Cosh", 9), U("Cosh", 22),
    U("Asinh", 9), U("Asinh", 22), U("Acosh", 9), U("Acosh", 22), U("Atanh", 9), U("Atanh", 22),
    U("IsNaN", 9), U("IsNaN", 13), U("IsNaN", 20),
    U("IsInf", 10), U("IsInf", 20),
    U("Not", 1),
    U("BitwiseNot", 18),
    U("Relu", 1), U("Relu", 6), U("Relu", 13), U("Relu", 14),
    U("Sigmoid", 1), U("Sigmoid", 6), U("Sigmoid", 13),
    U("Tanh", 1), U("Tanh", 6), U("Tanh", 13),
    U("LeakyRelu", 1), U("LeakyRelu", 6), U("LeakyRelu", 16),
    U("Elu", 1), U("Elu", 6), U("Elu", 22),
    U("Selu", 1), U("Selu", 6), U("Selu", 22),
    U("Celu", 12), U("Celu", 28),
    U("ThresholdedRelu", 10), U("ThresholdedRelu", 22),
    U("HardSigmoid", 1), U("HardSigmoid", 6), U("HardSigmoid", 22),
    U("HardSwish", 14), U("HardSwish", 22),
    U("Softplus", 1), U("Softplus", 22),
    U("Softsign", 1), U("Softsign", 22),
    U("Gelu", 20),
    U("Mish", 18), U("Mish", 22),
    U("Swish", 24),
    {"", "Clip", 1, 1, 1, 1, 1, infer_clip, MRT_OPDEF_INPLACE}, {"", "Clip", 6, 1, 1, 1, 1, infer_clip, MRT_OPDEF_INPLACE},
    {"", "Clip", 11, 1, 3, 1, 1, infer_clip, MRT_OPDEF_INPLACE}, {"", "Clip", 12, 1, 3, 1, 1, infer_clip, MRT_OPDEF_INPLACE},
    {"", "Clip", 13, 1, 3, 1, 1, infer_clip, MRT_OPDEF_INPLACE},

    B("Add", 1), B("Add", 6), B("Add", 7), B("Add", 13), B("Add", 14),
    B("Sub", 1), B("Sub", 6), B("Sub", 7), B("Sub", 13), B("Sub", 14),
    B("Mul", 1), B("Mul", 6), B("Mul", 7), B("Mul", 13), B("Mul", 14),
    B("Div", 1), B("Div", 6), B("Div", 7), B("Div", 13), B("Div", 14),
    B("Pow", 1), B("Pow", 7), B("Pow", 12), B("Pow", 13), B("Pow", 15),
    B("Mod", 10), B("Mod", 13),
    B("BitShift", 11),
    B("BitwiseAnd", 18), B("BitwiseOr", 18), B("BitwiseXor", 18),
    B("And", 1), B("And", 7), B("Or", 1), B("Or", 7), B("Xor", 1), B("Xor", 7),
    B("Equal", 1), B("Equal", 7), B("Equal", 11), B("Equal", 13), B("Equal", 19),
    B("Less", 1), B("Less", 7), B("Less", 9), B("Less", 13),
    B("Greater", 1), B("Greater", 7), B("Greater", 9), B("Greater", 13),
    B("LessOrEqual", 12), B("LessOrEqual", 16),
    B("GreaterOrEqual", 12), B("GreaterOrEqual", 16),
    {"", "PRelu", 1, 2, 2, 1, 1, infer_prelu, MRT_OPDEF_INPLACE}, {"", "PRelu", 6, 2, 2, 1, 1, infer_prelu, MRT_OPDEF_INPLACE},
    {"", "PRelu", 7, 2, 2, 1, 1, infer_prelu, MRT_OPDEF_INPLACE}, {"", "PRelu", 9, 2, 2, 1, 1, infer_prelu, MRT_OPDEF_INPLACE},
    {"", "PRelu", 16, 2, 2, 1, 1, infer_prelu, MRT_OPDEF_INPLACE},
    V("Max", 1), V("Max", 6), V("Max", 8), V("Max", 12), V("Max", 13),
    V("Min", 1), V("Min", 6), V("Min", 8), V("Min", 12), V("Min", 13),
    V("Sum", 1), V("Sum", 6), V("Sum", 8), V("Sum", 13),
    V("Mean", 1), V("Mean", 6), V("Mean", 8), V("Mean", 13),
    {"", "Where", 9, 3, 3, 1, 1, infer_where, 0}, {"", "Where", 16, 3, 3, 1, 1, infer_where, 0},
    {0},
};
