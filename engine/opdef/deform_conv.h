/* Deformable convolution: the parser shared by the opdef (engine/opdef/deform_conv.c) and the CPU kernel
 * (ops_cpu/deform_conv.c), so infer and run agree on every front-end's operand order, attribute spelling
 * and validation message. */
#pragma once

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operand roles, whatever order a front-end passes them in. */
enum { MRT_DC_X, MRT_DC_W, MRT_DC_OFFSET, MRT_DC_MASK, MRT_DC_BIAS, MRT_DC_NROLES };

/* One 2-D deformable convolution, torchvision semantics: for output (oy, ox), tap (i, j) of offset group g
   (kidx = i*kw + j), offset channels 2*(g*kh*kw + kidx) and +1 hold the y and x displacement; the sample
   is taken at y = oy*stride[0] - pad_begin[0] + i*dilation[0] + dy (x likewise), bilinearly, zero outside
   the image, times mask channel g*kh*kw + kidx when there is a mask. */
typedef struct mrt_deform_conv_params {
    int input[MRT_DC_NROLES];     /* node input index of each role; -1 when absent or unused */
    mrt_dtype dtype;
    int64_t n, c, h, w;           /* X */
    int64_t oc, kh, kw;           /* W: [oc, c/group, kh, kw] */
    int64_t oh, ow;               /* output spatial size */
    int64_t group, offset_group;
    int64_t stride[2], dilation[2], pad_begin[2], pad_end[2];
} mrt_deform_conv_params;

/* Validates a DeformConv / MMCV(Modulated)DeformConv2d / deform_conv2d node (attributes, dtypes, every
   operand's shape) and fills p; fails with a message naming the operand, and says when two operands look
   swapped. */
mrt_status mrt_deform_conv_params_get(const mrt_op_ctx *ctx, mrt_deform_conv_params *p);

#ifdef __cplusplus
}
#endif
