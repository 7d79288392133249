/* Tests: GridSample 16/20/22, AffineGrid 20, RoiAlign 10/16/22, NonMaxSuppression 10/11 and Col2Im 18 against the
 * naive float64 references in tests/ref/vision_ref.c, over every mode/padding/alignment combination, float,
 * double and float16, empty tensors, hostile sample coordinates, and one error case (or more) per op. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/vision_ref.h"

/* ------------------------------------------------------------------ shared */

/* Bounds per output dtype: kernels compute in double and round once on store. */
static void check_out(const mrt_tensor *y, const double *want, int rank, const int64_t *shape, const char *what)
{
    char why[256];
    double nmse = 1e-10, abs_tol = 1e-5, rel = 1e-5;
    if (y->dtype == MRT_DTYPE_DOUBLE) nmse = 1e-24, abs_tol = 1e-12, rel = 1e-12;
    if (y->dtype == MRT_DTYPE_FLOAT16) nmse = 1e-6, abs_tol = 1e-3, rel = 1e-3;
    cr_assert(th_check_f64(y, want, rank, shape, nmse, abs_tol, rel, why, sizeof why), "%s: %s", what, why);
}

static const char *dt_name(mrt_dtype dt) { return mrt_dtype_name(dt); }

/* ------------------------------------------------------------------ GridSample */

typedef struct gs_case {
    int opset;
    mrt_dtype xdt, gdt;
    int r;                 /* spatial rank */
    int64_t n, c, in[3], out[3];
    const char *mode;      /* NULL: the attribute is left out (the opset's default) */
    int ref_mode, pad;     /* VREF_* */
    int align;             /* -1: attribute left out */
    double glo, ghi;       /* grid value range (past [-1, 1] reaches the padding) */
} gs_case;

static const char *const pad_names[3] = {"zeros", "border", "reflection"};

static void run_grid_sample(th_rng *rng, const gs_case *k)
{
    int64_t xs[5] = {k->n, k->c}, gsh[5] = {k->n}, ys[5] = {k->n, k->c};
    for (int d = 0; d < k->r; d++) xs[2 + d] = k->in[d], gsh[1 + d] = k->out[d], ys[2 + d] = k->out[d];
    gsh[1 + k->r] = k->r;
    mrt_tensor x = th_rand(rng, k->xdt, k->r + 2, xs, -1, 1);
    mrt_tensor grid = th_rand(rng, k->gdt, k->r + 2, gsh, k->glo, k->ghi);
    th_case *c = th_begin("GridSample", "", k->opset);
    th_input(c, &x);
    th_input(c, &grid);
    if (k->mode) th_attr_string(c, "mode", k->mode);
    th_attr_string(c, "padding_mode", pad_names[k->pad]);
    if (k->align >= 0) th_attr_int(c, "align_corners", k->align);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *xd = th_to_f64(&x), *gd = th_to_f64(&grid);
    int64_t ny = k->n * k->c;
    for (int d = 0; d < k->r; d++) ny *= k->out[d];
    double *want = malloc((size_t)(ny ? ny : 1) * sizeof *want);
    vision_ref_grid_sample(k->r, k->n, k->c, k->in, xd, k->out, gd, k->ref_mode, k->pad, k->align > 0, want);
    char what[160];
    snprintf(what, sizeof what, "GridSample-%d %dD mode %s padding %s align %d X %s grid %s", k->opset, k->r,
             k->mode ? k->mode : "(default)", pad_names[k->pad], k->align, dt_name(k->xdt), dt_name(k->gdt));
    cr_assert_eq(y.dtype, k->xdt, "%s: output dtype", what);
    check_out(&y, want, k->r + 2, ys, what);
    free(want);
    free(xd);
    free(gd);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&grid);
    th_free(c);
}

Test(vision, grid_sample_2d_every_mode_padding_alignment)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.grid_sample_2d"));
    /* opset 16 spells bilinear/bicubic, 20 and 22 linear/cubic */
    const char *names[3][3] = {{"bilinear", "nearest", "bicubic"}, {"linear", "nearest", "cubic"},
                               {"linear", "nearest", "cubic"}};
    const int opsets[3] = {16, 20, 22};
    for (int o = 0; o < 3; o++)
        for (int m = 0; m < 3; m++)
            for (int p = 0; p < 3; p++)
                for (int al = 0; al < 2; al++) {
                    gs_case k = {opsets[o], MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 2, 2, 3, {4, 5}, {3, 6}, names[o][m], m, p,
                                 al, -1.7, 1.7};
                    run_grid_sample(&rng, &k);
                }
    /* attributes left out: bilinear (16) / linear (20), zeros, align_corners 0 */
    gs_case d16 = {16, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 2, 1, 2, {5, 4}, {4, 4}, NULL, VREF_LINEAR, VREF_ZEROS, -1, -1.3, 1.3};
    run_grid_sample(&rng, &d16);
    d16.opset = 20;
    run_grid_sample(&rng, &d16);
}

