/* The only file that includes cblas.h: every CPU kernel reaches OpenBLAS through these wrappers, so the
 * BLAS in use (and its threading) is decided in one place. Row-major, no transposition flags beyond trans_a/b. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cblas.h>

/* y[i * incy] = alpha * sum_k A[i, k] * x[k * incx] + beta * y[i * incy], A row-major (ops_cpu/matvec.c). */
void mrt_matvec_f32(int64_t m, int64_t k, float alpha, const float *a, int64_t lda, const float *x, int64_t incx,
                    float beta, float *y, int64_t incy);
void mrt_matvec_f64(int64_t m, int64_t k, double alpha, const double *a, int64_t lda, const double *x,
                    int64_t incx, double beta, double *y, int64_t incy);

/* C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C; lda/ldb/ldc are row strides in elements.
   A single column (n == 1, A not transposed) goes to mrt_matvec: OpenBLAS would malloc on that path. */
static inline void mrt_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                             int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (n == 1 && !trans_a) {
        mrt_matvec_f32(m, k, alpha, a, lda, b, trans_b ? 1 : ldb, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
                (blasint)ldc);
}

static inline void mrt_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                             const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                             int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (n == 1 && !trans_a) {
        mrt_matvec_f64(m, k, alpha, a, lda, b, trans_b ? 1 : ldb, beta, c, ldc);
        return;
    }
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
                (blasint)ldc);
}
