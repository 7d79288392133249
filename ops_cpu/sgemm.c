/* minirt's float32 GEMM (see sgemm.h): packed panels, an 8 x 48 AVX-512 register tile (24 accumulators, one
 * broadcast of A and three vectors of B per k; narrower for a panel's last columns, one row's chains alone for a
 * panel of one row; A read in place from its rows when it comes unpacked with unit column stride, as a MatMul's
 * activations do), loops with fmaf() elsewhere,
 * rows-as-lanes loops for products and panel tails of at most four columns, and two ways to share the work:
 *  - wide B (many columns): each task owns a strip of up to 192 columns of C and all its rows, and packs the
 *    strip's B block by block into its own scratch (for a Conv this is im2col, done in cache instead of through
 *    memory);
 *  - narrow B: B is packed once into shared scratch (or, when a copy fits in L2, once per thread: private_b), then
 *    tasks split the rows and, when there are few rows, the columns.
 * Both compute each C element's k blocks in order, each block's sum one fma chain from 0 added to C (see sgemm.h),
 * so the bits never depend on them. */
#include "ops_cpu/sgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu/epilogue.h"
#include "ops_cpu/simd.h"

#define MR MRT_SGEMM_MR
#define NR MRT_SGEMM_NR
enum {
    PRIVATE_B_THREADS = 64,               /* see private_b */
    PRIVATE_B_MAX_BYTES = 1 << 20,
    K_BLOCK = MRT_SGEMM_K_BLOCK, /* k values per pass: an A panel (8 KiB) stays in L1, a B block in L2 */
    STRIP = 4 * NR,      /* columns of a wide-B task, at most (fewer when that leaves too few tasks per thread) */
    SHARED_STRIP = 8 * NR, /* columns of a narrow-B task */
    BIG_B_BYTES = 8 << 20  /* a packed B larger than this goes k block by k block (k_block_tasks) */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
/* floats, rounded up to a 64-byte multiple so that every part of the scratch stays aligned */
static int64_t align16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Wide mode's column strips. A strip's packed B block holds at most K_BLOCK x STRIP floats (192 KiB, in L2), so a
   product with a short k gets wider strips: up to 64 panels when k <= 16. Long strips let each C row be written
   in long runs, a panel (MR rows) at a time; when C is not in cache (a large model's early layers, whose output
   buffers were last touched one inference ago), short runs across all rows were more streams than the hardware
   prefetchers follow (minirt_kernels --cold, MobileNetV2's 16->96 1x1 at 112x112: 0.68-0.72 -> 0.51-0.54 ms).
   At least four strips per thread where there are enough panels (a 28x28 image on two threads: 8 strips of 2
   or 3 panels balance better than 5 of 4), as many for every thread, and the panels dealt out evenly, so that
   each thread's share of the strips (threadpool.h) is the same work (a 56x56 image has 66 panels: 17 strips of
   4 and one of 2 left one thread 9 strips to the other's 8; 18 strips of 3 or 4 make 33 panels each). */
static int64_t wide_strips(int64_t n, int64_t k, int threads)
{
    int64_t kb = k < 1 ? 1 : min64(k, K_BLOCK); /* k = 0 (a Conv from no channels) still sizes a workspace */
    int64_t panels = ceil_div(n, NR), strips = ceil_div(panels, (STRIP / NR) * K_BLOCK / kb);
    if (strips < 4 * (int64_t)threads) strips = min64(panels, 4 * (int64_t)threads);
    return min64(panels, ceil_div(strips, threads) * threads);
}

/* a thread's packed B block: its k block by the widest strip (strip t has panels [panels t / strips, ...)) */
static int64_t slot_floats(int64_t n, int64_t k, int threads)
{
    return min64(k, K_BLOCK) * ceil_div(ceil_div(n, NR), wide_strips(n, k, threads)) * NR;
}

int64_t mrt_sgemm_packed_a_floats(int64_t m, int64_t k) { return align16(ceil_div(m, MR) * MR * k); }
int64_t mrt_sgemm_packed_b_floats(int64_t k, int64_t n) { return align16(ceil_div(n, NR) * NR * k); }

mrt_status mrt_sgemm_alloc_packed(const mrt_op_ctx *ctx, int64_t n, float **out)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    *out = NULL;
    MRT_TRY(mrt_check_alloc(bytes, "the packed weights"));
    *out = mrt_plan_alloc(ctx, bytes);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory packing the weights (%zu bytes)", bytes);
    return MRT_STATUS_OK;
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* A full panel of row-major A, 8 k at a time: eight 8-float row pieces transposed in registers into eight
   8-row columns (the scalar loop reads eight rows element by element: 3% of the Transformer encoder's run).
   Returns how many k it packed (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t pack_a_panel_avx2(const float *a, int64_t rs, int64_t k, float *d)
{
    int64_t kk = 0;
    for (; kk + 8 <= k; kk += 8) {
        __m256 r[8], t[8];
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(a + i * rs + kk);
        for (int i = 0; i < 8; i += 2) {
            t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
            t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
        }
        for (int i = 0; i < 8; i += 4)
            for (int h = 0; h < 2; h++) {
                r[i + h] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], 0x44);
                r[i + h + 2] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], 0xEE);
            }
        /* r[0..3] hold k = 0, 2, 1, 3 of rows 0-3 (low lanes) and k = 4, 6, 5, 7 (high lanes); r[4..7] rows 4-7 */
        static const int order[4] = {0, 2, 1, 3};
        for (int q = 0; q < 4; q++) {
            _mm256_storeu_ps(d + (kk + order[q]) * MR, _mm256_permute2f128_ps(r[q], r[q + 4], 0x20));
            _mm256_storeu_ps(d + (kk + 4 + order[q]) * MR, _mm256_permute2f128_ps(r[q], r[q + 4], 0x31));
        }
    }
    return kk;
}
#endif

/* Where panel p's k block starting at k0 begins in a packed A of `panels` panels (see sgemm.h): blocks before it
   are all K_BLOCK deep. */
static int64_t a_offset(int64_t panels, int64_t k, int64_t p, int64_t k0)
{
    return k0 * panels * MR + p * MR * min64(K_BLOCK, k - k0);
}

/* Panels [p0, p1) of A (m x k) into the packed layout of the whole of A. */
static void pack_a_range(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, int64_t p0, int64_t p1,
                         float *dst)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    static int avx2 = -1;
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
#endif
    int64_t panels = ceil_div(m, MR);
    for (int64_t p = p0; p < p1; p++)
        for (int64_t k0 = 0; k0 < k; k0 += K_BLOCK) {
            int64_t kc = min64(K_BLOCK, k - k0), rows = min64(MR, m - p * MR), kk0 = 0;
            const float *src = a + p * MR * rs + k0 * cs;
            float *d = dst + a_offset(panels, k, p, k0);
#ifdef MRT_HAVE_AVX512_INTRINSICS
            if (avx2 && cs == 1 && rows == MR) kk0 = pack_a_panel_avx2(src, rs, kc, d);
#endif
            for (int64_t kk = kk0; kk < kc; kk++) {
                for (int64_t i = 0; i < rows; i++) d[kk * MR + i] = src[i * rs + kk * cs];
                for (int64_t i = rows; i < MR; i++) d[kk * MR + i] = 0.0f;
            }
        }
}

void mrt_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *dst)
{
    pack_a_range(a, rs, cs, m, k, 0, ceil_div(m, MR), dst);
}

/* B[k0:k1, j0:j1] of a strided matrix as panels (the mrt_sgemm_pack_b_fn layout). Vectorised copies: for a
   short product (few rows of A) packing costs as much as a good part of the arithmetic. */
