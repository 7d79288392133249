/* Pointwise programs (engine/fuse.c, engine/epilogue.h): groups of element-wise nodes run inside their producer's
 * kernel. Each case builds a small graph and runs it unfused on one thread and fused on one and two: the outputs
 * must be the same bits (NaN payloads aside: any NaN matches a NaN), and the session must report the nodes it was
 * meant to fuse, so a group that stops being found fails here too. The inputs hold the awkward values (NaN, +-inf,
 * +-0, huge, tiny) besides random ones. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/graph.h"
#include "harness.h"

static const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 3e38f, -3e38f, 1e-40f, 0.5f, 20.0f};

/* x filled uniformly in [lo, hi) with the special values at its start */
static mrt_tensor input(th_rng *r, int rank, const int64_t *shape, double lo, double hi)
{
    mrt_tensor t = th_rand(r, MRT_DTYPE_FLOAT, rank, shape, lo, hi);
    int64_t n = th_numel(rank, shape), k = (int64_t)(sizeof special / sizeof *special);
    for (int64_t i = 0; i < k && i < n; i++) ((float *)t.data)[i] = special[i];
    return t;
}

static void set_scalar(mrt_graph *g, const char *name, float v)
{
    mrt_tensor t = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){v});
    cr_assert_eq(mrt_graph_set_initializer(g, name, &t), MRT_STATUS_OK);
    mrt_tensor_release(&t);
}

static void set_tensor(mrt_graph *g, const char *name, mrt_tensor t)
{
    cr_assert_eq(mrt_graph_set_initializer(g, name, &t), MRT_STATUS_OK);
    mrt_tensor_release(&t);
}

static void node(mrt_graph *g, const char *op, int n_in, const char *const *in, const char *out)
{
    mrt_node *n;
    cr_assert_eq(mrt_graph_add_node(g, out, op, "", n_in, in, 1, (const char *[]){out}, &n), MRT_STATUS_OK);
}

/* A new opset-17 model with graph inputs x0 .. x{n_inputs - 1}: its graph */
static mrt_graph *new_model(mrt_model **md, int n_inputs)
{
    *md = mrt_model_new();
    (*md)->graph = mrt_graph_new("g");
    mrt_model_set_opset(*md, "", 17);
    for (int i = 0; i < n_inputs; i++) mrt_graph_add_input((*md)->graph, i ? "x1" : "x0", NULL, NULL);
    return (*md)->graph;
}

typedef mrt_model *(*build_fn)(const void *arg);

/* Runs the model build(arg) makes on inputs (names x0, x1, ...) unfused on 1 thread and fused on 1 and 2; asserts
   equal bits and want_fused fused nodes */
