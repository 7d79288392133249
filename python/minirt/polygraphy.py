"""minirt in Polygraphy: MinirtRunner (a polygraphy BaseRunner) and `polygraphy run model.onnx --minirt` through
Polygraphy's extension mechanism (the "polygraphy.run.plugins" entry point this package declares):

    polygraphy run model.onnx --onnxrt --minirt              # compare minirt with ONNX Runtime
    polygraphy run model.onnx --minirt --minirt-precision fp64 --onnxrt
"""
import time
from collections import OrderedDict

from polygraphy import util
from polygraphy.backend.base import BaseRunner
from polygraphy.common import TensorMetadata
from polygraphy.datatype import DataType
from polygraphy.tools.args import ModelArgs
from polygraphy.tools.args.base import BaseRunnerArgs
from polygraphy.tools.script import make_invocable

from ._session import InferenceSession


class MinirtRunner(BaseRunner):
    """Runs inference with minirt. model: a path, bytes, or a callable returning either (a Polygraphy loader);
    keyword options go to minirt.InferenceSession (precision="fp64", threads=...)."""

    def __init__(self, model, name=None, **session_options):
        super().__init__(name=name, prefix="minirt-runner")
        self._model = model
        self._options = session_options

    def activate_impl(self):
        model, _ = util.invoke_if_callable(self._model)
        self.sess = InferenceSession(model, **self._options)

    def get_input_metadata_impl(self):
        meta = TensorMetadata()
        for node in self.sess.get_inputs():
            meta.add(node.name, dtype=DataType.from_dtype(node.type, "onnxruntime"), shape=node.shape)
        return meta

    def infer_impl(self, feed_dict):
        feed = {name: util.array.to_numpy(t) for name, t in feed_dict.items()}
        start = time.time()
        values = self.sess.run(None, feed)
        self.inference_time = time.time() - start
        return OrderedDict((o.name, v) for o, v in zip(self.sess.get_outputs(), values))

    def deactivate_impl(self):
        del self.sess


class MinirtRunnerArgs(BaseRunnerArgs):
    """minirt Inference: running inference with minirt (`--minirt`).

    Depends on:

        - ModelArgs
    """

    def get_name_opt_impl(self):
        return "minirt", "minirt"

    def add_parser_args_impl(self):
        self.group.add_argument("--minirt-precision", choices=["fp32", "fp64"], default=None,
                                help="minirt's precision: fp64 computes the whole model in float64 (the ground truth)")
        self.group.add_argument("--minirt-threads", type=int, default=None, help="minirt's thread count")

    def parse_impl(self, args):
        self.precision = args_util_get(args, "minirt_precision")
        self.threads = args_util_get(args, "minirt_threads")

    def add_to_script_impl(self, script):
        script.add_import(imports=["MinirtRunner"], frm="minirt.polygraphy")
        kwargs = {}
        if self.precision:
            kwargs["precision"] = self.precision
        if self.threads:
            kwargs["threads"] = self.threads
        script.add_runner(make_invocable("MinirtRunner", self.arg_groups[ModelArgs].path, **kwargs))


def args_util_get(args, name):
    return getattr(args, name, None)


def export_argument_groups():
    """The "polygraphy.run.plugins" entry point: the argument groups `polygraphy run` adds."""
    return [MinirtRunnerArgs()]
