/* Conv/ConvTranspose/ConvInteger, Gemm/MatMul/MatMulInteger and the pools against the naive references
 * in tests/ref/linear_ref.c: random geometries (groups, depthwise, asymmetric pads, strides, dilations,
 * auto_pad, ceil_mode, 1-D..3-D), several dtypes, empty tensors and error cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "ops_cpu/conv_grouped.h"
#include "ops_cpu/conv_workspace.h"
#include "harness.h"
#include "ref/linear_ref.h"

/* ------------------------------------------------------------------ helpers */

/* ------------------------------------------------------------------ Conv */

typedef struct conv_case {
    int nsp;
    int64_t n, c, m, group;
    int64_t in[3], k[3], s[3], d[3], pads[6];
    const char *auto_pad;
    bool bias, kernel_attr;
    mrt_dtype dt;
    int opset;
    int threads; /* 0: the session's default */
} conv_case;

/* The float32 GEMM's chains (ops_cpu/sgemm.h), written out for a 2-D Conv: over k = (c, kh, kw) of the output
   channel's group in order (padding reading 0), one fmaf chain from 0 per block of 256 k, the blocks added in
   order, then + bias. Every float path of such a Conv but the depthwise kernels (im2col + GEMM, the stems' rows, 1x1
   images read in place, grouped convs with channels as lanes) must give exactly these bits. */
static void conv_chain_ref(const conv_case *cc, const lr_geom *g, const float *x, const float *w, const float *b,
                           float *y)
{
    int64_t H = cc->in[0], W = cc->in[1], OH = g->out[0], OW = g->out[1];
    int64_t cg = cc->c / cc->group, mg = cc->m / cc->group;
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t m = 0; m < cc->m; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = 0.0f, sum = 0.0f;
                    int64_t k = 0, K = cg * cc->k[0] * cc->k[1];
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t kh = 0; kh < cc->k[0]; kh++)
                            for (int64_t kw = 0; kw < cc->k[1]; kw++) {
                                int64_t ih = oh * cc->s[0] - g->pads[0] + kh * cc->d[0];
                                int64_t iw = ow * cc->s[1] - g->pads[1] + kw * cc->d[1];
                                bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                                float xv = in ? x[((n * cc->c + m / mg * cg + c) * H + ih) * W + iw] : 0.0f;
                                acc = fmaf(w[((m * cg + c) * cc->k[0] + kh) * cc->k[1] + kw], xv, acc);
                                if (++k % 256 == 0 || k == K) { /* a block ends */
                                    sum = k <= 256 ? acc : sum + acc;
                                    acc = 0.0f;
                                }
                            }
                    *y++ = b ? sum + b[m] : sum;
                }
}

static void run_conv(th_rng *r, const conv_case *cc, const char *label)
{
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = cc->nsp;
    for (int i = 0; i < cc->nsp; i++) {
        g.in[i] = cc->in[i];
        g.kernel[i] = cc->k[i];
        g.stride[i] = cc->s[i];
        g.dilation[i] = cc->d[i];
        g.pads[i] = cc->pads[i];
        g.pads[cc->nsp + i] = cc->pads[cc->nsp + i];
    }
    g.auto_pad = cc->auto_pad;
    cr_assert(lr_geom_resolve(&g), "%s: the test built an invalid geometry", label);
    int rank = cc->nsp + 2;
    int64_t xs[5] = {cc->n, cc->c}, ws[5] = {cc->m, cc->c / cc->group}, ys[5] = {cc->n, cc->m};
    for (int i = 0; i < cc->nsp; i++) {
        xs[i + 2] = cc->in[i];
        ws[i + 2] = cc->k[i];
        ys[i + 2] = g.out[i];
    }
    mrt_tensor x = th_rand(r, cc->dt, rank, xs, -1, 1), w = th_rand(r, cc->dt, rank, ws, -1, 1);
    mrt_tensor b = th_rand(r, cc->dt, 1, &cc->m, -1, 1);
    th_case *c = th_begin("Conv", "", cc->opset ? cc->opset : 22);
    th_input(c, &x);
    th_input_const(c, &w);
    if (cc->bias) th_input_const(c, &b);
    if (cc->group != 1) th_attr_int(c, "group", cc->group);
    th_attr_ints(c, "strides", cc->nsp, cc->s);
    th_attr_ints(c, "dilations", cc->nsp, cc->d);
    if (cc->kernel_attr) th_attr_ints(c, "kernel_shape", cc->nsp, cc->k);
    if (strcmp(cc->auto_pad, "NOTSET") == 0) th_attr_ints(c, "pads", 2 * cc->nsp, cc->pads);
    else th_attr_string(c, "auto_pad", cc->auto_pad);
    mrt_tensor y;
    mrt_session_options opt = mrt_session_options_default();
    opt.n_threads = cc->threads;
    mrt_status st = th_run_opt(c, &opt, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *ed = th_alloc_f64(th_numel(rank, ys));
    lr_conv(&g, cc->n, cc->c, cc->m, cc->group, xd, wd, cc->bias ? bd : NULL, ed);
    th_assert_close(&y, cc->dt, ed, rank, ys, label);
    mrt_conv_params p = {.n = cc->n, .c = cc->c, .m = cc->m, .group = cc->group, .kernel_numel = cc->k[0] * cc->k[1],
                         .win = {.nsp = cc->nsp, .in = {cc->in[0], cc->in[1]}, .out = {g.out[0], g.out[1]},
                                 .kernel = {cc->k[0], cc->k[1]}, .stride = {cc->s[0], cc->s[1]},
                                 .dilation = {cc->d[0], cc->d[1]}}};
    bool winograd = mrt_conv_winograd_floats(&p, cc->dt, true, 1) > 0; /* another sum: conv_3x3_winograd checks it */
    bool depthwise = cc->group > 1 && cc->group == cc->c && cc->group == cc->m; /* its own order (test_ops_depthwise) */
    if (cc->dt == MRT_DTYPE_FLOAT && cc->nsp <= 2 && !depthwise && !winograd) {
        int64_t yn = th_numel(rank, ys);
        float *yc = malloc((size_t)yn * sizeof(float));
        cr_assert(yc);
        if (cc->nsp == 1) { /* the same chains as a 2-D Conv on one row */
            conv_case c2 = *cc;
            c2.nsp = 2;
            c2.in[0] = 1, c2.in[1] = cc->in[0], c2.k[0] = 1, c2.k[1] = cc->k[0], c2.s[0] = 1, c2.s[1] = cc->s[0];
            c2.d[0] = 1, c2.d[1] = cc->d[0];
            lr_geom g2 = g;
            g2.out[0] = 1, g2.out[1] = g.out[0], g2.pads[0] = 0, g2.pads[1] = g.pads[0];
            conv_chain_ref(&c2, &g2, x.data, w.data, cc->bias ? b.data : NULL, yc);
        } else {
            conv_chain_ref(cc, &g, x.data, w.data, cc->bias ? b.data : NULL, yc);
        }
        for (int64_t i = 0; i < yn; i++) {
            float got = ((float *)y.data)[i];
            cr_assert(memcmp(&got, &yc[i], sizeof got) == 0, "%s: element %lld is %a, the GEMM's chain gives %a",
                      label, (long long)i, (double)got, (double)yc[i]);
        }
        free(yc);
    }
    free(xd);
    free(wd);
    free(bd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&b);
    th_free(c);
}

static const char *const auto_pads[] = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

Test(linear, conv_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_random"));
    for (int it = 0; it < 60; it++) {
        conv_case cc;
        memset(&cc, 0, sizeof cc);
        cc.nsp = 1 + it % 3;
        int gk = (int)th_rng_int(&r, 0, 2);
        int64_t per = th_rng_int(&r, 1, 3);
        cc.group = gk == 0 ? 1 : gk == 1 ? 2 : th_rng_int(&r, 2, 4);
        cc.c = gk == 2 ? cc.group : cc.group * per; /* gk 2: depthwise */
        cc.m = cc.group * th_rng_int(&r, 1, 3);
        cc.n = th_rng_int(&r, 1, 2);
        cc.auto_pad = auto_pads[th_rng_int(&r, 0, 4)];
        for (int i = 0; i < cc.nsp; i++) {
            cc.k[i] = th_rng_int(&r, 1, cc.nsp == 3 ? 2 : 3);
            cc.s[i] = th_rng_int(&r, 1, 2);
            cc.d[i] = th_rng_int(&r, 1, 2);
            cc.pads[i] = th_rng_int(&r, 0, 2);
            cc.pads[cc.nsp + i] = th_rng_int(&r, 0, 2);
            int64_t ek = (cc.k[i] - 1) * cc.d[i] + 1;
            cc.in[i] = ek + th_rng_int(&r, 0, cc.nsp == 3 ? 3 : 6);
        }
        cc.bias = th_rng_int(&r, 0, 1);
        cc.kernel_attr = th_rng_int(&r, 0, 1);
        cc.dt = it % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        cc.opset = it % 5 == 0 ? 11 : it % 7 == 0 ? 1 : 22;
        char label[160];
        snprintf(label, sizeof label, "case %d (%dD group %lld c %lld m %lld %s)", it, cc.nsp, (long long)cc.group,
                 (long long)cc.c, (long long)cc.m, cc.auto_pad);
        run_conv(&r, &cc, label);
    }
}

/* 1-D float convolutions with long kernels at stride 1 (wav2vec2's positional Conv: 128 taps, pads 64, 16 groups)
   pack B's rows as slices of the input rows (ops_cpu/conv.c): panels that start and end in the padding, a slice
   shorter than a panel, products deeper than one 256-k block, dilation 2, batch 2, 1 and 2 threads; float64
   reference and the GEMM's chains bit for bit (run_conv). */
Test(linear, conv_1d_long_kernels)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_1d_long_kernels"));
    const int64_t cases[][9] = {/* n, c, m, group, in, k, d, pad_begin, pad_end */
                                {1, 32, 32, 16, 49, 128, 1, 64, 64}, {2, 8, 6, 2, 100, 9, 1, 4, 4},
                                {1, 4, 8, 1, 200, 17, 2, 0, 3},     {1, 3, 5, 1, 30, 40, 1, 20, 19},
                                {2, 6, 4, 2, 61, 12, 1, 11, 0}};
    for (int i = 0; i < 5; i++)
        for (int t = 1; t <= 2; t++) {
            const int64_t *q = cases[i];
            conv_case cc;
            memset(&cc, 0, sizeof cc);
            cc.nsp = 1;
            cc.n = q[0], cc.c = q[1], cc.m = q[2], cc.group = q[3], cc.in[0] = q[4], cc.k[0] = q[5], cc.d[0] = q[6];
            cc.s[0] = 1, cc.pads[0] = q[7], cc.pads[1] = q[8];
            cc.auto_pad = "NOTSET";
            cc.bias = i % 2 == 0;
            cc.kernel_attr = true;
            cc.dt = MRT_DTYPE_FLOAT;
            cc.threads = t;
            char label[96];
            snprintf(label, sizeof label, "1-D case %d, k %lld, %d threads", i, (long long)q[5], t);
            run_conv(&r, &cc, label);
        }
}

/* 2-D float convolutions with rows of many widths: the packer builds each 48-column panel row from runs of image
   rows (masked vector loads for strides 1 and 2, ops_cpu/conv.c), so widths around 8, 16 and 48 put row ends at
   every lane, 3-7 wide rows take the segment copies, and 40 channels make products deeper than one 256-k block. */
Test(linear, conv_2d_rows_of_every_width)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_rows"));
    static const int64_t widths[] = {3, 7, 8, 9, 15, 16, 17, 23, 33, 47, 48, 49, 50, 56, 97};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (int v = 0; v < 3; v++) {
            conv_case cc;
            memset(&cc, 0, sizeof cc);
            cc.nsp = 2;
            cc.n = 1 + v % 2;
            cc.group = 1;
            cc.c = v == 2 ? 40 : th_rng_int(&r, 1, 6);
            cc.m = th_rng_int(&r, 1, 20);
            cc.auto_pad = "NOTSET";
            for (int i = 0; i < 2; i++) {
                cc.k[i] = th_rng_int(&r, 1, 5);
                cc.s[i] = v == 1 ? 2 : 1;
                cc.d[i] = th_rng_int(&r, 1, 2);
                cc.pads[i] = th_rng_int(&r, 0, 3);
                cc.pads[2 + i] = th_rng_int(&r, 0, 3);
            }
            int64_t ek0 = (cc.k[0] - 1) * cc.d[0] + 1, ek1 = (cc.k[1] - 1) * cc.d[1] + 1;
            cc.in[0] = ek0 + th_rng_int(&r, 0, 5);
            cc.in[1] = (widths[wi] - 1) * cc.s[1] + ek1 - cc.pads[1] - cc.pads[3]; /* output width widths[wi] */
            if (cc.in[1] < ek1) cc.in[1] = ek1;
            cc.bias = v != 0;
            cc.kernel_attr = true;
            cc.dt = MRT_DTYPE_FLOAT;
            char label[160];
            snprintf(label, sizeof label,
                     "width %lld, variant %d (c %lld, k %lldx%lld, d %lldx%lld, pads %lld %lld %lld %lld)",
                     (long long)widths[wi], v, (long long)cc.c, (long long)cc.k[0], (long long)cc.k[1],
                     (long long)cc.d[0], (long long)cc.d[1], (long long)cc.pads[0], (long long)cc.pads[1],
                     (long long)cc.pads[2], (long long)cc.pads[3]);
            run_conv(&r, &cc, label);
        }
}

/* Dilations as large as the image (DeepLabV3's ASPP): kernel offsets that read only padding are dropped
   (ops_cpu/conv.c) while the k blocks of the full product are kept, so the results are conv_chain_ref's bits:
   only the centre tap live (100 channels: 900 rows, 4 blocks of 28/29/28/15 live rows); dead rows along one axis
   only (dilation 6 on 5 rows, 2 on 9 columns); 18 blocks with a stride-2 axis; a 5x5 kernel with its outer ring
   dead on a 3x3 image; taps dead for bands of output rows only (DeepLabV3's dilation 12 on 14x14: rows 0-1, 2-11
   and 12-13 read 6, 3 and 6 taps; dilation 6 on 9 rows); batches of 2; 1 and 2 threads; then 1-D and 3-D
   geometries against the float64 reference. */
Test(linear, conv_taps_reading_only_padding_keep_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_dead_taps"));
    static const struct {
        int64_t c, m, in[2], k[2], s[2], d[2], pads[4];
    } cases[] = {
        {100, 20, {6, 6}, {3, 3}, {1, 1}, {24, 24}, {24, 24, 24, 24}},
        {37, 9, {5, 9}, {3, 3}, {1, 1}, {6, 2}, {6, 2, 6, 2}},
        {300, 17, {4, 7}, {3, 5}, {2, 1}, {5, 1}, {5, 2, 5, 2}},
        {12, 50, {3, 3}, {5, 5}, {1, 1}, {2, 2}, {4, 4, 4, 4}},
        {40, 24, {14, 14}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12}},
        {30, 16, {9, 7}, {3, 3}, {1, 1}, {6, 3}, {6, 3, 6, 3}},
        /* the regions (rows by columns with the same live taps, conv_pointwise.c's mrt_conv_taps_lanes): k blocks
           ending inside a channel's taps, a partial vector of output channels, strides, wider kernels */
        {300, 40, {14, 14}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12}},
        {50, 20, {9, 12}, {3, 5}, {1, 1}, {8, 5}, {8, 10, 8, 10}},
        {64, 33, {27, 25}, {3, 3}, {2, 2}, {14, 14}, {14, 14, 14, 14}},
        {70, 48, {10, 10}, {5, 5}, {1, 1}, {6, 6}, {12, 12, 12, 12}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int v = 0; v < 2; v++) {
            conv_case cc;
            memset(&cc, 0, sizeof cc);
            cc.nsp = 2;
            cc.n = 1 + v;
            cc.group = 1;
            cc.c = cases[ci].c;
            cc.m = cases[ci].m;
            cc.auto_pad = "NOTSET";
            for (int i = 0; i < 2; i++) {
                cc.in[i] = cases[ci].in[i];
                cc.k[i] = cases[ci].k[i];
                cc.s[i] = cases[ci].s[i];
                cc.d[i] = cases[ci].d[i];
            }
            for (int i = 0; i < 4; i++) cc.pads[i] = cases[ci].pads[i];
            cc.bias = v == 0;
            cc.kernel_attr = true;
            cc.dt = MRT_DTYPE_FLOAT;
            cc.threads = 1 + v;
            char label[96];
            snprintf(label, sizeof label, "dead taps case %zu, %d image(s), %d thread(s)", ci, (int)cc.n, cc.threads);
            run_conv(&r, &cc, label);
        }
    conv_case d1 = {.nsp = 1, .n = 2, .c = 20, .m = 7, .group = 1, .in = {5}, .k = {3}, .s = {1}, .d = {4}, .pads = {4, 4},
                    .auto_pad = "NOTSET", .bias = true, .kernel_attr = true, .dt = MRT_DTYPE_FLOAT, .threads = 2};
    run_conv(&r, &d1, "dead taps, 1-D");
    conv_case d3 = {.nsp = 3, .n = 1, .c = 12, .m = 5, .group = 1, .in = {3, 4, 4}, .k = {3, 3, 3}, .s = {1, 1, 1},
                    .d = {3, 3, 3}, .pads = {3, 3, 3, 3, 3, 3}, .auto_pad = "NOTSET", .bias = true, .kernel_attr = true,
                    .dt = MRT_DTYPE_FLOAT};
    run_conv(&r, &d3, "dead taps, 3-D");
}

