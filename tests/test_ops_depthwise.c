/* The float32 depthwise 2-D conv kernel (ops_cpu/conv_depthwise.c), called directly: random geometries against
 * the naive float64 Conv reference (tests/ref/linear_ref.c), identical bits with 1 and 2 threads, fused
 * epilogues bit for bit equal to the unfused result followed by the same post-ops, NaN inputs, and the wide-row
 * and huge-kernel fallback. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/op.h"
#include "engine/threadpool.h"
#include "harness.h"
#include "ops_cpu/conv_depthwise.h"
#include "ops_cpu/epilogue.h"
#include "ref/linear_ref.h"

typedef struct dw_case {
    int64_t n, c, h, w, kh, kw, sh, sw, dh, dw;
    int64_t pads[4]; /* top, left, bottom, right */
    bool bias;
} dw_case;

/* The geometry as the reference resolves it, and as the kernel takes it. */
static bool dw_geom(const dw_case *dc, lr_geom *g, mrt_conv_params *p)
{
    memset(g, 0, sizeof *g);
    g->nsp = 2;
    int64_t in[2] = {dc->h, dc->w}, k[2] = {dc->kh, dc->kw}, s[2] = {dc->sh, dc->sw}, d[2] = {dc->dh, dc->dw};
    for (int i = 0; i < 2; i++) {
        g->in[i] = in[i];
        g->kernel[i] = k[i];
        g->stride[i] = s[i];
        g->dilation[i] = d[i];
    }
    memcpy(g->pads, dc->pads, sizeof dc->pads);
    g->auto_pad = "NOTSET";
    if (!lr_geom_resolve(g)) return false;
    memset(p, 0, sizeof *p);
    p->n = dc->n;
    p->c = p->m = p->group = dc->c;
    p->kernel_numel = dc->kh * dc->kw;
    p->win.nsp = 2;
    for (int i = 0; i < 2; i++) {
        p->win.in[i] = in[i];
        p->win.out[i] = g->out[i];
        p->win.kernel[i] = k[i];
        p->win.stride[i] = s[i];
        p->win.dilation[i] = d[i];
        p->win.pad_begin[i] = dc->pads[i];
        p->win.pad_end[i] = dc->pads[2 + i];
    }
    p->y_rank = 4;
    int64_t ys[4] = {dc->n, dc->c, g->out[0], g->out[1]};
    memcpy(p->y_shape, ys, sizeof ys);
    return true;
}

static mrt_threadpool *pool2(void)
{
    mrt_threadpool *tp = NULL;
    cr_assert_eq(mrt_threadpool_new(2, &tp), MRT_STATUS_OK);
    return tp;
}

/* The documented summation order (ops_cpu/conv_depthwise.c), written out: acc = bias (or 0), then
   acc = fmaf(w, x, acc) over the taps in (kh, kw) order, a padding tap reading 0. Every kernel path must give
   exactly these bits. */
static void dw_order_ref(const dw_case *dc, const lr_geom *g, const float *x, const float *w, const float *b,
                         float *y)
{
    for (int64_t nc = 0; nc < dc->n * dc->c; nc++) {
        int64_t c = nc % dc->c;
        const float *xp = x + nc * dc->h * dc->w, *wp = w + c * dc->kh * dc->kw;
        for (int64_t oh = 0; oh < g->out[0]; oh++)
            for (int64_t ow = 0; ow < g->out[1]; ow++) {
                float acc = b ? b[c] : 0.0f;
                for (int64_t kh = 0; kh < dc->kh; kh++)
                    for (int64_t kw = 0; kw < dc->kw; kw++) {
                        int64_t ih = oh * dc->sh - dc->pads[0] + kh * dc->dh;
                        int64_t iw = ow * dc->sw - dc->pads[1] + kw * dc->dw;
                        bool in = ih >= 0 && ih < dc->h && iw >= 0 && iw < dc->w;
                        acc = fmaf(wp[kh * dc->kw + kw], in ? xp[ih * dc->w + iw] : 0.0f, acc);
                    }
                *y++ = acc;
            }
    }
}

/* Runs the kernel with 1 thread (no pool) and with 2, asserts identical bits, and the bits of the documented
   order; checks against the float64 reference. nan_at >= 0 puts a NaN into x there. */
