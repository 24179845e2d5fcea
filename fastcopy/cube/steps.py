"""Element maps -> plan steps: the one lowering every cube-in planner uses.

A planner describes its call as two int64 arrays of equal shape: for every element written, its destination
byte offset and its source byte offset (``-1``: the element is a fill with the pad pattern). This module sorts
the writes by destination, merges runs that are contiguous on both sides into bursts, gathers runs of one length
in arithmetic progression into a loop, and emits Move / Fill steps (offset lists + one loop) for the shared
kernels. The result moves exactly the listed elements; whether two of them land on the same byte is reported
so the plan can take the exact path.
"""

from __future__ import annotations

import numpy as np

from ..dma.steps import Fill, Move


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


def element_steps(dst: np.ndarray, src: np.ndarray, es: int, pad: bytes | None = None):
    """Steps writing element ``k`` (``es`` bytes) at byte ``dst[k]`` from byte ``src[k]`` (``-1``: the ``pad``
    pattern). Returns ``(steps, overlap)``; ``overlap`` is True when two elements share a destination."""
    d = np.asarray(dst, np.int64).reshape(-1)
    s = np.asarray(src, np.int64).reshape(-1)
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
            if is_move:
                steps.append(Move(tuple(o[0] for o in offs), tuple(o[1] for o in offs), length,
                                  ((count, dsl, ddl),) if count > 1 else ()))
            else:
                steps.append(Fill(tuple(o[1] for o in offs), length, ((count, ddl),) if count > 1 else (), pad))
    return tuple(steps), overlap


__all__ = ["element_steps"]
