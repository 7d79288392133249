/* Control flow (If, Loop, Scan, SequenceMap), the sequence and optional ops, CenterCropPad, RotaryEmbedding and
 * Upsample against references computed here with plain loops in double (random data, printed seeds). Graphs
 * with subgraphs are built with the engine's graph builders, as the loader would. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "engine/graph.h"
#include "harness.h"

/* ------------------------------------------------------------------ helpers */

static mrt_node *node(mrt_graph *g, const char *op, int ni, const char *const *in, int no, const char *const *out)
{
    mrt_node *n = NULL;
    cr_assert_eq(mrt_graph_add_node(g, op, op, "", ni, in, no, out, &n), MRT_STATUS_OK, "%s", mrt_last_error());
    return n;
}

/* A subgraph's reference to a value of the enclosing graph (the loader marks these the same way). */
static void mark_outer(mrt_graph *sub, const char *name)
{
    int i = mrt_graph_find_value(sub, name);
    cr_assert_geq(i, 0);
    sub->values[i].is_outer = true;
}

static mrt_model *model_with(mrt_graph *g, int opset)
{
    mrt_model *m = mrt_model_new();
    m->graph = g;
    mrt_model_set_opset(m, "", opset);
    return m;
}

/* Run with the given inputs; the session is returned so the caller can read its outputs. */
static mrt_session *run(mrt_model *m, int n, const char *const *names, const mrt_value *vals)
{
    mrt_session *s = NULL;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(mrt_session_run(s, n, names, vals), MRT_STATUS_OK, "%s", mrt_last_error());
    return s;
}

static const float *out_f32(mrt_session *s, int i, int64_t numel)
{
    const mrt_value *v = mrt_session_output(s, i);
    cr_assert_eq(v->kind, MRT_VALUE_TENSOR);
    cr_assert_eq(v->tensor.dtype, MRT_DTYPE_FLOAT);
    cr_assert_eq(mrt_tensor_numel(&v->tensor), numel, "output %d has %lld elements, expected %lld", i,
                 (long long)mrt_tensor_numel(&v->tensor), (long long)numel);
    return v->tensor.data;
}

static void expect_close(const float *got, const double *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])), "%s[%lld]: got %.8g, expected %.8g", what,
                  (long long)i, got[i], want[i]);
}

static mrt_tensor scalar_bool(bool b)
{
    mrt_tensor t;
    cr_assert_eq(mrt_tensor_alloc(&t, MRT_DTYPE_BOOL, 0, NULL), MRT_STATUS_OK);
    *(uint8_t *)t.data = b;
    return t;
}

/* ------------------------------------------------------------------ If */

