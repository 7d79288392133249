/* CPU kernels: RNN, GRU, LSTM (7, 14, 22), every attribute of the spec (directions, activations with alpha/beta,
 * clip, sequence_lens, initial states, peepholes, input_forget, linear_before_reset, layout 0/1). float32 with
 * constant W and R: minirt's SGEMM on weights packed at prepare, gates in float (the packed path below). Otherwise
 * (double, the float64 mode, float16/bfloat16 computed in float, W or R not constant) through BLAS GEMMs (one for
 * the input projection of all steps, one per step for the recurrence), gates in double. Clip bounds the gates' pre-activations; like ONNX Runtime, LSTM's h(Ct) takes
 * the unclipped cell state. */
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/rnn.h"
#include "engine/registry.h"
#include "ops_cpu/linear.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/vmath.h"

typedef struct rnn_io {
    const void *x, *w, *r, *b, *h0, *c0, *p; /* b, h0, c0, p may be NULL */
    const int64_t *lens;                      /* per batch entry, validated in [0, seq] */
    void *y, *yh, *yc;                        /* NULL when the output is omitted */
} rnn_io;

/* Scratch buffers in the element type (xw, hr, h, c, rh) and in double (bias, rbh). */
typedef struct rnn_ws {
    void *xw, *hr, *h, *c, *rh;
    double *bias, *rbh;
} rnn_ws;

/* Row of X (viewed as [seq*batch, input]) holding time t of batch entry b. */
static inline int64_t x_row(const mrt_rnn_desc *d, int64_t t, int64_t b)
{
    return d->layout ? b * d->seq + t : t * d->batch + b;
}

/* Offset of Y[t, dir, b, 0] (layout 0) / Y[b, t, dir, 0] (layout 1). */
static inline int64_t y_off(const mrt_rnn_desc *d, int64_t t, int dir, int64_t b)
{
    return (d->layout ? (b * d->seq + t) * d->num_dir + dir : (t * d->num_dir + dir) * d->batch + b) * d->hidden;
}

/* Offset of a state (initial_h, initial_c, Y_h, Y_c) [dir, b, 0] / [b, dir, 0]. */
static inline int64_t state_off(const mrt_rnn_desc *d, int dir, int64_t b)
{
    return (d->layout ? b * d->num_dir + dir : dir * d->batch + b) * d->hidden;
}

static inline double clipv(const mrt_rnn_desc *d, double v)
{
    if (!d->has_clip) return v;
    return v > d->clip ? d->clip : v < -d->clip ? -d->clip : v;
}

#define RT_T float
#define RT_FN(name) name##_f32
#define RT_GEMM mrt_lin_sgemm
#include "ops_cpu/rnn_typed.h"
#undef RT_T
#undef RT_FN
#undef RT_GEMM

#define RT_T double
#define RT_FN(name) name##_f64
#define RT_GEMM mrt_lin_dgemm
#include "ops_cpu/rnn_typed.h"
#undef RT_T
#undef RT_FN
#undef RT_GEMM

/* ------------------------------------------------------------------ workspace
 * Whether the kernel takes its packed float32 path: float32 X with W and R constants (their data readable: at plan
 * time and in prepare) and input_size, hidden_size > 0. Its prepare packs W and R then, and its workspace hook sizes
 * the workspace for that path.
 *
 * The workspace, as byte counts of RNN_WS_PARTS parts for mrt_workspace_parts (elem 1). Part 0 the sequence lengths
 * (int64). Unpacked path (packed false; float, double, float16/bfloat16): X·W for every step, H·R, H, C (LSTM), the
 * reset-gated H (GRU) of one direction in the compute type, the summed biases and Rb in double; for
 * float16/bfloat16, float copies of X, W, R, B, initial_h, initial_c, P and of Y, Y_h, Y_c. Packed float32 path:
 * X·W of every step and direction [seq*batch, num_dir*gates*hidden]; per direction H·R, H, C (LSTM), a [batch,
 * hidden] scratch, the summed biases and Rb; the input projection's GEMM workspace (for ctx->n_threads threads) and
 * each direction's recurrent GEMM workspace (one thread, a multiple of 16 floats so that each is 64-byte aligned),
 * all float. False when a size overflows. */
enum { RNN_WS_PARTS = 18 };

/* a * b * c, false when it leaves [0, INT64_MAX] */
static bool mul3(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    if (a < 0 || b < 0 || c < 0) return false;
    if (b && a > INT64_MAX / b) return false;
    if (c && a * b > INT64_MAX / c) return false;
    *out = a * b * c;
    return true;
}

static bool rnn_packs(const mrt_op_ctx *ctx, const mrt_rnn_desc *d)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *r = mrt_input(ctx, 2);
    return x->dtype == MRT_DTYPE_FLOAT && w->data && r->data && d->input > 0 && d->hidden > 0;
}

