/* CPU kernels: Conv 1/11/22 and ConvTranspose 1/11/22 (N-D, groups), ConvInteger 10 (uint8/int8, int32 im2col +
 * naive GEMM).
 * Conv float32: 2-D depthwise convolutions are computed directly (ops_cpu/conv_depthwise.c), 3x3 stride-1 ones by
 * Winograd's F(2x2, 3x3) (ops_cpu/conv_winograd.c, when ops_cpu/conv_workspace.c's rule takes them); everything else
 * runs on minirt's GEMM (ops_cpu/sgemm.h) with the weights packed once per plan (prepare) and the image gathered
 * straight into B's panels (im2col fused into packing), applying the bias and any fused epilogue (engine/fuse.c) in
 * cache; 2-D convs with few input channels (stems) read B's rows in place from padded copies of the input rows
 * instead (conv_rows), with the GEMM's tile and chains; kernel offsets that read only padding for a band of output
 * rows (dilations as large as the image) are dropped there, each k block of the full product a GEMM of its own
 * (ops_cpu/conv_live_taps.c), with the same bits; grouped convs with 4 or more output channels per group compute the GEMM's
 * chains with the channels as vector lanes (ops_cpu/conv_grouped.c).
 * Conv float64 and float16/bfloat16 (computed in float), and ConvTranspose: im2col (or col2im) + OpenBLAS, 1x1
 * stride-1 unpadded convs as a plain GEMM. Their buffers live in the workspace the plan reserves
 * (ops_cpu/conv_workspace.c sizes it): nothing is allocated per call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu/conv_workspace.h"
#include "engine/registry.h"
#include "ops_cpu/conv_depthwise.h"
#include "ops_cpu/conv_gemm.h"
#include "ops_cpu/conv_grouped.h"
#include "ops_cpu/conv_live_taps.h"
#include "ops_cpu/conv_pointwise.h"
#include "ops_cpu/conv_winograd.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/linear.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

#ifdef MRT_HAVE_AVX512_INTRINSICS
#define CONV_HAVE_AVX512 1
#endif

/* Advance a row-major multi-index over dims[0..n); returns false after the last one. */
static bool odometer_next(int n, int64_t *idx, const int64_t *dims)
{
    for (int i = n - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) return true;
        idx[i] = 0;
    }
    return false;
}

/* Row geometry of one (kernel offset, outer output position) pair: the input row it reads and the range
   [lo, hi) of last-dim outputs that land inside the input. Returns false when the row is all padding. */
typedef struct row_geom {
    int64_t base; /* offset of input element (outer position, last-dim position koff) */
    int64_t lo, hi;
} row_geom;

/* The last axis for kernel offset k: input position koff + o * s for output o, inside the input for o in [lo, hi). */
static void last_axis_range(const mrt_window *w, int64_t k, int64_t *koff, int64_t *lo, int64_t *hi)
{
    int last = w->nsp - 1;
    int64_t s = w->stride[last], in_last = w->in[last], out_last = w->out[last];
    *koff = k * w->dilation[last] - w->pad_begin[last];
    *lo = *koff >= 0 ? 0 : (-*koff + s - 1) / s;
    *hi = in_last - *koff <= 0 ? 0 : (in_last - *koff - 1) / s + 1;
    if (*lo > out_last) *lo = out_last;
    if (*hi > out_last) *hi = out_last;
    if (*hi < *lo) *hi = *lo;
}

static bool row_of(const mrt_window *w, const int64_t *kidx, const int64_t *oidx, row_geom *r)
{
    int last = w->nsp - 1;
    int64_t off = 0;
    for (int i = 0; i < last; i++) {
        int64_t pos = oidx[i] * w->stride[i] - w->pad_begin[i] + kidx[i] * w->dilation[i];
        if (pos < 0 || pos >= w->in[i]) return false;
        off = off * w->in[i] + pos;
    }
    int64_t koff;
    last_axis_range(w, kidx[last], &koff, &r->lo, &r->hi);
    r->base = off * w->in[last] + koff;
    return true;
}

/* im2col: col[(c*K + k) * out_numel + o] = img[c][window k of output o], 0 in padding.
   col2im: the adjoint, img[c][window k of o] += col[...] (img pre-filled by the caller). */
