/* GridSample's, NonMaxSuppression's, RoiAlign's and AffineGrid's arithmetic, one definition for the CPU kernels
 * (ops_cpu/vision.c) and the CUDA ones (ops_cuda/vision.cu): see engine/host_device.h. */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/host_device.h"
#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GridSample */

enum { MRT_GRID_PAD_ZEROS, MRT_GRID_PAD_BORDER, MRT_GRID_PAD_REFLECT };

/* Fold x into [lo, hi] by reflecting at the nearer border, as often as needed. */
static inline MRT_HD double mrt_grid_reflect(double x, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
        double dx = lo - x, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* Keys' cubic kernel (a = -0.75) at the four taps around fraction t. */
static inline MRT_HD void mrt_grid_cubic_coeffs(double t, double *c)
{
    const double a = -0.75;
    double x = fabs(t);
    c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

/* The input index a tap at integer position i reads, or -1 for a zero (padding "zeros" outside). */
static inline MRT_HD int64_t mrt_grid_tap_index(int64_t i, int64_t len, int pad, double lo, double hi)
{
    if (i >= 0 && i < len) return i;
    if (pad == MRT_GRID_PAD_ZEROS) return -1;
    if (pad == MRT_GRID_PAD_BORDER) return i < 0 ? 0 : len - 1;
    int64_t j = (int64_t)mrt_grid_reflect((double)i, lo, hi); /* truncation, as the reference's int() */
    return j < 0 ? 0 : j >= len ? len - 1 : j;
}

/* The sampling position along a spatial dim of length len for grid value g (kind: 1 nearest, 2 linear, 4 cubic):
   unnormalised, rounded (nearest), clamped or reflected by the padding mode, and bounded. */
static inline MRT_HD double mrt_grid_coord(double g, int64_t len, bool align, int kind, int pad)
{
    double v = align ? (g + 1) / 2 * (double)(len - 1) : ((g + 1) * (double)len - 1) / 2;
    double lo = align ? 0 : -0.5, hi = align ? (double)(len - 1) : (double)len - 0.5;
    if (kind == 1) v = nearbyint(v);
    if (v < lo || v > hi) {
        if (pad == MRT_GRID_PAD_BORDER) v = v < 0 ? 0 : v > (double)(len - 1) ? (double)(len - 1) : v;
        else if (pad == MRT_GRID_PAD_REFLECT) v = mrt_grid_reflect(v, lo, hi);
    }
    if (v != v) v = 0; /* a NaN coordinate: read position 0 rather than an undefined index */
    /* only zeros padding leaves v outside the input; past a few pixels every tap reads 0 anyway, so bound it to keep
       the integer tap positions far from overflow */
    if (v < -8) v = -8;
    if (v > (double)len + 8) v = (double)len + 8;
    return v;
}

/* The kind's tap weights at position v into w; returns where the taps start, as a double for the caller's saturating
   conversion, before cubic's one-tap shift (the first tap is that minus (kind == 4)). */
static inline MRT_HD double mrt_grid_weights(double v, int kind, double *w)
{
    if (kind == 1) {
        w[0] = 1;
        return v; /* already integral; truncation as the reference */
    }
    double f = floor(v), t = v - f;
    if (kind == 2) w[0] = 1 - t, w[1] = t;
    else mrt_grid_cubic_coeffs(t, w);
    return f;
}

/* Tap number `tap` of the tensor product over r spatial dims (lengths len): its offset in the input plane (*off) and
   its weight (*wt); true when it reads a zero. */
static inline MRT_HD bool mrt_grid_tap(int tap, int r, int kind, int pad, bool align, const int64_t *len,
                                       const int64_t *first, double (*w)[4], int64_t *off, double *wt)
{
    bool zero = false;
    *wt = 1;
    *off = 0;
    for (int i = 0, rem = tap; i < r; i++) {
        int k = rem % kind;
        rem /= kind;
        double lo = align ? 0 : -0.5, hi = align ? (double)(len[i] - 1) : (double)len[i] - 0.5;
        int64_t pos = first[i] > INT64_MAX - 4 ? INT64_MAX : first[i] + k;
        int64_t idx = mrt_grid_tap_index(pos, len[i], pad, lo, hi);
        if (idx < 0) zero = true;
        *off = *off * len[i] + (idx < 0 ? 0 : idx);
        *wt *= w[i][k];
    }
    return zero;
}

/* ---- NonMaxSuppression */

/* Corners (x_min, y_min, x_max, y_max) of a box v in either layout (center: [x, y, w, h]; else [y1, x1, y2, x2],
   corners in any order). */
static inline MRT_HD void mrt_nms_corners(const double *v, bool center, double *c)
{
    if (center) {
        c[0] = v[0] - v[2] / 2, c[2] = v[0] + v[2] / 2, c[1] = v[1] - v[3] / 2, c[3] = v[1] + v[3] / 2;
    } else {
        c[0] = fmin(v[1], v[3]), c[2] = fmax(v[1], v[3]), c[1] = fmin(v[0], v[2]), c[3] = fmax(v[0], v[2]);
    }
}

/* fmax and fmin (a NaN loses), inlined: as libm calls they were a third of a large NMS on the CPU */
static inline MRT_HD double mrt_nms_max(double a, double b) { return a > b || b != b ? a : b; }
static inline MRT_HD double mrt_nms_min(double a, double b) { return a < b || b != b ? a : b; }

/* Whether box a suppresses box b (corners; their areas passed in, computed once per box as
   (x_max - x_min) * (y_max - y_min)). */
static inline MRT_HD bool mrt_nms_suppresses(const double *a, double area_a, const double *b, double area_b,
                                             double iou_threshold)
{
    double ix0 = mrt_nms_max(a[0], b[0]), ix1 = mrt_nms_min(a[2], b[2]), iy0 = mrt_nms_max(a[1], b[1]),
           iy1 = mrt_nms_min(a[3], b[3]);
    if (ix1 <= ix0 || iy1 <= iy0) return false;
    double inter = (ix1 - ix0) * (iy1 - iy0);
    double uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > iou_threshold;
}

/* ---- RoiAlign */

/* One bilinear sample at (y, x) of an h x w plane: four positions and weights (all 0 outside [-1, size]). */
static inline MRT_HD void mrt_roi_sample(double y, double x, int64_t h, int64_t w, int64_t *pos, double *wt)
{
    for (int q = 0; q < 4; q++) pos[q] = 0, wt[q] = 0;
    if (!(y >= -1.0 && y <= (double)h && x >= -1.0 && x <= (double)w)) return; /* also NaN */
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) yh = yl = h - 1, y = (double)yl;
    else yh = yl + 1;
    if (xl >= w - 1) xh = xl = w - 1, x = (double)xl;
    else xh = xl + 1;
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    pos[0] = yl * w + xl, pos[1] = yl * w + xh, pos[2] = yh * w + xl, pos[3] = yh * w + xh;
    wt[0] = hy * hx, wt[1] = hy * lx, wt[2] = ly * hx, wt[3] = ly * lx;
}

/* Sample i of the n per bin along one axis of bin `bin` (size b) of a roi starting at p0. */
static inline MRT_HD double mrt_roi_sample_pos(double p0, int64_t bin, double b, int64_t i, int64_t n)
{
    return p0 + (double)bin * b + ((double)i + 0.5) * b / (double)n;
}

/* A roi's geometry: its corners (scaled, shifted), bin sizes and sampling grid per bin. */
typedef struct mrt_roi_geom {
    int64_t batch, gh, gw;
    double x0, y0, bh, bw;
} mrt_roi_geom;

/* Every roi's geometry (rois [R, 4] and batch_indices [R] read on the host, for an input of batch n, an output of
   ph_n x pw_n bins and the node's attributes: half for half_pixel, spatial_scale and sampling_ratio) into geo[R], each
   checked before any is computed: its batch index, and a sampling grid of a sane size. */
mrt_status mrt_roi_geoms_get(const mrt_op_ctx *ctx, const mrt_tensor *rois, const mrt_tensor *bi, int64_t n,
                             int64_t ph_n, int64_t pw_n, bool half, double scale, int64_t ratio, mrt_roi_geom *geo);

/* ---- AffineGrid */

/* Base coordinate i of n along one axis, in [-1, 1]. */
static inline MRT_HD double mrt_affine_grid_coord(int64_t i, int64_t n, bool align)
{
    if (align) return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

#ifdef __cplusplus
}
#endif
