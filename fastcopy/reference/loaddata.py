"""Reference (test-oracle) LoadData 2D, LoadData 2D V2 and LoadDataWithTranspose, written literally from the
mappings in docs/cube-in.md, one element (or one fractal) at a time. Slow on purpose; never validates.

4-bit types move like 1-byte ones (``es=1``) where no byte is split; the transposing forms have ``*_b4``
variants written in nibble addresses (nibble ``2b`` = low half of byte ``b``, 1024 nibbles per fractal).

Every function works on tensor byte arrays (``dst``/``dst_def`` modified in place, ``src``/``src_def`` read) and
takes the *effective* behaviour flags the product implies (``decrement``, ``honour_gap``, ``transpose``), so the
product rules stay visible at the call site of the tests.
"""

from __future__ import annotations

from ._writer import ByteWriter, NibbleWriter, nibble

F = 512  # bytes of one fractal


def _copy(writer, src, src_def, d, s, n):
    if s < 0 or s + n > src.size:
        raise IndexError(f"reference read of bytes [{s}, {s + n}) outside [0, {src.size})")
    writer.write(d, src[s:s + n], src_def[s:s + n])


def load2d(dst, dst_def, src, src_def, *, es, startIndex, repeatTimes, srcStride, dstGap, transpose=False,
           decrement=False, honour_gap=True, poison=0xFF):
    """LoadData 2D::

        for i in range(repeatTimes):
            sf = startIndex + sgn*i*srcStride ; df = i*(dstGap + 1)   (dstGap not honoured: df = i)
            copy the 512-byte fractal sf to df, or (transpose, 2-byte elements) dst[c][r] = src[r][c]
    """
    writer = ByteWriter(dst, dst_def, poison)
    sgn = -1 if decrement else 1
    for i in range(repeatTimes):
        sf = startIndex + sgn * i * srcStride
        df = i * (dstGap + 1) if honour_gap else i
        if not transpose:
            _copy(writer, src, src_def, df * F, sf * F, F)
            continue
        for r in range(16):
            for c in range(16):
                _copy(writer, src, src_def, df * F + (c * 16 + r) * 2, sf * F + (r * 16 + c) * 2, 2)
    writer.finish()


