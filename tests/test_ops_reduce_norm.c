/* Reduce*, ArgMax/ArgMin, CumSum, Softmax/LogSoftmax/Hardmax and the normalization ops against the naive
 * references of tests/ref/reduce_norm_ref.c: random shapes, negative axes, keepdims, empty axes, zero-size
 * dims, large values, float16/bfloat16/double, integer types, and error cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ref/reduce_norm_ref.h"

static tol tol_of(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE: return (tol){1e-22, 1e-12, 1e-10};
    case MRT_DTYPE_FLOAT16: return (tol){1e-5, 2e-3, 2e-3};
    case MRT_DTYPE_BFLOAT16: return (tol){1e-4, 1.6e-2, 1.6e-2};
    default: return (tol){1e-10, 1e-6, 1e-5};
    }
}

/* CHECK with this file's tolerances */
#define CHECK(got, expect, rank, shape, dt, ...) TH_CHECK_TOL(got, expect, rank, shape, tol_of(dt), __VA_ARGS__)

static const char *shape_str(int rank, const int64_t *shape)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    return mrt_shape_describe(rank, shape, buf[k], sizeof buf[k]);
}

static void rand_shape(th_rng *r, int rank, int64_t *shape, int64_t max_dim, bool allow_zero)
{
    for (int a = 0; a < rank; a++) {
        shape[a] = th_rng_int(r, 1, max_dim);
        if (allow_zero && th_rng_int(r, 0, 15) == 0) shape[a] = 0;
    }
}

/* th_to_f64 of a tensor: the reference reads exactly the (rounded) values the kernel reads. */
static double *values(const mrt_tensor *t) { return th_to_f64(t); }

/* ------------------------------------------------------------------ Reduce* */

static const struct {
    const char *op;
    ref_reduce_op ref;
    double lo, hi;
} reduce_ops[] = {
    {"ReduceSum", REF_SUM, -2, 2},         {"ReduceMean", REF_MEAN, -2, 2},
    {"ReduceMax", REF_MAX, -2, 2},         {"ReduceMin", REF_MIN, -2, 2},
    {"ReduceProd", REF_PROD, 0.6, 1.5},    {"ReduceL1", REF_L1, -2, 2},
    {"ReduceL2", REF_L2, -2, 2},           {"ReduceLogSum", REF_LOGSUM, 0.1, 2},
    {"ReduceLogSumExp", REF_LOGSUMEXP, -3, 3}, {"ReduceSumSquare", REF_SUMSQ, -2, 2},
};
#define N_REDUCE_OPS (int)(sizeof reduce_ops / sizeof reduce_ops[0])

static bool axes_from_input(const char *op, int opset)
{
    return strcmp(op, "ReduceSum") == 0 ? opset >= 13 : opset >= 18;
}

/* One Reduce case: the axes listed in axes[0..n_axes) (may be negative); n_axes == 0 means "all axes". */
static void reduce_case(th_rng *r, int k, int opset, mrt_dtype dt, int rank, const int64_t *shape, int n_axes,
                        const int64_t *axes, bool keepdims, bool runtime_axes)
{
    const char *op = reduce_ops[k].op;
    mrt_tensor x = th_rand(r, dt, rank, shape, reduce_ops[k].lo, reduce_ops[k].hi);
    double *xv = values(&x);
    bool red[16];
    for (int a = 0; a < rank; a++) red[a] = n_axes == 0;
    for (int i = 0; i < n_axes; i++) red[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
    int64_t oshape[16], kshape[16];
    int orank = 0;
    for (int a = 0; a < rank; a++) {
        kshape[a] = red[a] ? 1 : shape[a];
        if (!red[a] || keepdims) oshape[orank++] = kshape[a];
    }
    double *expect = malloc((size_t)(ref_numel(rank, kshape) + 1) * sizeof(double));
    ref_reduce(reduce_ops[k].ref, xv, rank, shape, red, expect);

    th_case *c = th_begin(op, "", opset);
    th_input(c, &x);
    mrt_tensor ax = th_vec_i64(n_axes, axes);
    if (axes_from_input(op, opset)) {
        if (n_axes > 0 || runtime_axes) {
            if (runtime_axes) th_input(c, &ax);
            else th_input_const(c, &ax);
        }
    } else if (n_axes > 0) {
        th_attr_ints(c, "axes", n_axes, axes);
    }
    th_attr_int(c, "keepdims", keepdims);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "%s-%d %s x%s n_axes=%d keepdims=%d", op, opset, mrt_dtype_name(dt), shape_str(rank, shape),
           n_axes, keepdims);
    CHECK(&y, expect, orank, oshape, dt, "%s-%d %s x%s n_axes=%d axes[0]=%lld keepdims=%d", op, opset,
          mrt_dtype_name(dt), shape_str(rank, shape), n_axes, n_axes ? (long long)axes[0] : 0LL, keepdims);
    mrt_tensor_release(&y);
    mrt_tensor_release(&ax);
    mrt_tensor_release(&x);
    th_free(c);
    free(expect);
    free(xv);
}

Test(reduce, random_all_ops)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.random_all_ops"));
    static const int opsets[] = {11, 13, 18};
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (int k = 0; k < N_REDUCE_OPS; k++) {
        for (int trial = 0; trial < 24; trial++) {
            int rank = (int)th_rng_int(&r, 0, 5);
            int64_t shape[16], axes[16];
            rand_shape(&r, rank, shape, 6, true);
            int n_axes = 0;
            for (int a = 0; a < rank; a++)
                if (th_rng_int(&r, 0, 1)) axes[n_axes++] = th_rng_int(&r, 0, 1) ? a : a - rank;
            mrt_dtype dt = dts[trial % 4];
            /* products and log-sums of many bfloat16/float16 values drift too far for a fixed tolerance */
            if ((dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16) && reduce_ops[k].ref == REF_PROD)
                dt = MRT_DTYPE_FLOAT;
            reduce_case(&r, k, opsets[trial % 3], dt, rank, shape, n_axes, axes, th_rng_int(&r, 0, 1) != 0,
                        trial % 5 == 0);
        }
    }
}

Test(reduce, opset1_attribute_axes)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.opset1_attribute_axes"));
    int64_t shape[3] = {3, 4, 5}, axes[2] = {0, 2};
    for (int k = 0; k < N_REDUCE_OPS; k++) {
        reduce_case(&r, k, 1, MRT_DTYPE_FLOAT, 3, shape, 2, axes, true, false);
        reduce_case(&r, k, 1, MRT_DTYPE_FLOAT, 3, shape, 0, axes, false, false);
    }
}

Test(reduce, large_inner_and_outer)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.large_inner_and_outer"));
    int64_t s1[2] = {3, 5000}, s2[3] = {700, 3, 9};
    int64_t ax_last = -1, ax_first = 0, ax_mid[2] = {0, 2};
    for (int k = 0; k < N_REDUCE_OPS; k++) {
        if (reduce_ops[k].ref == REF_PROD) continue;
        reduce_case(&r, k, 18, MRT_DTYPE_FLOAT, 2, s1, 1, &ax_last, true, false);
        reduce_case(&r, k, 18, MRT_DTYPE_FLOAT, 3, s2, 1, &ax_first, false, false);
        reduce_case(&r, k, 18, MRT_DTYPE_DOUBLE, 3, s2, 2, ax_mid, true, false);
    }
}

/* Float ReduceSum/ReduceMean over trailing axes (rows of up to 512 summed four rows at a time, ops_cpu/reduce.c): the
   bits of summing each row in double with four partial sums, element k into part k % 4 and the last len % 4 into
   part 0, then (s0 + s1) + (s2 + s3), as the general walk does; and within the tolerance of the naive reference.
   Row counts not a multiple of 4, rows with tails, size-1 dims merged away, and a 513-long row (the walk's chunks). */
