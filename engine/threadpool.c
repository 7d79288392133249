/* The session thread pool (see threadpool.h): one job at a time, each thread's share cut into chunks claimed with
 * an atomic counter, by the share's owner first and then by the others, so a preempted thread (a shared VM) does
 * not hold the others back. Fixed shares keep data where it was written: with every chunk first come first served,
 * consecutive nodes' work landed on either core at random, and on two threads MobileNetV2 took 4.72-4.77 ms
 * against 4.59-4.63, the Transformer encoder 2.47-2.64 against 2.30-2.46 (alternating runs). When this VM's two
 * vCPUs sit far apart (runs twice as slow), MobileNetV2 took 9.4 ms against 8.6. A worker joins a job only while it
 * is open, and the caller closes it once every chunk is claimed, then waits for the workers that joined: one that
 * was descheduled (the other core busy) is never waited for, it just finds the job closed when it wakes. One
 * descheduled inside a chunk is: the caller polls briefly, then sleeps until the last worker leaves, leaving its core
 * idle for the scheduler to run the late worker on (CLOSE_SPIN_ROUNDS). */
#include "engine/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* How long an idle worker polls before it sleeps: long enough to catch the next node of a model (a few µs
   apart), short enough not to steal a core from other work for long. */
enum { SPIN_ROUNDS = 20000 };
/* How long the caller polls for the workers still inside a closed job before it sleeps (about 50 µs at this VM's
   23 ns per pause). Past that a worker has most likely lost its core (another process on it): a caller still
   spinning keeps its own core busy, so the scheduler cannot move the preempted worker there and the job waits for
   the worker's next time slice, milliseconds away; asleep, the caller leaves its core idle for it. */
enum { CLOSE_SPIN_ROUNDS = 2000 };

/* A job's admission word: its generation << 32 | CLOSED | the workers inside it. The job's description shares its
   cache line, so a worker that sees the word change finds fn, arg, n and chunk in the line it just fetched: every
   line another core wrote last costs a transfer, about 130 ns on this VM, and a worker used to take five of them
   in turn (generation, admission, the job's fields, its share, written by the caller) before its first task.
   build/bench/minirt_pool (medians): the worker's task started 530-620 ns after the post, now 310-400; a job of two
   tasks cost 0.96-1.14 us beyond them, now 0.57-0.66. MobileNetV2 makes 55 jobs a run. */
typedef struct job_line {
    _Alignas(64) atomic_ullong admission;
    mrt_range_fn fn;
    void *arg;
    int64_t n, chunk;
    atomic_bool busy; /* a job is running: a second caller runs serially */
} job_line;

/* Thread t's share of job g: chunks [0, count) of the indices [n t / T, n (t + 1) / T), claimed with a CAS on
   `claim` = generation << 32 | chunks taken, by the share's owner first and then by the others. A claim from an
   older generation counts as none taken, so nobody resets the shares between jobs: the owner's first claim finds
   its own line in its own cache. Every share with a chunk is emptied in every job, so its word always carries the
   previous job's generation or the current one (an empty share is never claimed from; run() tags it). */
typedef struct share {
    _Alignas(64) atomic_ullong claim;
} share;

struct mrt_threadpool {
    int n_threads; /* including the caller */
    int n_workers;
    pthread_t *workers;
    struct worker_start *starts;
    share *shares;
    job_line job;
    /* sleeping workers: they wait on `wake` for the admission's generation to change; a sleeping caller waits on
       `done` for the last worker to leave its closed job */
    _Alignas(64) pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_int sleeping;
    atomic_bool caller_sleeping;
    atomic_bool stop;
};

#define ADMIT_CLOSED ((unsigned long long)1 << 31)
#define ADMIT_ACTIVE ((unsigned long long)ADMIT_CLOSED - 1)

static unsigned admit_generation(unsigned long long v) { return (unsigned)(v >> 32); }

/* Set while a thread runs a task: a nested call runs serially. */
static _Thread_local bool in_task;
static _Thread_local int thread_index; /* 0 outside the workers */

