/* Float32 3x3 stride-1 Conv by Winograd's F(2x2, 3x3) (see ops_cpu/conv_winograd.h).
 *
 * Work: an image's T = ceil(OH / 2) x ceil(OW / 2) tiles, in row-major order, are cut into sub-blocks of at most
 * MRT_WINOGRAD_TILES (one GEMM panel), in units of 16 (a vector of tiles) so that only an image's last vector has
 * idle lanes. A task is one sub-block and a range of output channels (small images are cut along channels too, so
 * that every thread gets work). It transforms the sub-block's input patches into V (16 matrices of C x 48, the
 * GEMM's packed-B layout, so the tile reads them as they are), then for every 64 output channels multiplies the 16
 * packed transformed weights by them into M (16 matrices of 64 x 48) and transforms M back into the output, with
 * the bias and, when it is [BatchNormalization] -> [Add] -> [Relu | Clip], the fused epilogue in registers. V and M
 * are the thread's slot of the workspace (C = 256: 786 KB and 196 KB, in a Zen 5 core's 1 MB L2).
 *
 * Transforms, xi = 4 a + b indexing the 4x4 transformed tile:
 *   V = B^T d B, rows then columns: t = (d0 - d2, d1 + d2, d2 - d1, d1 - d3) along each row of d, then the same
 *       along each column of t;
 *   Y = A^T m A: s = ((m0 + m1) + m2, (m1 - m2) - m3) along each row of m, then the same along each column of s;
 *   U = G g G^T in double, G's rows (1, 0, 0), (1/2, 1/2, 1/2), (1/2, -1/2, 1/2), (0, 0, 1).
 * The AVX-512 bodies and the scalar ones compute exactly these float operations per tile, so the bits agree. */
#include "ops_cpu/conv_winograd.h"

#include <string.h>

#include "ops_cpu/conv_workspace.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

enum { NB = MRT_WINOGRAD_TILES, MC = MRT_WINOGRAD_MC, WG_PF_CH = 2 /* channels ahead (wg_task) */ };

int64_t mrt_winograd_packed_floats(int64_t m, int64_t c) { return 16 * mrt_sgemm_packed_a_floats(m, c); }

