/* Sessions: binding inputs, planning a graph (topological order, kernel resolution, shape inference,
 * constant folding, storage) and running it. The same machinery runs subgraphs for If/Loop/Scan. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/device.h"
#include "engine/concat_place.h"
#include "engine/exec.h"
#include "engine/fuse.h"
#include "engine/fp64.h"
#include "engine/function.h"
#include "engine/memplan.h"
#include "engine/weights.h"

/* Arena offsets are aligned for AVX-512 loads. */
#define MRT_ARENA_ALIGN 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

mrt_session_options mrt_session_options_default(void)
{
    mrt_session_options o;
    memset(&o, 0, sizeof o);
    o.device = "cpu";
    return o;
}

/* ------------------------------------------------------------------ exec lifetime */

static void release_value(mrt_exec *e, int vi)
{
    mrt_dev_release_value(e, vi);
    if (e->alloc[vi] != MRT_ALLOC_BORROWED) mrt_value_release(&e->vals[vi]);
    memset(&e->vals[vi], 0, sizeof e->vals[vi]);
    e->alloc[vi] = MRT_ALLOC_BORROWED;
}

/* Bytes a value's storage holds (a sequence: its items'). */
static size_t value_bytes(const mrt_value *v)
{
    if (v->kind == MRT_VALUE_TENSOR) return v->tensor.data ? mrt_tensor_nbytes(&v->tensor) : 0;
    size_t n = 0;
    for (int64_t i = 0; v->kind == MRT_VALUE_SEQUENCE && i < v->n_items; i++) n += mrt_tensor_nbytes(&v->items[i]);
    return n;
}

static void release_run_values(mrt_exec *e)
{
    for (int i = 0; i < e->graph->n_values; i++)
        if (e->alloc[i] == MRT_ALLOC_RUN) release_value(e, i);
}

static void release_plan(mrt_exec *e)
{
    for (int i = 0; i < e->n_children; i++) mrt_exec_free(e->children[i].exec);
    e->n_children = 0;
    mrt_dev_exec_release_plan(e);
    for (int i = 0; i < e->graph->n_values; i++) release_value(e, i);
    memset(e->state, 0, (size_t)e->graph->n_values);
    for (int i = 0; i < e->n_steps; i++) {
        mrt_fp64_free_shadow(e->steps[i].shadow);
        mrt_function_free_shadow(e->steps[i].call_shadow);
        if (e->steps[i].kernel_state && e->steps[i].kernel->release) e->steps[i].kernel->release(e->steps[i].kernel_state);
        mrt_fusion_free(e->steps[i].fusion);
        free(e->steps[i].placement_why);
    }
    mrt_plan_mem_free(&e->plan_mem); /* after the releases: a kernel's state may point into it */
    mrt_exec_weights_release(e);
    free(e->steps);
    e->steps = NULL;
    e->n_steps = 0;
    free(e->dies_at_start);
    free(e->dies_at);
    e->dies_at_start = e->dies_at = NULL;
    free(e->arena);
    e->arena = NULL;
    e->arena_bytes = 0;
    e->planned = false;
}

mrt_status mrt_exec_new(mrt_session *s, const mrt_graph *g, mrt_exec *parent, mrt_exec **out)
{
    mrt_exec *e = calloc(1, sizeof *e);
    if (!e) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (exec)");
    e->session = s;
    e->model = s->model;
    e->graph = g;
    e->parent = parent;
    size_t n = (size_t)(g->n_values ? g->n_values : 1);
    e->vals = calloc(n, sizeof *e->vals);
    e->state = calloc(n, 1);
    e->alloc = calloc(n, 1);
    e->fused_away = calloc(n, 1);
    e->weight_held = calloc(n, 1);
    e->weight_kept = calloc(n, 1);
    e->weight_readers = calloc(n, sizeof *e->weight_readers);
    if (!e->vals || !e->state || !e->alloc || !e->fused_away || !e->weight_held || !e->weight_kept || !e->weight_readers) {
        mrt_exec_free(e);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (exec values)");
    }
    mrt_status st = mrt_dev_exec_new(e);
    if (st) {
        mrt_exec_free(e);
        return st;
    }
    *out = e;
    return MRT_STATUS_OK;
}

void *mrt_plan_alloc(const mrt_op_ctx *ctx, size_t bytes)
{
    if (!ctx || !ctx->exec || mrt_check_alloc(bytes, "a kernel's prepared state") != MRT_STATUS_OK) return NULL;
    return mrt_plan_mem_alloc(&ctx->exec->plan_mem, bytes);
}

void *mrt_exec_scratch(mrt_exec *e, size_t bytes)
{
    if (bytes <= e->scratch_bytes && e->scratch) return e->scratch;
    if (bytes > SIZE_MAX - MRT_ARENA_ALIGN || mrt_check_alloc(bytes, "a kernel workspace") != MRT_STATUS_OK) return NULL;
    size_t rounded = (bytes + MRT_ARENA_ALIGN - 1) & ~(size_t)(MRT_ARENA_ALIGN - 1);
    void *p = aligned_alloc(MRT_ARENA_ALIGN, rounded ? rounded : MRT_ARENA_ALIGN);
    if (!p) return NULL;
    free(e->scratch);
    e->scratch = p;
    e->scratch_bytes = rounded;
    e->scratch_grows++;
    return p;
}

void mrt_exec_free(mrt_exec *e)
{
    if (!e) return;
    if (e->vals) release_plan(e);
    mrt_dev_exec_free(e);
    free(e->scratch);
    free(e->ctx_in);
    free(e->ctx_out);
    free(e->ctx_in_copy);
    free(e->sig_work);
    free(e->vals);
    free(e->state);
    free(e->alloc);
    free(e->fused_away);
    free(e->weight_held);
    free(e->weight_kept);
    free(e->weight_readers);
    free(e->order);
    free(e->sig);
    free(e->children);
    free(e);
}

/* ------------------------------------------------------------------ topological order */

static mrt_status collect_outer_refs(const mrt_graph *sub, const mrt_graph *target, int **list, int *n, int *cap);
static mrt_status node_outer_refs(const mrt_node *nd, const mrt_graph *target, int **list, int *n, int *cap);

mrt_status mrt_node_outer_refs(const mrt_node *nd, const mrt_graph *target, int **list, int *n, int *cap)
{
    return node_outer_refs(nd, target, list, n, cap);
}

/* Append to list the values of `target` that node nd's subgraph attributes read (implicit inputs of If/Loop/Scan,
   at any depth). */
static mrt_status node_outer_refs(const mrt_node *nd, const mrt_graph *target, int **list, int *n, int *cap)
{
    for (int a = 0; a < nd->n_attrs; a++) {
        const mrt_attr *at = &nd->attrs[a];
        if (at->type == MRT_ATTR_GRAPH && at->g) MRT_TRY(collect_outer_refs(at->g, target, list, n, cap));
        if (at->type == MRT_ATTR_GRAPHS)
            for (int64_t j = 0; j < at->n; j++) MRT_TRY(collect_outer_refs(at->graphs[j], target, list, n, cap));
    }
    return MRT_STATUS_OK;
}

/* Values of `target` referenced from inside the subgraph `sub`. */
static mrt_status collect_outer_refs(const mrt_graph *sub, const mrt_graph *target, int **list, int *n, int *cap)
{
    for (int i = 0; i < sub->n_values; i++) {
        if (!sub->values[i].is_outer) continue;
        int idx = mrt_graph_find_value(target, sub->values[i].name);
        if (idx < 0) continue;
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 8;
            int *nl = realloc(*list, (size_t)nc * sizeof(int));
            if (!nl) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (outer refs)");
            *list = nl;
            *cap = nc;
        }
        (*list)[(*n)++] = idx;
    }
    for (int k = 0; k < sub->n_nodes; k++) MRT_TRY(node_outer_refs(&sub->nodes[k], target, list, n, cap));
    return MRT_STATUS_OK;
}

static bool value_is_source(const mrt_graph_value *v) { return v->is_input || v->initializer || v->is_outer; }

