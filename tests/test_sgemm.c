/* minirt's float32 GEMM (ops_cpu/sgemm.c) against its contract: every C element is exactly the fmaf() chain over k
 * in increasing order (from 0, or from C when accumulating), then + bias, then the epilogue - bit for bit, for
 * every tile tail, k-block boundary, operand layout, fused epilogue and thread count. The reference is the plain
 * scalar loop. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/threadpool.h"
#include "harness.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/vmath.h"

typedef struct gcase {
    int64_t m, n, k;
    bool trans_a, b_cols_strided, accumulate, bias, pack_a, pack_b;
    int chain; /* the fused epilogue: 0 none, else one of chains[] below */
    bool specials; /* rows 0, 1, 2 of A start with NaN, +inf, -inf (Relu and Clip let NaN through: the tile's
                      in-register epilogue must too) */
} gcase;

/* Epilogues the fusion pass builds (engine/fuse.c), applied to each finished block of rows */
enum { N_CHAINS = 7 };
static const mrt_post_kind chains[N_CHAINS][4] = {
    {MRT_POST_BATCHNORM, MRT_POST_ADD, MRT_POST_RELU}, {MRT_POST_BATCHNORM, MRT_POST_CLIP},
    {MRT_POST_BATCHNORM, MRT_POST_SILU},               {MRT_POST_ADD, MRT_POST_SIGMOID},
    {MRT_POST_RELU},                                   {MRT_POST_BATCHNORM, MRT_POST_ADD, MRT_POST_CLIP},
    {MRT_POST_BATCHNORM, MRT_POST_RELU},
};
static const int chain_len[N_CHAINS] = {3, 2, 2, 2, 1, 3, 2};

/* one element through op (the formulas of engine/epilogue.h, spelled out) */
static float post_ref(const mrt_post_op *op, float v, int64_t channel, int64_t at)
{
    float s;
    switch (op->kind) {
    case MRT_POST_BATCHNORM: {
        mrt_bn_coef k = op->bn[channel];
        return fmaf(v, k.a_hi, k.b_hi) + fmaf(v, k.a_lo, k.b_lo);
    }
    case MRT_POST_ADD: return v + op->other[at];
    case MRT_POST_RELU: return v < 0.0f ? 0.0f : v;
    case MRT_POST_CLIP: return v < op->lo ? op->lo : v > op->hi ? op->hi : v;
    case MRT_POST_SIGMOID: mrt_vsigmoid_f32(&s, &v, 1); return s;
    case MRT_POST_SILU: mrt_vsigmoid_f32(&s, &v, 1); return v * s;
    default: cr_assert_fail("unexpected post-op"); return v;
    }
}

/* n floats, 64-byte aligned (C11's aligned_alloc wants a size that is a multiple of the alignment) */
static float *floats(int64_t n) { return aligned_alloc(64, ((size_t)(n > 0 ? n : 1) * sizeof(float) + 127) & ~(size_t)63); }

static float *rand_floats(th_rng *r, int64_t n)
{
    float *v = floats(n);
    for (int64_t i = 0; i < n; i++) v[i] = (float)th_rng_uniform(r, -1, 1);
    return v;
}

/* A(i, kk) and B(kk, j) as the case lays them out */
static float a_at(const gcase *g, const float *a, int64_t i, int64_t kk) { return g->trans_a ? a[kk * g->m + i] : a[i * g->k + kk]; }
static float b_at(const gcase *g, const float *b, int64_t kk, int64_t j) { return g->b_cols_strided ? b[j * g->k + kk] : b[kk * g->n + j]; }

