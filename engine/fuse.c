/* Plan-time fusion (see fuse.h): Conv -> [BatchNormalization] -> [Add(residual)] -> [Relu | Clip | Sigmoid |
 * Sigmoid+Mul (SiLU) | HardSwish | GELU written out (Div, Erf, Add, Mul, Mul)], MatMul/Gemm -> [Add(bias along the last axis)] -> [Add(residual)] -> [the same
 * activations], BatchNormalization -> [Add(residual)] -> [the same activations], and float Add/Sub/Mul/Div ->
 * [GELU written out] only, float32, each link the only reader of the value before it; before a pointwise Conv, a
 * per-channel Mul(x, s) or BatchNormalization [-> Relu] that only the Conv reads, and before a 2-D AveragePool, a zero Pad that only it reads
 * (mrt_prologue). */
#include "engine/fuse.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool is_op(const mrt_node *nd, const char *op)
{
    return (!nd->domain || !nd->domain[0] || !strcmp(nd->domain, "ai.onnx")) && !strcmp(nd->op_type, op);
}

typedef struct fuse_scan {
    mrt_exec *e;
    const bool *sub_read;
    int *readers;    /* per value: how many step inputs read it (graph outputs count as a reader) */
    int *reader;     /* per value: the step index of the last reader seen */
    int *producer;   /* per value: the step that computes it, or -1 */
} fuse_scan;

static const mrt_node *node_of(const mrt_exec *e, int s) { return &e->graph->nodes[e->steps[s].node]; }

/* A float32 tensor value computed at run time with a plan-time shape, that a fused chain may skip. */
static bool plain_value(const fuse_scan *fs, int v)
{
    const mrt_exec *e = fs->e;
    return v >= 0 && e->state[v] == MRT_VS_SHAPED && e->vals[v].kind == MRT_VALUE_TENSOR &&
           e->vals[v].tensor.dtype == MRT_DTYPE_FLOAT && !e->graph->values[v].is_output && !fs->sub_read[v];
}

/* A step whose node runs on its own at run time with its own attributes: one a chain may take in. */
static bool fusable_step(const mrt_step *st)
{
    return !st->folded && !st->dynamic && st->fused_into < 0 && !st->fusion && !st->shadow && !st->call_shadow;
}

/* The step that alone reads v (and can join a chain), or -1. */
static int only_reader(const fuse_scan *fs, int v)
{
    if (!plain_value(fs, v) || fs->readers[v] != 1) return -1;
    int r = fs->reader[v];
    return fusable_step(&fs->e->steps[r]) ? r : -1;
}

static bool is_const(const mrt_exec *e, int v) { return v >= 0 && e->state[v] == MRT_VS_CONST; }

/* BatchNormalization in inference mode on x (output 0 only, per-channel constants): its coefficients, by
   mrt_bn_affine as ops_cpu/norm.c computes them. */
static bool bn_link(const mrt_exec *e, const mrt_step *st, int x, int64_t channels, mrt_bn_coef **coef)
{
    const mrt_node *nd = &e->graph->nodes[st->node];
    if (!is_op(nd, "BatchNormalization") || nd->n_inputs != 5 || nd->inputs[0] != x) return false;
    for (int i = 1; i < nd->n_outputs; i++)
        if (nd->outputs[i] >= 0) return false;
    const mrt_attr *tm = mrt_node_attr(nd, "training_mode");
    if (tm && (tm->type != MRT_ATTR_INT || tm->i != 0)) return false;
    const mrt_attr *sp = mrt_node_attr(nd, "spatial");
    if (st->opset < 9 && sp && (sp->type != MRT_ATTR_INT || sp->i == 0)) return false;
    const mrt_attr *ea = mrt_node_attr(nd, "epsilon");
    if (ea && ea->type != MRT_ATTR_FLOAT && ea->type != MRT_ATTR_INT) return false;
    double eps = ea ? (ea->type == MRT_ATTR_FLOAT ? ea->f : (float)ea->i) : 1e-5f;
    for (int i = 1; i < 5; i++) {
        int v = nd->inputs[i];
        if (!is_const(e, v) || e->vals[v].kind != MRT_VALUE_TENSOR || mrt_tensor_numel(&e->vals[v].tensor) != channels)
            return false;
    }
    mrt_bn_coef *c = malloc((size_t)channels * sizeof *c);
    if (!c) return false;
    for (int64_t k = 0; k < channels; k++) {
        const mrt_tensor *scale = &e->vals[nd->inputs[1]].tensor, *bias = &e->vals[nd->inputs[2]].tensor;
        const mrt_tensor *mean = &e->vals[nd->inputs[3]].tensor, *var = &e->vals[nd->inputs[4]].tensor;
        double a, b;
        mrt_bn_affine(mrt_load_f64(scale->dtype, scale->data, k), mrt_load_f64(bias->dtype, bias->data, k),
                      mrt_load_f64(mean->dtype, mean->data, k), mrt_load_f64(var->dtype, var->data, k), eps, &a, &b);
        c[k] = mrt_bn_coef_make(a, b);
    }
    *coef = c;
    return true;
}

