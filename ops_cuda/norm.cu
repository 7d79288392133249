// ONNX normalizations on CUDA: BatchNormalization 1/6/7/9/14/15 (inference, spatial=0 before 9, training_mode=1 with
// its running mean/var outputs from 14), InstanceNormalization 1/6/22, LayerNormalization 17 (Mean and InvStdDev
// outputs, scale/bias broadcast unidirectionally), GroupNormalization 18/21, RMSNormalization 23, LpNormalization 1/22,
// MeanVarianceNormalization 9/13, LRN 1/13. Float16, bfloat16, float, double (parameters and statistics of their own
// float dtypes), any rank. As the CPU kernels (ops_cpu/norm.c) everything is computed in double whatever stash_type
// says, statistics in two passes (mean, then squared deviations), and float32 BatchNormalization applies its double
// coefficients as float pairs (mrt_bn_apply_f32's formula: the CPU's bits exactly). Statistics are sums in a fixed
// tree (ops_cuda/segments.cuh) where the CPU keeps running partial sums: results differ from the CPU's by rounding only.
#include "engine/epilogue.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

using namespace std;

// Mean and population variance of segment `base` (every thread of the segment gets them); rms: no mean, the
// variance is the mean square.
template <typename T>
__device__ __forceinline__ void seg_moments(const T *x, const seg_geom &g, int64_t base, int64_t lane, int64_t step,
                                            bool block, double *sh, bool rms, double *mean, double *var)
{
    double mu = 0;
    if (!rms) {
        double s = 0;
        for (int64_t e = lane; e < g.count; e += step) s += ld_f64(x, base + seg_roff(g, e));
        mu = seg_reduce<op_add>(s, block, sh) / (double)g.count;
    }
    double q = 0;
    for (int64_t e = lane; e < g.count; e += step) {
        double d = ld_f64(x, base + seg_roff(g, e)) - mu;
        q += d * d;
    }
    *mean = mu;
    *var = seg_reduce<op_add>(q, block, sh) / (double)g.count;
}

// Launch `kernel<elem_t>` for a float dtype; the body is a statement using elem_t.
#define FLOAT_LAUNCH(ctx, dt, what, ...)                                                                          \
    do {                                                                                                          \
        bool done_ = false;                                                                                       \
        [&]() -> bool {                                                                                           \
            MRT_CU_SWITCH_FLOAT(dt, {                                                                             \
                __VA_ARGS__;                                                                                      \
                done_ = true;                                                                                     \
            })                                                                                                    \
            return false;                                                                                         \
        }();                                                                                                      \
        if (!done_) return mrt_op_fail((ctx), MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(dt)); \
        MRT_CU_CHECK_LAUNCH((ctx), what);                                                                         \
    } while (0)

// ------------------------------------------------------------------ BatchNormalization

// Batch statistics per channel (training_mode): segments are channels of the [n, c, s] view.
template <typename T> __global__ void bn_stats_kernel(const T *x, seg_geom g, double *mean, double *var, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        double m, v;
        seg_moments(x, g, seg_kbase(g, o), lane, step, block, sh, false, &m, &v);
        if (lane == 0) {
            mean[o] = m;
            var[o] = v;
        }
    }
}

struct bn_params {
    const void *scale, *bias, *mean, *var; // the inputs
    int dt_sb, dt_mv;                      // their dtypes (scale/bias, mean/var)
    const double *bmean, *bvar;            // batch statistics (training) or NULL
    void *run_mean, *run_var;              // training outputs or NULL
    double eps, mom;
};

// Per channel: A = scale / sqrt(var + eps), B = bias - mean * A (mrt_bn_affine), and their float pairs; in training the
// running statistics, old * momentum + batch * (1 - momentum).
__global__ void bn_coef_kernel(bn_params p, int64_t c, double *A, double *B, mrt_bn_coef *k)
{
    MRT_CU_FOR(i, c) {
        double mean = ld_any(p.dt_mv, p.mean, i), var = ld_any(p.dt_mv, p.var, i);
        if (p.bmean) {
            if (p.run_mean) st_any(p.dt_mv, p.run_mean, i, mean * p.mom + p.bmean[i] * (1.0 - p.mom));
            if (p.run_var) st_any(p.dt_mv, p.run_var, i, var * p.mom + p.bvar[i] * (1.0 - p.mom));
            mean = p.bmean[i];
            var = p.bvar[i];
        }
        double a = ld_any(p.dt_sb, p.scale, i) / sqrt(var + p.eps);
        double b = ld_any(p.dt_sb, p.bias, i) - mean * a;
        A[i] = a;
        B[i] = b;
        mrt_bn_coef kk = {(float)a, 0.0f, (float)b, 0.0f};
        if (isfinite(kk.a_hi)) kk.a_lo = (float)(a - (double)kk.a_hi);
        if (isfinite(kk.b_hi)) kk.b_lo = (float)(b - (double)kk.b_hi);
        k[i] = kk;
    }
}

