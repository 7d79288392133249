#!/usr/bin/env python3
"""minirt vs ONNX Runtime (and optionally PyTorch), side by side: same models, same inputs, same thread counts.

examples:
    python3 bench/compare.py                                     # six models, 1 and 2 threads, 5 rounds x 2 s
    python3 bench/compare.py --quick --models resnet18 --threads 1   # a smoke test (1 round x 0.5 s)
    python3 bench/compare.py --torch                             # also PyTorch eager

Models: ResNet-18, MobileNetV2, EfficientNet-B0, Swin-T, a DCNv2 CNN and a Transformer encoder, random weights
with fixed seeds, exported by models/scripts/export_models.py into --cache (once; later runs reuse the files).
The export needs a Python with torch and torchvision: $MRT_TORCH_PYTHON, default /usr/bin/python3 (Debian's
python3-torch). Each model has one input "input" (NAME_input.npy) and one output.

Procedure, per model and thread count:
  1. accuracy: each engine runs once; minirt's output is compared with ONNX Runtime's (max |diff| / max |ref|).
     Above 1e-3 the row is flagged as a mismatch in the report (the timings are still reported).
  2. timing: --rounds rounds; in each, minirt, then ONNX Runtime (then PyTorch) run for --duration seconds
     after a --warmup-ms warm-up (and at least 5 runs), so the drifts of a noisy machine hit every engine alike.
     minirt times itself (`minirt bench --json`); ONNX Runtime and PyTorch are timed with perf_counter around
     one inference call.
  Reported: the median over all runs of all rounds, the spread (min..max of the round medians) and the ratio
  ORT time / minirt time (> 1: minirt is faster): the median over the rounds of the ratio of the two engines'
  round medians.

Engines: minirt is --minirt (build/minirt). ONNX Runtime: CPUExecutionProvider, intra_op_num_threads = the
thread count, inter_op_num_threads = 1, sequential execution, all graph optimizations. PyTorch (--torch): the
same nn.Module rebuilt from export_models.py in a long-lived $MRT_TORCH_PYTHON process, torch.set_num_threads,
no_grad, eager. The DCNv2 model uses custom::deform_conv2d, which only minirt runs; ONNX Runtime gets a copy
rewritten to the standard DeformConv (models/scripts/make_dcnv2_ort.py). Where ONNX Runtime cannot run a model
(an onnxruntime without a CPU DeformConv kernel), the row says why, the accuracy check uses the PyTorch output
saved by the export, and --torch gives the comparison.

Output: --out/<date>-<machine>.md (machine, versions, command line, one table per thread count), a PNG bar
chart of the ratios next to it, and the raw times as .json; a later run on the same day writes <date>-<machine>-2
and so on, never over an earlier report. Exit status 1 when a row has a mismatch or an error
(the report is written all the same).

Installs numpy, onnxruntime, onnx and matplotlib with pip when missing; where pip may not install (Debian's
externally managed python3), into a venv build/bench-venv (with the system packages visible) and re-runs itself
there. torch is never installed: --torch uses $MRT_TORCH_PYTHON.
"""
import argparse
import datetime
import importlib
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PY = os.environ.get("MRT_TORCH_PYTHON", "/usr/bin/python3")
DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "swin_t", "dcnv2", "transformer_encoder"]
MISMATCH = 1e-3      # max |minirt - ref| / max |ref| above this is flagged
MIN_RUNS = 5         # every engine measures at least this many runs per round
VENV = os.path.join(ROOT, "build", "bench-venv")


# ------------------------------------------------------------------ dependencies

