/* Shape, transform, gather and cast families against the naive index-map references of tests/ref/shape_ref.c:
 * random shapes with negative axes, zero-size dims and rank-0 scalars, strings/bool/float16/int4 data, int32
 * and int64 index tensors, constant-folded (plan-time) and run-time paths, and error cases (status + message). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"
#include "ref/shape_ref.h"

/* exact comparison (copies must be bit-faithful; floats compare as values, NaN matching NaN) */
#define CHECK_EQ(got, expect, ...)                                                                            \
    do {                                                                                                      \
        char why_[512];                                                                                       \
        bool ok_ = th_check_tensor((got), (expect), 0, 0, 0, why_, sizeof why_);                              \
        if (!ok_) {                                                                                           \
            char ctx_[512];                                                                                   \
            snprintf(ctx_, sizeof ctx_, __VA_ARGS__);                                                         \
            cr_assert(ok_, "%s: %s", ctx_, why_);                                                             \
        }                                                                                                     \
    } while (0)

static const char *shape_str(int rank, const int64_t *shape)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    return mrt_shape_describe(rank, shape, buf[k], sizeof buf[k]);
}

static void rand_shape(th_rng *r, int rank, int64_t *shape, int64_t max_dim, bool allow_zero)
{
    for (int a = 0; a < rank; a++) {
        shape[a] = th_rng_int(r, 1, max_dim);
        if (allow_zero && th_rng_int(r, 0, 9) == 0) shape[a] = 0;
    }
}

/* Random data of any dtype: strings are "s<i>_<random>", floats in [-10, 10), ints small. */
static mrt_tensor rand_tensor(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape)
{
    if (dt == MRT_DTYPE_STRING) {
        mrt_tensor t;
        mrt_tensor_alloc(&t, dt, rank, shape);
        int64_t n = mrt_tensor_numel(&t);
        for (int64_t i = 0; i < n; i++) {
            char buf[32];
            snprintf(buf, sizeof buf, "s%lld_%lld", (long long)i, (long long)th_rng_int(r, 0, 999));
            ((char **)t.data)[i] = strdup(buf);
        }
        return t;
    }
    if (mrt_dtype_is_float(dt)) return th_rand(r, dt, rank, shape, -10, 10);
    if (dt == MRT_DTYPE_BOOL || dt == MRT_DTYPE_UINT2) return th_rand(r, dt, rank, shape, 0, 1);
    if (dt == MRT_DTYPE_INT4) return th_rand(r, dt, rank, shape, -8, 7);
    if (dt == MRT_DTYPE_UINT4) return th_rand(r, dt, rank, shape, 0, 15);
    if (dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_UINT16 || dt == MRT_DTYPE_UINT32 || dt == MRT_DTYPE_UINT64)
        return th_rand(r, dt, rank, shape, 0, 200);
    return th_rand(r, dt, rank, shape, -100, 100);
}

static const mrt_dtype any_dtypes[] = {MRT_DTYPE_FLOAT,  MRT_DTYPE_STRING, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT64,
                                       MRT_DTYPE_BOOL,   MRT_DTYPE_DOUBLE, MRT_DTYPE_INT32,   MRT_DTYPE_UINT8,
                                       MRT_DTYPE_BFLOAT16, MRT_DTYPE_INT8};
#define N_ANY (int)(sizeof any_dtypes / sizeof any_dtypes[0])

/* Data input: constant (folded at plan time) or run-time. */
static void data_input(th_case *c, const mrt_tensor *t, bool fold)
{
    if (fold) th_input_const(c, t);
    else th_input(c, t);
}

static mrt_tensor vec(int64_t n, const int64_t *v, mrt_dtype dt)
{
    mrt_tensor t;
    mrt_tensor_alloc(&t, dt, 1, &n);
    for (int64_t i = 0; i < n; i++) mrt_store_i64(dt, t.data, i, v[i]);
    return t;
}

static void free_tensors(int n, mrt_tensor *t)
{
    for (int i = 0; i < n; i++) mrt_tensor_release(&t[i]);
}

/* ------------------------------------------------------------------ Reshape family */

Test(shape_ops, reshape_random)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::reshape_random"));
    for (int it = 0; it < 80; it++) {
        mrt_dtype dt = any_dtypes[it % N_ANY];
        int rank = (int)th_rng_int(&r, 0, 4);
        int64_t shape[MRT_MAX_RANK], target[MRT_MAX_RANK], expect[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 4, true);
        /* the target: the input dims in a random order, some merged */
        int tr = 0;
        int64_t pool[MRT_MAX_RANK];
        memcpy(pool, shape, sizeof pool);
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)th_rng_int(&r, 0, i);
            int64_t t = pool[i];
            pool[i] = pool[j];
            pool[j] = t;
        }
        for (int i = 0; i < rank; i++) {
            if (tr > 0 && th_rng_int(&r, 0, 2) == 0) target[tr - 1] *= pool[i];
            else target[tr++] = pool[i];
        }
        if (th_rng_int(&r, 0, 3) == 0 && tr < 6) target[tr++] = 1;
        memcpy(expect, target, sizeof expect);
        /* a literal 0 in the target is a real zero-size dim only with allowzero=1 (opset 14); then no 0/-1 tricks */
        bool allowzero = false;
        for (int i = 0; i < tr; i++) allowzero |= target[i] == 0;
        int64_t n = sref_numel(rank, shape), rest = 1;
        int minus = tr && !allowzero ? (int)th_rng_int(&r, -1, tr - 1) : -1;
        for (int i = 0; i < tr; i++)
            if (i != minus) rest *= target[i];
        if (minus >= 0 && rest != 0) target[minus] = -1;
        for (int i = 0; !allowzero && i < tr && i < rank; i++)
            if (target[i] == shape[i] && th_rng_int(&r, 0, 1)) target[i] = 0;
        int opset = allowzero ? 14 : it % 3 == 0 ? 5 : 13;
        bool fold = it % 2;
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), s = th_vec_i64(tr, target), y;
        th_case *c = th_begin("Reshape", "", opset);
        data_input(c, &x, fold);
        if (it % 4 == 1) th_input(c, &s);
        else th_input_const(c, &s);
        if (allowzero) th_attr_int(c, "allowzero", 1);
        RUN_OK(c, 1, &y, "reshape %s -> %s", shape_str(rank, shape), shape_str(tr, target));
        mrt_tensor e = x;
        e.rank = tr;
        memcpy(e.shape, expect, sizeof e.shape);
        cr_assert_eq(mrt_tensor_numel(&e), n);
        CHECK_EQ(&y, &e, "reshape %s %s -> %s", mrt_dtype_name(dt), shape_str(rank, shape), shape_str(tr, target));
        free_tensors(1, &y);
        th_free(c);
        mrt_tensor_release(&x);
        mrt_tensor_release(&s);
    }
}

