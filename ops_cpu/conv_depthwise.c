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
 * On CPUs with AVX-512 and strides of 1 or 2 a direct kernel replaces all this (dw_plane_direct): each output
 * row is computed in 16-column vectors straight from the input rows, with masked loads standing in for the
 * padding and a lane permute picking the even or odd columns for stride 2. No copies in or out: on MobileNetV2's
 * and EfficientNet-B0's depthwise convs the copies cost as much as the taps. (Copying each input row once into
 * padded scratch, to load without masks, was tried: 3x3 144@56 0.207 -> 0.28 ms.) The direct kernel is bound by its
 * loads, so 3x3 and 5x5 kernels with row stride 1 or 2 run input row by input row (DW_REUSE): a loaded vector
 * feeds every output row of the block that reads it.
 *
 * Summation order (fixed, the same for every element, kernel, clone and thread count): acc = bias (0 without
 * B), then acc = fmaf(w[kh][kw], x_padded, acc) in (kh, kw) row-major order. fmaf is exact, so the baseline
 * clone (libm's fmaf) and the vector kernels give the same bits. Padding taps are included as w * 0: the
 * result differs from skipping them only in the sign of a zero result and when a weight is inf/NaN (then, as
 * in a zero-padded reference, the output is NaN).
 *
 * A plane whose single output row does not fit the stack buffer (inputs thousands of columns wide) takes a
 * bounds-checked per-element loop with the same order and the same padding semantics. */
#include "ops_cpu/conv_depthwise.h"

#include <math.h>
#include <string.h>

#include "ops_cpu/epilogue.h"
#include "ops_cpu/simd.h"

#ifdef MRT_HAVE_AVX512_INTRINSICS
#define DW_HAVE_AVX512 1
#endif

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
    int64_t n_img, bands;       /* images; bands of output rows per plane (dw_range's tasks: band-major) */
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
            for (int j = 0; j < V; j++) a[j] = fmaf(wv, s[j], a[j]);                                              \
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
                    a = fmaf(wp[kh * j->KW + kw], v, a);
                }
            }
            yr[ow] = a;
        }
        mrt_epilogue_apply(j->ep, yr, j->OW, c, yr - j->y);
    }
}

#ifdef DW_HAVE_AVX512
/* DW_REUSE's loops are unrolled in full, so that which output rows an input row feeds is known at compile time.
   Under the sanitizers (the ASan and fuzz builds) they stay loops, the same operations in the same order: with a
   check on every unrolled index, clang took over 8 minutes on this one file (about 30 s without the unrolling). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DW_SANITIZED 1
#endif
#ifdef DW_SANITIZED
#define DW_UNROLL_ALL
#else
#define DW_UNROLL_ALL _Pragma("GCC unroll 16")
#endif

/* p's value unknown to the compiler from here on, so the loads through it stay in the loop. The row kernels read
   their weights through it once per input row: GCC 12 otherwise loaded the 25 or 49 weights once, kept them as
   scalars (some on the stack) and broadcast them for every fma, a shuffle each on top of the stride-2 permutes and
   valignd; now each fma broadcasts from memory. Stride 2 and 7x7 only (one thread, minirt_kernels): 3x3/2 96@112
   0.106 -> 0.102 ms, 5x5/2 144@56 0.064 -> 0.061, 5x5/2 240@28 0.040 -> 0.039, 7x7 96@56 0.166 -> 0.152; at
   stride 1 the 3x3 and 5x5 kernels lost (5x5 240@28 0.082 -> 0.086, 3x3 576@14 0.033 -> 0.034). */
#if defined(__GNUC__)
#define DW_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define DW_OPAQUE(p) ((void)0)
#endif

enum {
    DW_DIRECT_MAXKW = 16,  /* kernel widths whose load masks the direct kernel keeps */
    DW_DIRECT_MAXW = 4096, /* input widths it takes: a padding row reads dw_zero_row */
    DW_EP_GROUP = 4096,    /* outputs per epilogue call: in L1 still */
    DW_BAND_MIN_IN = 2048, /* input positions from which several threads split planes by bands of rows */
};
static const float dw_zero_row[DW_DIRECT_MAXW];

/* The pieces DW_DIRECT and DW_REUSE share. The load masks of tap column kw and output vector v (h: the second
   load of stride 2) depend only on (kw, v), so they are computed once per call; `last` masks the last vector's
   store. */
#define DW_COLUMN_MASKS(S, NV, KMAX, KW)                                                                           \
    __mmask16 mk[KMAX][NV][S];                                                                                     \
    for (int64_t kw = 0; kw < (KW); kw++)                                                                          \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                                       \
            for (int h = 0; h < S; h++)                                                                            \
                mk[kw][v][h] = mrt_mask16_inside((ow0 + 16 * v) * S - j->pw + kw * j->dw + 16 * h, j->W);          \
    __mmask16 last = mrt_mask16_first(j->OW - ow0 - 16 * (NV - 1))
/* te's BatchNormalization coefficients and clamp bounds, broadcast once per call (te: the plane's in-register
   epilogue, or NULL) */
#define DW_EPILOGUE_CONSTS                                                                                         \
    __m512 e_ahi = _mm512_setzero_ps(), e_alo = e_ahi, e_bhi = e_ahi, e_blo = e_ahi;                              \
    __m512 e_lo = _mm512_set1_ps(te ? te->lo : 0.0f), e_hi = _mm512_set1_ps(te ? te->hi : 0.0f);                  \
    if (te && te->bn) {                                                                                            \
        e_ahi = _mm512_set1_ps(te->bn->a_hi), e_alo = _mm512_set1_ps(te->bn->a_lo);                                \
        e_bhi = _mm512_set1_ps(te->bn->b_hi), e_blo = _mm512_set1_ps(te->bn->b_lo);                                \
    }
/* the R x NV accumulators of output rows oh.., through te (when given) and stored (rows past nr were computed and
   are not) */
#define DW_STORE_ROWS(R, NV)                                                                                       \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) { /* a constant trip count: acc stays in registers */     \
        if (r >= nr) break;                                                                                        \
        int64_t at = (oh + r) * j->OW + ow0; /* the plane's flat index of the row's first output here */         \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                                     \
            __mmask16 m = v == NV - 1 ? last : (__mmask16)0xFFFF;                                                  \
            __m512 o = acc[r][v];                                                                                  \
            if (te) o = mrt_reg_epilogue16(te, o, e_ahi, e_alo, e_bhi, e_blo, at + 16 * v, m, e_lo, e_hi);         \
            _mm512_mask_storeu_ps(yp + at + 16 * v, m, o);                                                         \
        }                                                                                                          \
    }

