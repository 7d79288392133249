/* Naive references for the data-movement ops (see shape_ref.h): one output element at a time, through
 * multi-indices, as the ONNX spec describes each op. Deliberately slow and plain. */
#include "shape_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"

int64_t sref_numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    return n;
}

void sref_unravel(int64_t flat, int rank, const int64_t *shape, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = shape[i] ? flat % shape[i] : 0;
        flat = shape[i] ? flat / shape[i] : 0;
    }
}

int64_t sref_ravel(const int64_t *idx, int rank, const int64_t *shape)
{
    int64_t flat = 0;
    for (int i = 0; i < rank; i++) flat = flat * shape[i] + idx[i];
    return flat;
}

static int64_t *alloc_map(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t)); }

static void copy_elem(mrt_dtype dt, void *dst, int64_t di, const void *src, int64_t si)
{
    int bits = mrt_dtype_bits(dt);
    if (dt == MRT_DTYPE_STRING) {
        const char *s = ((char *const *)src)[si];
        free(((char **)dst)[di]);
        ((char **)dst)[di] = strdup(s ? s : "");
    } else if (bits >= 8) {
        memcpy((char *)dst + di * (bits / 8), (const char *)src + si * (bits / 8), (size_t)bits / 8);
    } else {
        mrt_store_i64(dt == MRT_DTYPE_FLOAT4E2M1 ? MRT_DTYPE_UINT4 : dt, dst, di,
                      mrt_load_i64(dt == MRT_DTYPE_FLOAT4E2M1 ? MRT_DTYPE_UINT4 : dt, src, si));
    }
}

mrt_tensor sref_apply_map(const mrt_tensor *src, int rank, const int64_t *shape, const int64_t *map,
                         const mrt_tensor *fill)
{
    mrt_tensor t;
    mrt_tensor_alloc(&t, src->dtype, rank, shape);
    int64_t n = sref_numel(rank, shape);
    for (int64_t i = 0; i < n; i++) {
        if (map[i] >= 0)
            copy_elem(src->dtype, t.data, i, src->data, map[i]);
        else if (fill)
            copy_elem(src->dtype, t.data, i, fill->data, 0);
        else if (src->dtype == MRT_DTYPE_STRING)
            ((char **)t.data)[i] = strdup("");
    }
    return t;
}

int64_t *sref_transpose_map(int rank, const int64_t *shape, const int *perm, int64_t *out_shape)
{
    for (int i = 0; i < rank; i++) out_shape[i] = shape[perm[i]];
    int64_t n = sref_numel(rank, out_shape), *map = alloc_map(n), o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        sref_unravel(i, rank, out_shape, o);
        for (int d = 0; d < rank; d++) in[perm[d]] = o[d];
        map[i] = sref_ravel(in, rank, shape);
    }
    return map;
}

int64_t *sref_concat_map(int n, int rank, const int64_t *const *shapes, int axis, int64_t *out_shape, int **src_of)
{
    memcpy(out_shape, shapes[0], (size_t)rank * sizeof(int64_t));
    out_shape[axis] = 0;
    for (int k = 0; k < n; k++) out_shape[axis] += shapes[k][axis];
    int64_t total = sref_numel(rank, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    *src_of = malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, out_shape, o);
        int k = 0;
        while (o[axis] >= shapes[k][axis]) o[axis] -= shapes[k++][axis];
        (*src_of)[i] = k;
        map[i] = sref_ravel(o, rank, shapes[k]);
    }
    return map;
}

int64_t *sref_slice_map(int rank, const int64_t *shape, int n, const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps, int64_t *out_shape)
{
    /* the kept coordinates of every axis, listed one by one */
    int64_t *coords[MRT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        coords[d] = alloc_map(shape[d]);
        out_shape[d] = shape[d];
        for (int64_t j = 0; j < shape[d]; j++) coords[d][j] = j;
    }
    for (int k = 0; k < n; k++) {
        int a = (int)(axes ? (axes[k] < 0 ? axes[k] + rank : axes[k]) : k);
        int64_t dim = shape[a], step = steps ? steps[k] : 1, s = starts[k], e = ends[k], cnt = 0;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (step > 0) {
            if (s < 0) s = 0;
            if (s > dim) s = dim;
            if (e < 0) e = 0;
            if (e > dim) e = dim;
        } else {
            if (s < 0) s = 0;
            if (s > dim - 1) s = dim - 1;
            if (e < -1) e = -1;
            if (e > dim - 1) e = dim - 1;
        }
        for (int64_t j = s; dim > 0 && (step > 0 ? j < e : j > e);) {
            coords[a][cnt++] = j;
            if (step > 0 ? e - j <= step : j - e <= -step) break;
            j += step;
        }
        out_shape[a] = cnt;
    }
    int64_t total = sref_numel(rank, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, out_shape, o);
        for (int d = 0; d < rank; d++) in[d] = coords[d][o[d]];
        map[i] = sref_ravel(in, rank, shape);
    }
    for (int d = 0; d < rank; d++) free(coords[d]);
    return map;
}

