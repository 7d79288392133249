/* Example minirt op plugin: custom_domain::customOp2 (opset version 1), float32 and float64.
 *
 *     customOp2(x) = clamp(x, min=0) / (1 + exp(-x))     (elementwise, same shape and dtype as x)
 *
 * Built against minirt/minirt_plugin.h only (no other minirt header, no link to minirt); see
 * examples/plugins/README.md for the PyTorch export and the end-to-end run. */
#include <math.h>

#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

/* infer: one float/double input of any shape -> one output of the same dtype and shape. */
static int customop2_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user_data)
{
    (void)user_data;
    mrt_plugin_tensor x;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 'x' is missing");
    if (x.dtype != MRT_PLUGIN_DTYPE_FLOAT && x.dtype != MRT_PLUGIN_DTYPE_DOUBLE)
        return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "input 'x' has dtype %s; customOp2 supports float and double",
                         api->dtype_name(x.dtype));
    return api->output_set(ctx, 0, x.dtype, x.rank, x.shape);
}

/* Only x > 0 reaches exp(-x), which is then <= 1: no overflow; x <= 0 (and -0) gives 0, NaN stays NaN. */
static int customop2_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user_data)
{
    (void)user_data;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y))
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input or output missing at run time");
    if (x.dtype == MRT_PLUGIN_DTYPE_FLOAT) {
        const float *xs = (const float *)x.data;
        float *ys = (float *)y.data;
        for (int64_t i = 0; i < x.numel; i++) {
            float v = xs[i];
            ys[i] = v > 0.0f ? v / (1.0f + expf(-v)) : (v != v ? v : 0.0f);
        }
    } else if (x.dtype == MRT_PLUGIN_DTYPE_DOUBLE) {
        const double *xs = (const double *)x.data;
        double *ys = (double *)y.data;
        for (int64_t i = 0; i < x.numel; i++) {
            double v = xs[i];
            ys[i] = v > 0.0 ? v / (1.0 + exp(-v)) : (v != v ? v : 0.0);
        }
    } else {
        return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "dtype %s not supported", api->dtype_name(x.dtype));
    }
    return MRT_PLUGIN_OK;
}

#ifdef CUSTOMOP2_CUDA
/* The CUDA kernel (customop2_cuda.cu): tensors hold device pointers, the work goes on the node's stream. */
int customop2_cuda_launch(const void *x, void *y, int64_t n, int is_double, void *stream);

static int customop2_run_cuda(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user_data)
{
    (void)user_data;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y))
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input or output missing at run time");
    int err = customop2_cuda_launch(x.data, y.data, x.numel, x.dtype == MRT_PLUGIN_DTYPE_DOUBLE, api->cuda_stream(ctx));
    if (err) return api->fail(ctx, MRT_PLUGIN_DEVICE_ERROR, "the CUDA kernel failed to launch (CUDA error %d)", err);
    return MRT_PLUGIN_OK;
}
#endif

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "custom_domain";
    op.op_type = "customOp2";
    op.since_version = 1;
    op.min_inputs = op.max_inputs = 1;
    op.min_outputs = op.max_outputs = 1;
    op.infer = customop2_infer;
    op.run_cpu = customop2_run;
#ifdef CUSTOMOP2_CUDA
    op.run_cuda = customop2_run_cuda;
#endif
    return api->register_op(reg, &op);
}