/* 16 output columns' inputs of one tap: columns src[S i], i < 16, zero where the masks are (stride 2: two loads,
   the even floats kept) */
__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_load_taps(const float *src, int s,
                                                                                   __mmask16 m0, __mmask16 m1)
{
    __m512 x = _mm512_maskz_loadu_ps(m0, src);
    return s == 2 ? mrt_even16(x, _mm512_maskz_loadu_ps(m1, src + 16)) : x;
}

/* Output rows [oh0, oh1), columns [ow0, ow0 + 16 NV) (the last vector may be partial) of one plane, stride S
   (1 or 2) along the row, R rows at a time so that R * NV fma chains are in flight (a 7x7 plane has one vector
   per row). Each output vector is one fma chain over the taps in (kh, kw) order. Tap (kh, kw) of vector v reads
   input columns c0 + S i, c0 = (ow0 + 16 v) S - pw + kw dw: for S = 2 two masked loads of 16 and a permute that
   keeps the even lanes. The masks depend only on (kw, v): computed once per call. */
#define DW_DIRECT(S, NV, R, K)                                                                                     \
    __attribute__((target("avx512f"))) static void dw_direct_s##S##_##NV##_k##K(                                   \
        const dw_job *j, const float *xp, const float *wp, float *yp, int64_t oh0, int64_t oh1, int64_t ow0,       \
        float bias_s, const mrt_reg_epilogue *te)                                                                  \
    {                                                                                                              \
        int64_t KH = K ? K : j->KH, KW = K ? K : j->KW, W = j->W;                                                  \
        DW_COLUMN_MASKS(S, NV, DW_DIRECT_MAXKW, KW);                                                               \
        DW_EPILOGUE_CONSTS                                                                                         \
        for (int64_t oh = oh0; oh < oh1; oh += R) {                                                                \
            int nr = oh1 - oh < R ? (int)(oh1 - oh) : R; /* rows past the end are computed and not stored */       \
            __m512 acc[R][NV];                                                                                     \
            const float *rows[R];                                                                                  \
            _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                                    \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_set1_ps(bias_s);           \
            for (int64_t kh = 0; kh < KH; kh++) {                                                                  \
                const float *wr = wp + kh * KW;                                                                    \
                _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                              \
                    int64_t ih = (oh + r) * j->sh - j->ph + kh * j->dh;                                            \
                    /* a padding row (or a row past the end) reads zeros: w * 0, as the reference */               \
                    rows[r] = (ih >= 0 && ih < j->H && r < nr ? xp + ih * W : dw_zero_row) + (ow0 * S - j->pw);    \
                }                                                                                                  \
                for (int64_t kw = 0; kw < KW; kw++) {                                                              \
                    __m512 wv = _mm512_set1_ps(wr[kw]);                                                            \
                    _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                          \
                        const float *rp = rows[r] + kw * j->dw;                                                    \
                        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                     \
                            __m512 xv = dw_load_taps(rp + 16 * S * v, S, mk[kw][v][0], mk[kw][v][S - 1]);          \
                            acc[r][v] = _mm512_fmadd_ps(wv, xv, acc[r][v]);                                        \
                        }                                                                                          \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
            DW_STORE_ROWS(R, NV)                                                                                   \
        }                                                                                                          \
    }
#define DW_DIRECT_ALL(K)                                                                                           \
    DW_DIRECT(1, 1, 4, K)                                                                                          \
    DW_DIRECT(1, 2, 2, K)                                                                                          \
    DW_DIRECT(1, 3, 2, K)                                                                                          \
    DW_DIRECT(1, 4, 2, K)                                                                                          \
    DW_DIRECT(2, 1, 4, K)                                                                                          \
    DW_DIRECT(2, 2, 2, K)                                                                                          \
    DW_DIRECT(2, 3, 2, K)                                                                                          \
    DW_DIRECT(2, 4, 2, K)
DW_DIRECT_ALL(0)
DW_DIRECT_ALL(3)
DW_DIRECT_ALL(5)
DW_DIRECT_ALL(7)

typedef void (*dw_direct_fn)(const dw_job *, const float *, const float *, float *, int64_t, int64_t, int64_t, float,
                             const mrt_reg_epilogue *);
/* [any / 3x3 / 5x5 kernel][stride - 1][vectors - 1]: the 3x3 and 5x5 ones with the kernel size a constant, their
   tap loops unrolled (3x3 144@56 0.222 -> 0.208 ms, 3x3/2 96@112 0.318 -> 0.275 in minirt_kernels) */
static const dw_direct_fn dw_direct_fns[4][2][4] = {
    {{dw_direct_s1_1_k0, dw_direct_s1_2_k0, dw_direct_s1_3_k0, dw_direct_s1_4_k0},
     {dw_direct_s2_1_k0, dw_direct_s2_2_k0, dw_direct_s2_3_k0, dw_direct_s2_4_k0}},
    {{dw_direct_s1_1_k3, dw_direct_s1_2_k3, dw_direct_s1_3_k3, dw_direct_s1_4_k3},
     {dw_direct_s2_1_k3, dw_direct_s2_2_k3, dw_direct_s2_3_k3, dw_direct_s2_4_k3}},
    {{dw_direct_s1_1_k5, dw_direct_s1_2_k5, dw_direct_s1_3_k5, dw_direct_s1_4_k5},
     {dw_direct_s2_1_k5, dw_direct_s2_2_k5, dw_direct_s2_3_k5, dw_direct_s2_4_k5}},
    {{dw_direct_s1_1_k7, dw_direct_s1_2_k7, dw_direct_s1_3_k7, dw_direct_s1_4_k7},
     {dw_direct_s2_1_k7, dw_direct_s2_2_k7, dw_direct_s2_3_k7, dw_direct_s2_4_k7}},
};

/* The same outputs as DW_DIRECT for kernels of K x K (3, 5 or 7) with row stride SH (1 or 2) and row dilation 1,
   input row by input row: each loaded input vector serves every output row of the block that reads it (up to
   K / SH of the R rows) instead of one, so there are about half the loads per fma (the direct kernel is bound by
   its loads: 3x3 144@56 0.207 -> 0.13 ms). For an output row r, input row p of the block is tap row kh = p - SH r,
   which rises with p, and the taps of a row go in kw order: each output is the same fma chain, in (kh, kw) order,
   as in DW_DIRECT. */
