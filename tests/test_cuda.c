/* The CUDA path and the element-wise CUDA kernels against their CPU twins (tests/harness.h th_cuda_check). ctest runs
 * this on the emulated module (no GPU needed); scripts/gpu-check.sh runs it on a real one. CUDA is initialised inside
 * test bodies only (Criterion forks each test). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda_module.h"
#include "engine/dtype.h"
#include "harness.h"

/* Shapes the element-wise cases cycle through: empty, scalar, odd sizes, more elements than one grid covers. */
static const int64_t shapes[][4] = {{0, 3}, {1}, {7}, {3, 5, 2}, {2, 1, 33}, {1 << 18}};
static const int ranks[] = {2, 0, 1, 3, 3, 1};

static void unary_case(const char *op, int opset, mrt_dtype dt, double lo, double hi, const char *attr, double attr_v)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
        th_case *c = th_begin(op, "", opset);
        mrt_tensor x = th_rand(&r, dt, ranks[k], shapes[k], lo, hi);
        if (mrt_tensor_numel(&x) > 3 && (dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_DOUBLE)) {
            /* NaN and infinities go through every op as on the CPU */
            mrt_store_f64(dt, x.data, 0, NAN);
            mrt_store_f64(dt, x.data, 1, INFINITY);
            mrt_store_f64(dt, x.data, 2, -INFINITY);
        }
        th_input(c, &x);
        if (attr) th_attr_float(c, attr, (float)attr_v);
        char label[128];
        snprintf(label, sizeof label, "%s %s case %zu", op, mrt_dtype_name(dt), k);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&x);
        th_free(c);
    }
}

Test(cuda, unary_float_ops_match_cpu)
{
    th_cuda_require();
    static const struct { const char *op; int opset; double lo, hi; } ops[] = {
        {"Abs", 13, -5, 5},      {"Neg", 13, -5, 5},      {"Sqrt", 13, 0, 9},     {"Exp", 13, -10, 10},
        {"Log", 13, 0.01, 50},   {"Reciprocal", 13, 0.5, 4}, {"Floor", 13, -5, 5}, {"Ceil", 13, -5, 5},
        {"Round", 22, -5, 5},    {"Sign", 13, -2, 2},     {"Erf", 13, -3, 3},     {"Sin", 22, -6, 6},
        {"Cos", 22, -6, 6},      {"Tan", 22, -1.4, 1.4},  {"Asin", 22, -1, 1},    {"Acos", 22, -1, 1},
        {"Atan", 22, -8, 8},     {"Sinh", 22, -5, 5},     {"Cosh", 22, -5, 5},    {"Asinh", 22, -1e4, 1e4},
        {"Acosh", 22, 1, 100},   {"Atanh", 22, -0.99, 0.99}, {"Relu", 14, -3, 3}, {"Sigmoid", 13, -20, 20},
        {"Tanh", 13, -8, 8},     {"HardSwish", 22, -5, 5}, {"Softplus", 22, -30, 30}, {"Softsign", 22, -5, 5},
        {"Mish", 22, -8, 8},     {"Gelu", 20, -6, 6},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        unary_case(ops[i].op, ops[i].opset, MRT_DTYPE_FLOAT, ops[i].lo, ops[i].hi, NULL, 0);
        unary_case(ops[i].op, ops[i].opset, MRT_DTYPE_DOUBLE, ops[i].lo, ops[i].hi, NULL, 0);
    }
}

Test(cuda, activations_with_attributes_match_cpu)
{
    th_cuda_require();
    unary_case("LeakyRelu", 16, MRT_DTYPE_FLOAT, -4, 4, "alpha", 0.07);
    unary_case("Elu", 22, MRT_DTYPE_FLOAT, -4, 4, "alpha", 0.5);
    unary_case("Selu", 22, MRT_DTYPE_DOUBLE, -4, 4, "alpha", 1.5);
    unary_case("Celu", 12, MRT_DTYPE_FLOAT, -4, 4, "alpha", 2.0);
    unary_case("ThresholdedRelu", 22, MRT_DTYPE_FLOAT, -4, 4, "alpha", 0.3);
    unary_case("HardSigmoid", 22, MRT_DTYPE_FLOAT, -8, 8, "alpha", 0.3);
    unary_case("Swish", 24, MRT_DTYPE_FLOAT, -8, 8, "alpha", 1.7);
    unary_case("Clip", 6, MRT_DTYPE_FLOAT, -4, 4, "min", -1.5);
}

