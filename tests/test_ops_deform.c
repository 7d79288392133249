/* Tests: deformable convolution through every front-end (ONNX DeformConv, mmcv/mmdeploy MMCV(Modulated)-
 * DeformConv2d, custom/torchvision deform_conv2d) against the naive float64 reference and against
 * torchvision fixtures (models/fixtures/deform, made by models/scripts/make_deform_fixtures.py), their error
 * messages, and custom::Roll against a naive torch.roll. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "loader/npy.h"
#include "ref/deform_ref.h"

/* ------------------------------------------------------------------ deformable convolution: set-up */

typedef enum front {
    F_ONNX19,
    F_ONNX22,
    F_MMCV_MOD,
    F_MMDEPLOY_MOD,
    F_MMCV_V1,
    F_MMDEPLOY_V1,
    F_TV_LIST,       /* torchvision::deform_conv2d, list attributes */
    F_CUSTOM_SCALAR, /* custom::deform_conv2d, torchvision's scalar attribute spelling */
    F_CUSTOM_LIST,
    F_TV_INFERRED,   /* no group attributes: derived from the shapes as torchvision's Python does */
    F_COUNT
} front;

static const char *const front_names[F_COUNT] = {
    "DeformConv-19", "DeformConv-22", "mmcv::MMCVModulatedDeformConv2d", "mmdeploy::MMCVModulatedDeformConv2d",
    "mmcv::MMCVDeformConv2d", "mmdeploy::MMCVDeformConv2d", "torchvision::deform_conv2d (lists)",
    "custom::deform_conv2d (scalars)", "custom::deform_conv2d (lists)", "torchvision::deform_conv2d (inferred groups)",
};

typedef struct dconf {
    int64_t n, c, h, w, oc, kh, kw;
    int64_t stride[2], pads[4], dil[2]; /* pads: top, left, bottom, right */
    int64_t groups, og;
    bool mask, bias;
} dconf;

typedef struct operands {
    mrt_tensor x, w, off, mask, bias; /* mask/bias data NULL when absent */
} operands;

static int64_t conf_oh(const dconf *d)
{
    return deform_ref_out_size(d->h, d->pads[0], d->pads[2], d->kh, d->stride[0], d->dil[0]);
}
static int64_t conf_ow(const dconf *d)
{
    return deform_ref_out_size(d->w, d->pads[1], d->pads[3], d->kw, d->stride[1], d->dil[1]);
}

static bool symmetric(const dconf *d) { return d->pads[0] == d->pads[2] && d->pads[1] == d->pads[3]; }

static bool front_fits(front f, const dconf *d)
{
    switch (f) {
    case F_ONNX19:
    case F_ONNX22:
        return true;
    case F_MMCV_MOD:
    case F_MMDEPLOY_MOD:
        return d->mask;
    case F_MMCV_V1:
    case F_MMDEPLOY_V1:
        return !d->mask && !d->bias;
    default:
        return symmetric(d);
    }
}

static void release_operands(operands *o)
{
    mrt_tensor_release(&o->x);
    mrt_tensor_release(&o->w);
    mrt_tensor_release(&o->off);
    mrt_tensor_release(&o->mask);
    mrt_tensor_release(&o->bias);
}

static operands random_operands(th_rng *r, mrt_dtype dt, const dconf *d, double off_scale)
{
    operands o;
    memset(&o, 0, sizeof o);
    int64_t kk = d->kh * d->kw, oh = conf_oh(d), ow = conf_ow(d);
    o.x = th_rand(r, dt, 4, (int64_t[]){d->n, d->c, d->h, d->w}, -2, 2);
    o.w = th_rand(r, dt, 4, (int64_t[]){d->oc, d->c / d->groups, d->kh, d->kw}, -1, 1);
    o.off = th_rand(r, dt, 4, (int64_t[]){d->n, 2 * d->og * kk, oh, ow}, -off_scale, off_scale);
    if (d->mask) o.mask = th_rand(r, dt, 4, (int64_t[]){d->n, d->og * kk, oh, ow}, 0, 1);
    if (d->bias) o.bias = th_rand(r, dt, 1, &d->oc, -1, 1);
    return o;
}

/* The reference on the operands' exact values (as the kernel sees them). */
static double *reference(const dconf *d, const operands *o)
{
    double *x = th_to_f64(&o->x), *w = th_to_f64(&o->w), *off = th_to_f64(&o->off);
    double *mask = d->mask ? th_to_f64(&o->mask) : NULL, *bias = d->bias ? th_to_f64(&o->bias) : NULL;
    int64_t oh = conf_oh(d), ow = conf_ow(d);
    double *y = malloc((size_t)(d->n * d->oc * oh * ow + 1) * sizeof *y);
    deform_ref_args a = {
        .n = d->n, .c = d->c, .h = d->h, .w = d->w, .oc = d->oc, .kh = d->kh, .kw = d->kw, .oh = oh, .ow = ow,
        .groups = d->groups, .offset_groups = d->og, .stride = {d->stride[0], d->stride[1]},
        .pad = {d->pads[0], d->pads[1]}, .dilation = {d->dil[0], d->dil[1]}, .x = x, .weight = w, .offset = off,
        .mask = mask, .bias = bias,
    };
    deform_ref(&a, y);
    free(x);
    free(w);
    free(off);
    free(mask);
    free(bias);
    return y;
}

/* Builds the node of front-end f for configuration d and runs it. Weights (and bias) are initializers
   when const_w. */