int64_t *sref_expand_map(int rank, const int64_t *shape, int trank, const int64_t *target, int *out_rank,
                        int64_t *out_shape)
{
    int r = rank > trank ? rank : trank;
    for (int i = 0; i < r; i++) {
        int64_t a = i - (r - rank) >= 0 ? shape[i - (r - rank)] : 1;
        int64_t b = i - (r - trank) >= 0 ? target[i - (r - trank)] : 1;
        if (a != b && a != 1 && b != 1) return NULL;
        out_shape[i] = a == 1 ? b : a;
    }
    *out_rank = r;
    int64_t total = sref_numel(r, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, r, out_shape, o);
        for (int d = 0; d < rank; d++) in[d] = shape[d] == 1 ? 0 : o[d + (r - rank)];
        map[i] = sref_ravel(in, rank, shape);
    }
    return map;
}

int64_t *sref_tile_map(int rank, const int64_t *shape, const int64_t *repeats, int64_t *out_shape)
{
    for (int d = 0; d < rank; d++) out_shape[d] = shape[d] * repeats[d];
    int64_t total = sref_numel(rank, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, out_shape, o);
        for (int d = 0; d < rank; d++) o[d] %= shape[d];
        map[i] = sref_ravel(o, rank, shape);
    }
    return map;
}

int64_t *sref_pad_map(int rank, const int64_t *shape, const int64_t *pads, const char *mode, int64_t *out_shape)
{
    for (int d = 0; d < rank; d++) out_shape[d] = shape[d] + pads[d] + pads[rank + d];
    int64_t total = sref_numel(rank, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, out_shape, o);
        bool fill = false;
        for (int d = 0; d < rank; d++) {
            int64_t c = o[d] - pads[d], dim = shape[d];
            if (c >= 0 && c < dim) {
                o[d] = c;
                continue;
            }
            if (strcmp(mode, "constant") == 0) {
                fill = true;
            } else if (strcmp(mode, "edge") == 0) {
                c = c < 0 ? 0 : dim - 1;
            } else if (strcmp(mode, "wrap") == 0) {
                while (c < 0) c += dim;
                while (c >= dim) c -= dim;
            } else { /* reflect: mirror at the first and last element until inside */
                while (dim > 1 && (c < 0 || c >= dim)) c = c < 0 ? -c : 2 * (dim - 1) - c;
                if (dim == 1) c = 0;
            }
            o[d] = c;
        }
        map[i] = fill ? -1 : sref_ravel(o, rank, shape);
    }
    return map;
}

int64_t *sref_gather_map(int rank, const int64_t *shape, int axis, int irank, const int64_t *ishape,
                        const int64_t *indices, int *out_rank, int64_t *out_shape, int64_t *bad)
{
    int r = 0;
    for (int d = 0; d < axis; d++) out_shape[r++] = shape[d];
    for (int d = 0; d < irank; d++) out_shape[r++] = ishape[d];
    for (int d = axis + 1; d < rank; d++) out_shape[r++] = shape[d];
    *out_rank = r;
    int64_t ni = sref_numel(irank, ishape);
    for (int64_t j = 0; j < ni; j++)
        if (indices[j] < -shape[axis] || indices[j] >= shape[axis]) {
            *bad = j;
            return NULL;
        }
    int64_t total = sref_numel(r, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, r, out_shape, o);
        for (int d = 0; d < axis; d++) in[d] = o[d];
        int64_t k = sref_ravel(o + axis, irank, ishape);
        in[axis] = indices[k] < 0 ? indices[k] + shape[axis] : indices[k];
        for (int d = axis + 1; d < rank; d++) in[d] = o[d - 1 + irank];
        map[i] = sref_ravel(in, rank, shape);
    }
    return map;
}

