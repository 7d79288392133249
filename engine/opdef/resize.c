/* Opdefs for Resize (10, 11, 13, 18, 19) and Upsample (7, 9): output sizes from scales or sizes, with axes and
   keep_aspect_ratio_policy (18+). The shared size computation is in resize.h so the kernel agrees exactly. */
#include "engine/opdef/resize.h"

#include <math.h>
#include <string.h>

static mrt_status read_floats(const mrt_op_ctx *ctx, const mrt_tensor *t, double *v, int64_t max, int64_t *n)
{
    *n = t ? mrt_tensor_numel(t) : 0;
    if (*n > max) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "too many scales/roi values (%lld)", (long long)*n);
    for (int64_t i = 0; i < *n; i++) v[i] = mrt_load_f64(t->dtype, t->data, i);
    return MRT_STATUS_OK;
}

mrt_status mrt_resize_plan(mrt_op_ctx *ctx, mrt_resize_geometry *g, bool *need_data)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    bool upsample = strcmp(ctx->node->op_type, "Upsample") == 0;
    *need_data = false;
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' is missing");
    int r = x->rank;
    memset(g, 0, sizeof *g);
    g->rank = r;
    for (int d = 0; d < r; d++) {
        g->scale[d] = 1;
        g->out[d] = x->shape[d];
        g->roi_start[d] = 0;
        g->roi_end[d] = 1;
    }
    /* which inputs carry what, by version */
    const mrt_tensor *roi = NULL, *scales = NULL, *sizes = NULL;
    double attr_scales[MRT_MAX_RANK];
    int64_t n_attr_scales = 0;
    if (upsample && ctx->opset < 9) {
        const float *fs;
        mrt_attr_floats(ctx, "scales", &fs, &n_attr_scales);
        if (n_attr_scales > MRT_MAX_RANK) n_attr_scales = MRT_MAX_RANK + 1;
        for (int64_t i = 0; i < n_attr_scales && i < MRT_MAX_RANK; i++) attr_scales[i] = fs[i];
    } else if (upsample || ctx->opset < 11) {
        scales = mrt_input(ctx, 1);
    } else {
        roi = mrt_input(ctx, 1);
        scales = mrt_input(ctx, 2);
        sizes = mrt_input(ctx, 3);
        if (scales && mrt_tensor_numel(scales) == 0) scales = NULL; /* an empty tensor stands for "not given" */
        if (sizes && mrt_tensor_numel(sizes) == 0) sizes = NULL;
        if (roi && mrt_tensor_numel(roi) == 0) roi = NULL;
    }
    if ((scales && !scales->data) || (sizes && !sizes->data) || (roi && !roi->data)) {
        *need_data = true;
        return MRT_STATUS_OK;
    }
    /* axes (18+): scales/sizes/roi list only these axes */
    int axes[MRT_MAX_RANK], n_axes = r;
    const int64_t *av;
    int64_t an = 0;
    if (ctx->opset >= 18 && mrt_attr_ints(ctx, "axes", &av, &an)) {
        if (an > r) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'axes' has %lld entries for rank %d", (long long)an, r);
        n_axes = (int)an;
        for (int i = 0; i < n_axes; i++) MRT_TRY(mrt_normalize_axis(ctx, "axes", av[i], r, &axes[i]));
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    double v[2 * MRT_MAX_RANK];
    int64_t n;
    if (roi) {
        MRT_TRY(read_floats(ctx, roi, v, 2 * MRT_MAX_RANK, &n));
        if (n != 2 * n_axes)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'roi' has %lld values, expected %d", (long long)n, 2 * n_axes);
        for (int i = 0; i < n_axes; i++) {
            g->roi_start[axes[i]] = v[i];
            g->roi_end[axes[i]] = v[n_axes + i];
        }
    }
    bool tf_crop = strcmp(mrt_attr_string(ctx, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize") == 0;
    if (sizes) {
        if (scales) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "give either 'scales' or 'sizes', not both");
        int64_t s[MRT_MAX_RANK];
        MRT_TRY(mrt_tensor_read_ints(ctx, "'sizes'", sizes, s, MRT_MAX_RANK, &n));
        if (n != n_axes)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'sizes' has %lld values, expected %d", (long long)n, n_axes);
        const char *policy = mrt_attr_string(ctx, "keep_aspect_ratio_policy", "stretch");
        bool stretch = ctx->opset < 18 || strcmp(policy, "stretch") == 0;
        if (!stretch && strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "keep_aspect_ratio_policy '%s' is unknown", policy);
        double common = strcmp(policy, "not_larger") == 0 ? INFINITY : 0;
        for (int i = 0; i < n_axes; i++) {
            if (s[i] < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'sizes' has a negative value");
            double sc = x->shape[axes[i]] ? (double)s[i] / (double)x->shape[axes[i]] : 1;
            common = strcmp(policy, "not_larger") == 0 ? fmin(common, sc) : fmax(common, sc);
        }
        for (int i = 0; i < n_axes; i++) {
            int a = axes[i];
            if (stretch) {
                g->out[a] = s[i];
                g->scale[a] = x->shape[a] ? (double)s[i] / (double)x->shape[a] : 1;
            } else {
                g->scale[a] = common;
                g->out[a] = mrt_f64_to_i64_sat(floor(common * (double)x->shape[a] + 0.5));
            }
        }
    } else {
        int64_t ns = n_attr_scales;
        if (scales) MRT_TRY(read_floats(ctx, scales, v, MRT_MAX_RANK, &ns));
        else
            for (int64_t i = 0; i < ns && i < MRT_MAX_RANK; i++) v[i] = attr_scales[i];
        if (!scales && !n_attr_scales)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "neither 'scales' nor 'sizes' is given");
        if (ns != n_axes)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'scales' has %lld values, expected %d", (long long)ns, n_axes);
        for (int i = 0; i < n_axes; i++) {
            int a = axes[i];
            if (!(v[i] > 0)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scale %g on axis %d must be positive", v[i], a);
            g->scale[a] = v[i];
            double len = (double)x->shape[a] * (tf_crop ? g->roi_end[a] - g->roi_start[a] : 1.0);
            g->out[a] = mrt_f64_to_i64_sat(floor(len * v[i]));
        }
    }
    return MRT_STATUS_OK;
}

mrt_resize_modes mrt_resize_modes_get(const mrt_op_ctx *ctx)
{
    bool legacy = strcmp(ctx->node->op_type, "Upsample") == 0 || ctx->opset < 11;
    mrt_resize_modes m;
    m.mode = mrt_attr_string(ctx, "mode", "nearest");
    if (strcmp(m.mode, "bilinear") == 0) m.mode = "linear"; /* Upsample-7's spelling */
    m.coord = legacy ? "asymmetric" : mrt_attr_string(ctx, "coordinate_transformation_mode", "half_pixel");
    m.nearest_mode = legacy ? "floor" : mrt_attr_string(ctx, "nearest_mode", "round_prefer_floor");
    m.antialias = ctx->opset >= 18 && mrt_attr_int(ctx, "antialias", 0) != 0;
    return m;
}

int mrt_resize_taps(const mrt_resize_modes *m, int64_t in, int64_t out, double scale)
{
    bool cubic = strcmp(m->mode, "cubic") == 0;
    int n = strcmp(m->mode, "nearest") == 0 ? 1 : cubic ? 4 : 2;
    if (in == out && scale == 1.0 && strcmp(m->coord, "tf_crop_and_resize") != 0) return 1; /* exact copy */
    if (!(m->antialias && n > 1 && scale < 1.0)) return n;
    /* antialias when downsampling: taps 1 - n/2 .. n/2 around the sample, the kernel stretched by 1/scale */
    double lo = floor((cubic ? -2.0 : -1.0) / scale) + 1;
    if (!(lo > -2048)) return -1;
    return (int)(2 - 2 * (int64_t)lo);
}

bool mrt_resize_table_bytes(mrt_op_ctx *ctx, const mrt_tensor *x, const mrt_resize_geometry *g, int64_t *counts)
{
    mrt_resize_modes m = mrt_resize_modes_get(ctx);
    for (int d = 0; d < x->rank; d++) {
        int taps = mrt_resize_taps(&m, x->shape[d], g->out[d], g->scale[d]);
        if (taps < 0) {
            mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "antialias footprint of scale %g is too wide", g->scale[d]);
            return false;
        }
        if (g->out[d] > INT64_MAX / 8 / taps) {
            mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the interpolation table of axis %d is too large", d);
            return false;
        }
        counts[3 * d] = counts[3 * d + 1] = g->out[d] * taps * 8;
        counts[3 * d + 2] = g->out[d];
    }
    return true;
}

static mrt_status infer_resize(mrt_op_ctx *ctx)
{
    mrt_resize_geometry g;
    bool need;
    MRT_TRY(mrt_resize_plan(ctx, &g, &need));
    if (need) return mrt_infer_dynamic(ctx);
    const mrt_tensor *x = mrt_input(ctx, 0);
    const char *mode = mrt_attr_string(ctx, "mode", "nearest");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic") && strcmp(mode, "bilinear"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not nearest, linear or cubic", mode);
    MRT_TRY(mrt_output_set(ctx, 0, x->dtype, x->rank, g.out)); /* checks that the output size fits */
    /* the kernels' tables must be sizable: an antialias footprint too wide fails here, naming the scale */
    int64_t counts[3 * MRT_MAX_RANK];
    return mrt_resize_table_bytes(ctx, x, &g, counts) ? MRT_STATUS_OK : MRT_STATUS_INVALID_ARG;
}

