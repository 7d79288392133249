/* The CUDA resize family (ops_cuda/resize.cu: Resize 10-19, Upsample 7/9) against the CPU kernel (tests/harness.h
 * th_cuda_check): every mode, coordinate transform and nearest_mode, cubic's a and exclude_outside, antialias, axes,
 * keep_aspect_ratio_policy, scales or sizes as run-time or constant inputs, ranks 1 to 4, empty tensors, float,
 * half and integer dtypes (integers exact). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static const struct {
    int rank;
    int64_t shape[4];
    double up[4], down[4]; /* scales per axis */
} layouts[] = {
    {4, {1, 2, 5, 7}, {1, 1, 2, 1.5}, {1, 1, 0.6, 0.45}},
    {4, {2, 3, 4, 4}, {1, 1, 3, 3}, {1, 1, 0.5, 0.75}},
    {3, {2, 9, 6}, {1, 1.7, 2.5}, {1, 0.34, 0.7}},
    {1, {11}, {2.2}, {0.3}},
    {2, {33, 5}, {1.5, 4}, {0.25, 1}},
    {4, {1, 1, 0, 5}, {1, 1, 2, 2}, {1, 1, 0.5, 0.5}}, /* empty */
};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

static mrt_tensor vec_f32(int64_t n, const double *v) { return th_from_f64(MRT_DTYPE_FLOAT, 1, &n, v); }

typedef struct rcase {
    const char *mode, *coord, *nearest;
    double cubic_a;
    int exclude, antialias;
    bool sizes, constant;
} rcase;

static void resize_case(mrt_dtype dt, int opset, const rcase *rc, size_t l, bool down)
{
    th_rng r;
    th_rng_init(&r, th_seed("Resize"));
    int rank = layouts[l].rank;
    const double *sc = down ? layouts[l].down : layouts[l].up;
    bool integer = mrt_dtype_is_integer(dt);
    mrt_tensor x = th_rand(&r, dt, rank, layouts[l].shape, integer ? 0 : -4, integer ? 100 : 4);
    th_case *c = th_begin("Resize", "", opset);
    th_input(c, &x);
    mrt_tensor roi = {0}, s = {0};
    bool tf_crop = rc->coord && strcmp(rc->coord, "tf_crop_and_resize") == 0;
    if (tf_crop) {
        double v[8];
        for (int d = 0; d < rank; d++) v[d] = d < rank - 2 ? 0 : 0.1 * d, v[rank + d] = d < rank - 2 ? 1 : 0.95 - 0.05 * d;
        roi = vec_f32(2 * rank, v);
        th_input_const(c, &roi);
    } else {
        th_input_absent(c);
    }
    if (rc->sizes) {
        int64_t sz[4];
        for (int d = 0; d < rank; d++) sz[d] = (int64_t)(layouts[l].shape[d] * sc[d] + 0.5);
        s = th_vec_i64(rank, sz);
        th_input_absent(c);
    } else {
        s = vec_f32(rank, sc);
    }
    if (rc->constant) th_input_const(c, &s);
    else th_input(c, &s);
    th_attr_string(c, "mode", rc->mode);
    if (rc->coord) th_attr_string(c, "coordinate_transformation_mode", rc->coord);
    if (rc->nearest) th_attr_string(c, "nearest_mode", rc->nearest);
    if (rc->cubic_a) th_attr_float(c, "cubic_coeff_a", (float)rc->cubic_a);
    if (rc->exclude) th_attr_int(c, "exclude_outside", 1);
    if (rc->antialias) th_attr_int(c, "antialias", 1);
    if (tf_crop) th_attr_float(c, "extrapolation_value", -7.5f);
    char label[256];
    snprintf(label, sizeof label, "Resize-%d %s %s %s %s layout %zu %s", opset, mrt_dtype_name(dt), rc->mode,
             rc->coord ? rc->coord : "-", rc->nearest ? rc->nearest : "-", l, down ? "down" : "up");
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&x);
    mrt_tensor_release(&roi);
    mrt_tensor_release(&s);
    th_free(c);
}

static void every_layout(mrt_dtype dt, int opset, rcase rc)
{
    for (size_t l = 0; l < N_LAYOUTS; l++) {
        resize_case(dt, opset, &rc, l, false);
        resize_case(dt, opset, &rc, l, true);
    }
}

Test(cuda_resize, nearest_modes_and_coordinate_transforms)
{
    th_cuda_require();
    static const char *coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                   "half_pixel_symmetric", "tf_crop_and_resize"};
    static const char *nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    for (size_t i = 0; i < sizeof coords / sizeof coords[0]; i++)
        every_layout(MRT_DTYPE_FLOAT, 19, (rcase){"nearest", coords[i], nearest[i % 4], 0, 0, 0, false, false});
    for (size_t i = 0; i < 4; i++)
        every_layout(MRT_DTYPE_FLOAT, 13, (rcase){"nearest", "asymmetric", nearest[i], 0, 0, 0, i % 2, true});
}

