/* The typed body of ops_cpu/deform_conv.c, included once per element type with DC_T (float or double),
 * DC_FN(name) (suffixes names with the type), DC_GEMM (OpenBLAS) or DC_OWN_GEMM 1 (minirt's float GEMM, threaded,
 * bias fused) and DC_FLOOR defined. The sampling steps are split over the session's threads.
 * No include guard: it is meant to be included twice. */

/* One output column's sample for one (offset group, tap): four bilinear corners as indices into a
   channel plane that carries one extra zero at index h*w, where out-of-image corners point, so the
   gather needs no branch; the weights have the mask folded in. */
typedef struct DC_FN(dc_sample) {
    int32_t idx[4];
    DC_T wt[4];
} DC_FN(dc_sample);

/* Samples of image n for output columns [p0, p0 + pb): tab[(g*kh*kw + k)*pb + q], for the (offset group, tap)
   rows [r0, r1) (rows are independent: the threads split them). */
MRT_VECTORIZE_CLONES
static void DC_FN(dc_sample_table)(const mrt_deform_conv_params *p, const DC_T *off, const DC_T *mask,
                                   int64_t p0, int64_t pb, int64_t r0, int64_t r1, DC_FN(dc_sample) *tab)
{
    const int64_t kk = p->kh * p->kw, np = p->oh * p->ow;
    const int32_t zero = (int32_t)(p->h * p->w);
    const DC_T hf = (DC_T)p->h, wf = (DC_T)p->w;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t g = r / kk, k = r % kk, i = k / p->kw, j = k % p->kw;
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

/* The sampled im2col rows of weight group gw: col[(cl*kh*kw + k)*pb + q] for its channels cl in [cl0, cl1)
   (channels are independent: the threads split them, each with its own padded plane). */
MRT_VECTORIZE_CLONES
static void DC_FN(dc_columns)(const mrt_deform_conv_params *p, const DC_T *x, int64_t gw,
                              const DC_FN(dc_sample) *tab, int64_t pb, int64_t cl0, int64_t cl1, DC_T *plane, DC_T *col)
{
    const int64_t kk = p->kh * p->kw, hw = p->h * p->w;
    const int64_t cg = p->c / p->group, c_per_og = p->c / p->offset_group;
    for (int64_t cl = cl0; cl < cl1; cl++) {
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

/* Workspace: [sample table][im2col block][one padded input plane per thread][float: the GEMM's scratch], each
   part 64-byte aligned. */
static size_t DC_FN(dc_gemm_floats)(const mrt_deform_conv_params *p, int threads)
{
#if DC_OWN_GEMM
    const int64_t pb = DC_FN(dc_block_cols)(p), rows = p->c / p->group * p->kh * p->kw;
    return (size_t)mrt_sgemm_workspace_floats(p->oc / p->group, pb, rows, false, false, threads);
#else
    (void)p, (void)threads;
    return 0;
#endif
}

static size_t DC_FN(dc_plane_bytes)(const mrt_deform_conv_params *p)
{
    return ((size_t)(p->h * p->w + 1) * sizeof(DC_T) + 63) & ~(size_t)63;
}

static size_t DC_FN(dc_workspace_bytes)(const mrt_deform_conv_params *p, int threads)
{
    const int64_t kk = p->kh * p->kw, pb = DC_FN(dc_block_cols)(p), rows = p->c / p->group * kk;
    size_t a = (size_t)(p->offset_group * kk * pb) * sizeof(DC_FN(dc_sample)), b = (size_t)(rows * pb) * sizeof(DC_T);
    return ((a + 63) & ~(size_t)63) + ((b + 63) & ~(size_t)63) + (size_t)(threads > 1 ? threads : 1) * DC_FN(dc_plane_bytes)(p) +
           DC_FN(dc_gemm_floats)(p, threads) * sizeof(float);
}

typedef struct DC_FN(dc_job) {
    const mrt_deform_conv_params *p;
    const DC_T *x, *off, *mask;
    int64_t p0, len, gw;
    DC_FN(dc_sample) *tab;
    DC_T *col;
    char *planes;
} DC_FN(dc_job);

static void DC_FN(dc_table_range)(void *arg, int64_t r0, int64_t r1)
{
    const DC_FN(dc_job) *j = arg;
    DC_FN(dc_sample_table)(j->p, j->off, j->mask, j->p0, j->len, r0, r1, j->tab);
}

static void DC_FN(dc_columns_range)(void *arg, int64_t c0, int64_t c1)
{
    const DC_FN(dc_job) *j = arg;
    DC_T *plane = (DC_T *)(j->planes + (size_t)mrt_thread_index() * DC_FN(dc_plane_bytes)(j->p));
    DC_FN(dc_columns)(j->p, j->x, j->gw, j->tab, j->len, c0, c1, plane, j->col);
}

static mrt_status DC_FN(dc_run)(mrt_op_ctx *ctx, const mrt_deform_conv_params *p, const DC_T *x, const DC_T *w,
                                const DC_T *off, const DC_T *mask, const DC_T *bias, DC_T *y)
{
    const int64_t kk = p->kh * p->kw, np = p->oh * p->ow, hw = p->h * p->w;
    const int64_t cg = p->c / p->group, ocg = p->oc / p->group, rows = cg * kk;
    const int threads = ctx->n_threads > 1 ? ctx->n_threads : 1;
    bool bias_done = false;
    if (p->n == 0 || p->oc == 0 || np == 0) return MRT_STATUS_OK;
    if (rows > 0) {
        const int64_t pb = DC_FN(dc_block_cols)(p);
        char *ws = mrt_workspace(ctx, DC_FN(dc_workspace_bytes)(p, threads)); /* mrt_cpu_deform_conv_workspace's */
        if (!ws) return MRT_STATUS_OUT_OF_MEMORY;
        size_t a = (size_t)(p->offset_group * kk * pb) * sizeof(DC_FN(dc_sample)), b = (size_t)(rows * pb) * sizeof(DC_T);
        size_t at_planes = ((a + 63) & ~(size_t)63) + ((b + 63) & ~(size_t)63);
        DC_FN(dc_job) job = {.p = p, .tab = (DC_FN(dc_sample) *)ws, .col = (DC_T *)(ws + ((a + 63) & ~(size_t)63)),
                             .planes = ws + at_planes};
#if DC_OWN_GEMM
        float *gemm_ws = (float *)(ws + at_planes + (size_t)threads * DC_FN(dc_plane_bytes)(p));
        bias_done = true;
#endif
        for (int64_t n = 0; n < p->n; n++) {
            job.x = x + n * p->c * hw;
            job.off = off + n * 2 * p->offset_group * kk * np;
            job.mask = mask ? mask + n * p->offset_group * kk * np : NULL;
            DC_T *yn = y + n * p->oc * np;
            for (int64_t p0 = 0; p0 < np; p0 += pb) {
                job.p0 = p0;
                job.len = np - p0 < pb ? np - p0 : pb;
                mrt_parallel_for(ctx, p->offset_group * kk, 1, DC_FN(dc_table_range), &job);
                for (int64_t gw = 0; gw < p->group; gw++) {
                    job.gw = gw;
                    mrt_parallel_for(ctx, cg, 1, DC_FN(dc_columns_range), &job);
#if DC_OWN_GEMM
                    mrt_sgemm_b bs = {.b = job.col, .rs = job.len, .cs = 1};
                    mrt_sgemm_out out = {.c = yn + gw * ocg * np + p0, .ldc = np, .bias = bias ? bias + gw * ocg : NULL};
                    mrt_sgemm_run(ctx, ocg, job.len, rows, NULL, w + gw * ocg * rows, rows, 1, &bs, &out, gemm_ws);
#else
                    DC_GEMM(false, false, ocg, job.len, rows, 1, w + gw * ocg * rows, rows, job.col, job.len, 0,
                            yn + gw * ocg * np + p0, np);
#endif
                }
            }
        }
    } else {
        memset(y, 0, (size_t)(p->n * p->oc * np) * sizeof *y); /* no input channels: only the bias */
    }
    if (bias && !bias_done) {
        for (int64_t n = 0; n < p->n; n++)
            for (int64_t o = 0; o < p->oc; o++) {
                DC_T *yo = y + (n * p->oc + o) * np;
                for (int64_t q = 0; q < np; q++) yo[q] += bias[o];
            }
    }
    return MRT_STATUS_OK;
}
