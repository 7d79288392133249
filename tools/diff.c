/* `minirt diff`: find the first node whose own (local) error exceeds tolerance.
 *
 * The model runs once as the reference (float64 oracle, CPU float32, CUDA, or a dump folder made by another
 * engine) and twice under test on the CPU in float32:
 *  - chained: the run feeds itself, so each node's error includes what it inherited;
 *  - teacher-forced: every node is fed the reference's values for its inputs, so its error is its own.
 * The first node (in execution order) whose teacher-forced error exceeds tolerance is the culprit. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "engine/status.h"
#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/dump.h"

typedef struct node_record {
    char *node, *op, *value;
} node_record;

typedef struct recorder {
    tensor_set values;       /* every tensor output, copied */
    node_record *order;      /* (node, op, output) in execution order */
    int n_order, cap_order;
    /* teacher forcing */
    const tensor_set *reference;
    mrt_tensor *scratch;     /* converted reference inputs of the current node */
    int n_scratch;
} recorder;

static mrt_status record_on_node(void *user, const mrt_node *node, int n, const char *const *names,
                                 const mrt_value *const *values)
{
    recorder *r = user;
    for (int i = 0; i < r->n_scratch; i++) mrt_tensor_release(&r->scratch[i]);
    r->n_scratch = 0;
    for (int i = 0; i < n; i++) {
        if (values[i]->kind != MRT_VALUE_TENSOR) continue;
        mrt_tensor copy;
        MRT_TRY(mrt_tensor_copy(&copy, &values[i]->tensor));
        MRT_TRY(set_add(&r->values, names[i], &copy));
        if (r->n_order == r->cap_order) {
            int nc = r->cap_order ? r->cap_order * 2 : 64;
            node_record *no = realloc(r->order, (size_t)nc * sizeof *no);
            if (!no) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (diff)");
            r->order = no;
            r->cap_order = nc;
        }
        r->order[r->n_order++] = (node_record){strdup(node->name), strdup(node->op_type), strdup(names[i])};
    }
    return MRT_STATUS_OK;
}

/* Feed the reference's value (converted to the dtype this run computes in) instead of our own. */
static bool teacher_force(void *user, const mrt_node *node, int idx, const char *name, const mrt_value *computed,
                          mrt_value *replacement)
{
    (void)node;
    (void)idx;
    recorder *r = user;
    int k = set_find(r->reference, name);
    if (k < 0 || computed->kind != MRT_VALUE_TENSOR) return false;
    const mrt_tensor *ref = &r->reference->tensors[k], *cur = &computed->tensor;
    if (ref->rank != cur->rank || memcmp(ref->shape, cur->shape, (size_t)cur->rank * sizeof(int64_t)) != 0)
        return false;
    if (ref->dtype == cur->dtype) {
        *replacement = mrt_value_from_tensor(*ref);
        return true;
    }
    if (!mrt_dtype_is_float(ref->dtype) || !mrt_dtype_is_float(cur->dtype) || r->n_scratch >= 64) return false;
    mrt_tensor *t = &r->scratch[r->n_scratch];
    if (mrt_tensor_alloc(t, cur->dtype, cur->rank, cur->shape) != MRT_STATUS_OK) return false;
    r->n_scratch++;
    int64_t n = mrt_tensor_numel(cur);
    for (int64_t i = 0; i < n; i++) mrt_store_f64(cur->dtype, t->data, i, mrt_load_f64(ref->dtype, ref->data, i));
    *replacement = mrt_value_from_tensor(*t);
    return true;
}

static void recorder_free(recorder *r)
{
    set_free(&r->values);
    for (int i = 0; i < r->n_order; i++) {
        free(r->order[i].node);
        free(r->order[i].op);
        free(r->order[i].value);
    }
    free(r->order);
    for (int i = 0; i < r->n_scratch; i++) mrt_tensor_release(&r->scratch[i]);
    free(r->scratch);
}

static mrt_status run_recorded(const mrt_model *m, const bound_inputs *b, mrt_session_options opt, recorder *r)
{
    mrt_session *s;
    opt.on_node = record_on_node;
    opt.on_node_user = r;
    MRT_TRY(mrt_session_new(m, &opt, &s));
    mrt_status st = mrt_session_run(s, b->n, (const char *const *)b->names, b->vals);
    mrt_session_free(s);
    return st;
}

