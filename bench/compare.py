#!/usr/bin/env python3
"""minirt vs ONNX Runtime (and optionally PyTorch), side by side on the same models, inputs and thread counts.

    python3 bench/compare.py [--minirt build/minirt] [--models resnet18 ...] [--threads 1 2] [--rounds 5]
                             [--duration 2] [--quick] [--torch] [--out bench/results]

The models come from models/scripts/export_models.py (random weights, fixed seeds), exported once into
--cache with a Python that has torch (MRT_TORCH_PYTHON, default /usr/bin/python3: Debian's python3-torch).
Runs alternate: in each of --rounds rounds every engine runs for --duration seconds after its warm-up, so
drifts of this noisy machine hit all engines alike. The report gives the medians over all runs, the spread of
the round medians, and the ratio ORT time / minirt time (> 1: minirt is faster). Before timing, each model's
output is compared between the engines; a difference above 1e-3 (relative to the largest reference value) is
flagged in the report.

The DCNv2 model uses custom::deform_conv2d (torchvision's export); ONNX Runtime runs a copy rewritten to the
standard DeformConv (opset 19), the same computation.

Installs onnxruntime, numpy and matplotlib with pip when missing (torch is never installed: --torch uses the
torch Python's torchvision).
"""
import argparse
import datetime
import importlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "swin_t", "dcnv2", "transformer_encoder"]


def ensure(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        print(f"installing {' '.join(missing)} with pip", flush=True)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *missing])


def export_models(names, cache):
    os.makedirs(cache, exist_ok=True)
    todo = [n for n in names if not os.path.exists(os.path.join(cache, n + ".onnx"))]
    if not todo:
        return
    py = os.environ.get("MRT_TORCH_PYTHON", "/usr/bin/python3")
    try:
        subprocess.check_call([py, "-c", "import torch, torchvision"], stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        sys.exit(f"compare.py: {py} has no torch/torchvision to export the models "
                 "(apt-get install python3-torch python3-torchvision, or set MRT_TORCH_PYTHON)")
    print(f"exporting {' '.join(todo)} into {cache}", flush=True)
    subprocess.check_call([py, os.path.join(ROOT, "models/scripts/export_models.py"), cache, *todo])


def dcnv2_for_ort(src, dst):
    """custom::deform_conv2d (input, weight, offset, mask, bias) -> ONNX DeformConv (X, W, offset, B, mask)."""
    import onnx
    from onnx import helper
    m = onnx.load(src)
    inits = {t.name: t for t in m.graph.initializer}
    for i, n in enumerate(m.graph.node):
        if n.op_type != "deform_conv2d":
            continue
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        w = inits[n.input[1]]
        kernel = list(w.dims[2:])
        pads = list(a["padding"]) * 2
        inputs = [n.input[0], n.input[1], n.input[2], n.input[4] if len(n.input) > 4 else "",
                  n.input[3] if a.get("use_mask", 1) else ""]
        new = helper.make_node("DeformConv", inputs, list(n.output), name=n.name, kernel_shape=kernel,
                               strides=list(a["stride"]), pads=pads, dilations=list(a["dilation"]),
                               group=a.get("groups", 1), offset_group=a.get("offset_groups", 1))
        m.graph.node.remove(n)
        m.graph.node.insert(i, new)
    del m.opset_import[:]
    m.opset_import.extend([helper.make_opsetid("", 19)])
    m.ir_version = min(m.ir_version, 9) if m.ir_version else 9
    onnx.save(m, dst)


def time_loop(fn, duration, warmup_s):
    t0 = time.perf_counter()
    while True:
        fn()
        if time.perf_counter() - t0 >= warmup_s:
            break
    times = []
    t0 = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - t0 < duration:
        r0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - r0) * 1e3)
    return times


