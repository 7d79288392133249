/* `minirt info` (what a model contains and whether minirt can run each node) and `minirt ops`. */
#include <stdlib.h>
#include <string.h>

#include "engine/cuda_module.h"
#include "engine/function.h"
#include "engine/dtype.h"
#include "engine/graph.h"
#include "engine/registry.h"
#include "tools/cli.h"

static void print_type(const mrt_type_info *t)
{
    switch (t->kind) {
    case MRT_TYPE_TENSOR:
        printf("%s", mrt_dtype_name(t->elem_type));
        if (t->rank < 0) {
            printf("[?]");
            break;
        }
        printf("[");
        for (int i = 0; i < t->rank; i++) {
            if (i) printf(",");
            if (t->dims[i] >= 0)
                printf("%lld", (long long)t->dims[i]);
            else
                printf("%s", t->dim_params[i] ? t->dim_params[i] : "?");
        }
        printf("]");
        break;
    case MRT_TYPE_SEQUENCE:
        printf("sequence(");
        if (t->elem) print_type(t->elem);
        printf(")");
        break;
    case MRT_TYPE_OPTIONAL:
        printf("optional(");
        if (t->elem) print_type(t->elem);
        printf(")");
        break;
    case MRT_TYPE_MAP: printf("map"); break;
    case MRT_TYPE_SPARSE_TENSOR: printf("sparse_tensor"); break;
    default: printf("unknown"); break;
    }
}


/* ---- torch.roll exported as Slice+Slice+Concat: Concat(Slice(x, a, END), Slice(x, 0, a)) on one axis rolls by
   -a only while |a| <= the axis size; beyond it both slices clamp and the result is not torch.roll's. The check
   needs value shapes, so the model is run once on zero inputs of its declared (static) shapes. */

typedef struct recorded {
    int n, cap;
    char **names;
    mrt_tensor *tensors; /* shape always; data kept for small int64 tensors (slice starts/ends/axes) */
} recorded;

static mrt_status record_node(void *user, const mrt_node *node, int n, const char *const *names,
                              const mrt_value *const *vals)
{
    (void)node;
    recorded *r = user;
    for (int i = 0; i < n; i++) {
        if (vals[i]->kind != MRT_VALUE_TENSOR) continue;
        if (r->n == r->cap) {
            int nc = r->cap ? r->cap * 2 : 64;
            char **nn = realloc(r->names, (size_t)nc * sizeof *nn);
            if (nn) r->names = nn;
            mrt_tensor *nt = nn ? realloc(r->tensors, (size_t)nc * sizeof *nt) : NULL;
            if (!nt) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
            r->tensors = nt;
            r->cap = nc;
        }
        const mrt_tensor *t = &vals[i]->tensor;
        mrt_tensor *dst = &r->tensors[r->n];
        *dst = *t;
        dst->data = NULL;
        if ((t->dtype == MRT_DTYPE_INT64 || t->dtype == MRT_DTYPE_INT32) && mrt_tensor_numel(t) <= 16)
            MRT_TRY(mrt_tensor_copy(dst, t));
        r->names[r->n++] = strdup(names[i]);
    }
    return MRT_STATUS_OK;
}

static const mrt_tensor *lookup(const recorded *r, const mrt_graph *g, int value)
{
    if (value < 0) return NULL;
    if (g->values[value].initializer) return g->values[value].initializer;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], g->values[value].name) == 0) return &r->tensors[i];
    for (int i = 0; i < g->n_inputs; i++) /* graph inputs: shapes recorded under their names too */
        if (g->inputs[i] == value) return NULL;
    return NULL;
}

static bool one_int(const mrt_tensor *t, int64_t *v)
{
    if (!t || !t->data || mrt_tensor_numel(t) != 1) return false;
    *v = mrt_load_i64(t->dtype, t->data, 0);
    return true;
}

