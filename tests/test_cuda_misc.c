/* The CUDA misc family (ops_cuda/misc.cu: Einsum 12, Det 11/22, Bernoulli 15/22, RandomUniform/Normal(Like) 1/22)
 * against the CPU kernels (tests/harness.h th_cuda_check): Einsum on the GEMM form (batched, transposed operands,
 * outer products, matrix-vector) and on the loop kernel (diagonals, broadcasting "...", three inputs, sums, integer
 * wrap-around), empty labels; Det over batches, singular and empty; the random ops and Bernoulli bit for bit (the
 * CPU's MT19937 draws), seeded or not, every float output type. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

static void einsum_case(const char *eq, mrt_dtype dt, int n, const int *ranks, const int64_t (*shapes)[4])
{
    th_rng r;
    th_rng_init(&r, th_seed(eq));
    mrt_tensor x[3];
    th_case *c = th_begin("Einsum", "", 12);
    for (int i = 0; i < n; i++) {
        x[i] = th_rand(&r, dt, ranks[i], shapes[i], -3, 3);
        th_input(c, &x[i]);
    }
    th_attr_string(c, "equation", eq);
    char label[128];
    snprintf(label, sizeof label, "einsum %s %s", eq, mrt_dtype_name(dt));
    th_cuda_check(c, 1, 2, label); /* the GEMM form sums float in float, as the CPU's sgemm, in another order */
    for (int i = 0; i < n; i++) mrt_tensor_release(&x[i]);
    th_free(c);
}

Test(cuda_misc, einsum_gemm_and_loop)
{
    th_cuda_require();
    static const struct {
        const char *eq;
        int n, ranks[3];
        int64_t shapes[3][4];
    } cases[] = {
        {"bij,bjk->bik", 2, {3, 3}, {{3, 4, 5}, {3, 5, 6}}},
        {"ij,kj->ik", 2, {2, 2}, {{7, 3}, {5, 3}}},
        {"ij,jk->ki", 2, {2, 2}, {{4, 3}, {3, 6}}},
        {"i,j->ij", 2, {1, 1}, {{5}, {7}}},
        {"ij,j->i", 2, {2, 1}, {{6, 4}, {4}}},
        {"bhqd,bhkd->bhqk", 2, {4, 4}, {{2, 3, 5, 4}, {2, 3, 6, 4}}},
        {"abc,cd->abd", 2, {3, 2}, {{2, 17, 3}, {3, 33}}},
        {"ii->i", 1, {2}, {{5, 5}}},
        {"ii", 1, {2}, {{4, 4}}},
        {"ij->", 1, {2}, {{3, 7}}},
        {"ji", 1, {2}, {{3, 7}}},
        {"...ij,...jk->...ik", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},
        {"bij,bj->bi", 2, {3, 2}, {{1, 3, 4}, {3, 4}}},
        {"ij,jk,kl->il", 3, {2, 2, 2}, {{3, 4}, {4, 5}, {5, 2}}},
        {"ijk,ikl->jl", 2, {3, 3}, {{3, 2, 4}, {3, 4, 5}}},
        {"ij,jk->ik", 2, {2, 2}, {{3, 0}, {0, 4}}},
        {"ij,jk->ik", 2, {2, 2}, {{0, 3}, {3, 4}}},
    };
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_FLOAT16, MRT_DTYPE_UINT8};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
            einsum_case(cases[i].eq, dts[d], cases[i].n, cases[i].ranks, (const int64_t(*)[4])cases[i].shapes);
}

Test(cuda_misc, det)
{
    th_cuda_require();
    static const struct {
        int rank;
        int64_t shape[4];
    } shapes[] = {{2, {1, 1}}, {2, {4, 4}}, {3, {5, 3, 3}}, {4, {2, 3, 6, 6}}, {3, {0, 3, 3}}, {2, {0, 0}}};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    th_rng r;
    th_rng_init(&r, th_seed("det"));
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t d = 0; d < 3; d++) {
            mrt_tensor x = th_rand(&r, dts[d], shapes[i].rank, shapes[i].shape, -2, 2);
            th_case *c = th_begin("Det", "", d == 2 ? 11 : 22);
            th_input(c, &x);
            char label[64];
            snprintf(label, sizeof label, "det shape %zu %s", i, mrt_dtype_name(dts[d]));
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&x);
            th_free(c);
        }
    int64_t s[3] = {2, 3, 3};
    double v[18] = {1, 2, 3, 2, 4, 6, 1, 0, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6}; /* singular: rows 1-2, a zero row */
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 3, s, v);
    th_case *c = th_begin("Det", "", 22);
    th_input(c, &x);
    th_cuda_check(c, 1, 1, "det singular");
    mrt_tensor_release(&x);
    th_free(c);
}

static void random_case(const char *op, int opset, mrt_dtype dt, int64_t seed, bool like)
{
    int64_t shape[3] = {3, 17, 5};
    th_rng r;
    th_rng_init(&r, th_seed(op));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, shape, 0, 1);
    th_case *c = th_begin(op, "", opset);
    if (like) th_input(c, &x);
    else th_attr_ints(c, "shape", 3, shape);
    th_attr_int(c, "dtype", dt);
    if (seed >= 0) th_attr_float(c, "seed", (float)seed);
    if (op[6] == 'N') {
        th_attr_float(c, "mean", 0.5f);
        th_attr_float(c, "scale", 2.0f);
    } else {
        th_attr_float(c, "low", -1.0f);
        th_attr_float(c, "high", 3.0f);
    }
    char label[96];
    snprintf(label, sizeof label, "%s-%d %s seed %lld", op, opset, mrt_dtype_name(dt), (long long)seed);
    th_cuda_check(c, 1, 0, label);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(cuda_misc, random_ops)
{
    th_cuda_require();
    static const char *const ops[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"};
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (int o = 0; o < 4; o++)
        for (int d = 0; d < 4; d++) random_case(ops[o], d % 2 ? 1 : 22, dts[d], d == 3 ? -1 : 5 + d, o >= 2);
}

Test(cuda_misc, bernoulli)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("bernoulli"));
    int64_t shapes[3][2] = {{0, 3}, {7, 9}, {40, 33}};
    mrt_dtype outs[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, MRT_DTYPE_BOOL};
    for (int i = 0; i < 3; i++) {
        mrt_tensor x = th_rand(&r, i == 1 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 2, shapes[i], 0, 1);
        th_case *c = th_begin("Bernoulli", "", i ? 22 : 15);
        th_input(c, &x);
        th_attr_int(c, "dtype", outs[i]);
        th_attr_float(c, "seed", (float)(i * 3));
        char label[64];
        snprintf(label, sizeof label, "bernoulli %d", i);
        th_cuda_check(c, 1, 0, label);
        mrt_tensor_release(&x);
        th_free(c);
    }
}
