// Resize (10, 11, 13, 18, 19) and Upsample (7, 9) on CUDA, as ops_cpu/resize.c: every mode, coordinate transform,
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value, axes, keep_aspect_ratio_policy and antialias, any
// rank. The per-axis (source index, weight) tables are built on the host exactly as the CPU builds them (from a host
// copy of roi/scales/sizes) and copied into the workspace the opdef requests; one thread per output element then sums
// the product of its axes' taps in the CPU's order, in double. Every numeric dtype; bool, strings and 8-bit floats
// stay on the CPU (supports says why).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/resize.h"

namespace {

// ------------------------------------------------------------------ host: the CPU's per-axis tables

double cubic_weight(double t, double a)
{
    t = fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
}

double source_coord(const char *mode, double o, double scale, int64_t in, int64_t out, double start, double end,
                    bool *outside)
{
    double len_resized = scale * (double)in;
    *outside = false;
    if (strcmp(mode, "half_pixel") == 0) return (o + 0.5) / scale - 0.5;
    if (strcmp(mode, "pytorch_half_pixel") == 0) return len_resized > 1 ? (o + 0.5) / scale - 0.5 : 0;
    if (strcmp(mode, "align_corners") == 0) return len_resized == 1 ? 0 : o * (double)(in - 1) / (len_resized - 1);
    if (strcmp(mode, "asymmetric") == 0) return o / scale;
    if (strcmp(mode, "half_pixel_symmetric") == 0) {
        double adjustment = (double)out / len_resized, center = (double)in / 2;
        return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
    }
    double x = out > 1 ? start * (double)(in - 1) + o * (end - start) * (double)(in - 1) / (double)(out - 1)
                       : 0.5 * (start + end) * (double)(in - 1);
    *outside = x < 0 || x > (double)(in - 1);
    return x;
}

int64_t clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

// One axis's table (host memory): n taps per output coordinate.
struct host_axis {
    int n;
    int64_t *idx;
    double *w;
    unsigned char *oor;
};

// build_axis of ops_cpu/resize.c, line for line (the results must be the CPU's to the bit).
void build_axis(const mrt_op_ctx *ctx, host_axis *t, int64_t in, int64_t out, double scale, double start, double end,
                const mrt_resize_modes *m)
{
    bool cubic = strcmp(m->mode, "cubic") == 0;
    bool identity = in == out && scale == 1.0 && strcmp(m->coord, "tf_crop_and_resize") != 0;
    t->n = mrt_resize_taps(m, in, out, scale);
    bool antialias = !identity && m->antialias && strcmp(m->mode, "nearest") != 0 && scale < 1.0;
    int64_t i_start = antialias ? 1 - t->n / 2 : 0;
    const char *coord = m->coord, *nearest_mode = m->nearest_mode;
    memset(t->oor, 0, (size_t)out);
    double a = mrt_attr_float(ctx, "cubic_coeff_a", -0.75f);
    bool exclude = mrt_attr_int(ctx, "exclude_outside", 0) != 0;
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = &t->idx[o * t->n];
        double *w = &t->w[o * t->n];
        if (identity) {
            ix[0] = o;
            w[0] = 1;
            continue;
        }
        bool outside;
        double x = source_coord(coord, (double)o, scale, in, out, start, end, &outside);
        t->oor[o] = outside;
        if (t->n == 1) {
            double f = floor(x), frac = x - f;
            int64_t i;
            if (strcmp(nearest_mode, "floor") == 0) i = mrt_f64_to_i64_sat(f);
            else if (strcmp(nearest_mode, "ceil") == 0) i = mrt_f64_to_i64_sat(ceil(x));
            else if (strcmp(nearest_mode, "round_prefer_ceil") == 0) i = frac == 0.5 ? mrt_f64_to_i64_sat(f + 1) : mrt_f64_to_i64_sat(floor(x + 0.5));
            else i = frac == 0.5 ? mrt_f64_to_i64_sat(f) : mrt_f64_to_i64_sat(floor(x + 0.5));
            ix[0] = clamp_index(i, in);
            w[0] = 1;
        } else if (antialias) {
            double f = floor(x), r = x - f, sum = 0;
            if (r == 0) f -= 1, r = 1;
            for (int k = 0; k < t->n; k++) {
                double arg = ((double)(i_start + k) - r) * scale;
                w[k] = cubic ? cubic_weight(arg, a) : fmax(0.0, 1.0 - fabs(arg));
                sum += w[k];
            }
            double sum2 = 0;
            for (int k = 0; k < t->n; k++) {
                int64_t i = mrt_f64_to_i64_sat(f + (double)(i_start + k));
                if (sum != 0) w[k] /= sum;
                if (exclude && (i < 0 || i >= in)) w[k] = 0;
                sum2 += w[k];
                ix[k] = clamp_index(i, in);
            }
            if (exclude && sum2 != 0)
                for (int k = 0; k < t->n; k++) w[k] /= sum2;
        } else if (t->n == 2) {
            double f = floor(x), frac = x - f;
            ix[0] = clamp_index(mrt_f64_to_i64_sat(f), in);
            ix[1] = clamp_index(mrt_f64_to_i64_sat(f + 1), in);
            w[0] = 1 - frac;
            w[1] = frac;
        } else {
            double f = floor(x), frac = x - f, sum = 0;
            for (int k = 0; k < 4; k++) {
                int64_t i = mrt_f64_to_i64_sat(f - 1 + k);
                w[k] = cubic_weight(frac - (k - 1), a);
                if (exclude && (i < 0 || i >= in)) w[k] = 0;
                ix[k] = clamp_index(i, in);
                sum += w[k];
            }
            if (exclude && sum != 0)
                for (int k = 0; k < 4; k++) w[k] /= sum;
        }
    }
}

