// ONNX RNN, GRU, LSTM 7/14/22 on CUDA: every attribute the CPU kernel (ops_cpu/rnn.c, rnn_typed.h) takes (directions,
// activations with alpha/beta, clip, sequence_lens, initial states, peepholes, input_forget, linear_before_reset,
// layout 0/1); float, double, and float16/bfloat16 computed in float as there. The same steps in the same order: X·W^T
// of every step in one product, then per step H·R^T (plain GRU: r (.) H then ·Rh^T) and the gate arithmetic in double,
// states kept in the compute type. The products are direct kernels (one thread per output, sums in double, rounded to
// the compute type) where the CPU calls BLAS, so float results differ by float rounding. The host drives the steps (a
// few launches each) and reads sequence_lens once to validate them as the CPU does.
#include <cmath>

#include "engine/opdef/rnn.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/cuda_common.cuh"

namespace {

__device__ __forceinline__ double act_apply(const mrt_rnn_act &a, double x)
{
    switch (a.kind) {
    case MRT_RNN_ACT_RELU: return x > 0 ? x : 0;
    case MRT_RNN_ACT_TANH: return tanh(x);
    case MRT_RNN_ACT_SIGMOID: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case MRT_RNN_ACT_AFFINE: return a.alpha * x + a.beta;
    case MRT_RNN_ACT_LEAKYRELU: return x >= 0 ? x : a.alpha * x;
    case MRT_RNN_ACT_THRESHOLDEDRELU: return x > a.alpha ? x : 0;
    case MRT_RNN_ACT_SCALEDTANH: return a.alpha * tanh(a.beta * x);
    case MRT_RNN_ACT_HARDSIGMOID: {
        double v = a.alpha * x + a.beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case MRT_RNN_ACT_ELU: return x >= 0 ? x : a.alpha * (exp(x) - 1);
    case MRT_RNN_ACT_SOFTSIGN: return x / (1 + fabs(x));
    case MRT_RNN_ACT_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    }
    return x;
}

__device__ __forceinline__ double clipv(const mrt_rnn_desc &d, double v)
{
    if (!d.has_clip) return v;
    return v > d.clip ? d.clip : v < -d.clip ? -d.clip : v;
}

__host__ __device__ __forceinline__ int64_t x_row(const mrt_rnn_desc &d, int64_t t, int64_t b)
{
    return d.layout ? b * d.seq + t : t * d.batch + b;
}

__host__ __device__ __forceinline__ int64_t y_off(const mrt_rnn_desc &d, int64_t t, int dir, int64_t b)
{
    return (d.layout ? (b * d.seq + t) * d.num_dir + dir : (t * d.num_dir + dir) * d.batch + b) * d.hidden;
}

__host__ __device__ __forceinline__ int64_t state_off(const mrt_rnn_desc &d, int dir, int64_t b)
{
    return (d.layout ? b * d.num_dir + dir : dir * d.batch + b) * d.hidden;
}

// C[i, c_off + j] = sum_k A[i, k] * B[b_off + j, k] (A: m x k with lda, B row-major with ldb; C with ldc), in double.
template <typename TA, typename TB, typename TC>
__global__ void gemm_nt_kernel(const TA *a, int64_t lda, const TB *b, int64_t ldb, int64_t b_off, TC *c, int64_t ldc,
                               int64_t c_off, int64_t m, int64_t n, int64_t k)
{
    MRT_CU_FOR(e, m * n)
    {
        int64_t i = e / n, j = e % n;
        double s = 0;
        for (int64_t p = 0; p < k; p++) s += (double)mrt_cu_load(a, i * lda + p) * (double)mrt_cu_load(b, (b_off + j) * ldb + p);
        c[i * ldc + c_off + j] = (TC)s;
    }
}

struct rnn_bufs {
    void *xw, *hr, *h, *c, *rh; // compute type
    double *bias, *rbh;
    int64_t *lens;
};

// Wb + Rb folded into one bias (GRU's Rbh apart under linear_before_reset), initial h and c.
template <typename TI, typename TS>
__global__ void init_kernel(mrt_rnn_desc d, int dir, const TI *bw, const TI *h0, const TI *c0, rnn_bufs w)
{
    const int64_t H = d.hidden, GH = d.gates * H;
    const TI *Wb = bw ? bw + dir * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
    MRT_CU_FOR(k, GH)
    {
        w.bias[k] = Wb ? (double)mrt_cu_load(Wb, k) + (double)mrt_cu_load(Rb, k) : 0.0;
        if (d.linear_before_reset && k >= 2 * H && k < 3 * H) {
            w.bias[k] = Wb ? (double)mrt_cu_load(Wb, k) : 0.0;
            w.rbh[k - 2 * H] = Rb ? (double)mrt_cu_load(Rb, k) : 0.0;
        }
    }
    MRT_CU_FOR(e, d.batch * H)
    {
        int64_t b = e / H, j = e % H, at = state_off(d, dir, b) + j;
        ((TS *)w.h)[e] = h0 ? (TS)mrt_cu_load(h0, at) : (TS)0;
        if (w.c) ((TS *)w.c)[e] = c0 ? (TS)mrt_cu_load(c0, at) : (TS)0;
    }
}

// Plain GRU's z and r gates (into hr's first 2H columns) and r (.) H(t-1) into rh.
template <typename TS> __global__ void gru_gates_kernel(mrt_rnn_desc d, int dir, int64_t s, rnn_bufs w)
{
    const int64_t H = d.hidden, GH = d.gates * H;
    const bool backwards = dir == 1 || d.reverse;
    const mrt_rnn_act *act = d.acts[dir];
    TS *hr = (TS *)w.hr, *rh = (TS *)w.rh, *h = (TS *)w.h;
    const TS *xw = (const TS *)w.xw;
    MRT_CU_FOR(e, d.batch * H)
    {
        int64_t b = e / H, j = e % H;
        if (s >= w.lens[b]) {
            rh[e] = 0;
            continue;
        }
        int64_t t = backwards ? w.lens[b] - 1 - s : s;
        const TS *xr = xw + x_row(d, t, b) * GH;
        TS *g = hr + b * GH;
        double z = act_apply(act[0], clipv(d, (double)xr[j] + (double)g[j] + w.bias[j]));
        double r = act_apply(act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + w.bias[H + j]));
        g[j] = (TS)z;
        g[H + j] = (TS)r;
        rh[e] = (TS)(r * (double)h[e]);
    }
}

template <typename TI, typename TS>
__global__ void update_kernel(mrt_rnn_desc d, int dir, int64_t s, const TI *peep, TI *y, rnn_bufs w)
{
    const int64_t H = d.hidden, GH = d.gates * H;
    const bool backwards = dir == 1 || d.reverse, gru_split = d.cell == MRT_RNN_CELL_GRU && !d.linear_before_reset;
    const mrt_rnn_act *act = d.acts[dir];
    const TI *P = peep ? peep + dir * 3 * H : NULL;
    const TS *xw = (const TS *)w.xw, *hr = (const TS *)w.hr;
    TS *h = (TS *)w.h, *c = (TS *)w.c;
    MRT_CU_FOR(e, d.batch * H)
    {
        int64_t b = e / H, j = e % H;
        if (s >= w.lens[b]) continue;
        int64_t t = backwards ? w.lens[b] - 1 - s : s;
        const TS *xr = xw + x_row(d, t, b) * GH, *g = hr + b * GH;
        double hn;
        if (d.cell == MRT_RNN_CELL_RNN) {
            hn = act_apply(act[0], clipv(d, (double)xr[j] + (double)g[j] + w.bias[j]));
        } else if (d.cell == MRT_RNN_CELL_GRU) {
            double z, r, pre;
            if (gru_split) {
                z = (double)g[j];
                r = (double)g[H + j];
                pre = (double)xr[2 * H + j] + (double)g[2 * H + j] + w.bias[2 * H + j];
            } else {
                z = act_apply(act[0], clipv(d, (double)xr[j] + (double)g[j] + w.bias[j]));
                r = act_apply(act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + w.bias[H + j]));
                pre = (double)xr[2 * H + j] + w.bias[2 * H + j] + r * ((double)g[2 * H + j] + w.rbh[j]);
            }
            double hh = act_apply(act[1], clipv(d, pre));
            hn = (1 - z) * hh + z * (double)h[e];
        } else { // gate order i, o, f, c; peepholes i, o, f
            double cp = (double)c[e];
            double pi = P ? (double)mrt_cu_load(P, j) : 0, po = P ? (double)mrt_cu_load(P, H + j) : 0;
            double pf = P ? (double)mrt_cu_load(P, 2 * H + j) : 0;
            double ig = act_apply(act[0], clipv(d, (double)xr[j] + (double)g[j] + w.bias[j] + pi * cp));
            double fg = d.input_forget ? 1 - ig
                                       : act_apply(act[0], clipv(d, (double)xr[2 * H + j] + (double)g[2 * H + j] +
                                                                        w.bias[2 * H + j] + pf * cp));
            double cg = act_apply(act[1], clipv(d, (double)xr[3 * H + j] + (double)g[3 * H + j] + w.bias[3 * H + j]));
            double cn = fg * cp + ig * cg;
            double og = act_apply(act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + w.bias[H + j] + po * cn));
            hn = og * act_apply(act[2], cn);
            c[e] = (TS)cn; // like ONNX Runtime, h(Ct) takes the unclipped cell state
        }
        h[e] = (TS)hn;
        if (y) mrt_cu_store(y, y_off(d, t, dir, b) + j, h[e]);
    }
}

