/* Naive reference for TfIdfVectorizer, written from the ONNX spec and the ONNX reference implementation's reading
 * of it (independent of ops_cpu/): every candidate n-gram is compared with every pool n-gram, no trie. Items are
 * int64 values, or strings when the *_str arguments are given. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_tfidf {
    int64_t min_gram, max_gram, max_skip;
    int mode;                      /* 0 TF, 1 IDF, 2 TFIDF */
    const int64_t *ngram_counts;
    int64_t n_groups;
    const int64_t *ngram_indexes;
    const float *weights;          /* per output column, or NULL */
    const int64_t *pool;           /* integer pool, or NULL */
    const char *const *pool_str;   /* string pool, or NULL */
    int64_t pool_len;
    int64_t out_size;
} ref_tfidf;

/* x: rows x cols items (x_int or x_str); out: rows x out_size. */
void ref_tfidf_run(const ref_tfidf *p, const int64_t *x_int, const char *const *x_str, int64_t rows, int64_t cols,
                   double *out);
