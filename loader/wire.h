/* A protobuf wire-format cursor, for the bytes the loader reads beside protobuf-c: the nesting check before it parses
 * (proto_depth.c), the raw_data fields read in place (onnx_load.c), and the SequenceProto / OptionalProto messages
 * onnx.proto 1.12 lacks (tensor_proto.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mrt_wire {
    const uint8_t *p, *end;
} mrt_wire;

static inline bool mrt_wire_varint(mrt_wire *w, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && w->p < w->end; shift += 7) {
        uint8_t b = *w->p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The field at w->p, and w->p moved past it: its tag (number << 3 | wire type), a varint's value in *ival (else 0),
   a length-delimited payload in [*body, *body + *blen) (else NULL, 0). False on malformed bytes: a field number out
   of protobuf's range, a truncated field, a group (protobuf-c refuses those too). */
static inline bool mrt_wire_field(mrt_wire *w, uint64_t *tag, uint64_t *ival, const uint8_t **body, size_t *blen)
{
    if (!mrt_wire_varint(w, tag) || (*tag >> 3) == 0 || (*tag >> 3) > 0x1fffffff) return false;
    *ival = 0;
    *body = NULL;
    *blen = 0;
    uint64_t n;
    switch (*tag & 7) {
    case 0: return mrt_wire_varint(w, ival);
    case 1:
        if (w->end - w->p < 8) return false;
        w->p += 8;
        return true;
    case 5:
        if (w->end - w->p < 4) return false;
        w->p += 4;
        return true;
    case 2:
        if (!mrt_wire_varint(w, &n) || n > (uint64_t)(w->end - w->p)) return false;
        *body = w->p;
        *blen = (size_t)n;
        w->p += n;
        return true;
    default: return false;
    }
}
