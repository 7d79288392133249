/* dtype traits; float16/bfloat16/float8/float4 conversions; generic element load/store. */
#include "engine/dtype.h"

#include <math.h>

bool mrt_dtype_is_known(int dt) { return dt > MRT_DTYPE_UNDEFINED && dt < MRT_DTYPE_COUNT_; }

int mrt_dtype_bits(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_INT32: case MRT_DTYPE_UINT32: return 32;
    case MRT_DTYPE_DOUBLE: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT64: case MRT_DTYPE_COMPLEX64: return 64;
    case MRT_DTYPE_COMPLEX128: return 128;
    case MRT_DTYPE_UINT8: case MRT_DTYPE_INT8: case MRT_DTYPE_BOOL: return 8;
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: case MRT_DTYPE_FLOAT8E8M0: return 8;
    case MRT_DTYPE_UINT16: case MRT_DTYPE_INT16: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: return 16;
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: case MRT_DTYPE_FLOAT4E2M1: return 4;
    case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2: return 2;
    case MRT_DTYPE_STRING: return (int)(8 * sizeof(char *));
    default: return 0;
    }
}

const char *mrt_dtype_name(mrt_dtype dt)
{
    static const char *const names[MRT_DTYPE_COUNT_] = {
        "undefined", "float32", "uint8", "int8", "uint16", "int16", "int32", "int64", "string", "bool",
        "float16", "float64", "uint32", "uint64", "complex64", "complex128", "bfloat16", "float8e4m3fn",
        "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1", "float8e8m0",
        "uint2", "int2"};
    return mrt_dtype_is_known((int)dt) ? names[dt] : "undefined";
}

bool mrt_dtype_is_float(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16:
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: case MRT_DTYPE_FLOAT4E2M1: case MRT_DTYPE_FLOAT8E8M0: return true;
    default: return false;
    }
}

bool mrt_dtype_is_integer(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_UINT8: case MRT_DTYPE_INT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_INT16:
    case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64:
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2: return true;
    default: return false;
    }
}

float mrt_f16_to_f32(mrt_f16 h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

mrt_f16 mrt_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return (mrt_f16)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu)); /* NaN stays NaN */
    if (abs >= 0x477ff000u) return (mrt_f16)(sign | 0x7c00u);                          /* overflow -> inf */
    if (abs < 0x38800000u) {                                                           /* subnormal or zero */
        if (abs < 0x33000000u) return (mrt_f16)sign;
        uint32_t e = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14 + (113 - e) */
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (mrt_f16)(sign | half);
    }
    uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u); /* round to nearest even */
    return (mrt_f16)(sign | ((r - 0x38000000u) >> 13));
}

mrt_bf16 mrt_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (mrt_bf16)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (mrt_bf16)(u >> 16);
}

/* Small float formats (float8/float4), described by their bit layout. */
typedef struct minifloat {
    int exp_bits, man_bits, bias;
    bool has_inf;   /* e5m2: IEEE-like inf/NaN */
    bool fn;        /* e4m3fn: only S.1111.111 is NaN, no inf */
    bool uz;        /* *fnuz: 0x80 is the only NaN, no negative zero, no inf */
} minifloat;

static const minifloat *minifloat_of(mrt_dtype dt)
{
    static const minifloat e4m3fn = {4, 3, 7, false, true, false};
    static const minifloat e4m3fnuz = {4, 3, 8, false, false, true};
    static const minifloat e5m2 = {5, 2, 15, true, false, false};
    static const minifloat e5m2fnuz = {5, 2, 16, false, false, true};
    static const minifloat e2m1 = {2, 1, 1, false, false, false};
    switch (dt) {
    case MRT_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
    case MRT_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case MRT_DTYPE_FLOAT8E5M2: return &e5m2;
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case MRT_DTYPE_FLOAT4E2M1: return &e2m1;
    default: return NULL;
    }
}

static double minifloat_decode(const minifloat *mf, unsigned code)
{
    int total = 1 + mf->exp_bits + mf->man_bits;
    unsigned sign = (code >> (total - 1)) & 1u;
    unsigned exp = (code >> mf->man_bits) & ((1u << mf->exp_bits) - 1);
    unsigned man = code & ((1u << mf->man_bits) - 1);
    if (mf->uz && code == (1u << (total - 1))) return NAN;
    if (mf->fn && exp == (1u << mf->exp_bits) - 1 && man == (1u << mf->man_bits) - 1) return NAN;
    if (mf->has_inf && exp == (1u << mf->exp_bits) - 1) return man ? NAN : (sign ? -INFINITY : INFINITY);
    double v = exp ? ldexp(1.0 + man / (double)(1u << mf->man_bits), (int)exp - mf->bias)
                   : ldexp(man / (double)(1u << mf->man_bits), 1 - mf->bias);
    return sign ? -v : v;
}

