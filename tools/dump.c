/* Tensor dumps with a manifest (see dump.h). */
#include "tools/dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/dtype.h"
#include "engine/graph.h"
#include "engine/sha256.h"
#include "engine/status.h"
#include "loader/npy.h"
#include "ops_cpu/blas_info.h"
#include "tools/cli.h"

typedef struct dump_entry {
    char *name, *file, *producer, *op;
    mrt_dtype dtype;
    int rank;
    int64_t shape[MRT_MAX_RANK];
    tensor_stats stats;
    bool is_tensor;
} dump_entry;

struct dump_ctx {
    dump_options opt;
    dump_entry *entries;
    int n, cap;
};

void json_write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
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

void json_write_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

void tensor_compute_stats(const mrt_tensor *t, tensor_stats *s)
{
    memset(s, 0, sizeof *s);
    s->min = INFINITY;
    s->max = -INFINITY;
    if (t->dtype == MRT_DTYPE_STRING) return;
    int64_t n = mrt_tensor_numel(t), finite = 0;
    double sum = 0, sumsq = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = mrt_load_f64(t->dtype, t->data, i);
        if (isnan(x)) {
            s->nan_count++;
            continue;
        }
        if (isinf(x)) s->inf_count++;
        s->min = fmin(s->min, x);
        s->max = fmax(s->max, x);
        if (isinf(x)) continue;
        sum += x;
        finite++;
    }
    s->mean = finite ? sum / (double)finite : NAN;
    for (int64_t i = 0; i < n && finite; i++) {
        double x = mrt_load_f64(t->dtype, t->data, i);
        if (isfinite(x)) sumsq += (x - s->mean) * (x - s->mean);
    }
    s->std = finite ? sqrt(sumsq / (double)finite) : NAN;
}

static bool in_list(const char *list, const char *item)
{
    if (!list) return true;
    size_t len = strlen(item);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncmp(p, item, n) == 0) return true;
        if (!comma) break;
        p = comma + 1;
    }
    return false;
}

mrt_status dump_begin(const dump_options *opt, dump_ctx **out)
{
    if (cli_mkdirs(opt->dir) != 0)
        return mrt_fail(MRT_STATUS_IO_ERROR, "cannot create dump folder '%s': %s", opt->dir, strerror(errno));
    *out = calloc(1, sizeof **out);
    if (!*out) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
    (*out)->opt = *opt;
    return MRT_STATUS_OK;
}

static bool file_taken(const dump_ctx *d, const char *file)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->entries[i].file, file) == 0) return true;
    return false;
}

mrt_status dump_value(dump_ctx *d, const char *name, const char *producer, const char *op_type, const mrt_value *v)
{
    bool selected = (d->opt.names || d->opt.op_types)
                        ? (d->opt.names && in_list(d->opt.names, name)) ||
                              (d->opt.op_types && op_type && in_list(d->opt.op_types, op_type))
                        : true;
    if (!selected || v->kind != MRT_VALUE_TENSOR) return MRT_STATUS_OK;
    if (d->n == d->cap) {
        int nc = d->cap ? d->cap * 2 : 64;
        dump_entry *ne = realloc(d->entries, (size_t)nc * sizeof *ne);
        if (!ne) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
        d->entries = ne;
        d->cap = nc;
    }
    /* distinct names can sanitise to the same file: suffix _1, _2... (recorded in the manifest) */
    char *base = cli_sanitize_name(name);
    if (!base) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
    size_t len = strlen(base) + 32;
    char *file = malloc(len);
    if (!file) {
        free(base);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
    }
    snprintf(file, len, "%s.npy", base);
    for (int k = 1; file_taken(d, file) || strcmp(file, "manifest.json") == 0; k++) snprintf(file, len, "%s_%d.npy", base, k);
    free(base);
    size_t plen = strlen(d->opt.dir) + strlen(file) + 2;
    char *path = malloc(plen);
    if (!path) {
        free(file);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
    }
    snprintf(path, plen, "%s/%s", d->opt.dir, file);
    mrt_status st = mrt_npy_write_file(path, &v->tensor);
    free(path);
    if (st) {
        free(file);
        return st;
    }
    dump_entry *e = &d->entries[d->n++];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    e->file = file;
    e->producer = producer ? strdup(producer) : NULL;
    e->op = op_type ? strdup(op_type) : NULL;
    e->dtype = v->tensor.dtype;
    e->rank = v->tensor.rank;
    memcpy(e->shape, v->tensor.shape, sizeof e->shape);
    tensor_compute_stats(&v->tensor, &e->stats);
    e->is_tensor = true;
    return MRT_STATUS_OK;
}

