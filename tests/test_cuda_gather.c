/* The CUDA gather family (ops_cuda/gather.cu: Gather, GatherElements, GatherND, Scatter/ScatterElements/ScatterND,
 * Compress, OneHot, NonZero, TensorScatter) against the CPU kernels (tests/harness.h th_cuda_check), exact: negative
 * and int32 indices, empty tensors, batch dims, every reduction with repeated indices (the CPU's order, bit for bit),
 * run-time conditions and depths, float and packed OneHot indices, NaN in NonZero, circular TensorScatter writes, and
 * out-of-range indices failing the node with the CPU's message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

/* Indices in [-dim, dim) as dt (int32 or int64). */
static mrt_tensor rand_indices(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, int64_t dim)
{
    return th_rand(r, dt, rank, shape, (double)-dim, (double)(dim - 1));
}

static const mrt_dtype dtypes[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT32};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

Test(cuda_gather, gather_every_axis)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("gather"));
    int64_t xs[3] = {4, 5, 6};
    static const struct { int rank; int64_t shape[2]; } idx_shapes[] = {{0, {0}}, {1, {7}}, {2, {2, 3}}, {1, {0}}};
    for (size_t d = 0; d < N_DTYPES; d++)
        for (int axis = -1; axis < 3; axis++)
            for (size_t k = 0; k < sizeof idx_shapes / sizeof idx_shapes[0]; k++) {
                mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, -50, 50);
                int a = axis < 0 ? axis + 3 : axis;
                mrt_tensor idx = rand_indices(&r, k % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, idx_shapes[k].rank,
                                              idx_shapes[k].shape, xs[a]);
                th_case *c = th_begin("Gather", "", 13);
                th_input(c, &x);
                th_input(c, &idx);
                th_attr_int(c, "axis", axis);
                char label[96];
                snprintf(label, sizeof label, "Gather %s axis %d indices %zu", mrt_dtype_name(dtypes[d]), axis, k);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&x);
                mrt_tensor_release(&idx);
            }
}

Test(cuda_gather, gather_elements_and_nd)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("gather_elements"));
    int64_t xs[3] = {4, 5, 6}, is[3] = {3, 5, 2};
    for (size_t d = 0; d < N_DTYPES; d++) {
        char label[96];
        for (int axis = 0; axis < 3; axis++) {
            int64_t ish[3] = {is[0], is[1], is[2]};
            ish[axis] = 7; /* longer than data's axis: indices repeat */
            mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, -50, 50);
            mrt_tensor idx = rand_indices(&r, MRT_DTYPE_INT64, 3, ish, xs[axis]);
            th_case *c = th_begin("GatherElements", "", 13);
            th_input(c, &x);
            th_input(c, &idx);
            th_attr_int(c, "axis", axis);
            snprintf(label, sizeof label, "GatherElements %s axis %d", mrt_dtype_name(dtypes[d]), axis);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
            mrt_tensor_release(&idx);
            mrt_tensor_release(&x);
        }
        /* GatherND: tuples of 1..3 indices, batch_dims 0 and 1 */
        for (int b = 0; b < 2; b++)
            for (int m = 1; m <= 3 - b; m++) {
                mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, -50, 50);
                int64_t ish[3] = {4, 3, m};
                mrt_tensor idx = th_rand(&r, MRT_DTYPE_INT64, 3, ish, -4, 3);
                th_case *c = th_begin("GatherND", "", 13);
                th_input(c, &x);
                th_input(c, &idx);
                th_attr_int(c, "batch_dims", b);
                snprintf(label, sizeof label, "GatherND %s batch_dims %d m %d", mrt_dtype_name(dtypes[d]), b, m);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&idx);
                mrt_tensor_release(&x);
            }
    }
}

