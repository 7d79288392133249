/* CPU kernels: MaxPool 1-22 (float/double/int8/uint8, float16/bfloat16 via float; Indices with storage_order),
 * AveragePool 1-22, LpPool 1-22, GlobalAveragePool/GlobalMaxPool 1/22, GlobalLpPool 1/2/22, MaxRoiPool 1/22,
 * MaxUnpool 9/11/22. N-D windows with pads, strides, dilations and ceil_mode. The float32 2-D MaxPool and
 * AveragePool and the float32 global pools have vectorised fast paths threaded over the (image, channel) planes;
 * the rest is single-threaded. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/epilogue.h"
#include "engine/opdef/conv.h"
#include "engine/registry.h"
#include "ops_cpu/linear.h"
#include "ops_cpu/simd.h"

#ifdef MRT_HAVE_AVX512_INTRINSICS
#define POOL_HAVE_AVX512 1
#endif

/* float16/bfloat16 run in float: float copies of X, of the rois (MaxRoiPool) and of Y, parts of the workspace */
static void float_copy_counts(const mrt_tensor *x, const mrt_tensor *rois, const mrt_tensor *y, int64_t counts[3])
{
    counts[0] = mrt_tensor_numel(x);
    counts[1] = rois ? mrt_tensor_numel(rois) : 0;
    counts[2] = mrt_tensor_numel(y);
}

/* X (and the rois) widened into the workspace, f[2] for Y */
static bool float_copies(mrt_op_ctx *ctx, const mrt_tensor *x, const mrt_tensor *rois, const mrt_tensor *y, float *f[3])
{
    int64_t counts[3];
    float_copy_counts(x, rois, y, counts);
    if (!mrt_workspace_parts(ctx, 3, counts, sizeof(float), (void **)f)) return false;
    mrt_lin_widen_into(x, f[0]);
    if (rois) mrt_lin_widen_into(rois, f[1]);
    return true;
}

static int64_t prod(int n, const int64_t *v)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

static bool odometer_next(int n, int64_t *idx, const int64_t *dims)
{
    for (int i = n - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) return true;
        idx[i] = 0;
    }
    return false;
}

/* The window of output position oidx: per dim its first in-position, the kernel taps [klo, khi) that land
   inside the input, and how many taps lie inside the padded input (for count_include_pad). */
typedef struct win_taps {
    int64_t start[MRT_MAX_RANK], klo[MRT_MAX_RANK], khi[MRT_MAX_RANK];
    int64_t n_valid, n_padded;
} win_taps;

/* Taps of dim i for output coordinate o: its first in-position, the kernel taps [lo, hi) that land inside the input,
   and how many taps lie inside the padded input */
static void dim_taps(const mrt_window *w, int i, int64_t o, int64_t *start, int64_t *lo, int64_t *hi, int64_t *padded)
{
    int64_t s = o * w->stride[i] - w->pad_begin[i], d = w->dilation[i], k = w->kernel[i], in = w->in[i];
    int64_t l = s >= 0 ? 0 : (-s + d - 1) / d, h = in - s <= 0 ? 0 : (in - s + d - 1) / d;
    int64_t hp = in + w->pad_end[i] - s <= 0 ? 0 : (in + w->pad_end[i] - s + d - 1) / d;
    if (h > k) h = k;
    if (hp > k) hp = k;
    if (l > h) l = h;
    *start = s, *lo = l, *hi = h, *padded = hp;
}

static void taps_of(const mrt_window *w, const int64_t *oidx, win_taps *t)
{
    t->n_valid = 1;
    t->n_padded = 1;
    for (int i = 0; i < w->nsp; i++) {
        int64_t hp;
        dim_taps(w, i, oidx[i], &t->start[i], &t->klo[i], &t->khi[i], &hp);
        t->n_valid *= t->khi[i] - t->klo[i];
        t->n_padded *= hp;
    }
}

/* Visit every valid tap of a window: BODY sees `xp` (the plane) and `off` (row-major spatial offset).
   The outer dims advance with an odometer, the last dim is a plain loop. */
#define FOR_EACH_TAP(w, t, instride, BODY)                                                                         \
    do {                                                                                                           \
        int last_ = (w)->nsp - 1;                                                                                  \
        int64_t kk_[MRT_MAX_RANK];                                                                                 \
        for (int i_ = 0; i_ < last_; i_++) kk_[i_] = (t)->klo[i_];                                                 \
        int64_t dl_ = (w)->dilation[last_];                                                                        \
        for (;;) {                                                                                                 \
            int64_t row_ = 0;                                                                                      \
            for (int i_ = 0; i_ < last_; i_++)                                                                     \
                row_ += ((t)->start[i_] + kk_[i_] * (w)->dilation[i_]) * (instride)[i_];                           \
            row_ += (t)->start[last_];                                                                             \
            for (int64_t k_ = (t)->klo[last_]; k_ < (t)->khi[last_]; k_++) {                                       \
                int64_t off = row_ + k_ * dl_;                                                                     \
                BODY;                                                                                              \
            }                                                                                                      \
            int i_ = last_ - 1;                                                                                    \
            for (; i_ >= 0; i_--) {                                                                                \
                if (++kk_[i_] < (t)->khi[i_]) break;                                                               \
                kk_[i_] = (t)->klo[i_];                                                                            \
            }                                                                                                      \
            if (i_ < 0) break;                                                                                     \
        }                                                                                                          \
    } while (0)

/* ------------------------------------------------------------------ MaxPool */

/* Indices are flat over the whole input: plane * spatial + the spatial offset, row-major or (storage_order 1)
   column-major. NaN wins (as in numpy/torch); ties keep the first tap. A window without valid taps (only
   when pads >= kernel) gives 0. */
#define MAXPOOL(T, SUF)                                                                                            \
    static void maxpool_##SUF(const mrt_window *w, int64_t planes, const T *x, T *y, int64_t *ind, bool col_major) \
    {                                                                                                              \
        int nsp = w->nsp;                                                                                          \
        int64_t in_numel = prod(nsp, w->in), out_numel = prod(nsp, w->out);                                        \
        int64_t instride[MRT_MAX_RANK], cstride[MRT_MAX_RANK];                                                     \
        mrt_shape_strides(nsp, w->in, instride);                                                                   \
        cstride[0] = 1;                                                                                            \
        for (int i = 1; i < nsp; i++) cstride[i] = cstride[i - 1] * w->in[i - 1];                                  \
        for (int64_t pl = 0; pl < planes; pl++) {                                                                  \
            const T *xp = x + pl * in_numel;                                                                       \
            int64_t oidx[MRT_MAX_RANK] = {0};                                                                      \
            for (int64_t o = 0; o < out_numel; o++, odometer_next(nsp, oidx, w->out)) {                            \
                win_taps t;                                                                                        \
                taps_of(w, oidx, &t);                                                                              \
                T best = 0;                                                                                        \
                int64_t arg = -1;                                                                                  \
                if (t.n_valid > 0)                                                                                 \
                    FOR_EACH_TAP(w, &t, instride, {                                                                \
                        T v = xp[off];                                                                             \
                        if (arg < 0 || (best == best && (v > best || v != v))) {                                   \
                            best = v;                                                                              \
                            arg = off;                                                                             \
                        }                                                                                          \
                    });                                                                                            \
                y[pl * out_numel + o] = best;                                                                      \
                if (!ind) continue;                                                                                \
                if (arg < 0) {                                                                                     \
                    ind[pl * out_numel + o] = pl * in_numel;                                                       \
                    continue;                                                                                      \
                }                                                                                                  \
                if (col_major) {                                                                                   \
                    int64_t cm = 0;                                                                                \
                    for (int i = 0; i < nsp; i++) cm += (arg / instride[i]) % w->in[i] * cstride[i];               \
                    arg = cm;                                                                                      \
                }                                                                                                  \
                ind[pl * out_numel + o] = pl * in_numel + arg;                                                     \
            }                                                                                                      \
        }                                                                                                          \
    }
MAXPOOL(float, f32)
MAXPOOL(double, f64)
MAXPOOL(int8_t, i8)
MAXPOOL(uint8_t, u8)

/* The common case, 2-D float without Indices, dilation 1 and pads smaller than the kernel (so every window has a
   valid tap): per output row, the max over the window's input rows is taken column by column into a row buffer
   (-inf in the padding columns, which then never win), then the max over each window's columns; both loops are
   contiguous or stride-s and vectorise. NaN wins (any NaN in the window gives NaN, as maxpool_f32; returned as
   the canonical NAN). Among equal values the result is the first in (row pass, column pass) order, which can
   differ from maxpool_f32 only in the sign of a zero. Rows wider than the buffer take maxpool_f32. */
enum { MP_ROW = 4096 };

typedef struct mp2d_job {
    const mrt_window *w;
    const float *x;
    float *y;
    int64_t wp; /* padded columns the windows read */
    int64_t planes, bands; /* mp_rows_range's tasks: band t / planes of plane t % planes (bands of output rows) */
} mp2d_job;

/* yr[o] = the max (NaN winning) of row[o * s + kw] over kw < KW. Inlined, so a constant s makes a loop of its own. */
static inline __attribute__((always_inline)) void window_cols_max(float *yr, const float *row, int64_t OW, int64_t KW,
                                                                 int64_t s)
{
    for (int64_t o = 0; o < OW; o++) yr[o] = row[o * s];
    for (int64_t kw = 1; kw < KW; kw++)
        for (int64_t o = 0; o < OW; o++) {
            float v = row[o * s + kw];
            yr[o] = (v > yr[o] || v != v) ? v : yr[o];
        }
}

MRT_VECTORIZE_CLONES
static void mp2d_plane(const mp2d_job *j, const float *xp, float *yp, float *row)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1], KH = w->kernel[0], KW = w->kernel[1];
    int64_t sh = w->stride[0], sw = w->stride[1], pw = w->pad_begin[1], wp = j->wp;
    int64_t cend = pw + W < wp ? pw + W : wp; /* padded columns [pw, cend) are input columns */
    for (int64_t c = 0; c < pw; c++) row[c] = -INFINITY;
    for (int64_t c = cend; c < wp; c++) row[c] = -INFINITY;
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t h0 = oh * sh - w->pad_begin[0], hlo = h0 < 0 ? 0 : h0, hhi = h0 + KH < H ? h0 + KH : H;
        float *r = row + pw;
        int64_t n = cend - pw;
        const float *x0 = xp + hlo * W;
        for (int64_t c = 0; c < n; c++) r[c] = x0[c];
        for (int64_t ih = hlo + 1; ih < hhi; ih++) {
            const float *xr = xp + ih * W;
            for (int64_t c = 0; c < n; c++) r[c] = (xr[c] > r[c] || xr[c] != xr[c]) ? xr[c] : r[c];
        }
        float *yr = yp + oh * OW;
        /* a constant stride for the usual 1 and 2, so each copy vectorises */
        if (sw == 1) window_cols_max(yr, row, OW, KW, 1);
        else if (sw == 2) window_cols_max(yr, row, OW, KW, 2);
        else window_cols_max(yr, row, OW, KW, sw);
        for (int64_t o = 0; o < OW; o++) yr[o] = yr[o] != yr[o] ? NAN : yr[o];
    }
}

