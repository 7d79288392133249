/* The list of built-in opdef tables, one per op family (engine/opdef/<family>.c). */
#include "engine/registry.h"

#define MRT_FAMILY(name) extern const mrt_opdef mrt_opdefs_##name[];
#include "engine/opdef/families.def"
#undef MRT_FAMILY

const mrt_opdef_table mrt_builtin_opdefs[] = {
#define MRT_FAMILY(name) {mrt_opdefs_##name},
#include "engine/opdef/families.def"
#undef MRT_FAMILY
    {NULL},
};
