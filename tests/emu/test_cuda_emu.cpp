// The CUDA emulation (ops_cuda/emu) against plain loops: grid-stride loops, a shared-memory tiled GEMM with
// __syncthreads, warp shuffles and votes (full and partial masks), atomics across blocks, dynamic shared memory and
// its limit, 2-D/3-D grids, launch errors (a launch from a kernel among them), copies, streams and events, threads
// that return before a barrier the others reach (thread 0 among them), and a deadlock reported by name. Written as ordinary CUDA: the same source
// compiles with nvcc (`nvcc -x cu -std=c++17 -arch=sm_90 -I. -c tests/emu/test_cuda_emu.cpp`); the checks of the
// emulation's own promises (0xFF fills, the deadlock report) are under MRT_CUDA_EMULATED.
// `test_cuda_emu --bench` times an element-wise kernel and a shared-memory reduction over 1M floats.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ops_cuda/cuda_compat.cuh"

static int passed, failed;
#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (cond) {                                                                                               \
            passed++;                                                                                             \
        } else {                                                                                                  \
            failed++;                                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
            printf(__VA_ARGS__);                                                                                  \
            printf("\n");                                                                                         \
        }                                                                                                         \
    } while (0)

// ------------------------------------------------------------------ kernels

__global__ void axpy(const float *x, float *y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] += a * x[i];
}

// C[m][n] = A[m][k] B[k][n] with 16x16 shared tiles
__global__ void tiled_gemm(const float *A, const float *B, float *C, int m, int n, int k)
{
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < k; k0 += 16) {
        ta[threadIdx.y][threadIdx.x] = r < m && k0 + (int)threadIdx.x < k ? A[r * k + k0 + threadIdx.x] : 0;
        tb[threadIdx.y][threadIdx.x] = c < n && k0 + (int)threadIdx.y < k ? B[(k0 + threadIdx.y) * n + c] : 0;
        __syncthreads();
        for (int j = 0; j < 16; j++) acc += ta[threadIdx.y][j] * tb[j][threadIdx.x];
        __syncthreads();
    }
    if (r < m && c < n) C[r * n + c] = acc;
}

// one block of 256: shared-memory tree, then the last warp with shuffles
__global__ void block_sum(const float *x, float *out, int n)
{
    __shared__ float s[256];
    float v = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = 128; w >= 32; w /= 2) {
        if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float t = s[threadIdx.x];
        for (int o = 16; o > 0; o /= 2) t += __shfl_down_sync(0xffffffffu, t, o);
        if (threadIdx.x == 0) *out = t;
    }
}

__global__ void votes(const int *x, unsigned *ballot, int *any, int *all)
{
    int p = x[threadIdx.x];
    unsigned b = __ballot_sync(0xffffffffu, p);
    int a = __any_sync(0xffffffffu, p), l = __all_sync(0xffffffffu, p);
    if (threadIdx.x == 0) *ballot = b, *any = a, *all = l;
}

__global__ void shuffles(int *out)
{
    int lane = threadIdx.x, v = lane * 10;
    out[lane] = __shfl_xor_sync(0xffffffffu, v, 1) + 1000 * __shfl_sync(0xffffffffu, v, 5);
    out[32 + lane] = __shfl_up_sync(0xffffffffu, v, 3, 8); // within segments of 8: the first 3 keep their own
    out[64 + lane] = __shfl_sync(0xffffffffu, (double)v, lane + 33) > 0 ? 1 : 0; // src mod 32; a double
}

// lanes 0-15 and 16-31 shuffle in two groups, each naming only its own lanes
__global__ void half_warps(int *out)
{
    int lane = threadIdx.x, v = lane;
    if (lane < 16)
        for (int o = 8; o > 0; o /= 2) v += __shfl_down_sync(0x0000ffffu, v, o, 16);
    else
        v = __shfl_sync(0xffff0000u, v, 31) * 100;
    out[lane] = v;
}

// lane 0 returns; the other 31 shuffle among themselves
__global__ void lane0_leaves(int *out)
{
    int lane = threadIdx.x;
    if (lane == 0) return;
    out[lane] = lane + __shfl_down_sync(0xfffffffeu, lane, 1);
}