static void run_case(th_rng *r, const gcase *g, mrt_threadpool *pool, int threads)
{
    float *a = rand_floats(r, g->m * g->k), *b = rand_floats(r, g->k * g->n), *bias = rand_floats(r, g->m);
    float *c0 = rand_floats(r, g->m * g->n), *c = floats(g->m * g->n + 16);
    memcpy(c, c0, (size_t)(g->m * g->n) * sizeof(float));
    float *ap = NULL, *bp = NULL;
    int64_t a_rs = g->trans_a ? 1 : g->k, a_cs = g->trans_a ? g->m : 1;
    static const float special[3] = {NAN, INFINITY, -INFINITY};
    for (int64_t i = 0; g->specials && i < 3 && i < g->m; i++) a[i * a_rs] = special[i];
    if (g->pack_a) {
        ap = floats(mrt_sgemm_packed_a_floats(g->m, g->k));
        mrt_sgemm_pack_a(a, a_rs, a_cs, g->m, g->k, ap);
    }
    mrt_sgemm_b bs = {.b = b, .rs = g->b_cols_strided ? 1 : g->n, .cs = g->b_cols_strided ? g->k : 1};
    if (g->pack_b) {
        bp = floats(mrt_sgemm_packed_b_floats(g->k, g->n));
        mrt_sgemm_pack_b(b, bs.rs, bs.cs, g->k, g->n, bp);
        bs.packed = bp;
    }
    /* the epilogue's channel 0 and flat index 0 sit before C's first row: rows are channels 3.., C[0][0] index 5 */
    enum { CH0 = 3, AT0 = 5 };
    mrt_epilogue ep = {0};
    mrt_bn_coef *bn = calloc((size_t)(g->m + CH0), sizeof *bn);
    float *other = rand_floats(r, g->m * g->n + AT0);
    for (int64_t i = 0; i < g->m + CH0; i++)
        bn[i] = mrt_bn_coef_make(th_rng_uniform(r, 0.5, 2), th_rng_uniform(r, -1, 1));
    if (g->chain > 0) {
        ep.n_ops = chain_len[g->chain - 1];
        for (int k = 0; k < ep.n_ops; k++)
            ep.ops[k] = (mrt_post_op){.kind = chains[g->chain - 1][k], .bn = bn, .other = other, .lo = -0.5f,
                                      .hi = 1.0f};
    }
    mrt_sgemm_out out = {.c = c, .ldc = g->n, .accumulate = g->accumulate, .bias = g->bias ? bias : NULL,
                         .ep = g->chain > 0 ? &ep : NULL, .ep_channel0 = CH0, .ep_at0 = AT0};
    int64_t wsf = mrt_sgemm_workspace_floats(g->m, g->n, g->k, g->pack_a, g->pack_b, threads);
    float *ws = floats(wsf);
    mrt_op_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.pool = pool;
    ctx.n_threads = threads;
    mrt_sgemm_run(&ctx, g->m, g->n, g->k, ap, a, a_rs, a_cs, &bs, &out, ws);
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            /* the contract (sgemm.h): per k block an fma chain from 0, block sums added in order */
            float acc = g->accumulate ? c0[i * g->n + j] : 0.0f;
            for (int64_t k0 = 0; k0 < g->k; k0 += MRT_SGEMM_K_BLOCK) {
                float s = 0.0f;
                for (int64_t kk = k0; kk < g->k && kk < k0 + MRT_SGEMM_K_BLOCK; kk++)
                    s = fmaf(a_at(g, a, i, kk), b_at(g, b, kk, j), s);
                acc = k0 == 0 && !g->accumulate ? s : acc + s;
            }
            if (g->bias) acc = acc + bias[i];
            for (int op = 0; op < ep.n_ops; op++) acc = post_ref(&ep.ops[op], acc, CH0 + i, AT0 + i * g->n + j);
            float got = c[i * g->n + j];
            cr_assert(memcmp(&got, &acc, sizeof got) == 0,
                      "m %lld n %lld k %lld transA %d stridedB %d acc %d bias %d packA %d packB %d chain %d "
                      "specials %d threads %d: C[%lld,%lld] = %.9g, the fma chain gives %.9g",
                      (long long)g->m, (long long)g->n, (long long)g->k, g->trans_a, g->b_cols_strided, g->accumulate,
                      g->bias, g->pack_a, g->pack_b, g->chain, g->specials, threads, (long long)i, (long long)j, got,
                      acc);
        }
    free(a), free(b), free(bias), free(c0), free(c), free(ap), free(bp), free(ws), free(bn), free(other);
}

Test(sgemm, every_element_is_the_fma_chain)
{
    th_rng r;
    th_rng_init(&r, th_seed("sgemm.chain"));
    /* tails around the 8-row (and the in-place A's 1-, 2- and 4-row) and 16/32/48-column tiles, k around the 256
       block, both work splits (wide needs n >= 4 * 48 * threads, or on two threads n >= 192 and n >= m: 196 and
       300 columns go wide below 196 and 300 rows, narrow from 400), and wide strips of many panels (a short k on
       4000 columns: 21 panels a strip) */
    static const int64_t ms[] = {1, 2, 3, 4, 7, 8, 9, 10, 12, 17, 64, 400};
    static const int64_t ns[] = {1, 2, 3, 4, 5, 15, 16, 17, 33, 48, 49, 50, 52, 97, 196, 300, 800, 4000};
    static const int64_t ks[] = {0, 1, 5, 256, 257, 600}; /* k = 0: C keeps its start value, then bias and epilogue */
    for (int threads = 1; threads <= 2; threads++) {
        mrt_threadpool *pool;
        cr_assert_eq(mrt_threadpool_new(threads, &pool), MRT_STATUS_OK);
        for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
            for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
                for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
                    int64_t v = th_rng_int(&r, 0, 127);
                    gcase g = {ms[a], ns[b], ks[c], v & 1, v & 2, v & 4, v & 8, v & 16, v & 32,
                               (int)th_rng_int(&r, 0, N_CHAINS), v & 64};
                    /* NaN's sign through the sigmoid is not part of the contract */
                    if (g.chain == 3 || g.chain == 4) g.specials = false;
                    if (g.m * g.n * g.k > 3000000) g.k = 5; /* keep the reference loop quick */
                    run_case(&r, &g, pool, threads);
                }
        mrt_threadpool_free(pool);
    }
}

