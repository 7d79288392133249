/* Property tests of the memory planner and the stream scheduler on thousands of random DAGs, the tensor storage
 * cache, and plan memory. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memplan.h"
#include "engine/plan_mem.h"
#include "engine/sched.h"
#include "harness.h"

/* A random DAG in topological order: node i reads up to 3 earlier nodes. */
typedef struct dag {
    int n;
    int *pred_start, *preds;
} dag;

static dag random_dag(th_rng *r, int n)
{
    dag d = {n, calloc((size_t)n + 1, sizeof(int)), malloc((size_t)n * 3 * sizeof(int) + sizeof(int))};
    int k = 0;
    for (int i = 0; i < n; i++) {
        d.pred_start[i] = k;
        int np = i == 0 ? 0 : (int)th_rng_int(r, 0, i < 3 ? i : 3);
        for (int j = 0; j < np; j++) {
            int p = (int)th_rng_int(r, i > 8 ? i - 8 : 0, i - 1); /* mostly local edges, like real graphs */
            bool dup = false;
            for (int q = d.pred_start[i]; q < k; q++) dup |= d.preds[q] == p;
            if (!dup) d.preds[k++] = p;
        }
    }
    d.pred_start[n] = k;
    return d;
}

static void dag_free(dag *d)
{
    free(d->pred_start);
    free(d->preds);
}

Test(memplan, random_dags_never_overlap_live_values)
{
    th_rng r;
    th_rng_init(&r, th_seed("memplan.random_dags"));
    for (int iter = 0; iter < 3000; iter++) {
        int n = (int)th_rng_int(&r, 1, 60);
        dag d = random_dag(&r, n);
        /* value i is node i's output; it lives until its last reader; some values are unplanned (size 0) */
        mrt_memplan_value *v = calloc((size_t)n, sizeof *v);
        size_t naive = 0;
        for (int i = 0; i < n; i++) {
            v[i].size = th_rng_int(&r, 0, 9) == 0 ? 0 : (size_t)th_rng_int(&r, 1, 5000);
            v[i].first_use = v[i].last_use = i;
            v[i].inplace_of = -1;
            naive += v[i].size;
        }
        for (int i = 0; i < n; i++)
            for (int k = d.pred_start[i]; k < d.pred_start[i + 1]; k++)
                if (v[d.preds[k]].last_use < i) v[d.preds[k]].last_use = i;
        for (int i = 0; i < n; i++) /* in-place candidates: first predecessor */
            if (d.pred_start[i + 1] > d.pred_start[i] && th_rng_int(&r, 0, 2) == 0) v[i].inplace_of = d.preds[d.pred_start[i]];
        size_t *off = calloc((size_t)n, sizeof *off);
        size_t align = (size_t)1 << th_rng_int(&r, 0, 7);
        mrt_memplan_result res = {off, 0, 0};
        cr_assert_eq(mrt_memplan(n, v, align, &res), MRT_STATUS_OK, "%s", mrt_last_error());
        size_t aligned_naive = 0;
        for (int i = 0; i < n; i++) aligned_naive += v[i].size ? (v[i].size + align - 1) / align * align : 0;
        cr_assert_leq(res.peak, aligned_naive, "iteration %d: peak %zu > naive %zu", iter, res.peak, aligned_naive);
        if (res.inplace_count == 0)
            cr_assert_geq(res.peak, mrt_memplan_lower_bound(n, v, align), "iteration %d: below the lower bound", iter);
        for (int i = 0; i < n; i++) {
            if (!v[i].size) continue;
            cr_assert_eq(off[i] % align, 0, "iteration %d: value %d misaligned", iter, i);
            cr_assert_leq(off[i] + v[i].size, res.peak, "iteration %d: value %d beyond the arena", iter, i);
            for (int j = i + 1; j < n; j++) {
                if (!v[j].size) continue;
                bool live_together = v[i].first_use <= v[j].last_use && v[j].first_use <= v[i].last_use;
                bool overlap = off[i] < off[j] + v[j].size && off[j] < off[i] + v[i].size;
                /* the only permitted sharing of live values: j reuses i in place at the step where i dies */
                bool inplace = v[j].inplace_of == i && v[i].last_use == v[j].first_use && off[i] == off[j];
                cr_assert(!(live_together && overlap) || inplace,
                          "iteration %d: values %d [%d,%d] @%zu+%zu and %d [%d,%d] @%zu+%zu overlap", iter, i,
                          v[i].first_use, v[i].last_use, off[i], v[i].size, j, v[j].first_use, v[j].last_use, off[j],
                          v[j].size);
            }
        }
        (void)naive;
        free(off);
        free(v);
        dag_free(&d);
    }
}

