// CUDA's execution model on the CPU, for the host-compiled build of the kernels (ops_cuda/cuda_compat.cuh includes
// this when the compiler is not nvcc). Test code: small on purpose; cuda_emu.cpp has the runtime.
//
// A launch runs its grid one block at a time on the calling OS thread. A block's threads first run one after another
// as plain function calls, which is all an element-wise kernel ever needs (it costs a call per thread). When a thread
// reaches __syncthreads, __syncwarp, a shuffle or a vote, the block switches to fibers: the waiting thread keeps the
// OS thread's stack, every thread not yet started gets a ucontext fiber of its own, and the threads that already
// returned count as arrived (as on Volta and later, where exited threads do not hold a barrier up). A wait yields
// until every live thread of the block (for __syncthreads) or every live lane named by the mask (for warp operations;
// a warp is 32 consecutive linear thread ids) has arrived. Threads waiting where nobody else will ever arrive are a
// deadlock, reported with the kernel's name before abort() (it would hang or misbehave on a GPU).
//
// What a kernel author must know:
//  - __shared__ is static thread_local storage (one OS thread runs one block at a time, so its fibers share it). Static
//    __shared__ arrays start as zeros and keep what the previous block left; only dynamic shared memory
//    (MRT_DYNAMIC_SHARED) is refilled with 0xFF bytes at each block start. Don't count on either.
//  - Device memory is host memory in exact-sized heap blocks filled with 0xFF bytes (NaN, -1): AddressSanitizer sees a
//    read past a buffer, and a kernel that reads before writing shows.
//  - A shuffle or vote reading a lane that did not take part (exited, or outside the mask) gets 0xFF bytes.
//  - Launches and copies are done when their call returns (streams run work in issue order); kernel arguments are
//    evaluated by every emulated thread (keep them free of side effects); a kernel cannot launch kernels.
//  - Fiber stacks are 256 KiB: a thread with large local arrays overflows into a guard page (SIGSEGV).
//  - Templated kernels whose deduction needs the arguments cannot go through MRT_LAUNCH here (it takes the kernel's
//    address): name the instantiation (`auto *k = kernel<float>;`).
//  - __CUDA_ARCH__ is not defined: test MRT_CUDA_EMULATED for emulation-only code.
#pragma once

// The standard headers come first: the qualifier macros below must not reach them (libstdc++ spells
// __attribute__((__noinline__)), which the __noinline__ macro would break; <memory> is where it does).
#include <math.h> // the C math functions in the global namespace, as device code calls them
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local

// Hidden: a shared object with its own copy of this runtime (the emulated module, an emulated plugin) uses that copy,
// never another one's (nor a real libcudart's) through symbol interposition.
#pragma GCC visibility push(hidden)

// ------------------------------------------------------------------ types and the running thread's coordinates

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    constexpr dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }

// Set by the runtime before it runs (or resumes) a thread. __thread, not thread_local: no initialisation guard, so a
// kernel's threadIdx.x is a plain TLS load.
extern __thread uint3 threadIdx, blockIdx;
extern __thread dim3 blockDim, gridDim;
extern __thread unsigned char *mrt_emu_dynamic_smem;
constexpr int warpSize = 32;

#define MRT_DYNAMIC_SHARED(T, name) T *const name = reinterpret_cast<T *>(mrt_emu_dynamic_smem)

// ------------------------------------------------------------------ barriers, shuffles, votes

int mrt_emu_syncthreads_count(int pred);
void mrt_emu_syncwarp(unsigned mask);
// a lane exchange: mode 0 idx, 1 up, 2 down, 3 xor; the value's bytes in the low end of 8
unsigned long long mrt_emu_shfl(unsigned mask, unsigned long long v, int mode, int arg, int width);
unsigned mrt_emu_ballot(unsigned mask, int pred);
unsigned mrt_emu_activemask();

