/* The CUDA vision family (ops_cuda/vision.cu: GridSample 16/20, AffineGrid 20, RoiAlign 10/16/22, NonMaxSuppression
 * 10/11, Col2Im 18) against the CPU kernels (tests/harness.h th_cuda_check): every GridSample mode, padding mode and
 * align_corners in 2-D and 3-D with coordinates past the border; RoiAlign's modes, coordinate transforms and sampling
 * grids; NMS order with tied scores, thresholds and both box layouts (exact); Col2Im strides, pads and dilations;
 * empty tensors throughout. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

Test(cuda_vision, grid_sample_every_mode)
{
    th_cuda_require();
    static const char *pads[] = {"zeros", "border", "reflection"};
    static const char *modes20[] = {"linear", "nearest", "cubic"}, *modes16[] = {"bilinear", "nearest", "bicubic"};
    static const struct {
        int rank;
        int64_t x[5], grid[5];
    } shapes[] = {{4, {2, 3, 5, 6}, {2, 4, 7, 2}}, {4, {1, 2, 1, 9}, {1, 3, 3, 2}}, {4, {0, 2, 4, 4}, {0, 3, 3, 2}},
                  {5, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 3}}};
    th_rng r;
    th_rng_init(&r, th_seed("GridSample"));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int m = 0; m < 3; m++)
            for (int p = 0; p < 3; p++)
                for (int align = 0; align < 2; align++) {
                    int rank = shapes[s].rank;
                    if (rank == 5 && m == 2) continue; /* cubic is 2-D only */
                    int opset = rank == 5 || (m + p + align) % 2 ? 20 : 16;
                    mrt_dtype dt = (m + p) % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
                    mrt_tensor x = th_rand(&r, dt, rank, shapes[s].x, -3, 3);
                    mrt_tensor g = th_rand(&r, dt, rank, shapes[s].grid, -1.4, 1.4);
                    if (mrt_tensor_numel(&g) > 4) mrt_store_f64(dt, g.data, 3, 0.0); /* a tap exactly on a pixel */
                    th_case *c = th_begin("GridSample", "", opset);
                    th_input(c, &x);
                    th_input(c, &g);
                    th_attr_string(c, "mode", opset >= 20 ? modes20[m] : modes16[m]);
                    th_attr_string(c, "padding_mode", pads[p]);
                    th_attr_int(c, "align_corners", align);
                    char label[128];
                    snprintf(label, sizeof label, "GridSample-%d shape %zu %s %s align %d", opset, s, modes20[m], pads[p], align);
                    th_cuda_check(c, 1, 1, label);
                    mrt_tensor_release(&x);
                    mrt_tensor_release(&g);
                    th_free(c);
                }
}

Test(cuda_vision, affine_grid_2d_and_3d)
{
    th_cuda_require();
    static const int64_t sizes[][5] = {{2, 3, 5, 7}, {1, 1, 1, 4}, {0, 1, 3, 3}, {2, 1, 3, 4, 5}, {1, 2, 1, 1, 2}};
    static const int ranks[] = {4, 4, 4, 5, 5};
    th_rng r;
    th_rng_init(&r, th_seed("AffineGrid"));
    for (size_t s = 0; s < 5; s++)
        for (int align = 0; align < 2; align++) {
            int sp = ranks[s] - 2;
            int64_t ts[3] = {sizes[s][0], sp, sp + 1};
            mrt_tensor theta = th_rand(&r, align ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 3, ts, -2, 2);
            mrt_tensor size = th_vec_i64(ranks[s], sizes[s]);
            th_case *c = th_begin("AffineGrid", "", 20);
            th_input(c, &theta);
            th_input_const(c, &size);
            th_attr_int(c, "align_corners", align);
            char label[96];
            snprintf(label, sizeof label, "AffineGrid size %zu align %d", s, align);
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&theta);
            mrt_tensor_release(&size);
            th_free(c);
        }
}

Test(cuda_vision, roi_align_modes_and_grids)
{
    th_cuda_require();
    static const int opsets[] = {10, 16, 22};
    th_rng r;
    th_rng_init(&r, th_seed("RoiAlign"));
    for (int o = 0; o < 3; o++)
        for (int max = 0; max < 2; max++)
            for (int ratio = 0; ratio < 3; ratio += 2)
                for (int64_t R = 0; R < 8; R += 7) {
                    int64_t xs[4] = {2, 3, 9, 11}, rs[2] = {R, 4};
                    mrt_tensor x = th_rand(&r, max ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 4, xs, -2, 2);
                    mrt_tensor rois = th_rand(&r, x.dtype, 2, rs, -3, 14);
                    mrt_tensor bi = th_rand(&r, MRT_DTYPE_INT64, 1, &R, 0, 1);
                    th_case *c = th_begin("RoiAlign", "", opsets[o]);
                    th_input(c, &x);
                    th_input(c, &rois);
                    th_input(c, &bi);
                    th_attr_string(c, "mode", max ? "max" : "avg");
                    th_attr_int(c, "output_height", 3);
                    th_attr_int(c, "output_width", 4);
                    th_attr_int(c, "sampling_ratio", ratio);
                    th_attr_float(c, "spatial_scale", 0.8f);
                    if (opsets[o] >= 16)
                        th_attr_string(c, "coordinate_transformation_mode", max ? "output_half_pixel" : "half_pixel");
                    char label[96];
                    snprintf(label, sizeof label, "RoiAlign-%d %s ratio %d rois %lld", opsets[o], max ? "max" : "avg", ratio,
                             (long long)R);
                    th_cuda_check(c, 1, 1, label);
                    mrt_tensor_release(&x);
                    mrt_tensor_release(&rois);
                    mrt_tensor_release(&bi);
                    th_free(c);
                }
}