/* The live taps' bands (ops_cpu/conv.c) with a fused epilogue: each band's last k block applies it, the residual
   indexed by the band's place in Y. DeepLabV3's block: Conv (dilation 12 on 14x14) -> BatchNormalization ->
   Add(residual) -> Relu fused into the Conv (engine/fuse.c) gives the bits of the four nodes run unfused, on 1 and
   2 threads, two images. */
static mrt_model *dilated_conv_block(th_rng *r, int64_t c, int64_t m, int64_t d, int64_t kn)
{
    mrt_model *md = mrt_model_new();
    md->graph = mrt_graph_new("g");
    mrt_model_set_opset(md, "", 17);
    mrt_graph *g = md->graph;
    mrt_graph_add_input(g, "x", NULL, NULL);
    mrt_tensor w1 = th_rand(r, MRT_DTYPE_FLOAT, 4, (int64_t[]){m, c, 1, 1}, -1, 1);
    mrt_tensor w = th_rand(r, MRT_DTYPE_FLOAT, 4, (int64_t[]){m, c, kn, kn}, -1, 1);
    mrt_tensor b = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, -1, 1), scale = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, 0.5, 2);
    mrt_tensor shift = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, -1, 1), mean = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, -1, 1);
    mrt_tensor var = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, 0.5, 2);
    const char *names[] = {"w1", "w", "b", "scale", "shift", "mean", "var"};
    mrt_tensor *ts[] = {&w1, &w, &b, &scale, &shift, &mean, &var};
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(mrt_graph_set_initializer(g, names[i], ts[i]), MRT_STATUS_OK);
        mrt_tensor_release(ts[i]);
    }
    mrt_node *n;
    mrt_graph_add_node(g, "residual", "Conv", "", 2, (const char *[]){"x", "w1"}, 1, (const char *[]){"res"}, &n);
    mrt_graph_add_node(g, "aspp", "Conv", "", 3, (const char *[]){"x", "w", "b"}, 1, (const char *[]){"cv"}, &n);
    if (kn > 1) {
        mrt_node_add_attr_ints(n, "dilations", 2, (int64_t[]){d, d});
        mrt_node_add_attr_ints(n, "pads", 4, (int64_t[]){d, d, d, d});
    }
    mrt_graph_add_node(g, "bn", "BatchNormalization", "", 5, (const char *[]){"cv", "scale", "shift", "mean", "var"}, 1,
                       (const char *[]){"bn"}, &n);
    mrt_graph_add_node(g, "add", "Add", "", 2, (const char *[]){"bn", "res"}, 1, (const char *[]){"sum"}, &n);
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"sum"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    return md;
}

/* the block below, unfused on 1 thread against fused on 1 and 2, bit for bit: a kn x kn Conv from c to m channels
   (dilation d) on two images of h x h */
static void fused_block_keeps_the_bits(th_rng *r, int64_t c, int64_t m, int64_t d, int64_t kn, int64_t h)
{
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, c, h, h}, -1, 1);
    mrt_tensor y[3];
    int fused[3];
    for (int v = 0; v < 3; v++) { /* unfused on 1 thread, fused on 1 and 2 */
        th_rng wr;
        th_rng_init(&wr, 7); /* the same weights in every session */
        mrt_model *md = dilated_conv_block(&wr, c, m, d, kn);
        mrt_session_options opt = mrt_session_options_default();
        opt.no_fuse = v == 0;
        opt.n_threads = v == 2 ? 2 : 1;
        mrt_session *s;
        cr_assert_eq(mrt_session_new(md, &opt, &s), MRT_STATUS_OK, "%s", mrt_last_error());
        const char *name = "x";
        mrt_value xv = mrt_value_from_tensor(x);
        cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
        cr_assert_eq(mrt_tensor_copy(&y[v], &mrt_session_output(s, 0)->tensor), MRT_STATUS_OK);
        mrt_session_stats st;
        mrt_session_get_stats(s, &st);
        fused[v] = st.fused_nodes;
        mrt_session_free(s);
        mrt_model_free(md);
    }
    cr_assert_eq(fused[0], 0);
    cr_assert_eq(fused[1], 3, "BatchNormalization, Add and Relu fused into the Conv: %d nodes fused", fused[1]);
    size_t nb = mrt_tensor_nbytes(&y[0]);
    cr_assert(memcmp(y[0].data, y[1].data, nb) == 0, "fused and unfused differ");
    cr_assert(memcmp(y[0].data, y[2].data, nb) == 0, "fused on 2 threads and unfused differ");
    for (int v = 0; v < 3; v++) mrt_tensor_release(&y[v]);
    mrt_tensor_release(&x);
}

Test(linear, conv_live_taps_bands_with_a_fused_epilogue_keep_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_live_bands_fused"));
    fused_block_keeps_the_bits(&r, 40, 24, 12, 3, 14);
}

/* The same block with a 1x1 expansion (40 -> 100 channels): the columns after the last 48-wide tile go by channels
   as lanes (ops_cpu/conv.c's pw_tail_lanes), each result through the epilogue before it is stored, 100 channels
   being 6 vectors and a partial seventh; at 14x14 (4 columns, read in place) and at 7x7 (1 column, after the GEMM,
   on one thread) */
Test(linear, conv_pointwise_tail_lanes_with_a_fused_epilogue_keep_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_pointwise_tail_fused"));
    fused_block_keeps_the_bits(&r, 40, 100, 1, 1, 14);
    fused_block_keeps_the_bits(&r, 40, 100, 1, 1, 7);
}

/* An infinite weight on a tap that reads only padding: inf * 0 is NaN in the full product, so every output is NaN
   (prepare keeps every tap then), as conv_chain_ref's chain gives. */
Test(linear, conv_infinite_weight_on_a_dead_tap_gives_nan)
{
    enum { C = 12, M = 3, H = 5, KN = 9 }; /* more than 8 channels: not the stems' path */
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_dead_tap_inf"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, C, H, H}, -1, 1);
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){M, C, 3, 3}, -1, 1);
    ((float *)w.data)[(1 * C + 2) * KN + 0] = INFINITY; /* output channel 1, input channel 2, tap (0, 0): dead */
    th_case *c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    th_attr_ints(c, "dilations", 2, (int64_t[]){H, H});
    th_attr_ints(c, "pads", 4, (int64_t[]){H, H, H, H});
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    const float *yv = y.data;
    for (int64_t m = 0; m < M; m++)
        for (int64_t i = 0; i < H * H; i++)
            cr_assert_eq(isnan(yv[m * H * H + i]), m == 1, "output channel %lld, position %lld: %g", (long long)m,
                         (long long)i, (double)yv[m * H * H + i]);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    th_free(c);
}

/* The same with 16 output channels on 14x14, dilation 12 (the regions' path's geometry: prepare then keeps the
   bands' path, every tap): channel 1's outputs are NaN where tap (0, 0) reads padding and +-inf in the 2x2 corner
   where it reads the image, as the full product's chain gives; the other channels stay finite. */
Test(linear, conv_infinite_weight_on_a_dead_tap_of_a_region_gives_nan)
{
    enum { C = 12, M = 16, H = 14, D = 12, KN = 9 };
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_dead_tap_inf_regions"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, C, H, H}, 0.5, 1);
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){M, C, 3, 3}, -1, 1);
    ((float *)w.data)[(1 * C + 2) * KN + 0] = INFINITY; /* output channel 1, input channel 2, tap (0, 0) */
    th_case *c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    th_attr_ints(c, "dilations", 2, (int64_t[]){D, D});
    th_attr_ints(c, "pads", 4, (int64_t[]){D, D, D, D});
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    const float *yv = y.data;
    for (int64_t m = 0; m < M; m++)
        for (int64_t i = 0; i < H * H; i++) {
            float v = yv[m * H * H + i];
            bool reads = i / H >= D && i % H >= D; /* tap (0, 0) reads input row oh - 12, column ow - 12 */
            if (m != 1) cr_assert(isfinite(v), "output channel %lld, position %lld: %g", (long long)m, (long long)i, (double)v);
            else if (reads) cr_assert(isinf(v), "position %lld: %g, expected +-inf", (long long)i, (double)v);
            else cr_assert(isnan(v), "position %lld: %g, expected NaN", (long long)i, (double)v);
        }
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    th_free(c);
}

/* 1x1 convolutions of up to 64 output channels and one k block, or up to 96 and several k blocks on planes of at
   most 32x32, or any number from at most 128 input channels on planes of 192 to 1024 positions, read B in place
   (ops_cpu/conv.c), 48 columns a tile, the columns after the last full tile one more tile (its loads run into the
   next channel's plane; the image's last channel row is copied first, which the ASan build checks), or with k in one
   block and at most 4 of them, by channels as lanes: images of 48, 49, 207, 289, 377, 400, 196, 50 and 51 columns
   (no tail, 1, 15, 1, 41, 16, 4, 2 and 3 columns after the full tiles), one or several row
   panels with a partial last one, 300 and 600 input channels (k blocks of 256 and a partial last one), expansions
   from 96 and 128 channels to 200 and 130 (in place from 207 columns on, the GEMM below), on 1 and 2 threads, and
   the batch's second image. On planes of at most 256 positions, the Convs with 16 or more output channels and no
   more than input channels take ops_cpu/conv_pointwise.c instead (the test below). */
Test(linear, conv_pointwise_in_place_rows)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_pointwise_rows"));
    static const int64_t hw[][2] = {{6, 8}, {7, 7}, {9, 23}, {17, 17}, {13, 29}, {20, 20}, {14, 14}, {5, 10}, {3, 17}};
    static const int64_t cm[][2] = {{1, 9}, {7, 1}, {40, 24}, {256, 64}, {300, 96}, {600, 70}, {96, 200}, {128, 130}};
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 8; j++) {
            /* the expansions (the last two) on 1 and 2 threads, the others on the session's default (0) */
            int t_lo = j >= 6 ? 1 : 0, t_hi = j >= 6 ? 2 : 0;
            for (int threads = t_lo; threads <= t_hi; threads++) {
                conv_case cc = {2, 2, cm[j][0], cm[j][1], 1, {hw[i][0], hw[i][1]}, {1, 1}, {1, 1}, {1, 1}, {0},
                                "NOTSET", (i + j) % 2 == 0, false, MRT_DTYPE_FLOAT, 22, threads};
                char label[96];
                snprintf(label, sizeof label, "pointwise %lldx%lld c %lld m %lld, %d thread(s)", (long long)hw[i][0],
                         (long long)hw[i][1], (long long)cm[j][0], (long long)cm[j][1], threads);
                run_conv(&r, &cc, label);
            }
        }
    /* no output channels (once a division by zero in the in-place path), and no input channels: zeros; on 1 thread
       too, where 207 columns take the GEMM's wide mode (whose strip width once divided by k = 0) */
    static const int64_t empty[][2] = {{16, 0}, {0, 8}};
    for (int threads = 1; threads <= 2; threads++)
        for (int i = 0; i < 2; i++) {
            conv_case cc = {2, 2, empty[i][0], empty[i][1], 1, {9, 23}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", false,
                            false, MRT_DTYPE_FLOAT, 22, threads};
            run_conv(&r, &cc, i == 0 ? "pointwise to 0 channels" : "pointwise from 0 channels");
        }
}

/* ---- 3x3 stride-1 Convs by Winograd's F(2x2, 3x3) (ops_cpu/conv_winograd.h) */

/* The sequence of float operations ops_cpu/conv_winograd.c documents, written out per tile: W's transform in double
   rounded once, the input patch's transform, per k block of 256 input channels an fma chain from 0 over the
   channels added in block order, the output transform, then + bias. The kernel must give exactly these bits on
   every path (prepared or run-time transformed weights, any thread count, any sub-block a tile falls in). */
static void winograd_chain_ref(int64_t N, int64_t C, int64_t M, int64_t H, int64_t W, int64_t pt, int64_t pl,
                               int64_t OH, int64_t OW, const float *x, const float *w, const float *b, float *y)
{
    float *u = malloc((size_t)(16 * M * C) * sizeof(float)), *v = malloc((size_t)(16 * C) * sizeof(float));
    cr_assert(u && v);
    for (int64_t i = 0; i < M * C; i++) {
        const float *g = w + i * 9;
        double t[4][3];
        for (int k = 0; k < 3; k++) {
            double g0 = g[k], g1 = g[3 + k], g2 = g[6 + k];
            t[0][k] = g0;
            t[1][k] = 0.5 * (g0 + g1 + g2);
            t[2][k] = 0.5 * (g0 - g1 + g2);
            t[3][k] = g2;
        }
        for (int a = 0; a < 4; a++) {
            const double *r = t[a];
            double uu[4] = {r[0], 0.5 * (r[0] + r[1] + r[2]), 0.5 * (r[0] - r[1] + r[2]), r[2]};
            for (int bb = 0; bb < 4; bb++) u[(4 * a + bb) * M * C + i] = (float)uu[bb];
        }
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t ty = 0; ty < (OH + 1) / 2; ty++)
            for (int64_t tx = 0; tx < (OW + 1) / 2; tx++) {
                for (int64_t c = 0; c < C; c++) {
                    float d[4][4], t[4][4];
                    for (int i = 0; i < 4; i++)
                        for (int k = 0; k < 4; k++) {
                            int64_t ih = 2 * ty - pt + i, iw = 2 * tx - pl + k;
                            d[i][k] = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[((n * C + c) * H + ih) * W + iw] : 0.0f;
                        }
                    for (int i = 0; i < 4; i++) {
                        t[i][0] = d[i][0] - d[i][2];
                        t[i][1] = d[i][1] + d[i][2];
                        t[i][2] = d[i][2] - d[i][1];
                        t[i][3] = d[i][1] - d[i][3];
                    }
                    for (int k = 0; k < 4; k++) {
                        v[(0 + k) * C + c] = t[0][k] - t[2][k];
                        v[(4 + k) * C + c] = t[1][k] + t[2][k];
                        v[(8 + k) * C + c] = t[2][k] - t[1][k];
                        v[(12 + k) * C + c] = t[1][k] - t[3][k];
                    }
                }
                for (int64_t m = 0; m < M; m++) {
                    float mm[16], s[4][2], o[2][2];
                    for (int xi = 0; xi < 16; xi++)
                        for (int64_t k0 = 0; k0 < C; k0 += 256) {
                            float acc = 0.0f;
                            for (int64_t c = k0; c < C && c < k0 + 256; c++)
                                acc = fmaf(u[(xi * M + m) * C + c], v[xi * C + c], acc);
                            mm[xi] = k0 == 0 ? acc : mm[xi] + acc;
                        }
                    for (int i = 0; i < 4; i++) {
                        s[i][0] = (mm[4 * i] + mm[4 * i + 1]) + mm[4 * i + 2];
                        s[i][1] = (mm[4 * i + 1] - mm[4 * i + 2]) - mm[4 * i + 3];
                    }
                    for (int k = 0; k < 2; k++) {
                        o[0][k] = (s[0][k] + s[1][k]) + s[2][k];
                        o[1][k] = (s[1][k] - s[2][k]) - s[3][k];
                    }
                    for (int i = 0; i < 2; i++)
                        for (int k = 0; k < 2; k++) {
                            int64_t oh = 2 * ty + i, ow = 2 * tx + k;
                            if (oh < OH && ow < OW) y[((n * M + m) * OH + oh) * OW + ow] = b ? o[i][k] + b[m] : o[i][k];
                        }
                }
            }
    free(u);
    free(v);
}

