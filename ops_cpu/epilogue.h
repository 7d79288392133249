/* Applying a fused epilogue (engine/epilogue.h) to a run of float32 results. */
#pragma once

#include <stdbool.h>

#include "engine/epilogue.h"
#include "ops_cpu/simd.h"

/* y[0..n) holds results of channel c starting at flat output index `at` (the index of y[0] in the output tensor,
   which locates the residual operand of an ADD). NULL or empty epilogue: nothing to do. */
void mrt_epilogue_apply(const mrt_epilogue *ep, float *y, int64_t n, int64_t c, int64_t at);

/* A block of rows: y points at element (row0, col0) of an output whose rows are ldc floats apart, at flat index
   at0; row r (channel channel0 + r) gets its cols results applied. NULL epilogue: nothing to do. */
void mrt_epilogue_apply_rows(const mrt_epilogue *ep, float *y, int64_t rows, int64_t cols, int64_t ldc,
                             int64_t channel0, int64_t at0);

/* The fused epilogue applied to results in registers, before they are stored (the GEMM's tile, ops_cpu/sgemm.c;
   Winograd's output transform, ops_cpu/conv_winograd.c), when it is [BatchNormalization] -> [Add(residual)] ->
   [Relu | Clip] (the order engine/fuse.c builds): it is then no pass over the output of its own. Each op is the
   formula mrt_epilogue_apply applies, made of exact operations (fma, add, max, min), so the bits are the same:
   Relu's v < 0 ? 0 : v and Clip's v < lo ? lo : v, v > hi ? hi : v are max(lo, v) and min(hi, v) with x86's rule of
   returning the second operand unless the first compares greater (resp. less), which lets NaN and -0 through as
   the formulas do; Relu is max(0, v) then min(+inf, v). */
typedef struct mrt_reg_epilogue {
    const mrt_bn_coef *bn; /* per channel from channel0, or NULL */
    const float *other;    /* the residual at flat index at, or NULL */
    float lo, hi;          /* the clamp (-inf, +inf when there is none) */
} mrt_reg_epilogue;

/* ep in that form, for results from channel channel0 and flat output index at; false (re unusable) when ep is
   NULL, empty or not of that form. Inline: the GEMM asks once per tile. */
static inline bool mrt_reg_epilogue_of(const mrt_epilogue *ep, int64_t channel0, int64_t at, mrt_reg_epilogue *re)
{
    *re = (mrt_reg_epilogue){NULL, NULL, -INFINITY, INFINITY};
    if (!ep || ep->n_ops == 0) return false;
    int k = 0;
    if (k < ep->n_ops && ep->ops[k].kind == MRT_POST_BATCHNORM) re->bn = ep->ops[k++].bn + channel0;
    if (k < ep->n_ops && ep->ops[k].kind == MRT_POST_ADD) re->other = ep->ops[k++].other + at;
    if (k < ep->n_ops && ep->ops[k].kind == MRT_POST_RELU) {
        re->lo = 0.0f;
        k++;
    } else if (k < ep->n_ops && ep->ops[k].kind == MRT_POST_CLIP) {
        re->lo = ep->ops[k].lo;
        re->hi = ep->ops[k].hi;
        k++;
    }
    return k == ep->n_ops;
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* re's ops on 16 results r, the one place their formulas are written in registers (the GEMM's tile and Winograd's
   output transform call it): with re->bn, BatchNormalization (mrt_bn_apply_f32) by the channel's coefficients,
   which the caller broadcasts (a tile hoists them out of its columns); + the residual at re->other + at (lanes
   outside k read 0); then max(lo, r) and min(hi, r) (see above), lo and hi broadcast by the caller too. */
__attribute__((target("avx512f"), always_inline)) static inline __m512
mrt_reg_epilogue16(const mrt_reg_epilogue *re, __m512 r, __m512 a_hi, __m512 a_lo, __m512 b_hi, __m512 b_lo,
                   int64_t at, __mmask16 k, __m512 lo, __m512 hi)
{
    if (re->bn) r = _mm512_add_ps(_mm512_fmadd_ps(r, a_hi, b_hi), _mm512_fmadd_ps(r, a_lo, b_lo));
    if (re->other) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(k, re->other + at));
    return _mm512_min_ps(hi, _mm512_max_ps(lo, r));
}
#endif
