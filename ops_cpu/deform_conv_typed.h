/* The typed body of ops_cpu/deform_conv.c, included once per element type with DC_T (float or double),
 * DC_FN(name) (suffixes names with the type), DC_GEMM (OpenBLAS) or DC_OWN_GEMM 1 (minirt's float GEMM, threaded,
 * bias fused) and DC_FLOOR defined. The sampling steps are split over the session's threads.
 * No include guard: it is meant to be included twice. */

/* One output column's sample for one (offset group, tap): four bilinear corners as indices into a
   channel plane that carries one extra zero at index h*w, where out-of-image corners point, so the
   gather needs no branch; the weights have the mask folded in. The table keeps them apart, row by row (a row is
   one (offset group, tap) over pb columns: corner c's indices, then its weights, each pb long), so that 16
   neighbouring columns' indices and weights are a vector each (dc_table_row_avx512, dc_rows_avx512). */
typedef struct DC_FN(dc_sample) {
    int32_t idx[4];
    DC_T wt[4];
} DC_FN(dc_sample); /* its size: one column's share of a row */

typedef struct DC_FN(dc_row) {
    int32_t *idx[4];
    DC_T *wt[4];
} DC_FN(dc_row);

/* Row r (offset group r / kk, tap r % kk) of a table of pb columns */
static inline DC_FN(dc_row) DC_FN(dc_table_row)(DC_FN(dc_sample) *tab, int64_t r, int64_t pb)
{
    char *at = (char *)(tab + r * pb);
    DC_FN(dc_row) row;
    for (int c = 0; c < 4; c++) {
        row.idx[c] = (int32_t *)at + c * pb;
        row.wt[c] = (DC_T *)(at + 4 * pb * sizeof(int32_t)) + c * pb;
    }
    return row;
}

#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
/* One row of dc_sample_table (tap (i, j), offsets dy, dx, mask m or NULL), 16 columns a step: the same operations
   per column (floor by roundscale, the int conversion of an integral value, the same products in the same order),
   so the same indices and weights. The scalar loop was a quarter of the DCNv2 CNN's time once the columns were
   vectors. */
