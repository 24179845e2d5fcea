"""Strided burst copy / fill over flat unsigned views (the DMA program of a plan step).

A step is: for each outer offset ``o`` in ``[o_lo, o_hi)``, four nested loops ``(count, src_stride,
dst_stride)`` (outer -> inner; the outermost restricted to ``[i_lo, i_hi)`` so a step can be split across
threads; unused levels have count 1), each iteration moving one burst of ``burst`` units::

    d = dbase + doffs[o] + i0*dst0 + i1*dst1 + i2*dst2 + i3*dst3          # units of the view
    s = sbase + soffs[o] + i0*src0 + ...
    dst[d:d+burst] = src[s:s+burst]

Bursts of at least ``MEMCPY_BYTES`` go through ``llvm.memcpy`` / ``llvm.memset``; 1, 2 and 4-unit bursts (a
32-byte block in uint64 units) are unrolled. A large gather (a call writing at least ``GATHER_NT_BYTES``
in bursts of whole 32-byte pieces shorter than ``MEMCPY_BYTES``, its innermost loop writing the destination
contiguously: the img2col of a feature map) stores with non-temporal 32-byte stores where a burst starts on a
32-byte boundary (regular stores elsewhere) and ends with a store fence: its output, larger than a core's L2,
is then written once instead of read and written back (measured on the 9 MiB img2col gather: see
``GATHER_NT_BYTES``). Compiled lazily per view width (uint8/16/32/64), cached on disk,
GIL released. The definedness plane is moved by a second call on the plane views.

Everything static about a step travels in one int64 array ``meta``; its layout is defined (and built) only by
:mod:`fastcopy.dma.abi`.
"""

import numpy as np
from numba import njit

from .intrinsics import address, memcpy_units, memset_units, unowned
from .layout import copy32_nt, store_fence

MEMCPY_BYTES = 512
#: a copy call (one thread's chunk) writing at least this many bytes as a gather streams (see the module docstring;
#: a compile-time constant of the kernel, so here and not in fastcopy.config: kernels import nothing above them)
GATHER_NT_BYTES = 1 << 20


@njit(inline="always", boundscheck=False)
def _copy_burst(dst, d, src, s, burst):
    if burst == 4:
        dst[d] = src[s]
        dst[d + 1] = src[s + 1]
        dst[d + 2] = src[s + 2]
        dst[d + 3] = src[s + 3]
    elif burst == 2:
        dst[d] = src[s]
        dst[d + 1] = src[s + 1]
    elif burst == 1:
        dst[d] = src[s]
    elif burst * dst.itemsize >= MEMCPY_BYTES:
        memcpy_units(dst, d, src, s, burst)
    else:  # slice views let LLVM vectorise the loop (indexing off d + k does not)
        a = dst[d:d + burst]
        b = src[s:s + burst]
        for k in range(burst):
            a[k] = b[k]



@njit(inline="always", boundscheck=False)
def _copy_burst_nt(dst, d, src, s, burst, u32):
    """A burst of whole 32-byte pieces (``u32`` units each), non-temporal if it starts on a 32-byte boundary."""
    if address(dst, d) & 31:  # (no array slices here: their reference counting is an atomic, which flushes the
        memcpy_units(dst, d, src, s, burst)  # write-combining buffers of the streaming stores)
        return
    for k in range(0, burst, u32):
        copy32_nt(dst, d + k, src, s + k)


@njit(inline="always")
def _streams(meta, w):
    """Whether a copy is a large gather that streams (see the module docstring)."""
    burst, c3, d3 = meta[0], meta[10], meta[12]
    nbytes = burst * w * max(meta[14] - meta[13], 0) * max(meta[16] - meta[15], 0) * meta[4] * meta[7] * c3
    return nbytes >= GATHER_NT_BYTES and (burst * w) % 32 == 0 and burst * w < MEMCPY_BYTES and c3 > 1 and d3 == burst


@njit(cache=True, nogil=True, boundscheck=False)
def copy_strided(dst, dbase, src, sbase, meta):
    u32 = 32 // dst.itemsize if _streams(meta, dst.itemsize) else 0  # (0: regular stores)
    burst = meta[0]
    c1, c2, c3 = meta[4], meta[7], meta[10]
    s0, s1, s2, s3 = meta[2], meta[5], meta[8], meta[11]
    d0, d1, d2, d3 = meta[3], meta[6], meta[9], meta[12]
    o_lo, o_hi, i_lo, i_hi, n_off = meta[13], meta[14], meta[15], meta[16], meta[17]
    for o in range(o_lo, o_hi):
        do0 = dbase + meta[18 + o]
        so0 = sbase + meta[18 + n_off + o]
        for i0 in range(i_lo, i_hi):
            so1 = so0 + i0 * s0
            do1 = do0 + i0 * d0
            for i1 in range(c1):
                so2 = so1 + i1 * s1
                do2 = do1 + i1 * d1
                for i2 in range(c2):
                    so3 = so2 + i2 * s2
                    do3 = do2 + i2 * d2
                    for i3 in range(c3):
                        if u32:
                            _copy_burst_nt(dst, do3 + i3 * d3, src, so3 + i3 * s3, burst, u32)
                        else:
                            _copy_burst(dst, do3 + i3 * d3, src, so3 + i3 * s3, burst)
    if u32:
        store_fence()