/* Clip with constant bounds (or none): lo and hi as ops_cpu/elementwise_unary.c reads them. */
static bool clip_bounds(const mrt_exec *e, const mrt_step *st, float *lo, float *hi)
{
    const mrt_node *nd = &e->graph->nodes[st->node];
    double l = -FLT_MAX, h = FLT_MAX;
    if (st->opset < 11) {
        const mrt_attr *a = mrt_node_attr(nd, "min"), *b = mrt_node_attr(nd, "max");
        if ((a && a->type != MRT_ATTR_FLOAT) || (b && b->type != MRT_ATTR_FLOAT)) return false;
        if (a) l = a->f;
        if (b) h = b->f;
    } else {
        for (int i = 1; i < nd->n_inputs && i < 3; i++) {
            int v = nd->inputs[i];
            if (v < 0) continue;
            if (!is_const(e, v) || e->vals[v].kind != MRT_VALUE_TENSOR) return false;
            const mrt_tensor *t = &e->vals[v].tensor;
            if (mrt_tensor_numel(t) < 1) continue; /* an empty bound is no bound, as in the kernel */
            double b = mrt_load_f64(t->dtype, t->data, 0);
            if (i == 1) l = b;
            else h = b;
        }
    }
    *lo = (float)l;
    *hi = (float)h;
    return true;
}

/* Add(x, v) or Add(v, x) with v a float32 vector along x's last axis (shape [cols], or [1, ..., cols]) that exists
   before the chain runs (a constant or a source): v's value index, else -1. */
static int row_vector(const mrt_exec *e, const mrt_node *add, int x, int64_t cols)
{
    int v = add->inputs[0] == x ? add->inputs[1] : add->inputs[0];
    if (v < 0 || v == x || e->vals[v].kind != MRT_VALUE_TENSOR || e->vals[v].tensor.dtype != MRT_DTYPE_FLOAT) return -1;
    if (!is_const(e, v) && !e->graph->values[v].is_input) return -1;
    const mrt_tensor *t = &e->vals[v].tensor;
    if (t->rank < 1 || t->rank > e->vals[x].tensor.rank || t->shape[t->rank - 1] != cols) return -1;
    for (int i = 0; i + 1 < t->rank; i++)
        if (t->shape[i] != 1) return -1;
    return v;
}

/* A scalar float32 constant operand of node nd other than value x (a one-element tensor whose rank does not
   broadcast x's shape up): its value in *k, and whether it is the node's first operand. */
static bool scalar_operand(const mrt_exec *e, const mrt_node *nd, int x, float *k, bool *first)
{
    if (nd->n_inputs != 2 || (nd->inputs[0] == x) == (nd->inputs[1] == x)) return false;
    int c = nd->inputs[0] == x ? nd->inputs[1] : nd->inputs[0];
    if (!is_const(e, c) || e->vals[c].kind != MRT_VALUE_TENSOR) return false;
    const mrt_tensor *t = &e->vals[c].tensor;
    if (t->dtype != MRT_DTYPE_FLOAT || mrt_tensor_numel(t) != 1 || t->rank > e->vals[x].tensor.rank) return false;
    *k = *(const float *)t->data;
    *first = nd->inputs[0] == c;
    return true;
}

/* The steps after p that read x: *first the op_type node reading it as input 0, *mul a Mul (-1 where none) */
static void readers_of(const mrt_exec *e, int p, int x, const char *op_type, int *first, int *mul)
{
    *first = *mul = -1;
    for (int s = p + 1; s < e->n_steps; s++) {
        const mrt_node *n = node_of(e, s);
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] == x) {
                if (is_op(n, op_type) && i == 0) *first = s;
                else if (is_op(n, "Mul")) *mul = s;
            }
    }
}

/* GELU written out (mrt_gelu_erf_nodes): x read by exactly Div(x, div) and Mul(x, a); Div -> Erf -> Add(., add) -> a,
   each read by the next alone; the Mul's product read alone by Mul(., mul). Fills op, the five steps into absorbed
   and the values they skip into fused_away; the chain's output in *y. */
static bool gelu_erf_chain(fuse_scan *fs, int p, int x, mrt_post_op *op, int *absorbed, uint8_t *fused_away, int *y)
{
    mrt_exec *e = fs->e;
    int div, mul1;
    readers_of(e, p, x, "Div", &div, &mul1);
    if (div < 0 || mul1 < 0 || !fusable_step(&e->steps[div]) || !fusable_step(&e->steps[mul1])) return false;
    mrt_gelu_erf_nodes g;
    bool div_first;
    const mrt_node *dn = node_of(e, div), *m1 = node_of(e, mul1);
    if (!scalar_operand(e, dn, x, &g.div, &div_first) || div_first) return false;
    int dv = dn->outputs[0], erf = only_reader(fs, dv);
    const mrt_node *en = erf >= 0 ? node_of(e, erf) : NULL;
    if (!en || !is_op(en, "Erf") || en->inputs[0] != dv) return false;
    int ev = en->outputs[0], add = only_reader(fs, ev);
    const mrt_node *an = add >= 0 ? node_of(e, add) : NULL;
    if (!an || !is_op(an, "Add") || !scalar_operand(e, an, ev, &g.add, &g.add_first)) return false;
    int av = an->outputs[0];
    if (only_reader(fs, av) != mul1 || m1->n_inputs != 2 || !((m1->inputs[0] == x && m1->inputs[1] == av) ||
                                                             (m1->inputs[0] == av && m1->inputs[1] == x)))
        return false;
    g.x_first = m1->inputs[0] == x;
    int mv = m1->outputs[0], mul2 = only_reader(fs, mv);
    const mrt_node *m2 = mul2 >= 0 ? node_of(e, mul2) : NULL;
    if (!m2 || !is_op(m2, "Mul") || !scalar_operand(e, m2, mv, &g.mul, &g.mul_first)) return false;
    const mrt_tensor *xt = &e->vals[x].tensor;
    int out = m2->outputs[0];
    for (int v = 0; v < 5; v++) { /* every value in the chain: x's shape and float32 (no broadcast grew it) */
        int val = (int[]){dv, ev, av, mv, out}[v];
        if (val < 0 || !mrt_tensor_same_shape(&e->vals[val].tensor, xt) || e->vals[val].tensor.dtype != MRT_DTYPE_FLOAT)
            return false;
    }
    *op = (mrt_post_op){.kind = MRT_POST_GELU_ERF_NODES, .gelu = g};
    int steps[5] = {div, erf, add, mul1, mul2};
    memcpy(absorbed, steps, sizeof steps);
    fused_away[x] = fused_away[dv] = fused_away[ev] = fused_away[av] = fused_away[mv] = 1;
    *y = out;
    return true;
}

