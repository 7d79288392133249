/* Test plugin: registers custom_domain::customOp2 version 1, which the example plugin also registers:
 * loading both must fail on the second, naming the first. */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static int nop(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)user;
    return api->fail(ctx, MRT_PLUGIN_NOT_IMPLEMENTED, "dup_customop2 must never run");
}

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "custom_domain";
    op.op_type = "customOp2";
    op.infer = nop;
    op.run_cpu = nop;
    return api->register_op(reg, &op);
}
