/* minirt_kernels: the machine's measured peak (an FMA-throughput probe and a STREAM-style triad), then kernel
 * sweeps through the engine (one-node models, the same code path as a real model) reporting GFLOP/s or GB/s
 * next to that peak.
 *
 *   minirt_kernels [--threads N] [--min-time S] [--filter SUBSTRING] [--json FILE] [--no-winograd] [--cold]
 *
 * Each case: two warm-up runs, then runs until at least --min-time seconds (default 0.3) and 5 runs; the
 * median is reported. Shapes are the layers that dominate the bundled model families (ResNet-18 and
 * MobileNetV2 convolutions, Transformer-sized GEMMs and norms). GFLOP/s count a convolution's direct
 * multiply-adds, so 3x3 stride-1 layers computed by Winograd's F(2x2, 3x3) (fewer of them) can exceed the probe;
 * --no-winograd runs them on the GEMM. --cold evicts the caches before each run (see evict_caches). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/graph.h"
#include "engine/status.h"
#include "ops_cpu/blas_info.h"
#include "tools/cli.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ peak probes */

#define FMA_ITERS 20000000L

#if defined(__x86_64__) && defined(__GNUC__)
/* 12 independent accumulators cover FMA latency x ports on current x86 cores; 2 flops per lane per FMA. */
__attribute__((target("avx512f"))) static double fma_avx512(void)
{
    __m512 a[12], m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < FMA_ITERS; it++)
        for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], m, c);
    float sink = 0;
    for (int i = 0; i < 12; i++) sink += _mm512_reduce_add_ps(a[i]);
    return (double)FMA_ITERS * 12 * 16 * 2 + (sink == 12345.0f); /* keep the loop alive */
}

__attribute__((target("avx2,fma"))) static double fma_avx2(void)
{
    __m256 a[12], m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < FMA_ITERS; it++)
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], m, c);
    float out[8], sink = 0;
    for (int i = 0; i < 12; i++) {
        _mm256_storeu_ps(out, a[i]);
        sink += out[0];
    }
    return (double)FMA_ITERS * 12 * 8 * 2 + (sink == 12345.0f);
}
#endif

static double fma_scalar(void)
{
    float a[12];
    for (int i = 0; i < 12; i++) a[i] = (float)i;
    for (long it = 0; it < FMA_ITERS / 16; it++)
        for (int i = 0; i < 12; i++) a[i] = fmaf(a[i], 0.999999f, 1e-7f);
    float sink = 0;
    for (int i = 0; i < 12; i++) sink += a[i];
    return (double)(FMA_ITERS / 16) * 12 * 2 + (sink == 12345.0f);
}

static const char *fma_isa(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return "AVX-512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2+FMA";
#endif
    return "scalar";
}

typedef struct probe_arg {
    double flops, seconds;
    double *a, *b, *c;
    size_t lo, hi;
    int reps;
} probe_arg;

static void *fma_thread(void *p)
{
    probe_arg *a = p;
    double t0 = now_s();
    const char *isa = fma_isa();
#if defined(__x86_64__) && defined(__GNUC__)
    a->flops = !strcmp(isa, "AVX-512") ? fma_avx512() : !strcmp(isa, "AVX2+FMA") ? fma_avx2() : fma_scalar();
#else
    (void)isa;
    a->flops = fma_scalar();
#endif
    a->seconds = now_s() - t0;
    return NULL;
}

static void *triad_thread(void *p)
{
    probe_arg *a = p;
    for (int r = 0; r < a->reps; r++)
        for (size_t i = a->lo; i < a->hi; i++) a->a[i] = a->b[i] + 3.0 * a->c[i];
    return NULL;
}

/* GFLOP/s of n threads running the FMA loop at once (the slowest thread's time); the best of 5 trials, as
   STREAM reports its best, because a shared VM preempts single trials. */
static double fma_trial(int n);
static double fma_peak(int n)
{
    double best = 0;
    for (int t = 0; t < 5; t++) {
        double g = fma_trial(n);
        best = g > best ? g : best;
    }
    return best;
}

