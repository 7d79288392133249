/* Opdefs: DeformConv 19/22 (2-D only), mmcv::/mmdeploy:: MMCVModulatedDeformConv2d and MMCVDeformConv2d,
 * custom::/torchvision:: deform_conv2d (since_version 1); float, double, float16, bfloat16. */
#include "engine/opdef/deform_conv.h"

#include <stdio.h>
#include <string.h>

#include "engine/registry.h"

/* Attribute values and kernel sizes above this are refused, so that the products of two of them (and
   twice that) cannot overflow int64. */
#define DC_ATTR_MAX (((int64_t)1 << 31) - 1)

typedef enum dc_frontend { FE_ONNX, FE_MMCV_MODULATED, FE_MMCV, FE_TORCHVISION } dc_frontend;

typedef struct dc_frontend_desc {
    int pos[MRT_DC_NROLES];            /* node input index of each role, -1 when the front-end has none */
    const char *name[MRT_DC_NROLES];   /* operand names as the front-end documents them */
    const char *signature;
} dc_frontend_desc;

static const dc_frontend_desc frontends[] = {
    [FE_ONNX] = {{0, 1, 2, 4, 3}, {"X", "W", "offset", "mask", "B"}, "(X, W, offset, B, mask)"},
    [FE_MMCV_MODULATED] = {{0, 3, 1, 2, 4},
                           {"input", "weight", "offset", "mask", "bias"},
                           "(input, offset, mask, weight, bias)"},
    [FE_MMCV] = {{0, 2, 1, -1, -1}, {"input", "weight", "offset", "mask", "bias"}, "(input, offset, weight)"},
    [FE_TORCHVISION] = {{0, 1, 2, 3, 4},
                        {"input", "weight", "offset", "mask", "bias"},
                        "(input, weight, offset, mask, bias)"},
};

static dc_frontend frontend_of(const mrt_node *node)
{
    if (strcmp(node->op_type, "MMCVModulatedDeformConv2d") == 0) return FE_MMCV_MODULATED;
    if (strcmp(node->op_type, "MMCVDeformConv2d") == 0) return FE_MMCV;
    if (strcmp(node->op_type, "deform_conv2d") == 0) return FE_TORCHVISION;
    return FE_ONNX;
}

/* ------------------------------------------------------------------ attributes */

typedef struct dc_attrs {
    int64_t stride[2], dilation[2], pad_begin[2], pad_end[2];
    int64_t group, offset_group; /* 0: derived from the operand shapes (torchvision's Python front) */
    bool has_kernel;
    int64_t kernel[2];
    int use_mask;                /* -1: decided by the mask operand's presence */
} dc_attrs;

/* An int or ints attribute into vals (at most max); *n = -1 when absent. */
static mrt_status read_ints(const mrt_op_ctx *ctx, const char *name, int64_t *vals, int max, int *n)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *n = -1;
    if (!a) return MRT_STATUS_OK;
    if (a->type == MRT_ATTR_INT) {
        vals[0] = a->i;
        *n = 1;
        return MRT_STATUS_OK;
    }
    if (a->type != MRT_ATTR_INTS)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has type %s, expected ints", name,
                           mrt_attr_type_name(a->type));
    if (a->n > max)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has %lld values, expected at most %d",
                           name, (long long)a->n, max);
    for (int64_t i = 0; i < a->n; i++) vals[i] = a->ints[i];
    *n = (int)a->n;
    return MRT_STATUS_OK;
}

/* A scalar int attribute; *present false when absent. */
static mrt_status read_int(const mrt_op_ctx *ctx, const char *name, int64_t *v, bool *present)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *present = false;
    if (!a) return MRT_STATUS_OK;
    if (a->type == MRT_ATTR_INTS && a->n == 1) {
        *v = a->ints[0];
    } else if (a->type == MRT_ATTR_INT) {
        *v = a->i;
    } else {
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has type %s, expected int", name,
                           mrt_attr_type_name(a->type));
    }
    *present = true;
    return MRT_STATUS_OK;
}

