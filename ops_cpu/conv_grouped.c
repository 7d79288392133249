/* Float 2-D grouped convolutions, output channels as vector lanes (see conv_grouped.h).
 *
 * On the GEMM path a group is a product of its own: M = 16 output channels, K = 16 channels x 9 taps, N = the
 * image's positions. At RegNet's 7x7 and 14x14 stages N = 49 or 196 is a 48-column tile plus a column or four, and
 * packing B for each group costs as much as its arithmetic: RegNetX-400MF's grouped convs ran at about 30 GFLOP/s.
 * Here a vector holds 16 output channels of one group (4 to 16 used; more channels take several blocks): for each
 * output position and each k = (c, kh, kw), one multiply-add of W's column k (a vector, rearranged once by
 * prepare) by the input value (a broadcast), for GC_POS positions at a time. A task is an (image, group, band of
 * output rows): the band's input rows of the group's channels are copied once, zero-padded, into scratch, every
 * 16-channel block of the group computes its outputs into [position][channel] scratch, and 16 x 16 transposes put
 * them in the output's planes, where the epilogue runs while they are in cache. */
#include "ops_cpu/conv_grouped.h"

#include <string.h>

#include "ops_cpu/epilogue.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

enum {
    GC_LANES = 16,        /* output channels per block: one AVX-512 vector */
    GC_POS = 8,           /* output positions in flight (independent chains) */
    GC_MAX_TAPS = 64,     /* kernel taps (8x8) */
    GC_IN_FLOATS = 32768, /* a task's padded input rows (128 KiB), at most */
    GC_OUT_POS = 1024,    /* a task's output positions (64 KiB as [position][channel]), at most */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }

typedef struct gc_geom {
    int64_t cg, mg, blocks, K; /* channels in and out per group, 16-channel blocks per group, k per output */
    int64_t OH, OW, Wp;        /* Wp: the padded input columns the outputs read */
    int64_t band, bands, in_rows; /* output rows per task, tasks per (image, group), padded input rows a band reads */
} gc_geom;

/* padded input rows a band of `band` output rows reads */
static int64_t gc_in_rows(const mrt_window *w, int64_t band)
{
    return (band - 1) * w->stride[0] + (w->kernel[0] - 1) * w->dilation[0] + 1;
}

/* One group too on small planes with few output channels: there the GEMM packs the whole im2col (K = C x taps
   rows) for a few rows of W, and its 48-column tiles leave lanes idle (49 positions: two tiles; 196: five).
   DenseNet-121's 3x3 128 -> 32 Convs (Conv alone, one thread, medians): at 7x7 38 -> 23 us (Winograd's and the
   GEMM's alike; ORT 22), at 14x14 87 (Winograd) or 91 (GEMM) -> 80 us (ORT 61); at 28x28 Winograd stays faster
   (0.217 ms against 0.315 here). Not 64 outputs: GoogLeNet's 32 -> 64 at 14x14 went 36.7 -> 46.1 us (four blocks
   each broadcast the inputs again, where the GEMM's im2col serves 64 rows). */
enum { GC_DENSE_MAX_POS = 256, GC_DENSE_MAX_M = 32 };