Test(cuda_gather, scatters_with_repeated_indices_in_cpu_order)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("scatter"));
    static const char *reds[] = {"none", "add", "mul", "max", "min"};
    int64_t xs[3] = {4, 5, 6};
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t red = 0; red < 5; red++) {
            char label[96];
            for (int axis = 0; axis < 3; axis++) {
                int64_t ish[3] = {3, 4, 5};
                ish[axis] = 9; /* more updates than the axis holds: repeats */
                mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, 1, 3);
                mrt_tensor idx = rand_indices(&r, axis == 1 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, 3, ish, xs[axis]);
                mrt_tensor upd = th_rand(&r, dtypes[d], 3, ish, 1, 3);
                th_case *c = th_begin("ScatterElements", "", 18);
                th_input(c, &x);
                th_input(c, &idx);
                th_input(c, &upd);
                th_attr_int(c, "axis", axis);
                th_attr_string(c, "reduction", reds[red]);
                snprintf(label, sizeof label, "ScatterElements %s %s axis %d", mrt_dtype_name(dtypes[d]), reds[red], axis);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&upd);
                mrt_tensor_release(&idx);
                mrt_tensor_release(&x);
            }
            for (int m = 1; m <= 3; m++) {
                mrt_tensor x = th_rand(&r, dtypes[d], 3, xs, 1, 3);
                int64_t ish[3] = {5, 3, m}, ush[4] = {5, 3, 0, 0};
                for (int k = m; k < 3; k++) ush[2 + k - m] = xs[k];
                mrt_tensor idx = th_rand(&r, MRT_DTYPE_INT64, 3, ish, -4, 3); /* 15 tuples into <= 4 rows: repeats */
                mrt_tensor upd = th_rand(&r, dtypes[d], 2 + 3 - m, ush, 1, 3);
                th_case *c = th_begin("ScatterND", "", 18);
                th_input(c, &x);
                th_input(c, &idx);
                th_input(c, &upd);
                th_attr_string(c, "reduction", reds[red]);
                snprintf(label, sizeof label, "ScatterND %s %s m %d", mrt_dtype_name(dtypes[d]), reds[red], m);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&upd);
                mrt_tensor_release(&idx);
                mrt_tensor_release(&x);
            }
        }
}

/* An index out of range fails the node on CUDA with the CPU's message. */
static void expect_same_failure(th_case *c, const char *label)
{
    mrt_tensor y;
    mrt_status st = th_run(c, 1, &y);
    cr_assert_neq(st, MRT_STATUS_OK, "%s: the CPU accepted it", label);
    char cpu[512];
    snprintf(cpu, sizeof cpu, "%s", mrt_last_error());
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    o.no_cpu_fallback = true;
    st = th_run_opt(c, &o, 1, &y);
    cr_assert_eq(st, MRT_STATUS_INVALID_ARG, "%s: status %d: %s", label, st, mrt_last_error());
    const char *msg = strstr(cpu, "index ");
    cr_assert(msg && strstr(mrt_last_error(), msg), "%s: CUDA said '%s', the CPU '%s'", label, mrt_last_error(), cpu);
}

Test(cuda_gather, out_of_range_indices_fail_as_on_the_cpu)
{
    th_cuda_require();
    int64_t xs[2] = {3, 4};
    int64_t bad[5] = {0, -3, 2, 7, -9}; /* element 3 is the first out of range on axis 0 */
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, xs, NULL);
    mrt_tensor idx = th_vec_i64(5, bad);
    th_case *c = th_begin("Gather", "", 13);
    th_input(c, &x);
    th_input(c, &idx);
    expect_same_failure(c, "Gather");
    th_free(c);

    int64_t es[2] = {1, 4};
    mrt_tensor eidx = th_from_f64(MRT_DTYPE_INT64, 2, es, (double[]){0, 1, 3, 2});
    mrt_tensor upd = th_from_f64(MRT_DTYPE_FLOAT, 2, es, NULL);
    c = th_begin("ScatterElements", "", 13);
    th_input(c, &x);
    th_input(c, &eidx);
    th_input(c, &upd);
    expect_same_failure(c, "ScatterElements");
    th_free(c);

    int64_t ns[2] = {2, 2};
    mrt_tensor nidx = th_from_f64(MRT_DTYPE_INT64, 2, ns, (double[]){1, 1, 2, -5});
    c = th_begin("GatherND", "", 13);
    th_input(c, &x);
    th_input(c, &nidx);
    expect_same_failure(c, "GatherND");
    th_free(c);
    mrt_tensor_release(&nidx);
    mrt_tensor_release(&upd);
    mrt_tensor_release(&eidx);
    mrt_tensor_release(&idx);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ Compress, OneHot, NonZero, TensorScatter */

