/* Naive double-precision references for Attention, LinearAttention and CausalConvWithState, written from the
 * ONNX operator specs (independent of ops_cpu/). Tensors are dense row-major double arrays. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Attention on 4-D data: q [b, hq, sq, d], k/v [b, hkv, skv, d|dv], past pk/pv [b, hkv, past, d|dv] (may be NULL
   when past = 0), mask [sq, mask_last] additive (-inf = masked) or NULL; mask_last <= past + skv, the missing
   trailing keys are masked. Scale 1/sqrt(d); softcap (> 0) before the mask; causal keeps j <= i + past; a row
   with nothing to attend gives 0. Outputs y [b, hq, sq, dv] and present_k/present_v [b, hkv, past + skv, d|dv]. */
typedef struct ref_attention_dims {
    int64_t b, hq, hkv, sq, skv, past, d, dv, mask_last;
    bool causal;
    double softcap;
} ref_attention_dims;

void ref_attention(const ref_attention_dims *c, const double *q, const double *k, const double *v, const double *pk,
                   const double *pv, const double *mask, double *y, double *present_k, double *present_v);

/* LinearAttention on packed 3-D data: q [b, t, hq*dk], k [b, t, hkv*dk], v [b, t, hkv*dv]; state0 [b, hkv, dk, dv]
   or NULL (zeros); decay [b, t, decay_last] (hkv or hkv*dk) or NULL; beta [b, t, beta_last] (hkv or 1) or NULL.
   rule: "linear", "gated", "delta", "gated_delta". scale 0 means 1/sqrt(dk). y [b, t, hq*dv],
   state [b, hkv, dk, dv]. */
void ref_linear_attention(const char *rule, int64_t b, int64_t t, int64_t hq, int64_t hkv, int64_t dk, int64_t dv,
                          double scale, const double *q, const double *k, const double *v, const double *state0,
                          const double *decay, int64_t decay_last, const double *beta, int64_t beta_last, double *y,
                          double *state);

/* CausalConvWithState: x [b, c, l], w [c, 1, kw], bias [c] or NULL, past [b, c, kw-1] or NULL (zeros);
   silu applies x*sigmoid(x) to the conv result. y [b, c, l], present [b, c, kw-1]. */
void ref_causal_conv_with_state(const double *x, const double *w, const double *bias, const double *past, int64_t b,
                                int64_t c, int64_t l, int64_t kw, bool silu, double *y, double *present);
