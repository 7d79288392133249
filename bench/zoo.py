#!/usr/bin/env python3
"""minirt against ONNX Runtime on a zoo of real exported architectures: does each run, does it agree, how fast.

examples:
    python3 bench/zoo.py                               # every model, 2 threads, 3 rounds x 1 s
    python3 bench/zoo.py --models llama gpt2 --rounds 1 --duration 0.5
    python3 bench/zoo.py --no-timing                   # agreement only
    python3 bench/zoo.py --models gru_h128_s16_b1 --baseline /tmp/minirt-before   # before/after, same rounds

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
ratio = ONNX Runtime's / minirt's (> 1: minirt faster). This is a coverage and outlier sweep with few rounds,
not bench/compare.py's measurement; a ratio here is a lead to profile, not a result.

Output: --out/<date>-<machine>-zoo.md. Exit status 1 when minirt fails a model or disagrees beyond 1e-3.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PY = os.environ.get("MRT_TORCH_PYTHON", "/usr/bin/python3")
TOLERANCE = 1e-3


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



def minirt_median(minirt, model, args, threads, duration):
    fd, out = tempfile.mkstemp(suffix=".json", prefix="zoo-")
    os.close(fd)
    try:
        r = subprocess.run([minirt, "bench", model, *args, "--threads", str(threads), "--iterations", "3",
                            "--duration", str(duration), "--json", out, "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "minirt bench failed")
        with open(out) as f:
            return json.load(f)["times_ms"]
    finally:
        os.unlink(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "zoo"), help="exported models (default build/zoo)")
    ap.add_argument("--minirt", default=os.path.join(ROOT, "build", "minirt"))
    ap.add_argument("--baseline", metavar="MINIRT", help="another minirt build (a copy of the binary before a change), "
                    "timed in the same alternating rounds: a before/after measurement beside ONNX Runtime")
    ap.add_argument("--models", nargs="+", help="a subset (default: every model export_zoo.py knows)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per engine per round")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort

    names = a.models or subprocess.run([TORCH_PY, os.path.join(ROOT, "models", "scripts", "export_zoo.py"), "--list"],
                                       capture_output=True, text=True, check=True).stdout.split()
    os.makedirs(a.cache, exist_ok=True)
    skipped = export(names, a.cache)
    rows, bad = [], 0
    for n in names:
        if n in skipped:
            rows.append((n, "-", "not exported (see the export's message)", "", "", "") + (("", "") if a.baseline else ()))
            continue
        with open(os.path.join(a.cache, n + ".json")) as f:
            meta = json.load(f)
        model = os.path.join(a.cache, n + ".onnx")
        feeds = {i: np.load(os.path.join(a.cache, f"{n}__{i}.npy")) for i in meta["inputs"]}
        args = [x for i in meta["inputs"] for x in ("--input", f"{i}={os.path.join(a.cache, f'{n}__{i}.npy')}")]
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = a.threads, 1, 3
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        ref = sess.run(meta["outputs"], feeds)
        with tempfile.TemporaryDirectory(prefix="zoo-") as od:
            t0 = time.perf_counter()
            # --poison-outputs: an output element a kernel promises to write and skips shows as NaN or -1
            r = subprocess.run([a.minirt, "run", model, *args, "--threads", str(a.threads), "--poison-outputs",
                                "--output-dir", od],
                               capture_output=True, text=True)
            first_s = time.perf_counter() - t0
            if r.returncode != 0:
                bad += 1
                msg = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
                rows.append((n, meta["family"], "FAILED: " + msg.replace("|", "/")[:150], "", "", "") +
                            (("", "") if a.baseline else ()))
                print(f"{n}: minirt failed: {msg}", flush=True)
                continue
            got = [np.load(os.path.join(od, o + ".npy")) for o in meta["outputs"]]
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
        if not a.no_timing:
            for _ in range(a.rounds):
                if a.baseline:
                    bround = minirt_median(a.baseline, model, args, a.threads, a.duration)
                    bt += bround
                mround = minirt_median(a.minirt, model, args, a.threads, a.duration)
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
        ms = lambda v: f"{v:.3f}" if v < 1 else f"{v:.2f}"  # the small recurrent models run in tens of us
        rng = lambda i: f" ({min(x[i] for x in spread):.2f}-{max(x[i] for x in spread):.2f})" if len(spread) > 1 else ""
        row = (n, meta["family"], f"{diff:.1e}{flag}", ms(m) if m else "", ms(o) if o else "",
               f"{o / m:.2f}{rng(0)}" if m else "")
        if a.baseline:
            b = statistics.median(bt) if bt else None
            row += (ms(b) if b else "", f"{o / b:.2f}{rng(1)}" if b else "")
        rows.append(row)
        print(f"{n:40s} agreement {diff:.1e}{flag}  first run {first_s:.1f} s" +
              (f"  minirt {ms(m)} ms  ORT {ms(o)} ms  ratio {o / m:.2f}" if m else "") +
              (f"  baseline {ms(b)} ms  ratio {o / b:.2f}" if a.baseline and b else ""), flush=True)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"{datetime.date.today().isoformat()}-{platform.node() or 'machine'}-zoo")
    path, k = base + ".md", 2
    while os.path.exists(path):
        path, k = f"{base}-{k}.md", k + 1
    with open(path, "w") as f:
        f.write(f"# minirt on the zoo: {datetime.date.today().isoformat()}\n\n")
        f.write(f"- command: `python3 bench/zoo.py {' '.join(sys.argv[1:])}`\n")
        f.write(f"- onnxruntime {ort.__version__}, {a.threads} threads, {a.rounds} alternating rounds x {a.duration} s\n")
        f.write("- agreement: max |minirt - ORT| / max |ORT| over every output (detection: the sorted scores, and the "
                "boxes that have a match of the same label within 1e-3; recurrent models: also each engine against "
                "PyTorch's output)\n")
        f.write("- ratio: ORT median / minirt median (> 1: minirt is faster), in brackets the range of the rounds' ratios; few "
                "rounds on a noisy machine: leads, not results\n\n")
        if a.baseline:
            f.write(f"- baseline: `{a.baseline}`, timed first in every round; its ratio is ORT median / baseline median\n\n")
            f.write("| model | family | agreement | minirt ms | ORT ms | ratio | baseline ms | baseline ratio |\n"
                    "|---|---|---|---|---|---|---|---|\n")
        else:
            f.write("| model | family | agreement | minirt ms | ORT ms | ratio |\n|---|---|---|---|---|---|\n")
        for row in rows:
            f.write("| " + " | ".join(row) + " |\n")
    print(f"zoo.py: wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
