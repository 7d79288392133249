/* Helpers of the operator contract (engine/op.h). */
#include "engine/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/device.h"
#include "engine/exec.h"

const mrt_tensor *mrt_input(const mrt_op_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->n_inputs || !ctx->inputs[i] || ctx->inputs[i]->kind != MRT_VALUE_TENSOR) return NULL;
    return &ctx->inputs[i]->tensor;
}

mrt_tensor *mrt_output(mrt_op_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) return NULL;
    return &ctx->outputs[i]->tensor;
}

mrt_status mrt_output_set(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int rank, const int64_t *shape)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) return MRT_STATUS_OK;
    if (rank < 0 || rank > MRT_MAX_RANK)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "output %d would have rank %d (minirt allows up to %d)",
                           i, rank, MRT_MAX_RANK);
    int64_t numel;
    if (mrt_shape_numel(rank, shape, &numel) != MRT_STATUS_OK)
        return mrt_fail_prefix(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): output %d: ", ctx->node->name,
                               ctx->node->op_type, i);
    mrt_value *v = ctx->outputs[i];
    v->kind = MRT_VALUE_TENSOR;
    v->tensor.dtype = dtype;
    v->tensor.rank = rank;
    if (rank) memcpy(v->tensor.shape, shape, (size_t)rank * sizeof(int64_t));
    v->tensor.data = NULL;
    return MRT_STATUS_OK;
}

mrt_status mrt_output_set_sequence(mrt_op_ctx *ctx, int i, mrt_dtype dtype)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) return MRT_STATUS_OK;
    mrt_value *v = ctx->outputs[i];
    v->kind = MRT_VALUE_SEQUENCE;
    v->seq_dtype = dtype;
    return MRT_STATUS_OK;
}

mrt_status mrt_output_set_none(mrt_op_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) return MRT_STATUS_OK;
    ctx->outputs[i]->kind = MRT_VALUE_NONE;
    return MRT_STATUS_OK;
}

mrt_status mrt_infer_dynamic(mrt_op_ctx *ctx)
{
    ctx->dynamic = true;
    return MRT_STATUS_OK;
}

/* Index of output i's graph value in the exec (for ownership bookkeeping). */
static int output_value_index(const mrt_op_ctx *ctx, int i) { return ctx->node->outputs[i]; }

mrt_status mrt_output_alloc(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int rank, const int64_t *shape,
                            mrt_tensor **out)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) {
        if (out) *out = NULL;
        return MRT_STATUS_OK;
    }
    mrt_value *v = ctx->outputs[i];
    mrt_exec *e = ctx->exec;
    int vi = output_value_index(ctx, i);
    if (ctx->device == MRT_DEVICE_CUDA && e && vi >= 0) {
        /* a CUDA kernel sizing its output at run time: device bytes; the host value keeps the shape (its bytes
           come with the first copy to the host) */
        mrt_value *hv = &e->vals[vi];
        if (e->alloc[vi] != MRT_ALLOC_BORROWED) mrt_value_release(hv);
        memset(hv, 0, sizeof *hv);
        hv->kind = MRT_VALUE_TENSOR;
        size_t nbytes;
        if (rank < 0 || rank > MRT_MAX_RANK)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "output %d: rank %d is out of range", i, rank);
        MRT_TRY(mrt_shape_nbytes(dtype, rank, shape, &nbytes));
        hv->tensor.dtype = dtype;
        hv->tensor.rank = rank;
        for (int d = 0; d < rank; d++) hv->tensor.shape[d] = shape[d];
        e->alloc[vi] = MRT_ALLOC_RUN;
        *v = *hv;
        MRT_TRY(mrt_dev_output_alloc(ctx, vi, v));
        if (out) *out = &v->tensor;
        return MRT_STATUS_OK;
    }
    if (e && vi >= 0 && e->alloc[vi] != MRT_ALLOC_BORROWED) mrt_value_release(v);
    memset(v, 0, sizeof *v);
    v->kind = MRT_VALUE_TENSOR;
    mrt_status st = mrt_tensor_alloc(&v->tensor, dtype, rank, shape);
    if (st) return mrt_fail_prefix(st, "node '%s' (%s): output %d: ", ctx->node->name, ctx->node->op_type, i);
    if (e && vi >= 0) e->alloc[vi] = ctx->planning ? MRT_ALLOC_PLAN : MRT_ALLOC_RUN;
    if (out) *out = &v->tensor;
    return MRT_STATUS_OK;
}

