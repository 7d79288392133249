/* Element-type traits and conversions between float16/bfloat16 and float. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t mrt_f16;  /* IEEE binary16 bits */
typedef uint16_t mrt_bf16; /* bfloat16 bits */

float mrt_f16_to_f32(mrt_f16 h);
mrt_f16 mrt_f32_to_f16(float f);   /* round to nearest even; overflow -> inf; NaN kept */
static inline float mrt_bf16_to_f32(mrt_bf16 b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
mrt_bf16 mrt_f32_to_bf16(float f); /* round to nearest even; NaN kept quiet */

/* double -> int64 without C's undefined behaviour: NaN -> 0, out of range -> INT64_MIN/INT64_MAX. Use it wherever a
   value that a model or an input controls becomes an integer (coordinates, sizes, seeds). */
static inline int64_t mrt_f64_to_i64_sat(double v)
{
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

/* Read element i of a numeric/bool tensor buffer as double / int64 (any dtype up to 64 bits, incl.
   float16/bfloat16/float8/int4 families). */
double mrt_load_f64(mrt_dtype dt, const void *data, int64_t i);
int64_t mrt_load_i64(mrt_dtype dt, const void *data, int64_t i);
/* Store a double / int64 into element i, converting like a C cast (float types round to nearest). */
void mrt_store_f64(mrt_dtype dt, void *data, int64_t i, double v);
/* v rounded to dtype dt and widened back: the value a tensor of dt would hold (computing in double, then
   rounding where the reference rounds). */
static inline double mrt_round_to(mrt_dtype dt, double v)
{
    uint64_t buf = 0; /* wide enough for every dtype up to 64 bits */
    mrt_store_f64(dt, &buf, 0, v);
    return mrt_load_f64(dt, &buf, 0);
}
void mrt_store_i64(mrt_dtype dt, void *data, int64_t i, int64_t v);

#ifdef __cplusplus
}
#endif
