"""torch.roll exported by the TorchScript exporter as Slice+Slice+Concat, with a shift larger than the axis
(10 on an axis of 7): the exported graph is wrong (the slices clamp), and `minirt info` must say so.
Also writes PyTorch's (correct) output so the difference can be seen.

usage: /usr/bin/python3 models/scripts/make_roll_fixture.py models/fixtures/roll
"""
import os
import sys

import numpy as np
import torch


class Roll(torch.nn.Module):
    def forward(self, x):
        return torch.roll(x, shifts=10, dims=1)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = torch.arange(14, dtype=torch.float32).reshape(2, 7)
torch.onnx.export(Roll(), x, os.path.join(out, "roll_shift_exceeds_dim.onnx"), opset_version=13,
                  input_names=["x"], output_names=["y"])
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y_torch.npy"), Roll()(x).numpy())
