/* `minirt bench`: time a model (trtexec's method: warm up by time, then at least N iterations and at least S
   seconds), report the latency distribution with provenance, and optionally a per-node profile in the Chrome
   trace format that ONNX Runtime writes (loads in Perfetto / chrome://tracing). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "ops_cpu/blas_info.h"
#include "tools/cli.h"

static const char bench_usage[] =
    "usage: minirt bench MODEL [options]\n"
    "  --input [NAME=]PATH   bind a graph input (as in 'minirt run'); inputs not given are filled with seeded\n"
    "                        uniform values in [-1, 1) (integers: 0) when their declared shape is static\n"
    "  --threads N           CPU threads (default: all cores)\n"
    CLI_DEVICE_USAGE
    "  --warmup-ms MS        warm-up time before measuring (default 200)\n"
    "  --iterations N        measure at least N runs (default 10)\n"
    "  --duration S          and for at least S seconds (default 3)\n"
    "  --json FILE           write the statistics, every run's time and the provenance as JSON\n"
    "  --profile FILE.json   after measuring, run --profile-runs more times with per-node timing and write a\n"
    "                        Chrome trace (ONNX Runtime's profile format); print a per-node table\n"
    "  --profile-runs N      profiled runs (default 10)\n"
    "  --top N               rows of the per-node table (default 25; 0 = all)\n"
    "  --no-fuse             run Conv's BatchNormalization/Add/activation successors, groups of element-wise\n"
    "                        nodes and the Mul of a squeeze-excite block before its 1x1 Conv as nodes of their own\n"
    "                        (as in 'minirt run'), so the profile times each kernel alone\n"
    "  --no-winograd         3x3 stride-1 float32 Convs by the GEMM (im2col's sums, as every other Conv)\n"
    "                        instead of Winograd's F(2x2, 3x3)\n"
    "  --no-mem-plan         one buffer per value instead of the planned arena (as 'minirt run'): how much\n"
    "                        the arena's reuse of memory costs or saves\n"
    "  --plugin LIB.so       load an op plugin first (repeatable)\n"
    "  --quiet               print only the summary line\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ------------------------------------------------------------------ synthetic inputs */