__attribute__((target("avx512f"))) static void dc_table_row_avx512(const mrt_deform_conv_params *p, const float *dy,
                                                                const float *dx, const float *m, int64_t i, int64_t j,
                                                                int64_t p0, int64_t pb, DC_FN(dc_row) *row)
{
    const __m512i zero = _mm512_set1_epi32((int32_t)(p->h * p->w)), wi = _mm512_set1_epi32((int32_t)p->w);
    const __m512i hm1 = _mm512_set1_epi32((int32_t)p->h - 1), wm1 = _mm512_set1_epi32((int32_t)p->w - 1);
    const __m512 hf = _mm512_set1_ps((float)p->h), wf = _mm512_set1_ps((float)p->w), m1 = _mm512_set1_ps(-1.0f);
    const __m512 one = _mm512_set1_ps(1.0f);
    int64_t oy = p0 / p->ow, ox = p0 % p->ow;
    _Alignas(64) int32_t yb[16], xb[16];
    for (int64_t q0 = 0; q0 < pb; q0 += 16) {
        __mmask16 lanes = mrt_mask16_first(pb - q0);
        for (int l = 0; l < 16; l++) { /* the tap's unshifted position, as dc_sample_table's scalar loop */
            yb[l] = (int32_t)(oy * p->stride[0] - p->pad_begin[0] + i * p->dilation[0]);
            xb[l] = (int32_t)(ox * p->stride[1] - p->pad_begin[1] + j * p->dilation[1]);
            if (++ox == p->ow) {
                ox = 0;
                oy++;
            }
        }
        const int64_t at = p0 + q0;
        __m512 y = _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_load_si512(yb)), _mm512_maskz_loadu_ps(lanes, dy + at));
        __m512 x = _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_load_si512(xb)), _mm512_maskz_loadu_ps(lanes, dx + at));
        __m512 mv = m ? _mm512_maskz_loadu_ps(lanes, m + at) : one;
        __mmask16 in = _mm512_cmp_ps_mask(y, m1, _CMP_GT_OQ) & _mm512_cmp_ps_mask(y, hf, _CMP_LT_OQ) &
                       _mm512_cmp_ps_mask(x, m1, _CMP_GT_OQ) & _mm512_cmp_ps_mask(x, wf, _CMP_LT_OQ);
        __m512 y0f = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 x0f = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512i y0 = _mm512_maskz_cvttps_epi32(in, y0f), x0 = _mm512_maskz_cvttps_epi32(in, x0f);
        __m512 ly = _mm512_sub_ps(y, y0f), lx = _mm512_sub_ps(x, x0f);
        __m512 hy = _mm512_sub_ps(one, ly), hx = _mm512_sub_ps(one, lx);
        __mmask16 top = in & _mm512_cmpge_epi32_mask(y0, _mm512_setzero_si512()),
                  bottom = in & _mm512_cmplt_epi32_mask(y0, hm1), left = _mm512_cmpge_epi32_mask(x0, _mm512_setzero_si512()),
                  right = _mm512_cmplt_epi32_mask(x0, wm1);
        __m512i base = _mm512_add_epi32(_mm512_mullo_epi32(y0, wi), x0), one_i = _mm512_set1_epi32(1);
        _mm512_mask_storeu_epi32(row->idx[0] + q0, lanes, _mm512_mask_mov_epi32(zero, top & left, base));
        _mm512_mask_storeu_epi32(row->idx[1] + q0, lanes,
                                 _mm512_mask_mov_epi32(zero, top & right, _mm512_add_epi32(base, one_i)));
        _mm512_mask_storeu_epi32(row->idx[2] + q0, lanes,
                                 _mm512_mask_mov_epi32(zero, bottom & left, _mm512_add_epi32(base, wi)));
        _mm512_mask_storeu_epi32(row->idx[3] + q0, lanes,
                                 _mm512_mask_mov_epi32(zero, bottom & right,
                                                       _mm512_add_epi32(base, _mm512_add_epi32(wi, one_i))));
        _mm512_mask_storeu_ps(row->wt[0] + q0, lanes, _mm512_maskz_mul_ps(in, _mm512_mul_ps(hy, hx), mv));
        _mm512_mask_storeu_ps(row->wt[1] + q0, lanes, _mm512_maskz_mul_ps(in, _mm512_mul_ps(hy, lx), mv));
        _mm512_mask_storeu_ps(row->wt[2] + q0, lanes, _mm512_maskz_mul_ps(in, _mm512_mul_ps(ly, hx), mv));
        _mm512_mask_storeu_ps(row->wt[3] + q0, lanes, _mm512_maskz_mul_ps(in, _mm512_mul_ps(ly, lx), mv));
    }
}
#endif

/* Samples of image n for output columns [p0, p0 + pb): row g*kh*kw + k of tab, for the (offset group, tap)
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
        DC_FN(dc_row) row = DC_FN(dc_table_row)(tab, g * kk + k, pb);
#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
        if (mrt_cpu_has_avx512f()) {
            dc_table_row_avx512(p, dy, dx, m, i, j, p0, pb, &row);
            continue;
        }
#endif
        int64_t oy = p0 / p->ow, ox = p0 % p->ow;
        for (int64_t q = 0; q < pb; q++) {
            const int64_t at = p0 + q;
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
                    row.idx[c][q] = zero;
                    row.wt[c][q] = 0;
                }
                continue;
            }
            const DC_T y0f = DC_FLOOR(y), x0f = DC_FLOOR(x);
            const int32_t y0 = (int32_t)y0f, x0 = (int32_t)x0f;
            const DC_T ly = y - y0f, lx = x - x0f, hy = 1 - ly, hx = 1 - lx;
            const bool top = y0 >= 0, bottom = y0 + 1 < p->h, left = x0 >= 0, right = x0 + 1 < p->w;
            const int32_t base = y0 * (int32_t)p->w + x0;
            row.idx[0][q] = top && left ? base : zero;
            row.idx[1][q] = top && right ? base + 1 : zero;
            row.idx[2][q] = bottom && left ? base + (int32_t)p->w : zero;
            row.idx[3][q] = bottom && right ? base + (int32_t)p->w + 1 : zero;
            row.wt[0][q] = hy * hx * mv;
            row.wt[1][q] = hy * lx * mv;
            row.wt[2][q] = ly * hx * mv;
            row.wt[3][q] = ly * lx * mv;
        }
    }
}

#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
/* Sampling channel by channel took four scalar loads per corner (index, weight, value) for each output, and gathers
   were no faster. Here 16 channels (of one offset group) go at once: their planes transposed into rows of 16 lanes
   (pt[i * 16 + l] = channel l's element i), a column's sample for all of them is four aligned row loads times the
   broadcast weights, and 16 columns' vectors transposed give the channels' im2col rows. */

