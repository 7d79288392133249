// Resize (10, 11, 13, 18, 19) and Upsample (7, 9) on CUDA, as ops_cpu/resize.c: every mode, coordinate transform,
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value, axes, keep_aspect_ratio_policy and antialias, any
// rank. The per-axis (source index, weight) tables are built on the host by the CPU's own code (mrt_resize_build_axis,
// engine/opdef/resize.c, from a host copy of roi/scales/sizes) and copied into the workspace the opdef requests; one thread per output element then sums
// the product of its axes' taps in the CPU's order, in double. Every numeric dtype; bool, strings and 8-bit floats
// stay on the CPU (supports says why).
#include <cmath>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/resize.h"

namespace {

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
        mrt_resize_axis t = {0, (int64_t *)(buf + at), (double *)(buf + at + a0), buf + at + a0 + a1};
        mrt_resize_build_axis(ctx, &t, x->shape[d], y->shape[d], g.scale[d], g.roi_start[d], g.roi_end[d], &modes);
        for (int p = 0; p < 3 && e == cudaSuccess; p++) {
            const void *src = p == 0 ? (const void *)t.idx : p == 1 ? (const void *)t.w : (const void *)t.out_of_range;
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

// The tables' device parts, as cu_resize carves them; none when the output or the input is empty. At plan time the
// roi/scales/sizes the geometry reads are constants on the host (else the step is dynamic and never planned).
mrt_status cu_resize_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (mrt_tensor_numel(mrt_output(ctx, 0)) == 0 || mrt_tensor_numel(x) == 0) return MRT_STATUS_OK;
    mrt_resize_geometry g;
    bool need;
    MRT_TRY(mrt_resize_plan(ctx, &g, &need));
    int64_t counts[3 * MRT_MAX_RANK];
    if (!mrt_resize_table_bytes(ctx, x, &g, counts)) return MRT_STATUS_INVALID_ARG; // failed, with the reason
    return mrt_workspace_request_parts(ctx, 3 * x->rank, counts, 1);
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
    MRT_CU_ROW_SW("Upsample", 7, cu_resize, cu_resize_supports, 0, cu_resize_workspace),
    MRT_CU_ROW_SW("Resize", 10, cu_resize, cu_resize_supports, 0, cu_resize_workspace),
    {0},
};
