/* Float 2-D depthwise convolution (group == C == M, one input and one output channel per group), computed
 * directly and threaded over the session's pool. See ops_cpu/conv_depthwise.c for the method and the fixed
 * summation order that makes the result independent of the thread count and of the CPU's instruction set. */
#pragma once

#include "engine/epilogue.h"
#include "engine/op.h"
#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y[n, c] = b[c] + sum over the taps (kh, kw) of w[c, 0, kh, kw] * x[n, c] (zero padded), for any kernel size,
   stride, dilation, padding and batch that mrt_conv_direct_depthwise accepts. x is [N, C, H, W], w [C, 1, KH, KW],
   b [C] or NULL, y [N, C, OH, OW] (shapes in p). Each finished block of one channel's outputs goes through ep
   (NULL: none) while it is in cache. ctx supplies the thread pool (NULL: serial). */
void mrt_depthwise2d_f32(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                         const float *b, float *y, const mrt_epilogue *ep);

#ifdef __cplusplus
}
#endif
