/* RNN/GRU/LSTM and DFT/STFT/MelWeightMatrix/windows against the naive references in tests/ref/rnn_signal_ref.c:
 * every direction, both layouts, sequence_lens (zeros included), initial states, peepholes, input_forget,
 * linear_before_reset, clip, activation lists with alpha/beta, opsets 7/14/22, float/double/float16/bfloat16,
 * the float64 oracle, omitted outputs, empty tensors, float32's packed path (constant weights) beside the unpacked one
 * at sizes past the GEMM's tiles and blocks; DFT forward/inverse/RFFT/IRFFT with padding and truncation
 * and a round trip, STFT with and without a window, windows periodic and symmetric; error cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "harness.h"
#include "ref/rnn_signal_ref.h"

/* ------------------------------------------------------------------ helpers */

/* ------------------------------------------------------------------ RNN family */

static const char *const cell_names[3] = {"RNN", "GRU", "LSTM"};

typedef struct rnn_case {
    rs_cell cell;
    const char *dir;
    int layout;
    int opset; /* 0 = 22 */
    int64_t seq, batch, input, hidden;
    bool bias, h0, c0, peep, lens;
    const int32_t *lens_vals; /* NULL = random in [0, seq] */
    bool has_clip;
    double clip;
    bool lbr, input_forget;
    int n_acts;
    const char *const *acts;
    int n_alpha, n_beta;
    const float *alpha, *beta;
    mrt_dtype dt;
    int n_out;        /* 0 = all */
    double wscale;    /* 0 = 0.5 */
    bool fp64;        /* run under MRT_PRECISION_FP64 */
    bool no_hidden_attr;
    bool weights_fed; /* W, R, B, P as graph inputs instead of initializers: the kernel can't pack them */
    int threads;      /* session threads, 0 = the default */
} rnn_case;

typedef struct rnn_data {
    mrt_tensor x, w, r, b, lens, h0, c0, p;
    int64_t xs[3], ys[4], ss[3];
    int nd, g;
} rnn_data;

static void rnn_data_make(th_rng *r, const rnn_case *rc, rnn_data *d)
{
    memset(d, 0, sizeof *d);
    d->nd = strcmp(rc->dir, "bidirectional") == 0 ? 2 : 1;
    d->g = rc->cell == RS_RNN ? 1 : rc->cell == RS_GRU ? 3 : 4;
    int64_t nd = d->nd, gh = d->g * rc->hidden;
    double ws = rc->wscale > 0 ? rc->wscale : 0.5;
    if (rc->layout) {
        int64_t xs[3] = {rc->batch, rc->seq, rc->input}, ys[4] = {rc->batch, rc->seq, nd, rc->hidden};
        int64_t ss[3] = {rc->batch, nd, rc->hidden};
        memcpy(d->xs, xs, sizeof xs), memcpy(d->ys, ys, sizeof ys), memcpy(d->ss, ss, sizeof ss);
    } else {
        int64_t xs[3] = {rc->seq, rc->batch, rc->input}, ys[4] = {rc->seq, nd, rc->batch, rc->hidden};
        int64_t ss[3] = {nd, rc->batch, rc->hidden};
        memcpy(d->xs, xs, sizeof xs), memcpy(d->ys, ys, sizeof ys), memcpy(d->ss, ss, sizeof ss);
    }
    d->x = th_rand(r, rc->dt, 3, d->xs, -1, 1);
    d->w = th_rand(r, rc->dt, 3, (int64_t[]){nd, gh, rc->input}, -ws, ws);
    d->r = th_rand(r, rc->dt, 3, (int64_t[]){nd, gh, rc->hidden}, -ws, ws);
    d->b = th_rand(r, rc->dt, 2, (int64_t[]){nd, 2 * gh}, -ws, ws);
    d->h0 = th_rand(r, rc->dt, 3, d->ss, -1, 1);
    d->c0 = th_rand(r, rc->dt, 3, d->ss, -1, 1);
    d->p = th_rand(r, rc->dt, 2, (int64_t[]){nd, 3 * rc->hidden}, -ws, ws);
    d->lens = th_rand(r, MRT_DTYPE_INT32, 1, &rc->batch, 0, (double)rc->seq);
    if (rc->lens_vals)
        for (int64_t b = 0; b < rc->batch; b++) ((int32_t *)d->lens.data)[b] = rc->lens_vals[b];
}

static void rnn_data_free(rnn_data *d)
{
    mrt_tensor *ts[8] = {&d->x, &d->w, &d->r, &d->b, &d->lens, &d->h0, &d->c0, &d->p};
    for (int i = 0; i < 8; i++) mrt_tensor_release(ts[i]);
}

static void rnn_attrs(th_case *c, const rnn_case *rc)
{
    if (!rc->no_hidden_attr) th_attr_int(c, "hidden_size", rc->hidden);
    if (strcmp(rc->dir, "forward") != 0 || rc->hidden % 2) th_attr_string(c, "direction", rc->dir);
    if (rc->layout || (rc->opset == 0 || rc->opset >= 14)) th_attr_int(c, "layout", rc->layout);
    if (rc->has_clip) th_attr_float(c, "clip", (float)rc->clip);
    if (rc->cell == RS_GRU && rc->lbr) th_attr_int(c, "linear_before_reset", 1);
    if (rc->cell == RS_LSTM && rc->input_forget) th_attr_int(c, "input_forget", 1);
    if (rc->n_acts) th_attr_strings(c, "activations", rc->n_acts, rc->acts);
    if (rc->n_alpha) th_attr_floats(c, "activation_alpha", rc->n_alpha, rc->alpha);
    if (rc->n_beta) th_attr_floats(c, "activation_beta", rc->n_beta, rc->beta);
}

static th_case *rnn_node(const rnn_case *rc, rnn_data *d)
{
    th_case *c = th_begin(cell_names[rc->cell], "", rc->opset ? rc->opset : 22);
    void (*weight)(th_case *, const mrt_tensor *) = rc->weights_fed ? th_input : th_input_const;
    th_input(c, &d->x);
    weight(c, &d->w);
    weight(c, &d->r);
    bool lstm = rc->cell == RS_LSTM;
    bool any_after_b = rc->lens || rc->h0 || (lstm && (rc->c0 || rc->peep));
    if (rc->bias) weight(c, &d->b);
    else if (any_after_b) th_input_absent(c);
    bool any_after_lens = rc->h0 || (lstm && (rc->c0 || rc->peep));
    if (rc->lens) th_input(c, &d->lens);
    else if (any_after_lens) th_input_absent(c);
    bool any_after_h0 = lstm && (rc->c0 || rc->peep);
    if (rc->h0) th_input(c, &d->h0);
    else if (any_after_h0) th_input_absent(c);
    if (lstm) {
        if (rc->c0) th_input(c, &d->c0);
        else if (rc->peep) th_input_absent(c);
        if (rc->peep) weight(c, &d->p);
    }
    rnn_attrs(c, rc);
    return c;
}

