/* Dump manifests (manifest.json) as `compare` and `diff --against DIR` read them: through json-c, so nesting,
 * escapes and names that look like JSON keys give the right tensors, and malformed manifests a clear error. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"
#include "loader/npy.h"
#include "tools/compare.h"

static char dir[64];

/* A dump folder holding a.npy = [1], b.npy = [2], and `manifest` as manifest.json. */
static void make_dump(const char *manifest)
{
    snprintf(dir, sizeof dir, "/tmp/mrt_manifest_XXXXXX");
    cr_assert(mkdtemp(dir));
    char path[256];
    for (int i = 0; i < 2; i++) {
        mrt_tensor t;
        int64_t shape[1] = {1};
        cr_assert_eq(mrt_tensor_alloc(&t, MRT_DTYPE_FLOAT, 1, shape), MRT_STATUS_OK);
        ((float *)t.data)[0] = (float)(i + 1);
        snprintf(path, sizeof path, "%s/%c.npy", dir, 'a' + i);
        cr_assert_eq(mrt_npy_write_file(path, &t), MRT_STATUS_OK);
        mrt_tensor_release(&t);
    }
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(manifest, f);
    fclose(f);
}

static void remove_dump(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The value loaded for `name` (which must exist). */
static float value_of(const tensor_set *s, const char *name)
{
    int i = set_find(s, name);
    cr_assert(i >= 0, "no tensor named '%s'", name);
    return ((const float *)s->tensors[i].data)[0];
}

static void expect_error(const char *manifest, const char *message_part)
{
    make_dump(manifest);
    tensor_set s;
    mrt_status st = compare_load_set(dir, &s);
    remove_dump();
    cr_assert_neq(st, MRT_STATUS_OK, "accepted: %s", manifest);
    cr_assert(strstr(mrt_last_error(), message_part), "message '%s' lacks '%s'", mrt_last_error(), message_part);
}

Test(manifest, nested_objects_and_other_members_are_ignored)
{
    /* provenance holds objects with "name" and "file" members of their own; the old substring search took them */
    make_dump("{\"provenance\": {\"model\": {\"name\": \"m\", \"file\": \"b.npy\"}, \"inputs\": [{\"name\": \"x\"}]},\n"
              " \"tensors\": [{\"producer\": {\"name\": \"n\", \"file\": \"b.npy\"}, \"file\": \"a.npy\", \"name\": \"t\","
              " \"shape\": [1]}, {\"name\": \"u\", \"file\": \"b.npy\", \"stats\": {\"min\": 2}}]}");
    tensor_set s;
    cr_assert_eq(compare_load_set(dir, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    remove_dump();
    cr_assert_eq(s.n, 2);
    cr_assert_eq(value_of(&s, "t"), 1.0f);
    cr_assert_eq(value_of(&s, "u"), 2.0f);
    set_free(&s);
}

Test(manifest, escaped_quotes_and_key_like_names)
{
    make_dump("{\"tensors\": [{\"name\": \"say \\\"hi\\\" \\\\ \\u00e9\", \"file\": \"a.npy\"},"
              " {\"name\": \"x\\\", \\\"file\\\": \\\"a.npy\", \"file\": \"b.npy\"}]}");
    tensor_set s;
    cr_assert_eq(compare_load_set(dir, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    remove_dump();
    cr_assert_eq(s.n, 2);
    cr_assert_eq(value_of(&s, "say \"hi\" \\ \xc3\xa9"), 1.0f);
    cr_assert_eq(value_of(&s, "x\", \"file\": \"a.npy"), 2.0f); /* b.npy, not the a.npy inside the name */
    set_free(&s);
}

Test(manifest, malformed_manifests_are_errors)
{
    expect_error("{\"tensors\": [{\"name\": \"t\", \"file\": \"a.npy\"}", "is not valid JSON");
    expect_error("{\"tensors\": [{\"name\": \"t\", \"file\": \"a.npy\"}]} trailing", "text after the document");
    expect_error("[1, 2]", "expected an object with a \"tensors\" array");
    expect_error("{\"tensors\": {\"name\": \"t\"}}", "expected an object with a \"tensors\" array");
    expect_error("{\"tensors\": [{\"name\": \"t\"}]}", "tensors[0] has no string \"file\"");
    expect_error("{\"tensors\": [{\"name\": 3, \"file\": \"a.npy\"}]}", "tensors[0] has no string \"name\"");
    expect_error("{\"tensors\": [7]}", "tensors[0] is not an object");
    expect_error("{\"tensors\": [{\"name\": \"t\", \"file\": \"../a.npy\"}]}", "is outside the dump folder");
    expect_error("{\"tensors\": [{\"name\": \"t\", \"file\": \"/etc/passwd\"}]}", "is outside the dump folder");
    expect_error("{\"tensors\": [{\"name\": \"a\\u0000b\", \"file\": \"a.npy\"}]}", "contains a NUL character");
    expect_error("{\"tensors\": [{\"name\": \"t\", \"file\": \"a.npy\"}, {\"name\": \"t\", \"file\": \"b.npy\"}]}",
                 "tensor 't' is listed twice (tensors[0] and [1])");
}

Test(manifest, deep_nesting_is_refused_not_a_crash)
{
    size_t n = 100000;
    char *text = malloc(2 * n + 64);
    cr_assert(text);
    strcpy(text, "{\"tensors\": [], \"x\": ");
    size_t k = strlen(text);
    for (size_t i = 0; i < n; i++) text[k++] = '[';
    for (size_t i = 0; i < n; i++) text[k++] = ']';
    strcpy(text + k, "}");
    expect_error(text, "is not valid JSON: nesting too deep");
    free(text);
}
