/* `minirt run`: bind inputs from files, run, write or summarise outputs. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "loader/npy.h"
#include "loader/tensor_proto.h"
#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/dump.h"

static const char run_usage[] =
    "usage: minirt run MODEL [options]\n"
    "  --input [NAME=]PATH   bind a graph input (.npy, .pb TensorProto, .npz by array name); a bare PATH binds\n"
    "                        the next unbound input in graph order (repeatable)\n"
    "  --output-dir DIR      write each output to DIR/<name>.npy (name sanitised to [A-Za-z0-9._-])\n"
    "  --threads N           CPU threads (default: all cores)\n"
    CLI_DEVICE_USAGE
    "  --cross-check         with --device cuda: run on the CPU too and compare every output by compare's rules\n"
    "                        (--atol/--rtol, default 1e-5 each); exit 1 when one differs\n"
    "  --plugin LIB.so       load an op plugin before running (repeatable; see docs/custom_ops.md)\n"
    "  --plugin-replace      let the plugins replace built-in ops\n"
    "  --precision fp32|fp64 fp64: widen float32/16 weights and inputs and compute every op in float64\n"
    "  --dump-all DIR        write every input, intermediate and output to DIR/<name>.npy + manifest.json\n"
    "  --dump NAMES          with --dump-all: only these values (comma-separated)\n"
    "  --dump-op-type TYPES  with --dump-all: only outputs of these op types (comma-separated)\n"
    "  --stats               print plan statistics (folding, arena vs naive vs lower bound, plan time)\n"
    "  --stats-json FILE     write them as JSON\n"
    "  --no-mem-plan         one buffer per value instead of the planned arena (debugging)\n"
    "  --no-fold             disable constant folding (debugging)\n"
    "  --no-fuse             run Conv's BatchNormalization/Add/activation successors, groups of element-wise\n"
    "                        nodes and the Mul of a squeeze-excite block before its 1x1 Conv as nodes of their own\n"
    "                        (the same bits; --dump-all implies it)\n"
    "  --no-winograd         3x3 stride-1 float32 Convs by the GEMM (im2col's sums, as every other Conv)\n"
    "                        instead of Winograd's F(2x2, 3x3)\n"
    "  --expand-functions OPS  run these ops (comma-separated, or 'all') through their ONNX function body even\n"
    "                        where minirt has a kernel: checks a kernel against the standard's definition\n"
    "  --poison-outputs      fill the outputs that kernels promise to write in full with 0xFF bytes (NaN, -1)\n"
    "                        before each node runs, so that an element one leaves unwritten shows (testing)\n";

static void print_summary(const char *name, const mrt_value *v)
{
    char desc[256];
    if (v->kind == MRT_VALUE_NONE) {
        printf("%s: none\n", name);
        return;
    }
    if (v->kind == MRT_VALUE_SEQUENCE) {
        printf("%s: sequence of %lld %s tensors\n", name, (long long)v->n_items, mrt_dtype_name(v->seq_dtype));
        return;
    }
    const mrt_tensor *t = &v->tensor;
    printf("%s: %s", name, mrt_tensor_describe(t, desc, sizeof desc));
    int64_t n = mrt_tensor_numel(t);
    if (t->dtype == MRT_DTYPE_STRING) {
        printf("  first: [");
        for (int64_t i = 0; i < n && i < 5; i++) printf(i ? ", \"%s\"" : "\"%s\"", ((char **)t->data)[i]);
        printf("%s]\n", n > 5 ? ", ..." : "");
        return;
    }
    if (n > 0) {
        double mn = INFINITY, mx = -INFINITY, sum = 0;
        int64_t nan = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = mrt_load_f64(t->dtype, t->data, i);
            if (isnan(x)) {
                nan++;
                continue;
            }
            mn = x < mn ? x : mn;
            mx = x > mx ? x : mx;
            sum += x;
        }
        printf("  min %.6g  max %.6g  mean %.6g", mn, mx, n > nan ? sum / (double)(n - nan) : NAN);
        if (nan) printf("  NaN %lld", (long long)nan);
    }
    printf("\n  first: [");
    for (int64_t i = 0; i < n && i < 8; i++) printf(i ? ", %.6g" : "%.6g", mrt_load_f64(t->dtype, t->data, i));
    printf("%s]\n", n > 8 ? ", ..." : "");
}

static int write_outputs(const mrt_session *s, const char *dir)
{
    if (cli_mkdirs(dir) != 0) {
        cli_error("cannot create output directory '%s': %s", dir, strerror(errno));
        return MRT_EXIT_ERROR;
    }
    for (int i = 0; i < mrt_session_n_outputs(s); i++) {
        const mrt_value *v = mrt_session_output(s, i);
        const char *name = mrt_session_output_name(s, i);
        if (v->kind != MRT_VALUE_TENSOR) {
            cli_error("output '%s' is not a tensor; only tensors can be written as .npy", name);
            return MRT_EXIT_ERROR;
        }
        char *safe = cli_sanitize_name(name);
        size_t len = strlen(dir) + strlen(safe) + 8;
        char *path = malloc(len);
        if (!safe || !path) {
            free(safe);
            free(path);
            cli_error("out of memory");
            return MRT_EXIT_ERROR;
        }
        snprintf(path, len, "%s/%s.npy", dir, safe);
        mrt_status st = mrt_npy_write_file(path, &v->tensor);
        free(safe);
        if (st) {
            int rc = cli_fail_status(st, path);
            free(path);
            return rc;
        }
        free(path);
    }
    return MRT_EXIT_OK;
}

/* --cross-check: the same inputs on the CPU, every output compared with compare's rules (the CPU as reference). */
static int run_cross_check(const mrt_model *m, const mrt_session_options *opt, const bound_inputs *b, const mrt_session *s,
                           const compare_tolerance *tol)
{
    mrt_session_options cpu = *opt;
    cpu.device = "cpu";
    cpu.on_node = NULL;
    cpu.on_node_user = NULL;
    mrt_session *ref = NULL;
    mrt_status st = mrt_session_new(m, &cpu, &ref);
    if (!st) st = mrt_session_run(ref, b->n, (const char *const *)b->names, b->vals);
    if (st) {
        mrt_session_free(ref);
        return cli_fail_status(st, "the CPU run of --cross-check");
    }
    int failed = 0;
    for (int i = 0; i < mrt_session_n_outputs(s); i++) {
        const mrt_value *a = mrt_session_output(s, i), *r = mrt_session_output(ref, i);
        const char *name = mrt_session_output_name(s, i);
        if (a->kind != MRT_VALUE_TENSOR || r->kind != MRT_VALUE_TENSOR) {
            fprintf(stderr, "cross-check %s: not a tensor, not compared\n", name);
            continue;
        }
        compare_result res;
        compare_tensors(&a->tensor, &r->tensor, tol, &res);
        fprintf(stderr, "cross-check %s: %s, max |diff| %.3g, max rel %.3g%s%s\n", name, res.passed ? "PASS" : "FAIL",
                res.max_abs, res.max_rel, res.passed ? "" : ": ", res.passed ? "" : res.reason);
        failed += !res.passed;
    }
    mrt_session_free(ref);
    if (failed) {
        cli_error("--cross-check: %d output(s) differ between %s and the CPU", failed, opt->device);
        return MRT_EXIT_ERROR;
    }
    return MRT_EXIT_OK;
}

