"""Rows of whole blocks, a partial block and its fill tail, in one kernel call (a new ND2NZ call with a width that
is not a multiple of C0: what its three plan steps write, one dispatch instead of three).

For every outer index ``(i0, i1)`` (two loops ``(count, src stride, dst stride)``; unused ones have count 1)::

    s = sbase + i0*s0 + i1*s1;  d = dbase + i0*d0 + i1*d1
    dst[d+fd+b*bd : +blk] = src[s+fs+b*bs : +blk]   for b < nb    (the whole blocks)
    dst[d+pd : +rem]      = src[s+ps : +rem]                      (the partial block)
    dst[d+td : +tail]     = value, or src[s+ts] (meta[TAIL_SRC])  (its tail)

``meta[FILL_ALL] = 1``: every unit the call would write is set to ``value`` instead (the definedness plane of a
plan whose writes leave gaps). Units of the view width throughout; the layout of ``meta`` is defined (and built)
only by :mod:`fastcopy.dma.abi` (``pack_tailed``). The writes of one call never overlap and never touch its
source (the lowering guarantees both), so the order above is the program order's result. The definedness plane
of a copy from a partly undefined source is moved by a second call on the plane views, with ``value`` = 1.
"""

from numba import njit

from .intrinsics import memcpy_units


@njit(inline="always", boundscheck=False)
def _set(dst, d, v, n):
    a = dst[d:d + n]  # (a view: LLVM vectorises the loop)
    for k in range(n):
        a[k] = v


@njit(cache=True, nogil=True, boundscheck=False)
def copy_tailed(dst, dbase, src, sbase, meta, value):
    c0, s0, d0, c1, s1, d1 = meta[0], meta[1], meta[2], meta[3], meta[4], meta[5]
    nb, blk, bs, bd, fs, fd = meta[6], meta[7], meta[8], meta[9], meta[10], meta[11]
    rem, ps, pd, tail, td, ts, tail_src = meta[12], meta[13], meta[14], meta[15], meta[16], meta[18], meta[19]
    v = dst.dtype.type(value)
    if meta[17]:  # fill_all (a separate loop nest: a branch inside the copy loops measured 5-10x slower copies)
        for i0 in range(c0):
            for i1 in range(c1):
                do = dbase + i0 * d0 + i1 * d1
                for b in range(nb):
                    _set(dst, do + fd + b * bd, v, blk)
                _set(dst, do + pd, v, rem)
                _set(dst, do + td, v, tail)
        return
    for i0 in range(c0):
        for i1 in range(c1):
            so = sbase + i0 * s0 + i1 * s1
            do = dbase + i0 * d0 + i1 * d1
            for b in range(nb):  # (llvm.memcpy of every burst: measured 1.3-13x faster than the slice-view loops
                memcpy_units(dst, do + fd + b * bd, src, so + fs + b * bs, blk)  # of strided.py here)
            memcpy_units(dst, do + pd, src, so + ps, rem)
            tv = src[so + ts] if tail_src else v
            for k in range(tail):
                dst[do + td + k] = tv
