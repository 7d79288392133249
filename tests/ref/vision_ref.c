/* Naive float64 references for GridSample, AffineGrid, RoiAlign, NonMaxSuppression and Col2Im (see vision_ref.h).
 * GridSample interpolates one spatial dim at a time (recursively), as the spec describes it; Col2Im gathers, for
 * each image pixel, the column entries that land on it. */
#include "ref/vision_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ GridSample */

typedef struct gs_ctx {
    int r, mode, pad;
    bool align;
    const int64_t *in;
    const double *plane; /* one [in...] plane */
    double pos[16];      /* unnormalized position per spatial dim (dim order of x) */
} gs_ctx;

static double gs_lo(const gs_ctx *g, int d)
{
    (void)d;
    return g->align ? 0.0 : -0.5;
}
static double gs_hi(const gs_ctx *g, int d)
{
    return g->align ? (double)g->in[d] - 1.0 : (double)g->in[d] - 0.5;
}

/* Mirror v into [lo, hi]: the pattern repeats every 2 * (hi - lo). */
static double mirror(double v, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0) return lo;
    double t = fmod(v - lo, 2 * range);
    if (t < 0) t += 2 * range;
    return t <= range ? lo + t : lo + 2 * range - t;
}

/* The pixel at integer index idx[], read with the padding rule. */
static double gs_pixel(const gs_ctx *g, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < g->r; d++) {
        int64_t i = idx[d], len = g->in[d];
        if (i < 0 || i >= len) {
            if (g->pad == VREF_ZEROS) return 0;
            if (g->pad == VREF_BORDER) i = i < 0 ? 0 : len - 1;
            else i = (int64_t)mirror((double)i, gs_lo(g, d), gs_hi(g, d)); /* truncation toward zero */
            if (i < 0) i = 0;
            if (i >= len) i = len - 1;
        }
        off = off * len + i;
    }
    return g->plane[off];
}

static double keys_weight(double dist)
{
    const double a = -0.75;
    double s = fabs(dist);
    if (s <= 1) return (a + 2) * s * s * s - (a + 3) * s * s + 1;
    if (s < 2) return a * s * s * s - 5 * a * s * s + 8 * a * s - 4 * a;
    return 0;
}

/* Interpolate along dims d.. with dims before d fixed at idx[0..d). */
static double gs_interp(const gs_ctx *g, int d, int64_t *idx)
{
    if (d == g->r) return gs_pixel(g, idx);
    double v = g->pos[d], f = floor(v), acc = 0;
    int64_t base = (int64_t)f;
    if (g->mode == VREF_LINEAR) {
        for (int k = 0; k < 2; k++) {
            idx[d] = base + k;
            acc += (1 - fabs(v - (f + k))) * gs_interp(g, d + 1, idx);
        }
    } else {
        for (int k = -1; k <= 2; k++) {
            idx[d] = base + k;
            acc += keys_weight(v - (f + k)) * gs_interp(g, d + 1, idx);
        }
    }
    return acc;
}

void vision_ref_grid_sample(int r, int64_t n, int64_t c, const int64_t *in, const double *x, const int64_t *out,
                            const double *grid, int mode, int pad, bool align, double *y)
{
    int64_t in_size = 1, out_size = 1;
    for (int d = 0; d < r; d++) in_size *= in[d], out_size *= out[d];
    gs_ctx g = {.r = r, .mode = mode, .pad = pad, .align = align, .in = in};
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < out_size; o++) {
            const double *gp = grid + (b * out_size + o) * r;
            for (int d = 0; d < r; d++) {
                double gn = gp[r - 1 - d], len = (double)in[d]; /* the grid lists the last dim first */
                double v = align ? (gn + 1) / 2 * (len - 1) : ((gn + 1) * len - 1) / 2;
                if (mode == VREF_NEAREST) v = rint(v);
                if (v < gs_lo(&g, d) || v > gs_hi(&g, d)) {
                    if (pad == VREF_BORDER) v = fmin(fmax(v, 0), len - 1);
                    else if (pad == VREF_REFLECTION) v = mirror(v, gs_lo(&g, d), gs_hi(&g, d));
                }
                g.pos[d] = v;
            }
            for (int64_t ch = 0; ch < c; ch++) {
                g.plane = x + (b * c + ch) * in_size;
                int64_t idx[16];
                double v;
                if (mode == VREF_NEAREST) {
                    for (int d = 0; d < r; d++) idx[d] = (int64_t)g.pos[d];
                    v = gs_pixel(&g, idx);
                } else {
                    v = gs_interp(&g, 0, idx);
                }
                y[(b * c + ch) * out_size + o] = v;
            }
        }
}