template <typename T> __global__ void bn_apply_kernel(const T *x, T *y, int64_t n, int64_t c, int64_t s, const double *A, const double *B)
{
    MRT_CU_FOR(i, n) {
        int64_t ch = (i / s) % c;
        st_f64(y, i, ld_f64(x, i) * A[ch] + B[ch]);
    }
}

__global__ void bn_apply_f32_kernel(const float *x, float *y, int64_t n, int64_t c, int64_t s, const mrt_bn_coef *k)
{
    MRT_CU_FOR(i, n) {
        mrt_bn_coef kk = k[(i / s) % c];
        y[i] = fmaf(x[i], kk.a_hi, kk.b_hi) + fmaf(x[i], kk.a_lo, kk.b_lo);
    }
}

// The per-channel terms' doubles (8 per channel, spatial=0 counting the positions as channels); none without channels
size_t bn_workspace_bytes(const mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    bool spatial = ctx->opset >= 9 || mrt_attr_int(ctx, "spatial", 1) != 0;
    int64_t c = x->shape[1];
    for (int a = 2; !spatial && a < x->rank; a++) c *= x->shape[a];
    return (size_t)(8 * c) * sizeof(double);
}

mrt_status cu_batchnorm_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, bn_workspace_bytes(ctx));
    return MRT_STATUS_OK;
}

mrt_status cu_batchnorm(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool spatial = ctx->opset >= 9 || mrt_attr_int(ctx, "spatial", 1) != 0;
    bool training = ctx->opset >= 14 && mrt_attr_int(ctx, "training_mode", 0) != 0;
    int64_t n = x->shape[0], c = x->shape[1], s = 1;
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    if (!spatial) {
        c *= s;
        s = 1;
    }
    if (c == 0) return MRT_STATUS_OK;
    double *w = (double *)mrt_workspace(ctx, bn_workspace_bytes(ctx));
    if (!w) return MRT_STATUS_OUT_OF_MEMORY;
    bn_params p = {mrt_input(ctx, 1)->data, mrt_input(ctx, 2)->data, mrt_input(ctx, 3)->data, mrt_input(ctx, 4)->data,
                   mrt_input(ctx, 1)->dtype, mrt_input(ctx, 3)->dtype, NULL, NULL, NULL, NULL,
                   mrt_attr_float(ctx, "epsilon", 1e-5f), mrt_attr_float(ctx, "momentum", 0.9f)};
    double *A = w, *B = w + c;
    mrt_bn_coef *k = (mrt_bn_coef *)(w + 2 * c);
    if (training) {
        double *bm = w + 4 * c, *bv = w + 5 * c;
        int64_t view[3] = {n, c, s};
        const bool red[3] = {true, false, true};
        seg_geom g;
        seg_init(&g, 3, view, red);
        seg_launch l = seg_plan(g);
        FLOAT_LAUNCH(ctx, x->dtype, "BatchNormalization statistics", auto *kern = bn_stats_kernel<elem_t>;
                     MRT_LAUNCH(kern, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, g, bm, bv, l.block));
        p.bmean = bm;
        p.bvar = bv;
        mrt_tensor *rm = mrt_output(ctx, 1), *rv = mrt_output(ctx, 2);
        p.run_mean = rm ? rm->data : NULL;
        p.run_var = rv ? rv->data : NULL;
    }
    MRT_LAUNCH(bn_coef_kernel, mrt_cu_blocks(c), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), p, c, A, B, k);
    MRT_CU_CHECK_LAUNCH(ctx, "BatchNormalization coefficients");
    int64_t total = n * c * s;
    if (total == 0) return MRT_STATUS_OK;
    if (x->dtype == MRT_DTYPE_FLOAT) {
        MRT_LAUNCH(bn_apply_f32_kernel, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const float *)x->data,
                   (float *)y->data, total, c, s, (const mrt_bn_coef *)k);
        MRT_CU_CHECK_LAUNCH(ctx, "BatchNormalization kernel");
        return MRT_STATUS_OK;
    }
    FLOAT_LAUNCH(ctx, x->dtype, "BatchNormalization kernel", auto *kern = bn_apply_kernel<elem_t>;
                 MRT_LAUNCH(kern, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                            (elem_t *)y->data, total, c, s, (const double *)A, (const double *)B));
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ Instance / Group normalization

