/* CPU kernels: BatchNormalization 1-15 (inference, and training_mode=1 from 14), InstanceNormalization
 * 1/6/22, LayerNormalization 17, GroupNormalization 18/21, RMSNormalization 23, LpNormalization 1/22,
 * MeanVarianceNormalization 9/13, LRN 1/13. All compute in double (statistics by two passes: mean, then
 * squared deviations), whatever stash_type asks for, and round on store; but float32 BatchNormalization, the hot
 * one in CNNs, applies its double coefficients as float pairs (mrt_bn_apply_f32, within 1.5 ulp). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/reduce.h"
#include "ops_cpu/simd.h"

#define CHUNK 512 /* LRN works on blocks of this many positions */

/* Doubles of scratch of InstanceNormalization, GroupNormalization, LpNormalization, MeanVarianceNormalization and
   LRN (statistics per group, row or position block), after infer validated the attributes. */
static int64_t norm_scratch_doubles(const mrt_op_ctx *ctx, const mrt_tensor *x)
{
    const char *op = ctx->node->op_type;
    int64_t n = x->rank > 0 ? x->shape[0] : 1, c = x->rank > 1 ? x->shape[1] : 1;
    if (strcmp(op, "InstanceNormalization") == 0 || strcmp(op, "GroupNormalization") == 0) {
        bool instance = op[0] == 'I';
        int64_t groups = instance ? c : mrt_attr_int(ctx, "num_groups", 1);
        int64_t per_channel_params = instance || ctx->opset >= 21 ? c : groups;
        return 2 * n * groups + 2 * n * c + 2 * per_channel_params; /* mean, var; A, B; scale, bias */
    }
    if (strcmp(op, "LRN") == 0) return 2 * c * CHUNK;
    bool reduced[MRT_MAX_RANK] = {false};
    if (strcmp(op, "LpNormalization") == 0) {
        int64_t axis = mrt_attr_int(ctx, "axis", -1);
        if (axis < 0) axis += x->rank;
        if (axis >= 0 && axis < x->rank) reduced[axis] = true;
    } else { /* MeanVarianceNormalization */
        static const int64_t def_axes[3] = {0, 2, 3};
        const int64_t *axes;
        int64_t n_axes;
        if (!mrt_attr_ints(ctx, "axes", &axes, &n_axes)) {
            axes = def_axes;
            n_axes = 3;
        }
        for (int64_t i = 0; i < n_axes; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
            if (a >= 0 && a < x->rank) reduced[a] = true;
        }
    }
    int64_t kept = 1; /* one value per element of the kept dims: two rows of statistics */
    for (int a = 0; a < x->rank; a++)
        if (!reduced[a]) kept *= x->shape[a];
    return 2 * kept;
}

static size_t norm_scratch_bytes(const mrt_op_ctx *ctx)
{
    int64_t n = norm_scratch_doubles(ctx, mrt_input(ctx, 0));
    return (size_t)(n > 0 ? n : 0) * sizeof(double);
}

/* The norm_scratch_doubles of the node, which each kernel carves as it needs; NULL with the op failed when the
   memory can't be had. */
static double *scratch(mrt_op_ctx *ctx) { return mrt_workspace(ctx, norm_scratch_bytes(ctx)); }

static mrt_status mrt_cpu_norm_scratch_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, norm_scratch_bytes(ctx));
    return MRT_STATUS_OK;
}

static void load_all(const mrt_tensor *t, double *dst)
{
    mrt_cpu_load_f64(t->dtype, t->data, 0, 1, mrt_tensor_numel(t), dst);
}

