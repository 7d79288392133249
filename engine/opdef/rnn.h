/* The RNN/GRU/LSTM node description shared by the opdef (validation, output shapes) and the CPU kernels:
 * sizes, direction, layout, the activation functions of each direction with their alpha/beta, clip. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mrt_rnn_cell { MRT_RNN_CELL_RNN = 0, MRT_RNN_CELL_GRU, MRT_RNN_CELL_LSTM } mrt_rnn_cell;

typedef enum mrt_rnn_act_kind {
    MRT_RNN_ACT_RELU = 0,
    MRT_RNN_ACT_TANH,
    MRT_RNN_ACT_SIGMOID,
    MRT_RNN_ACT_AFFINE,
    MRT_RNN_ACT_LEAKYRELU,
    MRT_RNN_ACT_THRESHOLDEDRELU,
    MRT_RNN_ACT_SCALEDTANH,
    MRT_RNN_ACT_HARDSIGMOID,
    MRT_RNN_ACT_ELU,
    MRT_RNN_ACT_SOFTSIGN,
    MRT_RNN_ACT_SOFTPLUS
} mrt_rnn_act_kind;

typedef struct mrt_rnn_act {
    mrt_rnn_act_kind kind;
    double alpha, beta;
} mrt_rnn_act;

typedef struct mrt_rnn_desc {
    mrt_rnn_cell cell;
    int gates;       /* rows of W per direction, in units of hidden_size: 1 (RNN), 3 (GRU), 4 (LSTM) */
    int n_acts;      /* activations per direction: 1 (f), 2 (f, g), 3 (f, g, h) */
    int64_t seq, batch, input, hidden;
    int num_dir;
    bool reverse;    /* direction == "reverse" (one direction, run backwards) */
    int layout;      /* 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset >= 14) */
    bool has_clip;
    double clip;
    bool linear_before_reset; /* GRU */
    bool input_forget;        /* LSTM */
    mrt_rnn_act acts[2][3];   /* [direction][f, g, h] */
} mrt_rnn_desc;

/* Validate the node's attributes and the shapes/dtypes of its inputs (X, W, R, B, sequence_lens, initial_h,
   initial_c, P), failing with a message that names the offending input. Does not read input data. */
mrt_status mrt_rnn_desc_get(const mrt_op_ctx *ctx, mrt_rnn_desc *d);

/* f(x) for one activation (the formulas of the RNN/GRU/LSTM spec). */
double mrt_rnn_act_apply(const mrt_rnn_act *a, double x);


#ifdef __cplusplus
}
#endif
