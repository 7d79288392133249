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

/* The CPU kernel's workspace, in bytes per part (each a multiple of 64), for one (batch, query head) at a time and
 * `rows` query rows per GEMM block: K and V of the KV head gathered as [total, size] in the compute type (float,
 * or double for double), Q and Y blocks converted from/to float16/bfloat16, the score block [rows, total] and two
 * double rows (scores, bias). Infer requests `total`; the kernel carves the same layout. */
typedef struct mrt_attention_ws {
    int64_t rows;
    size_t k, v, q, s, y, row, total;
} mrt_attention_ws;

static inline bool mrt_attention_ws_mul(size_t *acc, int64_t f)
{
    if (f < 0 || (f > 0 && *acc > ((size_t)1 << 56) / (size_t)f)) return false;
    *acc *= (size_t)f;
    return true;
}

/* false when a part's size overflows */
static inline bool mrt_attention_ws_layout(const mrt_attention_geometry_t *g, mrt_dtype dt, mrt_attention_ws *w)
{
    size_t es = dt == MRT_DTYPE_DOUBLE ? 8 : 4;
    bool narrow = dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
    int64_t T = g->total_len, R = g->q_len;
    if (T > 0 && R > ((int64_t)1 << 22) / T) R = ((int64_t)1 << 22) / T > 0 ? ((int64_t)1 << 22) / T : 1;
    w->rows = R;
    size_t *parts[6] = {&w->k, &w->v, &w->q, &w->s, &w->y, &w->row};
    int64_t f[6][2] = {{T, g->head}, {T, g->v_head}, {narrow ? R : 0, g->head}, {R, T}, {narrow ? R : 0, g->v_head},
                       {2, T}};
    w->total = 0;
    for (int i = 0; i < 6; i++) {
        size_t n = i == 5 ? 8 : es;
        if (!mrt_attention_ws_mul(&n, f[i][0]) || !mrt_attention_ws_mul(&n, f[i][1])) return false;
        *parts[i] = (n + 63) / 64 * 64;
        w->total += *parts[i];
    }
    return true;
}

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
