/* The float32 fast paths of the pools (2-D MaxPool and AveragePool, GlobalAveragePool, GlobalMaxPool in ops_cpu/pool.c) and of
 * Add/Sub/Mul/Div (same shape, scalar, per-channel and last-dims broadcasts, either side; ops_cpu/
 * elementwise_binary.c): against the naive float64 references, NaN included, and bit-identical with 1 and 2
 * threads (planes and flat ranges split over the session's pool). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ref/linear_ref.h"

/* Runs c with 1 and 2 threads; asserts both succeed with identical bits; *y gets the 1-thread output. */
static void run_both(th_case *c, mrt_tensor *y, const char *label)
{
    mrt_session_options o1 = mrt_session_options_default(), o2 = mrt_session_options_default();
    o1.n_threads = 1;
    o2.n_threads = 2;
    mrt_tensor y2;
    cr_assert_eq(th_run_opt(c, &o1, 1, y), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    cr_assert_eq(th_run_opt(c, &o2, 1, &y2), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
    int64_t n = mrt_tensor_numel(y);
    cr_assert(n == mrt_tensor_numel(&y2) &&
                  (n == 0 || memcmp(y->data, y2.data, (size_t)n * sizeof(float)) == 0),
              "%s: 1 and 2 threads differ", label);
    mrt_tensor_release(&y2);
}

/* ------------------------------------------------------------------ pools */

typedef struct fpool {
    const char *op;
    int64_t n, c, h, w, kh, kw, sh, sw;
    int64_t pads[4];
    bool ceil_mode;
    int n_nan; /* NaNs put at random places */
    bool include_pad; /* AveragePool's count_include_pad */
} fpool;

static void run_fpool(th_rng *r, const fpool *fp, const char *label)
{
    bool global = strncmp(fp->op, "Global", 6) == 0, max = strstr(fp->op, "Max") != NULL;
    lr_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = 2;
    g.in[0] = fp->h;
    g.in[1] = fp->w;
    g.kernel[0] = global ? fp->h : fp->kh;
    g.kernel[1] = global ? fp->w : fp->kw;
    g.stride[0] = global ? 1 : fp->sh;
    g.stride[1] = global ? 1 : fp->sw;
    g.dilation[0] = g.dilation[1] = 1;
    if (!global) memcpy(g.pads, fp->pads, sizeof fp->pads);
    g.auto_pad = "NOTSET";
    g.ceil_mode = fp->ceil_mode;
    cr_assert(lr_geom_resolve(&g), "%s: invalid geometry", label);
    int64_t xs[4] = {fp->n, fp->c, fp->h, fp->w}, ys[4] = {fp->n, fp->c, g.out[0], g.out[1]};
    mrt_tensor x = th_rand(r, MRT_DTYPE_FLOAT, 4, xs, -2, 2);
    int64_t nx = th_numel(4, xs);
    for (int k = 0; k < fp->n_nan; k++) ((float *)x.data)[th_rng_int(r, 0, nx - 1)] = NAN;
    th_case *c = th_begin(fp->op, "", global ? 22 : 12);
    th_input(c, &x);
    if (!global) {
        th_attr_ints(c, "kernel_shape", 2, (int64_t[]){fp->kh, fp->kw});
        th_attr_ints(c, "strides", 2, (int64_t[]){fp->sh, fp->sw});
        th_attr_ints(c, "pads", 4, fp->pads);
        if (fp->ceil_mode) th_attr_int(c, "ceil_mode", 1);
        if (fp->include_pad) th_attr_int(c, "count_include_pad", 1);
    }
    mrt_tensor y;
    run_both(c, &y, label);
    int64_t ny = th_numel(4, ys);
    double *xd = th_to_f64(&x), *ed = th_alloc_f64(ny);
    lr_pool(&g, fp->n, fp->c, max ? 0 : 1, fp->include_pad, 1.0, xd, ed, NULL, false);
    if (max) { /* the reference's max skips NaN; the kernels propagate it (numpy/torch): pool a NaN indicator */
        double *nd = th_alloc_f64(nx), *hit = th_alloc_f64(ny);
        for (int64_t i = 0; i < nx; i++) nd[i] = isnan(xd[i]) ? 1.0 : 0.0;
        lr_pool(&g, fp->n, fp->c, 0, false, 1.0, nd, hit, NULL, false);
        for (int64_t i = 0; i < ny; i++)
            if (hit[i] > 0) ed[i] = NAN;
        free(nd);
        free(hit);
    }
    th_assert_close(&y, MRT_DTYPE_FLOAT, ed, 4, ys, label);
    free(xd);
    free(ed);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(fastpath, global_pools)
{
    th_rng r;
    th_rng_init(&r, th_seed("fastpath.global_pools"));
    static const int64_t sizes[][4] = {{1, 3, 1, 1}, {2, 5, 7, 7}, {1, 4, 3, 11}, {2, 3, 56, 56}, {1, 40, 14, 14},
                                       {1, 2, 1, 33}, {1, 1, 113, 97}};
    for (int op = 0; op < 2; op++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int nan = 0; nan <= 2; nan += 2) {
                fpool fp = {op ? "GlobalMaxPool" : "GlobalAveragePool", sizes[i][0], sizes[i][1], sizes[i][2],
                            sizes[i][3]};
                fp.n_nan = nan;
                char label[160];
                snprintf(label, sizeof label, "%s [%lld,%lld,%lld,%lld] %d NaN", fp.op, (long long)fp.n,
                         (long long)fp.c, (long long)fp.h, (long long)fp.w, nan);
                run_fpool(&r, &fp, label);
            }
}

/* An all-negative plane and an all -inf plane: the max is the largest value, never the -inf start. */
Test(fastpath, global_max_negative)
{
    th_rng r;
    th_rng_init(&r, th_seed("fastpath.global_max_negative"));
    int64_t xs[4] = {1, 2, 5, 9};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, xs, -3, -1);
    float *xf = x.data;
    for (int i = 45; i < 90; i++) xf[i] = -INFINITY;
    th_case *c = th_begin("GlobalMaxPool", "", 22);
    th_input(c, &x);
    mrt_tensor y;
    run_both(c, &y, "negative planes");
    float m = -INFINITY;
    for (int i = 0; i < 45; i++) m = xf[i] > m ? xf[i] : m;
    cr_assert_eq(((float *)y.data)[0], m);
    cr_assert(isinf(((float *)y.data)[1]) && ((float *)y.data)[1] < 0);
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

/* A random 2-D pool geometry: kernels 1-4, strides up to max_stride, pads below the kernel, widths up to
   max_extra past the kernel; MaxPool gets NaNs, AveragePool count_include_pad either way. The label says it all. */
static fpool random_fpool(th_rng *r, const char *op, int it, int64_t max_stride, int64_t max_extra, char *label,
                          size_t label_len)
{
    fpool fp = {op, th_rng_int(r, 1, 2), th_rng_int(r, 1, 3)};
    fp.kh = th_rng_int(r, 1, 4);
    fp.kw = th_rng_int(r, 1, 4);
    fp.sh = th_rng_int(r, 1, max_stride);
    fp.sw = th_rng_int(r, 1, max_stride);
    for (int k = 0; k < 4; k++) fp.pads[k] = th_rng_int(r, 0, (k % 2 ? fp.kw : fp.kh) - 1);
    fp.h = fp.kh + th_rng_int(r, 0, 12);
    fp.w = fp.kw + th_rng_int(r, 0, max_extra);
    fp.ceil_mode = th_rng_int(r, 0, 1);
    bool max = strcmp(op, "MaxPool") == 0;
    fp.n_nan = max ? (int)th_rng_int(r, 0, 2) : 0;
    fp.include_pad = !max && th_rng_int(r, 0, 1);
    snprintf(label, label_len,
             "%s %d: [%lld,%lld,%lld,%lld] k %lldx%lld s %lldx%lld pads %lld,%lld,%lld,%lld ceil %d NaN %d incl %d", op,
             it, (long long)fp.n, (long long)fp.c, (long long)fp.h, (long long)fp.w, (long long)fp.kh, (long long)fp.kw,
             (long long)fp.sh, (long long)fp.sw, (long long)fp.pads[0], (long long)fp.pads[1], (long long)fp.pads[2],
             (long long)fp.pads[3], fp.ceil_mode, fp.n_nan, fp.include_pad);
    return fp;
}

/* The fixed cases, then n_random random ones (random_fpool) */
static void run_pool_cases(th_rng *r, const char *op, const fpool *fixed, size_t n_fixed, int n_random,
                           int64_t max_stride, int64_t max_extra)
{
    for (size_t i = 0; i < n_fixed; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s fixed %zu", op, i);
        run_fpool(r, &fixed[i], label);
    }
    for (int it = 0; it < n_random; it++) {
        char label[200];
        fpool fp = random_fpool(r, op, it, max_stride, max_extra, label, sizeof label);
        run_fpool(r, &fp, label);
    }
}

Test(fastpath, maxpool2d)
{
    th_rng r;
    th_rng_init(&r, th_seed("fastpath.maxpool2d"));
    /* fixed: ResNet's 3x3/2 pad 1, the stride-1 / stride-3 loops, and small same-size planes */
    static const fpool fixed[] = {
        {"MaxPool", 1, 4, 112, 112, 3, 3, 2, 2, {1, 1, 1, 1}, false, 0},
        {"MaxPool", 2, 3, 9, 10, 3, 2, 1, 1, {1, 0, 2, 1}, false, 3},
        {"MaxPool", 1, 2, 17, 16, 3, 3, 3, 3, {0, 2, 2, 0}, true, 2},
        {"MaxPool", 1, 2, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false, 0},
        {"MaxPool", 1, 1, 4, 5000, 2, 2, 1, 1, {0, 0, 0, 0}, false, 1}, /* rows past the buffer: generic path */
        /* stride 1, output the input's size, at most 1024 positions: the plane as one flat array (mp_flat_ok),
           with symmetric and one-sided pads, one row, and the largest plane it takes */
        {"MaxPool", 2, 3, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}, false, 2},
        {"MaxPool", 1, 5, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}, false, 3},
        {"MaxPool", 1, 2, 9, 10, 2, 2, 1, 1, {0, 1, 1, 0}, false, 1},
        {"MaxPool", 1, 3, 6, 13, 5, 5, 1, 1, {2, 2, 2, 2}, false, 1},
        {"MaxPool", 1, 2, 1, 40, 1, 3, 1, 1, {0, 1, 0, 1}, false, 1},
        {"MaxPool", 1, 2, 32, 32, 3, 3, 1, 1, {1, 1, 1, 1}, true, 2},
        /* output rows of more than 16: the two passes through a row buffer (mp_rows_range), strides 1 and 2,
           kernels up to 9 wide, ceil mode, one-sided pads */
        {"MaxPool", 1, 3, 37, 61, 3, 3, 2, 2, {0, 1, 1, 0}, true, 3},
        {"MaxPool", 1, 2, 40, 45, 3, 3, 1, 1, {1, 1, 1, 1}, false, 2},
        {"MaxPool", 1, 2, 34, 50, 2, 2, 2, 2, {0, 0, 0, 0}, false, 1},
        {"MaxPool", 1, 2, 20, 30, 9, 9, 1, 1, {4, 4, 4, 4}, false, 2},
        {"MaxPool", 2, 2, 9, 33, 5, 2, 1, 1, {2, 1, 2, 0}, true, 2},
        /* at least 1024 output positions on 2 threads: bands of output rows (MP_BAND_MIN_OHW), odd row counts, ceil
           mode (SqueezeNet's 3x3/2 on 111x111), two images, the 2x2/2 kernel */
        {"MaxPool", 1, 3, 111, 111, 3, 3, 2, 2, {0, 0, 0, 0}, true, 3},
        {"MaxPool", 2, 2, 67, 65, 3, 3, 1, 1, {1, 1, 1, 1}, false, 2},
        {"MaxPool", 1, 2, 90, 70, 2, 2, 2, 2, {0, 0, 0, 0}, false, 1},
    };
    run_pool_cases(&r, "MaxPool", fixed, sizeof fixed / sizeof fixed[0], 120, 3, 12);
}

/* 2-D AveragePool: rows of eight outputs whose windows lie inside the row (stride 1) go by vector, the rest one by
   one; both with and without count_include_pad, against the float64 reference and the same bits on 1 and 2
   threads */
Test(fastpath, avgpool2d)
{
    th_rng r;
    th_rng_init(&r, th_seed("fastpath.avgpool2d"));
    static const fpool fixed[] = {
        {"AveragePool", 1, 6, 37, 37, 3, 3, 1, 1, {0, 0, 0, 0}, false, 0, false}, /* Inception's, after its Pad */
        {"AveragePool", 1, 4, 35, 35, 3, 3, 1, 1, {1, 1, 1, 1}, false, 0, true},
        {"AveragePool", 1, 4, 35, 35, 3, 3, 1, 1, {1, 1, 1, 1}, false, 0, false},
        {"AveragePool", 2, 3, 20, 41, 2, 5, 2, 1, {0, 2, 1, 3}, true, 2, true},
        {"AveragePool", 1, 2, 16, 16, 2, 2, 2, 2, {0, 0, 0, 0}, false, 0, false}, /* ResNet-D shortcut: stride 2 */
        {"AveragePool", 1, 1, 3, 9, 4, 4, 1, 1, {3, 3, 3, 3}, false, 0, true}, /* rows with no valid taps */
        /* stride 1, output the input's size, at most 2048 positions: the plane as one flat array (ap_flat_ok) */
        {"AveragePool", 1, 5, 17, 17, 3, 3, 1, 1, {1, 1, 1, 1}, false, 0, true},
        {"AveragePool", 2, 3, 8, 8, 3, 3, 1, 1, {1, 1, 1, 1}, false, 0, false},
        {"AveragePool", 1, 3, 10, 12, 5, 5, 1, 1, {2, 2, 2, 2}, false, 0, true},
        {"AveragePool", 1, 3, 9, 10, 2, 2, 1, 1, {0, 1, 1, 0}, false, 0, false},
        {"AveragePool", 1, 2, 1, 40, 1, 3, 1, 1, {0, 1, 0, 1}, false, 0, true},
        {"AveragePool", 1, 2, 45, 45, 3, 3, 1, 1, {1, 1, 1, 1}, false, 0, false},
    };
    run_pool_cases(&r, "AveragePool", fixed, sizeof fixed / sizeof fixed[0], 80, 2, 30);
}

/* ------------------------------------------------------------------ Add, Sub, Mul, Div */

/* Exact: a float op rounds once, so the float64 result rounded to float is the same number. */
static double apply(int op, double a, double b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
    }
}

