/* Plan memory (see plan_mem.h). */
#define _DEFAULT_SOURCE /* madvise */
#include "engine/plan_mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { FIRST_BLOCK = 64 << 10, MAX_BLOCK = 8 << 20, HUGE_PAGE = 2 << 20, ALIGN = 64 };

struct mrt_plan_block {
    mrt_plan_block *next;
    char *data;
    size_t size, used;
    bool huge;
    size_t trimmed;   /* huge: the tail past this offset was given back (see mrt_plan_mem_trim) */
};

static size_t round_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

void mrt_plan_mem_trim(mrt_plan_mem *m)
{
    for (mrt_plan_block *b = m->blocks; b; b = b->next) {
        if (!b->huge || b->trimmed == b->used) continue;
        /* a huge page is faulted in whole: past the bytes handed out, the rest of the last one was never asked for
           (a model's worth of blocks would hold up to 2 MiB each of it: Swin-T 16 MB) */
        size_t from = round_up(b->used, 4096), to = round_up(b->used, HUGE_PAGE);
        if (to > b->size) to = b->size;
#ifdef MADV_DONTNEED
        if (to > from) (void)madvise(b->data + from, to - from, MADV_DONTNEED);
#endif
        b->trimmed = b->used;
    }
}

void *mrt_plan_mem_alloc(mrt_plan_mem *m, size_t bytes)
{
    if (bytes > SIZE_MAX - HUGE_PAGE) return NULL;
    mrt_plan_mem_trim(m); /* the previous request is written by now */
    bytes = round_up(bytes ? bytes : 1, ALIGN);
    mrt_plan_block *b = m->blocks;
    while (b && b->size - b->used < bytes) b = b->next; /* the first block with room (a plan has a few) */
    if (!b) {
        /* a new block: the next size in the doubling, or the request's own size when it is larger */
        size_t size = m->next_size ? m->next_size : FIRST_BLOCK;
        if (size < bytes) size = bytes;
        bool huge = size >= HUGE_PAGE;
        if (huge) size = round_up(size, HUGE_PAGE);
        b = malloc(sizeof *b);
        char *data = b ? aligned_alloc(huge ? HUGE_PAGE : ALIGN, size) : NULL;
        if (!data) {
            free(b);
            return NULL;
        }
#ifdef MADV_HUGEPAGE
        /* before the first touch, so the pages are huge from the start; only advice: failure changes nothing */
        if (huge) (void)madvise(data, size, MADV_HUGEPAGE);
#endif
        *b = (mrt_plan_block){m->blocks, data, size, 0, huge, 0};
        m->blocks = b;
        m->next_size = size < MAX_BLOCK / 2 ? size * 2 : MAX_BLOCK;
    }
    void *p = b->data + b->used;
    b->used += bytes;
    m->used += bytes;
    return p;
}

void mrt_plan_mem_free(mrt_plan_mem *m)
{
    for (mrt_plan_block *b = m->blocks, *next; b; b = next) {
        next = b->next;
        free(b->data);
        free(b);
    }
    m->blocks = NULL;
    m->next_size = 0;
    m->used = 0;
}
