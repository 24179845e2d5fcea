"""Lowering: steps -> a checked :class:`Plan` of kernel steps (views, loop order, tiling, threads).

:func:`make_plan` is where every call is checked against its tensors: the read and write spans of the steps
(bytes) must lie inside the source / destination tensor, before anything runs. It then lowers each step to
kernel steps: the widest unsigned view dividing every offset, stride and burst, loops reordered for sequential
writes and folded where contiguous, scattered reads tiled, long steps split across threads, and everything a
kernel call needs packed by :mod:`.abi`. :func:`match_kernel` is the one place a step is matched to a
dedicated kernel instead of the generic strided one.
"""

from __future__ import annotations

from math import gcd
from typing import NamedTuple

import numpy as np

from .. import config
from ..errors import OutOfBoundsError
from . import abi, npkernels
from . import kernels as K
from .abi import MAX_LOOPS
from .steps import Convert, Fill, Move, check_span, footprint, step_spans, written


#: kernel steps of the layout kernels (byte views; packed by match_kernel)
LAYOUT_KINDS = ("transpose", "dense", "rows", "elements")


class KStep(NamedTuple):
    """A step lowered for the kernels: offsets/strides in units of the view width ``w``."""

    kind: str  # "copy" | "fill" | "convert" | "tailed" (tailed_plan) | one of LAYOUT_KINDS (see match_kernel)
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
    metas: tuple = ()  # one int64 kernel argument array per chunk (see .abi)


class Effect(NamedTuple):
    """A write a call makes besides its destination (the 310P ND2NZ scratch): bytes ``[lo, hi)`` of the
    calling core's ``phys`` buffer become undefined. Applied by the runner, after the plan's own writes."""

    phys: object
    lo: int
    hi: int


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
    fast: tuple | None = None  # one copy, for the hot path: (w, meta, marks, views); meta 2-D: the rows are chunks
    # the threads share; marks a (lo, hi) byte span to set with numpy, or (w, meta, value) of a kernel fill; views
    # the copy as byte views for the numpy kernels (npkernels.byte_views), None for a call too large for them
    effects: tuple = ()  # Effect(s) the runner applies after the writes


def _width(values) -> int:
    g = 0
    for v in values:
        g = gcd(g, int(v))
    for w in (8, 4, 2):
        if g % w == 0:
            return w
    return 1


def _loops_units(loops, w, cols, n_off: int, nbytes: int) -> tuple:
    """``MAX_LOOPS x (count, src, dst)`` in view units, degenerate loops (count 1) outermost so the kernel's
    inner loops are real ones (measured: 1.5-1.9x on 32-byte bursts); except that a step the threads share
    along its outermost loop keeps that loop first (the kernel splits loop 0)."""
    if len(loops) > MAX_LOOPS:
        raise AssertionError("plan step has more loops than the kernels support")
    real = []
    for lp in loops:
        if lp[0] == 1:
            continue
        row = [lp[0], 0, 0]
        for c_src, c_dst in cols:
            row[c_dst] = lp[c_src] // w
        real.append(tuple(row))
    pad = ((1, 0, 0),) * (MAX_LOOPS - len(real))
    if real and _splits(n_off, real[0][0], nbytes):
        return (real[0],) + pad + tuple(real[1:])
    return pad + tuple(real)


