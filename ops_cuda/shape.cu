// ONNX Reshape 1-25, Flatten 1-25, Squeeze 1-25, Unsqueeze 1-25, Identity 1-25 (tensors), Expand 8-13, Shape 1-25,
// Size 1-25, ConstantOfShape 9-25, Range 11-27 and EyeLike 9-22 on CUDA, as ops_cpu/shape.c. The reshapes are one
// device-to-device copy (none when the memory plan aliased the output to the input); Shape and Size are computed on
// the host from the known shape and copied up. Every whole-byte dtype; sub-byte types, strings, sequences and
// optionals stay on the CPU (supports says why). Constant is always folded at plan time and has no row.
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/movement.h"

namespace {

mrt_status cu_reshape(mrt_op_ctx *ctx) { return mrt_cu_copy_all(ctx, mrt_output(ctx, 0), mrt_input(ctx, 0)); }

// y = x broadcast to y's shape: a strided copy with stride 0 on the broadcast dims.
mrt_status cu_expand(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int r = y->rank;
    int64_t xstr[MRT_MAX_RANK], st[MRT_MAX_RANK];
    mrt_shape_strides(x->rank, x->shape, st);
    for (int i = 0; i < r; i++) {
        int j = i - (r - x->rank);
        xstr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
    }
    return mrt_cu_strided_copy(ctx, x, y->data, r, y->shape, 0, xstr);
}

// Host values to the device output (small: a shape, a count).
mrt_status upload(mrt_op_ctx *ctx, mrt_tensor *y, const void *src, size_t n)
{
    if (!y || n == 0) return MRT_STATUS_OK;
    cudaError_t e = cudaMemcpyAsync(y->data, src, n, cudaMemcpyHostToDevice, mrt_cu_stream(ctx));
    // the host buffer is on this stack frame: wait until the copy has read it
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "copy to the device: %s", cudaGetErrorString(e));
    return MRT_STATUS_OK;
}

mrt_status cu_shape(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t start, end, dims[MRT_MAX_RANK];
    mrt_shape_window(ctx, x->rank, &start, &end);
    for (int64_t i = start; i < end; i++) dims[i - start] = x->shape[i];
    return upload(ctx, mrt_output(ctx, 0), dims, (size_t)(end - start) * sizeof(int64_t));
}

mrt_status cu_size(mrt_op_ctx *ctx)
{
    int64_t n = mrt_tensor_numel(mrt_input(ctx, 0));
    return upload(ctx, mrt_output(ctx, 0), &n, sizeof n);
}

// Tensors only: an Identity of a sequence or an optional runs on the CPU (the engine refuses those before supports).
bool identity_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (!v || v->kind != MRT_VALUE_TENSOR) return snprintf(why, len, "Identity of a non-tensor"), false;
    return mrt_cu_movable(ctx, why, len);
}

mrt_status cu_identity(mrt_op_ctx *ctx) { return mrt_cu_copy_all(ctx, mrt_output(ctx, 0), mrt_input(ctx, 0)); }

// ------------------------------------------------------------------ ConstantOfShape, Range, EyeLike

template <typename T> __global__ void fill_kernel(T *y, int64_t n, T v)
{
    MRT_CU_FOR(i, n) y[i] = v;
}

mrt_status cu_constant_of_shape(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    unsigned char val[16] = {0}; // absent value: float zeros
    const mrt_attr *a = mrt_node_attr(ctx->node, "value");
    size_t es = mrt_cu_move_bytes(y->dtype);
    if (a && a->type == MRT_ATTR_TENSOR && a->t && mrt_tensor_numel(a->t) >= 1) memcpy(val, a->t->data, es);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(es, {
            elem_t v;
            memcpy(&v, val, sizeof v);
            auto *k = fill_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, n, v);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(y->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "fill kernel");
    return MRT_STATUS_OK;
}

// Range: integers in wrapping unsigned arithmetic, floats as s + i * d in double, as the CPU.
template <typename T> __global__ void range_int_kernel(T *y, int64_t n, uint64_t s, uint64_t d)
{
    MRT_CU_FOR(i, n) y[i] = (T)(int64_t)(s + (uint64_t)i * d);
}
template <typename T> __global__ void range_float_kernel(T *y, int64_t n, double s, double d)
{
    MRT_CU_FOR(i, n) mrt_cu_store(y, i, (typename mrt_cu_compute<T>::type)(s + (double)i * d));
}

mrt_status cu_range(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    mrt_cu_host_inputs h;
    MRT_TRY(h.load(ctx, 0)); // start, limit, delta: scalars
    const mrt_tensor *start = mrt_input(&h.ctx, 0), *delta = mrt_input(&h.ctx, 2);
    mrt_dtype dt = y->dtype;
    bool done = false;
    if (mrt_dtype_is_integer(dt)) {
        uint64_t s = (uint64_t)mrt_load_i64(dt, start->data, 0), d = (uint64_t)mrt_load_i64(dt, delta->data, 0);
        [&]() -> bool {
            MRT_CU_SWITCH_INT(dt, {
                auto *k = range_int_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, n, s, d);
                done = true;
            })
            return false;
        }();
    } else {
        double s = mrt_load_f64(dt, start->data, 0), d = mrt_load_f64(dt, delta->data, 0);
        [&]() -> bool {
            MRT_CU_SWITCH_FLOAT(dt, {
                auto *k = range_float_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, n, s, d);
                done = true;
            })
            return false;
        }();
    }
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(dt));
    MRT_CU_CHECK_LAUNCH(ctx, "Range kernel");
    return MRT_STATUS_OK;
}

