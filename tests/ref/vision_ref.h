/* Naive float64 references for the vision family, written from the ONNX spec text (GridSample, AffineGrid,
 * RoiAlign, NonMaxSuppression, Col2Im). Every array is dense row-major double; nothing here is shared with
 * ops_cpu/vision.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum { VREF_LINEAR = 0, VREF_NEAREST = 1, VREF_CUBIC = 2 };
enum { VREF_ZEROS = 0, VREF_BORDER = 1, VREF_REFLECTION = 2 };

/* GridSample with r spatial dims: x [n, c, in[0..r)], grid [n, out[0..r), r] whose last axis lists the
   coordinates of the LAST spatial dim first (x, y, z); y [n, c, out[0..r)]. */
void vision_ref_grid_sample(int r, int64_t n, int64_t c, const int64_t *in, const double *x, const int64_t *out,
                            const double *grid, int mode, int pad, bool align, double *y);

/* AffineGrid with r = 2 or 3 spatial dims: theta [n, r, r+1], grid [n, sp[0..r), r]. */
void vision_ref_affine_grid(int r, int64_t n, const int64_t *sp, const double *theta, bool align, double *grid);

/* RoiAlign: x [n, c, h, w], rois [n_rois, 4] as (x1, y1, x2, y2), y [n_rois, c, oh, ow]. */
typedef struct vision_ref_roi_args {
    int64_t n, c, h, w, n_rois, oh, ow;
    const double *x, *rois;
    const int64_t *batch;
    int64_t sampling_ratio;
    double spatial_scale;
    bool half_pixel, max_mode;
} vision_ref_roi_args;
void vision_ref_roi_align(const vision_ref_roi_args *a, double *y);

/* NonMaxSuppression: boxes [nb, nbox, 4], scores [nb, ncls, nbox]. Writes (batch, class, box) triples into sel
   (room for cap triples) and returns how many were selected. */
int64_t vision_ref_nms(int64_t nb, int64_t ncls, int64_t nbox, const double *boxes, const double *scores, bool center,
                       int64_t max_out, double iou_threshold, bool has_score_threshold, double score_threshold,
                       int64_t *sel, int64_t cap);

/* Col2Im with r spatial dims: x [n, c * prod(block), L], y [n, c, image[0..r)]; pads holds r begins then r ends. */
void vision_ref_col2im(int r, int64_t n, int64_t c, const int64_t *image, const int64_t *block, const int64_t *strides,
                       const int64_t *dilations, const int64_t *pads, const double *x, double *y);