/* value dtypes for the moving ops: 1, 2, 4 and 8 bytes */
static const mrt_dtype moved[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16, MRT_DTYPE_BOOL};
#define N_MOVED (sizeof moved / sizeof moved[0])

/* A bool tensor with about `density` of its elements true. */
static mrt_tensor rand_bools(th_rng *r, int rank, const int64_t *shape, double density)
{
    mrt_tensor t = th_rand(r, MRT_DTYPE_BOOL, rank, shape, 0, 1);
    int64_t n = th_numel(rank, shape);
    for (int64_t i = 0; i < n; i++) ((uint8_t *)t.data)[i] = th_rng_uniform(r, 0, 1) < density;
    return t;
}

Test(cuda_gather, compress_axes_lengths_and_runtime_conditions)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("compress"));
    static const struct { int rank; int64_t shape[3]; } xs[] = {{3, {4, 5, 6}}, {2, {0, 3}}, {1, {3001}}, {2, {1, 7}}};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
        for (int axis = -2; axis < xs[k].rank; axis++) /* -2: no axis (flattened) */
            for (int cl = -1; cl <= 1; cl++) /* the condition shorter, as long as, longer than the axis */
                for (int konst = 0; konst < 2; konst++) {
                    mrt_dtype dt = moved[th_rng_int(&r, 0, N_MOVED - 1)];
                    int a = axis < 0 && axis != -2 ? axis + xs[k].rank : axis;
                    if (axis == -2 && xs[k].rank < 1) continue;
                    int64_t len = axis == -2 ? th_numel(xs[k].rank, xs[k].shape) : xs[k].shape[a];
                    int64_t clen = len + cl < 0 ? 0 : len + cl;
                    mrt_tensor x = th_rand(&r, dt, xs[k].rank, xs[k].shape, -50, 50);
                    mrt_tensor cond = rand_bools(&r, 1, &clen, k == 2 ? 0.1 : 0.5);
                    th_case *c = th_begin("Compress", "", 11);
                    th_input(c, &x);
                    if (konst) th_input_const(c, &cond);
                    else th_input(c, &cond);
                    if (axis != -2) th_attr_int(c, "axis", axis);
                    char label[128];
                    snprintf(label, sizeof label, "Compress %s shape %zu axis %d condition %+d %s", mrt_dtype_name(dt), k,
                             axis, cl, konst ? "constant" : "input");
                    th_cuda_check(c, 1, 0, label);
                    th_free(c);
                    mrt_tensor_release(&cond);
                    mrt_tensor_release(&x);
                }
}

