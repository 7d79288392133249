/* `minirt compare A B`: compare tensors from .npy/.npz files or dump folders, matched by name. */
#include "tools/compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/dtype.h"
#include "engine/status.h"
#include "loader/npy.h"
#include "tools/cli.h"
#include "tools/dump.h"
#include "tools/manifest.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile_sorted(const double *v, int64_t n, double q)
{
    if (n == 0) return 0;
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - (double)lo);
}

double ulp_distance(double a, double b, bool dbl)
{
    if (a == b) return 0;
    if (dbl) {
        int64_t x, y;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        if (x < 0) x = INT64_MIN - x;
        if (y < 0) y = INT64_MIN - y;
        return fabs((double)x - (double)y);
    }
    float fa = (float)a, fb = (float)b;
    int32_t x, y;
    memcpy(&x, &fa, 4);
    memcpy(&y, &fb, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return fabs((double)x - (double)y);
}

void compare_tensors(const mrt_tensor *a, const mrt_tensor *b, const compare_tolerance *tol, compare_result *r)
{
    memset(r, 0, sizeof *r);
    r->worst_index = -1;
    char sa[256], sb[256];
    bool shapes_equal = a->rank == b->rank && memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) == 0;
    bool kinds_ok = (mrt_dtype_is_float(a->dtype) && mrt_dtype_is_float(b->dtype)) || a->dtype == b->dtype;
    if (!shapes_equal || !kinds_ok || a->dtype == MRT_DTYPE_STRING) {
        snprintf(r->reason, sizeof r->reason, "%s vs reference %s", mrt_tensor_describe(a, sa, sizeof sa),
                 mrt_tensor_describe(b, sb, sizeof sb));
        if (shapes_equal && a->dtype == MRT_DTYPE_STRING && b->dtype == MRT_DTYPE_STRING) {
            int64_t n = mrt_tensor_numel(a), bad = 0;
            for (int64_t i = 0; i < n; i++) bad += strcmp(((char **)a->data)[i], ((char **)b->data)[i]) != 0;
            r->passed = bad == 0;
            r->count = n;
            r->fail_fraction = n ? (double)bad / (double)n : 0;
            if (r->passed)
                r->reason[0] = '\0';
            else
                snprintf(r->reason, sizeof r->reason, "%lld strings differ", (long long)bad);
        }
        return;
    }
    int64_t n = mrt_tensor_numel(b);
    r->count = n;
    double *abs_err = malloc((size_t)(n ? n : 1) * sizeof(double)), *rel_err = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!abs_err || !rel_err) {
        free(abs_err);
        free(rel_err);
        snprintf(r->reason, sizeof r->reason, "out of memory");
        return;
    }
    bool dbl = b->dtype == MRT_DTYPE_DOUBLE && a->dtype == MRT_DTYPE_DOUBLE;
    int64_t m = 0, fails = 0;
    double dot = 0, na = 0, nb = 0, sq = 0, bmax = 0, sum_abs = 0, sum_rel = 0;
    double need_atol = 0, need_rtol = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = mrt_load_f64(a->dtype, a->data, i), y = mrt_load_f64(b->dtype, b->data, i);
        if (isnan(x) || isnan(y)) {
            if (!(tol->equal_nan && isnan(x) && isnan(y))) {
                r->nan_mismatch++;
                fails++;
            }
            continue;
        }
        if (isinf(x) || isinf(y)) {
            if (x != y) {
                r->inf_mismatch++;
                fails++;
            }
            continue;
        }
        double d = fabs(x - y), rel = y != 0 ? d / fabs(y) : (d == 0 ? 0 : INFINITY);
        abs_err[m] = d;
        rel_err[m++] = rel;
        if (r->worst_index < 0 || d > r->max_abs) {
            r->max_abs = d;
            r->worst_index = i;
            r->worst_a = x;
            r->worst_b = y;
        }
        r->max_rel = fmax(r->max_rel, rel);
        r->max_ulp = fmax(r->max_ulp, ulp_distance(x, y, dbl || (a->dtype == MRT_DTYPE_DOUBLE && b->dtype == MRT_DTYPE_DOUBLE)));
        sum_abs += d;
        sum_rel += isfinite(rel) ? rel : 0;
        dot += x * y;
        na += x * x;
        nb += y * y;
        sq += d * d;
        bmax = fmax(bmax, fabs(y));
        bool fail = d > tol->atol && d > tol->rtol * fabs(y);
        fails += fail;
        if (d > tol->rtol * fabs(y)) need_atol = fmax(need_atol, d);
        if (d > tol->atol) need_rtol = fmax(need_rtol, rel);
    }
    r->mean_abs = m ? sum_abs / (double)m : 0;
    r->mean_rel = m ? sum_rel / (double)m : 0;
    r->l2 = sqrt(sq);
    r->cosine = na > 0 && nb > 0 ? dot / sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
    double mse = m ? sq / (double)m : 0;
    r->psnr_db = mse > 0 ? 10 * log10(bmax * bmax / mse) : INFINITY;
    r->fail_fraction = n ? (double)fails / (double)n : 0;
    r->min_atol_to_pass = need_atol;
    r->min_rtol_to_pass = need_rtol;
    qsort(abs_err, (size_t)m, sizeof(double), cmp_double);
    qsort(rel_err, (size_t)m, sizeof(double), cmp_double);
    r->median_abs = quantile_sorted(abs_err, m, 0.5);
    r->median_rel = quantile_sorted(rel_err, m, 0.5);
    bool nonfinite_ok = r->nan_mismatch == 0 && r->inf_mismatch == 0;
    switch (tol->stat) {
    case ERROR_STAT_ELEMWISE: r->passed = fails == 0; break;
    case ERROR_STAT_MAX: r->passed = nonfinite_ok && (r->max_abs <= tol->atol || r->max_rel <= tol->rtol); break;
    case ERROR_STAT_MEAN: r->passed = nonfinite_ok && (r->mean_abs <= tol->atol || r->mean_rel <= tol->rtol); break;
    case ERROR_STAT_MEDIAN: r->passed = nonfinite_ok && (r->median_abs <= tol->atol || r->median_rel <= tol->rtol); break;
    case ERROR_STAT_QUANTILE:
        r->passed = nonfinite_ok && (quantile_sorted(abs_err, m, tol->quantile) <= tol->atol ||
                                     quantile_sorted(rel_err, m, tol->quantile) <= tol->rtol);
        break;
    }
    if (!r->passed) {
        if (!nonfinite_ok)
            snprintf(r->reason, sizeof r->reason, "%lld NaN and %lld Inf mismatches%s", (long long)r->nan_mismatch,
                     (long long)r->inf_mismatch,
                     r->nan_mismatch && !tol->equal_nan ? " (NaN fails unless --equal-nan; then NaN == NaN)" : "");
        else
            snprintf(r->reason, sizeof r->reason, "%.4g%% of elements exceed atol %g and rtol %g",
                     100 * r->fail_fraction, tol->atol, tol->rtol);
    }
    free(abs_err);
    free(rel_err);
}

