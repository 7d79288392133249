/* Opdefs: RNN, GRU, LSTM (7, 14, 22): directions forward/reverse/bidirectional, activations with their
 * alpha/beta lists, clip, sequence_lens, initial_h/initial_c, peepholes (LSTM), layout 0/1 (opset >= 14);
 * every output optional. float/double/float16/bfloat16. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/opdef/rnn.h"
#include "engine/registry.h"

typedef struct act_info {
    const char *name;
    mrt_rnn_act_kind kind;
    bool uses_alpha, uses_beta;
    double alpha, beta; /* defaults: those of the ONNX operators of the same name */
} act_info;

static const act_info act_table[] = {
    {"Relu", MRT_RNN_ACT_RELU, false, false, 0, 0},
    {"Tanh", MRT_RNN_ACT_TANH, false, false, 0, 0},
    {"Sigmoid", MRT_RNN_ACT_SIGMOID, false, false, 0, 0},
    {"Affine", MRT_RNN_ACT_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", MRT_RNN_ACT_LEAKYRELU, true, false, 0.01, 0},
    {"ThresholdedRelu", MRT_RNN_ACT_THRESHOLDEDRELU, true, false, 1.0, 0},
    {"ScaledTanh", MRT_RNN_ACT_SCALEDTANH, true, true, 1.0, 1.0},
    {"HardSigmoid", MRT_RNN_ACT_HARDSIGMOID, true, true, 0.2, 0.5},
    {"Elu", MRT_RNN_ACT_ELU, true, false, 1.0, 0},
    {"Softsign", MRT_RNN_ACT_SOFTSIGN, false, false, 0, 0},
    {"Softplus", MRT_RNN_ACT_SOFTPLUS, false, false, 0, 0},
};

/* Activation names are matched without regard to case, as exporters differ ("tanh", "Tanh"). */
static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb) return false;
    }
    return *a == *b;
}

double mrt_rnn_act_apply(const mrt_rnn_act *a, double x)
{
    switch (a->kind) {
    case MRT_RNN_ACT_RELU: return x > 0 ? x : 0;
    case MRT_RNN_ACT_TANH: return tanh(x);
    case MRT_RNN_ACT_SIGMOID: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case MRT_RNN_ACT_AFFINE: return a->alpha * x + a->beta;
    case MRT_RNN_ACT_LEAKYRELU: return x >= 0 ? x : a->alpha * x;
    case MRT_RNN_ACT_THRESHOLDEDRELU: return x > a->alpha ? x : 0;
    case MRT_RNN_ACT_SCALEDTANH: return a->alpha * tanh(a->beta * x);
    case MRT_RNN_ACT_HARDSIGMOID: {
        double v = a->alpha * x + a->beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case MRT_RNN_ACT_ELU: return x >= 0 ? x : a->alpha * (exp(x) - 1);
    case MRT_RNN_ACT_SOFTSIGN: return x / (1 + fabs(x));
    case MRT_RNN_ACT_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    }
    return x;
}

static const char *shp(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* An optional input, when present, must have exactly `shape`. */
static mrt_status check_shape(const mrt_op_ctx *ctx, const mrt_tensor *t, const char *name, int rank,
                              const int64_t *shape, const char *meaning)
{
    if (!t) return MRT_STATUS_OK;
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->shape[i] == shape[i];
    if (ok) return MRT_STATUS_OK;
    char ts[256], es[256];
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input '%s' has shape %s, expected %s (%s)", name,
                       shp(t, ts, sizeof ts), mrt_shape_describe(rank, shape, es, sizeof es), meaning);
}

static mrt_status check_dtype(const mrt_op_ctx *ctx, const mrt_tensor *t, const char *name, mrt_dtype dt)
{
    if (!t || t->dtype == dt) return MRT_STATUS_OK;
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s, expected %s like 'X'", name,
                       mrt_dtype_name(t->dtype), mrt_dtype_name(dt));
}