static const char diff_usage[] =
    "usage: minirt diff MODEL --input [NAME=]PATH ... [options]\n"
    "  --against fp64|cpu|cuda|DIR   the reference: the float64 oracle (default), a float32 CPU run, a CUDA run,\n"
    "                                or a dump folder (minirt --dump-all, tools/dump_torch.py, tools/dump_ort.py)\n"
    "  --atol X --rtol X            tolerance (default 1e-4 each); an output fails when an element exceeds both\n"
    "  --threads N                  CPU threads of the run under test\n"
    "  --device cuda                the run under test runs on CUDA (with --against cpu: the first node where the\n"
    "                               CUDA kernels depart from the CPU's); --no-cpu-fallback, --allow-tf32 as in run\n"
    "  --no-winograd                the run under test computes 3x3 stride-1 Convs by the GEMM, not Winograd\n"
    "                               (with --against cpu: how far Winograd moves each value)\n"
    "  --equal-nan                  NaN against NaN at the same position is equal (default: any NaN fails)\n"
    "  --top N                      rows of the ranked table (default 10)\n"
    "  --json FILE                  every node's chained and local errors as JSON\n"
    "  --plugin LIB.so              load an op plugin first (repeatable; --plugin-replace to replace built-ins)\n"
    "Exit status 0 when no node exceeds tolerance, 1 when one does (or on error).\n";

typedef struct row {
    int order;
    const node_record *rec;
    compare_result chained, local;
    bool has_local;
} row;

static int by_local_error(const void *a, const void *b)
{
    const row *x = a, *y = b;
    double ex = x->has_local ? x->local.min_rtol_to_pass : -1, ey = y->has_local ? y->local.min_rtol_to_pass : -1;
    if (ex != ey) return ex < ey ? 1 : -1;
    double ax = x->has_local ? x->local.max_abs : -1, ay = y->has_local ? y->local.max_abs : -1;
    return ax < ay ? 1 : ax > ay ? -1 : x->order - y->order;
}