void compare_print(FILE *f, const char *name, const compare_result *r)
{
    fprintf(f, "%s %s", r->passed ? "PASSED" : "FAILED", name);
    if (r->reason[0]) fprintf(f, ": %s", r->reason);
    fprintf(f, "\n");
    if (r->count == 0 && r->worst_index < 0 && !r->passed) return;
    fprintf(f, "  abs err  max %.6g  mean %.6g  median %.6g\n", r->max_abs, r->mean_abs, r->median_abs);
    fprintf(f, "  rel err  max %.6g  mean %.6g  median %.6g\n", r->max_rel, r->mean_rel, r->median_rel);
    if (r->worst_index >= 0)
        fprintf(f, "  worst at flat index %lld: %.9g vs reference %.9g\n", (long long)r->worst_index, r->worst_a,
                r->worst_b);
    fprintf(f, "  L2 %.6g  cosine %.9f  max ULP %.0f  PSNR %.2f dB  failing %.4g%%  NaN/Inf mismatches %lld/%lld\n",
            r->l2, r->cosine, r->max_ulp, r->psnr_db, 100 * r->fail_fraction, (long long)r->nan_mismatch,
            (long long)r->inf_mismatch);
    fprintf(f, "  would pass with atol >= %.3g (rtol as given) or rtol >= %.3g (atol as given)\n", r->min_atol_to_pass,
            r->min_rtol_to_pass);
}

