/* Concat without copies: the memory plan places a Concat's inputs inside its output (see concat_place.c).
 * Engine-private: session.c's plan_storage calls it before the memory planner and places the values it aliased. */
#pragma once

#include <stddef.h>

#include "engine/exec.h"
#include "engine/memplan.h"

typedef struct mrt_concat_alias {
    int into;      /* the Concat output this value is placed in, or -1 */
    size_t offset; /* bytes from that output's start */
} mrt_concat_alias;

/* Fills al[0, n_values) and adjusts mv (lifetimes of the outputs that hold placed values, no in-place reuse around
   them, size 0 for a placed value: it is not planned on its own); align: the arena's block alignment. Returns how many
   inputs were placed (0: al all -1 and mv unchanged). */
int mrt_place_concat_inputs(mrt_exec *e, mrt_memplan_value *mv, mrt_concat_alias *al, size_t align);

/* Value v's place in the arena: its root output's offset (offsets, from the memory plan) plus the offsets on the way */
size_t mrt_concat_alias_offset(const mrt_concat_alias *al, const size_t *offsets, int v);
