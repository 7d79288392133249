/* CPU kernels of Transpose, Concat, Split, Slice, Tile, Pad (constant/reflect/edge/wrap, cropping), DepthToSpace,
 * SpaceToDepth (DCR/CRD), Trilu, ReverseSequence: every dtype (strings duplicated, sub-byte types bit by bit). */
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/movement.h"
#include "engine/registry.h"
#include "ops_cpu/movement.h"
#include "ops_cpu/simd.h"

/* ------------------------------------------------------------------ strided copy */

/* y[o + k] = x[off + k * str] for k < n. */
static void copy_row(mrt_mover *m, void *y, int64_t o, const void *x, int64_t off, int64_t n, int64_t str)
{
    if (str == 1) {
        mrt_mover_copy(m, y, o, x, off, n);
        return;
    }
    if (str == 0) {
        mrt_mover_fill(m, y, o, x, off, n);
        return;
    }
    char *d = (char *)y;
    const char *s = (const char *)x;
    switch (m->esize) {
#define ROW(SZ)                                                                                                 \
    case SZ:                                                                                                    \
        for (int64_t k = 0; k < n; k++) memcpy(d + (o + k) * SZ, s + (off + k * str) * SZ, SZ);                 \
        return;
        ROW(1) ROW(2) ROW(4) ROW(8) ROW(16)
#undef ROW
    default:
        for (int64_t k = 0; k < n; k++) mrt_mover_copy(m, y, o + k, x, off + k * str, 1);
        return;
    }
}

typedef struct strided_job {
    mrt_mover m;
    const void *x;
    void *y;
    int r;
    int64_t sh[MRT_MAX_RANK], st[MRT_MAX_RANK]; /* merged dims; the last is the row */
    int64_t base;
} strided_job;

/* Rows [r0, r1) of a strided copy: each row's source offset follows from its index alone. */
static void strided_rows(void *arg, int64_t r0, int64_t r1)
{
    strided_job *j = arg;
    int r = j->r;
    int64_t inner = j->sh[r - 1], istr = j->st[r - 1], idx[MRT_MAX_RANK] = {0}, off = j->base;
    int64_t q = r0;
    for (int d = r - 2; d >= 0; d--) {
        idx[d] = q % j->sh[d];
        q /= j->sh[d];
        off += idx[d] * j->st[d];
    }
    mrt_mover m = j->m; /* per range: string copies record their failure here */
    for (int64_t row = r0; row < r1; row++) {
        copy_row(&m, j->y, row * inner, j->x, off, inner, istr);
        for (int d = r - 2; d >= 0; d--) {
            off += j->st[d];
            if (++idx[d] < j->sh[d]) break;
            off -= j->st[d] * idx[d];
            idx[d] = 0;
        }
    }
    if (m.oom) j->m.oom = true;
}

#ifdef MRT_HAVE_AVX512_INTRINSICS
/* A copy whose last two (merged) dims are a 2-D transpose of 4-byte elements: y[.., j, i] = x[off + j + i L]
   (NCHW <-> NHWC, the permutes around ConvNeXt's and Swin's channel-last blocks). Copied element by element, every
   element of an output row came from another cache line of x, at three cycles an element; here 16 x 16 blocks are
   transposed in registers (shuffles move bits: any 4-byte type, NaN payloads included). Task t: the 16 output rows
   from 16 (t % jb) of the outer index t / jb. */
typedef struct tr_job {
    const float *x;
    float *y;
    int r;                 /* merged dims; dims r - 2 (j, x stride 1) and r - 1 (i, x stride L) are transposed */
    int64_t sh[MRT_MAX_RANK], st[MRT_MAX_RANK];
    int64_t jb;            /* blocks of 16 along j */
} tr_job;

