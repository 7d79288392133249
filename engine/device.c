/* Placement, device storage, copies and streams for sessions on "cuda" (see device.h). */
#include "engine/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/function.h"
#include "engine/memplan.h"

/* Device allocations are aligned for vector loads and cuBLAS/cuDNN's preferences. */
#define DEV_ALIGN 256

#define DEV_TRY(call, what)                                                                                       \
    do {                                                                                                          \
        char err_[512] = "";                                                                                      \
        if ((call) != 0) return mrt_fail(MRT_STATUS_DEVICE_ERROR, "%s: %s", (what), err_);                        \
    } while (0)

static void *stream_of(const mrt_exec *e, int s);

static size_t align_up(size_t n) { return (n + DEV_ALIGN - 1) & ~(size_t)(DEV_ALIGN - 1); }

/* ------------------------------------------------------------------ session */

mrt_status mrt_dev_session_open(mrt_session *s)
{
    const mrt_cuda_api *api;
    MRT_TRY(mrt_cuda_open(&api));
    mrt_dev_session *d = calloc(1, sizeof *d);
    if (!d) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (CUDA session)");
    s->dev = d;
    d->api = api;
    const char *sync = getenv("MRT_SYNC_EACH_NODE");
    d->sync_each_node = sync && sync[0] && strcmp(sync, "0") != 0;
    /* independent branches spread over a few streams; MRT_CUDA_STREAMS=1 serialises everything */
    const char *ns = getenv("MRT_CUDA_STREAMS");
    d->n_streams = ns && atoi(ns) > 0 ? atoi(ns) : 4;
    if (d->n_streams > 8) d->n_streams = 8;
    DEV_TRY(api->set_device(0, err_, sizeof err_), "selecting CUDA device 0");
    DEV_TRY(api->set_allow_tf32(s->opt.allow_tf32, err_, sizeof err_), "setting the TF32 mode");
    for (int i = 0; i < d->n_streams; i++) DEV_TRY(api->stream_create(&d->streams[i], err_, sizeof err_), "creating a CUDA stream");
    DEV_TRY(api->event_create(&d->run_start, 1, err_, sizeof err_), "creating a CUDA event");
    DEV_TRY(api->event_create(&d->run_end, 1, err_, sizeof err_), "creating a CUDA event");
    return MRT_STATUS_OK;
}

void mrt_dev_session_close(mrt_session *s)
{
    mrt_dev_session *d = s->dev;
    if (!d) return;
    char err[256];
    d->api->synchronize(err, sizeof err);
    for (int i = 0; i < d->n_streams; i++)
        if (d->streams[i]) d->api->stream_destroy(d->streams[i], err, sizeof err);
    if (d->staging) d->api->host_free(d->staging, err, sizeof err);
    if (d->run_start) d->api->event_destroy(d->run_start, err, sizeof err);
    if (d->run_end) d->api->event_destroy(d->run_end, err, sizeof err);
    free(d);
    s->dev = NULL;
}

/* Pinned staging of at least `bytes`: copies from pageable memory go through a bounce buffer of the driver's anyway,
   and DMA from pinned memory is what reaches the link's bandwidth. Copies through it are synchronous, so one buffer
   per session serves them all. NULL when it can't be had (the copy then goes direct). */
static void *staging(mrt_dev_session *ds, size_t bytes)
{
    if (bytes <= ds->staging_bytes) return ds->staging;
    char err[256];
    if (ds->staging) ds->api->host_free(ds->staging, err, sizeof err);
    ds->staging = NULL;
    ds->staging_bytes = 0;
    if (ds->api->host_alloc(&ds->staging, bytes, err, sizeof err) != 0) return NULL;
    ds->staging_bytes = bytes;
    return ds->staging;
}

/* ------------------------------------------------------------------ exec */

mrt_status mrt_dev_exec_new(mrt_exec *e)
{
    if (!e->session->dev) return MRT_STATUS_OK;
    size_t n = (size_t)(e->graph->n_values ? e->graph->n_values : 1);
    mrt_dev_exec *d = calloc(1, sizeof *d);
    if (d) {
        d->ptr = calloc(n, sizeof *d->ptr);
        d->own = calloc(n, 1);
        d->where = calloc(n, 1);
        d->reads_on_host = calloc(n, 1);
    }
    if (!d || !d->ptr || !d->own || !d->where || !d->reads_on_host) {
        if (d) free(d->ptr), free(d->own), free(d->where), free(d->reads_on_host);
        free(d);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (device values)");
    }
    d->api = e->session->dev->api;
    e->dev = d;
    return MRT_STATUS_OK;
}

static void dev_free(mrt_dev_exec *d, void **p)
{
    char err[256];
    if (*p) d->api->free(*p, err, sizeof err);
    *p = NULL;
}

/* A run-time allocation goes back to the stream-ordered pool on `stream`: after the work queued there (its last
   reader's stream), without waiting for it. */
static void free_own(mrt_dev_exec *d, int v, void *stream)
{
    char err[256];
    if (d->ptr[v]) d->api->free_async(d->ptr[v], stream, err, sizeof err);
    d->ptr[v] = NULL;
    d->own[v] = 0;
}

void mrt_dev_release_value(mrt_exec *e, int v)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return;
    if (d->own[v]) free_own(d, v, e->session->dev->streams[0]);
    d->where[v] = 0;
}

void mrt_dev_value_dies(mrt_exec *e, int v, int s)
{
    mrt_dev_exec *d = e->dev;
    if (d && d->own[v]) free_own(d, v, stream_of(e, s));
}

