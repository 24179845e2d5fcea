"""Plans: what a validated call will do, as a small DMA program over byte offsets.

A planner (one per op family, in ``fastcopy/ops``) validates (params, tensors, product) and returns an
immutable :class:`Plan`: the ordered steps (strided bursts and fills), the exact byte spans read and written
(checked against the tensors here, before anything runs), warnings to emit, and whether writes may overlap.
Plans are cached by the planners (LRU) on (params, tensor signatures, product, state).

Offsets and strides in steps are bytes relative to the start of the source / destination tensor.
"""

from __future__ import annotations

import os
from math import gcd
from typing import NamedTuple

import numpy as np

from .errors import OutOfBoundsError

MAX_LOOPS = 4


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


class KStep(NamedTuple):
    """A step lowered for the kernels: offsets/strides in units of the view width ``w``."""

    kind: str  # "copy" | "fill" | "convert"
    w: int
    doffs: tuple  # offsets in units (see _units)
    soffs: tuple
    burst: int
    loops: tuple  # MAX_LOOPS x (count, src stride, dst stride) in units, real loops first
    value: np.uint64  # fill value replicated to the width (fills); poison marker handled by the executor
    defined: bool  # fills: pattern documented
    step: object  # the original step
    chunks: tuple  # per-thread ranges (o_lo, o_hi, i_lo, i_hi) of the offsets list / outermost loop
    mark: tuple = ()  # copies: the destination pattern as folded fills, to mark the plane defined
    metas: tuple = ()  # one int64 kernel argument array per chunk (see kernels.strided)


class Plan(NamedTuple):
    """A validated call: its steps (program order), their kernel lowering, spans, warnings and flags."""

    api: str
    steps: tuple
    ksteps: tuple
    read: tuple | None  # (lo, hi) bytes of the source tensor read, or None
    write: tuple | None  # (lo, hi) bytes of the destination tensor written, or None
    warnings: tuple
    exact: bool  # writes may overlap: run the exact (slow) path that resolves multiply-written bytes
    nbytes: int  # bytes written (for reports)
    dense: bool = False  # the writes cover the write span exactly once, with documented values only
    span_mark: tuple = ()  # dense plans: kernel fills of 0x01 over the write span (the plane, in one pass)
    fast: tuple | None = None  # one copy, one chunk, for the hot path: (w, meta, marks) with marks as in
    # execute(): a (lo, hi) byte span to set with numpy, or (w, meta, value) of a kernel fill


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


def step_spans(step) -> tuple:
    """((read lo, hi) or None, (write lo, hi)) in bytes of one step."""
    if isinstance(step, Fill):
        return None, _extent(step.dst_offs, step.burst, step.loops, 1)
    if isinstance(step, Convert):
        es_s, es_d = step.src_dtype.itemsize, step.dst_dtype.itemsize
        return (_extent(step.src_offs, step.n * es_s, step.loops, 1),
                _extent(step.dst_offs, step.n * es_d, step.loops, 2))
    return _extent(step.src_offs, step.burst, step.loops, 1), _extent(step.dst_offs, step.burst, step.loops, 2)


def _hull(spans):
    spans = [s for s in spans if s is not None]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def _written(step) -> int:
    count = 1
    for lp in step.loops:
        count *= lp[0]
    size = step.n * step.dst_dtype.itemsize if isinstance(step, Convert) else step.burst
    return len(step.dst_offs) * count * size


def check_span(api: str, role: str, span, tensor_nbytes: int, what: str) -> None:
    """Raise OutOfBoundsError unless bytes ``[lo, hi)`` lie inside a tensor of ``tensor_nbytes`` bytes."""
    lo, hi = span
    if lo < 0 or hi > tensor_nbytes:
        bad = lo if lo < 0 else hi
        raise OutOfBoundsError(f"{api}: the {role} span is bytes [{lo}, {hi}) of the {what} tensor, which has "
                               f"{tensor_nbytes} bytes: needs {hi - min(lo, 0)} bytes, {tensor_nbytes} available "
                               f"(first byte outside at offset {bad})")


def _width(values, residues) -> int:
    g = 0
    for v in values:
        g = gcd(g, int(v))
    for r in residues:
        g = gcd(g, int(r))
    for w in (8, 4, 2):
        if g % w == 0:
            return w
    return 1


def _loops_units(loops, w, cols) -> tuple:
    """``MAX_LOOPS x (count, src, dst)`` in view units; real loops first, padding (count 1) after."""
    if len(loops) > MAX_LOOPS:
        raise AssertionError("plan step has more loops than the kernels support")
    out = []
    for lp in loops:
        row = [lp[0], 0, 0]
        for c_src, c_dst in cols:
            row[c_dst] = lp[c_src] // w
        out.append(tuple(row))
    return tuple(out) + ((1, 0, 0),) * (MAX_LOOPS - len(loops))