/* Nearest representable code (ties to even mantissa), saturating to the largest finite value. */
static unsigned minifloat_encode(const minifloat *mf, double v)
{
    int total = 1 + mf->exp_bits + mf->man_bits;
    unsigned n = 1u << total, best = 0;
    if (isnan(v)) {
        if (mf->uz) return 1u << (total - 1);
        if (mf->fn) return n - 1;
        if (mf->has_inf) return n - 1;
        return 0; /* float4 has no NaN */
    }
    if (isinf(v) && mf->has_inf) return (v < 0 ? (1u << (total - 1)) : 0) | (((1u << mf->exp_bits) - 1) << mf->man_bits);
    /* values far past the largest (inf in a format without it, 1e30) saturate: their error from every code rounds
       to the same (inf, or 1e30), so the search below would keep code 0; 2^(2^exp_bits) lies beyond every finite
       code and tells them apart */
    double far = ldexp(1.0, 1 << mf->exp_bits);
    if (fabs(v) > far) v = copysign(far, v);
    double best_err = INFINITY;
    for (unsigned c = 0; c < n; c++) {
        double d = minifloat_decode(mf, c);
        if (isnan(d) || isinf(d)) continue;
        double err = fabs(d - v);
        if (err < best_err || (err == best_err && !(c & 1u) && (best & 1u))) {
            best_err = err;
            best = c;
        }
    }
    if (mf->uz && best == (1u << (total - 1))) best = 0; /* no negative zero */
    return best;
}

static unsigned load_bits(const void *data, int64_t i, int bits)
{
    const uint8_t *p = data;
    int per = 8 / bits;
    return (p[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

static void store_bits(void *data, int64_t i, int bits, unsigned v)
{
    uint8_t *p = data;
    int per = 8 / bits, sh = (int)(i % per) * bits;
    unsigned mask = ((1u << bits) - 1) << sh;
    p[i / per] = (uint8_t)((p[i / per] & ~mask) | ((v << sh) & mask));
}

double mrt_load_f64(mrt_dtype dt, const void *d, int64_t i)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: return ((const float *)d)[i];
    case MRT_DTYPE_DOUBLE: return ((const double *)d)[i];
    case MRT_DTYPE_FLOAT16: return mrt_f16_to_f32(((const uint16_t *)d)[i]);
    case MRT_DTYPE_BFLOAT16: return mrt_bf16_to_f32(((const uint16_t *)d)[i]);
    case MRT_DTYPE_FLOAT8E8M0: {
        unsigned c = ((const uint8_t *)d)[i];
        return c == 0xff ? NAN : ldexp(1.0, (int)c - 127);
    }
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return minifloat_decode(minifloat_of(dt), ((const uint8_t *)d)[i]);
    case MRT_DTYPE_FLOAT4E2M1: return minifloat_decode(minifloat_of(dt), load_bits(d, i, 4));
    case MRT_DTYPE_UINT64: return (double)((const uint64_t *)d)[i];
    default: return mrt_dtype_is_integer(dt) || dt == MRT_DTYPE_BOOL ? (double)mrt_load_i64(dt, d, i) : 0.0;
    }
}

int64_t mrt_load_i64(mrt_dtype dt, const void *d, int64_t i)
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
    default: {
        if (!mrt_dtype_is_float(dt)) return 0; /* string/complex: not representable */
        double v = mrt_load_f64(dt, d, i);
        return isnan(v) ? 0 : (int64_t)v;
    }
    }
}

void mrt_store_f64(mrt_dtype dt, void *d, int64_t i, double v)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: ((float *)d)[i] = (float)v; return;
    case MRT_DTYPE_DOUBLE: ((double *)d)[i] = v; return;
    case MRT_DTYPE_FLOAT16: ((uint16_t *)d)[i] = mrt_f32_to_f16((float)v); return;
    case MRT_DTYPE_BFLOAT16: ((uint16_t *)d)[i] = mrt_f32_to_bf16((float)v); return;
    case MRT_DTYPE_FLOAT8E8M0: {
        /* round to the nearest power of two (in log space: up from the geometric midpoint) */
        if (isnan(v) || v <= 0) { ((uint8_t *)d)[i] = isnan(v) ? 0xff : 0; return; }
        int e;
        double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
        int p = m > 0.7071067811865476 ? e : e - 1;
        p = p < -127 ? -127 : p > 127 ? 127 : p;
        ((uint8_t *)d)[i] = (uint8_t)(p + 127);
        return;
    }
    case MRT_DTYPE_FLOAT8E4M3FN: case MRT_DTYPE_FLOAT8E4M3FNUZ: case MRT_DTYPE_FLOAT8E5M2:
    case MRT_DTYPE_FLOAT8E5M2FNUZ:
        ((uint8_t *)d)[i] = (uint8_t)minifloat_encode(minifloat_of(dt), v);
        return;
    case MRT_DTYPE_FLOAT4E2M1: store_bits(d, i, 4, minifloat_encode(minifloat_of(dt), v)); return;
    case MRT_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case MRT_DTYPE_UINT64: ((uint64_t *)d)[i] = !(v > 0) ? 0 : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v; return;
    default:
        if (mrt_dtype_is_integer(dt)) {
            /* out-of-range float->int is undefined in C: saturate instead */
            mrt_store_i64(dt, d, i, mrt_f64_to_i64_sat(v));
        }
        return;
    }
}

void mrt_store_i64(mrt_dtype dt, void *d, int64_t i, int64_t v)
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
    case MRT_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case MRT_DTYPE_UINT4: store_bits(d, i, 4, (unsigned)v & 0xfu); return;
    case MRT_DTYPE_INT4: store_bits(d, i, 4, (unsigned)v & 0xfu); return;
    case MRT_DTYPE_UINT2: store_bits(d, i, 2, (unsigned)v & 0x3u); return;
    case MRT_DTYPE_INT2: store_bits(d, i, 2, (unsigned)v & 0x3u); return;
    default:
        if (mrt_dtype_is_float(dt)) mrt_store_f64(dt, d, i, (double)v);
        return;
    }
}
