/* Stream assignment and minimal cross-stream events (see sched.h). */
#include "engine/sched.h"

#include <stdlib.h>
#include <string.h>

#include "engine/status.h"

void mrt_schedule_free(mrt_schedule *s)
{
    if (!s) return;
    free(s->stream_of);
    free(s->events);
    memset(s, 0, sizeof *s);
}

mrt_status mrt_schedule_build(int n_nodes, const int *pred_start, const int *preds, int n_streams, mrt_schedule *out)
{
    memset(out, 0, sizeof *out);
    if (n_streams < 1) return mrt_fail(MRT_STATUS_INVALID_ARG, "scheduler: need at least one stream, got %d", n_streams);
    size_t nn = (size_t)(n_nodes ? n_nodes : 1), ns = (size_t)n_streams;
    out->n_nodes = n_nodes;
    out->stream_of = malloc(nn * sizeof(int));
    int *tail = malloc(ns * sizeof(int));           /* last node on each stream, -1 = unused */
    int *count = calloc(ns, sizeof(int));           /* nodes per stream */
    int *pos = malloc(nn * sizeof(int));            /* 1-based position of a node in its stream */
    int *clock = calloc(nn * ns, sizeof(int));      /* vector clock after each node */
    int *cur = calloc(ns * ns, sizeof(int));        /* current vector clock of each stream */
    int cap_ev = 0;
    mrt_status st = MRT_STATUS_OK;
    if (!out->stream_of || !tail || !count || !pos || !clock || !cur) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (scheduler)");
        goto done;
    }
    for (size_t s = 0; s < ns; s++) tail[s] = -1;
    for (int n = 0; n < n_nodes; n++) {
        int s = -1;
        for (int k = pred_start[n]; k < pred_start[n + 1] && s < 0; k++) {
            int p = preds[k];
            if (p < 0 || p >= n) {
                st = mrt_fail(MRT_STATUS_INVALID_ARG, "scheduler: node %d lists predecessor %d (not topological)", n, p);
                goto done;
            }
            if (tail[out->stream_of[p]] == p) s = out->stream_of[p];
        }
        for (size_t t = 0; s < 0 && t < ns; t++)
            if (tail[t] < 0) s = (int)t;
        if (s < 0) {
            s = 0;
            for (size_t t = 1; t < ns; t++)
                if (count[t] < count[s]) s = (int)t;
        }
        out->stream_of[n] = s;
        int *cs = &cur[(size_t)s * ns];
        /* a wait is needed for p unless the stream already follows p, or another waited-for predecessor q
           follows p (happens-before is acyclic, so two predecessors never cover each other) */
        for (int k = pred_start[n]; k < pred_start[n + 1]; k++) {
            int p = preds[k], sp = out->stream_of[p];
            if (sp == s || cs[sp] >= pos[p]) continue;
            bool covered = false;
            for (int j = pred_start[n]; j < pred_start[n + 1] && !covered; j++) {
                int q = preds[j], sq = out->stream_of[q];
                covered = q != p && sq != s && cs[sq] < pos[q] && clock[(size_t)q * ns + sp] >= pos[p];
            }
            if (covered) continue;
            if (out->n_events == cap_ev) {
                cap_ev = cap_ev ? cap_ev * 2 : 16;
                mrt_sched_event *ne = realloc(out->events, (size_t)cap_ev * sizeof *ne);
                if (!ne) {
                    st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (scheduler)");
                    goto done;
                }
                out->events = ne;
            }
            out->events[out->n_events++] = (mrt_sched_event){p, n};
        }
        for (int e = out->n_events - 1; e >= 0 && out->events[e].consumer == n; e--) {
            const int *cp = &clock[(size_t)out->events[e].producer * ns];
            for (size_t t = 0; t < ns; t++)
                if (cp[t] > cs[t]) cs[t] = cp[t];
        }
        pos[n] = ++count[s];
        cs[s] = pos[n];
        tail[s] = n;
        memcpy(&clock[(size_t)n * ns], cs, ns * sizeof(int));
    }
    for (size_t t = 0; t < ns; t++) out->n_streams_used += count[t] > 0;
done:
    free(tail);
    free(count);
    free(pos);
    free(clock);
    free(cur);
    if (st) mrt_schedule_free(out);
    return st;
}
