"""minirt's accuracy tools from Python: compare (the CLI's statistics), diff (the first diverging node), and the
dump format (a folder of <sanitised name>.npy plus manifest.json, docs/accuracy.md)."""
import ctypes
import json
import os
import re
import sys
import tempfile

import numpy as np

from . import _lib
from ._errors import Error, InvalidArgument, check
from ._session import _fill_tensor


class CompareResult:
    """`minirt compare`'s statistics for one tensor against its reference (the fields of `compare --json`):
    passed, reason, max_abs_err, mean_abs_err, median_abs_err, max_rel_err, ..., cosine, psnr_db, max_ulp,
    fail_fraction, nan_mismatch, inf_mismatch, worst_index, worst_a, worst_b, min_atol_to_pass, min_rtol_to_pass.
    Non-finite statistics are None (JSON has no Inf). Truthy when passed."""

    def __init__(self, fields):
        fields = dict(fields)
        fields.pop("name", None)
        self.__dict__.update(fields)
        self._fields = fields

    def __bool__(self):
        return bool(self.passed)

    def as_dict(self):
        return dict(self._fields)

    def __repr__(self):
        return (f"CompareResult(passed={self.passed}, max_abs_err={self.max_abs_err}, "
                f"max_rel_err={self.max_rel_err}, reason={self.reason!r})")


def compare(a, b, atol=1e-5, rtol=1e-5, check_error_stat="elemwise", error_quantile=0.99, equal_nan=False):
    """Compare array a against the reference b with Polygraphy's rule (an element fails only when |a-b| > atol and
    |a-b| > rtol*|b|), by check_error_stat elemwise|max|mean|median|quantile. NaN in either fails that element
    unless equal_nan (then NaN against NaN at the same position is equal)."""
    keep = []
    ta, tb = _lib.Tensor(), _lib.Tensor()
    _fill_tensor(ta, a, keep, "a")
    _fill_tensor(tb, b, keep, "b")
    ptr = _lib.lib.mrt_tool_compare_json(ctypes.byref(ta), ctypes.byref(tb), float(atol), float(rtol),
                                         check_error_stat.encode(), float(error_quantile), bool(equal_nan))
    if not ptr:
        check(1)
    try:
        text = ctypes.string_at(ptr).decode()
    finally:
        _lib.lib.mrt_tool_free(ptr)
    return CompareResult(json.loads(text))


def _captured(argv):
    """Run the CLI in-process with its stdout and stderr captured: (exit status, stdout, stderr)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            rc = _lib.lib.mrt_tool_main(len(argv), _lib.c_strings(argv))
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return rc, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


def cli(args, capture=False):
    """The minirt CLI in this process: cli(["compare", "a.npy", "b.npy"]) returns the exit status (with capture,
    (status, stdout, stderr))."""
    argv = ["minirt"] + [os.fspath(a) for a in args]
    if capture:
        return _captured(argv)
    sys.stdout.flush()
    return _lib.lib.mrt_tool_main(len(argv), _lib.c_strings(argv))


def sanitize(name):
    """The file stem minirt's --output-dir and dumps use for a value name."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"
    return "_" * len(s) if s in (".", "..") else s


class DiffResult:
    """`minirt diff`'s findings: passed (no node's own error exceeds tolerance), first_divergence (the first node
    whose local, teacher-forced error is too large, or None), first_chained_divergence, nodes (per node output in
    execution order: node, op, chained and local CompareResults) and report (the CLI's text)."""

    def __init__(self, rc, report, data):
        self.passed = rc == 0
        self.report = report
        self.reference = data.get("reference")
        self.first_divergence = data.get("first_divergence")
        self.first_chained_divergence = data.get("first_chained_divergence")
        self.nodes = [{"node": n["node"], "op": n["op"], "chained": CompareResult(n["chained"]),
                       "local": CompareResult(n["local"]) if n.get("local") else None} for n in data.get("nodes", [])]

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return f"DiffResult(passed={self.passed}, first_divergence={self.first_divergence!r})"


