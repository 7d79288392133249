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
#include "proto_model.h"

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
    th_proto_model_init(&p->m, &p->g, &p->opset, p->opsets, 8, 17);
    onnx__value_info_proto__init(&p->in);
    onnx__value_info_proto__init(&p->out);
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
        buf = th_proto_model_pack(&p->m, &len);
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
    buf = th_proto_model_pack(&p->m, &len);
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

/* ---- Conv's other packed layouts: x [1, 32, 8, 8] into three Convs, each on a path whose run reads W packed only:
   a 1x1 projection (channels as lanes, ops_cpu/conv_pointwise.c), a 5x5 conv in 2 groups (ops_cpu/conv_grouped.c)
   and a 3x3 conv dilated 4 whose outer taps read padding for most rows (live taps, ops_cpu/conv.c). Each W's
   raw_data is misaligned, so it is a copy that a release frees (its data NULL): a run reading it would crash. */
enum { CC = 32, CM = 16, CHW = 8, N_CONV = 3 };

typedef struct conv_model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset, *opsets[1];
    Onnx__NodeProto nodes[N_CONV], *pnodes[N_CONV];
    Onnx__AttributeProto attrs[N_CONV][4], *pattrs[N_CONV][4];
    Onnx__ValueInfoProto in, outs[2 * N_CONV], *ins[1], *pouts[2 * N_CONV];
    Onnx__TensorProto inits[N_CONV], *pinits[N_CONV];
    char *io[N_CONV][2], *y[N_CONV][1], wname[N_CONV][32], yname[N_CONV][8];
    int64_t wdims[N_CONV][4], pads[N_CONV][4], dil[N_CONV][2];
    float w[N_CONV][CM * CC * 25];
    size_t wn[N_CONV];
} conv_model;

static void attr_ints(Onnx__AttributeProto *a, const char *name, int64_t n, int64_t *v)
{
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = (size_t)n;
    a->ints = v;
}

/* keep_w: the Ws are graph outputs too, so nothing lets them go (the reference run) */
static void build_convs(conv_model *p, const int pad[N_CONV], bool keep_w)
{
    memset(p, 0, sizeof *p);
    th_proto_model_init(&p->m, &p->g, &p->opset, p->opsets, 8, 17);
    static const int64_t k[N_CONV] = {1, 5, 3}, group[N_CONV] = {1, 2, 1}, dilation[N_CONV] = {1, 1, 4};
    for (int i = 0; i < N_CONV; i++) {
        int64_t cin = CC / group[i], pd = (k[i] - 1) / 2 * dilation[i];
        snprintf(p->wname[i], sizeof p->wname[i], "w%d%.*s", i, pad[i], "__________");
        snprintf(p->yname[i], sizeof p->yname[i], "y%d", i);
        p->wdims[i][0] = CM, p->wdims[i][1] = cin, p->wdims[i][2] = p->wdims[i][3] = k[i];
        p->wn[i] = (size_t)(CM * cin * k[i] * k[i]);
        for (size_t j = 0; j < p->wn[i]; j++) p->w[i][j] = (float)((j * (37 + 6 * i)) % 101 - 50) / 64.0f;
        tensor(&p->inits[i], p->wname[i], 4, p->wdims[i], p->w[i], p->wn[i]);
        p->pinits[i] = &p->inits[i];
        Onnx__NodeProto *n = &p->nodes[i];
        onnx__node_proto__init(n);
        p->io[i][0] = "x";
        p->io[i][1] = p->wname[i];
        p->y[i][0] = p->yname[i];
        n->op_type = "Conv";
        n->n_input = 2;
        n->input = p->io[i];
        n->n_output = 1;
        n->output = p->y[i];
        for (int d = 0; d < 4; d++) p->pads[i][d] = pd;
        p->dil[i][0] = p->dil[i][1] = dilation[i];
        attr_ints(&p->attrs[i][0], "pads", 4, p->pads[i]);
        attr_ints(&p->attrs[i][1], "dilations", 2, p->dil[i]);
        onnx__attribute_proto__init(&p->attrs[i][2]);
        p->attrs[i][2].name = "group";
        p->attrs[i][2].has_type = 1;
        p->attrs[i][2].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->attrs[i][2].has_i = 1;
        p->attrs[i][2].i = group[i];
        for (int a = 0; a < 3; a++) p->pattrs[i][a] = &p->attrs[i][a];
        n->n_attribute = 3;
        n->attribute = p->pattrs[i];
        p->pnodes[i] = n;
        onnx__value_info_proto__init(&p->outs[i]);
        p->outs[i].name = p->yname[i];
        onnx__value_info_proto__init(&p->outs[N_CONV + i]);
        p->outs[N_CONV + i].name = p->wname[i];
    }
    for (int i = 0; i < 2 * N_CONV; i++) p->pouts[i] = &p->outs[i];
    p->g.n_node = N_CONV;
    p->g.node = p->pnodes;
    p->g.n_initializer = N_CONV;
    p->g.initializer = p->pinits;
    onnx__value_info_proto__init(&p->in);
    p->in.name = "x";
    p->ins[0] = &p->in;
    p->g.n_input = 1;
    p->g.input = p->ins;
    p->g.n_output = keep_w ? 2 * N_CONV : N_CONV;
    p->g.output = p->pouts;
}

