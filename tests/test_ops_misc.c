/* Einsum, Det, TopK, Unique, CumProd, Shrink, Dropout, NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss and the
 * random ops against the naive references of tests/ref/misc_ref.c: random shapes and equations with printed seeds,
 * float16/float/double/integer types, negative axes, empty tensors, the float64 oracle mode, and error cases. The
 * random ops can only be checked for shape, type, range, statistics and reproducibility. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/misc_ref.h"

static tol tol_of(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: return (tol){1e-22, 1e-11, 1e-10};
    case MRT_DTYPE_FLOAT16: return (tol){1e-5, 2e-2, 5e-3};
    case MRT_DTYPE_FLOAT: return (tol){1e-10, 1e-5, 1e-5};
    default: return (tol){0, 0, 0}; /* integers: exact */
    }
}

/* CHECK with this file's tolerances */
#define CHECK(got, expect, rank, shape, dt, ...) TH_CHECK_TOL(got, expect, rank, shape, tol_of(dt), __VA_ARGS__)

/* Expect failure with `status` and a message containing `needle`. */
static void expect_fail(th_case *c, int n_out, mrt_status status, const char *needle)
{
    mrt_tensor y[4];
    mrt_status st = th_run(c, n_out, y);
    cr_assert_eq(st, status, "expected %s, got %s (%s)", mrt_status_name(status), mrt_status_name(st), mrt_last_error());
    cr_assert(strstr(mrt_last_error(), needle), "message '%s' should mention '%s'", mrt_last_error(), needle);
    th_free(c);
}

static void release_all(int n, mrt_tensor *t)
{
    for (int i = 0; i < n; i++) mrt_tensor_release(&t[i]);
}

/* ================================================================== Einsum */

/* Run Einsum on the given tensors and compare with the reference; returns false when the reference rejects it. */
static void check_einsum(const char *eq, int n, mrt_tensor *x, mrt_dtype dt, bool fp64)
{
    double *xv[8];
    int rank[8];
    const int64_t *shape[8];
    for (int k = 0; k < n; k++) {
        xv[k] = th_to_f64(&x[k]);
        rank[k] = x[k].rank;
        shape[k] = x[k].shape;
    }
    double *want = NULL;
    int orank;
    int64_t oshape[16];
    cr_assert(ref_misc_einsum(eq, n, (const double *const *)xv, rank, shape, &want, &orank, oshape),
              "reference rejects '%s'", eq);
    th_case *c = th_begin("Einsum", "", 12);
    for (int k = 0; k < n; k++) th_input(c, &x[k]);
    th_attr_string(c, "equation", eq);
    mrt_tensor y;
    mrt_session_options opt = mrt_session_options_default();
    if (fp64) opt.precision = MRT_PRECISION_FP64;
    mrt_status st = th_run_opt(c, &opt, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "'%s' (%s): %s", eq, mrt_dtype_name(dt), mrt_last_error());
    CHECK(&y, want, orank, oshape, fp64 ? MRT_DTYPE_DOUBLE : dt, "einsum '%s' %s%s", eq, mrt_dtype_name(dt),
          fp64 ? " (fp64 mode)" : "");
    if (fp64) cr_assert_eq(y.dtype, MRT_DTYPE_DOUBLE);
    else cr_assert_eq(y.dtype, dt);
    mrt_tensor_release(&y);
    th_free(c);
    free(want);
    for (int k = 0; k < n; k++) free(xv[k]);
}

static mrt_tensor rand_typed(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape)
{
    if (mrt_dtype_is_integer(dt)) return th_rand(r, dt, rank, shape, -4, 4);
    return th_rand(r, dt, rank, shape, -1, 1);
}

Test(einsum, random_equations_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("einsum.random_equations"));
    const char pool[] = "abcdeXY";
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT64, MRT_DTYPE_INT32, MRT_DTYPE_FLOAT16};
    for (int iter = 0; iter < 300; iter++) {
        int64_t size[7];
        for (int l = 0; l < 7; l++) size[l] = th_rng_int(&r, 1, 4);
        int n = (int)th_rng_int(&r, 1, 3), n_ell = iter % 4 == 0 ? (int)th_rng_int(&r, 1, 2) : 0;
        int64_t ell_size[2] = {th_rng_int(&r, 1, 3), th_rng_int(&r, 2, 3)};
        mrt_dtype dt = dts[iter % 5];
        char eq[128];
        size_t pos = 0;
        bool used[7] = {false};
        mrt_tensor x[3];
        for (int k = 0; k < n; k++) {
            int nl = (int)th_rng_int(&r, 0, 3), rank = 0;
            int64_t shape[8];
            bool ell = n_ell > 0 && th_rng_int(&r, 0, 1);
            int ell_at = ell ? (int)th_rng_int(&r, 0, nl) : -1, e_k = ell ? (int)th_rng_int(&r, 0, n_ell) : 0;
            if (k) eq[pos++] = ',';
            for (int i = 0; i <= nl; i++) {
                if (i == ell_at) {
                    memcpy(eq + pos, "...", 3);
                    pos += 3;
                    for (int j = n_ell - e_k; j < n_ell; j++) /* size-1 dims broadcast */
                        shape[rank++] = th_rng_int(&r, 0, 3) == 0 ? 1 : ell_size[j];
                }
                if (i == nl) break;
                int l = (int)th_rng_int(&r, 0, 6);
                used[l] = true;
                eq[pos++] = pool[l];
                shape[rank++] = size[l];
            }
            x[k] = rand_typed(&r, dt, rank, shape);
        }
        if (iter % 3) { /* explicit output: a random subset of the used labels, in random order */
            memcpy(eq + pos, "->", 2);
            pos += 2;
            int order[7] = {0, 1, 2, 3, 4, 5, 6};
            for (int i = 6; i > 0; i--) {
                int j = (int)th_rng_int(&r, 0, i), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            bool put_ell = n_ell > 0;
            for (int i = 0; i < 7; i++) {
                if (put_ell && th_rng_int(&r, 0, 2) == 0) {
                    memcpy(eq + pos, "...", 3);
                    pos += 3;
                    put_ell = false;
                }
                if (used[order[i]] && th_rng_int(&r, 0, 1)) eq[pos++] = pool[order[i]];
            }
            if (put_ell && th_rng_int(&r, 0, 1)) {
                memcpy(eq + pos, "...", 3);
                pos += 3;
            }
        }
        eq[pos] = 0;
        check_einsum(eq, n, x, dt, false);
        release_all(n, x);
    }
}

/* Two-input contractions (the GEMM path), large enough that float32 accumulation order matters a little. */
Test(einsum, contractions_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("einsum.contractions"));
    struct {
        const char *eq;
        int ra, rb;
        int64_t a[4], b[4];
    } cases[] = {
        {"bij,bjk->bik", 3, 3, {3, 17, 19}, {3, 19, 23}},
        {"bhqd,bhkd->bhqk", 4, 4, {2, 3, 9, 16}, {2, 3, 11, 16}},
        {"ij,jk", 2, 2, {8, 5}, {5, 7}},
        {"ij,kj->ki", 2, 2, {8, 5}, {6, 5}},
        {"i,j->ij", 1, 1, {7}, {9}},
        {"i,i", 1, 1, {40}, {40}},
        {"...ij,...jk->...ik", 3, 2, {4, 3, 5}, {5, 2}},
        {"bn,anm,bm->ba", 2, 3, {3, 4}, {2, 4, 5}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool three = strcmp(cases[i].eq, "bn,anm,bm->ba") == 0;
        for (int dtk = 0; dtk < 2; dtk++) {
            mrt_dtype dt = dtk ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
            mrt_tensor x[3] = {th_rand(&r, dt, cases[i].ra, cases[i].a, -1, 1), th_rand(&r, dt, cases[i].rb, cases[i].b, -1, 1)};
            if (three) x[2] = th_rand(&r, dt, 2, (int64_t[]){3, 5}, -1, 1);
            check_einsum(cases[i].eq, three ? 3 : 2, x, dt, false);
            check_einsum(cases[i].eq, three ? 3 : 2, x, dt, true);
            release_all(three ? 3 : 2, x);
        }
    }
}

