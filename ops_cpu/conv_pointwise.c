/* Float 1x1 convolutions on small planes, output channels as vector lanes (see conv_pointwise.h).
 *
 * The GEMM paths make a 1x1 Conv W [M, C] times the image [C, positions]: output channels as rows, positions as
 * columns, 48 to a register tile. A 14x14 plane (196 positions) is four tiles and a tile of 4 columns, a 7x7 plane
 * one tile and a tile of 1 column, each of those last ones a whole vector's work for a few lanes; MobileNetV2's
 * 14x14 and 7x7 projections ran at 75% of a core's peak where ONNX Runtime's NCHWc kernels, whose lanes are
 * channels, reached 90%. Here the roles swap: a vector holds 16 output channels (W's column, packed once by
 * prepare), each position's input value is a broadcast, and a register tile is PL_POS positions by up to PL_NV
 * vectors: per input channel, three loads of W and seven broadcasts feed 21 fmas. 7 divides 49 and 196, so those
 * planes leave no lane idle; output channel counts are multiples of 16 in these networks.
 *
 * A task is an (image, chunk of positions, panel of up to 48 channels). It computes the panel's outputs into
 * [position][channel] scratch, k block by k block, then 16 x 16 transposes put them into the output's planes; the
 * bias goes in before the transpose (a lane is a channel) and a [BatchNormalization] -> [Add] -> [Relu | Clip]
 * epilogue after it, in registers as the GEMM's tile applies it (a lane is a position of one channel); other
 * epilogues run over the task's rows while they are in cache. */
#include "ops_cpu/conv_pointwise.h"

#include <string.h>

#include "ops_cpu/conv_grouped.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

enum {
    PL_LANES = 16,              /* output channels per vector */
    PL_NV = 3,                  /* vectors per panel, at most */
    PL_PANEL = PL_LANES * PL_NV, /* a scratch position's floats */
    PL_POS = 7,                 /* positions per register tile */
    PL_CHUNK = 16 * PL_POS,     /* positions per task, at most: whole tiles, whole transposes */
    PL_MAX_HW = 256,            /* positions per plane, at most (16x16) */
    PL_MIN_M = 16,              /* output channels, at least: fewer would leave most lanes idle */
    PL_MIN_HW = 4,              /* positions, at least: a 1x1 plane (squeeze-excite) is a matrix-vector product */
    PL_K_SUB = 128,             /* k per pass over a chunk's tiles (see pl_tasks) */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

typedef struct pl_geom {
    int64_t hw, blocks;  /* positions per plane; 16-channel blocks of output channels */
    int64_t panels;      /* panels of PL_NV blocks (the last ones may have one block fewer) */
    int64_t chunks, chunk; /* position chunks per plane, and positions per chunk (the last may have fewer) */
} pl_geom;

static bool pl_geometry(const mrt_conv_params *p, pl_geom *g)
{
    const mrt_window *w = &p->win;
    /* Projections only (no more output channels than input): with few input channels a tile's chain is short and
       the transposes cost a tenth of the work (MobileNetV2's 96 -> 576 expansions at 14x14: 161 -> 176 us on one
       thread, where the GEMM's tail tile wastes 12 of 208 lanes) */
    if (p->group != 1 || p->c < 1 || p->m < PL_MIN_M || p->m > p->c) return false;
    g->hw = 1;
    for (int i = 0; i < w->nsp; i++) {
        if (w->kernel[i] != 1 || w->stride[i] != 1 || w->pad_begin[i] != 0 || w->pad_end[i] != 0) return false;
        g->hw *= w->in[i];
    }
    if (g->hw < PL_MIN_HW || g->hw > PL_MAX_HW) return false;
    g->blocks = ceil_div(p->m, PL_LANES);
    g->panels = ceil_div(g->blocks, PL_NV);
    int64_t tiles = ceil_div(g->hw, PL_POS);
    g->chunks = ceil_div(g->hw, PL_CHUNK);
    g->chunk = ceil_div(tiles, g->chunks) * PL_POS;
    return true;
}

/* Panel i: blocks [*b0, *b0 + *nb), the blocks dealt out evenly (10 blocks in 4 panels: 2, 3, 2, 3) */
static void pl_panel(const pl_geom *g, int64_t i, int64_t *b0, int *nb)
{
    *b0 = g->blocks * i / g->panels;
    *nb = (int)(g->blocks * (i + 1) / g->panels - *b0);
}

/* a chunk's positions rounded up to whole vectors: the row length of a scaled input block */
static int64_t pl_chunk16(const pl_geom *g) { return ceil_div(g->chunk, 16) * 16; }

/* a thread's scratch: a chunk's outputs as [position][PL_PANEL] (whole transposes), its unfinished chains (the same
   layout), then its scaled input, [channel][pl_chunk16] (for a fused input scale: the fusion comes after prepare and
   infer, so it is always counted) */
static int64_t pl_slot_floats(const pl_geom *g, int64_t K) { return pl_chunk16(g) * (2 * PL_PANEL + K); }

int64_t mrt_conv_pointwise_lanes_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads)
{
    pl_geom g;
    if (dt != MRT_DTYPE_FLOAT || !mrt_cpu_has_avx512f() || !pl_geometry(p, &g)) return 0;
    return (n_threads > 1 ? n_threads : 1) * pl_slot_floats(&g, p->c);
}