Test(shape_ops, reshape_allowzero_and_opset1)
{
    int64_t shape[3] = {0, 3, 4};
    mrt_tensor x, y;
    mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 3, shape);
    /* allowzero=1: 0 is a real zero-size dim */
    mrt_tensor s = th_vec_i64(3, (int64_t[]){3, 4, 0});
    th_case *c = th_begin("Reshape", "", 14);
    th_input(c, &x);
    th_input_const(c, &s);
    th_attr_int(c, "allowzero", 1);
    RUN_OK(c, 1, &y, "allowzero");
    cr_assert(y.rank == 3 && y.shape[0] == 3 && y.shape[1] == 4 && y.shape[2] == 0, "got %s",
              shape_str(y.rank, y.shape));
    free_tensors(1, &y);
    th_free(c);
    mrt_tensor_release(&s);
    mrt_tensor_release(&x);
    /* opset 1: the shape is an attribute */
    int64_t s2[2] = {2, 6};
    x = th_rand(&(th_rng){{1, 2, 3, 4}}, MRT_DTYPE_INT32, 2, (int64_t[]){3, 4}, -5, 5);
    c = th_begin("Reshape", "", 1);
    th_input(c, &x);
    th_attr_ints(c, "shape", 2, (int64_t[]){-1, 6});
    RUN_OK(c, 1, &y, "opset 1");
    mrt_tensor e = x;
    e.rank = 2;
    memcpy(e.shape, s2, sizeof s2);
    CHECK_EQ(&y, &e, "reshape opset 1");
    free_tensors(1, &y);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(shape_ops, reshape_errors)
{
    mrt_tensor x, y;
    mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    struct { int64_t n, v[4]; const char *needle; } cases[] = {
        {2, {4, 2}, "[4,2]"}, {2, {-1, -1}, "more than one -1"}, {2, {4, -1}, "[4,-1]"}, {3, {1, 0, 0}, "position 2"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int runtime = 0; runtime < 2; runtime++) {
            mrt_tensor s = th_vec_i64(cases[k].n, cases[k].v);
            th_case *c = th_begin("Reshape", "", 13);
            th_input(c, &x);
            if (runtime) th_input(c, &s);
            else th_input_const(c, &s);
            mrt_status st = th_run(c, 1, &y);
            cr_assert_neq(st, MRT_STATUS_OK, "case %zu should fail", k);
            cr_assert(strstr(mrt_last_error(), cases[k].needle) != NULL, "case %zu: message '%s' lacks '%s'", k,
                      mrt_last_error(), cases[k].needle);
            if (k == 0) cr_assert(strstr(mrt_last_error(), "[2,3]") != NULL, "message names the input shape");
            th_free(c);
            mrt_tensor_release(&s);
        }
    mrt_tensor_release(&x);
}

Test(shape_ops, flatten_squeeze_unsqueeze)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::flatten_squeeze_unsqueeze"));
    for (int it = 0; it < 60; it++) {
        mrt_dtype dt = any_dtypes[it % N_ANY];
        int rank = (int)th_rng_int(&r, 0, 4);
        int64_t shape[MRT_MAX_RANK], out[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 3, true);
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y, e = x;
        bool fold = it % 2;
        /* Flatten */
        int64_t axis = th_rng_int(&r, -rank, rank);
        int64_t a = axis < 0 ? axis + rank : axis;
        th_case *c = th_begin("Flatten", "", 13);
        data_input(c, &x, fold);
        th_attr_int(c, "axis", axis);
        RUN_OK(c, 1, &y, "flatten %s axis %lld", shape_str(rank, shape), (long long)axis);
        e.rank = 2;
        e.shape[0] = sref_numel((int)a, shape);
        e.shape[1] = sref_numel(rank - (int)a, shape + a);
        CHECK_EQ(&y, &e, "flatten %s axis %lld", shape_str(rank, shape), (long long)axis);
        free_tensors(1, &y);
        th_free(c);
        /* Unsqueeze: 1-2 new axes, negative sometimes, attribute (11) or input (13) */
        int n_new = (int)th_rng_int(&r, 1, 2), out_rank = rank + n_new;
        int64_t axes[2];
        bool ins[MRT_MAX_RANK] = {false};
        for (int k = 0; k < n_new; k++) {
            int64_t p;
            do p = th_rng_int(&r, 0, out_rank - 1);
            while (ins[p]);
            ins[p] = true;
            axes[k] = th_rng_int(&r, 0, 1) ? p - out_rank : p;
        }
        for (int i = 0, j = 0; i < out_rank; i++) out[i] = ins[i] ? 1 : shape[j++];
        int opset = it % 3 == 0 ? 11 : 13;
        mrt_tensor av = th_vec_i64(n_new, axes);
        c = th_begin("Unsqueeze", "", opset);
        data_input(c, &x, fold);
        if (opset < 13) th_attr_ints(c, "axes", n_new, axes);
        else th_input_const(c, &av);
        RUN_OK(c, 1, &y, "unsqueeze %s", shape_str(rank, shape));
        e = x;
        e.rank = out_rank;
        memcpy(e.shape, out, sizeof out);
        CHECK_EQ(&y, &e, "unsqueeze %s -> %s", shape_str(rank, shape), shape_str(out_rank, out));
        /* Squeeze it back (explicit axes), and squeeze everything of size 1 (no axes) */
        mrt_tensor y2;
        c = (th_free(c), th_begin("Squeeze", "", opset));
        th_input(c, &y);
        if (opset < 13) th_attr_ints(c, "axes", n_new, axes);
        else th_input_const(c, &av);
        RUN_OK(c, 1, &y2, "squeeze");
        CHECK_EQ(&y2, &x, "squeeze %s back", shape_str(out_rank, out));
        free_tensors(1, &y2);
        th_free(c);
        c = th_begin("Squeeze", "", opset);
        th_input(c, &y);
        RUN_OK(c, 1, &y2, "squeeze all");
        e = x;
        e.rank = 0;
        for (int i = 0; i < rank; i++)
            if (shape[i] != 1) e.shape[e.rank++] = shape[i];
        CHECK_EQ(&y2, &e, "squeeze all of %s", shape_str(out_rank, out));
        free_tensors(1, &y2);
        free_tensors(1, &y);
        th_free(c);
        mrt_tensor_release(&av);
        mrt_tensor_release(&x);
    }
    /* squeezing a dim that isn't 1 is an error naming it */
    mrt_tensor x, y;
    mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 3});
    mrt_tensor av = th_vec_i64(1, (int64_t[]){-1});
    th_case *c = th_begin("Squeeze", "", 13);
    th_input(c, &x);
    th_input_const(c, &av);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "axis 1") != NULL, "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&av);
    mrt_tensor_release(&x);
}

Test(shape_ops, shape_and_size)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::shape_and_size"));
    for (int it = 0; it < 40; it++) {
        int rank = (int)th_rng_int(&r, 0, 5);
        int64_t shape[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 5, true);
        mrt_tensor x = rand_tensor(&r, any_dtypes[it % N_ANY], rank, shape), y;
        int64_t start = th_rng_int(&r, -7, 7), end = th_rng_int(&r, -7, 7);
        bool with_start = it % 2, with_end = it % 3 != 0;
        th_case *c = th_begin("Shape", "", 15);
        data_input(c, &x, it % 4 == 0);
        if (with_start) th_attr_int(c, "start", start);
        if (with_end) th_attr_int(c, "end", end);
        RUN_OK(c, 1, &y, "shape");
        /* spec: negative += rank, then clamp to [0, rank]; empty when start >= end */
        int64_t s = with_start ? start : 0, e = with_end ? end : rank;
        if (s < 0) s += rank;
        if (e < 0) e += rank;
        s = s < 0 ? 0 : s > rank ? rank : s;
        e = e < 0 ? 0 : e > rank ? rank : e;
        int64_t n = e > s ? e - s : 0;
        mrt_tensor ex = th_vec_i64(n, shape + s);
        CHECK_EQ(&y, &ex, "Shape of %s start %lld end %lld", shape_str(rank, shape), (long long)start, (long long)end);
        free_tensors(1, &y);
        mrt_tensor_release(&ex);
        th_free(c);
        c = th_begin("Size", "", 13);
        th_input(c, &x);
        RUN_OK(c, 1, &y, "size");
        cr_assert_eq(y.rank, 0);
        cr_assert_eq(*(int64_t *)y.data, sref_numel(rank, shape));
        free_tensors(1, &y);
        th_free(c);
        mrt_tensor_release(&x);
    }
}

Test(shape_ops, expand)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::expand"));
    for (int it = 0; it < 50; it++) {
        mrt_dtype dt = any_dtypes[it % N_ANY];
        int rank = (int)th_rng_int(&r, 0, 3), trank = (int)th_rng_int(&r, 0, 4);
        int64_t shape[MRT_MAX_RANK], target[MRT_MAX_RANK], out[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 3, true);
        for (int i = 0; i < rank; i++)
            if (th_rng_int(&r, 0, 1)) shape[i] = 1;
        /* a compatible target: 1 or the input's dim, or anything where the input has 1 */
        for (int i = 0; i < trank; i++) {
            int j = i - (trank - rank);
            int64_t d = j >= 0 ? shape[j] : th_rng_int(&r, 0, 3);
            target[i] = th_rng_int(&r, 0, 2) == 0 ? 1 : d == 1 ? th_rng_int(&r, 1, 3) : d;
        }
        int out_rank;
        int64_t *map = sref_expand_map(rank, shape, trank, target, &out_rank, out);
        cr_assert(map != NULL);
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), t = th_vec_i64(trank, target), y;
        th_case *c = th_begin("Expand", "", 13);
        data_input(c, &x, it % 2);
        th_input_const(c, &t);
        RUN_OK(c, 1, &y, "expand");
        mrt_tensor e = sref_apply_map(&x, out_rank, out, map, NULL);
        CHECK_EQ(&y, &e, "expand %s by %s", shape_str(rank, shape), shape_str(trank, target));
        free_tensors(1, &y);
        mrt_tensor_release(&e);
        mrt_tensor_release(&t);
        mrt_tensor_release(&x);
        free(map);
        th_free(c);
    }
    mrt_tensor x, y, t = th_vec_i64(2, (int64_t[]){2, 4});
    mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 1, (int64_t[]){3});
    th_case *c = th_begin("Expand", "", 13);
    th_input(c, &x);
    th_input_const(c, &t);
    cr_assert_neq(th_run(c, 1, &y), MRT_STATUS_OK);
    cr_assert(strstr(mrt_last_error(), "[3]") && strstr(mrt_last_error(), "[2,4]"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&t);
}

