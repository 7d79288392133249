/* The CUDA roll family (ops_cuda/roll.cu: custom::Roll, torch.roll) against the CPU kernel (tests/harness.h
 * th_cuda_check), exact: per-dim shifts (negative, repeated dims, larger than the dim), the flattened roll, empty. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

Test(cuda_roll, every_shift_form)
{
    th_cuda_require();
    static const struct { int rank; int64_t shape[3]; int n; int64_t shifts[3], dims[3]; } cases[] = {
        {3, {2, 3, 4}, 1, {1}, {2}},          {3, {2, 3, 4}, 2, {-1, 5}, {0, -1}},
        {3, {2, 3, 4}, 3, {2, 1, 7}, {1, 1, 2}}, {3, {2, 3, 4}, 1, {-5}, {-1}},
        {2, {5, 7}, 1, {13}, {-1}},           {2, {0, 3}, 1, {2}, {1}},
        {3, {2, 3, 4}, -1, {5}, {0}},         {1, {1000}, -1, {-333}, {0}}, /* no dims: the flattened roll */
    };
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16};
    th_rng r;
    th_rng_init(&r, th_seed("roll"));
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            mrt_tensor x = th_rand(&r, dts[d], cases[k].rank, cases[k].shape, 0, 100);
            th_case *c = th_begin("Roll", "custom", 1);
            th_input(c, &x);
            if (cases[k].n < 0) {
                th_attr_ints(c, "shifts", 1, cases[k].shifts);
            } else {
                th_attr_ints(c, "shifts", cases[k].n, cases[k].shifts);
                th_attr_ints(c, "dims", cases[k].n, cases[k].dims);
            }
            char label[96];
            snprintf(label, sizeof label, "Roll %s case %zu", mrt_dtype_name(dts[d]), k);
            th_cuda_check(c, 1, 1, label);
            th_free(c);
            mrt_tensor_release(&x);
        }
}
