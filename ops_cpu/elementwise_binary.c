/* Binary and variadic elementwise CPU kernels with NumPy broadcasting: Add, Sub, Mul, Div, Pow, Mod, BitShift,
 * BitwiseAnd/Or/Xor, And/Or/Xor, Equal (also strings), Less, LessOrEqual, Greater, GreaterOrEqual, PRelu,
 * Max, Min, Sum, Mean, Where. Integer division and modulo by zero give 0 (ONNX leaves it undefined); integer
 * overflow wraps; a negative integer exponent gives the truncated result (0 unless the base is +-1); Mod with
 * fmod=0 on floats (which the spec disallows) follows numpy.mod; Max/Min propagate NaN like numpy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu/elementwise.h"
#include "ops_cpu/epilogue.h"
#include "ops_cpu/simd.h"

/* o[i] = EXPR(x = a[i*sa], y = b[i*sb]) after the prologue PRO; one loop per stride pattern so the common
   same-shape and scalar cases are plain contiguous loops. */
#define BIN_LOOP(NAME, TA, TB, TO, PRO, ...)                                                                   \
    static void NAME(void *o_, const void *a_, int64_t sa, const void *b_, int64_t sb, int64_t n,             \
                     const mrt_ew_params *p)                                                                   \
    {                                                                                                          \
        TO *o = (TO *)o_;                                                                                      \
        const TA *a = (const TA *)a_;                                                                          \
        const TB *b = (const TB *)b_;                                                                          \
        (void)p;                                                                                               \
        PRO                                                                                                    \
        if (sa && sb) {                                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                TA x = a[i];                                                                                   \
                TB y = b[i];                                                                                   \
                o[i] = (TO)(__VA_ARGS__);                                                                      \
            }                                                                                                  \
        } else if (sa) {                                                                                       \
            TB y = b[0];                                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                TA x = a[i];                                                                                   \
                o[i] = (TO)(__VA_ARGS__);                                                                      \
            }                                                                                                  \
        } else if (sb) {                                                                                       \
            TA x = a[0];                                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                                  \
                TB y = b[i];                                                                                   \
                o[i] = (TO)(__VA_ARGS__);                                                                      \
            }                                                                                                  \
        } else {                                                                                               \
            TA x = a[0];                                                                                       \
            TB y = b[0];                                                                                       \
            TO v = (TO)(__VA_ARGS__);                                                                          \
            for (int64_t i = 0; i < n; i++) o[i] = v;                                                          \
        }                                                                                                      \
    }

#define ENTRY(name, sfx, DT) [DT] = name##_##sfx,

/* ------------------------------------------------------------------ arithmetic */

#define ADD_S(sfx, T, W, DT) BIN_LOOP(add_##sfx, T, T, T, , (T)((W)x + (W)y))
#define SUB_S(sfx, T, W, DT) BIN_LOOP(sub_##sfx, T, T, T, , (T)((W)x - (W)y))
#define MUL_S(sfx, T, W, DT) BIN_LOOP(mul_##sfx, T, T, T, , (T)((W)x * (W)y))
/* C truncating division; /0 gives 0 and MIN / -1 wraps to MIN */
#define DIV_S(sfx, T, W, DT) BIN_LOOP(div_##sfx, T, T, T, , y == 0 ? 0 : y == -1 ? (T)((W)0 - (W)x) : x / y)
#define DIV_U(sfx, T, W, DT) BIN_LOOP(div_##sfx, T, T, T, , y == 0 ? 0 : x / y)
MRT_EW_INTS(ADD_S)
MRT_EW_INTS(SUB_S)
MRT_EW_INTS(MUL_S)
MRT_EW_SINTS(DIV_S)
MRT_EW_UINTS(DIV_U)
BIN_LOOP(add_f32, float, float, float, , x + y)
BIN_LOOP(add_f64, double, double, double, , x + y)
BIN_LOOP(sub_f32, float, float, float, , x - y)
BIN_LOOP(sub_f64, double, double, double, , x - y)
BIN_LOOP(mul_f32, float, float, float, , x * y)
BIN_LOOP(mul_f64, double, double, double, , x * y)
BIN_LOOP(div_f32, float, float, float, , x / y)
BIN_LOOP(div_f64, double, double, double, , x / y)

#define ADD_E(sfx, T, W, DT) ENTRY(add, sfx, DT)
#define SUB_E(sfx, T, W, DT) ENTRY(sub, sfx, DT)
#define MUL_E(sfx, T, W, DT) ENTRY(mul, sfx, DT)
#define DIV_E(sfx, T, W, DT) ENTRY(div, sfx, DT)
static const mrt_ew_binary_fn add_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(ADD_E)[MRT_DTYPE_FLOAT] = add_f32, [MRT_DTYPE_DOUBLE] = add_f64};
static const mrt_ew_binary_fn sub_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(SUB_E)[MRT_DTYPE_FLOAT] = sub_f32, [MRT_DTYPE_DOUBLE] = sub_f64};
static const mrt_ew_binary_fn mul_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(MUL_E)[MRT_DTYPE_FLOAT] = mul_f32, [MRT_DTYPE_DOUBLE] = mul_f64};
static const mrt_ew_binary_fn div_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(DIV_E)[MRT_DTYPE_FLOAT] = div_f32, [MRT_DTYPE_DOUBLE] = div_f64};