/* Run one case and compare every requested output with the reference; y_keep: Y handed to the caller, or NULL. */
static void run_rnn_keep(th_rng *r, const rnn_case *rc, const char *label, mrt_tensor *y_keep)
{
    rnn_data d;
    rnn_data_make(r, rc, &d);
    th_case *c = rnn_node(rc, &d);
    int max_out = rc->cell == RS_LSTM ? 3 : 2;
    int n_out = rc->n_out ? rc->n_out : max_out;
    mrt_tensor out[3];
    mrt_session_options opt = mrt_session_options_default();
    if (rc->fp64) opt.precision = MRT_PRECISION_FP64;
    if (rc->threads) opt.n_threads = rc->threads;
    mrt_status st = th_run_opt(c, &opt, n_out, out);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", label, mrt_last_error());

    double *xd = th_to_f64(&d.x), *wd = th_to_f64(&d.w), *rd = th_to_f64(&d.r), *bd = th_to_f64(&d.b);
    double *h0d = th_to_f64(&d.h0), *c0d = th_to_f64(&d.c0), *pd = th_to_f64(&d.p);
    int64_t *lens = calloc((size_t)rc->batch + 1, sizeof(int64_t));
    for (int64_t b = 0; b < rc->batch; b++) lens[b] = ((int32_t *)d.lens.data)[b];
    double alpha[8], beta[8];
    for (int i = 0; i < rc->n_alpha; i++) alpha[i] = rc->alpha[i];
    for (int i = 0; i < rc->n_beta; i++) beta[i] = rc->beta[i];
    rs_rnn p = {
        .cell = rc->cell, .seq = rc->seq, .batch = rc->batch, .input = rc->input, .hidden = rc->hidden,
        .direction = rc->dir, .layout = rc->layout, .has_clip = rc->has_clip, .clip = (float)rc->clip,
        .linear_before_reset = rc->lbr, .input_forget = rc->input_forget, .n_acts = rc->n_acts, .acts = rc->acts,
        .n_alpha = rc->n_alpha, .n_beta = rc->n_beta, .alpha = alpha, .beta = beta,
        .x = xd, .w = wd, .r = rd, .b = rc->bias ? bd : NULL, .h0 = rc->h0 ? h0d : NULL,
        .c0 = rc->cell == RS_LSTM && rc->c0 ? c0d : NULL, .p = rc->cell == RS_LSTM && rc->peep ? pd : NULL,
        .lens = rc->lens ? lens : NULL,
    };
    double *ey = th_alloc_f64(th_numel(4, d.ys)), *eh = th_alloc_f64(th_numel(3, d.ss)), *ec = th_alloc_f64(th_numel(3, d.ss));
    cr_assert(rs_rnn_run(&p, ey, eh, ec), "%s: the reference rejected the activations", label);
    const double *exp_[3] = {ey, eh, ec};
    const char *names[3] = {"Y", "Y_h", "Y_c"};
    for (int i = 0; i < n_out; i++) {
        char l2[256];
        snprintf(l2, sizeof l2, "%s, %s", label, names[i]);
        if (rc->fp64) {
            char why[512];
            bool dbl = out[i].dtype == MRT_DTYPE_DOUBLE;
            cr_assert(th_check_f64(&out[i], exp_[i], i ? 3 : 4, i ? d.ss : d.ys, dbl ? 1e-24 : 1e-12,
                                   dbl ? 1e-12 : 1e-6, dbl ? 1e-12 : 1e-6, why, sizeof why),
                      "%s: %s", l2, why);
        } else {
            th_assert_close(&out[i], rc->dt, exp_[i], i ? 3 : 4, i ? d.ss : d.ys, l2);
        }
        if (i == 0 && y_keep) *y_keep = out[0];
        else mrt_tensor_release(&out[i]);
    }
    free(xd), free(wd), free(rd), free(bd), free(h0d), free(c0d), free(pd), free(lens);
    free(ey), free(eh), free(ec);
    th_free(c);
    rnn_data_free(&d);
}

static void run_rnn(th_rng *r, const rnn_case *rc, const char *label) { run_rnn_keep(r, rc, label, NULL); }

static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};

Test(rnn, random_cells_directions_layouts)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.random_cells_directions_layouts"));
    for (int it = 0; it < 72; it++) {
        rnn_case rc = {0};
        rc.cell = (rs_cell)(it % 3);
        rc.dir = dirs[(it / 3) % 3];
        rc.layout = (it / 9) % 2;
        rc.dt = (it / 18) % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        rc.seq = th_rng_int(&r, 1, 5);
        rc.batch = th_rng_int(&r, 1, 4);
        rc.input = th_rng_int(&r, 1, 5);
        rc.hidden = th_rng_int(&r, 1, 6);
        rc.bias = th_rng_int(&r, 0, 3) > 0;
        rc.h0 = th_rng_int(&r, 0, 1);
        rc.c0 = th_rng_int(&r, 0, 1);
        rc.peep = th_rng_int(&r, 0, 1);
        rc.lens = th_rng_int(&r, 0, 1);
        rc.lbr = th_rng_int(&r, 0, 1);
        rc.no_hidden_attr = th_rng_int(&r, 0, 3) == 0;
        rc.n_out = (int)th_rng_int(&r, 1, rc.cell == RS_LSTM ? 3 : 2);
        char label[160];
        snprintf(label, sizeof label, "it %d: %s %s layout %d %s seq %lld batch %lld in %lld hid %lld", it,
                 cell_names[rc.cell], rc.dir, rc.layout, mrt_dtype_name(rc.dt), (long long)rc.seq, (long long)rc.batch,
                 (long long)rc.input, (long long)rc.hidden);
        run_rnn(&r, &rc, label);
    }
}

/* Activation lists: per direction, one list for both directions, alpha/beta consumed in order by the
   functions that take them (defaults for the rest), names in any case. */
