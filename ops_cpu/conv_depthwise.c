/* Float 2-D depthwise convolution (see conv_depthwise.h).
 *
 * Method: the work is split over (image, channel) planes. Each plane is processed in bands of output rows; a
 * band's input rows are first copied into zero-padded "phase planes" in a stack buffer: for strides (sh, sw)
 * there are sh * sw of them, phase (a, b) holding padded rows a, a + sh, ... and columns b, b + sw, ...
 * (stride 1: one plane, the padded input itself). Every tap (kh, kw) then reads ONE phase plane at a fixed
 * offset, with the same row pitch Wq as the band's accumulator, so a tap's contribution to the whole band is a
 * single contiguous multiply-add over nb * Wq floats: no bounds checks, no strided loads, long vector loops even
 * for 7x7 planes. The accumulator columns [OW, Wq) are scratch and are dropped when the band is copied out.
 * The outputs are computed in register blocks of DW_VEC that run over all taps before being stored.
 *
 * Summation order (fixed, the same for every element, clone and thread count): acc = bias (0 without B), then
 * acc += w[kh][kw] * x_padded in (kh, kw) row-major order, in float, multiply then add (the build does not
 * contract to FMA). Padding taps are included as w * 0: the result differs from skipping them only in the sign
 * of a zero result and when a weight is inf/NaN (then, as in a zero-padded reference, the output is NaN).
 *
 * A plane whose single output row does not fit the stack buffer (inputs thousands of columns wide) takes a
 * bounds-checked per-element loop with the same order and the same padding semantics. */
#include "ops_cpu/conv_depthwise.h"

#include <string.h>

#include "ops_cpu/epilogue.h"
#include "ops_cpu/simd.h"

/* GCC's unroll-and-jam (-O3) would fuse pairs of taps into one scalar loop over the block, which it then fails
   to vectorise (GCC 12: 3x slower); the block loop below is already the right shape. */
#if defined(__GNUC__) && !defined(__clang__)
#define DW_NO_JAM __attribute__((optimize("no-loop-unroll-and-jam")))
#else
#define DW_NO_JAM
#endif

enum {
    DW_CAP = 16384, /* floats of per-task scratch on the stack (64 KiB): phase planes + accumulator */
    DW_VEC = 64,    /* outputs per register block (4 AVX-512 vectors) */
    DW_TAIL = 16,   /* the last outputs of a band go in blocks of 16 (1 AVX-512 vector), not 64 */
    DW_TAPS = 64,   /* taps per pass over a register block; more taps take several passes (same order) */
    DW_MAXK = 1024, /* taps whose offsets are precomputed; larger kernels take the bounds-checked loop */
};

typedef struct dw_job {
    const float *x, *w, *b;
    float *y;
    const mrt_epilogue *ep;
    int64_t C, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
    int64_t Wq, qh_max, qw_max; /* accumulator/phase pitch, the largest tap row and column offsets in a phase */
    int64_t nb;                 /* output rows per band (0: the bounds-checked fallback) */
    int64_t pps;                /* floats per phase plane (for nb rows), slack included, rounded to 16 */
    const int64_t *tap_off;     /* per tap (kh, kw): its first input in the scratch (phase plane + offset) */
} dw_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Scratch floats a band of nb rows needs: sh * sw phase planes of (nb + qh_max) rows of Wq, plus slack for the
   reads of the accumulator's last (rounded-up) block at the largest tap offset, plus the accumulator. */
static int64_t band_phase_floats(const dw_job *j, int64_t nb)
{
    return round16((nb + j->qh_max) * j->Wq + j->qw_max + DW_VEC);
}
static int64_t band_floats(const dw_job *j, int64_t nb)
{
    return j->sh * j->sw * band_phase_floats(j, nb) + round16(nb * j->Wq + DW_TAIL);
}

/* acc[0, len) (len a multiple of DW_TAIL) = (first ? bias : acc) + sum over taps t of wt[t] * src[t][i], taps
   in order. Each block a[] stays in registers across the taps. */
#define DW_BLOCK(V)                                                                                                \
    do {                                                                                                           \
        float a[V];                                                                                                \
        if (first)                                                                                                 \
            for (int j = 0; j < V; j++) a[j] = bias;                                                               \
        else                                                                                                       \
            for (int j = 0; j < V; j++) a[j] = acc[i0 + j];                                                        \
        for (int t = 0; t < ntaps; t++) {                                                                          \
            const float *s = src[t] + i0;                                                                          \
            float wv = wt[t];                                                                                      \
            for (int j = 0; j < V; j++) a[j] += wv * s[j];                                                         \
        }                                                                                                          \
        for (int j = 0; j < V; j++) acc[i0 + j] = a[j];                                                            \
    } while (0)