/* Python-style modulo (sign of the divisor) and C-style (sign of the dividend). */
static inline int64_t pymod_i(int64_t x, int64_t y)
{
    if (y == 0 || y == -1) return 0; /* -1 also avoids MIN % -1 */
    int64_t r = x % y;
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
static inline int64_t cmod_i(int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x % y; }
static inline float pymod_f(float x, float y)
{
    float r = fmodf(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
static inline double pymod_d(double x, double y)
{
    double r = fmod(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
#define PYMOD_S(sfx, T, W, DT) BIN_LOOP(pymod_##sfx, T, T, T, , (T)pymod_i(x, y))
#define CMOD_S(sfx, T, W, DT) BIN_LOOP(cmod_##sfx, T, T, T, , (T)cmod_i(x, y))
#define MOD_U(sfx, T, W, DT) BIN_LOOP(umod_##sfx, T, T, T, , y == 0 ? 0 : x % y)
MRT_EW_SINTS(PYMOD_S)
MRT_EW_SINTS(CMOD_S)
MRT_EW_UINTS(MOD_U)
BIN_LOOP(pymod_f32, float, float, float, , pymod_f(x, y))
BIN_LOOP(pymod_f64, double, double, double, , pymod_d(x, y))
BIN_LOOP(cmod_f32, float, float, float, , fmodf(x, y))
BIN_LOOP(cmod_f64, double, double, double, , fmod(x, y))
#define PYMOD_E(sfx, T, W, DT) ENTRY(pymod, sfx, DT)
#define CMOD_E(sfx, T, W, DT) ENTRY(cmod, sfx, DT)
#define UMOD_E(sfx, T, W, DT) ENTRY(umod, sfx, DT)
static const mrt_ew_binary_fn pymod_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_SINTS(PYMOD_E) MRT_EW_UINTS(UMOD_E)[MRT_DTYPE_FLOAT] = pymod_f32, [MRT_DTYPE_DOUBLE] = pymod_f64};
static const mrt_ew_binary_fn cmod_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_SINTS(CMOD_E) MRT_EW_UINTS(UMOD_E)[MRT_DTYPE_FLOAT] = cmod_f32, [MRT_DTYPE_DOUBLE] = cmod_f64};

/* ------------------------------------------------------------------ bitwise and logic */

#define BAND(sfx, T, W, DT) BIN_LOOP(band_##sfx, T, T, T, , x & y)
#define BOR(sfx, T, W, DT) BIN_LOOP(bor_##sfx, T, T, T, , x | y)
#define BXOR(sfx, T, W, DT) BIN_LOOP(bxor_##sfx, T, T, T, , x ^ y)
/* shifts by the type's width or more give 0 (C leaves them undefined) */
#define SHL(sfx, T, W, DT) BIN_LOOP(shl_##sfx, T, T, T, , y >= 8 * sizeof(T) ? 0 : (W)x << y)
#define SHR(sfx, T, W, DT) BIN_LOOP(shr_##sfx, T, T, T, , y >= 8 * sizeof(T) ? 0 : x >> y)
MRT_EW_INTS(BAND)
MRT_EW_INTS(BOR)
MRT_EW_INTS(BXOR)
MRT_EW_UINTS(SHL)
MRT_EW_UINTS(SHR)
#define BAND_E(sfx, T, W, DT) ENTRY(band, sfx, DT)
#define BOR_E(sfx, T, W, DT) ENTRY(bor, sfx, DT)
#define BXOR_E(sfx, T, W, DT) ENTRY(bxor, sfx, DT)
#define SHL_E(sfx, T, W, DT) ENTRY(shl, sfx, DT)
#define SHR_E(sfx, T, W, DT) ENTRY(shr, sfx, DT)
static const mrt_ew_binary_fn band_fns[MRT_DTYPE_COUNT_] = {MRT_EW_INTS(BAND_E)};
static const mrt_ew_binary_fn bor_fns[MRT_DTYPE_COUNT_] = {MRT_EW_INTS(BOR_E)};
static const mrt_ew_binary_fn bxor_fns[MRT_DTYPE_COUNT_] = {MRT_EW_INTS(BXOR_E)};
static const mrt_ew_binary_fn shl_fns[MRT_DTYPE_COUNT_] = {MRT_EW_UINTS(SHL_E)};
static const mrt_ew_binary_fn shr_fns[MRT_DTYPE_COUNT_] = {MRT_EW_UINTS(SHR_E)};

/* bools are bytes; anything nonzero is true */
BIN_LOOP(and_b, uint8_t, uint8_t, uint8_t, , (x != 0) & (y != 0))
BIN_LOOP(or_b, uint8_t, uint8_t, uint8_t, , (x != 0) | (y != 0))
BIN_LOOP(xor_b, uint8_t, uint8_t, uint8_t, , (x != 0) != (y != 0))
static const mrt_ew_binary_fn and_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_BOOL] = and_b};
static const mrt_ew_binary_fn or_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_BOOL] = or_b};
static const mrt_ew_binary_fn xor_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_BOOL] = xor_b};

