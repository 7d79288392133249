/* The CUDA norm family (ops_cuda/norm.cu: BatchNormalization, Instance/Group/Layer/RMS/Lp normalization, MVN, LRN)
 * against the CPU kernels (tests/harness.h th_cuda_check): odd and empty shapes, broadcast parameters, mixed
 * parameter dtypes, the optional statistics outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const struct {
    int rank;
    int64_t shape[4];
} nchw[] = {{2, {3, 4}}, {3, {2, 3, 5}}, {4, {2, 4, 3, 3}}, {4, {1, 2, 40, 40}}, {3, {0, 3, 2}}, {4, {3, 6, 1, 1}}};

static void batchnorm_case(int opset, mrt_dtype dt, mrt_dtype dp, bool training, int spatial)
{
    th_rng r;
    th_rng_init(&r, th_seed("BatchNormalization"));
    for (size_t k = 0; k < sizeof nchw / sizeof nchw[0]; k++) {
        int64_t c = nchw[k].shape[1];
        if (!spatial)
            for (int a = 2; a < nchw[k].rank; a++) c *= nchw[k].shape[a];
        th_case *cs = th_begin("BatchNormalization", "", opset);
        mrt_tensor x = th_rand(&r, dt, nchw[k].rank, nchw[k].shape, -3, 3);
        mrt_tensor p[4] = {th_rand(&r, dp, 1, &c, 0.5, 2), th_rand(&r, dp, 1, &c, -1, 1), th_rand(&r, dp, 1, &c, -1, 1),
                           th_rand(&r, dp, 1, &c, 0.1, 2)};
        th_input(cs, &x);
        for (int i = 0; i < 4; i++) th_input_const(cs, &p[i]);
        th_attr_float(cs, "epsilon", 1e-3f);
        if (training) {
            th_attr_int(cs, "training_mode", 1);
            th_attr_float(cs, "momentum", 0.8f);
        }
        if (opset < 9) th_attr_int(cs, "spatial", spatial);
        char label[128];
        snprintf(label, sizeof label, "BatchNormalization-%d %s/%s shape %zu%s", opset, mrt_dtype_name(dt),
                 mrt_dtype_name(dp), k, training ? " training" : "");
        /* training on an empty batch: the CPU's statistics are NaN, as ours */
        th_cuda_check(cs, training ? 3 : 1, 1, label);
        for (int i = 0; i < 4; i++) mrt_tensor_release(&p[i]);
        mrt_tensor_release(&x);
        th_free(cs);
    }
}

Test(cuda_norm, batchnorm_matches_cpu)
{
    th_cuda_require();
    batchnorm_case(15, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, false, 1);
    batchnorm_case(15, MRT_DTYPE_DOUBLE, MRT_DTYPE_DOUBLE, false, 1);
    batchnorm_case(15, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT, false, 1);
    batchnorm_case(9, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, false, 1);
    batchnorm_case(7, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, false, 0);
    batchnorm_case(15, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, true, 1);
    batchnorm_case(14, MRT_DTYPE_DOUBLE, MRT_DTYPE_DOUBLE, true, 1);
}

static void group_case(const char *op, int opset, mrt_dtype dt, int64_t groups)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof nchw / sizeof nchw[0]; k++) {
        int64_t c = nchw[k].shape[1];
        int64_t g = groups > 0 ? (c % groups == 0 ? groups : 1) : 0;
        int64_t np = op[0] == 'G' && opset < 21 ? g : c;
        th_case *cs = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, nchw[k].rank, nchw[k].shape, -3, 3);
        mrt_tensor s = th_rand(&r, dt, 1, &np, 0.5, 2), b = th_rand(&r, dt, 1, &np, -1, 1);
        th_input(cs, &x);
        th_input_const(cs, &s);
        th_input_const(cs, &b);
        if (g) th_attr_int(cs, "num_groups", g);
        char label[128];
        snprintf(label, sizeof label, "%s-%d %s shape %zu groups %lld", op, opset, mrt_dtype_name(dt), k, (long long)g);
        th_cuda_check(cs, 1, 1, label);
        mrt_tensor_release(&s);
        mrt_tensor_release(&b);
        mrt_tensor_release(&x);
        th_free(cs);
    }
}

Test(cuda_norm, instance_and_group_norm_match_cpu)
{
    th_cuda_require();
    group_case("InstanceNormalization", 22, MRT_DTYPE_FLOAT, 0);
    group_case("InstanceNormalization", 6, MRT_DTYPE_DOUBLE, 0);
    group_case("GroupNormalization", 21, MRT_DTYPE_FLOAT, 2);
    group_case("GroupNormalization", 18, MRT_DTYPE_FLOAT, 2);
    group_case("GroupNormalization", 21, MRT_DTYPE_FLOAT16, 1);
}