static bool gc_geometry(const mrt_conv_params *p, gc_geom *g)
{
    const mrt_window *w = &p->win;
    bool dense = p->group == 1 && w->nsp == 2 && w->kernel[0] * w->kernel[1] > 1 && /* 1x1: conv_pointwise.c */
                 w->dilation[0] == 1 && w->dilation[1] == 1 && /* dilated: conv.c's live taps skip the padding */
                 w->out[0] * w->out[1] <= GC_DENSE_MAX_POS && p->m <= GC_DENSE_MAX_M;
    if (w->nsp != 2 || (p->group < 2 && !dense) || p->c % p->group || p->m % p->group ||
        mrt_conv_direct_depthwise(p, MRT_DTYPE_FLOAT))
        return false;
    g->cg = p->c / p->group;
    g->mg = p->m / p->group;
    int64_t taps = w->kernel[0] * w->kernel[1];
    /* fewer than 4 channels a block would leave most lanes idle (4 of 16 still beat the GEMM's per-group products:
       ResNeXt-50's 4-per-group 3x3s at 56x56 took 1.00 ms there, 0.66 here, ORT 0.87); 17-31 would leave a block
       half empty */
    if (g->mg < 4 || (g->mg > GC_LANES && g->mg % GC_LANES) || taps < 1 || taps > GC_MAX_TAPS || g->cg < 1)
        return false;
    g->K = g->cg * taps;
    g->blocks = ceil_div(g->mg, GC_LANES);
    g->OH = w->out[0];
    g->OW = w->out[1];
    if (g->OH < 1 || g->OW < 1 || g->OW > GC_OUT_POS) return false;
    g->Wp = (g->OW - 1) * w->stride[1] + (w->kernel[1] - 1) * w->dilation[1] + 1;
    /* the tallest band whose input rows and outputs fit, then bands of equal height */
    int64_t band = g->OH < GC_OUT_POS / g->OW ? g->OH : GC_OUT_POS / g->OW;
    for (; band > 0; band--)
        if (g->cg * gc_in_rows(w, band) * g->Wp <= GC_IN_FLOATS) break;
    if (band < 1) return false;
    g->bands = ceil_div(g->OH, band);
    g->band = ceil_div(g->OH, g->bands);
    g->in_rows = gc_in_rows(w, g->band);
    return true;
}

/* floats of one thread's scratch: the band's input rows (and room for a row's last block of positions to read
   past its end: gc_rows_k3), then its outputs as [position][channel] */
static int64_t gc_slot_floats(const gc_geom *g)
{
    /* (and three 16-position groups more: gc_block2's two halves of the outputs, each rounded up to 16) */
    return round16(g->cg * g->in_rows * g->Wp + 2 * GC_POS + 1) + (g->band * g->OW + 3 * GC_LANES) * GC_LANES;
}

int64_t mrt_conv_grouped_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads)
{
    gc_geom g;
    if (dt != MRT_DTYPE_FLOAT || !mrt_cpu_has_avx512f() || !gc_geometry(p, &g)) return 0;
    /* the threads' slots, then the k offsets (int64 each: two floats' room) */
    return (n_threads > 1 ? n_threads : 1) * gc_slot_floats(&g) + 2 * g.K;
}

/* [group][block][k][lane]: lane l of block ob is output channel ob * 16 + l of the group (0 past the group's) */
int64_t mrt_conv_grouped_packed_floats(const mrt_conv_params *p)
{
    gc_geom g;
    return gc_geometry(p, &g) ? p->group * g.blocks * g.K * GC_LANES : 0;
}

void mrt_pack_lanes16(const float *w, int64_t m, int64_t k, float *packed)
{
    for (int64_t ob = 0; ob < (m + GC_LANES - 1) / GC_LANES; ob++)
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t l = 0; l < GC_LANES; l++) {
                int64_t o = ob * GC_LANES + l;
                *packed++ = o < m ? w[o * k + kk] : 0.0f;
            }
}