typedef struct wino_case {
    int64_t n, c, m, h, w;
    int64_t pads[4]; /* top, left, bottom, right */
    bool bias;
} wino_case;

/* The Conv of x and w (+ b, NULL: none) with these pads and dilation (1: no attribute), prepared and run-time
   weights, 1-3 threads: within float tolerance of the float64 ed, and every run exactly expect's bits (the sequence
   `seq` names); with the session's no_winograd, exactly the GEMM's chains (gemm) */
static void winograd_runs(const char *label, mrt_tensor *x, mrt_tensor *w, mrt_tensor *b, const int64_t pads[4],
                          int64_t d, const double *ed, const int64_t ys[4], const float *expect, const float *gemm,
                          const char *seq)
{
    int64_t yn = th_numel(4, ys);
    for (int prepared = 0; prepared < 2; prepared++)
        for (int threads = 1; threads <= 3; threads++)
            for (int off = 0; off < 2; off++) {
                if (off && threads > 1) continue; /* the GEMM's threads are test_sgemm's */
                th_case *c = th_begin("Conv", "", 22);
                th_input(c, x);
                if (prepared) th_input_const(c, w);
                else th_input(c, w);
                if (b) th_input_const(c, b);
                th_attr_ints(c, "pads", 4, pads);
                if (d != 1) th_attr_ints(c, "dilations", 2, (int64_t[]){d, d});
                mrt_session_options opt = mrt_session_options_default();
                opt.n_threads = threads;
                opt.no_winograd = off;
                mrt_tensor y;
                cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
                char what[200];
                snprintf(what, sizeof what, "%s, %s weights, %d threads%s", label, prepared ? "prepared" : "run-time",
                         threads, off ? ", no_winograd" : "");
                th_assert_close(&y, MRT_DTYPE_FLOAT, ed, 4, ys, what);
                const float *want = off ? gemm : expect;
                for (int64_t i = 0; i < yn; i++) {
                    float got = ((float *)y.data)[i];
                    cr_assert(memcmp(&got, &want[i], sizeof got) == 0, "%s: element %lld is %a, the %s gives %a", what,
                              (long long)i, (double)got, off ? "GEMM's chain" : seq, (double)want[i]);
                }
                mrt_tensor_release(&y);
                th_free(c);
            }
}

/* One case with prepared and run-time transformed weights on 1, 2 and 3 threads: within float tolerance of the
   float64 reference, and every run exactly winograd_chain_ref's bits; with the session's no_winograd, exactly the
   GEMM's chains (conv_chain_ref) */
static void run_winograd(th_rng *r, const wino_case *wc, const char *label)
{
    int64_t OH = wc->h + wc->pads[0] + wc->pads[2] - 2, OW = wc->w + wc->pads[1] + wc->pads[3] - 2;
    int64_t xs[4] = {wc->n, wc->c, wc->h, wc->w}, ws[4] = {wc->m, wc->c, 3, 3}, ys[4] = {wc->n, wc->m, OH, OW};
    mrt_conv_params p = {.n = wc->n, .c = wc->c, .m = wc->m, .group = 1, .kernel_numel = 9,
                         .win = {.nsp = 2, .in = {wc->h, wc->w}, .out = {OH, OW}, .kernel = {3, 3}, .stride = {1, 1},
                                 .dilation = {1, 1}, .pad_begin = {wc->pads[0], wc->pads[1]},
                                 .pad_end = {wc->pads[2], wc->pads[3]}}};
    cr_assert_gt(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, true, 1), 0, "%s: not a Winograd Conv", label);
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    mrt_tensor b = th_rand(r, MRT_DTYPE_FLOAT, 1, &wc->m, -1, 1);
    int64_t yn = th_numel(4, ys);
    float *expect = malloc((size_t)yn * sizeof(float));
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *ed = th_alloc_f64(yn);
    cr_assert(expect);
    winograd_chain_ref(wc->n, wc->c, wc->m, wc->h, wc->w, wc->pads[0], wc->pads[1], OH, OW, x.data, w.data,
                       wc->bias ? b.data : NULL, expect);
    lr_geom g = {.nsp = 2, .in = {wc->h, wc->w}, .kernel = {3, 3}, .stride = {1, 1}, .dilation = {1, 1},
                 .auto_pad = "NOTSET"};
    memcpy(g.pads, wc->pads, sizeof wc->pads);
    cr_assert(lr_geom_resolve(&g));
    lr_conv(&g, wc->n, wc->c, wc->m, 1, xd, wd, wc->bias ? bd : NULL, ed);
    conv_case cc = {2, wc->n, wc->c, wc->m, 1, {wc->h, wc->w}, {3, 3}, {1, 1}, {1, 1},
                    {wc->pads[0], wc->pads[1], wc->pads[2], wc->pads[3]}, "NOTSET", wc->bias, false, MRT_DTYPE_FLOAT, 22};
    float *gemm = malloc((size_t)yn * sizeof(float));
    cr_assert(gemm);
    conv_chain_ref(&cc, &g, x.data, w.data, wc->bias ? b.data : NULL, gemm);
    winograd_runs(label, &x, &w, wc->bias ? &b : NULL, wc->pads, 1, ed, ys, expect, gemm, "sequence");
    free(expect), free(gemm), free(xd), free(wd), free(bd), free(ed);
    mrt_tensor_release(&x), mrt_tensor_release(&w), mrt_tensor_release(&b);
}

/* A dilated 3x3 (dilation d, padding d, planes a multiple of 2 d) by Winograd on its d x d phases
   (mrt_conv_winograd_phases): output phase (a, b) is the undilated Conv of input phase (a, b), so every run must give
   winograd_chain_ref's bits on the phase-split input, scattered back; within float tolerance of the float64
   reference; with no_winograd, the GEMM's chains. Prepared and run-time weights, 1-3 threads. */
static void run_winograd_dilated(th_rng *r, int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t d,
                                 const char *label)
{
    int64_t xs[4] = {n, c, h, w}, ws[4] = {m, c, 3, 3}, ys[4] = {n, m, h, w}, pads[4] = {d, d, d, d};
    int64_t ph = h / d, pw = w / d, yn = n * m * h * w;
    mrt_conv_params p = {.n = n, .c = c, .m = m, .group = 1, .kernel_numel = 9,
                         .win = {.nsp = 2, .in = {h, w}, .out = {h, w}, .kernel = {3, 3}, .stride = {1, 1},
                                 .dilation = {d, d}, .pad_begin = {d, d}, .pad_end = {d, d}}};
    cr_assert_gt(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, true, 1), 0, "%s: not a Winograd Conv", label);
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), wt = th_rand(r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    mrt_tensor b = th_rand(r, MRT_DTYPE_FLOAT, 1, &m, -1, 1);
    float *xp = malloc((size_t)(n * c * h * w) * sizeof(float)), *yp = malloc((size_t)yn * sizeof(float));
    float *expect = malloc((size_t)yn * sizeof(float)), *gemm = malloc((size_t)yn * sizeof(float));
    cr_assert(xp && yp && expect && gemm);
    /* phase image (i, a, b) holds x[i, :, a + d r, b + d q] */
    for (int64_t i = 0; i < n; i++)
        for (int64_t a = 0; a < d; a++)
            for (int64_t bb = 0; bb < d; bb++)
                for (int64_t ch = 0; ch < c; ch++)
                    for (int64_t rr = 0; rr < ph; rr++)
                        for (int64_t q = 0; q < pw; q++)
                            xp[((((i * d + a) * d + bb) * c + ch) * ph + rr) * pw + q] =
                                ((const float *)x.data)[((i * c + ch) * h + a + d * rr) * w + bb + d * q];
    winograd_chain_ref(n * d * d, c, m, ph, pw, 1, 1, ph, pw, xp, wt.data, b.data, yp);
    for (int64_t i = 0; i < n; i++)
        for (int64_t a = 0; a < d; a++)
            for (int64_t bb = 0; bb < d; bb++)
                for (int64_t o = 0; o < m; o++)
                    for (int64_t rr = 0; rr < ph; rr++)
                        for (int64_t q = 0; q < pw; q++)
                            expect[((i * m + o) * h + a + d * rr) * w + bb + d * q] =
                                yp[((((i * d + a) * d + bb) * m + o) * ph + rr) * pw + q];
    lr_geom g = {.nsp = 2, .in = {h, w}, .kernel = {3, 3}, .stride = {1, 1}, .dilation = {d, d}, .auto_pad = "NOTSET"};
    memcpy(g.pads, pads, sizeof pads);
    cr_assert(lr_geom_resolve(&g));
    double *xd = th_to_f64(&x), *wd = th_to_f64(&wt), *bd = th_to_f64(&b), *ed = th_alloc_f64(yn);
    lr_conv(&g, n, c, m, 1, xd, wd, bd, ed);
    conv_case cc = {2, n, c, m, 1, {h, w}, {3, 3}, {1, 1}, {d, d}, {d, d, d, d}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22};
    conv_chain_ref(&cc, &g, x.data, wt.data, b.data, gemm);
    winograd_runs(label, &x, &wt, &b, pads, d, ed, ys, expect, gemm, "phases' sequence");
    free(xp), free(yp), free(expect), free(gemm), free(xd), free(wd), free(bd), free(ed);
    mrt_tensor_release(&x), mrt_tensor_release(&wt), mrt_tensor_release(&b);
}

/* FCN-ResNet50's layer3 (dilation 2 on 28x28) and around it: two images, k blocks ending mid-way (300 channels),
   dilation 3, non-square planes; odd phase planes (dilation 4 on 28x28: 7x7) stay on the GEMM */
Test(linear, conv_3x3_dilated_winograd_phases)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_winograd_dilated"));
    run_winograd_dilated(&r, 2, 40, 24, 16, 16, 2, "40 -> 24 at 16x16, dilation 2, 2 images");
    run_winograd_dilated(&r, 1, 300, 33, 24, 16, 2, "300 -> 33 at 24x16, dilation 2");
    run_winograd_dilated(&r, 1, 20, 40, 24, 36, 3, "20 -> 40 at 24x36, dilation 3");
    mrt_conv_params p = {.n = 1, .c = 512, .m = 512, .group = 1, .kernel_numel = 9,
                         .win = {.nsp = 2, .in = {28, 28}, .out = {28, 28}, .kernel = {3, 3}, .stride = {1, 1},
                                 .dilation = {4, 4}, .pad_begin = {4, 4}, .pad_end = {4, 4}}};
    cr_assert_eq(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, true, 2), 0, "dilation 4 at 28x28 took Winograd");
    p.win.dilation[0] = p.win.dilation[1] = 2;
    p.win.pad_begin[0] = p.win.pad_begin[1] = p.win.pad_end[0] = p.win.pad_end[1] = 2;
    cr_assert_gt(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, true, 2), 0, "dilation 2 at 28x28 did not take Winograd");
}

/* The phases with a fused BatchNormalization -> Add -> Relu: the epilogue runs over the output after the phases
   are put back (its residual is indexed by Y's layout), the unfused nodes' bits on 1 and 2 threads */
Test(linear, conv_3x3_dilated_winograd_with_a_fused_epilogue_keeps_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_winograd_dilated_fused"));
    fused_block_keeps_the_bits(&r, 40, 24, 2, 3, 16);
}

/* Geometries around the kernel's cuts: tile rows of 1 to 21 tiles (pieces of 16 and a tail), odd output sizes
   (a tile's second row or column dropped), asymmetric and zero padding, sub-blocks that start mid-row and images
   with enough of them to be the tasks (40 x 40: 400 tiles), channel counts around the 8-row panels, the 64-channel
   passes and the 256-deep k blocks (1000 input channels: past 512, a thread's transformed input out of L2), and a
   batch of 2. Over 32 output channels on planes of up to 256 positions
   (fewer go to ops_cpu/conv_grouped.c's lanes, gc_geometry). */
Test(linear, conv_3x3_winograd)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_winograd"));
    static const wino_case cases[] = {
        {1, 16, 80, 6, 6, {1, 1, 1, 1}, true},    {2, 17, 68, 9, 11, {1, 1, 1, 1}, false},
        {1, 16, 70, 14, 14, {1, 1, 1, 1}, true},  {1, 24, 80, 8, 9, {0, 0, 0, 0}, true},
        {1, 32, 33, 13, 42, {2, 0, 1, 2}, true},  {1, 20, 16, 40, 40, {1, 1, 1, 1}, false},
        {2, 300, 72, 7, 7, {1, 1, 1, 1}, true},   {1, 512, 80, 7, 8, {1, 1, 1, 1}, false},
        {1, 16, 130, 9, 35, {0, 1, 0, 1}, true},  {1, 1000, 40, 10, 12, {1, 1, 1, 1}, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const wino_case *wc = &cases[i];
        char label[160];
        snprintf(label, sizeof label, "n %lld c %lld m %lld %lldx%lld pads %lld %lld %lld %lld", (long long)wc->n,
                 (long long)wc->c, (long long)wc->m, (long long)wc->h, (long long)wc->w, (long long)wc->pads[0],
                 (long long)wc->pads[1], (long long)wc->pads[2], (long long)wc->pads[3]);
        run_winograd(&r, wc, label);
    }
}

/* A one-group 3x3 Conv with few outputs on a small plane takes conv_grouped.c's lanes when prepare packed W and the
   GEMM when it did not (a W computed at run time), the same chains: never Winograd, whose sums differ, whether W is
   packed or not (tiny_cnn's 16 -> 16 at 16x16 once took Winograd in one session and the lanes in another). */
Test(linear, conv_3x3_few_outputs_small_plane_never_winograd)
{
    mrt_conv_params p = {.n = 1, .c = 16, .m = 16, .group = 1, .kernel_numel = 9,
                         .win = {.nsp = 2, .in = {16, 16}, .out = {16, 16}, .kernel = {3, 3}, .stride = {1, 1},
                                 .dilation = {1, 1}, .pad_begin = {1, 1}, .pad_end = {1, 1}}};
    if (mrt_conv_grouped_floats(&p, MRT_DTYPE_FLOAT, 1) == 0) return; /* no lanes path on this CPU: Winograd alike */
    for (int packed = 0; packed < 2; packed++)
        cr_assert_eq(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, packed, 1), 0, "W %s: took Winograd",
                     packed ? "packed" : "not packed");
}

/* Winograd's transformed weights are 16/9 of W and serve at most 16 tiles on images of up to 8x8 outputs: past 2^20
   floats (4 MB) they are streamed from memory at every run, and such Convs take the GEMM (engine/opdef/conv.c).
   The rule is the shapes' alone; the Conv it excludes gives the GEMM's chains bit for bit (run_conv). */
