// ONNX Gemm 1-13 (transA/transB, alpha/beta, C broadcast), MatMul 1-13 (numpy batch broadcasting, 1-D operands) and
// MatMulInteger 10 (uint8/int8, scalar/per-row/per-column/per-batch zero points) on CUDA, mirroring ops_cpu/gemm.c:
// float32/float64, float16/bfloat16 computed in float, int32/int64/uint32/uint64 with wrap-around sums (Gemm with
// alpha or beta other than 1 through double, saturated, as the CPU). minirt's tiled GEMM (ops_cuda/gemm.cuh) serves
// every case; the real module hands float32/float64 (and float16/bfloat16 without C) to cuBLAS where the batch maps
// onto one strided batch, with exact float32 math unless the session allows TF32.
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/gemm.cuh"
#include "ops_cuda/handles.cuh"

#include "engine/opdef/conv.h"

namespace {

using mrt_cu_gemm::geom;

bool is_half(mrt_dtype dt) { return dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16; }

// Gemm's and MatMul's dtypes (the opdef has already refused the others for the opset).
#define GEMM_SWITCH(dtype, ...)                                                                                   \
    switch (dtype) {                                                                                              \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT, float, __VA_ARGS__)                                                 \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_DOUBLE, double, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_FLOAT16, mrt_cu_half, __VA_ARGS__)                                         \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_BFLOAT16, mrt_cu_bf16, __VA_ARGS__)                                        \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT32, int32_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_INT64, int64_t, __VA_ARGS__)                                               \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT32, uint32_t, __VA_ARGS__)                                             \
        MRT_CU_DISPATCH_CASE(MRT_DTYPE_UINT64, uint64_t, __VA_ARGS__)                                             \
    default: break;                                                                                               \
    }

mrt_status run_own(mrt_op_ctx *ctx, mrt_dtype dt, const void *a, const void *b, const void *c, void *y, const geom &g)
{
    bool done = false, fits = true;
    [&]() -> bool {
        GEMM_SWITCH(dt, {
            typedef typename mrt_cu_gemm::acc_of<elem_t>::type acc_t;
            fits = mrt_cu_gemm::launch<elem_t, elem_t, elem_t, acc_t>(mrt_cu_stream(ctx), (const elem_t *)a,
                                                                      (const elem_t *)b, (const elem_t *)c, (elem_t *)y, g);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(dt));
    if (!fits) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "%lld output columns exceed the grid", (long long)g.n);
    MRT_CU_CHECK_LAUNCH(ctx, "GEMM kernel");
    return MRT_STATUS_OK;
}

#ifndef MRT_CUDA_EMULATED
// Y = beta * C broadcast (float32/float64), the addend cuBLAS then accumulates onto with beta = 1, as the CPU does.
template <typename T> __global__ void fill_beta_c(const T *c, T *y, int64_t m, int64_t n, int64_t c_rs, int64_t c_cs, T beta)
{
    MRT_CU_FOR(i, m * n) y[i] = beta * c[(i / n) * c_rs + (i % n) * c_cs];
}

// One strided batch of row-major products on cuBLAS: Y^T = B^T A^T in its column-major terms. False (nothing done)
// when the dtype is not one it takes here; a failed call fails the node.
mrt_status cublas_batch(mrt_op_ctx *ctx, mrt_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                        const void *a, int64_t stride_a, const void *b, int64_t stride_b, double beta, void *y,
                        int64_t batch, bool *done)
{
    *done = false;
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batch > INT32_MAX) return MRT_STATUS_OK;
    cudaDataType_t type;
    cublasComputeType_t compute;
    switch (dt) {
    case MRT_DTYPE_FLOAT:
        type = CUDA_R_32F;
        compute = ctx->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_PEDANTIC;
        break;
    case MRT_DTYPE_DOUBLE: type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F; break;
    case MRT_DTYPE_FLOAT16: type = CUDA_R_16F, compute = CUBLAS_COMPUTE_32F; break;
    case MRT_DTYPE_BFLOAT16: type = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F; break;
    default: return MRT_STATUS_OK;
    }
    cublasHandle_t h;
    MRT_TRY(mrt_cuda_cublas(ctx, &h));
    float af = (float)alpha, bf = (float)beta;
    const void *pa = dt == MRT_DTYPE_DOUBLE ? (const void *)&alpha : (const void *)&af;
    const void *pb = dt == MRT_DTYPE_DOUBLE ? (const void *)&beta : (const void *)&bf;
    cublasStatus_t s = cublasGemmStridedBatchedEx(
        h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, pa, b, type,
        (int)(tb ? k : n), stride_b, a, type, (int)(ta ? m : k), stride_a, pb, y, type, (int)n, m * n, (int)batch, compute,
        CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "cublasGemmStridedBatchedEx failed (%d)", (int)s);
    *done = true;
    return MRT_STATUS_OK;
}
#endif