static mrt_status check_range(const mrt_op_ctx *ctx, const char *name, const int64_t *v, int n, int64_t lo)
{
    for (int i = 0; i < n; i++)
        if (v[i] < lo || v[i] > DC_ATTR_MAX)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has value %lld, expected %s", name,
                               (long long)v[i], lo > 0 ? "a positive integer" : "a non-negative integer");
    return MRT_STATUS_OK;
}

/* A pair attribute given as a list `list` (1 or 2 values, or 4 when allow4: [top, left, bottom, right]) or
   as the scalars h_name/w_name (torchvision's spelling). Fills begin (and end when given). */
static mrt_status read_pair(const mrt_op_ctx *ctx, const char *list, const char *h_name, const char *w_name,
                            bool allow4, int64_t def, int64_t lo, int64_t *begin, int64_t *end)
{
    int64_t v[4];
    int n;
    MRT_TRY(read_ints(ctx, list, v, 4, &n));
    begin[0] = begin[1] = def;
    if (n >= 0) {
        if (n == 0 || n == 3 || (n == 4 && !allow4))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has %d values, expected %s", list, n,
                               allow4 ? "1, 2 or 4" : "1 or 2");
        MRT_TRY(check_range(ctx, list, v, n, lo));
        begin[0] = v[0];
        begin[1] = n == 1 ? v[0] : v[1];
        if (end) {
            end[0] = n == 4 ? v[2] : begin[0];
            end[1] = n == 4 ? v[3] : begin[1];
        }
        return MRT_STATUS_OK;
    }
    if (h_name) {
        bool ph, pw;
        MRT_TRY(read_int(ctx, h_name, &begin[0], &ph));
        MRT_TRY(read_int(ctx, w_name, &begin[1], &pw));
        if (!ph) begin[0] = def;
        if (!pw) begin[1] = def;
        MRT_TRY(check_range(ctx, h_name, &begin[0], 1, lo));
        MRT_TRY(check_range(ctx, w_name, &begin[1], 1, lo));
    }
    if (end) {
        end[0] = begin[0];
        end[1] = begin[1];
    }
    return MRT_STATUS_OK;
}

/* The first present of several scalar spellings; *v = def when none. */
static mrt_status read_int_any(const mrt_op_ctx *ctx, const char *const *names, int64_t def, int64_t lo, int64_t *v)
{
    *v = def;
    for (int i = 0; names[i]; i++) {
        bool present;
        int64_t x;
        MRT_TRY(read_int(ctx, names[i], &x, &present));
        if (present) {
            MRT_TRY(check_range(ctx, names[i], &x, 1, lo));
            *v = x;
            return MRT_STATUS_OK;
        }
    }
    return MRT_STATUS_OK;
}