__attribute__((target("avx512f"))) static void transpose_blocks(void *arg, int64_t t0, int64_t t1)
{
    const tr_job *j = arg;
    int r = j->r;
    int64_t B = j->sh[r - 2], A = j->sh[r - 1], L = j->st[r - 1];
    for (int64_t t = t0; t < t1; t++) {
        int64_t outer = t / j->jb, j0 = 16 * (t % j->jb), off = 0, q = outer;
        for (int d = r - 3; d >= 0; d--) {
            off += q % j->sh[d] * j->st[d];
            q /= j->sh[d];
        }
        int64_t nj = B - j0 < 16 ? B - j0 : 16;
        __mmask16 jm = mrt_mask16_first(nj);
        const float *xs = j->x + off + j0;
        float *yd = j->y + (outer * B + j0) * A;
        for (int64_t i0 = 0; i0 < A; i0 += 16) {
            int64_t ni = A - i0 < 16 ? A - i0 : 16;
            __m512 v[16];
            for (int ii = 0; ii < 16; ii++) v[ii] = ii < ni ? _mm512_maskz_loadu_ps(jm, xs + (i0 + ii) * L) : _mm512_setzero_ps();
            mrt_transpose16(v);
            __mmask16 im = mrt_mask16_first(ni);
            for (int c = 0; c < nj; c++) _mm512_mask_storeu_ps(yd + c * A + i0, im, v[mrt_transpose16_perm[c]]);
        }
    }
}
#endif

mrt_status mrt_cpu_strided_copy(const mrt_op_ctx *ctx, const mrt_tensor *x, mrt_tensor *y, int rank,
                                const int64_t *shape, int64_t base, const int64_t *xstr)
{
    int64_t sh[MRT_MAX_RANK], st[MRT_MAX_RANK], n = 1;
    int r = 0;
    for (int d = 0; d < rank; d++) n *= shape[d];
    if (n == 0) return MRT_STATUS_OK;
    /* drop unit dims and merge dims that are contiguous in x: fewer, longer rows */
    for (int d = 0; d < rank; d++) {
        if (shape[d] == 1) continue;
        if (r > 0 && st[r - 1] == xstr[d] * shape[d]) {
            sh[r - 1] *= shape[d];
            st[r - 1] = xstr[d];
        } else {
            sh[r] = shape[d];
            st[r] = xstr[d];
            r++;
        }
    }
    if (r == 0) {
        sh[0] = 1;
        st[0] = 1;
        r = 1;
    }
#ifdef MRT_HAVE_AVX512_INTRINSICS
    if (r >= 2 && st[r - 2] == 1 && st[r - 1] > 1 && sh[r - 1] >= 4 && sh[r - 2] >= 4 && mrt_dtype_bits(x->dtype) == 32 &&
        mrt_cpu_has_avx512f()) {
        tr_job tj = {(const float *)x->data + base, y->data, r, {0}, {0}, (sh[r - 2] + 15) / 16};
        memcpy(tj.sh, sh, sizeof sh);
        memcpy(tj.st, st, sizeof st);
        int64_t tasks = n / (sh[r - 2] * sh[r - 1]) * tj.jb, per = 16 * sh[r - 1];
        mrt_parallel_for(ctx, tasks, per >= 4096 ? 1 : 4096 / per, transpose_blocks, &tj);
        return MRT_STATUS_OK;
    }
#endif
    strided_job j = {mrt_mover_of(x->dtype), x->data, y->data, r, {0}, {0}, base};
    memcpy(j.sh, sh, sizeof sh);
    memcpy(j.st, st, sizeof st);
    int64_t rows = n / sh[r - 1];
    /* byte-sized elements split over the threads, in runs of at least 16 KiB; strings and sub-byte types (whose
       copies can fail or share bytes) stay on one thread */
    if (j.m.esize && !j.m.is_string) {
        int64_t grain = (16384 / (int64_t)j.m.esize + sh[r - 1] - 1) / sh[r - 1];
        mrt_parallel_for(ctx, rows, grain, strided_rows, &j);
        return MRT_STATUS_OK;
    }
    strided_rows(&j, 0, rows);
    return mrt_mover_status(&j.m, ctx);
}

/* ------------------------------------------------------------------ Transpose */

static mrt_status mrt_cpu_transpose(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t xstr[MRT_MAX_RANK];
    mrt_transpose_strides(ctx, x, xstr);
    return mrt_cpu_strided_copy(ctx, x, y, x->rank, y->shape, 0, xstr);
}

/* ------------------------------------------------------------------ Concat / Split */

static int concat_axis(const mrt_op_ctx *ctx, int rank, const char *attr, int64_t def)
{
    int64_t a = mrt_attr_int(ctx, attr, def);
    return (int)(a < 0 ? a + rank : a);
}

