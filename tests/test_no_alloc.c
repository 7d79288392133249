/* "Nothing allocates inside a run": after the first run has planned (arena, workspaces), a second run with the
 * same shapes must not call malloc/calloc/realloc/aligned_alloc at all. The allocator is interposed here
 * (glibc lets an executable define malloc); the count is per node, so a failure names the kernels.
 * Not built under sanitizers, which interpose the allocator themselves. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "harness.h"
#include "loader/npy.h"

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t s);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t a, size_t n);

static volatile int counting;
static volatile long n_allocs;

void *malloc(size_t n)
{
    if (counting) n_allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t s)
{
    if (counting) n_allocs++;
    return __libc_calloc(n, s);
}

void *realloc(void *p, size_t n)
{
    if (counting) n_allocs++;
    return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    if (counting) n_allocs++;
    return __libc_memalign(a, n);
}

typedef struct per_node {
    long last;
    char report[2048];
    size_t len;
} per_node;

static mrt_status count_node(void *user, const mrt_node *node, int n, const char *const *names, const mrt_value *const *v)
{
    (void)n;
    (void)names;
    (void)v;
    per_node *p = user;
    long now = n_allocs;
    if (now != p->last && p->len < sizeof p->report)
        p->len += (size_t)snprintf(p->report + p->len, sizeof p->report - p->len, " %s(%s): %ld;", node->name,
                                   node->op_type, now - p->last);
    p->last = n_allocs; /* the callback's own allocations (none expected) are not charged */
    return MRT_STATUS_OK;
}

