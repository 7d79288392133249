// ONNX MaxPool 1-22 (Indices output with storage_order, ceil_mode, dilations; float32/float64/float16/bfloat16/int8/
// uint8), AveragePool 1-22 (count_include_pad from opset 7), LpPool 1-22, GlobalAveragePool/GlobalMaxPool 1/22 and
// GlobalLpPool 1/2/22 on CUDA, N-D, mirroring ops_cpu/pool.c: each window's valid taps visited in the CPU's order
// (row-major, last dim innermost), sums in double, NaN winning a max, a window with no valid tap giving 0. The float32
// global average reproduces the CPU's 32 interleaved lanes and their pairwise sum, so it matches bit for bit.
// MaxUnpool 9/11/22: where indices repeat, the last input wins, as in the CPU's loop (an atomicMax of the input
// position per output element, so the result does not depend on the schedule). MaxRoiPool 1/22: the CPU's bins in
// double, a roi whose batch index is outside X failing the node as on the CPU.
#include <cmath>

#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"

#include "engine/opdef/conv.h"

namespace {

using namespace std;

enum pool_kind { P_MAX, P_AVG, P_LP };

struct pool_args {
    mrt_window w;
    int64_t planes, in_numel, out_numel;
    int kind;
    bool include_pad, col_major;
    double p;
};

// The window of output coordinate o along dim i: first in-position, valid taps [lo, hi), taps inside the padded input.
__device__ __forceinline__ void dim_taps(const mrt_window &w, int i, int64_t o, int64_t *start, int64_t *lo, int64_t *hi,
                                         int64_t *padded)
{
    int64_t s = o * w.stride[i] - w.pad_begin[i], d = w.dilation[i], k = w.kernel[i], in = w.in[i];
    int64_t l = s >= 0 ? 0 : (-s + d - 1) / d, h = in - s <= 0 ? 0 : (in - s + d - 1) / d;
    int64_t hp = in + w.pad_end[i] - s <= 0 ? 0 : (in + w.pad_end[i] - s + d - 1) / d;
    if (h > k) h = k;
    if (hp > k) hp = k;
    if (l > h) l = h;
    *start = s, *lo = l, *hi = h, *padded = hp;
}

template <typename T> __device__ __forceinline__ bool is_nan(T v) { return v != v; }

// One thread per output element: (plane, spatial position).
template <typename T> __global__ void window_kernel(const T *x, T *y, int64_t *ind, pool_args a)
{
    typedef typename mrt_cu_compute<T>::type C;
    const mrt_window &w = a.w;
    const int nsp = w.nsp, last = nsp - 1;
    MRT_CU_FOR(e, a.planes * a.out_numel) {
        const int64_t pl = e / a.out_numel;
        int64_t rest = e % a.out_numel, oidx[MRT_MAX_RANK];
        for (int i = nsp - 1; i >= 0; i--) oidx[i] = rest % w.out[i], rest /= w.out[i];
        int64_t start[MRT_MAX_RANK], klo[MRT_MAX_RANK], khi[MRT_MAX_RANK], instride[MRT_MAX_RANK];
        int64_t n_valid = 1, n_padded = 1;
        int64_t st = 1;
        for (int i = nsp - 1; i >= 0; i--) {
            int64_t hp;
            dim_taps(w, i, oidx[i], &start[i], &klo[i], &khi[i], &hp);
            n_valid *= khi[i] - klo[i];
            n_padded *= hp;
            instride[i] = st;
            st *= w.in[i];
        }
        const T *xp = x + pl * a.in_numel;
        C best = 0;
        int64_t arg = -1;
        double sum = 0;
        if (n_valid > 0) {
            int64_t kk[MRT_MAX_RANK];
            for (int i = 0; i < last; i++) kk[i] = klo[i];
            for (;;) {
                int64_t row = start[last];
                for (int i = 0; i < last; i++) row += (start[i] + kk[i] * w.dilation[i]) * instride[i];
                for (int64_t k = klo[last]; k < khi[last]; k++) {
                    const int64_t off = row + k * w.dilation[last];
                    const C v = mrt_cu_load(xp, off);
                    if (a.kind == P_MAX) {
                        if (arg < 0 || (!is_nan(best) && (v > best || is_nan(v)))) best = v, arg = off;
                    } else if (a.kind == P_AVG) {
                        sum += (double)v;
                    } else if (a.p == 2.0) {
                        sum += (double)v * (double)v;
                    } else if (a.p == 1.0) {
                        sum += fabs((double)v);
                    } else {
                        sum += pow(fabs((double)v), a.p);
                    }
                }
                int i = last - 1;
                for (; i >= 0; i--) {
                    if (++kk[i] < khi[i]) break;
                    kk[i] = klo[i];
                }
                if (i < 0) break;
            }
        }
        if (a.kind == P_MAX) {
            mrt_cu_store(y, e, best);
            if (!ind) continue;
            if (arg < 0) {
                ind[e] = pl * a.in_numel;
                continue;
            }
            if (a.col_major) {
                int64_t cm = 0, cs = 1;
                for (int i = 0; i < nsp; i++) {
                    cm += (arg / instride[i]) % w.in[i] * cs;
                    cs *= w.in[i];
                }
                arg = cm;
            }
            ind[e] = pl * a.in_numel + arg;
            continue;
        }
        double r;
        if (a.kind == P_AVG) {
            int64_t den = a.include_pad ? n_padded : n_valid;
            r = den > 0 ? sum / (double)den : 0.0;
        } else {
            r = a.p == 2.0 ? sqrt(sum) : a.p == 1.0 ? sum : pow(sum, 1.0 / a.p);
        }
        // float16/bfloat16 round through float, as the CPU's float copies do
        mrt_cu_store(y, e, (C)r);
    }
}

// Global pools over planes of `len` elements, one block of 32 threads per plane: thread j takes elements j, j + 32, ...
// in order, then the lanes are added pairwise (j += j + 16, + 8, ..., + 1), which is the CPU's float32 global average
// (ops_cpu/pool.c gap_plane) operation for operation. The max: NaN if any element is NaN, else the largest.
static const int LANES = 32;

template <typename T> __global__ void global_kernel(const T *x, T *y, int64_t planes, int64_t len, bool is_max)
{
    typedef typename mrt_cu_compute<T>::type C;
    __shared__ double acc[LANES];
    __shared__ int nan_seen[LANES];
    const int j = threadIdx.x;
    for (int64_t pl = blockIdx.x; pl < planes; pl += gridDim.x) {
        const T *xp = x + pl * len;
        double s = is_max ? -INFINITY : 0.0;
        int nan = 0;
        for (int64_t i = j; i < len; i += LANES) {
            const C v = mrt_cu_load(xp, i);
            if (is_max) {
                nan |= v != v;
                s = (double)v > s ? (double)v : s;
            } else {
                s += (double)v;
            }
        }
        acc[j] = s;
        nan_seen[j] = nan;
        __syncthreads();
        for (int width = LANES / 2; width >= 1; width /= 2) {
            if (j < width) {
                if (is_max) {
                    acc[j] = acc[j + width] > acc[j] ? acc[j + width] : acc[j];
                    nan_seen[j] |= nan_seen[j + width];
                } else {
                    acc[j] += acc[j + width];
                }
            }
            __syncthreads();
        }
        if (j == 0) {
            C r;
            if (len <= 0) r = 0;
            else if (is_max) r = nan_seen[0] ? (C)NAN : (C)acc[0];
            else r = (C)(acc[0] / (double)len);
            mrt_cu_store(y, pl, r);
        }
        __syncthreads();
    }
}

bool float_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

mrt_status run_window(mrt_op_ctx *ctx, const mrt_window &w, int kind, bool include_pad, double p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0), *ind = kind == P_MAX ? mrt_output(ctx, 1) : NULL;
    pool_args a;
    memset(&a, 0, sizeof a);
    a.w = w;
    a.planes = x->shape[0] * x->shape[1];
    a.in_numel = a.out_numel = 1;
    for (int i = 0; i < w.nsp; i++) a.in_numel *= w.in[i], a.out_numel *= w.out[i];
    a.kind = kind;
    a.include_pad = include_pad;
    a.col_major = kind == P_MAX && mrt_attr_int(ctx, "storage_order", 0) == 1;
    a.p = p;
    int64_t n = a.planes * a.out_numel;
    if (n == 0) return MRT_STATUS_OK;
    int64_t *id = ind ? (int64_t *)ind->data : NULL;
    bool done = false;
    [&]() -> bool {
        switch (x->dtype) {
            MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT8, int8_t, { auto *k = window_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, id, a);
                done = true; })
            MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT8, uint8_t, { auto *k = window_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, id, a);
                done = true; })
        default: break;
        }
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = window_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, id, a);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "pool kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_maxpool(mrt_op_ctx *ctx)
{
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, mrt_input(ctx, 0), &w));
    return run_window(ctx, w, P_MAX, false, 0);
}

