// 2-D deformable convolution on CUDA behind every front-end the CPU takes (ops_cpu/deform_conv.c): ONNX DeformConv
// 19/22, mmcv::/mmdeploy:: MMCVModulatedDeformConv2d and MMCVDeformConv2d, custom::/torchvision:: deform_conv2d; the
// shared parser (engine/opdef/deform_conv.h) maps each operand order and attribute spelling onto one set of params.
// float32/float64, float16/bfloat16 computed in float. A sampled im2col buffer for a chunk of images (the CPU's
// bilinear sample, operation for operation: zero outside the image, the mask folded into the corner weights), then
// minirt's tiled GEMM (ops_cuda/gemm.cuh) batched over (image, weight group) with the bias as its addend.
#include <cmath>

#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/gemm.cuh"

#include "engine/opdef/deform_conv.h"

namespace {

using namespace std;
using mrt_cu_gemm::geom;

static const int64_t COL_BUDGET_BYTES = (int64_t)64 << 20;

// col[((i*C + c)*kk + k)*np + q]: channel c of image n0 + i sampled at tap k of output column q.
template <typename T, typename C>
__global__ void sample_kernel(const T *x, const T *off, const T *mask, C *col, mrt_deform_conv_params p, int64_t images)
{
    const int64_t kk = p.kh * p.kw, np = p.oh * p.ow, hw = p.h * p.w, c_per_og = p.c / p.offset_group;
    const C hf = (C)p.h, wf = (C)p.w;
    MRT_CU_FOR(e, images * p.c * kk * np) {
        const int64_t q = e % np, k = e / np % kk, c = e / (np * kk) % p.c, n = e / (np * kk * p.c);
        const int64_t g = c / c_per_og, i = k / p.kw, j = k % p.kw, oy = q / p.ow, ox = q % p.ow;
        const T *offn = off + n * 2 * p.offset_group * kk * np;
        const C dy = (C)mrt_cu_load(offn, (g * 2 * kk + 2 * k) * np + q);
        const C dx = (C)mrt_cu_load(offn, (g * 2 * kk + 2 * k + 1) * np + q);
        const C y = (C)(oy * p.stride[0] - p.pad_begin[0] + i * p.dilation[0]) + dy;
        const C xs = (C)(ox * p.stride[1] - p.pad_begin[1] + j * p.dilation[1]) + dx;
        const C mv = mask ? (C)mrt_cu_load(mask, n * p.offset_group * kk * np + (g * kk + k) * np + q) : (C)1;
        C v = 0;
        if (y > -1 && y < hf && xs > -1 && xs < wf) { // written so that NaN positions read nothing, as on the CPU
            const C y0f = floor(y), x0f = floor(xs);
            const int64_t y0 = (int64_t)y0f, x0 = (int64_t)x0f;
            const C ly = y - y0f, lx = xs - x0f, hy = 1 - ly, hx = 1 - lx;
            const bool top = y0 >= 0, bottom = y0 + 1 < p.h, left = x0 >= 0, right = x0 + 1 < p.w;
            const T *plane = x + (n * p.c + c) * hw;
            const C p00 = top && left ? (C)mrt_cu_load(plane, y0 * p.w + x0) : (C)0;
            const C p01 = top && right ? (C)mrt_cu_load(plane, y0 * p.w + x0 + 1) : (C)0;
            const C p10 = bottom && left ? (C)mrt_cu_load(plane, (y0 + 1) * p.w + x0) : (C)0;
            const C p11 = bottom && right ? (C)mrt_cu_load(plane, (y0 + 1) * p.w + x0 + 1) : (C)0;
            v = hy * hx * mv * p00 + hy * lx * mv * p01 + ly * hx * mv * p10 + ly * lx * mv * p11;
        }
        col[e] = v;
    }
}

// The column block deform_typed fetches: *chunk images at a time, as many as fit in COL_BUDGET_BYTES (at least one),
// in the accumulation type of acc_bytes
size_t col_bytes(const mrt_deform_conv_params &p, size_t acc_bytes, int64_t *chunk)
{
    const int64_t per_image = p.c * p.kh * p.kw * p.oh * p.ow;
    int64_t c = COL_BUDGET_BYTES / (int64_t)acc_bytes / (per_image > 0 ? per_image : 1);
    if (c < 1) c = 1;
    if (c > p.n) c = p.n;
    *chunk = c;
    return per_image > 0 ? (size_t)(c * per_image) * acc_bytes : 0;
}

template <typename T>
mrt_status deform_typed(mrt_op_ctx *ctx, const mrt_deform_conv_params &p, const T *x, const T *w, const T *off,
                        const T *mask, const T *bias, T *y)
{
    typedef typename mrt_cu_gemm::acc_of<T>::type C;
    const int64_t kk = p.kh * p.kw, np = p.oh * p.ow, cg = p.c / p.group, ocg = p.oc / p.group, rows = cg * kk;
    // per (image, weight group): Y[ocg, np] = W_g[ocg, rows] * col_g[rows, np] + bias_g
    geom g = mrt_cu_gemm::plain(ocg, np, rows);
    g.has_c = bias != NULL;
    g.c_rs = 1, g.c_cs = 0;
    const int64_t per_image = p.c * kk * np;
    int64_t chunk;
    const size_t col_size = col_bytes(p, sizeof(C), &chunk);
    C *col = NULL;
    if (per_image > 0) {
        col = (C *)mrt_workspace(ctx, col_size);
        if (!col) return MRT_STATUS_OUT_OF_MEMORY;
    }
    for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
        const int64_t images = p.n - n0 < chunk ? p.n - n0 : chunk;
        geom gi = g;
        mrt_cu_gemm::add_batch(&gi, images, 0, per_image, 0, p.oc * np);
        mrt_cu_gemm::add_batch(&gi, p.group, ocg * rows, rows * np, ocg, ocg * np);
        if (per_image > 0) {
            auto *k = sample_kernel<T, C>;
            MRT_LAUNCH(k, mrt_cu_blocks(images * per_image), MRT_CU_THREADS, 0, mrt_cu_stream(ctx),
                       x + n0 * p.c * p.h * p.w, off + n0 * 2 * p.offset_group * kk * np,
                       mask ? mask + n0 * p.offset_group * kk * np : NULL, col, p, images);
        }
        if (!mrt_cu_gemm::launch<T, C, T, C>(mrt_cu_stream(ctx), w, col, bias, y + n0 * p.oc * np, gi))
            return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "%lld output positions exceed the grid", (long long)np);
        MRT_CU_CHECK_LAUNCH(ctx, "DeformConv kernels");
    }
    return MRT_STATUS_OK;
}

