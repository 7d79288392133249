/* Private to the elementwise family (ops_cpu/elementwise*.c): the broadcast iterator, the float16/bfloat16
 * block conversion used by typed loops, and the kernels the family table points at. */
#pragma once

#include "engine/dtype.h"
#include "engine/epilogue.h"
#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attribute values a loop may need; which fields mean something depends on the op. */
typedef struct mrt_ew_params {
    double alpha, beta, gamma;
    double lo, hi;       /* Clip bounds for float types */
    int64_t ilo, ihi;    /* Clip bounds for signed integers */
    uint64_t ulo, uhi;   /* Clip bounds for unsigned integers */
    int mode;            /* Gelu: 1 = tanh; IsInf: bit 0 negative, bit 1 positive; Mod: fmod */
} mrt_ew_params;

/* Typed loops. Unary: o[i] = f(a[i]) for i < n. Binary: o[i] = f(a[i*sa], b[i*sb]) with sa, sb in {0, 1}.
   Outputs may alias inputs element for element (o == a), so loops read element i before writing it. */
typedef void (*mrt_ew_unary_fn)(void *o, const void *a, int64_t n, const mrt_ew_params *p);
typedef void (*mrt_ew_binary_fn)(void *o, const void *a, int64_t sa, const void *b, int64_t sb, int64_t n,
                                 const mrt_ew_params *p);

/* Called for one run of n output elements along the innermost (coalesced) dimension: out points at the
   first one, in[k] at input k's matching element and in_step[k] (0 or 1) says whether input k advances. */
typedef void (*mrt_ew_inner_fn)(void *user, void *out, const void *const *in, const int64_t *in_step, int64_t n);

#define MRT_EW_MAX_IN 3

/* Integer type lists for macro-generated loops: X(suffix, C type, wrap type, dtype). Arithmetic goes through
   the unsigned wrap type so overflow wraps (two's complement) instead of being undefined, and narrow
   types don't promote to a signed int that could overflow (uint16 * uint16). */
#define MRT_EW_SINTS(X)                                                                                       \
    X(i8, int8_t, uint32_t, MRT_DTYPE_INT8) X(i16, int16_t, uint32_t, MRT_DTYPE_INT16)                      \
    X(i32, int32_t, uint32_t, MRT_DTYPE_INT32) X(i64, int64_t, uint64_t, MRT_DTYPE_INT64)
#define MRT_EW_UINTS(X)                                                                                       \
    X(u8, uint8_t, uint32_t, MRT_DTYPE_UINT8) X(u16, uint16_t, uint32_t, MRT_DTYPE_UINT16)                  \
    X(u32, uint32_t, uint32_t, MRT_DTYPE_UINT32) X(u64, uint64_t, uint64_t, MRT_DTYPE_UINT64)
#define MRT_EW_INTS(X) MRT_EW_SINTS(X) MRT_EW_UINTS(X)

/* Walk `out` in row-major order, with each in[k] broadcast (NumPy rules, aligned right) to out's shape;
   shapes must already be validated. Dims of size 1 are dropped and contiguous dims merged, so same-shape
   and scalar operands reach fn as one long run. Element sizes come from the dtypes (not sub-byte). */
void mrt_ew_broadcast(int n_in, const mrt_tensor *const *in, const mrt_tensor *out, mrt_ew_inner_fn fn,
                      void *user);

/* The shape input B takes under the legacy (opset < 7) broadcast/axis attributes, as a rank(A) view:
   B's dims at [axis, axis + rank(B)), 1 elsewhere. With broadcast = 0 the view is B itself. */
mrt_status mrt_ew_legacy_view(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b, mrt_tensor *view);

/* Whether the node uses the legacy broadcast attributes (the op's rows before opset 7). */
bool mrt_ew_is_legacy(const mrt_op_ctx *ctx);

/* Run a binary loop table over broadcast inputs a, b into out. fns is indexed by a's dtype; float16 and
   bfloat16 inputs use the FLOAT entry on float blocks (converted on load and, when out has the same dtype,
   on store). Fails NOT_IMPLEMENTED when the dtype has no loop. */
mrt_status mrt_ew_run_binary(mrt_op_ctx *ctx, const mrt_ew_binary_fn *fns, const mrt_tensor *a,
                             const mrt_tensor *b, mrt_tensor *out, const mrt_ew_params *p);

/* Same for unary loops over numel(x) elements (out has x's shape). */
mrt_status mrt_ew_run_unary(mrt_op_ctx *ctx, const mrt_ew_unary_fn *fns, const mrt_tensor *x, mrt_tensor *out,
                            const mrt_ew_params *p);

