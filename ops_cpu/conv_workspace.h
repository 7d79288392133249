/* The CPU Conv's path rules and workspace sizes (ops_cpu/conv_workspace.c): which of ops_cpu/conv.c's paths a Conv
 * takes decides the scratch it needs, so both live with the kernels; the kernel rows' `workspace` hooks request the
 * largest any path may fetch, and run carves it. */
#pragma once

#include "engine/opdef/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* float 2-D depthwise convolution (one input and one output channel per group): computed directly, without
   im2col (the im2col + GEMM path degenerates into one tiny GEMM per channel). */
bool mrt_conv_direct_depthwise(const mrt_conv_params *p, mrt_dtype dt);

/* Floats of the input rows a float 2-D Conv with few input channels (a network's stem: 3 -> 32 3x3/2, 3 -> 64
   7x7/2) keeps when ops_cpu/conv.c reads its GEMM operand B straight from them instead of packing it (ResNet-18's
   stem spent a third of its time packing): 0 when that path does not apply. */
int64_t mrt_conv_rows_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads);

/* That path's geometry: output rows per block (MRT_CONV_ROWS_BLOCK), the input rows a block reads (*block_rows, at
   most the image's), and each phase row's floats (*lp, a multiple of 16); a thread's slot is C x block_rows input
   rows of stride phases, and one zero row follows the slots. */
enum { MRT_CONV_ROWS_BLOCK = 16 };
void mrt_conv_rows_geometry(const mrt_conv_params *p, int64_t *block_rows, int64_t *lp);

/* Floats of the GEMM workspace of a float32 Conv (ops_cpu/conv.c): one product per (image, group) of mg = M/group
   rows, sp output positions and k = C/group * kernel taps, W packed when w_packed. Many small groups (RegNet's
   group width 16) go to the threads whole, each product serial in its own slot; otherwise each product is split
   over the threads. */
int64_t mrt_conv_sgemm_floats(const mrt_conv_params *p, int64_t sp, int64_t k, bool w_packed, int n_threads);
bool mrt_conv_by_group(const mrt_conv_params *p, int64_t sp, int64_t k, int n_threads);

/* Floats of the GEMM workspace of a float32 Conv whose taps that read only padding are dropped (ops_cpu/conv.c,
   W packed by prepare): 0 when that path does not apply. */
int64_t mrt_conv_live_taps_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads);

/* Floats of the workspace a float32 2-D Conv takes by Winograd's F(2x2, 3x3) (ops_cpu/conv_winograd.h), w_packed
   when W's transform was made by the kernel's prepare; 0 when that path does not apply: it takes 3x3 kernels with
   stride 1 and dilation 1 (or a dilation's phases, mrt_conv_winograd_phases, judged as their batch), one group, MRT_WINOGRAD_MIN_C to MRT_WINOGRAD_MAX_C input channels, at least
   MRT_WINOGRAD_MIN_C output channels, and images of at least 6x6 outputs (or as many, in vectors of 16). */
int64_t mrt_conv_winograd_floats(const mrt_conv_params *p, mrt_dtype dt, bool w_packed, int n_threads);

/* A dilated 3x3 Conv (dilation d in both axes, stride 1, padding d, planes a multiple of 2 d) as d x d undilated ones:
   output phase (a, b) (rows a mod d, columns b mod d) reads only input phase (a, b), a 3x3 Conv with padding 1 on
   the phase's plane. q: the batch of n d d phase images (image i's phase a d + b is image i d d + a d + b). False
   when p is not such a Conv. */
bool mrt_conv_winograd_phases(const mrt_conv_params *p, mrt_conv_params *q);

/* Bytes of the kernel workspace of Conv (transpose false) or ConvTranspose in dtype dt: the im2col/col2im
   buffer, plus float copies of X, W, B and Y for float16/bfloat16. The kernel's workspace hook requests it,
   run carves it with mrt_conv_workspace_carve; false when the size overflows. */
typedef struct mrt_conv_workspace {
    void *col;
    float *x, *w, *b, *y; /* float16/bfloat16 only */
} mrt_conv_workspace;
bool mrt_conv_workspace_bytes(const mrt_conv_params *p, const mrt_op_ctx *ctx, bool transpose, size_t *bytes);
void mrt_conv_workspace_carve(const mrt_conv_params *p, const mrt_op_ctx *ctx, bool transpose, void *base,
                              mrt_conv_workspace *ws);

/* ConvInteger's int32 workspace parts (X and W shifted by their zero points, the im2col buffer), for
   mrt_workspace_request_parts / mrt_workspace_parts; false when the im2col size overflows. */
bool mrt_convinteger_workspace_counts(const mrt_conv_params *p, const mrt_op_ctx *ctx, int64_t counts[3]);

/* The kernel rows' workspace hooks (engine/registry.h): Conv (float, double, float16/bfloat16), ConvTranspose,
   ConvInteger. */
mrt_status mrt_cpu_conv_workspace(mrt_op_ctx *ctx);
mrt_status mrt_cpu_convtranspose_workspace(mrt_op_ctx *ctx);
mrt_status mrt_cpu_convinteger_workspace(mrt_op_ctx *ctx);

#ifdef __cplusplus
}
#endif
