/* TensorProto <-> mrt_tensor conversion, and the ONNX test-data readers (.pb files holding a TensorProto,
 * SequenceProto or OptionalProto). Every tensor returned here owns its data (mrt_tensor_alloc): release it
 * with mrt_tensor_release / mrt_value_release.
 *
 * Wire rules (onnx.proto): raw_data is little-endian; typed fields are float_data (float, complex64 as
 * re/im pairs), int32_data (int32, int16/int8/uint16/uint8/bool and the bit patterns of float16/bfloat16/
 * float8; one packed byte per entry for int4/uint4/float4e2m1 (2 elements) and int2/uint2 (4 elements)),
 * int64_data, uint64_data (uint32/uint64), double_data (double, complex128 pairs), string_data. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/graph.h"
#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The generated protobuf-c type; onnx.pb-c.h is only included by loader .c files. */
struct Onnx__TensorProto;
struct Onnx__SparseTensorProto;

/* Convert a parsed TensorProto. `what` names the tensor in error messages ("initializer 'W'").
   base_dir: the folder external data is read from (NULL refuses external data). */
mrt_status mrt_tensor_from_proto(const struct Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                 mrt_tensor *out);
/* How mrt_tensor_from_proto_ex may find and keep a tensor's bytes (the model loader: docs/memory.md, "Weights"). */
struct mrt_mapping;
typedef struct mrt_tensor_load {
    bool has_raw;               /* in: raw_data located in the file bytes (the parsed proto was given none) */
    const uint8_t *raw;
    size_t raw_len;
    bool persistent;            /* in: those bytes outlive the model (its file mapping): borrow them */
    struct mrt_mapping **maps;  /* in: external-data files are mapped onto this list, or NULL: they are read */
    mrt_weight_src *weight;     /* out: malloc'd when the data is borrowed or copied from mapped bytes (then
                                   out->data is not mrt_tensor_alloc'd: see mrt_graph_set_initializer_mapped);
                                   else NULL */
} mrt_tensor_load;
/* mrt_tensor_from_proto with `ld` (may be NULL: as mrt_tensor_from_proto). */
mrt_status mrt_tensor_from_proto_ex(const struct Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                    mrt_tensor_load *ld, mrt_tensor *out);
/* Convert a SparseTensorProto (values + linear [NNZ] or coordinate [NNZ,rank] indices) to a dense tensor. */
mrt_status mrt_tensor_from_sparse_proto(const struct Onnx__SparseTensorProto *sp, const char *base_dir,
                                        const char *what, mrt_tensor *out);

/* Decode serialized TensorProto bytes. *name_out (may be NULL) receives a malloc'd copy of the proto's name
   ("" if none). External data is refused (there is no folder to read it from). */
mrt_status mrt_tensor_proto_decode(const void *bytes, size_t len, mrt_tensor *out, char **name_out);
/* Read a .pb file holding one TensorProto; external data is read relative to the file's folder. */
mrt_status mrt_tensor_proto_read_file(const char *path, mrt_tensor *out, char **name_out);
/* Write `t` as a TensorProto (raw_data, or string_data for strings). name may be NULL. */
mrt_status mrt_tensor_proto_write_file(const char *path, const mrt_tensor *t, const char *name);

/* Read an ONNX test-data .pb according to the kind the model declares for that input/output:
   TENSOR (or UNKNOWN) -> TensorProto, SEQUENCE -> SequenceProto (of tensors), OPTIONAL -> OptionalProto
   (an empty optional gives kind NONE; a tensor or sequence inside gives that kind). out->is_optional is
   set for OPTIONAL. A sequence's seq_dtype is its first item's dtype (UNDEFINED when it is empty and the
   proto carries no element). Maps, sparse tensors and nested sequences: NOT_IMPLEMENTED. */
mrt_status mrt_value_proto_read_file(const char *path, mrt_type_kind expected_kind, mrt_value *out);
/* The same on bytes already in memory. */
mrt_status mrt_value_proto_decode(const void *bytes, size_t len, mrt_type_kind expected_kind, mrt_value *out);

/* Read a whole file into a malloc'd buffer (shared with the model loader). */
mrt_status mrt_read_whole_file(const char *path, void **bytes, size_t *len);

#ifdef __cplusplus
}
#endif