static mrt_status topo_sort(mrt_exec *e)
{
    const mrt_graph *g = e->graph;
    int nn = g->n_nodes;
    mrt_status st = MRT_STATUS_OK;
    free(e->order);
    e->order = malloc((size_t)(nn ? nn : 1) * sizeof(int));
    int *pending = calloc((size_t)(nn ? nn : 1), sizeof(int));        /* unmet deps per node */
    int *cons_start = calloc((size_t)g->n_values + 1, sizeof(int));   /* CSR consumer lists */
    int **deps = calloc((size_t)(nn ? nn : 1), sizeof(int *));
    int *n_deps = calloc((size_t)(nn ? nn : 1), sizeof(int));
    int *queue = malloc((size_t)(nn ? nn : 1) * sizeof(int));
    int *cons = NULL;
    if (!e->order || !pending || !cons_start || !deps || !n_deps || !queue) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (topological sort)");
        goto done;
    }
    for (int k = 0; k < nn; k++) {
        const mrt_node *nd = &g->nodes[k];
        int cap = 0;
        for (int i = 0; i < nd->n_inputs; i++) {
            if (nd->inputs[i] < 0) continue;
            if (n_deps[k] == cap) {
                cap = cap ? cap * 2 : 8;
                int *nl = realloc(deps[k], (size_t)cap * sizeof(int));
                if (!nl) {
                    st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (topological sort)");
                    goto done;
                }
                deps[k] = nl;
            }
            deps[k][n_deps[k]++] = nd->inputs[i];
        }
        st = node_outer_refs(nd, g, &deps[k], &n_deps[k], &cap);
        if (st) goto done;
        for (int d = 0; d < n_deps[k]; d++) {
            const mrt_graph_value *v = &g->values[deps[k][d]];
            if (value_is_source(v)) continue;
            if (v->producer < 0) {
                st = mrt_fail(MRT_STATUS_INVALID_MODEL,
                              "node '%s' (%s): input '%s' is not defined (no node produces it and it is not a graph "
                              "input or initializer)",
                              nd->name, nd->op_type, v->name);
                goto done;
            }
            pending[k]++;
            cons_start[deps[k][d] + 1]++;
        }
    }
    for (int i = 0; i < g->n_values; i++) cons_start[i + 1] += cons_start[i];
    cons = malloc((size_t)(cons_start[g->n_values] ? cons_start[g->n_values] : 1) * sizeof(int));
    int *fill = calloc((size_t)g->n_values + 1, sizeof(int));
    if (!cons || !fill) {
        free(fill);
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (topological sort)");
        goto done;
    }
    for (int k = 0; k < nn; k++)
        for (int d = 0; d < n_deps[k]; d++) {
            int v = deps[k][d];
            if (value_is_source(&g->values[v])) continue;
            cons[cons_start[v] + fill[v]++] = k;
        }
    free(fill);
    int head = 0, tail = 0, n_done = 0;
    for (int k = 0; k < nn; k++)
        if (!pending[k]) queue[tail++] = k;
    while (head < tail) {
        int k = queue[head++];
        e->order[n_done++] = k;
        const mrt_node *nd = &g->nodes[k];
        for (int o = 0; o < nd->n_outputs; o++) {
            int v = nd->outputs[o];
            if (v < 0) continue;
            for (int c = cons_start[v]; c < cons_start[v + 1]; c++)
                if (--pending[cons[c]] == 0) queue[tail++] = cons[c];
        }
    }
    if (n_done < nn) {
        for (int k = 0; k < nn; k++)
            if (pending[k]) {
                st = mrt_fail(MRT_STATUS_INVALID_MODEL,
                              "the graph has a cycle: node '%s' (%s) depends, through its inputs, on its own output",
                              g->nodes[k].name, g->nodes[k].op_type);
                break;
            }
    }
done:
    for (int k = 0; deps && k < nn; k++) free(deps[k]);
    free(deps);
    free(n_deps);
    free(pending);
    free(cons_start);
    free(cons);
    free(queue);
    return st;
}

/* ------------------------------------------------------------------ kernel resolution */

static mrt_status unknown_op_error(const mrt_exec *e, const mrt_node *nd, int64_t opset, bool has_opdef)
{
    int versions[64];
    int nv = mrt_registry_versions(e->session->registry, nd->domain, nd->op_type, versions, 64);
    char vs[512] = "none";
    size_t pos = 0;
    for (int i = 0; i < nv && pos < sizeof vs; i++)
        pos += (size_t)snprintf(vs + pos, sizeof vs - pos, i ? ", %d" : "%d", versions[i]);
    const char *dom = nd->domain[0] ? nd->domain : "ai.onnx";
    char plugins[512];
    mrt_registry_plugin_list(e->session->registry, plugins, sizeof plugins);
    if (has_opdef)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED,
                        "node '%s': op %s::%s (opset %lld) has no %s kernel (versions known: %s)", nd->name, dom,
                        nd->op_type, (long long)opset, e->session->opt.device ? e->session->opt.device : "cpu", vs);
    char opset_str[32];
    if (opset == INT64_MAX)
        snprintf(opset_str, sizeof opset_str, "(not imported)");
    else
        snprintf(opset_str, sizeof opset_str, "%lld", (long long)opset);
    return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED,
                    "node '%s': no kernel for domain '%s', op '%s', opset %s (versions minirt has: %s; plugins "
                    "loaded: %s). Custom ops can be added with a plugin (--plugin LIB.so), see docs/custom_ops.md",
                    nd->name, dom, nd->op_type, opset_str, vs, plugins);
}

static mrt_status resolve(mrt_exec *e, const mrt_node *nd, mrt_step *step)
{
    int64_t opset = e->function ? mrt_function_opset(e->function, nd->domain) : -1;
    if (opset < 0) opset = mrt_model_opset(e->model, nd->domain);
    if (opset < 0) {
        if (!nd->domain[0])
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): the model imports no opset for the ONNX domain",
                            nd->name, nd->op_type);
        opset = INT64_MAX; /* custom domains exported without an opset import: take the newest version */
    }
    step->opset = opset;
    if (e->function) MRT_TRY(mrt_function_shadow_node(nd, e->caller, e->function, &step->call_shadow));
    if (e->session->opt.precision == MRT_PRECISION_FP64)
        MRT_TRY(mrt_fp64_shadow_node(step->call_shadow ? step->call_shadow : nd, &step->shadow));
    step->def = mrt_registry_find_opdef(e->session->registry, nd->domain, nd->op_type, opset);
    step->kernel = mrt_registry_find_kernel(e->session->registry, MRT_DEVICE_CPU, nd->domain, nd->op_type, opset);
    /* an op without a kernel runs its function body (the model's, or the standard's); so does one the user asked
       to expand, except inside its own body */
    bool inside_own_body = e->function && strcmp(e->function->name, nd->op_type) == 0 &&
                           strcmp(e->function->domain, mrt_domain_normalize(nd->domain)) == 0;
    if (!step->def || !step->kernel || (mrt_session_expands(e->session, nd->op_type) && !inside_own_body)) {
        const mrt_function *f;
        MRT_TRY(mrt_function_for_node(e->session, nd, opset, &f));
        if (f) {
            step->def = &mrt_function_opdef;
            step->kernel = &mrt_function_kernel;
        }
    }
    if (!step->def || !step->kernel) return unknown_op_error(e, nd, opset, step->def != NULL);
    const mrt_opdef *d = step->def;
    if (nd->n_inputs < d->min_inputs || (d->max_inputs >= 0 && nd->n_inputs > d->max_inputs))
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): has %d inputs, expected %d to %d", nd->name,
                        nd->op_type, nd->n_inputs, d->min_inputs, d->max_inputs);
    if (nd->n_outputs < d->min_outputs || (d->max_outputs >= 0 && nd->n_outputs > d->max_outputs))
        return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): has %d outputs, expected %d to %d", nd->name,
                        nd->op_type, nd->n_outputs, d->min_outputs, d->max_outputs);
    /* "" marks an omitted optional argument; the first min_* ones are required, and kernels rely on them */
    for (int i = 0; i < d->min_inputs && i < nd->n_inputs && !(d->flags & MRT_OPDEF_OPTIONAL_LEADING); i++)
        if (nd->inputs[i] < 0)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): input %d is required but its name is empty",
                            nd->name, nd->op_type, i);
    for (int i = 0; i < d->min_outputs && i < nd->n_outputs; i++)
        if (nd->outputs[i] < 0)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "node '%s' (%s): output %d is required but its name is empty",
                            nd->name, nd->op_type, i);
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ node contexts */

typedef struct ctx_buf {
    const mrt_value **in;
    mrt_value **out;
    mrt_value *in_copy; /* plan-time views of inputs with data hidden when not constant */
    mrt_attr_mismatch mismatch;
} ctx_buf;

/* A kernel that read an attribute of the wrong type got its default: fail the node instead (the type error
   explains any later failure too, so it takes precedence). */