static double fma_trial(int n)
{
    pthread_t th[64];
    probe_arg args[64];
    for (int i = 0; i < n; i++) {
        memset(&args[i], 0, sizeof args[i]);
        pthread_create(&th[i], NULL, fma_thread, &args[i]);
    }
    double flops = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        flops += args[i].flops;
        worst = args[i].seconds > worst ? args[i].seconds : worst;
    }
    return flops / worst / 1e9;
}

/* STREAM's triad a = b + s*c on doubles, arrays far larger than the caches; GB/s counting 24 bytes/element. */
static double triad_bandwidth(int n)
{
    size_t len = (size_t)20 << 20; /* 20 Mi doubles = 160 MiB per array */
    double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b), *c = malloc(len * sizeof *c);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    for (size_t i = 0; i < len; i++) a[i] = 0, b[i] = 1, c[i] = 2;
    double best = 0;
    for (int trial = 0; trial < 5; trial++) {
        pthread_t th[64];
        probe_arg args[64];
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            args[i] = (probe_arg){0, 0, a, b, c, len * (size_t)i / (size_t)n, len * (size_t)(i + 1) / (size_t)n, 2};
            pthread_create(&th[i], NULL, triad_thread, &args[i]);
        }
        for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
        double gbs = 2.0 * 24.0 * (double)len / (now_s() - t0) / 1e9;
        best = gbs > best ? gbs : best; /* STREAM reports the best trial */
    }
    free(a), free(b), free(c);
    return best;
}

/* ------------------------------------------------------------------ kernel cases */

typedef enum { UNIT_GFLOPS, UNIT_GBS } unit_kind;

typedef struct kcase {
    const char *name;
    const char *op;
    int n_inputs;
    int rank[4];
    int64_t shape[4][5];
    bool constant[4];  /* weights are initializers, as in a real model */
    const char *attrs; /* "name=v,name=v" ints, or "name=a:b:c" ints lists */
    unit_kind unit;
    double work;       /* flops, or bytes moved */
    bool causal;       /* input 0 gets -inf above the diagonal of its last two axes (a causal attention mask) */
} kcase;

#define CONV(nm, n, c, h, w, m, k, s, p, g)                                                                       \
    {nm, "Conv", 2, {4, 4}, {{n, c, h, w}, {m, (c) / (g), k, k}}, {false, true},                                  \
     "strides=" #s ":" #s ",pads=" #p ":" #p ":" #p ":" #p ",group=" #g, UNIT_GFLOPS,                              \
     2.0 * (n) * (m) * ((h + 2 * p - k) / s + 1) * ((w + 2 * p - k) / s + 1) * ((c) / (g)) * (k) * (k)}
#define GEMM(nm, m, n, k) {nm, "MatMul", 2, {2, 2}, {{m, k}, {k, n}}, {false, true}, "", UNIT_GFLOPS, 2.0 * (m) * (n) * (k)}

