/* CPU kernels: Einsum (12: any subscripts, "..." broadcasting, repeated labels (diagonals), implicit output in
   numpy's order; a direct loop nest accumulating in double / wrapping int64, plus a batched-GEMM path for
   two-input float/double contractions without diagonals or broadcasting: float32 on minirt's GEMM, operands read
   in place where their strides allow), Det (11, 22: partial-pivot LU in
   double per matrix), Bernoulli (15, 22), RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike (1, 22).
   The random ops (and Dropout) draw from numpy's legacy RandomState(seed) stream, restarted at every run: a seeded
   node gives the values of onnx.reference (not those of other engines); without a seed, seed 0, so runs repeat. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/einsum.h"
#include "engine/opdef/misc.h"
#include "engine/registry.h"
#include "ops_cpu/blas.h"
#include "ops_cpu/random.h"
#include "ops_cpu/sgemm.h"
#include "engine/threadpool.h"

/* ---- Einsum */

/* The loop nest's description, at the workspace's start (einsum_nest fits) */
#define EINSUM_NEST_BYTES 20480
static size_t einsum_round(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

/* Labels of the loop nest: the output's, then the summed ones. strides[k][j] is input k's element stride along
   loop label j (repeated labels add their strides: a diagonal; broadcast size-1 dims have stride 0). */
typedef struct einsum_nest {
    int n_in, n_out, n_sum;
    int64_t size[MRT_EINSUM_MAX_LABELS];
    int label[MRT_EINSUM_MAX_LABELS];
    int64_t strides[MRT_EINSUM_MAX_INPUTS][MRT_EINSUM_MAX_LABELS];
} einsum_nest;
_Static_assert(sizeof(einsum_nest) <= EINSUM_NEST_BYTES, "EINSUM_NEST_BYTES is too small");

static void einsum_nest_init(const mrt_op_ctx *ctx, const mrt_einsum *e, einsum_nest *n)
{
    memset(n, 0, sizeof *n);
    n->n_in = e->n_inputs;
    bool in_out[MRT_EINSUM_MAX_LABELS] = {false};
    int at[MRT_EINSUM_MAX_LABELS];
    for (int i = 0; i < e->out_rank; i++) {
        in_out[e->out_label[i]] = true;
        at[e->out_label[i]] = i;
        n->label[i] = e->out_label[i];
    }
    n->n_out = e->out_rank;
    int j = n->n_out;
    for (int l = 0; l < e->n_labels; l++)
        if (e->size[l] >= 0 && !in_out[l]) {
            at[l] = j;
            n->label[j++] = l;
        }
    n->n_sum = j - n->n_out;
    for (int i = 0; i < j; i++) n->size[i] = e->size[n->label[i]];
    for (int k = 0; k < e->n_inputs; k++) mrt_einsum_add_strides(e, k, mrt_input(ctx, k), at, n->strides[k]);
}

/* Inputs as one computation type: double for float types, int64 for integers (wrapping like uint64). */
typedef struct einsum_data {
    const void *p[MRT_EINSUM_MAX_INPUTS];
} einsum_data;

/* The inputs as double (float output) or int64 (integer output): the tensors themselves when they already are,
   else copies carved from `ws` (the workspace after the loop nest). */
static void einsum_data_init(mrt_op_ctx *ctx, int n_in, bool fl, uint8_t *ws, einsum_data *d)
{
    memset(d, 0, sizeof *d);
    for (int k = 0; k < n_in; k++) {
        const mrt_tensor *x = mrt_input(ctx, k);
        int64_t cnt = mrt_tensor_numel(x);
        void *copy = ws;
        ws += einsum_round((size_t)cnt * 8);
        if (x->dtype == (fl ? MRT_DTYPE_DOUBLE : MRT_DTYPE_INT64)) {
            d->p[k] = x->data;
            continue;
        }
        for (int64_t i = 0; i < cnt; i++) {
            if (fl) ((double *)copy)[i] = mrt_load_f64(x->dtype, x->data, i);
            else ((int64_t *)copy)[i] = mrt_load_i64(x->dtype, x->data, i);
        }
        d->p[k] = copy;
    }
}

/* One output element: sum over the summed labels of the product of the inputs at base[k] + inner offsets. */
#define EINSUM_SUM(NAME, T, ACC, MUL)                                                                               \
    static ACC NAME(const einsum_nest *n, const einsum_data *d, const int64_t *base, int64_t count)                  \
    {                                                                                                               \
        int64_t idx[MRT_EINSUM_MAX_LABELS] = {0}, off[MRT_EINSUM_MAX_INPUTS];                                        \
        ACC acc = 0;                                                                                                \
        for (int k = 0; k < n->n_in; k++) off[k] = base[k];                                                         \
        for (int64_t c = 0; c < count; c++) {                                                                       \
            ACC prod = (ACC)((const T *)d->p[0])[off[0]];                                                           \
            for (int k = 1; k < n->n_in; k++) prod = MUL(prod, (ACC)((const T *)d->p[k])[off[k]]);                  \
            acc += prod;                                                                                            \
            for (int j = n->n_out + n->n_sum - 1; j >= n->n_out; j--) {                                             \
                for (int k = 0; k < n->n_in; k++) off[k] += n->strides[k][j];                                       \
                if (++idx[j] < n->size[j]) break;                                                                   \
                for (int k = 0; k < n->n_in; k++) off[k] -= n->size[j] * n->strides[k][j];                          \
                idx[j] = 0;                                                                                         \
            }                                                                                                       \
        }                                                                                                           \
        return acc;                                                                                                 \
    }

#define EINSUM_MUL_F(a, b) ((a) * (b))
#define EINSUM_MUL_U(a, b) ((a) * (b))
EINSUM_SUM(einsum_sum_f64, double, double, EINSUM_MUL_F)
EINSUM_SUM(einsum_sum_u64, uint64_t, uint64_t, EINSUM_MUL_U)

static mrt_status einsum_generic(mrt_op_ctx *ctx, const mrt_einsum *e, const einsum_nest *n, uint8_t *ws)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    bool fl = mrt_dtype_is_float(y->dtype);
    einsum_data d;
    einsum_data_init(ctx, e->n_inputs, fl, ws, &d);
    int64_t count = 1, total = mrt_tensor_numel(y), idx[MRT_MAX_RANK] = {0}, base[MRT_EINSUM_MAX_INPUTS] = {0};
    for (int j = n->n_out; j < n->n_out + n->n_sum; j++) count *= n->size[j];
    for (int64_t o = 0; o < total; o++) {
        if (fl) mrt_store_f64(y->dtype, y->data, o, einsum_sum_f64(n, &d, base, count));
        else mrt_store_i64(y->dtype, y->data, o, (int64_t)einsum_sum_u64(n, &d, base, count));
        for (int j = n->n_out - 1; j >= 0; j--) {
            for (int k = 0; k < n->n_in; k++) base[k] += n->strides[k][j];
            if (++idx[j] < n->size[j]) break;
            for (int k = 0; k < n->n_in; k++) base[k] -= n->size[j] * n->strides[k][j];
            idx[j] = 0;
        }
    }
    return MRT_STATUS_OK;
}