const mrt_opdef mrt_opdefs_resize[] = {
    {"", "Upsample", 7, 1, 1, 1, 1, infer_resize, 0},
    {"", "Upsample", 9, 2, 2, 1, 1, infer_resize, 0},
    {"", "Resize", 10, 2, 2, 1, 1, infer_resize, 0},
    {"", "Resize", 11, 1, 4, 1, 1, infer_resize, 0},
    {"", "Resize", 13, 1, 4, 1, 1, infer_resize, 0},
    {"", "Resize", 18, 1, 4, 1, 1, infer_resize, 0},
    {"", "Resize", 19, 1, 4, 1, 1, infer_resize, 0},
    {0},
};

/* ---- the per-axis tables both devices' kernels sum over (built on the host) */

static double cubic_weight(double t, double a)
{
    t = fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
}

/* The spec's "length_resized" is scale * input length, not rounded (the integer size only for tf_crop_and_resize
   and half_pixel_symmetric's adjustment). */
static double source_coord(const char *mode, double o, double scale, int64_t in, int64_t out, double start, double end,
                           bool *outside)
{
    double len_resized = scale * (double)in;
    *outside = false;
    if (strcmp(mode, "half_pixel") == 0) return (o + 0.5) / scale - 0.5;
    if (strcmp(mode, "pytorch_half_pixel") == 0) return len_resized > 1 ? (o + 0.5) / scale - 0.5 : 0;
    if (strcmp(mode, "align_corners") == 0) return len_resized == 1 ? 0 : o * (double)(in - 1) / (len_resized - 1);
    if (strcmp(mode, "asymmetric") == 0) return o / scale;
    if (strcmp(mode, "half_pixel_symmetric") == 0) {
        double adjustment = (double)out / len_resized, center = (double)in / 2;
        return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
    }
    /* tf_crop_and_resize */
    double x = out > 1 ? start * (double)(in - 1) + o * (end - start) * (double)(in - 1) / (double)(out - 1)
                       : 0.5 * (start + end) * (double)(in - 1);
    *outside = x < 0 || x > (double)(in - 1);
    return x;
}

