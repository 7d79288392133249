/* The stream scheduler: a pure function from a DAG (nodes in topological order) and a stream count to a
 * stream per node and the event record/wait pairs needed on edges that cross streams.
 *
 * A node continues the stream of its first predecessor that is still that stream's tail (a chain stays on
 * one stream); otherwise it opens an unused stream (independent branches spread out), or, when all are in
 * use, joins the stream with the fewest nodes. Ordering across streams uses vector clocks: an edge p -> n
 * gets an event only when n's stream has not already (transitively) waited for p, so the set of waits is
 * minimal for the assignment. */
#pragma once

#include "minirt/minirt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_sched_event {
    int producer;     /* node after which the event is recorded (on stream_of[producer]) */
    int consumer;     /* node before which its stream waits for the event */
} mrt_sched_event;

typedef struct mrt_schedule {
    int n_nodes;
    int n_streams_used;
    int *stream_of;            /* per node */
    int n_events;
    mrt_sched_event *events;   /* ordered by consumer */
} mrt_schedule;

/* preds in CSR form: predecessors of node i are preds[pred_start[i] .. pred_start[i+1]), each < i. */
mrt_status mrt_schedule_build(int n_nodes, const int *pred_start, const int *preds, int n_streams, mrt_schedule *out);
void mrt_schedule_free(mrt_schedule *s);

#ifdef __cplusplus
}
#endif
