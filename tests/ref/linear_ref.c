/* Naive references for Conv/ConvTranspose/Gemm/MatMul/pools (see linear_ref.h). Deliberately simple:
 * every element decomposes its flat index with div/mod and visits every kernel tap. */
#include "linear_ref.h"

#include <math.h>
#include <string.h>

static int64_t product(int n, const int64_t *v)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* Row-major coordinates of flat index f in a shape of n dims. */
static void unflatten(int64_t f, int n, const int64_t *shape, int64_t *coord)
{
    for (int i = n - 1; i >= 0; i--) {
        coord[i] = shape[i] ? f % shape[i] : 0;
        f = shape[i] ? f / shape[i] : 0;
    }
}

static int64_t flatten(int n, const int64_t *shape, const int64_t *coord)
{
    int64_t f = 0;
    for (int i = 0; i < n; i++) f = f * shape[i] + coord[i];
    return f;
}

bool lr_geom_resolve(lr_geom *g)
{
    const char *ap = g->auto_pad ? g->auto_pad : "NOTSET";
    int n = g->nsp;
    for (int i = 0; i < n; i++) {
        double in = (double)g->in[i], s = (double)g->stride[i];
        int64_t window = g->dilation[i] * (g->kernel[i] - 1) + 1;
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            g->out[i] = (int64_t)ceil(in / s);
            int64_t total = (g->out[i] - 1) * g->stride[i] + window - g->in[i];
            if (total < 0) total = 0;
            int64_t small = total / 2, big = total - small;
            g->pads[i] = strcmp(ap, "SAME_UPPER") == 0 ? small : big;
            g->pads[n + i] = total - g->pads[i];
        } else if (strcmp(ap, "VALID") == 0) {
            g->pads[i] = g->pads[n + i] = 0;
            g->out[i] = (int64_t)ceil((in - (double)window + 1) / s);
        } else {
            double v = (in + (double)g->pads[i] + (double)g->pads[n + i] - (double)window) / s + 1;
            if (g->ceil_mode) {
                g->out[i] = (int64_t)ceil(v);
                if ((g->out[i] - 1) * g->stride[i] >= g->in[i] + g->pads[i]) g->out[i]--;
            } else {
                g->out[i] = (int64_t)floor(v);
            }
        }
        if (g->out[i] < 1) return false;
    }
    return true;
}

bool lr_geom_resolve_transposed(lr_geom *g, const int64_t *output_padding, const int64_t *output_shape)
{
    const char *ap = g->auto_pad ? g->auto_pad : "NOTSET";
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    int n = g->nsp;
    for (int i = 0; i < n; i++) {
        int64_t op = output_padding ? output_padding[i] : 0;
        int64_t window = g->dilation[i] * (g->kernel[i] - 1) + 1;
        int64_t natural = g->stride[i] * (g->in[i] - 1) + op + window;
        if (output_shape || same) {
            g->out[i] = output_shape ? output_shape[i] : g->in[i] * g->stride[i];
            int64_t total = natural - g->out[i];
            if (total < 0) total = 0; /* the extra outputs go at the end */
            if (strcmp(ap, "SAME_UPPER") == 0) {
                g->pads[i] = total / 2;
                g->pads[n + i] = total - total / 2;
            } else {
                g->pads[n + i] = total / 2;
                g->pads[i] = total - total / 2;
            }
        } else {
            if (strcmp(ap, "VALID") == 0) g->pads[i] = g->pads[n + i] = 0;
            g->out[i] = natural - g->pads[i] - g->pads[n + i];
        }
        if (g->out[i] < 1) return false;
    }
    return true;
}

void lr_conv(const lr_geom *g, int64_t n, int64_t c, int64_t m, int64_t group, const double *x, const double *w,
             const double *b, double *y)
{
    int ns = g->nsp;
    int64_t in_n = product(ns, g->in), out_n = product(ns, g->out), kn = product(ns, g->kernel);
    int64_t cg = c / group, mg = m / group;
    int64_t oc[LR_MAX_SP], kc[LR_MAX_SP], pos[LR_MAX_SP];
    for (int64_t b_ = 0; b_ < n; b_++)
        for (int64_t mo = 0; mo < m; mo++) {
            int64_t grp = mo / mg;
            for (int64_t o = 0; o < out_n; o++) {
                unflatten(o, ns, g->out, oc);
                double acc = b ? b[mo] : 0.0;
                for (int64_t ci = 0; ci < cg; ci++)
                    for (int64_t k = 0; k < kn; k++) {
                        unflatten(k, ns, g->kernel, kc);
                        bool inside = true;
                        for (int i = 0; i < ns; i++) {
                            pos[i] = oc[i] * g->stride[i] - g->pads[i] + kc[i] * g->dilation[i];
                            if (pos[i] < 0 || pos[i] >= g->in[i]) inside = false;
                        }
                        if (!inside) continue;
                        double xv = x[(b_ * c + grp * cg + ci) * in_n + flatten(ns, g->in, pos)];
                        double wv = w[(mo * cg + ci) * kn + k];
                        acc += xv * wv;
                    }
                y[(b_ * m + mo) * out_n + o] = acc;
            }
        }
}

