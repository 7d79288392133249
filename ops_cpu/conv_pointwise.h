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

/* Convs whose taps read only padding (DeepLabV3's dilation-12 3x3 on 14x14), output channels as lanes: the plane
   cut into regions (a band of output rows by a band of columns) over which the same taps read the image, each
   position's chain over its region's live rows of the full product only. Built by ops_cpu/conv.c's prepare. */
enum { MRT_TAPS_MAX_REGIONS = 64 };

typedef struct mrt_taps_region {
    int64_t n_pos;
    const int32_t *pos, *base;  /* per position: its index in the output plane, its window's input offset */
    const int32_t *item_lo;     /* per k block of the full product (n_blocks + 1 entries): its items */
    const int32_t *kidx, *xoff; /* per item (c, live tap) in k order: its row of the full product, input offset */
} mrt_taps_region;

typedef struct mrt_taps_lanes {
    int n_regions;
    int64_t n_blocks, K, hw_in, hw_out;
    mrt_taps_region region[MRT_TAPS_MAX_REGIONS];
    const float *wt; /* W [M, K] packed [block of 16 output channels][K][lane] (mrt_pack_lanes16) */
} mrt_taps_lanes;

/* Floats of its workspace on n_threads threads for a plane of hw_out positions and m output channels. */
int64_t mrt_conv_taps_lanes_floats(int64_t m, int64_t hw_out, int n_threads);

/* y = conv(x, W) + b through ep: every output the chain of the full product over its region's items (a dropped
   row's term was fma(w, 0, acc) = acc), blocks of 256 summed from 0 and added in order, then + b: the GEMM's bits.
   False, having computed nothing, without AVX-512. */
bool mrt_conv_taps_lanes(const mrt_op_ctx *ctx, const mrt_conv_params *p, const mrt_taps_lanes *tl, const float *x,
                         const float *b, float *y, const mrt_epilogue *ep, float *ws);

#ifdef __cplusplus
}
#endif
