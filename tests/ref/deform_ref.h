/* Naive float64 references for deformable convolution (torchvision semantics) and torch.roll. */
#pragma once

#include <stdint.h>

typedef struct deform_ref_args {
    int64_t n, c, h, w;          /* x: [n, c, h, w] */
    int64_t oc, kh, kw;          /* weight: [oc, c/groups, kh, kw] */
    int64_t oh, ow;              /* output spatial size */
    int64_t groups, offset_groups;
    int64_t stride[2], pad[2], dilation[2]; /* pad: top/left (the sampling origin) */
    const double *x, *weight, *offset;
    const double *mask;          /* [n, offset_groups*kh*kw, oh, ow] or NULL */
    const double *bias;          /* [oc] or NULL */
} deform_ref_args;

/* y: [n, oc, oh, ow] */
void deform_ref(const deform_ref_args *a, double *y);

/* Output size of one spatial dim (0 when the dilated kernel does not fit). */
int64_t deform_ref_out_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride, int64_t dil);

/* y = torch.roll(x, shifts, dims) for elements of esize bytes; n_dims == 0 means "no dims" (flatten). */
void roll_ref(const void *x, void *y, int rank, const int64_t *shape, int64_t esize, int n, const int64_t *shifts,
              int n_dims, const int64_t *dims);
