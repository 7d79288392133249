"""minirt.compare, minirt.diff, the dump format and the CLI from Python."""
import json
import tempfile
import os

import numpy as np
import pytest

import minirt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")
X = np.load(os.path.join(ROOT, "models", "tiny_cnn_input.npy"))


def test_compare_returns_the_clis_statistics(tmp_path):
    rng = np.random.default_rng(1)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    a = b + rng.standard_normal((4, 5)).astype(np.float32) * 1e-3
    r = minirt.compare(a, b, atol=1e-4, rtol=1e-4)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    rc, out, err = minirt.cli(["compare", tmp_path / "a.npy", tmp_path / "b.npy", "--atol", "1e-4", "--rtol", "1e-4",
                               "--json", tmp_path / "c.json"], capture=True)
    assert rc == 1 and "FAILED" in out
    cli = json.load(open(tmp_path / "c.json"))["tensors"][0]
    for key in ("passed", "max_abs_err", "mean_abs_err", "median_rel_err", "cosine", "max_ulp", "fail_fraction",
                "min_atol_to_pass", "worst_index"):
        assert getattr(r, key) == cli[key], key
    assert not r and r.max_abs_err == pytest.approx(np.abs(a - b).max(), rel=1e-6)
    assert minirt.compare(a, b, atol=1e-2, rtol=0).passed
    assert minirt.compare(a, b, atol=1e-9, rtol=0, check_error_stat="median").passed is False
    with pytest.raises(minirt.InvalidArgument, match="check_error_stat"):
        minirt.compare(a, b, check_error_stat="p99")


def test_nan_fails_unless_equal_nan():
    a = np.array([1, np.nan, 3], np.float32)
    r = minirt.compare(a, a.copy())
    assert not r.passed and r.nan_mismatch == 1
    assert minirt.compare(a, a.copy(), equal_nan=True).passed
    assert not minirt.compare(a, np.array([1, 2, 3], np.float32), equal_nan=True).passed
    # as numpy decides
    assert not np.allclose(a, a) and np.allclose(a, a, equal_nan=True)


def test_diff_finds_the_node_whose_own_error_is_too_large():
    clean = minirt.diff(MODEL, {"image": X})
    assert clean.passed and clean.first_divergence is None and len(clean.nodes) == 33
    # another framework's tensors, named by value: one Conv's output off by 1e-2 (the rest exact)


    with tempfile.TemporaryDirectory() as tmp:
        minirt.InferenceSession(MODEL, precision="fp64", dump_dir=tmp).run(None, {"image": X})
        d = minirt.load_dump(tmp)
    d["/block/conv1/Conv_output_0"] = d["/block/conv1/Conv_output_0"] + 1e-2
    r = minirt.diff(MODEL, [X], against=d)  # written as sanitised .npy files with no manifest
    assert not r.passed
    assert r.first_divergence == "/block/conv1/Conv"
    assert "33 of 33 node outputs matched" in r.report


def test_diff_errors_are_exceptions():
    with pytest.raises(minirt.Error, match="no_such.onnx"):
        minirt.diff("no_such.onnx", {"image": X})


def test_save_dump_is_read_by_the_cli(tmp_path):
    y, = minirt.InferenceSession(MODEL).run(None, {"image": X})
    minirt.save_dump(tmp_path / "ours", {"probs": y, "/a/b": np.arange(3.0)}, producers={"probs": ("/Softmax", "Softmax")})
    manifest = json.load(open(tmp_path / "ours" / "manifest.json"))
    assert [t["file"] for t in manifest["tensors"]] == ["probs.npy", "_a_b.npy"]
    assert manifest["tensors"][0]["producer"] == "/Softmax"
    back = minirt.load_dump(tmp_path / "ours")
    assert list(back) == ["probs", "/a/b"] and back["probs"].tobytes() == y.tobytes()
    rc, out, _ = minirt.cli(["compare", tmp_path / "ours", tmp_path / "ours"], capture=True)
    assert rc == 0 and "2 passed, 0 failed, 0 missing" in out


def test_raw_bin_input_through_the_cli(tmp_path):
    X.tofile(tmp_path / "image.bin")
    rc, out, err = minirt.cli(["run", MODEL, "--input", f"image={tmp_path / 'image.bin'}", "--output-dir",
                               tmp_path / "out"], capture=True)
    assert rc == 0, err
    y, = minirt.InferenceSession(MODEL).run(None, {"image": X})
    assert np.load(tmp_path / "out" / "probs.npy").tobytes() == y.tobytes()
    X[:1].tofile(tmp_path / "short.bin")
    rc, out, err = minirt.cli(["run", MODEL, "--input", f"image={tmp_path / 'short.bin'}"], capture=True)
    assert rc == 1 and "has 12288 bytes, but float32[2,3,32,32] needs 24576" in err
