// ONNX Conv 1/11/22 and ConvTranspose 1/11/22 (N-D, any groups, pads incl. auto_pad, strides, dilations, bias;
// ConvTranspose's output_padding/output_shape through the shared parser) and ConvInteger 10 (uint8/int8 with zero
// points, wrapping int32 sums) on CUDA, mirroring ops_cpu/conv.c. float32/float64, float16/bfloat16 computed in float.
// Conv: an im2col buffer for a chunk of images (1x1 stride-1 unpadded convs read X in place) and minirt's tiled GEMM
// (ops_cuda/gemm.cuh) batched over (image, group) with the bias as its addend; the real module hands 2-D/3-D
// float32/float16 convs with symmetric pads to cuDNN (implicit precomputed GEMM, a deterministic forward
// algorithm; FMA math, TF32 only when the session allows it). ConvTranspose and ConvInteger: one thread per output,
// gathering the taps that reach it (no scatter, so no atomics and the same bits every run).
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/gemm.cuh"
#include "ops_cuda/handles.cuh"

#include "engine/opdef/conv.h"

namespace {

using mrt_cu_gemm::geom;

// Bytes of the im2col buffer of one chunk of images (bounds the device scratch a Conv takes).
static const int64_t COL_BUDGET_BYTES = (int64_t)64 << 20;

int64_t prod(int n, const int64_t *v)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

bool float_dtype(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

// ------------------------------------------------------------------ Conv

bool is_pointwise(const mrt_window &win)
{
    bool pointwise = true;
    for (int i = 0; i < win.nsp; i++)
        pointwise = pointwise && win.kernel[i] == 1 && win.stride[i] == 1 && win.pad_begin[i] == 0 && win.pad_end[i] == 0;
    return pointwise;
}

// Bytes of the im2col buffer conv_typed fetches (elements of acc_bytes): *chunk images at a time, as many as fit in
// COL_BUDGET_BYTES (at least one); none for a 1x1 Conv, whose GEMM reads X in place.
size_t col_bytes(const mrt_conv_params &p, size_t acc_bytes, int64_t *chunk)
{
    const int64_t per_image = p.c * p.kernel_numel * prod(p.win.nsp, p.win.out);
    const bool pointwise = is_pointwise(p.win);
    int64_t c = pointwise ? p.n : COL_BUDGET_BYTES / (int64_t)acc_bytes / (per_image > 0 ? per_image : 1);
    if (c < 1) c = 1;
    if (c > p.n) c = p.n;
    *chunk = c;
    return pointwise || per_image <= 0 ? 0 : (size_t)(c * per_image) * acc_bytes;
}

// col[((i*C + c)*K + k)*out_numel + o] = X[n0 + i, c] at window tap k of output o (0 in padding), in the compute type.
template <typename T, typename CT>
__global__ void im2col_kernel(const T *x, CT *col, int64_t images, int64_t channels, int64_t in_numel, int64_t kn,
                              int64_t out_numel, mrt_window w)
{
    MRT_CU_FOR(e, images * channels * kn * out_numel) {
        const int64_t o = e % out_numel, k = e / out_numel % kn, ic = e / (out_numel * kn);
        int64_t ko = k, oo = o, off = 0, stride = 1;
        bool inside = true;
        for (int i = w.nsp - 1; i >= 0; i--) {
            const int64_t kc = ko % w.kernel[i], oc = oo % w.out[i];
            ko /= w.kernel[i], oo /= w.out[i];
            const int64_t pos = oc * w.stride[i] - w.pad_begin[i] + kc * w.dilation[i];
            inside = inside && pos >= 0 && pos < w.in[i];
            off += pos * stride;
            stride *= w.in[i];
        }
        col[e] = inside ? (CT)mrt_cu_load(x, ic * in_numel + off) : (CT)0;
    }
}

#ifndef MRT_CUDA_EMULATED
// cuDNN's forward convolution for 2-D/3-D convs with symmetric pads: done = false when it does not take the case.
mrt_status cudnn_conv(mrt_op_ctx *ctx, const mrt_conv_params &p, bool *done)
{
    *done = false;
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    const mrt_window &win = p.win;
    cudnnDataType_t type, compute;
    switch (x->dtype) {
    case MRT_DTYPE_FLOAT: type = compute = CUDNN_DATA_FLOAT; break;
    case MRT_DTYPE_FLOAT16: type = CUDNN_DATA_HALF, compute = CUDNN_DATA_FLOAT; break;
    default: return MRT_STATUS_OK; // float64 (which the chosen algorithm may not take) and bfloat16: minirt's kernels
    }
    if (win.nsp != 2 && win.nsp != 3) return MRT_STATUS_OK;
    if (mrt_tensor_numel(x) == 0 || mrt_tensor_numel(y) == 0 || mrt_tensor_numel(w) == 0) return MRT_STATUS_OK;
    int xd[5], wd[5], yd[5], pads[3], strides[3], dil[3];
    for (int i = 0; i < x->rank; i++) {
        if (x->shape[i] > INT32_MAX || y->shape[i] > INT32_MAX || w->shape[i] > INT32_MAX) return MRT_STATUS_OK;
        xd[i] = (int)x->shape[i], wd[i] = (int)w->shape[i], yd[i] = (int)y->shape[i];
    }
    for (int i = 0; i < win.nsp; i++) {
        if (win.pad_begin[i] != win.pad_end[i]) return MRT_STATUS_OK; // cuDNN pads both ends alike
        pads[i] = (int)win.pad_begin[i], strides[i] = (int)win.stride[i], dil[i] = (int)win.dilation[i];
    }
    cudnnHandle_t h;
    MRT_TRY(mrt_cuda_cudnn(ctx, &h));
    cudnnTensorDescriptor_t xdesc = NULL, ydesc = NULL, bdesc = NULL;
    cudnnFilterDescriptor_t wdesc = NULL;
    cudnnConvolutionDescriptor_t cdesc = NULL;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    const char *step = "";
#define DNN(call)                                                                                                 \
    if (s == CUDNN_STATUS_SUCCESS) s = (step = #call, call)
    int rank = x->rank, xs[5], ys[5];
    xs[rank - 1] = ys[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; i--) xs[i] = xs[i + 1] * xd[i + 1], ys[i] = ys[i + 1] * yd[i + 1];
    DNN(cudnnCreateTensorDescriptor(&xdesc));
    DNN(cudnnCreateTensorDescriptor(&ydesc));
    DNN(cudnnCreateFilterDescriptor(&wdesc));
    DNN(cudnnCreateConvolutionDescriptor(&cdesc));
    DNN(cudnnSetTensorNdDescriptor(xdesc, type, rank, xd, xs));
    DNN(cudnnSetTensorNdDescriptor(ydesc, type, rank, yd, ys));
    DNN(cudnnSetFilterNdDescriptor(wdesc, type, CUDNN_TENSOR_NCHW, rank, wd));
    DNN(cudnnSetConvolutionNdDescriptor(cdesc, win.nsp, pads, strides, dil, CUDNN_CROSS_CORRELATION, compute));
    DNN(cudnnSetConvolutionGroupCount(cdesc, (int)p.group));
    DNN(cudnnSetConvolutionMathType(cdesc, ctx->allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t ws_bytes = 0;
    DNN(cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, algo, &ws_bytes));
    bool taken = s == CUDNN_STATUS_SUCCESS;
    mrt_status st = MRT_STATUS_OK;
    if (taken) {
        void *ws = ws_bytes ? mrt_workspace(ctx, ws_bytes) : NULL;
        if (ws_bytes && !ws) st = MRT_STATUS_OUT_OF_MEMORY;
        float one_f = 1, zero_f = 0; // float scaling factors for float and half data
        const void *one = &one_f, *zero = &zero_f;
        if (st == MRT_STATUS_OK) {
            DNN(cudnnConvolutionForward(h, one, xdesc, x->data, wdesc, w->data, cdesc, algo, ws, ws_bytes, zero, ydesc,
                                        y->data));
            if (b) {
                int bd[5] = {1, yd[1], 1, 1, 1}, bs[5];
                bs[rank - 1] = 1;
                for (int i = rank - 2; i >= 0; i--) bs[i] = bs[i + 1] * bd[i + 1];
                DNN(cudnnCreateTensorDescriptor(&bdesc));
                DNN(cudnnSetTensorNdDescriptor(bdesc, type, rank, bd, bs));
                DNN(cudnnAddTensor(h, one, bdesc, b->data, one, ydesc, y->data));
            }
            if (s != CUDNN_STATUS_SUCCESS)
                st = mrt_op_fail(ctx, MRT_STATUS_DEVICE_ERROR, "%s: %s", step, cudnnGetErrorString(s));
            else
                *done = true;
        }
    }
#undef DNN
    if (bdesc) cudnnDestroyTensorDescriptor(bdesc);
    if (xdesc) cudnnDestroyTensorDescriptor(xdesc);
    if (ydesc) cudnnDestroyTensorDescriptor(ydesc);
    if (wdesc) cudnnDestroyFilterDescriptor(wdesc);
    if (cdesc) cudnnDestroyConvolutionDescriptor(cdesc);
    return st;
}
#endif

template <typename T>
mrt_status conv_typed(mrt_op_ctx *ctx, const mrt_conv_params &p, const T *x, const T *w, const T *b, T *y)
{
    typedef typename mrt_cu_gemm::acc_of<T>::type acc_t; // also the im2col element: float for the 16-bit floats
    const mrt_window &win = p.win;
    const int64_t in_numel = prod(win.nsp, win.in), out_numel = prod(win.nsp, win.out), kn = p.kernel_numel;
    const int64_t cg = p.c / p.group, mg = p.m / p.group, ck = cg * kn;
    const bool pointwise = is_pointwise(win);
    // per (image, group): Y[mg, out] = W_g[mg, ck] * col_g[ck, out] + bias_g
    geom g = mrt_cu_gemm::plain(mg, out_numel, ck);
    g.has_c = b != NULL;
    g.c_rs = 1, g.c_cs = 0;
    const int64_t per_image = p.c * kn * out_numel;
    int64_t chunk;
    const size_t col_size = col_bytes(p, sizeof(acc_t), &chunk);
    acc_t *col = NULL;
    if (col_size) {
        col = (acc_t *)mrt_workspace(ctx, col_size);
        if (!col) return MRT_STATUS_OUT_OF_MEMORY;
    }
    for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
        const int64_t images = p.n - n0 < chunk ? p.n - n0 : chunk;
        geom gi = g;
        mrt_cu_gemm::add_batch(&gi, images, 0, pointwise ? p.c * in_numel : per_image, 0, p.m * out_numel);
        mrt_cu_gemm::add_batch(&gi, p.group, mg * ck, pointwise ? cg * in_numel : ck * out_numel, mg, mg * out_numel);
        T *yc = y + n0 * p.m * out_numel;
        bool fits;
        if (pointwise) {
            fits = mrt_cu_gemm::launch<T, T, T, acc_t>(mrt_cu_stream(ctx), w, x + n0 * p.c * in_numel, b, yc, gi);
        } else {
            if (per_image > 0) {
                auto *k = im2col_kernel<T, acc_t>;
                MRT_LAUNCH(k, mrt_cu_blocks(images * per_image), MRT_CU_THREADS, 0, mrt_cu_stream(ctx),
                           x + n0 * p.c * in_numel, col, images, p.c, in_numel, kn, out_numel, win);
            }
            fits = mrt_cu_gemm::launch<T, acc_t, T, acc_t>(mrt_cu_stream(ctx), w, col, b, yc, gi);
        }
        if (!fits) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "%lld output positions exceed the grid", (long long)out_numel);
        MRT_CU_CHECK_LAUNCH(ctx, "Conv kernels");
    }
    return MRT_STATUS_OK;
}

mrt_status cu_conv(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
#ifndef MRT_CUDA_EMULATED
    bool done;
    MRT_TRY(cudnn_conv(ctx, p, &done));
    if (done) return MRT_STATUS_OK;
#endif
    bool ran = false;
    mrt_status st = MRT_STATUS_OK;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            st = conv_typed<elem_t>(ctx, p, (const elem_t *)x->data, (const elem_t *)w->data,
                                    b ? (const elem_t *)b->data : NULL, (elem_t *)y->data);
            ran = true;
        })
        return false;
    }();
    if (!ran) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    return st;
}