Test(shape_ops, identity_and_constants)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::identity_and_constants"));
    for (int k = 0; k < N_ANY; k++) {
        int64_t shape[2] = {2, 3};
        mrt_tensor x = rand_tensor(&r, any_dtypes[k], k % 3, shape), y;
        th_case *c = th_begin("Identity", "", 16);
        data_input(c, &x, k % 2);
        RUN_OK(c, 1, &y, "identity");
        CHECK_EQ(&y, &x, "identity %s", mrt_dtype_name(any_dtypes[k]));
        free_tensors(1, &y);
        th_free(c);
        /* Constant with a tensor value */
        c = th_begin("Constant", "", 13);
        th_attr_tensor(c, "value", &x);
        RUN_OK(c, 1, &y, "constant");
        CHECK_EQ(&y, &x, "constant %s", mrt_dtype_name(any_dtypes[k]));
        free_tensors(1, &y);
        th_free(c);
        mrt_tensor_release(&x);
    }
    /* value_* attributes */
    mrt_tensor y;
    th_case *c = th_begin("Constant", "", 13);
    th_attr_floats(c, "value_floats", 3, (float[]){1.5f, -2, 3});
    RUN_OK(c, 1, &y, "value_floats");
    cr_assert(y.dtype == MRT_DTYPE_FLOAT && y.rank == 1 && y.shape[0] == 3 && ((float *)y.data)[1] == -2);
    free_tensors(1, &y);
    th_free(c);
    c = th_begin("Constant", "", 13);
    th_attr_int(c, "value_int", -7);
    RUN_OK(c, 1, &y, "value_int");
    cr_assert(y.dtype == MRT_DTYPE_INT64 && y.rank == 0 && *(int64_t *)y.data == -7);
    free_tensors(1, &y);
    th_free(c);
    c = th_begin("Constant", "", 13);
    th_attr_string(c, "value_string", "hello");
    RUN_OK(c, 1, &y, "value_string");
    cr_assert(y.dtype == MRT_DTYPE_STRING && y.rank == 0 && strcmp(((char **)y.data)[0], "hello") == 0);
    free_tensors(1, &y);
    th_free(c);
    c = th_begin("Constant", "", 13);
    th_attr_float(c, "value_float", 0.25f);
    th_attr_int(c, "value_int", 1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL, "two value attributes must fail");
    th_free(c);
    /* ConstantOfShape: default float zeros, a typed value, an empty shape (scalar), a zero-size dim */
    struct { int64_t n, dims[3]; mrt_dtype dt; double v; } cos_cases[] = {
        {2, {2, 3}, MRT_DTYPE_UNDEFINED, 0}, {3, {1, 0, 2}, MRT_DTYPE_INT32, 7}, {0, {0}, MRT_DTYPE_FLOAT16, 1.5},
        {1, {4}, MRT_DTYPE_BOOL, 1}, {2, {2, 2}, MRT_DTYPE_INT64, -3},
    };
    for (size_t k = 0; k < sizeof cos_cases / sizeof cos_cases[0]; k++) {
        mrt_tensor s = th_vec_i64(cos_cases[k].n, cos_cases[k].dims), v;
        c = th_begin("ConstantOfShape", "", 20);
        if (k % 2) th_input(c, &s);
        else th_input_const(c, &s);
        if (cos_cases[k].dt) {
            v = th_from_f64(cos_cases[k].dt, 1, (int64_t[]){1}, &cos_cases[k].v);
            th_attr_tensor(c, "value", &v);
            mrt_tensor_release(&v);
        }
        RUN_OK(c, 1, &y, "ConstantOfShape %zu", k);
        int64_t n = sref_numel((int)cos_cases[k].n, cos_cases[k].dims);
        double *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++) e[i] = cos_cases[k].v;
        cr_assert_eq(y.dtype, cos_cases[k].dt ? cos_cases[k].dt : MRT_DTYPE_FLOAT);
        char why[256];
        cr_assert(th_check_f64(&y, e, (int)cos_cases[k].n, cos_cases[k].dims, 0, 0, 0, why, sizeof why), "%zu: %s", k,
                  why);
        free(e);
        free_tensors(1, &y);
        mrt_tensor_release(&s);
        th_free(c);
    }
}

Test(shape_ops, range_and_eyelike)
{
    struct { mrt_dtype dt; double s, l, d; } cases[] = {
        {MRT_DTYPE_INT32, 3, 9, 3},      {MRT_DTYPE_INT64, 10, 4, -2}, {MRT_DTYPE_FLOAT, 1, 5, 0.3},
        {MRT_DTYPE_DOUBLE, -1, -8, -1.5}, {MRT_DTYPE_INT16, 5, 5, 1},   {MRT_DTYPE_INT64, 0, 10, -1},
        {MRT_DTYPE_FLOAT, 0, 1, 0.1},    {MRT_DTYPE_INT32, -7, 8, 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mrt_tensor in[3], y;
        double v[3] = {cases[k].s, cases[k].l, cases[k].d};
        for (int i = 0; i < 3; i++) in[i] = th_from_f64(cases[k].dt, 0, NULL, &v[i]);
        th_case *c = th_begin("Range", "", 11);
        for (int i = 0; i < 3; i++) data_input(c, &in[i], k % 2);
        RUN_OK(c, 1, &y, "range %zu", k);
        int64_t n = sref_range_count(cases[k].s, cases[k].l, cases[k].d);
        double *e = malloc((size_t)(n ? n : 1) * sizeof *e);
        for (int64_t i = 0; i < n; i++) e[i] = cases[k].s + (double)i * cases[k].d;
        char why[256];
        cr_assert(th_check_f64(&y, e, 1, &n, 1e-12, 1e-6, 1e-6, why, sizeof why), "range %zu: %s", k, why);
        free(e);
        free_tensors(1, &y);
        free_tensors(3, in);
        th_free(c);
    }
    /* EyeLike */
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::range_and_eyelike"));
    mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, MRT_DTYPE_BOOL, MRT_DTYPE_FLOAT16, MRT_DTYPE_DOUBLE};
    for (int it = 0; it < 20; it++) {
        int64_t shape[2];
        rand_shape(&r, 2, shape, 5, true);
        int64_t k = th_rng_int(&r, -5, 5);
        mrt_tensor x = rand_tensor(&r, MRT_DTYPE_INT64, 2, shape), y;
        th_case *c = th_begin("EyeLike", "", 22);
        data_input(c, &x, it % 2);
        th_attr_int(c, "k", k);
        if (it % 3) th_attr_int(c, "dtype", dts[it % 5]);
        RUN_OK(c, 1, &y, "eyelike");
        cr_assert_eq(y.dtype, it % 3 ? dts[it % 5] : MRT_DTYPE_INT64);
        double *e = calloc((size_t)(shape[0] * shape[1] + 1), sizeof *e);
        for (int64_t i = 0; i < shape[0]; i++)
            for (int64_t j = 0; j < shape[1]; j++) e[i * shape[1] + j] = j - i == k;
        char why[256];
        cr_assert(th_check_f64(&y, e, 2, shape, 0, 0, 0, why, sizeof why), "eyelike %s k %lld: %s",
                  shape_str(2, shape), (long long)k, why);
        free(e);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* ------------------------------------------------------------------ Cast */

/* Spec rules for the plain types: float -> int truncates toward zero, -> bool is "!= 0", bool -> {0, 1}. */
static double cast_expect(double v, mrt_dtype to)
{
    if (to == MRT_DTYPE_BOOL) return v != 0;
    if (mrt_dtype_is_integer(to)) return trunc(v);
    if (to == MRT_DTYPE_FLOAT) return (float)v;
    if (to == MRT_DTYPE_FLOAT16) return mrt_f16_to_f32(mrt_f32_to_f16((float)v));
    if (to == MRT_DTYPE_BFLOAT16) return mrt_bf16_to_f32(mrt_f32_to_bf16((float)v));
    return v;
}

Test(shape_ops, cast_numeric_pairs)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::cast_numeric_pairs"));
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16,
                             MRT_DTYPE_INT8,  MRT_DTYPE_UINT8,  MRT_DTYPE_INT16,   MRT_DTYPE_INT32,
                             MRT_DTYPE_INT64, MRT_DTYPE_UINT64, MRT_DTYPE_UINT32,  MRT_DTYPE_BOOL,
                             MRT_DTYPE_INT4,  MRT_DTYPE_UINT4};
    int nd = (int)(sizeof dts / sizeof dts[0]);
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) {
            mrt_dtype from = dts[a], to = dts[b];
            int64_t shape[2] = {3, 5};
            /* values every involved type can hold: small, non-negative when either side is unsigned */
            bool unsig = from == MRT_DTYPE_UINT8 || to == MRT_DTYPE_UINT8 || from == MRT_DTYPE_UINT64 ||
                         to == MRT_DTYPE_UINT64 || from == MRT_DTYPE_UINT32 || to == MRT_DTYPE_UINT32 ||
                         from == MRT_DTYPE_UINT4 || to == MRT_DTYPE_UINT4;
            bool small = from == MRT_DTYPE_INT4 || to == MRT_DTYPE_INT4 || from == MRT_DTYPE_UINT4 || to == MRT_DTYPE_UINT4;
            double lo = unsig ? 0 : (small ? -8 : -100), hi = small ? 7.9 : 100;
            mrt_tensor x = from == MRT_DTYPE_BOOL ? th_rand(&r, from, 2, shape, 0, 1)
                           : mrt_dtype_is_float(from) ? th_rand(&r, from, 2, shape, lo, hi)
                                                      : th_rand(&r, from, 2, shape, lo, hi);
            if (from != MRT_DTYPE_BOOL) mrt_store_f64(from, x.data, 0, 0.0); /* a zero for bool targets */
            mrt_tensor y;
            th_case *c = th_begin("Cast", "", 21);
            data_input(c, &x, (a + b) % 2);
            th_attr_int(c, "to", to);
            RUN_OK(c, 1, &y, "cast %s -> %s", mrt_dtype_name(from), mrt_dtype_name(to));
            double *xv = th_to_f64(&x), e[15];
            for (int i = 0; i < 15; i++) e[i] = cast_expect(xv[i], to);
            cr_assert_eq(y.dtype, to);
            char why[256];
            cr_assert(th_check_f64(&y, e, 2, shape, 0, 0, 0, why, sizeof why), "cast %s -> %s: %s", mrt_dtype_name(from),
                      mrt_dtype_name(to), why);
            free(xv);
            free_tensors(1, &y);
            mrt_tensor_release(&x);
            th_free(c);
        }
    /* wrap-around of out-of-range integers (spec: discard high bits) and CastLike */
    mrt_tensor x = th_from_f64(MRT_DTYPE_INT16, 1, (int64_t[]){3}, (double[]){200, -200, 300}), y;
    mrt_tensor like = th_from_f64(MRT_DTYPE_INT8, 1, (int64_t[]){1}, (double[]){0});
    th_case *c = th_begin("CastLike", "", 21);
    th_input(c, &x);
    th_input(c, &like);
    RUN_OK(c, 1, &y, "castlike");
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){-56, 56, 44}, 1, (int64_t[]){3}, 0, 0, 0, why, sizeof why), "%s", why);
    free_tensors(1, &y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&like);
    th_free(c);
}

