/* DFT and STFT node descriptions shared by the opdef (validation, output shapes) and the CPU kernels. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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

#ifdef __cplusplus
}
#endif