#ifdef POOL_HAVE_AVX512
enum { MP_DIRECT_MAXKW = 8, MP_DIRECT_MAXV = 8 }; /* kernel widths and 16-column vectors per call */

/* mp2d_plane for column strides 1 and 2 (and kernels at most MP_DIRECT_MAXKW wide), straight from the input rows:
   each output vector takes its taps in the order mp2d_plane's two passes give them (kw outer, then the rows), the
   later one winning only when greater (max_ps(v, y) is v > y ? v : y), so ties keep the first, as there; padding
   lanes load -inf, as its row buffer holds; NaN is tracked on the side and returned as NAN. The same bits, without
   the row buffer's copies and the stride-2 gathers GCC made of the column pass (ResNet-18's 3x3/2 max pool: 0.57 ms,
   against ONNX Runtime's 0.10). */
__attribute__((target("avx512f"))) static void mp2d_plane_avx512(const mp2d_job *j, const float *xp, float *yp)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1], KH = w->kernel[0], KW = w->kernel[1];
    int64_t sh = w->stride[0], S = w->stride[1], pw = w->pad_begin[1];
    const __m512 ninf = _mm512_set1_ps(-INFINITY), qnan = _mm512_set1_ps(NAN);
    for (int64_t ow0 = 0; ow0 < OW; ow0 += 16 * MP_DIRECT_MAXV) {
        int nv = (int)((OW - ow0 + 15) / 16 < MP_DIRECT_MAXV ? (OW - ow0 + 15) / 16 : MP_DIRECT_MAXV);
        /* lanes of the two 16-float loads at input column (ow0 + 16 v) S - pw + kw (+ 16) inside [0, W) */
        __mmask16 mk[MP_DIRECT_MAXKW][MP_DIRECT_MAXV][2];
        for (int64_t kw = 0; kw < KW; kw++)
            for (int v = 0; v < nv; v++)
                for (int h = 0; h < 2; h++) mk[kw][v][h] = mrt_mask16_inside((ow0 + 16 * v) * S - pw + kw + 16 * h, W);
        int64_t left = OW - ow0 - 16 * (nv - 1);
        __mmask16 last = mrt_mask16_first(left);
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t h0 = oh * sh - w->pad_begin[0], hlo = h0 < 0 ? 0 : h0, hhi = h0 + KH < H ? h0 + KH : H;
            for (int v = 0; v < nv; v++) {
                __m512 y = ninf;
                __mmask16 nan = 0;
                for (int64_t kw = 0; kw < KW; kw++)
                    for (int64_t ih = hlo; ih < hhi; ih++) {
                        const float *p = xp + ih * W + (ow0 + 16 * v) * S - pw + kw;
                        __m512 x = _mm512_mask_loadu_ps(ninf, mk[kw][v][0], p);
                        if (S == 2)
                            x = mrt_even16(x, _mm512_mask_loadu_ps(ninf, mk[kw][v][1], p + 16));
                        nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
                        y = kw == 0 && ih == hlo ? x : _mm512_max_ps(x, y);
                    }
                y = _mm512_mask_mov_ps(y, nan, qnan);
                _mm512_mask_storeu_ps(yp + oh * OW + ow0 + 16 * v, v == nv - 1 ? last : (__mmask16)0xFFFF, y);
            }
        }
    }
}

static bool mp2d_avx512(const mrt_window *w)
{
    return mrt_cpu_has_avx512f() && (w->stride[1] == 1 || w->stride[1] == 2) && w->kernel[1] <= MP_DIRECT_MAXKW;
}

/* Small planes at stride 1 whose output is the input's size (3x3 with pads of 1: GoogLeNet's and Inception's branch
   pools at 28x28 down to 7x7): a row of 7 or 14 fills a vector badly, so the plane is taken as one flat array. The
   row pass over each position's window rows (offset (kh - ph) W: inside the plane or -inf, as the rows mp2d_plane
   skips), then the column pass over the row maxima, a tap at offset kw - pw being -inf where it leaves the row (as
   the row buffer's padding): mp2d_plane's two passes, in its order, each later tap winning only when greater, NaN
   winning (as mp2d_plane, returned as NAN). 1 thread, GoogLeNet's 3x3 pools: [1, 832, 7, 7] 0.081 -> 0.029 ms, [1, 512,
   14, 14] 0.100 -> 0.057, [1, 256, 28, 28] 0.163 -> 0.104. */
enum { MP_FLAT_MAX = 1024, MP_FLAT_MAXK = 8 }; /* positions per plane, kernel sides */

static bool mp_flat_ok(const mrt_window *w)
{
    return mrt_cpu_has_avx512f() && w->stride[0] == 1 && w->stride[1] == 1 && w->out[0] == w->in[0] &&
           w->out[1] == w->in[1] && w->in[0] * w->in[1] <= MP_FLAT_MAX && w->kernel[0] <= MP_FLAT_MAXK &&
           w->kernel[1] <= MP_FLAT_MAXK;
}

/* y with x taken when x > y or x is NaN (a NaN y stays) */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mp_take(__m512 x, __m512 y)
{
    __mmask16 m = _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(y, m, x);
}

/* KH and KW constants where inlined with them (3x3: the tap loops unroll) */
__attribute__((target("avx512f"), always_inline)) static inline void mp_flat_planes(const mp2d_job *j, int64_t begin,
                                                                                   int64_t end, int64_t KH, int64_t KW)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], HW = H * W, ph = w->pad_begin[0], pw = w->pad_begin[1], nv = (HW + 15) / 16;
    const __m512 ninf = _mm512_set1_ps(-INFINITY), qnan = _mm512_set1_ps(NAN);
    /* the taps' masks, the same for every plane: lane l of vector v is position 16 v + l; row tap kh is inside the
       plane, column tap kw inside the position's row */
    __mmask16 rmk[MP_FLAT_MAX / 16][MP_FLAT_MAXK], cmk[MP_FLAT_MAX / 16][MP_FLAT_MAXK];
    for (int64_t v = 0; v < nv; v++) {
        for (int64_t kh = 0; kh < KH; kh++) rmk[v][kh] = mrt_mask16_inside(16 * v + (kh - ph) * W, HW);
        for (int64_t kw = 0; kw < KW; kw++) {
            __mmask16 m = 0;
            for (int l = 0; l < 16; l++) {
                int64_t i = 16 * v + l, c = i % W + kw - pw;
                if (i < HW && c >= 0 && c < W) m |= (__mmask16)(1u << l);
            }
            cmk[v][kw] = m;
        }
    }
    _Alignas(64) float rm[MP_FLAT_MAX + 32]; /* the row pass, 16 floats of slack each side */
    float *r = rm + 16;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * HW;
        float *y = j->y + pl * HW;
        for (int64_t v = 0; v < nv; v++) {
            __m512 m = _mm512_mask_loadu_ps(ninf, rmk[v][0], x + 16 * v - ph * W);
            for (int64_t kh = 1; kh < KH; kh++)
                m = mp_take(_mm512_mask_loadu_ps(ninf, rmk[v][kh], x + 16 * v + (kh - ph) * W), m);
            _mm512_store_ps(r + 16 * v, m);
        }
        for (int64_t v = 0; v < nv; v++) {
            __m512 m = _mm512_mask_loadu_ps(ninf, cmk[v][0], r + 16 * v - pw);
            for (int64_t kw = 1; kw < KW; kw++) m = mp_take(_mm512_mask_loadu_ps(ninf, cmk[v][kw], r + 16 * v + kw - pw), m);
            m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q), qnan);
            _mm512_mask_storeu_ps(y + 16 * v, mrt_mask16_first(HW - 16 * v), m);
        }
    }
}

__attribute__((target("avx512f"))) static void mp_flat_range(const mp2d_job *j, int64_t begin, int64_t end)
{
    if (j->w->kernel[0] == 3 && j->w->kernel[1] == 3) mp_flat_planes(j, begin, end, 3, 3);
    else mp_flat_planes(j, begin, end, j->w->kernel[0], j->w->kernel[1]);
}
#endif

#ifdef POOL_HAVE_AVX512
/* mp2d_plane's two passes on 16 lanes, for column strides 1 and 2: per output row the row pass over the window's rows
   into a buffer of padded columns (-inf outside the input), then the column pass over it, a tap kw of 16 outputs
   being 16 consecutive buffer columns (stride 1) or the even or odd lanes of 32 (stride 2). Each tap as many
   loads as the row pass has rows, instead of a load (and a permute, at stride 2) per tap and row: GoogLeNet's and
   SqueezeNet's 3x3/2 pools. KH, KW and S constants where inlined with them. */
__attribute__((target("avx512f"), always_inline)) static inline void mp_rows_plane(const mp2d_job *j, const float *xp,
                                                                                  float *yp, float *row, int64_t oh0,
                                                                                  int64_t oh1, int64_t KH, int64_t KW,
                                                                                  int64_t S)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], OW = w->out[1], sh = w->stride[0], pw = w->pad_begin[1];
    int64_t wp = j->wp, nc = (wp + 15) / 16;
    const __m512 ninf = _mm512_set1_ps(-INFINITY), qnan = _mm512_set1_ps(NAN);
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t h0 = oh * sh - w->pad_begin[0], hlo = h0 < 0 ? 0 : h0, hhi = h0 + KH < H ? h0 + KH : H;
        for (int64_t v = 0; v < nc; v++) {
            int64_t c = 16 * v - pw; /* the input column of buffer column 16 v */
            __mmask16 in = mrt_mask16_inside(c, W);
            __m512 m = _mm512_mask_loadu_ps(ninf, in, xp + hlo * W + c);
            for (int64_t ih = hlo + 1; ih < hhi; ih++) m = mp_take(_mm512_mask_loadu_ps(ninf, in, xp + ih * W + c), m);
            _mm512_store_ps(row + 16 * v, m);
        }
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {
            const float *r = row + ow0 * S;
            __m512 m = ninf;
            for (int64_t kw = 0; kw < KW; kw++) {
                __m512 t;
                if (S == 1) t = _mm512_loadu_ps(r + kw);
                else {
                    const float *p = r + (kw & ~(int64_t)1);
                    __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + 16);
                    t = kw & 1 ? mrt_odd16(lo, hi) : mrt_even16(lo, hi);
                }
                m = kw == 0 ? t : mp_take(t, m);
            }
            m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q), qnan);
            _mm512_mask_storeu_ps(yp + oh * OW + ow0, mrt_mask16_first(OW - ow0), m);
        }
    }
}