static mrt_status attr_verdict(const ctx_buf *b, mrt_status st)
{
    if (!b->mismatch.name) return st;
    return mrt_fail(MRT_STATUS_INVALID_MODEL, "attribute '%s' has type %s, expected %s", b->mismatch.name,
                    mrt_attr_type_name(b->mismatch.got), mrt_attr_type_name(b->mismatch.want));
}

static mrt_status ctx_prepare(mrt_exec *e, const mrt_step *step, bool planning, mrt_op_ctx *ctx, ctx_buf *b)
{
    const mrt_node *nd = step->shadow ? step->shadow : step->call_shadow ? step->call_shadow : &e->graph->nodes[step->node];
    int ni = nd->n_inputs ? nd->n_inputs : 1, no = nd->n_outputs ? nd->n_outputs : 1;
    memset(&b->mismatch, 0, sizeof b->mismatch);
    /* the exec keeps the pointer arrays (grown to the widest node once): no allocation per node in a run */
    if (ni > e->ctx_cap_in) {
        const mrt_value **in = realloc(e->ctx_in, (size_t)ni * sizeof *in);
        if (in) e->ctx_in = in;
        mrt_value *copy = in ? realloc(e->ctx_in_copy, (size_t)ni * sizeof *copy) : NULL;
        if (!copy) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (node context)");
        e->ctx_in_copy = copy;
        e->ctx_cap_in = ni;
    }
    if (no > e->ctx_cap_out) {
        mrt_value **out = realloc(e->ctx_out, (size_t)no * sizeof *out);
        if (!out) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (node context)");
        e->ctx_out = out;
        e->ctx_cap_out = no;
    }
    b->in = e->ctx_in;
    b->out = e->ctx_out;
    b->in_copy = e->ctx_in_copy;
    memset(b->in, 0, (size_t)ni * sizeof *b->in);
    memset(b->out, 0, (size_t)no * sizeof *b->out);
    memset(b->in_copy, 0, (size_t)ni * sizeof *b->in_copy);
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0) continue;
        b->in_copy[i] = e->vals[v];
        if (planning && e->state[v] != MRT_VS_CONST) {
            b->in_copy[i].tensor.data = NULL;
            b->in_copy[i].items = NULL;
        }
        b->in[i] = &b->in_copy[i];
    }
    for (int i = 0; i < nd->n_outputs; i++) b->out[i] = nd->outputs[i] >= 0 ? &e->vals[nd->outputs[i]] : NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->node = nd;
    ctx->model = e->model;
    ctx->opset = step->opset;
    ctx->n_inputs = nd->n_inputs;
    ctx->inputs = b->in;
    ctx->n_outputs = nd->n_outputs;
    ctx->outputs = b->out;
    ctx->n_threads = e->session->n_threads;
    ctx->pool = e->session->pool;
    ctx->no_winograd = e->session->opt.no_winograd;
    ctx->planning = planning;
    ctx->exec = e;
    ctx->attr_mismatch = &b->mismatch;
    return MRT_STATUS_OK;
}

/* The arrays belong to the exec (see ctx_prepare); nothing to free per node. */
static void ctx_release(ctx_buf *b) { (void)b; }

/* Make sure the message names the node (kernels usually do already via mrt_op_fail). */
static mrt_status node_error(const mrt_node *nd, mrt_status st)
{
    if (strncmp(mrt_last_error(), "node '", 6) != 0)
        mrt_fail_prefix(st, "node '%s' (%s): ", nd->name, nd->op_type);
    return st;
}

/* Allocate storage for every declared tensor output of a node; zero-filled (kernels may accumulate). */
static mrt_status alloc_outputs(mrt_exec *e, const mrt_node *nd, mrt_alloc_kind kind)
{
    for (int i = 0; i < nd->n_outputs; i++) {
        int v = nd->outputs[i];
        if (v < 0 || e->vals[v].kind != MRT_VALUE_TENSOR) continue;
        mrt_tensor shape = e->vals[v].tensor;
        mrt_status st = mrt_tensor_alloc(&e->vals[v].tensor, shape.dtype, shape.rank, shape.shape);
        if (st) return node_error(nd, st);
        e->alloc[v] = (uint8_t)kind;
    }
    return MRT_STATUS_OK;
}

static mrt_status check_outputs_produced(mrt_exec *e, const mrt_node *nd, const mrt_step *step)
{
    for (int i = 0; i < nd->n_outputs; i++) {
        int v = i == 0 && step && step->fusion ? step->fusion->out_value : nd->outputs[i];
        if (v < 0) continue;
        const mrt_value *val = &e->vals[v];
        bool on_device = e->dev && e->dev->ptr[v]; /* a CUDA kernel's run-time output: its bytes are on the device */
        if (val->kind == MRT_VALUE_TENSOR && !val->tensor.data && !on_device)
            return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "node '%s' (%s): the kernel did not produce output %d ('%s')",
                            nd->name, nd->op_type, i, e->graph->values[v].name);
    }
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ planning */

static const mrt_value *find_outer_value(const mrt_exec *e, const char *name, uint8_t *state)
{
    for (const mrt_exec *p = e->parent; p; p = p->parent) {
        int idx = mrt_graph_find_value(p->graph, name);
        if (idx >= 0 && p->state[idx] != MRT_VS_UNSET) {
            *state = p->state[idx] == MRT_VS_CONST ? MRT_VS_CONST : MRT_VS_SHAPED;
            return &p->vals[idx];
        }
    }
    return NULL;
}

static bool foldable(const mrt_exec *e, const mrt_step *step)
{
    if (e->session->opt.no_fold || e->session->opt.override_input || (step->def->flags & (MRT_OPDEF_NO_FOLD | MRT_OPDEF_HAS_SUBGRAPH))) return false;
    const mrt_node *nd = &e->graph->nodes[step->node];
    bool shape_only = step->def->flags & MRT_OPDEF_FOLD_ON_SHAPE;
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0 || e->state[v] == MRT_VS_CONST) continue;
        if (!(shape_only && e->state[v] == MRT_VS_SHAPED)) return false;
    }
    return true;
}

static mrt_status plan_node(mrt_exec *e, mrt_step *step)
{
    const mrt_node *nd = &e->graph->nodes[step->node];
    MRT_TRY(resolve(e, nd, step));
    bool any_dynamic = false;
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] >= 0 && e->state[nd->inputs[i]] == MRT_VS_DYNAMIC) any_dynamic = true;
    unsigned packed = 0; /* inputs whose data the kernel's prepare packed (mrt_op_ctx.prepared_inputs) */
    if (any_dynamic) {
        step->dynamic = true;
        MRT_TRY(mrt_dev_place_step(e, step, NULL));
    } else {
        mrt_op_ctx ctx;
        ctx_buf b;
        mrt_status st = ctx_prepare(e, step, true, &ctx, &b);
        for (int i = 0; !st && i < nd->n_outputs; i++)
            if (b.out[i]) memset(b.out[i], 0, sizeof *b.out[i]);
        if (!st) st = attr_verdict(&b, step->def->infer(&ctx));
        if (st) {
            ctx_release(&b);
            return node_error(nd, st);
        }
        step->dynamic = ctx.dynamic;
        if (!step->dynamic && foldable(e, step)) {
            st = alloc_outputs(e, nd, MRT_ALLOC_PLAN);
            if (!st) {
                ctx.planning = true;
                /* the kernel sees real data: every input is constant */
                for (int i = 0; i < nd->n_inputs; i++)
                    if (nd->inputs[i] >= 0) b.in_copy[i] = e->vals[nd->inputs[i]];
                st = attr_verdict(&b, step->kernel->run(&ctx));
            }
            if (!st) st = check_outputs_produced(e, nd, NULL);
            ctx_release(&b);
            if (st) return node_error(nd, st);
            step->folded = true;
            for (int i = 0; i < nd->n_outputs; i++)
                if (nd->outputs[i] >= 0) e->state[nd->outputs[i]] = MRT_VS_CONST;
            mrt_exec_weights_step_planned(e, step, 0); /* a folded output may share its input's bytes: kept */
            return MRT_STATUS_OK;
        }
        /* device "cuda": the CUDA row when it takes the node (a dynamic step's shapes are checked at run time) */
        st = mrt_dev_place_step(e, step, step->dynamic ? NULL : &ctx);
        /* the chosen row sizes its own scratch (registry.h); refused here, naming the node, rather than as an
           anonymous arena too large to allocate */
        ctx.workspace_request = 0; /* only the row's hook sizes it */
        if (!st && !step->dynamic && step->kernel->workspace) st = attr_verdict(&b, step->kernel->workspace(&ctx));
        if (!st) st = mrt_check_alloc(ctx.workspace_request, "the kernel's workspace for these input shapes");
        step->ws_bytes = st || step->dynamic ? 0 : ctx.workspace_request;
        /* once per plan: what the kernel can do ahead with the constants it sees (pack weights); not when an input
           may be replaced at run time (teacher forcing), where the constants would be stale */
        if (!st && !step->dynamic && step->kernel->prepare && !e->session->opt.override_input &&
            !e->run_once) {
            st = attr_verdict(&b, step->kernel->prepare(&ctx, &step->kernel_state));
            if (step->kernel_state) packed = ctx.prepared_inputs;
        }
        ctx_release(&b);
        if (st) return node_error(nd, st);
    }
    mrt_exec_weights_step_planned(e, step, packed);
    for (int i = 0; i < nd->n_outputs; i++) {
        int v = nd->outputs[i];
        if (v < 0) continue;
        bool seq = e->vals[v].kind != MRT_VALUE_TENSOR;
        e->state[v] = step->dynamic || seq ? MRT_VS_DYNAMIC : MRT_VS_SHAPED;
    }
    return MRT_STATUS_OK;
}