int64_t mrt_conv_pointwise_lanes_packed_floats(const mrt_conv_params *p)
{
    pl_geom g;
    return pl_geometry(p, &g) ? g.blocks * p->c * PL_LANES : 0;
}

void mrt_conv_pointwise_lanes_pack_weights(const mrt_conv_params *p, const float *w, float *packed)
{
    pl_geom g;
    if (pl_geometry(p, &g)) mrt_pack_lanes16(w, p->m, p->c, packed);
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
typedef struct pl_job {
    const mrt_conv_params *p;
    pl_geom g;
    const float *x, *wt, *b;
    float *y, *ws;
    const mrt_prologue *pro;
    const mrt_epilogue *ep;
    int threads;
} pl_job;

/* A piece of one k block's chains for a tile: the chain over kk < kc of W[block v, lane l, k0 + kk] * x[k0 + kk,
   position p], one fma chain in kk order, from 0 or, when init is given, from init[p][16 v + l] (where the piece
   before left it); then, when oc is given, stored there for the next piece, and otherwise, the block's chain
   complete, os[p][16 v + l] = (add ? os[p][16 v + l] : 0) + chain. xq[p]: position p's input at the piece's first
   channel (channels ld floats apart); wt: block 0's W column k0 (blocks wstride floats apart). pf: like xq[p], the
   input of a position a line further on, which a later tile reads: fetched into L1 one channel per k (a chunk's rows
   are 7 lines or fewer, each a stream too short for the hardware prefetchers, and inside a model half of them were
   written by the other core: MobileNetV2's 576 -> 96 at 14x14 on two threads, 108 -> 93 us). */
__attribute__((target("avx512f"), always_inline)) static inline void pl_tile(const float *const *xq, int64_t ld,
                                                                           const float *pf, const float *pw,
                                                                           const float *wt,
                                                                           int64_t wstride,
                                                                           int64_t kc, bool add, float *os,
                                                                           const float *init, float *oc, const int NV)
{
    __m512 acc[PL_POS][PL_NV]; /* in registers only if every loop over it unrolls (see ops_cpu/sgemm.c) */
    _Pragma("GCC unroll 8") for (int p = 0; p < PL_POS; p++)
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)
            acc[p][v] = init ? _mm512_load_ps(init + p * PL_PANEL + v * PL_LANES) : _mm512_setzero_ps();
    for (int64_t kk = 0; kk < kc; kk++) {
        __m512 wv[PL_NV];
        for (int v = 0; v < NV; v++) wv[v] = _mm512_load_ps(wt + v * wstride + kk * PL_LANES);
        _mm_prefetch((const char *)(pf + kk * ld), _MM_HINT_T0);
        _mm_prefetch((const char *)(pw + kk * PL_LANES), _MM_HINT_T1);
        for (int p = 0; p < PL_POS; p++) {
            __m512 xb = _mm512_set1_ps(xq[p][kk * ld]);
            for (int v = 0; v < NV; v++) acc[p][v] = _mm512_fmadd_ps(xb, wv[v], acc[p][v]);
        }
    }
    if (oc) { /* the chain goes on in the next piece */
        _Pragma("GCC unroll 8") for (int p = 0; p < PL_POS; p++)
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)
                _mm512_store_ps(oc + p * PL_PANEL + v * PL_LANES, acc[p][v]);
        return;
    }
    _Pragma("GCC unroll 8") for (int p = 0; p < PL_POS; p++)
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {
            float *o = os + p * PL_PANEL + v * PL_LANES;
            _mm512_store_ps(o, add ? _mm512_add_ps(_mm512_load_ps(o), acc[p][v]) : acc[p][v]);
        }
}

