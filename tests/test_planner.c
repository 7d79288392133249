/* Plan passes on real graphs: the arena gives bit-identical results to one buffer per value, shape chains fold,
 * dead nodes go, and a second run with the same shapes reuses the plan. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"
#include "engine/graph.h"
#include "harness.h"
#include "loader/npy.h"

static mrt_tensor run_tiny_cnn_opt(bool no_mem_plan, bool no_fuse, int threads, mrt_session_stats *stats)
{
    mrt_model *m;
    cr_assert_eq(mrt_model_load(MRT_SOURCE_DIR "/models/tiny_cnn.onnx", &m), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor x, y;
    cr_assert_eq(mrt_npy_read_file(MRT_SOURCE_DIR "/models/tiny_cnn_input.npy", &x), MRT_STATUS_OK);
    mrt_session_options opt = mrt_session_options_default();
    opt.no_mem_plan = no_mem_plan;
    opt.no_fuse = no_fuse;
    opt.n_threads = threads;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK);
    const char *name = mrt_model_input_name(m, 0);
    mrt_value xv = mrt_value_from_tensor(x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_tensor_copy(&y, &mrt_session_output(s, 0)->tensor), MRT_STATUS_OK);
    mrt_session_get_stats(s, stats);
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_model_free(m);
    return y;
}

/* Unfused, so that Relu/BatchNormalization/Add are nodes of their own that can run in place. */
static mrt_tensor run_tiny_cnn(bool no_mem_plan, mrt_session_stats *stats)
{
    return run_tiny_cnn_opt(no_mem_plan, true, 1, stats);
}

Test(planner, arena_is_bit_identical_to_one_buffer_per_value)
{
    mrt_session_stats a, b;
    mrt_tensor ya = run_tiny_cnn(false, &a), yb = run_tiny_cnn(true, &b);
    cr_assert_eq(memcmp(ya.data, yb.data, mrt_tensor_nbytes(&ya)), 0, "planned and unplanned runs differ");
    cr_assert_gt(a.arena_peak_bytes, 0);
    cr_assert_leq(a.arena_peak_bytes, a.naive_bytes);
    /* Relu/BatchNormalization/Add run in place, so the arena can go below the no-in-place lower bound */
    cr_assert_gt(a.inplace_count, 0);
    cr_assert_leq(a.arena_peak_bytes, a.lower_bound_bytes);
    cr_assert_eq(b.arena_peak_bytes, 0, "--no-mem-plan uses no arena");
    mrt_tensor_release(&ya);
    mrt_tensor_release(&yb);
}

/* Fusion (engine/fuse.c) moves the bundled CNN's BatchNormalization/Relu/Add nodes into its Convs: the same bits as
   running them as nodes, with 1 and 2 threads, and less memory. */
Test(planner, fused_run_is_bit_identical_to_unfused)
{
    mrt_session_stats u, f1, f2;
    mrt_tensor yu = run_tiny_cnn_opt(false, true, 1, &u), y1 = run_tiny_cnn_opt(false, false, 1, &f1),
               y2 = run_tiny_cnn_opt(false, false, 2, &f2);
    cr_assert_eq(u.fused_nodes, 0);
    cr_assert_gt(f1.fused_nodes, 0, "nothing was fused");
    cr_assert_eq(f1.nodes_after, u.nodes_after);
    cr_assert_eq(memcmp(yu.data, y1.data, mrt_tensor_nbytes(&yu)), 0, "fused and unfused runs differ");
    cr_assert_eq(memcmp(yu.data, y2.data, mrt_tensor_nbytes(&yu)), 0, "1 and 2 threads differ");
    cr_assert_leq(f1.arena_peak_bytes, u.arena_peak_bytes);
    mrt_tensor_release(&yu);
    mrt_tensor_release(&y1);
    mrt_tensor_release(&y2);
}

/* An empty model (graph "g", the default domain at `opset`) whose graph inputs are the NULL-terminated names */
static mrt_model *empty_model(int opset, const char *const *inputs)
{
    mrt_model *m = mrt_model_new();
    m->graph = mrt_graph_new("g");
    mrt_model_set_opset(m, "", opset);
    for (int i = 0; inputs[i]; i++) mrt_graph_add_input(m->graph, inputs[i], NULL, NULL);
    return m;
}

/* A session of m with opt (NULL: the defaults) after one run with x bound to "x" (what: the case, for messages); its
   stats in *st. The caller frees it. */
static mrt_session *run_x_once_opt(mrt_model *m, const mrt_session_options *opt, const mrt_tensor *x,
                                   mrt_session_stats *st, const char *what)
{
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, opt, &s), MRT_STATUS_OK, "%s: %s", what, mrt_last_error());
    const char *name = "x";
    mrt_value v = mrt_value_from_tensor(*x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &v), MRT_STATUS_OK, "%s: %s", what, mrt_last_error());
    mrt_session_get_stats(s, st);
    return s;
}

static mrt_session *run_x_once(mrt_model *m, const mrt_tensor *x, mrt_session_stats *st)
{
    return run_x_once_opt(m, NULL, x, st, "x");
}

/* x -> Shape -> Gather(0) -> Unsqueeze -> Concat(with [-1]) -> Reshape(x): the shape arithmetic folds. */
Test(planner, shape_chain_folds_once_input_shapes_are_known)
{
    mrt_model *m = empty_model(13, (const char *[]){"x", NULL});
    mrt_graph *g = m->graph;
    mrt_tensor zero = th_vec_i64(1, (int64_t[]){0}), minus1 = th_vec_i64(1, (int64_t[]){-1}), axes = th_vec_i64(1, (int64_t[]){0});
    mrt_tensor idx = th_scalar_i64(0);
    mrt_graph_set_initializer(g, "idx", &idx);
    mrt_graph_set_initializer(g, "minus1", &minus1);
    mrt_graph_set_initializer(g, "axes", &axes);
    mrt_tensor_release(&zero);
    mrt_node *n;
    mrt_graph_add_node(g, "shape", "Shape", "", 1, (const char *[]){"x"}, 1, (const char *[]){"s"}, &n);
    mrt_graph_add_node(g, "gather", "Gather", "", 2, (const char *[]){"s", "idx"}, 1, (const char *[]){"d0"}, &n);
    mrt_graph_add_node(g, "unsq", "Unsqueeze", "", 2, (const char *[]){"d0", "axes"}, 1, (const char *[]){"d0v"}, &n);
    mrt_graph_add_node(g, "concat", "Concat", "", 2, (const char *[]){"d0v", "minus1"}, 1, (const char *[]){"shp"}, &n);
    mrt_node_add_attr_int(n, "axis", 0);
    mrt_graph_add_node(g, "reshape", "Reshape", "", 2, (const char *[]){"x", "shp"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_node(g, "dead", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"unused"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    th_rng r;
    th_rng_init(&r, th_seed("planner.shape_chain"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 3, 4}, -1, 1);
    mrt_session_stats st;
    mrt_session *s = run_x_once(m, &x, &st);
    cr_assert_eq(st.nodes_before, 6);
    cr_assert_eq(st.nodes_after, 1, "only Reshape runs (folded: Shape, Gather, Unsqueeze, Concat; dead: Neg), got %d",
                 st.nodes_after);
    cr_assert_eq(st.dynamic_nodes, 0);
    const mrt_tensor *y = &mrt_session_output(s, 0)->tensor;
    cr_assert_eq(y->rank, 2);
    cr_assert_eq(y->shape[0], 2);
    cr_assert_eq(y->shape[1], 12);
    cr_assert_eq(memcmp(y->data, x.data, 24 * sizeof(float)), 0);
    /* same shapes again: the plan is reused (the plan time stays the first one's) */
    double first_plan_ms = st.plan_ms;
    const char *name = "x";
    mrt_value xv = mrt_value_from_tensor(x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK);
    mrt_session_get_stats(s, &st);
    cr_assert_eq(st.plan_ms, first_plan_ms, "a second run with the same shapes must not re-plan");
    /* new shapes: re-planned, still correct */
    mrt_tensor x2 = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){5, 1, 2}, -1, 1);
    xv = mrt_value_from_tensor(x2);
    cr_assert_eq(mrt_session_run(s, 1, &name, &xv), MRT_STATUS_OK, "%s", mrt_last_error());
    y = &mrt_session_output(s, 0)->tensor;
    cr_assert_eq(y->shape[0], 5);
    cr_assert_eq(y->shape[1], 2);
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_tensor_release(&x2);
    mrt_model_free(m);
}

/* An attribute of the wrong type fails the node with both types named, instead of the default standing in;
   the accepted conversions (int for float, int for ints) still run. */
Test(planner, attribute_type_mismatch_is_an_error)
{
    th_rng r;
    th_rng_init(&r, th_seed("attribute_type_mismatch_is_an_error"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, -1, 1), y = {0};
    th_case *c = th_begin("Softmax", "", 13);
    th_input(c, &x);
    th_attr_float(c, "axis", 0.0f);
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert(strstr(mrt_last_error(), "attribute 'axis' has type float, expected int"), "%s", mrt_last_error());
    th_free(c);

    c = th_begin("Transpose", "", 13);
    th_input(c, &x);
    th_attr_int(c, "perm", 0); /* a one-element ints: rank 2 needs two, so the kernel's own check speaks */
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_INVALID_MODEL);
    cr_assert_null(strstr(mrt_last_error(), "has type"), "%s", mrt_last_error());
    th_free(c);

    c = th_begin("LeakyRelu", "", 16);
    th_input(c, &x);
    th_attr_int(c, "alpha", 2); /* int where a float is expected: accepted as 2.0 */
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    for (int i = 0; i < 6; i++) {
        float v = ((float *)x.data)[i];
        cr_assert_eq(((float *)y.data)[i], v < 0 ? 2 * v : v);
    }
    mrt_tensor_release(&y);
    th_free(c);
    mrt_tensor_release(&x);
}

/* In-place reuse: x -> Neg -> a (small, broadcast later); Add(a, big) must NOT overwrite a (it is read at
   every row), while Relu(t) over a same-size, dying t may. Checked against a float64 reference computed here. */
Test(planner, inplace_only_where_input_is_not_broadcast)
{
    mrt_model *m = empty_model(14, (const char *[]){"x", "big", NULL});
    mrt_graph *g = m->graph;
    mrt_node *n;
    mrt_graph_add_node(g, "neg", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"a"}, &n);
    mrt_graph_add_node(g, "add", "Add", "", 2, (const char *[]){"a", "big"}, 1, (const char *[]){"t"}, &n);
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"t"}, 1, (const char *[]){"r"}, &n);
    mrt_graph_add_node(g, "sig", "Sigmoid", "", 1, (const char *[]){"r"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    th_rng rng;
    th_rng_init(&rng, th_seed("planner.inplace_broadcast"));
    /* a is 2 floats (8 bytes) and t is 2x2 (16): both round up to one 64-byte arena slot */
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 2, (int64_t[]){1, 2}, -1, 1);
    mrt_tensor big = th_rand(&rng, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 2}, -1, 1);
    mrt_session *s;
    mrt_session_options opt = mrt_session_options_default();
    opt.no_fuse = true; /* fused, the Add would run Relu and Sigmoid as its pointwise program: no step left in place */
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK);
    const char *names[] = {"x", "big"};
    mrt_value vals[] = {mrt_value_from_tensor(x), mrt_value_from_tensor(big)};
    cr_assert_eq(mrt_session_run(s, 2, names, vals), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_session_stats st;
    mrt_session_get_stats(s, &st);
    cr_assert_eq(st.inplace_count, 1, "Relu over t in place (t dies there; y is a graph output, not in the arena)");
    const float *y = mrt_session_output(s, 0)->tensor.data, *xv = x.data, *bv = big.data;
    for (int i = 0; i < 4; i++) {
        double t = -(double)xv[i % 2] + bv[i], r = t > 0 ? t : 0, want = 1 / (1 + exp(-r));
        cr_assert_float_eq(y[i], want, 1e-6, "element %d: got %g, expected %g", i, y[i], want);
    }
    mrt_session_free(s);
    mrt_tensor_release(&x);
    mrt_tensor_release(&big);
    mrt_model_free(m);
}

