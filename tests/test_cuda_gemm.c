/* CUDA Gemm, MatMul and MatMulInteger (ops_cuda/gemm.cu) against the CPU kernels (ops_cpu/gemm.c): every dtype,
 * transposes, alpha/beta, every C broadcast, numpy batch broadcasting and 1-D operands, odd and empty sizes. Runs on the
 * emulated module under ctest (small shapes: it computes a few MFLOP/s). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void fill_range(mrt_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: *lo = 0, *hi = 1000; break;
    case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: *lo = -1000, *hi = 1000; break;
    default: *lo = -2, *hi = 2; break;
    }
}

static void gemm_case(th_rng *r, mrt_dtype dt, int64_t m, int64_t n, int64_t k, int ta, int tb, int c_rank,
                      const int64_t *c_shape, double alpha, double beta, int opset)
{
    double lo, hi;
    fill_range(dt, &lo, &hi);
    th_case *c = th_begin("Gemm", "", opset);
    int64_t as[2] = {ta ? k : m, ta ? m : k}, bs[2] = {tb ? n : k, tb ? k : n};
    mrt_tensor a = th_rand(r, dt, 2, as, lo, hi), b = th_rand(r, dt, 2, bs, lo, hi), cc = {0};
    th_input(c, &a);
    th_input_const(c, &b);
    if (c_rank >= 0) {
        cc = th_rand(r, dt, c_rank, c_shape, lo, hi);
        th_input(c, &cc);
    }
    th_attr_int(c, "transA", ta);
    th_attr_int(c, "transB", tb);
    th_attr_float(c, "alpha", (float)alpha);
    th_attr_float(c, "beta", (float)beta);
    char label[160];
    snprintf(label, sizeof label, "Gemm %s m%lld n%lld k%lld ta%d tb%d C rank %d alpha %g beta %g",
             mrt_dtype_name(dt), (long long)m, (long long)n, (long long)k, ta, tb, c_rank, alpha, beta);
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    if (c_rank >= 0) mrt_tensor_release(&cc);
    th_free(c);
}

Test(cuda_gemm, gemm_transposes_scales_and_c_broadcasts)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_gemm"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (size_t d = 0; d < 4; d++)
        for (int t = 0; t < 4; t++) {
            int64_t cs[2] = {21, 19};
            gemm_case(&r, dts[d], 21, 19, 37, t & 1, t >> 1, 2, cs, 1.0, 1.0, 13);
        }
    /* C as a scalar, a row, a column, [1, 1], [M, N]; alpha/beta; no C; beta 0 with C */
    int64_t c_row[1] = {17}, c_col[2] = {5, 1}, c_one[2] = {1, 1}, c_full[2] = {5, 17}, c_sc[1] = {1};
    gemm_case(&r, MRT_DTYPE_FLOAT, 5, 17, 33, 0, 1, 0, c_sc, 0.5, 2.0, 13);
    gemm_case(&r, MRT_DTYPE_FLOAT, 5, 17, 33, 1, 0, 1, c_row, 1.0, -1.5, 13);
    gemm_case(&r, MRT_DTYPE_DOUBLE, 5, 17, 33, 0, 0, 2, c_col, 0.25, 1.0, 13);
    gemm_case(&r, MRT_DTYPE_FLOAT, 5, 17, 33, 0, 0, 2, c_one, 1.0, 1.0, 11);
    gemm_case(&r, MRT_DTYPE_FLOAT, 5, 17, 33, 0, 0, 2, c_full, 1.0, 0.0, 7);
    gemm_case(&r, MRT_DTYPE_FLOAT, 5, 17, 33, 0, 0, -1, NULL, 3.0, 1.0, 13);
    gemm_case(&r, MRT_DTYPE_FLOAT, 1, 1, 1, 0, 0, -1, NULL, 1.0, 1.0, 13);
    gemm_case(&r, MRT_DTYPE_FLOAT, 40, 1, 70, 1, 1, 1, c_sc, 1.0, 1.0, 13);
    /* empty: no rows, and K = 0 (Y = beta * C) */
    int64_t c0[2] = {0, 6}, c6[1] = {6};
    gemm_case(&r, MRT_DTYPE_FLOAT, 0, 6, 4, 0, 0, 2, c0, 1.0, 1.0, 13);
    gemm_case(&r, MRT_DTYPE_FLOAT, 3, 6, 0, 0, 0, 1, c6, 1.0, 2.0, 13);
}

Test(cuda_gemm, gemm_integers_are_exact)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_gemm_int"));
    static const mrt_dtype dts[] = {MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64};
    int64_t cs[2] = {1, 11};
    for (size_t d = 0; d < 4; d++) {
        gemm_case(&r, dts[d], 9, 11, 13, 0, 1, 2, cs, 1.0, 1.0, 13);  /* wrapping sums */
        gemm_case(&r, dts[d], 9, 11, 13, 1, 0, 2, cs, 2.5, -1.0, 13); /* through double, saturated */
        gemm_case(&r, dts[d], 9, 11, 13, 0, 0, -1, NULL, 1.0, 1.0, 13);
    }
}

static void matmul_case(th_rng *r, const char *op, mrt_dtype dt, int ra, const int64_t *as, int rb, const int64_t *bs)
{
    double lo, hi;
    fill_range(dt, &lo, &hi);
    if (dt == MRT_DTYPE_UINT8) lo = 0, hi = 255;
    if (dt == MRT_DTYPE_INT8) lo = -128, hi = 127;
    th_case *c = th_begin(op, "", strcmp(op, "MatMul") ? 10 : 13);
    mrt_tensor a = th_rand(r, dt, ra, as, lo, hi), b = th_rand(r, dt, rb, bs, lo, hi);
    th_input(c, &a);
    th_input(c, &b);
    char label[160];
    snprintf(label, sizeof label, "%s %s ranks %d x %d", op, mrt_dtype_name(dt), ra, rb);
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    th_free(c);
}

