/* CPU kernels of the elementwise family (table, broadcast iterator, dtype runners): unary math and activations,
 * Clip, binary arithmetic/logic/comparison with NumPy broadcasting (and the legacy broadcast/axis attributes
 * before opset 7), Max/Min/Sum/Mean, Where, PRelu. Loops live in elementwise_unary.c and elementwise_binary.c. */
#include "ops_cpu/elementwise.h"

#include <string.h>

#include "engine/registry.h"

/* ------------------------------------------------------------------ broadcast iteration */

static size_t elem_size(mrt_dtype dt) { return (size_t)mrt_dtype_bits(dt) / 8; }

void mrt_ew_broadcast(int n_in, const mrt_tensor *const *in, const mrt_tensor *out, mrt_ew_inner_fn fn,
                      void *user)
{
    int r = out->rank;
    int64_t numel = mrt_tensor_numel(out);
    if (numel == 0) return;
    /* Per-dim extents and element strides (0 where broadcast), innermost first after compaction. */
    int64_t dims[MRT_MAX_RANK];
    int64_t st[MRT_EW_MAX_IN][MRT_MAX_RANK];
    int nd = 0;
    int64_t in_acc[MRT_EW_MAX_IN];
    for (int k = 0; k < n_in; k++) in_acc[k] = 1;
    for (int d = r - 1; d >= 0; d--) {
        int64_t ext = out->shape[d];
        int64_t s[MRT_EW_MAX_IN];
        for (int k = 0; k < n_in; k++) {
            int kd = d - (r - in[k]->rank);
            int64_t idim = kd >= 0 ? in[k]->shape[kd] : 1;
            s[k] = idim == 1 ? 0 : in_acc[k];
            in_acc[k] *= idim;
        }
        if (ext == 1) continue;
        /* merge into the previous (inner) dim when every operand stays contiguous across both */
        bool merge = nd > 0;
        for (int k = 0; merge && k < n_in; k++) merge = s[k] == st[k][nd - 1] * dims[nd - 1];
        if (merge) {
            dims[nd - 1] *= ext;
            continue;
        }
        dims[nd] = ext;
        for (int k = 0; k < n_in; k++) st[k][nd] = s[k];
        nd++;
    }
    if (nd == 0) { /* every dim is 1: a single element */
        dims[0] = 1;
        for (int k = 0; k < n_in; k++) st[k][0] = 0;
        nd = 1;
    }
    size_t osz = elem_size(out->dtype), isz[MRT_EW_MAX_IN];
    int64_t step[MRT_EW_MAX_IN];
    for (int k = 0; k < n_in; k++) {
        isz[k] = elem_size(in[k]->dtype);
        step[k] = st[k][0] ? 1 : 0;
    }
    int64_t inner = dims[0];
    int64_t idx[MRT_MAX_RANK] = {0};
    int64_t off[MRT_EW_MAX_IN] = {0};
    const void *ip[MRT_EW_MAX_IN];
    char *o = (char *)out->data;
    for (int64_t done = 0; done < numel; done += inner) {
        for (int k = 0; k < n_in; k++) ip[k] = (const char *)in[k]->data + (size_t)off[k] * isz[k];
        fn(user, o + (size_t)done * osz, ip, step, inner);
        /* odometer over the outer dims (1..nd-1) */
        for (int d = 1; d < nd; d++) {
            for (int k = 0; k < n_in; k++) off[k] += st[k][d];
            if (++idx[d] < dims[d]) break;
            for (int k = 0; k < n_in; k++) off[k] -= st[k][d] * dims[d];
            idx[d] = 0;
        }
    }
}

bool mrt_ew_is_legacy(const mrt_op_ctx *ctx) { return ctx->opset < 7; }

mrt_status mrt_ew_legacy_view(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b, mrt_tensor *view)
{
    *view = *b;
    if (!mrt_attr_int(ctx, "broadcast", 0)) return MRT_STATUS_OK;
    int ra = a->rank, rb = b->rank;
    int64_t axis = mrt_node_attr(ctx->node, "axis") ? mrt_attr_int(ctx, "axis", 0) : ra - rb;
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + rb > ra)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "legacy broadcast: axis %lld does not fit B (rank %d) in A (rank %d)",
                           (long long)axis, rb, ra);
    view->rank = ra;
    for (int i = 0; i < ra; i++) view->shape[i] = 1;
    for (int i = 0; i < rb; i++) view->shape[axis + i] = b->shape[i];
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ dtype runners */

