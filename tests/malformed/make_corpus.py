"""Write the malformed-input corpus: hostile models and input files that minirt must refuse with exit status 1
and a clear message (never a crash, never a read or write outside the model's folder and the output folder).

usage: python3 tests/malformed/make_corpus.py tests/malformed
Each case is files/<name>.onnx (+ an input file when the case is about inputs); expected.tsv lists
<name> <TAB> <model> <TAB> <input or -> <TAB> <exit status> <TAB> <start of the error message after "minirt: error: ">.
The expectations were reviewed by hand when the corpus was made; the test only checks that they still hold.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
files = os.path.join(out, "files")
os.makedirs(files, exist_ok=True)
cases = []


def model(nodes, inputs, outputs, inits=(), opset=13, **kw):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], **kw)
    m.ir_version = 8
    return m


def tensor(name, dt, dims, raw=None, floats=None, strings=None):
    """A TensorProto built field by field (onnx.helper refuses inconsistent ones, which is the point here)."""
    t = TensorProto()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    if floats is not None:
        t.float_data.extend(floats)
    if strings is not None:
        t.string_data.extend(strings)
    return t


def vi(name, dt=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dt, shape)


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")])


def save(name, data):
    path = os.path.join(files, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.SerializeToString())
    return "files/" + name


def add(name, model_file, input_file, status, message):
    cases.append((name, model_file, input_file or "-", str(status), message))


x23 = save("x_2x3.npy", b"")  # placeholder, rewritten below
np.save(os.path.join(files, "x_2x3.npy"), np.ones((2, 3), np.float32))
good = relu_model().SerializeToString()

# --- truncated and corrupted model bytes
for i, cut in enumerate([1, 5, len(good) // 3, len(good) // 2, len(good) - 3]):
    add(f"truncated_{i}", save(f"truncated_{i}.onnx", good[:cut]), x23, 1, "")
add("empty_file", save("empty.onnx", b""), x23, 1, "")
add("garbage", save("garbage.onnx", bytes(range(256)) * 4), x23, 1, "")
add("text_file", save("text.onnx", b"this is not a model\n"), x23, 1, "")
rng = np.random.RandomState(0)
for i in range(8):
    b = bytearray(good)
    for _ in range(3):
        b[rng.randint(len(b))] ^= 1 << rng.randint(8)
    add(f"bitflip_{i}", save(f"bitflip_{i}.onnx", bytes(b)), x23, 1, "")

# --- shapes and sizes
big = tensor("w", TensorProto.FLOAT, [1 << 20, 1 << 20, 1 << 20], raw=b"")
m = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [big])
add("initializer_huge_dims", save("initializer_huge_dims.onnx", m), x23, 1, "")
neg = tensor("w", TensorProto.FLOAT, [2, -3], floats=[0] * 6)
add("initializer_negative_dim", save("initializer_negative_dim.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [neg])), x23, 1, "")
short = tensor("w", TensorProto.FLOAT, [2, 3], raw=np.zeros(5, np.float32).tobytes())
add("raw_data_too_short", save("raw_data_too_short.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [short])), x23, 1, "")
typed = tensor("w", TensorProto.FLOAT, [2, 3], floats=[1.0, 2.0])
add("typed_data_too_short", save("typed_data_too_short.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [typed])), x23, 1, "")
rank = tensor("w", TensorProto.FLOAT, [1] * 40, floats=[1.0])
add("rank_40", save("rank_40.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [rank])), x23, 1, "")
cos = model([helper.make_node("ConstantOfShape", ["s"], ["y"])], [vi("x")], [vi("y")],
            [numpy_helper.from_array(np.array([1 << 40, 1 << 40], np.int64), "s")])
add("constant_of_shape_huge", save("constant_of_shape_huge.onnx", cos), x23, 1, "")
rs = model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x")], [vi("y")],
           [numpy_helper.from_array(np.array([4, 4], np.int64), "s")])
add("reshape_count_mismatch", save("reshape_count_mismatch.onnx", rs), x23, 1, "")
rng_op = model([helper.make_node("Range", ["a", "b", "d"], ["y"])], [vi("x")], [vi("y")],
               [numpy_helper.from_array(np.array(0, np.int64), "a"),
                numpy_helper.from_array(np.array(1 << 62, np.int64), "b"),
                numpy_helper.from_array(np.array(1, np.int64), "d")])
add("range_huge", save("range_huge.onnx", rng_op), x23, 1, "")

# --- types
bad_dt = tensor("w", 77, [2, 3], floats=[0] * 6)
add("unknown_dtype", save("unknown_dtype.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [bad_dt])), x23, 1, "")
add("string_initializer_in_add", save("string_add.onnx",
    model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
          [tensor("w", TensorProto.STRING, [2], strings=[b"a", b"b"])])), x23, 1, "")
mm = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
           [numpy_helper.from_array(np.ones((4, 2), np.float32), "w")])
add("matmul_inner_mismatch", save("matmul_mismatch.onnx", mm), x23, 1, "")
conv = model([helper.make_node("Conv", ["x", "w"], ["y"])], [vi("x", shape=(1, 3, 5, 5))], [vi("y")],
             [numpy_helper.from_array(np.ones((2, 4, 3, 3), np.float32), "w")])
np.save(os.path.join(files, "x_1x3x5x5.npy"), np.ones((1, 3, 5, 5), np.float32))
add("conv_channel_mismatch", save("conv_channel_mismatch.onnx", conv), "files/x_1x3x5x5.npy", 1, "")
attr = model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])], [vi("x")], [vi("y")])
add("transpose_bad_perm", save("transpose_bad_perm.onnx", attr), x23, 1, "")
ax = model([helper.make_node("Softmax", ["x"], ["y"], axis=7)], [vi("x")], [vi("y")])
add("softmax_axis_out_of_range", save("softmax_axis.onnx", ax), x23, 1, "")
ax_f = model([helper.make_node("Softmax", ["x"], ["y"], axis=1.5)], [vi("x")], [vi("y")])
add("attr_float_for_int", save("attr_float_for_int.onnx", ax_f), x23, 1, "")
perm_s = model([helper.make_node("Transpose", ["x"], ["y"], perm="1,0")], [vi("x")], [vi("y")])
add("attr_string_for_ints", save("attr_string_for_ints.onnx", perm_s), x23, 1, "")
gat = model([helper.make_node("Gather", ["x", "i"], ["y"])], [vi("x")], [vi("y")],
            [numpy_helper.from_array(np.array([5], np.int64), "i")])
add("gather_index_out_of_range", save("gather_oob.onnx", gat), x23, 1, "")

# --- graph structure
add("undefined_input", save("undefined_input.onnx",
    model([helper.make_node("Relu", ["nobody"], ["y"])], [vi("x")], [vi("y")])), x23, 1, "")
cyc = model([helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])], [vi("x")], [vi("b")])
add("cycle", save("cycle.onnx", cyc), x23, 1, "")
dup = model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])], [vi("x")], [vi("y")])
add("two_producers", save("two_producers.onnx", dup), x23, 1, "")
add("unknown_op", save("unknown_op.onnx",
    model([helper.make_node("FancyOp", ["x"], ["y"], domain="acme")], [vi("x")], [vi("y")])), x23, 1, "")
add("no_default_opset", save("no_default_opset.onnx",
    helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x")], [vi("y")]),
                      opset_imports=[helper.make_opsetid("acme", 1)])), x23, 1, "")
add("too_few_inputs", save("too_few_inputs.onnx",
    model([helper.make_node("Add", ["x"], ["y"])], [vi("x")], [vi("y")])), x23, 1, "")
add("output_not_produced", save("output_not_produced.onnx",
    model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y"), vi("z")])), x23, 1, "")
# a model-local function whose body calls itself: bounded nesting, an error, not a stack overflow
recur = helper.make_function("acme", "Again", ["x"], ["y"], [helper.make_node("Again", ["x"], ["y"], domain="acme")],
                             [helper.make_opsetid("", 13), helper.make_opsetid("acme", 1)])
again = helper.make_node("Again", ["x"], ["y"], domain="acme")
recursive = helper.make_model(helper.make_graph([again], "g", [vi("x")], [vi("y")]), functions=[recur],
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("acme", 1)])
recursive.ir_version = 8
add("recursive_function", save("recursive_function.onnx", recursive), x23, 1, "")

# --- external data
def ext_model(location, offset=None, length=None):
    t = tensor("w", TensorProto.FLOAT, [2, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [t])

with open(os.path.join(files, "weights.bin"), "wb") as f:
    f.write(np.arange(6, dtype=np.float32).tobytes())
for name, args in [("external_dotdot", ("../weights.bin",)), ("external_absolute", ("/etc/passwd",)),
                   ("external_dotdot_inside", ("sub/../../weights.bin",)), ("external_missing", ("nope.bin",)),
                   ("external_offset_beyond", ("weights.bin", 100)), ("external_length_beyond", ("weights.bin", 0, 1000)),
                   ("external_negative_offset", ("weights.bin", -4)), ("external_symlink_escape", ("escape_link",))]:
    add(name, save(name + ".onnx", ext_model(*args)), x23, 1, "")
if not os.path.lexists(os.path.join(files, "escape_link")):
    os.symlink("/etc/hostname", os.path.join(files, "escape_link"))

# --- input files
def npy_bytes(header, data=b""):
    h = header.encode()
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data

rm = save("relu.onnx", relu_model())
bad_inputs = {
    "npy_bad_magic": b"\x93NUMPX\x01\x00" + b"\x00" * 100,
    "npy_truncated_header": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }")[:20],
    "npy_bad_dict": npy_bytes("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24),
    "npy_unknown_dtype": npy_bytes("{'descr': '<q9', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24),
    "npy_shape_overflow": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"),
    "npy_short_data": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 10),
    "npy_negative_dim": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", b"\0" * 24),
    "npy_object_dtype": npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 48),
}
for name, data in bad_inputs.items():
    add(name, rm, save(name + ".npy", data), 1, "")
np.save(os.path.join(files, "x_wrong_shape.npy"), np.ones((3, 3), np.float32))
add("input_wrong_shape", rm, "files/x_wrong_shape.npy", 1, "")
np.save(os.path.join(files, "x_wrong_dtype.npy"), np.ones((2, 3), np.int32))
add("input_wrong_dtype", rm, "files/x_wrong_dtype.npy", 1, "")
add("pb_garbage", rm, save("garbage.pb", b"\xff" * 40), 1, "")
tp = numpy_helper.from_array(np.ones((2, 3), np.float32), "x")
tp.raw_data = tp.raw_data[:-4]
add("pb_short_raw_data", rm, save("short.pb", tp.SerializeToString()), 1, "")
add("npz_not_zip", rm, save("notzip.npz", b"PK\x03\x04" + b"\x00" * 30), 1, "")
add("input_unknown_extension", rm, save("x.txt", b"1 2 3"), 2, "")

# --- what onnx.checker refuses (issue #31). Each model here is refused by onnx.checker.check_model(full_check=True)
# (asserted below, except the deep ones, which Python's protobuf cannot even parse) and by minirt.
def refused_by_checker(m):
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception:
        return True
    return False


def checker_case(name, m, input_file=x23, checked=True):
    if checked:
        assert refused_by_checker(m), name + ": onnx.checker accepts it"
    add(name, save(name + ".onnx", m), input_file, 1, "")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
import make_nested  # noqa: E402  (the hand-written wire format for models nested too deep for the onnx package)

# nesting: 10,000 If bodies (used to be SIGSEGV inside protobuf-c), with and without a broken node at the bottom
add("if_nested_10000", save("if_nested_10000.onnx", make_nested.if_nested(10000)), x23, 1, "")
broken = make_nested.if_nested(10000).replace(make_nested.text(4, "Identity"), make_nested.text(4, "NoSuchOp"), 1)
add("if_nested_10000_broken_bottom", save("if_nested_10000_broken_bottom.onnx", broken), x23, 1, "")
add("type_nested_20000", save("type_nested_20000.onnx", make_nested.type_nested(20000)), x23, 1, "")

# versions
for name, ir in (("ir_version_0", 0), ("ir_version_15", 15)):
    m = relu_model()
    m.ir_version = ir
    checker_case(name, m)
for name, v in (("opset_10000", 10000), ("opset_0", 0), ("opset_negative", -3)):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")], opset=v)
    # the checker accepts opset 10000 (it resolves Relu to its newest version); minirt knows only up to its own
    checker_case(name, m, checked=v < 1)
m = relu_model()
m.opset_import.add(domain="ai.onnx.ml", version=99)
checker_case("opset_ml_99", m, checked=False)

# values defined twice
w23 = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
checker_case("initializer_written_by_node", model([helper.make_node("Relu", ["x"], ["w"]),
                                                   helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [w23]))
checker_case("input_written_by_node", model([helper.make_node("Relu", ["x"], ["x"])], [vi("x")], [vi("x")]))
checker_case("initializer_twice", model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [w23, w23]))
checker_case("input_twice", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x"), vi("x")], [vi("y")]))
body = helper.make_graph([helper.make_node("Relu", ["x"], ["x2"]), helper.make_node("Neg", ["x2"], ["x"])], "then",
                         [], [vi("x")])
cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
checker_case("subgraph_redefines_outer_value",
             model([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)], [cond, vi("x")],
                   [vi("y")]), "files/c_true.npy")
np.save(os.path.join(files, "c_true.npy"), np.array(True))

# required attributes and subgraphs, and attributes the schema does not have or types differently
branch = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "then", [], [vi("z")])
checker_case("if_without_else_branch", model([helper.make_node("If", ["c"], ["y"], then_branch=branch)],
                                             [cond, vi("x")], [vi("y")]), "files/c_true.npy")
trip = numpy_helper.from_array(np.array(2, np.int64), "n")
checker_case("loop_without_body", model([helper.make_node("Loop", ["n", "", "x"], ["y"])], [vi("x")], [vi("y")], [trip]))
checker_case("scan_without_body", model([helper.make_node("Scan", ["x"], ["y"], num_scan_inputs=1)], [vi("x")], [vi("y")]))
checker_case("cast_without_to", model([helper.make_node("Cast", ["x"], ["y"])], [vi("x")], [vi("y")]))
checker_case("concat_without_axis", model([helper.make_node("Concat", ["x", "x"], ["y"])], [vi("x")], [vi("y")]))
checker_case("unknown_attribute", model([helper.make_node("Relu", ["x"], ["y"], alpha=0.5)], [vi("x")], [vi("y")]))
checker_case("unknown_onnx_op", model([helper.make_node("FancyRelu", ["x"], ["y"])], [vi("x")], [vi("y")]))
checker_case("too_many_outputs", model([helper.make_node("Relu", ["x"], ["y", "z"])], [vi("x")], [vi("y")]))
checker_case("node_without_inputs_or_outputs", model([helper.make_node("Relu", ["x"], ["y"]),
                                                      helper.make_node("Relu", [], [])], [vi("x")], [vi("y")]))
two = helper.make_attribute("axis", 1)
two.f = 2.0  # an int attribute that also holds a float
sm = helper.make_node("Softmax", ["x"], ["y"])
sm.attribute.append(two)
checker_case("attribute_two_values", model([sm], [vi("x")], [vi("y")]))
ref = helper.make_node("Softmax", ["x"], ["y"])
ra = ref.attribute.add()
ra.name, ra.ref_attr_name, ra.type = "axis", "ax", onnx.AttributeProto.INT
# the checker lets this pass; minirt refuses it: outside a function nothing supplies the value (the kernel would
# read the attribute's empty default)
checker_case("ref_attribute_outside_function", model([ref], [vi("x")], [vi("y")]), checked=False)
# a model-local function whose body writes one value twice and holds an If without else_branch
fbody = [helper.make_node("Relu", ["a"], ["b"]), helper.make_node("Neg", ["a"], ["b"]),
         helper.make_node("If", ["c"], ["d"], then_branch=branch)]
fn = helper.make_function("acme", "Twice", ["a", "c"], ["b"], fbody, [helper.make_opsetid("", 13)])
m = helper.make_model(helper.make_graph([helper.make_node("Twice", ["x", "c"], ["y"], domain="acme")], "g",
                                        [cond, vi("x")], [vi("y")]), functions=[fn],
                      opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("acme", 1)])
m.ir_version = 8
checker_case("function_body_problems", m, "files/c_true.npy")
# several problems: run names the first and counts the rest; `minirt check` lists them all (expected_check.tsv)
many = model([helper.make_node("If", ["c"], ["y"], then_branch=branch), helper.make_node("Relu", ["x"], ["y"]),
              helper.make_node("Cast", ["x"], ["z"])], [cond, vi("x")], [vi("y"), vi("z")])
many.ir_version = 0
checker_case("many_problems", many, "files/c_true.npy")

# what the checker refuses but exporters write: minirt runs these (exit 0); `minirt check` lists them
lenient = []
m = model([helper.make_node("Neg", ["a"], ["y"]), helper.make_node("Relu", ["x"], ["a"])], [vi("x")], [vi("y")])
assert refused_by_checker(m)
lenient.append(("unsorted_nodes", save("unsorted_nodes.onnx", m)))
m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
assert refused_by_checker(m)
lenient.append(("output_without_shape", save("output_without_shape.onnx", m)))
m = model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=1)], [vi("x")], [vi("y")])
assert refused_by_checker(m)
lenient.append(("int_for_float_attribute", save("int_for_float_attribute.onnx", m)))
m = relu_model()
m.graph.name = ""
assert refused_by_checker(m)
lenient.append(("graph_without_name", save("graph_without_name.onnx", m)))
m = relu_model()
for v in ("1", "2"):
    m.metadata_props.add(key="author", value=v)
assert refused_by_checker(m)
lenient.append(("metadata_key_twice", save("metadata_key_twice.onnx", m)))
# torch.onnx's custom symbolics: a node of domain 'custom' with no opset import for it
m = model([helper.make_node("Roll", ["x"], ["y"], domain="custom", shifts=[1], dims=[1])], [vi("x")], [vi("y")])
assert refused_by_checker(m)
lenient.append(("custom_domain_not_imported", save("custom_domain_not_imported.onnx", m)))
for name, model_file in lenient:
    add(name, model_file, x23, 0, "")

with open(os.path.join(out, "expected.tsv"), "w") as f:
    f.write("# name\tmodel\tinput\texit status\tstart of the message after 'minirt: error: '\n")
    for c in cases:
        f.write("\t".join(c) + "\n")
print(len(cases), "cases")