MRT_VECTORIZE_CLONES DW_NO_JAM
static void dw_block_taps(float *acc, int64_t len, const float *const *src, const float *wt, int ntaps, float bias,
                          int first)
{
    int64_t i0 = 0;
    for (; i0 + DW_VEC <= len; i0 += DW_VEC) DW_BLOCK(DW_VEC);
    for (; i0 < len; i0 += DW_TAIL) DW_BLOCK(DW_TAIL);
}

/* d[c] = s[c * stride] for c < n; stride 2 (the common strided conv) gets its own loop so it vectorises. */
MRT_VECTORIZE_CLONES
static void dw_gather(float *d, const float *s, int64_t n, int64_t stride)
{
    if (stride == 1) memcpy(d, s, (size_t)n * sizeof(float));
    else if (stride == 2)
        for (int64_t c = 0; c < n; c++) d[c] = s[2 * c];
    else
        for (int64_t c = 0; c < n; c++) d[c] = s[c * stride];
}

/* Phase planes of the band starting at output row oh0: phase (a, b) row r, column c holds padded input
   (oh0 * sh + r * sh + a, c * sw + b), i.e. input (that - ph, that - pw), 0 outside the input. */
static void dw_fill_phases(const dw_job *j, const float *xp, int64_t oh0, int64_t nb, float *ph_base, bool zeroed)
{
    int64_t rows = nb + j->qh_max, pps = j->pps, Wq = j->Wq;
    for (int64_t a = 0; a < j->sh; a++)
        for (int64_t b = 0; b < j->sw; b++) {
            float *P = ph_base + (a * j->sw + b) * pps;
            /* columns c with 0 <= c * sw + b - pw < W */
            int64_t off = b - j->pw;
            int64_t clo = off >= 0 ? 0 : ceil_div(-off, j->sw);
            int64_t chi = j->W - off <= 0 ? 0 : ceil_div(j->W - off, j->sw);
            if (chi > Wq) chi = Wq;
            if (clo > chi) clo = chi;
            for (int64_t r = 0; r < rows; r++) {
                float *d = P + r * Wq;
                int64_t ih = (oh0 + r) * j->sh + a - j->ph;
                if (ih < 0 || ih >= j->H || clo == chi) {
                    if (!zeroed) memset(d, 0, (size_t)Wq * sizeof(float));
                    continue;
                }
                const float *s = xp + ih * j->W + off;
                if (clo > 0 && !zeroed) memset(d, 0, (size_t)clo * sizeof(float));
                dw_gather(d + clo, s + clo * j->sw, chi - clo, j->sw);
                if (chi < Wq && !zeroed) memset(d + chi, 0, (size_t)(Wq - chi) * sizeof(float));
            }
            /* the slack after the rows: read only by accumulator columns that are dropped, zeroed so no
               uninitialised (or signalling) value is ever loaded */
            if (!zeroed) memset(P + rows * Wq, 0, (size_t)(pps - rows * Wq) * sizeof(float));
        }
}

/* zeroed: the scratch holds a previous plane of this job and the plane is one band, so its padding cells
   (the same for every plane) are zero already and only the input cells are copied. */
static void dw_plane_banded(const dw_job *j, int64_t plane, float *scratch, bool zeroed)
{
    int64_t c = plane % j->C, Wq = j->Wq, ntaps = j->KH * j->KW;
    const float *xp = j->x + plane * j->H * j->W, *wp = j->w + c * ntaps;
    float *yp = j->y + plane * j->OH * j->OW, bias = j->b ? j->b[c] : 0.0f;
    for (int64_t oh0 = 0; oh0 < j->OH; oh0 += j->nb) {
        int64_t nb = j->OH - oh0 < j->nb ? j->OH - oh0 : j->nb;
        int64_t len = (nb * Wq + DW_TAIL - 1) / DW_TAIL * DW_TAIL;
        float *acc = scratch + j->sh * j->sw * j->pps;
        dw_fill_phases(j, xp, oh0, nb, scratch, zeroed && nb == j->OH);
        /* taps in (kh, kw) order, DW_TAPS at a time */
        const float *src[DW_TAPS];
        for (int64_t t0 = 0; t0 < ntaps; t0 += DW_TAPS) {
            int n = ntaps - t0 < DW_TAPS ? (int)(ntaps - t0) : DW_TAPS;
            for (int k = 0; k < n; k++) src[k] = scratch + j->tap_off[t0 + k];
            dw_block_taps(acc, len, src, wp + t0, n, bias, t0 == 0);
        }
        if (ntaps == 0)
            for (int64_t i = 0; i < len; i++) acc[i] = bias;
        float *yb = yp + oh0 * j->OW;
        for (int64_t r = 0; r < nb; r++) memcpy(yb + r * j->OW, acc + r * Wq, (size_t)j->OW * sizeof(float));
        mrt_epilogue_apply(j->ep, yb, nb * j->OW, c, yb - j->y);
    }
}