void lr_convtranspose(const lr_geom *g, int64_t n, int64_t c, int64_t m, int64_t group, const double *x,
                      const double *w, const double *b, double *y)
{
    int ns = g->nsp;
    int64_t in_n = product(ns, g->in), out_n = product(ns, g->out), kn = product(ns, g->kernel);
    int64_t cg = c / group, mg = m / group;
    int64_t xc[LR_MAX_SP], kc[LR_MAX_SP], pos[LR_MAX_SP];
    for (int64_t b_ = 0; b_ < n; b_++)
        for (int64_t mo = 0; mo < m; mo++)
            for (int64_t o = 0; o < out_n; o++) y[(b_ * m + mo) * out_n + o] = b ? b[mo] : 0.0;
    for (int64_t b_ = 0; b_ < n; b_++)
        for (int64_t ci = 0; ci < c; ci++) {
            int64_t grp = ci / cg;
            for (int64_t xi = 0; xi < in_n; xi++) {
                unflatten(xi, ns, g->in, xc);
                double xv = x[(b_ * c + ci) * in_n + xi];
                for (int64_t mm = 0; mm < mg; mm++)
                    for (int64_t k = 0; k < kn; k++) {
                        unflatten(k, ns, g->kernel, kc);
                        bool inside = true;
                        for (int i = 0; i < ns; i++) {
                            pos[i] = xc[i] * g->stride[i] - g->pads[i] + kc[i] * g->dilation[i];
                            if (pos[i] < 0 || pos[i] >= g->out[i]) inside = false;
                        }
                        if (!inside) continue;
                        int64_t mo = grp * mg + mm;
                        y[(b_ * m + mo) * out_n + flatten(ns, g->out, pos)] += xv * w[(ci * mg + mm) * kn + k];
                    }
            }
        }
}

void lr_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, const double *a,
             const double *b, const double *c, int c_rank, const int64_t *c_shape, double *y)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                double av = ta ? a[p * m + i] : a[i * k + p];
                double bv = tb ? b[j * k + p] : b[p * n + j];
                s += av * bv;
            }
            double cv = 0;
            if (c) {
                /* right-aligned broadcast of C's (up to 2) dims onto [m, n] */
                int64_t rows = c_rank == 2 ? c_shape[0] : 1, cols = c_rank >= 1 ? c_shape[c_rank - 1] : 1;
                int64_t ci = rows == 1 ? 0 : i, cj = cols == 1 ? 0 : j;
                cv = c[ci * cols + cj];
            }
            y[i * n + j] = alpha * s + beta * cv;
        }
}

bool lr_matmul_shape(int ra, const int64_t *as, int rb, const int64_t *bs, int *y_rank, int64_t *y_shape)
{
    int64_t k_a = as[ra - 1], k_b = rb == 1 ? bs[0] : bs[rb - 2];
    if (k_a != k_b) return false;
    int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nr = na > nb ? na : nb;
    int r = 0;
    for (int i = 0; i < nr; i++) {
        int64_t da = i - (nr - na) >= 0 ? as[i - (nr - na)] : 1;
        int64_t db = i - (nr - nb) >= 0 ? bs[i - (nr - nb)] : 1;
        if (da != db && da != 1 && db != 1) return false;
        y_shape[r++] = da == 1 ? db : da;
    }
    if (ra >= 2) y_shape[r++] = as[ra - 2];
    if (rb >= 2) y_shape[r++] = bs[rb - 1];
    *y_rank = r;
    return true;
}

void lr_matmul(int ra, const int64_t *as, const double *a, int rb, const int64_t *bs, const double *b, double *y,
               const double *za, int64_t za_n, const double *zb, int64_t zb_n)
{
    int64_t M = ra >= 2 ? as[ra - 2] : 1, K = as[ra - 1], N = rb >= 2 ? bs[rb - 1] : 1;
    int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nr = na > nb ? na : nb;
    int64_t batch[16], bc[16];
    for (int i = 0; i < nr; i++) {
        int64_t da = i - (nr - na) >= 0 ? as[i - (nr - na)] : 1;
        int64_t db = i - (nr - nb) >= 0 ? bs[i - (nr - nb)] : 1;
        batch[i] = da == 1 ? db : da;
    }
    int64_t total = product(nr, batch);
    for (int64_t t = 0; t < total; t++) {
        unflatten(t, nr, batch, bc);
        /* each operand's own batch position: broadcast dims read index 0 */
        int64_t fa = 0, fb = 0;
        for (int i = 0; i < na; i++) {
            int64_t d = as[i];
            fa = fa * d + (d == 1 ? 0 : bc[i + (nr - na)]);
        }
        for (int i = 0; i < nb; i++) {
            int64_t d = bs[i];
            fb = fb * d + (d == 1 ? 0 : bc[i + (nr - nb)]);
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double zav = !za ? 0 : za_n == 1 ? za[0] : za_n == M ? za[i] : za[fa * M + i];
                double zbv = !zb ? 0 : zb_n == 1 ? zb[0] : zb_n == N ? zb[j] : zb[fb * N + j];
                double s = 0;
                for (int64_t p = 0; p < K; p++)
                    s += (a[(fa * M + i) * K + p] - zav) * (b[(fb * K + p) * N + j] - zbv);
                y[(t * M + i) * N + j] = s;
            }
    }
}