/* mean[o] and variance (population) var[o] of the elements of (dt, rank, shape, data) reduced over `red`. */
static mrt_status moments(mrt_dtype dt, int rank, const int64_t *shape, const void *data, const bool *red,
                          double *mean, double *var, int64_t n_out)
{
    int64_t count = 1;
    for (int a = 0; a < rank; a++)
        if (red[a]) count *= shape[a];
    MRT_TRY(mrt_cpu_reduce_f64(dt, rank, shape, data, red, MRT_REDUCE_MEAN, NULL, mean, NULL));
    MRT_TRY(mrt_cpu_reduce_f64(dt, rank, shape, data, red, MRT_REDUCE_SUMSQ, mean, var, NULL));
    for (int64_t o = 0; o < n_out; o++) var[o] /= (double)count;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ BatchNormalization */


/* y = x * A[c] + B[c] over [n, c, s] float tensors, by the float formula fused BatchNormalization uses
   (mrt_bn_apply_f32, engine/epilogue.h: the same bits); compiled for AVX-512/AVX2 too (ops_cpu/simd.h). In place
   is fine. */
typedef struct affine_job {
    const float *x;
    float *y;
    int64_t c, s;
    const mrt_bn_coef *k;
    const mrt_epilogue *ep; /* fused successors (engine/fuse.c), or NULL */
} affine_job;

/* planes [p0, p1) of the [n * c, s] view; a fused epilogue applied to each plane while it is in cache, a lone Relu
   (DenseNet's pre-activation BatchNormalization -> Relu before each Conv) in the same loop: Relu's formula on
   the BatchNormalization's result, the bits of the two nodes (their two passes were 2.8% + 2.8% of DenseNet-121's
   run on one thread) */
MRT_VECTORIZE_CLONES
static void affine_channels_f32(void *arg, int64_t p0, int64_t p1)
{
    const affine_job *j = (const affine_job *)arg;
    int64_t s = j->s;
    bool relu = j->ep && j->ep->n_ops == 1 && j->ep->ops[0].kind == MRT_POST_RELU;
    for (int64_t pl = p0; pl < p1; pl++) {
        const float *xr = j->x + pl * s;
        float *yr = j->y + pl * s;
        mrt_bn_coef k = j->k[pl % j->c];
        if (relu) {
            for (int64_t e = 0; e < s; e++) {
                float v = mrt_bn_apply_f32(xr[e], k);
                yr[e] = v < 0.0f ? 0.0f : v; /* as Relu: NaN and -0 pass */
            }
            continue;
        }
        for (int64_t e = 0; e < s; e++) yr[e] = mrt_bn_apply_f32(xr[e], k);
        mrt_epilogue_apply(j->ep, yr, s, pl % j->c, pl * s);
    }
}

/* Per-channel terms (scale, bias, mean, var, A, B; the batch's mean and var in training) over the channels, which
   spatial=0 extends to the positions */
static size_t bn_workspace_bytes(const mrt_op_ctx *ctx, const mrt_tensor *x)
{
    bool spatial = ctx->opset >= 9 || mrt_attr_int(ctx, "spatial", 1) != 0;
    int64_t c = x->shape[1];
    for (int a = 2; !spatial && a < x->rank; a++) c *= x->shape[a];
    return (size_t)(8 * (c > 0 ? c : 1)) * sizeof(double);
}

static mrt_status mrt_cpu_batchnorm_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, bn_workspace_bytes(ctx, mrt_input(ctx, 0)));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_batchnorm(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool spatial = ctx->opset >= 9 || mrt_attr_int(ctx, "spatial", 1) != 0;
    bool training = ctx->opset >= 14 && mrt_attr_int(ctx, "training_mode", 0) != 0;
    double eps = mrt_attr_float(ctx, "epsilon", 1e-5f), mom = mrt_attr_float(ctx, "momentum", 0.9f);
    int64_t n = x->shape[0], c = x->shape[1], s = 1;
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    if (!spatial) {
        c *= s;
        s = 1;
    }
    int64_t view[3] = {n, c, s};
    bool red[3] = {true, false, true};
    double *p = mrt_workspace(ctx, bn_workspace_bytes(ctx, x));
    if (!p) return MRT_STATUS_OUT_OF_MEMORY;
    double *scale = p, *bias = p + c, *mean = p + 2 * c, *var = p + 3 * c, *A = p + 4 * c, *B = p + 5 * c;
    for (int i = 0; i < 4; i++) load_all(mrt_input(ctx, i + 1), p + i * c);
    mrt_status st = MRT_STATUS_OK;
    if (training) {
        double *bm = p + 6 * c, *bv = p + 7 * c;
        st = moments(x->dtype, 3, view, x->data, red, bm, bv, c);
        for (int i = 1; !st && i < 3; i++) {
            mrt_tensor *r = mrt_output(ctx, i);
            if (!r) continue;
            const double *old = i == 1 ? mean : var, *cur = i == 1 ? bm : bv;
            for (int64_t k = 0; k < c; k++) A[k] = old[k] * mom + cur[k] * (1.0 - mom);
            mrt_cpu_store_f64(r->dtype, r->data, 0, 1, c, A);
        }
        mean = bm;
        var = bv;
    }
    if (!st) {
        for (int64_t k = 0; k < c; k++) mrt_bn_affine(scale[k], bias[k], mean[k], var[k], eps, &A[k], &B[k]);
        if (x->dtype == MRT_DTYPE_FLOAT && y->dtype == MRT_DTYPE_FLOAT) {
            /* the float pairs go where the batch statistics were (no longer needed) */
            mrt_bn_coef *k = (mrt_bn_coef *)(p + 6 * c);
            for (int64_t i = 0; i < c; i++) k[i] = mrt_bn_coef_make(A[i], B[i]);
            /* planes are independent (each element from its own x and its channel's A, B): split them over
               the session's threads, at least ~16K elements per range */
            affine_job j = {x->data, y->data, c, s, k, ctx->epilogue};
            mrt_parallel_for(ctx, n * c, s > 0 && s < 16384 ? 16384 / s : 1, affine_channels_f32, &j);
        } else {
            mrt_cpu_affine_f64(x->dtype, 3, view, x->data, red, A, B, y->dtype, y->data);
        }
    }
    return st;
}

