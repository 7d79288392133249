/* Opdefs of Transpose 1-25, Concat 1-13, Split 1-18, Slice 1-13, Tile 1-13, Pad 1-25 (constant/reflect/edge/wrap,
 * negative pads crop), DepthToSpace 1-28, SpaceToDepth 1-28, Trilu 14, ReverseSequence 10/28. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"

static mrt_status input_tensor(mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor **out)
{
    *out = mrt_input(ctx, i);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') must be a tensor", i, name);
    return MRT_STATUS_OK;
}

static const char *shape_str(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* Integer list from an attribute (attr != NULL) or an input tensor (data needed). *n = -1 when absent. */
static mrt_status read_list(mrt_op_ctx *ctx, const char *attr, int input, const char *what, int64_t *vals,
                            int64_t n_max, int64_t *n, bool *need_data)
{
    *n = -1;
    if (attr) {
        const int64_t *v;
        int64_t cnt;
        if (!mrt_attr_ints(ctx, attr, &v, &cnt)) return MRT_STATUS_OK;
        if (cnt > n_max)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has %lld values, at most %lld allowed",
                               attr, (long long)cnt, (long long)n_max);
        if (cnt) memcpy(vals, v, (size_t)cnt * sizeof *vals);
        *n = cnt;
        return MRT_STATUS_OK;
    }
    const mrt_tensor *t = mrt_input(ctx, input);
    if (!t) return MRT_STATUS_OK;
    if (!t->data) {
        *need_data = true;
        return MRT_STATUS_OK;
    }
    return mrt_tensor_read_ints(ctx, what, t, vals, n_max, n);
}

/* ------------------------------------------------------------------ Transpose */

static mrt_status transpose_perm(mrt_op_ctx *ctx, int rank, int *perm)
{
    const int64_t *p;
    int64_t n;
    if (!mrt_attr_ints(ctx, "perm", &p, &n)) {
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return MRT_STATUS_OK;
    }
    if (n != rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'perm' has %lld values for an input of rank %d",
                           (long long)n, rank);
    bool seen[MRT_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        int a;
        MRT_TRY(mrt_normalize_axis(ctx, "perm value", p[i], rank, &a));
        if (seen[a]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'perm' lists axis %d twice", a);
        seen[a] = true;
        perm[i] = a;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_transpose(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int perm[MRT_MAX_RANK];
    MRT_TRY(transpose_perm(ctx, x->rank, perm));
    int64_t out[MRT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) out[i] = x->shape[perm[i]];
    return mrt_output_set(ctx, 0, x->dtype, x->rank, out);
}

/* ------------------------------------------------------------------ Concat */

static mrt_status infer_concat(mrt_op_ctx *ctx)
{
    if (ctx->n_inputs < 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "needs at least one input");
    const mrt_tensor *x0;
    MRT_TRY(input_tensor(ctx, 0, "inputs[0]", &x0));
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "axis", MRT_ATTR_INT, &a));
    if (!a && ctx->opset >= 4) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'axis' is required");
    if (x0->rank == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cannot concatenate scalars (rank 0)");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", a ? a->i : 1, x0->rank, &axis));
    int64_t out[MRT_MAX_RANK];
    memcpy(out, x0->shape, (size_t)x0->rank * sizeof *out);
    out[axis] = 0;
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *x;
        char name[32], s0[256], si[256];
        snprintf(name, sizeof name, "inputs[%d]", i);
        MRT_TRY(input_tensor(ctx, i, name, &x));
        if (x->dtype != x0->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is %s but input 0 is %s", i,
                               mrt_dtype_name(x->dtype), mrt_dtype_name(x0->dtype));
        bool ok = x->rank == x0->rank;
        for (int d = 0; ok && d < x->rank; d++) ok = d == axis || x->shape[d] == x0->shape[d];
        if (!ok)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "input %d has shape %s, incompatible with input 0's shape %s for concatenation on "
                               "axis %d (all other dimensions must match)",
                               i, shape_str(x, si, sizeof si), shape_str(x0, s0, sizeof s0), axis);
        out[axis] += x->shape[axis];
    }
    return mrt_output_set(ctx, 0, x0->dtype, x0->rank, out);
}

/* ------------------------------------------------------------------ Split */

