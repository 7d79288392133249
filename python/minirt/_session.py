"""minirt.InferenceSession: ONNX Runtime's session API over minirt."""
import ctypes
import os

import numpy as np

from . import _dtypes, _lib
from ._errors import InvalidArgument, Unsupported, check

_PROVIDERS = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda"}


def get_available_providers():
    """The ONNX Runtime provider names minirt maps onto its devices."""
    return list(_PROVIDERS)


class NodeArg:
    """An input or output as ONNX Runtime describes it: name, shape (ints, symbolic names, or None), type string."""

    def __init__(self, name, shape, type):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _node_arg(name, t):
    if t.kind == _lib.DECLARED_UNKNOWN or t.kind == _lib.DECLARED_OTHER:
        return NodeArg(name, None, "unknown")
    tensor = f"tensor({_dtypes.type_name(t.dtype)})"
    type_str = {_lib.DECLARED_TENSOR: tensor, _lib.DECLARED_SEQUENCE: f"seq({tensor})",
                _lib.DECLARED_OPTIONAL: f"optional({tensor})"}[t.kind]
    shape = None
    if t.rank >= 0:
        shape = [int(t.dims[i]) if t.dims[i] >= 0 else (t.dim_params[i].decode() if t.dim_params[i] else None)
                 for i in range(t.rank)]
    return NodeArg(name, shape, type_str)


class SessionOptions:
    """The part of onnxruntime.SessionOptions minirt uses (an onnxruntime.SessionOptions works too)."""

    def __init__(self):
        self.intra_op_num_threads = 0


class Model:
    """A loaded model (shared by sessions)."""

    def __init__(self, path_or_bytes):
        self._ptr = ctypes.c_void_p()
        self.path = None
        if hasattr(path_or_bytes, "SerializeToString"):  # an onnx.ModelProto
            path_or_bytes = path_or_bytes.SerializeToString()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(path_or_bytes)
            check(_lib.lib.mrt_model_load_from_memory(data, len(data), None, ctypes.byref(self._ptr)), "model bytes")
        else:
            self.path = os.fspath(path_or_bytes)
            check(_lib.lib.mrt_model_load(self.path.encode(), ctypes.byref(self._ptr)), self.path)

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.lib.mrt_model_free(self._ptr)
            self._ptr = None

    def inputs(self):
        out = []
        for i in range(_lib.lib.mrt_model_n_inputs(self._ptr)):
            t = _lib.DeclaredType()
            check(_lib.lib.mrt_model_input_type(self._ptr, i, ctypes.byref(t)))
            out.append((_lib.lib.mrt_model_input_name(self._ptr, i).decode(), t))
        return out

    def outputs(self):
        out = []
        for i in range(_lib.lib.mrt_model_n_outputs(self._ptr)):
            t = _lib.DeclaredType()
            check(_lib.lib.mrt_model_output_type(self._ptr, i, ctypes.byref(t)))
            out.append((_lib.lib.mrt_model_output_name(self._ptr, i).decode(), t))
        return out


def as_input_array(x, dtype_id=None):
    """What a run borrows for an input: the array itself when it is C-contiguous with a dtype minirt takes (no
    copy), else a contiguous copy. Returns (array, ONNX dtype id)."""
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    dt = _dtypes.from_numpy(a.dtype)
    if dt is None:
        raise InvalidArgument(f"numpy dtype {a.dtype} has no ONNX element type")
    if dt == _dtypes.STRING:
        return a, dt
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a, dt


def _fill_tensor(t, x, keep, name):
    a, dt = as_input_array(x)
    if a.ndim > _lib.MAX_RANK:
        raise InvalidArgument(f"input '{name}': rank {a.ndim} exceeds minirt's maximum {_lib.MAX_RANK}")
    t.dtype, t.rank = dt, a.ndim
    for i, d in enumerate(a.shape):
        t.shape[i] = d
    if dt == _dtypes.STRING:
        strs = _lib.c_strings([s.encode() if isinstance(s, str) else bytes(s) for s in a.reshape(-1).tolist()])
        keep.append(strs)
        t.data = ctypes.cast(strs, ctypes.c_void_p)
    elif _dtypes.bits(dt) < 8:
        packed = _dtypes.pack_subbyte(a, dt)
        keep.append(packed)
        t.data = packed.ctypes.data
    else:
        keep.append(a)
        t.data = a.ctypes.data if a.size else None
    return dt


def _tensor_to_numpy(t, name):
    shape = tuple(t.shape[i] for i in range(t.rank))
    n = int(np.prod(shape, dtype=np.int64))
    if t.dtype == _dtypes.STRING:
        ptrs = ctypes.cast(t.data, ctypes.POINTER(ctypes.c_char_p))
        return np.array([ptrs[i].decode("utf-8", "replace") for i in range(n)], dtype=object).reshape(shape)
    dtype = _dtypes.to_numpy(t.dtype)
    if dtype is None:
        raise Unsupported(f"output '{name}': element type {_dtypes.type_name(t.dtype)} has no numpy dtype here "
                          "(install ml_dtypes)")
    nbytes = _lib.lib.mrt_tensor_nbytes(ctypes.byref(t))
    if n == 0 or not t.data:
        return np.zeros(shape, dtype)
    raw = np.frombuffer((ctypes.c_char * nbytes).from_address(t.data), dtype=np.uint8).copy()
    if _dtypes.bits(t.dtype) < 8:
        return _dtypes.unpack_subbyte(raw, t.dtype, shape)
    return raw.view(dtype).reshape(shape)


