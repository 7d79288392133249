/* Naive references for the reduce, softmax and normalization ops (see reduce_norm_ref.h): one element at a
 * time with explicit multi-indices, double accumulation, straight from the ONNX formulas. */
#include "reduce_norm_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t ref_numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int a = 0; a < rank; a++) n *= shape[a];
    return n;
}

static void unravel(int64_t i, int rank, const int64_t *shape, int64_t *idx)
{
    for (int a = rank - 1; a >= 0; a--) {
        idx[a] = shape[a] ? i % shape[a] : 0;
        i = shape[a] ? i / shape[a] : 0;
    }
}

static int64_t ravel(int rank, const int64_t *shape, const int64_t *idx)
{
    int64_t o = 0;
    for (int a = 0; a < rank; a++) o = o * shape[a] + idx[a];
    return o;
}

/* index of element i of x in the keepdims-reduced shape */
static int64_t reduced_index(int64_t i, int rank, const int64_t *shape, const bool *reduced)
{
    int64_t idx[16], oshape[16];
    unravel(i, rank, shape, idx);
    for (int a = 0; a < rank; a++) {
        oshape[a] = reduced[a] ? 1 : shape[a];
        if (reduced[a]) idx[a] = 0;
    }
    return ravel(rank, oshape, idx);
}

void ref_reduce(ref_reduce_op op, const double *x, int rank, const int64_t *shape, const bool *reduced, double *out)
{
    int64_t n = ref_numel(rank, shape), on = 1, count = 1;
    for (int a = 0; a < rank; a++) {
        if (reduced[a]) count *= shape[a];
        else on *= shape[a];
    }
    double *mx = malloc((size_t)(on ? on : 1) * sizeof(double));
    for (int64_t o = 0; o < on; o++) {
        switch (op) {
        case REF_PROD: out[o] = 1; break;
        case REF_MAX: out[o] = -INFINITY; break;
        case REF_MIN: out[o] = INFINITY; break;
        default: out[o] = 0; break;
        }
        mx[o] = -INFINITY;
    }
    if (op == REF_LOGSUMEXP)
        for (int64_t i = 0; i < n; i++) {
            int64_t o = reduced_index(i, rank, shape, reduced);
            if (x[i] > mx[o]) mx[o] = x[i];
        }
    for (int64_t i = 0; i < n; i++) {
        int64_t o = reduced_index(i, rank, shape, reduced);
        double v = x[i];
        switch (op) {
        case REF_SUM: case REF_MEAN: case REF_LOGSUM: out[o] += v; break;
        case REF_MAX: if (v > out[o]) out[o] = v; break;
        case REF_MIN: if (v < out[o]) out[o] = v; break;
        case REF_PROD: out[o] *= v; break;
        case REF_L1: out[o] += fabs(v); break;
        case REF_L2: case REF_SUMSQ: out[o] += v * v; break;
        case REF_LOGSUMEXP: out[o] += exp(v - mx[o]); break;
        }
    }
    for (int64_t o = 0; o < on; o++) {
        switch (op) {
        case REF_MEAN: out[o] = count ? out[o] / (double)count : NAN; break;
        case REF_L2: out[o] = sqrt(out[o]); break;
        case REF_LOGSUM: out[o] = log(out[o]); break;
        case REF_LOGSUMEXP: out[o] = count ? mx[o] + log(out[o]) : -INFINITY; break;
        default: break;
        }
    }
    free(mx);
}

static void split3(int rank, const int64_t *shape, int axis, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = ref_numel(axis, shape);
    *n = shape[axis];
    *inner = ref_numel(rank - axis - 1, shape + axis + 1);
}

void ref_argmax(bool is_max, bool select_last, const double *x, int rank, const int64_t *shape, int axis, int64_t *out)
{
    int64_t outer, n, inner;
    split3(rank, shape, axis, &outer, &n, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t best = 0;
            for (int64_t i = 1; i < n; i++) {
                double v = x[(o * n + i) * inner + j], b = x[(o * n + best) * inner + j];
                bool better = is_max ? v > b : v < b;
                if (better || (select_last && v == b)) best = i;
            }
            out[o * inner + j] = best;
        }
}