#define IM2COL(T, SUF)                                                                                             \
    static void im2col_##SUF(const T *img, int64_t channels, const mrt_window *w, T *col)                          \
    {                                                                                                              \
        int nsp = w->nsp, last = nsp - 1;                                                                          \
        int64_t in_numel = mrt_dims_numel(nsp, w->in), out_numel = mrt_dims_numel(nsp, w->out), kn = mrt_dims_numel(nsp, w->kernel);             \
        if (out_numel == 0) return;                                                                                \
        int64_t out_last = w->out[last], outer = out_numel / out_last, s = w->stride[last];                        \
        for (int64_t c = 0; c < channels; c++) {                                                                   \
            const T *im = img + c * in_numel;                                                                      \
            int64_t kidx[MRT_MAX_RANK] = {0};                                                                      \
            for (int64_t k = 0; k < kn; k++, odometer_next(nsp, kidx, w->kernel)) {                                \
                T *dst = col + (c * kn + k) * out_numel;                                                           \
                int64_t oidx[MRT_MAX_RANK] = {0};                                                                  \
                for (int64_t ob = 0; ob < outer; ob++, odometer_next(last, oidx, w->out)) {                        \
                    T *d = dst + ob * out_last;                                                                    \
                    row_geom r;                                                                                    \
                    if (!row_of(w, kidx, oidx, &r)) {                                                              \
                        memset(d, 0, (size_t)out_last * sizeof(T));                                                \
                        continue;                                                                                  \
                    }                                                                                              \
                    const T *src = im + r.base;                                                                    \
                    for (int64_t o = 0; o < r.lo; o++) d[o] = 0;                                                   \
                    if (s == 1) memcpy(d + r.lo, src + r.lo, (size_t)(r.hi - r.lo) * sizeof(T));                   \
                    else                                                                                           \
                        for (int64_t o = r.lo; o < r.hi; o++) d[o] = src[o * s];                                   \
                    for (int64_t o = r.hi; o < out_last; o++) d[o] = 0;                                            \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
    }
#define COL2IM(T, SUF)                                                                                             \
    static void col2im_##SUF(const T *col, int64_t channels, const mrt_window *w, T *img)                          \
    {                                                                                                              \
        int nsp = w->nsp, last = nsp - 1;                                                                          \
        int64_t in_numel = mrt_dims_numel(nsp, w->in), out_numel = mrt_dims_numel(nsp, w->out), kn = mrt_dims_numel(nsp, w->kernel);             \
        if (out_numel == 0) return;                                                                                \
        int64_t out_last = w->out[last], outer = out_numel / out_last, s = w->stride[last];                        \
        for (int64_t c = 0; c < channels; c++) {                                                                   \
            T *im = img + c * in_numel;                                                                            \
            int64_t kidx[MRT_MAX_RANK] = {0};                                                                      \
            for (int64_t k = 0; k < kn; k++, odometer_next(nsp, kidx, w->kernel)) {                                \
                const T *srcrow = col + (c * kn + k) * out_numel;                                                  \
                int64_t oidx[MRT_MAX_RANK] = {0};                                                                  \
                for (int64_t ob = 0; ob < outer; ob++, odometer_next(last, oidx, w->out)) {                        \
                    row_geom r;                                                                                    \
                    if (!row_of(w, kidx, oidx, &r)) continue;                                                      \
                    const T *src = srcrow + ob * out_last;                                                         \
                    T *d = im + r.base;                                                                            \
                    for (int64_t o = r.lo; o < r.hi; o++) d[o * s] += src[o];                                      \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
    }
IM2COL(float, f32)
IM2COL(double, f64)
IM2COL(int32_t, i32)
COL2IM(float, f32)
COL2IM(double, f64)

/* ------------------------------------------------------------------ Conv */

#define CONV_FLOAT(T, SUF, GEMM)                                                                                   \
    static void conv_##SUF(const mrt_conv_params *p, const T *x, const T *w, const T *b, T *y, T *col)             \
    {                                                                                                              \
        const mrt_window *win = &p->win;                                                                           \
        int64_t in_numel = mrt_dims_numel(win->nsp, win->in), out_numel = mrt_dims_numel(win->nsp, win->out);                          \
        int64_t cg = p->c / p->group, mg = p->m / p->group, kn = p->kernel_numel, ck = cg * kn;                    \
        bool pw = mrt_conv_is_pointwise(win);                                                                               \
        for (int64_t n = 0; n < p->n; n++)                                                                         \
            for (int64_t g = 0; g < p->group; g++) {                                                               \
                const T *xg = x + (n * p->c + g * cg) * in_numel;                                                  \
                const T *wg = w + g * mg * ck;                                                                     \
                T *yg = y + (n * p->m + g * mg) * out_numel;                                                       \
                T beta = 0;                                                                                        \
                if (b) {                                                                                           \
                    for (int64_t m = 0; m < mg; m++)                                                               \
                        for (int64_t o = 0; o < out_numel; o++) yg[m * out_numel + o] = b[g * mg + m];             \
                    beta = 1;                                                                                      \
                }                                                                                                  \
                if (pw) {                                                                                          \
                    GEMM(false, false, mg, out_numel, cg, (T)1, wg, ck, xg, in_numel, beta, yg, out_numel);        \
                } else {                                                                                           \
                    im2col_##SUF(xg, cg, win, col);                                                                \
                    GEMM(false, false, mg, out_numel, ck, (T)1, wg, ck, col, out_numel, beta, yg, out_numel);      \
                }                                                                                                  \
            }                                                                                                      \
    }
CONV_FLOAT(float, f32, mrt_lin_sgemm)
CONV_FLOAT(double, f64, mrt_lin_dgemm)

/* The planned workspace, carved (see ops_cpu/conv_workspace.h). */
static mrt_status get_workspace(mrt_op_ctx *ctx, const mrt_conv_params *p, bool transpose, mrt_conv_workspace *ws)
{
    size_t bytes;
    if (!mrt_conv_workspace_bytes(p, ctx, transpose, &bytes))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the %s workspace size overflows", transpose ? "col2im" : "im2col");
    void *base = mrt_workspace(ctx, bytes);
    if (!base) return MRT_STATUS_OUT_OF_MEMORY; /* mrt_workspace set the message */
    mrt_conv_workspace_carve(p, ctx, transpose, base, ws);
    return MRT_STATUS_OK;
}

typedef void (*conv_f32_fn)(const mrt_conv_params *, const float *, const float *, const float *, float *, float *);
typedef void (*conv_f64_fn)(const mrt_conv_params *, const double *, const double *, const double *, double *, double *);

/* Conv and ConvTranspose share the dtype dispatch: double and float directly, float16/bfloat16 through the
   workspace's float copies. */
static mrt_status run_typed(mrt_op_ctx *ctx, const mrt_conv_params *p, bool transpose, conv_f32_fn f32, conv_f64_fn f64)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_dtype dt = x->dtype;
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_DOUBLE && !mrt_lin_is_half(dt))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    mrt_conv_workspace ws;
    MRT_TRY(get_workspace(ctx, p, transpose, &ws));
    if (dt == MRT_DTYPE_DOUBLE) {
        f64(p, x->data, w->data, b ? b->data : NULL, y->data, ws.col);
    } else if (dt == MRT_DTYPE_FLOAT) {
        f32(p, x->data, w->data, b ? b->data : NULL, y->data, ws.col);
    } else {
        mrt_lin_widen_into(x, ws.x);
        mrt_lin_widen_into(w, ws.w);
        if (b) mrt_lin_widen_into(b, ws.b);
        f32(p, ws.x, ws.w, b ? ws.b : NULL, ws.y, ws.col);
        mrt_lin_narrow(y, ws.y);
    }
    return MRT_STATUS_OK;
}

/* ---- float32 Conv on minirt's GEMM (ops_cpu/sgemm.h): weights packed once per plan, the image gathered into
   B's panels block by block (im2col fused into packing), bias and the fused epilogue applied in cache. */

/* A run of one panel row that is either copied from the image (src >= 0, every step-th element) or zero. */
typedef struct pack_seg {
    int64_t src;      /* offset in the channel's plane, or -1 for padding */
    int32_t dst, len; /* columns within the panel */
} pack_seg;

/* An output row (a run along the last axis) that a panel's columns cover: worked out once per panel, then used for
   every kernel offset. */
typedef struct panel_row {
    int64_t oidx[MRT_MAX_RANK]; /* the outer output position (every axis but the last) */
    int64_t o0, o1;             /* last-axis outputs [o0, o1) */
    int32_t d0;                 /* the panel column of output o0 */
} panel_row;

/* The rows that columns [jb, je) of B cover (at most NR + 1). */
static int panel_rows(const mrt_window *w, int64_t jb, int64_t je, panel_row *rows)
{
    int last = w->nsp - 1, n = 0;
    int64_t out_last = w->out[last];
    for (int64_t j = jb; j < je; n++) {
        panel_row *r = &rows[n];
        int64_t ob = j / out_last;
        r->o0 = j % out_last;
        r->o1 = r->o0 + (je - j) < out_last ? r->o0 + (je - j) : out_last;
        r->d0 = (int32_t)(j - jb);
        for (int i = last - 1; i >= 0; i--) {
            r->oidx[i] = ob % w->out[i];
            ob /= w->out[i];
        }
        j += r->o1 - r->o0;
    }
    return n;
}

/* The runs that make up the panel's columns for kernel offset kidx: the same for every input channel, so they
   are worked out once per (panel, kernel offset) and replayed for each channel. Returns the count (at most
   3 per row). */
static int panel_segments(const mrt_window *w, const int64_t *kidx, const panel_row *rows, int n_rows, pack_seg *seg)
{
    int last = w->nsp - 1, n = 0;
    int64_t s = w->stride[last];
    int64_t koff, glo, ghi; /* the last axis depends on the kernel offset only */
    last_axis_range(w, kidx[last], &koff, &glo, &ghi);
    for (int r = 0; r < n_rows; r++) {
        int64_t o0 = rows[r].o0, o1 = rows[r].o1, off = 0;
        int32_t d0 = rows[r].d0;
        bool inside = true;
        for (int i = 0; i < last && inside; i++) {
            int64_t pos = rows[r].oidx[i] * w->stride[i] - w->pad_begin[i] + kidx[i] * w->dilation[i];
            inside = pos >= 0 && pos < w->in[i];
            off = off * w->in[i] + pos;
        }
        if (!inside) {
            seg[n++] = (pack_seg){-1, d0, (int32_t)(o1 - o0)};
            continue;
        }
        int64_t base = off * w->in[last] + koff;
        int64_t lo = glo > o0 ? glo : o0, hi = ghi < o1 ? ghi : o1;
        if (lo > o1) lo = o1;
        if (hi < lo) hi = lo;
        if (lo > o0) seg[n++] = (pack_seg){-1, d0, (int32_t)(lo - o0)};
        if (hi > lo) seg[n++] = (pack_seg){base + lo * s, (int32_t)(d0 + lo - o0), (int32_t)(hi - lo)};
        if (o1 > hi) seg[n++] = (pack_seg){-1, (int32_t)(d0 + hi - o0), (int32_t)(o1 - hi)};
    }
    return n;
}

#ifdef CONV_HAVE_AVX512
/* A panel row (last-axis stride 1 or 2) as masked vector loads: vector v (columns 16v..16v+15) merges up to
   RUNS_MAX runs, run r giving lane l the value im[off[v][r] + s * l] for the lanes set in lanes[v][r]; lanes in no
   run (padding) are 0. Stride 1 loads those lanes directly; stride 2 loads the 32 floats the run spans (only the
   even ones it needs: lo/hi masks) and keeps the even ones with a permute. Built once per (panel, kernel offset)
   from the segments and replayed for every channel: a few instructions per vector where memcpy/memset calls per
   segment were 12% of ResNet-18's run. */
enum { PANEL_VECS = MRT_SGEMM_NR / 16, RUNS_MAX = 4 };
typedef struct panel_loads {
    int n[PANEL_VECS];
    int64_t off[PANEL_VECS][RUNS_MAX];
    __mmask16 lanes[PANEL_VECS][RUNS_MAX];
    __mmask16 lo[PANEL_VECS][RUNS_MAX], hi[PANEL_VECS][RUNS_MAX]; /* stride 2: the elements of each half */
} panel_loads;

/* bit i of b (8 bits) to bit 2i */
static unsigned spread_even(unsigned b)
{
    b = (b | b << 4) & 0x0F0Fu;
    b = (b | b << 2) & 0x3333u;
    return (b | b << 1) & 0x5555u;
}

/* false when a vector needs more than RUNS_MAX runs (rows under 8 outputs wide): the caller copies segments */
static bool panel_loads_of(const pack_seg *seg, int n_seg, int64_t stride, panel_loads *pl)
{
    memset(pl->n, 0, sizeof pl->n);
    for (int i = 0; i < n_seg; i++) {
        if (seg[i].src < 0) continue;
        int32_t d0 = seg[i].dst, d1 = seg[i].dst + seg[i].len;
        for (int v = d0 / 16; v < PANEL_VECS && 16 * v < d1; v++) {
            int l0 = d0 > 16 * v ? d0 - 16 * v : 0, l1 = d1 < 16 * v + 16 ? d1 - 16 * v : 16, r = pl->n[v];
            if (r == RUNS_MAX) return false;
            unsigned lanes = ((1u << l1) - 1) & ~((1u << l0) - 1);
            pl->off[v][r] = seg[i].src + (16 * v - d0) * stride;
            pl->lanes[v][r] = (__mmask16)lanes;
            pl->lo[v][r] = (__mmask16)spread_even(lanes & 0xFF); /* lane l < 8 reads element 2l of the low half */
            pl->hi[v][r] = (__mmask16)spread_even(lanes >> 8);
            pl->n[v] = r + 1;
        }
    }
    return true;
}

/* Rows of one panel for channels [c_lo, c_hi]: d advances by `step` floats per channel. Masked lanes are not
   read, so offsets before the plane's start or past its end are never dereferenced. */
__attribute__((target("avx512f"))) static void pack_rows_avx512(const panel_loads *pl, int64_t stride,
                                                                 const float *x, int64_t plane, int64_t c_lo,
                                                                 int64_t c_hi, float *d, int64_t step)
{
    for (int64_t c = c_lo; c <= c_hi; c++, d += step) {
        uintptr_t im = (uintptr_t)(x + c * plane);
        for (int v = 0; v < PANEL_VECS; v++) {
            __m512 r = _mm512_setzero_ps();
            for (int k = 0; k < pl->n[v]; k++) {
                const float *p = (const float *)(im + (uintptr_t)pl->off[v][k] * 4);
                if (stride == 1) {
                    r = _mm512_mask_loadu_ps(r, pl->lanes[v][k], p);
                } else {
                    __m512 lo = _mm512_maskz_loadu_ps(pl->lo[v][k], p);
                    __m512 hi = _mm512_maskz_loadu_ps(pl->hi[v][k], p + 16);
                    r = _mm512_mask_mov_ps(r, pl->lanes[v][k], mrt_even16(lo, hi));
                }
            }
            _mm512_store_ps(d + 16 * v, r);
        }
    }
}

#endif

MRT_VECTORIZE_CLONES
void mrt_conv_pack_b(const void *src, int64_t k0, int64_t k1, int64_t j0, int64_t j1, float *dst)
{
    const mrt_conv_src *cs = src;
    const mrt_window *w = cs->w;
    int nsp = w->nsp;
    int64_t s = w->stride[nsp - 1], kc = k1 - k0, kn = cs->kn;
    pack_seg seg[3 * (MRT_SGEMM_NR + 1)];
    panel_row rows[MRT_SGEMM_NR + 1];
#ifdef CONV_HAVE_AVX512
    bool vec = (s == 1 || s == 2) && mrt_cpu_has_avx512f();
#endif
    k0 += cs->k_base;
    k1 += cs->k_base;
    if (nsp == 1 && s == 1 && kn > 8 && !cs->taps) {
        /* 1-D, stride 1, long kernels (wav2vec2's positional Conv: 128 taps, 16 channels a group): below, the runs
           worked out per (panel, tap) are replayed for only K_BLOCK / kn channels (2), and that setup was most of
           the layer (1.9 ms; ORT 0.8). Row kk = (c, tap) of a panel is a contiguous slice of channel c's row with
           zeros outside it: copied directly. */
        for (int64_t jb = j0, q = 0; jb < j1; jb += MRT_SGEMM_NR, q++) {
            int64_t jn = (jb + MRT_SGEMM_NR < j1 ? jb + MRT_SGEMM_NR : j1) - jb, ob = jb + cs->j_base;
            float *panel = dst + q * kc * MRT_SGEMM_NR;
            for (int64_t kk = k0; kk < k1; kk++) {
                int64_t koff, lo, hi;
                last_axis_range(w, kk % kn, &koff, &lo, &hi);
                const float *im = cs->x + kk / kn * cs->in_numel + koff;
                float *d = panel + (kk - k0) * MRT_SGEMM_NR;
                int64_t a = lo - ob, b = hi - ob; /* the columns that read the image */
                a = a < 0 ? 0 : a > jn ? jn : a;
                b = b < a ? a : b > jn ? jn : b;
                for (int64_t j = 0; j < a; j++) d[j] = 0.0f;
                for (int64_t j = a; j < b; j++) d[j] = im[ob + j];
                for (int64_t j = b; j < MRT_SGEMM_NR; j++) d[j] = 0.0f;
            }
        }
        return;
    }
    if (nsp == 2 && s > 2 && !cs->taps && !w->pad_begin[0] && !w->pad_begin[1] && !w->pad_end[0] && !w->pad_end[1]) {
        /* 2-D, no padding, a column stride past 2 (ViT's 16x16/16 and Swin's 4x4/4 patch embeddings): every tap
           reads the image, so column j of row kk = (c, kh, kw) is at a fixed offset of the panel's column j plus
           one of the row's. The runs below, worked out per (panel, tap) and replayed for only three channels, were
           most of the packing (ViT's: 0.1 ms of the Conv's 0.49 on one thread). */
        int64_t W = w->in[1], OW = w->out[1], KW = w->kernel[1];
        for (int64_t jb = j0, q = 0; jb < j1; jb += MRT_SGEMM_NR, q++) {
            int64_t jn = (jb + MRT_SGEMM_NR < j1 ? jb + MRT_SGEMM_NR : j1) - jb;
            float *panel = dst + q * kc * MRT_SGEMM_NR;
            int64_t at[MRT_SGEMM_NR]; /* column j's window corner */
            for (int64_t j = 0; j < jn; j++) {
                int64_t o = jb + cs->j_base + j;
                at[j] = o / OW * w->stride[0] * W + o % OW * s;
            }
            for (int64_t kk = k0; kk < k1; kk++) {
                int64_t tap = kk % kn, kh = tap / KW, kw = tap % KW;
                const float *im = cs->x + kk / kn * cs->in_numel + kh * w->dilation[0] * W + kw * w->dilation[1];
                float *d = panel + (kk - k0) * MRT_SGEMM_NR;
                for (int64_t j = 0; j < jn; j++) d[j] = im[at[j]];
                for (int64_t j = jn; j < MRT_SGEMM_NR; j++) d[j] = 0.0f;
            }
        }
        return;
    }
    for (int64_t jb = j0, q = 0; jb < j1; jb += MRT_SGEMM_NR, q++) {
        int64_t je = jb + MRT_SGEMM_NR < j1 ? jb + MRT_SGEMM_NR : j1;
        float *panel = dst + q * kc * MRT_SGEMM_NR;
        int n_rows = panel_rows(w, jb + cs->j_base, je + cs->j_base, rows);
        int64_t kidx[MRT_MAX_RANK] = {0};
        for (int64_t koff = 0; koff < kn; koff++, odometer_next(nsp, kidx, w->kernel)) {
            if (cs->taps) mrt_conv_kernel_index(w, cs->taps[koff], kidx);
            /* the rows kk = c * kn + koff of this block (koff: the tap) */
            int64_t c_lo = k0 > koff ? (k0 - koff + kn - 1) / kn : 0, c_hi = k1 > koff ? (k1 - 1 - koff) / kn : -1;
            if (c_hi < c_lo) continue;
            int n = panel_segments(w, kidx, rows, n_rows, seg);
#ifdef CONV_HAVE_AVX512
            panel_loads pl;
            if (vec && panel_loads_of(seg, n, s, &pl)) {
                float *d = panel + (c_lo * kn + koff - k0) * MRT_SGEMM_NR;
                pack_rows_avx512(&pl, s, cs->x, cs->in_numel, c_lo, c_hi, d, kn * MRT_SGEMM_NR);
                continue;
            }
#endif
            for (int64_t c = c_lo; c <= c_hi; c++) {
                const float *im = cs->x + c * cs->in_numel;
                float *d = panel + (c * kn + koff - k0) * MRT_SGEMM_NR;
                for (int i = 0; i < n; i++) {
                    float *dd = d + seg[i].dst;
                    if (seg[i].src < 0) memset(dd, 0, (size_t)seg[i].len * sizeof(float));
                    else if (s == 1) memcpy(dd, im + seg[i].src, (size_t)seg[i].len * sizeof(float));
                    else if (s == 2) /* a constant stride the compiler vectorises (stride-2 stems and downsamplers) */
                        for (int32_t o = 0; o < seg[i].len; o++) dd[o] = im[seg[i].src + 2 * o];
                    else
                        for (int32_t o = 0; o < seg[i].len; o++) dd[o] = im[seg[i].src + o * s];
                }
                for (int64_t j = je - jb; j < MRT_SGEMM_NR; j++) d[j] = 0.0f;
            }
        }
    }
}

/* A pointwise Conv's B with a BatchNormalization [-> Relu] fused in before it (mrt_prologue): B(c, j) =
   mrt_bn_apply_f32(x[c, j], bn[c]) [then Relu's formula], what ops_cpu/norm.c's kernel writes, so the same bits */
typedef struct bn_src {
    const float *x;     /* the image: [channels, in_numel] */
    int64_t in_numel;
    const mrt_bn_coef *bn;
    bool relu;
} bn_src;

MRT_VECTORIZE_CLONES
static void conv_pack_bn(const void *src, int64_t k0, int64_t k1, int64_t j0, int64_t j1, float *dst)
{
    const bn_src *bs = src;
    int64_t kc = k1 - k0;
    for (int64_t jb = j0, q = 0; jb < j1; jb += MRT_SGEMM_NR, q++) {
        int64_t cols = j1 - jb < MRT_SGEMM_NR ? j1 - jb : MRT_SGEMM_NR;
        float *d = dst + q * kc * MRT_SGEMM_NR;
        for (int64_t kk = k0; kk < k1; kk++, d += MRT_SGEMM_NR) {
            const float *s = bs->x + kk * bs->in_numel + jb;
            mrt_bn_coef k = bs->bn[kk];
            if (bs->relu)
                for (int64_t j = 0; j < cols; j++) {
                    float v = mrt_bn_apply_f32(s[j], k);
                    d[j] = v < 0.0f ? 0.0f : v; /* as Relu: NaN and -0 pass */
                }
            else
                for (int64_t j = 0; j < cols; j++) d[j] = mrt_bn_apply_f32(s[j], k);
            for (int64_t j = cols; j < MRT_SGEMM_NR; j++) d[j] = 0.0f;
        }
    }
}

static mrt_status mrt_cpu_conv_prepare(mrt_op_ctx *ctx, void **state)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1);
    if (!mrt_conv_uses_sgemm(&p, x->dtype) || !w->data) return MRT_STATUS_OK; /* W computed at run time: packed then */
    if (!ctx->no_winograd && mrt_conv_winograd_floats(&p, x->dtype, true, 1) > 0) { /* W's transform (conv_winograd.h) */
        float *packed, *tmp = malloc((size_t)(p.m * p.c) * sizeof(float));
        mrt_status st = tmp ? mrt_sgemm_alloc_packed(ctx, mrt_winograd_packed_floats(p.m, p.c), &packed)
                            : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "no memory for the weights' transform");
        if (!st) {
            mrt_winograd_pack_weights(w->data, p.m, p.c, tmp, packed);
            *state = packed;
            ctx->prepared_inputs |= 1u << 1; /* mrt_conv_winograd reads the transform only when it is given */
        }
        free(tmp);
        return st;
    }
    /* with a state, mrt_cpu_conv takes the path prepare chose, and each of these reads W packed only: the model's W
       may go. The grouped lanes first, as mrt_cpu_conv asks (they take some one-group Convs too). */
    if (mrt_conv_grouped_floats(&p, x->dtype, 1) > 0) { /* W's columns as vectors (conv_grouped.h) */
        float *packed;
        MRT_TRY(mrt_sgemm_alloc_packed(ctx, mrt_conv_grouped_packed_floats(&p), &packed));
        mrt_conv_grouped_pack_weights(&p, w->data, packed);
        *state = packed;
        ctx->prepared_inputs |= 1u << 1; /* mrt_conv_grouped is given the packed W only */
        return MRT_STATUS_OK;
    }
    if (mrt_conv_live_taps_path(&p, x->dtype)) {
        MRT_TRY(mrt_conv_live_taps_prepare(ctx, &p, w->data, state));
        ctx->prepared_inputs |= 1u << 1; /* conv_live_taps reads the state only */
        return MRT_STATUS_OK;
    }
    if (mrt_conv_pointwise_lanes_floats(&p, x->dtype, 1) > 0) { /* W's columns as vectors (conv_pointwise.h) */
        float *packed;
        MRT_TRY(mrt_sgemm_alloc_packed(ctx, mrt_conv_pointwise_lanes_packed_floats(&p), &packed));
        mrt_conv_pointwise_lanes_pack_weights(&p, w->data, packed);
        *state = packed;
        ctx->prepared_inputs |= 1u << 1; /* mrt_conv_pointwise_lanes is given the packed W only */
        return MRT_STATUS_OK;
    }
    int64_t mg = p.m / p.group, ck = p.c / p.group * p.kernel_numel, gf = mrt_sgemm_packed_a_floats(mg, ck);
    float *packed; /* W packed group by group, gf floats apart */
    MRT_TRY(mrt_sgemm_alloc_packed(ctx, gf * p.group, &packed));
    for (int64_t g = 0; g < p.group; g++) mrt_sgemm_pack_a((const float *)w->data + g * mg * ck, ck, 1, mg, ck, packed + g * gf);
    *state = packed;
    /* conv_sgemm, conv_rows and conv_pointwise_rows read W packed only: the model's W may go */
    ctx->prepared_inputs |= 1u << 1;
    return MRT_STATUS_OK;
}

bool mrt_conv_by_group(const mrt_conv_params *p, int64_t sp, int64_t k, int n_threads)
{
    /* each product small (as MatMul's batches), and enough of them for every thread */
    return n_threads > 1 && p->group > 1 && p->n * p->group >= 2 * n_threads && p->m / p->group * sp * k <= ((int64_t)1 << 21);
}

int64_t mrt_conv_sgemm_floats(const mrt_conv_params *p, int64_t sp, int64_t k, bool w_packed, int n_threads)
{
    int threads = n_threads > 1 ? n_threads : 1;
    if (mrt_conv_by_group(p, sp, k, threads))
        return threads * mrt_sgemm_workspace_floats(p->m / p->group, sp, k, w_packed, false, 1);
    return mrt_sgemm_workspace_floats(p->m / p->group, sp, k, w_packed, false, threads);
}

#ifdef CONV_HAVE_AVX512
/* A 1x1 Conv's last columns past its last 48-wide tile (a 14x14 plane leaves 4, a 7x7 one 1), output channels as
   lanes: each column is a broadcast and each packed A panel's k-th 8 values (8 output channels) one vector, so every
   lane is an output. A tile over them computes 16 lanes per channel for 1 to 4 columns: measured alone, 96 -> 576 at
   14x14 took 0.102 ms and at 12x16 (192 columns, no tail) 0.091; 192 -> 1152 at 7x7 0.102, at 6x8 0.087. Each output
   is the tile's chain: from 0, fma over the k block in order, then + bias; one k block (K <= MRT_SGEMM_K_BLOCK).
   Rows [m_lo, m_hi) (m_lo a multiple of MR) of y [rows][hw], columns [col0, col0 + nt); A packed for one k block,
   panel p (rows p MR..) at a + p MR K; rows past the panel's end are computed from its zero rows and not stored. */
/* columns, pairs of panels (16 channels, a vector) per block, and the most bytes of packed A, input and output
   together: the tail reads all of A again after the tiles, from the 1 MiB L2 while A stays there with the image's
   input and output (MobileNetV2's 160 -> 960 at 7x7, 0.83 MB: 7x7 expansions 417-425 -> 402-419 us), from L3
   otherwise (MnasNet's 320 -> 1280 at 7x7, 1.9 MB, taken in a trial: 188-196 -> 204-233 us; its 192 -> 1152, 1.15
   MB, gained in quiet rounds and lost 0-12 us in busy ones) */
enum { PW_TAIL_MAX = 4, PW_TAIL_PAIRS = 4, PW_TAIL_MAX_BYTES = 1 << 20 };
__attribute__((target("avx512f"), always_inline)) static inline void pw_tail_block(const float *a, int64_t K,
                                                                                 const float *x, int64_t hw,
                                                                                 int64_t col0, int nt, int np,
                                                                                 int64_t m0, int64_t m_hi,
                                                                                 const float *bias,
                                                                                 const mrt_reg_epilogue *re,
                                                                                 int64_t m_lo, float *y)
{
    enum { L = 2 * MRT_SGEMM_MR };
    __m512 acc[PW_TAIL_PAIRS][PW_TAIL_MAX];
    for (int p = 0; p < np; p++)
        for (int t = 0; t < nt; t++) acc[p][t] = _mm512_setzero_ps();
    /* panel 2p + 1 past the last one (an odd count) reads panel 2p again: computed, not stored */
    int64_t panels = (m_hi - m0 + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR;
    const float *ap = a + m0 * K;
    for (int64_t kk = 0; kk < K; kk++) {
        __m512 bv[PW_TAIL_MAX];
        for (int t = 0; t < nt; t++) bv[t] = _mm512_set1_ps(x[kk * hw + col0 + t]);
        for (int p = 0; p < np; p++) {
            const float *lo = ap + 2 * p * MRT_SGEMM_MR * K + kk * MRT_SGEMM_MR;
            const float *hi = 2 * p + 1 < panels ? lo + MRT_SGEMM_MR * K : lo;
            __m512 av = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_load_pd((const double *)lo)),
                                                            _mm256_load_pd((const double *)hi), 1));
            for (int t = 0; t < nt; t++) acc[p][t] = _mm512_fmadd_ps(av, bv[t], acc[p][t]);
        }
    }
    for (int p = 0; p < np; p++) {
        int64_t r0 = m0 + p * L;
        int rows = (int)(m_hi - r0 < L ? m_hi - r0 : L);
        _Alignas(64) float v[PW_TAIL_MAX][L], bl[L] = {0}; /* bl: the rows' biases */
        for (int i = 0; bias && i < rows; i++) bl[i] = bias[r0 + i];
        for (int t = 0; t < nt; t++) {
            __m512 r = acc[p][t];
            if (bias) r = _mm512_add_ps(r, _mm512_load_ps(bl));
            _mm512_store_ps(v[t], r);
        }
        for (int i = 0; i < rows; i++)
            for (int t = 0; t < nt; t++) {
                float r = v[t][i];
                if (re) { /* mrt_reg_epilogue16's ops on one result (see ops_cpu/epilogue.h) */
                    int64_t ri = r0 + i - m_lo;
                    if (re->bn) r = mrt_bn_apply_f32(r, re->bn[ri]);
                    if (re->other) r = r + re->other[ri * hw + t];
                    r = re->lo > r ? re->lo : r;
                    r = re->hi < r ? re->hi : r;
                }
                y[(r0 + i) * hw + col0 + t] = r;
            }
    }
}

