// ONNX QuantizeLinear / DequantizeLinear 10/13/19/21/23/24/25 (per tensor, per axis, blocked; every dtype the CPU
// kernel takes: int8/uint8/int16/uint16/int32, int4/uint4/int2/uint2 packed, float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz,
// float4e2m1, float8e8m0 scales), DynamicQuantizeLinear 11, QLinearMatMul 10/21 and QLinearConv 10 on CUDA. Bit-exact
// with ops_cpu/quant.c: the same onnx.reference arithmetic (x / scale rounded to numpy's type, half to even, saturate;
// integer products accumulated exactly in int64) through device ports of engine/dtype.c's element loads and stores
// (the minifloat encoder is the same nearest-code search). Packed outputs (4- and 2-bit) take one thread per byte, so
// no two threads write one byte. QLinearMatMul and QLinearConv are direct kernels (one thread per output, the CPU's
// loop order); integer sums are exact, so any order gives the CPU's bits.
#include <cmath>

#include "engine/opdef/quant.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/cuda_common.cuh"
#include "ops_cuda/elem_any.cuh"

namespace {

// Each thread takes the elements of one output byte (several for the packed 4- and 2-bit types, else one).
#define Q_FOR_UNITS(e, n, per)                                                                                    \
    MRT_CU_FOR(u_, ((n) + (per)-1) / (per))                                                                       \
    for (int64_t e = u_ * (per), e_end_ = e + (per) < (n) ? e + (per) : (n); e < e_end_; e++)

// ---------------------------------------------------------------- QuantizeLinear / DequantizeLinear

struct qdq_params {
    mrt_quant_layout q;
    int xdt, sdt, zdt, ydt, div_dt, mul_dt;
    bool has_z, saturate, use_zp;
    int per;
};

__device__ __forceinline__ int64_t param_index(const mrt_quant_layout &q, int64_t e)
{
    int64_t i = e % q.inner, a = (e / q.inner) % q.len, o = e / (q.inner * q.len);
    return mrt_quant_param_index(&q, o, a, i);
}

__global__ void quantize_kernel(const void *x, const void *s, const void *z, void *y, int64_t n, qdq_params p)
{
    double lo = 0, hi = 0;
    bool integer = mrt_quant_int_range((mrt_dtype)p.ydt, &lo, &hi);
    bool f8 = !integer && p.ydt != MRT_DTYPE_FLOAT4E2M1;
    Q_FOR_UNITS(e, n, p.per)
    {
        int64_t pi = param_index(p.q, e);
        double v = q_round_to(p.div_dt, q_round_to(p.div_dt, q_ld(p.xdt, x, e)) / q_round_to(p.div_dt, q_ld(p.sdt, s, pi)));
        double zp = p.has_z ? q_ld(p.zdt, z, pi) : 0;
        if (integer) {
            q_sti(p.ydt, y, e, (int64_t)mrt_quantize_int(v, zp, lo, hi));
        } else if (f8) {
            q_st(p.ydt, y, e, mrt_quantize_float8(v, (mrt_dtype)p.ydt, p.saturate));
        } else { // float4e2m1: the zero point is added, then the saturating conversion
            q_st(p.ydt, y, e, v + zp);
        }
    }
}

__global__ void dequantize_kernel(const void *x, const void *s, const void *z, void *y, int64_t n, qdq_params p)
{
    MRT_CU_FOR(e, n)
    {
        int64_t pi = param_index(p.q, e);
        double dx = q_round_to(MRT_DTYPE_FLOAT, q_ld(p.xdt, x, e));
        if (p.use_zp) dx -= q_ld(p.zdt, z, pi);
        q_st(p.ydt, y, e, q_round_to(p.mul_dt, dx * q_ld(p.sdt, s, pi)));
    }
}

mrt_status cu_qdq(mrt_op_ctx *ctx)
{
    qdq_params p{};
    MRT_TRY(mrt_quant_layout_get(ctx, &p.q));
    const mrt_tensor *x = mrt_input(ctx, 0), *s = mrt_input(ctx, 1), *z = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    bool quant = strcmp(ctx->node->op_type, "QuantizeLinear") == 0;
    p.xdt = x->dtype, p.sdt = s->dtype, p.zdt = z ? z->dtype : 0, p.ydt = y->dtype;
    p.has_z = z != NULL;
    p.saturate = mrt_attr_int(ctx, "saturate", 1) != 0;
    int64_t precision = ctx->opset >= 23 ? mrt_attr_int(ctx, "precision", 0) : 0;
    p.div_dt = precision ? (int)precision : mrt_quant_promote(x->dtype, s->dtype);
    p.use_zp = z && !mrt_quant_is_minifloat(x->dtype); // float8/float4 zero points must be 0 and are ignored
    p.mul_dt = mrt_quant_promote(MRT_DTYPE_FLOAT, s->dtype);
    p.per = quant ? elems_per_byte(y->dtype) : 1;
    const void *zd = z ? z->data : NULL;
    if (quant)
        MRT_LAUNCH(quantize_kernel, mrt_cu_blocks((n + p.per - 1) / p.per), MRT_CU_THREADS, 0, mrt_cu_stream(ctx),
                   (const void *)x->data, (const void *)s->data, zd, y->data, n, p);
    else
        MRT_LAUNCH(dequantize_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const void *)x->data,
                   (const void *)s->data, zd, y->data, n, p);
    MRT_CU_CHECK_LAUNCH(ctx, quant ? "quantize kernel" : "dequantize kernel");
    return MRT_STATUS_OK;
}