void ref_cumsum(const double *x, int rank, const int64_t *shape, int axis, bool exclusive, bool reverse, double *out)
{
    int64_t outer, n, inner;
    split3(rank, shape, axis, &outer, &n, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++)
            for (int64_t i = 0; i < n; i++) {
                double s = 0;
                for (int64_t k = 0; k < n; k++) {
                    bool before = reverse ? k > i : k < i;
                    if (before || (!exclusive && k == i)) s += x[(o * n + k) * inner + j];
                }
                out[(o * n + i) * inner + j] = s;
            }
}

void ref_softmax(int kind, const double *x, int rank, const int64_t *shape, int axis, bool coerce_2d, double *out)
{
    int64_t outer, n, inner;
    if (coerce_2d) {
        outer = ref_numel(axis, shape);
        n = ref_numel(rank - axis, shape + axis);
        inner = 1;
    } else {
        split3(rank, shape, axis, &outer, &n, &inner);
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            const double *xv = x + o * n * inner + j;
            double *yv = out + o * n * inner + j;
            double mx = -INFINITY, s = 0;
            int64_t arg = 0;
            for (int64_t i = 0; i < n; i++)
                if (xv[i * inner] > mx) {
                    mx = xv[i * inner];
                    arg = i;
                }
            for (int64_t i = 0; i < n; i++) s += exp(xv[i * inner] - mx);
            for (int64_t i = 0; i < n; i++) {
                double v = xv[i * inner];
                if (kind == 0) yv[i * inner] = exp(v - mx) / s;
                else if (kind == 1) yv[i * inner] = v - mx - log(s);
                else yv[i * inner] = i == arg ? 1.0 : 0.0;
            }
        }
}

void ref_broadcast(const double *p, int prank, const int64_t *pshape, int rank, const int64_t *shape, double *out)
{
    int64_t n = ref_numel(rank, shape), idx[16], pidx[16];
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, shape, idx);
        for (int a = 0; a < prank; a++) {
            int xa = rank - prank + a;
            pidx[a] = pshape[a] == 1 ? 0 : idx[xa];
        }
        out[i] = p[ravel(prank, pshape, pidx)];
    }
}

void ref_batchnorm(const double *x, int rank, const int64_t *shape, const double *scale, const double *bias,
                   const double *mean, const double *var, double eps, double *y)
{
    int64_t n = ref_numel(rank, shape), idx[16];
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, shape, idx);
        int64_t c = idx[1];
        y[i] = (x[i] - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c];
    }
}

void ref_batchnorm_train(const double *x, int rank, const int64_t *shape, const double *scale, const double *bias,
                         const double *in_mean, const double *in_var, double eps, double momentum, double *y,
                         double *run_mean, double *run_var)
{
    int64_t C = shape[1], n = ref_numel(rank, shape), idx[16];
    double *m = calloc((size_t)C, sizeof(double)), *v = calloc((size_t)C, sizeof(double));
    double cnt = (double)(n / C);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, shape, idx);
        m[idx[1]] += x[i] / cnt;
    }
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, shape, idx);
        double d = x[i] - m[idx[1]];
        v[idx[1]] += d * d / cnt;
    }
    ref_batchnorm(x, rank, shape, scale, bias, m, v, eps, y);
    for (int64_t c = 0; c < C; c++) {
        run_mean[c] = in_mean[c] * momentum + m[c] * (1 - momentum);
        run_var[c] = in_var[c] * momentum + v[c] * (1 - momentum);
    }
    free(m);
    free(v);
}