__global__ void atomics(const int *x, int n, int *bins, float *fsum, unsigned *umax, int *imin, unsigned *cas_winner,
                        unsigned *ring)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[x[i] & 7], 1);
        atomicAdd(fsum, 0.5f);
        atomicMax(umax, (unsigned)x[i]);
        atomicMin(imin, -x[i]);
        atomicCAS(cas_winner, 0xFFFFFFFFu, (unsigned)i); // the first to come wins; the others see it taken
        atomicInc(ring, 9u);
    }
}

__global__ void read_dynamic(unsigned *out, int words)
{
    MRT_DYNAMIC_SHARED(unsigned, buf);
    if (threadIdx.x == 0) *out = buf[words - 1];
    __syncthreads();
    buf[threadIdx.x] = threadIdx.x; // this block's own writes; the next block must see 0xFF again
}

__global__ void coords(int *out)
{
    int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int nt = blockDim.x * blockDim.y * blockDim.z;
    out[b * nt + t] = (int)(blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z + 1000 * threadIdx.x + 10000 * threadIdx.y +
                            100000 * threadIdx.z);
}

// threads past n return before the barrier; the others still meet there
__global__ void early_exit(float *x, int n)
{
    __shared__ float s[64];
    if ((int)threadIdx.x >= n) return;
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = s[n - 1 - threadIdx.x];
}

// every third thread, thread 0 among them, returns first; the rest count themselves at two barriers
__global__ void thread0_leaves(int *out)
{
    if (threadIdx.x % 3 == 0) return;
    int c = __syncthreads_count(1);
    int all_odd_or = __syncthreads_or(threadIdx.x == 100);
    int all_and = __syncthreads_and(threadIdx.x % 3 != 0);
    if (threadIdx.x == 1) out[0] = c, out[1] = all_odd_or, out[2] = all_and;
}

template <typename T, int UNROLL> __global__ void scale_unrolled(T *x, T a, int n)
{
    int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    for (int u = 0; u < UNROLL; u++)
        if (i0 + u < n) x[i0 + u] *= a;
}

__global__ void device_minmax(int *iout, float *fout)
{
    iout[0] = min(3, -4);
    iout[1] = max(3u, 7u);
    fout[0] = max(nanf(""), 1.0f); // fmaxf: a NaN loses to a number
    fout[1] = min(2.5f, -1.5f);
}

__global__ void big_shared(int *out)
{
    MRT_DYNAMIC_SHARED(int, buf);
    buf[threadIdx.x] = 1;
    __syncthreads();
    if (threadIdx.x == 0) *out = buf[0] + buf[blockDim.x - 1];
}

#ifdef MRT_CUDA_EMULATED
// lane 0 waits at a shuffle naming all 32 lanes; the others wait at __syncthreads: neither can open
__global__ void deadlocks(int *out)
{
    if (threadIdx.x == 0)
        *out = __shfl_sync(0xffffffffu, 1, 1);
    else
        __syncthreads();
}

// a launch from device code: not emulated (dynamic parallelism), refused as a launch error, not run
__global__ void launches_axpy(float *x)
{
    if (threadIdx.x == 0) MRT_LAUNCH(axpy, 1, 1, 0, nullptr, x, x, 1.0f, 1);
}
#endif

// ------------------------------------------------------------------ helpers

template <typename T> static T *device_copy(const std::vector<T> &h)
{
    T *d = nullptr;
    cudaMalloc((void **)&d, h.size() * sizeof(T));
    cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}
template <typename T> static std::vector<T> host_copy(const T *d, size_t n)
{
    std::vector<T> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
}

static double seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ------------------------------------------------------------------ tests

static void test_elementwise_and_events()
{
    const int n = 100003;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; i++) x[i] = (float)(i % 17) - 8, y[i] = (float)(i % 5);
    float *dx = device_copy(x), *dy = device_copy(y);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, nullptr);
    MRT_LAUNCH(axpy, 97, 256, 0, nullptr, dx, dy, 2.0f, n);
    cudaEventRecord(e1, nullptr);
    cudaEventSynchronize(e1);
    std::vector<float> got = host_copy(dy, n);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != y[i] + 2.0f * x[i];
    CHECK(bad == 0, "axpy: %d wrong elements", bad);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms >= 0, "elapsed time %g", ms);

    cudaEvent_t untimed;
    cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming);
    cudaEventRecord(untimed, nullptr);
    CHECK(cudaEventElapsedTime(&ms, e0, untimed) == cudaErrorInvalidResourceHandle, "no time from an untimed event");
    cudaGetLastError();
    cudaEventDestroy(untimed);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(dx);
    cudaFree(dy);
}

