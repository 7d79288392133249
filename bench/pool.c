/* minirt_pool: what one hand-off through the session's thread pool costs (engine/threadpool.c). Each job is two
 * tasks, one per thread on two threads, each spinning for a fixed time; the program reports medians over many
 * jobs of
 *  - start: how long after the caller posted the job the worker's task began,
 *  - job: the whole call, less the task time,
 *  - end: how long the call took to return after the later task ended.
 * A model's node is one or two such jobs (MobileNetV2: 55 a run), so on a VM where a cache line moves between
 * cores in ~130 ns these costs are a percent of a 3.5 ms run. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/threadpool.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum { TASK_NS = 2000, JOBS = 50000 };
static volatile int64_t task_start[64], task_end[64];

static void spin_task(void *arg, int64_t b, int64_t e)
{
    (void)arg, (void)b, (void)e;
    int me = mrt_thread_index();
    int64_t t = now_ns();
    task_start[me] = t;
    while (now_ns() - t < TASK_NS) {}
    task_end[me] = now_ns();
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp64);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "usage: minirt_pool (no options: two threads, %d jobs of two %d ns tasks)\n", JOBS, TASK_NS);
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
    mrt_threadpool *p = NULL;
    if (mrt_threadpool_new(2, &p) != MRT_STATUS_OK) {
        fprintf(stderr, "minirt_pool: could not start a two-thread pool\n");
        return 1;
    }
    static int64_t start[JOBS], job[JOBS], end[JOBS];
    for (int i = -1000; i < JOBS; i++) { /* the first thousand warm up */
        int64_t t0 = now_ns();
        mrt_threadpool_run(p, 2, 1, spin_task, NULL);
        int64_t t1 = now_ns(), last = task_end[0] > task_end[1] ? task_end[0] : task_end[1];
        if (i >= 0) start[i] = task_start[1] - t0, job[i] = t1 - t0 - TASK_NS, end[i] = t1 - last;
        for (int64_t t = now_ns(); now_ns() - t < 1000;) {} /* a node's own serial work between jobs */
    }
    mrt_threadpool_free(p);
    printf("thread pool hand-off, 2 threads, %d jobs of two %d ns tasks (medians):\n", JOBS, TASK_NS);
    printf("  worker's task starts %lld ns after the post\n", (long long)median(start, JOBS));
    printf("  the job costs %lld ns beyond its tasks\n", (long long)median(job, JOBS));
    printf("  the call returns %lld ns after the later task ends\n", (long long)median(end, JOBS));
    return 0;
}
