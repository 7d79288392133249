// Element loads and stores for a dtype known only at run time: device ports of engine/dtype.c's mrt_load_f64,
// mrt_load_i64, mrt_store_f64, mrt_store_i64 and mrt_round_to, bit for bit (float16/bfloat16 through float, float8 and
// float4 by the same nearest-code search, packed 4- and 2-bit integers, saturating float->int). Shared by the quant
// and select families (ops_cuda/quant.cu, select.cu). Packed stores read-modify-write a byte: give each byte to one
// thread. Also the Cast encoders of ops_cpu/cast.c (small_float_encode with 'saturate', e8m0_encode with 'round_mode'),
// which round directly to nearest even instead of searching, for ops_cuda/cast.cu.
#pragma once

#include <cmath>

#include "ops_cuda/cuda_common.cuh"

namespace {

struct minifloat {
    int exp_bits, man_bits, bias;
    bool has_inf, fn, uz;
};

__host__ __device__ __forceinline__ minifloat minifloat_of(int dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT8E4M3FN: return {4, 3, 7, false, true, false};
    case MRT_DTYPE_FLOAT8E4M3FNUZ: return {4, 3, 8, false, false, true};
    case MRT_DTYPE_FLOAT8E5M2: return {5, 2, 15, true, false, false};
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return {5, 2, 16, false, false, true};
    case MRT_DTYPE_FLOAT16: return {5, 10, 15, true, false, false}; // for cast_encode only
    case MRT_DTYPE_BFLOAT16: return {8, 7, 127, true, false, false};
    default: return {2, 1, 1, false, false, false}; // float4e2m1
    }
}

__host__ __device__ inline double minifloat_decode(const minifloat &mf, unsigned code)
{
    int total = 1 + mf.exp_bits + mf.man_bits;
    unsigned sign = (code >> (total - 1)) & 1u;
    unsigned exp = (code >> mf.man_bits) & ((1u << mf.exp_bits) - 1);
    unsigned man = code & ((1u << mf.man_bits) - 1);
    if (mf.uz && code == (1u << (total - 1))) return NAN;
    if (mf.fn && exp == (1u << mf.exp_bits) - 1 && man == (1u << mf.man_bits) - 1) return NAN;
    if (mf.has_inf && exp == (1u << mf.exp_bits) - 1) return man ? NAN : (sign ? -INFINITY : INFINITY);
    double v = exp ? ldexp(1.0 + man / (double)(1u << mf.man_bits), (int)exp - mf.bias)
                   : ldexp(man / (double)(1u << mf.man_bits), 1 - mf.bias);
    return sign ? -v : v;
}

// Nearest code (ties to the even code), saturating: the CPU's search over every code, so the same bits.
__host__ __device__ inline unsigned minifloat_encode(const minifloat &mf, double v)
{
    int total = 1 + mf.exp_bits + mf.man_bits;
    unsigned n = 1u << total, best = 0;
    if (v != v) {
        if (mf.uz) return 1u << (total - 1);
        if (mf.fn || mf.has_inf) return n - 1;
        return 0; // float4 has no NaN
    }
    if (isinf(v) && mf.has_inf) return (v < 0 ? (1u << (total - 1)) : 0) | (((1u << mf.exp_bits) - 1) << mf.man_bits);
    // values far past the largest (inf without an inf code, 1e30) saturate: 2^(2^exp_bits) tells the codes apart
    const double far = ldexp(1.0, 1 << mf.exp_bits);
    if (fabs(v) > far) v = copysign(far, v);
    double best_err = INFINITY;
    for (unsigned c = 0; c < n; c++) {
        double d = minifloat_decode(mf, c);
        if (d != d || isinf(d)) continue;
        double err = fabs(d - v);
        if (err < best_err || (err == best_err && !(c & 1u) && (best & 1u))) {
            best_err = err;
            best = c;
        }
    }
    if (mf.uz && best == (1u << (total - 1))) best = 0; // no negative zero
    return best;
}

__host__ __device__ __forceinline__ int sub_byte_bits(int dt)
{
    return dt == MRT_DTYPE_UINT4 || dt == MRT_DTYPE_INT4 || dt == MRT_DTYPE_FLOAT4E2M1 ? 4
           : dt == MRT_DTYPE_UINT2 || dt == MRT_DTYPE_INT2                           ? 2
                                                                                       : 0;
}