/* ------------------------------------------------------------------ Instance / Group normalization */

/* One (n, group) row of group_norm: its statistics, then its channels' y = x * A + B, by the functions the
   whole-tensor walk calls (mrt_cpu_reduce_f64 and mrt_cpu_affine_f64 on the row; that walk reduces each row in the
   same 512-element chunks from its start), so the bits are those of one walk over the tensor. Rows are
   independent: they are split over the session's threads, and each row is read three times while it is in cache.
   wav2vec2's [1, 512, 3199] InstanceNormalization, 2 threads: 2.7 ms as whole-tensor passes on one thread. */
typedef struct gn_job {
    mrt_dtype dx, dy;
    const char *x;
    char *y;
    size_t ex, ey;        /* element bytes */
    int64_t groups, cpg, s;
    bool per_group;
    double eps;
    const double *scale, *bias;
    double *mean, *var, *A, *B; /* per row; per (n, channel) */
} gn_job;

/* y = (float)((double)x * a + b) over n floats: mrt_cpu_affine_f64's operations on a float row, without its
   double staging buffer (vectorised; ISO C: no contraction into an fma) */
MRT_VECTORIZE_CLONES
static void affine_row_f32(const float *x, float *y, int64_t n, double a, double b)
{
    for (int64_t i = 0; i < n; i++) y[i] = (float)((double)x[i] * a + b);
}