Test(rnn, activations_alpha_beta)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.activations_alpha_beta"));
    static const char *const rnn_acts[2] = {"LeakyRelu", "ScaledTanh"};
    static const char *const gru_acts[4] = {"HardSigmoid", "Softsign", "sigmoid", "Elu"};
    static const char *const lstm_acts[6] = {"HardSigmoid", "Affine", "ThresholdedRelu", "Sigmoid", "Softplus", "relu"};
    static const char *const lstm_one[3] = {"Sigmoid", "ScaledTanh", "Tanh"};
    static const float alphas[4] = {0.3f, 0.7f, 1.5f, 0.2f};
    static const float betas[3] = {0.4f, 0.6f, 0.9f};
    struct {
        rs_cell cell;
        const char *dir;
        int n_acts;
        const char *const *acts;
        int na, nb;
    } cases[] = {
        {RS_RNN, "bidirectional", 2, rnn_acts, 2, 1},
        {RS_RNN, "forward", 1, rnn_acts + 1, 0, 0},
        {RS_GRU, "bidirectional", 4, gru_acts, 3, 2},
        {RS_GRU, "reverse", 2, gru_acts + 2, 1, 0},
        {RS_LSTM, "bidirectional", 6, lstm_acts, 4, 3},
        {RS_LSTM, "bidirectional", 3, lstm_one, 1, 1},
        {RS_LSTM, "forward", 3, lstm_acts, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rnn_case rc = {.cell = cases[i].cell, .dir = cases[i].dir, .seq = 4, .batch = 3, .input = 3, .hidden = 4,
                       .bias = true, .h0 = true, .c0 = true, .n_acts = cases[i].n_acts, .acts = cases[i].acts,
                       .n_alpha = cases[i].na, .alpha = alphas, .n_beta = cases[i].nb, .beta = betas,
                       .dt = MRT_DTYPE_DOUBLE};
        char label[64];
        snprintf(label, sizeof label, "case %zu (%s)", i, cell_names[rc.cell]);
        run_rnn(&r, &rc, label);
        rc.dt = MRT_DTYPE_FLOAT;
        rc.layout = 1;
        run_rnn(&r, &rc, label);
    }
}

/* Large weights with a clip threshold: every gate's pre-activation is bounded (LSTM's h(Ct) is not). */
Test(rnn, clip)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.clip"));
    for (int cell = 0; cell < 3; cell++)
        for (int di = 0; di < 3; di++) {
            rnn_case rc = {.cell = (rs_cell)cell, .dir = dirs[di], .seq = 5, .batch = 2, .input = 4, .hidden = 3,
                           .bias = true, .h0 = true, .c0 = true, .has_clip = true, .clip = 0.7, .wscale = 3.0,
                           .dt = di == 1 ? MRT_DTYPE_FLOAT : MRT_DTYPE_DOUBLE, .lbr = di == 2};
            char label[64];
            snprintf(label, sizeof label, "%s %s", cell_names[cell], dirs[di]);
            run_rnn(&r, &rc, label);
        }
}

Test(rnn, gru_linear_before_reset)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.gru_linear_before_reset"));
    for (int lbr = 0; lbr < 2; lbr++)
        for (int di = 0; di < 3; di++) {
            rnn_case rc = {.cell = RS_GRU, .dir = dirs[di], .seq = 6, .batch = 3, .input = 5, .hidden = 7, .bias = true,
                           .h0 = true, .lbr = lbr, .dt = MRT_DTYPE_DOUBLE, .layout = di == 1};
            char label[64];
            snprintf(label, sizeof label, "lbr %d %s", lbr, dirs[di]);
            run_rnn(&r, &rc, label);
        }
}

Test(rnn, lstm_peepholes_input_forget)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.lstm_peepholes_input_forget"));
    for (int k = 0; k < 8; k++) {
        rnn_case rc = {.cell = RS_LSTM, .dir = dirs[k % 3], .seq = 5, .batch = 2, .input = 3, .hidden = 4,
                       .bias = k % 2, .h0 = true, .c0 = true, .peep = k < 4 || k == 6, .input_forget = k >= 4,
                       .lens = k == 5, .dt = k % 2 ? MRT_DTYPE_FLOAT : MRT_DTYPE_DOUBLE, .wscale = 1.0};
        char label[64];
        snprintf(label, sizeof label, "k %d", k);
        run_rnn(&r, &rc, label);
    }
}

/* Padded batches: Y is zero past each length, Y_h/Y_c hold the last valid step (the reverse direction ends at
   t = 0), a zero length gives zero states. */
Test(rnn, sequence_lens)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.sequence_lens"));
    static const int32_t lens[5] = {5, 0, 3, 1, 5};
    for (int cell = 0; cell < 3; cell++)
        for (int di = 0; di < 3; di++)
            for (int layout = 0; layout < 2; layout++) {
                rnn_case rc = {.cell = (rs_cell)cell, .dir = dirs[di], .layout = layout, .seq = 5, .batch = 5,
                               .input = 2, .hidden = 3, .bias = true, .h0 = true, .c0 = true, .peep = true,
                               .lens = true, .lens_vals = lens, .dt = MRT_DTYPE_DOUBLE};
                char label[64];
                snprintf(label, sizeof label, "%s %s layout %d", cell_names[cell], dirs[di], layout);
                run_rnn(&r, &rc, label);
            }
}

Test(rnn, half_types)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.half_types"));
    for (int cell = 0; cell < 3; cell++)
        for (int k = 0; k < 2; k++) {
            rnn_case rc = {.cell = (rs_cell)cell, .dir = dirs[cell], .seq = 3, .batch = 2, .input = 3, .hidden = 4,
                           .bias = true, .h0 = true, .c0 = true, .peep = true, .lens = true,
                           .dt = k ? MRT_DTYPE_BFLOAT16 : MRT_DTYPE_FLOAT16};
            char label[64];
            snprintf(label, sizeof label, "%s %s", cell_names[cell], mrt_dtype_name(rc.dt));
            run_rnn(&r, &rc, label);
        }
}

/* Opsets 7 and 14 (the layout attribute arrives in 14) give the same results as 22. */
Test(rnn, opsets)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.opsets"));
    static const int opsets[3] = {7, 14, 22};
    for (int cell = 0; cell < 3; cell++)
        for (int o = 0; o < 3; o++) {
            rnn_case rc = {.cell = (rs_cell)cell, .dir = "bidirectional", .opset = opsets[o], .layout = o == 1,
                           .seq = 3, .batch = 2, .input = 3, .hidden = 2, .bias = true, .h0 = true, .lens = true,
                           .dt = MRT_DTYPE_FLOAT};
            char label[64];
            snprintf(label, sizeof label, "%s opset %d", cell_names[cell], opsets[o]);
            run_rnn(&r, &rc, label);
        }
}

/* float32 with constant W and R takes the packed path (ops_cpu/rnn.c: minirt's SGEMM on weights packed at prepare,
   gates in float); fed as inputs, the unpacked one. Both against the reference, at sizes past the GEMM's tiles and
   blocks: hidden around the 48-column panels (2 * 70 and 3 * 50 not multiples of 48), hidden 260 and input 300 past
   the 256-deep k blocks, batches of 1 to 9 rows (the 1-, 2-, 4- and 8-row tiles), every cell, direction and
   layout, clip, sequence_lens, both linear_before_reset, peepholes, input_forget. The packed path's bits do not
   depend on the thread count (bidirectional nodes run their directions on two threads; one direction splits its
   batch over them, odd batches unevenly). */
