"""Element maps -> plan steps: the one lowering every cube-in planner uses.

A planner describes its call as two int64 arrays of equal shape: for every element written, its destination
byte offset and its source byte offset (``-1``: the element is a fill with the pad pattern). This module sorts
the writes by destination, merges runs that are contiguous on both sides into bursts, gathers runs of one length
in arithmetic progression into a loop, folds the resulting offset lists into outer loops where they repeat
regularly (blocks of equal progressions: a fractal transpose becomes one Move with three loops, the shape the
layout kernels recognise), and emits Move / Fill steps for the shared kernels. The result moves exactly the listed elements; whether two of them land on the same byte is reported
so the plan can take the exact path.
"""

from __future__ import annotations

import numpy as np

from ..dma.abi import MAX_LOOPS
from ..dma.steps import Fill, Move, writes_overlap


def _runs(d: np.ndarray, s: np.ndarray | None, es: int):
    """Maximal runs contiguous in ``d`` (and ``s``): (start d, start s or None, length in bytes)."""
    if d.size == 0:
        return d, s, d
    brk = np.diff(d) != es
    if s is not None:
        brk |= np.diff(s) != es
    starts = np.flatnonzero(np.r_[True, brk])
    lengths = np.diff(np.r_[starts, d.size]) * es
    return d[starts], (None if s is None else s[starts]), lengths


def _progressions(rd, rs, rl):
    """Group consecutive runs of equal length whose starts advance by a constant (dd, ds) into
    (d0, s0, length, count, dd, ds) tuples."""
    n = rd.size
    if n == 0:
        return []
    rs_ = rs if rs is not None else np.zeros_like(rd)
    dd = np.diff(rd)
    ds = np.diff(rs_)
    same_len = rl[1:] == rl[:-1]
    # pair p (runs p, p+1) continues pair p-1 when lengths match and deltas repeat
    cont = np.zeros(max(n - 1, 0), bool)
    if n > 2:
        cont[1:] = same_len[1:] & same_len[:-1] & (dd[1:] == dd[:-1]) & (ds[1:] == ds[:-1])
    breaks = np.flatnonzero(~cont)  # pairs that do not continue the previous one
    out = []
    i = 0
    while i < n:
        if i == n - 1 or not same_len[i]:
            out.append((int(rd[i]), int(rs_[i]), int(rl[i]), 1, 0, 0))
            i += 1
            continue
        k = np.searchsorted(breaks, i, side="right")  # first pair after i that starts anew
        q = int(breaks[k]) if k < breaks.size else n - 1
        count = q - i + 1
        out.append((int(rd[i]), int(rs_[i]), int(rl[i]), count, int(dd[i]), int(ds[i])))
        i += count
    return out


def _fold(s: np.ndarray, d: np.ndarray, room: int):
    """Fold an offsets list (pairs ``s[k], d[k]`` in program order) into at most ``room`` outer loops: while the
    list is blocks of one arithmetic progression whose starts are the rest of the list, the progression becomes a
    loop (the innermost of those found) and the block starts the new list. Returns ``(s, d, loops)``, loops outer
    -> inner as ``(count, src stride, dst stride)``."""
    loops = []
    while s.size > 1 and len(loops) < room:
        ds, dd = s[1] - s[0], d[1] - d[0]
        same = (np.diff(s) == ds) & (np.diff(d) == dd)
        c = s.size if same.all() else int(np.argmin(same)) + 1
        if c < 2 or s.size % c:
            break
        s2, d2 = s.reshape(-1, c), d.reshape(-1, c)
        k = np.arange(c, dtype=np.int64)
        if not (np.array_equal(s2 - s2[:, :1], np.broadcast_to(k * ds, s2.shape))
                and np.array_equal(d2 - d2[:, :1], np.broadcast_to(k * dd, d2.shape))):
            break
        loops.append((c, int(ds), int(dd)))
        s, d = s2[:, 0], d2[:, 0]
    return s, d, tuple(reversed(loops))