static void keeps_the_bits(build_fn build, const void *arg, int n_in, const mrt_tensor *in, int want_fused,
                           const char *label)
{
    mrt_tensor y[3];
    for (int v = 0; v < 3; v++) {
        mrt_model *md = build(arg);
        mrt_session_options opt = mrt_session_options_default();
        opt.no_fuse = v == 0;
        opt.n_threads = v == 2 ? 2 : 1;
        mrt_session *s;
        cr_assert_eq(mrt_session_new(md, &opt, &s), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
        const char *names[] = {"x0", "x1"};
        mrt_value vals[2];
        for (int i = 0; i < n_in; i++) vals[i] = mrt_value_from_tensor(in[i]);
        cr_assert_eq(mrt_session_run(s, n_in, names, vals), MRT_STATUS_OK, "%s: %s", label, mrt_last_error());
        cr_assert_eq(mrt_tensor_copy(&y[v], &mrt_session_output(s, 0)->tensor), MRT_STATUS_OK);
        mrt_session_stats st;
        mrt_session_get_stats(s, &st);
        cr_assert_eq(st.fused_nodes, v == 0 ? 0 : want_fused, "%s: %d nodes fused, want %d", label, st.fused_nodes,
                     v == 0 ? 0 : want_fused);
        mrt_session_free(s);
        mrt_model_free(md);
    }
    const uint32_t *a = y[0].data;
    for (int v = 1; v < 3; v++) {
        const uint32_t *b = y[v].data;
        for (int64_t i = 0; i < mrt_tensor_numel(&y[0]); i++) {
            float fa, fb;
            memcpy(&fa, &a[i], 4);
            memcpy(&fb, &b[i], 4);
            cr_assert(a[i] == b[i] || (isnan(fa) && isnan(fb)), "%s, %d thread(s), element %lld: fused %a, unfused %a",
                      label, v, (long long)i, (double)fb, (double)fa);
        }
    }
    for (int v = 0; v < 3; v++) mrt_tensor_release(&y[v]);
}

/* ------------------------------------------------------------------ GPT-2's GELU */

typedef struct gelu_arg {
    bool matmul;   /* MatMul + Flatten instead of Gemm + Reshape */
    bool escape;   /* the Tanh's output is also a graph output: the group is not closed */
} gelu_arg;

/* x0 [96, 32] -> Gemm (W, bias) [96, 64] -> Reshape [2, 48, 64] -> 0.5 x (1 + tanh(0.7978846 (x + 0.044715 x^3)))
   as GPT-2's exporter writes it: Mul, Pow, Mul, Add, Mul, Tanh, Add, Mul */
static mrt_model *gelu_model(const void *arg_)
{
    const gelu_arg *arg = arg_;
    th_rng r;
    th_rng_init(&r, 11);
    mrt_model *md;
    mrt_graph *g = new_model(&md, 1);
    set_tensor(g, "w", th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){32, 64}, -0.5, 0.5));
    set_tensor(g, "bias", th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){64}, -1, 1));
    set_tensor(g, "shape", th_vec_i64(3, (int64_t[]){2, 48, 64}));
    set_scalar(g, "half", 0.5f);
    set_scalar(g, "three", 3.0f);
    set_scalar(g, "kappa", 0.044715f);
    set_scalar(g, "beta", 0.7978846f);
    set_scalar(g, "one", 1.0f);
    if (arg->matmul) {
        node(g, "MatMul", 2, (const char *[]){"x0", "w"}, "fc");
        mrt_graph_add_node(g, "flat", "Reshape", "", 2, (const char *[]){"fc", "shape"}, 1, (const char *[]){"x"}, NULL);
    } else {
        node(g, "Gemm", 3, (const char *[]){"x0", "w", "bias"}, "fc");
        mrt_graph_add_node(g, "reshape", "Reshape", "", 2, (const char *[]){"fc", "shape"}, 1, (const char *[]){"x"}, NULL);
    }
    node(g, "Mul", 2, (const char *[]){"x", "half"}, "h");
    node(g, "Pow", 2, (const char *[]){"x", "three"}, "c");
    node(g, "Mul", 2, (const char *[]){"c", "kappa"}, "m");
    node(g, "Add", 2, (const char *[]){"x", "m"}, "a");
    node(g, "Mul", 2, (const char *[]){"a", "beta"}, "u");
    node(g, "Tanh", 1, (const char *[]){"u"}, "t");
    node(g, "Add", 2, (const char *[]){"t", "one"}, "b");
    node(g, "Mul", 2, (const char *[]){"h", "b"}, "y");
    mrt_graph_add_output(g, "y", NULL, NULL);
    if (arg->escape) mrt_graph_add_output(g, "t", NULL, NULL);
    return md;
}

Test(pointwise, gpt2_gelu_behind_the_gemm_reshape_keeps_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("pointwise.gpt2_gelu"));
    mrt_tensor x = input(&r, 2, (int64_t[]){96, 32}, -3, 3);
    keeps_the_bits(gelu_model, &(gelu_arg){0}, 1, &x, 9, "Gemm -> Reshape -> GELU (tanh)");
    keeps_the_bits(gelu_model, &(gelu_arg){.matmul = true}, 1, &x, 9, "MatMul -> Reshape -> GELU (tanh)");
    /* the Tanh's output leaves the group: no program behind the Gemm (x is read by three nodes, h by the last);
       the Add before the Tanh takes the closed part after it, {Mul, Tanh} */
    keeps_the_bits(gelu_model, &(gelu_arg){.escape = true}, 1, &x, 2, "GELU with an intermediate output");
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ every unary op */

