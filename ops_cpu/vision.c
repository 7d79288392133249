/* CPU kernels: AffineGrid 20, Col2Im 18, RoiAlign 10/16/22 (onnxruntime's sampling, which onnx.reference copies: bilinear taps clamped
 * at the border, samples past -1 or the size read 0, and "max" taking the largest weighted tap),
 * NonMaxSuppression 10/11 (greedy per batch and class, as onnx.reference and onnxruntime) and
 * GridSample 16/20/22, following onnx.reference: grid coordinates (x, y[, z]) address the last
 * spatial dim first; out-of-border coordinates are clamped (border) or reflected (reflection) before
 * interpolating; taps outside the input read 0 (zeros), the clamped or the reflected pixel; nearest rounds
 * half to even; cubic is Keys' kernel with a = -0.75. Computed in double; N-D taps as a tensor product. */
#include <math.h>
#include <string.h>

#include <stdlib.h>

#include "engine/opdef/vision.h"
#include "engine/registry.h"
#include "engine/threadpool.h"
#include "ops_cpu/simd.h"

static mrt_status mrt_cpu_grid_sample(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *grid = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    const char *mode = mrt_attr_string(ctx, "mode", ctx->opset < 20 ? "bilinear" : "linear");
    const char *pad_s = mrt_attr_string(ctx, "padding_mode", "zeros");
    bool align = mrt_attr_int(ctx, "align_corners", 0) != 0;
    int pad = !strcmp(pad_s, "border") ? MRT_GRID_PAD_BORDER : !strcmp(pad_s, "reflection") ? MRT_GRID_PAD_REFLECT : MRT_GRID_PAD_ZEROS;
    int kind = !strcmp(mode, "nearest") ? 1 : (!strcmp(mode, "cubic") || !strcmp(mode, "bicubic")) ? 4 : 2;
    int r = x->rank - 2;
    int64_t n = x->shape[0], c = x->shape[1], in_sp = 1, out_sp = 1;
    for (int i = 0; i < r; i++) in_sp *= x->shape[2 + i], out_sp *= y->shape[2 + i];
    if (in_sp == 0) return MRT_STATUS_OK; /* nothing to read from: the (zeroed) output stands */
    int n_taps = 1;
    for (int i = 0; i < r; i++) n_taps *= kind;
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < out_sp; o++) {
            /* per spatial dim: first tap position and tap weights */
            int64_t first[MRT_MAX_RANK];
            double w[MRT_MAX_RANK][4];
            for (int i = 0; i < r; i++) {
                double g = mrt_load_f64(grid->dtype, grid->data, (b * out_sp + o) * r + (r - 1 - i));
                double v = mrt_grid_coord(g, x->shape[2 + i], align, kind, pad);
                first[i] = mrt_f64_to_i64_sat(mrt_grid_weights(v, kind, w[i])) - (kind == 4 ? 1 : 0);
            }
            for (int64_t ch = 0; ch < c; ch++) {
                const int64_t plane = (b * c + ch) * in_sp;
                double acc = 0;
                for (int tap = 0; tap < n_taps; tap++) {
                    double wt;
                    int64_t off;
                    if (!mrt_grid_tap(tap, r, kind, pad, align, x->shape + 2, first, w, &off, &wt))
                        acc += wt * mrt_load_f64(x->dtype, x->data, plane + off);
                }
                mrt_store_f64(y->dtype, y->data, (b * c + ch) * out_sp + o, acc);
            }
        }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ NonMaxSuppression */

typedef struct nms_box {
    double score;
    int64_t index;
} nms_box;

/* score descending (NaN last), then index ascending: the order boxes are considered in */
static int cmp_nms(const void *pa, const void *pb)
{
    const nms_box *a = pa, *b = pb;
    double sa = a->score != a->score ? -INFINITY : a->score, sb = b->score != b->score ? -INFINITY : b->score;
    if (sa != sb) return sa > sb ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Corners (x_min, y_min, x_max, y_max) of a box in either layout. */
static void corners(const mrt_tensor *boxes, int64_t at, bool center, double *c)
{
    double v[4];
    for (int i = 0; i < 4; i++) v[i] = mrt_load_f64(boxes->dtype, boxes->data, at + i);
    mrt_nms_corners(v, center, c);
}

/* The boxes kept so far in one class, as columns: corners and areas */
typedef struct kept_boxes {
    double *x0, *y0, *x1, *y1, *area;
    int64_t n;
} kept_boxes;

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* mrt_nms_max / mrt_nms_min on 8 lanes: maxpd/minpd keep the second operand unless the first compares greater (less), so a
   NaN in b still needs a's value put back */
__attribute__((target("avx512f"))) static inline __m512d max_num8(__m512d a, __m512d b)
{
    return _mm512_mask_mov_pd(_mm512_max_pd(a, b), _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q), a);
}
__attribute__((target("avx512f"))) static inline __m512d min_num8(__m512d a, __m512d b)
{
    return _mm512_mask_mov_pd(_mm512_min_pd(a, b), _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q), a);
}

