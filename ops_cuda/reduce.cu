// ONNX reductions on CUDA: ReduceSum 1/11/13, ReduceMean/Prod/L1/L2/SumSquare 1/11/13/18, ReduceMax/Min
// 1/11/12/13/18/20, ReduceLogSum/LogSumExp 1/11/13/18/28 (axes as attribute or input, keepdims,
// noop_with_empty_axes), ArgMax/ArgMin 1/11/12/13 (keepdims, select_last_index), CumSum 11/14 (exclusive, reverse).
// The dtypes of the CPU kernels (ops_cpu/reduce.c), any rank, as it computes them: floats in double, integer
// Sum/Prod/SumSquare/L1/Max/Min exact with the type's wrapping, integer Mean/L2/LogSum/LogSumExp through double and
// saturated. Deterministic (ops_cuda/segments.cuh); float sums differ from the CPU's only in the order of additions.
// CumSum scans each line with one thread, in the CPU's order (bit-identical, but serial along the axis).
#include <cfloat>

#include "engine/opdef/reduce.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

using namespace std;

// ------------------------------------------------------------------ floating reductions (and integer Mean/L2/LogSum*)

__device__ __forceinline__ double rd_term(int kind, double v)
{
    switch (kind) {
    case MRT_REDUCE_L1: return fabs(v);
    case MRT_REDUCE_L2: case MRT_REDUCE_SUMSQ: return v * v;
    default: return v;
    }
}

template <typename T> __global__ void reduce_f64_kernel(const T *x, T *y, seg_geom g, int kind, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        double r;
        if (kind == MRT_REDUCE_MAX || kind == MRT_REDUCE_MIN || kind == MRT_REDUCE_LOGSUMEXP) {
            bool mx = kind != MRT_REDUCE_MIN;
            double m = mx ? -INFINITY : INFINITY;
            for (int64_t e = lane; e < g.count; e += step) {
                double v = ld_f64(x, base + seg_roff(g, e));
                m = mx ? op_max::apply(m, v) : op_min::apply(m, v);
            }
            r = mx ? seg_reduce<op_max>(m, block, sh) : seg_reduce<op_min>(m, block, sh);
            if (kind == MRT_REDUCE_LOGSUMEXP) { // log(sum(exp(x - max))) + max, as the CPU's two passes
                double s = 0;
                for (int64_t e = lane; e < g.count; e += step) s += exp(ld_f64(x, base + seg_roff(g, e)) - r);
                s = seg_reduce<op_add>(s, block, sh);
                if (isfinite(r)) r += log(s);
            }
        } else if (kind == MRT_REDUCE_PROD) {
            double p = 1;
            for (int64_t e = lane; e < g.count; e += step) p *= ld_f64(x, base + seg_roff(g, e));
            r = seg_reduce<op_mul>(p, block, sh);
        } else {
            double s = 0;
            for (int64_t e = lane; e < g.count; e += step) s += rd_term(kind, ld_f64(x, base + seg_roff(g, e)));
            r = seg_reduce<op_add>(s, block, sh);
            // an empty reduction falls out right: Mean 0/0 = NaN, LogSum log(0) = -inf
            if (kind == MRT_REDUCE_MEAN) r /= (double)g.count;
            else if (kind == MRT_REDUCE_L2) r = sqrt(r);
            else if (kind == MRT_REDUCE_LOGSUM) r = log(r);
        }
        if (lane == 0) st_f64(y, o, r);
    }
}

// ------------------------------------------------------------------ exact integer reductions

// Values as two's complement 64-bit words (wrapping arithmetic is the same for signed and unsigned); bool as 0/1.
template <typename T> __device__ __forceinline__ uint64_t ld_u64(const T *p, int64_t i, bool is_bool)
{
    return is_bool ? (uint64_t)(p[i] != 0) : (uint64_t)(int64_t)p[i];
}
template <> __device__ __forceinline__ uint64_t ld_u64<uint64_t>(const uint64_t *p, int64_t i, bool) { return p[i]; }

struct int_acc {
    int kind;
    bool u64; // compare as unsigned 64-bit (uint64 only: narrower types fit a signed word)
    __device__ uint64_t combine(uint64_t a, uint64_t b) const
    {
        switch (kind) {
        case MRT_REDUCE_PROD: return a * b;
        case MRT_REDUCE_MAX: return (u64 ? b > a : (int64_t)b > (int64_t)a) ? b : a;
        case MRT_REDUCE_MIN: return (u64 ? b < a : (int64_t)b < (int64_t)a) ? b : a;
        default: return a + b;
        }
    }
};

