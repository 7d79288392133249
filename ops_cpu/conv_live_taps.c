/* CPU kernel path: float32 Convs whose taps only read padding.
 * With a dilation as large as the image (DeepLabV3's ASPP: dilations 12-36 on a 14x14 map), most kernel offsets
 * read padding for every output position, or for every output of a band of rows: their rows of B are zeros there,
 * and im2col + GEMM spent most of the layer multiplying them (DeepLabV3-MobileNetV3: 18 of 34 ms). Such a Conv
 * splits its output rows (first spatial axis) into bands with the same live taps, and per band drops the other
 * taps' rows, but keeps the k blocks of the full product (sgemm.h): each block of 256 rows is a product of its own
 * over the block's live rows, the blocks added into C in order (the GEMM's `accumulate`), bias and epilogue after
 * the last. Within a block, a dropped row's term was fma(w, 0, acc) = acc, so every chain, and every result, is the
 * one the full product computes (conv_chain_ref in tests/test_ops_linear.c). Two limits keep that exact: a dropped
 * weight must be finite (inf * 0 is NaN: prepare then keeps every tap), and a zero sum's sign can differ (a chain
 * whose products underflow to -0 stays -0 without the padding terms, where adding +0 made it +0). */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu/conv_live_taps.h"
#include "ops_cpu/conv_gemm.h"
#include "ops_cpu/conv_grouped.h"
#include "ops_cpu/conv_pointwise.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

enum {
    LIVE_MAX_BANDS = 8,      /* more bands than this: one band over all rows */
    LIVE_MAX_WEIGHT_COPIES = 2 /* the bands' packed weights, at most this many times one full copy */
};

/* Whether kernel offset koff reads an input element for some output whose first spatial coordinate is in
   [o_lo, o_hi) (any position along the other axes): along every axis i, the first output at or past position 0
   (o stride_i - pad_i + k_i dilation_i >= 0), if there is one in range, reads inside [0, in_i). */
static bool tap_reads_input(const mrt_window *w, int64_t koff, int64_t o_lo, int64_t o_hi)
{
    int64_t kidx[MRT_MAX_RANK];
    mrt_conv_kernel_index(w, koff, kidx);
    for (int i = 0; i < w->nsp; i++) {
        int64_t lo = i == 0 ? o_lo : 0, hi = i == 0 ? o_hi : w->out[i];
        int64_t t = kidx[i] * w->dilation[i] - w->pad_begin[i], s = w->stride[i];
        int64_t o = t >= 0 ? 0 : (-t + s - 1) / s;
        if (o < lo) o = lo;
        if (o >= hi || o * s + t >= w->in[i]) return false;
    }
    return true;
}

/* Bands of output rows: [lo[b], lo[b + 1]) for b < count, each row of a band with the same live taps. Over
   LIVE_MAX_BANDS, or when the bands' live taps add up to more than LIVE_MAX_WEIGHT_COPIES kernels (each band packs
   its own weights), one band. */
typedef struct live_bands {
    int count;
    int64_t lo[LIVE_MAX_BANDS + 1];
} live_bands;