/* mrt_nms_suppresses(c, area_c, kept box j, ...) for 8 kept boxes at a time: the same IEEE operations per lane, each
   `return false` of the scalar test a lane of the mask dropped (NLE_UQ: "not <=", true for NaN, as !(x <= y)) */
__attribute__((target("avx512f"))) static bool any_suppresses_avx512(const double *c, double area_c, const kept_boxes *k,
                                                                    double t)
{
    __m512d cx0 = _mm512_set1_pd(c[0]), cy0 = _mm512_set1_pd(c[1]), cx1 = _mm512_set1_pd(c[2]),
            cy1 = _mm512_set1_pd(c[3]), ca = _mm512_set1_pd(area_c), zero = _mm512_setzero_pd(), th = _mm512_set1_pd(t);
    for (int64_t j = 0; j < k->n; j += 8) {
        __mmask8 in = k->n - j >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (k->n - j)) - 1u);
        __m512d bx0 = _mm512_maskz_loadu_pd(in, k->x0 + j), by0 = _mm512_maskz_loadu_pd(in, k->y0 + j);
        __m512d bx1 = _mm512_maskz_loadu_pd(in, k->x1 + j), by1 = _mm512_maskz_loadu_pd(in, k->y1 + j);
        __m512d ba = _mm512_maskz_loadu_pd(in, k->area + j);
        __m512d ix0 = max_num8(cx0, bx0), ix1 = min_num8(cx1, bx1), iy0 = max_num8(cy0, by0), iy1 = min_num8(cy1, by1);
        __mmask8 m = _mm512_mask_cmp_pd_mask(in, ix1, ix0, _CMP_NLE_UQ);
        m = _mm512_mask_cmp_pd_mask(m, iy1, iy0, _CMP_NLE_UQ);
        if (!m) continue;
        __m512d inter = _mm512_mul_pd(_mm512_sub_pd(ix1, ix0), _mm512_sub_pd(iy1, iy0));
        __m512d uni = _mm512_sub_pd(_mm512_add_pd(ca, ba), inter);
        m = _mm512_mask_cmp_pd_mask(m, inter, zero, _CMP_NLE_UQ);
        m = _mm512_mask_cmp_pd_mask(m, ca, zero, _CMP_NLE_UQ);
        m = _mm512_mask_cmp_pd_mask(m, ba, zero, _CMP_NLE_UQ);
        m = _mm512_mask_cmp_pd_mask(m, uni, zero, _CMP_NLE_UQ);
        m = _mm512_mask_cmp_pd_mask(m, _mm512_div_pd(inter, uni), th, _CMP_GT_OQ);
        if (m) return true;
    }
    return false;
}
#endif

/* Whether a kept box suppresses candidate c: every pair tested, so the order does not matter */
static bool any_suppresses(const double *c, double area_c, const kept_boxes *k, double t)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (mrt_cpu_has_avx512f()) return any_suppresses_avx512(c, area_c, k, t);
#endif
    for (int64_t j = 0; j < k->n; j++) {
        double b[4] = {k->x0[j], k->y0[j], k->x1[j], k->y1[j]};
        if (mrt_nms_suppresses(c, area_c, b, k->area[j], t)) return true;
    }
    return false;
}

/* Greedy selection over every (batch, class). Each candidate is compared with the boxes kept so far, so a class
   with n candidates costs up to n * kept IoU tests: the corners and areas are worked out once per batch (SSDlite's
   one-class batched NMS over ~6000 boxes took 1.85 s when each test decoded both boxes again, against ONNX
   Runtime's 0.16 s for the whole model), and the kept boxes are columns that AVX-512 tests 8 at a time (27000
   candidates, 11089 kept: 470 ms as scalar tests). */