Test(vision, grid_sample_nd_every_mode_padding_alignment)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.grid_sample_nd"));
    const char *names[3] = {"linear", "nearest", "cubic"};
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int al = 0; al < 2; al++) {
                gs_case k3 = {20, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 3, 2, 2, {3, 4, 5}, {2, 3, 2}, names[m], m, p, al,
                              -1.5, 1.5};
                run_grid_sample(&rng, &k3);
                gs_case k1 = {22, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 1, 2, 3, {6}, {7}, names[m], m, p, al, -2.5, 2.5};
                run_grid_sample(&rng, &k1);
            }
    /* size-1 spatial dims: align_corners maps every coordinate to 0, and reflection has an empty range */
    for (int p = 0; p < 3; p++)
        for (int al = 0; al < 2; al++) {
            gs_case k = {20, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 2, 1, 2, {1, 3}, {2, 3}, "linear", VREF_LINEAR, p, al, -1.5, 1.5};
            run_grid_sample(&rng, &k);
        }
}

Test(vision, grid_sample_double_float16_mixed)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.grid_sample_dtypes"));
    const char *names[3] = {"linear", "nearest", "cubic"};
    const mrt_dtype xdts[3] = {MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT16};
    const mrt_dtype gdts[3] = {MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT};
    for (int t = 0; t < 3; t++)
        for (int m = 0; m < 3; m++)
            for (int p = 0; p < 3; p++) {
                gs_case k = {22, xdts[t], gdts[t], 2, 1, 2, {4, 3}, {3, 3}, names[m], m, p, (m + p) % 2, -1.4, 1.4};
                run_grid_sample(&rng, &k);
            }
    gs_case k3 = {20, MRT_DTYPE_FLOAT16, MRT_DTYPE_FLOAT16, 3, 1, 1, {2, 3, 4}, {2, 2, 2}, "linear", VREF_LINEAR,
                  VREF_BORDER, 0, -1.2, 1.2};
    run_grid_sample(&rng, &k3);
}

Test(vision, grid_sample_empty_and_hostile_coordinates)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.grid_sample_hostile"));
    /* empty batch and empty output grid */
    gs_case e1 = {20, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 2, 0, 2, {3, 3}, {2, 2}, "linear", VREF_LINEAR, VREF_ZEROS, 0, -1, 1};
    run_grid_sample(&rng, &e1);
    gs_case e2 = {20, MRT_DTYPE_FLOAT, MRT_DTYPE_FLOAT, 2, 1, 2, {3, 3}, {0, 2}, "cubic", VREF_CUBIC, VREF_REFLECTION, 1, -1, 1};
    run_grid_sample(&rng, &e2);
    for (int p = 0; p < 3; p++) { /* an empty input plane under a non-empty grid: every sample reads 0 */
        mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 0, 3}, -1, 1);
        mrt_tensor grid = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 2}, -1.5, 1.5);
        th_case *c = th_begin("GridSample", "", 20);
        th_input(c, &x);
        th_input(c, &grid);
        th_attr_string(c, "padding_mode", pad_names[p]);
        th_attr_int(c, "align_corners", p % 2);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        double zeros[8] = {0};
        check_out(&y, zeros, 4, (int64_t[]){1, 2, 2, 2}, "GridSample over an empty plane");
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&grid);
        th_free(c);
    }

    /* inf, NaN and huge coordinates: no crash, and far-outside samples read 0 with zeros padding */
    const double bad[8] = {INFINITY, -INFINITY, NAN, 1e300, -1e300, 9.3e18, -9.3e18, 3e10};
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 3, 4}, -1, 1);
    double gv[8 * 8 * 2];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) gv[(i * 8 + j) * 2] = bad[i], gv[(i * 8 + j) * 2 + 1] = bad[j];
    mrt_tensor grid = th_from_f64(MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 8, 8, 2}, gv);
    const char *names[3] = {"linear", "nearest", "cubic"};
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int al = 0; al < 2; al++) {
                th_case *c = th_begin("GridSample", "", 20);
                th_input(c, &x);
                th_input(c, &grid);
                th_attr_string(c, "mode", names[m]);
                th_attr_string(c, "padding_mode", pad_names[p]);
                th_attr_int(c, "align_corners", al);
                mrt_tensor y = {0};
                cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s/%s: %s", names[m], pad_names[p], mrt_last_error());
                if (p == VREF_ZEROS)
                    for (int i = 3; i < 8; i++) /* both coordinates finite and far outside */
                        for (int j = 3; j < 8; j++) {
                            float v = ((float *)y.data)[i * 8 + j];
                            cr_assert(v == 0, "%s zeros: grid (%g, %g) gave %g, expected 0", names[m], bad[i], bad[j], v);
                        }
                mrt_tensor_release(&y);
                th_free(c);
            }
    mrt_tensor_release(&x);
    mrt_tensor_release(&grid);
}

Test(vision, grid_sample_errors)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.grid_sample_errors"));
    mrt_tensor x5 = th_rand(&rng, MRT_DTYPE_FLOAT, 5, (int64_t[]){1, 1, 2, 2, 2}, -1, 1);
    mrt_tensor g5 = th_rand(&rng, MRT_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 2, 2, 3}, -1, 1);
    mrt_tensor x4 = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 3, 3}, -1, 1);
    mrt_tensor g4bad = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 3}, -1, 1);
    mrt_tensor g4 = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 2, 2}, -1, 1);
    struct {
        int opset;
        const mrt_tensor *x, *g;
        const char *mode, *pad;
    } bad[] = {
        {16, &x5, &g5, "bilinear", "zeros"},   /* volumetric input before opset 20 */
        {20, &x4, &g4bad, "linear", "zeros"},  /* grid's last dim is not the spatial rank */
        {20, &x4, &g4, "area", "zeros"},       /* unknown mode */
        {22, &x4, &g4, "linear", "mirror"},    /* unknown padding */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        th_case *c = th_begin("GridSample", "", bad[i].opset);
        th_input(c, bad[i].x);
        th_input(c, bad[i].g);
        th_attr_string(c, "mode", bad[i].mode);
        th_attr_string(c, "padding_mode", bad[i].pad);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL, "case %zu should be refused", i);
        cr_assert(strstr(mrt_last_error(), "GridSample") != NULL, "message names the op: %s", mrt_last_error());
        th_free(c);
    }
    mrt_tensor *all[] = {&x5, &g5, &x4, &g4bad, &g4};
    for (int i = 0; i < 5; i++) mrt_tensor_release(all[i]);
}