static void run_binary_case(th_rng *r, int op, int ra, const int64_t *as, int rb, const int64_t *bs, const char *what)
{
    static const char *const names[] = {"Add", "Sub", "Mul", "Div"};
    char label[160];
    snprintf(label, sizeof label, "%s %s", names[op], what);
    mrt_tensor a = th_rand(r, MRT_DTYPE_FLOAT, ra, as, -3, 3), b = th_rand(r, MRT_DTYPE_FLOAT, rb, bs, -3, 3);
    int64_t na = th_numel(ra, as), nb = th_numel(rb, bs);
    float *af = a.data, *bf = b.data;
    /* specials: NaN, infinities, zeros (x/0) */
    if (na > 3) {
        af[0] = NAN;
        af[1] = INFINITY;
        af[2] = 0.0f;
    }
    if (nb > 2) {
        bf[nb - 1] = -INFINITY;
        bf[nb / 2] = 0.0f;
    }
    th_case *c = th_begin(names[op], "", 14);
    th_input(c, &a);
    th_input(c, &b);
    mrt_tensor y;
    run_both(c, &y, label);
    /* reference: numpy broadcasting spelled out */
    int rank = ra > rb ? ra : rb;
    int64_t ys[8], n = 1;
    for (int d = 0; d < rank; d++) {
        int64_t da = d - (rank - ra) >= 0 ? as[d - (rank - ra)] : 1, db = d - (rank - rb) >= 0 ? bs[d - (rank - rb)] : 1;
        ys[d] = da == 1 ? db : da;
        n *= ys[d];
    }
    cr_assert_eq(mrt_tensor_numel(&y), n, "%s: output size", label);
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int d = rank - 1; d >= 0; d--) {
            int64_t k = rem % ys[d];
            rem /= ys[d];
            int64_t da = d - (rank - ra) >= 0 ? as[d - (rank - ra)] : 1, db = d - (rank - rb) >= 0 ? bs[d - (rank - rb)] : 1;
            ia += (da == 1 ? 0 : k) * sa;
            ib += (db == 1 ? 0 : k) * sb;
            sa *= da;
            sb *= db;
        }
        float want = (float)apply(op, af[ia], bf[ib]), got = ((float *)y.data)[i];
        if (isnan(want)) cr_assert(isnan(got), "%s: element %lld: got %g, want NaN", label, (long long)i, got);
        else
            cr_assert(memcmp(&want, &got, sizeof want) == 0, "%s: element %lld: got %a, want %a", label,
                      (long long)i, got, want);
    }
    mrt_tensor_release(&y);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
    th_free(c);
}