/* Row r's variance from its sum of squares, then its channels' y = x * A + B */
static void gn_row_affine(const gn_job *j, int64_t r)
{
    int64_t len = j->cpg * j->s;
    bool red = true;
    j->var[r] /= (double)len;
    int64_t i = r / j->groups, g = r % j->groups, c = j->groups * j->cpg;
    for (int64_t k = 0; k < j->cpg; k++) {
        int64_t ch = g * j->cpg + k, pi = j->per_group ? g : ch, at = i * c + ch;
        double a = j->scale[pi] / sqrt(j->var[r] + j->eps);
        j->A[at] = a;
        j->B[at] = j->bias[pi] - j->mean[r] * a;
        if (j->dx == MRT_DTYPE_FLOAT && j->dy == MRT_DTYPE_FLOAT)
            affine_row_f32((const float *)j->x + at * j->s, (float *)j->y + at * j->s, j->s, a, j->B[at]);
        else
            mrt_cpu_affine_f64(j->dx, 1, &j->s, j->x + (size_t)(at * j->s) * j->ex, &red, &j->A[at], &j->B[at], j->dy,
                               j->y + (size_t)(at * j->s) * j->ey);
    }
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
enum { GN_CHUNK = 512 }; /* the chunks mrt_cpu_reduce_f64 reduces a row in (ops_cpu/reduce.c) */

/* Sums over four float rows of len at once, each as mrt_cpu_reduce_f64 sums a row (ops_cpu/reduce.c: per chunk of
   512, partial sums s0..s3 of the terms k = 0..3 mod 4 from +0 and the tail into s0, (s0 + s1) + (s2 + s3); the
   chunks added in order from +0): a row's four partial sums are the lanes of one vector, so the operations are the
   same, but four rows' chains run side by side (one row's adds wait on each other: ~1 term a cycle). Term k is
   x[k] - c[r], squared when sq; out[r] = the sum. */
__attribute__((target("avx512f"))) static void gn_sums4(const float *const *x, int64_t len, const double *c, bool sq,
                                                         double *out)
{
    double o[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t c0 = 0; c0 < len; c0 += GN_CHUNK) {
        int64_t m = len - c0 < GN_CHUNK ? len - c0 : GN_CHUNK, k = 0;
        __m256d acc[4], cv[4];
        for (int r = 0; r < 4; r++) {
            acc[r] = _mm256_setzero_pd();
            cv[r] = _mm256_set1_pd(c[r]);
        }
        for (; k + 4 <= m; k += 4)
            for (int r = 0; r < 4; r++) {
                __m256d v = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x[r] + c0 + k)), cv[r]);
                acc[r] = _mm256_add_pd(acc[r], sq ? _mm256_mul_pd(v, v) : v);
            }
        for (int r = 0; r < 4; r++) {
            double p[4];
            _mm256_storeu_pd(p, acc[r]);
            for (int64_t t = k; t < m; t++) {
                double v = (double)x[r][c0 + t] - c[r];
                p[0] += sq ? v * v : v;
            }
            o[r] += (p[0] + p[1]) + (p[2] + p[3]);
        }
    }
    for (int r = 0; r < 4; r++) out[r] = o[r];
}
#endif

static void gn_rows(void *arg, int64_t r0, int64_t r1)
{
    const gn_job *j = (const gn_job *)arg;
    int64_t len = j->cpg * j->s;
    bool red = true;
    int64_t r = r0;
#ifdef MRT_HAVE_AVX512_INTRINSICS
    /* float rows four at a time: their statistics, then the rows' affine below one by one */
    for (; j->dx == MRT_DTYPE_FLOAT && r + 4 <= r1 && mrt_cpu_has_avx512f(); r += 4) {
        const float *xs[4];
        double zero[4] = {0.0, 0.0, 0.0, 0.0};
        for (int i = 0; i < 4; i++) xs[i] = (const float *)j->x + (r + i) * len;
        gn_sums4(xs, len, zero, false, &j->mean[r]);
        for (int i = 0; i < 4; i++) j->mean[r + i] /= (double)len;
        gn_sums4(xs, len, &j->mean[r], true, &j->var[r]);
        for (int i = 0; i < 4; i++) gn_row_affine(j, r + i);
    }
#endif
    for (; r < r1; r++) {
        const char *xr = j->x + (size_t)(r * len) * j->ex;
        if (mrt_cpu_reduce_f64(j->dx, 1, &len, xr, &red, MRT_REDUCE_MEAN, NULL, &j->mean[r], NULL) ||
            mrt_cpu_reduce_f64(j->dx, 1, &len, xr, &red, MRT_REDUCE_SUMSQ, &j->mean[r], &j->var[r], NULL))
            continue; /* not for a non-empty float row */
        gn_row_affine(j, r);
    }
}

/* y = scale * (x - mean) / sqrt(var + eps) + bias with statistics per (n, group of cpg channels) and scale/bias
   per channel (per_group: per group). Instance normalization is one channel per group. */
