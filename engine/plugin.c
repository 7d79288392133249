/* Op plugins: dlopen a library built against minirt/minirt_plugin.h, check its ABI, let it register ops,
 * and adapt its callbacks to the engine's operator contract (engine/op.h).
 *
 * The registry's rows hold plain mrt_infer_fn/mrt_run_fn pointers, so every plugin row points at the
 * trampolines below; they look the node's (domain, op_type, opset) up in this file's table of plugin ops
 * (highest since_version <= opset, the registry's own rule) and call the plugin with an opaque context
 * that wraps mrt_op_ctx. Load plugins before creating sessions: the registry is not locked while running. */
#include "minirt/minirt_plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/dtype.h"
#include "engine/op.h"
#include "engine/registry.h"
#include "engine/status.h"
#include "minirt/minirt.h"

/* The ABI promises that plugin status codes, dtype and attribute numbers are the engine's values. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(MRT_PLUGIN_OK, MRT_STATUS_OK) && SAME(MRT_PLUGIN_INVALID_ARG, MRT_STATUS_INVALID_ARG) &&
                   SAME(MRT_PLUGIN_INVALID_MODEL, MRT_STATUS_INVALID_MODEL) &&
                   SAME(MRT_PLUGIN_NOT_IMPLEMENTED, MRT_STATUS_NOT_IMPLEMENTED) &&
                   SAME(MRT_PLUGIN_OUT_OF_MEMORY, MRT_STATUS_OUT_OF_MEMORY) &&
                   SAME(MRT_PLUGIN_DEVICE_ERROR, MRT_STATUS_DEVICE_ERROR) &&
                   SAME(MRT_PLUGIN_IO_ERROR, MRT_STATUS_IO_ERROR),
               "plugin status codes must equal mrt_status");
_Static_assert(SAME(MRT_PLUGIN_DTYPE_FLOAT, MRT_DTYPE_FLOAT) && SAME(MRT_PLUGIN_DTYPE_DOUBLE, MRT_DTYPE_DOUBLE) &&
                   SAME(MRT_PLUGIN_DTYPE_FLOAT16, MRT_DTYPE_FLOAT16) &&
                   SAME(MRT_PLUGIN_DTYPE_BFLOAT16, MRT_DTYPE_BFLOAT16) &&
                   SAME(MRT_PLUGIN_DTYPE_INT64, MRT_DTYPE_INT64) && SAME(MRT_PLUGIN_DTYPE_BOOL, MRT_DTYPE_BOOL),
               "plugin dtype numbers must equal mrt_dtype");
_Static_assert(SAME(MRT_PLUGIN_ATTR_INTS, MRT_ATTR_INTS) && SAME(MRT_PLUGIN_ATTR_STRINGS, MRT_ATTR_STRINGS),
               "plugin attribute types must equal mrt_attr_type");
#undef SAME

/* Size of mrt_plugin_op as ABI 1 defined it: a plugin must provide at least these fields. */
#define OP_ABI1_SIZE (offsetof(mrt_plugin_op, flags) + sizeof(uint32_t))

/* ------------------------------------------------------------------ the table of plugin ops */

typedef struct plugin_entry {
    char *domain; /* normalised: "" for ai.onnx */
    char *op_type;
    int since_version;
    int min_inputs, max_inputs, min_outputs, max_outputs;
    mrt_plugin_infer_fn infer;
    mrt_plugin_run_fn run_cpu, run_cuda;
    void *user;
    unsigned flags;
    const char *plugin;   /* library name for messages (owned by the table, never freed) */
    int *row_versions;    /* since_versions of the registry rows made for this entry */
    int n_rows;
} plugin_entry;

/* Entries are allocated one by one and never freed or moved: trampolines keep pointers to them. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_entry **g_entries;
static size_t g_n_entries;
static void **g_handles; /* libraries loaded so far (to make loading the same file twice a no-op) */
static size_t g_n_handles;

static bool entry_matches(const plugin_entry *e, const char *domain, const char *op_type)
{
    return strcmp(e->op_type, op_type) == 0 && strcmp(e->domain, mrt_domain_normalize(domain)) == 0;
}