/* The activations a program takes with their attributes, and ONNX's defaults for them (the kernels' too) */
static const struct pw_activation {
    const char *op;
    mrt_pw_code code;
    float alpha;
    const char *second; /* the second attribute's name, or NULL */
    float second_default;
} pw_activations[] = {
    {"LeakyRelu", MRT_PW_LEAKY_RELU, MRT_LEAKY_RELU_ALPHA, NULL, 0.0f},
    {"Elu", MRT_PW_ELU, MRT_ELU_ALPHA, NULL, 0.0f},
    {"Celu", MRT_PW_CELU, MRT_CELU_ALPHA, NULL, 0.0f},
    {"ThresholdedRelu", MRT_PW_THRESHOLDED_RELU, MRT_THRESHOLDED_RELU_ALPHA, NULL, 0.0f},
    {"Selu", MRT_PW_SELU, MRT_SELU_ALPHA, "gamma", MRT_SELU_GAMMA},
    {"HardSigmoid", MRT_PW_HARD_SIGMOID, MRT_HARD_SIGMOID_ALPHA, "beta", MRT_HARD_SIGMOID_BETA},
};

/* A float attribute as the kernels read it (mrt_attr_float: a float, an int as a float, else the default) */
static bool pw_attr(const mrt_node *nd, const char *name, float def, float *v)
{
    const mrt_attr *a = mrt_node_attr(nd, name);
    *v = !a ? def : a->type == MRT_ATTR_FLOAT ? a->f : (float)a->i;
    return !a || a->type == MRT_ATTR_FLOAT || a->type == MRT_ATTR_INT;
}

/* The pointwise-program code of step s's node (the arithmetic ops without legacy broadcast attributes, the unary
   ops of MRT_PW_UNARY_OPS, Gelu, the activations above with their attributes in *k and *k2), or -1 */
static int pw_code(const mrt_exec *e, int s, float *k, float *k2)
{
    const mrt_node *nd = node_of(e, s);
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Pow"};
    for (int c = MRT_PW_ADD; c <= MRT_PW_POW; c++)
        if (is_op(nd, binary[c])) return nd->n_inputs == 2 && e->steps[s].opset >= 7 ? c : -1;
    if (nd->n_inputs != 1) return -1;
#define MRT_PW_X(name, op_type)                                                                                    \
    if (is_op(nd, op_type)) return MRT_PW_##name;
    MRT_PW_UNARY_OPS(MRT_PW_X)
#undef MRT_PW_X
    if (is_op(nd, "Gelu")) {
        const mrt_attr *a = mrt_node_attr(nd, "approximate");
        if (!a) return MRT_PW_GELU;
        if (a->type != MRT_ATTR_STRING) return -1;
        return !strcmp(a->s, "none") ? MRT_PW_GELU : !strcmp(a->s, "tanh") ? MRT_PW_GELU_TANH : -1;
    }
    for (size_t i = 0; i < sizeof pw_activations / sizeof *pw_activations; i++) {
        const struct pw_activation *act = &pw_activations[i];
        if (!is_op(nd, act->op)) continue;
        *k2 = 0.0f;
        if (!pw_attr(nd, "alpha", act->alpha, k) || (act->second && !pw_attr(nd, act->second, act->second_default, k2)))
            return -1;
        return act->code;
    }
    return -1;
}

/* Step s as instruction *in over the group's values val[0..n] (the instruction's registers still value indices):
   its inputs group values or, at most one of them, a scalar float32 constant (a Pow's exponent only), its output
   float32 of x's shape */
static bool pw_instr(const mrt_exec *e, int s, const int *val, int n, const mrt_tensor *xt, mrt_pw_instr *in)
{
    float k = 0.0f, k2 = 0.0f;
    int code = pw_code(e, s, &k, &k2);
    const mrt_node *nd = node_of(e, s);
    if (code < 0 || !fusable_step(&e->steps[s]) || nd->n_outputs < 1 || nd->outputs[0] < 0) return false;
    for (int i = 1; i < nd->n_outputs; i++)
        if (nd->outputs[i] >= 0) return false;
    const mrt_value *ov = &e->vals[nd->outputs[0]];
    if (ov->kind != MRT_VALUE_TENSOR || ov->tensor.dtype != MRT_DTYPE_FLOAT || !mrt_tensor_same_shape(&ov->tensor, xt))
        return false;
    *in = (mrt_pw_instr){.code = (mrt_pw_code)code, .a = -1, .b = -1, .k = k, .k2 = k2};
    int8_t *slot[2] = {&in->a, &in->b};
    for (int i = 0; i < nd->n_inputs; i++) {
        for (int v = 0; v <= n; v++)
            if (nd->inputs[i] == val[v]) *slot[i] = (int8_t)v;
        if (*slot[i] >= 0) continue;
        bool first;
        if (code > MRT_PW_POW || (code == MRT_PW_POW && i == 0) || (in->a < 0 && i == 1) ||
            !scalar_operand(e, nd, nd->inputs[1 - i], &in->k, &first))
            return false;
    }
    return code != MRT_PW_POW || in->b < 0; /* a Pow's exponent is the constant */
}

/* A pointwise program over x (mrt_pw_program): the element-wise nodes after step p that read x and each other (and
   scalar constants), every value x's shape, each value read inside the group alone but the last, whose readers lie
   outside. Greedy, in step order, then cut back to its longest prefix that is closed so (a value read by a node
   that cannot join ends the group there, or x's, and then there is none). Fills *pg, the steps into absorbed and
   the values they skip into fused_away; the group's output in *y. */
