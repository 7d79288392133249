/* Memory that lives as long as an exec's plan (see mrt_plan_alloc in engine/op.h): the kernels' prepared state,
 * such as packed weights. Requests are carved from the first block with room; blocks double in size from 64 KiB
 * to 8 MiB (a larger request gets a block of its own size). Blocks of 2 MiB and more are aligned to 2 MiB and
 * offered to the kernel as transparent huge pages (madvise), so a model's packed weights (MobileNetV2: 14 MB, read
 * once per run and rarely still in cache) take a few TLB entries instead of thousands. Everything is freed at once
 * with the plan. Engine-private. */
#pragma once

#include <stddef.h>

typedef struct mrt_plan_block mrt_plan_block;

typedef struct mrt_plan_mem {
    mrt_plan_block *blocks; /* newest first */
    size_t next_size;       /* the size of the next block */
    size_t used;            /* bytes handed out (rounded to 64): the plan's packed weights, in --stats */
} mrt_plan_mem;

/* `bytes` rounded up to 64, 64-byte aligned, or NULL when out of memory. */
void *mrt_plan_mem_alloc(mrt_plan_mem *m, size_t bytes);
/* Gives back the part of each huge block's last touched huge page past the bytes handed out (called by each
   allocation for the previous one, and by the engine when a plan is complete). */
void mrt_plan_mem_trim(mrt_plan_mem *m);
/* Frees every block; m is empty afterwards (and may be used again). */
void mrt_plan_mem_free(mrt_plan_mem *m);
