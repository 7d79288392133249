"""minirt as an ONNX backend (onnx.backend.base.Backend), so that ONNX's own test runner,
onnx.backend.test.BackendTest, runs against minirt:

    import onnx.backend.test, minirt.backend
    globals().update(onnx.backend.test.BackendTest(minirt.backend, __name__).test_cases)
"""
import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from ._lib import cuda_available
from ._session import InferenceSession


class MinirtRep(BackendRep):
    def __init__(self, session):
        self.session = session

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.session.get_inputs()]
        if isinstance(inputs, dict):
            feed = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feed = dict(zip(names, inputs))
        return tuple(self.session.run(None, feed))


class MinirtBackend(Backend):
    # the conformance runner's setting: kernels that promise to write every output element get them filled with
    # NaN first, so one that skips an element fails (README, --poison-outputs)
    session_options = {"poison_outputs": True}

    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device):
        kind = Device(device).type
        # CUDA when a CUDA module loads and finds a device (docs/cuda.md)
        return kind == DeviceType.CPU or (kind == DeviceType.CUDA and cuda_available())

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        opts = dict(cls.session_options)
        opts.update(kwargs)
        provider = "CPUExecutionProvider" if Device(device).type == DeviceType.CPU else "CUDAExecutionProvider"
        data = model.SerializeToString() if hasattr(model, "SerializeToString") else model
        return MinirtRep(InferenceSession(data, providers=[provider], **opts))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """One node as a model: inputs in the node's input order (numpy arrays); outputs_info, when given, is
        [(dtype, shape)] per output."""
        inputs = [np.asarray(x) for x in inputs]
        names = [n for n in node.input if n]
        graph_inputs = [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
                        for n, x in zip(names, inputs)]
        graph_outputs = []
        for k, out in enumerate(o for o in node.output if o):
            if outputs_info and k < len(outputs_info):
                dt, shape = outputs_info[k]
                graph_outputs.append(onnx.helper.make_tensor_value_info(
                    out, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dt)), shape))
            else:
                graph_outputs.append(onnx.helper.make_empty_tensor_value_info(out))
        graph = onnx.helper.make_graph([node], f"{node.op_type}_node", graph_inputs, graph_outputs)
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(node.domain or "", opset)])
        return cls.run_model(model, dict(zip(names, inputs)), device, **kwargs)


prepare = MinirtBackend.prepare
run_model = MinirtBackend.run_model
run_node = MinirtBackend.run_node
supports_device = MinirtBackend.supports_device
is_compatible = MinirtBackend.is_compatible
