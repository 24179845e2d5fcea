"""Element types: numpy dtypes (ml_dtypes included) and their Ascend C names."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import UnsupportedError

#: Ascend C spelling -> numpy dtype.
ASCEND_DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "int8_t": np.dtype(np.int8),
    "uint8_t": np.dtype(np.uint8),
    "int16_t": np.dtype(np.int16),
    "uint16_t": np.dtype(np.uint16),
    "int32_t": np.dtype(np.int32),
    "uint32_t": np.dtype(np.uint32),
    "int64_t": np.dtype(np.int64),
    "uint64_t": np.dtype(np.uint64),
    "half": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "bfloat16_t": np.dtype(ml_dtypes.bfloat16),
    "fp8_e5m2_t": np.dtype(ml_dtypes.float8_e5m2),
    "fp8_e4m3fn_t": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8_e8m0_t": np.dtype(ml_dtypes.float8_e8m0fnu),
    "hifloat8_t": np.dtype(np.uint8),  # no numpy type: handled as its 1-byte container
    # packed 4-bit types: one element = one byte holding two values (docs/cube-in.md, "4-bit types")
    "int4b_t": np.dtype(ml_dtypes.int4) if hasattr(ml_dtypes, "int4") else np.dtype(np.int8),
    "fp4x2_e2m1_t": np.dtype(getattr(ml_dtypes, "float4_e2m1fn", [("fp4x2_e2m1", np.uint8)])),
    "fp4x2_e1m2_t": np.dtype([("fp4x2_e1m2", np.uint8)]),  # no numpy type: a one-byte tag
    "complex32": np.dtype([("real", np.float16), ("imag", np.float16)]),
    "complex64": np.dtype(np.complex64),
}

_NUMPY_TO_ASCEND = {}
for _name, _dt in ASCEND_DTYPES.items():
    _NUMPY_TO_ASCEND.setdefault(_dt, _name)
_NUMPY_TO_ASCEND[np.dtype(np.uint8)] = "uint8_t"
# short aliases users type
_ALIASES = {"float16": "half", "float32": "float", "float64": "double", "bfloat16": "bfloat16_t",
            "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t",
            "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t", "float8_e5m2": "fp8_e5m2_t",
            "float8_e4m3fn": "fp8_e4m3fn_t", "float8_e8m0fnu": "fp8_e8m0_t", "bool_": "bool",
            "int4": "int4b_t", "fp4x2_e2m1": "fp4x2_e2m1_t", "fp4x2_e1m2": "fp4x2_e1m2_t",
            "float4_e2m1fn": "fp4x2_e2m1_t"}


def as_dtype(dtype) -> np.dtype:
    """Any numpy-accepted dtype or Ascend C name (``"half"``, ``"bfloat16_t"``) -> ``np.dtype``."""
    if isinstance(dtype, str):
        key = _ALIASES.get(dtype, dtype)
        if key in ASCEND_DTYPES:
            return ASCEND_DTYPES[key]
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise UnsupportedError(f"unknown dtype {dtype!r}") from exc
    if dt.itemsize not in (1, 2, 4, 8) or dt.hasobject:
        raise UnsupportedError(f"dtype {dt} has {dt.itemsize} bytes per element; fastcopy moves 1, 2, 4 or 8-byte "
                               "elements")
    return dt


def ascend_name(dtype: np.dtype) -> str:
    """The Ascend C name of a numpy dtype (``float16`` -> ``half``); the numpy name if there is none."""
    dt = np.dtype(dtype)
    name = _NUMPY_TO_ASCEND.get(dt)
    return name if name is not None else str(dt)  # (str(dtype) is not cheap: only when needed)


#: unsigned view type of each element width.
UINT_OF_WIDTH = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
