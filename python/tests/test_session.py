"""minirt.InferenceSession: ONNX Runtime's API over minirt, on the bundled model and small built ones."""
import os
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import minirt
from minirt._session import as_input_array

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")
X = np.load(os.path.join(ROOT, "models", "tiny_cnn_input.npy"))
EXPECTED = np.load(os.path.join(ROOT, "models", "tiny_cnn_expected.npy"))
EXPECTED64 = np.load(os.path.join(ROOT, "models", "tiny_cnn_expected_fp64.npy"))


def one_node_model(op, inputs, outputs, domain="", opset=17, **attrs):
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], domain=domain, **attrs)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=imports)


def test_inputs_and_outputs_as_onnxruntime_reports_them():
    sess = minirt.InferenceSession(MODEL)
    (i,), (o,) = sess.get_inputs(), sess.get_outputs()
    assert (i.name, i.shape, i.type) == ("image", [2, 3, 32, 32], "tensor(float)")
    assert (o.name, o.shape, o.type) == ("probs", [2, 10], "tensor(float)")
    m = one_node_model("Relu", [("x", TensorProto.DOUBLE, ["batch", 4])], [("y", TensorProto.DOUBLE, None)])
    sess = minirt.InferenceSession(m.SerializeToString())
    assert sess.get_inputs()[0].shape == ["batch", 4] and sess.get_inputs()[0].type == "tensor(double)"
    assert sess.get_outputs()[0].shape is None


def test_run_matches_the_committed_outputs():
    sess = minirt.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    y, = sess.run(None, {"image": X})
    assert y.dtype == np.float32 and y.shape == (2, 10)
    np.testing.assert_allclose(y, EXPECTED, rtol=1e-5, atol=1e-6)
    assert sess.run(["probs"], {"image": X})[0].tobytes() == y.tobytes()
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_fp64_threads_and_sess_options():
    opts = minirt.SessionOptions()
    opts.intra_op_num_threads = 1
    y, = minirt.InferenceSession(MODEL, opts, precision="fp64").run(None, {"image": X})
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, EXPECTED64, rtol=1e-12, atol=1e-14)
    y1, = minirt.InferenceSession(MODEL, threads=1).run(None, {"image": X})
    y2, = minirt.InferenceSession(MODEL, threads=2).run(None, {"image": X})
    assert y1.tobytes() == y2.tobytes(), "float32 results do not depend on the thread count (docs/determinism.md)"


def test_contiguous_inputs_of_the_right_dtype_are_not_copied():
    a = np.ones((2, 3), np.float32)
    assert as_input_array(a)[0] is a
    t = np.ones((3, 2), np.float32).T
    b, _ = as_input_array(t)
    assert b is not t and b.flags.c_contiguous and np.array_equal(b, t)
    # a non-contiguous input still runs right
    x = np.asfortranarray(X)
    np.testing.assert_allclose(minirt.InferenceSession(MODEL).run(None, {"image": x})[0], EXPECTED, rtol=1e-5,
                               atol=1e-6)


def test_outputs_are_copies_that_outlive_the_next_run():
    sess = minirt.InferenceSession(MODEL)
    y1, = sess.run(None, {"image": X})
    keep = y1.copy()
    sess.run(None, {"image": X * 2})
    assert y1.tobytes() == keep.tobytes()


def test_errors_are_exceptions_with_minirts_message():
    sess = minirt.InferenceSession(MODEL)
    with pytest.raises(minirt.InvalidArgument, match=r"input 'image'.*float32\[2,3,32,32\].*float32\[1,3,32,32\]"):
        sess.run(None, {"image": X[:1]})
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError too
        sess.run(None, {"image": X.astype(np.float64)})
    with pytest.raises(minirt.InvalidArgument, match="'nope'"):
        sess.run(["nope"], {"image": X})
    with pytest.raises(minirt.FileError, match="no_such_model.onnx"):
        minirt.InferenceSession("no_such_model.onnx")
    with pytest.raises(minirt.InvalidModel):
        minirt.InferenceSession(b"this is not a model")
    m = one_node_model("Frobnicate", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])],
                       domain="my.domain")
    with pytest.raises(minirt.Unsupported, match="Frobnicate"):
        minirt.InferenceSession(m).run(None, {"x": np.ones(2, np.float32)})
    with pytest.raises(minirt.InvalidArgument, match="TensorrtExecutionProvider"):
        minirt.InferenceSession(MODEL, providers=["TensorrtExecutionProvider"])
    with pytest.raises(minirt.InvalidArgument, match="frobnicate"):
        minirt.InferenceSession(MODEL, frobnicate=1)
    assert issubclass(minirt.Unsupported, minirt.Error) and issubclass(minirt.FileError, OSError)


def test_the_gil_is_released_while_a_model_runs():
    n = 768
    m = one_node_model("MatMul", [("a", TensorProto.DOUBLE, [n, n]), ("b", TensorProto.DOUBLE, [n, n])],
                       [("c", TensorProto.DOUBLE, [n, n])])
    sess = minirt.InferenceSession(m, threads=1)
    a = np.random.default_rng(0).standard_normal((n, n))
    feed = {"a": a, "b": a}
    sess.run(None, feed)
    span, ticks = [], []

    def worker():
        for _ in range(3):
            t0 = time.perf_counter()
            sess.run(None, feed)
            span.append((t0, time.perf_counter()))

    th = threading.Thread(target=worker)
    th.start()
    while th.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    th.join()
    during = sum(1 for t in ticks for (s, e) in span if s < t < e)
    longest = max(e - s for s, e in span)
    assert longest > 0.01, "the model ran too briefly to tell"
    assert during > 0, f"the main thread never ran while minirt computed ({longest:.3f} s per run)"


def test_strings_sequences_and_bool():
    m = one_node_model("Identity", [("s", TensorProto.STRING, [2])], [("t", TensorProto.STRING, [2])])
    out, = minirt.InferenceSession(m).run(None, {"s": np.array(["ab", "cd"], dtype=object)})
    assert out.tolist() == ["ab", "cd"]
    m = one_node_model("Not", [("x", TensorProto.BOOL, [3])], [("y", TensorProto.BOOL, [3])])
    out, = minirt.InferenceSession(m).run(None, {"x": np.array([True, False, True])})
    assert out.dtype == np.bool_ and out.tolist() == [False, True, False]
    node = helper.make_node("SequenceConstruct", ["a", "b"], ["s"])
    graph = helper.make_graph([node], "seq", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
                                              helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    sess = minirt.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert sess.get_outputs()[0].type == "seq(tensor(float))"
    seq, = sess.run(None, {"a": np.ones(2, np.float32), "b": np.zeros(3, np.float32)})
    assert [s.tolist() for s in seq] == [[1, 1], [0, 0, 0]]


def test_dump_dir_writes_minirts_dump_format(tmp_path):
    sess = minirt.InferenceSession(MODEL, dump_dir=tmp_path / "dump")
    y, = sess.run(None, {"image": X})
    d = minirt.load_dump(tmp_path / "dump")
    assert "image" in d and "probs" in d and "/stem/Conv_output_0" in d and len(d) > 30
    assert d["probs"].tobytes() == y.tobytes()
    assert minirt.cli(["compare", str(tmp_path / "dump"), str(tmp_path / "dump")]) == 0