static int64_t band_taps(const mrt_window *w, int64_t kn, int64_t lo, int64_t hi, int64_t *taps)
{
    int64_t n = 0;
    for (int64_t koff = 0; koff < kn; koff++)
        if (tap_reads_input(w, koff, lo, hi)) {
            if (taps) taps[n] = koff;
            n++;
        }
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The bands come from where each kernel row starts and stops reading the image along the first axis (kernel row k
   reads input row o s + t for output row o, t = k d - pad: inside for o in [ceil(-t / s), floor((in - 1 - t) / s)]):
   between two consecutive such boundaries each tap is live for all rows or for none. Neighbouring bands with the
   same live taps are merged. Worked out from the kernel rows, not row by row: run asks too (every Conv on the GEMM
   path). */
static live_bands live_bands_of(const mrt_window *w, int64_t kn)
{
    enum { MAX_CUTS = 2 * LIVE_MAX_BANDS + 2 };
    int64_t rows = w->out[0], s = w->stride[0], cut[MAX_CUTS], total = 0;
    live_bands one = {1, {0, rows}}, b = {0, {0}};
    if (2 * w->kernel[0] + 2 > MAX_CUTS) return one;
    int n = 0;
    cut[n++] = 0;
    cut[n++] = rows;
    for (int64_t k = 0; k < w->kernel[0]; k++) {
        int64_t t = k * w->dilation[0] - w->pad_begin[0];
        int64_t lo = t >= 0 ? 0 : (-t + s - 1) / s, hi = w->in[0] - 1 - t < 0 ? 0 : (w->in[0] - 1 - t) / s + 1;
        cut[n++] = lo > rows ? rows : lo;
        cut[n++] = hi > rows ? rows : hi;
    }
    qsort(cut, (size_t)n, sizeof *cut, cmp_i64);
    for (int i = 0; i + 1 < n; i++) {
        if (cut[i] == cut[i + 1]) continue;
        bool same = b.count > 0; /* as the previous band: extend it */
        for (int64_t koff = 0; same && koff < kn; koff++)
            same = tap_reads_input(w, koff, b.lo[b.count - 1], b.lo[b.count - 1] + 1) ==
                   tap_reads_input(w, koff, cut[i], cut[i] + 1);
        if (same) continue;
        if (b.count == LIVE_MAX_BANDS) return one;
        b.lo[b.count++] = cut[i];
    }
    b.lo[b.count] = rows;
    for (int i = 0; i < b.count; i++) total += band_taps(w, kn, b.lo[i], b.lo[i + 1], NULL);
    return total > LIVE_MAX_WEIGHT_COPIES * kn ? one : b;
}

/* A float32 group-1 Conv that takes the GEMM path (not pointwise, not the stems' rows) whose bands drop at least
   an eighth of its multiply-adds. (A 3x3/2 Conv with padding 1 drops a third of one output row's: not worth the
   bands' extra products and weights.) Prepare and run both ask, after Winograd's check. */
bool mrt_conv_live_taps_path(const mrt_conv_params *p, mrt_dtype dt)
{
    if (!mrt_conv_uses_sgemm(p, dt) || p->group != 1 || mrt_conv_is_pointwise(&p->win) || mrt_conv_rows_floats(p, dt, 1) > 0 ||
        p->c < 1 || p->win.out[0] < 1)
        return false;
    int64_t kn = p->kernel_numel, dropped = 0; /* tap-rows dropped */
    live_bands b = live_bands_of(&p->win, kn);
    for (int i = 0; i < b.count; i++)
        dropped += (b.lo[i + 1] - b.lo[i]) * (kn - band_taps(&p->win, kn, b.lo[i], b.lo[i + 1], NULL));
    return dropped * 8 >= p->win.out[0] * kn;
}

/* prepare's product for that path, one allocation (freed by free): per band its live taps, and per k block of the
   full product the band's rows among its live ones [k_lo[b], k_lo[b + 1]) and their packed A (W's columns of those
   rows) at packed + a_off[b] */
typedef struct live_band {
    int64_t o_lo, o_hi, n_taps;
    const int64_t *taps, *k_lo, *a_off;
} live_band;

typedef struct live_taps_state {
    int n_bands;
    int64_t n_blocks, ws_floats; /* ws_floats: the GEMM workspace (mrt_conv_live_taps_floats) */
    live_band band[LIVE_MAX_BANDS];
    const float *packed;
    const mrt_taps_lanes *lanes; /* or the regions' path (taps_lanes_path) instead of the bands */
} live_taps_state;

static int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The regions' path (mrt_conv_taps_lanes, ops_cpu/conv_pointwise.c): a band of rows reads a tap for all of its
   columns or none only when the columns agree too. DeepLabV3's dilation-12 3x3 on 14x14 reads 6, 3 and 6 taps in
   its bands of 2, 10 and 2 rows (756 tap-positions), but only 4, 2 or 1 where both coordinates are counted (the 3 x
   3 regions: 324). Per axis, segments of output coordinates reading the same kernel indices along it; a region is a
   row segment by a column segment, and its taps those whose both indices it reads. */
enum { TAPS_MAX_SEGS = 8, TAPS_MAX_K = 16 }; /* segments per axis, kernel size per axis: at most */

typedef struct taps_segs {
    int n;
    int64_t lo[TAPS_MAX_SEGS + 1];
    uint32_t live[TAPS_MAX_SEGS]; /* bit k: kernel index k reads the image along this axis */
} taps_segs;

static bool taps_axis_segs(const mrt_window *w, int i, taps_segs *sg)
{
    int64_t out = w->out[i], s = w->stride[i], cut[2 * TAPS_MAX_K + 2], klo[TAPS_MAX_K], khi[TAPS_MAX_K];
    if (w->kernel[i] > TAPS_MAX_K) return false;
    int n = 0;
    cut[n++] = 0;
    cut[n++] = out;
    for (int64_t k = 0; k < w->kernel[i]; k++) {
        int64_t t = k * w->dilation[i] - w->pad_begin[i];
        int64_t lo = t >= 0 ? 0 : (-t + s - 1) / s, hi = w->in[i] - 1 - t < 0 ? 0 : (w->in[i] - 1 - t) / s + 1;
        klo[k] = lo > out ? out : lo;
        khi[k] = hi > out ? out : hi;
        cut[n++] = klo[k];
        cut[n++] = khi[k];
    }
    qsort(cut, (size_t)n, sizeof *cut, cmp_i64);
    sg->n = 0;
    for (int c = 0; c + 1 < n; c++) {
        if (cut[c] == cut[c + 1]) continue;
        uint32_t live = 0;
        for (int64_t k = 0; k < w->kernel[i]; k++) live |= (uint32_t)(klo[k] <= cut[c] && cut[c] < khi[k]) << k;
        if (sg->n > 0 && sg->live[sg->n - 1] == live) continue;
        if (sg->n == TAPS_MAX_SEGS) return false;
        sg->live[sg->n] = live;
        sg->lo[sg->n++] = cut[c];
    }
    sg->lo[sg->n] = out;
    return true;
}

static int popcount32(uint32_t v) { return __builtin_popcount(v); }

/* A 2-D Conv of the bands' path with at least 16 output channels, a plane of at most 1024 outputs, whose regions
   drop at least a quarter of the bands' multiply-adds (not DeepLabV3's dilations 24 and 36, one tap everywhere:
   0.33 ms either way, as ONNX Runtime). Decided by the geometry alone (prepare, infer and run ask). */
static bool taps_lanes_path(const mrt_conv_params *p, mrt_dtype dt, taps_segs *rows, taps_segs *cols)
{
    const mrt_window *w = &p->win;
    if (w->nsp != 2 || p->m < 16 || !mrt_cpu_has_avx512f() || !mrt_conv_live_taps_path(p, dt)) return false;
    int64_t hw_out = w->out[0] * w->out[1], kn = p->kernel_numel;
    if (hw_out > 1024 || p->c * kn >= INT32_MAX || p->c * w->in[0] * w->in[1] >= INT32_MAX) return false;
    if (!taps_axis_segs(w, 0, rows) || !taps_axis_segs(w, 1, cols)) return false;
    int64_t regions = 0, bands = 0;
    for (int a = 0; a < rows->n; a++)
        for (int b = 0; b < cols->n; b++)
            regions += (rows->lo[a + 1] - rows->lo[a]) * (cols->lo[b + 1] - cols->lo[b]) * popcount32(rows->live[a]) *
                       popcount32(cols->live[b]);
    live_bands lb = live_bands_of(w, kn);
    for (int i = 0; i < lb.count; i++) bands += (lb.lo[i + 1] - lb.lo[i]) * w->out[1] * band_taps(w, kn, lb.lo[i], lb.lo[i + 1], NULL);
    return regions * 4 <= bands * 3;
}

/* prepare's regions: per region its positions, and its items (c, live tap) in k order with their block bounds; W
   packed with output channels as lanes. One allocation, freed with the state. */
static mrt_status taps_lanes_prepare(mrt_op_ctx *ctx, const mrt_conv_params *p, const float *w, const taps_segs *rows,
                                     const taps_segs *cols, void **state)
{
    const mrt_window *win = &p->win;
    int64_t kn = p->kernel_numel, K = p->c * kn, n_blocks = ceil_div64(K, MRT_SGEMM_K_BLOCK), KW = win->kernel[1];
    int64_t hw_in = win->in[0] * win->in[1], hw_out = win->out[0] * win->out[1], ints = 0;
    for (int a = 0; a < rows->n; a++)
        for (int b = 0; b < cols->n; b++) {
            int64_t np = (rows->lo[a + 1] - rows->lo[a]) * (cols->lo[b + 1] - cols->lo[b]);
            ints += 2 * np + n_blocks + 1 + 2 * p->c * popcount32(rows->live[a]) * popcount32(cols->live[b]);
        }
    int64_t head = (int64_t)(sizeof(live_taps_state) + sizeof(mrt_taps_lanes)) + ints * (int64_t)sizeof(int32_t);
    head = (head + 63) / 64 * 64;
    int64_t packed = (p->m + 15) / 16 * 16 * K;
    float *buf;
    MRT_TRY(mrt_sgemm_alloc_packed(ctx, head / (int64_t)sizeof(float) + packed, &buf));
    live_taps_state *ls = (live_taps_state *)buf;
    memset(ls, 0, sizeof *ls);
    mrt_taps_lanes *tl = (mrt_taps_lanes *)(ls + 1);
    memset(tl, 0, sizeof *tl);
    ls->lanes = tl;
    ls->n_blocks = n_blocks;
    ls->ws_floats = mrt_conv_live_taps_floats(p, MRT_DTYPE_FLOAT, ctx->n_threads);
    tl->n_blocks = n_blocks;
    tl->K = K;
    tl->hw_in = hw_in;
    tl->hw_out = hw_out;
    int32_t *at = (int32_t *)(tl + 1);
    for (int a = 0; a < rows->n; a++)
        for (int b = 0; b < cols->n; b++) {
            mrt_taps_region *rg = &tl->region[tl->n_regions++];
            int32_t *pos = at, *base = pos, *item_lo, *kidx, *xoff;
            int64_t np = 0, taps[TAPS_MAX_K * TAPS_MAX_K], toff[TAPS_MAX_K * TAPS_MAX_K], nt = 0;
            for (int64_t oh = rows->lo[a]; oh < rows->lo[a + 1]; oh++)
                for (int64_t ow = cols->lo[b]; ow < cols->lo[b + 1]; ow++) pos[np++] = (int32_t)(oh * win->out[1] + ow);
            base = pos + np;
            for (int64_t q = 0; q < np; q++)
                base[q] = (int32_t)(pos[q] / win->out[1] * win->stride[0] * win->in[1] + pos[q] % win->out[1] * win->stride[1]);
            for (int64_t kh = 0; kh < win->kernel[0]; kh++)
                for (int64_t kw = 0; kw < KW; kw++)
                    if ((rows->live[a] >> kh & 1) && (cols->live[b] >> kw & 1)) {
                        taps[nt] = kh * KW + kw;
                        toff[nt++] = (kh * win->dilation[0] - win->pad_begin[0]) * win->in[1] + kw * win->dilation[1] -
                                     win->pad_begin[1];
                    }
            item_lo = base + np;
            kidx = item_lo + n_blocks + 1;
            xoff = kidx + p->c * nt;
            for (int64_t c = 0, i = 0; c < p->c; c++)
                for (int64_t t = 0; t < nt; t++, i++) {
                    kidx[i] = (int32_t)(c * kn + taps[t]);
                    xoff[i] = (int32_t)(c * hw_in + toff[t]);
                }
            for (int64_t blk = 0, i = 0; blk <= n_blocks; blk++) { /* items below row 256 blk */
                while (i < p->c * nt && kidx[i] < blk * MRT_SGEMM_K_BLOCK) i++;
                item_lo[blk] = (int32_t)i;
            }
            *rg = (mrt_taps_region){np, pos, base, item_lo, kidx, xoff};
            at = xoff + p->c * nt;
        }
    float *wt = buf + head / (int64_t)sizeof(float);
    mrt_pack_lanes16(w, p->m, K, wt);
    tl->wt = wt;
    *state = buf;
    return MRT_STATUS_OK;
}

/* k_lo for the taps (n_blocks + 1 entries): block b of the full product (rows [256 b, 256 (b + 1)) of
   c * kn + offset) holds the live rows [k_lo[b], k_lo[b + 1]) of c * n_taps + tap */
static void live_block_bounds(const mrt_conv_params *p, const int64_t *taps, int64_t n_taps, int64_t *k_lo)
{
    int64_t kn = p->kernel_numel, K = p->c * kn, n_blocks = ceil_div64(K, MRT_SGEMM_K_BLOCK);
    for (int64_t b = 0; b <= n_blocks; b++) {
        int64_t k = b * MRT_SGEMM_K_BLOCK < K ? b * MRT_SGEMM_K_BLOCK : K, c = k / kn, t = 0; /* live rows below k */
        while (t < n_taps && taps[t] < k % kn) t++;
        k_lo[b] = c * n_taps + t;
    }
}

/* The workspace of the bands' block GEMMs, whether the dropped taps are dropped or (a non-finite weight) kept: one
   band of all rows and taps. No allocation: infer asks too. */
int64_t mrt_conv_live_taps_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads)
{
    if (!mrt_conv_live_taps_path(p, dt)) return 0;
    const mrt_window *w = &p->win;
    int64_t kn = p->kernel_numel, K = p->c * kn, rest = mrt_dims_numel(w->nsp, w->out) / w->out[0], most = 0;
    int threads = n_threads > 1 ? n_threads : 1;
    live_bands b = live_bands_of(w, kn);
    for (int i = 0; i <= b.count; i++) { /* i == b.count: the fallback */
        int64_t lo = i < b.count ? b.lo[i] : 0, hi = i < b.count ? b.lo[i + 1] : w->out[0];
        for (int64_t k0 = 0; k0 < K; k0 += MRT_SGEMM_K_BLOCK) {
            int64_t k1 = k0 + MRT_SGEMM_K_BLOCK < K ? k0 + MRT_SGEMM_K_BLOCK : K, live = 0;
            for (int64_t k = k0; k < k1 && i < b.count; k++) live += tap_reads_input(w, k % kn, lo, hi);
            int64_t f = mrt_sgemm_workspace_floats(p->m, (hi - lo) * rest, i < b.count ? live : k1 - k0, true, false, threads);
            if (f > most) most = f;
        }
    }
    taps_segs rows, cols;
    if (taps_lanes_path(p, dt, &rows, &cols)) {
        int64_t f = mrt_conv_taps_lanes_floats(p->m, w->out[0] * w->out[1], threads);
        if (f > most) most = f;
    }
    return most;
}

