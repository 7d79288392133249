/* THE CPU operator table: one kernel table per op family (ops_cpu/<family>.c). */
#include "engine/registry.h"

#define MRT_FAMILY(name) extern const mrt_kernel mrt_cpu_kernels_##name[];
#include "engine/opdef/families.def"
#undef MRT_FAMILY

const mrt_kernel_table mrt_cpu_kernel_tables[] = {
#define MRT_FAMILY(name) {mrt_cpu_kernels_##name},
#include "engine/opdef/families.def"
#undef MRT_FAMILY
    {NULL},
};
