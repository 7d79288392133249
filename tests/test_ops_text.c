/* String ops against expectations worked out by hand from the ONNX spec; TfIdfVectorizer against the naive
 * reference in ref/text_ref.c on random pools and inputs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ref/text_ref.h"

static mrt_tensor strings(int rank, const int64_t *shape, const char *const *v)
{
    mrt_tensor t;
    mrt_tensor_alloc(&t, MRT_DTYPE_STRING, rank, shape);
    for (int64_t i = 0; i < mrt_tensor_numel(&t); i++) ((char **)t.data)[i] = strdup(v[i]);
    return t;
}

static void expect_strings(const mrt_tensor *t, int rank, const int64_t *shape, const char *const *v)
{
    cr_assert_eq(t->dtype, MRT_DTYPE_STRING);
    cr_assert_eq(t->rank, rank, "rank %d vs %d", t->rank, rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(t->shape[d], shape[d], "dim %d: %lld vs %lld", d, (long long)t->shape[d], (long long)shape[d]);
    for (int64_t i = 0; i < mrt_tensor_numel(t); i++)
        cr_assert_str_eq(((char **)t->data)[i], v[i], "element %lld", (long long)i);
}

Test(text, normalizer_drops_stopwords_case_insensitively_then_uppercases)
{
    mrt_tensor x = strings(2, (int64_t[]){1, 4}, (const char *[]){"Monday", "tuesday", "MONDAY", "wed"}), y;
    th_case *c = th_begin("StringNormalizer", "", 10);
    th_input(c, &x);
    th_attr_string(c, "case_change_action", "UPPER");
    th_attr_strings(c, "stopwords", 1, (const char *[]){"monday"});
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_strings(&y, 2, (int64_t[]){1, 2}, (const char *[]){"TUESDAY", "WED"});
    mrt_tensor_release(&y);
    th_free(c);
    /* case-sensitive: only the exact spelling is a stopword; everything filtered gives one empty string */
    c = th_begin("StringNormalizer", "", 10);
    th_input(c, &x);
    th_attr_int(c, "is_case_sensitive", 1);
    th_attr_strings(c, "stopwords", 4, (const char *[]){"Monday", "tuesday", "MONDAY", "wed"});
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_strings(&y, 2, (int64_t[]){1, 1}, (const char *[]){""});
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(text, concat_broadcasts)
{
    mrt_tensor a = strings(2, (int64_t[]){2, 1}, (const char *[]){"a", "b"});
    mrt_tensor b = strings(1, (int64_t[]){3}, (const char *[]){"1", "2", ""}), y;
    th_case *c = th_begin("StringConcat", "", 20);
    th_input(c, &a);
    th_input(c, &b);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_strings(&y, 2, (int64_t[]){2, 3}, (const char *[]){"a1", "a2", "a", "b1", "b2", "b"});
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
}

Test(text, split_with_maxsplit_and_whitespace)
{
    mrt_tensor x = strings(1, (int64_t[]){2}, (const char *[]){"a,b,,c", "x"}), y[2];
    th_case *c = th_begin("StringSplit", "", 20);
    th_input(c, &x);
    th_attr_string(c, "delimiter", ",");
    th_attr_int(c, "maxsplit", 2);
    cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_strings(&y[0], 2, (int64_t[]){2, 3}, (const char *[]){"a", "b", ",c", "x", "", ""});
    cr_assert_eq(((int64_t *)y[1].data)[0], 3);
    cr_assert_eq(((int64_t *)y[1].data)[1], 1);
    mrt_tensor_release(&y[0]);
    mrt_tensor_release(&y[1]);
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor w = strings(0, NULL, (const char *[]){"  one \t two  "});
    c = th_begin("StringSplit", "", 20);
    th_input(c, &w);
    cr_assert_eq(th_run(c, 2, y), MRT_STATUS_OK, "%s", mrt_last_error());
    expect_strings(&y[0], 1, (int64_t[]){2}, (const char *[]){"one", "two"});
    mrt_tensor_release(&y[0]);
    mrt_tensor_release(&y[1]);
    th_free(c);
    mrt_tensor_release(&w);
}

