// ONNX Gather 1-13, GatherElements 11-13, GatherND 11-13 (batch_dims), Scatter 9-11, ScatterElements 11-18 and
// ScatterND 11-18 (reduction none/add/mul/max/min) on CUDA, as ops_cpu/gather.c: every whole-byte dtype, int32/int64
// indices, negative indices counted from the end. An out-of-range index sets a flag on the device; the kernel row
// reads it back and fails the node with the CPU's message (the first bad index, found on a host copy of the
// indices). Scatters apply their updates in the CPU's order, without atomics: ScatterElements walks each line along
// the axis in one thread (lines never collide), ScatterND gives each thread one element of the slice and walks the
// index tuples in order (so one thread when every index addresses a single element). Compress 9-28, OneHot 9-28
// (indices of any numeric type), NonZero 9-13 (any numeric input) and TensorScatter 24 (linear/circular) likewise;
// Compress and NonZero number their selected elements by a chunked scan (counts per chunk, one thread's prefix sum,
// each chunk writes its own), so no atomics; NonZero reads its count back to size its output.
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/elem_any.cuh"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/movement.h"

namespace {

using namespace std;

__device__ __forceinline__ int64_t load_index(const void *p, bool i32, int64_t i)
{
    return i32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

// v normalised into [0, dim), or false (and the flag raised) when out of range.
__device__ __forceinline__ bool fix_index(int64_t &v, int64_t dim, int *flag)
{
    if (v < 0) v += dim;
    if (v < 0 || v >= dim) {
        *flag = 1; // any thread may write it: all write the same value
        return false;
    }
    return true;
}

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

int reduction_of(const mrt_op_ctx *ctx)
{
    const char *r = ctx->opset >= 16 ? mrt_attr_string(ctx, "reduction", "none") : "none";
    return strcmp(r, "add") == 0 ? RED_ADD : strcmp(r, "mul") == 0 ? RED_MUL : strcmp(r, "max") == 0 ? RED_MAX
         : strcmp(r, "min") == 0 ? RED_MIN : RED_NONE;
}

// ------------------------------------------------------------------ the out-of-range flag

// The flag lives after `table_bytes` of the node's device workspace; zeroed before the kernel.
struct index_check {
    void *table;
    int *flag;
};

// The workspace check_begin fetches: the table, then the flag.
size_t check_bytes(size_t table_bytes) { return (table_bytes + 63) / 64 * 64 + 64; }

mrt_status check_begin(mrt_op_ctx *ctx, size_t table_bytes, index_check *c)
{
    size_t at = (table_bytes + 63) / 64 * 64;
    char *ws = (char *)mrt_workspace(ctx, check_bytes(table_bytes));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    c->table = ws;
    c->flag = (int *)(ws + at);
    cudaError_t e = cudaMemsetAsync(c->flag, 0, sizeof(int), mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "clearing the index flag: %s", cudaGetErrorString(e));
    return MRT_STATUS_OK;
}

// After the kernel: when the flag is up, find the first bad index on a host copy of the indices and fail as the CPU.
// dims(pos) gives the axis and its size that element `pos` of the indices addresses.
template <typename DimOf> mrt_status check_end(mrt_op_ctx *ctx, const index_check &c, DimOf dim_of)
{
    int flag = 0;
    MRT_TRY(mrt_cu_read(ctx, &flag, c.flag, sizeof flag, "the index flag"));
    if (!flag) return MRT_STATUS_OK;
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 1));
    const mrt_tensor *hi = mrt_input(&h.ctx, 1);
    int64_t n = mrt_tensor_numel(hi);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = hi->dtype == MRT_DTYPE_INT32 ? ((const int32_t *)hi->data)[i] : ((const int64_t *)hi->data)[i];
        int axis;
        int64_t dim;
        if (!dim_of(i, &axis, &dim)) continue;
        int64_t k = v < 0 ? v + dim : v;
        if (k < 0 || k >= dim)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                               "index %lld (element %lld of 'indices') is out of range [%lld, %lld] for axis %d of size %lld",
                               (long long)v, (long long)i, (long long)-dim, (long long)dim - 1, axis, (long long)dim);
    }
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "an index is out of range");
}

// ------------------------------------------------------------------ Gather