template <typename T>
__global__ void reduce_int_kernel(const T *x, T *y, seg_geom g, int kind, bool is_bool, uint64_t init, bool block)
{
    __shared__ uint64_t sh[SEG_MAX_THREADS];
    const int_acc acc = {kind, sizeof(T) == 8 && T(-1) > T(0)};
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        uint64_t a = init;
        for (int64_t e = lane; e < g.count; e += step) {
            uint64_t v = ld_u64(x, base + seg_roff(g, e), is_bool);
            if (kind == MRT_REDUCE_SUMSQ) v = v * v;
            else if (kind == MRT_REDUCE_L1 && T(-1) < T(0) && (int64_t)v < 0) v = (uint64_t)0 - v;
            a = acc.combine(a, v);
        }
        if (block) { // integer combining is exact: any tree gives the CPU's result
            int t = threadIdx.x;
            sh[t] = a;
            __syncthreads();
            for (int s = blockDim.x / 2; s > 0; s >>= 1) {
                if (t < s) sh[t] = acc.combine(sh[t], sh[t + s]);
                __syncthreads();
            }
            a = sh[0];
            __syncthreads();
        }
        if (lane == 0) y[o] = is_bool ? (T)(a != 0) : (T)a;
    }
}

// An empty integer reduction stores the kind's empty value saturated to the type (Max -> the type's minimum...).
template <typename T> __global__ void fill_f64_kernel(T *y, int64_t n, double v, bool is_bool)
{
    MRT_CU_FOR(i, n) {
        if (is_bool) y[i] = (T)(v != 0);
        else st_f64(y, i, v);
    }
}

bool exact_int_kind(int k)
{
    return k == MRT_REDUCE_SUM || k == MRT_REDUCE_PROD || k == MRT_REDUCE_SUMSQ || k == MRT_REDUCE_L1 ||
           k == MRT_REDUCE_MAX || k == MRT_REDUCE_MIN;
}

double empty_value(int kind)
{
    switch (kind) {
    case MRT_REDUCE_PROD: return 1.0;
    case MRT_REDUCE_MEAN: return NAN;
    case MRT_REDUCE_MAX: case MRT_REDUCE_LOGSUM: case MRT_REDUCE_LOGSUMEXP: return -INFINITY;
    case MRT_REDUCE_MIN: return INFINITY;
    default: return 0.0;
    }
}

// A device tensor's first n_max integers on the host (axes inputs, CumSum's axis).
mrt_status read_ints(mrt_op_ctx *ctx, const mrt_tensor *t, int64_t *vals, int64_t n_max, int64_t *n)
{
    *n = mrt_tensor_numel(t);
    if (*n > n_max)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 1 has %lld values, at most %lld allowed", (long long)*n,
                           (long long)n_max);
    if (t->dtype != MRT_DTYPE_INT64 && t->dtype != MRT_DTYPE_INT32)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 1 must be int32 or int64, got %s", mrt_dtype_name(t->dtype));
    if (*n == 0) return MRT_STATUS_OK;
    size_t nb = (size_t)*n * (t->dtype == MRT_DTYPE_INT64 ? 8 : 4);
    unsigned char buf[MRT_MAX_RANK * 8];
    cudaError_t e = cudaMemcpyAsync(buf, t->data, nb, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx));
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading input 1: %s", cudaGetErrorString(e));
    for (int64_t i = 0; i < *n; i++) vals[i] = mrt_load_i64(t->dtype, buf, i);
    return MRT_STATUS_OK;
}

// Which axes the node reduces: the opdef's parser (engine/opdef/reduce.c) run on a host copy of the axes input.
mrt_status axes_of(mrt_op_ctx *ctx, const mrt_tensor *x, bool *reduced)
{
    bool pending = false;
    const mrt_tensor *ax = mrt_input(ctx, 1);
    if (!ax || mrt_tensor_numel(ax) == 0) {
        MRT_TRY(mrt_reduce_axes(ctx, x, reduced, &pending));
    } else {
        int64_t vals[MRT_MAX_RANK], n;
        MRT_TRY(read_ints(ctx, ax, vals, x->rank, &n));
        mrt_value v = *ctx->inputs[1];
        v.tensor.dtype = MRT_DTYPE_INT64;
        v.tensor.data = vals;
        const mrt_value *ins[2] = {ctx->inputs[0], &v};
        mrt_op_ctx host = *ctx;
        host.inputs = ins;
        host.n_inputs = 2;
        MRT_TRY(mrt_reduce_axes(&host, x, reduced, &pending));
    }
    if (pending) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'axes' has no data");
    return MRT_STATUS_OK;
}

