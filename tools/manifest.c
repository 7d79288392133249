/* manifest.json through a real JSON parser (json-c). This used to be a substring search for "name": and "file":,
 * which took a name containing `"file":` or an escaped quote for the wrong tensor, and read nested objects out of
 * order. */
#include "tools/manifest.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"
#include "engine/strmap.h"

/* json-c's tokener is iterative; its depth bound just refuses absurd documents early (ours nest 4 levels). */
#define MANIFEST_MAX_DEPTH 64
/* Manifests list one entry per tensor of a model: tens of MB would be a million tensors. */
#define MANIFEST_MAX_BYTES (256u << 20)

static mrt_status read_text(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s'", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= MANIFEST_MAX_BYTES) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    bool err = ferror(f) != 0;
    fclose(f);
    if (!buf) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (reading '%s')", path);
    if (err || n >= MANIFEST_MAX_BYTES) {
        free(buf);
        return mrt_fail(MRT_STATUS_IO_ERROR, err ? "cannot read '%s'" : "'%s' is larger than %u MB", path,
                        MANIFEST_MAX_BYTES >> 20);
    }
    *text = buf;
    *len = n;
    return MRT_STATUS_OK;
}

/* The string member `key` of entry `i`; NULL after recording an error. */
static const char *member_string(json_object *entry, const char *key, const char *path, int i, mrt_status *st)
{
    json_object *v;
    if (!json_object_object_get_ex(entry, key, &v) || !json_object_is_type(v, json_type_string)) {
        *st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': tensors[%d] has no string \"%s\"", path, i, key);
        return NULL;
    }
    const char *s = json_object_get_string(v);
    if ((size_t)json_object_get_string_len(v) != strlen(s) || !s[0]) {
        *st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': tensors[%d].%s is empty or contains a NUL character", path, i,
                       key);
        return NULL;
    }
    return s;
}

/* A dump's files sit in its folder: refuse what would read elsewhere. */
static bool file_stays_inside(const char *file)
{
    if (file[0] == '/') return false;
    for (const char *p = file; *p;) {
        size_t seg = strcspn(p, "/");
        if (seg == 2 && p[0] == '.' && p[1] == '.') return false;
        p += seg;
        if (*p == '/') p++;
    }
    return true;
}

mrt_status manifest_read(const char *path, manifest_entry **entries, int *n)
{
    *entries = NULL;
    *n = 0;
    char *text;
    size_t len;
    MRT_TRY(read_text(path, &text, &len));
    json_tokener *tok = json_tokener_new_ex(MANIFEST_MAX_DEPTH);
    if (!tok) {
        free(text);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (JSON parser)");
    }
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    mrt_status st = MRT_STATUS_OK;
    if (!root || jerr != json_tokener_success) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s' is not valid JSON: %s (at byte %zu)", path,
                      jerr == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(jerr), used);
        goto done;
    }
    while (used < len && strchr(" \t\r\n", text[used])) used++;
    if (used < len) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s' is not valid JSON: text after the document (at byte %zu)", path,
                      used);
        goto done;
    }
    json_object *tensors;
    if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "tensors", &tensors) ||
        !json_object_is_type(tensors, json_type_array)) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': expected an object with a \"tensors\" array", path);
        goto done;
    }
    size_t count = json_object_array_length(tensors);
    if (count > INT32_MAX) {
        st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': too many tensors", path);
        goto done;
    }
    manifest_entry *es = calloc(count ? count : 1, sizeof *es);
    if (!es) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (manifest)");
        goto done;
    }
    mrt_strmap seen; /* names so far: a name listed twice is ambiguous */
    mrt_strmap_init(&seen);
    int k = 0;
    for (; k < (int)count && !st; k++) {
        json_object *entry = json_object_array_get_idx(tensors, (size_t)k);
        if (!json_object_is_type(entry, json_type_object)) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': tensors[%d] is not an object", path, k);
            break;
        }
        const char *name = member_string(entry, "name", path, k, &st);
        const char *file = name ? member_string(entry, "file", path, k, &st) : NULL;
        if (!file) break;
        if (!file_stays_inside(file)) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG,
                          "'%s': tensors[%d] ('%s'): file '%s' is outside the dump folder (absolute or '..')", path,
                          k, name, file);
            break;
        }
        int j;
        if (mrt_strmap_get(&seen, name, &j)) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "'%s': tensor '%s' is listed twice (tensors[%d] and [%d])", path,
                          name, j, k);
            break;
        }
        if ((st = mrt_strmap_put(&seen, name, k))) break;
        es[k].name = strdup(name);
        es[k].file = strdup(file);
        if (!es[k].name || !es[k].file) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (manifest)");
    }
    mrt_strmap_clear(&seen);
    if (st) {
        manifest_free(es, k + 1);
    } else {
        *entries = es;
        *n = (int)count;
    }
done:
    json_object_put(root);
    free(text);
    return st;
}

void manifest_free(manifest_entry *entries, int n)
{
    for (int i = 0; entries && i < n; i++) {
        free(entries[i].name);
        free(entries[i].file);
    }
    free(entries);
}
