/* Opdefs: GridSample 16/20/22 (N-D from 20; linear/bilinear, nearest, cubic/bicubic; zeros, border,
 * reflection padding; align_corners), NonMaxSuppression 10/11 (corner or center boxes) and RoiAlign 10/16/22
 * (avg/max, half_pixel or output_half_pixel, adaptive or fixed sampling), AffineGrid 20 (2-D and 3-D) and Col2Im 18
 * (N-D blocks, strides, dilations, pads). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/opdef/vision.h"
#include "engine/registry.h"

mrt_status mrt_roi_geoms_get(const mrt_op_ctx *ctx, const mrt_tensor *rois, const mrt_tensor *bi, int64_t n,
                             int64_t ph_n, int64_t pw_n, bool half, double scale, int64_t ratio, mrt_roi_geom *geo)
{
    double off = half ? 0.5 : 0.0;
    for (int64_t r = 0; r < rois->shape[0]; r++) {
        int64_t b = mrt_load_i64(bi->dtype, bi->data, r);
        if (b < 0 || b >= n)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)r,
                               (long long)b, (long long)n);
        double v[4];
        for (int i = 0; i < 4; i++) v[i] = mrt_load_f64(rois->dtype, rois->data, r * 4 + i) * scale - off;
        double rw = v[2] - v[0], rh = v[3] - v[1];
        if (!half) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0);
        double bh = rh / (double)ph_n, bw = rw / (double)pw_n;
        double gh_d = ratio > 0 ? (double)ratio : ceil(rh / (double)ph_n), gw_d = ratio > 0 ? (double)ratio : ceil(rw / (double)pw_n);
        /* a non-positive count (a reversed half_pixel roi) samples nothing; NaN or a huge grid is refused */
        if (gh_d <= 0 || gw_d <= 0) gh_d = gw_d = 0;
        else if (!(gh_d * gw_d <= (double)(1 << 16)))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "roi %lld needs a %g x %g sampling grid per bin (too large)",
                               (long long)r, gh_d, gw_d);
        geo[r] = (mrt_roi_geom){b, (int64_t)gh_d, (int64_t)gw_d, v[0], v[1], bh, bw};
    }
    return MRT_STATUS_OK;
}