Test(control, if_takes_the_branch_the_condition_names)
{
    th_rng r;
    th_rng_init(&r, th_seed("control.if"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){5}, -2, 2);
    for (int c = 0; c < 2; c++) {
        mrt_graph *g = mrt_graph_new("main");
        mrt_graph_add_input(g, "cond", NULL, NULL);
        mrt_graph_add_input(g, "x", NULL, NULL);
        /* then: x + x (reads x from the enclosing graph); else: -x */
        mrt_graph *then_g = mrt_graph_new("then"), *else_g = mrt_graph_new("else");
        node(then_g, "Add", 2, (const char *[]){"x", "x"}, 1, (const char *[]){"t"});
        mrt_graph_add_output(then_g, "t", NULL, NULL);
        node(else_g, "Neg", 1, (const char *[]){"x"}, 1, (const char *[]){"e"});
        mrt_graph_add_output(else_g, "e", NULL, NULL);
        mark_outer(then_g, "x");
        mark_outer(else_g, "x");
        mrt_node *n = node(g, "If", 1, (const char *[]){"cond"}, 1, (const char *[]){"y"});
        mrt_node_add_attr_graph(n, "then_branch", then_g);
        mrt_node_add_attr_graph(n, "else_branch", else_g);
        mrt_graph_add_output(g, "y", NULL, NULL);
        mrt_model *m = model_with(g, 16);
        mrt_tensor cond = scalar_bool(c);
        mrt_value vals[2] = {mrt_value_from_tensor(cond), mrt_value_from_tensor(x)};
        mrt_session *s = run(m, 2, (const char *[]){"cond", "x"}, vals);
        double want[5];
        for (int i = 0; i < 5; i++) want[i] = c ? 2.0 * ((float *)x.data)[i] : -((float *)x.data)[i];
        expect_close(out_f32(s, 0, 5), want, 5, c ? "then" : "else");
        mrt_session_free(s);
        mrt_model_free(m);
        mrt_tensor_release(&cond);
    }
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ Loop */

/* v <- v + i for i in 0..M-1, with every v also emitted as a scan output; the loop stops at M (cond stays true). */
Test(control, loop_carries_state_and_stacks_scan_outputs)
{
    th_rng r;
    th_rng_init(&r, th_seed("control.loop"));
    mrt_tensor v0 = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){3}, -1, 1);
    const int64_t M = 5;
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "v0", NULL, NULL);
    mrt_tensor trip = th_scalar_i64(M), cond = scalar_bool(true);
    mrt_graph_set_initializer(g, "M", &trip);
    mrt_graph_set_initializer(g, "cond", &cond);
    mrt_graph *body = mrt_graph_new("body");
    mrt_graph_add_input(body, "i", NULL, NULL);
    mrt_graph_add_input(body, "c_in", NULL, NULL);
    mrt_graph_add_input(body, "v_in", NULL, NULL);
    mrt_node *cast = node(body, "Cast", 1, (const char *[]){"i"}, 1, (const char *[]){"fi"});
    mrt_node_add_attr_int(cast, "to", MRT_DTYPE_FLOAT);
    node(body, "Add", 2, (const char *[]){"v_in", "fi"}, 1, (const char *[]){"v_out"});
    node(body, "Identity", 1, (const char *[]){"c_in"}, 1, (const char *[]){"c_out"});
    node(body, "Identity", 1, (const char *[]){"v_out"}, 1, (const char *[]){"scan"});
    mrt_graph_add_output(body, "c_out", NULL, NULL);
    mrt_graph_add_output(body, "v_out", NULL, NULL);
    mrt_graph_add_output(body, "scan", NULL, NULL);
    mrt_node *n = node(g, "Loop", 3, (const char *[]){"M", "cond", "v0"}, 2, (const char *[]){"v_final", "all"});
    mrt_node_add_attr_graph(n, "body", body);
    mrt_graph_add_output(g, "v_final", NULL, NULL);
    mrt_graph_add_output(g, "all", NULL, NULL);
    mrt_model *m = model_with(g, 16);
    mrt_value vv = mrt_value_from_tensor(v0);
    mrt_session *s = run(m, 1, (const char *[]){"v0"}, &vv);
    double want_all[5 * 3], v[3];
    for (int j = 0; j < 3; j++) v[j] = ((float *)v0.data)[j];
    for (int64_t i = 0; i < M; i++)
        for (int j = 0; j < 3; j++) {
            v[j] += (double)i;
            want_all[i * 3 + j] = v[j];
        }
    expect_close(out_f32(s, 0, 3), v, 3, "v_final");
    const mrt_value *all = mrt_session_output(s, 1);
    cr_assert_eq(all->tensor.rank, 2);
    cr_assert_eq(all->tensor.shape[0], M);
    expect_close(out_f32(s, 1, M * 3), want_all, M * 3, "scan output");
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&v0);
}

