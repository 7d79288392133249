"""minirt's statuses as Python exceptions, each carrying the library's message (which names the node, tensor and
shapes)."""
from . import _lib


class Error(Exception):
    """Any failure reported by minirt. `.status` is the C status name (MRT_STATUS_...)."""

    status = "MRT_STATUS_UNKNOWN"


class InvalidArgument(Error, ValueError):
    """The caller passed something wrong: an input's name, dtype or shape, an option."""

    status = "MRT_STATUS_INVALID_ARG"


class InvalidModel(Error):
    """The model bytes or graph are malformed or inconsistent."""

    status = "MRT_STATUS_INVALID_MODEL"


class Unsupported(Error, NotImplementedError):
    """Valid ONNX that minirt cannot run (no kernel, an unsupported attribute or dtype)."""

    status = "MRT_STATUS_NOT_IMPLEMENTED"


class OutOfMemory(Error, MemoryError):
    status = "MRT_STATUS_OUT_OF_MEMORY"


class DeviceError(Error):
    """A CUDA failure, or no CUDA device."""

    status = "MRT_STATUS_DEVICE_ERROR"


class FileError(Error, OSError):
    """A file could not be read or written."""

    status = "MRT_STATUS_IO_ERROR"


_BY_STATUS = {1: InvalidArgument, 2: InvalidModel, 3: Unsupported, 4: OutOfMemory, 5: DeviceError, 6: FileError}


def check(status, context=None):
    """Raise the exception for a non-zero mrt_status with mrt_last_error()'s message."""
    if status == 0:
        return
    msg = _lib.last_error() or "(no message)"
    if context:
        msg = f"{context}: {msg}"
    raise _BY_STATUS.get(status, Error)(msg)
