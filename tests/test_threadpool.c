/* The session thread pool (engine/threadpool.c): every index is run exactly once, ranges respect the grain (but for
 * the last of a thread's share), thread
 * indices stay below the pool's size, nested calls run serially, and many back-to-back jobs (a model's nodes) never
 * lose a worker's wake-up, nor a sleeping caller's. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "engine/threadpool.h"

typedef struct count_job {
    atomic_int *hits;
    int64_t grain, n;
    int threads;
    atomic_int bad_range, bad_index;
    mrt_threadpool *pool;
    atomic_int nested_calls;
} count_job;

/* Whether e ends a thread's share ([n t / T, n (t + 1) / T), threadpool.h), where a range may be short */
static bool share_end(const count_job *j, int64_t e)
{
    for (int t = 0; t < j->threads; t++)
        if (e == j->n * (t + 1) / j->threads) return true;
    return false;
}

static void count_range(void *arg, int64_t b, int64_t e)
{
    count_job *j = arg;
    if (e - b < j->grain && !share_end(j, e)) atomic_fetch_add(&j->bad_range, 1);
    int t = mrt_thread_index();
    if (t < 0 || t >= j->threads) atomic_fetch_add(&j->bad_index, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&j->hits[i], 1);
}

Test(threadpool, every_index_once)
{
    for (int threads = 1; threads <= 4; threads++) {
        mrt_threadpool *p;
        cr_assert_eq(mrt_threadpool_new(threads, &p), MRT_STATUS_OK);
        cr_assert_eq(mrt_threadpool_threads(p), threads);
        static const int64_t ns[] = {1, 2, 3, 7, 64, 1000, 100003};
        static const int64_t grains[] = {1, 3, 50, 1000000};
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) {
                int64_t n = ns[a];
                count_job j = {calloc((size_t)n, sizeof(atomic_int)), grains[g], n, threads};
                mrt_threadpool_run(p, n, grains[g], count_range, &j);
                for (int64_t i = 0; i < n; i++)
                    cr_assert_eq(atomic_load(&j.hits[i]), 1, "threads %d n %lld grain %lld: index %lld ran %d times",
                                 threads, (long long)n, (long long)grains[g], (long long)i, atomic_load(&j.hits[i]));
                cr_assert_eq(atomic_load(&j.bad_range), 0, "a range shorter than the grain");
                cr_assert_eq(atomic_load(&j.bad_index), 0, "a thread index out of range");
                free(j.hits);
            }
        mrt_threadpool_free(p);
    }
}

static void inner_range(void *arg, int64_t b, int64_t e)
{
    atomic_int *hits = arg;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&hits[i], 1);
}

static void nested_range(void *arg, int64_t b, int64_t e)
{
    count_job *j = arg;
    for (int64_t i = b; i < e; i++) {
        atomic_int inner[10] = {0};
        mrt_threadpool_run(j->pool, 10, 1, inner_range, inner); /* from inside a task: serial */
        for (int k = 0; k < 10; k++)
            if (atomic_load(&inner[k]) != 1) atomic_fetch_add(&j->bad_range, 1);
        atomic_fetch_add(&j->hits[i], 1);
        atomic_fetch_add(&j->nested_calls, 1);
    }
}

Test(threadpool, nested_calls_run_serially)
{
    mrt_threadpool *p;
    cr_assert_eq(mrt_threadpool_new(2, &p), MRT_STATUS_OK);
    count_job j = {calloc(100, sizeof(atomic_int)), 1, 100, 2};
    j.pool = p;
    mrt_threadpool_run(p, 100, 1, nested_range, &j);
    cr_assert_eq(atomic_load(&j.nested_calls), 100);
    cr_assert_eq(atomic_load(&j.bad_range), 0);
    free(j.hits);
    mrt_threadpool_free(p);
}

Test(threadpool, many_small_jobs_back_to_back, .timeout = 60)
{
    mrt_threadpool *p;
    cr_assert_eq(mrt_threadpool_new(3, &p), MRT_STATUS_OK);
    atomic_int hits[8];
    for (int r = 0; r < 20000; r++) {
        for (int i = 0; i < 8; i++) atomic_store(&hits[i], 0);
        mrt_threadpool_run(p, 8, 1, inner_range, hits);
        for (int i = 0; i < 8; i++) cr_assert_eq(atomic_load(&hits[i]), 1, "job %d index %d", r, i);
    }
    mrt_threadpool_free(p);
}

/* Ranges run by a worker take long now and then (a worker preempted inside its chunk), so that the caller, done with
   its own chunks, outwaits its polling and sleeps until the last worker leaves; short jobs in between keep the
   wake-up racing with the next job's post. Every index once, and every call returns. */
static atomic_int late_ranges;

static void slow_on_workers(void *arg, int64_t b, int64_t e)
{
    atomic_int *hits = arg;
    /* the caller's ranges take a while too, so that the workers join before it has claimed every chunk */
    bool worker = mrt_thread_index() != 0;
    nanosleep(&(struct timespec){0, worker ? 300 * 1000 : 50 * 1000}, NULL);
    if (worker) atomic_fetch_add(&late_ranges, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&hits[i], 1);
}

Test(threadpool, caller_sleeps_for_a_late_worker, .timeout = 60)
{
    mrt_threadpool *p;
    cr_assert_eq(mrt_threadpool_new(2, &p), MRT_STATUS_OK);
    atomic_int hits[16];
    for (int r = 0; r < 400; r++) {
        int n = r % 2 ? 16 : 2;
        for (int i = 0; i < n; i++) atomic_store(&hits[i], 0);
        mrt_threadpool_run(p, n, 1, r % 2 ? slow_on_workers : inner_range, hits);
        for (int i = 0; i < n; i++) cr_assert_eq(atomic_load(&hits[i]), 1, "job %d index %d", r, i);
    }
    mrt_threadpool_free(p);
    cr_expect_gt(atomic_load(&late_ranges), 0, "no worker ran a range: the late-worker path was not exercised");
}

Test(threadpool, no_pool_runs_on_the_caller)
{
    atomic_int hits[5] = {0};
    mrt_threadpool_run(NULL, 5, 1, inner_range, hits);
    for (int i = 0; i < 5; i++) cr_assert_eq(atomic_load(&hits[i]), 1);
}
