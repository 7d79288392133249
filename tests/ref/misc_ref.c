/* Naive references for the misc, select and loss ops (see misc_ref.h). */
#include "misc_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    return n;
}

/* ---- Einsum */

/* A term as a list of label characters; "..." becomes the digits '0'.. of the broadcast dims it covers. */
static bool expand_term(const char *s, size_t len, int rank, int n_ell_total, char *labels, int *n_labels,
                        int *ell_count)
{
    int letters = 0;
    bool ell;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') continue;
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) return false;
        letters++;
    }
    ell = memchr(s, '.', len) != NULL;
    int e = rank < 0 ? n_ell_total : rank - letters;
    if (e < 0 || (!ell && rank >= 0 && e != 0)) return false;
    if (!ell) e = 0;
    *ell_count = e;
    int k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') return false;
            for (int j = 0; j < e; j++) labels[k++] = (char)('0' + (n_ell_total - e + j));
            i += 2;
            continue;
        }
        labels[k++] = s[i];
    }
    *n_labels = k;
    return true;
}

bool ref_misc_einsum(const char *equation, int n, const double *const *x, const int *rank, const int64_t *const *shape,
                     double **out, int *out_rank, int64_t *out_shape)
{
    char eq[512];
    size_t L = 0;
    for (const char *p = equation; *p && L + 1 < sizeof eq; p++)
        if (*p != ' ') eq[L++] = *p;
    eq[L] = 0;
    char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : L;
    /* split the input terms */
    const char *term[32];
    size_t tlen[32];
    int nt = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++)
        if (i == lhs_len || eq[i] == ',') {
            if (nt == 32) return false;
            term[nt] = eq + start;
            tlen[nt++] = i - start;
            start = i + 1;
        }
    if (nt != n) return false;
    /* broadcast dims: the most any "..." covers */
    int n_ell = 0;
    for (int k = 0; k < n; k++)
        if (memchr(term[k], '.', tlen[k])) {
            int letters = 0;
            for (size_t i = 0; i < tlen[k]; i++) letters += term[k][i] != '.';
            if (rank[k] - letters > n_ell) n_ell = rank[k] - letters;
        }
    char labels[32][64];
    int nl[32], ec;
    int64_t size[128];
    int count[128] = {0};
    for (int c = 0; c < 128; c++) size[c] = -1;
    for (int k = 0; k < n; k++) {
        if (!expand_term(term[k], tlen[k], rank[k], n_ell, labels[k], &nl[k], &ec)) return false;
        if (nl[k] != rank[k]) return false;
        for (int a = 0; a < rank[k]; a++) {
            int c = (unsigned char)labels[k][a];
            int64_t d = shape[k][a];
            if (labels[k][a] >= 'A') count[c]++;
            for (int b = 0; b < a; b++)
                if (labels[k][b] == labels[k][a] && shape[k][b] != d) return false;
            if (size[c] < 0 || size[c] == 1) size[c] = (size[c] == 1 && d == 1) ? 1 : d;
            else if (d != size[c] && d != 1) return false;
        }
    }
    char olab[64];
    int on = 0;
    if (arrow) {
        const char *o = arrow + 2;
        if (!expand_term(o, strlen(o), -1, n_ell, olab, &on, &ec)) return false;
        for (int i = 0; i < on; i++) {
            if (size[(unsigned char)olab[i]] < 0) return false;
            for (int j = 0; j < i; j++)
                if (olab[j] == olab[i]) return false;
        }
    } else {
        for (int j = 0; j < n_ell; j++) olab[on++] = (char)('0' + j);
        for (int c = 'A'; c <= 'z'; c++)
            if (count[c] == 1) olab[on++] = (char)c;
    }
    /* every label in use, with its size */
    char all[128];
    int na = 0;
    for (int c = 0; c < 128; c++)
        if (size[c] >= 0) all[na++] = (char)c;
    *out_rank = on;
    for (int i = 0; i < on; i++) out_shape[i] = size[(unsigned char)olab[i]];
    int64_t on_el = numel(on, out_shape), total = 1;
    for (int i = 0; i < na; i++) total *= size[(unsigned char)all[i]];
    *out = calloc((size_t)(on_el > 0 ? on_el : 1), sizeof(double));
    int64_t val[128] = {0};
    for (int64_t t = 0; t < total; t++) {
        int64_t rem = t;
        for (int i = na - 1; i >= 0; i--) {
            int64_t s = size[(unsigned char)all[i]];
            val[(unsigned char)all[i]] = rem % s;
            rem /= s;
        }
        double prod = 1;
        for (int k = 0; k < n; k++) {
            int64_t off = 0;
            for (int a = 0; a < rank[k]; a++) {
                int64_t v = shape[k][a] == 1 ? 0 : val[(unsigned char)labels[k][a]];
                off = off * shape[k][a] + v;
            }
            prod *= x[k][off];
        }
        int64_t o = 0;
        for (int i = 0; i < on; i++) o = o * out_shape[i] + val[(unsigned char)olab[i]];
        (*out)[o] += prod;
    }
    return true;
}

/* ---- Det */

static double det_rec(const double *a, int64_t m)
{
    if (m == 0) return 1;
    if (m == 1) return a[0];
    double sum = 0, minor[64];
    for (int64_t j = 0; j < m; j++) {
        int64_t k = 0;
        for (int64_t r = 1; r < m; r++)
            for (int64_t c = 0; c < m; c++)
                if (c != j) minor[k++] = a[r * m + c];
        sum += (j % 2 ? -1 : 1) * a[j] * det_rec(minor, m - 1);
    }
    return sum;
}