void mrt_conv_grouped_pack_weights(const mrt_conv_params *p, const float *w, float *packed)
{
    gc_geom g;
    if (!gc_geometry(p, &g)) return;
    for (int64_t gi = 0; gi < p->group; gi++)
        mrt_pack_lanes16(w + gi * g.mg * g.K, g.mg, g.K, packed + gi * g.blocks * g.K * GC_LANES);
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
typedef struct gc_job {
    const mrt_conv_params *p;
    gc_geom g;
    const float *x, *wt, *b;
    float *y, *ws;
    const mrt_epilogue *ep;
    int64_t slot;
    int threads;
    const int64_t *koff; /* per k = (c, kh, kw): its input's offset from a window's corner in the band's rows */
} gc_job;

/* The band's padded input rows of group gi's channels: row r of channel c at xs + (c in_rows + r) Wp, holding
   padded columns [0, Wp) of input row oh0 sh - ph + r (zeros outside the image). A row is a few vectors: each
   stored whole (what passes Wp lands on the next row's start, stored after it, or in the slot's slack:
   gc_slot_floats), each loaded whole and masked in registers when the load stays inside x. The loop over a
   channel's rows only moves two pointers: working the masks and offsets out row by row took about 13 cycles a row
   of one vector, as much as the Conv's multiply-adds on RegNetX's 7x7 stage (14 -> 7, stride 2: fill 20 of 52 us). */
__attribute__((target("avx512f"))) static void gc_fill(const gc_job *j, int64_t n, int64_t gi, int64_t oh0, float *xs)
{
    const gc_geom *g = &j->g;
    const mrt_window *w = &j->p->win;
    int64_t H = w->in[0], W = w->in[1], pw = w->pad_begin[1], Wp = g->Wp, total = j->p->n * j->p->c * H * W;
    int64_t ih0 = oh0 * w->stride[0] - w->pad_begin[0]; /* row 0's input row */
    int64_t r_lo = ih0 < 0 ? -ih0 : 0, r_hi = H - ih0 < g->in_rows ? H - ih0 : g->in_rows; /* rows inside */
    if (r_hi < r_lo) r_hi = r_lo;
    int64_t nv = (Wp + 15) / 16;
    /* the first and last vectors' masks; those between are whole when the row is at least as wide */
    __mmask16 k_first = mrt_mask16_inside(-pw, W), k_last = mrt_mask16_inside(16 * (nv - 1) - pw, W);
    bool mid_whole = true;
    for (int64_t v = 1; v + 1 < nv && mid_whole; v++) mid_whole = mrt_mask16_inside(16 * v - pw, W) == 0xFFFF;
    for (int64_t c = 0; c < g->cg; c++) {
        float *d = xs + c * g->in_rows * Wp;
        for (int64_t r = 0; r < r_lo; r++, d += Wp)
            for (int64_t v = 0; v < nv; v++) _mm512_storeu_ps(d + 16 * v, _mm512_setzero_ps());
        int64_t at = ((n * j->p->c + gi * g->cg + c) * H + ih0 + r_lo) * W - pw; /* the first row's vector 0 */
        const float *s = j->x + at;
        bool plain = mid_whole && r_hi > r_lo && at >= 0 && at + (r_hi - r_lo - 1) * W + 16 * nv <= total;
        if (plain && nv == 1) {
            for (int64_t r = r_lo; r < r_hi; r++, s += W, d += Wp)
                _mm512_storeu_ps(d, _mm512_maskz_mov_ps(k_first, _mm512_loadu_ps(s)));
        } else if (plain) {
            for (int64_t r = r_lo; r < r_hi; r++, s += W, d += Wp) {
                _mm512_storeu_ps(d, _mm512_maskz_mov_ps(k_first, _mm512_loadu_ps(s)));
                for (int64_t v = 1; v + 1 < nv; v++) _mm512_storeu_ps(d + 16 * v, _mm512_loadu_ps(s + 16 * v));
                _mm512_storeu_ps(d + 16 * (nv - 1), _mm512_maskz_mov_ps(k_last, _mm512_loadu_ps(s + 16 * (nv - 1))));
            }
        } else {
            for (int64_t r = r_lo; r < r_hi; r++, s += W, d += Wp) /* masked loads: the lanes masked out are not read */
                for (int64_t v = 0; v < nv; v++)
                    _mm512_storeu_ps(d + 16 * v, _mm512_maskz_loadu_ps(mrt_mask16_inside(16 * v - pw, W), s + 16 * v));
        }
        for (int64_t r = r_hi; r < g->in_rows; r++, d += Wp)
            for (int64_t v = 0; v < nv; v++) _mm512_storeu_ps(d + 16 * v, _mm512_setzero_ps());
    }
}

/* Outputs [0, npos) of the band for the block whose W columns start at wt, into os ([position][lane]). koff[k]:
   where k = (c, kh, kw) reads, from a window's corner in xs. Each output: the k blocks of MRT_SGEMM_K_BLOCK in
   order, each one fma chain from 0, added in order, then + the bias. */
__attribute__((target("avx512f"))) static void gc_block(const gc_job *j, const float *xs, const float *wt,
                                                       const int64_t *koff, __m512 bias, bool with_bias, int64_t npos,
                                                       float *os)
{
    const gc_geom *g = &j->g;
    const mrt_window *w = &j->p->win;
    for (int64_t q0 = 0; q0 < npos; q0 += GC_POS) {
        const float *at[GC_POS]; /* position q0 + p's window corner (past npos: the last position, not stored) */
        for (int p = 0; p < GC_POS; p++) {
            int64_t q = q0 + p < npos ? q0 + p : npos - 1, oh = q / g->OW, ow = q % g->OW;
            at[p] = xs + oh * w->stride[0] * g->Wp + ow * w->stride[1];
        }
        __m512 tot[GC_POS];
        for (int64_t k0 = 0; k0 < g->K; k0 += MRT_SGEMM_K_BLOCK) {
            int64_t k1 = k0 + MRT_SGEMM_K_BLOCK < g->K ? k0 + MRT_SGEMM_K_BLOCK : g->K;
            __m512 acc[GC_POS];
            for (int p = 0; p < GC_POS; p++) acc[p] = _mm512_setzero_ps();
            for (int64_t k = k0; k < k1; k++) {
                __m512 wv = _mm512_load_ps(wt + k * GC_LANES);
                int64_t off = koff[k];
                for (int p = 0; p < GC_POS; p++) acc[p] = _mm512_fmadd_ps(_mm512_set1_ps(at[p][off]), wv, acc[p]);
            }
            for (int p = 0; p < GC_POS; p++) tot[p] = k0 == 0 ? acc[p] : _mm512_add_ps(tot[p], acc[p]);
        }
        for (int p = 0; p < GC_POS && q0 + p < npos; p++)
            _mm512_store_ps(os + (q0 + p) * GC_LANES, with_bias ? _mm512_add_ps(tot[p], bias) : tot[p]);
    }
}

/* gc_block for two blocks at once (a group's 32 output channels), over outputs [qa, qb) of the band, into os0 and
   os1 ([position - qa][lane]): each input value broadcast once for both W columns, 10 loads for 16 fmas where two
   passes took 18. Each output's chains and sums as gc_block's: the k blocks' chains from 0, added in order in os,
   then + the bias. DenseNet-121's 3x3 128 -> 32 (Conv alone, one thread, medians): at 14x14 80-81 -> 66 us (ORT
   61), at 7x7 23-25 -> 21 us (ORT 22). */
__attribute__((target("avx512f"))) static void gc_block2(const gc_job *j, const float *xs, const float *wt0,
                                                        const float *wt1, const int64_t *koff, __m512 bias0,
                                                        __m512 bias1, bool with_bias, int64_t qa, int64_t qb,
                                                        float *os0, float *os1)
{
    const gc_geom *g = &j->g;
    const mrt_window *w = &j->p->win;
    for (int64_t q0 = qa; q0 < qb; q0 += GC_POS) {
        const float *at[GC_POS]; /* position q0 + p's window corner (past qb: the last position, not stored) */
        for (int p = 0; p < GC_POS; p++) {
            int64_t q = q0 + p < qb ? q0 + p : qb - 1, oh = q / g->OW, ow = q % g->OW;
            at[p] = xs + oh * w->stride[0] * g->Wp + ow * w->stride[1];
        }
        int np = qb - q0 < GC_POS ? (int)(qb - q0) : GC_POS;
        float *o0 = os0 + (q0 - qa) * GC_LANES, *o1 = os1 + (q0 - qa) * GC_LANES;
        for (int64_t k0 = 0; k0 < g->K; k0 += MRT_SGEMM_K_BLOCK) {
            int64_t k1 = k0 + MRT_SGEMM_K_BLOCK < g->K ? k0 + MRT_SGEMM_K_BLOCK : g->K;
            __m512 a0[GC_POS], a1[GC_POS];
            for (int p = 0; p < GC_POS; p++) a0[p] = a1[p] = _mm512_setzero_ps();
            for (int64_t k = k0; k < k1; k++) {
                __m512 w0 = _mm512_load_ps(wt0 + k * GC_LANES), w1 = _mm512_load_ps(wt1 + k * GC_LANES);
                int64_t off = koff[k];
                for (int p = 0; p < GC_POS; p++) {
                    __m512 xb = _mm512_set1_ps(at[p][off]);
                    a0[p] = _mm512_fmadd_ps(xb, w0, a0[p]);
                    a1[p] = _mm512_fmadd_ps(xb, w1, a1[p]);
                }
            }
            for (int p = 0; p < np; p++) {
                __m512 t0 = k0 == 0 ? a0[p] : _mm512_add_ps(_mm512_load_ps(o0 + p * GC_LANES), a0[p]);
                __m512 t1 = k0 == 0 ? a1[p] : _mm512_add_ps(_mm512_load_ps(o1 + p * GC_LANES), a1[p]);
                _mm512_store_ps(o0 + p * GC_LANES, t0);
                _mm512_store_ps(o1 + p * GC_LANES, t1);
            }
        }
        for (int p = 0; with_bias && p < np; p++) {
            _mm512_store_ps(o0 + p * GC_LANES, _mm512_add_ps(_mm512_load_ps(o0 + p * GC_LANES), bias0));
            _mm512_store_ps(o1 + p * GC_LANES, _mm512_add_ps(_mm512_load_ps(o1 + p * GC_LANES), bias1));
        }
    }
}

/* The same outputs for 3-wide kernels with column stride S (1 or 2), column dilation 1 and K in one block, R (1 or
   2) output rows at a time, GC_POS positions of each: for each (c, kh), each input value of the positions' windows
   is broadcast once and multiplied by the W column of every kw that reads it (3 for stride 1), about half the loads
   per fma; with two rows, twice the independent chains (a position's three kw are a chain of dependent fmas). A
   position's multiply-adds still come in k order (kw = 0, 1, 2 as the input index rises). A row's last block
   computes positions past its end from whatever follows them (not stored). */
__attribute__((target("avx512f"), always_inline)) static inline void gc_rows_k3(const gc_job *j, const float *xs,
                                                                              const float *wt, __m512 bias,
                                                                              bool with_bias, int64_t oh, float *os,
                                                                              const int S, const int R)
{
    const gc_geom *g = &j->g;
    const mrt_window *w = &j->p->win;
    int64_t KH = w->kernel[0], plane = g->in_rows * g->Wp, rs = w->stride[0] * g->Wp;
    for (int64_t ow0 = 0; ow0 < g->OW; ow0 += GC_POS) {
        const float *r0 = xs + oh * rs + ow0 * S;
        __m512 acc[R][GC_POS];
        for (int h = 0; h < R; h++)
            for (int p = 0; p < GC_POS; p++) acc[h][p] = _mm512_setzero_ps();
        for (int64_t c = 0; c < g->cg; c++)
            for (int64_t kh = 0; kh < KH; kh++) {
                const float *r = r0 + c * plane + kh * w->dilation[0] * g->Wp, *wk = wt + (c * KH + kh) * 3 * GC_LANES;
                __m512 w0 = _mm512_load_ps(wk), w1 = _mm512_load_ps(wk + GC_LANES), w2 = _mm512_load_ps(wk + 2 * GC_LANES);
                _Pragma("GCC unroll 2") for (int h = 0; h < R; h++)
                    _Pragma("GCC unroll 32") for (int i = 0; i < GC_POS * S + 3 - S; i++) {
                        __m512 xb = _mm512_set1_ps(r[h * rs + i]);
                        /* input i is tap kw of position (i - kw) / S */
                        if (i % S == 0 && i / S < GC_POS) acc[h][i / S] = _mm512_fmadd_ps(xb, w0, acc[h][i / S]);
                        if (i >= 1 && (i - 1) % S == 0 && (i - 1) / S < GC_POS)
                            acc[h][(i - 1) / S] = _mm512_fmadd_ps(xb, w1, acc[h][(i - 1) / S]);
                        if (i >= 2 && (i - 2) % S == 0 && (i - 2) / S < GC_POS)
                            acc[h][(i - 2) / S] = _mm512_fmadd_ps(xb, w2, acc[h][(i - 2) / S]);
                    }
            }
        for (int h = 0; h < R; h++)
            for (int p = 0; p < GC_POS && ow0 + p < g->OW; p++)
                _mm512_store_ps(os + ((oh + h) * g->OW + ow0 + p) * GC_LANES,
                                with_bias ? _mm512_add_ps(acc[h][p], bias) : acc[h][p]);
    }
}

/* Output rows [0, rows) of the band, two at a time, by gc_rows_k3 */
#define GC_ROWS_K3(S)                                                                                              \
    __attribute__((target("avx512f"))) static void gc_rows_k3_s##S(const gc_job *j, const float *xs, const float *wt, \
                                                                  __m512 bias, bool with_bias, int64_t rows,       \
                                                                  float *os)                                       \
    {                                                                                                              \
        int64_t oh = 0;                                                                                            \
        for (; oh + 2 <= rows; oh += 2) gc_rows_k3(j, xs, wt, bias, with_bias, oh, os, S, 2);                      \
        if (oh < rows) gc_rows_k3(j, xs, wt, bias, with_bias, oh, os, S, 1);                                       \
    }
