/* CPU kernels: DFT (17, 20; forward, inverse, onesided RFFT/IRFFT, dft_length padding/truncation), STFT (17),
 * MelWeightMatrix (17), HannWindow, HammingWindow, BlackmanWindow (17; periodic or symmetric). Transforms run
 * in double: an iterative radix-2 FFT when the length is a power of two, a direct sum for other lengths up to
 * 64, Bluestein's chirp-z transform (through radix-2 FFTs) for longer ones. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/signal.h"
#include "engine/registry.h"

/* ------------------------------------------------------------------ transform core */

/* Lengths up to this use the direct sum when they are not a power of two; longer ones Bluestein's chirp-z
   transform (a convolution through power-of-two FFTs). */
#define DIRECT_MAX MRT_DFT_DIRECT_MAX

/* One transform length and direction: p->re/im (length n) in, the transform out. */
typedef struct dft_plan {
    int64_t n;
    int sign;            /* -1 forward, +1 inverse (unscaled) */
    int kind;            /* 0 radix-2 on n, 1 direct sum, 2 Bluestein with a radix-2 FFT of m */
    int64_t m;           /* radix-2 size: n (kind 0) or >= 2n-1 (kind 2) */
    double *cs, *sn;     /* [m] cos/sin(2*pi*j/m); kind 1: [n] of 2*pi*j/n */
    double *re, *im;     /* [n] the vector being transformed */
    double *tre, *tim;   /* kind 1: [n] direct-sum scratch; kind 2: [m] convolution work */
    double *chr, *chi;   /* kind 2: [n] chirp exp(sign*i*pi*j^2/n) */
    double *bre, *bim;   /* kind 2: [m] FFT of the conjugate chirp */
} dft_plan;

/* The plan's buffers come from the workspace (mrt_dft_plan_parts, requested by request_plan); false (op failed)
   when the memory can't be had. */
static bool plan_init(mrt_op_ctx *ctx, dft_plan *p, int64_t n, int sign)
{
    memset(p, 0, sizeof *p);
    int64_t parts[MRT_DFT_PARTS];
    double *buf[MRT_DFT_PARTS];
    if (!mrt_dft_plan_parts(n, parts) || !mrt_workspace_parts(ctx, MRT_DFT_PARTS, parts, sizeof(double), (void **)buf))
        return false;
    p->n = n;
    p->sign = sign;
    p->kind = mrt_dft_plan_kind(n);
    p->m = p->kind == 2 ? parts[8] : n;
    p->cs = buf[0], p->sn = buf[1], p->re = buf[2], p->im = buf[3], p->tre = buf[4], p->tim = buf[5];
    if (p->kind == 2) p->chr = buf[6], p->chi = buf[7], p->bre = buf[8], p->bim = buf[9];
    mrt_dft_tables_build(n, p->m, parts[0], p->kind, sign, p->cs, p->sn, p->chr, p->chi, p->bre, p->bim);
    return true;
}

/* p->re/im <- sum_t x[t] * exp(sign * 2*pi*i * k*t / n), unscaled. */
static void transform(dft_plan *p)
{
    mrt_dft_transform(p->n, p->m, p->kind, p->sign, p->cs, p->sn, p->chr, p->chi, p->bre, p->bim, p->re, p->im, p->tre,
                      p->tim);
}

/* ------------------------------------------------------------------ DFT */

