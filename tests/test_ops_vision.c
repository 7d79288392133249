/* GridSample (2-D) against a reference written here from the spec: unnormalize, then for out-of-range
 * coordinates clamp (border) or reflect (reflection), then bilinear / nearest (half to even) / bicubic (Keys,
 * a = -0.75) over pixels read with the padding rule. Random data and grids reaching past the borders. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct gs_ref {
    const float *x;
    int64_t h, w;
    int pad; /* 0 zeros, 1 border, 2 reflection */
    bool align;
} gs_ref;

static double refl(double v, double lo, double hi)
{
    double range = hi - lo;
    while (v < lo || v > hi) v = v < lo ? 2 * lo - v : 2 * hi - v; /* mirror until inside */
    (void)range;
    return v;
}

static double pixel(const gs_ref *g, int64_t i, int64_t j)
{
    double lo_i = g->align ? 0 : -0.5, hi_i = g->align ? (double)(g->h - 1) : g->h - 0.5;
    double lo_j = g->align ? 0 : -0.5, hi_j = g->align ? (double)(g->w - 1) : g->w - 0.5;
    if (i < 0 || i >= g->h || j < 0 || j >= g->w) {
        if (g->pad == 0) return 0;
        if (g->pad == 1) {
            i = i < 0 ? 0 : i >= g->h ? g->h - 1 : i;
            j = j < 0 ? 0 : j >= g->w ? g->w - 1 : j;
        } else {
            if (i < 0 || i >= g->h) i = (int64_t)refl((double)i, lo_i, hi_i);
            if (j < 0 || j >= g->w) j = (int64_t)refl((double)j, lo_j, hi_j);
            i = i < 0 ? 0 : i >= g->h ? g->h - 1 : i;
            j = j < 0 ? 0 : j >= g->w ? g->w - 1 : j;
        }
    }
    return g->x[i * g->w + j];
}

static double keys(double t)
{
    const double a = -0.75;
    t = fabs(t);
    return t <= 1 ? ((a + 2) * t - (a + 3)) * t * t + 1 : t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0;
}

static double sample(const gs_ref *g, const char *mode, double gx, double gy)
{
    double u = g->align ? (gx + 1) / 2 * (g->w - 1) : ((gx + 1) * g->w - 1) / 2;
    double v = g->align ? (gy + 1) / 2 * (g->h - 1) : ((gy + 1) * g->h - 1) / 2;
    bool nearest = !strcmp(mode, "nearest");
    if (nearest) u = nearbyint(u), v = nearbyint(v);
    double lo = g->align ? 0 : -0.5, hu = g->align ? g->w - 1.0 : g->w - 0.5, hv = g->align ? g->h - 1.0 : g->h - 0.5;
    if (g->pad == 1) {
        if (u < lo || u > hu) u = u < 0 ? 0 : u > g->w - 1 ? g->w - 1 : u;
        if (v < lo || v > hv) v = v < 0 ? 0 : v > g->h - 1 ? g->h - 1 : v;
    } else if (g->pad == 2) {
        u = refl(u, lo, hu);
        v = refl(v, lo, hv);
    }
    if (nearest) return pixel(g, (int64_t)v, (int64_t)u);
    double fu = floor(u), fv = floor(v), acc = 0;
    if (!strcmp(mode, "linear")) {
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                acc += (a ? v - fv : 1 - (v - fv)) * (b ? u - fu : 1 - (u - fu)) * pixel(g, (int64_t)fv + a, (int64_t)fu + b);
        return acc;
    }
    for (int a = -1; a <= 2; a++)
        for (int b = -1; b <= 2; b++)
            acc += keys(v - (fv + a)) * keys(u - (fu + b)) * pixel(g, (int64_t)fv + a, (int64_t)fu + b);
    return acc;
}

