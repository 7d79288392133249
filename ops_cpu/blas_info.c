/* What BLAS is in use (for provenance records and benchmarks), and its thread count. */
#include "ops_cpu/blas.h"
#include "ops_cpu/blas_info.h"

const char *mrt_blas_core_name(void) { return openblas_get_corename(); }
int mrt_blas_threads(void) { return openblas_get_num_threads(); }
void mrt_blas_set_threads(int n) { openblas_set_num_threads(n); }