static mrt_status group_norm(mrt_op_ctx *ctx, int64_t groups, bool per_group)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    double eps = mrt_attr_float(ctx, "epsilon", 1e-5f);
    int64_t numel = mrt_tensor_numel(y);
    if (numel == 0) return MRT_STATUS_OK;
    int64_t n = x->shape[0], c = x->shape[1], s = 1, cpg = c / groups;
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    int64_t ng = n * groups, nc = n * c, np = per_group ? groups : c;
    double *buf = scratch(ctx);
    if (!buf) return MRT_STATUS_OUT_OF_MEMORY;
    double *mean = buf, *var = mean + ng, *A = var + ng, *B = A + nc, *scale = B + nc, *bias = scale + np;
    load_all(mrt_input(ctx, 1), scale);
    load_all(mrt_input(ctx, 2), bias);
    gn_job j = {x->dtype, y->dtype, x->data, y->data, mrt_tensor_nbytes(x) / (size_t)numel,
                mrt_tensor_nbytes(y) / (size_t)numel, groups, cpg, s, per_group, eps, scale, bias, mean, var, A, B};
    int64_t len = cpg * s;
    mrt_parallel_for(ctx, ng, len < 16384 ? 16384 / len : 1, gn_rows, &j);
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_instancenorm(mrt_op_ctx *ctx)
{
    return group_norm(ctx, mrt_input(ctx, 0)->shape[1], false);
}

static mrt_status mrt_cpu_groupnorm(mrt_op_ctx *ctx)
{
    int64_t groups = mrt_attr_int(ctx, "num_groups", 1);
    if (groups <= 0 || mrt_input(ctx, 0)->shape[1] % groups != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "num_groups = %lld does not divide the channel count",
                           (long long)groups);
    return group_norm(ctx, groups, ctx->opset < 21);
}

/* ------------------------------------------------------------------ Layer / RMS normalization */

/* Elements of parameter p (scale or bias, unidirectionally broadcast to x) expanded to doubles over x's dims
   [q, rank), q = min(axis, the first dim where p varies). */
static int64_t layernorm_param_len(const mrt_tensor *p, const mrt_tensor *x, int axis)
{
    int off = x->rank - p->rank, q = axis;
    for (int a = 0; a < axis; a++)
        if (a - off >= 0 && p->shape[a - off] != 1) {
            q = a;
            break;
        }
    int64_t n = 1;
    for (int a = q; a < x->rank; a++) n *= x->shape[a];
    return n;
}

/* Mean and 1/std per row (2 * outer doubles), then the expanded scale and bias. */
static size_t layernorm_workspace_bytes(const mrt_tensor *x, const mrt_tensor *scale, const mrt_tensor *bias, int axis)
{
    int64_t outer = 1;
    for (int a = 0; a < axis; a++) outer *= x->shape[a];
    int64_t n = 2 * outer + layernorm_param_len(scale, x, axis) + (bias ? layernorm_param_len(bias, x, axis) : 0);
    return (size_t)(n > 0 ? n : 1) * sizeof(double);
}

static mrt_status mrt_cpu_layernorm_workspace(mrt_op_ctx *ctx)
{
    bool rms = strcmp(ctx->node->op_type, "RMSNormalization") == 0;
    const mrt_tensor *x = mrt_input(ctx, 0);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    mrt_workspace_request(ctx, layernorm_workspace_bytes(x, mrt_input(ctx, 1), rms ? NULL : mrt_input(ctx, 2), axis));
    return MRT_STATUS_OK;
}

/* The values of p (unidirectionally broadcast to x) over x's dims [q, rank), q = min(axis, first dim where p
   varies), so that row r of the [outer, M] view uses e[(r*M) % len ...]; e holds layernorm_param_len. */