/* Softmax, LogSoftmax and Hardmax write their output over a dying input (x -> Neg -> t -> op -> u -> Neg -> y: t dies
   at the op), along the last axis (the float rows kernel) and along axis 0 (the double block kernel, rows strided).
   Checked against a float64 reference computed here: a kernel that read x after writing y at that position would
   read its own results. */
Test(planner, softmax_family_runs_in_place_over_a_dying_input)
{
    const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    enum { R = 3, C = 40 };
    th_rng rng;
    th_rng_init(&rng, th_seed("planner.softmax_inplace"));
    mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 2, (int64_t[]){R, C}, -8, 8);
    const float *xv = x.data;
    for (int k = 0; k < 3; k++)
        for (int axis = 0; axis < 2; axis++) {
            mrt_model *m = empty_model(13, (const char *[]){"x", NULL});
            mrt_graph *g = m->graph;
            mrt_node *n;
            mrt_graph_add_node(g, "neg", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"t"}, &n);
            mrt_graph_add_node(g, "op", ops[k], "", 1, (const char *[]){"t"}, 1, (const char *[]){"u"}, &n);
            mrt_node_add_attr_int(n, "axis", axis);
            mrt_graph_add_node(g, "neg2", "Neg", "", 1, (const char *[]){"u"}, 1, (const char *[]){"y"}, &n);
            mrt_graph_add_output(g, "y", NULL, NULL);
            mrt_session_stats st;
            mrt_session *s = run_x_once(m, &x, &st);
            cr_assert_eq(st.inplace_count, 1, "%s axis %d: over t in place", ops[k], axis);
            const float *y = mrt_session_output(s, 0)->tensor.data;
            /* the reference: rows along `axis` of t = -x */
            int lines = axis ? R : C, len = axis ? C : R;
            for (int l = 0; l < lines; l++) {
                double t[R > C ? R : C], mx = -INFINITY, sum = 0;
                int arg = 0;
                for (int i = 0; i < len; i++) {
                    t[i] = -(double)xv[axis ? l * C + i : i * C + l];
                    if (t[i] > mx) mx = t[i], arg = i;
                }
                for (int i = 0; i < len; i++) sum += exp(t[i] - mx);
                for (int i = 0; i < len; i++) {
                    double want = k == 0 ? exp(t[i] - mx) / sum : k == 1 ? t[i] - mx - log(sum) : i == arg;
                    float got = -y[axis ? l * C + i : i * C + l];
                    cr_assert_float_eq(got, want, 1e-5 * (1 + fabs(want)), "%s axis %d, line %d, element %d: %g, want %g",
                                       ops[k], axis, l, i, got, want);
                }
            }
            mrt_session_free(s);
            mrt_model_free(m);
        }
    mrt_tensor_release(&x);
}

/* Concat inputs planned inside the Concat's output (engine/session.c, place_concat_inputs): each case runs with the
   memory plan and without it (every value its own buffer, the Concat copying all), and must give the same bits
   on every output, with the expected number of inputs written in place. */
typedef struct concat_case {
    const char *what;
    int64_t shape[4];
    int rank;
    int expect;    /* Concat inputs written in place */
    int variant;
} concat_case;

