"""The strided kernels in numpy: the same ``meta`` (see :mod:`.abi`), the same results as the numba kernels.

Used for the first and small calls of a process, so that ``import fastcopy`` and a short script never load
numba (see :mod:`.kernels`). Writes of one kernel call never overlap (the lowering guarantees it), so one
fancy-indexed assignment is the program-order result.
"""

from __future__ import annotations

import numpy as np

from . import abi


def _index(base: int, meta, col: int) -> np.ndarray | slice:
    """Unit indices one call touches (``col`` 1: source side, 2: destination side), in program order; a slice
    when they are one contiguous run."""
    burst = int(meta[abi.BURST])
    loops = abi.loops_of(meta)
    o_lo, o_hi, i_lo, i_hi = abi.chunk_of(meta)
    doffs, soffs = abi.offsets_of(meta)
    offs = (soffs if col == 1 else doffs)[o_lo:o_hi]
    counts = [i_hi - i_lo] + [lp[0] for lp in loops[1:]]
    if offs.size == 1 and all(c == 1 for c in counts):
        start = base + int(offs[0]) + i_lo * loops[0][col]
        return slice(start, start + burst)
    g = base + offs.astype(np.int64) + i_lo * loops[0][col]
    for k, lp in enumerate(loops):
        g = (g[:, None] + np.arange(counts[k], dtype=np.int64)[None, :] * lp[col]).reshape(-1)
    return (g[:, None] + np.arange(burst, dtype=np.int64)[None, :]).reshape(-1)


#: calls with at most this many offsets run as one strided view per offset (no index arrays)
VIEW_OFFSETS = 4


def _views(arr, base: int, m: list, col: int):
    """The units one call touches as strided views of ``arr``, one per offset (``m``: the meta as a list), or
    None when the call has more than VIEW_OFFSETS offsets. ``np.ndarray(buffer=...)`` checks that every view
    lies inside ``arr``."""
    o_lo, o_hi, i_lo, i_hi = m[abi.RANGE:abi.RANGE + 4]
    if o_hi - o_lo > VIEW_OFFSETS:
        return None
    size = arr.itemsize
    at = abi.LOOPS + col  # (this side's stride of the outermost loop)
    shape, strides = [], []
    # a loop of one pass is a dimension of one element: left out (the same units, in the same order); the
    # MAX_LOOPS levels and the burst written out (no loop over them: this is on the path of every small call)
    c = i_hi - i_lo
    if c != 1:
        shape.append(c)
        strides.append(m[at] * size)
    c = m[4]
    if c != 1:
        shape.append(c)
        strides.append(m[4 + col] * size)
    c = m[7]
    if c != 1:
        shape.append(c)
        strides.append(m[7 + col] * size)
    c = m[10]
    if c != 1:
        shape.append(c)
        strides.append(m[10 + col] * size)
    c = m[abi.BURST]
    if c != 1:
        shape.append(c)
        strides.append(size)
    if 0 in shape:
        return []
    first = abi.OFFS + (m[abi.NOFF] if col == 1 else 0) + o_lo  # (this side's offsets, from o_lo)
    start = base + i_lo * m[at]
    dt = arr.dtype
    return [np.ndarray(shape, dt, arr, (start + off) * size, strides) for off in m[first:first + o_hi - o_lo]]


assert abi.MAX_LOOPS == 4 and abi.LOOPS == 1 and abi.BURST == 0  # (the levels _views writes out)