void mrt_dev_exec_release_plan(mrt_exec *e)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return;
    char err[256];
    d->api->synchronize(err, sizeof err); /* nothing may still read what is freed */
    for (int v = 0; v < e->graph->n_values; v++) mrt_dev_release_value(e, v);
    for (int i = 0; i < d->n_temp; i++) dev_free(d, &d->temp[i]);
    d->n_temp = 0;
    memset(d->ptr, 0, (size_t)e->graph->n_values * sizeof *d->ptr);
    dev_free(d, &d->arena);
    dev_free(d, &d->consts);
    d->arena_bytes = d->consts_bytes = 0;
    for (int i = 0; i < d->n_events; i++)
        if (d->events[i]) d->api->event_destroy(d->events[i], err, sizeof err);
    free(d->events);
    d->events = NULL;
    d->n_events = 0;
    mrt_schedule_free(&d->sched);
    d->n_copies = 0;
    free(d->ws);
    d->ws = NULL;
    for (int i = 0; d->timing && i < 2 * e->n_steps; i++)
        if (d->timing[i]) d->api->event_destroy(d->timing[i], err, sizeof err);
    free(d->timing);
    free(d->step_ms);
    d->timing = NULL;
    d->step_ms = NULL;
}

void mrt_dev_exec_free(mrt_exec *e)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return;
    mrt_dev_exec_release_plan(e);
    dev_free(d, &d->scratch);
    free(d->ptr);
    free(d->own);
    free(d->where);
    free(d->reads_on_host);
    free(d->copies);
    free(d->out_view);
    free(d);
    e->dev = NULL;
}

/* ------------------------------------------------------------------ placement */

static bool is_orchestration(const mrt_step *step)
{
    /* control flow and function calls run on the host; the nodes of their bodies are placed one by one */
    return step->kernel == &mrt_function_kernel || (step->def && (step->def->flags & MRT_OPDEF_HAS_SUBGRAPH));
}

static bool all_dense_tensors(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_value *v = ctx->inputs[i];
        if (!v) continue;
        if (v->kind != MRT_VALUE_TENSOR) return snprintf(why, len, "input %d is a sequence or optional", i), false;
        if (v->tensor.dtype == MRT_DTYPE_STRING) return snprintf(why, len, "input %d holds strings", i), false;
    }
    for (int i = 0; i < ctx->n_outputs; i++) {
        const mrt_value *v = ctx->outputs[i];
        if (!v) continue;
        if (v->kind != MRT_VALUE_TENSOR && v->kind != MRT_VALUE_NONE)
            return snprintf(why, len, "output %d is a sequence or optional", i), false;
        if (v->kind == MRT_VALUE_TENSOR && v->tensor.dtype == MRT_DTYPE_STRING)
            return snprintf(why, len, "output %d holds strings", i), false;
    }
    return true;
}

mrt_status mrt_dev_place_step(mrt_exec *e, mrt_step *step, mrt_op_ctx *ctx)
{
    step->device = MRT_DEVICE_CPU;
    free(step->placement_why);
    step->placement_why = NULL;
    if (!e->dev) return MRT_STATUS_OK;
    const mrt_node *nd = &e->graph->nodes[step->node];
    if (is_orchestration(step)) return MRT_STATUS_OK;
    char why[400] = "";
    const mrt_kernel *k = mrt_registry_find_kernel(e->session->registry, MRT_DEVICE_CUDA, nd->domain, nd->op_type,
                                                   step->opset);
    bool ok = false;
    if (!k)
        snprintf(why, sizeof why, "no CUDA kernel for %s%s%s", nd->domain[0] ? nd->domain : "",
                 nd->domain[0] ? "::" : "", nd->op_type);
    else if (ctx && !all_dense_tensors(ctx, why, sizeof why))
        ;
    else if (ctx && k->supports && !k->supports(ctx, why, sizeof why))
        ;
    else
        ok = true;
    if (ok) {
        step->cpu_kernel = step->kernel;
        step->kernel = k;
        step->device = MRT_DEVICE_CUDA;
        return MRT_STATUS_OK;
    }
    if (!why[0]) snprintf(why, sizeof why, "the CUDA kernel does not take this node");
    if (e->session->opt.no_cpu_fallback)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "node '%s' (%s): %s, and --no-cpu-fallback forbids running it on the CPU",
                        nd->name, nd->op_type, why);
    step->placement_why = strdup(why);
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ planning */

static mrt_status add_copy(mrt_dev_exec *d, int step, int value, bool to_device)
{
    if (d->n_copies == d->cap_copies) {
        int cap = d->cap_copies ? 2 * d->cap_copies : 16;
        mrt_dev_copy *c = realloc(d->copies, (size_t)cap * sizeof *c);
        if (!c) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (copy list)");
        d->copies = c;
        d->cap_copies = cap;
    }
    d->copies[d->n_copies++] = (mrt_dev_copy){step, value, to_device};
    return MRT_STATUS_OK;
}

static bool runs(const mrt_step *st) { return !st->folded && st->fused_into < 0; }

static bool is_dev_tensor(const mrt_exec *e, int v)
{
    return v >= 0 && e->vals[v].kind == MRT_VALUE_TENSOR && e->vals[v].tensor.dtype != MRT_DTYPE_STRING;
}

/* Inputs of step s plus the outer values its subgraphs read. */
mrt_status mrt_dev_step_reads(const mrt_exec *e, int s, int **list, int *n, int *cap)
{
    const mrt_node *nd = &e->graph->nodes[e->steps[s].node];
    *n = 0;
    for (int i = 0; i < nd->n_inputs; i++) {
        if (*n == *cap) {
            int c = *cap ? 2 * *cap : 16;
            int *l = realloc(*list, (size_t)c * sizeof *l);
            if (!l) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
            *list = l;
            *cap = c;
        }
        (*list)[(*n)++] = nd->inputs[i];
    }
    return mrt_node_outer_refs(nd, e->graph, list, n, cap);
}