static mrt_model *concat_model(const concat_case *cc)
{
    mrt_model *m = empty_model(13, (const char *[]){"x", NULL});
    mrt_graph *g = m->graph;
    mrt_node *n;
    mrt_graph_add_node(g, "a", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"a"}, &n);
    mrt_graph_add_node(g, "b", "Relu", "", 1, (const char *[]){"x"}, 1, (const char *[]){"b"}, &n);
    mrt_graph_add_node(g, "c", "Sigmoid", "", 1, (const char *[]){"x"}, 1, (const char *[]){"c"}, &n);
    switch (cc->variant) {
    case 0: /* three branches, each read by the Concat alone */
        mrt_graph_add_node(g, "cat", "Concat", "", 3, (const char *[]){"a", "b", "c"}, 1, (const char *[]){"y"}, &n);
        break;
    case 1: /* a is read after the Concat too (by a node that needs the Concat's output), so it stays out */
        mrt_graph_add_node(g, "cat", "Concat", "", 3, (const char *[]){"a", "b", "c"}, 1, (const char *[]){"y"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "max", "ReduceMax", "", 1, (const char *[]){"y"}, 1, (const char *[]){"ymax"}, &n);
        mrt_graph_add_node(g, "late", "Mul", "", 2, (const char *[]){"a", "ymax"}, 1, (const char *[]){"late"}, &n);
        mrt_graph_add_output(g, "late", NULL, NULL);
        n = NULL;
        break;
    case 2: /* nested: Concat(Concat(a, b), c) */
        mrt_graph_add_node(g, "cat1", "Concat", "", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"ab"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "cat", "Concat", "", 2, (const char *[]){"ab", "c"}, 1, (const char *[]){"y"}, &n);
        break;
    case 4: /* a chain of values computed between the first branch and the Concat, free to reuse memory unless the
               output's block is known to hold a from its producer on */
        mrt_graph_add_node(g, "t1", "Relu", "", 1, (const char *[]){"c"}, 1, (const char *[]){"t1"}, &n);
        mrt_graph_add_node(g, "t2", "Neg", "", 1, (const char *[]){"t1"}, 1, (const char *[]){"t2"}, &n);
        mrt_graph_add_node(g, "t3", "Sigmoid", "", 1, (const char *[]){"t2"}, 1, (const char *[]){"t3"}, &n);
        mrt_graph_add_node(g, "t4", "Neg", "", 1, (const char *[]){"t3"}, 1, (const char *[]){"t4"}, &n);
        mrt_graph_add_node(g, "cat", "Concat", "", 2, (const char *[]){"a", "t4"}, 1, (const char *[]){"y"}, &n);
        break;
    case 5: /* DenseNet's block: each layer concatenates every feature so far, a prefix of the last Concat, which
               holds them all; the earlier Concats are its slices and copy nothing (their inputs: 1 + 2) */
        mrt_graph_add_node(g, "cat1", "Concat", "", 1, (const char *[]){"a"}, 1, (const char *[]){"p1"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "n1", "Neg", "", 1, (const char *[]){"p1"}, 1, (const char *[]){"n1"}, &n);
        mrt_graph_add_node(g, "cat2", "Concat", "", 2, (const char *[]){"a", "n1"}, 1, (const char *[]){"p2"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "n2", "ReduceMax", "", 1, (const char *[]){"p2"}, 1, (const char *[]){"r2"}, &n);
        mrt_node_add_attr_ints(n, "axes", 1, (const int64_t[]){1});
        mrt_graph_add_node(g, "n2b", "Add", "", 2, (const char *[]){"r2", "c"}, 1, (const char *[]){"n2"}, &n);
        mrt_graph_add_node(g, "cat", "Concat", "", 3, (const char *[]){"a", "n1", "n2"}, 1, (const char *[]){"y"}, &n);
        break;
    case 6: /* a Concat of two of the last one's inputs out of order, or not back to back, stays a copy */
        mrt_graph_add_node(g, "cat1", "Concat", "", 2, (const char *[]){"b", "a"}, 1, (const char *[]){"p1"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "cat2", "Concat", "", 2, (const char *[]){"a", "c"}, 1, (const char *[]){"p2"}, &n);
        mrt_node_add_attr_int(n, "axis", 1);
        mrt_graph_add_node(g, "s12", "Add", "", 2, (const char *[]){"p1", "p2"}, 1, (const char *[]){"s12"}, &n);
        mrt_graph_add_node(g, "cat", "Concat", "", 4, (const char *[]){"a", "b", "c", "s12"}, 1, (const char *[]){"y"}, &n);
        break;
    default: /* the same input twice, and a graph input */
        mrt_graph_add_node(g, "cat", "Concat", "", 4, (const char *[]){"a", "a", "x", "b"}, 1, (const char *[]){"y"}, &n);
        break;
    }
    if (n && !mrt_node_attr(n, "axis")) mrt_node_add_attr_int(n, "axis", 1);
    mrt_graph_add_node(g, "neg", "Neg", "", 1, (const char *[]){"y"}, 1, (const char *[]){"out"}, &n);
    mrt_graph_add_output(g, "out", NULL, NULL);
    return m;
}

/* Runs m (one input, "x") with opt twice (the second run reuses the plan), copies its first n_out outputs into out,
   frees it, and returns the plan's stats */
static mrt_session_stats run_x_twice(mrt_model *m, const mrt_session_options *opt, const mrt_tensor *x, int n_out,
                                     mrt_tensor *out, const char *what)
{
    mrt_session_stats st;
    mrt_session *s = run_x_once_opt(m, opt, x, &st, what);
    const char *name = "x";
    mrt_value v = mrt_value_from_tensor(*x);
    cr_assert_eq(mrt_session_run(s, 1, &name, &v), MRT_STATUS_OK, "%s: %s", what, mrt_last_error());
    mrt_session_get_stats(s, &st);
    for (int o = 0; o < n_out; o++) cr_assert_eq(mrt_tensor_copy(&out[o], &mrt_session_output(s, o)->tensor), MRT_STATUS_OK);
    mrt_session_free(s);
    mrt_model_free(m);
    return st;
}

Test(planner, concat_inputs_written_in_place_give_the_same_bits)
{
    static const concat_case cases[] = {
        {"three branches", {1, 4, 8, 8}, 4, 3, 0},
        {"an input read later", {1, 4, 8, 8}, 4, 2, 1},
        {"nested Concats", {1, 4, 8, 8}, 4, 4, 2},
        {"an input twice (its first place only), a graph input", {1, 4, 8, 8}, 4, 2, 3},
        {"a chain computed between", {1, 4, 8, 8}, 4, 2, 4},
        {"DenseNet: earlier Concats are prefixes of the last", {1, 4, 8, 8}, 4, 6, 5},
        {"slices out of order or apart stay copies", {1, 4, 8, 8}, 4, 4, 6},
        {"batch 2: blocks interleave", {2, 4, 8, 8}, 4, 0, 0},
        {"60-byte blocks: the second and third start off the alignment", {1, 3, 5}, 3, 1, 0},
    };
    th_rng rng;
    th_rng_init(&rng, th_seed("planner.concat_in_place"));
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const concat_case *cc = &cases[k];
        mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, cc->rank, cc->shape, -3, 3);
        mrt_tensor got[2][2];
        int n_out = cc->variant == 1 ? 2 : 1;
        for (int plan = 0; plan < 2; plan++) {
            mrt_session_options opt = mrt_session_options_default();
            opt.no_mem_plan = plan == 0;
            mrt_session_stats st = run_x_twice(concat_model(cc), &opt, &x, n_out, got[plan], cc->what);
            if (plan) cr_assert_eq(st.concat_inputs_in_place, cc->expect, "%s: %d Concat inputs in place, want %d", cc->what,
                                   st.concat_inputs_in_place, cc->expect);
            else cr_assert_eq(st.concat_inputs_in_place, 0, "%s: none without the memory plan", cc->what);
        }
        for (int o = 0; o < n_out; o++) {
            int64_t nb = (int64_t)mrt_tensor_nbytes(&got[0][o]);
            cr_assert(nb == (int64_t)mrt_tensor_nbytes(&got[1][o]) && memcmp(got[0][o].data, got[1][o].data, (size_t)nb) == 0,
                      "%s: output %d differs from the run without the memory plan", cc->what, o);
            mrt_tensor_release(&got[0][o]);
            mrt_tensor_release(&got[1][o]);
        }
        mrt_tensor_release(&x);
    }
}

/* A zero Pad of the spatial axes read only by a 2-D AveragePool without pads of its own is fused into the pool
   (engine/fuse.c, zero_pad_2d): x -> Relu -> Pad -> AveragePool -> Neg. Fused or not (no_fuse), the bits must be the
   same, and only the Pads that qualify are fused: opset 11 (pads and value as inputs) and 2 (attributes),
   count_include_pad 0 and 1, ceil mode, asymmetric pads; and left alone: a nonzero value, a negative pad (a crop),
   padding of the channels, reflect mode, a pool with pads of its own, a Pad read twice. */
typedef struct pad_case {
    const char *what;
    int opset;
    int64_t pads[8];
    float value;
    const char *mode;
    int64_t pool_pads, include_pad, ceil_mode, kernel, stride;
    bool read_twice, fused;
} pad_case;

static mrt_model *pad_pool_model(const pad_case *pc)
{
    mrt_model *m = empty_model(pc->opset, (const char *[]){"x", NULL});
    mrt_graph *g = m->graph;
    mrt_node *n;
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"x"}, 1, (const char *[]){"r"}, &n);
    if (pc->opset >= 11) {
        double vd = pc->value;
        mrt_tensor pads = th_vec_i64(8, pc->pads), value = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, &vd);
        mrt_graph_set_initializer(g, "pads", &pads);
        mrt_graph_set_initializer(g, "value", &value);
        mrt_tensor_release(&pads);
        mrt_tensor_release(&value);
        mrt_graph_add_node(g, "pad", "Pad", "", 3, (const char *[]){"r", "pads", "value"}, 1, (const char *[]){"p"}, &n);
    } else {
        mrt_graph_add_node(g, "pad", "Pad", "", 1, (const char *[]){"r"}, 1, (const char *[]){"p"}, &n);
        mrt_node_add_attr_ints(n, "pads", 8, pc->pads);
        mrt_node_add_attr_float(n, "value", pc->value);
    }
    if (pc->mode) mrt_node_add_attr_string(n, "mode", pc->mode);
    mrt_graph_add_node(g, "pool", "AveragePool", "", 1, (const char *[]){"p"}, 1, (const char *[]){"a"}, &n);
    mrt_node_add_attr_ints(n, "kernel_shape", 2, (int64_t[]){pc->kernel, pc->kernel});
    mrt_node_add_attr_ints(n, "strides", 2, (int64_t[]){pc->stride, pc->stride});
    mrt_node_add_attr_ints(n, "pads", 4, (int64_t[]){pc->pool_pads, pc->pool_pads, pc->pool_pads, pc->pool_pads});
    mrt_node_add_attr_int(n, "count_include_pad", pc->include_pad);
    if (pc->opset >= 10) mrt_node_add_attr_int(n, "ceil_mode", pc->ceil_mode);
    mrt_graph_add_node(g, "neg", "Neg", "", 1, (const char *[]){"a"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    if (pc->read_twice) {
        mrt_graph_add_node(g, "also", "Sigmoid", "", 1, (const char *[]){"p"}, 1, (const char *[]){"s"}, &n);
        mrt_graph_add_output(g, "s", NULL, NULL);
    }
    return m;
}

Test(planner, zero_pad_fuses_into_average_pool_with_the_same_bits)
{
    static const pad_case cases[] = {
        {"3x3, pads 1 (Inception's)", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, NULL, 0, 0, 0, 3, 1, false, true},
        {"count_include_pad 1", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, "constant", 0, 1, 0, 3, 1, false, true},
        {"asymmetric, stride 2, ceil", 13, {0, 0, 0, 2, 0, 0, 1, 0}, 0.0f, NULL, 0, 0, 1, 3, 2, false, true},
        {"opset 2 attributes", 2, {0, 0, 2, 2, 0, 0, 2, 2}, 0.0f, NULL, 0, 0, 0, 5, 1, false, true},
        {"a nonzero value", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, NULL, 0, 0, 0, 3, 1, false, false},
        {"a crop", 13, {0, 0, 1, -1, 0, 0, 1, 1}, 0.0f, NULL, 0, 0, 0, 3, 1, false, false},
        {"channels padded", 13, {0, 1, 1, 1, 0, 0, 1, 1}, 0.0f, NULL, 0, 0, 0, 3, 1, false, false},
        {"reflect", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, "reflect", 0, 0, 0, 3, 1, false, false},
        {"the pool's own pads", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, NULL, 1, 0, 0, 3, 1, false, false},
        {"read twice", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, NULL, 0, 0, 0, 3, 1, true, false},
    };
    th_rng rng;
    th_rng_init(&rng, th_seed("planner.pad_pool"));
    /* shapes around the kernel's paths: a small plane (flat), a wide one (rows), several channels */
    static const int64_t shapes[][4] = {{1, 3, 9, 11}, {2, 2, 30, 70}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (size_t si = 0; si < 2; si++) {
            const pad_case *pc = &cases[k];
            mrt_tensor x = th_rand(&rng, MRT_DTYPE_FLOAT, 4, shapes[si], -2, 2);
            mrt_tensor y[2];
            for (int fuse = 0; fuse < 2; fuse++) {
                mrt_session_options opt = mrt_session_options_default();
                opt.no_fuse = fuse == 0;
                mrt_session_stats st = run_x_twice(pad_pool_model(pc), &opt, &x, 1, &y[fuse], pc->what);
                if (fuse) cr_assert_eq(st.fused_nodes, pc->fused ? 1 : 0, "%s: %d nodes fused", pc->what, st.fused_nodes);
            }
            size_t nb = mrt_tensor_nbytes(&y[0]);
            cr_assert(nb == mrt_tensor_nbytes(&y[1]) && memcmp(y[0].data, y[1].data, nb) == 0,
                      "%s, shape %zu: fused and unfused differ", pc->what, si);
            mrt_tensor_release(&y[0]);
            mrt_tensor_release(&y[1]);
            mrt_tensor_release(&x);
        }
}

/* A kernel workspace beyond the allocation limit is refused at plan time naming the node, not later as an
   anonymous arena too large to allocate (a 30x30 kernel over 60x60: 3.5 MB of im2col for 4 KB of output). */
Test(planner, workspace_over_the_allocation_limit_names_the_node)
{
    setenv("MRT_MAX_ALLOC_BYTES", "1000000", 1); /* read once per process; Criterion runs each test in its own */
    /* one output pixel of a 100,000-long dot product: the GEMM packs B (100,000 x 48 floats, 19 MB) */
    mrt_tensor x = th_from_f64(MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1000, 10, 10}, NULL);
    mrt_tensor w = th_from_f64(MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1000, 10, 10}, NULL);
    th_case *c = th_begin("Conv", "", 11);
    th_input(c, &x);
    th_input_const(c, &w);
    th_expect_failure(c, 1, "(Conv): refusing to allocate", "huge packed-B workspace");
    cr_assert(strstr(mrt_last_error(), "the kernel's workspace for these input shapes"), "%s", mrt_last_error());
    mrt_tensor_release(&x);
    mrt_tensor_release(&w);
}

