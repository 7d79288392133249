/* See text_ref.h. */
#include "ref/text_ref.h"

#include <stdlib.h>
#include <string.h>

static bool same_item(const ref_tfidf *p, int64_t pool_at, const int64_t *x_int, const char *const *x_str, int64_t x_at)
{
    if (p->pool_str) return strcmp(p->pool_str[pool_at], x_str[x_at]) == 0;
    return p->pool[pool_at] == x_int[x_at];
}

/* The output column of the n-gram x[at], x[at + skip], ... (n items), or -1 when the pool doesn't hold it. A pool
   n-gram listed twice counts under its last listing. */
static int64_t lookup(const ref_tfidf *p, const int64_t *x_int, const char *const *x_str, int64_t at, int64_t skip,
                      int64_t n)
{
    int64_t found = -1, id = 0;
    for (int64_t g = 0; g < p->n_groups; g++) {
        int64_t size = g + 1, start = p->ngram_counts[g];
        int64_t end = g + 1 < p->n_groups ? p->ngram_counts[g + 1] : p->pool_len;
        for (int64_t q = start; q + size <= end; q += size, id++) {
            if (size != n) continue;
            bool eq = true;
            for (int64_t k = 0; k < n && eq; k++) eq = same_item(p, q + k, x_int, x_str, at + k * skip);
            if (eq) found = p->ngram_indexes[id];
        }
    }
    return found;
}

void ref_tfidf_run(const ref_tfidf *p, const int64_t *x_int, const char *const *x_str, int64_t rows, int64_t cols,
                   double *out)
{
    int64_t *count = calloc((size_t)p->out_size, sizeof *count);
    for (int64_t r = 0; r < rows; r++) {
        memset(count, 0, (size_t)p->out_size * sizeof *count);
        const int64_t *xi = x_int ? x_int + r * cols : NULL;
        const char *const *xs = x_str ? x_str + r * cols : NULL;
        for (int64_t skip = 1; skip <= p->max_skip + 1; skip++) {
            /* unigrams are the same at every skip: only the first pass counts them */
            int64_t lo = p->min_gram == 1 && skip > 1 ? 2 : p->min_gram;
            for (int64_t n = lo; n <= p->max_gram; n++)
                for (int64_t at = 0; at + (n - 1) * skip < cols; at++) {
                    int64_t col = lookup(p, xi, xs, at, skip, n);
                    if (col >= 0) count[col]++;
                }
        }
        for (int64_t c = 0; c < p->out_size; c++) {
            double w = p->weights ? p->weights[c] : 1.0;
            out[r * p->out_size + c] = p->mode == 0 ? (double)count[c]
                                       : p->mode == 1 ? (count[c] > 0 ? w : 0.0)
                                                      : w * (double)count[c];
        }
    }
    free(count);
}