int64_t mrt_winograd_pass_channels(int64_t m)
{
    int64_t panels = (m + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR * MRT_SGEMM_MR;
    return panels < MC ? panels : MC;
}

/* Floats between V's matrices and between M's: a line more than their rows. C x 48 floats is a multiple of 4 KiB
   for C a multiple of 64, and then the 16 stores of a tile's input transform all fell on one L1 set: DenseNet-121's
   128 -> 32 at 56x56, alone on one thread, 0.836 -> 0.616 ms (its input transform 0.36 -> 0.15 ms) */
static int64_t wg_vs(int64_t c) { return c * NB + 16; }
static int64_t wg_ms(int64_t mcap) { return mcap * NB + 16; }

int64_t mrt_winograd_slot_floats(int64_t m, int64_t c)
{
    return (16 * (wg_vs(c) + wg_ms(mrt_winograd_pass_channels(m))) + 15) / 16 * 16;
}

void mrt_winograd_pack_weights(const float *w, int64_t m, int64_t c, float *tmp, float *dst)
{
    int64_t paf = mrt_sgemm_packed_a_floats(m, c);
    for (int xi = 0; xi < 16; xi++) {
        int a = xi / 4, b = xi % 4;
        for (int64_t i = 0; i < m * c; i++) {
            const float *g = w + i * 9;
            double t[4][3], u[4]; /* t = G g (4 x 3); u = row a of t G^T */
            for (int k = 0; k < 3; k++) {
                double g0 = g[k], g1 = g[3 + k], g2 = g[6 + k];
                t[0][k] = g0;
                t[1][k] = 0.5 * (g0 + g1 + g2);
                t[2][k] = 0.5 * (g0 - g1 + g2);
                t[3][k] = g2;
            }
            const double *r = t[a];
            u[0] = r[0];
            u[1] = 0.5 * (r[0] + r[1] + r[2]);
            u[2] = 0.5 * (r[0] - r[1] + r[2]);
            u[3] = r[2];
            tmp[i] = (float)u[b];
        }
        mrt_sgemm_pack_a(tmp, c, 1, m, c, dst + xi * paf);
    }
}

typedef struct wg_job {
    const mrt_conv_params *p;
    const float *x, *u, *bias;
    float *y;
    const mrt_epilogue *ep;
    bool ep_in_tiles; /* the output transform applies ep (AVX-512, ep of the register form) */
    float *slots;
    int threads; /* the session's, which the workspace has a slot for each of */
    int64_t slot_floats, paf, a_rows; /* floats per transformed weight matrix; its rows padded to panels */
    int64_t mcap; /* output channels per pass (MC, or fewer when M is): M's matrices are mcap x 48 */
    int64_t tw, tiles, units, n_sb; /* tiles per row and per image; 16-tile units per image; sub-blocks per image */
    int64_t m_split, m_per;         /* output channel ranges (each a task per sub-block), channels per range */
} wg_job;

/* ---- the transforms of one tile, scalar (the reference sequence of operations) */

/* V[xi] of the tile at output (2 ty, 2 tx) of channel plane xc, stored at v[xi * vs] */
static void input_tile(const wg_job *j, const float *xc, int64_t ty, int64_t tx, float *v, int64_t vs)
{
    const mrt_window *w = &j->p->win;
    int64_t H = w->in[0], W = w->in[1];
    float d[4][4], t[4][4];
    for (int i = 0; i < 4; i++) {
        int64_t ih = 2 * ty - w->pad_begin[0] + i;
        for (int k = 0; k < 4; k++) {
            int64_t iw = 2 * tx - w->pad_begin[1] + k;
            d[i][k] = ih >= 0 && ih < H && iw >= 0 && iw < W ? xc[ih * W + iw] : 0.0f;
        }
    }
    for (int i = 0; i < 4; i++) {
        t[i][0] = d[i][0] - d[i][2];
        t[i][1] = d[i][1] + d[i][2];
        t[i][2] = d[i][2] - d[i][1];
        t[i][3] = d[i][1] - d[i][3];
    }
    for (int k = 0; k < 4; k++) {
        v[(0 + k) * vs] = t[0][k] - t[2][k];
        v[(4 + k) * vs] = t[1][k] + t[2][k];
        v[(8 + k) * vs] = t[2][k] - t[1][k];
        v[(12 + k) * vs] = t[1][k] - t[3][k];
    }
}

/* The outputs of the tile at (2 ty, 2 tx) of channel plane yc from m[xi * ms] (+ bias) */
static void output_tile(const wg_job *j, const float *m, int64_t ms, const float *bias, int64_t ty, int64_t tx, float *yc)
{
    int64_t OH = j->p->win.out[0], OW = j->p->win.out[1];
    float s[4][2], y[2][2];
    for (int i = 0; i < 4; i++) {
        const float *r = m + 4 * i * ms;
        s[i][0] = (r[0] + r[ms]) + r[2 * ms];
        s[i][1] = (r[ms] - r[2 * ms]) - r[3 * ms];
    }
    for (int k = 0; k < 2; k++) {
        y[0][k] = (s[0][k] + s[1][k]) + s[2][k];
        y[1][k] = (s[1][k] - s[2][k]) - s[3][k];
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            int64_t oh = 2 * ty + i, ow = 2 * tx + k;
            if (oh < OH && ow < OW) yc[oh * OW + ow] = bias ? y[i][k] + *bias : y[i][k];
        }
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* ---- the same, for the cnt <= 16 tiles (ty, tx0 + l) of one tile row, a tile a lane */

__attribute__((target("avx512f"))) static void input_tiles16(const wg_job *j, const float *xc, int64_t ty, int64_t tx0,
                                                             int cnt, float *v, int64_t vs)
{
    const mrt_window *w = &j->p->win;
    int64_t H = w->in[0], W = w->in[1], c0 = 2 * tx0 - w->pad_begin[1]; /* input column of lane 0's d[.][0] */
    __mmask16 k0 = mrt_mask16_inside(c0, W), k1 = mrt_mask16_inside(c0 + 16, W), k2 = mrt_mask16_inside(c0 + 32, W);
    __mmask16 out = mrt_mask16_first(cnt);
    __m512 t[4][4];
    for (int i = 0; i < 4; i++) {
        int64_t ih = 2 * ty - w->pad_begin[0] + i;
        __m512 d0, d1, d2, d3;
        if (ih < 0 || ih >= H) {
            d0 = d1 = d2 = d3 = _mm512_setzero_ps();
        } else { /* lane l's column k is c0 + 2 l + k: the even and odd floats of [c0, c0 + 32) and [c0 + 2, c0 + 34) */
            const float *r = xc + ih * W + c0;
            __m512 u0 = _mm512_maskz_loadu_ps(k0, r), u1 = _mm512_maskz_loadu_ps(k1, r + 16);
            __m512 u2 = _mm512_maskz_loadu_ps(k2, r + 32);
            __m512 w0 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(u1), _mm512_castps_si512(u0), 2));
            __m512 w1 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(u2), _mm512_castps_si512(u1), 2));
            d0 = mrt_even16(u0, u1), d1 = mrt_odd16(u0, u1), d2 = mrt_even16(w0, w1), d3 = mrt_odd16(w0, w1);
        }
        t[i][0] = _mm512_sub_ps(d0, d2);
        t[i][1] = _mm512_add_ps(d1, d2);
        t[i][2] = _mm512_sub_ps(d2, d1);
        t[i][3] = _mm512_sub_ps(d1, d3);
    }
    for (int k = 0; k < 4; k++) {
        _mm512_mask_storeu_ps(v + (0 + k) * vs, out, _mm512_sub_ps(t[0][k], t[2][k]));
        _mm512_mask_storeu_ps(v + (4 + k) * vs, out, _mm512_add_ps(t[1][k], t[2][k]));
        _mm512_mask_storeu_ps(v + (8 + k) * vs, out, _mm512_sub_ps(t[2][k], t[1][k]));
        _mm512_mask_storeu_ps(v + (12 + k) * vs, out, _mm512_sub_ps(t[1][k], t[3][k]));
    }
}

