/* CPU kernel: Resize (10, 11, 13, 18, 19) and Upsample (7, 9), N-D and separable: for every axis and output
   coordinate, a list of (source index, weight) neighbours (1 for nearest, 2 for linear, 4 for cubic), then each
   output element sums over the product of its axes' lists. Every coordinate_transformation_mode, nearest_mode,
   cubic_coeff_a, exclude_outside, extrapolation_value (tf_crop_and_resize), axes and keep_aspect_ratio_policy.
   antialias (opset 18+) widens the linear/cubic kernel by 1/scale when downsampling, as onnx.reference does.
   Computed in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/resize.h"
#include "ops_cpu/simd.h"

/* An axis whose table maps every output coordinate to the same input one, weight 1, never outside. */
static bool identity_axis(const mrt_resize_axis *t, int64_t in, int64_t out)
{
    if (t->n != 1 || in != out) return false;
    for (int64_t o = 0; o < out; o++)
        if (t->idx[o] != o || t->w[o] != 1 || t->out_of_range[o]) return false;
    return true;
}

/* float32 resized along its last two axes only (NCHW images: Upsample in FPNs, segmentation heads, a detector's
   input transform): the same sums in the same order as the general loop below, without its per-element walk over
   every axis and the generic loads (Mask R-CNN's [1, 256, 100, 100] -> [.., 200, 200] nearest took 139 ms). */
typedef struct resize2_job {
    const float *x;
    float *y;
    const mrt_resize_axis *th, *tw;
    int64_t ih, iw, oh, ow;
    double extrapolation;
    bool vector_rows; /* linear on both axes and no column outside: linear_row_avx512 takes the rows */
} resize2_job;

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* Linear on both axes, nothing outside: 8 output columns at a time in double, the sums of the scalar loop below
   term for term. Each weight is the double product wh * ww, each term w * x rounded before it is added (mul then
   add, no FMA), a term whose weight is 0 left out (a masked add: with an infinite or NaN neighbour, 0 * x would
   not be 0), the sum started from +0. What depends on the columns alone (their neighbours, weights, and the
   16-float window most groups read with one load and two permutes instead of gathers) is worked out once per call
   into lin_cols groups, not again for every row and plane (DeepLabV3's [1, 21, 14, 14] -> 224 x 224 took
   1.7 ms). A last group of fewer than 8 columns has zero weights and index 0 past its end, and a masked store. */
enum { LIN_COLS_MAX_GROUPS = 256 }; /* output rows up to 2048 wide take this path */
typedef struct lin_cols {
    _Alignas(64) double w0[8], w1[8]; /* the first and second neighbour's weight */
    int64_t i0[8], i1[8];             /* and input column */
    int32_t p0[16], p1[16];           /* with window: the neighbours' places in the 16 floats from lo */
    int64_t lo;
    int n;                            /* columns in the group */
    bool window;
} lin_cols;

static int64_t lin_cols_build(const mrt_resize_axis *tw, int64_t ow_n, lin_cols *g)
{
    int64_t groups = (ow_n + 7) / 8;
    for (int64_t q = 0; q < groups; q++) {
        lin_cols *c = &g[q];
        memset(c, 0, sizeof *c);
        c->n = (int)(ow_n - 8 * q < 8 ? ow_n - 8 * q : 8);
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int l = 0; l < c->n; l++) {
            int64_t ow = 8 * q + l;
            c->i0[l] = tw->idx[2 * ow], c->i1[l] = tw->idx[2 * ow + 1];
            c->w0[l] = tw->w[2 * ow], c->w1[l] = tw->w[2 * ow + 1];
            lo = c->i0[l] < lo ? c->i0[l] : lo, lo = c->i1[l] < lo ? c->i1[l] : lo;
            hi = c->i0[l] > hi ? c->i0[l] : hi, hi = c->i1[l] > hi ? c->i1[l] : hi;
        }
        c->window = hi - lo < 16 && lo >= 0;
        c->lo = c->window ? lo : 0;
        for (int l = 0; l < c->n; l++) c->p0[l] = (int32_t)(c->i0[l] - c->lo), c->p1[l] = (int32_t)(c->i1[l] - c->lo);
    }
    return groups;
}

