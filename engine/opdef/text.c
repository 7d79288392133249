/* Opdefs for string ops: StringNormalizer (10), StringConcat (20), StringSplit (20), RegexFullMatch (20), and
   TfIdfVectorizer (9: n-gram counts over int32/int64/string rows). */
#include "engine/opdef/text.h"

#include <stdint.h>
#include <string.h>

static mrt_status need_strings(mrt_op_ctx *ctx, int i)
{
    const mrt_tensor *t = mrt_input(ctx, i);
    if (!t || t->dtype != MRT_DTYPE_STRING)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input %d must be a string tensor, got %s", i,
                           t ? mrt_dtype_name(t->dtype) : "nothing");
    return MRT_STATUS_OK;
}

static mrt_status infer_normalizer(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (x->rank != 1 && !(x->rank == 2 && x->shape[0] == 1))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X must be [C] or [1, C], got rank %d", x->rank);
    const char *action = mrt_attr_string(ctx, "case_change_action", "NONE");
    if (strcmp(action, "NONE") && strcmp(action, "LOWER") && strcmp(action, "UPPER"))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "case_change_action '%s' is not NONE, LOWER or UPPER", action);
    return mrt_infer_dynamic(ctx); /* stopwords remove a data-dependent number of elements */
}

static mrt_status infer_concat(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    MRT_TRY(need_strings(ctx, 1));
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    int rank;
    int64_t shape[MRT_MAX_RANK];
    MRT_TRY(mrt_broadcast_shapes(ctx, a->rank, a->shape, b->rank, b->shape, &rank, shape));
    return mrt_output_set(ctx, 0, MRT_DTYPE_STRING, rank, shape);
}

static mrt_status infer_split(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    const mrt_tensor *x = mrt_input(ctx, 0);
    MRT_TRY(mrt_output_set(ctx, 1, MRT_DTYPE_INT64, x->rank, x->shape));
    return mrt_infer_dynamic(ctx); /* the padded width depends on the data */
}