typedef enum { FIND_INFER, FIND_CPU, FIND_CUDA } find_kind;

/* The entry serving a node: highest since_version <= opset that has the needed callback. */
static const plugin_entry *find_entry(const char *domain, const char *op_type, int64_t opset, find_kind kind)
{
    const plugin_entry *best = NULL;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n_entries; i++) {
        const plugin_entry *e = g_entries[i];
        if (!entry_matches(e, domain, op_type) || e->since_version > opset) continue;
        if ((kind == FIND_CPU && !e->run_cpu) || (kind == FIND_CUDA && !e->run_cuda)) continue;
        if (!best || e->since_version > best->since_version) best = e;
    }
    pthread_mutex_unlock(&g_lock);
    return best;
}

/* ------------------------------------------------------------------ the context handed to plugins */

typedef enum { PHASE_INFER, PHASE_RUN } phase;

struct mrt_plugin_ctx {
    mrt_op_ctx *op;
    const plugin_entry *entry;
    phase phase;
    bool failed; /* api->fail was called: the message is already recorded */
};

static const char *dom_prefix(const mrt_node *n) { return n->domain[0] ? "::" : ""; }

static int ctx_fail(const mrt_plugin_ctx *c, mrt_status st, const char *fmt, ...) MRT_PRINTF(3, 4);

static int ctx_failv(const mrt_plugin_ctx *c, int status, const char *fmt, va_list ap)
{
    char msg[3072];
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    mrt_status st = status > MRT_STATUS_OK && status <= MRT_STATUS_IO_ERROR ? (mrt_status)status
                                                                             : MRT_STATUS_INVALID_MODEL;
    const mrt_node *n = c->op->node;
    ((mrt_plugin_ctx *)c)->failed = true;
    return (int)mrt_fail(st, "node '%s' (%s%s%s, plugin %s): %s", n->name, n->domain, dom_prefix(n), n->op_type,
                         c->entry->plugin, msg);
}

static int ctx_fail(const mrt_plugin_ctx *c, mrt_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = ctx_failv(c, (int)st, fmt, ap);
    va_end(ap);
    return r;
}

static void fill_view(const mrt_tensor *t, mrt_plugin_tensor *out)
{
    out->dtype = (int32_t)t->dtype;
    out->rank = t->rank;
    out->shape = t->shape;
    out->numel = mrt_tensor_numel(t);
    out->data = t->data;
}

static void clear_view(mrt_plugin_tensor *out)
{
    if (out) memset(out, 0, sizeof *out);
}

static int api_fail(const mrt_plugin_ctx *c, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = ctx_failv(c, status, fmt, ap);
    va_end(ap);
    return r;
}

static const char *api_node_name(const mrt_plugin_ctx *c) { return c->op->node->name; }
static const char *api_node_domain(const mrt_plugin_ctx *c) { return c->op->node->domain; }
static const char *api_node_op_type(const mrt_plugin_ctx *c) { return c->op->node->op_type; }
static int64_t api_opset(const mrt_plugin_ctx *c) { return c->op->opset; }
static int api_n_threads(const mrt_plugin_ctx *c) { return c->op->n_threads; }
static int api_n_inputs(const mrt_plugin_ctx *c) { return c->op->n_inputs; }
static int api_n_outputs(const mrt_plugin_ctx *c) { return c->op->n_outputs; }

static int api_input(const mrt_plugin_ctx *c, int i, mrt_plugin_tensor *out)
{
    const mrt_tensor *t = mrt_input(c->op, i);
    if (!t || !out) {
        clear_view(out);
        return 0;
    }
    fill_view(t, out);
    return 1;
}

static int api_output(mrt_plugin_ctx *c, int i, mrt_plugin_tensor *out)
{
    if (i < 0 || i >= c->op->n_outputs || !c->op->outputs[i] || c->op->outputs[i]->kind != MRT_VALUE_TENSOR ||
        !out) {
        clear_view(out);
        return 0;
    }
    fill_view(&c->op->outputs[i]->tensor, out);
    return 1;
}

