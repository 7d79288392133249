/* CPU kernels: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare (all versions), ArgMax/ArgMin
 * 1-13, CumSum 11/14. Floating types compute in double; integer Sum/Prod/SumSquare/L1/Max/Min are exact
 * (wrapping like the type), integer Mean/L2/LogSum/LogSumExp go through double and truncate. */
#include "ops_cpu/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/simd.h"

/* Elements converted per step: rows are processed in pieces of this size on the stack. */
#define CHUNK 512

/* ------------------------------------------------------------------ typed row conversion */

#define LOAD_LOOP(T, EXPR)                                                                                    \
    do {                                                                                                      \
        const T *p_ = (const T *)base + off;                                                                  \
        if (stride == 1) {                                                                                    \
            for (int64_t k = 0; k < n; k++) {                                                                 \
                T v = p_[k];                                                                                  \
                dst[k] = (EXPR);                                                                              \
            }                                                                                                 \
        } else {                                                                                              \
            for (int64_t k = 0; k < n; k++) {                                                                 \
                T v = p_[k * stride];                                                                         \
                dst[k] = (EXPR);                                                                              \
            }                                                                                                 \
        }                                                                                                     \
    } while (0)

void mrt_cpu_load_f64(mrt_dtype dt, const void *base, int64_t off, int64_t stride, int64_t n, double *dst)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: LOAD_LOOP(float, (double)v); break;
    case MRT_DTYPE_DOUBLE: LOAD_LOOP(double, v); break;
    case MRT_DTYPE_FLOAT16: LOAD_LOOP(uint16_t, (double)mrt_f16_to_f32(v)); break;
    case MRT_DTYPE_BFLOAT16: LOAD_LOOP(uint16_t, (double)mrt_bf16_to_f32(v)); break;
    case MRT_DTYPE_INT8: LOAD_LOOP(int8_t, (double)v); break;
    case MRT_DTYPE_UINT8: LOAD_LOOP(uint8_t, (double)v); break;
    case MRT_DTYPE_BOOL: LOAD_LOOP(uint8_t, v ? 1.0 : 0.0); break;
    case MRT_DTYPE_INT16: LOAD_LOOP(int16_t, (double)v); break;
    case MRT_DTYPE_UINT16: LOAD_LOOP(uint16_t, (double)v); break;
    case MRT_DTYPE_INT32: LOAD_LOOP(int32_t, (double)v); break;
    case MRT_DTYPE_UINT32: LOAD_LOOP(uint32_t, (double)v); break;
    case MRT_DTYPE_INT64: LOAD_LOOP(int64_t, (double)v); break;
    case MRT_DTYPE_UINT64: LOAD_LOOP(uint64_t, (double)v); break;
    default:
        for (int64_t k = 0; k < n; k++) dst[k] = mrt_load_f64(dt, base, off + k * stride);
    }
}

void mrt_cpu_load_i64(mrt_dtype dt, const void *base, int64_t off, int64_t stride, int64_t n, int64_t *dst)
{
    switch (dt) {
    case MRT_DTYPE_INT8: LOAD_LOOP(int8_t, (int64_t)v); break;
    case MRT_DTYPE_UINT8: LOAD_LOOP(uint8_t, (int64_t)v); break;
    case MRT_DTYPE_BOOL: LOAD_LOOP(uint8_t, v ? 1 : 0); break;
    case MRT_DTYPE_INT16: LOAD_LOOP(int16_t, (int64_t)v); break;
    case MRT_DTYPE_UINT16: LOAD_LOOP(uint16_t, (int64_t)v); break;
    case MRT_DTYPE_INT32: LOAD_LOOP(int32_t, (int64_t)v); break;
    case MRT_DTYPE_UINT32: LOAD_LOOP(uint32_t, (int64_t)v); break;
    case MRT_DTYPE_INT64: LOAD_LOOP(int64_t, v); break;
    case MRT_DTYPE_UINT64: LOAD_LOOP(uint64_t, (int64_t)v); break;
    default:
        for (int64_t k = 0; k < n; k++) dst[k] = mrt_load_i64(dt, base, off + k * stride);
    }
}

#define STORE_LOOP(T, EXPR)                                                                                   \
    do {                                                                                                      \
        T *p_ = (T *)base + off;                                                                              \
        for (int64_t k = 0; k < n; k++) {                                                                     \
            double v = src[k];                                                                                \
            p_[k * stride] = (EXPR);                                                                          \
        }                                                                                                     \
    } while (0)

/* Saturating double -> integer: out-of-range casts are undefined in C. */
#define SAT(T, LO, HI) (T)(v != v ? 0 : v <= (double)(LO) ? (LO) : v >= (double)(HI) ? (HI) : (T)v)