static uint64_t next_random(uint64_t *s)
{
    /* splitmix64: a fixed, documented stream so that two benchmark runs see the same inputs */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fill every graph input that --input did not bind (initializer-backed ones keep their initializer). */
static int bind_synthetic(bound_inputs *b, const mrt_model *m, bool quiet)
{
    const mrt_graph *g = m->graph;
    uint64_t seed = 42;
    for (int i = 0; i < g->n_inputs; i++) {
        const mrt_graph_value *v = &g->values[g->inputs[i]];
        bool bound = v->initializer != NULL;
        for (int k = 0; k < b->n && !bound; k++) bound = strcmp(b->names[k], v->name) == 0;
        if (bound) continue;
        bool ok = v->type.kind == MRT_TYPE_TENSOR && v->type.rank >= 0 && mrt_dtype_is_known(v->type.elem_type) &&
                  v->type.elem_type != MRT_DTYPE_STRING;
        for (int d = 0; ok && d < v->type.rank; d++) ok = v->type.dims[d] >= 0;
        if (!ok) {
            cli_error("input '%s' has no static tensor shape in the model; give it with --input", v->name);
            return MRT_EXIT_USAGE;
        }
        mrt_tensor t;
        mrt_status st = mrt_tensor_alloc(&t, v->type.elem_type, v->type.rank, v->type.dims);
        if (st) return cli_fail_status(st, v->name);
        if (mrt_dtype_is_float(t.dtype))
            for (int64_t k = 0, n = mrt_tensor_numel(&t); k < n; k++)
                mrt_store_f64(t.dtype, t.data, k, (double)(next_random(&seed) >> 11) * 0x1p-52 - 1.0);
        char desc[160];
        if (!quiet) fprintf(stderr, "bench: input '%s' %s: synthetic\n", v->name, mrt_tensor_describe(&t, desc, sizeof desc));
        int rc = bind_tensor(b, v->name, t);
        if (rc) return rc;
    }
    return MRT_EXIT_OK;
}

/* ------------------------------------------------------------------ statistics */

typedef struct bench_stats {
    int n;
    double min, mean, median, p90, p95, p99, max, cv;
} bench_stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Percentile by linear interpolation between closest ranks (numpy's default). */
static double percentile(const double *sorted, int n, double p)
{
    double pos = p / 100.0 * (n - 1);
    int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

static bench_stats compute_stats(const double *times, int n)
{
    bench_stats s = {n, 0, 0, 0, 0, 0, 0, 0, 0};
    double *v = malloc((size_t)n * sizeof *v);
    if (!v || n == 0) {
        free(v);
        return s;
    }
    memcpy(v, times, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    s.mean = sum / n;
    for (int i = 0; i < n; i++) sq += (v[i] - s.mean) * (v[i] - s.mean);
    s.cv = n > 1 && s.mean > 0 ? sqrt(sq / (n - 1)) / s.mean : 0;
    s.min = v[0];
    s.max = v[n - 1];
    s.median = percentile(v, n, 50);
    s.p90 = percentile(v, n, 90);
    s.p95 = percentile(v, n, 95);
    s.p99 = percentile(v, n, 99);
    free(v);
    return s;
}

/* ------------------------------------------------------------------ provenance */

typedef struct provenance {
    char cpu[256];
    char clock[128];
} provenance;

static void read_provenance(provenance *p)
{
    snprintf(p->cpu, sizeof p->cpu, "unknown CPU");
    snprintf(p->clock, sizeof p->clock, "unreadable");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    double mhz = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *val = colon + 1 + (colon[1] == ' ');
        val[strcspn(val, "\n")] = 0;
        if (strncmp(line, "model name", 10) == 0 && strcmp(p->cpu, "unknown CPU") == 0)
            snprintf(p->cpu, sizeof p->cpu, "%s", val);
        else if (strncmp(line, "cpu MHz", 7) == 0 && mhz == 0)
            mhz = atof(val);
    }
    if (f) fclose(f);
    long cur = 0, max = 0;
    f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "r");
    if (f && fscanf(f, "%ld", &cur) != 1) cur = 0;
    if (f) fclose(f);
    f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    if (f && fscanf(f, "%ld", &max) != 1) max = 0;
    if (f) fclose(f);
    if (cur > 0) snprintf(p->clock, sizeof p->clock, "%.0f MHz now, %.0f MHz max (cpufreq)", cur / 1e3, max / 1e3);
    else if (mhz > 0) snprintf(p->clock, sizeof p->clock, "%.0f MHz (/proc/cpuinfo)", mhz);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* ------------------------------------------------------------------ per-node profile */

/* What the on_node callback records: cheap (a timestamp and output shapes), strings are built afterwards. */
typedef struct node_shapes {
    int n;
    mrt_dtype dtype[8];
    int rank[8];
    int64_t shape[8][MRT_MAX_RANK];
} node_shapes;

typedef struct profiler {
    const mrt_graph *g;
    double run_start;   /* now_ms() before mrt_session_run */
    double last;        /* end of the previous node (or run_start) */
    int run;            /* profiled run index */
    int n_runs;
    double *start, *dur; /* [run][node]: ms from the run's start; NaN = not executed */
    node_shapes *outs;  /* [node], from the last profiled run */
} profiler;

static mrt_status profile_on_node(void *user, const mrt_node *node, int n_outputs, const char *const *names,
                                  const mrt_value *const *outputs)
{
    (void)names;
    profiler *p = user;
    double t = now_ms();
    int k = (int)(node - p->g->nodes);
    if (k < 0 || k >= p->g->n_nodes) return MRT_STATUS_OK;
    size_t at = (size_t)p->run * (size_t)p->g->n_nodes + (size_t)k;
    p->start[at] = p->last - p->run_start;
    p->dur[at] = t - p->last;
    node_shapes *o = &p->outs[k];
    o->n = 0;
    for (int i = 0; i < n_outputs && o->n < 8; i++) {
        if (outputs[i]->kind != MRT_VALUE_TENSOR) continue;
        const mrt_tensor *tt = &outputs[i]->tensor;
        o->dtype[o->n] = tt->dtype;
        o->rank[o->n] = tt->rank;
        memcpy(o->shape[o->n], tt->shape, (size_t)tt->rank * sizeof(int64_t));
        o->n++;
    }
    p->last = now_ms(); /* the callback's own time is not charged to the next node */
    return MRT_STATUS_OK;
}

/* The tensor type of value v as seen in the profiled run: initializer, bound input or a node's output. */
static bool value_type(const profiler *p, const bound_inputs *b, int v, mrt_dtype *dt, int *rank, const int64_t **shape)
{
    const mrt_graph_value *gv = &p->g->values[v];
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], gv->name) == 0 && b->vals[i].kind == MRT_VALUE_TENSOR) {
            *dt = b->vals[i].tensor.dtype;
            *rank = b->vals[i].tensor.rank;
            *shape = b->vals[i].tensor.shape;
            return true;
        }
    if (gv->initializer) {
        *dt = gv->initializer->dtype;
        *rank = gv->initializer->rank;
        *shape = gv->initializer->shape;
        return true;
    }
    if (gv->producer >= 0) {
        const mrt_node *pn = &p->g->nodes[gv->producer];
        const node_shapes *o = &p->outs[gv->producer];
        for (int i = 0, k = 0; i < pn->n_outputs && k < o->n; i++) {
            if (pn->outputs[i] < 0) continue;
            if (pn->outputs[i] == v) {
                *dt = o->dtype[k];
                *rank = o->rank[k];
                *shape = o->shape[k];
                return true;
            }
            k++;
        }
    }
    return false;
}

