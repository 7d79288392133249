/* The CUDA cast family (ops_cuda/cast.cu: Cast, CastLike) against the CPU kernel (tests/harness.h th_cuda_check),
 * bit for bit: every pair of bool, the integer types, float, double, float16 and bfloat16, with NaN, infinities,
 * out-of-range values (saturation then wrapping), ties of the 16-bit roundings and subnormals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "engine/dtype.h"
#include "harness.h"

static const mrt_dtype dts[] = {MRT_DTYPE_BOOL,   MRT_DTYPE_UINT8,  MRT_DTYPE_INT8,   MRT_DTYPE_UINT16, MRT_DTYPE_INT16,
                                MRT_DTYPE_UINT32, MRT_DTYPE_INT32,  MRT_DTYPE_UINT64, MRT_DTYPE_INT64,  MRT_DTYPE_FLOAT,
                                MRT_DTYPE_DOUBLE, MRT_DTYPE_FLOAT16, MRT_DTYPE_BFLOAT16};
#define N_DTS (sizeof dts / sizeof dts[0])

static bool is_float(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

/* Source values: the awkward ones first, then random ones over the type's range. */
static mrt_tensor source(th_rng *r, mrt_dtype dt, int64_t n)
{
    static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -1.5, 2.5, 65504.0, 65520.0, 1e30,
                                      -1e30, 3e9, -3e9, 1e19, 2e19, 5.960464477539063e-08, 1.00048828125,
                                      1.0009765625 + 1e-12, 3.3895313892515355e+38, 300.0, -129.0, 70000.5};
    int64_t shape[1] = {n};
    mrt_tensor t = th_rand(r, dt, 1, shape, is_float(dt) ? -1e5 : dt == MRT_DTYPE_BOOL ? 0 : -1e9,
                           is_float(dt) ? 1e5 : dt == MRT_DTYPE_BOOL ? 1 : 1e9);
    if (is_float(dt))
        for (size_t i = 0; i < sizeof specials / sizeof specials[0] && (int64_t)i < n; i++) mrt_store_f64(dt, t.data, (int64_t)i, specials[i]);
    else if (dt == MRT_DTYPE_INT64 || dt == MRT_DTYPE_UINT64) {
        ((int64_t *)t.data)[0] = INT64_MIN;
        ((int64_t *)t.data)[1] = INT64_MAX;
        ((int64_t *)t.data)[2] = -1;
        ((int64_t *)t.data)[3] = (1LL << 53) + 1; /* rounds in double */
        ((int64_t *)t.data)[4] = 65519;
    }
    return t;
}

Test(cuda_cast, every_pair_bit_for_bit)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cast"));
    for (size_t s = 0; s < N_DTS; s++)
        for (size_t d = 0; d < N_DTS; d++) {
            mrt_tensor x = source(&r, dts[s], 300);
            th_case *c = th_begin("Cast", "", 21);
            th_input(c, &x);
            th_attr_int(c, "to", dts[d]);
            char label[96];
            snprintf(label, sizeof label, "Cast %s -> %s", mrt_dtype_name(dts[s]), mrt_dtype_name(dts[d]));
            th_cuda_check(c, 1, 0, label); /* tolerance 0: the same bits as the CPU */
            th_free(c);
            mrt_tensor_release(&x);
        }
}

Test(cuda_cast, castlike_and_empty)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("castlike"));
    int64_t empty[2] = {0, 4}, one[1] = {1};
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, empty, 0, 1), like = th_rand(&r, MRT_DTYPE_FLOAT16, 1, one, 0, 1);
    th_case *c = th_begin("CastLike", "", 21);
    th_input(c, &x);
    th_input(c, &like);
    th_cuda_check(c, 1, 0, "CastLike of an empty tensor");
    th_free(c);
    mrt_tensor_release(&x);
    x = source(&r, MRT_DTYPE_DOUBLE, 1000);
    c = th_begin("CastLike", "", 21);
    th_input(c, &x);
    th_input(c, &like);
    th_cuda_check(c, 1, 0, "CastLike double -> float16");
    th_free(c);
    mrt_tensor_release(&x);
    mrt_tensor_release(&like);
}