static mrt_status parse_onnx_attrs(const mrt_op_ctx *ctx, dc_attrs *a)
{
    int64_t v[4];
    int n;
    MRT_TRY(read_ints(ctx, "strides", v, 4, &n));
    if (n >= 0 && n != 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'strides' has %d values, expected 2", n);
    if (n == 2) MRT_TRY(check_range(ctx, "strides", v, 2, 1));
    a->stride[0] = n == 2 ? v[0] : 1;
    a->stride[1] = n == 2 ? v[1] : 1;
    MRT_TRY(read_ints(ctx, "dilations", v, 4, &n));
    if (n >= 0 && n != 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'dilations' has %d values, expected 2", n);
    if (n == 2) MRT_TRY(check_range(ctx, "dilations", v, 2, 1));
    a->dilation[0] = n == 2 ? v[0] : 1;
    a->dilation[1] = n == 2 ? v[1] : 1;
    MRT_TRY(read_ints(ctx, "pads", v, 4, &n));
    if (n >= 0 && n != 4)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'pads' has %d values, expected 4 [top, left, bottom, right]", n);
    if (n == 4) MRT_TRY(check_range(ctx, "pads", v, 4, 0));
    for (int i = 0; i < 2; i++) {
        a->pad_begin[i] = n == 4 ? v[i] : 0;
        a->pad_end[i] = n == 4 ? v[2 + i] : 0;
    }
    MRT_TRY(read_ints(ctx, "kernel_shape", v, 4, &n));
    if (n >= 0 && n != 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'kernel_shape' has %d values, expected 2", n);
    a->has_kernel = n == 2;
    a->kernel[0] = n == 2 ? v[0] : 0;
    a->kernel[1] = n == 2 ? v[1] : 0;
    MRT_TRY(read_int_any(ctx, (const char *const[]){"group", NULL}, 1, 1, &a->group));
    MRT_TRY(read_int_any(ctx, (const char *const[]){"offset_group", NULL}, 1, 1, &a->offset_group));
    return MRT_STATUS_OK;
}

static mrt_status parse_attrs(const mrt_op_ctx *ctx, dc_frontend fe, dc_attrs *a)
{
    memset(a, 0, sizeof *a);
    a->use_mask = -1;
    if (fe == FE_ONNX) return parse_onnx_attrs(ctx, a);
    bool tv = fe == FE_TORCHVISION;
    MRT_TRY(read_pair(ctx, "stride", tv ? "stride_h" : NULL, "stride_w", false, 1, 1, a->stride, NULL));
    MRT_TRY(read_pair(ctx, "dilation", tv ? "dil_h" : NULL, "dil_w", false, 1, 1, a->dilation, NULL));
    MRT_TRY(read_pair(ctx, "padding", tv ? "pad_h" : NULL, "pad_w", !tv, 0, 0, a->pad_begin, a->pad_end));
    if (tv) {
        MRT_TRY(read_int_any(ctx, (const char *const[]){"groups", "n_weight_grps", NULL}, 0, 1, &a->group));
        MRT_TRY(read_int_any(ctx, (const char *const[]){"offset_groups", "n_offset_grps", NULL}, 0, 1,
                             &a->offset_group));
        int64_t um;
        MRT_TRY(read_int_any(ctx, (const char *const[]){"use_mask", NULL}, -1, 0, &um));
        if (um > 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'use_mask' is %lld, expected 0 or 1",
                               (long long)um);
        a->use_mask = (int)um;
    } else {
        /* mmcv's older exports spell the offset groups `deformable_groups`; im2col_step is a CUDA detail */
        MRT_TRY(read_int_any(ctx, (const char *const[]){"groups", NULL}, 1, 1, &a->group));
        MRT_TRY(read_int_any(ctx, (const char *const[]){"deform_groups", "deformable_groups", NULL}, 1, 1,
                             &a->offset_group));
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ shapes */

static bool float_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

#define DC_WHY(...) (snprintf(why, why_len, __VA_ARGS__), MRT_STATUS_INVALID_MODEL)

/* Checks the operand shapes (t[role], NULL when absent) against the attributes and fills the geometry of
   p. Pure: the swap detection calls it again with operands exchanged. */
static mrt_status derive(const dc_frontend_desc *fd, const dc_attrs *a, const mrt_tensor *const *t,
                         mrt_deform_conv_params *p, char *why, size_t why_len)
{
    const mrt_tensor *x = t[MRT_DC_X], *w = t[MRT_DC_W], *off = t[MRT_DC_OFFSET], *mask = t[MRT_DC_MASK],
                     *bias = t[MRT_DC_BIAS];
    const char *const *nm = fd->name;
    char s[3][160];
    if (x->rank != 4)
        return DC_WHY("input '%s' has shape %s, expected rank 4 [N, C, H, W]", nm[MRT_DC_X],
                      mrt_shape_describe(x->rank, x->shape, s[0], sizeof s[0]));
    if (w->rank != 4)
        return DC_WHY("input '%s' has shape %s, expected rank 4 [out_channels, in_channels/group, kh, kw]",
                      nm[MRT_DC_W], mrt_shape_describe(w->rank, w->shape, s[0], sizeof s[0]));
    if (off->rank != 4)
        return DC_WHY("input '%s' has shape %s, expected rank 4 [N, 2*offset_groups*kh*kw, out_h, out_w]",
                      nm[MRT_DC_OFFSET], mrt_shape_describe(off->rank, off->shape, s[0], sizeof s[0]));
    if (mask && mask->rank != 4)
        return DC_WHY("input '%s' has shape %s, expected rank 4 [N, offset_groups*kh*kw, out_h, out_w]",
                      nm[MRT_DC_MASK], mrt_shape_describe(mask->rank, mask->shape, s[0], sizeof s[0]));
    mrt_shape_describe(x->rank, x->shape, s[0], sizeof s[0]);
    mrt_shape_describe(w->rank, w->shape, s[1], sizeof s[1]);
    mrt_shape_describe(off->rank, off->shape, s[2], sizeof s[2]);
    p->n = x->shape[0];
    p->c = x->shape[1];
    p->h = x->shape[2];
    p->w = x->shape[3];
    p->oc = w->shape[0];
    p->kh = w->shape[2];
    p->kw = w->shape[3];
    for (int i = 0; i < 2; i++) {
        p->stride[i] = a->stride[i];
        p->dilation[i] = a->dilation[i];
        p->pad_begin[i] = a->pad_begin[i];
        p->pad_end[i] = a->pad_end[i];
    }
    if (p->kh < 1 || p->kw < 1) return DC_WHY("input '%s' has shape %s: the kernel is empty", nm[MRT_DC_W], s[1]);
    if (p->kh > DC_ATTR_MAX / p->kw)
        return DC_WHY("input '%s' has shape %s: the kernel is too large", nm[MRT_DC_W], s[1]);
    if (a->has_kernel && (a->kernel[0] != p->kh || a->kernel[1] != p->kw))
        return DC_WHY("attribute 'kernel_shape' [%lld,%lld] does not match input '%s' of shape %s",
                      (long long)a->kernel[0], (long long)a->kernel[1], nm[MRT_DC_W], s[1]);
    int64_t kk = p->kh * p->kw;

    p->group = a->group;
    if (!p->group) p->group = w->shape[1] > 0 && p->c % w->shape[1] == 0 && p->c > 0 ? p->c / w->shape[1] : 1;
    if (p->c % p->group)
        return DC_WHY("input '%s' has %lld channels, which group=%lld does not divide", nm[MRT_DC_X],
                      (long long)p->c, (long long)p->group);
    if (w->shape[1] * p->group != p->c)
        return DC_WHY("input '%s' has shape %s: %lld input channels per group, but input '%s' %s has %lld channels "
                      "and group=%lld, so %lld were expected",
                      nm[MRT_DC_W], s[1], (long long)w->shape[1], nm[MRT_DC_X], s[0], (long long)p->c,
                      (long long)p->group, (long long)(p->c / p->group));
    if (p->oc % p->group)
        return DC_WHY("input '%s' has shape %s: %lld output channels, which group=%lld does not divide",
                      nm[MRT_DC_W], s[1], (long long)p->oc, (long long)p->group);

    p->offset_group = a->offset_group;
    if (!p->offset_group)
        p->offset_group = off->shape[1] > 0 && off->shape[1] % (2 * kk) == 0 ? off->shape[1] / (2 * kk) : 1;
    int64_t og = p->offset_group;
    if (p->c % og)
        return DC_WHY("input '%s' has %lld channels, which offset_group=%lld does not divide", nm[MRT_DC_X],
                      (long long)p->c, (long long)og);
    if (off->shape[1] != 2 * og * kk)
        return DC_WHY("input '%s' has shape %s: %lld channels, expected 2*offset_group*kh*kw = 2*%lld*%lld*%lld = "
                      "%lld",
                      nm[MRT_DC_OFFSET], s[2], (long long)off->shape[1], (long long)og, (long long)p->kh,
                      (long long)p->kw, (long long)(2 * og * kk));

    int64_t ext[2], span[2], out[2];
    for (int i = 0; i < 2; i++) {
        ext[i] = p->dilation[i] * ((i ? p->kw : p->kh) - 1) + 1;
        span[i] = x->shape[2 + i] + p->pad_begin[i] + p->pad_end[i];
        out[i] = span[i] >= ext[i] ? (span[i] - ext[i]) / p->stride[i] + 1 : 0;
    }
    if (out[0] < 1 || out[1] < 1)
        return DC_WHY("the output would be empty: the dilated kernel covers %lldx%lld but input '%s' %s padded to "
                      "%lldx%lld is smaller",
                      (long long)ext[0], (long long)ext[1], nm[MRT_DC_X], s[0], (long long)span[0], (long long)span[1]);
    p->oh = out[0];
    p->ow = out[1];
    if (off->shape[0] != p->n || off->shape[2] != p->oh || off->shape[3] != p->ow)
        return DC_WHY("input '%s' has shape %s, expected [%lld,%lld,%lld,%lld] (batch of '%s', output size)",
                      nm[MRT_DC_OFFSET], s[2], (long long)p->n, (long long)off->shape[1], (long long)p->oh,
                      (long long)p->ow, nm[MRT_DC_X]);
    if (mask && (mask->shape[0] != p->n || mask->shape[1] != og * kk || mask->shape[2] != p->oh ||
                 mask->shape[3] != p->ow)) {
        char sm[160];
        return DC_WHY("input '%s' has shape %s, expected [%lld,%lld,%lld,%lld] (batch of '%s', offset_group*kh*kw "
                      "= %lld*%lld*%lld channels, output size)",
                      nm[MRT_DC_MASK], mrt_shape_describe(mask->rank, mask->shape, sm, sizeof sm), (long long)p->n,
                      (long long)(og * kk), (long long)p->oh, (long long)p->ow, nm[MRT_DC_X], (long long)og,
                      (long long)p->kh, (long long)p->kw);
    }
    if (bias && (bias->rank != 1 || bias->shape[0] != p->oc)) {
        char sb[160];
        return DC_WHY("input '%s' has shape %s, expected [%lld] (the output channels of '%s')", nm[MRT_DC_BIAS],
                      mrt_shape_describe(bias->rank, bias->shape, sb, sizeof sb), (long long)p->oc, nm[MRT_DC_W]);
    }
    return MRT_STATUS_OK;
}

/* When the shapes fail as given, look for two operands that would fit each other's role. */
static void swap_hint(const dc_frontend_desc *fd, const dc_attrs *a, const mrt_tensor *const *t, char *hint,
                      size_t len)
{
    static const int candidates[] = {MRT_DC_X, MRT_DC_W, MRT_DC_OFFSET, MRT_DC_MASK};
    hint[0] = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = i + 1; j < 4; j++) {
            int ri = candidates[i], rj = candidates[j];
            if (!t[ri] || !t[rj]) continue;
            const mrt_tensor *u[MRT_DC_NROLES];
            memcpy(u, t, sizeof u);
            u[ri] = t[rj];
            u[rj] = t[ri];
            mrt_deform_conv_params q;
            char scratch[512];
            if (derive(fd, a, u, &q, scratch, sizeof scratch) != MRT_STATUS_OK) continue;
            char si[160], sj[160];
            snprintf(hint, len,
                     "; operands look swapped: input '%s' (input %d, %s) and input '%s' (input %d, %s) would fit "
                     "each other's role; the operand order is %s",
                     fd->name[ri], fd->pos[ri], mrt_shape_describe(t[ri]->rank, t[ri]->shape, si, sizeof si),
                     fd->name[rj], fd->pos[rj], mrt_shape_describe(t[rj]->rank, t[rj]->shape, sj, sizeof sj),
                     fd->signature);
            return;
        }
    }
}

static mrt_status refuse_weightless(const mrt_op_ctx *ctx)
{
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                       "the node has %d operand(s) but deform_conv2d needs (input, weight, offset[, mask, bias]): "
                       "a node with only (input, offset), as a popular tutorial's export symbolic emits, lost its "
                       "weights at export and cannot be computed. Re-export with a symbolic that passes every "
                       "operand: g.op(\"%s::deform_conv2d\", input, weight, offset, mask, bias, stride_i=[sh, sw], "
                       "padding_i=[ph, pw], dilation_i=[dh, dw], groups_i=groups, offset_groups_i=offset_groups, "
                       "use_mask_i=1)",
                       ctx->n_inputs, ctx->node->domain[0] ? ctx->node->domain : "custom");
}

mrt_status mrt_deform_conv_params_get(const mrt_op_ctx *ctx, mrt_deform_conv_params *p)
{
    dc_frontend fe = frontend_of(ctx->node);
    const dc_frontend_desc *fd = &frontends[fe];
    memset(p, 0, sizeof *p);
    const mrt_tensor *t[MRT_DC_NROLES];
    for (int r = 0; r < MRT_DC_NROLES; r++) {
        p->input[r] = fd->pos[r] >= 0 && mrt_input(ctx, fd->pos[r]) ? fd->pos[r] : -1;
        t[r] = p->input[r] >= 0 ? mrt_input(ctx, p->input[r]) : NULL;
    }
    if (fe == FE_TORCHVISION && (!t[MRT_DC_W] || !t[MRT_DC_OFFSET])) return refuse_weightless(ctx);
    for (int r = MRT_DC_X; r <= MRT_DC_OFFSET; r++)
        if (!t[r])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing; the operand order is %s",
                               fd->pos[r], fd->name[r], fd->signature);
    if (fe == FE_MMCV_MODULATED && !t[MRT_DC_MASK])
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 2 ('mask') is missing; the operand order is %s",
                           fd->signature);

    dc_attrs a;
    MRT_TRY(parse_attrs(ctx, fe, &a));
    if (a.use_mask == 0) {
        /* torchvision passes a zero placeholder mask when it has none */
        p->input[MRT_DC_MASK] = -1;
        t[MRT_DC_MASK] = NULL;
    } else if (a.use_mask == 1 && !t[MRT_DC_MASK]) {
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "use_mask=1 but input 3 ('mask') is absent");
    }

    p->dtype = t[MRT_DC_X]->dtype;
    if (!float_dtype(p->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input '%s' has dtype %s; deformable convolution "
                           "supports float, double, float16 and bfloat16", fd->name[MRT_DC_X], mrt_dtype_name(p->dtype));
    for (int r = MRT_DC_W; r < MRT_DC_NROLES; r++)
        if (t[r] && t[r]->dtype != p->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s but input '%s' has %s",
                               fd->name[r], mrt_dtype_name(t[r]->dtype), fd->name[MRT_DC_X], mrt_dtype_name(p->dtype));

    if (fe == FE_ONNX && t[MRT_DC_X]->rank != 4 && t[MRT_DC_X]->rank >= 3 && t[MRT_DC_W]->rank == t[MRT_DC_X]->rank)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "only 2-D DeformConv is implemented; input 'X' has %d spatial dims", t[MRT_DC_X]->rank - 2);

    char why[1024], hint[768];
    mrt_status st = derive(fd, &a, t, p, why, sizeof why);
    if (st == MRT_STATUS_OK) return MRT_STATUS_OK;
    swap_hint(fd, &a, t, hint, sizeof hint);
    return mrt_op_fail(ctx, st, "%s%s", why, hint);
}