// ---------------------------------------------------------------- DynamicQuantizeLinear (float32 -> uint8)

const int DQ_THREADS = 256;

// One block: the range (always including 0) by a fixed tree, then scale and zero point in float as the CPU.
// NaNs never win a comparison, so they drop out as in the CPU's scan, and max/min do not depend on the order.
__global__ void dyn_range_kernel(const float *x, int64_t n, float *scale_zp)
{
    __shared__ float smx[DQ_THREADS], smn[DQ_THREADS];
    int t = threadIdx.x;
    float mx = 0, mn = 0;
    for (int64_t i = t; i < n; i += DQ_THREADS) {
        mx = x[i] > mx ? x[i] : mx;
        mn = x[i] < mn ? x[i] : mn;
    }
    smx[t] = mx;
    smn[t] = mn;
    __syncthreads();
    for (int s = DQ_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            smx[t] = smx[t + s] > smx[t] ? smx[t + s] : smx[t];
            smn[t] = smn[t + s] < smn[t] ? smn[t + s] : smn[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        mx = smx[0], mn = smn[0];
        mrt_dyn_quant_params(mx, mn, &scale_zp[0], &scale_zp[1]);
    }
}

__global__ void dyn_quant_kernel(const float *x, int64_t n, const float *scale_zp, uint8_t *y, float *ys, uint8_t *yz)
{
    float scale = scale_zp[0], zp = scale_zp[1];
    MRT_CU_FOR(i, n)
    {
        y[i] = mrt_dyn_quantize(x[i], scale, zp);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (ys) *ys = scale;
        if (yz) *yz = (uint8_t)zp;
    }
}

mrt_status cu_dynamic_quantize(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0), *ys = mrt_output(ctx, 1), *yz = mrt_output(ctx, 2);
    int64_t n = mrt_tensor_numel(x);
    float *scale_zp = (float *)mrt_workspace(ctx, 2 * sizeof(float));
    if (!scale_zp) return MRT_STATUS_OUT_OF_MEMORY;
    cudaStream_t s = mrt_cu_stream(ctx);
    MRT_LAUNCH(dyn_range_kernel, 1, DQ_THREADS, 0, s, (const float *)x->data, n, scale_zp);
    MRT_LAUNCH(dyn_quant_kernel, mrt_cu_blocks(n), MRT_CU_THREADS, 0, s, (const float *)x->data, n,
               (const float *)scale_zp, (uint8_t *)y->data, ys ? (float *)ys->data : (float *)NULL,
               yz ? (uint8_t *)yz->data : (uint8_t *)NULL);
    MRT_CU_CHECK_LAUNCH(ctx, "dynamic quantize kernels");
    return MRT_STATUS_OK;
}

// ---------------------------------------------------------------- QLinearMatMul / QLinearConv

struct qmm_params {
    mrt_matmul_dims d;
    int adt, asdt, azdt, bdt, bsdt, bzdt, ysdt, yzdt, ydt, st;
    bool as_v, az_v, bs_v, bz_v;
};

struct qmm_ptrs {
    const void *a, *as, *az, *b, *bs, *bz, *ys, *yz;
    void *y;
};