static void run_dw(th_rng *r, mrt_threadpool *tp, const dw_case *dc, int64_t nan_at, const char *label)
{
    lr_geom g;
    mrt_conv_params p;
    cr_assert(dw_geom(dc, &g, &p), "%s: the test built an invalid geometry", label);
    int64_t xs[4] = {dc->n, dc->c, dc->h, dc->w}, ws[4] = {dc->c, 1, dc->kh, dc->kw};
    int64_t ys[4] = {dc->n, dc->c, g.out[0], g.out[1]};
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    mrt_tensor b = th_rand(r, MRT_DTYPE_FLOAT, 1, &dc->c, -1, 1);
    if (nan_at >= 0) ((float *)x.data)[nan_at] = NAN;
    int64_t yn = th_numel(4, ys);
    mrt_tensor y1 = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -9, 9), y2 = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -9, 9);
    mrt_op_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.pool = tp;
    ctx.n_threads = mrt_threadpool_threads(tp); /* as the engine sets it: a kernel may size its split by it */
    const float *bp = dc->bias ? b.data : NULL;
    mrt_depthwise2d_f32(NULL, &p, x.data, w.data, bp, y1.data, NULL);
    mrt_depthwise2d_f32(&ctx, &p, x.data, w.data, bp, y2.data, NULL);
    cr_assert(memcmp(y1.data, y2.data, (size_t)yn * sizeof(float)) == 0, "%s: 1 and 2 threads differ", label);
    float *yo = malloc((size_t)yn * sizeof(float));
    cr_assert(yo);
    dw_order_ref(dc, &g, x.data, w.data, bp, yo);
    for (int64_t i = 0; i < yn; i++) {
        float got = ((float *)y1.data)[i];
        cr_assert(memcmp(&got, &yo[i], sizeof got) == 0, "%s: element %lld is %a, the documented order gives %a",
                  label, (long long)i, (double)got, (double)yo[i]);
    }
    free(yo);
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *ed = th_alloc_f64(yn);
    lr_conv(&g, dc->n, dc->c, dc->c, dc->c, xd, wd, dc->bias ? bd : NULL, ed);
    th_assert_close(&y1, MRT_DTYPE_FLOAT, ed, 4, ys, label);
    free(xd);
    free(wd);
    free(bd);
    free(ed);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&b);
    mrt_tensor_release(&y1);
    mrt_tensor_release(&y2);
}

static void label_of(const dw_case *dc, const char *what, char *buf, size_t len)
{
    snprintf(buf, len, "%s: n %lld c %lld in %lldx%lld k %lldx%lld s %lldx%lld d %lldx%lld pads %lld,%lld,%lld,%lld%s",
             what, (long long)dc->n, (long long)dc->c, (long long)dc->h, (long long)dc->w, (long long)dc->kh,
             (long long)dc->kw, (long long)dc->sh, (long long)dc->sw, (long long)dc->dh, (long long)dc->dw,
             (long long)dc->pads[0], (long long)dc->pads[1], (long long)dc->pads[2], (long long)dc->pads[3],
             dc->bias ? " bias" : "");
}

Test(depthwise, random_geometries)
{
    th_rng r;
    th_rng_init(&r, th_seed("depthwise.random_geometries"));
    mrt_threadpool *tp = pool2();
    int done = 0;
    for (int it = 0; done < 300 && it < 3000; it++) {
        /* every fourth case: enough channels for full and partial 16-channel blocks (the small-plane path), and
           planes big enough for the row kernel */
        bool wide = it % 4 == 0;
        dw_case dc = {.n = th_rng_int(&r, 1, 2), .c = th_rng_int(&r, 1, wide ? 40 : 5)};
        dc.h = th_rng_int(&r, 1, wide ? 40 : 20);
        dc.w = th_rng_int(&r, 1, wide ? 40 : 20);
        dc.kh = th_rng_int(&r, 1, 7);
        dc.kw = th_rng_int(&r, 1, 7);
        dc.sh = th_rng_int(&r, 1, 3);
        dc.sw = th_rng_int(&r, 1, 3);
        dc.dh = th_rng_int(&r, 1, 2);
        dc.dw = th_rng_int(&r, 1, 2);
        for (int i = 0; i < 4; i++) dc.pads[i] = th_rng_int(&r, 0, 3);
        dc.bias = th_rng_int(&r, 0, 3) != 0;
        lr_geom g;
        mrt_conv_params p;
        if (!dw_geom(&dc, &g, &p)) continue;
        char label[256];
        label_of(&dc, "random", label, sizeof label);
        run_dw(&r, tp, &dc, -1, label);
        done++;
    }
    cr_assert_eq(done, 300);
    mrt_threadpool_free(tp);
}