/* ------------------------------------------------------------------ AffineGrid */

static void run_affine_grid(th_rng *rng, int r, mrt_dtype dt, int64_t n, const int64_t *sp, int align, bool const_size)
{
    int64_t size[5] = {n, 3}, ys[5] = {n};
    for (int d = 0; d < r; d++) size[2 + d] = sp[d], ys[1 + d] = sp[d];
    ys[1 + r] = r;
    mrt_tensor theta = th_rand(rng, dt, 3, (int64_t[]){n, r, r + 1}, -1.5, 1.5);
    mrt_tensor sz = th_vec_i64(r + 2, size);
    th_case *c = th_begin("AffineGrid", "", 20);
    th_input(c, &theta);
    if (const_size) th_input_const(c, &sz);
    else th_input(c, &sz);
    if (align >= 0) th_attr_int(c, "align_corners", align);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t ny = n * r;
    for (int d = 0; d < r; d++) ny *= sp[d];
    double *td = th_to_f64(&theta), *want = malloc((size_t)(ny ? ny : 1) * sizeof *want);
    vision_ref_affine_grid(r, n, sp, td, align > 0, want);
    char what[128];
    snprintf(what, sizeof what, "AffineGrid %dD %s align %d%s", r, dt_name(dt), align, const_size ? "" : " (size at run time)");
    check_out(&y, want, r + 2, ys, what);
    free(td);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&theta);
    mrt_tensor_release(&sz);
    th_free(c);
}

Test(vision, affine_grid_2d_3d_alignments_dtypes)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.affine_grid"));
    const mrt_dtype dts[3] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int t = 0; t < 3; t++)
        for (int al = -1; al < 2; al++) {
            run_affine_grid(&rng, 2, dts[t], 2, (int64_t[]){4, 5}, al, true);
            run_affine_grid(&rng, 3, dts[t], 2, (int64_t[]){3, 4, 2}, al, true);
        }
    /* size only known at run time; size-1 dims (align_corners puts the single point at -1); an empty grid */
    run_affine_grid(&rng, 2, MRT_DTYPE_FLOAT, 1, (int64_t[]){3, 2}, 0, false);
    run_affine_grid(&rng, 3, MRT_DTYPE_FLOAT, 1, (int64_t[]){1, 1, 3}, 1, true);
    run_affine_grid(&rng, 2, MRT_DTYPE_FLOAT, 1, (int64_t[]){1, 4}, 0, true);
    run_affine_grid(&rng, 2, MRT_DTYPE_FLOAT, 1, (int64_t[]){0, 4}, 1, true);
}

Test(vision, affine_grid_errors)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.affine_grid_errors"));
    mrt_tensor theta = th_rand(&rng, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 2, 3}, -1, 1);
    const int64_t sizes[3][5] = {{2, 1, 3, 3, 3}, {3, 1, 4, 4}, {2, 1, -1, 4}}; /* 3-D size, wrong N, negative dim */
    const int lens[3] = {5, 4, 4};
    for (int i = 0; i < 3; i++) {
        mrt_tensor sz = th_vec_i64(lens[i], sizes[i]);
        th_case *c = th_begin("AffineGrid", "", 20);
        th_input(c, &theta);
        th_input_const(c, &sz);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL, "size %d should be refused", i);
        th_free(c);
        mrt_tensor_release(&sz);
    }
    mrt_tensor_release(&theta);
}

/* ------------------------------------------------------------------ RoiAlign */

typedef struct roi_case {
    int opset;
    mrt_dtype dt;
    const char *mode, *ctm; /* NULL: attribute left out */
    int64_t sampling_ratio, oh, ow;
    double scale;
    int64_t channels; /* 0: 3 */
} roi_case;