MRT_VECTORIZE_CLONES
static void pack_b_strided(const float *b, int64_t rs, int64_t cs, const float *scale, int64_t scale_stride, int64_t k0,
                           int64_t k1, int64_t j0, int64_t j1, float *dst)
{
    int64_t kc = k1 - k0;
    for (int64_t q = 0; q < ceil_div(j1 - j0, NR); q++) {
        int64_t jb = j0 + q * NR, cols = min64(NR, j1 - jb);
        float *d = dst + q * kc * NR;
        for (int64_t kk = k0; kk < k1; kk++, d += NR) {
            const float *s = b + kk * rs + jb * cs;
            if (scale) { /* the product the fused Mul computes: x * s, one rounding */
                float sc = scale[kk * scale_stride];
                for (int64_t j = 0; j < cols; j++) d[j] = s[j * cs] * sc;
            } else if (cs == 1) {
                for (int64_t j = 0; j < cols; j++) d[j] = s[j];
            } else {
                for (int64_t j = 0; j < cols; j++) d[j] = s[j * cs];
            }
            for (int64_t j = cols; j < NR; j++) d[j] = 0.0f;
        }
    }
}

void mrt_sgemm_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, float *dst)
{
    /* one panel at a time: each panel holds all of k */
    for (int64_t q = 0; q < ceil_div(n, NR); q++)
        pack_b_strided(b, rs, cs, NULL, 0, 0, k, q * NR, min64(n, q * NR + NR), dst + q * k * NR);
}

static void pack_b_block(const mrt_sgemm_b *b, int64_t k0, int64_t k1, int64_t j0, int64_t j1, float *dst)
{
    if (b->pack) b->pack(b->pack_src, k0, k1, j0, j1, dst);
    else pack_b_strided(b->b, b->rs, b->cs, b->row_scale, b->row_scale_stride, k0, k1, j0, j1, dst);
}

/* ------------------------------------------------------------------ register tiles */

/* C[0:mr, 0:nr] = (load ? C + s : s), s = the sum over kk < kc (one k block) of a[kk][i] * b[kk][j] as one fma
   chain per element from 0, then + bias[i] when bias is given, then te's epilogue when te is given (AVX-512 tile
   only). a: MR floats per kk, b: NR floats per kk (64-byte aligned). */
typedef void (*tile_fn)(int64_t kc, const float *a, const float *a_next, const float *b, float *c, int64_t ldc, int mr,
                        int nr, bool load, const float *bias, const mrt_reg_epilogue *te);

MRT_VECTORIZE_CLONES
static void tile_generic(int64_t kc, const float *a, const float *a_next, const float *b, float *c, int64_t ldc, int mr,
                         int nr, bool load, const float *bias, const mrt_reg_epilogue *te)
{
    (void)a_next, (void)te; /* te never given: the driver applies the epilogue as a pass */
    float acc[MR][NR];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) acc[i][j] = 0.0f;
    for (int64_t kk = 0; kk < kc; kk++, a += MR, b += NR)
        for (int i = 0; i < MR; i++) {
            float ai = a[i];
            for (int j = 0; j < NR; j++) acc[i][j] = fmaf(ai, b[j], acc[i][j]);
        }
    for (int i = 0; i < mr; i++) {
        float bi = bias ? bias[i] : 0.0f;
        for (int j = 0; j < nr; j++) {
            float v = load ? c[i * ldc + j] + acc[i][j] : acc[i][j];
            c[i * ldc + j] = bias ? v + bi : v;
        }
    }
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* The tile's body: NV vectors of 16 columns (the full tile is NV = 3; a panel's last columns use the narrowest tile
   that covers them: a 7x7 image has 49 columns, 48 + 1), B's row kk at BROW (packed, or read in place), the chains
   of the panel's first ROWS rows (MR, or 1 for a product of one row). */
#define TILE_AVX512_BODY(NV, BROW, ROWS) TILE_AVX512_BODY_A(NV, BROW, ROWS, a[i], MR, false, )
/* the same, fetching into L2 the next tile's A panel (a_next) a line every two k: a large Conv's packed weights
   (ResNet-18's 512->512 3x3, 9.4 MB) come from memory once per run, in 8 KiB panel blocks too short and too far
   apart for the hardware prefetchers (minirt_kernels --cold, 512->512 at 7x7, 2 threads: 1.30 -> 1.18 ms) */
#define TILE_AVX512_BODY_PF(NV, BROW, ROWS)                                                                        \
    TILE_AVX512_BODY_A(NV, BROW, ROWS, a[i], MR, false,                                                            \
                       if (!(kk & 1)) _mm_prefetch((const char *)(a_next + kk * MR), _MM_HINT_T1);)
/* the rows path's body (B read in place from an image's channel planes): TILE_AVX512_BODY_PF, also fetching into L1
   B's row PF_ROWS_AHEAD k further on. Consecutive rows are a plane apart (pages apart from 32x32 up), which the
   hardware prefetchers do not follow, and inside a model half of them were written by the other core: every row was
   a demand miss. MobileNetV2 on two threads, its 28x28 projections 146 -> 116 us, the 56x56 ones 189 -> 160. */
enum { PF_ROWS_AHEAD = 16 };
#define TILE_ROWS_BODY_PF(NV)                                                                                      \
    TILE_AVX512_BODY_A(NV, brows[kk] + boff, MR, a[i], MR, false,                                                  \
                       if (!(kk & 1)) _mm_prefetch((const char *)(a_next + kk * MR), _MM_HINT_T1);                 \
                       {                                                                                           \
                           const float *bf = brows[kk + PF_ROWS_AHEAD < kc ? kk + PF_ROWS_AHEAD : kc - 1] + boff;  \
                           for (int v = 0; v < NV; v++) _mm_prefetch((const char *)(bf + 16 * v), _MM_HINT_T0);    \
                       })
/* the same with row i's k-th A value at AEL (a advancing ASTEP floats per k); CPF: fetch C's rows even when not
   accumulating */
