// Segmented reductions shared by the reduce, softmax and norm families (ops_cuda/reduce.cu, softmax.cu, norm.cu).
//
// A dense tensor viewed as "kept" dims (one segment per combination: an output of a Reduce, a row of a Softmax or a
// LayerNormalization) and "reduced" dims (the elements of a segment). A kernel walks its segments in one of two
// modes, chosen on the host from the shapes alone so that a given node always sums in the same order:
//  - block mode: one block per segment, thread t takes elements t, t + blockDim.x, ... and the partial results meet
//    in a fixed shared-memory tree (seg_reduce). For segments whose elements are contiguous (reduced innermost dim).
//  - thread mode: one thread per segment, elements in index order. Neighbouring threads hold neighbouring segments, so
//    a strided reduction (kept innermost dim) still reads coalesced.
// No atomics: two runs give the same bits. Every statistic is accumulated in double, as the CPU kernels do
// (ops_cpu/reduce.c); only the order of the additions differs from the CPU's (a tree of up to 256 partial sums here,
// four or eight running partial sums there), which moves float32 results by an ulp or so, double ones by a few ulps.
#pragma once

#include <cmath>

#include "ops_cuda/cuda_common.cuh"

namespace {

// Threads of a block-mode launch: at most this many (the shared-memory arrays are sized for it).
const int SEG_MAX_THREADS = 256;

struct seg_geom {
    int nk, nr;                                    // merged kept / reduced dims
    int64_t kdim[MRT_MAX_RANK], kstr[MRT_MAX_RANK]; // kept dims and their element strides in the input
    int64_t rdim[MRT_MAX_RANK], rstr[MRT_MAX_RANK]; // reduced dims, likewise
    int64_t n_out, count;                          // segments, elements per segment
    bool rows;                                     // the innermost dim is reduced: segments are contiguous runs
};

// Dims of size 1 dropped, neighbours of the same kind merged (a dense tensor's neighbouring dims always merge), so
// that most segments need one multiply per element offset. Segment o's kept index is row-major over the kept dims, the
// order of a Reduce output (keepdims only inserts 1s).
static inline void seg_init(seg_geom *g, int rank, const int64_t *shape, const bool *red)
{
    int n = 0;
    int64_t dim[MRT_MAX_RANK], str[MRT_MAX_RANK];
    bool kind[MRT_MAX_RANK];
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) { // innermost first, so a merged dim keeps its inner stride
        if (shape[a] != 1) {
            if (n > 0 && kind[n - 1] == red[a]) {
                dim[n - 1] *= shape[a];
            } else {
                dim[n] = shape[a];
                str[n] = s;
                kind[n] = red[a];
                n++;
            }
        }
        s *= shape[a];
    }
    memset(g, 0, sizeof *g);
    g->n_out = g->count = 1;
    for (int i = n - 1; i >= 0; i--) { // back to outermost first
        if (kind[i]) {
            g->rdim[g->nr] = dim[i];
            g->rstr[g->nr++] = str[i];
            g->count *= dim[i];
        } else {
            g->kdim[g->nk] = dim[i];
            g->kstr[g->nk++] = str[i];
            g->n_out *= dim[i];
        }
    }
    g->rows = n > 0 && kind[0];
}

__device__ __forceinline__ int64_t seg_kbase(const seg_geom &g, int64_t o)
{
    int64_t off = 0;
    for (int d = g.nk - 1; d >= 0; d--) {
        off += (o % g.kdim[d]) * g.kstr[d];
        o /= g.kdim[d];
    }
    return off;
}

__device__ __forceinline__ int64_t seg_roff(const seg_geom &g, int64_t r)
{
    if (g.nr == 1) return r * g.rstr[0];
    int64_t off = 0;
    for (int d = g.nr - 1; d >= 0; d--) {
        off += (r % g.rdim[d]) * g.rstr[d];
        r /= g.rdim[d];
    }
    return off;
}

