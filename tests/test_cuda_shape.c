/* The CUDA shape family (ops_cuda/shape.cu: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Expand, Shape, Size,
 * ConstantOfShape, Range, EyeLike) against the CPU kernels (tests/harness.h th_cuda_check), exact. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const mrt_dtype dtypes[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16, MRT_DTYPE_DOUBLE};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

Test(cuda_shape, reshapes_copy_the_bytes)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("reshape"));
    int64_t xs[3] = {2, 1, 6}, empty[2] = {0, 3};
    for (size_t d = 0; d < N_DTYPES; d++) {
        char label[96];
        mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, -9, 9);
        int64_t target[2] = {3, -1};
        mrt_tensor shp = th_vec_i64(2, target);
        th_case *c = th_begin("Reshape", "", 21);
        th_input(c, &x);
        th_input_const(c, &shp);
        snprintf(label, sizeof label, "Reshape %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&shp);

        c = th_begin("Flatten", "", 21);
        th_input(c, &x);
        th_attr_int(c, "axis", 2);
        snprintf(label, sizeof label, "Flatten %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);

        int64_t ax[1] = {1};
        mrt_tensor axes = th_vec_i64(1, ax);
        c = th_begin("Squeeze", "", 21);
        th_input(c, &x);
        th_input_const(c, &axes);
        snprintf(label, sizeof label, "Squeeze %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        c = th_begin("Unsqueeze", "", 21);
        th_input(c, &x);
        th_input_const(c, &axes);
        snprintf(label, sizeof label, "Unsqueeze %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&axes);

        c = th_begin("Identity", "", 21);
        th_input(c, &x);
        snprintf(label, sizeof label, "Identity %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&x);

        x = th_rand(&r, dtypes[d], 2, empty, 0, 1);
        c = th_begin("Identity", "", 21);
        th_input(c, &x);
        th_cuda_check(c, 1, 1, "Identity of an empty tensor");
        th_free(c);
        mrt_tensor_release(&x);
    }
}

Test(cuda_shape, expand_broadcasts)
{
    th_cuda_require();
    static const struct { int xr; int64_t xs[3]; int sr; int64_t s[4]; } cases[] = {
        {1, {1}, 3, {2, 3, 4}}, {2, {3, 1}, 3, {2, 3, 5}}, {3, {1, 4, 1}, 2, {4, 7}}, {2, {0, 1}, 2, {1, 6}},
        {0, {0}, 1, {9}},       {3, {2, 1, 3}, 4, {2, 2, 5, 3}},
    };
    th_rng r;
    th_rng_init(&r, th_seed("expand"));
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            mrt_tensor x = th_rand(&r, dtypes[d], cases[k].xr, cases[k].xs, -9, 9);
            mrt_tensor s = th_vec_i64(cases[k].sr, cases[k].s);
            th_case *c = th_begin("Expand", "", 13);
            th_input(c, &x);
            th_input(c, &s);
            char label[96];
            snprintf(label, sizeof label, "Expand %s case %zu", mrt_dtype_name(dtypes[d]), k);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
            mrt_tensor_release(&s);
            mrt_tensor_release(&x);
        }
}

Test(cuda_shape, shape_size_constant_of_shape_range_eyelike)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("shape"));
    int64_t xs[3] = {2, 0, 5};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, xs, 0, 1);
    th_case *c = th_begin("Shape", "", 21);
    th_input(c, &x);
    th_attr_int(c, "start", -2);
    th_cuda_check(c, 1, 1, "Shape start -2");
    th_free(c);
    c = th_begin("Size", "", 21);
    th_input(c, &x);
    th_cuda_check(c, 1, 1, "Size");
    th_free(c);
    mrt_tensor_release(&x);

    for (size_t d = 0; d < N_DTYPES; d++) {
        char label[96];
        int64_t dims[3] = {3, 1, 4};
        mrt_tensor shp = th_vec_i64(3, dims), v = th_rand(&r, dtypes[d], 1, (int64_t[]){1}, 1, 9);
        c = th_begin("ConstantOfShape", "", 21);
        th_input(c, &shp); /* a run-time shape: the output is sized at run time, then filled on the device */
        th_attr_tensor(c, "value", &v);
        snprintf(label, sizeof label, "ConstantOfShape %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&v);
        mrt_tensor_release(&shp);

        int64_t es[2] = {4, 6};
        x = th_rand(&r, dtypes[d], 2, es, 0, 1);
        for (int k = -5; k <= 7; k += 3) {
            c = th_begin("EyeLike", "", 22);
            th_input(c, &x);
            th_attr_int(c, "k", k);
            snprintf(label, sizeof label, "EyeLike %s k %d", mrt_dtype_name(dtypes[d]), k);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
        }
        mrt_tensor_release(&x);
    }
    /* Range from run-time scalars: integer steps both ways, float steps */
    static const struct { mrt_dtype dt; double s, l, d; } ranges[] = {
        {MRT_DTYPE_INT32, 10, -7, -3}, {MRT_DTYPE_INT64, -5, 1000, 7}, {MRT_DTYPE_FLOAT, 0.5, 9.25, 0.3},
        {MRT_DTYPE_DOUBLE, 1, -2, -0.125}, {MRT_DTYPE_INT16, 3, 3, 1}, {MRT_DTYPE_FLOAT16, 1, 40, 1.5},
    };
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        mrt_tensor s = th_from_f64(ranges[k].dt, 0, NULL, &ranges[k].s), l = th_from_f64(ranges[k].dt, 0, NULL, &ranges[k].l),
                   dl = th_from_f64(ranges[k].dt, 0, NULL, &ranges[k].d);
        c = th_begin("Range", "", ranges[k].dt == MRT_DTYPE_FLOAT16 ? 27 : 11);
        th_input(c, &s); /* run-time inputs: constants would fold on the CPU */
        th_input(c, &l);
        th_input(c, &dl);
        char label[96];
        snprintf(label, sizeof label, "Range %s", mrt_dtype_name(ranges[k].dt));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&s);
        mrt_tensor_release(&l);
        mrt_tensor_release(&dl);
    }
}