// ------------------------------------------------------------------ device

struct resize_geom {
    int rank;
    int n[MRT_MAX_RANK];                      // taps per axis
    int64_t out[MRT_MAX_RANK], in_stride[MRT_MAX_RANK];
    const int64_t *idx[MRT_MAX_RANK];         // device tables, [out * n] each
    const double *w[MRT_MAX_RANK];
    const unsigned char *oor[MRT_MAX_RANK];   // [out]
    double extrapolation;
};

__device__ __forceinline__ int64_t f64_to_i64_sat(double v)
{
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

// The CPU's store: floats through float (mrt_store_f64), integers rounded half to even then saturated and wrapped.
template <typename T> __device__ __forceinline__ void store_sum(T *y, int64_t i, double v)
{
    y[i] = (T)f64_to_i64_sat(rint(v));
}
template <> __device__ __forceinline__ void store_sum<float>(float *y, int64_t i, double v) { y[i] = (float)v; }
template <> __device__ __forceinline__ void store_sum<double>(double *y, int64_t i, double v) { y[i] = v; }
template <> __device__ __forceinline__ void store_sum<mrt_cu_half>(mrt_cu_half *y, int64_t i, double v)
{
    mrt_cu_store(y, i, (float)v);
}
template <> __device__ __forceinline__ void store_sum<mrt_cu_bf16>(mrt_cu_bf16 *y, int64_t i, double v)
{
    mrt_cu_store(y, i, (float)v);
}

// One thread per output element: the odometer over every axis's taps (last axis fastest), each weight the product of
// the axes' weights from the first axis on, zero weights skipped, as the CPU's loop.
template <typename T> __global__ void resize_kernel(const T *x, T *y, int64_t n_out, resize_geom g)
{
    MRT_CU_FOR(e, n_out) {
        int64_t o[MRT_MAX_RANK];
        int64_t q = e;
        bool outside = false;
        for (int d = g.rank - 1; d >= 0; d--) {
            o[d] = q % g.out[d];
            q /= g.out[d];
            outside |= g.oor[d][o[d]] != 0;
        }
        double acc = 0;
        if (outside) {
            acc = g.extrapolation;
        } else {
            int k[MRT_MAX_RANK];
            for (int d = 0; d < g.rank; d++) k[d] = 0;
            for (;;) {
                double w = 1;
                int64_t src = 0;
                for (int d = 0; d < g.rank; d++) {
                    int64_t at = o[d] * g.n[d] + k[d];
                    w *= g.w[d][at];
                    src += g.idx[d][at] * g.in_stride[d];
                }
                if (w != 0) acc += w * (double)mrt_cu_load(x, src);
                int d = g.rank - 1;
                while (d >= 0 && ++k[d] == g.n[d]) k[d--] = 0;
                if (d < 0) break;
            }
        }
        store_sum(y, e, acc);
    }
}

bool resize_dtype_ok(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16:
    case MRT_DTYPE_INT8: case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64:
    case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: return true;
    default: return false;
    }
}