static mrt_status mrt_cpu_nms(mrt_op_ctx *ctx)
{
    const mrt_tensor *boxes = mrt_input(ctx, 0), *scores = mrt_input(ctx, 1), *mo = mrt_input(ctx, 2);
    const mrt_tensor *iou = mrt_input(ctx, 3), *st_in = mrt_input(ctx, 4);
    bool center = mrt_attr_int(ctx, "center_point_box", 0) == 1;
    int64_t max_out = mo && mrt_tensor_numel(mo) ? mrt_load_i64(mo->dtype, mo->data, 0) : 0;
    double iou_t = iou && mrt_tensor_numel(iou) ? mrt_load_f64(iou->dtype, iou->data, 0) : 0;
    bool has_score_t = st_in && mrt_tensor_numel(st_in);
    double score_t = has_score_t ? mrt_load_f64(st_in->dtype, st_in->data, 0) : 0;
    int64_t nb = boxes->shape[0], nbox = boxes->shape[1], ncls = scores->shape[1];
    if (max_out < 0) max_out = 0;
    if (max_out > nbox) max_out = nbox;
    size_t nalloc = (size_t)(nbox ? nbox : 1);
    nms_box *cand = malloc(nalloc * sizeof *cand);
    double *cor = malloc(nalloc * 4 * sizeof *cor), *area = malloc(nalloc * sizeof *area);
    double *kcols = malloc(nalloc * 5 * sizeof *kcols);
    kept_boxes kept = {kcols, kcols + nalloc, kcols + 2 * nalloc, kcols + 3 * nalloc, kcols + 4 * nalloc, 0};
    /* at most max_out per (batch, class): the result fits in nb * ncls * max_out triples */
    int64_t cap = nb * ncls * max_out, n_sel = 0;
    int64_t *sel = malloc((size_t)(cap ? cap : 1) * 3 * sizeof *sel);
    mrt_status st =
        cand && kcols && cor && area && sel ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t b = 0; !st && b < nb; b++) {
        for (int64_t i = 0; i < nbox && max_out > 0; i++) {
            double *c = cor + i * 4;
            corners(boxes, (b * nbox + i) * 4, center, c);
            area[i] = (c[2] - c[0]) * (c[3] - c[1]);
        }
        for (int64_t c = 0; c < ncls && max_out > 0; c++) {
            int64_t n = 0;
            kept.n = 0;
            for (int64_t i = 0; i < nbox; i++) {
                double s = mrt_load_f64(scores->dtype, scores->data, (b * ncls + c) * nbox + i);
                if (!has_score_t || s > score_t) cand[n++] = (nms_box){s, i};
            }
            qsort(cand, (size_t)n, sizeof *cand, cmp_nms);
            for (int64_t k = 0; k < n && kept.n < max_out; k++) {
                int64_t ik = cand[k].index;
                const double *ck = cor + ik * 4;
                if (any_suppresses(ck, area[ik], &kept, iou_t)) continue;
                kept.x0[kept.n] = ck[0], kept.y0[kept.n] = ck[1], kept.x1[kept.n] = ck[2], kept.y1[kept.n] = ck[3];
                kept.area[kept.n++] = area[ik];
                sel[n_sel * 3] = b, sel[n_sel * 3 + 1] = c, sel[n_sel * 3 + 2] = ik;
                n_sel++;
            }
        }
    }
    mrt_tensor *y = NULL;
    if (!st) st = mrt_output_alloc(ctx, 0, MRT_DTYPE_INT64, 2, (int64_t[]){n_sel, 3}, &y);
    if (!st && y && n_sel) memcpy(y->data, sel, (size_t)n_sel * 3 * sizeof *sel);
    free(cand);
    free(kcols);
    free(cor);
    free(area);
    free(sel);
    return st;
}

/* ------------------------------------------------------------------ RoiAlign */

/* One bilinear sample at (y, x) of an h x w plane: four positions and weights (all 0 outside [-1, size]). */
typedef struct roi_tap {
    int64_t pos[4];
    double wt[4];
} roi_tap;

typedef struct roi_job {
    const mrt_tensor *x;
    mrt_tensor *y;
    const mrt_roi_geom *geo;
    int64_t c, h, w, ph_n, pw_n, c_chunk, n_chunks;
    bool max_mode;
    roi_tap *taps; /* per thread: room for the largest grid */
    int64_t taps_per_thread;
    int threads;
    bool vector;      /* float32 averages, 8 channels at a time (AVX-512) */
    const float *hwc; /* with vector: a channels-last copy of the image, or NULL (gathers) */
} roi_job;

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* One bin's averages for channels [0, n8) of a float32 image, 8 at a time (n8 a multiple of 8), into y at
   y_at + ch y_step: the scalar loop's double sums lane by lane (each tap's weight times the value, the four added in
   order, then added to the sum; the sum divided by the count). Channel ch's value at position pos is at
   hwc[pos c + ch] (a channels-last copy) when hwc is given, else gathered from x[ch plane + pos]. */