Test(fastpath, binary_broadcasts)
{
    th_rng r;
    th_rng_init(&r, th_seed("fastpath.binary_broadcasts"));
    int64_t big[4] = {2, 24, 33, 35}, chan[4] = {1, 24, 1, 1}, chan3[3] = {24, 1, 1}, last[1] = {35};
    int64_t rowv[2] = {33, 35}, one[1] = {1}, mid[4] = {2, 1, 33, 1}, small[3] = {3, 1, 5}, small2[2] = {4, 1};
    for (int op = 0; op < 4; op++) {
        run_binary_case(&r, op, 4, big, 4, big, "same shape");
        run_binary_case(&r, op, 4, big, 0, one, "scalar second");
        run_binary_case(&r, op, 0, one, 4, big, "scalar first");
        run_binary_case(&r, op, 1, one, 4, big, "[1] first");
        run_binary_case(&r, op, 4, big, 4, chan, "per channel [1,C,1,1] second");
        run_binary_case(&r, op, 4, chan, 4, big, "per channel [1,C,1,1] first");
        run_binary_case(&r, op, 4, big, 3, chan3, "per channel [C,1,1]");
        run_binary_case(&r, op, 4, big, 1, last, "last dim");
        run_binary_case(&r, op, 2, rowv, 4, big, "last two dims first");
        run_binary_case(&r, op, 4, big, 4, mid, "two blocks (generic path)");
        run_binary_case(&r, op, 3, small, 2, small2, "both broadcast (generic path)");
        run_binary_case(&r, op, 1, (int64_t[]){7}, 1, (int64_t[]){7}, "tiny same shape");
        run_binary_case(&r, op, 1, (int64_t[]){0}, 1, (int64_t[]){1}, "empty");
    }
}