/* Per band, W's columns of its live rows, block by block. A non-finite weight on a tap some band drops keeps every
   tap in one band (the full product's NaN, above). */
mrt_status mrt_conv_live_taps_prepare(mrt_op_ctx *ctx, const mrt_conv_params *p, const float *w, void **state)
{
    const mrt_window *win = &p->win;
    int64_t kn = p->kernel_numel, K = p->c * kn, n_blocks = ceil_div64(K, MRT_SGEMM_K_BLOCK);
    taps_segs seg_rows, seg_cols;
    if (taps_lanes_path(p, MRT_DTYPE_FLOAT, &seg_rows, &seg_cols)) { /* the regions, unless a weight is not finite */
        bool all_finite = true;
        for (int64_t i = 0; i < p->m * K && all_finite; i++) all_finite = isfinite(w[i]);
        if (all_finite) return taps_lanes_prepare(ctx, p, w, &seg_rows, &seg_cols, state);
    }
    live_bands b = live_bands_of(win, kn);
    int64_t n_taps[LIVE_MAX_BANDS], *taps = malloc((size_t)(b.count * kn) * sizeof(int64_t));
    if (!taps) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "no memory for the live taps");
    bool finite = true;
    for (int i = 0; i < b.count; i++) {
        n_taps[i] = band_taps(win, kn, b.lo[i], b.lo[i + 1], taps + i * kn);
        for (int64_t koff = 0, t = 0; koff < kn && finite; koff++) {
            if (t < n_taps[i] && taps[i * kn + t] == koff) {
                t++;
                continue;
            }
            for (int64_t r = 0; r < p->m * p->c && finite; r++) finite = isfinite(w[r * kn + koff]);
        }
    }
    if (!finite) { /* one band, every tap (in order) */
        b = (live_bands){1, {0, win->out[0]}};
        n_taps[0] = kn;
        for (int64_t t = 0; t < kn; t++) taps[t] = t;
    }
    int64_t ints = 0, packed_floats = 0, *k_lo = malloc((size_t)(b.count * (n_blocks + 1)) * sizeof(int64_t));
    float *cols = k_lo ? malloc((size_t)(p->m * p->c * kn > 0 ? p->m * p->c * kn : 1) * sizeof(float)) : NULL;
    if (!cols) {
        free(taps);
        free(k_lo);
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "no memory for the live taps' weights");
    }
    for (int i = 0; i < b.count; i++) {
        live_block_bounds(p, taps + i * kn, n_taps[i], k_lo + i * (n_blocks + 1));
        ints += n_taps[i] + 2 * n_blocks + 1;
        for (int64_t k = 0; k < n_blocks; k++)
            packed_floats += mrt_sgemm_packed_a_floats(p->m, k_lo[i * (n_blocks + 1) + k + 1] - k_lo[i * (n_blocks + 1) + k]);
    }
    int64_t header = ((int64_t)sizeof(live_taps_state) + ints * (int64_t)sizeof(int64_t) + 63) / 64 * 64;
    float *buf;
    mrt_status st = mrt_sgemm_alloc_packed(ctx, header / (int64_t)sizeof(float) + packed_floats, &buf);
    if (!st) {
        live_taps_state *ls = (live_taps_state *)buf;
        ls->n_bands = b.count;
        ls->lanes = NULL;
        ls->n_blocks = n_blocks;
        ls->ws_floats = mrt_conv_live_taps_floats(p, MRT_DTYPE_FLOAT, ctx->n_threads);
        float *packed = buf + header / (int64_t)sizeof(float);
        ls->packed = packed;
        int64_t *at = (int64_t *)(ls + 1), off = 0;
        for (int i = 0; i < b.count; i++) {
            live_band *lb = &ls->band[i];
            int64_t nt = n_taps[i], kl = p->c * nt, *a_off = at + nt + n_blocks + 1;
            const int64_t *band_k_lo = k_lo + i * (n_blocks + 1);
            *lb = (live_band){b.lo[i], b.lo[i + 1], nt, at, at + nt, a_off};
            memcpy(at, taps + i * kn, (size_t)nt * sizeof(int64_t));
            memcpy(at + nt, band_k_lo, (size_t)(n_blocks + 1) * sizeof(int64_t));
            at += nt + 2 * n_blocks + 1;
            for (int64_t m = 0; m < p->m; m++) /* W's live columns: [m, c * n_taps + tap] */
                for (int64_t c = 0; c < p->c; c++)
                    for (int64_t t = 0; t < nt; t++) cols[m * kl + c * nt + t] = w[m * K + c * kn + taps[i * kn + t]];
            for (int64_t k = 0; k < n_blocks; k++) {
                int64_t kb = band_k_lo[k + 1] - band_k_lo[k];
                a_off[k] = off;
                mrt_sgemm_pack_a(cols + band_k_lo[k], kl, 1, p->m, kb, packed + off);
                off += mrt_sgemm_packed_a_floats(p->m, kb);
            }
        }
        *state = buf;
    }
    free(taps);
    free(k_lo);
    free(cols);
    return st;
}