void mrt_cpu_store_f64(mrt_dtype dt, void *base, int64_t off, int64_t stride, int64_t n, const double *src)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: STORE_LOOP(float, (float)v); break;
    case MRT_DTYPE_DOUBLE: STORE_LOOP(double, v); break;
    case MRT_DTYPE_FLOAT16: STORE_LOOP(uint16_t, mrt_f32_to_f16((float)v)); break;
    case MRT_DTYPE_BFLOAT16: STORE_LOOP(uint16_t, mrt_f32_to_bf16((float)v)); break;
    case MRT_DTYPE_BOOL: STORE_LOOP(uint8_t, v != 0); break;
    case MRT_DTYPE_INT8: STORE_LOOP(int8_t, SAT(int8_t, INT8_MIN, INT8_MAX)); break;
    case MRT_DTYPE_UINT8: STORE_LOOP(uint8_t, SAT(uint8_t, 0, UINT8_MAX)); break;
    case MRT_DTYPE_INT16: STORE_LOOP(int16_t, SAT(int16_t, INT16_MIN, INT16_MAX)); break;
    case MRT_DTYPE_UINT16: STORE_LOOP(uint16_t, SAT(uint16_t, 0, UINT16_MAX)); break;
    case MRT_DTYPE_INT32: STORE_LOOP(int32_t, SAT(int32_t, INT32_MIN, INT32_MAX)); break;
    case MRT_DTYPE_UINT32: STORE_LOOP(uint32_t, SAT(uint32_t, 0, UINT32_MAX)); break;
    case MRT_DTYPE_INT64: STORE_LOOP(int64_t, SAT(int64_t, INT64_MIN, INT64_MAX)); break;
    case MRT_DTYPE_UINT64: STORE_LOOP(uint64_t, SAT(uint64_t, 0, UINT64_MAX)); break;
    default:
        for (int64_t k = 0; k < n; k++) mrt_store_f64(dt, base, off + k * stride, src[k]);
    }
}

void mrt_cpu_store_i64(mrt_dtype dt, void *base, int64_t off, int64_t stride, int64_t n, const int64_t *src)
{
#define STORE_I(T, EXPR)                                                                                      \
    do {                                                                                                      \
        T *p_ = (T *)base + off;                                                                              \
        for (int64_t k = 0; k < n; k++) {                                                                     \
            uint64_t v = (uint64_t)src[k];                                                                    \
            p_[k * stride] = (EXPR);                                                                          \
        }                                                                                                     \
    } while (0)
    switch (dt) {
    case MRT_DTYPE_BOOL: STORE_I(uint8_t, v != 0); break;
    case MRT_DTYPE_INT8: STORE_I(int8_t, (int8_t)(uint8_t)v); break;
    case MRT_DTYPE_UINT8: STORE_I(uint8_t, (uint8_t)v); break;
    case MRT_DTYPE_INT16: STORE_I(int16_t, (int16_t)(uint16_t)v); break;
    case MRT_DTYPE_UINT16: STORE_I(uint16_t, (uint16_t)v); break;
    case MRT_DTYPE_INT32: STORE_I(int32_t, (int32_t)(uint32_t)v); break;
    case MRT_DTYPE_UINT32: STORE_I(uint32_t, (uint32_t)v); break;
    case MRT_DTYPE_INT64: STORE_I(int64_t, (int64_t)v); break;
    case MRT_DTYPE_UINT64: STORE_I(uint64_t, v); break;
    default:
        for (int64_t k = 0; k < n; k++) mrt_store_i64(dt, base, off + k * stride, src[k]);
    }
#undef STORE_I
}

/* ------------------------------------------------------------------ reduction layout */

/* The input with size-1 dims dropped and neighbouring dims of the same kind (reduced or kept) merged:
   the walk below reads the input once, in order, in contiguous runs along the last merged dim. */
typedef struct rlayout {
    int n;
    int64_t dim[MRT_MAX_RANK];
    bool red[MRT_MAX_RANK];
    int64_t ostr[MRT_MAX_RANK]; /* output stride of each merged dim (0 when reduced) */
    int64_t numel, out_numel, count;
} rlayout;

