#!/usr/bin/env python3
"""Rewrite torchvision's exported deformable convolution into the standard ONNX DeformConv, for ONNX Runtime.

Usage (a Python with the onnx package, e.g. the pyenv python3):
    python3 models/scripts/make_dcnv2_ort.py IN.onnx OUT.onnx

models/scripts/export_models.py exports torchvision.ops.deform_conv2d as custom::deform_conv2d, which only
minirt runs. Every such node becomes DeformConv (default domain, opset 19), the same computation:

    custom::deform_conv2d(input, weight, offset, mask, bias;     DeformConv(X, W, offset, B, mask;
        stride=[sh, sw], padding=[ph, pw],               ->          strides=[sh, sw], pads=[ph, pw, ph, pw],
        dilation=[dh, dw], groups, offset_groups, use_mask)          dilations=[dh, dw], group, offset_group,
                                                                     kernel_shape=W.shape[2:])

(use_mask=0 drops the mask operand.) The default-domain opset import is raised to 19 where it is lower (the
other ops of the exported models mean the same at 17 and 19), the IR version to 9 where lower, and the custom
domain import is dropped when no node uses it any more. bench/compare.py imports convert() from here.
"""
import sys

import onnx
from onnx import helper

DEFORM_OPSET = 19  # DeformConv's first version


def convert(src, dst):
    """Write dst = src with every deform_conv2d node replaced by DeformConv; return how many were replaced."""
    m = onnx.load(src)
    inits = {t.name: t for t in m.graph.initializer}
    nodes = list(m.graph.node)
    replaced = 0
    for i, n in enumerate(nodes):
        if n.op_type != "deform_conv2d" or n.domain in ("", "ai.onnx"):
            continue
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        stride = list(a.get("stride", [1, 1]))
        padding = list(a.get("padding", [0, 0]))
        dilation = list(a.get("dilation", [1, 1]))
        ins = list(n.input) + [""] * (5 - len(n.input))  # input, weight, offset, mask, bias
        use_mask = int(a.get("use_mask", 1)) and ins[3] != ""
        new_inputs = [ins[0], ins[1], ins[2], ins[4], ins[3] if use_mask else ""]
        while new_inputs and new_inputs[-1] == "":
            new_inputs.pop()
        attrs = dict(strides=stride, pads=padding + padding, dilations=dilation, group=int(a.get("groups", 1)),
                     offset_group=int(a.get("offset_groups", 1)))
        if ins[1] in inits:  # optional in DeformConv (inferred from W), but explicit is clearer
            attrs["kernel_shape"] = list(inits[ins[1]].dims[2:])
        nodes[i] = helper.make_node("DeformConv", new_inputs, list(n.output), name=n.name, **attrs)
        replaced += 1
    del m.graph.node[:]
    m.graph.node.extend(nodes)

    used = {n.domain for n in nodes}
    imports = []
    has_default = False
    for op in m.opset_import:
        if op.domain in ("", "ai.onnx"):
            has_default = True
            imports.append(helper.make_opsetid("", max(op.version, DEFORM_OPSET)))
        elif op.domain in used:
            imports.append(op)
    if not has_default:
        imports.append(helper.make_opsetid("", DEFORM_OPSET))
    del m.opset_import[:]
    m.opset_import.extend(imports)
    if m.ir_version < 9:  # opset 19 needs IR version 9
        m.ir_version = 9
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return replaced


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = convert(sys.argv[1], sys.argv[2])
    print(f"{sys.argv[2]}: {n} deform_conv2d node(s) rewritten to DeformConv (opset {DEFORM_OPSET})")


if __name__ == "__main__":
    main()