/* re: the epilogue when it can go in registers (mrt_reg_epilogue_of for channel m_lo and the flat index of
   (m_lo, col0)), applied to each result before it is stored; NULL leaves it to the caller's pass */
__attribute__((target("avx512f"))) static void pw_tail_lanes(const float *a, int64_t K, const float *x, int64_t hw,
                                                             int64_t col0, int nt, int64_t m_lo, int64_t m_hi,
                                                             const float *bias, const mrt_reg_epilogue *re, float *y)
{
    enum { BLOCK = PW_TAIL_PAIRS * 2 * MRT_SGEMM_MR };
    for (int64_t m0 = m_lo; m0 < m_hi; m0 += BLOCK) {
        int64_t rows = m_hi - m0 < BLOCK ? m_hi - m0 : BLOCK;
        int np = (int)((rows + 2 * MRT_SGEMM_MR - 1) / (2 * MRT_SGEMM_MR));
        /* the column count a constant in each call, so the loops unroll */
        switch (nt) {
        case 1: pw_tail_block(a, K, x, hw, col0, 1, np, m0, m_hi, bias, re, m_lo, y); break;
        case 2: pw_tail_block(a, K, x, hw, col0, 2, np, m0, m_hi, bias, re, m_lo, y); break;
        case 3: pw_tail_block(a, K, x, hw, col0, 3, np, m0, m_hi, bias, re, m_lo, y); break;
        default: pw_tail_block(a, K, x, hw, col0, 4, np, m0, m_hi, bias, re, m_lo, y); break;
        }
    }
}
#endif

