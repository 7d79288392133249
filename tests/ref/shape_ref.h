/* Naive references for the data-movement ops (shape, transform, gather and cast families), written from the ONNX
 * operator spec with multi-index loops. Most return an *index map*: map[i] is the flat index, in the source
 * tensor, of output element i (or -1 where the op writes a fill value); ref_apply_map turns it into the
 * expected tensor for any dtype. Maps are malloc'd; the caller frees them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "minirt/minirt.h"

int64_t sref_numel(int rank, const int64_t *shape);
void sref_unravel(int64_t flat, int rank, const int64_t *shape, int64_t *idx);
int64_t sref_ravel(const int64_t *idx, int rank, const int64_t *shape);

/* Expected tensor: out[i] = src[map[i]], or fill[0] where map[i] < 0 (fill may be NULL = zero/""). */
mrt_tensor sref_apply_map(const mrt_tensor *src, int rank, const int64_t *shape, const int64_t *map,
                         const mrt_tensor *fill);

int64_t *sref_transpose_map(int rank, const int64_t *shape, const int *perm, int64_t *out_shape);
/* Concat of n inputs: *src_of[i] names the input of output element i. */
int64_t *sref_concat_map(int n, int rank, const int64_t *const *shapes, int axis, int64_t *out_shape, int **src_of);
/* Slice: axes NULL = 0..n-1, steps NULL = all 1. */
int64_t *sref_slice_map(int rank, const int64_t *shape, int n, const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps, int64_t *out_shape);
/* Numpy broadcasting of `shape` against `target` (Expand). Returns NULL when incompatible. */
int64_t *sref_expand_map(int rank, const int64_t *shape, int trank, const int64_t *target, int *out_rank,
                        int64_t *out_shape);
int64_t *sref_tile_map(int rank, const int64_t *shape, const int64_t *repeats, int64_t *out_shape);
/* Pad: pads = [begin_0..begin_{r-1}, end_0..end_{r-1}]; mode "constant", "reflect", "edge" or "wrap". */
int64_t *sref_pad_map(int rank, const int64_t *shape, const int64_t *pads, const char *mode, int64_t *out_shape);
/* Gather with negative indices resolved; returns NULL (and *bad = offending position) when out of range. */
int64_t *sref_gather_map(int rank, const int64_t *shape, int axis, int irank, const int64_t *ishape,
                        const int64_t *indices, int *out_rank, int64_t *out_shape, int64_t *bad);
int64_t *sref_gather_elements_map(int rank, const int64_t *shape, int axis, const int64_t *ishape,
                                 const int64_t *indices);
int64_t *sref_gather_nd_map(int rank, const int64_t *shape, int irank, const int64_t *ishape, const int64_t *indices,
                           int batch_dims, int *out_rank, int64_t *out_shape);
int64_t *sref_depth_to_space_map(const int64_t *shape, int64_t bs, bool crd, int64_t *out_shape);
int64_t *sref_space_to_depth_map(const int64_t *shape, int64_t bs, bool crd, int64_t *out_shape);
int64_t *sref_trilu_map(int rank, const int64_t *shape, int64_t k, bool upper);
int64_t *sref_reverse_sequence_map(int rank, const int64_t *shape, int batch_axis, int time_axis, const int64_t *lens);
/* Compress: axis < 0 = flattened. */
int64_t *sref_compress_map(int rank, const int64_t *shape, const uint8_t *cond, int64_t n_cond, int axis,
                          int *out_rank, int64_t *out_shape);

/* Value references (doubles). reduction: "none", "add", "mul", "max", "min". */
void sref_scatter_elements(int rank, const int64_t *shape, double *data, int axis, const int64_t *ishape,
                          const int64_t *indices, const double *updates, const char *reduction);
void sref_scatter_nd(int rank, const int64_t *shape, double *data, int irank, const int64_t *ishape,
                    const int64_t *indices, const double *updates, const char *reduction);
/* OneHot: out has irank+1 dims with depth at `axis`. */
void sref_one_hot(int irank, const int64_t *ishape, const double *indices, int64_t depth, int axis, double off,
                 double on, double *out);
/* NonZero: returns count; coords (rank x count, row-major) malloc'd into *coords. */
int64_t sref_nonzero(int rank, const int64_t *shape, const double *x, int64_t **coords);
int64_t sref_range_count(double start, double limit, double delta);

/* Float8/float4 by brute force: the code whose value (decoded from the spec's bit layout) is nearest to v,
   ties to the even code; saturate picks the largest finite value for out-of-range input. */
double sref_small_float_decode(mrt_dtype dt, unsigned code);
unsigned sref_small_float_encode(mrt_dtype dt, double v, bool saturate);
