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