// The segment loop. Inside: `o` the segment, `lane`/`step` the element stride of this thread (0/1 in thread mode).
// Every thread of a block runs the same iterations in block mode, so seg_reduce's barriers are reached by all.
#define SEG_FOR(g, block, o, lane, step)                                                                          \
    const int64_t lane = (block) ? (int64_t)threadIdx.x : 0, step = (block) ? (int64_t)blockDim.x : 1;           \
    for (int64_t o = (block) ? (int64_t)blockIdx.x : (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < (g).n_out; \
         o += (block) ? (int64_t)gridDim.x : (int64_t)gridDim.x * blockDim.x)

// Launch shape for a segmented kernel: block mode for contiguous segments of 32 elements or more, and for few long
// strided segments (otherwise a handful of threads would do all the work); thread mode for the rest.
struct seg_launch {
    bool block;
    unsigned grid, threads;
};

static inline seg_launch seg_plan(const seg_geom &g)
{
    seg_launch l;
    l.block = (g.rows && g.count >= 32) || (g.n_out < 512 && g.count >= 1024);
    if (l.block) {
        unsigned t = 32;
        while ((int64_t)t < g.count && t < (unsigned)SEG_MAX_THREADS) t *= 2;
        l.threads = t;
        l.grid = (unsigned)(g.n_out < 65535 ? g.n_out : 65535);
    } else {
        l.threads = MRT_CU_THREADS;
        l.grid = mrt_cu_blocks(g.n_out);
    }
    if (l.grid < 1) l.grid = 1;
    return l;
}

// Combining operators for seg_reduce. Max/min propagate NaN as numpy (and the CPU kernels) do: once a NaN is in, the
// result is NaN whatever the order.
struct op_add {
    __device__ static double apply(double a, double b) { return a + b; }
};
struct op_mul {
    __device__ static double apply(double a, double b) { return a * b; }
};
struct op_max {
    __device__ static double apply(double a, double b) { return (b > a || b != b) ? b : a; }
};
struct op_min {
    __device__ static double apply(double a, double b) { return (b < a || b != b) ? b : a; }
};

// The block's values combined by a fixed tree (blockDim.x a power of two <= SEG_MAX_THREADS); every thread gets the
// result. In thread mode the thread's own value is the result.
template <typename OP> __device__ __forceinline__ double seg_reduce(double v, bool block, double *sh)
{
    if (!block) return v;
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] = OP::apply(sh[t], sh[t + s]);
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads(); // sh is reused by the next call
    return r;
}

// Element loads and stores through double, as the CPU's mrt_cpu_load_f64 / mrt_cpu_store_f64: floats round to
// nearest (float16/bfloat16 through float), integers saturate (NaN -> 0).
template <typename T> __device__ __forceinline__ double ld_f64(const T *p, int64_t i) { return (double)mrt_cu_load(p, i); }

template <typename T> struct int_limits;
#define SEG_LIMITS(T, LO, HI)                                                                                     \
    template <> struct int_limits<T> {                                                                            \
        __device__ static double lo() { return (double)(LO); }                                                    \
        __device__ static double hi() { return (double)(HI); }                                                    \
        __device__ static T min() { return (LO); }                                                                \
        __device__ static T max() { return (HI); }                                                                \
    };
SEG_LIMITS(int8_t, INT8_MIN, INT8_MAX)
SEG_LIMITS(int16_t, INT16_MIN, INT16_MAX)
SEG_LIMITS(int32_t, INT32_MIN, INT32_MAX)
SEG_LIMITS(int64_t, INT64_MIN, INT64_MAX)
SEG_LIMITS(uint8_t, 0, UINT8_MAX)
SEG_LIMITS(uint16_t, 0, UINT16_MAX)
SEG_LIMITS(uint32_t, 0, UINT32_MAX)
SEG_LIMITS(uint64_t, 0, UINT64_MAX)
#undef SEG_LIMITS

template <typename T> struct seg_is_int { static const bool value = false; };
#define SEG_INT(T) template <> struct seg_is_int<T> { static const bool value = true; };
SEG_INT(int8_t) SEG_INT(int16_t) SEG_INT(int32_t) SEG_INT(int64_t)
SEG_INT(uint8_t) SEG_INT(uint16_t) SEG_INT(uint32_t) SEG_INT(uint64_t)
#undef SEG_INT

template <typename T, bool INT = seg_is_int<T>::value> struct st_f64_impl {
    __device__ static void at(T *p, int64_t i, double v) { mrt_cu_store(p, i, (typename mrt_cu_compute<T>::type)v); }
};
template <typename T> struct st_f64_impl<T, true> {
    __device__ static void at(T *p, int64_t i, double v)
    {
        p[i] = v != v ? (T)0 : v <= int_limits<T>::lo() ? int_limits<T>::min()
                             : v >= int_limits<T>::hi() ? int_limits<T>::max() : (T)v;
    }
};
template <typename T> __device__ __forceinline__ void st_f64(T *p, int64_t i, double v) { st_f64_impl<T>::at(p, i, v); }

// Float tensors whose dtype is known only at run time (a normalization's parameters and statistics, which may differ
// from X's dtype from BatchNormalization-14 and in RMSNormalization): the branch is the same for every thread.
__device__ __forceinline__ double ld_any(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: return ((const double *)p)[i];
    case MRT_DTYPE_FLOAT16: return (double)mrt_cu_f16_to_f32(((const uint16_t *)p)[i]);
    case MRT_DTYPE_BFLOAT16: return (double)mrt_cu_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return (double)((const float *)p)[i];
    }
}

__device__ __forceinline__ void st_any(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
    case MRT_DTYPE_FLOAT16: ((uint16_t *)p)[i] = mrt_cu_f32_to_f16((float)v); break;
    case MRT_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = mrt_cu_f32_to_bf16((float)v); break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

// MRT_CU_SWITCH_NUMERIC's integer half: kernels that only make sense on integers.
#define SEG_SWITCH_INT(dtype, ...)                                                                                \
    switch (dtype) {                                                                                              \
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

static inline bool seg_float_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

} // namespace