/* Group g's first and second neighbours in input row r, in double */
__attribute__((target("avx512f"), always_inline)) static inline void lin_neighbours(const float *r, int64_t iw,
                                                                                   const lin_cols *g, __m512d *x0,
                                                                                   __m512d *x1)
{
    if (g->window) {
        __m512 v = _mm512_maskz_loadu_ps(mrt_mask16_first(iw - g->lo), r + g->lo);
        *x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_loadu_si512(g->p0), v)));
        *x1 = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_loadu_si512(g->p1), v)));
    } else {
        *x0 = _mm512_cvtps_pd(_mm512_i64gather_ps(_mm512_loadu_si512(g->i0), r, 4));
        *x1 = _mm512_cvtps_pd(_mm512_i64gather_ps(_mm512_loadu_si512(g->i1), r, 4));
    }
}

__attribute__((target("avx512f"))) static void linear_row_avx512(const float *r0, const float *r1, int64_t iw,
                                                                const double *wh, const lin_cols *g, int64_t groups,
                                                                float *y)
{
    const __m512d zero = _mm512_setzero_pd();
    const float *rows[2] = {r0, r1};
    const __m512d whs[2] = {_mm512_set1_pd(wh[0]), _mm512_set1_pd(wh[1])};
    for (int64_t q = 0; q < groups; q++, g++) {
        __m512d ww0 = _mm512_load_pd(g->w0), ww1 = _mm512_load_pd(g->w1), acc = zero;
        for (int kh = 0; kh < 2; kh++) {
            __m512d w0 = _mm512_mul_pd(whs[kh], ww0), w1 = _mm512_mul_pd(whs[kh], ww1), x0, x1;
            lin_neighbours(rows[kh], iw, g, &x0, &x1);
            acc = _mm512_mask_add_pd(acc, _mm512_cmp_pd_mask(w0, zero, _CMP_NEQ_UQ), acc, _mm512_mul_pd(w0, x0));
            acc = _mm512_mask_add_pd(acc, _mm512_cmp_pd_mask(w1, zero, _CMP_NEQ_UQ), acc, _mm512_mul_pd(w1, x1));
        }
        _mm512_mask_storeu_ps(y + 8 * q, (__mmask16)((1u << g->n) - 1u), _mm512_castps256_ps512(_mm512_cvtpd_ps(acc)));
    }
}

/* The columns' neighbours of input row r in double, as linear_row_avx512 reads them: per group, the 8 first
   neighbours, then the 8 second ones */
__attribute__((target("avx512f"))) static void linear_row_gather(const float *r, int64_t iw, const lin_cols *g,
                                                                int64_t groups, double *dst)
{
    for (int64_t q = 0; q < groups; q++, g++, dst += 16) {
        __m512d x0, x1;
        lin_neighbours(r, iw, g, &x0, &x1);
        _mm512_store_pd(dst, x0);
        _mm512_store_pd(dst + 8, x1);
    }
}

/* linear_row_avx512 on two rows' neighbours gathered by linear_row_gather: the same terms in the same order */
__attribute__((target("avx512f"))) static void linear_row_cached(const double *r0, const double *r1, const double *wh,
                                                                const lin_cols *g, int64_t groups, float *y)
{
    const __m512d zero = _mm512_setzero_pd();
    const double *rows[2] = {r0, r1};
    const __m512d whs[2] = {_mm512_set1_pd(wh[0]), _mm512_set1_pd(wh[1])};
    for (int64_t q = 0; q < groups; q++, g++) {
        __m512d ww0 = _mm512_load_pd(g->w0), ww1 = _mm512_load_pd(g->w1), acc = zero;
        for (int kh = 0; kh < 2; kh++) {
            __m512d w0 = _mm512_mul_pd(whs[kh], ww0), w1 = _mm512_mul_pd(whs[kh], ww1);
            __m512d x0 = _mm512_load_pd(rows[kh] + 16 * q), x1 = _mm512_load_pd(rows[kh] + 16 * q + 8);
            acc = _mm512_mask_add_pd(acc, _mm512_cmp_pd_mask(w0, zero, _CMP_NEQ_UQ), acc, _mm512_mul_pd(w0, x0));
            acc = _mm512_mask_add_pd(acc, _mm512_cmp_pd_mask(w1, zero, _CMP_NEQ_UQ), acc, _mm512_mul_pd(w1, x1));
        }
        _mm512_mask_storeu_ps(y + 8 * q, (__mmask16)((1u << g->n) - 1u), _mm512_castps256_ps512(_mm512_cvtpd_ps(acc)));
    }
}