/* pl_tile with the block count a constant (its loops unroll) */
#define PL_TILE(NV)                                                                                                \
    __attribute__((target("avx512f"))) static void pl_tile_##NV(const float *const *xq, int64_t ld, const float *pf, \
                                                                const float *pw, const float *wt, int64_t wstride, \
                                                                int64_t kc, bool add, float *os, const float *init, \
                                                                float *oc)                                         \
    {                                                                                                              \
        pl_tile(xq, ld, pf, pw, wt, wstride, kc, add, os, init, oc, NV);                                           \
    }
PL_TILE(1)
PL_TILE(2)
PL_TILE(3)
typedef void (*pl_tile_fn)(const float *const *, int64_t, const float *, const float *, const float *, int64_t,
                           int64_t, bool, float *, const float *, float *);
static const pl_tile_fn pl_tiles[PL_NV] = {pl_tile_1, pl_tile_2, pl_tile_3};

/* xs[k][i] = x[k, q0 + i] * scale[k * sstride] for k < K, i < npos: the fused Mul's products, each rounded to float
   as the Mul rounds it. Scaling the broadcasts in the tile instead cost a multiply per seven fmas (EfficientNet-B0's
   squeeze-excite projections 25-50% slower than on the GEMM), and so did a copy per task instead of per chunk. */
__attribute__((target("avx512f"))) static void pl_scale_chunk(const float *x, int64_t hw, int64_t K, int64_t q0,
                                                             int64_t npos, const float *scale, int64_t sstride,
                                                             float *xs, int64_t ld)
{
    for (int64_t k = 0; k < K; k++) {
        const float *src = x + k * hw + q0;
        __m512 sv = _mm512_set1_ps(scale[k * sstride]);
        for (int64_t i = 0; i < npos; i += 16) {
            __mmask16 m = mrt_mask16_first(npos - i);
            _mm512_store_ps(xs + k * ld + i, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + i), sv));
        }
    }
}

/* The same copy through a fused BatchNormalization [-> Relu]: mrt_bn_apply_f32 (two fmas and an add, the same
   roundings) and Relu's formula (x < 0 ? 0 : x: NaN and -0 pass), the bits the nodes write */
__attribute__((target("avx512f"))) static void pl_bn_chunk(const float *x, int64_t hw, int64_t K, int64_t q0,
                                                          int64_t npos, const mrt_bn_coef *bn, bool relu, float *xs,
                                                          int64_t ld)
{
    __m512 zero = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        const float *src = x + k * hw + q0;
        __m512 ah = _mm512_set1_ps(bn[k].a_hi), al = _mm512_set1_ps(bn[k].a_lo);
        __m512 bh = _mm512_set1_ps(bn[k].b_hi), bl = _mm512_set1_ps(bn[k].b_lo);
        for (int64_t i = 0; i < npos; i += 16) {
            __m512 v = _mm512_maskz_loadu_ps(mrt_mask16_first(npos - i), src + i);
            v = _mm512_add_ps(_mm512_fmadd_ps(v, ah, bh), _mm512_fmadd_ps(v, al, bl));
            if (relu) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
            _mm512_store_ps(xs + k * ld + i, v);
        }
    }
}