def ensure(modules):
    """pip-install the missing modules; if this Python refuses (PEP 668), re-run in a venv under build/."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    print(f"compare.py: installing {' '.join(missing)} with pip", flush=True)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        importlib.invalidate_caches()
        return
    refused = "externally-managed-environment" in r.stderr or "No module named pip" in r.stderr
    if not refused or sys.prefix != sys.base_prefix:  # a real failure, or already in a venv
        sys.stderr.write(r.stderr)
        sys.exit(f"compare.py: pip could not install {' '.join(missing)} into {sys.prefix}")
    vpy = os.path.join(VENV, "bin", "python3")
    if not os.path.exists(vpy):
        print(f"compare.py: this Python cannot pip-install; creating the venv {VENV}", flush=True)
        if subprocess.call([sys.executable, "-m", "venv", "--system-site-packages", VENV]) != 0:
            sys.exit("compare.py: could not create a venv (Debian: apt-get install python3-venv), or run this "
                     f"script with a Python that has {' '.join(missing)}")
    print(f"compare.py: re-running with {vpy}", flush=True)
    os.execv(vpy, [vpy, os.path.abspath(__file__), *sys.argv[1:]])


def torch_python_check():
    """None when $MRT_TORCH_PYTHON imports torch and torchvision, else why not."""
    try:
        r = subprocess.run([TORCH_PY, "-c", "import numpy, torch, torchvision"], capture_output=True, text=True)
    except OSError as e:
        return f"{TORCH_PY}: {e.strerror}"
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        return f"{TORCH_PY}: {lines[-1] if lines else 'exit status %d' % r.returncode}"
    return None


# ------------------------------------------------------------------ models

def export_models(names, cache):
    """Export (once) every model whose .onnx or input is missing from the cache."""
    os.makedirs(cache, exist_ok=True)
    todo = [n for n in names if not all(os.path.exists(os.path.join(cache, n + s))
                                        for s in (".onnx", "_input.npy", "_torch.npy"))]
    if not todo:
        return
    why = torch_python_check()
    if why:
        sys.exit(f"compare.py: the models must be exported with a Python that has torch and torchvision, and "
                 f"{why}\n(Debian: apt-get install python3-torch python3-torchvision; or set MRT_TORCH_PYTHON)")
    print(f"compare.py: exporting {' '.join(todo)} into {cache} with {TORCH_PY}", flush=True)
    r = subprocess.call([TORCH_PY, os.path.join(ROOT, "models", "scripts", "export_models.py"), cache, *todo])
    if r != 0:
        sys.exit(f"compare.py: export_models.py failed (exit status {r})")


def ort_model(name, model, cache):
    """The file ONNX Runtime runs: the model itself, or for DCNv2 a copy with the standard DeformConv."""
    if name != "dcnv2":
        return model
    dst = os.path.join(cache, "dcnv2_ort.onnx")
    if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(model):
        sys.path.insert(0, os.path.join(ROOT, "models", "scripts"))
        import make_dcnv2_ort
        make_dcnv2_ort.convert(model, dst)
    return dst


def rel_diff(got, ref):
    import numpy as np
    if got.shape != ref.shape:
        return math.inf, f"shape {list(got.shape)} vs {list(ref.shape)}"
    err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)), initial=0.0))
    return err / max(float(np.max(np.abs(ref.astype(np.float64)), initial=0.0)), 1e-30), None


# ------------------------------------------------------------------ engines

def _check(cmd, what):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise RuntimeError(f"{what} failed (exit status {r.returncode}): {lines[-1] if lines else ''}")


def minirt_output(minirt, model, inp):
    import numpy as np
    d = tempfile.mkdtemp(prefix="compare-")
    try:
        _check([minirt, "run", model, "--input", inp, "--output-dir", d], "minirt run")
        outs = sorted(f for f in os.listdir(d) if f.endswith(".npy"))
        if len(outs) != 1:
            raise RuntimeError(f"minirt run wrote {len(outs)} outputs, expected 1")
        return np.load(os.path.join(d, outs[0]))
    finally:
        shutil.rmtree(d)


def minirt_round(minirt, model, inp, threads, duration, warmup_ms):
    """One round of `minirt bench`; its JSON (times_ms, median_ms, provenance, ...)."""
    fd, out = tempfile.mkstemp(suffix=".json", prefix="compare-")
    os.close(fd)
    try:
        _check([minirt, "bench", model, "--input", inp, "--threads", str(threads), "--warmup-ms", str(warmup_ms),
                "--iterations", str(MIN_RUNS), "--duration", str(duration), "--json", out, "--quiet"],
               "minirt bench")
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def time_loop(fn, duration, warmup_s):
    """The same rule as `minirt bench`: warm up for warmup_s, then at least MIN_RUNS runs and duration seconds."""
    t0 = time.perf_counter()
    fn()
    while time.perf_counter() - t0 < warmup_s:
        fn()
    times = []
    t0 = time.perf_counter()
    while len(times) < MIN_RUNS or time.perf_counter() - t0 < duration:
        r0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - r0) * 1e3)
    return times


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_failure(name, exc):
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if name == "dcnv2" and "DeformConv" in str(exc):
        return "ORT: no CPU DeformConv kernel", msg
    return "ORT: cannot run the model", msg


# The PyTorch side: a long-lived process (Debian's python has torch, this one need not) that rebuilds the
# model exactly as export_models.py does, checks it against the exported reference output, then answers
# "DURATION WARMUP_S" lines with a JSON list of run times in ms.
TORCH_WORKER = r"""
import json, sys, time
import numpy as np, torch
sys.path.insert(0, sys.argv[1])
import export_models as em
name, cache, threads = sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
torch.set_num_interop_threads(1)
gen = torch.Generator().manual_seed(em.SEED)
torch.manual_seed(em.SEED)
model, _ = em.MODELS[name](gen)
em._randomize_norms(model, gen)
model.eval()
x = torch.from_numpy(np.load(f"{cache}/{name}_input.npy"))
ref = np.load(f"{cache}/{name}_torch.npy").astype(np.float64)
with torch.no_grad():
    y = model(x).numpy().astype(np.float64)