static int64_t clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

void mrt_resize_build_axis(const mrt_op_ctx *ctx, mrt_resize_axis *t, int64_t in, int64_t out, double scale, double start,
                       double end, const mrt_resize_modes *m)
{
    bool cubic = strcmp(m->mode, "cubic") == 0;
    bool identity = in == out && scale == 1.0 && strcmp(m->coord, "tf_crop_and_resize") != 0;
    t->n = mrt_resize_taps(m, in, out, scale);
    bool antialias = !identity && m->antialias && strcmp(m->mode, "nearest") != 0 && scale < 1.0;
    int64_t i_start = antialias ? 1 - t->n / 2 : 0; /* antialias: taps i_start .. 1 - i_start */
    const char *coord = m->coord, *nearest_mode = m->nearest_mode;
    memset(t->out_of_range, 0, (size_t)out);
    double a = mrt_attr_float(ctx, "cubic_coeff_a", -0.75f);
    bool exclude = mrt_attr_int(ctx, "exclude_outside", 0) != 0;
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = &t->idx[o * t->n];
        double *w = &t->w[o * t->n];
        if (identity) {
            ix[0] = o;
            w[0] = 1;
            continue;
        }
        bool outside;
        double x = source_coord(coord, (double)o, scale, in, out, start, end, &outside);
        t->out_of_range[o] = outside;
        if (t->n == 1) {
            double f = floor(x), frac = x - f;
            int64_t i;
            if (strcmp(nearest_mode, "floor") == 0) i = mrt_f64_to_i64_sat(f);
            else if (strcmp(nearest_mode, "ceil") == 0) i = mrt_f64_to_i64_sat(ceil(x));
            else if (strcmp(nearest_mode, "round_prefer_ceil") == 0) i = frac == 0.5 ? mrt_f64_to_i64_sat(f + 1) : mrt_f64_to_i64_sat(floor(x + 0.5));
            else i = frac == 0.5 ? mrt_f64_to_i64_sat(f) : mrt_f64_to_i64_sat(floor(x + 0.5)); /* round_prefer_floor */
            ix[0] = clamp_index(i, in);
            w[0] = 1;
        } else if (antialias) {
            double f = floor(x), r = x - f, sum = 0;
            if (r == 0) f -= 1, r = 1; /* an exact sample prefers the pixel on its left (the reference's rule) */
            for (int k = 0; k < t->n; k++) {
                double arg = ((double)(i_start + k) - r) * scale;
                w[k] = cubic ? cubic_weight(arg, a) : fmax(0.0, 1.0 - fabs(arg));
                sum += w[k];
            }
            double sum2 = 0;
            for (int k = 0; k < t->n; k++) {
                int64_t i = mrt_f64_to_i64_sat(f + (double)(i_start + k));
                if (sum != 0) w[k] /= sum;
                if (exclude && (i < 0 || i >= in)) w[k] = 0;
                sum2 += w[k];
                ix[k] = clamp_index(i, in);
            }
            if (exclude && sum2 != 0)
                for (int k = 0; k < t->n; k++) w[k] /= sum2;
        } else if (t->n == 2) {
            double f = floor(x), frac = x - f;
            ix[0] = clamp_index(mrt_f64_to_i64_sat(f), in);
            ix[1] = clamp_index(mrt_f64_to_i64_sat(f + 1), in);
            w[0] = 1 - frac;
            w[1] = frac;
        } else {
            double f = floor(x), frac = x - f, sum = 0;
            for (int k = 0; k < 4; k++) {
                int64_t i = mrt_f64_to_i64_sat(f - 1 + k);
                w[k] = cubic_weight(frac - (k - 1), a);
                if (exclude && (i < 0 || i >= in)) w[k] = 0;
                ix[k] = clamp_index(i, in);
                sum += w[k];
            }
            if (exclude && sum != 0)
                for (int k = 0; k < 4; k++) w[k] /= sum;
        }
    }
}
