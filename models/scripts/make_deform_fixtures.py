#!/usr/bin/python3
"""Make the deformable-convolution fixtures in models/fixtures/deform/ from torchvision.ops.deform_conv2d.

Run with Debian's Python (it has torch 1.13 and torchvision 0.14):
    /usr/bin/python3 models/scripts/make_deform_fixtures.py [OUTDIR]

Each case is a folder holding float32 .npy files:
    x [N,C,H,W], w [OC,C/groups,kh,kw], offset [N,2*og*kh*kw,oh,ow], mask [N,og*kh*kw,oh,ow] (DCNv2 cases),
    bias [OC] (cases with a bias), y (torchvision's float32 result) and y64.npy (float64: the same operands
    widened, torchvision run in double), plus params.npy (int64):
    [stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w, groups, offset_groups,
     has_mask, has_bias].
torchvision pads symmetrically; the asymmetric-pad case pads the input with zeros explicitly (F.pad) and
runs with padding 0, which samples the same values (out-of-image corners contribute 0 either way) and is
what ONNX DeformConv's pads=[top, left, bottom, right] mean. tests/test_ops_deform.c reads these folders.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torchvision.ops import deform_conv2d

# name, N, C, H, W, OC, kh, kw, stride, pads (t, l, b, r), dilation, groups, og, mask, bias, offset scale, int offsets
CASES = [
    ("v1_basic", 2, 4, 7, 6, 3, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1, False, True, 1.5, False),
    ("v2_mask", 1, 4, 6, 7, 4, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1, True, True, 1.5, False),
    ("groups2_og2", 1, 4, 6, 6, 6, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2, 2, True, True, 1.0, False),
    ("groups3_og1_v1", 2, 6, 5, 5, 3, 2, 2, (1, 1), (0, 0, 0, 0), (1, 1), 3, 1, False, False, 1.0, False),
    ("groups1_og4", 1, 8, 5, 6, 2, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 4, True, False, 1.0, False),
    ("stride2_dil2", 1, 3, 9, 8, 4, 3, 2, (2, 2), (2, 1, 2, 1), (2, 2), 1, 1, True, True, 1.0, False),
    ("h1", 2, 3, 1, 7, 2, 1, 3, (1, 1), (0, 1, 0, 1), (1, 1), 1, 1, True, True, 0.8, False),
    ("w1", 1, 3, 6, 1, 2, 3, 1, (1, 1), (1, 0, 1, 0), (1, 1), 1, 1, False, True, 0.8, False),
    ("far_offsets", 1, 2, 5, 5, 3, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1, True, True, 5.0, False),
    ("int_offsets", 1, 2, 4, 5, 2, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1, True, True, 0.0, True),
    ("asym_pads", 1, 3, 6, 5, 2, 3, 3, (2, 1), (1, 0, 2, 1), (1, 1), 1, 1, True, True, 1.0, False),
]


def out_size(size, pb, pe, k, s, d):
    return (size + pb + pe - (d * (k - 1) + 1)) // s + 1


def run(x, w, off, mask, bias, stride, pads, dil):
    t, l, b, r = pads
    if t == b and l == r:
        return deform_conv2d(x, off, w, bias, stride=stride, padding=(t, l), dilation=dil, mask=mask)
    return deform_conv2d(F.pad(x, (l, r, t, b)), off, w, bias, stride=stride, padding=(0, 0), dilation=dil,
                         mask=mask)


def save(folder, name, a):
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(a))


def make(outdir, case, seed):
    (name, n, c, h, wd, oc, kh, kw, stride, pads, dil, groups, og, has_mask, has_bias, scale, int_off) = case
    g = torch.Generator().manual_seed(seed)
    oh = out_size(h, pads[0], pads[2], kh, stride[0], dil[0])
    ow = out_size(wd, pads[1], pads[3], kw, stride[1], dil[1])
    x = torch.randn(n, c, h, wd, generator=g)
    w = torch.randn(oc, c // groups, kh, kw, generator=g) * 0.5
    if int_off:
        # integral displacements put samples exactly on pixels and on the -1 / H borders
        off = torch.randint(-3, 4, (n, 2 * og * kh * kw, oh, ow), generator=g).float()
    else:
        off = torch.randn(n, 2 * og * kh * kw, oh, ow, generator=g) * scale
    mask = torch.rand(n, og * kh * kw, oh, ow, generator=g) if has_mask else None
    bias = torch.randn(oc, generator=g) if has_bias else None
    y = run(x, w, off, mask, bias, stride, pads, dil)
    dbl = lambda t: None if t is None else t.double()
    y64 = run(x.double(), w.double(), off.double(), dbl(mask), dbl(bias), stride, pads, dil)
    assert y.shape == (n, oc, oh, ow), (name, y.shape)
    folder = os.path.join(outdir, name)
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        os.remove(os.path.join(folder, f))
    save(folder, "x", x.numpy())
    save(folder, "w", w.numpy())
    save(folder, "offset", off.numpy())
    if mask is not None:
        save(folder, "mask", mask.numpy())
    if bias is not None:
        save(folder, "bias", bias.numpy())
    save(folder, "y", y.numpy())
    save(folder, "y64", y64.numpy())
    params = [stride[0], stride[1], pads[0], pads[1], pads[2], pads[3], dil[0], dil[1], groups, og,
              int(has_mask), int(has_bias)]
    save(folder, "params", np.array(params, dtype=np.int64))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                "fixtures", "deform")
    os.makedirs(outdir, exist_ok=True)
    for i, case in enumerate(CASES):
        make(outdir, case, 1000 + i)
    with open(os.path.join(outdir, "cases.txt"), "w") as f:
        f.write("\n".join(c[0] for c in CASES) + "\n")
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(outdir) for f in fs)
    print(f"{len(CASES)} cases, {total} bytes in {os.path.normpath(outdir)}")


if __name__ == "__main__":
    main()
