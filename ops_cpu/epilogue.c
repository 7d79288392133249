/* Fused epilogues (see engine/epilogue.h): each post-op is the stand-alone kernel's per-element formula. */
#include "ops_cpu/epilogue.h"

#include "ops_cpu/simd.h"
#include "ops_cpu/vmath.h"

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
        for (int64_t i = 0; i < n; i++) y[i] = y[i] < 0.0f ? 0.0f : y[i]; /* as Relu: NaN and -0 pass through */
        break;
    case MRT_POST_CLIP: {
        float lo = op->lo, hi = op->hi;
        for (int64_t i = 0; i < n; i++) {
            float v = y[i] < lo ? lo : y[i];
            y[i] = v > hi ? hi : v;
        }
        break;
    }
    default:
        break;
    }
}

/* One post-op over y[0..n) of channel c, at flat output index `at` */
static void apply_op(const mrt_post_op *op, float *y, int64_t n, int64_t c, int64_t at)
{
    if (op->kind == MRT_POST_SIGMOID) {
        mrt_vsigmoid_f32(y, y, n);
    } else if (op->kind == MRT_POST_SILU) {
        mrt_vsilu_f32(y, y, n);
    } else {
        post_simple(op, y, n, c, at);
    }
}

void mrt_epilogue_apply(const mrt_epilogue *ep, float *y, int64_t n, int64_t c, int64_t at)
{
    if (!ep) return;
    for (int k = 0; k < ep->n_ops; k++) apply_op(&ep->ops[k], y, n, c, at);
}

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
        if (op->kind == MRT_POST_BATCHNORM)
            for (int64_t r = 0; r < rows; r++) apply_op(op, y + r * cols, cols, channel0 + r, at0 + r * cols);
        else
            apply_op(op, y, rows * cols, channel0, at0);
    }
}
