/* `minirt conformance`: run ONNX backend test folders (model.onnx + test_data_set_N/{input,output}_K.pb) and
 * compare like the official runner: same dtype and shape, |ours - ref| <= atol + rtol*|ours| for floats
 * (rtol 1e-3, atol 1e-7, NaN where NaN, inf where inf of the same sign), exact for ints, bools and strings.
 * Each test runs in a forked child (with a time limit) so one crashing kernel can't end the run. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "loader/tensor_proto.h"
#include "tools/cli.h"
#include "tools/compare.h"

#define CONF_RTOL 1e-3
#define CONF_ATOL 1e-7
#define CONF_TIME_LIMIT_S 60

typedef struct str_list {
    int n, cap;
    char **items;
} str_list;

static int list_add(str_list *l, const char *s)
{
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 64;
        char **ni = realloc(l->items, (size_t)nc * sizeof *ni);
        if (!ni) return -1;
        l->items = ni;
        l->cap = nc;
    }
    if (!(l->items[l->n] = strdup(s))) return -1;
    l->n++;
    return 0;
}

static void list_free(str_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool is_test_dir(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/model.onnx", dir);
    return file_exists(p);
}

/* "suite/name" from ".../suite/name" (trailing slashes ignored). */
static void test_id(const char *dir, char *out, size_t len)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    char *name = strrchr(buf, '/');
    if (!name) {
        snprintf(out, len, "%s", buf);
        return;
    }
    *name++ = '\0';
    char *suite = strrchr(buf, '/');
    suite = suite ? suite + 1 : buf;
    snprintf(out, len, "%s/%s", suite, name);
}

static int collect_tests(const char *arg, str_list *tests)
{
    if (is_test_dir(arg)) return list_add(tests, arg);
    DIR *d = opendir(arg);
    if (!d) {
        cli_error("'%s': not a test folder (no model.onnx) and not a folder of tests: %s", arg, strerror(errno));
        return -1;
    }
    str_list found = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", arg, de->d_name);
        if (is_test_dir(p)) list_add(&found, p);
    }
    closedir(d);
    qsort(found.items, (size_t)found.n, sizeof(char *), cmp_str);
    for (int i = 0; i < found.n; i++) list_add(tests, found.items[i]);
    list_free(&found);
    return 0;
}

/* ------------------------------------------------------------------ comparison */

typedef struct out_stats {
    double max_abs, max_rel, max_ulp;
} out_stats;

static bool compare_tensor(const mrt_tensor *got, const mrt_tensor *ref, out_stats *stats, char *why, size_t len)
{
    char a[256], b[256];
    if (got->dtype != ref->dtype || got->rank != ref->rank ||
        memcmp(got->shape, ref->shape, (size_t)got->rank * sizeof(int64_t)) != 0) {
        snprintf(why, len, "got %s, expected %s", mrt_tensor_describe(got, a, sizeof a),
                 mrt_tensor_describe(ref, b, sizeof b));
        return false;
    }
    int64_t n = mrt_tensor_numel(ref);
    if (ref->dtype == MRT_DTYPE_STRING) {
        for (int64_t i = 0; i < n; i++) {
            const char *x = ((char **)got->data)[i], *y = ((char **)ref->data)[i];
            if (strcmp(x ? x : "", y ? y : "") != 0) {
                snprintf(why, len, "element %lld: got \"%.60s\", expected \"%.60s\"", (long long)i, x, y);
                return false;
            }
        }
        return true;
    }
    bool is_float = mrt_dtype_is_float(ref->dtype);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) {
        if (!is_float) {
            int64_t x = mrt_load_i64(got->dtype, got->data, i), y = mrt_load_i64(ref->dtype, ref->data, i);
            if (ref->dtype == MRT_DTYPE_UINT64) {
                x = (int64_t)((const uint64_t *)got->data)[i];
                y = (int64_t)((const uint64_t *)ref->data)[i];
            }
            if (x != y) {
                if (ok) snprintf(why, len, "element %lld: got %lld, expected %lld", (long long)i, (long long)x, (long long)y);
                ok = false;
                stats->max_abs = fmax(stats->max_abs, fabs((double)x - (double)y));
            }
            continue;
        }
        double x = mrt_load_f64(got->dtype, got->data, i), y = mrt_load_f64(ref->dtype, ref->data, i);
        if (isnan(x) || isnan(y)) {
            if (isnan(x) != isnan(y)) {
                if (ok) snprintf(why, len, "element %lld: got %.9g, expected %.9g", (long long)i, x, y);
                ok = false;
            }
            continue;
        }
        if (isinf(x) || isinf(y)) {
            if (x != y) {
                if (ok) snprintf(why, len, "element %lld: got %.9g, expected %.9g", (long long)i, x, y);
                ok = false;
            }
            continue;
        }
        double d = fabs(x - y);
        stats->max_abs = fmax(stats->max_abs, d);
        if (y != 0) stats->max_rel = fmax(stats->max_rel, d / fabs(y));
        stats->max_ulp = fmax(stats->max_ulp, ulp_distance(x, y, ref->dtype == MRT_DTYPE_DOUBLE));
        if (d > CONF_ATOL + CONF_RTOL * fabs(x)) {
            if (ok)
                snprintf(why, len, "element %lld: got %.9g, expected %.9g (|diff| %.3g)", (long long)i, x, y, d);
            ok = false;
        }
    }
    return ok;
}

