/* The CPU Conv's path rules and workspace sizes (see conv_workspace.h). Sized at plan time by the kernel rows'
 * workspace hooks, with W's data present when it is a constant: the paths that need W packed by prepare are counted
 * only then. */
#include "ops_cpu/conv_workspace.h"

#include <string.h>

#include "ops_cpu/conv_grouped.h"
#include "ops_cpu/conv_pointwise.h"
#include "ops_cpu/conv_winograd.h"
#include "ops_cpu/sgemm.h"

bool mrt_conv_direct_depthwise(const mrt_conv_params *p, mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT && p->win.nsp == 2 && p->group > 1 && p->group == p->c && p->m == p->c;
}

void mrt_conv_rows_geometry(const mrt_conv_params *p, int64_t *block_rows, int64_t *lp)
{
    const mrt_window *w = &p->win;
    int64_t s = w->stride[1], rows = (MRT_CONV_ROWS_BLOCK - 1) * w->stride[0] + (w->kernel[0] - 1) * w->dilation[0] + 1;
    *block_rows = rows < w->in[0] ? rows : w->in[0];
    *lp = ((w->out[1] + 15) / 16 * 16 + (w->kernel[1] - 1) * w->dilation[1] / s + 15) / 16 * 16;
}

int64_t mrt_conv_rows_floats(const mrt_conv_params *p, mrt_dtype dt, int n_threads)
{
    const mrt_window *w = &p->win;
    /* few channels: a tile's rows then come from at most 8 KH input rows (the TLB and the prefetchers follow
       them; a 1x1 convolution's 256 rows 50 KB apart ran at half speed); one k block: the GEMM's chain */
    if (dt != MRT_DTYPE_FLOAT || w->nsp != 2 || p->group != 1 || p->c > 8 || p->c < 1 || p->kernel_numel < 1 ||
        p->c * p->kernel_numel > MRT_SGEMM_K_BLOCK || (w->stride[1] != 1 && w->stride[1] != 2) || w->out[0] < 1 ||
        w->out[1] < 1 || w->in[1] > 65536)
        return 0;
    /* per input row, stride phases of Lp floats (see ops_cpu/conv.c): the phase rows of the whole image would take
       as many floats; rows much wider than the input's (an image a few columns wide) would take many times its
       memory */
    int64_t s = w->stride[1], block_rows, lp;
    mrt_conv_rows_geometry(p, &block_rows, &lp);
    if ((p->c * w->in[0] + 1) * s * lp > 4 * p->c * w->in[0] * w->in[1] + 4096) return 0;
    /* a block's rows per thread, then the zero row */
    return ((int64_t)(n_threads > 1 ? n_threads : 1) * p->c * block_rows + 1) * s * lp;
}

enum { WINOGRAD_STREAMED_FLOATS = 1 << 20 }; /* transformed weights (4 MB) past which few tiles don't pay for them */
bool mrt_conv_winograd_phases(const mrt_conv_params *p, mrt_conv_params *q)
{
    const mrt_window *w = &p->win;
    int64_t d = w->nsp == 2 ? w->dilation[0] : 1;
    if (d < 2 || w->dilation[1] != d) return false;
    for (int i = 0; i < 2; i++)
        if (w->kernel[i] != 3 || w->stride[i] != 1 || w->pad_begin[i] != d || w->pad_end[i] != d ||
            w->in[i] % (2 * d) != 0 || w->out[i] != w->in[i])
            return false; /* odd phase planes waste a tile row and column: FCN-ResNet50's dilation-4 512 -> 512 at
                             28x28 (7x7 phases, 64 outputs computed for 49) 16.3 -> 16.6 ms on one thread */
    *q = *p;
    q->n = p->n * d * d;
    for (int i = 0; i < 2; i++) {
        q->win.in[i] = q->win.out[i] = w->in[i] / d;
        q->win.dilation[i] = 1;
        q->win.pad_begin[i] = q->win.pad_end[i] = 1;
    }
    return true;
}