/* Storage for values whose shapes are known at plan time: graph outputs get their own buffers (never
   aliased); every other intermediate gets an offset in one arena from the memory planner, unless
   no_mem_plan asks for one buffer per value. */
static bool arena_candidate(const mrt_exec *e, int v)
{
    /* strings own heap copies: they get their own buffers so releasing the value frees them */
    return v >= 0 && e->state[v] == MRT_VS_SHAPED && e->vals[v].kind == MRT_VALUE_TENSOR &&
           e->vals[v].tensor.dtype != MRT_DTYPE_STRING && !e->graph->values[v].is_output;
}

static mrt_status plan_storage(mrt_exec *e)
{
    const mrt_graph *g = e->graph;
    int nv = g->n_values;
    /* entries [0, nv) are the graph's values, [nv, nv + n_steps) the steps' workspaces */
    int nm = nv + e->n_steps;
    mrt_memplan_value *mv = calloc((size_t)(nm ? nm : 1), sizeof *mv);
    size_t *offsets = calloc((size_t)(nm ? nm : 1), sizeof *offsets);
    mrt_concat_alias *al = NULL;
    int *refs = NULL, n_refs = 0, cap_refs = 0;
    mrt_status st = MRT_STATUS_OK;
    if (!mv || !offsets) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory plan)");
        goto done;
    }
    for (int i = 0; i < nm; i++) mv[i].inplace_of = -1;
    size_t naive = 0;
    for (int s = 0; s < e->n_steps; s++) {
        const mrt_step *step = &e->steps[s];
        const mrt_node *nd = &g->nodes[step->node];
        for (int i = 0; !step->folded && i < nd->n_outputs; i++) {
            int v = nd->outputs[i];
            if (v < 0 || e->state[v] != MRT_VS_SHAPED || e->vals[v].kind != MRT_VALUE_TENSOR) continue;
            if (e->fused_away[v]) continue; /* never computed: a fused chain skips it */
            size_t nb = mrt_tensor_nbytes(&e->vals[v].tensor);
            naive += nb;
            if (!arena_candidate(e, v)) continue;
            mv[v].size = nb ? nb : 1;
            /* a fused chain's last value is written by the chain's producer (and never in place: the producer
               writes results before its epilogue reads the residual operand) */
            int at = step->fused_into >= 0 ? step->fused_into : s;
            mv[v].first_use = at;
            mv[v].last_use = s;
            if (step->fused_into >= 0) continue;
            int x = i == 0 && nd->n_inputs > 0 ? nd->inputs[0] : -1;
            /* same byte size and element width: x is not broadcast, so y[i] reads x[i] only (the planner's
               aligned "fits" test alone would let a broadcast x be overwritten while still being read) */
            if (x >= 0 && mv[x].size == mv[v].size && (step->def->flags & MRT_OPDEF_INPLACE) &&
                mrt_dtype_bits(e->vals[x].tensor.dtype) == mrt_dtype_bits(e->vals[v].tensor.dtype))
                mv[v].inplace_of = x; /* the planner grants it only if x dies at this step */
        }
        if (!step->folded && !step->dynamic && step->ws_bytes) {
            mv[nv + s].size = step->ws_bytes;
            mv[nv + s].first_use = mv[nv + s].last_use = s;
            naive += step->ws_bytes;
        }
        /* readers extend lifetimes, including values read from inside subgraphs; a folded step reads nothing at run
           time (wav2vec2's GroupNorm: a folded Shape of the Conv's output kept its Reshape from running in place, a
           6.5 MB copy, 0.3-0.6 ms) */
        if (step->folded) continue;
        n_refs = 0;
        st = node_outer_refs(nd, g, &refs, &n_refs, &cap_refs);
        if (st) goto done;
        for (int i = 0; i < nd->n_inputs + n_refs; i++) {
            int v = i < nd->n_inputs ? nd->inputs[i] : refs[i - nd->n_inputs];
            if (v >= 0 && mv[v].size && s > mv[v].last_use) mv[v].last_use = s;
        }
        /* a Mul fused in before this step: its operands are read here */
        const mrt_fusion *f = step->fusion;
        for (int i = 0; f && f->in_value >= 0 && i < 2; i++) {
            int v = i == 0 ? f->in_value : f->scale_value;
            if (v >= 0 && mv[v].size && s > mv[v].last_use) mv[v].last_use = s;
        }
    }
    e->naive_bytes = naive;
    e->concat_inputs_in_place = 0;
    for (int s = 0; s < e->n_steps; s++) e->steps[s].inputs_in_output = false;
    if (!e->session->opt.no_mem_plan && !e->dev) { /* CUDA's Concat copies every input */
        al = malloc((size_t)(nv ? nv : 1) * sizeof *al);
        if (!al) {
            st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory plan)");
            goto done;
        }
        e->concat_inputs_in_place = mrt_place_concat_inputs(e, mv, al, MRT_ARENA_ALIGN);
    }
    e->lower_bound_bytes = mrt_memplan_lower_bound(nm, mv, MRT_ARENA_ALIGN);
    if (!e->session->opt.no_mem_plan) {
        mrt_memplan_result res = {offsets, 0, 0};
        st = mrt_memplan(nm, mv, MRT_ARENA_ALIGN, &res);
        if (st) goto done;
        e->arena_bytes = res.peak;
        e->inplace_count = res.inplace_count;
        if (res.peak) {
            st = mrt_check_alloc(res.peak, "the intermediate-tensor arena");
            if (st) goto done;
            e->arena = aligned_alloc(MRT_ARENA_ALIGN, (res.peak + MRT_ARENA_ALIGN - 1) & ~(size_t)(MRT_ARENA_ALIGN - 1));
            if (!e->arena) {
                st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory allocating the %zu-byte arena", res.peak);
                goto done;
            }
        }
        for (int v = 0; v < nv; v++) {
            if (al && al[v].into >= 0) {
                e->vals[v].tensor.data = (char *)e->arena + mrt_concat_alias_offset(al, offsets, v);
                e->alloc[v] = MRT_ALLOC_BORROWED;
                continue;
            }
            if (!mv[v].size) continue;
            e->vals[v].tensor.data = (char *)e->arena + offsets[v];
            e->alloc[v] = MRT_ALLOC_BORROWED;
        }
        for (int s = 0; s < e->n_steps; s++) e->steps[s].ws_offset = offsets[nv + s];
    }
    for (int s = 0; s < e->n_steps && !st; s++) {
        const mrt_step *step = &e->steps[s];
        if (step->folded || step->dynamic) continue;
        const mrt_node *nd = &g->nodes[step->node];
        for (int i = 0; i < nd->n_outputs && !st; i++) {
            int v = nd->outputs[i];
            if (v < 0 || e->vals[v].kind != MRT_VALUE_TENSOR || e->state[v] != MRT_VS_SHAPED || e->fused_away[v]) continue;
            if (!e->session->opt.no_mem_plan && (mv[v].size || (al && al[v].into >= 0))) continue;
            mrt_tensor shape = e->vals[v].tensor;
            st = mrt_tensor_alloc(&e->vals[v].tensor, shape.dtype, shape.rank, shape.shape);
            if (st) st = node_error(nd, st);
            else e->alloc[v] = MRT_ALLOC_PLAN;
        }
    }
done:
    free(mv);
    free(offsets);
    free(refs);
    free(al);
    return st;
}