static const kcase cases[] = {
    GEMM("gemm 256", 256, 256, 256),
    GEMM("gemm 512", 512, 512, 512),
    GEMM("gemm 1024", 1024, 1024, 1024),
    GEMM("gemm 2048", 2048, 2048, 2048),
    GEMM("gemm transformer qkv 64x768x256", 64, 768, 256),
    GEMM("gemm transformer ffn 64x1024x256", 64, 1024, 256),
    GEMM("gemm transformer ffn2 64x256x1024", 64, 256, 1024),
    GEMM("gemm classifier 1x1000x1280", 1, 1000, 1280), /* a batch-1 classifier head (MobileNetV2, EfficientNet) */
    CONV("conv resnet stem 7x7/2 3->64 224", 1, 3, 224, 224, 64, 7, 2, 3, 1),
    CONV("conv resnet 3x3 64->64 56", 1, 64, 56, 56, 64, 3, 1, 1, 1),
    CONV("conv resnet 3x3 128->128 28", 1, 128, 28, 28, 128, 3, 1, 1, 1),
    CONV("conv resnet 3x3 256->256 14", 1, 256, 14, 14, 256, 3, 1, 1, 1),
    CONV("conv resnet 3x3 512->512 7", 1, 512, 7, 7, 512, 3, 1, 1, 1),
    /* FCN-ResNet50's layer3/layer4 (output stride 8: 28x28 at 224) */
    CONV("conv fcn 1x1 512->2048 28", 1, 512, 28, 28, 2048, 1, 1, 0, 1),
    CONV("conv fcn 1x1 256->1024 28", 1, 256, 28, 28, 1024, 1, 1, 0, 1),
    CONV("conv fcn 1x1 2048->512 28", 1, 2048, 28, 28, 512, 1, 1, 0, 1),
    {"conv fcn 3x3 dil 4 512->512 28", "Conv", 2, {4, 4}, {{1, 512, 28, 28}, {512, 512, 3, 3}}, {false, true},
     "pads=4:4:4:4,dilations=4:4", UNIT_GFLOPS, 2.0 * 512 * 28 * 28 * 512 * 9},
    CONV("conv mobilenet 1x1 32->192 112", 1, 32, 112, 112, 192, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 16->96 112", 1, 16, 112, 112, 96, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 96->576 14", 1, 96, 14, 14, 576, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 32->16 112", 1, 32, 112, 112, 16, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 576->96 14", 1, 576, 14, 14, 96, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 960->320 7", 1, 960, 7, 7, 320, 1, 1, 0, 1),
    CONV("conv mobilenet 1x1 320->1280 7", 1, 320, 7, 7, 1280, 1, 1, 0, 1),
    CONV("conv mobilenet stem 3x3/2 3->32 224", 1, 3, 224, 224, 32, 3, 2, 1, 1),
    /* RegNetX-400MF's grouped 3x3s (16 channels a group): the stride-2 ones that open a stage, and a stride-1 one */
    CONV("conv grouped 3x3/2 64->64 g4 56 (RegNetX)", 1, 64, 56, 56, 64, 3, 2, 1, 4),
    CONV("conv grouped 3x3/2 32->32 g2 112 (RegNetX)", 1, 32, 112, 112, 32, 3, 2, 1, 2),
    CONV("conv grouped 3x3 64->64 g4 28 (RegNetX)", 1, 64, 28, 28, 64, 3, 1, 1, 4),
    CONV("conv depthwise 3x3 144 56", 1, 144, 56, 56, 144, 3, 1, 1, 144),
    CONV("conv depthwise 3x3 576 14", 1, 576, 14, 14, 576, 3, 1, 1, 576),
    CONV("conv depthwise 3x3/2 96 112", 1, 96, 112, 112, 96, 3, 2, 1, 96),
    CONV("conv depthwise 3x3/2 144 56", 1, 144, 56, 56, 144, 3, 2, 1, 144),
    CONV("conv depthwise 3x3/2 192 28", 1, 192, 28, 28, 192, 3, 2, 1, 192),
    CONV("conv depthwise 5x5 672 14", 1, 672, 14, 14, 672, 5, 1, 2, 672),
    CONV("conv depthwise 5x5 240 28", 1, 240, 28, 28, 240, 5, 1, 2, 240),
    CONV("conv depthwise 5x5/2 144 56", 1, 144, 56, 56, 144, 5, 2, 2, 144),
    CONV("conv depthwise 3x3 32 112", 1, 32, 112, 112, 32, 3, 1, 1, 32),
    CONV("conv depthwise 3x3 960 7", 1, 960, 7, 7, 960, 3, 1, 1, 960),
    CONV("conv depthwise 5x5 1152 7", 1, 1152, 7, 7, 1152, 5, 1, 2, 1152),
    CONV("conv depthwise 3x3/2 576 14", 1, 576, 14, 14, 576, 3, 2, 1, 576),
    CONV("conv depthwise 5x5/2 672 14", 1, 672, 14, 14, 672, 5, 2, 2, 672),
    CONV("conv depthwise 5x5/2 240 28 (MnasNet)", 1, 240, 28, 28, 240, 5, 2, 2, 240),
    CONV("conv depthwise 3x3/2 48 112 (MnasNet)", 1, 48, 112, 112, 48, 3, 2, 1, 48),
    CONV("conv depthwise 5x5/2 72 56 (MnasNet)", 1, 72, 56, 56, 72, 5, 2, 2, 72),
    CONV("conv depthwise 7x7 96 56 (ConvNeXt)", 1, 96, 56, 56, 96, 7, 1, 3, 96),
    CONV("conv depthwise 7x7 192 28", 1, 192, 28, 28, 192, 7, 1, 3, 192),
    CONV("conv depthwise 7x7 384 14", 1, 384, 14, 14, 384, 7, 1, 3, 384),
    CONV("conv depthwise 7x7 768 7", 1, 768, 7, 7, 768, 7, 1, 3, 768),
    {"deformconv 3x3 64->64 32x32", "DeformConv", 3, {4, 4, 4}, {{1, 64, 32, 32}, {64, 64, 3, 3}, {1, 18, 32, 32}},
     {false, true, false}, "pads=1:1:1:1", UNIT_GFLOPS, 2.0 * 64 * 32 * 32 * 64 * 9},
    {"softmax 1x12x64x64 (attention)", "Softmax", 1, {4}, {{1, 12, 64, 64}}, {false}, "axis=-1", UNIT_GBS,
     2.0 * 4 * 12 * 64 * 64},
    {"softmax 1x12x64x64 causal", "Softmax", 1, {4}, {{1, 12, 64, 64}}, {false}, "axis=-1", UNIT_GBS,
     2.0 * 4 * 12 * 64 * 64, true},
    {"layernorm 1x512x768", "LayerNormalization", 3, {3, 1, 1}, {{1, 512, 768}, {768}, {768}}, {false, true, true},
     "axis=-1", UNIT_GBS, 2.0 * 4 * 512 * 768},
    {"add 1x256x56x56", "Add", 2, {4, 4}, {{1, 256, 56, 56}, {1, 256, 56, 56}}, {false, false}, "", UNIT_GBS,
     3.0 * 4 * 256 * 56 * 56},
    {"sigmoid 1x256x56x56", "Sigmoid", 1, {4}, {{1, 256, 56, 56}}, {false}, "", UNIT_GBS, 2.0 * 4 * 256 * 56 * 56},
    {"relu 1x256x56x56", "Relu", 1, {4}, {{1, 256, 56, 56}}, {false}, "", UNIT_GBS, 2.0 * 4 * 256 * 56 * 56},
    {"maxpool 3x3/2 1x64x112x112", "MaxPool", 1, {4}, {{1, 64, 112, 112}}, {false},
     "kernel_shape=3:3,strides=2:2,pads=1:1:1:1", UNIT_GBS, 4.0 * 64 * (112 * 112 + 56 * 56)},
    /* Inception-v3's stem pool and branch pools (count_include_pad: its Pads fused in) */
    {"maxpool 3x3/2 1x64x147x147", "MaxPool", 1, {4}, {{1, 64, 147, 147}}, {false},
     "kernel_shape=3:3,strides=2:2", UNIT_GBS, 4.0 * 64 * (147 * 147 + 73 * 73)},
    {"avgpool 3x3 pad 1 1x288x35x35", "AveragePool", 1, {4}, {{1, 288, 35, 35}}, {false},
     "kernel_shape=3:3,pads=1:1:1:1,count_include_pad=1", UNIT_GBS, 2.0 * 4 * 288 * 35 * 35},
    {"avgpool 3x3 pad 1 1x768x17x17", "AveragePool", 1, {4}, {{1, 768, 17, 17}}, {false},
     "kernel_shape=3:3,pads=1:1:1:1,count_include_pad=1", UNIT_GBS, 2.0 * 4 * 768 * 17 * 17},
    /* DenseNet-121's first transition */
    {"avgpool 2x2/2 1x128x56x56", "AveragePool", 1, {4}, {{1, 128, 56, 56}}, {false},
     "kernel_shape=2:2,strides=2:2", UNIT_GBS, 4.0 * 128 * (56 * 56 + 28 * 28)},
};

static mrt_status add_attrs(mrt_node *nd, const char *spec)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        bool list = strchr(eq + 1, ':') != NULL; /* "a:b:c" is an ints attribute */
        int64_t v[16];
        int n = 0;
        for (char *s2 = NULL, *p = strtok_r(eq + 1, ":", &s2); p && n < 16; p = strtok_r(NULL, ":", &s2)) v[n++] = atoll(p);
        MRT_TRY(list ? mrt_node_add_attr_ints(nd, tok, n, v) : mrt_node_add_attr_int(nd, tok, v[0]));
    }
    return MRT_STATUS_OK;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float next_uniform(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) / (float)(1 << 24) * 2.0f - 1.0f;
}

