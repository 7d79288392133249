/* custom::Roll: the attribute parser shared by the opdef (engine/opdef/roll.c) and the CPU kernel
 * (ops_cpu/roll.c). */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* torch.roll semantics over x: shift[d] in [0, shape[d]) for every dim (repeated dims add up, negative
   shifts and dims wrap, shifts larger than the dim are taken modulo it). When the node has no `dims`,
   torch flattens the tensor, rolls it and restores the shape: then *flat is set and shift[0] is the
   shift of the flattened tensor, in [0, numel). */
mrt_status mrt_roll_shifts(const mrt_op_ctx *ctx, const mrt_tensor *x, int64_t *shift, bool *flat);

#ifdef __cplusplus
}
#endif
