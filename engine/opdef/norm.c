/* Opdefs: BatchNormalization 1/6/7/9/14/15, InstanceNormalization 1/6/22, LayerNormalization 17,
 * GroupNormalization 18/21, RMSNormalization 23, LpNormalization 1/22, MeanVarianceNormalization 9/13,
 * LRN 1/13. Training outputs of BatchNormalization only from version 14 (training_mode). */
#include <string.h>

#include "engine/registry.h"

static bool is_float4(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static const char *shp(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* Input i as a floating tensor (fails naming it when absent or of another dtype); NULL with *st OK when an
   optional input is omitted. */
static const mrt_tensor *float_input(const mrt_op_ctx *ctx, int i, const char *name, bool optional, mrt_status *st)
{
    *st = MRT_STATUS_OK;
    const mrt_tensor *t = mrt_input(ctx, i);
    if (!t) {
        if (!optional)
            *st = mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, name);
        return NULL;
    }
    if (!is_float4(t->dtype)) {
        *st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                          "input '%s' has dtype %s; %s takes float16, bfloat16, float or double", name,
                          mrt_dtype_name(t->dtype), ctx->node->op_type);
        return NULL;
    }
    return t;
}

static bool output_present(const mrt_op_ctx *ctx, int i) { return i < ctx->n_outputs && ctx->outputs[i]; }

/* A per-channel parameter must have exactly shape [n] (what = "the channel count of X", ...). */
static mrt_status check_vector(const mrt_op_ctx *ctx, const mrt_tensor *p, const char *name, int64_t n,
                               const char *what, const mrt_tensor *x)
{
    if (p->rank == 1 && p->shape[0] == n) return MRT_STATUS_OK;
    char a[256], b[256];
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has shape %s, expected [%lld] (%s; X is %s)", name,
                       shp(p, a, sizeof a), (long long)n, what, shp(x, b, sizeof b));
}

/* Unidirectional broadcasting: p's shape, right-aligned, must match x's dims or be 1. */
static mrt_status check_unidirectional(const mrt_op_ctx *ctx, const mrt_tensor *p, const char *name,
                                       const mrt_tensor *x)
{
    bool ok = p->rank <= x->rank;
    for (int i = 0; ok && i < p->rank; i++) {
        int64_t d = p->shape[p->rank - 1 - i], xd = x->shape[x->rank - 1 - i];
        ok = d == xd || d == 1;
    }
    if (ok) return MRT_STATUS_OK;
    char a[256], b[256];
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                       "input '%s' has shape %s, which does not broadcast to X's shape %s", name,
                       shp(p, a, sizeof a), shp(x, b, sizeof b));
}

static mrt_status check_rank(const mrt_op_ctx *ctx, const mrt_tensor *x, int min_rank, const char *layout)
{
    if (x->rank >= min_rank) return MRT_STATUS_OK;
    char a[256];
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'X' has shape %s; expected rank >= %d (%s)",
                       shp(x, a, sizeof a), min_rank, layout);
}

/* ------------------------------------------------------------------ BatchNormalization */

static mrt_status infer_batchnorm(mrt_op_ctx *ctx)
{
    static const char *names[5] = {"X", "scale", "B", "input_mean", "input_var"};
    const mrt_tensor *in[5];
    mrt_status st;
    for (int i = 0; i < 5; i++) {
        in[i] = float_input(ctx, i, names[i], false, &st);
        if (st) return st;
    }
    const mrt_tensor *x = in[0];
    MRT_TRY(check_rank(ctx, x, 2, "N x C x D1 x ..."));
    bool spatial = ctx->opset >= 9 || mrt_attr_int(ctx, "spatial", 1) != 0;
    int64_t c = x->shape[1];
    if (!spatial)
        for (int a = 2; a < x->rank; a++) c *= x->shape[a];
    for (int i = 1; i < 5; i++) {
        if (spatial) {
            MRT_TRY(check_vector(ctx, in[i], names[i], c, "the channel count of X", x));
        } else if (mrt_tensor_numel(in[i]) != c) {
            char a[256], b[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "input '%s' has shape %s, expected %lld elements "
                               "(C x D1 x ... of X, spatial=0; X is %s)",
                               names[i], shp(in[i], a, sizeof a), (long long)c, shp(x, b, sizeof b));
        }
    }
    /* one type T for everything before 14; 14 lets the statistics (U) differ; 15 the scale/bias too */
    int n_same = ctx->opset < 14 ? 5 : ctx->opset < 15 ? 3 : 1;
    for (int i = 1; i < n_same; i++)
        if (in[i]->dtype != x->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s but X has %s (opset %lld)",
                               names[i], mrt_dtype_name(in[i]->dtype), mrt_dtype_name(x->dtype), (long long)ctx->opset);
    if (in[1]->dtype != in[2]->dtype || in[3]->dtype != in[4]->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "scale/B (%s/%s) and input_mean/input_var (%s/%s) must pair up in dtype",
                           mrt_dtype_name(in[1]->dtype), mrt_dtype_name(in[2]->dtype), mrt_dtype_name(in[3]->dtype),
                           mrt_dtype_name(in[4]->dtype));
    bool extra = false;
    for (int i = 1; i < ctx->n_outputs; i++) extra |= output_present(ctx, i);
    if (ctx->opset >= 14) {
        bool training = mrt_attr_int(ctx, "training_mode", 0) != 0;
        if (!training && extra)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "outputs running_mean/running_var are only valid with training_mode=1");
        for (int i = 1; i < 3; i++) MRT_TRY(mrt_output_set(ctx, i, in[3]->dtype, 1, &c));
    } else if (extra) {
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "training outputs (mean, var, saved_mean, saved_var) of BatchNormalization-%lld "
                           "are not supported",
                           (long long)ctx->opset);
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