/* The row pass of mp_rows_plane for buffer columns [16 v, 16 v + 16): the window's rows [hlo, hhi) at input column
   16 v - pw, in order, a later one winning only when greater; -inf outside the input's columns (mask in). A lane
   where some row holds a NaN is NaN. In a lane without NaN, max_ps(x, m) (x > m ? x : m) is mp_take; a NaN x it
   would pass over, so each load's ordered lanes are kept in a mask (a compare under the mask so far: one
   instruction where mp_take takes four) and the lanes left out of it are made NaN once at the end. NR a constant
   where inlined with one (3: every row of a 3x3 window inside the plane). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mp_rowmax(const float *xp, int64_t W, __mmask16 in,
                                                                                int64_t c, int64_t hlo, int64_t nr)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    const float *p = xp + hlo * W + c;
    __m512 m = _mm512_mask_loadu_ps(ninf, in, p);
    __mmask16 ord = _mm512_cmp_ps_mask(m, m, _CMP_ORD_Q);
    for (int64_t r = 1; r < nr; r++) {
        __m512 x = _mm512_mask_loadu_ps(ninf, in, p + r * W);
        ord = _mm512_mask_cmp_ps_mask(ord, x, x, _CMP_ORD_Q);
        m = _mm512_max_ps(x, m);
    }
    return _mm512_mask_mov_ps(_mm512_set1_ps(NAN), ord, m);
}

/* The row kernels (mp_regs_plane, ap_plane) fetch into L1 the input rows POOL_PF_ROWS output rows ahead: a pool's
   input is a large conv output, mostly out of L2 by the time it is read, and three interleaved row streams 444 bytes
   long (111 wide) are too short for the hardware prefetchers. Rows past the plane are the next plane's first ones,
   as planes follow one another. minirt_kernels, 1 thread, max pool 3x3/2 on 64 planes of 112x112 / 147x147:
   0.104-0.105 / 0.168-0.180 ms -> 0.092-0.097 / 0.147-0.148 in cache, 0.38-0.51 / 0.71-0.74 -> 0.11 / 0.19 cold (2
   and 4 rows ahead: 0.14 / 0.30 and 0.12 / 0.22 cold); SqueezeNet's first pool inside the model, 1 thread:
   0.24-0.37 -> 0.15-0.18 ms. Average pool 2x2/2 on 128 planes of 56x56 (DenseNet-121's first transition):
   0.071-0.072 -> 0.062 ms in cache, 0.16-0.19 -> 0.10-0.11 cold. A hint only. */
enum { POOL_PF_ROWS = 8 };
__attribute__((target("avx512f"), always_inline)) static inline void pool_fetch_rows(const float *xp, int64_t w,
                                                                                   int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = 0; c < w; c += 16) _mm_prefetch((const char *)(xp + r * w + c), _MM_HINT_T0);
}

/* mp_rows_plane for kernels 2 or 3 wide (KW) at column strides S of 1 or 2, without the row buffer: the row pass's
   vectors stay in registers and the column pass makes its taps from them, tap kw of 16 outputs being (S = 2) the
   even or odd lanes of two row-pass vectors, or for kw = 2 the even lanes moved one lane down with the next
   vector pair's first even lane after them, and (S = 1) a row-pass vector moved kw lanes down with the next one's
   first kw lanes after it (valignd). Both passes take max_ps with NaN lanes tracked in a mask (see mp_rowmax), so
   each output is the first greatest of its window in mp_rows_plane's order, or NaN where the window holds one: the
   same bits. The masks of the input columns are worked out once per call (mk, per vector of buffer columns). The
   row buffer's stores and reloads, two loads and a permute per tap at stride 2, and mp_take's four instructions
   per tap, made SqueezeNet's 3x3/2 pool on 64 planes of 111x111 take 118 us alone on one thread (ONNX Runtime's
   NCHWc pool: 36 us). KH, KW and S constants where inlined with them. */
__attribute__((target("avx512f"), always_inline)) static inline void mp_regs_plane(const mp2d_job *j, const float *xp,
                                                                                  float *yp, const __mmask16 *mk,
                                                                                  int64_t oh0, int64_t oh1, int64_t KH,
                                                                                  int64_t KW, int64_t S)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], OW = w->out[1], sh = w->stride[0], pw = w->pad_begin[1];
    const __m512 qnan = _mm512_set1_ps(NAN);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int64_t ng = (OW + 15) / 16;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t h0 = oh * sh - w->pad_begin[0], hlo = h0 < 0 ? 0 : h0, hhi = h0 + KH < H ? h0 + KH : H;
        int64_t nr = hhi - hlo;
        float *yr = yp + oh * OW;
        /* the input rows that output row oh + POOL_PF_ROWS reads first */
        pool_fetch_rows(xp, W, h0 + KH + (POOL_PF_ROWS - 1) * sh, h0 + KH + POOL_PF_ROWS * sh);
/* the row pass of buffer vector v, the window's row count a constant when the window is whole */
#define MP_ROWMAX(v)                                                                                               \
    (nr == KH ? mp_rowmax(xp, W, mk[v], 16 * (v) - pw, hlo, KH) : mp_rowmax(xp, W, mk[v], 16 * (v) - pw, hlo, nr))
        /* a: the row pass's vector of group g (S = 1) or its even lanes (S = 2), carried over from the group before */
        __m512 r0 = MP_ROWMAX(0), r1 = S == 2 ? MP_ROWMAX(1) : r0;
        __m512 a = S == 2 ? _mm512_permutex2var_ps(r0, even, r1) : r0;
        for (int64_t g = 0; g < ng; g++) {
            __m512 t0 = a, t1, t2 = a, an;
            if (S == 2) {
                t1 = _mm512_permutex2var_ps(r0, odd, r1);
                r0 = MP_ROWMAX(2 * g + 2), r1 = MP_ROWMAX(2 * g + 3);
                an = _mm512_permutex2var_ps(r0, even, r1);
                if (KW == 3)
                    t2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(an), _mm512_castps_si512(a), 1));
            } else {
                an = MP_ROWMAX(g + 1);
                t1 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(an), _mm512_castps_si512(a), 1));
                if (KW == 3)
                    t2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(an), _mm512_castps_si512(a), 2));
            }
            __mmask16 ord = _mm512_cmp_ps_mask(t0, t0, _CMP_ORD_Q);
            ord = _mm512_mask_cmp_ps_mask(ord, t1, t1, _CMP_ORD_Q);
            __m512 m = _mm512_max_ps(t1, t0);
            if (KW == 3) {
                ord = _mm512_mask_cmp_ps_mask(ord, t2, t2, _CMP_ORD_Q);
                m = _mm512_max_ps(t2, m);
            }
            m = _mm512_mask_mov_ps(qnan, ord, m);
            _mm512_mask_storeu_ps(yr + 16 * g, g == ng - 1 ? mrt_mask16_first(OW - 16 * g) : (__mmask16)0xFFFF, m);
            a = an;
        }
#undef MP_ROWMAX
    }
}

/* the buffer: wp columns rounded up to vectors, plus what the column pass of the last vector reads past them */
enum { MP_ROWS_BUF = MP_ROW + 64 };

__attribute__((target("avx512f"))) static void mp_rows_range(const mp2d_job *j, int64_t begin, int64_t end)
{
    const mrt_window *w = j->w;
    _Alignas(64) float row[MP_ROWS_BUF];
    int64_t KH = w->kernel[0], KW = w->kernel[1], S = w->stride[1], hw = w->in[0] * w->in[1], ohw = w->out[0] * w->out[1];
    /* past the row pass's vectors: read by the last output vector's lanes past OW, which are not stored */
    for (int64_t c = 16 * ((j->wp + 15) / 16); c < MP_ROWS_BUF; c++) row[c] = -INFINITY;
    /* mp_regs_plane's input-column masks, one per vector of buffer columns it reads (two past the output's) */
    __mmask16 mk[MP_ROWS_BUF / 16 * 2 + 4];
    int64_t nmk = 2 * ((w->out[1] + 15) / 16) + 2;
    if (nmk > (int64_t)(sizeof mk / sizeof mk[0])) nmk = 0; /* never: mp_rows_ok bounds the row */
    for (int64_t v = 0; v < nmk; v++) mk[v] = mrt_mask16_inside(16 * v - w->pad_begin[1], w->in[1]);
    bool regs = nmk > 0 && (KW == 2 || KW == 3);
    for (int64_t t = begin; t < end; t++) {
        int64_t pl = t % j->planes, band = t / j->planes, OH = w->out[0];
        int64_t a = OH * band / j->bands, b = OH * (band + 1) / j->bands;
        const float *xp = j->x + pl * hw;
        float *yp = j->y + pl * ohw;
        if (regs && KH == 3 && KW == 3 && S == 2) mp_regs_plane(j, xp, yp, mk, a, b, 3, 3, 2);
        else if (regs && KH == 3 && KW == 3 && S == 1) mp_regs_plane(j, xp, yp, mk, a, b, 3, 3, 1);
        else if (regs && KH == 2 && KW == 2 && S == 2) mp_regs_plane(j, xp, yp, mk, a, b, 2, 2, 2);
        else if (regs && KW == 3 && S == 2) mp_regs_plane(j, xp, yp, mk, a, b, KH, 3, 2);
        else if (regs && KW == 2 && S == 2) mp_regs_plane(j, xp, yp, mk, a, b, KH, 2, 2);
        else if (regs && KW == 3) mp_regs_plane(j, xp, yp, mk, a, b, KH, 3, 1);
        else if (regs) mp_regs_plane(j, xp, yp, mk, a, b, KH, 2, 1);
        else if (KH == 3 && KW == 3 && S == 2) mp_rows_plane(j, xp, yp, row, a, b, 3, 3, 2);
        else if (KH == 3 && KW == 3 && S == 1) mp_rows_plane(j, xp, yp, row, a, b, 3, 3, 1);
        else if (KH == 2 && KW == 2 && S == 2) mp_rows_plane(j, xp, yp, row, a, b, 2, 2, 2);
        else if (S == 2) mp_rows_plane(j, xp, yp, row, a, b, KH, KW, 2);
        else mp_rows_plane(j, xp, yp, row, a, b, KH, KW, 1);
    }
}