typedef struct dev_plan_tmp {
    mrt_memplan_value *mv;
    size_t *offsets;
    int *producer;
    int *reads, n_reads, cap_reads;
    int *pred_start, *preds, n_preds, cap_preds;
} dev_plan_tmp;

static mrt_status push_pred(dev_plan_tmp *t, int p)
{
    if (t->n_preds == t->cap_preds) {
        int c = t->cap_preds ? 2 * t->cap_preds : 64;
        int *n = realloc(t->preds, (size_t)c * sizeof *n);
        if (!n) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (stream schedule)");
        t->preds = n;
        t->cap_preds = c;
    }
    t->preds[t->n_preds++] = p;
    return MRT_STATUS_OK;
}

/* The stream schedule of the main graph: data edges, plus reuse edges (the writer of a device block waits for every
   CUDA reader of the block's previous tenant, which may run on another stream). */
static mrt_status plan_streams(mrt_exec *e, dev_plan_tmp *t, int nm)
{
    mrt_dev_exec *d = e->dev;
    int ns = e->n_steps, nv = e->graph->n_values;
    t->pred_start = calloc((size_t)ns + 1, sizeof *t->pred_start);
    /* readers[v]: CUDA steps that read v's device block (its producer included), as a CSR built below */
    int *rd_start = calloc((size_t)nm + 1, sizeof *rd_start), *rd = NULL;
    char *mark = calloc((size_t)ns + 1, 1);
    mrt_status st = t->pred_start && rd_start && mark ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (stream schedule)");
    /* two passes: count then fill */
    for (int pass = 0; pass < 2 && !st; pass++) {
        int *fill = NULL;
        if (pass == 1) {
            for (int v = 0; v < nm; v++) rd_start[v + 1] += rd_start[v];
            rd = malloc((size_t)(rd_start[nm] ? rd_start[nm] : 1) * sizeof *rd);
            fill = calloc((size_t)nm + 1, sizeof *fill);
            if (!rd || !fill) {
                free(fill);
                st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (stream schedule)");
                break;
            }
        }
        for (int s = 0; s < ns && !st; s++) {
            const mrt_step *step = &e->steps[s];
            if (!runs(step) || step->device != MRT_DEVICE_CUDA) continue;
            const mrt_node *nd = &e->graph->nodes[step->node];
            for (int i = 0; i < nd->n_inputs + nd->n_outputs + 1; i++) {
                int v = i < nd->n_inputs ? nd->inputs[i] : i < nd->n_inputs + nd->n_outputs ? nd->outputs[i - nd->n_inputs] : nv + s;
                if (v < 0 || !t->mv[v].size) continue;
                if (pass == 0) rd_start[v + 1]++;
                else rd[rd_start[v] + fill[v]++] = s;
            }
        }
        free(fill);
    }
    for (int s = 0; s < ns && !st; s++) {
        t->pred_start[s] = t->n_preds;
        const mrt_step *step = &e->steps[s];
        if (!runs(step)) continue;
        memset(mark, 0, (size_t)ns);
        st = mrt_dev_step_reads(e, s, &t->reads, &t->n_reads, &t->cap_reads);
        for (int i = 0; i < t->n_reads && !st; i++) {
            int v = t->reads[i], p = v >= 0 ? t->producer[v] : -1;
            if (p >= 0 && p < s && !mark[p]) mark[p] = 1, st = push_pred(t, p);
        }
        if (step->device != MRT_DEVICE_CUDA) continue;
        /* blocks this step writes: its outputs and its workspace */
        const mrt_node *nd = &e->graph->nodes[step->node];
        for (int o = 0; o <= nd->n_outputs && !st; o++) {
            int w = o < nd->n_outputs ? nd->outputs[o] : nv + s;
            if (w < 0 || !t->mv[w].size || (o < nd->n_outputs && t->producer[w] != s)) continue;
            size_t w0 = t->offsets[w], w1 = w0 + t->mv[w].size;
            for (int v = 0; v < nm && !st; v++) {
                if (v == w || !t->mv[v].size || t->mv[v].last_use > t->mv[w].first_use) continue;
                size_t v0 = t->offsets[v], v1 = v0 + t->mv[v].size;
                if (v1 <= w0 || w1 <= v0) continue;
                for (int k = rd_start[v]; k < rd_start[v + 1] && !st; k++) {
                    int r = rd[k];
                    if (r < s && !mark[r]) mark[r] = 1, st = push_pred(t, r);
                }
            }
        }
    }
    if (!st) {
        t->pred_start[ns] = t->n_preds;
        st = mrt_schedule_build(ns, t->pred_start, t->preds, e->session->dev->n_streams, &d->sched);
    }
    if (!st && d->sched.n_events) {
        d->events = calloc((size_t)ns, sizeof *d->events);
        d->n_events = ns;
        if (!d->events) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (events)");
        for (int k = 0; !st && k < d->sched.n_events; k++) {
            int p = d->sched.events[k].producer;
            char err[512] = "";
            if (!d->events[p] && d->api->event_create(&d->events[p], 0, err, sizeof err) != 0)
                st = mrt_fail(MRT_STATUS_DEVICE_ERROR, "creating a CUDA event: %s", err);
        }
    }
    free(rd_start);
    free(rd);
    free(mark);
    return st;
}

bool mrt_dev_const_on_device_only(const mrt_exec *e, int v)
{
    const mrt_dev_exec *d = e->dev;
    return d && v >= 0 && e->state[v] == MRT_VS_CONST && d->ptr[v] && !d->own[v] && !d->reads_on_host[v] &&
           d->consts && (const char *)d->ptr[v] >= (const char *)d->consts &&
           (const char *)d->ptr[v] < (const char *)d->consts + d->consts_bytes;
}

