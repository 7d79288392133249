/* The CUDA select family (ops_cuda/select.cu: TopK, Unique, CenterCropPad, CumProd, Shrink, BitCast) against the CPU
 * kernels (tests/harness.h th_cuda_check), exact: ties, NaN, every axis, empty and odd shapes, uint64 order. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "harness.h"

static const struct {
    int rank;
    int64_t shape[4];
} layouts[] = {{1, {0}}, {1, {1}}, {1, {9}}, {2, {5, 7}}, {3, {2, 0, 3}}, {3, {3, 4, 5}}, {4, {2, 3, 2, 5}}, {2, {3, 150}}};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

/* values on a coarse grid so that ties are common */
static mrt_tensor coarse(th_rng *r, mrt_dtype dt, int rank, const int64_t *shape, double lo, double hi)
{
    mrt_tensor t = th_rand(r, MRT_DTYPE_INT32, rank, shape, lo, hi);
    double *v = th_to_f64(&t);
    mrt_tensor_release(&t);
    t = th_from_f64(dt, rank, shape, v);
    free(v);
    return t;
}

static void topk_case(mrt_dtype dt, int opset, bool largest, bool nan)
{
    th_rng r;
    th_rng_init(&r, th_seed("TopK"));
    for (size_t l = 0; l < N_LAYOUTS; l++)
        for (int64_t axis = -1; axis < layouts[l].rank; axis++) {
            int rank = layouts[l].rank, ax = (int)(axis < 0 ? axis + rank : axis);
            int64_t len = layouts[l].shape[ax], k = len < 3 ? len : len / 2 + 1;
            mrt_tensor x = coarse(&r, dt, rank, layouts[l].shape, dt == MRT_DTYPE_UINT8 || dt == MRT_DTYPE_UINT64 ? 0 : -5, 5);
            int64_t n = mrt_tensor_numel(&x);
            if (nan && n > 4) {
                mrt_store_f64(dt, x.data, 1, NAN);
                mrt_store_f64(dt, x.data, n - 1, NAN);
                mrt_store_f64(dt, x.data, n / 2, -INFINITY);
            }
            if (dt == MRT_DTYPE_UINT64 && n > 2) ((uint64_t *)x.data)[2] = UINT64_MAX - 1; /* above INT64_MAX */
            mrt_tensor kt = th_vec_i64(1, &k);
            th_case *c = th_begin("TopK", "", opset);
            th_input(c, &x);
            if (opset >= 10) th_input(c, &kt);
            else th_attr_int(c, "k", k);
            th_attr_int(c, "axis", axis);
            if (opset >= 11) th_attr_int(c, "largest", largest);
            char label[128];
            snprintf(label, sizeof label, "TopK-%d %s largest %d layout %zu axis %lld", opset, mrt_dtype_name(dt), largest,
                     l, (long long)axis);
            th_cuda_check(c, 2, 1, label);
            mrt_tensor_release(&x);
            mrt_tensor_release(&kt);
            th_free(c);
        }
}

Test(cuda_select, topk)
{
    th_cuda_require();
    topk_case(MRT_DTYPE_FLOAT, 1, true, false);
    topk_case(MRT_DTYPE_FLOAT, 10, true, true);
    topk_case(MRT_DTYPE_DOUBLE, 11, false, true);
    topk_case(MRT_DTYPE_INT64, 11, false, false);
    topk_case(MRT_DTYPE_UINT64, 24, true, false);
    topk_case(MRT_DTYPE_FLOAT16, 24, true, false);
    topk_case(MRT_DTYPE_UINT8, 11, false, false);
}

static void unique_case(mrt_dtype dt, bool sorted, bool with_axis)
{
    th_rng r;
    th_rng_init(&r, th_seed("Unique"));
    for (size_t l = 0; l < N_LAYOUTS; l++)
        for (int64_t axis = with_axis ? -1 : 0; axis < (with_axis ? layouts[l].rank : 1); axis++) {
            int rank = layouts[l].rank;
            mrt_tensor x = coarse(&r, dt, rank, layouts[l].shape, dt == MRT_DTYPE_UINT8 ? 0 : -2, 1);
            th_case *c = th_begin("Unique", "", 11);
            th_input(c, &x);
            th_attr_int(c, "sorted", sorted);
            if (with_axis) th_attr_int(c, "axis", axis);
            char label[128];
            snprintf(label, sizeof label, "Unique %s sorted %d axis %lld (%d) layout %zu", mrt_dtype_name(dt), sorted,
                     (long long)axis, with_axis, l);
            th_cuda_check(c, 4, 1, label);
            mrt_tensor_release(&x);
            th_free(c);
        }
}

