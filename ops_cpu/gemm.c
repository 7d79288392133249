/* CPU kernels: Gemm 1-13 and MatMul 1-13 (float/double through OpenBLAS, float16/bfloat16 computed in float,
 * int32/int64/uint32/uint64 by naive loops with wrapping sums), MatMulInteger 10 (uint8/int8, int32 loops). */
#include <math.h>
#include <string.h>

#include "engine/opdef/conv.h"
#include "engine/registry.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/linear.h"
#include "ops_cpu/sgemm.h"

/* ------------------------------------------------------------------ Gemm */

typedef struct gemm_args {
    bool ta, tb;
    int64_t m, n, k;
    double alpha, beta;
    bool has_c;
    int64_t c0, c1; /* C's dims aligned to [M, N]; 1 = broadcast */
} gemm_args;

#define GEMM_FLOAT(T, SUF, GEMM)                                                                                   \
    static void gemm_##SUF(const gemm_args *g, const T *a, const T *b, const T *c, T *y)                           \
    {                                                                                                              \
        T beta = 0;                                                                                                \
        if (g->has_c && g->beta != 0) {                                                                            \
            T bc = (T)g->beta;                                                                                     \
            for (int64_t i = 0; i < g->m; i++) {                                                                   \
                const T *crow = c + (g->c0 == 1 ? 0 : i) * g->c1;                                                  \
                T *yrow = y + i * g->n;                                                                            \
                if (g->c1 == 1)                                                                                    \
                    for (int64_t j = 0; j < g->n; j++) yrow[j] = bc * crow[0];                                     \
                else                                                                                               \
                    for (int64_t j = 0; j < g->n; j++) yrow[j] = bc * crow[j];                                     \
            }                                                                                                      \
            beta = 1;                                                                                              \
        }                                                                                                          \
        GEMM(g->ta, g->tb, g->m, g->n, g->k, (T)g->alpha, a, g->ta ? g->m : g->k, b, g->tb ? g->k : g->n, beta, y, \
             g->n);                                                                                                \
    }
GEMM_FLOAT(float, f32, mrt_lin_sgemm)
GEMM_FLOAT(double, f64, mrt_lin_dgemm)

/* Integer results: exact wrapping arithmetic when alpha = beta = 1, otherwise through double. */

#define GEMM_INT(T, SUF)                                                                                           \
    static void gemm_##SUF(const gemm_args *g, const T *a, const T *b, const T *c, T *y)                           \
    {                                                                                                              \
        bool exact = g->alpha == 1.0 && (g->beta == 1.0 || !g->has_c);                                             \
        for (int64_t i = 0; i < g->m; i++)                                                                         \
            for (int64_t j = 0; j < g->n; j++) {                                                                   \
                uint64_t acc = 0;                                                                                  \
                for (int64_t p = 0; p < g->k; p++) {                                                               \
                    T av = g->ta ? a[p * g->m + i] : a[i * g->k + p];                                              \
                    T bv = g->tb ? b[j * g->k + p] : b[p * g->n + j];                                              \
                    acc += (uint64_t)av * (uint64_t)bv;                                                            \
                }                                                                                                  \
                T cv = g->has_c ? c[(g->c0 == 1 ? 0 : i) * g->c1 + (g->c1 == 1 ? 0 : j)] : (T)0;                   \
                if (exact) {                                                                                       \
                    y[i * g->n + j] = (T)(acc + (uint64_t)cv);                                                     \
                } else {                                                                                           \
                    double v = g->alpha * (double)(T)acc + (g->has_c ? g->beta * (double)cv : 0.0);                \
                    y[i * g->n + j] = (T)mrt_f64_to_i64_sat(v);                                                          \
                }                                                                                                  \
            }                                                                                                      \
    }
GEMM_INT(int32_t, i32)
GEMM_INT(int64_t, i64)
GEMM_INT(uint32_t, u32)
GEMM_INT(uint64_t, u64)

/* ---- float32 Gemm/MatMul on minirt's GEMM (ops_cpu/sgemm.h): a constant B is packed once per plan. Gemm with
   alpha != 1 keeps the BLAS path (alpha * sum is not a chain of the products); so do single-column products,
   which the matrix-vector loop serves better than a 48-column tile. */