mrt_status mrt_dev_plan(mrt_exec *e)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return MRT_STATUS_OK;
    const mrt_graph *g = e->graph;
    int nv = g->n_values, ns = e->n_steps, nm = nv + ns;
    dev_plan_tmp t = {0};
    t.mv = calloc((size_t)(nm ? nm : 1), sizeof *t.mv);
    t.offsets = calloc((size_t)(nm ? nm : 1), sizeof *t.offsets);
    t.producer = malloc((size_t)(nv ? nv : 1) * sizeof *t.producer);
    bool *need_const = calloc((size_t)(nv ? nv : 1), 1);
    mrt_status st = t.mv && t.offsets && t.producer && need_const ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (device plan)");
    for (int v = 0; !st && v < nv; v++) t.producer[v] = -1, t.mv[v].inplace_of = -1, d->reads_on_host[v] = 0;
    for (int i = nv; !st && i < nm; i++) t.mv[i].inplace_of = -1;
    for (int s = 0; !st && s < ns; s++) {
        const mrt_node *nd = &g->nodes[e->steps[s].node];
        if (e->steps[s].folded) continue;
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) t.producer[nd->outputs[o]] = e->steps[s].fused_into >= 0 ? e->steps[s].fused_into : s;
    }
    /* which values need device storage planned: those a static CUDA step writes or reads */
    for (int s = 0; !st && s < ns; s++) {
        const mrt_step *step = &e->steps[s];
        if (!runs(step)) continue;
        const mrt_node *nd = &g->nodes[step->node];
        st = mrt_dev_step_reads(e, s, &t.reads, &t.n_reads, &t.cap_reads);
        if (step->device != MRT_DEVICE_CUDA) {
            for (int i = 0; i < t.n_reads; i++)
                if (t.reads[i] >= 0) d->reads_on_host[t.reads[i]] = 1;
            continue;
        }
        if (step->dynamic) continue; /* its storage comes at run time */
        for (int o = 0; o < nd->n_outputs; o++) {
            int v = nd->outputs[o];
            if (!is_dev_tensor(e, v) || e->state[v] != MRT_VS_SHAPED) continue;
            size_t nb = mrt_tensor_nbytes(&e->vals[v].tensor);
            t.mv[v].size = nb ? nb : 1;
            t.mv[v].first_use = s;
            if (t.mv[v].last_use < s) t.mv[v].last_use = s;
        }
        for (int i = 0; i < t.n_reads; i++) {
            int v = t.reads[i];
            if (!is_dev_tensor(e, v)) continue;
            if (e->state[v] == MRT_VS_CONST) {
                need_const[v] = true;
                continue;
            }
            if (e->state[v] != MRT_VS_SHAPED) continue; /* dynamic: device storage at run time */
            if (!t.mv[v].size) {
                size_t nb = mrt_tensor_nbytes(&e->vals[v].tensor);
                t.mv[v].size = nb ? nb : 1;
                t.mv[v].first_use = t.producer[v] >= 0 ? t.producer[v] : 0;
            }
            if (t.mv[v].last_use < s) t.mv[v].last_use = s;
        }
        if (step->ws_bytes) {
            t.mv[nv + s].size = step->ws_bytes;
            t.mv[nv + s].first_use = t.mv[nv + s].last_use = s;
        }
        int x = nd->n_inputs > 0 ? nd->inputs[0] : -1, y = nd->n_outputs > 0 ? nd->outputs[0] : -1;
        if (x >= 0 && y >= 0 && (step->def->flags & MRT_OPDEF_INPLACE) && t.mv[x].size && t.mv[x].size == t.mv[y].size &&
            !g->values[x].is_input && mrt_dtype_bits(e->vals[x].tensor.dtype) == mrt_dtype_bits(e->vals[y].tensor.dtype))
            t.mv[y].inplace_of = x;
    }
    /* any later reader (a CPU step reads the host copy, but the bytes stay planned until then: simple and safe) */
    for (int s = 0; !st && s < ns; s++) {
        if (!runs(&e->steps[s])) continue;
        st = mrt_dev_step_reads(e, s, &t.reads, &t.n_reads, &t.cap_reads);
        for (int i = 0; !st && i < t.n_reads; i++) {
            int v = t.reads[i];
            if (v >= 0 && t.mv[v].size && t.mv[v].last_use < s) t.mv[v].last_use = s;
        }
    }
    /* graph outputs are read at the end (copied to the host then): their device bytes live that long, and no step
       takes them over in place */
    for (int i = 0; !st && i < g->n_outputs; i++) {
        int v = g->outputs[i];
        d->reads_on_host[v] = 1;
        if (t.mv[v].size) t.mv[v].last_use = ns > 0 ? ns - 1 : 0;
        for (int w = 0; w < nm; w++)
            if (t.mv[w].inplace_of == v) t.mv[w].inplace_of = -1;
    }
    if (!st) {
        mrt_memplan_result res = {t.offsets, 0, 0};
        if (e->session->opt.no_mem_plan) { /* one allocation per value: each its own block */
            for (int v = 0; v < nm; v++) t.mv[v].inplace_of = -1;
        }
        st = mrt_memplan(nm, t.mv, DEV_ALIGN, &res);
        if (!st && res.peak) {
            char err[512] = "";
            if (d->api->malloc(&d->arena, res.peak, err, sizeof err) != 0)
                st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "allocating the %zu-byte device arena: %s", res.peak, err);
            d->arena_bytes = res.peak;
        }
        for (int v = 0; !st && v < nv; v++)
            if (t.mv[v].size) d->ptr[v] = (char *)d->arena + t.offsets[v];
        if (!st) {
            free(d->ws);
            d->ws = calloc((size_t)(ns ? ns : 1), sizeof *d->ws);
            if (!d->ws) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (device plan)");
        }
        for (int k = 0; !st && k < ns; k++)
            if (t.mv[nv + k].size) d->ws[k] = (char *)d->arena + t.offsets[nv + k];
    }
    /* constants: one allocation, uploaded now, kept for the plan's life */
    size_t cbytes = 0;
    for (int v = 0; !st && v < nv; v++)
        if (need_const[v]) cbytes += align_up(mrt_tensor_nbytes(&e->vals[v].tensor) ? mrt_tensor_nbytes(&e->vals[v].tensor) : 1);
    if (!st && cbytes) {
        char err[512] = "";
        if (d->api->malloc(&d->consts, cbytes, err, sizeof err) != 0)
            st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "allocating %zu bytes of device memory for the constants: %s", cbytes, err);
        d->consts_bytes = cbytes;
        size_t off = 0;
        for (int v = 0; !st && v < nv; v++) {
            if (!need_const[v]) continue;
            size_t nb = mrt_tensor_nbytes(&e->vals[v].tensor);
            d->ptr[v] = (char *)d->consts + off;
            if (nb && d->api->copy_to_device(d->ptr[v], e->vals[v].tensor.data, nb, NULL, err, sizeof err) != 0)
                st = mrt_fail(MRT_STATUS_DEVICE_ERROR, "uploading constant '%s' (%zu bytes): %s", g->values[v].name, nb, err);
            off += align_up(nb ? nb : 1);
        }
    }
    /* the copies a run makes, simulated on the bits for minirt info */
    d->n_copies = 0;
    uint8_t *where = calloc((size_t)(nv ? nv : 1), 1);
    if (!st && !where) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (device plan)");
    for (int v = 0; !st && v < nv; v++)
        where[v] = e->state[v] == MRT_VS_CONST ? (uint8_t)(MRT_ON_HOST | (need_const[v] ? MRT_ON_DEVICE : 0))
                   : t.producer[v] < 0 ? MRT_ON_HOST : 0;
    for (int s = 0; !st && s < ns; s++) {
        const mrt_step *step = &e->steps[s];
        if (!runs(step)) continue;
        st = mrt_dev_step_reads(e, s, &t.reads, &t.n_reads, &t.cap_reads);
        uint8_t bit = step->device == MRT_DEVICE_CUDA ? MRT_ON_DEVICE : MRT_ON_HOST;
        for (int i = 0; !st && i < t.n_reads; i++) {
            int v = t.reads[i];
            if (v < 0 || !is_dev_tensor(e, v) || (where[v] & bit) || !where[v]) continue;
            st = add_copy(d, s, v, bit == MRT_ON_DEVICE);
            where[v] |= bit;
        }
        const mrt_node *nd = &g->nodes[step->node];
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] >= 0) where[nd->outputs[o]] = bit;
    }
    for (int i = 0; !st && i < g->n_outputs; i++) {
        int v = g->outputs[i];
        if (is_dev_tensor(e, v) && where[v] == MRT_ON_DEVICE) st = add_copy(d, ns, v, false);
    }
    free(where);
    if (!st && !e->parent && !e->function && e->session->dev->n_streams > 1) st = plan_streams(e, &t, nm);
    if (!st && !e->parent && !e->function && e->session->opt.device_node_timing) {
        d->timing = calloc((size_t)2 * (size_t)(ns ? ns : 1), sizeof *d->timing);
        d->step_ms = malloc((size_t)(ns ? ns : 1) * sizeof *d->step_ms);
        if (!d->timing || !d->step_ms) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (node timing)");
        for (int k = 0; !st && k < ns; k++) {
            d->step_ms[k] = -1;
            char err[512] = "";
            if (!runs(&e->steps[k]) || e->steps[k].device != MRT_DEVICE_CUDA) continue;
            if (d->api->event_create(&d->timing[2 * k], 1, err, sizeof err) != 0 ||
                d->api->event_create(&d->timing[2 * k + 1], 1, err, sizeof err) != 0)
                st = mrt_fail(MRT_STATUS_DEVICE_ERROR, "creating a CUDA event: %s", err);
        }
    }
    free(t.mv);
    free(t.offsets);
    free(t.producer);
    free(t.reads);
    free(t.pred_start);
    free(t.preds);
    free(need_const);
    return st;
}

