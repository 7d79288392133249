/* `minirt info` (what a model contains and whether minirt can run each node) and `minirt ops`. */
#include <stdlib.h>
#include <string.h>

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

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    bool plugin_replace = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: minirt info MODEL [--plugin LIB.so]... [--plugin-replace]\n");
            return MRT_EXIT_OK;
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
    if (missing) printf("%d node(s) have no kernel: 'minirt run' will refuse this model\n", missing);
    mrt_model_free(m);
    return MRT_EXIT_OK;
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
        printf("%-24s %-28s %-24s %s\n", rows[i]->domain[0] ? rows[i]->domain : "ai.onnx", rows[i]->op_type, versions,
               cpu ? "cpu" : "(no cpu kernel row)");
        n_ops++;
        i = j;
    }
    printf("%zu ops\n", n_ops);
    free(rows);
    return MRT_EXIT_OK;
}