/* The scratch's positions [0, npos) of block v (channels ch0 + [0, nch)) into the output planes at position q0:
   + bias, then 16 x 16 transposes, then the epilogue in registers when it has that form (re) */
__attribute__((target("avx512f"))) static void pl_store(const pl_job *j, const float *os, int v, int64_t n,
                                                       int64_t ch0, int64_t nch, int64_t q0, int64_t npos,
                                                       const mrt_reg_epilogue *re)
{
    int64_t hw = j->g.hw;
    _Alignas(64) float bs[PL_LANES] = {0};
    for (int64_t l = 0; j->b && l < nch; l++) bs[l] = j->b[ch0 + l];
    __m512 bias = _mm512_load_ps(bs), lo = _mm512_set1_ps(re ? re->lo : 0), hi = _mm512_set1_ps(re ? re->hi : 0);
    for (int64_t q = 0; q < npos; q += 16) {
        int64_t nq = npos - q < 16 ? npos - q : 16;
        __mmask16 mask = mrt_mask16_first(nq);
        __m512 r[16];
        for (int i = 0; i < 16; i++) {
            r[i] = i < nq ? _mm512_load_ps(os + (q + i) * PL_PANEL + v * PL_LANES) : _mm512_setzero_ps();
            if (j->b) r[i] = _mm512_add_ps(r[i], bias);
        }
        mrt_transpose16(r);
        for (int64_t ch = 0; ch < nch; ch++) {
            int64_t c = ch0 + ch, at = (n * j->p->m + c) * hw + q0 + q;
            __m512 row = r[mrt_transpose16_perm[ch]];
            if (re) {
                const mrt_bn_coef *bn = re->bn ? &re->bn[c] : NULL;
                __m512 a_hi = _mm512_set1_ps(bn ? bn->a_hi : 0), a_lo = _mm512_set1_ps(bn ? bn->a_lo : 0);
                __m512 b_hi = _mm512_set1_ps(bn ? bn->b_hi : 0), b_lo = _mm512_set1_ps(bn ? bn->b_lo : 0);
                row = mrt_reg_epilogue16(re, row, a_hi, a_lo, b_hi, b_lo, at, mask, lo, hi);
            }
            _mm512_mask_storeu_ps(j->y + at, mask, row);
        }
    }
}

/* Task t: image, position chunk, panel, from the outermost: a thread's first share of the tasks is a run of
   positions of every input plane. The input is the larger operand here (pl_geometry); split by panels, each thread
   read all of it, half from the other core's cache (MobileNetV2's 576 -> 96 projections at 14x14 took 143 us on two
   threads instead of 110). */