/* The GEMM's chain (ops_cpu/sgemm.h) for a two-input contraction "ab..,cd..->ef.." of single letters: each output
   element's summed labels (those not in the output) in ASCII order as one index k, an fmaf chain from 0 per block
   of 256 k, the blocks added in order. */
static void einsum_chain_ref(const char *eq, const mrt_tensor *x, float *y)
{
    char in[2][16] = {{0}}, out[16] = {0};
    const char *comma = strchr(eq, ','), *arrow = strstr(eq, "->");
    memcpy(in[0], eq, (size_t)(comma - eq));
    memcpy(in[1], comma + 1, (size_t)(arrow - comma - 1));
    strcpy(out, arrow + 2);
    int64_t size[128] = {0};
    for (int k = 0; k < 2; k++)
        for (int a = 0; in[k][a]; a++) size[(int)in[k][a]] = x[k].shape[a];
    char sum[16] = {0};
    int ns = 0;
    for (int l = 'A'; l <= 'z'; l++)
        if (size[l] && !strchr(out, l)) sum[ns++] = (char)l;
    int no = (int)strlen(out);
    int64_t total = 1, kt = 1, idx[128] = {0};
    for (int i = 0; i < no; i++) total *= size[(int)out[i]];
    for (int i = 0; i < ns; i++) kt *= size[(int)sum[i]];
    for (int64_t o = 0; o < total; o++) {
        int64_t rem = o;
        for (int i = no - 1; i >= 0; i--) idx[(int)out[i]] = rem % size[(int)out[i]], rem /= size[(int)out[i]];
        float acc = 0.0f, blk = 0.0f;
        for (int64_t k = 0; k < kt; k++) {
            int64_t r2 = k;
            for (int i = ns - 1; i >= 0; i--) idx[(int)sum[i]] = r2 % size[(int)sum[i]], r2 /= size[(int)sum[i]];
            float v[2];
            for (int t = 0; t < 2; t++) {
                int64_t off = 0;
                for (int a = 0; in[t][a]; a++) off = off * x[t].shape[a] + idx[(int)in[t][a]];
                v[t] = ((const float *)x[t].data)[off];
            }
            blk = fmaf(v[0], v[1], blk);
            if ((k + 1) % 256 == 0 || k + 1 == kt) {
                acc = k < 256 ? blk : acc + blk;
                blk = 0.0f;
            }
        }
        y[o] = acc;
    }
}

/* float32 contractions of the GEMM form run on minirt's GEMM: its chains, bit for bit, whether the operands are read
   in place (MaxViT's attention: "BGHID,BGHJD->BGHIJ" reads B transposed, "BGHIJ,BGHJD->BGHID"; a batch label that
   is not first), gathered (two summed labels in another order in A), or the output gathered (a permuted output);
   a sum over 300 (two k blocks); 1 and 2 threads (many small products go to the threads whole). */
Test(einsum, float32_contractions_give_the_gemm_chain_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("einsum.gemm_bits"));
    static const struct {
        const char *eq;
        int ra, rb;
        int64_t a[5], b[5];
    } cases[] = {
        {"BGHID,BGHJD->BGHIJ", 5, 5, {1, 3, 2, 7, 5}, {1, 3, 2, 9, 5}},
        {"BGHIJ,BGHJD->BGHID", 5, 5, {1, 3, 2, 7, 9}, {1, 3, 2, 9, 5}},
        {"bij,bjk->bki", 3, 3, {6, 5, 4}, {6, 4, 7}},
        {"ibj,bjk->bik", 3, 3, {5, 6, 4}, {6, 4, 7}},
        {"bjxi,bjxk->bik", 4, 4, {4, 3, 2, 5}, {4, 3, 2, 6}},
        {"bxji,bjxk->bik", 4, 4, {4, 2, 3, 5}, {4, 3, 2, 6}},
        {"ij,jk->ik", 2, 2, {9, 300}, {300, 50}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int threads = 1; threads <= 2; threads++) {
            mrt_tensor x[2] = {th_rand(&r, MRT_DTYPE_FLOAT, cases[ci].ra, cases[ci].a, -1, 1),
                               th_rand(&r, MRT_DTYPE_FLOAT, cases[ci].rb, cases[ci].b, -1, 1)};
            th_case *c = th_begin("Einsum", "", 12);
            th_input(c, &x[0]);
            th_input(c, &x[1]);
            th_attr_string(c, "equation", cases[ci].eq);
            mrt_session_options opt = mrt_session_options_default();
            opt.n_threads = threads;
            mrt_tensor y;
            cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
            int64_t n = mrt_tensor_numel(&y);
            float *want = malloc((size_t)n * sizeof(float));
            einsum_chain_ref(cases[ci].eq, x, want);
            for (int64_t i = 0; i < n; i++) {
                float got = ((const float *)y.data)[i];
                cr_assert(memcmp(&got, &want[i], sizeof got) == 0, "'%s', %d threads: element %lld is %.9g, the chain gives %.9g",
                          cases[ci].eq, threads, (long long)i, got, want[i]);
            }
            free(want);
            mrt_tensor_release(&y);
            release_all(2, x);
            th_free(c);
        }
}

