/* Naive references for RNN/GRU/LSTM, DFT, STFT, MelWeightMatrix and the windows (see rnn_signal_ref.h). */
#include "ref/rnn_signal_ref.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double RS_PI = 3.14159265358979323846;

/* ------------------------------------------------------------------ activations */

typedef struct rs_fn {
    char name[32]; /* lower case */
    double alpha, beta;
} rs_fn;

static void lower_copy(char *dst, const char *src, size_t cap)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = 0;
}

/* Which activations take alpha / beta, and the defaults of the ONNX operators of the same name. */
static bool fn_params(const char *n, bool *ua, bool *ub, double *da, double *db)
{
    *ua = *ub = false;
    *da = *db = 0;
    if (!strcmp(n, "relu") || !strcmp(n, "tanh") || !strcmp(n, "sigmoid") || !strcmp(n, "softsign") ||
        !strcmp(n, "softplus"))
        return true;
    if (!strcmp(n, "affine")) { *ua = *ub = true; *da = 1.0; *db = 0.0; return true; }
    if (!strcmp(n, "leakyrelu")) { *ua = true; *da = 0.01; return true; }
    if (!strcmp(n, "thresholdedrelu")) { *ua = true; *da = 1.0; return true; }
    if (!strcmp(n, "scaledtanh")) { *ua = *ub = true; *da = 1.0; *db = 1.0; return true; }
    if (!strcmp(n, "hardsigmoid")) { *ua = *ub = true; *da = 0.2; *db = 0.5; return true; }
    if (!strcmp(n, "elu")) { *ua = true; *da = 1.0; return true; }
    return false;
}