typedef struct unary_arg {
    const char *op;
    int opset;                  /* 0: 17 */
    const char *attr, *attr2;   /* float attributes, or NULL */
    float value, value2;
    const char *approximate;    /* Gelu's, or NULL */
} unary_arg;

/* x0 + x1 -> op -> * 2: the Add's kernel runs the program {op, Mul} */
static mrt_model *unary_model(const void *arg_)
{
    const unary_arg *arg = arg_;
    mrt_model *md;
    mrt_graph *g = new_model(&md, 2);
    if (arg->opset) mrt_model_set_opset(md, "", arg->opset);
    set_scalar(g, "two", 2.0f);
    node(g, "Add", 2, (const char *[]){"x0", "x1"}, "s");
    mrt_node *n;
    mrt_graph_add_node(g, "u", arg->op, "", 1, (const char *[]){"s"}, 1, (const char *[]){"u"}, &n);
    if (arg->attr) mrt_node_add_attr_float(n, arg->attr, arg->value);
    if (arg->attr2) mrt_node_add_attr_float(n, arg->attr2, arg->value2);
    if (arg->approximate) mrt_node_add_attr_string(n, "approximate", arg->approximate);
    node(g, "Mul", 2, (const char *[]){"u", "two"}, "y");
    mrt_graph_add_output(g, "y", NULL, NULL);
    return md;
}

/* Each of MRT_PW_UNARY_OPS through its program instruction, and the activations with attributes, with their
   defaults and with other values: a code mapped to another op's loop, or an attribute read otherwise than the
   kernel reads it, fails here */
Test(pointwise, every_unary_op_keeps_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("pointwise.unary"));
    static const char *const ops[] = {"Abs",  "Neg",  "Sqrt", "Exp",  "Log",   "Reciprocal", "Floor", "Ceil",
                                      "Round", "Sign", "Erf",  "Sin",  "Cos",   "Tan",        "Asin",  "Acos",
                                      "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",      "Relu",  "Sigmoid",
                                      "Tanh", "Softplus", "Softsign", "HardSwish"};
    static const unary_arg with_attrs[] = {
        {"Mish", 18, NULL, NULL, 0, 0, NULL},
        {"Gelu", 20, NULL, NULL, 0, 0, NULL},
        {"Gelu", 20, NULL, NULL, 0, 0, "tanh"},
        {"Gelu", 20, NULL, NULL, 0, 0, "none"},
        {"LeakyRelu", 0, NULL, NULL, 0, 0, NULL},
        {"LeakyRelu", 0, "alpha", NULL, 0.1f, 0, NULL},
        {"Elu", 0, NULL, NULL, 0, 0, NULL},
        {"Elu", 0, "alpha", NULL, 0.7f, 0, NULL},
        {"Celu", 0, NULL, NULL, 0, 0, NULL},
        {"Celu", 0, "alpha", NULL, 1.3f, 0, NULL},
        {"ThresholdedRelu", 0, NULL, NULL, 0, 0, NULL},
        {"ThresholdedRelu", 0, "alpha", NULL, 0.25f, 0, NULL},
        {"Selu", 0, NULL, NULL, 0, 0, NULL},
        {"Selu", 0, "alpha", "gamma", 1.5f, 0.9f, NULL},
        {"HardSigmoid", 0, NULL, NULL, 0, 0, NULL},
        {"HardSigmoid", 0, "alpha", "beta", 0.3f, 0.4f, NULL},
    };
    int64_t shape[] = {3, 700}; /* blocks of 256 and a partial one */
    mrt_tensor x[2] = {input(&r, 2, shape, -4, 4), th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -0.5, 0.5)};
    memset(x[1].data, 0, 16 * sizeof(float)); /* the specials reach the op unchanged */
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        keeps_the_bits(unary_model, &(unary_arg){.op = ops[i]}, 2, x, 2, ops[i]);
    for (size_t i = 0; i < sizeof with_attrs / sizeof *with_attrs; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s (%s)", with_attrs[i].op, with_attrs[i].attr ? with_attrs[i].attr : "defaults");
        keeps_the_bits(unary_model, &with_attrs[i], 2, x, 2, label);
    }
    mrt_tensor_release(&x[0]);
    mrt_tensor_release(&x[1]);
}