static bool compare_value(const mrt_value *got, const mrt_value *ref, out_stats *stats, char *why, size_t len)
{
    if (got->kind != ref->kind) {
        static const char *const kinds[] = {"none", "tensor", "sequence"};
        snprintf(why, len, "got a %s, expected a %s", kinds[got->kind], kinds[ref->kind]);
        return false;
    }
    if (ref->kind == MRT_VALUE_TENSOR) return compare_tensor(&got->tensor, &ref->tensor, stats, why, len);
    if (ref->kind == MRT_VALUE_SEQUENCE) {
        if (got->n_items != ref->n_items) {
            snprintf(why, len, "sequence of %lld items, expected %lld", (long long)got->n_items,
                     (long long)ref->n_items);
            return false;
        }
        for (int64_t i = 0; i < ref->n_items; i++) {
            char inner[512];
            if (!compare_tensor(&got->items[i], &ref->items[i], stats, inner, sizeof inner)) {
                snprintf(why, len, "item %lld: %s", (long long)i, inner);
                return false;
            }
        }
    }
    return true;
}

/* ------------------------------------------------------------------ one test */

static mrt_type_kind declared_kind(const mrt_graph_value *v)
{
    return v->type.kind == MRT_TYPE_UNKNOWN ? MRT_TYPE_TENSOR : v->type.kind;
}

static void json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

typedef struct test_result {
    char status[8];    /* PASS / FAIL / SKIP */
    char reason[1024];
    char outputs_json[4096];
} test_result;

static int cmp_data_sets(const void *a, const void *b)
{
    const char *x = strrchr(*(char *const *)a, '_'), *y = strrchr(*(char *const *)b, '_');
    return atoi(x ? x + 1 : "0") - atoi(y ? y + 1 : "0");
}

/* --expand-functions: ops to run through their function body (read by run_test, also in the forked child) */
static const char *expand_functions;
/* --device, --no-cpu-fallback, --allow-tf32 (cli_device_option); the rest of each test's options are set per test */
static mrt_session_options device_opt = {.device = "cpu"};