static void rlayout_init(rlayout *L, int rank, const int64_t *shape, const bool *reduced)
{
    L->numel = L->out_numel = L->count = 1;
    L->n = 0;
    for (int a = 0; a < rank; a++) {
        L->numel *= shape[a];
        if (reduced[a]) L->count *= shape[a];
        else L->out_numel *= shape[a];
        if (shape[a] == 1) continue;
        if (L->n > 0 && L->red[L->n - 1] == reduced[a]) {
            L->dim[L->n - 1] *= shape[a];
        } else {
            L->dim[L->n] = shape[a];
            L->red[L->n] = reduced[a];
            L->n++;
        }
    }
    if (L->n == 0) {
        L->dim[0] = 1;
        L->red[0] = false;
        L->n = 1;
    }
    int64_t s = 1;
    for (int i = L->n - 1; i >= 0; i--) {
        L->ostr[i] = L->red[i] ? 0 : s;
        if (!L->red[i]) s *= L->dim[i];
    }
}

/* Called for each contiguous run of input elements [in_off, in_off + len): when inner_red the whole run
   reduces into output out_off, otherwise element k belongs to output out_off + k. */
typedef void (*run_fn)(void *user, int64_t in_off, int64_t out_off, int64_t len, bool inner_red);

static void rlayout_walk(const rlayout *L, run_fn fn, void *user)
{
    if (L->numel == 0) return;
    int n = L->n;
    int64_t len = L->dim[n - 1], rows = L->numel / len, obase = 0;
    int64_t idx[MRT_MAX_RANK] = {0};
    bool ired = L->red[n - 1];
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < len; c += CHUNK) {
            int64_t m = len - c < CHUNK ? len - c : CHUNK;
            fn(user, r * len + c, ired ? obase : obase + c, m, ired);
        }
        for (int d = n - 2; d >= 0; d--) {
            obase += L->ostr[d];
            if (++idx[d] < L->dim[d]) break;
            obase -= L->ostr[d] * L->dim[d];
            idx[d] = 0;
        }
    }
}

/* ------------------------------------------------------------------ double reductions */

enum { ACC_ADD, ACC_MUL, ACC_MAX, ACC_MIN };
enum { TF_ID, TF_SQ, TF_ABS, TF_EXP };

static int acc_of(mrt_reduce_kind k)
{
    switch (k) {
    case MRT_REDUCE_PROD: return ACC_MUL;
    case MRT_REDUCE_MAX: return ACC_MAX;
    case MRT_REDUCE_MIN: return ACC_MIN;
    default: return ACC_ADD;
    }
}

static int tf_of(mrt_reduce_kind k)
{
    switch (k) {
    case MRT_REDUCE_SUMSQ: case MRT_REDUCE_L2: return TF_SQ;
    case MRT_REDUCE_L1: return TF_ABS;
    case MRT_REDUCE_SUMEXP: return TF_EXP;
    default: return TF_ID;
    }
}

/* max/min that propagate NaN (numpy semantics): once the accumulator is NaN it stays NaN. */
static inline double max_nan(double acc, double v) { return (v > acc || v != v) ? v : acc; }
static inline double min_nan(double acc, double v) { return (v < acc || v != v) ? v : acc; }

static double identity_of(int acc)
{
    switch (acc) {
    case ACC_MUL: return 1.0;
    case ACC_MAX: return -INFINITY;
    case ACC_MIN: return INFINITY;
    default: return 0.0;
    }
}

static double empty_value(mrt_reduce_kind k)
{
    switch (k) {
    case MRT_REDUCE_PROD: return 1.0;
    case MRT_REDUCE_MEAN: return NAN;
    case MRT_REDUCE_MAX: case MRT_REDUCE_LOGSUM: case MRT_REDUCE_LOGSUMEXP: return -INFINITY;
    case MRT_REDUCE_MIN: return INFINITY;
    default: return 0.0;
    }
}

/* Sum of tf(x[k] - c) with four partial sums (shorter dependency chains, better rounding). */
static double seq_add(int tf, const double *x, int64_t m, double c)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t k = 0;
#define ADD4(EXPR)                                                                                            \
    for (; k + 4 <= m; k += 4) {                                                                              \
        double v;                                                                                             \
        v = x[k] - c; s0 += (EXPR);                                                                           \
        v = x[k + 1] - c; s1 += (EXPR);                                                                       \
        v = x[k + 2] - c; s2 += (EXPR);                                                                       \
        v = x[k + 3] - c; s3 += (EXPR);                                                                       \
    }                                                                                                         \
    for (; k < m; k++) {                                                                                      \
        double v = x[k] - c;                                                                                  \
        s0 += (EXPR);                                                                                         \
    }
    switch (tf) {
    case TF_ID: ADD4(v); break;
    case TF_SQ: ADD4(v * v); break;
    case TF_ABS: ADD4(fabs(v)); break;
    default: ADD4(exp(v)); break;
    }
#undef ADD4
    return (s0 + s1) + (s2 + s3);
}

