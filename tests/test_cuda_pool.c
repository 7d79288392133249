/* CUDA MaxPool (with Indices), AveragePool, LpPool and the global pools (ops_cuda/pool.cu) against the CPU kernels
 * (ops_cpu/pool.c): 1-D to 3-D windows, pads, strides, dilations, ceil_mode, auto_pad, count_include_pad,
 * storage_order, NaN in the input, every dtype each op takes, empty batches. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

typedef struct pool_conf {
    int nsp;
    int64_t x[5];
    int64_t kernel[3], strides[3], pads[6], dil[3];
    int ceil;
    const char *auto_pad;
} pool_conf;

static const pool_conf confs[] = {
    {2, {2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, NULL},
    {2, {1, 2, 10, 7}, {2, 3}, {2, 1}, {0, 1, 1, 2}, {2, 1}, 1, NULL},
    {2, {1, 3, 8, 8}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0, "SAME_UPPER"},
    {2, {1, 2, 7, 9}, {2, 2}, {3, 2}, {0, 0, 0, 0}, {1, 1}, 1, "SAME_LOWER"},
    {1, {2, 3, 17}, {4}, {3}, {2, 1}, {2}, 1, NULL},
    {3, {1, 2, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}, {1, 2, 1}, 0, NULL},
    {2, {0, 3, 6, 6}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, NULL},
    {2, {1, 1, 5, 5}, {5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 0, NULL},
};

static void pool_case(th_rng *r, const char *op, int opset, mrt_dtype dt, const pool_conf *pc, int extra, int n_out)
{
    th_case *c = th_begin(op, "", opset);
    double lo = dt == MRT_DTYPE_UINT8 ? 0 : -100, hi = dt == MRT_DTYPE_UINT8 ? 255 : 100;
    if (dt != MRT_DTYPE_INT8 && dt != MRT_DTYPE_UINT8) lo = -3, hi = 3;
    mrt_tensor x = th_rand(r, dt, pc->nsp + 2, pc->x, lo, hi);
    if ((dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE) && mrt_tensor_numel(&x) > 20) {
        mrt_store_f64(dt, x.data, 5, NAN); /* NaN wins a max and poisons a sum, as on the CPU */
        mrt_store_f64(dt, x.data, 12, INFINITY);
    }
    th_input(c, &x);
    th_attr_ints(c, "kernel_shape", pc->nsp, pc->kernel);
    th_attr_ints(c, "strides", pc->nsp, pc->strides);
    if (pc->auto_pad) th_attr_string(c, "auto_pad", pc->auto_pad);
    else th_attr_ints(c, "pads", 2 * pc->nsp, pc->pads);
    bool dil = (!strcmp(op, "MaxPool") && opset >= 10) || (!strcmp(op, "AveragePool") && opset >= 19) ||
               (!strcmp(op, "LpPool") && opset >= 18);
    bool ceil = (strcmp(op, "LpPool") ? opset >= 10 : opset >= 18);
    if (dil) th_attr_ints(c, "dilations", pc->nsp, pc->dil);
    if (ceil) th_attr_int(c, "ceil_mode", pc->ceil);
    if (!strcmp(op, "MaxPool") && n_out == 2) th_attr_int(c, "storage_order", extra);
    if (!strcmp(op, "AveragePool") && opset >= 7) th_attr_int(c, "count_include_pad", extra);
    if (!strcmp(op, "LpPool")) th_attr_int(c, "p", extra);
    char label[160];
    snprintf(label, sizeof label, "%s-%d %s %dd extra %d outputs %d", op, opset, mrt_dtype_name(dt), pc->nsp, extra, n_out);
    th_cuda_check(c, n_out, 1, label);
    mrt_tensor_release(&x);
    th_free(c);
}

#define N_CONFS (sizeof confs / sizeof confs[0])

Test(cuda_pool, maxpool_values_and_indices_match_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_maxpool"));
    for (size_t i = 0; i < N_CONFS; i++) {
        pool_case(&r, "MaxPool", 12, MRT_DTYPE_FLOAT, &confs[i], 0, 2);
        pool_case(&r, "MaxPool", 12, MRT_DTYPE_DOUBLE, &confs[i], 1, 2);
        pool_case(&r, "MaxPool", 22, MRT_DTYPE_FLOAT16, &confs[i], 0, 1);
        pool_case(&r, "MaxPool", 12, MRT_DTYPE_INT8, &confs[i], 1, 2);
        pool_case(&r, "MaxPool", 12, MRT_DTYPE_UINT8, &confs[i], 0, 1);
    }
    pool_case(&r, "MaxPool", 8, MRT_DTYPE_FLOAT, &confs[0], 1, 2); /* no dilations nor ceil_mode before 10 */
    pool_case(&r, "MaxPool", 1, MRT_DTYPE_FLOAT, &confs[0], 0, 1);
}