def _value_to_python(v, name):
    if v.kind == _lib.VALUE_NONE:
        return None
    if v.kind == _lib.VALUE_SEQUENCE:
        return [_tensor_to_numpy(v.items[i], name) for i in range(v.n_items)]
    return _tensor_to_numpy(v.tensor, name)


class InferenceSession:
    """A model ready to run, with ONNX Runtime's API:

        sess = minirt.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
        y, = sess.run(None, {"x": x})

    minirt's own options as keywords: precision="fp64" (the whole model in float64), threads=N, plugins=[paths]
    (op plugins, loaded into the process first), dump_dir=DIR (every run writes every tensor there in minirt's
    dump format, as `minirt run --dump-all`), and the CLI's switches no_fuse, no_winograd, no_mem_plan,
    poison_outputs, expand_functions."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *, precision=None,
                 threads=None, plugins=(), dump_dir=None, plugin_replace=False, **options):
        for p in plugins or ():
            check(_lib.lib.mrt_plugin_load(os.fspath(p).encode(), bool(plugin_replace)), f"plugin {p}")
        self._model = Model(path_or_bytes)
        self._providers = self._pick_provider(providers)
        opts = {"device": _PROVIDERS[self._providers[0]]}
        n = getattr(sess_options, "intra_op_num_threads", 0) or 0
        if threads is not None:
            n = threads
        if n:
            opts["threads"] = str(int(n))
        if precision is not None:
            opts["precision"] = precision
        if dump_dir is not None:
            os.makedirs(dump_dir, exist_ok=True)
            opts["dump_dir"] = os.fspath(dump_dir)
            if self._model.path:
                opts["model_path"] = self._model.path
        for k, v in options.items():
            opts[k] = ("1" if v else "0") if isinstance(v, bool) else str(v)
        keys, vals = _lib.c_strings(list(opts)), _lib.c_strings(list(opts.values()))
        self._ptr = ctypes.c_void_p()
        check(_lib.lib.mrt_tool_session_new(self._model._ptr, len(opts), keys, vals, ctypes.byref(self._ptr)),
              "session")
        self._inputs = [_node_arg(n, t) for n, t in self._model.inputs()]
        self._input_types = dict(self._model.inputs())
        self._outputs = [_node_arg(n, t) for n, t in self._model.outputs()]

    @staticmethod
    def _pick_provider(providers):
        if not providers:
            return ["CPUExecutionProvider"]
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
        for name in names:
            if name not in _PROVIDERS:
                raise InvalidArgument(f"provider '{name}' is not one minirt maps (available: "
                                      f"{', '.join(_PROVIDERS)})")
        return [names[0]]

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.lib.mrt_tool_session_free(self._ptr)
            self._ptr = None

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return list(self._providers)

    def get_modelmeta(self):
        raise Unsupported("get_modelmeta is not implemented by minirt")

    def _make_value(self, name, x, keep):
        v = _lib.Value()
        declared = self._input_types.get(name)
        if x is None:
            v.kind = _lib.VALUE_NONE
            return v
        if isinstance(x, (list, tuple)) and (declared is None or declared.kind != _lib.DECLARED_TENSOR):
            items = (_lib.Tensor * max(len(x), 1))()
            keep.append(items)
            for i, item in enumerate(x):
                _fill_tensor(items[i], item, keep, name)
            v.kind, v.n_items, v.items = _lib.VALUE_SEQUENCE, len(x), items
            v.seq_dtype = items[0].dtype if x else (declared.dtype if declared is not None else 0)
            v.is_optional = declared is not None and declared.kind == _lib.DECLARED_OPTIONAL
            return v
        v.kind = _lib.VALUE_TENSOR
        _fill_tensor(v.tensor, x, keep, name)
        v.is_optional = declared is not None and declared.kind == _lib.DECLARED_OPTIONAL
        return v

    def run(self, output_names, input_feed, run_options=None):
        """Run the model on input_feed ({name: array}); returns the outputs named (all when None) as numpy arrays
        (a sequence output as a list of arrays, an empty optional as None). The GIL is released while the model
        runs, and contiguous inputs of a dtype minirt takes are used in place."""
        keep = []
        names = list(input_feed)
        values = (_lib.Value * max(len(names), 1))()
        for i, name in enumerate(names):
            values[i] = self._make_value(name, input_feed[name], keep)
        c_names = _lib.c_strings(names)
        # ctypes releases the GIL for the duration of the call
        check(_lib.lib.mrt_tool_session_run(self._ptr, len(names), c_names, values))
        s = _lib.lib.mrt_tool_session_get(self._ptr)
        produced = {_lib.lib.mrt_session_output_name(s, i).decode(): i for i in range(_lib.lib.mrt_session_n_outputs(s))}
        wanted = [o.name for o in self._outputs] if output_names is None else list(output_names)
        result = []
        for name in wanted:
            if name not in produced:
                raise InvalidArgument(f"output '{name}' is not an output of the model (outputs: "
                                      f"{', '.join(produced)})")
            result.append(_value_to_python(_lib.lib.mrt_session_output(s, produced[name]).contents, name))
        return result