@njit(inline="always", boundscheck=False)
def _fill_burst(dst, d, v, burst, big, byte):
    if burst == 4:
        dst[d] = v
        dst[d + 1] = v
        dst[d + 2] = v
        dst[d + 3] = v
    elif burst == 1:
        dst[d] = v
    elif big:
        memset_units(dst, d, burst, byte)
    else:
        a = dst[d:d + burst]
        for k in range(burst):
            a[k] = v


@njit(cache=True, nogil=True, boundscheck=False)
def fill_strided(dst, dbase, meta, value):
    """Fill each burst with ``value`` (one unit; a value whose bytes are all equal uses memset)."""
    burst = meta[0]
    c1, c2, c3 = meta[4], meta[7], meta[10]
    d0, d1, d2, d3 = meta[3], meta[6], meta[9], meta[12]
    o_lo, o_hi, i_lo, i_hi = meta[13], meta[14], meta[15], meta[16]
    v = dst.dtype.type(value)
    u = np.uint64(value)  # all in uint64: mixed uint64/int64 arithmetic would compare as (rounded) doubles
    b = u & np.uint64(0xFF)
    if dst.itemsize == 1:
        uniform = True
    elif dst.itemsize == 2:
        uniform = u == b * np.uint64(0x0101)
    elif dst.itemsize == 4:
        uniform = u == b * np.uint64(0x01010101)
    else:
        uniform = u == b * np.uint64(0x0101010101010101)
    big = uniform and burst * dst.itemsize >= MEMCPY_BYTES
    byte = np.uint8(b)
    for o in range(o_lo, o_hi):
        do0 = dbase + meta[18 + o]
        for i0 in range(i_lo, i_hi):
            do1 = do0 + i0 * d0
            for i1 in range(c1):
                do2 = do1 + i1 * d1
                for i2 in range(c2):
                    do3 = do2 + i2 * d2
                    for i3 in range(c3):
                        _fill_burst(dst, do3 + i3 * d3, v, burst, big, byte)


@njit(cache=True, nogil=True, boundscheck=False)
def run_steps(dst, src, table):
    """A small plan's copies and fills in one call (the prepared repeat of a small img2col load: one dispatch
    instead of one per step, and few arguments: each costs in the dispatch): row ``k`` of ``table`` is
    ``[kind, value, dbase, sbase, meta...]``, a step's ``meta`` (padded) run as a copy (``kind`` 0) or as a fill of
    ``value`` (``kind`` 1; the uint64 fill value's bits); every step on views of one width. The steps take views
    holding no reference (:func:`unowned`): a step's row of ``table`` and a call's arguments otherwise cost eight
    atomic reference counts per step (arrays from Python have an owner)."""
    dst, src, table = unowned(dst), unowned(src), unowned(table)
    for k in range(table.shape[0]):
        meta = table[k, 4:]
        if table[k, 0] == 0:
            copy_strided(dst, table[k, 2], src, table[k, 3], meta)
        else:
            fill_strided(dst, table[k, 2], meta, np.uint64(table[k, 1]))


@njit(cache=True, nogil=True, boundscheck=False)
def all_set(src, sbase, meta, value):
    """True if every unit the step reads (all chunks) equals ``value`` (used on definedness planes)."""
    burst = meta[0]
    c0, c1, c2, c3 = meta[1], meta[4], meta[7], meta[10]
    s0, s1, s2, s3 = meta[2], meta[5], meta[8], meta[11]
    n_off = meta[17]
    v = src.dtype.type(value)
    for o in range(n_off):
        so0 = sbase + meta[18 + n_off + o]
        for i0 in range(c0):
            for i1 in range(c1):
                for i2 in range(c2):
                    for i3 in range(c3):
                        s = so0 + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3
                        acc = src.dtype.type(0)
                        a = src[s:s + burst]  # a view: lets LLVM vectorise the reduction
                        for k in range(burst):
                            acc |= a[k] ^ v
                        if acc != 0:
                            return False
    return True
