// Shared by the CUDA module's .cu files (both builds: nvcc for a GPU, the host compiler for the emulated module).
//
// A kernel row's run gets an mrt_op_ctx whose tensors hold device pointers, ctx->stream (its cudaStream_t) and a
// device workspace (mrt_workspace). It launches with MRT_LAUNCH (ops_cuda/cuda_compat.cuh), never with <<<...>>>,
// then calls MRT_CU_CHECK_LAUNCH so that a bad configuration fails the node by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "ops_cuda/cuda_compat.cuh"

#include "engine/op.h"
#include "engine/registry.h"

// Evaluate a CUDA runtime call in the module's api functions; on failure write "<what>: <error>" to err, return 1.
#define MRT_CUDA_TRY(call, what)                                                                                  \
    do {                                                                                                          \
        cudaError_t mrt_e_ = (call);                                                                              \
        if (mrt_e_ != cudaSuccess) {                                                                              \
            if (err && err_len)                                                                                   \
                snprintf(err, err_len, "%s: %s (%s)", (what), cudaGetErrorString(mrt_e_), cudaGetErrorName(mrt_e_)); \
            return 1;                                                                                             \
        }                                                                                                         \
    } while (0)

// In a kernel row's run, after its launches: a launch error fails the node, naming the kernel.
#define MRT_CU_CHECK_LAUNCH(ctx, what)                                                                            \
    do {                                                                                                          \
        cudaError_t mrt_e_ = cudaPeekAtLastError();                                                               \
        if (mrt_e_ != cudaSuccess)                                                                                \
            return mrt_op_fail((ctx), MRT_STATUS_DEVICE_ERROR, "%s: %s (%s)", (what), cudaGetErrorString(mrt_e_), \
                               cudaGetErrorName(mrt_e_));                                                         \
    } while (0)

static inline cudaStream_t mrt_cu_stream(const mrt_op_ctx *ctx) { return (cudaStream_t)ctx->stream; }

// Blocks of 256 threads covering n elements with a grid-stride loop (capped: each thread then takes several).
static const int MRT_CU_THREADS = 256;
static inline unsigned mrt_cu_blocks(int64_t n)
{
    int64_t b = (n + MRT_CU_THREADS - 1) / MRT_CU_THREADS;
    if (b < 1) b = 1;
    if (b > 65535) b = 65535;
    return (unsigned)b;
}

// The grid-stride loop every element-wise kernel uses.
#define MRT_CU_FOR(i, n)                                                                                          \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// float16 / bfloat16 <-> float, bit-exact with engine/dtype.c (round to nearest even), on both compilers.
__host__ __device__ __forceinline__ float mrt_cu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

__host__ __device__ __forceinline__ uint16_t mrt_cu_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu)); // NaN stays NaN
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                      // overflow -> inf
    if (absx < 0x38800000u) {                                                        // subnormal or zero
        if (absx < 0x33000000u) return (uint16_t)sign;
        uint32_t e = absx >> 23, man = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e, half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = ((absx >> 13) - (112u << 10)), rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

__host__ __device__ __forceinline__ float mrt_cu_bf16_to_f32(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

__host__ __device__ __forceinline__ uint16_t mrt_cu_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

// Storage types for the 16-bit floats, so templates can tell them from uint16.
struct mrt_cu_half { uint16_t bits; };
struct mrt_cu_bf16 { uint16_t bits; };

// Element load/store as the compute type: float16/bfloat16 compute in float, every other type as itself.
template <typename T> struct mrt_cu_compute { typedef T type; };
template <> struct mrt_cu_compute<mrt_cu_half> { typedef float type; };
template <> struct mrt_cu_compute<mrt_cu_bf16> { typedef float type; };

template <typename T> __host__ __device__ __forceinline__ typename mrt_cu_compute<T>::type mrt_cu_load(const T *p, int64_t i)
{
    return p[i];
}
template <> __host__ __device__ __forceinline__ float mrt_cu_load<mrt_cu_half>(const mrt_cu_half *p, int64_t i)
{
    return mrt_cu_f16_to_f32(p[i].bits);
}
template <> __host__ __device__ __forceinline__ float mrt_cu_load<mrt_cu_bf16>(const mrt_cu_bf16 *p, int64_t i)
{
    return mrt_cu_bf16_to_f32(p[i].bits);
}
template <typename T, typename C> __host__ __device__ __forceinline__ void mrt_cu_store(T *p, int64_t i, C v) { p[i] = (T)v; }
template <> __host__ __device__ __forceinline__ void mrt_cu_store<mrt_cu_half, float>(mrt_cu_half *p, int64_t i, float v)
{
    p[i].bits = mrt_cu_f32_to_f16(v);
}
template <> __host__ __device__ __forceinline__ void mrt_cu_store<mrt_cu_bf16, float>(mrt_cu_bf16 *p, int64_t i, float v)
{
    p[i].bits = mrt_cu_f32_to_bf16(v);
}

// Call F::template run<T>(args...) for the C type of an ONNX dtype; false when the dtype is none of the numeric ones.
#define MRT_CU_DISPATCH_CASE(DT, T, ...)                                                                          \
    case DT: {                                                                                                    \
        typedef T elem_t;                                                                                         \
        __VA_ARGS__;                                                                                              \
        return true;                                                                                              \
    }

// The body sees `elem_t`. Every numeric dtype (and bool as uint8-sized bool).
#define MRT_CU_SWITCH_NUMERIC(dtype, ...)                                                                         \
    switch (dtype) {                                                                                              \
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

#define MRT_CU_SWITCH_INT(dtype, ...)                                                                             \
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

#define MRT_CU_SWITCH_FLOAT(dtype, ...)                                                                           \
    switch (dtype) {                                                                                              \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT, float, __VA_ARGS__)                                                 \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_DOUBLE, double, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT16, mrt_cu_half, __VA_ARGS__)                                         \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_BFLOAT16, mrt_cu_bf16, __VA_ARGS__)                                        \
    default: break;                                                                                               \
    }

