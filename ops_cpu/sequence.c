/* CPU kernels for sequences and optionals: SequenceConstruct/Empty/At/Insert/Erase/Length (11),
   ConcatFromSequence (11), SplitToSequence (11, 24), Optional (15), OptionalHasElement (15, 18),
   OptionalGetElement (15, 18). Sequences own copies of their tensors. */
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/movement.h"

static const mrt_value *input_sequence(const mrt_op_ctx *ctx, int i)
{
    const mrt_value *v = mrt_input_value(ctx, i);
    return v && v->kind == MRT_VALUE_SEQUENCE ? v : NULL;
}

/* A new sequence of `n` items, copying `src` items [0, n) (src may be NULL for an empty start). */
static mrt_status copy_items(const mrt_op_ctx *ctx, const mrt_tensor *src, int64_t n, int64_t extra, mrt_tensor **out)
{
    *out = calloc((size_t)(n + extra ? n + extra : 1), sizeof **out);
    if (!*out) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        mrt_status st = mrt_tensor_copy(&(*out)[i], &src[i]);
        if (st) {
            for (int64_t j = 0; j < i; j++) mrt_tensor_release(&(*out)[j]);
            free(*out);
            *out = NULL;
            return st;
        }
    }
    return MRT_STATUS_OK;
}

static void free_items(mrt_tensor *items, int64_t n)
{
    for (int64_t i = 0; items && i < n; i++) mrt_tensor_release(&items[i]);
    free(items);
}

/* Position input (scalar int32/int64), negative counting from the end; valid range [-n, n] or [-n, n-1]. */
static mrt_status read_position(const mrt_op_ctx *ctx, int input, int64_t n, bool allow_end, int64_t def, int64_t *pos)
{
    const mrt_tensor *t = mrt_input(ctx, input);
    if (!t) {
        *pos = def;
        return MRT_STATUS_OK;
    }
    if (mrt_tensor_numel(t) != 1 || (t->dtype != MRT_DTYPE_INT64 && t->dtype != MRT_DTYPE_INT32))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "position must be one int32/int64 value");
    int64_t p = mrt_load_i64(t->dtype, t->data, 0);
    int64_t hi = allow_end ? n : n - 1;
    if (p < -n || p > hi)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "position %lld is out of range for a sequence of %lld", (long long)p,
                           (long long)n);
    *pos = p < 0 ? p + n : p;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_sequence_construct(mrt_op_ctx *ctx)
{
    mrt_tensor *items = calloc((size_t)ctx->n_inputs, sizeof *items);
    if (!items) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; !st && i < ctx->n_inputs; i++) {
        const mrt_tensor *t = mrt_input(ctx, i);
        if (!t)
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is not a tensor", i);
        else if (t->dtype != mrt_input(ctx, 0)->dtype)
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d is %s, input 0 %s: a sequence has one dtype", i,
                             mrt_dtype_name(t->dtype), mrt_dtype_name(mrt_input(ctx, 0)->dtype));
        else
            st = mrt_tensor_copy(&items[i], t);
    }
    if (st) {
        free_items(items, ctx->n_inputs);
        return st;
    }
    return mrt_output_take_sequence(ctx, 0, mrt_input(ctx, 0)->dtype, ctx->n_inputs, items);
}

static mrt_status mrt_cpu_sequence_empty(mrt_op_ctx *ctx)
{
    int64_t dt = mrt_attr_int(ctx, "dtype", MRT_DTYPE_FLOAT);
    if (!mrt_dtype_is_known((int)dt)) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "unknown dtype %lld", (long long)dt);
    mrt_tensor *items = calloc(1, sizeof *items);
    if (!items) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return mrt_output_take_sequence(ctx, 0, (mrt_dtype)dt, 0, items);
}

static mrt_status mrt_cpu_sequence_at(mrt_op_ctx *ctx)
{
    const mrt_value *s = input_sequence(ctx, 0);
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 must be a sequence");
    int64_t pos;
    MRT_TRY(read_position(ctx, 1, s->n_items, false, 0, &pos));
    mrt_value v;
    memset(&v, 0, sizeof v);
    v.kind = MRT_VALUE_TENSOR;
    MRT_TRY(mrt_tensor_copy(&v.tensor, &s->items[pos]));
    return mrt_output_take_value(ctx, 0, &v);
}