static mrt_status run_front(front f, const dconf *d, const operands *o, bool const_w, mrt_tensor *y)
{
    th_case *c = NULL;
    bool sym = symmetric(d);
    const int64_t pad2[2] = {d->pads[0], d->pads[1]};
    void (*in_w)(th_case *, const mrt_tensor *) = const_w ? th_input_const : th_input;
    switch (f) {
    case F_ONNX19:
    case F_ONNX22:
        c = th_begin("DeformConv", "", f == F_ONNX19 ? 19 : 22);
        th_input(c, &o->x);
        in_w(c, &o->w);
        th_input(c, &o->off);
        if (d->bias)
            in_w(c, &o->bias);
        else if (d->mask)
            th_input_absent(c);
        if (d->mask) th_input(c, &o->mask);
        th_attr_ints(c, "strides", 2, d->stride);
        th_attr_ints(c, "pads", 4, d->pads);
        th_attr_ints(c, "dilations", 2, d->dil);
        th_attr_ints(c, "kernel_shape", 2, (const int64_t[]){d->kh, d->kw});
        th_attr_int(c, "group", d->groups);
        th_attr_int(c, "offset_group", d->og);
        break;
    case F_MMCV_MOD:
    case F_MMDEPLOY_MOD:
    case F_MMCV_V1:
    case F_MMDEPLOY_V1: {
        bool mod = f == F_MMCV_MOD || f == F_MMDEPLOY_MOD;
        bool mmcv = f == F_MMCV_MOD || f == F_MMCV_V1;
        c = th_begin(mod ? "MMCVModulatedDeformConv2d" : "MMCVDeformConv2d", mmcv ? "mmcv" : "mmdeploy", 1);
        th_input(c, &o->x);
        th_input(c, &o->off);
        if (mod) th_input(c, &o->mask);
        in_w(c, &o->w);
        if (mod && d->bias) in_w(c, &o->bias);
        th_attr_ints(c, "stride", 2, d->stride);
        th_attr_ints(c, "padding", sym ? 2 : 4, sym ? pad2 : d->pads);
        th_attr_ints(c, "dilation", 2, d->dil);
        th_attr_int(c, "groups", d->groups);
        /* mmcv's older exports say deformable_groups */
        th_attr_int(c, mmcv ? "deform_groups" : "deformable_groups", d->og);
        th_attr_int(c, "im2col_step", 64);
        break;
    }
    default:
        c = th_begin("deform_conv2d", f == F_TV_LIST || f == F_TV_INFERRED ? "torchvision" : "custom", 1);
        th_input(c, &o->x);
        in_w(c, &o->w);
        th_input(c, &o->off);
        if (d->mask)
            th_input(c, &o->mask);
        else if (d->bias)
            th_input_absent(c);
        if (d->bias) in_w(c, &o->bias);
        if (f == F_CUSTOM_SCALAR) {
            th_attr_int(c, "stride_h", d->stride[0]);
            th_attr_int(c, "stride_w", d->stride[1]);
            th_attr_int(c, "pad_h", d->pads[0]);
            th_attr_int(c, "pad_w", d->pads[1]);
            th_attr_int(c, "dil_h", d->dil[0]);
            th_attr_int(c, "dil_w", d->dil[1]);
            th_attr_int(c, "n_weight_grps", d->groups);
            th_attr_int(c, "n_offset_grps", d->og);
        } else {
            th_attr_ints(c, "stride", 2, d->stride);
            th_attr_ints(c, "padding", 2, pad2);
            th_attr_ints(c, "dilation", 2, d->dil);
            if (f != F_TV_INFERRED) {
                th_attr_int(c, "groups", d->groups);
                th_attr_int(c, "offset_groups", d->og);
            }
        }
        th_attr_int(c, "use_mask", d->mask);
        break;
    }
    mrt_status st = th_run(c, 1, y);
    th_free(c);
    return st;
}

static dconf random_conf(th_rng *r)
{
    static const int64_t groups[] = {1, 1, 2, 3};
    for (;;) {
        dconf d;
        memset(&d, 0, sizeof d);
        d.n = th_rng_int(r, 1, 2);
        d.groups = groups[th_rng_int(r, 0, 3)];
        d.og = th_rng_int(r, 1, 2);
        d.c = d.groups * d.og * th_rng_int(r, 1, 2);
        d.oc = d.groups * th_rng_int(r, 1, 3);
        d.kh = th_rng_int(r, 1, 3);
        d.kw = th_rng_int(r, 1, 3);
        d.h = th_rng_int(r, 1, 7);
        d.w = th_rng_int(r, 1, 7);
        for (int i = 0; i < 2; i++) {
            d.stride[i] = th_rng_int(r, 1, 2);
            d.dil[i] = th_rng_int(r, 1, 2);
        }
        bool asym = th_rng_int(r, 0, 3) == 0;
        for (int i = 0; i < 2; i++) {
            d.pads[i] = th_rng_int(r, 0, 2);
            d.pads[i + 2] = asym ? th_rng_int(r, 0, 2) : d.pads[i];
        }
        d.mask = th_rng_int(r, 0, 1);
        d.bias = th_rng_int(r, 0, 1);
        if (conf_oh(&d) > 0 && conf_ow(&d) > 0) return d;
    }
}

