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
