/* CPU kernels: Attention 23/24, LinearAttention 27, CausalConvWithState 27 (see engine/opdef/attention.c for what
 * they accept). Attention: per (batch, query head), Q K^T and P V are GEMMs (float, or double for double;
 * float16/bfloat16 converted to float) over blocks of query rows; softcap, mask and softmax run in double per
 * row, following onnx.reference: softcap before the mask, a bool mask meaning "may attend", the causal frontier
 * offset by the past (or nonpad) length, rows whose bias is all -inf giving zero probabilities, and the
 * probabilities rounded to the input type before P x V. */
#include <math.h>
#include <string.h>

#include "engine/opdef/attention.h"
#include "engine/registry.h"
#include "ops_cpu/blas.h"

/* Attention's workspace, in bytes per part (each a multiple of 64), for one (batch, query head) at a time and
   `rows` query rows per GEMM block: K and V of the KV head gathered as [total, size] in the compute type (float,
   or double for double), Q and Y blocks converted from/to float16/bfloat16, the score block [rows, total] and two
   double rows (scores, bias). The workspace hook requests `total`; run carves the same layout. */
typedef struct attention_ws {
    int64_t rows;
    size_t k, v, q, s, y, row, total;
} attention_ws;

static bool attention_ws_mul(size_t *acc, int64_t f)
{
    if (f < 0 || (f > 0 && *acc > ((size_t)1 << 56) / (size_t)f)) return false;
    *acc *= (size_t)f;
    return true;
}

/* false when a part's size overflows */
static bool attention_ws_layout_of(const mrt_attention_geometry_t *g, mrt_dtype dt, attention_ws *w)
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
        if (!attention_ws_mul(&n, f[i][0]) || !attention_ws_mul(&n, f[i][1])) return false;
        *parts[i] = (n + 63) / 64 * 64;
        w->total += *parts[i];
    }
    return true;
}

/* The layout, or the op failed naming the scores' size when it overflows */
static mrt_status attention_ws_get(mrt_op_ctx *ctx, const mrt_attention_geometry_t *g, attention_ws *w)
{
    if (attention_ws_layout_of(g, mrt_input(ctx, 0)->dtype, w)) return MRT_STATUS_OK;
    return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the attention scores [%lld, %lld] per head are too large",
                       (long long)g->q_len, (long long)g->total_len);
}

/* Element offset of (b, head, pos, d) in a Q/K/V tensor, 3-D or 4-D. */
static int64_t at(bool rank3, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h, int64_t s, int64_t d)
{
    return rank3 ? (b * len + s) * heads * size + h * size + d : ((b * heads + h) * len + s) * size + d;
}

/* A [rows, cols] matrix in the compute type (float, or double when dt is double) with a row stride. */
typedef struct mat {
    void *p;
    int64_t ld;
} mat;

static mat mat_at(const mat *m, bool dbl, int64_t row)
{
    return (mat){(char *)m->p + (size_t)(row * m->ld) * (dbl ? sizeof(double) : sizeof(float)), m->ld};
}

/* C[m, n] = alpha * A[m, k] * op(B) (B is [n, k] when trans_b, else [k, n]); an empty k gives zeros. */
static void gemm(bool dbl, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, mat a, mat b, mat c)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++) {
            mat r = mat_at(&c, dbl, i);
            memset(r.p, 0, (size_t)n * (dbl ? sizeof(double) : sizeof(float)));
        }
        return;
    }
    if (dbl) mrt_dgemm(false, trans_b, m, n, k, alpha, a.p, a.ld, b.p, b.ld, 0.0, c.p, c.ld);
    else mrt_sgemm(false, trans_b, m, n, k, (float)alpha, a.p, a.ld, b.p, b.ld, 0.0f, c.p, c.ld);
}

static double mat_get(const mat *m, bool dbl, int64_t r, int64_t c)
{
    return dbl ? ((const double *)m->p)[r * m->ld + c] : ((const float *)m->p)[r * m->ld + c];
}

static void mat_set(mat *m, bool dbl, int64_t r, int64_t c, double v)
{
    if (dbl) ((double *)m->p)[r * m->ld + c] = v;
    else ((float *)m->p)[r * m->ld + c] = (float)v;
}

/* [rows, size] of head h of a Q/K/V/Y tensor (3-D or 4-D) starting at sequence position s0, in the tensor's
   own dtype: a direct view when that dtype is the compute type. */