int64_t *sref_gather_elements_map(int rank, const int64_t *shape, int axis, const int64_t *ishape,
                                 const int64_t *indices)
{
    int64_t total = sref_numel(rank, ishape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, ishape, o);
        o[axis] = indices[i] < 0 ? indices[i] + shape[axis] : indices[i];
        map[i] = sref_ravel(o, rank, shape);
    }
    return map;
}

int64_t *sref_gather_nd_map(int rank, const int64_t *shape, int irank, const int64_t *ishape, const int64_t *indices,
                           int batch_dims, int *out_rank, int64_t *out_shape)
{
    int64_t m = ishape[irank - 1];
    int r = 0;
    for (int d = 0; d < irank - 1; d++) out_shape[r++] = ishape[d];
    for (int64_t d = batch_dims + m; d < rank; d++) out_shape[r++] = shape[d];
    *out_rank = r;
    int64_t total = sref_numel(r, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, r, out_shape, o);
        /* o = [batch..., tuple position..., slice coords...] */
        int64_t tuple = sref_ravel(o, irank - 1, ishape);
        for (int d = 0; d < batch_dims; d++) in[d] = o[d];
        for (int64_t k = 0; k < m; k++) {
            int64_t v = indices[tuple * m + k];
            in[batch_dims + k] = v < 0 ? v + shape[batch_dims + k] : v;
        }
        for (int64_t d = batch_dims + m; d < rank; d++) in[d] = o[irank - 1 + d - batch_dims - m];
        map[i] = sref_ravel(in, rank, shape);
    }
    return map;
}

/* Numpy's reshape -> transpose -> reshape, literally, on 6-D multi-indices. */
static int64_t *shuffle6_map(const int64_t *xshape6, const int *perm, int64_t total)
{
    int64_t tshape[6], *map = alloc_map(total), o[6], in[6];
    for (int d = 0; d < 6; d++) tshape[d] = xshape6[perm[d]];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, 6, tshape, o);
        for (int d = 0; d < 6; d++) in[perm[d]] = o[d];
        map[i] = sref_ravel(in, 6, xshape6);
    }
    return map;
}

int64_t *sref_depth_to_space_map(const int64_t *s, int64_t bs, bool crd, int64_t *out_shape)
{
    int64_t c = s[1] / (bs * bs);
    out_shape[0] = s[0];
    out_shape[1] = c;
    out_shape[2] = s[2] * bs;
    out_shape[3] = s[3] * bs;
    int64_t total = sref_numel(4, s);
    if (crd) return shuffle6_map((int64_t[6]){s[0], c, bs, bs, s[2], s[3]}, (int[6]){0, 1, 4, 2, 5, 3}, total);
    return shuffle6_map((int64_t[6]){s[0], bs, bs, c, s[2], s[3]}, (int[6]){0, 3, 4, 1, 5, 2}, total);
}

int64_t *sref_space_to_depth_map(const int64_t *s, int64_t bs, bool crd, int64_t *out_shape)
{
    out_shape[0] = s[0];
    out_shape[1] = s[1] * bs * bs;
    out_shape[2] = s[2] / bs;
    out_shape[3] = s[3] / bs;
    int64_t total = sref_numel(4, s), x6[6] = {s[0], s[1], s[2] / bs, bs, s[3] / bs, bs};
    if (crd) return shuffle6_map(x6, (int[6]){0, 1, 3, 5, 2, 4}, total);
    return shuffle6_map(x6, (int[6]){0, 3, 5, 1, 2, 4}, total);
}

int64_t *sref_trilu_map(int rank, const int64_t *shape, int64_t k, bool upper)
{
    int64_t total = sref_numel(rank, shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, shape, o);
        int64_t row = o[rank - 2], col = o[rank - 1];
        bool keep = upper ? col - row >= k : col - row <= k;
        map[i] = keep ? i : -1;
    }
    return map;
}