err = float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30)) if y.shape == ref.shape else float("inf")
print(json.dumps({"version": torch.__version__, "rel_err_vs_export": err}), flush=True)
for line in sys.stdin:
    duration, warmup_s = map(float, line.split())
    with torch.no_grad():
        t0 = time.perf_counter()
        model(x)
        while time.perf_counter() - t0 < warmup_s:
            model(x)
        times = []
        t0 = time.perf_counter()
        while len(times) < %d or time.perf_counter() - t0 < duration:
            r0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - r0) * 1e3)
    print(json.dumps(times), flush=True)
""" % MIN_RUNS


class TorchWorker:
    def __init__(self, name, cache, threads):
        self.err = tempfile.TemporaryFile("w+")  # a file, not a pipe: a chatty stderr must not block the worker
        self.p = subprocess.Popen([TORCH_PY, "-c", TORCH_WORKER, os.path.join(ROOT, "models", "scripts"), name,
                                   cache, str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True)
        self.info = self._reply()

    def _reply(self):
        line = self.p.stdout.readline()
        if not line:
            self.p.wait(timeout=30)
            self.err.seek(0)
            err = self.err.read().strip().splitlines()
            raise RuntimeError(f"the PyTorch worker died: {err[-1] if err else 'no output'}")
        return json.loads(line)

    def round(self, duration, warmup_s):
        self.p.stdin.write(f"{duration} {warmup_s}\n")
        self.p.stdin.flush()
        return self._reply()

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        self.err.close()


# ------------------------------------------------------------------ measuring

def handoff_ns(pool):
    """The thread pool's cross-core hand-off now (bench/pool.c's 'worker's task starts N ns after the post'), or None.
    This VM flips between ~100 ns and ~550 ns (its two vCPUs near or far apart); two-thread timings move with it."""
    try:
        r = subprocess.run([pool], capture_output=True, text=True, timeout=30)
        m = re.search(r"starts (-?\d+) ns", r.stdout)
        return int(m.group(1)) if m else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def handoff_text(h):
    """handoff_ns's value for a report: the ns, '?' when unknown, 'busy' when the other core was taken"""
    return "?" if h is None else "busy" if h < 0 or h > 10000 else str(h)


