#!/usr/bin/python3
"""Export the model-test models with random weights (fixed seeds) and PyTorch's reference outputs.

Usage (Debian's Python, which has torch 1.13 + torchvision 0.14):
    /usr/bin/python3 models/scripts/export_models.py OUTDIR [NAME...]

For each model NAME this writes
    OUTDIR/NAME.onnx            the model (one input "input", one output "output")
    OUTDIR/NAME_input.npy       a float32 input
    OUTDIR/NAME_torch.npy       PyTorch's float32 output
    OUTDIR/NAME_torch_fp64.npy  PyTorch's output with the same weights and input in float64 (model.double()),
                                the reference for minirt's float64 oracle mode
and OUTDIR/models.txt, one "NAME OPS..." line per exported model (the ONNX ops it uses).

Models: resnet18, mobilenet_v2, efficientnet_b0, swin_t (the full torchvision model, or one shifted-window
Swin block when torch cannot export it), transformer_encoder (4 layers, d_model 256, 4 heads, seq 64),
dcnv2 (a small CNN with torchvision.ops.deform_conv2d exported as custom::deform_conv2d), and one shifted Swin
block exported twice: swin_block_slice (torch.roll as the exporter's Slice+Concat) and swin_block_roll
(torch.roll as custom::Roll). Only the standard library, numpy, torch and torchvision are needed (no onnx).

BatchNormalization is kept as its own node (training=PRESERVE) so the ONNX weights are exactly PyTorch's
float32 parameters: folding BN into Conv in float32 would perturb them by ~1e-7 and blur the float64 oracle.
"""
import os
import sys
import warnings

import numpy as np
import torch
import torchvision
from torch import nn
from torch.onnx import symbolic_helper

OPSET = 17
SEED = 1234

warnings.filterwarnings("ignore")


# ------------------------------------------------------------------ custom symbolics

@symbolic_helper.parse_args("v", "v", "v", "v", "v", "i", "i", "i", "i", "i", "i", "i", "i", "b")
def _deform_conv2d_symbolic(g, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h,
                            dil_w, n_weight_grps, n_offset_grps, use_mask):
    # torchvision operand order (input, weight, offset, mask, bias); int-list attributes for the pairs.
    out = g.op("custom::deform_conv2d", input, weight, offset, mask, bias,
               stride_i=[stride_h, stride_w], padding_i=[pad_h, pad_w], dilation_i=[dil_h, dil_w],
               groups_i=n_weight_grps, offset_groups_i=n_offset_grps, use_mask_i=int(use_mask))
    return out


@symbolic_helper.parse_args("v", "is", "is")
def _roll_symbolic(g, input, shifts, dims):
    return g.op("custom::Roll", input, shifts_i=shifts, dims_i=dims)


_roll_registered = False


def _set_roll_symbolic(enabled):
    """Switch torch.roll between the exporter's default (Slice+Concat) and custom::Roll."""
    global _roll_registered
    if enabled and not _roll_registered:
        torch.onnx.register_custom_op_symbolic("::roll", _roll_symbolic, OPSET)
        _roll_registered = True
    elif not enabled and _roll_registered:
        torch.onnx.unregister_custom_op_symbolic("::roll", OPSET)
        _roll_registered = False


torch.onnx.register_custom_op_symbolic("torchvision::deform_conv2d", _deform_conv2d_symbolic, OPSET)


# ------------------------------------------------------------------ models

def _randomize_norms(model, gen):
    """Random BatchNorm statistics/affine parameters (fresh ones are the identity map, which tests nothing)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def _image(gen, size=224):
    return torch.randn(1, 3, size, size, generator=gen)


def make_resnet18(gen):
    return torchvision.models.resnet18(weights=None), _image(gen)


def make_mobilenet_v2(gen):
    return torchvision.models.mobilenet_v2(weights=None), _image(gen)


def make_efficientnet_b0(gen):
    return torchvision.models.efficientnet_b0(weights=None), _image(gen)


def make_swin_t(gen):
    return torchvision.models.swin_t(weights=None), _image(gen)


def _swin_block(gen):
    from torchvision.models.swin_transformer import SwinTransformerBlock

    # Swin-T stage 1: dim 96, 3 heads, 7x7 windows shifted by 3, on a 56x56 map (B, H, W, C layout).
    block = SwinTransformerBlock(dim=96, num_heads=3, window_size=[7, 7], shift_size=[3, 3])
    with torch.no_grad():  # a visible relative position bias (the default init is std 0.02)
        block.attn.relative_position_bias_table.normal_(0.0, 0.5, generator=gen)
    return block, torch.randn(1, 56, 56, 96, generator=gen)


def make_swin_block_slice(gen):
    return _swin_block(gen)


def make_swin_block_roll(gen):
    return _swin_block(gen)


def make_transformer_encoder(gen):
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
    return model, torch.randn(1, 64, 256, generator=gen)


class DCNv2Net(nn.Module):
    """A small CNN with two modulated deformable convolutions (DCNv2: offsets and a sigmoid mask)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        # deform 1: 3x3, stride 1, pad 1, groups 2, offset_groups 2
        self.off1 = nn.Conv2d(16, 2 * 2 * 9, 3, padding=1)
        self.msk1 = nn.Conv2d(16, 2 * 9, 3, padding=1)
        self.w1 = nn.Parameter(torch.randn(32, 8, 3, 3) * 0.15)
        self.b1 = nn.Parameter(torch.randn(32) * 0.1)
        # deform 2: 3x3, stride 2, pad 2, dilation 2, groups 1, offset_groups 1
        self.off2 = nn.Conv2d(32, 2 * 9, 3, stride=2, padding=1)  # offsets/mask at the output resolution
        self.msk2 = nn.Conv2d(32, 9, 3, stride=2, padding=1)
        self.w2 = nn.Parameter(torch.randn(32, 32, 3, 3) * 0.08)
        self.b2 = nn.Parameter(torch.randn(32) * 0.1)
        self.head = nn.Conv2d(32, 8, 1)

    def forward(self, x):
        from torchvision.ops import deform_conv2d

        x = torch.relu(self.bn(self.stem(x)))
        x = deform_conv2d(x, self.off1(x), self.w1, self.b1, stride=1, padding=1, dilation=1,
                          mask=torch.sigmoid(self.msk1(x)))
        x = torch.relu(x)
        x = deform_conv2d(x, self.off2(x), self.w2, self.b2, stride=2, padding=2, dilation=2,
                          mask=torch.sigmoid(self.msk2(x)))
        return self.head(torch.relu(x))