static int api_output_set(mrt_plugin_ctx *c, int i, int32_t dtype, int rank, const int64_t *shape)
{
    if (c->phase != PHASE_INFER)
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_set may only be called from infer (output %d)", i);
    if (!mrt_dtype_is_known(dtype) || dtype == MRT_DTYPE_UNDEFINED)
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_set: output %d: unknown dtype %d", i, (int)dtype);
    if (rank < 0 || rank > MRT_MAX_RANK || (rank > 0 && !shape))
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_set: output %d: rank %d (allowed 0 to %d, with a shape)",
                        i, rank, MRT_MAX_RANK);
    mrt_status st = mrt_output_set(c->op, i, (mrt_dtype)dtype, rank, shape);
    if (st) ((mrt_plugin_ctx *)c)->failed = true;
    return (int)st;
}

static int api_infer_dynamic(mrt_plugin_ctx *c)
{
    if (c->phase != PHASE_INFER)
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "infer_dynamic may only be called from infer");
    return (int)mrt_infer_dynamic(c->op);
}

static int api_output_alloc(mrt_plugin_ctx *c, int i, int32_t dtype, int rank, const int64_t *shape,
                            mrt_plugin_tensor *out)
{
    clear_view(out);
    if (c->phase != PHASE_RUN)
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_alloc may only be called from run (output %d)", i);
    if (!mrt_dtype_is_known(dtype) || dtype == MRT_DTYPE_UNDEFINED)
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_alloc: output %d: unknown dtype %d", i, (int)dtype);
    if (rank < 0 || rank > MRT_MAX_RANK || (rank > 0 && !shape))
        return ctx_fail(c, MRT_STATUS_INVALID_ARG, "output_alloc: output %d: rank %d (allowed 0 to %d, with a shape)",
                        i, rank, MRT_MAX_RANK);
    mrt_tensor *t = NULL;
    mrt_status st = mrt_output_alloc(c->op, i, (mrt_dtype)dtype, rank, shape, &t);
    if (st) {
        c->failed = true;
        return (int)st;
    }
    if (t && out) fill_view(t, out);
    return MRT_PLUGIN_OK;
}

static int api_attr_type(const mrt_plugin_ctx *c, const char *name)
{
    const mrt_attr *a = name ? mrt_node_attr(c->op->node, name) : NULL;
    return a ? (int)a->type : MRT_PLUGIN_ATTR_NONE;
}

static int64_t api_attr_int(const mrt_plugin_ctx *c, const char *name, int64_t def)
{
    return name ? mrt_attr_int(c->op, name, def) : def;
}

static float api_attr_float(const mrt_plugin_ctx *c, const char *name, float def)
{
    return name ? mrt_attr_float(c->op, name, def) : def;
}

static const char *api_attr_string(const mrt_plugin_ctx *c, const char *name, const char *def)
{
    return name ? mrt_attr_string(c->op, name, def) : def;
}

static int api_attr_ints(const mrt_plugin_ctx *c, const char *name, const int64_t **v, int64_t *n)
{
    const int64_t *vv = NULL;
    int64_t nn = 0;
    bool ok = name && mrt_attr_ints(c->op, name, &vv, &nn);
    if (v) *v = vv;
    if (n) *n = nn;
    return ok;
}

static int api_attr_floats(const mrt_plugin_ctx *c, const char *name, const float **v, int64_t *n)
{
    const float *vv = NULL;
    int64_t nn = 0;
    bool ok = name && mrt_attr_floats(c->op, name, &vv, &nn);
    if (v) *v = vv;
    if (n) *n = nn;
    return ok;
}

static bool numeric_dtype(int32_t dt)
{
    return mrt_dtype_is_known(dt) && dt != MRT_DTYPE_UNDEFINED && dt != MRT_DTYPE_STRING &&
           dt != MRT_DTYPE_COMPLEX64 && dt != MRT_DTYPE_COMPLEX128;
}