def measure(args, name, threads, np):
    """One row: accuracy check then alternating rounds. Errors end up in the row, not as exceptions."""
    model = os.path.join(args.cache, name + ".onnx")
    inp = os.path.join(args.cache, name + "_input.npy")
    engines = ["minirt", "ort"] + (["torch"] if args.torch else [])
    row = {"model": name, "threads": threads, "times": {e: [] for e in engines},
           "round_medians": {e: [] for e in engines}, "ort_error": None, "error": None, "notes": []}
    x = np.load(inp)

    try:
        sess = ort_session(ort_model(name, model, args.cache), threads)
        iname = sess.get_inputs()[0].name
        ref, row["check_against"] = sess.run(None, {iname: x})[0], "ORT"
    except Exception as e:  # noqa: BLE001 (onnxruntime raises its own exception types)
        row["ort_error"], detail = ort_failure(name, e)
        row["notes"].append(f"{name}: {row['ort_error']} ({detail})")
        engines.remove("ort")
        sess = None
        ref, row["check_against"] = np.load(os.path.join(args.cache, name + "_torch.npy")), "PyTorch (export)"
        print(f"{name} x{threads}: {row['ort_error']}: {detail}", flush=True)
        if not args.torch:
            print("  (--torch compares with PyTorch instead)", flush=True)
    try:
        got = minirt_output(args.minirt, model, inp)
    except RuntimeError as e:
        row["error"] = f"minirt: {e}"
        print(f"{name} x{threads}: {row['error']}", flush=True)
        return row
    row["rel_err"], shape_msg = rel_diff(got, ref)
    if shape_msg:
        row["notes"].append(f"{name}: output {shape_msg}")
    flag = "  ** MISMATCH **" if row["rel_err"] > MISMATCH else ""
    print(f"{name} x{threads}: max |minirt - {row['check_against']}| / max |ref| = {row['rel_err']:.2e}{flag}",
          flush=True)

    worker = None
    try:
        if args.torch:
            worker = TorchWorker(name, args.cache, threads)
            row["torch_rel_err_vs_export"] = worker.info["rel_err_vs_export"]
            if worker.info["rel_err_vs_export"] > MISMATCH:
                row["notes"].append(f"{name}: the rebuilt PyTorch model differs from the exported one "
                                    f"({worker.info['rel_err_vs_export']:.1e})")
        hand = []  # per round: the pool's hand-off in ns, on two threads or more
        for r in range(args.rounds):
            meds = {}
            if args.pool and threads > 1:
                hand.append(handoff_ns(args.pool))
            mj = minirt_round(args.minirt, model, inp, threads, args.duration, args.warmup_ms)
            row["provenance"] = mj.get("provenance", {})
            row["times"]["minirt"] += mj["times_ms"]
            meds["minirt"] = statistics.median(mj["times_ms"])
            if sess is not None:
                t = time_loop(lambda: sess.run(None, {iname: x}), args.duration, args.warmup_ms / 1e3)
                row["times"]["ort"] += t
                meds["ort"] = statistics.median(t)
            if worker is not None:
                t = worker.round(args.duration, args.warmup_ms / 1e3)
                row["times"]["torch"] += t
                meds["torch"] = statistics.median(t)
            for e, m in meds.items():
                row["round_medians"][e].append(m)
            print(f"  round {r + 1}/{args.rounds}: " + ", ".join(f"{LABEL[e]} {m:.3f} ms" for e, m in meds.items()),
                  flush=True)
    except RuntimeError as e:
        row["error"] = str(e)
        print(f"{name} x{threads}: {e}", flush=True)
    finally:
        if hand:
            row["notes"].append(f"{name} x{threads}: hand-off before each round (ns): " +
                                " ".join(handoff_text(h) for h in hand))
        if worker is not None:
            row["torch_version"] = worker.info["version"]
            worker.close()
    pt = row.get("provenance", {}).get("threads")
    if pt is not None and pt != threads:
        row["notes"].append(f"{name}: minirt reports {pt} threads, {threads} were asked for")
    return row


LABEL = {"minirt": "minirt", "ort": "ORT", "torch": "PyTorch"}


def median(row, engine):
    t = row["times"].get(engine)
    return statistics.median(t) if t else math.nan


def ratio(row, engine):
    """engine's time / minirt's: the median over the rounds of the two round medians' ratio. Each round's pair is
    timed back to back, so a drift of the shared machine between rounds cancels; a ratio of medians pooled over
    all runs does not (a fast round contributes more runs) and can fall outside every round's ratio."""
    e, m = row["round_medians"].get(engine), row["round_medians"].get("minirt")
    pairs = [x / y for x, y in zip(e or [], m or []) if y > 0]
    return statistics.median(pairs) if pairs else math.nan


# ------------------------------------------------------------------ report

