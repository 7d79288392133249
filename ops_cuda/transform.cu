// ONNX Transpose 1-25, Concat 1-13, Split 1-18, Slice 1-13, Tile 1-13, Pad 1-25 (constant/reflect/edge/wrap, negative
// pads crop), DepthToSpace 1-28 / SpaceToDepth 1-28 (DCR/CRD), Trilu 14, ReverseSequence 10-28 on CUDA, as
// ops_cpu/transform.c: every whole-byte dtype (complex included), any rank. Strings never reach the device; sub-byte
// types (int4, float4...) are refused by supports and run on the CPU.
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/movement.h"

namespace {

// ------------------------------------------------------------------ Transpose, Slice, DepthToSpace, SpaceToDepth

mrt_status cu_transpose(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t xstr[MRT_MAX_RANK];
    mrt_transpose_strides(ctx, x, xstr);
    return mrt_cu_strided_copy(ctx, x, y->data, x->rank, y->shape, 0, xstr);
}

mrt_status cu_slice(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 1)); // starts, ends, axes, steps
    mrt_slice_params p;
    bool need_data;
    MRT_TRY(mrt_slice_params_get(&h.ctx, &p, &need_data));
    if (need_data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "slice parameters have no data at run time");
    int64_t xstr[MRT_MAX_RANK], base = mrt_slice_strides(&p, x, xstr);
    return mrt_cu_strided_copy(ctx, x, y->data, x->rank, p.out, base, xstr);
}

// y viewed as 6-D, reading x viewed as 6-D `xshape6` through permutation perm.
mrt_status shuffle6(mrt_op_ctx *ctx, const int64_t *xshape6, const int *perm)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t shape[6], xstr[6];
    mrt_shuffle6_strides(xshape6, perm, shape, xstr);
    return mrt_cu_strided_copy(ctx, x, y->data, 6, shape, 0, xstr);
}

bool crd_mode(const mrt_op_ctx *ctx, int64_t since)
{
    return ctx->opset >= since && strcmp(mrt_attr_string(ctx, "mode", "DCR"), "CRD") == 0;
}

mrt_status cu_depth_to_space(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t bs = mrt_attr_int(ctx, "blocksize", 1), b = x->shape[0], c = x->shape[1] / (bs * bs);
    int64_t h = x->shape[2], w = x->shape[3];
    if (crd_mode(ctx, 11)) {
        int64_t xs[6] = {b, c, bs, bs, h, w};
        static const int perm[6] = {0, 1, 4, 2, 5, 3};
        return shuffle6(ctx, xs, perm);
    }
    int64_t xs[6] = {b, bs, bs, c, h, w};
    static const int perm[6] = {0, 3, 4, 1, 5, 2};
    return shuffle6(ctx, xs, perm);
}

mrt_status cu_space_to_depth(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t bs = mrt_attr_int(ctx, "blocksize", 1);
    int64_t xs[6] = {x->shape[0], x->shape[1], x->shape[2] / bs, bs, x->shape[3] / bs, bs};
    static const int crd[6] = {0, 1, 3, 5, 2, 4}, dcr[6] = {0, 3, 5, 1, 2, 4};
    return shuffle6(ctx, xs, crd_mode(ctx, 28) ? crd : dcr);
}

// ------------------------------------------------------------------ Concat / Split

// y[o * ystride + yoff + k] = x[o * xstride + xoff + k] for o < rows, k < cols.
template <typename T>
__global__ void copy2d_kernel(const T *x, int64_t xstride, int64_t xoff, T *y, int64_t ystride, int64_t yoff, int64_t cols,
                              int64_t n)
{
    MRT_CU_FOR(i, n) {
        int64_t o = i / cols, k = i - o * cols;
        y[o * ystride + yoff + k] = x[o * xstride + xoff + k];
    }
}

