/* Opdefs: Attention 23 and 24 (3-D [batch, seq, heads*size] or 4-D [batch, heads, seq, size] Q/K/V; grouped
 * KV heads; bool or additive mask, right-aligned broadcast and padded to the total KV length; is_causal with a
 * past-length or nonpad_kv_seqlen offset; past_key/past_value -> present_*; softcap; qk_matmul_output modes
 * 0-3), LinearAttention 27 (rules linear/gated/delta/gated_delta, grouped KV heads, per-head or per-key decay,
 * per-head or shared beta, optional past_state of its own float dtype) and CausalConvWithState 27 (depthwise
 * causal 1-D conv with carry state, bias, silu/swish). float, double, float16, bfloat16. */
#include "engine/opdef/attention.h"

#include <string.h>

#include "engine/registry.h"

static mrt_status shape_of(const mrt_op_ctx *ctx, const mrt_tensor *t, const char *name, int64_t heads, int64_t *b,
                           int64_t *h, int64_t *s, int64_t *d)
{
    char sb[128];
    if (t->rank == 4) {
        *b = t->shape[0], *h = t->shape[1], *s = t->shape[2], *d = t->shape[3];
        return MRT_STATUS_OK;
    }
    if (heads <= 0 || t->shape[2] % heads)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "3-D input '%s' %s needs q_num_heads/kv_num_heads dividing its hidden size (got %lld)", name,
                           mrt_shape_describe(t->rank, t->shape, sb, sizeof sb), (long long)heads);
    *b = t->shape[0], *h = heads, *s = t->shape[1], *d = t->shape[2] / heads;
    return MRT_STATUS_OK;
}

mrt_status mrt_attention_geometry(const mrt_op_ctx *ctx, mrt_attention_geometry_t *g)
{
    const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
    const mrt_tensor *mask = mrt_input(ctx, 3), *pk = mrt_input(ctx, 4), *pv = mrt_input(ctx, 5);
    const mrt_tensor *nonpad = ctx->opset >= 24 ? mrt_input(ctx, 6) : NULL;
    char a[128], b2[128];
    if (!q || !k || !v) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "Q, K and V are required tensors");
    if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "Q, K and V must all be 3-D or all 4-D (Q %s, K %s)",
                           mrt_shape_describe(q->rank, q->shape, a, sizeof a),
                           mrt_shape_describe(k->rank, k->shape, b2, sizeof b2));
    mrt_dtype dt = q->dtype;
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_DOUBLE && dt != MRT_DTYPE_FLOAT16 && dt != MRT_DTYPE_BFLOAT16)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    if (k->dtype != dt || v->dtype != dt)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "Q, K and V must share one dtype (%s, %s, %s)",
                           mrt_dtype_name(dt), mrt_dtype_name(k->dtype), mrt_dtype_name(v->dtype));
    memset(g, 0, sizeof *g);
    g->rank3 = q->rank == 3;
    int64_t qh = mrt_attr_int(ctx, "q_num_heads", 0), kvh = mrt_attr_int(ctx, "kv_num_heads", 0), bk, bv, hv, sv;
    MRT_TRY(shape_of(ctx, q, "Q", qh, &g->batch, &g->q_heads, &g->q_len, &g->head));
    MRT_TRY(shape_of(ctx, k, "K", kvh, &bk, &g->kv_heads, &g->kv_len, &g->k_head));
    MRT_TRY(shape_of(ctx, v, "V", kvh, &bv, &hv, &sv, &g->v_head));
    if (bk != g->batch || bv != g->batch || hv != g->kv_heads || sv != g->kv_len || g->k_head != g->head)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "K %s and V %s do not fit Q %s (batch, KV heads, KV length and head size must agree)",
                           mrt_shape_describe(k->rank, k->shape, a, sizeof a),
                           mrt_shape_describe(v->rank, v->shape, b2, sizeof b2),
                           mrt_shape_describe(q->rank, q->shape, (char[128]){0}, 128));
    if (g->kv_heads <= 0 || g->q_heads % g->kv_heads)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%lld query heads are not a multiple of %lld KV heads",
                           (long long)g->q_heads, (long long)g->kv_heads);
    if ((pk == NULL) != (pv == NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "past_key and past_value must be given together");
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->shape[0] != g->batch || pk->shape[1] != g->kv_heads ||
            pk->shape[3] != g->head || pv->shape[0] != g->batch || pv->shape[1] != g->kv_heads ||
            pv->shape[2] != pk->shape[2] || pv->shape[3] != g->v_head || pk->dtype != dt || pv->dtype != dt)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "past_key %s / past_value %s must be [batch %lld, KV heads %lld, past, head size] of %s",
                               mrt_shape_describe(pk->rank, pk->shape, a, sizeof a),
                               mrt_shape_describe(pv->rank, pv->shape, b2, sizeof b2), (long long)g->batch,
                               (long long)g->kv_heads, mrt_dtype_name(dt));
        g->past_len = pk->shape[2];
    }
    if (nonpad) {
        if (pk) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "nonpad_kv_seqlen cannot be combined with past_key");
        if (mrt_tensor_numel(nonpad) != g->batch || nonpad->dtype != MRT_DTYPE_INT64)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "nonpad_kv_seqlen must be %lld int64 values",
                               (long long)g->batch);
        g->has_nonpad = true;
    }
    g->total_len = g->past_len + g->kv_len;
    if (mask) {
        if (mask->rank < 1 || mask->rank > 4 || mask->shape[mask->rank - 1] > g->total_len)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "attn_mask %s must have rank 1-4 and a last dim of at most %lld (the total KV length)",
                               mrt_shape_describe(mask->rank, mask->shape, a, sizeof a), (long long)g->total_len);
        const int64_t full[4] = {g->batch, g->q_heads, g->q_len, g->total_len};
        for (int i = 0; i < mask->rank - 1; i++) {
            int64_t m = mask->shape[mask->rank - 1 - 1 - i], f = full[4 - 2 - i];
            if (m != 1 && m != f)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                                   "attn_mask %s does not broadcast to [batch %lld, heads %lld, q %lld, kv %lld]",
                                   mrt_shape_describe(mask->rank, mask->shape, a, sizeof a), (long long)full[0],
                                   (long long)full[1], (long long)full[2], (long long)full[3]);
        }
        if (mask->dtype != MRT_DTYPE_BOOL && mask->dtype != dt)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attn_mask has dtype %s; expected bool or %s",
                               mrt_dtype_name(mask->dtype), mrt_dtype_name(dt));
    }
    int64_t mode = mrt_attr_int(ctx, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "qk_matmul_output_mode %lld is not 0-3", (long long)mode);
    g->qk_mode = (int)mode;
    return MRT_STATUS_OK;
}