def byte_views(m: list, w: int, dres: int, sres: int):
    """The copy of one ``copy_strided`` call (``m``: its meta as a list, in units of ``w`` bytes) as byte views
    relative to the two tensors' first bytes, for :func:`copy_bytes`: ``(shape, dst strides, src strides,
    ((dst byte, src byte), ...))`` (``dst strides`` None: one contiguous burst of ``shape`` bytes), or None when
    the call has more than VIEW_OFFSETS offsets. ``dres`` / ``sres``: the tensors' host residues (their
    signatures' ``host_mod``): a unit offset ``u`` of the lowering is the byte ``u * w - res % w`` of its tensor
    (the view of width ``w`` starts where the host address is a multiple of ``w``). The units and their order are
    :func:`_views`' (one view per offset; loops of one pass left out; the burst as its last dimension, in
    bytes); the plan computes it once, so a call on new tensors builds no typed view of its memories."""
    o_lo, o_hi, i_lo, i_hi = m[abi.RANGE:abi.RANGE + 4]
    if o_hi - o_lo > VIEW_OFFSETS:
        return None
    shape, dstr, sstr = [], [], []
    c = i_hi - i_lo
    if c != 1:
        shape.append(c)
        dstr.append(m[3] * w)
        sstr.append(m[2] * w)
    for k in (4, 7, 10):
        c = m[k]
        if c != 1:
            shape.append(c)
            dstr.append(m[k + 2] * w)
            sstr.append(m[k + 1] * w)
    burst = m[abi.BURST] * w
    if 0 in shape or burst <= 0:
        return (0, None, None, ())
    n = m[abi.NOFF]
    d0, s0 = i_lo * m[3] * w - dres % w, i_lo * m[2] * w - sres % w
    at = abi.OFFS + o_lo
    offs = tuple([(d0 + m[at + k] * w, s0 + m[at + n + k] * w) for k in range(o_hi - o_lo)])
    if not shape:
        return (burst, None, None, offs)
    shape.append(burst)
    dstr.append(1)
    sstr.append(1)
    return (tuple(shape), tuple(dstr), tuple(sstr), offs)


_U8 = np.dtype(np.uint8)


def copy_bytes(dst, dbase: int, src, sbase: int, views) -> None:
    """A copy by its :func:`byte_views` between two byte arrays that share no memory, the tensors' first bytes
    at ``dbase`` and ``sbase`` (the caller has checked the spans against both memories; ``np.ndarray(buffer=)``
    checks each strided view again)."""
    shape, dstr, sstr, offs = views
    if dstr is None:  # one contiguous burst per offset: slices
        for d, s in offs:
            d += dbase
            s += sbase
            dst[d:d + shape] = src[s:s + shape]
        return
    for d, s in offs:
        np.ndarray(shape, _U8, dst, dbase + d, dstr)[...] = np.ndarray(shape, _U8, src, sbase + s, sstr)


def copy_strided(dst, dbase, src, sbase, meta, m=None) -> None:
    """(``m``: ``meta.tolist()``, when the caller has it already)"""
    if m is None:
        m = meta.tolist()
    dv = _views(dst, dbase, m, 2)
    if dv is None:
        dst[_index(dbase, meta, 2)] = src[_index(sbase, meta, 1)]
        return
    sv = _views(src, sbase, m, 1)
    # program order: every read before any write. numpy's assignment (d[...] = s, as np.copyto) reads a whole
    # overlapping source first only where it copies it first: views of two or more dimensions, or of strides of
    # opposite signs. Two 1-D views of strides of one sign are walked forward or backward, the read-first result
    # only when the strides are equal (a[1:5] = a[0:8:2] reads a[4] after writing it): copied here
    if (len(dv) > 1 or (dv and dv[0].ndim == 1 and dv[0].strides != sv[0].strides)) and np.may_share_memory(dst,
                                                                                                              src):
        sv = [v.copy() for v in sv]
    for d, s in zip(dv, sv):
        d[...] = s  # (np.copyto's assignment, without its call overhead)


def fill_strided(dst, dbase, meta, value) -> None:
    dv = _views(dst, dbase, meta.tolist(), 2)
    if dv is None:
        dst[_index(dbase, meta, 2)] = dst.dtype.type(value)
        return
    for d in dv:
        d[...] = dst.dtype.type(value)


def run_steps(dst, src, table) -> None:
    for row in table.tolist():
        meta = np.array(row[4:], np.int64)
        if row[0] == 0:
            copy_strided(dst, row[2], src, row[3], meta)
        else:
            fill_strided(dst, row[2], meta, np.int64(row[1]).astype(np.uint64))


def all_set(src, sbase, meta, value) -> bool:
    """Every unit the step reads (all chunks) equals ``value``."""
    whole = meta.copy()
    n_off = int(meta[abi.NOFF])
    whole[abi.RANGE:abi.RANGE + 4] = (0, n_off, 0, meta[abi.LOOPS])
    sv = _views(src, sbase, whole.tolist(), 1)
    v = src.dtype.type(value)
    if sv is None:
        return bool(np.all(src[_index(sbase, whole, 1)] == v))
    return all(bool(np.all(s == v)) for s in sv)


