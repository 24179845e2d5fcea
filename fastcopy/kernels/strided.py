"""Strided burst copy / fill over flat unsigned views (the DMA program of a plan step).

A step is: for each outer offset pair ``o``, four nested loops ``(count, src_stride, dst_stride)`` (outer ->
inner; unused levels have count 1), each iteration moving one burst of ``burst`` units::

    d = dbase + doffs[o] + i0*dst0 + i1*dst1 + i2*dst2 + i3*dst3          # units of the view
    s = sbase + soffs[o] + i0*src0 + ...
    dst[d:d+burst] = src[s:s+burst]

Compiled lazily per view width (uint8/16/32/64), cached on disk, GIL released so large steps can be split
across threads.
"""

from numba import njit


@njit(cache=True, nogil=True, boundscheck=False)
def copy_strided(dst, dbase, src, sbase, doffs, soffs, burst, loops):
    c0, s0, d0 = loops[0, 0], loops[0, 1], loops[0, 2]
    c1, s1, d1 = loops[1, 0], loops[1, 1], loops[1, 2]
    c2, s2, d2 = loops[2, 0], loops[2, 1], loops[2, 2]
    c3, s3, d3 = loops[3, 0], loops[3, 1], loops[3, 2]
    for o in range(doffs.shape[0]):
        so0 = sbase + soffs[o]
        do0 = dbase + doffs[o]
        for i0 in range(c0):
            so1 = so0 + i0 * s0
            do1 = do0 + i0 * d0
            for i1 in range(c1):
                so2 = so1 + i1 * s1
                do2 = do1 + i1 * d1
                for i2 in range(c2):
                    so3 = so2 + i2 * s2
                    do3 = do2 + i2 * d2
                    for i3 in range(c3):
                        s = so3 + i3 * s3
                        d = do3 + i3 * d3
                        for k in range(burst):
                            dst[d + k] = src[s + k]


@njit(cache=True, nogil=True, boundscheck=False)
def fill_strided(dst, dbase, doffs, burst, loops, value):
    c0, d0 = loops[0, 0], loops[0, 2]
    c1, d1 = loops[1, 0], loops[1, 2]
    c2, d2 = loops[2, 0], loops[2, 2]
    c3, d3 = loops[3, 0], loops[3, 2]
    v = dst.dtype.type(value)
    for o in range(doffs.shape[0]):
        do0 = dbase + doffs[o]
        for i0 in range(c0):
            do1 = do0 + i0 * d0
            for i1 in range(c1):
                do2 = do1 + i1 * d1
                for i2 in range(c2):
                    do3 = do2 + i2 * d2
                    for i3 in range(c3):
                        d = do3 + i3 * d3
                        for k in range(burst):
                            dst[d + k] = v


@njit(cache=True, nogil=True, boundscheck=False)
def all_set(src, sbase, soffs, burst, loops, value):
    """True if every unit the step reads equals ``value`` (used on definedness planes)."""
    c0, s0 = loops[0, 0], loops[0, 1]
    c1, s1 = loops[1, 0], loops[1, 1]
    c2, s2 = loops[2, 0], loops[2, 1]
    c3, s3 = loops[3, 0], loops[3, 1]
    v = src.dtype.type(value)
    for o in range(soffs.shape[0]):
        so0 = sbase + soffs[o]
        for i0 in range(c0):
            for i1 in range(c1):
                for i2 in range(c2):
                    for i3 in range(c3):
                        s = so0 + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3
                        for k in range(burst):
                            if src[s + k] != v:
                                return False
    return True