void compare_json(FILE *f, const char *name, const compare_result *r)
{
    fprintf(f, "{\"name\": ");
    json_write_string(f, name);
    fprintf(f, ", \"passed\": %s, \"reason\": ", r->passed ? "true" : "false");
    json_write_string(f, r->reason);
    const struct { const char *key; double v; } nums[] = {
        {"max_abs_err", r->max_abs}, {"mean_abs_err", r->mean_abs}, {"median_abs_err", r->median_abs},
        {"max_rel_err", r->max_rel}, {"mean_rel_err", r->mean_rel}, {"median_rel_err", r->median_rel},
        {"worst_a", r->worst_a}, {"worst_b", r->worst_b}, {"l2", r->l2}, {"cosine", r->cosine},
        {"max_ulp", r->max_ulp}, {"psnr_db", r->psnr_db}, {"fail_fraction", r->fail_fraction},
        {"min_atol_to_pass", r->min_atol_to_pass}, {"min_rtol_to_pass", r->min_rtol_to_pass}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        fprintf(f, ", \"%s\": ", nums[i].key);
        json_write_number(f, nums[i].v);
    }
    fprintf(f, ", \"count\": %lld, \"worst_index\": %lld, \"nan_mismatch\": %lld, \"inf_mismatch\": %lld}",
            (long long)r->count, (long long)r->worst_index, (long long)r->nan_mismatch, (long long)r->inf_mismatch);
}

/* ------------------------------------------------------------------ loading tensor sets */

/* Takes ownership of *t. */
mrt_status set_add(tensor_set *s, const char *name, mrt_tensor *t)
{
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 16;
        char **nn = realloc(s->names, (size_t)nc * sizeof *nn);
        if (nn) s->names = nn;
        mrt_tensor *nt = nn ? realloc(s->tensors, (size_t)nc * sizeof *nt) : NULL;
        if (!nt) {
            mrt_tensor_release(t);
            return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory");
        }
        s->tensors = nt;
        s->cap = nc;
    }
    s->names[s->n] = strdup(name);
    s->tensors[s->n++] = *t;
    return MRT_STATUS_OK;
}