/* Where run-time storage dies: each value's last reader (inputs, values read from inside subgraphs, a fused Mul's
   operands), or its producer when nothing reads it. Graph outputs live on. Values planned into the arena or
   allocated with the plan are listed too but keep their storage: only MRT_ALLOC_RUN values are freed. Without
   this, every dynamically shaped tensor of a run stayed allocated until the next run (Mask R-CNN's region
   heads: 1.8 GB resident against ONNX Runtime's 0.8). */
static mrt_status plan_release_points(mrt_exec *e)
{
    const mrt_graph *g = e->graph;
    int nv = g->n_values, *last = malloc((size_t)(nv ? nv : 1) * sizeof *last);
    int *refs = NULL, n_refs = 0, cap_refs = 0;
    e->dies_at_start = calloc((size_t)e->n_steps + 1, sizeof *e->dies_at_start);
    mrt_status st = last && e->dies_at_start ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    for (int v = 0; !st && v < nv; v++) last[v] = -1;
    for (int s = 0; !st && s < e->n_steps; s++) {
        const mrt_step *step = &e->steps[s];
        const mrt_node *nd = &g->nodes[step->node];
        for (int i = 0; i < nd->n_outputs; i++)
            if (nd->outputs[i] >= 0 && last[nd->outputs[i]] < s) last[nd->outputs[i]] = s;
        n_refs = 0;
        st = node_outer_refs(nd, g, &refs, &n_refs, &cap_refs);
        for (int i = 0; !st && i < nd->n_inputs + n_refs; i++) {
            int v = i < nd->n_inputs ? nd->inputs[i] : refs[i - nd->n_inputs];
            if (v >= 0) last[v] = s;
        }
        const mrt_fusion *f = step->fusion;
        for (int i = 0; f && f->in_value >= 0 && i < 2; i++)
            if ((i == 0 ? f->in_value : f->scale_value) >= 0) last[i == 0 ? f->in_value : f->scale_value] = s;
    }
    for (int i = 0; !st && i < g->n_outputs; i++) last[g->outputs[i]] = -1;
    int n = 0;
    for (int v = 0; !st && v < nv; v++)
        if (last[v] >= 0) e->dies_at_start[last[v] + 1]++, n++;
    if (!st) e->dies_at = malloc((size_t)(n ? n : 1) * sizeof *e->dies_at);
    if (!st && !e->dies_at) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    for (int s = 0; !st && s < e->n_steps; s++) e->dies_at_start[s + 1] += e->dies_at_start[s];
    /* a counting sort by step: filling moves each step's start to the next one's, then they shift back */
    for (int v = 0; !st && v < nv; v++)
        if (last[v] >= 0) e->dies_at[e->dies_at_start[last[v]]++] = v;
    for (int s = e->n_steps; !st && s > 0; s--) e->dies_at_start[s] = e->dies_at_start[s - 1];
    if (!st) e->dies_at_start[0] = 0;
    free(last);
    free(refs);
    return st;
}

/* Dead-node elimination: a node is live when one of its outputs is a graph output or is read (directly
   or from inside a subgraph) by a live node. Walking the topological order backwards sees consumers first. */
static mrt_status mark_live(const mrt_exec *e, bool *live)
{
    const mrt_graph *g = e->graph;
    bool *needed = calloc((size_t)g->n_values + 1, sizeof *needed);
    int *refs = NULL, n_refs = 0, cap_refs = 0;
    if (!needed) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    for (int i = 0; i < g->n_outputs; i++) needed[g->outputs[i]] = true;
    mrt_status st = MRT_STATUS_OK;
    for (int s = g->n_nodes - 1; s >= 0 && !st; s--) {
        const mrt_node *nd = &g->nodes[e->order[s]];
        bool is_live = false;
        for (int i = 0; i < nd->n_outputs; i++) is_live |= nd->outputs[i] >= 0 && needed[nd->outputs[i]];
        live[e->order[s]] = is_live;
        if (!is_live) continue;
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0) needed[nd->inputs[i]] = true;
        n_refs = 0;
        st = node_outer_refs(nd, g, &refs, &n_refs, &cap_refs);
        for (int i = 0; i < n_refs; i++) needed[refs[i]] = true;
    }
    free(needed);
    free(refs);
    return st;
}

/* Fuse element-wise successors into their producers (engine/fuse.c), unless every tensor must be observable:
   --no-fuse, teacher forcing, or a per-node callback that did not ask to keep fusion (dumps read every value). */
static mrt_status plan_fusion(mrt_exec *e)
{
    const mrt_session_options *opt = &e->session->opt;
    const mrt_graph *g = e->graph;
    memset(e->fused_away, 0, (size_t)g->n_values);
    /* fused chains are a CPU kernel feature: a session on CUDA plans its steps one by one */
    if (opt->no_fuse || opt->override_input || (opt->on_node && !opt->fuse_with_callback) || e->dev) return MRT_STATUS_OK;
    bool *sub_read = calloc((size_t)g->n_values + 1, sizeof *sub_read);
    int *refs = NULL, n_refs = 0, cap_refs = 0;
    mrt_status st = sub_read ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fusion)");
    for (int s = 0; s < e->n_steps && !st; s++) {
        st = node_outer_refs(&g->nodes[e->steps[s].node], g, &refs, &n_refs, &cap_refs);
    }
    for (int i = 0; !st && i < n_refs; i++) sub_read[refs[i]] = true;
    if (!st) st = mrt_fuse_steps(e, sub_read, e->fused_away);
    free(sub_read);
    free(refs);
    return st;
}

static mrt_status plan(mrt_exec *e)
{
    double t0 = now_ms();
    const mrt_graph *g = e->graph;
    MRT_TRY(topo_sort(e));
    bool *live = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *live);
    e->steps = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *e->steps);
    mrt_status st = live && e->steps ? mark_live(e, live) : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    if (!st) st = mrt_exec_weights_plan_begin(e, live);
    e->n_steps = 0;
    for (int s = 0; !st && s < g->n_nodes; s++) {
        if (!live[e->order[s]]) continue;
        mrt_step *step = &e->steps[e->n_steps++];
        step->node = e->order[s];
        step->fused_into = -1;
        st = plan_node(e, step);
    }
    free(live);
    MRT_TRY(st);
    MRT_TRY(plan_fusion(e));
    MRT_TRY(plan_storage(e));
    MRT_TRY(plan_release_points(e));
    MRT_TRY(mrt_dev_plan(e));
    mrt_exec_weights_uploaded(e);
    mrt_plan_mem_trim(&e->plan_mem);
    if (e->run_once) MRT_TRY(mrt_exec_weights_plan_drops(e));
    e->nodes_before = g->n_nodes;
    e->nodes_after = 0;
    e->fused_count = 0;
    for (int s = 0; s < e->n_steps; s++) {
        e->nodes_after += !e->steps[s].folded;
        e->fused_count += e->steps[s].fused_into >= 0;
    }
    e->plan_ms = now_ms() - t0;
    e->planned = true;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ binding */

static mrt_status check_input_type(const mrt_graph_value *gv, const mrt_value *v)
{
    const mrt_type_info *t = &gv->type;
    char want[256], got[256];
    if (t->kind == MRT_TYPE_TENSOR && v->kind != MRT_VALUE_TENSOR)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s': expected a tensor", gv->name);
    if (v->kind != MRT_VALUE_TENSOR || t->kind != MRT_TYPE_TENSOR) return MRT_STATUS_OK;
    const mrt_tensor *x = &v->tensor;
    bool ok = t->elem_type == MRT_DTYPE_UNDEFINED || t->elem_type == x->dtype;
    if (ok && t->rank >= 0) {
        ok = t->rank == x->rank;
        for (int i = 0; ok && i < t->rank; i++) ok = t->dims[i] < 0 || t->dims[i] == x->shape[i];
    }
    if (ok) return MRT_STATUS_OK;
    size_t pos = (size_t)snprintf(want, sizeof want, "%s", mrt_dtype_name(t->elem_type));
    if (t->rank >= 0) {
        pos += (size_t)snprintf(want + pos, sizeof want - pos, "[");
        for (int i = 0; i < t->rank && pos < sizeof want; i++) {
            if (t->dims[i] >= 0)
                pos += (size_t)snprintf(want + pos, sizeof want - pos, i ? ",%lld" : "%lld", (long long)t->dims[i]);
            else
                pos += (size_t)snprintf(want + pos, sizeof want - pos, i ? ",%s" : "%s",
                                        t->dim_params[i] ? t->dim_params[i] : "?");
        }
        if (pos < sizeof want) snprintf(want + pos, sizeof want - pos, "]");
    }
    return mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s': the model expects %s, got %s", gv->name, want,
                    mrt_tensor_describe(x, got, sizeof got));
}