Test(reduce, float_trailing_rows_same_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.float_trailing_rows_same_bits"));
    static const struct {
        int rank, n_axes;
        int64_t shape[4], axes[2];
    } cases[] = {
        {4, 2, {2, 40, 7, 7}, {2, 3}}, {3, 1, {3, 5, 13}, {-1}}, {2, 1, {6, 512}, {1}}, {3, 1, {9, 1, 7}, {2}},
        {4, 2, {1, 1280, 7, 7}, {-2, -1}}, {2, 1, {5, 3}, {1}}, {2, 1, {7, 513}, {1}}, {3, 2, {2, 3, 1}, {1, 2}},
        {2, 1, {7, 9}, {1}}, /* rows that start 1, 0, 2^60, -2^60: 1 in this order, 0 summed left to right */
    };
    int n_cases = (int)(sizeof cases / sizeof cases[0]);
    for (int t = 0; t < n_cases; t++)
        for (int mean = 0; mean < 2; mean++) {
            const char *op = mean ? "ReduceMean" : "ReduceSum";
            int rank = cases[t].rank;
            mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, rank, cases[t].shape, -2.0, 2.0);
            bool red[4] = {false};
            for (int i = 0; i < cases[t].n_axes; i++) {
                int64_t a = cases[t].axes[i];
                red[a < 0 ? a + rank : a] = true;
            }
            int64_t rows = 1, len = 1, kshape[4];
            for (int a = 0; a < rank; a++) {
                if (red[a]) len *= cases[t].shape[a];
                else rows *= cases[t].shape[a];
                kshape[a] = red[a] ? 1 : cases[t].shape[a];
            }
            bool order_rows = t == n_cases - 1;
            for (int64_t o = 0; order_rows && o < rows; o++) {
                float *xr = (float *)x.data + o * len;
                xr[0] = 1.0f, xr[1] = 0.0f, xr[2] = 0x1p60f, xr[3] = -0x1p60f;
            }
            const float *xv = x.data;
            float *bits = malloc((size_t)rows * sizeof(float));
            for (int64_t o = 0; o < rows; o++) {
                double sum = 0.0; /* the walk's identity, then each chunk's sum of up to 512 */
                for (int64_t c = 0; c < len; c += 512) {
                    int64_t m = len - c < 512 ? len - c : 512, q = m / 4 * 4;
                    double s[4] = {0};
                    for (int64_t k = 0; k < q; k++) s[k % 4] += (double)xv[o * len + c + k];
                    for (int64_t k = q; k < m; k++) s[0] += (double)xv[o * len + c + k];
                    sum += (s[0] + s[1]) + (s[2] + s[3]);
                }
                bits[o] = (float)(mean ? sum / (double)len : sum);
            }
            double *xd = values(&x), *expect = malloc((size_t)rows * sizeof(double));
            ref_reduce(mean ? REF_MEAN : REF_SUM, xd, rank, cases[t].shape, red, expect);
            th_case *c = th_begin(op, "", 18);
            th_input(c, &x);
            mrt_tensor ax = th_vec_i64(cases[t].n_axes, cases[t].axes);
            th_input_const(c, &ax); /* opset 18: axes an input for both */
            th_attr_int(c, "keepdims", 1);
            mrt_tensor y;
            RUN_OK(c, 1, &y, "%s x%s", op, shape_str(rank, cases[t].shape));
            if (!order_rows) /* the naive reference sums left to right */
                CHECK(&y, expect, rank, kshape, MRT_DTYPE_FLOAT, "%s x%s", op, shape_str(rank, cases[t].shape));
            const float *yv = y.data;
            for (int64_t o = 0; o < rows; o++)
                cr_assert(memcmp(&yv[o], &bits[o], sizeof(float)) == 0, "%s x%s row %lld: %a, summed in order %a", op,
                          shape_str(rank, cases[t].shape), (long long)o, (double)yv[o], (double)bits[o]);
            mrt_tensor_release(&y);
            mrt_tensor_release(&ax);
            mrt_tensor_release(&x);
            th_free(c);
            free(expect);
            free(xd);
            free(bits);
        }
}

Test(reduce, logsumexp_large_values_stable)
{
    int64_t shape[2] = {2, 3}, axis = 1;
    double xv[6] = {1000, 1001, 1002, -1000, -1001, -1e30};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, shape, xv);
    mrt_tensor ax = th_vec_i64(1, &axis);
    th_case *c = th_begin("ReduceLogSumExp", "", 18);
    th_input(c, &x);
    th_input_const(c, &ax);
    th_attr_int(c, "keepdims", 0);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "ReduceLogSumExp large");
    double expect[2] = {1002 + log(1 + exp(-1) + exp(-2)), -1000 + log(1 + exp(-1))};
    int64_t oshape[1] = {2};
    CHECK(&y, expect, 1, oshape, MRT_DTYPE_FLOAT, "ReduceLogSumExp large values");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&ax);
    th_free(c);
}

/* noop_with_empty_axes=1 with empty axes: no reduction, only the elementwise part (spec) */
Test(reduce, noop_with_empty_axes)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.noop_with_empty_axes"));
    int64_t shape[3] = {2, 3, 4};
    for (int k = 0; k < N_REDUCE_OPS; k++) {
        for (int variant = 0; variant < 2; variant++) {
            const char *op = reduce_ops[k].op;
            int opset = strcmp(op, "ReduceSum") == 0 ? 13 : 18;
            mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, shape, reduce_ops[k].lo, reduce_ops[k].hi);
            double *xv = values(&x);
            bool red[3] = {false, false, false};
            double expect[24];
            ref_reduce(reduce_ops[k].ref, xv, 3, shape, red, expect);
            th_case *c = th_begin(op, "", opset);
            th_input(c, &x);
            mrt_tensor ax = th_vec_i64(0, NULL);
            if (variant) th_input_const(c, &ax); /* explicitly empty axes; variant 0 omits the input */
            th_attr_int(c, "noop_with_empty_axes", 1);
            mrt_tensor y;
            RUN_OK(c, 1, &y, "%s noop", op);
            CHECK(&y, expect, 3, shape, MRT_DTYPE_FLOAT, "%s noop_with_empty_axes variant %d", op, variant);
            mrt_tensor_release(&y);
            mrt_tensor_release(&ax);
            mrt_tensor_release(&x);
            th_free(c);
            free(xv);
        }
    }
}

/* Reducing a zero-size dim yields the empty-set value; a zero-size kept dim yields an empty output. */
Test(reduce, empty_set)
{
    int64_t shape[3] = {2, 0, 4}, axis = 1, axis0 = 0;
    static const double empty_vals[] = {0, NAN, -INFINITY, INFINITY, 1, 0, 0, -INFINITY, -INFINITY, 0};
    for (int k = 0; k < N_REDUCE_OPS; k++) {
        const char *op = reduce_ops[k].op;
        mrt_tensor x;
        cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
        mrt_tensor ax = th_vec_i64(1, &axis);
        th_case *c = th_begin(op, "", 18);
        th_input(c, &x);
        th_input_const(c, &ax);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "%s empty set", op);
        double expect[8];
        for (int i = 0; i < 8; i++) expect[i] = empty_vals[reduce_ops[k].ref];
        int64_t oshape[3] = {2, 1, 4};
        CHECK(&y, expect, 3, oshape, MRT_DTYPE_FLOAT, "%s empty set", op);
        mrt_tensor_release(&y);
        th_free(c);
        mrt_tensor_release(&ax);

        /* reduce axis 0 (size 2): the zero-size dim 1 is kept, so the output is empty */
        ax = th_vec_i64(1, &axis0);
        c = th_begin(op, "", 18);
        th_input(c, &x);
        th_input_const(c, &ax);
        th_attr_int(c, "keepdims", 0);
        RUN_OK(c, 1, &y, "%s non-reduced zero dim", op);
        int64_t oshape2[2] = {0, 4};
        CHECK(&y, expect, 2, oshape2, MRT_DTYPE_FLOAT, "%s non-reduced zero dim", op);
        mrt_tensor_release(&y);
        th_free(c);
        mrt_tensor_release(&ax);
        mrt_tensor_release(&x);
    }
}