def _axis_loop(d: np.ndarray, s: np.ndarray, axis: int):
    """``(d, s, (n, src stride, dst stride))`` of one axis, splitting it once into ``(n/k, k)`` where its steps
    repeat with period ``k`` (a fractal boundary inside a square); None when it is not that regular."""
    n = d.shape[axis]
    dd, ds = np.diff(d, axis=axis), np.diff(s, axis=axis)
    first = (0,) * d.ndim
    a, b = int(dd[first]), int(ds[first])
    if (dd == a).all() and (ds == b).all():
        return (n, b, a),
    dline = np.moveaxis(dd, axis, -1).reshape(-1, n - 1)[0]
    sline = np.moveaxis(ds, axis, -1).reshape(-1, n - 1)[0]
    k = int(np.argmax((dline != a) | (sline != b))) + 1  # the first step that differs
    if k < 2 or n % k:
        return None
    shape = d.shape[:axis] + (n // k, k) + d.shape[axis + 1:]
    d2, s2 = d.reshape(shape), s.reshape(shape)
    out = []
    for ax in (axis, axis + 1):
        dd, ds = np.diff(d2, axis=ax), np.diff(s2, axis=ax)
        a, b = int(dd[(0,) * d2.ndim]), int(ds[(0,) * d2.ndim])
        if not ((dd == a).all() and (ds == b).all()):
            return None
        out.append((d2.shape[ax], b, a))
    return tuple(out)


def _affine(d: np.ndarray, s: np.ndarray, es: int):
    """One Move when the map is affine along every axis of its (broadcast) shape, ``d = d0 + sum(i_a * dd_a)``
    and the same for ``s`` (a transpose written as ``np.ix_`` grids; an axis crossing a fractal boundary at a
    regular period is split in two): loops per axis, adjacent loops merged where they continue each other, loops
    beyond what the kernels take unrolled into the offsets list. None when the map is not that regular."""
    if d.ndim == 0 or d.size < 2 or s.min() < 0:
        return None
    loops = []
    for axis, n in enumerate(d.shape):
        if n == 1:
            continue
        found = _axis_loop(d, s, axis)
        if found is None:
            return None
        for lp in found:
            if loops and loops[-1][1] == lp[0] * lp[1] and loops[-1][2] == lp[0] * lp[2]:  # continues: merge
                loops[-1] = (loops[-1][0] * lp[0], lp[1], lp[2])
            else:
                loops.append(lp)
    burst = es
    if loops and loops[-1][1] == es and loops[-1][2] == es:  # contiguous innermost loop: a longer burst
        burst = loops.pop()[0] * es
    so, do = np.array([s.flat[0]], np.int64), np.array([d.flat[0]], np.int64)
    while len(loops) > MAX_LOOPS:  # the outermost loops become the offsets list
        n, b, a = loops.pop(0)
        k = np.arange(n, dtype=np.int64)
        so, do = (so[:, None] + k * b).reshape(-1), (do[:, None] + k * a).reshape(-1)
    return Move(tuple(so.tolist()), tuple(do.tolist()), burst, tuple(loops))


def element_steps(dst: np.ndarray, src: np.ndarray, es: int, pad: bytes | None = None):
    """Steps writing element ``k`` (``es`` bytes) at byte ``dst[k]`` from byte ``src[k]`` (``-1``: the ``pad``
    pattern). Returns ``(steps, overlap)``; ``overlap`` is True when two elements share a destination."""
    d, s = np.broadcast_arrays(np.asarray(dst, np.int64), np.asarray(src, np.int64))
    step = _affine(d, s, es)
    if step is not None:
        return (step,), writes_overlap((step,))
    d, s = d.reshape(-1), s.reshape(-1)
    order = np.argsort(d, kind="stable")
    d, s = d[order], s[order]
    overlap = bool(d.size > 1 and np.any(d[1:] - d[:-1] < es))
    steps = []
    moves = s >= 0
    for is_move in (True, False):
        sel = moves if is_move else ~moves
        if not sel.any():
            continue
        dm = d[sel]
        sm = s[sel] if is_move else None
        groups: dict = {}
        for d0, s0, length, count, ddl, dsl in _progressions(*_runs(dm, sm, es)):
            key = (length, count, ddl, dsl) if count > 1 else (length, 1, 0, 0)
            groups.setdefault(key, []).append((s0, d0))
        for (length, count, ddl, dsl), offs in groups.items():
            inner = ((count, dsl, ddl),) if count > 1 else ()
            so, do, outer = _fold(np.array([o[0] for o in offs], np.int64), np.array([o[1] for o in offs], np.int64),
                                  MAX_LOOPS - len(inner))
            loops = outer + inner
            if is_move:
                steps.append(Move(tuple(so.tolist()), tuple(do.tolist()), length, loops))
            else:
                steps.append(Fill(tuple(do.tolist()), length, tuple((lp[0], lp[2]) for lp in loops), pad))
    return tuple(steps), overlap


__all__ = ["element_steps"]