/* Zero inputs of the model's declared shapes, for a trial run; false (with a line saying why) when an input has none. */
static bool zero_inputs(const mrt_model *m, const char *what, const char **names, mrt_value *vals, int *n_in)
{
    const mrt_graph *g = m->graph;
    *n_in = 0;
    for (int i = 0; i < g->n_inputs && *n_in < 64; i++) {
        const mrt_graph_value *v = &g->values[g->inputs[i]];
        if (v->initializer) continue;
        int64_t numel = 1;
        bool ok = v->type.kind == MRT_TYPE_TENSOR && v->type.rank >= 0 && mrt_dtype_is_known(v->type.elem_type) &&
                  v->type.elem_type != MRT_DTYPE_STRING;
        for (int d = 0; ok && d < v->type.rank; d++) {
            ok = v->type.dims[d] >= 0;
            numel *= ok ? v->type.dims[d] : 1;
        }
        mrt_tensor t;
        if (!ok || numel > ((int64_t)1 << 26) || mrt_tensor_alloc(&t, v->type.elem_type, v->type.rank, v->type.dims)) {
            for (int k = 0; k < *n_in; k++) mrt_value_release(&vals[k]);
            printf("%s: skipped (input '%s' has no static shape)\n", what, v->name);
            return false;
        }
        names[*n_in] = v->name;
        vals[(*n_in)++] = mrt_value_from_tensor(t);
    }
    return true;
}

/* --device cuda: plan the model on CUDA (a run on zero inputs) and say where each node runs, and why a node falls
   back to the CPU; then the copies the plan makes. */
static int show_placement(const mrt_model *m, const mrt_session_options *dev)
{
    const char *names[64];
    mrt_value vals[64];
    int n_in;
    if (!zero_inputs(m, "placement", names, vals, &n_in)) return MRT_EXIT_OK;
    mrt_session_options opt = *dev;
    mrt_session *s = NULL;
    mrt_status st = mrt_session_new(m, &opt, &s);
    if (!st) st = mrt_session_run(s, n_in, names, vals);
    for (int k = 0; k < n_in; k++) mrt_value_release(&vals[k]);
    if (st) {
        mrt_session_free(s);
        return cli_fail_status(st, "planning on cuda");
    }
    const mrt_graph *g = m->graph;
    mrt_session_stats ss;
    mrt_session_get_stats(s, &ss);
    printf("placement on %s: %d node(s) on the device, %d on the CPU; device arena %zu bytes, constants %zu bytes\n",
           opt.device, ss.cuda_nodes, ss.cpu_nodes, ss.device_arena_bytes, ss.device_const_bytes);
    for (int k = 0; k < g->n_nodes; k++) {
        const char *why = NULL, *where = mrt_session_node_device(s, k, &why);
        printf("  [%4d] %-28s %-20s %s%s%s%s\n", k, g->nodes[k].name, g->nodes[k].op_type, where ? where : "not run",
               why ? "  (" : "", why ? why : "", why ? ")" : "");
    }
    printf("copies per run: %d\n", ss.planned_copies);
    for (int i = 0; i < ss.planned_copies; i++) {
        const char *value, *node;
        bool to_dev;
        if (!mrt_session_plan_copy(s, i, &value, &node, &to_dev)) break;
        printf("  %s '%s' %s%s%s\n", to_dev ? "to the device:" : "to the host:  ", value, node ? "before '" : "(a graph output)",
               node ? node : "", node ? "'" : "");
    }
    mrt_session_free(s);
    return MRT_EXIT_OK;
}

