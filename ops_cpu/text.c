/* CPU kernels for string ops: StringNormalizer (10; locale is ignored: ASCII case mapping only),
   StringConcat (20), StringSplit (20), RegexFullMatch (20; POSIX extended regex with glibc's \w \W \b, which
   covers common RE2 patterns; RE2-only syntax such as (?i) or \d is refused by the regex compiler with a clear
   error), TfIdfVectorizer (9; n-gram ids, skips and weights as ONNX Runtime and the ONNX reference read them:
   unigrams counted once, weights per output column, a repeated pool n-gram takes its last id). */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/opdef/text.h"
#include "engine/registry.h"

static const char *str_at(const mrt_tensor *t, int64_t i)
{
    const char *s = ((char *const *)t->data)[i];
    return s ? s : "";
}

static mrt_status set_str(const mrt_op_ctx *ctx, mrt_tensor *t, int64_t i, const char *s, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    memcpy(copy, s, len);
    copy[len] = '\0';
    free(((char **)t->data)[i]);
    ((char **)t->data)[i] = copy;
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_string_normalizer(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    const char *action = mrt_attr_string(ctx, "case_change_action", "NONE");
    bool sensitive = mrt_attr_int(ctx, "is_case_sensitive", 0) != 0;
    const mrt_attr *stop = mrt_node_attr(ctx->node, "stopwords");
    int64_t n = mrt_tensor_numel(x), kept = 0;
    bool *keep = calloc((size_t)(n ? n : 1), sizeof *keep);
    if (!keep) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        keep[i] = true;
        for (int64_t k = 0; stop && stop->type == MRT_ATTR_STRINGS && k < stop->n && keep[i]; k++)
            keep[i] = sensitive ? strcmp(str_at(x, i), stop->strings[k]) != 0
                                : strcasecmp(str_at(x, i), stop->strings[k]) != 0;
        kept += keep[i];
    }
    /* everything filtered out: a single empty string */
    int64_t shape[2] = {1, kept ? kept : 1};
    mrt_tensor *y;
    mrt_status st = x->rank == 1 ? mrt_output_alloc(ctx, 0, MRT_DTYPE_STRING, 1, &shape[1], &y)
                                 : mrt_output_alloc(ctx, 0, MRT_DTYPE_STRING, 2, shape, &y);
    for (int64_t i = 0, j = 0; !st && y && i < n; i++) {
        if (!keep[i]) continue;
        const char *s = str_at(x, i);
        size_t len = strlen(s);
        st = set_str(ctx, y, j, s, len);
        char *o = ((char **)y->data)[j++];
        for (size_t c = 0; !st && c < len; c++) {
            if (strcmp(action, "LOWER") == 0) o[c] = (char)tolower((unsigned char)o[c]);
            if (strcmp(action, "UPPER") == 0) o[c] = (char)toupper((unsigned char)o[c]);
        }
    }
    if (!st && y && kept == 0) st = set_str(ctx, y, 0, "", 0);
    free(keep);
    return st;
}

