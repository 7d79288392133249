/* CUDA Conv, ConvTranspose and ConvInteger (ops_cuda/conv.cu) against the CPU kernels (ops_cpu/conv.c): 1-D to 3-D,
 * groups (depthwise included), strides, dilations, explicit and auto pads, bias or none, 1x1 convs, output_padding and
 * output_shape, every float dtype, uint8/int8 with zero points, empty batches. Small shapes: the emulated module
 * computes a few MFLOP/s. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct conv_conf {
    int nsp;
    int64_t n, c, m, group;
    int64_t in[3], kernel[3], strides[3], pads[6], dil[3];
    const char *auto_pad;
    bool bias;
} conv_conf;

static const conv_conf confs[] = {
    {2, 2, 3, 4, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, NULL, true},
    {2, 1, 4, 6, 2, {8, 7}, {3, 2}, {2, 1}, {0, 1, 2, 0}, {1, 2}, NULL, false},
    {2, 1, 6, 6, 6, {10, 10}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, NULL, true}, /* depthwise */
    {2, 2, 5, 3, 1, {6, 5}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, NULL, true},   /* pointwise, read in place */
    {2, 1, 3, 5, 1, {9, 8}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, "SAME_UPPER", true},
    {2, 1, 2, 2, 1, {7, 7}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {2, 2}, "SAME_LOWER", false},
    {1, 2, 3, 4, 1, {19}, {5}, {2}, {2, 1}, {2}, NULL, true},
    {3, 1, 2, 4, 2, {5, 6, 4}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1, 0, 1, 1}, {1, 1, 2}, NULL, true},
    {2, 0, 3, 4, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, NULL, true},  /* empty batch */
    {2, 1, 16, 24, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, NULL, true},
};

static void conv_case(th_rng *r, const char *op, int opset, mrt_dtype dt, const conv_conf *cc, bool const_w)
{
    bool tr = !strcmp(op, "ConvTranspose");
    th_case *c = th_begin(op, "", opset);
    int64_t xs[5] = {cc->n, cc->c}, ws[5], bs[1] = {cc->m};
    ws[0] = tr ? cc->c : cc->m;
    ws[1] = tr ? cc->m / cc->group : cc->c / cc->group;
    for (int i = 0; i < cc->nsp; i++) xs[2 + i] = cc->in[i], ws[2 + i] = cc->kernel[i];
    mrt_tensor x = th_rand(r, dt, cc->nsp + 2, xs, -1, 1), w = th_rand(r, dt, cc->nsp + 2, ws, -1, 1), b = {0};
    th_input(c, &x);
    (const_w ? th_input_const : th_input)(c, &w);
    if (cc->bias) {
        b = th_rand(r, dt, 1, bs, -1, 1);
        th_input(c, &b);
    }
    th_attr_ints(c, "kernel_shape", cc->nsp, cc->kernel);
    th_attr_ints(c, "strides", cc->nsp, cc->strides);
    th_attr_ints(c, "dilations", cc->nsp, cc->dil);
    th_attr_int(c, "group", cc->group);
    if (cc->auto_pad) th_attr_string(c, "auto_pad", cc->auto_pad);
    else th_attr_ints(c, "pads", 2 * cc->nsp, cc->pads);
    char label[160];
    snprintf(label, sizeof label, "%s %s %dd group %lld%s", op, mrt_dtype_name(dt), cc->nsp, (long long)cc->group,
             cc->auto_pad ? cc->auto_pad : "");
    th_cuda_check(c, 1, 1, label);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    if (cc->bias) mrt_tensor_release(&b);
    th_free(c);
}

#define N_CONFS (sizeof confs / sizeof confs[0])

Test(cuda_conv, conv_matches_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_conv"));
    for (size_t i = 0; i < N_CONFS; i++) {
        conv_case(&r, "Conv", 22, MRT_DTYPE_FLOAT, &confs[i], i % 2 == 0);
        conv_case(&r, "Conv", 11, MRT_DTYPE_DOUBLE, &confs[i], false);
        if (i % 3 == 0) conv_case(&r, "Conv", 22, MRT_DTYPE_FLOAT16, &confs[i], true);
        if (i % 3 == 1) conv_case(&r, "Conv", 22, MRT_DTYPE_BFLOAT16, &confs[i], false);
    }
    conv_case(&r, "Conv", 1, MRT_DTYPE_FLOAT, &confs[0], true);
}

