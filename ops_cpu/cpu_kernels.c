/* THE CPU operator table: one kernel table per op family (ops_cpu/<family>.c). */
#include "engine/registry.h"
#include "ops_cpu/blas_info.h"

#define MRT_FAMILY(name) extern const mrt_kernel mrt_cpu_kernels_##name[];
#include "engine/opdef/families.def"
#undef MRT_FAMILY

const mrt_kernel_table mrt_cpu_kernel_tables[] = {
#define MRT_FAMILY(name) {mrt_cpu_kernels_##name},
#include "engine/opdef/families.def"
#undef MRT_FAMILY
    {NULL},
};

void mrt_cpu_backend_set_threads(int n_threads) { mrt_blas_set_threads(n_threads); }
