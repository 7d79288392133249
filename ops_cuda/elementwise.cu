// ONNX element-wise ops on CUDA: the unary math and activations, Clip, the binary arithmetic, comparisons and logic
// with numpy broadcasting, variadic Max/Min/Sum/Mean, and Where (any dtype of 1 to 8 bytes). Every numeric dtype the
// CPU kernels take, any rank; float16/bfloat16 compute in float. Integer division and modulo by zero give 0, as on the CPU (ops_cpu/elementwise_*.c).
#include <cmath>
#include <cfloat>

#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"

namespace {

using namespace std; // float overloads of the math functions on the host compiler too (nvcc has them either way)

// ------------------------------------------------------------------ unary

enum unary_op {
    U_ABS, U_NEG, U_SQRT, U_EXP, U_LOG, U_RECIP, U_FLOOR, U_CEIL, U_ROUND, U_SIGN, U_ERF, U_SIN, U_COS, U_TAN,
    U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH, U_RELU, U_SIGMOID, U_TANH, U_LEAKY, U_ELU,
    U_SELU, U_CELU, U_THRELU, U_HSIG, U_HSWISH, U_SOFTPLUS, U_SOFTSIGN, U_GELU, U_GELU_TANH, U_MISH, U_SWISH, U_CLIP,
};

struct unary_params {
    double alpha, beta, gamma, lo, hi;
};

template <typename C> __device__ __forceinline__ C sigmoid_of(C x)
{
    C e = exp(-fabs(x)), s = (C)1 / ((C)1 + e);
    return x >= 0 ? s : e * s;
}

template <typename C> __device__ __forceinline__ C softplus_of(C x) { return (x > 0 ? x : (C)0) + log1p(exp(-fabs(x))); }

// One formula per op, in the compute type C (float or double). NaN passes through the clamps and Relu/Sign.
template <typename C> __device__ __forceinline__ C unary_float(int op, C x, const unary_params &p)
{
    const C al = (C)p.alpha, be = (C)p.beta, ga = (C)p.gamma;
    switch (op) {
    case U_ABS: return fabs(x);
    case U_NEG: return -x;
    case U_SQRT: return sqrt(x);
    case U_EXP: return exp(x);
    case U_LOG: return log(x);
    case U_RECIP: return (C)1 / x;
    case U_FLOOR: return floor(x);
    case U_CEIL: return ceil(x);
    case U_ROUND: return rint(x); // half to even
    case U_SIGN: return x > 0 ? (C)1 : x < 0 ? (C)-1 : x;
    case U_ERF: return erf(x);
    case U_SIN: return sin(x);
    case U_COS: return cos(x);
    case U_TAN: return tan(x);
    case U_ASIN: return asin(x);
    case U_ACOS: return acos(x);
    case U_ATAN: return atan(x);
    case U_SINH: return sinh(x);
    case U_COSH: return cosh(x);
    case U_ASINH: return asinh(x);
    case U_ACOSH: return acosh(x);
    case U_ATANH: return atanh(x);
    case U_RELU: return x < 0 ? (C)0 : x;
    case U_SIGMOID: return sigmoid_of(x);
    case U_TANH: return tanh(x);
    case U_LEAKY: return x < 0 ? al * x : x;
    case U_ELU: return x < 0 ? al * expm1(x) : x;
    case U_SELU: return x > 0 ? ga * x : ga * al * expm1(x);
    case U_CELU: return x >= 0 ? x : al * expm1(x / al);
    case U_THRELU: return x > al ? x : (C)0;
    case U_HSIG: {
        C v = al * x + be;
        return v < 0 ? (C)0 : v > 1 ? (C)1 : v;
    }
    case U_HSWISH: {
        C v = x * ((C)1 / (C)6) + (C)0.5;
        return x * (v < 0 ? (C)0 : v > 1 ? (C)1 : v);
    }
    case U_SOFTPLUS: return softplus_of(x);
    case U_SOFTSIGN: return x / ((C)1 + fabs(x));
    case U_GELU: return (C)0.5 * x * erfc(-x * (C)0.70710678118654752440);
    case U_GELU_TANH: return x * sigmoid_of((C)2 * (C)0.79788456080286535588 * (x + (C)0.044715 * x * x * x));
    case U_MISH: return x * tanh(softplus_of(x));
    case U_SWISH: return x * sigmoid_of(al * x);
    case U_CLIP: {
        C lo = (C)p.lo, hi = (C)p.hi, v = x < lo ? lo : x; // min(max(x, lo), hi): hi wins when lo > hi
        return v > hi ? hi : v;
    }
    }
    return x;
}

template <typename T> __device__ __forceinline__ T unary_int(int op, T x, const unary_params &p)
{
    switch (op) {
    case U_ABS: return x < 0 ? (T)(0 - x) : x;
    case U_NEG: return (T)(0 - x);
    case U_SIGN: return (T)((x > 0) - (x < 0));
    case U_RELU: return x < 0 ? (T)0 : x;
    case U_CLIP: {
        T v = (double)x < p.lo ? (T)p.lo : x;
        return (double)v > p.hi ? (T)p.hi : v;
    }
    }
    return x;
}

template <typename T> struct is_int_type { static const bool value = false; };
#define INT_TYPE(T) template <> struct is_int_type<T> { static const bool value = true; };
INT_TYPE(int8_t) INT_TYPE(int16_t) INT_TYPE(int32_t) INT_TYPE(int64_t)
INT_TYPE(uint8_t) INT_TYPE(uint16_t) INT_TYPE(uint32_t) INT_TYPE(uint64_t)
#undef INT_TYPE

template <typename T, bool INT> struct unary_apply;
template <typename T> struct unary_apply<T, false> {
    __device__ static void at(const T *x, T *y, int64_t i, int op, const unary_params &p)
    {
        mrt_cu_store(y, i, unary_float(op, mrt_cu_load(x, i), p));
    }
};
template <typename T> struct unary_apply<T, true> {
    __device__ static void at(const T *x, T *y, int64_t i, int op, const unary_params &p) { y[i] = unary_int(op, x[i], p); }
};

template <typename T> __global__ void unary_kernel(const T *x, T *y, int64_t n, int op, unary_params p)
{
    MRT_CU_FOR(i, n) unary_apply<T, is_int_type<T>::value>::at(x, y, i, op, p);
}

// Which ops take integers (the CPU tables' coverage): the rest are float-only.
bool int_ok(int op, mrt_dtype dt)
{
    bool is_unsigned = dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_UINT16 || dt == MRT_DTYPE_UINT32 || dt == MRT_DTYPE_UINT64;
    switch (op) {
    case U_ABS: case U_SIGN: case U_CLIP: return true;
    case U_NEG: case U_RELU: return !is_unsigned;
    default: return false;
    }
}

mrt_status run_unary(mrt_op_ctx *ctx, int op, const unary_params &p)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    bool is_float = x->dtype == MRT_DTYPE_FLOAT || x->dtype == MRT_DTYPE_DOUBLE || x->dtype == MRT_DTYPE_FLOAT16 ||
                    x->dtype == MRT_DTYPE_BFLOAT16;
    if (!is_float && !int_ok(op, x->dtype))
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(x->dtype, {
            auto *k = unary_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, op, p);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "element-wise kernel");
    return MRT_STATUS_OK;
}

