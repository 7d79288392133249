#!/usr/bin/env python3
"""Dump every intermediate tensor of an ONNX model as ONNX Runtime computes it, in minirt's dump format
(DIR/<sanitised name>.npy + DIR/manifest.json), so `minirt compare` and `minirt diff --against DIR` can use it.

Every value the graph produces is added as a graph output (ORT can't return intermediates otherwise); the model
is run once on the CPU provider with graph optimisations off, so values are not fused away.

usage: python3 tools/dump_ort.py MODEL.onnx OUTDIR [--input NAME=PATH.npy | PATH.npy ...] [--threads N]
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
except ImportError:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "onnx", "onnxruntime", "numpy"])
    import numpy as np
    import onnx
    import onnxruntime as ort


def sanitize(name):
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"
    return "_" * len(s) if s in (".", "..") else s


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("outdir")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    model = onnx.load(a.model)
    producers = {}
    for node in model.graph.node:
        for o in node.output:
            if o:
                producers[o] = (node.name, node.op_type)
    declared = {o.name for o in model.graph.output}
    for name in producers:
        if name not in declared:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = a.threads
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    feeds, paths = {}, []
    for arg in a.input:
        name, path = (arg.split("=", 1) if "=" in arg and not os.path.exists(arg) else (None, arg))
        name = name or next(n for n in graph_inputs if n not in feeds)
        feeds[name] = np.load(path)
        paths.append(path)
    names = [o.name for o in sess.get_outputs()]
    values = sess.run(names, feeds)
    os.makedirs(a.outdir, exist_ok=True)
    entries, used = [], set()

    def add(name, value, producer, op):
        base = sanitize(name)
        file, k = base + ".npy", 1
        while file in used or file == "manifest.json":
            file, k = f"{base}_{k}.npy", k + 1
        used.add(file)
        np.save(os.path.join(a.outdir, file), value)
        v = value.astype(np.float64) if value.dtype.kind in "fiub" else None
        finite = v[np.isfinite(v)] if v is not None else None
        stat = lambda f: float(f(finite)) if finite is not None and finite.size else None
        entries.append({"name": name, "file": file, "producer": producer, "op": op, "dtype": str(value.dtype),
                        "shape": list(value.shape), "min": stat(np.min), "max": stat(np.max),
                        "mean": stat(np.mean), "std": stat(np.std),
                        "nan_count": int(np.isnan(v).sum()) if v is not None else 0,
                        "inf_count": int(np.isinf(v).sum()) if v is not None else 0})

    for name, value in feeds.items():
        add(name, value, None, None)
    order = [o for node in model.graph.node for o in node.output if o]
    for name in order:
        if name in names:
            add(name, values[names.index(name)], *producers[name])
    manifest = {"provenance": {"engine": f"onnxruntime {ort.__version__}", "device": "cpu", "precision": "fp32",
                               "threads": a.threads, "graph_optimizations": "disabled",
                               "model": {"path": a.model, "sha256": sha256(a.model)},
                               "inputs": [{"path": p, "sha256": sha256(p)} for p in paths]},
                "tensors": entries}
    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(entries)} tensors written to {a.outdir}")


if __name__ == "__main__":
    main()