static mrt_status parse_activations(const mrt_op_ctx *ctx, mrt_rnn_desc *d)
{
    static const mrt_rnn_act_kind defaults[3][3] = {
        {MRT_RNN_ACT_TANH},
        {MRT_RNN_ACT_SIGMOID, MRT_RNN_ACT_TANH},
        {MRT_RNN_ACT_SIGMOID, MRT_RNN_ACT_TANH, MRT_RNN_ACT_TANH},
    };
    const mrt_attr *names, *alphas, *betas;
    MRT_TRY(mrt_attr_get(ctx, "activations", MRT_ATTR_STRINGS, &names));
    MRT_TRY(mrt_attr_get(ctx, "activation_alpha", MRT_ATTR_FLOATS, &alphas));
    MRT_TRY(mrt_attr_get(ctx, "activation_beta", MRT_ATTR_FLOATS, &betas));
    int n = d->n_acts, total = n * d->num_dir;
    if (!names || names->n == 0) {
        for (int dir = 0; dir < d->num_dir; dir++)
            for (int k = 0; k < n; k++) d->acts[dir][k] = (mrt_rnn_act){defaults[d->cell][k], 0, 0};
        return MRT_STATUS_OK;
    }
    /* A bidirectional node that lists one direction's functions uses them for both. */
    if (names->n != total && !(d->num_dir == 2 && names->n == n))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'activations' lists %lld functions, expected %d (%d per direction)",
                           (long long)names->n, total, n);
    int64_t ia = 0, ib = 0;
    for (int j = 0; j < total; j++) {
        const char *name = names->strings[j % names->n];
        const act_info *info = NULL;
        for (size_t k = 0; k < sizeof act_table / sizeof act_table[0]; k++)
            if (same_name(name, act_table[k].name)) info = &act_table[k];
        if (!info)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "activation '%s' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                               "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus", name);
        mrt_rnn_act a = {info->kind, info->alpha, info->beta};
        /* alpha/beta values are consumed in order by the functions that take them */
        if (info->uses_alpha && alphas && ia < alphas->n) a.alpha = alphas->floats[ia++];
        if (info->uses_beta && betas && ib < betas->n) a.beta = betas->floats[ib++];
        d->acts[j / n][j % n] = a;
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_rnn_desc_get(const mrt_op_ctx *ctx, mrt_rnn_desc *d)
{
    memset(d, 0, sizeof *d);
    const char *op = ctx->node->op_type;
    d->cell = strcmp(op, "GRU") == 0    ? MRT_RNN_CELL_GRU
              : strcmp(op, "LSTM") == 0 ? MRT_RNN_CELL_LSTM
                                        : MRT_RNN_CELL_RNN;
    d->gates = d->cell == MRT_RNN_CELL_RNN ? 1 : d->cell == MRT_RNN_CELL_GRU ? 3 : 4;
    d->n_acts = (int)d->cell + 1;

    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *r = mrt_input(ctx, 2);
    const char *req[3] = {"X", "W", "R"};
    const mrt_tensor *reqt[3] = {x, w, r};
    for (int i = 0; i < 3; i++)
        if (!reqt[i])
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, req[i]);
    mrt_dtype dt = x->dtype;
    if (dt != MRT_DTYPE_FLOAT && dt != MRT_DTYPE_DOUBLE && dt != MRT_DTYPE_FLOAT16 && dt != MRT_DTYPE_BFLOAT16)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "input 'X' has dtype %s; %s takes float16, bfloat16, float or double",
                           mrt_dtype_name(dt), op);
    const mrt_tensor *b = mrt_input(ctx, 3), *lens = mrt_input(ctx, 4), *h0 = mrt_input(ctx, 5);
    const mrt_tensor *c0 = d->cell == MRT_RNN_CELL_LSTM ? mrt_input(ctx, 6) : NULL;
    const mrt_tensor *p = d->cell == MRT_RNN_CELL_LSTM ? mrt_input(ctx, 7) : NULL;
    MRT_TRY(check_dtype(ctx, w, "W", dt));
    MRT_TRY(check_dtype(ctx, r, "R", dt));
    MRT_TRY(check_dtype(ctx, b, "B", dt));
    MRT_TRY(check_dtype(ctx, h0, "initial_h", dt));
    MRT_TRY(check_dtype(ctx, c0, "initial_c", dt));
    MRT_TRY(check_dtype(ctx, p, "P", dt));
    if (lens && lens->dtype != MRT_DTYPE_INT32 && lens->dtype != MRT_DTYPE_INT64)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'sequence_lens' has dtype %s, expected int32",
                           mrt_dtype_name(lens->dtype));

    const char *dir = mrt_attr_string(ctx, "direction", "forward");
    if (strcmp(dir, "forward") == 0) d->num_dir = 1;
    else if (strcmp(dir, "reverse") == 0) d->num_dir = 1, d->reverse = true;
    else if (strcmp(dir, "bidirectional") == 0) d->num_dir = 2;
    else
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'direction' is '%s', expected forward, reverse or bidirectional", dir);
    int64_t layout = mrt_attr_int(ctx, "layout", 0);
    if (layout != 0 && layout != 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'layout' is %lld, expected 0 or 1", (long long)layout);
    if (layout != 0 && ctx->opset < 14)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attribute 'layout' needs opset 14 (the model imports opset %lld)",
                           (long long)ctx->opset);
    d->layout = (int)layout;

    char xs[256], ws[256], rs[256];
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "inputs 'X' %s, 'W' %s and 'R' %s must be 3-D", shp(x, xs, sizeof xs),
                           shp(w, ws, sizeof ws), shp(r, rs, sizeof rs));
    d->seq = layout ? x->shape[1] : x->shape[0];
    d->batch = layout ? x->shape[0] : x->shape[1];
    d->input = x->shape[2];
    d->hidden = r->shape[2];
    const mrt_attr *hs;
    MRT_TRY(mrt_attr_get(ctx, "hidden_size", MRT_ATTR_INT, &hs));
    if (hs && hs->i != d->hidden)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                           "attribute 'hidden_size' is %lld but 'R' %s has %lld hidden units",
                           (long long)hs->i, shp(r, rs, sizeof rs), (long long)d->hidden);
    int64_t nd = d->num_dir, gh = d->gates * d->hidden;
    char meaning[160];
    snprintf(meaning, sizeof meaning, "[num_directions, %d*hidden_size, input_size] with direction '%s'", d->gates,
             dir);
    MRT_TRY(check_shape(ctx, w, "W", 3, (int64_t[]){nd, gh, d->input}, meaning));
    snprintf(meaning, sizeof meaning, "[num_directions, %d*hidden_size, hidden_size]", d->gates);
    MRT_TRY(check_shape(ctx, r, "R", 3, (int64_t[]){nd, gh, d->hidden}, meaning));
    snprintf(meaning, sizeof meaning, "[num_directions, %d*hidden_size]", 2 * d->gates);
    MRT_TRY(check_shape(ctx, b, "B", 2, (int64_t[]){nd, 2 * gh}, meaning));
    MRT_TRY(check_shape(ctx, lens, "sequence_lens", 1, &d->batch, "[batch_size]"));
    int64_t st[3] = {nd, d->batch, d->hidden};
    if (layout) st[0] = d->batch, st[1] = nd;
    const char *stm = layout ? "[batch_size, num_directions, hidden_size] with layout 1"
                             : "[num_directions, batch_size, hidden_size]";
    MRT_TRY(check_shape(ctx, h0, "initial_h", 3, st, stm));
    MRT_TRY(check_shape(ctx, c0, "initial_c", 3, st, stm));
    MRT_TRY(check_shape(ctx, p, "P", 2, (int64_t[]){nd, 3 * d->hidden}, "[num_directions, 3*hidden_size]"));

    const mrt_attr *clip;
    MRT_TRY(mrt_attr_get(ctx, "clip", MRT_ATTR_FLOAT, &clip));
    if (clip) {
        if (!(clip->f >= 0))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "attribute 'clip' is %g, expected a threshold >= 0", (double)clip->f);
        d->has_clip = true;
        d->clip = clip->f;
    }
    d->linear_before_reset = d->cell == MRT_RNN_CELL_GRU && mrt_attr_int(ctx, "linear_before_reset", 0) != 0;
    d->input_forget = d->cell == MRT_RNN_CELL_LSTM && mrt_attr_int(ctx, "input_forget", 0) != 0;
    return parse_activations(ctx, d);
}

