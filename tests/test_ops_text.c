/* String ops against expectations worked out by hand from the ONNX spec. */
#include <criterion/criterion.h>
#include <string.h>

#include "harness.h"

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
