/* Hot loops compiled three times (AVX-512, AVX2, baseline x86-64) and chosen when the library loads (GCC's
 * target_clones): the build stays portable and the CPU it runs on decides. Results do not depend on the
 * choice: the build is ISO C11, so GCC does not contract a*b+c into FMAs (-ffp-contract=off), and the clones
 * only vectorize element-wise loops whose order of operations per element is unchanged.
 * MRT_HAVE_AVX512_INTRINSICS: the compiler takes the hand-written AVX-512 bodies (x86-64 GCC or Clang); whether the
 * CPU runs them is mrt_cpu_has_avx512f()'s answer. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MRT_HAVE_AVX512_INTRINSICS 1
#endif

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* The lanes i of a 16-float load at position c0 + i that lie in [0, n): a row's columns, the rest padding */
static inline __mmask16 mrt_mask16_inside(int64_t c0, int64_t n)
{
    int64_t lo = c0 < 0 ? -c0 : 0, hi = n - c0;
    if (hi > 16) hi = 16;
    if (lo >= hi) return 0;
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* The first n lanes (none for n <= 0, all 16 from n = 16): a row's last, partial vector */
static inline __mmask16 mrt_mask16_first(int64_t n) { return mrt_mask16_inside(0, n); }

/* Lane i = float 2i (mrt_even16) or 2i + 1 (mrt_odd16) of the 32 in lo then hi: a stride-2 row's columns from two
   16-float loads */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mrt_even16(__m512 lo, __m512 hi)
{
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), hi);
}
__attribute__((target("avx512f"), always_inline)) static inline __m512 mrt_odd16(__m512 lo, __m512 hi)
{
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), hi);
}

/* In-register transpose of 16 rows of 16 floats: afterwards r[mrt_transpose16_perm[c]] holds column c (lane i = row
   i): a block of 16 channels' values between [position][channel] and [channel][position] */
static const int mrt_transpose16_perm[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
__attribute__((target("avx512f"), always_inline)) static inline void mrt_transpose16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            __m512d a = _mm512_castps_pd(t[i + h]), b = _mm512_castps_pd(t[i + h + 2]);
            r[i + h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
            r[i + h + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        }
    for (int i = 0; i < 16; i += 8)
        for (int h = 0; h < 4; h++) {
            t[i + h] = _mm512_shuffle_f32x4(r[i + h], r[i + h + 4], 0x88);
            t[i + h + 4] = _mm512_shuffle_f32x4(r[i + h], r[i + h + 4], 0xDD);
        }
    for (int h = 0; h < 8; h++) {
        r[h] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0x88);
        r[h + 8] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0xDD);
    }
}
#endif

/* The CPU has AVX-512F (asked once per translation unit, then cached) */
static inline bool mrt_cpu_has_avx512f(void)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return have;
#else
    return false;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MRT_VECTORIZE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MRT_VECTORIZE_CLONES
#endif
