// ONNX Cast 1-25 and CastLike 15-25 on CUDA, as ops_cpu/cast.c, between every pair of bool, the integer types,
// float, double, float16 and bfloat16: float -> int truncates toward zero, saturating to int64 before wrapping to the
// destination (uint64 saturates on its own range); float -> float16/bfloat16 rounds to nearest even bit-exactly as the
// CPU (float32 sources through the engine's float conversions, the others from double in one rounding). float8,
// float4, int4/uint4/int2/uint2, complex and strings stay on the CPU (supports says why).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

namespace {

using namespace std;

bool castable(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_BOOL: case MRT_DTYPE_UINT8: case MRT_DTYPE_INT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_INT16:
    case MRT_DTYPE_UINT32: case MRT_DTYPE_INT32: case MRT_DTYPE_UINT64: case MRT_DTYPE_INT64: case MRT_DTYPE_FLOAT:
    case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: return true;
    default: return false;
    }
}

__device__ __forceinline__ bool is_float_dt(int dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

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

// float16 (5, 10, 15) / bfloat16 (8, 7, 127) bits of v, rounded to nearest even from double; overflow -> inf
// (ops_cpu/cast.c small_float_encode for the IEEE kinds, without saturation).
__device__ unsigned encode_ieee(double v, int exp_bits, int man_bits, int bias)
{
    int width = 1 + exp_bits + man_bits;
    unsigned sign = signbit(v) ? 1u << (width - 1) : 0u, top = (1u << exp_bits) - 1, inf = top << man_bits;
    double maxv = ldexp(2.0 - ldexp(1.0, -man_bits), (int)top - 1 - bias);
    if (isnan(v)) return sign | inf | (1u << (man_bits - 1));
    double a = fabs(v);
    int e;
    if (isinf(a) || a > maxv) {
        if (!isinf(a)) { // may still round down to the largest value
            frexp(a, &e);
            double q = ldexp(1.0, e - 1 - man_bits);
            if (rint(a / q) * q <= maxv) a = rint(a / q) * q;
        }
        if (isinf(a) || a > maxv) return sign | inf;
    }
    int emin = 1 - bias;
    if (a == 0) return sign;
    frexp(a, &e);
    e -= 1; // a = m * 2^e with m in [1, 2)
    if (e < emin) e = emin;
    double q = ldexp(1.0, e - man_bits), r = rint(a / q) * q;
    if (r == 0) return sign;
    frexp(r, &e);
    e -= 1;
    unsigned code;
    if (e < emin) {
        code = (unsigned)(r / ldexp(1.0, emin - man_bits));
    } else {
        unsigned man = (unsigned)(r / ldexp(1.0, e - man_bits)) - (1u << man_bits);
        code = ((unsigned)(e + bias) << man_bits) | man;
    }
    return sign | code;
}

// Element i of a source: integers (bool included) as int64 bits, floats as double.
__device__ __forceinline__ void load_value(int dt, const void *p, int64_t i, int64_t *iv, double *fv)
{
    switch (dt) {
    case MRT_DTYPE_BOOL: *iv = ((const uint8_t *)p)[i] != 0; return;
    case MRT_DTYPE_UINT8: *iv = ((const uint8_t *)p)[i]; return;
    case MRT_DTYPE_INT8: *iv = ((const int8_t *)p)[i]; return;
    case MRT_DTYPE_UINT16: *iv = ((const uint16_t *)p)[i]; return;
    case MRT_DTYPE_INT16: *iv = ((const int16_t *)p)[i]; return;
    case MRT_DTYPE_UINT32: *iv = ((const uint32_t *)p)[i]; return;
    case MRT_DTYPE_INT32: *iv = ((const int32_t *)p)[i]; return;
    case MRT_DTYPE_UINT64: *iv = (int64_t)((const uint64_t *)p)[i]; return;
    case MRT_DTYPE_INT64: *iv = ((const int64_t *)p)[i]; return;
    case MRT_DTYPE_FLOAT: *fv = ((const float *)p)[i]; return;
    case MRT_DTYPE_DOUBLE: *fv = ((const double *)p)[i]; return;
    case MRT_DTYPE_FLOAT16: *fv = mrt_cu_f16_to_f32(((const uint16_t *)p)[i]); return;
    case MRT_DTYPE_BFLOAT16: *fv = mrt_cu_bf16_to_f32(((const uint16_t *)p)[i]); return;
    default: return;
    }
}

// An integer into an integer type: C's conversion (wrapping).
__device__ __forceinline__ void store_int_bits(int dt, void *p, int64_t i, int64_t v)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; return;
    case MRT_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; return;
    case MRT_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; return;
    case MRT_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; return;
    case MRT_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; return;
    case MRT_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; return;
    case MRT_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; return;
    case MRT_DTYPE_INT64: ((int64_t *)p)[i] = v; return;
    default: return;
    }
}

