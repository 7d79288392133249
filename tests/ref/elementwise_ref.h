/* Naive reference for the elementwise family, written from the ONNX operator spec: scalar formulas in double
 * (or exact 64-bit integer arithmetic wrapped to the dtype's width) and a NumPy broadcast index mapper. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "minirt/minirt.h"

typedef struct ref_ew_attrs {
    double alpha, beta, gamma; /* activation attributes (set them to the op's defaults) */
    double lo, hi;             /* Clip bounds */
    bool gelu_tanh;            /* Gelu approximate="tanh" */
    bool detect_neg, detect_pos; /* IsInf */
    bool fmod;                 /* Mod */
    bool shift_left;           /* BitShift */
} ref_ew_attrs;

/* Attributes with every op's ONNX defaults. */
ref_ew_attrs ref_ew_defaults(const char *op);

/* Unary ops on a double: Abs ... Swish (ONNX op names), Clip with a->lo/hi. IsNaN/IsInf/Not give 0/1. */
double ref_ew_unary(const char *op, double x, const ref_ew_attrs *a);

/* Binary ops on doubles (float semantics): Add Sub Mul Div Pow Mod Max Min PRelu, comparisons (0/1),
   And Or Xor (operands 0/1). */
double ref_ew_binary_f(const char *op, double x, double y, const ref_ew_attrs *a);

/* Binary ops on integers of dtype dt (values given sign- or zero-extended to 64 bits), with ONNX/NumPy
   integer semantics and two's complement wrap to dt's width: Add Sub Mul Div (truncating, /0 -> 0) Mod
   (Python sign or fmod), Pow (integer exponent), Max Min PRelu, BitShift, BitwiseAnd/Or/Xor, comparisons. */
int64_t ref_ew_binary_i(const char *op, int64_t x, int64_t y, mrt_dtype dt, const ref_ew_attrs *a);

/* Unary on integers: Abs Neg Sign Relu BitwiseNot Clip (a->lo/hi as integers). */
int64_t ref_ew_unary_i(const char *op, int64_t x, mrt_dtype dt, const ref_ew_attrs *a);

/* Wrap v to dt's width (sign-extend signed types, zero-extend unsigned). */
int64_t ref_ew_wrap(int64_t v, mrt_dtype dt);

/* NumPy broadcast of two shapes; false when incompatible. */
bool ref_ew_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rank, int64_t *shape);

/* Flat index into an input of shape in_shape (rank ri, right-aligned) for the output element with flat index
   `flat` of a tensor with shape out_shape. */
int64_t ref_ew_src_index(int rank, const int64_t *out_shape, int64_t flat, int ri, const int64_t *in_shape);