bool unary_supports_dtype(const mrt_op_ctx *ctx, int op, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (!v || v->kind != MRT_VALUE_TENSOR) return snprintf(why, len, "input 0 is not a tensor"), false;
    mrt_dtype dt = v->tensor.dtype;
    bool is_float = dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
    bool ok = is_float || (int_ok(op, dt) && dt != MRT_DTYPE_BOOL && dt != MRT_DTYPE_STRING && mrt_dtype_bits(dt) >= 8 &&
                           dt != MRT_DTYPE_COMPLEX64 && dt != MRT_DTYPE_COMPLEX128 && dt < MRT_DTYPE_BFLOAT16);
    if (!ok) snprintf(why, len, "dtype %s is not supported by the CUDA kernel", mrt_dtype_name(dt));
    return ok;
}

#define UNARY(name, OP)                                                                                           \
    mrt_status cu_##name(mrt_op_ctx *ctx) { return run_unary(ctx, OP, unary_params{}); }                          \
    bool cu_##name##_supports(const mrt_op_ctx *ctx, char *why, size_t len) { return unary_supports_dtype(ctx, OP, why, len); }
UNARY(abs, U_ABS)
UNARY(neg, U_NEG)
UNARY(sqrt, U_SQRT)
UNARY(exp, U_EXP)
UNARY(log, U_LOG)
UNARY(recip, U_RECIP)
UNARY(floor, U_FLOOR)
UNARY(ceil, U_CEIL)
UNARY(round, U_ROUND)
UNARY(sign, U_SIGN)
UNARY(erf, U_ERF)
UNARY(sin, U_SIN)
UNARY(cos, U_COS)
UNARY(tan, U_TAN)
UNARY(asin, U_ASIN)
UNARY(acos, U_ACOS)
UNARY(atan, U_ATAN)
UNARY(sinh, U_SINH)
UNARY(cosh, U_COSH)
UNARY(asinh, U_ASINH)
UNARY(acosh, U_ACOSH)
UNARY(atanh, U_ATANH)
UNARY(relu, U_RELU)
UNARY(sigmoid, U_SIGMOID)
UNARY(tanh, U_TANH)
UNARY(hswish, U_HSWISH)
UNARY(softplus, U_SOFTPLUS)
UNARY(softsign, U_SOFTSIGN)
UNARY(mish, U_MISH)
#undef UNARY