static double seq_reduce(int acc, int tf, const double *x, int64_t m, double c)
{
    double r = identity_of(acc);
    switch (acc) {
    case ACC_ADD: return seq_add(tf, x, m, c);
    case ACC_MUL: for (int64_t k = 0; k < m; k++) r *= x[k]; return r;
    case ACC_MAX: for (int64_t k = 0; k < m; k++) r = max_nan(r, x[k]); return r;
    default: for (int64_t k = 0; k < m; k++) r = min_nan(r, x[k]); return r;
    }
}

typedef struct rstate {
    mrt_dtype dt;
    const void *data;
    int acc, tf;
    const double *center;
    double *out;
} rstate;

static void reduce_run(void *user, int64_t in_off, int64_t out_off, int64_t len, bool ired)
{
    rstate *s = user;
    double tmp[CHUNK];
    const double *x = tmp;
    if (s->dt == MRT_DTYPE_DOUBLE) x = (const double *)s->data + in_off;
    else mrt_cpu_load_f64(s->dt, s->data, in_off, 1, len, tmp);
    double *o = s->out + out_off;
    const double *c = s->center ? s->center + out_off : NULL;
    if (ired) {
        double r = seq_reduce(s->acc, s->tf, x, len, c ? c[0] : 0.0);
        switch (s->acc) {
        case ACC_ADD: o[0] += r; break;
        case ACC_MUL: o[0] *= r; break;
        case ACC_MAX: o[0] = max_nan(o[0], r); break;
        default: o[0] = min_nan(o[0], r); break;
        }
        return;
    }
    switch (s->acc) {
    case ACC_ADD:
        for (int64_t k = 0; k < len; k++) {
            double v = x[k] - (c ? c[k] : 0.0);
            switch (s->tf) {
            case TF_ID: break;
            case TF_SQ: v = v * v; break;
            case TF_ABS: v = fabs(v); break;
            default: v = exp(v); break;
            }
            o[k] += v;
        }
        break;
    case ACC_MUL: for (int64_t k = 0; k < len; k++) o[k] *= x[k]; break;
    case ACC_MAX: for (int64_t k = 0; k < len; k++) o[k] = max_nan(o[k], x[k]); break;
    default: for (int64_t k = 0; k < len; k++) o[k] = min_nan(o[k], x[k]); break;
    }
}

static void reduce_pass(const rlayout *L, mrt_dtype dt, const void *data, mrt_reduce_kind kind,
                        const double *center, double *out)
{
    rstate s = {dt, data, acc_of(kind), tf_of(kind), center, out};
    double id = identity_of(s.acc);
    for (int64_t o = 0; o < L->out_numel; o++) out[o] = id;
    rlayout_walk(L, reduce_run, &s);
}

mrt_status mrt_cpu_reduce_f64(mrt_dtype dt, int rank, const int64_t *shape, const void *data, const bool *reduced,
                              mrt_reduce_kind kind, const double *center, double *out, double *sum)
{
    rlayout L;
    rlayout_init(&L, rank, shape, reduced);
    int64_t on = L.out_numel;
    if (on == 0) return MRT_STATUS_OK;
    if (L.count == 0) {
        double e = empty_value(kind);
        for (int64_t o = 0; o < on; o++) out[o] = e;
        return MRT_STATUS_OK;
    }
    if (kind == MRT_REDUCE_LOGSUMEXP) {
        if (!sum) return mrt_fail(MRT_STATUS_INVALID_ARG, "ReduceLogSumExp needs scratch for its sums");
        reduce_pass(&L, dt, data, MRT_REDUCE_MAX, NULL, out);
        reduce_pass(&L, dt, data, MRT_REDUCE_SUMEXP, out, sum);
        for (int64_t o = 0; o < on; o++)
            if (isfinite(out[o])) out[o] += log(sum[o]);
        return MRT_STATUS_OK;
    }
    reduce_pass(&L, dt, data, kind, center, out);
    double cnt = (double)L.count;
    switch (kind) {
    case MRT_REDUCE_MEAN: for (int64_t o = 0; o < on; o++) out[o] /= cnt; break;
    case MRT_REDUCE_L2: for (int64_t o = 0; o < on; o++) out[o] = sqrt(out[o]); break;
    case MRT_REDUCE_LOGSUM: for (int64_t o = 0; o < on; o++) out[o] = log(out[o]); break;
    default: break;
    }
    return MRT_STATUS_OK;
}

typedef struct astate {
    mrt_dtype dx, dy;
    const void *x;
    void *y;
    const double *a, *b;
} astate;