static int64_t rnn_step_ws_floats(const mrt_rnn_desc *d)
{
    int64_t f = mrt_sgemm_workspace_floats(d->batch, d->gates * d->hidden, d->hidden, false, true, 1);
    return (f + 15) / 16 * 16;
}

static int64_t rnn_step_slots(const mrt_rnn_desc *d, int n_threads);
static int rnn_unit_parts(const mrt_rnn_desc *d, int n_threads);

/* The packed float32 path's parts (see rnn_workspace_parts). */
static bool packed_parts(const mrt_op_ctx *ctx, const mrt_rnn_desc *d, int64_t counts[RNN_WS_PARTS])
{
    /* split over units (rnn_unit_parts): H·R twice (the parts' own products, then in gate order) and H twice (the
       state before and after a step) */
    int64_t nd = d->num_dir, gh = d->gates * d->hidden, sb, bh, twice = rnn_unit_parts(d, ctx->n_threads) > 1 ? 2 : 1;
    if (!mul3(d->seq, d->batch, 1, &sb) || !mul3(nd * d->batch, d->hidden, 4, &bh)) return false;
    counts[0] = d->batch * 8;
    if (!mul3(sb, nd * gh, 4, &counts[1]) || !mul3(nd * d->batch, gh, 4 * twice, &counts[2])) return false;
    counts[3] = bh * twice;
    counts[5] = bh;
    counts[4] = d->cell == MRT_RNN_CELL_LSTM ? bh : 0;
    if (!mul3(nd, gh, 4, &counts[6]) || !mul3(nd, d->hidden, 4, &counts[7])) return false;
    int64_t in_ws = mrt_sgemm_workspace_floats(sb, nd * gh, d->input, false, true, ctx->n_threads);
    return mul3(in_ws, 4, 1, &counts[8]) && mul3(rnn_step_slots(d, ctx->n_threads), rnn_step_ws_floats(d), 4, &counts[9]);
}

static bool rnn_workspace_parts(const mrt_op_ctx *ctx, const mrt_rnn_desc *d, bool packed,
                                int64_t counts[RNN_WS_PARTS])
{
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    bool half = dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16, lstm = d->cell == MRT_RNN_CELL_LSTM;
    int64_t elem = dt == MRT_DTYPE_DOUBLE ? 8 : 4, gh, bh, y, yh;
    memset(counts, 0, RNN_WS_PARTS * sizeof *counts);
    if (packed) return packed_parts(ctx, d, counts);
    if (!mul3(d->gates, d->hidden, 1, &gh) || !mul3(d->batch, d->hidden, elem, &bh) ||
        !mul3(d->num_dir, d->batch, d->hidden, &yh) || !mul3(d->seq, yh, 1, &y))
        return false;
    counts[0] = d->batch * 8;
    if (!mul3(d->seq, d->batch, gh, &counts[1]) || !mul3(counts[1], elem, 1, &counts[1]) ||
        !mul3(d->batch, gh, elem, &counts[2]))
        return false;
    counts[3] = counts[5] = bh;
    counts[4] = lstm ? bh : 0;
    if (!mul3(gh, 8, 1, &counts[6]) || !mul3(d->hidden, 8, 1, &counts[7])) return false;
    if (!half) return true;
    static const int in_idx[7] = {0, 1, 2, 3, 5, 6, 7};
    for (int i = 0; i < 7; i++) {
        const mrt_tensor *t = mrt_input(ctx, in_idx[i]);
        if (t && (lstm || in_idx[i] < 6)) counts[8 + i] = mrt_tensor_numel(t) * 4;
    }
    return mul3(y, 4, 1, &counts[15]) && mul3(yh, 4, 1, &counts[16]) && mul3(lstm ? yh : 0, 4, 1, &counts[17]);
}


static mrt_status mrt_cpu_rnn_workspace(mrt_op_ctx *ctx)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    int64_t counts[RNN_WS_PARTS];
    if (!rnn_workspace_parts(ctx, &d, rnn_packs(ctx, &d), counts))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the work buffers' size overflows");
    return mrt_workspace_request_parts(ctx, RNN_WS_PARTS, counts, 1);
}

/* ------------------------------------------------------------------ packed float32 path
 * float32 with constant W and R (rnn_packs): prepare packs Wᵀ of both directions as one GEMM operand and each
 * direction's Rᵀ (GRU without linear_before_reset: its z/r part and its h part apart), so that a run is one
 * threaded GEMM for every step's and direction's X·Wᵀ, then per direction and step one single-threaded GEMM on
 * the packed Rᵀ (two for that GRU) and the gates in float over rows of hidden_size (Sigmoid and Tanh through
 * ops_cpu/vmath's vector functions, the other activations per element in double like the unpacked path). Two
 * directions run on two threads, each on its own buffers; one direction on several threads cuts its batch into
 * parts, each part's recurrence on its own thread (a batch's rows never meet), or, when R is too large for a
 * core's L2, its hidden units (rnn_unit_parts). Otherwise nothing allocates or dispatches per step. */