/* n <= 32 outputs of one output row from lanes lo (tiles 0-7) and hi (8-15), interleaved as columns, at flat index
   at of channel ch: + bias, the epilogue in registers (mrt_reg_epilogue16), stored */
__attribute__((target("avx512f"))) static void store_row32(const wg_job *j, __m512 y0, __m512 y1, int n, const float *bias,
                                                           int64_t ch, int64_t at, float *dst)
{
    const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    __m512 r[2] = {_mm512_permutex2var_ps(y0, lo_idx, y1), _mm512_permutex2var_ps(y0, hi_idx, y1)};
    mrt_reg_epilogue re;
    bool ep = j->ep_in_tiles && mrt_reg_epilogue_of(j->ep, ch, at, &re);
    for (int h = 0; h < 2; h++) {
        __mmask16 k = mrt_mask16_first(n - 16 * h);
        if (!k) break;
        __m512 v = bias ? _mm512_add_ps(r[h], _mm512_set1_ps(*bias)) : r[h];
        if (ep) {
            mrt_bn_coef bn = re.bn ? *re.bn : (mrt_bn_coef){0};
            v = mrt_reg_epilogue16(&re, v, _mm512_set1_ps(bn.a_hi), _mm512_set1_ps(bn.a_lo), _mm512_set1_ps(bn.b_hi),
                                   _mm512_set1_ps(bn.b_lo), 16 * h, k, _mm512_set1_ps(re.lo), _mm512_set1_ps(re.hi));
        }
        _mm512_mask_storeu_ps(dst + 16 * h, k, v);
    }
}