static bool pointwise_group(fuse_scan *fs, int p, int x, mrt_pw_program *pg, int *absorbed, uint8_t *fused_away,
                            int *y)
{
    const mrt_exec *e = fs->e;
    if (!plain_value(fs, x)) return false;
    const mrt_tensor *xt = &e->vals[x].tensor;
    int val[MRT_PW_MAX_INSTR + 1] = {x}, step[MRT_PW_MAX_INSTR], n = 0;
    int unseen = fs->readers[x]; /* the group's values' readers not yet met: none left, the group is closed */
    for (int s = p + 1; s < e->n_steps && unseen > 0; s++) {
        const mrt_node *nd = node_of(e, s);
        int hits = 0;
        for (int i = 0; i < nd->n_inputs; i++)
            for (int k = 0; k <= n; k++) hits += nd->inputs[i] == val[k];
        if (!hits) continue;
        unseen -= hits;
        if (n == MRT_PW_MAX_INSTR || !pw_instr(e, s, val, n, xt, &pg->ins[n])) continue; /* a reader outside */
        step[n++] = s;
        val[n] = nd->outputs[0];
        unseen += fs->readers[val[n]];
    }
    /* the longest closed prefix: every value but its output read, and only by its instructions */
    for (; n > 0; n--) {
        bool closed = true;
        for (int k = 0; k < n && closed; k++) {
            int in_prefix = 0;
            for (int i = 0; i < n; i++) in_prefix += (pg->ins[i].a == k) + (pg->ins[i].b == k);
            closed = in_prefix > 0 && in_prefix == fs->readers[val[k]] && plain_value(fs, val[k]);
        }
        if (closed) break;
    }
    if (n == 0) return false;
    /* registers: each value one from its instruction to its last reader; an instruction may write over an operand
       it reads last (each loop reads element i before it writes it) */
    int last[MRT_PW_MAX_INSTR + 1], reg[MRT_PW_MAX_INSTR + 1];
    for (int k = 0; k <= n; k++) last[k] = -1;
    for (int i = 0; i < n; i++) {
        if (pg->ins[i].a >= 0) last[pg->ins[i].a] = i;
        if (pg->ins[i].b >= 0) last[pg->ins[i].b] = i;
    }
    bool busy[MRT_PW_MAX_REGS] = {true};
    reg[0] = 0;
    for (int i = 0; i < n; i++) {
        mrt_pw_instr *in = &pg->ins[i];
        int va = in->a, vb = in->b;
        if (va >= 0) in->a = (int8_t)reg[va];
        if (vb >= 0) in->b = (int8_t)reg[vb];
        if (va >= 0 && last[va] == i) busy[reg[va]] = false;
        if (vb >= 0 && last[vb] == i) busy[reg[vb]] = false;
        int r = 0;
        while (r < MRT_PW_MAX_REGS && busy[r]) r++;
        if (r == MRT_PW_MAX_REGS) return false;
        busy[r] = true;
        reg[i + 1] = r;
        in->dst = (int8_t)r;
    }
    if (reg[n] != 0) return false; /* every other value dead by then: cannot happen */
    pg->n = n;
    memcpy(absorbed, step, (size_t)n * sizeof *step);
    for (int k = 0; k < n; k++) fused_away[val[k]] = 1;
    *y = val[n];
    return true;
}

static mrt_fusion *fusion_new(void)
{
    mrt_fusion *f = calloc(1, sizeof *f);
    if (f) f->in_value = f->scale_value = -1;
    return f;
}

static void add_op(mrt_fusion *f, mrt_post_kind kind)
{
    f->other_value[f->ep.n_ops] = -1;
    f->ep.ops[f->ep.n_ops++] = (mrt_post_op){.kind = kind};
}

/* Where nothing else joins a chain at *x: a pointwise program over *x, or, after a MatMul or Gemm, over a Reshape
   (Flatten, Squeeze, Unsqueeze) of it that alone reads it (GPT-2's GELU reads its c_fc Gemm's result as [2, 48,
   1024]): the producer writes its rows, which are the Reshape's elements, and the program runs over them. */
static bool pointwise_link(fuse_scan *fs, int p, int *x, mrt_fusion *f, int *absorbed, int *n_abs, uint8_t *fused_away)
{
    mrt_exec *e = fs->e;
    const mrt_node *pn = node_of(e, p);
    int from = p, gx = *x, r = only_reader(fs, *x);
    const mrt_node *rn = r >= 0 ? node_of(e, r) : NULL;
    if (rn && (is_op(pn, "MatMul") || is_op(pn, "Gemm")) && f->ep.n_ops == 0 &&
        (is_op(rn, "Reshape") || is_op(rn, "Flatten") || is_op(rn, "Squeeze") || is_op(rn, "Unsqueeze")) &&
        rn->inputs[0] == *x && rn->n_outputs == 1 && plain_value(fs, rn->outputs[0]) &&
        mrt_tensor_numel(&e->vals[rn->outputs[0]].tensor) == mrt_tensor_numel(&e->vals[*x].tensor)) {
        from = r;
        gx = rn->outputs[0];
    }
    mrt_pw_program *pg = calloc(1, sizeof *pg);
    int y, n0 = *n_abs + (from != p);
    if (!pg || !pointwise_group(fs, from, gx, pg, absorbed + n0, fused_away, &y)) {
        free(pg);
        return false;
    }
    if (from != p) { /* the Reshape: its input is not computed either */
        absorbed[*n_abs] = from;
        fused_away[*x] = 1;
    }
    *n_abs = n0 + pg->n;
    f->pw = pg;
    f->other_value[f->ep.n_ops] = -1;
    f->ep.ops[f->ep.n_ops++] = (mrt_post_op){.kind = MRT_POST_POINTWISE, .pw = pg};
    *x = y;
    return true;
}

