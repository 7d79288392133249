// Shared by the CUDA vision and signal families: element loads and stores by run-time dtype, with the CPU's
// conversions (mrt_load_f64 / mrt_store_f64 of engine/dtype.c), for kernels that, like their CPU twins, compute in
// double whatever the tensors' types. Float types and the 8- to 64-bit integers; the rest stays on the CPU.
#pragma once

#include "ops_cuda/cuda_common.cuh"

static inline bool mrt_cu_any_dtype_ok(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16:
    case MRT_DTYPE_INT8: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64:
    case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: return true;
    default: return false;
    }
}

__host__ __device__ __forceinline__ int64_t mrt_cu_f64_to_i64_sat(double v)
{
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

__device__ __forceinline__ double mrt_cu_ld(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: return ((const float *)p)[i];
    case MRT_DTYPE_DOUBLE: return ((const double *)p)[i];
    case MRT_DTYPE_FLOAT16: return mrt_cu_f16_to_f32(((const uint16_t *)p)[i]);
    case MRT_DTYPE_BFLOAT16: return mrt_cu_bf16_to_f32(((const uint16_t *)p)[i]);
    case MRT_DTYPE_INT8: return ((const int8_t *)p)[i];
    case MRT_DTYPE_INT16: return ((const int16_t *)p)[i];
    case MRT_DTYPE_INT32: return ((const int32_t *)p)[i];
    case MRT_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case MRT_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case MRT_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case MRT_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case MRT_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

__device__ __forceinline__ void mrt_cu_st(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: ((float *)p)[i] = (float)v; return;
    case MRT_DTYPE_DOUBLE: ((double *)p)[i] = v; return;
    case MRT_DTYPE_FLOAT16: ((uint16_t *)p)[i] = mrt_cu_f32_to_f16((float)v); return;
    case MRT_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = mrt_cu_f32_to_bf16((float)v); return;
    case MRT_DTYPE_UINT64:
        ((uint64_t *)p)[i] = !(v > 0) ? 0 : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
        return;
    default: break;
    }
    int64_t s = mrt_cu_f64_to_i64_sat(v);
    switch (dt) {
    case MRT_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)s; return;
    case MRT_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)s; return;
    case MRT_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)s; return;
    case MRT_DTYPE_INT64: ((int64_t *)p)[i] = s; return;
    case MRT_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)s; return;
    case MRT_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)s; return;
    case MRT_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)s; return;
    default: return;
    }
}

// v as a store of dtype dt then a load would give it back (a sum kept in the output's precision, as the CPU's
// read-add-store loops do).
__device__ __forceinline__ double mrt_cu_round_to(int dt, double v)
{
    union { double d; float f; uint64_t u; int64_t s; uint32_t u32; int32_t s32; uint16_t u16; int16_t s16; uint8_t u8; int8_t s8; } b;
    mrt_cu_st(dt, &b, 0, v);
    return mrt_cu_ld(dt, &b, 0);
}
