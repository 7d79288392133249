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

/* The step buffers, carved from the workspace infer requested and zeroed (the recurrences start from zero). */
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
    int64_t counts[MRT_RNN_WS_PARTS];
    void *part[MRT_RNN_WS_PARTS];
    if (!mrt_rnn_workspace_parts(ctx, &d, counts))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the work buffers' size overflows");
    if (!mrt_workspace_parts(ctx, MRT_RNN_WS_PARTS, counts, 1, part)) return MRT_STATUS_OUT_OF_MEMORY;
    int64_t *lens = part[0];
    MRT_TRY(read_lens(ctx, &d, lens));
    rnn_ws ws;
    ws_carve(part, counts, &ws);
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
    mrt_dtype dt = in[0]->dtype;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE) st = run_typed(&d, &io, dt == MRT_DTYPE_DOUBLE, &ws);
    else if (mrt_lin_is_half(dt)) st = run_half(ctx, &d, &io, part, &ws);
    else st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(dt));
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