Test(cuda_gather, one_hot_index_types_axes_and_out_of_range)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("one_hot"));
    static const mrt_dtype idts[] = {MRT_DTYPE_INT64, MRT_DTYPE_INT32, MRT_DTYPE_FLOAT, MRT_DTYPE_INT8, MRT_DTYPE_INT4,
                                     MRT_DTYPE_FLOAT16, MRT_DTYPE_UINT16};
    static const struct { int rank; int64_t shape[3]; } is[] = {{0, {0}}, {1, {7}}, {2, {3, 4}}, {3, {2, 3, 5}}, {2, {0, 3}}};
    for (size_t t = 0; t < sizeof idts / sizeof idts[0]; t++)
        for (size_t k = 0; k < sizeof is / sizeof is[0]; k++)
            for (int axis = -1; axis <= is[k].rank; axis++) {
                int64_t depth = th_rng_int(&r, 1, 6);
                mrt_dtype vdt = moved[th_rng_int(&r, 0, N_MOVED - 1)];
                /* indices in [-depth - 2, depth + 2]: negatives count from the end, the rest is out of range */
                mrt_tensor idx = th_rand(&r, idts[t], is[k].rank, is[k].shape, (double)(-depth - 2), (double)(depth + 2));
                if (idts[t] == MRT_DTYPE_FLOAT && th_numel(is[k].rank, is[k].shape) >= 3) {
                    ((float *)idx.data)[0] = NAN;
                    ((float *)idx.data)[1] = INFINITY;
                    ((float *)idx.data)[2] = -1.5f; /* truncates to -1 */
                }
                int64_t two = 2;
                mrt_tensor vals = th_rand(&r, vdt, 1, &two, -9, 9), d = th_scalar_i64(depth);
                th_case *c = th_begin("OneHot", "", 11);
                th_input(c, &idx);
                if (axis % 2) th_input(c, &d); /* a run-time depth: infer sizes the output at run time */
                else th_input_const(c, &d);
                th_input(c, &vals);
                th_attr_int(c, "axis", axis);
                char label[128];
                snprintf(label, sizeof label, "OneHot indices %s shape %zu axis %d depth %lld values %s",
                         mrt_dtype_name(idts[t]), k, axis, (long long)depth, mrt_dtype_name(vdt));
                th_cuda_check(c, 1, 0, label);
                th_free(c);
                mrt_tensor_release(&d);
                mrt_tensor_release(&vals);
                mrt_tensor_release(&idx);
            }
}

Test(cuda_gather, nonzero_every_kind_of_input)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("nonzero"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_BOOL, MRT_DTYPE_INT32, MRT_DTYPE_UINT8, MRT_DTYPE_DOUBLE,
                                    MRT_DTYPE_FLOAT16, MRT_DTYPE_INT4, MRT_DTYPE_FLOAT8E4M3FN, MRT_DTYPE_UINT64};
    static const struct { int rank; int64_t shape[3]; } xs[] = {
        {0, {0}}, {1, {0}}, {1, {7}}, {3, {3, 4, 5}}, {2, {70, 80}}, {3, {2, 0, 4}}, {2, {3, 3}}};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
            /* mostly zeros; a NaN is non-zero */
            mrt_tensor x = th_rand(&r, dts[t], xs[k].rank, xs[k].shape, 0, 1);
            int64_t n = th_numel(xs[k].rank, xs[k].shape);
            for (int64_t i = 0; i < n; i++)
                mrt_store_f64(dts[t], x.data, i, th_rng_uniform(&r, 0, 1) < (k == 6 ? 0 : 0.3) ? th_rng_int(&r, -3, 3) : 0);
            if (n > 2 && (dts[t] == MRT_DTYPE_FLOAT || dts[t] == MRT_DTYPE_DOUBLE)) mrt_store_f64(dts[t], x.data, 1, NAN);
            th_case *c = th_begin("NonZero", "", 13);
            th_input(c, &x);
            char label[96];
            snprintf(label, sizeof label, "NonZero %s shape %zu", mrt_dtype_name(dts[t]), k);
            th_cuda_check(c, 1, 0, label);
            th_free(c);
            mrt_tensor_release(&x);
        }
}