Test(cuda, integer_unary_ops_are_exact)
{
    th_cuda_require();
    static const mrt_dtype dts[] = {MRT_DTYPE_INT8, MRT_DTYPE_INT32, MRT_DTYPE_INT64, MRT_DTYPE_INT16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        unary_case("Abs", 13, dts[i], -100, 100, NULL, 0);
        unary_case("Neg", 13, dts[i], -100, 100, NULL, 0);
        unary_case("Sign", 13, dts[i], -100, 100, NULL, 0);
        unary_case("Relu", 14, dts[i], -100, 100, NULL, 0);
    }
    unary_case("Abs", 13, MRT_DTYPE_UINT8, 0, 255, NULL, 0);
}

Test(cuda, half_precision_rounds_as_the_cpu)
{
    th_cuda_require();
    unary_case("Sigmoid", 13, MRT_DTYPE_FLOAT16, -8, 8, NULL, 0);
    unary_case("Relu", 14, MRT_DTYPE_FLOAT16, -8, 8, NULL, 0);
    unary_case("Tanh", 13, MRT_DTYPE_BFLOAT16, -4, 4, NULL, 0);
}

/* Binary ops with every broadcast pattern: equal shapes, a scalar, a row, a column, both sides broadcast, empty. */
static void binary_case(const char *op, int opset, mrt_dtype dt, double lo, double hi)
{
    static const int64_t a_shapes[][3] = {{4, 5, 6}, {4, 5, 6}, {4, 5, 6}, {4, 1, 6}, {1, 7, 1}, {0, 3, 1}, {3, 1, 1}};
    static const int a_ranks[] = {3, 3, 3, 3, 3, 3, 1};
    static const int64_t b_shapes[][3] = {{4, 5, 6}, {1}, {6}, {5, 1}, {3, 7, 2}, {3, 4}, {9, 3, 3}};
    static const int b_ranks[] = {3, 0, 1, 2, 3, 2, 3};
    th_rng r;
    th_rng_init(&r, th_seed(op));
    for (size_t k = 0; k < sizeof a_ranks / sizeof a_ranks[0]; k++) {
        th_case *c = th_begin(op, "", opset);
        mrt_tensor a = th_rand(&r, dt, a_ranks[k], a_shapes[k], lo, hi);
        mrt_tensor b = th_rand(&r, dt, b_ranks[k], b_shapes[k], lo, hi);
        th_input(c, &a);
        th_input(c, &b);
        char label[128];
        snprintf(label, sizeof label, "%s %s broadcast case %zu", op, mrt_dtype_name(dt), k);
        th_cuda_check(c, 1, 1, label);
        mrt_tensor_release(&a);
        mrt_tensor_release(&b);
        th_free(c);
    }
}