static mrt_status mrt_cpu_dft(mrt_op_ctx *ctx)
{
    mrt_dft_desc d;
    bool ready;
    MRT_TRY(mrt_dft_desc_get(ctx, &d, &ready));
    if (!ready) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dft_length/axis values unavailable at run time");
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    if (d.n > INT32_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "DFT length %lld is beyond the supported 2^31 - 1", (long long)d.n);
    dft_plan p;
    if (!plan_init(ctx, &p, d.n, d.inverse ? 1 : -1)) return MRT_STATUS_OUT_OF_MEMORY;
    const bool irfft = d.inverse && d.onesided;
    const double scale = d.inverse ? 1.0 / (double)d.n : 1.0;
    const int64_t n = d.n;
    for (int64_t o = 0; o < d.outer; o++)
        for (int64_t i = 0; i < d.inner; i++) {
            memset(p.re, 0, (size_t)n * sizeof(double));
            memset(p.im, 0, (size_t)n * sizeof(double));
            /* element k of this vector in the input */
#define XAT(k, part) mrt_load_f64(x->dtype, x->data, ((o * d.dim + (k)) * d.inner + i) * d.comp + (part))
            if (irfft) {
                /* a one-sided spectrum: bins 0..n/2 as given (padded/truncated), the rest by conjugate symmetry */
                int64_t m = d.dim < n / 2 + 1 ? d.dim : n / 2 + 1;
                for (int64_t k = 0; k < m; k++) {
                    p.re[k] = XAT(k, 0);
                    p.im[k] = d.comp == 2 ? XAT(k, 1) : 0;
                }
                for (int64_t k = n / 2 + 1; k < n; k++) {
                    if (n - k >= m) continue;
                    p.re[k] = p.re[n - k];
                    p.im[k] = -p.im[n - k];
                }
            } else {
                int64_t m = d.dim < n ? d.dim : n;
                for (int64_t k = 0; k < m; k++) {
                    p.re[k] = XAT(k, 0);
                    p.im[k] = d.comp == 2 ? XAT(k, 1) : 0;
                }
            }
#undef XAT
            transform(&p);
            for (int64_t k = 0; k < d.out_len; k++) {
                int64_t at = ((o * d.out_len + k) * d.inner + i) * d.out_comp;
                mrt_store_f64(y->dtype, y->data, at, p.re[k] * scale);
                if (d.out_comp == 2) mrt_store_f64(y->dtype, y->data, at + 1, p.im[k] * scale);
            }
        }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ STFT */

static mrt_status mrt_cpu_stft(mrt_op_ctx *ctx)
{
    mrt_stft_desc d;
    bool ready;
    MRT_TRY(mrt_stft_desc_get(ctx, &d, &ready));
    if (!ready)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "frame_step/frame_length values unavailable at run time");
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    if (d.frame > INT32_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "frame length %lld is beyond the supported 2^31 - 1", (long long)d.frame);
    dft_plan p;
    if (!plan_init(ctx, &p, d.frame, -1)) return MRT_STATUS_OUT_OF_MEMORY;
    for (int64_t b = 0; b < d.batch; b++)
        for (int64_t f = 0; f < d.frames; f++) {
            for (int64_t t = 0; t < d.frame; t++) {
                int64_t at = (b * d.len + f * d.step + t) * d.comp;
                double wt = w ? mrt_load_f64(w->dtype, w->data, t) : 1.0;
                p.re[t] = mrt_load_f64(x->dtype, x->data, at) * wt;
                p.im[t] = d.comp == 2 ? mrt_load_f64(x->dtype, x->data, at + 1) * wt : 0;
            }
            transform(&p);
            for (int64_t k = 0; k < d.bins; k++) {
                int64_t at = ((b * d.frames + f) * d.bins + k) * 2;
                mrt_store_f64(y->dtype, y->data, at, p.re[k]);
                mrt_store_f64(y->dtype, y->data, at + 1, p.im[k]);
            }
        }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ MelWeightMatrix */

static void store_num(mrt_tensor *y, int64_t i, double v)
{
    if (mrt_dtype_is_float(y->dtype)) mrt_store_f64(y->dtype, y->data, i, v);
    else mrt_store_i64(y->dtype, y->data, i, mrt_f64_to_i64_sat(v));
}

/* Triangular filters between mel-spaced points mapped to DFT bins (the spec's reference algorithm, which
   spaces num_mel_bins + 2 points by (high - low) / (num_mel_bins + 2)). */
static mrt_status mrt_cpu_mel(mrt_op_ctx *ctx)
{
    int64_t mel = mrt_load_i64(mrt_input(ctx, 0)->dtype, mrt_input(ctx, 0)->data, 0);
    int64_t n = mrt_load_i64(mrt_input(ctx, 1)->dtype, mrt_input(ctx, 1)->data, 0);
    int64_t rate = mrt_load_i64(mrt_input(ctx, 2)->dtype, mrt_input(ctx, 2)->data, 0);
    double lo = mrt_load_f64(mrt_input(ctx, 3)->dtype, mrt_input(ctx, 3)->data, 0);
    double hi = mrt_load_f64(mrt_input(ctx, 4)->dtype, mrt_input(ctx, 4)->data, 0);
    if (rate < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "sample_rate is %lld, expected a positive rate", (long long)rate);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t nbins = n / 2 + 1;
    int64_t *pts = malloc((size_t)(mel + 2) * sizeof(int64_t));
    if (!pts) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (mel points)");
    double lo_mel = 2595 * log10(1 + lo / 700), hi_mel = 2595 * log10(1 + hi / 700);
    double step = (hi_mel - lo_mel) / (double)(mel + 2);
    for (int64_t i = 0; i < mel + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lo_mel) / 2595) - 1);
        double bin = floor((double)(n + 1) * hz / (double)rate);
        if (!(bin >= 0 && bin <= (double)nbins)) {
            free(pts);
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "mel point %lld (%g Hz) falls outside the %lld spectrogram bins; "
                               "lower/upper_edge_hertz (%g, %g) must lie within [0, sample_rate/2]",
                               (long long)i, hz, (long long)nbins, lo, hi);
        }
        pts[i] = (int64_t)bin;
    }
    mrt_status st = MRT_STATUS_OK;
    for (int64_t m = 0; m < mel && st == MRT_STATUS_OK; m++) {
        int64_t left = pts[m], center = pts[m + 1], right = pts[m + 2];
        if (center >= nbins || left > center) {
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                             "mel filter %lld peaks at bin %lld, outside the %lld spectrogram bins",
                             (long long)m, (long long)center, (long long)nbins);
            break;
        }
        if (center == left) store_num(y, center * mel + m, 1.0);
        else
            for (int64_t j = left; j <= center; j++)
                store_num(y, j * mel + m, (double)(j - left) / (double)(center - left));
        for (int64_t j = center; j < right; j++)
            store_num(y, j * mel + m, (double)(right - j) / (double)(right - center));
    }
    free(pts);
    return st;
}