mrt_status cu_reduce(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int kind = mrt_reduce_kind_of(ctx->node->op_type);
    if (kind < 0) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "not a Reduce op");
    bool reduced[MRT_MAX_RANK];
    MRT_TRY(axes_of(ctx, x, reduced));
    seg_geom g;
    seg_init(&g, x->rank, x->shape, reduced);
    if (g.n_out == 0) return MRT_STATUS_OK;
    seg_launch l = seg_plan(g);
    bool is_bool = x->dtype == MRT_DTYPE_BOOL, done = false;
    mrt_dtype dt = is_bool ? MRT_DTYPE_UINT8 : x->dtype;
    if (!seg_float_dtype(dt) && exact_int_kind(kind)) {
        [&]() -> bool {
            SEG_SWITCH_INT(dt, {
                if (g.count == 0) {
                    double e = kind == MRT_REDUCE_MAX && is_bool ? 0.0 : empty_value(kind);
                    auto *k = fill_f64_kernel<elem_t>;
                    MRT_LAUNCH(k, mrt_cu_blocks(g.n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, g.n_out, e,
                               is_bool);
                } else {
                    bool uns = elem_t(-1) > elem_t(0) || is_bool;
                    uint64_t init = kind == MRT_REDUCE_PROD ? 1
                                    : kind == MRT_REDUCE_MAX ? (uns ? 0 : (uint64_t)INT64_MIN)
                                    : kind == MRT_REDUCE_MIN ? (dt == MRT_DTYPE_UINT64 ? UINT64_MAX : (uint64_t)INT64_MAX)
                                                             : 0;
                    auto *k = reduce_int_kernel<elem_t>;
                    MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, g, kind, is_bool,
                               init, l.block);
                }
                done = true;
            })
            return false;
        }();
    } else {
        [&]() -> bool {
            MRT_CU_SWITCH_NUMERIC(dt, {
                auto *k = reduce_f64_kernel<elem_t>;
                MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, g, kind, l.block);
                done = true;
            })
            return false;
        }();
    }
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "reduce kernel");
    return MRT_STATUS_OK;
}

bool numeric_or_bool(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: case MRT_DTYPE_INT8:
    case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16:
    case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: case MRT_DTYPE_BOOL: return true;
    default: return false;
    }
}

bool cu_reduce_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !numeric_or_bool(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

// ------------------------------------------------------------------ ArgMax / ArgMin

// Whether candidate (v, i) beats (b, j) under the CPU's sequential rule (ops_cpu/reduce.c arg_better_*): a NaN beats
// any number, then the larger (smaller) value, then on a tie the first index (the last with select_last_index).
// As a total order it gives the sequential scan's answer whatever the order of the comparisons.
template <typename C> __device__ __forceinline__ bool arg_beats(C v, int64_t i, C b, int64_t j, bool is_max, bool last)
{
    bool vn = v != v, bn = b != b;
    if (vn || bn) return vn && (!bn || (last ? i > j : i < j));
    if (v != b) return is_max ? v > b : v < b;
    return last ? i > j : i < j;
}

// Compare type: double for floats, the type itself for integers (int64/uint64 exactly).
template <typename T> struct arg_cmp { typedef T type; };
template <> struct arg_cmp<float> { typedef double type; };
template <> struct arg_cmp<mrt_cu_half> { typedef double type; };
template <> struct arg_cmp<mrt_cu_bf16> { typedef double type; };

template <typename T> __global__ void argmax_kernel(const T *x, int64_t *y, seg_geom g, bool is_max, bool last, bool block)
{
    typedef typename arg_cmp<T>::type C;
    __shared__ C shv[SEG_MAX_THREADS];
    __shared__ int64_t shi[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        C best = 0;
        int64_t bi = -1;
        for (int64_t e = lane; e < g.count; e += step) {
            C v = (C)mrt_cu_load(x, base + seg_roff(g, e));
            if (bi < 0 || arg_beats(v, e, best, bi, is_max, last)) {
                best = v;
                bi = e;
            }
        }
        if (block) {
            int t = threadIdx.x;
            shv[t] = best;
            shi[t] = bi;
            __syncthreads();
            for (int s = blockDim.x / 2; s > 0; s >>= 1) {
                if (t < s && shi[t + s] >= 0 &&
                    (shi[t] < 0 || arg_beats(shv[t + s], shi[t + s], shv[t], shi[t], is_max, last))) {
                    shv[t] = shv[t + s];
                    shi[t] = shi[t + s];
                }
                __syncthreads();
            }
            bi = shi[0];
            __syncthreads();
        }
        if (lane == 0) y[o] = bi;
    }
}

mrt_status cu_argmax(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool is_max = strcmp(ctx->node->op_type, "ArgMax") == 0;
    bool last = ctx->opset >= 12 && mrt_attr_int(ctx, "select_last_index", 0) != 0;
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    bool red[MRT_MAX_RANK] = {false};
    red[axis] = true;
    seg_geom g;
    seg_init(&g, x->rank, x->shape, red);
    if (g.n_out == 0) return MRT_STATUS_OK;
    if (g.count == 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "cannot take %s over an axis of size 0", ctx->node->op_type);
    seg_launch l = seg_plan(g);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(x->dtype, {
            auto *k = argmax_kernel<elem_t>;
            MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (int64_t *)y->data, g,
                       is_max, last, l.block);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "ArgMax/ArgMin kernel");
    return MRT_STATUS_OK;
}

// ArgMax/ArgMin and CumSum: every numeric dtype, no bool.
bool cu_numeric_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !numeric_or_bool(x->dtype) || x->dtype == MRT_DTYPE_BOOL)
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