static mat view(const mrt_tensor *t, bool rank3, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h,
                int64_t s0)
{
    size_t es = (size_t)(mrt_dtype_bits(t->dtype) / 8);
    return (mat){(char *)t->data + (size_t)at(rank3, heads, len, size, b, h, s0, 0) * es,
                 rank3 ? heads * size : size};
}

/* Copy rows [s0, s0 + n) of head h (any float dtype, via double) into the compute-type matrix dst. */
static void gather(mat dst, bool dbl, const mrt_tensor *t, bool rank3, int64_t heads, int64_t len, int64_t size,
                   int64_t b, int64_t h, int64_t s0, int64_t n, int64_t dst_row)
{
    for (int64_t s = 0; s < n; s++)
        for (int64_t d = 0; d < size; d++)
            mat_set(&dst, dbl, dst_row + s, d,
                    mrt_load_f64(t->dtype, t->data, at(rank3, heads, len, size, b, h, s0 + s, d)));
}

/* K or V of KV head kh as [total, size]: the present output or the input itself when that is already in the
   compute type and contiguous per row, else gathered (past, then new) into buf. */
static mat kv_matrix(const mrt_attention_geometry_t *g, bool dbl, bool narrow, const mrt_tensor *cur,
                     const mrt_tensor *past, const mrt_tensor *present, int64_t size, int64_t b, int64_t kh, void *buf)
{
    if (!narrow && g->past_len == 0) return view(cur, g->rank3, g->kv_heads, g->kv_len, size, b, kh, 0);
    if (!narrow && present) return view(present, false, g->kv_heads, g->total_len, size, b, kh, 0);
    mat m = {buf, size};
    if (g->past_len) gather(m, dbl, past, false, g->kv_heads, g->past_len, size, b, kh, 0, g->past_len, 0);
    gather(m, dbl, cur, g->rank3, g->kv_heads, g->kv_len, size, b, kh, 0, g->kv_len, g->past_len);
    return m;
}

