/* Liveness-based arena planner (see memplan.h). */
#include "engine/memplan.h"

#include <stdlib.h>
#include <string.h>

#include "engine/status.h"

typedef struct block {
    size_t off, size;
} block;

typedef struct free_list {
    block *b;
    int n, cap;
} free_list;

static size_t align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

/* Insert keeping offset order, merging with neighbours. */
static mrt_status fl_release(free_list *fl, size_t off, size_t size)
{
    int i = 0;
    while (i < fl->n && fl->b[i].off < off) i++;
    bool merge_prev = i > 0 && fl->b[i - 1].off + fl->b[i - 1].size == off;
    bool merge_next = i < fl->n && off + size == fl->b[i].off;
    if (merge_prev && merge_next) {
        fl->b[i - 1].size += size + fl->b[i].size;
        memmove(&fl->b[i], &fl->b[i + 1], (size_t)(fl->n - i - 1) * sizeof(block));
        fl->n--;
    } else if (merge_prev) {
        fl->b[i - 1].size += size;
    } else if (merge_next) {
        fl->b[i].off = off;
        fl->b[i].size += size;
    } else {
        if (fl->n == fl->cap) {
            int nc = fl->cap ? fl->cap * 2 : 16;
            block *nb = realloc(fl->b, (size_t)nc * sizeof(block));
            if (!nb) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory planner)");
            fl->b = nb;
            fl->cap = nc;
        }
        memmove(&fl->b[i + 1], &fl->b[i], (size_t)(fl->n - i) * sizeof(block));
        fl->b[i] = (block){off, size};
        fl->n++;
    }
    return MRT_STATUS_OK;
}

static size_t fl_take(free_list *fl, size_t size, size_t *top)
{
    int best = -1;
    for (int i = 0; i < fl->n; i++)
        if (fl->b[i].size >= size && (best < 0 || fl->b[i].size < fl->b[best].size)) best = i;
    if (best >= 0) {
        size_t off = fl->b[best].off;
        fl->b[best].off += size;
        fl->b[best].size -= size;
        if (fl->b[best].size == 0) {
            memmove(&fl->b[best], &fl->b[best + 1], (size_t)(fl->n - best - 1) * sizeof(block));
            fl->n--;
        }
        return off;
    }
    /* nothing fits: extend the free block that ends at the top, if any, else grow */
    if (fl->n > 0 && fl->b[fl->n - 1].off + fl->b[fl->n - 1].size == *top) {
        size_t off = fl->b[fl->n - 1].off;
        fl->n--;
        *top = off + size;
        return off;
    }
    size_t off = *top;
    *top += size;
    return off;
}

static int cmp_first(const void *a, const void *b, const mrt_memplan_value *vals)
{
    const int x = *(const int *)a, y = *(const int *)b;
    if (vals[x].first_use != vals[y].first_use) return vals[x].first_use < vals[y].first_use ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* qsort has no context argument in C11: sort index arrays with a small insertion/merge sort instead. */
static void sort_by(int *idx, int n, const mrt_memplan_value *vals, bool by_last)
{
    int *tmp = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!tmp) { /* fall back to insertion sort: slower, no allocation */
        for (int i = 1; i < n; i++) {
            int v = idx[i], j = i - 1;
            while (j >= 0 && (by_last ? vals[idx[j]].last_use > vals[v].last_use : cmp_first(&idx[j], &v, vals) > 0)) {
                idx[j + 1] = idx[j];
                j--;
            }
            idx[j + 1] = v;
        }
        return;
    }
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                bool take_b = by_last ? vals[idx[b]].last_use < vals[idx[a]].last_use : cmp_first(&idx[b], &idx[a], vals) < 0;
                tmp[k++] = take_b ? idx[b++] : idx[a++];
            }
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof(int));
    }
    free(tmp);
}

/* Second strategy: place values largest first, each at the best-fitting gap left between the already placed
   values whose lifetimes overlap its own (or above them all). Returns the peak; offsets into `off`. */
