/* Float32 transcendental functions over arrays (see vmath.h). */
#include "ops_cpu/vmath.h"

#include <math.h>

void mrt_vexp_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]);
}

void mrt_vsigmoid_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i], e = expf(-fabsf(v)); /* in (0, 1]: no overflow for large |v| */
        float s = 1.0f / (1.0f + e);
        y[i] = v >= 0 ? s : e * s;
    }
}

void mrt_verf_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = erff(x[i]);
}

void mrt_vtanh_f32(float *y, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