/* ------------------------------------------------------------------ InstanceNormalization */

static mrt_status infer_instancenorm(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "input", false, &st);
    if (st) return st;
    const mrt_tensor *s = float_input(ctx, 1, "scale", false, &st);
    if (st) return st;
    const mrt_tensor *b = float_input(ctx, 2, "B", false, &st);
    if (st) return st;
    MRT_TRY(check_rank(ctx, x, 2, "N x C x D1 x ..."));
    MRT_TRY(check_vector(ctx, s, "scale", x->shape[1], "the channel count of X", x));
    MRT_TRY(check_vector(ctx, b, "B", x->shape[1], "the channel count of X", x));
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

/* ------------------------------------------------------------------ LayerNormalization / RMSNormalization */

static mrt_status stash_dtype(const mrt_op_ctx *ctx, mrt_dtype *out)
{
    int64_t st = mrt_attr_int(ctx, "stash_type", MRT_DTYPE_FLOAT);
    if (st < 0 || st >= MRT_DTYPE_COUNT_ || !is_float4((mrt_dtype)st))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'stash_type' = %lld is not a float dtype",
                           (long long)st);
    *out = (mrt_dtype)st;
    return MRT_STATUS_OK;
}

static mrt_status infer_layernorm(mrt_op_ctx *ctx)
{
    bool rms = strcmp(ctx->node->op_type, "RMSNormalization") == 0;
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "X", false, &st);
    if (st) return st;
    const mrt_tensor *s = float_input(ctx, 1, rms ? "scale" : "Scale", false, &st);
    if (st) return st;
    const mrt_tensor *b = rms ? NULL : float_input(ctx, 2, "B", true, &st);
    if (st) return st;
    MRT_TRY(check_rank(ctx, x, 1, "the normalized dims start at 'axis'"));
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    mrt_dtype stash;
    MRT_TRY(stash_dtype(ctx, &stash));
    MRT_TRY(check_unidirectional(ctx, s, rms ? "scale" : "Scale", x));
    if (b) {
        MRT_TRY(check_unidirectional(ctx, b, "B", x));
        if (b->dtype != x->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'B' has dtype %s but X has %s",
                               mrt_dtype_name(b->dtype), mrt_dtype_name(x->dtype));
    }
    if (!rms && s->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'Scale' has dtype %s but X has %s",
                           mrt_dtype_name(s->dtype), mrt_dtype_name(x->dtype));
    if (!rms) {
        int64_t shape[MRT_MAX_RANK];
        for (int a = 0; a < x->rank; a++) shape[a] = a < axis ? x->shape[a] : 1;
        MRT_TRY(mrt_output_set(ctx, 1, stash, x->rank, shape));
        MRT_TRY(mrt_output_set(ctx, 2, stash, x->rank, shape));
    }
    /* RMSNormalization's Y takes the scale's dtype (type V in the spec) */
    return mrt_output_set(ctx, 0, rms ? s->dtype : x->dtype, x->rank, x->shape);
}

/* ------------------------------------------------------------------ GroupNormalization */