// One segment per (n, group): its cpg * s elements are contiguous. y = x * a + b with a = scale / sqrt(var + eps),
// b = bias - mean * a per channel (per group before GroupNormalization-21), as the CPU computes them.
template <typename T>
__global__ void group_norm_kernel(const T *x, T *y, seg_geom g, int64_t groups, int64_t cpg, int64_t s,
                                  const void *scale, const void *bias, int dt_p, bool per_group, double eps, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        double mean, var;
        seg_moments(x, g, base, lane, step, block, sh, false, &mean, &var);
        double sd = sqrt(var + eps);
        int64_t grp = o % groups;
        for (int64_t cl = 0; cl < cpg; cl++) {
            int64_t pi = per_group ? grp : grp * cpg + cl;
            double a = ld_any(dt_p, scale, pi) / sd, b = ld_any(dt_p, bias, pi) - mean * a;
            for (int64_t e = lane; e < s; e += step) {
                int64_t i = base + cl * s + e;
                st_f64(y, i, ld_f64(x, i) * a + b);
            }
        }
    }
}

mrt_status group_norm(mrt_op_ctx *ctx, int64_t groups, bool per_group)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *sc = mrt_input(ctx, 1), *bi = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    int64_t n = x->shape[0], c = x->shape[1], s = 1;
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    int64_t view[3] = {n, groups, c / groups * s};
    const bool red[3] = {false, false, true};
    seg_geom g;
    seg_init(&g, 3, view, red);
    seg_launch l = seg_plan(g);
    double eps = mrt_attr_float(ctx, "epsilon", 1e-5f);
    FLOAT_LAUNCH(ctx, x->dtype, "group normalization kernel", auto *k = group_norm_kernel<elem_t>;
                 MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, g,
                            groups, c / groups, s, (const void *)sc->data, (const void *)bi->data, (int)sc->dtype,
                            per_group, eps, l.block));
    return MRT_STATUS_OK;
}

mrt_status cu_instancenorm(mrt_op_ctx *ctx) { return group_norm(ctx, mrt_input(ctx, 0)->shape[1], false); }

mrt_status cu_groupnorm(mrt_op_ctx *ctx)
{
    int64_t groups = mrt_attr_int(ctx, "num_groups", 1);
    if (groups <= 0 || mrt_input(ctx, 0)->shape[1] % groups != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "num_groups = %lld does not divide the channel count",
                           (long long)groups);
    return group_norm(ctx, groups, ctx->opset < 21);
}

// ------------------------------------------------------------------ Layer / RMS normalization

// A parameter's element for X's element i: dense over the row (the usual [..., M] parameter) or through broadcast
// strides (any other shape that broadcasts to X).
struct ln_param {
    const void *p;
    int dt;
    bool dense;
    int k; // its slot in the mrt_cu_bcast
};

__device__ __forceinline__ double ln_param_at(const ln_param &p, const mrt_cu_bcast &bc, int64_t i, int64_t j)
{
    if (p.dense) return ld_any(p.dt, p.p, j);
    int64_t off[3];
    mrt_cu_bcast_offsets(bc, i, p.k + 1, off);
    return ld_any(p.dt, p.p, off[p.k]);
}

