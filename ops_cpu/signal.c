/* CPU kernels: HannWindow, HammingWindow, BlackmanWindow (17; periodic or symmetric), computed in double. */
#include <math.h>

#include "engine/registry.h"

static mrt_status window(mrt_op_ctx *ctx, double a0, double a1, double a2)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = y->shape[0];
    double den = mrt_attr_int(ctx, "periodic", 1) ? (double)n : (double)(n - 1);
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < n; i++) {
        double t = den > 0 ? 2 * pi * (double)i / den : 0;
        double v = a0 - a1 * cos(t) + a2 * cos(2 * t);
        if (mrt_dtype_is_float(y->dtype)) mrt_store_f64(y->dtype, y->data, i, v);
        else mrt_store_i64(y->dtype, y->data, i, (int64_t)v);
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_hann(mrt_op_ctx *ctx) { return window(ctx, 0.5, 0.5, 0); }
static mrt_status mrt_cpu_hamming(mrt_op_ctx *ctx) { return window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0); }
static mrt_status mrt_cpu_blackman(mrt_op_ctx *ctx) { return window(ctx, 0.42, 0.5, 0.08); }

const mrt_kernel mrt_cpu_kernels_signal[] = {
    {"", "HannWindow", 17, mrt_cpu_hann, NULL},
    {"", "HammingWindow", 17, mrt_cpu_hamming, NULL},
    {"", "BlackmanWindow", 17, mrt_cpu_blackman, NULL},
    {0},
};