static mrt_status infer_attention(mrt_op_ctx *ctx)
{
    mrt_attention_geometry_t g;
    MRT_TRY(mrt_attention_geometry(ctx, &g));
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    if (g.rank3) MRT_TRY(mrt_output_set(ctx, 0, dt, 3, (int64_t[]){g.batch, g.q_len, g.q_heads * g.v_head}));
    else MRT_TRY(mrt_output_set(ctx, 0, dt, 4, (int64_t[]){g.batch, g.q_heads, g.q_len, g.v_head}));
    MRT_TRY(mrt_output_set(ctx, 1, dt, 4, (int64_t[]){g.batch, g.kv_heads, g.total_len, g.head}));
    MRT_TRY(mrt_output_set(ctx, 2, dt, 4, (int64_t[]){g.batch, g.kv_heads, g.total_len, g.v_head}));
    return mrt_output_set(ctx, 3, dt, 4, (int64_t[]){g.batch, g.q_heads, g.q_len, g.total_len});
}

static bool is_float_type(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

mrt_status mrt_linear_attention_geometry(const mrt_op_ctx *ctx, mrt_linear_attention_geometry_t *g)
{
    const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
    const mrt_tensor *past = mrt_input(ctx, 3), *decay = mrt_input(ctx, 4), *beta = mrt_input(ctx, 5);
    char a[128], b[128], c[128];
    if (!q || !k || !v) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "query, key and value are required tensors");
    mrt_dtype dt = q->dtype;
    if (!is_float_type(dt))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    if (k->dtype != dt || v->dtype != dt)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "query, key and value must share one dtype (%s, %s, %s)",
                           mrt_dtype_name(dt), mrt_dtype_name(k->dtype), mrt_dtype_name(v->dtype));
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "query %s, key %s and value %s must be 3-D [batch, seq, heads * size]",
                           mrt_shape_describe(q->rank, q->shape, a, sizeof a),
                           mrt_shape_describe(k->rank, k->shape, b, sizeof b),
                           mrt_shape_describe(v->rank, v->shape, c, sizeof c));
    memset(g, 0, sizeof *g);
    g->q_heads = mrt_attr_int(ctx, "q_num_heads", 0);
    g->kv_heads = mrt_attr_int(ctx, "kv_num_heads", 0);
    if (g->q_heads <= 0 || g->kv_heads <= 0 || g->q_heads % g->kv_heads)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld); both are required",
                           (long long)g->q_heads, (long long)g->kv_heads);
    g->batch = q->shape[0];
    g->seq = q->shape[1];
    if (q->shape[2] % g->q_heads || v->shape[2] % g->kv_heads)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "query %s / value %s: the last dim must be a multiple of q_num_heads %lld / "
                           "kv_num_heads %lld",
                           mrt_shape_describe(q->rank, q->shape, a, sizeof a),
                           mrt_shape_describe(v->rank, v->shape, b, sizeof b), (long long)g->q_heads,
                           (long long)g->kv_heads);
    g->dk = q->shape[2] / g->q_heads;
    g->dv = v->shape[2] / g->kv_heads;
    if (k->shape[0] != g->batch || v->shape[0] != g->batch || k->shape[1] != g->seq || v->shape[1] != g->seq ||
        k->shape[2] != g->kv_heads * g->dk)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "key %s and value %s do not fit query %s (expected key [%lld, %lld, %lld] and value "
                           "[%lld, %lld, kv_num_heads * d_v])",
                           mrt_shape_describe(k->rank, k->shape, a, sizeof a),
                           mrt_shape_describe(v->rank, v->shape, b, sizeof b),
                           mrt_shape_describe(q->rank, q->shape, c, sizeof c), (long long)g->batch, (long long)g->seq,
                           (long long)(g->kv_heads * g->dk), (long long)g->batch, (long long)g->seq);
    const char *rule = mrt_attr_string(ctx, "update_rule", "gated_delta");
    if (!strcmp(rule, "linear")) g->gated = false, g->delta = false;
    else if (!strcmp(rule, "gated")) g->gated = true, g->delta = false;
    else if (!strcmp(rule, "delta")) g->gated = false, g->delta = true;
    else if (!strcmp(rule, "gated_delta")) g->gated = true, g->delta = true;
    else
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "update_rule '%s' is not one of linear, gated, delta, gated_delta", rule);
    if (g->gated != (decay != NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "update_rule '%s' %s the decay input", rule,
                           g->gated ? "requires" : "forbids");
    if (g->delta != (beta != NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "update_rule '%s' %s the beta input", rule,
                           g->delta ? "requires" : "forbids");
    if (decay) {
        if (decay->dtype != dt || decay->rank != 3 || decay->shape[0] != g->batch || decay->shape[1] != g->seq ||
            (decay->shape[2] != g->kv_heads && decay->shape[2] != g->kv_heads * g->dk))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "decay %s of %s must be %s [%lld, %lld, %lld (per head) or %lld (per key dim)]",
                               mrt_shape_describe(decay->rank, decay->shape, a, sizeof a),
                               mrt_dtype_name(decay->dtype), mrt_dtype_name(dt), (long long)g->batch,
                               (long long)g->seq, (long long)g->kv_heads, (long long)(g->kv_heads * g->dk));
        g->decay_per_key = decay->shape[2] == g->kv_heads * g->dk && decay->shape[2] != g->kv_heads;
    }
    if (beta) {
        if (beta->dtype != dt || beta->rank != 3 || beta->shape[0] != g->batch || beta->shape[1] != g->seq ||
            (beta->shape[2] != g->kv_heads && beta->shape[2] != 1))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "beta %s of %s must be %s [%lld, %lld, %lld or 1]",
                               mrt_shape_describe(beta->rank, beta->shape, a, sizeof a), mrt_dtype_name(beta->dtype),
                               mrt_dtype_name(dt), (long long)g->batch, (long long)g->seq, (long long)g->kv_heads);
    }
    g->state_dtype = dt;
    if (past) {
        if (!is_float_type(past->dtype) || past->rank != 4 || past->shape[0] != g->batch ||
            past->shape[1] != g->kv_heads || past->shape[2] != g->dk || past->shape[3] != g->dv)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "past_state %s of %s must be a float tensor [%lld, %lld, %lld, %lld] (batch, kv heads, "
                               "d_k, d_v)",
                               mrt_shape_describe(past->rank, past->shape, a, sizeof a), mrt_dtype_name(past->dtype),
                               (long long)g->batch, (long long)g->kv_heads, (long long)g->dk, (long long)g->dv);
        g->state_dtype = past->dtype;
    }
    /* the kernel keeps one head's state in double: refuse sizes whose byte count overflows */
    if (g->dk > 0 && g->dv > (INT64_MAX / 16) / g->dk)
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "a [%lld, %lld] recurrent state is too large",
                           (long long)g->dk, (long long)g->dv);
    return MRT_STATUS_OK;
}

