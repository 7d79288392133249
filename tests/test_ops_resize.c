/* Resize against a direct 2-D float64 reference (bilinear half_pixel and align_corners, nearest asymmetric),
 * written per output pixel from the spec's formulas. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static double at(const double *x, int64_t h, int64_t w, int64_t i, int64_t j)
{
    i = i < 0 ? 0 : i >= h ? h - 1 : i;
    j = j < 0 ? 0 : j >= w ? w - 1 : j;
    return x[i * w + j];
}

static void reference(const double *x, int64_t h, int64_t w, int64_t oh, int64_t ow, double sh, double sw,
                      const char *mode, const char *coord, double *y)
{
    for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
            double yi, xj;
            if (strcmp(coord, "align_corners") == 0) {
                yi = sh * h == 1 ? 0 : (double)i * (h - 1) / (sh * h - 1);
                xj = sw * w == 1 ? 0 : (double)j * (w - 1) / (sw * w - 1);
            } else if (strcmp(coord, "asymmetric") == 0) {
                yi = i / sh;
                xj = j / sw;
            } else {
                yi = (i + 0.5) / sh - 0.5;
                xj = (j + 0.5) / sw - 0.5;
            }
            if (strcmp(mode, "nearest") == 0) {
                y[i * ow + j] = at(x, h, w, (int64_t)floor(yi), (int64_t)floor(xj)); /* floor for whole-number ratios */
                continue;
            }
            double fy = floor(yi), fx = floor(xj), dy = yi - fy, dx = xj - fx;
            y[i * ow + j] = (1 - dy) * (1 - dx) * at(x, h, w, (int64_t)fy, (int64_t)fx) +
                            (1 - dy) * dx * at(x, h, w, (int64_t)fy, (int64_t)fx + 1) +
                            dy * (1 - dx) * at(x, h, w, (int64_t)fy + 1, (int64_t)fx) +
                            dy * dx * at(x, h, w, (int64_t)fy + 1, (int64_t)fx + 1);
        }
}

/* Resize-13 of x by scales sc with (mode, coordinate_transformation_mode, nearest_mode) cs */
static mrt_tensor run_resize(mrt_tensor *x, mrt_tensor *sc, const char *const *cs)
{
    th_case *c = th_begin("Resize", "", 13);
    th_input(c, x);
    th_input_absent(c);
    th_input(c, sc);
    th_attr_string(c, "mode", cs[0]);
    th_attr_string(c, "coordinate_transformation_mode", cs[1]);
    th_attr_string(c, "nearest_mode", cs[2]);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    th_free(c);
    return y;
}

Test(resize, bilinear_and_nearest_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("resize.2d"));
    const char *cases[][3] = {{"linear", "half_pixel", "floor"}, {"linear", "align_corners", "floor"},
                              {"nearest", "asymmetric", "floor"}};
    for (int iter = 0; iter < 30; iter++) {
        const char **cs = cases[iter % 3];
        int64_t h = th_rng_int(&r, 1, 6), w = th_rng_int(&r, 1, 6);
        double sh = iter % 3 == 2 ? (double)th_rng_int(&r, 1, 3) : th_rng_uniform(&r, 0.5, 3);
        double sw = iter % 3 == 2 ? (double)th_rng_int(&r, 1, 3) : th_rng_uniform(&r, 0.5, 3);
        int64_t oh = (int64_t)floor(h * sh), ow = (int64_t)floor(w * sw);
        int64_t shape[4] = {1, 1, h, w}, oshape[4] = {1, 1, oh, ow};
        mrt_tensor x = th_rand(&r, MRT_DTYPE_DOUBLE, 4, shape, -1, 1), y;
        mrt_tensor sc = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1, 1, sh, sw});
        /* the reference uses the float32 scales the op sees */
        sh = ((float *)sc.data)[2];
        sw = ((float *)sc.data)[3];
        y = run_resize(&x, &sc, cs);
        double *want = malloc((size_t)(oh * ow + 1) * sizeof(double));
        reference(x.data, h, w, oh, ow, sh, sw, cs[0], cs[1], want);
        char why[256];
        cr_assert(th_check_f64(&y, want, 4, oshape, 1e-24, 1e-12, 1e-12, why, sizeof why), "%s/%s %lldx%lld x%.3fx%.3f: %s",
                  cs[0], cs[1], (long long)h, (long long)w, sh, sw, why);
        free(want);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&sc);
    }
}

