/* Resize/Upsample geometry shared by the opdef and the kernel (see resize.c). */
#pragma once

#include "engine/registry.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

typedef struct mrt_resize_geometry {
    int rank;
    int64_t out[MRT_MAX_RANK];
    double scale[MRT_MAX_RANK];              /* output/input per axis, as the coordinate transform uses it */
    double roi_start[MRT_MAX_RANK], roi_end[MRT_MAX_RANK]; /* normalised, for tf_crop_and_resize */
} mrt_resize_geometry;

/* *need_data: scales/sizes/roi are not known yet (plan time). */
mrt_status mrt_resize_plan(mrt_op_ctx *ctx, mrt_resize_geometry *g, bool *need_data);

/* The attributes that shape the per-axis tables: mode (Upsample-7's "bilinear" read as "linear"), the coordinate
   transformation, nearest_mode, antialias (opset 18+); the legacy ops fix the last two. */
typedef struct mrt_resize_modes {
    const char *mode, *coord, *nearest_mode;
    bool antialias;
} mrt_resize_modes;
mrt_resize_modes mrt_resize_modes_get(const mrt_op_ctx *ctx);

/* Neighbours per output coordinate on an axis (1 nearest or untouched, 2 linear, 4 cubic, wider with antialias
   when downsampling); -1 when the antialias footprint is unreasonably wide. */
int mrt_resize_taps(const mrt_resize_modes *m, int64_t in, int64_t out, double scale);

/* The kernels' workspace (their workspace hooks request it): per axis, [out * taps] source indices and weights
   (8 bytes each) and [out] out-of-range flags, as byte counts of 3 * rank parts; false (op failed) when a footprint
   is too wide. */
bool mrt_resize_table_bytes(mrt_op_ctx *ctx, const mrt_tensor *x, const mrt_resize_geometry *g, int64_t *counts);

/* One axis's table: for every output coordinate, n (source index, weight) neighbours; out_of_range marks a
   tf_crop_and_resize sample outside the input. The buffers are the caller's, laid out as mrt_resize_table_bytes
   counts them. */
typedef struct mrt_resize_axis {
    int n;                       /* neighbours per output coordinate (1, 2 or 4; more with antialias) */
    int64_t *idx;                /* [out * n] */
    double *w;                   /* [out * n] */
    unsigned char *out_of_range; /* [out] */
} mrt_resize_axis;
/* Fill an axis's table (host memory), in double: the CPU kernel sums over it and the CUDA kernel copies it up, so
   both devices take the same neighbours and weights. */
void mrt_resize_build_axis(const mrt_op_ctx *ctx, mrt_resize_axis *t, int64_t in, int64_t out, double scale,
                           double start, double end, const mrt_resize_modes *m);

#ifdef __cplusplus
}
#endif
