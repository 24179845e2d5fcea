"""Atlas 350 loop mode (semantics.md §4.8): per-core state that repeats every following GM <-> UB move.

``SetLoopModePara(LoopModeParams(...), DataCopyMVType.OUT_TO_UB)`` makes each following GM->UB move (basic
DataCopy, DataCopyPad, slice, the GM->UB ND2NZ emulation) run as::

    for l2 in range(loop2Size): for l1 in range(loop1Size):
        the call with S += l1*loop1SrcStride + l2*loop2SrcStride, D += l1*loop1DstStride + l2*loop2DstStride

(bytes) until ``ResetLoopModePara``. Planners read :func:`loop_mode` and wrap their steps with
:func:`with_loop_mode`; the loop key is part of their plan-cache key.
"""

from __future__ import annotations

import enum

from ..errors import RangeError, UnsupportedError
from ..params import LoopModeParams
from ..dma.steps import Fill, Move
from ..products import Phys, Product

API = "SetLoopModePara"


class DataCopyMVType(enum.Enum):
    """Which moves loop mode applies to."""

    OUT_TO_UB = "OUT_TO_UB"  # GM -> UB
    UB_TO_OUT = "UB_TO_OUT"  # UB -> GM


_DIRECTION = {(Phys.GM, Phys.UB): DataCopyMVType.OUT_TO_UB, (Phys.UB, Phys.GM): DataCopyMVType.UB_TO_OUT}


def check_loop_mode(params: LoopModeParams, mv_type, product) -> tuple:
    """Validate ``SetLoopModePara(params, type)`` on ``product``: ``(DataCopyMVType, loop key)``."""
    if product is not Product.ATLAS_350:
        raise UnsupportedError(f"{API}: loop mode exists only on Atlas 350, not on {product}")
    if not isinstance(params, LoopModeParams):
        raise UnsupportedError(f"{API}: takes LoopModeParams, got {type(params).__name__}")
    mv = DataCopyMVType(mv_type)
    p = params.as_dict()
    for f in ("loop1Size", "loop2Size"):
        if not 1 <= p[f] < 2**21:
            raise RangeError(f"{API}: {f}={p[f]} is outside [1, {2**21 - 1}] repetitions on {product}")
    local = "Dst" if mv is DataCopyMVType.OUT_TO_UB else "Src"
    for f in ("loop1SrcStride", "loop1DstStride", "loop2SrcStride", "loop2DstStride"):
        v = p[f]
        if local in f:
            if v >= 2**21 or v % 32:
                raise RangeError(f"{API}: {f}={v} is a UB-side stride: a multiple of 32 in [0, {2**21 - 32}] "
                                 f"bytes on {product}")
        elif v >= 2**40:
            raise RangeError(f"{API}: {f}={v} is outside [0, {2**40 - 1}] bytes (GM side) on {product}")
    return mv, params.key()


def loop_mode(pipe, src_phys: Phys, dst_phys: Phys):
    """The loop key ``(loop1Size, loop2Size, l1src, l1dst, l2src, l2dst)`` in force for this path, or None."""
    modes = pipe.state.get("loop_mode")
    if not modes:
        return None
    mv = _DIRECTION.get((src_phys, dst_phys))
    return modes.get(mv) if mv is not None else None


def with_loop_mode(steps, loop) -> tuple:
    """Repeat every step over the two loop-mode loops (outermost: loop2, then loop1)."""
    if loop is None:
        return tuple(steps)
    n1, n2, s1, d1, s2, d2 = loop
    out = []
    for st in steps:
        if isinstance(st, Fill):
            out.append(st._replace(loops=((n2, d2), (n1, d1)) + tuple(st.loops)))
        elif isinstance(st, Move):
            out.append(st._replace(loops=((n2, s2, d2), (n1, s1, d1)) + tuple(st.loops)))
        else:
            raise AssertionError("loop mode applies to moves and fills only")
    return tuple(out)