mrt_status copy2d(mrt_op_ctx *ctx, mrt_dtype dt, const void *x, int64_t xstride, int64_t xoff, void *y, int64_t ystride,
                  int64_t yoff, int64_t rows, int64_t cols)
{
    int64_t n = rows * cols;
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(dt), {
            auto *k = copy2d_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x, xstride, xoff,
                       (elem_t *)y, ystride, yoff, cols, n);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(dt));
    MRT_CU_CHECK_LAUNCH(ctx, "block copy kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_concat(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t a = mrt_attr_int(ctx, "axis", 1);
    int axis = (int)(a < 0 ? a + y->rank : a);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= y->shape[d];
    for (int d = axis + 1; d < y->rank; d++) inner *= y->shape[d];
    int64_t out_block = y->shape[axis] * inner, pos = 0;
    size_t es = mrt_cu_move_bytes(y->dtype);
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_tensor *x = mrt_input(ctx, i);
        int64_t block = x->shape[axis] * inner;
        bool there = outer == 1 && x->data == (char *)y->data + pos * (int64_t)es; // placed there by the memory plan
        if (!there) MRT_TRY(copy2d(ctx, y->dtype, x->data, block, 0, y->data, out_block, pos, outer, block));
        pos += block;
    }
    return MRT_STATUS_OK;
}

mrt_status cu_split(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 1)); // split sizes
    int64_t *sizes = (int64_t *)calloc((size_t)(ctx->n_outputs ? ctx->n_outputs : 1), sizeof *sizes);
    if (!sizes) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    int axis = 0;
    bool need_data = false;
    mrt_status st = mrt_split_sizes(&h.ctx, &axis, sizes, &need_data);
    if (!st && need_data) st = mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "split sizes have no data at run time");
    int64_t outer = 1, inner = 1, pos = 0, dim = st ? 0 : x->shape[axis];
    for (int d = 0; !st && d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; !st && d < x->rank; d++) inner *= x->shape[d];
    for (int i = 0; !st && i < ctx->n_outputs; i++) {
        int64_t block = sizes[i] * inner;
        mrt_tensor *y = mrt_output(ctx, i); // NULL when omitted: its slice is skipped
        if (y) st = copy2d(ctx, x->dtype, x->data, dim * inner, pos, y->data, block, 0, outer, block);
        pos += block;
    }
    free(sizes);
    return st;
}

// ------------------------------------------------------------------ Tile

struct tile_geom {
    int rank;
    int64_t out[MRT_MAX_RANK], xdim[MRT_MAX_RANK], xstr[MRT_MAX_RANK];
};

template <typename T> __global__ void tile_kernel(const T *x, T *y, int64_t n, tile_geom g)
{
    MRT_CU_FOR(i, n) {
        int64_t q = i, off = 0;
        for (int d = g.rank - 1; d >= 0; d--) {
            off += (q % g.out[d]) % g.xdim[d] * g.xstr[d];
            q /= g.out[d];
        }
        y[i] = x[off];
    }
}

mrt_status cu_tile(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    tile_geom g;
    memset(&g, 0, sizeof g);
    g.rank = y->rank;
    mrt_shape_strides(x->rank, x->shape, g.xstr);
    for (int d = 0; d < y->rank; d++) {
        g.out[d] = y->shape[d];
        g.xdim[d] = x->shape[d];
    }
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = tile_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, g);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Tile kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ Pad

struct pad_geom {
    int rank, mode;
    int64_t out[MRT_MAX_RANK], begin[MRT_MAX_RANK], xdim[MRT_MAX_RANK], xstr[MRT_MAX_RANK];
};

template <typename T> __global__ void pad_kernel(const T *x, T *y, int64_t n, pad_geom g, T cval)
{
    MRT_CU_FOR(i, n) {
        int64_t q = i, off = 0;
        bool constant = false;
        for (int d = g.rank - 1; d >= 0; d--) {
            int64_t c = mrt_pad_map(q % g.out[d], g.begin[d], g.xdim[d], (mrt_pad_mode)g.mode);
            q /= g.out[d];
            if (c < 0) constant = true;
            else off += c * g.xstr[d];
        }
        y[i] = constant ? cval : x[off];
    }
}