/* ------------------------------------------------------------------ AffineGrid */

void vision_ref_affine_grid(int r, int64_t n, const int64_t *sp, const double *theta, bool align, double *grid)
{
    int64_t pts = 1;
    for (int d = 0; d < r; d++) pts *= sp[d];
    for (int64_t b = 0; b < n; b++) {
        const double *t = theta + b * r * (r + 1);
        for (int64_t p = 0; p < pts; p++) {
            /* index per dim, then the base point in (x, y[, z]) order: x is the last spatial dim */
            int64_t idx[3];
            for (int64_t rem = p, d = r - 1; d >= 0; d--) idx[d] = rem % sp[d], rem /= sp[d];
            double base[4];
            for (int k = 0; k < r; k++) {
                int d = r - 1 - k;
                double len = (double)sp[d], i = (double)idx[d];
                if (align) base[k] = len > 1 ? -1 + 2 * i / (len - 1) : -1;
                else base[k] = (2 * i + 1) / len - 1;
            }
            base[r] = 1;
            for (int k = 0; k < r; k++) {
                double s = 0;
                for (int j = 0; j <= r; j++) s += t[k * (r + 1) + j] * base[j];
                grid[(b * pts + p) * r + k] = s;
            }
        }
    }
}

/* ------------------------------------------------------------------ RoiAlign */

/* The four weighted taps of a bilinear sample at (sy, sx); all zero past [-1, size]; positions below 0 read
   as 0, at or past size - 1 read the last row/column. */
static void roi_taps(const double *plane, int64_t h, int64_t w, double sy, double sx, double *t)
{
    t[0] = t[1] = t[2] = t[3] = 0;
    if (sy < -1 || sy > (double)h || sx < -1 || sx > (double)w) return;
    if (sy < 0) sy = 0;
    if (sx < 0) sx = 0;
    int64_t y0 = (int64_t)sy, x0 = (int64_t)sx, y1, x1;
    if (y0 >= h - 1) {
        y0 = y1 = h - 1;
        sy = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= w - 1) {
        x0 = x1 = w - 1;
        sx = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double fy = sy - (double)y0, fx = sx - (double)x0;
    t[0] = (1 - fy) * (1 - fx) * plane[y0 * w + x0];
    t[1] = (1 - fy) * fx * plane[y0 * w + x1];
    t[2] = fy * (1 - fx) * plane[y1 * w + x0];
    t[3] = fy * fx * plane[y1 * w + x1];
}

void vision_ref_roi_align(const vision_ref_roi_args *a, double *y)
{
    double shift = a->half_pixel ? 0.5 : 0;
    for (int64_t k = 0; k < a->n_rois; k++) {
        const double *rv = a->rois + k * 4;
        double x1 = rv[0] * a->spatial_scale - shift, y1 = rv[1] * a->spatial_scale - shift;
        double x2 = rv[2] * a->spatial_scale - shift, y2 = rv[3] * a->spatial_scale - shift;
        double rw = x2 - x1, rh = y2 - y1;
        if (!a->half_pixel) {
            if (rw < 1) rw = 1;
            if (rh < 1) rh = 1;
        }
        double bin_h = rh / (double)a->oh, bin_w = rw / (double)a->ow;
        int64_t sh = a->sampling_ratio > 0 ? a->sampling_ratio : (int64_t)ceil(bin_h);
        int64_t sw = a->sampling_ratio > 0 ? a->sampling_ratio : (int64_t)ceil(bin_w);
        double count = sh * sw > 1 ? (double)(sh * sw) : 1;
        for (int64_t ch = 0; ch < a->c; ch++) {
            const double *plane = a->x + (a->batch[k] * a->c + ch) * a->h * a->w;
            for (int64_t i = 0; i < a->oh; i++)
                for (int64_t j = 0; j < a->ow; j++) {
                    double sum = 0, best = 0;
                    bool any = false;
                    for (int64_t u = 0; u < sh; u++)
                        for (int64_t v = 0; v < sw; v++) {
                            double sy = y1 + (double)i * bin_h + ((double)u + 0.5) * bin_h / (double)sh;
                            double sx = x1 + (double)j * bin_w + ((double)v + 0.5) * bin_w / (double)sw;
                            double t[4];
                            roi_taps(plane, a->h, a->w, sy, sx, t);
                            sum += t[0] + t[1] + t[2] + t[3];
                            for (int q = 0; q < 4; q++) { /* "max": the largest weighted tap of any sample */
                                if (!any || t[q] > best) best = t[q];
                                any = true;
                            }
                        }
                    y[((k * a->c + ch) * a->oh + i) * a->ow + j] = a->max_mode ? best : sum / count;
                }
        }
    }
}

/* ------------------------------------------------------------------ NonMaxSuppression */

/* (x_min, y_min, x_max, y_max) of box i */
static void nms_box(const double *b, bool center, double *o)
{
    if (center) {
        o[0] = b[0] - b[2] / 2, o[2] = b[0] + b[2] / 2;
        o[1] = b[1] - b[3] / 2, o[3] = b[1] + b[3] / 2;
    } else {
        o[0] = fmin(b[1], b[3]), o[2] = fmax(b[1], b[3]);
        o[1] = fmin(b[0], b[2]), o[3] = fmax(b[0], b[2]);
    }
}

static double nms_iou(const double *p, const double *q)
{
    double w = fmin(p[2], q[2]) - fmax(p[0], q[0]), h = fmin(p[3], q[3]) - fmax(p[1], q[1]);
    if (w <= 0 || h <= 0) return 0;
    double inter = w * h, ap = (p[2] - p[0]) * (p[3] - p[1]), aq = (q[2] - q[0]) * (q[3] - q[1]);
    if (ap <= 0 || aq <= 0 || ap + aq - inter <= 0) return 0;
    return inter / (ap + aq - inter);
}

int64_t vision_ref_nms(int64_t nb, int64_t ncls, int64_t nbox, const double *boxes, const double *scores, bool center,
                       int64_t max_out, double iou_threshold, bool has_score_threshold, double score_threshold,
                       int64_t *sel, int64_t cap)
{
    bool *taken = calloc((size_t)(nbox ? nbox : 1), 1);
    int64_t *kept = malloc((size_t)(nbox ? nbox : 1) * sizeof *kept), n_sel = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < ncls; c++) {
            const double *s = scores + (b * ncls + c) * nbox;
            memset(taken, 0, (size_t)(nbox ? nbox : 1));
            int64_t n_kept = 0;
            while (n_kept < max_out) {
                /* the highest remaining score (the first index among equals) */
                int64_t best = -1;
                for (int64_t i = 0; i < nbox; i++) {
                    if (taken[i] || (has_score_threshold && !(s[i] > score_threshold))) continue;
                    if (best < 0 || s[i] > s[best]) best = i;
                }
                if (best < 0) break;
                taken[best] = true;
                double bb[4];
                nms_box(boxes + (b * nbox + best) * 4, center, bb);
                bool keep = true;
                for (int64_t j = 0; j < n_kept && keep; j++) {
                    double kb[4];
                    nms_box(boxes + (b * nbox + kept[j]) * 4, center, kb);
                    if (nms_iou(bb, kb) > iou_threshold) keep = false;
                }
                if (!keep) continue;
                kept[n_kept++] = best;
                if (n_sel < cap) sel[n_sel * 3] = b, sel[n_sel * 3 + 1] = c, sel[n_sel * 3 + 2] = best;
                n_sel++;
            }
        }
    free(taken);
    free(kept);
    return n_sel;
}