static mrt_status sig_push(int64_t **sig, size_t *len, size_t *cap, int64_t v)
{
    if (*len == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        int64_t *ns = realloc(*sig, nc * sizeof(int64_t));
        if (!ns) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan signature)");
        *sig = ns;
        *cap = nc;
    }
    (*sig)[(*len)++] = v;
    return MRT_STATUS_OK;
}

static mrt_status sig_value(int64_t **sig, size_t *len, size_t *cap, const mrt_value *v, int64_t state)
{
    MRT_TRY(sig_push(sig, len, cap, state));
    MRT_TRY(sig_push(sig, len, cap, v->kind));
    if (v->kind != MRT_VALUE_TENSOR) return MRT_STATUS_OK;
    MRT_TRY(sig_push(sig, len, cap, v->tensor.dtype));
    MRT_TRY(sig_push(sig, len, cap, v->tensor.rank));
    for (int d = 0; d < v->tensor.rank; d++) MRT_TRY(sig_push(sig, len, cap, v->tensor.shape[d]));
    /* constants feed folding: their data is part of the key */
    if (state == MRT_VS_CONST) MRT_TRY(sig_push(sig, len, cap, (int64_t)(intptr_t)v->tensor.data));
    return MRT_STATUS_OK;
}

/* fp64 precision: replace a bound float32/float16/bfloat16 value by a float64 copy (exact widening). */
static mrt_status widen_value(mrt_exec *e, int vi, mrt_alloc_kind kind)
{
    mrt_value *v = &e->vals[vi];
    if (v->kind == MRT_VALUE_TENSOR && mrt_fp64_widens(v->tensor.dtype)) {
        mrt_tensor wide;
        MRT_TRY(mrt_fp64_widen_tensor(&v->tensor, &wide));
        v->tensor = wide;
        e->alloc[vi] = (uint8_t)kind;
    } else if (v->kind == MRT_VALUE_SEQUENCE && mrt_fp64_widens(v->seq_dtype)) {
        mrt_tensor *items = calloc((size_t)(v->n_items ? v->n_items : 1), sizeof *items);
        if (!items) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (widening a sequence)");
        for (int64_t k = 0; k < v->n_items; k++) {
            mrt_status st = mrt_fp64_widen_tensor(&v->items[k], &items[k]);
            if (st) {
                for (int64_t j = 0; j < k; j++) mrt_tensor_release(&items[j]);
                free(items);
                return st;
            }
        }
        v->items = items;
        v->seq_dtype = MRT_DTYPE_DOUBLE;
        e->alloc[vi] = (uint8_t)kind;
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_exec_run(mrt_exec *e, const mrt_value *inputs, bool top_level)
{
    const mrt_graph *g = e->graph;
    release_run_values(e);
    e->run_bytes = e->run_peak_bytes = 0;

    /* The plan depends on the inputs' types and shapes (and on outer values for subgraphs). The signature is
       built in a buffer the exec keeps, so a run with the same shapes allocates nothing. */
    int64_t *sig = e->sig_work;
    size_t sig_len = 0, sig_cap = e->sig_work_cap;
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < g->n_inputs && !st; i++) {
        const mrt_graph_value *gv = &g->values[g->inputs[i]];
        const mrt_value *v = &inputs[i];
        if (v->kind == MRT_VALUE_NONE && !v->is_optional) {
            if (!gv->initializer)
                st = mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s' was not given a value", gv->name);
            else
                st = sig_push(&sig, &sig_len, &sig_cap, -1);
            continue;
        }
        if (top_level) st = check_input_type(gv, v);
        if (!st) st = sig_value(&sig, &sig_len, &sig_cap, v, MRT_VS_SHAPED);
    }
    for (int i = 0; i < g->n_values && !st; i++) {
        if (!g->values[i].is_outer) continue;
        uint8_t ostate;
        const mrt_value *ov = find_outer_value(e, g->values[i].name, &ostate);
        if (!ov) {
            st = mrt_fail(MRT_STATUS_INVALID_MODEL, "subgraph '%s': value '%s' is not defined in any enclosing graph",
                          g->name, g->values[i].name);
            break;
        }
        st = sig_value(&sig, &sig_len, &sig_cap, ov, ostate);
    }
    e->sig_work = sig;
    e->sig_work_cap = sig_cap;
    if (st) return st;
    bool same = e->planned && !e->run_once && sig_len == e->sig_len && (!sig_len || memcmp(sig, e->sig, sig_len * sizeof *sig) == 0);
    if (!same) { /* the new signature becomes the plan's key; the old buffer is reused next time */
        release_plan(e);
        e->sig_work = e->sig ? e->sig : malloc(sig_cap * sizeof *e->sig_work);
        e->sig_work_cap = e->sig ? e->sig_cap : e->sig_work ? sig_cap : 0;
        e->sig = sig;
        e->sig_len = sig_len;
        e->sig_cap = sig_cap;
    }

    /* Bind sources: initializers, inputs and outer values (borrowed; widened copies in fp64 mode). */
    bool fp64 = e->session->opt.precision == MRT_PRECISION_FP64;
    for (int i = 0; i < g->n_values; i++) {
        const mrt_graph_value *gv = &g->values[i];
        if (gv->initializer && !gv->is_input && !same) {
            if (gv->weight) MRT_TRY(mrt_exec_weight_take(e, i)); /* there until the plan lets go */
            e->vals[i] = mrt_value_from_tensor(*gv->initializer);
            e->state[i] = MRT_VS_CONST;
            if (fp64) MRT_TRY(widen_value(e, i, MRT_ALLOC_PLAN));
            if (fp64 && e->weight_held[i] && e->alloc[i] == MRT_ALLOC_PLAN) /* widened once: the plan reads the copy */
                mrt_exec_weight_let_go(e, i, true);
        }
        if (gv->is_outer) {
            uint8_t ostate;
            e->vals[i] = *find_outer_value(e, gv->name, &ostate);
            e->state[i] = ostate;
            e->alloc[i] = MRT_ALLOC_BORROWED;
        }
    }
    for (int i = 0; i < g->n_inputs; i++) {
        int vi = g->inputs[i];
        const mrt_graph_value *gv = &g->values[vi];
        if (inputs[i].kind == MRT_VALUE_NONE && !inputs[i].is_optional) {
            e->vals[vi] = mrt_value_from_tensor(*gv->initializer);
            e->state[vi] = MRT_VS_CONST;
        } else {
            e->vals[vi] = inputs[i];
            e->state[vi] = MRT_VS_SHAPED;
        }
        e->alloc[vi] = MRT_ALLOC_BORROWED;
        if (fp64) MRT_TRY(widen_value(e, vi, MRT_ALLOC_RUN));
    }
    if (!same) {
        st = plan(e);
        if (st) {
            release_plan(e);
            return st;
        }
    }

    const mrt_session_options *opt = &e->session->opt;
    mrt_dev_run_begin(e);
    for (int s = 0; s < e->n_steps; s++) {
        mrt_step *step = &e->steps[s];
        const mrt_node *nd = &g->nodes[step->node];
        for (int k = e->wtake_start ? e->wtake_start[s] : 0; e->wtake_start && k < e->wtake_start[s + 1]; k++)
            MRT_TRY(mrt_exec_weight_take(e, e->wtake[k])); /* run_once: its first reader is next */
        /* a fused step was computed by its chain's producer: only its callback fires (values never computed have
           no data; see mrt_session_options.fuse_with_callback) */
        if (!step->folded && step->fused_into < 0) {
            mrt_op_ctx ctx;
            ctx_buf b;
            if (step->dynamic && !step->prepared_at_run && step->kernel->prepare &&
                (step->kernel->flags & MRT_KERNEL_PREPARE_FROM_CONSTANTS) && !opt->override_input && !e->run_once) {
                /* as at plan time: only the constants' data is shown (ctx_prepare's planning mode) */
                mrt_step *ms = &e->steps[s];
                ms->prepared_at_run = true;
                st = ctx_prepare(e, step, true, &ctx, &b);
                if (!st) st = attr_verdict(&b, step->kernel->prepare(&ctx, &ms->kernel_state));
                ctx_release(&b);
                if (st) return node_error(nd, st);
            }
            st = ctx_prepare(e, step, false, &ctx, &b);
            if (!st && step->fusion) { /* the producer writes the chain's last value through the epilogue */
                mrt_fusion *f = step->fusion;
                mrt_fusion_bind(e, f);
                b.out[0] = &e->vals[f->out_value];
                ctx.epilogue = f->ep.n_ops ? &f->ep : NULL;
                if (f->in_value >= 0) { /* and reads the fused Mul's or Pad's input, scaling or padding it as it goes */
                    b.in[0] = &e->vals[f->in_value];
                    ctx.prologue = &f->pro;
                }
            }
            if (e->arena && step->ws_bytes && !step->dynamic) {
                ctx.workspace = (char *)e->arena + step->ws_offset;
                ctx.workspace_bytes = step->ws_bytes;
            }
            ctx.kernel_state = step->kernel_state;
            if (!st && step->dynamic) {
                for (int i = 0; i < nd->n_outputs; i++)
                    if (nd->outputs[i] >= 0) release_value(e, nd->outputs[i]);
                if (e->dev) { /* infer reads its inputs' data on the host */
                    int *reads = NULL, nr = 0, cap = 0;
                    st = mrt_dev_step_reads(e, s, &reads, &nr, &cap);
                    for (int i = 0; !st && i < nr; i++) st = mrt_dev_to_host(e, reads[i]);
                    free(reads);
                }
                if (!st) st = attr_verdict(&b, step->def->infer(&ctx));
                if (!st && !ctx.dynamic) st = alloc_outputs(e, nd, MRT_ALLOC_RUN);
                if (!st && step->device == MRT_DEVICE_CUDA) st = mrt_dev_check_dynamic(e, step, &ctx);
            } else if (!st && step->device != MRT_DEVICE_CUDA) { /* a CUDA step's outputs are filled on the device */
                /* Outputs start as zeros, unless the kernel writes every element itself: then the zeros would be
                   a serial pass over memory the kernel overwrites (Swin-T: 119 MB a run in its Transposes, Slices,
                   Gathers and LayerNorms, 5% of its run on two threads). opt->poison_outputs fills those with 0xFF
                   bytes instead, so that a test sees an element such a kernel leaves unwritten. */
                unsigned flags = step->kernel->flags;
                for (int i = 0; i < nd->n_outputs; i++) {
                    int v = nd->outputs[i];
                    if (v < 0 || e->vals[v].kind != MRT_VALUE_TENSOR || !e->vals[v].tensor.data) continue;
                    if (i == 0 && step->inputs_in_output) continue; /* holds inputs already; the rest is copied */
                    mrt_tensor *t = &e->vals[v].tensor;
                    if (i == 0 && nd->n_inputs > 0 && nd->inputs[0] >= 0 && e->vals[nd->inputs[0]].kind == MRT_VALUE_TENSOR &&
                        e->vals[nd->inputs[0]].tensor.data == t->data)
                        continue; /* in place: the buffer holds input 0, which the kernel reads */
                    if (t->dtype == MRT_DTYPE_STRING) { /* the previous run's strings, freed whatever the kernel */
                        for (int64_t k = 0, n = mrt_tensor_numel(t); k < n; k++) free(((char **)t->data)[k]);
                        memset(t->data, 0, mrt_tensor_nbytes(t));
                        continue;
                    }
                    bool in_full = (flags & MRT_KERNEL_WRITES_ALL) || (i == 0 && (flags & MRT_KERNEL_EPILOGUE));
                    if (!in_full) memset(t->data, 0, mrt_tensor_nbytes(t));
                    else if (opt->poison_outputs) memset(t->data, 0xFF, mrt_tensor_nbytes(t));
                }
            }
            if (!st && top_level && opt->override_input) {
                for (int i = 0; i < nd->n_inputs; i++) {
                    int v = nd->inputs[i];
                    mrt_value rep;
                    if (v >= 0 && opt->override_input(opt->override_user, nd, i, g->values[v].name, &e->vals[v], &rep))
                        b.in_copy[i] = rep;
                }
            }
            /* device "cuda": the inputs where the step runs; a CUDA step's context sees device storage */
            if (!st && e->dev) st = mrt_dev_step_inputs(e, s, &ctx);
            if (!st) st = attr_verdict(&b, step->kernel->run(&ctx));
            if (!st) st = mrt_dev_step_done(e, s, &ctx);
            if (!st) st = check_outputs_produced(e, nd, step);
            ctx_release(&b);
            if (st) return node_error(nd, st);
            for (int i = 0; i < nd->n_outputs; i++) /* allocated in this run (the last run's are freed) */
                if (nd->outputs[i] >= 0 && e->alloc[nd->outputs[i]] == MRT_ALLOC_RUN)
                    e->run_bytes += value_bytes(&e->vals[nd->outputs[i]]);
            if (e->run_bytes > e->run_peak_bytes) e->run_peak_bytes = e->run_bytes;
        }
        if (top_level && opt->on_node) {
            for (int i = 0; e->dev && i < nd->n_outputs; i++) MRT_TRY(mrt_dev_to_host(e, nd->outputs[i]));
            const char *names[64];
            const mrt_value *vals[64];
            int n = nd->n_outputs < 64 ? nd->n_outputs : 64, k = 0;
            for (int i = 0; i < n; i++) {
                if (nd->outputs[i] < 0) continue;
                names[k] = g->values[nd->outputs[i]].name;
                vals[k++] = &e->vals[nd->outputs[i]];
            }
            st = opt->on_node(opt->on_node_user, nd, k, names, vals);
            if (st) return st;
        }
        for (int k = e->dies_at_start[s]; k < e->dies_at_start[s + 1]; k++) {
            int v = e->dies_at[k];
            if (e->dev) mrt_dev_value_dies(e, v, s); /* run-time device storage goes back to the pool */
            if (e->alloc[v] != MRT_ALLOC_RUN) continue;
            size_t nb = value_bytes(&e->vals[v]);
            e->run_bytes -= nb < e->run_bytes ? nb : e->run_bytes;
            release_value(e, v);
        }
        for (int k = e->wdrop_start ? e->wdrop_start[s] : 0; e->wdrop_start && k < e->wdrop_start[s + 1]; k++)
            mrt_exec_weight_let_go(e, e->wdrop[k], true);
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i];
        if (e->state[v] == MRT_VS_UNSET && !g->values[v].is_outer)
            return mrt_fail(MRT_STATUS_INVALID_MODEL, "graph output '%s' is not produced by any node", g->values[v].name);
    }
    return mrt_dev_run_end(e);
}