static void run_convs(mrt_session *s, float *y)
{
    static float x[CC * CHW * CHW];
    for (int i = 0; i < CC * CHW * CHW; i++) x[i] = (float)((i * 7) % 13 - 6) / 4.0f;
    mrt_tensor t = {MRT_DTYPE_FLOAT, 4, {1, CC, CHW, CHW}, x};
    mrt_value v = mrt_value_from_tensor(t);
    const char *name = "x";
    cr_assert_eq(mrt_session_run(s, 1, &name, &v), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < N_CONV; i++)
        memcpy(y + i * CM * CHW * CHW, mrt_session_output(s, i)->tensor.data, CM * CHW * CHW * sizeof(float));
}

Test(weights, conv_lanes_grouped_and_live_taps_let_w_go_once_packed)
{
    conv_model *p = malloc(sizeof *p);
    uint8_t *buf = NULL;
    size_t len = 0;
    int pad[N_CONV];
    bool misaligned = false; /* every W's raw_data off a float boundary */
    for (int c = 0; c < 64 && !misaligned; c++) {
        for (int i = 0; i < N_CONV; i++) pad[i] = c >> (2 * i) & 3;
        build_convs(p, pad, false);
        free(buf);
        buf = th_proto_model_pack(&p->m, &len);
        misaligned = true;
        for (int i = 0; i < N_CONV; i++) misaligned &= offset_of(buf, len, p->w[i], p->wn[i] * sizeof(float)) % 4 != 0;
    }
    cr_assert(misaligned, "no name lengths put every W off a float boundary");
    char path[] = "/tmp/minirt_weights_conv_XXXXXX.onnx";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
    size_t wbytes = 0;
    for (int i = 0; i < N_CONV; i++) wbytes += p->wn[i] * sizeof(float);
    mrt_model *m = NULL, *keep = NULL;
    cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_OK, "%s", mrt_last_error());
    build_convs(p, pad, true); /* the same Convs, the Ws graph outputs too: kept */
    free(buf);
    buf = th_proto_model_pack(&p->m, &len);
    cr_assert_eq(mrt_model_load_from_memory(buf, len, NULL, &keep), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_weight_account a;
    mrt_weights_account(m, &a);
    cr_assert_eq(a.copied_bytes, wbytes, "copied %zu of %zu", a.copied_bytes, wbytes);

    static float y[N_CONV * CM * CHW * CHW], want[N_CONV * CM * CHW * CHW];
    for (int threads = 1; threads <= 2; threads++) {
        mrt_session_options o = mrt_session_options_default();
        o.n_threads = threads;
        mrt_session *s = NULL, *ref = NULL;
        cr_assert_eq(mrt_session_new(m, &o, &s), MRT_STATUS_OK, "%s", mrt_last_error());
        cr_assert_eq(mrt_session_new(keep, &o, &ref), MRT_STATUS_OK, "%s", mrt_last_error());
        for (int round = 0; round < 2; round++) { /* the second run reads the plan's state again */
            run_convs(s, y);
            run_convs(ref, want);
            cr_assert(memcmp(y, want, sizeof y) == 0, "%d thread(s), round %d: results differ", threads, round);
            mrt_session_stats st;
            mrt_session_get_stats(s, &st);
            cr_assert_eq(st.weights_released_bytes, wbytes, "%d thread(s): released %zu of %zu", threads,
                         st.weights_released_bytes, wbytes);
            mrt_session_get_stats(ref, &st);
            cr_assert_eq(st.weights_released_bytes, 0);
        }
        mrt_session_free(s);
        mrt_session_free(ref);
    }
    mrt_model_free(m);
    mrt_model_free(keep);
    unlink(path);
    free(buf);
    free(p);
}