static int64_t expand_param(const mrt_tensor *p, const mrt_tensor *x, int axis, double *e)
{
    int r = x->rank, off = x->rank - p->rank;
    int64_t n = layernorm_param_len(p, x, axis), m = 1;
    int q = r;
    while (q > 0 && m < n) m *= x->shape[--q]; /* the first dim of the expanded block */
    int64_t pstr[MRT_MAX_RANK], idx[MRT_MAX_RANK] = {0};
    mrt_shape_strides(p->rank, p->shape, pstr);
    for (int64_t i = 0; i < n; i++) {
        int64_t pi = 0;
        for (int a = q; a < r; a++)
            if (a - off >= 0 && p->shape[a - off] != 1) pi += idx[a] * pstr[a - off];
        e[i] = mrt_load_f64(p->dtype, p->data, pi);
        for (int a = r - 1; a >= q; a--) {
            if (++idx[a] < x->shape[a]) break;
            idx[a] = 0;
        }
    }
    return n;
}

typedef struct ln_job {
    const float *x;
    float *y;
    int64_t M, ls, lb;
    const double *es, *eb;
    double *mean, *inv, eps;
    bool rms;
} ln_job;

/* Rows [r0, r1) of a float32 Layer/RMS normalization: the statistics in double over 8 fixed partial sums
   (vectorizable, and the same whatever the thread count), then the generic path's per-element formula. */
MRT_VECTORIZE_CLONES
static void ln_rows_f32(void *arg, int64_t r0, int64_t r1)
{
    const ln_job *j = (const ln_job *)arg;
    int64_t M = j->M;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = j->x + r * M;
        float *yr = j->y + r * M;
        double mu = 0;
        if (!j->rms) mu = mrt_sum8_f32(xr, M) / (double)M;
        double part[8] = {0};
        int64_t i = 0;
        for (; i + 8 <= M; i += 8)
            for (int k = 0; k < 8; k++) {
                double d = (double)xr[i + k] - mu;
                part[k] += d * d;
            }
        for (int k = 0; i < M; i++, k++) {
            double d = (double)xr[i] - mu;
            part[k] += d * d;
        }
        double var = mrt_fold8_f64(part) / (double)M;
        double iv = 1.0 / sqrt(var + j->eps);
        j->mean[r] = mu;
        j->inv[r] = iv;
        const double *s = j->es + (r * M) % j->ls, *b = j->eb ? j->eb + (r * M) % j->lb : NULL;
        if (b)
            for (int64_t e = 0; e < M; e++) yr[e] = (float)(((double)xr[e] - mu) * iv * s[e] + b[e]);
        else
            for (int64_t e = 0; e < M; e++) yr[e] = (float)(((double)xr[e] - mu) * iv * s[e]);
    }
}