/* Column strides 1 and 2, output rows of more than one vector (narrower ones, 14 or 13 wide, were a few percent
   slower than mp2d_plane_avx512 here), and the buffer's reads inside it: the last output vector's taps read up to
   column (16 ceil(OW / 16) - 1) S + KW - 1 of the buffer. 1 thread, per-node profile, before -> after: GoogLeNet's
   3x3/2 on 112x112 0.223 -> 0.181 ms and on 56x56 0.172 -> 0.144, SqueezeNet's on 111x111 0.216 -> 0.157 and on
   55x55 0.112 -> 0.093. */
static bool mp_rows_ok(const mrt_window *w)
{
    int64_t S = w->stride[1], reach = (16 * ((w->out[1] + 15) / 16) - 1) * S + w->kernel[1] + 16;
    return mrt_cpu_has_avx512f() && (S == 1 || S == 2) && w->out[1] > 16 && reach <= MP_ROWS_BUF;
}

/* mp_regs_plane's kernels at any output row width (its masks' array bounds the row as mp_rows_ok does): rows of 16
   outputs or fewer take it too, where mp2d_plane_avx512's two loads, permute and NaN compare per tap and row were
   slower (alone, 1 thread, alternating: SqueezeNet's 3x3/2 on 256 planes of 27x27 0.047 -> 0.033 ms, GoogLeNet's on
   832 planes of 14x14 0.078-0.085 -> 0.054) */
static bool mp_regs_ok(const mrt_window *w)
{
    int64_t S = w->stride[1], reach = (16 * ((w->out[1] + 15) / 16) - 1) * S + w->kernel[1] + 16;
    return mrt_cpu_has_avx512f() && (S == 1 || S == 2) && (w->kernel[1] == 2 || w->kernel[1] == 3) &&
           reach <= MP_ROWS_BUF;
}
#endif

static void mp2d_range(void *arg, int64_t begin, int64_t end)
{
    const mp2d_job *j = arg;
    const mrt_window *w = j->w;
#ifdef POOL_HAVE_AVX512
    if (mp_flat_ok(w)) {
        mp_flat_range(j, begin, end);
        return;
    }
    if (mp_rows_ok(w) || mp_regs_ok(w)) {
        mp_rows_range(j, begin, end);
        return;
    }
    if (mp2d_avx512(w)) {
        for (int64_t pl = begin; pl < end; pl++)
            mp2d_plane_avx512(j, j->x + pl * w->in[0] * w->in[1], j->y + pl * w->out[0] * w->out[1]);
        return;
    }
#endif
    float row[MP_ROW];
    for (int64_t pl = begin; pl < end; pl++)
        mp2d_plane(j, j->x + pl * w->in[0] * w->in[1], j->y + pl * w->out[0] * w->out[1], row);
}

/* Whether mp2d handles w: 2-D, dilation 1, every pad below the kernel size, rows that fit the buffer. */
static bool mp2d_ok(const mrt_window *w)
{
    if (w->nsp != 2) return false;
    for (int i = 0; i < 2; i++)
        if (w->dilation[i] != 1 || w->pad_begin[i] >= w->kernel[i] || w->pad_end[i] >= w->kernel[i] || w->out[i] < 1 ||
            (w->out[i] - 1) * w->stride[i] - w->pad_begin[i] >= w->in[i]) /* the last window starts inside */
            return false;
    return (w->out[1] - 1) * w->stride[1] + w->kernel[1] <= MP_ROW;
}

/* Large planes on several threads: each thread takes a band of output rows of every plane (tasks band-major, so a
   thread's share is its band), not a range of planes, as the depthwise convs and the stems' rows do
   (ops_cpu/conv_depthwise.c): the rows it reads were written by its own core, and the rows it writes are the ones
   that core reads next; by planes, half of each came from, and went to, the other core's cache. */
enum { MP_BAND_MIN_OHW = 1024 };

static void maxpool2d_f32(const mrt_op_ctx *ctx, const mrt_window *w, int64_t planes, const float *x, float *y)
{
    mp2d_job j = {w, x, y, (w->out[1] - 1) * w->stride[1] + w->kernel[1], planes, 1};
    int64_t work = w->out[0] * w->out[1] * w->kernel[0] * w->kernel[1];
#ifdef POOL_HAVE_AVX512
    if (ctx && ctx->n_threads > 1 && !mp_flat_ok(w) && (mp_rows_ok(w) || mp_regs_ok(w)) &&
        w->out[0] * w->out[1] >= MP_BAND_MIN_OHW && w->out[0] >= 2 * ctx->n_threads)
        j.bands = ctx->n_threads;
#endif
    mrt_parallel_for(ctx, planes * j.bands, work >= 32768 ? 1 : 32768 / (work > 0 ? work : 1), mp2d_range, &j);
}

static mrt_status mrt_cpu_maxpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0), *ind = mrt_output(ctx, 1);
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    int64_t planes = x->shape[0] * x->shape[1];
    int64_t *id = ind ? ind->data : NULL;
    bool cm = mrt_attr_int(ctx, "storage_order", 0) == 1;
    switch (x->dtype) {
    case MRT_DTYPE_FLOAT:
        if (!id && mp2d_ok(&w)) maxpool2d_f32(ctx, &w, planes, x->data, y->data);
        else maxpool_f32(&w, planes, x->data, y->data, id, cm);
        break;
    case MRT_DTYPE_DOUBLE: maxpool_f64(&w, planes, x->data, y->data, id, cm); break;
    case MRT_DTYPE_INT8: maxpool_i8(&w, planes, x->data, y->data, id, cm); break;
    case MRT_DTYPE_UINT8: maxpool_u8(&w, planes, x->data, y->data, id, cm); break;
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16: {
        float *f[3];
        if (!float_copies(ctx, x, NULL, y, f)) return MRT_STATUS_OUT_OF_MEMORY;
        maxpool_f32(&w, planes, f[0], f[2], id, cm);
        mrt_lin_narrow(y, f[2]);
        break;
    }
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ AveragePool / LpPool */

typedef enum avg_kind { AVG_MEAN, AVG_LP } avg_kind;

/* Mean over the window (count_include_pad: divide by the taps inside the padded input), or the p-norm of the
   valid taps (padding contributes 0). Sums accumulate in double. */
#define AVGPOOL(T, SUF)                                                                                            \
    static void avgpool_##SUF(const mrt_window *w, int64_t planes, const T *x, T *y, avg_kind kind,                \
                              bool include_pad, double p)                                                          \
    {                                                                                                              \
        int nsp = w->nsp;                                                                                          \
        int64_t in_numel = prod(nsp, w->in), out_numel = prod(nsp, w->out);                                        \
        int64_t instride[MRT_MAX_RANK];                                                                            \
        mrt_shape_strides(nsp, w->in, instride);                                                                   \
        for (int64_t pl = 0; pl < planes; pl++) {                                                                  \
            const T *xp = x + pl * in_numel;                                                                       \
            int64_t oidx[MRT_MAX_RANK] = {0};                                                                      \
            for (int64_t o = 0; o < out_numel; o++, odometer_next(nsp, oidx, w->out)) {                            \
                win_taps t;                                                                                        \
                taps_of(w, oidx, &t);                                                                              \
                double s = 0;                                                                                      \
                double r;                                                                                          \
                if (t.n_valid > 0) {                                                                               \
                    if (kind == AVG_MEAN) FOR_EACH_TAP(w, &t, instride, s += xp[off]);                             \
                    else if (p == 2.0) FOR_EACH_TAP(w, &t, instride, s += (double)xp[off] * xp[off]);              \
                    else if (p == 1.0) FOR_EACH_TAP(w, &t, instride, s += fabs((double)xp[off]));                  \
                    else FOR_EACH_TAP(w, &t, instride, s += pow(fabs((double)xp[off]), p));                        \
                }                                                                                                  \
                if (kind == AVG_MEAN) {                                                                            \
                    int64_t den = include_pad ? t.n_padded : t.n_valid;                                            \
                    r = den > 0 ? s / (double)den : 0.0;                                                           \
                } else {                                                                                           \
                    r = p == 2.0 ? sqrt(s) : p == 1.0 ? s : pow(s, 1.0 / p);                                       \
                }                                                                                                  \
                y[pl * out_numel + o] = (T)r;                                                                      \
            }                                                                                                      \
        }                                                                                                          \
    }
AVGPOOL(float, f32)
AVGPOOL(double, f64)

/* 2-D float32 AveragePool, threaded over the planes: the sums of avgpool_f32 (in double, rows then columns, each
   window's taps in order) with the window's bounds worked out per row and per column instead of per element,
   and on AVX-512 eight neighbouring outputs at once (one per lane, each lane's sum in the same order) where
   their windows lie inside the row, for column strides 1 and 2 (MaxViT's 3x3/2 on 114x114: 1.62 -> 0.46 ms), several
   vectors' sums side by side, the rows' taps worked out once for all planes (ap_plane). Inception-v3's nine 3x3
   AveragePools took 54 ms of its 124 (one thread walking every tap of every output through the N-D window code). */
typedef struct ap2d_job {
    const mrt_window *w;
    const float *x;
    float *y;
    bool include_pad;
} ap2d_job;

static inline float ap_finish(double s, int64_t den) { return (float)(den > 0 ? s / (double)den : 0.0); }

/* Output ow of a row whose vertical taps are [hlo, hhi) from input row sh: the window's taps in order, in double */
static inline float ap_one(const ap2d_job *j, const float *xp, int64_t sh, int64_t hlo, int64_t hhi, int64_t hpad,
                           int64_t ow)
{
    const mrt_window *w = j->w;
    int64_t sw, wlo, whi, wpad;
    dim_taps(w, 1, ow, &sw, &wlo, &whi, &wpad);
    double s = 0;
    for (int64_t kh = hlo; kh < hhi && whi > wlo; kh++) {
        const float *row = xp + (sh + kh * w->dilation[0]) * w->in[1] + sw;
        for (int64_t k = wlo; k < whi; k++) s += row[k * w->dilation[1]];
    }
    return ap_finish(s, j->include_pad ? hpad * wpad : (hhi - hlo) * (whi - wlo));
}