mrt_status cu_deform_conv(mrt_op_ctx *ctx)
{
    mrt_deform_conv_params p;
    MRT_TRY(mrt_deform_conv_params_get(ctx, &p));
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y || mrt_tensor_numel(y) == 0) return MRT_STATUS_OK;
    const void *d[MRT_DC_NROLES];
    for (int r = 0; r < MRT_DC_NROLES; r++) {
        const mrt_tensor *t = p.input[r] >= 0 ? mrt_input(ctx, p.input[r]) : NULL;
        d[r] = t ? t->data : NULL;
    }
    bool ran = false;
    mrt_status st = MRT_STATUS_OK;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(p.dtype, {
            st = deform_typed<elem_t>(ctx, p, (const elem_t *)d[MRT_DC_X], (const elem_t *)d[MRT_DC_W],
                                      (const elem_t *)d[MRT_DC_OFFSET], (const elem_t *)d[MRT_DC_MASK],
                                      (const elem_t *)d[MRT_DC_BIAS], (elem_t *)y->data);
            ran = true;
        })
        return false;
    }();
    if (!ran) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(p.dtype));
    return st;
}

mrt_status cu_deform_conv_workspace(mrt_op_ctx *ctx)
{
    mrt_deform_conv_params p;
    MRT_TRY(mrt_deform_conv_params_get(ctx, &p));
    const mrt_tensor *y = mrt_output(ctx, 0);
    if (!y || mrt_tensor_numel(y) == 0) return MRT_STATUS_OK; // as run: nothing to compute
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(p.dtype, {
            int64_t chunk;
            mrt_workspace_request(ctx, col_bytes(p, sizeof(typename mrt_cu_gemm::acc_of<elem_t>::type), &chunk));
        })
        return false;
    }();
    return MRT_STATUS_OK;
}

} // namespace

#define W MRT_KERNEL_WRITES_ALL
extern "C" const mrt_kernel mrt_cuda_kernels_deform_conv[] = {
    MRT_CU_ROW_SW("DeformConv", 19, cu_deform_conv, NULL, W, cu_deform_conv_workspace),
    {"mmcv", "MMCVModulatedDeformConv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {"mmdeploy", "MMCVModulatedDeformConv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {"mmcv", "MMCVDeformConv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {"mmdeploy", "MMCVDeformConv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {"custom", "deform_conv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {"torchvision", "deform_conv2d", 1, cu_deform_conv, NULL, NULL, NULL, W, cu_deform_conv_workspace},
    {},
};
#undef W