static mrt_status layer_norm(mrt_op_ctx *ctx, bool rms)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *sc = mrt_input(ctx, 1), *bi = rms ? NULL : mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0), *om = rms ? NULL : mrt_output(ctx, 1), *oi = rms ? NULL : mrt_output(ctx, 2);
    double eps = mrt_attr_float(ctx, "epsilon", 1e-5f);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    int64_t outer = 1, M = 1;
    for (int a = 0; a < x->rank; a++) {
        if (a < axis) outer *= x->shape[a];
        else M *= x->shape[a];
    }
    if (outer == 0) return MRT_STATUS_OK;
    int64_t view[2] = {outer, M};
    bool red[2] = {false, true};
    double *stats = mrt_workspace(ctx, layernorm_workspace_bytes(x, sc, bi, axis));
    if (!stats) return MRT_STATUS_OUT_OF_MEMORY;
    double *es = stats + 2 * outer, *eb = NULL;
    int64_t ls = expand_param(sc, x, axis, es), lb = 0;
    if (bi) {
        eb = es + ls;
        lb = expand_param(bi, x, axis, eb);
    }
    mrt_status st = MRT_STATUS_OK;
    double *mean = stats, *inv = stats ? stats + outer : NULL;
    if (x->dtype == MRT_DTYPE_FLOAT && y->dtype == MRT_DTYPE_FLOAT && M > 0) {
        /* float32: one pass per row, rows split over the session's threads */
        ln_job j = {x->data, y->data, M, ls, lb, es, eb, mean, inv, eps, rms};
        mrt_parallel_for(ctx, outer, M < 8192 ? 8192 / M : 1, ln_rows_f32, &j);
        if (om) mrt_cpu_store_f64(om->dtype, om->data, 0, 1, outer, mean);
        if (oi) mrt_cpu_store_f64(oi->dtype, oi->data, 0, 1, outer, inv);
        return MRT_STATUS_OK;
    }
    if (!st && rms) {
        st = mrt_cpu_reduce_f64(x->dtype, 2, view, x->data, red, MRT_REDUCE_SUMSQ, NULL, inv, NULL);
        for (int64_t r = 0; !st && r < outer; r++) {
            mean[r] = 0;
            inv[r] = 1.0 / sqrt(inv[r] / (double)M + eps);
        }
    } else if (!st) {
        st = moments(x->dtype, 2, view, x->data, red, mean, inv, outer);
        for (int64_t r = 0; !st && r < outer; r++) inv[r] = 1.0 / sqrt(inv[r] + eps);
    }
    for (int64_t r = 0; !st && M > 0 && r < outer; r++) {
        const double *s = es + (r * M) % ls, *b = eb ? eb + (r * M) % lb : NULL;
        for (int64_t j0 = 0; j0 < M; j0 += CHUNK) {
            double v[CHUNK];
            int64_t m = M - j0 < CHUNK ? M - j0 : CHUNK;
            mrt_cpu_load_f64(x->dtype, x->data, r * M + j0, 1, m, v);
            for (int64_t k = 0; k < m; k++) {
                v[k] = (v[k] - mean[r]) * inv[r] * s[j0 + k];
                if (b) v[k] += b[j0 + k];
            }
            mrt_cpu_store_f64(y->dtype, y->data, r * M + j0, 1, m, v);
        }
    }
    if (!st && om) mrt_cpu_store_f64(om->dtype, om->data, 0, 1, outer, mean);
    if (!st && oi) mrt_cpu_store_f64(oi->dtype, oi->data, 0, 1, outer, inv);
    return st;
}

static mrt_status mrt_cpu_layernorm(mrt_op_ctx *ctx) { return layer_norm(ctx, false); }
static mrt_status mrt_cpu_rmsnorm(mrt_op_ctx *ctx) { return layer_norm(ctx, true); }

/* ------------------------------------------------------------------ LpNormalization, MVN */

static mrt_status mrt_cpu_lpnorm(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    bool red[MRT_MAX_RANK];
    int64_t on = 1;
    for (int a = 0; a < x->rank; a++) {
        red[a] = a == axis;
        if (a != axis) on *= x->shape[a];
    }
    if (mrt_tensor_numel(x) == 0) return MRT_STATUS_OK;
    double *A = scratch(ctx);
    if (!A) return MRT_STATUS_OUT_OF_MEMORY;
    double *B = A + on;
    mrt_reduce_kind kind = mrt_attr_int(ctx, "p", 2) == 1 ? MRT_REDUCE_L1 : MRT_REDUCE_L2;
    mrt_status st = mrt_cpu_reduce_f64(x->dtype, x->rank, x->shape, x->data, red, kind, NULL, A, NULL);
    if (!st) {
        /* a zero norm gives zeros (the spec's rule), not 0/0 */
        for (int64_t o = 0; o < on; o++) {
            A[o] = A[o] == 0 ? 0 : 1.0 / A[o];
            B[o] = 0;
        }
        mrt_cpu_affine_f64(x->dtype, x->rank, x->shape, x->data, red, A, B, y->dtype, y->data);
    }
    return st;
}