/* float32 over several planes (the kernel's last-two-axes path, split over planes when they are large), against
   the same reference per plane */
Test(resize, float32_planes_against_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("resize.planes"));
    const char *cases[][3] = {{"linear", "half_pixel", "floor"}, {"nearest", "asymmetric", "floor"},
                              {"linear", "align_corners", "floor"}};
    const int64_t sizes[][2] = {{5, 7}, {60, 70}}; /* small planes: one task; large: a task per plane */
    for (int ci = 0; ci < 3; ci++)
        for (int si = 0; si < 2; si++) {
            const char **cs = cases[ci];
            int64_t N = 2, C = 3, h = sizes[si][0], w = sizes[si][1];
            double sh = ci == 1 ? 2.0 : 1.75, sw = ci == 1 ? 3.0 : 2.25;
            int64_t oh = (int64_t)floor(h * sh), ow = (int64_t)floor(w * sw);
            mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){N, C, h, w}, -1, 1), y;
            mrt_tensor sc = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1, 1, sh, sw});
            y = run_resize(&x, &sc, cs);
            double *xd = th_to_f64(&x), *want = malloc((size_t)(N * C * oh * ow) * sizeof(double));
            for (int64_t p = 0; p < N * C; p++)
                reference(xd + p * h * w, h, w, oh, ow, sh, sw, cs[0], cs[1], want + p * oh * ow);
            double nmse, abs_tol, rel;
            th_tolerance(MRT_DTYPE_FLOAT, &nmse, &abs_tol, &rel);
            char why[256];
            cr_assert(th_check_f64(&y, want, 4, (int64_t[]){N, C, oh, ow}, nmse, abs_tol, rel, why, sizeof why),
                      "%s/%s %lldx%lld: %s", cs[0], cs[1], (long long)h, (long long)w, why);
            free(xd);
            free(want);
            mrt_tensor_release(&y);
            mrt_tensor_release(&x);
            mrt_tensor_release(&sc);
        }
}

/* float32 linear over the last two axes (the kernel's vector rows, ops_cpu/resize.c) against the general N-D loop run
   on the same values in float64: the same double sums, so the float32 result must be that result rounded once, bit
   for bit. Infinities and NaNs are sprinkled in: where an exact sample gives a neighbour the weight 0 (asymmetric
   x2), that neighbour must be left out, not multiplied (0 * inf is NaN). Upsampling by 16 reads each 8 columns'
   neighbours from one window; downsampling by 0.4 spreads them over more than 16 columns; widths leave tails. */