Test(reduce, integers_exact)
{
    th_rng r;
    th_rng_init(&r, th_seed("reduce.integers_exact"));
    static const mrt_dtype dts[] = {MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT32, MRT_DTYPE_UINT64,
                                    MRT_DTYPE_INT8, MRT_DTYPE_UINT8};
    static const ref_reduce_op ops[] = {REF_SUM, REF_MEAN, REF_MAX, REF_MIN, REF_PROD, REF_L1, REF_SUMSQ};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        bool uns = dts[d] == MRT_DTYPE_UINT32 || dts[d] == MRT_DTYPE_UINT64 || dts[d] == MRT_DTYPE_UINT8;
        bool small = dts[d] == MRT_DTYPE_INT8 || dts[d] == MRT_DTYPE_UINT8;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            int k = 0;
            while (reduce_ops[k].ref != ops[o]) k++;
            if (small && ops[o] != REF_MAX && ops[o] != REF_MIN) continue; /* int8/uint8: Max/Min only */
            int64_t shape[3] = {3, 4, 5}, axes[2] = {-1, 0};
            double lo = uns || ops[o] == REF_PROD ? 0 : -50, hi = ops[o] == REF_PROD ? 4 : 50;
            mrt_tensor x = th_rand(&r, dts[d], 3, shape, lo, hi);
            double *xv = values(&x);
            bool red[3] = {true, false, true};
            double expect[4];
            ref_reduce(ops[o], xv, 3, shape, red, expect);
            if (ops[o] == REF_MEAN)
                for (int i = 0; i < 4; i++) expect[i] = trunc(expect[i]);
            th_case *c = th_begin(reduce_ops[k].op, "", 18);
            th_input(c, &x);
            mrt_tensor ax = th_vec_i64(2, axes);
            th_input_const(c, &ax);
            th_attr_int(c, "keepdims", 0);
            mrt_tensor y;
            RUN_OK(c, 1, &y, "%s %s", reduce_ops[k].op, mrt_dtype_name(dts[d]));
            cr_assert_eq(y.dtype, dts[d]);
            int64_t oshape[1] = {4};
            CHECK(&y, expect, 1, oshape, dts[d], "%s %s", reduce_ops[k].op, mrt_dtype_name(dts[d]));
            mrt_tensor_release(&y);
            mrt_tensor_release(&ax);
            mrt_tensor_release(&x);
            th_free(c);
            free(xv);
        }
    }
}

Test(reduce, uint64_and_bool_extremes)
{
    /* uint64 above INT64_MAX must compare as unsigned */
    int64_t shape[1] = {3};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_UINT64, 1, shape), MRT_STATUS_OK);
    uint64_t *xd = x.data;
    xd[0] = 5;
    xd[1] = UINT64_MAX - 1;
    xd[2] = 7;
    for (int mx = 0; mx < 2; mx++) {
        th_case *c = th_begin(mx ? "ReduceMax" : "ReduceMin", "", 18);
        th_input(c, &x);
        th_attr_int(c, "keepdims", 0);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "uint64 %s", mx ? "max" : "min");
        cr_assert_eq(y.rank, 0);
        cr_assert_eq(((uint64_t *)y.data)[0], mx ? UINT64_MAX - 1 : 5u);
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&x);

    /* bool (opset 20): max = any, min = all; empty max = false, empty min = true */
    int64_t bshape[2] = {2, 3};
    double bv[6] = {0, 1, 0, 1, 1, 1};
    mrt_tensor b = th_from_f64(MRT_DTYPE_BOOL, 2, bshape, bv);
    int64_t axis = 1;
    mrt_tensor ax = th_vec_i64(1, &axis);
    for (int mx = 0; mx < 2; mx++) {
        th_case *c = th_begin(mx ? "ReduceMax" : "ReduceMin", "", 20);
        th_input(c, &b);
        th_input_const(c, &ax);
        th_attr_int(c, "keepdims", 0);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "bool %s", mx ? "max" : "min");
        cr_assert_eq(y.dtype, MRT_DTYPE_BOOL);
        const uint8_t *yd = y.data;
        cr_assert_eq(yd[0], mx ? 1 : 0);
        cr_assert_eq(yd[1], 1);
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&b);
    int64_t eshape[2] = {2, 0};
    mrt_tensor e;
    cr_assert_eq(mrt_tensor_alloc(&e, MRT_DTYPE_BOOL, 2, eshape), MRT_STATUS_OK);
    for (int mx = 0; mx < 2; mx++) {
        th_case *c = th_begin(mx ? "ReduceMax" : "ReduceMin", "", 20);
        th_input(c, &e);
        th_input_const(c, &ax);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "empty bool %s", mx ? "max" : "min");
        const uint8_t *yd = y.data;
        cr_assert_eq(yd[0], mx ? 0 : 1);
        cr_assert_eq(yd[1], mx ? 0 : 1);
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&e);
    mrt_tensor_release(&ax);

    /* empty int32 max: the type's minimum */
    int64_t ishape[1] = {0};
    mrt_tensor ie;
    cr_assert_eq(mrt_tensor_alloc(&ie, MRT_DTYPE_INT32, 1, ishape), MRT_STATUS_OK);
    th_case *c = th_begin("ReduceMax", "", 18);
    th_input(c, &ie);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "empty int32 max");
    cr_assert_eq(((int32_t *)y.data)[0], INT32_MIN);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&ie);
}

/* NaN propagates through Max/Min (numpy semantics) wherever it sits in the reduced run. */
Test(reduce, nan_propagates)
{
    int64_t shape[2] = {3, 3};
    double xv[9] = {NAN, 1, 2, 3, NAN, 5, 6, 7, 8};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, shape, xv);
    for (int mx = 0; mx < 2; mx++) {
        for (int axis = 0; axis < 2; axis++) {
            int64_t a = axis;
            mrt_tensor ax = th_vec_i64(1, &a);
            th_case *c = th_begin(mx ? "ReduceMax" : "ReduceMin", "", 18);
            th_input(c, &x);
            th_input_const(c, &ax);
            th_attr_int(c, "keepdims", 0);
            mrt_tensor y;
            RUN_OK(c, 1, &y, "NaN %d", axis);
            double e0[3] = {NAN, NAN, mx ? 8 : 2}, e1[3] = {NAN, NAN, mx ? 8 : 6};
            int64_t oshape[1] = {3};
            CHECK(&y, axis ? e1 : e0, 1, oshape, MRT_DTYPE_FLOAT, "Reduce%s with NaN, axis %d", mx ? "Max" : "Min",
                  axis);
            mrt_tensor_release(&y);
            mrt_tensor_release(&ax);
            th_free(c);
        }
    }
    mrt_tensor_release(&x);
}

Test(reduce, errors)
{
    int64_t shape[2] = {2, 3};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    int64_t bad[2][2] = {{2, 0}, {1, -1}}; /* out of range; repeated */
    for (int i = 0; i < 2; i++) {
        th_case *c = th_begin("ReduceSum", "", 13);
        th_input(c, &x);
        mrt_tensor ax = th_vec_i64(i == 0 ? 1 : 2, bad[i]);
        th_input_const(c, &ax);
        mrt_tensor y;
        mrt_status st = th_run(c, 1, &y);
        cr_assert_neq(st, MRT_STATUS_OK, "bad axes case %d accepted", i);
        cr_assert(strstr(mrt_last_error(), "ReduceSum") != NULL, "message: %s", mrt_last_error());
        th_free(c);
        mrt_tensor_release(&ax);
        c = th_begin("ReduceMean", "", 11);
        th_input(c, &x);
        th_attr_ints(c, "axes", i == 0 ? 1 : 2, bad[i]);
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK, "bad axes attribute case %d accepted", i);
        th_free(c);
    }
    /* LogSum of int32 was dropped in opset 28 */
    mrt_tensor xi;
    cr_assert_eq(mrt_tensor_alloc(&xi, MRT_DTYPE_INT32, 2, shape), MRT_STATUS_OK);
    th_case *c = th_begin("ReduceLogSum", "", 28);
    th_input(c, &xi);
    mrt_tensor y;
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&xi);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ ArgMax / ArgMin */

Test(argmax, random)
{
    th_rng r;
    th_rng_init(&r, th_seed("argmax.random"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT32,
                                    MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_BFLOAT16};
    for (int trial = 0; trial < 120; trial++) {
        bool is_max = trial % 2 == 0;
        int rank = (int)th_rng_int(&r, 1, 4);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 6, false);
        int axis = (int)th_rng_int(&r, -rank, rank - 1);
        int ax = axis < 0 ? axis + rank : axis;
        bool keep = th_rng_int(&r, 0, 1), last = th_rng_int(&r, 0, 1);
        mrt_dtype dt = dts[trial % 7];
        int opset = last ? 13 : (int)th_rng_int(&r, 11, 13);
        /* small integer range: plenty of ties for select_last_index */
        mrt_tensor x = th_rand(&r, dt, rank, shape, 0, 4);
        double *xv = values(&x);
        int64_t oshape[16], n_out = 1;
        int orank = 0;
        for (int a = 0; a < rank; a++) {
            if (a != ax) n_out *= shape[a];
            if (a != ax || keep) oshape[orank++] = a == ax ? 1 : shape[a];
        }
        int64_t *ei = malloc((size_t)n_out * sizeof(int64_t));
        double *expect = malloc((size_t)n_out * sizeof(double));
        ref_argmax(is_max, last, xv, rank, shape, ax, ei);
        for (int64_t i = 0; i < n_out; i++) expect[i] = (double)ei[i];
        th_case *c = th_begin(is_max ? "ArgMax" : "ArgMin", "", opset);
        th_input(c, &x);
        th_attr_int(c, "axis", axis);
        th_attr_int(c, "keepdims", keep);
        if (last) th_attr_int(c, "select_last_index", 1);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "Arg%s x%s axis %d", is_max ? "Max" : "Min", shape_str(rank, shape), axis);
        cr_assert_eq(y.dtype, MRT_DTYPE_INT64);
        CHECK(&y, expect, orank, oshape, MRT_DTYPE_INT64, "Arg%s %s x%s axis %d keep %d last %d",
              is_max ? "Max" : "Min", mrt_dtype_name(dt), shape_str(rank, shape), axis, keep, last);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        th_free(c);
        free(xv);
        free(ei);
        free(expect);
    }
}

