#!/usr/bin/python3
"""Export a small PyTorch model that uses the custom op custom_domain::customOp2 to ONNX.

    /usr/bin/python3 examples/plugins/export_customop2.py OUT_DIR

writes OUT_DIR/model_with_customOp2.onnx, OUT_DIR/x.npy (the input) and OUT_DIR/y_torch.npy (PyTorch's
output for x). Tested with Debian's python3-torch 1.13 (CPU). minirt runs the model with the plugin built
from examples/plugins/customop2.c (see examples/plugins/README.md).
"""
import os
import sys
import warnings

import numpy as np
import torch


class CustomOp2(torch.autograd.Function):
    """customOp2(x) = clamp(x, min=0) / (1 + exp(-x)): a ReLU-gated sigmoid."""

    @staticmethod
    def forward(ctx, x):
        return torch.clamp(x, min=0) / (1 + torch.exp(-x))

    @staticmethod
    def symbolic(g, x):
        # One ONNX node in the custom domain; its output has the input's type and shape.
        return g.op("custom_domain::customOp2", x).setType(x.type())


class Model(torch.nn.Module):
    def forward(self, x):
        # The custom node between built-in ONNX ops (Mul, Add).
        return CustomOp2.apply(x * 2.0) + x


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_customop2.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, dtype=torch.float32) * 3
    model = Model().eval()
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out, "model_with_customOp2.onnx")
    # torch 1.13 warns that it cannot infer customOp2's output shape even with setType() above, and that
    # g.op() will move in torch 1.14 (where symbolic functions receive a GraphContext with the same .op()).
    warnings.filterwarnings("ignore", message="The shape inference of custom_domain::customOp2")
    warnings.filterwarnings("ignore", category=FutureWarning, message=".*_graph_op")
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=13,
                      custom_opsets={"custom_domain": 1})
    np.save(os.path.join(out, "x.npy"), x.numpy())
    np.save(os.path.join(out, "y_torch.npy"), y.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes), x.npy {tuple(x.shape)}, y_torch.npy {tuple(y.shape)}")


if __name__ == "__main__":
    main()
