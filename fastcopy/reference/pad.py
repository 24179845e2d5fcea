"""Reference (test-oracle) DataCopyPad: docs/semantics.md §4.2-§4.6 and §4.8, with the fills of §4.3 / §11.1 /
§11.11 / §11.12.

Tensor byte arrays in, ``dst``/``dst_def`` modified in place; every destination write goes through
:class:`ByteWriter` in the loop order of docs/semantics.md (all loop-mode repetitions belong to the one call).

GM -> local, Normal (4.2), ``lp = leftPadding*es``, ``rp = rightPadding*es``, ``P = AU(lp + bl + rp, 32)``::

    s = S + i*(bl + srcStride);  d = D + i*(P + dstStride*32)
    [d, d+lp) LEFT | [d+lp, d+lp+bl) <- [s, s+bl) | [.., d+lp+bl+rp) RIGHT | [.., d+P) DUMMY

GM -> local, Compact (4.4): ``copy(D + i*bl, S + i*(bl + srcStride), bl)``; TAIL ``[D + n*bl, D + AU(n*bl, 32))``.

Local -> GM (4.5): ``copy(D + i*(bl + dstStride), S + i*(AU(bl, 32) + srcStride*32), bl)``; Compact reads
``S + i*bl``.

Loop mode (4.8): the whole call for l2, l1 with ``S += l1*loop1SrcStride + l2*loop2SrcStride`` and
``D += l1*loop1DstStride + l2*loop2DstStride`` (bytes).

Fill patterns are whole elements of ``T``: ``paddingValue``; PADREG (the pad register: defined when set with
this element width, undefined otherwise, 11.1/11.12); "first" = the burst's first source element with its
definedness (for ``es == 8`` its first 32-bit word in every 4-byte slot, 11.11); or undefined.
"""

from __future__ import annotations

import numpy as np

from ._writer import ByteWriter
from .nz import _copy, _read, nd2nz

BLK = 32