/* Long contiguous axes are scanned in chunks: ties and the best value across chunk boundaries. */
Test(argmax, long_axes_and_cumsum)
{
    th_rng r;
    th_rng_init(&r, th_seed("argmax.long_axes_and_cumsum"));
    int64_t shape[2] = {3, 1500};
    for (int v = 0; v < 8; v++) {
        mrt_dtype dt = v % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_FLOAT;
        mrt_tensor x = th_rand(&r, dt, 2, shape, -100, 100);
        double *xv = values(&x);
        bool is_max = v & 2, last = v & 4;
        int64_t ei[3];
        double expect[4500];
        ref_argmax(is_max, last, xv, 2, shape, 1, ei);
        for (int i = 0; i < 3; i++) expect[i] = (double)ei[i];
        th_case *c = th_begin(is_max ? "ArgMax" : "ArgMin", "", 13);
        th_input(c, &x);
        th_attr_int(c, "axis", -1);
        th_attr_int(c, "keepdims", 0);
        th_attr_int(c, "select_last_index", last);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "long Arg%s", is_max ? "Max" : "Min");
        CHECK(&y, expect, 1, shape, MRT_DTYPE_INT64, "long Arg%s %s last %d", is_max ? "Max" : "Min",
              mrt_dtype_name(dt), last);
        mrt_tensor_release(&y);
        th_free(c);

        bool excl = v & 2, rev = v & 4;
        ref_cumsum(xv, 2, shape, 1, excl, rev, expect);
        mrt_tensor ax = th_scalar_i64(-1);
        c = th_begin("CumSum", "", 14);
        th_input(c, &x);
        th_input_const(c, &ax);
        th_attr_int(c, "exclusive", excl);
        th_attr_int(c, "reverse", rev);
        RUN_OK(c, 1, &y, "long CumSum");
        CHECK(&y, expect, 2, shape, dt, "long CumSum %s exclusive %d reverse %d", mrt_dtype_name(dt), excl, rev);
        mrt_tensor_release(&y);
        mrt_tensor_release(&ax);
        th_free(c);
        mrt_tensor_release(&x);
        free(xv);
    }
}

Test(argmax, empty_axis_is_an_error)
{
    int64_t shape[2] = {3, 0};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    th_case *c = th_begin("ArgMax", "", 13);
    th_input(c, &x);
    th_attr_int(c, "axis", 1);
    mrt_tensor y;
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    c = th_begin("ArgMin", "", 13);
    th_input(c, &x);
    th_attr_int(c, "axis", 2);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ CumSum */

Test(cumsum, random)
{
    th_rng r;
    th_rng_init(&r, th_seed("cumsum.random"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT64,
                                    MRT_DTYPE_FLOAT16, MRT_DTYPE_UINT32};
    for (int trial = 0; trial < 60; trial++) {
        int rank = (int)th_rng_int(&r, 1, 4);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 7, true);
        int axis = (int)th_rng_int(&r, -rank, rank - 1);
        bool excl = trial & 1, rev = (trial >> 1) & 1;
        mrt_dtype dt = dts[trial % 6];
        mrt_tensor x = th_rand(&r, dt, rank, shape, dt == MRT_DTYPE_UINT32 ? 0 : -9, 9);
        double *xv = values(&x);
        int64_t n = ref_numel(rank, shape);
        double *expect = malloc((size_t)(n + 1) * sizeof(double));
        ref_cumsum(xv, rank, shape, axis < 0 ? axis + rank : axis, excl, rev, expect);
        th_case *c = th_begin("CumSum", "", trial % 3 ? 14 : 11);
        th_input(c, &x);
        mrt_tensor ax;
        int32_t ax32 = axis;
        if (trial % 4 == 0) {
            cr_assert_eq(mrt_tensor_alloc(&ax, MRT_DTYPE_INT32, 0, NULL), MRT_STATUS_OK);
            memcpy(ax.data, &ax32, 4);
        } else {
            ax = th_scalar_i64(axis);
        }
        if (trial % 5 == 0) th_input(c, &ax);
        else th_input_const(c, &ax);
        th_attr_int(c, "exclusive", excl);
        th_attr_int(c, "reverse", rev);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "CumSum x%s axis %d", shape_str(rank, shape), axis);
        CHECK(&y, expect, rank, shape, dt, "CumSum %s x%s axis %d exclusive %d reverse %d", mrt_dtype_name(dt),
              shape_str(rank, shape), axis, excl, rev);
        mrt_tensor_release(&y);
        mrt_tensor_release(&ax);
        mrt_tensor_release(&x);
        th_free(c);
        free(xv);
        free(expect);
    }
}

Test(cumsum, bad_axis)
{
    int64_t shape[2] = {2, 3};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    mrt_tensor ax = th_scalar_i64(2);
    th_case *c = th_begin("CumSum", "", 14);
    th_input(c, &x);
    th_input_const(c, &ax);
    mrt_tensor y;
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&ax);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ Softmax family */

static const char *softmax_ops[3] = {"Softmax", "LogSoftmax", "Hardmax"};

static void softmax_case(th_rng *r, int kind, int opset, mrt_dtype dt, int rank, const int64_t *shape, int axis,
                         bool set_axis, double lo, double hi)
{
    mrt_tensor x = th_rand(r, dt, rank, shape, lo, hi);
    double *xv = values(&x);
    int64_t n = ref_numel(rank, shape);
    double *expect = malloc((size_t)(n + 1) * sizeof(double));
    int ax = set_axis ? axis : (opset >= 13 ? -1 : 1);
    ax = ax < 0 ? ax + rank : ax;
    ref_softmax(kind, xv, rank, shape, ax, opset < 13, expect);
    th_case *c = th_begin(softmax_ops[kind], "", opset);
    th_input(c, &x);
    if (set_axis) th_attr_int(c, "axis", axis);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "%s-%d x%s axis %d", softmax_ops[kind], opset, shape_str(rank, shape), axis);
    CHECK(&y, expect, rank, shape, dt, "%s-%d %s x%s axis %d (set %d)", softmax_ops[kind], opset, mrt_dtype_name(dt),
          shape_str(rank, shape), axis, set_axis);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
    free(xv);
    free(expect);
}

Test(softmax, random_opsets)
{
    th_rng r;
    th_rng_init(&r, th_seed("softmax.random_opsets"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    static const int opsets[] = {1, 11, 13};
    for (int trial = 0; trial < 150; trial++) {
        int kind = trial % 3;
        int opset = opsets[(trial / 3) % 3];
        int rank = (int)th_rng_int(&r, opset < 13 ? 2 : 1, 4);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 7, true);
        int axis = (int)th_rng_int(&r, opset == 1 ? 0 : -rank, rank - 1);
        bool set_axis = th_rng_int(&r, 0, 3) != 0;
        mrt_dtype dt = dts[(trial / 9) % 4];
        softmax_case(&r, kind, opset, dt, rank, shape, axis, set_axis, -4, 4);
    }
}

Test(softmax, large_inner_block)
{
    th_rng r;
    th_rng_init(&r, th_seed("softmax.large_inner_block"));
    int64_t shape[3] = {2, 300, 41}, shape2[2] = {3, 20000};
    for (int kind = 0; kind < 3; kind++) {
        softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 3, shape, 1, true, -5, 5);
        softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 3, shape, 0, true, -5, 5);
        softmax_case(&r, kind, 13, MRT_DTYPE_DOUBLE, 2, shape2, -1, false, -5, 5);
        int64_t shape3[2] = {9000, 3}; /* one column of a long axis at a time */
        softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 2, shape3, 0, true, -5, 5);
    }
}