/* --cold: before each timed run, write this many bytes (twice the 32 MiB L3 here), then read the case's inputs
   again: the conditions of a layer inside a large model, whose input the previous node has just written while its
   output buffer and weights were last touched one inference ago, with megabytes of other weights read since */
enum { COLD_BYTES = 64 << 20 };
static char *cold_buf;

static void evict_caches(int n, const mrt_value *inputs)
{
    for (size_t i = 0; i < COLD_BYTES; i += 64) cold_buf[i] = (char)i;
    volatile char sink = 0;
    for (int v = 0; v < n; v++) { /* a byte of every cache line */
        const char *x = inputs[v].tensor.data;
        for (size_t i = 0, e = mrt_tensor_nbytes(&inputs[v].tensor); i < e; i += 64) sink += x[i];
    }
}

/* Median seconds of one run of the case, or NAN with the error printed. */
static double run_case(const kcase *k, int threads, bool no_winograd, double min_time)
{
    mrt_model *m = mrt_model_new();
    double result = NAN;
    mrt_session *s = NULL;
    mrt_tensor t[4] = {{0}};
    mrt_value vals[4];
    const char *names[4] = {"in0", "in1", "in2", "in3"}, *feed[4];
    int n_feed = 0;
    if (!m) return NAN;
    m->graph = mrt_graph_new("bench");
    mrt_status st = m->graph ? mrt_model_set_opset(m, "", 22) : MRT_STATUS_OUT_OF_MEMORY;
    for (int i = 0; !st && i < k->n_inputs; i++) {
        st = mrt_tensor_alloc(&t[i], MRT_DTYPE_FLOAT, k->rank[i], k->shape[i]);
        for (int64_t j = 0, n = st ? 0 : mrt_tensor_numel(&t[i]); j < n; j++)
            ((float *)t[i].data)[j] = next_uniform() * (strcmp(k->op, "DeformConv") == 0 && i == 2 ? 2.0f : 1.0f);
        if (!st && i == 0 && k->causal) { /* column > row in the last two axes */
            int r = k->rank[0];
            int64_t rows = k->shape[0][r - 2], cols = k->shape[0][r - 1], n = mrt_tensor_numel(&t[0]);
            for (int64_t j = 0; j < n; j++)
                if (j % cols > j / cols % rows) ((float *)t[0].data)[j] = -INFINITY;
        }
        if (!st && k->constant[i]) {
            st = mrt_graph_set_initializer(m->graph, names[i], &t[i]); /* the graph owns it now */
            memset(&t[i], 0, sizeof t[i]);
        } else if (!st) {
            st = mrt_graph_add_input(m->graph, names[i], NULL, NULL);
            feed[n_feed] = names[i];
            vals[n_feed++] = mrt_value_from_tensor(t[i]);
        }
    }
    mrt_node *nd;
    if (!st) st = mrt_graph_add_node(m->graph, "node", k->op, "", k->n_inputs, names, 1, (const char *[]){"y"}, &nd);
    if (!st) st = add_attrs(nd, k->attrs);
    if (!st) st = mrt_graph_add_output(m->graph, "y", NULL, NULL);
    mrt_session_options opt = mrt_session_options_default();
    opt.n_threads = threads;
    opt.no_winograd = no_winograd;
    if (!st) st = mrt_session_new(m, &opt, &s);
    for (int w = 0; !st && w < 2; w++) st = mrt_session_run(s, n_feed, feed, vals);
    double times[4096];
    int n = 0;
    double t0 = now_s();
    while (!st && n < 4096 && (n < 5 || now_s() - t0 < min_time)) {
        if (cold_buf) evict_caches(n_feed, vals);
        double r0 = now_s();
        st = mrt_session_run(s, n_feed, feed, vals);
        times[n++] = now_s() - r0;
    }
    if (st) {
        fprintf(stderr, "minirt_kernels: %s: %s\n", k->name, mrt_last_error());
    } else {
        for (int i = 1; i < n; i++) /* insertion sort: n is small */
            for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
                double x = times[j];
                times[j] = times[j - 1];
                times[j - 1] = x;
            }
        result = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    }
    mrt_session_free(s);
    for (int i = 0; i < k->n_inputs; i++) mrt_tensor_release(&t[i]);
    mrt_model_free(m);
    return result;
}