/* Elements [16 b0, 16 b1) (within hw) of the L (<= 16) planes of hw floats from x as rows of 16 lanes into pt
   (64-byte aligned), lanes past L zero. Row hw, where out-of-image corners point, is the caller's (zero). */
__attribute__((target("avx512f"))) static void dc_planes_t(const float *x, int64_t hw, int L, int64_t b0, int64_t b1,
                                                        float *pt)
{
    for (int64_t i0 = 16 * b0; i0 < hw && i0 < 16 * b1; i0 += 16) {
        __mmask16 m = mrt_mask16_first(hw - i0);
        __m512 r[16];
        for (int l = 0; l < 16; l++) r[l] = l < L ? _mm512_maskz_loadu_ps(m, x + l * hw + i0) : _mm512_setzero_ps();
        mrt_transpose16(r);
        for (int i = 0; i < 16 && i0 + i < hw; i++) _mm512_store_ps(pt + (i0 + i) * 16, r[mrt_transpose16_perm[i]]);
    }
}

/* The im2col rows of L channels for one table row: out + l * out_stride gets channel l's pb samples. Each sample
   the same products and sums in the same order as dc_columns' loop (no fma): the same bits. */
__attribute__((target("avx512f"))) static void dc_rows_avx512(const DC_FN(dc_row) *row, const float *pt, int64_t pb,
                                                           int L, float *out, int64_t out_stride)
{
    for (int64_t q0 = 0; q0 < pb; q0 += 16) {
        int n = pb - q0 < 16 ? (int)(pb - q0) : 16;
        __m512 v[16];
        for (int i = 0; i < 16; i++) {
            if (i >= n) {
                v[i] = _mm512_setzero_ps();
                continue;
            }
            int64_t q = q0 + i;
            __m512 r = _mm512_mul_ps(_mm512_set1_ps(row->wt[0][q]), _mm512_load_ps(pt + (int64_t)row->idx[0][q] * 16));
            for (int c = 1; c < 4; c++)
                r = _mm512_add_ps(r, _mm512_mul_ps(_mm512_set1_ps(row->wt[c][q]),
                                                   _mm512_load_ps(pt + (int64_t)row->idx[c][q] * 16)));
            v[i] = r;
        }
        mrt_transpose16(v);
        __mmask16 m = mrt_mask16_first(n);
        for (int l = 0; l < L; l++) _mm512_mask_storeu_ps(out + l * out_stride + q0, m, v[mrt_transpose16_perm[l]]);
    }
}

/* The lanes path's chunk of weight group gw that starts at its channel cl: up to 16 channels, within one offset
   group. Returns its channel count. */
static int64_t dc_chunk_len(const mrt_deform_conv_params *p, int64_t gw, int64_t cl)
{
    const int64_t cg = p->c / p->group, c_per_og = p->c / p->offset_group;
    const int64_t c = gw * cg + cl, og_end = (c / c_per_og + 1) * c_per_og - c;
    int64_t L = cg - cl < 16 ? cg - cl : 16;
    return og_end < L ? og_end : L;
}

static size_t dc_lanes_plane_bytes(const mrt_deform_conv_params *p)
{
    return ((size_t)(p->h * p->w + 1) * 16 * sizeof(float) + 63) & ~(size_t)63;
}

/* Float on AVX-512 with at least 8 channels an offset group (fewer would leave most lanes empty), and a chunk's
   transposed planes within 32 MiB (an image of up to 512 K elements) */