def cpu_model():
    """The CPU's name, family/model numbers and L2 size: VMs often show only "Intel(R) Xeon(R) Processor" or "AMD
    EPYC", and reports from different machines (whose ratios differ a lot) must be told apart."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = info.get("model name") or platform.processor() or "unknown CPU"
    extra = []
    if "cpu family" in info and "model" in info:
        extra.append(f"family {info['cpu family']}, model {info['model']}")
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            extra.append(f"L2 {f.read().strip()} per core")
    except OSError:
        pass
    return f"{name} ({'; '.join(extra)})" if extra else name


def git_head():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_report(args, rows, ort_version):
    os.makedirs(args.out, exist_ok=True)
    date = datetime.date.today().isoformat()
    machine = re.sub(r"[^A-Za-z0-9._-]", "_", platform.node() or "machine")
    base = os.path.join(args.out, f"{date}-{machine}")
    # a second run on the same day must not overwrite an earlier report (it may be committed): -2, -3, ...
    n = 1
    while any(os.path.exists(f"{base}{'' if n == 1 else f'-{n}'}{ext}") for ext in (".md", ".png", ".json")):
        n += 1
    base = f"{base}{'' if n == 1 else f'-{n}'}"
    prov = next((r["provenance"] for r in rows if r.get("provenance")), {})
    torch_version = next((r["torch_version"] for r in rows if r.get("torch_version")), None)
    commit = prov.get("commit", "?")
    head = git_head()
    cmd = " ".join(["python3", os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])

    lines = [f"# minirt vs ONNX Runtime{' and PyTorch' if args.torch else ''}: {date}", "",
             f"- machine: {cpu_model()}, {os.cpu_count()} cores online ({platform.platform()})",
             f"- minirt {prov.get('version', '?')} (commit {commit}), BLAS kernels {prov.get('blas_core', '?')}",
             f"- onnxruntime {ort_version}: CPUExecutionProvider, intra-op threads = the thread count, 1 inter-op "
             "thread, sequential, all graph optimizations"]
    if torch_version:
        lines.append(f"- PyTorch {torch_version} (eager, no_grad, `torch.set_num_threads`)")
    if commit.endswith("-dirty"):
        lines.append(f"- **note**: the minirt binary was built from uncommitted changes on top of "
                     f"{commit[:-len('-dirty')]}; the tree is at {head[:12] if head else '?'}")
    elif head and commit != "?" and not head.startswith(commit):
        lines.append(f"- **note**: the minirt binary was built from {commit}, the tree is at {head[:12]}")
    lines += [f"- command: `{cmd}`",
              f"- {args.rounds} alternating round(s) x {args.duration:g} s per engine after a {args.warmup_ms:g} ms "
              f"warm-up (and at least {MIN_RUNS} runs); ms = median over all runs; spread = min..max of the round "
              "medians",
              "- ratio = the median over the rounds of ORT's round median / minirt's (> 1: minirt is faster)"
              + ("; the PyTorch ratio likewise" if args.torch else ""),
              f"- accuracy: max |minirt - reference| / max |reference| on the model's input, reference = ONNX "
              f"Runtime's output (or PyTorch's where ORT cannot run the model); above {MISMATCH:g} is flagged", ""]

    def num(v):
        return "-" if math.isnan(v) else f"{v:.2f}"

    def spread(r, e):
        m = r["round_medians"].get(e)
        return f"{min(m):.2f}..{max(m):.2f}" if m else "-"

    for threads in args.threads:
        head_row = "| model | minirt ms | spread | ORT ms | spread | ratio |"
        if args.torch:
            head_row += " PyTorch ms | spread | ratio |"
        lines += [f"## {threads} thread{'s' if threads > 1 else ''}", "", head_row + " accuracy |",
                  "|" + "---|" * (head_row.count("|") - 1) + "---|"]
        for r in (r for r in rows if r["threads"] == threads):
            mm, om, tm = median(r, "minirt"), median(r, "ort"), median(r, "torch")
            cells = [r["model"], num(mm), spread(r, "minirt")]
            if r["ort_error"]:
                cells += [r["ort_error"], "-", "-"]
            else:
                cells += [num(om), spread(r, "ort"), num(ratio(r, "ort"))]
            if args.torch:
                cells += [num(tm), spread(r, "torch"), num(ratio(r, "torch"))]
            if r.get("rel_err") is None:
                acc = "-"
            else:
                acc = f"{r['rel_err']:.1e} vs {r['check_against']}"
                if r["rel_err"] > MISMATCH:
                    acc = f"**MISMATCH** {acc}"
            if r["error"]:
                acc += f"; **error**: {r['error']}"
            cells.append(acc)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    notes = [n for r in rows for n in r["notes"]]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in dict.fromkeys(notes)] + [""]

    if chart(args, rows, base + ".png", date):
        lines += [f"![ratios]({os.path.basename(base)}.png)", ""]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines))
    with open(base + ".json", "w") as f:
        json.dump({"command": cmd, "onnxruntime": ort_version, "torch": torch_version, "rows": rows}, f)
    print(f"compare.py: wrote {base}.md, .png and .json")


def chart(args, rows, path, date):
    """Grouped bars: ORT/minirt (and PyTorch/minirt) per model and thread count. False when nothing to draw."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(dict.fromkeys(r["model"] for r in rows))
    by = {(r["model"], r["threads"]): r for r in rows}
    series = [(e, t) for e in (["ort", "torch"] if args.torch else ["ort"]) for t in args.threads]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(names) + 2), 4.2))
    drawn = False
    for i, (e, t) in enumerate(series):
        xs, ys = [], []
        for k, n in enumerate(names):
            r = by.get((n, t))
            v = ratio(r, e) if r else math.nan
            if not math.isnan(v):
                xs.append(k + i * width)
                ys.append(v)
        if xs:
            bars = ax.bar(xs, ys, width, label=f"{LABEL[e]}, {t} thread{'s' if t > 1 else ''}",
                          hatch="//" if e == "torch" else None)
            ax.bar_label(bars, fmt="%.2f", fontsize=7)
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([k + width * (len(series) - 1) / 2 for k in range(len(names))])
    ax.set_xticklabels(names, rotation=15)
    ax.set_ylabel("other engine's time / minirt's time")
    ax.set_title(f"minirt vs {'ONNX Runtime and PyTorch' if args.torch else 'ONNX Runtime'} "
                 f"(> 1: minirt faster), {date}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minirt", default=os.path.join(ROOT, "build", "minirt"), metavar="PATH",
                    help="the minirt CLI (default: build/minirt)")
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS, metavar="NAME",
                    help=f"models to run (default: {' '.join(DEFAULT_MODELS)}; any export_models.py name works)")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2], metavar="N",
                    help="thread counts, each a separate table (default: 1 2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default: 5)")
    ap.add_argument("--pool", metavar="PATH", help="bench/minirt_pool, run before each round on two threads or more; "
                    "its hand-off goes in the report's notes (default: next to --minirt, as bench/minirt_pool; 'none' "
                    "to skip)")
    ap.add_argument("--duration", type=float, default=2.0, metavar="S",
                    help="seconds each engine runs per round, after the warm-up (default: 2)")
    ap.add_argument("--warmup-ms", type=float, default=200, metavar="MS",
                    help="warm-up before each engine's round (default: 200)")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench-models"), metavar="DIR",
                    help="exported models, reused across runs (default: build/bench-models)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"), metavar="DIR",
                    help="where the report goes (default: bench/results)")
    ap.add_argument("--quick", action="store_true", help="1 round of 0.5 s: a smoke test, not a measurement")
    ap.add_argument("--torch", action="store_true",
                    help="also time PyTorch eager (with $MRT_TORCH_PYTHON; needs torch and torchvision)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 0.5
    if args.rounds < 1 or args.duration <= 0 or min(args.threads) < 1:
        ap.error("--rounds, --duration and --threads must be positive")
    args.cache, args.out, args.minirt = map(os.path.abspath, (args.cache, args.out, args.minirt))
    if args.pool is None:
        args.pool = os.path.join(os.path.dirname(args.minirt), "bench", "minirt_pool")
    args.pool = args.pool if args.pool != "none" and os.path.exists(args.pool) else None

    ensure(["numpy", "onnxruntime", "onnx", "matplotlib"])
    import numpy as np
    import onnxruntime as ort
    if not (os.path.isfile(args.minirt) and os.access(args.minirt, os.X_OK)):
        sys.exit(f"compare.py: no minirt at {args.minirt} (build it: cmake -S . -B build && cmake --build build)")
    if args.torch:
        why = torch_python_check()
        if why:
            sys.exit(f"compare.py: --torch needs torch and torchvision, and {why} (set MRT_TORCH_PYTHON)")
    export_models(args.models, args.cache)

    rows = [measure(args, name, threads, np) for name in args.models for threads in args.threads]
    write_report(args, rows, ort.__version__)
    flagged = [f"{r['model']} x{r['threads']}" for r in rows
               if r["error"] or (r.get("rel_err") is not None and r["rel_err"] > MISMATCH)]
    if flagged:
        print(f"compare.py: mismatches or errors in: {', '.join(flagged)} (see the report)")
        sys.exit(1)


if __name__ == "__main__":
    main()