static void test_gemm()
{
    const int m = 37, n = 29, k = 45;
    std::vector<float> A(m * k), B(k * n);
    for (int i = 0; i < m * k; i++) A[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < k * n; i++) B[i] = (float)((i * 3) % 13) - 6;
    float *dA = device_copy(A), *dB = device_copy(B), *dC;
    cudaMalloc((void **)&dC, m * n * sizeof(float));
    MRT_LAUNCH(tiled_gemm, dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, nullptr, dA, dB, dC, m, n, k);
    std::vector<float> C = host_copy(dC, m * n);
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float want = 0;
            for (int l = 0; l < k; l++) want += A[i * k + l] * B[l * n + j];
            bad += C[i * n + j] != want; // small integers: exact in any order
        }
    CHECK(bad == 0, "tiled GEMM: %d wrong elements", bad);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
}

static void test_reductions_and_warps()
{
    std::vector<float> x(5000);
    for (int i = 0; i < 5000; i++) x[i] = (float)(i % 17) - 8;
    float *dx = device_copy(x), *dsum;
    cudaMalloc((void **)&dsum, 4);
    MRT_LAUNCH(block_sum, 1, 256, 0, nullptr, dx, dsum, 5000);
    float want = 0;
    for (float v : x) want += v;
    CHECK(host_copy(dsum, 1)[0] == want, "block sum %g, expected %g", host_copy(dsum, 1)[0], want);

    std::vector<int> p(32);
    for (int i = 0; i < 32; i++) p[i] = i % 3 == 0;
    int *dp = device_copy(p), *dvotes;
    unsigned *dballot;
    cudaMalloc((void **)&dvotes, 2 * 4);
    cudaMalloc((void **)&dballot, 4);
    MRT_LAUNCH(votes, 1, 32, 0, nullptr, dp, dballot, dvotes, dvotes + 1);
    unsigned want_ballot = 0;
    for (int i = 0; i < 32; i++) want_ballot |= (unsigned)p[i] << i;
    std::vector<int> v = host_copy(dvotes, 2);
    unsigned ballot = host_copy(dballot, 1)[0];
    CHECK(ballot == want_ballot && v[0] == 1 && v[1] == 0, "votes: ballot %08x (want %08x), any %d, all %d", ballot,
          want_ballot, v[0], v[1]);

    int *dout;
    cudaMalloc((void **)&dout, 96 * 4);
    MRT_LAUNCH(shuffles, 1, 32, 0, nullptr, dout);
    std::vector<int> o = host_copy(dout, 96);
    int bad = 0;
    for (int l = 0; l < 32; l++) {
        bad += o[l] != (l ^ 1) * 10 + 1000 * 50;
        bad += o[32 + l] != (l % 8 < 3 ? l : l - 3) * 10;
        bad += o[64 + l] != ((l + 1) % 32 != 0);
    }
    CHECK(bad == 0, "xor/idx/up shuffles with widths: %d wrong lanes", bad);

    MRT_LAUNCH(half_warps, 1, 32, 0, nullptr, dout);
    o = host_copy(dout, 32);
    CHECK(o[0] == 120 && o[16] == 3100 && o[31] == 3100, "half-warp shuffles: %d %d %d", o[0], o[16], o[31]);
    MRT_LAUNCH(lane0_leaves, 1, 32, 0, nullptr, dout);
    o = host_copy(dout, 32);
    CHECK(o[1] == 3 && o[30] == 61 && o[31] == 62, "shuffles after lane 0 returned: %d %d %d", o[1], o[30], o[31]);
    cudaFree(dx);
    cudaFree(dsum);
    cudaFree(dp);
    cudaFree(dvotes);
    cudaFree(dballot);
    cudaFree(dout);
}

