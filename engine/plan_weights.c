/* A plan's holds on the model's weights (docs/memory.md, "Weights"; the mechanism is engine/weights.c): which
 * initializers a plan may let go, letting go of those whose every reader packed them (or, on CUDA, has them on the
 * device), and under run_once the per-step takes and drops that keep a run's weights to a few layers' worth. */
#include <stdlib.h>
#include <string.h>

#include "engine/device.h"
#include "engine/exec.h"
#include "engine/weights.h"

void mrt_exec_weight_let_go(mrt_exec *e, int v, bool count)
{
    const mrt_graph_value *gv = &e->graph->values[v];
    const void *had = gv->initializer->data;
    size_t dropped = mrt_weight_release(gv, true);
    if (count) e->weights_dropped_bytes += dropped;
    e->weight_held[v] = 0;
    if (!gv->initializer->data && e->vals[v].tensor.data == had) /* a freed copy: nothing may read it any more */
        e->vals[v].tensor.data = NULL;
}

mrt_status mrt_exec_weight_take(mrt_exec *e, int v)
{
    const mrt_graph_value *gv = &e->graph->values[v];
    MRT_TRY(mrt_weight_hold(gv));
    e->weight_held[v] = 1;
    e->vals[v].tensor.data = gv->initializer->data; /* copied again if it was a copy */
    return MRT_STATUS_OK;
}

void mrt_exec_weights_release(mrt_exec *e)
{
    for (int v = 0; e->weight_held && v < e->graph->n_values; v++)
        if (e->weight_held[v]) mrt_weight_release(&e->graph->values[v], false);
    if (e->weight_held) memset(e->weight_held, 0, (size_t)e->graph->n_values);
    e->weights_dropped_bytes = 0;
    free(e->wdrop_start);
    free(e->wdrop);
    free(e->wtake_start);
    free(e->wtake);
    e->wdrop_start = e->wdrop = e->wtake_start = e->wtake = NULL;
}

/* Before the steps are planned: which held weights may be let go at all (not graph outputs or inputs, not read by a
   subgraph), and how many live steps read each. */
mrt_status mrt_exec_weights_plan_begin(mrt_exec *e, const bool *live)
{
    const mrt_graph *g = e->graph;
    for (int v = 0; v < g->n_values; v++) {
        const mrt_graph_value *gv = &g->values[v];
        e->weight_readers[v] = 0;
        e->weight_kept[v] = !e->weight_held[v] || !gv->weight || gv->is_output || gv->is_input;
    }
    int *refs = NULL, n = 0, cap = 0;
    mrt_status st = MRT_STATUS_OK;
    for (int k = 0; k < g->n_nodes && !st; k++) {
        if (!live[k]) continue;
        const mrt_node *nd = &g->nodes[k];
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0) e->weight_readers[nd->inputs[i]]++;
        n = 0;
        st = mrt_node_outer_refs(nd, g, &refs, &n, &cap); /* read by a body at run time: kept */
        for (int i = 0; !st && i < n; i++) e->weight_kept[refs[i]] = 1;
    }
    free(refs);
    return st;
}

/* Step `step` is planned; bit i of `packed` says its kernel's prepare packed input i and its run never reads that
   input's data. A weight whose every reader packed it is let go now, before the next weight is packed, so the plan
   never holds a model's weights twice. */
void mrt_exec_weights_step_planned(mrt_exec *e, const mrt_step *step, unsigned packed)
{
    const mrt_node *nd = &e->graph->nodes[step->node];
    if (e->run_once) { /* nothing packed: each weight goes after its last reader ran (mrt_exec_weights_plan_drops) */
        for (int i = 0; step->folded && i < nd->n_inputs; i++) /* a folded output may share its input's bytes */
            if (nd->inputs[i] >= 0) e->weight_kept[nd->inputs[i]] = 1;
        return;
    }
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0) continue;
        /* 2: read on the device only (a static CUDA step's input is uploaded with the plan's constants): let go once
           uploaded, unless a host step reads it too (mrt_exec_weights_uploaded) */
        if (!(i < 32 && (packed >> i & 1u))) e->weight_kept[v] |= step->device == MRT_DEVICE_CUDA && !step->dynamic ? 2 : 1;
        if (--e->weight_readers[v] > 0 || e->weight_kept[v] || !e->weight_held[v]) continue;
        mrt_exec_weight_let_go(e, v, true);
    }
}