__host__ __device__ __forceinline__ unsigned load_bits(const void *d, int64_t i, int bits)
{
    const uint8_t *p = (const uint8_t *)d;
    int per = 8 / bits;
    return (p[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

// Not atomic: callers give each byte to one thread.
__host__ __device__ __forceinline__ void store_bits(void *d, int64_t i, int bits, unsigned v)
{
    uint8_t *p = (uint8_t *)d;
    int per = 8 / bits, sh = (int)(i % per) * bits;
    unsigned mask = ((1u << bits) - 1) << sh;
    p[i / per] = (uint8_t)((p[i / per] & ~mask) | ((v << sh) & mask));
}

__host__ __device__ inline int64_t q_ldi(int dt, const void *d, int64_t i);

__host__ __device__ inline double q_ld(int dt, const void *d, int64_t i)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: return ((const float *)d)[i];
    case MRT_DTYPE_DOUBLE: return ((const double *)d)[i];
    case MRT_DTYPE_FLOAT16: return mrt_cu_f16_to_f32(((const uint16_t *)d)[i]);
    case MRT_DTYPE_BFLOAT16: return mrt_cu_bf16_to_f32(((const uint16_t *)d)[i]);
    case MRT_DTYPE_FLOAT8E8M0: {
        unsigned c = ((const uint8_t *)d)[i];
        return c == 0xff ? NAN : ldexp(1.0, (int)c - 127);
    }
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return minifloat_decode(minifloat_of(dt), ((const uint8_t *)d)[i]);
    case MRT_DTYPE_FLOAT4E2M1: return minifloat_decode(minifloat_of(dt), load_bits(d, i, 4));
    case MRT_DTYPE_UINT64: return (double)((const uint64_t *)d)[i];
    default: return (double)q_ldi(dt, d, i);
    }
}

__host__ __device__ inline int64_t q_ldi(int dt, const void *d, int64_t i)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: return ((const uint8_t *)d)[i];
    case MRT_DTYPE_INT8: return ((const int8_t *)d)[i];
    case MRT_DTYPE_UINT16: return ((const uint16_t *)d)[i];
    case MRT_DTYPE_INT16: return ((const int16_t *)d)[i];
    case MRT_DTYPE_INT32: return ((const int32_t *)d)[i];
    case MRT_DTYPE_INT64: return ((const int64_t *)d)[i];
    case MRT_DTYPE_UINT32: return ((const uint32_t *)d)[i];
    case MRT_DTYPE_UINT64: return (int64_t)((const uint64_t *)d)[i];
    case MRT_DTYPE_BOOL: return ((const uint8_t *)d)[i] != 0;
    case MRT_DTYPE_UINT4: return load_bits(d, i, 4);
    case MRT_DTYPE_INT4: { int v = (int)load_bits(d, i, 4); return v >= 8 ? v - 16 : v; }
    case MRT_DTYPE_UINT2: return load_bits(d, i, 2);
    case MRT_DTYPE_INT2: { int v = (int)load_bits(d, i, 2); return v >= 2 ? v - 4 : v; }
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16:
    case MRT_DTYPE_FLOAT8E8M0: case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: case MRT_DTYPE_FLOAT4E2M1: {
        double v = q_ld(dt, d, i);
        return v != v ? 0 : (int64_t)v;
    }
    default: return 0;
    }
}

__host__ __device__ inline void q_sti(int dt, void *d, int64_t i, int64_t v)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; return;
    case MRT_DTYPE_INT8: ((int8_t *)d)[i] = (int8_t)v; return;
    case MRT_DTYPE_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; return;
    case MRT_DTYPE_INT16: ((int16_t *)d)[i] = (int16_t)v; return;
    case MRT_DTYPE_INT32: ((int32_t *)d)[i] = (int32_t)v; return;
    case MRT_DTYPE_INT64: ((int64_t *)d)[i] = v; return;
    case MRT_DTYPE_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; return;
    case MRT_DTYPE_UINT64: ((uint64_t *)d)[i] = (uint64_t)v; return;
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: store_bits(d, i, 4, (unsigned)v & 0xfu); return;
    case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2: store_bits(d, i, 2, (unsigned)v & 0x3u); return;
    default: return;
    }
}

__host__ __device__ inline void q_st(int dt, void *d, int64_t i, double v)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: ((float *)d)[i] = (float)v; return;
    case MRT_DTYPE_DOUBLE: ((double *)d)[i] = v; return;
    case MRT_DTYPE_FLOAT16: ((uint16_t *)d)[i] = mrt_cu_f32_to_f16((float)v); return;
    case MRT_DTYPE_BFLOAT16: ((uint16_t *)d)[i] = mrt_cu_f32_to_bf16((float)v); return;
    case MRT_DTYPE_FLOAT8E8M0: {
        // the nearest power of two in log space (up from the geometric midpoint)
        if (v != v || v <= 0) {
            ((uint8_t *)d)[i] = v != v ? 0xff : 0;
            return;
        }
        int e;
        double m = frexp(v, &e);
        int p = m > 0.7071067811865476 ? e : e - 1;
        p = p < -127 ? -127 : p > 127 ? 127 : p;
        ((uint8_t *)d)[i] = (uint8_t)(p + 127);
        return;
    }
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: ((uint8_t *)d)[i] = (uint8_t)minifloat_encode(minifloat_of(dt), v); return;
    case MRT_DTYPE_FLOAT4E2M1: store_bits(d, i, 4, minifloat_encode(minifloat_of(dt), v)); return;
    case MRT_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case MRT_DTYPE_UINT64:
        ((uint64_t *)d)[i] = !(v > 0) ? 0 : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
        return;
    default: {
        int64_t s = v != v ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
        q_sti(dt, d, i, s);
        return;
    }
    }
}