template <typename T>
__global__ void gather_kernel(const T *x, const void *idx, bool i32, T *y, int64_t total, int64_t n, int64_t inner,
                              int64_t dim, int *flag)
{
    MRT_CU_FOR(e, total) {
        int64_t k = e % inner, q = e / inner, j = q % n, o = q / n;
        int64_t v = load_index(idx, i32, j);
        y[e] = fix_index(v, dim, flag) ? x[(o * dim + v) * inner + k] : T();
    }
}

__global__ void check_kernel(const void *idx, bool i32, int64_t n, int64_t dim, int *flag)
{
    MRT_CU_FOR(j, n) {
        int64_t v = load_index(idx, i32, j);
        fix_index(v, dim, flag);
    }
}

int norm_axis(const mrt_op_ctx *ctx, int rank, int64_t def)
{
    int64_t a = mrt_attr_int(ctx, "axis", def);
    return (int)(a < 0 ? a + rank : a);
}

mrt_status cu_gather(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, x->rank, 0);
    int64_t inner = 1, dim = x->shape[axis], n = mrt_tensor_numel(idx), total = mrt_tensor_numel(y);
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    if (n == 0) return MRT_STATUS_OK;
    index_check c;
    MRT_TRY(check_begin(ctx, 0, &c));
    bool done = false;
    if (total == 0) { // no element to gather, but the CPU still checks every index
        MRT_LAUNCH(check_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), idx->data,
                   idx->dtype == MRT_DTYPE_INT32, n, dim, c.flag);
        done = true;
    }
    if (!done)
        [&]() -> bool {
            MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
                auto *k = gather_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, idx->data,
                           idx->dtype == MRT_DTYPE_INT32, (elem_t *)y->data, total, n, inner, dim, c.flag);
                done = true;
            })
            return false;
        }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Gather kernel");
    return check_end(ctx, c, [&](int64_t, int *a, int64_t *d) { *a = axis; *d = dim; return true; });
}

// ------------------------------------------------------------------ GatherElements / ScatterElements

struct elem_geom {
    int rank, axis;
    int64_t ishape[MRT_MAX_RANK]; // the indices' shape
    int64_t xstr[MRT_MAX_RANK];   // data's strides
    int64_t dim;                  // data's size on the axis
};

// Offset in data of indices element i, or -1 (flag raised) when its index is out of range.
__device__ __forceinline__ int64_t element_offset(const elem_geom &g, const void *idx, bool i32, int64_t i, int *flag)
{
    int64_t q = i, off = 0;
    for (int d = g.rank - 1; d >= 0; d--) {
        int64_t c = q % g.ishape[d];
        q /= g.ishape[d];
        if (d != g.axis) off += c * g.xstr[d];
    }
    int64_t v = load_index(idx, i32, i);
    if (!fix_index(v, g.dim, flag)) return -1;
    return off + v * g.xstr[g.axis];
}

template <typename T> __global__ void gather_elements_kernel(const T *x, const void *idx, bool i32, T *y, int64_t n, elem_geom g, int *flag)
{
    MRT_CU_FOR(i, n) {
        int64_t off = element_offset(g, idx, i32, i, flag);
        y[i] = off >= 0 ? x[off] : T();
    }
}

elem_geom elem_geom_of(const mrt_tensor *x, const mrt_tensor *idx, int axis)
{
    elem_geom g;
    memset(&g, 0, sizeof g);
    g.rank = x->rank;
    g.axis = axis;
    for (int d = 0; d < idx->rank; d++) g.ishape[d] = idx->shape[d];
    mrt_shape_strides(x->rank, x->shape, g.xstr);
    g.dim = x->shape[axis];
    return g;
}

mrt_status cu_gather_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, x->rank, 0);
    int64_t n = mrt_tensor_numel(idx);
    if (n == 0) return MRT_STATUS_OK;
    elem_geom g = elem_geom_of(x, idx, axis);
    index_check c;
    MRT_TRY(check_begin(ctx, 0, &c));
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = gather_elements_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, idx->data,
                       idx->dtype == MRT_DTYPE_INT32, (elem_t *)y->data, n, g, c.flag);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "GatherElements kernel");
    return check_end(ctx, c, [&](int64_t, int *a, int64_t *d) { *a = axis; *d = g.dim; return true; });
}

// How an element type reduces: 0 integer (wrapping; bool as or/and), 1 floating (in double), 2 moved only (complex).
template <typename T> struct red_kind { static const int value = 0; };
template <> struct red_kind<float> { static const int value = 1; };
template <> struct red_kind<double> { static const int value = 1; };
template <> struct red_kind<mrt_cu_half> { static const int value = 1; };
template <> struct red_kind<mrt_cu_bf16> { static const int value = 1; };
template <> struct red_kind<mrt_cu_b16> { static const int value = 2; };