static void describe_conf(const dconf *d, char *buf, size_t len)
{
    snprintf(buf, len,
             "N=%lld C=%lld H=%lld W=%lld OC=%lld k=%lldx%lld stride=%lld,%lld pads=%lld,%lld,%lld,%lld dil=%lld,%lld "
             "groups=%lld og=%lld mask=%d bias=%d",
             (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->oc, (long long)d->kh,
             (long long)d->kw, (long long)d->stride[0], (long long)d->stride[1], (long long)d->pads[0],
             (long long)d->pads[1], (long long)d->pads[2], (long long)d->pads[3], (long long)d->dil[0],
             (long long)d->dil[1], (long long)d->groups, (long long)d->og, d->mask, d->bias);
}

static tol tol_for(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_DOUBLE:
        return (tol){1e-24, 1e-12, 1e-12};
    case MRT_DTYPE_FLOAT16:
        return (tol){1e-5, 2e-2, 2e-3};
    case MRT_DTYPE_BFLOAT16:
        return (tol){1e-3, 1e-1, 1.6e-2};
    default:
        return (tol){1e-10, 2e-5, 1e-5};
    }
}

/* Every fitting front-end on `rounds` random configurations in dtype dt. */
static void random_rounds(const char *name, mrt_dtype dt, int rounds, const front *fronts, int n_fronts)
{
    th_rng r;
    th_rng_init(&r, th_seed(name));
    tol t = tol_for(dt);
    int runs = 0;
    for (int round = 0; round < rounds; round++) {
        dconf d = random_conf(&r);
        double scale = th_rng_int(&r, 0, 4) == 0 ? 6.0 : 2.5;
        operands o = random_operands(&r, dt, &d, scale);
        double *ref = reference(&d, &o);
        int64_t yshape[4] = {d.n, d.oc, conf_oh(&d), conf_ow(&d)};
        char desc[512];
        describe_conf(&d, desc, sizeof desc);
        for (int k = 0; k < n_fronts; k++) {
            front f = fronts[k];
            if (!front_fits(f, &d)) continue;
            mrt_tensor y;
            mrt_status st = run_front(f, &d, &o, round % 2 == 1, &y);
            cr_assert_eq(st, MRT_STATUS_OK, "%s, %s: %s", front_names[f], desc, mrt_last_error());
            cr_assert_eq(y.dtype, dt, "%s: output dtype %s", front_names[f], mrt_dtype_name(y.dtype));
            char why[512];
            cr_assert(th_check_f64(&y, ref, 4, yshape, t.nmse, t.abs, t.rel, why, sizeof why), "%s %s, %s: %s",
                      front_names[f], mrt_dtype_name(dt), desc, why);
            mrt_tensor_release(&y);
            runs++;
        }
        free(ref);
        release_operands(&o);
    }
    cr_assert_gt(runs, rounds, "too few front-end runs (%d)", runs);
}

static const front all_fronts[] = {F_ONNX19,     F_ONNX22,        F_MMCV_MOD,    F_MMDEPLOY_MOD, F_MMCV_V1,
                                   F_MMDEPLOY_V1, F_TV_LIST, F_CUSTOM_SCALAR, F_CUSTOM_LIST, F_TV_INFERRED};
#define N_ALL_FRONTS ((int)(sizeof all_fronts / sizeof all_fronts[0]))

Test(deform_conv, every_front_end_float_vs_reference)
{
    random_rounds("deform_conv.every_front_end_float_vs_reference", MRT_DTYPE_FLOAT, 60, all_fronts, N_ALL_FRONTS);
}

Test(deform_conv, every_front_end_double_vs_reference)
{
    random_rounds("deform_conv.every_front_end_double_vs_reference", MRT_DTYPE_DOUBLE, 40, all_fronts,
                  N_ALL_FRONTS);
}

Test(deform_conv, half_types_vs_reference)
{
    const front fronts[] = {F_ONNX19, F_ONNX22, F_MMCV_MOD, F_CUSTOM_LIST};
    random_rounds("deform_conv.half_types_vs_reference.f16", MRT_DTYPE_FLOAT16, 15, fronts, 4);
    random_rounds("deform_conv.half_types_vs_reference.bf16", MRT_DTYPE_BFLOAT16, 15, fronts, 4);
}

