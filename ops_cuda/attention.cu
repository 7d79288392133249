// ONNX Attention 23/24 (3-D/4-D Q/K/V, GQA/MQA, different K/V head sizes, past/present KV, bool/float masks of rank
// 2-4 and short masks, is_causal, nonpad_kv_seqlen, every qk_matmul_output_mode, softcap, scale; float, double,
// float16, bfloat16), LinearAttention 27 (every update rule) and CausalConvWithState 27 on CUDA, as the CPU kernels
// (ops_cpu/attention.c). Attention: Q K^T and P V are minirt's tiled GEMM (ops_cuda/gemm.cuh, float accumulation, or
// double for double) batched over (batch, KV head, group); softcap, mask and softmax run in double, one thread per
// query row, with the CPU's order and rules. LinearAttention: one thread per (batch, KV head, value column), since the
// recurrence never mixes state columns; the state lives in a double workspace. CausalConvWithState: one thread per
// output.
#include <cmath>

#include "engine/opdef/attention.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/gemm.cuh"
#include "ops_cuda/segments.cuh"

namespace {

// A double rounded to dtype dt and back (engine/dtype.h mrt_round_to on the device).
__device__ __forceinline__ double round_to(int dt, double v)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: return v;
    case MRT_DTYPE_FLOAT16: return (double)mrt_cu_f16_to_f32(mrt_cu_f32_to_f16((float)v));
    case MRT_DTYPE_BFLOAT16: return (double)mrt_cu_bf16_to_f32(mrt_cu_f32_to_bf16((float)v));
    default: return (double)(float)v;
    }
}

// ---- Attention

// Where K or V of (b, kv head, position) sits: element strides of a [batch, heads, len, size] or [batch, len,
// heads * size] tensor.
struct kv_layout {
    int64_t bs, hs, rs; // batch, head, row strides
};

static kv_layout layout_of(bool rank3, int64_t heads, int64_t len, int64_t size)
{
    return rank3 ? kv_layout{len * heads * size, size, heads * size} : kv_layout{heads * len * size, len * size, size};
}

// dst [batch, kv heads, past + len, size] = past then the new rows (elements of `es` bytes).
template <typename E>
__global__ void concat_kernel(const E *past, const E *cur, E *dst, int64_t batch, int64_t heads, int64_t past_len,
                              int64_t len, int64_t size, kv_layout cl)
{
    int64_t total = past_len + len, n = batch * heads * total * size;
    MRT_CU_FOR(i, n)
    {
        int64_t d = i % size, t = (i / size) % total, bh = i / (size * total), h = bh % heads, b = bh / heads;
        dst[i] = t < past_len ? past[(bh * past_len + t) * size + d] : cur[b * cl.bs + h * cl.hs + (t - past_len) * cl.rs + d];
    }
}

struct row_params {
    int64_t batch, q_heads, q_len, total, past_len;
    int dt, mask_dt, qk_mode;
    bool causal, has_mask;
    double softcap;
    int64_t mstride[4], mlast;
    const int64_t *nonpad; // [batch], or NULL
};