enum { RNN_MAX_UNIT_PARTS = 8 };

typedef struct rnn_packed {
    const float *w;        /* Wᵀ [input, num_dir * gates * hidden] packed as a GEMM B */
    const float *r[2][2];  /* per direction Rᵀ [hidden, gates * hidden]; split GRU: [0] the z, r columns, [1] h's */
    int unit_parts;        /* rnn_unit_parts at prepare: > 1, part t's columns of Rᵀ packed apart in unit_r[t] */
    const float *unit_r[RNN_MAX_UNIT_PARTS];
} rnn_packed;

static inline bool gru_split(const mrt_rnn_desc *d) { return d->cell == MRT_RNN_CELL_GRU && !d->linear_before_reset; }

/* One direction on several threads whose Rᵀ is larger than a core's L2 (LSTM hidden 256: 1 MiB packed) splits
   its hidden units over them instead of its batch: a batch part reads all of Rᵀ at every step, from L3, with only
   its own rows to multiply (2 of batch 4); a unit part reads its units' columns (gate by gate), which stay in its
   core's L2, for every row. Each step is then a dispatch of its own (a unit's gates need all of the previous h),
   the parts' units [H t / T, H (t + 1) / T). Not the split GRU, whose r (.) h needs all units between its two
   products. Each column's chain and each unit's gates are the batch path's: the same bits. 2-layer LSTM hidden 256,
   batch 4, 2 threads, alternating runs: 0.84-0.90 -> 0.64-0.69 ms. */
static int rnn_unit_parts(const mrt_rnn_desc *d, int n_threads)
{
    int64_t H = d->hidden, t = n_threads < RNN_MAX_UNIT_PARTS ? n_threads : RNN_MAX_UNIT_PARTS;
    if (d->num_dir != 1 || n_threads < 2 || gru_split(d) || H < 64 ||
        mrt_sgemm_packed_b_floats(H, d->gates * H) * (int64_t)sizeof(float) <= (512 << 10))
        return 1;
    if (t > H / 32) t = H / 32; /* at least 32 units a part */
    return (int)t;
}

static mrt_status pack_rt(mrt_op_ctx *ctx, const float *r, int64_t n, int64_t h, const float **out)
{
    float *p;
    MRT_TRY(mrt_sgemm_alloc_packed(ctx, mrt_sgemm_packed_b_floats(h, n), &p));
    mrt_sgemm_pack_b(r, 1, h, h, n, p); /* B(kk, j) = R[j, kk] */
    *out = p;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_rnn_prepare(mrt_op_ctx *ctx, void **state)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    if (!rnn_packs(ctx, &d)) return MRT_STATUS_OK;
    const float *w = mrt_input(ctx, 1)->data, *r = mrt_input(ctx, 2)->data;
    int64_t H = d.hidden, GH = d.gates * H, IN = d.input;
    rnn_packed *pk = mrt_plan_alloc(ctx, sizeof *pk);
    if (!pk) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory packing the weights");
    memset(pk, 0, sizeof *pk);
    float *pw;
    MRT_TRY(mrt_sgemm_alloc_packed(ctx, mrt_sgemm_packed_b_floats(IN, d.num_dir * GH), &pw));
    mrt_sgemm_pack_b(w, 1, IN, IN, d.num_dir * GH, pw); /* B(kk, j) = W[j, kk], W viewed as [num_dir*GH, IN] */
    pk->w = pw;
    pk->unit_parts = rnn_unit_parts(&d, ctx->n_threads);
    for (int dir = 0; dir < d.num_dir && pk->unit_parts == 1; dir++) { /* (split over units: packed apart below) */
        const float *rd = r + dir * GH * H;
        if (gru_split(&d)) {
            MRT_TRY(pack_rt(ctx, rd, 2 * H, H, &pk->r[dir][0]));
            MRT_TRY(pack_rt(ctx, rd + 2 * H * H, H, H, &pk->r[dir][1]));
        } else {
            MRT_TRY(pack_rt(ctx, rd, GH, H, &pk->r[dir][0]));
        }
    }
    if (pk->unit_parts > 1) { /* part t: rows q H + k of R (gate q, its units k), gate by gate, packed as one B */
        float *rows = malloc((size_t)(GH * H) * sizeof(float));
        if (!rows) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory packing the weights");
        mrt_status st = MRT_STATUS_OK;
        for (int t = 0; t < pk->unit_parts && !st; t++) {
            int64_t k0 = H * t / pk->unit_parts, hk = H * (t + 1) / pk->unit_parts - k0;
            for (int64_t q = 0; q < d.gates; q++)
                memcpy(rows + q * hk * H, r + (q * H + k0) * H, (size_t)(hk * H) * sizeof(float));
            st = pack_rt(ctx, rows, d.gates * hk, H, &pk->unit_r[t]);
        }
        free(rows);
        MRT_TRY(st);
    }
    *state = pk;
    ctx->prepared_inputs |= 1u << 1 | 1u << 2; /* run reads the packed copies only */
    return MRT_STATUS_OK;
}