#define UNARY_ATTR(name, OP, ...)                                                                                 \
    mrt_status cu_##name(mrt_op_ctx *ctx)                                                                         \
    {                                                                                                             \
        unary_params p{};                                                                                         \
        __VA_ARGS__;                                                                                              \
        return run_unary(ctx, OP, p);                                                                             \
    }                                                                                                             \
    bool cu_##name##_supports(const mrt_op_ctx *ctx, char *why, size_t len) { return unary_supports_dtype(ctx, OP, why, len); }
UNARY_ATTR(leaky, U_LEAKY, p.alpha = mrt_attr_float(ctx, "alpha", 0.01f))
UNARY_ATTR(elu, U_ELU, p.alpha = mrt_attr_float(ctx, "alpha", 1.0f))
UNARY_ATTR(selu, U_SELU, p.alpha = mrt_attr_float(ctx, "alpha", 1.67326319217681884765625f);
           p.gamma = mrt_attr_float(ctx, "gamma", 1.05070102214813232421875f))
UNARY_ATTR(celu, U_CELU, p.alpha = mrt_attr_float(ctx, "alpha", 1.0f))
UNARY_ATTR(threlu, U_THRELU, p.alpha = mrt_attr_float(ctx, "alpha", 1.0f))
UNARY_ATTR(hsig, U_HSIG, p.alpha = mrt_attr_float(ctx, "alpha", 0.2f); p.beta = mrt_attr_float(ctx, "beta", 0.5f))
UNARY_ATTR(swish, U_SWISH, p.alpha = mrt_attr_float(ctx, "alpha", 1.0f))
#undef UNARY_ATTR

mrt_status cu_gelu(mrt_op_ctx *ctx)
{
    const char *approx = mrt_attr_string(ctx, "approximate", "none");
    return run_unary(ctx, strcmp(approx, "tanh") == 0 ? U_GELU_TANH : U_GELU, unary_params{});
}
bool cu_gelu_supports(const mrt_op_ctx *ctx, char *why, size_t len) { return unary_supports_dtype(ctx, U_GELU, why, len); }

// Clip: bounds from attributes (opset < 11) or from optional scalar inputs, which live on the device: read them back.
mrt_status read_scalar(mrt_op_ctx *ctx, const mrt_tensor *t, double *out)
{
    unsigned char buf[8];
    size_t nb = (size_t)mrt_dtype_bits(t->dtype) / 8;
    if (mrt_tensor_numel(t) < 1 || nb == 0 || nb > 8) return MRT_STATUS_OK; // an empty bound is no bound
    cudaError_t e = cudaMemcpyAsync(buf, t->data, nb, cudaMemcpyDeviceToHost, mrt_cu_stream(ctx));
    if (e == cudaSuccess) e = cudaStreamSynchronize(mrt_cu_stream(ctx));
    if (e != cudaSuccess) return mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "reading a bound: %s", cudaGetErrorString(e));
    *out = mrt_load_f64(t->dtype, buf, 0);
    return MRT_STATUS_OK;
}

mrt_status cu_clip(mrt_op_ctx *ctx)
{
    unary_params p{};
    const mrt_tensor *x = mrt_input(ctx, 0);
    bool is_float = x->dtype == MRT_DTYPE_FLOAT || x->dtype == MRT_DTYPE_DOUBLE || x->dtype == MRT_DTYPE_FLOAT16 ||
                    x->dtype == MRT_DTYPE_BFLOAT16;
    p.lo = is_float ? -INFINITY : -1e300;
    p.hi = is_float ? INFINITY : 1e300;
    if (ctx->opset < 11) {
        p.lo = mrt_attr_float(ctx, "min", -FLT_MAX);
        p.hi = mrt_attr_float(ctx, "max", FLT_MAX);
    } else {
        if (mrt_input(ctx, 1)) MRT_TRY(read_scalar(ctx, mrt_input(ctx, 1), &p.lo));
        if (mrt_input(ctx, 2)) MRT_TRY(read_scalar(ctx, mrt_input(ctx, 2), &p.hi));
    }
    return run_unary(ctx, U_CLIP, p);
}
bool cu_clip_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    // 64-bit integers beyond 2^53 would round through the double bounds
    const mrt_value *v = ctx->inputs[0];
    if (v && (v->tensor.dtype == MRT_DTYPE_INT64 || v->tensor.dtype == MRT_DTYPE_UINT64))
        return snprintf(why, len, "64-bit integer Clip is not supported by the CUDA kernel"), false;
    return unary_supports_dtype(ctx, U_CLIP, why, len);
}