def minirt_round(minirt, model, inp, threads, duration, warmup_ms):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        subprocess.check_call([minirt, "bench", model, "--input", inp, "--threads", str(threads),
                               "--warmup-ms", str(warmup_ms), "--iterations", "5", "--duration", str(duration),
                               "--json", out, "--quiet"], stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def minirt_output(minirt, model, inp):
    d = tempfile.mkdtemp()
    try:
        subprocess.check_call([minirt, "run", model, "--input", inp, "--output-dir", d], stdout=subprocess.DEVNULL)
        import numpy as np
        return np.load(os.path.join(d, sorted(os.listdir(d))[0]))
    finally:
        shutil.rmtree(d)


def run_torch(name, cache, threads, duration, warmup_s):
    py = os.environ.get("MRT_TORCH_PYTHON", "/usr/bin/python3")
    code = f"""
import sys, time, json, numpy as np, torch
sys.path.insert(0, {os.path.join(ROOT, 'models/scripts')!r})
import export_models as em
torch.set_num_threads({threads})
gen = torch.Generator().manual_seed(em.SEED)
torch.manual_seed(em.SEED)
model, x = em.MODELS[{name!r}](gen)
em._randomize_norms(model, gen)
x = torch.from_numpy(np.load({os.path.join(cache, name + '_input.npy')!r}))
model.eval()
times = []
with torch.no_grad():
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < {warmup_s}:
        model(x)
    t0 = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - t0 < {duration}:
        r0 = time.perf_counter(); model(x); times.append((time.perf_counter() - r0) * 1e3)
print(json.dumps(times))
"""
    out = subprocess.check_output([py, "-c", code], stderr=subprocess.DEVNULL)
    return json.loads(out.decode().strip().splitlines()[-1])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minirt", default=os.path.join(ROOT, "build/minirt"))
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per engine per round")
    ap.add_argument("--warmup-ms", type=float, default=200)
    ap.add_argument("--cache", default=os.path.join(ROOT, "build/bench-models"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results"))
    ap.add_argument("--quick", action="store_true", help="1 round of 0.5 s (a smoke test, not a measurement)")
    ap.add_argument("--torch", action="store_true", help="also time PyTorch (eager, the torch Python)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 0.5
    ensure("numpy", "onnxruntime", "matplotlib", "onnx")
    import numpy as np
    import onnxruntime as ort
    if not os.access(args.minirt, os.X_OK):
        sys.exit(f"compare.py: no minirt at {args.minirt} (build it: cmake -S . -B build && cmake --build build -j)")
    export_models(args.models, args.cache)

    rows = {}
    for name in args.models:
        model = os.path.join(args.cache, name + ".onnx")
        inp = os.path.join(args.cache, name + "_input.npy")
        ort_model = model
        if name == "dcnv2":
            ort_model = os.path.join(args.cache, "dcnv2_ort.onnx")
            dcnv2_for_ort(model, ort_model)
        x = np.load(inp)
        for threads in args.threads:
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            sess = ort.InferenceSession(ort_model, so, providers=["CPUExecutionProvider"])
            iname = sess.get_inputs()[0].name
            ref = sess.run(None, {iname: x})[0]
            got = minirt_output(args.minirt, model, inp)
            err = float(np.max(np.abs(got.astype(np.float64) - ref)) / max(1e-30, float(np.max(np.abs(ref)))))
            res = {"minirt": [], "ort": [], "torch": [], "round_medians": {"minirt": [], "ort": [], "torch": []},
                   "rel_err": err}
            print(f"{name} x{threads}: output difference minirt vs ORT {err:.2e}", flush=True)
            for r in range(args.rounds):
                mj = minirt_round(args.minirt, model, inp, threads, args.duration, args.warmup_ms)
                res["minirt"] += mj["times_ms"]
                res["round_medians"]["minirt"].append(mj["median_ms"])
                res["provenance"] = mj["provenance"]
                ot = time_loop(lambda: sess.run(None, {iname: x}), args.duration, args.warmup_ms / 1e3)
                res["ort"] += ot
                res["round_medians"]["ort"].append(statistics.median(ot))
                if args.torch:
                    tt = run_torch(name, args.cache, threads, args.duration, args.warmup_ms / 1e3)
                    res["torch"] += tt
                    res["round_medians"]["torch"].append(statistics.median(tt))
                print(f"  round {r + 1}: minirt {mj['median_ms']:.3f} ms, ORT {statistics.median(ot):.3f} ms",
                      flush=True)
            rows[(name, threads)] = res
    write_report(args, rows, ort.__version__)


def write_report(args, rows, ort_version):
    os.makedirs(args.out, exist_ok=True)
    date = datetime.date.today().isoformat()
    machine = platform.node() or "machine"
    base = os.path.join(args.out, f"{date}-{machine}")
    prov = next(iter(rows.values())).get("provenance", {})
    lines = [f"# minirt vs ONNX Runtime: {date}", "",
             f"- machine: {cpu_model()}, {os.cpu_count()} cores ({platform.platform()})",
             f"- minirt {prov.get('version', '?')} (commit {prov.get('commit', '?')}), BLAS kernels "
             f"{prov.get('blas_core', '?')}; onnxruntime {ort_version} (CPUExecutionProvider, sequential, "
             "all graph optimizations)",
             f"- command: `python3 bench/compare.py {' '.join(sys.argv[1:])}`",
             f"- {args.rounds} alternating rounds x {args.duration} s per engine after a {args.warmup_ms:.0f} ms "
             "warm-up; medians over all runs; spread = min..max of the round medians",
             "- ratio = ORT median / minirt median (> 1: minirt is faster)", ""]
    for threads in args.threads:
        lines += [f"## {threads} thread{'s' if threads > 1 else ''}", "",
                  "| model | minirt ms | spread | ORT ms | spread | ratio | "
                  + ("torch ms | " if args.torch else "") + "max rel. diff vs ORT |",
                  "|---|---|---|---|---|---|" + ("---|" if args.torch else "") + "---|"]
        for (name, t), r in rows.items():
            if t != threads:
                continue
            mm, om = statistics.median(r["minirt"]), statistics.median(r["ort"])
            sp = lambda k: f"{min(r['round_medians'][k]):.2f}..{max(r['round_medians'][k]):.2f}"
            flag = " **mismatch**" if r["rel_err"] > 1e-3 else ""
            tcol = f"{statistics.median(r['torch']):.2f} | " if args.torch and r["torch"] else ""
            lines.append(f"| {name} | {mm:.2f} | {sp('minirt')} | {om:.2f} | {sp('ort')} | {om / mm:.2f} | {tcol}"
                         f"{r['rel_err']:.1e}{flag} |")
        lines.append("")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = sorted({n for n, _ in rows})
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(args.threads)
        for i, t in enumerate(args.threads):
            ratios = [statistics.median(rows[(n, t)]["ort"]) / statistics.median(rows[(n, t)]["minirt"]) for n in names]
            ax.bar([k + i * width for k in range(len(names))], ratios, width, label=f"{t} thread(s)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([k + width * (len(args.threads) - 1) / 2 for k in range(len(names))], names, rotation=20)
        ax.set_ylabel("ORT time / minirt time")
        ax.set_title("minirt vs ONNX Runtime (> 1: minirt faster)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(base + ".png", dpi=100)
        lines += [f"![ratios]({os.path.basename(base)}.png)", ""]
    except ImportError:
        lines += ["(matplotlib missing: no chart)", ""]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines))
    with open(base + ".json", "w") as f:
        json.dump({f"{n}@{t}": {k: v for k, v in r.items() if k != "provenance"} for (n, t), r in rows.items()}, f)
    print(f"report: {base}.md")


if __name__ == "__main__":
    main()
