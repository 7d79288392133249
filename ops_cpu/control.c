/* CPU kernels: If (1+), Loop (1+), Scan (8 with batch axis and sequence_lens; 9+ with axes and directions),
   SequenceMap (17). Bodies run through the engine (mrt_op_run_subgraph); values are deep-copied in and out. */
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"
#include "ops_cpu/movement.h"

static const mrt_graph *graph_attr(const mrt_op_ctx *ctx, const char *name)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    return a && a->type == MRT_ATTR_GRAPH ? a->g : NULL;
}

static mrt_status read_bool_scalar(const mrt_op_ctx *ctx, const char *what, const mrt_tensor *t, bool *out)
{
    if (!t || mrt_tensor_numel(t) != 1 || !t->data)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "%s must be a single value", what);
    *out = mrt_load_i64(t->dtype, t->data, 0) != 0;
    return MRT_STATUS_OK;
}

static void release_values(mrt_value *v, int n)
{
    for (int i = 0; v && i < n; i++) mrt_value_release(&v[i]);
}

/* ------------------------------------------------------------------ If */

static mrt_status mrt_cpu_if(mrt_op_ctx *ctx)
{
    bool cond;
    MRT_TRY(read_bool_scalar(ctx, "the condition", mrt_input(ctx, 0), &cond));
    const mrt_graph *branch = graph_attr(ctx, cond ? "then_branch" : "else_branch");
    if (!branch) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "missing %s", cond ? "then_branch" : "else_branch");
    if (branch->n_outputs != ctx->n_outputs)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the %s branch has %d outputs, the node %d",
                           cond ? "then" : "else", branch->n_outputs, ctx->n_outputs);
    mrt_value *outs = calloc((size_t)(ctx->n_outputs ? ctx->n_outputs : 1), sizeof *outs);
    if (!outs) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    mrt_status st = mrt_op_run_subgraph(ctx, branch, 0, NULL, ctx->n_outputs, outs);
    for (int i = 0; !st && i < ctx->n_outputs; i++) st = mrt_output_take_value(ctx, i, &outs[i]);
    release_values(outs, ctx->n_outputs);
    free(outs);
    return st;
}

/* ------------------------------------------------------------------ stacking scan outputs */

/* Per scan output: the per-iteration tensors, stacked at the end along `axis` (reversed when asked). */
typedef struct stack_list {
    mrt_tensor *items;
    int64_t n, cap;
} stack_list;

static mrt_status stack_push(const mrt_op_ctx *ctx, stack_list *s, mrt_value *v)
{
    if (v->kind != MRT_VALUE_TENSOR) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "scan outputs must be tensors");
    if (s->n == s->cap) {
        int64_t nc = s->cap ? s->cap * 2 : 16;
        mrt_tensor *ni = realloc(s->items, (size_t)nc * sizeof *ni);
        if (!ni) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
        s->items = ni;
        s->cap = nc;
    }
    if (s->n > 0) {
        const mrt_tensor *a = &s->items[0], *b = &v->tensor;
        if (a->dtype != b->dtype || a->rank != b->rank || memcmp(a->shape, b->shape, (size_t)a->rank * 8) != 0) {
            char x[256], y[256];
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "a scan output changed from %s to %s between iterations",
                               mrt_tensor_describe(a, x, sizeof x), mrt_tensor_describe(b, y, sizeof y));
        }
    }
    s->items[s->n++] = v->tensor;
    memset(v, 0, sizeof *v);
    return MRT_STATUS_OK;
}