Test(linear, conv_3x3_small_images_with_large_weights_take_the_gemm)
{
    static const struct {
        int64_t c, m, hw;
        bool winograd;
    } rule[] = {
        {512, 512, 7, false}, /* ResNet-18's layer4: 16 tiles, 16 M C = 4 Mi floats */
        {300, 256, 6, false}, /* 9 tiles */
        {256, 256, 7, true},  /* 16 M C = 2^20 exactly: kept */
        {512, 512, 14, true}, /* 49 tiles */
        {512, 512, 9, true},  /* 25 tiles */
        {2048, 512, 28, true},  /* FCN-ResNet50's head */
        {2049, 512, 28, false}, /* past MRT_WINOGRAD_MAX_C */
    };
    for (size_t i = 0; i < sizeof rule / sizeof *rule; i++) {
        mrt_conv_params p = {.n = 1, .c = rule[i].c, .m = rule[i].m, .group = 1, .kernel_numel = 9,
                             .win = {.nsp = 2, .in = {rule[i].hw, rule[i].hw}, .out = {rule[i].hw, rule[i].hw},
                                     .kernel = {3, 3}, .stride = {1, 1}, .dilation = {1, 1},
                                     .pad_begin = {1, 1}, .pad_end = {1, 1}}};
        cr_assert_eq(mrt_conv_winograd_floats(&p, MRT_DTYPE_FLOAT, true, 2) > 0, rule[i].winograd,
                     "%lld -> %lld at %lldx%lld: Winograd %s", (long long)rule[i].c, (long long)rule[i].m,
                     (long long)rule[i].hw, (long long)rule[i].hw, rule[i].winograd ? "expected" : "not expected");
    }
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_3x3_large_weights"));
    conv_case cc = {.nsp = 2, .n = 1, .c = 300, .m = 256, .group = 1, .in = {7, 7}, .k = {3, 3}, .s = {1, 1},
                    .d = {1, 1}, .pads = {1, 1, 1, 1}, .auto_pad = "NOTSET", .bias = true, .kernel_attr = true,
                    .dt = MRT_DTYPE_FLOAT, .threads = 2};
    run_conv(&r, &cc, "3x3 300 -> 256 at 7x7 on the GEMM");
}

/* Many small groups (RegNet, ResNeXt) go to the threads whole, each group's product serial: against the float64
   reference, and the same bits as one thread (where each product is split over nothing) */
Test(linear, conv_groups_split_over_threads_keep_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_groups_threads"));
    const int64_t shapes[][5] = {{1, 64, 8, 14, 1}, {2, 32, 2, 9, 2}, {1, 48, 12, 7, 1}}; /* n, c, group, size, stride */
    for (int i = 0; i < 3; i++) {
        const int64_t *sh = shapes[i];
        int64_t n = sh[0], c = sh[1], group = sh[2], hw = sh[3], st = sh[4], m = c;
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){n, c, hw, hw}, -1, 1);
        mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){m, c / group, 3, 3}, -1, 1);
        mrt_tensor b = th_rand(&r, MRT_DTYPE_FLOAT, 1, &m, -1, 1);
        mrt_tensor y[2];
        for (int t = 0; t < 2; t++) {
            th_case *cs = th_begin("Conv", "", 22);
            th_input(cs, &x);
            th_input_const(cs, &w);
            th_input_const(cs, &b);
            th_attr_int(cs, "group", group);
            th_attr_ints(cs, "pads", 4, (int64_t[]){1, 1, 1, 1});
            th_attr_ints(cs, "strides", 2, (int64_t[]){st, st});
            mrt_session_options opt = mrt_session_options_default();
            opt.n_threads = t + 1;
            cr_assert_eq(th_run_opt(cs, &opt, 1, &y[t]), MRT_STATUS_OK, "%s", mrt_last_error());
            th_free(cs);
        }
        cr_assert_eq(memcmp(y[0].data, y[1].data, mrt_tensor_nbytes(&y[0])), 0, "shape %d: 1 and 2 threads differ", i);
        lr_geom g;
        memset(&g, 0, sizeof g);
        g.nsp = 2;
        g.in[0] = g.in[1] = hw;
        g.kernel[0] = g.kernel[1] = 3;
        g.stride[0] = g.stride[1] = st;
        g.dilation[0] = g.dilation[1] = 1;
        for (int k = 0; k < 4; k++) g.pads[k] = 1;
        g.auto_pad = "NOTSET";
        cr_assert(lr_geom_resolve(&g));
        int64_t ys[4] = {n, m, g.out[0], g.out[1]};
        double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *ed = th_alloc_f64(th_numel(4, ys));
        lr_conv(&g, n, c, m, group, xd, wd, bd, ed);
        char label[64];
        snprintf(label, sizeof label, "grouped conv shape %d", i);
        th_assert_close(&y[1], MRT_DTYPE_FLOAT, ed, 4, ys, label);
        free(xd);
        free(wd);
        free(bd);
        free(ed);
        for (int t = 0; t < 2; t++) mrt_tensor_release(&y[t]);
        mrt_tensor_release(&x);
        mrt_tensor_release(&w);
        mrt_tensor_release(&b);
    }
}

/* Grouped convs with 4 or more output channels per group take ops_cpu/conv_grouped.c (channels as lanes): its
   3-wide row kernel at strides 1 and 2 (rows in pairs, an odd last one, a row's last block of positions past its
   end), the general one (5x5 dilated, asymmetric padding, K = 288 in two blocks), 4, 6, 8 and 12 of 16 lanes, two blocks
   per group, bands of rows (a 64-wide image; a 190-wide one whose rows bound the band), rows copied in whole
   vectors between their padded ends (50 and 41 wide, stride 2, with and without a left pad), one group on planes of
   up to 256 positions with up to 32 output channels (conv_grouped.c's gc_geometry), two blocks at once in halves of
   the outputs (gc_block2, K over 256 or kernels other than 3 wide), batch 2, 1 and 2 threads;
   24 per group (not a multiple of 16) and 3 stay on the GEMM. Each is checked bit for bit against the GEMM's chain. */
Test(linear, conv_grouped_channels_as_lanes)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_grouped_lanes"));
    static const struct {
        int64_t n, c, m, group, h, w, k0, k1, s, d, pads[4];
        bool bias;
    } cases[] = {
        {1, 64, 64, 4, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}, true},     /* RegNet's 7x7 stage: 16 per group */
        {2, 32, 64, 2, 14, 14, 3, 3, 2, 1, {1, 1, 1, 1}, false},  /* 32 out per group: two blocks, stride 2 */
        {1, 64, 32, 2, 9, 11, 3, 3, 1, 1, {1, 1, 1, 1}, true},    /* 32 in per group: K = 288, two k blocks */
        {1, 24, 24, 3, 12, 10, 5, 5, 1, 2, {3, 1, 4, 2}, true},   /* 8 per group, 5x5 dilated */
        {1, 24, 36, 3, 8, 8, 1, 3, 1, 1, {0, 1, 0, 1}, false},    /* 12 per group, a 1x3 kernel */
        {1, 32, 32, 2, 64, 64, 3, 3, 1, 1, {1, 1, 1, 1}, true},   /* four bands */
        {1, 32, 32, 2, 20, 190, 3, 3, 1, 1, {1, 1, 1, 1}, false}, /* bands bounded by the input rows */
        {1, 48, 48, 2, 10, 10, 3, 3, 1, 1, {1, 1, 1, 1}, true},   /* 24 per group: the GEMM */
        {1, 128, 128, 32, 20, 23, 3, 3, 1, 1, {1, 1, 1, 1}, true}, /* ResNeXt-50's layer1: 4 per group */
        {2, 24, 24, 4, 11, 9, 3, 3, 2, 1, {1, 1, 1, 1}, false},   /* 6 per group, stride 2 */
        {1, 12, 12, 4, 9, 9, 3, 3, 1, 1, {1, 1, 1, 1}, true},     /* 3 per group: the GEMM */
        {1, 32, 32, 2, 30, 50, 3, 3, 2, 1, {1, 1, 1, 1}, false},  /* stride 2 on 50-wide rows: whole-vector copies */
        {1, 32, 32, 2, 12, 41, 3, 3, 2, 1, {0, 0, 1, 2}, true},   /* no left pad: whole vectors from column 0 */
        {1, 128, 32, 1, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}, false},   /* one group (DenseNet's 7x7): K = 1152, 5 k blocks */
        {2, 40, 24, 1, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, true},   /* one group, 196 positions, a half block */
        {1, 24, 16, 1, 9, 13, 5, 5, 2, 1, {2, 2, 2, 2}, true},    /* one group, 5x5 stride 2 */
        {1, 64, 64, 2, 10, 12, 5, 5, 1, 1, {2, 2, 2, 2}, true},   /* 32 per group, K = 800: two blocks at once */
        {1, 32, 32, 1, 3, 4, 3, 3, 1, 1, {1, 1, 1, 1}, false},    /* 12 positions: the second half empty */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 1; t <= 2; t++) {
            conv_case cc = {.nsp = 2, .n = cases[i].n, .c = cases[i].c, .m = cases[i].m, .group = cases[i].group,
                            .in = {cases[i].h, cases[i].w}, .k = {cases[i].k0, cases[i].k1},
                            .s = {cases[i].s, cases[i].s}, .d = {cases[i].d, cases[i].d}, .auto_pad = "NOTSET",
                            .bias = cases[i].bias, .kernel_attr = true, .dt = MRT_DTYPE_FLOAT, .threads = t};
            memcpy(cc.pads, cases[i].pads, sizeof cases[i].pads);
            char label[96];
            snprintf(label, sizeof label, "grouped case %zu (%lld -> %lld, group %lld), %d thread(s)", i,
                     (long long)cc.c, (long long)cc.m, (long long)cc.group, t);
            run_conv(&r, &cc, label);
        }
}

/* 1x1 Convs on planes of 4 to 256 positions with 16 or more output channels, no more than input channels, take
   ops_cpu/conv_pointwise.c (output channels as lanes, 7 positions a tile, chunks of up to 112 positions, panels of
   up to three 16-channel blocks): the GEMM's chains bit for bit */
Test(linear, conv_pointwise_channels_as_lanes)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_pointwise_lanes"));
    static const struct {
        int64_t n, c, m, h, w;
        bool bias;
    } cases[] = {
        {1, 576, 96, 14, 14, true},  /* MobileNetV2's 14x14 projection: three k blocks, two chunks, two panels */
        {1, 960, 160, 7, 7, false},  /* its 7x7 one: four k blocks, ten blocks as panels of 2, 3, 2, 3 */
        {1, 576, 576, 14, 14, true}, /* twelve full panels */
        {2, 40, 40, 16, 16, true},   /* a partial last block (8 channels), two images, the largest plane */
        {1, 17, 17, 5, 3, false},    /* 15 positions: a tile of one; a block of one channel */
        {1, 33, 16, 2, 2, true},     /* the smallest plane: one tile, its last three positions repeats */
        {1, 48, 48, 15, 17, true},   /* 255 positions: three chunks of 91, 91 and 73 (two panels on 2 threads) */
        {1, 320, 320, 7, 7, false},  /* twenty blocks: seven panels, eight on 2 threads (as many per thread) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 1; t <= 2; t++) {
            conv_case cc = {.nsp = 2, .n = cases[i].n, .c = cases[i].c, .m = cases[i].m, .group = 1,
                            .in = {cases[i].h, cases[i].w}, .k = {1, 1}, .s = {1, 1}, .d = {1, 1},
                            .auto_pad = "NOTSET", .bias = cases[i].bias, .kernel_attr = true, .dt = MRT_DTYPE_FLOAT,
                            .threads = t};
            char label[96];
            snprintf(label, sizeof label, "pointwise case %zu (%lld -> %lld at %lldx%lld), %d thread(s)", i,
                     (long long)cc.c, (long long)cc.m, (long long)cc.in[0], (long long)cc.in[1], t);
            run_conv(&r, &cc, label);
        }
    /* 1-D and 3-D: the path takes a plane's positions as one flat run (against the float64 reference only) */
    for (int t = 1; t <= 2; t++) {
        conv_case c1 = {.nsp = 1, .n = 2, .c = 40, .m = 32, .group = 1, .in = {100}, .k = {1}, .s = {1}, .d = {1},
                        .auto_pad = "NOTSET", .bias = true, .kernel_attr = true, .dt = MRT_DTYPE_FLOAT, .threads = t};
        run_conv(&r, &c1, "pointwise 1-D, 100 positions");
        conv_case c3 = {.nsp = 3, .n = 1, .c = 300, .m = 20, .group = 1, .in = {3, 5, 7}, .k = {1, 1, 1},
                        .s = {1, 1, 1}, .d = {1, 1, 1}, .auto_pad = "NOTSET", .bias = false, .kernel_attr = true,
                        .dt = MRT_DTYPE_FLOAT, .threads = t};
        run_conv(&r, &c3, "pointwise 3-D, 105 positions");
    }
}

Test(linear, conv_pointwise_and_halves)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_pointwise_and_halves"));
    /* 1x1 stride-1 unpadded: the direct GEMM path, with and without groups */
    conv_case cc = {2, 2, 16, 24, 1, {7, 5}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22};
    run_conv(&r, &cc, "pointwise");
    cc.group = 4;
    run_conv(&r, &cc, "pointwise grouped");
    cc.s[0] = 2;
    run_conv(&r, &cc, "1x1 stride 2");
    conv_case h = {2, 1, 3, 4, 1, {6, 5}, {3, 2}, {1, 2}, {1, 1}, {1, 0, 1, 1}, "NOTSET", true, true,
                   MRT_DTYPE_FLOAT16, 22};
    run_conv(&r, &h, "float16");
    h.dt = MRT_DTYPE_BFLOAT16;
    run_conv(&r, &h, "bfloat16");
    conv_case big = {2, 1, 8, 16, 1, {17, 13}, {3, 3}, {2, 1}, {1, 2}, {1, 2, 0, 1}, "NOTSET", true, false,
                     MRT_DTYPE_FLOAT, 22};
    run_conv(&r, &big, "larger 2D");
    /* a squeeze-excite 1x1 convolution on a [1, C, 1, 1] input: one column, the matrix-vector path */
    conv_case se = {2, 1, 40, 10, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22};
    run_conv(&r, &se, "squeeze-excite 1x1 on 1x1");
    se.dt = MRT_DTYPE_DOUBLE;
    run_conv(&r, &se, "squeeze-excite 1x1 on 1x1, double");
}

/* run_conv on each case, on 1 to max_threads threads, labelled by its plane, channels and kernel */
static void run_conv_cases(th_rng *r, const conv_case *cases, size_t n, int max_threads)
{
    for (int threads = 1; threads <= max_threads; threads++)
        for (size_t i = 0; i < n; i++) {
            conv_case cc = cases[i];
            cc.threads = threads;
            char label[96];
            snprintf(label, sizeof label, "%lldx%lld, c %lld m %lld, kernel %lld, %d threads", (long long)cc.in[0],
                     (long long)cc.in[1], (long long)cc.c, (long long)cc.m, (long long)cc.k[0], threads);
            run_conv(r, &cc, label);
        }
}

/* Images large enough for the paths' long loops, on 1 and 2 threads, against the GEMM's chains bit for bit: a 1x1
   with a short k on the packed GEMM (strips of many panels), 1x1s read in place (strips of up to 1536 columns
   for k = 32, a partial last strip and a tail; an expansion, two images), and stems on the rows path (blocks of
   16 output rows, the last one partial; 20 and 13 output channels: a partial panel) */