static int check_rolls(const mrt_model *m)
{
    const mrt_graph *g = m->graph;
    int n_in = 0, warned = 0;
    const char *names[64];
    mrt_value vals[64];
    if (!zero_inputs(m, "roll check", names, vals, &n_in)) return 0;
    recorded r = {0};
    mrt_session_options opt = mrt_session_options_default();
    opt.on_node = record_node;
    opt.on_node_user = &r;
    opt.run_once = true; /* shapes are all it reads: no packed weights, each weight gone after its last reader */
    mrt_session *s = NULL;
    mrt_status st = mrt_session_new(m, &opt, &s);
    if (!st) st = mrt_session_run(s, n_in, names, vals);
    if (st) printf("roll check: skipped (the model did not run on zero inputs: %s)\n", mrt_last_error());
    for (int k = 0; !st && k < g->n_nodes; k++) {
        const mrt_node *c = &g->nodes[k];
        if (strcmp(c->op_type, "Concat") || c->domain[0] || c->n_inputs != 2) continue;
        const mrt_node *sa = NULL, *sb = NULL;
        for (int j = 0; j < 2; j++) {
            int v = c->inputs[j];
            int p = v >= 0 ? g->values[v].producer : -1;
            const mrt_node *sl = p >= 0 && strcmp(g->nodes[p].op_type, "Slice") == 0 && g->nodes[p].n_inputs >= 3 ? &g->nodes[p] : NULL;
            if (j == 0) sa = sl;
            else sb = sl;
        }
        if (!sa || !sb || sa->inputs[0] != sb->inputs[0]) continue;
        int64_t a0, a1, b0, b1, ax_a = 0, ax_b = 0;
        if (!one_int(lookup(&r, g, sa->inputs[1]), &a0) || !one_int(lookup(&r, g, sa->inputs[2]), &a1) ||
            !one_int(lookup(&r, g, sb->inputs[1]), &b0) || !one_int(lookup(&r, g, sb->inputs[2]), &b1))
            continue;
        if (sa->n_inputs > 3 && !one_int(lookup(&r, g, sa->inputs[3]), &ax_a)) continue;
        if (sb->n_inputs > 3 && !one_int(lookup(&r, g, sb->inputs[3]), &ax_b)) continue;
        const mrt_tensor *x = lookup(&r, g, sa->inputs[0]);
        const mrt_graph_value *xv = &g->values[sa->inputs[0]];
        int rank = x ? x->rank : xv->type.rank;
        if (rank <= 0) continue;
        int64_t axis_attr = mrt_node_attr(c, "axis") ? mrt_node_attr(c, "axis")->i : 0;
        if (ax_a < 0) ax_a += rank;
        if (ax_b < 0) ax_b += rank;
        if (axis_attr < 0) axis_attr += rank;
        if (ax_a != ax_b || ax_a != axis_attr || b0 != 0 || a0 != b1 || a1 < ((int64_t)1 << 30)) continue;
        int64_t dim = x ? x->shape[ax_a] : xv->type.dims[ax_a];
        if (dim < 0) continue;
        if (a0 > dim || a0 < -dim) {
            printf("warning: node '%s' (Concat of Slices '%s' and '%s') implements torch.roll by %lld along axis %lld, but "
                   "that axis has %lld elements: the slices clamp, so the result is not torch.roll's (which takes the "
                   "shift modulo the size). Re-export with the shift reduced modulo %lld, or as custom::Roll.\n",
                   c->name, sa->name, sb->name, (long long)-a0, (long long)ax_a, (long long)dim, (long long)dim);
            warned++;
        }
    }
    if (!st) printf("roll check: %d Slice+Slice+Concat roll(s) with a shift larger than the axis\n", warned);
    mrt_session_free(s);
    for (int i = 0; i < r.n; i++) {
        free(r.names[i]);
        mrt_tensor_release(&r.tensors[i]);
    }
    free(r.names);
    free(r.tensors);
    for (int k = 0; k < n_in; k++) mrt_value_release(&vals[k]);
    return warned;
}

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    bool plugin_replace = false;
    mrt_session_options dev = mrt_session_options_default();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: minirt info MODEL [--plugin LIB.so]... [--plugin-replace] [--device cuda [--no-cpu-fallback]]\n"
                   "  --device cuda   plan the model on CUDA (a run on zeros of its input shapes) and show where each\n"
                   "                  node runs, why a node falls back to the CPU, and the copies the plan makes\n");
            return MRT_EXIT_OK;
        } else if (cli_device_option(argc, argv, &i, &dev)) {
            continue;
        } else if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
            i++;
        } else if (strcmp(argv[i], "--plugin-replace") == 0) {
            plugin_replace = true;
        } else if (argv[i][0] == '-' || path) {
            cli_error("usage: minirt info MODEL [--plugin LIB.so]... [--plugin-replace]");
            return MRT_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        cli_error("usage: minirt info MODEL [--plugin LIB.so]... [--plugin-replace]");
        return MRT_EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) /* plugins first: they change what the node list reports */
        if (strcmp(argv[i], "--plugin") == 0) {
            mrt_status pst = mrt_plugin_load(argv[++i], plugin_replace);
            if (pst) return cli_fail_status(pst, NULL);
        }
    mrt_model *m;
    mrt_status st = mrt_model_load(path, &m);
    if (st) return cli_fail_status(st, path);
    const mrt_graph *g = m->graph;
    printf("model: %s\n", path);
    printf("ir_version: %lld  producer: %s\n", (long long)m->ir_version, m->producer_name ? m->producer_name : "");
    printf("opsets:");
    for (int i = 0; i < m->n_opsets; i++)
        printf(" %s=%lld", m->opsets[i].domain[0] ? m->opsets[i].domain : "ai.onnx", (long long)m->opsets[i].version);
    printf("\ninputs:\n");
    for (int i = 0; i < g->n_inputs; i++) {
        const mrt_graph_value *v = &g->values[g->inputs[i]];
        if (v->initializer) continue;
        printf("  %s: ", v->name);
        print_type(&v->type);
        printf("\n");
    }
    printf("outputs:\n");
    for (int i = 0; i < g->n_outputs; i++) {
        const mrt_graph_value *v = &g->values[g->outputs[i]];
        printf("  %s: ", v->name);
        print_type(&v->type);
        printf("\n");
    }
    int n_init = 0;
    for (int i = 0; i < g->n_values; i++) n_init += g->values[i].initializer != NULL;
    printf("initializers: %d\nnodes: %d\n", n_init, g->n_nodes);
    int missing = 0;
    const mrt_registry *reg = mrt_registry_default();
    for (int k = 0; k < g->n_nodes; k++) {
        const mrt_node *n = &g->nodes[k];
        int64_t opset = mrt_model_opset(m, n->domain);
        if (opset < 0 && n->domain[0]) opset = INT64_MAX;
        const mrt_opdef *d = mrt_registry_find_opdef(reg, n->domain, n->op_type, opset);
        const mrt_kernel *kc = mrt_registry_find_kernel(reg, MRT_DEVICE_CPU, n->domain, n->op_type, opset);
        bool ok = d && kc;
        missing += !ok;
        printf("  [%4d] %-28s %s%s%s  cpu:%s\n", k, n->name, n->domain, n->domain[0] ? "::" : "", n->op_type,
               ok ? "yes" : "NO KERNEL");
    }
    int rc = MRT_EXIT_OK;
    if (missing) printf("%d node(s) have no kernel: 'minirt run' will refuse this model\n", missing);
    else check_rolls(m);
    if (!missing && strcmp(dev.device, "cpu") != 0) rc = show_placement(m, &dev);
    mrt_model_free(m);
    return rc;
}