int main(int argc, char **argv)
{
    cli_prefer_avx512_blas(argv);
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double min_time = 0.3;
    const char *filter = NULL, *json = NULL;
    bool no_winograd = false, cold = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) min_time = atof(argv[++i]);
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--no-winograd")) no_winograd = true;
        else if (!strcmp(argv[i], "--cold")) cold = true;
        else {
            fprintf(stderr, "usage: minirt_kernels [--threads N] [--min-time S] [--filter SUBSTRING] [--json FILE] "
                            "[--no-winograd] [--cold]\n");
            return !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "minirt_kernels: --threads must be 1..64\n");
        return 2;
    }
    if (cold && !(cold_buf = malloc(COLD_BYTES))) {
        fprintf(stderr, "minirt_kernels: out of memory (--cold)\n");
        return 1;
    }
    double peak = fma_peak(threads), peak1 = threads > 1 ? fma_peak(1) : peak, bw = triad_bandwidth(threads);
    printf("machine: %d threads, FMA probe (%s) %.1f GFLOP/s (%.1f on one thread), STREAM triad %.1f GB/s, BLAS %s\n",
           threads, fma_isa(), peak, peak1, bw, mrt_blas_core_name());
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) {
        fprintf(stderr, "minirt_kernels: cannot write %s: %s\n", json, strerror(errno));
        return 1;
    }
    if (jf)
        fprintf(jf, "{\"threads\": %d, \"fma_isa\": \"%s\", \"fma_gflops\": %.3f, \"fma_gflops_1thread\": %.3f, "
                    "\"triad_gbs\": %.3f, \"blas_core\": \"%s\", \"no_winograd\": %s, \"cold\": %s, \"cases\": [",
                threads, fma_isa(), peak, peak1, bw, mrt_blas_core_name(), no_winograd ? "true" : "false",
                cold ? "true" : "false");
    if (cold) printf("cold: caches evicted before each run (the case's inputs read again)\n");
    printf("\n%-40s %10s %12s %9s\n", "case", "median ms", "rate", "of peak");
    int shown = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kcase *k = &cases[i];
        if (filter && !strstr(k->name, filter)) continue;
        double sec = run_case(k, threads, no_winograd, min_time);
        double rate = k->work / sec / 1e9, share = k->unit == UNIT_GFLOPS ? rate / peak : rate / bw;
        printf("%-40s %10.3f %7.1f %-4s %8.1f%%\n", k->name, sec * 1e3, rate, k->unit == UNIT_GFLOPS ? "GF/s" : "GB/s",
               100 * share);
        if (jf)
            fprintf(jf, "%s{\"name\": \"%s\", \"median_ms\": %.6f, \"%s\": %.3f, \"share_of_peak\": %.4f}",
                    shown ? ", " : "", k->name, sec * 1e3, k->unit == UNIT_GFLOPS ? "gflops" : "gbs", rate, share);
        shown++;
    }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    printf("\n(GF/s cases against the FMA probe, GB/s cases against the triad; CUDA sweeps: not built here, see "
           "bench/README.md)\n");
    return 0;
}