Test(resize, float32_linear_rows_are_the_float64_sums_rounded)
{
    th_rng r;
    th_rng_init(&r, th_seed("resize.rows"));
    const char *coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
    const int64_t dims[][4] = {{14, 14, 224, 224}, {9, 23, 18, 46}, {40, 45, 16, 18}, {3, 8, 7, 13}, {1, 100, 1, 39}};
    for (int ci = 0; ci < 4; ci++)
        for (int di = 0; di < 5; di++) {
            const int64_t *d = dims[di];
            int64_t n = 3 * d[0] * d[1];
            mrt_tensor xf = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 3, d[0], d[1]}, -4, 4);
            float *xs = xf.data;
            const float special[] = {INFINITY, -INFINITY, NAN, -0.0f, 3e38f, 1e-40f};
            for (int64_t i = 0; i < n; i += 1 + th_rng_int(&r, 0, 12)) xs[i] = special[th_rng_int(&r, 0, 5)];
            double *xv = th_to_f64(&xf);
            mrt_tensor xd = th_from_f64(MRT_DTYPE_DOUBLE, 4, (int64_t[]){1, 3, d[0], d[1]}, xv);
            mrt_tensor sizes = th_vec_i64(4, (int64_t[]){1, 3, d[2], d[3]}), y[2];
            mrt_tensor *xs_in[2] = {&xf, &xd};
            for (int t = 0; t < 2; t++) {
                th_case *c = th_begin("Resize", "", 13);
                th_input(c, xs_in[t]);
                th_input_absent(c);
                th_input_absent(c);
                th_input_const(c, &sizes);
                th_attr_string(c, "mode", "linear");
                th_attr_string(c, "coordinate_transformation_mode", coords[ci]);
                cr_assert_eq(th_run(c, 1, &y[t]), MRT_STATUS_OK, "%s", mrt_last_error());
                th_free(c);
            }
            char label[96];
            snprintf(label, sizeof label, "%s %lldx%lld -> %lldx%lld", coords[ci], (long long)d[0], (long long)d[1],
                     (long long)d[2], (long long)d[3]);
            th_assert_f32_is_f64_rounded(&y[0], &y[1], label);
            free(xv);
            for (int t = 0; t < 2; t++) mrt_tensor_release(&y[t]);
            mrt_tensor_release(&xf);
            mrt_tensor_release(&xd);
            mrt_tensor_release(&sizes);
        }
}

Test(resize, scales_of_the_wrong_length_are_refused)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}), y;
    mrt_tensor sc = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, (double[]){1, 2, 2});
    th_case *c = th_begin("Resize", "", 13);
    th_input(c, &x);
    th_input_absent(c);
    th_input_const(c, &sc);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "'scales' has 3 values, expected 2"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&sc);
}

/* antialias=1 downsampling (opset 18): each output is the normalised sum over every input pixel of the kernel
   stretched by 1/scale, edge pixels replicated; linear (triangle) and cubic (Keys, a = -0.75). */
Test(resize, antialias_downsampling_matches_stretched_kernel)
{
    th_rng r;
    th_rng_init(&r, th_seed("resize.antialias"));
    const int64_t IN = 11, OUT = 4;
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 1, IN}, -1, 1);
    mrt_tensor sizes = th_vec_i64(4, (int64_t[]){1, 1, 1, OUT});
    for (int cubic = 0; cubic < 2; cubic++) {
        th_case *c = th_begin("Resize", "", 18);
        th_input(c, &x);
        th_input_absent(c);
        th_input_absent(c);
        th_input_const(c, &sizes);
        th_attr_string(c, "mode", cubic ? "cubic" : "linear");
        th_attr_int(c, "antialias", 1);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        double scale = (double)OUT / IN;
        for (int64_t o = 0; o < OUT; o++) {
            double cx = (o + 0.5) / scale - 0.5, acc = 0, wsum = 0;
            for (int64_t i = -40; i < IN + 40; i++) {
                double t = fabs((double)i - cx) * scale, w;
                if (cubic) w = t <= 1 ? (1.25 * t - 2.25) * t * t + 1 : t < 2 ? ((-0.75 * t + 3.75) * t - 6) * t + 3 : 0;
                else w = t < 1 ? 1 - t : 0;
                int64_t k = i < 0 ? 0 : i >= IN ? IN - 1 : i;
                acc += w * ((float *)x.data)[k];
                wsum += w;
            }
            double want = acc / wsum;
            float got = ((float *)y.data)[o];
            cr_assert(fabs(got - want) <= 1e-5, "%s output %lld: got %.7g, expected %.7g", cubic ? "cubic" : "linear",
                      (long long)o, got, want);
        }
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&sizes);
}
