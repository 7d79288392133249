/* The float64 oracle (--precision fp64): float32/float16/bfloat16 values are widened exactly to float64 and
 * every node sees its dtype-carrying attributes rewritten to float64 (Cast 'to', 'dtype', Constant values...),
 * so every floating-point op computes in double. */
#pragma once

#include "engine/graph.h"

bool mrt_fp64_widens(mrt_dtype dt);
/* dst: freshly allocated float64 copy of a float32/float16/bfloat16 tensor. */
mrt_status mrt_fp64_widen_tensor(const mrt_tensor *src, mrt_tensor *dst);
/* *shadow = NULL when the node needs no rewrite; otherwise a copy to pass to kernels (free with
   mrt_fp64_free_shadow). */
mrt_status mrt_fp64_shadow_node(const mrt_node *node, mrt_node **shadow);
void mrt_fp64_free_shadow(mrt_node *shadow);