/* A bigger image so that the kernel's column blocks and BLAS paths see realistic sizes. */
Test(deform_conv, larger_case_vs_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("deform_conv.larger_case_vs_reference"));
    dconf d = {.n = 2, .c = 8, .h = 19, .w = 23, .oc = 6, .kh = 3, .kw = 3, .stride = {1, 2}, .pads = {1, 1, 1, 1},
               .dil = {1, 1}, .groups = 2, .og = 4, .mask = true, .bias = true};
    operands o = random_operands(&r, MRT_DTYPE_FLOAT, &d, 3.0);
    double *ref = reference(&d, &o);
    int64_t yshape[4] = {d.n, d.oc, conf_oh(&d), conf_ow(&d)};
    mrt_tensor y;
    cr_assert_eq(run_front(F_MMCV_MOD, &d, &o, true, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[512];
    cr_assert(th_check_f64(&y, ref, 4, yshape, 1e-10, 3e-5, 1e-5, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    free(ref);
    release_operands(&o);
}

/* Channel counts past 16: the AVX-512 float path samples up to 16 channels of one offset group at a time
   (ops_cpu/deform_conv_typed.h), so chunks of 16, a rest, and offset groups that end inside a chunk; planes and
   rows not a multiple of 16. Against the reference, and a NaN or infinite offset must count as a position outside
   the image, bit for bit (the same run with those offsets replaced by 1e9). */
Test(deform_conv, many_channels_vs_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("deform_conv.many_channels_vs_reference"));
    const dconf confs[] = {
        {.n = 1, .c = 40, .h = 13, .w = 21, .oc = 7, .kh = 3, .kw = 3, .stride = {1, 1}, .pads = {1, 1, 1, 1},
         .dil = {1, 1}, .groups = 1, .og = 1, .mask = true, .bias = true},
        {.n = 2, .c = 40, .h = 11, .w = 9, .oc = 6, .kh = 3, .kw = 3, .stride = {2, 1}, .pads = {2, 1, 2, 1},
         .dil = {2, 1}, .groups = 2, .og = 5, .mask = true, .bias = false},
        {.n = 1, .c = 34, .h = 6, .w = 19, .oc = 5, .kh = 2, .kw = 3, .stride = {1, 2}, .pads = {0, 1, 1, 0},
         .dil = {1, 1}, .groups = 1, .og = 2, .mask = false, .bias = true},
    };
    for (size_t i = 0; i < sizeof confs / sizeof confs[0]; i++) {
        const dconf *d = &confs[i];
        char desc[512];
        describe_conf(d, desc, sizeof desc);
        operands o = random_operands(&r, MRT_DTYPE_FLOAT, d, 4.0);
        double *ref = reference(d, &o);
        int64_t yshape[4] = {d->n, d->oc, conf_oh(d), conf_ow(d)};
        mrt_tensor y, y_nan, y_far;
        cr_assert_eq(run_front(F_ONNX22, d, &o, true, &y), MRT_STATUS_OK, "%s: %s", desc, mrt_last_error());
        char why[512];
        cr_assert(th_check_f64(&y, ref, 4, yshape, 1e-10, 3e-5, 1e-5, why, sizeof why), "%s: %s", desc, why);
        float *off = o.off.data;
        int64_t n_off = mrt_tensor_numel(&o.off);
        const float odd[3] = {NAN, INFINITY, -INFINITY};
        for (int64_t k = 0; k < n_off; k += 7) off[k] = odd[k % 3];
        cr_assert_eq(run_front(F_ONNX22, d, &o, true, &y_nan), MRT_STATUS_OK, "%s: %s", desc, mrt_last_error());
        for (int64_t k = 0; k < n_off; k += 7) off[k] = 1e9f;
        cr_assert_eq(run_front(F_ONNX22, d, &o, true, &y_far), MRT_STATUS_OK, "%s: %s", desc, mrt_last_error());
        cr_assert(memcmp(y_nan.data, y_far.data, (size_t)mrt_tensor_numel(&y_far) * sizeof(float)) == 0,
                  "%s: a NaN or infinite offset did not sample as a position outside the image", desc);
        mrt_tensor_release(&y);
        mrt_tensor_release(&y_nan);
        mrt_tensor_release(&y_far);
        free(ref);
        release_operands(&o);
    }
}

/* The float64 oracle mode widens a float model and must match the reference to double precision. */
Test(deform_conv, fp64_oracle_mode)
{
    th_rng r;
    th_rng_init(&r, th_seed("deform_conv.fp64_oracle_mode"));
    dconf d = {.n = 1, .c = 4, .h = 6, .w = 5, .oc = 4, .kh = 3, .kw = 3, .stride = {1, 1}, .pads = {1, 1, 1, 1},
               .dil = {1, 1}, .groups = 2, .og = 2, .mask = true, .bias = true};
    operands o = random_operands(&r, MRT_DTYPE_FLOAT, &d, 2.0);
    double *ref = reference(&d, &o);
    int64_t yshape[4] = {d.n, d.oc, conf_oh(&d), conf_ow(&d)};
    th_case *c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input_const(c, &o.w);
    th_input(c, &o.off);
    th_input_const(c, &o.bias);
    th_input(c, &o.mask);
    th_attr_ints(c, "pads", 4, d.pads);
    th_attr_int(c, "group", 2);
    th_attr_int(c, "offset_group", 2);
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    mrt_tensor y;
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[512];
    bool dbl = y.dtype == MRT_DTYPE_DOUBLE;
    cr_assert(th_check_f64(&y, ref, 4, yshape, dbl ? 1e-24 : 1e-10, dbl ? 1e-12 : 2e-5, dbl ? 1e-12 : 1e-5, why,
                           sizeof why),
              "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    free(ref);
    release_operands(&o);
}

/* Empty batch, and an input with no rows (every sample falls outside: the output is the bias). */
Test(deform_conv, empty_inputs)
{
    th_rng r;
    th_rng_init(&r, th_seed("deform_conv.empty_inputs"));
    dconf e1 = {.n = 0, .c = 2, .h = 4, .w = 4, .oc = 3, .kh = 3, .kw = 3, .stride = {1, 1}, .pads = {1, 1, 1, 1},
                .dil = {1, 1}, .groups = 1, .og = 1, .mask = true, .bias = true};
    dconf e2 = {.n = 1, .c = 2, .h = 0, .w = 3, .oc = 3, .kh = 1, .kw = 1, .stride = {1, 1}, .pads = {1, 0, 1, 0},
                .dil = {1, 1}, .groups = 1, .og = 1, .mask = false, .bias = true};
    const dconf *cases[] = {&e1, &e2};
    for (int i = 0; i < 2; i++) {
        const dconf *d = cases[i];
        operands o = random_operands(&r, MRT_DTYPE_FLOAT, d, 2.0);
        double *ref = reference(d, &o);
        int64_t yshape[4] = {d->n, d->oc, conf_oh(d), conf_ow(d)};
        mrt_tensor y;
        cr_assert_eq(run_front(F_ONNX22, d, &o, false, &y), MRT_STATUS_OK, "case %d: %s", i, mrt_last_error());
        char why[512];
        cr_assert(th_check_f64(&y, ref, 4, yshape, 1e-12, 1e-6, 0, why, sizeof why), "case %d: %s", i, why);
        mrt_tensor_release(&y);
        free(ref);
        release_operands(&o);
    }
}

/* ------------------------------------------------------------------ torchvision fixtures */

static bool load_npy(const char *dir, const char *name, mrt_tensor *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        memset(t, 0, sizeof *t);
        return false;
    }
    fclose(f);
    mrt_status st = mrt_npy_read_file(path, t);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", path, mrt_last_error());
    return true;
}

static mrt_tensor as_dtype(const mrt_tensor *t, mrt_dtype dt)
{
    double *v = th_to_f64(t);
    mrt_tensor out = th_from_f64(dt, t->rank, t->shape, v);
    free(v);
    return out;
}

Test(deform_conv, torchvision_fixtures)
{
    const char *root = MRT_SOURCE_DIR "/models/fixtures/deform";
    char list[1024];
    snprintf(list, sizeof list, "%s/cases.txt", root);
    FILE *cf = fopen(list, "r");
    cr_assert_not_null(cf, "missing %s (run models/scripts/make_deform_fixtures.py)", list);
    char name[128];
    int n_cases = 0;
    while (fscanf(cf, "%127s", name) == 1) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, name);
        mrt_tensor params, x, w, off, mask, bias, y32, y64;
        cr_assert(load_npy(dir, "params", &params), "%s: no params.npy", name);
        cr_assert(load_npy(dir, "x", &x) && load_npy(dir, "w", &w) && load_npy(dir, "offset", &off), "%s", name);
        cr_assert(load_npy(dir, "y", &y32) && load_npy(dir, "y64", &y64), "%s", name);
        const int64_t *pv = params.data;
        dconf d = {.n = x.shape[0], .c = x.shape[1], .h = x.shape[2], .w = x.shape[3], .oc = w.shape[0],
                   .kh = w.shape[2], .kw = w.shape[3], .stride = {pv[0], pv[1]},
                   .pads = {pv[2], pv[3], pv[4], pv[5]}, .dil = {pv[6], pv[7]}, .groups = pv[8], .og = pv[9],
                   .mask = pv[10] != 0, .bias = pv[11] != 0};
        cr_assert_eq(load_npy(dir, "mask", &mask), d.mask, "%s: mask.npy vs params", name);
        cr_assert_eq(load_npy(dir, "bias", &bias), d.bias, "%s: bias.npy vs params", name);
        cr_assert(conf_oh(&d) == y32.shape[2] && conf_ow(&d) == y32.shape[3], "%s: output size", name);
        double *e32 = th_to_f64(&y32), *e64 = th_to_f64(&y64);
        char why[512];

        /* float32: every front-end that can express the case, against torchvision's float32 result */
        operands o = {x, w, off, mask, bias};
        for (int f = 0; f < F_COUNT; f++) {
            if (!front_fits((front)f, &d)) continue;
            mrt_tensor y;
            cr_assert_eq(run_front((front)f, &d, &o, f % 2 == 0, &y), MRT_STATUS_OK, "%s, %s: %s", name,
                         front_names[f], mrt_last_error());
            cr_assert(th_check_f64(&y, e32, y32.rank, y32.shape, 1e-10, 3e-5, 1e-5, why, sizeof why),
                      "%s, %s float32 vs torchvision: %s", name, front_names[f], why);
            mrt_tensor_release(&y);
        }

        /* float64: torchvision in double; also validates the naive reference itself */
        operands o64 = {as_dtype(&x, MRT_DTYPE_DOUBLE), as_dtype(&w, MRT_DTYPE_DOUBLE),
                        as_dtype(&off, MRT_DTYPE_DOUBLE), {0}, {0}};
        if (d.mask) o64.mask = as_dtype(&mask, MRT_DTYPE_DOUBLE);
        if (d.bias) o64.bias = as_dtype(&bias, MRT_DTYPE_DOUBLE);
        double *ref = reference(&d, &o64);
        mrt_tensor yref = th_from_f64(MRT_DTYPE_DOUBLE, y64.rank, y64.shape, ref);
        cr_assert(th_check_f64(&yref, e64, y64.rank, y64.shape, 1e-24, 1e-12, 1e-12, why, sizeof why),
                  "%s: naive reference vs torchvision float64: %s", name, why);
        for (int f = 0; f < F_COUNT; f++) {
            if (!front_fits((front)f, &d)) continue;
            mrt_tensor y;
            cr_assert_eq(run_front((front)f, &d, &o64, f % 2 == 1, &y), MRT_STATUS_OK, "%s, %s: %s", name,
                         front_names[f], mrt_last_error());
            cr_assert(th_check_f64(&y, e64, y64.rank, y64.shape, 1e-24, 1e-12, 1e-12, why, sizeof why),
                      "%s, %s float64 vs torchvision: %s", name, front_names[f], why);
            mrt_tensor_release(&y);
        }
        mrt_tensor_release(&yref);
        free(ref);
        release_operands(&o64);
        free(e32);
        free(e64);
        release_operands(&o);
        mrt_tensor_release(&params);
        mrt_tensor_release(&y32);
        mrt_tensor_release(&y64);
        n_cases++;
    }
    fclose(cf);
    cr_assert_geq(n_cases, 10, "only %d fixture cases", n_cases);
}