/* Bounds-checked fallback for rows too wide for the stack buffer: the same order, padding as w * 0. */
static void dw_plane_checked(const dw_job *j, int64_t plane)
{
    int64_t c = plane % j->C, ntaps = j->KH * j->KW;
    const float *xp = j->x + plane * j->H * j->W, *wp = j->w + c * ntaps;
    float *yp = j->y + plane * j->OH * j->OW, bias = j->b ? j->b[c] : 0.0f;
    for (int64_t oh = 0; oh < j->OH; oh++) {
        float *yr = yp + oh * j->OW;
        for (int64_t ow = 0; ow < j->OW; ow++) {
            float a = bias;
            for (int64_t kh = 0; kh < j->KH; kh++) {
                int64_t ih = oh * j->sh - j->ph + kh * j->dh;
                for (int64_t kw = 0; kw < j->KW; kw++) {
                    int64_t iw = ow * j->sw - j->pw + kw * j->dw;
                    float v = ih >= 0 && ih < j->H && iw >= 0 && iw < j->W ? xp[ih * j->W + iw] : 0.0f;
                    a += wp[kh * j->KW + kw] * v;
                }
            }
            yr[ow] = a;
        }
        mrt_epilogue_apply(j->ep, yr, j->OW, c, yr - j->y);
    }
}

static void dw_range(void *arg, int64_t begin, int64_t end)
{
    const dw_job *j = arg;
    _Alignas(64) float scratch[DW_CAP];
    for (int64_t pl = begin; pl < end; pl++) {
        /* small planes: the fill's memsets cost more than the taps, so the padding is zeroed once per range */
        if (j->nb > 0) dw_plane_banded(j, pl, scratch, pl > begin);
        else dw_plane_checked(j, pl);
    }
}

void mrt_depthwise2d_f32(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                         const float *b, float *y, const mrt_epilogue *ep)
{
    const mrt_window *win = &p->win;
    dw_job j = {
        .x = x, .w = w, .b = b, .y = y, .ep = ep, .C = p->c,
        .H = win->in[0], .W = win->in[1], .OH = win->out[0], .OW = win->out[1],
        .KH = win->kernel[0], .KW = win->kernel[1], .sh = win->stride[0], .sw = win->stride[1],
        .dh = win->dilation[0], .dw = win->dilation[1], .ph = win->pad_begin[0], .pw = win->pad_begin[1],
    };
    int64_t planes = p->n * p->c;
    if (planes <= 0 || j.OH <= 0 || j.OW <= 0) return;
    /* padded width the band reads, and its width per column phase */
    int64_t Wp = (j.OW - 1) * j.sw + (j.KW - 1) * j.dw + 1;
    j.Wq = ceil_div(Wp, j.sw);
    j.qh_max = j.KH > 0 ? (j.KH - 1) * j.dh / j.sh : 0;
    j.qw_max = j.KW > 0 ? (j.KW - 1) * j.dw / j.sw : 0;
    /* the largest band that fits, then bands of equal height (fewer halo rows copied twice) */
    int64_t nb = j.OH;
    while (nb > 0 && band_floats(&j, nb) > DW_CAP) nb = nb > 8 ? nb * 3 / 4 : nb - 1;
    if (nb > 0) nb = ceil_div(j.OH, ceil_div(j.OH, nb));
    while (nb > 0 && band_floats(&j, nb) > DW_CAP) nb--; /* after the rounding up (rarely needed) */
    int64_t ntaps = j.KH * j.KW;
    if (ntaps > DW_MAXK) nb = 0;
    j.nb = nb;
    /* where each tap reads: phase ((kh*dh) % sh, (kw*dw) % sw) at row (kh*dh) / sh, column (kw*dw) / sw */
    int64_t tap_off[DW_MAXK];
    if (nb > 0) {
        j.pps = band_phase_floats(&j, nb);
        for (int64_t kh = 0; kh < j.KH; kh++)
            for (int64_t kw = 0; kw < j.KW; kw++) {
                int64_t rh = kh * j.dh, rw = kw * j.dw;
                tap_off[kh * j.KW + kw] = ((rh % j.sh) * j.sw + rw % j.sw) * j.pps + rh / j.sh * j.Wq + rw / j.sw;
            }
        j.tap_off = tap_off;
    }
    /* about 64K multiply-adds per task: enough to amortise the hand-off, small enough to balance */
    int64_t work = j.OH * j.OW * (j.KH * j.KW > 0 ? j.KH * j.KW : 1);
    int64_t grain = work >= 65536 ? 1 : 65536 / work;
    mrt_parallel_for(ctx, planes, grain, dw_range, &j);
}