__attribute__((target("avx512f"))) static void pl_tasks(void *arg, int64_t t0, int64_t t1)
{
    const pl_job *j = arg;
    const pl_geom *g = &j->g;
    const mrt_conv_params *p = j->p;
    float *os = j->ws + (j->threads > 1 ? mrt_thread_index() : 0) * pl_slot_floats(g, p->c);
    float *ocs = os + pl_chunk16(g) * PL_PANEL, *xs = ocs + pl_chunk16(g) * PL_PANEL;
    int64_t scaled = -1; /* the (image, chunk) whose scaled input xs holds */
    int64_t K = p->c, hw = g->hw;
    mrt_reg_epilogue re;
    bool reg_ep = mrt_reg_epilogue_of(j->ep, 0, 0, &re);
    for (int64_t t = t0; t < t1; t++) {
        int64_t panel = t % g->panels, rest = t / g->panels, chunk = rest % g->chunks, n = rest / g->chunks;
        int64_t b0, q0 = chunk * g->chunk, q1 = q0 + g->chunk < hw ? q0 + g->chunk : hw;
        int nb;
        pl_panel(g, panel, &b0, &nb);
        const float *x = j->x + n * K * hw,
                    *scale = j->pro && j->pro->scale ? j->pro->scale + n * j->pro->batch_stride : NULL;
        pl_tile_fn tile = pl_tiles[nb - 1];
        /* the tiles read x in place, or the chunk's scaled or normalised copy (rows of pl_chunk16, position q0
           first), made once for the panels that follow on this thread */
        const float *src = x;
        int64_t ld = hw, first = 0;
        if (j->pro) {
            ld = pl_chunk16(g);
            if (scaled != rest && scale) pl_scale_chunk(x, hw, K, q0, q1 - q0, scale, j->pro->channel_stride, xs, ld);
            else if (scaled != rest) pl_bn_chunk(x, hw, K, q0, q1 - q0, j->pro->bn, j->pro->relu, xs, ld);
            scaled = rest;
            src = xs;
            first = q0;
        }
        /* each k block in pieces of PL_K_SUB, every piece over all the chunk's tiles: a piece's W (PL_K_SUB x 48
           floats, 24 KiB) stays in L1 from tile to tile, where a whole block's (48 KiB) was read from L2 for every
           tile. The chains go on from piece to piece through ocs, so the bits are those of one pass: MobileNetV2's
           576 -> 96 at 14x14 0.139 -> 0.137 ms on one thread, its 14x14 projections on two threads 462-467 -> 441-458
           us in all (per-node medians); pieces of 64 were slower (a tile's 21 accumulators stored and loaded again
           every 64 k). */
        for (int64_t k0 = 0; k0 < K; k0 += MRT_SGEMM_K_BLOCK) {
            int64_t kc = K - k0 < MRT_SGEMM_K_BLOCK ? K - k0 : MRT_SGEMM_K_BLOCK;
            for (int64_t s0 = k0; s0 < k0 + kc; s0 += PL_K_SUB) {
                int64_t sc = k0 + kc - s0 < PL_K_SUB ? k0 + kc - s0 : PL_K_SUB;
                bool first_sub = s0 == k0, last_sub = s0 + sc == k0 + kc;
                /* the next piece's W (this panel's next k, or the next panel's first), fetched into L2 by the
                   first tiles, one block each: inside a model W comes from L3 or memory (RegNetX-400MF's 23
                   400 -> 400 projections at 7x7 hold 15 MB of it), and the first tile of a piece, which reads it
                   into L1, was waiting on it */
                int64_t nk = s0 + sc < K ? s0 + sc : 0, nb0 = b0;
                int nnb = nb;
                if (nk == 0) pl_panel(g, panel + 1 < g->panels ? panel + 1 : 0, &nb0, &nnb);
                for (int64_t q = q0, ti = 0; q < q1; q += PL_POS, ti++) {
                    const float *pw = ti < nnb ? j->wt + ((nb0 + ti) * K + nk) * PL_LANES : j->wt + (b0 * K + s0) * PL_LANES;
                    const float *xq[PL_POS]; /* past q1: the last position again, computed and not stored */
                    for (int i = 0; i < PL_POS; i++) xq[i] = src + s0 * ld + (q + i < q1 ? q + i : q1 - 1) - first;
                    const float *pf = q + 16 < q1 ? xq[0] + 16 : xq[0]; /* within the chunk's rows */
                    float *oc = ocs + (q - q0) * PL_PANEL;
                    tile(xq, ld, pf, pw, j->wt + (b0 * K + s0) * PL_LANES, K * PL_LANES, sc, k0 > 0,
                         os + (q - q0) * PL_PANEL, first_sub ? NULL : oc, last_sub ? NULL : oc);
                }
            }
        }
        for (int v = 0; v < nb; v++) {
            int64_t ch0 = (b0 + v) * PL_LANES, nch = p->m - ch0 < PL_LANES ? p->m - ch0 : PL_LANES;
            pl_store(j, os, v, n, ch0, nch, q0, q1 - q0, reg_ep ? &re : NULL);
        }
        if (!reg_ep) {
            int64_t ch0 = b0 * PL_LANES, nch = (b0 + nb) * PL_LANES < p->m ? nb * PL_LANES : p->m - ch0;
            int64_t at = (n * p->m + ch0) * hw + q0;
            mrt_epilogue_apply_rows(j->ep, j->y + at, nch, q1 - q0, hw, ch0, at);
        }
    }
}