mrt_status dump_on_node(void *user, const mrt_node *node, int n_outputs, const char *const *names,
                        const mrt_value *const *values)
{
    for (int i = 0; i < n_outputs; i++)
        MRT_TRY(dump_value(user, names[i], node->name, node->op_type, values[i]));
    return MRT_STATUS_OK;
}

static void entry_free(dump_entry *e)
{
    free(e->name);
    free(e->file);
    free(e->producer);
    free(e->op);
}

void dump_abort(dump_ctx *d)
{
    if (!d) return;
    for (int i = 0; i < d->n; i++) entry_free(&d->entries[i]);
    free(d->entries);
    free(d);
}

mrt_status dump_finish(dump_ctx *d, const dump_provenance *prov)
{
    size_t plen = strlen(d->opt.dir) + 32;
    char *path = malloc(plen);
    if (!path) {
        dump_abort(d);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (dump)");
    }
    snprintf(path, plen, "%s/manifest.json", d->opt.dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        mrt_status st = mrt_fail(MRT_STATUS_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
        free(path);
        dump_abort(d);
        return st;
    }
    char hex[65] = "";
    fprintf(f, "{\n  \"provenance\": {\n    \"minirt_version\": \"%s\",\n    \"git_commit\": \"%s\",\n",
            MRT_VERSION_STRING, mrt_git_commit);
    fprintf(f, "    \"device\": ");
    json_write_string(f, prov->device);
    fprintf(f, ",\n    \"precision\": ");
    json_write_string(f, prov->precision);
    fprintf(f, ",\n    \"threads\": %d,\n    \"blas\": \"OpenBLAS %s\",\n    \"tf32\": \"n/a (cpu)\",\n",
            prov->n_threads, mrt_blas_core_name());
    fprintf(f, "    \"model\": {\"path\": ");
    json_write_string(f, prov->model_path);
    if (mrt_sha256_file(prov->model_path, hex) != MRT_STATUS_OK) hex[0] = '\0';
    fprintf(f, ", \"sha256\": \"%s\"},\n    \"inputs\": [", hex);
    for (int i = 0; i < prov->n_inputs; i++) {
        if (mrt_sha256_file(prov->input_paths[i], hex) != MRT_STATUS_OK) hex[0] = '\0';
        fprintf(f, "%s{\"path\": ", i ? ", " : "");
        json_write_string(f, prov->input_paths[i]);
        fprintf(f, ", \"sha256\": \"%s\"}", hex);
    }
    fprintf(f, "]\n  },\n  \"tensors\": [");
    for (int i = 0; i < d->n; i++) {
        const dump_entry *e = &d->entries[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_write_string(f, e->name);
        fprintf(f, ", \"file\": ");
        json_write_string(f, e->file);
        fprintf(f, ", \"producer\": ");
        if (e->producer) json_write_string(f, e->producer); else fputs("null", f);
        fprintf(f, ", \"op\": ");
        if (e->op) json_write_string(f, e->op); else fputs("null", f);
        fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", mrt_dtype_name(e->dtype));
        for (int k = 0; k < e->rank; k++) fprintf(f, k ? ", %lld" : "%lld", (long long)e->shape[k]);
        fprintf(f, "], \"min\": ");
        json_write_number(f, e->stats.min);
        fprintf(f, ", \"max\": ");
        json_write_number(f, e->stats.max);
        fprintf(f, ", \"mean\": ");
        json_write_number(f, e->stats.mean);
        fprintf(f, ", \"std\": ");
        json_write_number(f, e->stats.std);
        fprintf(f, ", \"nan_count\": %lld, \"inf_count\": %lld}", (long long)e->stats.nan_count,
                (long long)e->stats.inf_count);
    }
    fprintf(f, "\n  ]\n}\n");
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    mrt_status st = bad ? mrt_fail(MRT_STATUS_IO_ERROR, "error writing '%s'", path) : MRT_STATUS_OK;
    free(path);
    dump_abort(d);
    return st;
}
