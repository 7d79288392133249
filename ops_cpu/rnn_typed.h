/* The typed body of ops_cpu/rnn.c, included once per element type with RT_T (float or double), RT_FN(name)
 * (suffixes names with the type) and RT_GEMM (mrt_lin_sgemm / mrt_lin_dgemm) defined. States are kept in
 * RT_T like the outputs; each gate's arithmetic and activation is done in double.
 * No include guard: it is meant to be included twice. */

/* One direction of RNN/GRU/LSTM. ws holds the scratch buffers (sized by rnn_ws_alloc in rnn.c). */
static void RT_FN(rnn_direction)(const mrt_rnn_desc *d, const rnn_io *io, int dir, rnn_ws *ws)
{
    const int64_t H = d->hidden, G = d->gates, GH = G * H, B = d->batch, S = d->seq, IN = d->input;
    const bool backwards = dir == 1 || d->reverse;
    const mrt_rnn_act *act = d->acts[dir];
    const RT_T *W = (const RT_T *)io->w + dir * GH * IN, *R = (const RT_T *)io->r + dir * GH * H;
    const RT_T *P = io->p ? (const RT_T *)io->p + dir * 3 * H : NULL;
    RT_T *xw = ws->xw, *hr = ws->hr, *h = ws->h, *c = ws->c, *rh = ws->rh;
    double *bias = ws->bias, *rbh = ws->rbh;

    /* The input projection of every time step in one GEMM; rows follow X's own (layout) order. */
    RT_GEMM(false, true, S * B, GH, IN, (RT_T)1, (const RT_T *)io->x, IN, W, IN, (RT_T)0, xw, GH);

    /* Wb + Rb folded into one bias, except GRU's Rbh under linear_before_reset, which r multiplies. */
    const RT_T *Wb = io->b ? (const RT_T *)io->b + dir * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
    for (int64_t k = 0; k < GH; k++) bias[k] = Wb ? (double)Wb[k] + (double)Rb[k] : 0.0;
    if (d->linear_before_reset)
        for (int64_t j = 0; j < H; j++) {
            bias[2 * H + j] = Wb ? (double)Wb[2 * H + j] : 0.0;
            rbh[j] = Rb ? (double)Rb[2 * H + j] : 0.0;
        }

    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            int64_t at = state_off(d, dir, b) + j;
            h[b * H + j] = io->h0 ? ((const RT_T *)io->h0)[at] : (RT_T)0;
            if (c) c[b * H + j] = io->c0 ? ((const RT_T *)io->c0)[at] : (RT_T)0;
        }

    const bool gru_split = d->cell == MRT_RNN_CELL_GRU && !d->linear_before_reset;
    for (int64_t s = 0; s < S; s++) {
        /* The recurrent projection H(t-1) * R^T; plain GRU leaves its h gate for (r (.) H(t-1)) * Rh^T. */
        RT_GEMM(false, true, B, gru_split ? 2 * H : GH, H, (RT_T)1, h, H, R, H, (RT_T)0, hr, GH);
        if (gru_split) {
            for (int64_t b = 0; b < B; b++) {
                bool active = s < io->lens[b];
                int64_t t = backwards ? io->lens[b] - 1 - s : s;
                const RT_T *xr = xw + x_row(d, t, b) * GH;
                RT_T *g = hr + b * GH;
                for (int64_t j = 0; j < H; j++) {
                    if (!active) {
                        rh[b * H + j] = 0;
                        continue;
                    }
                    double z = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[j] + (double)g[j] + bias[j]));
                    double r = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + bias[H + j]));
                    g[j] = (RT_T)z;
                    g[H + j] = (RT_T)r;
                    rh[b * H + j] = (RT_T)(r * (double)h[b * H + j]);
                }
            }
            RT_GEMM(false, true, B, H, H, (RT_T)1, rh, H, R + 2 * H * H, H, (RT_T)0, hr + 2 * H, GH);
        }
        for (int64_t b = 0; b < B; b++) {
            if (s >= io->lens[b]) continue;
            int64_t t = backwards ? io->lens[b] - 1 - s : s;
            const RT_T *xr = xw + x_row(d, t, b) * GH;
            const RT_T *g = hr + b * GH;
            RT_T *hb = h + b * H;
            RT_T *y = io->y ? (RT_T *)io->y + y_off(d, t, dir, b) : NULL;
            for (int64_t j = 0; j < H; j++) {
                double hn;
                if (d->cell == MRT_RNN_CELL_RNN) {
                    hn = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[j] + (double)g[j] + bias[j]));
                } else if (d->cell == MRT_RNN_CELL_GRU) {
                    double z, r, pre;
                    if (gru_split) {
                        z = (double)g[j];
                        r = (double)g[H + j];
                        pre = (double)xr[2 * H + j] + (double)g[2 * H + j] + bias[2 * H + j];
                    } else {
                        z = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[j] + (double)g[j] + bias[j]));
                        r = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + bias[H + j]));
                        pre = (double)xr[2 * H + j] + bias[2 * H + j] + r * ((double)g[2 * H + j] + rbh[j]);
                    }
                    double hh = mrt_rnn_act_apply(&act[1], clipv(d, pre));
                    hn = (1 - z) * hh + z * (double)hb[j];
                } else {
                    /* gate order i, o, f, c; peepholes i, o, f */
                    double cp = (double)c[b * H + j];
                    double pi = P ? (double)P[j] : 0, po = P ? (double)P[H + j] : 0, pf = P ? (double)P[2 * H + j] : 0;
                    double ig = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[j] + (double)g[j] + bias[j] + pi * cp));
                    double fg = d->input_forget
                                    ? 1 - ig
                                    : mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[2 * H + j] + (double)g[2 * H + j] +
                                                                              bias[2 * H + j] + pf * cp));
                    double cg = mrt_rnn_act_apply(&act[1], clipv(d, (double)xr[3 * H + j] + (double)g[3 * H + j] +
                                                                        bias[3 * H + j]));
                    double cn = fg * cp + ig * cg;
                    double og = mrt_rnn_act_apply(&act[0], clipv(d, (double)xr[H + j] + (double)g[H + j] + bias[H + j] +
                                                                        po * cn));
                    hn = og * mrt_rnn_act_apply(&act[2], cn);
                    c[b * H + j] = (RT_T)cn;
                }
                hb[j] = (RT_T)hn;
                if (y) y[j] = hb[j];
            }
        }
    }

    /* Final states; a sequence of length 0 reports zeros. */
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            int64_t at = state_off(d, dir, b) + j;
            bool any = io->lens[b] > 0;
            if (io->yh) ((RT_T *)io->yh)[at] = any ? h[b * H + j] : (RT_T)0;
            if (io->yc) ((RT_T *)io->yc)[at] = any ? c[b * H + j] : (RT_T)0;
        }
}