Test(cuda_resize, linear_and_cubic)
{
    th_cuda_require();
    static const char *coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                   "half_pixel_symmetric", "tf_crop_and_resize"};
    for (size_t i = 0; i < sizeof coords / sizeof coords[0]; i++) {
        every_layout(MRT_DTYPE_FLOAT, 19, (rcase){"linear", coords[i], NULL, 0, 0, 0, false, false});
        every_layout(MRT_DTYPE_DOUBLE, 19, (rcase){"cubic", coords[i], NULL, 0, 0, 0, i % 2, false});
    }
    every_layout(MRT_DTYPE_FLOAT, 13, (rcase){"cubic", "half_pixel", NULL, -0.5, 1, 0, false, true});
    every_layout(MRT_DTYPE_FLOAT, 11, (rcase){"linear", "align_corners", NULL, 0, 0, 0, true, false});
}

Test(cuda_resize, antialias_when_downsampling)
{
    th_cuda_require();
    every_layout(MRT_DTYPE_FLOAT, 18, (rcase){"linear", "half_pixel", NULL, 0, 0, 1, false, false});
    every_layout(MRT_DTYPE_FLOAT, 18, (rcase){"cubic", "half_pixel", NULL, 0, 1, 1, false, false});
    every_layout(MRT_DTYPE_DOUBLE, 18, (rcase){"cubic", "align_corners", NULL, -0.5, 0, 1, true, false});
}

Test(cuda_resize, integer_and_half_dtypes)
{
    th_cuda_require();
    static const mrt_dtype dts[] = {MRT_DTYPE_UINT8, MRT_DTYPE_INT8, MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT16,
                                    MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        every_layout(dts[i], 19, (rcase){"linear", "half_pixel", NULL, 0, 0, 0, false, false});
        every_layout(dts[i], 19, (rcase){"nearest", "asymmetric", "floor", 0, 0, 0, true, false});
        every_layout(dts[i], 19, (rcase){"cubic", "pytorch_half_pixel", NULL, 0, 0, 0, false, false});
    }
}

/* axes and keep_aspect_ratio_policy (18+): sizes for the last two axes only */
Test(cuda_resize, axes_and_aspect_policies)
{
    th_cuda_require();
    static const char *policies[] = {"stretch", "not_larger", "not_smaller"};
    th_rng r;
    th_rng_init(&r, th_seed("Resize axes"));
    for (size_t p = 0; p < 3; p++)
        for (int sizes = 0; sizes < 2; sizes++) {
            int64_t shape[4] = {2, 3, 7, 5};
            mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, shape, -2, 2);
            th_case *c = th_begin("Resize", "", 19);
            th_input(c, &x);
            th_input_absent(c);
            mrt_tensor s;
            if (sizes) {
                s = th_vec_i64(2, (int64_t[]){11, 3});
                th_input_absent(c);
            } else {
                s = vec_f32(2, (double[]){1.6, 0.7});
            }
            th_input(c, &s);
            th_attr_ints(c, "axes", 2, (int64_t[]){-2, 3});
            th_attr_string(c, "mode", p == 1 ? "cubic" : "linear");
            if (sizes) th_attr_string(c, "keep_aspect_ratio_policy", policies[p]);
            char label[128];
            snprintf(label, sizeof label, "Resize axes %s %s", sizes ? "sizes" : "scales", policies[p]);
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&x);
            mrt_tensor_release(&s);
            th_free(c);
        }
}

/* Upsample 7 (scales attribute, "bilinear"), 9 (scales input) and Resize 10: asymmetric, floor. */
Test(cuda_resize, upsample_and_resize_10)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("Upsample"));
    for (size_t l = 0; l < N_LAYOUTS; l++)
        for (int v = 0; v < 4; v++) {
            static const int opsets[] = {7, 7, 9, 10};
            static const char *ops[] = {"Upsample", "Upsample", "Upsample", "Resize"};
            int rank = layouts[l].rank;
            mrt_tensor x = th_rand(&r, v == 1 ? MRT_DTYPE_INT32 : MRT_DTYPE_FLOAT, rank, layouts[l].shape, -50, 50);
            th_case *c = th_begin(ops[v], "", opsets[v]);
            th_input(c, &x);
            mrt_tensor s = vec_f32(rank, layouts[l].up);
            if (v < 2) {
                float f[4];
                for (int d = 0; d < rank; d++) f[d] = (float)layouts[l].up[d];
                th_attr_floats(c, "scales", rank, f);
            } else {
                th_input(c, &s);
            }
            th_attr_string(c, "mode", v == 0 ? "bilinear" : v == 3 ? "linear" : "nearest");
            char label[128];
            snprintf(label, sizeof label, "%s-%d layout %zu", ops[v], opsets[v], l);
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&x);
            mrt_tensor_release(&s);
            th_free(c);
        }
}
