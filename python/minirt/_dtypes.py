"""ONNX element types (minirt's mrt_dtype numbers are TensorProto.DataType's) <-> numpy dtypes."""
import numpy as np

try:
    import ml_dtypes
except ImportError:  # bfloat16, float8, int4... are then unavailable
    ml_dtypes = None

# id: (ONNX Runtime's type name, numpy dtype or ml_dtypes name, bits per element)
_TABLE = {
    1: ("float", np.float32, 32), 2: ("uint8", np.uint8, 8), 3: ("int8", np.int8, 8), 4: ("uint16", np.uint16, 16),
    5: ("int16", np.int16, 16), 6: ("int32", np.int32, 32), 7: ("int64", np.int64, 64), 8: ("string", object, 0),
    9: ("bool", np.bool_, 8), 10: ("float16", np.float16, 16), 11: ("double", np.float64, 64),
    12: ("uint32", np.uint32, 32), 13: ("uint64", np.uint64, 64), 14: ("complex64", np.complex64, 64),
    15: ("complex128", np.complex128, 128), 16: ("bfloat16", "bfloat16", 16),
    17: ("float8e4m3fn", "float8_e4m3fn", 8), 18: ("float8e4m3fnuz", "float8_e4m3fnuz", 8),
    19: ("float8e5m2", "float8_e5m2", 8), 20: ("float8e5m2fnuz", "float8_e5m2fnuz", 8),
    21: ("uint4", "uint4", 4), 22: ("int4", "int4", 4), 23: ("float4e2m1", "float4_e2m1fn", 4),
    24: ("float8e8m0", "float8_e8m0fnu", 8), 25: ("uint2", "uint2", 2), 26: ("int2", "int2", 2),
}
STRING = 8
SIGNED_SUBBYTE = {22, 26}


def type_name(dtype_id):
    return _TABLE[dtype_id][0] if dtype_id in _TABLE else "undefined"


def to_numpy(dtype_id):
    """numpy dtype for an ONNX element type, or None where numpy (and ml_dtypes) has none."""
    entry = _TABLE.get(dtype_id)
    if entry is None:
        return None
    t = entry[1]
    if isinstance(t, str):
        return np.dtype(getattr(ml_dtypes, t)) if ml_dtypes is not None and hasattr(ml_dtypes, t) else None
    return np.dtype(t)


def bits(dtype_id):
    return _TABLE[dtype_id][2]


_FROM_NUMPY = {}
for _id in _TABLE:
    _dt = to_numpy(_id)
    if _dt is not None and _id != STRING:
        _FROM_NUMPY.setdefault(_dt, _id)


def from_numpy(dtype):
    """ONNX element type of a numpy dtype; None if it has none."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OUS":
        return STRING
    return _FROM_NUMPY.get(dtype)


def pack_subbyte(a, dtype_id):
    """minirt's storage of 4- and 2-bit types: low bits first, packed into bytes."""
    b = bits(dtype_id)
    per = 8 // b
    codes = (a.astype(np.int8).view(np.uint8) if dtype_id in SIGNED_SUBBYTE else a.view(np.uint8))
    codes = (codes.reshape(-1) & ((1 << b) - 1)).astype(np.uint8)
    pad = (-codes.size) % per
    if pad:
        codes = np.concatenate([codes, np.zeros(pad, np.uint8)])
    codes = codes.reshape(-1, per)
    out = np.zeros(codes.shape[0], np.uint8)
    for i in range(per):
        out |= codes[:, i] << (b * i)
    return out


def unpack_subbyte(raw, dtype_id, shape):
    b = bits(dtype_id)
    per = 8 // b
    n = int(np.prod(shape, dtype=np.int64))
    codes = np.stack([(raw >> (b * i)) & ((1 << b) - 1) for i in range(per)], axis=1).reshape(-1)[:n]
    target = to_numpy(dtype_id)
    if dtype_id in SIGNED_SUBBYTE:
        signed = codes.astype(np.int8)
        signed = np.where(signed >= (1 << (b - 1)), signed - (1 << b), signed).astype(np.int8)
        return signed.astype(target).reshape(shape)
    return codes.astype(np.uint8).view(target).reshape(shape) if target.itemsize == 1 else \
        codes.astype(target).reshape(shape)