Test(text, regex_full_match_translates_re2_classes)
{
    mrt_tensor x = strings(1, (int64_t[]){4}, (const char *[]){"ab-12", "ab-1x", "xab-12", "a_b-9"}), y;
    th_case *c = th_begin("RegexFullMatch", "", 20);
    th_input(c, &x);
    th_attr_string(c, "pattern", "[\\w\\-]+-\\d+");
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    const uint8_t want[] = {1, 0, 1, 1};
    for (int i = 0; i < 4; i++) cr_assert_eq(((uint8_t *)y.data)[i], want[i], "element %d", i);
    mrt_tensor_release(&y);
    th_free(c);
    /* a full match, not a search */
    c = th_begin("RegexFullMatch", "", 20);
    th_input(c, &x);
    th_attr_string(c, "pattern", "ab");
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 4; i++) cr_assert_eq(((uint8_t *)y.data)[i], 0);
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(text, non_string_input_is_refused)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){1}), y;
    th_case *c = th_begin("StringConcat", "", 20);
    th_input(c, &x);
    th_input(c, &x);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "string"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ TfIdfVectorizer */

static const char *const vocab[6] = {"a", "bb", "c", "dd", "e", ""};

typedef struct tfidf_case {
    bool strings, batch, int32_input, with_weights;
    int mode;
    int64_t min_gram, max_gram, max_skip, rows, cols;
} tfidf_case;

