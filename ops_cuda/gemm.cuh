// minirt's own tiled GEMM for the CUDA module (ops_cuda/gemm.cu, conv.cu, deform_conv.cu): Y = alpha * A B + beta * C
// over a broadcast batch, with any element strides for A, B and the addend C (so transposes, im2col columns, a bias
// per row and Gemm's broadcast C all map onto it). 16x16 tiles staged in shared memory; each thread owns one output
// and sums its products in increasing k, so a result is the same on every run and every grid (no atomics). float32
// accumulates in float32, float64 in float64, float16/bfloat16 in float; integers in uint64 with wrap-around as the
// CPU's loops (ops_cpu/gemm.c). It serves the emulated module always and the real one wherever cuBLAS/cuDNN do not.
#pragma once

#include <type_traits>

#include "ops_cuda/cuda_common.cuh"

namespace mrt_cu_gemm {

static const int TILE = 16;

// Strides in elements. A(i, p) = a[i*a_rs + p*a_cs], B(p, j) = b[p*b_rs + j*b_cs], C(i, j) = c[i*c_rs + j*c_cs] (0 where
// C broadcasts), Y(i, j) = y[i*y_rs + j]. Batch index t (row-major over batch[]) adds sum_d coord_d * x_bs[d] to each.
struct geom {
    int64_t m, n, k;
    int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs, y_rs;
    int batch_rank;
    int64_t batch_count;
    int64_t batch[MRT_MAX_RANK];
    int64_t a_bs[MRT_MAX_RANK], b_bs[MRT_MAX_RANK], c_bs[MRT_MAX_RANK], y_bs[MRT_MAX_RANK];
    double alpha, beta;
    bool has_c;
    bool int_exact; // integer outputs: wrapping alpha = beta = 1 sums (else through double, saturated, as the CPU)
};

// A geometry for one plain row-major product (no batch, no C): callers then adjust strides and add batch dims.
static inline geom plain(int64_t m, int64_t n, int64_t k)
{
    geom g;
    memset(&g, 0, sizeof g);
    g.m = m, g.n = n, g.k = k;
    g.a_rs = k, g.a_cs = 1, g.b_rs = n, g.b_cs = 1, g.y_rs = n;
    g.batch_count = 1;
    g.alpha = 1, g.beta = 1;
    g.int_exact = true;
    return g;
}

// Appends a batch dim of `size` with the given strides (outermost first).
static inline void add_batch(geom *g, int64_t size, int64_t a_bs, int64_t b_bs, int64_t c_bs, int64_t y_bs)
{
    int d = g->batch_rank++;
    g->batch[d] = size, g->a_bs[d] = a_bs, g->b_bs[d] = b_bs, g->c_bs[d] = c_bs, g->y_bs[d] = y_bs;
    g->batch_count *= size;
}

template <typename Acc, typename T> __device__ __forceinline__ Acc load_as(const T *p, int64_t i)
{
    return (Acc)mrt_cu_load(p, i); // integers into uint64: modular, so the sums wrap as the CPU's
}

__device__ __forceinline__ int64_t sat_i64(double v)
{
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

template <typename TY, typename Acc>
__device__ __forceinline__ void store(const geom &g, const TY *c, int64_t coff, TY *y, int64_t yoff, Acc acc)
{
    if constexpr (std::is_integral<TY>::value) {
        if (g.int_exact) {
            uint64_t cv = g.has_c ? (uint64_t)c[coff] : 0;
            y[yoff] = (TY)(acc + cv);
        } else {
            double v = g.alpha * (double)(TY)acc + (g.has_c ? g.beta * (double)c[coff] : 0.0);
            y[yoff] = (TY)sat_i64(v);
        }
    } else {
        Acc r = acc;
        if (g.alpha != 1.0) r = (Acc)g.alpha * r;
        if (g.has_c) r += (Acc)g.beta * (Acc)mrt_cu_load(c, coff);
        mrt_cu_store(y, yoff, r);
    }
}

template <typename TA, typename TB, typename TY, typename Acc>
__global__ void tiled_kernel(const TA *a, const TB *b, const TY *c, TY *y, geom g)
{
    __shared__ Acc as[TILE][TILE + 1];
    __shared__ Acc bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (g.m + TILE - 1) / TILE;
    for (int64_t t = blockIdx.z; t < g.batch_count; t += gridDim.z) {
        int64_t ao = 0, bo = 0, co = 0, yo = 0, rest = t;
        for (int d = g.batch_rank - 1; d >= 0; d--) {
            int64_t x = rest % g.batch[d];
            rest /= g.batch[d];
            ao += x * g.a_bs[d], bo += x * g.b_bs[d], co += x * g.c_bs[d], yo += x * g.y_bs[d];
        }
        for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            const int64_t i = tm * TILE + ty, j = (int64_t)blockIdx.x * TILE + tx;
            // three levels of sums (a tile's 16 products, 16 tiles, the rest): one running sum over a long K rounds at
            // the total's magnitude at every step (a 32768-term dot product came 1.7e-6 off, this way 1e-7)
            Acc acc = 0, block = 0;
            for (int64_t p0 = 0; p0 < g.k; p0 += TILE) {
                // zeros outside A and B: the padded products add exact zeros and never reach a stored output
                as[ty][tx] = i < g.m && p0 + tx < g.k ? load_as<Acc>(a, ao + i * g.a_rs + (p0 + tx) * g.a_cs) : (Acc)0;
                bs[ty][tx] = p0 + ty < g.k && j < g.n ? load_as<Acc>(b, bo + (p0 + ty) * g.b_rs + j * g.b_cs) : (Acc)0;
                __syncthreads();
                const int kt = g.k - p0 < TILE ? (int)(g.k - p0) : TILE;
                Acc tile = 0;
                for (int q = 0; q < kt; q++) tile += as[ty][q] * bs[q][tx];
                block += tile;
                if ((p0 / TILE) % TILE == TILE - 1) acc += block, block = 0;
                __syncthreads();
            }
            acc += block;
            if (i < g.m && j < g.n) store(g, c, co + i * g.c_rs + j * g.c_cs, y, yo + i * g.y_rs + j, acc);
        }
    }
}

// Launches Y = alpha A B + beta C on `stream` (nothing when the product is empty). Returns false only for a grid the
// device cannot take (more than 2^31 column tiles).
template <typename TA, typename TB, typename TY, typename Acc>
bool launch(cudaStream_t stream, const TA *a, const TB *b, const TY *c, TY *y, const geom &g)
{
    if (g.m == 0 || g.n == 0 || g.batch_count == 0) return true;
    int64_t tiles_n = (g.n + TILE - 1) / TILE, tiles_m = (g.m + TILE - 1) / TILE;
    if (tiles_n > 0x7fffffff) return false;
    dim3 grid((unsigned)tiles_n, (unsigned)(tiles_m < 65535 ? tiles_m : 65535),
              (unsigned)(g.batch_count < 65535 ? g.batch_count : 65535));
    dim3 block(TILE, TILE, 1);
    auto *k = tiled_kernel<TA, TB, TY, Acc>;
    MRT_LAUNCH(k, grid, block, 0, stream, a, b, c, y, g);
    return true;
}

// The accumulator of an element type: float for float32/float16/bfloat16, double for float64, uint64 for integers.
template <typename T> struct acc_of { typedef uint64_t type; };
template <> struct acc_of<float> { typedef float type; };
template <> struct acc_of<double> { typedef double type; };
template <> struct acc_of<mrt_cu_half> { typedef float type; };
template <> struct acc_of<mrt_cu_bf16> { typedef float type; };

} // namespace mrt_cu_gemm
