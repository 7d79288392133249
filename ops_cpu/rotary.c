/* CPU kernel: RotaryEmbedding (23). Per (batch, position, head): the first R dims of the head are rotated as
   R/2 complex pairs (halves, or adjacent pairs when interleaved) by the angle whose cos/sin the caches give;
   the rest pass through. Computed in double. */
#include "engine/registry.h"

static mrt_status mrt_cpu_rotary(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0), *cosc = mrt_input(ctx, 1), *sinc = mrt_input(ctx, 2),
                     *pos = mrt_input(ctx, 3);
    mrt_tensor *y = mrt_output(ctx, 0);
    bool four = x->rank == 4, interleaved = mrt_attr_int(ctx, "interleaved", 0) != 0;
    int64_t B = x->shape[0], N = four ? x->shape[1] : mrt_attr_int(ctx, "num_heads", 0);
    int64_t S = four ? x->shape[2] : x->shape[1], H = four ? x->shape[3] : x->shape[2] / N;
    int64_t R = mrt_attr_int(ctx, "rotary_embedding_dim", 0), half;
    if (R == 0) R = H;
    half = R / 2;
    int64_t max_pos = pos ? cosc->shape[0] : 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t row; /* row of the caches */
            if (pos) {
                row = ((const int64_t *)pos->data)[b * S + s];
                if (row < 0 || row >= max_pos)
                    return mrt_op_fail(ctx, MRT_STATUS_INVALID_ARG, "position id %lld is outside the caches' %lld rows",
                                       (long long)row, (long long)max_pos);
            } else {
                row = b * S + s;
            }
            for (int64_t n = 0; n < N; n++) {
                /* element offset of x[b, n, s, 0] (4-D) or x[b, s, n*H] (3-D) */
                int64_t base = four ? ((b * N + n) * S + s) * H : (b * S + s) * N * H + n * H;
                for (int64_t k = 0; k < half; k++) {
                    double c = mrt_load_f64(cosc->dtype, cosc->data, row * half + k);
                    double sn = mrt_load_f64(sinc->dtype, sinc->data, row * half + k);
                    int64_t i1 = interleaved ? base + 2 * k : base + k, i2 = interleaved ? i1 + 1 : base + k + half;
                    double x1 = mrt_load_f64(x->dtype, x->data, i1), x2 = mrt_load_f64(x->dtype, x->data, i2);
                    mrt_store_f64(y->dtype, y->data, i1, c * x1 - sn * x2);
                    mrt_store_f64(y->dtype, y->data, i2, sn * x1 + c * x2);
                }
                for (int64_t k = R; k < H; k++)
                    mrt_store_f64(y->dtype, y->data, base + k, mrt_load_f64(x->dtype, x->data, base + k));
            }
        }
    return MRT_STATUS_OK;
}

const mrt_kernel mrt_cpu_kernels_rotary[] = {
    {"", "RotaryEmbedding", 23, mrt_cpu_rotary, NULL},
    {0},
};