/* dst (contiguous over `shape`) = src read with `strides`; esz 4 or 8. */
static void gather(void *dst, const void *src, size_t esz, int rank, const int64_t *shape, const int64_t *strides)
{
    int64_t idx[MRT_EINSUM_MAX_LABELS] = {0}, total = 1, off = 0;
    for (int d = 0; d < rank; d++) total *= shape[d];
    for (int64_t i = 0; i < total; i++) {
        if (esz == 4) ((float *)dst)[i] = ((const float *)src)[off];
        else ((double *)dst)[i] = ((const double *)src)[off];
        for (int d = rank - 1; d >= 0; d--) {
            off += strides[d];
            if (++idx[d] < shape[d]) break;
            off -= shape[d] * strides[d];
            idx[d] = 0;
        }
    }
}

/* Two float/double inputs whose labels are each batch (A, B, out), M (A, out), N (B, out) or K (A, B), with no
   diagonal and no broadcast: the product is nb GEMMs of [m, k] x [k, n]. Groups list their labels in the output's
   order (K: label order); pos[k][l] is label l's axis in input k. */
typedef struct einsum_groups {
    int pos[2][MRT_EINSUM_MAX_LABELS];
    int grp[4][MRT_EINSUM_MAX_LABELS], ng[4]; /* batch, M, N, K */
    int64_t ext[4];
} einsum_groups;

