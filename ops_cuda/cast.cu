// ONNX Cast 1-25 and CastLike 15-25 on CUDA, as ops_cpu/cast.c, between every pair of bool, the integer types
// (int4/uint4/int2/uint2 packed), float, double, float16, bfloat16, the float8 types ('saturate'), float8e8m0
// ('round_mode') and float4e2m1, bit for bit: float -> int truncates toward zero, saturating to int64 before wrapping
// to the destination (uint64 saturates on its own range; sub-byte integers take 0 for NaN/inf); float32 ->
// float16/bfloat16 through the engine's conversions, the other float sources from double in one rounding. Complex and
// strings stay on the CPU (supports says why).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/elem_any.cuh"
#include "ops_cuda/movement.cuh"

namespace {

using namespace std;

bool castable(mrt_dtype dt)
{
    return dt != MRT_DTYPE_STRING && dt != MRT_DTYPE_COMPLEX64 && dt != MRT_DTYPE_COMPLEX128 &&
           (dt == MRT_DTYPE_BOOL || mrt_dtype_is_integer(dt) || mrt_dtype_is_float(dt));
}

struct cast_opts {
    bool saturate;
    int round_mode; // 0 up, 1 down, 2 nearest
};

__device__ __forceinline__ int64_t f2i(double v)
{
    if (isnan(v) || v <= -9.2233720368547758e18) return INT64_MIN;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    return (int64_t)v;
}

__device__ __forceinline__ uint64_t f2u(double v)
{
    if (!isnan(v) && v >= 9.2233720368547758e18) return v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
    return (uint64_t)f2i(v);
}

// The destination's bits for a floating value (ops_cpu/cast.c store_float); integers keep their low bits, the store
// truncates them to the width.
__device__ uint64_t float_code(int dt, double v, const cast_opts &o)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    case MRT_DTYPE_DOUBLE: {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    case MRT_DTYPE_BOOL: return v != 0;
    case MRT_DTYPE_UINT64: return f2u(v);
    case MRT_DTYPE_FLOAT8E8M0: return cast_encode_e8m0(v, o.saturate, o.round_mode);
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2:
        return isfinite(v) ? (uint64_t)f2i(v) : 0;
    case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: case MRT_DTYPE_FLOAT4E2M1:
        return cast_encode(minifloat_of(dt), v, false);
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return cast_encode(minifloat_of(dt), v, o.saturate);
    default: return (uint64_t)f2i(v);
    }
}

