/* TfIdfVectorizer's attributes, read and checked once for infer and run (engine/opdef/text.c). */
#pragma once

#include "engine/registry.h"

#ifdef __cplusplus /* the CUDA kernels (ops_cuda/, C++) share these too */
extern "C" {
#endif

typedef enum { MRT_TFIDF_TF, MRT_TFIDF_IDF, MRT_TFIDF_TFIDF } mrt_tfidf_mode;

typedef struct mrt_tfidf {
    int64_t min_gram, max_gram, max_skip;
    mrt_tfidf_mode mode;
    const int64_t *ngram_counts;  /* start of the 1-grams, 2-grams, ... in the pool */
    int64_t n_groups;
    const int64_t *ngram_indexes; /* output column of each n-gram, in pool order */
    int64_t n_ngrams;
    const float *weights;         /* per output column (as ONNX Runtime reads them), or NULL */
    bool strings;                 /* pool_strings, else pool_int64s */
    const int64_t *pool_ints;
    char *const *pool_strings;
    int64_t pool_len;
    int64_t out_size;             /* max(ngram_indexes) + 1 */
    int64_t rows, cols;           /* the input as [rows, cols] */
} mrt_tfidf;

/* Reads and validates the attributes against input 0; fails naming the attribute. */
mrt_status mrt_tfidf_read(mrt_op_ctx *ctx, mrt_tfidf *p);

#ifdef __cplusplus
}
#endif