static mrt_status infer_linear_attention(mrt_op_ctx *ctx)
{
    mrt_linear_attention_geometry_t g;
    MRT_TRY(mrt_linear_attention_geometry(ctx, &g));
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    MRT_TRY(mrt_output_set(ctx, 0, dt, 3, (int64_t[]){g.batch, g.seq, g.q_heads * g.dv}));
    return mrt_output_set(ctx, 1, g.state_dtype, 4, (int64_t[]){g.batch, g.kv_heads, g.dk, g.dv});
}

static mrt_status infer_causal_conv_with_state(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *bias = mrt_input(ctx, 2),
                     *past = mrt_input(ctx, 3);
    char a[128], b[128];
    if (!x || !w) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input and weight are required tensors");
    mrt_dtype dt = x->dtype;
    if (!is_float_type(dt))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    if (x->rank != 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %s must be 3-D [batch, channels, length]",
                           mrt_shape_describe(x->rank, x->shape, a, sizeof a));
    int64_t batch = x->shape[0], ch = x->shape[1];
    if (w->dtype != dt || w->rank != 3 || w->shape[0] != ch || w->shape[1] != 1 || w->shape[2] < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "weight %s of %s must be %s [%lld (channels of input %s), 1, k >= 1]",
                           mrt_shape_describe(w->rank, w->shape, a, sizeof a), mrt_dtype_name(w->dtype),
                           mrt_dtype_name(dt), (long long)ch, mrt_shape_describe(x->rank, x->shape, b, sizeof b));
    int64_t kw = w->shape[2];
    if (bias && (bias->dtype != dt || bias->rank != 1 || bias->shape[0] != ch))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "bias %s of %s must be %s [%lld]",
                           mrt_shape_describe(bias->rank, bias->shape, a, sizeof a), mrt_dtype_name(bias->dtype),
                           mrt_dtype_name(dt), (long long)ch);
    if (past && (past->dtype != dt || past->rank != 3 || past->shape[0] != batch || past->shape[1] != ch ||
                 past->shape[2] != kw - 1))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "past_state %s of %s must be %s [%lld, %lld, %lld] (k - 1)",
                           mrt_shape_describe(past->rank, past->shape, a, sizeof a), mrt_dtype_name(past->dtype),
                           mrt_dtype_name(dt), (long long)batch, (long long)ch, (long long)(kw - 1));
    const char *act = mrt_attr_string(ctx, "activation", "none");
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "activation '%s' is not one of none, silu, swish", act);
    MRT_TRY(mrt_output_set(ctx, 0, dt, 3, x->shape));
    MRT_TRY(mrt_output_set(ctx, 1, dt, 3, (int64_t[]){batch, ch, kw - 1}));
    return MRT_STATUS_OK;
}

const mrt_opdef mrt_opdefs_attention[] = {
    {"", "Attention", 23, 3, 6, 1, 4, infer_attention, 0},
    {"", "Attention", 24, 3, 7, 1, 4, infer_attention, 0},
    {"", "LinearAttention", 27, 3, 6, 1, 2, infer_linear_attention, 0},
    {"", "CausalConvWithState", 27, 2, 4, 1, 2, infer_causal_conv_with_state, 0},
    {0},
};
