/* The CUDA gather family (ops_cuda/gather.cu: Gather, GatherElements, GatherND, Scatter/ScatterElements/ScatterND)
 * against the CPU kernels (tests/harness.h th_cuda_check), exact: negative and int32 indices, empty tensors, batch
 * dims, every reduction with repeated indices (the CPU's order, bit for bit), and an out-of-range index failing the
 * node with the CPU's message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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