static mrt_status mrt_cpu_mvn(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    const int64_t *axes;
    int64_t n_axes;
    static const int64_t def_axes[3] = {0, 2, 3};
    if (!mrt_attr_ints(ctx, "axes", &axes, &n_axes)) {
        axes = def_axes;
        n_axes = 3;
    }
    bool red[MRT_MAX_RANK] = {false};
    for (int64_t i = 0; i < n_axes; i++) {
        int ax;
        MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[i], x->rank, &ax));
        red[ax] = true;
    }
    if (mrt_tensor_numel(x) == 0) return MRT_STATUS_OK;
    int64_t on = 1;
    for (int a = 0; a < x->rank; a++)
        if (!red[a]) on *= x->shape[a];
    double *mean = scratch(ctx);
    if (!mean) return MRT_STATUS_OUT_OF_MEMORY;
    double *var = mean + on;
    mrt_status st = moments(x->dtype, x->rank, x->shape, x->data, red, mean, var, on);
    if (!st) {
        /* the spec's function: (x - mean) / (sqrt(var) + 1e-9) */
        for (int64_t o = 0; o < on; o++) {
            var[o] = 1.0 / (sqrt(var[o]) + 1e-9);
            mean[o] = -mean[o] * var[o];
        }
        mrt_cpu_affine_f64(x->dtype, x->rank, x->shape, x->data, red, var, mean, y->dtype, y->data);
    }
    return st;
}

/* ------------------------------------------------------------------ LRN */

static mrt_status mrt_cpu_lrn(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t size = mrt_attr_int(ctx, "size", 1);
    double alpha = mrt_attr_float(ctx, "alpha", 1e-4f), beta = mrt_attr_float(ctx, "beta", 0.75f),
           bias = mrt_attr_float(ctx, "bias", 1.0f);
    int64_t n = x->shape[0], c = x->shape[1], s = 1;
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    if (n * c * s == 0) return MRT_STATUS_OK;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    double *xb = scratch(ctx);
    if (!xb) return MRT_STATUS_OUT_OF_MEMORY;
    double *sq = xb + c * CHUNK;
    double coef = alpha / (double)size;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t s0 = 0; s0 < s; s0 += CHUNK) {
            int64_t m = s - s0 < CHUNK ? s - s0 : CHUNK;
            for (int64_t ch = 0; ch < c; ch++) {
                mrt_cpu_load_f64(x->dtype, x->data, (i * c + ch) * s + s0, 1, m, xb + ch * m);
                for (int64_t k = 0; k < m; k++) sq[ch * m + k] = xb[ch * m + k] * xb[ch * m + k];
            }
            for (int64_t ch = 0; ch < c; ch++) {
                double acc[CHUNK];
                int64_t c0 = ch - lo < 0 ? 0 : ch - lo, c1 = ch + hi > c - 1 ? c - 1 : ch + hi;
                for (int64_t k = 0; k < m; k++) acc[k] = 0;
                for (int64_t cc = c0; cc <= c1; cc++)
                    for (int64_t k = 0; k < m; k++) acc[k] += sq[cc * m + k];
                for (int64_t k = 0; k < m; k++) acc[k] = xb[ch * m + k] / pow(bias + coef * acc[k], beta);
                mrt_cpu_store_f64(y->dtype, y->data, (i * c + ch) * s + s0, 1, m, acc);
            }
        }
    }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_norm[] = {
    {"", "BatchNormalization", 1, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "BatchNormalization", 6, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "BatchNormalization", 7, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "BatchNormalization", 9, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "BatchNormalization", 14, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "BatchNormalization", 15, mrt_cpu_batchnorm, NULL, NULL, NULL, MRT_KERNEL_EPILOGUE,
     mrt_cpu_batchnorm_workspace},
    {"", "InstanceNormalization", 1, mrt_cpu_instancenorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "InstanceNormalization", 6, mrt_cpu_instancenorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "InstanceNormalization", 22, mrt_cpu_instancenorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "LayerNormalization", 17, mrt_cpu_layernorm, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_layernorm_workspace},
    {"", "RMSNormalization", 23, mrt_cpu_rmsnorm, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_layernorm_workspace},
    {"", "GroupNormalization", 18, mrt_cpu_groupnorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "GroupNormalization", 21, mrt_cpu_groupnorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "LpNormalization", 1, mrt_cpu_lpnorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "LpNormalization", 22, mrt_cpu_lpnorm, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "MeanVarianceNormalization", 9, mrt_cpu_mvn, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "MeanVarianceNormalization", 13, mrt_cpu_mvn, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "LRN", 1, mrt_cpu_lrn, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {"", "LRN", 13, mrt_cpu_lrn, NULL, NULL, NULL, 0, mrt_cpu_norm_scratch_workspace},
    {0},
};
