/* A model's weights held once (docs/memory.md, "Weights"): a generated model with large initializers, written to a
 * file, loads with its raw_data borrowed from the mapping (aligned) or copied once (misaligned); a run lets go of
 * the weights its kernels packed and keeps the ones other nodes read; a new input shape replans from bytes copied
 * again; results match the same model loaded from memory bit for bit; a large raw_data of the wrong size is named. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "engine/graph.h"
#include "engine/weights.h"
#include "onnx.pb-c.h"

enum { K = 64 };

typedef struct gen_model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset, *opsets[1];
    Onnx__NodeProto nodes[3], *pnodes[3];
    Onnx__ValueInfoProto in, out, *ins[1], *outs[1];
    Onnx__TensorProto inits[3], *pinits[3];
    char *io[3][2];
    char *outs_n[3][1];
    char w2_name[32];
    float w1[K * K], w2[K * K], b[K];
} gen_model;

static int64_t dims_kk[2] = {K, K}, dims_k[1] = {K};

static void tensor(Onnx__TensorProto *t, const char *name, int rank, int64_t *dims, float *data, size_t n)
{
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->n_dims = (size_t)rank;
    t->dims = dims;
    t->has_data_type = 1;
    t->data_type = MRT_DTYPE_FLOAT;
    t->has_raw_data = 1;
    t->raw_data.data = (uint8_t *)data;
    t->raw_data.len = n * sizeof(float);
}

static void node(gen_model *p, int i, const char *op, const char *a, const char *b, const char *y)
{
    onnx__node_proto__init(&p->nodes[i]);
    p->io[i][0] = (char *)a;
    p->io[i][1] = (char *)b;
    p->outs_n[i][0] = (char *)y;
    p->nodes[i].op_type = (char *)op;
    p->nodes[i].n_input = 2;
    p->nodes[i].input = p->io[i];
    p->nodes[i].n_output = 1;
    p->nodes[i].output = p->outs_n[i];
    p->pnodes[i] = &p->nodes[i];
}

/* y = MatMul(MatMul(x, w1), w2) + b: w1 and w2 are packed by MatMul's prepare, b is read by Add. `pad` lengthens
   w2's name, which moves its raw_data in the file. */
static void build(gen_model *p, int pad)
{
    memset(p, 0, sizeof *p);
    onnx__model_proto__init(&p->m);
    onnx__graph_proto__init(&p->g);
    onnx__operator_set_id_proto__init(&p->opset);
    onnx__value_info_proto__init(&p->in);
    onnx__value_info_proto__init(&p->out);
    p->m.has_ir_version = 1;
    p->m.ir_version = 8;
    p->opset.domain = "";
    p->opset.has_version = 1;
    p->opset.version = 17;
    p->opsets[0] = &p->opset;
    p->m.n_opset_import = 1;
    p->m.opset_import = p->opsets;
    p->m.graph = &p->g;
    p->g.name = "g";
    snprintf(p->w2_name, sizeof p->w2_name, "w2%.*s", pad, "__________");
    node(p, 0, "MatMul", "x", "w1", "h");
    node(p, 1, "MatMul", "h", p->w2_name, "z");
    node(p, 2, "Add", "z", "b", "y");
    p->g.n_node = 3;
    p->g.node = p->pnodes;
    p->in.name = "x";
    p->ins[0] = &p->in;
    p->g.n_input = 1;
    p->g.input = p->ins;
    p->out.name = "y";
    p->outs[0] = &p->out;
    p->g.n_output = 1;
    p->g.output = p->outs;
    for (int i = 0; i < K * K; i++) {
        p->w1[i] = (float)((i * 37) % 101 - 50) / 64.0f;
        p->w2[i] = (float)((i * 53) % 97 - 48) / 32.0f;
    }
    for (int i = 0; i < K; i++) p->b[i] = (float)i / 8.0f;
    tensor(&p->inits[0], "w1", 2, dims_kk, p->w1, K * K);
    tensor(&p->inits[1], p->w2_name, 2, dims_kk, p->w2, K * K);
    tensor(&p->inits[2], "b", 1, dims_k, p->b, K);
    for (int i = 0; i < 3; i++) p->pinits[i] = &p->inits[i];
    p->g.n_initializer = 3;
    p->g.initializer = p->pinits;
}