static bool is_float(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static mrt_status infer_grid_sample(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *grid = mrt_input(ctx, 1);
    char a[128], b[128];
    if (!x || !grid || !is_float(x->dtype) || !is_float(grid->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X and grid must be floating-point tensors");
    int r = x->rank - 2;
    if (r < 1 || (ctx->opset < 20 && r != 2) || grid->rank != x->rank || grid->shape[0] != x->shape[0] ||
        grid->shape[grid->rank - 1] != r)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "grid %s must be [N, out spatial dims..., %d] for X %s (opset %lld: %s)",
                           mrt_shape_describe(grid->rank, grid->shape, a, sizeof a), r,
                           mrt_shape_describe(x->rank, x->shape, b, sizeof b), (long long)ctx->opset,
                           ctx->opset < 20 ? "4-D only" : "N-D");
    const char *mode = mrt_attr_string(ctx, "mode", ctx->opset < 20 ? "bilinear" : "linear");
    const char *pad = mrt_attr_string(ctx, "padding_mode", "zeros");
    static const char *const modes[] = {"linear", "bilinear", "nearest", "cubic", "bicubic"};
    bool ok = false;
    for (int i = 0; i < 5; i++) ok |= strcmp(mode, modes[i]) == 0;
    if (!ok) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not linear, nearest or cubic", mode);
    if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "padding_mode '%s' is not zeros, border or reflection", pad);
    int64_t shape[MRT_MAX_RANK] = {x->shape[0], x->shape[1]};
    for (int i = 0; i < r; i++) shape[2 + i] = grid->shape[1 + i];
    return mrt_output_set(ctx, 0, x->dtype, x->rank, shape);
}

/* boxes [batch, boxes, 4], scores [batch, classes, boxes], then optional scalars; the number of selected
   boxes is only known after running, so the kernel allocates the output. */
static mrt_status infer_nms(mrt_op_ctx *ctx)
{
    const mrt_tensor *boxes = mrt_input(ctx, 0), *scores = mrt_input(ctx, 1);
    char a[128], b[128];
    if (!boxes || !scores || !is_float(boxes->dtype) || !is_float(scores->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "boxes and scores must be floating-point tensors");
    if (boxes->rank != 3 || boxes->shape[2] != 4 || scores->rank != 3 || scores->shape[0] != boxes->shape[0] ||
        scores->shape[2] != boxes->shape[1])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "boxes %s must be [batch, boxes, 4] and scores %s [batch, classes, boxes]",
                           mrt_shape_describe(boxes->rank, boxes->shape, a, sizeof a),
                           mrt_shape_describe(scores->rank, scores->shape, b, sizeof b));
    for (int i = 2; i < 5; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        if (t && mrt_tensor_numel(t) > 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d must hold at most one value (it has %lld)", i,
                               (long long)mrt_tensor_numel(t));
    }
    int64_t cpb = mrt_attr_int(ctx, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "center_point_box %lld is not 0 or 1", (long long)cpb);
    return mrt_infer_dynamic(ctx);
}

static mrt_status infer_roi_align(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *rois = mrt_input(ctx, 1), *bi = mrt_input(ctx, 2);
    char a[128], b[128];
    if (!x || !rois || !bi || !is_float(x->dtype) || rois->dtype != x->dtype ||
        (bi->dtype != MRT_DTYPE_INT64 && bi->dtype != MRT_DTYPE_INT32))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X and rois must be one float type, batch_indices int64");
    if (x->rank != 4 || rois->rank != 2 || rois->shape[1] != 4 || bi->rank != 1 || bi->shape[0] != rois->shape[0])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "X must be [N, C, H, W], rois [num_rois, 4] (here %s) and batch_indices [num_rois] (here %s)",
                           mrt_shape_describe(rois->rank, rois->shape, a, sizeof a),
                           mrt_shape_describe(bi->rank, bi->shape, b, sizeof b));
    int64_t oh = mrt_attr_int(ctx, "output_height", 1), ow = mrt_attr_int(ctx, "output_width", 1);
    const char *mode = mrt_attr_string(ctx, "mode", "avg");
    const char *ct = mrt_attr_string(ctx, "coordinate_transformation_mode", "half_pixel");
    if (oh < 1 || ow < 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "output_height/width must be positive");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not avg or max", mode);
    if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "coordinate_transformation_mode '%s' is not half_pixel or "
                           "output_half_pixel", ct);
    if (mrt_attr_int(ctx, "sampling_ratio", 0) < 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "sampling_ratio must not be negative");
    return mrt_output_set(ctx, 0, x->dtype, 4, (int64_t[]){rois->shape[0], x->shape[1], oh, ow});
}

/* A small int64 input's values (shape-like), or dynamic when not constant yet. */
static mrt_status read_dims(mrt_op_ctx *ctx, int i, const char *name, int64_t *v, int *n)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    if (!t || t->rank != 1 || t->dtype != MRT_DTYPE_INT64 || t->shape[0] > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'%s' must be a 1-D int64 tensor of at most %d values", name,
                           MRT_MAX_RANK);
    *n = (int)t->shape[0];
    for (int k = 0; k < *n; k++) v[k] = ((const int64_t *)t->data)[k];
    return MRT_STATUS_OK;
}

static mrt_status infer_affine_grid(mrt_op_ctx *ctx)
{
    const mrt_tensor *theta = mrt_input(ctx, 0), *size = mrt_input(ctx, 1);
    char a[128];
    if (!theta || !is_float(theta->dtype)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "theta must be floating point");
    if (!size || !size->data) return mrt_infer_dynamic(ctx);
    int64_t sz[MRT_MAX_RANK];
    int n;
    MRT_TRY(read_dims(ctx, 1, "size", sz, &n));
    int r = n - 2;
    if ((r != 2 && r != 3) || theta->rank != 3 || theta->shape[0] != sz[0] || theta->shape[1] != r || theta->shape[2] != r + 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "theta %s must be [N, %d, %d] for size of %d values (N, C, spatial...)",
                           mrt_shape_describe(theta->rank, theta->shape, a, sizeof a), r, r + 1, n);
    int64_t shape[MRT_MAX_RANK] = {sz[0]};
    for (int i = 0; i < r; i++) {
        if (sz[2 + i] < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "size[%d] is negative", 2 + i);
        shape[1 + i] = sz[2 + i];
    }
    shape[1 + r] = r;
    return mrt_output_set(ctx, 0, theta->dtype, r + 2, shape);
}

