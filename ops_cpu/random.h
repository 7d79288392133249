/* The random stream of Dropout (ops_cpu/dropout.c) and the random ops (ops_cpu/misc.c): MT19937 (Matsumoto and
 * Nishimura, 1998) seeded like numpy's legacy RandomState(seed), with numpy's 53-bit doubles, polar-method normals
 * and n = 1 binomial inversion. onnx.reference draws with RandomState(seed), so a seeded node gives the values of
 * the ONNX reference implementation; other engines draw other numbers. */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/op.h"

#define MRT_MT_N 624
#define MRT_MT_M 397

typedef struct mrt_mt19937 {
    uint32_t mt[MRT_MT_N];
    int pos;
    bool has_gauss; /* the polar method makes normals in pairs */
    double gauss;
} mrt_mt19937;

static inline void mrt_mt_seed(mrt_mt19937 *s, uint32_t seed)
{
    s->mt[0] = seed;
    for (int i = 1; i < MRT_MT_N; i++) s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + (uint32_t)i;
    s->pos = MRT_MT_N;
    s->has_gauss = false;
    s->gauss = 0;
}

static inline uint32_t mrt_mt_next(mrt_mt19937 *s)
{
    if (s->pos >= MRT_MT_N) { /* in place: the last M entries read already-updated words, as the algorithm says */
        for (int i = 0; i < MRT_MT_N; i++) {
            uint32_t y = (s->mt[i] & 0x80000000u) | (s->mt[(i + 1) % MRT_MT_N] & 0x7fffffffu);
            s->mt[i] = s->mt[(i + MRT_MT_M) % MRT_MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        s->pos = 0;
    }
    uint32_t y = s->mt[s->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* uniform in [0, 1) from 27 + 26 bits of two words */
static inline double mrt_mt_double(mrt_mt19937 *s)
{
    uint32_t a = mrt_mt_next(s) >> 5, b = mrt_mt_next(s) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* standard normal, Marsaglia's polar method */
static inline double mrt_mt_gauss(mrt_mt19937 *s)
{
    if (s->has_gauss) {
        s->has_gauss = false;
        return s->gauss;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * mrt_mt_double(s) - 1.0;
        x2 = 2.0 * mrt_mt_double(s) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    s->gauss = f * x1;
    s->has_gauss = true;
    return f * x2;
}

/* Bernoulli(p) as RandomState's binomial(1, p): inversion on min(p, 1 - p), one draw even for p = 0 or 1 (the
   legacy stream has no shortcut); p must be in [0, 1]. */
static inline int mrt_mt_bernoulli(mrt_mt19937 *s, double p)
{
    bool flip = p > 0.5;
    double pp = flip ? 1.0 - p : p, q = 1.0 - pp, qn = exp(log(q)), px = qn;
    double bound = fmin(1.0, pp + 10.0 * sqrt(pp * q + 1.0));
    int64_t x = 0, b = (int64_t)bound;
    double u = mrt_mt_double(s);
    while (u > px) {
        x++;
        if (x > b) { /* past the bound: start over with a fresh draw */
            x = 0;
            px = qn;
            u = mrt_mt_double(s);
        } else {
            u -= px;
            px = ((double)(1 - x + 1) * pp * px) / ((double)x * q);
        }
    }
    return (int)(flip ? 1 - x : x);
}

/* ---- the random ops' draws, with the arithmetic of onnx.reference (draw, round to the output type, scale, round,
   shift, round), so seeded nodes give its values: one definition for ops_cpu/misc.c and ops_cuda/misc.cu (which
   draws on the host and copies up). */

/* s seeded from the node's seed attribute. */
static inline void mrt_random_seed_stream(const mrt_op_ctx *ctx, mrt_mt19937 *s)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, "seed");
    int64_t seed = 0; /* absent: a fixed seed, so runs stay reproducible */
    /* fmod first: a float seed past int64's range must not overflow the cast (only its value mod 2^32 matters) */
    if (a && a->type == MRT_ATTR_FLOAT && isfinite(a->f)) seed = mrt_f64_to_i64_sat(fmod(trunc(a->f), 4294967296.0));
    else if (a && a->type == MRT_ATTR_INT) seed = a->i;
    mrt_mt_seed(s, (uint32_t)seed); /* RandomState(int(seed)); seeds outside [0, 2^32) wrap */
}

/* RandomUniform(Like) / RandomNormal(Like): n values of output dtype dt into data, drawn from s, which it seeds. */
static inline void mrt_random_fill(const mrt_op_ctx *ctx, mrt_mt19937 *s, bool normal, mrt_dtype dt, void *data, int64_t n)
{
    mrt_random_seed_stream(ctx, s);
    double scale, shift;
    if (normal) {
        scale = mrt_round_to(dt, mrt_attr_float(ctx, "scale", 1.0f));
        shift = mrt_round_to(dt, mrt_attr_float(ctx, "mean", 0.0f));
    } else {
        double low = mrt_attr_float(ctx, "low", 0.0f), high = mrt_attr_float(ctx, "high", 1.0f);
        scale = mrt_round_to(dt, high - low);
        shift = mrt_round_to(dt, low);
    }
    for (int64_t i = 0; i < n; i++) {
        double v = mrt_round_to(dt, normal ? mrt_mt_gauss(s) : mrt_mt_double(s));
        mrt_store_f64(dt, data, i, mrt_round_to(dt, v * scale) + shift);
    }
}

/* Bernoulli's n probabilities (dtype xdt at x) checked to lie in [0, 1], the node failed at the first that does not. */
static inline mrt_status mrt_random_check_probs(const mrt_op_ctx *ctx, mrt_dtype xdt, const void *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double p = mrt_load_f64(xdt, x, i);
        if (!(p >= 0.0 && p <= 1.0))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "probability %g at index %lld of 'input' is outside [0, 1]", p,
                               (long long)i);
    }
    return MRT_STATUS_OK;
}

/* Bernoulli: a draw per probability at x (dtype xdt) into y (dtype ydt), n of them, from s, which it seeds. */
static inline void mrt_random_bernoulli(const mrt_op_ctx *ctx, mrt_mt19937 *s, mrt_dtype xdt, const void *x,
                                        mrt_dtype ydt, void *y, int64_t n)
{
    mrt_random_seed_stream(ctx, s);
    for (int64_t i = 0; i < n; i++) mrt_store_i64(ydt, y, i, mrt_mt_bernoulli(s, mrt_load_f64(xdt, x, i)));
}