Test(rnn, packed_float32)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.packed_float32"));
    static const int64_t hiddens[] = {50, 70, 260, 17}, inputs[] = {300, 7, 40, 64}, batches[] = {1, 2, 3, 4, 5, 9};
    for (int it = 0; it < 24; it++) {
        rnn_case rc = {.cell = (rs_cell)(it % 3), .dir = dirs[(it / 3) % 3], .layout = (it / 9) % 2,
                       .seq = th_rng_int(&r, 1, 5), .batch = batches[it % 6], .input = inputs[(it / 2) % 4],
                       .hidden = hiddens[(it / 6) % 4], .bias = it % 5 != 0, .h0 = it % 2, .c0 = it % 4 < 2,
                       .peep = it % 3 != 1, .lens = it % 4 == 1, .has_clip = it % 7 == 3, .clip = 0.8,
                       .lbr = (it / 3) % 2, .input_forget = it % 8 == 5, .dt = MRT_DTYPE_FLOAT, .wscale = 0.15};
        if (rc.hidden == 260 && rc.batch > 4) rc.batch = 2; /* keep the reference quick */
        /* GRU's and LSTM's R at hidden 260 is over 512 KiB packed: odd steps go through it backwards (step_gemm) */
        if (rc.hidden == 260 && rc.seq < 3) rc.seq = 3;
        char label[200];
        snprintf(label, sizeof label, "it %d: %s %s layout %d seq %lld batch %lld in %lld hid %lld lbr %d", it,
                 cell_names[rc.cell], rc.dir, rc.layout, (long long)rc.seq, (long long)rc.batch, (long long)rc.input,
                 (long long)rc.hidden, rc.lbr);
        th_rng r1 = r, r2 = r; /* the same data for every run */
        mrt_tensor y1, y2;
        rc.threads = 1;
        run_rnn_keep(&r1, &rc, label, &y1);
        rc.threads = 2;
        run_rnn_keep(&r2, &rc, label, &y2);
        cr_assert(memcmp(y1.data, y2.data, (size_t)mrt_tensor_numel(&y1) * sizeof(float)) == 0,
                  "%s: Y differs between 1 and 2 threads", label);
        mrt_tensor_release(&y1);
        mrt_tensor_release(&y2);
        rc.weights_fed = true;
        run_rnn(&r, &rc, label);
    }
}

/* One direction whose packed R is over 512 KiB splits its hidden units over the threads instead of its batch
   (ops_cpu/rnn.c, rnn_unit_parts): a dispatch per step, the state in two buffers taking turns. Y's bits must not
   depend on the thread count (3 threads: parts of uneven size; batch 1, which the batch split leaves on one
   thread), and Y, Y_h, Y_c must match the reference, with sequence_lens (an entry past its end keeps its state
   across the buffers' turns), initial states, peepholes, clip, input_forget, both layouts and reverse. */
Test(rnn, packed_split_over_units)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.packed_split_over_units"));
    for (int it = 0; it < 6; it++) {
        rs_cell cell = it < 3 ? RS_LSTM : it < 5 ? RS_GRU : RS_RNN; /* GRU with linear_before_reset: the split one can't */
        rnn_case rc = {.cell = cell, .dir = it % 2 ? "reverse" : "forward", .layout = it % 2, .seq = 4,
                       .batch = it == 1 ? 1 : 3, .input = 20, .hidden = cell == RS_RNN ? 380 : 260, .bias = true,
                       .h0 = it != 2, .c0 = it != 0, .peep = it != 1, .lens = it % 3 == 0, .has_clip = it == 2,
                       .clip = 0.8, .lbr = true, .input_forget = it == 1, .dt = MRT_DTYPE_FLOAT, .wscale = 0.15};
        char label[200];
        snprintf(label, sizeof label, "it %d: %s %s layout %d batch %lld hid %lld", it, cell_names[rc.cell], rc.dir,
                 rc.layout, (long long)rc.batch, (long long)rc.hidden);
        mrt_tensor y[3];
        for (int t = 0; t < 3; t++) {
            th_rng rt = r; /* the same data for every run */
            rc.threads = t + 1;
            run_rnn_keep(&rt, &rc, label, &y[t]);
        }
        for (int t = 1; t < 3; t++)
            cr_assert(memcmp(y[0].data, y[t].data, (size_t)mrt_tensor_numel(&y[0]) * sizeof(float)) == 0,
                      "%s: Y differs between 1 and %d threads", label, t + 1);
        for (int t = 0; t < 3; t++) mrt_tensor_release(&y[t]);
        th_rng_int(&r, 0, 1); /* next case, other data */
    }
}

/* The float64 oracle runs the float model in double: it must match the double reference closely. */
Test(rnn, fp64_oracle)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.fp64_oracle"));
    for (int cell = 0; cell < 3; cell++) {
        rnn_case rc = {.cell = (rs_cell)cell, .dir = "bidirectional", .seq = 4, .batch = 3, .input = 3, .hidden = 5,
                       .bias = true, .h0 = true, .c0 = true, .peep = true, .lens = true, .dt = MRT_DTYPE_FLOAT,
                       .fp64 = true};
        run_rnn(&r, &rc, cell_names[cell]);
    }
}

Test(rnn, empty_dims)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.empty_dims"));
    for (int cell = 0; cell < 3; cell++) {
        rnn_case b0 = {.cell = (rs_cell)cell, .dir = "bidirectional", .seq = 3, .batch = 0, .input = 2, .hidden = 3,
                       .bias = true, .dt = MRT_DTYPE_FLOAT};
        run_rnn(&r, &b0, "batch 0");
        rnn_case s0 = {.cell = (rs_cell)cell, .dir = "forward", .seq = 0, .batch = 2, .input = 2, .hidden = 3,
                       .bias = true, .h0 = true, .dt = MRT_DTYPE_FLOAT};
        run_rnn(&r, &s0, "seq 0");
        rnn_case i0 = {.cell = (rs_cell)cell, .dir = "reverse", .seq = 2, .batch = 2, .input = 0, .hidden = 3,
                       .bias = true, .h0 = true, .dt = MRT_DTYPE_DOUBLE};
        run_rnn(&r, &i0, "input 0");
    }
}

