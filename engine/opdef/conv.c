/* Opdefs: Conv 1/11/22, ConvTranspose 1/11/22, ConvInteger 10 (N-D, groups, auto_pad, dilations), and the
 * sliding-window geometry shared with the pool family (engine/opdef/conv.h). */
#include "engine/opdef/conv.h"

#include <string.h>

#include "engine/registry.h"

typedef enum pad_mode { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } pad_mode;

static const mrt_tensor *need_input(const mrt_op_ctx *ctx, int i, const char *name, mrt_status *st)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    *st = t ? MRT_STATUS_OK
            : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, name);
    return t;
}

static const char *shp(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* An INTS attribute with exactly n values, each >= min (def for all when absent). */
static mrt_status ints_attr(const mrt_op_ctx *ctx, const char *name, int64_t n, int64_t def, int64_t min,
                            int64_t *out, bool *present)
{
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, name, MRT_ATTR_INTS, &a));
    if (present) *present = a != NULL;
    if (!a) {
        for (int64_t i = 0; i < n; i++) out[i] = def;
        return MRT_STATUS_OK;
    }
    if (a->n != n)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has %lld values, expected %lld", name,
                           (long long)a->n, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (a->ints[i] < min)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has value %lld at index %lld, must be >= %lld",
                               name, (long long)a->ints[i], (long long)i, (long long)min);
        out[i] = a->ints[i];
    }
    return MRT_STATUS_OK;
}

static mrt_status auto_pad_get(const mrt_op_ctx *ctx, pad_mode *mode)
{
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "auto_pad", MRT_ATTR_STRING, &a));
    const char *s = a ? a->s : "NOTSET";
    if (strcmp(s, "NOTSET") == 0 || s[0] == 0) *mode = PAD_NOTSET;
    else if (strcmp(s, "SAME_UPPER") == 0) *mode = PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0) *mode = PAD_SAME_LOWER;
    else if (strcmp(s, "VALID") == 0) *mode = PAD_VALID;
    else
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", s);
    return MRT_STATUS_OK;
}

/* Guard against kernel/stride/dilation values whose products would overflow int64 arithmetic below. */
#define MRT_WINDOW_LIMIT ((int64_t)1 << 31)

mrt_status mrt_window_init(const mrt_op_ctx *ctx, const mrt_tensor *x, const int64_t *kernel, unsigned flags,
                           mrt_window *w)
{
    char xs[256];
    if (x->rank < 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [N, C, D1, ...] (rank >= 3)",
                           shp(x, xs, sizeof xs));
    memset(w, 0, sizeof *w);
    int nsp = x->rank - 2;
    w->nsp = nsp;
    for (int i = 0; i < nsp; i++) {
        w->in[i] = x->shape[i + 2];
        w->kernel[i] = kernel[i];
        if (kernel[i] < 1 || kernel[i] > MRT_WINDOW_LIMIT)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "kernel size %lld in spatial dim %d is out of range",
                               (long long)kernel[i], i);
    }
    MRT_TRY(ints_attr(ctx, "strides", nsp, 1, 1, w->stride, NULL));
    if (flags & MRT_WINDOW_DILATIONS) MRT_TRY(ints_attr(ctx, "dilations", nsp, 1, 1, w->dilation, NULL));
    else
        for (int i = 0; i < nsp; i++) w->dilation[i] = 1;
    int64_t pads[2 * MRT_MAX_RANK];
    MRT_TRY(ints_attr(ctx, "pads", 2 * nsp, 0, 0, pads, NULL));
    pad_mode mode;
    MRT_TRY(auto_pad_get(ctx, &mode));
    bool ceil_mode = (flags & MRT_WINDOW_CEIL) && mrt_attr_int(ctx, "ceil_mode", 0) != 0;
    for (int i = 0; i < nsp; i++) {
        if (w->stride[i] > MRT_WINDOW_LIMIT || w->dilation[i] > MRT_WINDOW_LIMIT || pads[i] > MRT_WINDOW_LIMIT ||
            pads[i + nsp] > MRT_WINDOW_LIMIT)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "strides/dilations/pads of spatial dim %d are out of range", i);
        int64_t in = w->in[i], s = w->stride[i];
        int64_t ek = (w->kernel[i] - 1) * w->dilation[i] + 1; /* extent of the dilated window */
        int64_t out;
        if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            out = (in + s - 1) / s;
            int64_t need = (out - 1) * s + ek - in;
            if (need < 0) need = 0;
            w->pad_begin[i] = mode == PAD_SAME_UPPER ? need / 2 : need - need / 2;
            w->pad_end[i] = need - w->pad_begin[i];
        } else {
            if (mode == PAD_NOTSET) {
                w->pad_begin[i] = pads[i];
                w->pad_end[i] = pads[i + nsp];
            }
            int64_t span = in + w->pad_begin[i] + w->pad_end[i] - ek;
            if (span < 0) {
                out = 0;
            } else if (ceil_mode) {
                out = (span + s - 1) / s + 1;
                /* the last window must start inside the input or its left padding */
                if ((out - 1) * s >= in + w->pad_begin[i]) out--;
            } else {
                out = span / s + 1;
            }
        }
        if (out <= 0 && in > 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "input 'X' has shape %s: spatial dim %d (size %lld, pads %lld+%lld) is smaller than the "
                               "window (kernel %lld, dilation %lld)",
                               shp(x, xs, sizeof xs), i, (long long)in, (long long)w->pad_begin[i],
                               (long long)w->pad_end[i], (long long)w->kernel[i], (long long)w->dilation[i]);
        w->out[i] = out < 0 ? 0 : out;
    }
    return MRT_STATUS_OK;
}

