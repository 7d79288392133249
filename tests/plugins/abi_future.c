/* Test plugin: claims minirt plugin ABI 3 (newer than any engine so far): loading must be refused before
 * mrt_plugin_init runs. Written by hand instead of MRT_PLUGIN_DECLARE_ABI() to fake the newer version. */
#include "minirt/minirt_plugin.h"

MRT_PLUGIN_EXPORT const uint32_t mrt_plugin_abi_version = 3;

MRT_PLUGIN_EXPORT int mrt_plugin_init(const mrt_plugin_api *api, mrt_plugin_registrar *reg, char *errmsg,
                                      size_t errmsg_len)
{
    (void)api;
    (void)reg;
    snprintf(errmsg, errmsg_len, "mrt_plugin_init of a future-ABI plugin must never be called");
    return 1;
}