static void affine_run(void *user, int64_t in_off, int64_t out_off, int64_t len, bool ired)
{
    astate *s = user;
    double tmp[CHUNK];
    mrt_cpu_load_f64(s->dx, s->x, in_off, 1, len, tmp);
    if (ired) {
        double a = s->a[out_off], b = s->b[out_off];
        for (int64_t k = 0; k < len; k++) tmp[k] = tmp[k] * a + b;
    } else {
        const double *a = s->a + out_off, *b = s->b + out_off;
        for (int64_t k = 0; k < len; k++) tmp[k] = tmp[k] * a[k] + b[k];
    }
    mrt_cpu_store_f64(s->dy, s->y, in_off, 1, len, tmp);
}

void mrt_cpu_affine_f64(mrt_dtype dt_x, int rank, const int64_t *shape, const void *x, const bool *reduced,
                        const double *a, const double *b, mrt_dtype dt_y, void *y)
{
    rlayout L;
    rlayout_init(&L, rank, shape, reduced);
    astate s = {dt_x, dt_y, x, y, a, b};
    rlayout_walk(&L, affine_run, &s);
}

/* ------------------------------------------------------------------ exact integer reductions */

static bool is_float4(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

static bool is_unsigned(mrt_dtype dt)
{
    return dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_UINT16 || dt == MRT_DTYPE_UINT32 || dt == MRT_DTYPE_UINT64 ||
           dt == MRT_DTYPE_BOOL;
}

typedef struct istate {
    mrt_dtype dt;
    const void *data;
    mrt_reduce_kind kind;
    uint64_t *out; /* two's complement bits: wrapping arithmetic is the same for signed and unsigned */
} istate;

static inline uint64_t imax(mrt_dtype dt, uint64_t a, uint64_t b)
{
    if (dt == MRT_DTYPE_UINT64) return b > a ? b : a;
    return (int64_t)b > (int64_t)a ? b : a;
}

static inline uint64_t imin(mrt_dtype dt, uint64_t a, uint64_t b)
{
    if (dt == MRT_DTYPE_UINT64) return b < a ? b : a;
    return (int64_t)b < (int64_t)a ? b : a;
}

static void int_run(void *user, int64_t in_off, int64_t out_off, int64_t len, bool ired)
{
    istate *s = user;
    int64_t tmp[CHUNK];
    mrt_cpu_load_i64(s->dt, s->data, in_off, 1, len, tmp);
    bool uns = is_unsigned(s->dt);
    for (int64_t k = 0; k < len; k++) {
        uint64_t v = (uint64_t)tmp[k];
        uint64_t *o = s->out + (ired ? out_off : out_off + k);
        switch (s->kind) {
        case MRT_REDUCE_PROD: *o *= v; break;
        case MRT_REDUCE_SUMSQ: *o += v * v; break;
        case MRT_REDUCE_L1: *o += (!uns && tmp[k] < 0) ? (uint64_t)0 - v : v; break;
        case MRT_REDUCE_MAX: *o = imax(s->dt, *o, v); break;
        case MRT_REDUCE_MIN: *o = imin(s->dt, *o, v); break;
        default: *o += v; break;
        }
    }
}

static bool exact_int_kind(mrt_reduce_kind k)
{
    return k == MRT_REDUCE_SUM || k == MRT_REDUCE_PROD || k == MRT_REDUCE_SUMSQ || k == MRT_REDUCE_L1 ||
           k == MRT_REDUCE_MAX || k == MRT_REDUCE_MIN;
}

static mrt_status reduce_int(const mrt_tensor *x, const bool *reduced, mrt_reduce_kind kind, mrt_tensor *y,
                             uint64_t *acc)
{
    rlayout L;
    rlayout_init(&L, x->rank, x->shape, reduced);
    int64_t on = L.out_numel;
    if (L.count == 0) {
        /* empty max/min: the type's min/max (saturation does it), false/true for bool */
        double e = kind == MRT_REDUCE_MAX && x->dtype == MRT_DTYPE_BOOL ? 0.0 : empty_value(kind);
        for (int64_t o = 0; o < on; o++) mrt_cpu_store_f64(y->dtype, y->data, o, 1, 1, &e);
        return MRT_STATUS_OK;
    }
    uint64_t init = 0;
    if (kind == MRT_REDUCE_PROD) init = 1;
    else if (kind == MRT_REDUCE_MAX) init = is_unsigned(x->dtype) ? 0 : (uint64_t)INT64_MIN;
    else if (kind == MRT_REDUCE_MIN) init = x->dtype == MRT_DTYPE_UINT64 ? UINT64_MAX : (uint64_t)INT64_MAX;
    for (int64_t o = 0; o < on; o++) acc[o] = init;
    istate s = {x->dtype, x->data, kind, acc};
    rlayout_walk(&L, int_run, &s);
    mrt_cpu_store_i64(y->dtype, y->data, 0, 1, on, (const int64_t *)acc);
    return MRT_STATUS_OK;
}

/* The accumulators and LogSumExp's sums: one 8-byte value per output element each */
static void reduce_workspace_counts(const mrt_tensor *y, int64_t counts[2]) { counts[0] = counts[1] = mrt_tensor_numel(y); }

static mrt_status mrt_cpu_reduce_workspace(mrt_op_ctx *ctx)
{
    int64_t counts[2];
    reduce_workspace_counts(mrt_output(ctx, 0), counts);
    return mrt_workspace_request_parts(ctx, 2, counts, sizeof(double));
}

/* ReduceSum/ReduceMean of float rows into float, the reduced axes trailing (a global average written as ReduceMean,
   MnasNet's 1280 rows of 49): rows of at most CHUNK go to the walk's callback one by one, and its conversions and
   calls took 20 us there (ONNX Runtime 7). Here four rows at a time, each as mrt_cpu_reduce_f64 sums it (seq_add's
   four partial sums in double, element k into part k % 4, the last len % 4 into part 0, then (s0 + s1) + (s2 + s3),
   added to the identity 0, then / count for the mean), so the same bits; the four rows' sixteen chains overlap. */
MRT_VECTORIZE_CLONES
static void reduce_rows_f32(const float *x, float *y, int64_t rows, int64_t len, bool mean)
{
    double cnt = (double)len;
    int64_t r = 0, q = len / 4 * 4;
    for (; r + 4 <= rows; r += 4) {
        double s[4][4] = {{0}};
        const float *xr = x + r * len;
        for (int64_t k = 0; k < q; k += 4)
            for (int i = 0; i < 4; i++)
                for (int p = 0; p < 4; p++) s[i][p] += (double)xr[i * len + k + p];
        for (int i = 0; i < 4; i++) {
            for (int64_t k = q; k < len; k++) s[i][0] += (double)xr[i * len + k];
            double v = 0.0 + ((s[i][0] + s[i][1]) + (s[i][2] + s[i][3]));
            y[r + i] = (float)(mean ? v / cnt : v);
        }
    }
    for (; r < rows; r++) {
        double s[4] = {0};
        const float *xr = x + r * len;
        for (int64_t k = 0; k < q; k += 4)
            for (int p = 0; p < 4; p++) s[p] += (double)xr[k + p];
        for (int64_t k = q; k < len; k++) s[0] += (double)xr[k];
        double v = 0.0 + ((s[0] + s[1]) + (s[2] + s[3]));
        y[r] = (float)(mean ? v / cnt : v);
    }
}

/* the rows reduce_rows_f32 takes: float in and out, Sum or Mean, the merged layout [kept, reduced] with rows of at
   most CHUNK (longer ones the walk sums chunk by chunk) */
static bool reduce_rows_ok(const mrt_tensor *x, const mrt_tensor *y, const bool *reduced, int kind, int64_t *rows,
                           int64_t *len)
{
    if (x->dtype != MRT_DTYPE_FLOAT || y->dtype != MRT_DTYPE_FLOAT) return false;
    if (kind != MRT_REDUCE_SUM && kind != MRT_REDUCE_MEAN) return false;
    rlayout L;
    rlayout_init(&L, x->rank, x->shape, reduced);
    if (L.n != 2 || L.red[0] || !L.red[1] || L.dim[1] < 1 || L.dim[1] > CHUNK) return false;
    *rows = L.dim[0], *len = L.dim[1];
    return true;
}

static mrt_status mrt_cpu_reduce(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int kind = mrt_reduce_kind_of(ctx->node->op_type);
    if (kind < 0) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "not a Reduce op");
    bool reduced[MRT_MAX_RANK], pending;
    MRT_TRY(mrt_reduce_axes(ctx, x, reduced, &pending));
    if (pending) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'axes' has no data");
    int64_t on = mrt_tensor_numel(y);
    if (on == 0) return MRT_STATUS_OK;
    int64_t counts[2];
    reduce_workspace_counts(y, counts);
    void *part[2];
    if (!mrt_workspace_parts(ctx, 2, counts, sizeof(double), part)) return MRT_STATUS_OUT_OF_MEMORY;
    if (!is_float4(x->dtype) && exact_int_kind((mrt_reduce_kind)kind))
        return reduce_int(x, reduced, (mrt_reduce_kind)kind, y, part[0]);
    int64_t rows, len;
    if (reduce_rows_ok(x, y, reduced, kind, &rows, &len)) {
        reduce_rows_f32(x->data, y->data, rows, len, kind == MRT_REDUCE_MEAN);
        return MRT_STATUS_OK;
    }
    double *acc = y->dtype == MRT_DTYPE_DOUBLE ? y->data : part[0];
    MRT_TRY(mrt_cpu_reduce_f64(x->dtype, x->rank, x->shape, x->data, reduced, (mrt_reduce_kind)kind, NULL, acc,
                               part[1]));
    if (acc != y->data) mrt_cpu_store_f64(y->dtype, y->data, 0, 1, on, acc);
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ ArgMax / ArgMin */

static void split3(const mrt_tensor *x, int axis, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = *inner = 1;
    for (int a = 0; a < axis; a++) *outer *= x->shape[a];
    for (int a = axis + 1; a < x->rank; a++) *inner *= x->shape[a];
    *n = x->shape[axis];
}

/* Does v (at a later index) replace the current best b? A NaN wins and then stays, like numpy's argmax. */
static inline bool arg_better_f(double v, double b, bool is_max, bool last)
{
    if (v != v) return b == b || last;
    if (b != b) return false;
    return (is_max ? v > b : v < b) || (last && v == b);
}

static inline bool arg_better_i(int64_t v, int64_t b, bool u64, bool is_max, bool last)
{
    bool gt = u64 ? (uint64_t)v > (uint64_t)b : v > b, lt = u64 ? (uint64_t)v < (uint64_t)b : v < b;
    return (is_max ? gt : lt) || (last && v == b);
}

static mrt_status mrt_cpu_argmax(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool is_max = strcmp(ctx->node->op_type, "ArgMax") == 0;
    bool last = ctx->opset >= 12 && mrt_attr_int(ctx, "select_last_index", 0) != 0;
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "attribute 'axis'", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    int64_t outer, n, inner;
    split3(x, axis, &outer, &n, &inner);
    if (outer * inner == 0) return MRT_STATUS_OK;
    if (n == 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "cannot take %s over an axis of size 0", ctx->node->op_type);
    int64_t *out = y->data;
    bool fl = is_float4(x->dtype), u64 = x->dtype == MRT_DTYPE_UINT64;
    double bf[CHUNK], vf[CHUNK];
    int64_t bi[CHUNK], vi[CHUNK];
    if (inner == 1) {
        /* the axis is contiguous: scan it in chunks */
        for (int64_t o = 0; o < outer; o++) {
            int64_t best = 0;
            for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
                int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
                if (fl) mrt_cpu_load_f64(x->dtype, x->data, o * n + i0, 1, m, vf);
                else mrt_cpu_load_i64(x->dtype, x->data, o * n + i0, 1, m, vi);
                for (int64_t k = 0; k < m; k++) {
                    bool take = i0 + k == 0 || (fl ? arg_better_f(vf[k], bf[0], is_max, last)
                                                   : arg_better_i(vi[k], bi[0], u64, is_max, last));
                    if (take) {
                        if (fl) bf[0] = vf[k];
                        else bi[0] = vi[k];
                        best = i0 + k;
                    }
                }
            }
            out[o] = best;
        }
        return MRT_STATUS_OK;
    }
    /* otherwise keep a running best for a chunk of the inner positions while walking the axis */
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j0 = 0; j0 < inner; j0 += CHUNK) {
            int64_t m = inner - j0 < CHUNK ? inner - j0 : CHUNK;
            int64_t *idx = out + o * inner + j0;
            for (int64_t i = 0; i < n; i++) {
                int64_t off = (o * n + i) * inner + j0;
                if (fl) mrt_cpu_load_f64(x->dtype, x->data, off, 1, m, vf);
                else mrt_cpu_load_i64(x->dtype, x->data, off, 1, m, vi);
                for (int64_t k = 0; k < m; k++) {
                    bool take = i == 0 || (fl ? arg_better_f(vf[k], bf[k], is_max, last)
                                              : arg_better_i(vi[k], bi[k], u64, is_max, last));
                    if (take) {
                        if (fl) bf[k] = vf[k];
                        else bi[k] = vi[k];
                        idx[k] = i;
                    }
                }
            }
        }
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ CumSum */