static mrt_status mrt_cpu_string_concat(mrt_op_ctx *ctx)
{
    const mrt_tensor *a = mrt_input(ctx, 0), *b = mrt_input(ctx, 1);
    mrt_tensor *y = mrt_output(ctx, 0);
    int r = y->rank;
    int64_t sa[MRT_MAX_RANK], sb[MRT_MAX_RANK], idx[MRT_MAX_RANK] = {0}, n = mrt_tensor_numel(y);
    /* broadcast strides (0 along broadcast dims) */
    int64_t ka = 1, kb = 1;
    for (int d = r - 1; d >= 0; d--) {
        int da = d - (r - a->rank), db = d - (r - b->rank);
        sa[d] = da >= 0 && a->shape[da] != 1 ? ka : 0;
        sb[d] = db >= 0 && b->shape[db] != 1 ? kb : 0;
        if (da >= 0) ka *= a->shape[da];
        if (db >= 0) kb *= b->shape[db];
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t ia = 0, ib = 0;
        for (int d = 0; d < r; d++) {
            ia += idx[d] * sa[d];
            ib += idx[d] * sb[d];
        }
        const char *x = str_at(a, ia), *z = str_at(b, ib);
        size_t lx = strlen(x), lz = strlen(z);
        char *s = malloc(lx + lz + 1);
        if (!s) return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
        memcpy(s, x, lx);
        memcpy(s + lx, z, lz + 1);
        free(((char **)y->data)[i]);
        ((char **)y->data)[i] = s;
        for (int d = r - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
    return MRT_STATUS_OK;
}

/* Substrings of s: on `delim` exactly (consecutive delimiters give empty strings), or, when delim is empty, on
   runs of whitespace with leading/trailing whitespace ignored; at most maxsplit splits (< 0: unlimited).
   Calls emit(part, len, user) for each part; returns the number of parts. */
typedef mrt_status (*part_fn)(const char *p, size_t len, void *user);

static mrt_status split_one(const char *s, const char *delim, int64_t maxsplit, part_fn emit, void *user, int64_t *count)
{
    size_t dl = strlen(delim);
    int64_t parts = 0, splits = 0;
    if (dl) {
        const char *p = s;
        for (;;) {
            const char *hit = maxsplit < 0 || splits < maxsplit ? strstr(p, delim) : NULL;
            size_t len = hit ? (size_t)(hit - p) : strlen(p);
            if (emit) MRT_TRY(emit(p, len, user));
            parts++;
            if (!hit) break;
            splits++;
            p = hit + dl;
        }
    } else {
        const char *p = s;
        while (*p && isspace((unsigned char)*p)) p++;
        while (*p) {
            const char *end = p;
            if (maxsplit >= 0 && splits >= maxsplit) {
                end = p + strlen(p);
                while (end > p && isspace((unsigned char)end[-1])) end--;
            } else {
                while (*end && !isspace((unsigned char)*end)) end++;
            }
            if (emit) MRT_TRY(emit(p, (size_t)(end - p), user));
            parts++;
            p = end;
            while (*p && isspace((unsigned char)*p)) p++;
            if (*p) splits++;
        }
    }
    *count = parts;
    return MRT_STATUS_OK;
}

typedef struct split_out {
    const mrt_op_ctx *ctx;
    mrt_tensor *y;
    int64_t base, k;
} split_out;

static mrt_status emit_part(const char *p, size_t len, void *user)
{
    split_out *o = user;
    return set_str(o->ctx, o->y, o->base + o->k++, p, len);
}

static mrt_status mrt_cpu_string_split(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    const char *delim = mrt_attr_string(ctx, "delimiter", "");
    int64_t maxsplit = mrt_attr_int(ctx, "maxsplit", -1), n = mrt_tensor_numel(x), width = 0;
    mrt_tensor *z;
    MRT_TRY(mrt_output_alloc(ctx, 1, MRT_DTYPE_INT64, x->rank, x->shape, &z));
    for (int64_t i = 0; i < n; i++) {
        int64_t c;
        MRT_TRY(split_one(str_at(x, i), delim, maxsplit, NULL, NULL, &c));
        if (z) ((int64_t *)z->data)[i] = c;
        width = c > width ? c : width;
    }
    if (x->rank + 1 > MRT_MAX_RANK) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "input rank too high");
    int64_t shape[MRT_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof(int64_t));
    shape[x->rank] = width;
    mrt_tensor *y;
    MRT_TRY(mrt_output_alloc(ctx, 0, MRT_DTYPE_STRING, x->rank + 1, shape, &y));
    for (int64_t i = 0; y && i < n; i++) {
        split_out o = {ctx, y, i * width, 0};
        int64_t c;
        MRT_TRY(split_one(str_at(x, i), delim, maxsplit, emit_part, &o, &c));
        for (int64_t k = c; k < width; k++) MRT_TRY(set_str(ctx, y, i * width + k, "", 0)); /* padding */
    }
    return MRT_STATUS_OK;
}

/* RE2 -> POSIX extended (glibc): inside brackets \w \d \s become [:alnum:]_ [:digit:] [:space:] and escaped
   punctuation becomes literal (moved to the end of the bracket so '-' stays literal); outside, \d and \D become
   [0-9] and [^0-9] and (?: becomes (. glibc handles \w \W \s \S \b \B outside brackets itself. */
static char *re2_to_posix(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(n * 12 + 16), *o = out, tail[256];
    if (!out) return NULL;
    size_t nt = 0;
    bool in_bracket = false;
    for (const char *p = in; *p; p++) {
        if (!in_bracket) {
            if (p[0] == '\\' && (p[1] == 'd' || p[1] == 'D')) {
                o += sprintf(o, p[1] == 'd' ? "[0-9]" : "[^0-9]");
                p++;
            } else if (p[0] == '(' && p[1] == '?' && p[2] == ':') {
                *o++ = '(';
                p += 2;
            } else if (p[0] == '\\' && p[1]) {
                *o++ = *p++;
                *o++ = *p;
            } else {
                if (*p == '[') {
                    in_bracket = true;
                    nt = 0;
                    *o++ = *p;
                    if (p[1] == '^') *o++ = *++p;
                    if (p[1] == ']') *o++ = *++p; /* a leading ']' is literal */
                    continue;
                }
                *o++ = *p;
            }
            continue;
        }
        if (*p == ']') {
            for (size_t k = 0; k < nt; k++)
                if (tail[k] != '-') *o++ = tail[k];
            for (size_t k = 0; k < nt; k++)
                if (tail[k] == '-') {
                    *o++ = '-';
                    break;
                }
            *o++ = ']';
            in_bracket = false;
        } else if (p[0] == '\\' && p[1]) {
            p++;
            if (*p == 'w') o += sprintf(o, "[:alnum:]_");
            else if (*p == 'd') o += sprintf(o, "[:digit:]");
            else if (*p == 's') o += sprintf(o, "[:space:]");
            else if (nt < sizeof tail) tail[nt++] = *p;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static mrt_status mrt_cpu_regex_full_match(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    const char *pattern = mrt_attr_string(ctx, "pattern", "");
    /* full match: anchor the whole alternation */
    char *posix = re2_to_posix(pattern);
    size_t len = posix ? strlen(posix) + 5 : 0;
    char *anchored = posix ? malloc(len) : NULL;
    if (!anchored) {
        free(posix);
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(anchored, len, "^(%s)$", posix);
    free(posix);
    regex_t re;
    int rc = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &re, msg, sizeof msg);
        return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED,
                           "pattern '%s' is not supported by the POSIX extended regex engine minirt uses: %s", pattern,
                           msg);
    }
    int64_t n = mrt_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) ((uint8_t *)y->data)[i] = regexec(&re, str_at(x, i), 0, NULL, 0) == 0;
    regfree(&re);
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ TfIdfVectorizer */

/* The pool's n-grams as a trie whose edges (parent node, item) live in one open-addressing hash table. An item is
   an integer, or a string held as the index of its first spelling in the pool. */
typedef struct tfidf_slot {
    int64_t key;
    int32_t parent, child; /* child 0: an empty slot (the root, node 0, is nobody's child) */
} tfidf_slot;

typedef struct tfidf_trie {
    const mrt_tfidf *p;
    tfidf_slot *slots;
    int64_t mask;
    int64_t *id;           /* per node: 1-based n-gram id, 0 when the path is only a prefix */
    int32_t n_nodes;
} tfidf_trie;

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t edge_hash(int32_t parent, uint64_t item_hash)
{
    uint64_t h = item_hash ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
    h ^= h >> 31;
    return h * 0xbf58476d1ce4e5b9ull;
}

/* The slot of edge (parent, item): the one that holds it, or the empty one where it would go. */
static tfidf_slot *trie_slot(const tfidf_trie *t, int32_t parent, int64_t int_item, const char *str_item)
{
    uint64_t h = edge_hash(parent, t->p->strings ? hash_string(str_item) : (uint64_t)int_item);
    for (int64_t i = (int64_t)(h & (uint64_t)t->mask);; i = (i + 1) & t->mask) {
        tfidf_slot *s = &t->slots[i];
        if (!s->child) return s;
        if (s->parent != parent) continue;
        if (t->p->strings ? strcmp(t->p->pool_strings[s->key] ? t->p->pool_strings[s->key] : "", str_item) == 0
                          : s->key == int_item)
            return s;
    }
}

static void trie_build(tfidf_trie *t)
{
    const mrt_tfidf *p = t->p;
    int64_t id = 1; /* ids run over every n-gram of the pool, also the sizes outside [min, max] */
    for (int64_t g = 0; g < p->n_groups; g++) {
        int64_t n = g + 1, start = p->ngram_counts[g];
        int64_t end = g + 1 < p->n_groups ? p->ngram_counts[g + 1] : p->pool_len;
        if (n < p->min_gram || n > p->max_gram) {
            id += (end - start) / n;
            continue;
        }
        for (int64_t at = start; at < end; at += n, id++) {
            int32_t node = 0;
            for (int64_t k = 0; k < n; k++) {
                const char *s = p->strings ? (p->pool_strings[at + k] ? p->pool_strings[at + k] : "") : NULL;
                tfidf_slot *slot = trie_slot(t, node, p->strings ? 0 : p->pool_ints[at + k], s);
                if (!slot->child) {
                    slot->key = p->strings ? at + k : p->pool_ints[at + k];
                    slot->parent = node;
                    slot->child = ++t->n_nodes;
                    t->id[slot->child] = 0;
                }
                node = slot->child;
            }
            t->id[node] = id;
        }
    }
}

static int32_t trie_step(const tfidf_trie *t, int32_t node, const mrt_tensor *x, int64_t at)
{
    const tfidf_slot *s;
    if (x->dtype == MRT_DTYPE_STRING) s = trie_slot(t, node, 0, str_at(x, at));
    else s = trie_slot(t, node, x->dtype == MRT_DTYPE_INT32 ? ((const int32_t *)x->data)[at] : ((const int64_t *)x->data)[at], NULL);
    return s->child;
}

/* Hash-table slots for the trie (a power of two, at least twice the pool). */
static int64_t tfidf_table_slots(const mrt_tfidf *p)
{
    int64_t slots = 2;
    while (slots < 2 * (p->pool_len + 1)) slots *= 2;
    return slots;
}

/* The n-gram trie's hash table (slots of {int64 key, int32 parent, int32 child}), its node ids (int64 each: the root
   and one per pool item at most) and one row of int64 counts. */
static size_t tfidf_workspace_bytes(const mrt_tfidf *p)
{
    return (size_t)tfidf_table_slots(p) * 16 + (size_t)(p->pool_len + 1) * 8 + (size_t)p->out_size * 8 + 64;
}

static mrt_status mrt_cpu_tfidf_workspace(mrt_op_ctx *ctx)
{
    mrt_tfidf p;
    MRT_TRY(mrt_tfidf_read(ctx, &p));
    mrt_workspace_request(ctx, tfidf_workspace_bytes(&p));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_tfidf_vectorizer(mrt_op_ctx *ctx)
{
    mrt_tfidf p;
    MRT_TRY(mrt_tfidf_read(ctx, &p));
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    uint8_t *ws = mrt_workspace(ctx, tfidf_workspace_bytes(&p));
    if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
    int64_t n_slots = tfidf_table_slots(&p);
    tfidf_trie t = {&p, (tfidf_slot *)ws, n_slots - 1, (int64_t *)(ws + n_slots * 16), 0};
    int64_t *count = t.id + p.pool_len + 1;
    memset(t.slots, 0, (size_t)n_slots * sizeof *t.slots);
    t.id[0] = 0;
    trie_build(&t);
    float *out = y->data;
    for (int64_t r = 0; r < p.rows; r++) {
        memset(count, 0, (size_t)p.out_size * sizeof *count);
        int64_t row = r * p.cols, min_size = p.min_gram;
        for (int64_t skip = 1; skip <= p.max_skip + 1; skip++) {
            for (int64_t start = 0; start + skip * (min_size - 1) < p.cols; start++) {
                int32_t node = 0;
                for (int64_t size = 1, at = start; size <= p.max_gram && at < p.cols; size++, at += skip) {
                    node = trie_step(&t, node, x, row + at);
                    if (!node) break;
                    if (size >= min_size && t.id[node]) count[p.ngram_indexes[t.id[node] - 1]]++;
                }
            }
            /* a unigram does not depend on the skip: count it in the first pass only */
            if (min_size == 1 && ++min_size > p.max_gram) break;
        }
        for (int64_t c = 0; c < p.out_size; c++) {
            double w = p.weights ? p.weights[c] : 1.0, v;
            if (p.mode == MRT_TFIDF_TF) v = (double)count[c];
            else if (p.mode == MRT_TFIDF_IDF) v = count[c] > 0 ? w : 0.0;
            else v = w * (double)count[c];
            out[r * p.out_size + c] = (float)v;
        }
    }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_text[] = {
    {"", "StringNormalizer", 10, mrt_cpu_string_normalizer, NULL},
    {"", "StringConcat", 20, mrt_cpu_string_concat, NULL},
    {"", "StringSplit", 20, mrt_cpu_string_split, NULL},
    {"", "RegexFullMatch", 20, mrt_cpu_regex_full_match, NULL},
    {"", "TfIdfVectorizer", 9, mrt_cpu_tfidf_vectorizer, NULL, NULL, NULL, 0, mrt_cpu_tfidf_workspace},
    {0},
};