// One query row of S (scale * Q K^T, in the compute type Acc): softcap, bias (mask, causal, nonpad), the optional
// qk output, softmax in double, and S overwritten with the probabilities rounded to the input type. Three passes
// recompute the biased score instead of keeping a row of doubles.
template <typename Acc>
__global__ void softmax_rows_kernel(Acc *S, const void *mask, void *oqk, row_params p)
{
    MRT_CU_FOR(row, p.batch * p.q_heads * p.q_len)
    {
        int64_t i = row % p.q_len, h = (row / p.q_len) % p.q_heads, b = row / (p.q_len * p.q_heads);
        int64_t offset = p.past_len, valid = p.total;
        if (p.nonpad) {
            valid = p.nonpad[b];
            offset = valid - p.q_len;
        }
        Acc *s_row = S + row * p.total;
        auto biased = [&](int64_t j, double *score, double *bias) {
            double s = (double)s_row[j];
            if (p.softcap > 0) s = p.softcap * tanh(s / p.softcap);
            double bj = 0;
            if (p.has_mask) {
                if (j >= p.mlast) {
                    bj = -INFINITY; // a short mask is padded with "masked"
                } else {
                    int64_t mi = b * p.mstride[0] + h * p.mstride[1] + i * p.mstride[2] + j * p.mstride[3];
                    bj = p.mask_dt == MRT_DTYPE_BOOL ? (((const uint8_t *)mask)[mi] ? 0 : -INFINITY)
                                                     : ld_any(p.mask_dt, mask, mi);
                }
            }
            if (p.causal && j > i + offset) bj += -INFINITY;
            if (p.nonpad && j >= valid) bj += -INFINITY;
            *score = s;
            *bias = bj;
        };
        bool all_masked = true;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < p.total; j++) {
            double s, bj;
            biased(j, &s, &bj);
            all_masked = all_masked && bj == -INFINITY;
            if (oqk && p.qk_mode <= 2) st_any(p.dt, oqk, row * p.total + j, p.qk_mode == 2 ? s + bj : s);
            if (s + bj > mx) mx = s + bj; // a NaN score stays NaN through exp and the sum
        }
        for (int64_t j = 0; j < p.total; j++) {
            double s, bj;
            biased(j, &s, &bj);
            sum += all_masked || mx == -INFINITY ? 0 : exp(s + bj - mx);
        }
        // the probabilities are rounded to the input type before P x V
        for (int64_t j = 0; j < p.total; j++) {
            double s, bj;
            biased(j, &s, &bj);
            double e = all_masked || mx == -INFINITY ? 0 : exp(s + bj - mx);
            double pr = round_to(p.dt, sum > 0 ? e / sum : 0);
            s_row[j] = (Acc)pr;
            if (oqk && p.qk_mode == 3) st_any(p.dt, oqk, row * p.total + j, pr);
        }
    }
}

