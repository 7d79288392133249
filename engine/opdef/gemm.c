/* Opdefs: Gemm 1/6/7/9/11/13 (C broadcast unidirectionally; opset < 7 'broadcast'=0 needs C of [M, N]),
 * MatMul 1/9/13 (numpy semantics), MatMulInteger 10 (scalar, per-row/per-column zero points). */
#include <string.h>

#include "engine/opdef/conv.h"
#include "engine/registry.h"

static const mrt_tensor *need_input(const mrt_op_ctx *ctx, int i, const char *name, mrt_status *st)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    *st = t ? MRT_STATUS_OK
            : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d ('%s') is missing or not a tensor", i, name);
    return t;
}

static const char *shp(const mrt_tensor *t, char *buf, size_t len)
{
    return mrt_shape_describe(t->rank, t->shape, buf, len);
}

/* Float types always; the 32/64-bit integer types from opset 9. */
static bool gemm_dtype_ok(mrt_dtype dt, int64_t opset)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16:
        return true;
    case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64:
        return opset >= 9;
    default:
        return false;
    }
}

static mrt_status same_dtype_pair(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b)
{
    if (!gemm_dtype_ok(a->dtype, ctx->opset))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input 'A' has dtype %s, which %s (opset %lld) does not take",
                           mrt_dtype_name(a->dtype), ctx->node->op_type, (long long)ctx->opset);
    if (b->dtype != a->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'B' has dtype %s but 'A' has %s", mrt_dtype_name(b->dtype),
                           mrt_dtype_name(a->dtype));
    return MRT_STATUS_OK;
}

static mrt_status infer_gemm(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *a = need_input(ctx, 0, "A", &st);
    if (!a) return st;
    const mrt_tensor *b = need_input(ctx, 1, "B", &st);
    if (!b) return st;
    MRT_TRY(same_dtype_pair(ctx, a, b));
    char as[256], bs[256], cs[256];
    if (a->rank != 2 || b->rank != 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "inputs 'A' %s and 'B' %s must be 2-D", shp(a, as, sizeof as),
                           shp(b, bs, sizeof bs));
    bool ta = mrt_attr_int(ctx, "transA", 0) != 0, tb = mrt_attr_int(ctx, "transB", 0) != 0;
    int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
    int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
    if (k != kb)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "inner dimensions differ: 'A' %s (transA=%d) and 'B' %s (transB=%d)",
                           shp(a, as, sizeof as), ta, shp(b, bs, sizeof bs), tb);
    const mrt_tensor *c = mrt_input(ctx, 2);
    if (c) {
        if (c->dtype != a->dtype)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 'C' has dtype %s but 'A' has %s",
                               mrt_dtype_name(c->dtype), mrt_dtype_name(a->dtype));
        bool exact = ctx->opset < 7 && mrt_attr_int(ctx, "broadcast", 0) == 0;
        bool ok = c->rank <= 2;
        if (ok && exact) ok = c->rank == 2 && c->shape[0] == m && c->shape[1] == n;
        int64_t c0 = c->rank == 2 ? c->shape[0] : 1, c1 = c->rank >= 1 ? c->shape[c->rank - 1] : 1;
        if (ok) ok = (c0 == 1 || c0 == m) && (c1 == 1 || c1 == n);
        if (!ok)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "input 'C' has shape %s, which does not broadcast to [%lld,%lld]%s",
                               shp(c, cs, sizeof cs), (long long)m, (long long)n,
                               exact ? " (opset < 7 without broadcast=1 needs exactly that shape)" : "");
    }
    int64_t shape[2] = {m, n};
    return mrt_output_set(ctx, 0, a->dtype, 2, shape); /* checks that m * n fits */
}

mrt_status mrt_matmul_dims_get(const mrt_op_ctx *ctx, const mrt_tensor *a, const mrt_tensor *b, mrt_matmul_dims *d)
{
    char as[256], bs[256];
    memset(d, 0, sizeof *d);
    if (a->rank < 1 || b->rank < 1)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "inputs 'A' %s and 'B' %s must have rank >= 1",
                           shp(a, as, sizeof as), shp(b, bs, sizeof bs));
    int ra = a->rank, rb = b->rank;
    d->m = ra == 1 ? 1 : a->shape[ra - 2];
    d->k = a->shape[ra - 1];
    int64_t kb = rb == 1 ? b->shape[0] : b->shape[rb - 2];
    d->n = rb == 1 ? 1 : b->shape[rb - 1];
    if (d->k != kb)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "inner dimensions differ: 'A' %s and 'B' %s", shp(a, as, sizeof as),
                           shp(b, bs, sizeof bs));
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    int br = ba > bb ? ba : bb;
    d->batch_rank = br;
    for (int i = 0; i < br; i++) {
        int64_t da = i < br - ba ? 1 : a->shape[i - (br - ba)];
        int64_t db = i < br - bb ? 1 : b->shape[i - (br - bb)];
        if (da != db && da != 1 && db != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "batch dimensions of 'A' %s and 'B' %s cannot be broadcast",
                               shp(a, as, sizeof as), shp(b, bs, sizeof bs));
        d->a_batch[i] = da;
        d->b_batch[i] = db;
        d->batch[i] = da == 1 ? db : da;
    }
    int r = 0;
    for (int i = 0; i < br; i++) d->y_shape[r++] = d->batch[i];
    if (ra > 1) d->y_shape[r++] = d->m;
    if (rb > 1) d->y_shape[r++] = d->n;
    d->y_rank = r;
    return MRT_STATUS_OK;
}

