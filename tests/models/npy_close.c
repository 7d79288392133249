/* npy_close: compare two .npy files (float32/float64, either byte order) for the model tests.
 *
 *   npy_close [--rtol R] [--atol A] [--name LABEL] ACTUAL EXPECTED
 *
 * Passes when shapes match, nothing is NaN (or NaN exactly where EXPECTED has NaN), infinities match with their
 * sign, and max_i |actual_i - expected_i| <= rtol * max_i |expected_i| + atol (rtol 1e-4, atol 0 by default):
 * the error is relative to the output's scale, so outputs near zero do not make a tight bound meaningless.
 * Prints one line with the max absolute error, that error relative to max |expected|, the largest elementwise
 * relative error and the NMSE. Exit 0 = close, 1 = not close, 2 = usage or file error.
 *
 * Self-contained on purpose (its own minimal .npy reader): the model tests must not depend on the loader they
 * test, nor on Python. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_RANK 32

typedef struct npy_array {
    int rank;
    int64_t shape[NPY_MAX_RANK];
    int64_t numel;
    double *data; /* widened to double */
} npy_array;

static int fail_io(const char *path, const char *what)
{
    fprintf(stderr, "npy_close: %s: %s\n", path, what);
    return -1;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void swap_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

/* Value of 'key' in the header dict: a pointer just past "'key':" and its blanks, or NULL. */
static const char *dict_value(const char *header, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(header, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static int npy_read(const char *path, npy_array *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return fail_io(path, strerror(errno));
    unsigned char pre[10];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fclose(f);
        return fail_io(path, "not a .npy file (bad magic)");
    }
    uint32_t hlen;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) goto truncated;
        hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        unsigned char l[4];
        if (fread(l, 1, 4, f) != 4) goto truncated;
        hlen = (uint32_t)l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
        if (hlen > (1u << 24)) {
            fclose(f);
            return fail_io(path, "header too large");
        }
    } else {
        fclose(f);
        return fail_io(path, "unsupported .npy version");
    }
    char *header = malloc((size_t)hlen + 1);
    if (!header) {
        fclose(f);
        return fail_io(path, "out of memory");
    }
    if (fread(header, 1, hlen, f) != hlen) {
        free(header);
        goto truncated;
    }
    header[hlen] = '\0';

    const char *descr = dict_value(header, "descr");
    const char *fortran = dict_value(header, "fortran_order");
    const char *shape = dict_value(header, "shape");
    if (!descr || !fortran || !shape || (*descr != '\'' && *descr != '"') || strlen(descr) < 5 ||
        *shape != '(') {
        free(header);
        fclose(f);
        return fail_io(path, "malformed header");
    }
    if (strncmp(fortran, "False", 5) != 0) {
        free(header);
        fclose(f);
        return fail_io(path, "fortran_order arrays are not supported");
    }
    char order = descr[1];
    int is_f4 = strncmp(descr + 2, "f4", 2) == 0 && (descr[4] == '\'' || descr[4] == '"');
    int is_f8 = strncmp(descr + 2, "f8", 2) == 0 && (descr[4] == '\'' || descr[4] == '"');
    if ((order != '<' && order != '>' && order != '=') || (!is_f4 && !is_f8)) {
        free(header);
        fclose(f);
        return fail_io(path, "dtype is not float32 or float64");
    }
    int swap = (order == '<' && !host_is_little_endian()) || (order == '>' && host_is_little_endian());

    const char *p = shape + 1;
    out->numel = 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0 || out->rank == NPY_MAX_RANK ||
            (d > 0 && out->numel > INT64_MAX / 8 / d)) {
            free(header);
            fclose(f);
            return fail_io(path, "bad shape in header");
        }
        out->shape[out->rank++] = d;
        out->numel *= d;
        p = end;
    }
    free(header);

    size_t esize = is_f4 ? 4 : 8;
    size_t n = (size_t)out->numel;
    out->data = malloc(n ? n * sizeof(double) : 1);
    unsigned char *raw = malloc(n ? n * esize : 1);
    if (!out->data || !raw) {
        free(raw);
        free(out->data);
        out->data = NULL;
        fclose(f);
        return fail_io(path, "out of memory");
    }
    if (fread(raw, esize, n, f) != n) {
        free(raw);
        free(out->data);
        out->data = NULL;
        goto truncated;
    }
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        unsigned char *e = raw + i * esize;
        if (swap) swap_bytes(e, esize);
        if (is_f4) {
            float v;
            memcpy(&v, e, 4);
            out->data[i] = v;
        } else {
            memcpy(&out->data[i], e, 8);
        }
    }
    free(raw);
    return 0;