/* The product of image n, group g: serial with ctx NULL (a task of conv_groups_range), else split over ctx's threads */
typedef struct conv_group_job {
    const mrt_conv_params *p;
    const mrt_tensor *x, *w, *b;
    float *y, *ws;
    const float *packed;
    const mrt_prologue *pro;
    const mrt_epilogue *ep;
    int64_t slot_floats;
} conv_group_job;

static void conv_one_group(const mrt_op_ctx *ctx, const conv_group_job *j, int64_t n, int64_t g, float *ws)
{
    const mrt_conv_params *p = j->p;
    const mrt_window *win = &p->win;
    int64_t in_numel = mrt_dims_numel(win->nsp, win->in), out_numel = mrt_dims_numel(win->nsp, win->out);
    int64_t cg = p->c / p->group, mg = p->m / p->group, ck = cg * p->kernel_numel;
    const float *xg = (const float *)j->x->data + (n * p->c + g * cg) * in_numel;
    mrt_conv_src src = {xg, win, p->kernel_numel, in_numel};
    bn_src bsrc = {xg, in_numel, j->pro ? j->pro->bn : NULL, j->pro && j->pro->relu};
    mrt_sgemm_b bs = {0};
    if (bsrc.bn) { /* the image through the fused BatchNormalization (pointwise, one group: mrt_cpu_conv checks) */
        bs.pack = conv_pack_bn;
        bs.pack_src = &bsrc;
    } else if (mrt_conv_is_pointwise(win)) { /* B is the image itself: [cg, spatial], times the fused input scale */
        bs.b = xg;
        bs.rs = in_numel;
        bs.cs = 1;
        if (j->pro) {
            bs.row_scale = j->pro->scale + n * j->pro->batch_stride;
            bs.row_scale_stride = j->pro->channel_stride;
        }
    } else {
        bs.pack = mrt_conv_pack_b;
        bs.pack_src = &src;
    }
    int64_t row0 = n * p->m + g * mg;
    mrt_sgemm_out out = {.c = j->y + row0 * out_numel, .ldc = out_numel,
                         .bias = j->b ? (const float *)j->b->data + g * mg : NULL, .ep = j->ep,
                         .ep_channel0 = g * mg, .ep_at0 = row0 * out_numel};
    const float *wg = j->packed ? NULL : (const float *)j->w->data + g * mg * ck; /* W may be gone once packed */
    const float *pg = j->packed ? j->packed + g * mrt_sgemm_packed_a_floats(mg, ck) : NULL;
#ifdef CONV_HAVE_AVX512
    /* on one thread, a 1x1's 1-4 columns past its last full tile by channels as lanes (pw_tail_lanes), with k in one
       block and an epilogue that goes in registers: 7x7 planes, 48 + 1 columns (192 -> 1152 alone: 0.102 ms, at
       6x8 0.087). On two threads the GEMM's split stays as it is. */
    int tail = (int)(out_numel % MRT_SGEMM_NR);
    mrt_reg_epilogue te;
    if (ctx && ctx->n_threads <= 1 && mrt_conv_is_pointwise(win) && !j->pro && pg && tail >= 1 && tail <= PW_TAIL_MAX &&
        out_numel > MRT_SGEMM_NR && ck <= MRT_SGEMM_K_BLOCK &&
        (mrt_sgemm_packed_a_floats(mg, ck) + (ck + mg) * out_numel) * (int64_t)sizeof(float) <= PW_TAIL_MAX_BYTES &&
        mrt_cpu_has_avx512f() &&
        (!j->ep || mrt_reg_epilogue_of(j->ep, g * mg, row0 * out_numel + out_numel - tail, &te))) {
        mrt_sgemm_run(ctx, mg, out_numel - tail, ck, pg, NULL, ck, 1, &bs, &out, ws);
        pw_tail_lanes(pg, ck, xg, out_numel, out_numel - tail, tail, 0, mg, out.bias, j->ep ? &te : NULL, out.c);
        return;
    }
#endif
    mrt_sgemm_run(ctx, mg, out_numel, ck, pg, wg, ck, 1, &bs, &out, ws);
}