/* ------------------------------------------------------------------ Col2Im */

void vision_ref_col2im(int r, int64_t n, int64_t c, const int64_t *image, const int64_t *block, const int64_t *strides,
                       const int64_t *dilations, const int64_t *pads, const double *x, double *y)
{
    int64_t nblk[16], kprod = 1, L = 1, img = 1;
    for (int d = 0; d < r; d++) {
        nblk[d] = (image[d] + pads[d] + pads[r + d] - dilations[d] * (block[d] - 1) - 1) / strides[d] + 1;
        kprod *= block[d];
        L *= nblk[d];
        img *= image[d];
    }
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < img; p++) {
                int64_t pix[16];
                for (int64_t rem = p, d = r - 1; d >= 0; d--) pix[d] = rem % image[d], rem /= image[d];
                double sum = 0;
                for (int64_t k = 0; k < kprod; k++) {
                    int64_t kk[16];
                    for (int64_t rem = k, d = r - 1; d >= 0; d--) kk[d] = rem % block[d], rem /= block[d];
                    /* the block whose offset kk lands on pix, if any */
                    int64_t l = 0;
                    bool hit = true;
                    for (int d = 0; d < r && hit; d++) {
                        int64_t q = pix[d] + pads[d] - kk[d] * dilations[d];
                        hit = q >= 0 && q % strides[d] == 0 && q / strides[d] < nblk[d];
                        l = l * nblk[d] + (hit ? q / strides[d] : 0);
                    }
                    if (hit) sum += x[((b * c + ch) * kprod + k) * L + l];
                }
                y[(b * c + ch) * img + p] = sum;
            }
}
