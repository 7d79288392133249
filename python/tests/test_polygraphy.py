"""minirt in Polygraphy: the runner in-process, and `polygraphy run --minirt` (the extension entry point)."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")


def test_runner():
    from polygraphy.comparator import Comparator

    from minirt.polygraphy import MinirtRunner

    runners = [MinirtRunner(MODEL), MinirtRunner(MODEL, name="fp64", precision="fp64")]
    results = Comparator.run(runners)
    assert bool(Comparator.compare_accuracy(results))
    with runners[0]:
        meta = runners[0].get_input_metadata()
        assert list(meta.keys()) == ["image"] and tuple(meta["image"].shape) == (2, 3, 32, 32)
        out = runners[0].infer({"image": np.load(os.path.join(ROOT, "models", "tiny_cnn_input.npy"))})
        np.testing.assert_allclose(out["probs"], np.load(os.path.join(ROOT, "models", "tiny_cnn_expected.npy")),
                                   rtol=1e-5, atol=1e-6)


def test_polygraphy_run_minirt():
    p = subprocess.run([sys.executable, "-m", "polygraphy", "run", MODEL, "--minirt", "--minirt-precision", "fp64"],
                       capture_output=True, text=True)
    if "No module named polygraphy.__main__" in p.stderr:
        exe = os.path.join(os.path.dirname(sys.executable), "polygraphy")
        p = subprocess.run([exe, "run", MODEL, "--minirt", "--minirt-precision", "fp64"], capture_output=True, text=True)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-2000:]
    assert "minirt-runner" in text and "PASSED" in text
