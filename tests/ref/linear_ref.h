/* Naive double-precision references for the conv, gemm and pool families, written from the ONNX operator
 * specs and independent of ops_cpu/: direct nested loops over every output element and every kernel tap,
 * geometry recomputed from the spec's formulas. Layouts are dense row-major; shapes are [N, C, spatial...]. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define LR_MAX_SP 8

/* Sliding-window geometry of one op: the attributes as the node carries them plus the resolved result. */
typedef struct lr_geom {
    int nsp;
    int64_t in[LR_MAX_SP];
    int64_t kernel[LR_MAX_SP];
    int64_t stride[LR_MAX_SP];
    int64_t dilation[LR_MAX_SP];
    int64_t pads[2 * LR_MAX_SP];    /* begin..., end... (in: attribute; out: resolved) */
    const char *auto_pad;           /* "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" */
    bool ceil_mode;
    int64_t out[LR_MAX_SP];         /* resolved */
} lr_geom;

/* Conv/pool output sizes and effective pads from the spec's formulas. Returns false when an output size
   would be < 1. */
bool lr_geom_resolve(lr_geom *g);

/* ConvTranspose: output sizes from output_padding / output_shape (NULL = absent) / auto_pad; pads resolved. */
bool lr_geom_resolve_transposed(lr_geom *g, const int64_t *output_padding, const int64_t *output_shape);

/* Y[n, m, out...] = B[m] + sum over the group's channels and taps of X * W. W is [M, C/group, kernel...]. */
void lr_conv(const lr_geom *g, int64_t n, int64_t c, int64_t m, int64_t group, const double *x, const double *w,
             const double *b, double *y);

/* ConvTranspose: W is [C, M/group, kernel...]; Y spatial = g->in (as resolved by lr_geom_resolve_transposed,
   which stores X's spatial sizes in g->in and Y's in g->out). */
void lr_convtranspose(const lr_geom *g, int64_t n, int64_t c, int64_t m, int64_t group, const double *x,
                      const double *w, const double *b, double *y);

/* Y = alpha * op(A) * op(B) + beta * C (C broadcast from c_rank/c_shape; c may be NULL). */
void lr_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, const double *a,
             const double *b, const double *c, int c_rank, const int64_t *c_shape, double *y);

/* numpy matmul: shapes as given (1-D promotion, batch broadcasting); output shape into y_rank/y_shape.
   Zero points (may be NULL) are subtracted per element: za indexed like A with its last dim 1 (or a
   scalar / per-row vector when za_n is 1 / M), zb likewise for B. Returns false on incompatible shapes. */
bool lr_matmul_shape(int ra, const int64_t *as, int rb, const int64_t *bs, int *y_rank, int64_t *y_shape);
void lr_matmul(int ra, const int64_t *as, const double *a, int rb, const int64_t *bs, const double *b, double *y,
               const double *za, int64_t za_n, const double *zb, int64_t zb_n);

/* Pools over [N, C, spatial...] with the resolved geometry. kind: 0 max, 1 average, 2 Lp(p). indices (max
   only, may be NULL): flat index into X, row-major or column-major spatial (storage_order 1). */
void lr_pool(const lr_geom *g, int64_t n, int64_t c, int kind, bool count_include_pad, double p, const double *x,
             double *y, int64_t *indices, bool col_major);

void lr_maxroipool(int64_t n, int64_t c, int64_t h, int64_t w, const double *x, int64_t n_rois, const double *rois,
                   int64_t ph, int64_t pw, double scale, double *y);