/* MatMul -> Add(bias row) -> Add(residual) -> Relu, and MatMul -> Sigmoid+Mul (SiLU): the five successors fused
   into the two MatMuls give the same bits as the nodes run on their own (whose kernels the op tests check). */
/* An empty opset-17 model with graph inputs "x" and "r", and a generator for its weights */
static mrt_model *x_r_model(const char *weights_seed, th_rng *rr)
{
    mrt_model *m = empty_model(17, (const char *[]){"x", "r", NULL});
    th_rng_init(rr, th_seed(weights_seed));
    return m;
}

static mrt_model *linear_chain_model(void)
{
    th_rng rr;
    mrt_model *m = x_r_model("planner.linear_chain.weights", &rr);
    mrt_graph *g = m->graph;
    mrt_tensor w = th_rand(&rr, MRT_DTYPE_FLOAT, 2, (int64_t[]){40, 70}, -1, 1);
    mrt_tensor b = th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){70}, -1, 1);
    mrt_tensor w2 = th_rand(&rr, MRT_DTYPE_FLOAT, 2, (int64_t[]){70, 33}, -1, 1);
    mrt_graph_set_initializer(g, "w", &w);
    mrt_graph_set_initializer(g, "b", &b);
    mrt_graph_set_initializer(g, "w2", &w2);
    mrt_node *n;
    mrt_graph_add_node(g, "mm", "MatMul", "", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"h0"}, &n);
    mrt_graph_add_node(g, "bias", "Add", "", 2, (const char *[]){"b", "h0"}, 1, (const char *[]){"h1"}, &n);
    mrt_graph_add_node(g, "res", "Add", "", 2, (const char *[]){"h1", "r"}, 1, (const char *[]){"h2"}, &n);
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"h2"}, 1, (const char *[]){"h3"}, &n);
    mrt_graph_add_node(g, "mm2", "MatMul", "", 2, (const char *[]){"h3", "w2"}, 1, (const char *[]){"z"}, &n);
    mrt_graph_add_node(g, "sig", "Sigmoid", "", 1, (const char *[]){"z"}, 1, (const char *[]){"s"}, &n);
    mrt_graph_add_node(g, "silu", "Mul", "", 2, (const char *[]){"z", "s"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_tensor_release(&w), mrt_tensor_release(&b), mrt_tensor_release(&w2);
    return m;
}

/* Runs model m (inputs "x" and "r", one output), frees it, returns the output */
static mrt_tensor run_x_r_model(mrt_model *m, bool no_fuse, int threads, const mrt_tensor *x, const mrt_tensor *r,
                                mrt_session_stats *st)
{
    mrt_session_options opt = mrt_session_options_default();
    opt.no_fuse = no_fuse;
    opt.n_threads = threads;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, &opt, &s), MRT_STATUS_OK);
    const char *names[2] = {"x", "r"};
    mrt_value v[2] = {mrt_value_from_tensor(*x), mrt_value_from_tensor(*r)};
    cr_assert_eq(mrt_session_run(s, 2, names, v), MRT_STATUS_OK, "%s", mrt_last_error());
    mrt_tensor y;
    cr_assert_eq(mrt_tensor_copy(&y, &mrt_session_output(s, 0)->tensor), MRT_STATUS_OK);
    mrt_session_get_stats(s, st);
    mrt_session_free(s);
    mrt_model_free(m);
    return y;
}

/* Builds the same model three times (build(arg)): run unfused on 1 thread, fused on 1 and on 2; the fused runs must
   fuse expect_fused nodes and give the unfused run's bits. Releases x and r. */
static void expect_fused_same_bits(mrt_model *(*build)(const void *), const void *arg, mrt_tensor *x, mrt_tensor *r,
                                   int expect_fused, const char *what)
{
    mrt_session_stats u, f1, f2;
    mrt_tensor yu = run_x_r_model(build(arg), true, 1, x, r, &u), y1 = run_x_r_model(build(arg), false, 1, x, r, &f1),
               y2 = run_x_r_model(build(arg), false, 2, x, r, &f2);
    cr_assert_eq(u.fused_nodes, 0, "%s: --no-fuse fused %d nodes", what, u.fused_nodes);
    cr_assert_eq(f1.fused_nodes, expect_fused, "%s: %d nodes fused, expected %d", what, f1.fused_nodes, expect_fused);
    cr_assert_eq(memcmp(yu.data, y1.data, mrt_tensor_nbytes(&yu)), 0, "%s: fused and unfused runs differ", what);
    cr_assert_eq(memcmp(yu.data, y2.data, mrt_tensor_nbytes(&yu)), 0, "%s: 1 and 2 threads differ", what);
    mrt_tensor_release(x), mrt_tensor_release(r), mrt_tensor_release(&yu), mrt_tensor_release(&y1),
        mrt_tensor_release(&y2);
}

/* BatchNormalization (random constants for `channels` channels) -> Add(residual "r") -> Relu, from value `in` to "y" */
static void add_bn_residual_relu(mrt_graph *g, th_rng *rr, int64_t channels, const char *in)
{
    mrt_tensor scale = th_rand(rr, MRT_DTYPE_FLOAT, 1, &channels, 0.5, 2);
    mrt_tensor shift = th_rand(rr, MRT_DTYPE_FLOAT, 1, &channels, -1, 1);
    mrt_tensor mean = th_rand(rr, MRT_DTYPE_FLOAT, 1, &channels, -1, 1);
    mrt_tensor var = th_rand(rr, MRT_DTYPE_FLOAT, 1, &channels, 0.5, 2);
    const char *names[] = {"scale", "shift", "mean", "var"};
    mrt_tensor *ts[] = {&scale, &shift, &mean, &var};
    for (int i = 0; i < 4; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
    mrt_node *n;
    mrt_graph_add_node(g, "bn", "BatchNormalization", "", 5, (const char *[]){in, "scale", "shift", "mean", "var"}, 1,
                       (const char *[]){"h_bn"}, &n);
    mrt_graph_add_node(g, "res", "Add", "", 2, (const char *[]){"h_bn", "r"}, 1, (const char *[]){"h_res"}, &n);
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"h_res"}, 1, (const char *[]){"y"}, &n);
    for (int i = 0; i < 4; i++) mrt_tensor_release(ts[i]);
}

static mrt_model *build_linear_chain(const void *arg) { (void)arg; return linear_chain_model(); }

Test(planner, matmul_bias_residual_activation_fuse_with_the_same_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("planner.linear_chain"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){3, 50, 40}, -1, 1);
    mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){3, 50, 70}, -1, 1);
    /* bias, residual and Relu into the first MatMul, Sigmoid and Mul into the second */
    expect_fused_same_bits(build_linear_chain, NULL, &x, &res, 5, "MatMul chains");
}

/* MatMul -> Add(bias) -> GELU written out as torch exports it: Div(h, sqrt 2) -> Erf -> Add(., 1) -> Mul(h, .) ->
   Mul(., 0.5). variant 0: that order; 1: every commutative node's operands swapped; 2: the last factor a vector
   (not a scalar), which the GELU post-op does not take: a pointwise program takes the four nodes before it instead.
   "r" is unused but bound. */