static mrt_status infer_deform_conv(mrt_op_ctx *ctx)
{
    mrt_deform_conv_params p;
    MRT_TRY(mrt_deform_conv_params_get(ctx, &p));
    return mrt_output_set(ctx, 0, p.dtype, 4, (const int64_t[]){p.n, p.oc, p.oh, p.ow});
}

const mrt_opdef mrt_opdefs_deform_conv[] = {
    {"", "DeformConv", 19, 3, 5, 1, 1, infer_deform_conv, 0},
    {"", "DeformConv", 22, 3, 5, 1, 1, infer_deform_conv, 0},
    {"mmcv", "MMCVModulatedDeformConv2d", 1, 4, 5, 1, 1, infer_deform_conv, 0},
    {"mmdeploy", "MMCVModulatedDeformConv2d", 1, 4, 5, 1, 1, infer_deform_conv, 0},
    {"mmcv", "MMCVDeformConv2d", 1, 3, 3, 1, 1, infer_deform_conv, 0},
    {"mmdeploy", "MMCVDeformConv2d", 1, 3, 3, 1, 1, infer_deform_conv, 0},
    /* min 1 input so that weightless exports reach the explanation in refuse_weightless() */
    {"custom", "deform_conv2d", 1, 1, 5, 1, 1, infer_deform_conv, 0},
    {"torchvision", "deform_conv2d", 1, 1, 5, 1, 1, infer_deform_conv, 0},
    {0},
};