typedef struct rnn_f32_job {
    const mrt_rnn_desc *d;
    const rnn_io *io;
    const rnn_packed *pk;
    float *xw, *hr, *h, *c, *tmp, *bias, *rbh, *step_ws;
    int64_t step_ws_floats;
    int64_t parts; /* f32_batch_parts: the batch's parts; f32_unit_parts: the units' */
    /* f32_unit_parts: the step, the state before and after it, the parts' own products [part][batch][gates * units] */
    int64_t step;
    const float *h_in;
    float *h_out, *unit_hr;
} rnn_f32_job;

/* f(x) over n floats in place */
static void act_vec(const mrt_rnn_act *a, float *x, int64_t n)
{
    switch (a->kind) {
    case MRT_RNN_ACT_SIGMOID: mrt_vsigmoid_f32(x, x, n); return;
    case MRT_RNN_ACT_TANH: mrt_vtanh_f32(x, x, n); return;
    case MRT_RNN_ACT_RELU:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0.0f;
        return;
    default:
        for (int64_t i = 0; i < n; i++) x[i] = (float)mrt_rnn_act_apply(a, (double)x[i]);
    }
}

static void clip_vec(const mrt_rnn_desc *d, float *x, int64_t n)
{
    if (!d->has_clip) return;
    float c = (float)d->clip; /* the attribute is a float */
    for (int64_t i = 0; i < n; i++) x[i] = x[i] > c ? c : x[i] < -c ? -c : x[i];
}

/* C[rows, n] = h[rows, H] * packed Rᵀ[H, n] on this thread, rows ldc apart. Every step reads all of Rᵀ; one a core's
   L2 cannot hold (LSTM h256: 4 x 256 x 256 floats, 1 MiB) would be read from L3 at every step if each went through
   it in the same order, since what a step read last is what the next step needs last. So odd steps go through it
   backwards, in pieces of STEP_PIECE panels, and start on the pieces still in L2. Each column's chain is the same
   in either order: same bits. 2-layer LSTM h256 (zoo), alternating runs: 1 thread 1.221-1.227 -> 1.210-1.213 ms,
   2 threads 0.96-1.03 -> 0.85-0.98 (each thread's half of the batch reads all of R). */
enum { STEP_PIECE = 4, STEP_SERPENTINE_MIN_BYTES = 512 << 10 };
static void step_gemm(const rnn_f32_job *j, int64_t rows, const float *h, const float *rt, int64_t n, float *c,
                      int64_t ldc, float *ws, bool backwards)
{
    const mrt_rnn_desc *d = j->d;
    int64_t H = d->hidden, panels = (n + MRT_SGEMM_NR - 1) / MRT_SGEMM_NR;
    bool in_l2 = mrt_sgemm_packed_b_floats(H, n) * (int64_t)sizeof(float) < STEP_SERPENTINE_MIN_BYTES;
    int64_t piece = in_l2 ? (panels > 0 ? panels : 1) : STEP_PIECE; /* panels a call: all of them when R fits */
    int64_t pieces = (panels + piece - 1) / piece;
    for (int64_t i = 0; i < pieces; i++) {
        int64_t q = backwards ? pieces - 1 - i : i, j0 = q * piece * MRT_SGEMM_NR;
        int64_t j1 = j0 + piece * MRT_SGEMM_NR < n ? j0 + piece * MRT_SGEMM_NR : n;
        mrt_sgemm_b b = {.packed = rt + q * piece * H * MRT_SGEMM_NR}; /* panel p at p H NR (sgemm.h) */
        mrt_sgemm_out o = {.c = c + j0, .ldc = ldc};
        mrt_sgemm_run(NULL, rows, j1 - j0, H, NULL, h, H, 1, &b, &o, ws);
    }
}

/* Batch entry b's gates and new state over hidden units [k0, k1), at a step whose X·Wᵀ row is xr: g its row of
   H·Rᵀ (gate q of unit k at g[q H + k]; overwritten), h_in its state before the step, h_out after (the same row, or
   another buffer when the units are split over threads), cb its cell state (LSTM, in place), th a scratch row. Every
   value is a function of its unit alone: any split of the units gives the same bits. */