__attribute__((target("avx512f"))) static void roi_avg_avx512(const float *hwc, int64_t c, const float *x, int64_t plane,
                                                             int64_t n8, const roi_tap *taps, int64_t nt, double count,
                                                             float *y, int64_t y_step)
{
    const __m512d div = _mm512_set1_pd(count);
    for (int64_t ch = 0; ch < n8; ch += 8) {
        int64_t b[8], a[8]; /* lane i: channel ch + i's plane and output */
        for (int i = 0; i < 8; i++) b[i] = (ch + i) * plane, a[i] = (ch + i) * y_step;
        __m512i base = _mm512_loadu_si512(b), at = _mm512_loadu_si512(a);
        __m512d out = _mm512_setzero_pd();
        for (int64_t k = 0; k < nt; k++) {
            __m512d v[4];
            for (int q = 0; q < 4; q++) {
                __m256 xv = hwc ? _mm256_loadu_ps(hwc + taps[k].pos[q] * c + ch)
                                : _mm512_i64gather_ps(_mm512_add_epi64(base, _mm512_set1_epi64(taps[k].pos[q])), x, 4);
                v[q] = _mm512_mul_pd(_mm512_set1_pd(taps[k].wt[q]), _mm512_cvtps_pd(xv));
            }
            out = _mm512_add_pd(out, _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(v[0], v[1]), v[2]), v[3]));
        }
        _mm512_i64scatter_ps(y, at, _mm512_cvtpd_ps(_mm512_div_pd(out, div)), 4);
    }
}
#endif

/* Task t: roi t / n_chunks, channels [c_chunk (t % n_chunks), +c_chunk). A bin's taps are worked out once and used
   for every channel of the chunk (Mask R-CNN's 987 rois x 256 channels took 1.3 s with the taps recomputed per
   channel and each value loaded through the generic converter). */
static void roi_range(void *arg, int64_t t0, int64_t t1)
{
    const roi_job *j = arg;
    const mrt_tensor *x = j->x;
    /* a serial call (one thread) may run on a pool worker, inside another kernel's task: slot 0 then */
    roi_tap *taps = j->taps + (j->threads > 1 ? (int64_t)mrt_thread_index() : 0) * j->taps_per_thread;
    const float *xf = x->dtype == MRT_DTYPE_FLOAT ? x->data : NULL;
    for (int64_t t = t0; t < t1; t++) {
        int64_t r = t / j->n_chunks, ch0 = t % j->n_chunks * j->c_chunk;
        int64_t ch1 = ch0 + j->c_chunk < j->c ? ch0 + j->c_chunk : j->c;
        const mrt_roi_geom *g = &j->geo[r];
        int64_t nt = g->gh * g->gw;
        double count = nt > 1 ? (double)nt : 1.0;
        for (int64_t ph = 0; ph < j->ph_n; ph++)
            for (int64_t pw = 0; pw < j->pw_n; pw++) {
                for (int64_t iy = 0; iy < g->gh; iy++)
                    for (int64_t ix = 0; ix < g->gw; ix++) {
                        double sy = mrt_roi_sample_pos(g->y0, ph, g->bh, iy, g->gh);
                        double sx = mrt_roi_sample_pos(g->x0, pw, g->bw, ix, g->gw);
                        roi_tap *tp = &taps[iy * g->gw + ix];
                        mrt_roi_sample(sy, sx, j->h, j->w, tp->pos, tp->wt);
                    }
                int64_t ch = ch0;
#ifdef MRT_HAVE_AVX512_INTRINSICS
                if (j->vector) {
                    int64_t n8 = (ch1 - ch0) / 8 * 8;
                    roi_avg_avx512(j->hwc ? j->hwc + g->batch * j->h * j->w * j->c + ch0 : NULL, j->c,
                                   xf + (g->batch * j->c + ch0) * j->h * j->w, j->h * j->w, n8, taps, nt, count,
                                   (float *)j->y->data + ((r * j->c + ch0) * j->ph_n + ph) * j->pw_n + pw,
                                   j->ph_n * j->pw_n);
                    ch += n8;
                }
#endif
                for (; ch < ch1; ch++) {
                    int64_t plane = (g->batch * j->c + ch) * j->h * j->w;
                    double out = 0;
                    for (int64_t k = 0; k < nt; k++) {
                        const roi_tap *tp = &taps[k];
                        double v[4];
                        for (int q = 0; q < 4; q++)
                            v[q] = tp->wt[q] * (xf ? (double)xf[plane + tp->pos[q]] : mrt_load_f64(x->dtype, x->data, plane + tp->pos[q]));
                        if (!j->max_mode) {
                            out += v[0] + v[1] + v[2] + v[3];
                        } else {
                            double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                            out = k == 0 ? m : fmax(out, m);
                        }
                    }
                    if (!j->max_mode) out /= count;
                    mrt_store_f64(j->y->dtype, j->y->data, ((r * j->c + ch) * j->ph_n + ph) * j->pw_n + pw, out);
                }
            }
    }
}

