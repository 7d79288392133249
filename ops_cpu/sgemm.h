/* minirt's float32 GEMM: C[m, n] (+)= A[m, k] * B[k, n], then a per-row bias and a fused epilogue, on the session's
 * threads. Used by Conv (B gathered straight from the image: im2col is fused into packing), MatMul and Gemm.
 *
 * Results: k is cut into blocks of MRT_SGEMM_K_BLOCK values; each block's sum for a C element is one fused
 * multiply-add chain over its k in increasing order, starting from 0, and the block sums are added to the element
 * in order: c = s_0 (or C + s_0 when accumulating), c = c + s_1, ..., then + bias[row], then the epilogue. Summing
 * blocks rather than one chain over all of k keeps the rounding error of long products (K = 4608 in ResNet-18's
 * layer4) near that of a blocked BLAS. That is exactly what the scalar loop in tests/test_sgemm.c computes, on
 * every CPU path (AVX-512 kernel, AVX2/FMA or baseline loops) and for every thread count: the work split only
 * decides which element is computed when, never the order of its operations.
 *
 * Packed layouts (64-byte aligned buffers):
 *  - A: row panels of MRT_SGEMM_MR rows, k block by k block: block b (k0 = b * K_BLOCK, kc = its depth) holds
 *    A[p*MR + i, k0 + kk] at [b][p][kk][i], rows past m are 0. A block's panels are contiguous, so a pass over
 *    one k block streams A in order (panel-major over all of k, ResNet-18's 9 MB layer4 weights were read in
 *    8 KiB pieces 147 KiB apart, which the prefetchers follow badly);
 *  - B: column panels of MRT_SGEMM_NR columns; panel q holds B[kk, q*NR + j] at [q][kk][j], columns past n are 0.
 * Weights are packed once per plan (a kernel's prepare); activations are packed per run into the workspace. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/epilogue.h"
#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MRT_SGEMM_MR = 8, MRT_SGEMM_NR = 48, MRT_SGEMM_K_BLOCK = 256 };

/* Floats of a packed A (m x k) and a packed B (k x n). */
int64_t mrt_sgemm_packed_a_floats(int64_t m, int64_t k);
int64_t mrt_sgemm_packed_b_floats(int64_t k, int64_t n);

/* A 64-byte aligned buffer of n floats for packed operands kept by a kernel's prepare, plan memory (mrt_plan_alloc:
   the engine frees it with the plan, never free() it); fails naming the node when it is larger than the allocation
   limit or can't be had. */
mrt_status mrt_sgemm_alloc_packed(const mrt_op_ctx *ctx, int64_t n, float **out);

/* Pack A(i, kk) = a[i * rs + kk * cs] (a transposed operand is just other strides). */
void mrt_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *dst);
/* Pack B(kk, j) = b[kk * rs + j * cs]. */
void mrt_sgemm_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, float *dst);

/* Where B comes from when it is not packed already. */
typedef void (*mrt_sgemm_pack_b_fn)(const void *src, int64_t k0, int64_t k1, int64_t j0, int64_t j1, float *dst);

typedef struct mrt_sgemm_b {
    const float *packed;       /* packed B, or NULL */
    const float *b;            /* else B(kk, j) = b[kk * rs + j * cs] (* row_scale[kk * row_scale_stride]) */
    int64_t rs, cs;
    const float *row_scale;    /* with b: each row's scale (a Conv's fused input scale, engine/epilogue.h), or NULL */
    int64_t row_scale_stride;
    /* else a packer (a Conv's im2col, ops_cpu/conv.c): writes B[k0:k1, j0:j1] as panels of NR columns (j0 a multiple of NR, j1 - j0 padded up to
       NR with zeros) at dst[q][kk - k0][j], q counting panels from j0 */
    mrt_sgemm_pack_b_fn pack;
    const void *pack_src;
} mrt_sgemm_b;

