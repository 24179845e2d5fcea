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

Layout kernels (``transpose_blocks``, ``copy_dense`` in :mod:`fastcopy.kernels.layout`) work on ``uint8`` views
in bytes. ``transpose_blocks`` takes::

    meta = [burst, nb, sb, db, na, sa, da, nc, sc, dc, tile_a, tile_c, b_lo, b_hi, a_lo, a_hi, nt]

for ``ib in [b_lo, b_hi)``, ``ia in [a_lo, a_hi)``, ``ic < nc`` (walked in tiles of ``tile_a x tile_c``)::

    dst[d:d+burst] = src[s:s+burst],  d = dbase + ib*db + ia*da + ic*dc,  s = sbase + ib*sb + ia*sa + ic*sc

``copy_dense(dst, d, src, s, n, nt)`` takes its range as plain arguments.

``copy_tailed`` (:mod:`fastcopy.kernels.tailed`: rows of whole blocks, a partial block and its fill tail, e.g. a
new ND2NZ call) works in units of the view width and takes::

    meta = [c0, s0, d0, c1, s1, d1, nb, blk, bs, bd, fs, fd, rem, ps, pd, tail, td, fill_all, ts, tail_src]

for ``i0 < c0``, ``i1 < c1`` (``s = sbase + i0*s0 + i1*s1``, ``d`` alike): ``nb`` bursts of ``blk`` units from
``s+fs+b*bs`` to ``d+fd+b*bd``, ``rem`` units from ``s+ps`` to ``d+pd``, ``tail`` units at ``d+td`` of its
``value`` argument, or (``tail_src`` 1) of the source unit at ``s+ts`` (a DataCopyPad dummy: the burst's first
element repeated); ``fill_all`` 1: every one of those destination units set to ``value`` (plane marks).
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
    m = [burst]
    for lp in loops:
        m += lp
    m += chunk
    m.append(n_off)
    m += doffs
    m += soffs if len(soffs) == n_off else (0,) * n_off
    return np.array(m, np.int64)  # (one list, one array: this is on the path of every new plan)


def pack_whole(burst: int, loops, c0: int, doffs, soffs) -> np.ndarray:
    """``pack(burst, loops, (0, len(doffs), 0, c0), doffs, soffs)``: a kernel step whose one call covers its whole
    range (``c0`` the outermost loop's count), in one list display (the steps of new small plans)."""
    (a0, a1, a2), (b0, b1, b2), (e0, e1, e2), (f0, f1, f2) = loops  # (MAX_LOOPS levels)
    n = len(doffs)
    return _array([burst, a0, a1, a2, b0, b1, b2, e0, e1, e2, f0, f1, f2, 0, n, 0, c0, n, *doffs,
                   *(soffs if len(soffs) == n else (0,) * n)], _INT64)


_array = np.array
_INT64 = np.dtype(np.int64)


def pack_burst(n: int, doff: int, soff: int) -> np.ndarray:
    """``pack(n, NO_LOOPS, (0, 1, 0, 1), (doff,), (soff,))``: one burst of ``n`` units, from its fields at once
    (the single-burst plans of new small calls)."""
    return np.array((n, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, doff, soff), np.int64)


def pack_loop(n: int, c: int, s: int, d: int, doff: int, soff: int) -> np.ndarray:
    """``pack(n, NO_LOOPS[1:] + ((c, s, d),), (0, 1, 0, 1), (doff,), (soff,))``: ``c`` bursts of ``n`` units
    (source stride ``s``, destination stride ``d``), from its fields at once (the one-loop plans of new small
    calls)."""
    return np.array((n, 1, 0, 0, 1, 0, 0, 1, 0, 0, c, s, d, 0, 1, 0, 1, 1, doff, soff), np.int64)


def contiguous(n: int) -> np.ndarray:
    """``meta`` of one burst of ``n`` units at unit 0 (whole-array checks, warm-up)."""
    return pack(n, NO_LOOPS, (0, 1, 0, 1), (0,), (0,))


def is_contiguous(meta) -> bool:
    """One burst: one offset, every loop count 1, the whole range."""
    return (int(meta[NOFF]) == 1 and all(lp[0] == 1 for lp in loops_of(meta))
            and chunk_of(meta) == (0, 1, 0, 1))


def burst_of(meta) -> int:
    return int(meta[BURST])


def loops_of(meta) -> tuple:
    """MAX_LOOPS x (count, src stride, dst stride)."""
    v = meta[LOOPS:RANGE].tolist()  # (one conversion to Python ints, not one per element)
    return tuple(tuple(v[3 * k:3 * k + 3]) for k in range(MAX_LOOPS))


def chunk_of(meta) -> tuple:
    return tuple(meta[RANGE:RANGE + 4].tolist())


def unpack(meta) -> tuple:
    """``(burst, loops, chunk, doffs, soffs)`` of a strided kernel's ``meta``, as Python ints (for checks)."""
    v = meta.tolist()
    n = v[NOFF]
    return (v[BURST], tuple(tuple(v[LOOPS + 3 * k:LOOPS + 3 * k + 3]) for k in range(MAX_LOOPS)),
            tuple(v[RANGE:RANGE + 4]), v[OFFS:OFFS + n], v[OFFS + n:OFFS + 2 * n])


def offsets_of(meta) -> tuple:
    """(doffs, soffs) of the whole step (every chunk)."""
    n = int(meta[NOFF])
    return meta[OFFS:OFFS + n], meta[OFFS + n:OFFS + 2 * n]


#: fields of a ``copy_tailed`` meta (see the module docstring)
(R_C0, R_S0, R_D0, R_C1, R_S1, R_D1, R_NB, R_BLK, R_BS, R_BD, R_FS, R_FD, R_REM, R_PS, R_PD, R_TAIL, R_TD,
 R_FILL_ALL, R_TS, R_TAIL_SRC) = range(20)


def pack_tailed(outer, nb: int, blk: int, bs: int, bd: int, fs: int, fd: int, rem: int, ps: int, pd: int, tail: int,
                td: int, ts, fill_all: bool = False) -> np.ndarray:
    """One ``copy_tailed`` call's ``meta``: ``outer`` = 2 x (count, src stride, dst stride), ``ts`` the tail's
    source unit or None (a constant tail), the rest as in the module docstring (units)."""
    (a0, a1, a2), (b0, b1, b2) = outer
    return _array([a0, a1, a2, b0, b1, b2, nb, blk, bs, bd, fs, fd, rem, ps, pd, tail, td, int(fill_all),
                   0 if ts is None else ts, ts is not None], _INT64)


(T_BURST, T_NB, T_SB, T_DB, T_NA, T_SA, T_DA, T_NC, T_SC, T_DC, T_TILE_A, T_TILE_C, T_B_LO, T_B_HI, T_A_LO,
 T_A_HI, T_NT) = range(17)


def pack_transpose(burst: int, batch, a, c, tiles, nt: bool, chunk) -> np.ndarray:
    """One ``transpose_blocks`` call's ``meta``: ``batch``/``a``/``c`` = (count, src stride, dst stride) in
    bytes, ``tiles`` = (tile_a, tile_c), ``chunk`` = (b_lo, b_hi, a_lo, a_hi)."""
    return np.array([burst, *batch, *a, *c, *tiles, *chunk, int(nt)], np.int64)


def without_nt(meta) -> np.ndarray:
    """The same transpose with regular stores (definedness planes: small, read back soon)."""
    out = meta.copy()
    out[T_NT] = 0
    return out