/* M or cond may be omitted with an empty name: a while loop (no trip count) and a for loop (no condition). */
Test(control, loop_with_omitted_trip_count_or_condition)
{
    for (int variant = 0; variant < 2; variant++) {
        bool while_loop = variant == 0;
        mrt_graph *g = mrt_graph_new("main");
        mrt_graph_add_input(g, "v0", NULL, NULL);
        mrt_tensor trip = th_scalar_i64(3), cond = scalar_bool(true);
        mrt_graph_set_initializer(g, "M", &trip);
        mrt_graph_set_initializer(g, "cond", &cond);
        mrt_tensor limit = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){5});
        mrt_graph_set_initializer(g, "limit", &limit);
        /* v <- v + 1; continue while v < limit */
        mrt_graph *body = mrt_graph_new("body");
        mrt_graph_add_input(body, "i", NULL, NULL);
        mrt_graph_add_input(body, "c_in", NULL, NULL);
        mrt_graph_add_input(body, "v_in", NULL, NULL);
        mrt_tensor one = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){1});
        mrt_graph_set_initializer(body, "one", &one);
        node(body, "Add", 2, (const char *[]){"v_in", "one"}, 1, (const char *[]){"v_out"});
        if (while_loop) {
            node(body, "Less", 2, (const char *[]){"v_out", "limit"}, 1, (const char *[]){"c_out"});
            mark_outer(body, "limit");
        } else {
            node(body, "Identity", 1, (const char *[]){"c_in"}, 1, (const char *[]){"c_out"});
        }
        mrt_graph_add_output(body, "c_out", NULL, NULL);
        mrt_graph_add_output(body, "v_out", NULL, NULL);
        const char *ins[3] = {while_loop ? "" : "M", while_loop ? "cond" : "", "v0"};
        mrt_node *n = node(g, "Loop", 3, ins, 1, (const char *[]){"v_final"});
        mrt_node_add_attr_graph(n, "body", body);
        mrt_graph_add_output(g, "v_final", NULL, NULL);
        mrt_model *m = model_with(g, 16);
        mrt_tensor v0 = th_from_f64(MRT_DTYPE_FLOAT, 0, NULL, (double[]){0});
        mrt_value vv = mrt_value_from_tensor(v0);
        mrt_session *s = run(m, 1, (const char *[]){"v0"}, &vv);
        double want = while_loop ? 5 : 3;
        expect_close(out_f32(s, 0, 1), &want, 1, while_loop ? "while loop (no M)" : "for loop (no cond)");
        mrt_session_free(s);
        mrt_model_free(m);
        mrt_tensor_release(&v0); /* the initializers belong to the graphs */
    }
}

/* A subgraph's plan is kept between runs, but not across a new plan of its parent: the constant it may fold (here
   the parent's folded Shape(x)) can change while keeping its shape, and a freed constant's address can be reused
   by the next one (the address is part of the plan key). */
Test(control, subgraph_plan_follows_the_outer_constants_across_runs)
{
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "cond", NULL, NULL);
    mrt_graph_add_input(g, "x", NULL, NULL);
    node(g, "Shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
    mrt_graph *then_g = mrt_graph_new("then"), *else_g = mrt_graph_new("else");
    node(then_g, "Identity", 1, (const char *[]){"s"}, 1, (const char *[]){"t"});
    mrt_graph_add_output(then_g, "t", NULL, NULL);
    node(else_g, "Neg", 1, (const char *[]){"s"}, 1, (const char *[]){"e"});
    mrt_graph_add_output(else_g, "e", NULL, NULL);
    mark_outer(then_g, "s");
    mark_outer(else_g, "s");
    mrt_node *n = node(g, "If", 1, (const char *[]){"cond"}, 1, (const char *[]){"y"});
    mrt_node_add_attr_graph(n, "then_branch", then_g);
    mrt_node_add_attr_graph(n, "else_branch", else_g);
    mrt_graph_add_output(g, "y", NULL, NULL);
    mrt_model *m = model_with(g, 16);
    mrt_session *s;
    cr_assert_eq(mrt_session_new(m, NULL, &s), MRT_STATUS_OK, "%s", mrt_last_error());
    const int64_t shapes[5][2] = {{2, 3}, {4, 5}, {4, 5}, {2, 3}, {7, 1}};
    for (int run_i = 0; run_i < 5; run_i++) {
        mrt_tensor x, cond = scalar_bool(run_i != 2);
        cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_FLOAT, 2, shapes[run_i]), MRT_STATUS_OK);
        mrt_value vals[2] = {mrt_value_from_tensor(cond), mrt_value_from_tensor(x)};
        cr_assert_eq(mrt_session_run(s, 2, (const char *[]){"cond", "x"}, vals), MRT_STATUS_OK, "%s",
                     mrt_last_error());
        const mrt_tensor *y = &mrt_session_output(s, 0)->tensor;
        int64_t sign = run_i != 2 ? 1 : -1;
        cr_assert_eq(mrt_tensor_numel(y), 2);
        for (int d = 0; d < 2; d++)
            cr_assert_eq(((int64_t *)y->data)[d], sign * shapes[run_i][d], "run %d, dim %d: got %lld, expected %lld",
                         run_i, d, (long long)((int64_t *)y->data)[d], (long long)(sign * shapes[run_i][d]));
        mrt_tensor_release(&x);
        mrt_tensor_release(&cond);
    }
    mrt_session_free(s);
    mrt_model_free(m);
}