Test(vision, grid_sample_modes_paddings_alignments)
{
    th_rng r;
    th_rng_init(&r, th_seed("vision.grid_sample"));
    const int64_t N = 1, C = 2, H = 4, W = 5, OH = 3, OW = 6;
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){N, C, H, W}, -1, 1);
    mrt_tensor grid = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){N, OH, OW, 2}, -1.6, 1.6);
    const char *modes[3] = {"linear", "nearest", "cubic"}, *pads[3] = {"zeros", "border", "reflection"};
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int al = 0; al < 2; al++) {
                th_case *c = th_begin("GridSample", "", 20);
                th_input(c, &x);
                th_input(c, &grid);
                th_attr_string(c, "mode", modes[m]);
                th_attr_string(c, "padding_mode", pads[p]);
                th_attr_int(c, "align_corners", al);
                mrt_tensor y = {0};
                cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
                for (int64_t ch = 0; ch < C; ch++) {
                    gs_ref g = {(const float *)x.data + ch * H * W, H, W, p, al};
                    for (int64_t o = 0; o < OH * OW; o++) {
                        const float *gp = (const float *)grid.data + o * 2;
                        double want = sample(&g, modes[m], gp[0], gp[1]);
                        float got = ((float *)y.data)[ch * OH * OW + o];
                        cr_assert(fabs(got - want) <= 1e-5 * (1 + fabs(want)),
                                  "%s/%s/align %d: channel %lld output %lld: got %.7g, expected %.7g", modes[m], pads[p],
                                  al, (long long)ch, (long long)o, got, want);
                    }
                }
                mrt_tensor_release(&y);
                th_free(c);
            }
    /* a grid whose last dim is not the spatial rank */
    mrt_tensor bad = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){N, OH, OW, 3}, -1, 1);
    th_case *c = th_begin("GridSample", "", 20);
    th_input(c, &x);
    th_input(c, &bad);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    th_free(c);
    mrt_tensor_release(&bad);
    mrt_tensor_release(&x);
    mrt_tensor_release(&grid);
}

/* NonMaxSuppression against a direct reading of the spec: repeatedly take the highest-scoring remaining box
   above the score threshold (lowest index on ties), keep it unless its IoU with a kept box exceeds the
   threshold. Boxes in corner form with swapped corners, and in center form. */
static double iou(const double *a, const double *b)
{
    double ix = fmin(a[2], b[2]) - fmax(a[0], b[0]), iy = fmin(a[3], b[3]) - fmax(a[1], b[1]);
    if (ix <= 0 || iy <= 0) return 0;
    double inter = ix * iy, ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return ua > 0 ? inter / ua : 0;
}

Test(vision, nms_against_greedy_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("vision.nms"));
    const int64_t B = 2, C = 2, N = 12, MAXO = 4;
    for (int center = 0; center < 2; center++) {
        mrt_tensor boxes = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){B, N, 4}, 0, 10);
        mrt_tensor scores = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){B, C, N}, 0, 1);
        if (center)
            for (int64_t i = 0; i < B * N; i++) /* positive widths and heights */
                for (int k = 2; k < 4; k++) ((float *)boxes.data)[i * 4 + k] = fabsf(((float *)boxes.data)[i * 4 + k]) / 2 + 0.5f;
        mrt_tensor mo = th_scalar_i64(MAXO), it = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){0.3});
        mrt_tensor stt = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){0.2});
        th_case *c = th_begin("NonMaxSuppression", "", 11);
        th_input(c, &boxes);
        th_input(c, &scores);
        th_input_const(c, &mo);
        th_input_const(c, &it);
        th_input_const(c, &stt);
        th_attr_int(c, "center_point_box", center);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        int64_t want[64][3], n_want = 0;
        for (int64_t b = 0; b < B; b++)
            for (int64_t cl = 0; cl < C; cl++) {
                bool used[12] = {false};
                double kept[12][4];
                int n_kept = 0;
                for (;;) {
                    int64_t best = -1;
                    for (int64_t i = 0; i < N; i++) {
                        float s = ((float *)scores.data)[(b * C + cl) * N + i];
                        if (!used[i] && s > 0.2f && (best < 0 || s > ((float *)scores.data)[(b * C + cl) * N + best])) best = i;
                    }
                    if (best < 0 || n_kept == MAXO) break;
                    used[best] = true;
                    const float *v = (const float *)boxes.data + (b * N + best) * 4;
                    double bx[4] = {fmin(v[1], v[3]), fmin(v[0], v[2]), fmax(v[1], v[3]), fmax(v[0], v[2])};
                    if (center) bx[0] = v[0] - v[2] / 2.0, bx[1] = v[1] - v[3] / 2.0, bx[2] = v[0] + v[2] / 2.0, bx[3] = v[1] + v[3] / 2.0;
                    bool keep = true;
                    for (int k = 0; k < n_kept && keep; k++) keep = iou(bx, kept[k]) <= 0.3f;
                    if (!keep) continue;
                    memcpy(kept[n_kept++], bx, sizeof bx);
                    want[n_want][0] = b, want[n_want][1] = cl, want[n_want][2] = best;
                    n_want++;
                }
            }
        cr_assert_eq(y.shape[0], n_want, "center %d: %lld boxes selected, expected %lld", center, (long long)y.shape[0],
                     (long long)n_want);
        for (int64_t i = 0; i < n_want * 3; i++)
            cr_assert_eq(((int64_t *)y.data)[i], want[i / 3][i % 3], "center %d: entry %lld", center, (long long)i);
        mrt_tensor_release(&y);
        th_free(c);
        mrt_tensor *all[] = {&boxes, &scores, &mo, &it, &stt};
        for (int i = 0; i < 5; i++) mrt_tensor_release(all[i]);
    }
}