__global__ void qlinear_matmul_kernel(qmm_ptrs t, qmm_params p, int64_t total)
{
    const mrt_matmul_dims &d = p.d;
    MRT_CU_FOR(e, total)
    {
        int64_t j = e % d.n, i = (e / d.n) % d.m, bi = e / (d.n * d.m);
        int64_t ia, ib;
        mrt_qlinear_batch_offsets(&d, bi, &ia, &ib);
        int64_t azp = q_ldi(p.azdt, t.az, p.az_v ? i : 0), bzp = q_ldi(p.bzdt, t.bz, p.bz_v ? j : 0);
        double ysv = q_ld(p.ysdt, t.ys, 0), yzp = (double)q_ldi(p.yzdt, t.yz, 0);
        double mult = q_round_to(p.st, q_round_to(p.st, q_ld(p.asdt, t.as, p.as_v ? i : 0) * q_ld(p.bsdt, t.bs, p.bs_v ? j : 0)) / ysv);
        int64_t acc = 0;
        for (int64_t k = 0; k < d.k; k++)
            acc += (q_ldi(p.adt, t.a, (ia * d.m + i) * d.k + k) - azp) * (q_ldi(p.bdt, t.b, (ib * d.k + k) * d.n + j) - bzp);
        q_sti(p.ydt, t.y, e, mrt_quant_requantize((double)acc, mult, yzp, (mrt_dtype)p.ydt));
    }
}

mrt_status cu_qlinear_matmul(mrt_op_ctx *ctx)
{
    qmm_ptrs t;
    qmm_params p{};
    const mrt_tensor *in[8];
    for (int i = 0; i < 8; i++) in[i] = mrt_input(ctx, i);
    mrt_tensor *y = mrt_output(ctx, 0);
    MRT_TRY(mrt_matmul_dims_get(ctx, in[0], in[3], &p.d));
    int64_t total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    t.a = in[0]->data, t.as = in[1]->data, t.az = in[2]->data, t.b = in[3]->data, t.bs = in[4]->data;
    t.bz = in[5]->data, t.ys = in[6]->data, t.yz = in[7]->data, t.y = y->data;
    p.adt = in[0]->dtype, p.asdt = in[1]->dtype, p.azdt = in[2]->dtype, p.bdt = in[3]->dtype, p.bsdt = in[4]->dtype;
    p.bzdt = in[5]->dtype, p.ysdt = in[6]->dtype, p.yzdt = in[7]->dtype, p.ydt = y->dtype;
    p.st = mrt_quant_promote(mrt_quant_promote(in[1]->dtype, in[4]->dtype), in[6]->dtype);
    p.as_v = mrt_tensor_numel(in[1]) > 1, p.az_v = mrt_tensor_numel(in[2]) > 1;
    p.bs_v = mrt_tensor_numel(in[4]) > 1, p.bz_v = mrt_tensor_numel(in[5]) > 1;
    MRT_LAUNCH(qlinear_matmul_kernel, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), t, p, total);
    MRT_CU_CHECK_LAUNCH(ctx, "qlinear matmul kernel");
    return MRT_STATUS_OK;
}

struct qconv_params {
    mrt_window win;
    int64_t n, c, m, cg, mg, in_sp, out_sp, k_sp;
    int xdt, xsdt, xzdt, wdt, wsdt, wzdt, ysdt, yzdt, bdt, ydt, st;
    bool ws_v, wz_v;
};

struct qconv_ptrs {
    const void *x, *xs, *xz, *w, *ws, *wz, *ys, *yz, *bias;
    void *y;
};

__global__ void qlinear_conv_kernel(qconv_ptrs t, qconv_params p, int64_t total)
{
    const mrt_window &win = p.win;
    MRT_CU_FOR(e, total)
    {
        int64_t o = e % p.out_sp, oc = (e / p.out_sp) % p.m, b = e / (p.out_sp * p.m), g = oc / p.mg;
        int64_t pos[MRT_MAX_RANK];
        int64_t rem = o;
        for (int i = win.nsp - 1; i >= 0; i--) {
            pos[i] = rem % win.out[i];
            rem /= win.out[i];
        }
        int64_t xzp = t.xz ? q_ldi(p.xzdt, t.xz, 0) : 0;
        int64_t wzp = t.wz ? q_ldi(p.wzdt, t.wz, p.wz_v ? oc : 0) : 0;
        double yzp = t.yz ? (double)q_ldi(p.yzdt, t.yz, 0) : 0;
        double mult = q_round_to(p.st, q_round_to(p.st, q_ld(p.xsdt, t.xs, 0) * q_ld(p.wsdt, t.ws, p.ws_v ? oc : 0)) /
                                           q_ld(p.ysdt, t.ys, 0));
        int64_t acc = t.bias ? q_ldi(p.bdt, t.bias, oc) : 0;
        for (int64_t ci = 0; ci < p.cg; ci++)
            for (int64_t k = 0; k < p.k_sp; k++) {
                int64_t xoff;
                if (!mrt_qconv_tap(&win, pos, k, &xoff)) continue;
                int64_t xv = q_ldi(p.xdt, t.x, (b * p.c + g * p.cg + ci) * p.in_sp + xoff) - xzp;
                int64_t wv = q_ldi(p.wdt, t.w, (oc * p.cg + ci) * p.k_sp + k) - wzp;
                acc += xv * wv;
            }
        q_sti(p.ydt, t.y, e, mrt_quant_requantize((double)acc, mult, yzp, (mrt_dtype)p.ydt));
    }
}

