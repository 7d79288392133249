/* Test plugin: registers twice_domain::Op version 1 twice and ignores register_op's result: loading must
 * still fail (the registrar remembers the first error). */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_DECLARE_ABI();

static int nop(const mrt_plugin_api *api, mrt_plugin_ctx *ctx, void *user)
{
    (void)api;
    (void)ctx;
    (void)user;
    return MRT_PLUGIN_OK;
}

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    MRT_PLUGIN_CHECK_ABI(api, errmsg, errmsg_len);
    mrt_plugin_op op = MRT_PLUGIN_OP_INIT;
    op.domain = "twice_domain";
    op.op_type = "Op";
    op.infer = nop;
    op.run_cpu = nop;
    (void)api->register_op(reg, &op);
    (void)api->register_op(reg, &op);
    return 0;
}
