/* CPU kernels of Cast 1-25 and CastLike 15-25: every pair of numeric types (float16/bfloat16, float8 x4 with
 * 'saturate', float8e8m0 with 'round_mode', float4e2m1, int4/uint4/int2/uint2), bool, and string <-> numbers.
 * float -> int truncates toward zero; out-of-range float -> int saturates to int64 then wraps; complex refused. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/registry.h"
#include "ops_cpu/movement.h"

/* ------------------------------------------------------------------ small float formats */

typedef enum fmt_kind {
    FMT_IEEE, /* inf and NaN in the top exponent (float16, bfloat16, e5m2) */
    FMT_FN,   /* no inf; S.1111.111 is NaN (e4m3fn) */
    FMT_FNUZ, /* no inf, no -0; 0x80 is the only NaN */
    FMT_E2M1, /* float4: no inf, no NaN */
} fmt_kind;

typedef struct small_float {
    int exp_bits, man_bits, bias;
    fmt_kind kind;
    bool can_saturate; /* the 'saturate' attribute applies (float8 types) */
} small_float;

static const small_float *small_float_of(mrt_dtype dt)
{
    static const small_float f16 = {5, 10, 15, FMT_IEEE, false}, bf16 = {8, 7, 127, FMT_IEEE, false};
    static const small_float e4m3fn = {4, 3, 7, FMT_FN, true}, e4m3fnuz = {4, 3, 8, FMT_FNUZ, true};
    static const small_float e5m2 = {5, 2, 15, FMT_IEEE, true}, e5m2fnuz = {5, 2, 16, FMT_FNUZ, true};
    static const small_float e2m1 = {2, 1, 1, FMT_E2M1, false};
    switch (dt) {
    case MRT_DTYPE_FLOAT16: return &f16;
    case MRT_DTYPE_BFLOAT16: return &bf16;
    case MRT_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
    case MRT_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case MRT_DTYPE_FLOAT8E5M2: return &e5m2;
    case MRT_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case MRT_DTYPE_FLOAT4E2M1: return &e2m1;
    default: return NULL;
    }
}

static double small_float_max(const small_float *f)
{
    int top = (1 << f->exp_bits) - 1;
    double man_all = 2.0 - ldexp(1.0, -f->man_bits); /* 1.111... */
    switch (f->kind) {
    case FMT_IEEE: return ldexp(man_all, top - 1 - f->bias);
    case FMT_FN: return ldexp(man_all - ldexp(1.0, -f->man_bits), top - f->bias); /* 1.110 */
    default: return ldexp(man_all, top - f->bias);
    }
}

/* Round-to-nearest-even encoding of v; out-of-range values become the largest finite value when saturating,
   else inf (IEEE kinds) or NaN. */
static unsigned small_float_encode(const small_float *f, double v, bool saturate)
{
    int width = 1 + f->exp_bits + f->man_bits;
    unsigned sign = signbit(v) ? 1u << (width - 1) : 0u, top = (1u << f->exp_bits) - 1;
    unsigned ieee_inf = top << f->man_bits, max_code = 0;
    double maxv = small_float_max(f);
    switch (f->kind) {
    case FMT_IEEE: max_code = ((top - 1) << f->man_bits) | ((1u << f->man_bits) - 1); break;
    case FMT_FN: max_code = (top << f->man_bits) | ((1u << f->man_bits) - 2); break;
    default: max_code = (top << f->man_bits) | ((1u << f->man_bits) - 1); break;
    }
    if (isnan(v)) {
        switch (f->kind) {
        case FMT_IEEE: return sign | ieee_inf | (1u << (f->man_bits - 1));
        case FMT_FN: return sign | (top << f->man_bits) | ((1u << f->man_bits) - 1);
        case FMT_FNUZ: return 1u << (width - 1);
        default: return sign ^ (1u << (width - 1)); /* what ml_dtypes (the ONNX reference) produces */
        }
    }
    double a = fabs(v);
    if (isinf(a) || a > maxv) {
        double q;
        int e;
        if (!isinf(a)) { /* may still round down to the largest value */
            frexp(a, &e);
            q = ldexp(1.0, e - 1 - f->man_bits);
            if (rint(a / q) * q <= maxv) a = rint(a / q) * q;
        }
        if (isinf(a) || a > maxv) {
            if (saturate || f->kind == FMT_E2M1) return sign | max_code;
            if (f->kind == FMT_IEEE) return sign | ieee_inf;
            if (f->kind == FMT_FN) return sign | (top << f->man_bits) | ((1u << f->man_bits) - 1);
            return 1u << (width - 1);
        }
    }
    int emin = 1 - f->bias, e;
    if (a == 0) return f->kind == FMT_FNUZ ? 0u : sign;
    frexp(a, &e);
    e -= 1; /* a = m * 2^e with m in [1, 2) */
    if (e < emin) e = emin;
    double q = ldexp(1.0, e - f->man_bits);
    double r = rint(a / q) * q;
    if (r == 0) return f->kind == FMT_FNUZ ? 0u : sign;
    frexp(r, &e);
    e -= 1;
    unsigned code;
    if (e < emin) {
        code = (unsigned)(r / ldexp(1.0, emin - f->man_bits));
    } else {
        unsigned man = (unsigned)(r / ldexp(1.0, e - f->man_bits)) - (1u << f->man_bits);
        code = ((unsigned)(e + f->bias) << f->man_bits) | man;
    }
    return sign | code;
}