/* RoiAlign (avg, half_pixel, sampling_ratio 2) against a reference written here: each bin averages 2x2
   bilinear samples at the bin's quarter points, with the border rules of the spec's reference. */
static double bilinear_clamped(const float *p, int64_t h, int64_t w, double y, double x)
{
    if (y < -1 || y > h || x < -1 || x > w) return 0;
    y = y < 0 ? 0 : y, x = x < 0 ? 0 : x;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) y0 = y1 = h - 1, y = (double)y0;
    if (x0 >= w - 1) x0 = x1 = w - 1, x = (double)x0;
    double ly = y - y0, lx = x - x0;
    return (1 - ly) * (1 - lx) * p[y0 * w + x0] + (1 - ly) * lx * p[y0 * w + x1] + ly * (1 - lx) * p[y1 * w + x0] +
           ly * lx * p[y1 * w + x1];
}

Test(vision, roi_align_avg_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("vision.roi_align"));
    const int64_t C = 3, H = 6, W = 7, OH = 2, OW = 3;
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, C, H, W}, -1, 1);
    mrt_tensor rois = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 4},
                                  (double[]){0.5, 1.0, 5.5, 4.0, -1.0, -1.0, 3.0, 2.0, 2.0, 0.0, 9.0, 7.0});
    mrt_tensor bi = th_vec_i64(3, (int64_t[]){0, 1, 1});
    th_case *c = th_begin("RoiAlign", "", 16);
    th_input(c, &x);
    th_input(c, &rois);
    th_input(c, &bi);
    th_attr_int(c, "output_height", OH);
    th_attr_int(c, "output_width", OW);
    th_attr_int(c, "sampling_ratio", 2);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int64_t k = 0; k < 3; k++) {
        const float *rv = (const float *)rois.data + k * 4;
        double x0 = rv[0] - 0.5, y0 = rv[1] - 0.5, bw = (rv[2] - rv[0]) / OW, bh = (rv[3] - rv[1]) / OH;
        int64_t b = ((int64_t *)bi.data)[k];
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    double acc = 0;
                    for (int sy = 0; sy < 2; sy++)
                        for (int sx = 0; sx < 2; sx++)
                            acc += bilinear_clamped((const float *)x.data + (b * C + ch) * H * W, H, W,
                                                    y0 + i * bh + (sy + 0.5) * bh / 2, x0 + j * bw + (sx + 0.5) * bw / 2);
                    double want = acc / 4;
                    float got = ((float *)y.data)[((k * C + ch) * OH + i) * OW + j];
                    cr_assert(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "roi %lld c %lld bin (%lld,%lld): got %g, expected %g",
                              (long long)k, (long long)ch, (long long)i, (long long)j, got, want);
                }
    }
    mrt_tensor_release(&y);
    th_free(c);
    /* a batch index out of range is an error, not a read */
    ((int64_t *)bi.data)[2] = 5;
    c = th_begin("RoiAlign", "", 16);
    th_input(c, &x);
    th_input(c, &rois);
    th_input(c, &bi);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_ARG);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&rois);
    mrt_tensor_release(&bi);
}