/* ---- taps reading only padding: regions of positions with the same live taps (conv_pointwise.h) */

/* One region's tile of P positions (output indices pos[p], the window at xq[p]) over its items [0, ni) of one k
   block: the chain over them from 0 of W[block v, lane l, kidx[i]] * xq[p][xoff[i]], then os[pos[p]][16 v + l] =
   (add ? that : 0) + chain, as pl_tile's last piece */
__attribute__((target("avx512f"), always_inline)) static inline void tl_tile(const float *const *xq,
                                                                           const int32_t *pos, const int32_t *kidx,
                                                                           const int32_t *xoff, int64_t ni,
                                                                           const float *wt, int64_t wstride, bool add,
                                                                           float *os, const int P, const int NV)
{
    __m512 acc[PL_POS][PL_NV];
    for (int p = 0; p < P; p++)
        for (int v = 0; v < NV; v++) acc[p][v] = _mm512_setzero_ps();
    for (int64_t i = 0; i < ni; i++) {
        const float *wr = wt + (int64_t)kidx[i] * PL_LANES;
        int64_t xo = xoff[i];
        __m512 wv[PL_NV];
        for (int v = 0; v < NV; v++) wv[v] = _mm512_load_ps(wr + v * wstride);
        for (int p = 0; p < P; p++) {
            __m512 xb = _mm512_set1_ps(xq[p][xo]);
            for (int v = 0; v < NV; v++) acc[p][v] = _mm512_fmadd_ps(xb, wv[v], acc[p][v]);
        }
    }
    for (int p = 0; p < P; p++)
        for (int v = 0; v < NV; v++) {
            float *o = os + (int64_t)pos[p] * PL_PANEL + v * PL_LANES;
            _mm512_store_ps(o, add ? _mm512_add_ps(_mm512_load_ps(o), acc[p][v]) : acc[p][v]);
        }
}

typedef void (*tl_tile_fn)(const float *const *, const int32_t *, const int32_t *, const int32_t *, int64_t,
                           const float *, int64_t, bool, float *);
#define TL_TILE(P, NV)                                                                                             \
    __attribute__((target("avx512f"))) static void tl_tile_##P##_##NV(                                             \
        const float *const *xq, const int32_t *pos, const int32_t *kidx, const int32_t *xoff, int64_t ni,        \
        const float *wt, int64_t wstride, bool add, float *os)                                                     \
    {                                                                                                              \
        tl_tile(xq, pos, kidx, xoff, ni, wt, wstride, add, os, P, NV);                                             \
    }
#define TL_TILES(P) TL_TILE(P, 1) TL_TILE(P, 2) TL_TILE(P, 3)
TL_TILES(1)
TL_TILES(2)
TL_TILES(3)
TL_TILES(4)
TL_TILES(5)
TL_TILES(6)
TL_TILES(7)
#define TL_ROW(P) {tl_tile_##P##_1, tl_tile_##P##_2, tl_tile_##P##_3}
static const tl_tile_fn tl_tiles[PL_POS][PL_NV] = {TL_ROW(1), TL_ROW(2), TL_ROW(3), TL_ROW(4),
                                                    TL_ROW(5), TL_ROW(6), TL_ROW(7)};

