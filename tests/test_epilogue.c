/* The fused epilogue applier (ops_cpu/epilogue.c), called directly: each post-op against its formula written out
 * here, over spans that start mid-row and wrap around rows, and the block form (mrt_epilogue_apply_rows) giving
 * the bits of the row-by-row form; and BatchNormalization's float-pair formula against exact arithmetic. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/vmath.h"

static float *alloc_f32(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

/* ADD_ROW adds other[(at + i) % n_cols]: spans of every start and length up to three rows, so runs begin
   mid-row, cross row ends and end mid-row. */
Test(epilogue, add_row_spans_wrap_around_rows)
{
    enum { COLS = 37, ROWS = 4, N = COLS * ROWS };
    th_rng r;
    th_rng_init(&r, th_seed("epilogue.add_row"));
    float base[N], bias[COLS], y[N];
    for (int i = 0; i < N; i++) base[i] = (float)th_rng_uniform(&r, -2, 2);
    for (int i = 0; i < COLS; i++) bias[i] = (float)th_rng_uniform(&r, -2, 2);
    mrt_epilogue ep = {1, {{.kind = MRT_POST_ADD_ROW, .other = bias, .n_cols = COLS}}};
    for (int at = 0; at < COLS + 3; at++)
        for (int n = 0; at + n <= N && n <= 3 * COLS; n += 5) {
            memcpy(y, base, sizeof y);
            mrt_epilogue_apply(&ep, y + at, n, 0, at);
            for (int i = 0; i < N; i++) {
                float want = i >= at && i < at + n ? base[i] + bias[i % COLS] : base[i];
                cr_assert(memcmp(&y[i], &want, sizeof want) == 0, "at %d n %d: y[%d] = %a, want %a", at, n, i,
                          (double)y[i], (double)want);
            }
        }
}

/* On contiguous rows the block form runs op by op over the whole block (BatchNormalization per row), or, for
   BatchNormalization -> Sigmoid | SiLU on rows of whole 64-float blocks or of 768 or more, both in one pass per row
   (mrt_vbn_sigmoid_f32); it must give the bits of applying the whole chain row by row (one pass per row, whatever
   the length), for short rows (49: a 7x7 plane) and long ones (196, 256, 1000: whole blocks, partial ones), with
   some inputs far outside the sigmoid's near range (|x| > 87). */
Test(epilogue, block_form_matches_row_by_row)
{
    th_rng r;
    th_rng_init(&r, th_seed("epilogue.block"));
    const int64_t shapes[][2] = {{1, 49}, {40, 49}, {7, 300}, {3, 1}, {5, 196}, {3, 256}, {2, 1000}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t rows = shapes[s][0], cols = shapes[s][1], n = rows * cols, ch0 = 3;
        float *x = alloc_f32(n), *other = alloc_f32(n + 5), *y0 = alloc_f32(n), *y1 = alloc_f32(n);
        mrt_bn_coef bn[64];
        for (int c = 0; c < 64; c++) bn[c] = mrt_bn_coef_make(th_rng_uniform(&r, 0.5, 2), th_rng_uniform(&r, -1, 1));
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)(i % 97 == 50 ? th_rng_uniform(&r, -150, 150) : th_rng_uniform(&r, -6, 6));
        for (int64_t i = 0; i < n + 5; i++) other[i] = (float)th_rng_uniform(&r, -1, 1);
        const mrt_epilogue chains[] = {
            {2, {{.kind = MRT_POST_BATCHNORM, .bn = bn}, {.kind = MRT_POST_SILU}}},
            {3, {{.kind = MRT_POST_BATCHNORM, .bn = bn}, {.kind = MRT_POST_ADD, .other = other},
                 {.kind = MRT_POST_CLIP, .lo = -1.0f, .hi = 4.0f}}},
            {2, {{.kind = MRT_POST_ADD_ROW, .other = other, .n_cols = cols}, {.kind = MRT_POST_SIGMOID}}},
            /* BatchNormalization then Relu or Clip: run as one pass (post_bn_clamp) */
            {2, {{.kind = MRT_POST_BATCHNORM, .bn = bn}, {.kind = MRT_POST_CLIP, .lo = -1.0f, .hi = 4.0f}}},
            {2, {{.kind = MRT_POST_BATCHNORM, .bn = bn}, {.kind = MRT_POST_RELU}}},
            {2, {{.kind = MRT_POST_BATCHNORM, .bn = bn}, {.kind = MRT_POST_SIGMOID}}},
        };
        for (size_t k = 0; k < sizeof chains / sizeof chains[0]; k++) {
            memcpy(y0, x, (size_t)n * sizeof *x);
            memcpy(y1, x, (size_t)n * sizeof *x);
            /* at0 = 5: the ADD operand and the row vector are read from index 5 on */
            for (int64_t row = 0; row < rows; row++)
                mrt_epilogue_apply(&chains[k], y0 + row * cols, cols, ch0 + row, 5 + row * cols);
            mrt_epilogue_apply_rows(&chains[k], y1, rows, cols, cols, ch0, 5);
            cr_assert(memcmp(y0, y1, (size_t)n * sizeof *y0) == 0, "chain %zu, %lld x %lld: block != row by row", k,
                      (long long)rows, (long long)cols);
        }
        /* and two chains against their formulas: BatchNormalization then SiLU, then Sigmoid (the sigmoid of one
           element alone: the general body on a masked vector) */
        for (int c = 0; c < 2; c++) {
            memcpy(y1, x, (size_t)n * sizeof *x);
            mrt_epilogue_apply_rows(&chains[c == 0 ? 0 : 5], y1, rows, cols, cols, ch0, 5);
            for (int64_t i = 0; i < n; i++) {
                const mrt_bn_coef *k = &bn[ch0 + i / cols];
                float v = fmaf(x[i], k->a_hi, k->b_hi) + fmaf(x[i], k->a_lo, k->b_lo), sg;
                mrt_vsigmoid_f32(&sg, &v, 1);
                float want = c == 0 ? v * sg : sg;
                cr_assert(memcmp(&y1[i], &want, sizeof want) == 0, "BatchNormalization+%s at %lld: %a, want %a",
                          c == 0 ? "SiLU" : "Sigmoid", (long long)i, (double)y1[i], (double)want);
            }
        }
        free(x);
        free(other);
        free(y0);
        free(y1);
    }
}

