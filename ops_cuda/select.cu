// ONNX TopK 1/10/11/24, Unique 11, CenterCropPad 18, CumProd 26, Shrink 9 and BitCast 26 on CUDA, every dtype the CPU
// kernels (ops_cpu/select.c) take, exact: values compared and computed through the dtype helpers (ops_cuda/elem_any.cuh)
// in double / int64 / uint64 as there.
//  - TopK: the CPU's order is total (NaN largest, ties by lower index first), so each element's rank in its row is the
//    count of elements ahead of it; one thread per element, O(len) each (O(len^2) per row: fine for the rows models
//    use, slow for rows of 10^5 and more), ranks below k are written to their slot. Identical to the CPU's sort.
//  - Unique: same quadratic scheme per slice: a slice is a group's first occurrence when no earlier slice equals it;
//    its group number is the count of first occurrences ordered before it (by content when sorted, by index when not).
//    The unique count comes back to the host (one 8-byte read) to allocate the data-dependent outputs. NaNs compare
//    equal to everything in the CPU's comparison (not an order), so inputs with NaN may group differently there.
//  - CumProd: one thread per line, in the CPU's order (double for floats, wrapping uint64 for integers).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/elem_any.cuh"

namespace {

enum { K_FLOAT, K_SIGNED, K_UNSIGNED };

static int key_kind(mrt_dtype dt)
{
    return mrt_dtype_is_float(dt) ? K_FLOAT : dt == MRT_DTYPE_UINT64 ? K_UNSIGNED : K_SIGNED;
}

// -1/0/1 comparison of elements a and b by value as the CPU's cmp_keyed / cmp_slices (nan_largest: TopK's rule)
__device__ __forceinline__ int cmp_values(int dt, int kind, const void *x, int64_t a, int64_t b, bool nan_largest)
{
    if (kind == K_FLOAT) {
        double u = q_ld(dt, x, a), v = q_ld(dt, x, b);
        bool nu = u != u, nv = v != v;
        if (nan_largest && (nu || nv)) return (int)nu - (int)nv;
        return (u > v) - (u < v);
    }
    if (kind == K_UNSIGNED) {
        uint64_t u = ((const uint64_t *)x)[a], v = ((const uint64_t *)x)[b];
        return (u > v) - (u < v);
    }
    int64_t u = q_ldi(dt, x, a), v = q_ldi(dt, x, b);
    return (u > v) - (u < v);
}

// ---------------------------------------------------------------- TopK

struct topk_params {
    int64_t outer, len, inner, k;
    int dt, kind, esz;
    bool largest;
};

__global__ void topk_kernel(const void *x, void *v, int64_t *ix, topk_params p)
{
    MRT_CU_FOR(e, p.outer * p.len * p.inner)
    {
        int64_t in = e % p.inner, j = (e / p.inner) % p.len, o = e / (p.inner * p.len);
        int64_t base = o * p.len * p.inner + in, rank = 0;
        for (int64_t q = 0; q < p.len; q++) {
            if (q == j) continue;
            int c = cmp_values(p.dt, p.kind, x, base + q * p.inner, base + j * p.inner, true);
            if (p.largest) c = -c;
            rank += c < 0 || (c == 0 && q < j);
        }
        if (rank >= p.k) continue;
        int64_t dst = (o * p.k + rank) * p.inner + in;
        switch (p.esz) {
        case 1: ((uint8_t *)v)[dst] = ((const uint8_t *)x)[e]; break;
        case 2: ((uint16_t *)v)[dst] = ((const uint16_t *)x)[e]; break;
        case 4: ((uint32_t *)v)[dst] = ((const uint32_t *)x)[e]; break;
        default: ((uint64_t *)v)[dst] = ((const uint64_t *)x)[e]; break;
        }
        if (ix) ix[dst] = j;
    }
}

mrt_status cu_topk(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *v = mrt_output(ctx, 0), *ix = mrt_output(ctx, 1);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    topk_params p{};
    p.k = v->shape[axis], p.len = x->shape[axis], p.outer = 1, p.inner = 1;
    for (int d = 0; d < axis; d++) p.outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) p.inner *= x->shape[d];
    p.dt = x->dtype, p.kind = key_kind(x->dtype), p.esz = mrt_dtype_bits(x->dtype) / 8;
    p.largest = mrt_attr_int(ctx, "largest", 1) != 0; // sorted=0 allows any order: sorted is a valid one
    int64_t n = p.outer * p.len * p.inner;
    if (n == 0 || p.k == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(topk_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data, v->data,
               ix ? (int64_t *)ix->data : (int64_t *)NULL, p);
    MRT_CU_CHECK_LAUNCH(ctx, "topk kernel");
    return MRT_STATUS_OK;
}

static bool plain_numeric(mrt_dtype dt)
{
    int bits = mrt_dtype_bits(dt);
    return (mrt_dtype_is_integer(dt) || dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 ||
            dt == MRT_DTYPE_BFLOAT16 || dt == MRT_DTYPE_BOOL) && bits >= 8;
}

bool cu_numeric_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !plain_numeric(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

// ---------------------------------------------------------------- CumProd

struct cumprod_params {
    int64_t outer, len, inner;
    int dt;
    bool fl, exclusive, reverse;
};

__global__ void cumprod_kernel(const void *x, void *y, cumprod_params p)
{
    MRT_CU_FOR(line, p.outer * p.inner)
    {
        int64_t o = line / p.inner, in = line % p.inner;
        double pf = 1;
        int64_t pi = 1;
        for (int64_t s = 0; s < p.len; s++) {
            int64_t j = p.reverse ? p.len - 1 - s : s, idx = (o * p.len + j) * p.inner + in;
            if (p.exclusive) {
                if (p.fl) q_st(p.dt, y, idx, pf);
                else q_sti(p.dt, y, idx, pi);
            }
            if (p.fl) pf *= q_ld(p.dt, x, idx);
            else pi = (int64_t)((uint64_t)pi * (uint64_t)q_ldi(p.dt, x, idx)); // wraps
            if (!p.exclusive) {
                if (p.fl) q_st(p.dt, y, idx, pf);
                else q_sti(p.dt, y, idx, pi);
            }
        }
    }
}

mrt_status cu_cumprod(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *at = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!at || mrt_tensor_numel(at) != 1 || (at->dtype != MRT_DTYPE_INT32 && at->dtype != MRT_DTYPE_INT64))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'axis' must be one int32/int64 value");
    unsigned char buf[8];
    cudaStream_t s = mrt_cu_stream(ctx);
    cudaError_t e = cudaMemcpyAsync(buf, at->data, at->dtype == MRT_DTYPE_INT64 ? 8 : 4, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the axis: %s", cudaGetErrorString(e));
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_load_i64(at->dtype, buf, 0), x->rank, &axis));
    cumprod_params p{};
    p.dt = x->dtype, p.fl = mrt_dtype_is_float(x->dtype);
    p.exclusive = mrt_attr_int(ctx, "exclusive", 0) != 0, p.reverse = mrt_attr_int(ctx, "reverse", 0) != 0;
    p.len = x->shape[axis], p.outer = 1, p.inner = 1;
    for (int d = 0; d < axis; d++) p.outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) p.inner *= x->shape[d];
    if (p.outer * p.len * p.inner == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(cumprod_kernel, mrt_cu_blocks(p.outer * p.inner), MRT_CU_THREADS, 0, s, (const void *)x->data, y->data, p);
    MRT_CU_CHECK_LAUNCH(ctx, "cumprod kernel");
    return MRT_STATUS_OK;
}

