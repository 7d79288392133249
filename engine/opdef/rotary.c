/* Opdef for RotaryEmbedding (23): X [B, S, hidden] (needs num_heads) or [B, N, S, H]; cos/sin caches
   [max_pos, R/2] with position_ids [B, S], or [B, S, R/2] without. */
#include "engine/registry.h"

static mrt_status infer_rotary(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *cosc = mrt_input(ctx, 1), *sinc = mrt_input(ctx, 2),
                     *pos = mrt_input(ctx, 3);
    char a[256], b[256];
    if (!x || !cosc || !sinc) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X, cos_cache and sin_cache are required");
    if (x->rank != 3 && x->rank != 4)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X must be 3-D or 4-D, got %s", mrt_tensor_describe(x, a, sizeof a));
    int64_t heads = x->rank == 4 ? x->shape[1] : mrt_attr_int(ctx, "num_heads", 0);
    if (heads <= 0 || (x->rank == 3 && x->shape[2] % heads))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "3-D X needs num_heads dividing its last dimension (%s)",
                           mrt_tensor_describe(x, a, sizeof a));
    int64_t head = x->rank == 4 ? x->shape[3] : x->shape[2] / heads;
    int64_t rot = mrt_attr_int(ctx, "rotary_embedding_dim", 0);
    if (rot == 0) rot = head;
    if (rot < 0 || rot > head || rot % 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "rotary_embedding_dim %lld must be even and at most the head size %lld",
                           (long long)rot, (long long)head);
    int want = pos ? 2 : 3;
    if (cosc->rank != want || sinc->rank != want || cosc->shape[want - 1] != rot / 2 ||
        sinc->shape[want - 1] != rot / 2 || cosc->dtype != x->dtype || sinc->dtype != x->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cos_cache %s / sin_cache %s must be %s[%s, %lld]",
                           mrt_tensor_describe(cosc, a, sizeof a), mrt_tensor_describe(sinc, b, sizeof b),
                           mrt_dtype_name(x->dtype), pos ? "max_position" : "batch, sequence", (long long)(rot / 2));
    int64_t batch = x->shape[0], seq = x->rank == 4 ? x->shape[2] : x->shape[1];
    if (pos && (pos->dtype != MRT_DTYPE_INT64 || pos->rank != 2 || pos->shape[0] != batch || pos->shape[1] != seq))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "position_ids %s must be int64[%lld, %lld] (batch, sequence)",
                           mrt_tensor_describe(pos, a, sizeof a), (long long)batch, (long long)seq);
    if (!pos && (cosc->shape[0] != batch || cosc->shape[1] != seq || sinc->shape[0] != batch || sinc->shape[1] != seq))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "without position_ids, cos_cache %s and sin_cache %s must be "
                           "[%lld, %lld, %lld] (batch, sequence, rotary_dim/2)",
                           mrt_tensor_describe(cosc, a, sizeof a), mrt_tensor_describe(sinc, b, sizeof b),
                           (long long)batch, (long long)seq, (long long)(rot / 2));
    if (pos && (sinc->shape[0] != cosc->shape[0]))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cos_cache and sin_cache have different lengths");
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_rotary[] = {
    {"", "RotaryEmbedding", 23, 3, 4, 1, 1, infer_rotary, 0},
    {0},
};