/* Y omitted (empty output name), Y_h requested: built by hand since the harness names every output. */
Test(rnn, omitted_y_output)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.omitted_y_output"));
    rnn_case rc = {.cell = RS_LSTM, .dir = "bidirectional", .seq = 4, .batch = 2, .input = 3, .hidden = 3,
                   .dt = MRT_DTYPE_FLOAT};
    rnn_data d;
    rnn_data_make(&r, &rc, &d);
    mrt_model *m = mrt_model_new();
    m->graph = mrt_graph_new("g");
    cr_assert_eq(mrt_model_set_opset(m, "", 22), MRT_STATUS_OK);
    int vi;
    cr_assert_eq(mrt_graph_add_input(m->graph, "x", NULL, &vi), MRT_STATUS_OK);
    mrt_tensor wc, rcpy;
    cr_assert_eq(mrt_tensor_copy(&wc, &d.w), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_copy(&rcpy, &d.r), MRT_STATUS_OK);
    cr_assert_eq(mrt_graph_set_initializer(m->graph, "w", &wc), MRT_STATUS_OK);
    cr_assert_eq(mrt_graph_set_initializer(m->graph, "r", &rcpy), MRT_STATUS_OK);
    const char *ins[3] = {"x", "w", "r"}, *outs[3] = {"", "", "yc"};
    mrt_node *node;
    cr_assert_eq(mrt_graph_add_node(m->graph, "lstm", "LSTM", "", 3, ins, 3, outs, &node), MRT_STATUS_OK);
    cr_assert_eq(mrt_node_add_attr_string(node, "direction", "bidirectional"), MRT_STATUS_OK);
    cr_assert_eq(mrt_graph_add_output(m->graph, "yc", NULL, &vi), MRT_STATUS_OK);
    m->graph->values[vi].producer = 0;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    const char *names[1] = {"x"};
    mrt_value xv = mrt_value_from_tensor(d.x);
    cr_assert_eq(mrt_session_run(s, 1, names, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    const mrt_value *yc = mrt_session_output(s, 0);
    double *xd = th_to_f64(&d.x), *wd = th_to_f64(&d.w), *rd = th_to_f64(&d.r);
    rs_rnn p = {.cell = RS_LSTM, .seq = 4, .batch = 2, .input = 3, .hidden = 3, .direction = "bidirectional",
                .x = xd, .w = wd, .r = rd};
    double ec[18];
    cr_assert(rs_rnn_run(&p, NULL, NULL, ec));
    th_assert_close(&yc->tensor, MRT_DTYPE_FLOAT, ec, 3, d.ss, "Y_c only");
    mrt_session_free(s);
    mrt_model_free(m);
    free(xd), free(wd), free(rd);
    rnn_data_free(&d);
}

Test(rnn, errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("rnn.errors"));
    rnn_case base = {.cell = RS_GRU, .dir = "forward", .seq = 3, .batch = 2, .input = 3, .hidden = 2, .bias = true,
                     .lens = true, .dt = MRT_DTYPE_FLOAT};
    rnn_data d;

    /* W with the wrong gate count */
    rnn_data_make(&r, &base, &d);
    mrt_tensor w_bad = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 4, 3}, -1, 1);
    th_case *c = th_begin("GRU", "", 22);
    th_input(c, &d.x);
    th_input_const(c, &w_bad);
    th_input_const(c, &d.r);
    th_expect_failure(c, 1, "input 'W' has shape [1,4,3]", "bad W");
    mrt_tensor_release(&w_bad);

    /* B sized for another cell */
    mrt_tensor b_bad = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 8}, -1, 1);
    c = th_begin("GRU", "", 22);
    th_input(c, &d.x);
    th_input_const(c, &d.w);
    th_input_const(c, &d.r);
    th_input_const(c, &b_bad);
    th_expect_failure(c, 1, "input 'B'", "bad B");
    mrt_tensor_release(&b_bad);

    /* unknown direction, unknown activation, wrong activation count, hidden_size disagreeing with R */
    c = rnn_node(&base, &d);
    th_attr_string(c, "direction", "sideways");
    th_expect_failure(c, 1, "sideways", "direction");
    rnn_case acts = base;
    static const char *const swish[2] = {"Swish", "Tanh"};
    acts.n_acts = 2;
    acts.acts = swish;
    th_expect_failure(rnn_node(&acts, &d), 1, "Swish", "activation name");
    acts.n_acts = 1;
    th_expect_failure(rnn_node(&acts, &d), 1, "expected 2", "activation count");
    c = th_begin("GRU", "", 22);
    th_input(c, &d.x);
    th_input_const(c, &d.w);
    th_input_const(c, &d.r);
    th_attr_int(c, "hidden_size", 5);
    th_expect_failure(c, 1, "hidden_size", "hidden_size");

    /* a sequence length past seq_length (known only at run time) */
    ((int32_t *)d.lens.data)[1] = 4;
    th_expect_failure(rnn_node(&base, &d), 1, "sequence_lens[1] is 4", "sequence_lens");

    /* layout 1 before opset 14; dtype mismatch between X and R */
    rnn_case old = base;
    old.opset = 7;
    old.layout = 1;
    ((int32_t *)d.lens.data)[1] = 1;
    th_expect_failure(rnn_node(&old, &d), 1, "opset 14", "layout at opset 7");
    mrt_tensor r_dbl = th_rand(&r, MRT_DTYPE_DOUBLE, 3, (int64_t[]){1, 6, 2}, -1, 1);
    c = th_begin("GRU", "", 22);
    th_input(c, &d.x);
    th_input_const(c, &d.w);
    th_input_const(c, &r_dbl);
    th_expect_failure(c, 1, "input 'R' has dtype float64", "R dtype");
    mrt_tensor_release(&r_dbl);

    /* X of rank 2 */
    mrt_tensor x2 = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 3}, -1, 1);
    c = th_begin("RNN", "", 22);
    th_input(c, &x2);
    th_input_const(c, &d.w);
    th_input_const(c, &d.r);
    th_expect_failure(c, 1, "must be 3-D", "X rank");
    mrt_tensor_release(&x2);
    rnn_data_free(&d);
}

/* ------------------------------------------------------------------ DFT */

typedef struct dft_case {
    int rank;
    int64_t shape[5]; /* including the trailing 1|2 */
    int64_t axis;     /* as given (may be negative) */
    int64_t len;      /* 0 = absent */
    bool inverse, onesided;
    int opset;        /* 17..19: axis attribute; 20: axis input */
    bool axis_const;  /* opset 20: axis as an initializer (else a runtime input) */
    mrt_dtype dt;
} dft_case;