/* The row kernels' common body (DW_REUSE, DW_SHIFT): KIND's SETUP (masks, before the rows), ROW (per input row)
   and TAP (the 16 inputs of tap column kw for output vector v, into xv) fill in how the inputs are read. */
#define DW_ROW_KERNEL(KIND, PFX, S, NV, R, K, SH)                                                                  \
    __attribute__((target("avx512f"))) static void PFX##S##_##NV##_k##K##_h##SH(                                   \
        const dw_job *j, const float *xp, const float *wp, float *yp, int64_t oh0, int64_t oh1, int64_t ow0,       \
        float bias_s, const mrt_reg_epilogue *te)                                                                  \
    {                                                                                                              \
        enum { P = (R - 1) * SH + K, NL = NV + 1 }; /* input rows a block of R output rows reads; DW_SHIFT's loads */ \
        int64_t W = j->W;                                                                                          \
        DW_##KIND##_SETUP(S, NV, K)                                                                                \
        DW_EPILOGUE_CONSTS                                                                                         \
        for (int64_t oh = oh0; oh < oh1; oh += R) {                                                                \
            int nr = oh1 - oh < R ? (int)(oh1 - oh) : R; /* rows past the end are computed and not stored */       \
            __m512 acc[R][NV];                                                                                     \
            _Pragma("GCC unroll 4") for (int r = 0; r < R; r++)                                                    \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_set1_ps(bias_s);           \
            DW_UNROLL_ALL for (int p = 0; p < P; p++) {                                                            \
                int64_t ih = oh * SH - j->ph + p;                                                                  \
                /* a padding row (or a row past the end) reads zeros: w * 0, as the reference */                   \
                const float *rp = (ih >= 0 && ih < j->H ? xp + ih * W : dw_zero_row) + (S * ow0 - j->pw);          \
                const float *wq = wp; /* see DW_OPAQUE */                                                          \
                if (S == 2 || K == 7) DW_OPAQUE(wq);                                                               \
                DW_##KIND##_ROW(S)                                                                                 \
                DW_UNROLL_ALL for (int kw = 0; kw < K; kw++) {                                                     \
                    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                         \
                        __m512 xv;                                                                                 \
                        DW_##KIND##_TAP(S, kw, v, xv)                                                              \
                        DW_UNROLL_ALL for (int r = 0; r < R; r++) {                                                \
                            int kh = p - SH * r;                                                                   \
                            if (kh >= 0 && kh < K)                                                                 \
                                acc[r][v] = _mm512_fmadd_ps(_mm512_set1_ps(wq[kh * K + kw]), xv, acc[r][v]);       \
                        }                                                                                          \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
            DW_STORE_ROWS(R, NV)                                                                                   \
        }                                                                                                          \
    }
/* DW_REUSE: each tap column's inputs loaded (and for stride 2 the even floats of two loads kept) */
#define DW_REUSE_SETUP(S, NV, K) DW_COLUMN_MASKS(S, NV, K, K);
#define DW_REUSE_ROW(S)
#define DW_REUSE_TAP(S, kw, v, xv) xv = dw_load_taps(rp + kw * j->dw + 16 * S * v, S, mk[kw][v][0], mk[kw][v][S - 1]);
#define DW_REUSE(S, NV, R, K, SH) DW_ROW_KERNEL(REUSE, dw_reuse_s, S, NV, R, K, SH)
/* DW_REUSE with column dilation 1 and fewer loads ("shift"): each input row is loaded once per output vector, and tap
   kw's columns are made from it in registers (valignd) instead of loaded again. Column stride 1: vector v's columns
   L_v, tap kw = L_v shifted by kw lanes. Column stride 2: the other kernels load two vectors and keep the even floats
   for every tap column and vector; here the two loads become the row's even columns E_v and odd ones O_v, and tap
   kw = E_v or O_v shifted by kw / 2 lanes. Vector NV is loaded too, for the lanes the taps of the last vector reach
   past it. The same floats in the same fma order as DW_REUSE, so the same bits. The loads, most of them split
   across cache lines, were what bound the kernel at stride 2 (3x3/2 144@56: 0.090 ms, 0.060 with the second load
   removed, 0.063 here); at stride 1 this wins for 3x3 inside MobileNetV2 (its 3x3 layers at 56 and 28, one thread:
   163-166 -> 148 and 134-138 -> 121 us) and for 7x7 (ConvNeXt's 7x7 96@56: 0.375 -> 0.309 ms), and loses for 5x5
   (240@28: 0.154 -> 0.166), which keeps DW_REUSE. Vector v's columns start at c0 + 16 S v; E[v] holds them
   (stride 1) or their even ones (stride 2), O[v] the odd ones. */
#define DW_SHIFT_SETUP(S, NV, K)                                                                                   \
    int64_t c0 = S * ow0 - j->pw;                                                                                  \
    __mmask16 m_lo[NL], m_hi[NL];                                                                                  \
    _Pragma("GCC unroll 8") for (int v = 0; v < NL; v++) {                                                         \
        m_lo[v] = mrt_mask16_inside(c0 + 16 * S * v, W);                                                           \
        m_hi[v] = mrt_mask16_inside(c0 + 16 * S * v + 16, W);                                                      \
    }                                                                                                              \
    __mmask16 last = mrt_mask16_first(j->OW - ow0 - 16 * (NV - 1));                                                \
    /* whether the taps of the last vector's stored lanes reach vector NV. Rows of 14, 28 or 56 outputs mostly do \
       not: then vector NV is zeros, not one or two loads (and two permutes) per input row; the lanes it would    \
       have fed are not stored (one thread: 5x5/2 240@28 0.038 -> 0.033 ms, 5x5/2 72@56 0.030 -> 0.027, 3x3/2    \
       192@28 0.020 -> 0.016, 3x3 576@14 0.032 -> 0.029, 7x7 96@56 0.150 -> 0.146). Not in the stride-2 kernels  \
       of four vectors, which lost with it (3x3/2 96@112 0.102 -> 0.105). */                                       \
    bool need_next = j->OW - ow0 - 16 * (NV - 1) + (S == 2 ? (K - 1) / 2 : K - 1) > 16;
#define DW_SHIFT_ROW(S)                                                                                            \
    __m512 E[NL], O[NL]; /* stride 1: E = the columns, O unused */                                                 \
    _Pragma("GCC unroll 8") for (int v = 0; v < NL; v++) {                                                         \
        if (v == NL - 1 && (S == 1 || NL <= 4) && !need_next) {                                                    \
            E[v] = O[v] = _mm512_setzero_ps();                                                                     \
            continue;                                                                                              \
        }                                                                                                          \
        __m512 lo = _mm512_maskz_loadu_ps(m_lo[v], rp + 16 * S * v);                                               \
        if (S == 1) {                                                                                              \
            E[v] = lo;                                                                                             \
        } else {                                                                                                   \
            __m512 hi = _mm512_maskz_loadu_ps(m_hi[v], rp + 16 * S * v + 16);                                      \
            E[v] = mrt_even16(lo, hi);                                                                             \
            O[v] = mrt_odd16(lo, hi);                                                                              \
        }                                                                                                          \
    }
#define DW_SHIFT_TAP(S, kw, v, xv)                                                                                 \
    {                                                                                                              \
        bool odd = S == 2 && kw % 2;                                                                               \
        int shift = S == 2 ? kw / 2 : kw;                                                                          \
        __m512 next = odd ? O[v + 1] : E[v + 1];                                                                   \
        xv = odd ? O[v] : E[v];                                                                                    \
        if (shift) xv = shift <= 3 ? dw_shift_lanes(next, xv, shift) : dw_shift_lanes6(next, xv, shift);           \
    }
#define DW_SHIFT(S, NV, R, K, SH) DW_ROW_KERNEL(SHIFT, dw_shift_s, S, NV, R, K, SH)
/* lanes i + n of hi:lo, n a constant after unrolling: 1..3, or 1..6 for dw_shift_lanes6. Two functions because GCC
   12, given the six-way choice in the stride-2 5x5 kernels, kept their vectors on the stack (3x as many stack
   accesses, 5x5/2 144@56 0.107 -> 0.139 ms). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_shift_lanes(__m512 hi, __m512 lo, int n)
{
    __m512i h = _mm512_castps_si512(hi), l = _mm512_castps_si512(lo);
    return _mm512_castsi512_ps(n == 1 ? _mm512_alignr_epi32(h, l, 1) : n == 2 ? _mm512_alignr_epi32(h, l, 2)
                                                                          : _mm512_alignr_epi32(h, l, 3));
}
__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_shift_lanes6(__m512 hi, __m512 lo, int n)
{
    if (n <= 3) return dw_shift_lanes(hi, lo, n);
    __m512i h = _mm512_castps_si512(hi), l = _mm512_castps_si512(lo);
    return _mm512_castsi512_ps(n == 4 ? _mm512_alignr_epi32(h, l, 4) : n == 5 ? _mm512_alignr_epi32(h, l, 5)
                                                                          : _mm512_alignr_epi32(h, l, 6));
}
/* a row kernel KERNEL(S, NV, R, K, SH) for NV = 1..4 vectors, R = 4 rows; and the four by name (PFX: dw_reuse_s or
   dw_shift_s) */
#define DW_ROW_KERNELS(KERNEL, S, K, SH)                                                                           \
    KERNEL(S, 1, 4, K, SH) KERNEL(S, 2, 4, K, SH) KERNEL(S, 3, 4, K, SH) KERNEL(S, 4, 4, K, SH)
#define DW_ROW_FNS(PFX, S, K, SH)                                                                                  \
    {PFX##S##_1_k##K##_h##SH, PFX##S##_2_k##K##_h##SH, PFX##S##_3_k##K##_h##SH, PFX##S##_4_k##K##_h##SH}
DW_ROW_KERNELS(DW_SHIFT, 1, 3, 1)
DW_ROW_KERNELS(DW_SHIFT, 1, 3, 2)
DW_ROW_KERNELS(DW_SHIFT, 1, 7, 1)
DW_ROW_KERNELS(DW_SHIFT, 2, 3, 1)
DW_ROW_KERNELS(DW_SHIFT, 2, 3, 2)
DW_ROW_KERNELS(DW_SHIFT, 2, 5, 1)
DW_ROW_KERNELS(DW_SHIFT, 2, 5, 2)
DW_ROW_KERNELS(DW_SHIFT, 2, 7, 1)
/* [column stride - 1][3x3 / 5x5 / 7x7][row stride - 1][vectors - 1]; NULL where DW_REUSE (or DW_DIRECT) stays */
static const dw_direct_fn dw_shift_fns[2][3][2][4] = {
    {{DW_ROW_FNS(dw_shift_s, 1, 3, 1), DW_ROW_FNS(dw_shift_s, 1, 3, 2)},
     {{NULL}, {NULL}},
     {DW_ROW_FNS(dw_shift_s, 1, 7, 1), {NULL}}},
    {{DW_ROW_FNS(dw_shift_s, 2, 3, 1), DW_ROW_FNS(dw_shift_s, 2, 3, 2)},
     {DW_ROW_FNS(dw_shift_s, 2, 5, 1), DW_ROW_FNS(dw_shift_s, 2, 5, 2)},
     {DW_ROW_FNS(dw_shift_s, 2, 7, 1), {NULL}}},
};

/* The row kernels' tables' first index + 1: 1, 2, 3 for 3x3, 5x5, 7x7 kernels; 0 for any other (DW_DIRECT's loops) */
static int dw_kind(const dw_job *j)
{
    return j->KH == 3 && j->KW == 3 ? 1 : j->KH == 5 && j->KW == 5 ? 2 : j->KH == 7 && j->KW == 7 ? 3 : 0;
}

/* The DW_SHIFT kernel for j's rows of nv vectors (1..4), or NULL when j is not one it computes */
static dw_direct_fn dw_shift_of(const dw_job *j, int64_t nv)
{
    int kind = dw_kind(j);
    if (!kind || j->sw < 1 || j->sw > 2 || j->dw != 1 || j->dh != 1 || j->sh < 1 || j->sh > 2) return NULL;
    return dw_shift_fns[j->sw - 1][kind - 1][j->sh - 1][(nv > 4 ? 4 : nv) - 1];
}

DW_ROW_KERNELS(DW_REUSE, 1, 3, 1)
DW_ROW_KERNELS(DW_REUSE, 2, 3, 1)
DW_ROW_KERNELS(DW_REUSE, 1, 3, 2)
DW_ROW_KERNELS(DW_REUSE, 2, 3, 2)
DW_ROW_KERNELS(DW_REUSE, 1, 5, 1)
DW_ROW_KERNELS(DW_REUSE, 2, 5, 1)
DW_ROW_KERNELS(DW_REUSE, 1, 5, 2)
DW_ROW_KERNELS(DW_REUSE, 2, 5, 2)
DW_ROW_KERNELS(DW_REUSE, 1, 7, 1)
DW_ROW_KERNELS(DW_REUSE, 2, 7, 1)
/* [3x3 / 5x5 / 7x7][row stride - 1][column stride - 1][vectors - 1]; 7x7 at row stride 2 (rare) takes DW_DIRECT */
static const dw_direct_fn dw_reuse_fns[3][2][2][4] = {
    {{DW_ROW_FNS(dw_reuse_s, 1, 3, 1), DW_ROW_FNS(dw_reuse_s, 2, 3, 1)},
     {DW_ROW_FNS(dw_reuse_s, 1, 3, 2), DW_ROW_FNS(dw_reuse_s, 2, 3, 2)}},
    {{DW_ROW_FNS(dw_reuse_s, 1, 5, 1), DW_ROW_FNS(dw_reuse_s, 2, 5, 1)},
     {DW_ROW_FNS(dw_reuse_s, 1, 5, 2), DW_ROW_FNS(dw_reuse_s, 2, 5, 2)}},
    {{DW_ROW_FNS(dw_reuse_s, 1, 7, 1), DW_ROW_FNS(dw_reuse_s, 2, 7, 1)}, {{NULL}, {NULL}}},
};

/* Output rows [oh0, oh1) of a plane: their input rows and the output lines, fetched into L2 (read) while the
   epilogue of the rows before them computes. A SiLU's pass is bound by its arithmetic and leaves the memory idle,
   and the next rows' kernel then waited on L3: EfficientNet-B0's 3x3 32@112 (rows in groups of 36) 206-212 ->
   186-194 us in the model on one thread (three alternating profiles). Fetching the next plane's first rows after a
   plane's last group too made that node slower (214-219 us) and was left out. */
static void dw_fetch_rows(const dw_job *j, int64_t plane, int64_t oh0, int64_t oh1)
{
    const float *xp = j->x + plane * j->H * j->W, *yp = j->y + plane * j->OH * j->OW;
    int64_t ih0 = oh0 * j->sh - j->ph, ih1 = (oh1 - 1) * j->sh - j->ph + (j->KH - 1) * j->dh + 1;
    if (ih0 < 0) ih0 = 0;
    if (ih1 > j->H) ih1 = j->H;
    for (const char *a = (const char *)(xp + ih0 * j->W), *e = (const char *)(xp + ih1 * j->W); a < e; a += 64)
        _mm_prefetch(a, _MM_HINT_T1);
    for (const char *a = (const char *)(yp + oh0 * j->OW), *e = (const char *)(yp + oh1 * j->OW); a < e; a += 64)
        _mm_prefetch(a, _MM_HINT_T1);
}

/* One plane straight from the input (see the top of the file), in column blocks of up to 64. The epilogue
   [BatchNormalization] -> [Add] -> [Relu | Clip] is applied in registers before the stores (mrt_reg_epilogue16;
   as a pass over the rows, it was most of the 2.2% of MobileNetV2's perf samples in post_bn_clamp); another one,
   when with_epilogue, to groups of rows of about 4K outputs while they are still in L1. Returns whether the plane's
   epilogue is done. */
static bool dw_plane_direct(const dw_job *j, int64_t plane, int64_t r_lo, int64_t r_hi, bool with_epilogue)
{
    int64_t c = plane % j->C, OW = j->OW;
    const float *xp = j->x + plane * j->H * j->W, *wp = j->w + c * j->KH * j->KW;
    float *yp = j->y + plane * j->OH * OW, bias = j->b ? j->b[c] : 0.0f;
    mrt_reg_epilogue re;
    bool in_regs = mrt_reg_epilogue_of(j->ep, c, plane * j->OH * OW, &re);
    int64_t rows = in_regs ? j->OH : OW >= 4096 ? 1 : 4096 / OW;
    int kind = dw_kind(j);
    for (int64_t oh0 = r_lo; oh0 < r_hi; oh0 += rows) {
        int64_t oh1 = oh0 + rows < r_hi ? oh0 + rows : r_hi;
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 64) {
            int64_t nv = (OW - ow0 + 15) / 16;
            int iv = (nv > 4 ? 4 : (int)nv) - 1;
            dw_direct_fn reuse = dw_shift_of(j, nv);
            if (!reuse && kind && j->dh == 1 && j->sh <= 2) reuse = dw_reuse_fns[kind - 1][j->sh - 1][j->sw - 1][iv];
            if (reuse)
                reuse(j, xp, wp, yp, oh0, oh1, ow0, bias, in_regs ? &re : NULL);
            else
                dw_direct_fns[kind][j->sw - 1][iv](j, xp, wp, yp, oh0, oh1, ow0, bias, in_regs ? &re : NULL);
        }
        float *ye = yp + oh0 * OW;
        if (with_epilogue && !in_regs && j->ep) {
            if (oh1 < r_hi) dw_fetch_rows(j, plane, oh1, oh1 + rows < r_hi ? oh1 + rows : r_hi);
            mrt_epilogue_apply(j->ep, ye, (oh1 - oh0) * OW, c, ye - j->y);
        }
    }
    return in_regs || !j->ep;
}

static bool dw_direct_ok(const dw_job *j)
{
    return mrt_cpu_has_avx512f() && (j->sw == 1 || j->sw == 2) && j->KW <= DW_DIRECT_MAXKW && j->W <= DW_DIRECT_MAXW;
}

/* ---- small planes (7x7, 14x14): 16 channels per vector. A row of 7 or 14 fills a vector badly and each plane
   pays its own setup; here a block of 16 channels is copied, zero-padded, into scratch laid out [row][col][channel],
   every output position is one vector of 16 channels, and the results are copied back to the channels' planes.
   The same fmaf chain per output as the other paths: bias, then the taps in (kh, kw) order, padding as w * 0. */
enum {
    DW_CH = 16,            /* channels per block: one AVX-512 vector */
    DW_CH_MAXOUT = 256,    /* output positions per plane (16x16) */
    DW_CH_MAXIN = 1024,    /* padded input positions per plane */
    DW_CH_MAXTAPS = 64,    /* kernel taps (8x8) */
    DW_CH_POS = 4,         /* output positions in flight: independent fma chains */
};

typedef struct dw_ch_geom {
    int64_t Hp, Wp; /* the padded input rows and columns the outputs read */
} dw_ch_geom;

static dw_ch_geom dw_ch_geometry(const dw_job *j)
{
    dw_ch_geom g = {(j->OH - 1) * j->sh + (j->KH - 1) * j->dh + 1, (j->OW - 1) * j->sw + (j->KW - 1) * j->dw + 1};
    return g;
}

/* Not for rows of 14 outputs or more that the plane path's DW_SHIFT computes faster: with column stride 2 (the
   block's copy transposes four times the outputs' floats: 3x3/2 192@28 0.040 -> 0.031 ms on one thread, 0.024 ->
   0.016 on two; 5x5/2 240@28 0.043 -> 0.036 on two) and 3x3 kernels (576@14: 0.061 -> 0.056, 0.032 -> 0.029). At
   14 -> 7, 20 -> 10 and for 7x7 kernels at 14x14 (0.113 -> 0.149) the block stays ahead. */
static bool dw_channels_ok(const dw_job *j)
{
    dw_ch_geom g = dw_ch_geometry(j);
    if (j->OW >= 14 && (j->sw == 2 || j->KW == 3) && dw_shift_of(j, 1)) return false;
    return dw_direct_ok(j) && j->OH * j->OW <= DW_CH_MAXOUT && g.Hp * g.Wp <= DW_CH_MAXIN &&
           j->KH * j->KW <= DW_CH_MAXTAPS && j->KH * j->KW > 0;
}

/* A block's in-register epilogue (lane = channel: BatchNormalization's coefficients per lane), or none (on = false) */
typedef struct dw_ch_epilogue {
    bool on;
    mrt_reg_epilogue re;
    __m512 a_hi, a_lo, b_hi, b_lo, lo, hi;
} dw_ch_epilogue;

__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_ch_finish(const dw_ch_epilogue *e, __m512 r)
{
    return e->on ? mrt_reg_epilogue16(&e->re, r, e->a_hi, e->a_lo, e->b_hi, e->b_lo, 0, 0, e->lo, e->hi) : r;
}

/* The next block's output lines, fetched for writing (prefetchw) a few per group of positions while this block
   computes. Inside a model a block's output lines were last in the other core's cache (the memory plan hands the
   buffer on; the next node reads by positions), and each store waited for the line to be taken from there: the
   14x14 depthwise convs of MobileNetV2 ran no faster on two threads than on one (576 channels: 58 us, 65). Fetched
   ahead, MobileNetV2 on two threads 3.72 -> 3.64 ms. */
typedef struct dw_ch_next {
    char *out;
    int64_t out_lines, per_group; /* lines in all, and per group of DW_CH_POS positions */
} dw_ch_next;

/* The block's outputs into acc ([position][channel]), each one fma chain over the taps in (kh, kw) order from the
   bias, through e; DW_CH_POS positions in flight; next's lines fetched on the way. Inlined into each call, so
   constant taps and stride make their own loops. */
__attribute__((target("avx512f,prfchw"), always_inline)) static inline void
dw_ch_compute(const dw_job *j, const float *xs, float *acc, const float *wt, __m512 bias, int64_t Wp,
              const int64_t *toff, int64_t taps, int64_t sw, const dw_ch_epilogue *e, const dw_ch_next *next)
{
    /* the positions in row-major order, DW_CH_POS at a time across row ends (a 7-wide row alone would leave three
       chains in flight, then a single one), the last group's missing positions computed again from the last one
       and not stored */
    int64_t n = j->OH * j->OW, oh = 0, ow = 0;
    for (int64_t q = 0; q < n; q += DW_CH_POS) {
        const float *src[DW_CH_POS];
        for (int p = 0; p < DW_CH_POS; p++) {
            src[p] = xs + (oh * j->sh * Wp + ow * sw) * DW_CH;
            if (q + p + 1 < n && ++ow == j->OW) ow = 0, oh++;
        }
        for (int64_t l = q / DW_CH_POS * next->per_group, le = l + next->per_group; l < le && l < next->out_lines; l++)
            __builtin_prefetch(next->out + 64 * l, 1, 3);
        __m512 a[DW_CH_POS];
        for (int p = 0; p < DW_CH_POS; p++) a[p] = bias;
        for (int64_t k = 0; k < taps; k++) {
            __m512 wv = _mm512_load_ps(wt + k * DW_CH);
            for (int p = 0; p < DW_CH_POS; p++) a[p] = _mm512_fmadd_ps(wv, _mm512_load_ps(src[p] + toff[k] * DW_CH), a[p]);
        }
        for (int p = 0; p < DW_CH_POS && q + p < n; p++) _mm512_store_ps(acc + (q + p) * DW_CH, dw_ch_finish(e, a[p]));
    }
}

/* dw_ch_compute at column stride 1 and column dilation 1, output row by output row, DW_CH_ROWP positions at a time:
   per kernel row, the row's DW_CH_ROWP + KW - 1 input cells are loaded once and each feeds the KW taps that read it,
   where dw_ch_compute loads a cell per tap and position (five loads per four fmas: MnasNet's 5x5 1152@7 took 45 us
   against ONNX Runtime's 25). Each output is the same fma chain, from the bias over the taps in (kh, kw) order, so
   the same bits. KH and KW constants where inlined with them. */
enum { DW_CH_ROWP = 8, DW_CH_ROW_MAXKW = 7 };
__attribute__((target("avx512f,prfchw"), always_inline)) static inline void
dw_ch_compute_rows(const dw_job *j, const float *xs, float *acc, const float *wt, __m512 bias, int64_t Wp, int64_t KH,
                   int64_t KW, const dw_ch_epilogue *e, const dw_ch_next *next)
{
    int64_t OW = j->OW, ohw = j->OH * OW;
    for (int64_t oh = 0; oh < j->OH; oh++)
        for (int64_t ow0 = 0; ow0 < OW; ow0 += DW_CH_ROWP) {
            int np = OW - ow0 < DW_CH_ROWP ? (int)(OW - ow0) : DW_CH_ROWP, nx = np + (int)KW - 1;
            int64_t q = oh * OW + ow0;
            for (int64_t l = q * next->out_lines / ohw, le = (q + np) * next->out_lines / ohw; l < le; l++)
                __builtin_prefetch(next->out + 64 * l, 1, 3);
            __m512 a[DW_CH_ROWP];
            for (int p = 0; p < DW_CH_ROWP; p++) a[p] = bias;
            for (int64_t kh = 0; kh < KH; kh++) {
                const float *row = xs + ((oh * j->sh + kh * j->dh) * Wp + ow0) * DW_CH;
                __m512 x[DW_CH_ROWP + DW_CH_ROW_MAXKW - 1];
                /* cells past the tile's last needed one (a short tile at the row's end) are not read */
                for (int c = 0; c < DW_CH_ROWP + KW - 1; c++)
                    x[c] = c < nx ? _mm512_load_ps(row + c * DW_CH) : _mm512_setzero_ps();
                for (int64_t kw = 0; kw < KW; kw++) {
                    __m512 wv = _mm512_load_ps(wt + (kh * KW + kw) * DW_CH);
                    for (int p = 0; p < DW_CH_ROWP; p++) a[p] = _mm512_fmadd_ps(wv, x[p + kw], a[p]);
                }
            }
            for (int p = 0; p < np; p++) _mm512_store_ps(acc + (q + p) * DW_CH, dw_ch_finish(e, a[p]));
        }
}

/* Task t: image t / blocks, channels [16 (t % blocks), +16) */
__attribute__((target("avx512f,prfchw"))) static void dw_channels_range(void *arg, int64_t t0, int64_t t1)
{
    const dw_job *j = arg;
    dw_ch_geom g = dw_ch_geometry(j);
    int64_t blocks = (j->C + DW_CH - 1) / DW_CH, ohw = j->OH * j->OW, taps = j->KH * j->KW;
    _Alignas(64) float xs[DW_CH_MAXIN * DW_CH], acc[DW_CH_MAXOUT * DW_CH], wt[DW_CH_MAXTAPS * DW_CH], bs[DW_CH];
    /* tap t's offset in xs, in vectors */
    int64_t toff[DW_CH_MAXTAPS];
    for (int64_t kh = 0; kh < j->KH; kh++)
        for (int64_t kw = 0; kw < j->KW; kw++) toff[kh * j->KW + kw] = kh * j->dh * g.Wp + kw * j->dw;
    for (int64_t t = t0; t < t1; t++) {
        int64_t img = t / blocks, c0 = t % blocks * DW_CH, nc = j->C - c0 < DW_CH ? j->C - c0 : DW_CH;
        /* the padded block: zeros, then the input's cells, channel innermost (16 channel rows at a time,
           transposed in registers). Every block writes the same cells, all 16 lanes (channels past C as zeros), so
           the padding is zeroed once per range: per block, the memset was 0.7% of MobileNetV2's perf samples. */
        if (t == t0) memset(xs, 0, (size_t)(g.Hp * g.Wp * DW_CH) * sizeof(float));
        const float *xb = j->x + (img * j->C + c0) * j->H * j->W;
        for (int64_t ih = j->ph > 0 ? 0 : -j->ph; ih < j->H && ih + j->ph < g.Hp; ih++)
            for (int64_t iw0 = 0; iw0 < j->W; iw0 += DW_CH) {
                int64_t cols = j->W - iw0 < DW_CH ? j->W - iw0 : DW_CH;
                __mmask16 m = (__mmask16)((1u << cols) - 1u);
                __m512 r[DW_CH];
                for (int ch = 0; ch < DW_CH; ch++)
                    r[ch] = ch < nc ? _mm512_maskz_loadu_ps(m, xb + (ch * j->H + ih) * j->W + iw0)
                                    : _mm512_setzero_ps();
                mrt_transpose16(r);
                for (int64_t q = 0; q < cols; q++) {
                    int64_t xq = iw0 + q + j->pw; /* the padded column (pw >= 0: never below 0) */
                    if (xq < g.Wp) _mm512_store_ps(xs + ((ih + j->ph) * g.Wp + xq) * DW_CH, r[mrt_transpose16_perm[q]]);
                }
            }
        memset(wt, 0, (size_t)(taps * DW_CH) * sizeof(float));
        for (int64_t ch = 0; ch < nc; ch++) {
            for (int64_t k = 0; k < taps; k++) wt[k * DW_CH + ch] = j->w[(c0 + ch) * taps + k];
            bs[ch] = j->b ? j->b[c0 + ch] : 0.0f;
        }
        for (int64_t ch = nc; ch < DW_CH; ch++) bs[ch] = 0.0f;
        __m512 bias = _mm512_load_ps(bs);
        /* the 3x3 and 5x5 kernels with strides 1 and 2 with their sizes as constants: the tap loop unrolls */
        /* the epilogue in registers when it is [BatchNormalization] -> [Relu | Clip] (a residual is laid out by
           planes, not by the lanes' channels: that goes in the pass below) */
        dw_ch_epilogue e;
        e.on = mrt_reg_epilogue_of(j->ep, c0, 0, &e.re) && !e.re.other;
        _Alignas(64) float coef[4][DW_CH] = {{0}};
        for (int64_t ch = 0; e.on && e.re.bn && ch < nc; ch++) {
            coef[0][ch] = e.re.bn[ch].a_hi, coef[1][ch] = e.re.bn[ch].a_lo;
            coef[2][ch] = e.re.bn[ch].b_hi, coef[3][ch] = e.re.bn[ch].b_lo;
        }
        e.a_hi = _mm512_load_ps(coef[0]), e.a_lo = _mm512_load_ps(coef[1]), e.b_hi = _mm512_load_ps(coef[2]);
        e.b_lo = _mm512_load_ps(coef[3]), e.lo = _mm512_set1_ps(e.re.lo), e.hi = _mm512_set1_ps(e.re.hi);
        dw_ch_next next = {0}; /* none after the range's last block */
        if (t + 1 < t1) {
            int64_t ni = (t + 1) / blocks, nc0 = (t + 1) % blocks * DW_CH;
            int64_t nn = j->C - nc0 < DW_CH ? j->C - nc0 : DW_CH;
            next.out = (char *)(j->y + (ni * j->C + nc0) * ohw);
            next.out_lines = nn * ohw * (int64_t)sizeof(float) / 64;
            int64_t groups = (ohw + DW_CH_POS - 1) / DW_CH_POS;
            next.per_group = (next.out_lines + groups - 1) / groups;
        }
        const dw_ch_next *nx = &next;
        bool rows = j->sw == 1 && j->dw == 1 && j->KW <= DW_CH_ROW_MAXKW;
        if (rows && j->KH == 3 && j->KW == 3) dw_ch_compute_rows(j, xs, acc, wt, bias, g.Wp, 3, 3, &e, nx);
        else if (rows && j->KH == 5 && j->KW == 5) dw_ch_compute_rows(j, xs, acc, wt, bias, g.Wp, 5, 5, &e, nx);
        else if (rows && j->KH == 7 && j->KW == 7) dw_ch_compute_rows(j, xs, acc, wt, bias, g.Wp, 7, 7, &e, nx);
        else if (rows) dw_ch_compute_rows(j, xs, acc, wt, bias, g.Wp, j->KH, j->KW, &e, nx);
        else if (taps == 9 && j->KW == 3 && j->sw == 1) dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, 9, 1, &e, nx);
        else if (taps == 9 && j->KW == 3 && j->sw == 2) dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, 9, 2, &e, nx);
        else if (taps == 25 && j->KW == 5 && j->sw == 1) dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, 25, 1, &e, nx);
        else if (taps == 25 && j->KW == 5 && j->sw == 2) dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, 25, 2, &e, nx);
        else if (taps == 49 && j->KW == 7 && j->sw == 1) dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, 49, 1, &e, nx);
        else dw_ch_compute(j, xs, acc, wt, bias, g.Wp, toff, taps, j->sw, &e, nx);
        /* back to the channels' planes, 16 positions at a time */
        float *y0 = j->y + (img * j->C + c0) * ohw;
        for (int64_t p0 = 0; p0 < ohw; p0 += DW_CH) {
            int64_t np = ohw - p0 < DW_CH ? ohw - p0 : DW_CH;
            __mmask16 m = (__mmask16)((1u << np) - 1u);
            __m512 r[DW_CH];
            for (int q = 0; q < DW_CH; q++)
                r[q] = q < np ? _mm512_load_ps(acc + (p0 + q) * DW_CH) : _mm512_setzero_ps();
            mrt_transpose16(r);
            for (int64_t ch = 0; ch < nc; ch++) _mm512_mask_storeu_ps(y0 + ch * ohw + p0, m, r[mrt_transpose16_perm[ch]]);
        }
        if (!e.on) mrt_epilogue_apply_rows(j->ep, y0, nc, ohw, ohw, c0, y0 - j->y);
    }
}

