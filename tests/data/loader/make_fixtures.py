"""Regenerate the small fixtures of tests/test_npy.c and tests/test_loader.c (run from anywhere):
    python3 tests/data/loader/make_fixtures.py
Needs numpy and onnx (pip). The tests themselves never run Python; these files are committed."""
import os
import zipfile

import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def write_npy(name, arr, version=None):
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


# .npy: layouts and header versions NumPy itself writes
write_npy("f32_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3))
write_npy("i32_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)))
write_npy("i64_fortran_2x3x4.npy", np.asfortranarray(np.arange(24, dtype="<i8").reshape(2, 3, 4)))
write_npy("f64_be.npy", np.arange(4, dtype=">f8"))
write_npy("i16_v2.npy", np.arange(-3, 3, dtype="<i2"), version=(2, 0))
write_npy("str_v3.npy", np.array(["a", "h\u00e9llo", "", "\u2603x"]), version=(3, 0))
write_npy("bool_0d.npy", np.array(True))
write_npy("f16.npy", np.array([1.5, -2.0, 65504.0, 0.0], dtype="<f2"))
write_npy("empty_0x3.npy", np.zeros((0, 3), dtype="<f4"))
write_npy("c64.npy", np.array([1 + 2j, -3.5 + 0.25j], dtype="<c8"))

# .npz: the same arrays stored, deflated by NumPy, and deflated at level 0 (stored deflate blocks)
arrays = {
    "a": np.arange(1000, dtype="<i8"),
    "b": np.sin(np.arange(300, dtype="<f4") * 0.37).astype("<f4"),
    "rep": np.tile(np.arange(7, dtype="<u1"), 1500),
    "s": np.array(["alpha", "beta", ""]),
}
np.savez(path("stored.npz"), **arrays)
np.savez_compressed(path("deflate.npz"), **arrays)
with zipfile.ZipFile(path("deflate_levels.npz"), "w") as z:
    for level, (k, v) in zip((0, 1, 9, 5), arrays.items()):
        import io
        buf = io.BytesIO()
        np.lib.format.write_array(buf, v)
        z.writestr(zipfile.ZipInfo(k + ".npy"), buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED,
                   compresslevel=level)

# A model-local function with an attribute default (FunctionProto.attribute_proto, field 11, newer than
# the onnx.proto minirt compiles) and a sparse initializer.
fn = helper.make_function(
    "custom", "ScaledRelu", ["x"], ["y"],
    [helper.make_node("Relu", ["x"], ["r"]),
     helper.make_node("Constant", [], ["a"], value_float=1.0),
     helper.make_node("Mul", ["r", "a"], ["y"])],
    [helper.make_opsetid("", 18)],
    attributes=["unused"],
    attribute_protos=[helper.make_attribute("alpha", 0.5)],
)
sparse = helper.make_sparse_tensor(
    helper.make_tensor("S", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
    helper.make_tensor("S_idx", TensorProto.INT64, [3], [0, 4, 7]),
    [2, 4])
graph = helper.make_graph(
    [helper.make_node("ScaledRelu", ["X"], ["Y"], domain="custom")],
    "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4])],
    sparse_initializer=[sparse])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)],
                          functions=[fn], producer_name="make_fixtures")
onnx.save(model, path("function_sparse.onnx"))
print("fixtures written to", HERE)