static void stack_free(stack_list *s)
{
    for (int64_t i = 0; i < s->n; i++) mrt_tensor_release(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* Stack along `axis` (of the result, whose rank is item rank + 1). With no items the shape comes from the
   body's declared output type when known (else [0]). */
static mrt_status stack_to_output(mrt_op_ctx *ctx, int out_index, stack_list *s, int64_t axis, bool reverse,
                                  const mrt_type_info *declared)
{
    int64_t shape[MRT_MAX_RANK];
    int rank;
    mrt_dtype dt;
    if (s->n == 0) {
        dt = declared && declared->elem_type ? declared->elem_type : MRT_DTYPE_FLOAT;
        rank = declared && declared->rank >= 0 && declared->rank < MRT_MAX_RANK ? declared->rank + 1 : 1;
        for (int d = 0; d < rank; d++) shape[d] = d == 0 ? 0 : (declared->dims[d - 1] > 0 ? declared->dims[d - 1] : 0);
        return mrt_output_alloc(ctx, out_index, dt, rank, shape, NULL);
    }
    const mrt_tensor *first = &s->items[0];
    rank = first->rank + 1;
    if (rank > MRT_MAX_RANK) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "stacked scan output too deep");
    int ax;
    MRT_TRY(mrt_normalize_axis(ctx, "scan output axis", axis, rank, &ax));
    for (int d = 0, k = 0; d < rank; d++) shape[d] = d == ax ? s->n : first->shape[k++];
    mrt_tensor *out;
    MRT_TRY(mrt_output_alloc(ctx, out_index, first->dtype, rank, shape, &out));
    if (!out) return MRT_STATUS_OK;
    /* item [outer..., inner...] goes to result [outer..., t, inner...] */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++) outer *= first->shape[d];
    for (int d = ax; d < first->rank; d++) inner *= first->shape[d];
    mrt_mover mv = mrt_mover_of(first->dtype); /* strings are duplicated, sub-byte types moved by bit field */
    for (int64_t t = 0; t < s->n; t++) {
        const mrt_tensor *it = &s->items[reverse ? s->n - 1 - t : t];
        for (int64_t o = 0; o < outer; o++) mrt_mover_copy(&mv, out->data, (o * s->n + t) * inner, it->data, o * inner, inner);
    }
    return mv.oom ? mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)") : MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ Loop */