Test(memplan, chain_reuses_two_buffers)
{
    /* a -> b -> c -> d, equal sizes: two buffers suffice */
    mrt_memplan_value v[4];
    for (int i = 0; i < 4; i++) v[i] = (mrt_memplan_value){100, i, i + 1 < 4 ? i + 1 : 3, -1};
    size_t off[4];
    mrt_memplan_result res = {off, 0, 0};
    cr_assert_eq(mrt_memplan(4, v, 64, &res), MRT_STATUS_OK);
    cr_assert_eq(res.peak, 256, "peak %zu", res.peak);
    cr_assert_eq(mrt_memplan_lower_bound(4, v, 64), 256);
}

Test(memplan, rejects_bad_alignment_and_lifetimes)
{
    mrt_memplan_value v = {10, 3, 1, -1};
    size_t off;
    mrt_memplan_result res = {&off, 0, 0};
    cr_assert_eq(mrt_memplan(1, &v, 3, &res), MRT_STATUS_INVALID_ARG);
    cr_assert_eq(mrt_memplan(1, &v, 8, &res), MRT_STATUS_INVALID_ARG);
}

/* Happens-before from stream order plus events, by reachability, independent of the scheduler's clocks. */
static bool ordered(const mrt_schedule *s, int n, int from, int to)
{
    /* edges: consecutive nodes on a stream, and event producer -> consumer */
    bool *seen = calloc((size_t)n, 1);
    int *stack = malloc((size_t)n * sizeof(int)), top = 0;
    stack[top++] = from;
    seen[from] = true;
    bool found = false;
    while (top && !found) {
        int u = stack[--top];
        if (u == to) found = true;
        for (int w = u + 1; w < n; w++) { /* next node on the same stream */
            if (s->stream_of[w] == s->stream_of[u]) {
                if (!seen[w]) { seen[w] = true; stack[top++] = w; }
                break;
            }
        }
        for (int e = 0; e < s->n_events; e++)
            if (s->events[e].producer == u && !seen[s->events[e].consumer]) {
                seen[s->events[e].consumer] = true;
                stack[top++] = s->events[e].consumer;
            }
    }
    free(seen);
    free(stack);
    return found;
}

Test(sched, every_cross_stream_edge_is_ordered)
{
    th_rng r;
    th_rng_init(&r, th_seed("sched.random_dags"));
    for (int iter = 0; iter < 2000; iter++) {
        int n = (int)th_rng_int(&r, 1, 40), k = (int)th_rng_int(&r, 1, 6);
        dag d = random_dag(&r, n);
        mrt_schedule s;
        cr_assert_eq(mrt_schedule_build(n, d.pred_start, d.preds, k, &s), MRT_STATUS_OK, "%s", mrt_last_error());
        cr_assert_leq(s.n_streams_used, k);
        for (int i = 0; i < n; i++) {
            cr_assert(s.stream_of[i] >= 0 && s.stream_of[i] < k);
            for (int q = d.pred_start[i]; q < d.pred_start[i + 1]; q++)
                cr_assert(ordered(&s, n, d.preds[q], i), "iteration %d: edge %d -> %d (streams %d -> %d) unordered",
                          iter, d.preds[q], i, s.stream_of[d.preds[q]], s.stream_of[i]);
        }
        /* minimality: no event is implied by the others plus stream order */
        for (int e = 0; e < s.n_events; e++) {
            mrt_schedule without = s;
            mrt_sched_event *ev = malloc((size_t)(s.n_events ? s.n_events : 1) * sizeof *ev);
            int m = 0;
            for (int f = 0; f < s.n_events; f++)
                if (f != e) ev[m++] = s.events[f];
            without.events = ev;
            without.n_events = m;
            cr_assert(!ordered(&without, n, s.events[e].producer, s.events[e].consumer),
                      "iteration %d: event %d -> %d is redundant", iter, s.events[e].producer, s.events[e].consumer);
            free(ev);
        }
        mrt_schedule_free(&s);
        dag_free(&d);
    }
}

Test(sched, chain_gets_one_stream)
{
    int ps[6] = {0, 0, 1, 2, 3, 4}, p[4] = {0, 1, 2, 3};
    mrt_schedule s;
    cr_assert_eq(mrt_schedule_build(5, ps, p, 4, &s), MRT_STATUS_OK);
    cr_assert_eq(s.n_streams_used, 1);
    cr_assert_eq(s.n_events, 0);
    mrt_schedule_free(&s);
}

Test(sched, k_branches_get_k_streams)
{
    /* node 0 forks into k branches of length 3, joined by the last node */
    for (int k = 2; k <= 6; k++) {
        int n = 1 + 3 * k + 1;
        int *ps = calloc((size_t)n + 1, sizeof(int)), *p = calloc((size_t)(4 * k + 4), sizeof(int)), m = 0;
        for (int i = 0; i < n; i++) {
            ps[i] = m;
            if (i == 0) continue;
            if (i == n - 1) {
                for (int b = 0; b < k; b++) p[m++] = 1 + 3 * b + 2;
            } else {
                int j = (i - 1) % 3;
                p[m++] = j == 0 ? 0 : i - 1;
            }
        }
        ps[n] = m;
        mrt_schedule s;
        cr_assert_eq(mrt_schedule_build(n, ps, p, k, &s), MRT_STATUS_OK);
        cr_assert_eq(s.n_streams_used, k, "k=%d: %d streams used", k, s.n_streams_used);
        for (int b = 0; b < k; b++)
            for (int j = 1; j < 3; j++)
                cr_assert_eq(s.stream_of[1 + 3 * b + j], s.stream_of[1 + 3 * b], "a branch stays on one stream");
        mrt_schedule_free(&s);
        free(ps);
        free(p);
    }
}