static void cell_update(const rnn_f32_job *j, int dir, const float *xr, float *g, const float *h_in, float *h_out,
                        float *cb, float *th, int64_t k0, int64_t k1)
{
    const mrt_rnn_desc *d = j->d;
    const int64_t H = d->hidden, n = k1 - k0;
    const mrt_rnn_act *act = d->acts[dir];
    const float *P = j->io->p ? (const float *)j->io->p + dir * 3 * H : NULL;
    const float *bias = j->bias + dir * d->gates * H, *rbh = j->rbh + dir * H + k0;
    h_in += k0;
    h_out += k0;
    if (d->cell == MRT_RNN_CELL_RNN) {
        for (int64_t k = 0; k < n; k++) h_out[k] = xr[k0 + k] + g[k0 + k] + bias[k0 + k];
        clip_vec(d, h_out, n);
        act_vec(&act[0], h_out, n);
    } else if (d->cell == MRT_RNN_CELL_GRU) {
        float *z = g + k0, *r = g + H + k0, *hh = g + 2 * H + k0;
        if (gru_split(d)) { /* z and r done before the second product (f32_direction) */
            for (int64_t k = 0; k < n; k++) hh[k] = xr[2 * H + k0 + k] + hh[k] + bias[2 * H + k0 + k];
        } else {
            int64_t runs = n == H ? 1 : 2, len = n == H ? 2 * H : n; /* z and r: one run when whole (small H: calls) */
            for (int64_t q = 0; q < runs; q++) {
                float *zr = g + q * H + k0;
                for (int64_t k = 0; k < len; k++) zr[k] = xr[q * H + k0 + k] + zr[k] + bias[q * H + k0 + k];
                clip_vec(d, zr, len);
                act_vec(&act[0], zr, len);
            }
            for (int64_t k = 0; k < n; k++)
                hh[k] = xr[2 * H + k0 + k] + bias[2 * H + k0 + k] + r[k] * (hh[k] + rbh[k]);
        }
        clip_vec(d, hh, n);
        act_vec(&act[1], hh, n);
        for (int64_t k = 0; k < n; k++) h_out[k] = (1.0f - z[k]) * hh[k] + z[k] * h_in[k];
    } else { /* gate order i, o, f, c; peepholes i, o, f */
        float *ig = g + k0, *og = g + H + k0, *fg = g + 2 * H + k0, *cg = g + 3 * H + k0;
        cb += k0;
        th += k0;
        for (int64_t q = 0; q < 4; q++)
            for (int64_t k = 0; k < n; k++) g[q * H + k0 + k] = xr[q * H + k0 + k] + g[q * H + k0 + k] + bias[q * H + k0 + k];
        if (P)
            for (int64_t k = 0; k < n; k++) {
                ig[k] += P[k0 + k] * cb[k];
                fg[k] += P[2 * H + k0 + k] * cb[k];
            }
        clip_vec(d, ig, n);
        act_vec(&act[0], ig, n);
        if (d->input_forget) {
            for (int64_t k = 0; k < n; k++) fg[k] = 1.0f - ig[k];
        } else {
            clip_vec(d, fg, n);
            act_vec(&act[0], fg, n);
        }
        clip_vec(d, cg, n);
        act_vec(&act[1], cg, n);
        for (int64_t k = 0; k < n; k++) cb[k] = fg[k] * cb[k] + ig[k] * cg[k];
        if (P)
            for (int64_t k = 0; k < n; k++) og[k] += P[H + k0 + k] * cb[k];
        clip_vec(d, og, n);
        act_vec(&act[0], og, n);
        memcpy(th, cb, (size_t)n * sizeof(float));
        act_vec(&act[2], th, n);
        for (int64_t k = 0; k < n; k++) h_out[k] = og[k] * th[k];
    }
}

/* Direction dir's recurrence for batch entries [b0, b1) (rows of a batch are independent: each entry's chains are
   the same whichever rows share its GEMM), with step workspace slot `slot` */
