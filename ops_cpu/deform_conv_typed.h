/* The typed body of ops_cpu/deform_conv.c, included once per element type with DC_T (float or double),
 * DC_FN(name) (suffixes names with the type), DC_GEMM (mrt_sgemm / mrt_dgemm) and DC_FLOOR defined.
 * No include guard: it is meant to be included twice. */

/* One output column's sample for one (offset group, tap): four bilinear corners as indices into a
   channel plane that carries one extra zero at index h*w, where out-of-image corners point, so the
   gather needs no branch; the weights have the mask folded in. */
typedef struct DC_FN(dc_sample) {
    int32_t idx[4];
    DC_T wt[4];
} DC_FN(dc_sample);

/* Samples of image n for output columns [p0, p0 + pb): tab[(g*kh*kw + k)*pb + q]. */
static void DC_FN(dc_sample_table)(const mrt_deform_conv_params *p, const DC_T *off, const DC_T *mask,
                                   int64_t p0, int64_t pb, DC_FN(dc_sample) *tab)
{
    const int64_t kk = p->kh * p->kw, np = p->oh * p->ow;
    const int32_t zero = (int32_t)(p->h * p->w);
    const DC_T hf = (DC_T)p->h, wf = (DC_T)p->w;
    for (int64_t g = 0; g < p->offset_group; g++) {
        for (int64_t i = 0; i < p->kh; i++) {
            for (int64_t j = 0; j < p->kw; j++) {
                const int64_t k = i * p->kw + j;
                const DC_T *dy = off + (g * 2 * kk + 2 * k) * np;
                const DC_T *dx = dy + np;
                const DC_T *m = mask ? mask + (g * kk + k) * np : NULL;
                DC_FN(dc_sample) *row = tab + (g * kk + k) * pb;
                int64_t oy = p0 / p->ow, ox = p0 % p->ow;
                for (int64_t q = 0; q < pb; q++) {
                    const int64_t at = p0 + q;
                    DC_FN(dc_sample) *e = &row[q];
                    const DC_T y = (DC_T)(oy * p->stride[0] - p->pad_begin[0] + i * p->dilation[0]) + dy[at];
                    const DC_T x = (DC_T)(ox * p->stride[1] - p->pad_begin[1] + j * p->dilation[1]) + dx[at];
                    if (++ox == p->ow) {
                        ox = 0;
                        oy++;
                    }
                    const DC_T mv = m ? m[at] : (DC_T)1;
                    /* written so that NaN positions land here too */
                    if (!(y > -1 && y < hf && x > -1 && x < wf)) {
                        for (int c = 0; c < 4; c++) {
                            e->idx[c] = zero;
                            e->wt[c] = 0;
                        }
                        continue;
                    }
                    const DC_T y0f = DC_FLOOR(y), x0f = DC_FLOOR(x);
                    const int32_t y0 = (int32_t)y0f, x0 = (int32_t)x0f;
                    const DC_T ly = y - y0f, lx = x - x0f, hy = 1 - ly, hx = 1 - lx;
                    const bool top = y0 >= 0, bottom = y0 + 1 < p->h, left = x0 >= 0, right = x0 + 1 < p->w;
                    const int32_t base = y0 * (int32_t)p->w + x0;
                    e->idx[0] = top && left ? base : zero;
                    e->idx[1] = top && right ? base + 1 : zero;
                    e->idx[2] = bottom && left ? base + (int32_t)p->w : zero;
                    e->idx[3] = bottom && right ? base + (int32_t)p->w + 1 : zero;
                    e->wt[0] = hy * hx * mv;
                    e->wt[1] = hy * lx * mv;
                    e->wt[2] = ly * hx * mv;
                    e->wt[3] = ly * lx * mv;
                }
            }
        }
    }
}

/* The sampled im2col rows of weight group gw: col[(cl*kh*kw + k)*pb + q] for its c/group channels. */
static void DC_FN(dc_columns)(const mrt_deform_conv_params *p, const DC_T *x, int64_t gw,
                              const DC_FN(dc_sample) *tab, int64_t pb, DC_T *plane, DC_T *col)
{
    const int64_t kk = p->kh * p->kw, hw = p->h * p->w;
    const int64_t cg = p->c / p->group, c_per_og = p->c / p->offset_group;
    for (int64_t cl = 0; cl < cg; cl++) {
        const int64_t c = gw * cg + cl;
        const DC_FN(dc_sample) *tg = tab + (c / c_per_og) * kk * pb;
        if (hw) memcpy(plane, x + c * hw, (size_t)hw * sizeof(DC_T));
        plane[hw] = 0;
        for (int64_t k = 0; k < kk; k++) {
            const DC_FN(dc_sample) *row = tg + k * pb;
            DC_T *out = col + (cl * kk + k) * pb;
            for (int64_t q = 0; q < pb; q++) {
                const DC_FN(dc_sample) *e = &row[q];
                out[q] = e->wt[0] * plane[e->idx[0]] + e->wt[1] * plane[e->idx[1]] + e->wt[2] * plane[e->idx[2]] +
                         e->wt[3] * plane[e->idx[3]];
            }
        }
    }
}

