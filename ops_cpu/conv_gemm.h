/* The float32 Conv's GEMM path (ops_cpu/conv.c) as the other Conv files reuse it: the image gathered into the GEMM's
 * B panels (im2col fused into packing, ops_cpu/sgemm.h's pack callback) and the small geometry helpers both sides
 * need. The live-taps path (ops_cpu/conv_live_taps.c) packs its B with the same packer over its live taps only. */
#pragma once

#include "ops_cpu/conv_workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline int64_t mrt_dims_numel(int n, const int64_t *v)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* 1x1 kernel, stride 1, no padding: B is the image itself */
static inline bool mrt_conv_is_pointwise(const mrt_window *w)
{
    for (int i = 0; i < w->nsp; i++)
        if (w->kernel[i] != 1 || w->stride[i] != 1 || w->pad_begin[i] != 0 || w->pad_end[i] != 0) return false;
    return true;
}

/* A float32 Conv computed on minirt's GEMM (every one but the direct depthwise ones) */
static inline bool mrt_conv_uses_sgemm(const mrt_conv_params *p, mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT && !mrt_conv_direct_depthwise(p, dt);
}

/* The kernel offset koff (row-major over the kernel's dims) as a multi-index */
static inline void mrt_conv_kernel_index(const mrt_window *w, int64_t koff, int64_t *kidx)
{
    for (int i = w->nsp - 1; i >= 0; i--) {
        kidx[i] = koff % w->kernel[i];
        koff /= w->kernel[i];
    }
}

/* B(kk, j) of one (image, group): kk = (input channel, kernel offset), j = flat output position. */
typedef struct mrt_conv_src {
    const float *x;      /* the group's first input channel */
    const mrt_window *w;
    int64_t kn;          /* kernel offsets per channel (B's rows are kk = c * kn + tap) */
    int64_t in_numel;    /* input spatial size */
    const int64_t *taps; /* tap t is kernel offset taps[t] (the live ones, conv_live_taps.c), or NULL: tap t is offset t */
    int64_t k_base;      /* B's rows start at row k_base of that numbering */
    int64_t j_base;      /* B's columns start at output position j_base */
} mrt_conv_src;

/* The GEMM's pack callback (mrt_sgemm_b.pack, src an mrt_conv_src): rows [k0, k1) and columns [j0, j1) of B into
   the panel dst */
void mrt_conv_pack_b(const void *src, int64_t k0, int64_t k1, int64_t j0, int64_t j1, float *dst);

#ifdef __cplusplus
}
#endif