Test(cuda_pool, averagepool_and_lppool_match_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_avgpool"));
    for (size_t i = 0; i < N_CONFS; i++) {
        pool_case(&r, "AveragePool", 19, MRT_DTYPE_FLOAT, &confs[i], 0, 1);
        pool_case(&r, "AveragePool", 22, MRT_DTYPE_FLOAT, &confs[i], 1, 1);
        pool_case(&r, "AveragePool", 19, MRT_DTYPE_DOUBLE, &confs[i], 1, 1);
        pool_case(&r, "AveragePool", 19, MRT_DTYPE_BFLOAT16, &confs[i], 0, 1);
        pool_case(&r, "LpPool", 18, MRT_DTYPE_FLOAT, &confs[i], 2, 1);
        pool_case(&r, "LpPool", 22, MRT_DTYPE_DOUBLE, &confs[i], 3, 1);
    }
    pool_case(&r, "AveragePool", 11, MRT_DTYPE_FLOAT, &confs[1], 1, 1);
    pool_case(&r, "AveragePool", 7, MRT_DTYPE_FLOAT, &confs[0], 1, 1);
    pool_case(&r, "LpPool", 11, MRT_DTYPE_FLOAT, &confs[0], 1, 1);
}

static void global_case(th_rng *r, const char *op, mrt_dtype dt, int rank, const int64_t *shape, int p)
{
    th_case *c = th_begin(op, "", 22);
    mrt_tensor x = th_rand(r, dt, rank, shape, -3, 3);
    th_input(c, &x);
    if (p) th_attr_int(c, "p", p);
    char label[160];
    snprintf(label, sizeof label, "%s %s rank %d", op, mrt_dtype_name(dt), rank);
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(cuda_pool, global_pools_match_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_global_pool"));
    static const int64_t shapes[][5] = {{2, 5, 7, 9}, {1, 3, 100}, {1, 2, 3, 4, 5}, {0, 3, 4, 4}, {2, 3, 0, 4}, {3, 1, 1, 1}};
    static const int ranks[] = {4, 3, 5, 4, 4, 4};
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (size_t s = 0; s < 6; s++)
        for (size_t d = 0; d < 4; d++) {
            global_case(&r, "GlobalAveragePool", dts[d], ranks[s], shapes[s], 0);
            global_case(&r, "GlobalMaxPool", dts[d], ranks[s], shapes[s], 0);
            global_case(&r, "GlobalLpPool", dts[d], ranks[s], shapes[s], d == 1 ? 3 : 2);
        }
}

/* MaxUnpool: random indices with repeats (the last input wins, as in the CPU's loop), the inferred shape, and a
   constant output_shape that pads it. */
static void unpool_case(th_rng *r, mrt_dtype dt, const int64_t *xs, const int64_t *out_shape, int64_t n_inferred)
{
    th_case *c = th_begin("MaxUnpool", "", 22);
    mrt_tensor x = th_rand(r, dt, 4, xs, -3, 3), ind = th_rand(r, MRT_DTYPE_INT64, 4, xs, 0, (double)n_inferred - 1);
    mrt_tensor os = {0};
    th_input(c, &x);
    th_input(c, &ind);
    if (out_shape) {
        os = th_vec_i64(4, out_shape);
        th_input_const(c, &os);
    }
    th_attr_ints(c, "kernel_shape", 2, (const int64_t[]){2, 2});
    th_attr_ints(c, "strides", 2, (const int64_t[]){2, 2});
    th_cuda_check(c, 1, 1, out_shape ? "MaxUnpool output_shape" : "MaxUnpool");
    mrt_tensor_release(&x);
    mrt_tensor_release(&ind);
    if (out_shape) mrt_tensor_release(&os);
    th_free(c);
}

Test(cuda_pool, maxunpool_matches_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_maxunpool"));
    int64_t xs[4] = {2, 3, 4, 5}, big[4] = {2, 3, 9, 11};
    unpool_case(&r, MRT_DTYPE_FLOAT, xs, NULL, 2 * 3 * 8 * 10);
    unpool_case(&r, MRT_DTYPE_DOUBLE, xs, big, 2 * 3 * 8 * 10);
    unpool_case(&r, MRT_DTYPE_FLOAT16, xs, NULL, 2 * 3 * 8 * 10);
}

/* MaxRoiPool: rois inside, across and outside the image, a scale, empty bins. */
Test(cuda_pool, maxroipool_matches_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_maxroipool"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    int64_t xs[4] = {2, 3, 10, 12}, rs[2] = {4, 5};
    const double roi_vals[20] = {0, 1, 1, 6, 7, 1, 0, 0, 11, 9, 1, 8, 3, 30, 40, 0, 5, 5, 4, 4};
    for (int d = 0; d < 3; d++) {
        th_case *c = th_begin("MaxRoiPool", "", 22);
        mrt_tensor x = th_rand(&r, dts[d], 4, xs, -3, 3), rois = th_from_f64(dts[d], 2, rs, roi_vals);
        th_input(c, &x);
        th_input(c, &rois);
        th_attr_ints(c, "pooled_shape", 2, (const int64_t[]){3, 2});
        th_attr_float(c, "spatial_scale", d == 1 ? 0.5f : 1.0f);
        th_cuda_check(c, 1, 1, "MaxRoiPool");
        mrt_tensor_release(&x);
        mrt_tensor_release(&rois);
        th_free(c);
    }
}
