/* Attention and LinearAttention geometry shared by the opdef (validation, output shapes) and the CPU kernel. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

typedef struct mrt_attention_geometry_t {
    bool rank3;                  /* Q/K/V given as [batch, seq, heads * size] */
    int64_t batch, q_heads, kv_heads, q_len, kv_len, past_len, total_len, head, k_head, v_head;
    bool has_nonpad;             /* opset 24's nonpad_kv_seqlen */
    int qk_mode;                 /* qk_matmul_output_mode */
} mrt_attention_geometry_t;

/* Validates Q, K, V, attn_mask, past_key/past_value (and nonpad_kv_seqlen) and fills g. */
mrt_status mrt_attention_geometry(const mrt_op_ctx *ctx, mrt_attention_geometry_t *g);

typedef struct mrt_linear_attention_geometry_t {
    int64_t batch, seq, q_heads, kv_heads, dk, dv;
    bool gated, delta;           /* update_rule: linear (neither), gated, delta, gated_delta (both) */
    bool decay_per_key;          /* decay [B, T, kv_heads * d_k] rather than [B, T, kv_heads] */
    mrt_dtype state_dtype;       /* past_state's dtype, else query's: present_state's dtype */
} mrt_linear_attention_geometry_t;

/* Validates LinearAttention's inputs and attributes and fills g. */
mrt_status mrt_linear_attention_geometry(const mrt_op_ctx *ctx, mrt_linear_attention_geometry_t *g);

#ifdef __cplusplus
}
#endif