# ------------------------------------------------------------------ the layout kernels (byte views, see .abi)
def _blocks(view, base: int, meta, col: int) -> np.ndarray:
    """The (batch, a, c, burst) byte blocks one ``transpose_blocks`` / ``copy_rows`` call touches, as a view
    (strides are never negative there: the lowering only matches such steps)."""
    burst = int(meta[0])
    counts = (int(meta[13] - meta[12]), int(meta[15] - meta[14]), int(meta[7]))
    strides = tuple(int(meta[k + col]) for k in (1, 4, 7))  # col 1: source strides, 2: destination strides
    start = base + int(meta[12]) * strides[0] + int(meta[14]) * strides[1]
    if 0 in counts:
        return view[start:start]
    return np.lib.stride_tricks.as_strided(view[start:], counts + (burst,), strides + (1,), writeable=col == 2)


def transpose_blocks(dst, dbase, src, sbase, meta) -> None:
    np.copyto(_blocks(dst, dbase, meta, 2), _blocks(src, sbase, meta, 1))


copy_rows = transpose_blocks  # (its meta has nc = 1)
transpose_elements = transpose_blocks  # (its blocks are single elements)


def copy_dense(dst, d, src, s, n, nt) -> None:
    dst[d:d + n] = src[s:s + n]


def fill_dense(dst, d, n, pattern) -> None:
    dst[d:d + n] = pattern[0]


# ---------------------------------------------------------- rows with a tail (copy_tailed, units; see .abi)
def _tailed_parts(arr, base: int, m: list, col: int) -> list:
    """The (whole blocks, partial block, tail) of one ``copy_tailed`` call on one side (``col`` 1: source, its tail
    the source unit a tail repeats, if any; 2: destination) as strided views of ``arr``, empty parts None."""
    c0, c1 = m[abi.R_C0], m[abi.R_C1]
    outer = (m[abi.R_C0 + col], m[abi.R_C1 + col])
    nb, blk, rem, tail = m[abi.R_NB], m[abi.R_BLK], m[abi.R_REM], m[abi.R_TAIL]
    first = m[abi.R_FS] if col == 1 else m[abi.R_FD]
    bstride = m[abi.R_BS] if col == 1 else m[abi.R_BD]
    part = m[abi.R_PS] if col == 1 else m[abi.R_PD]
    size = arr.itemsize

    def view(start, shape, strides):
        if c0 <= 0 or c1 <= 0 or 0 in shape:
            return None
        return np.ndarray((c0, c1) + shape, arr.dtype, arr, (base + start) * size,
                          tuple(x * size for x in outer + strides))

    if col == 2:
        return [view(first, (nb, blk), (bstride, 1)), view(part, (rem,), (1,)), view(m[abi.R_TD], (tail,), (1,))]
    return [view(first, (nb, blk), (bstride, 1)), view(part, (rem,), (1,)),
            view(m[abi.R_TS], (1,), (1,)) if m[abi.R_TAIL_SRC] and tail > 0 else None]


def copy_tailed(dst, dbase, src, sbase, meta, value) -> None:
    m = meta.tolist()
    v = dst.dtype.type(value)
    dparts = _tailed_parts(dst, dbase, m, 2)
    if m[abi.R_FILL_ALL]:
        for d in dparts:
            if d is not None:
                d[...] = v
        return
    sparts = _tailed_parts(src, sbase, m, 1)
    for d, s in zip(dparts[:2], sparts[:2]):
        if d is not None:
            np.copyto(d, s)
    if dparts[2] is not None:
        dparts[2][...] = v if sparts[2] is None else sparts[2]  # (the source unit, repeated: broadcast)


def tailed_all_set(src, sbase, meta, value) -> bool:
    """Every unit a ``copy_tailed`` call reads equals ``value`` (a source plane: are the bytes it reads defined?)."""
    v = src.dtype.type(value)
    return all(bool(np.all(s == v)) for s in _tailed_parts(src, sbase, meta.tolist(), 1) if s is not None)