/* After the device plan uploaded its constants: a weight only static CUDA steps read (or CPU steps that packed it)
   has its bytes on the device; the host's copy goes. */
void mrt_exec_weights_uploaded(mrt_exec *e)
{
    for (int v = 0; e->dev && v < e->graph->n_values; v++) {
        if (e->weight_kept[v] != 2 || !e->weight_held[v] || e->weight_readers[v] > 0 || !mrt_dev_const_on_device_only(e, v))
            continue;
        mrt_exec_weight_let_go(e, v, true);
    }
}

/* Per step, the values whose `at` is that step (at[v] < 0: none): list[start[s] .. start[s + 1]), a counting sort. */
static mrt_status step_lists(int n_steps, int nv, const int *at, int **start, int **list)
{
    int n = 0;
    *start = calloc((size_t)n_steps + 1, sizeof **start);
    for (int v = 0; *start && v < nv; v++)
        if (at[v] >= 0) (*start)[at[v] + 1]++, n++;
    *list = *start ? malloc((size_t)(n ? n : 1) * sizeof **list) : NULL;
    if (!*list) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    for (int s = 0; s < n_steps; s++) (*start)[s + 1] += (*start)[s];
    for (int v = 0; v < nv; v++) /* filling moves each step's start to the next one's, then they shift back */
        if (at[v] >= 0) (*list)[(*start)[at[v]]++] = v;
    for (int s = n_steps; s > 0; s--) (*start)[s] = (*start)[s - 1];
    (*start)[0] = 0;
    return MRT_STATUS_OK;
}

/* run_once: a weight is there from just before the step that reads it first to just after the one that reads it last
   (a fused step's reads happen in its chain's producer), so a run holds the weights of a few layers at a time, not
   the model's. Kept throughout: what mrt_exec_weights_plan_begin keeps, and weights a folded or a CUDA step reads. */
mrt_status mrt_exec_weights_plan_drops(mrt_exec *e)
{
    const mrt_graph *g = e->graph;
    int nv = g->n_values, *first = malloc((size_t)(nv ? nv : 1) * 2 * sizeof *first), *last = first + nv;
    if (!first) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plan)");
    for (int v = 0; v < nv; v++) first[v] = last[v] = e->weight_held[v] && !e->weight_kept[v] ? -1 : -2; /* -2: kept */
    for (int s = 0; s < e->n_steps; s++) {
        const mrt_step *step = &e->steps[s];
        const mrt_node *nd = &g->nodes[step->node];
        int at = step->fused_into >= 0 ? step->fused_into : s;
        bool keep = step->folded || step->device != MRT_DEVICE_CPU;
        for (int i = 0; i < nd->n_inputs; i++) {
            int v = nd->inputs[i];
            if (v < 0 || last[v] == -2) continue;
            if (keep) first[v] = last[v] = -2;
            else {
                if (first[v] < 0 || at < first[v]) first[v] = at;
                if (at > last[v]) last[v] = at;
            }
        }
    }
    mrt_status st = step_lists(e->n_steps, nv, first, &e->wtake_start, &e->wtake);
    if (!st) st = step_lists(e->n_steps, nv, last, &e->wdrop_start, &e->wdrop);
    free(first);
    for (int k = 0; !st && k < e->wdrop_start[e->n_steps]; k++) /* until their first reader takes them */
        mrt_exec_weight_let_go(e, e->wdrop[k], false);
    return st;
}