static void f32_direction(const rnn_f32_job *j, int dir, int64_t b0, int64_t b1, int64_t slot)
{
    const mrt_rnn_desc *d = j->d;
    const rnn_io *io = j->io;
    const int64_t H = d->hidden, GH = d->gates * H, B = d->batch, S = d->seq, XLD = d->num_dir * GH;
    const bool backwards = dir == 1 || d->reverse, split = gru_split(d);
    const mrt_rnn_act *act = d->acts[dir];
    const float *xw = j->xw + dir * GH, *bias = j->bias + dir * GH;
    float *hr = j->hr + dir * B * GH, *h = j->h + dir * B * H, *c = j->c ? j->c + dir * B * H : NULL;
    float *tmp = j->tmp + dir * B * H, *ws = j->step_ws + slot * j->step_ws_floats;
    const int64_t rows = b1 - b0;
    const float *rt = j->pk->r[dir][0], *rt_h = j->pk->r[dir][1];

    for (int64_t b = b0; b < b1; b++)
        for (int64_t k = 0; k < H; k++) {
            int64_t at = state_off(d, dir, b) + k;
            h[b * H + k] = io->h0 ? ((const float *)io->h0)[at] : 0.0f;
            if (c) c[b * H + k] = io->c0 ? ((const float *)io->c0)[at] : 0.0f;
        }

    for (int64_t s = 0; s < S; s++) {
        step_gemm(j, rows, h + b0 * H, rt, split ? 2 * H : GH, hr + b0 * GH, GH, ws, s & 1);
        if (split) { /* z and r, then (r (.) H(t-1)) * Rhᵀ */
            for (int64_t b = b0; b < b1; b++) {
                float *g = hr + b * GH, *rh = tmp + b * H;
                if (s >= io->lens[b]) {
                    memset(rh, 0, (size_t)H * sizeof(float));
                    continue;
                }
                int64_t t = backwards ? io->lens[b] - 1 - s : s;
                const float *xr = xw + x_row(d, t, b) * XLD;
                for (int64_t k = 0; k < 2 * H; k++) g[k] = xr[k] + g[k] + bias[k];
                clip_vec(d, g, 2 * H);
                act_vec(&act[0], g, 2 * H);
                for (int64_t k = 0; k < H; k++) rh[k] = g[H + k] * h[b * H + k];
            }
            step_gemm(j, rows, tmp + b0 * H, rt_h, H, hr + b0 * GH + 2 * H, GH, ws, s & 1);
        }
        for (int64_t b = b0; b < b1; b++) {
            if (s >= io->lens[b]) continue;
            int64_t t = backwards ? io->lens[b] - 1 - s : s;
            float *hb = h + b * H;
            cell_update(j, dir, xw + x_row(d, t, b) * XLD, hr + b * GH, hb, hb, c ? c + b * H : NULL, tmp + b * H, 0, H);
            if (io->y) memcpy((float *)io->y + y_off(d, t, dir, b), hb, (size_t)H * sizeof(float));
        }
    }

    for (int64_t b = b0; b < b1; b++) { /* final states; a sequence of length 0 reports zeros */
        bool any = io->lens[b] > 0;
        for (int64_t k = 0; k < H; k++) {
            int64_t at = state_off(d, dir, b) + k;
            if (io->yh) ((float *)io->yh)[at] = any ? h[b * H + k] : 0.0f;
            if (io->yc) ((float *)io->yc)[at] = any ? c[b * H + k] : 0.0f;
        }
    }
}

static void f32_directions(void *arg, int64_t begin, int64_t end)
{
    const rnn_f32_job *j = arg;
    for (int64_t dir = begin; dir < end; dir++) f32_direction(j, (int)dir, 0, j->d->batch, dir);
}

/* One direction, the batch cut into parts (task t: entries [B t / T, B (t + 1) / T), step workspace slot t) */
static void f32_batch_parts(void *arg, int64_t begin, int64_t end)
{
    const rnn_f32_job *j = arg;
    int64_t B = j->d->batch;
    for (int64_t t = begin; t < end; t++) f32_direction(j, 0, B * t / j->parts, B * (t + 1) / j->parts, t);
}

/* One step of the one direction split over its units (rnn_unit_parts): part t's product into its own rows of
   j->unit_hr, laid out in gate order into H·R, then its units' gates; j->h_in is read whole, j->h_out written at the
   part's units (a batch entry past its sequence's end keeps its state) */
static void f32_unit_parts(void *arg, int64_t begin, int64_t end)
{
    const rnn_f32_job *j = arg;
    const mrt_rnn_desc *d = j->d;
    const rnn_io *io = j->io;
    const int64_t H = d->hidden, G = d->gates, GH = G * H, B = d->batch, s = j->step;
    for (int64_t part = begin; part < end; part++) {
        int64_t k0 = H * part / j->parts, k1 = H * (part + 1) / j->parts, hk = k1 - k0;
        float *own = j->unit_hr + B * G * k0, *ws = j->step_ws + part * j->step_ws_floats;
        step_gemm(j, B, j->h_in, j->pk->unit_r[part], G * hk, own, G * hk, ws, s & 1);
        for (int64_t b = 0; b < B; b++) {
            if (s >= io->lens[b]) {
                memcpy(j->h_out + b * H + k0, j->h_in + b * H + k0, (size_t)hk * sizeof(float));
                continue;
            }
            float *g = j->hr + b * GH;
            for (int64_t q = 0; q < G; q++) memcpy(g + q * H + k0, own + (b * G + q) * hk, (size_t)hk * sizeof(float));
            int64_t t = d->reverse ? io->lens[b] - 1 - s : s;
            cell_update(j, 0, j->xw + x_row(d, t, b) * GH, g, j->h_in + b * H, j->h_out + b * H, j->c ? j->c + b * H : NULL,
                        j->tmp + b * H, k0, k1);
            if (io->y)
                memcpy((float *)io->y + y_off(d, t, 0, b) + k0, j->h_out + b * H + k0, (size_t)hk * sizeof(float));
        }
    }
}

/* The one direction's recurrence split over its units: a dispatch per step, the state in two buffers (j->h and the
   one after it) that take turns */