def optimise_loops(burst: int, loops, dst_col: int, src_col: int | None):
    """Reorder loops so the destination is written in increasing address order (largest dst stride outermost)
    and fold loops that continue a contiguous burst. Only valid when no two writes overlap."""
    loops = [tuple(lp) for lp in loops if lp[0] != 1]
    loops.sort(key=lambda lp: -abs(lp[dst_col]))
    while loops:
        inner = loops[-1]
        if inner[dst_col] == burst and (src_col is None or inner[src_col] == burst):
            burst *= inner[0]
            loops.pop()
            continue
        break
    merged = []
    for lp in loops:
        if merged:
            prev = merged[-1]
            if prev[dst_col] == lp[0] * lp[dst_col] and (src_col is None or prev[src_col] == lp[0] * lp[src_col]):
                merged[-1] = (prev[0] * lp[0],) + tuple(lp[1:])
                continue
        merged.append(lp)
    return burst, tuple(merged)


def _replicate(pattern: bytes, w: int) -> np.uint64:
    reps = max(1, w // len(pattern))
    return np.frombuffer((pattern * reps)[:w].ljust(8, b"\0"), np.uint64)[0]


def _units(offs, residue: int, w: int) -> tuple:
    """Offsets in view units, relative to ``(tensor.offset - view shift) // w`` (added by the executor)."""
    r = residue % w
    return tuple((r + o) // w for o in offs)


def lower_all(step, src_residue: int, dst_residue: int, reorder: bool) -> tuple:
    """Lower one plan step to one or more kernel steps (tiling can split it; long bursts are shared out)."""
    if reorder and isinstance(step, Move):
        burst, loops = optimise_loops(step.burst, step.loops, 2, 1)
        if len(loops) <= 1:  # nothing to tile
            return _split_burst(lower(step._replace(burst=burst, loops=loops), src_residue, dst_residue))
        parts = []
        for (ds, dd), tl in tile_inner(loops):
            if len(tl) > MAX_LOOPS:  # fold outermost loops into the offsets list
                extra, tl = tl[:len(tl) - MAX_LOOPS], tl[len(tl) - MAX_LOOPS:]
                so, do = np.array(step.src_offs, np.int64), np.array(step.dst_offs, np.int64)
                for n, a, b in extra:
                    so = (so[:, None] + np.arange(n) * a).reshape(-1)
                    do = (do[:, None] + np.arange(n) * b).reshape(-1)
                part = Move(tuple(int(x) + ds for x in so), tuple(int(x) + dd for x in do), burst, tl)
            else:
                part = Move(tuple(o + ds for o in step.src_offs), tuple(o + dd for o in step.dst_offs), burst, tl)
            parts.append(part)
        return tuple(k for p in parts for k in _split_burst(lower(p, src_residue, dst_residue)))
    return _split_burst(lower(step, src_residue, dst_residue, reorder))


def lower(step, src_residue: int, dst_residue: int, reorder: bool = False) -> KStep:
    """Lower a step to kernel units: the widest unsigned view dividing every offset, stride and burst.
    ``reorder`` (writes never overlap): loops reordered for sequential writes and contiguous loops folded."""
    if reorder and isinstance(step, Move):
        burst, loops = optimise_loops(step.burst, step.loops, 2, 1)
        step = step._replace(burst=burst, loops=loops)
    elif reorder and isinstance(step, Fill):
        burst, loops = optimise_loops(step.burst, step.loops, 1, None)
        step = step._replace(burst=burst, loops=loops)
    if isinstance(step, Move):
        vals = [step.burst, *[lp[1] for lp in step.loops], *[lp[2] for lp in step.loops]]
        w = _width(vals + [src_residue + o for o in step.src_offs] + [dst_residue + o for o in step.dst_offs], ())
        loops = _loops_units(step.loops, w, ((1, 1), (2, 2)))
        return KStep("copy", w, _units(step.dst_offs, dst_residue, w), _units(step.src_offs, src_residue, w),
                     step.burst // w, loops, np.uint64(0), True, step,
                     split(len(step.dst_offs), loops[0][0], _written(step)))
    if isinstance(step, Fill):
        es = len(step.pattern) if step.pattern is not None else 1
        vals = [step.burst, *[lp[1] for lp in step.loops]] + [dst_residue + o for o in step.dst_offs]
        w = _width(vals, ())
        if step.pattern is not None and w < es and len(set(step.pattern)) > 1:
            raise AssertionError("fill pattern wider than the view width")
        value = _replicate(step.pattern, w) if step.pattern is not None else np.uint64(0)
        loops = _loops_units(step.loops, w, ((1, 2),))
        return KStep("fill", w, _units(step.dst_offs, dst_residue, w), (), step.burst // w, loops, value,
                     step.pattern is not None, step, split(len(step.dst_offs), loops[0][0], _written(step)))
    return KStep("convert", 1, (), (), 0, (), np.uint64(0), True, step, ())


#: steps moving at least this many bytes are split across the worker threads
PARALLEL_BYTES = 1 << 20
THREADS = max(1, min(int(os.environ.get("FASTCOPY_THREADS", "2")), os.cpu_count() or 1))


def split(n_off: int, n0: int, nbytes: int, threads: int = THREADS) -> tuple:
    """Per-thread ranges ``(o_lo, o_hi, i_lo, i_hi)`` of a step's offsets list or outermost loop."""
    if threads < 2 or nbytes < PARALLEL_BYTES or (n_off < 2 and n0 < 2):
        return ((0, n_off, 0, n0),)
    n = n_off if n_off >= 2 else n0
    cuts = [n * k // threads for k in range(threads + 1)]
    if n_off >= 2:
        return tuple((cuts[k], cuts[k + 1], 0, n0) for k in range(threads) if cuts[k] < cuts[k + 1])
    return tuple((0, n_off, cuts[k], cuts[k + 1]) for k in range(threads) if cuts[k] < cuts[k + 1])


#: an innermost loop reading with a stride at least this large (bytes) and more than TILE iterations is tiled
TILE_STRIDE = 1024
TILE = 64


def tile_inner(loops, src_col: int = 1):
    """Strip-mine a scattered innermost read loop so a tile of its rows stays in cache and TLB while the loops
    between are walked: ``(..., L, (n, s, d))`` -> ``((n/T, T*s, T*d), ..., L, (T, s, d))``.
    Returns a list of loop tuples (one per remainder piece, with an extra byte offset each)."""
    if not loops:
        return [((0, 0), loops)]
    n, *strides = loops[-1]
    if len(loops) < 2 or n <= TILE or abs(strides[src_col - 1]) < TILE_STRIDE:
        return [((0, 0), loops)]
    tile = next((t for t in range(TILE, TILE // 4, -1) if n % t == 0), TILE)
    full, rest = divmod(n, tile)
    s, d = strides[0], strides[1]
    out = [((0, 0), ((full, tile * s, tile * d),) + tuple(loops[:-1]) + ((tile, s, d),))]
    if rest:
        out.append(((full * tile * s, full * tile * d), tuple(loops[:-1]) + ((rest, s, d),)))
    return out


def _split_burst(ks: KStep) -> tuple:
    """One long burst (no loops, one offset) becomes equal pieces in an offsets list (plus a remainder step),
    so that the threads can share it."""
    if (THREADS < 2 or ks.kind == "convert" or len(ks.doffs) != 1 or any(lp[0] != 1 for lp in ks.loops)
            or ks.burst * ks.w < 2 * PARALLEL_BYTES):
        return (ks,)
    pieces = 4 * THREADS
    size = ks.burst // pieces
    steps = []
    for start, count, n in ((0, pieces, size), (pieces * size, 1, ks.burst - pieces * size)):
        if n == 0:
            continue
        doffs = tuple(ks.doffs[0] + start + k * n for k in range(count))
        soffs = tuple(ks.soffs[0] + start + k * n for k in range(count)) if ks.kind == "copy" else ks.soffs
        steps.append(ks._replace(doffs=doffs, soffs=soffs, burst=n, chunks=split(count, 1, count * n * ks.w)))
    return tuple(steps)


def finalize(ks: KStep) -> KStep:
    """Pack what the kernels need into one ``meta`` array per chunk (and finalize the plane marks)."""
    if ks.kind == "convert":
        return ks
    n_off = len(ks.doffs)
    soffs = ks.soffs if len(ks.soffs) == n_off else (0,) * n_off
    head = [ks.burst]
    for lp in ks.loops:
        head.extend(lp)
    tail = list(ks.doffs) + list(soffs)
    metas = tuple(np.array(head + list(chunk) + [n_off] + tail, np.int64) for chunk in ks.chunks)
    return KStep._make(ks[:-1] + (metas,))  # (faster than _replace; metas is the last field)


def _span_fill(lo: int, hi: int, residue: int) -> tuple:
    """Kernel steps filling bytes ``[lo, hi)`` with 0x01 (the plane of a dense plan), built directly."""
    w = _width((hi - lo, residue + lo), ())
    n = (hi - lo) // w
    ks = KStep("fill", w, _units((lo,), residue, w), (), n, ((1, 0, 0),) * MAX_LOOPS, _replicate(b"\x01", w), True,
               None, ((0, 1, 0, 1),))
    return tuple(finalize(k) for k in _split_burst(ks))


def _marks(step: Move, dst_residue: int) -> tuple:
    """The destination pattern of a copy as 0x01 fills (folded: only the destination side must be contiguous),
    to mark the plane defined where the copy wrote."""
    fill = Fill(step.dst_offs, step.burst, tuple((lp[0], lp[2]) for lp in step.loops), b"\x01")
    return tuple(finalize(k) for k in _split_burst(lower(fill, 0, dst_residue, True)))


def _narrow_pattern(step, residue: int) -> bool:
    """A fill whose pattern's bytes differ but whose offsets/strides allow no view as wide as the pattern."""
    if not isinstance(step, Fill) or step.pattern is None or len(set(step.pattern)) < 2:
        return False
    w = _width([step.burst, *[lp[1] for lp in step.loops]] + [residue + o for o in step.dst_offs], ())
    return w < len(step.pattern)


def make_plan(api: str, steps, src, dst, warnings=(), exact: bool = False) -> Plan:
    """Check every span against the tensors and lower the steps. ``src``/``dst`` are
    :class:`fastcopy.memory.TensorSig` (``src`` may be None for fill-only plans)."""
    steps = tuple(steps)
    if not steps:
        return Plan(api, (), (), None, None, tuple(warnings), False, 0)
    spans = [step_spans(s) for s in steps]
    read = _hull(r for r, _ in spans)
    write = _hull(w for _, w in spans)
    if read is not None:
        check_span(api, "read", read, src.nbytes, "source")
    check_span(api, "write", write, dst.nbytes, "destination")
    src_res = src.host_mod if src is not None else 0
    if not exact and any(_narrow_pattern(s, dst.host_mod) for s in steps):
        exact = True  # a multi-byte fill pattern on bytes no view of its width can address: the exact path
    ksteps = () if exact else tuple(finalize(k) for s in steps for k in lower_all(s, src_res, dst.host_mod, True))
    nbytes = sum(_written(s) for s in steps)
    dense = (not exact and nbytes == write[1] - write[0]
             and all(isinstance(s, Move) or (isinstance(s, Fill) and s.pattern is not None) for s in steps))
    span_mark = ()
    if not dense and not exact:  # per-copy plane marks (one per plan step, on its first kernel step)
        seen = set()
        marked = []
        for ks in ksteps:
            if ks.kind == "copy" and id(ks.step) not in seen:
                seen.add(id(ks.step))
                ks = ks._replace(mark=_marks(ks.step, dst.host_mod))
            marked.append(ks)
        ksteps = tuple(marked)
    if dense and write[1] - write[0] >= PARALLEL_BYTES:  # smaller spans are set with numpy by the executor
        span_mark = _span_fill(write[0], write[1], dst.host_mod)
    fast = None
    if not warnings and not exact and len(ksteps) == 1 and ksteps[0].kind == "copy" and len(ksteps[0].metas) == 1:
        marks = span_mark if dense else ksteps[0].mark
        if dense and write[1] - write[0] < PARALLEL_BYTES:
            fast = (ksteps[0].w, ksteps[0].metas[0], write)
        elif len(marks) == 1 and len(marks[0].metas) == 1:
            fast = (ksteps[0].w, ksteps[0].metas[0], (marks[0].w, marks[0].metas[0], marks[0].value))
    return Plan(api, steps, ksteps, read, write, tuple(warnings), exact, nbytes, dense, span_mark, fast)


def injective(burst: int, loops, col: int = 2) -> bool:
    """True if no two bursts of one step can write the same byte (sufficient test: each loop's stride clears
    the extent of everything inside it, taken in order of increasing stride)."""
    extent = burst
    for lp in sorted((lp for lp in loops if lp[0] > 1), key=lambda lp: abs(lp[col])):
        s = abs(lp[col])
        if s < extent:
            return False
        extent = s * (lp[0] - 1) + extent
    return True


def writes_may_overlap(steps, limit: int = 1 << 16) -> bool:
    """Whether any destination byte may be written twice. Exact for small plans, conservative above ``limit``."""
    steps = [s for s in steps]
    if len(steps) == 1 and not isinstance(steps[0], Convert):
        s = steps[0]
        col = 1 if isinstance(s, Fill) else 2
        if len(s.dst_offs) == 1 and injective(s.burst, s.loops, col):
            return False
    total = sum(_written(s) for s in steps)
    if total > limit:
        return True
    from .execute import _grid

    idx = []
    for s in steps:
        if isinstance(s, Fill):
            idx.append(_grid(s.dst_offs, s.burst, s.loops, 1))
        elif isinstance(s, Convert):
            idx.append(_grid(s.dst_offs, s.n * s.dst_dtype.itemsize, s.loops, 2))
        else:
            idx.append(_grid(s.dst_offs, s.burst, s.loops, 2))
    idx = np.concatenate(idx)
    return np.unique(idx).size != idx.size