/* Upsampling reads each input row for several output rows: the rows' neighbours are gathered once into two slots
   (the output rows' two input rows; the next output row usually keeps one or both) instead of once per output row,
   which spent most of the row on the permutes and conversions (DeepLabV3's [1, 21, 14, 14] -> 224 x 224, 1 thread,
   alone, alternating: 0.51 -> 0.31 ms). Slots of at most LIN_SLOT_GROUPS groups (2 x 16 KiB on the stack). */
enum { LIN_SLOT_GROUPS = 128 };
#endif

static void resize2_planes(void *arg, int64_t p0, int64_t p1)
{
    const resize2_job *j = arg;
    const mrt_resize_axis *th = j->th, *tw = j->tw;
#ifdef MRT_HAVE_AVX512_INTRINSICS
    lin_cols cols[j->vector_rows ? LIN_COLS_MAX_GROUPS : 1];
    int64_t groups = j->vector_rows ? lin_cols_build(tw, j->ow, cols) : 0;
    bool cached = groups > 0 && groups <= LIN_SLOT_GROUPS && j->oh > j->ih;
    _Alignas(64) double slot[cached ? 2 : 1][cached ? 16 * groups : 1];
#endif
    for (int64_t p = p0; p < p1; p++) {
        const float *x = j->x + p * j->ih * j->iw;
        float *y = j->y + p * j->oh * j->ow;
#ifdef MRT_HAVE_AVX512_INTRINSICS
        int64_t held[2] = {-1, -1}; /* the input row in each slot */
#endif
        for (int64_t oh = 0; oh < j->oh; oh++) {
            const int64_t *ihx = &th->idx[oh * th->n];
            const double *wh = &th->w[oh * th->n];
            int64_t ow = 0;
#ifdef MRT_HAVE_AVX512_INTRINSICS
            if (j->vector_rows && !th->out_of_range[oh] && cached) {
                int at[2];
                for (int k = 0; k < 2; k++) at[k] = held[0] == ihx[k] ? 0 : held[1] == ihx[k] ? 1 : -1;
                for (int k = 0; k < 2; k++) {
                    if (at[k] >= 0) continue;
                    int free_slot = at[1 - k] == 0 ? 1 : at[1 - k] == 1 ? 0 : k; /* not the other row's */
                    linear_row_gather(x + ihx[k] * j->iw, j->iw, cols, groups, slot[free_slot]);
                    held[free_slot] = ihx[k];
                    at[k] = free_slot;
                }
                linear_row_cached(slot[at[0]], slot[at[1]], wh, cols, groups, y + oh * j->ow);
                ow = j->ow;
            } else if (j->vector_rows && !th->out_of_range[oh]) {
                linear_row_avx512(x + ihx[0] * j->iw, x + ihx[1] * j->iw, j->iw, wh, cols, groups, y + oh * j->ow);
                ow = j->ow;
            }
#endif
            for (; ow < j->ow; ow++) {
                double acc = 0;
                if (th->out_of_range[oh] || tw->out_of_range[ow]) {
                    acc = j->extrapolation;
                } else {
                    const int64_t *iwx = &tw->idx[ow * tw->n];
                    const double *ww = &tw->w[ow * tw->n];
                    for (int kh = 0; kh < th->n; kh++)
                        for (int kw = 0; kw < tw->n; kw++) {
                            double w = wh[kh] * ww[kw];
                            if (w != 0) acc += w * (double)x[ihx[kh] * j->iw + iwx[kw]];
                        }
                }
                y[oh * j->ow + ow] = (float)acc;
            }
        }
    }
}