static bool einsum_groups_of(const mrt_op_ctx *ctx, const mrt_einsum *e, einsum_groups *g)
{
    if (e->n_inputs != 2) return false;
    const mrt_tensor *x[2] = {mrt_input(ctx, 0), mrt_input(ctx, 1)};
    int out_pos[MRT_EINSUM_MAX_LABELS];
    for (int l = 0; l < e->n_labels; l++) g->pos[0][l] = g->pos[1][l] = out_pos[l] = -1;
    for (int k = 0; k < 2; k++)
        for (int a = 0; a < x[k]->rank; a++) {
            int l = e->in_label[k][a];
            if (g->pos[k][l] >= 0 || x[k]->shape[a] != e->size[l]) return false; /* diagonal or broadcast */
            g->pos[k][l] = a;
        }
    for (int i = 0; i < e->out_rank; i++) out_pos[e->out_label[i]] = i;
    memset(g->ng, 0, sizeof g->ng);
    for (int i = 0; i < e->out_rank; i++) {
        int l = e->out_label[i], k = g->pos[0][l] >= 0 && g->pos[1][l] >= 0 ? 0 : g->pos[0][l] >= 0 ? 1 : 2;
        g->grp[k][g->ng[k]++] = l;
    }
    for (int l = 0; l < e->n_labels; l++) {
        if (e->size[l] < 0 || out_pos[l] >= 0) continue;
        if (g->pos[0][l] < 0 || g->pos[1][l] < 0) return false; /* summed over one input only */
        g->grp[3][g->ng[3]++] = l;
    }
    for (int k = 0; k < 4; k++) {
        g->ext[k] = 1;
        for (int i = 0; i < g->ng[k]; i++) g->ext[k] *= e->size[g->grp[k][i]];
    }
    return true;
}

/* float32 products run on minirt's GEMM (ops_cpu/sgemm.h, its chains and bits, as MatMul's): many small ones go to
   the threads whole, each serial in its own workspace slot (MaxViT's attention: 128 products of 49 x 49 x 32) */
static bool einsum_by_batch(const einsum_groups *g, int threads)
{
    return threads > 1 && g->ext[0] >= 2 * threads && g->ext[1] * g->ext[2] * g->ext[3] <= ((int64_t)1 << 21);
}

/* Floats of minirt's GEMM scratch for a float32 two-input contraction of the GEMM form; 0 for another form. */
static int64_t einsum_sgemm_floats(const mrt_op_ctx *ctx, const mrt_einsum *e, int n_threads)
{
    einsum_groups g;
    if (!einsum_groups_of(ctx, e, &g)) return 0;
    int threads = n_threads > 1 ? n_threads : 1;
    if (einsum_by_batch(&g, threads)) return threads * mrt_sgemm_workspace_floats(g.ext[1], g.ext[2], g.ext[3], false, false, 1);
    return mrt_sgemm_workspace_floats(g.ext[1], g.ext[2], g.ext[3], false, false, threads);
}

/* The stride of a group of labels read as one dimension of input x (contiguous): its labels must sit on consecutive
   axes of x in the group's order, which makes them one run of strides. Returns false when they do not; an empty
   group has stride 0. */
static bool group_stride(const mrt_tensor *x, const int *pos, const int *labels, int n, int64_t *stride)
{
    int64_t st[MRT_MAX_RANK];
    mrt_shape_strides(x->rank, x->shape, st);
    *stride = 0;
    for (int i = 0; i < n; i++) {
        int a = pos[labels[i]];
        if (i > 0 && (a != pos[labels[i - 1]] + 1)) return false;
    }
    if (n > 0) *stride = st[pos[labels[n - 1]]];
    return true;
}