/* Runs the DFT and checks it against rs_dft; returns the output (caller releases) when out != NULL. */
static void run_dft(th_rng *r, const dft_case *dc, const mrt_tensor *given, const char *label, mrt_tensor *out)
{
    mrt_tensor x = given ? *given : th_rand(r, dc->dt, dc->rank, dc->shape, -1, 1);
    mrt_tensor len = th_scalar_i64(dc->len), ax = th_scalar_i64(dc->axis);
    th_case *c = th_begin("DFT", "", dc->opset);
    th_input(c, &x);
    if (dc->len) th_input_const(c, &len);
    else if (dc->opset >= 20) th_input_absent(c);
    if (dc->opset >= 20) {
        if (dc->axis_const) th_input_const(c, &ax);
        else th_input(c, &ax);
    } else {
        th_attr_int(c, "axis", dc->axis);
    }
    if (dc->inverse) th_attr_int(c, "inverse", 1);
    if (dc->onesided) th_attr_int(c, "onesided", 1);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());

    int64_t a = dc->axis < 0 ? dc->axis + dc->rank : dc->axis;
    int64_t outer = 1, inner = 1, dim = x.shape[a], comp = x.shape[dc->rank - 1];
    for (int64_t i = 0; i < a; i++) outer *= x.shape[i];
    for (int64_t i = a + 1; i < dc->rank - 1; i++) inner *= x.shape[i];
    bool irfft = dc->inverse && dc->onesided;
    int64_t n = dc->len ? dc->len : irfft ? 2 * (dim - 1) : dim;
    int64_t ys[5];
    memcpy(ys, x.shape, sizeof ys);
    ys[a] = dc->onesided && !dc->inverse ? n / 2 + 1 : n;
    ys[dc->rank - 1] = irfft ? 1 : 2;
    double *xd = th_to_f64(&x), *e = th_alloc_f64(th_numel(dc->rank, ys));
    rs_dft(xd, outer, dim, inner, (int)comp, n, dc->inverse, dc->onesided, e);
    /* sums of n terms: scale the float tolerance with the magnitude of the output */
    char why[512];
    double nmse, at, rt;
    th_tolerance(dc->dt, &nmse, &at, &rt);
    at *= (double)(n > 1 ? n : 1);
    cr_assert_eq(y.dtype, dc->dt, "%s: dtype %s", label, mrt_dtype_name(y.dtype));
    cr_assert(th_check_f64(&y, e, dc->rank, ys, nmse, at, rt, why, sizeof why), "%s: %s", label, why);
    free(xd);
    free(e);
    if (out) *out = y;
    else mrt_tensor_release(&y);
    if (!given) mrt_tensor_release(&x);
    mrt_tensor_release(&len);
    mrt_tensor_release(&ax);
    th_free(c);
}

Test(signal, dft_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_random"));
    for (int it = 0; it < 96; it++) {
        dft_case dc = {0};
        dc.rank = (int)th_rng_int(&r, 2, 5);
        for (int i = 0; i < dc.rank - 1; i++) dc.shape[i] = th_rng_int(&r, 1, 4);
        int64_t a = th_rng_int(&r, 0, dc.rank - 2);
        /* a power of two (radix-2 path) or not (direct sum) along the axis */
        dc.shape[a] = it % 2 ? ((int64_t)1 << th_rng_int(&r, 0, 4)) : th_rng_int(&r, 1, 13);
        dc.inverse = (it / 2) % 2;
        dc.onesided = (it / 4) % 2;
        bool irfft = dc.inverse && dc.onesided;
        dc.shape[dc.rank - 1] = irfft || th_rng_int(&r, 0, 1) ? 2 : 1;
        if (dc.onesided && !dc.inverse) dc.shape[dc.rank - 1] = 1;
        dc.axis = th_rng_int(&r, 0, 1) ? a : a - dc.rank;
        int lk = (int)th_rng_int(&r, 0, 2); /* absent, shorter, longer */
        if (lk == 1) dc.len = th_rng_int(&r, 1, dc.shape[a]);
        else if (lk == 2) dc.len = dc.shape[a] + th_rng_int(&r, 1, 9);
        if (irfft && !dc.len && dc.shape[a] < 2) dc.len = 5;
        dc.opset = (it / 8) % 3 == 0 ? 17 : (it / 8) % 3 == 1 ? 19 : 20;
        dc.axis_const = th_rng_int(&r, 0, 1);
        if (dc.opset < 20 && dc.axis < 0) dc.axis = a; /* keep both spellings exercised at 20 */
        dc.dt = (it / 24) % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        char label[160];
        snprintf(label, sizeof label,
                 "it %d: rank %d axis %lld dim %lld comp %lld len %lld inv %d onesided %d opset %d", it, dc.rank,
                 (long long)dc.axis, (long long)dc.shape[a], (long long)dc.shape[dc.rank - 1], (long long)dc.len,
                 dc.inverse, dc.onesided, dc.opset);
        run_dft(&r, &dc, NULL, label, NULL);
    }
}

/* Long transforms in double, to the last digits: radix-2 (1024), Bluestein (65, 100, 1000, inverse 243), and
   the direct sum at its largest length (63). */
Test(signal, dft_long)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_long"));
    static const int64_t lens[6] = {1024, 65, 100, 1000, 243, 63};
    for (int k = 0; k < 6; k++) {
        dft_case a = {.rank = 3, .shape = {2, lens[k], k % 2 ? 1 : 2}, .axis = k % 3 ? 1 : -2, .opset = 20,
                      .axis_const = true, .inverse = k == 4, .onesided = k == 3, .dt = MRT_DTYPE_DOUBLE};
        if (a.onesided) a.shape[2] = 1;
        char label[32];
        snprintf(label, sizeof label, "n %lld", (long long)lens[k]);
        run_dft(&r, &a, NULL, label, NULL);
    }
}

/* forward then inverse gives the signal back; RFFT then IRFFT gives the real signal back. */
Test(signal, dft_inverse_round_trip)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_inverse_round_trip"));
    static const int64_t lens[5] = {8, 7, 12, 1, 96};
    for (int k = 0; k < 5; k++)
        for (int rf = 0; rf < 2; rf++) {
            int64_t n = lens[k];
            mrt_dtype dt = rf ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
            mrt_tensor x = th_rand(&r, dt, 4, (int64_t[]){2, n, 3, rf ? 1 : 2}, -1, 1);
            dft_case fw = {.rank = 4, .axis = 1, .opset = 20, .axis_const = true, .onesided = rf, .dt = dt};
            memcpy(fw.shape, x.shape, sizeof(int64_t) * 4);
            mrt_tensor spec, back;
            char label[64];
            snprintf(label, sizeof label, "n %lld %s forward", (long long)n, rf ? "rfft" : "fft");
            run_dft(&r, &fw, &x, label, &spec);
            dft_case inv = fw;
            inv.inverse = true;
            inv.len = rf ? n : 0;
            memcpy(inv.shape, spec.shape, sizeof(int64_t) * 4);
            snprintf(label, sizeof label, "n %lld %s inverse", (long long)n, rf ? "irfft" : "ifft");
            run_dft(&r, &inv, &spec, label, &back);
            char why[512];
            double *xd = th_to_f64(&x);
            cr_assert(th_check_f64(&back, xd, 4, x.shape, rf ? 1e-24 : 1e-10, rf ? 1e-12 : 1e-5, 0, why, sizeof why),
                      "n %lld round trip: %s", (long long)n, why);
            free(xd);
            mrt_tensor_release(&spec);
            mrt_tensor_release(&back);
            mrt_tensor_release(&x);
        }
}

