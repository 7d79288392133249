/* Shape logic shared by the opdefs and CPU kernels of the conv, pool and gemm families: sliding-window
 * geometry (implemented in engine/opdef/conv.c and pool.c) and MatMul broadcasting (engine/opdef/gemm.c).
 * Infer and run call the same parsers, so they agree on pads, output sizes and validation messages. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One window geometry over the spatial dims of an [N, C, D1..Dn] tensor. For Conv/pools `in` are X's
   spatial sizes and `out` Y's; window position o of dim i covers in-positions
   o*stride - pad_begin + k*dilation for k in [0, kernel). */
typedef struct mrt_window {
    int nsp; /* number of spatial dims */
    int64_t in[MRT_MAX_RANK];
    int64_t out[MRT_MAX_RANK];
    int64_t kernel[MRT_MAX_RANK];
    int64_t stride[MRT_MAX_RANK];
    int64_t dilation[MRT_MAX_RANK];
    int64_t pad_begin[MRT_MAX_RANK];
    int64_t pad_end[MRT_MAX_RANK];
} mrt_window;

enum {
    MRT_WINDOW_DILATIONS = 1u << 0, /* read the `dilations` attribute */
    MRT_WINDOW_CEIL = 1u << 1,      /* read the `ceil_mode` attribute */
};

/* Geometry of Conv/ConvInteger/pools over X with the given kernel spatial sizes (nsp = x->rank - 2):
   reads strides, pads, auto_pad (and dilations/ceil_mode per flags), fails naming X's shape when the
   window does not fit. */
mrt_status mrt_window_init(const mrt_op_ctx *ctx, const mrt_tensor *x, const int64_t *kernel, unsigned flags,
                           mrt_window *w);

/* Conv / ConvInteger / ConvTranspose: channel bookkeeping plus the window. For ConvTranspose `win`
   is expressed as the equivalent forward conv of Y: win.in = Y's spatial sizes, win.out = X's. */
typedef struct mrt_conv_params {
    int64_t n;       /* batch */
    int64_t c;       /* input channels */
    int64_t m;       /* output channels */
    int64_t group;
    int64_t kernel_numel;
    mrt_window win;
    int64_t y_shape[MRT_MAX_RANK];
    int y_rank;
} mrt_conv_params;

/* Validates X (input 0), W (input 1), B (input 2, Conv) or the zero points (ConvInteger, inputs 2-3). */
mrt_status mrt_conv_params_get(const mrt_op_ctx *ctx, mrt_conv_params *p);
mrt_status mrt_convtranspose_params_get(const mrt_op_ctx *ctx, mrt_conv_params *p);

/* float 2-D depthwise convolution (one input and one output channel per group): computed directly, without
   im2col (the im2col + GEMM path degenerates into one tiny GEMM per channel). */
bool mrt_conv_direct_depthwise(const mrt_conv_params *p, mrt_dtype dt);

/* Floats of the input rows a float 2-D Conv with few input channels (a network's stem: 3 -> 32 3x3/2, 3 -> 64
   7x7/2) keeps when ops_cpu/conv.c reads its GEMM operand B straight from them instead of packing it (ResNet-18's
   stem spent a third of its time packing): 0 when that path does not apply. */
int64_t mrt_conv_rows_floats(const mrt_conv_params *p, mrt_dtype dt);

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
   stride 1 and dilation 1, one group, MRT_WINOGRAD_MIN_C to MRT_WINOGRAD_MAX_C input channels, at least
   MRT_WINOGRAD_MIN_C output channels, and images of at least 6x6 outputs (or as many, in vectors of 16). */
int64_t mrt_conv_winograd_floats(const mrt_conv_params *p, mrt_dtype dt, bool w_packed, int n_threads);

/* Bytes of the kernel workspace of Conv (transpose false) or ConvTranspose in dtype dt: the im2col/col2im
   buffer, plus float copies of X, W, B and Y for float16/bfloat16. Infer requests it, the kernel carves it
   with mrt_conv_workspace_carve; false when the size overflows. */
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

/* MaxPool / AveragePool / LpPool: the window from kernel_shape and the op's version-dependent attributes,
   plus the output shape [N, C, out...]. */
mrt_status mrt_pool_window(const mrt_op_ctx *ctx, const mrt_tensor *x, mrt_window *w);

/* MaxUnpool's output shape: from the optional output_shape input (needs its data) or from the window. */
mrt_status mrt_maxunpool_shape(const mrt_op_ctx *ctx, int *rank, int64_t *shape);

/* MatMul-style broadcasting of A [..., M, K] and B [..., K, N] (1-D operands promoted as numpy does):
   output shape and the broadcast batch shape. */
typedef struct mrt_matmul_dims {
    int64_t m, k, n;
    int batch_rank;
    int64_t batch[MRT_MAX_RANK];     /* broadcast batch dims */
    int64_t a_batch[MRT_MAX_RANK];   /* A's batch dims aligned to batch_rank (1 where absent) */
    int64_t b_batch[MRT_MAX_RANK];
    int y_rank;
    int64_t y_shape[MRT_MAX_RANK];
} mrt_matmul_dims;

mrt_status mrt_matmul_dims_get(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b, mrt_matmul_dims *d);

#ifdef __cplusplus
}
#endif