/* Grow the chain that starts at producer step p (output x): returns the fusion, or NULL when nothing joins. */
static mrt_fusion *grow_chain(fuse_scan *fs, int p, uint8_t *fused_away)
{
    mrt_exec *e = fs->e;
    const mrt_node *pn = node_of(e, p);
    bool conv = is_op(pn, "Conv"), bn = is_op(pn, "BatchNormalization");
    /* an element-wise producer (Add, Mul, ...: wav2vec2's GroupNorm affine before its GELU) takes only the GELU */
    bool elementwise = !conv && !bn && !is_op(pn, "MatMul") && !is_op(pn, "Gemm");
    int x = pn->outputs[0];
    const mrt_tensor *xt = &e->vals[x].tensor;
    if (xt->rank < (conv ? 2 : 1)) return NULL;
    int64_t channels = conv ? xt->shape[1] : 0, cols = xt->shape[xt->rank - 1];
    mrt_fusion *f = fusion_new();
    if (!f) return NULL;
    int absorbed[2 * MRT_MAX_POST_OPS + MRT_PW_MAX_INSTR + 1], n_abs = 0;
    /* a BatchNormalization (its kernel applies the epilogue per channel plane): from the residual Add on */
    enum { AT_BN, AT_ADD, AT_ACT, DONE } stage = bn ? AT_ADD : AT_BN;
    while (stage != DONE && f->ep.n_ops < MRT_MAX_POST_OPS) {
        int r = only_reader(fs, x);
        const mrt_node *rn = r >= 0 ? node_of(e, r) : NULL;
        /* GELU written out: x read by its Div and its Mul */
        int gy;
        if (r < 0 && plain_value(fs, x) && fs->readers[x] == 2 && stage <= AT_ACT &&
            gelu_erf_chain(fs, p, x, &f->ep.ops[f->ep.n_ops], absorbed + n_abs, fused_away, &gy)) {
            f->other_value[f->ep.n_ops++] = -1;
            n_abs += 5;
            x = gy;
            stage = DONE;
            break;
        }
        if (elementwise) break;
        /* SiLU: x read by exactly Sigmoid(x) -> s and Mul(x, s), s read by the Mul alone */
        if (r < 0 && plain_value(fs, x) && fs->readers[x] == 2 && stage <= AT_ACT) {
            int sig, mul;
            readers_of(e, p, x, "Sigmoid", &sig, &mul);
            if (sig < 0 || mul < 0) break;
            int sv = node_of(e, sig)->outputs[0];
            const mrt_node *mn = node_of(e, mul);
            if (only_reader(fs, sv) != mul || mn->n_inputs != 2 || !fusable_step(&e->steps[sig]) ||
                !((mn->inputs[0] == x && mn->inputs[1] == sv) || (mn->inputs[0] == sv && mn->inputs[1] == x)))
                break;
            int y = mn->outputs[0];
            if (y < 0 || !mrt_tensor_same_shape(&e->vals[y].tensor, xt) || e->vals[y].tensor.dtype != MRT_DTYPE_FLOAT)
                break;
            add_op(f, MRT_POST_SILU);
            fused_away[x] = fused_away[sv] = 1;
            absorbed[n_abs++] = sig;
            absorbed[n_abs++] = mul;
            x = y;
            stage = DONE;
            break;
        }
        if (!rn || rn->n_outputs < 1 || rn->outputs[0] < 0) break;
        int y = rn->outputs[0];
        if (!mrt_tensor_same_shape(&e->vals[y].tensor, xt) || e->vals[y].tensor.dtype != MRT_DTYPE_FLOAT) break;
        bool joined = false;
        int bias = !conv && stage == AT_BN && is_op(rn, "Add") && rn->n_inputs == 2 ? row_vector(e, rn, x, cols) : -1;
        if (bias >= 0) { /* MatMul/Gemm: a Linear layer's bias */
            add_op(f, MRT_POST_ADD_ROW);
            f->other_value[f->ep.n_ops - 1] = bias;
            f->ep.ops[f->ep.n_ops - 1].n_cols = cols;
            stage = AT_ADD;
            joined = true;
        } else if (conv && stage == AT_BN && is_op(rn, "BatchNormalization")) {
            mrt_bn_coef *coef;
            if (!bn_link(e, &e->steps[r], x, channels, &coef)) break;
            free(f->coef); /* at most one BN per chain: stage moves on */
            f->coef = coef;
            add_op(f, MRT_POST_BATCHNORM);
            f->ep.ops[f->ep.n_ops - 1].bn = coef;
            stage = AT_ADD;
            joined = true;
        } else if (stage <= AT_ADD && is_op(rn, "Add") && rn->n_inputs == 2) {
            int other = rn->inputs[0] == x ? rn->inputs[1] : rn->inputs[0];
            if (other == x || other < 0 || e->vals[other].kind != MRT_VALUE_TENSOR ||
                e->vals[other].tensor.dtype != MRT_DTYPE_FLOAT || !mrt_tensor_same_shape(&e->vals[other].tensor, xt) ||
                e->state[other] == MRT_VS_DYNAMIC || e->state[other] == MRT_VS_UNSET)
                break;
            /* the operand must exist when the producer runs: made by an earlier step, or a source */
            bool ready = e->state[other] == MRT_VS_CONST || e->graph->values[other].is_input || e->graph->values[other].is_outer;
            for (int s = 0; s < p && !ready; s++) {
                const mrt_node *n = node_of(e, s);
                for (int i = 0; i < n->n_outputs; i++) ready |= n->outputs[i] == other;
            }
            if (!ready) break;
            add_op(f, MRT_POST_ADD);
            f->other_value[f->ep.n_ops - 1] = other;
            stage = AT_ACT;
            joined = true;
        } else if (stage <= AT_ACT && (is_op(rn, "Relu") || is_op(rn, "Sigmoid") || is_op(rn, "HardSwish"))) {
            add_op(f, is_op(rn, "Relu") ? MRT_POST_RELU : is_op(rn, "Sigmoid") ? MRT_POST_SIGMOID : MRT_POST_HARDSWISH);
            stage = DONE;
            joined = true;
        } else if (stage <= AT_ACT && is_op(rn, "Clip")) {
            float lo, hi;
            if (!clip_bounds(e, &e->steps[r], &lo, &hi)) break;
            add_op(f, MRT_POST_CLIP);
            f->ep.ops[f->ep.n_ops - 1].lo = lo;
            f->ep.ops[f->ep.n_ops - 1].hi = hi;
            stage = DONE;
            joined = true;
        }
        if (!joined) break;
        fused_away[x] = 1;
        absorbed[n_abs++] = r;
        x = y;
    }
    if (stage != DONE && f->ep.n_ops < MRT_MAX_POST_OPS) pointwise_link(fs, p, &x, f, absorbed, &n_abs, fused_away);
    if (f->ep.n_ops == 0) {
        mrt_fusion_free(f);
        return NULL;
    }
    f->out_value = x;
    for (int i = 0; i < n_abs; i++) e->steps[absorbed[i]].fused_into = p;
    return f;
}

