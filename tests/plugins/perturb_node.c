/* Test plugin for accuracy tooling: replaces the built-in Relu so that the single node named by
 * MRT_PERTURB_NODE computes relu(x) * (1 + MRT_PERTURB_EPS) (default 1e-2) in float32, while every other node,
 * and every float64 run, stays exact. A planted, localised fault that `minirt diff` must find. */
#include <stdlib.h>
#include <string.h>

#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static double g_eps = 1e-2;
static const char *g_node = "";

static int relu_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 'X' is missing");
    return api->output_set(ctx, 0, x.dtype, x.rank, x.shape);
}

static int relu_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y))
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input or output missing");
    double scale = x.dtype == MRT_PLUGIN_DTYPE_FLOAT && strcmp(api->node_name(ctx), g_node) == 0 ? 1.0 + g_eps : 1.0;
    for (int64_t i = 0; i < x.numel; i++) {
        double v = api->load_f64(x.dtype, x.data, i);
        api->store_f64(y.dtype, y.data, i, v > 0 ? v * scale : (v != v ? v : 0.0));
    }
    return MRT_PLUGIN_OK;
}

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    const char *eps = getenv("MRT_PERTURB_EPS"), *node = getenv("MRT_PERTURB_NODE");
    if (eps && *eps) g_eps = strtod(eps, NULL);
    if (node) g_node = node;
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "";
    op.op_type = "Relu";
    op.since_version = 6;
    op.infer = relu_infer;
    op.run_cpu = relu_run;
    return api->register_op(reg, &op);
}