GC_ROWS_K3(1)
GC_ROWS_K3(2)

/* Task t: image, band, group, block in that order from the outermost, so the blocks of a band share its rows, and
   on large planes (several bands) a thread's run of tasks is a run of rows of every channel: the positions the 1x1
   Convs before and after split by wrote and read on the same core. Group-major, on two threads each core read half
   of its input from the other one's cache (RegNetX-400MF's 112 -> 56 stride-2 conv, 2 groups, 7 bands). */
__attribute__((target("avx512f"))) static void gc_tasks(void *arg, int64_t t0, int64_t t1)
{
    const gc_job *j = arg;
    const gc_geom *g = &j->g;
    const mrt_conv_params *p = j->p;
    float *xs = j->ws + (j->threads > 1 ? mrt_thread_index() : 0) * j->slot;
    float *os = xs + round16(g->cg * g->in_rows * g->Wp);
    int64_t ohw = g->OH * g->OW, filled = -1; /* the (image, band, group) whose rows xs holds */
    for (int64_t t = t0; t < t1; t++) {
        int64_t ob = t % g->blocks, rest = t / g->blocks, gi = rest % p->group, nb = rest / p->group;
        int64_t bi = nb % g->bands, n = nb / g->bands;
        int64_t oh0 = bi * g->band, oh1 = oh0 + g->band < g->OH ? oh0 + g->band : g->OH, npos = (oh1 - oh0) * g->OW;
        if (rest != filled) gc_fill(j, n, gi, oh0, xs);
        filled = rest;
        const mrt_window *w = &p->win;
        bool k3 = w->kernel[1] == 3 && w->dilation[1] == 1 && g->K <= MRT_SGEMM_K_BLOCK && w->stride[1] <= 2;
        /* two blocks (32 channels) by gc_block2: task ob is then a half of the band's outputs, not a block */
        bool pair = !k3 && g->blocks == 2;
        /* halves of whole GC_POS runs: 196 positions as 104 + 92 (13 and 12 runs) */
        int64_t half = ((npos + 1) / 2 + GC_POS - 1) / GC_POS * GC_POS, mid = pair ? (half < npos ? half : npos) : 0;
        int64_t qa = pair && ob == 1 ? mid : 0, qb = pair && ob == 0 ? mid : npos;
        int64_t b_lo = pair ? 0 : ob, b_hi = pair ? 2 : ob + 1;
        if (qb <= qa) continue;
        float *osb[2] = {os, os + round16(qb - qa) * GC_LANES};
        _Alignas(64) float bs[2][GC_LANES] = {{0}};
        for (int64_t b = b_lo; b < b_hi; b++)
            for (int64_t l = 0; j->b && l < GC_LANES && b * GC_LANES + l < g->mg; l++)
                bs[b - b_lo][l] = j->b[gi * g->mg + b * GC_LANES + l];
        const float *wt = j->wt + (gi * g->blocks + b_lo) * g->K * GC_LANES;
        if (k3)
            (w->stride[1] == 1 ? gc_rows_k3_s1 : gc_rows_k3_s2)(j, xs, wt, _mm512_load_ps(bs[0]), j->b != NULL, oh1 - oh0, os);
        else if (pair)
            gc_block2(j, xs, wt, wt + g->K * GC_LANES, j->koff, _mm512_load_ps(bs[0]), _mm512_load_ps(bs[1]), j->b != NULL,
                      qa, qb, osb[0], osb[1]);
        else
            gc_block(j, xs, wt, j->koff, _mm512_load_ps(bs[0]), j->b != NULL, npos, os);
        for (int64_t b = b_lo; b < b_hi; b++) {
            int64_t ch0 = gi * g->mg + b * GC_LANES, nch = g->mg - b * GC_LANES < GC_LANES ? g->mg - b * GC_LANES : GC_LANES;
            const float *ob_s = osb[b - b_lo];
            /* [position][channel] -> the channels' planes, 16 positions at a time */
            float *y0 = j->y + (n * p->m + ch0) * ohw + oh0 * g->OW + qa;
            for (int64_t q = 0; q < qb - qa; q += GC_LANES) {
                int64_t nq = qb - qa - q < GC_LANES ? qb - qa - q : GC_LANES;
                __m512 r[GC_LANES];
                for (int i = 0; i < GC_LANES; i++) r[i] = i < nq ? _mm512_load_ps(ob_s + (q + i) * GC_LANES) : _mm512_setzero_ps();
                mrt_transpose16(r);
                for (int64_t ch = 0; ch < nch; ch++)
                    _mm512_mask_storeu_ps(y0 + ch * ohw + q, mrt_mask16_first(nq), r[mrt_transpose16_perm[ch]]);
            }
            mrt_epilogue_apply_rows(j->ep, y0, nch, qb - qa, ohw, ch0, y0 - j->y);
        }
    }
}
#endif