Test(shape_ops, cast_strings)
{
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, (double[]){1.5, -0.25, 100, 3.14159274, 1e-5}), y, z;
    th_case *c = th_begin("Cast", "", 13);
    th_input(c, &x);
    th_attr_int(c, "to", MRT_DTYPE_STRING);
    RUN_OK(c, 1, &y, "float -> string");
    cr_assert_str_eq(((char **)y.data)[0], "1.5");
    cr_assert_str_eq(((char **)y.data)[1], "-0.25");
    cr_assert_str_eq(((char **)y.data)[2], "100");
    th_free(c);
    /* and back: the text round-trips to the same float */
    c = th_begin("Cast", "", 13);
    th_input(c, &y);
    th_attr_int(c, "to", MRT_DTYPE_FLOAT);
    RUN_OK(c, 1, &z, "string -> float");
    CHECK_EQ(&z, &x, "float -> string -> float");
    free_tensors(1, &z);
    free_tensors(1, &y);
    th_free(c);
    mrt_tensor_release(&x);
    /* special literals, integers, and opset 1's string 'to' */
    const char *txt[] = {"INF", "-inf", "+INF", "NaN", "-42", " 7", "2.5e1"};
    mrt_tensor s;
    mrt_tensor_alloc(&s, MRT_DTYPE_STRING, 1, (int64_t[]){7});
    for (int i = 0; i < 7; i++) ((char **)s.data)[i] = strdup(txt[i]);
    c = th_begin("Cast", "", 1);
    th_input(c, &s);
    th_attr_string(c, "to", "DOUBLE");
    RUN_OK(c, 1, &y, "string -> double");
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){INFINITY, -INFINITY, INFINITY, NAN, -42, 7, 25}, 1, (int64_t[]){7}, 0, 0, 0,
                           why, sizeof why),
              "%s", why);
    free_tensors(1, &y);
    th_free(c);
    mrt_tensor_release(&s);
    x = th_from_f64(MRT_DTYPE_INT64, 1, (int64_t[]){2}, (double[]){-123, 4567});
    c = th_begin("Cast", "", 13);
    th_input(c, &x);
    th_attr_int(c, "to", MRT_DTYPE_STRING);
    RUN_OK(c, 1, &y, "int64 -> string");
    cr_assert_str_eq(((char **)y.data)[0], "-123");
    cr_assert_str_eq(((char **)y.data)[1], "4567");
    free_tensors(1, &y);
    th_free(c);
    mrt_tensor_release(&x);
}

Test(shape_ops, cast_float8_float4)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::cast_float8_float4"));
    const mrt_dtype f8[] = {MRT_DTYPE_FLOAT8E4M3FN, MRT_DTYPE_FLOAT8E4M3FNUZ, MRT_DTYPE_FLOAT8E5M2,
                            MRT_DTYPE_FLOAT8E5M2FNUZ, MRT_DTYPE_FLOAT4E2M1};
    for (int k = 0; k < 5; k++) {
        mrt_dtype dt = f8[k];
        bool is4 = dt == MRT_DTYPE_FLOAT4E2M1;
        int64_t n = 400;
        /* values spanning subnormals to overflow, exact ties (midpoints of adjacent codes) and specials */
        double *v = malloc((size_t)n * sizeof *v);
        for (int64_t i = 0; i < n; i++) {
            int kind = (int)th_rng_int(&r, 0, 3);
            double mag = kind == 0 ? th_rng_uniform(&r, 0, 1) : kind == 1 ? th_rng_uniform(&r, 0, 700)
                       : ldexp(th_rng_uniform(&r, 1, 2), (int)th_rng_int(&r, -20, 17));
            if (kind == 3) {
                unsigned cc = (unsigned)th_rng_int(&r, 0, is4 ? 6 : 0x7d);
                double d0 = sref_small_float_decode(dt, cc), d1 = sref_small_float_decode(dt, cc + 1);
                mag = isfinite(d0) && isfinite(d1) ? (d0 + d1) / 2 : d0;
            }
            v[i] = th_rng_int(&r, 0, 1) ? -mag : mag;
        }
        v[0] = INFINITY;
        v[1] = -INFINITY;
        v[2] = is4 ? 0.0 : NAN;
        v[3] = 0.0;
        v[4] = -0.0;
        v[5] = 1e6;
        for (int sat = 0; sat < 2; sat++) {
            mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 1, &n, v), y;
            th_case *c = th_begin("Cast", "", 21);
            data_input(c, &x, sat);
            th_attr_int(c, "to", dt);
            th_attr_int(c, "saturate", sat);
            RUN_OK(c, 1, &y, "cast float -> %s", mrt_dtype_name(dt));
            for (int64_t i = 0; i < n; i++) {
                unsigned got = is4 ? (((uint8_t *)y.data)[i / 2] >> (4 * (i % 2))) & 0xfu : ((uint8_t *)y.data)[i];
                unsigned want = sref_small_float_encode(dt, (float)v[i], sat);
                if (isnan(v[i])) { /* which NaN code is not specified: any NaN will do */
                    cr_assert(isnan(sref_small_float_decode(dt, got)), "%s: NaN -> code 0x%x", mrt_dtype_name(dt), got);
                    continue;
                }
                cr_assert_eq(got, want, "%s saturate=%d: %.9g -> code 0x%x, expected 0x%x", mrt_dtype_name(dt), sat,
                             (float)v[i], got, want);
            }
            free_tensors(1, &y);
            mrt_tensor_release(&x);
            th_free(c);
        }
        free(v);
        /* decoding every code */
        int64_t codes = is4 ? 16 : 256;
        mrt_tensor x, y;
        mrt_tensor_alloc(&x, dt, 1, &codes);
        for (int64_t i = 0; i < codes; i++) {
            if (is4) ((uint8_t *)x.data)[i / 2] |= (uint8_t)(i << (4 * (i % 2)));
            else ((uint8_t *)x.data)[i] = (uint8_t)i;
        }
        th_case *c = th_begin("Cast", "", 21);
        th_input(c, &x);
        th_attr_int(c, "to", MRT_DTYPE_DOUBLE);
        RUN_OK(c, 1, &y, "cast %s -> double", mrt_dtype_name(dt));
        for (int64_t i = 0; i < codes; i++) {
            double got = ((double *)y.data)[i], want = sref_small_float_decode(dt, (unsigned)i);
            cr_assert(got == want || (isnan(got) && isnan(want)), "%s code 0x%llx: got %g, expected %g",
                      mrt_dtype_name(dt), (long long)i, got, want);
        }
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* ------------------------------------------------------------------ Transpose, Concat, Split, Slice */

static const mrt_dtype move_dtypes[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_STRING, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT64,
                                        MRT_DTYPE_BOOL,  MRT_DTYPE_DOUBLE, MRT_DTYPE_INT4,    MRT_DTYPE_UINT8,
                                        MRT_DTYPE_INT32, MRT_DTYPE_UINT4};
#define N_MOVE (int)(sizeof move_dtypes / sizeof move_dtypes[0])

