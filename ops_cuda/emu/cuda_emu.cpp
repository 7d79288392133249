// The emulated CUDA runtime and launcher (the execution model is described at the top of cuda_emu.h).
#include "ops_cuda/emu/cuda_emu.h"

#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MRT_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MRT_EMU_ASAN 1
#endif
#endif
#ifdef MRT_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

__thread uint3 threadIdx, blockIdx;
__thread dim3 blockDim, gridDim;
__thread unsigned char *mrt_emu_dynamic_smem;

namespace {

const size_t STACK_BYTES = 256 * 1024, GUARD_BYTES = 4096;
const size_t SHARED_DEFAULT = 48 * 1024, SHARED_OPTIN = 227 * 1024; // an H100's per-block limits

enum : unsigned char { NEW, RUNNING, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };

// A suspended thread: a fiber's context, or the OS thread's own (the block's threads ran on its stack as plain calls
// until one of them waited; that one keeps the OS stack).
struct context {
    ucontext_t uc;
    char *stack = nullptr;
    void *fake_stack = nullptr;                    // ASan's, while switched away
    const void *bottom = nullptr; size_t size = 0; // the stack's bounds, for ASan
};

struct thread_rec {
    uint3 idx;
    unsigned char state;
    unsigned mask; // the lanes a warp operation waits for
};

struct warp_rec {
    unsigned long long slot[2][32]; // the lanes' deposits by round parity: a lane that runs ahead writes the other half
    unsigned took_part[2];          // the lanes that took part in that round
    unsigned round;
};

// The launch in progress on one OS thread (reused by the next launch, with its pool of fiber stacks).
struct block_run {
    const char *name = nullptr;
    void (*body)(void *) = nullptr;
    void *arg = nullptr;
    unsigned n = 0;                       // threads per block
    std::vector<thread_rec> threads;
    std::vector<context> fibers;          // by linear thread id
    std::vector<warp_rec> warps;
    context os;                           // the OS thread's stack
    unsigned os_thread = 0;               // the thread that runs on it once the block has fibers
    bool has_fibers = false;
    unsigned current = 0, done = 0;
    unsigned block_round = 0;
    int block_count[2] = {0, 0};          // __syncthreads_count's sums, by round parity
    char *dead_stack = nullptr;           // a finished fiber's stack, pooled by whoever runs next
    std::vector<char *> pool;
    ucontext_t blank;                     // getcontext once: each fiber copies it (no syscall per fiber)
    bool have_blank = false;
    unsigned char *dynamic_shared = nullptr; // exact-sized, so ASan sees a read past its end
    size_t dynamic_bytes = 0;
    ~block_run()
    {
        for (char *s : pool) munmap(s - GUARD_BYTES, STACK_BYTES + GUARD_BYTES);
    }
};

thread_local block_run *run = nullptr;
thread_local cudaError_t last_error = cudaSuccess;

block_run &run_storage()
{
    static thread_local block_run r;
    return r;
}

// A fault inside a running kernel stops the process, naming the kernel, block and thread. These are conditions where
// a GPU hangs (a barrier some thread never reaches) or the behaviour is undefined (a shuffle width that is not a power
// of two), or the emulation cannot go on (no memory for a fiber stack): the block's threads are fibers in the middle
// of its body, with no frame to return an error to, and this module is test code. Faults a launch can report (bad
// configurations, a nested launch, no memory for dynamic shared memory) are sticky errors as on a GPU.
[[noreturn]] void die(const char *what)
{
    fprintf(stderr, "CUDA emulation: kernel %s, block (%u,%u,%u), thread (%u,%u,%u): %s\n",
            run && run->name ? run->name : "?", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
            threadIdx.z, what);
    abort();
}

// A device intrinsic called from host code (nvcc would not compile it): a bug in the kernel source, stopped as die does.
block_run &need_run(const char *what)
{
    if (!run) {
        fprintf(stderr, "CUDA emulation: %s outside a kernel\n", what);
        abort();
    }
    return *run;
}

char *take_stack(block_run &r)
{
    if (!r.pool.empty()) {
        char *s = r.pool.back();
        r.pool.pop_back();
#ifdef MRT_EMU_ASAN
        __asan_unpoison_memory_region(s, STACK_BYTES); // the previous fiber's last frames were never popped
#endif
        return s;
    }
    void *m = mmap(nullptr, STACK_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) die("out of memory for fiber stacks");
    mprotect(m, GUARD_BYTES, PROT_NONE); // stacks grow down: an overflow faults instead of corrupting
    return (char *)m + GUARD_BYTES;
}

context &context_of(block_run &r, unsigned t) { return t == r.os_thread ? r.os : r.fibers[t]; }

void reap(block_run &r)
{
    if (r.dead_stack) r.pool.push_back(r.dead_stack), r.dead_stack = nullptr;
}

void switch_context(block_run &r, context &from, context &to, bool from_finished)
{
#ifdef MRT_EMU_ASAN
    if (from_finished) { // its fake stack (stack-use-after-return's frames) goes, with every local of this frame
        __sanitizer_start_switch_fiber(nullptr, to.bottom, to.size);
        setcontext(&to.uc);
    }
    __sanitizer_start_switch_fiber(&from.fake_stack, to.bottom, to.size);
    // ASan intercepts swapcontext only to warn that it cannot follow fibers (and to wipe the target stack's shadow):
    // these switches are annotated, so they go around it with the two halves it leaves alone.
    volatile bool resumed = false;
    getcontext(&from.uc); // returns twice: now, and when something switches back to `from`
    if (!resumed) {
        resumed = true;
        setcontext(&to.uc);
    }
    const void *bottom; // back in `from`
    size_t size;
    __sanitizer_finish_switch_fiber(from.fake_stack, &bottom, &size);
#else
    (void)from_finished;
    swapcontext(&from.uc, &to.uc);
#endif
    reap(r);
}

[[noreturn]] void deadlock(block_run &r)
{
    unsigned block = 0, warp = 0;
    for (const thread_rec &t : r.threads) block += t.state == AT_BLOCK_BARRIER, warp += t.state == AT_WARP_BARRIER;
    char msg[200];
    snprintf(msg, sizeof msg,
             "deadlock: of %u threads, %u wait at __syncthreads, %u at warp operations (lanes named in the mask that "
             "never arrive), %u have returned",
             r.n, block, warp, r.done);
    die(msg);
}

// Open every barrier whose threads have all arrived (returned threads count as arrived). False if none could open.
bool open_barriers(block_run &r)
{
    bool opened = false;
    unsigned at_block = 0;
    for (unsigned w = 0; w * 32 < r.n; w++) {
        unsigned waiting = 0, wanted = 0, gone = 0, lanes = r.n - w * 32 >= 32 ? ~0u : (1u << (r.n - w * 32)) - 1;
        for (unsigned l = 0; l < 32 && w * 32 + l < r.n; l++) {
            const thread_rec &t = r.threads[w * 32 + l];
            if (t.state == AT_WARP_BARRIER) waiting |= 1u << l, wanted |= t.mask;
            gone |= (unsigned)(t.state == DONE) << l;
            at_block += t.state == AT_BLOCK_BARRIER;
        }
        if (!waiting || (wanted & lanes & ~waiting & ~gone)) continue;
        warp_rec &wr = r.warps[w];
        wr.took_part[wr.round & 1] = waiting;
        wr.round++;
        for (unsigned l = 0; l < 32; l++)
            if (waiting >> l & 1) r.threads[w * 32 + l].state = RUNNING;
        opened = true;
    }
    if (at_block && at_block + r.done == r.n) {
        r.block_round++;
        r.block_count[r.block_round & 1] = 0; // the round after: its readers of two rounds ago have all read
        for (thread_rec &t : r.threads)
            if (t.state == AT_BLOCK_BARRIER) t.state = RUNNING;
        opened = true;
    }
    return opened;
}

bool next_runnable(block_run &r, unsigned &next)
{
    for (unsigned k = 1; k <= r.n; k++) { // round-robin from the thread after the current one; itself last
        unsigned t = (r.current + k) % r.n;
        if (r.threads[t].state == RUNNING || r.threads[t].state == NEW) return next = t, true;
    }
    return false;
}

void fiber_main();

// The current thread has waited or returned: run the next runnable thread (opening barriers when none is), or, when
// every thread has returned, go back to the OS thread's stack, where run_block waits.
void switch_away(block_run &r, bool finished)
{
    context &from = context_of(r, r.current);
    unsigned next;
    if (!next_runnable(r, next)) {
        if (r.done == r.n) return switch_context(r, from, r.os, finished); // only a finishing fiber gets here
        if (!open_barriers(r) || !next_runnable(r, next)) deadlock(r);
    }
    thread_rec &t = r.threads[next];
    context &to = context_of(r, next);
    if (t.state == NEW) {
        to.stack = take_stack(r);
        to.uc = r.blank;
        to.uc.uc_stack.ss_sp = to.stack;
        to.uc.uc_stack.ss_size = STACK_BYTES;
        to.uc.uc_link = nullptr;
        to.bottom = to.stack;
        to.size = STACK_BYTES;
        to.fake_stack = nullptr;
        makecontext(&to.uc, fiber_main, 0);
    }
    t.state = RUNNING;
    r.current = next;
    threadIdx = t.idx;
    if (&to != &from) switch_context(r, from, to, finished);
}

void fiber_main()
{
    block_run &r = *run;
#ifdef MRT_EMU_ASAN
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
    if (!r.os.size) r.os.bottom = bottom, r.os.size = size; // the first fiber of a block starts from the OS stack
#endif
    reap(r);
    r.body(r.arg);
    r.threads[r.current].state = DONE;
    r.done++;
    r.dead_stack = r.fibers[r.current].stack;
    switch_away(r, true);
    abort(); // a finished fiber is never resumed
}

// The current thread waits (kind: a barrier). The first wait of a block turns it into fibers: the threads before the
// current one have returned, it keeps the OS stack, and the ones after it start as fibers when their turn comes.
void wait_at(block_run &r, unsigned char kind, unsigned mask)
{
    if (!r.has_fibers) {
        r.has_fibers = true;
        r.os_thread = r.current;
        r.done = r.current;
        for (unsigned t = 0; t < r.n; t++) r.threads[t].state = t < r.current ? DONE : NEW;
        if (!r.have_blank) getcontext(&r.blank), r.have_blank = true;
    }
    r.threads[r.current].state = kind;
    r.threads[r.current].mask = mask;
    switch_away(r, false);
}

void run_block(block_run &r)
{
    if (r.dynamic_bytes) memset(r.dynamic_shared, 0xFF, r.dynamic_bytes);
    r.has_fibers = false;
    r.os_thread = r.n; // none yet
    r.block_round = 0;
    r.block_count[0] = r.block_count[1] = 0;
    for (unsigned t = 0; t < r.n; t++) {
        r.current = t;
        threadIdx = r.threads[t].idx;
        r.body(r.arg);
        if (r.has_fibers) { // thread t waited and has now returned: the fibers finish the block
            r.threads[t].state = DONE;
            r.done++;
            if (r.done < r.n) switch_away(r, false); // resumed when every thread has returned
            return;
        }
    }
}

std::mutex &attr_mutex()
{
    static std::mutex m;
    return m;
}
std::map<const void *, int> &shared_limits() // cudaFuncSetAttribute's raised limits, by kernel address
{
    static std::map<const void *, int> m;
    return m;
}

cudaError_t fail(cudaError_t e)
{
    last_error = e; // as CUDA's: kept until cudaGetLastError reads it, whatever succeeds in between
    return e;
}

size_t host_memory(int which)
{
    return (size_t)sysconf(which) * (size_t)sysconf(_SC_PAGESIZE);
}

double now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace

struct mrt_emu_stream {
    unsigned flags;
};
struct mrt_emu_event {
    unsigned flags;
    bool recorded;
    double ms;
};

// ------------------------------------------------------------------ barriers, shuffles, votes

int mrt_emu_syncthreads_count(int pred)
{
    block_run &r = need_run("__syncthreads");
    int &count = r.block_count[r.block_round & 1];
    count += pred != 0;
    wait_at(r, AT_BLOCK_BARRIER, 0);
    return count;
}

void mrt_emu_syncwarp(unsigned mask) { wait_at(need_run("__syncwarp"), AT_WARP_BARRIER, mask); }

// Deposit v, wait for the warp, and return the round's slot half (the lanes' deposits).
static unsigned long long *exchange(block_run &r, unsigned mask, unsigned long long v, unsigned &took_part)
{
    warp_rec &w = r.warps[r.current / 32];
    unsigned half = w.round & 1;
    w.slot[half][r.current % 32] = v;
    wait_at(r, AT_WARP_BARRIER, mask);
    took_part = w.took_part[half];
    return w.slot[half];
}

unsigned long long mrt_emu_shfl(unsigned mask, unsigned long long v, int mode, int arg, int width)
{
    block_run &r = need_run("a warp shuffle");
    if (width < 1 || width > 32 || (width & (width - 1))) die("shuffle width not a power of 2 up to 32");
    unsigned took_part;
    unsigned long long *slot = exchange(r, mask, v, took_part);
    int lane = (int)(r.current % 32), seg = lane & ~(width - 1), src;
    switch (mode) {
    case 0: src = seg + (arg & (width - 1)); break;
    case 1: src = lane - seg >= arg ? lane - arg : lane; break;         // below the segment: own value
    case 2: src = lane - seg + arg < width ? lane + arg : lane; break;  // past the segment: own value
    default: src = (lane ^ arg) >= 0 && (lane ^ arg) < seg + width ? lane ^ arg : lane; // later segment: own
    }
    if (src == lane) return v;
    return took_part >> src & 1 ? slot[src] : ~0ull; // a lane that did not take part: 0xFF bytes
}

unsigned mrt_emu_ballot(unsigned mask, int pred)
{
    block_run &r = need_run("a warp vote");
    unsigned took_part, bits = 0;
    unsigned long long *slot = exchange(r, mask, pred != 0, took_part);
    for (unsigned l = 0; l < 32; l++)
        if ((mask & took_part) >> l & 1 && slot[l]) bits |= 1u << l;
    return bits;
}

unsigned mrt_emu_activemask()
{
    block_run &r = need_run("__activemask");
    unsigned base = r.current & ~31u, live = 0;
    for (unsigned l = 0; l < 32 && base + l < r.n; l++) // before fibers, the lanes before this one have returned
        if (r.has_fibers ? r.threads[base + l].state != DONE : base + l >= r.current) live |= 1u << l;
    return live;
}

// ------------------------------------------------------------------ launches

void mrt_emu_launch_raw(const char *name, const void *kernel, dim3 grid, dim3 block, size_t shmem,
                        void (*body)(void *), void *arg)
{
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || threads > 1024 || block.x > 1024 ||
        block.y > 1024 || block.z > 64 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    if (shmem > SHARED_DEFAULT) {
        std::lock_guard<std::mutex> lock(attr_mutex());
        auto it = shared_limits().find(kernel);
        if (it == shared_limits().end() || shmem > (size_t)it->second) {
            fail(cudaErrorInvalidValue); // what CUDA answers for more dynamic shared memory than the kernel may have
            return;
        }
    }
    if (run) { // a launch from inside a kernel (dynamic parallelism is not emulated)
        fail(cudaErrorNotSupported);
        return;
    }
    block_run &r = run_storage();
    r.name = name;
    r.body = body;
    r.arg = arg;
    r.n = (unsigned)threads;
    r.threads.resize(r.n);
    for (unsigned t = 0; t < r.n; t++)
        r.threads[t].idx = uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
    if (r.fibers.size() < r.n) r.fibers.resize(r.n); // between launches: no context is live
    r.warps.assign((r.n + 31) / 32, warp_rec{});
    void *dynamic_shared = nullptr;
    if (shmem && posix_memalign(&dynamic_shared, 256, shmem) != 0) {
        fail(cudaErrorMemoryAllocation);
        return;
    }
    r.dynamic_shared = mrt_emu_dynamic_smem = (unsigned char *)dynamic_shared;
    r.dynamic_bytes = shmem;
    run = &r;
    blockDim = block;
    gridDim = grid;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = uint3{x, y, z};
                run_block(r);
            }
    run = nullptr;
    free(dynamic_shared);
    r.dynamic_shared = mrt_emu_dynamic_smem = nullptr;
}

