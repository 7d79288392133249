// DFT (17, 20: forward, inverse, onesided RFFT/IRFFT, dft_length padding/truncation, axis, real or complex input),
// STFT 17, MelWeightMatrix 17, HannWindow / HammingWindow / BlackmanWindow 17 on CUDA, as ops_cpu/signal.c. A
// transform is the CPU's plan to the operation: radix-2 for powers of two, the direct sum up to 64, Bluestein past it,
// in double, with its twiddle and chirp tables built on the host exactly as the CPU builds them and copied up. One
// thread transforms one vector (DFT) or frame (STFT) in its own workspace slice: the sums are the CPU's, in its order;
// the parallelism is across vectors, so a single very long transform runs on one thread (correct, not fast). The mel
// points (pow/log10/floor on the host, with the CPU's errors) and the windows fill their outputs one element a thread.
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"
#include "ops_cuda/vision_common.cuh"

#include "engine/opdef/signal.h"

namespace {

// The shared, read-only part of a plan (device pointers once copied up).
struct dft_tables {
    int64_t n, m, tw, work;
    int sign, kind;
    const double *cs, *sn, *chr, *chi, *bre, *bim;
};

// The tables of the CPU's plan_init in one host buffer [cs, sn, chr, chi, bre, bim]; their count in doubles.
int64_t tables_count(int64_t tw, int64_t n, int64_t m, int kind) { return 2 * tw + (kind == 2 ? 2 * n + 2 * m : 0); }

void tables_build(double *h, int64_t n, int64_t m, int64_t tw, int kind, int sign)
{
    double *chr = kind == 2 ? h + 2 * tw : NULL; // then chi, bre, bim: the layout of tables_count
    mrt_dft_tables_build(n, m, tw, kind, sign, h, h + tw, chr, chr ? chr + n : NULL, chr ? chr + 2 * n : NULL,
                         chr ? chr + 2 * n + m : NULL);
}

// re/im <- sum_t x[t] exp(sign 2 pi i k t / n), unscaled; tre/tim: this thread's scratch of p.work doubles each.
__device__ void transform(const dft_tables &p, double *re, double *im, double *tre, double *tim)
{
    mrt_dft_transform(p.n, p.m, p.kind, p.sign, p.cs, p.sn, p.chr, p.chi, p.bre, p.bim, re, im, tre, tim);
}

// The plan for length n (its kind and sizes, in *p) and the doubles of its workspace: the tables, then `vectors`
// scratch slices of 2n + 2 work doubles. False when n is beyond 2^31 - 1.
bool plan_layout(int64_t n, int sign, int64_t vectors, dft_tables *p, int64_t *doubles)
{
    int64_t parts[MRT_DFT_PARTS];
    if (!mrt_dft_plan_parts(n, parts)) return false;
    memset(p, 0, sizeof *p);
    p->n = n, p->sign = sign;
    p->kind = mrt_dft_plan_kind(n);
    p->m = p->kind == 2 ? parts[8] : n;
    p->tw = parts[0], p->work = parts[4];
    *doubles = tables_count(p->tw, n, p->m, p->kind) + vectors * (2 * n + 2 * p->work);
    return true;
}

// Requests the workspace of plan_layout (DFT and STFT's hooks); none past the supported length, which run refuses
mrt_status request_plan(mrt_op_ctx *ctx, int64_t n, int64_t vectors)
{
    dft_tables p;
    int64_t doubles;
    if (plan_layout(n, -1, vectors, &p, &doubles)) mrt_workspace_request(ctx, (size_t)doubles * sizeof(double));
    return MRT_STATUS_OK;
}

// The plan for length n in the workspace: its tables copied up, then `vectors` scratch slices of 2n + 2 work doubles
// (*scratch). False with the node failed when the memory can't be had.
bool plan_upload(mrt_op_ctx *ctx, int64_t n, int sign, int64_t vectors, dft_tables *p, double **scratch)
{
    int64_t doubles;
    if (!plan_layout(n, sign, vectors, p, &doubles)) {
        mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "transform length %lld is beyond the supported 2^31 - 1", (long long)n);
        return false;
    }
    int64_t nt = tables_count(p->tw, n, p->m, p->kind);
    double *d = (double *)mrt_workspace(ctx, (size_t)doubles * sizeof(double));
    if (!d) return false;
    double *h = (double *)malloc((size_t)(nt ? nt : 1) * sizeof(double));
    if (!h) {
        mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (transform tables)");
        return false;
    }
    tables_build(h, n, p->m, p->tw, p->kind, sign);
    cudaError_t e = nt ? cudaMemcpyAsync(d, h, (size_t)nt * sizeof(double), cudaMemcpyHostToDevice, mrt_cu_stream(ctx))
                       : cudaSuccess;
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx)); // h is freed next
    free(h);
    if (e != cudaSuccess) {
        mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copying the transform tables: %s", cudaGetErrorString(e));
        return false;
    }
    p->cs = d, p->sn = d + p->tw;
    if (p->kind == 2) p->chr = p->sn + p->tw, p->chi = p->chr + n, p->bre = p->chi + n, p->bim = p->bre + p->m;
    *scratch = d + nt;
    return true;
}