typedef struct einsum_gemm_job {
    int64_t m, n, k;
    const float *a, *b;
    float *c;
    int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, c_bs, c_rs;
    float *ws;
    int64_t slot;
} einsum_gemm_job;

/* product i: C_i = A_i B_i, serial with ctx NULL (a task of einsum_gemm_range), else over ctx's threads */
static void einsum_gemm_one(const mrt_op_ctx *ctx, const einsum_gemm_job *j, int64_t i, float *ws)
{
    mrt_sgemm_b bs = {.b = j->b + i * j->b_bs, .rs = j->b_rs, .cs = j->b_cs};
    mrt_sgemm_out out = {.c = j->c + i * j->c_bs, .ldc = j->c_rs};
    mrt_sgemm_run(ctx, j->m, j->n, j->k, NULL, j->a + i * j->a_bs, j->a_rs, j->a_cs, &bs, &out, ws);
}

static void einsum_gemm_range(void *arg, int64_t i0, int64_t i1)
{
    const einsum_gemm_job *j = arg;
    float *ws = j->ws + (int64_t)mrt_thread_index() * j->slot;
    for (int64_t i = i0; i < i1; i++) einsum_gemm_one(NULL, j, i, ws);
}

/* The einsum_groups form: an operand whose groups are runs of its strides is read in place, others are first
   gathered to [batch, M, K] / [batch, K, N]; C is written in place when the output is [batch, M, N] with N
   contiguous, else gathered from a [batch, M, N] buffer. float32 on minirt's GEMM, double on OpenBLAS. Returns
   false (nothing done) when the equation doesn't have that form. */
static bool einsum_try_gemm(mrt_op_ctx *ctx, const mrt_einsum *e, uint8_t *ws, mrt_status *st)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    einsum_groups g;
    if ((y->dtype != MRT_DTYPE_FLOAT && y->dtype != MRT_DTYPE_DOUBLE) || !einsum_groups_of(ctx, e, &g)) return false;
    const mrt_tensor *x[2] = {mrt_input(ctx, 0), mrt_input(ctx, 1)};
    int64_t nb = g.ext[0], m = g.ext[1], nn = g.ext[2], kk = g.ext[3];
    /* the workspace's GEMM layout (einsum_workspace_bytes): A, B and C hold exactly as many elements as X0, X1
       and Y, then the GEMM's scratch */
    size_t esz = y->dtype == MRT_DTYPE_FLOAT ? 4 : 8;
    void *a = ws, *b = ws + einsum_round((size_t)(nb * m * kk) * esz);
    void *c = (uint8_t *)b + einsum_round((size_t)(nb * kk * nn) * esz);
    float *gemm_ws = (float *)((uint8_t *)c + einsum_round((size_t)(nb * m * nn) * esz));
    /* each operand's strides for (batch, rows, columns) of its product: A (batch, M, K), B (batch, K, N) */
    static const int order[2][3] = {{0, 1, 3}, {0, 3, 2}};
    int64_t opst[2][3];
    const void *op[2];
    for (int k = 0; k < 2; k++) {
        bool in_place = esz == 4;
        for (int gi = 0; gi < 3 && in_place; gi++)
            in_place = group_stride(x[k], g.pos[k], g.grp[order[k][gi]], g.ng[order[k][gi]], &opst[k][gi]);
        if (in_place) {
            op[k] = x[k]->data;
            continue;
        }
        int64_t st_in[MRT_MAX_RANK], shape[MRT_EINSUM_MAX_LABELS], strides[MRT_EINSUM_MAX_LABELS];
        int r = 0;
        mrt_shape_strides(x[k]->rank, x[k]->shape, st_in);
        for (int gi = 0; gi < 3; gi++) {
            int gr = order[k][gi];
            for (int i = 0; i < g.ng[gr]; i++) {
                shape[r] = e->size[g.grp[gr][i]];
                strides[r++] = st_in[g.pos[k][g.grp[gr][i]]];
            }
        }
        gather(k ? b : a, x[k]->data, esz, r, shape, strides);
        op[k] = k ? b : a;
        int64_t rows = g.ext[order[k][1]], cols = g.ext[order[k][2]];
        opst[k][0] = rows * cols, opst[k][1] = cols, opst[k][2] = 1;
    }
    /* C in place: the output's labels are batch, then M, then N, in the groups' order */
    bool c_in_place = esz == 4 && e->out_rank == g.ng[0] + g.ng[1] + g.ng[2];
    for (int gi = 0, at = 0; gi < 3 && c_in_place; gi++)
        for (int i = 0; i < g.ng[gi] && c_in_place; i++) c_in_place = e->out_label[at++] == g.grp[gi][i];
    void *cp = c_in_place ? y->data : c;
    if (esz == 4) {
        int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
        einsum_gemm_job j = {m, nn, kk, op[0], op[1], cp, opst[0][0], opst[0][1], opst[0][2], opst[1][0], opst[1][1],
                             opst[1][2], m * nn, nn, gemm_ws, mrt_sgemm_workspace_floats(m, nn, kk, false, false, 1)};
        if (einsum_by_batch(&g, threads)) mrt_parallel_for(ctx, nb, 1, einsum_gemm_range, &j);
        else
            for (int64_t i = 0; i < nb; i++) einsum_gemm_one(ctx, &j, i, gemm_ws);
    } else {
        for (int64_t i = 0; i < nb; i++)
            mrt_dgemm(false, false, m, nn, kk, 1.0, (double *)a + i * m * kk, kk, (double *)b + i * kk * nn, nn, 0.0,
                      (double *)c + i * m * nn, nn);
    }
    if (!c_in_place) { /* c is [batch..., M..., N...]: read it in the output's label order */
        int64_t cst[MRT_EINSUM_MAX_LABELS], stride_of[MRT_EINSUM_MAX_LABELS], s = 1, out_strides[MRT_MAX_RANK];
        int r = 0, lab[MRT_EINSUM_MAX_LABELS];
        for (int gi = 0; gi < 3; gi++)
            for (int i = 0; i < g.ng[gi]; i++) lab[r++] = g.grp[gi][i];
        for (int i = r - 1; i >= 0; i--) {
            cst[i] = s;
            s *= e->size[lab[i]];
        }
        for (int i = 0; i < r; i++) stride_of[lab[i]] = cst[i];
        for (int i = 0; i < e->out_rank; i++) out_strides[i] = stride_of[e->out_label[i]];
        gather(y->data, c, esz, e->out_rank, e->out_shape, out_strides);
    }
    *st = MRT_STATUS_OK;
    return true;
}