cudaError_t mrt_emu_func_set_attribute(const void *kernel, cudaFuncAttribute attr, int value)
{
    if (!kernel) return fail(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || (size_t)value > SHARED_OPTIN) return fail(cudaErrorInvalidValue);
        std::lock_guard<std::mutex> lock(attr_mutex());
        shared_limits()[kernel] = value;
    }
    return cudaSuccess;
}

// ------------------------------------------------------------------ runtime API

const char *cudaGetErrorString(cudaError_t e)
{
#define MRT_EMU_CASE(name, value, text)                                                                            \
    case name: return text;
    switch (e) { MRT_EMU_ERRORS(MRT_EMU_CASE) }
#undef MRT_EMU_CASE
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e)
{
#define MRT_EMU_CASE(name, value, text)                                                                            \
    case name: return #name;
    switch (e) { MRT_EMU_ERRORS(MRT_EMU_CASE) }
#undef MRT_EMU_CASE
    return "unrecognized error code";
}

cudaError_t cudaGetLastError()
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError() { return last_error; }

cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n) return fail(cudaErrorInvalidValue);
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (!p) return fail(cudaErrorInvalidValue);
    if (device != 0) return fail(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "minirt CUDA emulator (CPU)");
    p->totalGlobalMem = host_memory(_SC_PHYS_PAGES);
    p->sharedMemPerBlock = SHARED_DEFAULT;
    p->sharedMemPerBlockOptin = SHARED_OPTIN;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->totalConstMem = 64 * 1024;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->maxThreadsPerMultiProcessor = 2048;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = (int)sysconf(_SC_NPROCESSORS_ONLN);
    p->l2CacheSize = 50 << 20;
    p->concurrentKernels = p->unifiedAddressing = p->canMapHostMemory = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *device)
{
    if (!device) return fail(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaDeviceReset() { return cudaSuccess; }
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes) return fail(cudaErrorInvalidValue);
    *free_bytes = host_memory(_SC_AVPHYS_PAGES);
    *total_bytes = host_memory(_SC_PHYS_PAGES);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    if (!p) return fail(cudaErrorInvalidValue);
    *p = nullptr;
    // larger than the machine: refuse before malloc (ASan would abort on the request instead of returning null)
    if (bytes > host_memory(_SC_PHYS_PAGES) || posix_memalign(p, 256, bytes) != 0)
        return *p = nullptr, fail(cudaErrorMemoryAllocation);
    memset(*p, 0xFF, bytes); // a kernel that reads before it writes sees NaN / -1, not zeros
    return cudaSuccess;
}
cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if ((unsigned)kind > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
    if (bytes && (!dst || !src)) return fail(cudaErrorInvalidValue);
    if (bytes) memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t)
{
    return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemset(void *dst, int byte, size_t bytes)
{
    if (bytes && !dst) return fail(cudaErrorInvalidValue);
    if (bytes) memset(dst, byte, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *dst, int byte, size_t bytes, cudaStream_t) { return cudaMemset(dst, byte, bytes); }

// Streams and events are plain heap tokens with no registry behind them: work is done when issued, so synchronising
// and waiting have nothing to do, and a handle made by one copy of this runtime (the emulated module's) is good in
// another (an emulated plugin's).
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    if (!s) return fail(cudaErrorInvalidValue);
    *s = new (std::nothrow) mrt_emu_stream{flags};
    return *s ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread) return fail(cudaErrorInvalidResourceHandle);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned)
{
    return e ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    if (!e) return fail(cudaErrorInvalidValue);
    *e = new (std::nothrow) mrt_emu_event{flags, false, 0.0};
    return *e ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    e->recorded = true;
    e->ms = now_ms(); // the work before it is done already: the host clock is the event's time
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return e ? cudaSuccess : fail(cudaErrorInvalidResourceHandle); }
cudaError_t cudaEventQuery(cudaEvent_t e) { return e ? cudaSuccess : fail(cudaErrorInvalidResourceHandle); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms) return fail(cudaErrorInvalidValue);
    if (!start || !end || !start->recorded || !end->recorded || (start->flags | end->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle); // CUDA's answer for each of these
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}