int64_t *sref_reverse_sequence_map(int rank, const int64_t *shape, int batch_axis, int time_axis, const int64_t *lens)
{
    int64_t total = sref_numel(rank, shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, shape, o);
        int64_t len = lens[o[batch_axis]];
        if (o[time_axis] < len) o[time_axis] = len - 1 - o[time_axis];
        map[i] = sref_ravel(o, rank, shape);
    }
    return map;
}

int64_t *sref_compress_map(int rank, const int64_t *shape, const uint8_t *cond, int64_t n_cond, int axis,
                          int *out_rank, int64_t *out_shape)
{
    int64_t n = axis < 0 ? sref_numel(rank, shape) : shape[axis], *keep = alloc_map(n), kept = 0;
    for (int64_t j = 0; j < n && j < n_cond; j++)
        if (cond[j]) keep[kept++] = j;
    if (axis < 0) {
        *out_rank = 1;
        out_shape[0] = kept;
        return keep;
    }
    *out_rank = rank;
    memcpy(out_shape, shape, (size_t)rank * sizeof(int64_t));
    out_shape[axis] = kept;
    int64_t total = sref_numel(rank, out_shape), *map = alloc_map(total), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, rank, out_shape, o);
        o[axis] = keep[o[axis]];
        map[i] = sref_ravel(o, rank, shape);
    }
    free(keep);
    return map;
}

static double reduce(const char *r, double a, double b)
{
    if (strcmp(r, "add") == 0) return a + b;
    if (strcmp(r, "mul") == 0) return a * b;
    if (strcmp(r, "max") == 0) return a > b ? a : b;
    if (strcmp(r, "min") == 0) return a < b ? a : b;
    return b;
}

void sref_scatter_elements(int rank, const int64_t *shape, double *data, int axis, const int64_t *ishape,
                          const int64_t *indices, const double *updates, const char *reduction)
{
    int64_t n = sref_numel(rank, ishape), o[MRT_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        sref_unravel(i, rank, ishape, o);
        o[axis] = indices[i] < 0 ? indices[i] + shape[axis] : indices[i];
        int64_t t = sref_ravel(o, rank, shape);
        data[t] = reduce(reduction, data[t], updates[i]);
    }
}

void sref_scatter_nd(int rank, const int64_t *shape, double *data, int irank, const int64_t *ishape,
                    const int64_t *indices, const double *updates, const char *reduction)
{
    int64_t k = ishape[irank - 1], tuples = sref_numel(irank - 1, ishape);
    int64_t slice = sref_numel(rank - (int)k, shape + k), in[MRT_MAX_RANK];
    for (int64_t t = 0; t < tuples; t++)
        for (int64_t s = 0; s < slice; s++) {
            for (int64_t d = 0; d < k; d++) {
                int64_t v = indices[t * k + d];
                in[d] = v < 0 ? v + shape[d] : v;
            }
            sref_unravel(s, rank - (int)k, shape + k, in + k);
            int64_t pos = sref_ravel(in, rank, shape);
            data[pos] = reduce(reduction, data[pos], updates[t * slice + s]);
        }
}

void sref_one_hot(int irank, const int64_t *ishape, const double *indices, int64_t depth, int axis, double off,
                 double on, double *out)
{
    int64_t oshape[MRT_MAX_RANK], o[MRT_MAX_RANK], in[MRT_MAX_RANK];
    for (int d = 0, j = 0; d <= irank; d++) oshape[d] = d == axis ? depth : ishape[j++];
    int64_t total = sref_numel(irank + 1, oshape);
    for (int64_t i = 0; i < total; i++) {
        sref_unravel(i, irank + 1, oshape, o);
        for (int d = 0, j = 0; d <= irank; d++)
            if (d != axis) in[j++] = o[d];
        int64_t v = (int64_t)indices[sref_ravel(in, irank, ishape)];
        if (v < 0) v += depth;
        out[i] = v == o[axis] ? on : off;
    }
}

int64_t sref_nonzero(int rank, const int64_t *shape, const double *x, int64_t **coords)
{
    int64_t n = sref_numel(rank, shape), count = 0, idx[MRT_MAX_RANK];
    int r = rank ? rank : 1;
    for (int64_t i = 0; i < n; i++) count += x[i] != 0;
    *coords = alloc_map(r * count);
    for (int64_t i = 0, k = 0; i < n; i++) {
        if (x[i] == 0) continue;
        if (rank) sref_unravel(i, rank, shape, idx);
        else idx[0] = 0;
        for (int d = 0; d < r; d++) (*coords)[d * count + k] = idx[d];
        k++;
    }
    return count;
}