mrt_status cu_avgpool(mrt_op_ctx *ctx)
{
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, mrt_input(ctx, 0), &w));
    return run_window(ctx, w, P_AVG, ctx->opset >= 7 && mrt_attr_int(ctx, "count_include_pad", 0) != 0, 1.0);
}

mrt_status cu_lppool(mrt_op_ctx *ctx)
{
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, mrt_input(ctx, 0), &w));
    return run_window(ctx, w, P_LP, false, mrt_attr_float(ctx, "p", 2.0f));
}

// The global pools' window: the whole spatial extent (a single element for [N, C]), as the CPU builds it.
mrt_window global_window(const mrt_tensor *x)
{
    mrt_window w;
    memset(&w, 0, sizeof w);
    w.nsp = x->rank - 2;
    for (int i = 0; i < w.nsp; i++) {
        w.in[i] = w.kernel[i] = x->shape[i + 2];
        w.out[i] = w.stride[i] = w.dilation[i] = 1;
    }
    if (w.nsp == 0) {
        w.nsp = 1;
        w.in[0] = w.kernel[0] = w.out[0] = w.stride[0] = w.dilation[0] = 1;
    }
    return w;
}

mrt_status run_global(mrt_op_ctx *ctx, bool is_max)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t planes = x->shape[0] * x->shape[1], len = 1;
    for (int i = 2; i < x->rank; i++) len *= x->shape[i];
    if (planes == 0) return MRT_STATUS_OK;
    bool done = false;
    unsigned blocks = (unsigned)(planes < 65535 ? planes : 65535);
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = global_kernel<elem_t>;
            MRT_LAUNCH(k, blocks, LANES, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, planes, len,
                       is_max);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "global pool kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_globalmaxpool(mrt_op_ctx *ctx) { return run_global(ctx, true); }