static void test_atomics()
{
    const int n = 5000;
    std::vector<int> xi(n);
    for (int i = 0; i < n; i++) xi[i] = i * 31;
    int *dxi = device_copy(xi), *dbins, *dimin;
    float *dfs;
    unsigned *du; // max, CAS winner, ring
    cudaMalloc((void **)&dbins, 8 * 4);
    cudaMalloc((void **)&dfs, 4);
    cudaMalloc((void **)&dimin, 4);
    cudaMalloc((void **)&du, 3 * 4);
    cudaMemset(dbins, 0, 8 * 4);
    cudaMemset(dfs, 0, 4);
    cudaMemset(dimin, 0, 4);
    cudaMemset(du, 0, 4);
    cudaMemset(du + 1, 0xFF, 4);
    cudaMemset(du + 2, 0, 4);
    MRT_LAUNCH(atomics, 7, 128, 0, nullptr, dxi, n, dbins, dfs, du, dimin, du + 1, du + 2);
    std::vector<int> bins = host_copy(dbins, 8);
    std::vector<unsigned> u = host_copy(du, 3);
    int wb[8] = {0}, bad = 0;
    for (int i = 0; i < n; i++) wb[xi[i] & 7]++;
    for (int b = 0; b < 8; b++) bad += bins[b] != wb[b];
    CHECK(bad == 0 && host_copy(dfs, 1)[0] == 2500.0f, "atomicAdd: %d wrong bins, float sum %g", bad,
          host_copy(dfs, 1)[0]);
    CHECK(u[0] == (unsigned)(n - 1) * 31 && host_copy(dimin, 1)[0] == -(n - 1) * 31, "atomicMax %u, atomicMin %d", u[0],
          host_copy(dimin, 1)[0]);
    CHECK(u[1] < (unsigned)n && u[2] == (unsigned)(n % 10), "atomicCAS winner %u, atomicInc ring %u", u[1], u[2]);
    cudaFree(dxi);
    cudaFree(dbins);
    cudaFree(dfs);
    cudaFree(dimin);
    cudaFree(du);
}

static void test_shared_and_grids()
{
    unsigned *ddyn;
    cudaMalloc((void **)&ddyn, 4);
    MRT_LAUNCH(read_dynamic, 3, 16, 16 * 4, nullptr, ddyn, 16);
#ifdef MRT_CUDA_EMULATED
    CHECK(host_copy(ddyn, 1)[0] == 0xFFFFFFFFu, "dynamic shared memory starts each block as 0xFF bytes, got %08x",
          host_copy(ddyn, 1)[0]);
    unsigned *dfresh;
    cudaMalloc((void **)&dfresh, 4);
    CHECK(host_copy(dfresh, 1)[0] == 0xFFFFFFFFu, "cudaMalloc's memory starts as 0xFF bytes");
    cudaFree(dfresh);
#endif
    CHECK(cudaGetLastError() == cudaSuccess, "dynamic shared memory launch");

    int *dbig;
    cudaMalloc((void **)&dbig, 4);
    const int big = 64 * 1024;
    MRT_LAUNCH(big_shared, 1, 32, big, nullptr, dbig);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue, "64 KiB of dynamic shared memory without the attribute");
    CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, big) == cudaSuccess,
          "raising the kernel's dynamic shared memory limit");
    MRT_LAUNCH(big_shared, 1, 32, big, nullptr, dbig);
    CHECK(cudaGetLastError() == cudaSuccess && host_copy(dbig, 1)[0] == 2, "64 KiB once raised");
    cudaFree(dbig);

    int *dco;
    const int total = 2 * 3 * 2 * 24;
    cudaMalloc((void **)&dco, total * 4);
    MRT_LAUNCH(coords, dim3(2, 3, 2), dim3(4, 3, 2), 0, nullptr, dco);
    std::vector<int> co = host_copy(dco, total);
    int bad = 0;
    for (int bz = 0; bz < 2; bz++)
        for (int by = 0; by < 3; by++)
            for (int bx = 0; bx < 2; bx++)
                for (int tz = 0; tz < 2; tz++)
                    for (int ty = 0; ty < 3; ty++)
                        for (int tx = 0; tx < 4; tx++) {
                            int b = (bz * 3 + by) * 2 + bx, t = (tz * 3 + ty) * 4 + tx;
                            bad += co[b * 24 + t] != bx + 10 * by + 100 * bz + 1000 * tx + 10000 * ty + 100000 * tz;
                        }
    CHECK(bad == 0, "2-D/3-D grids and blocks: %d wrong coordinates", bad);
    cudaFree(ddyn);
    cudaFree(dco);
}