/* Floating-point operations of the ops whose count is standard (multiply-add = 2), or 0 when unknown. */
static double node_flops(const profiler *p, const bound_inputs *b, int k)
{
    const mrt_node *nd = &p->g->nodes[k];
    const node_shapes *o = &p->outs[k];
    if (o->n == 0 || nd->n_inputs < 2 || nd->inputs[0] < 0 || nd->inputs[1] < 0) return 0;
    mrt_dtype dt;
    int ra, rw;
    const int64_t *sa, *sw;
    if (!value_type(p, b, nd->inputs[0], &dt, &ra, &sa) || !value_type(p, b, nd->inputs[1], &dt, &rw, &sw)) return 0;
    double y = 1;
    for (int d = 0; d < o->rank[0]; d++) y *= (double)o->shape[0][d];
    const char *op = nd->op_type;
    if (!strcmp(op, "Conv") || !strcmp(op, "DeformConv") || !strcmp(op, "deform_conv2d") ||
        !strcmp(op, "ConvInteger")) {
        /* W is [C_out, C_in/group, k...]: each output element takes C_in/group * prod(k) multiply-adds */
        double per = 1;
        for (int d = 1; d < rw; d++) per *= (double)sw[d];
        return 2 * y * per;
    }
    if (!strcmp(op, "ConvTranspose")) {
        double x = 1, per = 1;
        for (int d = 0; d < ra; d++) x *= (double)sa[d];
        for (int d = 1; d < rw; d++) per *= (double)sw[d]; /* W is [C_in, C_out/group, k...] */
        return 2 * x * per;
    }
    if (!strcmp(op, "MatMul") || !strcmp(op, "MatMulInteger") || !strcmp(op, "Gemm")) {
        if (ra < 1) return 0;
        int64_t kdim = sa[ra - 1];
        const mrt_attr *ta = mrt_node_attr(nd, "transA");
        if (!strcmp(op, "Gemm") && ra == 2 && ta && ta->type == MRT_ATTR_INT && ta->i) kdim = sa[0];
        return 2 * y * (double)kdim;
    }
    return 0;
}

typedef struct node_row {
    int node;
    double ms, flops;
} node_row;

static int cmp_row(const void *a, const void *b)
{
    double x = ((const node_row *)a)->ms, y = ((const node_row *)b)->ms;
    return x > y ? -1 : x < y;
}