mrt_status cu_globalaveragepool(mrt_op_ctx *ctx) { return run_global(ctx, false); }
mrt_status cu_globallppool(mrt_op_ctx *ctx)
{
    return run_window(ctx, global_window(mrt_input(ctx, 0)), P_LP, false, mrt_attr_float(ctx, "p", 2.0f));
}

bool pool_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    bool ok = x && (float_dtype(x->dtype) || (!strcmp(ctx->node->op_type, "MaxPool") &&
                                              (x->dtype == MRT_DTYPE_INT8 || x->dtype == MRT_DTYPE_UINT8)));
    if (!ok) snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "none");
    return ok;
}

bool global_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !float_dtype(x->dtype) || x->rank < 2)
        return snprintf(why, len, "input 'X' must be a float tensor of rank >= 2 for the CUDA kernel"), false;
    return true;
}

// ------------------------------------------------------------------ MaxUnpool

// The unpooled shape the attributes infer and Y's shape (an output_shape input pads or crops it at each dim's end).
struct unpool_args {
    int rank;
    int64_t inferred[MRT_MAX_RANK], y_shape[MRT_MAX_RANK], y_stride[MRT_MAX_RANK];
    int64_t n_inferred;
    bool same;
};

// winner[dst] = 1 + the last input position that lands on dst; *bad = 1 when an index is outside the inferred shape.
__global__ void unpool_winner_kernel(const int64_t *ind, int64_t nx, unpool_args u, unsigned long long *winner, int *bad)
{
    MRT_CU_FOR(i, nx) {
        int64_t f = ind[i];
        if (f < 0 || f >= u.n_inferred) {
            *bad = 1;
            continue;
        }
        int64_t dst = f;
        if (!u.same) {
            dst = 0;
            for (int d = u.rank - 1; d >= 0 && dst >= 0; d--) {
                int64_t c = f % u.inferred[d];
                f /= u.inferred[d];
                dst = c < u.y_shape[d] ? dst + c * u.y_stride[d] : -1;
            }
            if (dst < 0) continue; // cropped away by a smaller output_shape
        }
        atomicMax(&winner[dst], (unsigned long long)(i + 1));
    }
}