static void run_test(const char *dir, test_result *r)
{
    char path[4096];
    snprintf(r->status, sizeof r->status, "FAIL");
    r->reason[0] = '\0';
    r->outputs_json[0] = '\0';
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    mrt_model *m = NULL;
    mrt_session *s = NULL;
    mrt_status st = mrt_model_load(path, &m);
    if (st) {
        snprintf(r->reason, sizeof r->reason, "load: %s", mrt_last_error());
        return;
    }
    str_list sets = {0};
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strncmp(de->d_name, "test_data_set_", 14) == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            list_add(&sets, path);
        }
    if (d) closedir(d);
    qsort(sets.items, (size_t)sets.n, sizeof(char *), cmp_data_sets);
    if (sets.n == 0) {
        snprintf(r->status, sizeof r->status, "SKIP");
        snprintf(r->reason, sizeof r->reason, "no test_data_set_* folder");
        goto done;
    }
    mrt_session_options opt = device_opt;
    opt.expand_functions = expand_functions;
    opt.poison_outputs = true; /* a kernel that promises to write every element is held to it */
    st = mrt_session_new(m, &opt, &s);
    if (st) {
        snprintf(r->reason, sizeof r->reason, "%s", mrt_last_error());
        goto done;
    }
    const mrt_graph *g = m->graph;
    int n_in = mrt_model_n_inputs(m);
    size_t jpos = 0;
    bool all_ok = true;
    for (int ds = 0; ds < sets.n && all_ok; ds++) {
        const char **names = calloc((size_t)n_in + 1, sizeof(char *));
        mrt_value *vals = calloc((size_t)n_in + 1, sizeof(mrt_value));
        int n_bound = 0;
        for (int i = 0; i < n_in && !st; i++) {
            const char *in_name = mrt_model_input_name(m, i);
            names[i] = in_name;
            snprintf(path, sizeof path, "%s/input_%d.pb", sets.items[ds], i);
            if (!file_exists(path)) { /* fewer files than inputs: the rest are omitted optionals */
                vals[i].kind = MRT_VALUE_NONE;
                vals[i].is_optional = true;
                n_bound++;
                continue;
            }
            const mrt_graph_value *gv = &g->values[mrt_graph_find_value(g, in_name)];
            st = mrt_value_proto_read_file(path, declared_kind(gv), &vals[i]);
            if (st) snprintf(r->reason, sizeof r->reason, "reading %s: %s", path, mrt_last_error());
            n_bound++;
        }
        if (!st) {
            st = mrt_session_run(s, n_bound, names, vals);
            if (st) snprintf(r->reason, sizeof r->reason, "%s", mrt_last_error());
        }
        for (int o = 0; !st && o < g->n_outputs; o++) {
            const mrt_graph_value *gv = &g->values[g->outputs[o]];
            mrt_value ref;
            memset(&ref, 0, sizeof ref);
            snprintf(path, sizeof path, "%s/output_%d.pb", sets.items[ds], o);
            st = mrt_value_proto_read_file(path, declared_kind(gv), &ref);
            if (st) {
                snprintf(r->reason, sizeof r->reason, "reading %s: %s", path, mrt_last_error());
                break;
            }
            out_stats stats = {0, 0, 0};
            char why[700] = "";
            bool ok = compare_value(mrt_session_output(s, o), &ref, &stats, why, sizeof why);
            mrt_value_release(&ref);
            if (jpos < sizeof r->outputs_json - 200)
                jpos += (size_t)snprintf(r->outputs_json + jpos, sizeof r->outputs_json - jpos,
                                         "%s{\"data_set\":%d,\"output\":%d,\"max_abs_err\":%.6g,\"max_rel_err\":%.6g,"
                                         "\"max_ulp\":%.6g,\"pass\":%s}",
                                         jpos ? "," : "", ds, o, stats.max_abs, stats.max_rel, stats.max_ulp,
                                         ok ? "true" : "false");
            if (!ok && all_ok) {
                snprintf(r->reason, sizeof r->reason, "data set %d, output '%s': %s", ds, gv->name, why);
                all_ok = false;
            }
        }
        for (int i = 0; i < n_in; i++) mrt_value_release(&vals[i]);
        free(vals);
        free(names);
        if (st) all_ok = false;
    }
    if (all_ok) snprintf(r->status, sizeof r->status, "PASS");
done:
    list_free(&sets);
    mrt_session_free(s);
    mrt_model_free(m);
}

/* Run in a child; the parent reads the fixed-size result back through a pipe. */
static void run_test_forked(const char *dir, test_result *r)
{
    int fds[2];
    if (pipe(fds) != 0) {
        run_test(dir, r);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(CONF_TIME_LIMIT_S);
        test_result res;
        run_test(dir, &res);
        const char *p = (const char *)&res;
        size_t left = sizeof res;
        while (left) {
            ssize_t w = write(fds[1], p, left);
            if (w <= 0) break;
            p += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    memset(r, 0, sizeof *r);
    size_t got = 0;
    char *p = (char *)r;
    while (pid > 0 && got < sizeof *r) {
        ssize_t n = read(fds[0], p + got, sizeof *r - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fds[0]);
    int wst = 0;
    if (pid > 0) waitpid(pid, &wst, 0);
    if (pid < 0 || got != sizeof *r) {
        snprintf(r->status, sizeof r->status, "FAIL");
        if (pid > 0 && WIFSIGNALED(wst))
            snprintf(r->reason, sizeof r->reason, "crashed (%s)",
                     WTERMSIG(wst) == SIGALRM ? "time limit exceeded" : strsignal(WTERMSIG(wst)));
        else
            snprintf(r->reason, sizeof r->reason, "the test process failed");
        r->outputs_json[0] = '\0';
    }
}

static int load_required(const char *path, str_list *req)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strlen(p);
        while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' ')) p[--n] = '\0';
        if (!n || p[0] == '#') continue;
        list_add(req, p);
    }
    fclose(f);
    qsort(req->items, (size_t)req->n, sizeof(char *), cmp_str);
    return 0;
}