static mrt_status infer_col2im(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *img = mrt_input(ctx, 1), *blk = mrt_input(ctx, 2);
    char a[128];
    if (!x || x->rank != 3) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must be [N, C * prod(block_shape), L]");
    if (!img || !img->data || !blk || !blk->data) return mrt_infer_dynamic(ctx);
    int64_t im[MRT_MAX_RANK], bl[MRT_MAX_RANK];
    int n, nb;
    MRT_TRY(read_dims(ctx, 1, "image_shape", im, &n));
    MRT_TRY(read_dims(ctx, 2, "block_shape", bl, &nb));
    if (n != nb || n < 1 || n + 2 > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "image_shape and block_shape must have the same length");
    const int64_t *dil, *pads, *str;
    int64_t nd, np, ns;
    mrt_attr_ints(ctx, "dilations", &dil, &nd);
    mrt_attr_ints(ctx, "pads", &pads, &np);
    mrt_attr_ints(ctx, "strides", &str, &ns);
    if ((nd && nd != n) || (np && np != 2 * n) || (ns && ns != n))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dilations/strides need %d values and pads %d", n, 2 * n);
    int64_t prod_b = 1, blocks = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = nd ? dil[i] : 1, s = ns ? str[i] : 1, pb = np ? pads[i] : 0, pe = np ? pads[n + i] : 0;
        if (bl[i] < 1 || d < 1 || s < 1 || pb < 0 || pe < 0 || im[i] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dim %d: block %lld, dilation %lld, stride %lld, pads %lld/%lld "
                               "must be positive (pads non-negative)", i, (long long)bl[i], (long long)d, (long long)s,
                               (long long)pb, (long long)pe);
        /* values come from data and attributes: bound them so that the products below cannot overflow */
        if (bl[i] > INT32_MAX || d > INT32_MAX || s > INT32_MAX || pb > INT32_MAX || pe > INT32_MAX || im[i] > INT32_MAX)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dim %d: image, block, dilation, stride and pads must be "
                               "below 2^31", i);
        int64_t span = d * (bl[i] - 1) + 1, cnt = (im[i] + pb + pe - span) / s + 1;
        if (im[i] + pb + pe < span || cnt < 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "dim %d: a block of %lld does not fit the padded image", i,
                               (long long)span);
        if (bl[i] > INT64_MAX / prod_b || cnt > INT64_MAX / blocks)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the block size or block count overflows");
        prod_b *= bl[i];
        blocks *= cnt;
    }
    if (x->shape[1] % prod_b || x->shape[2] != blocks)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %s must be [N, C * %lld, %lld blocks]",
                           mrt_shape_describe(x->rank, x->shape, a, sizeof a), (long long)prod_b, (long long)blocks);
    int64_t shape[MRT_MAX_RANK] = {x->shape[0], x->shape[1] / prod_b};
    for (int i = 0; i < n; i++) shape[2 + i] = im[i];
    return mrt_output_set(ctx, 0, x->dtype, n + 2, shape);
}

const mrt_opdef mrt_opdefs_vision[] = {
    {"", "AffineGrid", 20, 2, 2, 1, 1, infer_affine_grid, 0},
    {"", "Col2Im", 18, 3, 3, 1, 1, infer_col2im, 0},
    {"", "RoiAlign", 10, 3, 3, 1, 1, infer_roi_align, 0},
    {"", "RoiAlign", 16, 3, 3, 1, 1, infer_roi_align, 0},
    {"", "RoiAlign", 22, 3, 3, 1, 1, infer_roi_align, 0},
    {"", "NonMaxSuppression", 10, 2, 5, 1, 1, infer_nms, 0},
    {"", "NonMaxSuppression", 11, 2, 5, 1, 1, infer_nms, 0},
    {"", "GridSample", 16, 2, 2, 1, 1, infer_grid_sample, 0},
    {"", "GridSample", 20, 2, 2, 1, 1, infer_grid_sample, 0},
    {"", "GridSample", 22, 2, 2, 1, 1, infer_grid_sample, 0},
    {0},
};
