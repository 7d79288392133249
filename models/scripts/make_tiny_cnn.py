#!/usr/bin/python3
"""Make the bundled quick-start model: models/tiny_cnn.onnx, its input and its expected output.

Run with Debian's Python (it has torch):  /usr/bin/python3 models/scripts/make_tiny_cnn.py [OUTDIR]

The model is a small ResNet-like CNN (random weights, fixed seed) that uses only these ONNX ops:
Conv, BatchNormalization, Relu, MaxPool, Add, Reshape, Transpose, Sigmoid, Mul, Tanh, Clip, Concat, Sub, Div,
AveragePool, GlobalAveragePool, Flatten, Gemm, MatMul, Softmax (opset 17).

The expected output (tiny_cnn_expected.npy, float32) is ONNX Runtime's, checked against PyTorch's;
tiny_cnn_expected_fp64.npy is PyTorch's output in float64 (same weights and input, widened), the reference for
minirt's float64 oracle mode. ONNX Runtime lives in another interpreter
(pip's, `python3` on PATH, or $MRT_ORT_PYTHON): this script re-runs itself there with --ort.
"""
import os
import subprocess
import sys

import numpy as np

OPSET = 17
ALLOWED_OPS = {
    "Conv", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Clip", "MaxPool",
    "AveragePool", "GlobalAveragePool", "BatchNormalization", "Flatten", "Reshape", "Transpose", "Concat",
    "Softmax",
}


def ort_run(model_path, input_path, output_path):
    """--ort mode: run the model with ONNX Runtime (no torch needed)."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    ops = {n.op_type for n in model.graph.node}
    bad = ops - ALLOWED_OPS
    if bad:
        sys.exit(f"model uses ops outside the allowed list: {sorted(bad)}")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    x = np.load(input_path)
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
    np.save(output_path, y.astype(np.float32))
    print(f"onnxruntime {ort.__version__}: ops {sorted(ops)}")


def build_model():
    import torch
    from torch import nn

    class ResBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(x + y)

    class TinyCNN(nn.Module):
        def __init__(self, n_classes=10):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1)
            self.stem_bn = nn.BatchNorm2d(16)
            self.pool = nn.MaxPool2d(2)
            self.block = ResBlock(16)
            self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.down_bn = nn.BatchNorm2d(32)
            self.branch_a = nn.Conv2d(32, 8, 1)
            self.branch_b = nn.Conv2d(32, 8, 1)
            # count_include_pad=False: otherwise the exporter emits an explicit (zero) Pad before AveragePool
            self.avg = nn.AvgPool2d(2, count_include_pad=False)
            self.fc1 = nn.Linear(16, 32)
            self.w2 = nn.Parameter(torch.randn(32, n_classes) * 2.0)
            self.b2 = nn.Parameter(torch.randn(n_classes) * 0.1)
            self.register_buffer("center", torch.randn(1, 16, 1, 1) * 0.1)

        def forward(self, x):
            x = self.pool(torch.relu(self.stem_bn(self.stem(x))))          # [N,16,16,16]
            x = self.block(x)
            # channel shuffle (ShuffleNet): Reshape, Transpose, Reshape
            # (literal sizes: x.shape[0] would be traced into Shape/Gather/Unsqueeze/Concat)
            x = x.reshape(2, 2, 8, 16, 16).transpose(1, 2).reshape(2, 16, 16, 16)
            x = self.down_bn(self.down(x))                                   # [N,32,8,8]
            x = x * torch.sigmoid(x)                                         # SiLU as Sigmoid + Mul
            a = torch.tanh(self.branch_a(x))
            b = torch.clamp(self.branch_b(x), -1.0, 1.0)
            x = torch.cat([a, b], dim=1)                                     # [N,16,8,8]
            x = (x - self.center) / 0.5
            x = self.avg(x)                                                  # [N,16,4,4]
            x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)    # GlobalAveragePool + Flatten
            x = torch.relu(self.fc1(x))                                      # Gemm
            x = torch.matmul(x, self.w2) + self.b2                           # MatMul + Add
            return torch.softmax(x, dim=1)

    torch.manual_seed(20240601)
    model = TinyCNN()
    # Random BatchNorm statistics so that BN is not the identity (and no two BN tensors are equal, which
    # would make the exporter alias them through Identity nodes).
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def constants_to_initializers(path):
    """Turn Constant nodes (from do_constant_folding=False) into initializers and fold the Casts of
    constants that the exporter puts on Clip's bounds, so only the listed ops remain."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(path)
    g = model.graph
    consts = {}
    keep = []
    for node in g.node:
        if node.op_type == "Constant":
            (attr,) = node.attribute
            assert attr.name == "value", attr.name
            consts[node.output[0]] = numpy_helper.to_array(attr.t)
        elif node.op_type == "Cast" and node.input[0] in consts:
            (attr,) = node.attribute
            np_type = helper.tensor_dtype_to_np_dtype(attr.i)
            consts[node.output[0]] = consts[node.input[0]].astype(np_type)
        else:
            keep.append(node)
    used = {i for n in keep for i in n.input}
    for name, value in consts.items():
        if name in used:
            g.initializer.append(numpy_helper.from_array(value, name))
    del g.node[:]
    g.node.extend(keep)
    onnx.save(model, path)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--ort":
        if sys.argv[2] == "--fix":
            constants_to_initializers(sys.argv[3])
            return
        ort_run(*sys.argv[2:5])
        return

    import torch

    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(here)
    os.makedirs(outdir, exist_ok=True)
    onnx_path = os.path.join(outdir, "tiny_cnn.onnx")
    input_path = os.path.join(outdir, "tiny_cnn_input.npy")
    expected_path = os.path.join(outdir, "tiny_cnn_expected.npy")
    expected64_path = os.path.join(outdir, "tiny_cnn_expected_fp64.npy")
    torch_path = os.path.join(outdir, "tiny_cnn_torch.tmp.npy")

    model = build_model()
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(2, 3, 32, 32, generator=gen)
    with torch.no_grad():
        y_torch = model(x).numpy()
        # float64 reference for minirt's float64 oracle mode: the same float32 weights, widened
        y_torch64 = build_model().double()(x.double()).numpy()
    # training=PRESERVE keeps BatchNormalization as its own node (EVAL mode folds it into the Conv).
    torch.onnx.export(model, x, onnx_path, opset_version=OPSET, input_names=["image"], output_names=["probs"],
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    np.save(input_path, x.numpy().astype(np.float32))
    np.save(torch_path, y_torch.astype(np.float32))
    np.save(expected64_path, y_torch64.astype(np.float64))

    ort_python = os.environ.get("MRT_ORT_PYTHON", "python3")
    me = os.path.abspath(__file__)
    subprocess.run([ort_python, me, "--ort", "--fix", onnx_path], check=True)
    subprocess.run([ort_python, me, "--ort", onnx_path, input_path, expected_path], check=True)

    y_ort = np.load(expected_path)
    os.remove(torch_path)
    err = np.max(np.abs(y_ort - y_torch))
    rel = err / np.max(np.abs(y_torch))
    print(f"output {y_ort.shape}: max |ort - torch| = {err:.3g} (relative to max |torch|: {rel:.3g})")
    if not rel < 1e-5:
        sys.exit("ONNX Runtime and PyTorch disagree")
    rel64 = np.max(np.abs(y_torch64 - y_torch)) / np.max(np.abs(y_torch64))
    print(f"max |torch float32 - torch float64| relative to max |float64|: {rel64:.3g}")
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes), {input_path}, {expected_path}, "
          f"{expected64_path}")


if __name__ == "__main__":
    main()