/* ------------------------------------------------------------------ deformable convolution: errors */

/* A valid configuration's operands (float). */
static operands small_operands(dconf *d)
{
    th_rng r;
    th_rng_init(&r, 7);
    *d = (dconf){.n = 1, .c = 4, .h = 5, .w = 5, .oc = 2, .kh = 3, .kw = 3, .stride = {1, 1}, .pads = {1, 1, 1, 1},
                 .dil = {1, 1}, .groups = 1, .og = 1, .mask = true, .bias = true};
    return random_operands(&r, MRT_DTYPE_FLOAT, d, 1.0);
}

static void expect_error(th_case *c, mrt_status want, const char *const *needles)
{
    mrt_tensor y;
    mrt_status st = th_run(c, 1, &y);
    const char *msg = mrt_last_error();
    cr_assert_eq(st, want, "status %s, expected %s: %s", mrt_status_name(st), mrt_status_name(want), msg);
    cr_log_info("%s", msg);
    for (int i = 0; needles[i]; i++) cr_assert(strstr(msg, needles[i]), "message lacks \"%s\": %s", needles[i], msg);
    th_free(c);
}

Test(deform_conv_errors, weightless_export_is_refused)
{
    dconf d;
    operands o = small_operands(&d);
    th_case *c = th_begin("deform_conv2d", "custom", 1);
    th_input(c, &o.x);
    th_input(c, &o.off);
    expect_error(c, MRT_STATUS_INVALID_MODEL,
                 (const char *[]){"(input, offset)", "weights", "cannot be computed",
                                  "g.op(\"custom::deform_conv2d\", input, weight, offset, mask, bias, stride_i=", NULL});
    release_operands(&o);
}