// ------------------------------------------------------------------ binary (broadcast)

enum binary_op { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_PRELU };

template <typename C> __device__ __forceinline__ C binary_float(int op, C a, C b)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_MAX: return a != a || b != b ? (C)NAN : a > b ? a : b; // NaN propagates like numpy
    case B_MIN: return a != a || b != b ? (C)NAN : a < b ? a : b;
    case B_PRELU: return a < 0 ? a * b : a;
    }
    return a;
}

template <typename T> __device__ __forceinline__ T binary_int(int op, T a, T b)
{
    switch (op) {
    case B_ADD: return (T)(a + b);
    case B_SUB: return (T)(a - b);
    case B_MUL: return (T)(a * b);
    case B_DIV: return b == 0 ? (T)0 : (T(-1) < T(0) && b == (T)-1) ? (T)(0 - a) : (T)(a / b);
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    case B_PRELU: return a < 0 ? (T)(a * b) : a;
    }
    return a;
}

template <typename T, bool INT> struct binary_apply;
template <typename T> struct binary_apply<T, false> {
    __device__ static void at(const T *a, const T *b, T *y, int64_t i, int64_t ia, int64_t ib, int op)
    {
        mrt_cu_store(y, i, binary_float(op, mrt_cu_load(a, ia), mrt_cu_load(b, ib)));
    }
};
template <typename T> struct binary_apply<T, true> {
    __device__ static void at(const T *a, const T *b, T *y, int64_t i, int64_t ia, int64_t ib, int op)
    {
        y[i] = binary_int(op, a[ia], b[ib]);
    }
};

template <typename T> __global__ void binary_kernel(const T *a, const T *b, T *y, int64_t n, int op, mrt_cu_bcast bc)
{
    MRT_CU_FOR(i, n) {
        int64_t off[2];
        mrt_cu_bcast_offsets(bc, i, 2, off);
        binary_apply<T, is_int_type<T>::value>::at(a, b, y, i, off[0], off[1], op);
    }
}

bool numeric_dtype(mrt_dtype dt)
{
    switch (dt) {
    case MRT_DTYPE_FLOAT: case MRT_DTYPE_DOUBLE: case MRT_DTYPE_FLOAT16: case MRT_DTYPE_BFLOAT16: case MRT_DTYPE_INT8:
    case MRT_DTYPE_INT16: case MRT_DTYPE_INT32: case MRT_DTYPE_INT64: case MRT_DTYPE_UINT8: case MRT_DTYPE_UINT16:
    case MRT_DTYPE_UINT32: case MRT_DTYPE_UINT64: return true;
    default: return false;
    }
}

bool binary_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    for (int i = 0; i < ctx->n_inputs; i++) {
        const mrt_value *v = ctx->inputs[i];
        if (v && v->kind == MRT_VALUE_TENSOR && !numeric_dtype(v->tensor.dtype))
            return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", mrt_dtype_name(v->tensor.dtype)), false;
    }
    return true;
}

// y = a op b, broadcasting; `acc` == y for the variadic ops' later inputs.
mrt_status launch_binary(mrt_op_ctx *ctx, int op, const mrt_tensor *a, const mrt_tensor *b, mrt_tensor *y)
{
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    const mrt_tensor *in[2] = {a, b};
    mrt_cu_bcast bc;
    mrt_cu_bcast_init(&bc, y, 2, in);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(y->dtype, {
            auto *k = binary_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)a->data,
                       (const elem_t *)b->data, (elem_t *)y->data, n, op, bc);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(y->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "binary kernel");
    return MRT_STATUS_OK;
}

#define BINARY(name, OP)                                                                                          \
    mrt_status cu_##name(mrt_op_ctx *ctx) { return launch_binary(ctx, OP, mrt_input(ctx, 0), mrt_input(ctx, 1), mrt_output(ctx, 0)); }
BINARY(add, B_ADD)
BINARY(sub, B_SUB)
BINARY(mul, B_MUL)
BINARY(div, B_DIV)
BINARY(prelu, B_PRELU)
#undef BINARY

// Max/Min/Sum/Mean over any number of inputs: the first two into y, then y op each further input (y broadcasts to
// itself), then Mean's division. A single input is copied.
template <typename T> __global__ void scale_kernel(T *y, int64_t n, double s)
{
    MRT_CU_FOR(i, n) mrt_cu_store(y, i, (typename mrt_cu_compute<T>::type)(mrt_cu_load(y, i) * s));
}