mrt_status mrt_split_sizes(const mrt_op_ctx *ctx_c, int *axis_out, int64_t *sizes, bool *need_data)
{
    mrt_op_ctx *ctx = (mrt_op_ctx *)ctx_c;
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    if (x->rank == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cannot split a scalar");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    *axis_out = axis;
    int n_out = ctx->n_outputs;
    int64_t n = -1, dim = x->shape[axis];
    *need_data = false;
    /* opset 1 took 'split' as an attribute or as input 1; 2 and 11 as an attribute; 13+ as input 1 */
    if (ctx->opset < 13) MRT_TRY(read_list(ctx, "split", 1, "attribute 'split'", sizes, n_out, &n, need_data));
    if (n < 0 && (ctx->opset >= 13 || ctx->opset < 2))
        MRT_TRY(read_list(ctx, NULL, 1, "input 'split'", sizes, n_out, &n, need_data));
    if (*need_data) return MRT_STATUS_OK;
    int64_t num_outputs = ctx->opset >= 18 ? mrt_attr_int(ctx, "num_outputs", -1) : -1;
    char s[256];
    if (n >= 0) {
        int64_t sum = 0;
        bool negative = false;
        for (int i = 0; i < n; i++) {
            negative |= sizes[i] < 0;
            sum += sizes[i];
        }
        if (n != n_out || negative || sum != dim)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "'split' has %lld sizes summing to %lld (each >= 0 expected); the node has %d outputs "
                               "and the input %s has %lld on axis %d",
                               (long long)n, (long long)sum, n_out, shape_str(x, s, sizeof s), (long long)dim, axis);
    } else if (num_outputs >= 0) {
        if (num_outputs != n_out || n_out == 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "num_outputs is %lld but the node has %d outputs",
                               (long long)num_outputs, n_out);
        int64_t chunk = (dim + n_out - 1) / n_out, last = dim - chunk * (n_out - 1);
        if (last < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "cannot split %lld elements on axis %d into %d chunks of %lld (the last would be "
                               "negative)",
                               (long long)dim, axis, n_out, (long long)chunk);
        for (int i = 0; i < n_out; i++) sizes[i] = i == n_out - 1 ? last : chunk;
    } else {
        if (n_out == 0 || dim % n_out != 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "input %s cannot be split evenly on axis %d into %d outputs",
                               shape_str(x, s, sizeof s), axis, n_out);
        for (int i = 0; i < n_out; i++) sizes[i] = dim / n_out;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_split(mrt_op_ctx *ctx)
{
    int64_t *sizes = calloc((size_t)(ctx->n_outputs ? ctx->n_outputs : 1), sizeof *sizes);
    if (!sizes) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    int axis;
    bool need_data;
    mrt_status st = mrt_split_sizes(ctx, &axis, sizes, &need_data);
    if (!st && need_data) st = mrt_infer_dynamic(ctx);
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t out[MRT_MAX_RANK];
    if (!st && !need_data) memcpy(out, x->shape, (size_t)x->rank * sizeof *out);
    for (int i = 0; !st && !need_data && i < ctx->n_outputs; i++) {
        out[axis] = sizes[i];
        st = mrt_output_set(ctx, i, x->dtype, x->rank, out);
    }
    free(sizes);
    return st;
}

/* ------------------------------------------------------------------ Slice */

mrt_status mrt_slice_params_get(const mrt_op_ctx *ctx_c, mrt_slice_params *p, bool *need_data)
{
    mrt_op_ctx *ctx = (mrt_op_ctx *)ctx_c;
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int r = x->rank;
    int64_t starts[MRT_MAX_RANK], ends[MRT_MAX_RANK], axes[MRT_MAX_RANK], steps[MRT_MAX_RANK];
    int64_t ns, ne, na = -1, nst = -1;
    *need_data = false;
    bool attrs = ctx->opset < 10;
    MRT_TRY(read_list(ctx, attrs ? "starts" : NULL, 1, "input 'starts'", starts, MRT_MAX_RANK, &ns, need_data));
    MRT_TRY(read_list(ctx, attrs ? "ends" : NULL, 2, "input 'ends'", ends, MRT_MAX_RANK, &ne, need_data));
    MRT_TRY(read_list(ctx, attrs ? "axes" : NULL, 3, "input 'axes'", axes, MRT_MAX_RANK, &na, need_data));
    if (!attrs) MRT_TRY(read_list(ctx, NULL, 4, "input 'steps'", steps, MRT_MAX_RANK, &nst, need_data));
    if (*need_data) return MRT_STATUS_OK;
    if (ns < 0 || ne < 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "starts and ends are required");
    if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "starts, ends, axes and steps must have the same length (got %lld, %lld, %lld, %lld)",
                           (long long)ns, (long long)ne, (long long)na, (long long)nst);
    bool seen[MRT_MAX_RANK] = {false};
    for (int d = 0; d < r; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        p->out[d] = x->shape[d];
    }
    for (int k = 0; k < ns; k++) {
        int a;
        if (na >= 0) {
            MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[k], r, &a));
        } else if (k >= r) {
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%lld starts for an input of rank %d", (long long)ns, r);
        } else {
            a = k;
        }
        if (seen[a]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %d is sliced twice", a);
        seen[a] = true;
        int64_t step = nst >= 0 ? steps[k] : 1, dim = x->shape[a], s = starts[k], e = ends[k];
        if (step == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "step for axis %d is 0", a);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (dim == 0) {
            p->out[a] = 0;
        } else if (step > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            p->out[a] = e > s ? (int64_t)((uint64_t)(e - s - 1) / (uint64_t)step) + 1 : 0;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            p->out[a] = s > e ? (int64_t)((uint64_t)(s - e - 1) / ((uint64_t)0 - (uint64_t)step)) + 1 : 0;
        }
        p->start[a] = p->out[a] ? s : 0;
        p->step[a] = step;
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_slice(mrt_op_ctx *ctx)
{
    mrt_slice_params p;
    bool need_data;
    MRT_TRY(mrt_slice_params_get(ctx, &p, &need_data));
    if (need_data) return mrt_infer_dynamic(ctx);
    const mrt_tensor *x = mrt_input(ctx, 0);
    return mrt_output_set(ctx, 0, x->dtype, x->rank, p.out);
}

/* ------------------------------------------------------------------ Tile */

static mrt_status infer_tile(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    int64_t out[MRT_MAX_RANK], rep[MRT_MAX_RANK], n;
    char s[256];
    memcpy(out, x->shape, (size_t)x->rank * sizeof *out);
    if (ctx->opset < 6) {
        /* Tile-1: inputs 'tiles' and 'axis' (scalars): repeat along one axis */
        const mrt_tensor *tiles, *axis_t;
        MRT_TRY(input_tensor(ctx, 1, "tiles", &tiles));
        MRT_TRY(input_tensor(ctx, 2, "axis", &axis_t));
        if (!tiles->data || !axis_t->data) return mrt_infer_dynamic(ctx);
        int64_t t, ax;
        MRT_TRY(mrt_tensor_read_ints(ctx, "input 'tiles'", tiles, &t, 1, &n));
        MRT_TRY(mrt_tensor_read_ints(ctx, "input 'axis'", axis_t, &ax, 1, &n));
        int a;
        MRT_TRY(mrt_normalize_axis(ctx, "axis", ax, x->rank, &a));
        if (t < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "tiles is negative (%lld)", (long long)t);
        out[a] *= t;
        return mrt_output_set(ctx, 0, x->dtype, x->rank, out);
    }
    const mrt_tensor *r;
    MRT_TRY(input_tensor(ctx, 1, "repeats", &r));
    if (!r->data) return mrt_infer_dynamic(ctx);
    MRT_TRY(mrt_tensor_read_ints(ctx, "input 'repeats'", r, rep, MRT_MAX_RANK, &n));
    if (n != x->rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'repeats' has %lld values for an input of shape %s",
                           (long long)n, shape_str(x, s, sizeof s));
    for (int d = 0; d < x->rank; d++) {
        if (rep[d] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "repeats[%d] is negative (%lld)", d, (long long)rep[d]);
        if (rep[d] && out[d] > INT64_MAX / rep[d])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the tiled shape overflows");
        out[d] *= rep[d];
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, out);
}

/* ------------------------------------------------------------------ Pad */

mrt_status mrt_pad_params_get(const mrt_op_ctx *ctx_c, mrt_pad_params *p, bool *need_data)
{
    mrt_op_ctx *ctx = (mrt_op_ctx *)ctx_c;
    const mrt_tensor *x;
    MRT_TRY(input_tensor(ctx, 0, "data", &x));
    int r = x->rank;
    *need_data = false;
    const char *mode = mrt_attr_string(ctx, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = MRT_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = MRT_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = MRT_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0 && ctx->opset >= 19) p->mode = MRT_PAD_WRAP;
    else return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "unsupported mode '%s'", mode);
    int64_t pads[2 * MRT_MAX_RANK], axes[MRT_MAX_RANK], np, na = -1;
    if (ctx->opset < 11) {
        MRT_TRY(read_list(ctx, ctx->opset < 2 ? "paddings" : "pads", -1, NULL, pads, 2 * MRT_MAX_RANK, &np, need_data));
    } else {
        MRT_TRY(read_list(ctx, NULL, 1, "input 'pads'", pads, 2 * MRT_MAX_RANK, &np, need_data));
        if (ctx->opset >= 18) MRT_TRY(read_list(ctx, NULL, 3, "input 'axes'", axes, MRT_MAX_RANK, &na, need_data));
    }
    if (*need_data) return MRT_STATUS_OK;
    if (np < 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "pads are required");
    if (na < 0) {
        na = r;
        for (int d = 0; d < r; d++) axes[d] = d;
    }
    char s[256];
    if (np != 2 * na)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%lld pads given for %lld axes of input %s (expected %lld)",
                           (long long)np, (long long)na, shape_str(x, s, sizeof s), (long long)(2 * na));
    for (int d = 0; d < r; d++) p->begin[d] = p->end[d] = 0;
    bool seen[MRT_MAX_RANK] = {false};
    for (int k = 0; k < na; k++) {
        int a;
        MRT_TRY(mrt_normalize_axis(ctx, "axes value", axes[k], r, &a));
        if (seen[a]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %d is padded twice", a);
        seen[a] = true;
        p->begin[a] = pads[k];
        p->end[a] = pads[na + k];
    }
    for (int d = 0; d < r; d++) {
        int64_t dim = x->shape[d];
        p->out[d] = dim + p->begin[d] + p->end[d];
        if (p->out[d] < 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "pads %lld and %lld crop more than axis %d of input %s",
                               (long long)p->begin[d], (long long)p->end[d], d, shape_str(x, s, sizeof s));
        if (p->mode != MRT_PAD_CONSTANT && dim == 0 && p->out[d] > 0)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' cannot pad the empty axis %d of input %s",
                               mode, d, shape_str(x, s, sizeof s));
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_pad(mrt_op_ctx *ctx)
{
    mrt_pad_params p;
    bool need_data;
    MRT_TRY(mrt_pad_params_get(ctx, &p, &need_data));
    if (need_data) return mrt_infer_dynamic(ctx);
    const mrt_tensor *x = mrt_input(ctx, 0), *cv = mrt_input(ctx, 2);
    if (ctx->opset >= 11 && cv) {
        if (cv->dtype != x->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "constant_value is %s but data is %s",
                               mrt_dtype_name(cv->dtype), mrt_dtype_name(x->dtype));
        if (mrt_tensor_numel(cv) != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "constant_value must hold exactly one element");
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, p.out);
}

/* ------------------------------------------------------------------ DepthToSpace / SpaceToDepth */

static mrt_status block_params(mrt_op_ctx *ctx, const mrt_tensor **x, int64_t *bs)
{
    MRT_TRY(input_tensor(ctx, 0, "input", x));
    char s[256];
    if ((*x)->rank != 4)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must be 4-D [N,C,H,W], got %s",
                           shape_str(*x, s, sizeof s));
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "blocksize", MRT_ATTR_INT, &a));
    if (!a || a->i <= 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'blocksize' must be positive");
    *bs = a->i;
    const char *mode = mrt_attr_string(ctx, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not DCR or CRD", mode);
    return MRT_STATUS_OK;
}

static mrt_status infer_depth_to_space(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    int64_t bs;
    char s[256];
    MRT_TRY(block_params(ctx, &x, &bs));
    if (bs > INT64_MAX / bs || x->shape[1] % (bs * bs) != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "channels of input %s are not a multiple of blocksize^2 (%lld)",
                           shape_str(x, s, sizeof s), (long long)(bs * bs));
    int64_t out[4] = {x->shape[0], x->shape[1] / (bs * bs), x->shape[2] * bs, x->shape[3] * bs};
    return mrt_output_set(ctx, 0, x->dtype, 4, out);
}

static mrt_status infer_space_to_depth(mrt_op_ctx *ctx)
{
    const mrt_tensor *x;
    int64_t bs;
    char s[256];
    MRT_TRY(block_params(ctx, &x, &bs));
    if (x->shape[2] % bs != 0 || x->shape[3] % bs != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "height and width of input %s are not multiples of blocksize %lld",
                           shape_str(x, s, sizeof s), (long long)bs);
    int64_t out[4] = {x->shape[0], x->shape[1] * bs * bs, x->shape[2] / bs, x->shape[3] / bs};
    return mrt_output_set(ctx, 0, x->dtype, 4, out);
}

/* ------------------------------------------------------------------ Trilu, ReverseSequence */

static mrt_status infer_trilu(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *k = mrt_input(ctx, 1);
    char s[256];
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    if (x->rank < 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must have rank >= 2, got %s", shape_str(x, s, sizeof s));
    if (k && (mrt_tensor_numel(k) != 1 || k->dtype != MRT_DTYPE_INT64))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'k' must be an int64 scalar");
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_reverse_sequence(mrt_op_ctx *ctx)
{
    const mrt_tensor *x, *lens;
    char s[256];
    MRT_TRY(input_tensor(ctx, 0, "input", &x));
    MRT_TRY(input_tensor(ctx, 1, "sequence_lens", &lens));
    int64_t b = mrt_attr_int(ctx, "batch_axis", 1), t = mrt_attr_int(ctx, "time_axis", 0);
    if (x->rank < 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must have rank >= 2, got %s", shape_str(x, s, sizeof s));
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "batch_axis (%lld) and time_axis (%lld) must be 0 and 1",
                           (long long)b, (long long)t);
    if (lens->rank != 1 || lens->shape[0] != x->shape[b] || (lens->dtype != MRT_DTYPE_INT64 && lens->dtype != MRT_DTYPE_INT32))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "sequence_lens must be int64 [%lld] (the batch size), got %s%s",
                           (long long)x->shape[b], mrt_dtype_name(lens->dtype), shape_str(lens, s, sizeof s));
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_transform[] = {
    {"", "Transpose", 1, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Transpose", 13, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Transpose", 21, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Transpose", 23, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Transpose", 24, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Transpose", 25, 1, 1, 1, 1, infer_transpose, 0},
    {"", "Concat", 1, 1, -1, 1, 1, infer_concat, 0},
    {"", "Concat", 4, 1, -1, 1, 1, infer_concat, 0},
    {"", "Concat", 11, 1, -1, 1, 1, infer_concat, 0},
    {"", "Concat", 13, 1, -1, 1, 1, infer_concat, 0},
    {"", "Split", 1, 1, 2, 1, -1, infer_split, 0},
    {"", "Split", 2, 1, 1, 1, -1, infer_split, 0},
    {"", "Split", 11, 1, 1, 1, -1, infer_split, 0},
    {"", "Split", 13, 1, 2, 1, -1, infer_split, 0},
    {"", "Split", 18, 1, 2, 1, -1, infer_split, 0},
    {"", "Slice", 1, 1, 1, 1, 1, infer_slice, 0},
    {"", "Slice", 10, 3, 5, 1, 1, infer_slice, 0},
    {"", "Slice", 11, 3, 5, 1, 1, infer_slice, 0},
    {"", "Slice", 13, 3, 5, 1, 1, infer_slice, 0},
    {"", "Tile", 1, 3, 3, 1, 1, infer_tile, 0},
    {"", "Tile", 6, 2, 2, 1, 1, infer_tile, 0},
    {"", "Tile", 13, 2, 2, 1, 1, infer_tile, 0},
    {"", "Pad", 1, 1, 1, 1, 1, infer_pad, 0},
    {"", "Pad", 2, 1, 1, 1, 1, infer_pad, 0},
    {"", "Pad", 11, 2, 3, 1, 1, infer_pad, 0},
    {"", "Pad", 13, 2, 3, 1, 1, infer_pad, 0},
    {"", "Pad", 18, 2, 4, 1, 1, infer_pad, 0},
    {"", "Pad", 19, 2, 4, 1, 1, infer_pad, 0},
    {"", "Pad", 21, 2, 4, 1, 1, infer_pad, 0},
    {"", "Pad", 23, 2, 4, 1, 1, infer_pad, 0},
    {"", "Pad", 24, 2, 4, 1, 1, infer_pad, 0},
    {"", "Pad", 25, 2, 4, 1, 1, infer_pad, 0},
    {"", "DepthToSpace", 1, 1, 1, 1, 1, infer_depth_to_space, 0},
    {"", "DepthToSpace", 11, 1, 1, 1, 1, infer_depth_to_space, 0},
    {"", "DepthToSpace", 13, 1, 1, 1, 1, infer_depth_to_space, 0},
    {"", "DepthToSpace", 28, 1, 1, 1, 1, infer_depth_to_space, 0},
    {"", "SpaceToDepth", 1, 1, 1, 1, 1, infer_space_to_depth, 0},
    {"", "SpaceToDepth", 13, 1, 1, 1, 1, infer_space_to_depth, 0},
    {"", "SpaceToDepth", 28, 1, 1, 1, 1, infer_space_to_depth, 0},
    {"", "Trilu", 14, 1, 2, 1, 1, infer_trilu, 0},
    {"", "ReverseSequence", 10, 2, 2, 1, 1, infer_reverse_sequence, 0},
    {"", "ReverseSequence", 28, 2, 2, 1, 1, infer_reverse_sequence, 0},
    {0},
};