/* ------------------------------------------------------------------ running */

static void *stream_of(const mrt_exec *e, int s)
{
    const mrt_dev_session *ds = e->session->dev;
    const mrt_dev_exec *d = e->dev;
    if (d->sched.stream_of && s >= 0 && s < d->sched.n_nodes) return ds->streams[d->sched.stream_of[s]];
    return ds->streams[0];
}

/* The step that wrote v this run (its stream is where v's bytes become ready), or -1. */
static int producer_step(const mrt_exec *e, int v)
{
    for (int s = 0; s < e->n_steps; s++) {
        const mrt_node *nd = &e->graph->nodes[e->steps[s].node];
        for (int o = 0; o < nd->n_outputs; o++)
            if (nd->outputs[o] == v) return e->steps[s].fused_into >= 0 ? e->steps[s].fused_into : s;
    }
    return -1;
}

void mrt_dev_run_begin(mrt_exec *e)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return;
    for (int v = 0; v < e->graph->n_values; v++) {
        if (d->own[v]) mrt_dev_release_value(e, v);
        const mrt_graph_value *gv = &e->graph->values[v];
        if (e->state[v] == MRT_VS_CONST)
            d->where[v] = (uint8_t)(MRT_ON_HOST | (d->ptr[v] ? MRT_ON_DEVICE : 0));
        else
            d->where[v] = gv->is_input || gv->is_outer || gv->initializer ? MRT_ON_HOST : 0;
    }
    mrt_dev_session *ds = e->session->dev;
    if (!e->parent && !e->function) {
        char err[256];
        ds->api->event_record(ds->run_start, ds->streams[0], err, sizeof err);
        for (int i = 1; i < ds->n_streams; i++) ds->api->stream_wait_event(ds->streams[i], ds->run_start, err, sizeof err);
    }
}