/* Columns per block: the sample table and the im2col buffer of one block share the budget. */
static int64_t DC_FN(dc_block_cols)(const mrt_deform_conv_params *p)
{
    const int64_t kk = p->kh * p->kw, np = p->oh * p->ow, rows = p->c / p->group * kk;
    const size_t per_col = (size_t)(p->offset_group * kk) * sizeof(DC_FN(dc_sample)) + (size_t)rows * sizeof(DC_T);
    int64_t pb = (int64_t)(DC_BLOCK_BYTES / (per_col ? per_col : 1));
    if (pb < 1) pb = 1;
    if (pb > np) pb = np;
    return pb;
}

/* Workspace: [sample table][im2col block][one padded input plane], each part 64-byte aligned. */
static size_t DC_FN(dc_workspace_bytes)(const mrt_deform_conv_params *p)
{
    const int64_t kk = p->kh * p->kw, pb = DC_FN(dc_block_cols)(p), rows = p->c / p->group * kk;
    size_t a = (size_t)(p->offset_group * kk * pb) * sizeof(DC_FN(dc_sample)), b = (size_t)(rows * pb) * sizeof(DC_T),
           c = (size_t)(p->h * p->w + 1) * sizeof(DC_T);
    return ((a + 63) & ~(size_t)63) + ((b + 63) & ~(size_t)63) + c;
}

static mrt_status DC_FN(dc_run)(mrt_op_ctx *ctx, const mrt_deform_conv_params *p, const DC_T *x, const DC_T *w,
                                const DC_T *off, const DC_T *mask, const DC_T *bias, DC_T *y)
{
    const int64_t kk = p->kh * p->kw, np = p->oh * p->ow, hw = p->h * p->w;
    const int64_t cg = p->c / p->group, ocg = p->oc / p->group, rows = cg * kk;
    if (p->n == 0 || p->oc == 0 || np == 0) return MRT_STATUS_OK;
    if (rows > 0) {
        const int64_t pb = DC_FN(dc_block_cols)(p);
        char *ws = mrt_workspace(ctx, DC_FN(dc_workspace_bytes)(p)); /* requested by infer */
        if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
        size_t a = (size_t)(p->offset_group * kk * pb) * sizeof(DC_FN(dc_sample)), b = (size_t)(rows * pb) * sizeof(DC_T);
        DC_FN(dc_sample) *tab = (DC_FN(dc_sample) *)ws;
        DC_T *col = (DC_T *)(ws + ((a + 63) & ~(size_t)63));
        DC_T *plane = (DC_T *)(ws + ((a + 63) & ~(size_t)63) + ((b + 63) & ~(size_t)63));
        for (int64_t n = 0; n < p->n; n++) {
            const DC_T *xn = x + n * p->c * hw;
            const DC_T *offn = off + n * 2 * p->offset_group * kk * np;
            const DC_T *maskn = mask ? mask + n * p->offset_group * kk * np : NULL;
            DC_T *yn = y + n * p->oc * np;
            for (int64_t p0 = 0; p0 < np; p0 += pb) {
                const int64_t len = np - p0 < pb ? np - p0 : pb;
                DC_FN(dc_sample_table)(p, offn, maskn, p0, len, tab);
                for (int64_t gw = 0; gw < p->group; gw++) {
                    DC_FN(dc_columns)(p, xn, gw, tab, len, plane, col);
                    DC_GEMM(false, false, ocg, len, rows, 1, w + gw * ocg * rows, rows, col, len, 0,
                            yn + gw * ocg * np + p0, np);
                }
            }
        }
    } else {
        memset(y, 0, (size_t)(p->n * p->oc * np) * sizeof *y); /* no input channels: only the bias */
    }
    if (bias) {
        for (int64_t n = 0; n < p->n; n++)
            for (int64_t o = 0; o < p->oc; o++) {
                DC_T *yo = y + (n * p->oc + o) * np;
                for (int64_t q = 0; q < np; q++) yo[q] += bias[o];
            }
    }
    return MRT_STATUS_OK;
}