static mrt_status mrt_cpu_loop(mrt_op_ctx *ctx)
{
    const mrt_graph *body = graph_attr(ctx, "body");
    if (!body) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "missing the body graph");
    int n_carried = ctx->n_inputs - 2;
    int n_scan = body->n_outputs - 1 - n_carried;
    if (n_carried < 0 || n_scan < 0 || body->n_inputs != n_carried + 2 || ctx->n_outputs > n_carried + n_scan)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "body has %d inputs and %d outputs; with %d loop-carried values it needs %d inputs and at "
                           "least %d outputs",
                           body->n_inputs, body->n_outputs, n_carried, n_carried + 2, n_carried + 1);
    const mrt_tensor *m_t = mrt_input(ctx, 0), *c_t = mrt_input(ctx, 1);
    int64_t max_trips = -1;
    if (m_t) {
        if (mrt_tensor_numel(m_t) != 1) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "M must be a single value");
        max_trips = mrt_load_i64(m_t->dtype, m_t->data, 0);
    }
    bool cond = true;
    if (c_t) MRT_TRY(read_bool_scalar(ctx, "cond", c_t, &cond));
    /* optional guard against hostile trip counts (the fuzzers set it): MRT_MAX_LOOP_ITERATIONS */
    const char *lim_env = getenv("MRT_MAX_LOOP_ITERATIONS");
    int64_t limit = lim_env && *lim_env ? strtoll(lim_env, NULL, 0) : -1;

    mrt_status st = MRT_STATUS_OK;
    mrt_value *in = calloc((size_t)n_carried + 2, sizeof *in);           /* body inputs */
    mrt_value *out = calloc((size_t)body->n_outputs + 1, sizeof *out);   /* body outputs */
    mrt_value *carried = calloc((size_t)n_carried + 1, sizeof *carried); /* owned loop-carried values */
    stack_list *scans = calloc((size_t)n_scan + 1, sizeof *scans);
    mrt_tensor iter_t, cond_t;
    memset(&iter_t, 0, sizeof iter_t);
    memset(&cond_t, 0, sizeof cond_t);
    if (!in || !out || !carried || !scans) st = mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    if (!st) st = mrt_tensor_alloc(&iter_t, MRT_DTYPE_INT64, 0, NULL);
    if (!st) st = mrt_tensor_alloc(&cond_t, MRT_DTYPE_BOOL, 0, NULL);
    for (int i = 0; !st && i < n_carried; i++) {
        const mrt_value *v = mrt_input_value(ctx, 2 + i);
        if (v) st = mrt_value_copy(&carried[i], v);
    }
    for (int64_t it = 0; !st && (max_trips < 0 || it < max_trips) && (!c_t || cond); it++) {
        ((int64_t *)iter_t.data)[0] = it;
        ((uint8_t *)cond_t.data)[0] = cond;
        in[0] = mrt_value_from_tensor(iter_t);
        in[1] = mrt_value_from_tensor(cond_t);
        for (int i = 0; i < n_carried; i++) in[2 + i] = carried[i];
        if (limit >= 0 && it >= limit) {
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "more than MRT_MAX_LOOP_ITERATIONS=%lld iterations",
                             (long long)limit);
            break;
        }
        st = mrt_op_run_subgraph(ctx, body, n_carried + 2, in, body->n_outputs, out);
        if (st) break;
        if (out[0].kind == MRT_VALUE_TENSOR) st = read_bool_scalar(ctx, "the body's cond output", &out[0].tensor, &cond);
        for (int i = 0; i < n_carried; i++) {
            mrt_value_release(&carried[i]);
            carried[i] = out[1 + i];
            memset(&out[1 + i], 0, sizeof out[1 + i]);
        }
        for (int k = 0; !st && k < n_scan; k++) st = stack_push(ctx, &scans[k], &out[1 + n_carried + k]);
        release_values(out, body->n_outputs);
        if (max_trips < 0 && !c_t && it > (int64_t)1 << 40)
            st = mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the loop has neither a trip count nor a condition");
    }
    for (int i = 0; !st && i < n_carried && i < ctx->n_outputs; i++) st = mrt_output_take_value(ctx, i, &carried[i]);
    for (int k = 0; !st && k < n_scan && n_carried + k < ctx->n_outputs; k++) {
        const mrt_type_info *decl = &body->values[body->outputs[1 + n_carried + k]].type;
        st = stack_to_output(ctx, n_carried + k, &scans[k], 0, false, decl);
    }
    release_values(carried, n_carried);
    release_values(out, body ? body->n_outputs : 0);
    for (int k = 0; scans && k < n_scan; k++) stack_free(&scans[k]);
    mrt_tensor_release(&iter_t);
    mrt_tensor_release(&cond_t);
    free(in);
    free(out);
    free(carried);
    free(scans);
    return st;
}

/* ------------------------------------------------------------------ Scan */

/* Slice t of `x` along `axis` (that axis removed), copied into a new tensor. */
static mrt_status take_slice(const mrt_tensor *x, int axis, int64_t t, mrt_tensor *out)
{
    int64_t shape[MRT_MAX_RANK];
    for (int d = 0, k = 0; d < x->rank; d++)
        if (d != axis) shape[k++] = x->shape[d];
    MRT_TRY(mrt_tensor_alloc(out, x->dtype, x->rank - 1, shape));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    int64_t len = x->shape[axis];
    mrt_mover mv = mrt_mover_of(x->dtype); /* strings are duplicated: the slice owns its copies */
    for (int64_t o = 0; o < outer; o++) mrt_mover_copy(&mv, out->data, o * inner, x->data, (o * len + t) * inner, inner);
    if (mv.oom) {
        mrt_tensor_release(out);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)");
    }
    return MRT_STATUS_OK;
}

/* One scan over scan inputs `xs` (n_scan_in of them) with initial states; results into `states` (owned) and
   stack lists. Shared by Scan 9+ and, per batch entry, Scan 8. */