/* B(kk, j) = b[kk * rs + j * cs] of Gemm (transB) */
static void gemm_b_strides(const gemm_args *g, int64_t *rs, int64_t *cs)
{
    *rs = g->tb ? 1 : g->n;
    *cs = g->tb ? g->k : 1;
}

static bool gemm_uses_sgemm(const gemm_args *g, mrt_dtype dt) { return dt == MRT_DTYPE_FLOAT && g->alpha == 1.0 && g->n > 1; }

static void gemm_read_args(const mrt_op_ctx *ctx, gemm_args *g)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *c = mrt_input(ctx, 2);
    g->ta = mrt_attr_int(ctx, "transA", 0) != 0;
    g->tb = mrt_attr_int(ctx, "transB", 0) != 0;
    g->k = g->ta ? a->shape[0] : a->shape[1];
    g->m = g->ta ? a->shape[1] : a->shape[0];
    const mrt_tensor *b = mrt_input(ctx, 1);
    g->n = g->tb ? b->shape[0] : b->shape[1];
    g->alpha = mrt_attr_float(ctx, "alpha", 1.0f);
    g->beta = mrt_attr_float(ctx, "beta", 1.0f);
    g->has_c = c != NULL;
    g->c0 = c && c->rank == 2 ? c->shape[0] : 1;
    g->c1 = c && c->rank >= 1 ? c->shape[c->rank - 1] : 1;
}

/* Workspace floats of the float32 GEMM path: b_packed when B is a constant (packed by prepare); 0 on another path. */
static int64_t gemm_f32_workspace_floats(const mrt_op_ctx *ctx, bool b_packed)
{
    gemm_args g;
    gemm_read_args(ctx, &g);
    if (!gemm_uses_sgemm(&g, mrt_input(ctx, 0)->dtype)) return 0;
    return mrt_sgemm_workspace_floats(g.m, g.n, g.k, false, b_packed, ctx->n_threads);
}