static void f32_units(mrt_op_ctx *ctx, rnn_f32_job *j)
{
    const mrt_rnn_desc *d = j->d;
    const rnn_io *io = j->io;
    const int64_t H = d->hidden, B = d->batch;
    float *hbuf[2] = {j->h, j->h + B * H};
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < H; k++) {
            int64_t at = state_off(d, 0, b) + k;
            hbuf[0][b * H + k] = io->h0 ? ((const float *)io->h0)[at] : 0.0f;
            if (j->c) j->c[b * H + k] = io->c0 ? ((const float *)io->c0)[at] : 0.0f;
        }
    for (int64_t s = 0; s < d->seq; s++) {
        j->step = s;
        j->h_in = hbuf[s & 1];
        j->h_out = hbuf[(s + 1) & 1];
        mrt_parallel_for(ctx, j->parts, 1, f32_unit_parts, j);
    }
    const float *h = hbuf[d->seq & 1];
    for (int64_t b = 0; b < B; b++) { /* final states; a sequence of length 0 reports zeros */
        bool any = io->lens[b] > 0;
        for (int64_t k = 0; k < H; k++) {
            int64_t at = state_off(d, 0, b) + k;
            if (io->yh) ((float *)io->yh)[at] = any ? h[b * H + k] : 0.0f;
            if (io->yc) ((float *)io->yc)[at] = any ? j->c[b * H + k] : 0.0f;
        }
    }
}

/* Step workspace slots: one per direction, or one per batch part (a single direction on several threads: its
   recurrence, a one-thread GEMM per step, left the other threads idle; the 2-layer LSTM h256 batch 4 on 2 threads
   ran at 0.90x ONNX Runtime) */
static int64_t rnn_step_slots(const mrt_rnn_desc *d, int n_threads)
{
    if (rnn_unit_parts(d, n_threads) > 1) return rnn_unit_parts(d, n_threads);
    if (d->num_dir == 1 && n_threads > 1 && d->batch > 1) return d->batch < n_threads ? d->batch : n_threads;
    return d->num_dir;
}

static mrt_status run_packed(mrt_op_ctx *ctx, const mrt_rnn_desc *d, const rnn_io *io, const rnn_packed *pk,
                             void *const *part)
{
    const int64_t H = d->hidden, GH = d->gates * H, nd = d->num_dir;
    rnn_f32_job j = {
        .d = d, .io = io, .pk = pk, .xw = part[1], .hr = part[2], .h = part[3],
        .c = d->cell == MRT_RNN_CELL_LSTM ? part[4] : NULL, .tmp = part[5], .bias = part[6], .rbh = part[7],
        .step_ws = part[9], .step_ws_floats = rnn_step_ws_floats(d),
    };
    /* Wb + Rb folded into one bias, except GRU's Rbh under linear_before_reset, which r multiplies. */
    for (int64_t dir = 0; dir < nd; dir++) {
        const float *wb = io->b ? (const float *)io->b + dir * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;
        float *bias = j.bias + dir * GH, *rbh = j.rbh + dir * H;
        for (int64_t k = 0; k < GH; k++) bias[k] = wb ? wb[k] + rb[k] : 0.0f;
        for (int64_t k = 0; k < H; k++) rbh[k] = 0.0f;
        if (d->linear_before_reset && wb)
            for (int64_t k = 0; k < H; k++) {
                bias[2 * H + k] = wb[2 * H + k];
                rbh[k] = rb[2 * H + k];
            }
    }
    /* every step's and direction's X·Wᵀ in one GEMM on the session's threads; rows in X's own (layout) order */
    mrt_sgemm_b wb = {.packed = pk->w};
    mrt_sgemm_out wo = {.c = j.xw, .ldc = nd * GH};
    mrt_sgemm_run(ctx, d->seq * d->batch, nd * GH, d->input, NULL, io->x, d->input, 1, &wb, &wo, part[8]);
    j.parts = rnn_step_slots(d, ctx->n_threads);
    if (pk->unit_parts > 1) {
        j.parts = pk->unit_parts;
        j.unit_hr = j.hr + d->batch * GH; /* the workspace holds two of each (packed_parts) */
        f32_units(ctx, &j);
    } else if (nd == 1 && j.parts > 1) mrt_parallel_for(ctx, j.parts, 1, f32_batch_parts, &j);
    else if (nd == 2 && ctx->n_threads > 1) mrt_parallel_for(ctx, 2, 1, f32_directions, &j);
    else f32_directions(&j, 0, nd);
    return MRT_STATUS_OK;
}

/* The step buffers, carved from the workspace mrt_cpu_rnn_workspace requested and zeroed (the recurrences start from zero). */
static void ws_carve(void *const *part, const int64_t *counts, rnn_ws *ws)
{
    for (int i = 1; i <= 7; i++) memset(part[i], 0, (size_t)counts[i]);
    *ws = (rnn_ws){part[1], part[2], part[3], counts[4] ? part[4] : NULL, part[5], part[6], part[7]};
}