typedef struct scan_spec {
    const mrt_graph *body;
    int n_state, n_scan_in, n_scan_out;
    const int64_t *in_axes, *in_dirs;
} scan_spec;

static mrt_status scan_run(mrt_op_ctx *ctx, const scan_spec *sp, const mrt_tensor *const *xs, int64_t seq_len,
                           mrt_value *states, stack_list *scans)
{
    int n_body_in = sp->n_state + sp->n_scan_in, n_body_out = sp->n_state + sp->n_scan_out;
    mrt_value *in = calloc((size_t)n_body_in + 1, sizeof *in), *out = calloc((size_t)n_body_out + 1, sizeof *out);
    mrt_tensor *slices = calloc((size_t)sp->n_scan_in + 1, sizeof *slices);
    mrt_status st = in && out && slices ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t t = 0; !st && t < seq_len; t++) {
        for (int j = 0; !st && j < sp->n_scan_in; j++) {
            int axis = (int)(sp->in_axes ? sp->in_axes[j] : 0);
            if (axis < 0) axis += xs[j]->rank;
            int64_t pos = sp->in_dirs && sp->in_dirs[j] ? seq_len - 1 - t : t;
            mrt_tensor_release(&slices[j]);
            st = take_slice(xs[j], axis, pos, &slices[j]);
            in[sp->n_state + j] = mrt_value_from_tensor(slices[j]);
        }
        for (int i = 0; i < sp->n_state; i++) in[i] = states[i];
        if (!st) st = mrt_op_run_subgraph(ctx, sp->body, n_body_in, in, n_body_out, out);
        if (st) break;
        for (int i = 0; i < sp->n_state; i++) {
            mrt_value_release(&states[i]);
            states[i] = out[i];
            memset(&out[i], 0, sizeof out[i]);
        }
        for (int k = 0; !st && k < sp->n_scan_out; k++) st = stack_push(ctx, &scans[k], &out[sp->n_state + k]);
        release_values(out, n_body_out);
    }
    for (int j = 0; slices && j < sp->n_scan_in; j++) mrt_tensor_release(&slices[j]);
    release_values(out, n_body_out);
    free(in);
    free(out);
    free(slices);
    return st;
}

static mrt_status scan_seq_len(const mrt_op_ctx *ctx, const scan_spec *sp, const mrt_tensor *const *xs, int64_t *len)
{
    *len = -1;
    for (int j = 0; j < sp->n_scan_in; j++) {
        if (!xs[j]) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scan input %d is missing", j);
        int axis;
        MRT_TRY(mrt_normalize_axis(ctx, "scan_input_axes", sp->in_axes ? sp->in_axes[j] : 0, xs[j]->rank, &axis));
        if (*len >= 0 && xs[j]->shape[axis] != *len)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scan inputs have different lengths (%lld and %lld)",
                               (long long)*len, (long long)xs[j]->shape[axis]);
        *len = xs[j]->shape[axis];
    }
    if (*len < 0) *len = 0;
    return MRT_STATUS_OK;
}

