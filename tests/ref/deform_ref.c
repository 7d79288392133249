/* Naive float64 references: deformable convolution sampled point by point (every output element sums
 * its own taps, bilinear value recomputed each time) and torch.roll element by element. */
#include "deform_ref.h"

#include <math.h>
#include <string.h>

int64_t deform_ref_out_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride, int64_t dil)
{
    int64_t span = in + pad_begin + pad_end - dil * (k - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

/* Value of image plane (h x w) at real position (py, px): zero outside (-1, h) x (-1, w), otherwise the
   bilinear blend of the four surrounding pixels, where a pixel outside the image counts as zero. */
static double sample(const double *plane, int64_t h, int64_t w, double py, double px)
{
    if (py <= -1.0 || py >= (double)h || px <= -1.0 || px >= (double)w) return 0.0;
    double fy = floor(py), fx = floor(px);
    double sum = 0.0;
    for (int dy = 0; dy <= 1; dy++) {
        for (int dx = 0; dx <= 1; dx++) {
            int64_t yy = (int64_t)fy + dy, xx = (int64_t)fx + dx;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            double wy = dy ? py - fy : 1.0 - (py - fy);
            double wx = dx ? px - fx : 1.0 - (px - fx);
            sum += wy * wx * plane[yy * w + xx];
        }
    }
    return sum;
}

void deform_ref(const deform_ref_args *a, double *y)
{
    int64_t cin_g = a->c / a->groups, cout_g = a->oc / a->groups, c_og = a->c / a->offset_groups;
    int64_t taps = a->kh * a->kw, plane_out = a->oh * a->ow;
    for (int64_t b = 0; b < a->n; b++) {
        for (int64_t o = 0; o < a->oc; o++) {
            int64_t grp = o / cout_g;
            for (int64_t oy = 0; oy < a->oh; oy++) {
                for (int64_t ox = 0; ox < a->ow; ox++) {
                    double acc = 0.0;
                    for (int64_t ci = 0; ci < cin_g; ci++) {
                        int64_t ch = grp * cin_g + ci;
                        int64_t og = ch / c_og;
                        const double *plane = a->x + (b * a->c + ch) * a->h * a->w;
                        for (int64_t i = 0; i < a->kh; i++) {
                            for (int64_t j = 0; j < a->kw; j++) {
                                int64_t tap = og * taps + i * a->kw + j;
                                int64_t at = oy * a->ow + ox;
                                double dy = a->offset[((b * 2 * a->offset_groups * taps) + 2 * tap) * plane_out + at];
                                double dx = a->offset[((b * 2 * a->offset_groups * taps) + 2 * tap + 1) * plane_out + at];
                                double py = (double)(oy * a->stride[0] - a->pad[0] + i * a->dilation[0]) + dy;
                                double px = (double)(ox * a->stride[1] - a->pad[1] + j * a->dilation[1]) + dx;
                                double v = sample(plane, a->h, a->w, py, px);
                                if (a->mask) v *= a->mask[(b * a->offset_groups * taps + tap) * plane_out + at];
                                double wv = a->weight[((o * cin_g + ci) * a->kh + i) * a->kw + j];
                                acc += wv * v;
                            }
                        }
                    }
                    if (a->bias) acc += a->bias[o];
                    y[((b * a->oc + o) * a->oh + oy) * a->ow + ox] = acc;
                }
            }
        }
    }
}

void roll_ref(const void *x, void *y, int rank, const int64_t *shape, int64_t esize, int n, const int64_t *shifts,
              int n_dims, const int64_t *dims)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) numel *= shape[d];
    const unsigned char *xs = x;
    unsigned char *ys = y;
    for (int64_t i = 0; i < numel; i++) {
        int64_t dst;
        if (n_dims == 0) {
            int64_t s = shifts[0] % numel;
            dst = ((i + s) % numel + numel) % numel;
        } else {
            /* unravel i, move each listed dim by its shift, ravel again */
            int64_t idx[16];
            int64_t rem = i;
            for (int d = rank - 1; d >= 0; d--) {
                idx[d] = rem % shape[d];
                rem /= shape[d];
            }
            for (int k = 0; k < n; k++) {
                int d = (int)(dims[k] < 0 ? dims[k] + rank : dims[k]);
                idx[d] = ((idx[d] + shifts[k]) % shape[d] + shape[d]) % shape[d];
            }
            dst = 0;
            for (int d = 0; d < rank; d++) dst = dst * shape[d] + idx[d];
        }
        memcpy(ys + dst * esize, xs + i * esize, (size_t)esize);
    }
}