/* float8e8m0 (a power of two, 2^(c-127); 0xff is NaN) from the float32 bits, as the ONNX reference does. */
static uint8_t e8m0_encode(double v, bool saturate, int round_mode)
{
    float x = (float)v;
    uint32_t b;
    memcpy(&b, &x, 4);
    unsigned exp = (b >> 23) & 0xffu;
    if (exp == 0xffu) return 0xff;
    bool up = false;
    if (round_mode == 0) { /* up */
        up = (b & 0x7fffffu) != 0;
    } else if (round_mode == 2) { /* nearest */
        bool g = (b & 0x400000u) != 0, r = (b & 0x200000u) != 0, s = (b & 0x1fffffu) != 0;
        up = g && (r || s || exp > 0);
    }
    if (up && saturate && exp == 0xfeu) up = false;
    return (uint8_t)(exp + (up ? 1u : 0u));
}

/* ------------------------------------------------------------------ strings */

static void format_number(char *buf, size_t len, mrt_dtype dt, const void *data, int64_t i)
{
    if (dt == MRT_DTYPE_BOOL) {
        snprintf(buf, len, "%s", ((const uint8_t *)data)[i] ? "True" : "False");
    } else if (dt == MRT_DTYPE_UINT64) {
        snprintf(buf, len, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
    } else if (mrt_dtype_is_integer(dt)) {
        snprintf(buf, len, "%lld", (long long)mrt_load_i64(dt, data, i));
    } else {
        double v = mrt_load_f64(dt, data, i);
        if (isnan(v)) { snprintf(buf, len, "NaN"); return; }
        if (isinf(v)) { snprintf(buf, len, v < 0 ? "-INF" : "INF"); return; }
        /* the fewest significant digits that read back as the same value of the source type, written
           plainly ("314.15926") unless the exponent is far from zero ("1e-05") */
        int max_digits = dt == MRT_DTYPE_DOUBLE ? 17 : 9, p = 1;
        for (; p < max_digits; p++) {
            snprintf(buf, len, "%.*e", p - 1, v);
            double back = strtod(buf, NULL);
            if (dt == MRT_DTYPE_DOUBLE ? back == v : (float)back == (float)v) break;
        }
        snprintf(buf, len, "%.*e", p - 1, v);
        int e = atoi(strchr(buf, 'e') + 1);
        if (e >= -4 && e < 16) snprintf(buf, len, "%.*f", p - 1 - e > 0 ? p - 1 - e : 0, v);
    }
}

/* Parse a string as a number: integers exactly when the text is an integer, else as a double. */
static void parse_number(const char *s, bool *is_int, int64_t *iv, double *fv)
{
    s = s ? s : "";
    while (isspace((unsigned char)*s)) s++;
    char *end;
    *is_int = false;
    *fv = 0;
    if (strcasecmp(s, "true") == 0) { *is_int = true; *iv = 1; return; }
    if (strcasecmp(s, "false") == 0) { *is_int = true; *iv = 0; return; }
    long long ll = strtoll(s, &end, 10);
    if (end != s && *end == '\0') {
        *is_int = true;
        *iv = ll;
        *fv = (double)ll;
        return;
    }
    *fv = strtod(s, &end);
    if (end == s) *fv = NAN;
}

/* ------------------------------------------------------------------ conversions */

typedef struct cast_opts {
    bool saturate;
    int round_mode; /* 0 up, 1 down, 2 nearest */
} cast_opts;

static int64_t f2i(double v)
{
    if (isnan(v) || v <= -9.2233720368547758e18) return INT64_MIN;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    return (int64_t)v;
}

static uint64_t f2u(double v)
{
    if (!isnan(v) && v >= 9.2233720368547758e18) return v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
    return (uint64_t)f2i(v);
}

/* Store a floating value into element i of any non-string dtype. */
static void store_float(mrt_dtype dt, void *d, int64_t i, double v, const cast_opts *o)
{
    const small_float *sf;
    switch (dt) {
    case MRT_DTYPE_FLOAT: ((float *)d)[i] = (float)v; return;
    case MRT_DTYPE_DOUBLE: ((double *)d)[i] = v; return;
    case MRT_DTYPE_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case MRT_DTYPE_UINT64: ((uint64_t *)d)[i] = f2u(v); return;
    case MRT_DTYPE_FLOAT8E8M0: ((uint8_t *)d)[i] = e8m0_encode(v, o->saturate, o->round_mode); return;
    case MRT_DTYPE_UINT4: case MRT_DTYPE_INT4: case MRT_DTYPE_UINT2: case MRT_DTYPE_INT2:
        mrt_store_i64(dt, d, i, isfinite(v) ? f2i(v) : 0);
        return;
    default: break;
    }
    if ((sf = small_float_of(dt)) != NULL) {
        unsigned c = small_float_encode(sf, v, sf->can_saturate && o->saturate);
        if (mrt_dtype_bits(dt) == 16)
            ((uint16_t *)d)[i] = (uint16_t)c;
        else if (mrt_dtype_bits(dt) == 8)
            ((uint8_t *)d)[i] = (uint8_t)c;
        else
            mrt_mover_set_bits(d, i, 4, c);
        return;
    }
    mrt_store_i64(dt, d, i, f2i(v));
}

/* Store an integer value (signed view of the source; src_unsigned64 says it was a uint64). */
static void store_int(mrt_dtype dt, void *d, int64_t i, int64_t v, bool src_unsigned64, const cast_opts *o)
{
    if (mrt_dtype_is_integer(dt) || dt == MRT_DTYPE_BOOL) {
        mrt_store_i64(dt, d, i, v);
        return;
    }
    if (dt == MRT_DTYPE_FLOAT) {
        ((float *)d)[i] = src_unsigned64 ? (float)(uint64_t)v : (float)v;
        return;
    }
    store_float(dt, d, i, src_unsigned64 ? (double)(uint64_t)v : (double)v, o);
}

/* Typed loops for the plain C types: one conversion per element, no dispatch. */
#define PLAIN_TYPES(X)                                                                                          \
    X(MRT_DTYPE_UINT8, uint8_t, 0) X(MRT_DTYPE_INT8, int8_t, 0) X(MRT_DTYPE_UINT16, uint16_t, 0)               \
    X(MRT_DTYPE_INT16, int16_t, 0) X(MRT_DTYPE_INT32, int32_t, 0) X(MRT_DTYPE_INT64, int64_t, 0)               \
    X(MRT_DTYPE_UINT32, uint32_t, 0) X(MRT_DTYPE_UINT64, uint64_t, 0) X(MRT_DTYPE_FLOAT, float, 1)             \
    X(MRT_DTYPE_DOUBLE, double, 1) X(MRT_DTYPE_BOOL, uint8_t, 2)

/* The same list again: a macro cannot expand itself, and the loops nest one list inside the other. */
#define PLAIN_TYPES_SRC(X)                                                                                      \
    X(MRT_DTYPE_UINT8, uint8_t, 0) X(MRT_DTYPE_INT8, int8_t, 0) X(MRT_DTYPE_UINT16, uint16_t, 0)               \
    X(MRT_DTYPE_INT16, int16_t, 0) X(MRT_DTYPE_INT32, int32_t, 0) X(MRT_DTYPE_INT64, int64_t, 0)               \
    X(MRT_DTYPE_UINT32, uint32_t, 0) X(MRT_DTYPE_UINT64, uint64_t, 0) X(MRT_DTYPE_FLOAT, float, 1)             \
    X(MRT_DTYPE_DOUBLE, double, 1) X(MRT_DTYPE_BOOL, uint8_t, 2)

static bool is_plain(mrt_dtype dt)
{
#define X(id, T, k) if (dt == id) return true;
    PLAIN_TYPES(X)
#undef X
    return false;
}

/* kind: 0 integer, 1 floating, 2 bool */
#define CONVERT(DT, DK, ST, SK, v)                                                                               \
    ((DK) == 2 ? (DT)((v) != 0)                                                                                 \
     : (SK) == 2 ? (DT)((v) != 0)                                                                               \
     : (DK) == 0 && (SK) == 1 ? (sizeof(DT) == 8 && (DT)-1 > 0 ? (DT)f2u((double)(v)) : (DT)f2i((double)(v)))    \
     : (DT)(v))

static void cast_plain(mrt_dtype sdt, const void *src, mrt_dtype ddt, void *dst, int64_t n)
{
#define INNER(sid, ST, SK)                                                                                      \
    case sid: {                                                                                                 \
        const ST *s = (const ST *)src;                                                                          \
        for (int64_t i = 0; i < n; i++) d[i] = CONVERT(DT_, DK_, ST, SK, s[i]);                                 \
        return;                                                                                                 \
    }
#define OUTER(did, DT, DK)                                                                                      \
    case did: {                                                                                                 \
        typedef DT DT_;                                                                                         \
        enum { DK_ = DK };                                                                                      \
        DT *d = (DT *)dst;                                                                                      \
        switch (sdt) { PLAIN_TYPES_SRC(INNER) default: return; }                                                    \
    }
    switch (ddt) {
        PLAIN_TYPES(OUTER)
    default: return;
    }
#undef OUTER
#undef INNER
}

static mrt_status cast_tensor(mrt_op_ctx *ctx, const mrt_tensor *x, mrt_tensor *y, const cast_opts *o)
{
    int64_t n = mrt_tensor_numel(x);
    mrt_dtype sdt = x->dtype, ddt = y->dtype;
    if (n == 0) return MRT_STATUS_OK;
    if (sdt == ddt) return mrt_mover_copy_all(ctx, y, x);
    if (is_plain(sdt) && is_plain(ddt)) {
        cast_plain(sdt, x->data, ddt, y->data, n);
        return MRT_STATUS_OK;
    }
    /* the common mixed-precision casts (the engine's conversions round to nearest even, like the spec) */
    if (sdt == MRT_DTYPE_FLOAT && (ddt == MRT_DTYPE_FLOAT16 || ddt == MRT_DTYPE_BFLOAT16)) {
        const float *s = (const float *)x->data;
        uint16_t *d = (uint16_t *)y->data;
        if (ddt == MRT_DTYPE_FLOAT16)
            for (int64_t i = 0; i < n; i++) d[i] = mrt_f32_to_f16(s[i]);
        else
            for (int64_t i = 0; i < n; i++) d[i] = mrt_f32_to_bf16(s[i]);
        return MRT_STATUS_OK;
    }
    if (ddt == MRT_DTYPE_FLOAT && (sdt == MRT_DTYPE_FLOAT16 || sdt == MRT_DTYPE_BFLOAT16)) {
        const uint16_t *s = (const uint16_t *)x->data;
        float *d = (float *)y->data;
        if (sdt == MRT_DTYPE_FLOAT16)
            for (int64_t i = 0; i < n; i++) d[i] = mrt_f16_to_f32(s[i]);
        else
            for (int64_t i = 0; i < n; i++) d[i] = mrt_bf16_to_f32(s[i]);
        return MRT_STATUS_OK;
    }
    if (ddt == MRT_DTYPE_STRING) {
        mrt_mover m = mrt_mover_of(MRT_DTYPE_STRING);
        char buf[64];
        for (int64_t i = 0; i < n; i++) {
            format_number(buf, sizeof buf, sdt, x->data, i);
            mrt_mover_put_string(&m, &((char **)y->data)[i], buf);
        }
        return mrt_mover_status(&m, ctx);
    }
    if (sdt == MRT_DTYPE_STRING) {
        for (int64_t i = 0; i < n; i++) {
            bool is_int;
            int64_t iv;
            double fv;
            parse_number(((char *const *)x->data)[i], &is_int, &iv, &fv);
            if (is_int && !mrt_dtype_is_float(ddt))
                store_int(ddt, y->data, i, iv, false, o);
            else
                store_float(ddt, y->data, i, fv, o);
        }
        return MRT_STATUS_OK;
    }
    if (mrt_dtype_is_integer(sdt) || sdt == MRT_DTYPE_BOOL) {
        for (int64_t i = 0; i < n; i++)
            store_int(ddt, y->data, i, mrt_load_i64(sdt, x->data, i), sdt == MRT_DTYPE_UINT64, o);
    } else {
        for (int64_t i = 0; i < n; i++) store_float(ddt, y->data, i, mrt_load_f64(sdt, x->data, i), o);
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_cast(mrt_op_ctx *ctx)
{
    cast_opts o;
    o.saturate = ctx->opset < 19 || mrt_attr_int(ctx, "saturate", 1) != 0;
    const char *rm = ctx->opset >= 24 ? mrt_attr_string(ctx, "round_mode", "up") : "up";
    o.round_mode = strcmp(rm, "down") == 0 ? 1 : strcmp(rm, "nearest") == 0 ? 2 : 0;
    return cast_tensor(ctx, mrt_input(ctx, 0), mrt_output(ctx, 0), &o);
}

const mrt_kernel mrt_cpu_kernels_cast[] = {
    {"", "Cast", 1, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 6, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 9, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 13, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 19, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 21, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 23, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 24, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "Cast", 25, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 15, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 19, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 21, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 23, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 24, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CastLike", 25, mrt_cpu_cast, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {0},
};