// Final states; a sequence of length 0 reports zeros.
template <typename TI, typename TS> __global__ void final_kernel(mrt_rnn_desc d, int dir, TI *yh, TI *yc, rnn_bufs w)
{
    const int64_t H = d.hidden;
    MRT_CU_FOR(e, d.batch * H)
    {
        int64_t b = e / H, j = e % H, at = state_off(d, dir, b) + j;
        bool any = w.lens[b] > 0;
        if (yh) mrt_cu_store(yh, at, any ? ((const TS *)w.h)[e] : (TS)0);
        if (yc) mrt_cu_store(yc, at, any ? ((const TS *)w.c)[e] : (TS)0);
    }
}

template <typename TI> mrt_status run_rnn(mrt_op_ctx *ctx, const mrt_rnn_desc &d, const int64_t *lens_host)
{
    typedef typename mrt_cu_compute<TI>::type TS;
    const int64_t H = d.hidden, G = d.gates, GH = G * H, B = d.batch, S = d.seq, IN = d.input;
    const bool lstm = d.cell == MRT_RNN_CELL_LSTM, gru_split = d.cell == MRT_RNN_CELL_GRU && !d.linear_before_reset;
    const mrt_tensor *in[8];
    for (int i = 0; i < 8; i++) in[i] = i < ctx->n_inputs ? mrt_input(ctx, i) : NULL;
    mrt_tensor *y = mrt_output(ctx, 0), *yh = mrt_output(ctx, 1), *yc = lstm ? mrt_output(ctx, 2) : NULL;
    // workspace: xw [S*B*GH], hr [B*GH], h, c, rh [B*H] in TS; bias [GH], rbh [H] in double; lens [B]
    size_t ts = sizeof(TS), off = 0, at[8];
    size_t sizes[8] = {(size_t)(S * B * GH) * ts, (size_t)(B * GH) * ts, (size_t)(B * H) * ts, (size_t)(B * H) * ts,
                       (size_t)(B * H) * ts, (size_t)GH * 8, (size_t)H * 8, (size_t)B * 8};
    for (int i = 0; i < 8; i++) {
        at[i] = off;
        off += (sizes[i] + 63) / 64 * 64;
    }
    char *ws = (char *)mrt_workspace(ctx, off ? off : 64);
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    rnn_bufs w = {ws + at[0], ws + at[1], ws + at[2], lstm ? ws + at[3] : NULL, ws + at[4],
                  (double *)(ws + at[5]), (double *)(ws + at[6]), (int64_t *)(ws + at[7])};
    cudaStream_t st = mrt_cu_stream(ctx);
    cudaError_t e = cudaMemcpyAsync(w.lens, lens_host, (size_t)B * 8, cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st); // lens_host lives on the caller's stack
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "sequence_lens: %s", cudaGetErrorString(e));
    const TI *x = (const TI *)in[0]->data, *W = (const TI *)in[1]->data, *R = (const TI *)in[2]->data;
    const TI *bias = in[3] ? (const TI *)in[3]->data : NULL, *h0 = in[5] ? (const TI *)in[5]->data : NULL;
    const TI *c0 = lstm && in[6] ? (const TI *)in[6]->data : NULL, *peep = lstm && in[7] ? (const TI *)in[7]->data : NULL;
    auto *gemm_x = gemm_nt_kernel<TI, TI, TS>;
    auto *gemm_h = gemm_nt_kernel<TS, TI, TS>;
    auto *init = init_kernel<TI, TS>;
    auto *gates = gru_gates_kernel<TS>;
    auto *update = update_kernel<TI, TS>;
    auto *fin = final_kernel<TI, TS>;
    unsigned bh_blocks = mrt_cu_blocks(B * H);
    for (int dir = 0; dir < d.num_dir; dir++) {
        const TI *Wd = W + dir * GH * IN, *Rd = R + dir * GH * H;
        if (S * B * GH > 0)
            MRT_LAUNCH(gemm_x, mrt_cu_blocks(S * B * GH), MRT_CU_THREADS, 0, st, x, IN, Wd, IN, (int64_t)0, (TS *)w.xw,
                       GH, (int64_t)0, S * B, GH, IN);
        MRT_LAUNCH(init, mrt_cu_blocks(GH > B * H ? GH : B * H), MRT_CU_THREADS, 0, st, d, dir, bias, h0, c0, w);
        for (int64_t s = 0; s < S && B * H > 0; s++) {
            MRT_LAUNCH(gemm_h, mrt_cu_blocks(B * (gru_split ? 2 * H : GH)), MRT_CU_THREADS, 0, st, (const TS *)w.h, H,
                       Rd, H, (int64_t)0, (TS *)w.hr, GH, (int64_t)0, B, gru_split ? 2 * H : GH, H);
            if (gru_split) {
                MRT_LAUNCH(gates, bh_blocks, MRT_CU_THREADS, 0, st, d, dir, s, w);
                MRT_LAUNCH(gemm_h, bh_blocks, MRT_CU_THREADS, 0, st, (const TS *)w.rh, H, Rd, H, 2 * H, (TS *)w.hr, GH,
                           2 * H, B, H, H);
            }
            MRT_LAUNCH(update, bh_blocks, MRT_CU_THREADS, 0, st, d, dir, s, peep, y ? (TI *)y->data : (TI *)NULL, w);
        }
        if (B * H > 0)
            MRT_LAUNCH(fin, bh_blocks, MRT_CU_THREADS, 0, st, d, dir, yh ? (TI *)yh->data : (TI *)NULL,
                       yc ? (TI *)yc->data : (TI *)NULL, w);
        MRT_CU_CHECK_LAUNCH(ctx, "rnn kernels");
    }
    return MRT_STATUS_OK;
}