def diff(model, inputs, against="fp64", atol=1e-4, rtol=1e-4, equal_nan=False, threads=None, no_winograd=False,
         plugins=()):
    """Find the first node whose own error is too large (`minirt diff`). model: a path, bytes or onnx.ModelProto;
    inputs: {name: array} (or a list in graph-input order); against: "fp64" (the float64 oracle), "cpu", "cuda",
    a dump folder (minirt's, tools/dump_ort.py's, or any folder of .npy files named by value or sanitised value
    name), or {value name: array} (another framework's tensors)."""
    with tempfile.TemporaryDirectory(prefix="minirt_diff_") as tmp:
        if hasattr(model, "SerializeToString"):
            model = model.SerializeToString()
        if isinstance(model, (bytes, bytearray)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
            model = path
        argv = ["minirt", "diff", os.fspath(model)]
        if isinstance(inputs, dict):
            items = list(inputs.items())
        else:
            from ._session import Model
            items = list(zip([n for n, _ in Model(model).inputs()], inputs))
        for k, (name, value) in enumerate(items):
            if isinstance(value, (str, os.PathLike)):
                argv += ["--input", f"{name}={os.fspath(value)}"]
                continue
            p = os.path.join(tmp, f"input_{k}.npy")
            np.save(p, np.asarray(value))
            argv += ["--input", f"{name}={p}"]
        if isinstance(against, dict):
            ref = os.path.join(tmp, "reference")
            os.makedirs(ref)
            for name, value in against.items():
                np.save(os.path.join(ref, sanitize(name) + ".npy"), np.asarray(value))
            against = ref
        json_path = os.path.join(tmp, "diff.json")
        argv += ["--against", os.fspath(against), "--atol", repr(float(atol)), "--rtol", repr(float(rtol)),
                 "--json", json_path]
        if equal_nan:
            argv.append("--equal-nan")
        if threads:
            argv += ["--threads", str(int(threads))]
        if no_winograd:
            argv.append("--no-winograd")
        for p in plugins:
            argv += ["--plugin", os.fspath(p)]
        rc, out, err = _captured(argv)
        if not os.path.exists(json_path):
            msg = err.strip().replace("minirt: error: ", "") or f"minirt diff exited {rc}"
            raise (InvalidArgument if rc == 2 else Error)(msg)
        with open(json_path) as f:
            data = json.load(f)
        return DiffResult(rc, out, data)


def load_dump(path):
    """The tensors of a dump folder as {name: array}, in the manifest's order (names from manifest.json; a folder
    without one: every .npy file, named by its stem)."""
    manifest = os.path.join(path, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            entries = json.load(f)["tensors"]
        return {e["name"]: np.load(os.path.join(path, e["file"]), allow_pickle=False) for e in entries}
    return {fn[:-4]: np.load(os.path.join(path, fn), allow_pickle=False)
            for fn in sorted(os.listdir(path)) if fn.endswith(".npy")}


def save_dump(path, tensors, producers=None, provenance=None):
    """Write {name: array} as a dump folder minirt reads (`minirt compare`, `minirt diff --against`): one
    <sanitised name>.npy per tensor and a manifest.json naming each. producers: {name: (node, op)}, optional."""
    os.makedirs(path, exist_ok=True)
    entries, used = [], set()
    for name, value in tensors.items():
        value = np.asarray(value)
        base = sanitize(name)
        file, k = base + ".npy", 1
        while file in used or file == "manifest.json":
            file, k = f"{base}_{k}.npy", k + 1
        used.add(file)
        np.save(os.path.join(path, file), value)
        v = value.astype(np.float64) if value.dtype.kind in "fiub" else None
        finite = v[np.isfinite(v)] if v is not None else None

        def stat(f):
            return float(f(finite)) if finite is not None and finite.size else None

        producer, op = (producers or {}).get(name, (None, None))
        entries.append({"name": name, "file": file, "producer": producer, "op": op, "dtype": str(value.dtype),
                        "shape": list(value.shape), "min": stat(np.min), "max": stat(np.max),
                        "mean": stat(np.mean), "std": stat(np.std),
                        "nan_count": int(np.isnan(v).sum()) if v is not None else 0,
                        "inf_count": int(np.isinf(v).sum()) if v is not None else 0})
    prov = {"engine": "python (minirt.save_dump)"}
    prov.update(provenance or {})
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump({"provenance": prov, "tensors": entries}, f, indent=1)
