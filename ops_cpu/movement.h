/* Element movers shared by the data-movement kernels (shape, transform, gather, cast families): one way to
 * copy or fill elements of any dtype. Whole bytes move with memcpy, strings are duplicated (the
 * destination owns its copies), sub-byte types (int4, uint2, float4...) move bit field by bit field. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/op.h"

typedef struct mrt_mover {
    mrt_dtype dt;
    size_t esize;   /* bytes per element; 0 for sub-byte types and strings */
    int bits;
    bool is_string;
    bool oom;       /* a string duplication failed: report with mrt_mover_status */
} mrt_mover;

static inline mrt_mover mrt_mover_of(mrt_dtype dt)
{
    mrt_mover m;
    m.dt = dt;
    m.bits = mrt_dtype_bits(dt);
    m.is_string = dt == MRT_DTYPE_STRING;
    m.esize = !m.is_string && m.bits >= 8 ? (size_t)m.bits / 8 : 0;
    m.oom = false;
    return m;
}

static inline unsigned mrt_mover_get_bits(const void *d, int64_t i, int bits)
{
    const uint8_t *p = (const uint8_t *)d;
    int per = 8 / bits;
    return (unsigned)(p[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

static inline void mrt_mover_set_bits(void *d, int64_t i, int bits, unsigned v)
{
    uint8_t *p = (uint8_t *)d;
    int per = 8 / bits, sh = (int)(i % per) * bits;
    unsigned mask = ((1u << bits) - 1) << sh;
    p[i / per] = (uint8_t)((p[i / per] & ~mask) | ((v << sh) & mask));
}

static inline void mrt_mover_put_string(mrt_mover *m, char **d, const char *s)
{
    free(*d);
    *d = strdup(s ? s : "");
    if (!*d) m->oom = true;
}

/* dst[di .. di+n) = src[si .. si+n) (element indices; dst and src must not overlap). */
static inline void mrt_mover_copy(mrt_mover *m, void *dst, int64_t di, const void *src, int64_t si, int64_t n)
{
    if (n <= 0) return;
    if (m->esize) {
        memcpy((char *)dst + (size_t)di * m->esize, (const char *)src + (size_t)si * m->esize, (size_t)n * m->esize);
    } else if (m->is_string) {
        char **d = (char **)dst;
        char *const *s = (char *const *)src;
        for (int64_t k = 0; k < n; k++) mrt_mover_put_string(m, &d[di + k], s[si + k]);
    } else {
        for (int64_t k = 0; k < n; k++)
            mrt_mover_set_bits(dst, di + k, m->bits, mrt_mover_get_bits(src, si + k, m->bits));
    }
}

/* dst[di .. di+n) = the single element val[vi]. */
static inline void mrt_mover_fill(mrt_mover *m, void *dst, int64_t di, const void *val, int64_t vi, int64_t n)
{
    if (n <= 0) return;
    if (m->is_string) {
        char **d = (char **)dst;
        const char *s = ((char *const *)val)[vi];
        for (int64_t k = 0; k < n; k++) mrt_mover_put_string(m, &d[di + k], s);
    } else if (!m->esize) {
        unsigned v = mrt_mover_get_bits(val, vi, m->bits);
        for (int64_t k = 0; k < n; k++) mrt_mover_set_bits(dst, di + k, m->bits, v);
    } else {
        char *d = (char *)dst + (size_t)di * m->esize;
        const char *v = (const char *)val + (size_t)vi * m->esize;
        switch (m->esize) {
        case 1: memset(d, *v, (size_t)n); break;
        case 2: { uint16_t x; memcpy(&x, v, 2); for (int64_t k = 0; k < n; k++) memcpy(d + 2 * k, &x, 2); } break;
        case 4: { uint32_t x; memcpy(&x, v, 4); for (int64_t k = 0; k < n; k++) memcpy(d + 4 * k, &x, 4); } break;
        case 8: { uint64_t x; memcpy(&x, v, 8); for (int64_t k = 0; k < n; k++) memcpy(d + 8 * k, &x, 8); } break;
        default: for (int64_t k = 0; k < n; k++) memcpy(d + (size_t)k * m->esize, v, m->esize); break;
        }
    }
}

static inline mrt_status mrt_mover_status(const mrt_mover *m, const mrt_op_ctx *ctx)
{
    return m->oom ? mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory copying strings") : MRT_STATUS_OK;
}

/* Copy a whole tensor's elements into an output of the same element count (Reshape, Identity...). */
static inline mrt_status mrt_mover_copy_all(const mrt_op_ctx *ctx, mrt_tensor *dst, const mrt_tensor *src)
{
    mrt_mover m = mrt_mover_of(src->dtype);
    int64_t n = mrt_tensor_numel(src);
    if (dst->data == src->data) return MRT_STATUS_OK; /* in place (MRT_OPDEF_INPLACE: Reshape, Identity...) */
    if (!m.is_string && n) {
        memcpy(dst->data, src->data, mrt_tensor_nbytes(src));
        return MRT_STATUS_OK;
    }
    mrt_mover_copy(&m, dst->data, 0, src->data, 0, n);
    return mrt_mover_status(&m, ctx);
}

/* y[i] = x[base + sum_d idx_d(i) * xstr[d]] for every element i of y (row-major over shape[0..rank)):
   transposes, slices (negative strides too), broadcasts (stride 0), depth/space shuffles. y must have
   numel(shape) elements. Implemented in ops_cpu/transform.c. */
mrt_status mrt_cpu_strided_copy(const mrt_op_ctx *ctx, const mrt_tensor *x, mrt_tensor *y, int rank,
                                const int64_t *shape, int64_t base, const int64_t *xstr);