/* ------------------------------------------------------------------ Scan */

/* Running sum over axis 0, forward and (scan_input_directions = 1) reversed. */
Test(control, scan_running_sum_both_directions)
{
    th_rng r;
    th_rng_init(&r, th_seed("control.scan"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){4, 2}, -1, 1), s0 = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){2}, -1, 1);
    for (int rev = 0; rev < 2; rev++) {
        mrt_graph *g = mrt_graph_new("main");
        mrt_graph_add_input(g, "s0", NULL, NULL);
        mrt_graph_add_input(g, "x", NULL, NULL);
        mrt_graph *body = mrt_graph_new("body");
        mrt_graph_add_input(body, "s_in", NULL, NULL);
        mrt_graph_add_input(body, "x_t", NULL, NULL);
        node(body, "Add", 2, (const char *[]){"s_in", "x_t"}, 1, (const char *[]){"s_out"});
        node(body, "Identity", 1, (const char *[]){"s_out"}, 1, (const char *[]){"y_t"});
        mrt_graph_add_output(body, "s_out", NULL, NULL);
        mrt_graph_add_output(body, "y_t", NULL, NULL);
        mrt_node *n = node(g, "Scan", 2, (const char *[]){"s0", "x"}, 2, (const char *[]){"s_final", "ys"});
        mrt_node_add_attr_graph(n, "body", body);
        mrt_node_add_attr_int(n, "num_scan_inputs", 1);
        if (rev) mrt_node_add_attr_ints(n, "scan_input_directions", 1, (int64_t[]){1});
        mrt_graph_add_output(g, "s_final", NULL, NULL);
        mrt_graph_add_output(g, "ys", NULL, NULL);
        mrt_model *m = model_with(g, 16);
        mrt_value vals[2] = {mrt_value_from_tensor(s0), mrt_value_from_tensor(x)};
        mrt_session *s = run(m, 2, (const char *[]){"s0", "x"}, vals);
        double acc[2] = {((float *)s0.data)[0], ((float *)s0.data)[1]}, ys[8];
        for (int t = 0; t < 4; t++) {
            int src = rev ? 3 - t : t;
            for (int j = 0; j < 2; j++) {
                acc[j] += ((float *)x.data)[src * 2 + j];
                ys[t * 2 + j] = acc[j];
            }
        }
        expect_close(out_f32(s, 0, 2), acc, 2, "final state");
        expect_close(out_f32(s, 1, 8), ys, 8, "scan output");
        mrt_session_free(s);
        mrt_model_free(m);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&s0);
}

/* ------------------------------------------------------------------ sequences and optionals */