typedef struct tl_job {
    pl_job pj; /* pj.g: hw (the output plane), blocks, panels */
    const mrt_taps_lanes *tl;
} tl_job;

/* Task t: image t / panels, panel t % panels (on two threads each reads half of W, the larger operand: 8.8 MB for
   DeepLabV3's 960 -> 256). Block by block, every region's tiles over the block's items, so that a block's W is
   read from memory once and then from L1 and L2 for the other regions; then the bias, transposes and epilogue. */
__attribute__((target("avx512f"))) static void tl_tasks(void *arg, int64_t t0, int64_t t1)
{
    const tl_job *tj = arg;
    const pl_job *j = &tj->pj;
    const mrt_taps_lanes *tl = tj->tl;
    const pl_geom *g = &j->g;
    const mrt_conv_params *p = j->p;
    float *os = j->ws + (j->threads > 1 ? mrt_thread_index() : 0) * mrt_conv_taps_lanes_floats(p->m, g->hw, 1);
    mrt_reg_epilogue re;
    bool reg_ep = mrt_reg_epilogue_of(j->ep, 0, 0, &re);
    for (int64_t t = t0; t < t1; t++) {
        int64_t panel = t % g->panels, n = t / g->panels, b0;
        int nb;
        pl_panel(g, panel, &b0, &nb);
        const float *x = j->x + n * p->c * tl->hw_in, *wt = j->wt + b0 * tl->K * PL_LANES;
        bool started[MRT_TAPS_MAX_REGIONS] = {false};
        int64_t tiles_per_block = 0;
        for (int r = 0; r < tl->n_regions; r++) tiles_per_block += (tl->region[r].n_pos + PL_POS - 1) / PL_POS;
        for (int64_t blk = 0; blk < tl->n_blocks; blk++) {
            /* the next block's W (this panel's, or the next panel's first), fetched into L2 a slice per tile: inside
               the model W (8.8 MB for DeepLabV3's 960 -> 256) comes from memory, and the tiles waited on it */
            const float *nw = blk + 1 < tl->n_blocks ? wt + (blk + 1) * MRT_SGEMM_K_BLOCK * PL_LANES
                                                     : j->wt + (b0 + nb) % g->blocks * tl->K * PL_LANES;
            int64_t nk = blk + 1 < tl->n_blocks ? tl->K - (blk + 1) * MRT_SGEMM_K_BLOCK : tl->K;
            int64_t lines = (nk < MRT_SGEMM_K_BLOCK ? nk : MRT_SGEMM_K_BLOCK), done = 0, tile_no = 0;
            for (int r = 0; r < tl->n_regions; r++) {
                const mrt_taps_region *rg = &tl->region[r];
                int64_t i0 = rg->item_lo[blk], ni = rg->item_lo[blk + 1] - i0;
                int64_t tiles = (rg->n_pos + PL_POS - 1) / PL_POS;
                for (int64_t ti = 0; ti < tiles; ti++) {
                    int64_t upto = lines * nb * ++tile_no / tiles_per_block; /* lines of 16 floats: (k, block) */
                    for (; done < upto; done++)
                        _mm_prefetch((const char *)(nw + done / lines * tl->K * PL_LANES + done % lines * PL_LANES),
                                     _MM_HINT_T1);
                    if (ni == 0) continue; /* its sum is +0: the chains keep their value (as the bands' GEMMs) */
                    int64_t q0 = rg->n_pos * ti / tiles, q1 = rg->n_pos * (ti + 1) / tiles;
                    const float *xq[PL_POS];
                    for (int64_t q = q0; q < q1; q++) xq[q - q0] = x + rg->base[q];
                    tl_tiles[q1 - q0 - 1][nb - 1](xq, rg->pos + q0, rg->kidx + i0, rg->xoff + i0, ni, wt,
                                                  tl->K * PL_LANES, started[r], os);
                }
                started[r] |= ni > 0; /* a region's first block with items stores, the later ones add */
            }
        }
        for (int r = 0; r < tl->n_regions; r++) /* no items at all: the chains are +0 */
            if (!started[r])
                for (int64_t q = 0; q < tl->region[r].n_pos; q++)
                    memset(os + (int64_t)tl->region[r].pos[q] * PL_PANEL, 0, PL_PANEL * sizeof(float));
        for (int v = 0; v < nb; v++) {
            int64_t ch0 = (b0 + v) * PL_LANES, nch = p->m - ch0 < PL_LANES ? p->m - ch0 : PL_LANES;
            pl_store(j, os, v, n, ch0, nch, 0, g->hw, reg_ep ? &re : NULL);
        }
        if (!reg_ep) {
            int64_t ch0 = b0 * PL_LANES, nch = (b0 + nb) * PL_LANES < p->m ? nb * PL_LANES : p->m - ch0;
            int64_t at = (n * p->m + ch0) * g->hw;
            mrt_epilogue_apply_rows(j->ep, j->y + at, nch, g->hw, g->hw, ch0, at);
        }
    }
}
#endif

