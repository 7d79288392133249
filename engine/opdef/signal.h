/* DFT and STFT node descriptions shared by the opdef (validation, output shapes) and the CPU kernels; the transforms'
 * and windows' arithmetic, one definition for ops_cpu/signal.c and ops_cuda/signal.cu (engine/host_device.h). */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/host_device.h"
#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_dft_desc {
    int axis;          /* normalised, in [0, rank-2] */
    int64_t n;         /* dft_length */
    bool inverse, onesided;
    int64_t outer, dim, inner, comp; /* the input viewed as [outer, dim (the axis), inner, comp (1|2)] */
    int64_t out_len;   /* output size along the axis: n, or n/2+1 for a onesided forward DFT */
    int out_comp;      /* 2 (complex), or 1 for the IRFFT (onesided inverse) */
} mrt_dft_desc;

/* Validate a DFT node (17: axis attribute; 20: axis input). *ready is false (and the status OK) when the
   values of dft_length or axis are not known yet (plan time). */
mrt_status mrt_dft_desc_get(const mrt_op_ctx *ctx, mrt_dft_desc *d, bool *ready);

typedef struct mrt_stft_desc {
    int64_t batch, len, comp; /* signal [batch, len, comp (1|2)] */
    int64_t step, frame;      /* frame_step, frame_length */
    int64_t frames, bins;     /* output [batch, frames, bins, 2] */
    bool has_window;
} mrt_stft_desc;

/* Validate an STFT node; *ready as for mrt_dft_desc_get (frame_step / frame_length values). */
mrt_status mrt_stft_desc_get(const mrt_op_ctx *ctx, mrt_stft_desc *d, bool *ready);

/* The kernels' transform plan for length n (ops_cpu/signal.c, ops_cuda/signal.cu): radix-2 when n is a power of two, a direct
   sum up to MRT_DFT_DIRECT_MAX, else Bluestein over a radix-2 FFT of m >= 2n - 1. Its buffers in doubles, each
   part's count in parts[MRT_DFT_PARTS] (cos, sin, re, im, two scratch, two chirp, two chirp FFT); false when n is
   beyond 2^31 - 1, the supported length. */
#define MRT_DFT_DIRECT_MAX 64
#define MRT_DFT_PARTS 10
bool mrt_dft_plan_parts(int64_t n, int64_t parts[MRT_DFT_PARTS]);

#define MRT_DFT_PI 3.14159265358979323846

/* The plan's kind for length n: 0 radix-2 (or n <= 1), 1 direct sum, 2 Bluestein. */
static inline int mrt_dft_plan_kind(int64_t n)
{
    bool pow2 = n > 0 && (n & (n - 1)) == 0;
    return pow2 || n <= 1 ? 0 : n <= MRT_DFT_DIRECT_MAX ? 1 : 2;
}

/* In-place radix-2 FFT of length m (a power of two) with twiddles cs/sn of that length. */
static inline MRT_HD void mrt_fft_pow2(int64_t m, const double *cs, const double *sn, int sign, double *re, double *im)
{
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        int64_t half = len >> 1, stride = m / len;
        for (int64_t i = 0; i < m; i += len)
            for (int64_t j = 0; j < half; j++) {
                double wr = cs[j * stride], wi = sign * sn[j * stride];
                int64_t a = i + j, b = a + half;
                double vr = re[b] * wr - im[b] * wi, vi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - vr;
                im[b] = im[a] - vi;
                re[a] += vr;
                im[a] += vi;
            }
    }
}

/* The plan's tables (host code: the kernels' cos and sin are the host's): tw twiddles cs/sn (cos/sin(2*pi*j/tw));
   for Bluestein (kind 2) the chirp chr/chi [n] and the FFT bre/bim [m] of its conjugate. */