// ------------------------------------------------------------------ ConvTranspose

// win is the forward conv of Y (win.in = Y's spatial dims, win.out = X's); W is [C, M/group, k...]. Output (n, m, q)
// gathers x[n, c, o] * w[c, m_local, k] over the taps k and input positions o with o*stride - pad + k*dilation = q.
template <typename T>
__global__ void convtranspose_kernel(const T *x, const T *w, const T *b, T *y, mrt_conv_params p, int64_t y_numel,
                                     int64_t x_numel)
{
    typedef typename mrt_cu_gemm::acc_of<T>::type A;
    const mrt_window &win = p.win;
    const int64_t cg = p.c / p.group, mg = p.m / p.group, kn = p.kernel_numel;
    MRT_CU_FOR(e, p.n * p.m * y_numel) {
        const int64_t q = e % y_numel, m = e / y_numel % p.m, n = e / (y_numel * p.m), g = m / mg, ml = m % mg;
        int64_t qi[MRT_MAX_RANK], rest = q;
        for (int i = win.nsp - 1; i >= 0; i--) qi[i] = rest % win.in[i], rest /= win.in[i];
        A acc = b ? (A)mrt_cu_load(b, m) : (A)0;
        for (int64_t k = 0; k < kn; k++) {
            int64_t kr = k, off = 0, stride = 1;
            bool hit = true;
            for (int i = win.nsp - 1; i >= 0 && hit; i--) {
                const int64_t kc = kr % win.kernel[i];
                kr /= win.kernel[i];
                const int64_t t = qi[i] + win.pad_begin[i] - kc * win.dilation[i];
                if (t < 0 || t % win.stride[i] != 0 || t / win.stride[i] >= win.out[i]) hit = false;
                off += t / win.stride[i] * stride;
                stride *= win.out[i];
            }
            if (!hit) continue;
            for (int64_t cl = 0; cl < cg; cl++) {
                const int64_t c = g * cg + cl;
                acc += (A)mrt_cu_load(x, (n * p.c + c) * x_numel + off) * (A)mrt_cu_load(w, (c * mg + ml) * kn + k);
            }
        }
        mrt_cu_store(y, e, acc);
    }
}

