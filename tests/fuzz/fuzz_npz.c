/* libFuzzer target: .npz (zip) bytes -> decoder. */
#include <stdint.h>
#include <stdlib.h>

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
    int n = 0;
    char **names = NULL;
    mrt_tensor *ts = NULL;
    if (mrt_npz_decode(data, size, "fuzz.npz", &n, &names, &ts) == MRT_STATUS_OK) {
        for (int i = 0; i < n; i++) {
            free(names[i]);
            mrt_tensor_release(&ts[i]);
        }
        free(names);
        free(ts);
    }
    return 0;
}
