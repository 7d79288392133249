/* Operator table lookup: built-in static tables plus rows added by plugins. */
#include "engine/registry.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mrt_registry {
    mrt_opdef *plugin_opdefs;
    size_t n_plugin_opdefs;
    mrt_kernel *plugin_kernels[MRT_DEVICE_COUNT_];
    size_t n_plugin_kernels[MRT_DEVICE_COUNT_];
    int n_plugins;
    void **plugin_handles; /* dlopen handles, closed when the registry is freed (kernels point into them) */
    char **plugin_names;
};

mrt_status mrt_registry_new(mrt_registry **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? MRT_STATUS_OK : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (registry)");
}

static void registry_clear(mrt_registry *r)
{
    free(r->plugin_opdefs);
    for (int d = 0; d < MRT_DEVICE_COUNT_; d++) free(r->plugin_kernels[d]);
    for (int i = 0; i < r->n_plugins; i++) {
        if (r->plugin_handles[i]) dlclose(r->plugin_handles[i]);
        free(r->plugin_names[i]);
    }
    free(r->plugin_handles);
    free(r->plugin_names);
    memset(r, 0, sizeof *r);
}

void mrt_registry_free(mrt_registry *r)
{
    if (!r) return;
    registry_clear(r);
    free(r);
}

static mrt_registry default_registry;
mrt_registry *mrt_registry_default(void) { return &default_registry; }

mrt_status mrt_registry_add_plugin_handle(mrt_registry *r, void *handle, const char *name)
{
    void **nh = realloc(r->plugin_handles, (size_t)(r->n_plugins + 1) * sizeof *nh);
    if (nh) r->plugin_handles = nh;
    char **nn = nh ? realloc(r->plugin_names, (size_t)(r->n_plugins + 1) * sizeof *nn) : NULL;
    if (nn) r->plugin_names = nn;
    char *copy = nn ? strdup(name ? name : "?") : NULL;
    if (!copy) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin list)");
    r->plugin_handles[r->n_plugins] = handle;
    r->plugin_names[r->n_plugins] = copy;
    r->n_plugins++;
    return MRT_STATUS_OK;
}

const char *mrt_registry_plugin_list(const mrt_registry *r, char *buf, size_t len)
{
    size_t pos = 0;
    if (!len) return buf;
    buf[0] = '\0';
    for (int i = 0; r && i < r->n_plugins && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, i ? ", %s" : "%s", r->plugin_names[i]);
    if (!buf[0]) snprintf(buf, len, "none");
    return buf;
}

static bool same_op(const char *dom, const char *op, const char *row_dom, const char *row_op)
{
    return strcmp(op, row_op) == 0 && strcmp(mrt_domain_normalize(dom), mrt_domain_normalize(row_dom)) == 0;
}

/* Best row: highest since_version <= opset; plugin rows win over built-in rows of the same version. */
#define MRT_BEST_ROW(best, row)                                                                     \
    do {                                                                                            \
        if (same_op(domain, op_type, (row)->domain, (row)->op_type) && (row)->since_version <= opset && \
            (!(best) || (row)->since_version >= (best)->since_version))                             \
            (best) = (row);                                                                         \
    } while (0)

const mrt_opdef *mrt_registry_find_opdef(const mrt_registry *r, const char *domain, const char *op_type,
                                         int64_t opset)
{
    const mrt_opdef *best = NULL;
    for (const mrt_opdef_table *t = mrt_builtin_opdefs; t->rows; t++)
        for (const mrt_opdef *row = t->rows; row->op_type; row++) MRT_BEST_ROW(best, row);
    if (r)
        for (size_t i = 0; i < r->n_plugin_opdefs; i++) MRT_BEST_ROW(best, &r->plugin_opdefs[i]);
    return best;
}

/* The CUDA module's tables, set once when it is loaded (engine/cuda_loader.c); NULL before. */
static const mrt_kernel_table *_Atomic cuda_tables;

void mrt_registry_set_cuda_tables(const mrt_kernel_table *tables) { cuda_tables = tables; }

/* The built-in tables of a device: the CPU's are linked in, the CUDA module's arrive with it. */
static const mrt_kernel_table *builtin_tables(mrt_device_kind dev)
{
    static const mrt_kernel_table none[] = {{NULL}};
    const mrt_kernel_table *t = dev == MRT_DEVICE_CPU ? mrt_cpu_kernel_tables : dev == MRT_DEVICE_CUDA ? cuda_tables : NULL;
    return t ? t : none;
}

const mrt_kernel *mrt_registry_find_kernel(const mrt_registry *r, mrt_device_kind dev, const char *domain,
                                           const char *op_type, int64_t opset)
{
    const mrt_kernel *best = NULL;
    for (const mrt_kernel_table *t = builtin_tables(dev); t->rows; t++)
        for (const mrt_kernel *row = t->rows; row->op_type; row++) MRT_BEST_ROW(best, row);
    if (r)
        for (size_t i = 0; i < r->n_plugin_kernels[dev]; i++) MRT_BEST_ROW(best, &r->plugin_kernels[dev][i]);
    return best;
}

bool mrt_registry_opdef_at(const mrt_registry *r, size_t i, const mrt_opdef **out)
{
    for (const mrt_opdef_table *t = mrt_builtin_opdefs; t->rows; t++)
        for (const mrt_opdef *row = t->rows; row->op_type; row++)
            if (i-- == 0) {
                *out = row;
                return true;
            }
    if (r && i < r->n_plugin_opdefs) {
        *out = &r->plugin_opdefs[i];
        return true;
    }
    return false;
}

