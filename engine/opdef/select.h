/* TopK's sort buffers, sized by the opdef and used by the CPU kernel (ops_cpu/select.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

/* One element of the axis being sorted: its key in the form its dtype compares by, and its position. */
typedef struct mrt_sort_key {
    double f;
    int64_t i;
    uint64_t u;
    int64_t index;
} mrt_sort_key;

/* The merge sort's buffer and its scratch, one key each per element of the axis. */
static inline size_t mrt_topk_workspace_bytes(int64_t axis_len) { return 2 * (size_t)axis_len * sizeof(mrt_sort_key); }

#ifdef __cplusplus
}
#endif