/* Boxes on a coarse grid and scores from few values, so that overlaps and ties are common. */
Test(cuda_vision, nms_order_is_the_cpus)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("NonMaxSuppression"));
    static const int64_t nboxes[] = {0, 1, 17, 60};
    for (size_t b = 0; b < 4; b++)
        for (int center = 0; center < 2; center++)
            for (int variant = 0; variant < 3; variant++) {
                int64_t bs[3] = {2, nboxes[b], 4}, ss[3] = {2, 3, nboxes[b]};
                mrt_tensor boxes = th_rand(&r, MRT_DTYPE_INT32, 3, bs, 0, 12);
                double *bv = th_to_f64(&boxes);
                mrt_tensor_release(&boxes);
                boxes = th_from_f64(MRT_DTYPE_FLOAT, 3, bs, bv);
                free(bv);
                mrt_tensor si = th_rand(&r, MRT_DTYPE_INT32, 3, ss, 0, 6);
                double *sv = th_to_f64(&si);
                for (int64_t i = 0; i < th_numel(3, ss); i++) sv[i] /= 6;
                mrt_tensor scores = th_from_f64(variant == 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 3, ss, sv);
                free(sv);
                mrt_tensor_release(&si);
                int64_t max_out = variant == 0 ? 100 : 3;
                mrt_tensor mo = th_vec_i64(1, &max_out);
                mrt_tensor iou = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){variant == 1 ? 0.0 : 0.3});
                mrt_tensor st = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){0.2});
                th_case *c = th_begin("NonMaxSuppression", "", variant ? 11 : 10);
                th_input(c, &boxes);
                th_input(c, &scores);
                th_input(c, &mo);
                th_input(c, &iou);
                if (variant != 1) th_input(c, &st);
                th_attr_int(c, "center_point_box", center);
                char label[96];
                snprintf(label, sizeof label, "NMS boxes %lld center %d variant %d", (long long)nboxes[b], center, variant);
                th_cuda_check(c, 1, 1, label);
                mrt_tensor_release(&boxes);
                mrt_tensor_release(&scores);
                mrt_tensor_release(&mo);
                mrt_tensor_release(&iou);
                mrt_tensor_release(&st);
                th_free(c);
            }
}

Test(cuda_vision, col2im_strides_pads_dilations)
{
    th_cuda_require();
    static const struct {
        int n;
        int64_t img[3], blk[3], str[3], dil[3], pad[6];
    } cases[] = {
        {2, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
        {2, {6, 7}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 1, 1}},
        {2, {4, 9}, {1, 3}, {1, 3}, {1, 1}, {0, 2, 0, 1}},
        {1, {10}, {3}, {2}, {2}, {1, 2}},
        {3, {3, 4, 5}, {2, 2, 3}, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 1}},
    };
    th_rng r;
    th_rng_init(&r, th_seed("Col2Im"));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int batch = 0; batch < 3; batch++) {
            int n = cases[k].n;
            int64_t L = 1, prod = 1;
            for (int i = 0; i < n; i++) {
                int64_t eff = cases[k].dil[i] * (cases[k].blk[i] - 1) + 1;
                L *= (cases[k].img[i] + cases[k].pad[i] + cases[k].pad[n + i] - eff) / cases[k].str[i] + 1;
                prod *= cases[k].blk[i];
            }
            int64_t xs[3] = {batch, 2 * prod, L};
            mrt_dtype dt = batch == 2 ? MRT_DTYPE_INT32 : k % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
            mrt_tensor x = th_rand(&r, dt, 3, xs, -20, 20);
            mrt_tensor img = th_vec_i64(n, cases[k].img), blk = th_vec_i64(n, cases[k].blk);
            th_case *c = th_begin("Col2Im", "", 18);
            th_input(c, &x);
            th_input_const(c, &img);
            th_input_const(c, &blk);
            th_attr_ints(c, "strides", n, cases[k].str);
            th_attr_ints(c, "dilations", n, cases[k].dil);
            th_attr_ints(c, "pads", 2 * n, cases[k].pad);
            char label[96];
            snprintf(label, sizeof label, "Col2Im case %zu batch %d %s", k, batch, mrt_dtype_name(dt));
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&x);
            mrt_tensor_release(&img);
            mrt_tensor_release(&blk);
            th_free(c);
        }
}
