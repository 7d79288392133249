// GridSample (16, 20, 22), AffineGrid 20, RoiAlign (10, 16, 22), NonMaxSuppression (10, 11) and Col2Im 18 on CUDA, as
// ops_cpu/vision.c, computed in double like it: GridSample N-D (every mode, padding mode, align_corners), one thread
// per output element; RoiAlign avg/max with both coordinate modes (the rois' geometry and the batch-index checks on a
// host copy of the small roi inputs, so the errors are the CPU's); NMS as the CPU's greedy selection per (batch,
// class): candidates ranked on the device by (score descending, NaN last, index), one thread per (batch, class)
// keeping boxes, the counts read back to size the output; Col2Im as a gather per image element, its sum in the CPU's
// order and precision. Float and integer dtypes of 8 to 64 bits (vision_common.cuh).
#include <cmath>

#include "engine/opdef/vision.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"
#include "ops_cuda/vision_common.cuh"

namespace {

// ------------------------------------------------------------------ GridSample

struct grid_geom {
    int r, kind, pad, xdt, gdt, ydt;
    bool align;
    int64_t c, in_sp, out_sp, len[MRT_MAX_RANK];
};

// One thread per output element (batch, channel, point): the point's taps and weights per spatial dim, then their
// tensor product, as the CPU's loop.
__global__ void grid_sample_kernel(const void *x, const void *grid, void *y, int64_t n_out, grid_geom g)
{
    MRT_CU_FOR(e, n_out) {
        int64_t o = e % g.out_sp, bc = e / g.out_sp, b = bc / g.c;
        int64_t first[MRT_MAX_RANK];
        double w[MRT_MAX_RANK][4];
        for (int i = 0; i < g.r; i++) {
            double gv = mrt_cu_ld(g.gdt, grid, (b * g.out_sp + o) * g.r + (g.r - 1 - i));
            double v = mrt_grid_coord(gv, g.len[i], g.align, g.kind, g.pad);
            first[i] = mrt_cu_f64_to_i64_sat(mrt_grid_weights(v, g.kind, w[i])) - (g.kind == 4 ? 1 : 0);
        }
        int n_taps = 1;
        for (int i = 0; i < g.r; i++) n_taps *= g.kind;
        const int64_t plane = bc * g.in_sp;
        double acc = 0;
        for (int tap = 0; tap < n_taps; tap++) {
            double wt;
            int64_t off;
            if (!mrt_grid_tap(tap, g.r, g.kind, g.pad, g.align, g.len, first, w, &off, &wt))
                acc += wt * mrt_cu_ld(g.xdt, x, plane + off);
        }
        mrt_cu_st(g.ydt, y, e, acc);
    }
}

mrt_status cu_grid_sample(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *grid = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    const char *mode = mrt_attr_string(ctx, "mode", ctx->opset < 20 ? "bilinear" : "linear");
    const char *pad_s = mrt_attr_string(ctx, "padding_mode", "zeros");
    grid_geom g;
    memset(&g, 0, sizeof g);
    g.align = mrt_attr_int(ctx, "align_corners", 0) != 0;
    g.pad = !strcmp(pad_s, "border")       ? MRT_GRID_PAD_BORDER
            : !strcmp(pad_s, "reflection") ? MRT_GRID_PAD_REFLECT
                                           : MRT_GRID_PAD_ZEROS;
    g.kind = !strcmp(mode, "nearest") ? 1 : (!strcmp(mode, "cubic") || !strcmp(mode, "bicubic")) ? 4 : 2;
    g.r = x->rank - 2;
    g.c = x->shape[1];
    g.in_sp = g.out_sp = 1;
    for (int i = 0; i < g.r; i++) g.len[i] = x->shape[2 + i], g.in_sp *= x->shape[2 + i], g.out_sp *= y->shape[2 + i];
    g.xdt = x->dtype, g.gdt = grid->dtype, g.ydt = y->dtype;
    int64_t n_out = mrt_tensor_numel(y);
    if (g.in_sp == 0 || n_out == 0) return MRT_STATUS_OK; // nothing to read from: the (zeroed) output stands
    MRT_LAUNCH(grid_sample_kernel, mrt_cu_blocks(n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), x->data, grid->data,
               y->data, n_out, g);
    MRT_CU_CHECK_LAUNCH(ctx, "grid sample kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ NonMaxSuppression

struct nms_geom {
    int bdt, sdt;
    bool center, has_score_t;
    int64_t nb, nbox, ncls, max_out;
    double iou_t, score_t;
};

// Corners (x_min, y_min, x_max, y_max) and area of every box.
__global__ void nms_corners_kernel(const void *boxes, double *cor, double *area, int64_t n, nms_geom g)
{
    MRT_CU_FOR(i, n) {
        double v[4], *c = cor + i * 4;
        for (int k = 0; k < 4; k++) v[k] = mrt_cu_ld(g.bdt, boxes, i * 4 + k);
        mrt_nms_corners(v, g.center, c);
        area[i] = (c[2] - c[0]) * (c[3] - c[1]);
    }
}

__device__ __forceinline__ bool nms_candidate(const nms_geom &g, double s) { return !g.has_score_t || s > g.score_t; }

// Each candidate's place in its (batch, class) list: how many candidates come first (score descending with NaN last,
// then index ascending, the CPU's qsort order: a total order, so the places are distinct).
__global__ void nms_rank_kernel(const void *scores, int64_t *order, int64_t n, nms_geom g)
{
    MRT_CU_FOR(e, n) {
        int64_t i = e % g.nbox, bc = e / g.nbox;
        double si = mrt_cu_ld(g.sdt, scores, e);
        if (!nms_candidate(g, si)) continue;
        double ki = si != si ? -INFINITY : si;
        int64_t place = 0;
        for (int64_t j = 0; j < g.nbox; j++) {
            double sj = mrt_cu_ld(g.sdt, scores, bc * g.nbox + j);
            if (j == i || !nms_candidate(g, sj)) continue;
            double kj = sj != sj ? -INFINITY : sj;
            place += kj > ki || (kj == ki && j < i);
        }
        order[bc * g.nbox + place] = i;
    }
}

// One thread per (batch, class): the greedy pass over its ranked candidates, keeping up to max_out boxes in
// kept[bc * max_out ...] and their count in n_kept[bc].
__global__ void nms_greedy_kernel(const void *scores, const double *cor, const double *area, const int64_t *order,
                                  int64_t *kept, int64_t *n_kept, nms_geom g)
{
    MRT_CU_FOR(bc, g.nb * g.ncls) {
        int64_t b = bc / g.ncls, n = 0, nk = 0;
        for (int64_t i = 0; i < g.nbox; i++) n += nms_candidate(g, mrt_cu_ld(g.sdt, scores, bc * g.nbox + i));
        const double *bc_cor = cor + b * g.nbox * 4, *bc_area = area + b * g.nbox;
        int64_t *k_out = kept + bc * g.max_out;
        for (int64_t k = 0; k < n && nk < g.max_out; k++) {
            int64_t ik = order[bc * g.nbox + k];
            bool drop = false;
            for (int64_t j = 0; j < nk && !drop; j++)
                drop = mrt_nms_suppresses(bc_cor + ik * 4, bc_area[ik], bc_cor + k_out[j] * 4, bc_area[k_out[j]], g.iou_t);
            if (!drop) k_out[nk++] = ik;
        }
        n_kept[bc] = nk;
    }
}

// The kept boxes as (batch, class, box) rows, (batch, class) lists one after another as on the CPU.
__global__ void nms_write_kernel(const int64_t *kept, const int64_t *n_kept, int64_t *y, nms_geom g)
{
    MRT_CU_FOR(bc, g.nb * g.ncls) {
        int64_t at = 0;
        for (int64_t q = 0; q < bc; q++) at += n_kept[q];
        for (int64_t k = 0; k < n_kept[bc]; k++) {
            int64_t *row = y + (at + k) * 3;
            row[0] = bc / g.ncls, row[1] = bc % g.ncls, row[2] = kept[bc * g.max_out + k];
        }
    }
}

mrt_status cu_nms(mrt_op_ctx *ctx)
{
    const mrt_tensor *boxes = mrt_input(ctx, 0), *scores = mrt_input(ctx, 1);
    mrt_cu_host_inputs host; // the optional scalars (max_output_boxes_per_class, thresholds)
    MRT_TRY(host.load(ctx, 2));
    const mrt_tensor *mo = mrt_input(&host.ctx, 2), *iou = mrt_input(&host.ctx, 3), *st_in = mrt_input(&host.ctx, 4);
    nms_geom g;
    memset(&g, 0, sizeof g);
    g.center = mrt_attr_int(ctx, "center_point_box", 0) == 1;
    g.max_out = mo && mrt_tensor_numel(mo) ? mrt_load_i64(mo->dtype, mo->data, 0) : 0;
    g.iou_t = iou && mrt_tensor_numel(iou) ? mrt_load_f64(iou->dtype, iou->data, 0) : 0;
    g.has_score_t = st_in && mrt_tensor_numel(st_in);
    g.score_t = g.has_score_t ? mrt_load_f64(st_in->dtype, st_in->data, 0) : 0;
    g.nb = boxes->shape[0], g.nbox = boxes->shape[1], g.ncls = scores->shape[1];
    g.bdt = boxes->dtype, g.sdt = scores->dtype;
    if (g.max_out < 0) g.max_out = 0;
    if (g.max_out > g.nbox) g.max_out = g.nbox;
    int64_t lists = g.nb * g.ncls, total = 0;
    mrt_tensor *y = NULL;
    int64_t shape[2] = {0, 3};
    if (lists == 0 || g.max_out == 0) return mrt_output_alloc(ctx, 0, MRT_DTYPE_INT64, 2, shape, &y);
    // workspace: corners, areas, ranked candidates, kept boxes and their counts
    size_t n_box = (size_t)(g.nb * g.nbox), n_cand = (size_t)(lists * g.nbox), n_kept = (size_t)(lists * g.max_out);
    size_t bytes = (n_box * 5 + n_cand + n_kept + (size_t)lists) * 8;
    double *cor = (double *)mrt_workspace(ctx, bytes);
    if (!cor) return MRT_STATUS_OUT_OF_MEMORY;
    double *area = cor + n_box * 4;
    int64_t *order = (int64_t *)(area + n_box), *kept = order + n_cand, *counts = kept + n_kept;
    cudaStream_t s = mrt_cu_stream(ctx);
    MRT_LAUNCH(nms_corners_kernel, mrt_cu_blocks((int64_t)n_box), MRT_CU_THREADS, 0, s, boxes->data, cor, area,
               (int64_t)n_box, g);
    MRT_LAUNCH(nms_rank_kernel, mrt_cu_blocks((int64_t)n_cand), MRT_CU_THREADS, 0, s, scores->data, order,
               (int64_t)n_cand, g);
    MRT_LAUNCH(nms_greedy_kernel, mrt_cu_blocks(lists), MRT_CU_THREADS, 0, s, scores->data, cor, area, order, kept,
               counts, g);
    MRT_CU_CHECK_LAUNCH(ctx, "non-max suppression kernels");
    int64_t *h_counts = (int64_t *)malloc((size_t)lists * 8);
    if (!h_counts) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (NMS counts)");
    mrt_status st = mrt_cu_read(ctx, h_counts, counts, (size_t)lists * 8, "the kept-box counts");
    for (int64_t q = 0; q < lists; q++) total += h_counts[q];
    free(h_counts);
    MRT_TRY(st);
    shape[0] = total;
    MRT_TRY(mrt_output_alloc(ctx, 0, MRT_DTYPE_INT64, 2, shape, &y));
    if (!y || total == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(nms_write_kernel, mrt_cu_blocks(lists), MRT_CU_THREADS, 0, s, kept, counts, (int64_t *)y->data, g);
    MRT_CU_CHECK_LAUNCH(ctx, "non-max suppression output kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ RoiAlign

struct roi_dims {
    int xdt, ydt;
    bool max_mode;
    int64_t c, h, w, ph_n, pw_n, n_out;
};

// One thread per output element (roi, channel, bin row, bin column).
__global__ void roi_align_kernel(const void *x, void *y, const mrt_roi_geom *geo, roi_dims d)
{
    MRT_CU_FOR(e, d.n_out) {
        int64_t pw = e % d.pw_n, ph = e / d.pw_n % d.ph_n, ch = e / (d.pw_n * d.ph_n) % d.c, r = e / (d.pw_n * d.ph_n * d.c);
        mrt_roi_geom g = geo[r];
        int64_t nt = g.gh * g.gw, plane = (g.batch * d.c + ch) * d.h * d.w;
        double count = nt > 1 ? (double)nt : 1.0, out = 0;
        for (int64_t iy = 0, k = 0; iy < g.gh; iy++)
            for (int64_t ix = 0; ix < g.gw; ix++, k++) {
                double sy = mrt_roi_sample_pos(g.y0, ph, g.bh, iy, g.gh);
                double sx = mrt_roi_sample_pos(g.x0, pw, g.bw, ix, g.gw);
                int64_t pos[4];
                double wt[4], v[4];
                mrt_roi_sample(sy, sx, d.h, d.w, pos, wt);
                for (int q = 0; q < 4; q++) v[q] = wt[q] * mrt_cu_ld(d.xdt, x, plane + pos[q]);
                if (!d.max_mode) {
                    out += v[0] + v[1] + v[2] + v[3];
                } else {
                    double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                    out = k == 0 ? m : fmax(out, m);
                }
            }
        if (!d.max_mode) out /= count;
        mrt_cu_st(d.ydt, y, e, out);
    }
}

mrt_status cu_roi_align(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_cu_host_inputs host; // rois and batch indices: their geometry and checks on the host, as the CPU
    MRT_TRY(host.load(ctx, 1));
    const mrt_tensor *rois = mrt_input(&host.ctx, 1), *bi = mrt_input(&host.ctx, 2);
    int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], R = rois->shape[0];
    bool half = ctx->opset >= 16 && strcmp(mrt_attr_string(ctx, "coordinate_transformation_mode", "half_pixel"), "half_pixel") == 0;
    double scale = mrt_attr_float(ctx, "spatial_scale", 1.0f);
    int64_t ratio = mrt_attr_int(ctx, "sampling_ratio", 0);
    if (h == 0 || w == 0 || R == 0 || c == 0) return MRT_STATUS_OK;
    mrt_roi_geom *geo = (mrt_roi_geom *)malloc((size_t)R * sizeof *geo);
    if (!geo) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (%lld rois)", (long long)R);
    mrt_status st = mrt_roi_geoms_get(ctx, rois, bi, n, y->shape[2], y->shape[3], half, scale, ratio, geo);
    if (st) {
        free(geo);
        return st;
    }
    roi_dims d = {(int)x->dtype, (int)y->dtype, strcmp(mrt_attr_string(ctx, "mode", "avg"), "max") == 0, c, h, w,
                  y->shape[2], y->shape[3], mrt_tensor_numel(y)};
    void *dgeo = d.n_out ? mrt_workspace(ctx, (size_t)R * sizeof *geo) : NULL;
    if (d.n_out && !dgeo) {
        free(geo);
        return MRT_STATUS_OUT_OF_MEMORY;
    }
    cudaError_t e = d.n_out ? cudaMemcpyAsync(dgeo, geo, (size_t)R * sizeof *geo, cudaMemcpyHostToDevice, mrt_cu_stream(ctx))
                            : cudaSuccess;
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx)); // geo is freed next
    free(geo);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copying the rois: %s", cudaGetErrorString(e));
    if (d.n_out == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(roi_align_kernel, mrt_cu_blocks(d.n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), x->data, y->data,
               (const mrt_roi_geom *)dgeo, d);
    MRT_CU_CHECK_LAUNCH(ctx, "roi align kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ AffineGrid

struct affine_dims {
    int r, tdt, ydt;
    bool align;
    int64_t pts, n_out, len[3];
};

// One thread per (batch, point): theta times the homogeneous point (x, y[, z], 1), x along the last spatial dim.
__global__ void affine_grid_kernel(const void *theta, void *y, affine_dims d)
{
    MRT_CU_FOR(e, d.n_out) {
        int64_t b = e / d.pts, p = e % d.pts;
        double hp[4];
        for (int64_t rem = p, i = d.r - 1; i >= 0; i--) {
            hp[d.r - 1 - i] = mrt_affine_grid_coord(rem % d.len[i], d.len[i], d.align);
            rem /= d.len[i];
        }
        hp[d.r] = 1;
        for (int k = 0; k < d.r; k++) {
            double acc = 0;
            for (int j = 0; j <= d.r; j++) acc += mrt_cu_ld(d.tdt, theta, (b * d.r + k) * (d.r + 1) + j) * hp[j];
            mrt_cu_st(d.ydt, y, e * d.r + k, acc);
        }
    }
}

mrt_status cu_affine_grid(mrt_op_ctx *ctx)
{
    const mrt_tensor *theta = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    affine_dims d;
    memset(&d, 0, sizeof d);
    d.r = y->rank - 2, d.tdt = theta->dtype, d.ydt = y->dtype;
    d.align = mrt_attr_int(ctx, "align_corners", 0) != 0;
    if (d.r < 1 || d.r > 3) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "%d spatial dims", d.r);
    d.pts = 1;
    for (int i = 0; i < d.r; i++) d.len[i] = y->shape[1 + i], d.pts *= y->shape[1 + i];
    d.n_out = y->shape[0] * d.pts;
    if (d.n_out == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(affine_grid_kernel, mrt_cu_blocks(d.n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), theta->data, y->data, d);
    MRT_CU_CHECK_LAUNCH(ctx, "affine grid kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ Col2Im

struct col2im_dims {
    int n, xdt, ydt;
    int64_t prod_b, L, img, n_out;
    int64_t bl[MRT_MAX_RANK], cnt[MRT_MAX_RANK], dil[MRT_MAX_RANK], str[MRT_MAX_RANK], pad[MRT_MAX_RANK],
        shape[MRT_MAX_RANK];
};

// One thread per image element: the column entries that land on it, block offset k ascending (at most one column l
// per k), added one at a time in the output's precision, the CPU's read-add-store order.
__global__ void col2im_kernel(const void *x, void *y, col2im_dims d)
{
    MRT_CU_FOR(e, d.n_out) {
        int64_t bc = e / d.img, p = e % d.img, pos[MRT_MAX_RANK];
        for (int i = d.n - 1; i >= 0; i--) pos[i] = p % d.shape[i], p /= d.shape[i];
        double acc = 0;
        for (int64_t k = 0; k < d.prod_b; k++) {
            int64_t krem = k, l = 0, lmul = 1;
            bool hit = true;
            for (int i = d.n - 1; i >= 0 && hit; i--) {
                int64_t kk = krem % d.bl[i], num = pos[i] + d.pad[i] - kk * d.dil[i];
                krem /= d.bl[i];
                hit = num >= 0 && num % d.str[i] == 0 && num / d.str[i] < d.cnt[i];
                l += (hit ? num / d.str[i] : 0) * lmul;
                lmul *= d.cnt[i];
            }
            if (hit) acc = mrt_cu_round_to(d.ydt, acc + mrt_cu_ld(d.xdt, x, (bc * d.prod_b + k) * d.L + l));
        }
        mrt_cu_st(d.ydt, y, e, acc);
    }
}

mrt_status cu_col2im(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_cu_host_inputs host; // block_shape, as the CPU reads it
    MRT_TRY(host.load(ctx, 2));
    const mrt_tensor *blk = mrt_input(&host.ctx, 2);
    col2im_dims d;
    memset(&d, 0, sizeof d);
    d.n = y->rank - 2, d.xdt = x->dtype, d.ydt = y->dtype;
    const int64_t *bl = (const int64_t *)blk->data, *dil, *pads, *str;
    int64_t nd, np, ns;
    mrt_attr_ints(ctx, "dilations", &dil, &nd);
    mrt_attr_ints(ctx, "pads", &pads, &np);
    mrt_attr_ints(ctx, "strides", &str, &ns);
    d.prod_b = 1, d.img = 1;
    for (int i = 0; i < d.n; i++) {
        d.dil[i] = nd ? dil[i] : 1, d.str[i] = ns ? str[i] : 1, d.pad[i] = np ? pads[i] : 0;
        int64_t pe = np ? pads[d.n + i] : 0;
        d.bl[i] = bl[i];
        d.shape[i] = y->shape[2 + i];
        d.cnt[i] = (y->shape[2 + i] + d.pad[i] + pe - (d.dil[i] * (bl[i] - 1) + 1)) / d.str[i] + 1;
        d.prod_b *= bl[i];
        d.img *= y->shape[2 + i];
    }
    d.L = x->shape[2];
    d.n_out = mrt_tensor_numel(y);
    if (d.n_out == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(col2im_kernel, mrt_cu_blocks(d.n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), x->data, y->data, d);
    MRT_CU_CHECK_LAUNCH(ctx, "col2im kernel");
    return MRT_STATUS_OK;
}

bool cu_vision_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        if (t && !mrt_cu_any_dtype_ok(t->dtype))
            return snprintf(why, len, "dtype %s (input %d) is not read by the CUDA kernel", mrt_dtype_name(t->dtype), i),
                   false;
    }
    return true;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_vision[] = {
    MRT_CU_ROW_S("AffineGrid", 20, cu_affine_grid, cu_vision_supports, 0),
    MRT_CU_ROW_S("Col2Im", 18, cu_col2im, cu_vision_supports, 0),
    MRT_CU_ROW_S("RoiAlign", 10, cu_roi_align, cu_vision_supports, 0),
    MRT_CU_ROW_S("NonMaxSuppression", 10, cu_nms, cu_vision_supports, 0),
    MRT_CU_ROW_S("GridSample", 16, cu_grid_sample, cu_vision_supports, 0),
    {0},
};