mrt_status cu_qlinear_conv(mrt_op_ctx *ctx)
{
    qconv_params p{};
    qconv_ptrs t{};
    int64_t group;
    MRT_TRY(mrt_qlinear_conv_window(ctx, &p.win, &group));
    const mrt_tensor *in[9];
    for (int i = 0; i < 9; i++) in[i] = i < ctx->n_inputs ? mrt_input(ctx, i) : NULL;
    mrt_tensor *y = mrt_output(ctx, 0);
    int64_t total = mrt_tensor_numel(y);
    if (total == 0) return MRT_STATUS_OK;
    p.n = in[0]->shape[0], p.c = in[0]->shape[1], p.m = in[3]->shape[0];
    p.cg = p.c / group, p.mg = p.m / group;
    p.in_sp = p.out_sp = p.k_sp = 1;
    for (int i = 0; i < p.win.nsp; i++) p.in_sp *= p.win.in[i], p.out_sp *= p.win.out[i], p.k_sp *= p.win.kernel[i];
    const void **ptr[9] = {&t.x, &t.xs, &t.xz, &t.w, &t.ws, &t.wz, &t.ys, &t.yz, &t.bias};
    int *dts[9] = {&p.xdt, &p.xsdt, &p.xzdt, &p.wdt, &p.wsdt, &p.wzdt, &p.ysdt, &p.yzdt, &p.bdt};
    for (int i = 0; i < 9; i++) {
        *ptr[i] = in[i] ? in[i]->data : NULL;
        *dts[i] = in[i] ? in[i]->dtype : 0;
    }
    t.y = y->data;
    p.ydt = y->dtype;
    p.ws_v = mrt_tensor_numel(in[4]) != 1;
    p.wz_v = in[5] && mrt_tensor_numel(in[5]) != 1;
    p.st = mrt_quant_promote(mrt_quant_promote(in[1]->dtype, in[4]->dtype), in[6]->dtype);
    MRT_LAUNCH(qlinear_conv_kernel, mrt_cu_blocks(total), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), t, p, total);
    MRT_CU_CHECK_LAUNCH(ctx, "qlinear conv kernel");
    return MRT_STATUS_OK;
}

bool cu_dynamic_quantize_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || x->dtype != MRT_DTYPE_FLOAT)
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

} // namespace

#define QDQ_ROWS(op)                                                                                              \
    MRT_CU_ROW(op, 10, cu_qdq, 0), MRT_CU_ROW(op, 13, cu_qdq, 0), MRT_CU_ROW(op, 19, cu_qdq, 0),                  \
        MRT_CU_ROW(op, 21, cu_qdq, 0), MRT_CU_ROW(op, 23, cu_qdq, 0), MRT_CU_ROW(op, 24, cu_qdq, 0),              \
        MRT_CU_ROW(op, 25, cu_qdq, 0)
extern "C" const mrt_kernel mrt_cuda_kernels_quant[] = {
    QDQ_ROWS("QuantizeLinear"),
    QDQ_ROWS("DequantizeLinear"),
    MRT_CU_ROW_S("DynamicQuantizeLinear", 11, cu_dynamic_quantize, cu_dynamic_quantize_supports, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW("QLinearMatMul", 10, cu_qlinear_matmul, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW("QLinearMatMul", 21, cu_qlinear_matmul, MRT_KERNEL_WRITES_ALL),
    MRT_CU_ROW("QLinearConv", 10, cu_qlinear_conv, MRT_KERNEL_WRITES_ALL),
    {0},
};
#undef QDQ_ROWS