#endif

/* The first output row of band b of j->bands: OH b / bands, rounded to a multiple of the row kernels' 4 rows when
   every band gets one. Rows past a band's end in a block are computed and not stored: bands of 14 rows (28 output
   rows, two threads) computed 16, and 3x3/2 144@56 took 0.027 ms on two threads against 0.021 by planes. */
static int64_t dw_band_row(const dw_job *j, int64_t b)
{
    int64_t r = j->OH * b / j->bands;
    if (j->OH >= 4 * j->bands && b < j->bands) r = (r + 2) / 4 * 4;
    return r < j->OH ? r : j->OH;
}

static void dw_range(void *arg, int64_t begin, int64_t end)
{
    const dw_job *j = arg;
#ifdef DW_HAVE_AVX512
    if (dw_direct_ok(j)) {
        int64_t size = j->OH * j->OW;
        if (j->bands > 1 || size >= DW_EP_GROUP) {
            int64_t planes = j->n_img * j->C;
            for (int64_t t = begin; t < end; t++) {
                int64_t band = t / planes, pl = t % planes;
                dw_plane_direct(j, pl, dw_band_row(j, band), dw_band_row(j, band + 1), true);
            }
            return;
        }
        /* small planes (7x7, 14x14): an epilogue not done in registers goes over several planes of one image at once */
        for (int64_t p0 = begin, p1; p0 < end; p0 = p1) {
            p1 = p0 + DW_EP_GROUP / size;
            if (p1 > end) p1 = end;
            if (p1 > (p0 / j->C + 1) * j->C) p1 = (p0 / j->C + 1) * j->C;
            bool done = true;
            for (int64_t pl = p0; pl < p1; pl++) done &= dw_plane_direct(j, pl, 0, j->OH, false);
            if (!done) mrt_epilogue_apply_rows(j->ep, j->y + p0 * size, p1 - p0, size, size, p0 % j->C, p0 * size);
        }
        return;
    }
#endif
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
#ifdef DW_HAVE_AVX512
    if (dw_channels_ok(&j)) {
        int64_t blocks = p->n * ((p->c + DW_CH - 1) / DW_CH);
        mrt_parallel_for(ctx, blocks, blocks * DW_CH * work >= 2 * 65536 ? 1 : blocks, dw_channels_range, &j);
        return;
    }
#endif
    /* Large planes on several threads: each thread takes a band of rows of every plane (tasks band-major, so a
       thread's share is its band), not a range of planes. The 1x1 convs around these (the GEMM's wide strips, the
       in-place rows path) split by positions, so the input was written, and the output is read, by the thread that
       owns those rows; by planes, half of each came from the other core's cache. MobileNetV2 on two threads, six
       alternating runs: 3.62-3.73 -> 3.63-3.70 ms (per node: the 32@112 depthwise and the 1x1 after it 92 -> 86 us
       each); EfficientNet-B0 unchanged. Likewise planes of 2048 inputs or more with fewer outputs (56x56, 112x112 at
       stride 2): by planes, in the rounds where this VM's cores are far apart (a 2-thread MnasNet at 2.9-3.2 ms, not
       1.8), MnasNet's 3x3/2 48@112 took 88 us, by bands 54; 3x3 72@56 63 -> 48, 5x5/2 72@56 56 -> 46 (node medians,
       paired rounds). */
    j.n_img = p->n;
    j.bands = 1;
#ifdef DW_HAVE_AVX512
    if (ctx && ctx->n_threads > 1 && dw_direct_ok(&j) && (j.OH * j.OW >= DW_EP_GROUP || j.H * j.W >= DW_BAND_MIN_IN) &&
        j.OH >= ctx->n_threads)
        j.bands = ctx->n_threads;
#endif
    mrt_parallel_for(ctx, planes * j.bands, grain, dw_range, &j);
}
