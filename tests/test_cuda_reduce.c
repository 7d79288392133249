/* The CUDA reduce family (ops_cuda/reduce.cu: Reduce* every version, ArgMax/ArgMin, CumSum) against the CPU kernels
 * (tests/harness.h th_cuda_check): contiguous and strided reductions, every axes form, empty tensors, integers exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Shapes with the axes they reduce (n_axes -1 = no axes at all: every axis, or none with noop_with_empty_axes). */
static const struct {
    int rank;
    int64_t shape[4];
    int n_axes;
    int64_t axes[3];
} layouts[] = {
    {2, {0, 3}, 1, {1}},         /* empty input, non-empty output */
    {2, {3, 0}, 1, {1}},         /* empty reduction: each kind's empty value */
    {1, {7}, -1, {0}},           /* everything into a scalar */
    {3, {3, 5, 2}, 1, {1}},      /* middle axis, strided */
    {3, {2, 1, 33}, 2, {-1, 1}}, /* innermost with a size-1 axis, negative axis */
    {2, {4, 300}, 1, {1}},       /* long contiguous rows: a block per output */
    {2, {300, 5}, 1, {0}},       /* long strided columns: a thread per output */
    {4, {2, 3, 4, 5}, 2, {0, 2}}, /* two separate axes */
    {1, {3000}, 1, {0}},         /* one long row */
};

static void reduce_case(const char *op, int opset, mrt_dtype dt, double lo, double hi, int keepdims, bool noop,
                        bool axes_const)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    bool axes_input = strcmp(op, "ReduceSum") == 0 ? opset >= 13 : opset >= 18;
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        th_case *c = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, layouts[k].rank, layouts[k].shape, lo, hi);
        th_input(c, &x);
        mrt_tensor axes = {0};
        int na = layouts[k].n_axes;
        if (axes_input) {
            if (na >= 0) {
                axes = th_vec_i64(na, layouts[k].axes);
                if (axes_const) th_input_const(c, &axes);
                else th_input(c, &axes);
            }
            if (noop) th_attr_int(c, "noop_with_empty_axes", 1);
        } else if (na >= 0) {
            th_attr_ints(c, "axes", na, layouts[k].axes);
        }
        th_attr_int(c, "keepdims", keepdims);
        char label[160];
        snprintf(label, sizeof label, "%s-%d %s layout %zu keepdims %d%s%s", op, opset, mrt_dtype_name(dt), k, keepdims,
                 noop ? " noop" : "", axes_input && !axes_const ? " runtime axes" : "");
        th_cuda_check(c, 1, 1, label);
        if (axes.data) mrt_tensor_release(&axes);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

static const char *const float_ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
                                        "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"};

Test(cuda_reduce, float_reductions_match_cpu)
{
    th_cuda_require();
    for (size_t i = 0; i < sizeof float_ops / sizeof float_ops[0]; i++) {
        reduce_case(float_ops[i], 13, MRT_DTYPE_FLOAT, -3, 3, 1, false, true);
        reduce_case(float_ops[i], 18, MRT_DTYPE_DOUBLE, -3, 3, 0, false, true);
    }
    /* products and logs want positive, moderate values */
    reduce_case("ReduceProd", 13, MRT_DTYPE_FLOAT, 0.9, 1.1, 1, false, true);
    reduce_case("ReduceProd", 18, MRT_DTYPE_DOUBLE, 0.9, 1.1, 0, false, true);
    reduce_case("ReduceLogSum", 13, MRT_DTYPE_FLOAT, 0.1, 2, 1, false, true);
    reduce_case("ReduceLogSum", 18, MRT_DTYPE_DOUBLE, 0.1, 2, 0, false, true);
}

Test(cuda_reduce, every_axes_form)
{
    th_cuda_require();
    reduce_case("ReduceSum", 1, MRT_DTYPE_FLOAT, -3, 3, 1, false, true);   /* attribute */
    reduce_case("ReduceSum", 11, MRT_DTYPE_FLOAT, -3, 3, 0, false, true);  /* attribute, negative axes */
    reduce_case("ReduceSum", 13, MRT_DTYPE_FLOAT, -3, 3, 0, false, false); /* input known only at run time */
    reduce_case("ReduceSum", 13, MRT_DTYPE_FLOAT, -3, 3, 1, true, true);   /* noop_with_empty_axes */
    reduce_case("ReduceMean", 11, MRT_DTYPE_FLOAT, -3, 3, 0, false, true);
    reduce_case("ReduceMax", 18, MRT_DTYPE_FLOAT, -3, 3, 1, false, false);
    reduce_case("ReduceL2", 18, MRT_DTYPE_FLOAT, -3, 3, 1, true, true);     /* noop: |x| elementwise */
    reduce_case("ReduceLogSumExp", 18, MRT_DTYPE_DOUBLE, -3, 3, 0, true, true);
}

Test(cuda_reduce, half_precision)
{
    th_cuda_require();
    reduce_case("ReduceSum", 13, MRT_DTYPE_FLOAT16, -2, 2, 1, false, true);
    reduce_case("ReduceMean", 18, MRT_DTYPE_BFLOAT16, -2, 2, 0, false, true);
    reduce_case("ReduceMax", 18, MRT_DTYPE_FLOAT16, -2, 2, 1, false, true);
}

