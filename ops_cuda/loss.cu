// ONNX NegativeLogLikelihoodLoss 12/13/22 and SoftmaxCrossEntropyLoss 12/13 on CUDA (float16, bfloat16, float, double;
// int32/int64 targets; any rank; every reduction, weights, ignore_index, SCE's log_prob output). As the CPU kernel
// (ops_cpu/loss.c): in double, per element loss = -logp[n, t, d] * w[t] (0 where t == ignore_index), mean divides by
// the sum of the weights not ignored (0/0 = NaN). One thread per (n, d) position computes the log-softmax and the
// element losses; one block then sums them in a fixed order (thread t takes positions t, t + 256, ..., then a shared
// tree), so runs are bit-identical; the order differs from the CPU's running sum by an ulp or so. A target outside
// [0, C) fails the node naming the first such position, as on the CPU (one device-to-host read per run).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

const int LOSS_THREADS = 256;

struct loss_geom {
    int64_t n, c, d;
    int xdt, wdt, tdt;      // dtypes: input scores, weights, targets
    bool has_ignore, none, mean;
    int64_t ignore;
};

__device__ __forceinline__ int64_t ld_target(int dt, const void *t, int64_t i)
{
    return dt == MRT_DTYPE_INT64 ? ((const int64_t *)t)[i] : (int64_t)((const int32_t *)t)[i];
}

// Log-softmax over the class axis for one (n, d) position, in the CPU's order (maximum, then the sum of the exps).
__global__ void log_softmax_kernel(const void *x, double *logp, void *log_prob, loss_geom g)
{
    MRT_CU_FOR(p, g.n * g.d)
    {
        int64_t i = p / g.d, k = p % g.d, base = i * g.c * g.d + k;
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < g.c; j++) mx = fmax(mx, ld_any(g.xdt, x, base + j * g.d));
        for (int64_t j = 0; j < g.c; j++) s += exp(ld_any(g.xdt, x, base + j * g.d) - mx);
        double lse = mx + log(s);
        for (int64_t j = 0; j < g.c; j++) {
            int64_t at = base + j * g.d;
            double v = ld_any(g.xdt, x, at) - lse;
            logp[at] = v;
            if (log_prob) st_any(g.xdt, log_prob, at, v);
        }
    }
}

// Each position's loss and weight (into loss/wt, and y for reduction none); bad[p] = p for a target out of range,
// else INT64_MAX. logp is the scores themselves (NLL, dtype g.xdt) or the doubles of log_softmax_kernel (SCE).
__global__ void element_loss_kernel(const void *logp, bool logp_double, const void *target, const void *w, void *y,
                                    double *loss, double *wt, int64_t *bad, loss_geom g)
{
    MRT_CU_FOR(p, g.n * g.d)
    {
        int64_t i = p / g.d, k = p % g.d, cls = ld_target(g.tdt, target, p);
        double l = 0, ww = 0;
        bad[p] = INT64_MAX;
        if (!(g.has_ignore && cls == g.ignore)) {
            if (cls < 0 || cls >= g.c) {
                bad[p] = p;
            } else {
                int64_t at = (i * g.c + cls) * g.d + k;
                ww = w ? ld_any(g.wdt, w, cls) : 1.0;
                l = -(logp_double ? ((const double *)logp)[at] : ld_any(g.xdt, logp, at)) * ww;
            }
        }
        if (g.none) st_any(g.xdt, y, p, l);
        loss[p] = l;
        wt[p] = ww;
    }
}

// One block: the sums of loss and wt and the first bad position, each in a fixed tree; y[0] unless reduction none.
__global__ void loss_reduce_kernel(const double *loss, const double *wt, const int64_t *bad, int64_t count, void *y,
                                   int64_t *bad_out, loss_geom g)
{
    __shared__ double sl[LOSS_THREADS], sw[LOSS_THREADS];
    __shared__ int64_t sb[LOSS_THREADS];
    int t = threadIdx.x;
    double a = 0, b = 0;
    int64_t m = INT64_MAX;
    for (int64_t p = t; p < count; p += LOSS_THREADS) {
        a += loss[p];
        b += wt[p];
        m = bad[p] < m ? bad[p] : m;
    }
    sl[t] = a;
    sw[t] = b;
    sb[t] = m;
    __syncthreads();
    for (int s = LOSS_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            sl[t] += sl[t + s];
            sw[t] += sw[t + s];
            sb[t] = sb[t + s] < sb[t] ? sb[t + s] : sb[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        *bad_out = sb[0];
        if (!g.none) st_any(g.xdt, y, 0, g.mean ? (sw[0] != 0 ? sl[0] / sw[0] : NAN) : sl[0]);
    }
}

bool is_sce(const mrt_op_ctx *ctx) { return strcmp(ctx->node->op_type, "SoftmaxCrossEntropyLoss") == 0; }

// The workspace cu_loss fetches: [logp (SCE)][loss][wt][bad][bad_out], 8 bytes each; none when it returns early
size_t loss_workspace_bytes(const mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t count = x->shape[0]; // N * d1 * ...
    for (int i = 2; i < x->rank; i++) count *= x->shape[i];
    if (count == 0 && strcmp(mrt_attr_string(ctx, "reduction", "mean"), "none") == 0) return 0;
    return ((is_sce(ctx) ? (size_t)mrt_tensor_numel(x) : 0) + 3 * (size_t)count + 1) * 8;
}

mrt_status cu_loss_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, loss_workspace_bytes(ctx));
    return MRT_STATUS_OK;
}

