/* A model's weights held once (docs/memory.md, "Weights"): the read-only mappings of the model file and its
 * external-data files, the initializers that borrow from them (mrt_weight_src in engine/graph.h), and the holds
 * plans take on them. A plan holds every initializer it binds; once its kernels have packed one that nothing else
 * reads, it lets go of it (`drop`): mapped bytes leave the resident set (madvise(MADV_DONTNEED): the pages come back
 * from the file if read again), copied bytes are freed and copied again from the mapping by the next hold (a new
 * input shape replans and packs again). Engine-private. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_mapping {
    struct mrt_mapping *next;
    void *addr;
    size_t len;
    char *path; /* resolved path (external-data files are mapped once per model) */
} mrt_mapping;

/* Map `path` read-only (an empty file gives addr NULL, len 0) and push it on *list; a file already on the list
   (same resolved path) is not mapped again. */
mrt_status mrt_mapping_open(const char *path, mrt_mapping **list, const uint8_t **bytes, size_t *len);
void mrt_mappings_free(mrt_mapping *list);
/* Drop the whole pages of [p, p + n) from the resident set (read-only file mappings only). */
void mrt_mapping_drop_pages(const void *p, size_t n);

/* The alignment data of `dt` needs to be read in place (its element size, at most 16). */
size_t mrt_weight_align(mrt_dtype dt);
/* Whether little-endian file bytes of `dt` are the host's representation (no swap, no bool normalization). */
bool mrt_weight_in_place_ok(mrt_dtype dt);
/* An aligned_alloc'd copy of `nbytes` file bytes of `dt` in the host's representation (byte-swapped on big-endian
   hosts, bools as 0/1); NULL when out of memory. Free with mrt_weight_copy_free. `bytes` lie in a read-only file
   mapping: their whole pages leave the resident set as they are copied. */
void *mrt_weight_copy(mrt_dtype dt, const uint8_t *bytes, size_t nbytes);
void mrt_weight_copy_free(void *p, size_t nbytes);

/* A plan starts to read gv's initializer: its data is there (copied again if it was dropped) until the matching
   release. Values without a weight source are always there (no-op). */
mrt_status mrt_weight_hold(const mrt_graph_value *gv);
/* The matching release; with `drop`, the last holder lets the bytes go (see above). Returns the bytes dropped. */
size_t mrt_weight_release(const mrt_graph_value *gv, bool drop);

typedef struct mrt_weight_account {
    size_t mapped_bytes;   /* initializers read in place from the mapping (and not dropped) */
    size_t copied_bytes;   /* initializers held as copies: misaligned raw_data, typed fields, Constant-free models
                              built in memory, models loaded from a caller's buffer */
    size_t dropped_bytes;  /* initializers let go after their kernels packed them */
} mrt_weight_account;
/* Sums over the model's graphs (subgraphs included). */
void mrt_weights_account(const mrt_model *m, mrt_weight_account *out);

#ifdef __cplusplus
}
#endif