Test(einsum, diagonals_traces_implicit_order_and_broadcast)
{
    th_rng r;
    th_rng_init(&r, th_seed("einsum.special"));
    mrt_tensor sq = th_rand(&r, MRT_DTYPE_DOUBLE, 2, (int64_t[]){4, 4}, -1, 1);
    check_einsum("ii", 1, &sq, MRT_DTYPE_DOUBLE, false);    /* trace */
    check_einsum("ii->i", 1, &sq, MRT_DTYPE_DOUBLE, false); /* diagonal */
    check_einsum("ji", 1, &sq, MRT_DTYPE_DOUBLE, false);    /* implicit output "ij": a transpose */
    check_einsum("ij->", 1, &sq, MRT_DTYPE_DOUBLE, false);  /* total */
    mrt_tensor cube = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){3, 3, 3}, -1, 1);
    check_einsum("iii->i", 1, &cube, MRT_DTYPE_FLOAT, false);
    check_einsum("iij->ji", 1, &cube, MRT_DTYPE_FLOAT, false);
    /* implicit output in ASCII order: upper case before lower case */
    mrt_tensor ab[2] = {th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, -1, 1),
                        th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 5}, -1, 1)};
    check_einsum("aB,Bc", 2, ab, MRT_DTYPE_FLOAT, false);
    check_einsum("Ba,ac", 2, ab, MRT_DTYPE_FLOAT, false);
    {
        th_case *c = th_begin("Einsum", "", 12);
        th_input(c, &ab[0]);
        th_input(c, &ab[1]);
        th_attr_string(c, "equation", "ab,bC");
        mrt_tensor y;
        RUN_OK(c, 1, &y, "ab,bC");
        cr_assert(y.rank == 2 && y.shape[0] == 5 && y.shape[1] == 2, "implicit 'ab,bC' must give [C, a] = [5, 2]");
        mrt_tensor_release(&y);
        th_free(c);
    }
    /* "..." broadcasting with size-1 dims, and a "..." dropped from the output (summed) */
    mrt_tensor bc[2] = {th_rand(&r, MRT_DTYPE_DOUBLE, 4, (int64_t[]){2, 1, 3, 4}, -1, 1),
                        th_rand(&r, MRT_DTYPE_DOUBLE, 3, (int64_t[]){5, 4, 2}, -1, 1)};
    check_einsum("...ij,...jk->...ik", 2, bc, MRT_DTYPE_DOUBLE, false);
    check_einsum("...ij,...jk->ik", 2, bc, MRT_DTYPE_DOUBLE, false);
    check_einsum("...ij,...jk", 2, bc, MRT_DTYPE_DOUBLE, false);
    /* batched diagonal, as in the ONNX test */
    mrt_tensor bd = th_rand(&r, MRT_DTYPE_DOUBLE, 3, (int64_t[]){3, 5, 5}, -1, 1);
    check_einsum("...ii ->...i", 1, &bd, MRT_DTYPE_DOUBLE, false);
    /* integer types wrap exactly, uint8 included */
    mrt_tensor iu[2] = {th_rand(&r, MRT_DTYPE_UINT8, 2, (int64_t[]){3, 4}, 0, 9), th_rand(&r, MRT_DTYPE_UINT8, 2, (int64_t[]){4, 2}, 0, 9)};
    {
        th_case *c = th_begin("Einsum", "", 12);
        th_input(c, &iu[0]);
        th_input(c, &iu[1]);
        th_attr_string(c, "equation", "ij,jk->ik");
        mrt_tensor y;
        RUN_OK(c, 1, &y, "uint8 matmul");
        const uint8_t *a = iu[0].data, *b = iu[1].data, *o = y.data;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 2; k++) {
                unsigned s = 0;
                for (int j = 0; j < 4; j++) s += (unsigned)a[i * 4 + j] * b[j * 2 + k];
                cr_assert_eq(o[i * 2 + k], (uint8_t)s, "uint8 [%d,%d]: %u vs %u", i, k, o[i * 2 + k], (unsigned)(uint8_t)s);
            }
        mrt_tensor_release(&y);
        th_free(c);
    }
    release_all(2, iu);
    release_all(1, &bd);
    release_all(2, bc);
    release_all(2, ab);
    release_all(1, &cube);
    release_all(1, &sq);
}

Test(einsum, empty_dims)
{
    th_rng r;
    th_rng_init(&r, th_seed("einsum.empty"));
    /* a contracted dim of 0: zeros; an output dim of 0: an empty output */
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 0}, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){0, 4}, -1, 1);
    mrt_tensor x[2] = {a, b};
    check_einsum("ij,jk->ik", 2, x, MRT_DTYPE_FLOAT, false);
    check_einsum("ij,jk->ki", 2, x, MRT_DTYPE_FLOAT, false);
    mrt_tensor e = th_rand(&r, MRT_DTYPE_DOUBLE, 2, (int64_t[]){0, 5}, -1, 1);
    check_einsum("ij->j", 1, &e, MRT_DTYPE_DOUBLE, false);
    check_einsum("ij->i", 1, &e, MRT_DTYPE_DOUBLE, false);
    mrt_tensor s = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){2.5});
    mrt_tensor ss[2] = {s, s};
    check_einsum(",->", 2, ss, MRT_DTYPE_FLOAT, false); /* scalars */
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&e);
    mrt_tensor_release(&s);
}

static void einsum_error(const char *eq, int n, const mrt_tensor *x, const char *needle)
{
    th_case *c = th_begin("Einsum", "", 12);
    for (int k = 0; k < n; k++) th_input(c, &x[k]);
    th_attr_string(c, "equation", eq);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, needle);
}

Test(einsum, malformed_equations_are_refused)
{
    mrt_tensor a = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, NULL), b = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){4, 5}, NULL);
    mrt_tensor ab[2] = {a, b}, ai[2] = {a, th_from_f64(MRT_DTYPE_INT64, 1, (int64_t[]){3}, NULL)};
    einsum_error("ij,jk->ik", 2, ab, "label 'j' has size 4 in input 1 but 3");
    einsum_error("ij", 2, ab, "1 input terms for 2 inputs");
    einsum_error("ij,jk,kl", 2, ab, "more input terms");
    einsum_error("ijk", 1, &a, "input term 0 has 3 labels but input 0 has rank 2");
    einsum_error("i1", 1, &a, "invalid character '1'");
    einsum_error("ij->iz", 1, &a, "output label 'z' is in no input term");
    einsum_error("ij->ii", 1, &a, "output label 'i' appears twice");
    einsum_error("ii", 1, &a, "label 'i' repeats in input 0 over dims of sizes 2 and 3");
    einsum_error("i..j", 1, &a, "ellipsis");
    einsum_error("...i...", 1, &a, "more than one ellipsis");
    einsum_error("ij->i->j", 1, &a, "more than one '->'");
    einsum_error("ij,j", 2, ai, "input 1 is int64 but input 0 is float");
    {
        th_case *c = th_begin("Einsum", "", 12);
        th_input(c, &a);
        expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "'equation' is required");
    }
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&ai[1]);
}

/* ================================================================== Det */

Test(det, batched_against_cofactor_expansion)
{
    th_rng r;
    th_rng_init(&r, th_seed("det.batched"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int iter = 0; iter < 60; iter++) {
        int64_t m = th_rng_int(&r, 0, 6), b0 = th_rng_int(&r, 0, 3), b1 = th_rng_int(&r, 1, 3);
        mrt_dtype dt = dts[iter % 3];
        int rank = iter % 4 == 0 ? 2 : 4;
        int64_t shape[4] = {b0, b1, m, m}, *sh = rank == 2 ? shape + 2 : shape;
        mrt_tensor x = th_rand(&r, dt, rank, sh, -2, 2), y;
        double *xv = th_to_f64(&x);
        int64_t batch = rank == 2 ? 1 : b0 * b1;
        double want[16];
        ref_misc_det(xv, batch, m, want);
        th_case *c = th_begin("Det", "", iter % 2 ? 11 : 22);
        th_input(c, &x);
        RUN_OK(c, 1, &y, "Det %s m=%lld", mrt_dtype_name(dt), (long long)m);
        /* float16 rounds the result itself: a relative check */
        tol t = tol_of(dt);
        if (dt == MRT_DTYPE_FLOAT) t.abs = 1e-4; /* up to 6x6 entries of size 2: determinants reach ~1e3 */
        char why[512];
        cr_assert(th_check_f64(&y, want, rank - 2, sh, t.nmse, t.abs, t.rel, why, sizeof why), "Det %s m=%lld: %s",
                  mrt_dtype_name(dt), (long long)m, why);
        mrt_tensor_release(&y);
        th_free(c);
        free(xv);
        mrt_tensor_release(&x);
    }
}

Test(det, singular_permutation_and_errors)
{
    /* singular (two equal rows) -> 0; a permutation matrix with one swap -> -1; 0x0 -> 1 */
    mrt_tensor x = th_from_f64(MRT_DTYPE_DOUBLE, 3, (int64_t[]){2, 3, 3},
                               (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 0, 0, 0, 1});
    mrt_tensor y;
    th_case *c = th_begin("Det", "", 11);
    th_input(c, &x);
    RUN_OK(c, 1, &y, "Det singular");
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){0, -1}, 1, (int64_t[]){2}, 0, 1e-15, 0, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);

    mrt_tensor z = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 0, 0}, NULL);
    c = th_begin("Det", "", 11);
    th_input(c, &z);
    RUN_OK(c, 1, &y, "Det 0x0");
    cr_assert(th_check_f64(&y, (double[]){1, 1}, 1, (int64_t[]){2}, 0, 0, 0, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&z);

    mrt_tensor ns = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4}, NULL);
    c = th_begin("Det", "", 11);
    th_input(c, &ns);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "input 'X' has shape [2,3,4], expected [*, M, M]");
    mrt_tensor_release(&ns);
    mrt_tensor v = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, NULL);
    c = th_begin("Det", "", 11);
    th_input(c, &v);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "expected [*, M, M]");
    mrt_tensor_release(&v);
    mrt_tensor iv = th_from_f64(MRT_DTYPE_INT32, 2, (int64_t[]){2, 2}, NULL);
    c = th_begin("Det", "", 11);
    th_input(c, &iv);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "got int32");
    mrt_tensor_release(&iv);
}