bool range_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->outputs[0];
    mrt_dtype dt = v ? v->tensor.dtype : MRT_DTYPE_UNDEFINED;
    bool ok = mrt_dtype_is_integer(dt) ? mrt_cu_move_bytes(dt) != 0
            : dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
    if (!ok) snprintf(why, len, "Range of %s is not supported by the CUDA kernel", mrt_dtype_name(dt));
    return ok;
}

// EyeLike: ones on diagonal k, zeros elsewhere (every element written).
template <typename T> __global__ void eyelike_kernel(T *y, int64_t n, int64_t cols, int64_t k, T one)
{
    MRT_CU_FOR(e, n) {
        int64_t i = e / cols, j = e - i * cols;
        y[e] = j - i == k ? one : T();
    }
}

mrt_status cu_eyelike(mrt_op_ctx *ctx)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(y), k = mrt_attr_int(ctx, "k", 0);
    if (n == 0) return MRT_STATUS_OK;
    unsigned char one[16] = {0};
    mrt_store_i64(y->dtype, one, 0, 1);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(y->dtype), {
            elem_t v;
            memcpy(&v, one, sizeof v);
            auto *kern = eyelike_kernel<elem_t>;
            MRT_LAUNCH(kern, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, n, y->shape[1], k, v);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(y->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "EyeLike kernel");
    return MRT_STATUS_OK;
}

bool eyelike_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->outputs[0];
    mrt_dtype dt = v ? v->tensor.dtype : MRT_DTYPE_UNDEFINED;
    // the "one" is stored by the engine's mrt_store_i64: every plain integer, bool, float16/bfloat16/float/double
    bool ok = mrt_cu_move_bytes(dt) && (mrt_dtype_is_integer(dt) || dt == MRT_DTYPE_BOOL || dt == MRT_DTYPE_FLOAT ||
                                        dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16);
    if (!ok) snprintf(why, len, "EyeLike of %s is not supported by the CUDA kernel", mrt_dtype_name(dt));
    return ok;
}

bool movable(const mrt_op_ctx *ctx, char *why, size_t len) { return mrt_cu_movable(ctx, why, len); }

// Shape and Size read only the input's shape: any input dtype.
bool shape_only(const mrt_op_ctx *, char *, size_t) { return true; }

} // namespace

#define W MRT_KERNEL_WRITES_ALL
#define R(op, ver, fn) MRT_CU_ROW_S(op, ver, fn, movable, W)
extern "C" const mrt_kernel mrt_cuda_kernels_shape[] = {
    R("Reshape", 1, cu_reshape), R("Flatten", 1, cu_reshape), R("Squeeze", 1, cu_reshape),
    R("Unsqueeze", 1, cu_reshape), R("Expand", 8, cu_expand),
    MRT_CU_ROW_S("Identity", 1, cu_identity, identity_supports, W),
    MRT_CU_ROW_S("Shape", 1, cu_shape, shape_only, W), MRT_CU_ROW_S("Size", 1, cu_size, shape_only, W),
    R("ConstantOfShape", 9, cu_constant_of_shape),
    MRT_CU_ROW_S("Range", 11, cu_range, range_supports, W),
    MRT_CU_ROW_S("EyeLike", 9, cu_eyelike, eyelike_supports, W),
    {0},
};
#undef R
#undef W