void set_free(tensor_set *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->names[i]);
        mrt_tensor_release(&s->tensors[i]);
    }
    free(s->names);
    free(s->tensors);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static mrt_status load_dir(const char *dir, tensor_set *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (access(path, F_OK) == 0) { /* a minirt (or tools/dump_*.py) dump: names from the manifest */
        manifest_entry *es;
        int n;
        MRT_TRY(manifest_read(path, &es, &n));
        mrt_status st = MRT_STATUS_OK;
        for (int i = 0; i < n && !st; i++) {
            mrt_tensor t;
            snprintf(path, sizeof path, "%s/%s", dir, es[i].file);
            st = mrt_npy_read_file(path, &t);
            if (!st) st = set_add(s, es[i].name, &t);
        }
        manifest_free(es, n);
        return st;
    }
    DIR *d = opendir(dir);
    if (!d) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", dir, strerror(errno));
    struct dirent *de;
    mrt_status st = MRT_STATUS_OK;
    while (!st && (de = readdir(d))) {
        if (!ends_with(de->d_name, ".npy")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        mrt_tensor t;
        st = mrt_npy_read_file(path, &t);
        de->d_name[strlen(de->d_name) - 4] = '\0';
        if (!st) st = set_add(s, de->d_name, &t);
    }
    closedir(d);
    return st;
}

mrt_status compare_load_set(const char *path, tensor_set *s)
{
    struct stat sb;
    memset(s, 0, sizeof *s);
    if (stat(path, &sb) != 0) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return load_dir(path, s);
    if (ends_with(path, ".npz")) {
        int n;
        char **names;
        mrt_tensor *ts;
        MRT_TRY(mrt_npz_read_file(path, &n, &names, &ts));
        mrt_status st = MRT_STATUS_OK;
        for (int i = 0; i < n; i++) {
            if (!st)
                st = set_add(s, names[i], &ts[i]);
            else
                mrt_tensor_release(&ts[i]);
            free(names[i]);
        }
        free(names);
        free(ts);
        return st;
    }
    mrt_tensor t;
    MRT_TRY(mrt_npy_read_file(path, &t));
    const char *base = strrchr(path, '/');
    char name[1024];
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    if (ends_with(name, ".npy")) name[strlen(name) - 4] = '\0';
    return set_add(s, name, &t);
}

static char sanitized_char(char c)
{
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    return ok ? c : '_';
}

/* cli_sanitize_name(a) == cli_sanitize_name(b), without allocating (it maps byte for byte). */
static bool same_sanitized(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (sanitized_char(*a) != sanitized_char(*b)) return false;
    return *a == *b;
}

int set_find(const tensor_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) return i;
    int found = -1;
    for (int i = 0; i < s->n; i++)
        if (same_sanitized(s->names[i], name)) {
            if (found >= 0) return -1; /* ambiguous */
            found = i;
        }
    return found;
}

static const char compare_usage[] =
    "usage: minirt compare A B [options]   (B is the reference)\n"
    "  A, B: .npy files, .npz files or dump folders (from --dump-all), matched by tensor name\n"
    "  --atol X | --atol NAME:X    absolute tolerance (default 1e-5), globally or for one tensor\n"
    "  --rtol X | --rtol NAME:X    relative tolerance (default 1e-5)\n"
    "  --check-error-stat elemwise|max|mean|median|quantile   (default elemwise)\n"
    "  --error-quantile Q          quantile for --check-error-stat quantile (default 0.99)\n"
    "  --equal-nan                 NaN against NaN at the same position is equal (default: any NaN fails)\n"
    "  --json FILE                 write every statistic as JSON\n"
    "An element fails only if |a-b| > atol and |a-b| > rtol*|b|. Exit status 0 when all pass, 1 otherwise.\n"
    "Names match exactly, or by the sanitised file name --output-dir writes (/a/b -> _a_b).\n";

typedef struct tol_override {
    const char *name;
    double value;
    bool is_atol;
} tol_override;

