/* Naive double-precision references for Einsum, Det, TopK, Unique, CumProd, Shrink, NegativeLogLikelihoodLoss /
 * SoftmaxCrossEntropyLoss, written from the ONNX operator specs (independent of ops_cpu/). Tensors are dense
 * row-major double arrays with a shape. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Einsum by enumerating every assignment of every label (diagonals and size-1 broadcasting fall out of the
   indexing). Returns false when the equation is malformed or the shapes disagree. *out is malloc'd. */
bool ref_misc_einsum(const char *equation, int n, const double *const *x, const int *rank, const int64_t *const *shape,
                     double **out, int *out_rank, int64_t *out_shape);

/* Determinant of each trailing [m, m] matrix by cofactor (Laplace) expansion; m <= 8. */
void ref_misc_det(const double *x, int64_t batch, int64_t m, double *out);

/* TopK along axis by repeated selection of the best unused element (ties: lower index). */
void ref_misc_topk(const double *x, int rank, const int64_t *shape, int axis, int64_t k, bool largest, double *values,
                   int64_t *indices);

/* Unique: flattened when axis < 0, else slices along axis. Outputs (caller-sized: numel(x) or shape[axis]
   entries): unique slices in order (y), first-occurrence indices, inverse indices, counts; returns the count. */
int64_t ref_misc_unique(const double *x, int rank, const int64_t *shape, int axis, bool sorted, double *y,
                        int64_t *indices, int64_t *inverse, int64_t *counts);

void ref_misc_cumprod(const double *x, int rank, const int64_t *shape, int axis, bool exclusive, bool reverse,
                      double *out);

double ref_misc_shrink(double x, double lambd, double bias);

/* x [n, c, d] (log-probabilities, or scores when softmax); target [n, d]; weight [c] or NULL. reduction 0 none
   (out [n, d]), 1 sum, 2 mean (out[0]). log_prob [n, c, d] when softmax and non-NULL. */
void ref_misc_loss(const double *x, bool softmax, const int64_t *target, const double *weight, int64_t n, int64_t c,
                   int64_t d, int reduction, bool has_ignore, int64_t ignore, double *out, double *log_prob);
