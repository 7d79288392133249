/* The loader on real and malformed files: every ONNX conformance model and test-data file loads; truncated,
 * garbage and inconsistent models give a clear status (never a crash); external data can't escape the model's
 * folder; an input nothing defines is reported at plan time, naming it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/graph.h"
#include "harness.h"
#include "loader/tensor_proto.h"
#include "proto_model.h"

#define ONNX_TESTS MRT_SOURCE_DIR "/../shared/onnx-tests"

/* ------------------------------------------------------------------ building ModelProtos */

typedef struct proto_model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset, *opsets[1];
    Onnx__NodeProto node, *nodes[1];
    Onnx__ValueInfoProto in, out, *ins[1], *outs[1];
    Onnx__TensorProto init, *inits[1];
    Onnx__StringStringEntryProto ext[2], *exts[2];
    char *node_in[1], *node_out[1];
    float raw[4];
} proto_model;

/* y = Relu(x) with x an initializer of 4 floats (raw_data). */
static void build(proto_model *p)
{
    memset(p, 0, sizeof *p);
    th_proto_model_init(&p->m, &p->g, &p->opset, p->opsets, 8, 14);
    onnx__node_proto__init(&p->node);
    onnx__value_info_proto__init(&p->out);
    onnx__tensor_proto__init(&p->init);
    p->node_in[0] = "x";
    p->node_out[0] = "y";
    p->node.op_type = "Relu";
    p->node.n_input = 1;
    p->node.input = p->node_in;
    p->node.n_output = 1;
    p->node.output = p->node_out;
    p->nodes[0] = &p->node;
    p->g.n_node = 1;
    p->g.node = p->nodes;
    p->out.name = "y";
    p->outs[0] = &p->out;
    p->g.n_output = 1;
    p->g.output = p->outs;
    static int64_t dims[1] = {4};
    p->init.name = "x";
    p->init.n_dims = 1;
    p->init.dims = dims;
    p->init.has_data_type = 1;
    p->init.data_type = MRT_DTYPE_FLOAT;
    p->raw[0] = -1;
    p->raw[1] = 2;
    p->raw[2] = -3;
    p->raw[3] = 4;
    p->init.has_raw_data = 1;
    p->init.raw_data.data = (uint8_t *)p->raw;
    p->init.raw_data.len = sizeof p->raw;
    p->inits[0] = &p->init;
    p->g.n_initializer = 1;
    p->g.initializer = p->inits;
}

static mrt_status load_and_run(const uint8_t *bytes, size_t len, const char *dir, float *y0)
{
    mrt_model *m = NULL;
    mrt_status st = mrt_model_load_from_memory(bytes, len, dir, &m);
    if (st) return st;
    mrt_session *s = NULL;
    st = mrt_session_new(m, NULL, &s);
    if (!st) st = mrt_session_run(s, 0, NULL, NULL);
    if (!st && y0) *y0 = ((float *)mrt_session_output(s, 0)->tensor.data)[0];
    mrt_session_free(s);
    mrt_model_free(m);
    return st;
}

Test(loader, a_built_model_runs)
{
    proto_model p;
    build(&p);
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    float y0 = -1;
    cr_assert_eq(load_and_run(b, len, NULL, &y0), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y0, 0.0f);
    free(b);
}

Test(loader, truncated_and_garbage_bytes_give_a_status)
{
    proto_model p;
    build(&p);
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    int failures = 0;
    for (size_t cut = 1; cut < len; cut++) {
        mrt_status st = load_and_run(b, cut, NULL, NULL);
        if (st) {
            failures++;
            cr_assert(strlen(mrt_last_error()) > 0, "truncated at %zu: a failure must say why", cut);
        }
    }
    cr_assert_gt(failures, (int)len / 2, "most truncations must be refused (%d of %zu)", failures, len);
    th_rng r;
    th_rng_init(&r, th_seed("loader.garbage"));
    for (int i = 0; i < 500; i++) {
        uint8_t junk[256];
        size_t n = (size_t)th_rng_int(&r, 1, sizeof junk);
        for (size_t k = 0; k < n; k++) junk[k] = (uint8_t)th_rng_int(&r, 0, 255);
        (void)load_and_run(junk, n, NULL, NULL); /* any status; no crash, no leak */
    }
    mrt_model *m;
    cr_assert_eq(mrt_model_load_from_memory("\xff\xff\xff\xff", 4, NULL, &m), MRT_STATUS_INVALID_MODEL);
    free(b);
}

Test(loader, raw_data_of_the_wrong_size_is_named)
{
    proto_model p;
    build(&p);
    p.init.raw_data.len = 12; /* 3 floats for a [4] tensor */
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    cr_assert_eq(load_and_run(b, len, NULL, NULL), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "'x'") && strstr(mrt_last_error(), "raw_data"), "%s", mrt_last_error());
    free(b);
}

Test(loader, unknown_dtype_is_refused)
{
    proto_model p;
    build(&p);
    p.init.data_type = 99;
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    cr_assert_neq(load_and_run(b, len, NULL, NULL), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "99"), "%s", mrt_last_error());
    free(b);
}

Test(loader, undefined_input_is_reported_at_plan_time)
{
    proto_model p;
    build(&p);
    p.node_in[0] = "nobody_makes_this";
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    cr_assert_eq(load_and_run(b, len, NULL, NULL), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "nobody_makes_this") && strstr(mrt_last_error(), "Relu"), "%s", mrt_last_error());
    free(b);
}