static mrt_status infer_matmul(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *a = need_input(ctx, 0, "A", &st);
    if (!a) return st;
    const mrt_tensor *b = need_input(ctx, 1, "B", &st);
    if (!b) return st;
    MRT_TRY(same_dtype_pair(ctx, a, b));
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    return mrt_output_set(ctx, 0, a->dtype, d.y_rank, d.y_shape); /* checks that Y's size fits */
}

/* MatMulInteger zero points: a scalar, a 1-D vector over A's rows (B's columns), or A's shape with K
   replaced by 1 ([..., M, 1]) / B's shape with K replaced by 1 ([..., 1, N]). */
static mrt_status mm_zero_point_check(const mrt_op_ctx *ctx, int i, const char *name, const mrt_tensor *data,
                                      bool is_a, const mrt_matmul_dims *d)
{
    const mrt_tensor *z = mrt_input(ctx, i);
    if (!z) return MRT_STATUS_OK;
    char zs[256], ds[256];
    if (z->dtype != data->dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has dtype %s, expected %s like its data", name,
                           mrt_dtype_name(z->dtype), mrt_dtype_name(data->dtype));
    if (mrt_tensor_numel(z) == 1 && z->rank <= 1) return MRT_STATUS_OK;
    int64_t per = is_a ? d->m : d->n;
    if (z->rank == 1 && z->shape[0] == per && data->rank >= 2) return MRT_STATUS_OK;
    if (z->rank == data->rank && data->rank >= 2) {
        bool ok = true;
        for (int k = 0; k < z->rank - 2; k++) ok = ok && z->shape[k] == data->shape[k];
        if (is_a) ok = ok && z->shape[z->rank - 2] == d->m && z->shape[z->rank - 1] == 1;
        else ok = ok && z->shape[z->rank - 2] == 1 && z->shape[z->rank - 1] == d->n;
        if (ok) return MRT_STATUS_OK;
    }
    return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input '%s' has shape %s, not a valid zero point for %s",
                       name, shp(z, zs, sizeof zs), shp(data, ds, sizeof ds));
}

static mrt_status infer_matmulinteger(mrt_op_ctx *ctx)
{
    mrt_status st;
    const mrt_tensor *a = need_input(ctx, 0, "A", &st);
    if (!a) return st;
    const mrt_tensor *b = need_input(ctx, 1, "B", &st);
    if (!b) return st;
    bool ok = (a->dtype == MRT_DTYPE_UINT8 || a->dtype == MRT_DTYPE_INT8) &&
              (b->dtype == MRT_DTYPE_UINT8 || b->dtype == MRT_DTYPE_INT8);
    if (!ok)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "inputs 'A' (%s) and 'B' (%s) must be uint8 or int8",
                           mrt_dtype_name(a->dtype), mrt_dtype_name(b->dtype));
    mrt_matmul_dims d;
    MRT_TRY(mrt_matmul_dims_get(ctx, a, b, &d));
    MRT_TRY(mm_zero_point_check(ctx, 2, "a_zero_point", a, true, &d));
    MRT_TRY(mm_zero_point_check(ctx, 3, "b_zero_point", b, false, &d));
    return mrt_output_set(ctx, 0, MRT_DTYPE_INT32, d.y_rank, d.y_shape);
}

const mrt_opdef mrt_opdefs_gemm[] = {
    {"", "Gemm", 1, 3, 3, 1, 1, infer_gemm, 0},
    {"", "Gemm", 6, 3, 3, 1, 1, infer_gemm, 0},
    {"", "Gemm", 7, 3, 3, 1, 1, infer_gemm, 0},
    {"", "Gemm", 9, 3, 3, 1, 1, infer_gemm, 0},
    {"", "Gemm", 11, 2, 3, 1, 1, infer_gemm, 0},
    {"", "Gemm", 13, 2, 3, 1, 1, infer_gemm, 0},
    {"", "MatMul", 1, 2, 2, 1, 1, infer_matmul, 0},
    {"", "MatMul", 9, 2, 2, 1, 1, infer_matmul, 0},
    {"", "MatMul", 13, 2, 2, 1, 1, infer_matmul, 0},
    {"", "MatMulInteger", 10, 2, 4, 1, 1, infer_matmulinteger, 0},
    {0},
};