// ------------------------------------------------------------------ DFT

struct dft_dims {
    int xdt, ydt;
    bool irfft;
    double scale;
    int64_t outer, dim, inner, comp, out_len, out_comp;
};

__global__ void dft_kernel(const void *x, void *y, dft_tables p, double *scratch, dft_dims d)
{
    MRT_CU_FOR(v, d.outer * d.inner) {
        int64_t o = v / d.inner, i = v % d.inner, n = p.n;
        double *re = scratch + v * (2 * n + 2 * p.work), *im = re + n, *tre = im + n, *tim = tre + p.work;
        for (int64_t k = 0; k < n; k++) re[k] = 0, im[k] = 0;
#define XAT(k, part) mrt_cu_ld(d.xdt, x, ((o * d.dim + (k)) * d.inner + i) * d.comp + (part))
        if (d.irfft) {
            int64_t m = d.dim < n / 2 + 1 ? d.dim : n / 2 + 1;
            for (int64_t k = 0; k < m; k++) {
                re[k] = XAT(k, 0);
                im[k] = d.comp == 2 ? XAT(k, 1) : 0;
            }
            for (int64_t k = n / 2 + 1; k < n; k++) {
                if (n - k >= m) continue;
                re[k] = re[n - k];
                im[k] = -im[n - k];
            }
        } else {
            int64_t m = d.dim < n ? d.dim : n;
            for (int64_t k = 0; k < m; k++) {
                re[k] = XAT(k, 0);
                im[k] = d.comp == 2 ? XAT(k, 1) : 0;
            }
        }
#undef XAT
        transform(p, re, im, tre, tim);
        for (int64_t k = 0; k < d.out_len; k++) {
            int64_t at = ((o * d.out_len + k) * d.inner + i) * d.out_comp;
            mrt_cu_st(d.ydt, y, at, re[k] * d.scale);
            if (d.out_comp == 2) mrt_cu_st(d.ydt, y, at + 1, im[k] * d.scale);
        }
    }
}