#ifdef POOL_HAVE_AVX512
/* The first n (1-8) of 8 floats of a row from column c, stride S (1, or 2: the even lanes of 16 loaded), as
   doubles; the other lanes 0, nothing read past the row */
__attribute__((target("avx512f"), always_inline)) static inline __m512d ap_load8(const float *row, int64_t c, int64_t iw,
                                                                               int64_t S, int n)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0);
    __m256 v;
    if (S == 1) {
        v = n == 8 ? _mm256_loadu_ps(row + c) : _mm512_castps512_ps256(_mm512_maskz_loadu_ps(mrt_mask16_first(n), row + c));
    } else {
        int64_t m = iw - c < 2 * n ? iw - c : 2 * n;
        v = _mm512_castps512_ps256(_mm512_permutexvar_ps(even, _mm512_maskz_loadu_ps(mrt_mask16_first(m), row + c)));
    }
    return _mm512_cvtps_pd(v);
}

__attribute__((target("avx512f"), always_inline)) static inline void ap_store8(__m512d acc, int64_t den, float *out, int n)
{
    __m512d r = den > 0 ? _mm512_div_pd(acc, _mm512_set1_pd((double)den)) : _mm512_setzero_pd();
    _mm512_mask_storeu_ps(out, mrt_mask16_first(n), _mm512_castps256_ps512(_mm512_cvtpd_ps(r)));
}

/* n (<= 8) outputs whose windows have rows [hlo, hhi) from input row sh and start at column c (lane l at c + S l),
   every column tap inside the row, into out */
__attribute__((target("avx512f"), always_inline)) static inline void ap_sum1(const ap2d_job *j, const float *xp,
                                                                           int64_t sh, int64_t hlo, int64_t hhi,
                                                                           int64_t c, int n, int64_t den, float *out,
                                                                           const int S)
{
    const mrt_window *w = j->w;
    int64_t iw = w->in[1];
    __m512d a = _mm512_setzero_pd();
    for (int64_t kh = hlo; kh < hhi; kh++) {
        const float *row = xp + (sh + kh * w->dilation[0]) * iw;
        for (int64_t k = 0; k < w->kernel[1]; k++) a = _mm512_add_pd(a, ap_load8(row, c + k, iw, S, n));
    }
    ap_store8(a, den, out, n);
}

/* The same for four such vectors, the g-th's windows g rstep floats and g cstep columns after the first's (four
   column groups of a row: cstep 8 S; the same columns of four rows: rstep the row stride), stored at
   out + g out_step. Each lane's sum is a chain of dependent adds: a vector alone runs at their latency, four side by
   side do not. (Four named sums: as an array GCC kept them in memory.) */
__attribute__((target("avx512f"), always_inline)) static inline void ap_sums4(const ap2d_job *j, const float *xp,
                                                                            int64_t sh, int64_t hlo, int64_t hhi,
                                                                            int64_t c, int64_t rstep, int64_t cstep,
                                                                            int n, int64_t den, float *out,
                                                                            int64_t out_step, const int S)
{
    const mrt_window *w = j->w;
    int64_t iw = w->in[1];
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t kh = hlo; kh < hhi; kh++) {
        const float *row = xp + (sh + kh * w->dilation[0]) * iw;
        for (int64_t k = 0; k < w->kernel[1]; k++) {
            a0 = _mm512_add_pd(a0, ap_load8(row, c + k, iw, S, n));
            a1 = _mm512_add_pd(a1, ap_load8(row + rstep, c + cstep + k, iw, S, n));
            a2 = _mm512_add_pd(a2, ap_load8(row + 2 * rstep, c + 2 * cstep + k, iw, S, n));
            a3 = _mm512_add_pd(a3, ap_load8(row + 3 * rstep, c + 3 * cstep + k, iw, S, n));
        }
    }
    ap_store8(a0, den, out, n);
    ap_store8(a1, den, out + out_step, n);
    ap_store8(a2, den, out + 2 * out_step, n);
    ap_store8(a3, den, out + 3 * out_step, n);
}

/* One output row: outputs [ow_a, ow_b), whose column taps all lie inside the row (column dilation 1, stride S 1 or
   2, a constant), eight per vector, four vectors at a time, the last one partial; the others one by one. */
__attribute__((target("avx512f"), always_inline)) static inline void ap_row(const ap2d_job *j, const float *xp,
                                                                          float *yr, int64_t sh, int64_t hlo,
                                                                          int64_t hhi, int64_t hpad, int64_t ow_a,
                                                                          int64_t ow_b, const int S)
{
    const mrt_window *w = j->w;
    int64_t c0 = -w->pad_begin[1], den = j->include_pad ? hpad * w->kernel[1] : (hhi - hlo) * w->kernel[1];
    int64_t ow = 0;
    for (; ow < ow_a; ow++) yr[ow] = ap_one(j, xp, sh, hlo, hhi, hpad, ow);
    for (; ow + 32 <= ow_b; ow += 32) ap_sums4(j, xp, sh, hlo, hhi, ow * S + c0, 0, 8 * S, 8, den, yr + ow, 8, S);
    for (; ow + 8 <= ow_b; ow += 8) ap_sum1(j, xp, sh, hlo, hhi, ow * S + c0, 8, den, yr + ow, S);
    if (ow_b - ow >= 2) { /* a partial vector (one output alone is cheaper by itself) */
        ap_sum1(j, xp, sh, hlo, hhi, ow * S + c0, (int)(ow_b - ow), den, yr + ow, S);
        ow = ow_b;
    }
    for (; ow < w->out[1]; ow++) yr[ow] = ap_one(j, xp, sh, hlo, hhi, hpad, ow);
}

/* An output row's vertical taps (dim_taps of dim 0) */
typedef struct ap_rowtaps {
    int64_t sh, hlo, hhi, hpad;
} ap_rowtaps;

/* A plane, its rows' taps in rt: rows wide enough for four vectors by ap_row; in narrower planes, runs of four rows
   whose windows lie inside the image vertically go four rows at a time (ap_sums4), the others by ap_row */
__attribute__((target("avx512f"), always_inline)) static inline void ap_plane(const ap2d_job *j, const ap_rowtaps *rt,
                                                                            const float *xp, float *yp, int64_t ow_a,
                                                                            int64_t ow_b, const int S)
{
    const mrt_window *w = j->w;
    int64_t oh_n = w->out[0], ow_n = w->out[1], kh_n = w->kernel[0], iw = w->in[1], sh = w->stride[0];
    bool narrow = ow_b - ow_a < 32, edges = ow_a > 0 || ow_b < ow_n;
    int64_t pf = 0; /* input rows below pf are fetched (pool_fetch_rows) */
    for (int64_t oh = 0; oh < oh_n;) {
        const ap_rowtaps *t = &rt[oh];
        int64_t pe = (oh + POOL_PF_ROWS) * sh - w->pad_begin[0] + kh_n; /* rows up to output row oh + POOL_PF_ROWS's */
        if (pe > pf) {
            pool_fetch_rows(xp, iw, pf, pe);
            pf = pe;
        }
        if (narrow && oh + 4 <= oh_n && t[0].hlo == 0 && t[0].hhi == kh_n && t[3].hlo == 0 && t[3].hhi == kh_n) {
            /* rows oh + 1, oh + 2 lie between: inside too */
            /* the four rows' windows, every tap inside the image: with or without count_include_pad, KH KW taps */
            for (int64_t ow = ow_a; ow < ow_b; ow += 8)
                ap_sums4(j, xp, t->sh, 0, kh_n, ow * S - w->pad_begin[1], w->stride[0] * w->in[1], 0,
                         ow_b - ow < 8 ? (int)(ow_b - ow) : 8, kh_n * w->kernel[1], yp + oh * ow_n + ow, ow_n, S);
            for (int r = 0; edges && r < 4; r++) {
                float *yr = yp + (oh + r) * ow_n;
                for (int64_t ow = 0; ow < ow_a; ow++) yr[ow] = ap_one(j, xp, t[r].sh, t[r].hlo, t[r].hhi, t[r].hpad, ow);
                for (int64_t ow = ow_b; ow < ow_n; ow++) yr[ow] = ap_one(j, xp, t[r].sh, t[r].hlo, t[r].hhi, t[r].hpad, ow);
            }
            oh += 4;
            continue;
        }
        ap_row(j, xp, yp + oh * ow_n, t->sh, t->hlo, t->hhi, t->hpad, ow_a, ow_b, S);
        oh++;
    }
}
__attribute__((target("avx512f"))) static void ap_plane_s1(const ap2d_job *j, const ap_rowtaps *rt, const float *xp,
                                                          float *yp, int64_t ow_a, int64_t ow_b)
{
    ap_plane(j, rt, xp, yp, ow_a, ow_b, 1);
}
__attribute__((target("avx512f"))) static void ap_plane_s2(const ap2d_job *j, const ap_rowtaps *rt, const float *xp,
                                                          float *yp, int64_t ow_a, int64_t ow_b)
{
    ap_plane(j, rt, xp, yp, ow_a, ow_b, 2);
}
/* one row of a plane too tall for the taps table */
__attribute__((target("avx512f"))) static void ap_row_s1(const ap2d_job *j, const float *xp, float *yr, int64_t sh,
                                                        int64_t hlo, int64_t hhi, int64_t hpad, int64_t ow_a, int64_t ow_b)
{
    ap_row(j, xp, yr, sh, hlo, hhi, hpad, ow_a, ow_b, 1);
}
__attribute__((target("avx512f"))) static void ap_row_s2(const ap2d_job *j, const float *xp, float *yr, int64_t sh,
                                                        int64_t hlo, int64_t hhi, int64_t hpad, int64_t ow_a, int64_t ow_b)
{
    ap_row(j, xp, yr, sh, hlo, hhi, hpad, ow_a, ow_b, 2);
}
#endif

#ifdef POOL_HAVE_AVX512
/* Small planes at stride 1 whose output is the input's size (3x3 with pads of 1: Inception's branch pools, whose
   Pad is fused in): taken as one flat array, as mp_flat_range does. Each output's taps in (kh, kw) order from
   masked loads, a tap outside the plane or leaving its row loaded as 0: the sum in double starts from +0 and
   never becomes -0, so adding those zeros changes no bit of ap_one's sum over the valid taps. The divisor per
   position (dim_taps: with count_include_pad the taps inside the padded input, else the valid ones) and the taps'
   masks are worked out once per call. The row kernel took the padded columns one output at a time (ap_one): on
   Inception's 17x17 and 8x8 planes with their Pads fused, slower than the Pads it saved. */
