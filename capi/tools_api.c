/* minirt_tools.h: the CLI's tools as calls for bindings. Built into libminirt.so only (cmake/install.cmake). */
#include "minirt/minirt_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"
#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/dump.h"

struct mrt_tool_session {
    mrt_session *session;
    mrt_session_options opt;
    char *device, *expand, *dump_dir, *model_path;
};

void mrt_tool_session_free(mrt_tool_session *s)
{
    if (!s) return;
    mrt_session_free(s->session);
    free(s->device);
    free(s->expand);
    free(s->dump_dir);
    free(s->model_path);
    free(s);
}

static mrt_status parse_bool(const char *name, const char *v, bool *out)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) *out = true;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) *out = false;
    else return mrt_fail(MRT_STATUS_INVALID_ARG, "option '%s' expects 0 or 1, got '%s'", name, v);
    return MRT_STATUS_OK;
}

static mrt_status set_option(mrt_tool_session *s, const char *k, const char *v)
{
    char **str = NULL;
    if (strcmp(k, "threads") == 0) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 0 || n > 4096)
            return mrt_fail(MRT_STATUS_INVALID_ARG, "option 'threads' expects 0 (all cores) to 4096, got '%s'", v);
        s->opt.n_threads = (int)n;
        return MRT_STATUS_OK;
    }
    if (strcmp(k, "precision") == 0) {
        if (strcmp(v, "fp64") == 0) s->opt.precision = MRT_PRECISION_FP64;
        else if (strcmp(v, "fp32") == 0 || strcmp(v, "default") == 0) s->opt.precision = MRT_PRECISION_DEFAULT;
        else return mrt_fail(MRT_STATUS_INVALID_ARG, "option 'precision' expects fp32 or fp64, got '%s'", v);
        return MRT_STATUS_OK;
    }
    if (strcmp(k, "no_fuse") == 0) return parse_bool(k, v, &s->opt.no_fuse);
    if (strcmp(k, "no_winograd") == 0) return parse_bool(k, v, &s->opt.no_winograd);
    if (strcmp(k, "no_mem_plan") == 0) return parse_bool(k, v, &s->opt.no_mem_plan);
    if (strcmp(k, "poison_outputs") == 0) return parse_bool(k, v, &s->opt.poison_outputs);
    if (strcmp(k, "device") == 0) str = &s->device;
    else if (strcmp(k, "expand_functions") == 0) str = &s->expand;
    else if (strcmp(k, "dump_dir") == 0) str = &s->dump_dir;
    else if (strcmp(k, "model_path") == 0) str = &s->model_path;
    else
        return mrt_fail(MRT_STATUS_INVALID_ARG,
                        "unknown session option '%s' (threads, device, precision, expand_functions, no_fuse, "
                        "no_winograd, no_mem_plan, poison_outputs, dump_dir, model_path)", k);
    free(*str);
    *str = strdup(v);
    if (!*str) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return MRT_STATUS_OK;
}

/* The node callback's user pointer is fixed when the session is made; a dump's context is made per run. */
static _Thread_local dump_ctx *current_dump;

static mrt_status dump_trampoline(void *user, const mrt_node *node, int n, const char *const *names,
                                  const mrt_value *const *values)
{
    (void)user;
    return dump_on_node(current_dump, node, n, names, values);
}

mrt_status mrt_tool_session_new(const mrt_model *m, int n, const char *const *names, const char *const *values,
                                mrt_tool_session **out)
{
    *out = NULL;
    mrt_tool_session *s = calloc(1, sizeof *s);
    if (!s) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    s->opt = mrt_session_options_default();
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n && !st; i++) st = set_option(s, names[i], values[i]);
    if (!st) {
        if (s->device) s->opt.device = s->device;
        s->opt.expand_functions = s->expand;
        /* dumps see every node: the callback is set now so the plan is made without fusion, as --dump-all does */
        if (s->dump_dir) s->opt.on_node = dump_trampoline;
        st = mrt_session_new(m, &s->opt, &s->session);
    }
    if (st) {
        mrt_tool_session_free(s);
        return st;
    }
    *out = s;
    return MRT_STATUS_OK;
}

mrt_status mrt_tool_session_run(mrt_tool_session *s, int n, const char *const *names, const mrt_value *inputs)
{
    if (!s->dump_dir) return mrt_session_run(s->session, n, names, inputs);
    dump_options dopt = {s->dump_dir, NULL, NULL};
    dump_ctx *d = NULL;
    MRT_TRY(dump_begin(&dopt, &d));
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n && !st; i++) st = dump_value(d, names[i], NULL, NULL, &inputs[i]);
    if (!st) {
        current_dump = d;
        st = mrt_session_run(s->session, n, names, inputs);
        current_dump = NULL;
    }
    if (st) {
        dump_abort(d);
        return st;
    }
    dump_provenance prov = {s->model_path ? s->model_path : "", s->device ? s->device : "cpu",
                            s->opt.precision == MRT_PRECISION_FP64 ? "fp64" : "fp32", mrt_session_n_threads(s->session),
                            0, NULL};
    return dump_finish(d, &prov);
}

mrt_session *mrt_tool_session_get(mrt_tool_session *s) { return s->session; }

char *mrt_tool_compare_json(const mrt_tensor *a, const mrt_tensor *b, double atol, double rtol, const char *stat,
                            double quantile, bool equal_nan)
{
    static const char *const stats[] = {"elemwise", "max", "mean", "median", "quantile"};
    int k = 0;
    while (k < 5 && strcmp(stat, stats[k]) != 0) k++;
    if (k == 5) {
        mrt_fail(MRT_STATUS_INVALID_ARG, "check_error_stat expects elemwise, max, mean, median or quantile, got '%s'",
                 stat);
        return NULL;
    }
    compare_tolerance tol = {atol, rtol, (error_stat)k, quantile, equal_nan};
    compare_result r;
    compare_tensors(a, b, &tol, &r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    compare_json(f, "", &r);
    fclose(f);
    return buf;
}

void mrt_tool_free(void *p) { free(p); }

int mrt_tool_main(int argc, char **argv)
{
    int rc = MRT_EXIT_USAGE;
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "run") == 0) rc = cmd_run(argc - 1, argv + 1);
    else if (strcmp(cmd, "info") == 0) rc = cmd_info(argc - 1, argv + 1);
    else if (strcmp(cmd, "ops") == 0) rc = cmd_ops(argc - 1, argv + 1);
    else if (strcmp(cmd, "conformance") == 0) rc = cmd_conformance(argc - 1, argv + 1);
    else if (strcmp(cmd, "compare") == 0) rc = cmd_compare(argc - 1, argv + 1);
    else if (strcmp(cmd, "diff") == 0) rc = cmd_diff(argc - 1, argv + 1);
    else if (strcmp(cmd, "bench") == 0) rc = cmd_bench(argc - 1, argv + 1);
    else cli_error("unknown command '%s'", cmd);
    fflush(stdout);
    fflush(stderr);
    return rc;
}