/* Layer/RMS normalization: parameter shapes from dense rows to broadcast ones; with the statistics outputs. */
static void layer_case(const char *op, mrt_dtype dt, mrt_dtype ds, int64_t axis, int param_kind, bool bias)
{
    static const struct {
        int rank;
        int64_t shape[4];
    } xs[] = {{2, {5, 8}}, {3, {2, 3, 300}}, {3, {4, 1, 6}}, {2, {0, 4}}, {3, {2, 3, 1}}, {4, {2, 3, 4, 5}}};
    bool rms = op[0] == 'R';
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        int rank = xs[k].rank;
        int ax = (int)(axis < 0 ? axis + rank : axis);
        if (ax < 0 || ax >= rank) continue;
        /* the parameter: X's dims from the axis (0), with the first of them broadcast (1), or a full [1, ...] (2) */
        int64_t ps[4];
        int pr = rank - ax;
        for (int a = 0; a < pr; a++) ps[a] = xs[k].shape[ax + a];
        if (param_kind == 1) ps[0] = 1;
        if (param_kind == 2) {
            pr = rank;
            for (int a = 0; a < rank; a++) ps[a] = a < ax ? 1 : xs[k].shape[a];
        }
        th_case *cs = th_begin(op, "", rms ? 23 : 17);
        mrt_tensor x = th_rand(&r, dt, rank, xs[k].shape, -3, 3);
        mrt_tensor s = th_rand(&r, ds, pr, ps, 0.5, 2), b = th_rand(&r, dt, pr, ps, -1, 1);
        th_input(cs, &x);
        th_input_const(cs, &s);
        if (bias && !rms) th_input_const(cs, &b);
        th_attr_int(cs, "axis", axis);
        th_attr_float(cs, "epsilon", 1e-4f);
        char label[128];
        snprintf(label, sizeof label, "%s %s shape %zu axis %lld params %d%s", op, mrt_dtype_name(dt), k, (long long)axis,
                 param_kind, bias ? " bias" : "");
        th_cuda_check(cs, rms ? 1 : 3, 1, label);
        mrt_tensor_release(&s);
        mrt_tensor_release(&b);
        mrt_tensor_release(&x);
        th_free(cs);
    }
}

Test(cuda_norm, layer_and_rms_norm_match_cpu)
{
    th_cuda_require();
    for (int64_t axis = -1; axis < 3; axis++)
        for (int pk = 0; pk < 3; pk++) {
            layer_case("LayerNormalization", MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, axis, pk, pk != 1);
            layer_case("RMSNormalization", MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, axis, pk, false);
        }
    layer_case("LayerNormalization", MRT_DTYPE_DOUBLE, MRT_DTYPE_DOUBLE, -1, 0, true);
    layer_case("LayerNormalization", MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT16, -1, 0, true);
    layer_case("RMSNormalization", MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT, -1, 0, false); /* Y takes the scale's dtype */
}

static void simple_case(const char *op, int opset, mrt_dtype dt, const char *attr, int64_t n_ints, const int64_t *ints)
{
    static const struct {
        int rank;
        int64_t shape[4];
    } xs[] = {{4, {2, 3, 4, 5}}, {4, {1, 2, 30, 30}}, {4, {0, 3, 2, 2}}, {4, {3, 5, 1, 7}}};
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        th_case *cs = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, xs[k].rank, xs[k].shape, -3, 3);
        th_input(cs, &x);
        if (attr && n_ints == 1) th_attr_int(cs, attr, ints[0]);
        else if (attr) th_attr_ints(cs, attr, n_ints, ints);
        char label[128];
        snprintf(label, sizeof label, "%s-%d %s shape %zu", op, opset, mrt_dtype_name(dt), k);
        th_cuda_check(cs, 1, 1, label);
        mrt_tensor_release(&x);
        th_free(cs);
    }
}

Test(cuda_norm, lp_mvn_lrn_match_cpu)
{
    th_cuda_require();
    for (int64_t axis = -1; axis < 4; axis++) simple_case("LpNormalization", 22, MRT_DTYPE_FLOAT, "axis", 1, &axis);
    simple_case("LpNormalization", 1, MRT_DTYPE_DOUBLE, "p", 1, (int64_t[]){1});
    simple_case("MeanVarianceNormalization", 13, MRT_DTYPE_FLOAT, NULL, 0, NULL);
    simple_case("MeanVarianceNormalization", 13, MRT_DTYPE_DOUBLE, "axes", 2, (int64_t[]){1, -1});
    simple_case("MeanVarianceNormalization", 9, MRT_DTYPE_FLOAT, "axes", 2, (int64_t[]){0, 3});
    simple_case("LRN", 13, MRT_DTYPE_FLOAT, "size", 1, (int64_t[]){3});
    simple_case("LRN", 13, MRT_DTYPE_FLOAT, "size", 1, (int64_t[]){4});
    simple_case("LRN", 1, MRT_DTYPE_DOUBLE, "size", 1, (int64_t[]){5});
}