// *d = *d (reduction) *s, as ops_cpu/gather.c reduce_into: integers wrap, floats in double (max/min keep a NaN already
// in d), float16/bfloat16 rounded back through float.
template <typename T> __device__ __forceinline__ void reduce_into(T *d, const T *s, int r, bool is_bool)
{
    if constexpr (red_kind<T>::value == 2) {
        *d = *s;
    } else if constexpr (red_kind<T>::value == 0) {
        T a = *d, b = *s;
        if (r == RED_NONE) *d = b;
        else if (is_bool) *d = (T)((r == RED_ADD || r == RED_MAX) ? (a || b) : (a && b));
        else
            *d = r == RED_ADD ? (T)((uint64_t)a + (uint64_t)b) : r == RED_MUL ? (T)((uint64_t)a * (uint64_t)b)
               : r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
    } else {
        if (r == RED_NONE) {
            *d = *s;
            return;
        }
        double a = (double)mrt_cu_load(d, 0), b = (double)mrt_cu_load(s, 0);
        double v = r == RED_ADD ? a + b : r == RED_MUL ? a * b : r == RED_MAX ? (a > b || isnan(a) ? a : b)
                 : (a < b || isnan(a) ? a : b);
        mrt_cu_store(d, 0, (typename mrt_cu_compute<T>::type)v);
    }
}

template <typename T>
__global__ void scatter_elements_kernel(T *y, const void *idx, bool i32, const T *upd, int64_t lines, elem_geom g, int r,
                                        bool is_bool, int *flag)
{
    // one thread per line of the indices along the axis: its updates, in order, touch no other line's targets
    int64_t len = g.ishape[g.axis], astr = 1;
    for (int d = g.rank - 1; d > g.axis; d--) astr *= g.ishape[d];
    MRT_CU_FOR(l, lines) {
        int64_t outer = l / astr, in = l - outer * astr, first = outer * len * astr + in;
        for (int64_t a = 0; a < len; a++) {
            int64_t i = first + a * astr, off = element_offset(g, idx, i32, i, flag);
            if (off >= 0) reduce_into(y + off, upd + i, r, is_bool);
        }
    }
}

// The dtypes a reduction takes (the opdef refused the others): every numeric type and bool.
#define SWITCH_REDUCIBLE(dt, ...)                                                                                 \
    switch (dt) {                                                                                                 \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_BOOL, uint8_t, __VA_ARGS__)                                                \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT, float, __VA_ARGS__)                                                 \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_DOUBLE, double, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT16, mrt_cu_half, __VA_ARGS__)                                         \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_BFLOAT16, mrt_cu_bf16, __VA_ARGS__)                                        \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT8, int8_t, __VA_ARGS__)                                                 \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT16, int16_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT32, int32_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT64, int64_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT8, uint8_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT16, uint16_t, __VA_ARGS__)                                             \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT32, uint32_t, __VA_ARGS__)                                             \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT64, uint64_t, __VA_ARGS__)                                             \
    default: break;                                                                                               \
    }

// Without a reduction the element width is all that matters; with one, the dtype.
#define SWITCH_SCATTER(dt, r, ...)                                                                                \
    do {                                                                                                          \
        if ((r) == RED_NONE) {                                                                                    \
            [&]() -> bool { MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(dt), __VA_ARGS__) return false; }();           \
        } else {                                                                                                  \
            [&]() -> bool { SWITCH_REDUCIBLE(dt, __VA_ARGS__) return false; }();                                \
        }                                                                                                         \
    } while (0)

mrt_status cu_scatter_elements(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1), *upd = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, x->rank, 0), r = reduction_of(ctx);
    MRT_TRY(mrt_cu_copy_all(ctx, y, x));
    int64_t n = mrt_tensor_numel(idx);
    if (n == 0) return MRT_STATUS_OK;
    elem_geom g = elem_geom_of(x, idx, axis);
    int64_t lines = n / idx->shape[axis];
    index_check c;
    MRT_TRY(check_begin(ctx, 0, &c));
    bool done = false, is_bool = x->dtype == MRT_DTYPE_BOOL;
    SWITCH_SCATTER(x->dtype, r, {
        auto *k = scatter_elements_kernel<elem_t>;
        MRT_LAUNCH(k, mrt_cu_blocks(lines), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, idx->data,
                   idx->dtype == MRT_DTYPE_INT32, (const elem_t *)upd->data, lines, g, r, is_bool, c.flag);
        done = true;
    });
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "ScatterElements kernel");
    return check_end(ctx, c, [&](int64_t, int *a, int64_t *d) { *a = axis; *d = g.dim; return true; });
}