Test(cuda, binary_ops_broadcast_as_the_cpu)
{
    th_cuda_require();
    static const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"};
    static const int opsets[] = {14, 14, 14, 14, 13, 13, 13, 13};
    for (size_t i = 0; i < 8; i++) {
        binary_case(ops[i], opsets[i], MRT_DTYPE_FLOAT, -3, 3);
        binary_case(ops[i], opsets[i], MRT_DTYPE_DOUBLE, -3, 3);
    }
    for (size_t i = 0; i < 6; i++) {
        binary_case(ops[i], opsets[i], MRT_DTYPE_INT32, -50, 50);
        binary_case(ops[i], opsets[i], MRT_DTYPE_INT64, -50, 50);
        binary_case(ops[i], opsets[i], MRT_DTYPE_UINT8, 0, 15);
    }
    /* PRelu broadcasts its slope to X only */
    static const int64_t slopes[][3] = {{6}, {5, 1}, {1}, {4, 5, 6}};
    static const int slope_ranks[] = {1, 2, 1, 3};
    th_rng r;
    th_rng_init(&r, th_seed("cuda.PRelu"));
    for (int k = 0; k < 4; k++) {
        th_case *c = th_begin("PRelu", "", 16);
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){4, 5, 6}, -3, 3);
        mrt_tensor sl = th_rand(&r, MRT_DTYPE_FLOAT, slope_ranks[k], slopes[k], -1, 1);
        th_input(c, &x);
        th_input(c, &sl);
        th_cuda_check(c, 1, 1, "PRelu");
        mrt_tensor_release(&x);
        mrt_tensor_release(&sl);
        th_free(c);
    }
    binary_case("Add", 14, MRT_DTYPE_FLOAT16, -3, 3);
}

Test(cuda, no_cpu_fallback_names_the_node)
{
    th_cuda_require();
    /* strings never run on the device: with no_cpu_fallback that is an error naming the node and the reason */
    th_case *c = th_begin("StringNormalizer", "", 10);
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_STRING, 1, (int64_t[]){1}), MRT_STATUS_OK);
    ((char **)x.data)[0] = strdup("Abc");
    th_input(c, &x);
    mrt_session_options o = mrt_session_options_default();
    o.device = "cuda";
    o.no_cpu_fallback = true;
    mrt_tensor y;
    mrt_status st = th_run_opt(c, &o, 1, &y);
    cr_assert_eq(st, MRT_STATUS_NOT_IMPLEMENTED, "status %d: %s", st, mrt_last_error());
    cr_assert(strstr(mrt_last_error(), "no-cpu-fallback") && strstr(mrt_last_error(), "StringNormalizer"), "%s",
              mrt_last_error());
    /* with fallback allowed it runs on the CPU and gives the CPU's answer */
    o.no_cpu_fallback = false;
    st = th_run_opt(c, &o, 1, &y);
    cr_assert_eq(st, MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_str_eq(((char **)y.data)[0], "Abc");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    th_free(c);
}

Test(cuda, a_missing_module_is_a_device_error_with_the_reason)
{
    /* what a machine without a GPU or driver sees: DEVICE_ERROR and the reason, never a crash */
    setenv("MRT_CUDA_MODULE", "/nonexistent/libminirt_cuda.so", 1);
    const mrt_cuda_api *api = NULL;
    mrt_status st = mrt_cuda_open(&api);
    if (st == MRT_STATUS_OK) cr_skip_test("a real CUDA module was found beside the binary");
    cr_assert_eq(st, MRT_STATUS_DEVICE_ERROR);
    cr_assert(strstr(mrt_last_error(), "CUDA") != NULL, "%s", mrt_last_error());
}

Test(cuda, where_broadcasts_three_ways)
{
    th_cuda_require();
    th_rng r;
    th_rng_init(&r, th_seed("cuda.Where"));
    static const mrt_dtype dts[] = {MRT_DTYPE_FLOAT, MRT_DTYPE_INT64, MRT_DTYPE_UINT8, MRT_DTYPE_FLOAT16};
    for (int k = 0; k < 4; k++) {
        th_case *c = th_begin("Where", "", 16);
        mrt_tensor cond = th_rand(&r, MRT_DTYPE_BOOL, 3, (int64_t[]){2, 1, 5}, 0, 1);
        mrt_tensor x = th_rand(&r, dts[k], 2, (int64_t[]){3, 1}, 0, 9);
        mrt_tensor y = th_rand(&r, dts[k], 3, (int64_t[]){1, 3, 5}, 0, 9);
        th_input(c, &cond);
        th_input(c, &x);
        th_input(c, &y);
        th_cuda_check(c, 1, 1, mrt_dtype_name(dts[k]));
        mrt_tensor_release(&cond);
        mrt_tensor_release(&x);
        mrt_tensor_release(&y);
        th_free(c);
    }
}
