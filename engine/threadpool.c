/* The session thread pool (see threadpool.h): one job at a time, each thread's share cut into chunks claimed with
 * an atomic counter, by the share's owner first and then by the others, so a preempted thread (a shared VM) does
 * not hold the others back. Fixed shares keep data where it was written: with every chunk first come first served,
 * consecutive nodes' work landed on either core at random, and on two threads MobileNetV2 took 4.72-4.77 ms
 * against 4.59-4.63, the Transformer encoder 2.47-2.64 against 2.30-2.46 (alternating runs). When this VM's two
 * vCPUs sit far apart (runs twice as slow), MobileNetV2 took 9.4 ms against 8.6. A worker joins a job only while it
 * is open, and the caller closes it once every chunk is claimed, then waits for the workers that joined: one that
 * was descheduled (the other core busy) is never waited for, it just finds the job closed when it wakes. */
#include "engine/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* How long an idle worker polls before it sleeps: long enough to catch the next node of a model (a few µs
   apart), short enough not to steal a core from other work for long. */
enum { SPIN_ROUNDS = 20000 };

struct mrt_threadpool {
    int n_threads; /* including the caller */
    int n_workers;
    pthread_t *workers;
    struct worker_start *starts;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    atomic_uint generation; /* bumped for each job (and for shutdown) */
    atomic_int sleeping;    /* workers blocked on `wake` */
    atomic_bool stop;
    atomic_bool busy;       /* a job is running: a second caller runs serially */
    /* the current job */
    mrt_range_fn fn;
    void *arg;
    int64_t n, chunk;
    struct share *shares; /* per thread: what is left of its share */
    /* admission to the current job: its generation << 32 | CLOSED | workers inside it */
    atomic_ullong admission;
};

/* Indices [next, end) of one thread's share, claimed a chunk at a time with fetch_add, by the owner first and then
   by the others. A cache line each: the owners' counters are written at once. */
typedef struct share {
    _Alignas(64) atomic_llong next;
    int64_t end;
} share;

#define ADMIT_CLOSED ((unsigned long long)1 << 31)
#define ADMIT_ACTIVE ((unsigned long long)ADMIT_CLOSED - 1)

/* Set while a thread runs a task: a nested call runs serially. */
static _Thread_local bool in_task;
static _Thread_local int thread_index; /* 0 outside the workers */

int mrt_thread_index(void) { return thread_index; }

/* Thread `me` works through its own share, then through what is left of the others' */
static void run_chunks(mrt_threadpool *p, int me)
{
    in_task = true;
    for (int i = 0, t = me; i < p->n_threads; i++, t = t + 1 == p->n_threads ? 0 : t + 1) {
        share *sh = &p->shares[t];
        for (;;) {
            int64_t b = atomic_fetch_add_explicit(&sh->next, p->chunk, memory_order_relaxed);
            if (b >= sh->end) break;
            p->fn(p->arg, b, b + p->chunk < sh->end ? b + p->chunk : sh->end);
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
        unsigned g;
        int spins = 0;
        while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen && spins < SPIN_ROUNDS) {
            CPU_RELAX();
            spins++;
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleeping, 1);
            while ((g = atomic_load(&p->generation)) == seen) pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleeping, 1);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (atomic_load(&p->stop)) return NULL;
        /* join job g unless it is closed already (or a later one was posted: the next loop takes that) */
        unsigned long long v = atomic_load(&p->admission);
        bool joined = false;
        while ((unsigned)(v >> 32) == g && !(v & ADMIT_CLOSED))
            if (atomic_compare_exchange_weak(&p->admission, &v, v + 1)) {
                joined = true;
                break;
            }
        if (!joined) continue;
        run_chunks(p, ws->index);
        atomic_fetch_sub(&p->admission, 1);
    }
}

mrt_status mrt_threadpool_new(int n_threads, mrt_threadpool **out)
{
    *out = NULL;
    mrt_threadpool *p = calloc(1, sizeof *p);
    if (!p) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (thread pool)");
    p->n_threads = n_threads > 1 ? n_threads : 1;
    p->shares = aligned_alloc(64, (size_t)p->n_threads * sizeof *p->shares);
    if (!p->shares) {
        free(p);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (thread pool)");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
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
        atomic_fetch_add(&p->generation, 1);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
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
        !atomic_compare_exchange_strong(&p->busy, &expected, true)) {
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
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = (n + n_chunks - 1) / n_chunks;
    for (int t = 0; t < p->n_threads; t++) {
        atomic_store_explicit(&p->shares[t].next, n * t / p->n_threads, memory_order_relaxed);
        p->shares[t].end = n * (t + 1) / p->n_threads;
    }
    unsigned g = atomic_load(&p->generation) + 1;
    atomic_store(&p->admission, (unsigned long long)g << 32); /* open, nobody inside */
    /* sequentially consistent, paired with the worker's increment of `sleeping` before it re-reads the generation:
       either this load sees the sleeper or the sleeper sees the new generation */
    atomic_fetch_add(&p->generation, 1);
    if (atomic_load(&p->sleeping) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    run_chunks(p, 0);
    /* every chunk is claimed: close the job, then wait for those inside to finish theirs */
    atomic_fetch_or(&p->admission, ADMIT_CLOSED);
    int spins = 0;
    while (atomic_load(&p->admission) & ADMIT_ACTIVE) {
        if (++spins < SPIN_ROUNDS) CPU_RELAX();
        else sched_yield();
    }
    atomic_store(&p->busy, false);
}