int cmd_diff(int argc, char **argv)
{
    const char *model_path = NULL, *against = "fp64", *json_path = NULL;
    compare_tolerance tol = {1e-4, 1e-4, ERROR_STAT_ELEMWISE, 0.99};
    int top = 10, threads = 0;
    const char **input_args = calloc(2 * (size_t)argc, sizeof(char *));
    const char **plugins = input_args + argc;
    int n_in = 0, n_plugins = 0;
    bool plugin_replace = false, no_winograd = false;
    mrt_session_options dev_opt = mrt_session_options_default();
    if (!input_args) return MRT_EXIT_ERROR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool next = i + 1 < argc;
        char *end = NULL;
        if (strcmp(a, "--help") == 0) {
            fputs(diff_usage, stdout);
            free(input_args);
            return MRT_EXIT_OK;
        } else if (strcmp(a, "--input") == 0 && next) {
            input_args[n_in++] = argv[++i];
        } else if (strcmp(a, "--against") == 0 && next) {
            against = argv[++i];
        } else if ((strcmp(a, "--atol") == 0 || strcmp(a, "--rtol") == 0) && next) {
            double v = strtod(argv[++i], &end);
            if (*end || !(v >= 0)) {
                cli_error("%s expects a non-negative number, got '%s'", a, argv[i]);
                free(input_args);
                return MRT_EXIT_USAGE;
            }
            *(a[2] == 'a' ? &tol.atol : &tol.rtol) = v;
        } else if ((strcmp(a, "--top") == 0 || strcmp(a, "--threads") == 0) && next) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 100000) {
                cli_error("%s expects a positive number, got '%s'", a, argv[i]);
                free(input_args);
                return MRT_EXIT_USAGE;
            }
            *(a[2] == 't' && a[3] == 'o' ? &top : &threads) = (int)v;
        } else if (strcmp(a, "--json") == 0 && next) {
            json_path = argv[++i];
        } else if (strcmp(a, "--plugin") == 0 && next) {
            plugins[n_plugins++] = argv[++i];
        } else if (strcmp(a, "--plugin-replace") == 0) {
            plugin_replace = true;
        } else if (strcmp(a, "--no-winograd") == 0) {
            no_winograd = true;
        } else if (cli_device_option(argc, argv, &i, &dev_opt)) {
            continue;
        } else if (strcmp(a, "--equal-nan") == 0) {
            tol.equal_nan = true;
        } else if (a[0] == '-') {
            cli_error("unknown or incomplete option '%s' for 'diff' (try --help)", a);
            free(input_args);
            return MRT_EXIT_USAGE;
        } else if (!model_path) {
            model_path = a;
        } else {
            cli_error("unexpected argument '%s'", a);
            free(input_args);
            return MRT_EXIT_USAGE;
        }
    }
    if (!model_path) {
        cli_error("'diff' needs a model (try 'minirt diff --help')");
        free(input_args);
        return MRT_EXIT_USAGE;
    }
    int rc = MRT_EXIT_OK;
    mrt_model *m = NULL;
    bound_inputs b = {0};
    recorder ref = {0}, chained = {0}, forced = {0};
    tensor_set dir_ref = {0};
    const tensor_set *reference = &ref.values;
    row *rows = NULL;
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n_plugins && !st; i++) st = mrt_plugin_load(plugins[i], plugin_replace);
    if (!st) st = mrt_model_load(model_path, &m);
    if (st) {
        rc = cli_fail_status(st, model_path);
        goto done;
    }
    for (int i = 0; i < n_in && !rc; i++) rc = bind_arg(&b, m, input_args[i]);
    if (rc) goto done;
    mrt_session_options opt = mrt_session_options_default();
    if (strcmp(against, "fp64") == 0 || strcmp(against, "cpu") == 0 || strcmp(against, "cuda") == 0) {
        mrt_session_options ropt = opt;
        if (strcmp(against, "fp64") == 0) ropt.precision = MRT_PRECISION_FP64;
        if (strcmp(against, "cuda") == 0) ropt.device = "cuda";
        st = run_recorded(m, &b, ropt, &ref);
        if (st) {
            rc = cli_fail_status(st, "reference run");
            goto done;
        }
    } else {
        st = compare_load_set(against, &dir_ref);
        if (st) {
            rc = cli_fail_status(st, against);
            goto done;
        }
        reference = &dir_ref;
    }
    opt.n_threads = threads;
    opt.no_winograd = no_winograd;
    opt.device = dev_opt.device;
    opt.no_cpu_fallback = dev_opt.no_cpu_fallback;
    opt.allow_tf32 = dev_opt.allow_tf32;
    st = run_recorded(m, &b, opt, &chained);
    if (!st) {
        forced.reference = reference;
        forced.scratch = calloc(64, sizeof(mrt_tensor));
        opt.override_input = teacher_force;
        opt.override_user = &forced;
        st = forced.scratch ? run_recorded(m, &b, opt, &forced) : mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    if (st) {
        rc = cli_fail_status(st, "run under test");
        goto done;
    }
    rows = calloc((size_t)(chained.n_order ? chained.n_order : 1), sizeof *rows);
    int n_rows = 0, first_bad = -1, first_chained = -1, compared = 0;
    for (int i = 0; i < chained.n_order; i++) {
        const node_record *rec = &chained.order[i];
        int kr = set_find(reference, rec->value);
        if (kr < 0) continue;
        row *r = &rows[n_rows];
        r->order = n_rows;
        r->rec = rec;
        compare_tensors(&chained.values.tensors[set_find(&chained.values, rec->value)], &reference->tensors[kr], &tol,
                        &r->chained);
        int kf = set_find(&forced.values, rec->value);
        if (kf >= 0) {
            compare_tensors(&forced.values.tensors[kf], &reference->tensors[kr], &tol, &r->local);
            r->has_local = true;
            if (!r->local.passed && first_bad < 0) first_bad = n_rows;
        }
        if (!r->chained.passed && first_chained < 0) first_chained = n_rows;
        compared++;
        n_rows++;
    }
    printf("reference: %s; tolerance atol %g rtol %g; %d of %d node outputs matched by name\n", against, tol.atol,
           tol.rtol, compared, chained.n_order);
    if (compared == 0) {
        /* "no node exceeds tolerance" would then be a pass that checked nothing */
        cli_error("no node output of the model has a tensor of the same name in '%s' (%d tensors%s%s%s): nothing was "
                  "compared. Dumps name tensors by ONNX value: minirt --dump-all, tools/dump_ort.py, and "
                  "tools/dump_torch.py --onnx (which needs the onnx Python module)",
                  against, reference->n, reference->n ? ", e.g. '" : "", reference->n ? reference->names[0] : "",
                  reference->n ? "'" : "");
        rc = MRT_EXIT_ERROR;
        goto done;
    }
    printf("(rel = relative error over the elements whose absolute error exceeds atol; abs = max absolute error)\n");
    printf("%-4s %-32s %-18s %-12s %-12s %-12s %s\n", "#", "node", "op", "chained rel", "local rel", "local abs", "");
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        printf("%-4d %-32.32s %-18.18s %-12.3g %-12.3g %-12.3g %s\n", i, r->rec->node, r->rec->op,
               r->chained.min_rtol_to_pass, r->has_local ? r->local.min_rtol_to_pass : NAN, r->has_local ? r->local.max_abs : NAN,
               !r->has_local ? "" : r->local.passed ? (r->chained.passed ? "ok" : "inherited") : "LOCAL ERROR");
    }
    if (first_chained >= 0)
        printf("\nfirst chained divergence: node '%s' (%s), output '%s': max abs err %.3g\n", rows[first_chained].rec->node,
               rows[first_chained].rec->op, rows[first_chained].rec->value, rows[first_chained].chained.max_abs);
    if (first_bad >= 0) {
        const row *r = &rows[first_bad];
        printf("first divergence (local error): node '%s' (%s), output '%s': local max abs err %.3g, max rel err %.3g "
               "(at index %lld: %.9g vs reference %.9g)\n",
               r->rec->node, r->rec->op, r->rec->value, r->local.max_abs, r->local.max_rel,
               (long long)r->local.worst_index, r->local.worst_a, r->local.worst_b);
        rc = MRT_EXIT_ERROR;
    } else {
        printf("no node exceeds tolerance on its own inputs\n");
    }
    row *ranked = malloc((size_t)(n_rows ? n_rows : 1) * sizeof *ranked);
    if (ranked && n_rows) {
        memcpy(ranked, rows, (size_t)n_rows * sizeof *ranked);
        qsort(ranked, (size_t)n_rows, sizeof *ranked, by_local_error);
        printf("\nlargest local errors:\n");
        for (int i = 0; i < n_rows && i < top; i++)
            printf("  %-32.32s %-18.18s local rel %.3g  abs %.3g  chained rel %.3g\n", ranked[i].rec->node,
                   ranked[i].rec->op, ranked[i].local.min_rtol_to_pass, ranked[i].local.max_abs,
                   ranked[i].chained.min_rtol_to_pass);
    }
    free(ranked);
    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f) {
            cli_error("cannot write '%s': %s", json_path, strerror(errno));
            rc = MRT_EXIT_ERROR;
            goto done;
        }
        fprintf(f, "{\"reference\": ");
        json_write_string(f, against);
        fprintf(f, ", \"first_divergence\": ");
        if (first_bad >= 0) json_write_string(f, rows[first_bad].rec->node); else fputs("null", f);
        fprintf(f, ", \"first_chained_divergence\": ");
        if (first_chained >= 0) json_write_string(f, rows[first_chained].rec->node); else fputs("null", f);
        fprintf(f, ", \"nodes\": [");
        for (int i = 0; i < n_rows; i++) {
            fprintf(f, "%s\n {\"node\": ", i ? "," : "");
            json_write_string(f, rows[i].rec->node);
            fprintf(f, ", \"op\": ");
            json_write_string(f, rows[i].rec->op);
            fprintf(f, ", \"chained\": ");
            compare_json(f, rows[i].rec->value, &rows[i].chained);
            fprintf(f, ", \"local\": ");
            if (rows[i].has_local) compare_json(f, rows[i].rec->value, &rows[i].local); else fputs("null", f);
            fprintf(f, "}");
        }
        fprintf(f, "\n]}\n");
        fclose(f);
    }
done:
    free(rows);
    recorder_free(&ref);
    recorder_free(&chained);
    recorder_free(&forced);
    set_free(&dir_ref);
    bound_free(&b);
    mrt_model_free(m);
    free(input_args);
    return rc;
}
