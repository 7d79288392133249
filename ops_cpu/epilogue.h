/* Applying a fused epilogue (engine/epilogue.h) to a run of float32 results. */
#pragma once

#include "engine/epilogue.h"

/* y[0..n) holds results of channel c starting at flat output index `at` (the index of y[0] in the output tensor,
   which locates the residual operand of an ADD). NULL or empty epilogue: nothing to do. */
void mrt_epilogue_apply(const mrt_epilogue *ep, float *y, int64_t n, int64_t c, int64_t at);

/* A block of rows: y points at element (row0, col0) of an output whose rows are ldc floats apart, at flat index
   at0; row r (channel channel0 + r) gets its cols results applied. NULL epilogue: nothing to do. */
void mrt_epilogue_apply_rows(const mrt_epilogue *ep, float *y, int64_t rows, int64_t cols, int64_t ldc,
                             int64_t channel0, int64_t at0);