/* The kernel state of a constant B: B packed (mrt_sgemm_pack_b). */
static mrt_status pack_constant_b(mrt_op_ctx *ctx, const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                                  void **state)
{
    float *pb;
    MRT_TRY(mrt_sgemm_alloc_packed(ctx, mrt_sgemm_packed_b_floats(k, n), &pb));
    mrt_sgemm_pack_b(b, rs, cs, k, n, pb);
    *state = pb;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_gemm_prepare(mrt_op_ctx *ctx, void **state)
{
    gemm_args g;
    gemm_read_args(ctx, &g);
    const mrt_tensor *b = mrt_input(ctx, 1);
    if (!gemm_uses_sgemm(&g, b->dtype) || !b->data) return MRT_STATUS_OK;
    int64_t rs, cs;
    gemm_b_strides(&g, &rs, &cs);
    MRT_TRY(pack_constant_b(ctx, b->data, rs, cs, g.k, g.n, state));
    ctx->prepared_inputs |= 1u << 1; /* gemm_sgemm reads the packed B only: the model's B may go */
    return MRT_STATUS_OK;
}

static mrt_status gemm_sgemm(mrt_op_ctx *ctx, const gemm_args *g, const float *a, const float *b, const float *c, float *y)
{
    const float *pb = ctx->kernel_state;
    float *ws = mrt_workspace(ctx, (size_t)mrt_sgemm_workspace_floats(g->m, g->n, g->k, false, pb != NULL, ctx->n_threads) * sizeof(float));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    bool acc = g->has_c && g->beta != 0;
    if (acc) { /* each chain starts from beta * C, as the BLAS path prefills it */
        float bc = (float)g->beta;
        for (int64_t i = 0; i < g->m; i++) {
            const float *crow = c + (g->c0 == 1 ? 0 : i) * g->c1;
            float *yrow = y + i * g->n;
            for (int64_t j = 0; j < g->n; j++) yrow[j] = bc * crow[g->c1 == 1 ? 0 : j];
        }
    }
    mrt_sgemm_b bs = {.packed = pb, .b = b};
    gemm_b_strides(g, &bs.rs, &bs.cs);
    mrt_sgemm_out out = {.c = y, .ldc = g->n, .accumulate = acc, .ep = ctx->epilogue};
    mrt_sgemm_run(ctx, g->m, g->n, g->k, NULL, a, g->ta ? 1 : g->k, g->ta ? g->m : 1, &bs, &out, ws);
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_gemm(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1), *c = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    gemm_args g;
    gemm_read_args(ctx, &g);
    const void *cd = c ? c->data : NULL;
    mrt_dtype dt = a->dtype;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || mrt_lin_is_half(dt))
        MRT_TRY(mrt_lin_blas_check(ctx, g.m, g.n, g.k));
    if (gemm_uses_sgemm(&g, dt)) return gemm_sgemm(ctx, &g, a->data, b->data, cd, y->data);
    switch (dt) {
    case MRT_DTYPE_FLOAT:
        gemm_f32(&g, a->data, b->data, cd, y->data);
        mrt_epilogue_apply_rows(ctx->epilogue, y->data, g.m, g.n, g.n, 0, 0); /* fused successors (engine/fuse.c) */
        break;
    case MRT_DTYPE_DOUBLE: gemm_f64(&g, a->data, b->data, cd, y->data); break;
    case MRT_DTYPE_INT32: gemm_i32(&g, a->data, b->data, cd, y->data); break;
    case MRT_DTYPE_INT64: gemm_i64(&g, a->data, b->data, cd, y->data); break;
    case MRT_DTYPE_UINT32: gemm_u32(&g, a->data, b->data, cd, y->data); break;
    case MRT_DTYPE_UINT64: gemm_u64(&g, a->data, b->data, cd, y->data); break;
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16: {
        /* float copies of A, B, C and Y, mrt_cpu_gemm_workspace's */
        int64_t counts[4] = {mrt_tensor_numel(a), mrt_tensor_numel(b), c ? mrt_tensor_numel(c) : 0, g.m * g.n};
        float *f[4];
        if (!mrt_workspace_parts(ctx, 4, counts, sizeof(float), (void **)f)) return MRT_STATUS_OUT_OF_MEMORY;
        mrt_lin_widen_into(a, f[0]);
        mrt_lin_widen_into(b, f[1]);
        if (c) mrt_lin_widen_into(c, f[2]);
        gemm_f32(&g, f[0], f[1], c ? f[2] : NULL, f[3]);
        mrt_lin_narrow(y, f[3]);
        break;
    }
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ MatMul */

/* Matrix indices into A's and B's own batches for output batch `idx` (broadcast dims read index 0). */
static void batch_index(const mrt_matmul_dims *d, int64_t idx, int64_t *ia, int64_t *ib)
{
    int64_t a = 0, b = 0, sa = 1, sb = 1;
    for (int i = d->batch_rank - 1; i >= 0; i--) {
        int64_t c = idx % d->batch[i];
        idx /= d->batch[i];
        if (d->a_batch[i] != 1) a += c * sa;
        if (d->b_batch[i] != 1) b += c * sb;
        sa *= d->a_batch[i];
        sb *= d->b_batch[i];
    }
    *ia = a;
    *ib = b;
}

static int64_t batch_count(const mrt_matmul_dims *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->batch_rank; i++) n *= d->batch[i];
    return n;
}

static bool b_is_broadcast(const mrt_matmul_dims *d)
{
    for (int i = 0; i < d->batch_rank; i++)
        if (d->b_batch[i] != 1) return false;
    return true;
}

/* matmul_SUF_batches: batches [i0, i1), a product each; matmul_SUF: all of them (one B for every batch: A's batches
   stack into one tall GEMM) */
#define MATMUL_FLOAT(T, SUF, GEMM)                                                                                 \
    static void matmul_##SUF##_batches(const mrt_matmul_dims *d, const T *a, const T *b, T *y, int64_t i0,         \
                                       int64_t i1)                                                                 \
    {                                                                                                              \
        for (int64_t i = i0; i < i1; i++) {                                                                        \
            int64_t ia, ib;                                                                                        \
            batch_index(d, i, &ia, &ib);                                                                           \
            GEMM(false, false, d->m, d->n, d->k, (T)1, a + ia * d->m * d->k, d->k, b + ib * d->k * d->n, d->n,     \
                 (T)0, y + i * d->m * d->n, d->n);                                                                 \
        }                                                                                                          \
    }                                                                                                              \
    static void matmul_##SUF(const mrt_matmul_dims *d, const T *a, const T *b, T *y)                               \
    {                                                                                                              \
        int64_t nb = batch_count(d);                                                                               \
        if (b_is_broadcast(d)) GEMM(false, false, nb * d->m, d->n, d->k, (T)1, a, d->k, b, d->n, (T)0, y, d->n);   \
        else matmul_##SUF##_batches(d, a, b, y, 0, nb);                                                            \
    }
