// Shared by the CUDA data-movement families (transform, shape, gather, roll): host copies of small device inputs for
// the opdefs' parsers, an element-width dispatch, and the strided copy that Transpose, Slice, Expand and the
// depth/space shuffles reduce to (the CUDA twin of mrt_cpu_strided_copy, ops_cpu/movement.h).
#pragma once

#include <cstdlib>

#include "ops_cuda/cuda_common.cuh"

// Sixteen-byte elements (complex128) move as a pair of words.
struct mrt_cu_b16 { uint64_t lo, hi; };

// Byte-moving kernels by element width, complex128 included. The body sees `elem_t`.
#define MRT_CU_SWITCH_MOVE(bytes, ...)                                                                           \
    switch (bytes) {                                                                                              \
        MRT_CU_DISPATCH_CASE(1, uint8_t, __VA_ARGS__)                                                             \
        MRT_CU_DISPATCH_CASE(2, uint16_t, __VA_ARGS__)                                                            \
        MRT_CU_DISPATCH_CASE(4, uint32_t, __VA_ARGS__)                                                            \
        MRT_CU_DISPATCH_CASE(8, uint64_t, __VA_ARGS__)                                                            \
        MRT_CU_DISPATCH_CASE(16, mrt_cu_b16, __VA_ARGS__)                                                         \
    default: break;                                                                                               \
    }

// Element width in bytes of a dtype the movement kernels take, 0 for strings and sub-byte types (int4, float4...),
// which pack several elements in a byte: the CPU moves those bit field by bit field, the CUDA kernels leave them to it.
static inline size_t mrt_cu_move_bytes(mrt_dtype dt)
{
    int bits = mrt_dtype_bits(dt);
    if (dt == MRT_DTYPE_STRING || bits < 8 || bits % 8 || bits > 128) return 0;
    return (size_t)bits / 8;
}

// supports() for a node whose inputs/outputs the kernel only moves: every tensor must have whole-byte elements.
static inline bool mrt_cu_movable(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_value *v = ctx->inputs[i];
        if (v && v->kind == MRT_VALUE_TENSOR && !mrt_cu_move_bytes(v->tensor.dtype))
            return snprintf(why, len, "dtype %s (input %d) is not moved by the CUDA kernel (sub-byte elements)",
                            mrt_dtype_name(v->tensor.dtype), i),
                   false;
    }
    for (int i = 0; i < ctx->n_outputs; i++) {
        const mrt_value *v = ctx->outputs[i];
        if (v && v->kind == MRT_VALUE_TENSOR && !mrt_cu_move_bytes(v->tensor.dtype))
            return snprintf(why, len, "dtype %s (output %d) is not moved by the CUDA kernel (sub-byte elements)",
                            mrt_dtype_name(v->tensor.dtype), i),
                   false;
    }
    return true;
}

// Read n bytes of device memory into host memory (one synchronisation of the node's stream).
static inline mrt_status mrt_cu_read(mrt_op_ctx *ctx, void *dst, const void *src, size_t n, const char *what)
{
    if (n == 0) return MRT_STATUS_OK;
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx));
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading %s: %s", what, cudaGetErrorString(e));
    return MRT_STATUS_OK;
}

// The node's context with inputs [first, n_inputs) replaced by host copies of their device data, so that the opdefs'
// parsers (mrt_slice_params_get, mrt_split_sizes, mrt_pad_params_get...) run in run as they do at plan time. For
// small parameter inputs only (starts, pads, split sizes): everything is copied and synchronised once.
struct mrt_cu_host_inputs {
    static const int MAX = 8;
    mrt_op_ctx ctx;
    const mrt_value *ptrs[MAX];
    mrt_value vals[MAX];
    void *bufs[MAX];