static mrt_status infer_groupnorm(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "X", false, &st);
    if (st) return st;
    const mrt_tensor *s = float_input(ctx, 1, "scale", false, &st);
    if (st) return st;
    const mrt_tensor *b = float_input(ctx, 2, "bias", false, &st);
    if (st) return st;
    MRT_TRY(check_rank(ctx, x, 2, "N x C x D1 x ..."));
    const mrt_attr *g;
    MRT_TRY(mrt_attr_get(ctx, "num_groups", MRT_ATTR_INT, &g));
    if (!g) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "required attribute 'num_groups' is missing");
    int64_t c = x->shape[1];
    if (g->i <= 0 || c % g->i != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "num_groups = %lld does not divide the channel count %lld of X", (long long)g->i,
                           (long long)c);
    if (ctx->opset >= 21) {
        mrt_dtype stash;
        MRT_TRY(stash_dtype(ctx, &stash));
        MRT_TRY(check_vector(ctx, s, "scale", c, "the channel count of X, opset >= 21", x));
        MRT_TRY(check_vector(ctx, b, "bias", c, "the channel count of X, opset >= 21", x));
    } else {
        MRT_TRY(check_vector(ctx, s, "scale", g->i, "num_groups, opset 18", x));
        MRT_TRY(check_vector(ctx, b, "bias", g->i, "num_groups, opset 18", x));
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

/* ------------------------------------------------------------------ LpNormalization, MVN, LRN */

static mrt_status infer_lpnorm(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "input", false, &st);
    if (st) return st;
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    int64_t p = mrt_attr_int(ctx, "p", 2);
    if (p != 1 && p != 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'p' = %lld; only 1 and 2 are defined",
                           (long long)p);
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_mvn(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "X", false, &st);
    if (st) return st;
    const mrt_attr *a;
    MRT_TRY(mrt_attr_get(ctx, "axes", MRT_ATTR_INTS, &a));
    static const int64_t def_axes[3] = {0, 2, 3};
    const int64_t *axes = a ? a->ints : def_axes;
    int64_t n = a ? a->n : 3;
    bool seen[MRT_MAX_RANK] = {false};
    for (int64_t i = 0; i < n; i++) {
        int ax;
        MRT_TRY(mrt_normalize_axis(ctx, a ? "axes value" : "default axes [0,2,3] value", axes[i], x->rank, &ax));
        if (seen[ax])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "axis %lld appears more than once in axes",
                               (long long)axes[i]);
        seen[ax] = true;
    }
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

static mrt_status infer_lrn(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *x = float_input(ctx, 0, "X", false, &st);
    if (st) return st;
    MRT_TRY(check_rank(ctx, x, 2, "N x C x D1 x ..."));
    const mrt_attr *sz;
    MRT_TRY(mrt_attr_get(ctx, "size", MRT_ATTR_INT, &sz));
    if (!sz) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "required attribute 'size' is missing");
    if (sz->i <= 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'size' = %lld must be positive",
                           (long long)sz->i);
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_norm[] = {
    {"", "BatchNormalization", 1, 5, 5, 1, 5, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "BatchNormalization", 6, 5, 5, 1, 5, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "BatchNormalization", 7, 5, 5, 1, 5, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "BatchNormalization", 9, 5, 5, 1, 5, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "BatchNormalization", 14, 5, 5, 1, 3, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "BatchNormalization", 15, 5, 5, 1, 3, infer_batchnorm, MRT_OPDEF_INPLACE},
    {"", "InstanceNormalization", 1, 3, 3, 1, 1, infer_instancenorm, 0},
    {"", "InstanceNormalization", 6, 3, 3, 1, 1, infer_instancenorm, 0},
    {"", "InstanceNormalization", 22, 3, 3, 1, 1, infer_instancenorm, 0},
    {"", "LayerNormalization", 17, 2, 3, 1, 3, infer_layernorm, 0},
    {"", "RMSNormalization", 23, 2, 2, 1, 1, infer_layernorm, 0},
    {"", "GroupNormalization", 18, 3, 3, 1, 1, infer_groupnorm, 0},
    {"", "GroupNormalization", 21, 3, 3, 1, 1, infer_groupnorm, 0},
    {"", "LpNormalization", 1, 1, 1, 1, 1, infer_lpnorm, 0},
    {"", "LpNormalization", 22, 1, 1, 1, 1, infer_lpnorm, 0},
    {"", "MeanVarianceNormalization", 9, 1, 1, 1, 1, infer_mvn, 0},
    {"", "MeanVarianceNormalization", 13, 1, 1, 1, 1, infer_mvn, 0},
    {"", "LRN", 1, 1, 1, 1, 1, infer_lrn, 0},
    {"", "LRN", 13, 1, 1, 1, 1, infer_lrn, 0},
    {0},
};
