#!/usr/bin/env python3
"""minirt against ONNX Runtime on a zoo of real exported architectures: does each run, does it agree, how fast.

examples:
    python3 bench/zoo.py                               # every model, 2 threads, 3 rounds x 1 s
    python3 bench/zoo.py --models llama gpt2 --rounds 1 --duration 0.5
    python3 bench/zoo.py --no-timing                   # agreement only
    python3 bench/zoo.py --models gru_h128_s16_b1 --baseline /tmp/minirt-before   # before/after, same rounds
    MRT_CUDA_MODULE=build/libminirt_cuda_emu.so python3 bench/zoo.py --device cuda --timeout 600   # CUDA vs CPU

The models are torchvision's (classification, segmentation, video, detection) and small Hugging Face encoders
and decoders, random weights with fixed seeds, exported the standard way (eval mode, opset 17) by
models/scripts/export_zoo.py into --cache, once. The export needs a Python with torch and torchvision
($MRT_TORCH_PYTHON, default /usr/bin/python3) and, for the Hugging Face models, transformers (4.30 works with
Debian's torch 1.13); a model that cannot be exported is listed as skipped. This script needs numpy and
onnxruntime.

Per model: `minirt run` once (every output compared with ONNX Runtime's: max |diff| / max |ref| over all
outputs; for detection models the sorted scores, and how many boxes have a match, since boxes of equal scores
may be kept or ordered differently),
then --rounds alternating rounds of `minirt bench` and ONNX Runtime (CPUExecutionProvider, intra-op threads =
--threads, sequential, all optimizations), each --duration seconds. Reported: both medians over all runs and
ratio = the median over the rounds of ONNX Runtime's round median / minirt's (> 1: minirt faster): each round's
pair is timed back to back, so a drift of the shared machine between rounds cancels (a median pooled over all
runs does not: a fast round contributes more runs, and the pooled ratio could fall outside every round's ratio).
The report ends with the geometric mean of the ratios and the models below 1.0. This is a coverage and outlier sweep with few rounds,
not bench/compare.py's measurement; a ratio here is a lead to profile, not a result.

--device cuda (no timing, no ONNX Runtime): per model, `minirt run --device cuda` (the module MRT_CUDA_MODULE
names, e.g. the emulated build/libminirt_cuda_emu.so, or whatever --device cuda finds) against minirt's own CPU
run of the same input, by the same measure (detection models as above), pass = 1e-4; reported with the nodes
that ran on CUDA and on the CPU (the run's --stats) and the CUDA run's wall time. A run past --timeout seconds
(default 600) is killed and reported as too slow. Output: --out/<date>-<machine>-zoo-cuda.md.

Output: --out/<date>-<machine>-zoo.md, rewritten after each model (an interrupted sweep keeps what it measured).
Exit status 1 when minirt fails a model or disagrees beyond 1e-3 (--device cuda: 1e-4).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import handoff_ns, handoff_text  # noqa: E402 (bench/compare.py, next to this file)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PY = os.environ.get("MRT_TORCH_PYTHON", "/usr/bin/python3")
TOLERANCE = 1e-3
CUDA_TOLERANCE = 1e-4


def export(names, cache):
    """Export the models missing from the cache; the names of those that could not be exported."""
    todo = [n for n in names if not os.path.exists(os.path.join(cache, n + ".json"))]
    if todo:
        print(f"zoo.py: exporting {' '.join(todo)} into {cache} with {TORCH_PY}", flush=True)
        subprocess.call([TORCH_PY, os.path.join(ROOT, "models", "scripts", "export_zoo.py"), cache, *todo])
    return [n for n in names if not os.path.exists(os.path.join(cache, n + ".json"))]


def agreement(got, ref, family):
    """max |got - ref| / max |ref| over the outputs, and a note. Detection (boxes, scores, labels): the scores
    compared sorted, and the share of boxes with a box of the same label within 1e-3 in the reference, since
    boxes of equal scores may be kept or ordered otherwise (NMS and TopK break ties by index, ONNX Runtime not
    always)."""
    import numpy as np
    if any(g.shape != r.shape for g, r in zip(got, ref)):
        return float("inf"), "output shapes differ"
    if family == "detection":
        (gb, gs, gl), (rb, rs, rl) = got, ref
        if gs.size == 0:
            return 0.0, "no detections"
        diff = float(np.abs(np.sort(gs) - np.sort(rs)).max()) / max(float(np.abs(rs).max()), 1e-30)
        scale = max(float(np.abs(rb).max()), 1e-30)
        near = [(np.abs(rb - b).max(axis=1) <= 1e-3 * scale) & (rl == l) for b, l in zip(gb, gl)]
        matched = sum(bool(m.any()) for m in near)
        return diff, f"{matched}/{len(gb)} boxes matched"
    worst = 0.0
    for g, r in zip(got, ref):
        if g.size:
            g, r = g.astype(np.float64), r.astype(np.float64)
            worst = max(worst, float(np.abs(g - r).max()) / max(float(np.abs(r).max()), 1e-30))
    return worst, ""



def minirt_outputs(minirt, model, args, outputs, timeout, extra=()):
    """Run minirt once; (outputs, stderr, wall seconds), or (None, the reason, wall seconds)."""
    with tempfile.TemporaryDirectory(prefix="zoo-") as od:
        t0 = time.perf_counter()
        try:  # --poison-outputs: an output element a kernel promises to write and skips shows as NaN or -1
            r = subprocess.run([minirt, "run", model, *args, "--poison-outputs", "--output-dir", od, *extra],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"too slow (>{timeout:g} s)", time.perf_counter() - t0
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
            return None, "FAILED: " + msg.replace("|", "/")[:150], wall
        import numpy as np
        return [np.load(os.path.join(od, o + ".npy")) for o in outputs], r.stderr, wall


def cuda_row(a, n, meta, model, args):
    """--device cuda: the row (model, family, agreement, nodes on CUDA / CPU, CUDA run s) and whether it failed."""
    ref, msg, _ = minirt_outputs(a.minirt, model, args, meta["outputs"], a.timeout)
    if ref is None:
        return (n, meta["family"], "CPU run " + msg, "", ""), True
    got, log, wall = minirt_outputs(a.minirt, model, args, meta["outputs"], a.timeout, ("--device", "cuda", "--stats"))
    if got is None:
        if log.startswith("too slow"):  # not a failure: unchecked, said so
            emu = "emu" in os.environ.get("MRT_CUDA_MODULE", "")
            return (n, meta["family"], f"too slow{' emulated' * emu} (>{a.timeout:g} s)", "", ""), False
        return (n, meta["family"], log, "", f"{wall:.0f}"), True
    nodes = re.search(r"^cuda: (\d+) nodes on the device, (\d+) on the CPU", log, re.M)
    diff, note = agreement(got, ref, meta["family"])
    flag = ("" if diff <= CUDA_TOLERANCE else " MISMATCH") + (f" ({note})" if note else "")
    return (n, meta["family"], f"{diff:.1e}{flag}", "/".join(nodes.groups()) if nodes else "?", f"{wall:.0f}"), \
        diff > CUDA_TOLERANCE


def minirt_median(minirt, model, args, duration):
    fd, out = tempfile.mkstemp(suffix=".json", prefix="zoo-")
    os.close(fd)
    try:
        r = subprocess.run([minirt, "bench", model, *args, "--iterations", "3",
                            "--duration", str(duration), "--json", out, "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "minirt bench failed")
        with open(out) as f:
            return json.load(f)["times_ms"]
    finally:
        os.unlink(out)


def report(a, rows):
    """(Re)write the markdown report; its path is chosen at the first call."""
    cuda = a.device == "cuda"
    if not hasattr(a, "path"):
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"{datetime.date.today().isoformat()}-{platform.node() or 'machine'}-zoo" +
                            ("-cuda" if cuda else ""))
        a.path, k = base + ".md", 2
        while os.path.exists(a.path):
            a.path, k = f"{base}-{k}.md", k + 1
    with open(a.path, "w") as f:
        f.write(f"# minirt on the zoo{', CUDA against the CPU' if cuda else ''}: {datetime.date.today().isoformat()}\n\n")
        f.write(f"- command: `python3 bench/zoo.py {' '.join(sys.argv[1:])}`\n")
        if cuda:
            f.write(f"- CUDA module: {os.environ.get('MRT_CUDA_MODULE') or 'the one --device cuda finds'}; "
                    f"{a.threads} CPU threads; timeout {a.timeout:g} s per run\n")
            f.write("- agreement: max |CUDA - CPU| / max |CPU| over every output, both minirt on the same input "
                    "(detection: the sorted scores, and the boxes that have a match of the same label within 1e-3); "
                    f"MISMATCH above {CUDA_TOLERANCE:g}\n")
            f.write("- nodes: run on CUDA / on the CPU (`minirt run --stats`); s: the CUDA run's wall time\n\n")
            f.write("| model | family | agreement | nodes CUDA/CPU | CUDA run s |\n|---|---|---|---|---|\n")
        else:
            import onnxruntime as ort
            f.write(f"- onnxruntime {ort.__version__}, {a.threads} threads, {a.rounds} alternating rounds x {a.duration} s\n")
            f.write("- agreement: max |minirt - ORT| / max |ORT| over every output (detection: the sorted scores, and the "
                    "boxes that have a match of the same label within 1e-3; recurrent models: also each engine against "
                    "PyTorch's output)\n")
            f.write("- ms: median over all runs; ratio: the median over the rounds of ORT's round median / minirt's "
                    "(> 1: minirt is faster), in brackets the range of the rounds' ratios; few rounds on a noisy "
                    "machine: leads, not results\n\n")
            if a.pool:
                f.write("- hand-off: the thread pool's cross-core hand-off before each round (`bench/minirt_pool`), in "
                        "ns: this VM runs at about 100 (its two vCPUs close) or 550 (far apart), and two-thread "
                        "times move with it; busy: the other core was taken\n")
            if a.baseline:
                f.write(f"- baseline: `{a.baseline}`, timed first in every round; its ratio likewise, ORT's round "
                        "median / the baseline's\n")
            f.write("\n| model | family | agreement | minirt ms | ORT ms | ratio |" +
                    (" baseline ms | baseline ratio |" if a.baseline else "") + (" hand-off ns |" if a.pool else "") +
                    "\n|" + "---|" * (6 + 2 * bool(a.baseline) + bool(a.pool)) + "\n")
        for row in rows:
            f.write("| " + " | ".join(row) + " |\n")
        if not cuda:
            f.write(summary(rows, 5, "minirt") + (summary(rows, 7, "baseline") if a.baseline else ""))


def summary(rows, col, who):
    """The geometric mean of the ratios in column col (a number, then the rounds' range) and the models below 1."""
    ratios = [(r[0], float(r[col].split()[0])) for r in rows if len(r) > col and r[col]]
    if not ratios:
        return ""
    gmean = math.exp(sum(math.log(v) for _, v in ratios) / len(ratios))
    below = [f"{n} {v:.2f}" for n, v in ratios if v < 1.0]
    return (f"\n{who}: geometric mean of the ratios over {len(ratios)} models **{gmean:.2f}**; below 1.0: "
            f"{len(below)}{' (' + ', '.join(below) + ')' if below else ''}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "zoo"), help="exported models (default build/zoo)")
    ap.add_argument("--minirt", default=os.path.join(ROOT, "build", "minirt"))
    ap.add_argument("--models", nargs="+", help="a subset (default: every model export_zoo.py knows)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per engine per round")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--baseline", metavar="MINIRT", help="another minirt build (a copy of the binary before a change), "
                    "timed in the same alternating rounds: a before/after measurement beside ONNX Runtime")
    ap.add_argument("--pool", metavar="PATH", help="bench/minirt_pool, run before each round on two threads or more "
                    "(default: next to --minirt, as bench/minirt_pool; 'none' to skip)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: minirt on CUDA against minirt on the CPU, agreement only")
    ap.add_argument("--timeout", type=float, default=600, help="--device cuda: seconds per run (default 600)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    a = ap.parse_args()
    if a.pool is None:
        a.pool = os.path.join(os.path.dirname(os.path.abspath(a.minirt)), "bench", "minirt_pool")
    a.pool = a.pool if a.pool != "none" and a.threads > 1 and os.path.exists(a.pool) else None
    import numpy as np
    cuda = a.device == "cuda"
    if not cuda:
        import onnxruntime as ort

    names = a.models or subprocess.run([TORCH_PY, os.path.join(ROOT, "models", "scripts", "export_zoo.py"), "--list"],
                                       capture_output=True, text=True, check=True).stdout.split()
    os.makedirs(a.cache, exist_ok=True)
    skipped = export(names, a.cache)
    rows, bad = [], 0
    for n in names:
        if n in skipped:
            rows.append((n, "-", "not exported (see the export's message)", "", "", *([""] * (not cuda)))
                        + (("", "") if a.baseline and not cuda else ()))
            continue
        with open(os.path.join(a.cache, n + ".json")) as f:
            meta = json.load(f)
        model = os.path.join(a.cache, n + ".onnx")
        args = [x for i in meta["inputs"] for x in ("--input", f"{i}={os.path.join(a.cache, f'{n}__{i}.npy')}")]
        args += ["--threads", str(a.threads)]
        if cuda:
            row, failed = cuda_row(a, n, meta, model, args)
            rows.append(row)
            bad += failed
            print(f"{n:40s} {'  '.join(row[2:])}", flush=True)
            report(a, rows)
            continue
        feeds = {i: np.load(os.path.join(a.cache, f"{n}__{i}.npy")) for i in meta["inputs"]}
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = a.threads, 1, 3
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        ref = sess.run(meta["outputs"], feeds)
        got, msg, first_s = minirt_outputs(a.minirt, model, args, meta["outputs"], None)
        if got is None:
            bad += 1
            rows.append((n, meta["family"], msg, "", "", "") + (("", "") if a.baseline else ()))
            print(f"{n}: minirt {msg}", flush=True)
            report(a, rows)
            continue
        diff, note = agreement(got, ref, meta["family"])
        tref = os.path.join(a.cache, f"{n}__torch_output.npy")
        if os.path.exists(tref):  # the recurrent models: both engines against PyTorch's own output
            t = [np.load(tref)]
            note = (note + "; " if note else "") + (f"vs PyTorch: minirt {agreement(got[:1], t, '')[0]:.1e}, "
                                                    f"ORT {agreement(ref[:1], t, '')[0]:.1e}")
        flag = ("" if diff <= TOLERANCE else " MISMATCH") + (f" ({note})" if note else "")
        bad += diff > TOLERANCE
        mt, ot, bt = [], [], []
        spread = []  # per round: ORT's median / minirt's (and / the baseline's), for the noise
        hand = []  # per round: the pool's hand-off in ns (a.pool)
        if not a.no_timing:
            for _ in range(a.rounds):
                if a.pool:
                    hand.append(handoff_ns(a.pool))
                if a.baseline:
                    bround = minirt_median(a.baseline, model, args, a.duration)
                    bt += bround
                mround = minirt_median(a.minirt, model, args, a.duration)
                mt += mround
                sess.run(None, feeds)
                t0, runs, oround = time.perf_counter(), 0, []
                while time.perf_counter() - t0 < a.duration or runs < 3:
                    r0 = time.perf_counter()
                    sess.run(None, feeds)
                    oround.append((time.perf_counter() - r0) * 1e3)
                    runs += 1
                ot += oround
                om = statistics.median(oround)
                spread.append((om / statistics.median(mround), om / statistics.median(bround) if a.baseline else 0))
        m, o = (statistics.median(mt), statistics.median(ot)) if mt else (None, None)
        ratio = statistics.median(x[0] for x in spread) if spread else None
        bratio = statistics.median(x[1] for x in spread) if spread and a.baseline else None
        ms = lambda v: f"{v:.3f}" if v < 1 else f"{v:.2f}"  # the small recurrent models run in tens of us
        rng = lambda i: f" ({min(x[i] for x in spread):.2f}-{max(x[i] for x in spread):.2f})" if len(spread) > 1 else ""
        row = (n, meta["family"], f"{diff:.1e}{flag}", ms(m) if m else "", ms(o) if o else "",
               f"{ratio:.2f}{rng(0)}" if m else "")
        b = statistics.median(bt) if bt else None
        if a.baseline:
            row += (ms(b) if b else "", f"{bratio:.2f}{rng(1)}" if b else "")
        if a.pool:
            row += (" ".join(handoff_text(h) for h in hand),)
        rows.append(row)
        print(f"{n:40s} agreement {diff:.1e}{flag}  first run {first_s:.1f} s" +
              (f"  minirt {ms(m)} ms  ORT {ms(o)} ms  ratio {ratio:.2f}{rng(0)}" if m else "") +
              (f"  baseline {ms(b)} ms  ratio {bratio:.2f}{rng(1)}" if b else ""), flush=True)
        report(a, rows)
    report(a, rows)
    print(f"zoo.py: wrote {a.path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
