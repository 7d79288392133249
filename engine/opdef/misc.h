/* Det's arithmetic, one definition for the CPU kernel (ops_cpu/misc.c) and the CUDA one (ops_cuda/misc.cu): see
 * engine/host_device.h. */
#pragma once

#include <math.h>
#include <stdint.h>

#include "engine/host_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The determinant of the m x m matrix a (row-major, in double), by partial-pivot LU; a is overwritten. */
static inline MRT_HD double mrt_det_eliminate(double *a, int64_t m)
{
    double det = 1.0;
    for (int64_t c = 0; c < m; c++) {
        int64_t p = c;
        for (int64_t r = c + 1; r < m; r++)
            if (fabs(a[r * m + c]) > fabs(a[p * m + c])) p = r;
        if (a[p * m + c] == 0.0) return 0.0;
        if (p != c) {
            for (int64_t j = 0; j < m; j++) {
                double t = a[c * m + j];
                a[c * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        double piv = a[c * m + c];
        det *= piv;
        for (int64_t r = c + 1; r < m; r++) {
            double f = a[r * m + c] / piv;
            for (int64_t j = c + 1; j < m; j++) a[r * m + j] -= f * a[c * m + j];
        }
    }
    return det;
}

#ifdef __cplusplus
}
#endif
