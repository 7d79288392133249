// The emulated CUDA runtime and launcher (see cuda_emu.h).
#include "ops_cuda/emu/cuda_emu.h"

#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MRT_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MRT_EMU_ASAN 1
#endif
#endif
#ifdef MRT_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

const size_t STACK_BYTES = 256 * 1024;
enum wait_kind { RUNNING, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };

struct fiber {
    ucontext_t ctx;
    void *stack = nullptr;
    int state = RUNNING;
    uint64_t slot = 0; // a lane's deposit for a shuffle or vote
};

// One OS thread's launch in progress.
struct block_run {
    const char *name = nullptr;
    void (*body)(void *) = nullptr;
    void *arg = nullptr;
    dim3 block;
    int n_threads = 0;
    std::vector<fiber> fibers;
    int current = -1;      // the fiber running, or -1 in direct mode
    bool direct = false;   // threads as plain calls: a sync there is a divergent barrier
    ucontext_t scheduler;
    std::vector<unsigned char> dynamic_shared;
};

thread_local mrt_emu_thread_state self;
thread_local block_run *run = nullptr;
thread_local cudaError_t last_error = cudaSuccess;
thread_local std::vector<void *> stack_pool;
#ifdef MRT_EMU_ASAN
thread_local void *main_fake_stack = nullptr;
thread_local const void *main_stack_bottom = nullptr;
thread_local size_t main_stack_size = 0;
#endif

[[noreturn]] void die(const char *what)
{
    fprintf(stderr, "CUDA emulation: kernel %s: %s\n", run && run->name ? run->name : "?", what);
    abort();
}

void *take_stack()
{
    if (!stack_pool.empty()) {
        void *s = stack_pool.back();
        stack_pool.pop_back();
        return s;
    }
    void *s = mmap(nullptr, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) die("out of memory for fiber stacks");
    return s;
}

void set_thread(int linear)
{
    const dim3 &b = run->block;
    self.thread_idx.x = (unsigned)linear % b.x;
    self.thread_idx.y = (unsigned)linear / b.x % b.y;
    self.thread_idx.z = (unsigned)linear / (b.x * b.y);
}

// Fiber switches, annotated for AddressSanitizer (which must know which stack is live).
void switch_to_fiber(fiber &f)
{
#ifdef MRT_EMU_ASAN
    __sanitizer_start_switch_fiber(&main_fake_stack, f.stack, STACK_BYTES);
#endif
    swapcontext(&run->scheduler, &f.ctx);
#ifdef MRT_EMU_ASAN
    __sanitizer_finish_switch_fiber(main_fake_stack, nullptr, nullptr);
#endif
}

void switch_to_scheduler(fiber &f, bool finished)
{
#ifdef MRT_EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(finished ? nullptr : &fake, main_stack_bottom, main_stack_size);
#endif
    swapcontext(&f.ctx, &run->scheduler);
#ifdef MRT_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, &main_stack_bottom, &main_stack_size);
#endif
    (void)finished;
}

void fiber_entry()
{
#ifdef MRT_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &main_stack_bottom, &main_stack_size);
#endif
    fiber &f = run->fibers[(size_t)run->current];
    run->body(run->arg);
    f.state = DONE;
    switch_to_scheduler(f, true);
}

void start_fiber(int t)
{
    fiber &f = run->fibers[(size_t)t];
    f.stack = take_stack();
    f.state = RUNNING;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = STACK_BYTES;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_entry, 0);
}

void resume(int t)
{
    run->current = t;
    set_thread(t);
    switch_to_fiber(run->fibers[(size_t)t]);
    run->current = -1;
}

// The running thread waits at a barrier of the given kind; the scheduler releases it.
void wait_at(int kind)
{
    if (run == nullptr) die("a barrier or warp operation outside a kernel");
    if (run->direct)
        die("a barrier or warp operation reached by a thread after thread 0 finished without one (divergent "
            "__syncthreads or warp operation)");
    fiber &f = run->fibers[(size_t)run->current];
    f.state = kind;
    switch_to_scheduler(f, false);
}

// Round-robin until every fiber is done: run the runnable ones; when none is, open the barriers that every live
// thread of their scope has reached.
void schedule()
{
    const int n = run->n_threads;
    for (;;) {
        bool ran = false, live = false;
        for (int t = 0; t < n; t++) {
            if (run->fibers[(size_t)t].state == RUNNING) {
                resume(t);
                ran = true;
            }
            live |= run->fibers[(size_t)t].state != DONE;
        }
        if (!live) return;
        if (ran) continue;
        bool opened = false;
        for (int w = 0; w < n; w += 32) { // warps: every live lane at the warp barrier
            bool all = true, any = false;
            for (int t = w; t < n && t < w + 32; t++) {
                int s = run->fibers[(size_t)t].state;
                all &= s == AT_WARP_BARRIER || s == DONE;
                any |= s == AT_WARP_BARRIER;
            }
            if (all && any) {
                for (int t = w; t < n && t < w + 32; t++)
                    if (run->fibers[(size_t)t].state == AT_WARP_BARRIER) run->fibers[(size_t)t].state = RUNNING;
                opened = true;
            }
        }
        if (opened) continue;
        bool all = true;
        for (int t = 0; t < n; t++) {
            int s = run->fibers[(size_t)t].state;
            all &= s == AT_BLOCK_BARRIER || s == DONE;
        }
        if (!all) die("deadlock: threads wait at barriers the others never reach");
        for (int t = 0; t < n; t++)
            if (run->fibers[(size_t)t].state == AT_BLOCK_BARRIER) run->fibers[(size_t)t].state = RUNNING;
    }
}