mrt_status run_variadic(mrt_op_ctx *ctx, int op, bool mean)
{
    mrt_tensor *y = mrt_output(ctx, 0);
    int n_in = 0;
    const mrt_tensor *ins[64];
    for (int i = 0; i < ctx->n_inputs && n_in < 64; i++)
        if (mrt_input(ctx, i)) ins[n_in++] = mrt_input(ctx, i);
    if (n_in == 0) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "no inputs");
    if (n_in == 1) {
        // y = x broadcast to y's shape: x op x for max/min is x; for Sum/Mean add x to nothing: use x + 0 via max(x, x)
        MRT_TRY(launch_binary(ctx, B_MAX, ins[0], ins[0], y));
    } else {
        MRT_TRY(launch_binary(ctx, op, ins[0], ins[1], y));
        for (int k = 2; k < n_in; k++) MRT_TRY(launch_binary(ctx, op, y, ins[k], y));
    }
    int64_t n = mrt_tensor_numel(y);
    if (mean && n_in > 1 && n > 0) {
        bool done = false;
        [&]() -> bool {
            MRT_CU_SWITCH_FLOAT(y->dtype, {
                auto *k = scale_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (elem_t *)y->data, n, 1.0 / n_in);
                done = true;
            })
            return false;
        }();
        if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Mean of %s", mrt_dtype_name(y->dtype));
        MRT_CU_CHECK_LAUNCH(ctx, "Mean kernel");
    }
    return MRT_STATUS_OK;
}

mrt_status cu_max(mrt_op_ctx *ctx) { return run_variadic(ctx, B_MAX, false); }
mrt_status cu_min(mrt_op_ctx *ctx) { return run_variadic(ctx, B_MIN, false); }
mrt_status cu_sum(mrt_op_ctx *ctx) { return run_variadic(ctx, B_ADD, false); }
mrt_status cu_mean(mrt_op_ctx *ctx) { return run_variadic(ctx, B_ADD, true); }

bool mean_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (v && !(v->tensor.dtype == MRT_DTYPE_FLOAT || v->tensor.dtype == MRT_DTYPE_DOUBLE ||
               v->tensor.dtype == MRT_DTYPE_FLOAT16 || v->tensor.dtype == MRT_DTYPE_BFLOAT16))
        return snprintf(why, len, "Mean of %s is not supported by the CUDA kernel", mrt_dtype_name(v->tensor.dtype)), false;
    return binary_supports(ctx, why, len);
}


// ------------------------------------------------------------------ comparisons, logic, bits, Mod, Pow (broadcast)

enum mixed_op {
    M_EQ, M_LT, M_GT, M_LE, M_GE, M_AND, M_OR, M_XOR, M_BAND, M_BOR, M_BXOR, M_SHL, M_SHR, M_PYMOD, M_CMOD,
};

template <typename C> __device__ __forceinline__ C pymod_float(C x, C y)
{
    C r = fmod(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

template <typename T, bool INT> struct mod_apply;
template <typename T> struct mod_apply<T, false> {
    __device__ static T at(const T *a, const T *b, int64_t ia, int64_t ib, bool py)
    {
        typedef typename mrt_cu_compute<T>::type C;
        C x = mrt_cu_load(a, ia), y = mrt_cu_load(b, ib);
        T out[1];
        mrt_cu_store(out, 0, py ? pymod_float(x, y) : (C)fmod(x, y));
        return out[0];
    }
};
template <typename T> struct mod_apply<T, true> {
    __device__ static T at(const T *a, const T *b, int64_t ia, int64_t ib, bool py)
    {
        T x = a[ia], y = b[ib];
        if (y == 0) return 0;
        if (T(-1) > T(0)) return (T)(x % y); // unsigned
        if (y == (T)-1) return 0;
        T r = (T)(x % y);
        return py && r != 0 && ((r < 0) != (y < 0)) ? (T)(r + y) : r;
    }
};

// Comparisons on any numeric type (output bool); logic on bool; bits and shifts on integers; Mod on any.
template <typename T> __global__ void mixed_kernel(const T *a, const T *b, void *y, int64_t n, int op, mrt_cu_bcast bc)
{
    MRT_CU_FOR(i, n) {
        int64_t off[2];
        mrt_cu_bcast_offsets(bc, i, 2, off);
        if (op == M_PYMOD || op == M_CMOD) {
            ((T *)y)[i] = mod_apply<T, is_int_type<T>::value>::at(a, b, off[0], off[1], op == M_PYMOD);
            continue;
        }
        typedef typename mrt_cu_compute<T>::type C;
        C x = mrt_cu_load(a, off[0]), z = mrt_cu_load(b, off[1]);
        uint8_t r = 0;
        switch (op) {
        case M_EQ: r = x == z; break;
        case M_LT: r = x < z; break;
        case M_GT: r = x > z; break;
        case M_LE: r = x <= z; break;
        case M_GE: r = x >= z; break;
        case M_AND: r = (x != 0) && (z != 0); break;
        case M_OR: r = (x != 0) || (z != 0); break;
        case M_XOR: r = (x != 0) != (z != 0); break;
        default: break;
        }
        ((uint8_t *)y)[i] = r;
    }
}

template <typename T> __global__ void bits_kernel(const T *a, const T *b, T *y, int64_t n, int op, mrt_cu_bcast bc)
{
    MRT_CU_FOR(i, n) {
        int64_t off[2];
        mrt_cu_bcast_offsets(bc, i, 2, off);
        T x = a[off[0]], z = b[off[1]];
        const int bits = 8 * (int)sizeof(T);
        switch (op) {
        case M_BAND: y[i] = (T)(x & z); break;
        case M_BOR: y[i] = (T)(x | z); break;
        case M_BXOR: y[i] = (T)(x ^ z); break;
        case M_SHL: y[i] = (uint64_t)z >= (uint64_t)bits ? (T)0 : (T)(x << z); break; // C leaves these undefined
        case M_SHR: y[i] = (uint64_t)z >= (uint64_t)bits ? (T)0 : (T)(x >> z); break;
        default: break;
        }
    }
}

mrt_status launch_mixed(mrt_op_ctx *ctx, int op)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    const mrt_tensor *in[2] = {a, b};
    mrt_cu_bcast bc;
    mrt_cu_bcast_init(&bc, y, 2, in);
    mrt_dtype dt = a->dtype == MRT_DTYPE_BOOL ? MRT_DTYPE_UINT8 : a->dtype;
    bool bits = op == M_BAND || op == M_BOR || op == M_BXOR || op == M_SHL || op == M_SHR;
    bool done = false;
    if (bits) {
        [&]() -> bool {
            MRT_CU_SWITCH_INT(dt, {
                auto *k = bits_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)a->data,
                           (const elem_t *)b->data, (elem_t *)y->data, n, op, bc);
                done = true;
            })
            return false;
        }();
    } else {
        [&]() -> bool {
            MRT_CU_SWITCH_NUMERIC(dt, {
                auto *k = mixed_kernel<elem_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)a->data,
                           (const elem_t *)b->data, y->data, n, op, bc);
                done = true;
            })
            return false;
        }();
    }
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(a->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "binary kernel");
    return MRT_STATUS_OK;
}