static mrt_status mrt_cpu_attention(mrt_op_ctx *ctx)
{
    mrt_attention_geometry_t g;
    MRT_TRY(mrt_attention_geometry(ctx, &g));
    const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
    const mrt_tensor *mask = mrt_input(ctx, 3), *pk = mrt_input(ctx, 4), *pv = mrt_input(ctx, 5);
    const mrt_tensor *nonpad = g.has_nonpad ? mrt_input(ctx, 6) : NULL;
    mrt_tensor *y = mrt_output(ctx, 0), *ok = mrt_output(ctx, 1), *ov = mrt_output(ctx, 2), *oqk = mrt_output(ctx, 3);
    mrt_dtype dt = q->dtype;
    bool dbl = dt == MRT_DTYPE_DOUBLE, narrow = dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
    double scale = mrt_attr_float(ctx, "scale", 0.0f), softcap = mrt_attr_float(ctx, "softcap", 0.0f);
    if (!mrt_node_attr(ctx->node, "scale")) scale = g.head > 0 ? 1.0 / sqrt((double)g.head) : 1.0;
    bool causal = mrt_attr_int(ctx, "is_causal", 0) != 0;
    int64_t T = g.total_len, group = g.q_heads / g.kv_heads;

    /* present_key / present_value: past then new, [batch, kv heads, total, size] */
    for (int which = 0; which < 2; which++) {
        mrt_tensor *o = which ? ov : ok;
        const mrt_tensor *past = which ? pv : pk, *cur = which ? v : k;
        int64_t size = which ? g.v_head : g.head, es = mrt_dtype_bits(dt) / 8;
        for (int64_t b = 0; o && b < g.batch; b++)
            for (int64_t h = 0; h < g.kv_heads; h++) {
                char *dst = (char *)o->data + (size_t)(((b * g.kv_heads + h) * T) * size * es);
                if (g.past_len)
                    memcpy(dst, (const char *)past->data + (size_t)(((b * g.kv_heads + h) * g.past_len) * size * es),
                           (size_t)(g.past_len * size * es));
                for (int64_t t = 0; t < g.kv_len; t++)
                    memcpy(dst + (size_t)((g.past_len + t) * size * es),
                           (const char *)cur->data + (size_t)(at(g.rank3, g.kv_heads, g.kv_len, size, b, h, t, 0) * es),
                           (size_t)(size * es));
            }
    }

    /* the mask's strides against [batch, q heads, q, kv] (0 on broadcast dims); its last dim may be short */
    int64_t mstride[4] = {0, 0, 0, 0}, mlast = 0;
    if (mask) {
        int64_t st = 1;
        for (int i = mask->rank - 1; i >= 0; i--) {
            int full = 4 - mask->rank + i;
            mstride[full] = mask->shape[i] == 1 && full != 3 ? 0 : st;
            st *= mask->shape[i];
        }
        mlast = mask->shape[mask->rank - 1];
    }
    attention_ws ws;
    MRT_TRY(attention_ws_get(ctx, &g, &ws));
    char *wsp = mrt_workspace(ctx, ws.total);
    if (!wsp) return MRT_STATUS_OUT_OF_MEMORY;
    void *kbuf = wsp, *vbuf = wsp + ws.k, *qbuf = wsp + ws.k + ws.v;
    mat S = {wsp + ws.k + ws.v + ws.q, T}, Yb = {wsp + ws.k + ws.v + ws.q + ws.s, g.v_head};
    double *score = (double *)(wsp + ws.k + ws.v + ws.q + ws.s + ws.y), *bias = score + T;
    for (int64_t b = 0; b < g.batch; b++) {
        int64_t offset = g.past_len, valid = T;
        if (nonpad) {
            valid = ((const int64_t *)nonpad->data)[b];
            offset = valid - g.q_len;
        }
        for (int64_t kh = 0; kh < g.kv_heads; kh++) {
            mat K = kv_matrix(&g, dbl, narrow, k, pk, ok, g.head, b, kh, kbuf);
            mat V = kv_matrix(&g, dbl, narrow, v, pv, ov, g.v_head, b, kh, vbuf);
            /* query heads [kh*group, (kh+1)*group) share KV head kh */
            for (int64_t h = kh * group; h < (kh + 1) * group; h++)
                for (int64_t i0 = 0; i0 < g.q_len; i0 += ws.rows) {
                    int64_t nr = g.q_len - i0 < ws.rows ? g.q_len - i0 : ws.rows;
                    mat Q = view(q, g.rank3, g.q_heads, g.q_len, g.head, b, h, i0);
                    if (narrow) {
                        Q = (mat){qbuf, g.head};
                        gather(Q, false, q, g.rank3, g.q_heads, g.q_len, g.head, b, h, i0, nr, 0);
                    }
                    gemm(dbl, true, nr, T, g.head, scale, Q, K, S); /* scale * Q K^T */
                    for (int64_t r = 0; r < nr; r++) {
                        int64_t i = i0 + r;
                        bool all_masked = true;
                        for (int64_t j = 0; j < T; j++) {
                            double s = mat_get(&S, dbl, r, j);
                            if (softcap > 0) s = softcap * tanh(s / softcap);
                            score[j] = s;
                            double bj = 0;
                            if (mask) {
                                if (j >= mlast) {
                                    bj = -INFINITY; /* a short mask is padded with "masked" */
                                } else {
                                    int64_t mi = b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
                                    bj = mask->dtype == MRT_DTYPE_BOOL
                                             ? (((const uint8_t *)mask->data)[mi] ? 0 : -INFINITY)
                                             : mrt_load_f64(dt, mask->data, mi);
                                }
                            }
                            if (causal && j > i + offset) bj += -INFINITY;
                            if (nonpad && j >= valid) bj += -INFINITY;
                            bias[j] = bj;
                            all_masked = all_masked && bj == -INFINITY;
                        }
                        int64_t row = ((b * g.q_heads + h) * g.q_len + i) * T;
                        if (oqk && g.qk_mode <= 2)
                            for (int64_t j = 0; j < T; j++)
                                mrt_store_f64(dt, oqk->data, row + j, g.qk_mode == 2 ? score[j] + bias[j] : score[j]);
                        /* softmax of score + bias in double; a row with nothing to attend gives zeros */
                        double mx = -INFINITY, sum = 0;
                        for (int64_t j = 0; j < T; j++) {
                            score[j] += bias[j];
                            if (score[j] > mx) mx = score[j]; /* a NaN score stays NaN through exp and the sum */
                        }
                        for (int64_t j = 0; j < T; j++) {
                            double e = all_masked || mx == -INFINITY ? 0 : exp(score[j] - mx);
                            score[j] = e;
                            sum += e;
                        }
                        /* the probabilities are rounded to the input type before P x V */
                        for (int64_t j = 0; j < T; j++) {
                            double p = mrt_round_to(dt, sum > 0 ? score[j] / sum : 0);
                            mat_set(&S, dbl, r, j, p);
                            if (oqk && g.qk_mode == 3) mrt_store_f64(dt, oqk->data, row + j, p);
                        }
                    }
                    mat Y = narrow ? Yb : view(y, g.rank3, g.q_heads, g.q_len, g.v_head, b, h, i0);
                    gemm(dbl, false, nr, g.v_head, T, 1.0, S, V, Y); /* P V */
                    for (int64_t r = 0; narrow && r < nr; r++)
                        for (int64_t e = 0; e < g.v_head; e++)
                            mrt_store_f64(dt, y->data, at(g.rank3, g.q_heads, g.q_len, g.v_head, b, h, i0 + r, e),
                                          mat_get(&Yb, false, r, e));
                }
        }
    }
    return MRT_STATUS_OK;
}