static mrt_model *gelu_chain_model(const void *arg)
{
    int variant = *(const int *)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.gelu_chain.weights", &rr);
    mrt_graph *g = m->graph;
    mrt_tensor w = th_rand(&rr, MRT_DTYPE_FLOAT, 2, (int64_t[]){40, 70}, -1, 1);
    mrt_tensor b = th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){70}, -1, 1);
    mrt_tensor sqrt2 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.4142135381698608});
    mrt_tensor one = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0});
    mrt_tensor half = variant == 2 ? th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){70}, 0.4, 0.6)
                                   : th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, (double[]){0.5});
    const char *names[] = {"w", "b", "sqrt2", "one", "half"};
    mrt_tensor *ts[] = {&w, &b, &sqrt2, &one, &half};
    for (int i = 0; i < 5; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
    bool sw = variant == 1;
    mrt_node *n;
    mrt_graph_add_node(g, "mm", "MatMul", "", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"h0"}, &n);
    mrt_graph_add_node(g, "bias", "Add", "", 2, (const char *[]){"h0", "b"}, 1, (const char *[]){"h"}, &n);
    mrt_graph_add_node(g, "div", "Div", "", 2, (const char *[]){"h", "sqrt2"}, 1, (const char *[]){"t"}, &n);
    mrt_graph_add_node(g, "erf", "Erf", "", 1, (const char *[]){"t"}, 1, (const char *[]){"e"}, &n);
    mrt_graph_add_node(g, "add1", "Add", "", 2, sw ? (const char *[]){"one", "e"} : (const char *[]){"e", "one"}, 1,
                       (const char *[]){"a"}, &n);
    mrt_graph_add_node(g, "mul1", "Mul", "", 2, sw ? (const char *[]){"a", "h"} : (const char *[]){"h", "a"}, 1,
                       (const char *[]){"p"}, &n);
    mrt_graph_add_node(g, "mul2", "Mul", "", 2, sw ? (const char *[]){"half", "p"} : (const char *[]){"p", "half"}, 1,
                       (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    for (int i = 0; i < 5; i++) mrt_tensor_release(ts[i]);
    return m;
}

Test(planner, gelu_written_out_fuses_into_the_matmul_with_the_same_bits)
{
    for (int variant = 0; variant < 3; variant++) {
        th_rng r;
        th_rng_init(&r, th_seed("planner.gelu_chain"));
        /* values spread over erf's two polynomial ranges and its flat tail */
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 37, 40}, -1.5, 1.5);
        mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){1}, -1, 1);
        char label[64];
        snprintf(label, sizeof label, "GELU chain, variant %d", variant);
        expect_fused_same_bits(gelu_chain_model, &variant, &x, &res, variant == 2 ? 5 : 6, label);
    }
}

/* Add(x, r) -> the GELU written out (as wav2vec2's GroupNorm affine before its GELU): the five GELU nodes fuse into
   the Add. variant 0: x [2, 37, 300] and r [37, 1], the Add's flat fast path (blocks of 4096 across threads);
   1: x [2, 1, 300] and r [1, 37, 1], its generic broadcast. */
static mrt_model *add_gelu_model(const void *arg)
{
    (void)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.add_gelu.weights", &rr);
    mrt_graph *g = m->graph;
    mrt_tensor sqrt2 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.4142135381698608});
    mrt_tensor one = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1.0});
    mrt_tensor half = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0.5});
    const char *names[] = {"sqrt2", "one", "half"};
    mrt_tensor *ts[] = {&sqrt2, &one, &half};
    for (int i = 0; i < 3; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
    mrt_node *n;
    mrt_graph_add_node(g, "add", "Add", "", 2, (const char *[]){"x", "r"}, 1, (const char *[]){"h"}, &n);
    mrt_graph_add_node(g, "div", "Div", "", 2, (const char *[]){"h", "sqrt2"}, 1, (const char *[]){"t"}, &n);
    mrt_graph_add_node(g, "erf", "Erf", "", 1, (const char *[]){"t"}, 1, (const char *[]){"e"}, &n);
    mrt_graph_add_node(g, "add1", "Add", "", 2, (const char *[]){"e", "one"}, 1, (const char *[]){"a"}, &n);
    mrt_graph_add_node(g, "mul1", "Mul", "", 2, (const char *[]){"h", "a"}, 1, (const char *[]){"p"}, &n);
    mrt_graph_add_node(g, "mul2", "Mul", "", 2, (const char *[]){"p", "half"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    for (int i = 0; i < 3; i++) mrt_tensor_release(ts[i]);
    return m;
}

Test(planner, gelu_written_out_fuses_into_an_elementwise_add_with_the_same_bits)
{
    for (int variant = 0; variant < 2; variant++) {
        th_rng r;
        th_rng_init(&r, th_seed("planner.add_gelu"));
        mrt_tensor x = variant == 0 ? th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 37, 300}, -2, 2)
                                    : th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 300}, -2, 2);
        mrt_tensor res = variant == 0 ? th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){37, 1}, -1, 1)
                                      : th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){1, 37, 1}, -1, 1);
        char label[64];
        snprintf(label, sizeof label, "Add then GELU, variant %d", variant);
        expect_fused_same_bits(add_gelu_model, &variant, &x, &res, 5, label);
    }
}

/* A BatchNormalization on a graph input (no Conv before it: DenseNet's pre-activation BatchNormalization -> Relu
   on a Concat) anchors a chain of its own. variant 0: -> Relu (the kernel's one-loop path); 1: -> Add(residual) ->
   Relu; 2: -> Sigmoid (a pass per channel plane after the BatchNormalization's). */
static mrt_model *bn_chain_model(const void *arg)
{
    int variant = *(const int *)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.bn_chain.weights", &rr);
    mrt_graph *g = m->graph;
    if (variant == 1) {
        add_bn_residual_relu(g, &rr, 6, "x");
    } else {
        int64_t channels = 6;
        mrt_tensor scale = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &channels, 0.5, 2);
        mrt_tensor shift = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &channels, -1, 1);
        mrt_tensor mean = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &channels, -1, 1);
        mrt_tensor var = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &channels, 0.5, 2);
        const char *names[] = {"scale", "shift", "mean", "var"};
        mrt_tensor *ts[] = {&scale, &shift, &mean, &var};
        for (int i = 0; i < 4; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
        mrt_node *n;
        mrt_graph_add_node(g, "bn", "BatchNormalization", "", 5, (const char *[]){"x", "scale", "shift", "mean", "var"},
                           1, (const char *[]){"h_bn"}, &n);
        mrt_graph_add_node(g, "act", variant == 0 ? "Relu" : "Sigmoid", "", 1, (const char *[]){"h_bn"}, 1,
                           (const char *[]){"y"}, &n);
        for (int i = 0; i < 4; i++) mrt_tensor_release(ts[i]);
    }
    mrt_graph_add_output(g, "y", NULL, NULL);
    return m;
}

Test(planner, batchnorm_anchors_its_own_chain_with_the_same_bits)
{
    for (int variant = 0; variant < 3; variant++) {
        th_rng r;
        th_rng_init(&r, th_seed("planner.bn_chain"));
        /* 2 x 6 planes of 40 x 70: two ranges of planes on 2 threads */
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 6, 40, 70}, -3, 3);
        mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 6, 40, 70}, -1, 1);
        ((float *)x.data)[5] = NAN, ((float *)x.data)[77] = -0.0f;
        char label[64];
        snprintf(label, sizeof label, "BatchNormalization chain, variant %d", variant);
        expect_fused_same_bits(bn_chain_model, &variant, &x, &res, variant == 1 ? 2 : 1, label);
    }
}

/* A stem Conv (3 input channels: ops_cpu/conv.c reads its rows in place) -> BatchNormalization -> Add(residual)
   -> Relu on a batch of 2: fused into the Conv, the same bits as the nodes run on their own, with 1 and 2 threads
   (the residual is indexed from each image's first output). */
static mrt_model *stem_chain_model(const void *arg)
{
    (void)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.stem_chain.weights", &rr);
    mrt_graph *g = m->graph;
    mrt_tensor w = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){20, 3, 3, 3}, -1, 1);
    mrt_tensor b = th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){20}, -1, 1);
    mrt_graph_set_initializer(g, "w", &w);
    mrt_graph_set_initializer(g, "b", &b);
    mrt_node *n;
    mrt_graph_add_node(g, "conv", "Conv", "", 3, (const char *[]){"x", "w", "b"}, 1, (const char *[]){"h0"}, &n);
    mrt_node_add_attr_ints(n, "strides", 2, (const int64_t[]){2, 2});
    mrt_node_add_attr_ints(n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    add_bn_residual_relu(g, &rr, 20, "h0");
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_tensor_release(&w), mrt_tensor_release(&b);
    return m;
}

Test(planner, stem_conv_batchnorm_residual_relu_fuse_with_the_same_bits)
{
    th_rng r;
    th_rng_init(&r, th_seed("planner.stem_chain"));
    /* 61 x 101 -> 31 x 51 outputs: a row of 48 + 3 columns */
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 3, 61, 101}, -1, 1);
    mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 20, 31, 51}, -1, 1);
    expect_fused_same_bits(stem_chain_model, NULL, &x, &res, 3, "stem: BatchNormalization, Add and Relu");
}

/* A Conv from "x" (m x c x k x k weights, dilation d (1 when 0), padding d k / 2) -> BatchNormalization -> Add(residual "r") -> Relu, or ->
   Sigmoid -> Add (an epilogue the kernels do not apply in registers: a pass after each block) */
typedef struct conv_chain {
    const char *seed;
    int64_t m, c, k;
    int act; /* 0: BatchNormalization, Add, Relu; 1: Sigmoid then Add; 2: HardSwish then Add */
    int64_t d;
    int64_t group; /* 0: 1 */
} conv_chain;