/* ------------------------------------------------------------------ large-buffer cache (engine/tensor.c) */

static bool all_zero(const mrt_tensor *t)
{
    const unsigned char *p = t->data;
    for (size_t i = 0, n = mrt_tensor_nbytes(t); i < n; i++)
        if (p[i]) return false;
    return true;
}

/* A released buffer of 1 MiB or more serves the next allocation that fits it (and is at least half its size),
   zeroed again; smaller or larger requests do not take it. */
Test(tensor_cache, released_large_buffers_are_reused_zeroed)
{
    mrt_tensor_cache_flush();
    mrt_tensor a = {0}, b = {0}, c = {0}, d = {0};
    cr_assert_eq(mrt_tensor_alloc(&a, MRT_DTYPE_FLOAT, 1, (int64_t[]){750000}), MRT_STATUS_OK); /* 3 MB */
    memset(a.data, 0xab, mrt_tensor_nbytes(&a));
    void *first = a.data;
    mrt_tensor_release(&a);
    cr_assert_eq(mrt_tensor_alloc(&c, MRT_DTYPE_FLOAT, 1, (int64_t[]){300000}), MRT_STATUS_OK); /* 1.2 MB: too small */
    cr_assert_neq(c.data, first, "a 1.2 MB tensor took a 3 MB buffer");
    cr_assert_eq(mrt_tensor_alloc(&d, MRT_DTYPE_FLOAT, 1, (int64_t[]){1000000}), MRT_STATUS_OK); /* 4 MB: too large */
    cr_assert_neq(d.data, first);
    cr_assert_eq(mrt_tensor_alloc(&b, MRT_DTYPE_FLOAT, 2, (int64_t[]){625, 1000}), MRT_STATUS_OK); /* 2.5 MB */
    cr_assert_eq(b.data, first, "the released 3 MB buffer was not reused");
    cr_assert(all_zero(&b), "a reused buffer is not zeroed");
    mrt_tensor_release(&b);
    mrt_tensor_release(&c);
    mrt_tensor_release(&d);
    mrt_tensor_cache_flush();
    cr_assert_eq(mrt_tensor_alloc(&a, MRT_DTYPE_UINT8, 1, (int64_t[]){3 << 20}), MRT_STATUS_OK);
    cr_assert(all_zero(&a));
    mrt_tensor_release(&a);
    mrt_tensor_cache_flush();
}

/* Plan memory (engine/plan_mem.h): random requests, each written in full, are 64-byte aligned and never overlap;
   requests of many MiB get a block of their own; blocks of 2 MiB and more start on a 2 MiB boundary (checked
   through the first request they serve); a freed pool serves again. Under ASan, a block left unfreed is a leak. */
Test(plan_mem, requests_are_aligned_and_disjoint)
{
    th_rng r;
    th_rng_init(&r, th_seed("plan_mem.requests"));
    for (int round = 0; round < 2; round++) {
        mrt_plan_mem m = {0};
        enum { N = 200 };
        unsigned char *p[N];
        size_t n[N];
        for (int i = 0; i < N; i++) {
            /* mostly small (a 1x1 Conv's weights), some up to 3 MiB, and a few of 9 to 12 MiB (a classifier) */
            int kind = th_rng_int(&r, 0, 19);
            n[i] = kind < 15 ? (size_t)th_rng_int(&r, 0, 70000) : kind < 19 ? (size_t)th_rng_int(&r, 1, 3 << 20)
                                                                             : (size_t)th_rng_int(&r, 9 << 20, 12 << 20);
            p[i] = mrt_plan_mem_alloc(&m, n[i]);
            cr_assert(p[i], "request %d (%zu bytes) failed", i, n[i]);
            cr_assert_eq((uintptr_t)p[i] % 64, 0, "request %d is not 64-byte aligned", i);
            if (n[i] >= (9 << 20)) /* a block of its own, huge-page aligned */
                cr_assert_eq((uintptr_t)p[i] % (2 << 20), 0, "a %zu-byte request does not start a 2 MiB block", n[i]);
            memset(p[i], i & 0xff, n[i]);
        }
        for (int i = 0; i < N; i++) /* no later request wrote over this one */
            for (size_t k = 0; k < n[i]; k += 997)
                cr_assert_eq(p[i][k], (unsigned char)(i & 0xff), "request %d was overwritten at byte %zu", i, k);
        mrt_plan_mem_free(&m);
        cr_assert_null(m.blocks);
    }
}
