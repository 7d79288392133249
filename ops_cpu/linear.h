/* Small helpers shared by the CPU kernels of the conv, gemm and pool families: float16/bfloat16 widening
 * (those dtypes compute in float), and GEMM calls that tolerate the degenerate sizes BLAS rejects. */
#pragma once

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "engine/op.h"
#include "ops_cpu/blas.h"

/* Widen a float16/bfloat16 (or float) tensor into f (numel floats). */
static inline void mrt_lin_widen_into(const mrt_tensor *t, float *f)
{
    int64_t n = mrt_tensor_numel(t);
    if (t->dtype == MRT_DTYPE_FLOAT16) {
        const mrt_f16 *h = t->data;
        for (int64_t i = 0; i < n; i++) f[i] = mrt_f16_to_f32(h[i]);
    } else if (t->dtype == MRT_DTYPE_BFLOAT16) {
        const mrt_bf16 *h = t->data;
        for (int64_t i = 0; i < n; i++) f[i] = mrt_bf16_to_f32(h[i]);
    } else if (n > 0) {
        memcpy(f, t->data, (size_t)n * sizeof(float));
    }
}

/* Round float values into a float16/bfloat16 (or float) tensor. */
static inline void mrt_lin_narrow(mrt_tensor *t, const float *f)
{
    int64_t n = mrt_tensor_numel(t);
    if (t->dtype == MRT_DTYPE_FLOAT16) {
        mrt_f16 *h = t->data;
        for (int64_t i = 0; i < n; i++) h[i] = mrt_f32_to_f16(f[i]);
    } else if (t->dtype == MRT_DTYPE_BFLOAT16) {
        mrt_bf16 *h = t->data;
        for (int64_t i = 0; i < n; i++) h[i] = mrt_f32_to_bf16(f[i]);
    } else if (n > 0) {
        memcpy(t->data, f, (size_t)n * sizeof(float));
    }
}

static inline bool mrt_lin_is_half(mrt_dtype dt) { return dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16; }

/* BLAS takes 32-bit sizes here: refuse larger problems instead of truncating them. */
static inline mrt_status mrt_lin_blas_check(const mrt_op_ctx *ctx, int64_t m, int64_t n, int64_t k)
{
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "GEMM of %lld x %lld x %lld exceeds the BLAS size limit",
                           (long long)m, (long long)n, (long long)k);
    return MRT_STATUS_OK;
}

/* C = alpha*op(A)*op(B) + beta*C, also for k == 0 (where BLAS would reject lda = 0). */
static inline void mrt_lin_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                                 int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0 ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    mrt_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static inline void mrt_lin_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                                 int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0 ? 0.0 : beta * c[i * ldc + j];
        return;
    }
    mrt_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