static void format_type_shape(char *buf, size_t cap, mrt_dtype dt, int rank, const int64_t *shape)
{
    size_t len = (size_t)snprintf(buf, cap, "%s[", mrt_dtype_name(dt));
    for (int d = 0; d < rank && len < cap; d++) len += (size_t)snprintf(buf + len, cap - len, d ? ",%lld" : "%lld", (long long)shape[d]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* ONNX Runtime's profiles name element types as C++ does ("float", not "float32") */
static const char *ort_type_name(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT ? "float" : dt == MRT_DTYPE_DOUBLE ? "double" : mrt_dtype_name(dt);
}

static void json_type_shapes(FILE *f, const profiler *p, const bound_inputs *b, const mrt_node *nd, bool inputs)
{
    fputc('[', f);
    bool first = true;
    int n = inputs ? nd->n_inputs : nd->n_outputs;
    for (int i = 0; i < n; i++) {
        int v = inputs ? nd->inputs[i] : nd->outputs[i];
        mrt_dtype dt;
        int rank;
        const int64_t *shape;
        if (v < 0 || !value_type(p, b, v, &dt, &rank, &shape)) continue;
        fprintf(f, "%s{\"%s\":[", first ? "" : ",", ort_type_name(dt));
        for (int d = 0; d < rank; d++) fprintf(f, d ? ",%lld" : "%lld", (long long)shape[d]);
        fputs("]}", f);
        first = false;
    }
    fputc(']', f);
}

static int write_trace(const char *path, const profiler *p, const bound_inputs *b, const double *run_ms,
                       const char *model_path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        return MRT_EXIT_ERROR;
    }
    int pid = (int)getpid();
    double base = 0; /* runs are laid out one after another on the time axis, in µs */
    fputs("[\n", f);
    for (int r = 0; r < p->n_runs; r++) {
        fprintf(f, "{\"cat\":\"Session\",\"pid\":%d,\"tid\":0,\"dur\":%.3f,\"ts\":%.3f,\"ph\":\"X\",\"name\":\"model_run\","
                   "\"args\":{\"model\":", pid, run_ms[r] * 1e3, base);
        json_string(f, model_path);
        fputs("}},\n", f);
        for (int k = 0; k < p->g->n_nodes; k++) {
            size_t at = (size_t)r * (size_t)p->g->n_nodes + (size_t)k;
            if (isnan(p->dur[at])) continue;
            const mrt_node *nd = &p->g->nodes[k];
            fprintf(f, "{\"cat\":\"Node\",\"pid\":%d,\"tid\":0,\"dur\":%.3f,\"ts\":%.3f,\"ph\":\"X\",\"name\":", pid,
                    p->dur[at] * 1e3, base + p->start[at] * 1e3);
            char name[512];
            snprintf(name, sizeof name, "%s_kernel_time", nd->name);
            json_string(f, name);
            fputs(",\"args\":{\"op_name\":", f);
            json_string(f, nd->op_type);
            fputs(",\"provider\":\"minirt_cpu\",\"input_type_shape\":", f);
            json_type_shapes(f, p, b, nd, true);
            fputs(",\"output_type_shape\":", f);
            json_type_shapes(f, p, b, nd, false);
            fputs("}},\n", f);
        }
        base += run_ms[r] * 1e3 + 10; /* a 10 µs gap between runs keeps them apart in the viewer */
    }
    /* metadata closes the array (and avoids a trailing comma) */
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"minirt\"}}\n]\n", pid);
    if (fclose(f) != 0) {
        cli_error("error writing '%s'", path);
        return MRT_EXIT_ERROR;
    }
    return MRT_EXIT_OK;
}

static void print_node_table(const profiler *p, const bound_inputs *b, const double *run_ms, double bench_median,
                             int top)
{
    int nn = p->g->n_nodes;
    node_row *rows = calloc((size_t)nn, sizeof *rows);
    double *tmp = malloc((size_t)p->n_runs * sizeof *tmp);
    if (!rows || !tmp) {
        free(rows);
        free(tmp);
        return;
    }
    int n_rows = 0;
    double sum = 0, run_sum = 0;
    for (int r = 0; r < p->n_runs; r++) run_sum += run_ms[r];
    for (int k = 0; k < nn; k++) {
        int m = 0;
        for (int r = 0; r < p->n_runs; r++) {
            double d = p->dur[(size_t)r * (size_t)nn + (size_t)k];
            if (!isnan(d)) tmp[m++] = d;
        }
        if (!m) continue;
        double mean = 0;
        for (int i = 0; i < m; i++) mean += tmp[i];
        mean /= m;
        rows[n_rows++] = (node_row){k, mean, node_flops(p, b, k)};
        sum += mean;
    }
    qsort(rows, (size_t)n_rows, sizeof *rows, cmp_row);
    double run_mean = run_sum / p->n_runs;
    printf("\nper-node profile (%d runs; mean per node): node times sum to %.3f ms = %.1f%% of the profiled runs' mean "
           "(%.3f ms) and %.1f%% of the benchmark median (%.3f ms)\n",
           p->n_runs, sum, run_mean > 0 ? 100 * sum / run_mean : 0, run_mean,
           bench_median > 0 ? 100 * sum / bench_median : 0, bench_median);
    /* by op type */
    printf("\n%-22s %6s %10s %7s %9s\n", "op", "nodes", "ms", "share", "GFLOP/s");
    bool *done = calloc((size_t)n_rows, 1);
    for (int i = 0; done && i < n_rows; i++) {
        if (done[i]) continue;
        const char *op = p->g->nodes[rows[i].node].op_type;
        double ms = 0, fl = 0;
        int cnt = 0;
        for (int j = i; j < n_rows; j++)
            if (!done[j] && strcmp(p->g->nodes[rows[j].node].op_type, op) == 0) {
                done[j] = true;
                ms += rows[j].ms;
                fl += rows[j].flops;
                cnt++;
            }
        char gf[32] = "";
        if (fl > 0 && ms > 0) snprintf(gf, sizeof gf, "%.1f", fl / (ms * 1e6));
        printf("%-22s %6d %10.3f %6.1f%% %9s\n", op, cnt, ms, sum > 0 ? 100 * ms / sum : 0, gf);
    }
    free(done);
    int show = top > 0 && top < n_rows ? top : n_rows;
    printf("\n%-10s %7s %9s  %-16s %-28s %s\n", "ms", "share", "GFLOP/s", "op", "node", "inputs -> outputs");
    for (int i = 0; i < show; i++) {
        const mrt_node *nd = &p->g->nodes[rows[i].node];
        char gf[32] = "", shapes[512] = "";
        if (rows[i].flops > 0 && rows[i].ms > 0) snprintf(gf, sizeof gf, "%.1f", rows[i].flops / (rows[i].ms * 1e6));
        size_t len = 0;
        for (int io = 0; io < 2; io++) {
            int n = io ? nd->n_outputs : nd->n_inputs;
            if (io && len < sizeof shapes) len += (size_t)snprintf(shapes + len, sizeof shapes - len, " -> ");
            for (int j = 0, shown = 0; j < n && len < sizeof shapes; j++) {
                int v = io ? nd->outputs[j] : nd->inputs[j];
                mrt_dtype dt;
                int rank;
                const int64_t *shape;
                if (v < 0 || !value_type(p, b, v, &dt, &rank, &shape)) continue;
                char one[160];
                format_type_shape(one, sizeof one, dt, rank, shape);
                len += (size_t)snprintf(shapes + len, sizeof shapes - len, shown++ ? " %s" : "%s", one);
            }
        }
        printf("%-10.4f %6.1f%% %9s  %-16.16s %-28.28s %s\n", rows[i].ms, sum > 0 ? 100 * rows[i].ms / sum : 0, gf,
               nd->op_type, nd->name, shapes);
    }
    if (show < n_rows) printf("(%d more nodes; --top 0 shows all)\n", n_rows - show);
    free(rows);
    free(tmp);
}