MATMUL_FLOAT(float, f32, mrt_lin_sgemm)
MATMUL_FLOAT(double, f64, mrt_lin_dgemm)

#define MATMUL_INT(T, SUF)                                                                                         \
    static void matmul_##SUF(const mrt_matmul_dims *d, const T *a, const T *b, T *y)                               \
    {                                                                                                              \
        int64_t nb = batch_count(d), m = d->m, n = d->n, k = d->k;                                                 \
        for (int64_t bi = 0; bi < nb; bi++) {                                                                      \
            int64_t ia, ib;                                                                                        \
            batch_index(d, bi, &ia, &ib);                                                                          \
            const T *am = a + ia * m * k, *bm = b + ib * k * n;                                                    \
            T *ym = y + bi * m * n;                                                                                \
            for (int64_t i = 0; i < m; i++)                                                                        \
                for (int64_t j = 0; j < n; j++) {                                                                  \
                    uint64_t s = 0;                                                                                \
                    for (int64_t p = 0; p < k; p++) s += (uint64_t)am[i * k + p] * (uint64_t)bm[p * n + j];        \
                    ym[i * n + j] = (T)s;                                                                          \
                }                                                                                                  \
        }                                                                                                          \
    }
MATMUL_INT(int32_t, i32)
MATMUL_INT(int64_t, i64)
MATMUL_INT(uint32_t, u32)
MATMUL_INT(uint64_t, u64)

/* Batches of small independent products go to the threads whole (each serial, in its own scratch slot); a
   single large product is split inside. Large ones too when the batches split evenly: each core then computes
   whole heads, the rows that the Softmax after it (split by rows) reads, instead of half the columns of every
   head. Whisper encoder's [4,1500,64] x [4,64,1500] on 2 threads, quiet rounds: 25.3-27.3 -> 24.2-24.4 ms best
   per round for the model. */
static bool matmul_by_batch(const mrt_matmul_dims *d, int threads)
{
    if (threads <= 1 || b_is_broadcast(d) || batch_count(d) < threads) return false;
    return d->m * d->n * d->k <= ((int64_t)1 << 21) || batch_count(d) % threads == 0;
}

static bool matmul_uses_sgemm(const mrt_matmul_dims *d, mrt_dtype dt) { return dt == MRT_DTYPE_FLOAT && d->n > 1; }

/* As gemm_f32_workspace_floats, for MatMul. */
static int64_t matmul_f32_workspace_floats(const mrt_op_ctx *ctx, const mrt_matmul_dims *d, bool b_packed)
{
    if (!matmul_uses_sgemm(d, mrt_input(ctx, 0)->dtype)) return 0;
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    if (b_is_broadcast(d)) return mrt_sgemm_workspace_floats(batch_count(d) * d->m, d->n, d->k, false, b_packed, threads);
    if (matmul_by_batch(d, threads)) return threads * mrt_sgemm_workspace_floats(d->m, d->n, d->k, false, false, 1);
    return mrt_sgemm_workspace_floats(d->m, d->n, d->k, false, false, threads);
}