static mrt_status scan_v9(mrt_op_ctx *ctx, const scan_spec *base)
{
    scan_spec sp = *base;
    const int64_t *out_axes, *out_dirs;
    int64_t n_ia, n_id, n_oa, n_od;
    mrt_attr_ints(ctx, "scan_input_axes", &sp.in_axes, &n_ia);
    mrt_attr_ints(ctx, "scan_input_directions", &sp.in_dirs, &n_id);
    mrt_attr_ints(ctx, "scan_output_axes", &out_axes, &n_oa);
    mrt_attr_ints(ctx, "scan_output_directions", &out_dirs, &n_od);
    if ((n_ia && n_ia != sp.n_scan_in) || (n_id && n_id != sp.n_scan_in) || (n_oa && n_oa != sp.n_scan_out) ||
        (n_od && n_od != sp.n_scan_out))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scan axes/directions lists don't match the input/output counts");
    const mrt_tensor **xs = calloc((size_t)sp.n_scan_in + 1, sizeof *xs);
    mrt_value *states = calloc((size_t)sp.n_state + 1, sizeof *states);
    stack_list *scans = calloc((size_t)sp.n_scan_out + 1, sizeof *scans);
    mrt_status st = xs && states && scans ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int j = 0; !st && j < sp.n_scan_in; j++) xs[j] = mrt_input(ctx, sp.n_state + j);
    for (int i = 0; !st && i < sp.n_state; i++) {
        const mrt_value *v = mrt_input_value(ctx, i);
        st = v ? mrt_value_copy(&states[i], v) : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "state %d is missing", i);
    }
    int64_t len = 0;
    if (!st) st = scan_seq_len(ctx, &sp, xs, &len);
    if (!st) st = scan_run(ctx, &sp, xs, len, states, scans);
    for (int i = 0; !st && i < sp.n_state; i++) st = mrt_output_take_value(ctx, i, &states[i]);
    for (int k = 0; !st && k < sp.n_scan_out; k++) {
        const mrt_type_info *decl = &sp.body->values[sp.body->outputs[sp.n_state + k]].type;
        st = stack_to_output(ctx, sp.n_state + k, &scans[k], n_oa ? out_axes[k] : 0, n_od && out_dirs[k], decl);
    }
    release_values(states, sp.n_state);
    for (int k = 0; scans && k < sp.n_scan_out; k++) stack_free(&scans[k]);
    free(xs);
    free(states);
    free(scans);
    return st;
}

/* Scan-8: every state and scan input has a leading batch axis; scan inputs are [batch, seq, ...];
   optional sequence_lens (input 0) gives each batch entry's length. */