static bool is_float_type(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static bool is_8bit(mrt_dtype dt) { return dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_INT8; }

/* Shared X/W checks of Conv, ConvInteger and ConvTranspose. */
static mrt_status conv_inputs(const mrt_op_ctx *ctx, bool integer, const mrt_tensor **xp, const mrt_tensor **wp)
{
    mrt_status st;
    const mrt_tensor *x = need_input(ctx, 0, "X", &st);
    if (!x) return st;
    const mrt_tensor *w = need_input(ctx, 1, "W", &st);
    if (!w) return st;
    char xs[256], ws[256];
    if (integer) {
        if (!is_8bit(x->dtype) || !is_8bit(w->dtype))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "inputs 'x' (%s) and 'w' (%s) must be uint8 or int8",
                               mrt_dtype_name(x->dtype), mrt_dtype_name(w->dtype));
    } else {
        if (!is_float_type(x->dtype))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input 'X' has dtype %s, expected a float type",
                               mrt_dtype_name(x->dtype));
        if (w->dtype != x->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'W' has dtype %s but 'X' has %s",
                               mrt_dtype_name(w->dtype), mrt_dtype_name(x->dtype));
    }
    if (x->rank < 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s, expected [N, C, D1, ...] (rank >= 3)",
                           shp(x, xs, sizeof xs));
    if (w->rank != x->rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'W' has shape %s, expected rank %d like 'X' %s",
                           shp(w, ws, sizeof ws), x->rank, shp(x, xs, sizeof xs));
    *xp = x;
    *wp = w;
    return MRT_STATUS_OK;
}

/* kernel_shape: W's spatial dims; an explicit attribute must agree with them. */
static mrt_status conv_kernel(const mrt_op_ctx *ctx, const mrt_tensor *w, int64_t *kernel)
{
    int nsp = w->rank - 2;
    bool present;
    int64_t attr[MRT_MAX_RANK];
    MRT_TRY(ints_attr(ctx, "kernel_shape", nsp, 1, 1, attr, &present));
    for (int i = 0; i < nsp; i++) {
        kernel[i] = w->shape[i + 2];
        if (present && attr[i] != kernel[i]) {
            char ws[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "attribute 'kernel_shape' value %lld (spatial dim %d) differs from input 'W' %s",
                               (long long)attr[i], i, shp(w, ws, sizeof ws));
        }
    }
    return MRT_STATUS_OK;
}

static mrt_status conv_group(const mrt_op_ctx *ctx, int64_t *group)
{
    *group = mrt_attr_int(ctx, "group", 1);
    if (*group < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'group' is %lld, must be >= 1", (long long)*group);
    return MRT_STATUS_OK;
}

/* A zero point: a scalar (or one-element tensor), or when per_channel > 0 a 1-D tensor of that length. */
static mrt_status zero_point_check(const mrt_op_ctx *ctx, int i, const char *name, mrt_dtype dt, int64_t per_channel)
{
    const mrt_tensor *z = mrt_input(ctx, i);
    if (!z) return MRT_STATUS_OK;
    char zs[256];
    if (z->dtype != dt)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s, expected %s like its data", name,
                           mrt_dtype_name(z->dtype), mrt_dtype_name(dt));
    int64_t numel = mrt_tensor_numel(z);
    if (numel == 1 && z->rank <= 1) return MRT_STATUS_OK;
    if (per_channel > 0 && z->rank == 1 && z->shape[0] == per_channel) return MRT_STATUS_OK;
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has shape %s, expected a scalar%s", name,
                       shp(z, zs, sizeof zs), per_channel > 0 ? " or one value per output channel" : "");
}