mrt_status mrt_dev_to_host(mrt_exec *e, int v)
{
    mrt_dev_exec *d = e->dev;
    if (!d || v < 0 || (d->where[v] & MRT_ON_HOST) || !(d->where[v] & MRT_ON_DEVICE) || !is_dev_tensor(e, v))
        return MRT_STATUS_OK;
    mrt_tensor *t = &e->vals[v].tensor;
    size_t nb = mrt_tensor_nbytes(t);
    if (!t->data && nb) { /* storage the host never needed so far */
        mrt_tensor shape = *t;
        MRT_TRY(mrt_tensor_alloc(t, shape.dtype, shape.rank, shape.shape));
        e->alloc[v] = MRT_ALLOC_RUN;
    }
    char err[512] = "";
    void *pin = nb ? staging(e->session->dev, nb) : NULL;
    if (nb && d->api->copy_to_host(pin ? pin : t->data, d->ptr[v], nb, stream_of(e, producer_step(e, v)), err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "copying '%s' (%zu bytes) to the host: %s", e->graph->values[v].name, nb, err);
    if (pin) memcpy(t->data, pin, nb);
    d->where[v] |= MRT_ON_HOST;
    return MRT_STATUS_OK;
}

static mrt_status to_device(mrt_exec *e, int v)
{
    mrt_dev_exec *d = e->dev;
    if ((d->where[v] & MRT_ON_DEVICE) || !is_dev_tensor(e, v)) return MRT_STATUS_OK;
    const mrt_tensor *t = &e->vals[v].tensor;
    size_t nb = mrt_tensor_nbytes(t);
    char err[512] = "";
    if (!d->ptr[v]) {
        if (d->api->malloc_async(&d->ptr[v], nb ? nb : 1, NULL, err, sizeof err) != 0)
            return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "device memory for '%s' (%zu bytes): %s", e->graph->values[v].name, nb, err);
        d->own[v] = 1;
    }
    /* uploads wait for all device work: a planned block may still be read by a step on another stream, and the
       readers of this value may run on several streams (uploads happen at inputs and CPU fallbacks only) */
    void *pin = nb ? staging(e->session->dev, nb) : NULL;
    if (pin) memcpy(pin, t->data, nb);
    if (nb && (d->api->synchronize(err, sizeof err) != 0 ||
               d->api->copy_to_device(d->ptr[v], pin ? pin : t->data, nb, NULL, err, sizeof err) != 0 ||
               d->api->synchronize(err, sizeof err) != 0))
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "copying '%s' (%zu bytes) to the device: %s", e->graph->values[v].name, nb, err);
    d->where[v] |= MRT_ON_DEVICE;
    return MRT_STATUS_OK;
}

/* A host tensor copied to a device buffer that lives until the step is done (mrt_dev_step_done frees it). */
static mrt_status upload_temporary(mrt_exec *e, mrt_value *in)
{
    mrt_dev_exec *d = e->dev;
    size_t nb = mrt_tensor_nbytes(&in->tensor);
    char err[512] = "";
    if (d->n_temp == (int)(sizeof d->temp / sizeof d->temp[0]))
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "more replaced inputs than a node may have on CUDA");
    void *p = NULL;
    if (d->api->malloc(&p, nb ? nb : 1, err, sizeof err) != 0 ||
        (nb && (d->api->synchronize(err, sizeof err) != 0 ||
                d->api->copy_to_device(p, in->tensor.data, nb, NULL, err, sizeof err) != 0 ||
                d->api->synchronize(err, sizeof err) != 0))) {
        if (p) d->api->free(p, err, sizeof err);
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "copying a replaced input to the device: %s", err);
    }
    d->temp[d->n_temp++] = p;
    in->tensor.data = p;
    return MRT_STATUS_OK;
}