/* An empty output, or an empty sum (the zero-filled output is the answer): nothing to compute */
static bool einsum_is_empty(const mrt_einsum *e, const mrt_tensor *y)
{
    bool empty = mrt_tensor_numel(y) == 0;
    for (int l = 0; l < e->n_labels; l++) empty |= e->size[l] == 0;
    return empty;
}

/* The workspace: the larger of the two paths', GEMM (A, B and C packed, 2 float/double inputs) and the generic loop
   nest (the nest plus a double/int64 copy of each input), each buffer 64-byte aligned; none when empty. */
static size_t einsum_workspace_bytes(const mrt_op_ctx *ctx, const mrt_einsum *e, const mrt_tensor *y)
{
    if (einsum_is_empty(e, y)) return 0;
    mrt_dtype dt = y->dtype;
    size_t gemm = 0, generic = EINSUM_NEST_BYTES;
    if (e->n_inputs == 2 && (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE)) {
        size_t esz = dt == MRT_DTYPE_FLOAT ? 4 : 8;
        gemm = einsum_round((size_t)mrt_tensor_numel(mrt_input(ctx, 0)) * esz) +
               einsum_round((size_t)mrt_tensor_numel(mrt_input(ctx, 1)) * esz) + einsum_round((size_t)mrt_tensor_numel(y) * esz);
        if (dt == MRT_DTYPE_FLOAT) gemm += (size_t)einsum_sgemm_floats(ctx, e, ctx->n_threads) * sizeof(float);
    }
    for (int k = 0; k < e->n_inputs; k++) generic += einsum_round((size_t)mrt_tensor_numel(mrt_input(ctx, k)) * 8);
    return gemm > generic ? gemm : generic;
}

