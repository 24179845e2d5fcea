"""Atlas inference (310P): ``DataCopy(ub, l0c, DataCopyParams, DataCopyEnhancedParams)``, L0C (CO1) -> UB (CO2).

PROVISIONAL: the pages describing this path are partly garbled (stride kinds, the per-burst vector step, the
halves of ``sidStoreMode``); every call warns. What fastcopy does:

* ``blockMode``: ``BLOCK_MODE_MATRIX`` (unit = one 16 x 16 fractal, 256 elements) or ``BLOCK_MODE_VECTOR`` (unit =
  one fractal row, 16 elements); the other modes are errors.
* burst ``b`` (``blockCount`` of them) reads ``blockLen`` consecutive units from element
  ``b*(blockLen*unit + srcStride*256)`` of the source (``srcStride``: gap in fractals) and writes them, converted,
  from byte ``b*(blockLen*unit*es + dstStride*32)`` of the destination (``dstStride``: gap in 32-byte blocks).
* ``deqScale``: ``DEQ_NONE`` copies (``isRelu``: ReLU); ``DEQ`` converts int32 to half as
  ``F16(x * half(deqValue bits 15:0))``, rounded once, saturating (310P has no INF/NaN mode). The ``DEQ8``,
  ``DEQ16`` and vector modes are not emulated (an error says so).
"""

from __future__ import annotations

import enum

import numpy as np

from ..dtypes import ASCEND_DTYPES, ascend_name
from ..errors import OutOfBoundsError, RangeError, UnsupportedError, warn
from ..params import DataCopyParams, Field, ParamStruct
from ..products import Phys, Product
from . import quant, tensorio

API = "DataCopy(DataCopyEnhancedParams)"


class BlockMode(enum.Enum):
    BLOCK_MODE_NORMAL = 0
    BLOCK_MODE_MATRIX = 1
    BLOCK_MODE_VECTOR = 2
    BLOCK_MODE_SMALL_CHANNEL = 3
    BLOCK_MODE_DEPTHWISE = 4


class DeqScale(enum.Enum):
    DEQ_NONE = 0
    DEQ = 1
    VDEQ = 2
    DEQ8 = 3
    VDEQ8 = 4
    DEQ16 = 5
    VDEQ16 = 6


class DataCopyEnhancedParams(ParamStruct):
    """Options of the Atlas inference (310P) L0C -> UB copy (provisional). Constructor order ``{blockMode, deqScale, deqValue, sidStoreMode,
    isRelu, padMode, padValue}``."""

    FIELDS = (
        Field("blockMode", "T", "BLOCK_MODE_NORMAL", doc="a BlockMode (member or name)"),
        Field("deqScale", "T", "DEQ_NONE", doc="a DeqScale (member or name)"),
        Field("deqValue", "uint64", 0),
        Field("sidStoreMode", "uint8", 0),
        Field("isRelu", "bool", False),
        Field("padMode", "T", 0),
        Field("padValue", "uint64", 0),
        Field("deqTensorAddr", "uint64", 0),
    )


def _enum(cls, v):
    return v if isinstance(v, cls) else cls[str(v).split("::")[-1].split(".")[-1]]


def DataCopyEnhanced(dst, src, params: DataCopyParams, enhanced: DataCopyEnhancedParams) -> None:  # noqa: N802
    """The 310P L0C -> UB copy (see the module docstring)."""
    pipe = src.pipe
    product = pipe.product
    if product is not Product.ATLAS_INFERENCE_AICORE:
        raise UnsupportedError(f"{API}: the L0C -> UB copy exists only on {Product.ATLAS_INFERENCE_AICORE}; "
                               f"this is {product}")
    if src.is_global or src.memory.phys is not Phys.L0C or dst.is_global or dst.memory.phys is not Phys.UB:
        raise UnsupportedError(f"{API}: the path is L0C (CO1) -> UB (CO2) on {product}")
    mode = _enum(BlockMode, enhanced.blockMode)
    deq = _enum(DeqScale, enhanced.deqScale)
    if mode not in (BlockMode.BLOCK_MODE_MATRIX, BlockMode.BLOCK_MODE_VECTOR):
        raise UnsupportedError(f"{API}: blockMode={mode.name} is not supported (MATRIX or VECTOR) on {product}")
    u, t = src.dtype, dst.dtype
    if deq is DeqScale.DEQ_NONE:
        if u != t or u not in (ASCEND_DTYPES["float"], ASCEND_DTYPES["int32_t"], ASCEND_DTYPES["half"]):
            raise UnsupportedError(f"{API}: DEQ_NONE copies float, int32_t or half unchanged; got "
                                   f"{ascend_name(u)} -> {ascend_name(t)} on {product}")
    elif deq is DeqScale.DEQ:
        if u != ASCEND_DTYPES["int32_t"] or t != ASCEND_DTYPES["half"]:
            raise UnsupportedError(f"{API}: DEQ converts int32_t -> half; got {ascend_name(u)} -> {ascend_name(t)} "
                                   f"on {product}")
    else:
        raise UnsupportedError(f"{API}: deqScale={deq.name} is not emulated by fastcopy (the documentation of its "
                               f"word and vector layout is incomplete) on {product}")
    unit = 256 if mode is BlockMode.BLOCK_MODE_MATRIX else 16
    n_b, blen = params.blockCount, params.blockLen
    if n_b == 0 or blen == 0:
        warn(f"{API}: blockCount={n_b}, blockLen={blen}: nothing is copied")
        return
    es_t = t.itemsize
    b = np.arange(n_b, dtype=np.int64)[:, None]
    e = np.arange(blen * unit, dtype=np.int64)[None, :]
    src_offs = (b * (blen * unit + params.srcStride * 256) + e).reshape(-1)
    dst_bytes = (b * (blen * unit * es_t + params.dstStride * 32) + e * es_t).reshape(-1)
    if (src_offs[-1] + 1) * u.itemsize > src.nbytes:
        raise OutOfBoundsError(f"{API}: the source span is {(src_offs[-1] + 1) * u.itemsize} bytes, the L0C tensor "
                               f"has {src.nbytes} on {product}")
    if dst_bytes[-1] + es_t > dst.nbytes:
        raise OutOfBoundsError(f"{API}: the destination span is {dst_bytes[-1] + es_t} bytes, the UB tensor has "
                               f"{dst.nbytes} on {product}")
    if dst.offset % 32:
        raise RangeError(f"{API}: the UB destination starts at byte {dst.offset}, not a multiple of 32 on {product}")
    warn(f"{API}: this L0C -> UB path on {product} is emulated provisionally (its documentation is "
         "incomplete); check results on hardware")
    x, ok = tensorio.read(src, src_offs)
    if deq is DeqScale.DEQ_NONE:
        if enhanced.isRelu:
            y = np.maximum(x, 0) if u.kind == "i" else np.where(np.signbit(x) & ~np.isnan(x), 0, x).astype(u)
        else:
            y = x
    else:
        scale = float(np.uint16(enhanced.deqValue & 0xFFFF).view(np.float16))
        fmt = quant.FORMATS["F16"]
        y = quant.encode_float(x.astype(np.float64) * scale, fmt, ctrl48=False).view(np.float16)
        if enhanced.isRelu:
            y = np.where(np.signbit(y) & ~np.isnan(y), np.float16(0), y)
    tensorio.write(dst, dst_bytes // es_t, y, ok)