template <typename T> __global__ void unpool_write_kernel(const T *x, T *y, const unsigned long long *winner, int64_t ny)
{
    MRT_CU_FOR(j, ny) {
        unsigned long long w = winner[j];
        y[j] = w ? x[w - 1] : (T)0;
    }
}

// MaxUnpool's workspace: the winners, one per element of Y, then the bad-index flag (planned when Y's shape is known
// at plan time; with a computed output_shape the step is dynamic and takes the device scratch)
size_t maxunpool_workspace_bytes(mrt_op_ctx *ctx)
{
    int64_t ny = mrt_tensor_numel(mrt_output(ctx, 0));
    return ny ? (size_t)ny * sizeof(unsigned long long) + sizeof(int) : 0;
}

mrt_status cu_maxunpool_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, maxunpool_workspace_bytes(ctx));
    return MRT_STATUS_OK;
}

mrt_status cu_maxunpool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *ind = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y->data) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "the CUDA kernel needs Y's shape before it runs");
    mrt_window w;
    MRT_TRY(mrt_pool_window(ctx, x, &w));
    unpool_args u;
    memset(&u, 0, sizeof u);
    u.rank = x->rank;
    u.inferred[0] = x->shape[0];
    u.inferred[1] = x->shape[1];
    for (int d = 0; d < w.nsp; d++) {
        u.inferred[d + 2] = (w.in[d] - 1) * w.stride[d] + w.kernel[d] - w.pad_begin[d] - w.pad_end[d];
        if (u.inferred[d + 2] < 0) u.inferred[d + 2] = 0;
    }
    for (int d = 0; d < u.rank; d++) u.y_shape[d] = y->shape[d];
    mrt_shape_strides(u.rank, y->shape, u.y_stride);
    u.n_inferred = 1;
    for (int d = 0; d < u.rank; d++) u.n_inferred *= u.inferred[d];
    u.same = memcmp(u.inferred, y->shape, (size_t)u.rank * sizeof(int64_t)) == 0;
    int64_t nx = mrt_tensor_numel(x), ny = mrt_tensor_numel(y);
    if (ny == 0) return MRT_STATUS_OK;
    char *ws = (char *)mrt_workspace(ctx, maxunpool_workspace_bytes(ctx));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    unsigned long long *winner = (unsigned long long *)ws;
    int *bad = (int *)(ws + (size_t)ny * sizeof(unsigned long long));
    cudaStream_t s = mrt_cu_stream(ctx);
    cudaError_t e = cudaMemsetAsync(ws, 0, (size_t)ny * sizeof(unsigned long long) + sizeof(int), s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "cudaMemsetAsync: %s", cudaGetErrorString(e));
    if (nx > 0) {
        auto *kw = unpool_winner_kernel;
        MRT_LAUNCH(kw, mrt_cu_blocks(nx), MRT_CU_THREADS, 0, s, (const int64_t *)ind->data, nx, u, winner, bad);
    }
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_BYTES(mrt_dtype_bits(x->dtype) / 8, {
            auto *k = unpool_write_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(ny), MRT_CU_THREADS, 0, s, (const elem_t *)x->data, (elem_t *)y->data,
                       (const unsigned long long *)winner, ny);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "MaxUnpool kernels");
    int bad_h = 0;
    e = cudaMemcpyAsync(&bad_h, bad, sizeof bad_h, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the index check: %s", cudaGetErrorString(e));
    char is[256];
    if (bad_h)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'I' has an index outside the unpooled shape %s",
                           mrt_shape_describe(u.rank, u.inferred, is, sizeof is));
    return MRT_STATUS_OK;
}

bool maxunpool_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *os = mrt_input(ctx, 2);
    if (!x || !float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "none"), false;
    if (os && !os->data)
        return snprintf(why, len, "the CUDA kernel needs a constant 'output_shape'"), false;
    return true;
}

// ------------------------------------------------------------------ MaxRoiPool

