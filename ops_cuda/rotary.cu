// ONNX RotaryEmbedding 23 on CUDA (float, double, float16, bfloat16; 3-D X with num_heads or 4-D X; position_ids
// or per-(batch, position) caches; interleaved or half-split pairs; a partial rotary_embedding_dim), as the CPU kernel
// (ops_cpu/rotary.c): in double, one thread per rotated pair or passed-through element. Position ids outside the
// caches fail the node with the CPU's message: they are read back and checked before the launch.
#include <cstdlib>

#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

struct rot_params {
    int64_t B, N, S, H, R, half;
    bool four, interleaved;
    int dt;
};

// Thread i covers (b, s, n, k) with k in [0, H - R/2): k < R/2 rotates pair k, the rest copy dim R + (k - R/2).
__global__ void rotary_kernel(const void *x, const void *cosc, const void *sinc, const int64_t *pos, void *y, rot_params p)
{
    int64_t per_head = p.H - p.half;
    MRT_CU_FOR(i, p.B * p.S * p.N * per_head)
    {
        int64_t k = i % per_head, n = (i / per_head) % p.N, s = (i / (per_head * p.N)) % p.S,
                b = i / (per_head * p.N * p.S);
        int64_t base = p.four ? ((b * p.N + n) * p.S + s) * p.H : (b * p.S + s) * p.N * p.H + n * p.H;
        if (k >= p.half) {
            int64_t at = base + p.R + (k - p.half);
            st_any(p.dt, y, at, ld_any(p.dt, x, at));
            continue;
        }
        int64_t row = pos ? pos[b * p.S + s] : b * p.S + s; // the caches' row
        double c = ld_any(p.dt, cosc, row * p.half + k), sn = ld_any(p.dt, sinc, row * p.half + k);
        int64_t i1 = p.interleaved ? base + 2 * k : base + k, i2 = p.interleaved ? i1 + 1 : base + k + p.half;
        double x1 = ld_any(p.dt, x, i1), x2 = ld_any(p.dt, x, i2);
        st_any(p.dt, y, i1, c * x1 - sn * x2);
        st_any(p.dt, y, i2, sn * x1 + c * x2);
    }
}

mrt_status cu_rotary(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *cosc = mrt_input(ctx, 1), *sinc = mrt_input(ctx, 2), *pos = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0);
    rot_params p{};
    p.four = x->rank == 4;
    p.interleaved = mrt_attr_int(ctx, "interleaved", 0) != 0;
    p.B = x->shape[0], p.N = p.four ? x->shape[1] : mrt_attr_int(ctx, "num_heads", 0);
    p.S = p.four ? x->shape[2] : x->shape[1];
    p.H = p.four ? x->shape[3] : x->shape[2] / p.N;
    p.R = mrt_attr_int(ctx, "rotary_embedding_dim", 0);
    if (p.R == 0) p.R = p.H;
    p.half = p.R / 2;
    p.dt = x->dtype;
    int64_t n = p.B * p.S * p.N * (p.H - p.half);
    if (n == 0) return MRT_STATUS_OK;
    cudaStream_t st = mrt_cu_stream(ctx);
    if (pos) {
        int64_t np = p.B * p.S, max_pos = cosc->shape[0];
        int64_t *h = (int64_t *)malloc((size_t)np * sizeof(int64_t));
        if (!h) return MRT_STATUS_OUT_OF_MEMORY;
        cudaError_t e = cudaMemcpyAsync(h, pos->data, (size_t)np * sizeof(int64_t), cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) {
            free(h);
            return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading position_ids: %s", cudaGetErrorString(e));
        }
        for (int64_t i = 0; i < np; i++)
            if (h[i] < 0 || h[i] >= max_pos) {
                long long bad = (long long)h[i];
                free(h);
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "position id %lld is outside the caches' %lld rows", bad,
                                   (long long)max_pos);
            }
        free(h);
    }
    MRT_LAUNCH(rotary_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, st, (const void *)x->data, (const void *)cosc->data,
               (const void *)sinc->data, pos ? (const int64_t *)pos->data : (const int64_t *)NULL, y->data, p);
    MRT_CU_CHECK_LAUNCH(ctx, "rotary kernel");
    return MRT_STATUS_OK;
}

bool cu_rotary_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !seg_float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

} // namespace

// Every element is written (a bad position id fails the node, whose output then goes nowhere).
extern "C" const mrt_kernel mrt_cuda_kernels_rotary[] = {
    MRT_CU_ROW_S("RotaryEmbedding", 23, cu_rotary, cu_rotary_supports, MRT_KERNEL_WRITES_ALL),
    {0},
};