/* Construct [a, b, c] -> insert d at 1 -> erase the last -> length, at(1), concat along axis 0 and a new axis. */
Test(sequence, construct_insert_erase_at_length_concat)
{
    th_rng r;
    th_rng_init(&r, th_seed("sequence.ops"));
    mrt_tensor t[4];
    for (int i = 0; i < 4; i++) t[i] = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){2, 3}, -1, 1);
    mrt_graph *g = mrt_graph_new("main");
    const char *names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) mrt_graph_add_input(g, names[i], NULL, NULL);
    mrt_tensor one = th_scalar_i64(1), last = th_scalar_i64(-1);
    mrt_graph_set_initializer(g, "one", &one);
    mrt_graph_set_initializer(g, "last", &last);
    node(g, "SequenceConstruct", 3, (const char *[]){"a", "b", "c"}, 1, (const char *[]){"s1"});
    node(g, "SequenceInsert", 3, (const char *[]){"s1", "d", "one"}, 1, (const char *[]){"s2"});
    node(g, "SequenceErase", 2, (const char *[]){"s2", "last"}, 1, (const char *[]){"s3"});
    node(g, "SequenceLength", 1, (const char *[]){"s3"}, 1, (const char *[]){"len"});
    node(g, "SequenceAt", 2, (const char *[]){"s3", "one"}, 1, (const char *[]){"at1"});
    mrt_node *cat = node(g, "ConcatFromSequence", 1, (const char *[]){"s3"}, 1, (const char *[]){"cat"});
    mrt_node_add_attr_int(cat, "axis", 0);
    mrt_node *stk = node(g, "ConcatFromSequence", 1, (const char *[]){"s3"}, 1, (const char *[]){"stack"});
    mrt_node_add_attr_int(stk, "axis", 0);
    mrt_node_add_attr_int(stk, "new_axis", 1);
    const char *outs[5] = {"len", "at1", "cat", "stack", "s3"};
    for (int i = 0; i < 5; i++) mrt_graph_add_output(g, outs[i], NULL, NULL);
    mrt_model *m = model_with(g, 11);
    mrt_value vals[4];
    for (int i = 0; i < 4; i++) vals[i] = mrt_value_from_tensor(t[i]);
    mrt_session *s = run(m, 4, names, vals);
    /* the sequence is now [a, d, b] */
    const mrt_tensor *order[3] = {&t[0], &t[3], &t[1]};
    cr_assert_eq(*(int64_t *)mrt_session_output(s, 0)->tensor.data, 3);
    double want[18];
    for (int k = 0; k < 6; k++) want[k] = ((float *)t[3].data)[k];
    expect_close(out_f32(s, 1, 6), want, 6, "SequenceAt(1)");
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 6; k++) want[i * 6 + k] = ((float *)order[i]->data)[k];
    expect_close(out_f32(s, 2, 18), want, 18, "ConcatFromSequence axis 0");
    cr_assert_eq(mrt_session_output(s, 2)->tensor.shape[0], 6);
    expect_close(out_f32(s, 3, 18), want, 18, "ConcatFromSequence new_axis");
    cr_assert_eq(mrt_session_output(s, 3)->tensor.rank, 3);
    const mrt_value *seq = mrt_session_output(s, 4);
    cr_assert_eq(seq->kind, MRT_VALUE_SEQUENCE);
    cr_assert_eq(seq->n_items, 3);
    mrt_session_free(s);
    mrt_model_free(m);
    for (int i = 0; i < 4; i++) mrt_tensor_release(&t[i]);
}