bool mrt_conv_pointwise_lanes(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *packed,
                              const float *b, float *y, const mrt_prologue *pro, const mrt_epilogue *ep, float *ws)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    pl_job j = {.p = p, .x = x, .wt = packed, .b = b, .y = y, .ws = ws, .pro = pro && (pro->scale || pro->bn) ? pro : NULL,
                .ep = ep};
    if (!mrt_cpu_has_avx512f() || !pl_geometry(p, &j.g)) return false;
    j.threads = ctx && ctx->n_threads > 1 ? ctx->n_threads : 1;
    /* as many tasks for every thread (a thread's share is a run of panels, pl_panel deals the blocks out evenly,
       so each thread then gets as many blocks, give or take one): MobileNetV2's 960 -> 320 at 7x7 is one chunk of 20
       blocks, in 7 panels 8 blocks went to one thread and 12 to the other */
    while (p->n * j.g.chunks * j.g.panels % j.threads != 0 && j.g.panels < j.g.blocks) j.g.panels++;
    mrt_parallel_for(ctx, p->n * j.g.chunks * j.g.panels, 1, pl_tasks, &j);
    return true;
#else
    (void)ctx, (void)p, (void)x, (void)packed, (void)b, (void)y, (void)pro, (void)ep, (void)ws;
    return false;
#endif
}

int64_t mrt_conv_taps_lanes_floats(int64_t m, int64_t hw_out, int n_threads)
{
    (void)m;
    return (n_threads > 1 ? n_threads : 1) * ceil_div(hw_out, 16) * 16 * PL_PANEL;
}

bool mrt_conv_taps_lanes(const mrt_op_ctx *ctx, const mrt_conv_params *p, const mrt_taps_lanes *tl, const float *x,
                         const float *b, float *y, const mrt_epilogue *ep, float *ws)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (!mrt_cpu_has_avx512f()) return false;
    tl_job tj = {.pj = {.p = p, .x = x, .wt = tl->wt, .b = b, .y = y, .ws = ws, .ep = ep}, .tl = tl};
    pl_geom *g = &tj.pj.g;
    g->hw = tl->hw_out;
    g->blocks = ceil_div(p->m, PL_LANES);
    g->panels = ceil_div(g->blocks, PL_NV);
    g->chunks = 1;
    g->chunk = tl->hw_out;
    tj.pj.threads = ctx && ctx->n_threads > 1 ? ctx->n_threads : 1;
    while (p->n * g->panels % tj.pj.threads != 0 && g->panels < g->blocks) g->panels++;
    mrt_parallel_for(ctx, p->n * g->panels, 1, tl_tasks, &tj);
    return true;
#else
    (void)ctx, (void)p, (void)tl, (void)x, (void)b, (void)y, (void)ep, (void)ws;
    return false;
#endif
}