/* ------------------------------------------------------------------ the command */

typedef struct bench_args {
    const char *model, *json, *profile;
    double warmup_ms, duration_s;
    int iterations, profile_runs, top;
    bool quiet;
} bench_args;

static int parse_number(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi)) {
        cli_error("%s expects a number from %g to %g, got '%s'", opt, lo, hi, s);
        return MRT_EXIT_USAGE;
    }
    *out = v;
    return MRT_EXIT_OK;
}

static int write_json(const bench_args *a, const bench_stats *s, const double *times, const provenance *pv,
                      const mrt_session *sess, const mrt_session_options *opt, const bench_stats *gpu)
{
    FILE *f = fopen(a->json, "w");
    if (!f) {
        cli_error("cannot write '%s': %s", a->json, strerror(errno));
        return MRT_EXIT_ERROR;
    }
    fprintf(f, "{\n  \"model\": ");
    json_string(f, a->model);
    fprintf(f, ",\n  \"iterations\": %d, \"min_ms\": %.6f, \"mean_ms\": %.6f, \"median_ms\": %.6f, \"p90_ms\": %.6f,"
               " \"p95_ms\": %.6f, \"p99_ms\": %.6f, \"max_ms\": %.6f, \"cv\": %.6f,\n  \"warmup_ms\": %.3f, "
               "\"duration_s\": %.3f,\n  \"times_ms\": [",
            s->n, s->min, s->mean, s->median, s->p90, s->p95, s->p99, s->max, s->cv, a->warmup_ms, a->duration_s);
    for (int i = 0; i < s->n; i++) fprintf(f, i ? ", %.6f" : "%.6f", times[i]);
    fprintf(f, "],\n");
    if (gpu) /* wall time is the host's; this is the device's, from CUDA events around each run */
        fprintf(f, "  \"gpu_median_ms\": %.6f, \"gpu_min_ms\": %.6f, \"gpu_p90_ms\": %.6f,\n", gpu->median, gpu->min, gpu->p90);
    fprintf(f, "  \"provenance\": {\"version\": \"%s\", \"commit\": \"%s\", \"device\": ", MRT_VERSION_STRING,
            mrt_git_commit);
    char dev[320];
    snprintf(dev, sizeof dev, "%s: %s", opt->device ? opt->device : "cpu", pv->cpu);
    json_string(f, dev);
    fprintf(f, ", \"clocks\": ");
    json_string(f, pv->clock);
    fprintf(f, ", \"threads\": %d, \"cores_online\": %ld, \"blas_core\": ", mrt_session_n_threads(sess),
            sysconf(_SC_NPROCESSORS_ONLN));
    json_string(f, mrt_blas_core_name());
    fprintf(f, ", \"fusion\": %s, \"winograd\": %s, \"memory_plan\": %s, \"tf32\": \"not applicable (CPU)\"}\n}\n",
            opt->no_fuse ? "false" : "true", opt->no_winograd ? "false" : "true", opt->no_mem_plan ? "false" : "true");
    if (fclose(f) != 0) {
        cli_error("error writing '%s'", a->json);
        return MRT_EXIT_ERROR;
    }
    return MRT_EXIT_OK;
}