mrt_status mrt_output_take_sequence(mrt_op_ctx *ctx, int i, mrt_dtype dtype, int64_t n, mrt_tensor *items)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) {
        for (int64_t k = 0; k < n; k++) mrt_tensor_release(&items[k]);
        free(items);
        return MRT_STATUS_OK;
    }
    mrt_value *v = ctx->outputs[i];
    mrt_exec *e = ctx->exec;
    int vi = output_value_index(ctx, i);
    if (e && vi >= 0 && e->alloc[vi] != MRT_ALLOC_BORROWED) mrt_value_release(v);
    memset(v, 0, sizeof *v);
    v->kind = MRT_VALUE_SEQUENCE;
    v->seq_dtype = dtype;
    v->n_items = n;
    v->items = items;
    if (e && vi >= 0) e->alloc[vi] = ctx->planning ? MRT_ALLOC_PLAN : MRT_ALLOC_RUN;
    return MRT_STATUS_OK;
}

mrt_status mrt_output_take_value(mrt_op_ctx *ctx, int i, mrt_value *v)
{
    if (i < 0 || i >= ctx->n_outputs || !ctx->outputs[i]) {
        mrt_value_release(v);
        memset(v, 0, sizeof *v);
        return MRT_STATUS_OK;
    }
    mrt_value *out = ctx->outputs[i];
    mrt_exec *e = ctx->exec;
    int vi = output_value_index(ctx, i);
    if (e && vi >= 0 && e->alloc[vi] != MRT_ALLOC_BORROWED) mrt_value_release(out);
    *out = *v;
    memset(v, 0, sizeof *v);
    if (e && vi >= 0) e->alloc[vi] = ctx->planning ? MRT_ALLOC_PLAN : MRT_ALLOC_RUN;
    return MRT_STATUS_OK;
}

const mrt_value *mrt_input_value(const mrt_op_ctx *ctx, int i)
{
    return i >= 0 && i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* ------------------------------------------------------------------ workspaces */

void mrt_workspace_request(mrt_op_ctx *ctx, size_t bytes) { ctx->workspace_request = bytes; }

void *mrt_workspace(mrt_op_ctx *ctx, size_t bytes)
{
    static _Alignas(64) char empty[64]; /* for a zero-byte request: a valid pointer, nothing allocated */
    if (bytes == 0) return empty;
    bool cuda = ctx->device == MRT_DEVICE_CUDA;
    void *p = ctx->workspace && bytes <= ctx->workspace_bytes ? ctx->workspace
              : !ctx->exec                                    ? NULL
              : cuda                                          ? mrt_dev_scratch(ctx->exec, bytes)
                                                              : mrt_exec_scratch(ctx->exec, bytes);
    if (!p) mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (a %zu-byte %s workspace)", bytes, cuda ? "device" : "kernel");
    if (cuda) return p; /* device memory: the emulated module's allocations start as 0xFF bytes */
#ifdef MRT_POISON_WORKSPACE
    /* sanitizer builds: a workspace holds whatever the previous step left, never zeros a kernel may count on */
    if (p) memset(p, 0xFF, bytes); /* NaN as float or double, -1 as an integer */
#endif
    return p;
}

/* Bytes of the carved buffers, or false when the total overflows. */
static bool parts_bytes(int n, const int64_t *counts, size_t elem_bytes, size_t *total)
{
    *total = 0;
    for (int i = 0; i < n; i++) {
        size_t c = counts[i] > 0 ? (size_t)counts[i] : 0;
        if (elem_bytes && c > (SIZE_MAX / 4 - *total) / elem_bytes) return false;
        *total += (c * elem_bytes + 63) & ~(size_t)63;
    }
    return true;
}

mrt_status mrt_workspace_request_parts(mrt_op_ctx *ctx, int n, const int64_t *counts, size_t elem_bytes)
{
    size_t total;
    if (!parts_bytes(n, counts, elem_bytes, &total))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the kernel's workspace size overflows");
    mrt_workspace_request(ctx, total);
    return MRT_STATUS_OK;
}

void *mrt_workspace_parts(mrt_op_ctx *ctx, int n, const int64_t *counts, size_t elem_bytes, void **parts)
{
    size_t total;
    if (!parts_bytes(n, counts, elem_bytes, &total)) {
        mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the kernel's workspace size overflows");
        return NULL;
    }
    char *base = mrt_workspace(ctx, total);
    for (size_t i = 0, at = 0; base && i < (size_t)n; i++) {
        parts[i] = base + at;
        at += ((counts[i] > 0 ? (size_t)counts[i] : 0) * elem_bytes + 63) & ~(size_t)63;
    }
    return base;
}

/* ------------------------------------------------------------------ attributes */

/* Remember the first attribute read with the wrong type (see mrt_attr_mismatch). */
static void mismatch(const mrt_op_ctx *ctx, const mrt_attr *a, mrt_attr_type want)
{
    if (ctx->attr_mismatch && !ctx->attr_mismatch->name)
        *ctx->attr_mismatch = (mrt_attr_mismatch){a->name, a->type, want};
}

int64_t mrt_attr_int(const mrt_op_ctx *ctx, const char *name, int64_t def)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    if (a && a->type == MRT_ATTR_INT) return a->i;
    if (a) mismatch(ctx, a, MRT_ATTR_INT);
    return def;
}