enum { AP_FLAT_MAX = 2048, AP_FLAT_MAXK = 8 };

static bool ap_flat_ok(const mrt_window *w)
{
    return mrt_cpu_has_avx512f() && w->stride[0] == 1 && w->stride[1] == 1 && w->dilation[0] == 1 &&
           w->dilation[1] == 1 && w->out[0] == w->in[0] && w->out[1] == w->in[1] &&
           w->in[0] * w->in[1] <= AP_FLAT_MAX && w->kernel[0] <= AP_FLAT_MAXK && w->kernel[1] <= AP_FLAT_MAXK;
}

/* Tap t of vector v's 16 outputs, widened: lanes 0-7 (lo) and 8-15 (hi) as doubles */
#define AP_FLAT_TAP(v, t, lo, hi)                                                                               \
    do {                                                                                                        \
        __m512 t_ = _mm512_maskz_loadu_ps(tm[v][t], x + 16 * (v) + off[t]);                                     \
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(t_)));                                     \
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t_), 1)))); \
    } while (0)

/* den > 0 here: every window of a same-size pool holds its centre tap */
__attribute__((target("avx512f"), always_inline)) static inline void ap_flat_store(float *y, int64_t v, int64_t HW,
                                                                                 const double *den, __m512d lo,
                                                                                 __m512d hi)
{
    __m256 rl = _mm512_cvtpd_ps(_mm512_div_pd(lo, _mm512_load_pd(den + 16 * v)));
    __m256 rh = _mm512_cvtpd_ps(_mm512_div_pd(hi, _mm512_load_pd(den + 16 * v + 8)));
    __m512 r = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(rl)), _mm256_castps_pd(rh), 1));
    _mm512_mask_storeu_ps(y + 16 * v, mrt_mask16_first(HW - 16 * v), r);
}

/* The planes' sums, each lane's taps in order: four vectors side by side (eight chains of dependent adds; one
   vector alone ran at their latency: 288 planes of 35x35 took 0.23 ms on one thread, ORT 0.09), nt a constant
   where inlined with 9 */
__attribute__((target("avx512f"), always_inline)) static inline void
ap_flat_planes(const ap2d_job *j, int64_t begin, int64_t end, int64_t nv, __mmask16 (*tm)[AP_FLAT_MAXK * AP_FLAT_MAXK],
               const double *den, const int64_t *off, const int64_t nt)
{
    int64_t HW = j->w->in[0] * j->w->in[1];
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * HW;
        float *y = j->y + pl * HW;
        int64_t v = 0;
        for (; v + 4 <= nv; v += 4) {
            __m512d l0 = _mm512_setzero_pd(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
            for (int64_t t = 0; t < nt; t++) {
                AP_FLAT_TAP(v, t, l0, h0);
                AP_FLAT_TAP(v + 1, t, l1, h1);
                AP_FLAT_TAP(v + 2, t, l2, h2);
                AP_FLAT_TAP(v + 3, t, l3, h3);
            }
            ap_flat_store(y, v, HW, den, l0, h0);
            ap_flat_store(y, v + 1, HW, den, l1, h1);
            ap_flat_store(y, v + 2, HW, den, l2, h2);
            ap_flat_store(y, v + 3, HW, den, l3, h3);
        }
        for (; v < nv; v++) {
            __m512d lo = _mm512_setzero_pd(), hi = lo;
            for (int64_t t = 0; t < nt; t++) AP_FLAT_TAP(v, t, lo, hi);
            ap_flat_store(y, v, HW, den, lo, hi);
        }
    }
}
#undef AP_FLAT_TAP

__attribute__((target("avx512f"))) static void ap_flat_range(const ap2d_job *j, int64_t begin, int64_t end)
{
    const mrt_window *w = j->w;
    int64_t H = w->in[0], W = w->in[1], HW = H * W, KH = w->kernel[0], KW = w->kernel[1];
    int64_t ph = w->pad_begin[0], pw = w->pad_begin[1], nv = (HW + 15) / 16;
    __mmask16 tm[AP_FLAT_MAX / 16][AP_FLAT_MAXK * AP_FLAT_MAXK];
    _Alignas(64) double den[AP_FLAT_MAX];
    /* the divisors and masks by rows and columns, without a division per lane and tap (those took ~70 us a call
       on 35x35, a third of Inception's 288-channel pool on one thread, and every thread's range pays them) */
    for (int64_t i = HW; i < 16 * nv; i++) den[i] = 1.0; /* lanes past the plane: computed, not stored */
    int64_t rn[AP_FLAT_MAX], cn[AP_FLAT_MAX];
    for (int64_t r = 0; r < H; r++) {
        int64_t s, lo, hi, pad;
        dim_taps(w, 0, r, &s, &lo, &hi, &pad);
        rn[r] = j->include_pad ? pad : hi - lo;
    }
    for (int64_t c = 0; c < W; c++) {
        int64_t s, lo, hi, pad;
        dim_taps(w, 1, c, &s, &lo, &hi, &pad);
        cn[c] = j->include_pad ? pad : hi - lo;
    }
    memset(tm, 0, (size_t)nv * sizeof tm[0]);
    for (int64_t i = 0, r = 0, c = 0; i < HW; i++) {
        den[i] = (double)(rn[r] * cn[c]);
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t rr = r + kh - ph;
            if (rr < 0 || rr >= H) continue;
            for (int64_t kw = 0; kw < KW; kw++) {
                int64_t cc = c + kw - pw;
                if (cc >= 0 && cc < W) tm[i / 16][kh * KW + kw] |= (__mmask16)(1u << (i % 16));
            }
        }
        if (++c == W) c = 0, r++;
    }
    int64_t off[AP_FLAT_MAXK * AP_FLAT_MAXK]; /* tap k's offset from an output's position, in (kh, kw) order */
    for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) off[kh * KW + kw] = (kh - ph) * W + kw - pw;
    if (KH == 3 && KW == 3) ap_flat_planes(j, begin, end, nv, tm, den, off, 9);
    else ap_flat_planes(j, begin, end, nv, tm, den, off, KH * KW);
}
#endif

#ifdef POOL_HAVE_AVX512
/* 2x2 windows at stride 2 without pads (DenseNet's transitions): avgpool_f32's sums, 0 + x00 + x01 + x10 + x11 in
   double in that order, times 0.25 (s / 4 exactly: a nonzero sum of floats is at least 2^-149, far from double's
   subnormals), 8 outputs a vector from two 16-float loads split into even and odd columns. A task is a band of
   output rows of every plane, each plane's rows in turn (the 1x1 Conv before it splits by positions). The row
   kernel (ap_sums4's masked loads and permutes per tap, a division per vector) took 68 us for 128 planes of
   56x56 on one thread, ONNX Runtime's NCHWc pool 22. */
static bool ap_2x2s2_ok(const mrt_window *w)
{
    return mrt_cpu_has_avx512f() && w->kernel[0] == 2 && w->kernel[1] == 2 && w->stride[0] == 2 && w->stride[1] == 2 &&
           w->dilation[0] == 1 && w->dilation[1] == 1 && w->pad_begin[0] == 0 && w->pad_begin[1] == 0 &&
           w->pad_end[0] == 0 && w->pad_end[1] == 0 && w->out[0] >= 1 && w->out[1] >= 1 &&
           /* ceil_mode's last window may hang over the edge: it takes fewer taps (and reads past the plane) */
           2 * w->out[0] <= w->in[0] && 2 * w->out[1] <= w->in[1];
}

typedef struct ap22_job {
    const float *x;
    float *y;
    int64_t planes, ih, iw, oh, ow;
} ap22_job;

__attribute__((target("avx512f"))) static void ap22_rows(void *arg, int64_t r0, int64_t r1)
{
    const ap22_job *j = arg;
    const __m512i split = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    const __m512d quarter = _mm512_set1_pd(0.25), zero = _mm512_setzero_pd();
    for (int64_t p = 0; p < j->planes; p++)
        for (int64_t r = r0; r < r1; r++) {
            const float *a = j->x + (p * j->ih + 2 * r) * j->iw, *b = a + j->iw;
            float *out = j->y + (p * j->oh + r) * j->ow;
            for (int64_t c = 0; c < j->ow; c += 8) {
                int n = j->ow - c < 8 ? (int)(j->ow - c) : 8;
                __mmask16 k = mrt_mask16_first(2 * n);
                __m512 u = _mm512_permutexvar_ps(split, _mm512_maskz_loadu_ps(k, a + 2 * c));
                __m512 v = _mm512_permutexvar_ps(split, _mm512_maskz_loadu_ps(k, b + 2 * c));
                __m512d s = _mm512_add_pd(zero, _mm512_cvtps_pd(_mm512_castps512_ps256(u)));
                s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(u), 1))));
                s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
                s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
                _mm512_mask_storeu_ps(out + c, mrt_mask16_first(n), _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_mul_pd(s, quarter))));
            }
        }
}
#endif

static void ap2d_planes(void *arg, int64_t p0, int64_t p1)
{
    const ap2d_job *j = arg;
    const mrt_window *w = j->w;
#ifdef POOL_HAVE_AVX512
    if (ap_flat_ok(w)) {
        ap_flat_range(j, p0, p1);
        return;
    }
#endif
    int64_t ih = w->in[0], iw = w->in[1], oh_n = w->out[0], ow_n = w->out[1];
    bool vector_rows = false;
    int64_t ow_a = 0, ow_b = 0; /* outputs whose column taps all lie inside the row */
#ifdef POOL_HAVE_AVX512
    int64_t S = w->stride[1], kw = w->kernel[1];
    if ((S == 1 || S == 2) && w->dilation[1] == 1 && mrt_cpu_has_avx512f()) {
        vector_rows = true;
        ow_a = (w->pad_begin[1] + S - 1) / S;
        ow_b = iw - kw + w->pad_begin[1] < 0 ? 0 : (iw - kw + w->pad_begin[1]) / S + 1;
        if (ow_a > ow_n) ow_a = ow_n;
        if (ow_b > ow_n) ow_b = ow_n;
        if (ow_b < ow_a) ow_b = ow_a;
    }
#endif
#ifdef POOL_HAVE_AVX512
    /* the rows' taps are every plane's: worked out once (their divisions cost more than a small plane's sums) */
    enum { RT_MAX = 512 };
    ap_rowtaps rt[RT_MAX];
    if (vector_rows && oh_n <= RT_MAX) {
        for (int64_t oh = 0; oh < oh_n; oh++) dim_taps(w, 0, oh, &rt[oh].sh, &rt[oh].hlo, &rt[oh].hhi, &rt[oh].hpad);
        for (int64_t p = p0; p < p1; p++)
            (S == 1 ? ap_plane_s1 : ap_plane_s2)(j, rt, j->x + p * ih * iw, j->y + p * oh_n * ow_n, ow_a, ow_b);
        return;
    }
#endif
    for (int64_t p = p0; p < p1; p++) {
        const float *xp = j->x + p * ih * iw;
        float *yp = j->y + p * oh_n * ow_n;
        for (int64_t oh = 0; oh < oh_n; oh++) {
            int64_t sh, hlo, hhi, hpad;
            dim_taps(w, 0, oh, &sh, &hlo, &hhi, &hpad);
#ifdef POOL_HAVE_AVX512
            if (vector_rows) {
                (S == 1 ? ap_row_s1 : ap_row_s2)(j, xp, yp + oh * ow_n, sh, hlo, hhi, hpad, ow_a, ow_b);
                continue;
            }
#endif
            for (int64_t ow = 0; ow < ow_n; ow++) yp[oh * ow_n + ow] = ap_one(j, xp, sh, hlo, hhi, hpad, ow);
        }
    }
}