Test(depthwise, fixed_shapes)
{
    th_rng r;
    th_rng_init(&r, th_seed("depthwise.fixed_shapes"));
    mrt_threadpool *tp = pool2();
    static const dw_case cases[] = {
        /* the shapes of MobileNetV2 / EfficientNet-B0 (same and stride-2 padding) */
        {1, 8, 14, 14, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
        {1, 8, 14, 14, 5, 5, 2, 2, 1, 1, {1, 1, 2, 2}, true},
        {1, 4, 112, 112, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
        {2, 3, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false},
        /* the small-plane path's 3x3 and 5x5 specialisations, strides 1 and 2 (MobileNetV2's 14 -> 7) */
        {1, 20, 14, 14, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
        {1, 20, 9, 11, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false},
        {1, 17, 12, 12, 5, 5, 2, 2, 1, 1, {2, 1, 2, 1}, true},
        /* MobileNetV2's 3x3/2 and EfficientNet-B0's 5x5/2 from 28 x 28 (rows of 14: the plane path's column-stride-2
           kernel), and the small-plane path's largest padded input (32 x 32, a 4x4 kernel) */
        {1, 20, 28, 28, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
        {1, 20, 28, 28, 5, 5, 2, 2, 1, 1, {1, 1, 2, 2}, true},
        {1, 20, 31, 31, 4, 4, 2, 2, 1, 1, {1, 1, 1, 1}, false},
        /* the row kernel's 3x3 and 5x5 instances (kernel size a constant), strides 1 and 2, dilated too */
        {1, 3, 28, 28, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
        {1, 3, 57, 57, 5, 5, 2, 2, 1, 1, {1, 1, 2, 2}, true},
        {1, 2, 40, 37, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, true},
        {1, 2, 41, 70, 5, 5, 2, 2, 2, 1, {4, 2, 4, 2}, false},
        /* 1x1 planes, with and without padding */
        {2, 3, 1, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},
        {2, 3, 1, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
        /* windows entirely in the padding (outputs = bias) */
        {1, 2, 2, 3, 1, 1, 1, 1, 1, 1, {3, 2, 3, 1}, true},
        /* the row kernel's input-row-major instances (row strides 1 and 2, K 3 and 5) at EfficientNet-B0's
           widths, with blocks of 4 rows that end past the plane */
        {1, 2, 56, 56, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
        {1, 2, 112, 112, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
        {1, 2, 29, 30, 5, 5, 1, 2, 1, 1, {2, 2, 2, 2}, false},
        {1, 2, 57, 43, 5, 5, 2, 1, 1, 2, {2, 1, 1, 2}, true},
        {1, 2, 70, 66, 3, 5, 2, 2, 1, 1, {1, 2, 1, 2}, true},
        /* the column-stride-2 row kernel (even and odd columns loaded once, shifted per tap): 1 to 4 vectors a row
           (OW 13, 40, 45, 64 + 2), K 3, 5 and 7, row strides 1 and 2, pads that start the row past its first column */
        {1, 3, 40, 80, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
        {1, 2, 30, 90, 7, 7, 1, 2, 1, 1, {3, 3, 3, 3}, true},
        {1, 2, 33, 27, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
        {1, 2, 20, 132, 3, 3, 1, 2, 1, 1, {0, 2, 1, 0}, false},
        /* a plane larger than one band (several bands, halo rows copied twice) */
        {1, 2, 150, 150, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
        /* planes of 4096 outputs or more, which two threads split by rows: two images, stride 2, an odd row count */
        {2, 3, 130, 131, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
        /* inputs of 2048 positions or more whose outputs are fewer than 4096: split by rows too, the bands' bounds
           rounded to 4 rows (28 rows: 16 + 12; 47: 24 + 23) */
        {2, 3, 56, 56, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
        {1, 2, 47, 45, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
        {1, 2, 131, 97, 7, 7, 3, 2, 2, 1, {3, 1, 0, 2}, true},
        /* 7x7 (ConvNeXt): the row kernel's input-row-major instances at row stride 1 (column strides 1 and 2),
           the direct one at row stride 2, and the channels-as-lanes path on 14x14 and 7x7 planes */
        {1, 3, 56, 56, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
        {1, 2, 28, 30, 7, 7, 1, 2, 1, 1, {3, 3, 3, 3}, false},
        {1, 2, 40, 41, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, true},
        {1, 20, 14, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
        {2, 17, 7, 7, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
        /* rows too wide for the stack buffer: the bounds-checked fallback */
        {1, 2, 4, 9000, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
        {1, 2, 3, 7000, 3, 5, 1, 2, 1, 2, {0, 2, 1, 2}, true},
        /* more taps than one register pass (64) and more than are precomputed (1024) */
        {1, 2, 12, 12, 9, 9, 1, 1, 1, 1, {4, 4, 4, 4}, true},
        {1, 1, 34, 35, 33, 33, 1, 1, 1, 1, {0, 1, 1, 0}, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[256];
        label_of(&cases[i], "fixed", label, sizeof label);
        run_dw(&r, tp, &cases[i], -1, label);
    }
    mrt_threadpool_free(tp);
}

Test(depthwise, nan_inputs)
{
    th_rng r;
    th_rng_init(&r, th_seed("depthwise.nan_inputs"));
    mrt_threadpool *tp = pool2();
    dw_case a = {2, 3, 9, 11, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true};
    run_dw(&r, tp, &a, 2 * 9 * 11 + 4 * 11 + 5, "NaN in the middle");
    dw_case b = {1, 2, 10, 10, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true};
    run_dw(&r, tp, &b, 0, "NaN in a corner, stride 2");
    mrt_threadpool_free(tp);
}

/* A fused epilogue gives the bits of the unfused kernel followed by the same post-ops over each channel. */
static void check_epilogue(th_rng *r, mrt_threadpool *tp, const dw_case *dc, const mrt_epilogue *ep_template,
                           const char *label)
{
    lr_geom g;
    mrt_conv_params p;
    cr_assert(dw_geom(dc, &g, &p));
    int64_t xs[4] = {dc->n, dc->c, dc->h, dc->w}, ws[4] = {dc->c, 1, dc->kh, dc->kw};
    int64_t ys[4] = {dc->n, dc->c, g.out[0], g.out[1]}, yn = th_numel(4, ys), plane = g.out[0] * g.out[1];
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    mrt_tensor b = th_rand(r, MRT_DTYPE_FLOAT, 1, &dc->c, -1, 1), other = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -1, 1);
    mrt_tensor y0 = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -1, 1), y1 = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -1, 1);
    mrt_tensor y2 = th_rand(r, MRT_DTYPE_FLOAT, 4, ys, -1, 1);
    double *a = th_alloc_f64(dc->c), *bb = th_alloc_f64(dc->c);
    mrt_bn_coef *bn = calloc((size_t)dc->c, sizeof *bn);
    for (int64_t c = 0; c < dc->c; c++) {
        a[c] = th_rng_uniform(r, 0.5, 2.0);
        bb[c] = th_rng_uniform(r, -0.5, 0.5);
        bn[c] = mrt_bn_coef_make(a[c], bb[c]);
    }
    mrt_epilogue ep = *ep_template;
    for (int k = 0; k < ep.n_ops; k++) {
        if (ep.ops[k].kind == MRT_POST_BATCHNORM) {
            ep.ops[k].bn = bn;
        }
        if (ep.ops[k].kind == MRT_POST_ADD) ep.ops[k].other = other.data;
    }
    mrt_depthwise2d_f32(NULL, &p, x.data, w.data, b.data, y0.data, NULL);
    for (int64_t nc = 0; nc < dc->n * dc->c; nc++)
        mrt_epilogue_apply(&ep, (float *)y0.data + nc * plane, plane, nc % dc->c, nc * plane);
    mrt_op_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.pool = tp;
    ctx.n_threads = mrt_threadpool_threads(tp); /* as the engine sets it: a kernel may size its split by it */
    mrt_depthwise2d_f32(NULL, &p, x.data, w.data, b.data, y1.data, &ep);
    mrt_depthwise2d_f32(&ctx, &p, x.data, w.data, b.data, y2.data, &ep);
    cr_assert(memcmp(y0.data, y1.data, (size_t)yn * sizeof(float)) == 0, "%s: fused != unfused", label);
    cr_assert(memcmp(y0.data, y2.data, (size_t)yn * sizeof(float)) == 0, "%s: fused, 2 threads != unfused", label);
    /* and against the reference, formulas spelled out */
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *od = th_to_f64(&other);
    double *ed = th_alloc_f64(yn);
    lr_conv(&g, dc->n, dc->c, dc->c, dc->c, xd, wd, bd, ed);
    for (int64_t i = 0; i < yn; i++) {
        int64_t c = i / plane % dc->c;
        for (int k = 0; k < ep.n_ops; k++) {
            switch (ep.ops[k].kind) {
            case MRT_POST_BATCHNORM: ed[i] = ed[i] * a[c] + bb[c]; break;
            case MRT_POST_ADD: ed[i] += od[i]; break;
            case MRT_POST_RELU: ed[i] = ed[i] < 0 ? 0 : ed[i]; break;
            case MRT_POST_CLIP: ed[i] = ed[i] < ep.ops[k].lo ? ep.ops[k].lo : ed[i] > ep.ops[k].hi ? ep.ops[k].hi : ed[i]; break;
            case MRT_POST_SILU: ed[i] = ed[i] / (1.0 + exp(-ed[i])); break;
            default: cr_assert_fail("unexpected post-op in the test");
            }
        }
    }
    th_assert_close(&y1, MRT_DTYPE_FLOAT, ed, 4, ys, label);
    free(xd);
    free(wd);
    free(bd);
    free(od);
    free(ed);
    free(a);
    free(bb);
    free(bn);
    mrt_tensor *ts[] = {&x, &w, &b, &other, &y0, &y1, &y2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) mrt_tensor_release(ts[i]);
}

Test(depthwise, fused_epilogue)
{
    th_rng r;
    th_rng_init(&r, th_seed("depthwise.fused_epilogue"));
    mrt_threadpool *tp = pool2();
    mrt_epilogue relu = {1, {{.kind = MRT_POST_RELU}}};
    mrt_epilogue bn = {1, {{.kind = MRT_POST_BATCHNORM}}};
    mrt_epilogue chain = {3, {{.kind = MRT_POST_BATCHNORM}, {.kind = MRT_POST_ADD}, {.kind = MRT_POST_RELU}}};
    /* EfficientNet's: small planes take it over several channels at once, BatchNormalization per channel */
    mrt_epilogue bn_silu = {2, {{.kind = MRT_POST_BATCHNORM}, {.kind = MRT_POST_SILU}}};
    /* MobileNetV2's (ReLU6) */
    mrt_epilogue bn_clip = {2, {{.kind = MRT_POST_BATCHNORM}, {.kind = MRT_POST_CLIP, .lo = 0.0f, .hi = 0.5f}}};
    static const dw_case cases[] = {
        {2, 3, 9, 11, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
        {1, 4, 14, 14, 5, 5, 2, 2, 1, 1, {1, 2, 2, 1}, true},
        {1, 2, 150, 150, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true}, /* several bands */
        {2, 40, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},    /* epilogue groups crossing images */
        {2, 5, 28, 30, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},   /* direct, planes of < 4096 outputs in groups */
        {2, 3, 130, 131, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true}, /* direct, >= 4096 outputs: row bands per thread */
        {2, 5, 56, 56, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},   /* >= 2048 inputs, < 4096 outputs: row bands */
        {1, 3, 45, 51, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},   /* the same at stride 2, 23 rows: 12 + 11 */
        {1, 3, 57, 40, 3, 3, 2, 2, 1, 1, {1, 0, 1, 1}, true},   /* direct, stride 2, a partial last vector */
        {1, 20, 14, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},  /* channels as lanes, 7x7 */
        {1, 3, 28, 28, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},   /* direct, 7x7 input-row-major */
        {1, 2, 3, 7000, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},  /* the fallback */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[256];
        label_of(&cases[i], "relu", label, sizeof label);
        check_epilogue(&r, tp, &cases[i], &relu, label);
        label_of(&cases[i], "batchnorm", label, sizeof label);
        check_epilogue(&r, tp, &cases[i], &bn, label);
        label_of(&cases[i], "batchnorm+add+relu", label, sizeof label);
        check_epilogue(&r, tp, &cases[i], &chain, label);
        label_of(&cases[i], "batchnorm+silu", label, sizeof label);
        check_epilogue(&r, tp, &cases[i], &bn_silu, label);
        label_of(&cases[i], "batchnorm+clip", label, sizeof label);
        check_epilogue(&r, tp, &cases[i], &bn_clip, label);
    }
    mrt_threadpool_free(tp);
}