static mrt_model *conv_chain_model(const void *arg)
{
    const conv_chain *cc = arg;
    th_rng rr;
    mrt_model *m = x_r_model(cc->seed, &rr);
    mrt_graph *g = m->graph;
    int64_t group = cc->group ? cc->group : 1;
    mrt_tensor w = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){cc->m, cc->c / group, cc->k, cc->k}, -1, 1);
    mrt_graph_set_initializer(g, "w", &w);
    mrt_node *n;
    mrt_graph_add_node(g, "conv", "Conv", "", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"h0"}, &n);
    if (group > 1) mrt_node_add_attr_int(n, "group", group);
    int64_t d = cc->d ? cc->d : 1, pad = d * (cc->k / 2);
    mrt_node_add_attr_ints(n, "pads", 4, (const int64_t[]){pad, pad, pad, pad});
    mrt_node_add_attr_ints(n, "dilations", 2, (const int64_t[]){d, d});
    if (cc->act) {
        mrt_graph_add_node(g, "act", cc->act == 1 ? "Sigmoid" : "HardSwish", "", 1, (const char *[]){"h0"}, 1,
                           (const char *[]){"h1"}, &n);
        mrt_graph_add_node(g, "res", "Add", "", 2, (const char *[]){"h1", "r"}, 1, (const char *[]){"y"}, &n);
    } else {
        add_bn_residual_relu(g, &rr, cc->m, "h0");
    }
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_tensor_release(&w);
    return m;
}

/* Conv chains on a batch of 2, the same bits as the nodes on their own (Sigmoid or HardSwish then Add: the chain
   stops at the activation, so only the activation joins). seed names the inputs' seed, hw the image. */
static void expect_conv_chains_same_bits(const conv_chain *base, const char *seed, int64_t h, int64_t w,
                                         const char *what)
{
    static const char *const acts[] = {"BatchNormalization, Add, Relu", "Sigmoid", "HardSwish"};
    for (int i = 0; i < 3; i++) {
        conv_chain cc = *base;
        cc.act = i;
        th_rng r;
        th_rng_init(&r, th_seed(seed));
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, cc.c, h, w}, -1, 1);
        mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, cc.m, h, w}, -1, 1);
        char label[128];
        snprintf(label, sizeof label, "%s from %lld channels + %s", what, (long long)cc.c,
                 acts[i]);
        expect_fused_same_bits(conv_chain_model, &cc, &x, &res, cc.act ? 1 : 3, label);
    }
}

/* A 1x1 Conv from 20 or 300 channels (two k blocks, added in place) to 24: ops_cpu/conv.c reads its B rows in
   place; at 9 x 23, four full tiles and a tile of the last 15 columns, at 24 x 23 eleven and 24 columns. From 300
   channels at 9 x 23 it takes ops_cpu/conv_pointwise.c (channels as lanes: BatchNormalization, Add and Relu in
   registers after the transposes, Sigmoid and HardSwish as a pass over the task's rows). */
Test(planner, pointwise_conv_chains_fuse_with_the_same_bits)
{
    conv_chain narrow = {"planner.pointwise_chain.weights", 24, 20, 1, 0}, deep = narrow;
    deep.c = 300;
    expect_conv_chains_same_bits(&narrow, "planner.pointwise_chain", 9, 23, "pointwise");
    expect_conv_chains_same_bits(&deep, "planner.pointwise_chain", 9, 23, "pointwise, channels as lanes");
    expect_conv_chains_same_bits(&deep, "planner.pointwise_chain", 24, 23, "pointwise");
}

/* A 3x3 Conv 20 -> 24 by Winograd's F(2x2, 3x3) (ops_cpu/conv_winograd.c: BatchNormalization, Add and Relu in the
   output transform's registers, Sigmoid as a pass over the planes), at 11 x 37 (odd: tiles whose second row and
   column are dropped). */
Test(planner, winograd_conv_chains_fuse_with_the_same_bits)
{
    conv_chain cc = {"planner.winograd_chain.weights", 24, 20, 3, 0};
    expect_conv_chains_same_bits(&cc, "planner.winograd_chain", 11, 37, "3x3 Winograd");
}

/* A 3x3 Conv 40 -> 24 with dilation 5 on a 4 x 6 image: only the centre tap reads the image, and ops_cpu/conv.c
   drops the others while keeping the full product's two k blocks (the epilogue after the second); with dilation 6
   on 9 x 7, the live taps differ by band of rows */
Test(planner, conv_chains_with_taps_reading_only_padding_fuse_with_the_same_bits)
{
    conv_chain cc = {"planner.dead_taps_chain.weights", 24, 40, 3, 0, 5};
    expect_conv_chains_same_bits(&cc, "planner.dead_taps_chain", 4, 6, "3x3 dilation 5");
    cc.d = 6; /* 9 x 7: bands of rows with 6, 3 and 6 live taps, each its own GEMMs and epilogue */
    expect_conv_chains_same_bits(&cc, "planner.dead_taps_chain", 9, 7, "3x3 dilation 6");
}

/* A 3x3 Conv 32 -> 32 in 2 groups of 16, by ops_cpu/conv_grouped.c (channels as lanes): the epilogue is a pass
   over each block's rows of the output planes, at 7 x 9 and at 20 x 23 (rows in bands) */
Test(planner, grouped_conv_chains_fuse_with_the_same_bits)
{
    conv_chain cc = {"planner.grouped_chain.weights", 32, 32, 3, 0, 1, 2};
    expect_conv_chains_same_bits(&cc, "planner.grouped_chain", 7, 9, "3x3 in 2 groups");
    expect_conv_chains_same_bits(&cc, "planner.grouped_chain", 20, 23, "3x3 in 2 groups");
    /* one group, 32 outputs on 63 positions: the same path, two blocks at once (K = 288: gc_block2) */
    conv_chain dense = {"planner.grouped_chain.weights", 32, 32, 3, 0, 1, 1};
    expect_conv_chains_same_bits(&dense, "planner.grouped_chain", 7, 9, "3x3 one group, 32 outputs");
    dense.act = 1; /* Sigmoid then Add: a pass over the planes */
    expect_conv_chains_same_bits(&dense, "planner.grouped_chain", 7, 9, "3x3 one group, Sigmoid");
}

/* A squeeze-excite block: s = Sigmoid(Conv(Relu(Conv(GlobalAveragePool(x))))), then Conv1x1(Mul(x, s)) + r. The
   Mul is fused into the projection Conv as an input scale (engine/epilogue.h, mrt_prologue): the Conv packs
   x * s, the Mul's own product, so the bits are those of the nodes run on their own (output 0 is compared).
   `scale_first`: Mul(s, x);
   `batch_scale`: s is a constant [1, C, 1, 1] shared by the batch instead of the per-image SE branch; `mul_read`:
   the Mul's output is also a graph output (no fusion: it must be computed); `kernel`: the projection's kernel
   size (3: not pointwise, no fusion); `proj`: the projection's output channels (0: 12; 16 takes
   ops_cpu/conv_pointwise.c on planes of 4 to 256 positions, which scales a copy of the input). */
typedef struct se_variant {
    bool scale_first, batch_scale, mul_read;
    int kernel, proj;
} se_variant;

static mrt_model *se_block_model(const void *arg)
{
    se_variant v = *(const se_variant *)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.se_block.weights", &rr);
    mrt_graph *g = m->graph;
    int64_t k = v.kernel, mo = v.proj ? v.proj : 12;
    mrt_tensor w1 = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){5, 20, 1, 1}, -1, 1);
    mrt_tensor w2 = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){20, 5, 1, 1}, -1, 1);
    mrt_tensor w3 = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){mo, 20, k, k}, -1, 1);
    mrt_tensor b3 = th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){mo}, -1, 1);
    mrt_tensor cs = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 20, 1, 1}, 0, 2);
    const char *names[] = {"w1", "w2", "w3", "b3", "cs"};
    mrt_tensor *ts[] = {&w1, &w2, &w3, &b3, &cs};
    for (int i = 0; i < 5; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
    mrt_node *n;
    /* the block's input is an intermediate (x itself is not in the arena) */
    mrt_graph_add_node(g, "pre", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"xn"}, &n);
    mrt_graph_add_node(g, "gap", "GlobalAveragePool", "", 1, (const char *[]){"xn"}, 1, (const char *[]){"p"}, &n);
    mrt_graph_add_node(g, "reduce", "Conv", "", 2, (const char *[]){"p", "w1"}, 1, (const char *[]){"q0"}, &n);
    mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"q0"}, 1, (const char *[]){"q1"}, &n);
    mrt_graph_add_node(g, "expand", "Conv", "", 2, (const char *[]){"q1", "w2"}, 1, (const char *[]){"q2"}, &n);
    mrt_graph_add_node(g, "sig", "Sigmoid", "", 1, (const char *[]){"q2"}, 1, (const char *[]){"s"}, &n);
    const char *s = v.batch_scale ? "cs" : "s";
    mrt_graph_add_node(g, "scale", "Mul", "", 2, v.scale_first ? (const char *[]){s, "xn"} : (const char *[]){"xn", s},
                       1, (const char *[]){"m"}, &n);
    /* between the Mul and the Conv, new values the arena could place where the Mul's operands were if their
       lifetimes ended at the Mul (read by the projection, they must not) */
    mrt_graph_add_node(g, "late1", "Neg", "", 1, (const char *[]){"cs"}, 1, (const char *[]){"l1"}, &n);
    mrt_graph_add_node(g, "late2", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"l2"}, &n);
    mrt_graph_add_node(g, "project", "Conv", "", 3, (const char *[]){"m", "w3", "b3"}, 1, (const char *[]){"h"}, &n);
    if (k > 1) mrt_node_add_attr_ints(n, "pads", 4, (const int64_t[]){k / 2, k / 2, k / 2, k / 2});
    mrt_graph_add_node(g, "res", "Add", "", 2, (const char *[]){"h", "r"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_node(g, "late_sum", "Add", "", 2, (const char *[]){"l1", "l2"}, 1, (const char *[]){"l"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_graph_add_output(g, "l", NULL, NULL);
    if (v.mul_read) mrt_graph_add_output(g, "m", NULL, NULL);
    if (v.batch_scale) mrt_graph_add_output(g, "s", NULL, NULL); /* keeps the SE branch live */
    for (int i = 0; i < 5; i++) mrt_tensor_release(ts[i]);
    return m;
}

static void check_se_block(se_variant v, int expect_fused)
{
    /* 2x2: the GEMM's few-columns path; 9x7: shared packed panels; 23x29: per-thread strips (ops_cpu/sgemm.c) */
    static const int64_t sizes[][2] = {{2, 2}, {9, 7}, {23, 29}};
    for (int i = 0; i < 3; i++) {
        th_rng r;
        th_rng_init(&r, th_seed("planner.se_block"));
        int64_t h = sizes[i][0], w = sizes[i][1];
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 20, h, w}, -1, 1);
        mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, v.proj ? v.proj : 12, h, w}, -1, 1);
        char what[32];
        snprintf(what, sizeof what, "%dx%d", (int)h, (int)w);
        expect_fused_same_bits(se_block_model, &v, &x, &res, expect_fused, what);
    }
}

