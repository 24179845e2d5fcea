"""The step IR: what a validated call writes, as a small DMA program over byte offsets.

Offsets and strides are bytes relative to the start of the source / destination tensor. A planner (in
``fastcopy/ops``) produces steps; :func:`fastcopy.dma.lower.make_plan` checks their spans and lowers them.
This module also owns the overlap analysis (may two writes of a call hit the same byte?).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import config
from ..errors import OutOfBoundsError, ReadOnlyError


class Move(NamedTuple):
    """For each ``(s, d)`` in ``zip(src_offs, dst_offs)`` and each loop index: copy ``burst`` bytes.

    ``loops`` = ((count, src_stride, dst_stride), ...) outer -> inner, head-to-head byte strides.
    """

    src_offs: tuple
    dst_offs: tuple
    burst: int
    loops: tuple


class Fill(NamedTuple):
    """Write ``pattern`` (one element's bytes, repeated) over each burst; ``pattern=None`` = undefined (poison).

    ``loops`` = ((count, dst_stride), ...).
    """

    dst_offs: tuple
    burst: int
    loops: tuple
    pattern: bytes | None


class Convert(NamedTuple):
    """Element-converting move (L1 -> BiasTable half/bfloat16 -> float): like Move, ``n`` source elements per
    burst, converted from ``src_dtype`` to ``dst_dtype``; ``loops`` strides are bytes on each side."""

    src_offs: tuple
    dst_offs: tuple
    n: int
    loops: tuple
    src_dtype: np.dtype
    dst_dtype: np.dtype


def dst_burst(step) -> int:
    """Bytes each burst of ``step`` writes."""
    if isinstance(step, Convert):
        return step.n * step.dst_dtype.itemsize
    return step.burst


def src_burst(step) -> int:
    """Bytes each burst of ``step`` reads (0 for fills)."""
    if isinstance(step, Convert):
        return step.n * step.src_dtype.itemsize
    return 0 if isinstance(step, Fill) else step.burst


def dst_loops(step) -> tuple:
    """``((count, dst stride), ...)`` of a step."""
    if isinstance(step, Fill):
        return tuple(step.loops)
    return tuple((lp[0], lp[2]) for lp in step.loops)


def _extent(offs, burst, loops, col):
    lo = min(offs)
    hi = max(offs)
    for lp in loops:
        n, s = lp[0], lp[col]
        if n > 1:
            if s >= 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
    return lo, hi + burst


def footprint(step) -> tuple:
    """``(read span or None, write span, bytes written)`` of a Move or Fill in one pass over its loops: what
    :func:`step_spans` and :func:`written` give, computed together (new plans of small calls)."""
    fill = type(step) is Fill
    b = step.burst
    do = step.dst_offs
    wlo, whi = (do[0], do[0]) if len(do) == 1 else (min(do), max(do))
    n = len(do) * b
    if fill:
        for lp in step.loops:
            c = lp[0]
            n *= c
            if c > 1:
                x = (c - 1) * lp[1]
                if x >= 0:
                    whi += x
                else:
                    wlo += x
        return None, (wlo, whi + b), n
    so = step.src_offs
    rlo, rhi = (so[0], so[0]) if len(so) == 1 else (min(so), max(so))
    for lp in step.loops:
        c = lp[0]
        n *= c
        if c > 1:
            x, y = (c - 1) * lp[1], (c - 1) * lp[2]
            if x >= 0:
                rhi += x
            else:
                rlo += x
            if y >= 0:
                whi += y
            else:
                wlo += y
    return (rlo, rhi + b), (wlo, whi + b), n


def step_spans(step) -> tuple:
    """((read lo, hi) or None, (write lo, hi)) in bytes of one step."""
    if isinstance(step, Fill):
        return None, _extent(step.dst_offs, step.burst, step.loops, 1)
    return (_extent(step.src_offs, src_burst(step), step.loops, 1),
            _extent(step.dst_offs, dst_burst(step), step.loops, 2))


def hull(spans):
    """The smallest ``(lo, hi)`` holding every span (None entries ignored), or None."""
    spans = [s for s in spans if s is not None]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def written(step) -> int:
    """Bytes a step writes (counting bytes written twice twice)."""
    count = 1
    for lp in step.loops:
        count *= lp[0]
    return len(step.dst_offs) * count * dst_burst(step)


def check_span(api: str, role: str, span, tensor_nbytes: int, what: str) -> None:
    """Raise OutOfBoundsError unless bytes ``[lo, hi)`` lie inside a tensor of ``tensor_nbytes`` bytes."""
    lo, hi = span
    if lo < 0 or hi > tensor_nbytes:
        bad = lo if lo < 0 else hi
        raise OutOfBoundsError(f"{api}: the {role} span is bytes [{lo}, {hi}) of the {what} tensor, which has "
                               f"{tensor_nbytes} bytes: needs {hi - min(lo, 0)} bytes, {tensor_nbytes} available "
                               f"(first byte outside at offset {bad})")


def check_in_memory(plan, dst, src) -> None:
    """The last guard before any kernel or write: the plan's spans, placed at the tensors' offsets, must lie
    inside the tensors' whole memories (the GM array, the physical buffer), whatever happened upstream; and a
    read-only array is never a destination."""
    w, r = plan.write, plan.read
    if w is not None and dst.memory.readonly:
        raise ReadOnlyError(f"{plan.api}: the destination is a read-only array; nothing was written")
    if w is not None and (dst.offset + w[0] < 0 or dst.offset + w[1] > dst.memory.size):
        _outside(plan.api, "write", dst.offset + w[0], dst.offset + w[1], dst.memory)
    if r is not None and src is not None and (src.offset + r[0] < 0 or src.offset + r[1] > src.memory.size):
        _outside(plan.api, "read", src.offset + r[0], src.offset + r[1], src.memory)


def _outside(api: str, role: str, lo: int, hi: int, memory) -> None:
    raise OutOfBoundsError(f"{api}: the {role} span is bytes [{lo}, {hi}) of its memory ({memory.phys}), "
                           f"which has {memory.size} bytes; nothing was written")


def grid_pieces(offs, burst, loops, col, limit: int):
    """:func:`grid` in program order as consecutive pieces of at most about ``limit`` bytes (an offsets list or
    the outermost loop is split; one burst longer than ``limit`` is one piece): bounded memory for any step."""
    inner = burst
    for lp in loops:
        inner *= lp[0]
    if inner * len(offs) <= limit or (len(offs) == 1 and not loops):
        yield grid(offs, burst, loops, col)
        return
    if len(offs) > 1:
        step = max(1, limit // max(inner, 1))
        for a in range(0, len(offs), step):
            yield from grid_pieces(offs[a:a + step], burst, loops, col, limit)
        return
    n, stride = loops[0][0], loops[0][col]
    inner //= max(n, 1)
    step = max(1, limit // max(inner, 1))
    for a in range(0, n, step):
        sub = tuple(offs[0] + i * stride for i in range(a, min(n, a + step)))
        yield from grid_pieces(sub, burst, loops[1:], col, limit)


def grid(offs, burst, loops, col) -> np.ndarray:
    """Byte offsets of every burst byte, in loop order (outer -> inner)."""
    g = np.asarray(offs, np.int64)
    for lp in loops:
        g = (g[:, None] + np.arange(lp[0], dtype=np.int64)[None, :] * lp[col]).reshape(-1)
    return (g[:, None] + np.arange(burst, dtype=np.int64)[None, :]).reshape(-1)


def read_grid(step) -> np.ndarray:
    """Source byte offsets a step reads, in loop order."""
    return grid(step.src_offs, src_burst(step), step.loops, 1)


def write_grid(step) -> np.ndarray:
    """Destination byte offsets a step writes, in loop order."""
    return grid(step.dst_offs, dst_burst(step), step.loops, 1 if isinstance(step, Fill) else 2)


# ------------------------------------------------------------------------------------------ overlap analysis
def injective(burst: int, loops) -> bool:
    """True if bursts of ``burst`` bytes at ``sum(i_k * stride_k)`` (``loops = ((count, stride), ...)``) can
    never share a byte (sufficient test: each loop's stride clears the extent of everything inside it, taken in
    order of increasing stride)."""
    kept = [(abs(s), c) for c, s in loops if c > 1]
    if len(kept) == 2:  # (two loops, as in ND2NZ: the order without the sort)
        a, b = kept
        if b[0] < a[0]:
            kept = [b, a]
    elif len(kept) > 2:
        kept.sort(key=_stride)
    extent = burst
    for s, c in kept:
        if s < extent:
            return False
        extent = s * (c - 1) + extent
    return True


def _stride(lp) -> int:
    return lp[0]


def _starts(offs, loops) -> np.ndarray:
    g = np.asarray(offs, np.int64)
    for c, s in loops:
        g = (g[:, None] + np.arange(c, dtype=np.int64)[None, :] * s).reshape(-1)
    return g


def lattice_overlaps(burst: int, loops, offs=(0,)) -> bool:
    """Whether bursts of ``burst`` bytes at ``o + sum(i_k * stride_k)`` (``o`` in ``offs``, ``loops`` =
    ``((count, stride), ...)``) can share a byte: the analytic test first, then exact enumeration of the burst
    starts when there are at most ``config.OVERLAP_ENUM_BURSTS`` of them (conservatively True above)."""
    kept = []
    for lp in loops:
        if lp[0] != 1:
            if lp[0] == 0:
                return False  # (nothing is written)
            kept.append(tuple(lp))
    if burst == 0 or not offs:
        return False
    if len(offs) == 1:
        if len(kept) == 1:  # (one loop, the common case: as injective)
            c, s = kept[0]
            if c < 2 or abs(s) >= burst:
                return False
        elif injective(burst, kept):
            return False
    return _enumerate([(offs, burst, tuple(kept))])


def _enumerate(parts) -> bool:
    total = 0
    for offs, _, loops in parts:
        n = len(offs)
        for c, _ in loops:
            n *= c
        total += n
    if total > config.OVERLAP_ENUM_BURSTS:
        return True
    starts = np.concatenate([_starts(offs, loops) for offs, _, loops in parts])
    ends = np.concatenate([_starts(offs, loops) + b for offs, b, loops in parts])
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    return bool(np.any(starts[1:] < reach[:-1]))


def writes_overlap(steps, repeat=()) -> bool:
    """Whether any destination byte may be written twice by ``steps`` (each repeated over ``repeat`` =
    ``((count, dst stride), ...)`` outermost). Exact up to ``config.OVERLAP_ENUM_BURSTS`` bursts, conservative above."""
    if not steps:
        return False
    repeat = tuple((c, s) for c, s in repeat if c != 1)
    if repeat and all(c for c, _ in repeat):
        # the call's footprint repeated without touching itself, and one call's writes disjoint
        lo, hi = hull(step_spans(s)[1] for s in steps)
        if injective(hi - lo, repeat) and not writes_overlap(steps):
            return False
    parts = []
    for s in steps:
        loops = tuple((c, d) for c, d in tuple(repeat) + dst_loops(s) if c != 1)
        b = dst_burst(s)
        if b and s.dst_offs and all(c for c, _ in loops):
            parts.append((tuple(s.dst_offs), b, loops))
    if not parts:
        return False
    if len(parts) == 1:
        return lattice_overlaps(parts[0][1], parts[0][2], parts[0][0])
    # several steps: each proven injective and their write hulls disjoint -> no overlap
    if all(len(o) == 1 and injective(b, lp) for o, b, lp in parts):
        spans = sorted(_extent(o, b, tuple((c, 0, s) for c, s in lp), 2) for o, b, lp in parts)
        if all(spans[k][1] <= spans[k + 1][0] for k in range(len(spans) - 1)):
            return False
    return _enumerate(parts)