static void run_roi_align(th_rng *rng, const roi_case *k)
{
    const int64_t N = 2, C = k->channels ? k->channels : 3, H = 6, W = 7, R = 5;
    mrt_tensor x = th_rand(rng, k->dt, 4, (int64_t[]){N, C, H, W}, -1, 1);
    /* boxes in input pixels / scale, some reaching past the image, one degenerate (x2 < x1) */
    double rv[R * 4];
    for (int64_t i = 0; i < R; i++) {
        double x1 = th_rng_uniform(rng, -2, W), y1 = th_rng_uniform(rng, -2, H);
        double x2 = x1 + th_rng_uniform(rng, 0.2, 6), y2 = y1 + th_rng_uniform(rng, 0.2, 5);
        rv[i * 4] = x1 / k->scale, rv[i * 4 + 1] = y1 / k->scale, rv[i * 4 + 2] = x2 / k->scale, rv[i * 4 + 3] = y2 / k->scale;
    }
    rv[4 * 4 + 2] = rv[4 * 4] - 1.0;
    mrt_tensor rois = th_from_f64(k->dt, 2, (int64_t[]){R, 4}, rv);
    mrt_tensor bi = th_vec_i64(R, (int64_t[]){0, 1, 1, 0, 1});
    th_case *c = th_begin("RoiAlign", "", k->opset);
    th_input(c, &x);
    th_input(c, &rois);
    th_input(c, &bi);
    if (k->mode) th_attr_string(c, "mode", k->mode);
    if (k->ctm) th_attr_string(c, "coordinate_transformation_mode", k->ctm);
    th_attr_int(c, "output_height", k->oh);
    th_attr_int(c, "output_width", k->ow);
    th_attr_int(c, "sampling_ratio", k->sampling_ratio);
    th_attr_float(c, "spatial_scale", (float)k->scale);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *xd = th_to_f64(&x), *rd = th_to_f64(&rois), *want = malloc((size_t)(R * C * k->oh * k->ow) * sizeof *want);
    /* opset 10 has no coordinate_transformation_mode: it behaves as output_half_pixel; later the default is half_pixel */
    bool half = k->opset >= 16 && (!k->ctm || !strcmp(k->ctm, "half_pixel"));
    vision_ref_roi_args a = {N, C, H, W, R, k->oh, k->ow, xd, rd, (const int64_t *)bi.data, k->sampling_ratio,
                             (double)(float)k->scale, half, k->mode && !strcmp(k->mode, "max")};
    vision_ref_roi_align(&a, want);
    char what[160];
    snprintf(what, sizeof what, "RoiAlign-%d %s mode %s ctm %s ratio %lld scale %g", k->opset, dt_name(k->dt),
             k->mode ? k->mode : "(default)", k->ctm ? k->ctm : "(default)", (long long)k->sampling_ratio, k->scale);
    check_out(&y, want, 4, (int64_t[]){R, C, k->oh, k->ow}, what);
    free(xd);
    free(rd);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&rois);
    mrt_tensor_release(&bi);
    th_free(c);
}

Test(vision, roi_align_modes_transforms_sampling)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.roi_align"));
    const char *modes[2] = {"avg", "max"}, *ctms[3] = {"half_pixel", "output_half_pixel", NULL};
    for (int m = 0; m < 2; m++)
        for (int64_t ratio = 0; ratio <= 2; ratio += 2)
            for (int s = 0; s < 2; s++) {
                double scale = s ? 0.5 : 1.0;
                roi_case k10 = {10, MRT_DTYPE_FLOAT, modes[m], NULL, ratio, 2, 3, scale};
                run_roi_align(&rng, &k10);
                for (int t = 0; t < 3; t++) {
                    roi_case k16 = {16, MRT_DTYPE_FLOAT, modes[m], ctms[t], ratio, 3, 2, scale};
                    run_roi_align(&rng, &k16);
                }
                roi_case k22 = {22, MRT_DTYPE_FLOAT, modes[m], "output_half_pixel", ratio, 1, 4, scale};
                run_roi_align(&rng, &k22);
            }
    roi_case dflt = {16, MRT_DTYPE_FLOAT, NULL, NULL, 0, 1, 1, 1.0}; /* avg, half_pixel, 1x1 */
    run_roi_align(&rng, &dflt);
}

/* More channels than the kernel's 16-channel chunks (tasks of one roi each take a chunk: the last is partial) */
Test(vision, roi_align_channel_chunks)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.roi_align_chunks"));
    const char *modes[2] = {"avg", "max"};
    for (int m = 0; m < 2; m++) {
        roi_case k = {16, MRT_DTYPE_FLOAT, modes[m], "half_pixel", 0, 3, 2, 0.5, 37};
        run_roi_align(&rng, &k);
    }
}

/* float32 averages take an AVX-512 path, 8 channels at a time (ops_cpu/vision.c), reading a channels-last copy when
   the samples outnumber the image's values, else gathering from the planes: either must give the double sums of the
   scalar loop rounded once, which the same values in float64 (the generic path) give, bit for bit. 40 rois on a
   2 x 75 x 9 x 11 map (chunks of 64 channels, 8 + 3 left to the scalar loop), and 2 rois on a 2 x 24 x 40 x 50 map
   (gathers); infinities and NaNs in the image; 1 and 2 threads. (It pins the taps, positions, channels and count; a
   reordering of the double sums would rarely survive the rounding to float.) */
