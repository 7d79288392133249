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

static const char run_usage[] =
    "usage: minirt run MODEL [options]\n"
    "  --input [NAME=]PATH   bind a graph input (.npy, .pb TensorProto, .npz by array name); a bare PATH binds\n"
    "                        the next unbound input in graph order (repeatable)\n"
    "  --output-dir DIR      write each output to DIR/<name>.npy (name sanitised to [A-Za-z0-9._-])\n"
    "  --threads N           CPU threads (default: all cores)\n"
    "  --device cpu|cuda     execution device (default cpu)\n";

static bool has_suffix(const char *s, const char *suf)
{
    size_t ls = strlen(s), lf = strlen(suf);
    return ls >= lf && strcmp(s + ls - lf, suf) == 0;
}

typedef struct bound_inputs {
    int n, cap;
    char **names;
    mrt_value *vals;
} bound_inputs;

static int bind(bound_inputs *b, const char *name, mrt_tensor t)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) {
            mrt_tensor_release(&t);
            cli_error("input '%s' is given twice", name);
            return MRT_EXIT_USAGE;
        }
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 8;
        char **nn = realloc(b->names, (size_t)nc * sizeof *nn);
        if (nn) b->names = nn;
        mrt_value *nv = nn ? realloc(b->vals, (size_t)nc * sizeof *nv) : NULL;
        if (!nn || !nv) {
            mrt_tensor_release(&t);
            cli_error("out of memory");
            return MRT_EXIT_ERROR;
        }
        b->vals = nv;
        b->cap = nc;
    }
    b->names[b->n] = strdup(name);
    b->vals[b->n] = mrt_value_from_tensor(t);
    b->n++;
    return MRT_EXIT_OK;
}

static void bound_free(bound_inputs *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->names[i]);
        mrt_value_release(&b->vals[i]);
    }
    free(b->names);
    free(b->vals);
}

static bool is_bound(const bound_inputs *b, const char *name)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) return true;
    return false;
}

/* One --input argument. */
static int bind_arg(bound_inputs *b, const mrt_model *m, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *name = NULL;
    const char *path = arg;
    /* NAME=PATH, unless the '=' is part of a path that exists as given */
    struct stat sb;
    if (eq && stat(arg, &sb) != 0) {
        name = strndup(arg, (size_t)(eq - arg));
        path = eq + 1;
    }
    int rc = MRT_EXIT_OK;
    mrt_status st;
    if (has_suffix(path, ".npz")) {
        int n = 0;
        char **names = NULL;
        mrt_tensor *ts = NULL;
        st = mrt_npz_read_file(path, &n, &names, &ts);
        if (st) {
            free(name);
            return cli_fail_status(st, path);
        }
        for (int i = 0; i < n; i++) {
            if (rc == MRT_EXIT_OK)
                rc = bind(b, names[i], ts[i]);
            else
                mrt_tensor_release(&ts[i]);
            free(names[i]);
        }
        free(names);
        free(ts);
        free(name);
        return rc;
    }
    mrt_tensor t;
    if (has_suffix(path, ".npy")) {
        st = mrt_npy_read_file(path, &t);
    } else if (has_suffix(path, ".pb")) {
        char *pb_name = NULL;
        st = mrt_tensor_proto_read_file(path, &t, &pb_name);
        free(pb_name);
    } else {
        free(name);
        cli_error("input file '%s': unknown format (expected .npy, .pb or .npz)", path);
        return MRT_EXIT_USAGE;
    }
    if (st) {
        free(name);
        return cli_fail_status(st, path);
    }
    if (!name) {
        for (int i = 0; i < mrt_model_n_inputs(m); i++) {
            const char *in = mrt_model_input_name(m, i);
            if (!is_bound(b, in)) {
                name = strdup(in);
                break;
            }
        }
        if (!name) {
            mrt_tensor_release(&t);
            cli_error("input file '%s': every model input is already bound (the model has %d inputs)", path,
                      mrt_model_n_inputs(m));
            return MRT_EXIT_USAGE;
        }
    }
    rc = bind(b, name, t);
    free(name);
    return rc;
}

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
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
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

int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *out_dir = NULL;
    const char **input_args = calloc((size_t)argc, sizeof(char *));
    int n_input_args = 0;
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
        } else if (strcmp(a, "--device") == 0 && has_next) {
            opt.device = argv[++i];
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
    mrt_model *m = NULL;
    mrt_session *s = NULL;
    bound_inputs b = {0};
    mrt_status st = mrt_model_load(model_path, &m);
    if (st) {
        rc = cli_fail_status(st, model_path);
        goto done;
    }
    for (int i = 0; i < n_input_args && rc == MRT_EXIT_OK; i++) rc = bind_arg(&b, m, input_args[i]);
    if (rc) goto done;
    st = mrt_session_new(m, &opt, &s);
    if (!st) st = mrt_session_run(s, b.n, (const char *const *)b.names, b.vals);
    if (st) {
        rc = cli_fail_status(st, NULL);
        goto done;
    }
    if (out_dir) {
        rc = write_outputs(s, out_dir);
    } else {
        for (int i = 0; i < mrt_session_n_outputs(s); i++)
            print_summary(mrt_session_output_name(s, i), mrt_session_output(s, i));
    }
done:
    mrt_session_free(s);
    bound_free(&b);
    mrt_model_free(m);
    free(input_args);
    return rc;
}
