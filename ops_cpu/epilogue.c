/* Fused epilogues (see engine/epilogue.h): each post-op is the stand-alone kernel's per-element formula. */
#include "ops_cpu/epilogue.h"

#include "ops_cpu/elementwise.h"
#include "ops_cpu/simd.h"
#include "ops_cpu/vmath.h"

/* Relu's and Clip's per-element formulas, for the post-op and for post_bn_clamp */
static inline float relu_f32(float v) { return v < 0.0f ? 0.0f : v; } /* as Relu: NaN and -0 pass through */
static inline float clip_f32(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

MRT_VECTORIZE_CLONES
static void post_simple(const mrt_post_op *op, float *y, int64_t n, int64_t c, int64_t at)
{
    switch (op->kind) {
    case MRT_POST_BATCHNORM: {
        mrt_bn_coef k = op->bn[c];
        for (int64_t i = 0; i < n; i++) y[i] = mrt_bn_apply_f32(y[i], k);
        break;
    }
    case MRT_POST_ADD: {
        const float *o = op->other + at;
        for (int64_t i = 0; i < n; i++) y[i] = y[i] + o[i];
        break;
    }
    case MRT_POST_ADD_ROW: {
        /* in runs that do not wrap around the row, so the loop vectorises */
        for (int64_t i = 0, j = at % op->n_cols; i < n; j = 0) {
            int64_t run = n - i < op->n_cols - j ? n - i : op->n_cols - j;
            const float *o = op->other + j;
            for (int64_t t = 0; t < run; t++) y[i + t] = y[i + t] + o[t];
            i += run;
        }
        break;
    }
    case MRT_POST_RELU:
        for (int64_t i = 0; i < n; i++) y[i] = relu_f32(y[i]);
        break;
    case MRT_POST_CLIP: {
        float lo = op->lo, hi = op->hi;
        for (int64_t i = 0; i < n; i++) y[i] = clip_f32(y[i], lo, hi);
        break;
    }
    case MRT_POST_HARDSWISH:
        for (int64_t i = 0; i < n; i++) y[i] = mrt_hardswish_f32(y[i]);
        break;
    default:
        break;
    }
}

/* BatchNormalization then Relu or Clip in one pass over y: the two ops' formulas per element, in order, so the
   same bits as two passes with one load and store fewer per element (MobileNetV2's BatchNormalization + Clip
   epilogues were 8.6% of its run) */
MRT_VECTORIZE_CLONES
static void post_bn_clamp(const mrt_post_op *bn, const mrt_post_op *act, float *y, int64_t n, int64_t c)
{
    mrt_bn_coef k = bn->bn[c];
    if (act->kind == MRT_POST_RELU) {
        for (int64_t i = 0; i < n; i++) y[i] = relu_f32(mrt_bn_apply_f32(y[i], k));
    } else {
        float lo = act->lo, hi = act->hi;
        for (int64_t i = 0; i < n; i++) y[i] = clip_f32(mrt_bn_apply_f32(y[i], k), lo, hi);
    }
}

/* Ops k and k + 1 are BatchNormalization and a clamp that post_bn_clamp runs as one */
static bool bn_then_clamp(const mrt_epilogue *ep, int k)
{
    return ep->ops[k].kind == MRT_POST_BATCHNORM && k + 1 < ep->n_ops &&
           (ep->ops[k + 1].kind == MRT_POST_RELU || ep->ops[k + 1].kind == MRT_POST_CLIP);
}

/* Ops k and k + 1 are BatchNormalization and Sigmoid or SiLU, which mrt_vbn_sigmoid_f32 runs as one */
static bool bn_then_sigmoid(const mrt_epilogue *ep, int k)
{
    return ep->ops[k].kind == MRT_POST_BATCHNORM && k + 1 < ep->n_ops &&
           (ep->ops[k + 1].kind == MRT_POST_SIGMOID || ep->ops[k + 1].kind == MRT_POST_SILU);
}

/* o = a op b over m elements (a or b a scalar where not *_vec): Add's, Sub's, Mul's and Div's float32 formula,
   written here so that the clones of pointwise_program inline it: a GEMM applies its epilogue row by row, and a
   call per row and instruction cost ViT's attention scores, Div(MatMul, 8), more than the Div's own pass */
#define PW_ARITH(OP)                                                                                               \
    do {                                                                                                           \
        if (a_vec && b_vec) {                                                                                      \
            for (int64_t i = 0; i < m; i++) o[i] = a[i] OP b[i];                                                   \
        } else if (a_vec) {                                                                                        \
            float s = *b;                                                                                          \
            for (int64_t i = 0; i < m; i++) o[i] = a[i] OP s;                                                      \
        } else {                                                                                                   \
            float s = *a;                                                                                          \
            for (int64_t i = 0; i < m; i++) o[i] = s OP b[i];                                                      \
        }                                                                                                          \
    } while (0)

static inline void pw_arith(mrt_pw_code code, float *o, const float *a, bool a_vec, const float *b, bool b_vec,
                            int64_t m)
{
    switch (code) {
    case MRT_PW_ADD: PW_ARITH(+); break;
    case MRT_PW_SUB: PW_ARITH(-); break;
    case MRT_PW_MUL: PW_ARITH(*); break;
    case MRT_PW_DIV: PW_ARITH(/); break;
    default: break;
    }
}

/* A pointwise program over y[0..n), in place: blocks of 256 elements (the registers, 1 KB each, stay in L1);
   register 0 is y's block. The unary ops and Pow run their kernels' own loops (mrt_ew_pw_unary, mrt_ew_pw_pow). */
MRT_VECTORIZE_CLONES
static void pointwise_program(const mrt_pw_program *pg, float *y, int64_t n)
{
    enum { BLOCK = 256 };
    _Alignas(64) float scratch[MRT_PW_MAX_REGS - 1][BLOCK];
    for (int64_t i = 0; i < n; i += BLOCK) {
        int64_t m = n - i < BLOCK ? n - i : BLOCK;
        float *reg[MRT_PW_MAX_REGS] = {y + i};
        for (int r = 1; r < MRT_PW_MAX_REGS; r++) reg[r] = scratch[r - 1];
        for (int k = 0; k < pg->n; k++) {
            const mrt_pw_instr *in = &pg->ins[k];
            if (in->code > MRT_PW_POW)
                mrt_ew_pw_unary(in->code, reg[in->dst], reg[in->a], m, in->k, in->k2);
            else if (in->code == MRT_PW_POW)
                mrt_ew_pw_pow(reg[in->dst], reg[in->a], in->k, m);
            else
                pw_arith(in->code, reg[in->dst], in->a < 0 ? &in->k : reg[in->a], in->a >= 0,
                         in->b < 0 ? &in->k : reg[in->b], in->b >= 0, m);
        }
    }
}

/* One post-op over y[0..n) of channel c, at flat output index `at` */
static void apply_op(const mrt_post_op *op, float *y, int64_t n, int64_t c, int64_t at)
{
    if (op->kind == MRT_POST_SIGMOID) {
        mrt_vsigmoid_f32(y, y, n);
    } else if (op->kind == MRT_POST_SILU) {
        mrt_vsilu_f32(y, y, n);
    } else if (op->kind == MRT_POST_GELU_ERF_NODES) {
        mrt_vgelu_erf_nodes_f32(y, n, &op->gelu);
    } else if (op->kind == MRT_POST_POINTWISE) {
        pointwise_program(op->pw, y, n);
    } else {
        post_simple(op, y, n, c, at);
    }
}

void mrt_epilogue_apply(const mrt_epilogue *ep, float *y, int64_t n, int64_t c, int64_t at)
{
    if (!ep) return;
    for (int k = 0; k < ep->n_ops; k++) {
        if (bn_then_clamp(ep, k)) {
            post_bn_clamp(&ep->ops[k], &ep->ops[k + 1], y, n, c);
            k++;
        } else if (bn_then_sigmoid(ep, k)) {
            mrt_vbn_sigmoid_f32(y, n, &ep->ops[k].bn[c], ep->ops[k + 1].kind == MRT_POST_SILU);
            k++;
        } else {
            apply_op(&ep->ops[k], y, n, c, at);
        }
    }
}

/* Contiguous rows get BatchNormalization and the sigmoid in one pass per row (mrt_vbn_sigmoid_f32) when the rows are
   whole 64-float blocks or long, else BatchNormalization row by row and then the sigmoid over the whole block: a
   row's last, partial block costs the latency of a sigmoid chain (1 x 96 rows of 196, BN+SiLU: 1.35 cycles an
   element in one pass per row, 1.22 in two; rows of 784: 1.13 and 1.14; 3136: 1.26 and 1.32) */
static bool bn_sigmoid_per_row(int64_t cols) { return cols % 64 == 0 || cols >= 768; }

void mrt_epilogue_apply_rows(const mrt_epilogue *ep, float *y, int64_t rows, int64_t cols, int64_t ldc,
                             int64_t channel0, int64_t at0)
{
    if (!ep || rows <= 0 || cols <= 0) return;
    if (rows == 1 || ldc != cols) {
        for (int64_t r = 0; r < rows; r++) mrt_epilogue_apply(ep, y + r * ldc, cols, channel0 + r, at0 + r * ldc);
        return;
    }
    /* Contiguous rows: op by op, each over the whole block unless it depends on the channel (BatchNormalization),
       so that short rows (a 7x7 image's 49 results) do not pay a call and a vector tail per row and op. Every
       element still gets the ops in the same order: the same bits. */
    for (int k = 0; k < ep->n_ops; k++) {
        const mrt_post_op *op = &ep->ops[k];
        if (bn_then_clamp(ep, k)) {
            for (int64_t r = 0; r < rows; r++) post_bn_clamp(op, &ep->ops[k + 1], y + r * cols, cols, channel0 + r);
            k++;
        } else if (bn_then_sigmoid(ep, k) && bn_sigmoid_per_row(cols)) {
            bool silu = ep->ops[k + 1].kind == MRT_POST_SILU;
            for (int64_t r = 0; r < rows; r++) mrt_vbn_sigmoid_f32(y + r * cols, cols, &op->bn[channel0 + r], silu);
            k++;
        } else if (op->kind == MRT_POST_BATCHNORM) {
            for (int64_t r = 0; r < rows; r++) apply_op(op, y + r * cols, cols, channel0 + r, at0 + r * cols);
        } else {
            apply_op(op, y, rows * cols, channel0, at0);
        }
    }
}