/* ================================================================== TopK */

Test(topk, random_against_repeated_selection)
{
    th_rng r;
    th_rng_init(&r, th_seed("topk.random"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT8,
                             MRT_DTYPE_FLOAT16};
    const int opsets[] = {1, 10, 11, 24};
    for (int iter = 0; iter < 120; iter++) {
        int rank = (int)th_rng_int(&r, 1, 4), opset = opsets[iter % 4];
        int64_t shape[4], oshape[4];
        for (int d = 0; d < rank; d++) shape[d] = th_rng_int(&r, 1, 6);
        int axis = (int)th_rng_int(&r, 0, rank - 1);
        int64_t axis_attr = th_rng_int(&r, 0, 1) ? axis - rank : axis, k = th_rng_int(&r, 0, shape[axis]);
        bool largest = opset < 11 || th_rng_int(&r, 0, 1);
        mrt_dtype dt = dts[iter % 6];
        /* a small value range forces ties, which keep the lower index first */
        mrt_tensor x = mrt_dtype_is_integer(dt) ? th_rand(&r, dt, rank, shape, 0, 5) : th_rand(&r, dt, rank, shape, -1, 1);
        if (iter % 5 == 0 && mrt_dtype_is_float(dt))
            for (int64_t i = 0; i < mrt_tensor_numel(&x); i += 2) mrt_store_f64(dt, x.data, i, 0.5);
        memcpy(oshape, shape, sizeof shape);
        oshape[axis] = k;
        int64_t n_out = mrt_tensor_numel(&x) / shape[axis] * k;
        double *xv = th_to_f64(&x), *want = malloc((size_t)(n_out + 1) * sizeof(double)),
               *want_i = malloc((size_t)(n_out + 1) * sizeof(double));
        int64_t *idx = malloc((size_t)(n_out + 1) * sizeof(int64_t));
        ref_misc_topk(xv, rank, shape, axis, k, largest, want, idx);
        for (int64_t i = 0; i < n_out; i++) want_i[i] = (double)idx[i];
        th_case *c = th_begin("TopK", "", opset);
        th_input(c, &x);
        mrt_tensor kt = th_vec_i64(1, &k), y[2];
        if (opset >= 10) {
            if (iter % 3) th_input_const(c, &kt);
            else th_input(c, &kt); /* K known only at run time */
        } else {
            th_attr_int(c, "k", k);
        }
        th_attr_int(c, "axis", axis_attr);
        if (opset >= 11) th_attr_int(c, "largest", largest);
        RUN_OK(c, 2, y, "TopK-%d %s", opset, mrt_dtype_name(dt));
        char why[512];
        cr_assert(th_check_f64(&y[0], want, rank, oshape, 0, 0, 0, why, sizeof why), "TopK-%d %s axis %lld k %lld values: %s",
                  opset, mrt_dtype_name(dt), (long long)axis_attr, (long long)k, why);
        cr_assert(th_check_f64(&y[1], want_i, rank, oshape, 0, 0, 0, why, sizeof why), "TopK-%d indices: %s", opset, why);
        cr_assert_eq(y[0].dtype, dt);
        cr_assert_eq(y[1].dtype, MRT_DTYPE_INT64);
        release_all(2, y);
        th_free(c);
        free(xv);
        free(want);
        free(want_i);
        free(idx);
        mrt_tensor_release(&x);
        mrt_tensor_release(&kt);
    }
}

Test(topk, empty_and_errors)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){0, 4}, NULL), y[2];
    int64_t k = 2;
    mrt_tensor kt = th_vec_i64(1, &k);
    th_case *c = th_begin("TopK", "", 11);
    th_input(c, &x);
    th_input(c, &kt);
    RUN_OK(c, 2, y, "TopK on [0, 4]");
    cr_assert(y[0].rank == 2 && y[0].shape[0] == 0 && y[0].shape[1] == 2);
    release_all(2, y);
    th_free(c);
    mrt_tensor_release(&x);

    mrt_tensor x3 = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, NULL);
    int64_t big = 4;
    mrt_tensor kb = th_vec_i64(1, &big);
    c = th_begin("TopK", "", 11);
    th_input(c, &x3);
    th_input_const(c, &kb);
    expect_fail(c, 2, MRT_STATUS_INVALID_ARG, "K = 4 is outside [0, 3]");
    c = th_begin("TopK", "", 11);
    th_input(c, &x3);
    th_input(c, &kb); /* the same check at run time */
    expect_fail(c, 2, MRT_STATUS_INVALID_ARG, "K = 4");
    c = th_begin("TopK", "", 11);
    th_input(c, &x3);
    th_input_const(c, &kt);
    th_attr_int(c, "axis", 2);
    expect_fail(c, 2, MRT_STATUS_INVALID_MODEL, "axis");
    mrt_tensor_release(&x3);
    mrt_tensor_release(&kb);
    mrt_tensor_release(&kt);
}

/* ================================================================== Unique */