/* Relu into the reduce Conv, Sigmoid into the expand Conv, the Mul and the residual Add into the projection */
Test(planner, squeeze_excite_scale_fuses_into_the_projection_with_the_same_bits)
{
    check_se_block((se_variant){.kernel = 1}, 4);
    check_se_block((se_variant){.kernel = 1, .scale_first = true}, 4);
    check_se_block((se_variant){.kernel = 1, .batch_scale = true}, 4);
    check_se_block((se_variant){.kernel = 1, .proj = 16}, 4);
    check_se_block((se_variant){.kernel = 1, .proj = 16, .batch_scale = true}, 4);
}

Test(planner, input_scale_is_not_fused_where_its_product_is_read_or_the_conv_is_not_pointwise)
{
    check_se_block((se_variant){.kernel = 1, .mul_read = true}, 3);
    check_se_block((se_variant){.kernel = 3}, 3);
}

/* DenseNet's pre-activation: Neg(x) -> BatchNormalization [-> Relu] -> 1x1 Conv -> Add(residual "r"). The
   BatchNormalization (and its Relu) is fused into the Conv as an input BatchNormalization (engine/epilogue.h,
   mrt_prologue): the Conv packs the nodes' own results, so the bits are those of the nodes run on their own.
   `relu`: with the Relu; `proj`: the Conv's output channels (12: the GEMM's packer; 16: ops_cpu/conv_pointwise.c
   on planes of 4 to 256 positions, which normalises a copy of the input); `bn_read`: the BatchNormalization's output
   is also a graph output; `kernel`: 3 (not pointwise). The last two are not fused. */
typedef struct prebn_variant {
    bool relu, bn_read;
    int kernel, proj;
} prebn_variant;

static mrt_model *prebn_model(const void *arg)
{
    prebn_variant v = *(const prebn_variant *)arg;
    th_rng rr;
    mrt_model *m = x_r_model("planner.prebn.weights", &rr);
    mrt_graph *g = m->graph;
    int64_t c = 20, k = v.kernel;
    mrt_tensor scale = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &c, 0.5, 2);
    mrt_tensor shift = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &c, -1, 1);
    mrt_tensor mean = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &c, -1, 1);
    mrt_tensor var = th_rand(&rr, MRT_DTYPE_FLOAT, 1, &c, 0.5, 2);
    mrt_tensor w = th_rand(&rr, MRT_DTYPE_FLOAT, 4, (int64_t[]){v.proj, c, k, k}, -1, 1);
    mrt_tensor b = th_rand(&rr, MRT_DTYPE_FLOAT, 1, (int64_t[]){v.proj}, -1, 1);
    const char *names[] = {"scale", "shift", "mean", "var", "w", "b"};
    mrt_tensor *ts[] = {&scale, &shift, &mean, &var, &w, &b};
    for (int i = 0; i < 6; i++) mrt_graph_set_initializer(g, names[i], ts[i]);
    mrt_node *n;
    mrt_graph_add_node(g, "pre", "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"xn"}, &n);
    mrt_graph_add_node(g, "bn", "BatchNormalization", "", 5, (const char *[]){"xn", "scale", "shift", "mean", "var"}, 1,
                       (const char *[]){"h_bn"}, &n);
    if (v.relu) mrt_graph_add_node(g, "relu", "Relu", "", 1, (const char *[]){"h_bn"}, 1, (const char *[]){"h_act"}, &n);
    /* read by the Conv after a node that the arena could place where xn was if its lifetime ended at the
       BatchNormalization */
    mrt_graph_add_node(g, "late", "Neg", "", 1, (const char *[]){"r"}, 1, (const char *[]){"l"}, &n);
    mrt_graph_add_node(g, "conv", "Conv", "", 3, (const char *[]){v.relu ? "h_act" : "h_bn", "w", "b"}, 1,
                       (const char *[]){"h"}, &n);
    if (k > 1) mrt_node_add_attr_ints(n, "pads", 4, (const int64_t[]){k / 2, k / 2, k / 2, k / 2});
    mrt_graph_add_node(g, "res", "Add", "", 2, (const char *[]){"h", "r"}, 1, (const char *[]){"h2"}, &n);
    mrt_graph_add_node(g, "sum", "Add", "", 2, (const char *[]){"h2", "l"}, 1, (const char *[]){"y"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    if (v.bn_read) mrt_graph_add_output(g, "h_bn", NULL, NULL);
    for (int i = 0; i < 6; i++) mrt_tensor_release(ts[i]);
    return m;
}

static void check_prebn(prebn_variant v, int expect_fused)
{
    /* 2x2: few columns; 9x7 and 23x29: packed panels, shared or per-thread strips (ops_cpu/sgemm.c); 16 output
       channels at 2x2 and 9x7: the lanes path, at 23x29 (667 positions) the GEMM */
    static const int64_t sizes[][2] = {{2, 2}, {9, 7}, {23, 29}};
    for (int i = 0; i < 3; i++) {
        th_rng r;
        th_rng_init(&r, th_seed("planner.prebn"));
        int64_t h = sizes[i][0], w = sizes[i][1];
        mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, 20, h, w}, -3, 3);
        mrt_tensor res = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){2, v.proj, h, w}, -1, 1);
        ((float *)x.data)[1] = -0.0f;
        char what[32];
        snprintf(what, sizeof what, "%dx%d", (int)h, (int)w);
        expect_fused_same_bits(prebn_model, &v, &x, &res, expect_fused, what);
    }
}

/* the BatchNormalization, the Relu and the residual Add into the Conv (the last Add reads the Conv's chain) */
Test(planner, pre_activation_batchnorm_fuses_into_a_pointwise_conv_with_the_same_bits)
{
    check_prebn((prebn_variant){.relu = true, .kernel = 1, .proj = 12}, 3);
    check_prebn((prebn_variant){.relu = false, .kernel = 1, .proj = 12}, 2);
    check_prebn((prebn_variant){.relu = true, .kernel = 1, .proj = 16}, 3);
    check_prebn((prebn_variant){.relu = false, .kernel = 1, .proj = 16}, 2);
}

/* read: the Relu and the Conv are chains of their own, the Conv takes the residual Add (1 fused); a 3x3 Conv: the
   BatchNormalization takes its Relu (1) and the Conv the residual Add (1) */
Test(planner, pre_activation_batchnorm_is_not_fused_where_it_is_read_or_the_conv_is_not_pointwise)
{
    check_prebn((prebn_variant){.relu = true, .bn_read = true, .kernel = 1, .proj = 12}, 1);
    check_prebn((prebn_variant){.relu = true, .kernel = 3, .proj = 12}, 2);
}

/* Run-time storage dies after its last reader. x -> NonZero -> Cast(float) = c -> Neg x 6 -> If (its branches read
   c and the last Neg from the enclosing graph: then c + n6, else c - n6) = y. The sizes depend on x's values, so
   every node after NonZero allocates at run time: NonZero's output (8N bytes) dies at Cast, each Neg's at the next,
   c and n6 only at If (read from inside its branches). At most 12N bytes are alive at once; kept to the end of the
   run, they would reach 8N + 4N * 9. */
