#!/usr/bin/env python3
"""Dump every module's output of a PyTorch model (forward hooks) in minirt's dump format
(DIR/<sanitised name>.npy + DIR/manifest.json), named, where possible, by the ONNX value the exporter produced
for that module, so `minirt compare` and `minirt diff --against DIR` line them up with an ONNX run.

Name mapping: torch.onnx names a module's nodes by its scope ("/layer1/layer1.0/conv1/Conv" for module
"layer1.0.conv1"). A module's output is taken to be the first output of the last node (in graph order) inside
its scope. Modules with no node in the ONNX graph, or whose output is not a single tensor, keep the name
"torch:<module path>" (compare reports them as missing rather than misaligned).

usage: /usr/bin/python3 tools/dump_torch.py --module FILE.py:FUNC --onnx MODEL.onnx --input X.npy OUTDIR [--double]
  FUNC() returns the torch.nn.Module (in eval mode, with the weights that were exported).
  --double runs the module in float64 (a float64 PyTorch reference for minirt --precision fp64).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import re
import sys

import numpy as np
import torch


def sanitize(name):
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"
    return "_" * len(s) if s in (".", "..") else s


def scope_to_module(scope):
    """'/layer1/layer1.0/conv1' -> 'layer1.0.conv1'"""
    path = ""
    for part in [p for p in scope.split("/") if p]:
        path = part if (not path or part.startswith(path + ".")) else path + "." + part
    return path


def onnx_names(onnx_path):
    """module path -> ONNX value name of its output (from node scopes), using only the onnx protobuf."""
    try:
        import onnx
    except ImportError:
        # without the names, `minirt diff` would match nothing: say so instead of writing an unusable dump
        sys.exit(f"dump_torch.py: --onnx needs the onnx Python module, which {sys.executable} lacks "
                 "(Debian: apt-get install python3-onnx, as scripts/install-deps.sh --models does; "
                 "else pip install onnx)")
    g = onnx.load(onnx_path, load_external_data=False).graph
    last = {}
    for node in g.node:
        if "/" not in node.name or not node.output or not node.output[0]:
            continue
        mod = scope_to_module(node.name.rsplit("/", 1)[0])
        while mod:  # the node belongs to its module and to every enclosing one
            last[mod] = node.output[0]
            mod = mod.rsplit(".", 1)[0] if "." in mod else ""
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", required=True)
    ap.add_argument("--onnx")
    ap.add_argument("--input", action="append", required=True)
    ap.add_argument("--double", action="store_true")
    ap.add_argument("outdir")
    a = ap.parse_args()
    file, func = a.module.rsplit(":", 1)
    spec = importlib.util.spec_from_file_location("user_module", file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = getattr(mod, func)().eval()
    inputs = [torch.from_numpy(np.load(p)) for p in a.input]
    if a.double:
        model = model.double()
        inputs = [t.double() if t.is_floating_point() else t for t in inputs]
    names = onnx_names(a.onnx) if a.onnx else {}
    captured = []

    def hook(path):
        def fn(_module, _inp, out):
            if isinstance(out, torch.Tensor):
                captured.append((path, out.detach().cpu().numpy()))
        return fn

    for path, m in model.named_modules():
        if path:
            m.register_forward_hook(hook(path))
    with torch.no_grad():
        out = model(*inputs)
    os.makedirs(a.outdir, exist_ok=True)
    entries, used, seen = [], set(), set()

    def add(name, value, producer):
        base = sanitize(name)
        f, k = base + ".npy", 1
        while f in used or f == "manifest.json":
            f, k = f"{base}_{k}.npy", k + 1
        used.add(f)
        np.save(os.path.join(a.outdir, f), value)
        v = value.astype(np.float64)
        fin = v[np.isfinite(v)]
        entries.append({"name": name, "file": f, "producer": producer, "op": "torch", "dtype": str(value.dtype),
                        "shape": list(value.shape),
                        "min": float(fin.min()) if fin.size else None, "max": float(fin.max()) if fin.size else None,
                        "mean": float(fin.mean()) if fin.size else None, "std": float(fin.std()) if fin.size else None,
                        "nan_count": int(np.isnan(v).sum()), "inf_count": int(np.isinf(v).sum())})

    for path, value in captured:
        name = names.get(path, "torch:" + path)
        if name in seen:  # a container and its last child produce the same value: keep the first
            continue
        seen.add(name)
        add(name, value, path)
    if isinstance(out, torch.Tensor):
        add("torch:output", out.detach().cpu().numpy(), "(model)")

    def sha(p):
        return hashlib.sha256(open(p, "rb").read()).hexdigest()
    manifest = {"provenance": {"engine": f"torch {torch.__version__}", "device": "cpu",
                               "precision": "fp64" if a.double else "fp32", "threads": torch.get_num_threads(),
                               "model": {"path": a.onnx or file, "sha256": sha(a.onnx) if a.onnx else ""},
                               "inputs": [{"path": p, "sha256": sha(p)} for p in a.input]},
                "tensors": entries}
    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    mapped = sum(1 for e in entries if not e["name"].startswith("torch:"))
    print(f"{len(entries)} tensors written to {a.outdir} ({mapped} named by their ONNX value)")


if __name__ == "__main__":
    sys.exit(main())