template <typename E> struct attention_run {
    typedef typename mrt_cu_gemm::acc_of<E>::type Acc;

    // workspace: S [B, HQ, L, T] in Acc, then K and V as [B, HK, T, size] when there is a past and no present
    struct ws_layout {
        size_t s_bytes, k_bytes, v_bytes;
        size_t total() const { return s_bytes + k_bytes + v_bytes + 1; }
    };
    static ws_layout layout(mrt_op_ctx *ctx, const mrt_attention_geometry_t &g)
    {
        int64_t B = g.batch, HQ = g.q_heads, HK = g.kv_heads, L = g.q_len, T = g.total_len;
        bool need_k = g.past_len > 0 && !mrt_output(ctx, 1), need_v = g.past_len > 0 && !mrt_output(ctx, 2);
        ws_layout w;
        w.s_bytes = ((size_t)(B * HQ * L * T) * sizeof(Acc) + 255) / 256 * 256;
        w.k_bytes = need_k ? ((size_t)(B * HK * T * g.head) * sizeof(E) + 255) / 256 * 256 : 0;
        w.v_bytes = need_v ? (size_t)(B * HK * T * g.v_head) * sizeof(E) : 0;
        return w;
    }

    static mrt_status run(mrt_op_ctx *ctx, const mrt_attention_geometry_t &g)
    {
        const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
        const mrt_tensor *mask = mrt_input(ctx, 3), *pk = mrt_input(ctx, 4), *pv = mrt_input(ctx, 5);
        const mrt_tensor *nonpad = g.has_nonpad ? mrt_input(ctx, 6) : NULL;
        mrt_tensor *y = mrt_output(ctx, 0), *ok = mrt_output(ctx, 1), *ov = mrt_output(ctx, 2), *oqk = mrt_output(ctx, 3);
        cudaStream_t st = mrt_cu_stream(ctx);
        double scale = mrt_attr_float(ctx, "scale", 0.0f);
        if (!mrt_node_attr(ctx->node, "scale")) scale = g.head > 0 ? 1.0 / sqrt((double)g.head) : 1.0;
        int64_t B = g.batch, HQ = g.q_heads, HK = g.kv_heads, L = g.q_len, T = g.total_len, D = g.head,
                DV = g.v_head, group = HQ / HK;

        const ws_layout wl = layout(ctx, g);
        const size_t s_bytes = wl.s_bytes, k_bytes = wl.k_bytes;
        char *ws = (char *)mrt_workspace(ctx, wl.total());
        if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
        Acc *S = (Acc *)ws;

        // K and V as the GEMMs read them: the inputs themselves without a past, else past + new (the present output,
        // which is written in any case when requested)
        const E *kmat[2];
        kv_layout kl[2];
        for (int which = 0; which < 2; which++) {
            const mrt_tensor *cur = which ? v : k, *past = which ? pv : pk;
            mrt_tensor *pres = which ? ov : ok;
            int64_t size = which ? DV : D;
            kv_layout cl = layout_of(g.rank3, HK, g.kv_len, size);
            E *dst = pres ? (E *)pres->data : (E *)(ws + s_bytes + (which ? k_bytes : 0));
            int64_t n = B * HK * T * size;
            if ((pres || g.past_len > 0) && n > 0) {
                auto *kern = concat_kernel<E>;
                MRT_LAUNCH(kern, mrt_cu_blocks(n), MRT_CU_THREADS, 0, st, past ? (const E *)past->data : (const E *)NULL,
                           (const E *)cur->data, dst, B, HK, g.past_len, g.kv_len, size, cl);
            }
            if (g.past_len > 0) {
                kmat[which] = dst;
                kl[which] = layout_of(false, HK, T, size);
            } else {
                kmat[which] = (const E *)cur->data;
                kl[which] = cl;
            }
        }

        // S = scale * Q K^T over (batch, KV head, query head of the group)
        kv_layout ql = layout_of(g.rank3, HQ, L, D);
        mrt_cu_gemm::geom gs = mrt_cu_gemm::plain(L, T, D);
        gs.a_rs = ql.rs, gs.a_cs = 1;
        gs.b_rs = 1, gs.b_cs = kl[0].rs;
        gs.y_rs = T;
        gs.alpha = scale;
        gs.int_exact = false;
        mrt_cu_gemm::add_batch(&gs, B, ql.bs, kl[0].bs, 0, HQ * L * T);
        mrt_cu_gemm::add_batch(&gs, HK, group * ql.hs, kl[0].hs, 0, group * L * T);
        mrt_cu_gemm::add_batch(&gs, group, ql.hs, 0, 0, L * T);
        if (!mrt_cu_gemm::launch<E, E, Acc, Acc>(st, (const E *)q->data, kmat[0], (const Acc *)NULL, S, gs))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "attention scores: too many columns for one grid");

        row_params p{};
        p.batch = B, p.q_heads = HQ, p.q_len = L, p.total = T, p.past_len = g.past_len;
        p.dt = q->dtype;
        p.qk_mode = g.qk_mode;
        p.causal = mrt_attr_int(ctx, "is_causal", 0) != 0;
        p.softcap = mrt_attr_float(ctx, "softcap", 0.0f);
        p.nonpad = nonpad ? (const int64_t *)nonpad->data : NULL;
        if (mask) {
            // the mask's strides against [batch, q heads, q, kv] (0 on broadcast dims); its last dim may be short
            p.has_mask = true;
            p.mask_dt = mask->dtype;
            int64_t s = 1;
            for (int i = mask->rank - 1; i >= 0; i--) {
                int full = 4 - mask->rank + i;
                p.mstride[full] = mask->shape[i] == 1 && full != 3 ? 0 : s;
                s *= mask->shape[i];
            }
            p.mlast = mask->shape[mask->rank - 1];
        }
        int64_t rows = B * HQ * L;
        if (rows > 0 && T > 0) {
            auto *kern = softmax_rows_kernel<Acc>;
            MRT_LAUNCH(kern, mrt_cu_blocks(rows), MRT_CU_THREADS, 0, st, S, mask ? (const void *)mask->data : NULL,
                       oqk ? oqk->data : (void *)NULL, p);
        }

        // Y = P V
        kv_layout yl = layout_of(g.rank3, HQ, L, DV);
        mrt_cu_gemm::geom gy = mrt_cu_gemm::plain(L, DV, T);
        gy.a_rs = T, gy.a_cs = 1;
        gy.b_rs = kl[1].rs, gy.b_cs = 1;
        gy.y_rs = yl.rs;
        gy.int_exact = false;
        mrt_cu_gemm::add_batch(&gy, B, HQ * L * T, kl[1].bs, 0, yl.bs);
        mrt_cu_gemm::add_batch(&gy, HK, group * L * T, kl[1].hs, 0, group * yl.hs);
        mrt_cu_gemm::add_batch(&gy, group, L * T, 0, 0, yl.hs);
        if (!mrt_cu_gemm::launch<Acc, E, E, Acc>(st, (const Acc *)S, kmat[1], (const E *)NULL, (E *)y->data, gy))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "attention output: too many columns for one grid");
        MRT_CU_CHECK_LAUNCH(ctx, "attention kernels");
        return MRT_STATUS_OK;
    }
};