/* A tensor value of the given dtype that holds data when the steps run (a constant, a source or a planned value) */
static bool ready_tensor(const mrt_exec *e, int v, mrt_dtype dt)
{
    return v >= 0 && e->vals[v].kind == MRT_VALUE_TENSOR && e->vals[v].tensor.dtype == dt &&
           (e->state[v] == MRT_VS_CONST || e->state[v] == MRT_VS_SHAPED);
}

/* An integer-list attribute that is absent or has every entry equal to want */
static bool ints_all(const mrt_node *nd, const char *name, int64_t want)
{
    const mrt_attr *a = mrt_node_attr(nd, name);
    if (!a) return true;
    if (a->type != MRT_ATTR_INTS) return false;
    for (int64_t i = 0; i < a->n; i++)
        if (a->ints[i] != want) return false;
    return true;
}

/* Conv node nd on x (shape of rank r, C channels) is a pointwise product: weights [M, C, 1, ...], one group, stride
   1, no padding (any auto_pad pads a 1-wide kernel at stride 1 by 0). The kernel's pointwise path is then the one
   that applies the prologue; it checks again and fails rather than compute without the scale. */
static bool pointwise_conv(const mrt_exec *e, const mrt_node *nd, const mrt_tensor *x)
{
    int w = nd->n_inputs >= 2 ? nd->inputs[1] : -1;
    if (!ready_tensor(e, w, MRT_DTYPE_FLOAT) || !ints_all(nd, "strides", 1) || !ints_all(nd, "pads", 0))
        return false;
    const mrt_attr *group = mrt_node_attr(nd, "group");
    if (group && (group->type != MRT_ATTR_INT || group->i != 1)) return false;
    const mrt_tensor *wt = &e->vals[w].tensor;
    if (wt->rank != x->rank || x->rank < 3 || wt->shape[1] != x->shape[1]) return false;
    for (int d = 2; d < wt->rank; d++)
        if (wt->shape[d] != 1) return false;
    return true;
}

/* Mul(x, s) -> m read by Conv step c alone, with s constant along every axis but the batch and the channel: fuse it
   into c as an input scale (mrt_prologue). */
static void fuse_input_scale(fuse_scan *fs, int c, uint8_t *fused_away)
{
    mrt_exec *e = fs->e;
    mrt_step *cst = &e->steps[c];
    const mrt_node *cn = node_of(e, c);
    if (cst->folded || cst->dynamic || cst->fused_into >= 0 || cst->shadow || cst->call_shadow || !cst->kernel ||
        !(cst->kernel->flags & MRT_KERNEL_INPUT_SCALE) || !is_op(cn, "Conv") || cn->n_inputs < 2)
        return;
    int m = cn->inputs[0];
    if (!plain_value(fs, m) || fs->readers[m] != 1) return;
    int mul = fs->producer[m];
    if (mul < 0 || !fusable_step(&e->steps[mul])) return;
    const mrt_node *mn = node_of(e, mul);
    if (!is_op(mn, "Mul") || mn->n_inputs != 2 || mn->outputs[0] != m) return;
    const mrt_tensor *mt = &e->vals[m].tensor;
    if (!pointwise_conv(e, cn, mt)) return;
    for (int xi = 0; xi < 2; xi++) {
        int x = mn->inputs[xi], s = mn->inputs[1 - xi];
        if (!ready_tensor(e, x, MRT_DTYPE_FLOAT) || !mrt_tensor_same_shape(&e->vals[x].tensor, mt) ||
            !ready_tensor(e, s, MRT_DTYPE_FLOAT))
            continue;
        /* s right-aligned to m: [1 or N, 1 or C, 1, ...] */
        const mrt_tensor *st = &e->vals[s].tensor;
        int off = mt->rank - st->rank;
        if (off < 0) continue;
        int64_t sd[MRT_MAX_RANK];
        bool per_channel_scale = true;
        for (int d = 0; d < mt->rank; d++) {
            sd[d] = d >= off ? st->shape[d - off] : 1;
            if (sd[d] != 1 && (d >= 2 || sd[d] != mt->shape[d])) per_channel_scale = false;
        }
        if (!per_channel_scale) continue;
        mrt_fusion *f = cst->fusion;
        if (!f) {
            f = fusion_new();
            if (!f) return; /* no fusion: the nodes run on their own */
            f->out_value = cn->outputs[0];
            cst->fusion = f;
        }
        f->in_value = x;
        f->scale_value = s;
        f->pro.channel_stride = sd[1] > 1 ? 1 : 0;
        f->pro.batch_stride = sd[0] > 1 ? sd[1] : 0;
        e->steps[mul].fused_into = c;
        fused_away[m] = 1;
        return;
    }
}