static mrt_status greedy_by_size(int n_values, const mrt_memplan_value *vals, size_t alignment, size_t *off,
                                 size_t *peak_out)
{
    int *order = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof(int));
    int *placed = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof(int)); /* kept sorted by offset */
    if (!order || !placed) {
        free(order);
        free(placed);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory planner)");
    }
    int n = 0, n_placed = 0;
    for (int i = 0; i < n_values; i++)
        if (vals[i].size) order[n++] = i;
    /* insertion sort by size, descending (stable: earlier values first) */
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && vals[order[j]].size < vals[v].size) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    size_t peak = 0;
    for (int k = 0; k < n; k++) {
        int v = order[k];
        size_t need = align_up(vals[v].size, alignment), prev_end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
        for (int j = 0; j < n_placed; j++) {
            int u = placed[j];
            if (vals[u].first_use > vals[v].last_use || vals[v].first_use > vals[u].last_use) continue;
            if (off[u] > prev_end && off[u] - prev_end >= need && off[u] - prev_end < best_gap) {
                best = prev_end;
                best_gap = off[u] - prev_end;
            }
            size_t end = off[u] + align_up(vals[u].size, alignment);
            if (end > prev_end) prev_end = end;
        }
        off[v] = best != SIZE_MAX ? best : prev_end;
        if (off[v] + need > peak) peak = off[v] + need;
        int pos = n_placed;
        while (pos > 0 && off[placed[pos - 1]] > off[v]) {
            placed[pos] = placed[pos - 1];
            pos--;
        }
        placed[pos] = v;
        n_placed++;
    }
    free(order);
    free(placed);
    *peak_out = peak;
    return MRT_STATUS_OK;
}

static mrt_status best_fit_in_order(int n_values, const mrt_memplan_value *vals, size_t alignment,
                                    mrt_memplan_result *res);

/* The greedy pass honours in-place reuse by merging each granted chain (u, then v over u's block, ...) into one
   interval placed as a unit: a value v takes over u when u dies at the step that makes v, u is not taken yet,
   and v fits in u's aligned size. Returns the number of takeovers; root[i] is i's chain head. */
static int merge_inplace_chains(int n_values, const mrt_memplan_value *vals, size_t alignment, int *root,
                                mrt_memplan_value *merged)
{
    int *by_first = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof(int));
    unsigned char *taken = calloc((size_t)(n_values > 0 ? n_values : 1), 1);
    int n = 0, count = 0;
    for (int i = 0; i < n_values; i++) {
        root[i] = i;
        merged[i] = vals[i];
        merged[i].inplace_of = -1;
        if (vals[i].size && by_first) by_first[n++] = i;
    }
    if (!by_first || !taken) {
        free(by_first);
        free(taken);
        return 0; /* no merging: still a valid (if larger) plan */
    }
    sort_by(by_first, n, vals, false);
    for (int k = 0; k < n; k++) {
        int v = by_first[k], u = vals[v].inplace_of;
        if (u < 0 || u >= n_values || !vals[u].size || taken[u] || vals[u].last_use != vals[v].first_use ||
            vals[u].first_use >= vals[v].first_use || align_up(vals[v].size, alignment) > align_up(vals[u].size, alignment))
            continue;
        taken[u] = 1;
        int r = root[u];
        root[v] = r;
        if (vals[v].last_use > merged[r].last_use) merged[r].last_use = vals[v].last_use;
        merged[v].size = 0; /* placed with its chain head */
        count++;
    }
    free(by_first);
    free(taken);
    return count;
}

mrt_status mrt_memplan(int n_values, const mrt_memplan_value *vals, size_t alignment, mrt_memplan_result *res)
{
    if (alignment == 0 || (alignment & (alignment - 1)))
        return mrt_fail(MRT_STATUS_INVALID_ARG, "memory planner: alignment %zu is not a power of two", alignment);
    if (n_values < 0) return mrt_fail(MRT_STATUS_INVALID_ARG, "memory planner: %d values", n_values);
    MRT_TRY(best_fit_in_order(n_values, vals, alignment, res));
    size_t cnt = (size_t)(n_values > 0 ? n_values : 1), *off = malloc(cnt * sizeof *off), peak = 0;
    int *root = malloc(cnt * sizeof *root);
    mrt_memplan_value *merged = malloc(cnt * sizeof *merged);
    mrt_status st = MRT_STATUS_OK;
    if (!off || !root || !merged) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory planner)");
        goto done;
    }
    for (int i = 0; i < n_values; i++) off[i] = 0;
    int inplace = merge_inplace_chains(n_values, vals, alignment, root, merged);
    st = greedy_by_size(n_values, merged, alignment, off, &peak);
    if (!st && peak < res->peak) {
        for (int i = 0; i < n_values; i++) res->offsets[i] = vals[i].size ? off[root[i]] : 0;
        res->peak = peak;
        res->inplace_count = inplace;
    }
