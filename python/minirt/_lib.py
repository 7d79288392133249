"""ctypes bindings to libminirt.so (the public C API, minirt.h and minirt_tools.h)."""
import ctypes
import glob
import os

import numpy as np

MAX_RANK = 16
_here = os.path.dirname(os.path.abspath(__file__))


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * MAX_RANK),
                ("data", ctypes.c_void_p)]


class Value(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", Tensor), ("seq_dtype", ctypes.c_int), ("n_items", ctypes.c_int64),
                ("items", ctypes.POINTER(Tensor)), ("is_optional", ctypes.c_bool)]


class DeclaredType(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.c_int64 * MAX_RANK), ("dim_params", ctypes.c_char_p * MAX_RANK)]


VALUE_NONE, VALUE_TENSOR, VALUE_SEQUENCE = 0, 1, 2
DECLARED_UNKNOWN, DECLARED_TENSOR, DECLARED_SEQUENCE, DECLARED_OPTIONAL, DECLARED_OTHER = range(5)


def _library_path():
    env = os.environ.get("MINIRT_LIBRARY")
    if env:
        return env
    for pattern in ("lib/libminirt.so", "lib*/libminirt.so", "lib*/*/libminirt.so"):
        found = sorted(glob.glob(os.path.join(_here, pattern)))
        if found:
            return found[0]
    raise ImportError(f"libminirt.so not found under {_here} (reinstall with `pip install ./python`, or set "
                      "MINIRT_LIBRARY to the library's path)")


def _prefer_avx512_blas():
    # as the CLI does (cli_prefer_avx512_blas): OpenBLAS 0.3.21 does not recognise some AVX-512 CPUs and falls back
    # to its AVX2 kernels; it reads OPENBLAS_CORETYPE when it loads, so this must come before the library does
    if "OPENBLAS_CORETYPE" in os.environ or os.environ.get("MRT_NO_BLAS_REEXEC"):
        return
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    if " avx512bw" in line and " avx512vl" in line:
                        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
                    return
    except OSError:
        pass


_prefer_avx512_blas()
LIBRARY_PATH = _library_path()
# RTLD_GLOBAL: the CUDA module (dlopen'ed by the engine) and plugins resolve the engine's mrt_* symbols from the
# global scope.
lib = ctypes.CDLL(LIBRARY_PATH, mode=os.RTLD_GLOBAL | os.RTLD_NOW)

_c = ctypes
_P = _c.c_void_p
_sigs = {
    "mrt_last_error": (_c.c_char_p, []),
    "mrt_status_name": (_c.c_char_p, [_c.c_int]),
    "mrt_model_load": (_c.c_int, [_c.c_char_p, _c.POINTER(_P)]),
    "mrt_model_load_from_memory": (_c.c_int, [_c.c_char_p, _c.c_size_t, _c.c_char_p, _c.POINTER(_P)]),
    "mrt_model_free": (None, [_P]),
    "mrt_model_n_inputs": (_c.c_int, [_P]),
    "mrt_model_input_name": (_c.c_char_p, [_P, _c.c_int]),
    "mrt_model_n_outputs": (_c.c_int, [_P]),
    "mrt_model_output_name": (_c.c_char_p, [_P, _c.c_int]),
    "mrt_model_input_type": (_c.c_int, [_P, _c.c_int, _c.POINTER(DeclaredType)]),
    "mrt_model_output_type": (_c.c_int, [_P, _c.c_int, _c.POINTER(DeclaredType)]),
    "mrt_tool_session_new": (_c.c_int, [_P, _c.c_int, _c.POINTER(_c.c_char_p), _c.POINTER(_c.c_char_p),
                                         _c.POINTER(_P)]),
    "mrt_tool_session_run": (_c.c_int, [_P, _c.c_int, _c.POINTER(_c.c_char_p), _c.POINTER(Value)]),
    "mrt_tool_session_get": (_P, [_P]),
    "mrt_tool_session_free": (None, [_P]),
    "mrt_session_n_outputs": (_c.c_int, [_P]),
    "mrt_session_output_name": (_c.c_char_p, [_P, _c.c_int]),
    "mrt_session_output": (_c.POINTER(Value), [_P, _c.c_int]),
    "mrt_session_n_threads": (_c.c_int, [_P]),
    "mrt_tensor_nbytes": (_c.c_size_t, [_c.POINTER(Tensor)]),
    "mrt_plugin_load": (_c.c_int, [_c.c_char_p, _c.c_bool]),
    "mrt_tool_compare_json": (_P, [_c.POINTER(Tensor), _c.POINTER(Tensor), _c.c_double, _c.c_double, _c.c_char_p,
                                   _c.c_double, _c.c_bool]),
    "mrt_tool_free": (None, [_P]),
    "mrt_tool_main": (_c.c_int, [_c.c_int, _c.POINTER(_c.c_char_p)]),
    "mrt_cuda_open": (_c.c_int, [_c.POINTER(_P)]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args

git_commit = (ctypes.c_char * 64).in_dll(lib, "mrt_git_commit").value.decode()


def cuda_available():
    """True when a CUDA module loads and finds a device (MRT_CUDA_MODULE may name the emulated one, which runs the
    CUDA kernels on the CPU)."""
    api = _P()
    return lib.mrt_cuda_open(_c.byref(api)) == 0


def last_error():
    return (lib.mrt_last_error() or b"").decode("utf-8", "replace")


def c_strings(items):
    arr = (ctypes.c_char_p * max(len(items), 1))()
    for i, s in enumerate(items):
        arr[i] = s.encode() if isinstance(s, str) else s
    return arr
