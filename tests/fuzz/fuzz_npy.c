/* libFuzzer target: .npy bytes -> decoder; a decoded tensor must re-encode and decode to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/npy.h"

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
    if (mrt_npy_decode(data, size, "fuzz", &t) != MRT_STATUS_OK) return 0;
    void *bytes = NULL;
    size_t len = 0;
    if (t.dtype != MRT_DTYPE_STRING && mrt_npy_encode(&t, &bytes, &len) == MRT_STATUS_OK) {
        mrt_tensor u;
        if (mrt_npy_decode(bytes, len, "round trip", &u) != MRT_STATUS_OK) abort();
        if (u.dtype != t.dtype || u.rank != t.rank || memcmp(u.data, t.data, mrt_tensor_nbytes(&t)) != 0) abort();
        mrt_tensor_release(&u);
        free(bytes);
    }
    mrt_tensor_release(&t);
    return 0;
}
