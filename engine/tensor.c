/* Tensor and value storage helpers. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/status.h"
#include "minirt/minirt.h"

int64_t mrt_tensor_numel(const mrt_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

bool mrt_tensor_same_shape(const mrt_tensor *a, const mrt_tensor *b)
{
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

static size_t bytes_for(mrt_dtype dt, int64_t numel)
{
    int bits = mrt_dtype_bits(dt);
    return (size_t)(((uint64_t)numel * (uint64_t)bits + 7) / 8);
}

size_t mrt_tensor_nbytes(const mrt_tensor *t) { return bytes_for(t->dtype, mrt_tensor_numel(t)); }

mrt_status mrt_shape_numel(int rank, const int64_t *shape, int64_t *numel)
{
    if (rank < 0 || rank > MRT_MAX_RANK)
        return mrt_fail(MRT_STATUS_INVALID_ARG, "rank %d is outside [0, %d]", rank, MRT_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) return mrt_fail(MRT_STATUS_INVALID_ARG, "dimension %d is negative (%lld)", i, (long long)shape[i]);
        if (shape[i] != 0 && n > INT64_MAX / shape[i]) {
            char buf[256];
            return mrt_fail(MRT_STATUS_INVALID_ARG, "shape %s has more than 2^63 elements",
                            mrt_shape_describe(rank, shape, buf, sizeof buf));
        }
        n *= shape[i];
    }
    *numel = n;
    return MRT_STATUS_OK;
}

mrt_status mrt_shape_nbytes(mrt_dtype dt, int rank, const int64_t *shape, size_t *nbytes)
{
    int64_t n;
    MRT_TRY(mrt_shape_numel(rank, shape, &n));
    int bits = mrt_dtype_bits(dt);
    if (bits == 0) return mrt_fail(MRT_STATUS_INVALID_ARG, "data type %d has no storage size", (int)dt);
    if ((uint64_t)n > (uint64_t)(INT64_MAX / 2) / (uint64_t)bits || (uint64_t)n * (uint64_t)bits / 8 > SIZE_MAX / 2) {
        char buf[256];
        return mrt_fail(MRT_STATUS_INVALID_ARG, "%s%s is too large to address",
                        mrt_dtype_name(dt), mrt_shape_describe(rank, shape, buf, sizeof buf));
    }
    *nbytes = bytes_for(dt, n);
    return MRT_STATUS_OK;
}

size_t mrt_alloc_limit(void)
{
    static size_t limit;
    if (!limit) {
        const char *env = getenv("MRT_MAX_ALLOC_BYTES");
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        limit = env && *env ? (size_t)strtoull(env, NULL, 0)
                            : pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 40;
    }
    return limit;
}

mrt_status mrt_check_alloc(size_t bytes, const char *what)
{
    if (bytes > mrt_alloc_limit())
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY,
                        "refusing to allocate %zu bytes for %s: more than this machine's %zu bytes of memory (set "
                        "MRT_MAX_ALLOC_BYTES to change the limit)",
                        bytes, what, mrt_alloc_limit());
    return MRT_STATUS_OK;
}

/* ------------------------------------------------------------------ large-buffer cache
 *
 * Buffers of 1 MiB and more are plain malloc blocks, but their sizes are rounded up to a class (2^k times 1, 1.25,
 * 1.5 or 1.75), and released ones are kept for the next allocation of their class or smaller. glibc serves such
 * sizes with fresh mmaps (above 32 MiB always): every allocation then faults in zeroed pages one by one. Mask
 * R-CNN's region heads and its mask-pasting Loop (which grows a [i, 320, 320] tensor by Concat each iteration)
 * spent a quarter of their time in page faults. A rounded block costs no memory until its pages are written (it
 * is mapped lazily), and a reused one is zeroed for its new size only (what calloc promises).
 *
 * At most CACHE_SLOTS blocks and CACHE_MAX_BYTES are kept; the cache is emptied when the last session is freed
 * (mrt_tensor_cache_flush), so a program that stops using minirt gets its memory back. */
enum { CACHE_MIN_BYTES = 1 << 20, CACHE_SLOTS = 16 };
#define CACHE_MAX_BYTES ((size_t)1 << 29)

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} cache[CACHE_SLOTS];
static size_t cache_bytes;

/* nb rounded up to 2^k, 1.25 * 2^k, 1.5 * 2^k or 1.75 * 2^k */
static size_t cache_class(size_t nb)
{
    size_t top = 1;
    while (top < nb / 2) top <<= 1;
    for (size_t q = 4; q <= 8; q++)
        if (top / 4 * q >= nb) return top / 4 * q;
    return nb;
}

/* A cached block of at least nb bytes (the smallest), or NULL. */
static void *cache_take(size_t nb)
{
    int best = -1;
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].p && cache[i].cap >= nb && cache[i].cap <= 2 * nb && (best < 0 || cache[i].cap < cache[best].cap))
            best = i;
    void *p = NULL;
    if (best >= 0) {
        p = cache[best].p;
        cache_bytes -= cache[best].cap;
        cache[best].p = NULL;
    }
    pthread_mutex_unlock(&cache_mu);
    return p;
}

/* Keep p (malloc'd, usable size cap) for a later allocation, or free it: a full cache gives up its smallest
   block for a larger one. */
static void cache_give(void *p, size_t cap)
{
    pthread_mutex_lock(&cache_mu);
    int slot = -1;
    for (int i = 0; i < CACHE_SLOTS && slot < 0; i++)
        if (!cache[i].p) slot = i;
    if (slot < 0) {
        int small = 0;
        for (int i = 1; i < CACHE_SLOTS; i++)
            if (cache[i].cap < cache[small].cap) small = i;
        if (cache[small].cap < cap) {
            free(cache[small].p);
            cache_bytes -= cache[small].cap;
            cache[small].p = NULL;
            slot = small;
        }
    }
    if (slot >= 0 && cache_bytes + cap <= CACHE_MAX_BYTES) {
        cache[slot].p = p, cache[slot].cap = cap;
        cache_bytes += cap;
        p = NULL;
    }
    pthread_mutex_unlock(&cache_mu);
    free(p);
}