Test(unique, random_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("unique.random"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT8};
    for (int iter = 0; iter < 80; iter++) {
        int rank = (int)th_rng_int(&r, 1, 3);
        int64_t shape[3];
        for (int d = 0; d < rank; d++) shape[d] = th_rng_int(&r, 1, 5);
        bool has_axis = iter % 2, sorted = iter % 3 != 0;
        int axis = has_axis ? (int)th_rng_int(&r, 0, rank - 1) : -1;
        mrt_dtype dt = dts[iter % 4];
        /* few distinct values so slices repeat */
        mrt_tensor x = th_rand(&r, MRT_DTYPE_INT64, rank, shape, -1, 1);
        double *xv = th_to_f64(&x);
        mrt_tensor_release(&x);
        x = th_from_f64(dt, rank, shape, xv);
        int64_t n = mrt_tensor_numel(&x), len = has_axis ? shape[axis] : n;
        double *yv = malloc((size_t)n * sizeof(double));
        int64_t *ind = malloc((size_t)len * sizeof(int64_t)), *inv = malloc((size_t)len * sizeof(int64_t)),
                *cnt = malloc((size_t)len * sizeof(int64_t));
        int64_t nu = ref_misc_unique(xv, rank, shape, axis, sorted, yv, ind, inv, cnt);
        th_case *c = th_begin("Unique", "", 11);
        th_input(c, &x);
        if (has_axis) th_attr_int(c, "axis", iter % 4 == 1 ? axis - rank : axis);
        th_attr_int(c, "sorted", sorted);
        mrt_tensor y[4];
        RUN_OK(c, 4, y, "Unique %s", mrt_dtype_name(dt));
        int64_t yshape[3];
        memcpy(yshape, shape, sizeof yshape);
        if (has_axis) yshape[axis] = nu;
        else yshape[0] = nu;
        char why[512];
        cr_assert(th_check_f64(&y[0], yv, has_axis ? rank : 1, yshape, 0, 0, 0, why, sizeof why),
                  "Unique %s axis %d sorted %d: Y: %s", mrt_dtype_name(dt), axis, sorted, why);
        cr_assert_eq(y[0].dtype, dt);
        const int64_t *srcs[3] = {ind, inv, cnt};
        int64_t lens[3] = {nu, len, nu};
        for (int o = 0; o < 3; o++) {
            double *w = malloc((size_t)(lens[o] + 1) * sizeof(double));
            for (int64_t i = 0; i < lens[o]; i++) w[i] = (double)srcs[o][i];
            cr_assert(th_check_f64(&y[o + 1], w, 1, &lens[o], 0, 0, 0, why, sizeof why), "Unique output %d: %s", o + 1, why);
            free(w);
        }
        release_all(4, y);
        th_free(c);
        free(xv);
        free(yv);
        free(ind);
        free(inv);
        free(cnt);
        mrt_tensor_release(&x);
    }
}

Test(unique, empty_input_and_bad_axis)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){0}, NULL), y[4];
    th_case *c = th_begin("Unique", "", 11);
    th_input(c, &x);
    RUN_OK(c, 4, y, "Unique on []");
    for (int o = 0; o < 4; o++) cr_assert(y[o].rank == 1 && y[o].shape[0] == 0, "output %d not empty", o);
    release_all(4, y);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor x2 = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 2}, NULL);
    c = th_begin("Unique", "", 11);
    th_input(c, &x2);
    th_attr_int(c, "axis", -3);
    expect_fail(c, 4, MRT_STATUS_INVALID_MODEL, "axis");
    mrt_tensor_release(&x2);
}

/* ================================================================== CumProd, Shrink */

Test(cumprod, random_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("cumprod.random"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT64};
    for (int iter = 0; iter < 80; iter++) {
        int rank = (int)th_rng_int(&r, 1, 3);
        int64_t shape[3];
        for (int d = 0; d < rank; d++) shape[d] = th_rng_int(&r, iter % 10 == 0 ? 0 : 1, 5);
        int axis = (int)th_rng_int(&r, 0, rank - 1);
        bool excl = th_rng_int(&r, 0, 1), rev = th_rng_int(&r, 0, 1);
        mrt_dtype dt = dts[iter % 4];
        mrt_tensor x = mrt_dtype_is_integer(dt) ? th_rand(&r, dt, rank, shape, -3, 3) : th_rand(&r, dt, rank, shape, -1.5, 1.5);
        int64_t n = mrt_tensor_numel(&x), av = iter % 3 ? axis : axis - rank;
        double *xv = th_to_f64(&x), *want = malloc((size_t)(n + 1) * sizeof(double));
        ref_misc_cumprod(xv, rank, shape, axis, excl, rev, want);
        mrt_tensor at = iter % 2 ? th_scalar_i64(av) : th_from_f64(MRT_DTYPE_INT32, 1, (int64_t[]){1}, (double[]){(double)av});
        th_case *c = th_begin("CumProd", "", 26);
        th_input(c, &x);
        th_input(c, &at);
        th_attr_int(c, "exclusive", excl);
        th_attr_int(c, "reverse", rev);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "CumProd %s", mrt_dtype_name(dt));
        CHECK(&y, want, rank, shape, dt, "CumProd %s axis %lld exclusive %d reverse %d", mrt_dtype_name(dt), (long long)av,
              excl, rev);
        mrt_tensor_release(&y);
        th_free(c);
        free(xv);
        free(want);
        mrt_tensor_release(&x);
        mrt_tensor_release(&at);
    }
}

Test(shrink, random_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("shrink.random"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT8, MRT_DTYPE_FLOAT16};
    for (int iter = 0; iter < 20; iter++) {
        mrt_dtype dt = dts[iter % 5];
        int64_t shape[2] = {th_rng_int(&r, 0, 4), th_rng_int(&r, 1, 9)};
        mrt_tensor x = mrt_dtype_is_integer(dt) ? th_rand(&r, dt, 2, shape, -5, 5) : th_rand(&r, dt, 2, shape, -2, 2);
        double lambd = mrt_dtype_is_integer(dt) ? 1.5 : 0.75, bias = mrt_dtype_is_integer(dt) ? 1 : 0.25;
        double *xv = th_to_f64(&x), want[64];
        for (int64_t i = 0; i < shape[0] * shape[1]; i++) want[i] = ref_misc_shrink(xv[i], lambd, bias);
        th_case *c = th_begin("Shrink", "", 9);
        th_input(c, &x);
        th_attr_float(c, "lambd", (float)lambd);
        th_attr_float(c, "bias", (float)bias);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "Shrink %s", mrt_dtype_name(dt));
        CHECK(&y, want, 2, shape, dt, "Shrink %s", mrt_dtype_name(dt));
        mrt_tensor_release(&y);
        th_free(c);
        free(xv);
        mrt_tensor_release(&x);
    }
}

/* ================================================================== Dropout */

static mrt_tensor bool_scalar(bool v) { return th_from_f64(MRT_DTYPE_BOOL, 0, NULL, (double[]){v}); }

Test(dropout, inference_is_identity_at_every_opset)
{
    th_rng r;
    th_rng_init(&r, th_seed("dropout.inference_opsets"));
    const int opsets[] = {1, 6, 7, 10, 12, 13, 22};
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int i = 0; i < 7; i++)
        for (int d = 0; d < 3; d++) {
            int64_t shape[3] = {2, 3, 4};
            mrt_tensor x = th_rand(&r, dts[d], 3, shape, -2, 2), y[2];
            mrt_tensor ratio = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.3}), train = bool_scalar(false);
            th_case *c = th_begin("Dropout", "", opsets[i]);
            th_input(c, &x);
            if (opsets[i] < 7) th_attr_int(c, "is_test", 1);
            if (opsets[i] < 12) th_attr_float(c, "ratio", 0.3f);
            if (opsets[i] >= 12 && d == 1) {
                th_input(c, &ratio);
                th_input(c, &train);
            }
            RUN_OK(c, 2, y, "Dropout-%d %s", opsets[i], mrt_dtype_name(dts[d]));
            cr_assert_eq(memcmp(y[0].data, x.data, mrt_tensor_nbytes(&x)), 0, "Dropout-%d output differs from input", opsets[i]);
            /* the mask is bool from opset 10, the input's type before */
            cr_assert_eq(y[1].dtype, opsets[i] >= 10 ? MRT_DTYPE_BOOL : dts[d], "Dropout-%d mask dtype %s", opsets[i],
                         mrt_dtype_name(y[1].dtype));
            for (int64_t e = 0; e < 24; e++) cr_assert_eq(mrt_load_f64(y[1].dtype, y[1].data, e), 1.0);
            release_all(2, y);
            th_free(c);
            mrt_tensor_release(&x);
            mrt_tensor_release(&ratio);
            mrt_tensor_release(&train);
        }
}