Test(linear, conv_large_images)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_large_images"));
    const conv_case cases[] = {
        {2, 1, 16, 96, 1, {72, 72}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 32, 16, 1, {47, 81}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        /* an expansion read in place on a large plane: tasks strip-major, as for the projections */
        {2, 2, 16, 48, 1, {57, 56}, {1, 1}, {1, 1}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 3, 32, 1, {70, 66}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 2, 3, 20, 1, {61, 60}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, "NOTSET", false, false, MRT_DTYPE_FLOAT, 22, 0},
        /* rows ending in at most 16 columns after the full tiles (64 = 48 + 16, 56 = 48 + 8): two rows' ends in one
           tile, a block's odd last row alone (37 and 38 rows: blocks of 16, 16 and 5 or 6) */
        {2, 1, 3, 20, 1, {74, 128}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 3, 13, 1, {75, 112}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
    };
    run_conv_cases(&r, cases, sizeof cases / sizeof *cases, 2);
}

/* Unpadded windows with a column stride past 2 pack B straight from the image (ops_cpu/conv.c): ViT's 16x16/16
   patches (k = 768: three k blocks, one partial panel), Swin's 4x4/4 (196 positions: five panels), 3x3/3, 2x2 at
   stride 4 (columns no window reads), dilation 2 at stride 3, row stride 1 with column stride 3, two images of two
   groups; 1 and 2 threads, against the GEMM's chains bit for bit */
Test(linear, conv_unpadded_wide_strides)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_unpadded_wide_strides"));
    const conv_case cases[] = {
        {2, 1, 3, 40, 1, {64, 48}, {16, 16}, {16, 16}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 3, 48, 1, {56, 56}, {4, 4}, {4, 4}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 5, 36, 1, {20, 17}, {3, 3}, {3, 3}, {1, 1}, {0}, "NOTSET", false, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 4, 36, 1, {23, 21}, {2, 2}, {4, 4}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 2, 34, 1, {25, 25}, {3, 3}, {3, 3}, {2, 2}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 4, 40, 1, {10, 50}, {3, 3}, {1, 3}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 2, 4, 80, 2, {32, 32}, {4, 4}, {4, 4}, {1, 1}, {0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
    };
    run_conv_cases(&r, cases, sizeof cases / sizeof *cases, 2);
}

/* The stems' rows path fills, per block of 16 output rows, the input rows the block reads into the thread's own
   slot: blocks whose rows start in the top padding, overlap the next block's (stride 1, dilation 2), or are the
   whole image (fewer rows than a block reads), on 1 to 3 threads, against the GEMM's chains bit for bit */
Test(linear, conv_stem_row_blocks)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_stem_row_blocks"));
    const conv_case cases[] = {
        {2, 2, 3, 16, 1, {9, 40}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 4, 24, 1, {53, 50}, {5, 5}, {1, 2}, {1, 1}, {2, 1, 3, 2}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
        {2, 1, 3, 32, 1, {67, 35}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", false, false, MRT_DTYPE_FLOAT, 22,
         0},
        {2, 1, 1, 8, 1, {40, 20}, {7, 7}, {2, 1}, {1, 2}, {3, 6, 3, 6}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22, 0},
    };
    run_conv_cases(&r, cases, sizeof cases / sizeof *cases, 3);
}

Test(linear, conv_empty_batch)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_empty_batch"));
    conv_case cc = {2, 0, 2, 3, 1, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "NOTSET", true, false,
                    MRT_DTYPE_FLOAT, 22};
    run_conv(&r, &cc, "N = 0");
    conv_case z = {1, 1, 0, 2, 1, {5}, {2}, {1}, {1}, {0, 0}, "NOTSET", true, false, MRT_DTYPE_FLOAT, 22};
    run_conv(&r, &z, "C = 0 (bias only)");
}

Test(linear, conv_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.conv_errors"));
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {2, 3, 3, 3}, ws2[4] = {2, 4, 3, 3}, bl = 3, ws3[4] = {2, 4, 7, 7};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    mrt_tensor w2 = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws2, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 1, &bl, -1, 1);
    mrt_tensor w3 = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws3, -1, 1);
    mrt_tensor wd = th_rand(&r, MRT_DTYPE_DOUBLE, 4, ws2, -1, 1);

    th_case *c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    th_expect_failure(c, 1, "'W'", "channel mismatch");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w2);
    th_input_const(c, &b);
    th_expect_failure(c, 1, "'B'", "bias length");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w3);
    th_expect_failure(c, 1, "smaller than the window", "kernel larger than input");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w2);
    th_attr_int(c, "group", 3);
    th_expect_failure(c, 1, "group", "group does not divide channels");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &wd);
    th_expect_failure(c, 1, "dtype", "dtype mismatch");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w2);
    th_attr_ints(c, "pads", 2, (int64_t[]){1, 1});
    th_expect_failure(c, 1, "pads", "pads of the wrong length");

    c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w2);
    th_attr_string(c, "auto_pad", "SAME");
    th_expect_failure(c, 1, "auto_pad", "bad auto_pad");

    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&w2);
    mrt_tensor_release(&w3);
    mrt_tensor_release(&wd);
    mrt_tensor_release(&b);
}

/* ------------------------------------------------------------------ ConvTranspose */

typedef struct convt_case {
    int nsp;
    int64_t n, c, m, group;
    int64_t in[3], k[3], s[3], d[3], pads[6], out_pad[3], out_shape[3];
    const char *auto_pad;
    bool bias, use_out_shape;
    mrt_dtype dt;
} convt_case;

static void run_convt(th_rng *r, const convt_case *cc, const char *label)
{
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = cc->nsp;
    for (int i = 0; i < cc->nsp; i++) {
        g.in[i] = cc->in[i];
        g.kernel[i] = cc->k[i];
        g.stride[i] = cc->s[i];
        g.dilation[i] = cc->d[i];
        g.pads[i] = cc->pads[i];
        g.pads[cc->nsp + i] = cc->pads[cc->nsp + i];
    }
    g.auto_pad = cc->auto_pad;
    cr_assert(lr_geom_resolve_transposed(&g, cc->out_pad, cc->use_out_shape ? cc->out_shape : NULL),
              "%s: the test built an invalid geometry", label);
    int rank = cc->nsp + 2;
    int64_t xs[5] = {cc->n, cc->c}, ws[5] = {cc->c, cc->m / cc->group}, ys[5] = {cc->n, cc->m};
    for (int i = 0; i < cc->nsp; i++) {
        xs[i + 2] = cc->in[i];
        ws[i + 2] = cc->k[i];
        ys[i + 2] = g.out[i];
    }
    mrt_tensor x = th_rand(r, cc->dt, rank, xs, -1, 1), w = th_rand(r, cc->dt, rank, ws, -1, 1);
    mrt_tensor b = th_rand(r, cc->dt, 1, &cc->m, -1, 1);
    th_case *c = th_begin("ConvTranspose", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    if (cc->bias) th_input_const(c, &b);
    if (cc->group != 1) th_attr_int(c, "group", cc->group);
    th_attr_ints(c, "strides", cc->nsp, cc->s);
    th_attr_ints(c, "dilations", cc->nsp, cc->d);
    th_attr_ints(c, "output_padding", cc->nsp, cc->out_pad);
    if (cc->use_out_shape) th_attr_ints(c, "output_shape", cc->nsp, cc->out_shape);
    if (strcmp(cc->auto_pad, "NOTSET") == 0) th_attr_ints(c, "pads", 2 * cc->nsp, cc->pads);
    else th_attr_string(c, "auto_pad", cc->auto_pad);
    mrt_tensor y;
    mrt_status st = th_run(c, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *bd = th_to_f64(&b), *ed = th_alloc_f64(th_numel(rank, ys));
    lr_convtranspose(&g, cc->n, cc->c, cc->m, cc->group, xd, wd, cc->bias ? bd : NULL, ed);
    th_assert_close(&y, cc->dt, ed, rank, ys, label);
    free(xd);
    free(wd);
    free(bd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    mrt_tensor_release(&b);
    th_free(c);
}

Test(linear, convtranspose_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.convtranspose_random"));
    for (int it = 0; it < 40; it++) {
        convt_case cc;
        memset(&cc, 0, sizeof cc);
        cc.nsp = 1 + it % 3;
        cc.group = th_rng_int(&r, 0, 1) ? 1 : th_rng_int(&r, 2, 3);
        cc.c = cc.group * th_rng_int(&r, 1, 2);
        cc.m = cc.group * th_rng_int(&r, 1, 3);
        cc.n = th_rng_int(&r, 1, 2);
        int mode = (int)th_rng_int(&r, 0, 4); /* 0-1 pads, 2 output_shape, 3 SAME_UPPER, 4 SAME_LOWER */
        cc.auto_pad = mode == 3 ? "SAME_UPPER" : mode == 4 ? "SAME_LOWER" : "NOTSET";
        cc.use_out_shape = mode == 2;
        for (int i = 0; i < cc.nsp; i++) {
            cc.k[i] = th_rng_int(&r, 1, 3);
            cc.s[i] = th_rng_int(&r, 1, 3);
            cc.d[i] = th_rng_int(&r, 1, 2);
            cc.in[i] = th_rng_int(&r, 1, cc.nsp == 3 ? 3 : 5);
            int64_t ek = (cc.k[i] - 1) * cc.d[i] + 1;
            cc.out_pad[i] = th_rng_int(&r, 0, cc.s[i] - 1);
            int64_t natural = cc.s[i] * (cc.in[i] - 1) + cc.out_pad[i] + ek;
            int64_t pmax = ek / 2 < (natural - 1) / 2 ? ek / 2 : (natural - 1) / 2;
            cc.pads[i] = th_rng_int(&r, 0, pmax);
            cc.pads[cc.nsp + i] = th_rng_int(&r, 0, pmax);
            cc.out_shape[i] = natural - th_rng_int(&r, -1, natural > 2 ? 2 : natural - 1);
        }
        cc.bias = th_rng_int(&r, 0, 1);
        cc.dt = it % 2 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        char label[160];
        snprintf(label, sizeof label, "case %d (%dD group %lld mode %d)", it, cc.nsp, (long long)cc.group, mode);
        run_convt(&r, &cc, label);
    }
    convt_case h = {2, 1, 2, 3, 1, {3, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 0}, {0}, "NOTSET", true,
                    false, MRT_DTYPE_FLOAT16};
    run_convt(&r, &h, "float16");
}

Test(linear, convtranspose_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.convtranspose_errors"));
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {3, 2, 3, 3};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    th_case *c = th_begin("ConvTranspose", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    th_expect_failure(c, 1, "'W'", "channel mismatch");
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
}

/* ------------------------------------------------------------------ ConvInteger */

Test(linear, convinteger)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.convinteger"));
    for (int it = 0; it < 6; it++) {
        mrt_dtype xdt = it % 2 ? MRT_DTYPE_INT8 : MRT_DTYPE_UINT8, wdt = it % 3 ? MRT_DTYPE_UINT8 : MRT_DTYPE_INT8;
        int64_t group = it >= 4 ? 2 : 1, c = 2 * group, m = 2 * group;
        int64_t xs[4] = {2, c, 5, 6}, ws[4] = {m, c / group, 3, 2}, ys[4] = {2, m, 0, 0};
        double lo_x = xdt == MRT_DTYPE_INT8 ? -128 : 0, hi_x = xdt == MRT_DTYPE_INT8 ? 127 : 255;
        double lo_w = wdt == MRT_DTYPE_INT8 ? -128 : 0, hi_w = wdt == MRT_DTYPE_INT8 ? 127 : 255;
        mrt_tensor x = th_rand(&r, xdt, 4, xs, lo_x, hi_x), w = th_rand(&r, wdt, 4, ws, lo_w, hi_w);
        mrt_tensor xz = th_rand(&r, xdt, 0, NULL, lo_x, hi_x);
        bool per_channel = it % 2 == 0;
        mrt_tensor wz = th_rand(&r, wdt, per_channel ? 1 : 0, &m, lo_w, hi_w);
        lr_geom g;
        memset(&g, 0, sizeof g);
        g.nsp = 2;
        g.in[0] = 5, g.in[1] = 6, g.kernel[0] = 3, g.kernel[1] = 2;
        g.stride[0] = 1, g.stride[1] = 2, g.dilation[0] = g.dilation[1] = 1;
        int64_t pads[4] = {1, 0, 1, 1};
        memcpy(g.pads, pads, sizeof pads);
        g.auto_pad = "NOTSET";
        cr_assert(lr_geom_resolve(&g));
        ys[2] = g.out[0];
        ys[3] = g.out[1];
        th_case *tc = th_begin("ConvInteger", "", 10);
        th_input(tc, &x);
        th_input_const(tc, &w);
        th_input_const(tc, &xz);
        th_input_const(tc, &wz);
        th_attr_ints(tc, "pads", 4, pads);
        th_attr_ints(tc, "strides", 2, (int64_t[]){1, 2});
        if (group != 1) th_attr_int(tc, "group", group);
        mrt_tensor y;
        cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *xzd = th_to_f64(&xz), *wzd = th_to_f64(&wz);
        for (int64_t i = 0; i < th_numel(4, xs); i++) xd[i] -= xzd[0];
        int64_t per = th_numel(4, ws) / m;
        for (int64_t i = 0; i < th_numel(4, ws); i++) wd[i] -= wzd[per_channel ? i / per : 0];
        double *ed = th_alloc_f64(th_numel(4, ys));
        lr_conv(&g, 2, c, m, group, xd, wd, NULL, ed);
        th_assert_close(&y, MRT_DTYPE_INT32, ed, 4, ys, "ConvInteger");
        free(xd);
        free(wd);
        free(xzd);
        free(wzd);
        free(ed);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&w);
        mrt_tensor_release(&xz);
        mrt_tensor_release(&wz);
        th_free(tc);
    }
}

/* ------------------------------------------------------------------ Gemm */

static void run_gemm(th_rng *r, mrt_dtype dt, int opset, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     int c_rank, const int64_t *c_shape, bool has_c, float alpha, float beta, const char *label)
{
    int64_t as[2] = {ta ? k : m, ta ? m : k}, bs[2] = {tb ? n : k, tb ? k : n}, ys[2] = {m, n};
    bool is_int = !mrt_dtype_is_float(dt);
    double lo = is_int ? -20 : -1, hi = is_int ? 20 : 1;
    mrt_tensor a = th_rand(r, dt, 2, as, lo, hi), b = th_rand(r, dt, 2, bs, lo, hi);
    mrt_tensor c = th_rand(r, dt, c_rank, c_shape, lo, hi);
    th_case *tc = th_begin("Gemm", "", opset);
    th_input(tc, &a);
    th_input(tc, &b);
    if (has_c) th_input(tc, &c);
    if (ta) th_attr_int(tc, "transA", 1);
    if (tb) th_attr_int(tc, "transB", 1);
    if (alpha != 1.0f) th_attr_float(tc, "alpha", alpha);
    if (beta != 1.0f) th_attr_float(tc, "beta", beta);
    if (opset < 7) th_attr_int(tc, "broadcast", 1);
    mrt_tensor y;
    cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    double *ad = th_to_f64(&a), *bd = th_to_f64(&b), *cd = th_to_f64(&c), *ed = th_alloc_f64(m * n);
    lr_gemm(ta, tb, m, n, k, alpha, beta, ad, bd, has_c ? cd : NULL, c_rank, c_shape, ed);
    th_assert_close(&y, dt, ed, 2, ys, label);
    free(ad);
    free(bd);
    free(cd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&c);
    th_free(tc);
}

Test(linear, gemm_all_forms)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.gemm_all_forms"));
    int64_t m = 5, n = 7, k = 4;
    struct {
        int rank;
        int64_t shape[2];
        bool present;
    } cs[] = {{0, {0}, false}, {0, {0}, true},    {1, {1}, true},    {1, {7}, true},
              {2, {1, 7}, true}, {2, {5, 1}, true}, {2, {5, 7}, true}, {2, {1, 1}, true}};
    for (int t = 0; t < 4; t++)
        for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
            for (int d = 0; d < 2; d++) {
                char label[128];
                snprintf(label, sizeof label, "transA %d transB %d C case %zu %s", t & 1, t >> 1, ci, d ? "double" : "float");
                run_gemm(&r, d ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 13, t & 1, t >> 1, m, n, k, cs[ci].rank,
                         cs[ci].shape, cs[ci].present, ci % 2 ? 0.5f : 1.0f, ci % 3 ? 2.0f : 1.0f, label);
            }
    int64_t vn[1] = {7}, mn[2] = {5, 7};
    run_gemm(&r, MRT_DTYPE_FLOAT, 6, false, true, m, n, k, 1, vn, true, 1.0f, 1.0f, "opset 6 broadcast");
    run_gemm(&r, MRT_DTYPE_FLOAT, 9, true, false, m, n, k, 2, mn, true, 1.5f, 0.0f, "opset 9 beta 0");
    run_gemm(&r, MRT_DTYPE_INT32, 13, false, false, m, n, k, 1, vn, true, 1.0f, 1.0f, "int32");
    run_gemm(&r, MRT_DTYPE_INT64, 13, true, true, m, n, k, 2, mn, true, 1.0f, 1.0f, "int64");
    run_gemm(&r, MRT_DTYPE_FLOAT16, 13, false, true, m, n, k, 1, vn, true, 1.0f, 1.0f, "float16");
    run_gemm(&r, MRT_DTYPE_FLOAT, 13, false, false, 0, n, k, 1, vn, true, 1.0f, 1.0f, "M = 0");
    run_gemm(&r, MRT_DTYPE_FLOAT, 13, false, false, m, n, 0, 1, vn, true, 1.0f, 1.0f, "K = 0");
    run_gemm(&r, MRT_DTYPE_FLOAT, 13, false, false, 33, 65, 130, 1, (int64_t[]){65}, true, 1.0f, 1.0f, "larger");
    /* one output column: minirt's own matrix-vector path (ops_cpu/matvec.c), k past its 16 lanes plus a tail */
    for (int t = 0; t < 4; t++)
        for (int d = 0; d < 2; d++) {
            char label[96];
            snprintf(label, sizeof label, "N = 1, transA %d transB %d %s", t & 1, t >> 1, d ? "double" : "float");
            run_gemm(&r, d ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT, 13, t & 1, t >> 1, 9, 1, 45, 2,
                     (int64_t[]){9, 1}, true, 0.5f, t == 2 ? 0.0f : 1.5f, label);
        }
}

Test(linear, gemm_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.gemm_errors"));
    int64_t as[2] = {3, 4}, bs[2] = {5, 6}, b2[2] = {4, 6}, cs[2] = {2, 6};
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 2, as, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 2, bs, -1, 1);
    mrt_tensor bb = th_rand(&r, MRT_DTYPE_FLOAT, 2, b2, -1, 1), c = th_rand(&r, MRT_DTYPE_FLOAT, 2, cs, -1, 1);
    mrt_tensor cv = th_rand(&r, MRT_DTYPE_FLOAT, 1, &b2[1], -1, 1);
    th_case *tc = th_begin("Gemm", "", 13);
    th_input(tc, &a);
    th_input(tc, &b);
    th_expect_failure(tc, 1, "inner dimensions", "K mismatch");
    tc = th_begin("Gemm", "", 13);
    th_input(tc, &a);
    th_input(tc, &bb);
    th_input(tc, &c);
    th_expect_failure(tc, 1, "'C'", "C does not broadcast");
    tc = th_begin("Gemm", "", 6);
    th_input(tc, &a);
    th_input(tc, &bb);
    th_input(tc, &cv);
    th_expect_failure(tc, 1, "'C'", "opset 6 without broadcast");
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&bb);
    mrt_tensor_release(&c);
    mrt_tensor_release(&cv);
}

