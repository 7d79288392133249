/* The CUDA attention family (ops_cuda/attention.cu: Attention 23/24, LinearAttention 27, CausalConvWithState 27)
 * against the CPU kernels (tests/harness.h th_cuda_check): 3-D and 4-D inputs, GQA, different K/V head sizes, past
 * KV and the present outputs, bool/float masks of rank 2-4 (broadcast and short), causal, nonpad_kv_seqlen, every
 * qk_matmul_output_mode, softcap and scale, float16/bfloat16/double, empty sequences; every LinearAttention update
 * rule with per-key and per-head decay, shared beta, GQA and a past state; the conv with and without past, bias, SiLU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct att_shape {
    bool rank3;
    int64_t b, hq, hk, l, s, past, d, dv;
} att_shape;

/* mask: 0 none, 1 bool [L, T], 2 float [B, 1, L, T], 3 bool [B, HQ, L, T], 4 float [1, T - 1] (short), 5 bool [T] */
static void attention_case(const char *label, int opset, mrt_dtype dt, att_shape g, int mask_kind, bool causal,
                           int qk_mode, float softcap, float scale, bool nonpad)
{
    th_rng r;
    th_rng_init(&r, th_seed(label));
    int64_t T = g.past + g.s;
    int64_t qs4[4] = {g.b, g.hq, g.l, g.d}, ks4[4] = {g.b, g.hk, g.s, g.d}, vs4[4] = {g.b, g.hk, g.s, g.dv};
    int64_t qs3[3] = {g.b, g.l, g.hq * g.d}, ks3[3] = {g.b, g.s, g.hk * g.d}, vs3[3] = {g.b, g.s, g.hk * g.dv};
    int64_t pks[4] = {g.b, g.hk, g.past, g.d}, pvs[4] = {g.b, g.hk, g.past, g.dv};
    mrt_tensor q = g.rank3 ? th_rand(&r, dt, 3, qs3, -2, 2) : th_rand(&r, dt, 4, qs4, -2, 2);
    mrt_tensor k = g.rank3 ? th_rand(&r, dt, 3, ks3, -2, 2) : th_rand(&r, dt, 4, ks4, -2, 2);
    mrt_tensor v = g.rank3 ? th_rand(&r, dt, 3, vs3, -2, 2) : th_rand(&r, dt, 4, vs4, -2, 2);
    mrt_tensor pk = th_rand(&r, dt, 4, pks, -2, 2), pv = th_rand(&r, dt, 4, pvs, -2, 2), m = {0}, np = {0};
    th_case *c = th_begin("Attention", "", opset);
    th_input(c, &q);
    th_input(c, &k);
    th_input(c, &v);
    if (mask_kind) {
        int64_t ms[4][4] = {{g.l, T}, {g.b, 1, g.l, T}, {g.b, g.hq, g.l, T}, {1, T > 1 ? T - 1 : T}};
        int rank[4] = {2, 4, 4, 2};
        if (mask_kind == 5) m = th_rand(&r, MRT_DTYPE_BOOL, 1, &T, 0, 1);
        else m = th_rand(&r, mask_kind == 2 || mask_kind == 4 ? dt : MRT_DTYPE_BOOL, rank[mask_kind - 1],
                         ms[mask_kind - 1], -3, 1);
        th_input(c, &m);
    } else {
        th_input_absent(c);
    }
    if (g.past) {
        th_input(c, &pk);
        th_input(c, &pv);
    } else if (nonpad) {
        th_input_absent(c);
        th_input_absent(c);
    }
    if (nonpad) {
        int64_t vals[4];
        for (int64_t i = 0; i < g.b; i++) vals[i] = th_rng_int(&r, 1, T);
        np = th_vec_i64(g.b, vals);
        th_input(c, &np);
    }
    if (g.rank3) {
        th_attr_int(c, "q_num_heads", g.hq);
        th_attr_int(c, "kv_num_heads", g.hk);
    }
    if (causal) th_attr_int(c, "is_causal", 1);
    if (qk_mode) th_attr_int(c, "qk_matmul_output_mode", qk_mode);
    if (softcap > 0) th_attr_float(c, "softcap", softcap);
    if (scale > 0) th_attr_float(c, "scale", scale);
    /* float GEMMs sum in another order than the CPU's sgemm */
    th_cuda_check(c, 4, 4, label);
    mrt_tensor *all[] = {&q, &k, &v, &pk, &pv, &m, &np};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->data) mrt_tensor_release(all[i]);
    th_free(c);
}

