"""Per-core registers of the 3D loads (img2col), kept on the TPipe like the pad register, and their setters.

=============  =====================================================  =================================================
register       written by                                             content (``pipe.state`` key -> value)
=============  =====================================================  =================================================
FMATRIX_L      ``SetFmatrix(.., FMATRIX_LEFT)``; 3D loads with         ``(l1H, l1W, (left, right, top, bottom))``
               ``isSetFMatrix``
FMATRIX_R      ``SetFmatrix(.., FMATRIX_RIGHT)``                       same (never read: ``fMatrixCtrl`` must be false)
PADDING        ``SetLoadDataPaddingValue``; 3D loads with              32-bit register value, or ``("number", key)``
               ``isSetPadding``                                       for an untyped Python number
L3D_RPT        ``SetLoadDataRepeat``, ``SetLoadDataRepeatWithStride``  ``(repeatStride, repeatTime, repeatMode,
                                                                       dstStride)``
L1_3D_SIZE     ``SetLoadDataBoundary``                                bytes; 0 = no boundary
=============  =====================================================  =================================================

The pad element a load writes is the PADDING register read as the load's type: 1-byte types hold ``v | v << 8``
(the low byte is read back), 2-byte types their bit pattern, 4-byte types their bit pattern (Atlas 200I/500 A2
and Atlas 350 keep only the low 16 bits).
"""

from __future__ import annotations

import enum

from ..dtypes import as_dtype, ascend_name
from ..errors import ParamTypeError, RangeError, UnsupportedError, warn
from ..memory import current_pipe
from ..ops.padvalue import scalar_from_key, scalar_key, scalar_pattern, show
from ..params import Field, ParamStruct
from ..products import (LOAD3D_PRODUCTS, PADDING_LOW16, SET_FMATRIX_RIGHT, SET_LOAD_DATA_BOUNDARY,
                        SET_LOAD_DATA_REPEAT, SET_LOAD_DATA_REPEAT_WITH_STRIDE, Product)
from .params import LoadDataRepeatParam, LoadDataRepeatParamWithStride

FMATRIX_L, FMATRIX_R, PADDING, L3D_RPT, L1_3D_SIZE = "FMATRIX_L", "FMATRIX_R", "PADDING", "L3D_RPT", "L1_3D_SIZE"
#: L3D_RPT before any setter: repeat once (310P, A2/A3, 310B). Atlas 350 has no default (a 3D LoadData needs
#: SetLoadDataRepeat first).
RPT_DEFAULT = (0, 1, 0, 0)


class FmatrixMode(enum.IntEnum):
    """Which feature-map register ``SetFmatrix`` writes."""

    FMATRIX_LEFT = 0
    FMATRIX_RIGHT = 1


class IsResetLoad3dConfig(ParamStruct):
    """Template flags of the 3D loads: ``isSetFMatrix`` writes FMATRIX_L from the struct's ``l1H``, ``l1W`` and
    ``padList`` before loading; ``isSetPadding`` writes PADDING from its ``padValue``."""

    FIELDS = (
        Field("isSetFMatrix", "bool", True, doc="write FMATRIX_L from the struct first"),
        Field("isSetPadding", "bool", True, doc="write PADDING from the struct's padValue first"),
    )


def _pipe(api: str, pipe):
    pipe = pipe or current_pipe()
    if pipe.product not in LOAD3D_PRODUCTS and pipe.product is not Product.ATLAS_TRAINING:
        raise UnsupportedError(f"{api}: does not exist on {pipe.product} (no 3D load there)")
    return pipe


def check_pad_list(api: str, pad_list, product) -> tuple:
    """``padList``: 4 values (left, right, top, bottom), each a uint8_t."""
    try:
        pads = tuple(int(v) for v in pad_list)
    except TypeError as exc:
        raise ParamTypeError(f"{api}: padList={pad_list!r} must be 4 integers (left, right, top, bottom)") from exc
    if len(pads) != 4:
        raise ParamTypeError(f"{api}: padList={pad_list!r} must hold 4 values (left, right, top, bottom), got "
                             f"{len(pads)}")
    for name, v in zip(("left", "right", "top", "bottom"), pads):
        if not 0 <= v <= 255:
            raise RangeError(f"{api}: padList {name}={v} is outside [0, 255] elements (uint8_t) on {product}")
    return pads


def fmatrix_value(api: str, l1H: int, l1W: int, pad_list, product, lo: int = 1) -> tuple:
    for name, v in (("l1H", l1H), ("l1W", l1W)):
        if not lo <= v <= 32767:
            raise RangeError(f"{api}: {name}={v} is outside [{lo}, 32767] pixels on {product}")
    return int(l1H), int(l1W), check_pad_list(api, pad_list, product)


def SetFmatrix(l1H, l1W, padList, mode=FmatrixMode.FMATRIX_LEFT, pipe=None) -> None:  # noqa: N802, N803
    """``SetFmatrix(l1H, l1W, padList, FmatrixMode)``: the feature map height, width (pixels) and padding (left,
    right, top, bottom) the 3D loads read."""
    api = "SetFmatrix"
    pipe = _pipe(api, pipe)
    mode = FmatrixMode(int(mode))
    if mode is FmatrixMode.FMATRIX_RIGHT and pipe.product not in SET_FMATRIX_RIGHT:
        raise UnsupportedError(f"{api}: FMATRIX_RIGHT does not exist on {pipe.product}")
    pipe.state[FMATRIX_L if mode is FmatrixMode.FMATRIX_LEFT else FMATRIX_R] = \
        fmatrix_value(api, int(l1H), int(l1W), padList, pipe.product)