// ------------------------------------------------------------------ GatherND / ScatterND

struct nd_geom {
    int b;                         // batch dims
    int64_t m;                     // index tuple length
    int64_t per_batch, batch_stride, slice;
    int64_t xdim[MRT_MAX_RANK], xstr[MRT_MAX_RANK];
};

nd_geom nd_geom_of(const mrt_tensor *x, const mrt_tensor *idx, int b, int64_t *n_tuples)
{
    nd_geom g;
    memset(&g, 0, sizeof g);
    int64_t batch = 1;
    g.b = b;
    g.m = idx->shape[idx->rank - 1];
    g.per_batch = 1;
    for (int d = 0; d < b; d++) batch *= idx->shape[d];
    for (int d = b; d < idx->rank - 1; d++) g.per_batch *= idx->shape[d];
    mrt_shape_strides(x->rank, x->shape, g.xstr);
    for (int d = 0; d < x->rank; d++) g.xdim[d] = x->shape[d];
    g.slice = b + g.m < x->rank ? g.xstr[b + g.m - 1] : 1;
    g.batch_stride = b > 0 ? g.xstr[b - 1] : 0;
    *n_tuples = batch * g.per_batch;
    return g;
}

// Offset in data of tuple t's slice, or -1 (flag raised).
__device__ __forceinline__ int64_t tuple_offset(const nd_geom &g, const void *idx, bool i32, int64_t t, int *flag)
{
    int64_t o = (t / (g.per_batch ? g.per_batch : 1)) * g.batch_stride;
    bool ok = true;
    for (int64_t k = 0; k < g.m; k++) {
        int64_t v = load_index(idx, i32, t * g.m + k);
        if (fix_index(v, g.xdim[g.b + k], flag)) o += v * g.xstr[g.b + k];
        else ok = false;
    }
    return ok ? o : -1;
}

__global__ void tuple_offsets_kernel(const void *idx, bool i32, int64_t *off, int64_t nt, nd_geom g, int *flag)
{
    MRT_CU_FOR(t, nt) off[t] = tuple_offset(g, idx, i32, t, flag);
}

template <typename T> __global__ void gather_nd_kernel(const T *x, const void *idx, bool i32, T *y, int64_t n, nd_geom g, int *flag)
{
    MRT_CU_FOR(e, n) {
        int64_t t = e / g.slice, off = tuple_offset(g, idx, i32, t, flag);
        y[e] = off >= 0 ? x[off + e - t * g.slice] : T();
    }
}

// Which axis (and its size) element pos of GatherND/ScatterND's indices addresses.
struct nd_dim_of {
    const nd_geom *g;
    bool operator()(int64_t pos, int *axis, int64_t *dim) const
    {
        int64_t k = g->m ? pos % g->m : 0;
        *axis = (int)(g->b + k);
        *dim = g->xdim[g->b + k];
        return g->m > 0;
    }
};

int gather_nd_batch_dims(const mrt_op_ctx *ctx) { return ctx->opset >= 12 ? (int)mrt_attr_int(ctx, "batch_dims", 0) : 0; }

// GatherND's offset table: only for empty slices, where the run checks the indices and copies nothing
size_t gather_nd_table_bytes(mrt_op_ctx *ctx, int64_t nt)
{
    return mrt_tensor_numel(mrt_output(ctx, 0)) ? 0 : (size_t)nt * sizeof(int64_t);
}

