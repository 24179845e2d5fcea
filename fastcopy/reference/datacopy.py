"""Basic DataCopy reference (semantics.md §3.2-§3.6), straight from the formulas.

``copy(D + i*(blockLen*Lb + dstGap*Gd), S + i*(blockLen*Lb + srcGap*Gs), blockLen*Lb)`` for i < blockCount;
L1 -> Fixpipe gaps are head-to-head (``S + i*srcGap*32``, ``D + i*dstGap*Gd``); the L1 -> BiasTable
half/bfloat16 -> float prototype widens each element and doubles the destination burst.
"""

from __future__ import annotations

import numpy as np

from ._writer import ByteWriter

# semantics.md §3.3, written out again on purpose (an oracle shares no tables with the code it checks)
_UNITS = {  # (path, product is 350) -> (Lb, Gs, Gd, head_to_head)
    ("L1->BT", False): (64, 32, 64, False),
    ("L1->BT", True): (32, 32, 32, False),
    ("L1->FB", False): (128, 32, 128, True),
    ("L1->FB", True): (128, 32, 128, True),  # 128-byte units on Atlas 350 too
}


def path_units(path: str, product: str):
    """(Lb, Gs, Gd, head_to_head) in bytes for a physical path like ``"GM->UB"`` on a product key."""
    return _UNITS.get((path, product == "350"), (32, 32, 32, False))


def count_to_block_len(count: int, es: int, path: str, product: str) -> int:
    """semantics.md §3.4: blockLen of the count form."""
    if path == "L1->BT":
        return count * es // (32 if product == "350" else 64)
    if path == "L1->FB":
        return count * es // 128
    return count * es // 32


def data_copy(dst, dst_def, src, src_def, *, path: str, product: str, blockCount: int, blockLen: int,
              srcGap: int, dstGap: int, src_dtype=None, dst_dtype=None, poison: int = 0xFF) -> None:
    """semantics.md §3.2 loop. ``src_dtype``/``dst_dtype`` differ only for the L1 -> BiasTable widening (§3.6)."""
    if blockCount == 0 or blockLen == 0:
        return
    lb, gs, gd, head = path_units(path, product)
    n = blockLen * lb
    convert = src_dtype is not None and dst_dtype is not None and np.dtype(src_dtype) != np.dtype(dst_dtype)
    grow = np.dtype(dst_dtype).itemsize // np.dtype(src_dtype).itemsize if convert else 1
    w = ByteWriter(dst, dst_def, poison)
    for i in range(blockCount):
        if head:
            s, d = i * srcGap * gs, i * dstGap * gd
        else:
            s, d = i * (n + srcGap * gs), i * (grow * n + dstGap * gd)
        data, flags = src[s:s + n], src_def[s:s + n]
        if s + n > src.size:
            raise IndexError("reference read outside the source")
        if convert:
            es = np.dtype(src_dtype).itemsize
            values = data.view(src_dtype).astype(dst_dtype)
            flags = np.repeat(flags.reshape(-1, es).all(axis=1), np.dtype(dst_dtype).itemsize)
            data = values.view(np.uint8)
        w.write(d, data, flags)
    w.finish()
