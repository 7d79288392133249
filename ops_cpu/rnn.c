/* CPU kernels: RNN, GRU, LSTM (7, 14, 22), every attribute of the spec (directions, activations with alpha/beta,
 * clip, sequence_lens, initial states, peepholes, input_forget, linear_before_reset, layout 0/1). float and
 * double through BLAS GEMMs (one for the input projection of all steps, one per step for the recurrence);
 * float16/bfloat16 computed in float. Clip bounds the gates' pre-activations; like ONNX Runtime, LSTM's h(Ct) takes
 * the unclipped cell state. */
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/rnn.h"
#include "engine/registry.h"
#include "ops_cpu/linear.h"

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

static void *zalloc(int64_t n, size_t elem) { return calloc((size_t)(n > 0 ? n : 1), elem); }

static void ws_free(rnn_ws *ws)
{
    free(ws->xw);
    free(ws->hr);
    free(ws->h);
    free(ws->c);
    free(ws->rh);
    free(ws->bias);
    free(ws->rbh);
}

static bool ws_alloc(const mrt_rnn_desc *d, size_t elem, rnn_ws *ws)
{
    memset(ws, 0, sizeof *ws);
    int64_t gh = d->gates * d->hidden, bh = d->batch * d->hidden;
    ws->xw = zalloc(d->seq * d->batch * gh, elem);
    ws->hr = zalloc(d->batch * gh, elem);
    ws->h = zalloc(bh, elem);
    ws->c = d->cell == MRT_RNN_CELL_LSTM ? zalloc(bh, elem) : NULL;
    ws->rh = zalloc(bh, elem);
    ws->bias = zalloc(gh, sizeof(double));
    ws->rbh = zalloc(d->hidden, sizeof(double));
    bool ok = ws->xw && ws->hr && ws->h && ws->rh && ws->bias && ws->rbh && (ws->c || d->cell != MRT_RNN_CELL_LSTM);
    if (!ok) ws_free(ws);
    return ok;
}

static mrt_status run_typed(const mrt_rnn_desc *d, const rnn_io *io, bool is_double)
{
    rnn_ws ws;
    if (!ws_alloc(d, is_double ? sizeof(double) : sizeof(float), &ws)) return MRT_STATUS_OUT_OF_MEMORY;
    for (int dir = 0; dir < d->num_dir; dir++) {
        if (is_double) rnn_direction_f64(d, io, dir, &ws);
        else rnn_direction_f32(d, io, dir, &ws);
    }
    ws_free(&ws);
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

/* float16/bfloat16: float copies of the inputs, float outputs narrowed at the end. */
static mrt_status run_half(mrt_op_ctx *ctx, const mrt_rnn_desc *d, rnn_io *io)
{
    static const int in_idx[7] = {0, 1, 2, 3, 5, 6, 7};
    const void **in_ptr[7] = {&io->x, &io->w, &io->r, &io->b, &io->h0, &io->c0, &io->p};
    float *wide[7] = {0}, *outs[3] = {0};
    void **out_ptr[3] = {&io->y, &io->yh, &io->yc};
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < 7 && st == MRT_STATUS_OK; i++) {
        if (!*in_ptr[i]) continue;
        wide[i] = mrt_lin_widen(mrt_input(ctx, in_idx[i]));
        if (!wide[i]) st = MRT_STATUS_OUT_OF_MEMORY;
        *in_ptr[i] = wide[i];
    }
    for (int i = 0; i < 3 && st == MRT_STATUS_OK; i++) {
        if (!*out_ptr[i]) continue;
        outs[i] = zalloc(mrt_tensor_numel(mrt_output(ctx, i)), sizeof(float));
        if (!outs[i]) st = MRT_STATUS_OUT_OF_MEMORY;
        *out_ptr[i] = outs[i];
    }
    if (st == MRT_STATUS_OK) st = run_typed(d, io, false);
    if (st == MRT_STATUS_OK)
        for (int i = 0; i < 3; i++)
            if (outs[i]) mrt_lin_narrow(mrt_output(ctx, i), outs[i]);
    for (int i = 0; i < 7; i++) free(wide[i]);
    for (int i = 0; i < 3; i++) free(outs[i]);
    return st;
}

static mrt_status mrt_cpu_rnn(mrt_op_ctx *ctx)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    MRT_TRY(mrt_lin_blas_check(ctx, d.seq * d.batch, d.gates * d.hidden, d.input > d.hidden ? d.input : d.hidden));
    int64_t *lens = zalloc(d.batch, sizeof(int64_t));
    if (!lens) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (sequence lengths)");
    mrt_status st = read_lens(ctx, &d, lens);
    if (st != MRT_STATUS_OK) {
        free(lens);
        return st;
    }
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
    mrt_dtype dt = in[0]->dtype;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE) st = run_typed(&d, &io, dt == MRT_DTYPE_DOUBLE);
    else if (mrt_lin_is_half(dt)) st = run_half(ctx, &d, &io);
    else st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
    free(lens);
    if (st == MRT_STATUS_OUT_OF_MEMORY) return mrt_op_fail(ctx, st, "out of memory (RNN work buffers)");
    return st;
}

const mrt_kernel mrt_cpu_kernels_rnn[] = {
    {"", "RNN", 7, mrt_cpu_rnn, NULL},
    {"", "RNN", 14, mrt_cpu_rnn, NULL},
    {"", "RNN", 22, mrt_cpu_rnn, NULL},
    {"", "GRU", 7, mrt_cpu_rnn, NULL},
    {"", "GRU", 14, mrt_cpu_rnn, NULL},
    {"", "GRU", 22, mrt_cpu_rnn, NULL},
    {"", "LSTM", 7, mrt_cpu_rnn, NULL},
    {"", "LSTM", 14, mrt_cpu_rnn, NULL},
    {"", "LSTM", 22, mrt_cpu_rnn, NULL},
    {0},
};