Test(vision, roi_align_float32_vector_paths_are_the_float64_sums_rounded)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.roi_align_vector"));
    static const struct {
        int64_t c, h, w, r, ratio;
    } cases[] = {{75, 9, 11, 40, 2}, {75, 9, 11, 40, 0}, {24, 40, 50, 2, 2}, {24, 40, 50, 2, 0}};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int threads = 1; threads <= 2; threads++) {
            int64_t N = 2, C = cases[ci].c, H = cases[ci].h, W = cases[ci].w, R = cases[ci].r, OH = 7, OW = 5;
            mrt_tensor xf = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){N, C, H, W}, -3, 3);
            float *xv = xf.data;
            const float special[] = {INFINITY, -INFINITY, NAN};
            for (int64_t i = 0; i < N * C * H * W; i += 1 + th_rng_int(&rng, 200, 900)) xv[i] = special[th_rng_int(&rng, 0, 2)];
            double *xd_v = th_to_f64(&xf), *rv = malloc((size_t)(R * 4) * sizeof(double));
            int64_t *bv = malloc((size_t)R * sizeof(int64_t));
            for (int64_t i = 0; i < R; i++) {
                double x1 = th_rng_uniform(&rng, -2, W), y1 = th_rng_uniform(&rng, -2, H);
                rv[i * 4] = 2 * x1, rv[i * 4 + 1] = 2 * y1; /* spatial_scale 0.5 */
                rv[i * 4 + 2] = 2 * (x1 + th_rng_uniform(&rng, 0.5, 9)), rv[i * 4 + 3] = 2 * (y1 + th_rng_uniform(&rng, 0.5, 9));
                bv[i] = i % 2;
            }
            mrt_tensor xd = th_from_f64(MRT_DTYPE_DOUBLE, 4, (int64_t[]){N, C, H, W}, xd_v), y[2];
            mrt_tensor rf = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){R, 4}, rv), bi = th_vec_i64(R, bv);
            double *rfv = th_to_f64(&rf); /* the double run gets the float rois' values */
            mrt_tensor rd = th_from_f64(MRT_DTYPE_DOUBLE, 2, (int64_t[]){R, 4}, rfv);
            mrt_tensor *xs[2] = {&xf, &xd}, *rs[2] = {&rf, &rd};
            for (int t = 0; t < 2; t++) {
                th_case *c = th_begin("RoiAlign", "", 16);
                th_input(c, xs[t]);
                th_input(c, rs[t]);
                th_input(c, &bi);
                th_attr_int(c, "output_height", OH);
                th_attr_int(c, "output_width", OW);
                th_attr_int(c, "sampling_ratio", cases[ci].ratio);
                th_attr_float(c, "spatial_scale", 0.5f);
                mrt_session_options opt = mrt_session_options_default();
                opt.n_threads = threads;
                cr_assert_eq(th_run_opt(c, &opt, 1, &y[t]), MRT_STATUS_OK, "%s", mrt_last_error());
                th_free(c);
            }
            char label[64];
            snprintf(label, sizeof label, "case %zu, %d threads ([roi][channel][%lld][%lld])", ci, threads, (long long)OH,
                     (long long)OW);
            th_assert_f32_is_f64_rounded(&y[0], &y[1], label);
            free(xd_v), free(rv), free(bv), free(rfv);
            for (int t = 0; t < 2; t++) mrt_tensor_release(&y[t]), mrt_tensor_release(xs[t]), mrt_tensor_release(rs[t]);
            mrt_tensor_release(&bi);
        }
}

Test(vision, roi_align_double_float16)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.roi_align_dtypes"));
    const char *modes[2] = {"avg", "max"};
    for (int m = 0; m < 2; m++) {
        roi_case d = {16, MRT_DTYPE_DOUBLE, modes[m], "half_pixel", 0, 2, 2, 0.5};
        run_roi_align(&rng, &d);
        roi_case h = {16, MRT_DTYPE_FLOAT16, modes[m], "output_half_pixel", 2, 2, 3, 1.0};
        run_roi_align(&rng, &h);
    }
}

Test(vision, roi_align_empty_and_errors)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.roi_align_errors"));
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 2, 4, 4}, -1, 1);
    /* no rois: an empty output */
    mrt_tensor r0 = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){0, 4}, NULL);
    mrt_tensor b0 = th_vec_i64(0, NULL);
    th_case *c = th_begin("RoiAlign", "", 16);
    th_input(c, &x);
    th_input(c, &r0);
    th_input(c, &b0);
    th_attr_int(c, "output_height", 2);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert(y.rank == 4 && y.shape[0] == 0 && y.shape[1] == 2 && y.shape[2] == 2 && y.shape[3] == 1);
    mrt_tensor_release(&y);
    th_free(c);
    /* a batch index out of range is an error, not a read */
    mrt_tensor r1 = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 4}, (double[]){0, 0, 2, 2});
    mrt_tensor b1 = th_vec_i64(1, (int64_t[]){2});
    c = th_begin("RoiAlign", "", 16);
    th_input(c, &x);
    th_input(c, &r1);
    th_input(c, &b1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_ARG);
    cr_assert(strstr(mrt_last_error(), "batch_indices") != NULL, "%s", mrt_last_error());
    th_free(c);
    /* hostile boxes: inf and NaN corners sample nothing or are refused, never crash */
    const double hostile[4][4] = {{0, 0, INFINITY, 2}, {NAN, 0, 1, 1}, {-1e30, -1e30, 1e30, 1e30}, {3, 3, -INFINITY, 1}};
    for (int i = 0; i < 4; i++) {
        mrt_tensor rh = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 4}, hostile[i]);
        mrt_tensor b = th_vec_i64(1, (int64_t[]){1});
        for (int t = 0; t < 2; t++) {
            c = th_begin("RoiAlign", "", 16);
            th_input(c, &x);
            th_input(c, &rh);
            th_input(c, &b);
            th_attr_string(c, "coordinate_transformation_mode", t ? "half_pixel" : "output_half_pixel");
            mrt_status st = th_run(c, 1, &y);
            cr_assert(st == MRT_STATUS_OK || st == MRT_STATUS_INVALID_ARG, "hostile roi %d: status %d", i, (int)st);
            if (st == MRT_STATUS_OK) mrt_tensor_release(&y);
            th_free(c);
        }
        mrt_tensor_release(&rh);
        mrt_tensor_release(&b);
    }
    /* rois with 5 columns */
    mrt_tensor r5 = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 5}, (double[]){0, 0, 0, 2, 2});
    c = th_begin("RoiAlign", "", 16);
    th_input(c, &x);
    th_input(c, &r5);
    th_input(c, &b1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    th_free(c);
    mrt_tensor *all[] = {&x, &r0, &b0, &r1, &b1, &r5};
    for (int i = 0; i < 6; i++) mrt_tensor_release(all[i]);
}