int mrt_registry_versions(const mrt_registry *r, const char *domain, const char *op_type, int *versions, int max)
{
    int n = 0;
    const mrt_opdef *row;
    for (size_t i = 0; mrt_registry_opdef_at(r, i, &row); i++) {
        if (!same_op(domain, op_type, row->domain, row->op_type)) continue;
        int v = row->since_version, pos = n;
        bool dup = false;
        for (int k = 0; k < n; k++) dup |= versions[k] == v;
        if (dup || n == max) continue;
        while (pos > 0 && versions[pos - 1] > v) {
            versions[pos] = versions[pos - 1];
            pos--;
        }
        versions[pos] = v;
        n++;
    }
    return n;
}

bool mrt_registry_has_kernel_row(const mrt_registry *r, mrt_device_kind dev, const char *domain,
                                 const char *op_type, int since_version)
{
    for (const mrt_kernel_table *t = builtin_tables(dev); t->rows; t++)
        for (const mrt_kernel *row = t->rows; row->op_type; row++)
            if (same_op(domain, op_type, row->domain, row->op_type) && row->since_version == since_version)
                return true;
    if (r)
        for (size_t i = 0; i < r->n_plugin_kernels[dev]; i++) {
            const mrt_kernel *row = &r->plugin_kernels[dev][i];
            if (same_op(domain, op_type, row->domain, row->op_type) && row->since_version == since_version)
                return true;
        }
    return false;
}


mrt_status mrt_registry_add_opdef(mrt_registry *r, const mrt_opdef *def, bool replace)
{
    if (!def || !def->op_type || !def->infer || def->since_version < 1)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "plugin opdef needs an op_type, an infer function and since_version >= 1");
    const char *dom = mrt_domain_normalize(def->domain);
    for (size_t i = 0; i < r->n_plugin_opdefs; i++) {
        const mrt_opdef *row = &r->plugin_opdefs[i];
        if (same_op(dom, def->op_type, row->domain, row->op_type) && row->since_version == def->since_version)
            return mrt_fail(MRT_STATUS_INVALID_ARG, "op %s%s%s version %d is already registered by a plugin",
                            dom, *dom ? "::" : "", def->op_type, def->since_version);
    }
    if (!replace && mrt_registry_find_opdef(NULL, dom, def->op_type, INT64_MAX) != NULL)
        return mrt_fail(MRT_STATUS_INVALID_ARG,
                        "op %s%s%s is built into minirt; a plugin may not replace it without the explicit "
                        "replace flag (--plugin-replace)",
                        dom, *dom ? "::" : "", def->op_type);
    mrt_opdef *n = realloc(r->plugin_opdefs, (r->n_plugin_opdefs + 1) * sizeof *n);
    if (!n) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin opdefs)");
    r->plugin_opdefs = n;
    n[r->n_plugin_opdefs++] = *def;
    return MRT_STATUS_OK;
}

mrt_status mrt_registry_add_kernel(mrt_registry *r, mrt_device_kind dev, const mrt_kernel *k, bool replace)
{
    if ((unsigned)dev >= MRT_DEVICE_COUNT_ || !k || !k->op_type || !k->run)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "plugin kernel needs a device, an op_type and a run function");
    if (!replace && dev == MRT_DEVICE_CPU && mrt_registry_find_kernel(NULL, dev, k->domain, k->op_type, INT64_MAX))
        return mrt_fail(MRT_STATUS_INVALID_ARG,
                        "op %s%s%s has a built-in kernel; a plugin may not replace it without the replace flag",
                        mrt_domain_normalize(k->domain), *mrt_domain_normalize(k->domain) ? "::" : "", k->op_type);
    mrt_kernel *n = realloc(r->plugin_kernels[dev], (r->n_plugin_kernels[dev] + 1) * sizeof *n);
    if (!n) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin kernels)");
    r->plugin_kernels[dev] = n;
    n[r->n_plugin_kernels[dev]++] = *k;
    return MRT_STATUS_OK;
}

static void insert_version(int *versions, int *n, int max, int v)
{
    int pos = *n;
    for (int k = 0; k < *n; k++)
        if (versions[k] == v) return;
    if (*n == max) return;
    while (pos > 0 && versions[pos - 1] > v) {
        versions[pos] = versions[pos - 1];
        pos--;
    }
    versions[pos] = v;
    (*n)++;
}

int mrt_registry_kernel_versions(const mrt_registry *r, mrt_device_kind dev, const char *domain, const char *op_type,
                                 int *versions, int max)
{
    int n = 0;
    for (const mrt_kernel_table *t = builtin_tables(dev); t->rows; t++)
        for (const mrt_kernel *row = t->rows; row->op_type; row++)
            if (same_op(domain, op_type, row->domain, row->op_type)) insert_version(versions, &n, max, row->since_version);
    for (size_t i = 0; r && i < r->n_plugin_kernels[dev]; i++) {
        const mrt_kernel *row = &r->plugin_kernels[dev][i];
        if (same_op(domain, op_type, row->domain, row->op_type)) insert_version(versions, &n, max, row->since_version);
    }
    return n;
}