bool is_integer_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_INT8 || dt == MRT_DTYPE_INT16 || dt == MRT_DTYPE_INT32 || dt == MRT_DTYPE_INT64 ||
           dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_UINT16 || dt == MRT_DTYPE_UINT32 || dt == MRT_DTYPE_UINT64;
}

bool compare_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (v && v->tensor.dtype == MRT_DTYPE_BOOL) return true;
    return binary_supports(ctx, why, len);
}
bool logic_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (v && v->tensor.dtype != MRT_DTYPE_BOOL) return snprintf(why, len, "logic ops take bool"), false;
    return true;
}
bool bits_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    if (v && !is_integer_dtype(v->tensor.dtype))
        return snprintf(why, len, "dtype %s is not an integer type", mrt_dtype_name(v->tensor.dtype)), false;
    return true;
}

mrt_status cu_equal(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_EQ); }
mrt_status cu_less(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_LT); }
mrt_status cu_greater(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_GT); }
mrt_status cu_less_equal(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_LE); }
mrt_status cu_greater_equal(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_GE); }
mrt_status cu_and(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_AND); }
mrt_status cu_or(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_OR); }
mrt_status cu_xor(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_XOR); }
mrt_status cu_bitwise_and(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_BAND); }
mrt_status cu_bitwise_or(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_BOR); }
mrt_status cu_bitwise_xor(mrt_op_ctx *ctx) { return launch_mixed(ctx, M_BXOR); }
mrt_status cu_mod(mrt_op_ctx *ctx) { return launch_mixed(ctx, mrt_attr_int(ctx, "fmod", 0) ? M_CMOD : M_PYMOD); }
mrt_status cu_bit_shift(mrt_op_ctx *ctx)
{
    const char *dir = mrt_attr_string(ctx, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
    return launch_mixed(ctx, dir[0] == 'L' ? M_SHL : M_SHR);
}

// Pow: the base's dtype out; integer ^ integer exactly (wrapping), the rest through the compute type, with x^2 and
// x^3 computed as products as the CPU does (they are correctly rounded; powf is not always).
__device__ __forceinline__ int64_t ipow_dev(int64_t base, int64_t e)
{
    if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

template <typename TX, typename TY> __global__ void pow_kernel(const TX *a, const TY *b, TX *y, int64_t n, mrt_cu_bcast bc)
{
    MRT_CU_FOR(i, n) {
        int64_t off[2];
        mrt_cu_bcast_offsets(bc, i, 2, off);
        if (is_int_type<TX>::value && is_int_type<TY>::value) {
            mrt_cu_store(y, i, (typename mrt_cu_compute<TX>::type)ipow_dev((int64_t)mrt_cu_load(a, off[0]),
                                                                           (int64_t)mrt_cu_load(b, off[1])));
            continue;
        }
        double x = (double)mrt_cu_load(a, off[0]), e = (double)mrt_cu_load(b, off[1]);
        typedef typename mrt_cu_compute<TX>::type C;
        C r;
        if (sizeof(C) == 4 && !is_int_type<TX>::value) {
            float xf = (float)x;
            r = (C)(e == 2 ? xf * xf : e == 3 ? (float)(x * x * x) : powf(xf, (float)e));
        } else {
            r = (C)pow(x, e);
        }
        mrt_cu_store(y, i, r);
    }
}

mrt_status cu_pow(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    int64_t n = mrt_tensor_numel(y);
    if (n == 0) return MRT_STATUS_OK;
    const mrt_tensor *in[2] = {a, b};
    mrt_cu_bcast bc;
    mrt_cu_bcast_init(&bc, y, 2, in);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_NUMERIC(a->dtype, {
            typedef elem_t base_t;
            [&]() -> bool {
                MRT_CU_SWITCH_NUMERIC(b->dtype, {
                    auto *k = pow_kernel<base_t, elem_t>;
                    MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const base_t *)a->data,
                               (const elem_t *)b->data, (base_t *)y->data, n, bc);
                    done = true;
                })
                return false;
            }();
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Pow of %s by %s", mrt_dtype_name(a->dtype), mrt_dtype_name(b->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Pow kernel");
    return MRT_STATUS_OK;
}

// IsNaN, IsInf (bool out), Not (bool), BitwiseNot (integers).
template <typename T> __global__ void predicate_kernel(const T *x, uint8_t *y, int64_t n, int what, int detect)
{
    MRT_CU_FOR(i, n) {
        double v = (double)mrt_cu_load(x, i);
        y[i] = what == 0 ? v != v : (isinf(v) && (v > 0 ? (detect & 2) : (detect & 1))) ? 1 : 0;
    }
}

template <typename T> __global__ void not_kernel(const T *x, T *y, int64_t n, bool logical)
{
    MRT_CU_FOR(i, n) y[i] = logical ? (T)(x[i] == 0) : (T)~x[i];
}

mrt_status run_predicate(mrt_op_ctx *ctx, int what, int detect)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = y ? mrt_tensor_numel(y) : 0;
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = predicate_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (uint8_t *)y->data, n, what, detect);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "predicate kernel");
    return MRT_STATUS_OK;
}