static mrt_status infer_rnn(mrt_op_ctx *ctx)
{
    mrt_rnn_desc d;
    MRT_TRY(mrt_rnn_desc_get(ctx, &d));
    mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    int64_t y[4] = {d.seq, d.num_dir, d.batch, d.hidden}, yh[3] = {d.num_dir, d.batch, d.hidden};
    if (d.layout) {
        y[0] = d.batch, y[1] = d.seq, y[2] = d.num_dir;
        yh[0] = d.batch, yh[1] = d.num_dir;
    }
    MRT_TRY(mrt_output_set(ctx, 0, dt, 4, y));
    MRT_TRY(mrt_output_set(ctx, 1, dt, 3, yh));
    if (d.cell == MRT_RNN_CELL_LSTM) MRT_TRY(mrt_output_set(ctx, 2, dt, 3, yh));
    return MRT_STATUS_OK;
}

const mrt_opdef mrt_opdefs_rnn[] = {
    {"", "RNN", 7, 3, 6, 0, 2, infer_rnn, 0},
    {"", "RNN", 14, 3, 6, 0, 2, infer_rnn, 0},
    {"", "RNN", 22, 3, 6, 0, 2, infer_rnn, 0},
    {"", "GRU", 7, 3, 6, 0, 2, infer_rnn, 0},
    {"", "GRU", 14, 3, 6, 0, 2, infer_rnn, 0},
    {"", "GRU", 22, 3, 6, 0, 2, infer_rnn, 0},
    {"", "LSTM", 7, 3, 8, 0, 3, infer_rnn, 0},
    {"", "LSTM", 14, 3, 8, 0, 3, infer_rnn, 0},
    {"", "LSTM", 22, 3, 8, 0, 3, infer_rnn, 0},
    {0},
};