/* ------------------------------------------------------------------ NonMaxSuppression */

typedef struct nms_case {
    int opset;
    mrt_dtype dt;
    int center;        /* -1: attribute left out (corners) */
    int64_t max_out;   /* -1: input left out */
    double iou;        /* < 0: input left out */
    double score;      /* NAN: input left out */
    bool ties;         /* scores on a coarse lattice, so many are equal */
    int64_t n;         /* boxes per batch (0: 14) */
    bool odd_boxes;    /* some boxes with a NaN corner, some of zero width */
} nms_case;

static void run_nms(th_rng *rng, const nms_case *k)
{
    const int64_t B = 2, C = 3, N = k->n ? k->n : 14;
    double *bv = malloc((size_t)(B * N * 4) * sizeof *bv), *sv = malloc((size_t)(B * C * N) * sizeof *sv);
    int64_t *sel = malloc((size_t)(B * C * N * 3) * sizeof *sel);
    double extent = 8 * sqrt((double)N / 14); /* as dense as with 14 boxes */
    for (int64_t i = 0; i < B * N; i++) {
        double *b = bv + i * 4;
        if (k->center == 1) {
            b[0] = th_rng_uniform(rng, 0, extent), b[1] = th_rng_uniform(rng, 0, extent);
            b[2] = th_rng_uniform(rng, 0.5, 5), b[3] = th_rng_uniform(rng, 0.5, 5);
        } else { /* corners in either order, boxes up to 8 wide */
            b[0] = th_rng_uniform(rng, 0, extent), b[1] = th_rng_uniform(rng, 0, extent);
            b[2] = b[0] + th_rng_uniform(rng, -8, 8), b[3] = b[1] + th_rng_uniform(rng, -8, 8);
        }
        if (k->odd_boxes && i % 17 == 3) b[i % 4] = NAN;
        if (k->odd_boxes && i % 19 == 5) { /* zero width */
            if (k->center == 1) b[2] = 0;
            else b[0] = b[2];
        }
    }
    memcpy(bv + 5 * 4, bv + 2 * 4, 4 * sizeof *bv); /* an identical pair */
    for (int64_t i = 0; i < B * C * N; i++) {
        sv[i] = th_rng_uniform(rng, 0, 1);
        if (k->ties) sv[i] = floor(sv[i] * 4) / 4;
    }
    mrt_tensor boxes = th_from_f64(k->dt, 3, (int64_t[]){B, N, 4}, bv);
    mrt_tensor scores = th_from_f64(k->dt, 3, (int64_t[]){B, C, N}, sv);
    mrt_tensor mo = th_vec_i64(1, (int64_t[]){k->max_out});
    mrt_tensor iou = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){k->iou});
    mrt_tensor st = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){k->score});
    th_case *c = th_begin("NonMaxSuppression", "", k->opset);
    th_input(c, &boxes);
    th_input(c, &scores);
    bool has_iou = k->iou >= 0, has_score = !isnan(k->score);
    int last = has_score ? 4 : has_iou ? 3 : k->max_out >= 0 ? 2 : 1;
    if (last >= 2) {
        if (k->max_out >= 0) th_input_const(c, &mo);
        else th_input_absent(c);
    }
    if (last >= 3) {
        if (has_iou) th_input_const(c, &iou);
        else th_input_absent(c);
    }
    if (last >= 4) th_input(c, &st);
    if (k->center >= 0) th_attr_int(c, "center_point_box", k->center);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double *bd = th_to_f64(&boxes), *sd = th_to_f64(&scores);
    int64_t cap = B * C * N;
    /* thresholds are float tensors: compare with the float value */
    int64_t n = vision_ref_nms(B, C, N, bd, sd, k->center == 1, k->max_out < 0 ? 0 : k->max_out,
                               has_iou ? (double)(float)k->iou : 0, has_score, has_score ? (double)(float)k->score : 0,
                               sel, cap);
    char what[160];
    snprintf(what, sizeof what, "NMS-%d %s center %d max %lld iou %g score %g ties %d", k->opset, dt_name(k->dt),
             k->center, (long long)k->max_out, k->iou, k->score, k->ties);
    cr_assert(y.dtype == MRT_DTYPE_INT64 && y.rank == 2 && y.shape[1] == 3, "%s: output must be int64 [n, 3]", what);
    cr_assert_eq(y.shape[0], n, "%s: %lld selected, expected %lld", what, (long long)y.shape[0], (long long)n);
    for (int64_t i = 0; i < n * 3; i++)
        cr_assert_eq(((int64_t *)y.data)[i], sel[i], "%s: selection %lld field %lld: got %lld, expected %lld", what,
                     (long long)(i / 3), (long long)(i % 3), (long long)((int64_t *)y.data)[i], (long long)sel[i]);
    free(bd);
    free(sd);
    free(bv);
    free(sv);
    free(sel);
    mrt_tensor *all[] = {&y, &boxes, &scores, &mo, &iou, &st};
    for (int i = 0; i < 6; i++) mrt_tensor_release(all[i]);
    th_free(c);
}