static mrt_status mrt_cpu_roi_align(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *rois = mrt_input(ctx, 1), *bi = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], R = rois->shape[0];
    bool max_mode = strcmp(mrt_attr_string(ctx, "mode", "avg"), "max") == 0;
    /* opset 10 had no attribute: its behaviour is output_half_pixel */
    bool half = ctx->opset >= 16 && strcmp(mrt_attr_string(ctx, "coordinate_transformation_mode", "half_pixel"), "half_pixel") == 0;
    double scale = mrt_attr_float(ctx, "spatial_scale", 1.0f);
    int64_t ratio = mrt_attr_int(ctx, "sampling_ratio", 0);
    if (h == 0 || w == 0 || R == 0 || c == 0) return MRT_STATUS_OK; /* nothing to sample: the (zeroed) output stands */
    mrt_roi_geom *geo = malloc((size_t)R * sizeof *geo);
    if (!geo) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (%lld rois)", (long long)R);
    mrt_status st = mrt_roi_geoms_get(ctx, rois, bi, n, y->shape[2], y->shape[3], half, scale, ratio, geo);
    if (st) {
        free(geo);
        return st;
    }
    int64_t max_taps = 1;
    for (int64_t r = 0; r < R; r++)
        if (geo[r].gh * geo[r].gw > max_taps) max_taps = geo[r].gh * geo[r].gw;
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    roi_job j = {.x = x, .y = y, .geo = geo, .c = c, .h = h, .w = w, .ph_n = y->shape[2], .pw_n = y->shape[3],
                 .max_mode = max_mode, .taps_per_thread = max_taps, .threads = threads};
    /* chunks of channels: a bin's taps serve 16 of them, and one roi still makes several tasks */
    j.c_chunk = c < 16 ? c : 16;
#ifdef MRT_HAVE_AVX512_INTRINSICS
    j.vector = x->dtype == MRT_DTYPE_FLOAT && y->dtype == MRT_DTYPE_FLOAT && !max_mode && c >= 8 && mrt_cpu_has_avx512f();
    if (j.vector && c >= 64 && R >= 4 * threads) j.c_chunk = 64; /* the taps, worked out per chunk, then cost less */
#endif
    j.n_chunks = (c + j.c_chunk - 1) / j.c_chunk;
    j.taps = malloc((size_t)threads * (size_t)max_taps * sizeof *j.taps);
    if (!j.taps) {
        free(geo);
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (RoiAlign taps)");
    }
#ifdef MRT_HAVE_AVX512_INTRINSICS
    /* Gathering 8 channels' values (planes apart) was the cost (Faster R-CNN's 150 rois x 256 channels of a 10x10
       map: 16.7 ms on 2 threads); a channels-last copy makes them one load. Made when the samples outnumber the
       image's values (not for a few rois on a large map). */
    double samples = 0;
    for (int64_t r = 0; r < R; r++) samples += (double)(geo[r].gh * geo[r].gw) * (double)(j.ph_n * j.pw_n) * (double)c;
    float *hwc = NULL;
    if (j.vector && samples >= 2.0 * (double)mrt_tensor_numel(x) && (hwc = malloc((size_t)mrt_tensor_numel(x) * sizeof(float)))) {
        const float *xf = x->data;
        for (int64_t b = 0; b < n; b++)
            for (int64_t ch = 0; ch < c; ch++)
                for (int64_t p = 0; p < h * w; p++) hwc[(b * h * w + p) * c + ch] = xf[(b * c + ch) * h * w + p];
        j.hwc = hwc;
    }
#endif
    mrt_parallel_for(ctx, R * j.n_chunks, 1, roi_range, &j);
#ifdef MRT_HAVE_AVX512_INTRINSICS
    free(hwc);