Test(softmax, large_values_stable)
{
    th_rng r;
    th_rng_init(&r, th_seed("softmax.large_values_stable"));
    int64_t shape[2] = {4, 9};
    for (int kind = 0; kind < 2; kind++) {
        softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 2, shape, -1, false, 10000, 10010);
        softmax_case(&r, kind, 13, MRT_DTYPE_DOUBLE, 2, shape, 0, true, -1e5, -1e5 + 30);
        softmax_case(&r, kind, 11, MRT_DTYPE_FLOAT, 2, shape, 1, true, 3000, 3040);
    }
}

/* float32 over the last axis (the rows path: a vectorised maximum, exps and a partial-sum order of its own), rows
   long and short, against the float64 reference; one row with a NaN gives NaNs */
Test(softmax, float_rows_long_and_short)
{
    th_rng r;
    th_rng_init(&r, th_seed("softmax.float_rows"));
    const int64_t shapes[][2] = {{5, 1500}, {7, 37}, {3, 16}, {4, 15}};
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; i < 4; i++) {
            softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 2, shapes[i], -1, false, -9, 9);
            /* far below 0: a maximum taken as 0 would underflow every exp */
            softmax_case(&r, kind, 13, MRT_DTYPE_FLOAT, 2, shapes[i], -1, false, -300, -290);
        }
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 40}, -3, 3);
    ((float *)x.data)[40 + 33] = NAN; /* row 1, in the vector tail */
    for (int kind = 0; kind < 2; kind++) {
        th_case *c = th_begin(softmax_ops[kind], "", 13);
        th_input(c, &x);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "NaN row");
        for (int j = 0; j < 80; j++)
            cr_assert(j < 40 ? !isnan(((float *)y.data)[j]) : isnan(((float *)y.data)[j]), "%s: element %d",
                      softmax_ops[kind], j);
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&x);
}

Test(softmax, hardmax_ties_pick_first)
{
    int64_t shape[2] = {2, 4};
    double xv[8] = {1, 3, 3, 2, 5, 5, 5, 5};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, shape, xv);
    th_case *c = th_begin("Hardmax", "", 13);
    th_input(c, &x);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "Hardmax ties");
    double expect[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    CHECK(&y, expect, 2, shape, MRT_DTYPE_FLOAT, "Hardmax ties");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(softmax, errors)
{
    int64_t shape[2] = {2, 3};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    mrt_tensor xi;
    cr_assert_eq(mrt_tensor_alloc(&xi, MRT_DTYPE_INT32, 2, shape), MRT_STATUS_OK);
    for (int kind = 0; kind < 3; kind++) {
        th_case *c = th_begin(softmax_ops[kind], "", 13);
        th_input(c, &x);
        th_attr_int(c, "axis", 2);
        mrt_tensor y;
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
        cr_assert(strstr(mrt_last_error(), "axis") != NULL, "message: %s", mrt_last_error());
        th_free(c);
        c = th_begin(softmax_ops[kind], "", 13);
        th_input(c, &xi);
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
        th_free(c);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&xi);
}

/* ------------------------------------------------------------------ normalization */

/* A random tensor of dtype dt and its values as doubles (freed by the caller). */
typedef struct rt {
    mrt_tensor t;
    double *v;
} rt;

static rt rt_rand(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, double lo, double hi)
{
    rt x;
    x.t = th_rand(r, dt, rank, shape, lo, hi);
    x.v = values(&x.t);
    return x;
}

static void rt_free(rt *x)
{
    mrt_tensor_release(&x->t);
    free(x->v);
}

Test(norm, batchnorm_inference)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.batchnorm_inference"));
    static const int opsets[] = {6, 7, 9, 14, 15};
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int trial = 0; trial < 40; trial++) {
        int opset = opsets[trial % 5];
        mrt_dtype dt = dts[trial % 3];
        /* opset 15 lets scale/B (T1) and the statistics (T2) differ from X */
        mrt_dtype dp = opset >= 15 && trial % 2 ? MRT_DTYPE_DOUBLE : dt;
        mrt_dtype ds = opset >= 14 && trial % 3 == 1 ? MRT_DTYPE_FLOAT : dp;
        if (opset < 15) dp = dt;
        int rank = (int)th_rng_int(&r, 2, 5);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 5, true);
        int64_t C = shape[1];
        rt x = rt_rand(&r, dt, rank, shape, -3, 3);
        rt sc = rt_rand(&r, dp, 1, &C, 0.5, 2), b = rt_rand(&r, dp, 1, &C, -1, 1);
        rt m = rt_rand(&r, ds, 1, &C, -1, 1), v = rt_rand(&r, ds, 1, &C, 0.1, 2);
        float eps = trial % 2 ? 1e-3f : 1e-5f;
        int64_t n = ref_numel(rank, shape);
        double *expect = malloc((size_t)(n + 1) * sizeof(double));
        ref_batchnorm(x.v, rank, shape, sc.v, b.v, m.v, v.v, eps, expect);
        th_case *c = th_begin("BatchNormalization", "", opset);
        th_input(c, &x.t);
        th_input_const(c, &sc.t);
        th_input_const(c, &b.t);
        th_input(c, &m.t);
        th_input(c, &v.t);
        if (trial % 2) th_attr_float(c, "epsilon", eps);
        if (opset == 6) th_attr_int(c, "is_test", 1);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "BatchNormalization-%d x%s", opset, shape_str(rank, shape));
        CHECK(&y, expect, rank, shape, dt, "BatchNormalization-%d %s/%s/%s x%s", opset, mrt_dtype_name(dt),
              mrt_dtype_name(dp), mrt_dtype_name(ds), shape_str(rank, shape));
        mrt_tensor_release(&y);
        th_free(c);
        rt_free(&x);
        rt_free(&sc);
        rt_free(&b);
        rt_free(&m);
        rt_free(&v);
        free(expect);
    }
}

Test(norm, batchnorm_training_mode)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.batchnorm_training_mode"));
    for (int trial = 0; trial < 8; trial++) {
        int rank = 2 + trial % 3;
        int64_t shape[16];
        rand_shape(&r, rank, shape, 5, false);
        int64_t C = shape[1];
        mrt_dtype dt = trial % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        rt x = rt_rand(&r, dt, rank, shape, -3, 3);
        rt sc = rt_rand(&r, dt, 1, &C, 0.5, 2), b = rt_rand(&r, dt, 1, &C, -1, 1);
        rt m = rt_rand(&r, dt, 1, &C, -1, 1), v = rt_rand(&r, dt, 1, &C, 0.1, 2);
        int64_t n = ref_numel(rank, shape);
        double *expect = malloc((size_t)n * sizeof(double)), rm[8], rv[8];
        float mom = 0.7f;
        ref_batchnorm_train(x.v, rank, shape, sc.v, b.v, m.v, v.v, 1e-5f, mom, expect, rm, rv);
        th_case *c = th_begin("BatchNormalization", "", trial % 2 ? 14 : 15);
        th_input(c, &x.t);
        th_input(c, &sc.t);
        th_input(c, &b.t);
        th_input(c, &m.t);
        th_input(c, &v.t);
        th_attr_int(c, "training_mode", 1);
        th_attr_float(c, "momentum", mom);
        mrt_tensor y[3];
        RUN_OK(c, 3, y, "BatchNormalization training x%s", shape_str(rank, shape));
        CHECK(&y[0], expect, rank, shape, dt, "BatchNormalization training Y x%s", shape_str(rank, shape));
        CHECK(&y[1], rm, 1, &C, dt, "BatchNormalization running_mean x%s", shape_str(rank, shape));
        CHECK(&y[2], rv, 1, &C, dt, "BatchNormalization running_var x%s", shape_str(rank, shape));
        for (int i = 0; i < 3; i++) mrt_tensor_release(&y[i]);
        th_free(c);
        rt_free(&x);
        rt_free(&sc);
        rt_free(&b);
        rt_free(&m);
        rt_free(&v);
        free(expect);
    }
}