// ---------------------------------------------------------------- Shrink, BitCast, CenterCropPad

__global__ void shrink_kernel(const void *x, void *y, int64_t n, int dt, bool fl, double bias, double lambd)
{
    MRT_CU_FOR(i, n)
    {
        double v = q_ld(dt, x, i), r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
        if (fl) q_st(dt, y, i, r);
        else q_sti(dt, y, i, (int64_t)r);
    }
}

mrt_status cu_shrink(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    double bias = mrt_attr_float(ctx, "bias", 0.0f), lambd = mrt_attr_float(ctx, "lambd", 0.5f);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(shrink_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data, y->data, n,
               (int)x->dtype, (bool)mrt_dtype_is_float(x->dtype), bias, lambd);
    MRT_CU_CHECK_LAUNCH(ctx, "shrink kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_bitcast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    size_t nb = mrt_tensor_nbytes(x);
    if (nb == 0) return MRT_STATUS_OK;
    cudaError_t e = cudaMemcpyAsync(mrt_output(ctx, 0)->data, x->data, nb, cudaMemcpyDeviceToDevice, mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copy: %s", cudaGetErrorString(e));
    return MRT_STATUS_OK;
}

struct crop_params {
    int rank;
    int64_t xshape[MRT_MAX_RANK], yshape[MRT_MAX_RANK], xstr[MRT_MAX_RANK], shift[MRT_MAX_RANK];
};

template <typename T> __global__ void center_crop_pad_kernel(const T *x, T *y, int64_t n, crop_params p)
{
    MRT_CU_FOR(e, n)
    {
        int64_t rem = e, src = 0;
        bool inside = true;
        for (int d = p.rank - 1; d >= 0; d--) {
            int64_t s = rem % p.yshape[d] + p.shift[d];
            rem /= p.yshape[d];
            inside = inside && s >= 0 && s < p.xshape[d];
            src += s * p.xstr[d];
        }
        y[e] = inside ? x[src] : T(0); // padding is zeros
    }
}

mrt_status cu_center_crop_pad(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    crop_params p{};
    p.rank = x->rank;
    for (int d = 0; d < p.rank; d++) { // source = output + shift (crop: shift > 0; pad: shift < 0)
        p.xshape[d] = x->shape[d], p.yshape[d] = y->shape[d];
        p.shift[d] = x->shape[d] >= y->shape[d] ? (x->shape[d] - y->shape[d]) / 2 : -((y->shape[d] - x->shape[d]) / 2);
    }
    mrt_shape_strides(x->rank, x->shape, p.xstr);
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_BYTES(mrt_dtype_bits(x->dtype) / 8, {
            auto *k = center_crop_pad_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, p);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "center crop pad kernel");
    return MRT_STATUS_OK;
}

bool cu_bytes_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int bits = x ? mrt_dtype_bits(x->dtype) : 0;
    if (!x || x->dtype == MRT_DTYPE_STRING || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

// ---------------------------------------------------------------- Unique

struct unique_params {
    int64_t outer, len, inner;
    int dt, kind;
    bool sorted;
};

__device__ int cmp_slices(const void *x, const unique_params &p, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < p.outer; o++)
        for (int64_t i = 0; i < p.inner; i++) {
            int c = cmp_values(p.dt, p.kind, x, (o * p.len + a) * p.inner + i, (o * p.len + b) * p.inner + i, false);
            if (c) return c;
        }
    return 0;
}

// first[j]: j is its group's first occurrence; group[j]: the slice's group number among the first occurrences.
__global__ void unique_groups_kernel(const void *x, unique_params p, uint8_t *first, int64_t *group)
{
    MRT_CU_FOR(j, p.len)
    {
        int64_t rep = j; // the first slice equal to j
        for (int64_t q = 0; q < j; q++)
            if (cmp_slices(x, p, q, j) == 0) {
                rep = q;
                break;
            }
        first[j] = rep == j;
        // group number of rep: first occurrences ordered before it
        int64_t g = 0;
        for (int64_t q = 0; q < p.len; q++) {
            if (q == rep) continue;
            bool q_first = true;
            for (int64_t r = 0; r < q && q_first; r++) q_first = cmp_slices(x, p, r, q) != 0;
            if (!q_first) continue;
            g += p.sorted ? cmp_slices(x, p, q, rep) < 0 : q < rep;
        }
        group[j] = g;
    }
}

// One thread: the unique count (so the host can size the outputs).
__global__ void unique_count_kernel(const uint8_t *first, int64_t len, int64_t *n_u)
{
    int64_t c = 0;
    for (int64_t j = 0; j < len; j++) c += first[j];
    *n_u = c;
}

// One thread per group g: its first index, its count; the inverse for every slice.
__global__ void unique_outputs_kernel(const uint8_t *first, const int64_t *group, int64_t len, int64_t n_u,
                                      int64_t *first_of, int64_t *indices, int64_t *counts, int64_t *inverse)
{
    MRT_CU_FOR(g, n_u)
    {
        int64_t f = -1, c = 0;
        for (int64_t j = 0; j < len; j++)
            if (group[j] == g) {
                if (f < 0) f = j;
                c++;
            }
        first_of[g] = f;
        if (indices) indices[g] = f;
        if (counts) counts[g] = c;
    }
    if (inverse) MRT_CU_FOR(j, len) inverse[j] = group[j];
}

template <typename T>
__global__ void unique_gather_kernel(const T *x, T *y, const int64_t *first_of, int64_t outer, int64_t len,
                                     int64_t inner, int64_t n_u)
{
    MRT_CU_FOR(e, outer * n_u * inner)
    {
        int64_t i = e % inner, g = (e / inner) % n_u, o = e / (inner * n_u);
        y[e] = x[(o * len + first_of[g]) * inner + i];
    }
}

mrt_status cu_unique(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    bool has_axis = mrt_node_attr(ctx->node, "axis") != NULL;
    unique_params p{};
    p.sorted = mrt_attr_int(ctx, "sorted", 1) != 0;
    p.dt = x->dtype, p.kind = key_kind(x->dtype);
    p.outer = 1, p.len = mrt_tensor_numel(x), p.inner = 1;
    int axis = 0;
    if (has_axis) {
        MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
        p.len = x->shape[axis];
        for (int d = 0; d < axis; d++) p.outer *= x->shape[d];
        for (int d = axis + 1; d < x->rank; d++) p.inner *= x->shape[d];
    }
    // workspace: [group: len][first_of: len][n_u][first flags: len bytes]; Unique's step is dynamic (its outputs' sizes
    // depend on the data), so no plan sizes it: it comes from the device scratch grown on demand
    size_t len = (size_t)p.len;
    char *ws = (char *)mrt_workspace(ctx, (2 * len + 1) * 8 + len + 8);
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    int64_t *group = (int64_t *)ws, *first_of = group + len, *n_u_dev = first_of + len;
    uint8_t *first = (uint8_t *)(n_u_dev + 1);
    cudaStream_t s = mrt_cu_stream(ctx);
    bool empty_slices = p.outer * p.inner == 0;
    if (len > 0 && !empty_slices)
        MRT_LAUNCH(unique_groups_kernel, mrt_cu_blocks(p.len), MRT_CU_THREADS, 0, s, (const void *)x->data, p, first, group);
    int64_t n_u = 0;
    if (len > 0 && !empty_slices) {
        MRT_LAUNCH(unique_count_kernel, 1, 1, 0, s, (const uint8_t *)first, p.len, n_u_dev);
        MRT_CU_CHECK_LAUNCH(ctx, "unique kernels");
        cudaError_t e = cudaMemcpyAsync(&n_u, n_u_dev, 8, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the unique count: %s", cudaGetErrorString(e));
    } else if (len > 0) {
        n_u = 1; // empty slices are all equal: one group
    }
    int64_t shape[MRT_MAX_RANK];
    mrt_tensor *y = NULL, *t[3] = {NULL, NULL, NULL};
    if (has_axis) {
        memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
        shape[axis] = n_u;
        MRT_TRY(mrt_output_alloc(ctx, 0, x->dtype, x->rank, shape, &y));
    } else {
        MRT_TRY(mrt_output_alloc(ctx, 0, x->dtype, 1, &n_u, &y));
    }
    int64_t lens[3] = {n_u, p.len, n_u};
    for (int k = 0; k < 3; k++) MRT_TRY(mrt_output_alloc(ctx, k + 1, MRT_DTYPE_INT64, 1, &lens[k], &t[k]));
    if (n_u == 0) return MRT_STATUS_OK;
    if (empty_slices) { // one group holding every slice; y is empty
        int64_t zero = 0;
        cudaError_t e = cudaSuccess;
        if (t[0]) e = cudaMemcpyAsync(t[0]->data, &zero, 8, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess && t[1]) e = cudaMemsetAsync(t[1]->data, 0, len * 8, s); // every slice in group 0
        if (e == cudaSuccess && t[2]) e = cudaMemcpyAsync(t[2]->data, &p.len, 8, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s); // the host values must outlive the copies
        if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "unique: %s", cudaGetErrorString(e));
        return MRT_STATUS_OK;
    }
    MRT_LAUNCH(unique_outputs_kernel, mrt_cu_blocks(n_u > p.len ? n_u : p.len), MRT_CU_THREADS, 0, s,
               (const uint8_t *)first, (const int64_t *)group, p.len, n_u, first_of,
               t[0] ? (int64_t *)t[0]->data : (int64_t *)NULL, t[2] ? (int64_t *)t[2]->data : (int64_t *)NULL,
               t[1] ? (int64_t *)t[1]->data : (int64_t *)NULL);
    if (y) {
        int64_t ny = p.outer * n_u * p.inner;
        [&]() -> bool {
            MRT_CU_SWITCH_BYTES(mrt_dtype_bits(x->dtype) / 8, {
                auto *k = unique_gather_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(ny), MRT_CU_THREADS, 0, s, (const elem_t *)x->data, (elem_t *)y->data,
                           (const int64_t *)first_of, p.outer, p.len, p.inner, n_u);
            })
            return false;
        }();
    }
    MRT_CU_CHECK_LAUNCH(ctx, "unique kernels");
    return MRT_STATUS_OK;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_select[] = {
    MRT_CU_ROW_S("TopK", 1, cu_topk, cu_numeric_supports, 0),
    MRT_CU_ROW_S("Unique", 11, cu_unique, cu_numeric_supports, 0),
    MRT_CU_ROW_S("CenterCropPad", 18, cu_center_crop_pad, cu_bytes_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("CumProd", 26, cu_cumprod, cu_numeric_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("Shrink", 9, cu_shrink, cu_numeric_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("BitCast", 26, cu_bitcast, cu_bytes_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