static inline void mrt_dft_tables_build(int64_t n, int64_t m, int64_t tw, int kind, int sign, double *cs, double *sn,
                                        double *chr, double *chi, double *bre, double *bim)
{
    for (int64_t j = 0; j < tw; j++) {
        double t = 2 * MRT_DFT_PI * (double)j / (double)tw;
        cs[j] = cos(t);
        sn[j] = sin(t);
    }
    if (kind != 2) return;
    /* kt = (k^2 + t^2 - (k-t)^2) / 2: X[k] = c[k] * sum_t (x[t] c[t]) conj(c[k-t]), c[j] = exp(sign*i*pi*j^2/n);
       j^2 is reduced mod 2n first so the angle stays exact for long transforms */
    for (int64_t j = 0; j < n; j++) {
        double t = MRT_DFT_PI * (double)((j * j) % (2 * n)) / (double)n;
        chr[j] = cos(t);
        chi[j] = sign * sin(t);
    }
    memset(bre, 0, (size_t)m * sizeof(double));
    memset(bim, 0, (size_t)m * sizeof(double));
    for (int64_t j = 0; j < n; j++) {
        bre[j] = chr[j];
        bim[j] = -chi[j];
        if (j) {
            bre[m - j] = chr[j];
            bim[m - j] = -chi[j];
        }
    }
    mrt_fft_pow2(m, cs, sn, -1, bre, bim);
}

/* re/im [n] <- sum_t x[t] * exp(sign * 2*pi*i * k*t / n), unscaled, by the plan of kind `kind` (m: its radix-2
   size) with the tables of mrt_dft_tables_build; tre/tim: scratch of n (direct sum) or m (Bluestein) doubles. */
static inline MRT_HD void mrt_dft_transform(int64_t n, int64_t m, int kind, int sign, const double *cs, const double *sn,
                                            const double *chr, const double *chi, const double *bre, const double *bim,
                                            double *re, double *im, double *tre, double *tim)
{
    if (n <= 1) return;
    if (kind == 0) {
        mrt_fft_pow2(n, cs, sn, sign, re, im);
        return;
    }
    if (kind == 1) {
        for (int64_t k = 0; k < n; k++) {
            double sr = 0, si = 0;
            int64_t idx = 0; /* k*t mod n */
            for (int64_t t = 0; t < n; t++) {
                double wr = cs[idx], wi = sign * sn[idx];
                sr += re[t] * wr - im[t] * wi;
                si += re[t] * wi + im[t] * wr;
                idx += k;
                if (idx >= n) idx -= n;
            }
            tre[k] = sr;
            tim[k] = si;
        }
        for (int64_t k = 0; k < n; k++) re[k] = tre[k], im[k] = tim[k];
        return;
    }
    double *wr = tre, *wi = tim;
    for (int64_t j = 0; j < m; j++) wr[j] = 0, wi[j] = 0;
    for (int64_t t = 0; t < n; t++) {
        wr[t] = re[t] * chr[t] - im[t] * chi[t];
        wi[t] = re[t] * chi[t] + im[t] * chr[t];
    }
    mrt_fft_pow2(m, cs, sn, -1, wr, wi);
    for (int64_t j = 0; j < m; j++) {
        double a = wr[j] * bre[j] - wi[j] * bim[j], b = wr[j] * bim[j] + wi[j] * bre[j];
        wr[j] = a;
        wi[j] = b;
    }
    mrt_fft_pow2(m, cs, sn, 1, wr, wi);
    const double inv_m = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        double yr = wr[k] * inv_m, yi = wi[k] * inv_m;
        re[k] = yr * chr[k] - yi * chi[k];
        im[k] = yr * chi[k] + yi * chr[k];
    }
}

/* Hann, Hamming and Blackman: sample i of n, a0 - a1*cos(2*pi*i/N) + a2*cos(4*pi*i/N), den = N = n (periodic) or
   n - 1 (symmetric); a window of one sample is [1] (as in PyTorch and SciPy). */
static inline MRT_HD double mrt_window_value(int64_t i, int64_t n, double den, double a0, double a1, double a2)
{
    double t = 2 * MRT_DFT_PI * (double)i / den;
    return n == 1 ? 1.0 : a0 - a1 * cos(t) + a2 * cos(2 * t);
}

#ifdef __cplusplus
}
#endif