mrt_status cu_gather_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int b = gather_nd_batch_dims(ctx);
    int64_t nt, n = mrt_tensor_numel(y);
    nd_geom g = nd_geom_of(x, idx, b, &nt);
    if (nt == 0 || mrt_tensor_numel(idx) == 0) return MRT_STATUS_OK;
    index_check c;
    MRT_TRY(check_begin(ctx, gather_nd_table_bytes(ctx, nt), &c));
    bool done = false;
    if (n == 0) { // empty slices: only the indices' check, as on the CPU
        MRT_LAUNCH(tuple_offsets_kernel, mrt_cu_blocks(nt), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), idx->data,
                   idx->dtype == MRT_DTYPE_INT32, (int64_t *)c.table, nt, g, c.flag);
        MRT_CU_CHECK_LAUNCH(ctx, "GatherND index kernel");
        return check_end(ctx, c, nd_dim_of{&g});
    }
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = gather_nd_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, idx->data,
                       idx->dtype == MRT_DTYPE_INT32, (elem_t *)y->data, n, g, c.flag);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "GatherND kernel");
    return check_end(ctx, c, nd_dim_of{&g});
}

// One thread per element of the slice, walking the tuples in order: the CPU's order for every target.
template <typename T>
__global__ void scatter_nd_kernel(T *y, const int64_t *off, const T *upd, int64_t nt, int64_t slice, int r, bool is_bool)
{
    MRT_CU_FOR(k, slice) {
        for (int64_t t = 0; t < nt; t++) reduce_into(y + off[t] + k, upd + t * slice + k, r, is_bool);
    }
}

mrt_status cu_scatter_nd(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *idx = mrt_input(ctx, 1), *upd = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int r = reduction_of(ctx);
    MRT_TRY(mrt_cu_copy_all(ctx, y, x));
    int64_t nt;
    nd_geom g = nd_geom_of(x, idx, 0, &nt);
    if (nt == 0) return MRT_STATUS_OK;
    index_check c;
    MRT_TRY(check_begin(ctx, (size_t)nt * sizeof(int64_t), &c));
    int64_t *off = (int64_t *)c.table;
    MRT_LAUNCH(tuple_offsets_kernel, mrt_cu_blocks(nt), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), idx->data,
               idx->dtype == MRT_DTYPE_INT32, off, nt, g, c.flag);
    MRT_CU_CHECK_LAUNCH(ctx, "ScatterND index kernel");
    MRT_TRY(check_end(ctx, c, nd_dim_of{&g})); // every tuple valid before any update, as on the CPU
    bool done = false, is_bool = x->dtype == MRT_DTYPE_BOOL;
    SWITCH_SCATTER(x->dtype, r, {
        auto *k = scatter_nd_kernel<elem_t>;
        MRT_LAUNCH(k, mrt_cu_blocks(g.slice), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, off,
                   (const elem_t *)upd->data, nt, g.slice, r, is_bool);
        done = true;
    });
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "ScatterND kernel");
    return MRT_STATUS_OK;
}


// ------------------------------------------------------------------ workspaces (engine/registry.h)

// Gather, GatherElements and ScatterElements: the out-of-range flag alone
mrt_status cu_index_flag_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, check_bytes(0));
    return MRT_STATUS_OK;
}

mrt_status cu_gather_nd_workspace(mrt_op_ctx *ctx)
{
    int64_t nt;
    nd_geom_of(mrt_input(ctx, 0), mrt_input(ctx, 1), gather_nd_batch_dims(ctx), &nt);
    mrt_workspace_request(ctx, check_bytes(gather_nd_table_bytes(ctx, nt)));
    return MRT_STATUS_OK;
}

// ScatterND: the tuples' offsets and the flag
mrt_status cu_scatter_nd_workspace(mrt_op_ctx *ctx)
{
    int64_t nt;
    nd_geom_of(mrt_input(ctx, 0), mrt_input(ctx, 1), 0, &nt);
    mrt_workspace_request(ctx, check_bytes((size_t)nt * sizeof(int64_t)));
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ Compress / NonZero: numbering the selected elements

// Their workspace stays unplanned: NonZero's step, and Compress's unless its condition is a constant, are dynamic
// (the output's size depends on the data), so they take it from the device scratch grown on demand.

// Elements per chunk of the scan: at most MAX_CHUNKS chunks, so one thread sums their counts quickly.
const int64_t MAX_CHUNKS = 4096;

int64_t chunk_of(int64_t n)
{
    int64_t c = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
    return c < 256 ? 256 : c;
}

// Selection predicates: Compress's condition byte, NonZero's element (float NaN counts, as on the CPU).
struct cond_pred {
    const uint8_t *c;
    __device__ bool operator()(int64_t i) const { return c[i] != 0; }
};
struct nonzero_pred {
    const void *x;
    int dt;
    bool fl;
    __device__ bool operator()(int64_t i) const { return fl ? q_ld(dt, x, i) != 0 : q_ldi(dt, x, i) != 0; }
};

template <typename P> __global__ void chunk_count_kernel(P pred, int64_t n, int64_t chunk, int64_t *cnt, int64_t nch)
{
    MRT_CU_FOR(t, nch) {
        int64_t k = 0, end = (t + 1) * chunk < n ? (t + 1) * chunk : n;
        for (int64_t i = t * chunk; i < end; i++) k += pred(i);
        cnt[t] = k;
    }
}

// cnt becomes the exclusive prefix sums, cnt[nch] the total: one thread, in order.
__global__ void chunk_scan_kernel(int64_t *cnt, int64_t nch)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int64_t sum = 0;
        for (int64_t t = 0; t < nch; t++) {
            int64_t k = cnt[t];
            cnt[t] = sum;
            sum += k;
        }
        cnt[nch] = sum;
    }
}