static bool dc_lanes_path(const mrt_deform_conv_params *p)
{
    return mrt_cpu_has_avx512f() && p->c / p->offset_group >= 8 && dc_lanes_plane_bytes(p) <= ((size_t)32 << 20);
}
#endif

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
        if (hw) memcpy(plane, x + c * hw, (size_t)hw * sizeof(DC_T));
        plane[hw] = 0;
        for (int64_t k = 0; k < kk; k++) {
            const DC_FN(dc_row) row = DC_FN(dc_table_row)((DC_FN(dc_sample) *)tab, (c / c_per_og) * kk + k, pb);
            DC_T *out = col + (cl * kk + k) * pb;
            for (int64_t q = 0; q < pb; q++)
                out[q] = row.wt[0][q] * plane[row.idx[0][q]] + row.wt[1][q] * plane[row.idx[1][q]] +
                         row.wt[2][q] * plane[row.idx[2][q]] + row.wt[3][q] * plane[row.idx[3][q]];
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

/* a thread's padded plane */
static size_t DC_FN(dc_plane_bytes)(const mrt_deform_conv_params *p)
{
    return ((size_t)(p->h * p->w + 1) * sizeof(DC_T) + 63) & ~(size_t)63;
}

/* the planes part of the workspace: a padded plane per thread, or on the lanes path one chunk's transposed planes */
static size_t DC_FN(dc_planes_bytes)(const mrt_deform_conv_params *p, int threads)
{
#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
    if (dc_lanes_path(p)) return dc_lanes_plane_bytes(p);
#endif
    return (size_t)(threads > 1 ? threads : 1) * DC_FN(dc_plane_bytes)(p);
}

static size_t DC_FN(dc_workspace_bytes)(const mrt_deform_conv_params *p, int threads)
{
    const int64_t kk = p->kh * p->kw, pb = DC_FN(dc_block_cols)(p), rows = p->c / p->group * kk;
    size_t a = (size_t)(p->offset_group * kk * pb) * sizeof(DC_FN(dc_sample)), b = (size_t)(rows * pb) * sizeof(DC_T);
    return ((a + 63) & ~(size_t)63) + ((b + 63) & ~(size_t)63) + DC_FN(dc_planes_bytes)(p, threads) +
           DC_FN(dc_gemm_floats)(p, threads) * sizeof(float);
}

typedef struct DC_FN(dc_job) {
    const mrt_deform_conv_params *p;
    const DC_T *x, *off, *mask;
    int64_t p0, len, gw;
    int64_t chunk_lo, chunk_len, q_pieces; /* lanes path: the chunk's channels; its tasks (tap, piece of the columns) */
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

#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
/* The lanes path, chunk by chunk: first its planes transposed (blocks of 16 elements split over the threads) */
static void dc_lanes_planes_range(void *arg, int64_t b0, int64_t b1)
{
    const DC_FN(dc_job) *j = arg;
    const int64_t hw = j->p->h * j->p->w, c = j->gw * (j->p->c / j->p->group) + j->chunk_lo;
    dc_planes_t(j->x + c * hw, hw, (int)j->chunk_len, b0, b1, (float *)j->planes);
}

/* then task t: tap t / pieces, columns piece t % pieces: those columns of the chunk's channels' im2col rows for
   that tap (tasks of a few hundred columns: two threads share a chunk's 9 taps evenly) */
static void dc_lanes_rows_range(void *arg, int64_t t0, int64_t t1)
{
    const DC_FN(dc_job) *j = arg;
    const mrt_deform_conv_params *p = j->p;
    const int64_t kk = p->kh * p->kw, cg = p->c / p->group, c_per_og = p->c / p->offset_group, pieces = j->q_pieces;
    const int64_t og = (j->gw * cg + j->chunk_lo) / c_per_og;
    for (int64_t t = t0; t < t1; t++) {
        int64_t k = t / pieces, piece = t % pieces;
        int64_t q0 = j->len * piece / pieces, q1 = j->len * (piece + 1) / pieces;
        DC_FN(dc_row) row = DC_FN(dc_table_row)(j->tab, og * kk + k, j->len);
        for (int c = 0; c < 4; c++) {
            row.idx[c] += q0;
            row.wt[c] += q0;
        }
        dc_rows_avx512(&row, (const float *)j->planes, q1 - q0, (int)j->chunk_len,
                       j->col + (j->chunk_lo * kk + k) * j->len + q0, kk * j->len);
    }
}
#endif

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
        float *gemm_ws = (float *)(ws + at_planes + DC_FN(dc_planes_bytes)(p, threads));
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
#if DC_OWN_GEMM && defined(MRT_HAVE_AVX512_INTRINSICS)
                    if (dc_lanes_path(p)) {
                        job.q_pieces = (job.len + 255) / 256;
                        memset((float *)job.planes + hw * 16, 0, 16 * sizeof(float)); /* the zero row */
                        for (job.chunk_lo = 0; job.chunk_lo < cg; job.chunk_lo += job.chunk_len) {
                            job.chunk_len = dc_chunk_len(p, gw, job.chunk_lo);
                            mrt_parallel_for(ctx, (hw + 15) / 16, 64, dc_lanes_planes_range, &job);
                            mrt_parallel_for(ctx, kk * job.q_pieces, 1, dc_lanes_rows_range, &job);
                        }
                    } else
#endif
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