static mrt_status scan_v8(mrt_op_ctx *ctx, const scan_spec *base)
{
    scan_spec sp = *base;
    int64_t n_dirs;
    mrt_attr_ints(ctx, "directions", &sp.in_dirs, &n_dirs);
    if (n_dirs && n_dirs != sp.n_scan_in) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "directions has the wrong length");
    sp.in_axes = NULL;
    const mrt_tensor *lens = mrt_input(ctx, 0);
    const mrt_tensor *first = mrt_input(ctx, 1 + sp.n_state);
    if (!first || first->rank < 2) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scan inputs must be [batch, seq, ...]");
    int64_t batch = first->shape[0], seq = first->shape[1];
    /* every state and scan input is sliced per batch entry: check the leading axes before any slicing */
    for (int i = 0; i < sp.n_state + sp.n_scan_in; i++) {
        const mrt_tensor *t = mrt_input(ctx, 1 + i);
        bool scan = i >= sp.n_state;
        char sb[160];
        if (t && (t->rank < (scan ? 2 : 1) || t->shape[0] != batch || (scan && t->shape[1] != seq)))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "%s %d has shape %s; Scan-8 expects [%lld%s, ...] (batch%s of the first scan input)",
                               scan ? "scan input" : "state", scan ? i - sp.n_state : i,
                               mrt_shape_describe(t->rank, t->shape, sb, sizeof sb),
                               (long long)batch, scan ? ", seq" : "", scan ? " and sequence length" : "");
    }
    if (lens && mrt_tensor_numel(lens) != batch)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "sequence_lens has %lld values for a batch of %lld",
                           (long long)mrt_tensor_numel(lens), (long long)batch);
    for (int64_t b = 0; lens && b < batch; b++) {
        int64_t l = mrt_load_i64(lens->dtype, lens->data, b);
        if (l < 0 || l > seq)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                               (long long)b, (long long)l, (long long)seq);
    }
    mrt_value *states = calloc((size_t)sp.n_state + 1, sizeof *states);
    const mrt_tensor **xs = calloc((size_t)sp.n_scan_in + 1, sizeof *xs);
    mrt_tensor *xb = calloc((size_t)sp.n_scan_in + 1, sizeof *xb);
    stack_list *batch_states = calloc((size_t)sp.n_state + 1, sizeof *batch_states);
    stack_list *batch_scans = calloc((size_t)sp.n_scan_out + 1, sizeof *batch_scans);
    mrt_status st = states && xs && xb && batch_states && batch_scans ? MRT_STATUS_OK
                                                                       : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t b = 0; !st && b < batch; b++) {
        for (int i = 0; !st && i < sp.n_state; i++) {
            const mrt_tensor *s0 = mrt_input(ctx, 1 + i);
            mrt_tensor sl;
            st = s0 ? take_slice(s0, 0, b, &sl) : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "state %d is missing", i);
            if (!st) states[i] = mrt_value_from_tensor(sl);
        }
        for (int j = 0; !st && j < sp.n_scan_in; j++) {
            const mrt_tensor *x = mrt_input(ctx, 1 + sp.n_state + j);
            st = x ? take_slice(x, 0, b, &xb[j]) : mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "scan input %d is missing", j);
            xs[j] = &xb[j];
        }
        int64_t len = seq;
        if (!st && lens) len = mrt_load_i64(lens->dtype, lens->data, b);
        stack_list *scans = calloc((size_t)sp.n_scan_out + 1, sizeof *scans);
        if (!st && !scans) st = mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
        if (!st) st = scan_run(ctx, &sp, xs, len, states, scans);
        for (int i = 0; !st && i < sp.n_state; i++) st = stack_push(ctx, &batch_states[i], &states[i]);
        for (int k = 0; !st && k < sp.n_scan_out; k++) {
            /* stack this batch entry's sequence, then push it as one item of the batch stack */
            mrt_value stacked;
            memset(&stacked, 0, sizeof stacked);
            const mrt_tensor *f = scans[k].n ? &scans[k].items[0] : NULL;
            if (!f) {
                st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "empty sequences in Scan-8");
                break;
            }
            int64_t shape[MRT_MAX_RANK];
            shape[0] = scans[k].n;
            memcpy(shape + 1, f->shape, (size_t)f->rank * 8);
            st = mrt_tensor_alloc(&stacked.tensor, f->dtype, f->rank + 1, shape);
            stacked.kind = MRT_VALUE_TENSOR;
            int64_t per = mrt_tensor_numel(f);
            mrt_mover mv = mrt_mover_of(f->dtype);
            for (int64_t t = 0; !st && t < scans[k].n; t++)
                mrt_mover_copy(&mv, stacked.tensor.data, t * per, scans[k].items[t].data, 0, per);
            if (!st && mv.oom) st = mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (strings)");
            if (!st) st = stack_push(ctx, &batch_scans[k], &stacked);
            mrt_value_release(&stacked);
        }
        for (int k = 0; scans && k < sp.n_scan_out; k++) stack_free(&scans[k]);
        free(scans);
        release_values(states, sp.n_state);
        for (int j = 0; j < sp.n_scan_in; j++) mrt_tensor_release(&xb[j]);
    }
    for (int i = 0; !st && i < sp.n_state; i++) st = stack_to_output(ctx, i, &batch_states[i], 0, false, NULL);
    for (int k = 0; !st && k < sp.n_scan_out; k++) st = stack_to_output(ctx, sp.n_state + k, &batch_scans[k], 0, false, NULL);
    for (int i = 0; batch_states && i < sp.n_state; i++) stack_free(&batch_states[i]);
    for (int k = 0; batch_scans && k < sp.n_scan_out; k++) stack_free(&batch_scans[k]);
    free(states);
    free(xs);
    free(xb);
    free(batch_states);
    free(batch_scans);
    return st;
}