mrt_status mrt_dev_step_inputs(mrt_exec *e, int s, mrt_op_ctx *ctx)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return MRT_STATUS_OK;
    mrt_step *step = &e->steps[s];
    const mrt_node *nd = &e->graph->nodes[step->node];
    int *reads = NULL, n = 0, cap = 0;
    mrt_status st = mrt_dev_step_reads(e, s, &reads, &n, &cap);
    if (step->device != MRT_DEVICE_CUDA) {
        for (int i = 0; !st && i < n; i++) st = mrt_dev_to_host(e, reads[i]);
        free(reads);
        /* a value whose host storage came with this copy: the context's view must see it */
        for (int i = 0; !st && i < nd->n_inputs; i++) {
            mrt_value *in = (mrt_value *)ctx->inputs[i];
            int v = nd->inputs[i];
            if (v >= 0 && in && in->kind == MRT_VALUE_TENSOR && !in->tensor.data) in->tensor.data = e->vals[v].tensor.data;
        }
        return st;
    }
    free(reads);
    MRT_TRY(st);
    ctx->device = MRT_DEVICE_CUDA;
    ctx->stream = stream_of(e, s);
    ctx->allow_tf32 = e->session->opt.allow_tf32;
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        mrt_value *in = (mrt_value *)ctx->inputs[i]; /* ctx_prepare's copy: the kernel's view */
        if (v < 0 || !in || in->kind != MRT_VALUE_TENSOR) continue;
        if (in->tensor.data != e->vals[v].tensor.data && in->tensor.data) {
            /* the caller replaced this input for this node (teacher forcing): its bytes go up for this step only */
            MRT_TRY(upload_temporary(e, in));
            continue;
        }
        MRT_TRY(to_device(e, v));
        in->tensor.data = d->ptr[v];
    }
    if (nd->n_outputs > d->out_view_cap) {
        mrt_value *ov = realloc(d->out_view, (size_t)nd->n_outputs * sizeof *ov);
        if (!ov) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (node context)");
        d->out_view = ov;
        d->out_view_cap = nd->n_outputs;
    }
    for (int o = 0; o < nd->n_outputs; o++) {
        int v = nd->outputs[o];
        if (v < 0 || !ctx->outputs[o]) continue;
        d->out_view[o] = e->vals[v];
        if (e->vals[v].kind == MRT_VALUE_TENSOR) {
            size_t nb = mrt_tensor_nbytes(&e->vals[v].tensor);
            char err[512] = "";
            if (!d->ptr[v] && e->vals[v].tensor.data) { /* a dynamic step's output, shaped by infer just now */
                if (d->api->malloc_async(&d->ptr[v], nb ? nb : 1, stream_of(e, s), err, sizeof err) != 0)
                    return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "node '%s' (%s): device memory for output %d (%zu bytes): %s",
                                    nd->name, nd->op_type, o, nb, err);
                d->own[v] = 1;
            }
            d->out_view[o].tensor.data = d->ptr[v];
        }
        ctx->outputs[o] = &d->out_view[o];
    }
    ctx->workspace = d->ws ? d->ws[s] : NULL;
    ctx->workspace_bytes = ctx->workspace ? step->ws_bytes : 0;
    /* outputs start as zeros, unless the kernel writes every element (then 0xFF bytes when poisoning, as on the CPU) */
    unsigned flags = step->kernel->flags;
    for (int o = 0; o < nd->n_outputs; o++) {
        const mrt_value *ov = ctx->outputs[o];
        if (!ov || ov->kind != MRT_VALUE_TENSOR || !ov->tensor.data) continue;
        if (o == 0 && nd->n_inputs > 0 && ctx->inputs[0] && ctx->inputs[0]->tensor.data == ov->tensor.data) continue;
        bool in_full = (flags & MRT_KERNEL_WRITES_ALL) || (o == 0 && (flags & MRT_KERNEL_EPILOGUE));
        if (!in_full || e->session->opt.poison_outputs)
            MRT_TRY(mrt_dev_fill(e, s, ov->tensor.data, in_full ? 0xFF : 0, mrt_tensor_nbytes(&ov->tensor)));
    }
    if (d->timing && d->timing[2 * s]) {
        char err[512] = "";
        if (d->api->event_record(d->timing[2 * s], ctx->stream, err, sizeof err) != 0)
            return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): recording an event: %s", nd->name, nd->op_type, err);
    }
    /* cross-stream edges: wait for the producers' events */
    if (d->sched.events) {
        char err[512] = "";
        for (int k = 0; k < d->sched.n_events; k++) {
            if (d->sched.events[k].consumer != s) continue;
            if (d->api->stream_wait_event(ctx->stream, d->events[d->sched.events[k].producer], err, sizeof err) != 0)
                return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): waiting for an event: %s", nd->name, nd->op_type, err);
        }
    }
    return MRT_STATUS_OK;
}

mrt_status mrt_dev_check_dynamic(mrt_exec *e, mrt_step *step, mrt_op_ctx *ctx)
{
    char why[400] = "";
    if (all_dense_tensors(ctx, why, sizeof why) && (!step->kernel->supports || step->kernel->supports(ctx, why, sizeof why)))
        return MRT_STATUS_OK;
    const mrt_node *nd = &e->graph->nodes[step->node];
    if (e->session->opt.no_cpu_fallback)
        return mrt_fail(MRT_STATUS_NOT_IMPLEMENTED, "node '%s' (%s): %s, and --no-cpu-fallback forbids running it on the CPU",
                        nd->name, nd->op_type, why[0] ? why : "the CUDA kernel does not take these shapes");
    /* these shapes go to the CPU (this run and the next: a dynamic step's shapes rarely change) */
    step->kernel = step->cpu_kernel;
    step->device = MRT_DEVICE_CPU;
    free(step->placement_why);
    step->placement_why = strdup(why[0] ? why : "the CUDA kernel does not take the run-time shapes");
    return MRT_STATUS_OK;
}