mrt_status cu_loss(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *t = mrt_input(ctx, 1), *w = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool sce = is_sce(ctx);
    mrt_tensor *log_prob = sce ? mrt_output(ctx, 1) : NULL;
    loss_geom g{};
    g.n = x->shape[0];
    g.c = x->shape[1];
    g.d = 1;
    for (int i = 2; i < x->rank; i++) g.d *= x->shape[i];
    g.xdt = x->dtype;
    g.wdt = w ? w->dtype : x->dtype;
    g.tdt = t->dtype;
    const char *red = mrt_attr_string(ctx, "reduction", "mean");
    g.none = strcmp(red, "none") == 0;
    g.mean = strcmp(red, "mean") == 0;
    const mrt_attr *ig = mrt_node_attr(ctx->node, "ignore_index");
    g.has_ignore = ig && ig->type == MRT_ATTR_INT;
    g.ignore = g.has_ignore ? ig->i : 0;
    int64_t total = g.n * g.c * g.d, count = g.n * g.d;
    if (g.none && count == 0) return MRT_STATUS_OK;

    size_t n_logp = sce ? (size_t)total : 0;
    char *ws = (char *)mrt_workspace(ctx, loss_workspace_bytes(ctx));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    double *logp = (double *)ws, *loss = logp + n_logp, *wt = loss + count;
    int64_t *bad = (int64_t *)(wt + count), *bad_out = bad + count;
    cudaStream_t s = mrt_cu_stream(ctx);
    if (sce && count > 0)
        MRT_LAUNCH(log_softmax_kernel, mrt_cu_blocks(count), MRT_CU_THREADS, 0, s, (const void *)x->data, logp,
                   log_prob ? log_prob->data : (void *)NULL, g);
    if (count > 0)
        MRT_LAUNCH(element_loss_kernel, mrt_cu_blocks(count), MRT_CU_THREADS, 0, s,
                   sce ? (const void *)logp : (const void *)x->data, sce, (const void *)t->data,
                   w ? (const void *)w->data : (const void *)NULL, y->data, loss, wt, bad, g);
    MRT_LAUNCH(loss_reduce_kernel, 1, LOSS_THREADS, 0, s, (const double *)loss, (const double *)wt,
               (const int64_t *)bad, count, y->data, bad_out, g);
    MRT_CU_CHECK_LAUNCH(ctx, "loss kernels");
    int64_t first_bad = INT64_MAX;
    cudaError_t e = cudaMemcpyAsync(&first_bad, bad_out, sizeof first_bad, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the target check: %s", cudaGetErrorString(e));
    if (first_bad != INT64_MAX) {
        int64_t cls = 0;
        size_t tb = t->dtype == MRT_DTYPE_INT64 ? 8 : 4;
        unsigned char buf[8];
        e = cudaMemcpyAsync(buf, (const char *)t->data + first_bad * tb, tb, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e == cudaSuccess) cls = mrt_load_i64(t->dtype, buf, 0);
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "target %lld at index %lld is not a class in [0, %lld)",
                           (long long)cls, (long long)first_bad, (long long)g.c);
    }
    return MRT_STATUS_OK;
}

bool cu_loss_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *t = mrt_input(ctx, 1), *w = mrt_input(ctx, 2);
    if (!x || !seg_float_dtype(x->dtype) || (w && !seg_float_dtype(w->dtype)))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    if (!t || (t->dtype != MRT_DTYPE_INT32 && t->dtype != MRT_DTYPE_INT64))
        return snprintf(why, len, "target dtype %s is not supported by the CUDA kernel", t ? mrt_dtype_name(t->dtype) : "?"), false;
    return true;
}

} // namespace

// Outputs are not all written when a target is bad (the node fails then), so no MRT_KERNEL_WRITES_ALL.
extern "C" const mrt_kernel mrt_cuda_kernels_loss[] = {
    MRT_CU_ROW_SW("NegativeLogLikelihoodLoss", 12, cu_loss, cu_loss_supports, 0, cu_loss_workspace),
    MRT_CU_ROW_SW("SoftmaxCrossEntropyLoss", 12, cu_loss, cu_loss_supports, 0, cu_loss_workspace),
    {0},
};
