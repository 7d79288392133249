/* Opdef: custom::Roll 1 (torch.roll: int-list attributes shifts and dims; any dtype). */
#include "engine/opdef/roll.h"

#include "engine/registry.h"

/* An int or ints attribute as a list; false when absent. */
static mrt_status int_list(const mrt_op_ctx *ctx, const char *name, const int64_t **v, int64_t *n, bool *present)
{
    const mrt_attr *a = mrt_node_attr(ctx->node, name);
    *present = a != NULL;
    *v = NULL;
    *n = 0;
    if (!a) return MRT_STATUS_OK;
    if (a->type == MRT_ATTR_INT) {
        *v = &a->i;
        *n = 1;
    } else if (a->type == MRT_ATTR_INTS) {
        *v = a->ints;
        *n = a->n;
    } else {
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute '%s' has type %s, expected ints", name,
                           mrt_attr_type_name(a->type));
    }
    return MRT_STATUS_OK;
}

/* (acc + s) mod n in [0, n) without overflow; n > 0, acc in [0, n). */
static int64_t add_mod(int64_t acc, int64_t s, int64_t n)
{
    int64_t m = s % n;
    if (m < 0) m += n;
    return m >= n - acc ? m - (n - acc) : acc + m;
}

mrt_status mrt_roll_shifts(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t *shift, bool *flat)
{
    const int64_t *shifts, *dims;
    int64_t n_shifts, n_dims;
    bool has_shifts, has_dims;
    MRT_TRY(int_list(ctx, "shifts", &shifts, &n_shifts, &has_shifts));
    MRT_TRY(int_list(ctx, "dims", &dims, &n_dims, &has_dims));
    if (!has_shifts || n_shifts == 0)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "attribute 'shifts' is required and must not be empty");
    for (int d = 0; d < MRT_MAX_RANK; d++) shift[d] = 0;
    *flat = !has_dims;
    if (!has_dims) {
        /* torch: with no dims the tensor is flattened, rolled and reshaped back */
        if (n_shifts != 1)
            return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                               "attribute 'shifts' has %lld values but there is no 'dims' (torch.roll without dims "
                               "takes one shift)",
                               (long long)n_shifts);
        int64_t numel = mrt_tensor_numel(x);
        if (numel > 0) shift[0] = add_mod(0, shifts[0], numel);
        return MRT_STATUS_OK;
    }
    if (n_dims != n_shifts)
        return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL,
                           "attributes 'shifts' (%lld values) and 'dims' (%lld values) must have the same length",
                           (long long)n_shifts, (long long)n_dims);
    for (int64_t i = 0; i < n_dims; i++) {
        int d;
        MRT_TRY(mrt_normalize_axis(ctx, "attribute 'dims' value", dims[i], x->rank, &d));
        if (x->shape[d] > 0) shift[d] = add_mod(shift[d], shifts[i], x->shape[d]);
    }
    return MRT_STATUS_OK;
}

static mrt_status infer_roll(mrt_op_ctx *ctx)
{
    const mrt_tensor *x = mrt_input(ctx, 0);
    if (!x) return mrt_op_fail(ctx, MRT_STATUS_INVALID_MODEL, "input 0 ('x') is missing or not a tensor");
    int64_t shift[MRT_MAX_RANK];
    bool flat;
    MRT_TRY(mrt_roll_shifts(ctx, x, shift, &flat));
    return mrt_output_set(ctx, 0, x->dtype, x->rank, x->shape);
}

const mrt_opdef mrt_opdefs_roll[] = {
    {"custom", "Roll", 1, 1, 1, 1, 1, infer_roll, 0},
    {0},
};
