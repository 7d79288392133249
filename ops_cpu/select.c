/* CPU kernels: TopK (1, 10, 11, 24; ties keep the lower index first; NaN counts as the largest value),
   CumProd (26), Shrink (9), BitCast (26, equal widths). Values go through the dtype helpers in double/int64, exact
   for every integer type (uint64 compared as unsigned). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"

typedef struct keyed {
    double f;
    int64_t i;
    uint64_t u;
    int64_t index;
} keyed;

typedef struct sort_order {
    int kind;    /* 0 float, 1 signed, 2 unsigned */
    bool largest;
} sort_order;

static int cmp_keyed(const keyed *a, const keyed *b, const sort_order *o)
{
    int c;
    if (o->kind == 0) {
        bool na = isnan(a->f), nb = isnan(b->f);
        c = na || nb ? (na - nb) : (a->f > b->f) - (a->f < b->f);
    } else if (o->kind == 1) {
        c = (a->i > b->i) - (a->i < b->i);
    } else {
        c = (a->u > b->u) - (a->u < b->u);
    }
    if (o->largest) c = -c;
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Merge sort (qsort has no context argument in C11). */
static void sort_keyed(keyed *v, keyed *tmp, int64_t n, const sort_order *o)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = cmp_keyed(&v[b], &v[a], o) < 0 ? v[b++] : v[a++];
            while (a < mid) tmp[k++] = v[a++];
            while (b < hi) tmp[k++] = v[b++];
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

static mrt_status mrt_cpu_topk(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *v = mrt_output(ctx, 0), *ix = mrt_output(ctx, 1);
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", -1), x->rank, &axis));
    int64_t k = v->shape[axis], len = x->shape[axis], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    sort_order ord = {mrt_dtype_is_float(x->dtype) ? 0 : x->dtype == MRT_DTYPE_UINT64 ? 2 : 1,
                      mrt_attr_int(ctx, "largest", 1) != 0};
    /* sorted=0 allows any order: sorted output is a valid choice */
    keyed *buf = malloc((size_t)(len ? len : 1) * sizeof *buf), *tmp = malloc((size_t)(len ? len : 1) * sizeof *tmp);
    if (!buf || !tmp) {
        free(buf);
        free(tmp);
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            for (int64_t j = 0; j < len; j++) {
                int64_t at = (o * len + j) * inner + in;
                buf[j].index = j;
                if (ord.kind == 0) buf[j].f = mrt_load_f64(x->dtype, x->data, at);
                else if (ord.kind == 1) buf[j].i = mrt_load_i64(x->dtype, x->data, at);
                else buf[j].u = ((const uint64_t *)x->data)[at];
            }
            sort_keyed(buf, tmp, len, &ord);
            for (int64_t j = 0; j < k; j++) {
                int64_t src = (o * len + buf[j].index) * inner + in, dst = (o * k + j) * inner + in;
                size_t esz = (size_t)mrt_dtype_bits(x->dtype) / 8;
                memcpy((char *)v->data + (size_t)dst * esz, (const char *)x->data + (size_t)src * esz, esz);
                if (ix) ((int64_t *)ix->data)[dst] = buf[j].index;
            }
        }
    free(buf);
    free(tmp);
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_cumprod(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *at = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!at || mrt_tensor_numel(at) != 1 || (at->dtype != MRT_DTYPE_INT32 && at->dtype != MRT_DTYPE_INT64))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "'axis' must be one int32/int64 value");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_load_i64(at->dtype, at->data, 0), x->rank, &axis));
    bool exclusive = mrt_attr_int(ctx, "exclusive", 0) != 0, reverse = mrt_attr_int(ctx, "reverse", 0) != 0;
    bool fl = mrt_dtype_is_float(x->dtype);
    int64_t len = x->shape[axis], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double pf = 1;
            int64_t pi = 1;
            for (int64_t s = 0; s < len; s++) {
                int64_t j = reverse ? len - 1 - s : s, idx = (o * len + j) * inner + in;
                if (exclusive) {
                    if (fl) mrt_store_f64(y->dtype, y->data, idx, pf);
                    else mrt_store_i64(y->dtype, y->data, idx, pi);
                }
                if (fl) pf *= mrt_load_f64(x->dtype, x->data, idx);
                else pi = (int64_t)((uint64_t)pi * (uint64_t)mrt_load_i64(x->dtype, x->data, idx)); /* wraps */
                if (!exclusive) {
                    if (fl) mrt_store_f64(y->dtype, y->data, idx, pf);
                    else mrt_store_i64(y->dtype, y->data, idx, pi);
                }
            }
        }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_shrink(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    double bias = mrt_attr_float(ctx, "bias", 0.0f), lambd = mrt_attr_float(ctx, "lambd", 0.5f);
    int64_t n = mrt_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v = mrt_load_f64(x->dtype, x->data, i), r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
        if (mrt_dtype_is_float(x->dtype)) mrt_store_f64(y->dtype, y->data, i, r);
        else mrt_store_i64(y->dtype, y->data, i, (int64_t)r);
    }
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_bitcast(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    memcpy(mrt_output(ctx, 0)->data, x->data, mrt_tensor_nbytes(x));
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_select[] = {
    {"", "TopK", 1, mrt_cpu_topk, NULL},
    {"", "CumProd", 26, mrt_cpu_cumprod, NULL},
    {"", "Shrink", 9, mrt_cpu_shrink, NULL},
    {"", "BitCast", 26, mrt_cpu_bitcast, NULL},
    {0},
};
