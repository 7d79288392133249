/* Naive references for the attention family (see attention_ref.h): whole matrices, plain loops, doubles. */
#include "ref/attention_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ref_attention(const ref_attention_dims *c, const double *q, const double *k, const double *v, const double *pk,
                   const double *pv, const double *mask, double *y, double *present_k, double *present_v)
{
    int64_t T = c->past + c->skv;
    /* K and V concatenated after the past: exactly the present outputs */
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hkv; h++)
            for (int64_t t = 0; t < T; t++) {
                for (int64_t x = 0; x < c->d; x++)
                    present_k[((b * c->hkv + h) * T + t) * c->d + x] =
                        t < c->past ? pk[((b * c->hkv + h) * c->past + t) * c->d + x]
                                    : k[((b * c->hkv + h) * c->skv + t - c->past) * c->d + x];
                for (int64_t x = 0; x < c->dv; x++)
                    present_v[((b * c->hkv + h) * T + t) * c->dv + x] =
                        t < c->past ? pv[((b * c->hkv + h) * c->past + t) * c->dv + x]
                                    : v[((b * c->hkv + h) * c->skv + t - c->past) * c->dv + x];
            }
    double *p = malloc((size_t)(T > 0 ? T : 1) * sizeof *p);
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hq; h++) {
            int64_t g = h / (c->hq / c->hkv); /* the KV head repeated for this query head */
            for (int64_t i = 0; i < c->sq; i++) {
                double mx = -INFINITY, sum = 0;
                bool any = false;
                for (int64_t j = 0; j < T; j++) {
                    double s = 0;
                    for (int64_t x = 0; x < c->d; x++)
                        s += q[((b * c->hq + h) * c->sq + i) * c->d + x] *
                             present_k[((b * c->hkv + g) * T + j) * c->d + x];
                    s /= sqrt((double)c->d);
                    if (c->softcap > 0) s = c->softcap * tanh(s / c->softcap);
                    double bias = 0;
                    if (mask) bias = j < c->mask_last ? mask[i * c->mask_last + j] : -INFINITY;
                    if (c->causal && j > i + c->past) bias = -INFINITY;
                    any |= bias != -INFINITY;
                    p[j] = s + bias;
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int64_t j = 0; j < T; j++) sum += p[j] = any ? exp(p[j] - mx) : 0;
                for (int64_t x = 0; x < c->dv; x++) {
                    double a = 0;
                    for (int64_t j = 0; j < T; j++)
                        a += (sum > 0 ? p[j] / sum : 0) * present_v[((b * c->hkv + g) * T + j) * c->dv + x];
                    y[((b * c->hq + h) * c->sq + i) * c->dv + x] = a;
                }
            }
        }
    free(p);
}

void ref_linear_attention(const char *rule, int64_t b, int64_t t, int64_t hq, int64_t hkv, int64_t dk, int64_t dv,
                          double scale, const double *q, const double *k, const double *v, const double *state0,
                          const double *decay, int64_t decay_last, const double *beta, int64_t beta_last, double *y,
                          double *state)
{
    bool gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    bool delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (scale == 0) scale = 1 / sqrt((double)dk);
    int64_t ns = b * hkv * dk * dv, group = hq / hkv;
    for (int64_t i = 0; i < ns; i++) state[i] = state0 ? state0[i] : 0;
    double *u = malloc((size_t)(dv > 0 ? dv : 1) * sizeof *u);
    /* all heads advance together, one token at a time, as the spec's recurrence reads */
    for (int64_t s = 0; s < t; s++) {
        for (int64_t bb = 0; bb < b; bb++)
            for (int64_t h = 0; h < hkv; h++) {
                double *S = state + (bb * hkv + h) * dk * dv;
                const double *kt = k + (bb * t + s) * hkv * dk + h * dk, *vt = v + (bb * t + s) * hkv * dv + h * dv;
                if (gated)
                    for (int64_t i = 0; i < dk; i++) {
                        double gi = decay_last == hkv ? decay[(bb * t + s) * hkv + h]
                                                      : decay[(bb * t + s) * hkv * dk + h * dk + i];
                        for (int64_t m = 0; m < dv; m++) S[i * dv + m] *= exp(gi);
                    }
                for (int64_t m = 0; m < dv; m++) {
                    u[m] = vt[m];
                    if (delta) {
                        double bt = beta[(bb * t + s) * beta_last + (beta_last == 1 ? 0 : h)], kS = 0;
                        for (int64_t i = 0; i < dk; i++) kS += kt[i] * S[i * dv + m];
                        u[m] = bt * (vt[m] - kS);
                    }
                }
                for (int64_t i = 0; i < dk; i++)
                    for (int64_t m = 0; m < dv; m++) S[i * dv + m] += kt[i] * u[m];
            }
        for (int64_t bb = 0; bb < b; bb++)
            for (int64_t h = 0; h < hq; h++) {
                const double *S = state + (bb * hkv + h / group) * dk * dv, *qt = q + (bb * t + s) * hq * dk + h * dk;
                for (int64_t m = 0; m < dv; m++) {
                    double o = 0;
                    for (int64_t i = 0; i < dk; i++) o += qt[i] * S[i * dv + m];
                    y[(bb * t + s) * hq * dv + h * dv + m] = scale * o;
                }
            }
    }
    free(u);
}

void ref_causal_conv_with_state(const double *x, const double *w, const double *bias, const double *past, int64_t b,
                                int64_t c, int64_t l, int64_t kw, bool silu, double *y, double *present)
{
    int64_t n = kw - 1 + l;
    double *seq = malloc((size_t)(n > 0 ? n : 1) * sizeof *seq);
    for (int64_t bb = 0; bb < b; bb++)
        for (int64_t ch = 0; ch < c; ch++) {
            for (int64_t p = 0; p < kw - 1; p++) seq[p] = past ? past[(bb * c + ch) * (kw - 1) + p] : 0;
            for (int64_t p = 0; p < l; p++) seq[kw - 1 + p] = x[(bb * c + ch) * l + p];
            for (int64_t i = 0; i < l; i++) {
                double a = bias ? bias[ch] : 0;
                for (int64_t j = 0; j < kw; j++) a += w[ch * kw + j] * seq[i + j];
                y[(bb * c + ch) * l + i] = silu ? a / (1 + exp(-a)) : a;
            }
            for (int64_t p = 0; p < kw - 1; p++) present[(bb * c + ch) * (kw - 1) + p] = seq[l + p];
        }
    free(seq);
}