static const char *api_dtype_name(int32_t dt) { return mrt_dtype_name((mrt_dtype)dt); }
static int api_dtype_bits(int32_t dt) { return mrt_dtype_is_known(dt) ? mrt_dtype_bits((mrt_dtype)dt) : 0; }
static float api_f16_to_f32(uint16_t h) { return mrt_f16_to_f32(h); }
static uint16_t api_f32_to_f16(float f) { return mrt_f32_to_f16(f); }
static float api_bf16_to_f32(uint16_t b) { return mrt_bf16_to_f32(b); }
static uint16_t api_f32_to_bf16(float f) { return mrt_f32_to_bf16(f); }

static double api_load_f64(int32_t dt, const void *data, int64_t i)
{
    return numeric_dtype(dt) && data ? mrt_load_f64((mrt_dtype)dt, data, i) : 0.0;
}

static void api_store_f64(int32_t dt, void *data, int64_t i, double v)
{
    if (numeric_dtype(dt) && data) mrt_store_f64((mrt_dtype)dt, data, i, v);
}

static int api_register_op(mrt_plugin_registrar *reg, const mrt_plugin_op *op);

static void *api_cuda_stream(const mrt_plugin_ctx *c) { return c->op->device == MRT_DEVICE_CUDA ? c->op->stream : NULL; }

static const mrt_plugin_api g_api = {
    .abi_version = MRT_PLUGIN_ABI_VERSION,
    .struct_size = (uint32_t)sizeof(mrt_plugin_api),
    .minirt_version = MRT_VERSION_STRING,
    .register_op = api_register_op,
    .node_name = api_node_name,
    .node_domain = api_node_domain,
    .node_op_type = api_node_op_type,
    .opset = api_opset,
    .n_threads = api_n_threads,
    .n_inputs = api_n_inputs,
    .n_outputs = api_n_outputs,
    .input = api_input,
    .output = api_output,
    .output_set = api_output_set,
    .infer_dynamic = api_infer_dynamic,
    .output_alloc = api_output_alloc,
    .attr_type = api_attr_type,
    .attr_int = api_attr_int,
    .attr_float = api_attr_float,
    .attr_string = api_attr_string,
    .attr_ints = api_attr_ints,
    .attr_floats = api_attr_floats,
    .fail = api_fail,
    .dtype_name = api_dtype_name,
    .dtype_bits = api_dtype_bits,
    .f16_to_f32 = api_f16_to_f32,
    .f32_to_f16 = api_f32_to_f16,
    .bf16_to_f32 = api_bf16_to_f32,
    .f32_to_bf16 = api_f32_to_bf16,
    .load_f64 = api_load_f64,
    .store_f64 = api_store_f64,
    .cuda_stream = api_cuda_stream,
};

/* ------------------------------------------------------------------ trampolines */

/* Turn a plugin's return code into a status with a message. */
static mrt_status finish(const mrt_plugin_ctx *c, int rc, const char *what)
{
    if (rc == MRT_PLUGIN_OK) return MRT_STATUS_OK;
    mrt_status st = rc > MRT_STATUS_OK && rc <= MRT_STATUS_IO_ERROR ? (mrt_status)rc : MRT_STATUS_INVALID_MODEL;
    if (!c->failed)
        ctx_fail(c, st, "%s returned %d without a message (plugins report errors with api->fail)", what, rc);
    return st;
}

static mrt_status no_entry(mrt_op_ctx *op, const char *what)
{
    return mrt_op_fail(op, MRT_STATUS_NOT_IMPLEMENTED, "no plugin %s callback is registered for opset %lld", what,
                       (long long)op->opset);
}

static mrt_status tramp_infer(mrt_op_ctx *op)
{
    const plugin_entry *e = find_entry(op->node->domain, op->node->op_type, op->opset, FIND_INFER);
    if (!e) return no_entry(op, "infer");
    mrt_plugin_ctx c = {op, e, PHASE_INFER, false};
    MRT_TRY(finish(&c, e->infer(&g_api, &c, e->user), "infer"));
    if (op->dynamic) return MRT_STATUS_OK;
    for (int i = 0; i < op->n_outputs; i++)
        if (op->outputs[i] && op->outputs[i]->kind != MRT_VALUE_TENSOR)
            return ctx_fail(&c, MRT_STATUS_INVALID_MODEL,
                            "infer did not declare output %d (call api->output_set or api->infer_dynamic)", i);
    return MRT_STATUS_OK;
}