/* Each image, band by band: the full product's k blocks in order, each a GEMM over the band's live rows (the
   section above) into the band's output columns */
mrt_status mrt_conv_live_taps(mrt_op_ctx *ctx, const mrt_conv_params *p)
{
    const live_taps_state *ls = ctx->kernel_state;
    const mrt_window *win = &p->win;
    const mrt_tensor *x = mrt_input(ctx, 0), *b = mrt_input(ctx, 2);
    int64_t in_numel = mrt_dims_numel(win->nsp, win->in), out_numel = mrt_dims_numel(win->nsp, win->out), rest = out_numel / win->out[0];
    float *ws = mrt_workspace(ctx, (size_t)ls->ws_floats * sizeof(float));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    if (ls->lanes) {
        if (!mrt_conv_taps_lanes(ctx, p, ls->lanes, x->data, b ? b->data : NULL, mrt_output(ctx, 0)->data,
                                 ctx->epilogue, ws))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "internal error: the live taps' regions need AVX-512");
        return MRT_STATUS_OK;
    }
    for (int64_t n = 0; n < p->n; n++)
        for (int i = 0; i < ls->n_bands; i++) {
            const live_band *lb = &ls->band[i];
            int64_t j0 = lb->o_lo * rest, last = ls->n_blocks - 1;
            while (last > 0 && lb->k_lo[last + 1] == lb->k_lo[last]) last--;
            mrt_conv_src src = {(const float *)x->data + n * p->c * in_numel, win, lb->n_taps, in_numel, lb->taps, 0, j0};
            mrt_sgemm_b bs = {.pack = mrt_conv_pack_b, .pack_src = &src};
            bool first = true;
            for (int64_t blk = 0; blk <= last; blk++) {
                int64_t kb = lb->k_lo[blk + 1] - lb->k_lo[blk];
                if (kb == 0 && blk < last) continue; /* its sum is +0: C keeps its value */
                src.k_base = lb->k_lo[blk];
                mrt_sgemm_out out = {.c = (float *)mrt_output(ctx, 0)->data + n * p->m * out_numel + j0, .ldc = out_numel,
                                     .accumulate = !first, .bias = blk == last && b ? b->data : NULL,
                                     .ep = blk == last ? ctx->epilogue : NULL, .ep_at0 = n * p->m * out_numel + j0};
                mrt_sgemm_run(ctx, p->m, (lb->o_hi - lb->o_lo) * rest, kb, ls->packed + lb->a_off[blk], NULL, 0, 0, &bs,
                              &out, ws);
                first = false;
            }
        }
    return MRT_STATUS_OK;
}