Test(shape_ops, transpose)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::transpose"));
    for (int it = 0; it < 80; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 0, 5), perm[MRT_MAX_RANK];
        int64_t shape[MRT_MAX_RANK], out[MRT_MAX_RANK], p64[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 4, true);
        for (int i = 0; i < rank; i++) perm[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)th_rng_int(&r, 0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        bool given = it % 4 != 0;
        if (!given)
            for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        for (int i = 0; i < rank; i++) p64[i] = perm[i];
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y;
        th_case *c = th_begin("Transpose", "", 21);
        data_input(c, &x, it % 2);
        if (given) th_attr_ints(c, "perm", rank, p64);
        RUN_OK(c, 1, &y, "transpose");
        int64_t *map = sref_transpose_map(rank, shape, perm, out);
        mrt_tensor e = sref_apply_map(&x, rank, out, map, NULL);
        CHECK_EQ(&y, &e, "transpose %s %s", mrt_dtype_name(dt), shape_str(rank, shape));
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* Transposes whose last two dims swap a contiguous axis with a strided one (NCHW <-> NHWC, a matrix transpose) of
   4-byte elements go by 16 x 16 blocks in registers (ops_cpu/transform.c): sizes around and past 16 in both
   axes, batch dims before them, float with NaN payloads and int32, against the index-map reference bit for bit,
   on 1 and 2 threads. */
Test(shape_ops, transpose_blocks_of_4_byte_elements)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::transpose_blocks"));
    static const struct {
        int rank;
        int64_t shape[4];
        int perm[4];
    } cases[] = {
        {4, {1, 96, 7, 9}, {0, 2, 3, 1}},  {4, {2, 5, 6, 33}, {0, 3, 1, 2}}, {2, {70, 33}, {1, 0}},
        {2, {16, 16}, {1, 0}},             {3, {3, 17, 4}, {0, 2, 1}},       {3, {4, 5, 40}, {2, 1, 0}},
        {4, {2, 3, 19, 21}, {1, 0, 3, 2}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int t = 0; t < 2; t++) {
            mrt_dtype dt = t ? MRT_DTYPE_INT32 : MRT_DTYPE_FLOAT;
            int rank = cases[k].rank;
            mrt_tensor x = rand_tensor(&r, dt, rank, cases[k].shape);
            uint32_t *xb = x.data;
            int64_t n = mrt_tensor_numel(&x);
            for (int64_t i = 0; i < n; i += 7) xb[i] = 0x7fc00000u | (uint32_t)i; /* NaN payloads (as float) */
            int64_t p64[4], out[MRT_MAX_RANK];
            for (int i = 0; i < rank; i++) p64[i] = cases[k].perm[i];
            int64_t *map = sref_transpose_map(rank, cases[k].shape, cases[k].perm, out);
            mrt_tensor e = sref_apply_map(&x, rank, out, map, NULL);
            for (int threads = 1; threads <= 2; threads++) {
                th_case *c = th_begin("Transpose", "", 21);
                th_input(c, &x);
                th_attr_ints(c, "perm", rank, p64);
                mrt_session_options o = mrt_session_options_default();
                o.n_threads = threads;
                mrt_tensor y;
                cr_assert_eq(th_run_opt(c, &o, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
                cr_assert(mrt_tensor_numel(&y) == n && memcmp(y.data, e.data, (size_t)n * 4) == 0,
                          "transpose %s %s case %zu, %d threads: not the reference's bits", mrt_dtype_name(dt),
                          shape_str(rank, cases[k].shape), k, threads);
                mrt_tensor_release(&y);
                th_free(c);
            }
            free(map);
            mrt_tensor_release(&e);
            mrt_tensor_release(&x);
        }
}

Test(shape_ops, concat)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::concat"));
    for (int it = 0; it < 60; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 4), n = (int)th_rng_int(&r, 1, 4);
        int64_t base[MRT_MAX_RANK], shapes[4][MRT_MAX_RANK], out[MRT_MAX_RANK];
        rand_shape(&r, rank, base, 3, true);
        int64_t axis = th_rng_int(&r, -rank, rank - 1);
        int a = (int)(axis < 0 ? axis + rank : axis);
        mrt_tensor xs[4], y;
        const int64_t *sp[4];
        th_case *c = th_begin("Concat", "", 13);
        for (int k = 0; k < n; k++) {
            memcpy(shapes[k], base, sizeof base);
            shapes[k][a] = th_rng_int(&r, 0, 3);
            sp[k] = shapes[k];
            xs[k] = rand_tensor(&r, dt, rank, shapes[k]);
            data_input(c, &xs[k], (it + k) % 2);
        }
        th_attr_int(c, "axis", axis);
        RUN_OK(c, 1, &y, "concat");
        int *src;
        int64_t *map = sref_concat_map(n, rank, sp, a, out, &src);
        /* expected: element by element from the input the map names */
        mrt_tensor e;
        mrt_tensor_alloc(&e, dt, rank, out);
        for (int64_t i = 0; i < sref_numel(rank, out); i++) {
            mrt_tensor one = sref_apply_map(&xs[src[i]], 1, (int64_t[]){1}, &map[i], NULL);
            if (dt == MRT_DTYPE_STRING) ((char **)e.data)[i] = strdup(((char **)one.data)[0]);
            else if (mrt_dtype_bits(dt) >= 8) memcpy((char *)e.data + i * mrt_dtype_bits(dt) / 8, one.data, (size_t)mrt_dtype_bits(dt) / 8);
            else mrt_store_i64(dt, e.data, i, mrt_load_i64(dt, one.data, 0));
            mrt_tensor_release(&one);
        }
        CHECK_EQ(&y, &e, "concat %d x %s axis %lld", n, mrt_dtype_name(dt), (long long)axis);
        free(map);
        free(src);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        free_tensors(n, xs);
        th_free(c);
    }
    /* mismatched dims: an error naming both shapes */
    mrt_tensor a, b, y;
    mrt_tensor_alloc(&a, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
    mrt_tensor_alloc(&b, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 3});
    th_case *c = th_begin("Concat", "", 13);
    th_input(c, &a);
    th_input(c, &b);
    th_attr_int(c, "axis", 1);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "[3,3]") && strstr(mrt_last_error(), "[2,3]"), "%s", mrt_last_error());
    th_free(c);
    mrt_tensor_release(&a);
    mrt_tensor_release(&b);
}

Test(shape_ops, split)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::split"));
    for (int it = 0; it < 60; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 3), n_out = (int)th_rng_int(&r, 1, 4), mode = it % 4;
        int64_t shape[MRT_MAX_RANK], sizes[4];
        rand_shape(&r, rank, shape, 3, true);
        int64_t axis = th_rng_int(&r, -rank, rank - 1);
        int a = (int)(axis < 0 ? axis + rank : axis), opset = 13;
        if (mode == 0) { /* explicit sizes as an input */
            shape[a] = 0;
            for (int k = 0; k < n_out; k++) shape[a] += sizes[k] = th_rng_int(&r, 0, 3);
        } else if (mode == 1) { /* explicit sizes as an attribute (opset 11) */
            opset = 11;
            shape[a] = 0;
            for (int k = 0; k < n_out; k++) shape[a] += sizes[k] = th_rng_int(&r, 0, 3);
        } else if (mode == 2) { /* num_outputs, last chunk smaller (opset 18) */
            opset = 18;
            shape[a] = th_rng_int(&r, 0, 8);
            int64_t chunk = (shape[a] + n_out - 1) / n_out; /* spec: ceil(dim / num_outputs), the last smaller */
            if (shape[a] - chunk * (n_out - 1) < 0) shape[a] = chunk * n_out;
            for (int k = 0; k < n_out; k++) sizes[k] = k < n_out - 1 ? chunk : shape[a] - chunk * (n_out - 1);
        } else { /* equal split */
            shape[a] = n_out * th_rng_int(&r, 0, 2);
            for (int k = 0; k < n_out; k++) sizes[k] = shape[a] / n_out;
        }
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), s = th_vec_i64(n_out, sizes), ys[4];
        th_case *c = th_begin("Split", "", opset);
        data_input(c, &x, it % 2);
        if (mode == 0) th_input_const(c, &s);
        if (mode == 1) th_attr_ints(c, "split", n_out, sizes);
        if (mode == 2) th_attr_int(c, "num_outputs", n_out);
        th_attr_int(c, "axis", axis);
        RUN_OK(c, n_out, ys, "split mode %d %s", mode, shape_str(rank, shape));
        int64_t pos = 0;
        for (int k = 0; k < n_out; k++) {
            int64_t st = pos, en = pos + sizes[k], ax = a, out[MRT_MAX_RANK];
            int64_t *map = sref_slice_map(rank, shape, 1, &st, &en, &ax, NULL, out);
            mrt_tensor e = sref_apply_map(&x, rank, out, map, NULL);
            CHECK_EQ(&ys[k], &e, "split mode %d %s output %d", mode, shape_str(rank, shape), k);
            pos += sizes[k];
            free(map);
            mrt_tensor_release(&e);
        }
        free_tensors(n_out, ys);
        mrt_tensor_release(&x);
        mrt_tensor_release(&s);
        th_free(c);
    }
}

Test(shape_ops, slice)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::slice"));
    const int64_t extremes[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, -INT64_MAX};
    for (int it = 0; it < 120; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 4);
        int64_t shape[MRT_MAX_RANK], out[MRT_MAX_RANK], starts[4], ends[4], axes[4], steps[4];
        rand_shape(&r, rank, shape, 6, true);
        int n = (int)th_rng_int(&r, 1, rank);
        int order[MRT_MAX_RANK];
        for (int i = 0; i < rank; i++) order[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)th_rng_int(&r, 0, i), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int opset = it % 5 == 0 ? 1 : it % 5 == 1 ? 10 : 13;
        for (int k = 0; k < n; k++) {
            axes[k] = th_rng_int(&r, 0, 1) ? order[k] - rank : order[k];
            starts[k] = th_rng_int(&r, -8, 8);
            ends[k] = th_rng_int(&r, -8, 8);
            steps[k] = opset == 1 ? 1 : th_rng_int(&r, 1, 3) * (th_rng_int(&r, 0, 2) ? 1 : -1);
            if (th_rng_int(&r, 0, 5) == 0) ends[k] = extremes[th_rng_int(&r, 0, 3)];
            if (th_rng_int(&r, 0, 7) == 0) starts[k] = extremes[th_rng_int(&r, 0, 3)];
        }
        bool with_axes = it % 3 != 0;
        if (!with_axes)
            for (int k = 0; k < n; k++) axes[k] = k;
        mrt_dtype idt = it % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64;
        if (idt == MRT_DTYPE_INT32)
            for (int k = 0; k < n; k++) {
                starts[k] = starts[k] > INT32_MAX ? INT32_MAX : starts[k] < INT32_MIN ? INT32_MIN : starts[k];
                ends[k] = ends[k] > INT32_MAX ? INT32_MAX : ends[k] < INT32_MIN ? INT32_MIN : ends[k];
            }
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y;
        mrt_tensor ts = vec(n, starts, idt), te = vec(n, ends, idt), ta = vec(n, axes, idt), tp = vec(n, steps, idt);
        th_case *c = th_begin("Slice", "", opset);
        data_input(c, &x, it % 2);
        if (opset == 1) {
            th_attr_ints(c, "starts", n, starts);
            th_attr_ints(c, "ends", n, ends);
            if (with_axes) th_attr_ints(c, "axes", n, axes);
        } else {
            bool rt = it % 7 == 0; /* starts from a run-time input: the shape is known only at run */
            if (rt) th_input(c, &ts);
            else th_input_const(c, &ts);
            th_input_const(c, &te);
            if (with_axes || it % 2) th_input_const(c, &ta);
            else th_input_absent(c);
            th_input_const(c, &tp);
        }
        RUN_OK(c, 1, &y, "slice %s opset %d", shape_str(rank, shape), opset);
        int64_t *map = sref_slice_map(rank, shape, n, starts, ends, axes, opset == 1 ? NULL : steps, out);
        mrt_tensor e = sref_apply_map(&x, rank, out, map, NULL);
        CHECK_EQ(&y, &e, "slice %s %s starts %lld ends %lld steps %lld axis %lld", mrt_dtype_name(dt),
                 shape_str(rank, shape), (long long)starts[0], (long long)ends[0], (long long)steps[0],
                 (long long)axes[0]);
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&ts);
        mrt_tensor_release(&te);
        mrt_tensor_release(&ta);
        mrt_tensor_release(&tp);
        th_free(c);
    }
}