/* mrt_bn_apply_f32 (engine/epilogue.h) against x * A + B in long double (64-bit significand: x * A is off by
   2^-64 relative at most). Bounds by construction: 0.5 ulp for each of its two roundings, plus A's and B's 2^-48,
   so 1.5 ulp where the result keeps its magnitude (1.25 seen) and 2^-23 (|x A| + |B|) anywhere; a single
   fmaf(x, (float)A, (float)B) breaks the first. A quarter of the cases put x near -B / A: cancellation. */
Test(epilogue, batchnorm_pairs_within_their_bounds)
{
    th_rng r;
    th_rng_init(&r, th_seed("epilogue.bn_pairs"));
    double worst_ulp = 0, worst_abs = 0;
    int64_t kept = 0;
    for (int64_t i = 0; i < 2000000; i++) {
        double a = ldexp(th_rng_uniform(&r, 1, 2), (int)th_rng_uniform(&r, -6, 6)) * (i & 1 ? -1 : 1);
        double b = ldexp(th_rng_uniform(&r, 1, 2), (int)th_rng_uniform(&r, -6, 6)) * (i & 2 ? -1 : 1);
        float x = (float)ldexp(th_rng_uniform(&r, -2, 2), (int)th_rng_uniform(&r, -6, 6));
        if (i % 4 == 3) x = (float)(-b / a * (1 + ldexp(th_rng_uniform(&r, -1, 1), -(int)th_rng_uniform(&r, 0, 24))));
        float y = mrt_bn_apply_f32(x, mrt_bn_coef_make(a, b));
        long double exact = (long double)x * a + b;
        double err = (double)fabsl((long double)y - exact), mag = fabs((double)x * a) + fabs(b);
        double rel = err / ldexp(mag, -24);
        cr_assert(rel <= 2.0 + 1e-6, "x %a A %a B %a: %a is %.3g x 2^-24 (|x A| + |B|) off", (double)x, a, b,
                  (double)y, rel);
        if (rel > worst_abs) worst_abs = rel;
        if (fabs((double)exact) < ldexp(mag, -8)) continue; /* cancelled: only the bound above */
        int e;
        frexp((double)exact, &e);
        double ulp = err / ldexp(1.0, e - 24);
        cr_assert(ulp <= 1.5, "x %a A %a B %a: %a is %.3f ulp off", (double)x, a, b, (double)y, ulp);
        if (ulp > worst_ulp) worst_ulp = ulp;
        kept++;
    }
    cr_log_info("BatchNormalization pairs: %.3f ulp at most over %lld uncancelled cases, %.3f x 2^-24 (|x A| + |B|) "
                "over all", worst_ulp, (long long)kept, worst_abs);
    /* an infinite multiplier (var + eps == 0) gives x * inf + B, not the NaN that inf - inf in its lo would make */
    mrt_bn_coef k = mrt_bn_coef_make(INFINITY, 1.0);
    cr_assert(mrt_bn_apply_f32(2.0f, k) == INFINITY && mrt_bn_apply_f32(-2.0f, k) == -INFINITY);
    k = mrt_bn_coef_make(1e39, 0.0); /* finite in double, inf in float */
    cr_assert(mrt_bn_apply_f32(1.0f, k) == INFINITY);
    cr_assert(isnan(mrt_bn_apply_f32(NAN, mrt_bn_coef_make(1.5, 0.25))));
}
