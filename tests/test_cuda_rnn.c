/* The CUDA rnn family (ops_cuda/rnn.cu: RNN, GRU, LSTM 7/14/22) against the CPU kernels (tests/harness.h
 * th_cuda_check): every direction, both layouts, sequence_lens (incl. 0), initial states, biases, peepholes,
 * linear_before_reset, clip, input_forget, non-default activations, float/double/float16. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct rnn_opts {
    const char *dir;
    int layout;
    bool lens, h0, bias, peep, lbr, clip, acts, input_forget;
} rnn_opts;

static void rnn_case(const char *op, int opset, mrt_dtype dt, int64_t S, int64_t B, int64_t IN, int64_t H, rnn_opts o)
{
    th_rng r;
    th_rng_init(&r, th_seed(op));
    int G = strcmp(op, "RNN") == 0 ? 1 : strcmp(op, "GRU") == 0 ? 3 : 4;
    bool lstm = G == 4;
    int64_t D = strcmp(o.dir, "bidirectional") == 0 ? 2 : 1;
    int64_t xs[3] = {o.layout ? B : S, o.layout ? S : B, IN}, ws[3] = {D, G * H, IN}, rs[3] = {D, G * H, H};
    int64_t bs[2] = {D, 2 * G * H}, hs[3] = {o.layout ? B : D, o.layout ? D : B, H}, ps[2] = {D, 3 * H};
    mrt_tensor x = th_rand(&r, dt, 3, xs, -1, 1), w = th_rand(&r, dt, 3, ws, -0.6, 0.6), rr = th_rand(&r, dt, 3, rs, -0.6, 0.6);
    mrt_tensor b = th_rand(&r, dt, 2, bs, -0.5, 0.5), h0 = th_rand(&r, dt, 3, hs, -1, 1), c0 = th_rand(&r, dt, 3, hs, -1, 1);
    mrt_tensor p = th_rand(&r, dt, 2, ps, -0.5, 0.5), sl = th_rand(&r, MRT_DTYPE_INT32, 1, &B, 0, (double)S);
    th_case *c = th_begin(op, "", opset);
    th_input(c, &x);
    th_input(c, &w);
    th_input(c, &rr);
    if (o.bias) th_input(c, &b);
    else th_input_absent(c);
    if (o.lens) th_input(c, &sl);
    else th_input_absent(c);
    if (o.h0) th_input(c, &h0);
    else th_input_absent(c);
    if (lstm && o.h0) th_input(c, &c0);
    else if (lstm) th_input_absent(c);
    if (lstm && o.peep) th_input(c, &p);
    th_attr_int(c, "hidden_size", H);
    th_attr_string(c, "direction", o.dir);
    if (opset >= 14) th_attr_int(c, "layout", o.layout);
    if (o.lbr) th_attr_int(c, "linear_before_reset", 1);
    if (o.clip) th_attr_float(c, "clip", 0.7f);
    if (o.input_forget) th_attr_int(c, "input_forget", 1);
    if (o.acts) {
        static const char *const a[] = {"HardSigmoid", "LeakyRelu", "Softsign", "Affine", "ScaledTanh", "Elu"};
        static const float alpha[] = {0.3f, 0.1f, 0, 0.8f, 1.2f, 0.9f}, beta[] = {0.4f, 0, 0, 0.1f, 0.7f, 0};
        int n = G == 1 ? 1 : G == 3 ? 2 : 3;
        th_attr_strings(c, "activations", n * D, a);
        th_attr_floats(c, "activation_alpha", n * D, alpha);
        th_attr_floats(c, "activation_beta", n * D, beta);
    }
    char label[192];
    snprintf(label, sizeof label, "%s-%d %s S%lld B%lld IN%lld H%lld %s layout %d lens %d h0 %d bias %d peep %d lbr %d clip %d acts %d",
             op, opset, mrt_dtype_name(dt), (long long)S, (long long)B, (long long)IN, (long long)H, o.dir, o.layout,
             o.lens, o.h0, o.bias, o.peep, o.lbr, o.clip, o.acts);
    th_cuda_check(c, lstm ? 3 : 2, 10, label); /* float sums in another order, carried through the recurrence */
    mrt_tensor *all[] = {&x, &w, &rr, &b, &h0, &c0, &p, &sl};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mrt_tensor_release(all[i]);
    th_free(c);
}

static void all_options(const char *op, mrt_dtype dt)
{
    static const char *const dirs[] = {"forward", "reverse", "bidirectional"};
    for (int d = 0; d < 3; d++)
        for (int f = 0; f < 8; f++) {
            rnn_opts o = {dirs[d], f & 1, f & 2, f & 4, f != 0, f & 2, f & 1, f == 5, f == 6, f == 7};
            rnn_case(op, f & 1 ? 22 : 7, dt, 5, 3, 4, 6, o);
        }
    rnn_opts o = {"forward", 0, false, false, false, false, false, false, false, false};
    rnn_case(op, 14, dt, 1, 1, 1, 1, o);
    rnn_case(op, 14, dt, 0, 2, 3, 4, o);
    rnn_case(op, 14, dt, 3, 0, 3, 4, o);
    rnn_case(op, 14, dt, 4, 2, 40, 33, o);
}

Test(cuda_rnn, rnn) { th_cuda_require(); all_options("RNN", MRT_DTYPE_FLOAT); }
Test(cuda_rnn, gru) { th_cuda_require(); all_options("GRU", MRT_DTYPE_FLOAT); }
Test(cuda_rnn, lstm) { th_cuda_require(); all_options("LSTM", MRT_DTYPE_FLOAT); }

Test(cuda_rnn, double_and_half)
{
    th_cuda_require();
    rnn_opts o = {"bidirectional", 1, true, true, true, true, false, false, false, false};
    static const char *const ops[] = {"RNN", "GRU", "LSTM"};
    for (int i = 0; i < 3; i++) {
        rnn_case(ops[i], 22, MRT_DTYPE_DOUBLE, 4, 3, 5, 7, o);
        rnn_case(ops[i], 22, MRT_DTYPE_FLOAT16, 4, 3, 5, 7, o);
    }
}