/* ------------------------------------------------------------------ MatMul */

static void run_matmul(th_rng *r, mrt_dtype dt, int ra, const int64_t *as, int rb, const int64_t *bs,
                       const char *label)
{
    bool is_int = !mrt_dtype_is_float(dt);
    mrt_tensor a = th_rand(r, dt, ra, as, is_int ? -9 : -1, is_int ? 9 : 1);
    mrt_tensor b = th_rand(r, dt, rb, bs, is_int ? -9 : -1, is_int ? 9 : 1);
    int yr;
    int64_t ys[16];
    cr_assert(lr_matmul_shape(ra, as, rb, bs, &yr, ys), "%s: bad test shapes", label);
    th_case *tc = th_begin("MatMul", "", 13);
    th_input(tc, &a);
    th_input_const(tc, &b);
    mrt_tensor y;
    cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    double *ad = th_to_f64(&a), *bd = th_to_f64(&b), *ed = th_alloc_f64(th_numel(yr, ys));
    lr_matmul(ra, as, ad, rb, bs, bd, ed, NULL, 0, NULL, 0);
    th_assert_close(&y, dt, ed, yr, ys, label);
    free(ad);
    free(bd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    th_free(tc);
}

Test(linear, matmul_shapes)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.matmul_shapes"));
    struct {
        int ra;
        int64_t as[4];
        int rb;
        int64_t bs[4];
    } cases[] = {
        {1, {4}, 1, {4}},
        {1, {3}, 3, {2, 3, 5}},
        {3, {2, 3, 4}, 1, {4}},
        {2, {3, 4}, 2, {4, 5}},
        {4, {2, 1, 3, 4}, 3, {5, 4, 6}},
        {3, {2, 3, 4}, 2, {4, 6}},
        {2, {4, 5}, 3, {3, 5, 2}},
        {3, {1, 3, 4}, 3, {2, 4, 5}},
        {4, {2, 3, 4, 5}, 4, {2, 1, 5, 3}},
        {1, {6}, 2, {6, 1}},
        {2, {3, 0}, 2, {0, 4}},
        {2, {0, 4}, 2, {4, 3}},
        {3, {0, 2, 3}, 2, {3, 2}},
        {2, {40, 70}, 2, {70, 33}},
        {2, {7, 50}, 2, {50, 1}},     /* one column: the matrix-vector path */
        {3, {2, 5, 33}, 1, {33}},
    };
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_UINT32,
                       MRT_DTYPE_FLOAT16};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            if (dts[d] == MRT_DTYPE_UINT32 && i % 3) continue;
            char label[96];
            snprintf(label, sizeof label, "case %zu %s", i, mrt_dtype_name(dts[d]));
            /* uint32 data must be non-negative: th_rand draws [-9, 9], so use int64 ranges via a float type */
            if (dts[d] == MRT_DTYPE_UINT32) {
                mrt_tensor a = th_rand(&r, MRT_DTYPE_UINT32, cases[i].ra, cases[i].as, 0, 9);
                mrt_tensor b = th_rand(&r, MRT_DTYPE_UINT32, cases[i].rb, cases[i].bs, 0, 9);
                int yr;
                int64_t ys[16];
                lr_matmul_shape(cases[i].ra, cases[i].as, cases[i].rb, cases[i].bs, &yr, ys);
                th_case *tc = th_begin("MatMul", "", 13);
                th_input(tc, &a);
                th_input(tc, &b);
                mrt_tensor y;
                cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
                double *ad = th_to_f64(&a), *bd = th_to_f64(&b), *ed = th_alloc_f64(th_numel(yr, ys));
                lr_matmul(cases[i].ra, cases[i].as, ad, cases[i].rb, cases[i].bs, bd, ed, NULL, 0, NULL, 0);
                th_assert_close(&y, MRT_DTYPE_UINT32, ed, yr, ys, label);
                free(ad);
                free(bd);
                free(ed);
                mrt_tensor_release(&y);
                mrt_tensor_release(&a);
                mrt_tensor_release(&b);
                th_free(tc);
                continue;
            }
            run_matmul(&r, dts[d], cases[i].ra, cases[i].as, cases[i].rb, cases[i].bs, label);
        }
}

/* One row's sum as ops_cpu/matvec.c defines it: 16 partial sums (term k into sum k mod 16, in order, from +0), folded
   pairwise (8, 4, 2, 1). */
static float matvec_chain_ref(const float *row, const float *x, int64_t k)
{
    float acc[16] = {0};
    for (int64_t kk = 0; kk < k; kk++) acc[kk % 16] += row[kk] * x[kk];
    for (int w = 8; w > 0; w /= 2)
        for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    return acc[0];
}

/* Batched matrix-vector MatMuls [B, m, k] x [B, k, 1] (ConvBERT's lightweight convolutions: 192 x [64, 9] x [9, 1]):
   short rows 16 at a time as lanes, a row tail of fewer than 16, k over and under 16, batches over 1 and 2
   threads; the matrix-vector order bit for bit and float64 closeness. */
Test(linear, matmul_batched_matrix_vector)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.matmul_batched_matvec"));
    const int64_t cases[][3] = {{24, 64, 9}, {5, 37, 16}, {9, 16, 17}, {12, 50, 32}, {8, 21, 1}, {6, 19, 40}};
    for (int i = 0; i < 6; i++)
        for (int t = 1; t <= 2; t++) {
            int64_t nb = cases[i][0], m = cases[i][1], k = cases[i][2];
            int64_t as[3] = {nb, m, k}, bs[3] = {nb, k, 1}, ys[3] = {nb, m, 1};
            mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 3, as, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 3, bs, -1, 1);
            th_case *tc = th_begin("MatMul", "", 13);
            th_input(tc, &a);
            th_input(tc, &b);
            mrt_session_options opt = mrt_session_options_default();
            opt.n_threads = t;
            mrt_tensor y;
            cr_assert_eq(th_run_opt(tc, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
            char label[96];
            snprintf(label, sizeof label, "[%lld, %lld, %lld] x [., ., 1], %d threads", (long long)nb, (long long)m,
                     (long long)k, t);
            double *ad = th_to_f64(&a), *bd = th_to_f64(&b), *ed = th_alloc_f64(nb * m);
            lr_matmul(3, as, ad, 3, bs, bd, ed, NULL, 0, NULL, 0);
            th_assert_close(&y, MRT_DTYPE_FLOAT, ed, 3, ys, label);
            const float *af = a.data, *bf = b.data, *yf = y.data;
            for (int64_t bi = 0; bi < nb; bi++)
                for (int64_t row = 0; row < m; row++) {
                    float want = matvec_chain_ref(af + (bi * m + row) * k, bf + bi * k, k), got = yf[bi * m + row];
                    cr_assert(memcmp(&got, &want, sizeof got) == 0, "%s: batch %lld row %lld is %a, the chain gives %a",
                              label, (long long)bi, (long long)row, (double)got, (double)want);
                }
            free(ad);
            free(bd);
            free(ed);
            mrt_tensor_release(&y);
            mrt_tensor_release(&a);
            mrt_tensor_release(&b);
            th_free(tc);
        }
}

Test(linear, matmul_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.matmul_errors"));
    int64_t as[2] = {3, 4}, bs[2] = {5, 6}, a3[3] = {2, 3, 4}, b3[3] = {3, 4, 5};
    mrt_tensor a = th_rand(&r, MRT_DTYPE_FLOAT, 2, as, -1, 1), b = th_rand(&r, MRT_DTYPE_FLOAT, 2, bs, -1, 1);
    mrt_tensor aa = th_rand(&r, MRT_DTYPE_FLOAT, 3, a3, -1, 1), bb = th_rand(&r, MRT_DTYPE_FLOAT, 3, b3, -1, 1);
    th_case *tc = th_begin("MatMul", "", 13);
    th_input(tc, &a);
    th_input(tc, &b);
    th_expect_failure(tc, 1, "inner dimensions", "K mismatch");
    tc = th_begin("MatMul", "", 13);
    th_input(tc, &aa);
    th_input(tc, &bb);
    th_expect_failure(tc, 1, "broadcast", "batch mismatch");
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    mrt_tensor_release(&aa);
    mrt_tensor_release(&bb);
}

