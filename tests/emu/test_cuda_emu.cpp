// The CUDA emulation (ops_cuda/emu) against plain loops: grid-stride loops, a shared-memory tiled GEMM with
// __syncthreads, warp shuffles and votes, atomics across blocks, dynamic shared memory, 2-D/3-D grids, launch errors,
// copies, events, and threads that return before a barrier the others reach. Written as ordinary CUDA: the same
// source compiles with nvcc (`nvcc -std=c++17 -I. -c tests/emu/test_cuda_emu.cpp -x cu`).
#include <cmath>
#include <cstdio>
#include <vector>

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

__global__ void xor_broadcast(int *out)
{
    int lane = threadIdx.x, v = lane * 10;
    out[lane] = __shfl_xor_sync(0xffffffffu, v, 1) + 1000 * __shfl_sync(0xffffffffu, v, 5);
}

__global__ void histogram(const int *x, int n, int *bins, float *fsum)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[x[i] & 7], 1);
        atomicAdd(fsum, 0.5f);
    }
}

__global__ void read_dynamic(unsigned *out)
{
    MRT_DYNAMIC_SHARED(unsigned, buf);
    if (threadIdx.x == 0) *out = buf[3];
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

int main()
{
    const int n = 100003;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; i++) x[i] = (float)(i % 17) - 8, y[i] = (float)(i % 5);
    float *dx, *dy;
    cudaMalloc((void **)&dx, n * 4);
    cudaMalloc((void **)&dy, n * 4);
    cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, nullptr);
    MRT_LAUNCH(axpy, 97, 256, 0, nullptr, dx, dy, 2.0f, n);
    cudaEventRecord(e1, nullptr);
    std::vector<float> got(n);
    cudaMemcpy(got.data(), dy, n * 4, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != y[i] + 2.0f * x[i];
    CHECK(bad == 0, "axpy: %d wrong elements", bad);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms >= 0, "elapsed time %g", ms);

    const int m = 37, nn = 29, k = 45;
    std::vector<float> A(m * k), B(k * nn), C(m * nn);
    for (int i = 0; i < m * k; i++) A[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < k * nn; i++) B[i] = (float)((i * 3) % 13) - 6;
    float *dA, *dB, *dC;
    cudaMalloc((void **)&dA, A.size() * 4);
    cudaMalloc((void **)&dB, B.size() * 4);
    cudaMalloc((void **)&dC, C.size() * 4);
    cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
    MRT_LAUNCH(tiled_gemm, dim3((nn + 15) / 16, (m + 15) / 16), dim3(16, 16), 0, nullptr, dA, dB, dC, m, nn, k);
    cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost);
    bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < nn; j++) {
            float want = 0;
            for (int l = 0; l < k; l++) want += A[i * k + l] * B[l * nn + j];
            bad += C[i * nn + j] != want; // small integers: exact in any order
        }
    CHECK(bad == 0, "tiled GEMM: %d wrong elements", bad);

    float *dsum, sum = 0;
    cudaMalloc((void **)&dsum, 4);
    MRT_LAUNCH(block_sum, 1, 256, 0, nullptr, dx, dsum, 5000);
    cudaMemcpy(&sum, dsum, 4, cudaMemcpyDeviceToHost);
    float want = 0;
    for (int i = 0; i < 5000; i++) want += x[i];
    CHECK(sum == want, "block sum %g, expected %g", sum, want);

    std::vector<int> p(32);
    for (int i = 0; i < 32; i++) p[i] = i % 3 == 0;
    int *dp, *dany, *dall, hany, hall;
    unsigned *dballot, hballot;
    cudaMalloc((void **)&dp, 32 * 4);
    cudaMalloc((void **)&dany, 4);
    cudaMalloc((void **)&dall, 4);
    cudaMalloc((void **)&dballot, 4);
    cudaMemcpy(dp, p.data(), 32 * 4, cudaMemcpyHostToDevice);
    MRT_LAUNCH(votes, 1, 32, 0, nullptr, dp, dballot, dany, dall);
    cudaMemcpy(&hballot, dballot, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hany, dany, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hall, dall, 4, cudaMemcpyDeviceToHost);
    unsigned want_ballot = 0;
    for (int i = 0; i < 32; i++) want_ballot |= (unsigned)p[i] << i;
    CHECK(hballot == want_ballot && hany == 1 && hall == 0, "votes: ballot %08x (want %08x), any %d, all %d", hballot,
          want_ballot, hany, hall);

    int *dout, hout[32];
    cudaMalloc((void **)&dout, 32 * 4);
    MRT_LAUNCH(xor_broadcast, 1, 32, 0, nullptr, dout);
    cudaMemcpy(hout, dout, 32 * 4, cudaMemcpyDeviceToHost);
    bad = 0;
    for (int l = 0; l < 32; l++) bad += hout[l] != (l ^ 1) * 10 + 1000 * 50;
    CHECK(bad == 0, "xor/idx shuffles: %d wrong lanes", bad);

    std::vector<int> xi(5000);
    for (int i = 0; i < 5000; i++) xi[i] = i * 31;
    int *dxi, *dbins, hbins[8];
    float *dfs, hfs;
    cudaMalloc((void **)&dxi, 5000 * 4);
    cudaMalloc((void **)&dbins, 8 * 4);
    cudaMalloc((void **)&dfs, 4);
    cudaMemcpy(dxi, xi.data(), 5000 * 4, cudaMemcpyHostToDevice);
    cudaMemset(dbins, 0, 8 * 4);
    cudaMemset(dfs, 0, 4);
    MRT_LAUNCH(histogram, 7, 128, 0, nullptr, dxi, 5000, dbins, dfs);
    cudaMemcpy(hbins, dbins, 8 * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hfs, dfs, 4, cudaMemcpyDeviceToHost);
    int wb[8] = {0};
    for (int i = 0; i < 5000; i++) wb[xi[i] & 7]++;
    bad = 0;
    for (int b = 0; b < 8; b++) bad += hbins[b] != wb[b];
    CHECK(bad == 0 && hfs == 2500.0f, "atomics: %d wrong bins, float sum %g", bad, hfs);

    unsigned *ddyn, hdyn = 0;
    cudaMalloc((void **)&ddyn, 4);
    MRT_LAUNCH(read_dynamic, 1, 4, 64, nullptr, ddyn);
    cudaMemcpy(&hdyn, ddyn, 4, cudaMemcpyDeviceToHost);
    CHECK(hdyn == 0xFFFFFFFFu, "dynamic shared memory starts as 0xFF bytes, got %08x", hdyn);

    int *dco, hco[2 * 3 * 2 * 24];
    cudaMalloc((void **)&dco, sizeof hco);
    MRT_LAUNCH(coords, dim3(2, 3, 2), dim3(4, 3, 2), 0, nullptr, dco);
    cudaMemcpy(hco, dco, sizeof hco, cudaMemcpyDeviceToHost);
    bad = 0;
    for (int bz = 0; bz < 2; bz++)
        for (int by = 0; by < 3; by++)
            for (int bx = 0; bx < 2; bx++)
                for (int tz = 0; tz < 2; tz++)
                    for (int ty = 0; ty < 3; ty++)
                        for (int tx = 0; tx < 4; tx++) {
                            int b = (bz * 3 + by) * 2 + bx, t = (tz * 3 + ty) * 4 + tx;
                            bad += hco[b * 24 + t] != bx + 10 * by + 100 * bz + 1000 * tx + 10000 * ty + 100000 * tz;
                        }
    CHECK(bad == 0, "2-D/3-D grids and blocks: %d wrong coordinates", bad);

    float hx[64];
    for (int i = 0; i < 64; i++) hx[i] = (float)i;
    float *dex;
    cudaMalloc((void **)&dex, sizeof hx);
    cudaMemcpy(dex, hx, sizeof hx, cudaMemcpyHostToDevice);
    MRT_LAUNCH(early_exit, 1, 64, 0, nullptr, dex, 40);
    cudaMemcpy(hx, dex, sizeof hx, cudaMemcpyDeviceToHost);
    bad = 0;
    for (int i = 0; i < 64; i++) bad += hx[i] != (i < 40 ? (float)(39 - i) : (float)i);
    CHECK(bad == 0, "early exit before a barrier: %d wrong elements", bad);

    CHECK(cudaGetLastError() == cudaSuccess, "no error so far");
    MRT_LAUNCH(axpy, 1, 1025, 0, nullptr, dx, dy, 1.0f, n);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "1025 threads: invalid configuration");
    CHECK(cudaGetLastError() == cudaSuccess, "the launch error is cleared once read");
    MRT_LAUNCH(axpy, 0, 32, 0, nullptr, dx, dy, 1.0f, n);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration, "an empty grid: invalid configuration");
    cudaGetLastError();

    for (void *q : {(void *)dx, (void *)dy, (void *)dA, (void *)dB, (void *)dC, (void *)dsum, (void *)dp, (void *)dany,
                    (void *)dall, (void *)dballot, (void *)dout, (void *)dxi, (void *)dbins, (void *)dfs, (void *)ddyn,
                    (void *)dco, (void *)dex})
        cudaFree(q);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
