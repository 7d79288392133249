/* The weights of a CUDA session (docs/memory.md, "Weights"): a constant that only CUDA steps read lives on the
 * device once uploaded, and the host lets its copy go; one a CPU step (a fallback) reads too keeps it. Results are
 * the CPU session's, and the stats count what was let go. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "proto_model.h"

enum { R = 16, C = 4 };

typedef struct cw_model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset, *opsets[1];
    Onnx__NodeProto nodes[4], *pnodes[4];
    Onnx__AttributeProto axis, *paxis[1];
    Onnx__ValueInfoProto ins[1], outs[3], *pins[1], *pouts[3];
    Onnx__TensorProto inits[2], *pinits[2];
    char *io[4][2], *y[4][1];
    int64_t adims[2], bdims[3];
    float a[R * C], b[R * C];
} cw_model;

static void init_tensor(Onnx__TensorProto *t, const char *name, int rank, int64_t *dims, float *data)
{
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->n_dims = (size_t)rank;
    t->dims = dims;
    t->has_data_type = 1;
    t->data_type = MRT_DTYPE_FLOAT;
    t->has_raw_data = 1;
    t->raw_data.data = (uint8_t *)data;
    t->raw_data.len = R * C * sizeof(float);
}

/* y1 = x + A and y2 = x + B on CUDA; y3 = ConcatFromSequence(SequenceConstruct(B, y2), axis 0): sequences are host
   work by design (they stay on the CPU whatever CUDA kernels are added), so the CPU reads B at every run (y2 is not a
   constant: nothing folds) */
static void build(cw_model *p)
{
    memset(p, 0, sizeof *p);
    th_proto_model_init(&p->m, &p->g, &p->opset, p->opsets, 10, 24);
    static const char *const op[4] = {"Add", "Add", "SequenceConstruct", "ConcatFromSequence"},
                             *const in[4][2] = {{"x", "A"}, {"x", "B"}, {"B", "y2"}, {"seq", NULL}},
                             *const out[4] = {"y1", "y2", "seq", "y3"};
    for (int i = 0; i < 4; i++) {
        onnx__node_proto__init(&p->nodes[i]);
        p->io[i][0] = (char *)in[i][0];
        p->io[i][1] = (char *)in[i][1];
        p->y[i][0] = (char *)out[i];
        p->nodes[i].op_type = (char *)op[i];
        p->nodes[i].n_input = in[i][1] ? 2 : 1;
        p->nodes[i].input = p->io[i];
        p->nodes[i].n_output = 1;
        p->nodes[i].output = p->y[i];
        p->pnodes[i] = &p->nodes[i];
    }
    onnx__attribute_proto__init(&p->axis);
    p->axis.name = "axis";
    p->axis.has_type = 1;
    p->axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    p->axis.has_i = 1; /* i = 0: [B; y2], [2, R, C] */
    p->paxis[0] = &p->axis;
    p->nodes[3].n_attribute = 1;
    p->nodes[3].attribute = p->paxis;
    for (int i = 0; i < 3; i++) {
        onnx__value_info_proto__init(&p->outs[i]);
        p->outs[i].name = (char *)(i < 2 ? out[i] : "y3");
        p->pouts[i] = &p->outs[i];
    }
    onnx__value_info_proto__init(&p->ins[0]);
    p->ins[0].name = "x";
    p->pins[0] = &p->ins[0];
    for (int i = 0; i < R * C; i++) {
        p->a[i] = (float)i / 8.0f;
        p->b[i] = (float)(i - 20) / 4.0f;
    }
    p->adims[0] = R, p->adims[1] = C;
    p->bdims[0] = 1, p->bdims[1] = R, p->bdims[2] = C;
    init_tensor(&p->inits[0], "A", 2, p->adims, p->a);
    init_tensor(&p->inits[1], "B", 3, p->bdims, p->b);
    p->pinits[0] = &p->inits[0];
    p->pinits[1] = &p->inits[1];
    p->g.n_node = 4;
    p->g.node = p->pnodes;
    p->g.n_input = 1;
    p->g.input = p->pins;
    p->g.n_output = 3;
    p->g.output = p->pouts;
    p->g.n_initializer = 2;
    p->g.initializer = p->pinits;
}

static void run(mrt_session *s, float *y)
{
    float x[R * C];
    for (int i = 0; i < R * C; i++) x[i] = (float)((i * 7) % 13 - 6) / 4.0f;
    mrt_value v[1] = {mrt_value_from_tensor((mrt_tensor){MRT_DTYPE_FLOAT, 2, {R, C}, x})};
    const char *names[1] = {"x"};
    cr_assert_eq(mrt_session_run(s, 1, names, v), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 3; i++) { /* y1, y2: R * C floats; y3: 2 * R * C */
        const mrt_value *o = mrt_session_output(s, i);
        cr_assert_eq(mrt_tensor_numel(&o->tensor), (i < 2 ? 1 : 2) * R * C);
        cr_assert(o->tensor.data, "output %d has no host data", i);
        memcpy(y + i * R * C, o->tensor.data, (size_t)mrt_tensor_numel(&o->tensor) * sizeof(float));
    }
}

Test(cuda_weights, a_constant_only_cuda_reads_leaves_the_host_one_a_fallback_reads_stays)
{
    th_cuda_require();
    cw_model *p = malloc(sizeof *p);
    build(p);
    size_t len;
    uint8_t *buf = th_proto_model_pack(&p->m, &len);
    char path[] = "/tmp/minirt_cuda_weights_XXXXXX.onnx";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
    mrt_model *m = NULL, *mc = NULL;
    cr_assert_eq(mrt_model_load(path, &m), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_model_load(path, &mc), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    mrt_session *s = NULL, *cpu = NULL;
    cr_assert_eq(mrt_session_new(m, &o, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_session_new(mc, NULL, &cpu), MRT_STATUS_OK, "%s", mrt_last_error());
    const size_t wbytes = R * C * sizeof(float);
    static float y[4 * R * C], want[4 * R * C];
    for (int round = 0; round < 2; round++) { /* the second run reads the uploaded A again */
        run(s, y);
        run(cpu, want);
        cr_assert(memcmp(y, want, sizeof y) == 0, "round %d: CUDA and CPU results differ", round);
        mrt_session_stats st;
        mrt_session_get_stats(s, &st);
        cr_assert_eq(st.cuda_nodes, 2);
        cr_assert_eq(st.cpu_nodes, 2, "the sequence ops run on the CPU");
        cr_assert(st.device_const_bytes >= 2 * wbytes, "constants on the device: %zu", st.device_const_bytes);
        cr_assert_eq(st.weights_released_bytes, wbytes, "round %d: A goes, B stays: released %zu", round,
                     st.weights_released_bytes);
        cr_assert_eq(st.weights_mapped_bytes + st.weights_copied_bytes, wbytes, "round %d: B held on the host", round);
        mrt_session_get_stats(cpu, &st);
        cr_assert_eq(st.weights_released_bytes, 0, "on the CPU, Add reads A: kept");
    }
    mrt_session_free(s);
    mrt_session_free(cpu);
    mrt_model_free(m);
    mrt_model_free(mc);
    unlink(path);
    free(buf);
    free(p);
}