/* ------------------------------------------------------------------ operand order, Pow, registers */

/* Conv -> Mish written out (Softplus, Tanh, Mul(x, .)), then (3 - y) / 0.75, 2 / that, Pow(., 2), Pow(., 0.5):
   constants on either side, exponents with and without their exact loops */
static mrt_model *order_model(const void *arg)
{
    (void)arg;
    th_rng r;
    th_rng_init(&r, 12);
    mrt_model *md;
    mrt_graph *g = new_model(&md, 1);
    set_tensor(g, "w", th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){8, 3, 3, 3}, -0.5, 0.5));
    set_scalar(g, "three", 3.0f);
    set_scalar(g, "q", 0.75f);
    set_scalar(g, "two", 2.0f);
    set_scalar(g, "half", 0.5f);
    mrt_node *n;
    mrt_graph_add_node(g, "conv", "Conv", "", 2, (const char *[]){"x0", "w"}, 1, (const char *[]){"x"}, &n);
    mrt_node_add_attr_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    node(g, "Softplus", 1, (const char *[]){"x"}, "sp");
    node(g, "Tanh", 1, (const char *[]){"sp"}, "t");
    node(g, "Mul", 2, (const char *[]){"x", "t"}, "mish");
    node(g, "Sub", 2, (const char *[]){"three", "mish"}, "d");
    node(g, "Div", 2, (const char *[]){"d", "q"}, "e");
    node(g, "Div", 2, (const char *[]){"two", "e"}, "f");
    node(g, "Pow", 2, (const char *[]){"f", "two"}, "p2");
    node(g, "Pow", 2, (const char *[]){"p2", "half"}, "r");
    node(g, "Mul", 2, (const char *[]){"r", "r"}, "y"); /* one register, both operands */
    mrt_graph_add_output(g, "y", NULL, NULL);
    return md;
}

Test(pointwise, operand_order_and_exponents_keep_the_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("pointwise.order"));
    mrt_tensor x = input(&r, 4, (int64_t[]){2, 3, 17, 19}, -3, 3);
    keeps_the_bits(order_model, NULL, 1, &x, 9, "Conv -> Mish -> Sub, Div, Div, Pow, Pow, Mul(r, r)");
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ the limits */

typedef struct limit_arg {
    bool wide; /* seven values live at once, then summed: more registers than a program has */
} limit_arg;

/* x0 + x1 -> twenty nodes in a row (Tanh, Mul(., 1.5), ...), or -> seven unary ops of it, summed */
static mrt_model *limit_model(const void *arg_)
{
    const limit_arg *arg = arg_;
    mrt_model *md;
    mrt_graph *g = new_model(&md, 2);
    set_scalar(g, "k", 1.5f);
    node(g, "Add", 2, (const char *[]){"x0", "x1"}, "v0");
    char in[16], out[16];
    if (!arg->wide) {
        for (int i = 0; i < 20; i++) {
            snprintf(in, sizeof in, "v%d", i);
            snprintf(out, sizeof out, i == 19 ? "y" : "v%d", i + 1);
            if (i % 2 == 0) node(g, "Tanh", 1, (const char *[]){in}, out);
            else node(g, "Mul", 2, (const char *[]){in, "k"}, out);
        }
    } else {
        static const char *const ops[] = {"Sin", "Cos", "Tanh", "Sigmoid", "Exp", "Neg", "Abs"};
        for (int i = 0; i < 7; i++) {
            snprintf(out, sizeof out, "u%d", i);
            node(g, ops[i], 1, (const char *[]){"v0"}, out);
        }
        node(g, "Add", 2, (const char *[]){"u0", "u1"}, "w0");
        node(g, "Add", 2, (const char *[]){"w0", "u2"}, "w1");
        node(g, "Add", 2, (const char *[]){"w1", "u3"}, "w2");
        node(g, "Add", 2, (const char *[]){"w2", "u4"}, "w3");
        node(g, "Add", 2, (const char *[]){"w3", "u5"}, "w4");
        node(g, "Add", 2, (const char *[]){"w4", "u6"}, "y");
    }
    mrt_graph_add_output(g, "y", NULL, NULL);
    return md;
}