/* SequenceEmpty (default float32, and the dtype attribute) -> insert one tensor -> length 1, at(0) is it. */
Test(sequence, empty_then_insert)
{
    mrt_tensor a = th_vec_i64(3, (int64_t[]){4, -5, 6});
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "a", NULL, NULL);
    node(g, "SequenceEmpty", 0, NULL, 1, (const char *[]){"empty_f"});
    mrt_node *typed = node(g, "SequenceEmpty", 0, NULL, 1, (const char *[]){"empty_i"});
    mrt_node_add_attr_int(typed, "dtype", MRT_DTYPE_INT64);
    node(g, "SequenceLength", 1, (const char *[]){"empty_f"}, 1, (const char *[]){"len0"});
    node(g, "SequenceInsert", 2, (const char *[]){"empty_i", "a"}, 1, (const char *[]){"s1"});
    node(g, "SequenceLength", 1, (const char *[]){"s1"}, 1, (const char *[]){"len1"});
    mrt_tensor zero = th_scalar_i64(0);
    mrt_graph_set_initializer(g, "zero", &zero);
    node(g, "SequenceAt", 2, (const char *[]){"s1", "zero"}, 1, (const char *[]){"at0"});
    const char *outs[4] = {"len0", "len1", "at0", "empty_f"};
    for (int i = 0; i < 4; i++) mrt_graph_add_output(g, outs[i], NULL, NULL);
    mrt_model *m = model_with(g, 11);
    const char *names[1] = {"a"};
    mrt_value v = mrt_value_from_tensor(a);
    mrt_session *s = run(m, 1, names, &v);
    cr_assert_eq(*(int64_t *)mrt_session_output(s, 0)->tensor.data, 0);
    cr_assert_eq(*(int64_t *)mrt_session_output(s, 1)->tensor.data, 1);
    const mrt_tensor *at0 = &mrt_session_output(s, 2)->tensor;
    cr_assert_eq(at0->dtype, MRT_DTYPE_INT64);
    cr_assert_eq(memcmp(at0->data, a.data, 3 * sizeof(int64_t)), 0);
    const mrt_value *ef = mrt_session_output(s, 3);
    cr_assert_eq(ef->kind, MRT_VALUE_SEQUENCE);
    cr_assert_eq(ef->n_items, 0);
    cr_assert_eq(ef->seq_dtype, MRT_DTYPE_FLOAT, "SequenceEmpty defaults to float32");
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&a);
}

Test(sequence, split_to_sequence_uneven_and_sequence_map)
{
    th_rng r;
    th_rng_init(&r, th_seed("sequence.split_map"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){6, 2}, -1, 1);
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "x", NULL, NULL);
    mrt_tensor split = th_vec_i64(3, (int64_t[]){1, 2, 3}), two = th_scalar_i64(2);
    mrt_graph_set_initializer(g, "split", &split);
    mrt_graph_set_initializer(g, "two", &two);
    node(g, "SplitToSequence", 2, (const char *[]){"x", "split"}, 1, (const char *[]){"parts"});
    mrt_graph *body = mrt_graph_new("body");
    mrt_graph_add_input(body, "p", NULL, NULL);
    node(body, "Mul", 2, (const char *[]){"p", "p"}, 1, (const char *[]){"q"}); /* square each part */
    mrt_graph_add_output(body, "q", NULL, NULL);
    mrt_node *map = node(g, "SequenceMap", 1, (const char *[]){"parts"}, 1, (const char *[]){"squares"});
    mrt_node_add_attr_graph(map, "body", body);
    node(g, "SequenceAt", 2, (const char *[]){"squares", "two"}, 1, (const char *[]){"third"});
    mrt_graph_add_output(g, "third", NULL, NULL);
    mrt_model *m = model_with(g, 17);
    mrt_value xv = mrt_value_from_tensor(x);
    mrt_session *s = run(m, 1, (const char *[]){"x"}, &xv);
    /* the third part is rows 3..5 */
    double want[6];
    for (int k = 0; k < 6; k++) {
        double v = ((float *)x.data)[6 + k];
        want[k] = v * v;
    }
    cr_assert_eq(mrt_session_output(s, 0)->tensor.shape[0], 3);
    expect_close(out_f32(s, 0, 6), want, 6, "squared third part");
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&x);
}