mrt_status cu_dft(mrt_op_ctx *ctx)
{
    mrt_cu_host_inputs host; // dft_length and axis
    MRT_TRY(host.load(ctx, 1));
    mrt_dft_desc d;
    bool ready;
    MRT_TRY(mrt_dft_desc_get(&host.ctx, &d, &ready));
    if (!ready) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dft_length/axis values unavailable at run time");
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    dft_tables p;
    double *scratch;
    if (!plan_upload(ctx, d.n, d.inverse ? 1 : -1, d.outer * d.inner, &p, &scratch)) return MRT_STATUS_OUT_OF_MEMORY;
    dft_dims dd = {(int)x->dtype, (int)y->dtype, d.inverse && d.onesided, d.inverse ? 1.0 / (double)d.n : 1.0,
                   d.outer, d.dim, d.inner, d.comp, d.out_len, d.out_comp};
    MRT_LAUNCH(dft_kernel, mrt_cu_blocks(d.outer * d.inner), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), x->data, y->data, p,
               scratch, dd);
    MRT_CU_CHECK_LAUNCH(ctx, "DFT kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ STFT

struct stft_dims {
    int xdt, wdt, ydt;
    bool window;
    int64_t batch, len, comp, step, frames, bins;
};

__global__ void stft_kernel(const void *x, const void *w, void *y, dft_tables p, double *scratch, stft_dims d)
{
    MRT_CU_FOR(v, d.batch * d.frames) {
        int64_t b = v / d.frames, f = v % d.frames, n = p.n;
        double *re = scratch + v * (2 * n + 2 * p.work), *im = re + n, *tre = im + n, *tim = tre + p.work;
        for (int64_t t = 0; t < n; t++) {
            int64_t at = (b * d.len + f * d.step + t) * d.comp;
            double wt = d.window ? mrt_cu_ld(d.wdt, w, t) : 1.0;
            re[t] = mrt_cu_ld(d.xdt, x, at) * wt;
            im[t] = d.comp == 2 ? mrt_cu_ld(d.xdt, x, at + 1) * wt : 0;
        }
        transform(p, re, im, tre, tim);
        for (int64_t k = 0; k < d.bins; k++) {
            int64_t at = ((b * d.frames + f) * d.bins + k) * 2;
            mrt_cu_st(d.ydt, y, at, re[k]);
            mrt_cu_st(d.ydt, y, at + 1, im[k]);
        }
    }
}

// At plan time dft_length and axis are constants on the host (else the step is dynamic and never planned)
mrt_status cu_dft_workspace(mrt_op_ctx *ctx)
{
    mrt_dft_desc d;
    bool ready;
    MRT_TRY(mrt_dft_desc_get(ctx, &d, &ready));
    return mrt_tensor_numel(mrt_output(ctx, 0)) ? request_plan(ctx, d.n, d.outer * d.inner) : MRT_STATUS_OK;
}

mrt_status cu_stft(mrt_op_ctx *ctx)
{
    mrt_cu_host_inputs host; // frame_step and frame_length (the window too: small)
    MRT_TRY(host.load(ctx, 1));
    mrt_stft_desc d;
    bool ready;
    MRT_TRY(mrt_stft_desc_get(&host.ctx, &d, &ready));
    if (!ready) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "frame_step/frame_length values unavailable at run time");
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    dft_tables p;
    double *scratch;
    if (!plan_upload(ctx, d.frame, -1, d.batch * d.frames, &p, &scratch)) return MRT_STATUS_OUT_OF_MEMORY;
    stft_dims sd = {(int)x->dtype, w ? (int)w->dtype : 0, (int)y->dtype, w != NULL, d.batch, d.len, d.comp, d.step,
                    d.frames, d.bins};
    MRT_LAUNCH(stft_kernel, mrt_cu_blocks(d.batch * d.frames), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), x->data,
               w ? w->data : NULL, y->data, p, scratch, sd);
    MRT_CU_CHECK_LAUNCH(ctx, "STFT kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ MelWeightMatrix

// Element (bin j, filter m) of the triangular filters, as the CPU writes them (a peak's bin written last by the
// falling edge when the filter has one).
__global__ void mel_kernel(const int64_t *pts, void *y, int ydt, int64_t mel, int64_t n_out)
{
    MRT_CU_FOR(e, n_out) {
        int64_t j = e / mel, m = e % mel, left = pts[m], center = pts[m + 1], right = pts[m + 2];
        bool set = false;
        double v = 0;
        if (center == left) {
            if (j == center) v = 1.0, set = true;
        } else if (j >= left && j <= center) {
            v = (double)(j - left) / (double)(center - left), set = true;
        }
        if (j >= center && j < right) v = (double)(right - j) / (double)(right - center), set = true;
        if (set) mrt_cu_st(ydt, y, e, v);
    }
}

mrt_status cu_stft_workspace(mrt_op_ctx *ctx)
{
    mrt_stft_desc d;
    bool ready;
    MRT_TRY(mrt_stft_desc_get(ctx, &d, &ready));
    return mrt_tensor_numel(mrt_output(ctx, 0)) ? request_plan(ctx, d.frame, d.batch * d.frames) : MRT_STATUS_OK;
}

// MelWeightMatrix's points' workspace stays unplanned: its size is an input's value, and the node runs on the device
// only when folding is off (constant inputs fold it) or its inputs are computed (a dynamic step).
mrt_status cu_mel(mrt_op_ctx *ctx)
{
    mrt_cu_host_inputs host;
    MRT_TRY(host.load(ctx, 0));
    const mrt_op_ctx *h = &host.ctx;
    int64_t mel = mrt_load_i64(mrt_input(h, 0)->dtype, mrt_input(h, 0)->data, 0);
    int64_t n = mrt_load_i64(mrt_input(h, 1)->dtype, mrt_input(h, 1)->data, 0);
    int64_t rate = mrt_load_i64(mrt_input(h, 2)->dtype, mrt_input(h, 2)->data, 0);
    double lo = mrt_load_f64(mrt_input(h, 3)->dtype, mrt_input(h, 3)->data, 0);
    double hi = mrt_load_f64(mrt_input(h, 4)->dtype, mrt_input(h, 4)->data, 0);
    if (rate < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "sample_rate is %lld, expected a positive rate", (long long)rate);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t nbins = n / 2 + 1;
    int64_t *pts = (int64_t *)malloc((size_t)(mel + 2) * sizeof(int64_t));
    if (!pts) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (mel points)");
    // the points and their checks on the host, as the CPU (pow, log10 and floor to the bit)
    double lo_mel = 2595 * log10(1 + lo / 700), hi_mel = 2595 * log10(1 + hi / 700);
    double step = (hi_mel - lo_mel) / (double)(mel + 2);
    mrt_status st = MRT_STATUS_OK;
    for (int64_t i = 0; i < mel + 2 && !st; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lo_mel) / 2595) - 1);
        double bin = floor((double)(n + 1) * hz / (double)rate);
        if (!(bin >= 0 && bin <= (double)nbins))
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                             "mel point %lld (%g Hz) falls outside the %lld spectrogram bins; "
                             "lower/upper_edge_hertz (%g, %g) must lie within [0, sample_rate/2]",
                             (long long)i, hz, (long long)nbins, lo, hi);
        else pts[i] = (int64_t)bin;
    }
    for (int64_t m = 0; m < mel && !st; m++)
        if (pts[m + 1] >= nbins || pts[m] > pts[m + 1])
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "mel filter %lld peaks at bin %lld, outside the %lld spectrogram bins",
                             (long long)m, (long long)pts[m + 1], (long long)nbins);
    int64_t n_out = mrt_tensor_numel(y);
    void *dpts = !st && n_out ? mrt_workspace(ctx, (size_t)(mel + 2) * sizeof(int64_t)) : NULL;
    if (!st && n_out && !dpts) st = MRT_STATUS_OUT_OF_MEMORY;
    if (!st && n_out) {
        cudaError_t e = cudaMemcpyAsync(dpts, pts, (size_t)(mel + 2) * sizeof(int64_t), cudaMemcpyHostToDevice, mrt_cu_stream(ctx));
        if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx)); // pts is freed next
        if (e != cudaSuccess) st = mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copying the mel points: %s", cudaGetErrorString(e));
    }
    free(pts);
    if (st || n_out == 0) return st;
    MRT_LAUNCH(mel_kernel, mrt_cu_blocks(n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const int64_t *)dpts, y->data,
               (int)y->dtype, mel, n_out);
    MRT_CU_CHECK_LAUNCH(ctx, "mel weight kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ windows

// mrt_window_value's samples (engine/opdef/signal.h)
__global__ void window_kernel(void *y, int ydt, int64_t n, double den, double a0, double a1, double a2)
{
    MRT_CU_FOR(i, n) {
        mrt_cu_st(ydt, y, i, mrt_window_value(i, n, den, a0, a1, a2));
    }
}

mrt_status window(mrt_op_ctx *ctx, double a0, double a1, double a2)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = y->shape[0];
    if (n == 0) return MRT_STATUS_OK;
    double den = mrt_attr_int(ctx, "periodic", 1) ? (double)n : (double)(n - 1);
    MRT_LAUNCH(window_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), y->data, (int)y->dtype, n, den, a0,
               a1, a2);
    MRT_CU_CHECK_LAUNCH(ctx, "window kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_hann(mrt_op_ctx *ctx) { return window(ctx, 0.5, 0.5, 0); }
mrt_status cu_hamming(mrt_op_ctx *ctx) { return window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0); }
mrt_status cu_blackman(mrt_op_ctx *ctx) { return window(ctx, 0.42, 0.5, 0.08); }