mrt_status mrt_dev_fill(mrt_exec *e, int s, void *dst, int byte, size_t bytes)
{
    char err[512] = "";
    if (bytes && e->dev->api->memset(dst, byte, bytes, stream_of(e, s), err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "filling a device output: %s", err);
    return MRT_STATUS_OK;
}

mrt_status mrt_dev_step_done(mrt_exec *e, int s, mrt_op_ctx *ctx)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return MRT_STATUS_OK;
    const mrt_step *step = &e->steps[s];
    const mrt_node *nd = &e->graph->nodes[step->node];
    bool cuda = step->device == MRT_DEVICE_CUDA;
    for (int o = 0; o < nd->n_outputs; o++) {
        int v = nd->outputs[o];
        if (v < 0) continue;
        d->where[v] = cuda ? MRT_ON_DEVICE : MRT_ON_HOST;
    }
    if (!cuda) return MRT_STATUS_OK;
    char err[512] = "";
    mrt_dev_session *ds = e->session->dev;
    if (d->n_temp) { /* replaced inputs: their step must be done with them */
        if (d->api->stream_synchronize(ctx->stream, err, sizeof err) != 0)
            return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): %s", nd->name, nd->op_type, err);
        for (int i = 0; i < d->n_temp; i++) dev_free(d, &d->temp[i]);
        d->n_temp = 0;
    }
    if (ds->sync_each_node && d->api->stream_synchronize(ctx->stream, err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): %s", nd->name, nd->op_type, err);
    if (d->api->last_error(err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): %s%s", nd->name, nd->op_type, err,
                        ds->sync_each_node ? "" : " (an asynchronous fault may belong to an earlier node: rerun with "
                                                  "MRT_SYNC_EACH_NODE=1 to pin it down)");
    if (d->timing && d->timing[2 * s + 1] && d->api->event_record(d->timing[2 * s + 1], ctx->stream, err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): recording an event: %s", nd->name, nd->op_type, err);
    if (d->events && d->events[s] && d->api->event_record(d->events[s], ctx->stream, err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "node '%s' (%s): recording an event: %s", nd->name, nd->op_type, err);
    return MRT_STATUS_OK;
}

mrt_status mrt_dev_run_end(mrt_exec *e)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return MRT_STATUS_OK;
    for (int i = 0; i < e->graph->n_outputs; i++) MRT_TRY(mrt_dev_to_host(e, e->graph->outputs[i]));
    mrt_dev_session *ds = e->session->dev;
    char err[512] = "";
    if (!e->parent && !e->function) {
        /* stream 0 joins the others, so the end event follows all the run's work */
        for (int i = 1; i < ds->n_streams; i++) {
            if (d->api->event_record(ds->run_end, ds->streams[i], err, sizeof err) != 0 ||
                d->api->stream_wait_event(ds->streams[0], ds->run_end, err, sizeof err) != 0)
                return mrt_fail(MRT_STATUS_DEVICE_ERROR, "joining the CUDA streams: %s", err);
        }
        if (d->api->event_record(ds->run_end, ds->streams[0], err, sizeof err) != 0 ||
            d->api->synchronize(err, sizeof err) != 0 ||
            d->api->event_elapsed_ms(&ds->last_gpu_ms, ds->run_start, ds->run_end, err, sizeof err) != 0)
            return mrt_fail(MRT_STATUS_DEVICE_ERROR, "finishing the run on the device: %s", err);
        for (int k = 0; d->timing && k < e->n_steps; k++) {
            d->step_ms[k] = -1;
            if (d->timing[2 * k] &&
                d->api->event_elapsed_ms(&d->step_ms[k], d->timing[2 * k], d->timing[2 * k + 1], err, sizeof err) != 0)
                return mrt_fail(MRT_STATUS_DEVICE_ERROR, "reading a node's device time: %s", err);
        }
    }
    if (d->api->last_error(err, sizeof err) != 0) return mrt_fail(MRT_STATUS_DEVICE_ERROR, "after the run: %s", err);
    return MRT_STATUS_OK;
}

void *mrt_dev_scratch(mrt_exec *e, size_t bytes)
{
    mrt_dev_exec *d = e->dev;
    if (!d) return NULL;
    if (bytes <= d->scratch_bytes && d->scratch) return d->scratch;
    char err[256];
    d->api->synchronize(err, sizeof err); /* the old scratch may still be in use on a stream */
    dev_free(d, &d->scratch);
    d->scratch_bytes = 0;
    if (d->api->malloc(&d->scratch, align_up(bytes), err, sizeof err) != 0) return NULL;
    d->scratch_bytes = align_up(bytes);
    return d->scratch;
}

mrt_status mrt_dev_output_alloc(mrt_op_ctx *ctx, int vi, mrt_value *view)
{
    mrt_exec *e = ctx->exec;
    mrt_dev_exec *d = e ? e->dev : NULL;
    if (!d) return mrt_fail(MRT_STATUS_INVALID_ARG, "a device output outside a CUDA session");
    size_t nb = mrt_tensor_nbytes(&view->tensor);
    char err[512] = "";
    void *p;
    if (d->api->malloc_async(&p, nb ? nb : 1, ctx->stream, err, sizeof err) != 0)
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "node '%s' (%s): device memory for '%s' (%zu bytes): %s", ctx->node->name,
                        ctx->node->op_type, e->graph->values[vi].name, nb, err);
    if (d->own[vi]) free_own(d, vi, ctx->stream);
    d->ptr[vi] = p;
    d->own[vi] = 1;
    view->tensor.data = p;
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ what the plan did (minirt.h) */

const char *mrt_session_node_device(const mrt_session *s, int node, const char **why)
{
    const mrt_exec *e = s->main;
    if (why) *why = NULL;
    for (int i = 0; e && i < e->n_steps; i++) {
        const mrt_step *st = &e->steps[i];
        if (st->node != node) continue;
        if (st->folded) return "folded";
        if (st->fused_into >= 0) return "fused";
        if (why) *why = st->placement_why;
        return st->device == MRT_DEVICE_CUDA ? "cuda" : "cpu";
    }
    return NULL;
}

bool mrt_session_plan_copy(const mrt_session *s, int i, const char **value, const char **before_node, bool *to_device)
{
    const mrt_exec *e = s->main;
    if (!e || !e->dev || i < 0 || i >= e->dev->n_copies) return false;
    const mrt_dev_copy *c = &e->dev->copies[i];
    *value = e->graph->values[c->value].name;
    *before_node = c->step < e->n_steps ? e->graph->nodes[e->steps[c->step].node].name : NULL;
    *to_device = c->to_device;
    return true;
}

float mrt_session_node_gpu_ms(const mrt_session *s, int node)
{
    const mrt_exec *e = s->main;
    if (!e || !e->dev || !e->dev->step_ms) return -1;
    for (int i = 0; i < e->n_steps; i++)
        if (e->steps[i].node == node) return e->dev->step_ms[i];
    return -1;
}