#define EW_BLOCK 256

static bool is_half(mrt_dtype dt) { return dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16; }

static void half_to_float(mrt_dtype dt, const uint16_t *src, float *dst, int64_t n)
{
    if (dt == MRT_DTYPE_FLOAT16)
        for (int64_t i = 0; i < n; i++) dst[i] = mrt_f16_to_f32(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = mrt_bf16_to_f32(src[i]);
}

static void float_to_half(mrt_dtype dt, const float *src, uint16_t *dst, int64_t n)
{
    if (dt == MRT_DTYPE_FLOAT16)
        for (int64_t i = 0; i < n; i++) dst[i] = mrt_f32_to_f16(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = mrt_f32_to_bf16(src[i]);
}

typedef struct bin_call {
    mrt_ew_binary_fn fn;
    const mrt_ew_params *p;
    mrt_dtype in_dt[2], out_dt;
    bool conv; /* some operand is float16/bfloat16 */
} bin_call;

static void bin_inner(void *user, void *out, const void *const *in, const int64_t *step, int64_t n)
{
    const bin_call *c = (const bin_call *)user;
    if (!c->conv) {
        c->fn(out, in[0], step[0], in[1], step[1], n, c->p);
        return;
    }
    float buf[2][EW_BLOCK], ob[EW_BLOCK];
    size_t osz = elem_size(c->out_dt);
    for (int64_t i0 = 0; i0 < n; i0 += EW_BLOCK) {
        int64_t m = n - i0 < EW_BLOCK ? n - i0 : EW_BLOCK;
        const void *src[2];
        for (int k = 0; k < 2; k++) {
            size_t isz = elem_size(c->in_dt[k]);
            const char *pk = (const char *)in[k] + (size_t)(i0 * step[k]) * isz;
            if (is_half(c->in_dt[k])) {
                half_to_float(c->in_dt[k], (const uint16_t *)pk, buf[k], step[k] ? m : 1);
                src[k] = buf[k];
            } else {
                src[k] = pk;
            }
        }
        char *po = (char *)out + (size_t)i0 * osz;
        if (is_half(c->out_dt)) {
            c->fn(ob, src[0], step[0], src[1], step[1], m, c->p);
            float_to_half(c->out_dt, ob, (uint16_t *)po, m);
        } else {
            c->fn(po, src[0], step[0], src[1], step[1], m, c->p);
        }
    }
}

/* Flat ranges of a binary op whose operands are each the output's shape or a single element */
typedef struct bin_flat {
    const bin_call *c;
    const char *a, *b;
    char *o;
    size_t asz, bsz, osz;
    int64_t sa, sb;
} bin_flat;

static void bin_flat_range(void *arg, int64_t i0, int64_t i1)
{
    const bin_flat *f = arg;
    f->c->fn(f->o + (size_t)i0 * f->osz, f->a + (size_t)(i0 * f->sa) * f->asz, f->sa, f->b + (size_t)(i0 * f->sb) * f->bsz,
             f->sb, i1 - i0, f->c->p);
}

mrt_status mrt_ew_run_binary(mrt_op_ctx *ctx, const mrt_ew_binary_fn *fns, const mrt_tensor *a,
                             const mrt_tensor *b, mrt_tensor *out, const mrt_ew_params *p)
{
    mrt_dtype dt = a->dtype;
    if (dt < 0 || dt >= MRT_DTYPE_COUNT_)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    bin_call c = {fns[is_half(dt) ? MRT_DTYPE_FLOAT : dt], p, {a->dtype, b->dtype}, out->dtype, false};
    c.conv = is_half(a->dtype) || is_half(b->dtype) || is_half(out->dtype);
    if (!c.fn) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    /* each operand as many elements as the output (then laid out as it is: broadcasting expanded nothing) or one,
       whole bytes, no half conversions: flat ranges on the pool (GPT-2's Pow(x, 3) took 0.9 ms a node on one
       thread) */
    int64_t n = mrt_tensor_numel(out), na = mrt_tensor_numel(a), nb = mrt_tensor_numel(b);
    bool bytes = elem_size(a->dtype) && elem_size(b->dtype) && elem_size(out->dtype) && mrt_dtype_bits(a->dtype) % 8 == 0 &&
                 mrt_dtype_bits(b->dtype) % 8 == 0 && mrt_dtype_bits(out->dtype) % 8 == 0 && a->dtype != MRT_DTYPE_STRING &&
                 b->dtype != MRT_DTYPE_STRING;
    if (!c.conv && bytes && n >= 4096 && (na == n || na == 1) && (nb == n || nb == 1)) {
        bin_flat f = {&c, a->data, b->data, out->data, elem_size(a->dtype), elem_size(b->dtype), elem_size(out->dtype),
                      na == n, nb == n};
        mrt_parallel_for(ctx, n, 4096, bin_flat_range, &f);
        return MRT_STATUS_OK;
    }
    const mrt_tensor *in[2] = {a, b};
    mrt_ew_broadcast(2, in, out, bin_inner, &c);
    return MRT_STATUS_OK;
}

mrt_status mrt_ew_run_unary(mrt_op_ctx *ctx, const mrt_ew_unary_fn *fns, const mrt_tensor *x, mrt_tensor *out,
                            const mrt_ew_params *p)
{
    mrt_dtype dt = x->dtype;
    if (dt < 0 || dt >= MRT_DTYPE_COUNT_)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    mrt_ew_unary_fn fn = fns[is_half(dt) ? MRT_DTYPE_FLOAT : dt];
    if (!fn) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    int64_t n = mrt_tensor_numel(x);
    if (!is_half(dt)) {
        fn(out->data, x->data, n, p);
        return MRT_STATUS_OK;
    }
    float xb[EW_BLOCK], ob[EW_BLOCK];
    size_t osz = elem_size(out->dtype);
    bool half_out = is_half(out->dtype);
    for (int64_t i0 = 0; i0 < n; i0 += EW_BLOCK) {
        int64_t m = n - i0 < EW_BLOCK ? n - i0 : EW_BLOCK;
        half_to_float(dt, (const uint16_t *)x->data + i0, xb, m);
        char *po = (char *)out->data + (size_t)i0 * osz;
        if (half_out) {
            fn(ob, xb, m, p);
            float_to_half(out->dtype, ob, (uint16_t *)po, m);
        } else {
            fn(po, xb, m, p);
        }
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ table */

/* every kernel here writes each output element once (mrt_ew_broadcast, flat ranges, the variadic folds) */
#define K(op, v, fn) {"", op, v, fn, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL}
/* Add/Sub/Mul/Div also apply a fused epilogue (engine/fuse.c takes only a GELU written out after them) */
#define KE(op, v, fn) {"", op, v, fn, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL | MRT_KERNEL_EPILOGUE}

const mrt_kernel mrt_cpu_kernels_elementwise[] = {
    K("Abs", 1, mrt_cpu_abs), K("Abs", 6, mrt_cpu_abs), K("Abs", 13, mrt_cpu_abs),
    K("Neg", 1, mrt_cpu_neg), K("Neg", 6, mrt_cpu_neg), K("Neg", 13, mrt_cpu_neg),
    K("Sqrt", 1, mrt_cpu_sqrt), K("Sqrt", 6, mrt_cpu_sqrt), K("Sqrt", 13, mrt_cpu_sqrt),
    K("Exp", 1, mrt_cpu_exp), K("Exp", 6, mrt_cpu_exp), K("Exp", 13, mrt_cpu_exp),
    K("Log", 1, mrt_cpu_log), K("Log", 6, mrt_cpu_log), K("Log", 13, mrt_cpu_log),
    K("Reciprocal", 1, mrt_cpu_reciprocal), K("Reciprocal", 6, mrt_cpu_reciprocal),
    K("Reciprocal", 13, mrt_cpu_reciprocal),
    K("Floor", 1, mrt_cpu_floor), K("Floor", 6, mrt_cpu_floor), K("Floor", 13, mrt_cpu_floor),
    K("Ceil", 1, mrt_cpu_ceil), K("Ceil", 6, mrt_cpu_ceil), K("Ceil", 13, mrt_cpu_ceil),
    K("Round", 11, mrt_cpu_round), K("Round", 22, mrt_cpu_round),
    K("Sign", 9, mrt_cpu_sign), K("Sign", 13, mrt_cpu_sign),
    K("Erf", 9, mrt_cpu_erf), K("Erf", 13, mrt_cpu_erf),
    K("Sin", 7, mrt_cpu_sin), K("Sin", 22, mrt_cpu_sin),
    K("Cos", 7, mrt_cpu_cos), K("Cos", 22, mrt_cpu_cos),
    K("Tan", 7, mrt_cpu_tan), K("Tan", 22, mrt_cpu_tan),
    K("Asin", 7, mrt_cpu_asin), K("Asin", 22, mrt_cpu_asin),
    K("Acos", 7, mrt_cpu_acos), K("Acos", 22, mrt_cpu_acos),
    K("Atan", 7, mrt_cpu_atan), K("Atan", 22, mrt_cpu_atan),
    K("Sinh", 9, mrt_cpu_sinh), K("Sinh", 22, mrt_cpu_sinh),
    K("Cosh", 9, mrt_cpu_cosh), K("Cosh", 22, mrt_cpu_cosh),
    K("Asinh", 9, mrt_cpu_asinh), K("Asinh", 22, mrt_cpu_asinh),
    K("Acosh", 9, mrt_cpu_acosh), K("Acosh", 22, mrt_cpu_acosh),
    K("Atanh", 9, mrt_cpu_atanh), K("Atanh", 22, mrt_cpu_atanh),
    K("IsNaN", 9, mrt_cpu_isnan), K("IsNaN", 13, mrt_cpu_isnan), K("IsNaN", 20, mrt_cpu_isnan),
    K("IsInf", 10, mrt_cpu_isinf), K("IsInf", 20, mrt_cpu_isinf),
    K("Not", 1, mrt_cpu_not),
    K("BitwiseNot", 18, mrt_cpu_bitwise_not),
    K("Relu", 1, mrt_cpu_relu), K("Relu", 6, mrt_cpu_relu), K("Relu", 13, mrt_cpu_relu), K("Relu", 14, mrt_cpu_relu),
    K("Sigmoid", 1, mrt_cpu_sigmoid), K("Sigmoid", 6, mrt_cpu_sigmoid), K("Sigmoid", 13, mrt_cpu_sigmoid),
    K("Tanh", 1, mrt_cpu_tanh), K("Tanh", 6, mrt_cpu_tanh), K("Tanh", 13, mrt_cpu_tanh),
    K("LeakyRelu", 1, mrt_cpu_leaky_relu), K("LeakyRelu", 6, mrt_cpu_leaky_relu),
    K("LeakyRelu", 16, mrt_cpu_leaky_relu),
    K("Elu", 1, mrt_cpu_elu), K("Elu", 6, mrt_cpu_elu), K("Elu", 22, mrt_cpu_elu),
    K("Selu", 1, mrt_cpu_selu), K("Selu", 6, mrt_cpu_selu), K("Selu", 22, mrt_cpu_selu),
    K("Celu", 12, mrt_cpu_celu), K("Celu", 28, mrt_cpu_celu),
    K("ThresholdedRelu", 10, mrt_cpu_thresholded_relu), K("ThresholdedRelu", 22, mrt_cpu_thresholded_relu),
    K("HardSigmoid", 1, mrt_cpu_hard_sigmoid), K("HardSigmoid", 6, mrt_cpu_hard_sigmoid),
    K("HardSigmoid", 22, mrt_cpu_hard_sigmoid),
    K("HardSwish", 14, mrt_cpu_hard_swish), K("HardSwish", 22, mrt_cpu_hard_swish),
    K("Softplus", 1, mrt_cpu_softplus), K("Softplus", 22, mrt_cpu_softplus),
    K("Softsign", 1, mrt_cpu_softsign), K("Softsign", 22, mrt_cpu_softsign),
    K("Gelu", 20, mrt_cpu_gelu),
    K("Mish", 18, mrt_cpu_mish), K("Mish", 22, mrt_cpu_mish),
    K("Swish", 24, mrt_cpu_swish),
    K("Clip", 1, mrt_cpu_clip), K("Clip", 6, mrt_cpu_clip), K("Clip", 11, mrt_cpu_clip),
    K("Clip", 12, mrt_cpu_clip), K("Clip", 13, mrt_cpu_clip),

    KE("Add", 1, mrt_cpu_add), KE("Add", 6, mrt_cpu_add), KE("Add", 7, mrt_cpu_add), KE("Add", 13, mrt_cpu_add),
    KE("Add", 14, mrt_cpu_add),
    KE("Sub", 1, mrt_cpu_sub), KE("Sub", 6, mrt_cpu_sub), KE("Sub", 7, mrt_cpu_sub), KE("Sub", 13, mrt_cpu_sub),
    KE("Sub", 14, mrt_cpu_sub),
    KE("Mul", 1, mrt_cpu_mul), KE("Mul", 6, mrt_cpu_mul), KE("Mul", 7, mrt_cpu_mul), KE("Mul", 13, mrt_cpu_mul),
    KE("Mul", 14, mrt_cpu_mul),
    KE("Div", 1, mrt_cpu_div), KE("Div", 6, mrt_cpu_div), KE("Div", 7, mrt_cpu_div), KE("Div", 13, mrt_cpu_div),
    KE("Div", 14, mrt_cpu_div),
    K("Pow", 1, mrt_cpu_pow), K("Pow", 7, mrt_cpu_pow), K("Pow", 12, mrt_cpu_pow), K("Pow", 13, mrt_cpu_pow),
    K("Pow", 15, mrt_cpu_pow),
    K("Mod", 10, mrt_cpu_mod), K("Mod", 13, mrt_cpu_mod),
    K("BitShift", 11, mrt_cpu_bit_shift),
    K("BitwiseAnd", 18, mrt_cpu_bitwise_and), K("BitwiseOr", 18, mrt_cpu_bitwise_or),
    K("BitwiseXor", 18, mrt_cpu_bitwise_xor),
    K("And", 1, mrt_cpu_and), K("And", 7, mrt_cpu_and),
    K("Or", 1, mrt_cpu_or), K("Or", 7, mrt_cpu_or),
    K("Xor", 1, mrt_cpu_xor), K("Xor", 7, mrt_cpu_xor),
    K("Equal", 1, mrt_cpu_equal), K("Equal", 7, mrt_cpu_equal), K("Equal", 11, mrt_cpu_equal),
    K("Equal", 13, mrt_cpu_equal), K("Equal", 19, mrt_cpu_equal),
    K("Less", 1, mrt_cpu_less), K("Less", 7, mrt_cpu_less), K("Less", 9, mrt_cpu_less), K("Less", 13, mrt_cpu_less),
    K("Greater", 1, mrt_cpu_greater), K("Greater", 7, mrt_cpu_greater), K("Greater", 9, mrt_cpu_greater),
    K("Greater", 13, mrt_cpu_greater),
    K("LessOrEqual", 12, mrt_cpu_less_or_equal), K("LessOrEqual", 16, mrt_cpu_less_or_equal),
    K("GreaterOrEqual", 12, mrt_cpu_greater_or_equal), K("GreaterOrEqual", 16, mrt_cpu_greater_or_equal),
    K("PRelu", 1, mrt_cpu_prelu), K("PRelu", 6, mrt_cpu_prelu), K("PRelu", 7, mrt_cpu_prelu),
    K("PRelu", 9, mrt_cpu_prelu), K("PRelu", 16, mrt_cpu_prelu),
    K("Max", 1, mrt_cpu_max), K("Max", 6, mrt_cpu_max), K("Max", 8, mrt_cpu_max), K("Max", 12, mrt_cpu_max),
    K("Max", 13, mrt_cpu_max),
    K("Min", 1, mrt_cpu_min), K("Min", 6, mrt_cpu_min), K("Min", 8, mrt_cpu_min), K("Min", 12, mrt_cpu_min),
    K("Min", 13, mrt_cpu_min),
    K("Sum", 1, mrt_cpu_sum), K("Sum", 6, mrt_cpu_sum), K("Sum", 8, mrt_cpu_sum), K("Sum", 13, mrt_cpu_sum),
    K("Mean", 1, mrt_cpu_mean), K("Mean", 6, mrt_cpu_mean), K("Mean", 8, mrt_cpu_mean), K("Mean", 13, mrt_cpu_mean),
    K("Where", 9, mrt_cpu_where), K("Where", 16, mrt_cpu_where),
    {0},
};
