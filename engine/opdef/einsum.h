/* Einsum equation parsing shared by the opdef (engine/opdef/misc.c) and the kernels (ops_cpu/misc.c,
 * ops_cuda/misc.cu), so infer and run agree on label sizes, the output shape and the validation messages. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MRT_EINSUM_MAX_INPUTS 32
/* Labels: 'A'..'Z' are 0..25, 'a'..'z' are 26..51 (ASCII order, as numpy orders an implicit output), then one
   label per broadcast ("...") dimension. */
#define MRT_EINSUM_LETTERS 52
#define MRT_EINSUM_MAX_LABELS (MRT_EINSUM_LETTERS + MRT_MAX_RANK)

typedef struct mrt_einsum {
    int n_inputs;
    int n_labels;                       /* MRT_EINSUM_LETTERS + n_ellipsis */
    int n_ellipsis;                     /* broadcast dims (the most any input's "..." covers) */
    int64_t size[MRT_EINSUM_MAX_LABELS]; /* -1 = label unused */
    int in_rank[MRT_EINSUM_MAX_INPUTS];
    int in_label[MRT_EINSUM_MAX_INPUTS][MRT_MAX_RANK]; /* label of each input dim */
    int out_rank;
    int out_label[MRT_MAX_RANK];
    int64_t out_shape[MRT_MAX_RANK];
} mrt_einsum;

/* Parse the `equation` attribute against the node's input shapes (ctx inputs 0..n-1, all present, one dtype).
   Fails (INVALID_MODEL) naming the term, label or dimension at fault. */
mrt_status mrt_einsum_parse(const mrt_op_ctx *ctx, mrt_einsum *e);

/* Input k's (x's) element stride along each loop label, added into strides[at[label]] (the kernels' loop nests,
   ops_cpu/misc.c and ops_cuda/misc.cu: a repeated label adds up, a diagonal; a broadcast dim adds nothing). */
static inline void mrt_einsum_add_strides(const mrt_einsum *e, int k, const mrt_tensor *x, const int *at, int64_t *strides)
{
    int64_t st[MRT_MAX_RANK];
    mrt_shape_strides(x->rank, x->shape, st);
    for (int a = 0; a < x->rank; a++) {
        int l = e->in_label[k][a];
        if (x->shape[a] == e->size[l]) strides[at[l]] += st[a];
    }
}

#ifdef __cplusplus
}
#endif
