/* Hot loops compiled three times (AVX-512, AVX2, baseline x86-64) and chosen when the library loads (GCC's
 * target_clones): the build stays portable and the CPU it runs on decides. Results do not depend on the
 * choice: the build is ISO C11, so GCC does not contract a*b+c into FMAs (-ffp-contract=off), and the clones
 * only vectorize element-wise loops whose order of operations per element is unchanged. */
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MRT_VECTORIZE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MRT_VECTORIZE_CLONES
#endif
