/* Nesting limits for ONNX protobuf bytes, checked without recursion before protobuf-c parses them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "minirt/minirt.h"

/* Subgraphs (If/Loop/Scan bodies) nested inside one another: the model's main graph is level 0. Every walk over a
   loaded model's structure (conversion, checks, planning, subgraph execution, printing) recurses once per level,
   so this bound is what keeps them off the end of the stack. No exporter writes more than a handful. */
#define MRT_MAX_GRAPH_DEPTH 64
/* Protobuf messages nested inside one another, of any kind: 64 subgraph levels take 3 each (graph, node,
   attribute), and a declared type (sequence of optional of ...) 2 per level, up to 64 levels. */
#define MRT_MAX_PROTO_DEPTH 512

/* INVALID_MODEL when the message `desc` encoded in `bytes` nests subgraphs deeper than MRT_MAX_GRAPH_DEPTH or
   messages deeper than MRT_MAX_PROTO_DEPTH; OK otherwise, malformed bytes included (protobuf-c reports those).
   protobuf-c's unpack and free recurse once per nested message, so a model whose If bodies nested 10,000 deep
   overflowed the stack inside protobuf-c, before minirt saw a single node. */
mrt_status mrt_proto_check_nesting(const ProtobufCMessageDescriptor *desc, const uint8_t *bytes, size_t len);