float mrt_attr_float(const mrt_op_ctx *ctx, const char *name, float def)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    if (a && a->type == MRT_ATTR_FLOAT) return a->f;
    if (a && a->type == MRT_ATTR_INT) return (float)a->i;
    if (a) mismatch(ctx, a, MRT_ATTR_FLOAT);
    return def;
}

const char *mrt_attr_string(const mrt_op_ctx *ctx, const char *name, const char *def)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    if (a && a->type == MRT_ATTR_STRING) return a->s;
    if (a) mismatch(ctx, a, MRT_ATTR_STRING);
    return def;
}

bool mrt_attr_ints(const mrt_op_ctx *ctx, const char *name, const int64_t **v, int64_t *n)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *v = NULL;
    *n = 0;
    if (!a) return false;
    if (a->type == MRT_ATTR_INTS) {
        *v = a->ints;
        *n = a->n;
        return true;
    }
    if (a->type == MRT_ATTR_INT) {
        *v = &a->i;
        *n = 1;
        return true;
    }
    mismatch(ctx, a, MRT_ATTR_INTS);
    return false;
}

bool mrt_attr_floats(const mrt_op_ctx *ctx, const char *name, const float **v, int64_t *n)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *v = NULL;
    *n = 0;
    if (!a) return false;
    if (a->type == MRT_ATTR_FLOATS) {
        *v = a->floats;
        *n = a->n;
        return true;
    }
    mismatch(ctx, a, MRT_ATTR_FLOATS);
    return false;
}

mrt_status mrt_attr_get(const mrt_op_ctx *ctx, const char *name, mrt_attr_type type, const mrt_attr **out)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *out = NULL;
    if (!a) return MRT_STATUS_OK;
    if (a->type != type)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has type %s, expected %s", name,
                           mrt_attr_type_name(a->type), mrt_attr_type_name(type));
    *out = a;
    return MRT_STATUS_OK;
}

mrt_status mrt_op_fail(const mrt_op_ctx *ctx, mrt_status status, const char *fmt, ...)
{
    char msg[3072];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const mrt_node *n = ctx->node;
    return mrt_fail(status, "node '%s' (%s%s%s): %s", n->name, n->domain, n->domain[0] ? "::" : "", n->op_type, msg);
}

/* ------------------------------------------------------------------ shapes */

mrt_status mrt_broadcast_shapes(const mrt_op_ctx *ctx, int ra, const int64_t *a, int rb, const int64_t *b,
                                int *rank, int64_t *shape)
{
    int r = ra > rb ? ra : rb;
    int64_t out[MRT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1) {
            out[i] = da;
        } else if (da == 1) {
            out[i] = db;
        } else {
            char sa[256], sb[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "shapes %s and %s cannot be broadcast together",
                               mrt_shape_describe(ra, a, sa, sizeof sa), mrt_shape_describe(rb, b, sb, sizeof sb));
        }
    }
    *rank = r;
    memcpy(shape, out, (size_t)r * sizeof(int64_t));
    return MRT_STATUS_OK;
}

mrt_status mrt_normalize_axis(const mrt_op_ctx *ctx, const char *what, int64_t axis, int rank, int *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s %lld is out of range for rank %d", what,
                           (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return MRT_STATUS_OK;
}

mrt_status mrt_tensor_read_ints(const mrt_op_ctx *ctx, const char *what, const mrt_tensor *t, int64_t *vals,
                                int64_t n_max, int64_t *n)
{
    if (!t || !t->data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "%s has no data", what);
    if (t->dtype != MRT_DTYPE_INT64 && t->dtype != MRT_DTYPE_INT32)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s must be int32 or int64, got %s", what,
                           mrt_dtype_name(t->dtype));
    if (t->rank > 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s must be 1-D, got rank %d", what, t->rank);
    int64_t count = mrt_tensor_numel(t);
    if (count > n_max)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s has %lld values, at most %lld allowed", what,
                           (long long)count, (long long)n_max);
    for (int64_t i = 0; i < count; i++)
        vals[i] = t->dtype == MRT_DTYPE_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    *n = count;
    return MRT_STATUS_OK;
}

void mrt_shape_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

void mrt_parallel_for(const mrt_op_ctx *ctx, int64_t n, int64_t grain, mrt_range_fn fn, void *arg)
{
    mrt_threadpool_run(ctx ? ctx->pool : NULL, n, grain, fn, arg);
}