/* Training mode: outputs are 0 or x/(1-ratio), with mask = (output kept); returns the mask as bytes. */
static uint8_t *run_training(mrt_tensor *x, int opset, double ratio, int64_t seed, bool has_seed)
{
    mrt_tensor rt = th_from_f64(MRT_DTYPE_DOUBLE, 0, NULL, (double[]){ratio}), train = bool_scalar(true), y[2];
    th_case *c = th_begin("Dropout", "", opset);
    th_input(c, x);
    if (opset >= 12) {
        th_input(c, &rt);
        th_input(c, &train);
    } else {
        th_attr_float(c, "ratio", (float)ratio);
    }
    if (has_seed && opset >= 12) th_attr_int(c, "seed", seed);
    RUN_OK(c, 2, y, "Dropout-%d training", opset);
    int64_t n = mrt_tensor_numel(x);
    uint8_t *mask = malloc((size_t)n + 1);
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < n; i++) {
        double xv = mrt_load_f64(x->dtype, x->data, i), yv = mrt_load_f64(y[0].dtype, y[0].data, i);
        mask[i] = mrt_load_f64(y[1].dtype, y[1].data, i) != 0;
        double want = mask[i] ? (double)mrt_load_f64(x->dtype, x->data, i) * scale : 0.0;
        mrt_tensor tmp = th_from_f64(x->dtype, 0, NULL, &want); /* the expected value rounded to x's type */
        cr_assert_eq(yv, mrt_load_f64(x->dtype, tmp.data, 0), "Dropout-%d element %lld: x %g kept %d -> %g", opset,
                     (long long)i, xv, mask[i], yv);
        mrt_tensor_release(&tmp);
    }
    release_all(2, y);
    th_free(c);
    mrt_tensor_release(&rt);
    mrt_tensor_release(&train);
    return mask;
}

Test(dropout, training_mode_rate_scale_and_seed)
{
    th_rng r;
    th_rng_init(&r, th_seed("dropout.training_seed"));
    int64_t n = 4000;
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int d = 0; d < 3; d++) {
        mrt_tensor x = th_rand(&r, dts[d], 1, &n, 0.5, 2);
        uint8_t *a = run_training(&x, 13, 0.4, 5, true), *b = run_training(&x, 22, 0.4, 5, true),
                *c = run_training(&x, 13, 0.4, 6, true);
        int64_t kept = 0, same_ab = 0, same_ac = 0;
        for (int64_t i = 0; i < n; i++) {
            kept += a[i];
            same_ab += a[i] == b[i];
            same_ac += a[i] == c[i];
        }
        cr_assert_eq(same_ab, n, "the same seed must give the same mask");
        cr_assert(same_ac < n, "another seed must give another mask");
        cr_assert(fabs((double)kept / (double)n - 0.6) < 5 * sqrt(0.24 / (double)n), "kept %lld of %lld at ratio 0.4",
                  (long long)kept, (long long)n);
        free(a);
        free(b);
        free(c);
        mrt_tensor_release(&x);
    }
    /* opset 6 without is_test trains (the spec's default), with the `ratio` attribute */
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, &n, 0.5, 2);
    uint8_t *m = run_training(&x, 6, 0.5, 0, false);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) kept += m[i];
    cr_assert(kept > 0 && kept < n, "opset 6 training kept %lld of %lld", (long long)kept, (long long)n);
    free(m);
    mrt_tensor_release(&x);
    /* ratio 0 in training mode keeps everything; an empty input is fine */
    x = th_rand(&r, MRT_DTYPE_FLOAT, 1, &n, 0.5, 2);
    m = run_training(&x, 13, 0.0, 1, true);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(m[i], 1);
    free(m);
    mrt_tensor_release(&x);
    int64_t zero[2] = {0, 3};
    x = th_from_f64(MRT_DTYPE_FLOAT, 2, zero, NULL);
    free(run_training(&x, 13, 0.5, 1, true));
    mrt_tensor_release(&x);
}

Test(dropout, bad_ratio_and_types_are_refused)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, NULL);
    mrt_tensor one = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0}), train = bool_scalar(true);
    th_case *c = th_begin("Dropout", "", 13);
    th_input(c, &x);
    th_input(c, &one);
    th_input(c, &train);
    expect_fail(c, 1, MRT_STATUS_INVALID_ARG, "ratio 1 is not in [0, 1)");
    mrt_tensor vec = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){2}, NULL);
    c = th_begin("Dropout", "", 13);
    th_input(c, &x);
    th_input(c, &vec);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "'ratio' must be a scalar");
    mrt_tensor xi = th_from_f64(MRT_DTYPE_INT32, 1, (int64_t[]){4}, NULL);
    c = th_begin("Dropout", "", 13);
    th_input(c, &xi);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "must be a float tensor, got int32");
    mrt_tensor_release(&x);
    mrt_tensor_release(&one);
    mrt_tensor_release(&train);
    mrt_tensor_release(&vec);
    mrt_tensor_release(&xi);
}

/* ================================================================== losses */

static void loss_case(th_rng *r, bool softmax, int opset, int red, const int64_t *xshape, int xrank, bool weighted,
                      bool has_ignore, int64_t ignore, mrt_dtype dt, mrt_dtype tdt)
{
    static const char *reds[] = {"none", "sum", "mean"};
    int64_t n = xshape[0], c = xshape[1], d = 1, tshape[8];
    tshape[0] = n;
    for (int i = 2; i < xrank; i++) {
        d *= xshape[i];
        tshape[i - 1] = xshape[i];
    }
    mrt_tensor x = th_rand(r, dt, xrank, xshape, -3, softmax ? 3 : 0);
    mrt_tensor t = th_rand(r, MRT_DTYPE_INT64, xrank - 1, tshape, 0, (double)c - 1);
    int64_t *tv = t.data, nt = n * d;
    if (has_ignore)
        for (int64_t i = 0; i < nt; i += 3) tv[i] = ignore; /* some targets ignored */
    mrt_tensor w = th_rand(r, dt, 1, &c, 0.2, 2);
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *out = calloc((size_t)nt + 1, sizeof(double)),
           *lp = calloc((size_t)(n * c * d) + 1, sizeof(double));
    ref_misc_loss(xd, softmax, tv, weighted ? wd : NULL, n, c, d, red, has_ignore, ignore, out, lp);
    mrt_tensor tt = t;
    if (tdt == MRT_DTYPE_INT32) {
        double *td = th_to_f64(&t);
        tt = th_from_f64(MRT_DTYPE_INT32, t.rank, t.shape, td);
        free(td);
    }
    th_case *cs = th_begin(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", "", opset);
    th_input(cs, &x);
    th_input(cs, &tt);
    if (weighted) th_input(cs, &w);
    if (red != 2 || th_rng_int(r, 0, 1)) th_attr_string(cs, "reduction", reds[red]); /* mean is the default */
    if (has_ignore) th_attr_int(cs, "ignore_index", ignore);
    mrt_tensor y[2];
    RUN_OK(cs, softmax ? 2 : 1, y, "%s-%d", softmax ? "SCE" : "NLL", opset);
    char why[512];
    tol tl = tol_of(dt);
    cr_assert(th_check_f64(&y[0], out, red == 0 ? xrank - 1 : 0, tshape, tl.nmse, tl.abs, tl.rel, why, sizeof why),
              "%s-%d %s %s weighted %d ignore %d/%lld x %s: %s", softmax ? "SCE" : "NLL", opset, reds[red],
              mrt_dtype_name(dt), weighted, has_ignore, (long long)ignore, mrt_shape_describe(xrank, xshape, (char[64]){0}, 64),
              why);
    cr_assert_eq(y[0].dtype, dt);
    if (softmax) {
        cr_assert(th_check_f64(&y[1], lp, xrank, xshape, tl.nmse, tl.abs, tl.rel, why, sizeof why), "log_prob: %s", why);
        mrt_tensor_release(&y[1]);
    }
    mrt_tensor_release(&y[0]);
    th_free(cs);
    free(xd);
    free(wd);
    free(out);
    free(lp);
    if (tdt == MRT_DTYPE_INT32) mrt_tensor_release(&tt);
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
    mrt_tensor_release(&w);
}

Test(loss, ignore_index_ranks_types_and_opsets)
{
    th_rng r;
    th_rng_init(&r, th_seed("loss.edge_cases"));
    const int64_t ignores[] = {-1, -100, 0, 2};
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int iter = 0; iter < 120; iter++) {
        bool softmax = iter % 2;
        int opset = softmax ? (iter % 4 < 2 ? 12 : 13) : (int[]){12, 13, 22}[iter % 3];
        int xrank = (int)th_rng_int(&r, 2, 5);
        int64_t xshape[5];
        xshape[0] = th_rng_int(&r, 1, 3);
        xshape[1] = th_rng_int(&r, 3, 5);
        for (int i = 2; i < xrank; i++) xshape[i] = th_rng_int(&r, 1, 3);
        loss_case(&r, softmax, opset, iter % 3, xshape, xrank, iter % 5 < 3, iter % 4 != 3, ignores[iter % 4],
                  dts[iter % 7 == 0 ? 2 : iter % 3 == 0], iter % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64);
    }
}