/* opset 7 spatial=0: statistics per (channel, position), i.e. X flattened to [N, C*D1*...] */
Test(norm, batchnorm_non_spatial)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.batchnorm_non_spatial"));
    int64_t shape[4] = {2, 3, 2, 2}, pshape[3] = {3, 2, 2}, flat[2] = {2, 12};
    rt x = rt_rand(&r, MRT_DTYPE_FLOAT, 4, shape, -3, 3);
    rt sc = rt_rand(&r, MRT_DTYPE_FLOAT, 3, pshape, 0.5, 2), b = rt_rand(&r, MRT_DTYPE_FLOAT, 3, pshape, -1, 1);
    rt m = rt_rand(&r, MRT_DTYPE_FLOAT, 3, pshape, -1, 1), v = rt_rand(&r, MRT_DTYPE_FLOAT, 3, pshape, 0.1, 2);
    double expect[24];
    ref_batchnorm(x.v, 2, flat, sc.v, b.v, m.v, v.v, 1e-5f, expect);
    th_case *c = th_begin("BatchNormalization", "", 7);
    th_input(c, &x.t);
    th_input(c, &sc.t);
    th_input(c, &b.t);
    th_input(c, &m.t);
    th_input(c, &v.t);
    th_attr_int(c, "spatial", 0);
    mrt_tensor y;
    RUN_OK(c, 1, &y, "BatchNormalization spatial=0");
    CHECK(&y, expect, 4, shape, MRT_DTYPE_FLOAT, "BatchNormalization spatial=0");
    mrt_tensor_release(&y);
    th_free(c);
    rt_free(&x);
    rt_free(&sc);
    rt_free(&b);
    rt_free(&m);
    rt_free(&v);
}

Test(norm, batchnorm_errors)
{
    int64_t shape[3] = {2, 3, 4}, C = 3, C1 = 4;
    mrt_tensor x, p, q;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&p, MRT_DTYPE_FLOAT, 1, &C), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&q, MRT_DTYPE_FLOAT, 1, &C1), MRT_STATUS_OK);
    /* B of the wrong length */
    th_case *c = th_begin("BatchNormalization", "", 15);
    th_input(c, &x);
    th_input(c, &p);
    th_input(c, &q);
    th_input(c, &p);
    th_input(c, &p);
    mrt_tensor y[3];
    cr_assert_neq(th_run(c, 1, y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "'B'") && strstr(mrt_last_error(), "[4]"), "message: %s", mrt_last_error());
    th_free(c);
    /* running statistics requested without training_mode */
    c = th_begin("BatchNormalization", "", 15);
    for (int i = 0; i < 5; i++) th_input(c, i ? &p : &x);
    cr_assert_neq(th_run(c, 3, y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&p);
    mrt_tensor_release(&q);
}

Test(norm, instance_and_group)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.instance_and_group"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (int trial = 0; trial < 48; trial++) {
        int variant = trial % 3; /* 0 InstanceNormalization, 1 GroupNormalization-18, 2 GroupNormalization-21 */
        mrt_dtype dt = dts[(trial / 3) % 4];
        int rank = (int)th_rng_int(&r, 2, 5);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 5, false);
        shape[1] = th_rng_int(&r, 1, 4) * 2;
        int64_t C = shape[1], groups = variant == 0 ? C : (trial % 2 ? 2 : 1);
        if (variant == 0 && dt == MRT_DTYPE_BFLOAT16) dt = MRT_DTYPE_FLOAT;
        int64_t np = variant == 1 ? groups : C;
        /* bfloat16 tolerance holds only for normalized values of moderate size: avoid near-constant groups */
        if (dt == MRT_DTYPE_BFLOAT16 && ref_numel(rank - 2, shape + 2) * (C / groups) < 4) dt = MRT_DTYPE_FLOAT;
        rt x = rt_rand(&r, dt, rank, shape, -3, 3);
        rt sc = rt_rand(&r, dt, 1, &np, 0.5, 2), b = rt_rand(&r, dt, 1, &np, -1, 1);
        int64_t n = ref_numel(rank, shape);
        double *expect = malloc((size_t)n * sizeof(double));
        ref_groupnorm(x.v, rank, shape, groups, sc.v, b.v, variant == 1, 1e-5f, expect);
        const char *op = variant == 0 ? "InstanceNormalization" : "GroupNormalization";
        int opset = variant == 0 ? (trial % 2 ? 22 : 6) : variant == 1 ? 18 : 21;
        th_case *c = th_begin(op, "", opset);
        th_input(c, &x.t);
        th_input_const(c, &sc.t);
        th_input_const(c, &b.t);
        if (variant) th_attr_int(c, "num_groups", groups);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "%s-%d x%s", op, opset, shape_str(rank, shape));
        CHECK(&y, expect, rank, shape, dt, "%s-%d %s x%s groups %lld", op, opset, mrt_dtype_name(dt),
              shape_str(rank, shape), (long long)groups);
        mrt_tensor_release(&y);
        th_free(c);
        rt_free(&x);
        rt_free(&sc);
        rt_free(&b);
        free(expect);
    }
}

/* float32 Instance/GroupNormalization on long rows (chunks of 512 and a tail), rows split over the threads and taken
   four at a time (ops_cpu/norm.c) or one by one: against float64, 1 and 2 threads bit for bit, and a row gives the
   same bits on either path (the groups rotated by one, so the last group's row, which went alone, now goes in a
   block of four). */
Test(norm, instance_and_group_long_rows)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.instance_and_group_long_rows"));
    for (int variant = 0; variant < 2; variant++) {
        int64_t groups = 5, cpg = variant ? 2 : 1, C = groups * cpg, s = variant ? 550 : 1101;
        int64_t shape[3] = {1, C, s}, n = C * s, plane = cpg * s;
        rt x = rt_rand(&r, MRT_DTYPE_FLOAT, 3, shape, -3, 3);
        rt sc = rt_rand(&r, MRT_DTYPE_FLOAT, 1, &C, 0.5, 2), b = rt_rand(&r, MRT_DTYPE_FLOAT, 1, &C, -1, 1);
        double *expect = malloc((size_t)n * sizeof(double));
        cr_assert(expect);
        ref_groupnorm(x.v, 3, shape, groups, sc.v, b.v, false, 1e-5f, expect);
        const char *op = variant ? "GroupNormalization" : "InstanceNormalization";
        mrt_tensor y[3];
        for (int k = 0; k < 3; k++) {
            /* k 2: groups rotated by one (the last first), on 2 threads */
            mrt_tensor xt = x.t, st = sc.t, bt = b.t;
            if (k == 2) {
                cr_assert_eq(mrt_tensor_copy(&xt, &x.t), MRT_STATUS_OK);
                cr_assert_eq(mrt_tensor_copy(&st, &sc.t), MRT_STATUS_OK);
                cr_assert_eq(mrt_tensor_copy(&bt, &b.t), MRT_STATUS_OK);
                const float *xs = x.t.data, *ss = sc.t.data, *bs = b.t.data;
                float *xd = xt.data, *sd = st.data, *bd = bt.data;
                for (int64_t g = 0; g < groups; g++) {
                    int64_t from = (g + groups - 1) % groups;
                    memcpy(xd + g * plane, xs + from * plane, (size_t)plane * sizeof(float));
                    memcpy(sd + g * cpg, ss + from * cpg, (size_t)cpg * sizeof(float));
                    memcpy(bd + g * cpg, bs + from * cpg, (size_t)cpg * sizeof(float));
                }
            }
            th_case *c = th_begin(op, "", variant ? 21 : 22);
            th_input(c, &xt);
            th_input_const(c, &st);
            th_input_const(c, &bt);
            if (variant) th_attr_int(c, "num_groups", groups);
            mrt_session_options opt = mrt_session_options_default();
            opt.n_threads = k == 0 ? 1 : 2;
            cr_assert_eq(th_run_opt(c, &opt, 1, &y[k]), MRT_STATUS_OK, "%s: %s", op, mrt_last_error());
            th_free(c);
            if (k == 2) {
                mrt_tensor_release(&xt);
                mrt_tensor_release(&st);
                mrt_tensor_release(&bt);
            }
        }
        CHECK(&y[0], expect, 3, shape, MRT_DTYPE_FLOAT, "%s long rows", op);
        cr_assert_eq(memcmp(y[0].data, y[1].data, (size_t)n * sizeof(float)), 0, "%s: 1 and 2 threads differ", op);
        const float *y0 = y[0].data, *y2 = y[2].data;
        for (int64_t g = 0; g < groups; g++)
            cr_assert_eq(memcmp(y2 + g * plane, y0 + (g + groups - 1) % groups * plane, (size_t)plane * sizeof(float)), 0,
                         "%s: group %lld differs with the groups rotated", op, (long long)g);
        for (int k = 0; k < 3; k++) mrt_tensor_release(&y[k]);
        rt_free(&x);
        rt_free(&sc);
        rt_free(&b);
        free(expect);
    }
}