#endif
    free(j.taps);
    free(geo);
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ AffineGrid, Col2Im */

static mrt_status mrt_cpu_affine_grid(mrt_op_ctx *ctx)
{
    const mrt_tensor *theta = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool align = mrt_attr_int(ctx, "align_corners", 0) != 0;
    int r = y->rank - 2;
    int64_t n = y->shape[0], pts = 1;
    for (int i = 0; i < r; i++) pts *= y->shape[1 + i];
    for (int64_t b = 0; b < n; b++)
        for (int64_t p = 0; p < pts; p++) {
            /* homogeneous point (x, y[, z], 1): x runs along the last spatial dim */
            double hp[4];
            for (int64_t rem = p, i = r - 1; i >= 0; i--) {
                int64_t len = y->shape[1 + i];
                hp[r - 1 - i] = mrt_affine_grid_coord(rem % len, len, align);
                rem /= len;
            }
            hp[r] = 1;
            for (int k = 0; k < r; k++) {
                double acc = 0;
                for (int j = 0; j <= r; j++) acc += mrt_load_f64(theta->dtype, theta->data, (b * r + k) * (r + 1) + j) * hp[j];
                mrt_store_f64(y->dtype, y->data, (b * pts + p) * r + k, acc);
            }
        }
    return MRT_STATUS_OK;
}

/* Sum every column entry into the image position it came from (the inverse of im2col). */
static mrt_status mrt_cpu_col2im(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *blk = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int n = y->rank - 2;
    const int64_t *bl = blk->data, *dil, *pads, *str;
    int64_t nd, np, ns;
    mrt_attr_ints(ctx, "dilations", &dil, &nd);
    mrt_attr_ints(ctx, "pads", &pads, &np);
    mrt_attr_ints(ctx, "strides", &str, &ns);
    int64_t cnt[MRT_MAX_RANK], prod_b = 1, img = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = nd ? dil[i] : 1, s = ns ? str[i] : 1, pb = np ? pads[i] : 0, pe = np ? pads[n + i] : 0;
        cnt[i] = (y->shape[2 + i] + pb + pe - (d * (bl[i] - 1) + 1)) / s + 1;
        prod_b *= bl[i];
        img *= y->shape[2 + i];
    }
    int64_t batch = y->shape[0], ch = y->shape[1], L = x->shape[2];
    for (int64_t b = 0; b < batch; b++)
        for (int64_t c = 0; c < ch; c++)
            for (int64_t k = 0; k < prod_b; k++)
                for (int64_t l = 0; l < L; l++) {
                    int64_t off = 0, krem = k, lrem = l, kk[MRT_MAX_RANK], ll[MRT_MAX_RANK];
                    bool inside = true;
                    for (int i = n - 1; i >= 0; i--) {
                        kk[i] = krem % bl[i], krem /= bl[i];
                        ll[i] = lrem % cnt[i], lrem /= cnt[i];
                    }
                    for (int i = 0; i < n && inside; i++) {
                        int64_t d = nd ? dil[i] : 1, s = ns ? str[i] : 1, pb = np ? pads[i] : 0;
                        int64_t pos = ll[i] * s - pb + kk[i] * d;
                        inside = pos >= 0 && pos < y->shape[2 + i];
                        off = off * y->shape[2 + i] + pos;
                    }
                    if (!inside) continue;
                    int64_t src = ((b * ch + c) * prod_b + k) * L + l, dst = (b * ch + c) * img + off;
                    mrt_store_f64(y->dtype, y->data, dst,
                                  mrt_load_f64(y->dtype, y->data, dst) + mrt_load_f64(x->dtype, x->data, src));
                }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_vision[] = {
    {"", "AffineGrid", 20, mrt_cpu_affine_grid, NULL},
    {"", "Col2Im", 18, mrt_cpu_col2im, NULL},
    {"", "RoiAlign", 10, mrt_cpu_roi_align, NULL},
    {"", "RoiAlign", 16, mrt_cpu_roi_align, NULL},
    {"", "RoiAlign", 22, mrt_cpu_roi_align, NULL},
    {"", "NonMaxSuppression", 10, mrt_cpu_nms, NULL},
    {"", "NonMaxSuppression", 11, mrt_cpu_nms, NULL},
    {"", "GridSample", 16, mrt_cpu_grid_sample, NULL},
    {"", "GridSample", 20, mrt_cpu_grid_sample, NULL},
    {"", "GridSample", 22, mrt_cpu_grid_sample, NULL},
    {0},
};