static mrt_status mrt_cpu_resize(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_resize_geometry g;
    bool need;
    MRT_TRY(mrt_resize_plan(ctx, &g, &need));
    mrt_resize_modes modes = mrt_resize_modes_get(ctx);
    if (x->dtype == MRT_DTYPE_STRING || x->dtype == MRT_DTYPE_BOOL)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(x->dtype));
    double extrapolation = mrt_attr_float(ctx, "extrapolation_value", 0.0f);
    int r = x->rank;
    int64_t counts[3 * MRT_MAX_RANK];
    void *part[3 * MRT_MAX_RANK];
    if (!mrt_resize_table_bytes(ctx, x, &g, counts)) return MRT_STATUS_INVALID_ARG; /* failed, with the reason */
    if (!mrt_workspace_parts(ctx, 3 * r, counts, 1, part)) return MRT_STATUS_OUT_OF_MEMORY;
    mrt_resize_axis tab[MRT_MAX_RANK];
    for (int d = 0; d < r; d++) {
        tab[d] = (mrt_resize_axis){0, part[3 * d], part[3 * d + 1], part[3 * d + 2]};
        mrt_resize_build_axis(ctx, &tab[d], x->shape[d], y->shape[d], g.scale[d], g.roi_start[d], g.roi_end[d], &modes);
    }
    bool last2 = x->dtype == MRT_DTYPE_FLOAT && r >= 2 && mrt_tensor_numel(x) > 0;
    for (int d = 0; last2 && d < r - 2; d++) last2 = identity_axis(&tab[d], x->shape[d], y->shape[d]);
    if (last2) {
        int64_t planes = 1;
        for (int d = 0; d < r - 2; d++) planes *= x->shape[d];
        resize2_job j = {x->data, y->data, &tab[r - 2], &tab[r - 1], x->shape[r - 2], x->shape[r - 1], y->shape[r - 2],
                         y->shape[r - 1], extrapolation, false};
#ifdef MRT_HAVE_AVX512_INTRINSICS
        j.vector_rows = j.th->n == 2 && j.tw->n == 2 && j.ow <= 8 * LIN_COLS_MAX_GROUPS && mrt_cpu_has_avx512f();
        for (int64_t ow = 0; j.vector_rows && ow < j.ow; ow++) j.vector_rows = !j.tw->out_of_range[ow];
#endif
        int64_t per_plane = y->shape[r - 2] * y->shape[r - 1] * tab[r - 2].n * tab[r - 1].n;
        mrt_parallel_for(ctx, planes, per_plane >= 65536 ? 1 : 65536 / (per_plane > 0 ? per_plane : 1), resize2_planes, &j);
        return MRT_STATUS_OK;
    }
    mrt_status st = MRT_STATUS_OK;
    int64_t in_strides[MRT_MAX_RANK], o_idx[MRT_MAX_RANK] = {0}, n_out = mrt_tensor_numel(y);
    mrt_shape_strides(r, x->shape, in_strides);
    bool fl = mrt_dtype_is_float(x->dtype);
    for (int64_t e = 0; !st && e < n_out && mrt_tensor_numel(x) > 0; e++) {
        bool outside = false;
        for (int d = 0; d < r; d++) outside |= tab[d].out_of_range[o_idx[d]];
        double acc = 0;
        if (outside) {
            acc = extrapolation;
        } else {
            /* sum over every combination of the axes' neighbours */
            int k[MRT_MAX_RANK] = {0};
            for (;;) {
                double w = 1;
                int64_t src = 0;
                for (int d = 0; d < r; d++) {
                    int64_t at = o_idx[d] * tab[d].n + k[d];
                    w *= tab[d].w[at];
                    src += tab[d].idx[at] * in_strides[d];
                }
                if (w != 0) acc += w * mrt_load_f64(x->dtype, x->data, src);
                int d = r - 1;
                while (d >= 0 && ++k[d] == tab[d].n) k[d--] = 0;
                if (d < 0) break;
            }
        }
        if (fl) mrt_store_f64(y->dtype, y->data, e, acc);
        else mrt_store_i64(y->dtype, y->data, e, mrt_f64_to_i64_sat(nearbyint(acc)));
        for (int d = r - 1; d >= 0 && ++o_idx[d] == y->shape[d]; d--) o_idx[d] = 0;
    }
    return st;
}

/* The interpolation tables, parts of the workspace as the run carves them */
static mrt_status mrt_cpu_resize_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_resize_geometry g;
    bool need;
    MRT_TRY(mrt_resize_plan(ctx, &g, &need));
    int64_t counts[3 * MRT_MAX_RANK];
    if (!mrt_resize_table_bytes(ctx, x, &g, counts)) return MRT_STATUS_INVALID_ARG; /* failed, with the reason */
    return mrt_workspace_request_parts(ctx, 3 * x->rank, counts, 1);
}

const mrt_kernel mrt_cpu_kernels_resize[] = {
    {"", "Upsample", 7, mrt_cpu_resize, NULL, NULL, NULL, 0, mrt_cpu_resize_workspace},
    {"", "Resize", 10, mrt_cpu_resize, NULL, NULL, NULL, 0, mrt_cpu_resize_workspace},
    {0},
};