def _au(x, a):
    """AU(x, a) = ceil(x / a) * a."""
    return -(-x // a) * a


# A fill is None (undefined) or a (pattern bytes, pattern definedness) pair tiled over the region.
def _value_fill(pattern):
    """A defined fill repeating the bit pattern ``pattern`` (paddingValue or a set PADREG)."""
    return np.frombuffer(bytes(pattern), np.uint8), np.ones(len(pattern), bool)


def _padreg_fill(padreg, es):
    """PADREG as a fill: its pattern if it was set with element width ``es``, else undefined (None)."""
    if padreg is None or len(padreg) != es:
        return None
    return _value_fill(padreg)


def _first_fill(src, src_def, s, es):
    """The burst's first source element (value and definedness); es == 8: its first 32-bit word twice."""
    if es == 8:
        word, word_def = _read(src, src_def, s, 4)
        return np.tile(word, 2), np.tile(word_def, 2)
    return _read(src, src_def, s, es)


def _write_fill(writer, d, nbytes, fill):
    """Write ``nbytes`` (a whole number of pattern lengths) at ``d`` from ``fill`` (None = undefined)."""
    if nbytes == 0:
        return
    if fill is None:
        writer.write_undefined(d, nbytes)
        return
    pattern, pattern_def = fill
    reps, rest = divmod(nbytes, len(pattern))
    assert rest == 0, "fills cover whole elements"
    writer.write(d, np.tile(pattern, reps), np.tile(pattern_def, reps))


def _normal_fills(*, product, isPad, padded, paddingValue, padreg, es, first):
    """(LEFT/RIGHT fill, DUMMY fill) of Normal mode per the tables of semantics.md §4.3.

    A2/A3/310B: no padding -> DUMMY = first; padding -> both = paddingValue if isPad else PADREG.
    350: isPad -> paddingValue everywhere; else LEFT/RIGHT = PADREG, DUMMY = PADREG if set, else first when
    left = right = 0, else undefined.  ``first`` is a zero-argument callable (read only when needed).
    """
    if product != "350":
        if not padded:
            return None, first()  # no LEFT/RIGHT bytes exist
        fill = _value_fill(paddingValue) if isPad else _padreg_fill(padreg, es)
        return fill, fill
    if isPad:
        fill = _value_fill(paddingValue)
        return fill, fill
    side = _padreg_fill(padreg, es)
    if padreg is not None:
        return side, side  # set: PADREG (undefined if set with another element width, 11.12)
    return None, (None if padded else first())


def _compact_fill(*, isPad, paddingValue, padreg, es):
    """Compact TAIL fill (350 table of 4.3): paddingValue if isPad, else PADREG if set, else undefined."""
    return _value_fill(paddingValue) if isPad else _padreg_fill(padreg, es)


def _loop_offsets(loop):
    """(source, destination) byte shifts of the loop-mode repetitions, l2 outer, l1 inner (semantics.md §4.8)."""
    if loop is None:
        return [(0, 0)]
    return [(l1 * loop["loop1SrcStride"] + l2 * loop["loop2SrcStride"],
             l1 * loop["loop1DstStride"] + l2 * loop["loop2DstStride"])
            for l2 in range(loop["loop2Size"]) for l1 in range(loop["loop1Size"])]


def pad_gm_to_local(dst, dst_def, src, src_def, *, es, product, blockCount, blockLen, srcStride, dstStride, isPad,
                    leftPadding, rightPadding, paddingValue, mode="Normal", padreg=None, loop=None, poison=0xFF):
    """DataCopyPad GM -> local (semantics.md §4.2 Normal, §4.4 Compact, fills §4.3, loop mode §4.8).

    Normal burst i: LEFT ``[d, d+lp)``, data ``[d+lp, d+lp+bl) <- [s, s+bl)``, RIGHT ``[.., +rp)``, DUMMY up to
    ``d + P`` with ``s = S + i*(bl + srcStride)``, ``d = D + i*(P + dstStride*32)``, ``P = AU(lp+bl+rp, 32)``.
    Compact: ``copy(D + i*bl, S + i*(bl + srcStride), bl)``, TAIL ``[D + n*bl, D + AU(n*bl, 32))``.

    Returns the pad register after the call: ``paddingValue`` if ``isPad`` else ``padreg`` unchanged.
    """
    padreg_after = bytes(paddingValue) if isPad else padreg
    bl = blockLen
    if blockCount == 0 or bl == 0:
        return padreg_after  # no-op
    writer = ByteWriter(dst, dst_def, poison)
    for s0, d0 in _loop_offsets(loop):
        if mode == "Compact":
            for i in range(blockCount):
                _copy(writer, src, src_def, d0 + i * bl, s0 + i * (bl + srcStride), bl)
            tail = _au(blockCount * bl, BLK) - blockCount * bl
            _write_fill(writer, d0 + blockCount * bl, tail,
                        _compact_fill(isPad=isPad, paddingValue=paddingValue, padreg=padreg, es=es))
            continue
        lp, rp = leftPadding * es, rightPadding * es
        burst = _au(lp + bl + rp, BLK)
        for i in range(blockCount):
            s = s0 + i * (bl + srcStride)
            d = d0 + i * (burst + dstStride * BLK)
            side, dummy = _normal_fills(product=product, isPad=isPad, padded=bool(leftPadding or rightPadding),
                                        paddingValue=paddingValue, padreg=padreg, es=es,
                                        first=lambda s=s: _first_fill(src, src_def, s, es))
            _write_fill(writer, d, lp, side)
            _copy(writer, src, src_def, d + lp, s, bl)
            _write_fill(writer, d + lp + bl, rp, side)
            _write_fill(writer, d + lp + bl + rp, burst - lp - bl - rp, dummy)
    writer.finish()
    return padreg_after


def pad_local_to_gm(dst, dst_def, src, src_def, *, es, product, blockCount, blockLen, srcStride, dstStride,
                    mode="Normal", loop=None, poison=0xFF):
    """DataCopyPad local (UB) -> GM (semantics.md §4.5, loop mode §4.8).

    ``copy(D + i*(bl + dstStride), s, bl)`` with ``s = S + i*(AU(bl, 32) + srcStride*32)`` (Normal) or
    ``s = S + i*bl`` (Compact, UB srcStride ignored).  The UB dummy bytes never reach GM.
    """
    del es, product  # the mapping does not depend on them (blockLen is a multiple of es)
    bl = blockLen
    if blockCount == 0 or bl == 0:
        return  # no-op
    writer = ByteWriter(dst, dst_def, poison)
    for s0, d0 in _loop_offsets(loop):
        for i in range(blockCount):
            if mode == "Compact":
                s = s0 + i * bl
            else:
                s = s0 + i * (_au(bl, BLK) + srcStride * BLK)
            _copy(writer, src, src_def, d0 + i * (bl + dstStride), s, bl)
    writer.finish()


def pad_ub_to_tscm(dst, dst_def, src, src_def, *, es, product, blockCount, blockLen, srcStride, dstStride, ndNum,
                   nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride,
                   workspace_bytes, poison=0xFF):
    """DataCopyPad UB -> TSCM with ND2NZ (semantics.md §4.6), two stages through a GM workspace W::

        W = pad_local_to_gm(W, src, copyParams)      # W starts all undefined (poison)
        dst = nd2nz(src = W, nd2nzParams)            # GM -> L1 semantics of 5.2, definedness propagated

    Returns ``(ws, ws_def)``, the workspace after stage 1.
    """
    ws = np.full(workspace_bytes, poison, np.uint8)
    ws_def = np.zeros(workspace_bytes, np.bool_)
    pad_local_to_gm(ws, ws_def, src, src_def, es=es, product=product, blockCount=blockCount, blockLen=blockLen,
                    srcStride=srcStride, dstStride=dstStride, poison=poison)
    nd2nz(dst, dst_def, ws, ws_def, es=es, product=product, ndNum=ndNum, nValue=nValue, dValue=dValue,
          srcNdMatrixStride=srcNdMatrixStride, srcDValue=srcDValue, dstNzC0Stride=dstNzC0Stride,
          dstNzNStride=dstNzNStride, dstNzMatrixStride=dstNzMatrixStride, poison=poison)
    return ws, ws_def