Test(linear, matmulinteger)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.matmulinteger"));
    struct {
        int ra;
        int64_t as[3];
        int rb;
        int64_t bs[3];
        int za_kind, zb_kind; /* 0 none, 1 scalar, 2 vector */
        mrt_dtype adt, bdt;
    } cases[] = {
        {2, {3, 4}, 2, {4, 5}, 1, 1, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8},
        {2, {3, 4}, 2, {4, 5}, 2, 2, MRT_DTYPE_UINT8, MRT_DTYPE_INT8},
        {3, {2, 3, 4}, 2, {4, 5}, 2, 1, MRT_DTYPE_INT8, MRT_DTYPE_INT8},
        {1, {4}, 3, {2, 4, 5}, 0, 2, MRT_DTYPE_INT8, MRT_DTYPE_UINT8},
        {3, {2, 1, 4}, 3, {1, 4, 3}, 0, 0, MRT_DTYPE_UINT8, MRT_DTYPE_UINT8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double alo = cases[i].adt == MRT_DTYPE_INT8 ? -128 : 0, ahi = cases[i].adt == MRT_DTYPE_INT8 ? 127 : 255;
        double blo = cases[i].bdt == MRT_DTYPE_INT8 ? -128 : 0, bhi = cases[i].bdt == MRT_DTYPE_INT8 ? 127 : 255;
        mrt_tensor a = th_rand(&r, cases[i].adt, cases[i].ra, cases[i].as, alo, ahi);
        mrt_tensor b = th_rand(&r, cases[i].bdt, cases[i].rb, cases[i].bs, blo, bhi);
        int64_t mm = cases[i].ra >= 2 ? cases[i].as[cases[i].ra - 2] : 1, nn = cases[i].bs[cases[i].rb - 1];
        mrt_tensor za = th_rand(&r, cases[i].adt, cases[i].za_kind == 2 ? 1 : 0, &mm, alo, ahi);
        mrt_tensor zb = th_rand(&r, cases[i].bdt, cases[i].zb_kind == 2 ? 1 : 0, &nn, blo, bhi);
        th_case *tc = th_begin("MatMulInteger", "", 10);
        th_input(tc, &a);
        th_input(tc, &b);
        if (cases[i].za_kind) th_input(tc, &za);
        else th_input_absent(tc);
        if (cases[i].zb_kind) th_input(tc, &zb);
        mrt_tensor y;
        char label[64];
        snprintf(label, sizeof label, "MatMulInteger case %zu", i);
        cr_assert_eq(th_run(tc, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
        int yr;
        int64_t ys[16];
        lr_matmul_shape(cases[i].ra, cases[i].as, cases[i].rb, cases[i].bs, &yr, ys);
        double *ad = th_to_f64(&a), *bd = th_to_f64(&b), *zad = th_to_f64(&za), *zbd = th_to_f64(&zb);
        double *ed = th_alloc_f64(th_numel(yr, ys));
        lr_matmul(cases[i].ra, cases[i].as, ad, cases[i].rb, cases[i].bs, bd, ed, cases[i].za_kind ? zad : NULL,
                  cases[i].za_kind == 2 ? mm : 1, cases[i].zb_kind ? zbd : NULL, cases[i].zb_kind == 2 ? nn : 1);
        th_assert_close(&y, MRT_DTYPE_INT32, ed, yr, ys, label);
        free(ad);
        free(bd);
        free(zad);
        free(zbd);
        free(ed);
        mrt_tensor_release(&y);
        mrt_tensor_release(&a);
        mrt_tensor_release(&b);
        mrt_tensor_release(&za);
        mrt_tensor_release(&zb);
        th_free(tc);
    }
}

/* ------------------------------------------------------------------ pools */

typedef struct pool_case {
    const char *op;
    int opset;
    int nsp;
    int64_t n, c;
    int64_t in[3], k[3], s[3], d[3], pads[6];
    const char *auto_pad;
    bool ceil_mode, count_include_pad, indices, col_major;
    double p;
    mrt_dtype dt;
} pool_case;

static bool pool_has_dilations(const pool_case *pc)
{
    return (strcmp(pc->op, "MaxPool") == 0 && pc->opset >= 10) ||
           (strcmp(pc->op, "AveragePool") == 0 && pc->opset >= 19) ||
           (strcmp(pc->op, "LpPool") == 0 && pc->opset >= 18);
}

static void run_pool(th_rng *r, const pool_case *pc, const char *label)
{
    bool dil_attr = pool_has_dilations(pc);
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = pc->nsp;
    for (int i = 0; i < pc->nsp; i++) {
        g.in[i] = pc->in[i];
        g.kernel[i] = pc->k[i];
        g.stride[i] = pc->s[i];
        g.dilation[i] = dil_attr ? pc->d[i] : 1;
        g.pads[i] = pc->pads[i];
        g.pads[pc->nsp + i] = pc->pads[pc->nsp + i];
    }
    g.auto_pad = pc->auto_pad;
    g.ceil_mode = pc->ceil_mode;
    cr_assert(lr_geom_resolve(&g), "%s: the test built an invalid geometry", label);
    int rank = pc->nsp + 2;
    int64_t xs[5] = {pc->n, pc->c}, ys[5] = {pc->n, pc->c};
    for (int i = 0; i < pc->nsp; i++) {
        xs[i + 2] = pc->in[i];
        ys[i + 2] = g.out[i];
    }
    bool is_int = !mrt_dtype_is_float(pc->dt);
    mrt_tensor x = th_rand(r, pc->dt, rank, xs, is_int ? (pc->dt == MRT_DTYPE_INT8 ? -128 : 0) : -2,
                           is_int ? (pc->dt == MRT_DTYPE_INT8 ? 127 : 255) : 2);
    th_case *c = th_begin(pc->op, "", pc->opset);
    th_input(c, &x);
    th_attr_ints(c, "kernel_shape", pc->nsp, pc->k);
    th_attr_ints(c, "strides", pc->nsp, pc->s);
    if (dil_attr) th_attr_ints(c, "dilations", pc->nsp, pc->d);
    if (strcmp(pc->auto_pad, "NOTSET") == 0) th_attr_ints(c, "pads", 2 * pc->nsp, pc->pads);
    else th_attr_string(c, "auto_pad", pc->auto_pad);
    if (pc->ceil_mode) th_attr_int(c, "ceil_mode", 1);
    if (pc->count_include_pad) th_attr_int(c, "count_include_pad", 1);
    if (pc->col_major) th_attr_int(c, "storage_order", 1);
    int kind = strcmp(pc->op, "MaxPool") == 0 ? 0 : strcmp(pc->op, "AveragePool") == 0 ? 1 : 2;
    if (kind == 2) {
        if (pc->opset == 1) th_attr_float(c, "p", (float)pc->p);
        else th_attr_int(c, "p", (int64_t)pc->p);
    }
    mrt_tensor y[2];
    int n_out = pc->indices ? 2 : 1;
    cr_assert_eq(th_run(c, n_out, y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    int64_t ny = th_numel(rank, ys);
    double *xd = th_to_f64(&x), *ed = th_alloc_f64(ny);
    int64_t *ei = calloc((size_t)(ny > 0 ? ny : 1), sizeof(int64_t));
    lr_pool(&g, pc->n, pc->c, kind, pc->count_include_pad, pc->p, xd, ed, ei, pc->col_major);
    th_assert_close(&y[0], pc->dt, ed, rank, ys, label);
    if (pc->indices) {
        double *eid = th_alloc_f64(ny);
        for (int64_t i = 0; i < ny; i++) eid[i] = (double)ei[i];
        char l2[200];
        snprintf(l2, sizeof l2, "%s (Indices)", label);
        th_assert_close(&y[1], MRT_DTYPE_INT64, eid, rank, ys, l2);
        free(eid);
        mrt_tensor_release(&y[1]);
    }
    free(xd);
    free(ed);
    free(ei);
    mrt_tensor_release(&y[0]);
    mrt_tensor_release(&x);
    th_free(c);
}

static void random_pool(th_rng *r, pool_case *pc, int it)
{
    pc->nsp = 1 + it % 3;
    pc->n = th_rng_int(r, 1, 2);
    pc->c = th_rng_int(r, 1, 3);
    pc->auto_pad = auto_pads[th_rng_int(r, 0, 4)];
    pc->ceil_mode = strcmp(pc->auto_pad, "NOTSET") == 0 && th_rng_int(r, 0, 1);
    for (int i = 0; i < pc->nsp; i++) {
        pc->k[i] = th_rng_int(r, 1, 3);
        pc->s[i] = th_rng_int(r, 1, 3);
        pc->d[i] = pool_has_dilations(pc) ? th_rng_int(r, 1, 2) : 1;
        int64_t reach = (pc->k[i] - 1) * pc->d[i]; /* pads up to this keep a valid tap in every window */
        pc->pads[i] = th_rng_int(r, 0, reach);
        pc->pads[pc->nsp + i] = th_rng_int(r, 0, reach);
        pc->in[i] = reach + 1 + th_rng_int(r, 0, pc->nsp == 3 ? 3 : 6);
    }
}

Test(linear, maxpool_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.maxpool_random"));
    for (int it = 0; it < 50; it++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.op = "MaxPool";
        pc.opset = it % 4 == 0 ? 12 : it % 4 == 1 ? 10 : 22;
        random_pool(&r, &pc, it);
        pc.indices = it % 3 != 0;
        pc.col_major = it % 2;
        pc.dt = it % 5 == 4 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        char label[128];
        snprintf(label, sizeof label, "MaxPool case %d (%dD %s ceil %d)", it, pc.nsp, pc.auto_pad, pc.ceil_mode);
        run_pool(&r, &pc, label);
    }
    pool_case q = {"MaxPool", 12, 2, 1, 2, {6, 5}, {3, 2}, {2, 1}, {1, 1}, {1, 0, 1, 1}, "NOTSET", true, false, false,
                   false, 0, MRT_DTYPE_INT8};
    run_pool(&r, &q, "MaxPool int8");
    q.dt = MRT_DTYPE_UINT8;
    run_pool(&r, &q, "MaxPool uint8");
    q.dt = MRT_DTYPE_FLOAT16;
    q.indices = true;
    run_pool(&r, &q, "MaxPool float16");
    pool_case old = {"MaxPool", 1, 2, 2, 2, {5, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 1, 1}, "NOTSET", false, false,
                     false, false, 0, MRT_DTYPE_FLOAT};
    run_pool(&r, &old, "MaxPool opset 1");
    old.opset = 8;
    old.indices = true;
    old.col_major = true;
    run_pool(&r, &old, "MaxPool opset 8 indices");
    old.n = 0;
    run_pool(&r, &old, "MaxPool N = 0");
    old.n = 1;
    old.c = 0;
    old.op = "AveragePool";
    old.indices = false;
    run_pool(&r, &old, "AveragePool C = 0");
}

Test(linear, averagepool_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.averagepool_random"));
    for (int it = 0; it < 50; it++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.op = "AveragePool";
        pc.opset = it % 4 == 0 ? 11 : it % 4 == 1 ? 19 : 22;
        random_pool(&r, &pc, it);
        pc.count_include_pad = th_rng_int(&r, 0, 1);
        pc.dt = it % 5 == 4 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        char label[128];
        snprintf(label, sizeof label, "AveragePool case %d (%dD %s ceil %d cip %d)", it, pc.nsp, pc.auto_pad,
                 pc.ceil_mode, pc.count_include_pad);
        run_pool(&r, &pc, label);
    }
    pool_case h = {"AveragePool", 22, 2, 1, 2, {6, 5}, {3, 2}, {2, 1}, {1, 1}, {1, 0, 1, 1}, "NOTSET", true, true,
                   false, false, 0, MRT_DTYPE_FLOAT16};
    run_pool(&r, &h, "AveragePool float16");
    h.opset = 7;
    h.ceil_mode = false;
    h.dt = MRT_DTYPE_FLOAT;
    run_pool(&r, &h, "AveragePool opset 7");
}

/* A 2x2/2 window of -0s averages to +0, as the float64 kernel's sum from +0 gives (ap22_rows adds its taps to +0 too) */
Test(linear, averagepool_2x2_of_negative_zeros_is_positive_zero)
{
    int64_t shape[4] = {1, 2, 4, 18};
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 4, shape, (double[144]){0}), y;
    for (int i = 0; i < 144; i++) ((float *)x.data)[i] = -0.0f;
    for (int threads = 1; threads <= 2; threads++) {
        th_case *c = th_begin("AveragePool", "", 19);
        th_input(c, &x);
        th_attr_ints(c, "kernel_shape", 2, (int64_t[]){2, 2});
        th_attr_ints(c, "strides", 2, (int64_t[]){2, 2});
        mrt_session_options opt = mrt_session_options_default();
        opt.n_threads = threads;
        cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int i = 0; i < 2 * 2 * 9; i++) {
            float v = ((float *)y.data)[i];
            cr_assert(v == 0.0f && !signbit(v), "output %d is %a, want +0", i, (double)v);
        }
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&x);
}

/* float32 2-D AveragePool (ops_cpu/pool.c: per-row window bounds, and AVX-512 rows of 8 outputs for column strides
   1 and 2) gives the double sums of the float64 kernel rounded once, bit for bit: MaxViT's 3x3/2 unpadded on
   114x114, 3x3/2 with pads (count_include_pad 0 and 1) on 57x61 and 20x33 (its last full row of 8 ends one output
   before the padding), 2x2/2, 3x3/1; infinities and NaNs in the
   image; 1 and 2 threads. */
Test(linear, averagepool_float32_rows_are_the_float64_sums_rounded)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.averagepool_rows"));
    /* Inception-v3's 3x3/1 on 37, 19 and 10 (rows of four vectors and a partial one; narrow planes four rows at a
       time, with one- and eight-output vectors), the same with padding (edge outputs, rows not all inside), row
       dilation 2, stride 2 narrow, and a plane taller than the kernel's table of row taps */
    static const struct {
        int64_t h, w, k, s, pad, cip, dil, ceil;
    } cases[] = {{114, 114, 3, 2, 0, 0, 1}, {57, 61, 3, 2, 1, 0, 1}, {57, 61, 3, 2, 1, 1, 1}, {20, 33, 3, 2, 1, 0, 1},
                 {40, 45, 2, 2, 0, 0, 1},   {30, 37, 3, 1, 1, 0, 1},  {37, 37, 3, 1, 0, 0, 1},  {19, 19, 3, 1, 0, 0, 1},
                 {10, 10, 3, 1, 0, 0, 1},   {17, 17, 3, 1, 1, 1, 1},  {17, 17, 3, 1, 1, 0, 1},  {23, 20, 3, 1, 0, 0, 2},
                 {21, 23, 3, 2, 1, 0, 1},   {600, 20, 3, 1, 1, 1, 1},
                 /* 2x2/2 unpadded (ap22_rows): DenseNet's 56, 28 and 14 (rows of 3.5, 1.75 and 0.875 vectors), odd
                    sizes (a last row and column no window reads), the smallest plane */
                 {56, 56, 2, 2, 0, 1, 1},   {28, 28, 2, 2, 0, 0, 1},  {14, 14, 2, 2, 0, 0, 1},  {41, 35, 2, 2, 0, 0, 1},
                 {3, 2, 2, 2, 0, 0, 1},
                 /* ceil_mode on odd sizes: the last row's and column's windows hang over the edge (not ap22_rows) */
                 {41, 35, 2, 2, 0, 0, 1, 1}, {41, 35, 2, 2, 0, 1, 1, 1}, {3, 3, 2, 2, 0, 0, 1, 1}};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int threads = 1; threads <= 2; threads++) {
            int64_t shape[4] = {1, 3, cases[ci].h, cases[ci].w}, n = 3 * cases[ci].h * cases[ci].w;
            mrt_tensor xf = th_rand(&r, MRT_DTYPE_FLOAT, 4, shape, -5, 5), y[2];
            const float special[] = {INFINITY, -INFINITY, NAN};
            for (int64_t i = 0; i < n; i += 1 + th_rng_int(&r, 300, 2000)) ((float *)xf.data)[i] = special[th_rng_int(&r, 0, 2)];
            double *xv = th_to_f64(&xf);
            mrt_tensor xd = th_from_f64(MRT_DTYPE_DOUBLE, 4, shape, xv);
            mrt_tensor *xs[2] = {&xf, &xd};
            for (int t = 0; t < 2; t++) {
                th_case *c = th_begin("AveragePool", "", 19);
                th_input(c, xs[t]);
                th_attr_ints(c, "kernel_shape", 2, (int64_t[]){cases[ci].k, cases[ci].k});
                th_attr_ints(c, "strides", 2, (int64_t[]){cases[ci].s, cases[ci].s});
                th_attr_ints(c, "dilations", 2, (int64_t[]){cases[ci].dil, 1});
                int64_t p = cases[ci].pad;
                th_attr_ints(c, "pads", 4, (int64_t[]){p, p, p, p});
                th_attr_int(c, "count_include_pad", cases[ci].cip);
                th_attr_int(c, "ceil_mode", cases[ci].ceil);
                mrt_session_options opt = mrt_session_options_default();
                opt.n_threads = threads;
                cr_assert_eq(th_run_opt(c, &opt, 1, &y[t]), MRT_STATUS_OK, "%s", mrt_last_error());
                th_free(c);
            }
            char label[48];
            snprintf(label, sizeof label, "case %zu, %d threads", ci, threads);
            th_assert_f32_is_f64_rounded(&y[0], &y[1], label);
            free(xv);
            for (int t = 0; t < 2; t++) mrt_tensor_release(&y[t]), mrt_tensor_release(xs[t]);
        }
}

Test(linear, lppool_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.lppool_random"));
    for (int it = 0; it < 30; it++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.op = "LpPool";
        pc.opset = it % 3 == 0 ? 11 : it % 3 == 1 ? 18 : 22;
        random_pool(&r, &pc, it);
        if (pc.opset < 18) pc.ceil_mode = false;
        pc.p = it % 4 == 0 ? 1 : it % 4 == 1 ? 3 : 2;
        pc.dt = it % 5 == 4 ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        char label[128];
        snprintf(label, sizeof label, "LpPool case %d (%dD %s p %g)", it, pc.nsp, pc.auto_pad, pc.p);
        run_pool(&r, &pc, label);
    }
    pool_case o = {"LpPool", 1, 2, 1, 2, {6, 5}, {3, 2}, {2, 1}, {1, 1}, {1, 0, 1, 1}, "NOTSET", false, false, false,
                   false, 3, MRT_DTYPE_FLOAT};
    run_pool(&r, &o, "LpPool opset 1 (float p)");
}

/* float32 GlobalAveragePool follows its documented order (ops_cpu/pool.c) bit for bit, on every plane length
   around the 32 lanes and 8-lane vectors: element i into double lane i % 32, the lanes added pairwise (j += j + 16,
   then + 8, 4, 2, 1), then / len rounded to float. */
Test(linear, global_average_pool_float_order)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.gap_order"));
    static const int64_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 49, 63, 64, 65, 100, 196, 784, 12544};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        int64_t shape[3] = {1, 3, lens[li]};
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, shape, -2, 2);
        th_case *c = th_begin("GlobalAveragePool", "", 22);
        th_input(c, &x);
        mrt_tensor y;
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int ch = 0; ch < 3; ch++) {
            const float *xp = (const float *)x.data + ch * lens[li];
            double lane[32] = {0};
            for (int64_t i = 0; i < lens[li]; i++) lane[i % 32] += (double)xp[i];
            for (int w = 16; w >= 1; w /= 2)
                for (int j = 0; j < w; j++) lane[j] += lane[j + w];
            float want = (float)(lane[0] / (double)lens[li]), got = ((const float *)y.data)[ch];
            cr_assert(memcmp(&got, &want, sizeof got) == 0, "length %lld, channel %d: %a, want %a", (long long)lens[li],
                      ch, (double)got, (double)want);
        }
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(linear, global_pools)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.global_pools"));
    const char *ops[] = {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"};
    int64_t shapes[3][5] = {{2, 3, 7}, {2, 3, 4, 5}, {1, 2, 3, 2, 4}};
    for (int o = 0; o < 3; o++)
        for (int s = 0; s < 3; s++)
            for (int d = 0; d < 2; d++) {
                int rank = 3 + s;
                mrt_dtype dt = d ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
                mrt_tensor x = th_rand(&r, dt, rank, shapes[s], -2, 2);
                th_case *c = th_begin(ops[o], "", 22);
                th_input(c, &x);
                double p = s == 1 ? 3 : 2;
                if (o == 2) th_attr_int(c, "p", (int64_t)p);
                mrt_tensor y;
                cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", ops[o], mrt_last_error());
                lr_geom g;
                memset(&g, 0, sizeof g);
                g.nsp = rank - 2;
                for (int i = 0; i < g.nsp; i++) {
                    g.in[i] = g.kernel[i] = shapes[s][i + 2];
                    g.stride[i] = g.dilation[i] = 1;
                }
                g.auto_pad = "NOTSET";
                cr_assert(lr_geom_resolve(&g));
                int64_t ys[5] = {shapes[s][0], shapes[s][1], 1, 1, 1};
                double *xd = th_to_f64(&x), *ed = th_alloc_f64(th_numel(rank, ys));
                lr_pool(&g, shapes[s][0], shapes[s][1], o, false, p, xd, ed, NULL, false);
                char label[64];
                snprintf(label, sizeof label, "%s rank %d %s", ops[o], rank, mrt_dtype_name(dt));
                th_assert_close(&y, dt, ed, rank, ys, label);
                free(xd);
                free(ed);
                mrt_tensor_release(&y);
                mrt_tensor_release(&x);
                th_free(c);
            }
}