static double fn_eval(const rs_fn *f, double x)
{
    const char *n = f->name;
    if (!strcmp(n, "relu")) return x < 0 ? 0 : x;
    if (!strcmp(n, "tanh")) return tanh(x);
    if (!strcmp(n, "sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(n, "affine")) return f->alpha * x + f->beta;
    if (!strcmp(n, "leakyrelu")) return x >= 0 ? x : f->alpha * x;
    if (!strcmp(n, "thresholdedrelu")) return x > f->alpha ? x : 0;
    if (!strcmp(n, "scaledtanh")) return f->alpha * tanh(f->beta * x);
    if (!strcmp(n, "hardsigmoid")) return fmin(fmax(f->alpha * x + f->beta, 0), 1);
    if (!strcmp(n, "elu")) return x >= 0 ? x : f->alpha * (exp(x) - 1);
    if (!strcmp(n, "softsign")) return x / (1 + fabs(x));
    if (!strcmp(n, "softplus")) return log(1 + exp(x));
    return NAN;
}

/* ------------------------------------------------------------------ RNN / GRU / LSTM */

static int64_t x_at(const rs_rnn *p, int64_t t, int64_t b, int64_t i)
{
    return p->layout ? (b * p->seq + t) * p->input + i : (t * p->batch + b) * p->input + i;
}

static int64_t st_at(const rs_rnn *p, int nd, int d, int64_t b, int64_t j)
{
    return p->layout ? (b * nd + d) * p->hidden + j : (d * p->batch + b) * p->hidden + j;
}

static int64_t y_at(const rs_rnn *p, int nd, int64_t t, int d, int64_t b, int64_t j)
{
    return p->layout ? ((b * p->seq + t) * nd + d) * p->hidden + j : ((t * nd + d) * p->batch + b) * p->hidden + j;
}

static double clipped(const rs_rnn *p, double v)
{
    if (!p->has_clip) return v;
    if (v > p->clip) return p->clip;
    if (v < -p->clip) return -p->clip;
    return v;
}

/* Row `row` of the gate matrix M ([rows, cols] of direction d) dotted with vector v. */
static double dot_row(const double *m, int64_t row, int64_t cols, const double *v)
{
    double s = 0;
    for (int64_t k = 0; k < cols; k++) s += m[row * cols + k] * v[k];
    return s;
}

bool rs_rnn_run(const rs_rnn *p, double *y, double *yh, double *yc)
{
    const int nd = strcmp(p->direction, "bidirectional") == 0 ? 2 : 1;
    const int per = p->cell == RS_RNN ? 1 : p->cell == RS_GRU ? 2 : 3;
    const int G = p->cell == RS_RNN ? 1 : p->cell == RS_GRU ? 3 : 4;
    const int64_t H = p->hidden, I = p->input;
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    rs_fn fns[2][3];
    int ia = 0, ib = 0;
    for (int k = 0; k < per * nd; k++) {
        const char *name = p->n_acts == 0 ? defaults[p->cell][k % per] : p->acts[k % p->n_acts];
        rs_fn *f = &fns[k / per][k % per];
        lower_copy(f->name, name, sizeof f->name);
        bool ua, ub;
        if (!fn_params(f->name, &ua, &ub, &f->alpha, &f->beta)) return false;
        if (ua && ia < p->n_alpha) f->alpha = p->alpha[ia++];
        if (ub && ib < p->n_beta) f->beta = p->beta[ib++];
    }
    if (y) memset(y, 0, sizeof(double) * (size_t)(p->seq * nd * p->batch * H));

    double *h = calloc((size_t)H + 1, sizeof(double)), *c = calloc((size_t)H + 1, sizeof(double));
    double *hn = calloc((size_t)H + 1, sizeof(double)), *cn = calloc((size_t)H + 1, sizeof(double));
    double *xt = calloc((size_t)I + 1, sizeof(double)), *rh = calloc((size_t)H + 1, sizeof(double));
    for (int d = 0; d < nd; d++) {
        const double *W = p->w + (int64_t)d * G * H * I, *R = p->r + (int64_t)d * G * H * H;
        const double *Wb = p->b ? p->b + (int64_t)d * 2 * G * H : NULL, *Rb = Wb ? Wb + G * H : NULL;
        const double *P = p->p ? p->p + (int64_t)d * 3 * H : NULL;
        bool back = d == 1 || strcmp(p->direction, "reverse") == 0;
        const rs_fn *f = &fns[d][0], *g = &fns[d][1], *hf = &fns[d][2];
        for (int64_t b = 0; b < p->batch; b++) {
            int64_t len = p->lens ? p->lens[b] : p->seq;
            for (int64_t j = 0; j < H; j++) {
                h[j] = p->h0 ? p->h0[st_at(p, nd, d, b, j)] : 0;
                c[j] = p->c0 ? p->c0[st_at(p, nd, d, b, j)] : 0;
            }
            for (int64_t step = 0; step < len; step++) {
                int64_t t = back ? len - 1 - step : step;
                for (int64_t i = 0; i < I; i++) xt[i] = p->x[x_at(p, t, b, i)];
                /* gate g's pre-activation from W, R and both biases */
#define WB(gate, j) (Wb ? Wb[(gate) * H + (j)] : 0.0)
#define RB(gate, j) (Rb ? Rb[(gate) * H + (j)] : 0.0)
#define XW(gate, j) dot_row(W, (gate) * H + (j), I, xt)
#define HR(gate, j, v) dot_row(R, (gate) * H + (j), H, v)
                if (p->cell == RS_RNN) {
                    for (int64_t j = 0; j < H; j++)
                        hn[j] = fn_eval(f, clipped(p, XW(0, j) + HR(0, j, h) + WB(0, j) + RB(0, j)));
                } else if (p->cell == RS_GRU) {
                    double *z = cn; /* scratch */
                    for (int64_t j = 0; j < H; j++) {
                        z[j] = fn_eval(f, clipped(p, XW(0, j) + HR(0, j, h) + WB(0, j) + RB(0, j)));
                        double r = fn_eval(f, clipped(p, XW(1, j) + HR(1, j, h) + WB(1, j) + RB(1, j)));
                        rh[j] = r;
                    }
                    for (int64_t j = 0; j < H; j++) {
                        double pre;
                        if (p->linear_before_reset) {
                            pre = XW(2, j) + rh[j] * (HR(2, j, h) + RB(2, j)) + WB(2, j);
                        } else {
                            double *rhv = calloc((size_t)H + 1, sizeof(double));
                            for (int64_t k = 0; k < H; k++) rhv[k] = rh[k] * h[k];
                            pre = XW(2, j) + HR(2, j, rhv) + RB(2, j) + WB(2, j);
                            free(rhv);
                        }
                        double ht = fn_eval(g, clipped(p, pre));
                        hn[j] = (1 - z[j]) * ht + z[j] * h[j];
                    }
                } else {
                    /* W[iofc], P[iof] */
                    for (int64_t j = 0; j < H; j++) {
                        double pi = P ? P[j] : 0, po = P ? P[H + j] : 0, pf = P ? P[2 * H + j] : 0;
                        double it = fn_eval(f, clipped(p, XW(0, j) + HR(0, j, h) + pi * c[j] + WB(0, j) + RB(0, j)));
                        double ft = p->input_forget
                                        ? 1 - it
                                        : fn_eval(f, clipped(p, XW(2, j) + HR(2, j, h) + pf * c[j] + WB(2, j) +
                                                                    RB(2, j)));
                        double ct = fn_eval(g, clipped(p, XW(3, j) + HR(3, j, h) + WB(3, j) + RB(3, j)));
                        cn[j] = ft * c[j] + it * ct;
                        double ot = fn_eval(f, clipped(p, XW(1, j) + HR(1, j, h) + po * cn[j] + WB(1, j) + RB(1, j)));
                        hn[j] = ot * fn_eval(hf, cn[j]); /* the cell state is not clipped (as ONNX Runtime) */
                    }
                    memcpy(c, cn, sizeof(double) * (size_t)H);
                }
#undef WB
#undef RB
#undef XW
#undef HR
                memcpy(h, hn, sizeof(double) * (size_t)H);
                if (y)
                    for (int64_t j = 0; j < H; j++) y[y_at(p, nd, t, d, b, j)] = h[j];
            }
            for (int64_t j = 0; j < H; j++) {
                if (yh) yh[st_at(p, nd, d, b, j)] = len > 0 ? h[j] : 0;
                if (yc) yc[st_at(p, nd, d, b, j)] = len > 0 ? c[j] : 0;
            }
        }
    }
    free(h);
    free(c);
    free(hn);
    free(cn);
    free(xt);
    free(rh);
    return true;
}

/* ------------------------------------------------------------------ DFT / STFT */

/* out[k] = sum_t v[t] * exp(sign * 2*pi*i * k*t / n), k < out_len. */
static void direct_dft(const double *vr, const double *vi, int64_t n, int sign, int64_t out_len, double *or_,
                       double *oi)
{
    for (int64_t k = 0; k < out_len; k++) {
        double sr = 0, si = 0;
        for (int64_t t = 0; t < n; t++) {
            double ang = sign * 2 * RS_PI * (double)((k * t) % n) / (double)n;
            sr += vr[t] * cos(ang) - vi[t] * sin(ang);
            si += vr[t] * sin(ang) + vi[t] * cos(ang);
        }
        or_[k] = sr;
        oi[k] = si;
    }
}

void rs_dft(const double *x, int64_t outer, int64_t dim, int64_t inner, int comp, int64_t n, bool inverse,
            bool onesided, double *y)
{
    bool irfft = inverse && onesided;
    int64_t out_len = onesided && !inverse ? n / 2 + 1 : n;
    int out_comp = irfft ? 1 : 2;
    size_t sz = (size_t)(n + 1) * sizeof(double);
    double *vr = malloc(sz), *vi = malloc(sz), *or_ = malloc(sz), *oi = malloc(sz);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t t = 0; t < n; t++) {
                /* the sample (or spectrum bin) t of this vector, zero beyond the input */
                int64_t src = t;
                bool conj = false;
                if (irfft && t > n / 2) {
                    src = n - t;
                    conj = true;
                }
                bool have = src < dim && (!irfft || src <= n / 2);
                double re = have ? x[((o * dim + src) * inner + i) * comp] : 0;
                double im = have && comp == 2 ? x[((o * dim + src) * inner + i) * comp + 1] : 0;
                vr[t] = re;
                vi[t] = conj ? -im : im;
            }
            direct_dft(vr, vi, n, inverse ? 1 : -1, out_len, or_, oi);
            for (int64_t k = 0; k < out_len; k++) {
                double s = inverse ? 1.0 / (double)n : 1.0;
                y[((o * out_len + k) * inner + i) * out_comp] = or_[k] * s;
                if (out_comp == 2) y[((o * out_len + k) * inner + i) * out_comp + 1] = oi[k] * s;
            }
        }
    free(vr);
    free(vi);
    free(or_);
    free(oi);
}