int64_t mrt_conv_winograd_floats(const mrt_conv_params *p, mrt_dtype dt, bool w_packed, int n_threads)
{
    const mrt_window *w = &p->win;
    if (dt != MRT_DTYPE_FLOAT || w->nsp != 2 || p->group != 1 || p->c < MRT_WINOGRAD_MIN_C ||
        p->c > MRT_WINOGRAD_MAX_C || p->m < MRT_WINOGRAD_MIN_C || w->out[0] < 1 || w->out[1] < 1)
        return 0;
    mrt_conv_params q;
    int64_t phases = 1; /* images a transformed weight serves per image of the batch */
    if (mrt_conv_winograd_phases(p, &q)) { /* a dilated 3x3: d x d undilated Convs (mrt_conv_winograd) */
        phases = w->dilation[0] * w->dilation[1];
        p = &q;
        w = &q.win;
    }
    for (int i = 0; i < 2; i++)
        if (w->kernel[i] != 3 || w->stride[i] != 1 || w->dilation[i] != 1) return 0;
    /* small planes with few output channels go to ops_cpu/conv_grouped.c's lanes (gc_geometry) when W is packed,
       else to the GEMM, whose sums the lanes' are: not Winograd either way, so that whether prepare packed W never
       changes a bit (tests/cli/test_expand_functions_cli.sh: tiny_cnn's 16 -> 16 3x3 at 16x16 took Winograd in one
       session and the lanes in the other) */
    if (mrt_conv_grouped_floats(p, dt, 1) > 0) return 0;
    /* vectors of 16 columns the products take per image: 16 products over the tiles, or im2col's 9 taps over the
       outputs. Winograd when it needs at most 3/4 of them: a 7x7 image (16 against 36) ran 1.6x faster, 6x6 1.4x, 5x5
       (16 against 18) no faster, 4x4 1.9x slower (its transformed weights, 16/9 as many, are read for 4 tiles). */
    int64_t tiles = (w->out[0] + 1) / 2 * ((w->out[1] + 1) / 2);
    if (4 * 16 * ((tiles + 15) / 16) > 3 * 9 * ((w->out[0] * w->out[1] + 15) / 16)) return 0;
    /* On images of up to 8x8 outputs the transformed weights, 16/9 of W, serve at most 16 tiles each; past 4 MB
       they come from memory at every run, and the GEMM, which reads W once for all 49 positions, is faster: ResNet-18's
       512 -> 512 layers at 7x7 took 2.7 ms inside the model against the GEMM's 2.1 (Intel Xeon VM, one thread;
       in cache both 1.5). A rule on the shapes alone, so that the same model always takes the same path. */
    if (tiles * phases <= 16 && 16 * p->m * p->c > WINOGRAD_STREAMED_FLOATS) return 0;
    int64_t floats = (n_threads > 1 ? n_threads : 1) * mrt_winograd_slot_floats(p->m, p->c); /* a slot per thread */
    if (!w_packed) floats += mrt_winograd_packed_floats(p->m, p->c) + p->m * p->c; /* W's transform, at run time */
    if (phases > 1) /* and the phases' input and output images, after the rest rounded to 16 floats */
        floats = (floats + 15) / 16 * 16 + (p->c + p->m) * p->n * w->in[0] * w->in[1];
    return floats;
}

/* ---- workspace layout (see conv.h): [col][x][w][b][y], each part 64-byte aligned */

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The element counts of the parts; false on overflow. */
static bool workspace_parts(const mrt_conv_params *p, const mrt_op_ctx *ctx, bool transpose, size_t n[5],
                            size_t *es)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *w = mrt_input(ctx, 1), *b = transpose || !strcmp(ctx->node->op_type, "Conv")
                                                                           ? mrt_input(ctx, 2) : NULL;
    mrt_dtype dt = x->dtype;
    *es = dt == MRT_DTYPE_DOUBLE ? 8 : 4;
    int64_t sp = 1;
    for (int i = 0; i < p->win.nsp; i++) sp *= p->win.out[i]; /* Y's spatial size (ConvTranspose: X's) */
    int64_t k = transpose ? p->m / p->group * p->kernel_numel : p->c / p->group * p->kernel_numel;
    bool pointwise = !transpose;
    for (int i = 0; pointwise && i < p->win.nsp; i++)
        pointwise = p->win.kernel[i] == 1 && p->win.stride[i] == 1 && p->win.pad_begin[i] == 0 && p->win.pad_end[i] == 0;
    if (sp > 0 && k > INT64_MAX / sp) return false;
    n[0] = pointwise || (!transpose && mrt_conv_direct_depthwise(p, dt)) ? 0 : (size_t)(k * sp);
    if (!transpose && dt == MRT_DTYPE_FLOAT && !mrt_conv_direct_depthwise(p, dt)) {
        /* minirt's GEMM (ops_cpu/sgemm.h): W packed by the kernel's prepare when it is a constant */
        bool w_packed = ctx->planning && w->data;
        n[0] = (size_t)mrt_conv_sgemm_floats(p, sp, k, w_packed, ctx->n_threads);
        /* either path may run (it needs AVX-512) */
        int64_t rows = w_packed ? mrt_conv_rows_floats(p, dt, ctx->n_threads) : 0;
        if ((size_t)rows > n[0]) n[0] = (size_t)rows;
        int64_t live = w_packed ? mrt_conv_live_taps_floats(p, dt, ctx->n_threads) : 0;
        if ((size_t)live > n[0]) n[0] = (size_t)live;
        int64_t wino = ctx->no_winograd ? 0 : mrt_conv_winograd_floats(p, dt, w_packed, ctx->n_threads);
        if ((size_t)wino > n[0]) n[0] = (size_t)wino;
        int64_t grouped = w_packed ? mrt_conv_grouped_floats(p, dt, ctx->n_threads) : 0;
        if ((size_t)grouped > n[0]) n[0] = (size_t)grouped;
        int64_t lanes = w_packed ? mrt_conv_pointwise_lanes_floats(p, dt, ctx->n_threads) : 0;
        if ((size_t)lanes > n[0]) n[0] = (size_t)lanes;
    }
    bool half = dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
    int64_t yn = 1;
    for (int i = 0; i < p->y_rank; i++) yn *= p->y_shape[i];
    n[1] = half ? (size_t)mrt_tensor_numel(x) : 0;
    n[2] = half ? (size_t)mrt_tensor_numel(w) : 0;
    n[3] = half && b ? (size_t)mrt_tensor_numel(b) : 0;
    n[4] = half ? (size_t)yn : 0;
    return true;
}