Test(cuda_reduce, integers_are_exact)
{
    th_cuda_require();
    static const mrt_dtype dts[] = {MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_INT8, MRT_DTYPE_UINT8,
                                    MRT_DTYPE_UINT64, MRT_DTYPE_INT16};
    static const char *const ops[] = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                      "ReduceSumSquare", "ReduceMean", "ReduceL2", "ReduceLogSumExp"};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        bool uns = dts[d] == MRT_DTYPE_UINT8 || dts[d] == MRT_DTYPE_UINT64;
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            reduce_case(ops[i], 18, dts[d], uns ? 0 : -100, 100, (int)(i & 1), false, true);
    }
    reduce_case("ReduceLogSum", 18, MRT_DTYPE_INT32, 1, 100, 1, false, true);
}

Test(cuda_reduce, bool_max_min)
{
    th_cuda_require();
    reduce_case("ReduceMax", 20, MRT_DTYPE_BOOL, 0, 1, 1, false, true);
    reduce_case("ReduceMin", 20, MRT_DTYPE_BOOL, 0, 1, 0, false, true);
}

Test(cuda_reduce, nan_propagates_through_max_and_sum)
{
    th_cuda_require();
    static const char *const ops[] = {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceLogSumExp"};
    for (size_t i = 0; i < 4; i++) {
        th_case *c = th_begin(ops[i], "", 13);
        int64_t shape[2] = {6, 400};
        th_rng r;
        th_rng_init(&r, th_seed(ops[i]));
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -3, 3);
        ((float *)x.data)[5] = NAN;
        ((float *)x.data)[400 + 399] = INFINITY;
        ((float *)x.data)[800 + 7] = -INFINITY;
        th_input(c, &x);
        th_attr_ints(c, "axes", 1, (int64_t[]){1});
        th_cuda_check(c, 1, 1, ops[i]);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* ArgMax/ArgMin: small integer ranges make ties, so first/last index matters. */
static void arg_case(const char *op, int opset, mrt_dtype dt, int64_t axis, int keepdims, int last)
{
    static const int64_t shapes[][3] = {{5, 7, 3}, {2, 600, 1}, {400, 3, 2}, {0, 4, 0}, {1, 1, 1}};
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        th_case *c = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, 3, shapes[k], -4, 4);
        if (dt == MRT_DTYPE_FLOAT && mrt_tensor_numel(&x) > 20) ((float *)x.data)[13] = NAN;
        th_input(c, &x);
        th_attr_int(c, "axis", axis);
        th_attr_int(c, "keepdims", keepdims);
        if (opset >= 12) th_attr_int(c, "select_last_index", last);
        char label[128];
        snprintf(label, sizeof label, "%s-%d %s shape %zu axis %lld last %d", op, opset, mrt_dtype_name(dt), k,
                 (long long)axis, last);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(cuda_reduce, argmax_argmin_ties_and_nan)
{
    th_cuda_require();
    for (int last = 0; last < 2; last++) {
        for (int64_t axis = -1; axis < 3; axis++) {
            arg_case("ArgMax", 13, MRT_DTYPE_INT32, axis, 1, last);
            arg_case("ArgMin", 13, MRT_DTYPE_INT64, axis, 0, last);
            arg_case("ArgMax", 12, MRT_DTYPE_FLOAT, axis, 0, last);
        }
    }
    arg_case("ArgMax", 11, MRT_DTYPE_DOUBLE, 1, 1, 0);
    arg_case("ArgMin", 1, MRT_DTYPE_FLOAT16, 1, 1, 0);
    arg_case("ArgMax", 13, MRT_DTYPE_UINT8, 1, 1, 1);
}

static void cumsum_case(mrt_dtype dt, int64_t axis, int excl, int rev)
{
    static const int64_t shapes[][3] = {{4, 5, 6}, {1, 700, 1}, {3, 0, 2}, {300, 2, 3}};
    th_rng r;
    th_rng_init(&r, th_seed("CumSum"));
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        th_case *c = th_begin("CumSum", "", 14);
        mrt_tensor x = th_rand(&r, dt, 3, shapes[k], -50, 50);
        mrt_tensor a = th_scalar_i64(axis);
        th_input(c, &x);
        th_input_const(c, &a);
        th_attr_int(c, "exclusive", excl);
        th_attr_int(c, "reverse", rev);
        char label[128];
        snprintf(label, sizeof label, "CumSum %s shape %zu axis %lld excl %d rev %d", mrt_dtype_name(dt), k,
                 (long long)axis, excl, rev);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&a);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(cuda_reduce, cumsum_matches_cpu)
{
    th_cuda_require();
    for (int f = 0; f < 4; f++) {
        cumsum_case(MRT_DTYPE_FLOAT, f % 3, f & 1, f >> 1);
        cumsum_case(MRT_DTYPE_INT32, -1 - f % 3, f >> 1, f & 1);
    }
    cumsum_case(MRT_DTYPE_DOUBLE, 1, 0, 0);
    cumsum_case(MRT_DTYPE_INT64, 1, 1, 1);
    cumsum_case(MRT_DTYPE_FLOAT16, 0, 0, 1);
}