mrt_status cu_isnan(mrt_op_ctx *ctx) { return run_predicate(ctx, 0, 0); }
mrt_status cu_isinf(mrt_op_ctx *ctx)
{
    return run_predicate(ctx, 1, (mrt_attr_int(ctx, "detect_negative", 1) ? 1 : 0) | (mrt_attr_int(ctx, "detect_positive", 1) ? 2 : 0));
}
bool float_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *v = ctx->inputs[0];
    mrt_dtype dt = v ? v->tensor.dtype : MRT_DTYPE_UNDEFINED;
    if (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16) return true;
    return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", mrt_dtype_name(dt)), false;
}

mrt_status run_not(mrt_op_ctx *ctx, bool logical)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = y ? mrt_tensor_numel(y) : 0;
    if (n == 0) return MRT_STATUS_OK;
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_BYTES(mrt_dtype_bits(x->dtype) / 8, {
            auto *k = not_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, logical);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Not kernel");
    return MRT_STATUS_OK;
}
mrt_status cu_not(mrt_op_ctx *ctx) { return run_not(ctx, true); }
mrt_status cu_bitwise_not(mrt_op_ctx *ctx) { return run_not(ctx, false); }


// Where(cond, x, y): three-way broadcast; the element moves as bytes, so every dtype of any width is one kernel.
template <typename T> __global__ void where_kernel(const uint8_t *c, const T *x, const T *y, T *out, int64_t n, mrt_cu_bcast bc)
{
    MRT_CU_FOR(i, n) {
        int64_t off[3];
        mrt_cu_bcast_offsets(bc, i, 3, off);
        out[i] = c[off[0]] ? x[off[1]] : y[off[2]];
    }
}

