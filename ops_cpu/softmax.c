/* CPU kernels: Softmax, LogSoftmax, Hardmax 1/11/13 (float16, bfloat16, float, double), computed in double
 * on blocks of the [outer, n, inner] view, numerically stable (the max along the axis is subtracted). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/reduce.h"
#include "ops_cpu/simd.h"
#include "ops_cpu/vmath.h"

enum { SM_SOFTMAX, SM_LOG, SM_HARD };

/* The double path works on [n, J] blocks of at most SOFTMAX_BLOCK doubles (J columns of the inner axis at a time) */
#define SOFTMAX_BLOCK 8192
static int64_t softmax_block_cols(int64_t n, int64_t inner)
{
    return n * inner > SOFTMAX_BLOCK ? (SOFTMAX_BLOCK / n > 0 ? SOFTMAX_BLOCK / n : 1) : inner;
}

static int softmax_kind(const mrt_op_ctx *ctx)
{
    const char *op = ctx->node->op_type;
    return strcmp(op, "Softmax") == 0 ? SM_SOFTMAX : strcmp(op, "LogSoftmax") == 0 ? SM_LOG : SM_HARD;
}

/* float32 Softmax/LogSoftmax over a contiguous axis runs row by row, without a block */
static bool softmax_by_rows(mrt_dtype dt, int kind, int64_t inner)
{
    return dt == MRT_DTYPE_FLOAT && inner == 1 && kind != SM_HARD;
}

/* Bytes of the double path's workspace: a block, two J-vectors of doubles and J indices; 0 when it is not taken. */
static size_t softmax_workspace_bytes(mrt_dtype dt, int kind, int64_t outer, int64_t n, int64_t inner)
{
    if (outer == 0 || n == 0 || inner == 0 || softmax_by_rows(dt, kind, inner)) return 0;
    int64_t j = softmax_block_cols(n, inner);
    return (size_t)(n * j + 2 * j) * sizeof(double) + (size_t)j * sizeof(int64_t);
}

static void block_softmax(int kind, double *buf, int64_t n, int64_t m, double *mx, double *sm, int64_t *idx)
{
    for (int64_t k = 0; k < m; k++) {
        mx[k] = buf[k];
        idx[k] = 0;
    }
    for (int64_t i = 1; i < n; i++) {
        const double *row = buf + i * m;
        for (int64_t k = 0; k < m; k++) {
            double v = row[k], b = mx[k];
            /* first maximum; a NaN wins (and stays), as numpy's argmax/max do */
            if (b == b && (v > b || v != v)) {
                mx[k] = v;
                idx[k] = i;
            }
        }
    }
    if (kind == SM_HARD) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++) buf[i * m + k] = idx[k] == i ? 1.0 : 0.0;
        return;
    }
    for (int64_t k = 0; k < m; k++) sm[k] = 0;
    for (int64_t i = 0; i < n; i++) {
        double *row = buf + i * m;
        if (kind == SM_SOFTMAX) {
            for (int64_t k = 0; k < m; k++) {
                row[k] = exp(row[k] - mx[k]);
                sm[k] += row[k];
            }
        } else {
            for (int64_t k = 0; k < m; k++) sm[k] += exp(row[k] - mx[k]);
        }
    }
    if (kind == SM_SOFTMAX) {
        for (int64_t k = 0; k < m; k++) sm[k] = 1.0 / sm[k];
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++) buf[i * m + k] *= sm[k];
    } else {
        /* (x - max) is exact for nearby values; subtracting max + log(sum) at once would round at the
           magnitude of max */
        for (int64_t k = 0; k < m; k++) sm[k] = log(sm[k]);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++) buf[i * m + k] = (buf[i * m + k] - mx[k]) - sm[k];
    }
}

/* float over the last axis (inner == 1; attention scores, classifier heads): rows are contiguous, so work in
   place in y without the double block. The exps and their sum in one pass (mrt_vexp_sum_f32: mrt_vexp_f32's exp,
   within 1 ulp; the sum in double over 8 fixed partial sums, which vectorizes without reordering anything that
   depends on the thread count). Rows are independent: they are split over the session's threads. */
typedef struct sm_rows {
    int kind;
    const float *x;
    float *y;
    int64_t n;
} sm_rows;

/* The row's maximum: on AVX-512 as 16 running maxima (maxps keeps the second operand unless the first compares
   greater, the rule of `mx = x > mx ? x : mx`) combined at the end; GCC left that single running maximum scalar
   (63% of Whisper's Softmax time). Only a zero maximum can come out with another sign than the scalar loop's, and
   that sign reaches no result: x - max differs only for x = -0 and max = +/-0, where exp gives 1 either way and
   LogSoftmax subtracts log(sum) >= log 2 (two zeros). Sets *nan when the row holds a NaN. */
#ifdef MRT_HAVE_AVX512_INTRINSICS
__attribute__((target("avx512f"))) static float row_max_avx512(const float *x, int64_t n, bool *nan)
{
    __m512 m = _mm512_set1_ps(x[0]);
    __mmask16 bad = 0;
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        bad |= _mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q);
        m = _mm512_mask_max_ps(m, k, v, m);
    }
    _Alignas(64) float lane[16];
    _mm512_store_ps(lane, m);
    float mx = lane[0];
    for (int k = 1; k < 16; k++) mx = lane[k] > mx ? lane[k] : mx;
    *nan = bad != 0;
    return mx;
}
#endif