static uint8_t *pack(gen_model *p, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(&p->m);
    uint8_t *buf = malloc(*len);
    onnx__model_proto__pack(&p->m, buf);
    return buf;
}

/* where `data` (n bytes) lies in the packed model */
static size_t offset_of(const uint8_t *buf, size_t len, const void *data, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, data, n) == 0) return i;
    cr_assert_fail("raw_data not found in the packed model");
    return 0;
}

static void run(mrt_session *s, int rows, float *y)
{
    float x[4 * K];
    for (int i = 0; i < rows * K; i++) x[i] = (float)((i * 7) % 13 - 6) / 4.0f;
    mrt_tensor t = {MRT_DTYPE_FLOAT, 2, {rows, K}, x};
    mrt_value v = mrt_value_from_tensor(t);
    const char *name = "x";
    cr_assert_eq(mrt_session_run(s, 1, &name, &v), MRT_STATUS_OK, "%s", mrt_last_error());
    const mrt_value *out = mrt_session_output(s, 0);
    cr_assert_eq(out->tensor.shape[0], rows);
    memcpy(y, out->tensor.data, (size_t)rows * K * sizeof(float));
}

/* run_once: the weights' bytes let go while the first node's (MatMul x w1) callback runs: w2 and b (not read yet) */
typedef struct once_probe {
    const mrt_model *m;
    int nodes;
    size_t after_first;
} once_probe;

static mrt_status after_node(void *user, const mrt_node *node, int n, const char *const *names, const mrt_value *const *v)
{
    (void)node, (void)n, (void)names, (void)v;
    once_probe *p = user;
    if (p->nodes++ % 3 == 0) {
        mrt_weight_account a;
        mrt_weights_account(p->m, &a);
        p->after_first = a.dropped_bytes;
    }
    return MRT_STATUS_OK;
}

