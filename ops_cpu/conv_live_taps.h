/* Float32 Convs whose kernel offsets read only padding for bands of output rows (dilations as large as the image:
 * DeepLabV3's ASPP): those taps dropped, with the full product's bits. See ops_cpu/conv_live_taps.c; its workspace
 * size is mrt_conv_live_taps_floats (ops_cpu/conv_workspace.h). */
#pragma once

#include "engine/op.h"
#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a Conv takes the path: a float32 group-1 Conv on the GEMM path (not pointwise, not the stems' rows)
   whose bands drop at least an eighth of its multiply-adds. Decided by the geometry alone. */
bool mrt_conv_live_taps_path(const mrt_conv_params *p, mrt_dtype dt);

/* prepare: W [M, C, k...] packed per band (or per region) into *state, one allocation the kernel's free releases */
mrt_status mrt_conv_live_taps_prepare(mrt_op_ctx *ctx, const mrt_conv_params *p, const float *w, void **state);

/* run, with ctx->kernel_state from prepare: y = conv(x, W) + b through ctx->epilogue */
mrt_status mrt_conv_live_taps(mrt_op_ctx *ctx, const mrt_conv_params *p);

#ifdef __cplusplus
}
#endif