static bool in_sorted(const str_list *l, const char *s)
{
    return bsearch(&s, l->items, (size_t)l->n, sizeof(char *), cmp_str) != NULL;
}

int cmd_conformance(int argc, char **argv)
{
    const char *json_path = NULL, *require_path = NULL;
    bool fork_tests = true, quiet = false;
    str_list tests = {0}, req = {0}, seen = {0};
    int rc = MRT_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--require") == 0 && i + 1 < argc) {
            require_path = argv[++i];
        } else if (strcmp(argv[i], "--no-fork") == 0) {
            fork_tests = false;
        } else if (strcmp(argv[i], "--expand-functions") == 0 && i + 1 < argc) {
            expand_functions = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else if (cli_device_option(argc, argv, &i, &device_opt)) {
            continue;
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: minirt conformance [--json FILE] [--require LIST] [--expand-functions OPS] [--no-fork]\n"
                   "                          [--quiet] DIR...\n"
                   "  DIR is a test folder (with model.onnx) or a folder of them.\n"
                   "  --require LIST  run only the tests named in LIST (lines 'suite/test_name'); exit 1 when one\n"
                   "                  of them does not pass or is missing (the conformance ratchet)\n"
                   "  --expand-functions OPS  run these ops (comma-separated, or 'all') through their ONNX function\n"
                   "                  body even where minirt has a kernel\n"
                   "  --quiet         print only failures and the summary\n"
                   CLI_DEVICE_USAGE);
            return MRT_EXIT_OK;
        } else if (argv[i][0] == '-') {
            cli_error("unknown option '%s' for 'conformance'", argv[i]);
            return MRT_EXIT_USAGE;
        } else if (collect_tests(argv[i], &tests) != 0) {
            list_free(&tests);
            return MRT_EXIT_USAGE;
        }
    }
    if (tests.n == 0 && !require_path) {
        cli_error("no test folders given (try 'minirt conformance ../shared/onnx-tests/node')");
        return MRT_EXIT_USAGE;
    }
    if (require_path && load_required(require_path, &req) != 0) {
        list_free(&tests);
        return MRT_EXIT_USAGE;
    }
    FILE *jf = NULL;
    if (json_path && !(jf = fopen(json_path, "w"))) {
        cli_error("cannot write '%s': %s", json_path, strerror(errno));
        list_free(&tests);
        list_free(&req);
        return MRT_EXIT_ERROR;
    }
    if (jf) fprintf(jf, "{\"rtol\":%g,\"atol\":%g,\"tests\":[", CONF_RTOL, CONF_ATOL);
    int passed = 0, failed = 0, skipped = 0;
    for (int t = 0; t < tests.n; t++) {
        char id[512];
        test_id(tests.items[t], id, sizeof id);
        if (require_path && !in_sorted(&req, id)) continue;
        list_add(&seen, id);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        test_result r;
        if (fork_tests)
            run_test_forked(tests.items[t], &r);
        else
            run_test(tests.items[t], &r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        bool pass = strcmp(r.status, "PASS") == 0, skip = strcmp(r.status, "SKIP") == 0;
        passed += pass;
        skipped += skip;
        failed += !pass && !skip;
        if (!quiet || !pass) {
            if (pass)
                printf("PASS %s\n", id);
            else
                printf("%s %s: %s\n", r.status, id, r.reason);
        }
        if (jf) {
            fprintf(jf, "%s\n{\"name\":", (passed + failed + skipped) > 1 ? "," : "");
            json_escape(jf, id);
            fprintf(jf, ",\"status\":\"%s\",\"reason\":", r.status);
            json_escape(jf, r.reason);
            fprintf(jf, ",\"time_ms\":%.3f,\"outputs\":[%s]}", ms, r.outputs_json);
        }
    }
    if (require_path) {
        qsort(seen.items, (size_t)seen.n, sizeof(char *), cmp_str);
        for (int i = 0; i < req.n; i++)
            if (!in_sorted(&seen, req.items[i])) {
                printf("FAIL %s: required test not found in the given folders\n", req.items[i]);
                failed++;
            }
    }
    if (jf) {
        fprintf(jf, "\n],\"passed\":%d,\"failed\":%d,\"skipped\":%d}\n", passed, failed, skipped);
        fclose(jf);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (require_path && failed) rc = MRT_EXIT_ERROR;
    list_free(&tests);
    list_free(&req);
    list_free(&seen);
    return rc;
}