bool cu_signal_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        if (t && !mrt_cu_any_dtype_ok(t->dtype))
            return snprintf(why, len, "dtype %s (input %d) is not read by the CUDA kernel", mrt_dtype_name(t->dtype), i),
                   false;
    }
    int64_t dt = mrt_attr_int(ctx, "output_datatype", MRT_DTYPE_FLOAT); // the windows' and mel's output type
    if (!mrt_cu_any_dtype_ok((mrt_dtype)dt))
        return snprintf(why, len, "output_datatype %s is not written by the CUDA kernel", mrt_dtype_name((mrt_dtype)dt)),
               false;
    return true;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_signal[] = {
    MRT_CU_ROW_SW("DFT", 17, cu_dft, cu_signal_supports, 0, cu_dft_workspace),
    MRT_CU_ROW_SW("STFT", 17, cu_stft, cu_signal_supports, 0, cu_stft_workspace),
    MRT_CU_ROW_S("MelWeightMatrix", 17, cu_mel, cu_signal_supports, 0),
    MRT_CU_ROW_S("HannWindow", 17, cu_hann, cu_signal_supports, 0),
    MRT_CU_ROW_S("HammingWindow", 17, cu_hamming, cu_signal_supports, 0),
    MRT_CU_ROW_S("BlackmanWindow", 17, cu_blackman, cu_signal_supports, 0),
    {0},
};
