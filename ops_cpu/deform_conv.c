/* CPU kernels: DeformConv 19/22 (2-D), mmcv::/mmdeploy:: MMCVModulatedDeformConv2d and MMCVDeformConv2d,
 * custom::/torchvision:: deform_conv2d; float and double (float16/bfloat16 computed in float): a sampled im2col
 * buffer per image and weight group (in column blocks), built on the session's threads, then a GEMM (float:
 * minirt's, threaded, with the bias fused; double: OpenBLAS). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opdef/deform_conv.h"
#include "engine/registry.h"
#include "ops_cpu/blas.h"
#include "ops_cpu/sgemm.h"
#include "ops_cpu/simd.h"

/* Budget of one column block (sample table + im2col rows), which bounds the kernel's scratch memory. */
#define DC_BLOCK_BYTES ((size_t)16 << 20)

#define DC_T float
#define DC_FN(name) name##_f32
#define DC_OWN_GEMM 1
#define DC_FLOOR floorf
#include "ops_cpu/deform_conv_typed.h"
#undef DC_T
#undef DC_FN
#undef DC_OWN_GEMM
#undef DC_FLOOR

#define DC_T double
#define DC_FN(name) name##_f64
#define DC_GEMM mrt_dgemm
#define DC_OWN_GEMM 0
#define DC_FLOOR floor
#include "ops_cpu/deform_conv_typed.h"
#undef DC_T
#undef DC_FN
#undef DC_GEMM
#undef DC_OWN_GEMM
#undef DC_FLOOR

/* float16/bfloat16 operand widened to a malloc'd float array (NULL tensor -> NULL). */
static bool widen(const mrt_tensor *t, float **out)
{
    *out = NULL;
    if (!t) return true;
    int64_t n = mrt_tensor_numel(t);
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    if (!f) return false;
    for (int64_t i = 0; i < n; i++) f[i] = (float)mrt_load_f64(t->dtype, t->data, i);
    *out = f;
    return true;
}

static mrt_status run_half(mrt_op_ctx *ctx, const mrt_deform_conv_params *p, const mrt_tensor *const *t,
                           mrt_tensor *y)
{
    float *f[MRT_DC_NROLES] = {0}, *fy = NULL;
    int64_t ny = mrt_tensor_numel(y);
    bool ok = true;
    for (int r = 0; r < MRT_DC_NROLES; r++) ok = ok && widen(t[r], &f[r]);
    if (ok) ok = (fy = malloc((size_t)(ny ? ny : 1) * sizeof *fy)) != NULL;
    mrt_status st = ok ? dc_run_f32(ctx, p, f[MRT_DC_X], f[MRT_DC_W], f[MRT_DC_OFFSET], f[MRT_DC_MASK],
                                    f[MRT_DC_BIAS], fy)
                       : mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory (float copies of the operands)");
    for (int64_t i = 0; st == MRT_STATUS_OK && i < ny; i++) mrt_store_f64(y->dtype, y->data, i, fy[i]);
    for (int r = 0; r < MRT_DC_NROLES; r++) free(f[r]);
    free(fy);
    return st;
}

/* The sample table, column block and padded planes dc_run fetches (none when it has nothing to compute). float16 and
   bfloat16 compute in float; their operand copies are still malloc'd per call. */
static mrt_status mrt_cpu_deform_conv_workspace(mrt_op_ctx *ctx)
{
    mrt_deform_conv_params p;
    MRT_TRY(mrt_deform_conv_params_get(ctx, &p));
    int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    if (p.n && p.oc && p.oh && p.ow && p.c)
        mrt_workspace_request(ctx, p.dtype == MRT_DTYPE_DOUBLE ? dc_workspace_bytes_f64(&p, threads)
                                                               : dc_workspace_bytes_f32(&p, threads));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_deform_conv(mrt_op_ctx *ctx)
{
    mrt_deform_conv_params p;
    MRT_TRY(mrt_deform_conv_params_get(ctx, &p));
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!y) return MRT_STATUS_OK;
    if (p.h * p.w >= INT32_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input planes of %lldx%lld elements exceed the 2^31 "
                           "indices the sampler uses", (long long)p.h, (long long)p.w);
    const mrt_tensor *t[MRT_DC_NROLES];
    const void *d[MRT_DC_NROLES];
    for (int r = 0; r < MRT_DC_NROLES; r++) {
        t[r] = p.input[r] >= 0 ? mrt_input(ctx, p.input[r]) : NULL;
        d[r] = t[r] ? t[r]->data : NULL;
    }
    switch (p.dtype) {
    case MRT_DTYPE_FLOAT:
        return dc_run_f32(ctx, &p, d[MRT_DC_X], d[MRT_DC_W], d[MRT_DC_OFFSET], d[MRT_DC_MASK], d[MRT_DC_BIAS],
                          y->data);
    case MRT_DTYPE_DOUBLE:
        return dc_run_f64(ctx, &p, d[MRT_DC_X], d[MRT_DC_W], d[MRT_DC_OFFSET], d[MRT_DC_MASK], d[MRT_DC_BIAS],
                          y->data);
    case MRT_DTYPE_FLOAT16:
    case MRT_DTYPE_BFLOAT16:
        return run_half(ctx, &p, t, y);
    default:
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s not supported", mrt_dtype_name(p.dtype));
    }
}

const mrt_kernel mrt_cpu_kernels_deform_conv[] = {
    {"", "DeformConv", 19, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"", "DeformConv", 22, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"mmcv", "MMCVModulatedDeformConv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"mmdeploy", "MMCVModulatedDeformConv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"mmcv", "MMCVDeformConv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"mmdeploy", "MMCVDeformConv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"custom", "deform_conv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {"torchvision", "deform_conv2d", 1, mrt_cpu_deform_conv, NULL, NULL, NULL, 0, mrt_cpu_deform_conv_workspace},
    {0},
};