    mrt_cu_host_inputs() : ctx(), ptrs(), vals(), bufs() {}
    ~mrt_cu_host_inputs()
    {
        for (int i = 0; i < MAX; i++) free(bufs[i]);
    }
    mrt_status load(mrt_op_ctx *dev, int first)
    {
        ctx = *dev;
        if (dev->n_inputs > MAX)
            return mrt_op_fail(dev, MRT_STATUS_NOT_IMPLEMENTED, "%d inputs: at most %d can be read back", dev->n_inputs, MAX);
        bool any = false;
        for (int i = 0; i < dev->n_inputs; i++) {
            ptrs[i] = dev->inputs[i];
            const mrt_value *v = dev->inputs[i];
            if (i < first || !v || v->kind != MRT_VALUE_TENSOR || !v->tensor.data) continue;
            size_t nb = mrt_tensor_nbytes(&v->tensor);
            bufs[i] = malloc(nb ? nb : 1);
            if (!bufs[i]) return mrt_op_fail(dev, MRT_STATUS_OUT_OF_MEMORY, "out of memory reading input %d", i);
            if (nb) {
                cudaError_t e = cudaMemcpyAsync(bufs[i], v->tensor.data, nb, cudaMemcpyDeviceToHost, mrt_cu_stream(dev));
                if (e != cudaSuccess)
                    return mrt_op_fail(dev, MRT_STATUS_DEVICE_ERROR, "reading input %d: %s", i, cudaGetErrorString(e));
                any = true;
            }
            vals[i] = *v;
            vals[i].tensor.data = bufs[i];
            ptrs[i] = &vals[i];
        }
        if (any) {
            cudaError_t e = cudaStreamSynchronize(mrt_cu_stream(dev));
            if (e != cudaSuccess) return mrt_op_fail(dev, MRT_STATUS_DEVICE_ERROR, "reading inputs: %s", cudaGetErrorString(e));
        }
        ctx.inputs = ptrs;
        return MRT_STATUS_OK;
    }
};

// ------------------------------------------------------------------ strided copy

// y[i] = x[base + sum_d c_d(i) * xstr[d]], c(i) the row-major coordinates of i in shape.
struct mrt_cu_strided {
    int rank;
    int64_t shape[MRT_MAX_RANK], xstr[MRT_MAX_RANK], base;
};

template <typename T> __global__ void mrt_cu_strided_kernel(const T *x, T *y, int64_t n, mrt_cu_strided g)
{
    MRT_CU_FOR(i, n) {
        int64_t q = i, off = g.base;
        for (int d = g.rank - 1; d > 0; d--) {
            off += (q % g.shape[d]) * g.xstr[d];
            q /= g.shape[d];
        }
        y[i] = x[off + q * g.xstr[0]];
    }
}

// The strided copy of `rank` dims (x's element width), dims of size 1 dropped and dims contiguous in x merged as on
// the CPU: fewer divisions per element.
static inline mrt_status mrt_cu_strided_copy(mrt_op_ctx *ctx, const mrt_tensor *x, void *y, int rank, const int64_t *shape,
                                             int64_t base, const int64_t *xstr)
{
    mrt_cu_strided g;
    memset(&g, 0, sizeof g);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    if (n == 0) return MRT_STATUS_OK;
    int r = 0;
    for (int d = 0; d < rank; d++) {
        if (shape[d] == 1) continue;
        if (r > 0 && g.xstr[r - 1] == xstr[d] * shape[d]) {
            g.shape[r - 1] *= shape[d];
            g.xstr[r - 1] = xstr[d];
        } else {
            g.shape[r] = shape[d];
            g.xstr[r] = xstr[d];
            r++;
        }
    }
    if (r == 0) {
        g.shape[0] = 1;
        g.xstr[0] = 1;
        r = 1;
    }
    g.rank = r;
    g.base = base;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = mrt_cu_strided_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y, n, g);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "strided copy kernel");
    return MRT_STATUS_OK;
}

// A whole tensor's bytes into another of the same element count (Reshape, Identity, Cast to the same type); nothing
// when the memory plan put the output on the input's bytes.
static inline mrt_status mrt_cu_copy_all(mrt_op_ctx *ctx, mrt_tensor *dst, const mrt_tensor *src)
{
    size_t nb = mrt_tensor_nbytes(src);
    if (!dst || dst->data == src->data || nb == 0) return MRT_STATUS_OK;
    cudaError_t e = cudaMemcpyAsync(dst->data, src->data, nb, cudaMemcpyDeviceToDevice, mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "device copy: %s", cudaGetErrorString(e));
    return MRT_STATUS_OK;
}