static mrt_status mrt_cpu_matmul_prepare(mrt_op_ctx *ctx, void **state)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    if (!matmul_uses_sgemm(&d, a->dtype) || !b_is_broadcast(&d) || !b->data) return MRT_STATUS_OK;
    MRT_TRY(pack_constant_b(ctx, b->data, d.n, 1, d.k, d.n, state));
    ctx->prepared_inputs |= 1u << 1; /* matmul_sgemm's broadcast-B path reads the packed B only */
    return MRT_STATUS_OK;
}

/* Output batch i of a MatMul whose B varies with the batch: split over ctx's threads, or serial with ctx NULL. */
static void matmul_one_batch(const mrt_op_ctx *ctx, const mrt_matmul_dims *d, const float *a, const float *b, float *y,
                             const mrt_epilogue *ep, int64_t i, float *ws)
{
    int64_t ia, ib;
    batch_index(d, i, &ia, &ib);
    mrt_sgemm_b bs = {.b = b + ib * d->k * d->n, .rs = d->n, .cs = 1};
    mrt_sgemm_out out = {.c = y + i * d->m * d->n, .ldc = d->n, .ep = ep, .ep_at0 = i * d->m * d->n};
    mrt_sgemm_run(ctx, d->m, d->n, d->k, NULL, a + ia * d->m * d->k, d->k, 1, &bs, &out, ws);
}

typedef struct matmul_batches {
    const mrt_matmul_dims *d;
    const float *a, *b;
    float *y, *ws;
    int64_t slot_floats;
    const mrt_epilogue *ep;
} matmul_batches;

static void matmul_batch_range(void *arg, int64_t i0, int64_t i1)
{
    const matmul_batches *mb = arg;
    float *ws = mb->ws + (int64_t)mrt_thread_index() * mb->slot_floats;
    for (int64_t i = i0; i < i1; i++) matmul_one_batch(NULL, mb->d, mb->a, mb->b, mb->y, mb->ep, i, ws);
}

static mrt_status matmul_sgemm(mrt_op_ctx *ctx, const mrt_matmul_dims *d, const float *a, const float *b, float *y)
{
    const float *pb = ctx->kernel_state;
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    float *ws = mrt_workspace(ctx, (size_t)matmul_f32_workspace_floats(ctx, d, pb != NULL) * sizeof(float));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    if (b_is_broadcast(d)) { /* one B for every batch: A's batches stack into one tall product */
        mrt_sgemm_b bs = {.packed = pb, .b = b, .rs = d->n, .cs = 1};
        mrt_sgemm_out out = {.c = y, .ldc = d->n, .ep = ctx->epilogue};
        mrt_sgemm_run(ctx, batch_count(d) * d->m, d->n, d->k, NULL, a, d->k, 1, &bs, &out, ws);
        return MRT_STATUS_OK;
    }
    if (matmul_by_batch(d, threads)) {
        matmul_batches mb = {d, a, b, y, ws, mrt_sgemm_workspace_floats(d->m, d->n, d->k, false, false, 1), ctx->epilogue};
        mrt_parallel_for(ctx, batch_count(d), 1, matmul_batch_range, &mb);
        return MRT_STATUS_OK;
    }
    for (int64_t i = 0; i < batch_count(d); i++) matmul_one_batch(ctx, d, a, b, y, ctx->epilogue, i, ws);
    return MRT_STATUS_OK;
}

/* Batches [i0, i1) of a float MatMul that is not on minirt's GEMM (n == 1), each as matmul_f32 computes it */
typedef struct matvec_batches {
    const mrt_matmul_dims *d;
    const float *a, *b;
    float *y;
} matvec_batches;

static void matvec_batch_range(void *arg, int64_t i0, int64_t i1)
{
    const matvec_batches *mb = arg;
    matmul_f32_batches(mb->d, mb->a, mb->b, mb->y, i0, i1);
}