/* BatchNormalization(x) [-> Relu] -> m read by Conv step c alone (pointwise, group 1): fuse it into c as an input
   BatchNormalization (mrt_prologue). The BatchNormalization step b has taken the Relu in already (grow_chain, which
   runs first): its fusion, with that one op, is dropped and the two nodes go into c. DenseNet-121's 58
   pre-activations before its 1x1 Convs (and the transitions'): each wrote and read its Concat's size again. */
static void fuse_input_bn(fuse_scan *fs, int c, uint8_t *fused_away)
{
    mrt_exec *e = fs->e;
    mrt_step *cst = &e->steps[c];
    const mrt_node *cn = node_of(e, c);
    if (cst->folded || cst->dynamic || cst->fused_into >= 0 || cst->shadow || cst->call_shadow || !cst->kernel ||
        !(cst->kernel->flags & MRT_KERNEL_INPUT_SCALE) || !is_op(cn, "Conv") || cn->n_inputs < 2 ||
        (cst->fusion && cst->fusion->in_value >= 0))
        return;
    int m = cn->inputs[0];
    if (!plain_value(fs, m) || fs->readers[m] != 1 || fs->producer[m] < 0) return;
    int b = fs->producer[m], r = -1;
    if (e->steps[b].fused_into >= 0) { /* the Relu, fused into the BatchNormalization */
        r = b;
        b = e->steps[r].fused_into;
        const mrt_fusion *bf = e->steps[b].fusion;
        if (!is_op(node_of(e, r), "Relu") || !bf || bf->out_value != m || bf->ep.n_ops != 1 ||
            bf->ep.ops[0].kind != MRT_POST_RELU || bf->in_value >= 0)
            return;
    } else if (e->steps[b].fusion) {
        return;
    }
    mrt_step *bst = &e->steps[b];
    const mrt_node *bn = node_of(e, b);
    if (bst->folded || bst->dynamic || bst->shadow || bst->call_shadow || !is_op(bn, "BatchNormalization") ||
        bn->n_inputs != 5)
        return;
    int x = bn->inputs[0], bv = bn->outputs[0];
    const mrt_tensor *mt = &e->vals[m].tensor;
    if (!ready_tensor(e, x, MRT_DTYPE_FLOAT) || !mrt_tensor_same_shape(&e->vals[x].tensor, mt) || mt->rank < 3 ||
        !pointwise_conv(e, cn, mt) || (r >= 0 && (!plain_value(fs, bv) || fs->readers[bv] != 1)))
        return;
    mrt_bn_coef *coef;
    if (!bn_link(e, bst, x, mt->shape[1], &coef)) return;
    mrt_fusion *f = cst->fusion;
    if (!f) {
        f = fusion_new();
        if (!f) {
            free(coef);
            return; /* no fusion: the nodes run on their own */
        }
        f->out_value = cn->outputs[0];
        cst->fusion = f;
    }
    f->in_value = x;
    f->pro_coef = coef;
    f->pro.bn = coef;
    f->pro.relu = r >= 0;
    if (r >= 0) {
        mrt_fusion_free(bst->fusion);
        bst->fusion = NULL;
        e->steps[r].fused_into = c;
        fused_away[bv] = 1;
    }
    bst->fused_into = c;
    fused_away[m] = 1;
}

/* The zero pads of Pad step p (mode constant, value 0, only the last two of four axes, none negative) into
   pads[4] = {top, left, bottom, right}; false when it is not such a Pad. Opset 2-10 take pads and value as
   attributes, 11 on as inputs (constants); an axes input (18 on) is not taken. */
static bool zero_pad_2d(const mrt_exec *e, int p, int64_t pads[4])
{
    const mrt_node *nd = node_of(e, p);
    int64_t opset = e->steps[p].opset;
    if (!is_op(nd, "Pad") || opset < 2 || nd->n_outputs < 1) return false;
    const mrt_attr *mode = mrt_node_attr(nd, "mode");
    if (mode && (mode->type != MRT_ATTR_STRING || strcmp(mode->s, "constant") != 0)) return false;
    int64_t all[8];
    if (opset < 11) {
        const mrt_attr *pa = mrt_node_attr(nd, "pads"), *va = mrt_node_attr(nd, "value");
        if (!pa || pa->type != MRT_ATTR_INTS || pa->n != 8) return false;
        if (va && (va->type != MRT_ATTR_FLOAT || va->f != 0.0f)) return false;
        memcpy(all, pa->ints, sizeof all);
    } else {
        if (nd->n_inputs < 2 || (nd->n_inputs >= 4 && nd->inputs[3] >= 0)) return false;
        int pv = nd->inputs[1], cv = nd->n_inputs >= 3 ? nd->inputs[2] : -1;
        if (!is_const(e, pv) || e->vals[pv].kind != MRT_VALUE_TENSOR || e->vals[pv].tensor.dtype != MRT_DTYPE_INT64 ||
            mrt_tensor_numel(&e->vals[pv].tensor) != 8 || !e->vals[pv].tensor.data)
            return false;
        if (cv >= 0) {
            if (!is_const(e, cv) || e->vals[cv].kind != MRT_VALUE_TENSOR || e->vals[cv].tensor.dtype != MRT_DTYPE_FLOAT ||
                mrt_tensor_numel(&e->vals[cv].tensor) != 1 || !e->vals[cv].tensor.data ||
                ((const float *)e->vals[cv].tensor.data)[0] != 0.0f)
                return false;
        }
        memcpy(all, e->vals[pv].tensor.data, sizeof all);
    }
    if (all[0] || all[1] || all[4] || all[5]) return false;
    for (int i = 0; i < 8; i++)
        if (all[i] < 0) return false;
    pads[0] = all[2], pads[1] = all[3], pads[2] = all[6], pads[3] = all[7];
    return true;
}

