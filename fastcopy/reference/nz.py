"""Reference (test-oracle) ND2NZ and NZ2ND: docs/semantics.md §5.2, §5.6 and §6.1, written literally.

Both work on tensor byte arrays (``dst``/``dst_def`` modified in place, ``src``/``src_def`` read only) and
record every destination write through :class:`ByteWriter` in the loop order of docs/semantics.md.  Slow on purpose.

ND2NZ (5.2), with ``C0 = 32 // es`` and ``nblk = ceil(dValue / C0)``::

    element (m, r, c), c < nblk*C0, goes to destination byte
        m*dstNzMatrixStride*es + r*dstNzNStride*32 + (c // C0)*dstNzC0Stride*32 + (c % C0)*es
    from source element m*srcNdMatrixStride + r*srcDValue + c if c < dValue, else it is a zero pad.

NZ2ND (6.1), 16-element fractal columns for every dtype::

    dst element m*dstNdMatrixStride + r*dstDStride + c  <-  src element
        m*srcNdMatrixStride*256 + (c // 16)*srcNStride*16 + r*16 + c % 16      (r < nValue, c < dValue)
"""

from __future__ import annotations

import numpy as np

from ._writer import ByteWriter

BLK = 32  # bytes per DataBlock / C0 block
NZ2ND_FRACTAL = 16  # NZ2ND fractal width in elements, every dtype (semantics.md §6, §9 #20)
SMALL_C0 = 4  # elements per row with enableSmallC0 (semantics.md §5.6)


def _read(src, src_def, offset, nbytes):
    """Source bytes ``[offset, offset + nbytes)`` and their definedness; out of range raises IndexError."""
    if offset < 0 or offset + nbytes > src.size:
        raise IndexError(f"reference read of bytes [{offset}, {offset + nbytes}) outside [0, {src.size})")
    return src[offset:offset + nbytes], src_def[offset:offset + nbytes]


def _copy(writer, src, src_def, d, s, nbytes):
    """copy(d, s, n): destination bytes [d, d+n) receive source bytes [s, s+n) with their definedness."""
    values, defined = _read(src, src_def, s, nbytes)
    writer.write(d, values, defined)


def _zeros(writer, d, nbytes):
    writer.write(d, np.zeros(nbytes, np.uint8), True)


def dst_matrix_pitch_bytes(es, product, dstNzMatrixStride):
    """Byte distance between destination matrices of ND2NZ.

    ``dstNzMatrixStride*es`` in general; on 350 the field is converted to a 16-bit count of 32-byte units,
    ``min(floor(dstNzMatrixStride*es / 32), 65535) * 32`` (semantics.md §5.2 "350 differences").
    """
    if product == "350":
        return min(dstNzMatrixStride * es // BLK, 0xFFFF) * BLK
    return dstNzMatrixStride * es


def nd2nz(dst, dst_def, src, src_def, *, es, product, ndNum, nValue, dValue, srcNdMatrixStride, srcDValue,
          dstNzC0Stride, dstNzNStride, dstNzMatrixStride, small_c0=False, poison=0xFF):
    """ND2NZ, semantics.md §5.2 (``small_c0=True``: the enableSmallC0 layout of §5.6).

    5.2: for m, r, b < nblk, k < C0 (loop order), c = b*C0 + k::

        d = m*pitch + r*dstNzNStride*32 + b*dstNzC0Stride*32 + k*es
        c < dValue: copy(d, (m*srcNdMatrixStride + r*srcDValue + c)*es, es)   else: es zero bytes at d

    with ``pitch = dst_matrix_pitch_bytes(...)`` (floored to 32-byte units on 350).

    5.6: for m, r < AU(nValue, 4), k < 4: ``d = floor(dstNzMatrixStride*es/32)*32*m + r*4*es + k*es``; copy
    when ``r < nValue and k < dValue``, else zero.  ``dstNzC0Stride`` and ``dstNzNStride`` are not used.
    """
    if ndNum == 0 or nValue == 0 or dValue == 0:
        return  # no-op
    writer = ByteWriter(dst, dst_def, poison)

    def src_byte(m, r, c):
        return (m * srcNdMatrixStride + r * srcDValue + c) * es

    if small_c0:
        pitch = dst_matrix_pitch_bytes(es, "350", dstNzMatrixStride)  # 5.6 gives the floored form explicitly
        rows = -(-nValue // SMALL_C0) * SMALL_C0
        for m in range(ndNum):
            for r in range(rows):
                for k in range(SMALL_C0):
                    d = m * pitch + r * SMALL_C0 * es + k * es
                    if r < nValue and k < dValue:
                        _copy(writer, src, src_def, d, src_byte(m, r, k), es)
                    else:
                        _zeros(writer, d, es)
    else:
        c0 = BLK // es
        nblk = -(-dValue // c0)
        pitch = dst_matrix_pitch_bytes(es, product, dstNzMatrixStride)
        for m in range(ndNum):
            for r in range(nValue):
                for b in range(nblk):
                    for k in range(c0):
                        c = b * c0 + k
                        d = m * pitch + r * dstNzNStride * BLK + b * dstNzC0Stride * BLK + k * es
                        if c < dValue:
                            _copy(writer, src, src_def, d, src_byte(m, r, c), es)
                        else:
                            _zeros(writer, d, es)
    writer.finish()


def nz2nd(dst, dst_def, src, src_def, *, es, product, ndNum, nValue, dValue, srcNdMatrixStride, srcNStride,
          dstDStride, dstNdMatrixStride, poison=0xFF):
    """NZ2ND, semantics.md §6.1.  For m, f < dValue // 16, r (loop order)::

        s = (m*srcNdMatrixStride*256 + f*srcNStride*16 + r*16) * es
        d = (m*dstNdMatrixStride + r*dstDStride + f*16) * es
        copy(d, s, 16*es)

    ``product`` has no effect (same mapping on every product).
    """
    del product  # the mapping is identical on A2/A3/310P/350
    if ndNum == 0:
        return  # no-op
    writer = ByteWriter(dst, dst_def, poison)
    frac = NZ2ND_FRACTAL
    for m in range(ndNum):
        for f in range(dValue // frac):
            for r in range(nValue):
                s = (m * srcNdMatrixStride * frac * frac + f * srcNStride * frac + r * frac) * es
                d = (m * dstNdMatrixStride + r * dstDStride + f * frac) * es
                _copy(writer, src, src_def, d, s, frac * es)
    writer.finish()