Test(sequence, optional_wraps_and_unwraps)
{
    th_rng r;
    th_rng_init(&r, th_seed("sequence.optional"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, -1, 1);
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "x", NULL, NULL);
    node(g, "Optional", 1, (const char *[]){"x"}, 1, (const char *[]){"o"});
    node(g, "OptionalHasElement", 1, (const char *[]){"o"}, 1, (const char *[]){"has"});
    node(g, "OptionalGetElement", 1, (const char *[]){"o"}, 1, (const char *[]){"back"});
    mrt_graph_add_output(g, "has", NULL, NULL);
    mrt_graph_add_output(g, "back", NULL, NULL);
    mrt_model *m = model_with(g, 18);
    mrt_value xv = mrt_value_from_tensor(x);
    mrt_session *s = run(m, 1, (const char *[]){"x"}, &xv);
    cr_assert_eq(*(uint8_t *)mrt_session_output(s, 0)->tensor.data, 1);
    double want[4];
    for (int k = 0; k < 4; k++) want[k] = ((float *)x.data)[k];
    expect_close(out_f32(s, 1, 4), want, 4, "OptionalGetElement");
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&x);
}

/* ------------------------------------------------------------------ CenterCropPad, Upsample, RotaryEmbedding */

/* Rows cropped 5 -> 3 (start (5-3)/2 = 1), columns padded 3 -> 6 (zeros before: (6-3)/2 = 1). */
Test(shape_ops, center_crop_pad_crops_and_pads_centered)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops.center_crop_pad"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){5, 3}, -1, 1), shape = th_vec_i64(2, (int64_t[]){3, 6});
    th_case *c = th_begin("CenterCropPad", "", 18);
    th_input(c, &x);
    th_input_const(c, &shape);
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.shape[0], 3);
    cr_assert_eq(y.shape[1], 6);
    double want[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
            int si = i + 1, sj = j - 1;
            want[i * 6 + j] = sj >= 0 && sj < 3 ? ((float *)x.data)[si * 3 + sj] : 0.0;
        }
    expect_close(y.data, want, 18, "CenterCropPad");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&shape);
    th_free(c);
}

Test(shape_ops, upsample_nearest_repeats)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops.upsample"));
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 2, 3}, -1, 1);
    mrt_tensor scales = th_from_f64(MRT_DTYPE_FLOAT, 1, (int64_t[]){4}, (double[]){1, 1, 2, 2});
    th_case *c = th_begin("Upsample", "", 9);
    th_input(c, &x);
    th_input_const(c, &scales);
    th_attr_string(c, "mode", "nearest");
    mrt_tensor y = {0};
    cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
    cr_assert_eq(y.shape[2], 4);
    cr_assert_eq(y.shape[3], 6);
    double want[24];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) want[i * 6 + j] = ((float *)x.data)[(i / 2) * 3 + j / 2];
    expect_close(y.data, want, 24, "Upsample");
    mrt_tensor_release(&y);
    mrt_tensor_release(&x);
    mrt_tensor_release(&scales);
    th_free(c);
}

/* X [batch 1, heads 2, seq 3, head 4] with caches indexed by position_ids; rotate-half (interleaved = 0) and
   interleaved pairs. */
