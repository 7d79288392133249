/* The model's mappings and the holds on its weights (see weights.h). */
#define _GNU_SOURCE
#include "engine/weights.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/status.h"

/* Holds are taken at plan time only (binding initializers), so one lock for every model costs nothing. */
static pthread_mutex_t weights_mu = PTHREAD_MUTEX_INITIALIZER;

mrt_status mrt_mapping_open(const char *path, mrt_mapping **list, const uint8_t **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    char *real = realpath(path, NULL);
    if (!real) return mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    for (mrt_mapping *m = *list; m; m = m->next)
        if (strcmp(m->path, real) == 0) {
            free(real);
            *bytes = m->addr;
            *len = m->len;
            return MRT_STATUS_OK;
        }
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        mrt_status st = mrt_fail(MRT_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
        free(real);
        return st;
    }
    struct stat sb;
    mrt_status st = MRT_STATUS_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        st = mrt_fail(MRT_STATUS_IO_ERROR, "'%s' is not a regular file", path);
    else if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX / 2)
        st = mrt_fail(MRT_STATUS_IO_ERROR, "'%s' is too large (%lld bytes)", path, (long long)sb.st_size);
    void *addr = NULL;
    size_t n = st ? 0 : (size_t)sb.st_size;
    if (!st && n) {
        addr = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr == MAP_FAILED) {
            addr = NULL;
            st = mrt_fail(MRT_STATUS_IO_ERROR, "cannot map '%s' (%zu bytes): %s", path, n, strerror(errno));
        }
    }
    close(fd);
    mrt_mapping *m = st ? NULL : calloc(1, sizeof *m);
    if (!st && !m) st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (mapping '%s')", path);
    if (st) {
        if (addr) munmap(addr, n);
        free(real);
        return st;
    }
    m->addr = addr;
    m->len = n;
    m->path = real;
    m->next = *list;
    *list = m;
    *bytes = addr;
    *len = n;
    return MRT_STATUS_OK;
}

void mrt_mappings_free(mrt_mapping *list)
{
    while (list) {
        mrt_mapping *next = list->next;
        if (list->addr) munmap(list->addr, list->len);
        free(list->path);
        free(list);
        list = next;
    }
}

void mrt_mapping_drop_pages(const void *p, size_t n)
{
    static size_t page;
    if (!page) {
        long ps = sysconf(_SC_PAGESIZE);
        page = ps > 0 ? (size_t)ps : 4096;
    }
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1), b = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED); /* advice: a failure leaves the pages resident, no more */
}

static bool host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

size_t mrt_weight_align(mrt_dtype dt)
{
    int bits = mrt_dtype_bits(dt);
    if (dt == MRT_DTYPE_COMPLEX64) bits = 64;
    if (dt == MRT_DTYPE_COMPLEX128) bits = 128;
    size_t a = bits >= 8 ? (size_t)bits / 8 : 1;
    return a > 16 ? 16 : a;
}

bool mrt_weight_in_place_ok(mrt_dtype dt)
{
    if (dt == MRT_DTYPE_BOOL || dt == MRT_DTYPE_STRING) return false;
    return host_is_le() || mrt_dtype_bits(dt) <= 8;
}

/* Copies of COPY_MMAP_MIN bytes and more get pages of their own, so that letting one go returns its memory: from
   the heap, glibc would keep a freed block (its mmap threshold rises as large blocks are freed) and a model's
   released weights would stay resident. */
enum { COPY_MMAP_MIN = 64 << 10 };

void mrt_weight_copy_free(void *p, size_t nbytes)
{
    if (!p) return;
    if (nbytes >= COPY_MMAP_MIN) munmap(p, nbytes);
    else free(p);
}