// The positions of the selected elements, in order: sel[k] = the k-th i with pred(i).
template <typename P> __global__ void chunk_select_kernel(P pred, int64_t n, int64_t chunk, const int64_t *off, int64_t nch, int64_t *sel)
{
    MRT_CU_FOR(t, nch) {
        int64_t k = off[t], end = (t + 1) * chunk < n ? (t + 1) * chunk : n;
        for (int64_t i = t * chunk; i < end; i++)
            if (pred(i)) sel[k++] = i;
    }
}

// sel (n entries, of which the first cnt[nch] are used) and cnt (nch + 1) in the node's workspace.
template <typename P> mrt_status select_positions(mrt_op_ctx *ctx, P pred, int64_t n, int64_t **sel, int64_t **cnt, int64_t *nch)
{
    int64_t chunk = chunk_of(n);
    *nch = (n + chunk - 1) / chunk;
    char *ws = (char *)mrt_workspace(ctx, (size_t)(n + *nch + 1) * sizeof(int64_t));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    *sel = (int64_t *)ws;
    *cnt = *sel + n;
    cudaStream_t s = mrt_cu_stream(ctx);
    auto *kc = chunk_count_kernel<P>;
    auto *ks = chunk_select_kernel<P>;
    MRT_LAUNCH(kc, mrt_cu_blocks(*nch), MRT_CU_THREADS, 0, s, pred, n, chunk, *cnt, *nch);
    MRT_LAUNCH(chunk_scan_kernel, 1, 1, 0, s, *cnt, *nch);
    MRT_LAUNCH(ks, mrt_cu_blocks(*nch), MRT_CU_THREADS, 0, s, pred, n, chunk, (const int64_t *)*cnt, *nch, *sel);
    MRT_CU_CHECK_LAUNCH(ctx, "selection kernels");
    return MRT_STATUS_OK;
}

template <typename T>
__global__ void compress_kernel(const T *x, T *y, const int64_t *sel, int64_t total, int64_t count, int64_t dim, int64_t inner)
{
    MRT_CU_FOR(e, total) {
        int64_t i = e % inner, q = e / inner, k = q % count, o = q / count;
        y[e] = x[(o * dim + sel[k]) * inner + i];
    }
}

// infer sized the output (at run time when the condition is not a constant): count = its length along the axis.
mrt_status cu_compress(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *cond = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t outer = 1, inner = 1, dim = mrt_tensor_numel(x), count = mrt_tensor_numel(y);
    if (mrt_node_attr(ctx->node, "axis")) {
        int axis = norm_axis(ctx, x->rank, 0);
        dim = x->shape[axis];
        count = y->shape[axis];
        for (int d = 0; d < axis; d++) outer *= x->shape[d];
        for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    }
    int64_t total = mrt_tensor_numel(y), n = cond->shape[0] < dim ? cond->shape[0] : dim;
    if (total == 0) return MRT_STATUS_OK;
    int64_t *sel, *cnt, nch;
    MRT_TRY(select_positions(ctx, cond_pred{(const uint8_t *)cond->data}, n, &sel, &cnt, &nch));
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = compress_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, (const int64_t *)sel, total, count, dim, inner);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Compress kernel");
    return MRT_STATUS_OK;
}

struct nz_geom {
    int rank;
    int64_t dims[MRT_MAX_RANK];
};