#define TILE_AVX512_BODY_A(NV, BROW, ROWS, AEL, ASTEP, CPF, PF)                                                         \
    __m512 acc[ROWS][NV];                                                                                          \
    __mmask16 mask[NV];                                                                                            \
    for (int v = 0; v < NV; v++) mask[v] = mrt_mask16_first(nr - 16 * v);                                          \
    /* every loop over acc unrolled, this one too: one left rolled keeps acc in memory, which GCC then zeroes,     \
       stores and reloads around the k loop (the 16->96 1x1 at 112x112 alone: 0.215 -> 0.174 ms) */                \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++)                                                        \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();                      \
    /* C is added after the k loop: have it in L1 by then. So too when CPF (A read in place, a MatMul of           \
       activations, with a C larger than L2) and C only written: Whisper's QK^T (k = 64) writes 9 MB a head that    \
       is in no cache, and its tiles spent a third of their time after the k loop (1 thread, [4,1500,64] x          \
       [4,64,1500] alone, best of ~150 runs: 5.28-5.39 -> 4.90-4.99 ms with the plain stores below) */              \
    if (load || (CPF))                                                                                             \
        for (int i = 0; i < mr; i++)                                                                               \
            for (int v = 0; v < NV; v++) _mm_prefetch((const char *)(c + i * ldc + 16 * v), _MM_HINT_T0);          \
    /* and a fused residual: a row a tile, ldc apart, which the hardware prefetchers did not fetch (a 1x1 Conv       \
       512 -> 2048 at 28x28 with Add and Relu fused took 7.3 ms against its 6.6 without the Add) */                  \
    if (te && te->other)                                                                                           \
        for (int i = 0; i < mr; i++)                                                                               \
            for (int v = 0; v < NV; v++) _mm_prefetch((const char *)(te->other + i * ldc + 16 * v), _MM_HINT_T0);  \
    for (int64_t kk = 0; kk < kc; kk++, a += (ASTEP)) {                                                            \
        const float *bk = (BROW);                                                                                  \
        PF                                                                                                         \
        __m512 bv[NV];                                                                                             \
        for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(bk + 16 * v);                                         \
        for (int i = 0; i < ROWS; i++) {                                                                           \
            __m512 ai = _mm512_set1_ps(AEL);                                                                       \
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);                        \
        }                                                                                                          \
    }                                                                                                              \
    /* a full tile written as it is: plain stores, no masks, loads or per-row checks */                           \
    if (mr == ROWS && nr == 16 * NV && !load && !bias && !te) {                                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++)                                                    \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]); \
        return;                                                                                                    \
    }                                                                                                              \
    /* the rows unrolled (a row past mr is skipped), so acc stays in registers: with a runtime row loop GCC        \
       spills all MR x NV accumulators, which costs a 1x1 convolution with k = 16 a fifth of its time */           \
    __m512 lo = _mm512_set1_ps(te ? te->lo : 0.0f), hi = _mm512_set1_ps(te ? te->hi : 0.0f);                       \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++) {                                                      \
        if (i >= mr) break;                                                                                        \
        __m512 ahi, alo, bhi, blo;                                                                                 \
        if (te && te->bn) {                                                                                        \
            ahi = _mm512_set1_ps(te->bn[i].a_hi), alo = _mm512_set1_ps(te->bn[i].a_lo);                            \
            bhi = _mm512_set1_ps(te->bn[i].b_hi), blo = _mm512_set1_ps(te->bn[i].b_lo);                            \
        }                                                                                                          \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                                     \
            __m512 r = load ? _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], c + i * ldc + 16 * v), acc[i][v])       \
                            : acc[i][v];                                                                           \
            r = bias ? _mm512_add_ps(r, _mm512_set1_ps(bias[i])) : r;                                              \
            if (te) r = mrt_reg_epilogue16(te, r, ahi, alo, bhi, blo, i * ldc + 16 * v, mask[v], lo, hi);          \
            _mm512_mask_storeu_ps(c + i * ldc + 16 * v, mask[v], r);                                               \
        }                                                                                                          \
    }
/* with an epilogue in registers, and without (te a constant NULL: no register goes to it); NAME tile_avx512 computes
   all MR rows, tile1_avx512 only the first (mr = 1: a classifier's one-row Gemm, which otherwise computes eight
   rows' chains for one) */
#define TILE_AVX512(NAME, NV, ROWS)                                                                                \
    __attribute__((target("avx512f"))) static void NAME##_ep_##NV(int64_t kc, const float *a, const float *a_next, \
                                                                   const float *b, float *c, int64_t ldc, int mr,  \
                                                                   int nr, bool load, const float *bias,           \
                                                                   const mrt_reg_epilogue *te)                     \
    {                                                                                                              \
        TILE_AVX512_BODY_PF(NV, b + kk * NR, ROWS)                                                                 \
    }                                                                                                              \
    __attribute__((target("avx512f"))) static void NAME##_##NV(int64_t kc, const float *a, const float *a_next,    \
                                                                const float *b, float *c, int64_t ldc, int mr,     \
                                                                int nr, bool load, const float *bias,              \
                                                                const mrt_reg_epilogue *ep)                        \
    {                                                                                                              \
        if (ep) {                                                                                                  \
            NAME##_ep_##NV(kc, a, a_next, b, c, ldc, mr, nr, load, bias, ep);                                      \
            return;                                                                                                \
        }                                                                                                          \
        const mrt_reg_epilogue *te = NULL;                                                                         \
        TILE_AVX512_BODY_PF(NV, b + kk * NR, ROWS)                                                                 \
    }
/* B's rows read in place (mrt_sgemm_tile_rows): row kk's floats from brows[kk] + boff; one k block, from 0
   (LOAD false) or added to C (LOAD true, the suffix _acc). LOAD is a constant: as a run-time flag it cost the
   stems and the 1x1 in-place path 1% (the 32->16 1x1 at 112x112: 0.144 -> 0.146 ms). */
#define TILE_ROWS_AVX512(NV, SUF, LOAD)                                                                            \
    __attribute__((target("avx512f"))) static void tile_rows_avx512##SUF##_ep_##NV(                                \
        int64_t kc, const float *a, const float *a_next, const float *const *brows, int64_t boff, float *c,        \
        int64_t ldc, int mr, int nr, const float *bias, const mrt_reg_epilogue *te)                                \
    {                                                                                                              \
        const bool load = LOAD;                                                                                    \
        TILE_ROWS_BODY_PF(NV)                                                                                      \
    }                                                                                                              \
    __attribute__((target("avx512f"))) static void tile_rows_avx512##SUF##_##NV(                                   \
        int64_t kc, const float *a, const float *a_next, const float *const *brows, int64_t boff, float *c,        \
        int64_t ldc, int mr, int nr, const float *bias, const mrt_reg_epilogue *ep)                                \
    {                                                                                                              \
        if (ep) {                                                                                                  \
            tile_rows_avx512##SUF##_ep_##NV(kc, a, a_next, brows, boff, c, ldc, mr, nr, bias, ep);                 \
            return;                                                                                                \
        }                                                                                                          \
        const bool load = LOAD;                                                                                    \
        const mrt_reg_epilogue *te = NULL;                                                                         \
        TILE_ROWS_BODY_PF(NV)                                                                                      \
    }
/* A's rows read in place (a product whose A is an activation, a MatMul's: packing it cost Whisper's encoder 6.6% of
   its run, writing and reading again a copy of its 36 MB attention weights): row i's value for k block column kk at
   a[aoff[i] + kk], aoff[i] = min(i, mr - 1) lda, so a panel's rows past mr read row mr - 1 again (computed, not
   stored) instead of past A's end. */
#define TILE_A_AVX512(NV, ROWS, SUF)                                                                               \
    __attribute__((target("avx512f"))) static void tile_a_avx512_ep##SUF##_##NV(                                   \
        int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, int mr, int nr, bool load, \
        const float *bias, const mrt_reg_epilogue *te, bool pfc)                                                   \
    {                                                                                                              \
        int64_t aoff[MR];                                                                                          \
        for (int i = 0; i < MR; i++) aoff[i] = (i < mr ? i : mr - 1) * lda;                                        \
        TILE_AVX512_BODY_A(NV, b + kk * NR, ROWS, a[aoff[i]], 1, pfc, )                                            \
    }                                                                                                              \
    __attribute__((target("avx512f"))) static void tile_a_avx512##SUF##_##NV(                                      \
        int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, int mr, int nr, bool load, \
        const float *bias, const mrt_reg_epilogue *ep, bool pfc)                                                   \
    {                                                                                                              \
        if (ep) {                                                                                                  \
            tile_a_avx512_ep##SUF##_##NV(kc, a, lda, b, c, ldc, mr, nr, load, bias, ep, pfc);                      \
            return;                                                                                                \
        }                                                                                                          \
        const mrt_reg_epilogue *te = NULL;                                                                         \
        int64_t aoff[MR];                                                                                          \
        for (int i = 0; i < MR; i++) aoff[i] = (i < mr ? i : mr - 1) * lda;                                        \
        TILE_AVX512_BODY_A(NV, b + kk * NR, ROWS, a[aoff[i]], 1, pfc, )                                            \
    }