Test(cuda_conv, convtranspose_matches_cpu)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_convtranspose"));
    for (size_t i = 0; i < N_CONFS; i++) {
        if (confs[i].auto_pad) continue; /* below, with output_shape */
        conv_case(&r, "ConvTranspose", 22, MRT_DTYPE_FLOAT, &confs[i], true);
        conv_case(&r, "ConvTranspose", 11, MRT_DTYPE_DOUBLE, &confs[i], false);
        if (i % 3 == 0) conv_case(&r, "ConvTranspose", 22, MRT_DTYPE_FLOAT16, &confs[i], false);
    }
    /* output_padding, output_shape with auto_pad */
    int64_t xs[4] = {1, 2, 4, 5}, ws[4] = {2, 3, 3, 3};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    th_case *c = th_begin("ConvTranspose", "", 22);
    th_input(c, &x);
    th_input(c, &w);
    th_attr_ints(c, "strides", 2, (const int64_t[]){3, 2});
    th_attr_ints(c, "output_padding", 2, (const int64_t[]){1, 1});
    th_attr_ints(c, "pads", 4, (const int64_t[]){1, 0, 0, 1});
    th_cuda_check(c, 1, 1, "ConvTranspose output_padding");
    th_free(c);
    c = th_begin("ConvTranspose", "", 22);
    th_input(c, &x);
    th_input(c, &w);
    th_attr_ints(c, "strides", 2, (const int64_t[]){2, 2});
    th_attr_ints(c, "output_shape", 2, (const int64_t[]){10, 8});
    th_attr_string(c, "auto_pad", "SAME_UPPER");
    th_cuda_check(c, 1, 1, "ConvTranspose output_shape");
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
}

static void convinteger_case(th_rng *r, mrt_dtype dx, mrt_dtype dw, const conv_conf *cc, int zp)
{
    th_case *c = th_begin("ConvInteger", "", 10);
    int64_t xs[5] = {cc->n, cc->c}, ws[5], zs[1] = {cc->m};
    ws[0] = cc->m;
    ws[1] = cc->c / cc->group;
    for (int i = 0; i < cc->nsp; i++) xs[2 + i] = cc->in[i], ws[2 + i] = cc->kernel[i];
    double xlo = dx == MRT_DTYPE_INT8 ? -128 : 0, xhi = dx == MRT_DTYPE_INT8 ? 127 : 255;
    double wlo = dw == MRT_DTYPE_INT8 ? -128 : 0, whi = dw == MRT_DTYPE_INT8 ? 127 : 255;
    mrt_tensor x = th_rand(r, dx, cc->nsp + 2, xs, xlo, xhi), w = th_rand(r, dw, cc->nsp + 2, ws, wlo, whi);
    mrt_tensor xz = th_rand(r, dx, 0, zs, xlo, xhi), wz = th_rand(r, dw, zp == 2 ? 1 : 0, zs, wlo, whi);
    th_input(c, &x);
    th_input(c, &w);
    if (zp) {
        th_input(c, &xz);
        th_input(c, &wz);
    }
    th_attr_ints(c, "kernel_shape", cc->nsp, cc->kernel);
    th_attr_ints(c, "strides", cc->nsp, cc->strides);
    th_attr_ints(c, "dilations", cc->nsp, cc->dil);
    th_attr_int(c, "group", cc->group);
    if (cc->auto_pad) th_attr_string(c, "auto_pad", cc->auto_pad);
    else th_attr_ints(c, "pads", 2 * cc->nsp, cc->pads);
    th_cuda_check(c, 1, 1, "ConvInteger");
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&xz);
    mrt_tensor_release(&wz);
    th_free(c);
}

Test(cuda_conv, convinteger_is_exact)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda_convinteger"));
    for (size_t i = 0; i < N_CONFS; i++) {
        convinteger_case(&r, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8, &confs[i], (int)(i % 3));
        if (i % 2) convinteger_case(&r, MRT_DTYPE_INT8, MRT_DTYPE_INT8, &confs[i], 1);
    }
}