static void run_tfidf(th_rng *r, const tfidf_case *tc, const char *label)
{
    /* a pool of 1-grams .. 3-grams over a small vocabulary (repeats allowed), so that inputs hit it */
    int64_t per_size[3] = {th_rng_int(r, 0, 4), th_rng_int(r, 1, 4), th_rng_int(r, 0, 3)};
    int64_t counts[3], pool[64], n_ngrams = 0, len = 0;
    for (int g = 0; g < 3; g++) {
        counts[g] = len;
        for (int64_t k = 0; k < per_size[g]; k++, n_ngrams++)
            for (int i = 0; i <= g; i++) pool[len++] = th_rng_int(r, 0, 5);
    }
    int64_t indexes[16], out_size = 0;
    for (int64_t i = 0; i < n_ngrams; i++) {
        indexes[i] = th_rng_int(r, 0, n_ngrams); /* columns may repeat or stay unused */
        if (indexes[i] + 1 > out_size) out_size = indexes[i] + 1;
    }
    float weights[16];
    for (int64_t i = 0; i < out_size; i++) weights[i] = (float)th_rng_uniform(r, 0.1, 3);
    const char *pool_str[64];
    for (int64_t i = 0; i < len; i++) pool_str[i] = vocab[pool[i]];

    int64_t rows = tc->batch ? tc->rows : 1, n = rows * tc->cols, xi[256];
    const char *xs[256];
    for (int64_t i = 0; i < n; i++) {
        xi[i] = th_rng_int(r, 0, 5);
        xs[i] = vocab[xi[i]];
    }
    int64_t shape[2] = {rows, tc->cols};
    mrt_tensor x;
    if (tc->strings) {
        x = strings(tc->batch ? 2 : 1, tc->batch ? shape : &shape[1], xs);
    } else {
        cr_assert_eq(mrt_tensor_alloc(&x, tc->int32_input ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, tc->batch ? 2 : 1,
                                      tc->batch ? shape : &shape[1]), MRT_STATUS_OK);
        for (int64_t i = 0; i < n; i++) {
            if (tc->int32_input) ((int32_t *)x.data)[i] = (int32_t)xi[i];
            else ((int64_t *)x.data)[i] = xi[i];
        }
    }
    static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
    th_case *c = th_begin("TfIdfVectorizer", "", 9);
    th_input(c, &x);
    th_attr_int(c, "min_gram_length", tc->min_gram);
    th_attr_int(c, "max_gram_length", tc->max_gram);
    th_attr_int(c, "max_skip_count", tc->max_skip);
    th_attr_string(c, "mode", modes[tc->mode]);
    th_attr_ints(c, "ngram_counts", 3, counts);
    th_attr_ints(c, "ngram_indexes", n_ngrams, indexes);
    if (tc->strings) th_attr_strings(c, "pool_strings", len, pool_str);
    else th_attr_ints(c, "pool_int64s", len, pool);
    if (tc->with_weights) th_attr_floats(c, "weights", out_size, weights);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    ref_tfidf p = {tc->min_gram, tc->max_gram, tc->max_skip, tc->mode, counts, 3, indexes,
                   tc->with_weights ? weights : NULL, tc->strings ? NULL : pool, tc->strings ? pool_str : NULL, len,
                   out_size};
    double *want = th_alloc_f64(rows * out_size);
    ref_tfidf_run(&p, tc->strings ? NULL : xi, tc->strings ? xs : NULL, rows, tc->cols, want);
    int64_t yshape[2] = {rows, out_size};
    cr_assert_eq(y.rank, tc->batch ? 2 : 1, "%s: rank %d", label, y.rank);
    th_assert_close(&y, MRT_DTYPE_FLOAT, want, tc->batch ? 2 : 1, tc->batch ? yshape : &yshape[1], label);
    free(want);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(text, tfidf_random_pools_match_the_reference)
{
    th_rng r;
    th_rng_init(&r, th_seed("text.tfidf"));
    for (int it = 0; it < 240; it++) {
        tfidf_case tc = {it % 2 == 0, it % 3 != 0, it % 5 == 1, it % 4 >= 2, it % 3, 1 + (it / 3) % 2, 0,
                         (it / 7) % 4, th_rng_int(&r, 0, 3), th_rng_int(&r, 0, 12)};
        tc.max_gram = tc.min_gram + th_rng_int(&r, 0, 3 - tc.min_gram);
        char label[160];
        snprintf(label, sizeof label, "case %d: %s pool, mode %d, grams %lld-%lld, skip %lld, %lldx%lld%s", it,
                 tc.strings ? "string" : "int", tc.mode, (long long)tc.min_gram, (long long)tc.max_gram,
                 (long long)tc.max_skip, (long long)tc.rows, (long long)tc.cols, tc.with_weights ? ", weights" : "");
        run_tfidf(&r, &tc, label);
    }
}

static th_case *tfidf_node(const mrt_tensor *x, const char *mode, int64_t n_counts, const int64_t *counts,
                           int64_t n_idx, const int64_t *idx)
{
    th_case *c = th_begin("TfIdfVectorizer", "", 9);
    th_input(c, x);
    th_attr_int(c, "min_gram_length", 1);
    th_attr_int(c, "max_gram_length", 2);
    th_attr_int(c, "max_skip_count", 0);
    th_attr_string(c, "mode", mode);
    th_attr_ints(c, "ngram_counts", n_counts, counts);
    th_attr_ints(c, "ngram_indexes", n_idx, idx);
    return c;
}

Test(text, tfidf_refuses_inconsistent_attributes)
{
    mrt_tensor x = th_vec_i64(4, (int64_t[]){1, 2, 3, 1});
    const int64_t pool[4] = {1, 2, 1, 2}, counts[2] = {0, 2}, idx[3] = {0, 1, 2};
    th_case *c = tfidf_node(&x, "TF", 2, counts, 3, idx);
    th_attr_ints(c, "pool_int64s", 4, pool);
    mrt_tensor y;
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    /* 1-grams {1, 2}, 2-gram {1 2}: x = 1 2 3 1 has 1 twice, 2 once, "1 2" once */
    const float want[3] = {2, 1, 1};
    cr_assert_eq(y.shape[0], 3);
    for (int i = 0; i < 3; i++) cr_assert_float_eq(((float *)y.data)[i], want[i], 0, "column %d", i);
    mrt_tensor_release(&y);
    th_free(c);

    c = tfidf_node(&x, "TF", 2, (int64_t[]){0, 3}, 3, idx); /* 1 item left for the 2-grams */
    th_attr_ints(c, "pool_int64s", 4, pool);
    th_expect_failure(c, 1, "not a multiple of 2", "odd 2-gram group");
    c = tfidf_node(&x, "TF", 2, counts, 2, idx);
    th_attr_ints(c, "pool_int64s", 4, pool);
    th_expect_failure(c, 1, "ngram_indexes has 2 entries, the pool holds 3", "short ngram_indexes");
    c = tfidf_node(&x, "TF", 2, counts, 3, (int64_t[]){0, -1, 2});
    th_attr_ints(c, "pool_int64s", 4, pool);
    th_expect_failure(c, 1, "ngram_indexes[1] = -1", "negative index");
    c = tfidf_node(&x, "BM25", 2, counts, 3, idx);
    th_attr_ints(c, "pool_int64s", 4, pool);
    th_expect_failure(c, 1, "mode 'BM25'", "unknown mode");
    c = tfidf_node(&x, "TF", 2, counts, 3, idx);
    th_expect_failure(c, 1, "exactly one of pool_int64s and pool_strings", "no pool");
    c = tfidf_node(&x, "IDF", 2, counts, 3, idx);
    th_attr_ints(c, "pool_int64s", 4, pool);
    th_attr_floats(c, "weights", 2, (float[]){1, 2});
    th_expect_failure(c, 1, "weights has 2 entries", "short weights");
    c = tfidf_node(&x, "TF", 2, counts, 3, idx);
    th_attr_strings(c, "pool_strings", 4, (const char *[]){"a", "b", "a", "b"});
    th_expect_failure(c, 1, "X is int64 but the pool holds strings", "dtype against pool");
    mrt_tensor_release(&x);
}