mrt_status cu_attention(mrt_op_ctx *ctx)
{
    mrt_attention_geometry_t g;
    MRT_TRY(mrt_attention_geometry(ctx, &g));
    switch (mrt_input(ctx, 0)->dtype) {
    case MRT_DTYPE_FLOAT: return attention_run<float>::run(ctx, g);
    case MRT_DTYPE_DOUBLE: return attention_run<double>::run(ctx, g);
    case MRT_DTYPE_FLOAT16: return attention_run<mrt_cu_half>::run(ctx, g);
    case MRT_DTYPE_BFLOAT16: return attention_run<mrt_cu_bf16>::run(ctx, g);
    default: return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(mrt_input(ctx, 0)->dtype));
    }
}

mrt_status cu_attention_workspace(mrt_op_ctx *ctx)
{
    mrt_attention_geometry_t g;
    MRT_TRY(mrt_attention_geometry(ctx, &g));
    switch (mrt_input(ctx, 0)->dtype) {
    case MRT_DTYPE_FLOAT: mrt_workspace_request(ctx, attention_run<float>::layout(ctx, g).total()); break;
    case MRT_DTYPE_DOUBLE: mrt_workspace_request(ctx, attention_run<double>::layout(ctx, g).total()); break;
    case MRT_DTYPE_FLOAT16: mrt_workspace_request(ctx, attention_run<mrt_cu_half>::layout(ctx, g).total()); break;
    case MRT_DTYPE_BFLOAT16: mrt_workspace_request(ctx, attention_run<mrt_cu_bf16>::layout(ctx, g).total()); break;
    default: break;
    }
    return MRT_STATUS_OK;
}