/* ------------------------------------------------------------------ windows */

/* mrt_window_value's samples (engine/opdef/signal.h) */
static mrt_status window(mrt_op_ctx *ctx, double a0, double a1, double a2)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = y->shape[0];
    double den = mrt_attr_int(ctx, "periodic", 1) ? (double)n : (double)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        store_num(y, i, mrt_window_value(i, n, den, a0, a1, a2));
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_hann(mrt_op_ctx *ctx) { return window(ctx, 0.5, 0.5, 0); }
static mrt_status mrt_cpu_hamming(mrt_op_ctx *ctx) { return window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0); }
static mrt_status mrt_cpu_blackman(mrt_op_ctx *ctx) { return window(ctx, 0.42, 0.5, 0.08); }

/* ------------------------------------------------------------------ workspaces (engine/registry.h) */

/* The transform plan's parts for length n; none for an empty output or past the supported length (run refuses it
   by name) */
static mrt_status request_plan(mrt_op_ctx *ctx, int64_t n)
{
    int64_t parts[MRT_DFT_PARTS];
    if (mrt_tensor_numel(mrt_output(ctx, 0)) == 0 || !mrt_dft_plan_parts(n, parts)) return MRT_STATUS_OK;
    return mrt_workspace_request_parts(ctx, MRT_DFT_PARTS, parts, sizeof(double));
}

static mrt_status mrt_cpu_dft_workspace(mrt_op_ctx *ctx)
{
    mrt_dft_desc d;
    bool ready;
    MRT_TRY(mrt_dft_desc_get(ctx, &d, &ready));
    return request_plan(ctx, d.n);
}

static mrt_status mrt_cpu_stft_workspace(mrt_op_ctx *ctx)
{
    mrt_stft_desc d;
    bool ready;
    MRT_TRY(mrt_stft_desc_get(ctx, &d, &ready));
    return request_plan(ctx, d.frame);
}

const mrt_kernel mrt_cpu_kernels_signal[] = {
    {"", "DFT", 17, mrt_cpu_dft, NULL, NULL, NULL, 0, mrt_cpu_dft_workspace},
    {"", "DFT", 20, mrt_cpu_dft, NULL, NULL, NULL, 0, mrt_cpu_dft_workspace},
    {"", "STFT", 17, mrt_cpu_stft, NULL, NULL, NULL, 0, mrt_cpu_stft_workspace},
    {"", "MelWeightMatrix", 17, mrt_cpu_mel, NULL},
    {"", "HannWindow", 17, mrt_cpu_hann, NULL},
    {"", "HammingWindow", 17, mrt_cpu_hamming, NULL},
    {"", "BlackmanWindow", 17, mrt_cpu_blackman, NULL},
    {0},
};