// Column k of the output: the coordinates of the k-th non-zero element.
__global__ void nonzero_kernel(const int64_t *sel, int64_t count, nz_geom g, int64_t *y)
{
    MRT_CU_FOR(k, count) {
        int64_t q = sel[k];
        for (int d = g.rank - 1; d >= 0; d--) {
            y[d * count + k] = q % g.dims[d];
            q /= g.dims[d];
        }
    }
}

mrt_status cu_nonzero(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t n = mrt_tensor_numel(x), count = 0, *sel = NULL, *cnt = NULL, nch = 0;
    nz_geom g;
    memset(&g, 0, sizeof g);
    g.rank = x->rank ? x->rank : 1; // a scalar behaves like a 1-element vector (numpy)
    for (int d = 0; d < g.rank; d++) g.dims[d] = x->rank ? x->shape[d] : 1;
    if (n > 0) {
        nonzero_pred p{x->data, (int)x->dtype, mrt_dtype_is_float(x->dtype)};
        MRT_TRY(select_positions(ctx, p, n, &sel, &cnt, &nch));
        MRT_TRY(mrt_cu_read(ctx, &count, cnt + nch, sizeof count, "the non-zero count"));
    }
    int64_t shape[2] = {g.rank, count};
    mrt_tensor *y;
    MRT_TRY(mrt_output_alloc(ctx, 0, MRT_DTYPE_INT64, 2, shape, &y));
    if (!y || count == 0) return MRT_STATUS_OK;
    MRT_LAUNCH(nonzero_kernel, mrt_cu_blocks(count), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const int64_t *)sel, count, g,
               (int64_t *)y->data);
    MRT_CU_CHECK_LAUNCH(ctx, "NonZero kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ OneHot

// Element e of the output: on_value where the index (normalised, in range) equals its position along the axis.
template <typename T>
__global__ void one_hot_kernel(const void *idx, int idt, bool fidx, const T *vals, T *y, int64_t total, int64_t depth,
                               int64_t inner)
{
    MRT_CU_FOR(e, total) {
        int64_t i = e % inner, q = e / inner, at = q % depth, o = q / depth, p = o * inner + i, v;
        bool ok = true; // NaN, inf and huge float indices: all off_value
        if (fidx) {
            double dv = q_ld(idt, idx, p);
            ok = dv > -9e18 && dv < 9e18;
            v = ok ? (int64_t)dv : 0;
        } else {
            v = q_ldi(idt, idx, p);
        }
        if (v < 0) v += depth;
        y[e] = vals[ok && v == at ? 1 : 0];
    }
}

mrt_status cu_one_hot(mrt_op_ctx *ctx)
{
    const mrt_tensor *idx = mrt_input(ctx, 0), *vals = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = norm_axis(ctx, y->rank, -1);
    int64_t depth = y->shape[axis], inner = 1, total = mrt_tensor_numel(y);
    for (int d = axis + 1; d < y->rank; d++) inner *= y->shape[d];
    if (total == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(vals->dtype), {
            auto *k = one_hot_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)idx->data, (int)idx->dtype,
                       mrt_dtype_is_float(idx->dtype), (const elem_t *)vals->data, (elem_t *)y->data, total, depth, inner);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(vals->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "OneHot kernel");
    return MRT_STATUS_OK;
}

// Indices of any numeric type (read through elem_any.cuh, packed ones included); values and output whole bytes.
bool one_hot_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[2], *y = ctx->outputs[0];
    mrt_dtype dt = v && v->kind == MRT_VALUE_TENSOR ? v->tensor.dtype : MRT_DTYPE_UNDEFINED;
    if (mrt_cu_move_bytes(dt) && y && y->kind == MRT_VALUE_TENSOR) return true;
    snprintf(why, len, "OneHot values of dtype %s are not moved by the CUDA kernel (sub-byte elements)", mrt_dtype_name(dt));
    return false;
}

// NonZero reads any numeric input through elem_any.cuh (the opdef refused strings and complex).
bool nonzero_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *x = ctx->inputs[0];
    mrt_dtype dt = x && x->kind == MRT_VALUE_TENSOR ? x->tensor.dtype : MRT_DTYPE_UNDEFINED;
    if (dt == MRT_DTYPE_BOOL || mrt_dtype_is_integer(dt) || mrt_dtype_is_float(dt)) return true;
    snprintf(why, len, "NonZero of dtype %s is not supported by the CUDA kernel", mrt_dtype_name(dt));
    return false;
}

// ------------------------------------------------------------------ TensorScatter

struct ts_geom {
    int64_t mid, inner, seq, max_seq;
    bool circular;
};