static mrt_status mrt_cpu_scan(mrt_op_ctx *ctx)
{
    const mrt_graph *body = graph_attr(ctx, "body");
    if (!body) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "missing the body graph");
    int64_t n_scan_in = mrt_attr_int(ctx, "num_scan_inputs", -1);
    int first_data = ctx->opset < 9 ? 1 : 0; /* Scan-8's sequence_lens */
    int n_state = ctx->n_inputs - first_data - (int)n_scan_in;
    int n_scan_out = body->n_outputs - n_state;
    if (n_scan_in < 1 || n_state < 0 || n_scan_out < 0 || body->n_inputs != n_state + n_scan_in ||
        ctx->n_outputs != n_state + n_scan_out)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "num_scan_inputs %lld does not fit %d inputs, %d outputs and a body with %d inputs and %d "
                           "outputs",
                           (long long)n_scan_in, ctx->n_inputs, ctx->n_outputs, body->n_inputs, body->n_outputs);
    scan_spec sp = {body, n_state, (int)n_scan_in, n_scan_out, NULL, NULL};
    return ctx->opset < 9 ? scan_v8(ctx, &sp) : scan_v9(ctx, &sp);
}

/* ------------------------------------------------------------------ SequenceMap */

static mrt_status mrt_cpu_sequence_map(mrt_op_ctx *ctx)
{
    const mrt_graph *body = graph_attr(ctx, "body");
    if (!body || body->n_inputs != ctx->n_inputs || body->n_outputs != ctx->n_outputs)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "the body must take one input per node input and give one "
                                                          "output per node output");
    const mrt_value *seq = mrt_input_value(ctx, 0);
    if (!seq || seq->kind != MRT_VALUE_SEQUENCE)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 must be a sequence");
    int64_t n = seq->n_items;
    for (int i = 1; i < ctx->n_inputs; i++) {
        const mrt_value *v = mrt_input_value(ctx, i);
        if (v && v->kind == MRT_VALUE_SEQUENCE && v->n_items != n)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "sequence input %d has %lld items, input 0 has %lld", i,
                               (long long)v->n_items, (long long)n);
    }
    mrt_value *in = calloc((size_t)ctx->n_inputs, sizeof *in), *out = calloc((size_t)ctx->n_outputs, sizeof *out);
    mrt_tensor **items = calloc((size_t)ctx->n_outputs, sizeof *items);
    mrt_status st = in && out && items ? MRT_STATUS_OK : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; !st && k < ctx->n_outputs; k++)
        if (!(items[k] = calloc((size_t)(n ? n : 1), sizeof(mrt_tensor)))) st = mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t t = 0; !st && t < n; t++) {
        for (int i = 0; i < ctx->n_inputs; i++) {
            const mrt_value *v = mrt_input_value(ctx, i);
            in[i] = v->kind == MRT_VALUE_SEQUENCE ? mrt_value_from_tensor(v->items[t]) : *v;
        }
        st = mrt_op_run_subgraph(ctx, body, ctx->n_inputs, in, ctx->n_outputs, out);
        for (int k = 0; !st && k < ctx->n_outputs; k++) {
            if (out[k].kind != MRT_VALUE_TENSOR) {
                st = mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "body output %d is not a tensor", k);
                break;
            }
            items[k][t] = out[k].tensor;
            memset(&out[k], 0, sizeof out[k]);
        }
        release_values(out, ctx->n_outputs);
    }
    for (int k = 0; k < ctx->n_outputs; k++) {
        if (!items || !items[k]) continue;
        if (!st) {
            const mrt_type_info *decl = &body->values[body->outputs[k]].type;
            mrt_dtype dt = n ? items[k][0].dtype : (decl->elem_type ? decl->elem_type : MRT_DTYPE_FLOAT);
            st = mrt_output_take_sequence(ctx, k, dt, n, items[k]);
        } else {
            for (int64_t t = 0; t < n; t++) mrt_tensor_release(&items[k][t]);
            free(items[k]);
        }
    }
    free(items);
    free(in);
    free(out);
    return st;
}

const mrt_kernel mrt_cpu_kernels_control[] = {
    {"", "If", 1, mrt_cpu_if, NULL},
    {"", "Loop", 1, mrt_cpu_loop, NULL},
    {"", "Scan", 8, mrt_cpu_scan, NULL},
    {"", "SequenceMap", 17, mrt_cpu_sequence_map, NULL},
    {0},
};
