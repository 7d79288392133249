/* Helpers shared by the reduce, norm and softmax CPU kernels (defined in ops_cpu/reduce.c).
 * Floating kernels compute in double: rows are converted from/to the tensor's dtype in chunks, so one code
 * path serves float16, bfloat16, float, double (and integers where an op takes them). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "engine/opdef/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A float row's sum in double over 8 partial sums (element i goes to part[i % 8]) folded pairwise: a fixed order
   that vectorizes, so Softmax and the normalizations give the same bits on every CPU and thread count. */
static inline double mrt_fold8_f64(const double part[8])
{
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

static inline double mrt_sum8_f32(const float *x, int64_t n)
{
    double part[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) part[k] += x[i + k];
    for (int k = 0; i < n; i++, k++) part[k] += x[i];
    return mrt_fold8_f64(part);
}

/* dst[k] = element (off + k*stride) of a `dt` buffer, k < n, as double / int64 (uint64 keeps its bits). */
void mrt_cpu_load_f64(mrt_dtype dt, const void *base, int64_t off, int64_t stride, int64_t n, double *dst);
void mrt_cpu_load_i64(mrt_dtype dt, const void *base, int64_t off, int64_t stride, int64_t n, int64_t *dst);
/* Store n values at (off + k*stride). Floats round to nearest; integers saturate (NaN -> 0); bool = (v != 0). */
void mrt_cpu_store_f64(mrt_dtype dt, void *base, int64_t off, int64_t stride, int64_t n, const double *src);
/* Integers wrap to the type's width (two's complement), like a C cast. */
void mrt_cpu_store_i64(mrt_dtype dt, void *base, int64_t off, int64_t stride, int64_t n, const int64_t *src);

/* Reduce a dense (dt, rank, shape, data) tensor over the axes with reduced[a] set, in double:
   out[o] for each output element o (row-major over the kept axes), finalised per kind (mean divides,
   L2 takes the root, LogSumExp is stable...). center (optional, one value per output) is subtracted from
   every element first: SUMSQ with center = mean gives the sum of squared deviations.
   An empty reduction gives the kind's empty value (0, 1, -inf, +inf or NaN for MEAN). LogSumExp needs `sums`,
   scratch for one value per output element (NULL for the other kinds). */
mrt_status mrt_cpu_reduce_f64(mrt_dtype dt, int rank, const int64_t *shape, const void *data, const bool *reduced,
                              mrt_reduce_kind kind, const double *center, double *out, double *sums);

/* y = x * a[o] + b[o], where o is the index of x's element in the reduced (keepdims) shape; x and y have
   the same shape, dtypes dt_x and dt_y. */
void mrt_cpu_affine_f64(mrt_dtype dt_x, int rank, const int64_t *shape, const void *x, const bool *reduced,
                        const double *a, const double *b, mrt_dtype dt_y, void *y);

#ifdef __cplusplus
}
#endif