bool cu_attention_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *q = mrt_input(ctx, 0), *mask = mrt_input(ctx, 3);
    if (!q || !seg_float_dtype(q->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", q ? mrt_dtype_name(q->dtype) : "?"), false;
    if (mask && mask->dtype != MRT_DTYPE_BOOL && !seg_float_dtype(mask->dtype))
        return snprintf(why, len, "mask dtype %s is not supported by the CUDA kernel", mrt_dtype_name(mask->dtype)), false;
    return true;
}

// ---- LinearAttention

struct lin_params {
    int64_t B, T, HQ, HK, DK, DV;
    bool gated, delta, decay_per_key;
    int dt, state_dt, beta_heads;
    double scale;
};

// Thread (b, hk, m) runs the whole sequence for state column S[:, m] of KV head hk: decay, the delta rule's
// correction, the write k v'^T and the reads of the group's query heads only ever touch that column.
__global__ void linear_attention_kernel(const void *q, const void *k, const void *v, const void *past, const void *decay,
                                        const void *beta, void *y, void *present, double *state, lin_params p)
{
    MRT_CU_FOR(idx, p.B * p.HK * p.DV)
    {
        int64_t m = idx % p.DV, hk = (idx / p.DV) % p.HK, b = idx / (p.DV * p.HK), group = p.HQ / p.HK;
        int64_t s0 = (b * p.HK + hk) * p.DK * p.DV;
        double *S = state + s0;
        for (int64_t d = 0; d < p.DK; d++) S[d * p.DV + m] = past ? ld_any(p.state_dt, past, s0 + d * p.DV + m) : 0.0;
        for (int64_t t = 0; t < p.T; t++) {
            int64_t kbase = (b * p.T + t) * p.HK * p.DK + hk * p.DK, vbase = (b * p.T + t) * p.HK * p.DV + hk * p.DV;
            if (p.gated) {
                int64_t dbase = (b * p.T + t) * (p.decay_per_key ? p.HK * p.DK : p.HK);
                for (int64_t d = 0; d < p.DK; d++)
                    S[d * p.DV + m] *= exp(ld_any(p.dt, decay, p.decay_per_key ? dbase + hk * p.DK + d : dbase + hk));
            }
            double r = ld_any(p.dt, v, vbase + m);
            if (p.delta) {
                double bt = ld_any(p.dt, beta, (b * p.T + t) * p.beta_heads + (p.beta_heads == p.HK ? hk : 0)), acc = 0;
                for (int64_t d = 0; d < p.DK; d++) acc += S[d * p.DV + m] * ld_any(p.dt, k, kbase + d);
                r = bt * (r - acc);
            }
            for (int64_t d = 0; d < p.DK; d++) S[d * p.DV + m] += ld_any(p.dt, k, kbase + d) * r;
            for (int64_t hq = hk * group; hq < (hk + 1) * group; hq++) {
                int64_t qbase = (b * p.T + t) * p.HQ * p.DK + hq * p.DK, ybase = (b * p.T + t) * p.HQ * p.DV + hq * p.DV;
                double o = 0;
                for (int64_t d = 0; d < p.DK; d++) o += ld_any(p.dt, q, qbase + d) * S[d * p.DV + m];
                st_any(p.dt, y, ybase + m, p.scale * o);
            }
        }
        for (int64_t d = 0; present && d < p.DK; d++) st_any(p.state_dt, present, s0 + d * p.DV + m, S[d * p.DV + m]);
    }
}

// Every (batch, KV head)'s state [d_k, d_v] in double; none when there is nothing to compute
size_t linear_attention_workspace_bytes(const mrt_linear_attention_geometry_t &g)
{
    return g.batch * g.kv_heads * g.dv != 0 ? (size_t)(g.batch * g.kv_heads * g.dk * g.dv + 1) * sizeof(double) : 0;
}

mrt_status cu_linear_attention_workspace(mrt_op_ctx *ctx)
{
    mrt_linear_attention_geometry_t g;
    MRT_TRY(mrt_linear_attention_geometry(ctx, &g));
    mrt_workspace_request(ctx, linear_attention_workspace_bytes(g));
    return MRT_STATUS_OK;
}

mrt_status cu_linear_attention(mrt_op_ctx *ctx)
{
    mrt_linear_attention_geometry_t g;
    MRT_TRY(mrt_linear_attention_geometry(ctx, &g));
    const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
    const mrt_tensor *past = mrt_input(ctx, 3), *decay = mrt_input(ctx, 4), *beta = mrt_input(ctx, 5);
    mrt_tensor *y = mrt_output(ctx, 0), *present = mrt_output(ctx, 1);
    lin_params p{};
    p.B = g.batch, p.T = g.seq, p.HQ = g.q_heads, p.HK = g.kv_heads, p.DK = g.dk, p.DV = g.dv;
    p.gated = g.gated, p.delta = g.delta, p.decay_per_key = g.decay_per_key;
    p.dt = q->dtype, p.state_dt = past ? past->dtype : g.state_dtype;
    p.beta_heads = g.delta ? (int)beta->shape[2] : 1;
    p.scale = mrt_attr_float(ctx, "scale", 0.0f);
    if (p.scale == 0.0) p.scale = p.DK > 0 ? 1.0 / sqrt((double)p.DK) : 1.0;
    int64_t n = p.B * p.HK * p.DV;
    if (n == 0) return MRT_STATUS_OK;
    double *state = (double *)mrt_workspace(ctx, linear_attention_workspace_bytes(g));
    if (!state) return MRT_STATUS_OUT_OF_MEMORY;
    MRT_LAUNCH(linear_attention_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)q->data,
               (const void *)k->data, (const void *)v->data, past ? (const void *)past->data : NULL,
               decay ? (const void *)decay->data : NULL, beta ? (const void *)beta->data : NULL, y->data,
               present ? present->data : (void *)NULL, state, p);
    MRT_CU_CHECK_LAUNCH(ctx, "linear attention kernel");
    return MRT_STATUS_OK;
}

