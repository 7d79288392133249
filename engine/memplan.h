/* The memory planner: a pure function from value lifetimes to offsets in one arena.
 *
 * Each value lives from the step that produces it (first_use) to the last step that reads it (last_use),
 * both inclusive. Two values may share bytes only when their lifetimes are disjoint, with one exception:
 * a value whose `inplace_of` names another value u may take over u's block when u's last reader is the
 * step that produces it (u dies there) and it fits (the kernel then runs in place).
 * Two strategies run and the smaller peak wins:
 *  1. in step order: allocate what each step produces (best fit over a free list sorted by offset, coalescing
 *     neighbours; grow the arena at the top when nothing fits), then release what dies at that step; this one
 *     also does in-place reuse;
 *  2. largest value first: each at the best-fitting gap among the already placed values whose lifetimes overlap
 *     its own. It wins on graphs whose big and small tensors interleave (MobileNetV2: 1.167 -> see
 *     docs/memory.md), where the in-order pass fragments. In-place takeovers are merged first into chains
 *     (one interval per chain), so this pass reuses blocks in place too. */
#pragma once

#include <stddef.h>

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_memplan_value {
    size_t size;      /* bytes; 0 = not planned (offset left 0) */
    int first_use;    /* step producing the value */
    int last_use;     /* last step reading it (>= first_use) */
    int inplace_of;   /* index of a value whose block this one may reuse in place, or -1 */
} mrt_memplan_value;

typedef struct mrt_memplan_result {
    size_t *offsets;  /* one per value (caller-allocated, n_values) */
    size_t peak;      /* arena bytes needed */
    int inplace_count;
} mrt_memplan_result;

/* alignment must be a power of two. */
mrt_status mrt_memplan(int n_values, const mrt_memplan_value *vals, size_t alignment, mrt_memplan_result *res);

/* The largest total of (aligned) sizes of values alive at the same step: no plan can do better without
   in-place reuse. */
size_t mrt_memplan_lower_bound(int n_values, const mrt_memplan_value *vals, size_t alignment);

#ifdef __cplusplus
}
#endif