Test(weights, held_once_released_once_packed_and_copied_again_to_replan)
{
    /* a w2 whose raw_data is misaligned for float while w1's is aligned, or the other way round */
    gen_model *p = malloc(sizeof *p);
    uint8_t *buf = NULL;
    size_t len = 0;
    bool mixed = false;
    for (int pad = 0; pad < 4 && !mixed; pad++) {
        build(p, pad);
        free(buf);
        buf = pack(p, &len);
        size_t o1 = offset_of(buf, len, p->w1, sizeof p->w1), o2 = offset_of(buf, len, p->w2, sizeof p->w2);
        mixed = (o1 % 4 == 0) != (o2 % 4 == 0);
    }
    cr_assert(mixed, "no name length put one weight on a float boundary and the other off it");
    char path[] = "/tmp/minirt_weights_XXXXXX.onnx";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);

    const size_t wbytes = K * K * sizeof(float), bbytes = K * sizeof(float);
    mrt_model *m = NULL, *mm = NULL;
    cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_model_load_from_memory(buf, len, NULL, &mm), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_weight_account a;
    mrt_weights_account(m, &a);
    cr_assert_eq(a.mapped_bytes + a.copied_bytes, 2 * wbytes + bbytes, "mapped %zu + copied %zu", a.mapped_bytes,
                 a.copied_bytes);
    cr_assert(a.mapped_bytes >= wbytes && a.copied_bytes >= wbytes, "one weight mapped, one copied: %zu, %zu",
              a.mapped_bytes, a.copied_bytes);
    cr_assert_eq(a.dropped_bytes, 0);
    mrt_weights_account(mm, &a); /* from a caller's buffer: copies, none borrowed */
    cr_assert_eq(a.mapped_bytes, 0);

    mrt_session *s = NULL, *ref = NULL;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_session_new(mm, NULL, &ref), MRT_STATUS_OK, "%s", mrt_last_error());
    float y[4 * K], want[4 * K];
    for (int round = 0; round < 3; round++) { /* 1 row, 3 rows (a replan: w1, w2 come back), 1 row again */
        int rows = round == 1 ? 3 : 1;
        run(s, rows, y);
        run(ref, rows, want);
        cr_assert(memcmp(y, want, (size_t)rows * K * sizeof(float)) == 0, "round %d: results differ", round);
        mrt_session_stats st;
        mrt_session_get_stats(s, &st);
        cr_assert_eq(st.weights_released_bytes, 2 * wbytes, "round %d: released %zu", round, st.weights_released_bytes);
        cr_assert_eq(st.weights_mapped_bytes + st.weights_copied_bytes, bbytes, "round %d: b (read by Add) is kept",
                     round);
        cr_assert(st.weights_packed_bytes >= 2 * wbytes, "round %d: packed %zu", round, st.weights_packed_bytes);
    }
    /* a second session on the same model plans from the bytes copied again */
    mrt_session *s2 = NULL;
    cr_assert_eq(mrt_session_new(m, NULL, &s2), MRT_STATUS_OK, "%s", mrt_last_error());
    run(s2, 2, y);
    run(ref, 2, want);
    cr_assert(memcmp(y, want, 2 * K * sizeof(float)) == 0, "second session: results differ");
    mrt_session_free(s2);
    mrt_session_free(s);
    /* no plan holds them: released weights stay released until a plan holds them again */
    mrt_weights_account(m, &a);
    cr_assert_eq(a.dropped_bytes, 2 * wbytes);
    /* run_once (minirt info's trial run): nothing packed, each weight there only from its first reader to its last;
       a second run plans again and copies them again; results the same bits */
    mrt_session_options o1 = mrt_session_options_default();
    o1.run_once = true;
    o1.on_node = after_node;
    once_probe probe = {m, 0, 0};
    o1.on_node_user = &probe;
    cr_assert_eq(mrt_session_new(m, &o1, &s2), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int round = 0; round < 2; round++) {
        int rows = round ? 3 : 2;
        run(s2, rows, y);
        run(ref, rows, want);
        cr_assert(memcmp(y, want, (size_t)rows * K * sizeof(float)) == 0, "run_once, round %d: results differ", round);
        cr_assert_eq(probe.after_first, wbytes + bbytes, "round %d: at the first MatMul, let go: %zu", round,
                     probe.after_first);
        mrt_session_stats st;
        mrt_session_get_stats(s2, &st);
        cr_assert_eq(st.weights_packed_bytes, 0);
        cr_assert_eq(st.weights_released_bytes, 2 * wbytes + bbytes, "round %d: released %zu", round,
                     st.weights_released_bytes);
        cr_assert_eq(st.weights_mapped_bytes + st.weights_copied_bytes, 0);
    }
    mrt_session_free(s2);
    mrt_weights_account(m, &a);
    cr_assert_eq(a.dropped_bytes, 2 * wbytes + bbytes, "run_once let b go too");
    mrt_session_free(ref);
    mrt_model_free(m);
    mrt_model_free(mm);

    /* a large raw_data one byte short is named, from a file and from memory */
    p->inits[1].raw_data.len -= 1;
    free(buf);
    buf = pack(p, &len);
    fd = open(path, O_WRONLY | O_TRUNC);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
    cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "raw_data has 16383 bytes"), "%s", mrt_last_error());
    cr_assert(strstr(mrt_last_error(), p->w2_name), "%s", mrt_last_error());
    cr_assert_eq(mrt_model_load_from_memory(buf, len, NULL, &m), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "raw_data has 16383 bytes"), "%s", mrt_last_error());
    /* and a file cut inside a weight's raw_data is a parse error */
    cr_assert_eq(truncate(path, (off_t)(len - 1000)), 0);
    cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "protobuf parse failed"), "%s", mrt_last_error());
    unlink(path);
    free(buf);
    free(p);
}