/* LinearAttention: the recurrence run token by token, one KV head at a time (heads are independent), with the
 * state in double. Per token: decay the state (rows by exp(g) per key dim, or all by one exp(g)), the delta
 * rule's correction v' = beta * (v - S^T k) read from the decayed state, the write S += k v'^T, then every
 * query head of the group reads o = scale * q^T S. */
/* One KV head's state [d_k, d_v], the retrieved row [d_v] and the decay factors [d_k], in double (the opdef
   refused sizes whose byte count overflows) */
static size_t linear_attention_workspace_bytes(const mrt_linear_attention_geometry_t *g)
{
    return (size_t)(g->dk * g->dv + g->dv + g->dk + 1) * sizeof(double);
}

static mrt_status mrt_cpu_linear_attention(mrt_op_ctx *ctx)
{
    mrt_linear_attention_geometry_t g;
    MRT_TRY(mrt_linear_attention_geometry(ctx, &g));
    const mrt_tensor *q = mrt_input(ctx, 0), *k = mrt_input(ctx, 1), *v = mrt_input(ctx, 2);
    const mrt_tensor *past = mrt_input(ctx, 3), *decay = mrt_input(ctx, 4), *beta = mrt_input(ctx, 5);
    mrt_tensor *y = mrt_output(ctx, 0), *present = mrt_output(ctx, 1);
    mrt_dtype dt = q->dtype;
    int64_t B = g.batch, T = g.seq, HQ = g.q_heads, HK = g.kv_heads, DK = g.dk, DV = g.dv, group = HQ / HK;
    double scale = mrt_attr_float(ctx, "scale", 0.0f);
    if (scale == 0.0) scale = DK > 0 ? 1.0 / sqrt((double)DK) : 1.0;
    double *S = mrt_workspace(ctx, linear_attention_workspace_bytes(&g));
    if (!S) return MRT_STATUS_OUT_OF_MEMORY;
    double *ret = S + DK * DV, *fac = ret + DV;
    for (int64_t b = 0; b < B; b++)
        for (int64_t hk = 0; hk < HK; hk++) {
            int64_t s0 = (b * HK + hk) * DK * DV;
            for (int64_t i = 0; i < DK * DV; i++) S[i] = past ? mrt_load_f64(past->dtype, past->data, s0 + i) : 0.0;
            for (int64_t t = 0; t < T; t++) {
                int64_t kbase = (b * T + t) * HK * DK + hk * DK, vbase = (b * T + t) * HK * DV + hk * DV;
                if (g.gated) {
                    int64_t dbase = (b * T + t) * (g.decay_per_key ? HK * DK : HK);
                    for (int64_t d = 0; d < DK; d++)
                        fac[d] = exp(mrt_load_f64(dt, decay->data, g.decay_per_key ? dbase + hk * DK + d : dbase + hk));
                    for (int64_t d = 0; d < DK; d++)
                        for (int64_t m = 0; m < DV; m++) S[d * DV + m] *= fac[d];
                }
                for (int64_t m = 0; m < DV; m++) ret[m] = mrt_load_f64(dt, v->data, vbase + m);
                if (g.delta) {
                    int64_t nb = beta->shape[2]; /* kv_heads, or 1 shared by all heads */
                    double bt = mrt_load_f64(dt, beta->data, (b * T + t) * nb + (nb == HK ? hk : 0));
                    for (int64_t m = 0; m < DV; m++) {
                        double r = 0;
                        for (int64_t d = 0; d < DK; d++) r += S[d * DV + m] * mrt_load_f64(dt, k->data, kbase + d);
                        ret[m] = bt * (ret[m] - r);
                    }
                }
                for (int64_t d = 0; d < DK; d++) {
                    double kd = mrt_load_f64(dt, k->data, kbase + d);
                    for (int64_t m = 0; m < DV; m++) S[d * DV + m] += kd * ret[m];
                }
                for (int64_t hq = hk * group; hq < (hk + 1) * group; hq++) {
                    int64_t qbase = (b * T + t) * HQ * DK + hq * DK, ybase = (b * T + t) * HQ * DV + hq * DV;
                    for (int64_t m = 0; m < DV; m++) ret[m] = 0;
                    for (int64_t d = 0; d < DK; d++) {
                        double qd = mrt_load_f64(dt, q->data, qbase + d);
                        for (int64_t m = 0; m < DV; m++) ret[m] += qd * S[d * DV + m];
                    }
                    for (int64_t m = 0; m < DV; m++) mrt_store_f64(dt, y->data, ybase + m, scale * ret[m]);
                }
            }
            if (present)
                for (int64_t i = 0; i < DK * DV; i++) mrt_store_f64(g.state_dtype, present->data, s0 + i, S[i]);
        }
    return MRT_STATUS_OK;
}