// mrt_round_to: v as a tensor of dt would hold it.
__host__ __device__ __forceinline__ double q_round_to(int dt, double v)
{
    uint64_t buf = 0;
    q_st(dt, &buf, 0, v);
    return q_ld(dt, &buf, 0);
}

static inline int elems_per_byte(int dt)
{
    int b = sub_byte_bits(dt);
    return b ? 8 / b : 1;
}

// ops_cpu/cast.c small_float_encode: v rounded to nearest even in one step (float16, bfloat16, float8, float4 by their
// minifloat layout); out of range -> the largest finite code when saturating (float4 always), else inf (formats with
// inf) or NaN. has_inf marks the IEEE kind, fn e4m3fn, uz the fnuz kinds, none of them float4e2m1.
__host__ __device__ inline unsigned cast_encode(const minifloat &f, double v, bool saturate)
{
    int width = 1 + f.exp_bits + f.man_bits;
    bool e2m1 = !f.has_inf && !f.fn && !f.uz;
    unsigned sign = signbit(v) ? 1u << (width - 1) : 0u, top = (1u << f.exp_bits) - 1;
    unsigned ieee_inf = top << f.man_bits, max_code;
    double man_all = 2.0 - ldexp(1.0, -f.man_bits), maxv;
    if (f.has_inf) {
        maxv = ldexp(man_all, (int)top - 1 - f.bias);
        max_code = ((top - 1) << f.man_bits) | ((1u << f.man_bits) - 1);
    } else if (f.fn) {
        maxv = ldexp(man_all - ldexp(1.0, -f.man_bits), (int)top - f.bias);
        max_code = (top << f.man_bits) | ((1u << f.man_bits) - 2);
    } else {
        maxv = ldexp(man_all, (int)top - f.bias);
        max_code = (top << f.man_bits) | ((1u << f.man_bits) - 1);
    }
    if (v != v) {
        if (f.has_inf) return sign | ieee_inf | (1u << (f.man_bits - 1));
        if (f.fn) return sign | (top << f.man_bits) | ((1u << f.man_bits) - 1);
        if (f.uz) return 1u << (width - 1);
        return sign ^ (1u << (width - 1)); // float4: what ml_dtypes (the ONNX reference) produces
    }
    double a = fabs(v);
    int e;
    if (isinf(a) || a > maxv) {
        if (!isinf(a)) { // may still round down to the largest value
            frexp(a, &e);
            double q = ldexp(1.0, e - 1 - f.man_bits);
            if (rint(a / q) * q <= maxv) a = rint(a / q) * q;
        }
        if (isinf(a) || a > maxv) {
            if (saturate || e2m1) return sign | max_code;
            if (f.has_inf) return sign | ieee_inf;
            if (f.fn) return sign | (top << f.man_bits) | ((1u << f.man_bits) - 1);
            return 1u << (width - 1);
        }
    }
    int emin = 1 - f.bias;
    if (a == 0) return f.uz ? 0u : sign;
    frexp(a, &e);
    e -= 1; // a = m * 2^e with m in [1, 2)
    if (e < emin) e = emin;
    double q = ldexp(1.0, e - f.man_bits), r = rint(a / q) * q;
    if (r == 0) return f.uz ? 0u : sign;
    frexp(r, &e);
    e -= 1;
    unsigned code;
    if (e < emin) {
        code = (unsigned)(r / ldexp(1.0, emin - f.man_bits));
    } else {
        unsigned man = (unsigned)(r / ldexp(1.0, e - f.man_bits)) - (1u << f.man_bits);
        code = ((unsigned)(e + f.bias) << f.man_bits) | man;
    }
    return sign | code;
}

// ops_cpu/cast.c e8m0_encode: float8e8m0 from the float32 bits (round_mode 0 up, 1 down, 2 nearest).
__host__ __device__ inline uint8_t cast_encode_e8m0(double v, bool saturate, int round_mode)
{
    float x = (float)v;
    uint32_t b;
    memcpy(&b, &x, 4);
    unsigned exp = (b >> 23) & 0xffu;
    if (exp == 0xffu) return 0xff;
    bool up = false;
    if (round_mode == 0) {
        up = (b & 0x7fffffu) != 0;
    } else if (round_mode == 2) {
        bool g = (b & 0x400000u) != 0, r = (b & 0x200000u) != 0, s = (b & 0x1fffffu) != 0;
        up = g && (r || s || exp > 0);
    }
    if (up && saturate && exp == 0xfeu) up = false;
    return (uint8_t)(exp + (up ? 1u : 0u));
}

} // namespace