static mrt_status mrt_cpu_einsum_workspace(mrt_op_ctx *ctx)
{
    mrt_einsum e;
    MRT_TRY(mrt_einsum_parse(ctx, &e));
    mrt_workspace_request(ctx, einsum_workspace_bytes(ctx, &e, mrt_output(ctx, 0)));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_einsum(mrt_op_ctx *ctx)
{
    mrt_einsum e;
    MRT_TRY(mrt_einsum_parse(ctx, &e));
    mrt_tensor *y = mrt_output(ctx, 0);
    if (einsum_is_empty(&e, y)) return MRT_STATUS_OK;
    uint8_t *ws = mrt_workspace(ctx, einsum_workspace_bytes(ctx, &e, y));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    mrt_status st;
    if (einsum_try_gemm(ctx, &e, ws, &st)) return st;
    einsum_nest *n = (einsum_nest *)ws;
    einsum_nest_init(ctx, &e, n);
    return einsum_generic(ctx, &e, n, ws + EINSUM_NEST_BYTES);
}

/* ---- Det */

/* One matrix's elimination copy, in double */
static size_t det_workspace_bytes(const mrt_tensor *x)
{
    int64_t m = x->shape[x->rank - 1];
    return (size_t)(m * m) * sizeof(double);
}

static mrt_status mrt_cpu_det_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, det_workspace_bytes(mrt_input(ctx, 0)));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_det(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t m = x->shape[x->rank - 1], batch = mrt_tensor_numel(y), mm = m * m;
    double *a = mrt_workspace(ctx, det_workspace_bytes(x));
    if (!a) return MRT_STATUS_OUT_OF_MEMORY;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < mm; i++) a[i] = mrt_load_f64(x->dtype, x->data, b * mm + i);
        mrt_store_f64(y->dtype, y->data, b, mrt_det_eliminate(a, m));
    }
    return MRT_STATUS_OK;
}

/* ---- random ops: numpy's RandomState(seed) stream (ops_cpu/random.h) */

static mrt_status fill_random(mrt_op_ctx *ctx, bool normal)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_mt19937 stream; /* 2.5 KB: on the stack, not allocated per call */
    mrt_random_fill(ctx, &stream, normal, y->dtype, y->data, mrt_tensor_numel(y));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_random_uniform(mrt_op_ctx *ctx) { return fill_random(ctx, false); }
static mrt_status mrt_cpu_random_normal(mrt_op_ctx *ctx) { return fill_random(ctx, true); }

static mrt_status mrt_cpu_bernoulli(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(x);
    MRT_TRY(mrt_random_check_probs(ctx, x->dtype, x->data, n));
    mrt_mt19937 stream; /* 2.5 KB: on the stack, not allocated per call */
    mrt_random_bernoulli(ctx, &stream, x->dtype, x->data, y->dtype, y->data, n);
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_misc[] = {
    {"", "Einsum", 12, mrt_cpu_einsum, NULL, NULL, NULL, 0, mrt_cpu_einsum_workspace},
    {"", "Det", 11, mrt_cpu_det, NULL, NULL, NULL, 0, mrt_cpu_det_workspace},
    {"", "Det", 22, mrt_cpu_det, NULL, NULL, NULL, 0, mrt_cpu_det_workspace},
    {"", "Bernoulli", 15, mrt_cpu_bernoulli, NULL},
    {"", "Bernoulli", 22, mrt_cpu_bernoulli, NULL},
    {"", "RandomUniform", 1, mrt_cpu_random_uniform, NULL},
    {"", "RandomUniform", 22, mrt_cpu_random_uniform, NULL},
    {"", "RandomNormal", 1, mrt_cpu_random_normal, NULL},
    {"", "RandomNormal", 22, mrt_cpu_random_normal, NULL},
    {"", "RandomUniformLike", 1, mrt_cpu_random_uniform, NULL},
    {"", "RandomUniformLike", 22, mrt_cpu_random_uniform, NULL},
    {"", "RandomNormalLike", 1, mrt_cpu_random_normal, NULL},
    {"", "RandomNormalLike", 22, mrt_cpu_random_normal, NULL},
    {0},
};