Test(vision, nms_box_formats_thresholds_limits)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.nms"));
    const double ious[3] = {0.0, 0.3, 0.7}, scores[2] = {NAN, 0.4};
    const int64_t maxes[3] = {1, 4, 100};
    for (int opset = 10; opset <= 11; opset++)
        for (int center = -1; center <= 1; center++)
            for (int i = 0; i < 3; i++)
                for (int s = 0; s < 2; s++)
                    for (int m = 0; m < 3; m++) {
                        nms_case k = {opset, MRT_DTYPE_FLOAT, center, maxes[m], ious[i], scores[s], (i + m) % 2 == 1};
                        run_nms(&rng, &k);
                    }
    /* optional inputs left out: max_output_boxes_per_class defaults to 0 (nothing selected); iou to 0 */
    nms_case none = {11, MRT_DTYPE_FLOAT, 0, -1, -1, NAN, false};
    run_nms(&rng, &none);
    nms_case no_iou = {11, MRT_DTYPE_FLOAT, 1, 5, -1, NAN, true};
    run_nms(&rng, &no_iou);
    nms_case neg = {11, MRT_DTYPE_FLOAT, 0, -3, 0.5, NAN, false}; /* negative limit selects nothing */
    run_nms(&rng, &neg);
}

/* Hundreds of boxes (the kept ones are tested 8 at a time on AVX-512), with NaN corners and zero-width boxes */
Test(vision, nms_many_boxes_nan_and_degenerate)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.nms_many"));
    for (int center = 0; center <= 1; center++)
        for (int odd = 0; odd <= 1; odd++) {
            nms_case k = {11, MRT_DTYPE_FLOAT, center, 1000, 0.3, NAN, false, 300, odd};
            run_nms(&rng, &k);
            nms_case t = {11, MRT_DTYPE_FLOAT, center, 40, 0.6, 0.2, true, 133, odd};
            run_nms(&rng, &t);
        }
}

Test(vision, nms_double_float16)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.nms_dtypes"));
    for (int center = 0; center <= 1; center++) {
        nms_case d = {11, MRT_DTYPE_DOUBLE, center, 6, 0.45, 0.25, false};
        run_nms(&rng, &d);
        nms_case h = {11, MRT_DTYPE_FLOAT16, center, 6, 0.45, 0.25, true};
        run_nms(&rng, &h);
    }
}

Test(vision, nms_empty_and_errors)
{
    /* no boxes: [0, 3] */
    mrt_tensor boxes = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 0, 4}, NULL);
    mrt_tensor scores = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 0}, NULL);
    mrt_tensor mo = th_scalar_i64(3);
    th_case *c = th_begin("NonMaxSuppression", "", 11);
    th_input(c, &boxes);
    th_input(c, &scores);
    th_input(c, &mo);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert(y.rank == 2 && y.shape[0] == 0 && y.shape[1] == 3);
    mrt_tensor_release(&y);
    th_free(c);
    /* NaN and inf boxes and scores: a defined selection, no crash */
    double bv[3 * 4] = {NAN, 0, 1, 1, 0, 0, INFINITY, INFINITY, 0, 0, 1, 1}, sv[3] = {NAN, 0.5, INFINITY};
    mrt_tensor hb = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 4}, bv);
    mrt_tensor hs = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 1, 3}, sv);
    c = th_begin("NonMaxSuppression", "", 11);
    th_input(c, &hb);
    th_input(c, &hs);
    th_input(c, &mo);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert(y.rank == 2 && y.shape[0] >= 1 && ((int64_t *)y.data)[2] == 2, "the inf score is selected first");
    mrt_tensor_release(&y);
    th_free(c);
    /* boxes with 5 coordinates; scores whose box count disagrees */
    mrt_tensor b5 = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 3, 5}, NULL);
    mrt_tensor s4 = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 1, 4}, NULL);
    const mrt_tensor *pairs[2][2] = {{&b5, &hs}, {&hb, &s4}};
    for (int i = 0; i < 2; i++) {
        c = th_begin("NonMaxSuppression", "", 10);
        th_input(c, pairs[i][0]);
        th_input(c, pairs[i][1]);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL, "case %d should be refused", i);
        cr_assert(strstr(mrt_last_error(), "boxes") != NULL, "%s", mrt_last_error());
        th_free(c);
    }
    mrt_tensor *all[] = {&boxes, &scores, &mo, &hb, &hs, &b5, &s4};
    for (int i = 0; i < 7; i++) mrt_tensor_release(all[i]);
}

/* ------------------------------------------------------------------ Col2Im */

typedef struct col_case {
    mrt_dtype dt;
    int r;
    int64_t n, c, image[3], block[3];
    int64_t strides[3], dil[3], pads[6];
    bool attrs;       /* false: strides/dilations/pads left out (1, 1, 0) */
    bool const_shape; /* image_shape/block_shape as initializers */
} col_case;