def padding_register(api: str, value, dt, product, field: str = "value") -> tuple:
    """(32-bit PADDING value, warnings) for ``value`` written as a ``dt``."""
    es = dt.itemsize
    pattern = int.from_bytes(scalar_pattern(value, dt, api, field, product), "little")
    if es == 1:
        return pattern | pattern << 8, []
    if es == 4 and product is Product.ATLAS_INFERENCE_AICORE:
        raise UnsupportedError(f"{api}: a 4-byte pad value ({ascend_name(dt)}) is not supported on {product}")
    if es == 4 and product in PADDING_LOW16 and pattern >> 16:
        return pattern & 0xFFFF, [f"{api}: the {ascend_name(dt)} pad value {show(value)} (bits 0x{pattern:08x}) is "
                                  f"truncated to its low 16 bits (0x{pattern & 0xFFFF:08x}) on {product}"]
    if es > 4:
        raise UnsupportedError(f"{api}: {ascend_name(dt)} ({es} bytes) has no pad value on {product}")
    return pattern, []


def SetLoadDataPaddingValue(value, pipe=None, dtype=None) -> None:  # noqa: N802
    """``SetLoadDataPaddingValue<T>(value)``: the pad element of the 3D loads. A numpy scalar (or ``dtype=``)
    fixes ``T``; a plain Python number is converted, exactly, to the type of each load that reads it."""
    api = "SetLoadDataPaddingValue"
    pipe = _pipe(api, pipe)
    if dtype is None and not hasattr(value, "dtype"):
        if isinstance(value, (bool, int, float)):
            pipe.state[PADDING] = ("number", scalar_key(value))
            return
        raise ParamTypeError(f"{api}: value={show(value)} is not a number on {pipe.product}")
    dt = as_dtype(dtype if dtype is not None else value.dtype)
    reg, warns = padding_register(api, value, dt, pipe.product)
    for w in warns:
        warn(w)
    pipe.state[PADDING] = reg


def pad_pattern(api: str, reg, dt, product) -> tuple:
    """(pad element bytes for a load of ``dt``, warnings) from the PADDING register value."""
    warns = []
    if isinstance(reg, tuple):
        reg, warns = padding_register(api, scalar_from_key(reg[1]), dt, product)
    return (reg & ((1 << (8 * dt.itemsize)) - 1)).to_bytes(dt.itemsize, "little"), warns


def SetLoadDataBoundary(boundaryValue, pipe=None) -> None:  # noqa: N802, N803
    """``SetLoadDataBoundary(bytes)``: 3D-load source addresses at or above it (from the L1 start) wrap to the L1
    start; 0 = no boundary."""
    api = "SetLoadDataBoundary"
    pipe = _pipe(api, pipe)
    if pipe.product not in SET_LOAD_DATA_BOUNDARY:
        raise UnsupportedError(f"{api}: does not exist on {pipe.product}")
    v = int(boundaryValue)
    if not 0 <= v <= 2**32 - 1:
        raise ParamTypeError(f"{api}: boundaryValue={v} does not fit uint32_t [0, 4294967295]")
    if 1 <= v <= 1023:
        raise RangeError(f"{api}: boundaryValue={v} is outside {{0}} or [1024, 4294967295] bytes on {pipe.product} "
                         "(values 1..1023 are undefined)")
    pipe.state[L1_3D_SIZE] = v


def _set_repeat(api: str, cls, products, params, pipe, dst_stride) -> None:
    pipe = _pipe(api, pipe)
    if pipe.product not in products:
        raise UnsupportedError(f"{api}: does not exist on {pipe.product}" + (
            " (the 3D load is never repeated there)" if cls is LoadDataRepeatParam else ""))
    if not isinstance(params, cls):
        raise UnsupportedError(f"{api}: takes {cls.__name__}, got {type(params).__name__}")
    if params.repeatMode > 1:
        raise RangeError(f"{api}: repeatMode={params.repeatMode} is outside [0, 1] on {pipe.product}")
    old = pipe.state.get(L3D_RPT, RPT_DEFAULT)
    pipe.state[L3D_RPT] = (params.repeatStride, params.repeatTime, params.repeatMode,
                           old[3] if dst_stride is None else dst_stride)


def SetLoadDataRepeat(repeatParams, pipe=None) -> None:  # noqa: N802, N803
    """``SetLoadDataRepeat(LoadDataRepeatParam)``: repeat the following 3D loads."""
    _set_repeat("SetLoadDataRepeat", LoadDataRepeatParam, SET_LOAD_DATA_REPEAT, repeatParams, pipe, None)


def SetLoadDataRepeatWithStride(repeatParams, pipe=None) -> None:  # noqa: N802, N803
    """``SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride)`` (Atlas 350): repeat and destination pitch
    (fractals) of ``LoadDataWithStride``."""
    p = repeatParams
    _set_repeat("SetLoadDataRepeatWithStride", LoadDataRepeatParamWithStride, SET_LOAD_DATA_REPEAT_WITH_STRIDE, p,
                pipe, getattr(p, "dstStride", None))


__all__ = ["FmatrixMode", "IsResetLoad3dConfig", "SetFmatrix", "SetLoadDataPaddingValue", "SetLoadDataBoundary",
           "SetLoadDataRepeat", "SetLoadDataRepeatWithStride", "pad_pattern", "padding_register", "check_pad_list",
           "fmatrix_value"]