def load2d_v2(dst, dst_def, src, src_def, *, es, mStartPosition, kStartPosition, mStep, kStep, srcStride,
              dstStride, transpose=False, poison=0xFF):
    """LoadData 2D V2::

        for kk < kStep, mm < mStep: sf = (kStartPosition + kk)*srcStride + mStartPosition + mm
            no transpose: fractal sf -> fractal kk*dstStride + mm
            transpose:    element (r, c) of fractal sf is element (i, j) = (mm*16 + r, kk*C0 + c) of the region Y;
                          it goes to ((i // C0)*dstStride + j // 16)*512 + (j % 16)*32 + (i % C0)*es
    """
    writer = ByteWriter(dst, dst_def, poison)
    c0 = 32 // es
    for kk in range(kStep):
        for mm in range(mStep):
            sf = (kStartPosition + kk) * srcStride + (mStartPosition + mm)
            if not transpose:
                _copy(writer, src, src_def, (kk * dstStride + mm) * F, sf * F, F)
                continue
            for r in range(16):
                for c in range(c0):
                    i, j = mm * 16 + r, kk * c0 + c
                    d = ((i // c0) * dstStride + j // 16) * F + (j % 16) * 32 + (i % c0) * es
                    _copy(writer, src, src_def, d, sf * F + r * 32 + c * es, es)
    writer.finish()


def load2d_transpose(dst, dst_def, src, src_def, *, es, startIndex, repeatTimes, srcStride, dstGap, dstFracGap,
                     srcFracGap=None, poison=0xFF):
    """LoadDataWithTranspose. ``n`` fractals per square (b8 2 stacked, b16 1, b32 2 side by side). Source
    fractal ``f`` of square ``i``: V1 (``srcFracGap is None``) ``(startIndex + i*srcStride)*n + f``; V2
    ``startIndex + i*srcStride + f*(srcFracGap + 1)``. Output fractal ``j`` of square ``i`` at
    ``i*(dstGap + 1) + j*(dstFracGap + 1)``; its element ``G_j[r][c]`` is::

        b8:  Y[c][16j + r]   (Y = the two fractals stacked: row 16f + x of Y is row x of fractal f)
        b16: Y[c][r]
        b32: Y[8j + c][r]    (Y = the two fractals side by side: column 8f + y of Y is column y of fractal f)
    """
    writer = ByteWriter(dst, dst_def, poison)
    n = {1: 2, 2: 1, 4: 2}[es]
    c0 = 32 // es

    def frac(i, f):
        if srcFracGap is None:
            return (startIndex + i * srcStride) * n + f
        return startIndex + i * srcStride + f * (srcFracGap + 1)

    def y_byte(i, row, col):
        """Byte of element Y[row][col] of square i."""
        if es == 1:
            return frac(i, row // 16) * F + (row % 16) * 32 + col
        if es == 2:
            return frac(i, 0) * F + row * 32 + col * 2
        return frac(i, col // 8) * F + row * 32 + (col % 8) * 4

    for i in range(repeatTimes):
        for j in range(n):
            df = i * (dstGap + 1) + j * (dstFracGap + 1)
            for r in range(16):
                for c in range(c0):
                    if es == 1:
                        s = y_byte(i, c, 16 * j + r)
                    elif es == 2:
                        s = y_byte(i, c, r)
                    else:
                        s = y_byte(i, 8 * j + c, r)
                    _copy(writer, src, src_def, df * F + r * 32 + c * es, s, es)
    writer.finish()


FN = 2 * F  # nibbles of one fractal


def load2d_v2_b4(dst, dst_def, src, src_def, *, mStartPosition, kStartPosition, mStep, kStep, srcStride,
                 dstStride, poison=0xFF):
    """LoadData 2D V2 with ``ifTranspose`` for 4-bit values (C0 = 64), in nibbles::

        for kk < kStep, mm < mStep: sf = (kStartPosition + kk)*srcStride + mStartPosition + mm
            value (r, c) of fractal sf (nibble sf*1024 + r*64 + c) is value (i, j) = (mm*16 + r, kk*64 + c) of Y;
            it goes to nibble ((i // 64)*dstStride + j // 16)*1024 + (j % 16)*64 + i % 64
    """
    writer = NibbleWriter(dst, dst_def, poison)
    for kk in range(kStep):
        for mm in range(mStep):
            sf = (kStartPosition + kk) * srcStride + (mStartPosition + mm)
            for r in range(16):
                for c in range(64):
                    i, j = mm * 16 + r, kk * 64 + c
                    d = ((i // 64) * dstStride + j // 16) * FN + (j % 16) * 64 + i % 64
                    writer.write(d, *nibble(src, src_def, sf * FN + r * 64 + c))
    writer.finish()


def load2d_transpose_b4(dst, dst_def, src, src_def, *, startIndex, repeatTimes, srcStride, dstGap, dstFracGap,
                        poison=0xFF):
    """LoadDataWithTranspose (V1 struct) for 4-bit values: a square is 4 fractals stacked (``Y``, 64 x 64 values:
    row 16f + x of Y is row x of fractal f), square ``i`` starts at fractal ``(startIndex + i*srcStride)*4``.
    Output fractal ``j`` of square ``i`` (at ``i*(dstGap + 1) + j*(dstFracGap + 1)``) holds
    ``G_j[r][c] = Y[c][16j + r]``, in nibbles::

        dst nibble df*1024 + r*64 + c  <-  src nibble q + (c // 16)*1024 + (c % 16)*64 + 16j + r
    """
    writer = NibbleWriter(dst, dst_def, poison)
    for i in range(repeatTimes):
        q = (startIndex + i * srcStride) * 4 * FN
        for j in range(4):
            df = i * (dstGap + 1) + j * (dstFracGap + 1)
            for r in range(16):
                for c in range(64):
                    s = q + (c // 16) * FN + (c % 16) * 64 + 16 * j + r
                    writer.write(df * FN + r * 64 + c, *nibble(src, src_def, s))
    writer.finish()