Test(deform_conv_errors, swapped_operands_are_named)
{
    dconf d;
    operands o = small_operands(&d);
    /* mmcv order is (input, offset, mask, weight): mask and offset exchanged */
    th_case *c = th_begin("MMCVModulatedDeformConv2d", "mmcv", 1);
    th_input(c, &o.x);
    th_input(c, &o.mask);
    th_input(c, &o.off);
    th_input(c, &o.w);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"operands look swapped", "'offset'", "'mask'", NULL});

    /* torchvision order is (input, weight, offset): given in mmcv's (input, offset, weight) order */
    c = th_begin("deform_conv2d", "torchvision", 1);
    th_input(c, &o.x);
    th_input(c, &o.off);
    th_input(c, &o.w);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    expect_error(c, MRT_STATUS_INVALID_MODEL,
                 (const char *[]){"operands look swapped", "'weight'", "'offset'", "(input, weight, offset, mask, bias)",
                                  NULL});

    /* ONNX: W and offset exchanged */
    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.off);
    th_input(c, &o.w);
    th_attr_ints(c, "pads", 4, d.pads);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"operands look swapped", "'W'", "'offset'", NULL});
    release_operands(&o);
}

Test(deform_conv_errors, channel_mismatches)
{
    dconf d;
    operands o = small_operands(&d);
    th_rng r;
    th_rng_init(&r, 11);
    mrt_tensor off16 = th_rand(&r, MRT_DTYPE_FLOAT, 4, (const int64_t[]){1, 16, 5, 5}, -1, 1);
    mrt_tensor mask8 = th_rand(&r, MRT_DTYPE_FLOAT, 4, (const int64_t[]){1, 8, 5, 5}, 0, 1);
    mrt_tensor bias3 = th_rand(&r, MRT_DTYPE_FLOAT, 1, (const int64_t[]){3}, 0, 1);
    mrt_tensor w3 = th_rand(&r, MRT_DTYPE_FLOAT, 4, (const int64_t[]){2, 3, 3, 3}, 0, 1);
    mrt_tensor off_small = th_rand(&r, MRT_DTYPE_FLOAT, 4, (const int64_t[]){1, 18, 4, 5}, 0, 1);

    th_case *c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &off16);
    th_attr_ints(c, "pads", 4, d.pads);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'offset'", "16 channels", "2*offset_group*kh*kw", NULL});

    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_input(c, &o.bias);
    th_input(c, &mask8);
    th_attr_ints(c, "pads", 4, d.pads);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'mask'", "[1,8,5,5]", "offset_group*kh*kw", NULL});

    c = th_begin("MMCVModulatedDeformConv2d", "mmdeploy", 1);
    th_input(c, &o.x);
    th_input(c, &o.off);
    th_input(c, &o.mask);
    th_input(c, &o.w);
    th_input(c, &bias3);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'bias'", "[3]", "expected [2]", NULL});

    c = th_begin("deform_conv2d", "custom", 1);
    th_input(c, &o.x);
    th_input(c, &w3);
    th_input(c, &o.off);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    th_attr_int(c, "groups", 1);
    th_attr_int(c, "offset_groups", 1);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'weight'", "input channels per group", NULL});

    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_attr_ints(c, "pads", 4, d.pads);
    th_attr_int(c, "offset_group", 3);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"offset_group=3", "does not divide", NULL});

    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &off_small);
    th_attr_ints(c, "pads", 4, d.pads);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'offset'", "output size", NULL});

    /* the dilated kernel does not fit: no output */
    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_attr_ints(c, "dilations", 2, (const int64_t[]){3, 3});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"output would be empty", NULL});

    mrt_tensor_release(&off16);
    mrt_tensor_release(&mask8);
    mrt_tensor_release(&bias3);
    mrt_tensor_release(&w3);
    mrt_tensor_release(&off_small);
    release_operands(&o);
}