void ref_groupnorm(const double *x, int rank, const int64_t *shape, int64_t groups, const double *scale,
                   const double *bias, bool per_group, double eps, double *y)
{
    int64_t N = shape[0], C = shape[1], S = ref_numel(rank - 2, shape + 2), cpg = C / groups;
    for (int64_t b = 0; b < N; b++)
        for (int64_t g = 0; g < groups; g++) {
            const double *xv = x + (b * C + g * cpg) * S;
            double *yv = y + (b * C + g * cpg) * S;
            int64_t m = cpg * S;
            double mean = 0, var = 0;
            for (int64_t k = 0; k < m; k++) mean += xv[k];
            mean /= (double)m;
            for (int64_t k = 0; k < m; k++) var += (xv[k] - mean) * (xv[k] - mean);
            var /= (double)m;
            for (int64_t k = 0; k < m; k++) {
                int64_t c = g * cpg + k / S, pi = per_group ? g : c;
                yv[k] = scale[pi] * (xv[k] - mean) / sqrt(var + eps) + bias[pi];
            }
        }
}

void ref_layernorm(const double *x, int rank, const int64_t *shape, int axis, const double *scale,
                   const double *bias, double eps, bool rms, double *y, double *mean, double *inv_std)
{
    int64_t rows = ref_numel(axis, shape), m = ref_numel(rank - axis, shape + axis);
    for (int64_t r = 0; r < rows; r++) {
        const double *xv = x + r * m;
        double mu = 0, var = 0;
        if (!rms) {
            for (int64_t k = 0; k < m; k++) mu += xv[k];
            mu /= (double)m;
        }
        for (int64_t k = 0; k < m; k++) var += (xv[k] - mu) * (xv[k] - mu);
        var /= (double)m;
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t k = 0; k < m; k++) {
            int64_t i = r * m + k;
            y[i] = (xv[k] - mu) * inv * scale[i] + (bias ? bias[i] : 0.0);
        }
        if (mean) mean[r] = mu;
        if (inv_std) inv_std[r] = inv;
    }
}

void ref_lpnorm(const double *x, int rank, const int64_t *shape, int axis, int p, double *y)
{
    int64_t outer, n, inner;
    split3(rank, shape, axis, &outer, &n, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double norm = 0;
            for (int64_t i = 0; i < n; i++) {
                double v = x[(o * n + i) * inner + j];
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2) norm = sqrt(norm);
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (o * n + i) * inner + j;
                y[k] = norm == 0 ? 0.0 : x[k] / norm;
            }
        }
}

void ref_mvn(const double *x, int rank, const int64_t *shape, const bool *reduced, double *y)
{
    int64_t n = ref_numel(rank, shape), on = 1;
    for (int a = 0; a < rank; a++)
        if (!reduced[a]) on *= shape[a];
    double *mean = malloc((size_t)on * sizeof(double)), *sq = malloc((size_t)on * sizeof(double));
    ref_reduce(REF_MEAN, x, rank, shape, reduced, mean);
    double *x2 = calloc((size_t)(n ? n : 1), sizeof(double));
    for (int64_t i = 0; i < n; i++) x2[i] = x[i] * x[i];
    ref_reduce(REF_MEAN, x2, rank, shape, reduced, sq);
    for (int64_t i = 0; i < n; i++) {
        int64_t o = reduced_index(i, rank, shape, reduced);
        double var = sq[o] - mean[o] * mean[o];
        y[i] = (x[i] - mean[o]) / (sqrt(var > 0 ? var : 0) + 1e-9);
    }
    free(mean);
    free(sq);
    free(x2);
}

void ref_lrn(const double *x, int rank, const int64_t *shape, int64_t size, double alpha, double beta, double bias,
             double *y)
{
    int64_t n = ref_numel(rank, shape), C = shape[1], S = ref_numel(rank - 2, shape + 2), idx[16];
    int64_t lo = (int64_t)floor((double)(size - 1) / 2), hi = (int64_t)ceil((double)(size - 1) / 2);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, shape, idx);
        int64_t c = idx[1], c0 = c - lo > 0 ? c - lo : 0, c1 = c + hi < C - 1 ? c + hi : C - 1;
        double sq = 0;
        for (int64_t k = c0; k <= c1; k++) {
            double v = x[i + (k - c) * S];
            sq += v * v;
        }
        y[i] = x[i] / pow(bias + alpha / (double)size * sq, beta);
    }
}
