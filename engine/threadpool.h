/* The session's thread pool: kernels split their work over it with mrt_parallel_for (engine/op.h). One pool per
 * session, created with the session (n_threads - 1 workers; the calling thread is the last worker), so no node
 * ever creates a thread.
 *
 * Contract for kernels: the ranges handed to fn are disjoint and cover [0, n); which thread runs which range, and
 * how [0, n) is cut, varies from call to call. A kernel whose results must not depend on the thread count makes
 * every index's result depend on that index alone (never on the range it arrived in).
 *
 * Each thread starts with its share of [0, n): thread t of T (the caller is 0) the indices [n t / T, n (t + 1) / T),
 * then helps with what is left of the others'. So a split that is the same from node to node (a Conv's column
 * strips, a chain's channels) mostly finds its data in the cache of the core that wrote it. Equal shares are equal
 * work only if the indices are: a kernel with uneven tasks spreads them evenly over [0, n).
 *
 * Idle workers spin for a few microseconds (a model's next node usually follows at once), then sleep on a
 * condition variable. A call made from inside a task, or from a thread other than the pool's owner while a job
 * runs, runs serially on the caller: the pool is never re-entered. */
#pragma once

#include <stdint.h>

#include "engine/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mrt_threadpool mrt_threadpool;

/* fn(arg, begin, end): process indices [begin, end). */
typedef void (*mrt_range_fn)(void *arg, int64_t begin, int64_t end);

/* A pool of n_threads threads in all (the caller counts as one; n_threads <= 1 starts no thread). */
mrt_status mrt_threadpool_new(int n_threads, mrt_threadpool **out);
void mrt_threadpool_free(mrt_threadpool *p);
int mrt_threadpool_threads(const mrt_threadpool *p);

/* Run fn over [0, n) in ranges of at least `grain` indices (the last of each thread's share may be shorter), on
   the pool's threads and the caller's; returns when every range is done. Serial (one call fn(arg, 0, n)) when p is NULL, has one thread,
   n <= grain, or the call comes from inside a task. */
void mrt_threadpool_run(mrt_threadpool *p, int64_t n, int64_t grain, mrt_range_fn fn, void *arg);

/* The calling thread's index in the pool that runs it: 1..n_threads-1 on a pool's worker, 0 on any other thread
   (the caller of mrt_threadpool_run runs ranges too). Tasks running at once have different indices, so a kernel
   can give each its own slot of scratch memory. */
int mrt_thread_index(void);

#ifdef __cplusplus
}
#endif