int64_t sref_range_count(double start, double limit, double delta)
{
    double n = ceil((limit - start) / delta);
    return n > 0 ? (int64_t)n : 0;
}

typedef struct layout { int e, m, bias; int kind; } layout; /* kind 0 IEEE, 1 FN, 2 FNUZ, 3 E2M1 */

static layout layout_of(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT8E4M3FN: return (layout){4, 3, 7, 1};
    case MRT_DTYPE_FLOAT8E4M3FNUZ: return (layout){4, 3, 8, 2};
    case MRT_DTYPE_FLOAT8E5M2: return (layout){5, 2, 15, 0};
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return (layout){5, 2, 16, 2};
    default: return (layout){2, 1, 1, 3};
    }
}

double sref_small_float_decode(mrt_dtype dt, unsigned code)
{
    layout l = layout_of(dt);
    int width = 1 + l.e + l.m;
    unsigned sign = code >> (width - 1), exp = (code >> l.m) & ((1u << l.e) - 1), man = code & ((1u << l.m) - 1);
    unsigned top = (1u << l.e) - 1;
    if (l.kind == 2 && code == 1u << (width - 1)) return NAN;
    if (l.kind == 1 && exp == top && man == (1u << l.m) - 1) return NAN;
    if (l.kind == 0 && exp == top) return man ? NAN : (sign ? -INFINITY : INFINITY);
    double v = exp == 0 ? man * pow(2.0, 1 - l.bias - l.m) : (1.0 + man * pow(2.0, -l.m)) * pow(2.0, (int)exp - l.bias);
    return sign ? -v : v;
}

unsigned sref_small_float_encode(mrt_dtype dt, double v, bool saturate)
{
    layout l = layout_of(dt);
    int width = 1 + l.e + l.m;
    unsigned n = 1u << width, best = 0;
    double best_err = INFINITY, maxv = 0;
    for (unsigned c = 0; c < n; c++) {
        double d = sref_small_float_decode(dt, c);
        if (isfinite(d) && d > maxv) maxv = d;
    }
    if (isnan(v)) {
        for (unsigned c = 0; c < n; c++)
            if (isnan(sref_small_float_decode(dt, c)) && (l.kind == 2 || (c >> (width - 1)) == (signbit(v) ? 1u : 0u)))
                return c;
        return 0;
    }
    double a = fabs(v);
    for (unsigned c = 0; c < n; c++) {
        double d = sref_small_float_decode(dt, c);
        if (!isfinite(d) || (d == 0 && c != 0 && l.kind == 2)) continue;
        if ((d < 0) != (v < 0) && d != 0) continue;
        double err = fabs(fabs(d) - a);
        /* ties: the code with an even mantissa */
        if (err < best_err || (err == best_err && (c & 1u) == 0)) {
            best_err = err;
            best = c;
        }
    }
    /* out of range: beyond the largest value by at least half a step -> saturate or inf/NaN */
    unsigned max_code = 0;
    for (unsigned c = 0; c < n; c++)
        if (sref_small_float_decode(dt, c) == maxv) max_code = c;
    double below = 0;
    for (unsigned c = 0; c < n; c++) {
        double d = sref_small_float_decode(dt, c);
        if (isfinite(d) && d < maxv && d > below) below = d;
    }
    double next_up = maxv + (maxv - below); /* the value one more mantissa step would give */
    bool overflow = isinf(a) || a > maxv + (next_up - maxv) / 2 ||
                    (a == maxv + (next_up - maxv) / 2 && (max_code & 1u)); /* a tie rounds to even */
    unsigned sign = v < 0 ? 1u << (width - 1) : 0;
    if (overflow) {
        if (saturate || l.kind == 3) return sign | max_code;
        if (l.kind == 0) return sign | (((1u << l.e) - 1) << l.m);
        if (l.kind == 1) return sign | (n / 2 - 1);
        return 1u << (width - 1);
    }
    if (best_err == INFINITY) best = 0;
    double d = sref_small_float_decode(dt, best);
    if (d == 0) return l.kind == 2 ? 0 : (signbit(v) ? 1u << (width - 1) : 0);
    return best;
}