// ------------------------------------------------------------------ CumSum

// One thread per line along the axis, summing in the CPU's order: floats in double, integers wrapping in 64 bits.
template <typename T, bool INT = seg_is_int<T>::value> struct cumsum_line {
    __device__ static void run(const T *x, T *y, int64_t base, int64_t n, int64_t inner, bool excl, bool rev)
    {
        double s = 0;
        for (int64_t t = 0; t < n; t++) {
            int64_t i = base + (rev ? n - 1 - t : t) * inner;
            double v = ld_f64(x, i);
            st_f64(y, i, excl ? s : s + v);
            s += v;
        }
    }
};
template <typename T> struct cumsum_line<T, true> {
    __device__ static void run(const T *x, T *y, int64_t base, int64_t n, int64_t inner, bool excl, bool rev)
    {
        uint64_t s = 0;
        for (int64_t t = 0; t < n; t++) {
            int64_t i = base + (rev ? n - 1 - t : t) * inner;
            uint64_t v = (uint64_t)x[i];
            y[i] = (T)(excl ? s : s + v);
            s += v;
        }
    }
};

template <typename T>
__global__ void cumsum_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool excl, bool rev)
{
    MRT_CU_FOR(line, outer * inner) cumsum_line<T>::run(x, y, (line / inner) * n * inner + line % inner, n, inner, excl, rev);
}

mrt_status cu_cumsum(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t av, na;
    MRT_TRY(read_ints(ctx, mrt_input(ctx, 1), &av, 1, &na));
    if (na != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'axis' must hold one value");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "input 'axis'", av, x->rank, &axis));
    bool excl = mrt_attr_int(ctx, "exclusive", 0) != 0, rev = mrt_attr_int(ctx, "reverse", 0) != 0;
    int64_t outer = 1, inner = 1, n = x->shape[axis];
    for (int a = 0; a < axis; a++) outer *= x->shape[a];
    for (int a = axis + 1; a < x->rank; a++) inner *= x->shape[a];
    if (outer * inner * n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(x->dtype, {
            auto *k = cumsum_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(outer * inner), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, outer, n, inner, excl, rev);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "CumSum kernel");
    return MRT_STATUS_OK;
}

} // namespace

#define W MRT_KERNEL_WRITES_ALL
#define R(op, v) MRT_CU_ROW_S(op, v, cu_reduce, cu_reduce_supports, W)
#define R4(op) R(op, 1), R(op, 11), R(op, 13), R(op, 18)
#define A(op, v) MRT_CU_ROW_S(op, v, cu_argmax, cu_numeric_supports, W)
extern "C" const mrt_kernel mrt_cuda_kernels_reduce[] = {
    R("ReduceSum", 1), R("ReduceSum", 11), R("ReduceSum", 13),
    R4("ReduceMean"), R4("ReduceProd"), R4("ReduceL1"), R4("ReduceL2"), R4("ReduceSumSquare"),
    R4("ReduceLogSum"), R("ReduceLogSum", 28),
    R4("ReduceLogSumExp"), R("ReduceLogSumExp", 28),
    R4("ReduceMax"), R("ReduceMax", 12), R("ReduceMax", 20),
    R4("ReduceMin"), R("ReduceMin", 12), R("ReduceMin", 20),
    A("ArgMax", 1), A("ArgMax", 11), A("ArgMax", 12), A("ArgMax", 13),
    A("ArgMin", 1), A("ArgMin", 11), A("ArgMin", 12), A("ArgMin", 13),
    MRT_CU_ROW_S("CumSum", 11, cu_cumsum, cu_numeric_supports, W), MRT_CU_ROW_S("CumSum", 14, cu_cumsum, cu_numeric_supports, W),
    {0},
};
#undef R
#undef R4
#undef A
#undef W