/* ------------------------------------------------------------------ Gather family */

static mrt_tensor rand_indices(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, int64_t dim, int64_t **vals)
{
    int64_t n = sref_numel(rank, shape);
    *vals = malloc((size_t)(n ? n : 1) * sizeof **vals);
    for (int64_t i = 0; i < n; i++) (*vals)[i] = th_rng_int(r, -dim, dim - 1);
    mrt_tensor t;
    mrt_tensor_alloc(&t, dt, rank, shape);
    for (int64_t i = 0; i < n; i++) mrt_store_i64(dt, t.data, i, (*vals)[i]);
    return t;
}

Test(shape_ops, gather)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::gather"));
    for (int it = 0; it < 80; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 3), irank = (int)th_rng_int(&r, 0, 2), out_rank;
        int64_t shape[MRT_MAX_RANK], ishape[MRT_MAX_RANK], out[MRT_MAX_RANK], *iv, bad;
        rand_shape(&r, rank, shape, 4, true);
        rand_shape(&r, irank, ishape, 3, true);
        int64_t axis = th_rng_int(&r, -rank, rank - 1);
        int a = (int)(axis < 0 ? axis + rank : axis);
        if (shape[a] == 0) shape[a] = 2;
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y;
        mrt_tensor idx = rand_indices(&r, it % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, irank, ishape, shape[a], &iv);
        th_case *c = th_begin("Gather", "", 13);
        data_input(c, &x, it % 3 == 0);
        data_input(c, &idx, it % 4 == 0);
        th_attr_int(c, "axis", axis);
        RUN_OK(c, 1, &y, "gather");
        int64_t *map = sref_gather_map(rank, shape, a, irank, ishape, iv, &out_rank, out, &bad);
        mrt_tensor e = sref_apply_map(&x, out_rank, out, map, NULL);
        CHECK_EQ(&y, &e, "gather %s %s axis %lld indices %s", mrt_dtype_name(dt), shape_str(rank, shape),
                 (long long)axis, shape_str(irank, ishape));
        free(map);
        free(iv);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&idx);
        th_free(c);
    }
    /* out-of-range index: both at plan time (constants) and at run time; the message names the index */
    for (int fold = 0; fold < 2; fold++) {
        mrt_tensor x, y, idx = th_vec_i64(3, (int64_t[]){0, 5, 1});
        mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, (int64_t[]){3, 2});
        th_case *c = th_begin("Gather", "", 13);
        data_input(c, &x, fold);
        data_input(c, &idx, fold);
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_ARG);
        cr_assert(strstr(mrt_last_error(), "index 5") != NULL, "%s", mrt_last_error());
        th_free(c);
        mrt_tensor_release(&x);
        mrt_tensor_release(&idx);
    }
}

Test(shape_ops, gather_elements_and_nd)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::gather_elements_and_nd"));
    for (int it = 0; it < 60; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 3);
        int64_t shape[MRT_MAX_RANK], ishape[MRT_MAX_RANK], *iv;
        rand_shape(&r, rank, shape, 4, false);
        int64_t axis = th_rng_int(&r, -rank, rank - 1);
        int a = (int)(axis < 0 ? axis + rank : axis);
        for (int d = 0; d < rank; d++) ishape[d] = d == a ? th_rng_int(&r, 0, 4) : th_rng_int(&r, 1, shape[d]);
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y;
        mrt_tensor idx = rand_indices(&r, it % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, rank, ishape, shape[a], &iv);
        th_case *c = th_begin("GatherElements", "", 13);
        data_input(c, &x, it % 2);
        th_input(c, &idx);
        th_attr_int(c, "axis", axis);
        RUN_OK(c, 1, &y, "gather_elements");
        int64_t *map = sref_gather_elements_map(rank, shape, a, ishape, iv);
        mrt_tensor e = sref_apply_map(&x, rank, ishape, map, NULL);
        CHECK_EQ(&y, &e, "gather_elements %s axis %lld", shape_str(rank, shape), (long long)axis);
        free(map);
        free(iv);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&idx);
        /* GatherND, batch_dims 0 or 1 */
        int b = rank > 1 && it % 2 ? 1 : 0, irank = b + (int)th_rng_int(&r, 1, 2), out_rank;
        int64_t m = th_rng_int(&r, 1, rank - b), out[MRT_MAX_RANK];
        for (int d = 0; d < irank - 1; d++) ishape[d] = d < b ? shape[d] : th_rng_int(&r, 0, 3);
        ishape[irank - 1] = m;
        int64_t nidx = sref_numel(irank, ishape);
        iv = malloc((size_t)(nidx ? nidx : 1) * sizeof *iv);
        for (int64_t i = 0; i < nidx; i++) {
            int64_t dim = shape[b + i % m];
            iv[i] = th_rng_int(&r, -dim, dim - 1);
        }
        idx = th_vec_i64(nidx, iv);
        idx.rank = irank;
        memcpy(idx.shape, ishape, sizeof ishape);
        c = (th_free(c), th_begin("GatherND", "", 13));
        data_input(c, &x, it % 3 == 0);
        th_input(c, &idx);
        th_attr_int(c, "batch_dims", b);
        RUN_OK(c, 1, &y, "gather_nd");
        map = sref_gather_nd_map(rank, shape, irank, ishape, iv, b, &out_rank, out);
        e = sref_apply_map(&x, out_rank, out, map, NULL);
        CHECK_EQ(&y, &e, "gather_nd %s indices %s batch_dims %d", shape_str(rank, shape), shape_str(irank, ishape), b);
        free(map);
        free(iv);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&idx);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(shape_ops, scatter)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::scatter"));
    const char *reds[] = {"none", "add", "mul", "max", "min"};
    const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, MRT_DTYPE_DOUBLE, MRT_DTYPE_INT64, MRT_DTYPE_FLOAT16};
    for (int it = 0; it < 60; it++) {
        mrt_dtype dt = dts[it % 5];
        const char *red = reds[it % 5];
        bool is_none = strcmp(red, "none") == 0;
        int rank = (int)th_rng_int(&r, 1, 3);
        int64_t shape[MRT_MAX_RANK], ishape[MRT_MAX_RANK], *iv;
        rand_shape(&r, rank, shape, 4, false);
        int64_t axis = th_rng_int(&r, -rank, rank - 1);
        int a = (int)(axis < 0 ? axis + rank : axis);
        for (int d = 0; d < rank; d++) ishape[d] = th_rng_int(&r, 1, shape[d]);
        mrt_tensor x = th_rand(&r, dt, rank, shape, -3, 3), y;
        mrt_tensor upd = th_rand(&r, dt, rank, ishape, -3, 3);
        mrt_tensor idx = rand_indices(&r, it % 2 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, rank, ishape, shape[a], &iv);
        if (is_none) { /* duplicates are undefined without a reduction: make indices distinct along the axis */
            int64_t n = sref_numel(rank, ishape), o[MRT_MAX_RANK];
            for (int64_t i = 0; i < n; i++) {
                sref_unravel(i, rank, ishape, o);
                iv[i] = o[a] - (th_rng_int(&r, 0, 1) ? shape[a] : 0);
                mrt_store_i64(idx.dtype, idx.data, i, iv[i]);
            }
        }
        th_case *c = th_begin(it % 10 == 0 ? "Scatter" : "ScatterElements", "", it % 10 == 0 ? 9 : 18);
        data_input(c, &x, it % 2);
        th_input(c, &idx);
        th_input(c, &upd);
        th_attr_int(c, "axis", axis);
        if (it % 10 != 0) th_attr_string(c, "reduction", red);
        RUN_OK(c, 1, &y, "scatter_elements");
        double *e = th_to_f64(&x), *u = th_to_f64(&upd);
        sref_scatter_elements(rank, shape, e, a, ishape, iv, u, it % 10 == 0 ? "none" : red);
        for (int64_t i = 0; i < sref_numel(rank, shape); i++) e[i] = mrt_load_f64(dt, (mrt_store_f64(dt, x.data, i, e[i]), x.data), i);
        char why[256];
        double tabs = dt == MRT_DTYPE_FLOAT16 ? 2e-2 : 1e-6, trel = dt == MRT_DTYPE_FLOAT16 ? 1e-2 : 1e-6;
        cr_assert(th_check_f64(&y, e, rank, shape, 1e-6, tabs, trel, why, sizeof why), "scatter_elements %s %s %s: %s",
                  red, mrt_dtype_name(dt), shape_str(rank, shape), why);
        free(e);
        free(u);
        free(iv);
        free_tensors(1, &y);
        mrt_tensor_release(&upd);
        mrt_tensor_release(&idx);
        th_free(c);
        /* ScatterND: tuples of k leading coordinates */
        int64_t k = th_rng_int(&r, 1, rank), nt = th_rng_int(&r, 1, 4), ushape[MRT_MAX_RANK];
        int64_t tshape[2] = {nt, k};
        iv = malloc((size_t)(nt * k) * sizeof *iv);
        for (int64_t t = 0; t < nt; t++)
            for (int64_t d = 0; d < k; d++) iv[t * k + d] = th_rng_int(&r, -shape[d], shape[d] - 1);
        if (is_none) /* distinct tuples: the first coordinate is the tuple number (when it fits) */
            for (int64_t t = 0; t < nt; t++) iv[t * k] = t < shape[0] ? t : iv[t * k];
        if (is_none && nt > shape[0]) nt = shape[0], tshape[0] = nt;
        ushape[0] = nt;
        for (int d = (int)k; d < rank; d++) ushape[1 + d - k] = shape[d];
        int urank = 1 + rank - (int)k;
        idx = th_vec_i64(nt * k, iv);
        idx.rank = 2;
        memcpy(idx.shape, tshape, sizeof tshape);
        upd = th_rand(&r, dt, urank, ushape, -3, 3);
        mrt_tensor_release(&x);
        x = th_rand(&r, dt, rank, shape, -3, 3);
        c = th_begin("ScatterND", "", 18);
        data_input(c, &x, it % 2);
        th_input(c, &idx);
        th_input(c, &upd);
        th_attr_string(c, "reduction", red);
        RUN_OK(c, 1, &y, "scatter_nd");
        e = th_to_f64(&x);
        u = th_to_f64(&upd);
        sref_scatter_nd(rank, shape, e, 2, tshape, iv, u, red);
        for (int64_t i = 0; i < sref_numel(rank, shape); i++) e[i] = mrt_load_f64(dt, (mrt_store_f64(dt, x.data, i, e[i]), x.data), i);
        cr_assert(th_check_f64(&y, e, rank, shape, 1e-6, tabs, trel, why, sizeof why), "scatter_nd %s %s %s: %s", red,
                  mrt_dtype_name(dt), shape_str(rank, shape), why);
        free(e);
        free(u);
        free(iv);
        free_tensors(1, &y);
        mrt_tensor_release(&upd);
        mrt_tensor_release(&idx);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* ------------------------------------------------------------------ Tile, Pad, DepthToSpace, Trilu... */

Test(shape_ops, tile_and_pad)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::tile_and_pad"));
    const char *modes[] = {"constant", "reflect", "edge", "wrap"};
    for (int it = 0; it < 80; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 0, 3);
        int64_t shape[MRT_MAX_RANK], out[MRT_MAX_RANK], rep[MRT_MAX_RANK], pads[2 * MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 3, it % 4 == 0);
        for (int d = 0; d < rank; d++) rep[d] = th_rng_int(&r, 0, 3);
        mrt_tensor x = rand_tensor(&r, dt, rank, shape), y, rt = th_vec_i64(rank, rep);
        th_case *c = th_begin("Tile", "", 13);
        data_input(c, &x, it % 2);
        th_input_const(c, &rt);
        RUN_OK(c, 1, &y, "tile");
        int64_t *map = sref_tile_map(rank, shape, rep, out);
        mrt_tensor e = sref_apply_map(&x, rank, out, map, NULL);
        CHECK_EQ(&y, &e, "tile %s", shape_str(rank, shape));
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&rt);
        th_free(c);
        /* Pad: pads may be negative (crop); reflect/edge/wrap need non-empty axes */
        const char *mode = modes[it % 4];
        bool empty = sref_numel(rank, shape) == 0;
        if (empty && strcmp(mode, "constant") != 0) mode = "constant";
        for (int d = 0; d < rank; d++) {
            pads[d] = th_rng_int(&r, -shape[d] / 2, 4);
            pads[rank + d] = th_rng_int(&r, -shape[d] / 2, 4);
            if (pads[d] + pads[rank + d] + shape[d] < 0) pads[rank + d] = -shape[d] - pads[d];
        }
        int opset = it % 3 == 0 ? 2 : it % 3 == 1 ? 13 : 19;
        if (strcmp(mode, "wrap") == 0) opset = 19; /* wrap arrived in Pad-19 */
        mrt_tensor pt = th_vec_i64(2 * rank, pads), cv = rand_tensor(&r, dt, 0, NULL);
        c = th_begin("Pad", "", opset);
        data_input(c, &x, it % 2);
        th_attr_string(c, "mode", mode);
        if (opset == 2) {
            th_attr_ints(c, "pads", 2 * rank, pads);
            if (mrt_dtype_is_float(dt)) th_attr_float(c, "value", 1.5f);
        } else {
            th_input_const(c, &pt);
            if (dt != MRT_DTYPE_INT4 && dt != MRT_DTYPE_UINT4) th_input(c, &cv);
        }
        RUN_OK(c, 1, &y, "pad %s %s", mode, shape_str(rank, shape));
        map = sref_pad_map(rank, shape, pads, mode, out);
        mrt_tensor fill = {0};
        if (opset == 2) fill = th_from_f64(dt == MRT_DTYPE_STRING ? MRT_DTYPE_FLOAT : dt, 0, NULL,
                                            (double[]){mrt_dtype_is_float(dt) ? 1.5 : 0});
        bool has_cv = opset != 2 && dt != MRT_DTYPE_INT4 && dt != MRT_DTYPE_UINT4;
        e = sref_apply_map(&x, rank, out, map, has_cv ? &cv : opset == 2 && dt != MRT_DTYPE_STRING ? &fill : NULL);
        CHECK_EQ(&y, &e, "pad %s %s %s opset %d pads[0] %lld", mode, mrt_dtype_name(dt), shape_str(rank, shape), opset,
                 (long long)(rank ? pads[0] : 0));
        if (opset == 2) mrt_tensor_release(&fill);
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&pt);
        mrt_tensor_release(&cv);
        mrt_tensor_release(&x);
        th_free(c);
    }
    /* Pad-18 with an axes input (negative axis) */
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6}), y;
    mrt_tensor pt = th_vec_i64(2, (int64_t[]){1, 2}), at = th_vec_i64(1, (int64_t[]){-1});
    th_case *c = th_begin("Pad", "", 18);
    th_input(c, &x);
    th_input_const(c, &pt);
    th_input_absent(c);
    th_input_const(c, &at);
    th_attr_string(c, "mode", "reflect");
    RUN_OK(c, 1, &y, "pad axes");
    char why[256];
    cr_assert(th_check_f64(&y, (double[]){2, 1, 2, 3, 2, 1, 5, 4, 5, 6, 5, 4}, 2, (int64_t[]){2, 6}, 0, 0, 0, why,
                           sizeof why),
              "%s", why);
    free_tensors(1, &y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&pt);
    mrt_tensor_release(&at);
    th_free(c);
}