static mrt_status mrt_cpu_concat(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int axis = concat_axis(ctx, y->rank, "axis", 1);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= y->shape[d];
    for (int d = axis + 1; d < y->rank; d++) inner *= y->shape[d];
    int64_t out_block = y->shape[axis] * inner;
    mrt_mover m = mrt_mover_of(y->dtype);
    int64_t pos = 0;
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *x = mrt_input(ctx, i);
        int64_t block = x->shape[axis] * inner;
        /* an input the memory plan put at its place in the output (engine/session.c) is there already */
        bool there = outer == 1 && m.esize && !m.is_string && x->data == (char *)y->data + pos * (int64_t)m.esize;
        for (int64_t o = 0; block && !there && o < outer; o++)
            mrt_mover_copy(&m, y->data, o * out_block + pos, x->data, o * block, block);
        pos += block;
    }
    return mrt_mover_status(&m, ctx);
}

/* The outputs' sizes along the axis, one int64 each */
static size_t split_sizes_bytes(const mrt_op_ctx *ctx) { return (size_t)ctx->n_outputs * sizeof(int64_t); }

static mrt_status mrt_cpu_split_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, split_sizes_bytes(ctx));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_split(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t *sizes = mrt_workspace(ctx, split_sizes_bytes(ctx));
    if (!sizes) return MRT_STATUS_OUT_OF_MEMORY;
    memset(sizes, 0, (size_t)ctx->n_outputs * sizeof *sizes);
    int axis;
    bool need_data;
    MRT_TRY(mrt_split_sizes(ctx, &axis, sizes, &need_data));
    if (need_data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "split sizes have no data at run time");
    int64_t outer = 1, inner = 1, pos = 0, dim = x->shape[axis];
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    mrt_mover m = mrt_mover_of(x->dtype);
    for (int i = 0; i < ctx->n_outputs; i++) {
        int64_t block = sizes[i] * inner;
        mrt_tensor *y = mrt_output(ctx, i); /* NULL when omitted: its slice is skipped */
        for (int64_t o = 0; y && block && o < outer; o++)
            mrt_mover_copy(&m, y->data, o * block, x->data, o * dim * inner + pos, block);
        pos += block;
    }
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ Slice */

static mrt_status mrt_cpu_slice(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_slice_params p;
    bool need_data;
    MRT_TRY(mrt_slice_params_get(ctx, &p, &need_data));
    if (need_data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "slice parameters have no data at run time");
    int64_t xstr[MRT_MAX_RANK], base = mrt_slice_strides(&p, x, xstr);
    return mrt_cpu_strided_copy(ctx, x, y, x->rank, p.out, base, xstr);
}

/* ------------------------------------------------------------------ Tile */

static mrt_status mrt_cpu_tile(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int r = y->rank;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    mrt_mover m = mrt_mover_of(x->dtype);
    if (r == 0) {
        mrt_mover_copy(&m, y->data, 0, x->data, 0, 1);
        return mrt_mover_status(&m, ctx);
    }
    int64_t xs[MRT_MAX_RANK], idx[MRT_MAX_RANK] = {0}, xc[MRT_MAX_RANK] = {0}, xoff = 0;
    mrt_shape_strides(r, x->shape, xs);
    int64_t inner = y->shape[r - 1], xin = x->shape[r - 1];
    for (int64_t o = 0; o < n; o += inner) {
        for (int64_t k = 0; k < inner; k += xin) mrt_mover_copy(&m, y->data, o + k, x->data, xoff, xin);
        /* odometer over the outer output dims; the input coordinate xc is the output one modulo the input dim */
        for (int d = r - 2; d >= 0; d--) {
            xoff += xs[d];
            if (++xc[d] == x->shape[d]) {
                xc[d] = 0;
                xoff -= x->shape[d] * xs[d];
            }
            if (++idx[d] < y->shape[d]) break;
            idx[d] = 0;
        }
    }
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ Pad */

static mrt_status mrt_cpu_pad(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_pad_params p;
    bool need_data;
    MRT_TRY(mrt_pad_params_get(ctx, &p, &need_data));
    if (need_data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "pads have no data at run time");
    int r = y->rank;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    /* the constant, as one element of the data's dtype */
    mrt_tensor cval;
    MRT_TRY(mrt_tensor_alloc(&cval, x->dtype, 0, NULL));
    const mrt_tensor *cv = ctx->opset >= 11 ? mrt_input(ctx, 2) : NULL;
    mrt_mover m = mrt_mover_of(x->dtype);
    if (cv && cv->data) {
        mrt_mover_copy(&m, cval.data, 0, cv->data, 0, 1);
    } else if (x->dtype == MRT_DTYPE_STRING) {
        mrt_mover_put_string(&m, (char **)cval.data, "");
    } else if (ctx->opset < 11) {
        mrt_pad_attr_value(ctx, x->dtype, cval.data);
    }
    if (r == 0) {
        mrt_mover_copy(&m, y->data, 0, x->data, 0, 1);
    } else {
        int64_t xs[MRT_MAX_RANK], idx[MRT_MAX_RANK] = {0};
        mrt_shape_strides(r, x->shape, xs);
        int64_t inner = y->shape[r - 1], xin = x->shape[r - 1], b = p.begin[r - 1];
        for (int64_t o = 0; o < n; o += inner) {
            int64_t xoff = 0;
            bool constant_row = false;
            for (int d = 0; d < r - 1; d++) {
                int64_t i = mrt_pad_map(idx[d], p.begin[d], x->shape[d], p.mode);
                if (i < 0) constant_row = true;
                else xoff += i * xs[d];
            }
            if (constant_row) {
                mrt_mover_fill(&m, y->data, o, cval.data, 0, inner);
            } else {
                /* the part inside the input is one run; the pads map element by element */
                int64_t lo = b > 0 ? b : 0, hi = b + xin < inner ? b + xin : inner;
                for (int64_t k = 0; k < inner; k++) {
                    if (k == lo && hi > lo) {
                        mrt_mover_copy(&m, y->data, o + k, x->data, xoff + k - b, hi - lo);
                        k = hi - 1;
                        continue;
                    }
                    int64_t i = mrt_pad_map(k, b, xin, p.mode);
                    if (i < 0) mrt_mover_fill(&m, y->data, o + k, cval.data, 0, 1);
                    else mrt_mover_copy(&m, y->data, o + k, x->data, xoff + i, 1);
                }
            }
            for (int d = r - 2; d >= 0; d--) {
                if (++idx[d] < y->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
    mrt_tensor_release(&cval);
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ DepthToSpace / SpaceToDepth */

static bool crd_mode(const mrt_op_ctx *ctx, int64_t since)
{
    return ctx->opset >= since && strcmp(mrt_attr_string(ctx, "mode", "DCR"), "CRD") == 0;
}

/* y viewed as 6-D `shape6`, reading x viewed as 6-D `xshape6` through permutation perm. */
static mrt_status shuffle6(mrt_op_ctx *ctx, const int64_t *xshape6, const int *perm)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t shape[6], xstr[6];
    mrt_shuffle6_strides(xshape6, perm, shape, xstr);
    return mrt_cpu_strided_copy(ctx, x, y, 6, shape, 0, xstr);
}

static mrt_status mrt_cpu_depth_to_space(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t bs = mrt_attr_int(ctx, "blocksize", 1), b = x->shape[0], c = x->shape[1] / (bs * bs);
    int64_t h = x->shape[2], w = x->shape[3];
    if (crd_mode(ctx, 11)) {
        int64_t xs[6] = {b, c, bs, bs, h, w};
        return shuffle6(ctx, xs, (const int[6]){0, 1, 4, 2, 5, 3});
    }
    int64_t xs[6] = {b, bs, bs, c, h, w};
    return shuffle6(ctx, xs, (const int[6]){0, 3, 4, 1, 5, 2});
}

static mrt_status mrt_cpu_space_to_depth(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t bs = mrt_attr_int(ctx, "blocksize", 1);
    int64_t xs[6] = {x->shape[0], x->shape[1], x->shape[2] / bs, bs, x->shape[3] / bs, bs};
    if (crd_mode(ctx, 28)) return shuffle6(ctx, xs, (const int[6]){0, 1, 3, 5, 2, 4});
    return shuffle6(ctx, xs, (const int[6]){0, 3, 5, 1, 2, 4});
}

/* ------------------------------------------------------------------ Trilu */

static mrt_status mrt_cpu_trilu(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *kt = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t k = kt ? *(const int64_t *)kt->data : 0;
    bool upper = mrt_attr_int(ctx, "upper", 1) != 0;
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1], mats = 1;
    for (int d = 0; d < x->rank - 2; d++) mats *= x->shape[d];
    mrt_mover m = mrt_mover_of(x->dtype);
    for (int64_t b = 0; b < mats; b++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t row = (b * rows + i) * cols;
            /* kept columns: j >= i + k (upper) or j <= i + k (lower), as one run; k may be huge */
            int64_t lo = 0, hi = cols;
            if (upper)
                lo = k >= cols ? cols : (i + k < 0 ? 0 : i + k > cols ? cols : i + k);
            else
                hi = k >= cols ? cols : (i + k + 1 < 0 ? 0 : i + k + 1 > cols ? cols : i + k + 1);
            if (hi > lo) mrt_mover_copy(&m, y->data, row + lo, x->data, row + lo, hi - lo);
            if (m.is_string) {
                static const char *const empty[1] = {""};
                mrt_mover_fill(&m, y->data, row, empty, 0, lo);
                mrt_mover_fill(&m, y->data, row + (hi > lo ? hi : lo), empty, 0, cols - (hi > lo ? hi : lo));
            }
        }
    return mrt_mover_status(&m, ctx);
}

/* ------------------------------------------------------------------ ReverseSequence */

static mrt_status mrt_cpu_reverse_sequence(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *lens = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int bax = (int)mrt_attr_int(ctx, "batch_axis", 1);
    int64_t inner = 1, d0 = x->shape[0], d1 = x->shape[1];
    for (int d = 2; d < x->rank; d++) inner *= x->shape[d];
    int64_t batch = bax == 0 ? d0 : d1, time = bax == 0 ? d1 : d0;
    mrt_mover m = mrt_mover_of(x->dtype);
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = mrt_load_i64(lens->dtype, lens->data, b);
        if (len < 0 || len > time)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                               (long long)b, (long long)len, (long long)time);
        for (int64_t t = 0; t < time; t++) {
            int64_t src_t = t < len ? len - 1 - t : t;
            int64_t dst = bax == 0 ? b * d1 + t : t * d1 + b, src = bax == 0 ? b * d1 + src_t : src_t * d1 + b;
            mrt_mover_copy(&m, y->data, dst * inner, x->data, src * inner, inner);
        }
    }
    return mrt_mover_status(&m, ctx);
}

const mrt_kernel mrt_cpu_kernels_transform[] = {
/* all but Trilu write every output element (Trilu leaves the zeroed part to the engine's zero fill) */
#define K(op, v, fn) {"", op, v, fn, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL}
#define KSPLIT(v) {"", "Split", v, mrt_cpu_split, NULL, NULL, NULL, MRT_KERNEL_WRITES_ALL, mrt_cpu_split_workspace}
    K("Transpose", 1, mrt_cpu_transpose), K("Transpose", 13, mrt_cpu_transpose),
    K("Transpose", 21, mrt_cpu_transpose), K("Transpose", 23, mrt_cpu_transpose),
    K("Transpose", 24, mrt_cpu_transpose), K("Transpose", 25, mrt_cpu_transpose),
    K("Concat", 1, mrt_cpu_concat), K("Concat", 4, mrt_cpu_concat), K("Concat", 11, mrt_cpu_concat),
    K("Concat", 13, mrt_cpu_concat),
    KSPLIT(1), KSPLIT(2), KSPLIT(11), KSPLIT(13), KSPLIT(18),
    K("Slice", 1, mrt_cpu_slice), K("Slice", 10, mrt_cpu_slice), K("Slice", 11, mrt_cpu_slice),
    K("Slice", 13, mrt_cpu_slice),
    K("Tile", 1, mrt_cpu_tile), K("Tile", 6, mrt_cpu_tile), K("Tile", 13, mrt_cpu_tile),
    K("Pad", 1, mrt_cpu_pad), K("Pad", 2, mrt_cpu_pad), K("Pad", 11, mrt_cpu_pad), K("Pad", 13, mrt_cpu_pad),
    K("Pad", 18, mrt_cpu_pad), K("Pad", 19, mrt_cpu_pad), K("Pad", 21, mrt_cpu_pad), K("Pad", 23, mrt_cpu_pad),
    K("Pad", 24, mrt_cpu_pad), K("Pad", 25, mrt_cpu_pad),
    K("DepthToSpace", 1, mrt_cpu_depth_to_space), K("DepthToSpace", 11, mrt_cpu_depth_to_space),
    K("DepthToSpace", 13, mrt_cpu_depth_to_space), K("DepthToSpace", 28, mrt_cpu_depth_to_space),
    K("SpaceToDepth", 1, mrt_cpu_space_to_depth), K("SpaceToDepth", 13, mrt_cpu_space_to_depth),
    K("SpaceToDepth", 28, mrt_cpu_space_to_depth),
    {"", "Trilu", 14, mrt_cpu_trilu, NULL},
    K("ReverseSequence", 10, mrt_cpu_reverse_sequence), K("ReverseSequence", 28, mrt_cpu_reverse_sequence),
#undef K
#undef KSPLIT
    {0},
};
