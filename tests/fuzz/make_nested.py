"""Write the nested-structure seeds and regressions for fuzz_model (no dependencies: the bytes are written by hand,
since the onnx package cannot build or serialize a 10,000-deep model without exhausting Python's own recursion).

usage: python3 tests/fuzz/make_nested.py tests/fuzz
  seeds/model/if_nested_{3,64}.onnx    If whose then_branch is another If, 3 and 64 levels (64 is minirt's limit:
                                       it runs); if_nested_65.onnx one past it (refused)
  seeds/model/loop_scan_if.onnx        Loop body holding a Scan whose body holds an If (each reading outer values)
  regressions/model/if_nested_10000    10,000 nested If bodies: SIGSEGV (stack overflow inside protobuf-c's unpack)
  regressions/model/type_nested_20000  a graph input typed sequence(sequence(...)) 20,000 deep: the same overflow
"""
import os
import sys


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def msg(num, payload):  # a length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def num(field, v):  # a varint field
    return varint(field << 3) + varint(v)


def text(field, t):
    return msg(field, t.encode())


# onnx.proto field numbers: ModelProto ir_version=1 graph=7 opset_import=8; OperatorSetIdProto domain=1 version=2;
# GraphProto node=1 name=2 input=11 output=12; NodeProto input=1 output=2 name=3 op_type=4 attribute=5;
# AttributeProto name=1 g=6 type=20 (GRAPH=5) i=3 (INT=2); ValueInfoProto name=1 type=2;
# TypeProto tensor_type=1 sequence_type=4; Tensor elem_type=1 shape=2; Sequence elem_type=1; Shape dim=1, dim_value=1


def node(op, inputs, outputs, attrs=b""):
    return b"".join(text(1, i) for i in inputs) + b"".join(text(2, o) for o in outputs) + text(4, op) + attrs


def graph_attr(name, g):
    return msg(5, text(1, name) + msg(6, g) + num(20, 5))


def graph(nodes, name, outputs, inputs=b""):
    return b"".join(msg(1, n) for n in nodes) + text(2, name) + inputs + b"".join(msg(12, text(1, o)) for o in outputs)


def tensor_type(elem, dims):
    shape = b"".join(msg(1, num(1, d)) for d in dims)
    return msg(1, num(1, elem) + msg(2, shape))


def value_info(name, t):
    return text(1, name) + msg(2, t)


def model(g, opset=13):
    return num(1, 8) + msg(7, g) + msg(8, text(1, "") + num(2, opset))


def if_nested(depth):
    """If(c) whose then_branch is the next If, `depth` bodies deep; every else_branch and the innermost body return
    the outer x through Identity, so the model runs and gives x."""
    leaf = lambda name: graph([node("Identity", ["x"], ["y"])], name, ["y"])
    g = leaf("leaf")
    for i in range(depth):
        attrs = graph_attr("then_branch", g) + graph_attr("else_branch", leaf("else%d" % i))
        g = graph([node("If", ["c"], ["y"], attrs)], "then%d" % i, ["y"])
    inputs = msg(11, value_info("c", tensor_type(9, []))) + msg(11, value_info("x", tensor_type(1, [2])))
    outs = msg(12, value_info("y", tensor_type(1, [2])))
    top = g[: g.rfind(msg(12, text(1, "y")))] if depth else g
    return model(top + inputs + outs)


def if_nested_minimal(depth):
    """The fewest bytes per level (no names, no else_branch): 12 bytes a level, for the 10,000-deep regression."""
    g = b""
    for _ in range(depth):
        g = msg(1, msg(5, msg(6, g)))
    return model(g)


def type_nested(depth):
    t = tensor_type(1, [2])
    for _ in range(depth):
        t = msg(4, msg(1, t))
    g = graph([node("Identity", ["x"], ["y"])], "g", ["y"], msg(11, value_info("x", t)))
    return model(g)


def loop_scan_if():
    """Loop (3 trips) -> Scan over x's rows -> If on the outer c, each level reading a value from the one above."""
    then_g = graph([node("Add", ["row", "bias"], ["r"])], "then", ["r"])
    else_g = graph([node("Sub", ["row", "bias"], ["r"])], "else", ["r"])
    scan_body = graph([node("If", ["c"], ["r"], graph_attr("then_branch", then_g) + graph_attr("else_branch", else_g)),
                       node("Identity", ["r"], ["o"])], "scan_body", ["o"],
                      msg(11, value_info("row", tensor_type(1, [2]))))
    scan_attrs = graph_attr("body", scan_body) + msg(5, text(1, "num_scan_inputs") + num(3, 1) + num(20, 2))
    loop_body = graph([node("Scan", ["x"], ["s"], scan_attrs), node("Identity", ["cond_in"], ["cond_out"])],
                      "loop_body", ["cond_out", "s"],
                      msg(11, value_info("iter", tensor_type(7, []))) + msg(11, value_info("cond_in", tensor_type(9, []))))
    g = (msg(1, node("Loop", ["trips", ""], ["ys"], graph_attr("body", loop_body))) + text(2, "g")
         + msg(11, value_info("c", tensor_type(9, []))) + msg(11, value_info("x", tensor_type(1, [3, 2])))
         + msg(11, value_info("bias", tensor_type(1, [2]))) + msg(11, value_info("trips", tensor_type(7, [])))
         + msg(12, value_info("ys", tensor_type(1, [3, 3, 2]))))
    return model(g)


def main():
    out = sys.argv[1]
    seeds, regs = os.path.join(out, "seeds", "model"), os.path.join(out, "regressions", "model")
    os.makedirs(seeds, exist_ok=True)
    os.makedirs(regs, exist_ok=True)
    files = {os.path.join(seeds, "if_nested_3.onnx"): if_nested(3), os.path.join(seeds, "if_nested_64.onnx"): if_nested(64),
             os.path.join(seeds, "if_nested_65.onnx"): if_nested(65), os.path.join(seeds, "loop_scan_if.onnx"): loop_scan_if(),
             os.path.join(regs, "if_nested_10000"): if_nested_minimal(10000),
             os.path.join(regs, "type_nested_20000"): type_nested(20000)}
    for path, data in files.items():
        with open(path, "wb") as f:
            f.write(data)
        print(path, len(data), "bytes")


if __name__ == "__main__":
    main()