static void run_col2im(th_rng *rng, const col_case *k)
{
    int64_t kprod = 1, L = 1, ys[5] = {k->n, k->c}, one[3] = {1, 1, 1}, zero[6] = {0};
    const int64_t *s = k->attrs ? k->strides : one, *d = k->attrs ? k->dil : one, *p = k->attrs ? k->pads : zero;
    for (int i = 0; i < k->r; i++) {
        kprod *= k->block[i];
        L *= (k->image[i] + p[i] + p[k->r + i] - d[i] * (k->block[i] - 1) - 1) / s[i] + 1;
        ys[2 + i] = k->image[i];
    }
    mrt_tensor x = th_rand(rng, k->dt, 3, (int64_t[]){k->n, k->c * kprod, L}, -1, 1);
    mrt_tensor img = th_vec_i64(k->r, k->image), blk = th_vec_i64(k->r, k->block);
    th_case *c = th_begin("Col2Im", "", 18);
    th_input(c, &x);
    if (k->const_shape) {
        th_input_const(c, &img);
        th_input_const(c, &blk);
    } else {
        th_input(c, &img);
        th_input(c, &blk);
    }
    if (k->attrs) {
        th_attr_ints(c, "strides", k->r, k->strides);
        th_attr_ints(c, "dilations", k->r, k->dil);
        th_attr_ints(c, "pads", 2 * k->r, k->pads);
    }
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    int64_t ny = k->n * k->c;
    for (int i = 0; i < k->r; i++) ny *= k->image[i];
    double *xd = th_to_f64(&x), *want = malloc((size_t)(ny ? ny : 1) * sizeof *want);
    vision_ref_col2im(k->r, k->n, k->c, k->image, k->block, s, d, p, xd, want);
    char what[128];
    snprintf(what, sizeof what, "Col2Im %dD %s%s%s", k->r, dt_name(k->dt), k->attrs ? " strides/dilations/pads" : "",
             k->const_shape ? "" : " (shapes at run time)");
    check_out(&y, want, k->r + 2, ys, what);
    free(xd);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&img);
    mrt_tensor_release(&blk);
    th_free(c);
}

Test(vision, col2im_strides_dilations_pads_nd)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.col2im"));
    const mrt_dtype dts[3] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16};
    for (int t = 0; t < 3; t++) {
        col_case plain = {dts[t], 2, 2, 2, {4, 5}, {2, 2}, {0}, {0}, {0}, false, true};
        run_col2im(&rng, &plain);
        col_case strided = {dts[t], 2, 1, 3, {5, 6}, {2, 3}, {1, 2}, {1, 1}, {0}, true, true};
        run_col2im(&rng, &strided);
        col_case dilated = {dts[t], 2, 1, 2, {7, 6}, {3, 2}, {1, 1}, {2, 3}, {0}, true, true};
        run_col2im(&rng, &dilated);
        col_case padded = {dts[t], 2, 2, 1, {5, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 0, 2, 1}, true, true};
        run_col2im(&rng, &padded);
        col_case all = {dts[t], 2, 1, 2, {6, 7}, {2, 3}, {2, 1}, {2, 2}, {1, 2, 0, 1}, true, true};
        run_col2im(&rng, &all);
    }
    col_case one_d = {MRT_DTYPE_FLOAT, 1, 2, 2, {9}, {3}, {2}, {2}, {1, 2}, true, true};
    run_col2im(&rng, &one_d);
    col_case three_d = {MRT_DTYPE_FLOAT, 3, 1, 2, {4, 5, 3}, {2, 2, 2}, {1, 2, 1}, {1, 1, 2}, {0, 1, 0, 1, 0, 0}, true, true};
    run_col2im(&rng, &three_d);
    col_case dynamic = {MRT_DTYPE_FLOAT, 2, 1, 2, {5, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 1, 1}, true, false};
    run_col2im(&rng, &dynamic);
    col_case empty = {MRT_DTYPE_FLOAT, 2, 0, 2, {3, 3}, {2, 2}, {0}, {0}, {0}, false, true};
    run_col2im(&rng, &empty);
    col_case no_ch = {MRT_DTYPE_FLOAT, 2, 1, 0, {3, 3}, {2, 2}, {0}, {0}, {0}, false, true};
    run_col2im(&rng, &no_ch);
}

Test(vision, col2im_errors)
{
    th_rng rng;
    th_rng_init(&rng, th_seed("vision.col2im_errors"));
    /* 4 blocks of 2x2 in a 3x3 image, but the input has 5 columns; then a block larger than the image; then
       block sizes whose product overflows */
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 4, 5}, -1, 1);
    const int64_t blocks[3][2] = {{2, 2}, {4, 2}, {INT64_MAX / 2, 4}};
    for (int i = 0; i < 3; i++) {
        mrt_tensor img = th_vec_i64(2, (int64_t[]){3, 3}), blk = th_vec_i64(2, blocks[i]);
        th_case *c = th_begin("Col2Im", "", 18);
        th_input(c, &x);
        th_input(c, &img);
        th_input(c, &blk);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL, "case %d should be refused", i);
        th_free(c);
        mrt_tensor_release(&img);
        mrt_tensor_release(&blk);
    }
    /* huge image shape and dilation from data/attributes: refused, no overflow */
    mrt_tensor img = th_vec_i64(2, (int64_t[]){INT64_MAX, 3}), blk = th_vec_i64(2, (int64_t[]){2, 2});
    th_case *c = th_begin("Col2Im", "", 18);
    th_input(c, &x);
    th_input(c, &img);
    th_input(c, &blk);
    th_attr_ints(c, "pads", 4, (int64_t[]){INT64_MAX, 0, INT64_MAX, 0});
    th_attr_ints(c, "dilations", 2, (int64_t[]){INT64_MAX, 1});
    mrt_tensor y = {0};
    mrt_status st = th_run(c, 1, &y);
    cr_assert(st == MRT_STATUS_INVALID_MODEL || st == MRT_STATUS_OUT_OF_MEMORY, "status %d", (int)st);
    th_free(c);
    mrt_tensor_release(&img);
    mrt_tensor_release(&blk);
    mrt_tensor_release(&x);
}