static mrt_status mrt_cpu_sequence_insert(mrt_op_ctx *ctx)
{
    const mrt_value *s = input_sequence(ctx, 0);
    const mrt_tensor *t = mrt_input(ctx, 1);
    if (!s || !t) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "expects a sequence and a tensor");
    if (s->n_items && t->dtype != s->seq_dtype)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "inserting a %s tensor into a sequence of %s",
                           mrt_dtype_name(t->dtype), mrt_dtype_name(s->seq_dtype));
    int64_t pos, n = s->n_items;
    MRT_TRY(read_position(ctx, 2, n, true, n, &pos));
    mrt_tensor *items;
    MRT_TRY(copy_items(ctx, s->items, n, 1, &items));
    memmove(&items[pos + 1], &items[pos], (size_t)(n - pos) * sizeof *items);
    mrt_status st = mrt_tensor_copy(&items[pos], t);
    if (st) {
        memset(&items[pos], 0, sizeof items[pos]);
        free_items(items, n + 1);
        return st;
    }
    return mrt_output_take_sequence(ctx, 0, t->dtype, n + 1, items);
}

static mrt_status mrt_cpu_sequence_erase(mrt_op_ctx *ctx)
{
    const mrt_value *s = input_sequence(ctx, 0);
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 must be a sequence");
    int64_t pos, n = s->n_items;
    if (n == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "cannot erase from an empty sequence");
    MRT_TRY(read_position(ctx, 1, n, false, n - 1, &pos));
    mrt_tensor *items;
    MRT_TRY(copy_items(ctx, s->items, n, 0, &items));
    mrt_tensor_release(&items[pos]);
    memmove(&items[pos], &items[pos + 1], (size_t)(n - pos - 1) * sizeof *items);
    return mrt_output_take_sequence(ctx, 0, s->seq_dtype, n - 1, items);
}

static mrt_status mrt_cpu_sequence_length(mrt_op_ctx *ctx)
{
    const mrt_value *s = input_sequence(ctx, 0);
    if (!s) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 must be a sequence");
    ((int64_t *)mrt_output(ctx, 0)->data)[0] = s->n_items;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_concat_from_sequence(mrt_op_ctx *ctx)
{
    const mrt_value *s = input_sequence(ctx, 0);
    if (!s || s->n_items == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must be a non-empty sequence");
    bool new_axis = mrt_attr_int(ctx, "new_axis", 0) != 0;
    const mrt_tensor *f = &s->items[0];
    int out_rank = f->rank + (new_axis ? 1 : 0), axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), out_rank, &axis));
    if (!new_axis && f->rank == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "cannot concatenate scalars without new_axis");
    int64_t total = 0;
    for (int64_t i = 0; i < s->n_items; i++) {
        const mrt_tensor *t = &s->items[i];
        bool ok = t->dtype == f->dtype && t->rank == f->rank;
        for (int d = 0; ok && d < f->rank; d++) ok = d == axis && !new_axis ? true : t->shape[d] == f->shape[d];
        if (!ok) {
            char a[256], b[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "item %lld is %s, item 0 is %s", (long long)i,
                               mrt_tensor_describe(t, a, sizeof a), mrt_tensor_describe(f, b, sizeof b));
        }
        total += new_axis ? 1 : t->shape[axis];
    }
    int64_t shape[MRT_MAX_RANK];
    if (new_axis)
        for (int d = 0, k = 0; d < out_rank; d++) shape[d] = d == axis ? total : f->shape[k++];
    else
        for (int d = 0; d < out_rank; d++) shape[d] = d == axis ? total : f->shape[d];
    mrt_tensor *out;
    MRT_TRY(mrt_output_alloc(ctx, 0, f->dtype, out_rank, shape, &out));
    if (!out) return MRT_STATUS_OK;
    mrt_mover mv = mrt_mover_of(f->dtype); /* strings duplicated, sub-byte types by bit field */
    int64_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= shape[d];
    int64_t out_row = 1; /* elements per outer index in the output */
    for (int d = axis; d < out_rank; d++) out_row *= shape[d];
    int64_t offset = 0;
    for (int64_t i = 0; i < s->n_items; i++) {
        const mrt_tensor *t = &s->items[i];
        int64_t chunk = mrt_tensor_numel(t) / (outer ? outer : 1); /* elements of this item per outer index */
        if (outer == 0) break;
        for (int64_t o = 0; o < outer; o++) mrt_mover_copy(&mv, out->data, o * out_row + offset, t->data, o * chunk, chunk);
        offset += chunk;
    }
    return mv.oom ? mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)") : MRT_STATUS_OK;
}

