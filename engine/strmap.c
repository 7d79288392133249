#include "engine/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void mrt_strmap_init(mrt_strmap *m) { memset(m, 0, sizeof(*m)); }

void mrt_strmap_clear(mrt_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

static size_t find_slot(const mrt_strmap *m, const char *key)
{
    size_t mask = m->cap - 1, i = (size_t)hash_str(key) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return i;
}

static mrt_status grow(mrt_strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    mrt_strmap n = {ncap, 0, calloc(ncap, sizeof(char *)), calloc(ncap, sizeof(int))};
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory growing a name table");
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = find_slot(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.count++;
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return MRT_STATUS_OK;
}

mrt_status mrt_strmap_put(mrt_strmap *m, const char *key, int val)
{
    if ((m->count + 1) * 2 > m->cap) {
        mrt_status st = grow(m);
        if (st) return st;
    }
    size_t i = find_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = strdup(key);
        if (!m->keys[i]) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory copying a name");
        m->count++;
    }
    m->vals[i] = val;
    return MRT_STATUS_OK;
}

bool mrt_strmap_get(const mrt_strmap *m, const char *key, int *val)
{
    if (!m->cap) return false;
    size_t i = find_slot(m, key);
    if (!m->keys[i]) return false;
    *val = m->vals[i];
    return true;
}