static mrt_status tramp_run(mrt_op_ctx *op, find_kind kind)
{
    const plugin_entry *e = find_entry(op->node->domain, op->node->op_type, op->opset, kind);
    if (!e) return no_entry(op, kind == FIND_CPU ? "run_cpu" : "run_cuda");
    mrt_plugin_ctx c = {op, e, PHASE_RUN, false};
    mrt_plugin_run_fn fn = kind == FIND_CPU ? e->run_cpu : e->run_cuda;
    return finish(&c, fn(&g_api, &c, e->user), kind == FIND_CPU ? "run_cpu" : "run_cuda");
}

static mrt_status tramp_run_cpu(mrt_op_ctx *op) { return tramp_run(op, FIND_CPU); }
static mrt_status tramp_run_cuda(mrt_op_ctx *op) { return tramp_run(op, FIND_CUDA); }

/* ------------------------------------------------------------------ registration */

struct mrt_plugin_registrar {
    const char *plugin; /* library name for messages */
    bool allow_replace;
    plugin_entry *pending;
    size_t n_pending, cap_pending;
    mrt_status error;   /* first registration error (the plugin may ignore register_op's result) */
    char message[1024];
};

static int reg_fail(mrt_plugin_registrar *reg, mrt_status st, const char *fmt, ...) MRT_PRINTF(3, 4);

static int reg_fail(mrt_plugin_registrar *reg, mrt_status st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!reg->error) {
        reg->error = st;
        snprintf(reg->message, sizeof reg->message, "%s", msg);
    }
    return (int)mrt_fail(st, "plugin %s: %s", reg->plugin, msg);
}

/* Versions of built-in opdef or CPU kernel rows for an op (ascending, deduplicated). */
static int builtin_versions(const char *domain, const char *op_type, int *out, int max)
{
    int n = mrt_registry_versions(NULL, domain, op_type, out, max);
    for (const mrt_kernel_table *t = mrt_cpu_kernel_tables; t->rows; t++)
        for (const mrt_kernel *k = t->rows; k->op_type; k++) {
            if (strcmp(k->op_type, op_type) != 0 ||
                strcmp(mrt_domain_normalize(k->domain), mrt_domain_normalize(domain)) != 0)
                continue;
            bool dup = false;
            for (int i = 0; i < n; i++) dup |= out[i] == k->since_version;
            if (dup || n == max) continue;
            int pos = n++;
            while (pos > 0 && out[pos - 1] > k->since_version) {
                out[pos] = out[pos - 1];
                pos--;
            }
            out[pos] = k->since_version;
        }
    return n;
}

/* The loaded plugin entry that owns a registry row (domain, op, version), or NULL. */
static const plugin_entry *row_owner(const char *domain, const char *op_type, int version)
{
    for (size_t i = 0; i < g_n_entries; i++) {
        const plugin_entry *e = g_entries[i];
        if (!entry_matches(e, domain, op_type)) continue;
        for (int k = 0; k < e->n_rows; k++)
            if (e->row_versions[k] == version) return e;
    }
    return NULL;
}

static const char *qual_sep(const char *domain) { return domain[0] ? "::" : ""; }

