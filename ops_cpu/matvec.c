/* Matrix times one column, for mrt_sgemm/mrt_dgemm when n == 1 (blas.h). OpenBLAS 0.3.21 calls malloc on every
 * such call (its GEMV path), which breaks "nothing allocates inside a run" for squeeze-excite 1x1 convolutions
 * and batch-1 MatMuls against a vector. The dot products keep 16 partial sums in a fixed order, so the result
 * does not depend on which clone (AVX-512, AVX2, baseline) runs or on the thread count. */
#include "ops_cpu/blas.h"
#include "ops_cpu/simd.h"

#define LANES 16

/* 16 rows of short length k: acc[j][r] is row r's partial sum j, built and folded by exactly the operations the
   row loop below does (the products k = j mod 16 added in order to +0, then the pairwise folds), with the rows as
   the vector lanes. ConvBERT's lightweight convolutions are 192 products [64, 9] x [9, 1]: a row at a time, the
   16-sum fold dominated (0.3-0.6 ms each on 2 threads). */
#define DEFINE_MATVEC_ROWS16(NAME, T)                                                                             \
    MRT_VECTORIZE_CLONES                                                                                          \
    static void NAME##_rows16(int64_t k, T alpha, const T *a, int64_t lda, const T *x, int64_t incx, T beta, T *y, \
                              int64_t incy)                                                                       \
    {                                                                                                             \
        T acc[LANES][LANES];                                                                                      \
        for (int j = 0; j < LANES; j++)                                                                           \
            for (int r = 0; r < LANES; r++) acc[j][r] = 0;                                                        \
        for (int64_t kk = 0; kk < k; kk++) {                                                                      \
            T xv = x[kk * incx];                                                                                  \
            T *aj = acc[kk % LANES];                                                                              \
            for (int r = 0; r < LANES; r++) aj[r] += a[r * lda + kk] * xv;                                        \
        }                                                                                                         \
        for (int w = LANES / 2; w > 0; w /= 2)                                                                    \
            for (int j = 0; j < w; j++)                                                                           \
                for (int r = 0; r < LANES; r++) acc[j][r] += acc[j + w][r];                                       \
        for (int r = 0; r < LANES; r++) {                                                                         \
            T *out = y + r * incy;                                                                                \
            *out = beta == 0 ? alpha * acc[0][r] : alpha * acc[0][r] + beta * *out;                               \
        }                                                                                                         \
    }

#define DEFINE_MATVEC(NAME, T)                                                                                    \
    DEFINE_MATVEC_ROWS16(NAME, T)                                                                                 \
    MRT_VECTORIZE_CLONES                                                                                          \
    void NAME(int64_t m, int64_t k, T alpha, const T *a, int64_t lda, const T *x, int64_t incx, T beta, T *y,    \
              int64_t incy)                                                                                       \
    {                                                                                                             \
        int64_t i = 0;                                                                                            \
        if (k <= 32) /* short rows: 16 at a time, the rows as lanes (below) */                                    \
            for (; i + LANES <= m; i += LANES) NAME##_rows16(k, alpha, a + i * lda, lda, x, incx, beta, y + i * incy, incy); \
        for (; i < m; i++) {                                                                                      \
            const T *row = a + i * lda;                                                                           \
            T acc[LANES] = {0};                                                                                   \
            int64_t kk = 0;                                                                                       \
            if (incx == 1) {                                                                                      \
                for (; kk + LANES <= k; kk += LANES)                                                              \
                    for (int j = 0; j < LANES; j++) acc[j] += row[kk + j] * x[kk + j];                            \
            }                                                                                                     \
            for (int j = 0; kk < k; kk++, j = (j + 1) % LANES) acc[j] += row[kk] * x[kk * incx];                  \
            for (int w = LANES / 2; w > 0; w /= 2) /* pairwise, in a fixed order */                             \
                for (int j = 0; j < w; j++) acc[j] += acc[j + w];                                                 \
            T *out = y + i * incy;                                                                                \
            *out = beta == 0 ? alpha * acc[0] : alpha * acc[0] + beta * *out; /* beta 0: y may be garbage */     \
        }                                                                                                         \
    }

DEFINE_MATVEC(mrt_matvec_f32, float)
DEFINE_MATVEC(mrt_matvec_f64, double)