void mrt_tensor_cache_flush(void)
{
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(cache[i].p);
        cache[i].p = NULL;
    }
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_mu);
}

/* Zeroed storage for nb bytes (at least 1). */
static void *tensor_storage(size_t nb)
{
    if (nb < CACHE_MIN_BYTES) return calloc(nb ? nb : 1, 1);
    /* a new block is zeroed for nb bytes only: calloc would write its whole class where glibc serves it from the heap */
    void *p = cache_take(nb);
    if (!p) p = malloc(cache_class(nb));
    return p ? memset(p, 0, nb) : NULL;
}

/* Free storage from tensor_storage (or any malloc'd block): large ones go to the cache. */
static void tensor_storage_free(void *p)
{
    if (!p) return;
    size_t cap = malloc_usable_size(p);
    if (cap >= CACHE_MIN_BYTES) cache_give(p, cap);
    else free(p);
}

mrt_status mrt_tensor_alloc(mrt_tensor *t, mrt_dtype dt, int rank, const int64_t *shape)
{
    size_t nb;
    memset(t, 0, sizeof(*t));
    MRT_TRY(mrt_shape_nbytes(dt, rank, shape, &nb));
    if (nb > mrt_alloc_limit()) {
        char buf[256];
        mrt_tensor desc = {dt, rank, {0}, NULL};
        if (rank > 0) memcpy(desc.shape, shape, (size_t)rank * sizeof(int64_t));
        return mrt_check_alloc(nb, mrt_tensor_describe(&desc, buf, sizeof buf));
    }
    t->dtype = dt;
    t->rank = rank;
    if (rank) memcpy(t->shape, shape, (size_t)rank * sizeof(int64_t));
    t->data = tensor_storage(nb);
    if (!t->data) {
        char buf[256];
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory allocating %zu bytes for %s", nb,
                        mrt_tensor_describe(t, buf, sizeof buf));
    }
    return MRT_STATUS_OK;
}

void mrt_tensor_release(mrt_tensor *t)
{
    if (!t || !t->data) return;
    if (t->dtype == MRT_DTYPE_STRING) {
        char **s = t->data;
        int64_t n = mrt_tensor_numel(t);
        for (int64_t i = 0; i < n; i++) free(s[i]);
    }
    tensor_storage_free(t->data);
    t->data = NULL;
}

mrt_status mrt_tensor_copy(mrt_tensor *dst, const mrt_tensor *src)
{
    MRT_TRY(mrt_tensor_alloc(dst, src->dtype, src->rank, src->shape));
    if (src->dtype == MRT_DTYPE_STRING) {
        char **d = dst->data, *const *s = src->data;
        int64_t n = mrt_tensor_numel(src);
        for (int64_t i = 0; i < n; i++) {
            d[i] = strdup(s[i] ? s[i] : "");
            if (!d[i]) {
                mrt_tensor_release(dst);
                return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory copying a string tensor");
            }
        }
    } else if (src->data) {
        memcpy(dst->data, src->data, mrt_tensor_nbytes(src));
    }
    return MRT_STATUS_OK;
}

const char *mrt_shape_describe(int rank, const int64_t *shape, char *buf, size_t len)
{
    size_t pos = 0;
    if (len == 0) return buf;
    buf[0] = '\0';
    pos += (size_t)snprintf(buf + pos, len - pos, "[");
    for (int i = 0; i < rank && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (pos < len) snprintf(buf + pos, len - pos, "]");
    return buf;
}

const char *mrt_tensor_describe(const mrt_tensor *t, char *buf, size_t len)
{
    char sh[200];
    snprintf(buf, len, "%s%s", mrt_dtype_name(t->dtype), mrt_shape_describe(t->rank, t->shape, sh, sizeof sh));
    return buf;
}

mrt_value mrt_value_from_tensor(mrt_tensor t)
{
    mrt_value v;
    memset(&v, 0, sizeof v);
    v.kind = MRT_VALUE_TENSOR;
    v.tensor = t;
    return v;
}

void mrt_value_release(mrt_value *v)
{
    if (!v) return;
    if (v->kind == MRT_VALUE_TENSOR) mrt_tensor_release(&v->tensor);
    if (v->kind == MRT_VALUE_SEQUENCE) {
        for (int64_t i = 0; i < v->n_items; i++) mrt_tensor_release(&v->items[i]);
        free(v->items);
        v->items = NULL;
        v->n_items = 0;
    }
}

mrt_status mrt_value_copy(mrt_value *dst, const mrt_value *src)
{
    *dst = *src;
    dst->items = NULL;
    dst->n_items = 0;
    memset(&dst->tensor, 0, sizeof dst->tensor);
    if (src->kind == MRT_VALUE_TENSOR) return mrt_tensor_copy(&dst->tensor, &src->tensor);
    if (src->kind != MRT_VALUE_SEQUENCE) return MRT_STATUS_OK;
    dst->items = calloc((size_t)(src->n_items ? src->n_items : 1), sizeof(mrt_tensor));
    if (!dst->items) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory copying a sequence");
    for (int64_t i = 0; i < src->n_items; i++) {
        mrt_status st = mrt_tensor_copy(&dst->items[i], &src->items[i]);
        if (st) {
            mrt_value_release(dst);
            return st;
        }
        dst->n_items = i + 1;
    }
    dst->n_items = src->n_items;
    return MRT_STATUS_OK;
}
