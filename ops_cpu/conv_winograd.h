/* Float32 3x3 stride-1 convolutions by Winograd's minimal filtering F(2x2, 3x3) (Lavin & Gray, 2016): each 2x2
 * block of outputs ("tile") is computed from its 4x4 input patch d as Y = A^T [U (.) V] A, with V = B^T d B per input
 * channel, U = G g G^T per (output, input) channel pair, and (.) summed over input channels: 16 products of
 * [M x C] by [C x tiles] on minirt's GEMM tile, 16 multiplications per tile and channel pair where the direct
 * convolution needs 36. ops_cpu/conv_workspace.c decides which Convs take this path (mrt_conv_winograd_floats).
 *
 * Results: not the bits of the im2col path (a different sum), but fixed ones: every tile's value is the same
 * sequence of float operations whatever the CPU path (AVX-512 or the scalar loops), the thread count and the batch;
 * the weights' transform is computed in double and rounded once. F(2x2, 3x3)'s transforms have coefficients 0, +-1
 * and +-1/2 only, so its rounding error stays within a small factor of the direct sum's (tests/test_ops_linear.c
 * measures both against a float64 reference). Infinite inputs: the transforms subtract neighbouring values, so an
 * output the direct sum makes +-inf can come out NaN (the same outputs are non-finite: with these transforms a
 * patch's edge rows and columns reach only the outputs whose windows hold them). */
#pragma once

#include <stdint.h>

#include "engine/op.h"
#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MRT_WINOGRAD_TILES = 48, /* tiles per GEMM panel (MRT_SGEMM_NR) */
    MRT_WINOGRAD_MC = 64,    /* output channels per pass over a panel's transformed input */
    MRT_WINOGRAD_MIN_C = 16, /* fewer input or output channels: the transforms cost more than they save */
    /* more input channels: a thread's transformed input (16 C 48 floats, 6 MB at 2048) has long left L2. Up to 2048
       the products' 2.25x fewer multiplies still win: FCN-ResNet50's head, 2048 -> 512 at 28x28, 64 -> 37 ms on one
       thread (the GEMM at 90% of the FMA peak; ONNX Runtime 57) */
    MRT_WINOGRAD_MAX_C = 2048,
};

/* Floats of an [m, c, 3, 3] weight's transform packed for the GEMM: 16 packed A matrices of m x c. */
int64_t mrt_winograd_packed_floats(int64_t m, int64_t c);

/* Output channels per pass over a panel (MRT_WINOGRAD_MC, or m rounded up to the GEMM's 8-row panels when fewer),
   and the floats of one thread's scratch slot: V (16 x c x 48) then M (16 x that many x 48), 64-byte aligned. The
   workspace rule (ops_cpu/conv_workspace.c) and the kernel both size with these. */
int64_t mrt_winograd_pass_channels(int64_t m);
int64_t mrt_winograd_slot_floats(int64_t m, int64_t c);

/* Transforms and packs w ([m, c, 3, 3] float32) into dst (mrt_winograd_packed_floats floats); tmp: m * c floats. */
void mrt_winograd_pack_weights(const float *w, int64_t m, int64_t c, float *tmp, float *dst);

/* Y = Conv(X, W) + B, then ctx's fused epilogue, for a Conv mrt_conv_winograd_floats accepts. packed: W's transform
   (prepare), or NULL to transform W at run time into the workspace; ws: the mrt_conv_winograd_floats floats it
   asked for (64-byte aligned). */
void mrt_conv_winograd(const mrt_op_ctx *ctx, const mrt_conv_params *p, const float *x, const float *w,
                       const float *packed, const float *bias, float *y, float *ws);

#ifdef __cplusplus
}
#endif
