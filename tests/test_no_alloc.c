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
    p.last = 0;
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
