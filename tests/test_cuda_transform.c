/* The CUDA transform family (ops_cuda/transform.cu: Transpose, Concat, Split, Slice, Tile, Pad, DepthToSpace,
 * SpaceToDepth, Trilu, ReverseSequence) against the CPU kernels (tests/harness.h th_cuda_check): every case is exact
 * (data only moves), with empty tensors, size-1 dims, negative axes/steps and parameters given as run-time inputs
 * (device tensors the kernel reads back). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const mrt_dtype dtypes[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16, MRT_DTYPE_BOOL,
                                   MRT_DTYPE_DOUBLE};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

static mrt_tensor rand_of(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape)
{
    return th_rand(r, dt, rank, shape, dt == MRT_DTYPE_BOOL ? 0 : -100, dt == MRT_DTYPE_BOOL ? 1 : 100);
}

/* One node with x plus int64 vectors as inputs (runtime unless constant), checked on both devices. */
static void check_vecs(const char *op, int opset, const mrt_tensor *x, int n_vec, const int64_t *lens,
                       const int64_t *const *vecs, bool constant, int n_out, void (*attrs)(th_case *, const void *),
                       const void *attr_arg, const char *label)
{
    th_case *c = th_begin(op, "", opset);
    th_input(c, x);
    mrt_tensor v[6];
    for (int i = 0; i < n_vec; i++) {
        if (lens[i] < 0) {
            th_input_absent(c);
            continue;
        }
        v[i] = th_vec_i64(lens[i], vecs[i]);
        if (constant) th_input_const(c, &v[i]);
        else th_input(c, &v[i]);
    }
    if (attrs) attrs(c, attr_arg);
    th_cuda_check(c, n_out, 1, label);
    for (int i = 0; i < n_vec; i++)
        if (lens[i] >= 0) mrt_tensor_release(&v[i]);
    th_free(c);
}

Test(cuda_transform, transpose_every_layout)
{
    th_cuda_require();
    static const struct { int rank; int64_t shape[4]; int64_t perm[4]; bool given; } cases[] = {
        {2, {0, 3}, {1, 0}, true}, {0, {0}, {0}, false}, {1, {7}, {0}, true}, {3, {3, 5, 2}, {2, 0, 1}, true},
        {4, {2, 1, 33, 4}, {0, 3, 1, 2}, true}, {3, {4, 6, 5}, {0}, false}, {2, {300, 257}, {-1, 0}, true},
    };
    th_rng r;
    th_rng_init(&r, th_seed("transpose"));
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            th_case *c = th_begin("Transpose", "", 21);
            mrt_tensor x = rand_of(&r, dtypes[d], cases[k].rank, cases[k].shape);
            th_input(c, &x);
            if (cases[k].given) th_attr_ints(c, "perm", cases[k].rank, cases[k].perm);
            char label[96];
            snprintf(label, sizeof label, "Transpose %s case %zu", mrt_dtype_name(dtypes[d]), k);
            th_cuda_check(c, 1, 1, label);
            mrt_tensor_release(&x);
            th_free(c);
        }
}

