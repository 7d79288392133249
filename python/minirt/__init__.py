"""minirt: a reference inference engine for ONNX models, from Python.

    import minirt
    sess = minirt.InferenceSession("model.onnx")               # ONNX Runtime's API
    ref = minirt.InferenceSession("model.onnx", precision="fp64")
    print(minirt.compare(sess.run(None, feed)[0], ref.run(None, feed)[0], atol=1e-5, rtol=1e-5))

minirt.backend is an onnx.backend.base.Backend; minirt.polygraphy a Polygraphy runner (`polygraphy run --minirt`).
"""
from ._errors import DeviceError, Error, FileError, InvalidArgument, InvalidModel, OutOfMemory, Unsupported
from ._lib import LIBRARY_PATH, git_commit
from ._session import InferenceSession, NodeArg, SessionOptions, get_available_providers
from ._tools import CompareResult, DiffResult, cli, compare, diff, load_dump, save_dump

__version__ = "0.1.0"

__all__ = ["InferenceSession", "SessionOptions", "NodeArg", "get_available_providers", "compare", "CompareResult",
           "diff", "DiffResult", "load_dump", "save_dump", "cli", "Error", "InvalidArgument", "InvalidModel",
           "Unsupported", "OutOfMemory", "DeviceError", "FileError", "LIBRARY_PATH", "git_commit"]
