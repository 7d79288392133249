/* Resize/Upsample geometry shared by the opdef and the kernel (see resize.c). */
#pragma once

#include "engine/registry.h"

typedef struct mrt_resize_geometry {
    int rank;
    int64_t out[MRT_MAX_RANK];
    double scale[MRT_MAX_RANK];              /* output/input per axis, as the coordinate transform uses it */
    double roi_start[MRT_MAX_RANK], roi_end[MRT_MAX_RANK]; /* normalised, for tf_crop_and_resize */
} mrt_resize_geometry;

/* *need_data: scales/sizes/roi are not known yet (plan time). */
mrt_status mrt_resize_plan(mrt_op_ctx *ctx, mrt_resize_geometry *g, bool *need_data);