int mrt_thread_index(void) { return thread_index; }

/* Thread `me` works through its own share of job g, then through what is left of the others' */
static void run_chunks(mrt_threadpool *p, unsigned g, int me)
{
    int64_t n = p->job.n, chunk = p->job.chunk, T = p->n_threads;
    in_task = true;
    for (int i = 0, t = me; i < T; i++, t = t + 1 == T ? 0 : t + 1) {
        int64_t begin = n * t / T, end = n * (t + 1) / T;
        share *sh = &p->shares[t];
        unsigned long long w = atomic_load_explicit(&sh->claim, memory_order_relaxed);
        for (;;) {
            int64_t taken = admit_generation(w) == g ? (int64_t)(unsigned)w : 0, b = begin + taken * chunk;
            if (b >= end) break;
            unsigned long long next = (unsigned long long)g << 32 | (unsigned long long)(taken + 1);
            if (!atomic_compare_exchange_weak_explicit(&sh->claim, &w, next, memory_order_relaxed,
                                                       memory_order_relaxed))
                continue; /* w now holds the current claim */
            p->job.fn(p->job.arg, b, b + chunk < end ? b + chunk : end);
            w = next;
        }
    }
    in_task = false;
}

typedef struct worker_start {
    mrt_threadpool *pool;
    int index;
} worker_start;

static void *worker_main(void *arg)
{
    worker_start *ws = arg;
    mrt_threadpool *p = ws->pool;
    thread_index = ws->index;
    /* 0, not the current value: the first job may be posted before this thread gets here */
    unsigned seen = 0;
    for (;;) {
        unsigned long long v;
        int spins = 0;
        while (admit_generation(v = atomic_load_explicit(&p->job.admission, memory_order_acquire)) == seen &&
               spins < SPIN_ROUNDS) {
            CPU_RELAX();
            spins++;
        }
        if (admit_generation(v) == seen) {
            pthread_mutex_lock(&p->mu);
            /* sequentially consistent, paired with the caller's store of the admission before it reads `sleeping`:
               either this thread sees the new job or the caller sees it sleeping */
            atomic_fetch_add(&p->sleeping, 1);
            while (admit_generation(v = atomic_load(&p->job.admission)) == seen) pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleeping, 1);
            pthread_mutex_unlock(&p->mu);
        }
        unsigned g = seen = admit_generation(v);
        if (atomic_load(&p->stop)) return NULL;
        /* join job g unless it is closed already (or a later one was posted: the next loop takes that) */
        bool joined = false;
        while (admit_generation(v) == g && !(v & ADMIT_CLOSED))
            if (atomic_compare_exchange_weak(&p->job.admission, &v, v + 1)) {
                joined = true;
                break;
            }
        if (!joined) continue;
        run_chunks(p, g, ws->index);
        unsigned long long left = atomic_fetch_sub(&p->job.admission, 1) - 1;
        /* the last one out of a closed job wakes a caller that went to sleep waiting for it (sequentially
           consistent, paired with the caller's store of caller_sleeping before it re-reads the admission) */
        if ((left & ADMIT_CLOSED) && !(left & ADMIT_ACTIVE) && atomic_load(&p->caller_sleeping)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

mrt_status mrt_threadpool_new(int n_threads, mrt_threadpool **out)
{
    *out = NULL;
    /* aligned: the job's and the shares' lines are cache lines of their own */
    mrt_threadpool *p = aligned_alloc(64, sizeof *p);
    if (!p) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (thread pool)");
    memset(p, 0, sizeof *p);
    p->n_threads = n_threads > 1 ? n_threads : 1;
    p->shares = aligned_alloc(64, (size_t)p->n_threads * sizeof *p->shares);
    if (!p->shares) {
        free(p);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (thread pool)");
    }
    for (int t = 0; t < p->n_threads; t++) atomic_init(&p->shares[t].claim, 0);
    atomic_init(&p->job.admission, 0); /* generation 0: no job (the workers start having seen it) */
    atomic_init(&p->job.busy, false);
    atomic_init(&p->sleeping, 0);
    atomic_init(&p->caller_sleeping, false);
    atomic_init(&p->stop, false);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (p->n_threads > 1) {
        p->workers = calloc((size_t)p->n_threads - 1, sizeof *p->workers);
        p->starts = calloc((size_t)p->n_threads - 1, sizeof *p->starts);
        if (!p->workers || !p->starts) {
            mrt_threadpool_free(p);
            return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (thread pool)");
        }
        for (int i = 0; i < p->n_threads - 1; i++) {
            p->starts[i] = (worker_start){p, i + 1};
            if (pthread_create(&p->workers[i], NULL, worker_main, &p->starts[i]) != 0) {
                mrt_threadpool_free(p);
                return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "could not start thread %d of the %d-thread pool", i + 2,
                                n_threads);
            }
            p->n_workers++;
        }
    }
    *out = p;
    return MRT_STATUS_OK;
}

void mrt_threadpool_free(mrt_threadpool *p)
{
    if (!p) return;
    if (p->n_workers) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->stop, true);
        /* a new generation, closed: spinning workers see it at once, sleeping ones when woken */
        unsigned g = admit_generation(atomic_load(&p->job.admission)) + 1;
        atomic_store(&p->job.admission, (unsigned long long)g << 32 | ADMIT_CLOSED);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p->starts);
    free(p->shares);
    free(p);
}

