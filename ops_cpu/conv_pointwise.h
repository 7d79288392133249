/* Float 1x1 convolutions on small planes (7x7, 14x14: MobileNet's and EfficientNet's later stages), output channels
 * as vector lanes. See ops_cpu/conv_pointwise.c. */
#pragma once

#include "engine/epilogue.h"
#include "engine/op.h"
#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of the workspace the path takes on n_threads threads, with W packed by prepare; 0 when it does not apply
   (not float32, not a 1x1 stride-1 unpadded Conv of one group, a plane of more than 256 positions, fewer than 16
   output channels, no AVX-512). Whether it applies depends on p and dt alone, never on the thread count. */
int64_t mrt_conv_pointwise_lanes_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads);

/* W [M, C, 1, 1] packed for it (prepare): [block of 16 output channels][c][lane], lanes past M zero. */
int64_t mrt_conv_pointwise_lanes_packed_floats(const mrt_conv_params *p);
void mrt_conv_pointwise_lanes_pack_weights(const mrt_conv_params *p, const float *w, float *packed);

/* y = conv(x * scale, W) + b through ep, with W packed above and ws the workspace sized above; pro: the fused
   per-channel input scale (engine/fuse.c's squeeze-excite Mul), or NULL. Each output is the chain the GEMM path
   computes (ops_cpu/sgemm.h): over the input channels in order, in blocks of 256 each summed from 0 by fmas and
   added in order, then + b, with the scaled input rounded to float first as the Mul would: the same bits. Returns
   false, having computed nothing, where mrt_conv_pointwise_lanes_floats would say 0. */
bool mrt_conv_pointwise_lanes(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *packed,
                              const float *b, float *y, const mrt_prologue *pro, const mrt_epilogue *ep, float *ws);

#ifdef __cplusplus
}
#endif