Test(cuda_select, unique)
{
    th_cuda_require();
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 2; a++) {
            unique_case(MRT_DTYPE_FLOAT, s, a);
            unique_case(MRT_DTYPE_INT64, s, a);
        }
    unique_case(MRT_DTYPE_UINT8, true, false);
    unique_case(MRT_DTYPE_DOUBLE, false, true);
}

static void cumprod_case(mrt_dtype dt)
{
    th_rng r;
    th_rng_init(&r, th_seed("CumProd"));
    for (size_t l = 0; l < N_LAYOUTS; l++)
        for (int64_t axis = -1; axis < layouts[l].rank; axis++)
            for (int f = 0; f < 4; f++) {
                mrt_tensor x = th_rand(&r, dt, layouts[l].rank, layouts[l].shape, mrt_dtype_is_float(dt) ? 0.5 : -3,
                                       mrt_dtype_is_float(dt) ? 1.5 : 3);
                int32_t av = (int32_t)axis;
                mrt_tensor a = th_from_f64(f & 1 ? MRT_DTYPE_INT32 : MRT_DTYPE_INT64, 0, NULL, (double[]){(double)av});
                th_case *c = th_begin("CumProd", "", 26);
                th_input(c, &x);
                th_input(c, &a);
                th_attr_int(c, "exclusive", f & 1);
                th_attr_int(c, "reverse", (f >> 1) & 1);
                char label[128];
                snprintf(label, sizeof label, "CumProd %s layout %zu axis %lld flags %d", mrt_dtype_name(dt), l,
                         (long long)axis, f);
                th_cuda_check(c, 1, 1, label);
                mrt_tensor_release(&x);
                mrt_tensor_release(&a);
                th_free(c);
            }
}

Test(cuda_select, cumprod)
{
    th_cuda_require();
    cumprod_case(MRT_DTYPE_FLOAT);
    cumprod_case(MRT_DTYPE_DOUBLE);
    cumprod_case(MRT_DTYPE_INT32);
    cumprod_case(MRT_DTYPE_INT64);
    cumprod_case(MRT_DTYPE_UINT8);
}

Test(cuda_select, shrink_bitcast_center_crop_pad)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("select misc"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_INT8, MRT_DTYPE_INT32, MRT_DTYPE_UINT16};
    for (size_t l = 0; l < N_LAYOUTS; l++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            int rank = layouts[l].rank;
            const int64_t *shape = layouts[l].shape;
            mrt_tensor x = th_rand(&r, dts[d], rank, shape, -4, 4);
            char label[128];
            th_case *c = th_begin("Shrink", "", 9);
            th_input(c, &x);
            th_attr_float(c, "bias", 1.5f);
            th_attr_float(c, "lambd", 1.0f);
            snprintf(label, sizeof label, "Shrink %s layout %zu", mrt_dtype_name(dts[d]), l);
            th_cuda_check(c, 1, 1, label);
            th_free(c);

            static const mrt_dtype to[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_BFLOAT16, MRT_DTYPE_UINT8,
                                           MRT_DTYPE_INT32, MRT_DTYPE_INT16};
            c = th_begin("BitCast", "", 26);
            th_input(c, &x);
            th_attr_int(c, "to", to[d] == MRT_DTYPE_INT64 ? MRT_DTYPE_DOUBLE : to[d]);
            if (dts[d] == MRT_DTYPE_DOUBLE) th_attr_int(c, "to", MRT_DTYPE_INT64);
            snprintf(label, sizeof label, "BitCast %s layout %zu", mrt_dtype_name(dts[d]), l);
            th_cuda_check(c, 1, 1, label);
            th_free(c);

            int64_t want[4];
            for (int i = 0; i < rank; i++) want[i] = (shape[i] * (i % 2 ? 3 : 1) + (i % 2 ? 1 : 0)) / 2 + 1;
            mrt_tensor ws = th_vec_i64(rank, want);
            c = th_begin("CenterCropPad", "", 18);
            th_input(c, &x);
            th_input_const(c, &ws);
            snprintf(label, sizeof label, "CenterCropPad %s layout %zu", mrt_dtype_name(dts[d]), l);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
            mrt_tensor_release(&ws);
            mrt_tensor_release(&x);
        }
}
