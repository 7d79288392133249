// CUDA's execution model on the CPU, for the host-compiled build of the kernels (ops_cuda/cuda_compat.cuh).
//
// A launch runs its grid one block at a time on the calling thread. Thread 0 of a block runs in a fiber; if it ends
// without reaching a barrier or a warp operation, the block's other threads run as plain calls (the common case:
// element-wise kernels cost a function call per thread). Otherwise every thread gets a fiber (ucontext), and
// __syncthreads, __syncwarp, shuffles and votes suspend a thread until every live thread of the block (or lane of the
// warp: 32 consecutive linear ids) has arrived; a thread that has returned counts as arrived, as on Volta and later.
// A barrier reached by some threads while the others have all returned or wait elsewhere forever is a deadlock,
// reported with the kernel's name (it would hang or misbehave on a GPU too).
//
// __shared__ is thread_local storage: one OS thread runs one block at a time, so the block's fibers share it.
// Static __shared__ arrays keep what the previous block left (a GPU's are undefined too); dynamic shared memory and
// fresh device allocations are filled with 0xFF bytes, so a kernel that counts on zeros fails. Device memory is host
// memory in exact-sized heap blocks, so AddressSanitizer sees a read past a buffer. Streams run work in issue order:
// every launch and copy is done when its call returns. Test code: small on purpose.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ thread_local

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
};

// ------------------------------------------------------------------ the running thread

struct mrt_emu_thread_state {
    uint3 thread_idx, block_idx;
    dim3 block_dim, grid_dim;
};
const mrt_emu_thread_state &mrt_emu_self();
#define threadIdx (mrt_emu_self().thread_idx)
#define blockIdx (mrt_emu_self().block_idx)
#define blockDim (mrt_emu_self().block_dim)
#define gridDim (mrt_emu_self().grid_dim)
static const int warpSize = 32;

void mrt_emu_syncthreads();
void mrt_emu_syncwarp();
// lane exchange: mode 0 idx, 1 up, 2 down, 3 xor; bytes <= 8
void mrt_emu_shfl(const void *in, void *out, size_t bytes, int mode, int arg, int width);
unsigned mrt_emu_ballot(int pred);
void *mrt_emu_dynamic_shared();
#define __syncthreads() mrt_emu_syncthreads()
#define __syncwarp(...) mrt_emu_syncwarp()
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define MRT_DYNAMIC_SHARED(T, name) T *name = (T *)mrt_emu_dynamic_shared()

template <typename T> T __shfl_sync(unsigned, T v, int src, int width = 32)
{
    T out;
    mrt_emu_shfl(&v, &out, sizeof(T), 0, src, width);
    return out;
}
template <typename T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32)
{
    T out;
    mrt_emu_shfl(&v, &out, sizeof(T), 1, (int)d, width);
    return out;
}
template <typename T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32)
{
    T out;
    mrt_emu_shfl(&v, &out, sizeof(T), 2, (int)d, width);
    return out;
}
template <typename T> T __shfl_xor_sync(unsigned, T v, int m, int width = 32)
{
    T out;
    mrt_emu_shfl(&v, &out, sizeof(T), 3, m, width);
    return out;
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return mrt_emu_ballot(pred) & mask; }
inline int __any_sync(unsigned mask, int pred) { return (mrt_emu_ballot(pred) & mask) != 0; }
inline int __all_sync(unsigned mask, int pred) { return (mrt_emu_ballot(!pred) & mask) == 0; }
inline unsigned __activemask() { return mrt_emu_ballot(1); }

// Atomics: the fibers of a block never run at once and blocks run one after another, so read-modify-write is atomic.
template <typename T> T atomicAdd(T *p, T v) { T o = *p; *p = (T)(o + v); return o; }
template <typename T> T atomicSub(T *p, T v) { T o = *p; *p = (T)(o - v); return o; }
template <typename T> T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }
template <typename T> T atomicMax(T *p, T v) { T o = *p; if (v > o) *p = v; return o; }
template <typename T> T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }
template <typename T> T atomicOr(T *p, T v) { T o = *p; *p = o | v; return o; }
template <typename T> T atomicAnd(T *p, T v) { T o = *p; *p = o & v; return o; }
template <typename T> T atomicCAS(T *p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }

template <typename T> inline T __ldg(const T *p) { return *p; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

// ------------------------------------------------------------------ the runtime API (CUDA's names and codes)

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorLaunchFailure = 719,
};
typedef cudaError_t cudaError;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
struct CUstream_st;
struct CUevent_st;
typedef CUstream_st *cudaStream_t;
typedef CUevent_st *cudaEvent_t;
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], multiProcessorCount, major, minor;
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

// ------------------------------------------------------------------ launches

// Runs body(arg) for every thread of the grid (see the top of this file). A bad configuration is reported through
// cudaGetLastError, as a launch error is on a GPU.
void mrt_emu_launch_raw(const char *name, dim3 grid, dim3 block, size_t shmem, void (*body)(void *), void *arg);

template <typename F> void mrt_emu_launch(const char *name, dim3 grid, dim3 block, size_t shmem, F f)
{
    mrt_emu_launch_raw(name, grid, block, shmem, [](void *p) { (*(F *)p)(); }, &f);
}

#define MRT_LAUNCH(kernel, grid, block, shmem, stream, ...)                                                       \
    ((void)(stream), mrt_emu_launch(#kernel, dim3(grid), dim3(block), (size_t)(shmem), [=]() { kernel(__VA_ARGS__); }))