typedef struct mrt_sgemm_out {
    float *c;
    int64_t ldc;
    bool accumulate;           /* add the products to C's value instead of starting from 0 */
    const float *bias;         /* bias[row], added after the chain, or NULL */
    const mrt_epilogue *ep;    /* applied to each finished row segment, or NULL */
    int64_t ep_channel0;       /* the epilogue's channel of row 0 (row r is channel ep_channel0 + r) */
    int64_t ep_at0;            /* flat output index of C[0, 0] (C[r, j] is at ep_at0 + r * ldc + j) */
} mrt_sgemm_out;

/* One register tile of a product whose B rows are read in place instead of packed (a convolution reading
   rows of its input, ops_cpu/conv.c): C[i, j] = s, or C[i, j] + s when accumulate, s = the sum over kk < kc of
   a[kk * MR + i] * brows[kk][boff + j], for i < mr <= MR, j < nr <= NR, as one fma chain from 0 in kk order; then
   + bias[i] when bias is given: the chain mrt_sgemm_run computes for one k block (kc <= MRT_SGEMM_K_BLOCK), so
   calls for a product's k blocks in order, accumulating after the first, give its bits. a: one
   row panel of a packed A (panel p of an m x kc matrix packed by mrt_sgemm_pack_a is at p * MR * kc). Each B row
   must have 16 ceil(nr / 16) floats readable from brows[kk] + boff. a_next: the packed A block the caller's next
   tile reads, fetched into L2 as this one goes (kc x MR floats from it must be inside one allocation), or NULL.
   Returns true when it also applied ep (as mrt_epilogue_apply_rows would, row 0 being channel ep_channel0 and
   C[0, 0] at flat output index ep_at), in registers, which it does for [BatchNormalization] -> [Add] ->
   [Relu | Clip] on the AVX-512 path; false: ep is left to the caller. */
bool mrt_sgemm_tile_rows(int64_t kc, const float *a, const float *a_next, const float *const *brows, int64_t boff,
                         float *c, int64_t ldc, bool accumulate, int mr, int nr, const float *bias, const mrt_epilogue *ep,
                         int64_t ep_channel0, int64_t ep_at);

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* Two one-vector tiles of mrt_sgemm_tile_rows in one (not accumulating, nr0, nr1 <= 16; CPUs with AVX-512 only):
   rows [0, mr) of the panel a against B rows brows0[kk] + boff0 into c0 (flat output index ep_at0), and against
   brows1[kk] + boff1 into c1 (ep_at1), with the chains, bias and epilogue of two calls; returns whether the epilogue
   was applied. A stem's output rows of 112 end in 16 columns after two full tiles: two rows' ends in one tile give
   each A value two fmas instead of one (ResNet-18's 7x7/2 stem inside the model, one thread: 1784 -> 1676 us). */
bool mrt_sgemm_tile_rows_pair(int64_t kc, const float *a, const float *const *brows0, int64_t boff0,
                              const float *const *brows1, int64_t boff1, float *c0, float *c1, int64_t ldc, int mr,
                              int nr0, int nr1, const float *bias, const mrt_epilogue *ep, int64_t ep_channel0,
                              int64_t ep_at0, int64_t ep_at1);
#endif

/* Scratch floats mrt_sgemm needs for an (m, n, k) product with the given operands unpacked: request them in
   infer (sized for ctx->n_threads threads). */
int64_t mrt_sgemm_workspace_floats(int64_t m, int64_t n, int64_t k, bool a_packed, bool b_packed, int n_threads);

/* C = A * B (see above). a_packed: A packed with mrt_sgemm_pack_a, else a_raw with strides (a_rs, a_cs), which on
   AVX-512 CPUs with a_cs = 1 the tiles read in place, and otherwise is packed into the workspace (which
   mrt_sgemm_workspace_floats sizes for that case either way). ws: mrt_sgemm_workspace_floats floats (64-byte
   aligned). Threads: ctx's pool (ctx may be NULL: one thread). */
void mrt_sgemm_run(const mrt_op_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a_packed, const float *a_raw,
               int64_t a_rs, int64_t a_cs, const mrt_sgemm_b *b, const mrt_sgemm_out *out, float *ws);


#ifdef __cplusplus
}
#endif