static mrt_status mrt_cpu_matmul(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    mrt_dtype dt = a->dtype;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || mrt_lin_is_half(dt))
        MRT_TRY(mrt_lin_blas_check(ctx, batch_count(&d) * d.m, d.n, d.k));
    if (matmul_uses_sgemm(&d, dt)) return matmul_sgemm(ctx, &d, a->data, b->data, y->data);
    switch (dt) {
    case MRT_DTYPE_FLOAT: {
        if (ctx->n_threads > 1 && !b_is_broadcast(&d) && batch_count(&d) >= 2 * ctx->n_threads) {
            /* matrix-vector products per batch (ConvBERT's 192 [64, 9] x [9, 1]): the batches over the threads */
            matvec_batches mb = {&d, a->data, b->data, y->data};
            mrt_parallel_for(ctx, batch_count(&d), 8, matvec_batch_range, &mb);
        } else {
            matmul_f32(&d, a->data, b->data, y->data);
        }
        int64_t cols = y->rank ? y->shape[y->rank - 1] : 1, n = mrt_tensor_numel(y);
        if (cols > 0) mrt_epilogue_apply_rows(ctx->epilogue, y->data, n / cols, cols, cols, 0, 0); /* fused successors */
        break;
    }
    case MRT_DTYPE_DOUBLE: matmul_f64(&d, a->data, b->data, y->data); break;
    case MRT_DTYPE_INT32: matmul_i32(&d, a->data, b->data, y->data); break;
    case MRT_DTYPE_INT64: matmul_i64(&d, a->data, b->data, y->data); break;
    case MRT_DTYPE_UINT32: matmul_u32(&d, a->data, b->data, y->data); break;
    case MRT_DTYPE_UINT64: matmul_u64(&d, a->data, b->data, y->data); break;
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16: {
        /* float copies of A, B and Y (mrt_cpu_matmul_workspace) */
        int64_t counts[3] = {mrt_tensor_numel(a), mrt_tensor_numel(b), mrt_tensor_numel(y)};
        float *f[3];
        if (!mrt_workspace_parts(ctx, 3, counts, sizeof(float), (void **)f)) return MRT_STATUS_OUT_OF_MEMORY;
        mrt_lin_widen_into(a, f[0]);
        mrt_lin_widen_into(b, f[1]);
        matmul_f32(&d, f[0], f[1], f[2]);
        mrt_lin_narrow(y, f[2]);
        break;
    }
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ MatMulInteger */

/* Zero point layout (see the opdef): 0 = none/scalar, 1 = per row (A) / column (B), 2 = per batch and
   row/column, indexed by the operand's own matrix index. */
typedef struct zp_view {
    int kind;
    const void *data;
    mrt_dtype dt;
} zp_view;

static zp_view zp_of(const mrt_tensor *z)
{
    zp_view v = {0, NULL, MRT_DTYPE_UINT8};
    if (!z) return v;
    v.data = z->data;
    v.dt = z->dtype;
    if (mrt_tensor_numel(z) == 1 && z->rank <= 1) v.kind = 0;
    else v.kind = z->rank == 1 ? 1 : 2;
    return v;
}

static inline int32_t ld8(mrt_dtype dt, const void *p, int64_t i)
{
    return dt == MRT_DTYPE_INT8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

static int32_t zp_at(const zp_view *z, int64_t mat, int64_t len, int64_t i)
{
    if (!z->data) return 0;
    if (z->kind == 0) return ld8(z->dt, z->data, 0);
    if (z->kind == 1) return ld8(z->dt, z->data, i);
    return ld8(z->dt, z->data, mat * len + i);
}

static mrt_status mrt_cpu_matmulinteger(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    zp_view za = zp_of(mrt_input(ctx, 2)), zb = zp_of(mrt_input(ctx, 3));
    int64_t nb = batch_count(&d), m = d.m, n = d.n, k = d.k;
    /* widen the operands once so the inner loop is plain int32 arithmetic */
    int64_t na = mrt_tensor_numel(a), nbel = mrt_tensor_numel(b);
    int64_t counts[3] = {na, nbel, n}; /* mrt_cpu_matmulinteger_workspace's */
    int32_t *part[3];
    if (!mrt_workspace_parts(ctx, 3, counts, sizeof(int32_t), (void **)part)) return MRT_STATUS_OUT_OF_MEMORY;
    int32_t *wa = part[0], *wb = part[1], *zcol = part[2];
    for (int64_t i = 0; i < na; i++) wa[i] = ld8(a->dtype, a->data, i);
    for (int64_t i = 0; i < nbel; i++) wb[i] = ld8(b->dtype, b->data, i);
    int32_t *yd = y->data;
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t ia, ib;
        batch_index(&d, bi, &ia, &ib);
        const int32_t *am = wa + ia * m * k, *bm = wb + ib * k * n;
        int32_t *ym = yd + bi * m * n;
        for (int64_t j = 0; j < n; j++) zcol[j] = zp_at(&zb, ib, n, j);
        for (int64_t i = 0; i < m; i++) {
            int32_t zr = zp_at(&za, ia, m, i);
            for (int64_t j = 0; j < n; j++) {
                int64_t s = 0;
                for (int64_t p = 0; p < k; p++) s += (am[i * k + p] - zr) * (bm[p * n + j] - zcol[j]);
                ym[i * n + j] = (int32_t)s;
            }
        }
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ workspaces (engine/registry.h) */

/* Float copies of the 16-bit float operands and Y; minirt's GEMM's packing buffers for float32 (B packed by
   prepare when it is a constant, so not counted then). */
static mrt_status mrt_cpu_gemm_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1), *c = mrt_input(ctx, 2);
    if (a->dtype == MRT_DTYPE_FLOAT16 || a->dtype == MRT_DTYPE_BFLOAT16) {
        int64_t counts[4] = {mrt_tensor_numel(a), mrt_tensor_numel(b), c ? mrt_tensor_numel(c) : 0,
                             mrt_tensor_numel(mrt_output(ctx, 0))};
        return mrt_workspace_request_parts(ctx, 4, counts, sizeof(float));
    }
    if (a->dtype != MRT_DTYPE_FLOAT) return MRT_STATUS_OK;
    int64_t f = gemm_f32_workspace_floats(ctx, b->data != NULL);
    return mrt_workspace_request_parts(ctx, 1, &f, sizeof(float));
}

static mrt_status mrt_cpu_matmul_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    if (a->dtype == MRT_DTYPE_FLOAT16 || a->dtype == MRT_DTYPE_BFLOAT16) {
        int64_t counts[3] = {mrt_tensor_numel(a), mrt_tensor_numel(b), mrt_tensor_numel(mrt_output(ctx, 0))};
        return mrt_workspace_request_parts(ctx, 3, counts, sizeof(float));
    }
    if (a->dtype != MRT_DTYPE_FLOAT) return MRT_STATUS_OK;
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    int64_t f = matmul_f32_workspace_floats(ctx, &d, b->data != NULL);
    return mrt_workspace_request_parts(ctx, 1, &f, sizeof(float));
}