Test(pointwise, long_and_wide_groups_stop_at_the_limits)
{
    th_rng r;
    th_rng_init(&r, th_seed("pointwise.limits"));
    int64_t shape[] = {2, 300};
    mrt_tensor x[2] = {input(&r, 2, shape, -2, 2), th_rand(&r, MRT_DTYPE_FLOAT, 2, shape, -0.5, 0.5)};
    /* 16 instructions into the Add; the 17th node (Tanh) runs alone, and the Mul after it takes the last two */
    keeps_the_bits(limit_model, &(limit_arg){0}, 2, x, 18, "twenty nodes in a row");
    /* the Add's result and six of the seven values live at once need 7 registers of 6: no program; the Adds after
       take none either (each reads a value from outside its own chain), so nothing fuses */
    keeps_the_bits(limit_model, &(limit_arg){.wide = true}, 2, x, 0, "seven values live at once");
    mrt_tensor_release(&x[0]);
    mrt_tensor_release(&x[1]);
}

/* ------------------------------------------------------------------ behind a BatchNormalization */

typedef struct darknet_arg {
    int64_t k, stride; /* the Conv's kernel and stride */
} darknet_arg;

/* darknet's block as exported: Conv (no bias) -> BatchNormalization -> LeakyRelu(0.1). The GEMM runs the program over
   its whole output after the product, with the BatchNormalization of each row's channel before it */
static mrt_model *darknet_model(const void *arg_)
{
    const darknet_arg *arg = arg_;
    th_rng r;
    th_rng_init(&r, 13);
    mrt_model *md;
    mrt_graph *g = new_model(&md, 1);
    int64_t m = 24;
    set_tensor(g, "w", th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){m, 32, arg->k, arg->k}, -0.3, 0.3));
    set_tensor(g, "scale", th_rand(&r, MRT_DTYPE_FLOAT, 1, &m, 0.5, 2));
    set_tensor(g, "shift", th_rand(&r, MRT_DTYPE_FLOAT, 1, &m, -1, 1));
    set_tensor(g, "mean", th_rand(&r, MRT_DTYPE_FLOAT, 1, &m, -1, 1));
    set_tensor(g, "var", th_rand(&r, MRT_DTYPE_FLOAT, 1, &m, 0.5, 2));
    mrt_node *n;
    mrt_graph_add_node(g, "conv", "Conv", "", 2, (const char *[]){"x0", "w"}, 1, (const char *[]){"c"}, &n);
    mrt_node_add_attr_ints(n, "strides", 2, (int64_t[]){arg->stride, arg->stride});
    node(g, "BatchNormalization", 5, (const char *[]){"c", "scale", "shift", "mean", "var"}, "bn");
    mrt_graph_add_node(g, "leaky", "LeakyRelu", "", 1, (const char *[]){"bn"}, 1, (const char *[]){"y"}, &n);
    mrt_node_add_attr_float(n, "alpha", 0.1f);
    mrt_graph_add_output(g, "y", NULL, NULL);
    return md;
}

Test(pointwise, behind_a_batchnorm_each_channel_keeps_its_coefficients)
{
    th_rng r;
    th_rng_init(&r, th_seed("pointwise.darknet"));
    mrt_tensor x = input(&r, 4, (int64_t[]){1, 32, 30, 30}, -2, 2);
    keeps_the_bits(darknet_model, &(darknet_arg){1, 1}, 1, &x, 2, "Conv 1x1 -> BatchNormalization -> LeakyRelu");
    keeps_the_bits(darknet_model, &(darknet_arg){3, 2}, 1, &x, 2, "Conv 3x3/2 -> BatchNormalization -> LeakyRelu");
    mrt_tensor_release(&x);
}