static mrt_status run_avg(mrt_op_ctx *ctx, const mrt_window *w, avg_kind kind, bool include_pad, double p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t planes = x->shape[0] * x->shape[1];
    if (x->dtype == MRT_DTYPE_FLOAT && kind == AVG_MEAN && w->nsp == 2) {
#ifdef POOL_HAVE_AVX512
        if (ap_2x2s2_ok(w)) {
            ap22_job k = {x->data, y->data, planes, w->in[0], w->in[1], w->out[0], w->out[1]};
            mrt_parallel_for(ctx, w->out[0], 1, ap22_rows, &k);
            return MRT_STATUS_OK;
        }
#endif
        ap2d_job j = {w, x->data, y->data, include_pad};
        int64_t work = w->out[0] * w->out[1] * w->kernel[0] * w->kernel[1];
        mrt_parallel_for(ctx, planes, work >= 32768 ? 1 : 32768 / (work > 0 ? work : 1), ap2d_planes, &j);
        return MRT_STATUS_OK;
    }
    switch (x->dtype) {
    case MRT_DTYPE_FLOAT: avgpool_f32(w, planes, x->data, y->data, kind, include_pad, p); break;
    case MRT_DTYPE_DOUBLE: avgpool_f64(w, planes, x->data, y->data, kind, include_pad, p); break;
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16: {
        float *f[3];
        if (!float_copies(ctx, x, NULL, y, f)) return MRT_STATUS_OUT_OF_MEMORY;
        avgpool_f32(w, planes, f[0], f[2], kind, include_pad, p);
        mrt_lin_narrow(y, f[2]);
        break;
    }
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_avgpool(mrt_op_ctx *ctx)
{
    mrt_window w;
    const mrt_tensor *x = mrt_input(ctx, 0), *y = mrt_output(ctx, 0);
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    bool include_pad = ctx->opset >= 7 && mrt_attr_int(ctx, "count_include_pad", 0) != 0;
    const mrt_prologue *pro = ctx->prologue;
    if (pro && pro->pad) {
        /* a Pad fused in (engine/fuse.c): x is the Pad's input; its zeros are pads counted in every window */
        if (w.nsp != 2 || y->rank != 4)
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "a fused Pad needs a 2-D pool; input 'X' has rank %d", x->rank);
        for (int i = 0; i < 2; i++) {
            w.pad_begin[i] += pro->pads[i];
            w.pad_end[i] += pro->pads[2 + i];
            w.out[i] = y->shape[2 + i];
        }
        include_pad = true;
    }
    return run_avg(ctx, &w, AVG_MEAN, include_pad, 1.0);
}

static mrt_status mrt_cpu_lppool(mrt_op_ctx *ctx)
{
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, mrt_input(ctx, 0), &w));
    return run_avg(ctx, &w, AVG_LP, false, mrt_attr_float(ctx, "p", 2.0f));
}

/* Global pools over float32 planes of `len` elements, threaded over the planes and vectorised inside one.
   Average: the sum runs in double in GP_LANES interleaved partial sums (element i goes to lane i % GP_LANES, in
   increasing i), which are then added pairwise (lane j += lane j + 16, then + 8, 4, 2, 1); the order is fixed,
   so the result does not depend on the thread count or the instruction set (it can differ in the last bits from
   the sequential sum of avgpool_f32, which other shapes still use). Max: NaN wins (the canonical NAN), as in
   maxpool2d_f32; an empty plane gives 0 (as maxpool_f32). */
enum { GP_LANES = 32 };

typedef struct gp_job {
    const float *x;
    float *y;
    int64_t len;
} gp_job;

MRT_VECTORIZE_CLONES
static float gap_plane(const float *x, int64_t len)
{
    double acc[GP_LANES] = {0};
    int64_t i = 0;
    for (; i + GP_LANES <= len; i += GP_LANES)
        for (int j = 0; j < GP_LANES; j++) acc[j] += (double)x[i + j];
    for (int j = 0; i + j < len; j++) acc[j] += (double)x[i + j];
    for (int width = GP_LANES / 2; width >= 1; width /= 2)
        for (int j = 0; j < width; j++) acc[j] += acc[j + width];
    return len > 0 ? (float)(acc[0] / (double)len) : 0.0f;
}

#ifdef POOL_HAVE_AVX512
/* gap_plane in four vectors of 8 double lanes (lanes 0-7, 8-15, 16-23, 24-31), the same additions in the same
   order: GCC's vectorisation kept the lanes on the stack for the tail and the pairwise sums, which for
   EfficientNet-B0's many small planes (7x7: 49 elements) cost more than the sums (3% of its run). */
__attribute__((target("avx512f"))) static float gap_plane_avx512(const float *x, int64_t len)
{
    __m512d acc[4];
    for (int q = 0; q < 4; q++) acc[q] = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + GP_LANES <= len; i += GP_LANES)
        for (int q = 0; q < 4; q++) acc[q] = _mm512_add_pd(acc[q], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * q)));
    for (int q = 0; q < 4 && i + 8 * q < len; q++) { /* lane j gets x[i + j], j < len - i */
        int64_t left = len - i - 8 * q;
        __mmask8 m = left >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << left) - 1u);
        __m512d v = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)m, x + i + 8 * q)));
        acc[q] = _mm512_mask_add_pd(acc[q], m, acc[q], v);
    }
    acc[0] = _mm512_add_pd(acc[0], acc[2]); /* lane j += lane j + 16 */
    acc[1] = _mm512_add_pd(acc[1], acc[3]);
    acc[0] = _mm512_add_pd(acc[0], acc[1]); /* + 8 */
    __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(acc[0]), _mm512_extractf64x4_pd(acc[0], 1)); /* + 4 */
    __m128d p = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));              /* + 2 */
    double sum = _mm_cvtsd_f64(_mm_add_sd(p, _mm_unpackhi_pd(p, p)));                              /* + 1 */
    return len > 0 ? (float)(sum / (double)len) : 0.0f;
}
#endif

MRT_VECTORIZE_CLONES
static float gmp_plane(const float *x, int64_t len)
{
    if (len <= 0) return 0.0f;
    float best[GP_LANES];
    int nan[GP_LANES];
    for (int j = 0; j < GP_LANES; j++) {
        best[j] = -INFINITY;
        nan[j] = 0;
    }
    int64_t i = 0;
    for (; i + GP_LANES <= len; i += GP_LANES)
        for (int j = 0; j < GP_LANES; j++) {
            float v = x[i + j];
            nan[j] |= v != v;
            best[j] = v > best[j] ? v : best[j];
        }
    for (int j = 0; i + j < len; j++) {
        float v = x[i + j];
        nan[j] |= v != v;
        best[j] = v > best[j] ? v : best[j];
    }
    float m = best[0];
    int any = nan[0];
    for (int j = 1; j < GP_LANES; j++) {
        m = best[j] > m ? best[j] : m;
        any |= nan[j];
    }
    return any ? NAN : m;
}

static void gap_range(void *arg, int64_t begin, int64_t end)
{
    const gp_job *j = arg;
#ifdef POOL_HAVE_AVX512
    if (mrt_cpu_has_avx512f()) {
        for (int64_t pl = begin; pl < end; pl++) j->y[pl] = gap_plane_avx512(j->x + pl * j->len, j->len);
        return;
    }
#endif
    for (int64_t pl = begin; pl < end; pl++) j->y[pl] = gap_plane(j->x + pl * j->len, j->len);
}

static void gmp_range(void *arg, int64_t begin, int64_t end)
{
    const gp_job *j = arg;
    for (int64_t pl = begin; pl < end; pl++) j->y[pl] = gmp_plane(j->x + pl * j->len, j->len);
}

static void global_f32(const mrt_op_ctx *ctx, bool max, int64_t planes, int64_t len, const float *x, float *y)
{
    gp_job j = {x, y, len};
    /* One range per thread from 16K elements, serial below. A global pool is a single pass over memory, so finer
       ranges cost more in hand-over than they save (MobileNetV2's [1,1280,7,7] alone: 0.057 ms serial, 0.086 split
       in 4). But one range per thread reads each thread's part where it was written: the 1x1 conv before a
       classifier's pool splits by channels, and serial, half the input came from the other core's cache (in
       MobileNetV2 on two threads, per-node profile: 17.6-19.5 us serial, 9.6-12.7 split). */
    int64_t threads = ctx && ctx->n_threads > 1 ? ctx->n_threads : 1;
    int64_t grain = planes * len >= 16384 ? (planes + threads - 1) / threads : planes;
    mrt_parallel_for(ctx, planes, grain, max ? gmp_range : gap_range, &j);
}

