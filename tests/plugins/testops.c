/* Test plugin exercising the plugin API, domain "test_domain":
 *   Scale      y = alpha * x + offset (attrs: alpha float = 1, offset int = 0, mode string = "linear"),
 *              any numeric dtype through api->load_f64/store_f64
 *   Versioned  since 1: y = x + 1; since 3: y = x + 3 (float; the addend arrives as user_data)
 *   Positive   int64 indices of the elements > 0 of the flattened input: size known only at run time
 *              (infer_dynamic + output_alloc)
 *   Silent     run fails without calling api->fail (the engine must still report something useful)
 *   Forgetful  infer returns OK without declaring its output */
#include <string.h>

#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static int same_as_input(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 0 is missing");
    return api->output_set(ctx, 0, x.dtype, x.rank, x.shape);
}

static int scale_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    int t = api->attr_type(ctx, "alpha");
    if (t != MRT_PLUGIN_ATTR_NONE && t != MRT_PLUGIN_ATTR_FLOAT)
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "attribute 'alpha' must be a float (got type %d)", t);
    const char *mode = api->attr_string(ctx, "mode", "linear");
    if (strcmp(mode, "linear") != 0)
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "attribute 'mode' is '%s', only 'linear' is supported", mode);
    mrt_plugin_tensor x;
    if (api->input(ctx, 0, &x) && x.dtype == MRT_PLUGIN_DTYPE_STRING)
        return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "dtype %s not supported", api->dtype_name(x.dtype));
    return same_as_input(api, ctx, user);
}

static int scale_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    double alpha = api->attr_float(ctx, "alpha", 1.0f);
    double offset = (double)api->attr_int(ctx, "offset", 0);
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y))
        return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input or output missing");
    for (int64_t i = 0; i < x.numel; i++)
        api->store_f64(y.dtype, y.data, i, alpha * api->load_f64(x.dtype, x.data, i) + offset);
    return MRT_PLUGIN_OK;
}

static double addend_v1 = 1.0, addend_v3 = 3.0;

static int versioned_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    double add = *(const double *)user;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x) || !api->output(ctx, 0, &y) || x.dtype != MRT_PLUGIN_DTYPE_FLOAT)
        return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "Versioned takes one float input");
    for (int64_t i = 0; i < x.numel; i++) ((float *)y.data)[i] = ((const float *)x.data)[i] + (float)add;
    return MRT_PLUGIN_OK;
}

static int positive_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 0 is missing");
    return api->infer_dynamic(ctx);
}

static int positive_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    mrt_plugin_tensor x, y;
    if (!api->input(ctx, 0, &x)) return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "input 0 is missing");
    int64_t n = 0;
    for (int64_t i = 0; i < x.numel; i++) n += api->load_f64(x.dtype, x.data, i) > 0;
    int rc = api->output_alloc(ctx, 0, MRT_PLUGIN_DTYPE_INT64, 1, &n, &y);
    if (rc) return rc;
    int64_t k = 0;
    for (int64_t i = 0; i < x.numel; i++)
        if (api->load_f64(x.dtype, x.data, i) > 0) ((int64_t *)y.data)[k++] = i;
    return MRT_PLUGIN_OK;
}

static int silent_run(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)api;
    (void)ctx;
    (void)user;
    return MRT_PLUGIN_NOT_IMPLEMENTED;
}

static int forgetful_infer(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)api;
    (void)ctx;
    (void)user;
    return MRT_PLUGIN_OK;
}

static int add(const mrt_plugin_api *api, mrt_plugin_registrar *reg, const char *op_type, int since,
               mrt_plugin_infer_fn infer, mrt_plugin_run_fn run, void *user)
{
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "test_domain";
    op.op_type = op_type;
    op.since_version = since;
    op.infer = infer;
    op.run_cpu = run;
    op.user_data = user;
    return api->register_op(reg, &op);
}

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    int rc = add(api, reg, "Scale", 1, scale_infer, scale_run, NULL);
    if (!rc) rc = add(api, reg, "Versioned", 1, same_as_input, versioned_run, &addend_v1);
    if (!rc) rc = add(api, reg, "Versioned", 3, same_as_input, versioned_run, &addend_v3);
    if (!rc) rc = add(api, reg, "Positive", 1, positive_infer, positive_run, NULL);
    if (!rc) rc = add(api, reg, "Silent", 1, same_as_input, silent_run, NULL);
    if (!rc) rc = add(api, reg, "Forgetful", 1, forgetful_infer, silent_run, NULL);
    return rc;
}
