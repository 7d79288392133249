/* The CUDA dropout family (ops_cuda/dropout.cu: Dropout 1-22) against the CPU kernel (tests/harness.h th_cuda_check):
 * inference (no training input, training false, old is_test) with the mask, training with seeded draws (the CPU's
 * MT19937 stream, so y and the mask match bit for bit), ratio 0, ratio as an input of another dtype, the mask in the
 * input's type before opset 10, float/double/float16/bfloat16, empty and odd shapes. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

static void dropout_case(const char *label, int opset, mrt_dtype dt, int rank, const int64_t *shape, int train,
                         double ratio, int64_t seed, int n_out)
{
    th_rng r;
    th_rng_init(&r, th_seed(label));
    mrt_tensor x = th_rand(&r, dt, rank, shape, -3, 3);
    double rv = ratio, tv = train > 0;
    mrt_tensor rt = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, &rv), tt = th_from_f64(MRT_DTYPE_BOOL, 0, NULL, &tv);
    th_case *c = th_begin("Dropout", "", opset);
    th_input(c, &x);
    if (opset >= 12) {
        th_input(c, &rt);
        if (train >= 0) th_input(c, &tt);
    } else {
        th_attr_float(c, "ratio", (float)ratio);
        if (opset < 7) th_attr_int(c, "is_test", train > 0 ? 0 : 1);
    }
    if (seed >= 0) th_attr_int(c, "seed", seed);
    th_cuda_check(c, n_out, 1, label);
    mrt_tensor_release(&x);
    mrt_tensor_release(&rt);
    mrt_tensor_release(&tt);
    th_free(c);
}

static const struct {
    int rank;
    int64_t shape[4];
} shapes[] = {{1, {0}}, {1, {1}}, {2, {7, 3}}, {3, {3, 5, 2}}, {4, {2, 3, 4, 5}}, {2, {300, 17}}};

Test(cuda_dropout, training_and_inference)
{
    th_cuda_require();
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int train = -1; train <= 1; train++) {
            char label[96];
            snprintf(label, sizeof label, "dropout 13 train %d shape %zu", train, k);
            dropout_case(label, 13, MRT_DTYPE_FLOAT, shapes[k].rank, shapes[k].shape, train, 0.3, (int64_t)k * 7, 2);
            snprintf(label, sizeof label, "dropout 22 y only train %d shape %zu", train, k);
            dropout_case(label, 22, MRT_DTYPE_DOUBLE, shapes[k].rank, shapes[k].shape, train, 0.7, -1, 1);
        }
}

Test(cuda_dropout, versions_and_dtypes)
{
    th_cuda_require();
    int64_t s[2] = {9, 11};
    dropout_case("dropout ratio 0", 13, MRT_DTYPE_FLOAT, 2, s, 1, 0.0, 3, 2);
    dropout_case("dropout float16", 13, MRT_DTYPE_FLOAT16, 2, s, 1, 0.5, 1, 2);
    dropout_case("dropout bfloat16", 22, MRT_DTYPE_BFLOAT16, 2, s, 1, 0.5, 1, 2);
    dropout_case("dropout 10", 10, MRT_DTYPE_FLOAT, 2, s, 0, 0.5, -1, 2);
    dropout_case("dropout 7 mask in x's type", 7, MRT_DTYPE_FLOAT, 2, s, 0, 0.5, -1, 2);
    dropout_case("dropout 6 training by is_test", 6, MRT_DTYPE_FLOAT, 2, s, 1, 0.25, 5, 2);
    dropout_case("dropout 6 is_test", 6, MRT_DTYPE_DOUBLE, 2, s, 0, 0.25, 5, 2);
}