static void conv_groups_range(void *arg, int64_t t0, int64_t t1)
{
    const conv_group_job *j = arg;
    float *ws = j->ws + (int64_t)mrt_thread_index() * j->slot_floats;
    for (int64_t t = t0; t < t1; t++) conv_one_group(NULL, j, t / j->p->group, t % j->p->group, ws);
}

static mrt_status conv_sgemm(mrt_op_ctx *ctx, const mrt_conv_params *p)
{
    const mrt_window *win = &p->win;
    int64_t out_numel = mrt_dims_numel(win->nsp, win->out), ck = p->c / p->group * p->kernel_numel;
    conv_group_job j = {p, mrt_input(ctx, 0), mrt_input(ctx, 1), mrt_input(ctx, 2), mrt_output(ctx, 0)->data, NULL,
                        ctx->kernel_state /* W per group (prepare), or NULL */, ctx->prologue /* only on a pointwise
                        float Conv (mrt_cpu_conv checks) */, ctx->epilogue, 0};
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    j.ws = mrt_workspace(ctx, (size_t)mrt_conv_sgemm_floats(p, out_numel, ck, j.packed != NULL, threads) * sizeof(float));
    if (!j.ws) return MRT_STATUS_OUT_OF_MEMORY;
    if (mrt_conv_by_group(p, out_numel, ck, threads)) {
        j.slot_floats = mrt_sgemm_workspace_floats(p->m / p->group, out_numel, ck, j.packed != NULL, false, 1);
        mrt_parallel_for(ctx, p->n * p->group, 1, conv_groups_range, &j);
        return MRT_STATUS_OK;
    }
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->group; g++) conv_one_group(ctx, &j, n, g, j.ws);
    return MRT_STATUS_OK;
}

#ifdef CONV_HAVE_AVX512
/* ---- few input channels (stems): B read in place from padded input rows.
   With 3 input channels, packing B (im2col) was a third of ResNet-18's 7x7/2 stem: each packing plan is replayed
   for only 3 channels. Here every input row is copied once into zero-padded "phase rows" (stride 2: the even and
   the odd columns apart, so a tap reads 16 consecutive floats), and each output row's tiles read their B rows
   straight from them (mrt_sgemm_tile_rows): row k = (c, kh, kw) of the tile for output columns [ow0, ow0 + 48)
   is phase (kw dw) % S of input row oh sh - pad + kh dh, from element ow0 + (kw dw) / S. The same chains as the
   GEMM path (one k block), so the same bits. */
typedef struct rows_job {
    const mrt_conv_params *p;
    const float *x, *a, *bias;
    float *y, *rows;
    const mrt_epilogue *ep;
    int64_t S, lp, k, block_rows, threads;
    int64_t at0; /* flat output index of the image's first output (the epilogue's residual is indexed by it) */
} rows_job;

/* Input row ih of channel c as phase rows at d: element i of phase f is padded column S i + f */
__attribute__((target("avx512f"))) static void rows_fill(const rows_job *j, int64_t c, int64_t ih, float *d)
{
    const mrt_window *w = &j->p->win;
    int64_t W = w->in[1], pw = w->pad_begin[1];
    const float *xr = j->x + (c * w->in[0] + ih) * W;
    for (int64_t i0 = 0; i0 < j->lp; i0 += 16) {
        int64_t c0 = j->S * i0 - pw; /* the input column of element i0 of phase 0 */
        __m512 v = _mm512_maskz_loadu_ps(mrt_mask16_inside(c0, W), xr + c0);
        if (j->S == 1) {
            _mm512_store_ps(d + i0, v);
        } else {
            __m512 u = _mm512_maskz_loadu_ps(mrt_mask16_inside(c0 + 16, W), xr + c0 + 16);
            _mm512_store_ps(d + i0, mrt_even16(v, u));
            _mm512_store_ps(d + j->lp + i0, mrt_odd16(v, u));
        }
    }
}

/* The image's output rows [t0, t1), in blocks of MRT_CONV_ROWS_BLOCK rows: first the phase rows the block reads,
   into this thread's slot (a block's rows, 101 KB for a 3x3/2 stem of 3 channels at 224: they stay in L2); then
   each panel of MR output channels over all the block's rows, then the next panel, then the block's epilogue. The
   phase rows of the whole image, filled by all threads before the tiles, took a second hand-off on two threads,
   and each thread read rows the other had filled: SqueezeNet inside the model on two threads, per-node medians of
   alternating runs, its 3x3/2 stem 222 -> 206 us and the MaxPool after it 104 -> 95; MnasNet's stem 132 -> 130 and
   the depthwise conv after it 86 -> 73 (one thread: the same). A channel's rows are contiguous, so
   the tiles write MR long runs at a time; all output channels row by row wrote 32 short runs at once, which the
   hardware prefetchers do not follow when the output is not in cache (as inside a model: MobileNetV2's 3x3/2 stem,
   minirt_kernels --cold: 0.48 -> 0.32 ms; the same in cache). */

/* Output row oh's columns [0, c1) of the MR-channel panel from m0, in tiles of 48 (the last may be narrower);
   returns whether every tile applied the epilogue */
static bool rows_tiles(const rows_job *j, const float *const *brows, int64_t oh, int64_t m0, int mr, int64_t c1)
{
    const mrt_window *w = &j->p->win;
    int64_t OW = w->out[1], ohw = w->out[0] * OW;
    bool ep_done = true;
    for (int64_t ow0 = 0; ow0 < c1; ow0 += MRT_SGEMM_NR) {
        int nr = (int)(c1 - ow0 < MRT_SGEMM_NR ? c1 - ow0 : MRT_SGEMM_NR);
        ep_done &= mrt_sgemm_tile_rows(j->k, j->a + m0 * j->k, NULL, brows, ow0, j->y + m0 * ohw + oh * OW + ow0, ohw,
                                       false, mr, nr, j->bias ? j->bias + m0 : NULL, j->ep, m0,
                                       j->at0 + m0 * ohw + oh * OW + ow0);
    }
    return ep_done;
}

/* The input rows the next block reads, fetched into L2 a few lines at a time while this block's tiles run: a
   block's fill reads three short runs of rows (one per channel, 29 KB at 224), which inside a model come from
   memory (the image was written one inference ago) and which the hardware prefetchers only start on; then the
   fill waited on them (MnasNet's 3x3/2 stem inside the model, 1 thread: ~0.20 ms, 0.11 run a second time).
   Per-node medians of alternating runs, 1 thread: MnasNet's stem 217 -> 173 us, SqueezeNet's 362 -> 320,
   EfficientNet-B0's (SiLU fused) 384 -> 321. */
typedef struct rows_pf {
    const float *x;
    int64_t c, C, plane, lo, n, at; /* channel c's rows start at x + c plane + lo; n floats per channel; at: done */
} rows_pf;

