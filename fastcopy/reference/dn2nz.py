"""Reference (test-oracle) DN2NZ, written literally from the mapping in docs/cube-in.md. Slow on purpose.

Matrix ``m``, result row ``r`` (``< nValue``), result column ``c`` (``< ceil(dValue/C0)*C0``)::

    d = m*Mst + r*dstNzNStride*32 + (c // C0)*dstNzC0Stride*32 + (c % C0)*es      Mst = floor(dstNzMatrixStride*es/32)*32
    c < dValue: copy(d, (m*srcDnMatrixStride + c*srcDValue + r)*es, es)   else: es zero bytes

enableSmallC0: row ``r`` at ``m*Mst + r*4*es``, 4 elements (columns ``c < dValue`` copied, the rest zero), then
zero bytes from ``nValue*4*es`` up to the next multiple of 32.
"""

from __future__ import annotations

import numpy as np

from ._writer import ByteWriter


def dn2nz(dst, dst_def, src, src_def, *, es, dnNum, nValue, dValue, srcDnMatrixStride, srcDValue, dstNzC0Stride,
          dstNzNStride, dstNzMatrixStride, small_c0=False, poison=0xFF):
    if dnNum == 0 or nValue == 0 or dValue == 0:
        return
    writer = ByteWriter(dst, dst_def, poison)
    pitch = dstNzMatrixStride * es // 32 * 32

    def copy(d, m, r, c):
        s = (m * srcDnMatrixStride + c * srcDValue + r) * es
        if s < 0 or s + es > src.size:
            raise IndexError(f"reference read of bytes [{s}, {s + es}) outside [0, {src.size})")
        writer.write(d, src[s:s + es], src_def[s:s + es])

    for m in range(dnNum):
        if small_c0:
            for r in range(nValue):
                for c in range(4):
                    d = m * pitch + r * 4 * es + c * es
                    if c < dValue:
                        copy(d, m, r, c)
                    else:
                        writer.write(d, np.zeros(es, np.uint8), True)
            end = -(-nValue * 4 * es // 32) * 32
            if end > nValue * 4 * es:
                writer.write(m * pitch + nValue * 4 * es, np.zeros(end - nValue * 4 * es, np.uint8), True)
            continue
        c0 = 32 // es
        for r in range(nValue):
            for c in range(-(-dValue // c0) * c0):
                d = m * pitch + r * dstNzNStride * 32 + (c // c0) * dstNzC0Stride * 32 + (c % c0) * es
                if c < dValue:
                    copy(d, m, r, c)
                else:
                    writer.write(d, np.zeros(es, np.uint8), True)
    writer.finish()