Test(shape_ops, depth_space_trilu_reverse)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::depth_space_trilu_reverse"));
    for (int it = 0; it < 40; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int64_t bs = th_rng_int(&r, 1, 3), s[4], out[4];
        bool crd = it % 2;
        s[0] = th_rng_int(&r, 1, 2);
        s[1] = bs * bs * th_rng_int(&r, 1, 2);
        s[2] = th_rng_int(&r, 1, 3);
        s[3] = th_rng_int(&r, 1, 3);
        mrt_tensor x = rand_tensor(&r, dt, 4, s), y;
        th_case *c = th_begin("DepthToSpace", "", 13);
        data_input(c, &x, it % 3 == 0);
        th_attr_int(c, "blocksize", bs);
        th_attr_string(c, "mode", crd ? "CRD" : "DCR");
        RUN_OK(c, 1, &y, "depth_to_space");
        int64_t *map = sref_depth_to_space_map(s, bs, crd, out);
        mrt_tensor e = sref_apply_map(&x, 4, out, map, NULL);
        CHECK_EQ(&y, &e, "depth_to_space %s bs %lld %s", shape_str(4, s), (long long)bs, crd ? "CRD" : "DCR");
        free(map);
        mrt_tensor_release(&e);
        th_free(c);
        /* SpaceToDepth inverts it (DCR at opset 13; both modes at 28) */
        mrt_tensor z;
        c = th_begin("SpaceToDepth", "", 28);
        th_input(c, &y);
        th_attr_int(c, "blocksize", bs);
        th_attr_string(c, "mode", crd ? "CRD" : "DCR");
        RUN_OK(c, 1, &z, "space_to_depth");
        map = sref_space_to_depth_map(out, bs, crd, s);
        e = sref_apply_map(&y, 4, s, map, NULL);
        CHECK_EQ(&z, &e, "space_to_depth %s", shape_str(4, out));
        CHECK_EQ(&z, &x, "space_to_depth(depth_to_space(x)) == x");
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &z);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
        /* Trilu: any k, including far outside the matrix */
        int rank = (int)th_rng_int(&r, 2, 4);
        int64_t sh[MRT_MAX_RANK];
        rand_shape(&r, rank, sh, 4, true);
        int64_t k = it % 7 == 0 ? (it % 2 ? INT64_MAX : INT64_MIN) : th_rng_int(&r, -5, 5);
        bool upper = it % 3 != 0;
        x = rand_tensor(&r, dt, rank, sh);
        mrt_tensor kt = th_scalar_i64(k);
        c = th_begin("Trilu", "", 14);
        data_input(c, &x, it % 2);
        if (k != 0 || it % 2) th_input_const(c, &kt);
        th_attr_int(c, "upper", upper);
        RUN_OK(c, 1, &y, "trilu");
        map = sref_trilu_map(rank, sh, k, upper);
        e = sref_apply_map(&x, rank, sh, map, NULL);
        CHECK_EQ(&y, &e, "trilu %s k %lld upper %d", shape_str(rank, sh), (long long)k, upper);
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&kt);
        mrt_tensor_release(&x);
        th_free(c);
        /* ReverseSequence */
        int bax = it % 2, tax = 1 - bax;
        rank = (int)th_rng_int(&r, 2, 3);
        rand_shape(&r, rank, sh, 4, false);
        int64_t lens[8];
        for (int64_t b = 0; b < sh[bax]; b++) lens[b] = th_rng_int(&r, 0, sh[tax]);
        x = rand_tensor(&r, dt, rank, sh);
        mrt_tensor lt = th_vec_i64(sh[bax], lens);
        c = th_begin("ReverseSequence", "", 10);
        data_input(c, &x, it % 2);
        th_input(c, &lt);
        th_attr_int(c, "batch_axis", bax);
        th_attr_int(c, "time_axis", tax);
        RUN_OK(c, 1, &y, "reverse_sequence");
        map = sref_reverse_sequence_map(rank, sh, bax, tax, lens);
        e = sref_apply_map(&x, rank, sh, map, NULL);
        CHECK_EQ(&y, &e, "reverse_sequence %s batch_axis %d", shape_str(rank, sh), bax);
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&lt);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(shape_ops, compress_onehot_nonzero)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops::compress_onehot_nonzero"));
    for (int it = 0; it < 50; it++) {
        mrt_dtype dt = move_dtypes[it % N_MOVE];
        int rank = (int)th_rng_int(&r, 1, 3), out_rank;
        int64_t shape[MRT_MAX_RANK], out[MRT_MAX_RANK];
        rand_shape(&r, rank, shape, 4, true);
        int axis = it % 3 == 0 ? -1 : (int)th_rng_int(&r, 0, rank - 1);
        int64_t len = axis < 0 ? sref_numel(rank, shape) : shape[axis];
        int64_t nc = th_rng_int(&r, 0, len);
        mrt_tensor cond = th_rand(&r, MRT_DTYPE_BOOL, 1, &nc, 0, 1), x = rand_tensor(&r, dt, rank, shape), y;
        th_case *c = th_begin("Compress", "", 11);
        data_input(c, &x, it % 2);
        data_input(c, &cond, it % 4 < 2);
        if (axis >= 0) th_attr_int(c, "axis", it % 2 ? axis - rank : axis);
        RUN_OK(c, 1, &y, "compress");
        int64_t *map = sref_compress_map(rank, shape, cond.data, nc, axis, &out_rank, out);
        mrt_tensor e = sref_apply_map(&x, out_rank, out, map, NULL);
        CHECK_EQ(&y, &e, "compress %s axis %d cond %lld", shape_str(rank, shape), axis, (long long)nc);
        free(map);
        mrt_tensor_release(&e);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        mrt_tensor_release(&cond);
        th_free(c);
        /* OneHot: float or int indices, negative and out-of-range ones */
        int64_t depth = th_rng_int(&r, 1, 5);
        mrt_dtype idt = it % 2 ? MRT_DTYPE_FLOAT : MRT_DTYPE_INT64, vdt = it % 3 ? MRT_DTYPE_FLOAT : MRT_DTYPE_INT32;
        mrt_tensor idx = th_rand(&r, idt, rank, shape, -depth - 1, depth + 1);
        mrt_tensor dep = th_scalar_i64(depth), vals = th_from_f64(vdt, 1, (int64_t[]){2}, (double[]){-1, 3});
        int64_t oaxis = th_rng_int(&r, -rank - 1, rank);
        c = th_begin("OneHot", "", 11);
        th_input(c, &idx);
        data_input(c, &dep, it % 4 != 1);
        th_input_const(c, &vals);
        th_attr_int(c, "axis", oaxis);
        RUN_OK(c, 1, &y, "onehot");
        int oa = (int)(oaxis < 0 ? oaxis + rank + 1 : oaxis);
        for (int d = 0, j = 0; d <= rank; d++) out[d] = d == oa ? depth : shape[j++];
        double *iv = th_to_f64(&idx), *ev = malloc((size_t)(sref_numel(rank + 1, out) + 1) * sizeof *ev);
        sref_one_hot(rank, shape, iv, depth, oa, -1, 3, ev);
        char why[256];
        cr_assert(th_check_f64(&y, ev, rank + 1, out, 0, 0, 0, why, sizeof why), "onehot %s axis %lld depth %lld: %s",
                  shape_str(rank, shape), (long long)oaxis, (long long)depth, why);
        free(iv);
        free(ev);
        free_tensors(1, &y);
        mrt_tensor_release(&idx);
        mrt_tensor_release(&dep);
        mrt_tensor_release(&vals);
        th_free(c);
        /* NonZero (rank 0 included) */
        int nrank = (int)th_rng_int(&r, 0, 3);
        const mrt_dtype nz_dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT32, MRT_DTYPE_BOOL, MRT_DTYPE_FLOAT16};
        rand_shape(&r, nrank, shape, 4, true);
        x = th_rand(&r, nz_dts[it % 4], nrank, shape, -1, 1);
        if (mrt_dtype_is_float(x.dtype))
            for (int64_t i = 0; i < sref_numel(nrank, shape); i++)
                if (th_rng_int(&r, 0, 1)) mrt_store_f64(x.dtype, x.data, i, 0.0);
        c = th_begin("NonZero", "", 13);
        data_input(c, &x, it % 2);
        RUN_OK(c, 1, &y, "nonzero");
        double *xv = th_to_f64(&x);
        int64_t *coords, cnt = sref_nonzero(nrank, shape, xv, &coords);
        int64_t oshape[2] = {nrank ? nrank : 1, cnt};
        double *cv = malloc((size_t)(oshape[0] * cnt + 1) * sizeof *cv);
        for (int64_t i = 0; i < oshape[0] * cnt; i++) cv[i] = (double)coords[i];
        cr_assert(th_check_f64(&y, cv, 2, oshape, 0, 0, 0, why, sizeof why), "nonzero %s: %s", shape_str(nrank, shape), why);
        free(cv);
        free(coords);
        free(xv);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* NonZero of bool, int8 and uint8 (the byte path): byte values other than 0/1, rows that end in zeros or are all
   zeros or all set, ranks 1 to 4, against the reference's coordinates. */