void lr_pool(const lr_geom *g, int64_t n, int64_t c, int kind, bool count_include_pad, double p, const double *x,
             double *y, int64_t *indices, bool col_major)
{
    int ns = g->nsp;
    int64_t in_n = product(ns, g->in), out_n = product(ns, g->out), kn = product(ns, g->kernel);
    int64_t oc[LR_MAX_SP], kc[LR_MAX_SP], pos[LR_MAX_SP];
    for (int64_t plane = 0; plane < n * c; plane++)
        for (int64_t o = 0; o < out_n; o++) {
            unflatten(o, ns, g->out, oc);
            double acc = 0, best = 0;
            int64_t n_valid = 0, n_padded = 0, best_at = -1;
            for (int64_t k = 0; k < kn; k++) {
                unflatten(k, ns, g->kernel, kc);
                bool valid = true, padded = true;
                for (int i = 0; i < ns; i++) {
                    pos[i] = oc[i] * g->stride[i] - g->pads[i] + kc[i] * g->dilation[i];
                    if (pos[i] < 0 || pos[i] >= g->in[i]) valid = false;
                    if (pos[i] >= g->in[i] + g->pads[ns + i]) padded = false;
                }
                if (padded) n_padded++;
                if (!valid) continue;
                n_valid++;
                int64_t flat = flatten(ns, g->in, pos);
                double v = x[plane * in_n + flat];
                if (kind == 0) {
                    if (best_at < 0 || v > best) {
                        best = v;
                        if (col_major) {
                            int64_t cm = 0, mul = 1;
                            for (int i = 0; i < ns; i++) {
                                cm += pos[i] * mul;
                                mul *= g->in[i];
                            }
                            best_at = cm;
                        } else {
                            best_at = flat;
                        }
                    }
                } else if (kind == 1) {
                    acc += v;
                } else {
                    acc += pow(fabs(v), p);
                }
            }
            double r;
            if (kind == 0) r = best;
            else if (kind == 1) r = acc / (double)(count_include_pad ? n_padded : n_valid);
            else r = pow(acc, 1.0 / p);
            y[plane * out_n + o] = r;
            if (indices) indices[plane * out_n + o] = plane * in_n + (best_at < 0 ? 0 : best_at);
        }
}

void lr_maxroipool(int64_t n, int64_t c, int64_t h, int64_t w, const double *x, int64_t n_rois, const double *rois,
                   int64_t ph, int64_t pw, double scale, double *y)
{
    (void)n;
    for (int64_t r = 0; r < n_rois; r++) {
        const double *roi = rois + 5 * r;
        int64_t bi = (int64_t)roi[0];
        int64_t sx = (int64_t)round(roi[1] * scale), sy = (int64_t)round(roi[2] * scale);
        int64_t ex = (int64_t)round(roi[3] * scale), ey = (int64_t)round(roi[4] * scale);
        int64_t rh = ey - sy + 1 > 1 ? ey - sy + 1 : 1, rw = ex - sx + 1 > 1 ? ex - sx + 1 : 1;
        double bin_h = (double)rh / (double)ph, bin_w = (double)rw / (double)pw;
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t i = 0; i < ph; i++)
                for (int64_t j = 0; j < pw; j++) {
                    int64_t h0 = (int64_t)floor(i * bin_h) + sy, h1 = (int64_t)ceil((i + 1) * bin_h) + sy;
                    int64_t w0 = (int64_t)floor(j * bin_w) + sx, w1 = (int64_t)ceil((j + 1) * bin_w) + sx;
                    h0 = h0 < 0 ? 0 : h0 > h ? h : h0;
                    h1 = h1 < 0 ? 0 : h1 > h ? h : h1;
                    w0 = w0 < 0 ? 0 : w0 > w ? w : w0;
                    w1 = w1 < 0 ? 0 : w1 > w ? w : w1;
                    double best = 0;
                    bool any = false;
                    for (int64_t yy = h0; yy < h1; yy++)
                        for (int64_t xx = w0; xx < w1; xx++) {
                            double v = x[((bi * c + ch) * h + yy) * w + xx];
                            if (!any || v > best) best = v;
                            any = true;
                        }
                    y[((r * c + ch) * ph + i) * pw + j] = best;
                }
    }
}