mrt_status cu_rnn(mrt_op_ctx *ctx)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    const mrt_tensor *sl = ctx->n_inputs > 4 ? mrt_input(ctx, 4) : NULL;
    int64_t *lens = (int64_t *)malloc((size_t)(d.batch + 1) * sizeof *lens);
    if (!lens) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    mrt_status st = MRT_STATUS_OK;
    if (sl && d.batch > 0) { // validated on the host, as the CPU kernel does
        size_t eb = (size_t)mrt_dtype_bits(sl->dtype) / 8;
        void *buf = malloc((size_t)d.batch * eb);
        cudaError_t e = buf ? cudaMemcpyAsync(buf, sl->data, (size_t)d.batch * eb, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx))
                            : cudaErrorMemoryAllocation;
        if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
        if (e != cudaSuccess) st = mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading sequence_lens: %s", cudaGetErrorString(e));
        for (int64_t b = 0; !st && b < d.batch; b++) lens[b] = mrt_load_i64(sl->dtype, buf, b);
        free(buf);
    } else {
        for (int64_t b = 0; b < d.batch; b++) lens[b] = d.seq;
    }
    for (int64_t b = 0; !st && b < d.batch; b++)
        if (lens[b] < 0 || lens[b] > d.seq)
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "sequence_lens[%lld] is %lld, outside [0, %lld] (the seq_length of 'X')",
                             (long long)b, (long long)lens[b], (long long)d.seq);
    if (!st) {
        bool done = false;
        [&]() -> bool {
            MRT_CU_SWITCH_FLOAT(mrt_input(ctx, 0)->dtype, st = run_rnn<elem_t>(ctx, d, lens); done = true)
            return false;
        }();
        if (!done) st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype not supported");
    }
    free(lens);
    return st;
}

bool cu_rnn_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_dtype dt = x ? x->dtype : MRT_DTYPE_UNDEFINED;
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_DOUBLE && dt != MRT_DTYPE_FLOAT16 && dt != MRT_DTYPE_BFLOAT16)
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", mrt_dtype_name(dt)), false;
    return true;
}

} // namespace

#define RNN_ROWS(op)                                                                                              \
    MRT_CU_ROW_S(op, 7, cu_rnn, cu_rnn_supports, 0), MRT_CU_ROW_S(op, 14, cu_rnn, cu_rnn_supports, 0),            \
        MRT_CU_ROW_S(op, 22, cu_rnn, cu_rnn_supports, 0)
extern "C" const mrt_kernel mrt_cuda_kernels_rnn[] = {
    RNN_ROWS("RNN"),
    RNN_ROWS("GRU"),
    RNN_ROWS("LSTM"),
    {0},
};
#undef RNN_ROWS
