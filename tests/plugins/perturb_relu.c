/* Test plugin: replaces the built-in Relu (versions >= 6) with relu(x) * (1 + eps), eps from the
 * environment variable MRT_PERTURB_EPS (default 1e-3), for float, double and float16. Used to check that
 * replacing a built-in needs allow_replace (--plugin-replace) and, by accuracy tooling tests, as a known,
 * localised numerical error. */
#include <stdlib.h>

#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static double g_eps = 1e-3;

static int relu_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 'X' is missing");
    if (x.dtype != MRT_PLUGIN_DTYPE_FLOAT && x.dtype != MRT_PLUGIN_DTYPE_DOUBLE && x.dtype != MRT_PLUGIN_DTYPE_FLOAT16)
        return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "perturbed Relu: dtype %s not supported",
                         api->dtype_name(x.dtype));
    return api->output_set(ctx, 0, x.dtype, x.rank, x.shape);
}

static int relu_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    double scale = 1.0 + *(const double *)user;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y))
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input or output missing");
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
    const char *env = getenv("MRT_PERTURB_EPS");
    if (env && *env) {
        char *end;
        g_eps = strtod(env, &end);
        if (*end) {
            snprintf(errmsg, errmsg_len, "MRT_PERTURB_EPS='%s' is not a number", env);
            return 1;
        }
    }
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "";
    op.op_type = "Relu";
    op.since_version = 6;
    op.infer = relu_infer;
    op.run_cpu = relu_run;
    op.user_data = &g_eps;
    return api->register_op(reg, &op);
}