def make_dcnv2(gen):
    model = DCNv2Net()
    with torch.no_grad():  # offsets of a few pixels (fractional positions, samples off the border), varied masks
        for conv in (model.off1, model.off2, model.msk1, model.msk2):
            conv.weight.normal_(0.0, 0.25, generator=gen)
            conv.bias.normal_(0.0, 0.5, generator=gen)
    return model, torch.randn(1, 3, 32, 32, generator=gen)


MODELS = {
    "resnet18": make_resnet18,
    "mobilenet_v2": make_mobilenet_v2,
    "efficientnet_b0": make_efficientnet_b0,
    "swin_t": make_swin_t,
    "transformer_encoder": make_transformer_encoder,
    "dcnv2": make_dcnv2,
    "swin_block_slice": make_swin_block_slice,
    "swin_block_roll": make_swin_block_roll,
}


# ------------------------------------------------------------------ export

def _onnx_ops(path):
    """The op types in an .onnx file, without the onnx package (a minimal protobuf walk)."""
    with open(path, "rb") as f:
        data = f.read()

    def varint(buf, i):
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, i

    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            wt = key & 7
            if wt == 0:
                v, i = varint(buf, i)
                yield key >> 3, v
            elif wt == 1:
                i += 8
            elif wt == 5:
                i += 4
            elif wt == 2:
                n, i = varint(buf, i)
                yield key >> 3, buf[i:i + n]
                i += n
            else:
                raise ValueError("unexpected wire type")

    ops = set()
    for fno, graph in fields(data):
        if fno != 7:  # ModelProto.graph
            continue
        for gno, node in fields(graph):
            if gno != 1:  # GraphProto.node
                continue
            op = domain = ""
            for nno, v in fields(node):
                if nno == 4:
                    op = v.decode()
                elif nno == 7:
                    domain = v.decode()
            ops.add(f"{domain}::{op}" if domain else op)
    return sorted(ops)


def _run(model, x):
    with torch.no_grad():
        return model(x)


def export_one(name, outdir):
    gen = torch.Generator().manual_seed(SEED)
    torch.manual_seed(SEED)
    model, x = MODELS[name](gen)
    _randomize_norms(model, gen)
    model.eval()

    y = _run(model, x)
    path = os.path.join(outdir, f"{name}.onnx")
    _set_roll_symbolic(name == "swin_block_roll")
    custom = {"custom": 1} if name in ("dcnv2", "swin_block_roll") else None
    try:
        torch.onnx.export(model, x, path, opset_version=OPSET, input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True,
                          custom_opsets=custom)
    finally:
        _set_roll_symbolic(False)

    np.save(os.path.join(outdir, f"{name}_input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(outdir, f"{name}_torch.npy"), y.numpy().astype(np.float32))
    model64 = model.double()
    y64 = _run(model64, x.double())
    np.save(os.path.join(outdir, f"{name}_torch_fp64.npy"), y64.numpy().astype(np.float64))
    ops = _onnx_ops(path)
    d = (y.double() - y64).abs().max().item() / max(y64.abs().max().item(), 1e-300)
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, output {list(y.shape)}, "
          f"|fp32 - fp64| / max|fp64| = {d:.2e}, ops: {' '.join(ops)}", flush=True)
    return ops


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model '{n}' (known: {' '.join(MODELS)})")
    os.makedirs(outdir, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, opset {OPSET}", flush=True)
    lines = []
    failed = []
    for name in names:
        try:
            ops = export_one(name, outdir)
            lines.append(f"{name} {' '.join(ops)}")
        except Exception as e:  # report and go on: one model the exporter can't handle must not stop the rest
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"{name}: EXPORT FAILED: {type(e).__name__}: {msg}", flush=True)
            failed.append(name)
    with open(os.path.join(outdir, "models.txt"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    if failed:
        print(f"export failed for: {' '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