static void rows_pf_step(rows_pf *f, int64_t lines)
{
    for (; lines > 0 && f->c < f->C; lines--) {
        _mm_prefetch((const char *)(f->x + f->c * f->plane + f->lo + f->at), _MM_HINT_T1);
        f->at += 16;
        if (f->at >= f->n) f->c++, f->at = 0;
    }
}

static void rows_compute(void *arg, int64_t t0, int64_t t1)
{
    const rows_job *j = arg;
    const mrt_conv_params *p = j->p;
    const mrt_window *w = &p->win;
    int64_t H = w->in[0], OW = w->out[1], KH = w->kernel[0], KW = w->kernel[1];
    int64_t ohw = w->out[0] * OW, row = j->S * j->lp, pt = w->pad_begin[0], R = j->block_rows;
    /* a serial call (threads == 1) may still run on a pool worker, inside another kernel's task */
    float *slot = j->rows + (j->threads > 1 ? (int64_t)mrt_thread_index() : 0) * p->c * R * row;
    const float *zero = j->rows + j->threads * p->c * R * row; /* after the slots */
    const float *brows[MRT_CONV_ROWS_BLOCK][MRT_SGEMM_K_BLOCK];
    for (int64_t b0 = t0; b0 < t1; b0 += MRT_CONV_ROWS_BLOCK) {
        int64_t b1 = b0 + MRT_CONV_ROWS_BLOCK < t1 ? b0 + MRT_CONV_ROWS_BLOCK : t1;
        /* the input rows the block reads, [lo, hi) inside the image: row ih is the slot's row ih - lo */
        int64_t lo = b0 * w->stride[0] - pt, hi = (b1 - 1) * w->stride[0] - pt + (KH - 1) * w->dilation[0] + 1;
        lo = lo < 0 ? 0 : lo;
        hi = hi < H ? hi : H;
        for (int64_t c = 0; c < p->c; c++)
            for (int64_t ih = lo; ih < hi; ih++) rows_fill(j, c, ih, slot + (c * R + ih - lo) * row);
        for (int64_t oh = b0; oh < b1; oh++)
            for (int64_t c = 0, k = 0; c < p->c; c++)
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * w->stride[0] - pt + kh * w->dilation[0];
                    const float *r = ih >= 0 && ih < H ? slot + (c * R + ih - lo) * row : zero;
                    for (int64_t kw = 0; kw < KW; kw++, k++) {
                        int64_t off = kw * w->dilation[1];
                        brows[oh - b0][k] = r + off % j->S * j->lp + off / j->S;
                    }
                }
        bool ep_done = true; /* by every tile, in registers */
        /* rows' last columns when they fit one vector (112 = 2 x 48 + 16): two rows' in one tile */
        int64_t tail = OW % MRT_SGEMM_NR, full = OW - tail;
        bool pair_tails = tail > 0 && tail <= 16;
        /* the next block's input rows [nlo, nhi), spread over this block's rows of panels */
        int64_t n1 = b1 + MRT_CONV_ROWS_BLOCK < t1 ? b1 + MRT_CONV_ROWS_BLOCK : t1;
        int64_t nlo = b1 * w->stride[0] - pt, nhi = (n1 - 1) * w->stride[0] - pt + (KH - 1) * w->dilation[0] + 1;
        nlo = nlo > hi ? nlo : hi; /* the rows this block filled are in cache */
        nhi = nhi < H ? nhi : H;
        rows_pf pf = {j->x, 0, n1 > b1 && nhi > nlo ? p->c : 0, H * w->in[1], nlo * w->in[1],
                      (nhi - nlo) * w->in[1], 0};
        int64_t steps = (p->m + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR * (b1 - b0);
        int64_t per_step = (pf.C * ((pf.n + 15) / 16) + steps - 1) / (steps > 0 ? steps : 1);
        for (int64_t m0 = 0; m0 < p->m; m0 += MRT_SGEMM_MR) {
            int mr = (int)(p->m - m0 < MRT_SGEMM_MR ? p->m - m0 : MRT_SGEMM_MR);
            for (int64_t oh = b0; oh < b1; oh++) {
                rows_pf_step(&pf, oh + 1 < b1 && pair_tails ? 2 * per_step : per_step);
                bool pair = pair_tails && oh + 1 < b1;
                ep_done &= rows_tiles(j, brows[oh - b0], oh, m0, mr, pair ? full : OW);
                if (!pair) continue;
                ep_done &= rows_tiles(j, brows[oh + 1 - b0], oh + 1, m0, mr, full);
                int64_t at = m0 * ohw + oh * OW + full; /* row oh's tail; row oh + 1's is OW further */
                ep_done &= mrt_sgemm_tile_rows_pair(j->k, j->a + m0 * j->k, brows[oh - b0], full, brows[oh + 1 - b0],
                                                    full, j->y + at, j->y + at + OW, ohw, mr, (int)tail, (int)tail,
                                                    j->bias ? j->bias + m0 : NULL, j->ep, m0, j->at0 + at,
                                                    j->at0 + at + OW);
                oh++;
            }
        }
        if (!ep_done)
            for (int64_t oh = b0; oh < b1; oh++)
                mrt_epilogue_apply_rows(j->ep, j->y + oh * OW, p->m, OW, ohw, 0, j->at0 + oh * OW);
    }
}

static mrt_status conv_rows(mrt_op_ctx *ctx, const mrt_conv_params *p, int64_t rows_floats)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *b = mrt_input(ctx, 2);
    const mrt_window *w = &p->win;
    int64_t S = w->stride[1];
    /* each thread's slot, then the zero row (mrt_conv_rows_floats) */
    float *rows = mrt_workspace(ctx, (size_t)rows_floats * sizeof(float));
    if (!rows) return MRT_STATUS_OUT_OF_MEMORY;
    int64_t in_numel = w->in[0] * w->in[1], ohw = w->out[0] * w->out[1];
    rows_job j = {.p = p, .a = ctx->kernel_state, .bias = b ? b->data : NULL, .rows = rows, .ep = ctx->epilogue,
                  .S = S, .k = p->c * p->kernel_numel, .threads = ctx->n_threads > 1 ? ctx->n_threads : 1};
    mrt_conv_rows_geometry(p, &j.block_rows, &j.lp);
    memset(rows + j.threads * p->c * j.block_rows * S * j.lp, 0, (size_t)(S * j.lp) * sizeof(float));
    for (int64_t n = 0; n < p->n; n++) {
        j.x = (const float *)x->data + n * p->c * in_numel;
        j.y = (float *)mrt_output(ctx, 0)->data + n * p->m * ohw;
        j.at0 = n * p->m * ohw;
        mrt_parallel_for(ctx, w->out[0], 1, rows_compute, &j);
    }
    return MRT_STATUS_OK;
}
#endif

#ifdef CONV_HAVE_AVX512
/* ---- 1x1 convolutions with few output channels: B read in place from the image's rows.
   A pointwise Conv's B is the image itself, [C, H W]; packing it into panels is a copy of the image per run, which
   a product with few output channels does not amortise. Here every full 48-column tile reads its B rows straight
   from the channel planes (mrt_sgemm_tile_rows, the chains the GEMM computes for each k block, added in order, so
   the same bits). The columns after the last full tile (every plane here but 48x48: 112x112 leaves 16, 14x14 4) are
   one more tile, read in place too: its whole-vector loads run into the next channel's plane, lanes that are
   computed and not stored, except on the image's last channel, whose row is copied to the stack with zeros after
   it (past the last plane the loads would leave the image). They went through the GEMM, which packed a 48-wide
   panel of k rows for them and, on two threads, cost a second hand-off per layer. */
enum {
    PW_STRIP_FLOATS = MRT_SGEMM_K_BLOCK * 4 * MRT_SGEMM_NR, /* a large plane's strip: its k rows' floats, at most */
    PW_ROWS_MAX_M = 64,
    PW_ROWS_SMALL_HW = 1024,
    PW_ROWS_SMALL_MAX_M = 96,
    PW_ROWS_ANY_M_MIN_HW = 4 * MRT_SGEMM_NR,
    PW_ROWS_ANY_M_MAX_K = 128
};
typedef struct pointwise_job {
    const mrt_conv_params *p;
    const float *x, *a, *bias;
    float *y;
    const mrt_epilogue *ep;
    int64_t hw, full;        /* columns per plane, and those in full tiles */
    int64_t m_chunk, m_chunks, n_strips; /* strip s: the full tiles [tiles s / n_strips, tiles (s + 1) / n_strips) */
    int64_t at0;
} pointwise_job;

