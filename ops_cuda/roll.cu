// custom::Roll 1 (torch.roll, docs/custom_ops.md) on CUDA, as ops_cpu/roll.c: y[..., (i_d + shift_d) mod n_d, ...] =
// x[..., i_d, ...], or the flattened roll when the node has no `dims`. Every whole-byte dtype; sub-byte types run on
// the CPU (supports says why).
#include "ops_cuda/cuda_kernels.h"
#include "ops_cuda/movement.cuh"

#include "engine/opdef/roll.h"

namespace {

struct roll_geom {
    int rank;
    int64_t shape[MRT_MAX_RANK], shift[MRT_MAX_RANK];
};

template <typename T> __global__ void roll_kernel(const T *x, T *y, int64_t n, roll_geom g)
{
    MRT_CU_FOR(i, n) {
        int64_t q = i, src = 0, mul = 1;
        for (int d = g.rank - 1; d >= 0; d--) {
            int64_t c = q % g.shape[d] - g.shift[d];
            q /= g.shape[d];
            if (c < 0) c += g.shape[d];
            src += c * mul;
            mul *= g.shape[d];
        }
        y[i] = x[src];
    }
}

mrt_status cu_roll(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    mrt_tensor *y = mrt_output(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 ('x') is missing or not a tensor");
    if (!y) return MRT_STATUS_OK;
    roll_geom g;
    memset(&g, 0, sizeof g);
    bool flat;
    MRT_TRY(mrt_roll_shifts(ctx, x, g.shift, &flat)); // attributes and x's shape only: no device data read
    int64_t n = mrt_tensor_numel(x);
    if (n == 0) return MRT_STATUS_OK;
    g.rank = flat ? 1 : x->rank;
    if (flat) g.shape[0] = n;
    else
        for (int d = 0; d < x->rank; d++) g.shape[d] = x->shape[d];
    if (g.rank == 0) {
        g.rank = 1;
        g.shape[0] = 1;
        g.shift[0] = 0;
    }
    bool done = false;
    [&]() -> bool {
        MRT_CU_SWITCH_MOVE(mrt_cu_move_bytes(x->dtype), {
            auto *k = roll_kernel<elem_t>;
            MRT_LAUNCH(k, mrt_cu_blocks(n), MRT_CU_THREADS, 0, mrt_cu_stream(ctx), (const elem_t *)x->data,
                       (elem_t *)y->data, n, g);
            done = true;
        })
        return false;
    }();
    if (!done) return mrt_op_fail(ctx, MRT_STATUS_NOT_IMPLEMENTED, "dtype %s is not supported", mrt_dtype_name(x->dtype));
    MRT_CU_CHECK_LAUNCH(ctx, "Roll kernel");
    return MRT_STATUS_OK;
}

bool roll_supports(const mrt_op_ctx *ctx, char *why, size_t len) { return mrt_cu_movable(ctx, why, len); }

} // namespace

extern "C" const mrt_kernel mrt_cuda_kernels_roll[] = {
    {"custom", "Roll", 1, cu_roll, roll_supports, NULL, NULL, MRT_KERNEL_WRITES_ALL},
    {0},
};