def optimise_loops(burst: int, loops, dst_col: int, src_col: int | None):
    """Reorder loops so the destination is written in increasing address order (largest dst stride outermost)
    and fold loops that continue a contiguous burst. Only valid when no two writes overlap."""
    loops = [tuple(lp) for lp in loops if lp[0] != 1]
    n = len(loops)
    if n < 2:  # (the common case of new small plans, without the sort and the merge)
        if not loops:
            return burst, ()
        lp = loops[0]
        if lp[dst_col] == burst and (src_col is None or lp[src_col] == burst):
            return burst * lp[0], ()
        return burst, (lp,)
    if n == 2:  # (two loops, as often in new small plans: the sort below, without its key function)
        a, b = loops
        if abs(a[dst_col]) < abs(b[dst_col]):
            loops.reverse()
    else:
        loops.sort(key=lambda lp: -abs(lp[dst_col]))
    while loops:
        inner = loops[-1]
        if inner[dst_col] == burst and (src_col is None or inner[src_col] == burst):
            burst *= inner[0]
            loops.pop()
            continue
        break
    if len(loops) < 2:
        return burst, tuple(loops)
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
    if len(offs) == 1:  # (one offset: the single-burst plans of new small calls)
        return ((r + offs[0]) // w,)
    return tuple((r + o) // w for o in offs)


def match_kernel(step, src_residue: int, dst_residue: int):
    """The one place a plan step is matched to a dedicated kernel of :mod:`fastcopy.kernels` instead of the
    generic strided one (only for steps whose writes never overlap): a 2-D transpose of 32-byte blocks
    (ND2NZ, NZ2ND, to_nz / from_nz, the ND2NZ stage of UB->TSCM) goes to ``transpose_blocks``, one large
    contiguous burst to ``copy_dense``, a 2-D transpose of single 1/2/4/8-byte elements (the cube's transposing
    loads) to ``transpose_elements``. Returns their kernel steps, or None."""
    if not isinstance(step, Move):
        return None
    nbytes = written(step)
    if nbytes < config.LAYOUT_BYTES:  # (element transposes take their kernel at any size: see _element_shape)
        shape = _element_shape(step)
        return None if shape is None else _elements_step(step, *shape, nbytes)
    if len(step.dst_offs) != 1:  # offsets in arithmetic progression (slices) are one more loop
        ds, ss = _progression(step.dst_offs), _progression(step.src_offs)
        if ds is None or ss is None:
            return None
        step = Move(step.src_offs[:1], step.dst_offs[:1], step.burst, ((len(step.dst_offs), ss, ds),) + step.loops)
    burst, loops = optimise_loops(step.burst, step.loops, 2, 1)
    if not loops:  # one contiguous burst: streamed when large, else the generic copy (memcpy, shared)
        return (_dense_step(step, burst),) if nbytes >= config.DENSE_NT_BYTES else None
    if any(x < 0 for lp in loops for x in lp):
        return None
    # (batch,) a, c: c writes the destination contiguously, a reads the source contiguously
    if burst < 32 and len(loops) in (2, 3) and loops[-1][2] == burst and loops[-2][1] == burst:
        return _elements_step(step, burst, loops, nbytes)
    if burst % 32 or burst > 256 or len(loops) not in (2, 3) or loops[-1][2] != burst or loops[-2][1] != burst:
        if len(loops) <= 2 and burst >= config.ROWS_BURST and nbytes >= config.NT_BYTES:
            return (_rows_step(step, burst, loops, nbytes, True),)
        if len(loops) <= 2 and burst >= config.ROWS_CACHED_BURST and nbytes >= config.PARALLEL_BYTES:
            return (_rows_step(step, burst, loops, nbytes, False),)
        return None
    batch = loops[0] if len(loops) == 3 else (1, 0, 0)
    a, c = loops[-2], loops[-1]
    # destination runs on 16-byte boundaries: the kernel can stream their whole lines (large outputs)
    streams = (dst_residue + step.dst_offs[0]) % 16 == 0 and a[2] % 16 == 0 and (batch[0] == 1 or batch[2] % 16 == 0)
    nt = streams and nbytes >= config.NT_BYTES
    if streams:  # (streamed: long source runs; a cached output: shorter ones)
        tiles = (config.LAYOUT_TILE_A_NT if nt else config.LAYOUT_TILE_A, config.LAYOUT_TILE_C)
    else:
        tiles = (config.LAYOUT_TILE_A_UNALIGNED, config.LAYOUT_TILE_C_UNALIGNED)
    chunks = _layout_chunks(batch[0], a[0], nbytes, tiles[0])
    metas = tuple(np.stack([abi.pack_transpose(burst, batch, a, c, tiles, nt, ch) for ch in chunks]))
    return (KStep("transpose", 1, step.dst_offs, step.src_offs, burst, (batch, a, c), np.uint64(0), True, step,
                  chunks, (), metas),)


def _element_shape(step):
    """``(burst, loops)`` of a Move that is a 2-D transpose of single 1/2/4/8-byte elements with at least one whole
    tile of ``32/burst`` x ``32/burst`` of them (a transposed fractal, a LoadDataWithTranspose square), else None:
    such a step takes ``transpose_elements`` at any size (a 1 KiB square: one tile call, against an element-wise
    strided copy several times slower)."""
    if len(step.dst_offs) != 1:
        return None
    return _element_loops(*optimise_loops(step.burst, step.loops, 2, 1))


def _element_loops(burst: int, loops):
    """:func:`_element_shape` of a Move's folded ``(burst, loops)`` (one offset)."""
    if (burst not in (1, 2, 4, 8) or len(loops) not in (2, 3) or loops[-1][2] != burst or loops[-2][1] != burst
            or loops[-2][0] < 32 // burst or loops[-1][0] < 32 // burst or any(x < 0 for lp in loops for x in lp)):
        return None
    return burst, loops


def _elements_step(step, burst: int, loops, nbytes: int):
    """A transpose of single elements (``burst`` 1, 2, 4 or 8 bytes) with at least one whole tile of
    ``32/burst`` x ``32/burst`` elements: ``transpose_elements``; the threads share whole tiles."""
    n = 32 // burst
    batch = loops[0] if len(loops) == 3 else (1, 0, 0)
    a, c = loops[-2], loops[-1]
    if burst not in (1, 2, 4, 8) or a[0] < n or c[0] < n:
        return None
    if batch[0] > a[0]:
        chunks = tuple((lo, hi, 0, a[0]) for lo, hi in _pieces(batch[0], nbytes))
    else:
        chunks = tuple((0, batch[0], lo, hi) for lo, hi in _pieces(a[0], nbytes, n))
    metas = tuple(np.stack([abi.pack_transpose(burst, batch, a, c, (1, 1), False, ch) for ch in chunks]))
    return (KStep("elements", 1, step.dst_offs, step.src_offs, burst, (batch, a, c), np.uint64(0), True, step,
                  chunks, (), metas),)


def _progression(offs):
    """The common difference of an arithmetic progression of offsets, or None."""
    d = offs[1] - offs[0]
    return d if all(b - a == d for a, b in zip(offs, offs[1:])) else None


def _rows_step(step, burst: int, loops, nbytes: int, nt: bool) -> KStep:
    """Long bursts in up to two loops (padded rows, slices of whole rows): ``copy_rows``, streaming each row's
    whole lines if ``nt`` (rows of at least ROWS_BURST, NT_BYTES in all), else with regular stores (rows of at
    least ROWS_CACHED_BURST: an output the caches keep). The threads' pieces are whole batches (planes of a
    3-D slice) where there are enough of them."""
    batch = loops[0] if len(loops) == 2 else (1, 0, 0)
    a = loops[-1] if loops else (1, 0, 0)
    if batch[0] >= _parts(config.THREADS, nbytes):
        chunks = tuple((lo, hi, 0, a[0]) for lo, hi in _pieces(batch[0], nbytes))
    else:
        chunks = _layout_chunks(batch[0], a[0], nbytes)
    metas = tuple(np.stack([abi.pack_transpose(burst, batch, a, (1, 0, burst), (1, 1), nt, ch) for ch in chunks]))
    return KStep("rows", 1, step.dst_offs, step.src_offs, burst, (batch, a), np.uint64(0), True, step, chunks, (),
                 metas)


def _pieces(n: int, nbytes: int, align: int = 1) -> list:
    """Cut ``range(n)`` into the pieces the threads share (multiples of ``align`` but the last); one piece when
    the work is small or there is one thread."""
    if config.THREADS < 2 or nbytes < config.PARALLEL_BYTES:
        return [(0, n)]
    want = _parts(config.THREADS, nbytes)
    size = max(align, -(-n // want) // align * align)
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def _layout_chunks(nb: int, na: int, nbytes: int, tile_a: int = 1) -> tuple:
    """``(b_lo, b_hi, a_lo, a_hi)`` per piece: along ``a`` in whole tiles of ``tile_a`` where that still gives
    every thread a piece (fewer pieces rather than narrower tiles: the 256 block columns of a 4096-wide half
    ``to_nz`` go in two pieces of 128, not four of 64), or along the batch if it is longer."""
    if nb > na:
        return tuple((lo, hi, 0, na) for lo, hi in _pieces(nb, nbytes))
    return tuple((0, nb, lo, hi) for lo, hi in _pieces(na, nbytes, max(1, min(tile_a, na // config.THREADS))))


def _dense_step(step, burst: int) -> KStep:
    """One contiguous burst of at least DENSE_NT_BYTES: ``copy_dense`` pieces (bytes) with non-temporal stores."""
    pieces = tuple((lo, hi - lo) for lo, hi in _pieces(burst, burst, 4096))
    return KStep("dense", 1, step.dst_offs, step.src_offs, burst, (), np.uint64(0), True, step, pieces, (), pieces)


def lower_all(step, src_residue: int, dst_residue: int, reorder: bool) -> tuple:
    """Lower one plan step to one or more kernel steps (tiling can split it; long bursts are shared out)."""
    special = match_kernel(step, src_residue, dst_residue)
    if special is not None:
        return special
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
        w = _width(vals + [src_residue + o for o in step.src_offs] + [dst_residue + o for o in step.dst_offs])
        nbytes = written(step)
        loops = _loops_units(step.loops, w, ((1, 1), (2, 2)), len(step.dst_offs), nbytes)
        return KStep("copy", w, _units(step.dst_offs, dst_residue, w), _units(step.src_offs, src_residue, w),
                     step.burst // w, loops, np.uint64(0), True, step,
                     split(len(step.dst_offs), loops[0][0], nbytes))
    if isinstance(step, Fill):
        es = len(step.pattern) if step.pattern is not None else 1
        w = _width([step.burst, *[lp[1] for lp in step.loops]] + [dst_residue + o for o in step.dst_offs])
        if step.pattern is not None and w < es and len(set(step.pattern)) > 1:
            raise AssertionError("fill pattern wider than the view width")
        value = _replicate(step.pattern, w) if step.pattern is not None else np.uint64(0)
        nbytes = written(step)
        loops = _loops_units(step.loops, w, ((1, 2),), len(step.dst_offs), nbytes)
        return KStep("fill", w, _units(step.dst_offs, dst_residue, w), (), step.burst // w, loops, value,
                     step.pattern is not None, step, split(len(step.dst_offs), loops[0][0], nbytes))
    return KStep("convert", 1, (), (), 0, (), np.uint64(0), True, step, ())


def _splits(n_off: int, n0: int, nbytes: int) -> bool:
    """Whether :func:`split` shares a step along its outermost loop (not its offsets list)."""
    return config.THREADS >= 2 and nbytes >= config.PARALLEL_BYTES and n_off < 2 and n0 >= 2


def _parts(threads: int, nbytes: int) -> int:
    """How many pieces a shared step is cut into: one per thread, ``CHUNKS_PER_THREAD`` per thread from
    ``BALANCE_BYTES`` on (a descheduled thread then holds the call up by one piece, not half of it; smaller
    steps measured faster in fewer pieces, each claim costing a cache-line round trip between the cores)."""
    return threads * (config.CHUNKS_PER_THREAD if nbytes >= config.BALANCE_BYTES else 1)


def split(n_off: int, n0: int, nbytes: int, threads: int | None = None) -> tuple:
    """The ranges ``(o_lo, o_hi, i_lo, i_hi)`` of a step's offsets list or outermost loop that the threads take in
    turn (``CHUNKS_PER_THREAD`` per thread)."""
    threads = config.THREADS if threads is None else threads
    if threads < 2 or nbytes < config.PARALLEL_BYTES or (n_off < 2 and n0 < 2):
        return ((0, n_off, 0, n0),)
    n = n_off if n_off >= 2 else n0
    parts = _parts(threads, nbytes)
    cuts = [n * k // parts for k in range(parts + 1)]
    if n_off >= 2:
        return tuple((cuts[k], cuts[k + 1], 0, n0) for k in range(parts) if cuts[k] < cuts[k + 1])
    return tuple((0, n_off, cuts[k], cuts[k + 1]) for k in range(parts) if cuts[k] < cuts[k + 1])


def tile_inner(loops, src_col: int = 1):
    """Strip-mine a scattered innermost read loop so a tile of its rows stays in cache and TLB while the loops
    between are walked: ``(..., L, (n, s, d))`` -> ``((n/T, T*s, T*d), ..., L, (T, s, d))``.
    Returns a list of loop tuples (one per remainder piece, with an extra byte offset each)."""
    if not loops:
        return [((0, 0), loops)]
    n, *strides = loops[-1]
    if len(loops) < 2 or n <= config.TILE or abs(strides[src_col - 1]) < config.TILE_STRIDE:
        return [((0, 0), loops)]
    tile = next((t for t in range(config.TILE, config.TILE // 4, -1) if n % t == 0), config.TILE)
    full, rest = divmod(n, tile)
    s, d = strides[0], strides[1]
    out = [((0, 0), ((full, tile * s, tile * d),) + tuple(loops[:-1]) + ((tile, s, d),))]
    if rest:
        out.append(((full * tile * s, full * tile * d), tuple(loops[:-1]) + ((rest, s, d),)))
    return out


def _split_burst(ks: KStep) -> tuple:
    """One long burst (no loops, one offset) becomes equal pieces in an offsets list (plus a remainder step),
    so that the threads can share it."""
    nbytes = ks.burst * ks.w
    if (config.THREADS < 2 or ks.kind == "convert" or len(ks.doffs) != 1 or any(lp[0] != 1 for lp in ks.loops)
            or nbytes < config.PARALLEL_BYTES):
        return (ks,)
    pieces = _parts(config.THREADS, nbytes)
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
    """Pack what the kernels need into one ``meta`` array per chunk (see :mod:`.abi`)."""
    if ks.kind in ("convert",) + LAYOUT_KINDS:  # (layout kernel steps are packed by match_kernel)
        return ks
    metas = [abi.pack(ks.burst, ks.loops, chunk, ks.doffs, ks.soffs) for chunk in ks.chunks]
    metas = tuple(np.stack(metas)) if len(metas) > 1 else tuple(metas)  # rows of one table (see run._table)
    return KStep._make(ks[:-1] + (metas,))  # (faster than _replace; metas is the last field)


def _span_fill(lo: int, hi: int, residue: int) -> tuple:
    """Kernel steps filling bytes ``[lo, hi)`` with 0x01 (the plane of a dense plan), built directly."""
    w = _width((hi - lo, residue + lo))
    n = (hi - lo) // w
    ks = KStep("fill", w, _units((lo,), residue, w), (), n, abi.NO_LOOPS, _replicate(b"\x01", w), True,
               None, ((0, 1, 0, 1),))
    return tuple(finalize(k) for k in _split_burst(ks))


def _marks(step: Move, dst_residue: int, small: bool = True) -> tuple:
    """The destination pattern of a copy as 0x01 fills (folded: only the destination side must be contiguous),
    to mark the plane defined where the copy wrote."""
    fill = Fill(step.dst_offs, step.burst, tuple((lp[0], lp[2]) for lp in step.loops), b"\x01")
    ks = lower_small(fill, 0, dst_residue) if small else None
    if ks is not None:
        return (ks,)
    return tuple(finalize(k) for k in _split_burst(lower(fill, 0, dst_residue, True)))


def _narrow_pattern(step, residue: int) -> bool:
    """A fill whose pattern's bytes differ but whose offsets/strides allow no view as wide as the pattern."""
    if not isinstance(step, Fill) or step.pattern is None or len(set(step.pattern)) < 2:
        return False
    w = _width([step.burst, *[lp[1] for lp in step.loops]] + [residue + o for o in step.dst_offs])
    return w < len(step.pattern)


def _meta_extent(meta, dst_side: bool):
    """``(lo, hi)`` units one kernel call touches on one side (None if it touches nothing)."""
    burst, loops, (o_lo, o_hi, i_lo, i_hi), doffs, soffs = abi.unpack(meta)
    if burst <= 0 or o_hi <= o_lo or i_hi <= i_lo or min(lp[0] for lp in loops[1:]) <= 0:
        return None
    col = 2 if dst_side else 1
    offs = (doffs if dst_side else soffs)[o_lo:o_hi]
    lo, hi = min(offs), max(offs)
    s0 = loops[0][col]
    lo += min(i_lo * s0, (i_hi - 1) * s0)
    hi += max(i_lo * s0, (i_hi - 1) * s0)
    for lp in loops[1:]:
        lo += min(0, (lp[0] - 1) * lp[col])
        hi += max(0, (lp[0] - 1) * lp[col])
    return lo, hi + burst


def _check_lowered(api: str, ks, span, residue: int, dst_side: bool) -> None:
    """Every unit a lowered kernel step touches lies inside the plan's byte span: a lowering bug is caught
    here, when the plan is made, instead of writing outside the tensor."""
    r = residue % ks.w
    for meta in ks.metas:
        ext = _meta_extent(meta, dst_side)
        if ext is not None and (ext[0] * ks.w - r < span[0] or ext[1] * ks.w - r > span[1]):
            raise OutOfBoundsError(f"{api}: internal error: a lowered {ks.kind} step touches bytes "
                                   f"[{ext[0] * ks.w - r}, {ext[1] * ks.w - r}) outside the planned span {span}; "
                                   "nothing was written (please report this call)")


_REPLICATED = {}
_ZERO64 = np.uint64(0)


def _replicated(pattern: bytes, w: int) -> np.uint64:
    """:func:`_replicate`, cached (fill patterns are few)."""
    value = _REPLICATED.get((pattern, w))
    if value is None:
        if len(_REPLICATED) > 4096:
            _REPLICATED.clear()
        value = _REPLICATED[(pattern, w)] = _replicate(pattern, w)
    return value


def lower_small(step, src_residue: int, dst_residue: int):
    """The finalized kernel step of a small Move or Fill (below the layout-kernel and thread thresholds, no
    tiling, at most MAX_LOOPS loops after folding), built in one pass: exactly what :func:`lower_all` +
    :func:`finalize` make of it (a test holds them equal), at a fraction of the cost of the general path that
    new plans of small calls would otherwise pay. None for any other step (the general path takes it)."""
    kind = type(step)
    offs = step.dst_offs
    n_off = len(offs)
    if kind is Move:
        burst, loops = optimise_loops(step.burst, step.loops, 2, 1)
        nl = len(loops)
        if nl >= 2:
            last = loops[-1]
            if nl > MAX_LOOPS or (last[0] > config.TILE and abs(last[1]) >= config.TILE_STRIDE):
                return None
            if burst < 32 and n_off == 1 and _element_loops(burst, loops) is not None:
                return None  # (an element transpose: its kernel, see match_kernel)
    elif kind is Fill:
        burst, loops = optimise_loops(step.burst, step.loops, 1, None)
        nl = len(loops)
        if nl > MAX_LOOPS:
            return None
    else:
        return None
    nbytes = n_off * burst
    g = burst  # the widest view dividing every offset, stride and burst (as _width), in few gcd calls
    if kind is Move:
        for lp in loops:
            nbytes *= lp[0]
            g = gcd(g, lp[1], lp[2])
    else:
        for lp in loops:
            nbytes *= lp[0]
            g = gcd(g, lp[1])
    if nbytes >= config.LAYOUT_BYTES or nbytes >= config.PARALLEL_BYTES:
        return None
    if kind is Move:
        soffs = step.src_offs
        if n_off == 1:
            g = gcd(g, dst_residue + offs[0], src_residue + soffs[0])
        else:
            g = gcd(g, *[dst_residue + o for o in offs], *[src_residue + o for o in soffs])
    elif n_off == 1:
        g = gcd(g, dst_residue + offs[0])
    else:
        g = gcd(g, *[dst_residue + o for o in offs])
    w = 8 if g % 8 == 0 else 4 if g % 4 == 0 else 2 if g % 2 == 0 else 1
    r = dst_residue % w
    doffs = ((r + offs[0]) // w,) if n_off == 1 else tuple([(r + o) // w for o in offs])
    bu = burst // w
    if kind is Move:
        r = src_residue % w
        su = ((r + soffs[0]) // w,) if n_off == 1 else tuple([(r + o) // w for o in soffs])
        if nl == 0:
            lu, c0 = abi.NO_LOOPS, 1
        elif nl == 1:
            c, a, b = loops[0]
            lu, c0 = _PAD3 + ((c, a // w, b // w),), 1
        elif nl == 2:
            (n, a, b), (c, x, y) = loops
            lu, c0 = _PAD2 + ((n, a // w, b // w), (c, x // w, y // w)), 1
        else:
            lu = abi.NO_LOOPS[nl:] + tuple([(lp[0], lp[1] // w, lp[2] // w) for lp in loops])
            c0 = lu[0][0]
        if burst == step.burst and loops == step.loops:
            orig = step
        else:
            orig = _new(Move, (soffs, offs, burst, loops))
        chunks = _CHUNK1 if n_off == 1 and c0 == 1 else ((0, n_off, 0, c0),)
        return _kstep("copy", w, doffs, su, bu, lu, _ZERO64, True, orig, chunks, (),
                      (abi.pack_whole(bu, lu, c0, doffs, su),))
    pattern = step.pattern
    if pattern is not None and w < len(pattern) and len(set(pattern)) > 1:
        return None  # (make_plan sends such a plan to the exact path before lowering)
    lu = abi.NO_LOOPS[nl:] + tuple([(lp[0], 0, lp[1] // w) for lp in loops]) if loops else abi.NO_LOOPS
    c0 = lu[0][0]
    chunks = _CHUNK1 if n_off == 1 and c0 == 1 else ((0, n_off, 0, c0),)
    orig = step if burst == step.burst and loops == step.loops else _new(Fill, (offs, burst, loops, pattern))
    return _kstep("fill", w, doffs, (), bu, lu, _replicated(pattern, w) if pattern is not None else _ZERO64,
                  pattern is not None, orig, chunks, (), (abi.pack_whole(bu, lu, c0, doffs, ()),))


#: a namedtuple made from its fields in order without the generated ``__new__`` (~0.15 us less per step of a new
#: plan; the same object: a namedtuple is a tuple of its fields)
_new = tuple.__new__


def _kstep(*fields) -> KStep:
    """``KStep(*fields)``, every field given, made by :data:`_new` (the direct builders' kernel steps)."""
    return _new(KStep, fields)


_PAD3 = abi.NO_LOOPS[1:]
#: the chunk list of a one-offset step without a real outermost loop (shared: one allocation less per step)
_CHUNK1 = ((0, 1, 0, 1),)
_PAD2 = abi.NO_LOOPS[2:]
_PAD1 = abi.NO_LOOPS[3:]




def _check_small(api: str, ks, span, residue: int, dst_side: bool) -> None:
    """:func:`_check_lowered` for a step of :func:`lower_small` (one chunk covering the whole step), from the
    step's own fields, which :func:`abi.pack` copies into its ``meta`` verbatim."""
    col = 2 if dst_side else 1
    offs = ks.doffs if dst_side else ks.soffs
    if not offs:
        return  # touches nothing
    lo, hi = min(offs), max(offs)
    for lp in ks.loops:
        c = lp[0]
        if c <= 0:
            return  # touches nothing
        if c > 1:
            d = (c - 1) * lp[col]
            if d > 0:
                hi += d
            else:
                lo += d
    if ks.burst <= 0:
        return
    w, r = ks.w, residue % ks.w
    if lo * w - r < span[0] or (hi + ks.burst) * w - r > span[1]:
        raise OutOfBoundsError(f"{api}: internal error: a lowered {ks.kind} step touches bytes "
                               f"[{lo * w - r}, {(hi + ks.burst) * w - r}) outside the planned span {span}; "
                               "nothing was written (please report this call)")


def _single_burst(api: str, steps, src, dst, warnings):
    """The plan of one Move that folds to one contiguous burst on both sides (a count, a DataCopyParams whose
    bursts touch, a one-row pad...), built directly: the same Plan the general lowering makes (a test holds
    them equal), without its generality. None when the step is not such a burst (or is large enough for the
    layout kernels or the threads)."""
    step = steps[0]
    burst, loops = step.burst, step.loops
    if len(loops) == 1:  # (optimise_loops of one loop, inline: a DataCopyParams' bursts)
        lp = loops[0]
        c = lp[0]
        if c == 1:
            loops = ()
        elif lp[2] == burst and lp[1] == burst:
            burst, loops = burst * c, ()
    else:
        burst, loops = optimise_loops(burst, loops, 2, 1)
    if loops:
        if len(loops) == 1:
            return _one_loop(api, step, src, dst, warnings, burst, loops)
        return _dense_loops(api, step, src, dst, warnings, burst, loops)
    if burst >= config.LAYOUT_BYTES or burst >= config.PARALLEL_BYTES or burst <= 0:
        return None
    s0, d0 = step.src_offs[0], step.dst_offs[0]
    read, write = (s0, s0 + burst), (d0, d0 + burst)
    w, src_res, dst_res = _checked_width(api, read, write, src, dst, burst, s0, d0)
    doffs, soffs, bu = _units((d0,), dst_res, w), _units((s0,), src_res, w), burst // w
    meta = abi.pack_burst(bu, doffs[0], soffs[0])
    ks = _kstep("copy", w, doffs, soffs, bu, abi.NO_LOOPS, _ZERO64, True,
                _new(Move, (step.src_offs, step.dst_offs, burst, ())), _CHUNK1, (), (meta,))
    # (_check_small of what was lowered, from its fields: one offset, no loops)
    _check_one(api, ks.doffs[0], 0, ks.burst, w, dst_res % w, write)
    _check_one(api, ks.soffs[0], 0, ks.burst, w, src_res % w, read)
    # (the byte views npkernels.byte_views makes of this meta, from its fields: one burst)
    fast = None if warnings else (w, meta, write, (burst, None, None, ((d0, s0),))
                                  if burst <= config.SMALL_BYTES and K.numpy_copies() else None)
    return _new(Plan, (api, steps, (ks,), read, write, tuple(warnings), False, burst, True, (), fast, ()))


#: the public name of the builder :func:`make_plan` tries first for one Move of one offset (planners that know
#: their step is such a Move and never overlaps itself call it directly, then :func:`make_plan` when it gives None)
single_burst = _single_burst


def _checked_width(api: str, read, write, src, dst, g: int, s0: int, d0: int) -> tuple:
    """The one-offset builders' spans checked against the tensors (as :func:`general_plan` checks them), then
    ``(w, src residue, dst residue)``: the widest view dividing ``g`` (the gcd of the step's burst and strides) and
    both first bytes (as :func:`_width`)."""
    check_span(api, "read", read, src.nbytes, "source")
    check_span(api, "write", write, dst.nbytes, "destination")
    src_res, dst_res = src.host_mod, dst.host_mod
    g = gcd(g, src_res + s0, dst_res + d0)
    return (8 if g % 8 == 0 else 4 if g % 4 == 0 else 2 if g % 2 == 0 else 1), src_res, dst_res


def _check_one(api: str, off: int, d: int, bu: int, w: int, r: int, span) -> None:
    """:func:`_check_small` of one side of a copy step of one offset ``off`` and at most one real loop, whose
    offsets reach ``d`` units past it (``(count - 1) * stride``), bursts of ``bu`` >= 1 units of ``w`` bytes,
    ``r`` the residue modulo ``w``: the same test and message, without the step."""
    lo, hi = (off, off + d) if d > 0 else (off + d, off)
    if lo * w - r < span[0] or (hi + bu) * w - r > span[1]:
        raise OutOfBoundsError(f"{api}: internal error: a lowered copy step touches bytes "
                               f"[{lo * w - r}, {(hi + bu) * w - r}) outside the planned span {span}; "
                               "nothing was written (please report this call)")


def _one_loop(api: str, step, src, dst, warnings, burst: int, loops):
    """The plan of one Move of one offset whose loops fold to one loop writing the destination contiguously
    (``count`` bursts, destination stride +-burst: a two-dimensional slice, a gather of rows), built directly:
    the Plan that :func:`_small_plan` makes of it (a test holds them equal), from the folded loop alone. None
    when the step is not that (a gap between the written bursts needs plane marks: the general builders)."""
    c, a, b = loops[0]
    if c < 2 or burst <= 0 or (b != burst and b != -burst) or burst * c >= config.LAYOUT_BYTES \
            or burst * c >= config.PARALLEL_BYTES:
        return None
    s0, d0 = step.src_offs[0], step.dst_offs[0]
    x, y = (c - 1) * a, (c - 1) * b  # (the spans: footprint's, from the folded loop: the same extents)
    read = (s0 + x, s0 + burst) if x < 0 else (s0, s0 + x + burst)
    write = (d0 + y, d0 + burst) if y < 0 else (d0, d0 + y + burst)
    w, src_res, dst_res = _checked_width(api, read, write, src, dst, gcd(burst, a, b), s0, d0)
    sr, dr = src_res % w, dst_res % w
    doff, soff = (dr + d0) // w, (sr + s0) // w
    bu, au, du = burst // w, a // w, b // w
    lu = _PAD3 + ((c, au, du),)
    orig = step if burst == step.burst and loops == step.loops else _new(Move, (step.src_offs, step.dst_offs, burst,
                                                                               loops))
    meta = abi.pack_loop(bu, c, au, du, doff, soff)
    ks = _kstep("copy", w, (doff,), (soff,), bu, lu, _ZERO64, True, orig, _CHUNK1, (), (meta,))
    # (_check_small of what was lowered, from its fields: one offset, one loop of c >= 2, the last; the others count 1)
    c, au, du = ks.loops[-1]
    _check_one(api, ks.soffs[0], (c - 1) * au, ks.burst, w, sr, read)
    _check_one(api, ks.doffs[0], (c - 1) * du, ks.burst, w, dr, write)
    # (the byte views npkernels.byte_views makes of this meta, from its fields: c bursts)
    fast = None if warnings else (w, meta, write, ((c, burst), (b, 1), (a, 1), ((d0, s0),))
                                  if burst * c <= config.SMALL_BYTES and K.numpy_copies() else None)
    return _new(Plan, (api, (step,), (ks,), read, write, tuple(warnings), False, burst * c, True, (), fast, ()))


def _dense_loops(api: str, step, src, dst, warnings, burst: int, loops):
    """The plan of one Move of one offset whose loops fold to two or more loops writing the destination densely
    (every byte of the write span exactly once: an NZ2ND of several fractal columns, rows of whole ND2NZ blocks),
    built directly: the Plan that :func:`_small_plan` makes of it (a test holds them equal, errors included), from
    the folded loops alone. None, having raised nothing, when the step is not that (gaps between the written
    bursts need plane marks; element transposes, tiled reads and large steps take other kernels)."""
    nl = len(loops)
    last = loops[-1]
    if nl > MAX_LOOPS or burst <= 0 or (last[0] > config.TILE and abs(last[1]) >= config.TILE_STRIDE) or (
            burst < 32 and _element_loops(burst, loops) is not None):
        return None  # (what lower_small declines)
    s0, d0 = step.src_offs[0], step.dst_offs[0]
    rlo = rhi = s0
    wlo = whi = d0
    nbytes = g = burst
    for c, a, b in loops:  # (the spans: footprint's, from the folded loops: the same extents)
        if c < 2:
            return None  # (a loop of no pass: nothing written)
        nbytes *= c
        x, y = (c - 1) * a, (c - 1) * b
        if x > 0:
            rhi += x
        else:
            rlo += x
        if y > 0:
            whi += y
        else:
            wlo += y
        g = gcd(g, a, b)
    whi += burst
    if nbytes != whi - wlo or nbytes >= config.LAYOUT_BYTES or nbytes >= config.PARALLEL_BYTES:
        return None
    read, write = (rlo, rhi + burst), (wlo, whi)
    w, src_res, dst_res = _checked_width(api, read, write, src, dst, g, s0, d0)
    doffs, soffs, bu = ((dst_res % w + d0) // w,), ((src_res % w + s0) // w,), burst // w
    lu = abi.NO_LOOPS[nl:] + tuple([(c, a // w, b // w) for c, a, b in loops])
    c0 = lu[0][0]
    orig = step if burst == step.burst and loops == step.loops else _new(Move, (step.src_offs, step.dst_offs, burst,
                                                                               loops))
    meta = abi.pack_whole(bu, lu, c0, doffs, soffs)
    ks = _kstep("copy", w, doffs, soffs, bu, lu, _ZERO64, True, orig, _CHUNK1 if c0 == 1 else ((0, 1, 0, c0),), (),
                (meta,))
    _check_small(api, ks, read, src_res, False)  # (what was lowered, from its fields)
    _check_small(api, ks, write, dst_res, True)
    fast = None if warnings else _fast(w, meta, write, nbytes, dst_res, src_res)
    return _new(Plan, (api, (step,), (ks,), read, write, tuple(warnings), False, nbytes, True, (), fast, ()))


def _fast(w: int, meta: np.ndarray, marks, nbytes: int, dst_res: int, src_res: int) -> tuple:
    """A plan's hot-path arguments (see :class:`Plan`): the copy's byte views for the numpy kernels when the call
    is small enough for them (one chunk, at most ``config.SMALL_BYTES``)."""
    views = None
    if meta.ndim == 1 and nbytes <= config.SMALL_BYTES and K.numpy_copies():
        views = npkernels.byte_views(meta.tolist(), w, dst_res, src_res)
    return (w, meta, marks, views)


def make_plan(api: str, steps, src, dst, warnings=(), exact: bool = False, effects=(), marks: bool = True) -> Plan:
    """Check every span against the tensors and lower the steps. ``src``/``dst`` are
    :class:`fastcopy.memory.TensorSig` (``src`` may be None for fill-only plans); ``exact``: the writes may
    overlap (from :func:`fastcopy.dma.steps.writes_overlap`); ``marks=False``: the destination never has a
    definedness plane (whole user arrays: to_nz / from_nz), so no plane marks are made for its copies."""
    steps = tuple(steps)
    if not steps:
        return Plan(api, (), (), None, None, tuple(warnings), False, 0, effects=tuple(effects))
    if len(steps) == 1 and not exact and not effects and type(steps[0]) is Move and len(steps[0].dst_offs) == 1:
        plan = _single_burst(api, steps, src, dst, warnings)
        if plan is not None:
            return plan
    if not exact:
        plan = _small_plan(api, steps, src, dst, warnings, effects, marks)
        if plan is not None:
            return plan
    return general_plan(api, steps, src, dst, warnings, exact, effects, marks=marks)


def _small_plan(api: str, steps: tuple, src, dst, warnings, effects, marks: bool = True):
    """The plan of small Move / Fill steps that :func:`lower_small` all takes, in one pass over the steps (spans,
    sizes, lowering), then the same checks and assembly as :func:`general_plan` (a test holds the two equal).
    None, having raised nothing, when a step needs the general path (it then runs and raises what it raises)."""
    src_res = src.host_mod if src is not None else 0
    dst_res = dst.host_mod
    read = write = None
    nbytes = 0
    defined_only = True
    ksteps = []
    for s in steps:
        kind = type(s)
        if kind is Fill:
            if s.pattern is None:
                defined_only = False
            elif _narrow_pattern(s, dst_res):
                return None  # (the exact path)
        elif kind is not Move:
            return None
        r, w, n = footprint(s)
        if r is not None:
            read = r if read is None else (min(read[0], r[0]), max(read[1], r[1]))
        write = w if write is None else (min(write[0], w[0]), max(write[1], w[1]))
        nbytes += n
        k = lower_small(s, src_res, dst_res)
        if k is None:
            return None
        ksteps.append(k)
    if read is not None:
        check_span(api, "read", read, src.nbytes, "source")
    check_span(api, "write", write, dst.nbytes, "destination")
    for k in ksteps:  # what was lowered, checked from its fields against the spans
        if k.kind == "copy":
            _check_small(api, k, read, src_res, False)
        _check_small(api, k, write, dst_res, True)
    return _assemble(api, steps, tuple(ksteps), read, write, nbytes, defined_only, False, warnings, effects,
                     dst_res, True, marks, src_res)


def make_tailed_plan(api: str, steps, src, dst, warnings=(), effects=()) -> Plan:
    """:func:`make_plan` of a program that may be rows with a tail: ``(whole blocks,) partial block, its fill``
    (see :func:`tailed_plan`; the steps of a new ND2NZ call whose width is not a multiple of C0, of a DataCopyPad
    GM -> local with dummy bytes), lowered to one
    ``copy_tailed`` kernel step when it is one and small; any other program as :func:`make_plan` lowers it. Only
    for writes that never overlap (the caller's verdict)."""
    plan = tailed_plan(api, steps, src, dst, warnings, effects)
    return plan if plan is not None else make_plan(api, steps, src, dst, warnings, effects=effects)


def tailed_plan(api: str, steps, src, dst, warnings=(), effects=()):
    """The plan of ``(full, part, tail)`` or ``(part, tail)`` as one ``copy_tailed`` kernel step (see
    :mod:`.abi`), or None, having raised nothing, when the steps are not that shape or too large (the layout
    kernels and the threads take those). ``part`` is a Move of one offset and at most two loops (the rows),
    ``tail`` a documented Fill of one offset over the same destination loops, or a Move repeating one source
    element (the rows' loops, then one of source stride 0: a DataCopyPad dummy), ``full`` a Move of one offset
    whose loops are the rows' (one block) or the rows' and one more (the blocks). The writes must never overlap (then
    the kernel's order, row by row, writes what the steps' program order writes). Spans and errors as
    :func:`general_plan`; the kernel's extents are checked from its packed ``meta`` against the spans."""
    if len(steps) == 3:
        full, part, tail = steps
        if type(full) is not Move or len(full.dst_offs) != 1:
            return None
    elif len(steps) == 2:
        full = None
        part, tail = steps
    else:
        return None
    if type(part) is not Move or len(part.dst_offs) != 1 or len(tail.dst_offs) != 1:
        return None
    outer = part.loops
    no = len(outer)
    if no > 2:
        return None
    kind = type(tail)
    if kind is Fill:
        if tail.pattern is None or len(tail.loops) != no:
            return None
        tb, ts = tail.burst, None
        for lp, tp in zip(outer, tail.loops):
            if lp[0] != tp[0] or lp[2] != tp[1]:
                return None
    elif kind is Move:  # one source element repeated (a zero source stride), the rows' loops outside
        tl = tail.loops
        if len(tl) != no + 1 or tl[:no] != outer or tl[no][1] != 0 or tl[no][2] != tail.burst or tl[no][0] <= 0:
            return None
        tb, ts = tail.burst * tl[no][0], tail.src_offs[0]
    else:
        return None
    if full is None:
        nb = blk = bs = bd = fs = fd = 0
    else:
        fl = full.loops
        if fl == outer:
            nb, bs, bd = 1, 0, 0
        elif len(fl) == no + 1 and fl[:no] == outer and fl[no][0] > 0:
            nb, bs, bd = fl[no]
        else:
            return None
        blk, fs, fd = full.burst, full.src_offs[0], full.dst_offs[0]
    return tailed_rows(api, steps, src, dst, warnings, effects, outer, nb, blk, bs, bd, fs, fd, part.burst,
                       part.src_offs[0], part.dst_offs[0], tb, tail.dst_offs[0], tail.burst, ts,
                       tail.pattern if ts is None else None)


def tailed_rows(api: str, steps, src, dst, warnings, effects, outer, nb: int, blk: int, bs: int, bd: int, fs: int,
                fd: int, rem: int, ps: int, pd: int, tb: int, td: int, unit: int, ts, pattern):
    """:func:`tailed_plan` from the fields it reads off the steps (a planner that made the steps knows them: a new
    ND2NZ call): the rows' loops ``outer``; ``nb`` bursts of ``blk`` bytes at ``fs``/``fd`` (strides ``bs``/``bd``;
    ``nb`` 0: no blocks step); the partial block, ``rem`` bytes from ``ps`` to ``pd``; the tail, ``tb`` bytes at
    ``td``, of the fill ``pattern`` (``ts`` None) or of the ``unit``-byte source element at ``ts`` repeated. The
    spans, checks and kernel step of :func:`tailed_plan`; None, having raised nothing, for programs too large (the
    layout kernels and the threads take those) or fills no view can address."""
    rows = 1
    for lp in outer:
        if lp[0] <= 0:
            return None
        rows *= lp[0]
    blocks = nb > 0
    nbytes = rows * (nb * blk + rem + tb)
    if nbytes >= config.LAYOUT_BYTES or nbytes >= config.PARALLEL_BYTES:
        return None
    # the spans (what general_plan's hull of the steps' spans is: the steps share the row loops)
    read = _rows_extent(outer, 1, blocks, nb, blk, bs, fs, rem, ps, unit, ts)
    write = _rows_extent(outer, 2, blocks, nb, blk, bd, fd, rem, pd, tb, td)
    check_span(api, "read", read, src.nbytes, "source")
    check_span(api, "write", write, dst.nbytes, "destination")
    src_res, dst_res = src.host_mod, dst.host_mod
    g = gcd(rem, tb, blk, bs, bd, src_res + ps, dst_res + pd, dst_res + td)  # the widest view (as _width)
    if blocks:
        g = gcd(g, src_res + fs, dst_res + fd)
    for lp in outer:
        g = gcd(g, lp[1], lp[2])
    w = 8 if g % 8 == 0 else 4 if g % 4 == 0 else 2 if g % 2 == 0 else 1
    if ts is None:
        if w < len(pattern) and len(set(pattern)) > 1:
            return None  # (make_plan sends such a plan to the exact path)
        value = _replicated(pattern, w)
    else:  # (the view as wide as the repeated element: each tail unit is that source unit)
        if w < unit or gcd(src_res + ts, unit) < unit:
            return None
        w, value = unit, _ZERO64
    rs, rd = src_res % w, dst_res % w
    if len(outer) == 1:  # (one row loop, the usual: without the list)
        c, a, b = outer[0]
        lu = _PAD1 + ((c, a // w, b // w),)
    else:
        lu = abi.NO_LOOPS[:2 - len(outer)] + tuple([(c, a // w, b // w) for c, a, b in outer])
    fields = (lu, nb, blk // w, bs // w, bd // w, (rs + fs) // w, (rd + fd) // w, rem // w, (rs + ps) // w,
              (rd + pd) // w, tb // w, (rd + td) // w, None if ts is None else (rs + ts) // w)
    _check_tailed(api, fields, w, read, write, rs, rd)
    meta = abi.pack_tailed(*fields)  # (its fields verbatim: what was checked is what runs)
    dense = nbytes == write[1] - write[0]
    marks = () if dense else (_kstep("tailed", w, (fields[9],), (), rem // w, lu, _replicated(b"\x01", w), True,
                                     steps, _CHUNK1, (), (abi.pack_tailed(*fields, fill_all=True),)),)
    ks = _kstep("tailed", w, (fields[9],), (fields[8],), rem // w, lu, value, True, steps, _CHUNK1, marks, (meta,))
    return _new(Plan, (api, tuple(steps), (ks,), read, write, tuple(warnings), False, nbytes, dense, (), None,
                       tuple(effects)))


def _rows_extent(loops, col: int, blocks: bool, nb: int, blk: int, bstride: int, first: int, rem: int, part: int,
                 tail: int = 0, td=None) -> tuple:
    """``(lo, hi)`` of what the rows of a tailed program touch on one side (``col`` 1: source strides, 2:
    destination): per row, its blocks (if it has a blocks step), its partial block and its tail (``tail`` units at
    ``td``; on the source side the unit a tail repeats, if any), empty bursts counting at their offset (as in a
    step's span); then repeated over ``loops``. (Plain arithmetic, no lists: new plans pay for each object.)"""
    lo, hi = part, part + rem
    if blocks:
        x = (nb - 1) * bstride
        a, b = (first + x, first + blk) if x < 0 else (first, first + x + blk)
        if a < lo:
            lo = a
        if b > hi:
            hi = b
    if td is not None:
        if td < lo:
            lo = td
        if td + tail > hi:
            hi = td + tail
    for lp in loops:
        x = (lp[0] - 1) * lp[col]
        if x > 0:
            hi += x
        else:
            lo += x
    return lo, hi


def _check_tailed(api: str, fields: tuple, w: int, read, write, rs: int, rd: int) -> None:
    """:func:`_check_lowered` for a ``copy_tailed`` kernel step, from the fields :func:`abi.pack_tailed` packs
    verbatim: every unit it touches on either side (its plane marks touch the same destination units) lies inside
    the plan's byte spans."""
    lu, nb, blk, bs, bd, fs, fd, rem, ps, pd, tail, td, ts = fields
    blocks = nb > 0
    lo, hi = _rows_extent(lu, 1, blocks, nb, blk, bs, fs, rem, ps, 1, ts)
    if lo * w - rs < read[0] or hi * w - rs > read[1]:
        _stray(api, lo * w - rs, hi * w - rs, read)
    lo, hi = _rows_extent(lu, 2, blocks, nb, blk, bd, fd, rem, pd, tail, td)
    if lo * w - rd < write[0] or hi * w - rd > write[1]:
        _stray(api, lo * w - rd, hi * w - rd, write)


def _stray(api: str, lo: int, hi: int, span, kind: str = "tailed") -> None:
    raise OutOfBoundsError(f"{api}: internal error: a lowered {kind} step touches bytes [{lo}, {hi}) outside the "
                           f"planned span {span}; nothing was written (please report this call)")


def _check_layout(api: str, ks, read, write) -> None:
    """:func:`_check_lowered` for a layout kernel step (:data:`LAYOUT_KINDS`, built by :func:`match_kernel`), from
    what its kernel receives, in the kernel's own terms: every byte each call reads and writes lies inside the
    plan's spans. The runner calls each kernel at ``tensor offset + doffs[0]`` / ``+ soffs[0]`` (bytes) with one
    ``meta`` (:func:`abi.pack_transpose`) per chunk; ``copy_dense`` with pieces ``(lo, n)``; ``copy_rows`` ignores
    ``nc`` (one burst per row); ``transpose_elements`` takes ``sa`` and ``dc`` as the element width ``burst``."""
    kind = ks.kind
    d0, s0 = ks.doffs[0], ks.soffs[0]
    if kind == "dense":
        for lo, n in ks.metas:
            if n > 0:
                if s0 + lo < read[0] or s0 + lo + n > read[1]:
                    _stray(api, s0 + lo, s0 + lo + n, read, kind)
                if d0 + lo < write[0] or d0 + lo + n > write[1]:
                    _stray(api, d0 + lo, d0 + lo + n, write, kind)
        return
    for meta in ks.metas:
        burst, _, sb, db, _, sa, da, nc, sc, dc, _, _, b_lo, b_hi, a_lo, a_hi, _ = meta.tolist()
        if kind == "rows":
            nc = 1
        elif kind == "elements":
            sa = dc = burst
        if burst <= 0 or nc <= 0 or b_hi <= b_lo or a_hi <= a_lo:
            continue  # (a call that touches nothing)
        b_hi, a_hi, nc = b_hi - 1, a_hi - 1, nc - 1  # (the last index of each loop)
        for lo, b, a, c, span in ((s0, sb, sa, sc, read), (d0, db, da, dc, write)):
            hi = lo
            lo += (b_lo * b if b >= 0 else b_hi * b) + (a_lo * a if a >= 0 else a_hi * a) + (0 if c >= 0 else nc * c)
            hi += (b_hi * b if b >= 0 else b_lo * b) + (a_hi * a if a >= 0 else a_lo * a) + burst + (
                nc * c if c >= 0 else 0)
            if lo < span[0] or hi > span[1]:
                _stray(api, lo, hi, span, kind)


def general_plan(api: str, steps: tuple, src, dst, warnings=(), exact: bool = False, effects=(),
                 small: bool = True, marks: bool = True) -> Plan:
    """:func:`make_plan` without the single-burst builder; ``small=False``: without :func:`lower_small`
    either (the reference the tests hold the direct builders to)."""
    read = write = None
    nbytes = 0
    defined_only = True  # every step a copy or a documented fill (a dense plan marks its span at once)
    for s in steps:
        r, w = step_spans(s)
        if r is not None:
            read = r if read is None else (min(read[0], r[0]), max(read[1], r[1]))
        write = w if write is None else (min(write[0], w[0]), max(write[1], w[1]))
        nbytes += written(s)
        if not (isinstance(s, Move) or (isinstance(s, Fill) and s.pattern is not None)):
            defined_only = False
    if read is not None:
        check_span(api, "read", read, src.nbytes, "source")
    check_span(api, "write", write, dst.nbytes, "destination")
    src_res = src.host_mod if src is not None else 0
    dst_res = dst.host_mod
    if not exact and any(_narrow_pattern(s, dst_res) for s in steps):
        exact = True  # a multi-byte fill pattern on bytes no view of its width can address: the exact path
    ksteps = ()
    general = []  # kernel steps of the general lowering (checked below from their packed arguments)
    if not exact:
        out = []
        for s in steps:
            k = lower_small(s, src_res, dst_res) if small else None
            if k is not None:  # checked here, from its fields
                if k.kind == "copy":
                    _check_small(api, k, read, src_res, False)
                _check_small(api, k, write, dst_res, True)
                out.append(k)
            else:
                more = [finalize(k) for k in lower_all(s, src_res, dst_res, True)]
                general.extend(more)
                out.extend(more)
        ksteps = tuple(out)
    for ks in general:  # (every lowered step, from the arguments its kernel receives)
        if ks.kind in ("copy", "fill"):
            _check_lowered(api, ks, write, dst_res, True)
        if ks.kind == "copy":
            _check_lowered(api, ks, read, src_res, False)
        elif ks.kind in LAYOUT_KINDS:
            _check_layout(api, ks, read, write)
    return _assemble(api, steps, ksteps, read, write, nbytes, defined_only, exact, warnings, effects, dst_res,
                     small, marks, src_res)


def _assemble(api: str, steps: tuple, ksteps: tuple, read, write, nbytes: int, defined_only: bool, exact: bool,
              warnings, effects, dst_res: int, small: bool, marks: bool = True, src_res: int = 0) -> Plan:
    """The Plan of lowered, checked kernel steps: density, the plane marks of copies, the hot-path arguments."""
    dense = not exact and defined_only and nbytes == write[1] - write[0]
    span_mark = ()
    if not dense and not exact and marks:  # per-copy plane marks (one per plan step, on its first kernel step)
        seen = set()
        marked = []
        for ks in ksteps:
            if ks.kind in ("copy",) + LAYOUT_KINDS and id(ks.step) not in seen:
                seen.add(id(ks.step))
                ks = ks._replace(mark=_marks(ks.step, dst_res, small))
                for mk in ks.mark:
                    whole = (len(mk.chunks) == 1 and mk.chunks[0][1] == len(mk.doffs) and mk.chunks[0][2] == 0
                             and mk.chunks[0][3] == mk.loops[0][0])
                    (_check_small if whole else _check_lowered)(api, mk, write, dst_res, True)
            marked.append(ks)
        ksteps = tuple(marked)
    if dense and write[1] - write[0] >= config.PARALLEL_BYTES:  # smaller spans are set with numpy by the executor
        span_mark = _span_fill(write[0], write[1], dst_res)
    for mk in span_mark:
        _check_lowered(api, mk, write, dst_res, True)
    fast = None
    if not warnings and not effects and not exact and len(ksteps) == 1 and ksteps[0].kind == "copy":
        ks = ksteps[0]
        marks = span_mark if dense else ks.mark
        # one chunk: its meta; chunks the threads share: their table (rows of one array, see finalize)
        meta = ks.metas[0] if len(ks.metas) == 1 else ks.metas[0].base
        if dense and write[1] - write[0] < config.NT_BYTES:  # the plane span set with numpy (once: then known)
            fast = _fast(ks.w, meta, write, nbytes, dst_res, src_res)
        elif len(ks.metas) == 1 and len(marks) == 1 and len(marks[0].metas) == 1:
            fast = _fast(ks.w, meta, (marks[0].w, marks[0].metas[0], marks[0].value), nbytes, dst_res, src_res)
    return _new(Plan, (api, steps, ksteps, read, write, tuple(warnings), exact, nbytes, dense, span_mark, fast,
                       tuple(effects)))


__all__ = ["Plan", "KStep", "Effect", "make_plan", "make_tailed_plan", "match_kernel", "Convert"]