/* CausalConvWithState: over the sequence [past_state (or zeros), input] of length k - 1 + L, y[t] = bias +
 * sum_j w[j] * seq[t + j]; the conv result is rounded to the input type before the optional SiLU (as
 * onnx.reference does), and present_state is the last k - 1 entries of that sequence. */
/* element p of one channel's padded sequence [past_state or zeros (P), input] */
static double padded_at(const mrt_tensor *x, const mrt_tensor *past, int64_t xrow, int64_t prow, int64_t P, int64_t p)
{
    if (p >= P) return mrt_load_f64(x->dtype, x->data, xrow + p - P);
    return past ? mrt_load_f64(past->dtype, past->data, prow + p) : 0.0;
}

static mrt_status mrt_cpu_causal_conv_with_state(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *bias = mrt_input(ctx, 2),
                     *past = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0), *present = mrt_output(ctx, 1);
    mrt_dtype dt = x->dtype;
    int64_t B = x->shape[0], C = x->shape[1], L = x->shape[2], K = w->shape[2], P = K - 1;
    bool silu = strcmp(mrt_attr_string(ctx, "activation", "none"), "none") != 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            int64_t xrow = (b * C + c) * L, prow = (b * C + c) * P;
            for (int64_t t = 0; t < L; t++) {
                double acc = bias ? mrt_load_f64(dt, bias->data, c) : 0.0;
                for (int64_t j = 0; j < K; j++)
                    acc += mrt_load_f64(dt, w->data, c * K + j) * padded_at(x, past, xrow, prow, P, t + j);
                if (silu) {
                    acc = mrt_round_to(dt, acc);
                    acc = acc / (1.0 + exp(-acc));
                }
                mrt_store_f64(dt, y->data, xrow + t, acc);
            }
            for (int64_t p = 0; present && p < P; p++)
                mrt_store_f64(dt, present->data, prow + p, padded_at(x, past, xrow, prow, P, L + p));
        }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ workspaces (engine/registry.h) */

static mrt_status mrt_cpu_attention_workspace(mrt_op_ctx *ctx)
{
    mrt_attention_geometry_t g;
    MRT_TRY(mrt_attention_geometry(ctx, &g));
    attention_ws ws;
    MRT_TRY(attention_ws_get(ctx, &g, &ws));
    mrt_workspace_request(ctx, ws.total);
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_linear_attention_workspace(mrt_op_ctx *ctx)
{
    mrt_linear_attention_geometry_t g;
    MRT_TRY(mrt_linear_attention_geometry(ctx, &g));
    mrt_workspace_request(ctx, linear_attention_workspace_bytes(&g));
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_attention[] = {
    {"", "Attention", 23, mrt_cpu_attention, NULL, NULL, NULL, 0, mrt_cpu_attention_workspace},
    {"", "Attention", 24, mrt_cpu_attention, NULL, NULL, NULL, 0, mrt_cpu_attention_workspace},
    {"", "LinearAttention", 27, mrt_cpu_linear_attention, NULL, NULL, NULL, 0, mrt_cpu_linear_attention_workspace},
    {"", "CausalConvWithState", 27, mrt_cpu_causal_conv_with_state, NULL},
    {0},
};