static mrt_status mrt_cpu_cumsum(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t av, na;
    int axis;
    MRT_TRY(mrt_tensor_read_ints(ctx, "input 'axis'", mrt_input(ctx, 1), &av, 1, &na));
    if (na != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'axis' must hold one value");
    MRT_TRY(mrt_normalize_axis(ctx, "input 'axis'", av, x->rank, &axis));
    bool excl = mrt_attr_int(ctx, "exclusive", 0) != 0, rev = mrt_attr_int(ctx, "reverse", 0) != 0;
    int64_t outer, n, inner;
    split3(x, axis, &outer, &n, &inner);
    bool fl = is_float4(x->dtype);
    if (inner == 1) {
        /* the axis is contiguous: run along it in chunks (from the end when reverse) */
        for (int64_t o = 0; o < outer; o++) {
            double sf = 0, vf[CHUNK];
            uint64_t si = 0;
            int64_t vi[CHUNK];
            for (int64_t c = 0; c < n; c += CHUNK) {
                int64_t m = n - c < CHUNK ? n - c : CHUNK, off = o * n + (rev ? n - c - m : c);
                if (fl) mrt_cpu_load_f64(x->dtype, x->data, off, 1, m, vf);
                else mrt_cpu_load_i64(x->dtype, x->data, off, 1, m, vi);
                for (int64_t t = 0; t < m; t++) {
                    int64_t k = rev ? m - 1 - t : t;
                    if (fl) {
                        double v = vf[k];
                        vf[k] = excl ? sf : sf + v;
                        sf += v;
                    } else {
                        uint64_t v = (uint64_t)vi[k];
                        vi[k] = (int64_t)(excl ? si : si + v);
                        si += v;
                    }
                }
                if (fl) mrt_cpu_store_f64(y->dtype, y->data, off, 1, m, vf);
                else mrt_cpu_store_i64(y->dtype, y->data, off, 1, m, vi);
            }
        }
        return MRT_STATUS_OK;
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j0 = 0; j0 < inner; j0 += CHUNK) {
            int64_t m = inner - j0 < CHUNK ? inner - j0 : CHUNK;
            double sf[CHUNK], vf[CHUNK];
            uint64_t si[CHUNK];
            int64_t vi[CHUNK];
            for (int64_t k = 0; k < m; k++) {
                sf[k] = 0;
                si[k] = 0;
            }
            for (int64_t t = 0; t < n; t++) {
                int64_t i = rev ? n - 1 - t : t;
                int64_t off = (o * n + i) * inner + j0;
                if (fl) {
                    mrt_cpu_load_f64(x->dtype, x->data, off, 1, m, vf);
                    for (int64_t k = 0; k < m; k++) {
                        double v = vf[k];
                        vf[k] = excl ? sf[k] : sf[k] + v;
                        sf[k] += v;
                    }
                    mrt_cpu_store_f64(y->dtype, y->data, off, 1, m, vf);
                } else {
                    mrt_cpu_load_i64(x->dtype, x->data, off, 1, m, vi);
                    for (int64_t k = 0; k < m; k++) {
                        uint64_t v = (uint64_t)vi[k];
                        vi[k] = (int64_t)(excl ? si[k] : si[k] + v);
                        si[k] += v;
                    }
                    mrt_cpu_store_i64(y->dtype, y->data, off, 1, m, vi);
                }
            }
        }
    }
    return MRT_STATUS_OK;
}

