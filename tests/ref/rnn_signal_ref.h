/* Naive double-precision references for the rnn and signal families, written from the ONNX operator specs and
 * independent of ops_cpu/: RNN/GRU/LSTM step by step with explicit dot products, DFT/STFT as direct sums of
 * exp(-2*pi*i*k*t/n) terms, MelWeightMatrix and the windows from their formulas. Row-major arrays. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef enum rs_cell { RS_RNN = 0, RS_GRU = 1, RS_LSTM = 2 } rs_cell;

typedef struct rs_rnn {
    rs_cell cell;
    int64_t seq, batch, input, hidden;
    const char *direction;         /* "forward", "reverse", "bidirectional" */
    int layout;                    /* 0 or 1: the shapes of X, initial_h/c, Y, Y_h/c */
    bool has_clip;
    double clip;
    bool linear_before_reset, input_forget;
    int n_acts;                    /* 0 = the spec's defaults */
    const char *const *acts;       /* activation names as the attribute lists them */
    int n_alpha, n_beta;
    const double *alpha, *beta;    /* activation_alpha / activation_beta */
    const double *x, *w, *r;       /* required */
    const double *b, *h0, *c0, *p; /* NULL = absent (zeros) */
    const int64_t *lens;           /* NULL = all seq */
} rs_rnn;

/* Y, Y_h, Y_c (each may be NULL) in the layout's shapes. Returns false on an unknown activation name. */
bool rs_rnn_run(const rs_rnn *p, double *y, double *yh, double *yc);

/* DFT of x viewed as [outer, dim, inner, comp] (comp 1 = real, 2 = complex) along `dim` with length n;
   output [outer, out_len, inner, out_comp] where out_len = onesided && !inverse ? n/2+1 : n and out_comp is
   1 for the onesided inverse (IRFFT: real output from a one-sided spectrum), else 2. */
void rs_dft(const double *x, int64_t outer, int64_t dim, int64_t inner, int comp, int64_t n, bool inverse,
            bool onesided, double *y);

/* STFT of signal [batch, len, comp] -> [batch, frames, bins, 2]; window NULL = rectangular. */
void rs_stft(const double *x, int64_t batch, int64_t len, int comp, int64_t step, int64_t frame, const double *window,
             bool onesided, double *y);

/* MelWeightMatrix [dft_length/2 + 1, num_mel_bins]. Returns false when a filter falls outside the bins. */
bool rs_mel(int64_t num_mel_bins, int64_t dft_length, int64_t sample_rate, double lower_hz, double upper_hz,
            double *y);

/* kind 0 Hann, 1 Hamming, 2 Blackman. */
void rs_window(int kind, int64_t size, bool periodic, double *y);
