/* CPU kernel: Attention 23/24 (see engine/opdef/attention.c for what it accepts). Scores, softmax and the
 * weighted sum are computed in double per query row, following onnx.reference: softcap before the mask, a
 * bool mask meaning "may attend", the causal frontier offset by the past (or nonpad) length, rows whose bias
 * is all -inf giving zero probabilities, and the probabilities rounded to the input type before P x V.
 * Straight loops, not BLAS: a reference kernel first. */
#include <math.h>
#include <string.h>

#include "engine/opdef/attention.h"
#include "engine/registry.h"

/* Element offset of (b, head, pos, d) in a Q/K/V tensor, 3-D or 4-D. */
static int64_t at(bool rank3, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h, int64_t s, int64_t d)
{
    return rank3 ? (b * len + s) * heads * size + h * size + d : ((b * heads + h) * len + s) * size + d;
}

static double round_to(mrt_dtype dt, double v)
{
    uint64_t buf = 0;
    mrt_store_f64(dt, &buf, 0, v);
    return mrt_load_f64(dt, &buf, 0);
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
    double scale = mrt_attr_float(ctx, "scale", 0.0f), softcap = mrt_attr_float(ctx, "softcap", 0.0f);
    if (!mrt_node_attr(ctx->node, "scale")) scale = 1.0 / sqrt((double)g.head);
    bool causal = mrt_attr_int(ctx, "is_causal", 0) != 0;
    int64_t T = g.total_len, group = g.q_heads / g.kv_heads;

    /* present_key / present_value: past then new, [batch, kv heads, total, size] */
    for (int which = 0; which < 2; which++) {
        mrt_tensor *o = which ? ov : ok;
        const mrt_tensor *past = which ? pv : pk, *cur = which ? v : k;
        int64_t size = which ? g.v_head : g.head;
        for (int64_t b = 0; o && b < g.batch; b++)
            for (int64_t h = 0; h < g.kv_heads; h++)
                for (int64_t t = 0; t < T; t++)
                    for (int64_t d = 0; d < size; d++) {
                        double val = t < g.past_len
                                         ? mrt_load_f64(dt, past->data, ((b * g.kv_heads + h) * g.past_len + t) * size + d)
                                         : mrt_load_f64(dt, cur->data, at(g.rank3, g.kv_heads, g.kv_len, size, b, h, t - g.past_len, d));
                        mrt_store_f64(dt, o->data, ((b * g.kv_heads + h) * T + t) * size + d, val);
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
    double *score = mrt_workspace(ctx, (size_t)(2 * T + g.v_head + 1) * sizeof(double)); /* requested by infer */
    if (!score) return MRT_STATUS_OUT_OF_MEMORY;
    double *bias = score + T, *acc = bias + T;
    for (int64_t b = 0; b < g.batch; b++) {
        int64_t offset = g.past_len, valid = T;
        if (nonpad) {
            valid = ((const int64_t *)nonpad->data)[b];
            offset = valid - g.q_len;
        }
        for (int64_t h = 0; h < g.q_heads; h++) {
            int64_t kh = h / group; /* KV heads repeat: query heads [kh*group, (kh+1)*group) share kv head kh */
            for (int64_t i = 0; i < g.q_len; i++) {
                bool all_masked = true;
                for (int64_t j = 0; j < T; j++) {
                    double s = 0;
                    for (int64_t d = 0; d < g.head; d++) {
                        double kv = j < g.past_len
                                        ? mrt_load_f64(dt, pk->data, ((b * g.kv_heads + kh) * g.past_len + j) * g.head + d)
                                        : mrt_load_f64(dt, k->data, at(g.rank3, g.kv_heads, g.kv_len, g.head, b, kh, j - g.past_len, d));
                        s += mrt_load_f64(dt, q->data, at(g.rank3, g.q_heads, g.q_len, g.head, b, h, i, d)) * kv;
                    }
                    s *= scale;
                    if (softcap > 0) s = softcap * tanh(s / softcap);
                    score[j] = s;
                    double bj = 0;
                    if (mask) {
                        if (j >= mlast) {
                            bj = -INFINITY; /* a short mask is padded with "masked" */
                        } else {
                            int64_t mi = b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
                            bj = mask->dtype == MRT_DTYPE_BOOL ? (((const uint8_t *)mask->data)[mi] ? 0 : -INFINITY)
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
                    for (int64_t j = 0; j < T; j++) mrt_store_f64(dt, oqk->data, row + j, g.qk_mode == 2 ? score[j] + bias[j] : score[j]);
                /* softmax of score + bias; a row with nothing to attend gives zeros */
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < T; j++) {
                    score[j] += bias[j];
                    if (score[j] > mx) mx = score[j]; /* a NaN score stays NaN through exp and the sum */
                }
                for (int64_t j = 0; j < T; j++) {
                    double e = all_masked ? 0 : mx == -INFINITY ? 0 : exp(score[j] - mx);
                    score[j] = e;
                    sum += e;
                }
                for (int64_t j = 0; j < T; j++) score[j] = round_to(dt, sum > 0 ? score[j] / sum : 0);
                if (oqk && g.qk_mode == 3)
                    for (int64_t j = 0; j < T; j++) mrt_store_f64(dt, oqk->data, row + j, score[j]);
                for (int64_t e = 0; e < g.v_head; e++) acc[e] = 0;
                for (int64_t j = 0; j < T; j++) {
                    for (int64_t e = 0; e < g.v_head; e++) {
                        double vv = j < g.past_len
                                        ? mrt_load_f64(dt, pv->data, ((b * g.kv_heads + kh) * g.past_len + j) * g.v_head + e)
                                        : mrt_load_f64(dt, v->data, at(g.rank3, g.kv_heads, g.kv_len, g.v_head, b, kh, j - g.past_len, e));
                        acc[e] += score[j] * vv;
                    }
                }
                for (int64_t e = 0; e < g.v_head; e++)
                    mrt_store_f64(dt, y->data, at(g.rank3, g.q_heads, g.q_len, g.v_head, b, h, i, e), acc[e]);
            }
        }
    }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_attention[] = {
    {"", "Attention", 23, mrt_cpu_attention, NULL},
    {"", "Attention", 24, mrt_cpu_attention, NULL},
    {0},
};