Test(cuda_transform, concat_and_split)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("concat"));
    static const int64_t axes[] = {0, 1, -1};
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t a = 0; a < 3; a++) {
            int64_t s0[3] = {2, 3, 4}, s1[3] = {2, 3, 4}, s2[3] = {2, 3, 4};
            int ax = (int)(axes[a] < 0 ? axes[a] + 3 : axes[a]);
            s1[ax] = 0; /* an empty input */
            s2[ax] = 5;
            mrt_tensor x0 = rand_of(&r, dtypes[d], 3, s0), x1 = rand_of(&r, dtypes[d], 3, s1), x2 = rand_of(&r, dtypes[d], 3, s2);
            th_case *c = th_begin("Concat", "", 13);
            th_input(c, &x0);
            th_input(c, &x1);
            th_input(c, &x2);
            th_attr_int(c, "axis", axes[a]);
            char label[96];
            snprintf(label, sizeof label, "Concat %s axis %lld", mrt_dtype_name(dtypes[d]), (long long)axes[a]);
            th_cuda_check(c, 1, 1, label);
            th_free(c);

            /* Split of the concatenation's shape back: sizes as a run-time input (13), uneven num_outputs (18), the
               attribute (11) */
            int64_t sh[3] = {2, 3, 4};
            sh[ax] = 9;
            mrt_tensor x = rand_of(&r, dtypes[d], 3, sh);
            int64_t sizes[3] = {4, 0, 5};
            snprintf(label, sizeof label, "Split-13 %s axis %lld", mrt_dtype_name(dtypes[d]), (long long)axes[a]);
            c = th_begin("Split", "", 13);
            th_input(c, &x);
            mrt_tensor sv = th_vec_i64(3, sizes);
            th_input(c, &sv);
            th_attr_int(c, "axis", axes[a]);
            th_cuda_check(c, 3, 1, label);
            th_free(c);
            mrt_tensor_release(&sv);
            c = th_begin("Split", "", 18);
            th_input(c, &x);
            th_attr_int(c, "axis", axes[a]);
            th_attr_int(c, "num_outputs", 2);
            snprintf(label, sizeof label, "Split-18 %s axis %lld", mrt_dtype_name(dtypes[d]), (long long)axes[a]);
            th_cuda_check(c, 2, 1, label);
            th_free(c);
            c = th_begin("Split", "", 11);
            th_input(c, &x);
            th_attr_int(c, "axis", axes[a]);
            th_attr_ints(c, "split", 3, sizes);
            snprintf(label, sizeof label, "Split-11 %s axis %lld", mrt_dtype_name(dtypes[d]), (long long)axes[a]);
            th_cuda_check(c, 3, 1, label);
            th_free(c);
            mrt_tensor_release(&x);
            mrt_tensor_release(&x0);
            mrt_tensor_release(&x1);
            mrt_tensor_release(&x2);
        }
}

Test(cuda_transform, slice_with_runtime_and_constant_parameters)
{
    th_cuda_require();
    static const struct { int64_t starts[3], ends[3], axes[3], steps[3]; int n; } cases[] = {
        {{1, 0, 0}, {3, 5, 2}, {0, 1, 2}, {1, 2, 1}, 3},
        {{-1, 0, 0}, {-100, 0, 0}, {1, 0, 0}, {-2, 0, 0}, 1},   /* negative step from the end */
        {{2, -3, 0}, {1000, -1, 0}, {-1, 0, 0}, {1, 1, 0}, 2},  /* clamped end, negative axis */
        {{3, 0, 0}, {3, 0, 0}, {0, 0, 0}, {1, 0, 0}, 1},        /* empty */
        {{0, 1, 0}, {INT64_MAX, INT64_MAX, 0}, {2, 1, 0}, {3, 7, 0}, 2},
    };
    int64_t shape[3] = {6, 7, 5};
    th_rng r;
    th_rng_init(&r, th_seed("slice"));
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            for (int constant = 0; constant < 2; constant++) {
                mrt_tensor x = rand_of(&r, dtypes[d], 3, shape);
                int64_t lens[4] = {cases[k].n, cases[k].n, cases[k].n, cases[k].n};
                const int64_t *vecs[4] = {cases[k].starts, cases[k].ends, cases[k].axes, cases[k].steps};
                char label[96];
                snprintf(label, sizeof label, "Slice %s case %zu%s", mrt_dtype_name(dtypes[d]), k, constant ? " const" : "");
                check_vecs("Slice", 13, &x, 4, lens, vecs, constant, 1, NULL, NULL, label);
                mrt_tensor_release(&x);
            }
}

static void pad_attrs(th_case *c, const void *mode) { th_attr_string(c, "mode", (const char *)mode); }

Test(cuda_transform, pad_every_mode)
{
    th_cuda_require();
    static const char *modes[] = {"constant", "reflect", "edge", "wrap"};
    static const int64_t pads[][6] = {{1, 0, 2, 0, 3, 1}, {0, -1, 2, 2, 0, -2}, {3, 3, 3, 3, 3, 3}};
    int64_t shape[3] = {2, 4, 5};
    th_rng r;
    th_rng_init(&r, th_seed("pad"));
    for (size_t d = 0; d < N_DTYPES; d++)
        for (size_t m = 0; m < 4; m++)
            for (size_t k = 0; k < 3; k++) {
                mrt_tensor x = rand_of(&r, dtypes[d], 3, shape);
                th_case *c = th_begin("Pad", "", 19);
                th_input(c, &x);
                mrt_tensor p = th_vec_i64(6, pads[k]);
                th_input(c, &p);
                mrt_tensor cv = th_rand(&r, dtypes[d], 0, NULL, 1, 1);
                if (m == 0) th_input(c, &cv);
                pad_attrs(c, modes[m]);
                char label[96];
                snprintf(label, sizeof label, "Pad %s %s case %zu", modes[m], mrt_dtype_name(dtypes[d]), k);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&p);
                mrt_tensor_release(&cv);
                mrt_tensor_release(&x);
            }
    /* opset 2: pads and value as attributes */
    mrt_tensor x = rand_of(&r, MRT_DTYPE_FLOAT, 3, shape);
    th_case *c = th_begin("Pad", "", 2);
    th_input(c, &x);
    th_attr_ints(c, "pads", 6, pads[0]);
    th_attr_float(c, "value", 2.5f);
    th_cuda_check(c, 1, 1, "Pad-2 value attribute");
    th_free(c);
    mrt_tensor_release(&x);
}

