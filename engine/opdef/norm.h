/* LayerNormalization / RMSNormalization sizing shared by the opdef (which requests the workspace) and the CPU
 * kernel (which carves it): scale and bias, unidirectionally broadcast to X, are expanded to doubles over X's
 * dims [q, rank) with q = min(axis, the first dim where the parameter varies). */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

/* Elements of one expanded parameter. */
int64_t mrt_layernorm_param_len(const mrt_tensor *p, const mrt_tensor *x, int axis);
/* Workspace bytes: mean and 1/std per row (2 * outer doubles), then the expanded scale and bias. */
size_t mrt_layernorm_workspace_bytes(const mrt_tensor *x, const mrt_tensor *scale, const mrt_tensor *bias, int axis);

/* LRN's kernel works on blocks of this many positions. */
#define MRT_LRN_CHUNK 512

/* Doubles of scratch the CPU kernels of InstanceNormalization, GroupNormalization, LpNormalization,
   MeanVarianceNormalization and LRN use (statistics per group, row or position block): infer requests them (after
   validating the attributes), run fetches them. */
int64_t mrt_norm_scratch_doubles(const mrt_op_ctx *ctx, const mrt_tensor *x);

#ifdef __cplusplus
}
#endif