/* ------------------------------------------------------------------ subgraphs */

/* Deeper nesting is a recursive function or a hostile model: each level costs stack and an exec. */
#define MRT_MAX_CALL_DEPTH 64
#define NESTING_LIMIT_MESSAGE "subgraphs and function calls nest deeper than"

mrt_status mrt_op_run_subgraph(mrt_op_ctx *ctx, const mrt_graph *body, int n_inputs, const mrt_value *inputs,
                               int n_outputs, mrt_value *outputs)
{
    return mrt_exec_call(ctx, body, NULL, n_inputs, inputs, n_outputs, outputs);
}

/* The exec that runs `body` for ctx's node: the one kept from an earlier call (a Loop iteration, an earlier run), or
   a new one. The key includes the calling node: one function called by two nodes gets two execs. */
static mrt_status child_exec(mrt_op_ctx *ctx, const mrt_graph *body, const mrt_function *f, mrt_exec **out, int *slot)
{
    mrt_exec *parent = ctx->exec;
    for (int i = 0; i < parent->n_children; i++) {
        const mrt_child_exec *c = &parent->children[i];
        if (c->body == body && c->function == f && c->caller == ctx->node) {
            *out = c->exec;
            *slot = i;
            return MRT_STATUS_OK;
        }
    }
    if (parent->n_children == parent->cap_children) {
        int cap = parent->cap_children ? 2 * parent->cap_children : 4;
        mrt_child_exec *grown = realloc(parent->children, (size_t)cap * sizeof *grown);
        if (!grown) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (subgraph exec)");
        parent->children = grown;
        parent->cap_children = cap;
    }
    mrt_exec *child;
    /* a function body sees no enclosing scope: only its inputs */
    MRT_TRY(mrt_exec_new(parent->session, body, f ? NULL : parent, &child));
    child->depth = parent->depth + 1;
    child->caller = f ? ctx->node : NULL;
    child->function = f;
    *slot = parent->n_children;
    parent->children[parent->n_children++] = (mrt_child_exec){body, f, ctx->node, child};
    *out = child;
    return MRT_STATUS_OK;
}