Test(deform_conv_errors, unsupported_and_bad_attributes)
{
    dconf d;
    operands o = small_operands(&d);
    th_rng r;
    th_rng_init(&r, 12);

    /* 3-D DeformConv is valid ONNX that minirt does not run */
    mrt_tensor x5 = th_rand(&r, MRT_DTYPE_FLOAT, 5, (const int64_t[]){1, 2, 4, 4, 4}, -1, 1);
    mrt_tensor w5 = th_rand(&r, MRT_DTYPE_FLOAT, 5, (const int64_t[]){2, 2, 1, 1, 1}, -1, 1);
    mrt_tensor off5 = th_rand(&r, MRT_DTYPE_FLOAT, 5, (const int64_t[]){1, 3, 4, 4, 4}, -1, 1);
    th_case *c = th_begin("DeformConv", "", 22);
    th_input(c, &x5);
    th_input(c, &w5);
    th_input(c, &off5);
    expect_error(c, MRT_STATUS_NOT_IMPLEMENTED, (const char *[]){"only 2-D", NULL});

    mrt_tensor xi = th_rand(&r, MRT_DTYPE_INT32, 4, (const int64_t[]){1, 4, 5, 5}, -1, 1);
    c = th_begin("DeformConv", "", 22);
    th_input(c, &xi);
    th_input(c, &o.w);
    th_input(c, &o.off);
    expect_error(c, MRT_STATUS_NOT_IMPLEMENTED, (const char *[]){"int32", NULL});

    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_attr_ints(c, "strides", 2, (const int64_t[]){0, 1});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'strides'", NULL});

    c = th_begin("DeformConv", "", 22);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_attr_ints(c, "pads", 2, (const int64_t[]){1, 1});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'pads'", "[top, left, bottom, right]", NULL});

    c = th_begin("deform_conv2d", "custom", 1);
    th_input(c, &o.x);
    th_input(c, &o.w);
    th_input(c, &o.off);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    th_attr_int(c, "use_mask", 1);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"use_mask=1", NULL});

    mrt_tensor_release(&x5);
    mrt_tensor_release(&w5);
    mrt_tensor_release(&off5);
    mrt_tensor_release(&xi);
    release_operands(&o);
}

/* use_mask=0 ignores torchvision's zero placeholder mask. */
Test(deform_conv, use_mask_zero_ignores_placeholder)
{
    dconf d;
    operands o = small_operands(&d);
    th_rng r;
    th_rng_init(&r, 13);
    mrt_tensor zeros = th_rand(&r, MRT_DTYPE_FLOAT, 4, (const int64_t[]){1, 9, 5, 5}, 0, 0);
    d.mask = false;
    double *ref = reference(&d, &o);
    th_case *c = th_begin("deform_conv2d", "custom", 1);
    th_input(c, &o.x);
    th_input_const(c, &o.w);
    th_input(c, &o.off);
    th_input(c, &zeros);
    th_input_const(c, &o.bias);
    th_attr_ints(c, "padding", 2, (const int64_t[]){1, 1});
    th_attr_int(c, "use_mask", 0);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    char why[512];
    cr_assert(th_check_f64(&y, ref, 4, (const int64_t[]){1, 2, 5, 5}, 1e-10, 2e-5, 1e-5, why, sizeof why), "%s", why);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&zeros);
    free(ref);
    release_operands(&o);
}

/* ------------------------------------------------------------------ Roll */

static mrt_status run_roll(const mrt_tensor *x, int n_shifts, const int64_t *shifts, int n_dims,
                           const int64_t *dims, bool with_dims, bool const_x, mrt_tensor *y)
{
    th_case *c = th_begin("Roll", "custom", 1);
    if (const_x)
        th_input_const(c, x);
    else
        th_input(c, x);
    th_attr_ints(c, "shifts", n_shifts, shifts);
    if (with_dims) th_attr_ints(c, "dims", n_dims, dims);
    mrt_status st = th_run(c, 1, y);
    th_free(c);
    return st;
}