Test(norm, instance_group_errors)
{
    int64_t shape[3] = {2, 4, 3}, four = 4, three = 3;
    mrt_tensor x, p4, p3;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&p4, MRT_DTYPE_FLOAT, 1, &four), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&p3, MRT_DTYPE_FLOAT, 1, &three), MRT_STATUS_OK);
    mrt_tensor y;
    th_case *c = th_begin("InstanceNormalization", "", 22);
    th_input(c, &x);
    th_input(c, &p3);
    th_input(c, &p4);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "'scale'") != NULL, "message: %s", mrt_last_error());
    th_free(c);
    c = th_begin("GroupNormalization", "", 21); /* 3 groups do not divide 4 channels */
    th_input(c, &x);
    th_input(c, &p4);
    th_input(c, &p4);
    th_attr_int(c, "num_groups", 3);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    c = th_begin("GroupNormalization", "", 18); /* opset 18 wants one scale per group */
    th_input(c, &x);
    th_input(c, &p4);
    th_input(c, &p4);
    th_attr_int(c, "num_groups", 2);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&p4);
    mrt_tensor_release(&p3);
}

/* Scale/bias shapes for LayerNorm/RMSNorm: variant 0 the normalized shape, 1 the normalized shape with some
   dims 1 and leading dims dropped, 2 X's full shape with some dims 1 (varies over the outer dims). */
static int param_shape(th_rng *r, int variant, int rank, const int64_t *shape, int axis, int64_t *ps)
{
    if (variant == 0) {
        for (int a = axis; a < rank; a++) ps[a - axis] = shape[a];
        return rank - axis;
    }
    int first = variant == 1 ? axis + (int)th_rng_int(r, 0, rank - axis - 1) : 0;
    for (int a = first; a < rank; a++) ps[a - first] = th_rng_int(r, 0, 2) == 0 ? 1 : shape[a];
    return rank - first;
}

Test(norm, layer_and_rms)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.layer_and_rms"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (int trial = 0; trial < 80; trial++) {
        bool rms = trial % 2;
        mrt_dtype dt = dts[(trial / 2) % 4];
        int rank = (int)th_rng_int(&r, 1, 4);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 6, false);
        int axis = (int)th_rng_int(&r, -rank, rank - 1), ax = axis < 0 ? axis + rank : axis;
        bool set_axis = trial % 5 != 0;
        if (!set_axis) ax = rank - 1;
        /* bfloat16 outputs only meet the tolerance when each row normalizes several values */
        if (dt == MRT_DTYPE_BFLOAT16 && ref_numel(rank - ax, shape + ax) < 4) dt = MRT_DTYPE_FLOAT;
        int64_t sshape[16], bshape[16];
        int srank = param_shape(&r, (trial / 8) % 3, rank, shape, ax, sshape);
        int brank = param_shape(&r, (trial / 3) % 3, rank, shape, ax, bshape);
        bool with_b = !rms && trial % 3 != 0;
        rt x = rt_rand(&r, dt, rank, shape, -3, 3);
        rt sc = rt_rand(&r, dt, srank, sshape, 0.5, 2), b = rt_rand(&r, dt, brank, bshape, -1, 1);
        int64_t n = ref_numel(rank, shape), rows = ref_numel(ax, shape);
        double *es = malloc((size_t)n * sizeof(double)), *eb = malloc((size_t)n * sizeof(double));
        double *expect = malloc((size_t)n * sizeof(double));
        double *mean = malloc((size_t)rows * sizeof(double)), *inv = malloc((size_t)rows * sizeof(double));
        ref_broadcast(sc.v, srank, sshape, rank, shape, es);
        ref_broadcast(b.v, brank, bshape, rank, shape, eb);
        float eps = trial % 4 == 1 ? 1e-2f : 1e-5f;
        ref_layernorm(x.v, rank, shape, ax, es, with_b ? eb : NULL, eps, rms, expect, mean, inv);
        th_case *c = th_begin(rms ? "RMSNormalization" : "LayerNormalization", "", rms ? 23 : 17);
        th_input(c, &x.t);
        th_input_const(c, &sc.t);
        if (with_b) th_input(c, &b.t);
        if (set_axis) th_attr_int(c, "axis", axis);
        if (eps != 1e-5f) th_attr_float(c, "epsilon", eps);
        int n_out = rms ? 1 : 3;
        mrt_tensor y[3];
        RUN_OK(c, n_out, y, "%s x%s axis %d scale %s", rms ? "RMS" : "Layer", shape_str(rank, shape), axis,
               shape_str(srank, sshape));
        CHECK(&y[0], expect, rank, shape, dt, "%sNormalization %s x%s axis %d scale %s bias %s", rms ? "RMS" : "Layer",
              mrt_dtype_name(dt), shape_str(rank, shape), axis, shape_str(srank, sshape),
              with_b ? shape_str(brank, bshape) : "none");
        if (!rms) {
            int64_t mshape[16];
            for (int a = 0; a < rank; a++) mshape[a] = a < ax ? shape[a] : 1;
            cr_assert_eq(y[1].dtype, MRT_DTYPE_FLOAT);
            CHECK(&y[1], mean, rank, mshape, MRT_DTYPE_FLOAT, "LayerNormalization Mean x%s", shape_str(rank, shape));
            CHECK(&y[2], inv, rank, mshape, MRT_DTYPE_FLOAT, "LayerNormalization InvStdDev x%s",
                  shape_str(rank, shape));
        }
        for (int i = 0; i < n_out; i++) mrt_tensor_release(&y[i]);
        th_free(c);
        rt_free(&x);
        rt_free(&sc);
        rt_free(&b);
        free(es);
        free(eb);
        free(expect);
        free(mean);
        free(inv);
    }
}

/* RMSNormalization's output takes the scale's dtype (type V); LayerNorm's stash_type sets Mean's dtype. */
Test(norm, rms_output_dtype_and_stash_type)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.rms_output_dtype_and_stash_type"));
    int64_t shape[2] = {3, 8}, C = 8;
    rt x = rt_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -3, 3);
    rt sc = rt_rand(&r, MRT_DTYPE_DOUBLE, 1, &C, 0.5, 2);
    double expect[24], es[24];
    ref_broadcast(sc.v, 1, &C, 2, shape, es);
    ref_layernorm(x.v, 2, shape, 1, es, NULL, 1e-5f, true, expect, NULL, NULL);
    th_case *c = th_begin("RMSNormalization", "", 23);
    th_input(c, &x.t);
    th_input(c, &sc.t);
    mrt_tensor y[3];
    RUN_OK(c, 1, y, "RMSNormalization float X, double scale");
    cr_assert_eq(y[0].dtype, MRT_DTYPE_DOUBLE);
    CHECK(&y[0], expect, 2, shape, MRT_DTYPE_FLOAT, "RMSNormalization float X, double scale");
    mrt_tensor_release(&y[0]);
    th_free(c);
    rt_free(&sc);
    sc = rt_rand(&r, MRT_DTYPE_FLOAT, 1, &C, 0.5, 2);
    c = th_begin("LayerNormalization", "", 17);
    th_input(c, &x.t);
    th_input(c, &sc.t);
    th_attr_int(c, "stash_type", MRT_DTYPE_BFLOAT16);
    RUN_OK(c, 3, y, "LayerNormalization stash_type bfloat16");
    cr_assert_eq(y[0].dtype, MRT_DTYPE_FLOAT);
    cr_assert_eq(y[1].dtype, MRT_DTYPE_BFLOAT16);
    cr_assert_eq(y[2].dtype, MRT_DTYPE_BFLOAT16);
    for (int i = 0; i < 3; i++) mrt_tensor_release(&y[i]);
    th_free(c);
    rt_free(&sc);
    rt_free(&x);
}

Test(norm, layer_rms_errors)
{
    int64_t shape[3] = {2, 3, 4}, bad = 3, badfull[3] = {3, 3, 4};
    mrt_tensor x, s, s2;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&s, MRT_DTYPE_FLOAT, 1, &bad), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&s2, MRT_DTYPE_FLOAT, 3, badfull), MRT_STATUS_OK);
    const char *ops[2] = {"LayerNormalization", "RMSNormalization"};
    for (int k = 0; k < 2; k++) {
        mrt_tensor y;
        th_case *c = th_begin(ops[k], "", k ? 23 : 17);
        th_input(c, &x);
        th_input(c, &s);
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
        cr_assert(strstr(mrt_last_error(), "[3]") && strstr(mrt_last_error(), "[2,3,4]"), "message: %s",
                  mrt_last_error());
        th_free(c);
        c = th_begin(ops[k], "", k ? 23 : 17);
        th_input(c, &x);
        th_input(c, &s2);
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
        th_free(c);
        c = th_begin(ops[k], "", k ? 23 : 17);
        th_input(c, &x);
        th_input(c, &x);
        th_attr_int(c, "axis", 3);
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
        cr_assert(strstr(mrt_last_error(), "axis") != NULL, "message: %s", mrt_last_error());
        th_free(c);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&s);
    mrt_tensor_release(&s2);
}