/* int32 copies of A and B, and one row of B's zero points */
static mrt_status mrt_cpu_matmulinteger_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    int64_t counts[3] = {mrt_tensor_numel(a), mrt_tensor_numel(b), d.n};
    return mrt_workspace_request_parts(ctx, 3, counts, sizeof(int32_t));
}

const mrt_kernel mrt_cpu_kernels_gemm[] = {
    {"", "Gemm", 1, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "Gemm", 6, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "Gemm", 7, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "Gemm", 9, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "Gemm", 11, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "Gemm", 13, mrt_cpu_gemm, NULL, mrt_cpu_gemm_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_gemm_workspace},
    {"", "MatMul", 1, mrt_cpu_matmul, NULL, mrt_cpu_matmul_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_matmul_workspace},
    {"", "MatMul", 9, mrt_cpu_matmul, NULL, mrt_cpu_matmul_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_matmul_workspace},
    {"", "MatMul", 13, mrt_cpu_matmul, NULL, mrt_cpu_matmul_prepare, NULL, MRT_KERNEL_EPILOGUE | MRT_KERNEL_PREPARE_FROM_CONSTANTS,
     mrt_cpu_matmul_workspace},
    {"", "MatMulInteger", 10, mrt_cpu_matmulinteger, NULL, NULL, NULL, 0, mrt_cpu_matmulinteger_workspace},
    {0},
};