Test(planner, run_time_tensors_die_after_their_last_reader)
{
    enum { N = 4096, NEGS = 6 };
    mrt_model *m = empty_model(16, (const char *[]){"x", "cond", NULL});
    mrt_graph *g = m->graph;
    mrt_node *n;
    mrt_graph_add_node(g, "nz", "NonZero", "", 1, (const char *[]){"x"}, 1, (const char *[]){"idx"}, &n);
    mrt_graph_add_node(g, "cast", "Cast", "", 1, (const char *[]){"idx"}, 1, (const char *[]){"c"}, &n);
    mrt_node_add_attr_int(n, "to", MRT_DTYPE_FLOAT);
    char in[16] = "c", out[16];
    for (int k = 1; k <= NEGS; k++) {
        snprintf(out, sizeof out, "n%d", k);
        mrt_graph_add_node(g, out, "Neg", "", 1, (const char *[]){in}, 1, (const char *[]){out}, &n);
        memcpy(in, out, sizeof in);
    }
    mrt_graph *br[2] = {mrt_graph_new("then"), mrt_graph_new("else")};
    for (int b = 0; b < 2; b++) {
        mrt_graph_add_node(br[b], "op", b ? "Sub" : "Add", "", 2, (const char *[]){"c", in}, 1, (const char *[]){"r"}, &n);
        mrt_graph_add_output(br[b], "r", NULL, NULL);
        for (int k = 0; k < 2; k++) br[b]->values[mrt_graph_find_value(br[b], k ? in : "c")].is_outer = true;
    }
    mrt_graph_add_node(g, "if", "If", "", 1, (const char *[]){"cond"}, 1, (const char *[]){"y"}, &n);
    mrt_node_add_attr_graph(n, "then_branch", br[0]);
    mrt_node_add_attr_graph(n, "else_branch", br[1]);
    mrt_graph_add_output(g, "y", NULL, NULL);

    mrt_tensor x = {0}, cond = {0};
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 1, (int64_t[]){N}), MRT_STATUS_OK);
    cr_assert_eq(mrt_tensor_alloc(&cond, MRT_DTYPE_BOOL, 0, NULL), MRT_STATUS_OK);
    for (int i = 0; i < N; i++) ((float *)x.data)[i] = 1.0f + (float)i;
    *(bool *)cond.data = true;
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK);
    mrt_value v[2] = {mrt_value_from_tensor(x), mrt_value_from_tensor(cond)};
    for (int run = 0; run < 2; run++) { /* the second run reuses the plan */
        cr_assert_eq(mrt_session_run(s, 2, (const char *[]){"x", "cond"}, v), MRT_STATUS_OK, "%s", mrt_last_error());
        mrt_session_stats st;
        mrt_session_get_stats(s, &st);
        cr_assert_eq(st.run_peak_bytes, (size_t)12 * N, "run %d: %zu bytes at once, want 12N = %d", run,
                     st.run_peak_bytes, 12 * N);
        const mrt_tensor *y = &mrt_session_output(s, 0)->tensor;
        cr_assert_eq(y->rank, 2);
        cr_assert_eq(y->shape[1], N);
        for (int i = 0; i < N; i++) /* c + (-1)^6 c = 2i */
            cr_assert_eq(((const float *)y->data)[i], 2.0f * (float)i, "y[%d] = %g", i, ((const float *)y->data)[i]);
    }
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&x);
    mrt_tensor_release(&cond);
}

/* A Gemm and a MatMul after NonZero have their shapes only at run time. The Gemm's weights are a constant: its
   kernel packs them at the first run (MRT_KERNEL_PREPARE_FROM_CONSTANTS) and keeps them. The MatMul's B is a graph
   input: it must never be packed once and reused. x's rows picked by `mask` (NonZero -> Reshape -> Gather) times
   W^T + bias, and times B, over three runs of one plan with different masks and B values, against the GEMM's chain
   (k = 40: one fma chain from 0, then + bias). */
Test(planner, dynamic_gemm_prepares_constant_weights_at_its_first_run)
{
    enum { ROWS = 9, K = 40, N = 50, NB = 30 };
    th_rng r;
    th_rng_init(&r, th_seed("planner.dynamic_prepare"));
    mrt_model *m = empty_model(13, (const char *[]){"x", "mask", "b2", NULL});
    mrt_graph *g = m->graph;
    mrt_tensor w = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){N, K}, -1, 1);
    mrt_tensor bias = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){N}, -1, 1), flat = th_vec_i64(1, (int64_t[]){-1});
    float wv[N * K], bv[N]; /* the graph takes the tensors */
    memcpy(wv, w.data, sizeof wv);
    memcpy(bv, bias.data, sizeof bv);
    mrt_graph_set_initializer(g, "w", &w);
    mrt_graph_set_initializer(g, "bias", &bias);
    mrt_graph_set_initializer(g, "flat", &flat);
    mrt_node *n;
    mrt_graph_add_node(g, "nz", "NonZero", "", 1, (const char *[]){"mask"}, 1, (const char *[]){"idx2"}, &n);
    mrt_graph_add_node(g, "flatten", "Reshape", "", 2, (const char *[]){"idx2", "flat"}, 1, (const char *[]){"idx"}, &n);
    mrt_graph_add_node(g, "pick", "Gather", "", 2, (const char *[]){"x", "idx"}, 1, (const char *[]){"rows"}, &n);
    mrt_graph_add_node(g, "gemm", "Gemm", "", 3, (const char *[]){"rows", "w", "bias"}, 1, (const char *[]){"y"}, &n);
    mrt_node_add_attr_int(n, "transB", 1);
    mrt_graph_add_node(g, "mm", "MatMul", "", 2, (const char *[]){"rows", "b2"}, 1, (const char *[]){"z"}, &n);
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_graph_add_output(g, "z", NULL, NULL);
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK);
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){ROWS, K}, -1, 1), mask = {0};
    cr_assert_eq(mrt_tensor_alloc(&mask, MRT_DTYPE_BOOL, 1, (int64_t[]){ROWS}), MRT_STATUS_OK);
    const float *xv = x.data;
    for (int run = 0; run < 3; run++) {
        int64_t picked[ROWS], cnt = 0;
        for (int i = 0; i < ROWS; i++) {
            bool on = run == 0 ? i % 2 == 0 : run == 1 ? i < 2 : i != 4;
            ((bool *)mask.data)[i] = on;
            if (on) picked[cnt++] = i;
        }
        mrt_tensor b2 = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){K, NB}, -1, 1);
        mrt_value v[3] = {mrt_value_from_tensor(x), mrt_value_from_tensor(mask), mrt_value_from_tensor(b2)};
        cr_assert_eq(mrt_session_run(s, 3, (const char *[]){"x", "mask", "b2"}, v), MRT_STATUS_OK, "%s", mrt_last_error());
        const mrt_tensor *y = &mrt_session_output(s, 0)->tensor, *z = &mrt_session_output(s, 1)->tensor;
        cr_assert(y->rank == 2 && y->shape[0] == cnt && y->shape[1] == N && z->shape[0] == cnt && z->shape[1] == NB);
        for (int64_t i = 0; i < cnt; i++) {
            const float *row = xv + picked[i] * K;
            for (int j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int k = 0; k < K; k++) acc = fmaf(row[k], wv[j * K + k], acc);
                acc = acc + bv[j];
                float got = ((const float *)y->data)[i * N + j];
                cr_assert(memcmp(&got, &acc, sizeof got) == 0, "run %d: y[%lld][%d] = %.9g, the chain gives %.9g", run,
                          (long long)i, j, got, acc);
            }
            for (int j = 0; j < NB; j++) {
                float acc = 0.0f;
                for (int k = 0; k < K; k++) acc = fmaf(row[k], ((const float *)b2.data)[k * NB + j], acc);
                float got = ((const float *)z->data)[i * NB + j];
                cr_assert(memcmp(&got, &acc, sizeof got) == 0, "run %d: z[%lld][%d] = %.9g, the chain gives %.9g", run,
                          (long long)i, j, got, acc);
            }
        }
        mrt_tensor_release(&b2);
    }
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&x);
    mrt_tensor_release(&mask);
}

/* Kernel workspaces are sized by the kernel rows' hooks (engine/registry.h), with the functions their runs fetch
   with: x -> Softmax (axis 1: the double block path) -> LayerNormalization -> TopK -> Gather. Every step's scratch is
   planned (nonzero bytes in the plan) and the run takes it from the arena, never growing the exec's on-demand
   scratch, which a hook that planned too little (or none) would. Without a memory plan that scratch serves them. */
Test(planner, kernel_workspaces_are_planned_by_the_rows_hooks)
{
    th_rng r;
    th_rng_init(&r, th_seed("planner.workspace_hooks"));
    mrt_model *m = empty_model(17, (const char *[]){"x", NULL});
    mrt_graph *g = m->graph;
    mrt_tensor scale = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){8}, 0.5, 2);
    mrt_tensor k = th_vec_i64(1, (int64_t[]){3}), idx = th_vec_i64(2, (int64_t[]){2, 0});
    mrt_graph_set_initializer(g, "scale", &scale);
    mrt_graph_set_initializer(g, "k", &k);
    mrt_graph_set_initializer(g, "idx", &idx);
    mrt_node *n;
    mrt_graph_add_node(g, "sm", "Softmax", "", 1, (const char *[]){"x"}, 1, (const char *[]){"s"}, &n);
    mrt_node_add_attr_int(n, "axis", 1);
    mrt_graph_add_node(g, "ln", "LayerNormalization", "", 2, (const char *[]){"s", "scale"}, 1, (const char *[]){"l"}, &n);
    mrt_graph_add_node(g, "topk", "TopK", "", 2, (const char *[]){"l", "k"}, 2, (const char *[]){"tv", "ti"}, &n);
    mrt_graph_add_node(g, "gather", "Gather", "", 2, (const char *[]){"tv", "idx"}, 1, (const char *[]){"y"}, &n);
    mrt_node_add_attr_int(n, "axis", 2);
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_graph_add_output(g, "ti", NULL, NULL);
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 3, (int64_t[]){4, 6, 8}, -2, 2);
    for (int planned = 1; planned >= 0; planned--) {
        mrt_session_options opt = mrt_session_options_default();
        opt.no_mem_plan = !planned;
        opt.n_threads = 1;
        mrt_session_stats st;
        mrt_session *s = run_x_once_opt(m, &opt, &x, &st, planned ? "planned" : "no_mem_plan");
        const mrt_exec *e = s->main;
        int hooked = 0;
        for (int i = 0; i < e->n_steps; i++) {
            const mrt_step *step = &e->steps[i];
            if (step->folded) continue;
            cr_assert_gt(step->ws_bytes, 0, "%s: no workspace planned", e->graph->nodes[step->node].op_type);
            hooked++;
        }
        cr_assert_eq(hooked, 4);
        if (planned) {
            cr_assert_eq(e->scratch_grows, 0, "a planned run grew the on-demand scratch to %zu bytes", e->scratch_bytes);
        } else {
            cr_assert_gt(e->scratch_grows, 0, "without a plan the kernels fetch from the on-demand scratch");
        }
        mrt_session_free(s);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&scale);
    mrt_tensor_release(&k);
    mrt_tensor_release(&idx);
    mrt_model_free(m);
}