/* ------------------------------------------------------------------ comparisons */

#define CMP_OPS(X) X(eq, ==) X(lt, <) X(le, <=) X(gt, >) X(ge, >=)
#define CMP_DEF(name, OP)                                                                                      \
    BIN_LOOP(name##_f32, float, float, uint8_t, , x OP y)                                                      \
    BIN_LOOP(name##_f64, double, double, uint8_t, , x OP y)                                                    \
    BIN_LOOP(name##_i8, int8_t, int8_t, uint8_t, , x OP y)                                                     \
    BIN_LOOP(name##_i16, int16_t, int16_t, uint8_t, , x OP y)                                                  \
    BIN_LOOP(name##_i32, int32_t, int32_t, uint8_t, , x OP y)                                                  \
    BIN_LOOP(name##_i64, int64_t, int64_t, uint8_t, , x OP y)                                                  \
    BIN_LOOP(name##_u8, uint8_t, uint8_t, uint8_t, , x OP y)                                                   \
    BIN_LOOP(name##_u16, uint16_t, uint16_t, uint8_t, , x OP y)                                                \
    BIN_LOOP(name##_u32, uint32_t, uint32_t, uint8_t, , x OP y)                                                \
    BIN_LOOP(name##_u64, uint64_t, uint64_t, uint8_t, , x OP y)                                                \
    BIN_LOOP(name##_b, uint8_t, uint8_t, uint8_t, , (x != 0) OP (y != 0))                                      \
    static const mrt_ew_binary_fn name##_fns[MRT_DTYPE_COUNT_] = {                                             \
        [MRT_DTYPE_FLOAT] = name##_f32, [MRT_DTYPE_DOUBLE] = name##_f64, [MRT_DTYPE_INT8] = name##_i8,       \
        [MRT_DTYPE_INT16] = name##_i16, [MRT_DTYPE_INT32] = name##_i32,  [MRT_DTYPE_INT64] = name##_i64,     \
        [MRT_DTYPE_UINT8] = name##_u8,  [MRT_DTYPE_UINT16] = name##_u16, [MRT_DTYPE_UINT32] = name##_u32,    \
        [MRT_DTYPE_UINT64] = name##_u64, [MRT_DTYPE_BOOL] = name##_b};
CMP_OPS(CMP_DEF)

/* ------------------------------------------------------------------ Max, Min, PRelu */

/* NaN propagates like numpy.maximum/minimum */
#define MAX_S(sfx, T, W, DT) BIN_LOOP(max_##sfx, T, T, T, , x > y ? x : y)
#define MIN_S(sfx, T, W, DT) BIN_LOOP(min_##sfx, T, T, T, , x < y ? x : y)
MRT_EW_INTS(MAX_S)
MRT_EW_INTS(MIN_S)
BIN_LOOP(max_f32, float, float, float, , x > y || x != x ? x : y)
BIN_LOOP(max_f64, double, double, double, , x > y || x != x ? x : y)
BIN_LOOP(min_f32, float, float, float, , x < y || x != x ? x : y)
BIN_LOOP(min_f64, double, double, double, , x < y || x != x ? x : y)
#define MAX_E(sfx, T, W, DT) ENTRY(max, sfx, DT)
#define MIN_E(sfx, T, W, DT) ENTRY(min, sfx, DT)
static const mrt_ew_binary_fn max_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(MAX_E)[MRT_DTYPE_FLOAT] = max_f32, [MRT_DTYPE_DOUBLE] = max_f64};
static const mrt_ew_binary_fn min_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(MIN_E)[MRT_DTYPE_FLOAT] = min_f32, [MRT_DTYPE_DOUBLE] = min_f64};

#define PRELU_S(sfx, T, W, DT) BIN_LOOP(prelu_##sfx, T, T, T, , x < 0 ? (T)((W)x * (W)y) : x)
#define PRELU_U(sfx, T, W, DT) BIN_LOOP(prelu_##sfx, T, T, T, , ((void)y, x))
MRT_EW_SINTS(PRELU_S)
MRT_EW_UINTS(PRELU_U)
BIN_LOOP(prelu_f32, float, float, float, , x < 0 ? x * y : x)
BIN_LOOP(prelu_f64, double, double, double, , x < 0 ? x * y : x)
#define PRELU_E(sfx, T, W, DT) ENTRY(prelu, sfx, DT)
static const mrt_ew_binary_fn prelu_fns[MRT_DTYPE_COUNT_] = {
    MRT_EW_INTS(PRELU_E)[MRT_DTYPE_FLOAT] = prelu_f32, [MRT_DTYPE_DOUBLE] = prelu_f64};

/* ------------------------------------------------------------------ kernels */

static mrt_status run_binary(mrt_op_ctx *ctx, const mrt_ew_binary_fn *fns, const mrt_ew_params *p)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out) return MRT_STATUS_OK;
    if (!a || !b) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "an input is missing");
    mrt_tensor bv = *b;
    if (mrt_ew_is_legacy(ctx)) MRT_TRY(mrt_ew_legacy_view(ctx, a, b, &bv));
    mrt_ew_params none = {0};
    return mrt_ew_run_binary(ctx, fns, a, &bv, out, p ? p : &none);
}

/* ---- float32 Add/Sub/Mul/Div fast path: one operand has out's shape, the other (b below) is the same shape, a
   scalar, or varies along one contiguous block of dims (a per-channel [1, C, 1, 1] against [N, C, H, W], as
   squeeze-excite's Mul). Then out = outer x C x inner with b indexed by the middle coordinate only: flat runs
   of a constant b, or (same shape) one contiguous run. Vectorised (target clones) and split over the session's
   threads in flat ranges; each element is the one operation the generic loop does, so the bits are the same
   for every thread count, clone and path. */
typedef enum arith_op { AR_ADD, AR_SUB, AR_MUL, AR_DIV } arith_op;

typedef struct arith_job {
    arith_op op;
    bool swap;           /* the broadcast operand is the first input: out = b op a */
    const float *a, *b;  /* a: out's shape */
    float *o;
    int64_t c, inner;    /* out[i] uses b[(i / inner) % c] */
    const mrt_epilogue *ep; /* fused successors (a GELU written out), applied to each block while in cache */
} arith_job;

/* o[i] = a[i] op b[i] (swap: b[i] op a[i]) */
MRT_VECTORIZE_CLONES
static void arith_vv(arith_op op, bool swap, float *o, const float *a, const float *b, int64_t n)
{
    if (swap) {
        const float *t = a;
        a = b;
        b = t;
    }
    switch (op) {
    case AR_ADD: for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i]; break;
    case AR_SUB: for (int64_t i = 0; i < n; i++) o[i] = a[i] - b[i]; break;
    case AR_MUL: for (int64_t i = 0; i < n; i++) o[i] = a[i] * b[i]; break;
    case AR_DIV: for (int64_t i = 0; i < n; i++) o[i] = a[i] / b[i]; break;
    }
}

/* o[i] = a[i] op s (swap: s op a[i]) */
MRT_VECTORIZE_CLONES
static void arith_vs(arith_op op, bool swap, float *o, const float *a, float s, int64_t n)
{
    switch (op) {
    case AR_ADD: for (int64_t i = 0; i < n; i++) o[i] = a[i] + s; break;
    case AR_MUL: for (int64_t i = 0; i < n; i++) o[i] = a[i] * s; break;
    case AR_SUB:
        if (swap)
            for (int64_t i = 0; i < n; i++) o[i] = s - a[i];
        else
            for (int64_t i = 0; i < n; i++) o[i] = a[i] - s;
        break;
    case AR_DIV:
        if (swap)
            for (int64_t i = 0; i < n; i++) o[i] = s / a[i];
        else
            for (int64_t i = 0; i < n; i++) o[i] = a[i] / s;
        break;
    }
}

static void arith_block(const arith_job *j, int64_t begin, int64_t end)
{
    if (j->inner == 1) { /* b varies along the last dims: runs of b's whole block (same shape: one run) */
        for (int64_t i = begin; i < end;) {
            int64_t k = i % j->c, stop = i - k + j->c < end ? i - k + j->c : end;
            arith_vv(j->op, j->swap, j->o + i, j->a + i, j->b + k, stop - i);
            i = stop;
        }
        return;
    }
    for (int64_t i = begin; i < end;) { /* runs of one b value */
        int64_t row = i / j->inner, stop = (row + 1) * j->inner < end ? (row + 1) * j->inner : end;
        arith_vs(j->op, j->swap, j->o + i, j->a + i, j->b[row % j->c], stop - i);
        i = stop;
    }
}

/* With an epilogue, blocks of 4096 results (16 KB, in L1 when the epilogue reads them back) */
static void arith_range(void *arg, int64_t begin, int64_t end)
{
    const arith_job *j = arg;
    if (!j->ep) {
        arith_block(j, begin, end);
        return;
    }
    for (int64_t i = begin; i < end; i += 4096) {
        int64_t stop = end - i < 4096 ? end : i + 4096;
        arith_block(j, i, stop);
        mrt_epilogue_apply(j->ep, j->o + i, stop - i, 0, i);
    }
}

/* Whether b (right-aligned to out) matches out along one contiguous block of out's dims and is 1 elsewhere (dims
   of size 1 in out do not count): then *c is that block's size and *inner the size of the dims after it. */
static bool block_broadcast(const mrt_tensor *out, const mrt_tensor *b, int64_t *c, int64_t *inner)
{
    int r = out->rank, off = r - b->rank;
    if (off < 0) return false;
    enum { BEFORE, IN, AFTER } state = BEFORE;
    *c = 1;
    *inner = 1;
    for (int d = 0; d < r; d++) {
        int64_t od = out->shape[d], bd = d >= off ? b->shape[d - off] : 1;
        if (od == 1) continue;
        if (bd == od) {
            if (state == AFTER) return false; /* a second block */
            state = IN;
            *c *= od;
        } else if (bd == 1) {
            if (state == IN) state = AFTER;
            if (state == AFTER) *inner *= od;
        } else {
            return false;
        }
    }
    if (state == BEFORE) *inner = mrt_tensor_numel(out); /* a scalar: one run */
    return true;
}

/* The fast path when it applies (float32 throughout, no legacy broadcast attributes); false: take the generic one. */
static bool run_arith_f32(mrt_op_ctx *ctx, arith_op op)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out || !a || !b || a->dtype != MRT_DTYPE_FLOAT || b->dtype != MRT_DTYPE_FLOAT || out->dtype != MRT_DTYPE_FLOAT ||
        mrt_ew_is_legacy(ctx))
        return false;
    arith_job j = {.op = op, .o = out->data, .ep = ctx->epilogue && ctx->epilogue->n_ops ? ctx->epilogue : NULL};
    if (mrt_tensor_same_shape(a, out) && block_broadcast(out, b, &j.c, &j.inner)) {
        j.a = a->data;
        j.b = b->data;
    } else if (mrt_tensor_same_shape(b, out) && block_broadcast(out, a, &j.c, &j.inner)) {
        j.a = b->data;
        j.b = a->data;
        j.swap = true;
    } else {
        return false;
    }
    int64_t n = mrt_tensor_numel(out);
    if (n == 0) return true;
    mrt_parallel_for(ctx, n, 32768, arith_range, &j);
    return true;
}

#define ARITH_KERNEL(kname, table, OP)                                                                         \
    mrt_status mrt_cpu_##kname(mrt_op_ctx *ctx)                                                                \
    {                                                                                                          \
        if (run_arith_f32(ctx, OP)) return MRT_STATUS_OK;                                                      \
        MRT_TRY(run_binary(ctx, table##_fns, NULL));                                                           \
        const mrt_tensor *o_ = mrt_output(ctx, 0); /* fused successors: only on float32 outputs */              \
        if (o_ && o_->dtype == MRT_DTYPE_FLOAT) mrt_epilogue_apply(ctx->epilogue, o_->data, mrt_tensor_numel(o_), 0, 0); \
        return MRT_STATUS_OK;                                                                                  \
    }

ARITH_KERNEL(add, add, AR_ADD)
ARITH_KERNEL(sub, sub, AR_SUB)
ARITH_KERNEL(mul, mul, AR_MUL)
ARITH_KERNEL(div, div, AR_DIV)

#define BINARY_KERNEL(kname, table) \
    mrt_status mrt_cpu_##kname(mrt_op_ctx *ctx) { return run_binary(ctx, table##_fns, NULL); }

BINARY_KERNEL(bitwise_and, band)
BINARY_KERNEL(bitwise_or, bor)
BINARY_KERNEL(bitwise_xor, bxor)
BINARY_KERNEL(and, and)
BINARY_KERNEL(or, or)
BINARY_KERNEL(xor, xor)
BINARY_KERNEL(less, lt)
BINARY_KERNEL(less_or_equal, le)
BINARY_KERNEL(greater, gt)
BINARY_KERNEL(greater_or_equal, ge)

mrt_status mrt_cpu_mod(mrt_op_ctx *ctx)
{
    return run_binary(ctx, mrt_attr_int(ctx, "fmod", 0) ? cmod_fns : pymod_fns, NULL);
}

mrt_status mrt_cpu_bit_shift(mrt_op_ctx *ctx)
{
    const char *dir = mrt_attr_string(ctx, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"",
                           dir);
    return run_binary(ctx, dir[0] == 'L' ? shl_fns : shr_fns, NULL);
}

/* Equal on strings: byte-wise comparison. */
static void eq_str_inner(void *user, void *out, const void *const *in, const int64_t *step, int64_t n)
{
    (void)user;
    uint8_t *o = (uint8_t *)out;
    const char *const *a = (const char *const *)in[0], *const *b = (const char *const *)in[1];
    for (int64_t i = 0; i < n; i++) {
        const char *x = a[i * step[0]], *y = b[i * step[1]];
        o[i] = strcmp(x ? x : "", y ? y : "") == 0;
    }
}

mrt_status mrt_cpu_equal(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out || !a || !b || a->dtype != MRT_DTYPE_STRING) return run_binary(ctx, eq_fns, NULL);
    const mrt_tensor *in[2] = {a, b};
    mrt_ew_broadcast(2, in, out, eq_str_inner, NULL);
    return MRT_STATUS_OK;
}

/* PRelu: slope broadcasts unidirectionally to X. Before opset 7 a 1-D slope of size C = X.shape[1] is the
   per-channel slope (Caffe style), which NumPy alignment would put on the last axis instead. */
mrt_status mrt_cpu_prelu(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *slope = mrt_input(ctx, 1);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out) return MRT_STATUS_OK;
    if (!x || !slope) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "an input is missing");
    mrt_tensor sv = *slope;
    if (ctx->opset < 7 && slope->rank == 1 && x->rank >= 2 && slope->shape[0] == x->shape[1] &&
        slope->shape[0] != 1) {
        sv.rank = x->rank - 1;
        for (int i = 1; i < sv.rank; i++) sv.shape[i] = 1;
    }
    mrt_ew_params none = {0};
    return mrt_ew_run_binary(ctx, prelu_fns, x, &sv, out, &none);
}

/* ------------------------------------------------------------------ Pow */

static int64_t ipow(int64_t base, int64_t e)
{
    if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base; /* unsigned: overflow wraps */
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

BIN_LOOP(pow_f32, float, float, float, , powf(x, y))
/* x^2 as x * x: correctly rounded (glibc's powf is within 0.82 ulp, not always), and what numpy, PyTorch and ONNX
   Runtime compute for a square; RMSNorm and variance computations square every activation, and powf took 8.6 ns
   an element (27% of a small Llama's run) */
MRT_VECTORIZE_CLONES
static void square_f32(void *o_, const void *a_, int64_t sa, const void *b_, int64_t sb, int64_t n, const mrt_ew_params *p)
{
    float *o = o_;
    const float *a = a_;
    (void)b_, (void)sb, (void)p;
    if (sa)
        for (int64_t i = 0; i < n; i++) o[i] = a[i] * a[i];
    else
        for (int64_t i = 0; i < n; i++) o[i] = a[0] * a[0];
}
/* x^3 in double: x * x is exact there, the cube rounded once to double, then to float. That is the correctly
   rounded cube unless the first rounding lands on a float tie that the exact cube is not on (a chance of about 2^-29
   per value; none in 2e8 random floats, against a 64-bit-mantissa cube), where powf(x, 3) was wrong on 2.2e-4 of
   them. GELU's tanh form cubes every activation (GPT-2): powf took 5 ns an element. */
MRT_VECTORIZE_CLONES
static void cube_f32(void *o_, const void *a_, int64_t sa, const void *b_, int64_t sb, int64_t n, const mrt_ew_params *p)
{
    float *o = o_;
    const float *a = a_;
    (void)b_, (void)sb, (void)p;
    for (int64_t i = 0; i < n; i++) {
        double x = a[sa ? i : 0];
        o[i] = (float)(x * x * x);
    }
}
BIN_LOOP(pow_f64, double, double, double, , pow(x, y))

/* float32 base, scalar float exponent e: 2 and 3 take their exact loops */
static mrt_ew_binary_fn pow_f32_loop(double e) { return e == 2.0 ? square_f32 : e == 3.0 ? cube_f32 : pow_f32; }

BIN_LOOP(pow_f32_i32, float, int32_t, float, , powf(x, (float)y))
BIN_LOOP(pow_f32_i64, float, int64_t, float, , (float)pow(x, (double)y))
BIN_LOOP(pow_f64_i32, double, int32_t, double, , pow(x, (double)y))
BIN_LOOP(pow_f64_i64, double, int64_t, double, , pow(x, (double)y))
BIN_LOOP(pow_i32, int32_t, int32_t, int32_t, , (int32_t)ipow(x, y))
BIN_LOOP(pow_i64, int64_t, int64_t, int64_t, , ipow(x, y))

typedef struct pow_call {
    mrt_dtype xt, yt, ot;
} pow_call;

/* Any other (base, exponent) dtype pair: integers with integer exponents exactly, the rest through double. */
static void pow_generic_inner(void *user, void *out, const void *const *in, const int64_t *step, int64_t n)
{
    const pow_call *c = (const pow_call *)user;
    bool int_base = mrt_dtype_is_integer(c->xt), int_exp = mrt_dtype_is_integer(c->yt);
    for (int64_t i = 0; i < n; i++) {
        int64_t ix = i * step[0], iy = i * step[1];
        if (int_base && int_exp) {
            int64_t e = mrt_load_i64(c->yt, in[1], iy);
            /* a uint64 exponent past INT64_MAX: keep its parity (all that matters for bases 0 and +-1) */
            if (c->yt == MRT_DTYPE_UINT64 && e < 0) e = (e & 1) ? INT64_MAX : INT64_MAX - 1;
            mrt_store_i64(c->ot, out, i, ipow(mrt_load_i64(c->xt, in[0], ix), e));
        } else {
            mrt_store_f64(c->ot, out, i, pow(mrt_load_f64(c->xt, in[0], ix), mrt_load_f64(c->yt, in[1], iy)));
        }
    }
}

mrt_status mrt_cpu_pow(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *y = mrt_input(ctx, 1);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out) return MRT_STATUS_OK;
    if (!x || !y) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "an input is missing");
    mrt_tensor yv = *y;
    if (mrt_ew_is_legacy(ctx)) MRT_TRY(mrt_ew_legacy_view(ctx, x, y, &yv));
    mrt_ew_params none = {0};
    mrt_dtype xt = x->dtype, yt = y->dtype;
    bool xf = xt == MRT_DTYPE_FLOAT || xt == MRT_DTYPE_FLOAT16 || xt == MRT_DTYPE_BFLOAT16;
    bool yf = yt == MRT_DTYPE_FLOAT || yt == MRT_DTYPE_FLOAT16 || yt == MRT_DTYPE_BFLOAT16;
    mrt_ew_binary_fn fast[MRT_DTYPE_COUNT_] = {0};
    if (xf && yf) fast[MRT_DTYPE_FLOAT] = mrt_tensor_numel(y) == 1 ? pow_f32_loop(mrt_load_f64(yt, y->data, 0)) : pow_f32;
    else if (xt == MRT_DTYPE_DOUBLE && yt == MRT_DTYPE_DOUBLE) fast[xt] = pow_f64;
    else if (xt == MRT_DTYPE_FLOAT && yt == MRT_DTYPE_INT32) fast[xt] = pow_f32_i32;
    else if (xt == MRT_DTYPE_FLOAT && yt == MRT_DTYPE_INT64) fast[xt] = pow_f32_i64;
    else if (xt == MRT_DTYPE_DOUBLE && yt == MRT_DTYPE_INT32) fast[xt] = pow_f64_i32;
    else if (xt == MRT_DTYPE_DOUBLE && yt == MRT_DTYPE_INT64) fast[xt] = pow_f64_i64;
    else if (xt == MRT_DTYPE_INT32 && yt == MRT_DTYPE_INT32) fast[xt] = pow_i32;
    else if (xt == MRT_DTYPE_INT64 && yt == MRT_DTYPE_INT64) fast[xt] = pow_i64;
    if (fast[MRT_DTYPE_FLOAT] || (xt >= 0 && xt < MRT_DTYPE_COUNT_ && fast[xt]))
        return mrt_ew_run_binary(ctx, fast, x, &yv, out, &none);
    if (mrt_dtype_bits(xt) < 8 || mrt_dtype_bits(yt) < 8 || xt == MRT_DTYPE_STRING || yt == MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Pow of %s by %s not supported", mrt_dtype_name(xt),
                           mrt_dtype_name(yt));
    pow_call c = {xt, yt, out->dtype};
    const mrt_tensor *in[2] = {x, &yv};
    mrt_ew_broadcast(2, in, out, pow_generic_inner, &c);
    return MRT_STATUS_OK;
}

/* A pointwise program's Pow instruction (engine/epilogue.h): the loop mrt_cpu_pow runs for this scalar exponent */
void mrt_ew_pw_pow(float *o, const float *a, float exponent, int64_t n)
{
    pow_f32_loop(exponent)(o, a, 1, &exponent, 0, n, NULL);
}

/* ------------------------------------------------------------------ Max, Min, Sum, Mean */

static void copy_inner(void *user, void *out, const void *const *in, const int64_t *step, int64_t n)
{
    size_t esz = *(const size_t *)user;
    if (step[0]) {
        memcpy(out, in[0], (size_t)n * esz);
    } else {
        for (int64_t i = 0; i < n; i++) memcpy((char *)out + (size_t)i * esz, in[0], esz);
    }
}

/* Mean's final division by the input count, on the accumulated output in place. */
static void mean_f32(void *o_, const void *a_, int64_t n, const mrt_ew_params *p)
{
    float *o = (float *)o_;
    const float *a = (const float *)a_;
    const float c = (float)p->alpha;
    for (int64_t i = 0; i < n; i++) o[i] = a[i] / c;
}
static void mean_f64(void *o_, const void *a_, int64_t n, const mrt_ew_params *p)
{
    double *o = (double *)o_;
    const double *a = (const double *)a_;
    const double c = p->alpha;
    for (int64_t i = 0; i < n; i++) o[i] = a[i] / c;
}
static const mrt_ew_unary_fn mean_fns[MRT_DTYPE_COUNT_] = {[MRT_DTYPE_FLOAT] = mean_f32,
                                                           [MRT_DTYPE_DOUBLE] = mean_f64};

/* Fold the inputs pairwise into the output: out = f(in0, in1), then out = f(out, in_k); each step reads
   element i of out before writing it, so the in-place steps are safe. */
static mrt_status run_variadic(mrt_op_ctx *ctx, const mrt_ew_binary_fn *fns, bool mean)
{
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out) return MRT_STATUS_OK;
    int n = ctx->n_inputs;
    if (n < 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "needs at least one input");
    for (int k = 0; k < n; k++)
        if (!mrt_input(ctx, k)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is missing", k);
    mrt_ew_params p = {0};
    if (n == 1) {
        const mrt_tensor *in[1] = {mrt_input(ctx, 0)};
        size_t esz = (size_t)mrt_dtype_bits(out->dtype) / 8;
        mrt_ew_broadcast(1, in, out, copy_inner, &esz);
        return MRT_STATUS_OK;
    }
    MRT_TRY(mrt_ew_run_binary(ctx, fns, mrt_input(ctx, 0), mrt_input(ctx, 1), out, &p));
    for (int k = 2; k < n; k++) MRT_TRY(mrt_ew_run_binary(ctx, fns, out, mrt_input(ctx, k), out, &p));
    if (!mean) return MRT_STATUS_OK;
    p.alpha = n;
    return mrt_ew_run_unary(ctx, mean_fns, out, out, &p);
}

mrt_status mrt_cpu_max(mrt_op_ctx *ctx) { return run_variadic(ctx, max_fns, false); }
mrt_status mrt_cpu_min(mrt_op_ctx *ctx) { return run_variadic(ctx, min_fns, false); }
mrt_status mrt_cpu_sum(mrt_op_ctx *ctx) { return run_variadic(ctx, add_fns, false); }
mrt_status mrt_cpu_mean(mrt_op_ctx *ctx) { return run_variadic(ctx, add_fns, true); }

/* ------------------------------------------------------------------ Where */

typedef struct where_call {
    size_t esz;
    bool str;
    bool oom;
} where_call;

#define WHERE_LOOP(T)                                                                                          \
    do {                                                                                                       \
        T *o = (T *)out;                                                                                       \
        const T *x = (const T *)in[1], *y = (const T *)in[2];                                                  \
        if (step[0] && step[1] && step[2]) {                                                                   \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                                        \
        } else {                                                                                               \
            for (int64_t i = 0; i < n; i++) o[i] = c[i * step[0]] ? x[i * step[1]] : y[i * step[2]];        \
        }                                                                                                      \
    } while (0)

static void where_inner(void *user, void *out, const void *const *in, const int64_t *step, int64_t n)
{
    where_call *w = (where_call *)user;
    const uint8_t *c = (const uint8_t *)in[0];
    if (w->str) {
        char **o = (char **)out;
        const char *const *x = (const char *const *)in[1], *const *y = (const char *const *)in[2];
        for (int64_t i = 0; i < n; i++) {
            const char *s = c[i * step[0]] ? x[i * step[1]] : y[i * step[2]];
            o[i] = strdup(s ? s : "");
            if (!o[i]) w->oom = true;
        }
        return;
    }
    switch (w->esz) {
    case 1: WHERE_LOOP(uint8_t); break;
    case 2: WHERE_LOOP(uint16_t); break;
    case 4: WHERE_LOOP(uint32_t); break;
    case 8: WHERE_LOOP(uint64_t); break;
    default:
        for (int64_t i = 0; i < n; i++) {
            const char *src = c[i * step[0]] ? (const char *)in[1] + (size_t)(i * step[1]) * w->esz
                                             : (const char *)in[2] + (size_t)(i * step[2]) * w->esz;
            memcpy((char *)out + (size_t)i * w->esz, src, w->esz);
        }
        break;
    }
}

mrt_status mrt_cpu_where(mrt_op_ctx *ctx)
{
    const mrt_tensor *c = mrt_input(ctx, 0), *x = mrt_input(ctx, 1), *y = mrt_input(ctx, 2);
    mrt_tensor *out = mrt_output(ctx, 0);
    if (!out) return MRT_STATUS_OK;
    if (!c || !x || !y) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "an input is missing");
    int bits = mrt_dtype_bits(x->dtype);
    if (bits < 8 || bits % 8)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(x->dtype));
    where_call w = {(size_t)bits / 8, x->dtype == MRT_DTYPE_STRING, false};
    const mrt_tensor *in[3] = {c, x, y};
    mrt_ew_broadcast(3, in, out, where_inner, &w);
    if (w.oom) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory copying strings");
    return MRT_STATUS_OK;
}