Test(cuda_attention, shapes_and_heads)
{
    th_cuda_require();
    const att_shape shapes[] = {
        {false, 2, 4, 2, 3, 5, 0, 8, 6},  {false, 1, 3, 3, 7, 7, 0, 5, 5}, {true, 2, 4, 1, 3, 5, 0, 4, 6},
        {true, 1, 2, 2, 1, 9, 0, 16, 16}, {false, 2, 2, 1, 0, 4, 0, 4, 4}, {false, 1, 2, 2, 3, 0, 0, 4, 4},
        {false, 3, 6, 3, 17, 33, 0, 7, 3}, {false, 1, 1, 1, 2, 3, 0, 0, 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[96];
        snprintf(label, sizeof label, "attention shape %zu", i);
        attention_case(label, 23, MRT_DTYPE_FLOAT, shapes[i], 0, false, 0, 0, 0, false);
    }
}

Test(cuda_attention, past_masks_causal_modes)
{
    th_cuda_require();
    const att_shape shapes[] = {{false, 2, 4, 2, 3, 2, 4, 8, 6}, {true, 1, 2, 1, 1, 1, 6, 4, 4}, {false, 1, 2, 2, 4, 4, 0, 4, 4}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int mask = 0; mask <= 5; mask++)
            for (int mode = 0; mode <= 3; mode++) {
                char label[96];
                snprintf(label, sizeof label, "attention shape %zu mask %d mode %d", i, mask, mode);
                attention_case(label, 23, MRT_DTYPE_FLOAT, shapes[i], mask, (mask + mode) % 2 == 0, mode,
                               mode == 2 ? 2.5f : 0, mode == 1 ? 0.3f : 0, false);
            }
}

Test(cuda_attention, nonpad_kv_seqlen)
{
    th_cuda_require();
    att_shape g = {false, 3, 2, 1, 2, 6, 0, 4, 4};
    attention_case("attention nonpad", 24, MRT_DTYPE_FLOAT, g, 0, false, 0, 0, 0, true);
    attention_case("attention nonpad causal mask", 24, MRT_DTYPE_FLOAT, g, 1, true, 2, 0, 0, true);
}

Test(cuda_attention, other_dtypes)
{
    th_cuda_require();
    att_shape g = {false, 2, 4, 2, 3, 2, 3, 8, 6}, g3 = {true, 1, 2, 1, 2, 5, 0, 4, 4};
    attention_case("attention double", 23, MRT_DTYPE_DOUBLE, g, 2, true, 3, 0, 0, false);
    attention_case("attention float16", 23, MRT_DTYPE_FLOAT16, g, 1, false, 0, 0, 0, false);
    attention_case("attention float16 3-D", 24, MRT_DTYPE_FLOAT16, g3, 4, true, 2, 5.0f, 0, false);
    attention_case("attention bfloat16", 23, MRT_DTYPE_BFLOAT16, g, 3, true, 1, 0, 0.5f, false);
}

static void linear_case(const char *label, mrt_dtype dt, const char *rule, int64_t b, int64_t t, int64_t hq, int64_t hk,
                        int64_t dk, int64_t dv, bool per_key, bool beta_shared, bool past)
{
    th_rng r;
    th_rng_init(&r, th_seed(label));
    int64_t qs[3] = {b, t, hq * dk}, ks[3] = {b, t, hk * dk}, vs[3] = {b, t, hk * dv}, ps[4] = {b, hk, dk, dv};
    int64_t ds[3] = {b, t, per_key ? hk * dk : hk}, bs[3] = {b, t, beta_shared ? 1 : hk};
    mrt_tensor q = th_rand(&r, dt, 3, qs, -1, 1), k = th_rand(&r, dt, 3, ks, -1, 1), v = th_rand(&r, dt, 3, vs, -1, 1);
    mrt_tensor p = th_rand(&r, dt, 4, ps, -1, 1), d = th_rand(&r, dt, 3, ds, -0.5, 0), be = th_rand(&r, dt, 3, bs, 0, 1);
    bool gated = strstr(rule, "gated") != NULL, delta = strstr(rule, "delta") != NULL;
    th_case *c = th_begin("LinearAttention", "", 27);
    th_input(c, &q);
    th_input(c, &k);
    th_input(c, &v);
    if (past) th_input(c, &p);
    else th_input_absent(c);
    if (gated) th_input(c, &d);
    else th_input_absent(c);
    if (delta) th_input(c, &be);
    th_attr_int(c, "q_num_heads", hq);
    th_attr_int(c, "kv_num_heads", hk);
    th_attr_string(c, "update_rule", rule);
    th_cuda_check(c, 2, 1, label);
    mrt_tensor *all[] = {&q, &k, &v, &p, &d, &be};
    for (size_t i = 0; i < 6; i++) mrt_tensor_release(all[i]);
    th_free(c);
}

Test(cuda_attention, linear_attention)
{
    th_cuda_require();
    static const char *const rules[] = {"linear", "gated", "delta", "gated_delta"};
    for (int i = 0; i < 4; i++) {
        char label[96];
        snprintf(label, sizeof label, "linear %s", rules[i]);
        linear_case(label, MRT_DTYPE_FLOAT, rules[i], 2, 5, 4, 2, 3, 5, i % 2, false, i >= 2);
        snprintf(label, sizeof label, "linear %s mqa shared beta", rules[i]);
        linear_case(label, MRT_DTYPE_DOUBLE, rules[i], 1, 7, 3, 1, 4, 2, false, true, i < 2);
    }
    linear_case("linear fp16", MRT_DTYPE_FLOAT16, "gated_delta", 2, 3, 2, 2, 4, 4, true, false, true);
    linear_case("linear empty seq", MRT_DTYPE_FLOAT, "gated_delta", 2, 0, 2, 2, 4, 4, false, false, true);
}

static void conv_case(const char *label, mrt_dtype dt, int64_t b, int64_t ch, int64_t l, int64_t kw, bool bias,
                      bool past, const char *act)
{
    th_rng r;
    th_rng_init(&r, th_seed(label));
    int64_t xs[3] = {b, ch, l}, ws[3] = {ch, 1, kw}, ps[3] = {b, ch, kw - 1};
    mrt_tensor x = th_rand(&r, dt, 3, xs, -2, 2), w = th_rand(&r, dt, 3, ws, -1, 1), bb = th_rand(&r, dt, 1, &ch, -1, 1);
    mrt_tensor p = th_rand(&r, dt, 3, ps, -2, 2);
    th_case *c = th_begin("CausalConvWithState", "", 27);
    th_input(c, &x);
    th_input(c, &w);
    if (bias) th_input(c, &bb);
    else th_input_absent(c);
    if (past) th_input(c, &p);
    if (act) th_attr_string(c, "activation", act);
    th_cuda_check(c, 2, 1, label);
    mrt_tensor *all[] = {&x, &w, &bb, &p};
    for (size_t i = 0; i < 4; i++) mrt_tensor_release(all[i]);
    th_free(c);
}

Test(cuda_attention, causal_conv_with_state)
{
    th_cuda_require();
    conv_case("conv plain", MRT_DTYPE_FLOAT, 2, 3, 7, 4, false, false, NULL);
    conv_case("conv bias past silu", MRT_DTYPE_FLOAT, 2, 5, 1, 3, true, true, "silu");
    conv_case("conv short input", MRT_DTYPE_DOUBLE, 1, 2, 2, 5, true, false, "silu");
    conv_case("conv k1", MRT_DTYPE_FLOAT, 3, 2, 6, 1, true, false, NULL);
    conv_case("conv fp16 silu", MRT_DTYPE_FLOAT16, 2, 4, 9, 3, true, true, "silu");
    conv_case("conv empty", MRT_DTYPE_FLOAT, 2, 3, 0, 3, false, true, NULL);
}