/* AffineGrid 2-D: grid[n, h, w] = theta[n] @ (x_w, y_h, 1) with the base coordinates of the spec. */
Test(vision, affine_grid_2d_both_alignments)
{
    th_rng r;
    th_rng_init(&r, th_seed("vision.affine_grid"));
    mrt_tensor theta = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 2, 3}, -1, 1);
    mrt_tensor size = th_vec_i64(4, (int64_t[]){2, 3, 4, 5});
    for (int al = 0; al < 2; al++) {
        th_case *c = th_begin("AffineGrid", "", 20);
        th_input(c, &theta);
        th_input_const(c, &size);
        th_attr_int(c, "align_corners", al);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        cr_assert_eq(y.rank, 4);
        cr_assert_eq(y.shape[3], 2);
        for (int n = 0; n < 2; n++)
            for (int h = 0; h < 4; h++)
                for (int w = 0; w < 5; w++) {
                    double xs = al ? -1 + 2.0 * w / 4 : -1 + (2.0 * w + 1) / 5, ys = al ? -1 + 2.0 * h / 3 : -1 + (2.0 * h + 1) / 4;
                    const float *t = (const float *)theta.data + n * 6;
                    for (int k = 0; k < 2; k++) {
                        double want = t[k * 3] * xs + t[k * 3 + 1] * ys + t[k * 3 + 2];
                        float got = ((float *)y.data)[((n * 4 + h) * 5 + w) * 2 + k];
                        cr_assert(fabs(got - want) < 1e-5, "align %d (%d,%d,%d,%d): got %g, expected %g", al, n, h, w, k, got, want);
                    }
                }
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&theta);
    mrt_tensor_release(&size);
}

/* Col2Im: with all-ones columns, each pixel receives the number of (strided, dilated, padded) blocks that
   cover it, counted here directly. */
Test(vision, col2im_counts_covering_blocks)
{
    const int64_t H = 5, W = 6, KH = 2, KW = 3, SH = 1, SW = 2, DH = 2, DW = 1, PT = 1, PL = 0, PB = 1, PR = 1;
    int64_t nh = (H + PT + PB - (DH * (KH - 1) + 1)) / SH + 1, nw = (W + PL + PR - (DW * (KW - 1) + 1)) / SW + 1;
    double ones[2 * KH * KW * 64];
    for (int i = 0; i < 2 * KH * KW * 64; i++) ones[i] = 1;
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 2 * KH * KW, nh * nw}, ones);
    mrt_tensor img = th_vec_i64(2, (int64_t[]){H, W}), blk = th_vec_i64(2, (int64_t[]){KH, KW});
    th_case *c = th_begin("Col2Im", "", 18);
    th_input(c, &x);
    th_input_const(c, &img);
    th_input_const(c, &blk);
    th_attr_ints(c, "strides", 2, (int64_t[]){SH, SW});
    th_attr_ints(c, "dilations", 2, (int64_t[]){DH, DW});
    th_attr_ints(c, "pads", 4, (int64_t[]){PT, PL, PB, PR});
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int ch = 0; ch < 2; ch++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
                int count = 0;
                for (int64_t bh = 0; bh < nh; bh++)
                    for (int64_t bw = 0; bw < nw; bw++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++)
                                count += bh * SH - PT + kh * DH == h && bw * SW - PL + kw * DW == w;
                cr_assert_eq(((float *)y.data)[(ch * H + h) * W + w], (float)count, "(%d,%lld,%lld)", ch, (long long)h, (long long)w);
            }
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&img);
    mrt_tensor_release(&blk);
}