static mrt_status infer_regex(mrt_op_ctx *ctx)
{
    MRT_TRY(need_strings(ctx, 0));
    if (!mrt_attr_string(ctx, "pattern", NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'pattern' is required");
    const mrt_tensor *x = mrt_input(ctx, 0);
    return mrt_output_set(ctx, 0, MRT_DTYPE_BOOL, x->rank, x->shape);
}

/* ------------------------------------------------------------------ TfIdfVectorizer */

mrt_status mrt_tfidf_read(mrt_op_ctx *ctx, mrt_tfidf *p)
{
    memset(p, 0, sizeof *p);
    const mrt_tensor *x = mrt_input(ctx, 0);
    p->min_gram = mrt_attr_int(ctx, "min_gram_length", 0);
    p->max_gram = mrt_attr_int(ctx, "max_gram_length", 0);
    p->max_skip = mrt_attr_int(ctx, "max_skip_count", 0);
    if (p->min_gram < 1 || p->max_gram < p->min_gram)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "min_gram_length %lld and max_gram_length %lld: need 1 <= "
                           "min <= max", (long long)p->min_gram, (long long)p->max_gram);
    if (p->max_skip < 0 || p->max_skip > INT32_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "max_skip_count %lld is out of range", (long long)p->max_skip);
    const char *mode = mrt_attr_string(ctx, "mode", NULL);
    if (!mode) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'mode' (TF, IDF or TFIDF) is required");
    if (strcmp(mode, "TF") == 0) p->mode = MRT_TFIDF_TF;
    else if (strcmp(mode, "IDF") == 0) p->mode = MRT_TFIDF_IDF;
    else if (strcmp(mode, "TFIDF") == 0) p->mode = MRT_TFIDF_TFIDF;
    else return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "mode '%s' is not TF, IDF or TFIDF", mode);

    const mrt_attr *ps = mrt_node_attr(ctx->node, "pool_strings");
    bool has_ints = mrt_attr_ints(ctx, "pool_int64s", &p->pool_ints, &p->pool_len);
    if (has_ints == (ps != NULL))
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "exactly one of pool_int64s and pool_strings must be given");
    if (ps) {
        if (ps->type != MRT_ATTR_STRINGS)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'pool_strings' must be a list of strings");
        p->strings = true;
        p->pool_strings = ps->strings;
        p->pool_len = ps->n;
    }
    if (p->pool_len >= INT32_MAX)
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "a pool of %lld items is too large", (long long)p->pool_len);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input X is missing");
    bool int_input = x->dtype == MRT_DTYPE_INT32 || x->dtype == MRT_DTYPE_INT64;
    if (p->strings ? x->dtype != MRT_DTYPE_STRING : !int_input)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X is %s but the pool holds %s", mrt_dtype_name(x->dtype),
                           p->strings ? "strings (X must be string)" : "integers (X must be int32 or int64)");
    if (x->rank > 2)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "X must be [C] or [N, C], got rank %d", x->rank);
    p->rows = x->rank == 2 ? x->shape[0] : 1;
    p->cols = x->rank == 0 ? 1 : x->shape[x->rank - 1];

    /* ngram_counts[i]: where the (i+1)-grams start in the pool; each group a whole number of n-grams */
    mrt_attr_ints(ctx, "ngram_counts", &p->ngram_counts, &p->n_groups);
    for (int64_t i = 0; i < p->n_groups; i++) {
        int64_t start = p->ngram_counts[i], end = i + 1 < p->n_groups ? p->ngram_counts[i + 1] : p->pool_len;
        if (start < 0 || start > end || end > p->pool_len)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_counts[%lld] = %lld: the %lld-grams would span "
                               "pool items [%lld, %lld) of %lld", (long long)i, (long long)start, (long long)(i + 1),
                               (long long)start, (long long)end, (long long)p->pool_len);
        if ((end - start) % (i + 1))
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_counts: the %lld-grams span %lld pool items, not "
                               "a multiple of %lld", (long long)(i + 1), (long long)(end - start), (long long)(i + 1));
        p->n_ngrams += (end - start) / (i + 1);
    }
    if (p->n_groups && p->ngram_counts[0] != 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_counts[0] is %lld: the pool must start with its "
                           "1-grams (0)", (long long)p->ngram_counts[0]);
    if (!p->n_groups && p->pool_len)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'ngram_counts' is required with a pool");
    int64_t n_idx;
    mrt_attr_ints(ctx, "ngram_indexes", &p->ngram_indexes, &n_idx);
    if (n_idx != p->n_ngrams)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_indexes has %lld entries, the pool holds %lld n-grams",
                           (long long)n_idx, (long long)p->n_ngrams);
    if (!n_idx) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_indexes is empty: no output size");
    int64_t max_index = -1;
    for (int64_t i = 0; i < n_idx; i++) {
        if (p->ngram_indexes[i] < 0 || p->ngram_indexes[i] >= INT32_MAX)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "ngram_indexes[%lld] = %lld is out of range",
                               (long long)i, (long long)p->ngram_indexes[i]);
        if (p->ngram_indexes[i] > max_index) max_index = p->ngram_indexes[i];
    }
    p->out_size = max_index + 1;
    int64_t n_w;
    if (mrt_attr_floats(ctx, "weights", &p->weights, &n_w) && n_w < p->out_size)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "weights has %lld entries, fewer than the %lld output columns",
                           (long long)n_w, (long long)p->out_size);
    return MRT_STATUS_OK;
}

static mrt_status infer_tfidf(mrt_op_ctx *ctx)
{
    mrt_tfidf p;
    MRT_TRY(mrt_tfidf_read(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t shape[2] = {p.rows, p.out_size};
    return x->rank == 2 ? mrt_output_set(ctx, 0, MRT_DTYPE_FLOAT, 2, shape)
                        : mrt_output_set(ctx, 0, MRT_DTYPE_FLOAT, 1, &shape[1]);
}

const mrt_opdef mrt_opdefs_text[] = {
    {"", "StringNormalizer", 10, 1, 1, 1, 1, infer_normalizer, 0},
    {"", "StringConcat", 20, 2, 2, 1, 1, infer_concat, 0},
    {"", "StringSplit", 20, 1, 1, 2, 2, infer_split, 0},
    {"", "RegexFullMatch", 20, 1, 1, 1, 1, infer_regex, 0},
    {"", "TfIdfVectorizer", 9, 1, 1, 1, 1, infer_tfidf, 0},
    {0},
};
