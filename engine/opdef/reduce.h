/* Attribute/input parsing shared by the reduce and softmax opdefs (engine/opdef/reduce.c, softmax.c) and
 * their kernels, so that infer and run agree on which axes a node works on. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which axes of `x` a Reduce* node reduces: reduced[a] for a < x->rank. Axes come from the `axes`
   attribute (ReduceSum < 13, the others < 18) or the optional `axes` input; empty axes mean "all axes"
   unless noop_with_empty_axes is set (then no axis is reduced and only the elementwise part applies).
   When the axes input exists but has no data yet (plan time), *pending is set and reduced[] is unset.
   Fails on out-of-range or repeated axes, naming the node. */
mrt_status mrt_reduce_axes(const mrt_op_ctx *ctx, const mrt_tensor *x, bool *reduced, bool *pending);

/* The reduction a Reduce* op type performs, or -1 for other op types. */
typedef enum mrt_reduce_kind {
    MRT_REDUCE_SUM,
    MRT_REDUCE_MEAN,
    MRT_REDUCE_MAX,
    MRT_REDUCE_MIN,
    MRT_REDUCE_PROD,
    MRT_REDUCE_L1,
    MRT_REDUCE_L2,
    MRT_REDUCE_LOGSUM,
    MRT_REDUCE_LOGSUMEXP,
    MRT_REDUCE_SUMSQ,
    MRT_REDUCE_SUMEXP, /* sum(exp(x - center)): the second pass of LogSumExp and Softmax */
} mrt_reduce_kind;

int mrt_reduce_kind_of(const char *op_type);

/* (engine/opdef/softmax.c) Softmax/LogSoftmax/Hardmax view of an input as [outer, n, inner] along the op's axis: opset < 13 coerces
   to 2-D at `axis` (default 1: inner = 1, n = product of the trailing dims), opset >= 13 uses one axis
   (default -1). */
mrt_status mrt_softmax_view(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t *outer, int64_t *n, int64_t *inner);
#ifdef __cplusplus
}
#endif