// Element i of x as dt's bits (ops_cpu/cast.c cast_tensor: integer sources through store_int, float sources through
// store_float; float32 -> float16/bfloat16 by the engine's conversions, which keep a NaN's payload).
__device__ __forceinline__ uint64_t cast_code(int sdt, const void *x, int64_t i, int ddt, const cast_opts &o)
{
    if (sdt == MRT_DTYPE_FLOAT && ddt == MRT_DTYPE_FLOAT16) return mrt_cu_f32_to_f16(((const float *)x)[i]);
    if (sdt == MRT_DTYPE_FLOAT && ddt == MRT_DTYPE_BFLOAT16) return mrt_cu_f32_to_bf16(((const float *)x)[i]);
    bool sint = sdt == MRT_DTYPE_BOOL || (sdt != MRT_DTYPE_FLOAT && sdt != MRT_DTYPE_DOUBLE && sdt != MRT_DTYPE_FLOAT16 &&
                                          sdt != MRT_DTYPE_BFLOAT16 && sdt != MRT_DTYPE_FLOAT8E4M3FN &&
                                          sdt != MRT_DTYPE_FLOAT8E4M3FNUZ && sdt != MRT_DTYPE_FLOAT8E5M2 &&
                                          sdt != MRT_DTYPE_FLOAT8E5M2FNUZ && sdt != MRT_DTYPE_FLOAT8E8M0 &&
                                          sdt != MRT_DTYPE_FLOAT4E2M1);
    if (!sint) return float_code(ddt, q_ld(sdt, x, i), o);
    int64_t v = q_ldi(sdt, x, i);
    bool u64 = sdt == MRT_DTYPE_UINT64;
    switch (ddt) {
    case MRT_DTYPE_BOOL: return v != 0;
    case MRT_DTYPE_UINT8: case MRT_DTYPE_INT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_INT16: case MRT_DTYPE_UINT32:
    case MRT_DTYPE_INT32: case MRT_DTYPE_UINT64: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4:
    case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2: return (uint64_t)v;
    case MRT_DTYPE_FLOAT: { // one rounding from the integer, as the CPU's (float)v
        float f = u64 ? (float)(uint64_t)v : (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    default: return float_code(ddt, u64 ? (double)(uint64_t)v : (double)v, o);
    }
}

// Whole-byte destinations: one element per thread. The dtypes are uniform over the grid, so the switches do not
// diverge.
__global__ void cast_kernel(const void *x, int sdt, void *y, int ddt, int bytes, int64_t n, cast_opts o)
{
    MRT_CU_FOR(i, n) {
        uint64_t c = cast_code(sdt, x, i, ddt, o);
        switch (bytes) {
        case 1: ((uint8_t *)y)[i] = (uint8_t)c; break;
        case 2: ((uint16_t *)y)[i] = (uint16_t)c; break;
        case 4: ((uint32_t *)y)[i] = (uint32_t)c; break;
        default: ((uint64_t *)y)[i] = c; break;
        }
    }
}

// Packed destinations (4 or 2 bits): one byte per thread, so no two threads share a byte; bits past the last element
// are zero.
__global__ void cast_packed_kernel(const void *x, int sdt, uint8_t *y, int ddt, int bits, int64_t n, cast_opts o)
{
    int per = 8 / bits;
    int64_t nbytes = (n + per - 1) / per;
    unsigned mask = (1u << bits) - 1;
    MRT_CU_FOR(b, nbytes) {
        unsigned byte = 0;
        for (int k = 0; k < per && b * per + k < n; k++)
            byte |= ((unsigned)cast_code(sdt, x, b * per + k, ddt, o) & mask) << (k * bits);
        y[b] = (uint8_t)byte;
    }
}

mrt_status cu_cast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    if (x->dtype == y->dtype) return mrt_cu_copy_all(ctx, y, x);
    cast_opts o;
    o.saturate = ctx->opset < 19 || mrt_attr_int(ctx, "saturate", 1) != 0;
    const char *rm = ctx->opset >= 24 ? mrt_attr_string(ctx, "round_mode", "up") : "up";
    o.round_mode = strcmp(rm, "down") == 0 ? 1 : strcmp(rm, "nearest") == 0 ? 2 : 0;
    int bits = mrt_dtype_bits(y->dtype);
    if (bits < 8) {
        int64_t nbytes = (n + 8 / bits - 1) / (8 / bits);
        MRT_LAUNCH(cast_packed_kernel, mrt_cu_blocks(nbytes), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data,
                   (int)x->dtype, (uint8_t *)y->data, (int)y->dtype, bits, n, o);
    } else {
        MRT_LAUNCH(cast_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data, (int)x->dtype,
                   y->data, (int)y->dtype, bits / 8, n, o);
    }
    MRT_CU_CHECK_LAUNCH(ctx, "Cast kernel");
    return MRT_STATUS_OK;
}

bool cast_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *x = ctx->inputs[0], *y = ctx->outputs[0];
    mrt_dtype s = x ? x->tensor.dtype : MRT_DTYPE_UNDEFINED, d = y ? y->tensor.dtype : MRT_DTYPE_UNDEFINED;
    if (castable(s) && castable(d)) return true;
    snprintf(why, len, "Cast from %s to %s is not supported by the CUDA kernel (complex and strings run on the CPU)",
             mrt_dtype_name(s), mrt_dtype_name(d));
    return false;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_cast[] = {
    MRT_CU_ROW_S("Cast", 1, cu_cast, cast_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("CastLike", 15, cu_cast, cast_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