static int api_register_op(mrt_plugin_registrar *reg, const mrt_plugin_op *op)
{
    if (!reg) return (int)mrt_fail(MRT_STATUS_INVALID_ARG, "register_op called without a registrar");
    if (!op) return reg_fail(reg, MRT_STATUS_INVALID_ARG, "register_op called with a NULL op");
    if (op->struct_size < OP_ABI1_SIZE)
        return reg_fail(reg, MRT_STATUS_INVALID_ARG,
                        "mrt_plugin_op.struct_size is %u, expected at least %zu (initialise the struct with "
                        "MRT_PLUGIN_OP_INIT)",
                        (unsigned)op->struct_size, (size_t)OP_ABI1_SIZE);
    if (!op->op_type || !op->op_type[0])
        return reg_fail(reg, MRT_STATUS_INVALID_ARG, "register_op: op_type is empty");
    const char *dom = mrt_domain_normalize(op->domain ? op->domain : "");
    const char *name = op->op_type;
    if (strlen(dom) > 255 || strlen(name) > 255)
        return reg_fail(reg, MRT_STATUS_INVALID_ARG, "register_op: domain or op_type longer than 255 characters");
    if (op->since_version < 1)
        return reg_fail(reg, MRT_STATUS_INVALID_ARG, "op %s%s%s: since_version is %d, expected >= 1", dom,
                        qual_sep(dom), name, (int)op->since_version);
    if (op->min_inputs < 0 || (op->max_inputs != -1 && op->max_inputs < op->min_inputs) || op->min_outputs < 1 ||
        (op->max_outputs != -1 && op->max_outputs < op->min_outputs))
        return reg_fail(reg, MRT_STATUS_INVALID_ARG,
                        "op %s%s%s: invalid arity (inputs %d..%d, outputs %d..%d; max -1 = variadic, at least one "
                        "output)",
                        dom, qual_sep(dom), name, (int)op->min_inputs, (int)op->max_inputs, (int)op->min_outputs,
                        (int)op->max_outputs);
    if (!op->infer || (!op->run_cpu && !op->run_cuda))
        return reg_fail(reg, MRT_STATUS_INVALID_ARG, "op %s%s%s: an infer callback and a run_cpu or run_cuda "
                        "callback are required", dom, qual_sep(dom), name);
    for (size_t i = 0; i < reg->n_pending; i++)
        if (entry_matches(&reg->pending[i], dom, name) && reg->pending[i].since_version == op->since_version)
            return reg_fail(reg, MRT_STATUS_INVALID_ARG, "op %s%s%s version %d is registered twice", dom,
                            qual_sep(dom), name, (int)op->since_version);
    const plugin_entry *owner = row_owner(dom, name, op->since_version);
    if (owner)
        return reg_fail(reg, MRT_STATUS_INVALID_ARG, "op %s%s%s version %d is already registered by plugin %s",
                        dom, qual_sep(dom), name, (int)op->since_version, owner->plugin);
    int versions[64];
    if (!reg->allow_replace && builtin_versions(dom, name, versions, 64) > 0)
        return reg_fail(reg, MRT_STATUS_INVALID_ARG,
                        "op %s%s%s is built into minirt; a plugin may replace a built-in op only when that is "
                        "allowed explicitly (mrt_plugin_load(path, true), or --plugin-replace on the command line)",
                        dom[0] ? dom : "ai.onnx", "::", name);
    if (reg->n_pending == reg->cap_pending) {
        size_t nc = reg->cap_pending ? 2 * reg->cap_pending : 8;
        plugin_entry *np = realloc(reg->pending, nc * sizeof *np);
        if (!np) return reg_fail(reg, MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin ops)");
        reg->pending = np;
        reg->cap_pending = nc;
    }
    plugin_entry *e = &reg->pending[reg->n_pending];
    memset(e, 0, sizeof *e);
    e->domain = strdup(dom);
    e->op_type = strdup(name);
    if (!e->domain || !e->op_type) {
        free(e->domain);
        free(e->op_type);
        return reg_fail(reg, MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin ops)");
    }
    e->since_version = op->since_version;
    e->min_inputs = op->min_inputs;
    e->max_inputs = op->max_inputs;
    e->min_outputs = op->min_outputs;
    e->max_outputs = op->max_outputs;
    e->infer = op->infer;
    e->run_cpu = op->run_cpu;
    e->run_cuda = op->run_cuda;
    e->user = op->user_data;
    e->flags = op->flags;
    e->plugin = reg->plugin;
    reg->n_pending++;
    return MRT_PLUGIN_OK;
}

static void free_pending(mrt_plugin_registrar *reg)
{
    for (size_t i = 0; i < reg->n_pending; i++) {
        free(reg->pending[i].domain);
        free(reg->pending[i].op_type);
        free(reg->pending[i].row_versions);
    }
    free(reg->pending);
    reg->pending = NULL;
    reg->n_pending = 0;
}