static int report_stats(const mrt_session *s, bool print, const char *json_path)
{
    mrt_session_stats st;
    mrt_session_get_stats(s, &st);
    if (print) {
        fprintf(stderr, "plan: %d nodes (%d after folding, %d of them fused into others), %.3f ms\n", st.nodes_before,
                st.nodes_after, st.fused_nodes, st.plan_ms);
        if (st.function_nodes)
            fprintf(stderr, "functions: %d nodes run through an ONNX function body\n", st.function_nodes);
        fprintf(stderr, "memory: arena %zu bytes, naive %zu bytes (%.1f%%), liveness lower bound %zu bytes (arena/bound %.3f), "
                "in-place %d, Concat inputs written in place %d\n",
                st.arena_peak_bytes, st.naive_bytes, st.naive_bytes ? 100.0 * (double)st.arena_peak_bytes / (double)st.naive_bytes : 0.0,
                st.lower_bound_bytes, st.lower_bound_bytes ? (double)st.arena_peak_bytes / (double)st.lower_bound_bytes : 0.0,
                st.inplace_count, st.concat_inputs_in_place);
        fprintf(stderr, "weights: %zu bytes mapped from the file, %zu copied, %zu released once packed or uploaded to the device; %zu bytes packed\n",
                st.weights_mapped_bytes, st.weights_copied_bytes, st.weights_released_bytes, st.weights_packed_bytes);
        if (st.cuda_nodes || st.device_arena_bytes)
            fprintf(stderr, "cuda: %d nodes on the device, %d on the CPU; device arena %zu bytes, constants %zu bytes, "
                    "%d host<->device copies per run, %d streams, last run %.3f ms on the device\n", st.cuda_nodes,
                    st.cpu_nodes, st.device_arena_bytes, st.device_const_bytes, st.planned_copies, st.streams_used, st.gpu_ms);
        if (st.dynamic_nodes)
            fprintf(stderr, "run-time tensors: %d nodes with shapes known only at run time, their outputs at most %zu bytes "
                    "alive at once\n", st.dynamic_nodes, st.run_peak_bytes);
    }
    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f) {
            cli_error("cannot write '%s': %s", json_path, strerror(errno));
            return MRT_EXIT_ERROR;
        }
        fprintf(f,
                "{\"nodes_before\": %d, \"nodes_after\": %d, \"arena_peak_bytes\": {\"cpu\": %zu, \"cuda\": %zu}, "
                "\"device_const_bytes\": %zu, \"cuda_nodes\": %d, \"cpu_nodes\": %d, \"planned_copies\": %d, "
                "\"streams_used\": %d, \"gpu_ms\": %.6f, "
                "\"naive_bytes\": %zu, \"lower_bound_bytes\": %zu, \"inplace_count\": %d, \"concat_inputs_in_place\": %d, "
                "\"plan_ms\": %.6f, "
                "\"dynamic_nodes\": %d, \"function_nodes\": %d, \"fused_nodes\": %d, \"run_peak_bytes\": %zu, "
                "\"weights_bytes\": {\"mapped\": %zu, \"copied\": %zu, \"released\": %zu, \"packed\": %zu}}\n",
                st.nodes_before, st.nodes_after, st.arena_peak_bytes, st.device_arena_bytes, st.device_const_bytes,
                st.cuda_nodes, st.cpu_nodes, st.planned_copies, st.streams_used, (double)st.gpu_ms, st.naive_bytes, st.lower_bound_bytes,
                st.inplace_count, st.concat_inputs_in_place, st.plan_ms, st.dynamic_nodes, st.function_nodes,
                st.fused_nodes, st.run_peak_bytes, st.weights_mapped_bytes, st.weights_copied_bytes,
                st.weights_released_bytes, st.weights_packed_bytes);
        if (fclose(f) != 0) {
            cli_error("error writing '%s'", json_path);
            return MRT_EXIT_ERROR;
        }
    }
    return MRT_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *out_dir = NULL;
    const char **input_args = calloc(2 * (size_t)argc, sizeof(char *));
    int n_input_args = 0;
    const char **plugins = input_args + argc; /* --plugin paths share the allocation */
    int n_plugins = 0;
    bool plugin_replace = false, stats = false, cross_check = false;
    const char *stats_json = NULL;
    compare_tolerance cross_tol = {1e-5, 1e-5, ERROR_STAT_ELEMWISE, 0.5};
    dump_options dopt = {NULL, NULL, NULL};
    dump_ctx *dump = NULL;
    mrt_session_options opt = mrt_session_options_default();
    int rc = MRT_EXIT_OK;
    if (!input_args) return MRT_EXIT_ERROR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(run_usage, stdout);
            free(input_args);
            return MRT_EXIT_OK;
        } else if (strcmp(a, "--input") == 0 && has_next) {
            input_args[n_input_args++] = argv[++i];
        } else if (strcmp(a, "--output-dir") == 0 && has_next) {
            out_dir = argv[++i];
        } else if (strcmp(a, "--threads") == 0 && has_next) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1024) {
                cli_error("--threads expects a number from 1 to 1024, got '%s'", argv[i]);
                free(input_args);
                return MRT_EXIT_USAGE;
            }
            opt.n_threads = (int)v;
        } else if (cli_device_option(argc, argv, &i, &opt)) {
            continue;
        } else if (strcmp(a, "--cross-check") == 0) {
            cross_check = true;
        } else if ((strcmp(a, "--atol") == 0 || strcmp(a, "--rtol") == 0) && has_next) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (*end || !(v >= 0)) {
                cli_error("%s expects a non-negative number, got '%s'", a, argv[i]);
                free(input_args);
                return MRT_EXIT_USAGE;
            }
            if (a[2] == 'a') cross_tol.atol = v;
            else cross_tol.rtol = v;
        } else if (strcmp(a, "--plugin") == 0 && has_next) {
            plugins[n_plugins++] = argv[++i];
        } else if (strcmp(a, "--plugin-replace") == 0) {
            plugin_replace = true;
        } else if (strcmp(a, "--precision") == 0 && has_next) {
            const char *p = argv[++i];
            if (strcmp(p, "fp64") == 0) {
                opt.precision = MRT_PRECISION_FP64;
            } else if (strcmp(p, "fp32") != 0 && strcmp(p, "default") != 0) {
                cli_error("--precision expects fp32 or fp64, got '%s'", p);
                free(input_args);
                return MRT_EXIT_USAGE;
            }
        } else if (strcmp(a, "--dump-all") == 0 && has_next) {
            dopt.dir = argv[++i];
        } else if (strcmp(a, "--dump") == 0 && has_next) {
            dopt.names = argv[++i];
        } else if (strcmp(a, "--dump-op-type") == 0 && has_next) {
            dopt.op_types = argv[++i];
        } else if (strcmp(a, "--stats") == 0) {
            stats = true;
        } else if (strcmp(a, "--stats-json") == 0 && has_next) {
            stats_json = argv[++i];
        } else if (strcmp(a, "--no-mem-plan") == 0) {
            opt.no_mem_plan = true;
        } else if (strcmp(a, "--no-fold") == 0) {
            opt.no_fold = true;
        } else if (strcmp(a, "--no-fuse") == 0) {
            opt.no_fuse = true;
        } else if (strcmp(a, "--no-winograd") == 0) {
            opt.no_winograd = true;
        } else if (strcmp(a, "--expand-functions") == 0 && has_next) {
            opt.expand_functions = argv[++i];
        } else if (strcmp(a, "--poison-outputs") == 0) {
            opt.poison_outputs = true;
        } else if (a[0] == '-' && a[1]) {
            cli_error("unknown or incomplete option '%s' for 'run' (try 'minirt run --help')", a);
            free(input_args);
            return MRT_EXIT_USAGE;
        } else if (!model_path) {
            model_path = a;
        } else {
            cli_error("unexpected argument '%s' (inputs are given with --input)", a);
            free(input_args);
            return MRT_EXIT_USAGE;
        }
    }
    if (!model_path) {
        cli_error("'run' needs a model path (try 'minirt run --help')");
        free(input_args);
        return MRT_EXIT_USAGE;
    }
    if ((dopt.names || dopt.op_types) && !dopt.dir) {
        cli_error("--dump and --dump-op-type select what --dump-all DIR writes; give --dump-all too");
        free(input_args);
        return MRT_EXIT_USAGE;
    }
    mrt_model *m = NULL;
    mrt_session *s = NULL;
    bound_inputs b = {0};
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n_plugins && !st; i++) {
        st = mrt_plugin_load(plugins[i], plugin_replace);
        if (st) rc = cli_fail_status(st, NULL);
    }
    if (st) goto done;
    st = mrt_model_load(model_path, &m);
    if (st) {
        rc = cli_fail_status(st, model_path);
        goto done;
    }
    for (int i = 0; i < n_input_args && rc == MRT_EXIT_OK; i++) rc = bind_arg(&b, m, input_args[i]);
    if (rc) goto done;
    if (dopt.dir) {
        st = dump_begin(&dopt, &dump);
        for (int i = 0; !st && i < b.n; i++) st = dump_value(dump, b.names[i], NULL, NULL, &b.vals[i]);
        opt.on_node = dump_on_node;
        opt.on_node_user = dump;
    }
    if (!st) st = mrt_session_new(m, &opt, &s);
    if (!st) st = mrt_session_run(s, b.n, (const char *const *)b.names, b.vals);
    if (!st && dump) {
        for (int i = 0; i < n_input_args; i++) input_args[i] = input_arg_path(input_args[i]);
        dump_provenance prov = {model_path, opt.device, opt.precision == MRT_PRECISION_FP64 ? "fp64" : "fp32",
                                mrt_session_n_threads(s), n_input_args, input_args};
        st = dump_finish(dump, &prov);
        dump = NULL;
    }
    if (st) {
        rc = cli_fail_status(st, NULL);
        goto done;
    }
    if (stats || stats_json) {
        rc = report_stats(s, stats, stats_json);
        if (rc) goto done;
    }
    if (cross_check) {
        rc = run_cross_check(m, &opt, &b, s, &cross_tol);
        if (rc) goto done;
    }
    if (out_dir) {
        rc = write_outputs(s, out_dir);
    } else {
        for (int i = 0; i < mrt_session_n_outputs(s); i++)
            print_summary(mrt_session_output_name(s, i), mrt_session_output(s, i));
    }
done:
    dump_abort(dump);
    mrt_session_free(s);
    bound_free(&b);
    mrt_model_free(m);
    free(input_args);
    return rc;
}
