"""The kernel argument layout: the only module that knows how a kernel step is packed for the kernels.

Every strided kernel (``copy_strided``, ``fill_strided``, ``all_set`` in :mod:`fastcopy.kernels`) takes one
int64 array ``meta`` (few arguments: numba's dispatch cost grows with each one)::

    meta = [burst, c0, s0, d0, c1, s1, d1, c2, s2, d2, c3, s3, d3, o_lo, o_hi, i_lo, i_hi, n_off,
            doffs[0..n_off), soffs[0..n_off)]

``burst``, strides and offsets are in units of the view width; loops are outer -> inner, unused levels have
count 1; ``[o_lo, o_hi)`` is the part of the offsets list and ``[i_lo, i_hi)`` the part of the outermost loop
this call covers (so a step can be split across threads). For each offset ``o`` and loop index::

    d = dbase + doffs[o] + i0*d0 + i1*d1 + i2*d2 + i3*d3;  s = sbase + soffs[o] + i0*s0 + ...
    dst[d:d+burst] = src[s:s+burst]
"""

from __future__ import annotations

import numpy as np

MAX_LOOPS = 4
BURST = 0
LOOPS = 1  # MAX_LOOPS x (count, src stride, dst stride)
RANGE = 1 + 3 * MAX_LOOPS  # o_lo, o_hi, i_lo, i_hi
NOFF = RANGE + 4
OFFS = NOFF + 1
NO_LOOPS = ((1, 0, 0),) * MAX_LOOPS


def pack(burst: int, loops, chunk, doffs, soffs) -> np.ndarray:
    """One kernel call's ``meta``: ``loops`` = MAX_LOOPS x (count, src, dst), ``chunk`` = (o_lo, o_hi, i_lo,
    i_hi); ``soffs`` empty for fills (zeros are packed)."""
    n_off = len(doffs)
    head = [burst]
    for lp in loops:
        head.extend(lp)
    soffs = soffs if len(soffs) == n_off else (0,) * n_off
    return np.array(head + list(chunk) + [n_off] + list(doffs) + list(soffs), np.int64)


def contiguous(n: int) -> np.ndarray:
    """``meta`` of one burst of ``n`` units at unit 0 (whole-array checks, warm-up)."""
    return pack(n, NO_LOOPS, (0, 1, 0, 1), (0,), (0,))


def burst_of(meta) -> int:
    return int(meta[BURST])


def loops_of(meta) -> tuple:
    """MAX_LOOPS x (count, src stride, dst stride)."""
    return tuple(tuple(int(x) for x in meta[LOOPS + 3 * k:LOOPS + 3 * k + 3]) for k in range(MAX_LOOPS))


def chunk_of(meta) -> tuple:
    return tuple(int(x) for x in meta[RANGE:RANGE + 4])


def offsets_of(meta) -> tuple:
    """(doffs, soffs) of the whole step (every chunk)."""
    n = int(meta[NOFF])
    return meta[OFFS:OFFS + n], meta[OFFS + n:OFFS + 2 * n]
