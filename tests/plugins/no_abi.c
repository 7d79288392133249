/* Test plugin: exports mrt_plugin_init but not mrt_plugin_abi_version: refused with a hint to use
 * MRT_PLUGIN_DECLARE_ABI(). */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    (void)api;
    (void)reg;
    snprintf(errmsg, errmsg_len, "must not be called");
    return 1;
}