static mrt_status with_external(const char *dir, const char *location, const char *offset)
{
    proto_model p;
    build(&p);
    p.init.has_raw_data = 0;
    p.init.has_data_location = 1;
    p.init.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    p.ext[0] = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    p.ext[0].key = "location";
    p.ext[0].value = (char *)location;
    p.exts[0] = &p.ext[0];
    p.init.n_external_data = 1;
    if (offset) {
        p.ext[1] = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
        p.ext[1].key = "offset";
        p.ext[1].value = (char *)offset;
        p.exts[1] = &p.ext[1];
        p.init.n_external_data = 2;
    }
    p.init.external_data = p.exts;
    size_t len;
    uint8_t *b = th_proto_model_pack(&p.m, &len);
    float y0 = -1;
    mrt_status st = load_and_run(b, len, dir, &y0);
    if (!st) cr_assert_eq(y0, 0.0f);
    free(b);
    return st;
}

Test(loader, external_data_stays_inside_the_model_folder)
{
    char dir[] = "/tmp/mrt_ext_XXXXXX", path[256];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/weights.bin", dir);
    FILE *f = fopen(path, "wb");
    float w[4] = {-1, 2, -3, 4};
    fwrite(w, sizeof w, 1, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/escape", dir);
    cr_assert_eq(symlink("/etc/passwd", path), 0);
    cr_assert_eq(with_external(dir, "weights.bin", NULL), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_neq(with_external(dir, "../weights.bin", NULL), MRT_STATUS_OK, "'..' must be refused");
    cr_assert(strstr(mrt_last_error(), "weights.bin"), "%s", mrt_last_error());
    cr_assert_neq(with_external(dir, "/etc/passwd", NULL), MRT_STATUS_OK, "absolute paths must be refused");
    cr_assert_neq(with_external(dir, "escape", NULL), MRT_STATUS_OK, "a symlink out of the folder must be refused");
    cr_assert_neq(with_external(dir, "weights.bin", "12"), MRT_STATUS_OK, "data beyond the file must be refused");
    cr_assert_neq(with_external(dir, "missing.bin", NULL), MRT_STATUS_OK);
    cr_assert_neq(with_external(NULL, "weights.bin", NULL), MRT_STATUS_OK, "no folder: external data is refused");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------------------------ the conformance data */

static mrt_type_kind kind_of(const mrt_graph_value *v)
{
    return v->type.kind == MRT_TYPE_UNKNOWN ? MRT_TYPE_TENSOR : v->type.kind;
}

Test(loader, every_conformance_model_and_data_file_loads, .timeout = 300)
{
    const char *suites[] = {"node", "simple", "pytorch-operator", "pytorch-converted"};
    int n_models = 0, n_files = 0;
    for (int s = 0; s < 4; s++) {
        char root[512];
        snprintf(root, sizeof root, "%s/%s", ONNX_TESTS, suites[s]);
        DIR *d = opendir(root);
        if (!d) cr_skip_test("no ONNX test data at %s", root);
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/model.onnx", root, de->d_name);
            mrt_model *m;
            cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_OK, "%s: %s", path, mrt_last_error());
            n_models++;
            for (int ds = 0;; ds++) {
                char set[1024];
                snprintf(set, sizeof set, "%s/%s/test_data_set_%d", root, de->d_name, ds);
                struct stat sb;
                if (stat(set, &sb) != 0) break;
                const mrt_graph *g = m->graph;
                for (int io = 0; io < 2; io++) {
                    int n = io ? g->n_outputs : mrt_model_n_inputs(m);
                    for (int i = 0; i < n; i++) {
                        snprintf(path, sizeof path, "%s/%s_%d.pb", set, io ? "output" : "input", i);
                        if (stat(path, &sb) != 0) continue;
                        int vi = io ? g->outputs[i] : mrt_graph_find_value(g, mrt_model_input_name(m, i));
                        mrt_value v;
                        cr_assert_eq(mrt_value_proto_read_file(path, kind_of(&g->values[vi]), &v), MRT_STATUS_OK, "%s: %s",
                                     path, mrt_last_error());
                        mrt_value_release(&v);
                        n_files++;
                    }
                }
            }
            mrt_model_free(m);
        }
        closedir(d);
    }
    cr_assert_geq(n_models, 1900, "%d models", n_models);
    cr_assert_gt(n_files, 5000, "%d data files", n_files);
}

/* A graph built through the C API (engine/graph.h) is held to what the loader's validation holds a file to: a node
   output named like an initializer or a graph input is a value defined twice, refused naming both */
Test(loader, a_built_graph_refuses_a_node_output_defined_twice)
{
    const char *twice[] = {"w", "x"};
    for (int i = 0; i < 2; i++) {
        mrt_graph *g = mrt_graph_new("g");
        cr_assert_eq(mrt_graph_add_input(g, "x", NULL, NULL), MRT_STATUS_OK);
        mrt_tensor w = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){2}, (double[]){1, 2});
        cr_assert_eq(mrt_graph_set_initializer(g, "w", &w), MRT_STATUS_OK);
        mrt_tensor_release(&w);
        mrt_status st = mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"x"}, 1, &twice[i], NULL);
        cr_assert_eq(st, MRT_STATUS_INVALID_MODEL, "a Relu writing '%s'", twice[i]);
        cr_assert(strstr(mrt_last_error(), "defined twice") && strstr(mrt_last_error(), "relu") &&
                      strstr(mrt_last_error(), i ? "a graph input" : "an initializer"),
                  "%s", mrt_last_error());
        mrt_graph_free(g);
    }
}
