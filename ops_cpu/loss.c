/* CPU kernels: NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13), one core: per
   element loss = -logp[n, t, d] * w[t] (0 where t == ignore_index); reduction none / sum / mean (divided by the
   sum of the weights of the elements not ignored; 0/0 = NaN when all are ignored, as in PyTorch). Computed in double; float types read and written through the
   dtype helpers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/registry.h"

/* logp: [N, C, D] as doubles. */
static mrt_status nll_core(mrt_op_ctx *ctx, const double *logp, int64_t n, int64_t c, int64_t d)
{
    const mrt_tensor *t = mrt_input(ctx, 1), *w = mrt_input(ctx, 2);
    mrt_tensor *y = mrt_output(ctx, 0);
    const char *red = mrt_attr_string(ctx, "reduction", "mean");
    const mrt_attr *ig = mrt_node_attr(ctx->node, "ignore_index");
    bool has_ignore = ig && ig->type == MRT_ATTR_INT;
    int64_t ignore = has_ignore ? ig->i : 0;
    bool none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < d; k++) {
            int64_t idx = i * d + k, cls = mrt_load_i64(t->dtype, t->data, idx);
            double loss = 0, wt = 0;
            if (!(has_ignore && cls == ignore)) {
                if (cls < 0 || cls >= c)
                    return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "target %lld at index %lld is not a class in [0, %lld)",
                                       (long long)cls, (long long)idx, (long long)c);
                wt = w ? mrt_load_f64(w->dtype, w->data, cls) : 1.0;
                loss = -logp[(i * c + cls) * d + k] * wt;
            }
            if (none) mrt_store_f64(y->dtype, y->data, idx, loss);
            sum += loss;
            wsum += wt;
        }
    if (!none) mrt_store_f64(y->dtype, y->data, 0, mean ? (wsum != 0 ? sum / wsum : NAN) : sum);
    return MRT_STATUS_OK;
}

static void dims(const mrt_tensor *x, int64_t *n, int64_t *c, int64_t *d)
{
    *n = x->shape[0];
    *c = x->shape[1];
    *d = 1;
    for (int i = 2; i < x->rank; i++) *d *= x->shape[i];
}

/* Both losses take the input's log-probabilities in double */
static size_t logp_bytes(const mrt_tensor *x) { return (size_t)mrt_tensor_numel(x) * sizeof(double); }

static mrt_status mrt_cpu_loss_workspace(mrt_op_ctx *ctx)
{
    mrt_workspace_request(ctx, logp_bytes(mrt_input(ctx, 0)));
    return MRT_STATUS_OK;
}

static mrt_status mrt_cpu_nll(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    int64_t n, c, d, total = mrt_tensor_numel(x);
    dims(x, &n, &c, &d);
    double *logp = mrt_workspace(ctx, logp_bytes(x));
    if (!logp) return MRT_STATUS_OUT_OF_MEMORY;
    for (int64_t i = 0; i < total; i++) logp[i] = mrt_load_f64(x->dtype, x->data, i);
    mrt_status st = nll_core(ctx, logp, n, c, d);
    return st;
}

static mrt_status mrt_cpu_softmax_cross_entropy(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *log_prob = mrt_output(ctx, 1);
    int64_t n, c, d, total = mrt_tensor_numel(x);
    dims(x, &n, &c, &d);
    double *logp = mrt_workspace(ctx, logp_bytes(x));
    if (!logp) return MRT_STATUS_OUT_OF_MEMORY;
    /* log-softmax over the class axis, stable */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < d; k++) {
            double mx = -INFINITY, s = 0;
            for (int64_t j = 0; j < c; j++) mx = fmax(mx, mrt_load_f64(x->dtype, x->data, (i * c + j) * d + k));
            for (int64_t j = 0; j < c; j++) s += exp(mrt_load_f64(x->dtype, x->data, (i * c + j) * d + k) - mx);
            double lse = mx + log(s);
            for (int64_t j = 0; j < c; j++) {
                int64_t at = (i * c + j) * d + k;
                logp[at] = mrt_load_f64(x->dtype, x->data, at) - lse;
            }
        }
    if (log_prob)
        for (int64_t i = 0; i < total; i++) mrt_store_f64(log_prob->dtype, log_prob->data, i, logp[i]);
    mrt_status st = nll_core(ctx, logp, n, c, d);
    return st;
}

const mrt_kernel mrt_cpu_kernels_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, mrt_cpu_nll, NULL, NULL, NULL, 0, mrt_cpu_loss_workspace},
    {"", "SoftmaxCrossEntropyLoss", 12, mrt_cpu_softmax_cross_entropy, NULL, NULL, NULL, 0, mrt_cpu_loss_workspace},
    {0},
};