inline void __syncthreads() { mrt_emu_syncthreads_count(0); }
inline int __syncthreads_count(int pred) { return mrt_emu_syncthreads_count(pred); }
inline int __syncthreads_and(int pred) { return mrt_emu_syncthreads_count(!pred) == 0; }
inline int __syncthreads_or(int pred) { return mrt_emu_syncthreads_count(pred) != 0; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { mrt_emu_syncwarp(mask); }

template <typename T> T mrt_emu_shfl_t(unsigned mask, T v, int mode, int arg, int width)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffled value is at most 8 bytes");
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = mrt_emu_shfl(mask, bits, mode, arg, width);
    memcpy(&v, &bits, sizeof(T));
    return v;
}
template <typename T> T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    return mrt_emu_shfl_t(mask, v, 0, src, width);
}
template <typename T> T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return mrt_emu_shfl_t(mask, v, 1, (int)delta, width);
}
template <typename T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return mrt_emu_shfl_t(mask, v, 2, (int)delta, width);
}
template <typename T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    return mrt_emu_shfl_t(mask, v, 3, lane_mask, width);
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return mrt_emu_ballot(mask, pred); }
inline int __any_sync(unsigned mask, int pred) { return mrt_emu_ballot(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return mrt_emu_ballot(mask, !pred) == 0; }
inline unsigned __activemask() { return mrt_emu_activemask(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ------------------------------------------------------------------ atomics (CUDA's overloads, relaxed as CUDA's)

// Real atomics although a block's fibers never run at once: two host threads may launch at the same time.
template <typename T, typename F> T mrt_emu_atomic_update(T *p, F f)
{
    T old, next;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do next = f(old);
    while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
#define MRT_EMU_ATOMIC_BITS(T)                                                                                    \
    inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }                          \
    inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }                        \
    inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }                          \
    inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }                            \
    inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }                          \
    inline T atomicCAS(T *p, T cmp, T v)                                                                          \
    {                                                                                                             \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);                       \
        return cmp;                                                                                               \
    }
#define MRT_EMU_ATOMIC_MINMAX(T)                                                                                  \
    inline T atomicMin(T *p, T v) { return mrt_emu_atomic_update(p, [v](T o) { return v < o ? v : o; }); }        \
    inline T atomicMax(T *p, T v) { return mrt_emu_atomic_update(p, [v](T o) { return v > o ? v : o; }); }
