/* Naive double-precision references for the reduce, softmax and normalization ops, written from the ONNX
 * operator specs (independent of ops_cpu/). Tensors are dense row-major double arrays with a shape. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef enum ref_reduce_op {
    REF_SUM,
    REF_MEAN,
    REF_MAX,
    REF_MIN,
    REF_PROD,
    REF_L1,
    REF_L2,
    REF_LOGSUM,
    REF_LOGSUMEXP,
    REF_SUMSQ,
} ref_reduce_op;

int64_t ref_numel(int rank, const int64_t *shape);

/* Reduce x over the axes with reduced[a]; out holds the keepdims-shaped result (row-major). */
void ref_reduce(ref_reduce_op op, const double *x, int rank, const int64_t *shape, const bool *reduced, double *out);

/* ArgMax (is_max) / ArgMin along axis; out has the keepdims shape. */
void ref_argmax(bool is_max, bool select_last, const double *x, int rank, const int64_t *shape, int axis, int64_t *out);

void ref_cumsum(const double *x, int rank, const int64_t *shape, int axis, bool exclusive, bool reverse, double *out);

/* kind: 0 Softmax, 1 LogSoftmax, 2 Hardmax. coerce_2d: opset < 13 semantics (flatten from axis). */
void ref_softmax(int kind, const double *x, int rank, const int64_t *shape, int axis, bool coerce_2d, double *out);

/* p broadcast (numpy, right-aligned) to shape; out has numel(shape) values. */
void ref_broadcast(const double *p, int prank, const int64_t *pshape, int rank, const int64_t *shape, double *out);

/* BatchNormalization with per-channel (dim 1) statistics. */
void ref_batchnorm(const double *x, int rank, const int64_t *shape, const double *scale, const double *bias,
                   const double *mean, const double *var, double eps, double *y);
/* Training mode: batch statistics; running_mean/var = input * momentum + batch * (1 - momentum). */
void ref_batchnorm_train(const double *x, int rank, const int64_t *shape, const double *scale, const double *bias,
                         const double *in_mean, const double *in_var, double eps, double momentum, double *y,
                         double *run_mean, double *run_var);

/* GroupNormalization over [N, C, ...] (groups == C: InstanceNormalization). scale/bias have one value per
   channel, or per group when per_group. */
void ref_groupnorm(const double *x, int rank, const int64_t *shape, int64_t groups, const double *scale,
                   const double *bias, bool per_group, double eps, double *y);

/* LayerNormalization (rms = false) / RMSNormalization (rms = true) from `axis`; scale and bias (may be NULL)
   already broadcast to x's shape. mean/inv_std (may be NULL) get one value per row. */
void ref_layernorm(const double *x, int rank, const int64_t *shape, int axis, const double *scale,
                   const double *bias, double eps, bool rms, double *y, double *mean, double *inv_std);

void ref_lpnorm(const double *x, int rank, const int64_t *shape, int axis, int p, double *y);
void ref_mvn(const double *x, int rank, const int64_t *shape, const bool *reduced, double *y);
void ref_lrn(const double *x, int rank, const int64_t *shape, int64_t size, double alpha, double beta, double bias,
             double *y);