/* Pad(x) -> m read by AveragePool step a alone (2-D float, no pads, auto_pad or dilations of its own): fuse the Pad
   into a as zero pads counted in its windows (mrt_prologue). */
static void fuse_input_pad(fuse_scan *fs, int a, uint8_t *fused_away)
{
    mrt_exec *e = fs->e;
    mrt_step *ast = &e->steps[a];
    const mrt_node *an = node_of(e, a);
    if (!fusable_step(ast) || !ast->kernel || !(ast->kernel->flags & MRT_KERNEL_INPUT_PAD) || !is_op(an, "AveragePool") ||
        an->n_inputs < 1 || !ints_all(an, "pads", 0) || !ints_all(an, "dilations", 1))
        return;
    const mrt_attr *ap = mrt_node_attr(an, "auto_pad");
    if (ap && (ap->type != MRT_ATTR_STRING || strcmp(ap->s, "NOTSET") != 0)) return;
    int m = an->inputs[0];
    if (!plain_value(fs, m) || fs->readers[m] != 1) return;
    int p = fs->producer[m];
    int64_t pads[4];
    if (p < 0 || !fusable_step(&e->steps[p]) || node_of(e, p)->outputs[0] != m || !zero_pad_2d(e, p, pads)) return;
    int x = node_of(e, p)->inputs[0];
    const mrt_tensor *mt = &e->vals[m].tensor;
    if (!ready_tensor(e, x, MRT_DTYPE_FLOAT) || e->vals[x].tensor.rank != 4 || mt->rank != 4) return;
    const mrt_tensor *xt = &e->vals[x].tensor;
    if (xt->shape[0] != mt->shape[0] || xt->shape[1] != mt->shape[1] || xt->shape[2] + pads[0] + pads[2] != mt->shape[2] ||
        xt->shape[3] + pads[1] + pads[3] != mt->shape[3])
        return;
    mrt_fusion *f = fusion_new();
    if (!f) return; /* no fusion: the nodes run on their own */
    f->out_value = an->outputs[0];
    f->in_value = x;
    f->pro.pad = true;
    memcpy(f->pro.pads, pads, sizeof pads);
    ast->fusion = f;
    e->steps[p].fused_into = a;
    fused_away[m] = 1;
}

mrt_status mrt_fuse_steps(mrt_exec *e, const bool *sub_read, uint8_t *fused_away)
{
    const mrt_graph *g = e->graph;
    size_t nv = (size_t)g->n_values + 1;
    fuse_scan fs = {e, sub_read, calloc(nv, sizeof(int)), calloc(nv, sizeof(int)), malloc(nv * sizeof(int))};
    if (!fs.readers || !fs.reader || !fs.producer) {
        free(fs.readers);
        free(fs.reader);
        free(fs.producer);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fusion)");
    }
    for (size_t v = 0; v < nv; v++) fs.producer[v] = -1;
    for (int s = 0; s < e->n_steps; s++) {
        const mrt_node *nd = node_of(e, s);
        for (int i = 0; i < nd->n_inputs; i++) {
            int v = nd->inputs[i];
            if (v < 0) continue;
            fs.readers[v]++;
            fs.reader[v] = s;
        }
        for (int i = 0; i < nd->n_outputs; i++)
            if (nd->outputs[i] >= 0) fs.producer[nd->outputs[i]] = s;
    }
    for (int i = 0; i < g->n_outputs; i++) fs.readers[g->outputs[i]]++;
    for (int s = 0; s < e->n_steps; s++) {
        mrt_step *st = &e->steps[s];
        const mrt_node *nd = node_of(e, s);
        if (!fusable_step(st) || !st->kernel || !(st->kernel->flags & MRT_KERNEL_EPILOGUE) || nd->n_outputs < 1 ||
            !plain_value(&fs, nd->outputs[0]))
            continue;
        bool other_outputs = false;
        for (int i = 1; i < nd->n_outputs; i++) other_outputs |= nd->outputs[i] >= 0;
        if (!other_outputs) st->fusion = grow_chain(&fs, s, fused_away);
    }
    for (int s = 0; s < e->n_steps; s++) fuse_input_scale(&fs, s, fused_away);
    for (int s = 0; s < e->n_steps; s++) fuse_input_bn(&fs, s, fused_away);
    for (int s = 0; s < e->n_steps; s++) fuse_input_pad(&fs, s, fused_away);
    free(fs.readers);
    free(fs.reader);
    free(fs.producer);
    return MRT_STATUS_OK;
}

void mrt_fusion_free(mrt_fusion *f)
{
    if (!f) return;
    free(f->coef);
    free(f->pro_coef);
    free(f->pw);
    free(f);
}

void mrt_fusion_bind(const mrt_exec *e, mrt_fusion *f)
{
    for (int k = 0; k < f->ep.n_ops; k++)
        if (f->other_value[k] >= 0) f->ep.ops[k].other = e->vals[f->other_value[k]].tensor.data;
    if (f->scale_value >= 0) f->pro.scale = e->vals[f->scale_value].tensor.data;
}