static int cmp_opdef(const void *a, const void *b)
{
    const mrt_opdef *x = *(const mrt_opdef *const *)a, *y = *(const mrt_opdef *const *)b;
    int c = strcmp(x->domain, y->domain);
    if (!c) c = strcmp(x->op_type, y->op_type);
    if (!c) c = x->since_version - y->since_version;
    return c;
}

int cmd_ops(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        printf("usage: minirt ops\n");
        return strcmp(argv[1], "--help") == 0 ? MRT_EXIT_OK : MRT_EXIT_USAGE;
    }
    const mrt_registry *reg = mrt_registry_default();
    /* the CUDA module's rows, when one loads (MRT_CUDA_MODULE, or beside minirt); the CPU's alone otherwise */
    const mrt_cuda_api *api;
    bool has_cuda = mrt_cuda_open(&api) == MRT_STATUS_OK;
    size_t n = 0;
    const mrt_opdef *row;
    while (mrt_registry_opdef_at(reg, n, &row)) n++;
    const mrt_opdef **rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return MRT_EXIT_ERROR;
    for (size_t i = 0; i < n; i++) mrt_registry_opdef_at(reg, i, &rows[i]);
    qsort(rows, n, sizeof *rows, cmp_opdef);
    printf("%-24s %-28s %-24s %s\n", "domain", "op", "versions", "devices");
    size_t n_ops = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        char versions[256] = "";
        size_t pos = 0;
        bool cpu = true;
        for (; j < n && strcmp(rows[j]->domain, rows[i]->domain) == 0 && strcmp(rows[j]->op_type, rows[i]->op_type) == 0;
             j++) {
            if (pos < sizeof versions)
                pos += (size_t)snprintf(versions + pos, sizeof versions - pos, j > i ? ",%d" : "%d",
                                        rows[j]->since_version);
            cpu &= mrt_registry_find_kernel(reg, MRT_DEVICE_CPU, rows[j]->domain, rows[j]->op_type,
                                            rows[j]->since_version) != NULL;
        }
        /* CUDA rows (when a module loads): each serves its version up to the op's next CUDA row */
        char cuda[160] = "";
        int cv[32], ncv = has_cuda ? mrt_registry_kernel_versions(reg, MRT_DEVICE_CUDA, rows[i]->domain, rows[i]->op_type, cv, 32) : 0;
        size_t cpos = 0;
        for (int k = 0; k < ncv && cpos < sizeof cuda; k++)
            cpos += (size_t)snprintf(cuda + cpos, sizeof cuda - cpos, k ? ",%d" : " cuda:%d", cv[k]);
        printf("%-24s %-28s %-24s %s%s\n", rows[i]->domain[0] ? rows[i]->domain : "ai.onnx", rows[i]->op_type, versions,
               cpu ? "cpu" : "(no cpu kernel row)", cuda);
        n_ops++;
        i = j;
    }
    /* ops with no kernel that run through the body the ONNX standard defines for them */
    for (int i = 0; i < mrt_n_std_functions; i++) {
        const mrt_std_function *e = &mrt_std_functions[i];
        if (i > 0 && strcmp(mrt_std_functions[i - 1].op_type, e->op_type) == 0 &&
            strcmp(mrt_std_functions[i - 1].domain, e->domain) == 0)
            continue; /* one row per op */
        if (mrt_registry_find_opdef(reg, e->domain, e->op_type, INT64_MAX)) continue;
        char versions[256] = "";
        size_t pos = 0;
        for (int k = i; k < mrt_n_std_functions && strcmp(mrt_std_functions[k].op_type, e->op_type) == 0 &&
                        strcmp(mrt_std_functions[k].domain, e->domain) == 0 && pos < sizeof versions;
             k++)
            if (mrt_std_functions[k].body && (k == i || mrt_std_functions[k - 1].since_version !=
                                                            mrt_std_functions[k].since_version))
                pos += (size_t)snprintf(versions + pos, sizeof versions - pos, pos ? ",%d" : "%d",
                                        mrt_std_functions[k].since_version);
        if (!pos) continue;
        printf("%-24s %-28s %-24s %s\n", e->domain[0] ? e->domain : "ai.onnx", e->op_type, versions,
               "cpu (ONNX function body)");
        n_ops++;
    }
    printf("%zu ops%s\n", n_ops, has_cuda ? "" : " (no CUDA module or device: CUDA rows not listed)");
    free(rows);
    return MRT_EXIT_OK;
}
