/* Tests that write a model with protobuf-c: the ModelProto/GraphProto skeleton every such builder starts from. */
#pragma once

#include <stdlib.h>

#include "onnx.pb-c.h"

/* m with graph g named "g", IR version ir, importing the default domain at `opset` (*os, listed through os_list[0]). */
static inline void th_proto_model_init(Onnx__ModelProto *m, Onnx__GraphProto *g, Onnx__OperatorSetIdProto *os,
                                       Onnx__OperatorSetIdProto **os_list, int64_t ir, int64_t opset)
{
    onnx__model_proto__init(m);
    onnx__graph_proto__init(g);
    onnx__operator_set_id_proto__init(os);
    m->has_ir_version = 1;
    m->ir_version = ir;
    os->domain = "";
    os->has_version = 1;
    os->version = opset;
    os_list[0] = os;
    m->n_opset_import = 1;
    m->opset_import = os_list;
    m->graph = g;
    g->name = "g";
}

/* m packed into a malloc'd buffer of *len bytes (NULL when out of memory). */
static inline uint8_t *th_proto_model_pack(const Onnx__ModelProto *m, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = (uint8_t *)malloc(*len ? *len : 1);
    if (buf) onnx__model_proto__pack(m, buf);
    return buf;
}