/* Global pools: the window is the whole spatial extent. */
static mrt_status run_global(mrt_op_ctx *ctx, int kind)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_window w;
    memset(&w, 0, sizeof w);
    w.nsp = x->rank - 2;
    for (int i = 0; i < w.nsp; i++) {
        w.in[i] = w.kernel[i] = x->shape[i + 2];
        w.out[i] = w.stride[i] = w.dilation[i] = 1;
    }
    if (w.nsp == 0) { /* [N, C]: a window of one element */
        w.nsp = 1;
        w.in[0] = w.kernel[0] = w.out[0] = w.stride[0] = w.dilation[0] = 1;
    }
    if (kind <= 1 && x->dtype == MRT_DTYPE_FLOAT && x->rank >= 2) {
        int64_t planes = x->shape[0] * x->shape[1], len = 1;
        for (int i = 2; i < x->rank; i++) len *= x->shape[i];
        global_f32(ctx, kind == 0, planes, len, x->data, mrt_output(ctx, 0)->data);
        return MRT_STATUS_OK;
    }
    if (kind == 0) {
        int64_t planes = x->shape[0] * x->shape[1];
        mrt_tensor *y = mrt_output(ctx, 0);
        switch (x->dtype) {
        case MRT_DTYPE_FLOAT: maxpool_f32(&w, planes, x->data, y->data, NULL, false); return MRT_STATUS_OK;
        case MRT_DTYPE_DOUBLE: maxpool_f64(&w, planes, x->data, y->data, NULL, false); return MRT_STATUS_OK;
        default: break;
        }
        if (!mrt_lin_is_half(x->dtype))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
        float *f[3];
        if (!float_copies(ctx, x, NULL, y, f)) return MRT_STATUS_OUT_OF_MEMORY;
        maxpool_f32(&w, planes, f[0], f[2], NULL, false);
        mrt_lin_narrow(y, f[2]);
        return MRT_STATUS_OK;
    }
    if (kind == 1) return run_avg(ctx, &w, AVG_MEAN, false, 1.0);
    return run_avg(ctx, &w, AVG_LP, false, mrt_attr_float(ctx, "p", 2.0f));
}

static mrt_status mrt_cpu_globalmaxpool(mrt_op_ctx *ctx) { return run_global(ctx, 0); }
static mrt_status mrt_cpu_globalaveragepool(mrt_op_ctx *ctx) { return run_global(ctx, 1); }
static mrt_status mrt_cpu_globallppool(mrt_op_ctx *ctx) { return run_global(ctx, 2); }

/* ------------------------------------------------------------------ MaxRoiPool */

/* Each ROI (batch, x1, y1, x2, y2) is scaled and rounded to input cells, split into pooled_h x pooled_w
   bins (floor/ceil bin edges, clipped to the image); an empty bin gives 0. */
#define ROIPOOL(T, SUF)                                                                                            \
    static mrt_status roipool_##SUF(const mrt_op_ctx *ctx, const mrt_tensor *xt, const T *x, const T *rois,        \
                                    int64_t n_rois, int64_t ph, int64_t pw, double scale, T *y)                    \
    {                                                                                                              \
        int64_t nb = xt->shape[0], c = xt->shape[1], h = xt->shape[2], wd = xt->shape[3];                          \
        for (int64_t r = 0; r < n_rois; r++) {                                                                     \
            const T *roi = rois + r * 5;                                                                           \
            double bd = (double)roi[0];                                                                            \
            if (!(bd >= 0 && bd < (double)nb))                                                                     \
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "roi %lld has batch index %g, outside [0, %lld)",  \
                                   (long long)r, bd, (long long)nb);                                               \
            int64_t b = (int64_t)bd;                                                                               \
            double x1 = round((double)roi[1] * scale), y1 = round((double)roi[2] * scale);                         \
            double x2 = round((double)roi[3] * scale), y2 = round((double)roi[4] * scale);                         \
            double rh = fmax(y2 - y1 + 1, 1.0), rw = fmax(x2 - x1 + 1, 1.0);                                       \
            double bh = rh / (double)ph, bw = rw / (double)pw;                                                     \
            for (int64_t ch = 0; ch < c; ch++) {                                                                   \
                const T *xp = x + (b * c + ch) * h * wd;                                                           \
                T *yp = y + (r * c + ch) * ph * pw;                                                                \
                for (int64_t i = 0; i < ph; i++) {                                                                 \
                    double hs = fmin(fmax(floor((double)i * bh) + y1, 0.0), (double)h);                            \
                    double he = fmin(fmax(ceil((double)(i + 1) * bh) + y1, 0.0), (double)h);                       \
                    for (int64_t j = 0; j < pw; j++) {                                                             \
                        double ws = fmin(fmax(floor((double)j * bw) + x1, 0.0), (double)wd);                       \
                        double we = fmin(fmax(ceil((double)(j + 1) * bw) + x1, 0.0), (double)wd);                  \
                        T best = 0;                                                                                \
                        bool any = false;                                                                          \
                        for (int64_t yy = (int64_t)hs; yy < (int64_t)he; yy++)                                     \
                            for (int64_t xx = (int64_t)ws; xx < (int64_t)we; xx++) {                               \
                                T v = xp[yy * wd + xx];                                                            \
                                if (!any || v > best) best = v;                                                    \
                                any = true;                                                                        \
                            }                                                                                      \
                        yp[i * pw + j] = best;                                                                     \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
        return MRT_STATUS_OK;                                                                                      \
    }
ROIPOOL(float, f32)
ROIPOOL(double, f64)

static mrt_status mrt_cpu_maxroipool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *rois = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t ph = y->shape[2], pw = y->shape[3], n = rois->shape[0];
    double scale = mrt_attr_float(ctx, "spatial_scale", 1.0f);
    switch (x->dtype) {
    case MRT_DTYPE_FLOAT: return roipool_f32(ctx, x, x->data, rois->data, n, ph, pw, scale, y->data);
    case MRT_DTYPE_DOUBLE: return roipool_f64(ctx, x, x->data, rois->data, n, ph, pw, scale, y->data);
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16: {
        float *f[3];
        if (!float_copies(ctx, x, rois, y, f)) return MRT_STATUS_OUT_OF_MEMORY;
        MRT_TRY(roipool_f32(ctx, x, f[0], f[1], n, ph, pw, scale, f[2]));
        mrt_lin_narrow(y, f[2]);
        return MRT_STATUS_OK;
    }
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
    }
}

/* ------------------------------------------------------------------ MaxUnpool */

/* Y = 0 except Y[I[i]] = X.flat[i]. The indices are flat over the shape the attributes infer
   ((in - 1) * stride + kernel - pads); an output_shape input only pads (or crops) that result at the end of
   each dim, as the ONNX reference and backend tests have it. */
static mrt_status mrt_cpu_maxunpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *ind = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y->data) { /* the output_shape input was not constant: size the output now */
        int rank;
        int64_t shape[MRT_MAX_RANK];
        MRT_TRY(mrt_maxunpool_shape(ctx, &rank, shape));
        MRT_TRY(mrt_output_alloc(ctx, 0, x->dtype, rank, shape, &y));
    }
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    int rank = x->rank;
    int64_t inferred[MRT_MAX_RANK], ystride[MRT_MAX_RANK];
    inferred[0] = x->shape[0];
    inferred[1] = x->shape[1];
    for (int d = 0; d < w.nsp; d++) {
        inferred[d + 2] = (w.in[d] - 1) * w.stride[d] + w.kernel[d] - w.pad_begin[d] - w.pad_end[d];
        if (inferred[d + 2] < 0) inferred[d + 2] = 0;
    }
    mrt_shape_strides(rank, y->shape, ystride);
    int64_t n_inferred = prod(rank, inferred);
    bool same = memcmp(inferred, y->shape, (size_t)rank * sizeof(int64_t)) == 0;
    size_t es = (size_t)mrt_dtype_bits(x->dtype) / 8;
    int64_t nx = mrt_tensor_numel(x), ny = mrt_tensor_numel(y);
    memset(y->data, 0, (size_t)ny * es);
    const int64_t *id = ind->data;
    char is[256];
    for (int64_t i = 0; i < nx; i++) {
        int64_t f = id[i];
        if (f < 0 || f >= n_inferred)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'I' has index %lld at %lld, outside the unpooled shape %s",
                               (long long)f, (long long)i, mrt_shape_describe(rank, inferred, is, sizeof is));
        int64_t dst = f;
        if (!same) {
            dst = 0;
            for (int d = rank - 1; d >= 0 && dst >= 0; d--) {
                int64_t c = f % inferred[d];
                f /= inferred[d];
                dst = c < y->shape[d] ? dst + c * ystride[d] : -1;
            }
            if (dst < 0) continue; /* cropped away by a smaller output_shape */
        }
        memcpy((char *)y->data + (size_t)dst * es, (const char *)x->data + (size_t)i * es, es);
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ workspaces (engine/registry.h) */

/* The pools' float copies, for 16-bit floats only (MaxUnpool takes none) */
static mrt_status mrt_cpu_pool_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!mrt_lin_is_half(x->dtype)) return MRT_STATUS_OK;
    const mrt_tensor *rois = strcmp(ctx->node->op_type, "MaxRoiPool") == 0 ? mrt_input(ctx, 1) : NULL;
    int64_t counts[3];
    float_copy_counts(x, rois, mrt_output(ctx, 0), counts);
    return mrt_workspace_request_parts(ctx, 3, counts, sizeof(float));
}

const mrt_kernel mrt_cpu_kernels_pool[] = {
    {"", "MaxPool", 1, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "MaxPool", 8, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "MaxPool", 10, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "MaxPool", 11, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "MaxPool", 12, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "MaxPool", 22, mrt_cpu_maxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 1, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 7, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 10, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 11, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 19, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "AveragePool", 22, mrt_cpu_avgpool, NULL, NULL, NULL, MRT_KERNEL_INPUT_PAD | MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "LpPool", 1, mrt_cpu_lppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "LpPool", 2, mrt_cpu_lppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "LpPool", 11, mrt_cpu_lppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "LpPool", 18, mrt_cpu_lppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "LpPool", 22, mrt_cpu_lppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "GlobalAveragePool", 1, mrt_cpu_globalaveragepool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "GlobalAveragePool", 22, mrt_cpu_globalaveragepool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "GlobalMaxPool", 1, mrt_cpu_globalmaxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "GlobalMaxPool", 22, mrt_cpu_globalmaxpool, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_pool_workspace},
    {"", "GlobalLpPool", 1, mrt_cpu_globallppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "GlobalLpPool", 2, mrt_cpu_globallppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "GlobalLpPool", 22, mrt_cpu_globallppool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "MaxRoiPool", 1, mrt_cpu_maxroipool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "MaxRoiPool", 22, mrt_cpu_maxroipool, NULL, NULL, NULL, 0, mrt_cpu_pool_workspace},
    {"", "MaxUnpool", 9, mrt_cpu_maxunpool, NULL},
    {"", "MaxUnpool", 11, mrt_cpu_maxunpool, NULL},
    {"", "MaxUnpool", 22, mrt_cpu_maxunpool, NULL},
    {0},
};