Test(loss, all_ignored_mean_is_nan_and_bad_inputs_fail)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, (double[]){-1, -2, -3, -1, -2, -3});
    mrt_tensor t = th_vec_i64(2, (int64_t[]){-1, -1}), y;
    th_case *c = th_begin("NegativeLogLikelihoodLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    th_attr_int(c, "ignore_index", -1);
    RUN_OK(c, 1, &y, "all ignored");
    cr_assert(isnan(((float *)y.data)[0]), "mean over no elements is 0/0");
    mrt_tensor_release(&y);
    th_free(c);

    mrt_tensor bad_t = th_vec_i64(3, (int64_t[]){0, 1, 2});
    c = th_begin("NegativeLogLikelihoodLoss", "", 13);
    th_input(c, &x);
    th_input(c, &bad_t);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "target [3] does not fit 'input' [2,3]");
    mrt_tensor w = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){2}, NULL);
    c = th_begin("SoftmaxCrossEntropyLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    th_input(c, &w);
    expect_fail(c, 2, MRT_STATUS_INVALID_MODEL, "weight float32[2] must be float32[3] (one per class)");
    c = th_begin("SoftmaxCrossEntropyLoss", "", 13);
    th_input(c, &x);
    th_input(c, &t);
    th_attr_string(c, "reduction", "avg");
    expect_fail(c, 2, MRT_STATUS_INVALID_MODEL, "reduction 'avg'");
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
    mrt_tensor_release(&bad_t);
    mrt_tensor_release(&w);
}

/* ================================================================== random ops */

static mrt_tensor run_random(const char *op, int opset, const mrt_tensor *in, mrt_dtype dtype, bool set_dtype, float seed,
                             bool has_seed, const mrt_session_options *opt)
{
    th_case *c = th_begin(op, "", opset);
    if (in) th_input(c, in);
    else th_attr_ints(c, "shape", 2, (int64_t[]){50, 40});
    if (set_dtype) th_attr_int(c, "dtype", dtype);
    if (has_seed) th_attr_float(c, "seed", seed);
    if (strstr(op, "Uniform")) {
        th_attr_float(c, "low", -2.0f);
        th_attr_float(c, "high", 3.0f);
    } else if (strstr(op, "Normal")) {
        th_attr_float(c, "mean", 1.0f);
        th_attr_float(c, "scale", 2.0f);
    }
    mrt_session_options def = mrt_session_options_default();
    mrt_tensor y;
    mrt_status st = th_run_opt(c, opt ? opt : &def, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "%s-%d: %s", op, opset, mrt_last_error());
    th_free(c);
    return y;
}

Test(random, uniform_and_normal_shape_type_range_statistics)
{
    const char *ops[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"};
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    mrt_tensor like = th_from_f64(MRT_DTYPE_INT64, 2, (int64_t[]){50, 40}, NULL);
    for (int o = 0; o < 4; o++)
        for (int d = 0; d < 3; d++)
            for (int opset = 1; opset <= 22; opset += 21) {
                bool is_like = o >= 2, uniform = o % 2 == 0;
                mrt_tensor y = run_random(ops[o], opset, is_like ? &like : NULL, dts[d], true, 3.0f, true, NULL),
                           y2 = run_random(ops[o], opset, is_like ? &like : NULL, dts[d], true, 3.0f, true, NULL),
                           y3 = run_random(ops[o], opset, is_like ? &like : NULL, dts[d], true, 4.0f, true, NULL);
                cr_assert(y.dtype == dts[d] && y.rank == 2 && y.shape[0] == 50 && y.shape[1] == 40, "%s-%d: %s %s", ops[o],
                          opset, mrt_dtype_name(y.dtype), mrt_shape_describe(y.rank, y.shape, (char[64]){0}, 64));
                cr_assert_eq(memcmp(y.data, y2.data, mrt_tensor_nbytes(&y)), 0, "%s: the same seed must repeat", ops[o]);
                cr_assert_neq(memcmp(y.data, y3.data, mrt_tensor_nbytes(&y)), 0, "%s: another seed must differ", ops[o]);
                double sum = 0, sq = 0, n = 2000;
                for (int64_t i = 0; i < 2000; i++) {
                    double v = mrt_load_f64(y.dtype, y.data, i);
                    /* as in onnx.reference, a draw just below 1 can round up to `high` in a narrow type */
                    if (uniform) cr_assert(v >= -2.0 && v <= 3.0, "%s: %g outside [-2, 3]", ops[o], v);
                    sum += v;
                    sq += v * v;
                }
                double mean = sum / n, sd = sqrt(sq / n - mean * mean);
                double want_mean = uniform ? 0.5 : 1.0, want_sd = uniform ? 5.0 / sqrt(12.0) : 2.0;
                cr_assert(fabs(mean - want_mean) < 5 * want_sd / sqrt(n), "%s %s: mean %g, want %g", ops[o],
                          mrt_dtype_name(dts[d]), mean, want_mean);
                cr_assert(fabs(sd - want_sd) < 0.1 * want_sd, "%s %s: sd %g, want %g", ops[o], mrt_dtype_name(dts[d]), sd,
                          want_sd);
                release_all(1, &y);
                release_all(1, &y2);
                release_all(1, &y3);
            }
    mrt_tensor_release(&like);
}

Test(random, like_defaults_oracle_mode_and_errors)
{
    /* *Like without dtype: the input's type */
    mrt_tensor xd = th_from_f64(MRT_DTYPE_DOUBLE, 1, (int64_t[]){7}, NULL);
    mrt_tensor y = run_random("RandomNormalLike", 22, &xd, MRT_DTYPE_UNDEFINED, false, 0, false, NULL);
    cr_assert_eq(y.dtype, MRT_DTYPE_DOUBLE);
    mrt_tensor_release(&y);
    /* the float64 oracle draws the same numbers, without float32 rounding */
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    mrt_tensor f = run_random("RandomUniform", 22, NULL, MRT_DTYPE_FLOAT, true, 9.0f, true, NULL);
    mrt_tensor g = run_random("RandomUniform", 22, NULL, MRT_DTYPE_FLOAT, true, 9.0f, true, &opt);
    cr_assert_eq(g.dtype, MRT_DTYPE_DOUBLE);
    for (int64_t i = 0; i < 2000; i++) {
        double a = ((float *)f.data)[i], b = ((double *)g.data)[i];
        cr_assert(fabs(a - b) <= 1e-6 * (1 + fabs(b)), "element %lld: %.9g vs %.17g", (long long)i, a, b);
    }
    mrt_tensor_release(&f);
    mrt_tensor_release(&g);

    mrt_tensor xi = th_from_f64(MRT_DTYPE_INT64, 1, (int64_t[]){7}, NULL);
    th_case *c = th_begin("RandomUniformLike", "", 22);
    th_input(c, &xi);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "output dtype int64 (the input's type: set attribute 'dtype')");
    c = th_begin("RandomNormal", "", 22);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "attribute 'shape' is required");
    c = th_begin("RandomUniform", "", 22);
    th_attr_ints(c, "shape", 1, (int64_t[]){3});
    th_attr_int(c, "dtype", MRT_DTYPE_INT32);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "output dtype int32 (attribute 'dtype') is not float16/bfloat16/float/double");
    c = th_begin("RandomUniform", "", 22);
    th_attr_ints(c, "shape", 2, (int64_t[]){3, -1});
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "negative dimension");
    mrt_tensor_release(&xd);
    mrt_tensor_release(&xi);
}