bool cu_linear_attention_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *q = mrt_input(ctx, 0), *past = mrt_input(ctx, 3);
    if (!q || !seg_float_dtype(q->dtype) || (past && !seg_float_dtype(past->dtype)))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", q ? mrt_dtype_name(q->dtype) : "?"), false;
    return true;
}

// ---- CausalConvWithState

struct conv_params {
    int64_t B, C, L, K;
    int dt, past_dt;
    bool silu;
};

// element p of channel row (b, c)'s padded sequence [past_state or zeros (K - 1), input]
__device__ __forceinline__ double padded_at(const void *x, const void *past, const conv_params &p, int64_t row, int64_t at)
{
    int64_t P = p.K - 1;
    if (at >= P) return ld_any(p.dt, x, row * p.L + at - P);
    return past ? ld_any(p.past_dt, past, row * P + at) : 0.0;
}

__global__ void causal_conv_kernel(const void *x, const void *w, const void *bias, const void *past, void *y,
                                   void *present, conv_params p)
{
    int64_t P = p.K - 1, per_row = p.L + (present ? P : 0);
    MRT_CU_FOR(i, p.B * p.C * per_row)
    {
        int64_t row = i / per_row, t = i % per_row, c = row % p.C;
        if (t >= p.L) { // present_state: the last K - 1 entries of the padded sequence
            st_any(p.dt, present, row * P + t - p.L, padded_at(x, past, p, row, t));
            continue;
        }
        double acc = bias ? ld_any(p.dt, bias, c) : 0.0;
        for (int64_t j = 0; j < p.K; j++) acc += ld_any(p.dt, w, c * p.K + j) * padded_at(x, past, p, row, t + j);
        if (p.silu) {
            acc = round_to(p.dt, acc);
            acc = acc / (1.0 + exp(-acc));
        }
        st_any(p.dt, y, row * p.L + t, acc);
    }
}

mrt_status cu_causal_conv(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *bias = mrt_input(ctx, 2), *past = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0), *present = mrt_output(ctx, 1);
    conv_params p{};
    p.B = x->shape[0], p.C = x->shape[1], p.L = x->shape[2], p.K = w->shape[2];
    p.dt = x->dtype, p.past_dt = past ? past->dtype : x->dtype;
    p.silu = strcmp(mrt_attr_string(ctx, "activation", "none"), "none") != 0;
    int64_t n = p.B * p.C * (p.L + (present ? p.K - 1 : 0));
    if (n == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(causal_conv_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data,
               (const void *)w->data, bias ? (const void *)bias->data : NULL, past ? (const void *)past->data : NULL,
               y->data, present ? present->data : (void *)NULL, p);
    MRT_CU_CHECK_LAUNCH(ctx, "causal conv kernel");
    return MRT_STATUS_OK;
}

bool cu_causal_conv_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *past = mrt_input(ctx, 3);
    if (!x || !seg_float_dtype(x->dtype) || (past && !seg_float_dtype(past->dtype)))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

} // namespace

// Every element of every output is written (Attention's qk output in each mode, LinearAttention's y and present,
// the conv's y and present).
extern "C" const mrt_kernel mrt_cuda_kernels_attention[] = {
    MRT_CU_ROW_SW("Attention", 23, cu_attention, cu_attention_supports, MRT_KERNEL_WRITES_ALL, cu_attention_workspace),
    MRT_CU_ROW_SW("LinearAttention", 27, cu_linear_attention, cu_linear_attention_supports, MRT_KERNEL_WRITES_ALL,
                  cu_linear_attention_workspace),
    MRT_CU_ROW_S("CausalConvWithState", 27, cu_causal_conv, cu_causal_conv_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