static mrt_status bias_check(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t m)
{
    const mrt_tensor *b = mrt_input(ctx, 2);
    if (!b) return MRT_STATUS_OK;
    char bs[256];
    if (b->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'B' has dtype %s but 'X' has %s",
                           mrt_dtype_name(b->dtype), mrt_dtype_name(x->dtype));
    if (b->rank != 1 || b->shape[0] != m)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'B' has shape %s, expected [%lld] (the output channels)",
                           shp(b, bs, sizeof bs), (long long)m);
    return MRT_STATUS_OK;
}

mrt_status mrt_conv_params_get(const mrt_op_ctx *ctx, mrt_conv_params *p)
{
    bool integer = strcmp(ctx->node->op_type, "ConvInteger") == 0;
    const mrt_tensor *x, *w;
    MRT_TRY(conv_inputs(ctx, integer, &x, &w));
    memset(p, 0, sizeof *p);
    MRT_TRY(conv_group(ctx, &p->group));
    char xs[256], ws[256];
    p->n = x->shape[0];
    p->c = x->shape[1];
    p->m = w->shape[0];
    if (p->c % p->group != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' %s has %lld channels, not divisible by group %lld",
                           shp(x, xs, sizeof xs), (long long)p->c, (long long)p->group);
    if (w->shape[1] != p->c / p->group)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "input 'W' has shape %s: dim 1 is %lld, but 'X' %s has %lld channels / group %lld = %lld",
                           shp(w, ws, sizeof ws), (long long)w->shape[1], shp(x, xs, sizeof xs), (long long)p->c,
                           (long long)p->group, (long long)(p->c / p->group));
    if (p->m % p->group != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'W' %s has %lld output channels, not divisible by group %lld",
                           shp(w, ws, sizeof ws), (long long)p->m, (long long)p->group);
    int64_t kernel[MRT_MAX_RANK];
    MRT_TRY(conv_kernel(ctx, w, kernel));
    if (integer) {
        MRT_TRY(zero_point_check(ctx, 2, "x_zero_point", x->dtype, 0));
        MRT_TRY(zero_point_check(ctx, 3, "w_zero_point", w->dtype, p->m));
    } else {
        MRT_TRY(bias_check(ctx, x, p->m));
    }
    MRT_TRY(mrt_window_init(ctx, x, kernel, MRT_WINDOW_DILATIONS, &p->win));
    p->kernel_numel = 1;
    for (int i = 0; i < p->win.nsp; i++) p->kernel_numel *= kernel[i];
    p->y_rank = x->rank;
    p->y_shape[0] = p->n;
    p->y_shape[1] = p->m;
    for (int i = 0; i < p->win.nsp; i++) p->y_shape[i + 2] = p->win.out[i];
    return MRT_STATUS_OK;
}