// One segment per row of the [outer, M] view: y = (x - mean) / sqrt(var + eps) * scale (+ bias), and the row's mean
// and 1/std into the optional outputs (their stash dtype).
template <typename T, typename TY>
__global__ void layer_norm_kernel(const T *x, TY *y, seg_geom g, int64_t M, ln_param ps, ln_param pb, bool has_bias,
                                  mrt_cu_bcast bc, bool rms, double eps, void *om, void *oi, int dt_stat, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = o * M;
        double mean, var;
        seg_moments(x, g, base, lane, step, block, sh, rms, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t e = lane; e < M; e += step) {
            double v = (ld_f64(x, base + e) - mean) * inv * ln_param_at(ps, bc, base + e, e);
            if (has_bias) v += ln_param_at(pb, bc, base + e, e);
            st_f64(y, base + e, v);
        }
        if (lane == 0) {
            if (om) st_any(dt_stat, om, o, mean);
            if (oi) st_any(dt_stat, oi, o, inv);
        }
    }
}

// Whether parameter p indexes X's rows densely: its dims before `axis` are all 1 and the rest are X's.
bool ln_dense(const mrt_tensor *p, const mrt_tensor *x, int axis)
{
    for (int a = 0; a < p->rank; a++) {
        int xa = a + x->rank - p->rank;
        if (xa < axis ? p->shape[a] != 1 : p->shape[a] != x->shape[xa]) return false;
    }
    return true;
}

mrt_status layer_norm(mrt_op_ctx *ctx, bool rms)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *sc = mrt_input(ctx, 1), *bi = rms ? NULL : mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0), *om = rms ? NULL : mrt_output(ctx, 1), *oi = rms ? NULL : mrt_output(ctx, 2);
    double eps = mrt_attr_float(ctx, "epsilon", 1e-5f);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    int64_t view[2] = {1, 1};
    for (int a = 0; a < x->rank; a++) view[a < axis ? 0 : 1] *= x->shape[a];
    if (view[0] == 0) return MRT_STATUS_OK;
    const bool red[2] = {false, true};
    seg_geom g;
    seg_init(&g, 2, view, red);
    seg_launch l = seg_plan(g); // rows of M = 0 are segments too: their statistics are NaN, as on the CPU
    const mrt_tensor *params[2] = {sc, bi ? bi : sc};
    mrt_cu_bcast bc;
    mrt_cu_bcast_init(&bc, x, 2, params);
    ln_param ps = {sc->data, (int)sc->dtype, ln_dense(sc, x, axis), 0};
    ln_param pb = {bi ? bi->data : NULL, bi ? (int)bi->dtype : 0, bi ? ln_dense(bi, x, axis) : true, 1};
    void *omd = om ? om->data : NULL, *oid = oi ? oi->data : NULL;
    int dt_stat = om ? (int)om->dtype : oi ? (int)oi->dtype : (int)MRT_DTYPE_FLOAT;
    mrt_dtype dy = y->dtype;
    FLOAT_LAUNCH(ctx, x->dtype, "layer normalization kernel", typedef elem_t x_t; [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(dy, {
            auto *k = layer_norm_kernel<x_t, elem_t>;
            MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const x_t *)x->data, (elem_t *)y->data, g, view[1], ps, pb,
                       bi != NULL, bc, rms, eps, omd, oid, dt_stat, l.block);
        })
        return false;
    }());
    return MRT_STATUS_OK;
}

mrt_status cu_layernorm(mrt_op_ctx *ctx) { return layer_norm(ctx, false); }
mrt_status cu_rmsnorm(mrt_op_ctx *ctx) { return layer_norm(ctx, true); }

// ------------------------------------------------------------------ LpNormalization, MeanVarianceNormalization

// Segments over the reduced axes. Lp: y = x / ||x||_p (a zero norm gives zeros); MVN: y = (x - mean) / (std + 1e-9),
// as the CPU's affine x * A + B.
template <typename T> __global__ void seg_norm_kernel(const T *x, T *y, seg_geom g, int p, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        double A, B;
        if (p == 0) {
            double mean, var;
            seg_moments(x, g, base, lane, step, block, sh, false, &mean, &var);
            A = 1.0 / (sqrt(var) + 1e-9);
            B = -mean * A;
        } else {
            double s = 0;
            for (int64_t e = lane; e < g.count; e += step) {
                double v = ld_f64(x, base + seg_roff(g, e));
                s += p == 1 ? fabs(v) : v * v;
            }
            s = seg_reduce<op_add>(s, block, sh);
            if (p == 2) s = sqrt(s);
            A = s == 0 ? 0 : 1.0 / s;
            B = 0;
        }
        for (int64_t e = lane; e < g.count; e += step) {
            int64_t i = base + seg_roff(g, e);
            st_f64(y, i, ld_f64(x, i) * A + B);
        }
    }
}