/* A pointwise program's unary and Pow instructions (engine/epilogue.h, ops_cpu/epilogue.c) on float32: the loops
   their nodes' stand-alone kernels run, with the attributes they read (k, k2; Pow's loop: the one mrt_cpu_pow
   chooses for this scalar exponent), so fusion keeps the bits. o may alias a element for element. */
void mrt_ew_pw_unary(mrt_pw_code code, float *o, const float *a, int64_t n, float k, float k2);
void mrt_ew_pw_pow(float *o, const float *a, float exponent, int64_t n);

/* ---- kernels (elementwise_unary.c) */
mrt_status mrt_cpu_abs(mrt_op_ctx *ctx);
mrt_status mrt_cpu_neg(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sqrt(mrt_op_ctx *ctx);
mrt_status mrt_cpu_exp(mrt_op_ctx *ctx);
mrt_status mrt_cpu_log(mrt_op_ctx *ctx);
mrt_status mrt_cpu_reciprocal(mrt_op_ctx *ctx);
mrt_status mrt_cpu_floor(mrt_op_ctx *ctx);
mrt_status mrt_cpu_ceil(mrt_op_ctx *ctx);
mrt_status mrt_cpu_round(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sign(mrt_op_ctx *ctx);
mrt_status mrt_cpu_erf(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sin(mrt_op_ctx *ctx);
mrt_status mrt_cpu_cos(mrt_op_ctx *ctx);
mrt_status mrt_cpu_tan(mrt_op_ctx *ctx);
mrt_status mrt_cpu_asin(mrt_op_ctx *ctx);
mrt_status mrt_cpu_acos(mrt_op_ctx *ctx);
mrt_status mrt_cpu_atan(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sinh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_cosh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_asinh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_acosh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_atanh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_isnan(mrt_op_ctx *ctx);
mrt_status mrt_cpu_isinf(mrt_op_ctx *ctx);
mrt_status mrt_cpu_not(mrt_op_ctx *ctx);
mrt_status mrt_cpu_bitwise_not(mrt_op_ctx *ctx);
mrt_status mrt_cpu_relu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sigmoid(mrt_op_ctx *ctx);
mrt_status mrt_cpu_tanh(mrt_op_ctx *ctx);
mrt_status mrt_cpu_leaky_relu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_elu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_selu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_celu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_thresholded_relu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_hard_sigmoid(mrt_op_ctx *ctx);
mrt_status mrt_cpu_hard_swish(mrt_op_ctx *ctx);
mrt_status mrt_cpu_softplus(mrt_op_ctx *ctx);
mrt_status mrt_cpu_softsign(mrt_op_ctx *ctx);
mrt_status mrt_cpu_gelu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_mish(mrt_op_ctx *ctx);
mrt_status mrt_cpu_swish(mrt_op_ctx *ctx);
mrt_status mrt_cpu_clip(mrt_op_ctx *ctx);

/* ---- kernels (elementwise_binary.c) */
mrt_status mrt_cpu_add(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sub(mrt_op_ctx *ctx);
mrt_status mrt_cpu_mul(mrt_op_ctx *ctx);
mrt_status mrt_cpu_div(mrt_op_ctx *ctx);
mrt_status mrt_cpu_pow(mrt_op_ctx *ctx);
mrt_status mrt_cpu_mod(mrt_op_ctx *ctx);
mrt_status mrt_cpu_bit_shift(mrt_op_ctx *ctx);
mrt_status mrt_cpu_bitwise_and(mrt_op_ctx *ctx);
mrt_status mrt_cpu_bitwise_or(mrt_op_ctx *ctx);
mrt_status mrt_cpu_bitwise_xor(mrt_op_ctx *ctx);
mrt_status mrt_cpu_and(mrt_op_ctx *ctx);
mrt_status mrt_cpu_or(mrt_op_ctx *ctx);
mrt_status mrt_cpu_xor(mrt_op_ctx *ctx);
mrt_status mrt_cpu_equal(mrt_op_ctx *ctx);
mrt_status mrt_cpu_less(mrt_op_ctx *ctx);
mrt_status mrt_cpu_less_or_equal(mrt_op_ctx *ctx);
mrt_status mrt_cpu_greater(mrt_op_ctx *ctx);
mrt_status mrt_cpu_greater_or_equal(mrt_op_ctx *ctx);
mrt_status mrt_cpu_prelu(mrt_op_ctx *ctx);
mrt_status mrt_cpu_max(mrt_op_ctx *ctx);
mrt_status mrt_cpu_min(mrt_op_ctx *ctx);
mrt_status mrt_cpu_sum(mrt_op_ctx *ctx);
mrt_status mrt_cpu_mean(mrt_op_ctx *ctx);
mrt_status mrt_cpu_where(mrt_op_ctx *ctx);

#ifdef __cplusplus
}
#endif