int cmd_compare(int argc, char **argv)
{
    const char *a_path = NULL, *b_path = NULL, *json_path = NULL;
    compare_tolerance tol = {1e-5, 1e-5, ERROR_STAT_ELEMWISE, 0.99};
    tol_override *ov = calloc((size_t)argc, sizeof *ov);
    int n_ov = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool next = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(compare_usage, stdout);
            free(ov);
            return MRT_EXIT_OK;
        } else if ((strcmp(a, "--atol") == 0 || strcmp(a, "--rtol") == 0) && next) {
            const char *v = argv[++i], *colon = strrchr(v, ':');
            char *end;
            double x = strtod(colon ? colon + 1 : v, &end);
            if (*end || x < 0 || isnan(x)) {
                cli_error("%s expects a non-negative number or NAME:number, got '%s'", a, v);
                free(ov);
                return MRT_EXIT_USAGE;
            }
            if (colon) {
                ov[n_ov].name = strndup(v, (size_t)(colon - v));
                ov[n_ov].value = x;
                ov[n_ov++].is_atol = a[2] == 'a';
            } else if (a[2] == 'a') {
                tol.atol = x;
            } else {
                tol.rtol = x;
            }
        } else if (strcmp(a, "--check-error-stat") == 0 && next) {
            const char *v = argv[++i];
            static const char *const names[] = {"elemwise", "max", "mean", "median", "quantile"};
            int k = 0;
            while (k < 5 && strcmp(v, names[k]) != 0) k++;
            if (k == 5) {
                cli_error("--check-error-stat expects elemwise, max, mean, median or quantile, got '%s'", v);
                free(ov);
                return MRT_EXIT_USAGE;
            }
            tol.stat = (error_stat)k;
        } else if (strcmp(a, "--error-quantile") == 0 && next) {
            char *end;
            tol.quantile = strtod(argv[++i], &end);
            if (*end || !(tol.quantile >= 0 && tol.quantile <= 1)) {
                cli_error("--error-quantile expects a number in [0, 1], got '%s'", argv[i]);
                free(ov);
                return MRT_EXIT_USAGE;
            }
        } else if (strcmp(a, "--json") == 0 && next) {
            json_path = argv[++i];
        } else if (strcmp(a, "--equal-nan") == 0) {
            tol.equal_nan = true;
        } else if (a[0] == '-') {
            cli_error("unknown or incomplete option '%s' for 'compare'", a);
            free(ov);
            return MRT_EXIT_USAGE;
        } else if (!a_path) {
            a_path = a;
        } else if (!b_path) {
            b_path = a;
        } else {
            cli_error("compare takes two operands, got a third: '%s'", a);
            free(ov);
            return MRT_EXIT_USAGE;
        }
    }
    if (!b_path) {
        cli_error("usage: minirt compare A B [options] (try --help)");
        free(ov);
        return MRT_EXIT_USAGE;
    }
    tensor_set sa, sb;
    mrt_status st = compare_load_set(a_path, &sa);
    if (st) {
        free(ov);
        return cli_fail_status(st, a_path);
    }
    st = compare_load_set(b_path, &sb);
    if (st) {
        set_free(&sa);
        free(ov);
        return cli_fail_status(st, b_path);
    }
    bool single = sa.n == 1 && sb.n == 1; /* two single files: compare whatever their names */
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !jf) cli_error("cannot write '%s': %s", json_path, strerror(errno));
    if (jf) fprintf(jf, "{\"tensors\": [");
    int n_pass = 0, n_fail = 0, n_missing = 0;
    for (int i = 0; i < sb.n; i++) {
        int j = single ? 0 : set_find(&sa, sb.names[i]);
        if (j < 0) {
            printf("MISSING %s: in the reference but not in %s\n", sb.names[i], a_path);
            n_missing++;
            continue;
        }
        compare_tolerance t = tol;
        for (int k = 0; k < n_ov; k++)
            if (strcmp(ov[k].name, sb.names[i]) == 0) *(ov[k].is_atol ? &t.atol : &t.rtol) = ov[k].value;
        compare_result r;
        compare_tensors(&sa.tensors[j], &sb.tensors[i], &t, &r);
        compare_print(stdout, sb.names[i], &r);
        if (jf) {
            fprintf(jf, "%s\n  ", n_pass + n_fail ? "," : "");
            compare_json(jf, sb.names[i], &r);
        }
        r.passed ? n_pass++ : n_fail++;
    }
    if (jf) {
        fprintf(jf, "\n], \"passed\": %d, \"failed\": %d, \"missing\": %d}\n", n_pass, n_fail, n_missing);
        fclose(jf);
    }
    bool ok = n_fail == 0 && n_missing == 0 && n_pass > 0;
    printf("%s: %d passed, %d failed, %d missing\n", ok ? "PASSED" : "FAILED", n_pass, n_fail, n_missing);
    set_free(&sa);
    set_free(&sb);
    for (int k = 0; k < n_ov; k++) free((char *)ov[k].name);
    free(ov);
    return ok ? MRT_EXIT_OK : MRT_EXIT_ERROR;
}
