/* CPU kernel: custom::Roll 1 (torch.roll), every dtype: byte copies of contiguous runs; strings are
 * duplicated, sub-byte types copied element by element. */
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/roll.h"
#include "engine/registry.h"

/* y[..., (i_d + shift_d) mod n_d, ...] = x[..., i_d, ...] for byte-sized elements. Dims after the
   innermost shifted one move as whole runs; the innermost shifted dim is two memcpys. */
static void roll_bytes(const unsigned char *x, unsigned char *y, int rank, const int64_t *shape,
                       const int64_t *shift, size_t esize)
{
    int k = -1;
    for (int d = 0; d < rank; d++)
        if (shift[d]) k = d;
    size_t total = esize;
    for (int d = 0; d < rank; d++) total *= (size_t)shape[d];
    if (k < 0) {
        memcpy(y, x, total);
        return;
    }
    size_t inner = esize;
    for (int d = k + 1; d < rank; d++) inner *= (size_t)shape[d];
    const int64_t nk = shape[k], sk = shift[k];
    const size_t row = inner * (size_t)nk;
    int64_t idx[MRT_MAX_RANK] = {0};
    for (size_t out = 0; out < total; out += row) {
        /* source row of output row idx[0..k-1] */
        size_t src = 0;
        for (int d = 0; d < k; d++) {
            int64_t s = idx[d] - shift[d];
            if (s < 0) s += shape[d];
            src = src * (size_t)shape[d] + (size_t)s;
        }
        const unsigned char *xs = x + src * row;
        memcpy(y + out + (size_t)sk * inner, xs, (size_t)(nk - sk) * inner);
        memcpy(y + out, xs + (size_t)(nk - sk) * inner, (size_t)sk * inner);
        for (int d = k - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* Linear source index of every output element, in output order (strings and sub-byte types). */
static void roll_sources(int rank, const int64_t *shape, const int64_t *shift, int64_t numel, int64_t *src)
{
    int64_t idx[MRT_MAX_RANK] = {0};
    for (int64_t o = 0; o < numel; o++) {
        int64_t s = 0;
        for (int d = 0; d < rank; d++) {
            int64_t v = idx[d] - shift[d];
            if (v < 0) v += shape[d];
            s = s * shape[d] + v;
        }
        src[o] = s;
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

static mrt_status mrt_cpu_roll(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 ('x') is missing or not a tensor");
    if (!y) return MRT_STATUS_OK;
    int64_t shift[MRT_MAX_RANK];
    bool flat;
    MRT_TRY(mrt_roll_shifts(ctx, x, shift, &flat));
    int64_t numel = mrt_tensor_numel(x);
    if (numel == 0) return MRT_STATUS_OK;
    int rank = flat ? 1 : x->rank;
    const int64_t *shape = flat ? &numel : x->shape;
    int bits = mrt_dtype_bits(x->dtype);
    if (x->dtype != MRT_DTYPE_STRING && bits >= 8 && bits % 8 == 0) {
        roll_bytes(x->data, y->data, rank, shape, shift, (size_t)bits / 8);
        return MRT_STATUS_OK;
    }
    if (x->dtype != MRT_DTYPE_STRING && (bits <= 0 || 8 % bits != 0))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
    int64_t *src = malloc((size_t)numel * sizeof *src);
    if (!src) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (roll indices)");
    roll_sources(rank, shape, shift, numel, src);
    if (x->dtype == MRT_DTYPE_STRING) {
        char *const *xs = x->data;
        char **ys = y->data;
        for (int64_t i = 0; i < numel; i++) {
            free(ys[i]);
            ys[i] = strdup(xs[src[i]] ? xs[src[i]] : "");
            if (!ys[i]) {
                free(src);
                return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (roll strings)");
            }
        }
    } else {
        /* packed low bits first, as minirt stores int4/uint4/float4/int2/uint2 */
        const unsigned char *xb = x->data;
        unsigned char *yb = y->data;
        const unsigned mask = (1u << bits) - 1u;
        for (int64_t i = 0; i < numel; i++) {
            int64_t sb = src[i] * bits, db = i * bits;
            unsigned v = ((unsigned)xb[sb / 8] >> (sb % 8)) & mask;
            yb[db / 8] = (unsigned char)((yb[db / 8] & ~(mask << (db % 8))) | (v << (db % 8)));
        }
    }
    free(src);
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_roll[] = {
    {"custom", "Roll", 1, mrt_cpu_roll, NULL},
    {0},
};
