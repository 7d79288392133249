/* Test plugin: mrt_plugin_init registers an op, then fails: nothing may stay registered and the
 * plugin's message must reach the caller. */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static int never(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    return api->fail(ctx, MRT_PLUGIN_INVALID_MODEL, "bad_init's op must never run");
}

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "bad_domain";
    op.op_type = "Half";
    op.infer = never;
    op.run_cpu = never;
    if (api->register_op(reg, &op)) return 1;
    snprintf(errmsg, errmsg_len, "the frobnicator is not configured (set FROB=1)");
    return 7;
}
