/* Fused epilogues (see engine/epilogue.h): each post-op is the stand-alone kernel's per-element formula. */
#include "ops_cpu/epilogue.h"

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

/* One post-op over y[0..n) of channel c, at flat output index `at` */
static void apply_op(const mrt_post_op *op, float *y, int64_t n, int64_t c, int64_t at)
{
    if (op->kind == MRT_POST_SIGMOID) {
        mrt_vsigmoid_f32(y, y, n);
    } else if (op->kind == MRT_POST_SILU) {
        mrt_vsilu_f32(y, y, n);
    } else if (op->kind == MRT_POST_GELU_ERF_NODES) {
        mrt_vgelu_erf_nodes_f32(y, n, &op->gelu);
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
