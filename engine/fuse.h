/* Plan-time fusion of element-wise successors into the node that produces their input, and of a per-channel
 * input scale into a pointwise Conv (see engine/epilogue.h).
 * Engine-private: session.c calls it after every step is planned and before memory is planned. */
#pragma once

#include "engine/epilogue.h"
#include "engine/exec.h"

/* One fused chain: the producing step runs its kernel with `ep` and writes `out_value` (the chain's last output)
   instead of its own output. ADD operands (`other_value`) are bound to their data before each run. */
typedef struct mrt_fusion {
    mrt_epilogue ep;
    int out_value;
    int other_value[MRT_MAX_POST_OPS]; /* per op: the ADD operand's value, else -1 */
    mrt_bn_coef *coef;                 /* BatchNormalization's, per channel (owned) */
    mrt_bn_coef *pro_coef;             /* a BatchNormalization fused in before the step (pro.bn), per channel (owned) */
    mrt_pw_program *pw;                /* a pointwise program's (owned) */
    /* a Mul(x, s), a BatchNormalization(x) [-> Relu] or a zero Pad of x fused in before the step (mrt_prologue): the
       step reads in_value (x) as its input 0 and, for the Mul, scale_value (s) through `pro` (-1 for the others);
       in_value is -1 when there is none */
    int in_value, scale_value;
    mrt_prologue pro;
} mrt_fusion;

/* Find the chains among e's planned steps and mark them: the producer gets step->fusion, the absorbed steps
   fused_into, and the values no longer computed fused_away[v] = 1. sub_read[v]: v is read inside a subgraph
   (never fused away). Fusion only changes which kernel computes what: every result keeps its bits. */
mrt_status mrt_fuse_steps(mrt_exec *e, const bool *sub_read, uint8_t *fused_away);

void mrt_fusion_free(mrt_fusion *f);

/* Before a run: point the ADD operands and the input scale at their values' data. */
void mrt_fusion_bind(const mrt_exec *e, mrt_fusion *f);