/* A packed B over 8 MiB (a detector's fc6) goes k block by k block, each block's column chunks over all rows
   (k_block_tasks): 2600 x 900 (9.5 MB packed) with 11 blocks, the last partial; 900 columns make 19 panels, the last
   of 36 columns; 13 and 41 rows; accumulating or not, bias and an epilogue on the last block; 1, 2 and 3 threads. */
Test(sgemm, large_packed_b_goes_block_by_block)
{
    th_rng r;
    th_rng_init(&r, th_seed("sgemm.large_b"));
    for (int threads = 1; threads <= 3; threads++) {
        mrt_threadpool *pool;
        cr_assert_eq(mrt_threadpool_new(threads, &pool), MRT_STATUS_OK);
        gcase g = {13, 900, 2600, false, threads == 2, threads != 2, true, false, true, 1, false};
        cr_assert_gt(mrt_sgemm_packed_b_floats(g.k, g.n) * (int64_t)sizeof(float), 8 << 20);
        run_case(&r, &g, pool, threads);
        g.m = 41, g.chain = 6, g.pack_a = true;
        run_case(&r, &g, pool, threads);
        mrt_threadpool_free(pool);
    }
}

/* Conv, MatMul and Gemm nodes on this GEMM give the same bits with 1 and 2 threads. */
static void same_bits_with_threads(th_case *c1, th_case *c2, const char *what)
{
    mrt_session_options o1 = mrt_session_options_default(), o2 = mrt_session_options_default();
    o1.n_threads = 1;
    o2.n_threads = 2;
    mrt_tensor y1, y2;
    cr_assert_eq(th_run_opt(c1, &o1, 1, &y1), MRT_STATUS_OK, "%s: %s", what, mrt_last_error());
    cr_assert_eq(th_run_opt(c2, &o2, 1, &y2), MRT_STATUS_OK, "%s: %s", what, mrt_last_error());
    cr_assert_eq(memcmp(y1.data, y2.data, mrt_tensor_nbytes(&y1)), 0, "%s: 1 and 2 threads differ", what);
    mrt_tensor_release(&y1);
    mrt_tensor_release(&y2);
    th_free(c1);
    th_free(c2);
}

Test(sgemm, nodes_give_the_same_bits_with_any_thread_count)
{
    th_rng r;
    th_rng_init(&r, th_seed("sgemm.threads"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 16, 30, 30}, -1, 1);
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){24, 16, 3, 3}, -1, 1);
    mrt_tensor bias = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){24}, -1, 1);
    th_case *cs[2];
    for (int i = 0; i < 2; i++) {
        cs[i] = th_begin("Conv", "", 11);
        th_input(cs[i], &x);
        th_input_const(cs[i], &w);
        th_input_const(cs[i], &bias);
        th_attr_ints(cs[i], "pads", 4, (int64_t[]){1, 1, 1, 1});
    }
    same_bits_with_threads(cs[0], cs[1], "Conv 3x3");
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){6, 70, 300}, -1, 1);
    mrt_tensor bm = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){6, 300, 90}, -1, 1);
    for (int i = 0; i < 2; i++) {
        cs[i] = th_begin("MatMul", "", 13);
        th_input(cs[i], &a);
        th_input(cs[i], &bm);
    }
    same_bits_with_threads(cs[0], cs[1], "batched MatMul");
    mrt_tensor g_a = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){50, 300}, -1, 1);
    mrt_tensor g_b = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){1000, 300}, -1, 1);
    mrt_tensor g_c = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){1000}, -1, 1);
    for (int i = 0; i < 2; i++) {
        cs[i] = th_begin("Gemm", "", 13);
        th_input(cs[i], &g_a);
        th_input_const(cs[i], &g_b);
        th_input_const(cs[i], &g_c);
        th_attr_int(cs[i], "transB", 1);
    }
    same_bits_with_threads(cs[0], cs[1], "Gemm with packed B");
    mrt_tensor_release(&x), mrt_tensor_release(&w), mrt_tensor_release(&bias), mrt_tensor_release(&a);
    mrt_tensor_release(&bm), mrt_tensor_release(&g_a), mrt_tensor_release(&g_b), mrt_tensor_release(&g_c);
}