static float row_max(const float *x, int64_t n, bool *nan)
{
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (mrt_cpu_has_avx512f()) return row_max_avx512(x, n, nan);
#endif
    float mx = x[0];
    bool any = false;
    for (int64_t i = 0; i < n; i++) {
        any |= x[i] != x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    *nan = any;
    return mx;
}

MRT_VECTORIZE_CLONES
static void softmax_rows_f32(void *arg, int64_t r0, int64_t r1)
{
    const sm_rows *a = (const sm_rows *)arg;
    int64_t n = a->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = a->x + r * n;
        float *yr = a->y + r * n;
        bool nan;
        float mx = row_max(xr, n, &nan);
        if (nan) { /* NaN in, NaN out (as the double path) */
            for (int64_t i = 0; i < n; i++) yr[i] = NAN;
            continue;
        }
        if (a->kind == SM_LOG && yr == xr) {
            /* in place, LogSoftmax still needs x after the exps: take the sum through a small block */
            double part[8] = {0};
            float t[256];
            for (int64_t i0 = 0; i0 < n; i0 += 256) {
                int64_t m = n - i0 < 256 ? n - i0 : 256;
                for (int64_t i = 0; i < m; i++) t[i] = xr[i0 + i] - mx;
                mrt_vexp_f32(t, t, m);
                for (int64_t i = 0; i < m; i++) part[(i0 + i) & 7] += t[i];
            }
            float ls = (float)log(mrt_fold8_f64(part));
            for (int64_t i = 0; i < n; i++) yr[i] = (xr[i] - mx) - ls;
            continue;
        }
        /* the exps go to y first (for LogSoftmax too: y is overwritten after the sum) */
        double sum = mrt_vexp_sum_f32_fetch(yr, xr, mx, n, r + 1 < r1 ? xr + n : NULL);
        if (a->kind == SM_SOFTMAX) {
            float inv = (float)(1.0 / sum);
            for (int64_t j = 0; j < n; j++) yr[j] *= inv;
        } else {
            float ls = (float)log(sum);
            for (int64_t j = 0; j < n; j++) yr[j] = (xr[j] - mx) - ls;
        }
    }
}

static mrt_status mrt_cpu_softmax(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int kind = softmax_kind(ctx);
    int64_t outer, n, inner;
    MRT_TRY(mrt_softmax_view(ctx, x, &outer, &n, &inner));
    if (outer == 0 || n == 0 || inner == 0) return MRT_STATUS_OK;
    if (softmax_by_rows(x->dtype, kind, inner)) {
        sm_rows a = {kind, x->data, y->data, n};
        int64_t grain = 8192 / n > 1 ? 8192 / n : 1; /* rows per range: at least ~32 KB of work */
        mrt_parallel_for(ctx, outer, grain, softmax_rows_f32, &a);
        return MRT_STATUS_OK;
    }
    int64_t J = softmax_block_cols(n, inner);
    double *buf = mrt_workspace(ctx, softmax_workspace_bytes(x->dtype, kind, outer, n, inner));
    if (!buf) return MRT_STATUS_OUT_OF_MEMORY;
    double *mx = buf + n * J, *sm = mx + J;
    int64_t *idx = (int64_t *)(sm + J);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j0 = 0; j0 < inner; j0 += J) {
            int64_t m = inner - j0 < J ? inner - j0 : J;
            int64_t base = o * n * inner + j0;
            /* the whole [n, inner] block is contiguous when it fits; one column is a strided run */
            if (m == inner || m == 1) {
                mrt_cpu_load_f64(x->dtype, x->data, base, m == 1 ? inner : 1, n * m, buf);
            } else {
                for (int64_t i = 0; i < n; i++)
                    mrt_cpu_load_f64(x->dtype, x->data, base + i * inner, 1, m, buf + i * m);
            }
            block_softmax(kind, buf, n, m, mx, sm, idx);
            if (m == inner || m == 1) {
                mrt_cpu_store_f64(y->dtype, y->data, base, m == 1 ? inner : 1, n * m, buf);
            } else {
                for (int64_t i = 0; i < n; i++)
                    mrt_cpu_store_f64(y->dtype, y->data, base + i * inner, 1, m, buf + i * m);
            }
        }
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_softmax_workspace(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t outer, n, inner;
    MRT_TRY(mrt_softmax_view(ctx, x, &outer, &n, &inner));
    mrt_workspace_request(ctx, softmax_workspace_bytes(x->dtype, softmax_kind(ctx), outer, n, inner));
    return MRT_STATUS_OK;
}

#define SOFTMAX_ROWS(op)                                                                                      \
    {"", op, 1, mrt_cpu_softmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_softmax_workspace},             \
        {"", op, 11, mrt_cpu_softmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_softmax_workspace},        \
        {"", op, 13, mrt_cpu_softmax, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_softmax_workspace}

const mrt_kernel mrt_cpu_kernels_softmax[] = {
    SOFTMAX_ROWS("Softmax"),
    SOFTMAX_ROWS("LogSoftmax"),
    SOFTMAX_ROWS("Hardmax"),
    {0},
};