/* Batch shapes: equal, B broadcast, A broadcast, both partly broadcast, 1-D on either side, empty batch. */
static const struct {
    int ra;
    int64_t as[4];
    int rb;
    int64_t bs[4];
} mm_shapes[] = {
    {2, {13, 21}, 2, {21, 17}},          {3, {3, 7, 19}, 3, {3, 19, 5}},    {3, {4, 6, 9}, 2, {9, 18}},
    {2, {6, 9}, 4, {2, 3, 9, 7}},        {4, {2, 1, 5, 8}, 4, {1, 3, 8, 6}}, {1, {23}, 3, {2, 23, 4}},
    {3, {2, 5, 23}, 1, {23}},            {1, {31}, 1, {31}},                {3, {0, 4, 5}, 2, {5, 3}},
    {2, {33, 40}, 2, {40, 35}},
};

Test(cuda_gemm, matmul_broadcasts_batches_as_the_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_matmul"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16,
                                    MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64};
    for (size_t s = 0; s < sizeof mm_shapes / sizeof mm_shapes[0]; s++)
        for (size_t d = 0; d < 8; d++) {
            if (d >= 2 && s == 9) continue; /* the larger case once per float width is enough */
            matmul_case(&r, "MatMul", dts[d], mm_shapes[s].ra, mm_shapes[s].as, mm_shapes[s].rb, mm_shapes[s].bs);
        }
}

static void mmi_case(th_rng *r, mrt_dtype da, mrt_dtype db, int ra, const int64_t *as, int rb, const int64_t *bs,
                     int za_rank, const int64_t *za_shape, int zb_rank, const int64_t *zb_shape)
{
    th_case *c = th_begin("MatMulInteger", "", 10);
    double alo = da == MRT_DTYPE_INT8 ? -128 : 0, ahi = da == MRT_DTYPE_INT8 ? 127 : 255;
    double blo = db == MRT_DTYPE_INT8 ? -128 : 0, bhi = db == MRT_DTYPE_INT8 ? 127 : 255;
    mrt_tensor a = th_rand(r, da, ra, as, alo, ahi), b = th_rand(r, db, rb, bs, blo, bhi), za = {0}, zb = {0};
    th_input(c, &a);
    th_input(c, &b);
    if (za_rank >= 0) {
        za = th_rand(r, da, za_rank, za_shape, alo, ahi);
        th_input(c, &za);
    } else if (zb_rank >= 0) {
        th_input_absent(c);
    }
    if (zb_rank >= 0) {
        zb = th_rand(r, db, zb_rank, zb_shape, blo, bhi);
        th_input(c, &zb);
    }
    th_cuda_check(c, 1, 1, "MatMulInteger");
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    if (za_rank >= 0) mrt_tensor_release(&za);
    if (zb_rank >= 0) mrt_tensor_release(&zb);
    th_free(c);
}

Test(cuda_gemm, matmulinteger_zero_points_are_exact)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_matmulinteger"));
    int64_t as[3] = {2, 7, 13}, bs[3] = {2, 13, 9}, b2[2] = {13, 9}, sc[1] = {1};
    int64_t za_row[1] = {7}, zb_col[1] = {9}, za_batch[3] = {2, 7, 1}, zb_batch[3] = {2, 1, 9};
    mmi_case(&r, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8, 3, as, 3, bs, -1, NULL, -1, NULL);
    mmi_case(&r, MRT_DTYPE_UINT8, MRT_DTYPE_INT8, 3, as, 2, b2, 0, sc, 0, sc);
    mmi_case(&r, MRT_DTYPE_INT8, MRT_DTYPE_UINT8, 3, as, 3, bs, 1, za_row, 1, zb_col);
    mmi_case(&r, MRT_DTYPE_INT8, MRT_DTYPE_INT8, 3, as, 3, bs, 3, za_batch, 3, zb_batch);
    mmi_case(&r, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8, 3, as, 3, bs, -1, NULL, 1, zb_col);
}

/* A long reduction (a dot product of 32768 positive terms, where one running float sum loses the most): the CUDA
   GEMM sums a tile's 16 products, then 16 tiles, then the rest (ops_cuda/gemm.cuh), so its error does not grow
   with K as one running sum's did (1.7e-6 here; 6e-7 with two levels; 1e-7 with three). Against the float64 sum of
   the same float inputs. */
Test(cuda_gemm, long_reductions_sum_by_tiles)
{
    th_cuda_require();
    enum { K = 32768 };
    th_rng r;
    th_rng_init(&r, th_seed("cuda_gemm_long_k"));
    int64_t as[2] = {1, K}, bs[2] = {K, 1};
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 2, as, 0.0, 1.0), b = th_rand(&r, MRT_DTYPE_FLOAT, 2, bs, 0.5, 1.0);
    double exact = 0;
    for (int64_t i = 0; i < K; i++) exact += (double)((float *)a.data)[i] * (double)((float *)b.data)[i];
    th_case *c = th_begin("MatMul", "", 13);
    th_input(c, &a);
    th_input(c, &b);
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    mrt_tensor y = {0};
    cr_assert_eq(th_run_opt(c, &o, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double got = ((float *)y.data)[0], rel = fabs(got - exact) / exact;
    cr_expect_leq(rel, 3e-7, "K = %d: %.9g against %.9g (relative error %.3g)", K, got, exact, rel);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    th_free(c);
}