static mrt_status mrt_cpu_split_to_sequence(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *split = mrt_input(ctx, 1);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input must be a tensor");
    int axis;
    MRT_TRY(mrt_normalize_axis(ctx, "axis", mrt_attr_int(ctx, "axis", 0), x->rank, &axis));
    int64_t len = x->shape[axis], n_parts = 0, *sizes = NULL;
    bool keepdims = mrt_attr_int(ctx, "keepdims", 1) != 0;
    if (!split) {
        n_parts = len;
        sizes = malloc((size_t)(len ? len : 1) * sizeof *sizes);
        for (int64_t i = 0; sizes && i < len; i++) sizes[i] = 1;
    } else if (split->rank == 0) {
        int64_t chunk = mrt_load_i64(split->dtype, split->data, 0);
        if (chunk <= 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "split %lld must be positive", (long long)chunk);
        n_parts = (len + chunk - 1) / chunk;
        sizes = malloc((size_t)(n_parts ? n_parts : 1) * sizeof *sizes);
        for (int64_t i = 0; sizes && i < n_parts; i++) sizes[i] = i + 1 < n_parts ? chunk : len - chunk * (n_parts - 1);
        keepdims = true;
    } else {
        n_parts = mrt_tensor_numel(split);
        sizes = malloc((size_t)(n_parts ? n_parts : 1) * sizeof *sizes);
        int64_t sum = 0;
        for (int64_t i = 0; sizes && i < n_parts; i++) {
            sizes[i] = mrt_load_i64(split->dtype, split->data, i);
            sum += sizes[i];
            if (sizes[i] < 0) {
                free(sizes);
                return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "split sizes must be non-negative");
            }
        }
        if (sizes && sum != len) {
            free(sizes);
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "split sizes add up to %lld, the axis has %lld", (long long)sum,
                               (long long)len);
        }
        keepdims = true;
    }
    if (!sizes) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    mrt_tensor *items = calloc((size_t)(n_parts ? n_parts : 1), sizeof *items);
    mrt_status st = items ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    mrt_mover mv = mrt_mover_of(x->dtype);
    int64_t outer = 1, inner = 1, start = 0;
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    for (int64_t p = 0; !st && p < n_parts; p++) {
        int64_t shape[MRT_MAX_RANK];
        int rank = 0;
        for (int d = 0; d < x->rank; d++) {
            if (d == axis && !keepdims) continue;
            shape[rank++] = d == axis ? sizes[p] : x->shape[d];
        }
        st = mrt_tensor_alloc(&items[p], x->dtype, rank, shape);
        for (int64_t o = 0; !st && o < outer; o++)
            mrt_mover_copy(&mv, items[p].data, o * sizes[p] * inner, x->data, (o * len + start) * inner, sizes[p] * inner);
        if (!st && mv.oom) st = mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)");
        start += sizes[p];
    }
    free(sizes);
    if (st) {
        free_items(items, n_parts);
        return st;
    }
    return mrt_output_take_sequence(ctx, 0, x->dtype, n_parts, items);
}

static mrt_status mrt_cpu_optional(mrt_op_ctx *ctx)
{
    const mrt_value *in = mrt_input_value(ctx, 0);
    mrt_value v;
    memset(&v, 0, sizeof v);
    if (in && in->kind != MRT_VALUE_NONE) MRT_TRY(mrt_value_copy(&v, in));
    v.is_optional = true;
    return mrt_output_take_value(ctx, 0, &v);
}

static mrt_status mrt_cpu_optional_has_element(mrt_op_ctx *ctx)
{
    const mrt_value *in = mrt_input_value(ctx, 0);
    ((uint8_t *)mrt_output(ctx, 0)->data)[0] = in && in->kind != MRT_VALUE_NONE;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_optional_get_element(mrt_op_ctx *ctx)
{
    const mrt_value *in = mrt_input_value(ctx, 0);
    if (!in || in->kind == MRT_VALUE_NONE)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "the optional input is empty");
    mrt_value v;
    MRT_TRY(mrt_value_copy(&v, in));
    v.is_optional = false;
    return mrt_output_take_value(ctx, 0, &v);
}

const mrt_kernel mrt_cpu_kernels_sequence[] = {
    {"", "SequenceConstruct", 11, mrt_cpu_sequence_construct, NULL},
    {"", "SequenceEmpty", 11, mrt_cpu_sequence_empty, NULL},
    {"", "SequenceAt", 11, mrt_cpu_sequence_at, NULL},
    {"", "SequenceInsert", 11, mrt_cpu_sequence_insert, NULL},
    {"", "SequenceErase", 11, mrt_cpu_sequence_erase, NULL},
    {"", "SequenceLength", 11, mrt_cpu_sequence_length, NULL},
    {"", "ConcatFromSequence", 11, mrt_cpu_concat_from_sequence, NULL},
    {"", "SplitToSequence", 11, mrt_cpu_split_to_sequence, NULL},
    {"", "Optional", 15, mrt_cpu_optional, NULL},
    {"", "OptionalHasElement", 15, mrt_cpu_optional_has_element, NULL},
    {"", "OptionalGetElement", 15, mrt_cpu_optional_get_element, NULL},
    {0},
};