Test(signal, dft_half_and_fp64)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_half_and_fp64"));
    dft_case h = {.rank = 3, .shape = {2, 6, 2}, .axis = 1, .opset = 20, .axis_const = true, .dt = MRT_DTYPE_FLOAT16};
    run_dft(&r, &h, NULL, "float16", NULL);
    h.dt = MRT_DTYPE_BFLOAT16;
    h.shape[1] = 4;
    run_dft(&r, &h, NULL, "bfloat16", NULL);

    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 9, 1}, -1, 1);
    th_case *c = th_begin("DFT", "", 17);
    th_input(c, &x);
    th_attr_int(c, "onesided", 1);
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    mrt_tensor y;
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *xd = th_to_f64(&x), e[2 * 5 * 2];
    rs_dft(xd, 2, 9, 1, 1, 9, false, true, e);
    char why[512];
    cr_assert(th_check_f64(&y, e, 3, (int64_t[]){2, 5, 2}, 1e-12, 1e-6, 1e-6, why, sizeof why), "fp64: %s", why);
    free(xd);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(signal, dft_empty)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_empty"));
    dft_case e = {.rank = 3, .shape = {0, 4, 2}, .axis = 1, .opset = 20, .axis_const = true, .dt = MRT_DTYPE_FLOAT};
    run_dft(&r, &e, NULL, "batch 0", NULL);
    dft_case z = {.rank = 3, .shape = {2, 0, 1}, .axis = 1, .len = 4, .opset = 17, .dt = MRT_DTYPE_FLOAT};
    run_dft(&r, &z, NULL, "empty axis padded to 4", NULL);
}

Test(signal, dft_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.dft_errors"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 4, 2}, -1, 1);
    mrt_tensor x3 = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 4, 3}, -1, 1);
    mrt_tensor xi = th_rand(&r, MRT_DTYPE_INT32, 3, (int64_t[]){2, 4, 1}, -1, 1);
    mrt_tensor ax_last = th_scalar_i64(-1), len0 = th_scalar_i64(0), ax2 = th_scalar_i64(2);

    th_case *c = th_begin("DFT", "", 20);
    th_input(c, &x);
    th_input_absent(c);
    th_input(c, &ax_last);
    th_expect_failure(c, 1, "axis -1 is outside", "axis on the complex dimension");
    c = th_begin("DFT", "", 20);
    th_input(c, &x);
    th_input_absent(c);
    th_input_const(c, &ax2);
    th_expect_failure(c, 1, "axis 2 is outside", "axis 2 of rank 3");
    c = th_begin("DFT", "", 17);
    th_input(c, &x);
    th_input_const(c, &len0);
    th_expect_failure(c, 1, "dft_length is 0", "dft_length 0");
    c = th_begin("DFT", "", 17);
    th_input(c, &x3);
    th_expect_failure(c, 1, "last dimension of 1 (real) or 2 (complex)", "last dim 3");
    c = th_begin("DFT", "", 17);
    th_input(c, &xi);
    th_expect_failure(c, 1, "dtype int32", "int input");
    c = th_begin("DFT", "", 17);
    th_input(c, &x);
    th_attr_int(c, "inverse", 2);
    th_expect_failure(c, 1, "'inverse' is 2", "inverse 2");
    mrt_tensor_release(&x);
    mrt_tensor_release(&x3);
    mrt_tensor_release(&xi);
    mrt_tensor_release(&ax_last);
    mrt_tensor_release(&len0);
    mrt_tensor_release(&ax2);
}

/* ------------------------------------------------------------------ STFT */

typedef struct stft_case {
    int64_t batch, len, comp, step, frame;
    bool window, frame_input, onesided_attr;
    int onesided;
    mrt_dtype dt;
} stft_case;

static void run_stft(th_rng *r, const stft_case *sc, const char *label)
{
    mrt_tensor x = th_rand(r, sc->dt, 3, (int64_t[]){sc->batch, sc->len, sc->comp}, -1, 1);
    mrt_tensor w = th_rand(r, sc->dt, 1, &sc->frame, 0, 1);
    mrt_tensor step = th_scalar_i64(sc->step), fl = th_scalar_i64(sc->frame);
    th_case *c = th_begin("STFT", "", 17);
    th_input(c, &x);
    th_input(c, &step);
    if (sc->window) th_input_const(c, &w);
    else if (sc->frame_input) th_input_absent(c);
    if (sc->frame_input) th_input_const(c, &fl);
    if (sc->onesided_attr) th_attr_int(c, "onesided", sc->onesided);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    bool onesided = !sc->onesided_attr || sc->onesided;
    int64_t frame = sc->frame_input || sc->window ? sc->frame : sc->len;
    int64_t frames = (sc->len - frame) / sc->step + 1, bins = onesided ? frame / 2 + 1 : frame;
    int64_t ys[4] = {sc->batch, frames, bins, 2};
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *e = th_alloc_f64(th_numel(4, ys));
    rs_stft(xd, sc->batch, sc->len, (int)sc->comp, sc->step, frame, sc->window ? wd : NULL, onesided, e);
    char why[512];
    double nmse, at, rt;
    th_tolerance(sc->dt, &nmse, &at, &rt);
    at *= (double)frame;
    cr_assert(th_check_f64(&y, e, 4, ys, nmse, at, rt, why, sizeof why), "%s: %s", label, why);
    free(xd), free(wd), free(e);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&step);
    mrt_tensor_release(&fl);
    th_free(c);
}

Test(signal, stft)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.stft"));
    for (int it = 0; it < 40; it++) {
        stft_case sc = {0};
        sc.batch = th_rng_int(&r, 1, 3);
        sc.len = th_rng_int(&r, 1, 40);
        sc.frame = th_rng_int(&r, 1, sc.len);
        if (it % 5 == 0 && sc.len >= 16) sc.frame = 16;
        sc.step = th_rng_int(&r, 1, 9);
        sc.comp = th_rng_int(&r, 0, 2) ? 1 : 2;
        sc.window = it % 3 != 0;
        sc.frame_input = it % 3 != 1;
        if (!sc.window && !sc.frame_input) sc.frame = sc.len;
        sc.onesided_attr = it % 4 != 0;
        sc.onesided = sc.comp == 1 ? (int)th_rng_int(&r, 0, 1) : 0;
        sc.dt = it % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        if (it == 39) sc.dt = MRT_DTYPE_FLOAT16;
        if (it == 38) { /* a 400-sample frame (Bluestein), Whisper-style, with a window */
            sc.len = 1200, sc.frame = 400, sc.step = 160, sc.window = true, sc.comp = 1, sc.dt = MRT_DTYPE_DOUBLE;
        }
        char label[128];
        snprintf(label, sizeof label, "it %d: len %lld frame %lld step %lld comp %lld window %d onesided %d", it,
                 (long long)sc.len, (long long)sc.frame, (long long)sc.step, (long long)sc.comp, sc.window,
                 !sc.onesided_attr || sc.onesided);
        run_stft(&r, &sc, label);
    }
}