static void test_early_exits_and_templates()
{
    std::vector<float> hx(64);
    for (int i = 0; i < 64; i++) hx[i] = (float)i;
    float *dex = device_copy(hx);
    MRT_LAUNCH(early_exit, 1, 64, 0, nullptr, dex, 40);
    hx = host_copy(dex, 64);
    int bad = 0;
    for (int i = 0; i < 64; i++) bad += hx[i] != (i < 40 ? (float)(39 - i) : (float)i);
    CHECK(bad == 0, "early exit before a barrier: %d wrong elements", bad);

    int *dcount;
    cudaMalloc((void **)&dcount, 3 * 4);
    MRT_LAUNCH(thread0_leaves, 1, 200, 0, nullptr, dcount);
    std::vector<int> c = host_copy(dcount, 3);
    CHECK(c[0] == 200 - 67 && c[1] == 1 && c[2] == 1, "thread 0 returns first: count %d, or %d, and %d", c[0], c[1],
          c[2]);

    auto *k = scale_unrolled<float, 4>; // template commas: through a pointer
    MRT_LAUNCH(k, 1, 16, 0, nullptr, dex, 2.0f, 61);
    hx = host_copy(dex, 64);
    CHECK(hx[0] == 78.0f && hx[60] == 120.0f && hx[61] == 61.0f, "templated kernel: %g %g %g", hx[0], hx[60], hx[61]);

    int *dmi;
    float *dmf;
    cudaMalloc((void **)&dmi, 2 * 4);
    cudaMalloc((void **)&dmf, 2 * 4);
    MRT_LAUNCH(device_minmax, 1, 1, 0, nullptr, dmi, dmf);
    std::vector<int> mi = host_copy(dmi, 2);
    std::vector<float> mf = host_copy(dmf, 2);
    CHECK(mi[0] == -4 && mi[1] == 7 && mf[0] == 1.0f && mf[1] == -1.5f, "device min/max: %d %d %g %g", mi[0], mi[1],
          mf[0], mf[1]);
    cudaFree(dex);
    cudaFree(dcount);
    cudaFree(dmi);
    cudaFree(dmf);
}

static void test_api()
{
    float *dx;
    cudaMalloc((void **)&dx, 64);
    CHECK(cudaGetLastError() == cudaSuccess, "no error so far");
    MRT_LAUNCH(axpy, 1, 1025, 0, nullptr, dx, dx, 1.0f, 16);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "1025 threads: invalid configuration");
    CHECK(cudaGetLastError() == cudaSuccess, "the launch error is cleared once read");
    MRT_LAUNCH(axpy, dim3(1, 1, 1), dim3(1, 1, 65), 0, nullptr, dx, dx, 1.0f, 16);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "blockDim.z 65: invalid configuration");
    MRT_LAUNCH(axpy, 0, 32, 0, nullptr, dx, dx, 1.0f, 16);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration, "an empty grid's error outlives a later success");
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration && cudaGetLastError() == cudaSuccess, "read once");

    std::vector<float> h(16), back(16, 0.0f);
    for (int i = 0; i < 16; i++) h[i] = 0.25f * i;
    float *dy;
    cudaMalloc((void **)&dy, 64);
    cudaMemcpyAsync(dx, h.data(), 64, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(dy, dx, 64, cudaMemcpyDeviceToDevice, s);
    cudaMemsetAsync(dx, 0, 64, s);
    cudaMemcpyAsync(back.data(), dy, 64, cudaMemcpyDeviceToHost, s);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess && memcmp(back.data(), h.data(), 64) == 0 &&
              host_copy(dx, 1)[0] == 0.0f,
          "copies round trip through a stream");
    CHECK(cudaStreamQuery(s) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess, "stream query and destroy");

    int count = 0, dev = -1;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count >= 1 && cudaGetDevice(&dev) == cudaSuccess && dev == 0,
          "device count %d, current %d", count, dev);
    CHECK(cudaSetDevice(count) == cudaErrorInvalidDevice && cudaGetLastError() == cudaErrorInvalidDevice,
          "no device past the count");
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.warpSize == 32 && prop.maxThreadsPerBlock == 1024,
          "device properties");
    CHECK(strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0 &&
              strcmp(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure") == 0 &&
              cudaErrorNotReady == 600 && cudaErrorInvalidDevice == 101,
          "error names and codes");
#ifdef MRT_CUDA_EMULATED
    CHECK(strcmp(prop.name, "minirt CUDA emulator (CPU)") == 0 && prop.major == 9, "emulated device: %s", prop.name);
    void *huge = nullptr;
    CHECK(cudaMalloc(&huge, (size_t)1 << 62) == cudaErrorMemoryAllocation && huge == nullptr, "a 4 EiB allocation");
    cudaGetLastError();
    cudaMemset(dx, 0, 4);
    MRT_LAUNCH(launches_axpy, 1, 32, 0, nullptr, dx);
    CHECK(cudaGetLastError() == cudaErrorNotSupported && host_copy(dx, 1)[0] == 0.0f,
          "a launch from a kernel is refused (cudaErrorNotSupported) and does not run");
#endif
    cudaFree(dx);
    cudaFree(dy);
}