Test(shape_ops, rotary_embedding_both_layouts)
{
    th_rng r;
    th_rng_init(&r, th_seed("shape_ops.rotary"));
    const int H = 2, S = 3, D = 4, P = 8;
    mrt_tensor x = th_rand(&r, MRT_DTYPE_FLOAT, 4, (int64_t[]){1, H, S, D}, -1, 1);
    mrt_tensor cosc = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){P, D / 2}, -1, 1);
    mrt_tensor sinc = th_rand(&r, MRT_DTYPE_FLOAT, 2, (int64_t[]){P, D / 2}, -1, 1);
    mrt_tensor pos;
    cr_assert_eq(mrt_tensor_alloc(&pos, MRT_DTYPE_INT64, 2, (int64_t[]){1, S}), MRT_STATUS_OK);
    int64_t pv[3] = {5, 0, 7};
    memcpy(pos.data, pv, sizeof pv);
    for (int inter = 0; inter < 2; inter++) {
        th_case *c = th_begin("RotaryEmbedding", "", 23);
        th_input(c, &x);
        th_input(c, &cosc);
        th_input(c, &sinc);
        th_input(c, &pos);
        th_attr_int(c, "interleaved", inter);
        mrt_tensor y = {0};
        cr_assert_eq(th_run(c, 1, &y), MRT_STATUS_OK, "%s", mrt_last_error());
        double want[2 * 3 * 4];
        const float *xv = x.data, *cv = cosc.data, *sv = sinc.data;
        for (int h = 0; h < H; h++)
            for (int t = 0; t < S; t++) {
                const float *xr = xv + (h * S + t) * D;
                double *o = want + (h * S + t) * D;
                for (int k = 0; k < D / 2; k++) {
                    double co = cv[pv[t] * (D / 2) + k], si = sv[pv[t] * (D / 2) + k];
                    int a = inter ? 2 * k : k, b = inter ? 2 * k + 1 : k + D / 2;
                    o[a] = xr[a] * co - xr[b] * si;
                    o[b] = xr[b] * co + xr[a] * si;
                }
            }
        expect_close(y.data, want, 24, inter ? "interleaved" : "rotate-half");
        mrt_tensor_release(&y);
        th_free(c);
    }
    mrt_tensor_release(&x);
    mrt_tensor_release(&cosc);
    mrt_tensor_release(&sinc);
    mrt_tensor_release(&pos);
}

/* Strings through sequences and Scan slices: every copy owns its strings (a shallow copy was a double free
   the fuzzer found), so the round trip gives the same strings and nothing is freed twice (ASan checks). */
Test(sequence, strings_split_concat_and_scan)
{
    mrt_tensor x;
    cr_assert_eq(mrt_tensor_alloc(&x, MRT_DTYPE_STRING, 1, (int64_t[]){4}), MRT_STATUS_OK);
    const char *words[4] = {"alpha", "beta", "", "delta"};
    for (int i = 0; i < 4; i++) ((char **)x.data)[i] = strdup(words[i]);
    mrt_graph *g = mrt_graph_new("main");
    mrt_graph_add_input(g, "x", NULL, NULL);
    node(g, "SplitToSequence", 1, (const char *[]){"x"}, 1, (const char *[]){"parts"});
    mrt_node *cat = node(g, "ConcatFromSequence", 1, (const char *[]){"parts"}, 1, (const char *[]){"back"});
    mrt_node_add_attr_int(cat, "axis", 0);
    mrt_graph *body = mrt_graph_new("body");
    mrt_graph_add_input(body, "x_t", NULL, NULL);
    node(body, "Identity", 1, (const char *[]){"x_t"}, 1, (const char *[]){"y_t"});
    mrt_graph_add_output(body, "y_t", NULL, NULL);
    mrt_node *scan = node(g, "Scan", 1, (const char *[]){"x"}, 1, (const char *[]){"scanned"});
    mrt_node_add_attr_graph(scan, "body", body);
    mrt_node_add_attr_int(scan, "num_scan_inputs", 1);
    mrt_graph_add_output(g, "back", NULL, NULL);
    mrt_graph_add_output(g, "scanned", NULL, NULL);
    mrt_model *m = model_with(g, 16);
    mrt_value xv = mrt_value_from_tensor(x);
    mrt_session *s = run(m, 1, (const char *[]){"x"}, &xv);
    for (int o = 0; o < 2; o++) {
        const mrt_tensor *t = &mrt_session_output(s, o)->tensor;
        cr_assert_eq(t->dtype, MRT_DTYPE_STRING);
        cr_assert_eq(mrt_tensor_numel(t), 4);
        for (int i = 0; i < 4; i++) cr_assert_str_eq(((char **)t->data)[i], words[i], "output %d element %d", o, i);
    }
    mrt_session_free(s);
    mrt_model_free(m);
    mrt_tensor_release(&x);
}