Test(roll, random_shapes_shifts_dims_dtypes)
{
    th_rng r;
    th_rng_init(&r, th_seed("roll.random_shapes_shifts_dims_dtypes"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT8, MRT_DTYPE_INT16,
                                    MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_BOOL, MRT_DTYPE_FLOAT16};
    for (int round = 0; round < 300; round++) {
        mrt_dtype dt = dts[th_rng_int(&r, 0, 7)];
        int rank = (int)th_rng_int(&r, 0, 5);
        int64_t shape[MRT_MAX_RANK];
        for (int d = 0; d < rank; d++) shape[d] = th_rng_int(&r, 0, 9) == 0 ? 0 : th_rng_int(&r, 1, 5);
        bool with_dims = rank > 0 && th_rng_int(&r, 0, 4) != 0;
        int n = with_dims ? (int)th_rng_int(&r, 1, 4) : 1;
        int64_t shifts[4], dims[4];
        for (int k = 0; k < n; k++) {
            shifts[k] = th_rng_int(&r, -25, 25);
            dims[k] = with_dims ? th_rng_int(&r, -rank, rank - 1) : 0;
        }
        mrt_tensor x = th_rand(&r, dt, rank, shape, dt == MRT_DTYPE_BOOL ? 0 : -100, dt == MRT_DTYPE_BOOL ? 1 : 100);
        mrt_tensor want;
        cr_assert_eq(mrt_tensor_alloc(&want, dt, rank, shape), MRT_STATUS_OK);
        if (mrt_tensor_numel(&x) > 0)
            roll_ref(x.data, want.data, rank, shape, mrt_dtype_bits(dt) / 8, n, shifts, with_dims ? n : 0, dims);
        mrt_tensor y;
        mrt_status st = run_roll(&x, n, shifts, n, dims, with_dims, round % 3 == 0, &y);
        char sh[128];
        mrt_shape_describe(rank, shape, sh, sizeof sh);
        cr_assert_eq(st, MRT_STATUS_OK, "round %d %s%s: %s", round, mrt_dtype_name(dt), sh, mrt_last_error());
        char why[512];
        cr_assert(th_check_tensor(&y, &want, 0, 0, 0, why, sizeof why), "round %d %s%s shift %lld dims(%d): %s", round,
                  mrt_dtype_name(dt), sh, (long long)shifts[0], with_dims ? n : 0, why);
        cr_assert_eq(memcmp(y.data, want.data, mrt_tensor_nbytes(&want)), 0, "round %d: bytes differ", round);
        mrt_tensor_release(&y);
        mrt_tensor_release(&want);
        mrt_tensor_release(&x);
    }
}

Test(roll, torch_examples)
{
    /* torch.roll(arange(6).reshape(2,3), ...) results, checked with torch 1.13 */
    double v[6] = {0, 1, 2, 3, 4, 5};
    mrt_tensor x = th_from_f64(MRT_DTYPE_INT64, 2, (const int64_t[]){2, 3}, v);
    struct {
        int n;
        int64_t shifts[2], dims[2];
        bool with_dims;
        int64_t want[6];
    } cases[] = {
        {1, {1}, {0}, false, {5, 0, 1, 2, 3, 4}},        /* flattened */
        {1, {-7}, {0}, false, {1, 2, 3, 4, 5, 0}},       /* flattened, |shift| > numel */
        {2, {1, 1}, {1, 1}, true, {1, 2, 0, 4, 5, 3}},   /* repeated dim adds up */
        {1, {1}, {-1}, true, {2, 0, 1, 5, 3, 4}},        /* negative dim */
        {2, {1, -4}, {0, 1}, true, {4, 5, 3, 1, 2, 0}},  /* two dims, negative shift beyond the size */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mrt_tensor y;
        cr_assert_eq(run_roll(&x, cases[i].n, cases[i].shifts, cases[i].n, cases[i].dims, cases[i].with_dims, false, &y),
                     MRT_STATUS_OK, "case %zu: %s", i, mrt_last_error());
        cr_assert_eq(y.rank, 2);
        for (int k = 0; k < 6; k++)
            cr_assert_eq(((int64_t *)y.data)[k], cases[i].want[k], "case %zu element %d", i, k);
        mrt_tensor_release(&y);
    }
    mrt_tensor_release(&x);
}

Test(roll, strings_and_int4)
{
    mrt_tensor s;
    cr_assert_eq(mrt_tensor_alloc(&s, MRT_DTYPE_STRING, 1, (const int64_t[]){4}), MRT_STATUS_OK);
    const char *words[4] = {"a", "bb", "ccc", "dddd"};
    for (int i = 0; i < 4; i++) ((char **)s.data)[i] = strdup(words[i]);
    mrt_tensor y;
    cr_assert_eq(run_roll(&s, 1, (const int64_t[]){-1}, 1, (const int64_t[]){0}, true, false, &y), MRT_STATUS_OK, "%s",
                 mrt_last_error());
    for (int i = 0; i < 4; i++) cr_assert_str_eq(((char **)y.data)[i], words[(i + 1) % 4]);
    mrt_tensor_release(&y);
    mrt_tensor_release(&s);

    /* int4, packed low nibble first: 5 elements over 3 bytes */
    mrt_tensor q;
    cr_assert_eq(mrt_tensor_alloc(&q, MRT_DTYPE_INT4, 1, (const int64_t[]){5}), MRT_STATUS_OK);
    for (int i = 0; i < 5; i++) mrt_store_i64(MRT_DTYPE_INT4, q.data, i, i - 2);
    cr_assert_eq(run_roll(&q, 1, (const int64_t[]){2}, 0, NULL, false, true, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 5; i++)
        cr_assert_eq(mrt_load_i64(MRT_DTYPE_INT4, y.data, i), ((i + 3) % 5) - 2, "element %d", i);
    mrt_tensor_release(&y);
    mrt_tensor_release(&q);
}

Test(roll, errors)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (const int64_t[]){2, 3}, (const double[]){0, 1, 2, 3, 4, 5});
    th_case *c = th_begin("Roll", "custom", 1);
    th_input(c, &x);
    th_attr_ints(c, "shifts", 2, (const int64_t[]){1, 2});
    th_attr_ints(c, "dims", 1, (const int64_t[]){0});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'shifts'", "'dims'", "same length", NULL});

    c = th_begin("Roll", "custom", 1);
    th_input(c, &x);
    th_attr_ints(c, "shifts", 1, (const int64_t[]){1});
    th_attr_ints(c, "dims", 1, (const int64_t[]){2});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'dims'", "out of range", NULL});

    c = th_begin("Roll", "custom", 1);
    th_input(c, &x);
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"'shifts'", "required", NULL});

    c = th_begin("Roll", "custom", 1);
    th_input(c, &x);
    th_attr_ints(c, "shifts", 2, (const int64_t[]){1, 2});
    expect_error(c, MRT_STATUS_INVALID_MODEL, (const char *[]){"no 'dims'", NULL});
    mrt_tensor_release(&x);
}