MRT_EMU_ATOMIC_BITS(int) MRT_EMU_ATOMIC_BITS(unsigned) MRT_EMU_ATOMIC_BITS(unsigned long long)
MRT_EMU_ATOMIC_MINMAX(int) MRT_EMU_ATOMIC_MINMAX(unsigned) MRT_EMU_ATOMIC_MINMAX(unsigned long long)
MRT_EMU_ATOMIC_MINMAX(long long)
inline int atomicSub(int *p, int v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicSub(unsigned *p, unsigned v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
inline float atomicAdd(float *p, float v) { return mrt_emu_atomic_update(p, [v](float o) { return o + v; }); }
inline double atomicAdd(double *p, double v) { return mrt_emu_atomic_update(p, [v](double o) { return o + v; }); }
inline float atomicExch(float *p, float v)
{
    float o;
    __atomic_exchange(p, &v, &o, __ATOMIC_RELAXED);
    return o;
}
inline unsigned atomicInc(unsigned *p, unsigned lim)
{
    return mrt_emu_atomic_update(p, [lim](unsigned o) { return o >= lim ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned *p, unsigned lim)
{
    return mrt_emu_atomic_update(p, [lim](unsigned o) { return o == 0 || o > lim ? lim : o - 1; });
}

// ------------------------------------------------------------------ intrinsics and device math

template <typename T> T __ldg(const T *p) { return *p; }
template <typename To, typename From> To mrt_emu_bits(From f)
{
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    memcpy(&t, &f, sizeof t);
    return t;
}
inline int __float_as_int(float f) { return mrt_emu_bits<int>(f); }
inline float __int_as_float(int i) { return mrt_emu_bits<float>(i); }
inline unsigned __float_as_uint(float f) { return mrt_emu_bits<unsigned>(f); }
inline float __uint_as_float(unsigned i) { return mrt_emu_bits<float>(i); }
inline long long __double_as_longlong(double d) { return mrt_emu_bits<long long>(d); }
inline double __longlong_as_double(long long i) { return mrt_emu_bits<double>(i); }

// the fast-math intrinsics, exactly rounded here (a GPU's are approximations: compare with a tolerance)
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : x > 0.0f ? x : 0.0f; } // NaN -> 0 as CUDA's
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned long long __brevll(unsigned long long x)
{
    unsigned long long r = 0;
    for (int i = 0; i < 64; i++, x >>= 1) r = (r << 1) | (x & 1);
    return r;
}
inline unsigned __brev(unsigned x) { return (unsigned)(__brevll(x) >> 32); }

// min/max as device code sees them: non-template overloads in the global namespace, so std::min/std::max stay as
// they are, and with `using namespace std` an unqualified min(a, b) of equal types picks these (a non-template wins).
// The float ones are fminf/fmaxf: a NaN loses to a number, as on a GPU.
#define MRT_EMU_MINMAX(T)                                                                                         \
    inline T min(T a, T b) { return a < b ? a : b; }                                                              \
    inline T max(T a, T b) { return a > b ? a : b; }
MRT_EMU_MINMAX(int) MRT_EMU_MINMAX(unsigned) MRT_EMU_MINMAX(long) MRT_EMU_MINMAX(unsigned long)
MRT_EMU_MINMAX(long long) MRT_EMU_MINMAX(unsigned long long)
inline unsigned min(int a, unsigned b) { return min((unsigned)a, b); }
inline unsigned min(unsigned a, int b) { return min(a, (unsigned)b); }
inline unsigned max(int a, unsigned b) { return max((unsigned)a, b); }
inline unsigned max(unsigned a, int b) { return max(a, (unsigned)b); }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double max(double a, float b) { return fmax(a, b); }

// ------------------------------------------------------------------ the runtime API (CUDA's names and codes)

#define MRT_EMU_ERRORS(X)                                                                                         \
    X(cudaSuccess, 0, "no error")                                                                                 \
    X(cudaErrorInvalidValue, 1, "invalid argument")                                                               \
    X(cudaErrorMemoryAllocation, 2, "out of memory")                                                              \
    X(cudaErrorInitializationError, 3, "initialization error")                                                    \
    X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                                         \
    X(cudaErrorInvalidSymbol, 13, "invalid device symbol")                                                        \
    X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                                \
    X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                                   \
    X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                                              \
    X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                               \
    X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                                      \
    X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                                             \
    X(cudaErrorNotReady, 600, "device not ready")                                                                 \
    X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                                   \
    X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")                              \
    X(cudaErrorLaunchFailure, 719, "unspecified launch failure")                                                  \
    X(cudaErrorNotSupported, 801, "operation not supported")                                                      \
    X(cudaErrorUnknown, 999, "unknown error")
#define MRT_EMU_ENUM(name, value, text) name = value,
enum cudaError { MRT_EMU_ERRORS(MRT_EMU_ENUM) };
#undef MRT_EMU_ENUM
typedef cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
struct mrt_emu_stream;
struct mrt_emu_event;
typedef mrt_emu_stream *cudaStream_t;
typedef mrt_emu_event *cudaEvent_t;
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00

struct cudaDeviceProp { // the fields an emulated device can answer; names as CUDA's
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock, sharedMemPerBlockOptin, sharedMemPerMultiprocessor, totalConstMem;
    int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], maxThreadsPerMultiProcessor;
    int major, minor, multiProcessorCount, l2CacheSize, concurrentKernels, unifiedAddressing, canMapHostMemory;
    int integrated, pciBusID, pciDeviceID, pciDomainID;
};

const char *cudaGetErrorString(cudaError_t e);
const char *cudaGetErrorName(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = nullptr);
cudaError_t cudaMemset(void *dst, int byte, size_t bytes);
cudaError_t cudaMemsetAsync(void *dst, int byte, size_t bytes, cudaStream_t s = nullptr);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t mrt_emu_func_set_attribute(const void *kernel, cudaFuncAttribute attr, int value);

// cuda_runtime.h's typed conveniences
template <typename T> cudaError_t cudaMalloc(T **p, size_t bytes) { return cudaMalloc((void **)p, bytes); }
template <typename T> cudaError_t cudaMallocHost(T **p, size_t bytes) { return cudaMallocHost((void **)p, bytes); }
template <typename T> cudaError_t cudaMallocAsync(T **p, size_t bytes, cudaStream_t s)
{
    return cudaMallocAsync((void **)p, bytes, s);
}
template <typename T> cudaError_t cudaFuncSetAttribute(T *kernel, cudaFuncAttribute attr, int value)
{
    return mrt_emu_func_set_attribute((const void *)kernel, attr, value);
}

// ------------------------------------------------------------------ launches

// Runs body(arg) for every thread of the grid (see the top of this file). A bad configuration is reported through
// cudaGetLastError, as a launch error is on a GPU; kernel (its address) only keys cudaFuncSetAttribute's limits.
void mrt_emu_launch_raw(const char *name, const void *kernel, dim3 grid, dim3 block, size_t shmem,
                        void (*body)(void *), void *arg);

template <typename F>
void mrt_emu_launch(const char *name, const void *kernel, dim3 grid, dim3 block, size_t shmem, cudaStream_t,
                    const F &body)
{
    mrt_emu_launch_raw(name, kernel, grid, block, shmem, [](void *p) { (*static_cast<const F *>(p))(); },
                       (void *)&body);
}

// The body captures by reference: the launch has finished when mrt_emu_launch returns.
#define MRT_LAUNCH(kernel, grid, block, shmem, stream, ...)                                                       \
    mrt_emu_launch(#kernel, (const void *)(kernel), dim3(grid), dim3(block), (size_t)(shmem), (stream),          \
                   [&]() { kernel(__VA_ARGS__); })

#pragma GCC visibility pop
