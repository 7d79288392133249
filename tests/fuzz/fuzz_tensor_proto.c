/* libFuzzer target: TensorProto / SequenceProto / OptionalProto bytes -> decoders. */
#include <stdint.h>
#include <stdlib.h>

#include "loader/tensor_proto.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("MRT_MAX_ALLOC_BYTES", "67108864", 1); /* hostile sizes end in a status, not an OOM kill */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mrt_tensor t;
    char *name = NULL;
    if (mrt_tensor_proto_decode(data, size, &t, &name) == MRT_STATUS_OK) mrt_tensor_release(&t);
    free(name);
    static const mrt_type_kind kinds[] = {MRT_TYPE_TENSOR, MRT_TYPE_SEQUENCE, MRT_TYPE_OPTIONAL};
    for (int k = 0; k < 3; k++) {
        mrt_value v;
        if (mrt_value_proto_decode(data, size, kinds[k], &v) == MRT_STATUS_OK) mrt_value_release(&v);
    }
    return 0;
}
