"""A model built from model-local functions (FunctionProto), with ONNX Runtime's output as the reference.

  custom.fn::LinearAct(X, W, B; alpha) = LeakyRelu(MatMul(X, W) + B, alpha=@alpha)   (alpha defaults to 0.1)
  custom.fn::Twice(X, W, B; alpha)     = LinearAct(LinearAct(X, W, B; alpha=@alpha), W, B)   (second: default)
  model: Y = Twice(X, W, B; alpha=0.25)

usage: python3 models/scripts/make_function_fixture.py models/fixtures/functions
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
D = "custom.fn"
ref_alpha = helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT)
leaky = helper.make_node("LeakyRelu", ["s"], ["Y"])
leaky.attribute.append(ref_alpha)
linear_act = helper.make_function(
    D, "LinearAct", ["X", "W", "B"], ["Y"],
    [helper.make_node("MatMul", ["X", "W"], ["m"]), helper.make_node("Add", ["m", "B"], ["s"]), leaky],
    [helper.make_opsetid("", 17)], attributes=[])
linear_act.attribute_proto.append(helper.make_attribute("alpha", 0.1))
first = helper.make_node("LinearAct", ["X", "W", "B"], ["h"], domain=D)
first.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT))
twice = helper.make_function(
    D, "Twice", ["X", "W", "B"], ["Y"],
    [first, helper.make_node("LinearAct", ["h", "W", "B"], ["Y"], domain=D)],
    [helper.make_opsetid("", 17), helper.make_opsetid(D, 1)], attributes=["alpha"])
graph = helper.make_graph(
    [helper.make_node("Twice", ["X", "W", "B"], ["Y"], domain=D, alpha=0.25)], "functions",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 4])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 4])],
    initializer=[helper.make_tensor("W", TensorProto.FLOAT, [4, 4], np.random.RandomState(1).randn(16)),
                 helper.make_tensor("B", TensorProto.FLOAT, [4], np.random.RandomState(2).randn(4))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(D, 1)],
                          functions=[linear_act, twice])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
x = np.random.RandomState(3).randn(3, 4).astype(np.float32)
y = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y_ort.npy"), y)
print("negative entries in y:", int((y < 0).sum()))