Test(norm, lp_mvn_lrn)
{
    th_rng r;
    th_rng_init(&r, th_seed("norm.lp_mvn_lrn"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int trial = 0; trial < 60; trial++) {
        int op = trial % 3;
        mrt_dtype dt = dts[(trial / 3) % 3];
        int rank = (int)th_rng_int(&r, op == 0 ? 1 : 3, 4);
        int64_t shape[16];
        rand_shape(&r, rank, shape, 5, false);
        rt x = rt_rand(&r, dt, rank, shape, -3, 3);
        int64_t n = ref_numel(rank, shape);
        double *expect = malloc((size_t)n * sizeof(double));
        th_case *c;
        char desc[256];
        if (op == 0) {
            int axis = (int)th_rng_int(&r, -rank, rank - 1), p = trial % 2 ? 1 : 2;
            /* an all-zero input now and then: the spec defines the output as 0 where the norm is 0 */
            if (trial % 4 == 0) {
                rt_free(&x);
                x = rt_rand(&r, dt, rank, shape, 0, 0);
            }
            ref_lpnorm(x.v, rank, shape, axis < 0 ? axis + rank : axis, p, expect);
            c = th_begin("LpNormalization", "", trial % 2 ? 22 : 1);
            th_attr_int(c, "axis", axis);
            th_attr_int(c, "p", p);
            snprintf(desc, sizeof desc, "LpNormalization p=%d axis %d", p, axis);
        } else if (op == 1) {
            bool red[16] = {false};
            int64_t axes[16];
            int n_axes = 0;
            bool def = rank == 4 && trial % 2;
            for (int a = 0; a < rank; a++) {
                red[a] = def ? a != 1 : th_rng_int(&r, 0, 1) != 0;
                if (red[a]) axes[n_axes++] = a - (trial % 4 == 1 ? rank : 0);
            }
            ref_mvn(x.v, rank, shape, red, expect);
            c = th_begin("MeanVarianceNormalization", "", trial % 2 ? 13 : 9);
            if (!def) th_attr_ints(c, "axes", n_axes, axes);
            snprintf(desc, sizeof desc, "MeanVarianceNormalization %s %d axes", def ? "default" : "custom", n_axes);
        } else {
            int64_t size = th_rng_int(&r, 1, 5);
            double alpha = 1e-2, beta = 0.6, bias = 1.5;
            ref_lrn(x.v, rank, shape, size, (float)alpha, (float)beta, (float)bias, expect);
            c = th_begin("LRN", "", trial % 2 ? 13 : 1);
            th_attr_int(c, "size", size);
            th_attr_float(c, "alpha", (float)alpha);
            th_attr_float(c, "beta", (float)beta);
            th_attr_float(c, "bias", (float)bias);
            snprintf(desc, sizeof desc, "LRN size %lld", (long long)size);
        }
        th_input(c, &x.t);
        mrt_tensor y;
        RUN_OK(c, 1, &y, "%s x%s", desc, shape_str(rank, shape));
        CHECK(&y, expect, rank, shape, dt, "%s %s x%s", desc, mrt_dtype_name(dt), shape_str(rank, shape));
        mrt_tensor_release(&y);
        th_free(c);
        rt_free(&x);
        free(expect);
    }
}

Test(norm, lp_lrn_errors)
{
    int64_t shape[2] = {2, 3};
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shape), MRT_STATUS_OK);
    mrt_tensor y;
    th_case *c = th_begin("LpNormalization", "", 22);
    th_input(c, &x);
    th_attr_int(c, "p", 3);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    c = th_begin("LRN", "", 13); /* size is required */
    th_input(c, &x);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    c = th_begin("MeanVarianceNormalization", "", 13); /* default axes [0,2,3] need rank 4 */
    th_input(c, &x);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    th_free(c);
    mrt_tensor_release(&x);
}

/* Zero-size tensors run and give empty outputs. */
Test(norm, empty_tensors)
{
    int64_t shape[4] = {2, 4, 0, 3}, C = 4, zero_n[3] = {0, 4, 5};
    mrt_tensor x, p, xz;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 4, shape), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&xz, MRT_DTYPE_FLOAT, 3, zero_n), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&p, MRT_DTYPE_FLOAT, 1, &C), MRT_STATUS_OK);
    for (int v = 0; v < 2; v++) {
        const mrt_tensor *in = v ? &xz : &x;
        struct {
            const char *op;
            int opset, n_params;
        } cases[] = {{"BatchNormalization", 15, 4}, {"InstanceNormalization", 22, 2}, {"GroupNormalization", 21, 2},
                     {"LpNormalization", 22, 0},   {"MeanVarianceNormalization", 13, 0}, {"LRN", 13, 0},
                     {"Softmax", 13, 0},           {"LogSoftmax", 11, 0},        {"Hardmax", 13, 0},
                     {"CumSum", 14, 0}};
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            th_case *c = th_begin(cases[k].op, "", cases[k].opset);
            th_input(c, in);
            for (int i = 0; i < cases[k].n_params; i++) th_input(c, &p);
            mrt_tensor ax = th_scalar_i64(1);
            if (strcmp(cases[k].op, "CumSum") == 0) th_input_const(c, &ax);
            if (strcmp(cases[k].op, "GroupNormalization") == 0) th_attr_int(c, "num_groups", 2);
            if (strcmp(cases[k].op, "LRN") == 0) th_attr_int(c, "size", 3);
            if (strcmp(cases[k].op, "MeanVarianceNormalization") == 0 && v)
                th_attr_ints(c, "axes", 2, (int64_t[]){0, 2});
            mrt_tensor y;
            RUN_OK(c, 1, &y, "%s on %s", cases[k].op, shape_str(in->rank, in->shape));
            cr_assert_eq(mrt_tensor_numel(&y), 0);
            mrt_tensor_release(&y);
            mrt_tensor_release(&ax);
            th_free(c);
        }
        /* LayerNorm with an empty outer dim / empty normalized dims */
        for (int axis = 0; axis < 3; axis++) {
            int64_t sshape[4];
            int sr = 0;
            for (int a = axis; a < in->rank; a++) sshape[sr++] = in->shape[a];
            mrt_tensor s;
            cr_assert_eq(mrt_tensor_alloc(&s, MRT_DTYPE_FLOAT, sr, sshape), MRT_STATUS_OK);
            th_case *c = th_begin("LayerNormalization", "", 17);
            th_input(c, in);
            th_input(c, &s);
            th_attr_int(c, "axis", axis);
            mrt_tensor y[3];
            RUN_OK(c, 3, y, "LayerNormalization on %s axis %d", shape_str(in->rank, in->shape), axis);
            cr_assert_eq(mrt_tensor_numel(&y[0]), 0);
            for (int i = 0; i < 3; i++) mrt_tensor_release(&y[i]);
            th_free(c);
            mrt_tensor_release(&s);
        }
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&xz);
    mrt_tensor_release(&p);
}

/* The float64 oracle mode runs these ops on widened inputs: results must be double-accurate. */
Test(oracle, fp64_mode_is_double_accurate)
{
    th_rng r;
    th_rng_init(&r, th_seed("oracle.fp64_mode_is_double_accurate"));
    int64_t shape[3] = {3, 50, 7}, ax = 1;
    rt x = rt_rand(&r, MRT_DTYPE_FLOAT, 3, shape, -3, 3);
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    double expect[1050];
    mrt_tensor y;

    bool red[3] = {false, true, false};
    ref_reduce(REF_LOGSUMEXP, x.v, 3, shape, red, expect);
    th_case *c = th_begin("ReduceLogSumExp", "", 18);
    th_input(c, &x.t);
    mrt_tensor axes = th_vec_i64(1, &ax);
    th_input_const(c, &axes);
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t oshape[3] = {3, 1, 7};
    CHECK(&y, expect, 3, oshape, MRT_DTYPE_DOUBLE, "ReduceLogSumExp fp64 (got %s)", mrt_dtype_name(y.dtype));
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&axes);

    ref_softmax(1, x.v, 3, shape, 1, false, expect);
    c = th_begin("LogSoftmax", "", 13);
    th_input(c, &x.t);
    th_attr_int(c, "axis", 1);
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    CHECK(&y, expect, 3, shape, MRT_DTYPE_DOUBLE, "LogSoftmax fp64 (got %s)", mrt_dtype_name(y.dtype));
    mrt_tensor_release(&y);
    th_free(c);
    rt_free(&x);
}