done:
    free(off);
    free(root);
    free(merged);
    return st;
}

/* First strategy: walk the steps in order, best fit over the offset-sorted free list. */
static mrt_status best_fit_in_order(int n_values, const mrt_memplan_value *vals, size_t alignment,
                                    mrt_memplan_result *res)
{
    if (alignment == 0 || (alignment & (alignment - 1)))
        return mrt_fail(MRT_STATUS_INVALID_ARG, "memory planner: alignment %zu is not a power of two", alignment);
    res->peak = 0;
    res->inplace_count = 0;
    int n = 0;
    int *by_first = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof(int));
    int *by_last = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof(int));
    size_t *block_size = calloc((size_t)(n_values > 0 ? n_values : 1), sizeof(size_t));
    unsigned char *taken_over = calloc((size_t)(n_values > 0 ? n_values : 1), 1);
    free_list fl = {0};
    mrt_status st = MRT_STATUS_OK;
    if (!by_first || !by_last || !block_size || !taken_over) {
        st = mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (memory planner)");
        goto done;
    }
    for (int i = 0; i < n_values; i++) {
        res->offsets[i] = 0;
        if (vals[i].size == 0) continue;
        if (vals[i].last_use < vals[i].first_use) {
            st = mrt_fail(MRT_STATUS_INVALID_ARG, "memory planner: value %d dies (step %d) before it is made (step %d)", i,
                          vals[i].last_use, vals[i].first_use);
            goto done;
        }
        by_first[n] = i;
        by_last[n++] = i;
    }
    sort_by(by_first, n, vals, false);
    sort_by(by_last, n, vals, true);
    size_t top = 0;
    int fi = 0, li = 0;
    while (fi < n || li < n) {
        int step = fi < n ? vals[by_first[fi]].first_use : vals[by_last[li]].last_use;
        if (li < n && vals[by_last[li]].last_use < step) step = vals[by_last[li]].last_use;
        /* allocate what this step produces (its inputs are still alive) */
        for (; fi < n && vals[by_first[fi]].first_use == step; fi++) {
            int v = by_first[fi];
            size_t need = align_up(vals[v].size, alignment);
            int u = vals[v].inplace_of;
            if (u >= 0 && u < n_values && vals[u].size && !taken_over[u] && vals[u].last_use == step &&
                vals[u].first_use < step && block_size[u] >= need) {
                res->offsets[v] = res->offsets[u];
                block_size[v] = block_size[u];
                taken_over[u] = 1;
                res->inplace_count++;
                continue;
            }
            res->offsets[v] = fl_take(&fl, need, &top);
            block_size[v] = need;
            if (top > res->peak) res->peak = top;
        }
        /* release what dies here */
        for (; li < n && vals[by_last[li]].last_use == step; li++) {
            int v = by_last[li];
            if (taken_over[v]) continue;
            st = fl_release(&fl, res->offsets[v], block_size[v]);
            if (st) goto done;
        }
    }
done:
    free(by_first);
    free(by_last);
    free(block_size);
    free(taken_over);
    free(fl.b);
    return st;
}

size_t mrt_memplan_lower_bound(int n_values, const mrt_memplan_value *vals, size_t alignment)
{
    int max_step = -1;
    for (int i = 0; i < n_values; i++)
        if (vals[i].size && vals[i].last_use > max_step) max_step = vals[i].last_use;
    if (max_step < 0) return 0;
    /* difference array over steps */
    long long *delta = calloc((size_t)max_step + 2, sizeof(long long));
    if (!delta) return 0;
    for (int i = 0; i < n_values; i++) {
        if (!vals[i].size) continue;
        long long sz = (long long)align_up(vals[i].size, alignment);
        delta[vals[i].first_use] += sz;
        delta[vals[i].last_use + 1] -= sz;
    }
    long long cur = 0, best = 0;
    for (int s = 0; s <= max_step; s++) {
        cur += delta[s];
        if (cur > best) best = cur;
    }
    free(delta);
    return (size_t)best;
}
