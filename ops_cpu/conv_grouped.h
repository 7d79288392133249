/* Float 2-D grouped convolutions with 4 or more output channels per group (RegNet's group width 16, ResNeXt's
 * 4 to 32), output channels as vector lanes. See ops_cpu/conv_grouped.c. */
#pragma once

#include "engine/epilogue.h"
#include "engine/op.h"
#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of the workspace the path takes on n_threads threads, with W transformed by prepare; 0 when it does not
   apply (not float32, not 2-D, one group, a depthwise conv, fewer than 4 output channels per group or more than 16
   that are not a multiple of 16, kernels of more than 64 taps, outputs more than 1024 wide or a single output row
   whose input rows exceed the scratch, no AVX-512). */
int64_t mrt_conv_grouped_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads);

/* w [m, k] as [block of 16 rows][k][lane]: lane l of block b is row 16 b + l (0 past m); its columns as vectors
   of 16 rows, for the kernels whose lanes are output channels (this one, per group, and conv_pointwise.c) */
void mrt_pack_lanes16(const float *w, int64_t m, int64_t k, float *packed);

/* W [M, C / group, KH, KW] rearranged for it (prepare): floats, and the rearrangement. */
int64_t mrt_conv_grouped_packed_floats(const mrt_conv_params *p);
void mrt_conv_grouped_pack_weights(const mrt_conv_params *p, const float *w, float *packed);

/* y = conv(x, W) + b through ep, with W packed above and ws the workspace sized above. Each output is the chain the
   GEMM path computes (ops_cpu/sgemm.h): k = (c, kh, kw) in order, padding taps included as w * 0, in blocks of 256
   each summed from 0 and added in order, then + b: the same bits. Returns false, having computed nothing, where
   mrt_conv_grouped_floats would say 0. */
bool mrt_conv_grouped(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *packed,
                      const float *b, float *y, const mrt_epilogue *ep, float *ws);

#ifdef __cplusplus
}
#endif
