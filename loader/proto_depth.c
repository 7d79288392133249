/* An iterative walk over protobuf wire bytes that follows the schema's message fields (protobuf-c's own descriptors)
 * with an explicit stack, to measure how deep messages nest before anything recursive sees them. */
#include "loader/proto_depth.h"

#include "engine/status.h"
#include "loader/wire.h"
#include "onnx.pb-c.h"

typedef struct frame {
    const ProtobufCMessageDescriptor *desc;
    const uint8_t *end;
} frame;

/* The message type a length-delimited field holds, or NULL when it holds bytes (strings, packed numbers, unknown
   fields). FunctionProto.attribute_proto (11) is newer than the onnx.proto compiled here: the loader decodes it as
   an AttributeProto itself (onnx_load.c), so it is followed as one. */
static const ProtobufCMessageDescriptor *message_field(const ProtobufCMessageDescriptor *desc, uint32_t number)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, number);
    if (f) return f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
    if (desc == &onnx__function_proto__descriptor && number == 11) return &onnx__attribute_proto__descriptor;
    return NULL;
}

mrt_status mrt_proto_check_nesting(const ProtobufCMessageDescriptor *desc, const uint8_t *bytes, size_t len)
{
    frame stack[MRT_MAX_PROTO_DEPTH + 1];
    int top = 0, graphs = desc == &onnx__graph_proto__descriptor;
    const uint8_t *p = bytes;
    stack[0] = (frame){desc, bytes + len};
    while (top >= 0) {
        if (p >= stack[top].end) { /* this message ends: back to its parent */
            graphs -= stack[top].desc == &onnx__graph_proto__descriptor;
            top--;
            continue;
        }
        mrt_wire w = {p, stack[top].end};
        uint64_t tag, ival;
        const uint8_t *body;
        size_t blen;
        if (!mrt_wire_field(&w, &tag, &ival, &body, &blen)) return MRT_STATUS_OK; /* malformed: protobuf-c says so */
        p = w.p;
        const ProtobufCMessageDescriptor *sub =
            (tag & 7) == 2 ? message_field(stack[top].desc, (uint32_t)(tag >> 3)) : NULL;
        if (!sub) continue;
        if (top + 1 > MRT_MAX_PROTO_DEPTH)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "protobuf messages nest more than %d levels deep (minirt's limit)",
                            MRT_MAX_PROTO_DEPTH);
        graphs += sub == &onnx__graph_proto__descriptor;
        if (graphs > MRT_MAX_GRAPH_DEPTH + 1)
            return mrt_fail(MRT_STATUS_INVALID_MODEL,
                            "subgraphs nest more than %d levels deep (minirt's limit on If/Loop/Scan bodies "
                            "inside one another)",
                            MRT_MAX_GRAPH_DEPTH);
        stack[++top] = (frame){sub, body + blen};
        p = body; /* into the sub-message */
    }
    return MRT_STATUS_OK;
}