TILE_AVX512(tile_avx512, 1, MR)
TILE_AVX512(tile_avx512, 2, MR)
TILE_AVX512(tile_avx512, 3, MR)
TILE_A_AVX512(1, MR, _r8)
TILE_A_AVX512(2, MR, _r8)
TILE_A_AVX512(3, MR, _r8)
TILE_A_AVX512(1, 1, _r1)
TILE_A_AVX512(2, 1, _r1)
TILE_A_AVX512(3, 1, _r1)
TILE_A_AVX512(1, 2, _r2)
TILE_A_AVX512(2, 2, _r2)
TILE_A_AVX512(3, 2, _r2)
TILE_A_AVX512(1, 4, _r4)
TILE_A_AVX512(2, 4, _r4)
TILE_A_AVX512(3, 4, _r4)
TILE_AVX512(tile1_avx512, 1, 1)
TILE_AVX512(tile1_avx512, 2, 1)
TILE_AVX512(tile1_avx512, 3, 1)
TILE_ROWS_AVX512(1, , false)
TILE_ROWS_AVX512(2, , false)
TILE_ROWS_AVX512(3, , false)
TILE_ROWS_AVX512(1, _acc, true)
TILE_ROWS_AVX512(2, _acc, true)
TILE_ROWS_AVX512(3, _acc, true)

/* tile_avx512 with A read in place, rows lda floats apart; panels of 1, 2 or 4 rows compute only those rows' chains
   (a recurrent step's product has the batch's rows, 1 to 4: eight rows' chains for four cost an LSTM of hidden 256
   and batch 4 a third of its run) */