static void pointwise_compute(void *arg, int64_t t0, int64_t t1)
{
    const pointwise_job *j = arg;
    int64_t K = j->p->c, M = j->p->m, a_rows = (M + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR * MRT_SGEMM_MR;
    const float *brows[MRT_SGEMM_K_BLOCK];
    int64_t brows_k0 = -1; /* the k block brows points at (set once when there is one) */
    int tail = (int)(j->hw - j->full);
    _Alignas(64) float last_row[MRT_SGEMM_NR] = {0}; /* the last channel's last columns, zeros after them */
    if (tail > 0) memcpy(last_row, j->x + (K - 1) * j->hw + j->full, (size_t)tail * sizeof(float));
    for (int64_t t = t0; t < t1; t++) {
        /* Strip-major: a thread's first share of the tasks is a run of positions of every input plane (channel-major,
           both threads read all of the image, half of it from the other core's cache: MobileNetV2's 192 -> 32 at
           28x28 took 80 us on two threads, 63 on one). But an expansion's output is the larger side, and the
           depthwise conv after it splits by channels: channel-major, each thread's output planes are the ones it
           reads next (MobileNetV2 on two threads, the depthwise convs after its 28x28 expansions 114.9 -> 99.2 us,
           the 3x3/2 one 39.8 -> 29.6; the expansions unchanged). Only on small planes: on large ones an expansion
           channel-major reads all of its input, half of it from the other core, and ran slower on two threads than
           on one (MnasNet's 16 -> 48 at 112x112: 120 us, 201); strip-major, per-node medians of paired rounds,
           132 -> 116 us (the other core busy), 121 -> 77 (slow rounds), 66 -> 60 (quiet, fastest runs);
           MobileNetV3-Large's 16 -> 64 246 -> 219 us. The depthwise convs after them no slower. */
        int64_t s = t / j->m_chunks, mi = t % j->m_chunks;
        if (M > K && j->hw <= PW_ROWS_SMALL_HW) s = t % j->n_strips, mi = t / j->n_strips;
        int64_t m_lo = mi * j->m_chunk, m_hi = m_lo + j->m_chunk < M ? m_lo + j->m_chunk : M;
        int64_t tiles = j->full / MRT_SGEMM_NR;
        int64_t c0 = tiles * s / j->n_strips * MRT_SGEMM_NR, c1 = tiles * (s + 1) / j->n_strips * MRT_SGEMM_NR;
        bool with_tail = tail > 0 && s == j->n_strips - 1; /* the last strip takes the last columns too */
        /* up to PW_TAIL_MAX of them, with k in one block: channels as lanes (pw_tail_lanes), after the tiles */
        bool lanes_tail = with_tail && tail <= PW_TAIL_MAX && K <= MRT_SGEMM_K_BLOCK &&
                          (a_rows * K + (K + M) * j->hw) * (int64_t)sizeof(float) <= PW_TAIL_MAX_BYTES;
        bool ep_done = true;
        for (int64_t m0 = m_lo; m0 < m_hi; m0 += MRT_SGEMM_MR) {
            int mr = (int)(m_hi - m0 < MRT_SGEMM_MR ? m_hi - m0 : MRT_SGEMM_MR);
            /* the GEMM's k blocks in order, each over all the panel's tiles: a block's B row pointers are set once per
               panel (with the blocks inside the tile loop, k > 256 set them again for every tile) */
            for (int64_t k0 = 0; k0 < K; k0 += MRT_SGEMM_K_BLOCK) {
                int64_t kc = K - k0 < MRT_SGEMM_K_BLOCK ? K - k0 : MRT_SGEMM_K_BLOCK;
                bool last = k0 + kc == K;
                if (brows_k0 != k0)
                    for (int64_t kk = 0; kk < kc; kk++) brows[kk] = j->x + (k0 + kk) * j->hw;
                brows_k0 = k0;
                const float *a = j->a + k0 * a_rows + m0 * kc, *bias = last && j->bias ? j->bias + m0 : NULL;
                const mrt_epilogue *ep = last ? j->ep : NULL;
                for (int64_t c = c0; c < c1; c += MRT_SGEMM_NR) {
                    bool done = mrt_sgemm_tile_rows(kc, a, NULL, brows, c, j->y + m0 * j->hw + c, j->hw, k0 > 0, mr,
                                                    MRT_SGEMM_NR, bias, ep, m0, j->at0 + m0 * j->hw + c);
                    if (last) ep_done &= done;
                }
                if (with_tail && !lanes_tail) {
                    const float *tail_brows[MRT_SGEMM_K_BLOCK];
                    for (int64_t kk = 0; kk < kc; kk++) tail_brows[kk] = brows[kk] + j->full;
                    if (last) tail_brows[kc - 1] = last_row;
                    bool done = mrt_sgemm_tile_rows(kc, a, NULL, tail_brows, 0, j->y + m0 * j->hw + j->full, j->hw,
                                                    k0 > 0, mr, tail, bias, ep, m0, j->at0 + m0 * j->hw + j->full);
                    if (last) ep_done &= done;
                }
            }
        }
        if (lanes_tail) {
            /* the epilogue in registers as the tiles apply it, or in the pass below with theirs (one pass over
               whole rows: per row, EfficientNet-B0's BatchNormalization and SiLU over 4 columns cost more than the
               tail gains) */
            mrt_reg_epilogue te;
            bool reg = mrt_reg_epilogue_of(j->ep, m_lo, j->at0 + m_lo * j->hw + j->full, &te);
            pw_tail_lanes(j->a, K, j->x, j->hw, j->full, tail, m_lo, m_hi, j->bias, reg ? &te : NULL, j->y);
            if (!reg) ep_done = false;
        }
        int64_t c_end = with_tail ? j->hw : c1;
        if (!ep_done)
            mrt_epilogue_apply_rows(j->ep, j->y + m_lo * j->hw + c0, m_hi - m_lo, c_end - c0, j->hw, m_lo,
                                    j->at0 + m_lo * j->hw + c0);
    }
}

static mrt_status conv_pointwise_rows(mrt_op_ctx *ctx, const mrt_conv_params *p)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *b = mrt_input(ctx, 2);
    int64_t hw = mrt_dims_numel(p->win.nsp, p->win.in), full = hw / MRT_SGEMM_NR * MRT_SGEMM_NR;
    /* Strips of 4 tiles on small planes. On large ones, strips as wide as keep their k rows within PW_STRIP_FLOATS
       (in L2 for the next panel's pass), as many for every thread: each panel writes long runs, as the GEMM's wide
       strips do (MobileNetV2's 32->16 at 112x112, minirt_kernels --cold: 0.22-0.26 -> 0.20-0.24 ms). The tiles
       are dealt out evenly. */
    int64_t tiles = full / MRT_SGEMM_NR, n_strips = (tiles + 3) / 4;
    if (hw > PW_ROWS_SMALL_HW) {
        int64_t kb = p->c < MRT_SGEMM_K_BLOCK ? p->c : MRT_SGEMM_K_BLOCK, strip = PW_STRIP_FLOATS / kb / MRT_SGEMM_NR;
        int64_t threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
        n_strips = ((tiles + strip - 1) / strip + threads - 1) / threads * threads;
        if (n_strips > tiles) n_strips = tiles;
    }
    if (n_strips < 1) n_strips = 1;
    pointwise_job j = {.p = p, .a = ctx->kernel_state, .bias = b ? b->data : NULL, .ep = ctx->epilogue, .hw = hw,
                       .full = full, .n_strips = n_strips, .m_chunk = p->m};
    /* few strips (a small image): output channels are cut too, so that each thread gets a few tasks */
    int64_t want = 4 * (int64_t)ctx->n_threads;
    if (j.n_strips < want) {
        int64_t chunks = (want + j.n_strips - 1) / j.n_strips, panels = (p->m + MRT_SGEMM_MR - 1) / MRT_SGEMM_MR;
        j.m_chunk = (panels + chunks - 1) / chunks * MRT_SGEMM_MR;
    }
    int64_t m_chunks = j.m_chunks = (p->m + j.m_chunk - 1) / j.m_chunk;
    for (int64_t n = 0; n < p->n; n++) {
        j.x = (const float *)x->data + n * p->c * hw;
        j.y = (float *)mrt_output(ctx, 0)->data + n * p->m * hw;
        j.at0 = n * p->m * hw;
        mrt_parallel_for(ctx, j.n_strips * m_chunks, 1, pointwise_compute, &j);
    }
    return MRT_STATUS_OK;
}

/* The in-place path pays where packing B costs a good part of the products: few output channels to share each
   packed value. In MobileNetV2, with k in one block, its projections to 24-64 channels ran 6-11% faster in place
   (per-node profiles, alternating), its expansions to 96-576 channels 2-12% slower (at 112x112 a tile's k rows
   are as many pages apart; the 16->96 expansion there: 0.486-0.490 ms packed, 0.502-0.503 in place); in
   isolation, the 32->16 projection at 112x112 with BatchNormalization + Clip took 0.144 ms against 0.185. Planes of
   at most a page (32x32) fit many to a page, and there projections to up to 96 channels from any depth (k blocks
   added in order) gain too: four MobileNetV2 blocks at 14x14 (576->96) 2.02 -> 1.99 ms on 1 thread, 1.19 -> 1.16
   on 2. On planes of 192 to 1024 positions, so do short products (k <= 128) to any number of channels: the GEMM's
   narrow and wide modes pack B per run, on two threads each thread a copy of all of it, half of which another core
   wrote. MobileNetV2's 14x14 and 28x28 expansions (64 -> 384 to 96 -> 576, 32 -> 192) on two threads, per-node
   medians: 608-611 -> 573-577 us in all; on one thread unchanged (1013-1016 -> 1000-1037). Not longer ones:
   ResNeXt-50's 1x1s at 28x28 and 14x14 (k = 256 to 1024, 256 to 1024 output channels) were 0.5 ms slower in all on
   two threads. Not on 7x7 planes: 49 = 48 + 1 columns, the in-place last tile computes 16 lanes for one (160 -> 960
   at 7x7: 0.100 -> 0.132 ms). */
static bool use_pointwise_rows(const mrt_op_ctx *ctx, const mrt_conv_params *p)
{
    int64_t hw = mrt_dims_numel(p->win.nsp, p->win.in);
    bool few = (p->c <= MRT_SGEMM_K_BLOCK && p->m <= PW_ROWS_MAX_M) ||
               (hw <= PW_ROWS_SMALL_HW && (p->m <= PW_ROWS_SMALL_MAX_M ||
                                           (hw >= PW_ROWS_ANY_M_MIN_HW && p->c <= PW_ROWS_ANY_M_MAX_K)));
    return ctx->kernel_state && !ctx->prologue && p->group == 1 && mrt_conv_is_pointwise(&p->win) && p->c >= 1 && p->m >= 1 &&
           few && hw >= MRT_SGEMM_NR && mrt_cpu_has_avx512f();
}
#endif