// One thread per output (roi, channel, bin row, bin column): the roi scaled and rounded to input cells, split into
// floor/ceil bins clipped to the image; the first element of a bin, then any larger one; an empty bin gives 0.
template <typename T>
__global__ void roipool_kernel(const T *x, const T *rois, T *y, int64_t n_rois, int64_t nb, int64_t c, int64_t h,
                               int64_t wd, int64_t ph, int64_t pw, double scale, int *bad)
{
    typedef typename mrt_cu_compute<T>::type C;
    MRT_CU_FOR(e, n_rois * c * ph * pw) {
        const int64_t j = e % pw, i = e / pw % ph, ch = e / (pw * ph) % c, r = e / (pw * ph * c);
        const double bd = (double)mrt_cu_load(rois, r * 5);
        if (!(bd >= 0 && bd < (double)nb)) {
            *bad = 1;
            continue;
        }
        const int64_t b = (int64_t)bd;
        const double x1 = round((double)mrt_cu_load(rois, r * 5 + 1) * scale), y1 = round((double)mrt_cu_load(rois, r * 5 + 2) * scale);
        const double x2 = round((double)mrt_cu_load(rois, r * 5 + 3) * scale), y2 = round((double)mrt_cu_load(rois, r * 5 + 4) * scale);
        const double rh = fmax(y2 - y1 + 1, 1.0), rw = fmax(x2 - x1 + 1, 1.0), bh = rh / (double)ph, bw = rw / (double)pw;
        const double hs = fmin(fmax(floor((double)i * bh) + y1, 0.0), (double)h);
        const double he = fmin(fmax(ceil((double)(i + 1) * bh) + y1, 0.0), (double)h);
        const double ws = fmin(fmax(floor((double)j * bw) + x1, 0.0), (double)wd);
        const double we = fmin(fmax(ceil((double)(j + 1) * bw) + x1, 0.0), (double)wd);
        const T *xp = x + (b * c + ch) * h * wd;
        C best = 0;
        bool any = false;
        for (int64_t yy = (int64_t)hs; yy < (int64_t)he; yy++)
            for (int64_t xx = (int64_t)ws; xx < (int64_t)we; xx++) {
                const C v = mrt_cu_load(xp, yy * wd + xx);
                if (!any || v > best) best = v;
                any = true;
            }
        mrt_cu_store(y, e, best);
    }
}

// MaxRoiPool's bad-roi flag
size_t maxroipool_workspace_bytes(mrt_op_ctx *ctx) { return mrt_tensor_numel(mrt_output(ctx, 0)) ? sizeof(int) : 0; }

mrt_status cu_maxroipool_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, maxroipool_workspace_bytes(ctx));
    return MRT_STATUS_OK;
}

mrt_status cu_maxroipool(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *rois = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    int *bad = (int *)mrt_workspace(ctx, maxroipool_workspace_bytes(ctx));
    if (!bad) return MRT_STATUS_OUT_OF_MEMORY;
    cudaStream_t s = mrt_cu_stream(ctx);
    cudaError_t e = cudaMemsetAsync(bad, 0, sizeof(int), s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "cudaMemsetAsync: %s", cudaGetErrorString(e));
    double scale = mrt_attr_float(ctx, "spatial_scale", 1.0f);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = roipool_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, s, (const elem_t *)x->data, (const elem_t *)rois->data,
                       (elem_t *)y->data, rois->shape[0], x->shape[0], x->shape[1], x->shape[2], x->shape[3], y->shape[2],
                       y->shape[3], scale, bad);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "MaxRoiPool kernel");
    int bad_h = 0;
    e = cudaMemcpyAsync(&bad_h, bad, sizeof bad_h, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading the roi check: %s", cudaGetErrorString(e));
    if (bad_h)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "a roi has a batch index outside [0, %lld)", (long long)x->shape[0]);
    return MRT_STATUS_OK;
}

} // namespace

#define W MRT_KERNEL_WRITES_ALL
extern "C" const mrt_kernel mrt_cuda_kernels_pool[] = {
    MRT_CU_ROW_S("MaxPool", 1, cu_maxpool, pool_supports, W),
    MRT_CU_ROW_S("AveragePool", 1, cu_avgpool, pool_supports, W),
    MRT_CU_ROW_S("LpPool", 1, cu_lppool, pool_supports, W),
    MRT_CU_ROW_S("GlobalAveragePool", 1, cu_globalaveragepool, global_supports, W),
    MRT_CU_ROW_S("GlobalMaxPool", 1, cu_globalmaxpool, global_supports, W),
    MRT_CU_ROW_S("GlobalLpPool", 1, cu_globallppool, global_supports, W),
    MRT_CU_ROW_SW("MaxUnpool", 9, cu_maxunpool, maxunpool_supports, W, cu_maxunpool_workspace),
    MRT_CU_ROW_SW("MaxRoiPool", 1, cu_maxroipool, global_supports, W, cu_maxroipool_workspace),
    {},
};
#undef W