Test(shape_ops, nonzero_of_bytes)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape.nonzero_bytes"));
    const mrt_dtype dts[] = {MRT_DTYPE_BOOL, MRT_DTYPE_INT8, MRT_DTYPE_UINT8};
    for (int it = 0; it < 36; it++) {
        int rank = 1 + it % 4;
        int64_t shape[4], n = 1;
        rand_shape(&r, rank, shape, it < 8 ? 3 : 40, true);
        for (int d = 0; d < rank; d++) n *= shape[d];
        mrt_dtype dt = dts[it % 3];
        int density = (int)th_rng_int(&r, 0, 4); /* 0: none set, 4: all set */
        double *xv = malloc((size_t)(n + 1) * sizeof *xv);
        for (int64_t i = 0; i < n; i++) {
            bool set = th_rng_int(&r, 1, 4) <= density;
            xv[i] = !set ? 0 : dt == MRT_DTYPE_BOOL ? 1 : dt == MRT_DTYPE_INT8 ? (double)th_rng_int(&r, -128, -1) : (double)th_rng_int(&r, 2, 255);
        }
        mrt_tensor x = th_from_f64(dt, rank, shape, xv), y;
        th_case *c = th_begin("NonZero", "", 13);
        th_input(c, &x);
        RUN_OK(c, 1, &y, "nonzero");
        int64_t *coords, cnt = sref_nonzero(rank, shape, xv, &coords);
        int64_t oshape[2] = {rank, cnt};
        double *cv = malloc((size_t)(rank * cnt + 1) * sizeof *cv);
        for (int64_t i = 0; i < rank * cnt; i++) cv[i] = (double)coords[i];
        char why[256];
        cr_assert(th_check_f64(&y, cv, 2, oshape, 0, 0, 0, why, sizeof why), "nonzero %s %s: %s", mrt_dtype_name(dt),
                  shape_str(rank, shape), why);
        free(cv);
        free(coords);
        free(xv);
        free_tensors(1, &y);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

/* TensorScatter: a [2, 5, 2] cache gets a 2-step update at write index 1 (batch 0) and, circularly, 4 (batch 1:
   positions 4 then 0); everything else keeps the past values. Linear mode refuses the write past the end. */
Test(shape, tensor_scatter_linear_and_circular)
{
    double past[20], upd[8];
    for (int i = 0; i < 20; i++) past[i] = 100 + i;
    for (int i = 0; i < 8; i++) upd[i] = i + 1;
    mrt_tensor p = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 5, 2}, past);
    mrt_tensor u = th_from_f64(MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 2, 2}, upd);
    mrt_tensor wi = th_vec_i64(2, (int64_t[]){1, 4});
    th_case *c = th_begin("TensorScatter", "", 24);
    th_input(c, &p);
    th_input(c, &u);
    th_input(c, &wi);
    th_attr_string(c, "mode", "circular");
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    double want[20];
    memcpy(want, past, sizeof want);
    /* batch 0: rows 1, 2 <- update rows 0, 1; batch 1: rows 4, 0 <- update rows 0, 1 */
    want[2] = 1, want[3] = 2, want[4] = 3, want[5] = 4;
    want[10 + 8] = 5, want[10 + 9] = 6, want[10 + 0] = 7, want[10 + 1] = 8;
    for (int i = 0; i < 20; i++) cr_assert_eq(((float *)y.data)[i], (float)want[i], "element %d", i);
    mrt_tensor_release(&y);
    th_free(c);
    c = th_begin("TensorScatter", "", 24);
    th_input(c, &p);
    th_input(c, &u);
    th_input(c, &wi);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_ARG, "linear mode must refuse writing row 5 of 5");
    th_free(c);
    mrt_tensor_release(&p);
    mrt_tensor_release(&u);
    mrt_tensor_release(&wi);
}