// ------------------------------------------------------------------ Gemm

mrt_status cu_gemm(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1), *c = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool ta = mrt_attr_int(ctx, "transA", 0) != 0, tb = mrt_attr_int(ctx, "transB", 0) != 0;
    int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1], n = tb ? b->shape[0] : b->shape[1];
    geom g = mrt_cu_gemm::plain(m, n, k);
    g.a_rs = ta ? 1 : k, g.a_cs = ta ? m : 1;
    g.b_rs = tb ? 1 : n, g.b_cs = tb ? k : 1;
    g.alpha = mrt_attr_float(ctx, "alpha", 1.0f);
    g.beta = mrt_attr_float(ctx, "beta", 1.0f);
    mrt_dtype dt = a->dtype;
    bool integer = !(dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || is_half(dt));
    // floats skip a zero-scaled C (its infinities included), as the CPU's prefill does; integers always add beta * C
    g.has_c = c && (integer || g.beta != 0);
    g.int_exact = g.alpha == 1.0 && (g.beta == 1.0 || !c);
    if (c) {
        int64_t c0 = c->rank == 2 ? c->shape[0] : 1, c1 = c->rank >= 1 ? c->shape[c->rank - 1] : 1;
        g.c_rs = c0 == 1 ? 0 : c1, g.c_cs = c1 == 1 ? 0 : 1;
    }
    if (m == 0 || n == 0) return MRT_STATUS_OK;
#ifndef MRT_CUDA_EMULATED
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || (is_half(dt) && !g.has_c)) {
        bool done;
        if (g.has_c) {
            if (dt == MRT_DTYPE_FLOAT) {
                auto *kf = fill_beta_c<float>;
                MRT_LAUNCH(kf, mrt_cu_blocks(m * n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const float *)c->data,
                           (float *)y->data, m, n, g.c_rs, g.c_cs, (float)g.beta);
            } else {
                auto *kd = fill_beta_c<double>;
                MRT_LAUNCH(kd, mrt_cu_blocks(m * n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const double *)c->data,
                           (double *)y->data, m, n, g.c_rs, g.c_cs, (double)(float)g.beta);
            }
            MRT_CU_CHECK_LAUNCH(ctx, "Gemm C prefill");
        }
        MRT_TRY(cublas_batch(ctx, dt, ta, tb, m, n, k, g.alpha, a->data, 0, b->data, 0, g.has_c ? 1.0 : 0.0, y->data, 1, &done));
        if (done) return MRT_STATUS_OK;
    }
#endif
    return run_own(ctx, dt, a->data, b->data, c ? c->data : NULL, y->data, g);
}

// ------------------------------------------------------------------ MatMul

// Batch strides of an operand whose own batch dims (aligned, 1 where broadcast) hold matrices of `mat` elements.
void batch_strides(const mrt_matmul_dims *d, const int64_t *own, int64_t mat, int64_t *bs)
{
    int64_t s = mat;
    for (int i = d->batch_rank - 1; i >= 0; i--) {
        bs[i] = own[i] == 1 ? 0 : s;
        s *= own[i];
    }
}

mrt_status cu_matmul(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    geom g = mrt_cu_gemm::plain(d.m, d.n, d.k);
    int64_t abs_[MRT_MAX_RANK], bbs[MRT_MAX_RANK], ybs[MRT_MAX_RANK];
    batch_strides(&d, d.a_batch, d.m * d.k, abs_);
    batch_strides(&d, d.b_batch, d.k * d.n, bbs);
    batch_strides(&d, d.batch, d.m * d.n, ybs);
    for (int i = 0; i < d.batch_rank; i++) mrt_cu_gemm::add_batch(&g, d.batch[i], abs_[i], bbs[i], 0, ybs[i]);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
#ifndef MRT_CUDA_EMULATED
    {
        // the batch as one strided batch: each operand either varies with every batch dim or with none
        bool a_all = true, a_none = true, b_all = true, b_none = true;
        for (int i = 0; i < d.batch_rank; i++) {
            if (d.batch[i] == 1) continue;
            a_all = a_all && d.a_batch[i] != 1, a_none = a_none && d.a_batch[i] == 1;
            b_all = b_all && d.b_batch[i] != 1, b_none = b_none && d.b_batch[i] == 1;
        }
        int64_t nb = g.batch_count;
        bool done = false;
        if (b_none && a_all) // one B for every batch: A's batches stack into one tall product
            MRT_TRY(cublas_batch(ctx, a->dtype, false, false, nb * d.m, d.n, d.k, 1.0, a->data, 0, b->data, 0, 0.0,
                                 y->data, 1, &done));
        else if ((a_all || a_none) && (b_all || b_none))
            MRT_TRY(cublas_batch(ctx, a->dtype, false, false, d.m, d.n, d.k, 1.0, a->data, a_all ? d.m * d.k : 0, b->data,
                                 b_all ? d.k * d.n : 0, 0.0, y->data, nb, &done));
        if (done) return MRT_STATUS_OK;
    }
#endif
    return run_own(ctx, a->dtype, a->data, b->data, NULL, y->data, g);
}