static int cmp_float_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* --profile on CUDA: each node's device time (CUDA events around it; the host-side table above also counts the copies
   that the per-node callback makes), median over the profiled runs, the largest first. */
static void print_gpu_table(const mrt_graph *g, const float *gpu_ms, int runs, int top)
{
    int nn = g->n_nodes, shown = 0;
    float *med = malloc((size_t)(nn ? nn : 1) * sizeof *med), *col = malloc((size_t)(runs ? runs : 1) * sizeof *col);
    int *order = malloc((size_t)(nn ? nn : 1) * sizeof *order);
    if (!med || !col || !order) goto done;
    double total = 0;
    for (int k = 0; k < nn; k++) {
        for (int r = 0; r < runs; r++) col[r] = gpu_ms[(size_t)r * (size_t)nn + (size_t)k];
        qsort(col, (size_t)runs, sizeof *col, cmp_float_desc);
        med[k] = col[runs / 2];
        order[k] = k;
        if (med[k] > 0) total += med[k];
    }
    for (int i = 1; i < nn; i++) /* insertion sort by median, largest first */
        for (int j = i; j > 0 && med[order[j]] > med[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    printf("\ndevice time per node (CUDA events, median of %d runs; %.3f ms in all):\n", runs, total);
    for (int i = 0; i < nn && shown < top; i++) {
        int k = order[i];
        if (med[k] < 0) break;
        printf("  %9.3f ms  %5.1f%%  %-20s %s\n", med[k], total > 0 ? 100 * med[k] / total : 0, g->nodes[k].op_type, g->nodes[k].name);
        shown++;
    }
done:
    free(med);
    free(col);
    free(order);
}

static int profile_runs(const bench_args *a, const mrt_model *m, const mrt_session_options *base,
                        const bound_inputs *b, double bench_median)
{
    profiler p = {m->graph, 0, 0, 0, a->profile_runs, NULL, NULL, NULL};
    size_t cells = (size_t)a->profile_runs * (size_t)m->graph->n_nodes;
    p.start = malloc((cells ? cells : 1) * sizeof *p.start);
    p.dur = malloc((cells ? cells : 1) * sizeof *p.dur);
    p.outs = calloc((size_t)(m->graph->n_nodes ? m->graph->n_nodes : 1), sizeof *p.outs);
    double *run_ms = malloc((size_t)a->profile_runs * sizeof *run_ms);
    float *gpu_ms = NULL; /* device "cuda": each profiled run's per-node device times */
    int rc = MRT_EXIT_OK;
    mrt_session *s = NULL;
    if (!p.start || !p.dur || !p.outs || !run_ms) {
        cli_error("out of memory");
        rc = MRT_EXIT_ERROR;
        goto done;
    }
    for (size_t i = 0; i < cells; i++) p.dur[i] = p.start[i] = NAN;
    mrt_session_options opt = *base;
    opt.on_node = profile_on_node;
    opt.on_node_user = &p;
    opt.fuse_with_callback = true; /* profile the run the benchmark timed: fused nodes count in their producer */
    bool on_gpu = opt.device && strcmp(opt.device, "cuda") == 0;
    opt.device_node_timing = on_gpu; /* each CUDA node between two CUDA events */
    int nn = m->graph->n_nodes;
    gpu_ms = on_gpu ? malloc((cells ? cells : 1) * sizeof *gpu_ms) : NULL;
    mrt_status st = on_gpu && !gpu_ms ? MRT_STATUS_OUT_OF_MEMORY : mrt_session_new(m, &opt, &s);
    /* one unrecorded run plans and warms the session, as the benchmark did */
    if (!st) st = mrt_session_run(s, b->n, (const char *const *)b->names, b->vals);
    for (int r = 0; !st && r < a->profile_runs; r++) {
        p.run = r;
        for (int k = 0; k < m->graph->n_nodes; k++) p.dur[(size_t)r * (size_t)m->graph->n_nodes + (size_t)k] = NAN;
        p.run_start = p.last = now_ms();
        st = mrt_session_run(s, b->n, (const char *const *)b->names, b->vals);
        run_ms[r] = now_ms() - p.run_start;
        for (int k = 0; gpu_ms && k < nn; k++) gpu_ms[(size_t)r * (size_t)nn + (size_t)k] = mrt_session_node_gpu_ms(s, k);
    }
    if (st) {
        rc = cli_fail_status(st, NULL);
        goto done;
    }
    rc = write_trace(a->profile, &p, b, run_ms, a->model);
    if (!rc) {
        print_node_table(&p, b, run_ms, bench_median, a->top);
        if (gpu_ms) print_gpu_table(m->graph, gpu_ms, a->profile_runs, a->top);
        printf("\nprofile: %s (Chrome trace format; open in https://ui.perfetto.dev or chrome://tracing)\n", a->profile);
    }
done:
    mrt_session_free(s);
    free(gpu_ms);
    free(p.start);
    free(p.dur);
    free(p.outs);
    free(run_ms);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    bench_args a = {NULL, NULL, NULL, 200, 3, 10, 10, 25, false};
    const char **input_args = calloc(2 * (size_t)argc, sizeof(char *));
    const char **plugins = input_args + argc;
    int n_input_args = 0, n_plugins = 0;
    mrt_session_options opt = mrt_session_options_default();
    if (!input_args) return MRT_EXIT_ERROR;
    int rc = MRT_EXIT_OK;
    for (int i = 1; i < argc && !rc; i++) {
        const char *o = argv[i];
        bool has_next = i + 1 < argc;
        double v;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            fputs(bench_usage, stdout);
            free(input_args);
            return MRT_EXIT_OK;
        } else if (!strcmp(o, "--input") && has_next) {
            input_args[n_input_args++] = argv[++i];
        } else if (!strcmp(o, "--plugin") && has_next) {
            plugins[n_plugins++] = argv[++i];
        } else if (cli_device_option(argc, argv, &i, &opt)) {
            continue;
        } else if (!strcmp(o, "--json") && has_next) {
            a.json = argv[++i];
        } else if (!strcmp(o, "--profile") && has_next) {
            a.profile = argv[++i];
        } else if (!strcmp(o, "--no-fuse")) {
            opt.no_fuse = true;
        } else if (!strcmp(o, "--no-winograd")) {
            opt.no_winograd = true;
        } else if (!strcmp(o, "--no-mem-plan")) {
            opt.no_mem_plan = true;
        } else if (!strcmp(o, "--quiet")) {
            a.quiet = true;
        } else if (!strcmp(o, "--threads") && has_next) {
            if (!(rc = parse_number(o, argv[++i], 1, 1024, &v))) opt.n_threads = (int)v;
        } else if (!strcmp(o, "--warmup-ms") && has_next) {
            rc = parse_number(o, argv[++i], 0, 3.6e6, &a.warmup_ms);
        } else if (!strcmp(o, "--duration") && has_next) {
            rc = parse_number(o, argv[++i], 0, 86400, &a.duration_s);
        } else if (!strcmp(o, "--iterations") && has_next) {
            if (!(rc = parse_number(o, argv[++i], 1, 1e7, &v))) a.iterations = (int)v;
        } else if (!strcmp(o, "--profile-runs") && has_next) {
            if (!(rc = parse_number(o, argv[++i], 1, 10000, &v))) a.profile_runs = (int)v;
        } else if (!strcmp(o, "--top") && has_next) {
            if (!(rc = parse_number(o, argv[++i], 0, 1e6, &v))) a.top = (int)v;
        } else if (o[0] == '-' && o[1]) {
            cli_error("unknown or incomplete option '%s' for 'bench' (try 'minirt bench --help')", o);
            rc = MRT_EXIT_USAGE;
        } else if (!a.model) {
            a.model = o;
        } else {
            cli_error("unexpected argument '%s' (inputs are given with --input)", o);
            rc = MRT_EXIT_USAGE;
        }
    }
    if (!rc && !a.model) {
        cli_error("'bench' needs a model path (try 'minirt bench --help')");
        rc = MRT_EXIT_USAGE;
    }
    if (rc) {
        free(input_args);
        return rc;
    }
    mrt_model *m = NULL;
    mrt_session *s = NULL;
    bound_inputs b = {0};
    double *times = NULL, *gpu_times = NULL;
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < n_plugins && !st; i++) st = mrt_plugin_load(plugins[i], false);
    if (!st) st = mrt_model_load(a.model, &m);
    if (st) {
        rc = cli_fail_status(st, a.model);
        goto done;
    }
    for (int i = 0; i < n_input_args && !rc; i++) rc = bind_arg(&b, m, input_args[i]);
    if (!rc) rc = bind_synthetic(&b, m, a.quiet);
    if (rc) goto done;
    if (!st) st = mrt_session_new(m, &opt, &s);
    if (st) {
        rc = cli_fail_status(st, NULL);
        goto done;
    }
    /* warm-up by time (at least one run: the first plans and allocates) */
    double t0 = now_ms(), first = 0;
    int warm = 0;
    do {
        double r0 = now_ms();
        st = mrt_session_run(s, b.n, (const char *const *)b.names, b.vals);
        if (!warm) first = now_ms() - r0;
        warm++;
    } while (!st && now_ms() - t0 < a.warmup_ms);
    int cap = 1024, n = 0;
    times = malloc((size_t)cap * sizeof *times);
    gpu_times = malloc((size_t)cap * sizeof *gpu_times);
    if (!times || !gpu_times) st = MRT_STATUS_OUT_OF_MEMORY;
    double m0 = now_ms();
    while (!st && (n < a.iterations || now_ms() - m0 < a.duration_s * 1e3)) {
        if (n == cap) {
            double *nt = realloc(times, (size_t)(cap *= 2) * sizeof *nt);
            if (!nt) {
                st = MRT_STATUS_OUT_OF_MEMORY;
                break;
            }
            times = nt;
            double *ng = realloc(gpu_times, (size_t)cap * sizeof *ng);
            if (!ng) {
                st = MRT_STATUS_OUT_OF_MEMORY;
                break;
            }
            gpu_times = ng;
        }
        double r0 = now_ms();
        st = mrt_session_run(s, b.n, (const char *const *)b.names, b.vals);
        times[n] = now_ms() - r0;
        mrt_session_stats ss; /* the device's own time from CUDA events (0 on the CPU) */
        mrt_session_get_stats(s, &ss);
        gpu_times[n++] = ss.gpu_ms;
    }
    if (st) {
        rc = cli_fail_status(st, NULL);
        goto done;
    }
    bench_stats bs = compute_stats(times, n);
    bench_stats gs = compute_stats(gpu_times, n);
    bool on_gpu = opt.device && strcmp(opt.device, "cuda") == 0;
    provenance pv;
    read_provenance(&pv);
    if (!a.quiet) {
        printf("model: %s\ndevice: %s (%s), %d threads, BLAS kernels %s%s%s%s\nclocks: %s\n", a.model,
               opt.device ? opt.device : "cpu", pv.cpu, mrt_session_n_threads(s), mrt_blas_core_name(),
               opt.no_fuse ? ", fusion off (--no-fuse)" : "", opt.no_winograd ? ", Winograd off (--no-winograd)" : "",
               opt.no_mem_plan ? ", memory plan off (--no-mem-plan)" : "", pv.clock);
        printf("warm-up: %d runs in %.0f ms (the first, which plans: %.3f ms)\n", warm, m0 - t0, first);
    }
    printf("%d runs: min %.3f  mean %.3f  median %.3f  p90 %.3f  p95 %.3f  p99 %.3f  max %.3f ms  cv %.2f%%\n", bs.n,
           bs.min, bs.mean, bs.median, bs.p90, bs.p95, bs.p99, bs.max, 100 * bs.cv);
    if (on_gpu)
        printf("device time (CUDA events): min %.3f  median %.3f  p90 %.3f  max %.3f ms\n", gs.min, gs.median, gs.p90, gs.max);
    if (bs.cv > 0.025)
        fprintf(stderr, "bench: warning: the coefficient of variation is %.2f%% (> 2.5%%): the machine is noisy; "
                        "compare medians of alternating runs, not single numbers\n", 100 * bs.cv);
    if (a.json) rc = write_json(&a, &bs, times, &pv, s, &opt, on_gpu ? &gs : NULL);
    if (!rc && a.profile) {
        mrt_session_free(s);
        s = NULL;
        rc = profile_runs(&a, m, &opt, &b, bs.median);
    }
done:
    mrt_session_free(s);
    bound_free(&b);
    mrt_model_free(m);
    free(times);
    free(gpu_times);
    free(input_args);
    return rc;
}