mrt_status mrt_convtranspose_params_get(const mrt_op_ctx *ctx, mrt_conv_params *p)
{
    const mrt_tensor *x, *w;
    MRT_TRY(conv_inputs(ctx, false, &x, &w));
    memset(p, 0, sizeof *p);
    MRT_TRY(conv_group(ctx, &p->group));
    char xs[256], ws[256];
    p->n = x->shape[0];
    p->c = x->shape[1];
    if (w->shape[0] != p->c)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'W' has shape %s: dim 0 is %lld, but 'X' %s has %lld channels",
                           shp(w, ws, sizeof ws), (long long)w->shape[0], shp(x, xs, sizeof xs), (long long)p->c);
    if (p->c % p->group != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' %s has %lld channels, not divisible by group %lld",
                           shp(x, xs, sizeof xs), (long long)p->c, (long long)p->group);
    p->m = w->shape[1] * p->group;
    MRT_TRY(bias_check(ctx, x, p->m));
    int nsp = x->rank - 2;
    mrt_window *win = &p->win;
    win->nsp = nsp;
    MRT_TRY(conv_kernel(ctx, w, win->kernel));
    MRT_TRY(ints_attr(ctx, "strides", nsp, 1, 1, win->stride, NULL));
    MRT_TRY(ints_attr(ctx, "dilations", nsp, 1, 1, win->dilation, NULL));
    int64_t pads[2 * MRT_MAX_RANK], out_pad[MRT_MAX_RANK];
    MRT_TRY(ints_attr(ctx, "pads", 2 * nsp, 0, 0, pads, NULL));
    MRT_TRY(ints_attr(ctx, "output_padding", nsp, 0, 0, out_pad, NULL));
    pad_mode mode;
    MRT_TRY(auto_pad_get(ctx, &mode));
    const mrt_attr *os;
    MRT_TRY(mrt_attr_get(ctx, "output_shape", MRT_ATTR_INTS, &os));
    if (os && os->n != nsp && os->n != nsp + 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'output_shape' has %lld values, expected %d",
                           (long long)os->n, nsp);
    p->kernel_numel = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[i + 2], k = win->kernel[i], s = win->stride[i], d = win->dilation[i];
        if (k < 1 || k > MRT_WINDOW_LIMIT || s > MRT_WINDOW_LIMIT || d > MRT_WINDOW_LIMIT || pads[i] > MRT_WINDOW_LIMIT ||
            pads[i + nsp] > MRT_WINDOW_LIMIT || out_pad[i] > MRT_WINDOW_LIMIT)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "kernel/strides/dilations/pads of spatial dim %d are out of range", i);
        p->kernel_numel *= k;
        int64_t ek = (k - 1) * d + 1;
        int64_t out;
        if (os || mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            out = os ? os->ints[os->n - nsp + i] : in * s;
            /* a larger requested output than the natural one grows at the end (no negative pads) */
            int64_t total = s * (in - 1) + out_pad[i] + ek - out;
            if (total < 0) total = 0;
            int64_t half = total / 2;
            win->pad_begin[i] = mode == PAD_SAME_UPPER ? half : total - half;
            win->pad_end[i] = total - win->pad_begin[i];
        } else {
            if (mode == PAD_NOTSET) {
                win->pad_begin[i] = pads[i];
                win->pad_end[i] = pads[i + nsp];
            }
            out = s * (in - 1) + out_pad[i] + ek - win->pad_begin[i] - win->pad_end[i];
        }
        if (out <= 0 && in > 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "input 'X' %s with kernel %lld, stride %lld, pads %lld+%lld gives output size %lld in spatial dim %d",
                               shp(x, xs, sizeof xs), (long long)k, (long long)s, (long long)win->pad_begin[i],
                               (long long)win->pad_end[i], (long long)out, i);
        if (out < 0) out = 0;
        /* as the forward conv of Y: Y's spatial dims are the "input", X's the "output" */
        win->in[i] = out;
        win->out[i] = in;
    }
    p->y_rank = x->rank;
    p->y_shape[0] = p->n;
    p->y_shape[1] = p->m;
    for (int i = 0; i < nsp; i++) p->y_shape[i + 2] = win->in[i];
    return MRT_STATUS_OK;
}

static mrt_status infer_conv(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    bool integer = strcmp(ctx->node->op_type, "ConvInteger") == 0;
    return mrt_output_set(ctx, 0, integer ? MRT_DTYPE_INT32 : mrt_input(ctx, 0)->dtype, p.y_rank, p.y_shape);
}

static mrt_status infer_convtranspose(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_convtranspose_params_get(ctx, &p));
    return mrt_output_set(ctx, 0, mrt_input(ctx, 0)->dtype, p.y_rank, p.y_shape);
}

const mrt_opdef mrt_opdefs_conv[] = {
    {"", "Conv", 1, 2, 3, 1, 1, infer_conv, 0},
    {"", "Conv", 11, 2, 3, 1, 1, infer_conv, 0},
    {"", "Conv", 22, 2, 3, 1, 1, infer_conv, 0},
    {"", "ConvTranspose", 1, 2, 3, 1, 1, infer_convtranspose, 0},
    {"", "ConvTranspose", 11, 2, 3, 1, 1, infer_convtranspose, 0},
    {"", "ConvTranspose", 22, 2, 3, 1, 1, infer_convtranspose, 0},
    {"", "ConvInteger", 10, 2, 4, 1, 1, infer_conv, 0},
    {0},
};