__attribute__((target("avx512f"))) static void output_tiles16(const wg_job *j, const float *m, int64_t ms, const float *bias,
                                                              int64_t ch, int64_t ty, int64_t tx0, int cnt, float *yc,
                                                              int64_t at_c)
{
    int64_t OH = j->p->win.out[0], OW = j->p->win.out[1], ow0 = 2 * tx0;
    __mmask16 in = mrt_mask16_first(cnt);
    __m512 s[4][2];
    for (int i = 0; i < 4; i++) {
        const float *r = m + 4 * i * ms;
        __m512 m0 = _mm512_maskz_loadu_ps(in, r), m1 = _mm512_maskz_loadu_ps(in, r + ms);
        __m512 m2 = _mm512_maskz_loadu_ps(in, r + 2 * ms), m3 = _mm512_maskz_loadu_ps(in, r + 3 * ms);
        s[i][0] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
        s[i][1] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    int n = (int)(OW - ow0 < 2 * cnt ? OW - ow0 : 2 * cnt);
    for (int i = 0; i < 2; i++) {
        int64_t oh = 2 * ty + i;
        if (oh >= OH) break;
        __m512 y[2];
        for (int k = 0; k < 2; k++)
            y[k] = i == 0 ? _mm512_add_ps(_mm512_add_ps(s[0][k], s[1][k]), s[2][k])
                          : _mm512_sub_ps(_mm512_sub_ps(s[1][k], s[2][k]), s[3][k]);
        store_row32(j, y[0], y[1], n, bias, ch, at_c + oh * OW + ow0, yc + oh * OW + ow0);
    }
}
#endif

/* Tiles [t0, t1) of an image (row-major) cut at tile rows, in pieces of at most 16: fn(ty, tx0, cnt, column) */
#define FOR_TILE_PIECES(J, T0, T1, BODY)                                                                            \
    for (int64_t t_ = (T0); t_ < (T1);) {                                                                          \
        int64_t ty = t_ / (J)->tw, tx0 = t_ % (J)->tw, row_end = (ty + 1) * (J)->tw;                                \
        int cnt = (int)((T1) < row_end ? (T1) - t_ : row_end - t_);                                                \
        if (cnt > 16) cnt = 16;                                                                                    \
        int64_t col = t_ - (T0);                                                                                   \
        BODY;                                                                                                      \
        t_ += cnt;                                                                                                 \
    }

static void wg_task(void *arg, int64_t task0, int64_t task1)
{
    const wg_job *j = arg;
    const mrt_conv_params *p = j->p;
    int64_t C = p->c, M = p->m, in_hw = p->win.in[0] * p->win.in[1], ohw = p->win.out[0] * p->win.out[1];
    /* the thread's slot (mrt_thread_index < the threads the workspace was sized for); a serial call (one thread)
       may still run on a pool worker, inside another kernel's task */
    int64_t vs = wg_vs(C), ms = wg_ms(j->mcap); /* floats between V's (M's) matrices */
    float *v = j->slots + (j->threads > 1 ? mrt_thread_index() : 0) * j->slot_floats, *mb = v + 16 * vs;
    bool avx512 = mrt_cpu_has_avx512f();
    const float *brows[MRT_SGEMM_K_BLOCK];
    for (int64_t task = task0; task < task1; task++) {
        /* channel-range major: a thread's share is its channel range over every sub-block */
        int64_t blocks = j->p->n * j->n_sb, mr_i = task / blocks, n = task % blocks / j->n_sb, sb = task % j->n_sb;
        int64_t u0 = j->units * sb / j->n_sb, u1 = j->units * (sb + 1) / j->n_sb;
        int64_t t0 = 16 * u0, t1 = 16 * u1 < j->tiles ? 16 * u1 : j->tiles, nt = t1 - t0;
        int64_t m_lo = mr_i * j->m_per, m_hi = m_lo + j->m_per < M ? m_lo + j->m_per : M;
        if (m_lo >= m_hi || nt <= 0) continue;
        const float *x = j->x + n * C * in_hw;
        float *y = j->y + n * M * ohw;
        /* V: the sub-block's transformed patches; lanes past nt up to the tile's vector width zeroed (the GEMM tile
           reads them) */
        /* The input rows the sub-block's tiles read, [r_lo, r_hi) of each plane, fetched two channels ahead: a
           channel's few rows are too short a run for the prefetchers, and the transform waited on its loads
           (DenseNet-121's 18 3x3 Convs at 56x56 and 28x28, per-node sums over 4 alternating rounds, one thread:
           6.11-6.29 -> 5.83-6.04 ms) */
        int64_t r_lo = 2 * (t0 / j->tw) - p->win.pad_begin[0], r_hi = 2 * ((t1 - 1) / j->tw) - p->win.pad_begin[0] + 4;
        if (r_lo < 0) r_lo = 0;
        if (r_hi > p->win.in[0]) r_hi = p->win.in[0];
        int64_t pf_bytes = (r_hi - r_lo) * p->win.in[1] * (int64_t)sizeof(float);
        for (int64_t c = 0; c < C; c++) {
            const float *xc = x + c * in_hw;
            float *vc = v + c * NB;
            if (c + WG_PF_CH < C) {
                const char *pf = (const char *)(xc + WG_PF_CH * in_hw + r_lo * p->win.in[1]);
                for (int64_t b = 0; b < pf_bytes; b += 64) __builtin_prefetch(pf + b, 0, 3);
            }
#ifdef MRT_HAVE_AVX512_INTRINSICS
            if (avx512) {
                FOR_TILE_PIECES(j, t0, t1, input_tiles16(j, xc, ty, tx0, cnt, vc + col, vs));
                continue;
            }
#endif
            FOR_TILE_PIECES(j, t0, t1, for (int l = 0; l < cnt; l++) input_tile(j, xc, ty, tx0 + l, vc + col + l, vs));
        }
        int64_t padded = (nt + 15) / 16 * 16;
        if (padded > nt)
            for (int xi = 0; xi < 16; xi++)
                for (int64_t c = 0; c < C; c++) memset(v + xi * vs + c * NB + nt, 0, (size_t)(padded - nt) * sizeof(float));
        for (int64_t mc = m_lo; mc < m_hi; mc += j->mcap) {
            int64_t mcn = m_hi - mc < j->mcap ? m_hi - mc : j->mcap;
            for (int xi = 0; xi < 16; xi++)
                for (int64_t k0 = 0; k0 < C; k0 += MRT_SGEMM_K_BLOCK) { /* the GEMM's k blocks (sgemm.h) */
                    int64_t kc = C - k0 < MRT_SGEMM_K_BLOCK ? C - k0 : MRT_SGEMM_K_BLOCK;
                    for (int64_t k = 0; k < kc; k++) brows[k] = v + xi * vs + (k0 + k) * NB;
                    /* packed A's block at k0: panels of MR rows, kc deep */
                    const float *u = j->u + xi * j->paf + k0 * j->a_rows;
                    /* the A block the tile after this (xi, k0)'s last panel reads, for mrt_sgemm_tile_rows to fetch
                       into L2 (the transformed weights come from memory: ResNet-18 on 2 threads 13.3 -> 12.1 ms):
                       the next k block's first panel, when as deep as this one, or the next xi's, or the next
                       channel pass's */
                    const float *next_block = NULL;
                    int64_t kc0 = C < MRT_SGEMM_K_BLOCK ? C : MRT_SGEMM_K_BLOCK; /* the first k block's depth */
                    if (k0 + kc < C) {
                        if (C - k0 - kc >= kc) next_block = u + kc * j->a_rows + mc * kc;
                    } else if (xi < 15) {
                        next_block = j->u + (xi + 1) * j->paf + mc * kc0;
                    } else if (mc + mcn < m_hi) {
                        next_block = j->u + (mc + mcn) * kc0;
                    }
                    for (int64_t m0 = mc; m0 < mc + mcn; m0 += MRT_SGEMM_MR) {
                        int mr = (int)(mc + mcn - m0 < MRT_SGEMM_MR ? mc + mcn - m0 : MRT_SGEMM_MR);
                        const float *a_next = m0 + MRT_SGEMM_MR < mc + mcn ? u + (m0 + MRT_SGEMM_MR) * kc : next_block;
                        mrt_sgemm_tile_rows(kc, u + m0 * kc, a_next, brows, 0, mb + xi * ms + (m0 - mc) * NB, NB,
                                            k0 > 0, mr, (int)nt, NULL, NULL, 0, 0);
                    }
                }
            for (int64_t ch = mc; ch < mc + mcn; ch++) {
                const float *mch = mb + (ch - mc) * NB, *bias = j->bias ? j->bias + ch : NULL;
                float *yc = y + ch * ohw;
#ifdef MRT_HAVE_AVX512_INTRINSICS
                if (avx512) {
                    int64_t at_c = (n * M + ch) * ohw;
                    FOR_TILE_PIECES(j, t0, t1, output_tiles16(j, mch + col, ms, bias, ch, ty, tx0, cnt, yc, at_c));
                    continue;
                }
#endif
                FOR_TILE_PIECES(j, t0, t1,
                                for (int l = 0; l < cnt; l++) output_tile(j, mch + col + l, ms, bias, ty, tx0 + l, yc));
            }
        }
    }
}

/* The epilogue as a pass over whole channel planes [c0, c1) of the batch (when the tiles could not apply it) */
static void wg_epilogue(void *arg, int64_t c0, int64_t c1)
{
    const wg_job *j = arg;
    int64_t M = j->p->m, ohw = j->p->win.out[0] * j->p->win.out[1];
    for (int64_t c = c0; c < c1; c++) mrt_epilogue_apply_rows(j->ep, j->y + c * ohw, 1, ohw, ohw, c % M, c * ohw);
}

/* A dilated Conv's phases (mrt_conv_winograd_phases): task t copies plane t (image, channel) of x into its d x d
   phase planes, or (scatter) the phase planes of y's plane t back */
typedef struct wg_phase_job {
    const float *src;
    float *dst;
    int64_t d, h, w, c; /* dilation, the full plane, channels per image */
    bool scatter;
} wg_phase_job;

static void wg_phase_planes(void *arg, int64_t t0, int64_t t1)
{
    const wg_phase_job *j = arg;
    int64_t d = j->d, ph = j->h / d, pw = j->w / d;
    for (int64_t t = t0; t < t1; t++) {
        int64_t n = t / j->c, ch = t % j->c;
        float *full = (float *)(j->scatter ? j->dst : j->src) + t * j->h * j->w;
        for (int64_t a = 0; a < d; a++)
            for (int64_t b = 0; b < d; b++) {
                float *phase = (float *)(j->scatter ? j->src : j->dst) + ((n * d * d + a * d + b) * j->c + ch) * ph * pw;
                for (int64_t r = 0; r < ph; r++)
                    for (int64_t q = 0; q < pw; q++) {
                        float *f = full + (r * d + a) * j->w + q * d + b, *e = phase + r * pw + q;
                        if (j->scatter) *f = *e;
                        else *e = *f;
                    }
            }
    }
}

static void wg_conv(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                    const float *packed, const float *bias, float *y, float *ws);

/* The epilogue over whole channel planes of y (the phases' Conv ran without it: a residual is indexed by y's
   layout) */
typedef struct wg_ep_job {
    const mrt_epilogue *ep;
    float *y;
    int64_t m, hw;
} wg_ep_job;

static void wg_phase_epilogue(void *arg, int64_t c0, int64_t c1)
{
    const wg_ep_job *j = arg;
    for (int64_t c = c0; c < c1; c++) mrt_epilogue_apply_rows(j->ep, j->y + c * j->hw, 1, j->hw, j->hw, c % j->m, c * j->hw);
}

void mrt_conv_winograd(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                       const float *packed, const float *bias, float *y, float *ws)
{
    mrt_conv_params q;
    if (!mrt_conv_winograd_phases(p, &q)) {
        wg_conv(ctx, p, x, w, packed, bias, y, ws);
        return;
    }
    /* the workspace: the phases' Conv's, then their input and output planes (mrt_conv_winograd_floats) */
    int64_t d = p->win.dilation[0], H = p->win.in[0], W = p->win.in[1], hw = H * W;
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    int64_t inner = (int64_t)threads * mrt_winograd_slot_floats(q.m, q.c);
    if (!packed) inner += mrt_winograd_packed_floats(q.m, q.c) + q.m * q.c;
    float *xs = ws + (inner + 15) / 16 * 16, *ys = xs + p->n * p->c * hw;
    wg_phase_job split = {x, xs, d, H, W, p->c, false};
    mrt_parallel_for(ctx, p->n * p->c, 1, wg_phase_planes, &split);
    mrt_op_ctx plain = *ctx;
    plain.epilogue = NULL;
    wg_conv(&plain, &q, xs, w, packed, bias, ys, ws);
    wg_phase_job back = {ys, y, d, H, W, p->m, true};
    mrt_parallel_for(ctx, p->n * p->m, 1, wg_phase_planes, &back);
    if (ctx->epilogue && ctx->epilogue->n_ops > 0) {
        wg_ep_job ej = {ctx->epilogue, y, p->m, hw};
        mrt_parallel_for(ctx, p->n * p->m, 1, wg_phase_epilogue, &ej);
    }
}

static void wg_conv(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                    const float *packed, const float *bias, float *y, float *ws)
{
    int64_t C = p->c, M = p->m, OH = p->win.out[0], OW = p->win.out[1];
    int64_t th = (OH + 1) / 2, tw = (OW + 1) / 2;
    wg_job j = {.p = p, .x = x, .bias = bias, .y = y, .ep = ctx->epilogue, .tw = tw, .tiles = th * tw,
                .paf = mrt_sgemm_packed_a_floats(M, C), .a_rows = (M + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR * MRT_SGEMM_MR};
    j.mcap = mrt_winograd_pass_channels(M);
    j.slot_floats = mrt_winograd_slot_floats(M, C);
    j.slots = ws;
    j.threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    if (!packed) { /* the weights' transform, after the threads' slots (mrt_conv_winograd_floats) */
        float *u = ws + j.threads * j.slot_floats;
        mrt_winograd_pack_weights(w, M, C, u + 16 * j.paf, u);
        packed = u;
    }
    j.u = packed;
    j.units = (j.tiles + 15) / 16;
    j.n_sb = (j.units + 2) / 3;
    /* Sub-blocks are the tasks when there are a few per thread, as many for every thread (the shares are equal
       work); with fewer (a small image: 14x14 has 49 tiles), each thread takes a range of the output channels
       over all of them instead, transforming the whole input itself (C = 256 at 14x14: 1% of the Conv's time). */
    int64_t T = j.threads, panels = (M + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR;
    j.m_split = 1;
    /* With one channel pass (M <= 64) two sub-blocks per thread are enough: a channel range would transform the
       whole input on every thread for a small share of the products, and read half of it from the other core
       (DenseNet-121's 128 -> 32 at 28x28, 5 sub-blocks, alone on two threads: 0.160 -> 0.120 ms; one: 0.217) */
    int64_t min_sb = M <= MC ? 2 * T : 4 * T;
    if (T > 1 && p->n * j.n_sb >= min_sb) {
        if (p->n == 1) j.n_sb = (j.n_sb + T - 1) / T * T;
    } else if (T > 1) {
        j.m_split = T < panels ? T : panels;
    }
    j.m_per = (panels + j.m_split - 1) / j.m_split * MRT_SGEMM_MR;
    mrt_reg_epilogue re;
    j.ep_in_tiles = mrt_cpu_has_avx512f() && mrt_reg_epilogue_of(j.ep, 0, 0, &re);
    mrt_parallel_for(ctx, p->n * j.n_sb * j.m_split, 1, wg_task, &j);
    if (j.ep && j.ep->n_ops > 0 && !j.ep_in_tiles) mrt_parallel_for(ctx, p->n * M, 1, wg_epilogue, &j);
}