static void check_second_run_allocates_nothing(const char *model_path, const char *input_path)
{
    mrt_model *m;
    cr_assert_eq(mrt_model_load(model_path, &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor x;
    cr_assert_eq(mrt_npy_read_file(input_path, &x), MRT_STATUS_OK, "%s", mrt_last_error());
    per_node p = {0};
    mrt_session_options opt = mrt_session_options_default();
    opt.n_threads = 1;
    opt.on_node = count_node;
    opt.on_node_user = &p;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    const char *name = mrt_model_input_name(m, 0);
    mrt_value xv = mrt_value_from_tensor(x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    n_allocs = 0;
    p = (per_node){0}; /* only the second run's allocations are reported */
    counting = 1;
    mrt_status st = mrt_session_run(s, 1, &name, &xv);
    counting = 0;
    cr_assert_eq(st, MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(n_allocs, 0, "%s: the second run allocated %ld times:%s", model_path, n_allocs, p.report);
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_model_free(m);
}

Test(no_alloc, second_run_of_the_bundled_cnn)
{
    check_second_run_allocates_nothing(MRT_SOURCE_DIR "/models/tiny_cnn.onnx", MRT_SOURCE_DIR "/models/tiny_cnn_input.npy");
}

/* The exported benchmark models (tests/models/run_model_tests.sh writes them; ctest runs this after it). Models
   whose steps have dynamic shapes (the Swin blocks) allocate their outputs by design and are not listed. */
Test(no_alloc, second_run_of_the_exported_models)
{
    const char *dir = getenv("MRT_MODEL_TESTS_DIR");
    if (!dir || !dir[0]) cr_skip_test("MRT_MODEL_TESTS_DIR is not set (ctest's no_alloc_exported_models sets it)");
    const char *models[] = {"resnet18", "mobilenet_v2", "efficientnet_b0", "transformer_encoder", "dcnv2"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char model[1024], input[1024];
        snprintf(model, sizeof model, "%s/%s.onnx", dir, models[i]);
        snprintf(input, sizeof input, "%s/%s_input.npy", dir, models[i]);
        FILE *f = fopen(model, "rb");
        if (!f) {
            /* CI requires the model tests (and so the exports); elsewhere torch may be missing */
            const char *req = getenv("MRT_REQUIRE_MODEL_TESTS");
            cr_assert(!(req && strcmp(req, "1") == 0), "%s is missing although MRT_REQUIRE_MODEL_TESTS=1", model);
            cr_skip_test("%s is missing (model_tests did not export it: no torch?)", model);
        }
        fclose(f);
        check_second_run_allocates_nothing(model, input);
    }
}

/* ------------------------------------------------------------------ one op at a time */

/* The kernels that need scratch memory (index tables, float16 copies, sort buffers, interpolation tables, RNN
   step buffers) take it from the planned workspace: run each op twice in one session and count the second run's
   allocations. */
static void expect_second_run_allocates_nothing(th_case *c, int n_out, const char *label)
{
    mrt_session_options opt = mrt_session_options_default();
    opt.n_threads = 1;
    mrt_session *s;
    const char *names[TH_MAX_IO];
    mrt_value vals[TH_MAX_IO];
    int n;
    cr_assert_eq(th_session(c, &opt, n_out, &s, names, vals, &n), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    cr_assert_eq(mrt_session_run(s, n, names, vals), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    n_allocs = 0;
    counting = 1;
    mrt_status st = mrt_session_run(s, n, names, vals);
    counting = 0;
    cr_assert_eq(st, MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    cr_expect_eq(n_allocs, 0, "%s: the second run allocated %ld times", label, n_allocs);
    mrt_session_free(s);
    th_free(c);
}

Test(no_alloc, second_run_of_ops_with_scratch_memory)
{
    th_rng r;
    th_rng_init(&r, th_seed("no_alloc.ops"));
    const int64_t s4[4] = {1, 3, 8, 8}, s2[2] = {6, 5};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, s2, -1, 1), x4 = th_rand(&r, MRT_DTYPE_FLOAT, 4, s4, -1, 1);
    mrt_tensor h = th_rand(&r, MRT_DTYPE_FLOAT16, 2, s2, -1, 1), h4 = th_rand(&r, MRT_DTYPE_FLOAT16, 4, s4, -1, 1);
    mrt_tensor hw = th_rand(&r, MRT_DTYPE_FLOAT16, 2, (int64_t[]){5, 4}, -1, 1);
    mrt_tensor idx = th_vec_i64(3, (int64_t[]){4, 0, -1});
    mrt_tensor idx_el = th_from_f64(MRT_DTYPE_INT64, 2, (int64_t[]){2, 5}, (double[]){0, 1, 2, 3, 4, 5, 4, 3, 2, 1});
    mrt_tensor idx_nd = th_from_f64(MRT_DTYPE_INT64, 2, (int64_t[]){2, 1}, (double[]){5, 1});
    mrt_tensor upd_el = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 5}, -1, 1);
    mrt_tensor upd_nd = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 5}, -1, 1);
    mrt_tensor k = th_vec_i64(1, (int64_t[]){2});
    mrt_tensor q8 = th_rand(&r, MRT_DTYPE_UINT8, 2, s2, 0, 9), q8w = th_rand(&r, MRT_DTYPE_UINT8, 2, (int64_t[]){5, 4}, 0, 9);
    mrt_tensor q8x4 = th_rand(&r, MRT_DTYPE_UINT8, 4, s4, 0, 9);
    mrt_tensor q8k = th_rand(&r, MRT_DTYPE_UINT8, 4, (int64_t[]){2, 3, 3, 3}, 0, 9);
    mrt_tensor sizes = th_vec_i64(4, (int64_t[]){1, 3, 13, 5});
    mrt_tensor axes = th_vec_i64(1, (int64_t[]){1});
    th_case *c;

    /* ops whose inputs are all plain (runtime) tensors, K of TopK excepted */
    const struct {
        const char *op, *label;
        int opset, n_out;
        const mrt_tensor *in[3];
    } plain[] = {
        {"Gather", "Gather", 13, 1, {&x, &idx}},
        {"GatherElements", "GatherElements", 13, 1, {&x, &idx_el}},
        {"GatherND", "GatherND", 13, 1, {&x, &idx_nd}},
        {"ScatterElements", "ScatterElements", 18, 1, {&x, &idx_el, &upd_el}},
        {"ScatterND", "ScatterND", 18, 1, {&x, &idx_nd, &upd_nd}},
        {"MatMul", "MatMul float16", 13, 1, {&h, &hw}},
        {"Gemm", "Gemm float16", 13, 1, {&h, &hw}},
        {"MatMulInteger", "MatMulInteger", 10, 1, {&q8, &q8w}},
        {"ConvInteger", "ConvInteger", 10, 1, {&q8x4, &q8k}},
    };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        c = th_begin(plain[i].op, "", plain[i].opset);
        for (int j = 0; j < 3 && plain[i].in[j]; j++) th_input(c, plain[i].in[j]);
        expect_second_run_allocates_nothing(c, plain[i].n_out, plain[i].label);
    }
    c = th_begin("TopK", "", 11);
    th_input(c, &x);
    th_input_const(c, &k);
    expect_second_run_allocates_nothing(c, 2, "TopK");
    const char *pools[3] = {"MaxPool", "AveragePool", "LpPool"};
    for (int i = 0; i < 3; i++) {
        c = th_begin(pools[i], "", 18);
        th_input(c, &h4);
        th_attr_ints(c, "kernel_shape", 2, (int64_t[]){3, 3});
        expect_second_run_allocates_nothing(c, 1, pools[i]);
    }
    c = th_begin("GlobalAveragePool", "", 1);
    th_input(c, &h4);
    expect_second_run_allocates_nothing(c, 1, "GlobalAveragePool float16");
    const char *reduces[4] = {"ReduceSum", "ReduceMean", "ReduceL2", "ReduceProd"};
    for (int i = 0; i < 4; i++) {
        c = th_begin(reduces[i], "", 18);
        th_input(c, &x4);
        th_input_const(c, &axes);
        expect_second_run_allocates_nothing(c, 1, reduces[i]);
    }
    c = th_begin("ReduceSum", "", 13);
    th_input(c, &q8x4);
    th_input_const(c, &axes);
    expect_second_run_allocates_nothing(c, 1, "ReduceSum uint8");
    const char *modes[3] = {"nearest", "linear", "cubic"};
    for (int i = 0; i < 3; i++) {
        c = th_begin("Resize", "", 19);
        th_input(c, &x4);
        th_input_absent(c);
        th_input_absent(c);
        th_input_const(c, &sizes);
        th_attr_string(c, "mode", modes[i]);
        expect_second_run_allocates_nothing(c, 1, modes[i]);
    }
    /* downsampling with antialias (wider footprints), tf_crop_and_resize (out-of-range flags), Upsample-9 */
    mrt_tensor small = th_vec_i64(4, (int64_t[]){1, 3, 3, 5}), roi = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){8},
                                                                                   (double[]){0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3});
    c = th_begin("Resize", "", 19);
    th_input(c, &x4);
    th_input_absent(c);
    th_input_absent(c);
    th_input_const(c, &small);
    th_attr_string(c, "mode", "cubic");
    th_attr_int(c, "antialias", 1);
    expect_second_run_allocates_nothing(c, 1, "Resize cubic antialias");
    c = th_begin("Resize", "", 19);
    th_input(c, &x4);
    th_input_const(c, &roi);
    th_input_absent(c);
    th_input_const(c, &sizes);
    th_attr_string(c, "mode", "linear");
    th_attr_string(c, "coordinate_transformation_mode", "tf_crop_and_resize");
    expect_second_run_allocates_nothing(c, 1, "Resize tf_crop_and_resize");
    mrt_tensor up_scales = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1, 1, 2, 1.5});
    c = th_begin("Upsample", "", 9);
    th_input(c, &x4);
    th_input_const(c, &up_scales);
    expect_second_run_allocates_nothing(c, 1, "Upsample");
    mrt_tensor_release(&small);
    mrt_tensor_release(&roi);
    mrt_tensor_release(&up_scales);
    c = th_begin("Einsum", "", 12);
    th_input(c, &x);
    th_input(c, &x);
    th_attr_string(c, "equation", "ij,kj->ik");
    expect_second_run_allocates_nothing(c, 1, "Einsum");
    c = th_begin("Softmax", "", 13);
    th_input(c, &x);
    expect_second_run_allocates_nothing(c, 1, "Softmax");
    mrt_tensor ch_scale = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, 0.5, 1.5);
    mrt_tensor ch_bias = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, -1, 1);
    c = th_begin("InstanceNormalization", "", 22);
    th_input(c, &x4);
    th_input_const(c, &ch_scale);
    th_input_const(c, &ch_bias);
    expect_second_run_allocates_nothing(c, 1, "InstanceNormalization");
    c = th_begin("GroupNormalization", "", 21);
    th_input(c, &x4);
    th_input_const(c, &ch_scale);
    th_input_const(c, &ch_bias);
    th_attr_int(c, "num_groups", 3);
    expect_second_run_allocates_nothing(c, 1, "GroupNormalization");
    const char *norms[3] = {"LpNormalization", "MeanVarianceNormalization", "LRN"};
    for (int i = 0; i < 3; i++) {
        c = th_begin(norms[i], "", 13);
        th_input(c, &x4);
        if (i == 2) th_attr_int(c, "size", 3);
        expect_second_run_allocates_nothing(c, 1, norms[i]);
    }
    c = th_begin("Split", "", 18);
    th_input(c, &x);
    th_attr_int(c, "num_outputs", 2);
    expect_second_run_allocates_nothing(c, 2, "Split");
    const char *cells[3] = {"RNN", "GRU", "LSTM"};
    for (int i = 0; i < 6; i++) {
        int gates = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 4;
        mrt_dtype dt = i < 3 ? MRT_DTYPE_FLOAT : MRT_DTYPE_FLOAT16;
        mrt_tensor sx = th_rand(&r, dt, 3, (int64_t[]){3, 2, 4}, -1, 1);
        mrt_tensor sw = th_rand(&r, dt, 3, (int64_t[]){2, gates * 5, 4}, -1, 1);
        mrt_tensor sr = th_rand(&r, dt, 3, (int64_t[]){2, gates * 5, 5}, -1, 1);
        c = th_begin(cells[i % 3], "", 22);
        th_input(c, &sx);
        th_input_const(c, &sw);
        th_input_const(c, &sr);
        th_attr_int(c, "hidden_size", 5);
        th_attr_string(c, "direction", "bidirectional");
        char label[64];
        snprintf(label, sizeof label, "%s %s", cells[i % 3], mrt_dtype_name(dt));
        expect_second_run_allocates_nothing(c, 2, label);
        mrt_tensor_release(&sx);
        mrt_tensor_release(&sw);
        mrt_tensor_release(&sr);
    }
    mrt_tensor sq = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 4, 4}, -1, 1);
    c = th_begin("Det", "", 22);
    th_input(c, &sq);
    expect_second_run_allocates_nothing(c, 1, "Det");
    mrt_tensor target = th_from_f64(MRT_DTYPE_INT64, 1, (int64_t[]){6}, (double[]){0, 4, 1, 2, 3, 0});
    c = th_begin("NegativeLogLikelihoodLoss", "", 22);
    th_input(c, &x);
    th_input(c, &target);
    expect_second_run_allocates_nothing(c, 1, "NegativeLogLikelihoodLoss");
    c = th_begin("SoftmaxCrossEntropyLoss", "", 13);
    th_input(c, &x);
    th_input(c, &target);
    expect_second_run_allocates_nothing(c, 2, "SoftmaxCrossEntropyLoss");
    c = th_begin("RandomNormal", "", 22);
    th_attr_ints(c, "shape", 2, (int64_t[]){3, 4});
    th_attr_float(c, "seed", 3);
    expect_second_run_allocates_nothing(c, 1, "RandomNormal");
    const int64_t lens[3] = {16, 12, 100}; /* radix-2, direct sum, Bluestein */
    for (int i = 0; i < 3; i++) {
        mrt_tensor sig = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, lens[i], 1}, -1, 1);
        c = th_begin("DFT", "", 17);
        th_input(c, &sig);
        th_attr_int(c, "axis", 1);
        char label[32];
        snprintf(label, sizeof label, "DFT of %lld", (long long)lens[i]);
        expect_second_run_allocates_nothing(c, 1, label);
        mrt_tensor_release(&sig);
    }
    mrt_tensor audio = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 64, 1}, -1, 1);
    mrt_tensor step = th_scalar_i64(8), frame = th_scalar_i64(20);
    c = th_begin("STFT", "", 17);
    th_input(c, &audio);
    th_input_const(c, &step);
    th_input_absent(c);
    th_input_const(c, &frame);
    expect_second_run_allocates_nothing(c, 1, "STFT");
    mrt_tensor_release(&audio);
    mrt_tensor_release(&step);
    mrt_tensor_release(&frame);
    mrt_tensor_release(&sq);
    mrt_tensor_release(&target);
    mrt_tensor_release(&ch_scale);
    mrt_tensor_release(&ch_bias);

    mrt_tensor *all[] = {&x, &x4, &h, &h4, &hw, &idx, &idx_el, &idx_nd, &upd_el, &upd_nd, &k, &q8, &q8w, &q8x4, &q8k,
                         &sizes, &axes};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mrt_tensor_release(all[i]);
}