Test(cuda_gather, tensor_scatter_linear_and_circular)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("tensor_scatter"));
    static const struct { int rank, axis; int64_t past[4]; int64_t seq; } cs[] = {
        {4, -2, {2, 3, 8, 5}, 3}, {3, 1, {3, 7, 4}, 7}, {3, 2, {2, 5, 9}, 4}, {2, 1, {4, 6}, 0}, {4, 2, {1, 2, 5, 3}, 1},
        {3, -1, {0, 2, 4}, 2}};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        for (int mode = 0; mode < 2; mode++)
            for (int wi_kind = 0; wi_kind < 3; wi_kind++) { /* none, int64, int32 */
                mrt_dtype dt = moved[th_rng_int(&r, 0, N_MOVED - 1)];
                int axis = cs[k].axis < 0 ? cs[k].axis + cs[k].rank : cs[k].axis;
                int64_t us[4];
                memcpy(us, cs[k].past, sizeof us);
                us[axis] = cs[k].seq;
                int64_t batch = cs[k].past[0], max_seq = cs[k].past[axis];
                mrt_tensor past = th_rand(&r, dt, cs[k].rank, cs[k].past, -50, 50);
                mrt_tensor upd = th_rand(&r, dt, cs[k].rank, us, -50, 50);
                /* linear: starts that fit; circular: any start, negative ones and ones that wrap included */
                mrt_tensor wi = mode ? th_rand(&r, wi_kind == 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, 1, &batch,
                                               (double)-2 * max_seq, (double)2 * max_seq)
                                     : th_rand(&r, wi_kind == 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, 1, &batch, 0,
                                               (double)(max_seq - cs[k].seq));
                th_case *c = th_begin("TensorScatter", "", 24);
                th_input(c, &past);
                th_input(c, &upd);
                if (wi_kind) th_input(c, &wi);
                th_attr_int(c, "axis", cs[k].axis);
                if (mode) th_attr_string(c, "mode", "circular");
                char label[128];
                snprintf(label, sizeof label, "TensorScatter %s case %zu %s write_indices %d", mrt_dtype_name(dt), k,
                         mode ? "circular" : "linear", wi_kind);
                th_cuda_check(c, 1, 0, label);
                th_free(c);
                mrt_tensor_release(&wi);
                mrt_tensor_release(&upd);
                mrt_tensor_release(&past);
            }
}

Test(cuda_gather, tensor_scatter_out_of_range_fails_as_on_the_cpu)
{
    th_cuda_require();
    int64_t ps[3] = {3, 4, 2}, us[3] = {3, 2, 2};
    static const double starts[][3] = {{0, 2, 3}, {1, -1, 0}, {9223372036854775807.0, 0, 0}};
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        mrt_tensor past = th_from_f64(MRT_DTYPE_FLOAT, 3, ps, NULL), upd = th_from_f64(MRT_DTYPE_FLOAT, 3, us, NULL);
        int64_t three = 3, w[3] = {(int64_t)starts[k][0], (int64_t)starts[k][1], (int64_t)starts[k][2]};
        if (k == 2) w[0] = INT64_MAX;
        mrt_tensor wi = th_vec_i64(three, w);
        th_case *c = th_begin("TensorScatter", "", 24);
        th_input(c, &past);
        th_input(c, &upd);
        th_input(c, &wi);
        th_attr_int(c, "axis", 1);
        mrt_tensor y;
        cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK, "case %zu: the CPU accepted it", k);
        char cpu[512];
        snprintf(cpu, sizeof cpu, "%s", mrt_last_error());
        mrt_session_options o = mrt_session_options_default();
        o.device = "cuda";
        o.no_cpu_fallback = true;
        cr_assert_eq(th_run_opt(c, &o, 1, &y), MRT_STATUS_INVALID_ARG, "case %zu: %s", k, mrt_last_error());
        const char *msg = strstr(cpu, k == 2 ? "write_indices[" : "batch ");
        cr_assert(msg && strstr(mrt_last_error(), msg), "case %zu: CUDA said '%s', the CPU '%s'", k, mrt_last_error(), cpu);
        th_free(c);
        mrt_tensor_release(&wi);
        mrt_tensor_release(&upd);
        mrt_tensor_release(&past);
    }
}