// The dtypes are uniform over the grid, so the switches do not diverge.
__global__ void cast_kernel(const void *x, int sdt, void *y, int ddt, int64_t n)
{
    MRT_CU_FOR(i, n) {
        int64_t iv = 0;
        double fv = 0;
        load_value(sdt, x, i, &iv, &fv);
        bool sf = is_float_dt(sdt);
        if (ddt == MRT_DTYPE_BOOL) {
            ((uint8_t *)y)[i] = sf ? fv != 0 : iv != 0;
        } else if (!sf) { // from an integer (or bool)
            bool u64 = sdt == MRT_DTYPE_UINT64;
            switch (ddt) {
            case MRT_DTYPE_FLOAT: ((float *)y)[i] = u64 ? (float)(uint64_t)iv : (float)iv; break;
            case MRT_DTYPE_DOUBLE: ((double *)y)[i] = u64 ? (double)(uint64_t)iv : (double)iv; break;
            case MRT_DTYPE_FLOAT16:
                ((uint16_t *)y)[i] = (uint16_t)encode_ieee(u64 ? (double)(uint64_t)iv : (double)iv, 5, 10, 15);
                break;
            case MRT_DTYPE_BFLOAT16:
                ((uint16_t *)y)[i] = (uint16_t)encode_ieee(u64 ? (double)(uint64_t)iv : (double)iv, 8, 7, 127);
                break;
            default: store_int_bits(ddt, y, i, iv); break;
            }
        } else { // from a float
            switch (ddt) {
            case MRT_DTYPE_FLOAT: ((float *)y)[i] = (float)fv; break;
            case MRT_DTYPE_DOUBLE: ((double *)y)[i] = fv; break;
            case MRT_DTYPE_FLOAT16:
                ((uint16_t *)y)[i] = sdt == MRT_DTYPE_FLOAT ? mrt_cu_f32_to_f16((float)fv) : (uint16_t)encode_ieee(fv, 5, 10, 15);
                break;
            case MRT_DTYPE_BFLOAT16:
                ((uint16_t *)y)[i] = sdt == MRT_DTYPE_FLOAT ? mrt_cu_f32_to_bf16((float)fv) : (uint16_t)encode_ieee(fv, 8, 7, 127);
                break;
            case MRT_DTYPE_UINT64: ((uint64_t *)y)[i] = f2u(fv); break;
            default: store_int_bits(ddt, y, i, f2i(fv)); break;
            }
        }
    }
}

mrt_status cu_cast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    if (x->dtype == y->dtype) return mrt_cu_copy_all(ctx, y, x);
    MRT_LAUNCH(cast_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data, (int)x->dtype,
               y->data, (int)y->dtype, n);
    MRT_CU_CHECK_LAUNCH(ctx, "Cast kernel");
    return MRT_STATUS_OK;
}

bool cast_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *x = ctx->inputs[0], *y = ctx->outputs[0];
    mrt_dtype s = x ? x->tensor.dtype : MRT_DTYPE_UNDEFINED, d = y ? y->tensor.dtype : MRT_DTYPE_UNDEFINED;
    if (castable(s) && castable(d)) return true;
    snprintf(why, len, "Cast from %s to %s is not supported by the CUDA kernel (float8, float4, 2/4-bit integers, "
                       "complex and strings run on the CPU)",
             mrt_dtype_name(s), mrt_dtype_name(d));
    return false;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_cast[] = {
    MRT_CU_ROW_S("Cast", 1, cu_cast, cast_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW_S("CastLike", 15, cu_cast, cast_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