/* The registry versions a new entry takes: its own since_version plus, when it replaces a built-in op,
   every built-in version above it up to the next plugin version of the op, so that models importing a
   newer opset also resolve to the plugin (resolution picks the highest since_version <= opset). */
static mrt_status entry_rows(const mrt_plugin_registrar *reg, const plugin_entry *e, int **rows, int *n_rows)
{
    int versions[64];
    int nb = builtin_versions(e->domain, e->op_type, versions, 64);
    int next = INT_MAX;
    for (size_t i = 0; i < reg->n_pending + g_n_entries; i++) {
        const plugin_entry *o = i < reg->n_pending ? &reg->pending[i] : g_entries[i - reg->n_pending];
        if (entry_matches(o, e->domain, e->op_type) && o->since_version > e->since_version && o->since_version < next)
            next = o->since_version;
    }
    *rows = malloc((size_t)(nb + 1) * sizeof **rows);
    if (!*rows) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin rows)");
    int n = 0;
    (*rows)[n++] = e->since_version;
    for (int i = 0; i < nb; i++)
        if (versions[i] > e->since_version && versions[i] < next && !row_owner(e->domain, e->op_type, versions[i]))
            (*rows)[n++] = versions[i];
    *n_rows = n;
    return MRT_STATUS_OK;
}