mrt_status cu_resize(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    // roi / scales / sizes read back so that the opdef's geometry (and its errors) are the CPU's
    mrt_cu_host_inputs host;
    MRT_TRY(host.load(ctx, 1));
    mrt_resize_geometry g;
    bool need;
    MRT_TRY(mrt_resize_plan(&host.ctx, &g, &need));
    if (need) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "roi/scales/sizes values unavailable at run time");
    if (!resize_dtype_ok(x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(x->dtype));
    mrt_resize_modes modes = mrt_resize_modes_get(ctx);
    int r = x->rank;
    int64_t counts[3 * MRT_MAX_RANK];
    if (!mrt_resize_table_bytes(ctx, x, &g, counts)) return MRT_STATUS_INVALID_ARG; // failed, with the reason
    int64_t n_out = mrt_tensor_numel(y);
    if (n_out == 0 || mrt_tensor_numel(x) == 0) return MRT_STATUS_OK; // the (zeroed) output stands, as on the CPU
    void *part[3 * MRT_MAX_RANK];
    if (!mrt_workspace_parts(ctx, 3 * r, counts, 1, part)) return MRT_STATUS_OUT_OF_MEMORY;
    // the tables on the host, laid out as the device parts, then one copy per part
    // each part at an 8-byte boundary: an axis's int64/double parts follow the previous axis's byte flags
    size_t total = 0;
    for (int i = 0; i < 3 * r; i++) total += ((size_t)counts[i] + 7) & ~(size_t)7;
    unsigned char *buf = (unsigned char *)malloc(total ? total : 1);
    if (!buf) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (resize tables)");
    resize_geom rg;
    memset(&rg, 0, sizeof rg);
    rg.rank = r;
    rg.extrapolation = mrt_attr_float(ctx, "extrapolation_value", 0.0f);
    int64_t strides[MRT_MAX_RANK];
    mrt_shape_strides(r, x->shape, strides);
    size_t at = 0;
    cudaError_t e = cudaSuccess;
    for (int d = 0; d < r; d++) {
        size_t a0 = ((size_t)counts[3 * d] + 7) & ~(size_t)7, a1 = ((size_t)counts[3 * d + 1] + 7) & ~(size_t)7;
        host_axis t = {0, (int64_t *)(buf + at), (double *)(buf + at + a0), buf + at + a0 + a1};
        build_axis(ctx, &t, x->shape[d], y->shape[d], g.scale[d], g.roi_start[d], g.roi_end[d], &modes);
        for (int p = 0; p < 3 && e == cudaSuccess; p++) {
            const void *src = p == 0 ? (const void *)t.idx : p == 1 ? (const void *)t.w : (const void *)t.oor;
            if (counts[3 * d + p])
                e = cudaMemcpyAsync(part[3 * d + p], src, (size_t)counts[3 * d + p], cudaMemcpyHostToDevice, mrt_cu_stream(ctx));
        }
        at += a0 + a1 + (((size_t)counts[3 * d + 2] + 7) & ~(size_t)7);
        rg.n[d] = t.n;
        rg.out[d] = y->shape[d];
        rg.in_stride[d] = strides[d];
        rg.idx[d] = (const int64_t *)part[3 * d];
        rg.w[d] = (const double *)part[3 * d + 1];
        rg.oor[d] = (const unsigned char *)part[3 * d + 2];
    }
    // the host tables live on this call's heap: wait until the copies have read them
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    free(buf);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copying the resize tables: %s", cudaGetErrorString(e));
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(x->dtype, {
            auto *k = resize_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n_out), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n_out, rg);
        })
        return false;
    }();
    MRT_CU_CHECK_LAUNCH(ctx, "resize kernel");
    return MRT_STATUS_OK;
}

bool cu_resize_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (x && !resize_dtype_ok(x->dtype))
        return snprintf(why, len, "dtype %s is not resized by the CUDA kernel", mrt_dtype_name(x->dtype)), false;
    return true;
}

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_resize[] = {
    MRT_CU_ROW_S("Upsample", 7, cu_resize, cu_resize_supports, 0),
    MRT_CU_ROW_S("Resize", 10, cu_resize, cu_resize_supports, 0),
    {0},
};