// Byte-moving kernels (Transpose, Concat, Slice, Gather...) need only the element width.
#define MRT_CU_SWITCH_BYTES(bytes, ...)                                                                           \
    switch (bytes) {                                                                                              \
        MRT_CU_DISPATCH_CASE(1, uint8_t, __VA_ARGS__)                                                             \
        MRT_CU_DISPATCH_CASE(2, uint16_t, __VA_ARGS__)                                                            \
        MRT_CU_DISPATCH_CASE(4, uint32_t, __VA_ARGS__)                                                            \
        MRT_CU_DISPATCH_CASE(8, uint64_t, __VA_ARGS__)                                                            \
    default: break;                                                                                               \
    }

// An output position's offsets into broadcast inputs: for each output dim, the input's element stride (0 where the
// input has size 1 and is broadcast). Passed to kernels by value.
struct mrt_cu_bcast {
    int rank;
    int64_t out_dims[MRT_MAX_RANK];
    int64_t stride[3][MRT_MAX_RANK]; // up to three inputs (Where)
};

__host__ __device__ __forceinline__ void mrt_cu_bcast_offsets(const mrt_cu_bcast &b, int64_t i, int n_in, int64_t *off)
{
    for (int k = 0; k < n_in; k++) off[k] = 0;
    for (int d = b.rank - 1; d >= 0; d--) {
        int64_t c = i % b.out_dims[d];
        i /= b.out_dims[d];
        for (int k = 0; k < n_in; k++) off[k] += c * b.stride[k][d];
    }
}

// Fill b for n_in inputs broadcast to `out` (numpy rules, shapes right-aligned; infer has checked compatibility).
static inline void mrt_cu_bcast_init(mrt_cu_bcast *b, const mrt_tensor *out, int n_in, const mrt_tensor *const *in)
{
    memset(b, 0, sizeof *b);
    b->rank = out->rank;
    for (int d = 0; d < out->rank; d++) b->out_dims[d] = out->shape[d];
    for (int k = 0; k < n_in; k++) {
        int64_t s = 1;
        for (int d = out->rank - 1; d >= 0; d--) {
            int id = d - (out->rank - in[k]->rank);
            int64_t dim = id >= 0 ? in[k]->shape[id] : 1;
            b->stride[k][d] = dim == 1 ? 0 : s;
            s *= dim;
        }
    }
}

// Kernel rows. As in the CPU table, a node takes the row with the highest since_version <= its opset, and a row serves
// every version up to the op's next row: one row where the op's versions differ only in dtypes, a new row (or an
// opset check inside run, as the CPU kernel does) where the semantics change.
#define MRT_CU_ROW(op, ver, fn, flags) {"", op, ver, fn, NULL, NULL, NULL, flags}
#define MRT_CU_ROW_S(op, ver, fn, supports, flags) {"", op, ver, fn, supports, NULL, NULL, flags}
// ... with a workspace hook (engine/registry.h): the device scratch its run fetches, laid out by the plan
#define MRT_CU_ROW_SW(op, ver, fn, supports, flags, workspace) {"", op, ver, fn, supports, NULL, NULL, flags, workspace}