#ifdef MRT_CUDA_EMULATED
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

// Runs f in a child process (it is meant to abort); returns its wait status and what it wrote to stderr.
template <typename F> static int in_child(F f, char *err, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        f();
        _exit(0);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got < len - 1 && (r = read(fd[0], err + got, len - 1 - got)) > 0) got += (size_t)r;
    err[got] = 0;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

// A deadlocked block aborts with a message naming the kernel; under ASan, a kernel reading past its buffer is caught.
static void test_reports()
{
    static char err[4096];
    int status = in_child(
        [] {
            int *d;
            cudaMalloc((void **)&d, 4);
            MRT_LAUNCH(deadlocks, 1, 64, 0, nullptr, d);
        },
        err, sizeof err);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(err, "kernel deadlocks") &&
              strstr(err, "deadlock:"),
          "a deadlock aborts naming the kernel: status %d, message \"%s\"", status, err);
#ifdef UNDER_ASAN
    status = in_child(
        [] {
            float *d;
            cudaMalloc((void **)&d, 100 * sizeof(float));
            MRT_LAUNCH(axpy, 1, 128, 0, nullptr, d, d, 1.0f, 101); // one element too many
        },
        err, sizeof err);
    CHECK(status != 0 && strstr(err, "heap-buffer-overflow"),
          "ASan catches a kernel reading past its buffer: status %d", status);
#endif
}
#endif

// ------------------------------------------------------------------ timings

__global__ void scale(const float *x, float *y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + 1.0f;
}
__global__ void reduce256(const float *x, float *out, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * 256 + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int w = 128; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void warp_sums(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) out[i / 32] = v;
}

static void bench()
{
    const int n = 1 << 20;
    std::vector<float> h(n, 1.0f);
    float *x = device_copy(h), *y, *r;
    cudaMalloc((void **)&y, n * 4);
    cudaMalloc((void **)&r, n / 32 * 4);
    for (int grid : {1024, 4096}) {
        double t = seconds();
        for (int k = 0; k < 5; k++) MRT_LAUNCH(scale, grid, 256, 0, nullptr, x, y, 2.0f, n);
        cudaDeviceSynchronize();
        t = (seconds() - t) / 5;
        printf("element-wise, grid-stride, 1M floats, %d blocks of 256: %.2f ms (%.0f M elements/s)\n", grid, t * 1e3,
               n / t / 1e6);
    }
    double t = seconds();
    MRT_LAUNCH(reduce256, n / 256, 256, 0, nullptr, x, r, n);
    cudaDeviceSynchronize();
    t = seconds() - t;
    printf("shared-memory tree reduction, 1M floats, %d blocks of 256 (9 barriers each): %.0f ms, %.0f us per block "
           "(sum %g)\n",
           n / 256, t * 1e3, t / (n / 256) * 1e6, host_copy(r, 1)[0]);
    t = seconds();
    MRT_LAUNCH(warp_sums, n / 256, 256, 0, nullptr, x, r, n);
    cudaDeviceSynchronize();
    t = seconds() - t;
    printf("warp shuffle sums (5 __shfl_down_sync), 1M floats: %.0f ms (sum %g)\n", t * 1e3, host_copy(r, 1)[0]);
    cudaFree(x);
    cudaFree(y);
    cudaFree(r);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    test_elementwise_and_events();
    test_gemm();
    test_reductions_and_warps();
    test_atomics();
    test_shared_and_grids();
    test_early_exits_and_templates();
    test_api();
#ifdef MRT_CUDA_EMULATED
    test_reports();
#endif
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