void ref_misc_det(const double *x, int64_t batch, int64_t m, double *out)
{
    for (int64_t b = 0; b < batch; b++) out[b] = det_rec(x + b * m * m, m);
}

/* ---- TopK */

void ref_misc_topk(const double *x, int rank, const int64_t *shape, int axis, int64_t k, bool largest, double *values,
                   int64_t *indices)
{
    int64_t outer = 1, inner = 1, len = shape[axis];
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int d = axis + 1; d < rank; d++) inner *= shape[d];
    bool *used = calloc((size_t)len + 1, 1);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            memset(used, 0, (size_t)len + 1);
            for (int64_t j = 0; j < k; j++) {
                int64_t best = -1;
                for (int64_t t = 0; t < len; t++) {
                    if (used[t]) continue;
                    double v = x[(o * len + t) * inner + i];
                    if (best < 0) {
                        best = t;
                        continue;
                    }
                    double b = x[(o * len + best) * inner + i];
                    if (largest ? v > b : v < b) best = t;
                }
                used[best] = true;
                values[(o * k + j) * inner + i] = x[(o * len + best) * inner + i];
                indices[(o * k + j) * inner + i] = best;
            }
        }
    free(used);
}

/* ---- Unique */

int64_t ref_misc_unique(const double *x, int rank, const int64_t *shape, int axis, bool sorted, double *y,
                        int64_t *indices, int64_t *inverse, int64_t *counts)
{
    int64_t outer = 1, inner = 1, len = numel(rank, shape);
    if (axis >= 0) {
        len = shape[axis];
        for (int d = 0; d < axis; d++) outer *= shape[d];
        for (int d = axis + 1; d < rank; d++) inner *= shape[d];
    }
#define SL(j, o, i) x[((o) * len + (j)) * inner + (i)]
    /* first occurrences, in order */
    int64_t nu = 0, *first = malloc((size_t)(len + 1) * sizeof *first);
    for (int64_t j = 0; j < len; j++) {
        int64_t g = -1;
        for (int64_t u = 0; u < nu && g < 0; u++) {
            bool eq = true;
            for (int64_t o = 0; o < outer && eq; o++)
                for (int64_t i = 0; i < inner && eq; i++) eq = SL(j, o, i) == SL(first[u], o, i);
            if (eq) g = u;
        }
        if (g < 0) first[nu++] = j;
    }
    if (sorted) /* insertion sort of the unique slices, lexicographic over (outer, inner) */
        for (int64_t a = 1; a < nu; a++)
            for (int64_t b = a; b > 0; b--) {
                int c = 0;
                for (int64_t o = 0; o < outer && !c; o++)
                    for (int64_t i = 0; i < inner && !c; i++) {
                        double p = SL(first[b - 1], o, i), q = SL(first[b], o, i);
                        c = (p > q) - (p < q);
                    }
                if (c <= 0) break;
                int64_t t = first[b];
                first[b] = first[b - 1];
                first[b - 1] = t;
            }
    for (int64_t u = 0; u < nu; u++) {
        indices[u] = first[u];
        counts[u] = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) y[(o * nu + u) * inner + i] = SL(first[u], o, i);
    }
    for (int64_t j = 0; j < len; j++)
        for (int64_t u = 0; u < nu; u++) {
            bool eq = true;
            for (int64_t o = 0; o < outer && eq; o++)
                for (int64_t i = 0; i < inner && eq; i++) eq = SL(j, o, i) == SL(first[u], o, i);
            if (eq) {
                inverse[j] = u;
                counts[u]++;
                break;
            }
        }
#undef SL
    free(first);
    return nu;
}

/* ---- CumProd, Shrink */

void ref_misc_cumprod(const double *x, int rank, const int64_t *shape, int axis, bool exclusive, bool reverse,
                      double *out)
{
    int64_t outer = 1, inner = 1, len = shape[axis];
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int d = axis + 1; d < rank; d++) inner *= shape[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            for (int64_t j = 0; j < len; j++) {
                double p = 1;
                for (int64_t t = 0; t < len; t++) {
                    bool in = reverse ? (exclusive ? t > j : t >= j) : (exclusive ? t < j : t <= j);
                    if (in) p *= x[(o * len + t) * inner + i];
                }
                out[(o * len + j) * inner + i] = p;
            }
}

double ref_misc_shrink(double x, double lambd, double bias)
{
    if (x < -lambd) return x + bias;
    if (x > lambd) return x - bias;
    return 0;
}

/* ---- losses */

void ref_misc_loss(const double *x, bool softmax, const int64_t *target, const double *weight, int64_t n, int64_t c,
                   int64_t d, int reduction, bool has_ignore, int64_t ignore, double *out, double *log_prob)
{
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < d; k++) {
            double z = 0;
            if (softmax)
                for (int64_t j = 0; j < c; j++) z += exp(x[(i * c + j) * d + k]);
            if (softmax && log_prob)
                for (int64_t j = 0; j < c; j++) log_prob[(i * c + j) * d + k] = x[(i * c + j) * d + k] - log(z);
            int64_t t = target[i * d + k];
            double l = 0, w = 0;
            if (!(has_ignore && t == ignore)) {
                double lp = softmax ? x[(i * c + t) * d + k] - log(z) : x[(i * c + t) * d + k];
                w = weight ? weight[t] : 1;
                l = -lp * w;
            }
            if (reduction == 0) out[i * d + k] = l;
            sum += l;
            wsum += w;
        }
    if (reduction == 1) out[0] = sum;
    if (reduction == 2) out[0] = sum / wsum;
}