mrt_status cu_pad(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 1)); // pads, constant_value, axes
    mrt_pad_params p;
    bool need_data;
    MRT_TRY(mrt_pad_params_get(&h.ctx, &p, &need_data));
    if (need_data) return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "pads have no data at run time");
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    // the constant, as one element of the data's dtype
    unsigned char cval[16] = {0};
    const mrt_tensor *cv = ctx->opset >= 11 ? mrt_input(&h.ctx, 2) : NULL;
    size_t es = mrt_cu_move_bytes(x->dtype);
    if (cv && cv->data && mrt_tensor_numel(cv) >= 1) {
        memcpy(cval, cv->data, es);
    } else if (ctx->opset < 11) {
        mrt_pad_attr_value(ctx, x->dtype, cval);
    }
    pad_geom g;
    memset(&g, 0, sizeof g);
    g.rank = y->rank;
    g.mode = p.mode;
    mrt_shape_strides(x->rank, x->shape, g.xstr);
    for (int d = 0; d < y->rank; d++) {
        g.out[d] = y->shape[d];
        g.begin[d] = p.begin[d];
        g.xdim[d] = x->shape[d];
    }
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(es, {
            elem_t c;
            memcpy(&c, cval, sizeof c);
            auto *k = pad_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, g, c);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Pad kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ Trilu

// Every element: kept where j >= i + k (upper) or j <= i + k (lower), else zero (all bits zero in every dtype).
template <typename T> __global__ void trilu_kernel(const T *x, T *y, int64_t n, int64_t rows, int64_t cols, int64_t k, bool upper)
{
    MRT_CU_FOR(e, n) {
        int64_t j = e % cols, i = (e / cols) % rows;
        // j - i compared with k without forming i + k (k may be huge)
        bool keep = upper ? j - i >= k : j - i <= k;
        if (keep) {
            y[e] = x[e];
        } else {
            y[e] = T();
        }
    }
}

mrt_status cu_trilu(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *kt = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t k = 0, n = mrt_tensor_numel(x);
    if (kt) MRT_TRY(mrt_cu_read(ctx, &k, kt->data, sizeof k, "input 'k'"));
    bool upper = mrt_attr_int(ctx, "upper", 1) != 0;
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *kern = trilu_kernel<elem_t>;
            MRT_LAUNCH(kern, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, rows, cols, k, upper);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Trilu kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ ReverseSequence

template <typename T, typename L>
__global__ void reverse_sequence_kernel(const T *x, T *y, const L *lens, int64_t n, int64_t inner, int64_t d1, bool batch0)
{
    MRT_CU_FOR(e, n) {
        int64_t pos = e / inner, in = e - pos * inner, a = pos / d1, c = pos - a * d1;
        int64_t b = batch0 ? a : c, t = batch0 ? c : a, len = (int64_t)lens[b];
        int64_t st = t < len ? len - 1 - t : t;
        int64_t src = batch0 ? b * d1 + st : st * d1 + b;
        y[e] = x[src * inner + in];
    }
}

mrt_status cu_reverse_sequence(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *lens = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int bax = (int)mrt_attr_int(ctx, "batch_axis", 1);
    int64_t inner = 1, d0 = x->shape[0], d1 = x->shape[1], n = mrt_tensor_numel(x);
    for (int d = 2; d < x->rank; d++) inner *= x->shape[d];
    int64_t batch = bax == 0 ? d0 : d1, time = bax == 0 ? d1 : d0;
    // the lengths are checked on the host first, as the CPU fails the node naming the first bad one
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 1));
    const mrt_tensor *hl = mrt_input(&h.ctx, 1);
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = mrt_load_i64(hl->dtype, hl->data, b);
        if (len < 0 || len > time)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                               (long long)len, (long long)time);
    }
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            if (lens->dtype == MRT_DTYPE_INT32) {
                auto *k = reverse_sequence_kernel<elem_t, int32_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                           (elem_t *)y->data, (const int32_t *)lens->data, n, inner, d1, bax == 0);
            } else {
                auto *k = reverse_sequence_kernel<elem_t, int64_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                           (elem_t *)y->data, (const int64_t *)lens->data, n, inner, d1, bax == 0);
            }
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "ReverseSequence kernel");
    return MRT_STATUS_OK;
}

bool movable(const mrt_op_ctx *ctx, char *why, size_t len) { return mrt_cu_movable(ctx, why, len); }

} // namespace

// Every row writes every output element (Trilu writes its zeros itself).
#define W MRT_KERNEL_WRITES_ALL
#define R(op, ver, fn) MRT_CU_ROW_S(op, ver, fn, movable, W)
extern "C" const mrt_kernel mrt_cuda_kernels_transform[] = {
    R("Transpose", 1, cu_transpose), R("Concat", 1, cu_concat), R("Split", 1, cu_split), R("Slice", 1, cu_slice),
    R("Tile", 1, cu_tile), R("Pad", 1, cu_pad), R("DepthToSpace", 1, cu_depth_to_space),
    R("SpaceToDepth", 1, cu_space_to_depth), R("Trilu", 14, cu_trilu), R("ReverseSequence", 10, cu_reverse_sequence),
    {0},
};
#undef R
#undef W
