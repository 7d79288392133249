/* Loading the CUDA module on demand (see cuda_module.h). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cuda_module.h"
#include "engine/registry.h"
#include "engine/status.h"

/* dlopen, noting the path and, when it fails, dlopen's reason in `tried` */
static void *try_open(const char *path, char *tried, size_t len)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    size_t used = strlen(tried);
    if (!h) snprintf(tried + used, len - used, "%s%s (%s)", used ? "; " : "", path, dlerror());
    return h;
}

mrt_status mrt_cuda_open(const mrt_cuda_api **out)
{
    static const mrt_cuda_api *api; /* loaded once per process; never unloaded (cudart dislikes it) */
    *out = NULL;
    if (!api) {
        char tried[4096] = "", path[PATH_MAX + 64];
        void *h = NULL;
        const char *env = getenv("MRT_CUDA_MODULE");
        if (env && env[0]) h = try_open(env, tried, sizeof tried);
        if (!h) {
            char exe[PATH_MAX];
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (n > 0) {
                exe[n] = '\0';
                char *slash = strrchr(exe, '/');
                if (slash) *slash = '\0';
                snprintf(path, sizeof path, "%s/%s", exe, MRT_CUDA_MODULE_NAME);
                h = try_open(path, tried, sizeof tried);
                if (!h) { /* test binaries live one level below the module */
                    snprintf(path, sizeof path, "%s/../%s", exe, MRT_CUDA_MODULE_NAME);
                    h = try_open(path, tried, sizeof tried);
                }
            }
        }
        if (!h) h = try_open(MRT_CUDA_MODULE_NAME, tried, sizeof tried);
        if (!h)
            return mrt_fail(MRT_STATUS_DEVICE_ERROR,
                            "CUDA module %s could not be loaded: minirt was built without CUDA, or the module or the "
                            "CUDA libraries are missing (tried: %s)",
                            MRT_CUDA_MODULE_NAME, tried);
        mrt_cuda_module_entry entry = (mrt_cuda_module_entry)dlsym(h, MRT_CUDA_MODULE_ENTRY);
        const mrt_cuda_api *a = entry ? entry() : NULL;
        if (!a || a->abi_version != MRT_CUDA_MODULE_ABI || a->struct_size < sizeof(mrt_cuda_api)) {
            /* left open: unloading cudart (which the module links) during the process crashes it */
            return mrt_fail(MRT_STATUS_DEVICE_ERROR, "CUDA module %s does not match this minirt (ABI %u, expected %u)",
                            MRT_CUDA_MODULE_NAME, a ? a->abi_version : 0u, (unsigned)MRT_CUDA_MODULE_ABI);
        }
        api = a;
        mrt_registry_set_cuda_tables(a->kernel_tables);
    }
    char err[512] = "";
    int count = 0;
    if (api->device_count(&count, err, sizeof err) != 0 || count == 0)
        return mrt_fail(MRT_STATUS_DEVICE_ERROR, "no CUDA device: %s", err[0] ? err : "the driver reports 0 devices");
    *out = api;
    return MRT_STATUS_OK;
}