// ------------------------------------------------------------------ MatMulInteger

// A zero point: kind 0 scalar (or none: data NULL), 1 per row of A / column of B, 2 per batch matrix and row/column.
struct zp {
    const void *data;
    bool is_signed;
    int kind;
};

__device__ __forceinline__ int32_t ld8(const void *p, bool is_signed, int64_t i)
{
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

__device__ __forceinline__ int32_t zp_at(const zp &z, int64_t mat, int64_t len, int64_t i)
{
    if (!z.data) return 0;
    return ld8(z.data, z.is_signed, z.kind == 0 ? 0 : z.kind == 1 ? i : mat * len + i);
}

// One thread per output: int32 products of the shifted operands, summed in wrapping 64-bit then truncated (the CPU's
// int64 sum cast to int32).
__global__ void matmulinteger_kernel(const void *a, bool a_signed, const void *b, bool b_signed, zp za, zp zb,
                                     int32_t *y, geom g)
{
    MRT_CU_FOR(o, g.batch_count * g.m * g.n) {
        int64_t t = o / (g.m * g.n), i = o / g.n % g.m, j = o % g.n, ia = 0, ib = 0, rest = t;
        for (int d = g.batch_rank - 1; d >= 0; d--) {
            int64_t x = rest % g.batch[d];
            rest /= g.batch[d];
            ia += x * g.a_bs[d], ib += x * g.b_bs[d];
        }
        const int64_t mat_a = ia / (g.m * g.k > 0 ? g.m * g.k : 1), mat_b = ib / (g.k * g.n > 0 ? g.k * g.n : 1);
        const int32_t zr = zp_at(za, mat_a, g.m, i), zc = zp_at(zb, mat_b, g.n, j);
        uint64_t s = 0;
        for (int64_t p = 0; p < g.k; p++)
            s += (uint64_t)(int64_t)((ld8(a, a_signed, ia + i * g.k + p) - zr) * (ld8(b, b_signed, ib + p * g.n + j) - zc));
        y[o] = (int32_t)(uint32_t)s;
    }
}

zp zp_of(const mrt_tensor *z)
{
    zp v = {NULL, false, 0};
    if (!z) return v;
    v.data = z->data;
    v.is_signed = z->dtype == MRT_DTYPE_INT8;
    v.kind = mrt_tensor_numel(z) == 1 && z->rank <= 1 ? 0 : z->rank == 1 ? 1 : 2;
    return v;
}

mrt_status cu_matmulinteger(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    geom g = mrt_cu_gemm::plain(d.m, d.n, d.k);
    int64_t abs_[MRT_MAX_RANK], bbs[MRT_MAX_RANK];
    batch_strides(&d, d.a_batch, d.m * d.k, abs_);
    batch_strides(&d, d.b_batch, d.k * d.n, bbs);
    for (int i = 0; i < d.batch_rank; i++) mrt_cu_gemm::add_batch(&g, d.batch[i], abs_[i], bbs[i], 0, 0);
    int64_t total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    auto *k = matmulinteger_kernel;
    MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)a->data,
               a->dtype == MRT_DTYPE_INT8, (const void *)b->data, b->dtype == MRT_DTYPE_INT8, zp_of(mrt_input(ctx, 2)),
               zp_of(mrt_input(ctx, 3)), (int32_t *)y->data, g);
    MRT_CU_CHECK_LAUNCH(ctx, "MatMulInteger kernel");
    return MRT_STATUS_OK;
}

} // namespace

#define W MRT_KERNEL_WRITES_ALL
extern "C" const mrt_kernel mrt_cuda_kernels_gemm[] = {
    MRT_CU_ROW("Gemm", 1, cu_gemm, W),
    MRT_CU_ROW("MatMul", 1, cu_matmul, W),
    MRT_CU_ROW("MatMulInteger", 10, cu_matmulinteger, W),
    {},
};
#undef W