mrt_status run_seg_norm(mrt_op_ctx *ctx, const bool *red, int p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(x) == 0) return MRT_STATUS_OK;
    seg_geom g;
    seg_init(&g, x->rank, x->shape, red);
    seg_launch l = seg_plan(g);
    FLOAT_LAUNCH(ctx, x->dtype, "normalization kernel", auto *k = seg_norm_kernel<elem_t>;
                 MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, g,
                            p, l.block));
    return MRT_STATUS_OK;
}

mrt_status cu_lpnorm(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    bool red[MRT_MAX_RANK] = {false};
    red[axis] = true;
    return run_seg_norm(ctx, red, mrt_attr_int(ctx, "p", 2) == 1 ? 1 : 2);
}

mrt_status cu_mvn(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
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
    return run_seg_norm(ctx, red, 0);
}

// ------------------------------------------------------------------ LRN

// One thread per element: the window's squares summed in channel order, as the CPU does.
template <typename T>
__global__ void lrn_kernel(const T *x, T *y, int64_t total, int64_t c, int64_t s, int64_t lo, int64_t hi, double coef,
                           double bias, double beta)
{
    MRT_CU_FOR(i, total) {
        int64_t ch = (i / s) % c, c0 = ch - lo < 0 ? 0 : ch - lo, c1 = ch + hi > c - 1 ? c - 1 : ch + hi;
        int64_t i0 = i - ch * s;
        double acc = 0;
        for (int64_t cc = c0; cc <= c1; cc++) {
            double v = ld_f64(x, i0 + cc * s);
            acc += v * v;
        }
        st_f64(y, i, ld_f64(x, i) / pow(bias + coef * acc, beta));
    }
}

mrt_status cu_lrn(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t size = mrt_attr_int(ctx, "size", 1);
    double alpha = mrt_attr_float(ctx, "alpha", 1e-4f), beta = mrt_attr_float(ctx, "beta", 0.75f),
           bias = mrt_attr_float(ctx, "bias", 1.0f);
    int64_t c = x->shape[1], s = 1, total = mrt_tensor_numel(x);
    for (int a = 2; a < x->rank; a++) s *= x->shape[a];
    if (total == 0) return MRT_STATUS_OK;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    FLOAT_LAUNCH(ctx, x->dtype, "LRN kernel", auto *k = lrn_kernel<elem_t>;
                 MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                            (elem_t *)y->data, total, c, s, lo, hi, alpha / (double)size, bias, beta));
    return MRT_STATUS_OK;
}

// Every input and output a float tensor (infer has checked X; the parameters may be of other float dtypes).
bool cu_norm_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        if (t && !seg_float_dtype(t->dtype))
            return snprintf(why, len, "input %d has dtype %s, not supported by the CUDA kernel", i, mrt_dtype_name(t->dtype)), false;
    }
    return true;
}

} // namespace

#define N(op, v, fn) MRT_CU_ROW_S(op, v, fn, cu_norm_supports, MRT_KERNEL_WRITES_ALL)
#define BN(v) MRT_CU_ROW_SW("BatchNormalization", v, cu_batchnorm, cu_norm_supports, MRT_KERNEL_WRITES_ALL, cu_batchnorm_workspace)
extern "C" const mrt_kernel mrt_cuda_kernels_norm[] = {
    BN(1), BN(6), BN(7), BN(9), BN(14), BN(15),
    N("InstanceNormalization", 1, cu_instancenorm), N("InstanceNormalization", 6, cu_instancenorm),
    N("InstanceNormalization", 22, cu_instancenorm),
    N("LayerNormalization", 17, cu_layernorm),
    N("RMSNormalization", 23, cu_rmsnorm),
    N("GroupNormalization", 18, cu_groupnorm), N("GroupNormalization", 21, cu_groupnorm),
    N("LpNormalization", 1, cu_lpnorm), N("LpNormalization", 22, cu_lpnorm),
    N("MeanVarianceNormalization", 9, cu_mvn), N("MeanVarianceNormalization", 13, cu_mvn),
    N("LRN", 1, cu_lrn), N("LRN", 13, cu_lrn),
    {0},
};
#undef N
#undef BN