mrt_status cu_where(mrt_op_ctx *ctx)
{
    const mrt_tensor *c = mrt_input(ctx, 0), *x = mrt_input(ctx, 1), *y = mrt_input(ctx, 2);
    mrt_tensor *out = mrt_output(ctx, 0);
    int64_t n = out ? mrt_tensor_numel(out) : 0;
    if (n == 0) return MRT_STATUS_OK;
    const mrt_tensor *in[3] = {c, x, y};
    mrt_cu_bcast bc;
    mrt_cu_bcast_init(&bc, out, 3, in);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_BYTES(mrt_dtype_bits(out->dtype) / 8, {
            auto *k = where_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const uint8_t *)c->data,
                       (const elem_t *)x->data, (const elem_t *)y->data, (elem_t *)out->data, n, bc);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "Where of %s", mrt_dtype_name(out->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Where kernel");
    return MRT_STATUS_OK;
}

bool where_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_value *x = ctx->inputs[1];
    int bits = x ? mrt_dtype_bits(x->tensor.dtype) : 0;
    if (x && (x->tensor.dtype == MRT_DTYPE_STRING || bits < 8 || bits > 64 || bits % 8))
        return snprintf(why, len, "Where of %s is not supported by the CUDA kernel", mrt_dtype_name(x->tensor.dtype)), false;
    return true;
}
} // namespace

#define W MRT_KERNEL_WRITES_ALL
#define U(op, ver, fn) MRT_CU_ROW_S(op, ver, cu_##fn, cu_##fn##_supports, W)
#define B(op, ver, fn) MRT_CU_ROW_S(op, ver, cu_##fn, binary_supports, W)
extern "C" const mrt_kernel mrt_cuda_kernels_elementwise[] = {
    U("Abs", 1, abs), U("Neg", 1, neg), U("Sqrt", 1, sqrt), U("Exp", 1, exp), U("Log", 1, log),
    U("Reciprocal", 1, recip), U("Floor", 1, floor), U("Ceil", 1, ceil), U("Round", 11, round), U("Sign", 9, sign),
    U("Erf", 9, erf), U("Sin", 7, sin), U("Cos", 7, cos), U("Tan", 7, tan), U("Asin", 7, asin), U("Acos", 7, acos),
    U("Atan", 7, atan), U("Sinh", 9, sinh), U("Cosh", 9, cosh), U("Asinh", 9, asinh), U("Acosh", 9, acosh),
    U("Atanh", 9, atanh), U("Relu", 1, relu), U("Sigmoid", 1, sigmoid), U("Tanh", 1, tanh),
    U("LeakyRelu", 1, leaky), U("Elu", 1, elu), U("Selu", 1, selu), U("Celu", 12, celu),
    U("ThresholdedRelu", 10, threlu), U("HardSigmoid", 1, hsig), U("HardSwish", 14, hswish),
    U("Softplus", 1, softplus), U("Softsign", 1, softsign), U("Gelu", 20, gelu), U("Mish", 18, mish),
    U("Swish", 24, swish), U("Clip", 1, clip),
    B("Add", 7, add), B("Sub", 7, sub), B("Mul", 7, mul), B("Div", 7, div), B("PRelu", 7, prelu),
    B("Max", 8, max), B("Min", 8, min), B("Sum", 8, sum), MRT_CU_ROW_S("Mean", 8, cu_mean, mean_supports, W),
    MRT_CU_ROW_S("Equal", 7, cu_equal, compare_supports, W), MRT_CU_ROW_S("Less", 7, cu_less, binary_supports, W),
    MRT_CU_ROW_S("Greater", 7, cu_greater, binary_supports, W),
    MRT_CU_ROW_S("LessOrEqual", 12, cu_less_equal, binary_supports, W),
    MRT_CU_ROW_S("GreaterOrEqual", 12, cu_greater_equal, binary_supports, W),
    MRT_CU_ROW_S("And", 7, cu_and, logic_supports, W), MRT_CU_ROW_S("Or", 7, cu_or, logic_supports, W),
    MRT_CU_ROW_S("Xor", 7, cu_xor, logic_supports, W),
    MRT_CU_ROW_S("BitwiseAnd", 18, cu_bitwise_and, bits_supports, W),
    MRT_CU_ROW_S("BitwiseOr", 18, cu_bitwise_or, bits_supports, W),
    MRT_CU_ROW_S("BitwiseXor", 18, cu_bitwise_xor, bits_supports, W),
    MRT_CU_ROW_S("BitShift", 11, cu_bit_shift, bits_supports, W), MRT_CU_ROW_S("Mod", 10, cu_mod, binary_supports, W),
    MRT_CU_ROW_S("Pow", 7, cu_pow, binary_supports, W),
    MRT_CU_ROW_S("IsNaN", 9, cu_isnan, float_supports, W), MRT_CU_ROW_S("IsInf", 10, cu_isinf, float_supports, W),
    MRT_CU_ROW_S("Where", 9, cu_where, where_supports, W), MRT_CU_ROW_S("Not", 1, cu_not, logic_supports, W), MRT_CU_ROW_S("BitwiseNot", 18, cu_bitwise_not, bits_supports, W),
    {0},
};
#undef U
#undef B
#undef W
