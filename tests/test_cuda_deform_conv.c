/* CUDA deformable convolution (ops_cuda/deform_conv.cu) against the CPU kernel (ops_cpu/deform_conv.c) through every
 * front-end: ONNX DeformConv 19/22, mmcv/mmdeploy MMCV(Modulated)DeformConv2d, custom/torchvision deform_conv2d; groups,
 * offset groups, strides, pads, dilations, masks and biases present or not, offsets reaching outside the image, every
 * float dtype. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "harness.h"

typedef struct dconf {
    int64_t n, c, h, w, oc, kh, kw, group, og;
    int64_t stride[2], pads[4], dil[2];
    bool mask, bias;
} dconf;

static int64_t out_dim(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t d, int64_t s)
{
    return (in + pb + pe - (d * (k - 1) + 1)) / s + 1;
}

typedef enum front { F_ONNX, F_MMCV_MOD, F_MMDEPLOY_V1, F_TORCHVISION, F_CUSTOM_SCALAR } front;

static void deform_case(th_rng *r, front f, mrt_dtype dt, const dconf *d)
{
    int64_t oh = out_dim(d->h, d->pads[0], d->pads[2], d->kh, d->dil[0], d->stride[0]);
    int64_t ow = out_dim(d->w, d->pads[1], d->pads[3], d->kw, d->dil[1], d->stride[1]);
    int64_t kk = d->kh * d->kw;
    int64_t xs[4] = {d->n, d->c, d->h, d->w}, ws[4] = {d->oc, d->c / d->group, d->kh, d->kw};
    int64_t os[4] = {d->n, 2 * d->og * kk, oh, ow}, ms[4] = {d->n, d->og * kk, oh, ow}, bs[1] = {d->oc};
    mrt_tensor x = th_rand(r, dt, 4, xs, -1, 1), w = th_rand(r, dt, 4, ws, -1, 1);
    mrt_tensor off = th_rand(r, dt, 4, os, -3, 3), m = th_rand(r, dt, 4, ms, 0, 1), b = th_rand(r, dt, 1, bs, -1, 1);
    bool use_mask = d->mask && f != F_MMDEPLOY_V1, use_bias = d->bias && f != F_MMDEPLOY_V1;
    th_case *c;
    const int64_t pad2[2] = {d->pads[0], d->pads[1]};
    switch (f) {
    case F_ONNX:
        c = th_begin("DeformConv", "", d->n % 2 ? 19 : 22);
        th_input(c, &x);
        th_input_const(c, &w);
        th_input(c, &off);
        if (use_bias) th_input(c, &b);
        else if (use_mask) th_input_absent(c);
        if (use_mask) th_input(c, &m);
        th_attr_ints(c, "strides", 2, d->stride);
        th_attr_ints(c, "pads", 4, d->pads);
        th_attr_ints(c, "dilations", 2, d->dil);
        th_attr_ints(c, "kernel_shape", 2, (const int64_t[]){d->kh, d->kw});
        th_attr_int(c, "group", d->group);
        th_attr_int(c, "offset_group", d->og);
        break;
    case F_MMCV_MOD:
        c = th_begin("MMCVModulatedDeformConv2d", "mmcv", 1);
        use_mask = true;
        th_input(c, &x);
        th_input(c, &off);
        th_input(c, &m);
        th_input(c, &w);
        if (use_bias) th_input(c, &b);
        th_attr_ints(c, "stride", 2, d->stride);
        th_attr_ints(c, "padding", 2, pad2);
        th_attr_ints(c, "dilation", 2, d->dil);
        th_attr_int(c, "groups", d->group);
        th_attr_int(c, "deform_groups", d->og);
        break;
    case F_MMDEPLOY_V1:
        c = th_begin("MMCVDeformConv2d", "mmdeploy", 1);
        th_input(c, &x);
        th_input(c, &off);
        th_input(c, &w);
        th_attr_ints(c, "stride", 2, d->stride);
        th_attr_ints(c, "padding", 2, pad2);
        th_attr_ints(c, "dilation", 2, d->dil);
        th_attr_int(c, "groups", d->group);
        th_attr_int(c, "deformable_groups", d->og);
        break;
    default:
        c = th_begin("deform_conv2d", f == F_TORCHVISION ? "torchvision" : "custom", 1);
        th_input(c, &x);
        th_input(c, &w);
        th_input(c, &off);
        th_input(c, &m); /* a placeholder when use_mask is 0, as torchvision passes */
        th_input(c, &b);
        use_bias = true;
        if (f == F_CUSTOM_SCALAR) {
            th_attr_int(c, "stride_h", d->stride[0]);
            th_attr_int(c, "stride_w", d->stride[1]);
            th_attr_int(c, "pad_h", d->pads[0]);
            th_attr_int(c, "pad_w", d->pads[1]);
            th_attr_int(c, "dil_h", d->dil[0]);
            th_attr_int(c, "dil_w", d->dil[1]);
            th_attr_int(c, "n_weight_grps", d->group);
            th_attr_int(c, "n_offset_grps", d->og);
        } else {
            th_attr_ints(c, "stride", 2, d->stride);
            th_attr_ints(c, "padding", 2, pad2);
            th_attr_ints(c, "dilation", 2, d->dil);
            th_attr_int(c, "groups", d->group);
            th_attr_int(c, "offset_groups", d->og);
        }
        th_attr_int(c, "use_mask", use_mask);
        break;
    }
    char label[160];
    snprintf(label, sizeof label, "front %d %s group %lld og %lld mask %d bias %d", f, mrt_dtype_name(dt),
             (long long)d->group, (long long)d->og, use_mask, use_bias);
    th_cuda_check(c, 1, 1, label);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&off);
    mrt_tensor_release(&m);
    mrt_tensor_release(&b);
}

static const dconf confs[] = {
    {1, 4, 7, 8, 6, 3, 3, 2, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, true},
    {2, 3, 6, 5, 3, 2, 3, 1, 1, {2, 1}, {0, 1, 0, 1}, {1, 2}, false, true},
    {1, 6, 5, 9, 3, 3, 1, 3, 3, {1, 2}, {2, 0, 2, 0}, {2, 1}, true, false},
    {2, 2, 4, 4, 4, 1, 1, 1, 2, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, true},
};

Test(cuda_deform_conv, every_front_end_matches_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_deform_conv"));
    static const front fronts[] = {F_ONNX, F_MMCV_MOD, F_MMDEPLOY_V1, F_TORCHVISION, F_CUSTOM_SCALAR};
    for (size_t i = 0; i < sizeof confs / sizeof confs[0]; i++)
        for (size_t f = 0; f < 5; f++) deform_case(&r, fronts[f], MRT_DTYPE_FLOAT, &confs[i]);
    for (size_t i = 0; i < sizeof confs / sizeof confs[0]; i++) {
        deform_case(&r, F_ONNX, MRT_DTYPE_DOUBLE, &confs[i]);
        deform_case(&r, F_TORCHVISION, i % 2 ? MRT_DTYPE_FLOAT16 : MRT_DTYPE_BFLOAT16, &confs[i]);
    }
}
