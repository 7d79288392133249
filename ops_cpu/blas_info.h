/* BLAS facts without including cblas.h (see blas_info.c). */
#pragma once

const char *mrt_blas_core_name(void); /* OpenBLAS kernel family, e.g. "Haswell" or "SkylakeX" */
int mrt_blas_threads(void);
void mrt_blas_set_threads(int n);