Test(linear, pool_errors)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.pool_errors"));
    int64_t xs[4] = {1, 2, 3, 3};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -1, 1);
    mrt_tensor xi = th_rand(&r, MRT_DTYPE_INT32, 4, xs, -1, 1);
    th_case *c = th_begin("MaxPool", "", 22);
    th_input(c, &x);
    th_attr_ints(c, "kernel_shape", 2, (int64_t[]){4, 4});
    th_expect_failure(c, 1, "smaller than the window", "kernel larger than input");
    c = th_begin("MaxPool", "", 22);
    th_input(c, &x);
    th_expect_failure(c, 1, "kernel_shape", "missing kernel_shape");
    c = th_begin("AveragePool", "", 22);
    th_input(c, &x);
    th_attr_ints(c, "kernel_shape", 1, (int64_t[]){2});
    th_expect_failure(c, 1, "kernel_shape", "kernel_shape of the wrong length");
    c = th_begin("MaxPool", "", 22);
    th_input(c, &xi);
    th_attr_ints(c, "kernel_shape", 2, (int64_t[]){2, 2});
    th_expect_failure(c, 1, "int32", "int32 input");
    mrt_tensor_release(&x);
    mrt_tensor_release(&xi);
}

Test(linear, maxroipool)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.maxroipool"));
    int64_t xs[4] = {2, 3, 6, 7}, rs[2] = {4, 5};
    for (int d = 0; d < 2; d++) {
        mrt_dtype dt = d ? MRT_DTYPE_DOUBLE : MRT_DTYPE_FLOAT;
        mrt_tensor x = th_rand(&r, dt, 4, xs, -1, 1);
        double roi_vals[20] = {0, 1, 1, 8, 10, 1, 0, 0, 13, 11, 1, 4.4, 2.6, 6.1, 9.7, 0, 10, 10, 12, 12};
        mrt_tensor rois = th_from_f64(dt, 2, rs, roi_vals);
        th_case *c = th_begin("MaxRoiPool", "", 22);
        th_input(c, &x);
        th_input(c, &rois);
        th_attr_ints(c, "pooled_shape", 2, (int64_t[]){2, 3});
        th_attr_float(c, "spatial_scale", 0.5f);
        mrt_tensor y;
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        int64_t ys[4] = {4, 3, 2, 3};
        double *xd = th_to_f64(&x), *rd = th_to_f64(&rois), *ed = th_alloc_f64(th_numel(4, ys));
        lr_maxroipool(2, 3, 6, 7, xd, 4, rd, 2, 3, 0.5, ed);
        th_assert_close(&y, dt, ed, 4, ys, "MaxRoiPool");
        free(xd);
        free(rd);
        free(ed);
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&rois);
        th_free(c);
    }
}

/* Pool X with kernel 2 stride 2 (Indices), unpool: the maxima return to their places, the rest is 0.
   An output_shape larger than the inferred [h, w] pads at the end of each dim (ONNX reference semantics). */
static void unpool_case(th_rng *r, int64_t h, int64_t w, int64_t oh, int64_t ow)
{
    int64_t xs[4] = {2, 3, h, w}, ys[4] = {2, 3, oh, ow};
    bool with_shape = oh != h || ow != w;
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -1, 1);
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = 2;
    g.in[0] = h, g.in[1] = w, g.kernel[0] = g.kernel[1] = 2, g.stride[0] = g.stride[1] = 2;
    g.dilation[0] = g.dilation[1] = 1;
    g.auto_pad = "NOTSET";
    cr_assert(lr_geom_resolve(&g));
    int64_t ps[4] = {2, 3, g.out[0], g.out[1]};
    int64_t np = th_numel(4, ps), ny = th_numel(4, ys);
    double *xd = th_to_f64(&x), *pd = th_alloc_f64(np), *ed = th_alloc_f64(ny);
    int64_t *pi = calloc((size_t)np, sizeof(int64_t));
    lr_pool(&g, 2, 3, 0, false, 0, xd, pd, pi, false);
    for (int64_t i = 0; i < np; i++) {
        int64_t plane = pi[i] / (h * w), py = pi[i] % (h * w) / w, px = pi[i] % w;
        ed[(plane * oh + py) * ow + px] = pd[i];
    }
    mrt_tensor pooled = th_from_f64(MRT_DTYPE_FLOAT, 4, ps, pd);
    mrt_tensor ind, os = th_vec_i64(4, ys);
    mrt_tensor_alloc(&ind, MRT_DTYPE_INT64, 4, ps);
    memcpy(ind.data, pi, (size_t)np * sizeof(int64_t));
    for (int runtime_shape = 0; runtime_shape < (with_shape ? 2 : 1); runtime_shape++) {
        th_case *c = th_begin("MaxUnpool", "", 22);
        th_input(c, &pooled);
        th_input(c, &ind);
        if (with_shape && runtime_shape) th_input(c, &os);
        else if (with_shape) th_input_const(c, &os);
        th_attr_ints(c, "kernel_shape", 2, (int64_t[]){2, 2});
        th_attr_ints(c, "strides", 2, (int64_t[]){2, 2});
        mrt_tensor y;
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        th_assert_close(&y, MRT_DTYPE_FLOAT, ed, 4, ys, with_shape ? "MaxUnpool with output_shape" : "MaxUnpool");
        mrt_tensor_release(&y);
        th_free(c);
    }
    /* an index outside the unpooled shape is an error, not a stray write */
    ((int64_t *)ind.data)[0] = 100000;
    th_case *c = th_begin("MaxUnpool", "", 22);
    th_input(c, &pooled);
    th_input(c, &ind);
    if (with_shape) th_input(c, &os);
    th_attr_ints(c, "kernel_shape", 2, (int64_t[]){2, 2});
    th_attr_ints(c, "strides", 2, (int64_t[]){2, 2});
    th_expect_failure(c, 1, "'I'", "index out of range");
    free(xd);
    free(pd);
    free(ed);
    free(pi);
    mrt_tensor_release(&x);
    mrt_tensor_release(&pooled);
    mrt_tensor_release(&ind);
    mrt_tensor_release(&os);
}

Test(linear, maxunpool)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.maxunpool"));
    unpool_case(&r, 6, 4, 6, 4);
    unpool_case(&r, 6, 4, 7, 6);
}

/* The float64 oracle mode runs float models in double: the kernels must give the double answer. */
Test(linear, fp64_precision_mode)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.fp64_precision_mode"));
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -1, 1), w = th_rand(&r, MRT_DTYPE_FLOAT, 4, ws, -1, 1);
    th_case *c = th_begin("Conv", "", 22);
    th_input(c, &x);
    th_input_const(c, &w);
    th_attr_ints(c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    mrt_session_options opt = mrt_session_options_default();
    opt.precision = MRT_PRECISION_FP64;
    mrt_tensor y;
    cr_assert_eq(th_run_opt(c, &opt, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = 2;
    g.in[0] = g.in[1] = 5, g.kernel[0] = g.kernel[1] = 3, g.stride[0] = g.stride[1] = 1;
    g.dilation[0] = g.dilation[1] = 1;
    for (int i = 0; i < 4; i++) g.pads[i] = 1;
    g.auto_pad = "NOTSET";
    cr_assert(lr_geom_resolve(&g));
    int64_t ys[4] = {1, 3, 5, 5};
    double *xd = th_to_f64(&x), *wd = th_to_f64(&w), *ed = th_alloc_f64(75);
    lr_conv(&g, 1, 2, 3, 1, xd, wd, NULL, ed);
    char why[256];
    cr_assert(th_check_f64(&y, ed, 4, ys, 1e-10, 1e-4, 1e-4, why, sizeof why), "%s", why);
    free(xd);
    free(wd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
    th_free(c);
}

/* The 2-D float fast path (no Indices output): a NaN in a window wins, padding never does, and a window made
   of padding only (pads >= kernel) is 0, as in the general kernel. */
/* 2-D float MaxPool, bit for bit against its documented order (ops_cpu/pool.c: the taps in (kernel column, then
   row) order, a later one winning only when greater, so ties of +0 and -0 keep the first; NaN anywhere gives NaN),
   over column strides 1, 2 and 3, kernels up to 9 wide, pads below the kernel, rows wider than 128 outputs, and
   inputs with NaN, infinities and signed zeros. */
/* One case of the tests below: random values with NaN, infinities and signed zeros, the 2-D MaxPool against its
   documented order written out, bit for bit */
static void maxpool_2d_order_case(th_rng *rp, int it, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh,
                                  int64_t sw, const int64_t pads[4], bool ceil_mode)
{
    th_rng r = *rp;
    {
        int64_t xs[4] = {1, 2, H, W};
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -2, 2);
        float *xv = x.data;
        for (int64_t i = 0; i < 2 * H * W; i++) {
            int64_t u = th_rng_int(&r, 0, 99);
            xv[i] = u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : u < 20 ? 0.0f : u < 40 ? -0.0f : xv[i];
        }
        th_case *c = th_begin("MaxPool", "", 12);
        th_input(c, &x);
        th_attr_ints(c, "kernel_shape", 2, (int64_t[]){kh, kw});
        th_attr_ints(c, "strides", 2, (int64_t[]){sh, sw});
        th_attr_ints(c, "pads", 4, pads);
        if (ceil_mode) th_attr_int(c, "ceil_mode", 1);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        int64_t OH = y.shape[2], OW = y.shape[3];
        const float *yv = y.data;
        for (int64_t pl = 0; pl < 2; pl++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float want = -INFINITY;
                    bool any = false, nan = false;
                    for (int64_t b = 0; b < kw; b++)
                        for (int64_t a = 0; a < kh; a++) {
                            int64_t ih = oh * sh - pads[0] + a, iw = ow * sw - pads[1] + b;
                            if (ih < 0 || ih >= H) continue; /* padding rows are skipped, padding columns are -inf */
                            float v = iw < 0 || iw >= W ? -INFINITY : xv[(pl * H + ih) * W + iw];
                            nan |= v != v;
                            if (!any || v > want) want = v;
                            any = true;
                        }
                    float got = yv[(pl * OH + oh) * OW + ow];
                    if (nan)
                        cr_assert(got != got, "case %d (%lld,%lld): %a, want NaN", it, (long long)oh, (long long)ow,
                                  (double)got);
                    else cr_assert(memcmp(&got, &want, sizeof got) == 0,
                                   "case %d k %lldx%lld s %lldx%lld (%lld,%lld): %a, want %a", it, (long long)kh,
                                   (long long)kw, (long long)sh, (long long)sw, (long long)oh, (long long)ow,
                                   (double)got, (double)want);
                }
        mrt_tensor_release(&y);
        mrt_tensor_release(&x);
        th_free(c);
    }
    *rp = r;
}

Test(linear, maxpool_2d_order_nan_and_zeros)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.maxpool_2d_order"));
    for (int it = 0; it < 120; it++) {
        int64_t kh = th_rng_int(&r, 1, 4), kw = th_rng_int(&r, 1, 9), sh = th_rng_int(&r, 1, 2);
        int64_t sw = th_rng_int(&r, 1, 3), pads[4];
        pads[0] = th_rng_int(&r, 0, kh - 1), pads[2] = th_rng_int(&r, 0, kh - 1);
        pads[1] = th_rng_int(&r, 0, kw - 1), pads[3] = th_rng_int(&r, 0, kw - 1);
        int64_t H = kh + th_rng_int(&r, 0, 12), W = kw + th_rng_int(&r, 0, it % 5 == 0 ? 300 : 40);
        maxpool_2d_order_case(&r, it, H, W, kh, kw, sh, sw, pads, false);
    }
}

/* Kernels 2 and 3 wide at column strides 1 and 2 (ops_cpu/pool.c, mp_regs_plane: the row pass in registers, the
   column taps made from its vectors): output rows 1 to 70 wide (one to five vectors, the last one full or not), kernels 1-4 tall, pads below the kernel on either side, ceil mode (the
   last window past the row's end), against the documented order, bit for bit */
Test(linear, maxpool_2d_register_taps_order)
{
    th_rng r;
    th_rng_init(&r, th_seed("linear.maxpool_2d_register_taps"));
    int it = 0;
    for (int64_t sw = 1; sw <= 2; sw++)
        for (int64_t kw = 2; kw <= 3; kw++)
            for (int64_t ow = 1; ow <= 70; ow += 1 + (ow > 17 && ow % 7 == 3), it++) {
                int64_t kh = th_rng_int(&r, 1, 4), sh = th_rng_int(&r, 1, 2), pads[4];
                pads[0] = th_rng_int(&r, 0, kh - 1), pads[2] = th_rng_int(&r, 0, kh - 1);
                pads[1] = th_rng_int(&r, 0, kw - 1), pads[3] = th_rng_int(&r, 0, kw - 1);
                bool ceil_mode = it % 3 == 1;
                /* an input row giving ow outputs (or ow - 1 .. ow with ceil mode) */
                int64_t W = (ow - 1) * sw + kw - pads[1] - pads[3] + (ceil_mode ? th_rng_int(&r, 0, sw - 1) : 0);
                if (W < kw) W = kw;
                int64_t H = kh + th_rng_int(&r, 0, 6);
                maxpool_2d_order_case(&r, it, H, W, kh, kw, sh, sw, pads, ceil_mode);
            }
}

Test(linear, maxpool_2d_fast_path_nan_and_pads)
{
    float xv[16];
    for (int i = 0; i < 16; i++) xv[i] = (float)(i % 5) - 2.0f;
    xv[5] = NAN;
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 4, 4}), MRT_STATUS_OK);
    memcpy(x.data, xv, sizeof xv);
    th_case *c = th_begin("MaxPool", "", 12);
    th_input(c, &x);
    th_attr_ints(c, "kernel_shape", 2, (int64_t[]){2, 2});
    th_attr_ints(c, "strides", 2, (int64_t[]){2, 2});
    th_attr_ints(c, "pads", 4, (int64_t[]){2, 2, 2, 2});
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.shape[2], 4);
    cr_assert_eq(y.shape[3], 4);
    const float *yv = y.data;
    /* output (oh, ow) covers input rows 2*oh-2 .. 2*oh-1 and the same columns */
    for (int oh = 0; oh < 4; oh++)
        for (int ow = 0; ow < 4; ow++) {
            float want = 0;
            bool any = false, nan = false;
            for (int h = 2 * oh - 2; h < 2 * oh; h++)
                for (int w = 2 * ow - 2; w < 2 * ow; w++) {
                    if (h < 0 || h >= 4 || w < 0 || w >= 4) continue;
                    float v = xv[h * 4 + w];
                    nan |= v != v;
                    want = !any || v > want ? v : want;
                    any = true;
                }
            float got = yv[oh * 4 + ow];
            if (nan) cr_assert(got != got, "(%d,%d): expected NaN, got %g", oh, ow, got);
            else cr_assert_eq(got, any ? want : 0.0f, "(%d,%d): got %g, expected %g", oh, ow, got, any ? want : 0.0f);
        }
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}