static mrt_status mrt_cpu_conv(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    int64_t out_numel = mrt_dims_numel(p.win.nsp, p.win.out), ck = p.c / p.group * p.kernel_numel;
    MRT_TRY(mrt_lin_blas_check(ctx, p.m / p.group, out_numel, ck));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = mrt_input(ctx, 2);
    /* engine/fuse.c fuses an input scale only into a pointwise group-1 float Conv: the GEMM's paths or the lanes path */
    if (ctx->prologue && (x->dtype != MRT_DTYPE_FLOAT || p.group != 1 || !mrt_conv_is_pointwise(&p.win)))
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED,
                        "node '%s' (Conv): internal error: an input scale was fused into a Conv that is not a pointwise "
                        "group-1 float32 Conv (%s, group %lld)",
                        ctx->node->name, mrt_dtype_name(x->dtype), (long long)p.group);
    if (mrt_conv_direct_depthwise(&p, x->dtype)) { /* ops_cpu/conv_depthwise.c, epilogue applied in cache */
        mrt_depthwise2d_f32(ctx, &p, x->data, w->data, b ? b->data : NULL, mrt_output(ctx, 0)->data, ctx->epilogue);
        return MRT_STATUS_OK;
    }
    int64_t wino = ctx->no_winograd ? 0 : mrt_conv_winograd_floats(&p, x->dtype, ctx->kernel_state != NULL, ctx->n_threads);
    if (wino > 0) { /* 3x3 stride 1 (ops_cpu/conv_winograd.c), W's transform from prepare or made now */
        float *ws = mrt_workspace(ctx, (size_t)wino * sizeof(float));
        if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
        mrt_conv_winograd(ctx, &p, x->data, w->data, ctx->kernel_state, b ? b->data : NULL, mrt_output(ctx, 0)->data, ws);
        return MRT_STATUS_OK;
    }
    if (mrt_conv_uses_sgemm(&p, x->dtype)) {
        int64_t grouped = ctx->kernel_state ? mrt_conv_grouped_floats(&p, x->dtype, ctx->n_threads) : 0;
        if (grouped > 0) { /* ops_cpu/conv_grouped.c, W rearranged by prepare */
            float *ws = mrt_workspace(ctx, (size_t)grouped * sizeof(float));
            if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
            if (!mrt_conv_grouped(ctx, &p, x->data, ctx->kernel_state, b ? b->data : NULL, mrt_output(ctx, 0)->data,
                                  ctx->epilogue, ws))
                return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                                   "internal error: the grouped-conv path refused a Conv its rule accepted");
            return MRT_STATUS_OK;
        }
        int64_t lanes = ctx->kernel_state ? mrt_conv_pointwise_lanes_floats(&p, x->dtype, ctx->n_threads) : 0;
        if (lanes > 0) { /* ops_cpu/conv_pointwise.c, W packed by prepare; the input scale too */
            float *ws = mrt_workspace(ctx, (size_t)lanes * sizeof(float));
            if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
            if (!mrt_conv_pointwise_lanes(ctx, &p, x->data, ctx->kernel_state, b ? b->data : NULL,
                                          mrt_output(ctx, 0)->data, ctx->prologue, ctx->epilogue, ws))
                return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                                   "internal error: the pointwise channels-as-lanes path refused a Conv its rule accepted");
            return MRT_STATUS_OK;
        }
#ifdef CONV_HAVE_AVX512
        int64_t rows = mrt_conv_rows_floats(&p, x->dtype, ctx->n_threads);
        if (rows > 0 && !ctx->prologue && ctx->kernel_state && mrt_cpu_has_avx512f()) return conv_rows(ctx, &p, rows);
        if (use_pointwise_rows(ctx, &p)) return conv_pointwise_rows(ctx, &p);
#endif
        if (ctx->kernel_state && !ctx->prologue && mrt_conv_live_taps_path(&p, x->dtype)) return mrt_conv_live_taps(ctx, &p);
        return conv_sgemm(ctx, &p);
    }
    return run_typed(ctx, &p, false, conv_f32, conv_f64);
}

/* ------------------------------------------------------------------ ConvTranspose */

/* W is [C, M/group, k...]; per (image, group): col[Mg*K, X spatial] = Wg^T * Xg, then col2im into Y. */
#define CONVT_FLOAT(T, SUF, GEMM)                                                                                  \
    static void convt_##SUF(const mrt_conv_params *p, const T *x, const T *w, const T *b, T *y, T *col)            \
    {                                                                                                              \
        const mrt_window *win = &p->win;                                                                           \
        int64_t y_numel = mrt_dims_numel(win->nsp, win->in), x_numel = mrt_dims_numel(win->nsp, win->out);                             \
        int64_t cg = p->c / p->group, mg = p->m / p->group, kn = p->kernel_numel, mk = mg * kn;                    \
        for (int64_t n = 0; n < p->n; n++)                                                                         \
            for (int64_t g = 0; g < p->group; g++) {                                                               \
                const T *xg = x + (n * p->c + g * cg) * x_numel;                                                   \
                const T *wg = w + g * cg * mk;                                                                     \
                T *yg = y + (n * p->m + g * mg) * y_numel;                                                         \
                for (int64_t m = 0; m < mg; m++) {                                                                 \
                    T bv = b ? b[g * mg + m] : (T)0;                                                               \
                    for (int64_t o = 0; o < y_numel; o++) yg[m * y_numel + o] = bv;                                \
                }                                                                                                  \
                GEMM(true, false, mk, x_numel, cg, (T)1, wg, mk, xg, x_numel, (T)0, col, x_numel);                 \
                col2im_##SUF(col, mg, win, yg);                                                                    \
            }                                                                                                      \
    }
CONVT_FLOAT(float, f32, mrt_lin_sgemm)
CONVT_FLOAT(double, f64, mrt_lin_dgemm)

static mrt_status mrt_cpu_convtranspose(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_convtranspose_params_get(ctx, &p));
    int64_t x_numel = mrt_dims_numel(p.win.nsp, p.win.out), mk = p.m / p.group * p.kernel_numel;
    MRT_TRY(mrt_lin_blas_check(ctx, mk, x_numel, p.c / p.group));
    return run_typed(ctx, &p, true, convt_f32, convt_f64);
}

/* ------------------------------------------------------------------ ConvInteger */

static inline int32_t ld8(mrt_dtype dt, const void *p, int64_t i)
{
    return dt == MRT_DTYPE_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* y = conv(x - x_zero_point, w - w_zero_point[m]); padding is zero after the shift, as in the spec. */
static mrt_status mrt_cpu_convinteger(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1);
    const mrt_tensor *xz = mrt_input(ctx, 2), *wz = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0);
    const mrt_window *win = &p.win;
    int64_t in_numel = mrt_dims_numel(win->nsp, win->in), out_numel = mrt_dims_numel(win->nsp, win->out);
    int64_t cg = p.c / p.group, mg = p.m / p.group, ck = cg * p.kernel_numel;
    int32_t xzp = xz ? ld8(xz->dtype, xz->data, 0) : 0;
    bool wz_per_channel = wz && mrt_tensor_numel(wz) > 1;
    int64_t counts[3], nx = mrt_tensor_numel(x);
    if (!mrt_convinteger_workspace_counts(&p, ctx, counts))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the im2col workspace size overflows");
    int32_t *part[3]; /* mrt_cpu_convinteger_workspace's */
    if (!mrt_workspace_parts(ctx, 3, counts, sizeof(int32_t), (void **)part)) return MRT_STATUS_OUT_OF_MEMORY;
    int32_t *sx = part[0], *sw = part[1], *col = part[2];
    for (int64_t i = 0; i < nx; i++) sx[i] = ld8(x->dtype, x->data, i) - xzp;
    for (int64_t m = 0; m < p.m; m++) {
        int32_t z = wz ? ld8(wz->dtype, wz->data, wz_per_channel ? m : 0) : 0;
        for (int64_t r = 0; r < ck; r++) sw[m * ck + r] = ld8(w->dtype, w->data, m * ck + r) - z;
    }
    /* wrapping int32 sums, done on the unsigned variant to stay clear of signed overflow */
    uint32_t *yd = y->data;
    for (int64_t n = 0; n < p.n; n++)
        for (int64_t g = 0; g < p.group; g++) {
            im2col_i32(sx + (n * p.c + g * cg) * in_numel, cg, win, col);
            for (int64_t m = 0; m < mg; m++) {
                uint32_t *yr = yd + (n * p.m + g * mg + m) * out_numel;
                const int32_t *wr = sw + (g * mg + m) * ck;
                for (int64_t o = 0; o < out_numel; o++) yr[o] = 0;
                for (int64_t r = 0; r < ck; r++) {
                    uint32_t wv = (uint32_t)wr[r];
                    const int32_t *cr = col + r * out_numel;
                    for (int64_t o = 0; o < out_numel; o++) yr[o] += wv * (uint32_t)cr[o];
                }
            }
        }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_conv[] = {
    {"", "Conv", 1, mrt_cpu_conv, NULL, mrt_cpu_conv_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_INPUT_SCALE,
     mrt_cpu_conv_workspace},
    {"", "Conv", 11, mrt_cpu_conv, NULL, mrt_cpu_conv_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_INPUT_SCALE,
     mrt_cpu_conv_workspace},
    {"", "Conv", 22, mrt_cpu_conv, NULL, mrt_cpu_conv_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_INPUT_SCALE,
     mrt_cpu_conv_workspace},
    {"", "ConvTranspose", 1, mrt_cpu_convtranspose, NULL, NULL, NULL, 0, mrt_cpu_convtranspose_workspace},
    {"", "ConvTranspose", 11, mrt_cpu_convtranspose, NULL, NULL, NULL, 0, mrt_cpu_convtranspose_workspace},
    {"", "ConvTranspose", 22, mrt_cpu_convtranspose, NULL, NULL, NULL, 0, mrt_cpu_convtranspose_workspace},
    {"", "ConvInteger", 10, mrt_cpu_convinteger, NULL, NULL, NULL, 0, mrt_cpu_convinteger_workspace},
    {0},
};
