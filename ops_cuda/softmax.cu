// ONNX Softmax, LogSoftmax, Hardmax 1/11 (input coerced to 2-D at `axis`) and 13 (one axis) on CUDA, float16,
// bfloat16, float and double, any rank. As the CPU kernel (ops_cpu/softmax.c): in double, the row's maximum
// subtracted first, a NaN anywhere in a row makes the row NaN (Hardmax: the first NaN is the maximum). Rows along the
// innermost axis take a block each, strided rows a thread each (ops_cuda/segments.cuh); the sum of the exps is a
// fixed tree, not the CPU's eight running sums, and the exps are double where the CPU's float32 path has float ones,
// so float32 results differ from the CPU's by about an ulp. In place (MRT_OPDEF_INPLACE) is safe: each element is
// read by the thread that writes it, after the row's statistics are complete.
#include "engine/opdef/reduce.h"
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/segments.cuh"

namespace {

using namespace std;

enum { SM_SOFTMAX, SM_LOG, SM_HARD };

template <typename T> __global__ void softmax_kernel(const T *x, T *y, seg_geom g, int kind, bool block)
{
    __shared__ double sh[SEG_MAX_THREADS];
    __shared__ int64_t shi[SEG_MAX_THREADS];
    SEG_FOR(g, block, o, lane, step)
    {
        const int64_t base = seg_kbase(g, o);
        // the maximum and its first index; a NaN wins and stays (the CPU's block_softmax rule)
        double mx = 0;
        int64_t mi = -1;
        for (int64_t e = lane; e < g.count; e += step) {
            double v = ld_f64(x, base + seg_roff(g, e));
            if (mi < 0 || (mx == mx && (v > mx || v != v))) {
                mx = v;
                mi = e;
            }
        }
        if (block) { // the earlier index wins a tie between threads, as in the sequential scan
            int t = threadIdx.x;
            sh[t] = mx;
            shi[t] = mi;
            __syncthreads();
            for (int s = blockDim.x / 2; s > 0; s >>= 1) {
                if (t < s && shi[t + s] >= 0) {
                    double a = sh[t], b = sh[t + s];
                    bool an = a != a, bn = b != b;
                    bool take = shi[t] < 0 || (an || bn ? bn && (!an || shi[t + s] < shi[t])
                                                        : b > a || (b == a && shi[t + s] < shi[t]));
                    if (take) {
                        sh[t] = b;
                        shi[t] = shi[t + s];
                    }
                }
                __syncthreads();
            }
            mx = sh[0];
            mi = shi[0];
            __syncthreads();
        }
        if (kind == SM_HARD) {
            for (int64_t e = lane; e < g.count; e += step) st_f64(y, base + seg_roff(g, e), e == mi ? 1.0 : 0.0);
            continue;
        }
        double s = 0;
        for (int64_t e = lane; e < g.count; e += step) s += exp(ld_f64(x, base + seg_roff(g, e)) - mx);
        s = seg_reduce<op_add>(s, block, sh);
        if (kind == SM_SOFTMAX) {
            double inv = 1.0 / s;
            for (int64_t e = lane; e < g.count; e += step) {
                int64_t i = base + seg_roff(g, e);
                st_f64(y, i, exp(ld_f64(x, i) - mx) * inv);
            }
        } else {
            // (x - max) is exact for nearby values; subtracting max + log(sum) at once would round at max's magnitude
            double ls = log(s);
            for (int64_t e = lane; e < g.count; e += step) {
                int64_t i = base + seg_roff(g, e);
                st_f64(y, i, (ld_f64(x, i) - mx) - ls);
            }
        }
    }
}

mrt_status cu_softmax(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    const char *op = ctx->node->op_type;
    int kind = strcmp(op, "Softmax") == 0 ? SM_SOFTMAX : strcmp(op, "LogSoftmax") == 0 ? SM_LOG : SM_HARD;
    int64_t shape[3];
    MRT_TRY(mrt_softmax_view(ctx, x, &shape[0], &shape[1], &shape[2]));
    if (shape[0] == 0 || shape[1] == 0 || shape[2] == 0) return MRT_STATUS_OK;
    const bool red[3] = {false, true, false};
    seg_geom g;
    seg_init(&g, 3, shape, red);
    seg_launch l = seg_plan(g);
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_FLOAT(x->dtype, {
            auto *k = softmax_kernel<elem_t>;
            MRT_LAUNCH(k, l.grid, l.threads, 0, mrt_cu_stream(ctx), (const elem_t *)x->data, (elem_t *)y->data, g,
                       kind, l.block);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "softmax kernel");
    return MRT_STATUS_OK;
}

bool cu_softmax_supports(const mrt_op_ctx *ctx, char *why, size_t len)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x || !seg_float_dtype(x->dtype))
        return snprintf(why, len, "dtype %s is not supported by the CUDA kernel", x ? mrt_dtype_name(x->dtype) : "?"), false;
    return true;
}

} // namespace

#define ROWS(op)                                                                                                  \
    MRT_CU_ROW_S(op, 1, cu_softmax, cu_softmax_supports, MRT_KERNEL_WRITES_ALL),                                  \
        MRT_CU_ROW_S(op, 11, cu_softmax, cu_softmax_supports, MRT_KERNEL_WRITES_ALL),                             \
        MRT_CU_ROW_S(op, 13, cu_softmax, cu_softmax_supports, MRT_KERNEL_WRITES_ALL)
extern "C" const mrt_kernel mrt_cuda_kernels_softmax[] = {
    ROWS("Softmax"),
    ROWS("LogSoftmax"),
    ROWS("Hardmax"),
    {0},
};
#undef ROWS