bool mrt_conv_grouped(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *packed,
                      const float *b, float *y, const mrt_epilogue *ep, float *ws)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    gc_job j = {.p = p, .x = x, .wt = packed, .b = b, .y = y, .ws = ws, .ep = ep};
    if (!mrt_cpu_has_avx512f() || !gc_geometry(p, &j.g)) return false;
    j.threads = ctx && ctx->n_threads > 1 ? ctx->n_threads : 1;
    j.slot = gc_slot_floats(&j.g);
    int64_t *koff = (int64_t *)(ws + j.threads * j.slot);
    const mrt_window *w = &p->win;
    for (int64_t c = 0, k = 0; c < j.g.cg; c++)
        for (int64_t kh = 0; kh < w->kernel[0]; kh++)
            for (int64_t kw = 0; kw < w->kernel[1]; kw++, k++)
                koff[k] = (c * j.g.in_rows + kh * w->dilation[0]) * j.g.Wp + kw * w->dilation[1];
    j.koff = koff;
    mrt_parallel_for(ctx, p->n * p->group * j.g.bands * j.g.blocks, 1, gc_tasks, &j);
    return true;
#else
    (void)ctx, (void)p, (void)x, (void)packed, (void)b, (void)y, (void)ep, (void)ws;
    return false;
#endif
}