// One thread per element of update; the positions of one batch entry are distinct (seq <= max_seq), so no two
// threads write one element.
template <typename T>
__global__ void tensor_scatter_kernel(T *y, const T *upd, const void *wi, bool i32, int64_t n, ts_geom g)
{
    MRT_CU_FOR(e, n) {
        int64_t k = e % g.inner, q = e / g.inner, s = q % g.seq, bm = q / g.seq, b = bm / g.mid;
        int64_t at = (wi ? load_index(wi, i32, b) : 0) + s;
        if (g.circular) at = ((at % g.max_seq) + g.max_seq) % g.max_seq;
        y[(bm * g.max_seq + at) * g.inner + k] = upd[e];
    }
}

mrt_status cu_tensor_scatter(mrt_op_ctx *ctx)
{
    const mrt_tensor *past = mrt_input(ctx, 0), *upd = mrt_input(ctx, 1), *wi = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", -2), past->rank, &axis));
    ts_geom g;
    g.circular = strcmp(mrt_attr_string(ctx, "mode", "linear"), "circular") == 0;
    int64_t batch = past->shape[0];
    g.mid = 1, g.inner = 1, g.max_seq = past->shape[axis], g.seq = upd->shape[axis];
    for (int d = 1; d < axis; d++) g.mid *= past->shape[d];
    for (int d = axis + 1; d < past->rank; d++) g.inner *= past->shape[d];
    if (wi) { // the CPU's checks, in its order, on a host copy of the (batch) write indices (none fails without them)
        mrt_cu_host_inputs h;
        MRT_TRY(h.load(ctx, 2));
        const mrt_tensor *hw = mrt_input(&h.ctx, 2);
        for (int64_t b = 0; b < batch; b++) {
            int64_t start = hw->dtype == MRT_DTYPE_INT32 ? ((const int32_t *)hw->data)[b] : ((const int64_t *)hw->data)[b];
            if (start > INT64_MAX - g.seq)
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "write_indices[%lld] = %lld overflows", (long long)b, (long long)start);
            if (g.circular && g.max_seq > 0) continue;
            for (int64_t s = 0; s < g.seq; s++) {
                int64_t at = start + s;
                if (at < 0 || at >= g.max_seq)
                    return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG,
                                       "batch %lld writes position %lld of a cache of %lld (write_indices %lld + %lld; linear mode)",
                                       (long long)b, (long long)at, (long long)g.max_seq, (long long)start, (long long)s);
            }
        }
    }
    MRT_TRY(mrt_cu_copy_all(ctx, y, past));
    int64_t n = mrt_tensor_numel(upd);
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(past->dtype), {
            auto *k = tensor_scatter_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, (const elem_t *)upd->data,
                       wi ? (const void *)wi->data : (const void *)NULL, wi && wi->dtype == MRT_DTYPE_INT32, n, g);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(past->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "TensorScatter kernel");
    return MRT_STATUS_OK;
}

bool movable(const mrt_op_ctx *ctx, char *why, size_t len) { return mrt_cu_movable(ctx, why, len); }

} // namespace

// The gathers write every output element; the scatters copy the data first and write every element too.
#define W MRT_KERNEL_WRITES_ALL
#define R(op, ver, fn) MRT_CU_ROW_S(op, ver, fn, movable, W)
#define RW(op, ver, fn, ws) MRT_CU_ROW_SW(op, ver, fn, movable, W, ws)
extern "C" const mrt_kernel mrt_cuda_kernels_gather[] = {
    RW("Gather", 1, cu_gather, cu_index_flag_workspace), RW("GatherElements", 11, cu_gather_elements, cu_index_flag_workspace),
    RW("GatherND", 11, cu_gather_nd, cu_gather_nd_workspace), RW("Scatter", 9, cu_scatter_elements, cu_index_flag_workspace),
    RW("ScatterElements", 11, cu_scatter_elements, cu_index_flag_workspace),
    RW("ScatterND", 11, cu_scatter_nd, cu_scatter_nd_workspace), R("Compress", 9, cu_compress),
    R("TensorScatter", 24, cu_tensor_scatter),
    MRT_CU_ROW_S("OneHot", 9, cu_one_hot, one_hot_supports, W),
    MRT_CU_ROW_S("NonZero", 9, cu_nonzero, nonzero_supports, 0),
    {0},
};
#undef R
#undef RW
#undef W