mrt_status cu_convtranspose(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_convtranspose_params_get(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t y_numel = prod(p.win.nsp, p.win.in), x_numel = prod(p.win.nsp, p.win.out), total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    bool ran = false;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = convtranspose_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (const elem_t *)w->data, b ? (const elem_t *)b->data : NULL, (elem_t *)y->data, p, y_numel, x_numel);
            ran = true;
        })
        return false;
    }();
    if (!ran) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "ConvTranspose kernel");
    return MRT_STATUS_OK;
}

// ------------------------------------------------------------------ ConvInteger

__device__ __forceinline__ int32_t ld8(const void *p, bool is_signed, int64_t i)
{
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

// y = conv(x - x_zero_point, w - w_zero_point[m]); padding is zero after the shift; wrapping uint32 sums as the CPU.
__global__ void convinteger_kernel(const void *x, bool x_signed, const void *w, bool w_signed, const void *xz,
                                   bool xz_signed, const void *wz, bool wz_signed, bool wz_per_channel, int32_t *y,
                                   mrt_conv_params p, int64_t in_numel, int64_t out_numel)
{
    const mrt_window &win = p.win;
    const int64_t cg = p.c / p.group, mg = p.m / p.group, kn = p.kernel_numel;
    const int32_t xzp = xz ? ld8(xz, xz_signed, 0) : 0;
    MRT_CU_FOR(e, p.n * p.m * out_numel) {
        const int64_t o = e % out_numel, m = e / out_numel % p.m, n = e / (out_numel * p.m), g = m / mg;
        const int32_t wzp = wz ? ld8(wz, wz_signed, wz_per_channel ? m : 0) : 0;
        uint32_t acc = 0;
        for (int64_t k = 0; k < kn; k++) {
            int64_t kr = k, orr = o, off = 0, stride = 1;
            bool inside = true;
            for (int i = win.nsp - 1; i >= 0; i--) {
                const int64_t kc = kr % win.kernel[i], oc = orr % win.out[i];
                kr /= win.kernel[i], orr /= win.out[i];
                const int64_t pos = oc * win.stride[i] - win.pad_begin[i] + kc * win.dilation[i];
                inside = inside && pos >= 0 && pos < win.in[i];
                off += pos * stride;
                stride *= win.in[i];
            }
            if (!inside) continue;
            for (int64_t cl = 0; cl < cg; cl++) {
                const int64_t c = g * cg + cl;
                const int32_t xv = ld8(x, x_signed, (n * p.c + c) * in_numel + off) - xzp;
                const int32_t wv = ld8(w, w_signed, (m * cg + cl) * kn + k) - wzp;
                acc += (uint32_t)wv * (uint32_t)xv;
            }
        }
        y[e] = (int32_t)acc;
    }
}

mrt_status cu_convinteger(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *xz = mrt_input(ctx, 2), *wz = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    auto *k = convinteger_kernel;
    MRT_LAUNCH(k, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data,
               x->dtype == MRT_DTYPE_INT8, (const void *)w->data, w->dtype == MRT_DTYPE_INT8,
               (const void *)(xz ? xz->data : NULL), xz && xz->dtype == MRT_DTYPE_INT8,
               (const void *)(wz ? wz->data : NULL), wz && wz->dtype == MRT_DTYPE_INT8, wz && mrt_tensor_numel(wz) > 1,
               (int32_t *)y->data, p, prod(p.win.nsp, p.win.in), prod(p.win.nsp, p.win.out));
    MRT_CU_CHECK_LAUNCH(ctx, "ConvInteger kernel");
    return MRT_STATUS_OK;
}

// The device scratch the plan lays out for a Conv: the project's kernel's im2col buffer. On a GPU cuDNN takes the
// node first and sizes its own workspace once its descriptors exist, at run time (served from the scratch the engine
// grows on demand), so nothing is planned there.
mrt_status cu_conv_workspace(mrt_op_ctx *ctx)
{
#ifdef MRT_CUDA_EMULATED
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    const mrt_dtype dt = mrt_input(ctx, 0)->dtype;
    int64_t chunk;
    mrt_workspace_request(ctx, col_bytes(p, dt == MRT_DTYPE_DOUBLE ? sizeof(double) : sizeof(float), &chunk));
#else
    (void)ctx;
#endif
    return MRT_STATUS_OK;
}

bool float_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (x && float_dtype(x->dtype)) return true;
    return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "none"), false;
}

} // namespace

#define W MRT_KERNEL_WRITES_ALL
extern "C" const mrt_kernel mrt_cuda_kernels_conv[] = {
    MRT_CU_ROW_SW("Conv", 1, cu_conv, float_supports, W, cu_conv_workspace),
    MRT_CU_ROW_S("ConvTranspose", 1, cu_convtranspose, float_supports, W),
    MRT_CU_ROW("ConvInteger", 10, cu_convinteger, W),
    {},
};
#undef W
