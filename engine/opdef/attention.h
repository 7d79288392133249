/* Attention geometry shared by the opdef (validation, output shapes) and the CPU kernel. */
#pragma once

#include "engine/op.h"

typedef struct mrt_attention_geometry_t {
    bool rank3;                  /* Q/K/V given as [batch, seq, heads * size] */
    int64_t batch, q_heads, kv_heads, q_len, kv_len, past_len, total_len, head, k_head, v_head;
    bool has_nonpad;             /* opset 24's nonpad_kv_seqlen */
    int qk_mode;                 /* qk_matmul_output_mode */
} mrt_attention_geometry_t;

/* Validates Q, K, V, attn_mask, past_key/past_value (and nonpad_kv_seqlen) and fills g. */
mrt_status mrt_attention_geometry(const mrt_op_ctx *ctx, mrt_attention_geometry_t *g);