#define K_ATTR(op, v) {"", op, v, mrt_cpu_reduce, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_reduce_workspace}
#define K_ROWS(op) K_ATTR(op, 1), K_ATTR(op, 11), K_ATTR(op, 13), K_ATTR(op, 18)

const mrt_kernel mrt_cpu_kernels_reduce[] = {
    K_ATTR("ReduceSum", 1), K_ATTR("ReduceSum", 11), K_ATTR("ReduceSum", 13),
    K_ROWS("ReduceMean"),
    K_ROWS("ReduceProd"),
    K_ROWS("ReduceL1"),
    K_ROWS("ReduceL2"),
    K_ROWS("ReduceSumSquare"),
    K_ROWS("ReduceLogSum"), K_ATTR("ReduceLogSum", 28),
    K_ROWS("ReduceLogSumExp"), K_ATTR("ReduceLogSumExp", 28),
    K_ROWS("ReduceMax"), K_ATTR("ReduceMax", 12), K_ATTR("ReduceMax", 20),
    K_ROWS("ReduceMin"), K_ATTR("ReduceMin", 12), K_ATTR("ReduceMin", 20),
    {"", "ArgMax", 1, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMax", 11, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMax", 12, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMax", 13, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMin", 1, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMin", 11, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMin", 12, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "ArgMin", 13, mrt_cpu_argmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {"", "CumSum", 11, mrt_cpu_cumsum, NULL},
    {"", "CumSum", 14, mrt_cpu_cumsum, NULL},
    {0},
};