mrt_status mrt_exec_call(mrt_op_ctx *ctx, const mrt_graph *body, const mrt_function *f, int n_inputs,
                         const mrt_value *inputs, int n_outputs, mrt_value *outputs)
{
    mrt_exec *parent = ctx->exec;
    if (n_inputs != body->n_inputs)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "subgraph '%s' takes %d inputs, given %d", body->name,
                           body->n_inputs, n_inputs);
    if (n_outputs > body->n_outputs)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "subgraph '%s' has %d outputs, %d expected", body->name,
                           body->n_outputs, n_outputs);
    if (parent->depth >= MRT_MAX_CALL_DEPTH)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, NESTING_LIMIT_MESSAGE " %d (does a function call itself?)",
                           MRT_MAX_CALL_DEPTH);
    mrt_exec *child;
    int slot;
    MRT_TRY(child_exec(ctx, body, f, &child, &slot));
    mrt_status st = mrt_exec_run(child, inputs, false);
    for (int i = 0; i < n_outputs; i++) memset(&outputs[i], 0, sizeof outputs[i]);
    for (int i = 0; !st && i < n_outputs; i++) {
        const mrt_value *v = &child->vals[body->outputs[i]];
        outputs[i].kind = v->kind;
        outputs[i].is_optional = v->is_optional;
        if (v->kind == MRT_VALUE_TENSOR) {
            st = mrt_tensor_copy(&outputs[i].tensor, &v->tensor);
        } else if (v->kind == MRT_VALUE_SEQUENCE) {
            outputs[i].seq_dtype = v->seq_dtype;
            outputs[i].items = calloc((size_t)(v->n_items ? v->n_items : 1), sizeof(mrt_tensor));
            if (!outputs[i].items) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (subgraph output)");
            for (int64_t k = 0; !st && k < v->n_items; k++) {
                st = mrt_tensor_copy(&outputs[i].items[k], &v->items[k]);
                if (!st) outputs[i].n_items = k + 1;
            }
        }
    }
    if (st) {
        for (int i = 0; i < n_outputs; i++) mrt_value_release(&outputs[i]);
        /* name the enclosing node once per level, except for the nesting limit itself (64 identical levels) */
        if (strncmp(mrt_last_error(), "node '", 6) == 0 && !strstr(mrt_last_error(), NESTING_LIMIT_MESSAGE))
            mrt_fail_prefix(st, "in subgraph '%s' of node '%s': ", body->name, ctx->node->name);
        /* a failed run may leave the child half planned: start afresh next time */
        mrt_exec_free(child);
        parent->children[slot] = parent->children[--parent->n_children];
        return st;
    }
    release_run_values(child); /* the outputs are copied; keep the plan and arena, not this call's values */
    return st;
}

/* ------------------------------------------------------------------ sessions */

/* Sessions alive: the large-buffer cache (engine/tensor.c) is emptied when the last one goes. */
static atomic_int live_sessions;

mrt_status mrt_session_new(const mrt_model *model, const mrt_session_options *opt, mrt_session **out)
{
    *out = NULL;
    if (!model || !model->graph) return mrt_fail(MRT_STATUS_INVALID_ARG, "no model");
    mrt_session *s = calloc(1, sizeof *s);
    if (!s) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (session)");
    s->model = model;
    s->opt = opt ? *opt : mrt_session_options_default();
    if (!s->opt.device) s->opt.device = "cpu";
    if (strcmp(s->opt.device, "cpu") != 0 && strcmp(s->opt.device, "cuda") != 0) {
        free(s);
        return mrt_fail(MRT_STATUS_INVALID_ARG, "unknown device '%s' (expected cpu or cuda)", opt->device);
    }
    mrt_status checked = mrt_expand_list_check(model, s->opt.expand_functions);
    if (!checked && strcmp(s->opt.device, "cuda") == 0) checked = mrt_dev_session_open(s);
    if (checked) {
        mrt_dev_session_close(s);
        free(s);
        return checked;
    }
    s->registry = mrt_registry_default();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    s->n_threads = s->opt.n_threads > 0 ? s->opt.n_threads : (ncpu > 0 ? (int)ncpu : 1);
    mrt_cpu_backend_set_threads(s->n_threads);
    mrt_status st = mrt_threadpool_new(s->n_threads, &s->pool);
    if (!st) st = mrt_exec_new(s, model->graph, NULL, &s->main);
    if (!st) s->main->run_once = s->opt.run_once;
    if (st) {
        mrt_threadpool_free(s->pool);
        mrt_dev_session_close(s);
        free(s);
        return st;
    }
    atomic_fetch_add(&live_sessions, 1);
    *out = s;
    return MRT_STATUS_OK;
}

void mrt_session_free(mrt_session *s)
{
    if (!s) return;
    mrt_exec_free(s->main);
    mrt_dev_session_close(s);
    mrt_threadpool_free(s->pool);
    free(s->bound);
    mrt_session_free_std_functions(s);
    free(s);
    if (atomic_fetch_sub(&live_sessions, 1) == 1) mrt_tensor_cache_flush();
}

mrt_status mrt_session_run(mrt_session *s, int n_inputs, const char *const *names, const mrt_value *inputs)
{
    const mrt_graph *g = s->model->graph;
    if (!s->bound) { /* kept for the session's life: runs allocate nothing once planned */
        s->bound = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *s->bound);
        if (!s->bound) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (inputs)");
    }
    mrt_value *bound = s->bound;
    memset(bound, 0, (size_t)(g->n_inputs ? g->n_inputs : 1) * sizeof *bound);
    mrt_status st = MRT_STATUS_OK;
    for (int k = 0; k < n_inputs && !st; k++) {
        int found = -1;
        for (int i = 0; i < g->n_inputs; i++)
            if (strcmp(g->values[g->inputs[i]].name, names[k]) == 0) found = i;
        if (found < 0) {
            char list[1024] = "";
            size_t pos = 0;
            for (int i = 0; i < g->n_inputs && pos < sizeof list; i++)
                pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s'%s'", i ? ", " : "",
                                        g->values[g->inputs[i]].name);
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "the model has no input '%s' (its inputs: %s)", names[k], list);
        } else if (bound[found].kind != MRT_VALUE_NONE) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "input '%s' is given twice", names[k]);
        } else {
            bound[found] = inputs[k];
            if (bound[found].kind == MRT_VALUE_NONE) bound[found].is_optional = true;
        }
    }
    if (!st) st = mrt_exec_run(s->main, bound, true);
    return st;
}

int mrt_session_n_outputs(const mrt_session *s) { return s->model->graph->n_outputs; }

const char *mrt_session_output_name(const mrt_session *s, int i) { return mrt_model_output_name(s->model, i); }

const mrt_value *mrt_session_output(const mrt_session *s, int i)
{
    if (i < 0 || i >= s->model->graph->n_outputs) return NULL;
    return &s->main->vals[s->model->graph->outputs[i]];
}

void mrt_session_get_stats(const mrt_session *s, mrt_session_stats *out)
{
    const mrt_exec *e = s->main;
    memset(out, 0, sizeof *out);
    out->nodes_before = e->nodes_before;
    out->nodes_after = e->nodes_after;
    out->fused_nodes = e->fused_count;
    for (int i = 0; i < e->n_steps; i++) {
        out->dynamic_nodes += e->steps[i].dynamic;
        out->function_nodes += e->steps[i].kernel == &mrt_function_kernel;
    }
    out->arena_peak_bytes = e->arena_bytes;
    out->naive_bytes = e->naive_bytes;
    out->lower_bound_bytes = e->lower_bound_bytes;
    out->inplace_count = e->inplace_count;
    out->concat_inputs_in_place = e->concat_inputs_in_place;
    out->plan_ms = e->plan_ms;
    out->run_peak_bytes = e->run_peak_bytes;
    mrt_weight_account wa;
    mrt_weights_account(s->model, &wa);
    out->weights_mapped_bytes = wa.mapped_bytes;
    out->weights_copied_bytes = wa.copied_bytes;
    out->weights_released_bytes = wa.dropped_bytes;
    out->weights_packed_bytes = e->plan_mem.used;
    for (int i = 0; e->dev && i < e->n_steps; i++) {
        if (e->steps[i].folded || e->steps[i].fused_into >= 0) continue;
        out->cuda_nodes += e->steps[i].device == MRT_DEVICE_CUDA;
        out->cpu_nodes += e->steps[i].device != MRT_DEVICE_CUDA;
    }
    if (e->dev) {
        out->device_arena_bytes = e->dev->arena_bytes;
        out->device_const_bytes = e->dev->consts_bytes;
        out->planned_copies = e->dev->n_copies;
        out->streams_used = e->dev->sched.n_streams_used ? e->dev->sched.n_streams_used : 1;
        out->gpu_ms = s->dev->last_gpu_ms;
    }
}

int mrt_session_n_threads(const mrt_session *s) { return s->n_threads; }