Test(signal, stft_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("signal.stft_errors"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 20, 1}, -1, 1);
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){8}, 0, 1);
    mrt_tensor step = th_scalar_i64(4), step0 = th_scalar_i64(0), fl6 = th_scalar_i64(6), fl30 = th_scalar_i64(30);
    th_case *c = th_begin("STFT", "", 17);
    th_input(c, &x);
    th_input(c, &step);
    th_input_const(c, &w);
    th_input_const(c, &fl6);
    th_expect_failure(c, 1, "must agree", "window vs frame_length");
    c = th_begin("STFT", "", 17);
    th_input(c, &x);
    th_input(c, &step0);
    th_input_const(c, &w);
    th_expect_failure(c, 1, "frame_step is 0", "step 0");
    c = th_begin("STFT", "", 17);
    th_input(c, &x);
    th_input(c, &step);
    th_input_absent(c);
    th_input_const(c, &fl30);
    th_expect_failure(c, 1, "frame_length 30 is outside [1, 20]", "frame longer than the signal");
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&step);
    mrt_tensor_release(&step0);
    mrt_tensor_release(&fl6);
    mrt_tensor_release(&fl30);
}

/* ------------------------------------------------------------------ MelWeightMatrix and windows */

static void run_mel(int64_t mel, int64_t n, int64_t rate, double lo, double hi, mrt_dtype in_dt, int64_t out_dt,
                    const char *label)
{
    mrt_tensor a = th_scalar_i64(mel), b = th_scalar_i64(n), s = th_scalar_i64(rate);
    mrt_tensor l = th_from_f64(in_dt, 0, NULL, &lo), h = th_from_f64(in_dt, 0, NULL, &hi);
    th_case *c = th_begin("MelWeightMatrix", "", 17);
    th_input_const(c, &a);
    th_input(c, &b);
    th_input(c, &s);
    th_input(c, &l);
    th_input(c, &h);
    if (out_dt) th_attr_int(c, "output_datatype", out_dt);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    int64_t ys[2] = {n / 2 + 1, mel};
    double *e = th_alloc_f64(ys[0] * ys[1]);
    cr_assert(rs_mel(mel, n, rate, mrt_load_f64(in_dt, l.data, 0), mrt_load_f64(in_dt, h.data, 0), e),
              "%s: the reference rejected the case", label);
    if (out_dt && !mrt_dtype_is_float((mrt_dtype)out_dt))
        for (int64_t i = 0; i < ys[0] * ys[1]; i++) e[i] = trunc(e[i]); /* stored like a C cast */
    th_assert_close(&y, out_dt ? (mrt_dtype)out_dt : MRT_DTYPE_FLOAT, e, 2, ys, label);
    free(e);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a), mrt_tensor_release(&b), mrt_tensor_release(&s), mrt_tensor_release(&l),
        mrt_tensor_release(&h);
    th_free(c);
}

Test(signal, mel_weight_matrix)
{
    run_mel(8, 16, 8192, 0, 4096, MRT_DTYPE_FLOAT, 0, "onnx example");
    run_mel(10, 512, 16000, 20, 8000, MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, "speech");
    run_mel(40, 1024, 44100, 125, 7600, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT, "music");
    run_mel(4, 31, 1000, 100, 400, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT16, "odd length, float16");
    run_mel(3, 64, 8000, 0, 4000, MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, "int output");

    /* an upper edge past the Nyquist frequency maps outside the spectrogram */
    mrt_tensor a = th_scalar_i64(8), b = th_scalar_i64(16), s = th_scalar_i64(8192);
    double lo = 0, hi = 20000;
    mrt_tensor l = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, &lo), h = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, &hi);
    th_case *c = th_begin("MelWeightMatrix", "", 17);
    th_input(c, &a);
    th_input(c, &b);
    th_input(c, &s);
    th_input(c, &l);
    th_input(c, &h);
    th_expect_failure(c, 1, "outside", "upper edge too high");
    mrt_tensor b0 = th_scalar_i64(0);
    c = th_begin("MelWeightMatrix", "", 17);
    th_input(c, &a);
    th_input_const(c, &b0);
    th_input(c, &s);
    th_input(c, &l);
    th_input(c, &h);
    th_expect_failure(c, 1, "dft_length is 0", "dft_length 0");
    mrt_tensor_release(&a), mrt_tensor_release(&b), mrt_tensor_release(&s), mrt_tensor_release(&l),
        mrt_tensor_release(&h), mrt_tensor_release(&b0);
}

Test(signal, windows)
{
    static const char *const ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    static const int64_t sizes[5] = {1, 2, 7, 16, 0};
    for (int k = 0; k < 3; k++)
        for (int si = 0; si < 5; si++)
            for (int periodic = 0; periodic < 2; periodic++)
                for (int dk = 0; dk < 3; dk++) {
                    mrt_dtype dt = dk == 0 ? MRT_DTYPE_FLOAT : dk == 1 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT16;
                    int64_t n = sizes[si];
                    double nd = (double)n;
                    mrt_tensor sz = th_from_f64(si % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, 0, NULL, &nd);
                    th_case *c = th_begin(ops[k], "", 17);
                    th_input(c, &sz);
                    if (periodic == 0 || si == 2) th_attr_int(c, "periodic", periodic);
                    if (dk) th_attr_int(c, "output_datatype", dt);
                    mrt_tensor y;
                    char label[96];
                    snprintf(label, sizeof label, "%s size %lld periodic %d %s", ops[k], (long long)n, periodic,
                             mrt_dtype_name(dt));
                    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
                    double e[16];
                    rs_window(k, n, periodic, e);
                    /* element-wise bounds only: a symmetric Hann window of 2 is all zeros, where NMSE means nothing */
                    double nmse, at, rt;
                    char why[512];
                    th_tolerance(dt, &nmse, &at, &rt);
                    cr_assert_eq(y.dtype, dt, "%s: dtype %s", label, mrt_dtype_name(y.dtype));
                    cr_assert(th_check_f64(&y, e, 1, &n, 2.0, at, rt, why, sizeof why), "%s: %s", label, why);
                    mrt_tensor_release(&y);
                    mrt_tensor_release(&sz);
                    th_free(c);
                }
    mrt_tensor neg = th_scalar_i64(-3);
    th_case *c = th_begin("HannWindow", "", 17);
    th_input(c, &neg);
    th_expect_failure(c, 1, "negative", "negative size");
    mrt_tensor_release(&neg);
}