void *mrt_weight_copy(mrt_dtype dt, const uint8_t *bytes, size_t nbytes)
{
    size_t al = 64, rounded = (nbytes + al - 1) / al * al;
    uint8_t *d;
    if (nbytes >= COPY_MMAP_MIN) {
        d = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (d == MAP_FAILED) return NULL;
    } else {
        d = aligned_alloc(al, rounded ? rounded : al);
        if (!d) return NULL;
    }
    /* chunk by chunk, the source's whole pages leaving the resident set as they are copied: copying a 9 MB tensor
       held it twice (ResNet-18's and ConvNeXt-T's load peaked one largest tensor above the model) */
    enum { CHUNK = 1 << 20 };
    for (size_t done = 0; done < nbytes;) {
        size_t n = nbytes - done < CHUNK ? nbytes - done : CHUNK;
        memcpy(d + done, bytes + done, n);
        done += n;
        mrt_mapping_drop_pages(bytes, done); /* pages dropped already cost a page-table walk, no more */
    }
    size_t unit = dt == MRT_DTYPE_COMPLEX64 ? 4 : dt == MRT_DTYPE_COMPLEX128 ? 8 : (size_t)(mrt_dtype_bits(dt) / 8);
    if (!host_is_le() && unit > 1)
        for (size_t i = 0; i + unit <= nbytes; i += unit)
            for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
                uint8_t t = d[i + a];
                d[i + a] = d[i + b];
                d[i + b] = t;
            }
    if (dt == MRT_DTYPE_BOOL)
        for (size_t i = 0; i < nbytes; i++) d[i] = d[i] != 0;
    return d;
}

mrt_status mrt_weight_hold(const mrt_graph_value *gv)
{
    mrt_weight_src *w = gv->weight;
    if (!w || !gv->initializer) return MRT_STATUS_OK;
    mrt_status st = MRT_STATUS_OK;
    pthread_mutex_lock(&weights_mu);
    if (w->dropped && w->storage == MRT_WEIGHT_COPIED) {
        void *d = mrt_weight_copy(gv->initializer->dtype, w->bytes, w->nbytes);
        if (d) gv->initializer->data = d;
        else st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory copying initializer '%s' (%zu bytes) again",
                           gv->name, w->nbytes);
    }
    if (!st) {
        w->dropped = false;
        w->holds++;
    }
    pthread_mutex_unlock(&weights_mu);
    return st;
}

size_t mrt_weight_release(const mrt_graph_value *gv, bool drop)
{
    mrt_weight_src *w = gv->weight;
    if (!w || !gv->initializer) return 0;
    size_t dropped = 0;
    pthread_mutex_lock(&weights_mu);
    if (w->holds > 0) w->holds--;
    if (drop && w->holds == 0 && !w->dropped) {
        if (w->storage == MRT_WEIGHT_COPIED) {
            mrt_weight_copy_free(gv->initializer->data, w->nbytes);
            gv->initializer->data = NULL;
        } else {
            mrt_mapping_drop_pages(w->bytes, w->nbytes);
        }
        w->dropped = true;
        dropped = w->nbytes;
    }
    pthread_mutex_unlock(&weights_mu);
    return dropped;
}

static void account_graph(const mrt_graph *g, int depth, mrt_weight_account *a)
{
    if (!g || depth > 64) return; /* loaded models nest at most MRT_MAX_GRAPH_DEPTH (loader/proto_depth.h) */
    for (int i = 0; i < g->n_values; i++) {
        const mrt_graph_value *v = &g->values[i];
        if (!v->initializer) continue;
        const mrt_weight_src *w = v->weight;
        if (!w) a->copied_bytes += v->initializer->dtype == MRT_DTYPE_STRING ? 0 : mrt_tensor_nbytes(v->initializer);
        else if (w->dropped) a->dropped_bytes += w->nbytes;
        else if (w->storage == MRT_WEIGHT_MAPPED) a->mapped_bytes += w->nbytes;
        else a->copied_bytes += w->nbytes;
    }
    for (int n = 0; n < g->n_nodes; n++)
        for (int k = 0; k < g->nodes[n].n_attrs; k++) {
            const mrt_attr *at = &g->nodes[n].attrs[k];
            if (at->type == MRT_ATTR_GRAPH) account_graph(at->g, depth + 1, a);
            for (int64_t j = 0; at->type == MRT_ATTR_GRAPHS && j < at->n; j++) account_graph(at->graphs[j], depth + 1, a);
        }
}

void mrt_weights_account(const mrt_model *m, mrt_weight_account *out)
{
    memset(out, 0, sizeof *out);
    if (!m) return;
    pthread_mutex_lock(&weights_mu);
    account_graph(m->graph, 0, out);
    pthread_mutex_unlock(&weights_mu);
}