static void tile_a_avx512(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, int mr, int nr,
                          bool load, const float *bias, const mrt_reg_epilogue *te, bool pfc)
{
    if (mr == 1) {
        if (nr > 32) tile_a_avx512_r1_3(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else if (nr > 16) tile_a_avx512_r1_2(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else tile_a_avx512_r1_1(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
    } else if (mr == 2) {
        if (nr > 32) tile_a_avx512_r2_3(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else if (nr > 16) tile_a_avx512_r2_2(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else tile_a_avx512_r2_1(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
    } else if (mr <= 4) {
        if (nr > 32) tile_a_avx512_r4_3(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else if (nr > 16) tile_a_avx512_r4_2(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
        else tile_a_avx512_r4_1(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
    } else if (nr > 32) tile_a_avx512_r8_3(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
    else if (nr > 16) tile_a_avx512_r8_2(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
    else tile_a_avx512_r8_1(kc, a, lda, b, c, ldc, mr, nr, load, bias, te, pfc);
}

static void tile_avx512(int64_t kc, const float *a, const float *a_next, const float *b, float *c, int64_t ldc, int mr,
                        int nr, bool load, const float *bias, const mrt_reg_epilogue *te)
{
    if (mr == 1) {
        if (nr > 32) tile1_avx512_3(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
        else if (nr > 16) tile1_avx512_2(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
        else tile1_avx512_1(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
    } else if (nr > 32) tile_avx512_3(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
    else if (nr > 16) tile_avx512_2(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
    else tile_avx512_1(kc, a, a_next, b, c, ldc, mr, nr, load, bias, te);
}
#endif

bool mrt_sgemm_tile_rows(int64_t kc, const float *a, const float *a_next, const float *const *brows, int64_t boff,
                         float *c, int64_t ldc, bool accumulate, int mr, int nr, const float *bias, const mrt_epilogue *ep,
                         int64_t ep_channel0, int64_t ep_at)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (mrt_cpu_has_avx512f()) {
        mrt_reg_epilogue te;
        bool with_ep = mrt_reg_epilogue_of(ep, ep_channel0, ep_at, &te);
        const mrt_reg_epilogue *tp = with_ep ? &te : NULL;
        const float *an = a_next ? a_next : a; /* no next block: the tile fetches its own, already in cache */
        if (accumulate) {
            if (nr > 32) tile_rows_avx512_acc_3(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
            else if (nr > 16) tile_rows_avx512_acc_2(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
            else tile_rows_avx512_acc_1(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
        } else {
            if (nr > 32) tile_rows_avx512_3(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
            else if (nr > 16) tile_rows_avx512_2(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
            else tile_rows_avx512_1(kc, a, an, brows, boff, c, ldc, mr, nr, bias, tp);
        }
        return with_ep;
    }
#else
    (void)ep, (void)ep_channel0, (void)ep_at;
#endif
    /* the same chains in scalar fmaf (exact, so the same bits) */
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < kc; kk++) acc = fmaf(a[kk * MR + i], brows[kk][boff + j], acc);
            float v = accumulate ? c[i * ldc + j] + acc : acc;
            c[i * ldc + j] = bias ? v + bias[i] : v;
        }
    return false;
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* mrt_sgemm_tile_rows_pair's body; te0/te1 (the epilogue at c0's and c1's flat index) both NULL or both given */
__attribute__((target("avx512f"))) static void tile_rows_pair_avx512(int64_t kc, const float *a,
                                                                    const float *const *brows0, int64_t boff0,
                                                                    const float *const *brows1, int64_t boff1,
                                                                    float *c0, float *c1, int64_t ldc, int mr,
                                                                    int nr0, int nr1, const float *bias,
                                                                    const mrt_reg_epilogue *te0,
                                                                    const mrt_reg_epilogue *te1)
{
    __m512 acc[MR][2];
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < kc; kk++, a += MR) {
        __m512 x0 = _mm512_loadu_ps(brows0[kk] + boff0), x1 = _mm512_loadu_ps(brows1[kk] + boff1);
        for (int i = 0; i < MR; i++) {
            __m512 ai = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(ai, x0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(ai, x1, acc[i][1]);
        }
    }
    __mmask16 m0 = mrt_mask16_first(nr0), m1 = mrt_mask16_first(nr1);
    __m512 lo = _mm512_set1_ps(te0 ? te0->lo : 0.0f), hi = _mm512_set1_ps(te0 ? te0->hi : 0.0f);
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) { /* unrolled, so that acc stays in registers */
        if (i >= mr) break;
        __m512 ahi, alo, bhi, blo;
        if (te0 && te0->bn) {
            ahi = _mm512_set1_ps(te0->bn[i].a_hi), alo = _mm512_set1_ps(te0->bn[i].a_lo);
            bhi = _mm512_set1_ps(te0->bn[i].b_hi), blo = _mm512_set1_ps(te0->bn[i].b_lo);
        }
        __m512 r0 = bias ? _mm512_add_ps(acc[i][0], _mm512_set1_ps(bias[i])) : acc[i][0];
        __m512 r1 = bias ? _mm512_add_ps(acc[i][1], _mm512_set1_ps(bias[i])) : acc[i][1];
        if (te0) {
            r0 = mrt_reg_epilogue16(te0, r0, ahi, alo, bhi, blo, i * ldc, m0, lo, hi);
            r1 = mrt_reg_epilogue16(te1, r1, ahi, alo, bhi, blo, i * ldc, m1, lo, hi);
        }
        _mm512_mask_storeu_ps(c0 + i * ldc, m0, r0);
        _mm512_mask_storeu_ps(c1 + i * ldc, m1, r1);
    }
}

bool mrt_sgemm_tile_rows_pair(int64_t kc, const float *a, const float *const *brows0, int64_t boff0,
                              const float *const *brows1, int64_t boff1, float *c0, float *c1, int64_t ldc, int mr,
                              int nr0, int nr1, const float *bias, const mrt_epilogue *ep, int64_t ep_channel0,
                              int64_t ep_at0, int64_t ep_at1)
{
    mrt_reg_epilogue te0, te1;
    bool with_ep = mrt_reg_epilogue_of(ep, ep_channel0, ep_at0, &te0);
    mrt_reg_epilogue_of(ep, ep_channel0, ep_at1, &te1);
    tile_rows_pair_avx512(kc, a, brows0, boff0, brows1, boff1, c0, c1, ldc, mr, nr0, nr1, bias, with_ep ? &te0 : NULL,
                          with_ep ? &te1 : NULL);
    return with_ep;
}
#endif

static tile_fn pick_tile(void)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (mrt_cpu_has_avx512f()) return tile_avx512;
#endif
    return tile_generic;
}

/* ------------------------------------------------------------------ the driver */

typedef struct sgemm_job {
    int64_t m, n, k;
    const float *ap;        /* packed A, or NULL: */
    const float *a_raw;     /* A read in place (AVX-512 tiles only), rows a_rs floats apart */
    int64_t a_rs;
    const mrt_sgemm_b *b;
    const float *bp;        /* packed B (shared mode) */
    const mrt_sgemm_out *out;
    float *slots;           /* wide mode: one block of slot floats per thread */
    int64_t slot;           /* wide mode: slot_floats(n, k, threads), the size the workspace was given */
    int64_t row_chunk, col_chunk, n_col_chunks;
    int64_t col_panels;     /* narrow mode, columns cut finer: column chunk c has panels [P c / n, P (c + 1) / n) of
                               these P (else chunks of col_chunk columns) */
    int64_t panels, strips;  /* wide mode: strip t covers panels [panels t / strips, panels (t + 1) / strips) */
    int threads;            /* the count the scratch was sized for */
    int64_t b_stride;       /* narrow mode with one or two columns: floats between B's rows */
    tile_fn tile;
    int64_t private_b;      /* narrow mode: floats between the threads' own copies of packed B, or 0: one shared copy */
    bool b_ready[PRIVATE_B_THREADS]; /* per thread: its copy is packed (only that thread touches its flag) */
    bool tile_ep;           /* the tiles apply the epilogue (mrt_reg_epilogue); the pass covers the other columns only */
    bool fetch_c;           /* A read in place and C larger than L2: the tiles fetch C's rows before writing them */
} sgemm_job;

/* A few columns: the whole product when it has at most COLS_MAX (a 1x1 convolution on a 1x1 image:
   squeeze-excitation; a matrix-vector product), or a panel's last columns (a 7x7 image has 49 = 48 + 1, a 14x14
   one 196 = 4 x 48 + 4), where a 16-lane tile would use one to four lanes. Here the rows are the vector lanes, as A's
   panels lay them out (8 rows per k), four panels at a time so that several chains advance at once. Each element
   is still its own fma chain in k order. */
#define COLS_MAX 4
typedef void (*cols_fn)(int64_t kc, const float *ap, int64_t a_pstride, int panels, const float *bp, int64_t bs,
                        int nc, float acc[][COLS_MAX][MR]);

static void cols_generic(int64_t kc, const float *ap, int64_t a_pstride, int panels, const float *bp, int64_t bs,
                         int nc, float acc[][COLS_MAX][MR])
{
    for (int64_t kk = 0; kk < kc; kk++)
        for (int p = 0; p < panels; p++)
            for (int j = 0; j < nc; j++)
                for (int i = 0; i < MR; i++)
                    acc[p][j][i] = fmaf(ap[p * a_pstride + kk * MR + i], bp[kk * bs + j], acc[p][j][i]);
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* One body per column count, with every loop bound a constant so the 4 x NC accumulators stay in registers (with
   the counts as run-time values GCC kept them on the stack: a tenth of the tile's speed). Panels past `panels`
   read panel 0 and are not stored. */
#define COLS_AVX2(NC)                                                                                              \
    __attribute__((target("avx2,fma"))) static void cols_avx2_##NC(int64_t kc, const float *ap, int64_t a_pstride, \
                                                                   int panels, const float *bp, int64_t bs,        \
                                                                   float acc[][COLS_MAX][MR])                      \
    {                                                                                                              \
        __m256 v[4][NC];                                                                                           \
        const float *pa[4];                                                                                        \
        for (int p = 0; p < 4; p++) {                                                                              \
            pa[p] = ap + (p < panels ? p : 0) * a_pstride;                                                         \
            for (int j = 0; j < NC; j++) v[p][j] = p < panels ? _mm256_loadu_ps(acc[p][j]) : _mm256_setzero_ps();  \
        }                                                                                                          \
        for (int64_t kk = 0; kk < kc; kk++) {                                                                      \
            __m256 b[NC];                                                                                          \
            for (int j = 0; j < NC; j++) b[j] = _mm256_broadcast_ss(bp + kk * bs + j);                             \
            for (int p = 0; p < 4; p++) {                                                                          \
                __m256 a = _mm256_loadu_ps(pa[p] + kk * MR);                                                       \
                for (int j = 0; j < NC; j++) v[p][j] = _mm256_fmadd_ps(a, b[j], v[p][j]);                          \
            }                                                                                                      \
        }                                                                                                          \
        for (int p = 0; p < 4; p++)                                                                                \
            if (p < panels)                                                                                        \
                for (int j = 0; j < NC; j++) _mm256_storeu_ps(acc[p][j], v[p][j]);                                 \
    }
COLS_AVX2(1)
COLS_AVX2(2)
COLS_AVX2(3)
COLS_AVX2(4)

static void cols_avx2(int64_t kc, const float *ap, int64_t a_pstride, int panels, const float *bp, int64_t bs, int nc,
                      float acc[][COLS_MAX][MR])
{
    switch (nc) {
    case 1: cols_avx2_1(kc, ap, a_pstride, panels, bp, bs, acc); break;
    case 2: cols_avx2_2(kc, ap, a_pstride, panels, bp, bs, acc); break;
    case 3: cols_avx2_3(kc, ap, a_pstride, panels, bp, bs, acc); break;
    default: cols_avx2_4(kc, ap, a_pstride, panels, bp, bs, acc); break;
    }
}
#endif

static cols_fn pick_cols(void)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return cols_avx2;
#endif
    return cols_generic;
}

/* Columns [j, j + nc) (nc <= COLS_MAX) of rows [m0, m1) for k in [k0, k1): bp is B's column j at row k0, rows bs
   floats apart. Like a tile: starts from C (load) or 0, adds the bias on the last k block. */
static void cols_block(const sgemm_job *jb, int64_t m0, int64_t m1, int64_t j, int nc, int64_t k0, int64_t k1,
                       const float *bp, int64_t bs, bool load, bool last)
{
    static cols_fn cols;
    if (!cols) cols = pick_cols();
    const mrt_sgemm_out *o = jb->out;
    for (int64_t i0 = m0; i0 < m1; i0 += 4 * MR) {
        int panels = (int)min64(4, ceil_div(m1 - i0, MR));
        float acc[4][COLS_MAX][MR];
        memset(acc, 0, sizeof acc); /* each block's chains start from 0 */
        const float *ap;
        _Alignas(64) float a_copy[4 * MR * K_BLOCK];
        if (jb->a_raw) { /* A in place: these panels' k block packed here, laid out as in a packed A */
            pack_a_range(jb->a_raw + i0 * jb->a_rs + k0, jb->a_rs, 1, min64(m1 - i0, 4 * MR), k1 - k0, 0, panels, a_copy);
            ap = a_copy;
        } else {
            ap = jb->ap + a_offset(ceil_div(jb->m, MR), jb->k, i0 / MR, k0);
        }
        cols(k1 - k0, ap, MR * (k1 - k0), panels, bp, bs, nc, acc);
        for (int64_t row = i0; row < min64(m1, i0 + 4 * MR); row++) {
            int p = (int)((row - i0) / MR), i = (int)((row - i0) % MR);
            float *c = o->c + row * o->ldc + j;
            for (int jj = 0; jj < nc; jj++) {
                float v = load ? c[jj] + acc[p][jj][i] : acc[p][jj][i];
                c[jj] = last && o->bias ? v + o->bias[row] : v;
            }
        }
    }
}

/* The fused epilogue over C[r0:r1, j0:j1], once those results are final. */
static void epilogue_rows(const mrt_sgemm_out *o, int64_t r0, int64_t r1, int64_t j0, int64_t j1)
{
    mrt_epilogue_apply_rows(o->ep, o->c + r0 * o->ldc + j0, r1 - r0, j1 - j0, o->ldc, o->ep_channel0 + r0,
                            o->ep_at0 + r0 * o->ldc + j0);
}

/* The packed A block the tiles use after panel i's (rows [m0, m1), k block [k0, k1)): the next panel's, or after the
   last the first panel's in the next k block (the order of narrow_tasks and wide_tasks), or panel i's own when that
   next block is shorter than this one (the tile fetches as many floats as it reads). */
static const float *next_a_panel(const sgemm_job *jb, int64_t i, int64_t m0, int64_t m1, int64_t k0, int64_t k1,
                                 const float *ap)
{
    int64_t panels = ceil_div(jb->m, MR);
    if (i + MR < m1) return ap + MR * (k1 - k0);
    if (k1 < jb->k && min64(K_BLOCK, jb->k - k1) == k1 - k0) return jb->ap + a_offset(panels, jb->k, m0 / MR, k1);
    return ap;
}

/* C[m0:m1, j0:j1] for k in [k0, k1); bpanel(q) is the panel of columns j0 + q*NR at row k0, panels `pstride`
   floats apart. */
static void compute_block(const sgemm_job *jb, int64_t m0, int64_t m1, int64_t j0, int64_t j1, int64_t k0, int64_t k1,
                          const float *bpanels, int64_t pstride)
{
    const mrt_sgemm_out *o = jb->out;
    bool load = o->accumulate || k0 > 0, last = k1 == jb->k;
    /* a last panel of at most COLS_MAX columns goes to the rows-as-lanes loop */
    int64_t tail = (j1 - j0) % NR, jt = tail > 0 && tail <= COLS_MAX ? j1 - tail : j1;
    /* rows in groups of four panels: the tiles, then the tail's columns of the same rows while their A panels are
       still in cache (a separate pass over all rows streamed A from memory again: 4% of ResNet-18's run, whose
       7x7 layers have 49 = 48 + 1 columns), then the epilogue */
    for (int64_t g = m0; g < m1; g += 4 * MR) {
        int64_t g1 = min64(m1, g + 4 * MR);
        for (int64_t i = g; i < g1; i += MR) {
            int mr = (int)min64(MR, g1 - i);
            const float *ap = jb->a_raw ? jb->a_raw + i * jb->a_rs + k0 : jb->ap + a_offset(ceil_div(jb->m, MR), jb->k, i / MR, k0);
            const float *a_next = jb->a_raw ? NULL : next_a_panel(jb, i, m0, m1, k0, k1, ap);
            const float *bias = last && o->bias ? o->bias + i : NULL;
            for (int64_t j = j0, q = 0; j < jt; j += NR, q++) {
                int nr = (int)min64(NR, j1 - j);
                float *c = o->c + i * o->ldc + j;
                mrt_reg_epilogue te;
                bool with_ep = last && jb->tile_ep && mrt_reg_epilogue_of(o->ep, o->ep_channel0 + i, o->ep_at0 + i * o->ldc + j, &te);
#ifdef MRT_HAVE_AVX512_INTRINSICS
                if (jb->a_raw) {
                    tile_a_avx512(k1 - k0, ap, jb->a_rs, bpanels + q * pstride, c, o->ldc, mr, nr, load, bias,
                                  with_ep ? &te : NULL, jb->fetch_c);
                    continue;
                }
#endif
                jb->tile(k1 - k0, ap, a_next, bpanels + q * pstride, c, o->ldc, mr, nr, load, bias, with_ep ? &te : NULL);
            }
        }
        if (jt < j1) cols_block(jb, g, g1, jt, (int)tail, k0, k1, bpanels + ((jt - j0) / NR) * pstride, NR, load, last);
        /* the epilogue over these rows of the whole block (or of the columns the tiles did not cover), still in
           cache: one call per row and op, not per tile (for a short k it costs as much as the products) */
        if (last) epilogue_rows(o, g, g1, jb->tile_ep ? jt : j0, j1);
    }
}

/* Wide mode: task t is the column strip [t*strip, ...), all rows; B is packed block by block into this thread's
   slot, so a Conv's im2col never leaves the cache. */
static void wide_tasks(void *arg, int64_t t0, int64_t t1)
{
    const sgemm_job *jb = arg;
    /* a serial call (threads == 1) may still run on a pool worker, inside another kernel's task */
    float *slot = jb->slots + (jb->threads > 1 ? (int64_t)mrt_thread_index() : 0) * jb->slot;
    for (int64_t t = t0; t < t1; t++) {
        int64_t j0 = jb->panels * t / jb->strips * NR, j1 = min64(jb->n, jb->panels * (t + 1) / jb->strips * NR);
        for (int64_t k0 = 0; k0 < jb->k; k0 += K_BLOCK) {
            int64_t k1 = min64(jb->k, k0 + K_BLOCK);
            pack_b_block(jb->b, k0, k1, j0, j1, slot);
            compute_block(jb, 0, jb->m, j0, j1, k0, k1, slot, (k1 - k0) * NR);
        }
    }
}

/* Narrow mode, first phase: pack B's panels into the shared buffer (or a thread's own copy), in pieces of PACK_K_PIECE rows of a panel
   (a 7x7 image has two panels: split by panel only, one thread would pack 48 columns and the other 1), k piece
   by k piece: a thread's share of the pieces is then a range of B's rows, a Conv's input channels, which a
   previous node split by channels left in that thread's cache (MobileNetV2 on two threads: 4.39-4.48 -> 4.34-4.50
   ms, five runs of six faster) */
enum { PACK_K_PIECE = 64 };
static void pack_b_panels(void *arg, int64_t t0, int64_t t1)
{
    const sgemm_job *jb = arg;
    int64_t panels = ceil_div(jb->n, NR);
    float *bp = (float *)jb->bp + (jb->private_b ? mrt_thread_index() * jb->private_b : 0);
    for (int64_t t = t0; t < t1; t++) {
        int64_t q = t % panels, k0 = t / panels * PACK_K_PIECE, k1 = min64(jb->k, k0 + PACK_K_PIECE);
        pack_b_block(jb->b, k0, k1, q * NR, min64(jb->n, q * NR + NR), bp + q * jb->k * NR + k0 * NR);
    }
}

/* Narrow mode: task t is a (row chunk, column chunk) tile of C over the shared packed B. */
static void narrow_tasks(void *arg, int64_t t0, int64_t t1)
{
    const sgemm_job *jb = arg;
    if (jb->n <= COLS_MAX) { /* one column chunk; tasks are row chunks */
        const mrt_sgemm_out *o = jb->out;
        for (int64_t t = t0; t < t1; t++) {
            int64_t m0 = t * jb->row_chunk, m1 = min64(jb->m, m0 + jb->row_chunk);
            for (int64_t k0 = 0; k0 < jb->k; k0 += K_BLOCK) {
                int64_t k1 = min64(jb->k, k0 + K_BLOCK);
                cols_block(jb, m0, m1, 0, (int)jb->n, k0, k1, jb->bp + k0 * jb->b_stride, jb->b_stride,
                           o->accumulate || k0 > 0, k1 == jb->k);
            }
            epilogue_rows(o, m0, m1, 0, jb->n);
        }
        return;
    }
    const float *bp = jb->bp;
    if (jb->private_b) { /* this thread's copy, packed before its first task */
        int me = mrt_thread_index();
        bp += me * jb->private_b;
        if (!jb->b_ready[me]) {
            pack_b_panels((void *)jb, 0, ceil_div(jb->n, NR) * ceil_div(jb->k, PACK_K_PIECE));
            ((sgemm_job *)jb)->b_ready[me] = true;
        }
    }
    for (int64_t t = t0; t < t1; t++) {
        int64_t ri = t / jb->n_col_chunks, ci = t % jb->n_col_chunks;
        int64_t m0 = ri * jb->row_chunk, m1 = min64(jb->m, m0 + jb->row_chunk);
        int64_t j0 = ci * jb->col_chunk, j1 = min64(jb->n, j0 + jb->col_chunk);
        if (jb->col_panels) {
            j0 = jb->col_panels * ci / jb->n_col_chunks * NR;
            j1 = min64(jb->n, jb->col_panels * (ci + 1) / jb->n_col_chunks * NR);
        }
        if (m1 - m0 <= MR) {
            /* one panel of rows (a classifier's one-row Gemm): each B panel's k blocks before the next panel, so
               the packed B, too large for the cache, is read as one stream */
            for (int64_t j = j0; j < j1; j += NR)
                for (int64_t k0 = 0; k0 < jb->k; k0 += K_BLOCK)
                    compute_block(jb, m0, m1, j, min64(j1, j + NR), k0, min64(jb->k, k0 + K_BLOCK),
                                  bp + (j / NR) * jb->k * NR + k0 * NR, jb->k * NR);
            continue;
        }
        for (int64_t k0 = 0; k0 < jb->k; k0 += K_BLOCK) {
            int64_t k1 = min64(jb->k, k0 + K_BLOCK);
            compute_block(jb, m0, m1, j0, j1, k0, k1, bp + (j0 / NR) * jb->k * NR + k0 * NR, jb->k * NR);
        }
    }
}

/* Narrow mode with a B too large for the cache (a detector's fc6: 12544 x 1024, 51 MB): row chunks each streamed
   all of B again from memory. Instead the k blocks go one after another, and within a block tasks take column
   chunks over all the rows, so that each block of B is read once (the A block, m x 256, stays in L2). */
typedef struct k_block_job {
    const sgemm_job *jb;
    int64_t k0, k1, tasks; /* task t: panels [panels t / tasks, panels (t + 1) / tasks), dealt out evenly */
} k_block_job;

static void k_block_tasks(void *arg, int64_t t0, int64_t t1)
{
    const k_block_job *kj = arg;
    const sgemm_job *jb = kj->jb;
    int64_t panels = ceil_div(jb->n, NR);
    for (int64_t t = t0; t < t1; t++) {
        int64_t j0 = panels * t / kj->tasks * NR, j1 = min64(jb->n, panels * (t + 1) / kj->tasks * NR);
        compute_block(jb, 0, jb->m, j0, j1, kj->k0, kj->k1, jb->bp + (j0 / NR) * jb->k * NR + kj->k0 * NR, jb->k * NR);
    }
}

typedef struct pack_a_job {
    const float *a;
    int64_t rs, cs, m, k;
    float *dst;
} pack_a_job;

static void pack_a_panels(void *arg, int64_t p0, int64_t p1)
{
    const pack_a_job *pj = arg;
    pack_a_range(pj->a, pj->rs, pj->cs, pj->m, pj->k, p0, p1, pj->dst);
}

/* Wide mode when B is not packed and there are enough column strips to go round; from two panels per thread down
   when B is the larger operand (n >= m). A thread in narrow mode reads all of B and half of A, in wide mode half of
   B (the columns it packs and computes) and all of A; what it reads of B is also the previous node's output, half
   of it in the other core's cache. Two threads, alternating runs: Inception-v3, whose 17x17 layers (289 columns,
   128-192 rows) went wide, 33.6-33.9 -> 30.3-30.7 ms while this VM's cross-core hand-offs take ~550 ns
   (build/bench/minirt_pool), 26.9-27.6 -> 25.6-26.1 while they take ~100 ns; EfficientNetV2-S's 1x1 expansions
   to 960 rows at 14x14 went 3% slower wide. */
static bool use_wide(int64_t m, int64_t n, bool b_packed, int n_threads)
{
    int64_t t = n_threads > 1 ? n_threads : 1;
    return !b_packed && (n >= 4 * NR * t || (t > 1 && n >= 2 * NR * t && n >= m));
}

/* Narrow mode with B packed per run: on several threads, each packs its own copy of all of B when a copy fits in
   a core's L2 (1 MiB here). A shared copy is packed part by each thread and then read whole by all, half of it from
   the other core's cache. Two threads, alternating runs: EfficientNet-B0 7.71-8.15 ms -> 7.56-7.80, MobileNetV2
   4.47-4.66 -> 4.43-4.63; in this VM's slow periods (vCPUs far apart) MobileNetV2 8.2-8.4 -> 7.9-8.0. A larger B
   costs more to pack twice than its sharing does: private copies of ResNet-18's 3x3 layers at 14x14 and 7x7 (2.2
   and 1.8 MB) made the model 2% slower in normal periods, so those stay shared. */
static bool private_b(int64_t k, int64_t n, int n_threads)
{
    return n_threads > 1 && n_threads <= PRIVATE_B_THREADS && n > COLS_MAX &&
           mrt_sgemm_packed_b_floats(k, n) * (int64_t)sizeof(float) <= PRIVATE_B_MAX_BYTES;
}

int64_t mrt_sgemm_workspace_floats(int64_t m, int64_t n, int64_t k, bool a_packed, bool b_packed, int n_threads)
{
    int64_t f = a_packed ? 0 : mrt_sgemm_packed_a_floats(m, k);
    if (use_wide(m, n, b_packed, n_threads)) f += (int64_t)(n_threads > 1 ? n_threads : 1) * slot_floats(n, k, n_threads > 1 ? n_threads : 1);
    else if (!b_packed) f += mrt_sgemm_packed_b_floats(k, n) * (private_b(k, n, n_threads) ? n_threads : 1);
    return f;
}

static void product(const mrt_op_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a_packed, const float *a_raw,
                    int64_t a_rs, int64_t a_cs, const mrt_sgemm_b *b, const mrt_sgemm_out *out, float *ws);

/* rows [r0, r1) of C whole, each with its channel (a Conv's BatchNormalization before the program) */
static void whole_epilogue_rows(void *arg, int64_t r0, int64_t r1)
{
    const mrt_sgemm_out *o = arg;
    epilogue_rows(o, r0, r1, 0, o->ldc);
}

/* An epilogue with a pointwise program (engine/epilogue.h) runs over C whole once the product is done, split over the
   threads by rows, rather than on each finished row segment: each instruction is a loop of its own, and segments
   can be short (ViT's attention scores, 197 x 197 per head, go by strips of 48 columns: row by row, Div(scores, 8)
   fused cost the MatMul 15 us more than the 5 us the Div's own pass took). Other epilogues stay in the tiles. */
void mrt_sgemm_run(const mrt_op_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a_packed, const float *a_raw,
               int64_t a_rs, int64_t a_cs, const mrt_sgemm_b *b, const mrt_sgemm_out *out, float *ws)
{
    bool program = false;
    for (int i = 0; out->ep && i < out->ep->n_ops; i++) program |= out->ep->ops[i].kind == MRT_POST_POINTWISE;
    if (!program || out->ldc != n || m <= 0 || n <= 0) {
        product(ctx, m, n, k, a_packed, a_raw, a_rs, a_cs, b, out, ws);
        return;
    }
    mrt_sgemm_out plain = *out;
    plain.ep = NULL;
    product(ctx, m, n, k, a_packed, a_raw, a_rs, a_cs, b, &plain, ws);
    mrt_sgemm_out with_ep = *out; /* ldc == n: the rows lie back to back */
    mrt_parallel_for(ctx, m, (4096 + n - 1) / n, whole_epilogue_rows, &with_ep);
}

/* C = A B (+ bias, + its start value) with out's epilogue on each finished row segment (mrt_sgemm_run) */
static void product(const mrt_op_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a_packed, const float *a_raw,
                    int64_t a_rs, int64_t a_cs, const mrt_sgemm_b *b, const mrt_sgemm_out *out, float *ws)
{
    static tile_fn tile; /* chosen once; every choice gives the same bits */
    if (!tile) tile = pick_tile();
    if (m <= 0 || n <= 0) return;
    if (k <= 0) { /* no chain: C keeps its start value (0 or C), then bias and epilogue */
        for (int64_t i = 0; i < m; i++) {
            float *c = out->c + i * out->ldc;
            for (int64_t j = 0; j < n; j++) {
                float v = out->accumulate ? c[j] : 0.0f;
                c[j] = out->bias ? v + out->bias[i] : v;
            }
        }
        epilogue_rows(out, 0, m, 0, n);
        return;
    }
    /* the count infer sized the workspace with; the pool has as many threads (mrt_thread_index < threads) */
    int threads = ctx && ctx->n_threads > 1 ? ctx->n_threads : 1;
    sgemm_job jb = {.m = m, .n = n, .k = k, .b = b, .out = out, .threads = threads, .tile = tile};
#ifdef MRT_HAVE_AVX512_INTRINSICS
    mrt_reg_epilogue te;
    jb.tile_ep = tile == tile_avx512 && mrt_reg_epilogue_of(out->ep, 0, 0, &te);
#endif
    float *next = ws;
    if (a_packed) {
        jb.ap = a_packed;
#ifdef MRT_HAVE_AVX512_INTRINSICS
    } else if (tile == tile_avx512 && a_cs == 1) {
        jb.a_raw = a_raw; /* read in place by tile_a_avx512 (and packed a few panels at a time for cols_block) */
        jb.a_rs = a_rs;
        /* a C that fits L2 is likely in cache already: fetching it cost GPT-2's small products (1 thread) ~2% */
        jb.fetch_c = m * out->ldc * (int64_t)sizeof(float) > ((int64_t)1 << 20);
#endif
    } else {
        pack_a_job pj = {a_raw, a_rs, a_cs, m, k, next};
        mrt_parallel_for(ctx, ceil_div(m, MR), 1, pack_a_panels, &pj);
        jb.ap = next;
        next += mrt_sgemm_packed_a_floats(m, k);
    }
    if (use_wide(m, n, b->packed != NULL, threads)) {
        jb.slots = next;
        jb.slot = slot_floats(n, k, threads);
        jb.panels = ceil_div(n, NR);
        jb.strips = wide_strips(n, k, threads);
        mrt_parallel_for(ctx, jb.strips, 1, wide_tasks, &jb);
        return;
    }
    jb.b_stride = NR;
    if (b->packed) {
        jb.bp = b->packed;
    } else if (n <= COLS_MAX && !b->pack) { /* a few columns: compact rows, no 48-wide zero padding */
        float *bc = next;
        for (int64_t kk = 0; kk < k; kk++) {
            const float *s = b->b + kk * b->rs;
            if (b->row_scale)
                for (int64_t j = 0; j < n; j++) bc[kk * n + j] = s[j * b->cs] * b->row_scale[kk * b->row_scale_stride];
            else
                for (int64_t j = 0; j < n; j++) bc[kk * n + j] = s[j * b->cs];
        }
        jb.bp = bc;
        jb.b_stride = n;
    } else if (private_b(k, n, threads)) { /* each thread packs its copy (narrow_tasks) */
        jb.bp = next;
        jb.private_b = mrt_sgemm_packed_b_floats(k, n);
    } else {
        jb.bp = next;
        mrt_parallel_for(ctx, ceil_div(n, NR) * ceil_div(k, PACK_K_PIECE), 1, pack_b_panels, &jb);
    }
    if (b->packed && k > K_BLOCK && mrt_sgemm_packed_b_floats(k, n) * (int64_t)sizeof(float) > BIG_B_BYTES &&
        n > COLS_MAX) {
        /* four tasks per thread, each thread's share of them the same number of panels */
        k_block_job kj = {&jb, 0, 0, min64(ceil_div(n, NR), 4 * (int64_t)threads)};
        for (kj.k0 = 0; kj.k0 < k; kj.k0 += K_BLOCK) {
            kj.k1 = min64(k, kj.k0 + K_BLOCK);
            mrt_parallel_for(ctx, kj.tasks, 1, k_block_tasks, &kj);
        }
        return;
    }
    /* Tasks split the rows first: row chunks of at least two panels, small enough for four tasks per thread, with
       column chunks of SHARED_STRIP. Splitting the columns of a short product instead scales badly: the
       Transformer's 64-row products ran at 1.3x on two threads with column chunks, 1.65-1.95x with row chunks. Only
       when there are too few row chunks for two per thread (a classifier's one-row Gemm) are the columns cut
       finer, to make up four tasks per thread, as many for every thread and the panels dealt out evenly (MobileNetV2's
       classifier, 21 panels: seven chunks of three gave one thread 12 panels and the other 9). */
    int64_t row_panels = ceil_div(m, MR), row_chunk = row_panels, row_chunks = 1;
    jb.col_chunk = SHARED_STRIP;
    if (threads > 1) {
        row_chunk = ceil_div(row_panels, 4 * (int64_t)threads);
        if (row_chunk < 2) row_chunk = 2;
        row_chunks = ceil_div(row_panels, row_chunk);
    }
    jb.n_col_chunks = ceil_div(n, jb.col_chunk);
    if (threads > 1 && row_chunks < 2 * (int64_t)threads) {
        int64_t panels = ceil_div(n, NR), chunks = ceil_div(4 * (int64_t)threads, row_chunks);
        if (chunks < ceil_div(panels, SHARED_STRIP / NR)) chunks = ceil_div(panels, SHARED_STRIP / NR);
        while (row_chunks * chunks % threads != 0 && chunks < panels) chunks++;
        if (chunks > panels) chunks = panels;
        jb.col_panels = panels;
        jb.n_col_chunks = chunks;
    }
    row_chunk *= MR;
    jb.row_chunk = row_chunk;
    mrt_parallel_for(ctx, ceil_div(m, row_chunk) * jb.n_col_chunks, 1, narrow_tasks, &jb);
}