void rs_stft(const double *x, int64_t batch, int64_t len, int comp, int64_t step, int64_t frame, const double *window,
             bool onesided, double *y)
{
    int64_t frames = (len - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
    size_t sz = (size_t)(frame + 1) * sizeof(double);
    double *vr = malloc(sz), *vi = malloc(sz), *or_ = malloc(sz), *oi = malloc(sz);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t t = 0; t < frame; t++) {
                double w = window ? window[t] : 1.0;
                const double *s = x + (b * len + f * step + t) * comp;
                vr[t] = s[0] * w;
                vi[t] = comp == 2 ? s[1] * w : 0;
            }
            direct_dft(vr, vi, frame, -1, bins, or_, oi);
            for (int64_t k = 0; k < bins; k++) {
                y[((b * frames + f) * bins + k) * 2] = or_[k];
                y[((b * frames + f) * bins + k) * 2 + 1] = oi[k];
            }
        }
    free(vr);
    free(vi);
    free(or_);
    free(oi);
}

/* ------------------------------------------------------------------ MelWeightMatrix / windows */

bool rs_mel(int64_t num_mel_bins, int64_t dft_length, int64_t sample_rate, double lower_hz, double upper_hz, double *y)
{
    int64_t rows = dft_length / 2 + 1, npts = num_mel_bins + 2;
    memset(y, 0, sizeof(double) * (size_t)(rows * num_mel_bins));
    double lo = 2595 * log10(1 + lower_hz / 700), hi = 2595 * log10(1 + upper_hz / 700);
    double spacing = (hi - lo) / (double)npts;
    int64_t *bin = malloc(sizeof(int64_t) * (size_t)npts);
    for (int64_t k = 0; k < npts; k++) {
        double mel = lo + (double)k * spacing;
        double hz = 700 * (pow(10, mel / 2595) - 1);
        bin[k] = (int64_t)floor((double)(dft_length + 1) * hz / (double)sample_rate);
    }
    bool ok = true;
    for (int64_t m = 0; m < num_mel_bins && ok; m++) {
        int64_t l = bin[m], c = bin[m + 1], r = bin[m + 2];
        if (l < 0 || c >= rows || r > rows) {
            ok = false;
            break;
        }
        if (c == l) {
            y[c * num_mel_bins + m] = 1;
        } else {
            for (int64_t j = l; j <= c; j++) y[j * num_mel_bins + m] = (double)(j - l) / (double)(c - l);
        }
        for (int64_t j = c; j < r; j++) y[j * num_mel_bins + m] = (double)(r - j) / (double)(r - c);
    }
    free(bin);
    return ok;
}

void rs_window(int kind, int64_t size, bool periodic, double *y)
{
    double N = periodic ? (double)size : (double)(size - 1);
    for (int64_t i = 0; i < size; i++) {
        if (size == 1) {
            y[i] = 1;
            continue;
        }
        double a = 2 * RS_PI * (double)i / N;
        if (kind == 0) y[i] = pow(sin(RS_PI * (double)i / N), 2);
        else if (kind == 1) y[i] = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
        else y[i] = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
    }
}