bool mrt_conv_workspace_bytes(const mrt_conv_params *p, const mrt_op_ctx *ctx, bool transpose, size_t *bytes)
{
    size_t n[5], es, total = 0;
    if (!workspace_parts(p, ctx, transpose, n, &es)) return false;
    for (int i = 0; i < 5; i++) {
        if (n[i] > (SIZE_MAX / 4 - total) / es) return false;
        total += round64(n[i] * es);
    }
    *bytes = total;
    return true;
}

void mrt_conv_workspace_carve(const mrt_conv_params *p, const mrt_op_ctx *ctx, bool transpose, void *base,
                              mrt_conv_workspace *ws)
{
    size_t n[5], es, at = 0;
    workspace_parts(p, ctx, transpose, n, &es);
    char *c = base;
    void *part[5];
    for (int i = 0; i < 5; i++) {
        part[i] = c + at;
        at += round64(n[i] * es);
    }
    *ws = (mrt_conv_workspace){part[0], part[1], part[2], n[3] ? part[3] : NULL, part[4]};
}

bool mrt_convinteger_workspace_counts(const mrt_conv_params *p, const mrt_op_ctx *ctx, int64_t counts[3])
{
    int64_t out_numel = 1, ck = p->c / p->group * p->kernel_numel;
    for (int i = 0; i < p->win.nsp; i++) out_numel *= p->win.out[i];
    if (out_numel > 0 && ck > INT64_MAX / out_numel) return false;
    counts[0] = mrt_tensor_numel(mrt_input(ctx, 0));
    counts[1] = mrt_tensor_numel(mrt_input(ctx, 1));
    counts[2] = ck * out_numel;
    return true;
}

static mrt_status request_workspace(mrt_op_ctx *ctx, bool transpose)
{
    mrt_conv_params p;
    MRT_TRY(transpose ? mrt_convtranspose_params_get(ctx, &p) : mrt_conv_params_get(ctx, &p));
    size_t bytes;
    if (!mrt_conv_workspace_bytes(&p, ctx, transpose, &bytes))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the %s workspace size overflows", transpose ? "col2im" : "im2col");
    mrt_workspace_request(ctx, bytes);
    return MRT_STATUS_OK;
}

mrt_status mrt_cpu_conv_workspace(mrt_op_ctx *ctx) { return request_workspace(ctx, false); }
mrt_status mrt_cpu_convtranspose_workspace(mrt_op_ctx *ctx) { return request_workspace(ctx, true); }

mrt_status mrt_cpu_convinteger_workspace(mrt_op_ctx *ctx)
{
    mrt_conv_params p;
    MRT_TRY(mrt_conv_params_get(ctx, &p));
    int64_t counts[3];
    if (!mrt_convinteger_workspace_counts(&p, ctx, counts))
        return mrt_op_fail(ctx, MRT_STATUS_OUT_OF_MEMORY, "the im2col workspace size overflows");
    return mrt_workspace_request_parts(ctx, 3, counts, sizeof(int32_t));
}