void run_block()
{
    const int n = run->n_threads;
    if (!run->dynamic_shared.empty()) memset(run->dynamic_shared.data(), 0xFF, run->dynamic_shared.size());
    run->fibers.assign((size_t)n, fiber{});
    run->direct = false;
    start_fiber(0);
    resume(0);
    if (run->fibers[0].state == DONE) { // no barrier: the rest as plain calls
        stack_pool.push_back(run->fibers[0].stack);
        run->direct = true;
        for (int t = 1; t < n; t++) {
            set_thread(t);
            run->body(run->arg);
        }
        run->direct = false;
        return;
    }
    for (int t = 1; t < n; t++) start_fiber(t);
    schedule();
    for (fiber &f : run->fibers) stack_pool.push_back(f.stack);
}

cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

double now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct event_rec {
    double ms = 0;
};

} // namespace

const mrt_emu_thread_state &mrt_emu_self() { return self; }

void mrt_emu_syncthreads() { wait_at(AT_BLOCK_BARRIER); }
void mrt_emu_syncwarp() { wait_at(AT_WARP_BARRIER); }

void *mrt_emu_dynamic_shared()
{
    if (!run || run->dynamic_shared.empty()) return nullptr;
    return run->dynamic_shared.data();
}

void mrt_emu_shfl(const void *in, void *out, size_t bytes, int mode, int arg, int width)
{
    if (!run || run->direct || bytes > 8) wait_at(AT_WARP_BARRIER); // dies with the reason
    int t = run->current, lane = t % 32, base = t - lane;
    fiber &f = run->fibers[(size_t)t];
    f.slot = 0;
    memcpy(&f.slot, in, bytes);
    wait_at(AT_WARP_BARRIER); // every lane has deposited
    if (width < 1 || width > 32) width = 32;
    int seg = lane - lane % width, src;
    switch (mode) {
    case 0: src = seg + ((arg % width) + width) % width; break;
    case 1: src = lane - arg >= seg ? lane - arg : lane; break;
    case 2: src = lane + arg < seg + width ? lane + arg : lane; break;
    default: src = ((lane ^ arg) >= seg && (lane ^ arg) < seg + width) ? (lane ^ arg) : lane; break;
    }
    if (base + src >= run->n_threads || run->fibers[(size_t)(base + src)].state == DONE) src = lane;
    uint64_t v = run->fibers[(size_t)(base + src)].slot;
    memcpy(out, &v, bytes);
    wait_at(AT_WARP_BARRIER); // every lane has read before any deposits again
}

unsigned mrt_emu_ballot(int pred)
{
    if (!run || run->direct) wait_at(AT_WARP_BARRIER);
    int t = run->current, base = t - t % 32;
    run->fibers[(size_t)t].slot = pred != 0;
    wait_at(AT_WARP_BARRIER);
    unsigned mask = 0;
    for (int l = 0; l < 32 && base + l < run->n_threads; l++)
        if (run->fibers[(size_t)(base + l)].state != DONE && run->fibers[(size_t)(base + l)].slot) mask |= 1u << l;
    wait_at(AT_WARP_BARRIER);
    return mask;
}

void mrt_emu_launch_raw(const char *name, dim3 grid, dim3 block, size_t shmem, void (*body)(void *), void *arg)
{
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || threads > 1024 || block.z > 64 ||
        grid.y > 65535 || grid.z > 65535 || grid.x > 0x7fffffffu || shmem > 48 * 1024) {
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    if (run) { // a kernel launching a kernel: not something minirt's kernels do
        fprintf(stderr, "CUDA emulation: kernel %s launched from inside kernel %s\n", name, run->name);
        abort();
    }
    block_run r;
    r.name = name;
    r.body = body;
    r.arg = arg;
    r.block = block;
    r.n_threads = (int)threads;
    r.dynamic_shared.resize(shmem);
    run = &r;
    self.block_dim = block;
    self.grid_dim = grid;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                self.block_idx = uint3{x, y, z};
                run_block();
            }
    run = nullptr;
}

// ------------------------------------------------------------------ runtime API

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    default: return "unspecified launch failure";
    }
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    default: return "cudaErrorLaunchFailure";
    }
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
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (device != 0) return fail(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "minirt CUDA emulator (CPU)");
    p->totalGlobalMem = (size_t)16 << 30;
    p->sharedMemPerBlock = 48 * 1024;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->multiProcessorCount = 1;
    p->major = 9;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = nullptr;
    if (posix_memalign(p, 256, bytes ? bytes : 1) != 0) return fail(cudaErrorMemoryAllocation);
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

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind)
{
    if (bytes && (!dst || !src)) return fail(cudaErrorInvalidValue);
    if (bytes) memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind k, cudaStream_t)
{
    return cudaMemcpy(dst, src, bytes, k);
}
cudaError_t cudaMemset(void *dst, int byte, size_t bytes)
{
    if (bytes && !dst) return fail(cudaErrorInvalidValue);
    if (bytes) memset(dst, byte, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *dst, int byte, size_t bytes, cudaStream_t) { return cudaMemset(dst, byte, bytes); }

// Streams and events are tokens: work is done when issued, so synchronising and waiting are no-ops.
cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    *s = (cudaStream_t) new char[1];
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    delete[] (char *)s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned)
{
    return e ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t) new event_rec;
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete (event_rec *)e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    ((event_rec *)e)->ms = now_ms();
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!start || !end) return fail(cudaErrorInvalidResourceHandle);
    *ms = (float)(((event_rec *)end)->ms - ((event_rec *)start)->ms);
    return cudaSuccess;
}
