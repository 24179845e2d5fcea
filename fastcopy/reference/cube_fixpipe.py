"""Reference (test-oracle) Fixpipe / DataCopy out of L0C, written literally: one element at a time.

For every matrix ``h < num``, row ``i < m``, column ``j < n``::

    x = L0C[h*SND + (j//16)*srcStride + i*16*RS + j%16]          (srcStride in elements here)
    y = OUT(x, j)                                                 (cube_quant.out with the word of column j)
    ND: dst element h*DND + i*dstStride + j
    DN: dst element h*DND + j*dstStride + i
    NZ: dst byte g*DS + (i*w + c)*sizeof(T) with (g, w, c) = (j//8, 8, j%8) for channel split,
        (b//2, 32, j%32) for 1-byte outputs in merged pairs of 16-column blocks (b = j//16, G = n/16, b < 2*(G//2)),
        (G//2, 16, j%16) for the last block of an odd G, else (j//16, 16, j%16)
"""

from __future__ import annotations

import numpy as np

from . import cube_quant


def fixpipe(dst: np.ndarray, l0c: np.ndarray, *, layout, n, m, src_stride, dst_stride, num, snd, dnd, rs, mode, t,
            words, relu, ctrl48, arch3510, split=False, elt=None, clip=None):
    """Apply a call to the destination bytes ``dst`` (uint8, modified). ``dst_stride``: elements per ND row / DN
    column, or bytes between NZ Z columns. ``words``: the scale word of each column. 310B DataCopy extras (half
    outputs): ``elt = (E, c0ChStride, +1 | -1)`` adds/subtracts the half ``E[(j//16)*c0ChStride*16 + i*16 + j%16]``
    and rounds to half once; then ``clip`` (a float) gives ``min(y, clip)``."""
    t = np.dtype(t)
    es = t.itemsize
    groups = n // 16
    for h in range(num):
        for i in range(m):
            for j in range(n):
                x = l0c[h * snd + (j // 16) * src_stride + i * 16 * rs + j % 16]
                x = int(x) if l0c.dtype.kind == "i" else x
                y = cube_quant.out(x, mode, int(words[j]), relu, ctrl48, arch3510)
                if elt is not None or clip is not None:
                    v = float(np.uint16(y).view(np.float16))  # the half result of the conversion
                    if elt is not None:
                        e, c0, sign = elt
                        v = v + sign * float(e[(j // 16) * c0 * 16 + i * 16 + j % 16])
                        y = cube_quant.encode(v, "F16", ctrl48)  # rounded once to half
                        v = float(np.uint16(y).view(np.float16))
                    if clip is not None and v > clip:
                        y = cube_quant.encode(clip, "F16", ctrl48)
                if layout == "ND":
                    byte = (h * dnd + i * dst_stride + j) * es
                elif layout == "DN":
                    byte = (h * dnd + j * dst_stride + i) * es
                else:
                    b = j // 16
                    if split:
                        g, w, c = j // 8, 8, j % 8
                    elif es == 1 and b < 2 * (groups // 2):
                        g, w, c = b // 2, 32, j % 32
                    elif es == 1:
                        g, w, c = groups // 2, 16, j % 16
                    else:
                        g, w, c = b, 16, j % 16
                    byte = g * dst_stride + (i * w + c) * es
                dst[byte:byte + es] = np.frombuffer(int(y).to_bytes(es, "little"), np.uint8)