int mrt_threadpool_threads(const mrt_threadpool *p) { return p ? p->n_threads : 1; }

void mrt_threadpool_run(mrt_threadpool *p, int64_t n, int64_t grain, mrt_range_fn fn, void *arg)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    bool expected = false;
    if (!p || p->n_workers == 0 || n <= grain || in_task ||
        !atomic_compare_exchange_strong(&p->job.busy, &expected, true)) {
        bool outer = in_task;
        in_task = true;
        fn(arg, 0, n);
        in_task = outer;
        return;
    }
    /* a few chunks per thread balance a preempted thread; never smaller than grain */
    int64_t max_chunks = (int64_t)p->n_threads * 4, n_chunks = n / grain;
    if (n_chunks > max_chunks) n_chunks = max_chunks;
    if (n_chunks < 1) n_chunks = 1;
    job_line *job = &p->job;
    job->fn = fn;
    job->arg = arg;
    job->n = n;
    job->chunk = (n + n_chunks - 1) / n_chunks;
    unsigned g = admit_generation(atomic_load_explicit(&job->admission, memory_order_relaxed)) + 1;
    for (int t = 0; t < p->n_threads; t++) /* an empty share: tagged, so that no old claim can match g */
        if (n * t / p->n_threads == n * (t + 1) / p->n_threads)
            atomic_store_explicit(&p->shares[t].claim, (unsigned long long)g << 32, memory_order_relaxed);
    /* open, nobody inside. Sequentially consistent, paired with the worker's increment of `sleeping` before it
       re-reads the admission: either this load sees the sleeper or the sleeper sees the new job. */
    atomic_store(&job->admission, (unsigned long long)g << 32);
    if (atomic_load(&p->sleeping) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    run_chunks(p, g, 0);
    /* every chunk is claimed: close the job, then wait for those inside to finish theirs */
    atomic_fetch_or(&job->admission, ADMIT_CLOSED);
    for (int spins = 0; atomic_load(&job->admission) & ADMIT_ACTIVE;) {
        if (++spins < CLOSE_SPIN_ROUNDS) {
            CPU_RELAX();
            continue;
        }
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->caller_sleeping, true);
        while (atomic_load(&job->admission) & ADMIT_ACTIVE) pthread_cond_wait(&p->done, &p->mu);
        atomic_store(&p->caller_sleeping, false);
        pthread_mutex_unlock(&p->mu);
    }
    atomic_store(&job->busy, false);
}