Test(random, bernoulli_types_rates_and_errors)
{
    int64_t n = 3000;
    mrt_tensor p = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, NULL);
    for (int64_t i = 0; i < n; i++) ((float *)p.data)[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.3f;
    const mrt_dtype outs[] = {MRT_DTYPE_UNDEFINED, MRT_DTYPE_BOOL, MRT_DTYPE_INT32, MRT_DTYPE_DOUBLE, MRT_DTYPE_UINT8};
    for (int o = 0; o < 5; o++) {
        mrt_tensor y = run_random("Bernoulli", o % 2 ? 15 : 22, &p, outs[o], outs[o] != MRT_DTYPE_UNDEFINED, 2.0f, true, NULL);
        cr_assert_eq(y.dtype, outs[o] == MRT_DTYPE_UNDEFINED ? MRT_DTYPE_FLOAT : outs[o]);
        int64_t ones = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = mrt_load_f64(y.dtype, y.data, i);
            cr_assert(v == 0 || v == 1, "Bernoulli output %g", v);
            if (i % 3 == 0) cr_assert_eq(v, 0, "p = 0 gave 1 at %lld", (long long)i);
            if (i % 3 == 1) cr_assert_eq(v, 1, "p = 1 gave 0 at %lld", (long long)i);
            if (i % 3 == 2) ones += v == 1;
        }
        cr_assert(fabs((double)ones / 1000.0 - 0.3) < 5 * sqrt(0.21 / 1000.0), "rate %g at p = 0.3", (double)ones / 1000.0);
        mrt_tensor_release(&y);
    }
    ((float *)p.data)[5] = 1.5f;
    th_case *c = th_begin("Bernoulli", "", 22);
    th_input(c, &p);
    expect_fail(c, 1, MRT_STATUS_INVALID_ARG, "probability 1.5 at index 5");
    mrt_tensor pi = th_from_f64(MRT_DTYPE_INT32, 1, (int64_t[]){2}, NULL);
    c = th_begin("Bernoulli", "", 22);
    th_input(c, &pi);
    expect_fail(c, 1, MRT_STATUS_INVALID_MODEL, "must be a float tensor, got int32");
    mrt_tensor_release(&p);
    mrt_tensor_release(&pi);
}

/* Seeded nodes draw numpy's RandomState(seed) stream, as onnx.reference does; the expected values were printed by
   numpy 2.4: RandomState(0).rand(3), RandomState(5).randn(5), RandomState(0).binomial(1, p), RandomState(3).rand(4). */
Test(random, seeded_values_match_numpy_randomstate)
{
    char why[512];
    th_case *c = th_begin("RandomUniform", "", 22);
    th_attr_ints(c, "shape", 1, (int64_t[]){3});
    th_attr_int(c, "dtype", MRT_DTYPE_DOUBLE);
    th_attr_float(c, "seed", 0.0f);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "RandomUniform seed 0");
    cr_assert(th_check_f64(&y, (double[]){0.5488135039273248, 0.7151893663724195, 0.6027633760716439}, 1, (int64_t[]){3}, 0, 0,
                           0, why, sizeof why), "RandomUniform: %s", why);
    mrt_tensor_release(&y);
    th_free(c);

    c = th_begin("RandomNormal", "", 1);
    th_attr_ints(c, "shape", 1, (int64_t[]){5});
    th_attr_int(c, "dtype", MRT_DTYPE_DOUBLE);
    th_attr_float(c, "seed", 5.0f);
    RUN_OK(c, 1, &y, "RandomNormal seed 5");
    cr_assert(th_check_f64(&y,
                           (double[]){0.44122748688504143, -0.33087015189408764, 2.43077118700778, -0.2520921296030769,
                                      0.10960984157818278},
                           1, (int64_t[]){5}, 0, 1e-15, 0, why, sizeof why), "RandomNormal: %s", why);
    mrt_tensor_release(&y);
    th_free(c);

    mrt_tensor p = th_from_f64(MRT_DTYPE_DOUBLE, 1, (int64_t[]){8}, (double[]){0.3, 0.7, 0.0, 1.0, 0.5, 0.9, 0.2, 0.6});
    c = th_begin("Bernoulli", "", 22);
    th_input(c, &p);
    th_attr_float(c, "seed", 0.0f);
    RUN_OK(c, 1, &y, "Bernoulli seed 0");
    cr_assert(th_check_f64(&y, (double[]){0, 0, 0, 1, 0, 1, 0, 0}, 1, (int64_t[]){8}, 0, 0, 0, why, sizeof why), "Bernoulli: %s", why);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&p);

    /* Dropout keeps element i when the i-th uniform is >= ratio: 0.5508, 0.7081, 0.2909, 0.5108 at ratio 0.5 */
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    mrt_tensor ratio = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.5}), train = bool_scalar(true), ym[2];
    c = th_begin("Dropout", "", 22);
    th_input(c, &x);
    th_input(c, &ratio);
    th_input(c, &train);
    th_attr_int(c, "seed", 3);
    RUN_OK(c, 2, ym, "Dropout seed 3");
    cr_assert(th_check_f64(&ym[0], (double[]){2, 4, 0, 8}, 1, (int64_t[]){4}, 0, 0, 0, why, sizeof why), "Dropout: %s", why);
    cr_assert(th_check_f64(&ym[1], (double[]){1, 1, 0, 1}, 1, (int64_t[]){4}, 0, 0, 0, why, sizeof why), "Dropout mask: %s", why);
    release_all(2, ym);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&ratio);
    mrt_tensor_release(&train);
}