static mrt_status run_typed(const mrt_rnn_desc *d, const rnn_io *io, bool is_double, rnn_ws *ws)
{
    for (int dir = 0; dir < d->num_dir; dir++) {
        if (is_double) rnn_direction_f64(d, io, dir, ws);
        else rnn_direction_f32(d, io, dir, ws);
    }
    return MRT_STATUS_OK;
}

static mrt_status read_lens(mrt_op_ctx *ctx, const mrt_rnn_desc *d, int64_t *lens)
{
    const mrt_tensor *t = mrt_input(ctx, 4);
    for (int64_t b = 0; b < d->batch; b++) {
        lens[b] = t ? mrt_load_i64(t->dtype, t->data, b) : d->seq;
        if (lens[b] < 0 || lens[b] > d->seq)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "sequence_lens[%lld] is %lld, outside [0, %lld] (the seq_length of 'X')",
                               (long long)b, (long long)lens[b], (long long)d->seq);
    }
    return MRT_STATUS_OK;
}

/* float16/bfloat16: float copies of the inputs and outputs (workspace parts 8-17), outputs narrowed at the end. */
static mrt_status run_half(mrt_op_ctx *ctx, const mrt_rnn_desc *d, rnn_io *io, void *const *part, rnn_ws *ws)
{
    static const int in_idx[7] = {0, 1, 2, 3, 5, 6, 7};
    const void **in_ptr[7] = {&io->x, &io->w, &io->r, &io->b, &io->h0, &io->c0, &io->p};
    void **out_ptr[3] = {&io->y, &io->yh, &io->yc};
    for (int i = 0; i < 7; i++) {
        if (!*in_ptr[i]) continue;
        mrt_lin_widen_into(mrt_input(ctx, in_idx[i]), part[8 + i]);
        *in_ptr[i] = part[8 + i];
    }
    for (int i = 0; i < 3; i++) /* zeroed: steps past a sequence's length are left untouched, and must read 0 */
        if (*out_ptr[i]) *out_ptr[i] = memset(part[15 + i], 0, (size_t)mrt_tensor_numel(mrt_output(ctx, i)) * sizeof(float));
    MRT_TRY(run_typed(d, io, false, ws));
    for (int i = 0; i < 3; i++)
        if (*out_ptr[i]) mrt_lin_narrow(mrt_output(ctx, i), part[15 + i]);
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_rnn(mrt_op_ctx *ctx)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    MRT_TRY(mrt_lin_blas_check(ctx, d.seq * d.batch, d.gates * d.hidden, d.input > d.hidden ? d.input : d.hidden));
    int64_t counts[RNN_WS_PARTS];
    void *part[RNN_WS_PARTS];
    const rnn_packed *pk = ctx->kernel_state;
    if (!rnn_workspace_parts(ctx, &d, pk != NULL, counts))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the work buffers' size overflows");
    if (!mrt_workspace_parts(ctx, RNN_WS_PARTS, counts, 1, part)) return MRT_STATUS_OUT_OF_MEMORY;
    int64_t *lens = part[0];
    MRT_TRY(read_lens(ctx, &d, lens));
    mrt_status st;
    const mrt_tensor *in[8];
    for (int i = 0; i < 8; i++) in[i] = mrt_input(ctx, i);
    bool lstm = d.cell == MRT_RNN_CELL_LSTM;
    rnn_io io = {
        .x = in[0]->data, .w = in[1]->data, .r = in[2]->data,
        .b = in[3] ? in[3]->data : NULL, .h0 = in[5] ? in[5]->data : NULL,
        .c0 = lstm && in[6] ? in[6]->data : NULL, .p = lstm && in[7] ? in[7]->data : NULL,
        .lens = lens,
    };
    mrt_tensor *y = mrt_output(ctx, 0), *yh = mrt_output(ctx, 1), *yc = lstm ? mrt_output(ctx, 2) : NULL;
    io.y = y ? y->data : NULL;
    io.yh = yh ? yh->data : NULL;
    io.yc = yc ? yc->data : NULL;
    if (pk) return run_packed(ctx, &d, &io, pk, part);
    rnn_ws ws;
    ws_carve(part, counts, &ws);
    mrt_dtype dt = in[0]->dtype;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE) st = run_typed(&d, &io, dt == MRT_DTYPE_DOUBLE, &ws);
    else if (mrt_lin_is_half(dt)) st = run_half(ctx, &d, &io, part, &ws);
    else st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    return st;
}

const mrt_kernel mrt_cpu_kernels_rnn[] = {
    {"", "RNN", 7, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "RNN", 14, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "RNN", 22, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "GRU", 7, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "GRU", 14, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "GRU", 22, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "LSTM", 7, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "LSTM", 14, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {"", "LSTM", 22, mrt_cpu_rnn, NULL, mrt_cpu_rnn_prepare, NULL, 0, mrt_cpu_rnn_workspace},
    {0},
};