truncated:
    fclose(f);
    return fail_io(path, "truncated file");
}

static void shape_str(const npy_array *a, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < a->rank && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)a->shape[i]);
    if (k < len) snprintf(buf + k, len - k, "]");
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && *v >= 0;
}

int main(int argc, char **argv)
{
    double rtol = 1e-4, atol = 0.0;
    const char *label = NULL;
    const char *files[2];
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rtol") == 0 && i + 1 < argc) {
            if (!parse_double(argv[++i], &rtol)) goto usage;
        } else if (strcmp(argv[i], "--atol") == 0 && i + 1 < argc) {
            if (!parse_double(argv[++i], &atol)) goto usage;
        } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            label = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            goto usage;
        } else if (n_files < 2) {
            files[n_files++] = argv[i];
        } else {
            goto usage;
        }
    }
    if (n_files != 2) goto usage;

    npy_array a, b;
    if (npy_read(files[0], &a) != 0) return 2;
    if (npy_read(files[1], &b) != 0) {
        free(a.data);
        return 2;
    }
    if (!label) label = files[0];

    char sa[256], sb[256];
    shape_str(&a, sa, sizeof sa);
    shape_str(&b, sb, sizeof sb);
    int same_shape = a.rank == b.rank;
    for (int i = 0; same_shape && i < a.rank; i++) same_shape = a.shape[i] == b.shape[i];
    if (!same_shape) {
        printf("%s: FAIL: shape %s, expected %s\n", label, sa, sb);
        free(a.data);
        free(b.data);
        return 1;
    }

    double max_abs = 0, max_ref = 0, max_elem_rel = 0, se = 0, sref = 0;
    int64_t worst = -1, bad_special = -1;
    for (int64_t i = 0; i < a.numel; i++) {
        double x = a.data[i], y = b.data[i];
        if (isnan(y) || isinf(y) || isnan(x) || isinf(x)) {
            int same = (isnan(x) && isnan(y)) || (isinf(x) && isinf(y) && (x > 0) == (y > 0));
            if (!same && bad_special < 0) bad_special = i;
            continue;
        }
        double d = fabs(x - y);
        if (worst < 0 || d > max_abs) {
            max_abs = d;
            worst = i;
        }
        if (fabs(y) > max_ref) max_ref = fabs(y);
        if (y != 0 && d / fabs(y) > max_elem_rel) max_elem_rel = d / fabs(y);
        se += d * d;
        sref += y * y;
    }
    double rel = max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? INFINITY : 0);
    double nmse = sref > 0 ? se / sref : (se > 0 ? INFINITY : 0);
    int ok = bad_special < 0 && max_abs <= rtol * max_ref + atol;
    printf("%s: %s: shape %s, max abs err %.3g, rel err %.3g (max |expected| %.4g, bound rtol %.1g), "
           "max elementwise rel err %.3g, nmse %.3g",
           label, ok ? "PASS" : "FAIL", sa, max_abs, rel, max_ref, rtol, max_elem_rel, nmse);
    if (bad_special >= 0)
        printf(", NaN/inf mismatch at flat index %lld (%g vs %g)", (long long)bad_special, a.data[bad_special],
               b.data[bad_special]);
    else if (!ok && worst >= 0)
        printf(", worst at flat index %lld (%.9g vs %.9g)", (long long)worst, a.data[worst], b.data[worst]);
    printf("\n");
    free(a.data);
    free(b.data);
    return ok ? 0 : 1;

usage:
    fprintf(stderr, "usage: npy_close [--rtol R] [--atol A] [--name LABEL] ACTUAL.npy EXPECTED.npy\n");
    return 2;
}