Test(cuda_transform, tile_depth_space_trilu_reverse_sequence)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("tile"));
    for (size_t d = 0; d < N_DTYPES; d++) {
        char label[96];
        int64_t s3[3] = {2, 3, 4}, reps[3] = {2, 1, 3}, zero_reps[3] = {1, 0, 2};
        mrt_tensor x = rand_of(&r, dtypes[d], 3, s3);
        int64_t lens[1] = {3};
        const int64_t *v1[1] = {reps}, *v0[1] = {zero_reps};
        snprintf(label, sizeof label, "Tile %s", mrt_dtype_name(dtypes[d]));
        check_vecs("Tile", 13, &x, 1, lens, v1, true, 1, NULL, NULL, label);
        check_vecs("Tile", 13, &x, 1, lens, v0, false, 1, NULL, NULL, label);
        mrt_tensor_release(&x);

        int64_t s4[4] = {2, 8, 3, 5};
        x = rand_of(&r, dtypes[d], 4, s4);
        static const char *dmodes[] = {"DCR", "CRD"};
        for (int m = 0; m < 2; m++) {
            th_case *c = th_begin("DepthToSpace", "", 13);
            th_input(c, &x);
            th_attr_int(c, "blocksize", 2);
            th_attr_string(c, "mode", dmodes[m]);
            snprintf(label, sizeof label, "DepthToSpace %s %s", dmodes[m], mrt_dtype_name(dtypes[d]));
            th_cuda_check(c, 1, 1, label);
            th_free(c);
        }
        mrt_tensor_release(&x);
        int64_t s4b[4] = {2, 3, 4, 6};
        x = rand_of(&r, dtypes[d], 4, s4b);
        th_case *c = th_begin("SpaceToDepth", "", 13);
        th_input(c, &x);
        th_attr_int(c, "blocksize", 2);
        snprintf(label, sizeof label, "SpaceToDepth %s", mrt_dtype_name(dtypes[d]));
        th_cuda_check(c, 1, 1, label);
        th_free(c);
        mrt_tensor_release(&x);

        int64_t s3b[3] = {2, 5, 7};
        x = rand_of(&r, dtypes[d], 3, s3b);
        static const int64_t ks[] = {0, 2, -3, 100, -100, INT64_MAX};
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
            for (int upper = 0; upper < 2; upper++) {
                c = th_begin("Trilu", "", 14);
                th_input(c, &x);
                mrt_tensor kt = th_scalar_i64(ks[k]);
                th_input(c, &kt);
                th_attr_int(c, "upper", upper);
                snprintf(label, sizeof label, "Trilu %s k %lld upper %d", mrt_dtype_name(dtypes[d]), (long long)ks[k], upper);
                th_cuda_check(c, 1, 1, label);
                th_free(c);
                mrt_tensor_release(&kt);
            }
        mrt_tensor_release(&x);

        int64_t s3c[3] = {4, 3, 2}, seq0[4] = {3, 0, 1, 2}, seq1[3] = {4, 1, 3};
        x = rand_of(&r, dtypes[d], 3, s3c);
        for (int bax = 0; bax < 2; bax++) {
            c = th_begin("ReverseSequence", "", 10);
            th_input(c, &x);
            mrt_tensor lt = th_vec_i64(bax ? 3 : 4, bax ? seq1 : seq0); /* batch 4, time 3 / time 4, batch 3 */
            th_input(c, &lt);
            th_attr_int(c, "batch_axis", bax);
            th_attr_int(c, "time_axis", 1 - bax);
            snprintf(label, sizeof label, "ReverseSequence %s batch_axis %d", mrt_dtype_name(dtypes[d]), bax);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
            mrt_tensor_release(&lt);
        }
        mrt_tensor_release(&x);
    }
}
