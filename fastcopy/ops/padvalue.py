"""Scalar -> element bit pattern, exactly (DataCopyPad ``paddingValue`` and ``SetPadValue``, semantics.md §4.3, §11.12).

``scalar_pattern(value, dtype)`` returns the ``sizeof(T)`` little-endian bytes of ``value`` as a ``T``, or raises
ParamTypeError when ``T`` cannot hold the value exactly (``1.1`` as half, ``300`` as int8, ``0.5`` as int32,
``inf`` as fp8_e4m3fn). A numpy scalar already of type ``T`` keeps its bits (NaN payloads, ``-0.0``).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import ascend_name
from ..errors import ParamTypeError


def scalar_key(value):
    """A hashable, NaN-safe snapshot of a Python or numpy scalar (plan-cache key part)."""
    if type(value) is int:  # (the usual pad value, 0: its key without the type tests below)
        return ("int", value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        return ("np", value.dtype, value.tobytes())
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    try:
        hash(value)
    except TypeError:
        return ("other", repr(value))
    return ("other", value)


def scalar_from_key(key):
    """Inverse of :func:`scalar_key`."""
    kind = key[0]
    if kind == "np":
        return np.frombuffer(key[2], key[1])[0]
    if kind in ("bool", "int"):
        return key[1]
    if kind == "float":
        return float.fromhex(key[1])
    if kind == "complex":
        return complex(float.fromhex(key[1]), float.fromhex(key[2]))
    return key[1]  # not a number: scalar_pattern says so


def show(value) -> str:
    """A value as users wrote it: ``2`` for ``np.int64(2)``, ``1.1``, ``'x'``."""
    if isinstance(value, np.generic):
        try:
            return repr(value.item())
        except Exception:  # noqa: BLE001 - exotic scalar types
            return str(value)
    return repr(value)


def _same(a: float, b) -> bool:
    """Exact equality of a converted float with the requested value (NaN == NaN; ints compared exactly)."""
    if isinstance(b, float) and math.isnan(b):
        return math.isnan(a)
    return a == b


def _as_float(dtype: np.dtype, v):
    # (np.errstate only: it is per thread; a warnings.catch_warnings here swapped the warning filters of every
    # thread while it lasted, and two threads in it at once could leave the process with one's filters. A cast of
    # a real value warns of nothing but floating-point errors; a complex one never gets here: _convert)
    with np.errstate(all="ignore"):
        try:
            x = np.array(v, np.float64).astype(dtype)
        except (OverflowError, ValueError):
            return None
    return x if _same(float(x), v) else None


def _convert(v, dtype: np.dtype):
    """The ``T`` array (0-d) holding ``v`` exactly, or None."""
    if isinstance(v, (complex, np.complexfloating)) and dtype.kind != "c" and not dtype.names:
        if v.imag != 0:
            return None
        v = v.real
    if dtype == np.bool_:
        return np.array(v == 1, np.bool_) if v in (0, 1) else None
    if np.issubdtype(dtype, np.integer):
        if isinstance(v, float):
            if not v.is_integer():
                return None
            v = int(v)
        info = np.iinfo(dtype)
        return np.array(int(v), dtype) if info.min <= v <= info.max else None
    if dtype.names:  # complex32: two halves
        re_, im_ = (v.real, v.imag) if isinstance(v, (complex, np.complexfloating)) else (v, 0.0)
        re_h, im_h = _as_float(np.dtype(np.float16), re_), _as_float(np.dtype(np.float16), im_)
        if re_h is None or im_h is None:
            return None
        out = np.zeros((), dtype)
        out["real"], out["imag"] = re_h, im_h
        return out
    if dtype.kind == "c":
        c = complex(v)
        with np.errstate(all="ignore"):  # (too large: refused below, without numpy's overflow warning)
            x = np.array(c, dtype)
        ok = _same(float(x.real), c.real) and _same(float(x.imag), c.imag)
        return x if ok else None
    return _as_float(dtype, v)


def scalar_pattern(value, dtype, api: str, field: str, product) -> bytes:
    """The bytes of ``value`` as one element of ``dtype`` (exact, else ParamTypeError naming ``field``)."""
    dtype = np.dtype(dtype)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic) and value.dtype == dtype:
        return value.tobytes()
    py = value
    if isinstance(value, np.generic):
        py = value.item()
        if isinstance(py, np.generic):  # ml_dtypes scalars
            py = float(value)
    if isinstance(py, (bool, np.bool_)):
        py = int(py)
    if not isinstance(py, (int, float, complex)):
        raise ParamTypeError(f"{api}: {field}={show(value)} is not a number (a Python or numpy scalar of "
                             f"{ascend_name(dtype)}) on {product}")
    x = _convert(py, dtype)
    if x is None:
        raise ParamTypeError(f"{api}: {field}={show(value)} cannot be represented exactly as "
                             f"{ascend_name(dtype)} on {product}")
    return np.ascontiguousarray(x).tobytes()