/* Move the pending entries into the table and add their registry rows. */
static mrt_status commit(mrt_registry *r, mrt_plugin_registrar *reg)
{
    plugin_entry **ne = realloc(g_entries, (g_n_entries + reg->n_pending + 1) * sizeof *ne);
    if (!ne) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin table)");
    g_entries = ne;
    plugin_entry **fresh = calloc(reg->n_pending ? reg->n_pending : 1, sizeof *fresh);
    if (!fresh) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin table)");
    for (size_t i = 0; i < reg->n_pending; i++) {
        fresh[i] = malloc(sizeof **fresh);
        if (!fresh[i] || entry_rows(reg, &reg->pending[i], &reg->pending[i].row_versions,
                                    &reg->pending[i].n_rows) != MRT_STATUS_OK) {
            for (size_t k = 0; k <= i; k++) free(fresh[k]);
            free(fresh);
            return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin table)");
        }
    }
    mrt_status st = MRT_STATUS_OK;
    for (size_t i = 0; i < reg->n_pending; i++) {
        *fresh[i] = reg->pending[i];
        g_entries[g_n_entries++] = fresh[i];
    }
    free(fresh);
    /* the table owns the strings now */
    size_t n = reg->n_pending;
    reg->n_pending = 0;
    for (size_t i = g_n_entries - n; i < g_n_entries && !st; i++) {
        const plugin_entry *e = g_entries[i];
        for (int k = 0; k < e->n_rows && !st; k++) {
            mrt_opdef def = {e->domain, e->op_type, e->row_versions[k], e->min_inputs, e->max_inputs,
                             e->min_outputs, e->max_outputs, tramp_infer,
                             (e->flags & MRT_PLUGIN_OP_NO_FOLD) ? MRT_OPDEF_NO_FOLD : 0u};
            st = mrt_registry_add_opdef(r, &def, reg->allow_replace);
            mrt_kernel cpu = {e->domain, e->op_type, e->row_versions[k], tramp_run_cpu, NULL};
            if (!st && e->run_cpu) st = mrt_registry_add_kernel(r, MRT_DEVICE_CPU, &cpu, reg->allow_replace);
            mrt_kernel cuda = {e->domain, e->op_type, e->row_versions[k], tramp_run_cuda, NULL};
            if (!st && e->run_cuda) st = mrt_registry_add_kernel(r, MRT_DEVICE_CUDA, &cuda, reg->allow_replace);
        }
    }
    return st ? mrt_fail_prefix(st, "plugin %s: ", reg->plugin) : MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ loading */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static mrt_status load_locked(const char *path, bool allow_replace)
{
    if (!path || !path[0]) return mrt_fail(MRT_STATUS_INVALID_ARG, "plugin path is empty");
    const char *name = base_name(path);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return mrt_fail(MRT_STATUS_IO_ERROR, "plugin '%s': %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return mrt_fail(MRT_STATUS_INVALID_ARG, "plugin '%s' is not a regular file (expected a shared library)",
                        path);
    /* dlopen searches the library path for names without a '/': make a relative name explicit */
    char *dl_path = malloc(strlen(path) + 3);
    if (!dl_path) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin path)");
    snprintf(dl_path, strlen(path) + 3, "%s%s", strchr(path, '/') ? "" : "./", path);
    dlerror();
    void *h = dlopen(dl_path, RTLD_NOW | RTLD_LOCAL);
    free(dl_path);
    if (!h) {
        const char *why = dlerror();
        return mrt_fail(MRT_STATUS_INVALID_ARG, "plugin '%s' could not be loaded as a shared library: %s", path,
                        why ? why : "unknown dlopen error");
    }
    for (size_t i = 0; i < g_n_handles; i++)
        if (g_handles[i] == h) {
            dlclose(h); /* the same library is already loaded and registered: nothing to do */
            return MRT_STATUS_OK;
        }
    mrt_status st = MRT_STATUS_OK;
    mrt_plugin_init_fn init;
    void *sym = dlsym(h, "mrt_plugin_init");
    memcpy(&init, &sym, sizeof init); /* object pointer -> function pointer without a cast warning */
    const uint32_t *abi = (const uint32_t *)dlsym(h, "mrt_plugin_abi_version");
    if (!sym) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG,
                      "plugin %s (%s) does not export mrt_plugin_init: it is not a minirt op plugin (see "
                      "include/minirt/minirt_plugin.h and docs/custom_ops.md)",
                      name, path);
    } else if (!abi) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG,
                      "plugin %s does not export mrt_plugin_abi_version: declare it with MRT_PLUGIN_DECLARE_ABI(); "
                      "from minirt/minirt_plugin.h (this minirt provides plugin ABI %d)",
                      name, MRT_PLUGIN_ABI_VERSION);
    } else if (*abi < 1 || *abi > MRT_PLUGIN_ABI_VERSION) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG,
                      "plugin %s was built for minirt plugin ABI %u, this minirt provides %d: rebuild the plugin "
                      "against this minirt's include/minirt/minirt_plugin.h (or use a newer minirt)",
                      name, (unsigned)*abi, MRT_PLUGIN_ABI_VERSION);
    }
    if (st) {
        dlclose(h);
        return st;
    }
    char *owned_name = strdup(name); /* kept for messages for the life of the process */
    void **nh = realloc(g_handles, (g_n_handles + 1) * sizeof *nh);
    if (!owned_name || !nh) {
        free(owned_name);
        if (nh) g_handles = nh;
        dlclose(h);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (plugin)");
    }
    g_handles = nh;
    mrt_plugin_registrar reg = {.plugin = owned_name, .allow_replace = allow_replace};
    char errmsg[1024] = "";
    int rc = init(&g_api, &reg, errmsg, sizeof errmsg);
    errmsg[sizeof errmsg - 1] = '\0';
    if (reg.error) {
        st = mrt_fail(reg.error, "plugin %s: %s%s%s%s", name, reg.message, errmsg[0] ? " (the plugin said: " : "",
                      errmsg, errmsg[0] ? ")" : "");
    } else if (rc != 0) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG, "plugin %s failed to initialise (mrt_plugin_init returned %d): %s", name,
                      rc, errmsg[0] ? errmsg : "(no message)");
    }
    if (st) {
        free_pending(&reg);
        free(owned_name);
        dlclose(h);
        return st;
    }
    mrt_registry *r = mrt_registry_default();
    st = commit(r, &reg);
    free_pending(&reg);
    /* Once rows may point at the library's code it stays loaded, even when a later row failed. */
    g_handles[g_n_handles++] = h;
    mrt_status hs = mrt_registry_add_plugin_handle(r, h, owned_name);
    return st ? st : hs;
}

mrt_status mrt_plugin_load(const char *path, bool allow_replace)
{
    pthread_mutex_lock(&g_lock);
    mrt_status st = load_locked(path, allow_replace);
    pthread_mutex_unlock(&g_lock);
    return st;
}
