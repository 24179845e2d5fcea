"""Reference (test-oracle) slice copy: the element-level definition of docs/semantics.md §7.1, written literally.

For an info array ``I`` (dim 0 innermost) and ``L = srcSliceInfo[0].burstLen * 32 // es``::

    n0    = (I[0].endIndex - I[0].startIndex + 1 + I[0].stride) // (L + I[0].stride)
    idx0  = [I[0].startIndex + j*(L + I[0].stride) + e  for j < n0, e < L]
    n_d   = (I[d].endIndex - I[d].startIndex + 1 + I[d].stride) // (1 + I[d].stride)      (d >= 1)
    idx_d = [I[d].startIndex + j*(1 + I[d].stride)  for j < n_d]
    pitch_0 = 1, pitch_d = pitch_{d-1} * I[d-1].shapeValue
    selected(I) = [sum_d idx_d[t_d] * pitch_d], dim 0 fastest

The k-th element of selected(srcSliceInfo) is copied to the k-th element of selected(dstSliceInfo).
"""

from __future__ import annotations

import numpy as np

from ._writer import ByteWriter
from .nz import _copy

BLK = 32


def selected_elements(info, run_length):
    """Element indices selected by the SliceInfo list ``info`` (semantics.md §7.1), in copy order (dim 0 fastest).

    ``run_length`` is L, the dim-0 run length in elements (taken from the source info for both sides).
    """
    first = info[0]
    n0 = (first["endIndex"] - first["startIndex"] + 1 + first["stride"]) // (run_length + first["stride"])
    offsets = np.array([first["startIndex"] + j * (run_length + first["stride"]) + e
                        for j in range(n0) for e in range(run_length)], dtype=np.int64)
    pitch = 1
    for d in range(1, len(info)):
        pitch *= info[d - 1]["shapeValue"]
        n_d = (info[d]["endIndex"] - info[d]["startIndex"] + 1 + info[d]["stride"]) // (1 + info[d]["stride"])
        idx_d = np.array([info[d]["startIndex"] + j * (1 + info[d]["stride"]) for j in range(n_d)],
                         dtype=np.int64)
        # dim d varies slower than every dim before it
        offsets = (idx_d[:, None] * pitch + offsets[None, :]).ravel()
    return offsets


def slice_copy(dst, dst_def, src, src_def, *, es, dst_info, src_info, dimValue, poison=0xFF):
    """Slice copy, semantics.md §7.1: ``dst[selected(dst_info)[k]] = src[selected(src_info)[k]]`` for every k.

    ``L = src_info[0].burstLen * 32 // es`` for both sides; only the first ``dimValue`` entries of each info
    list are used.  The two selections must have equal lengths (ValueError otherwise).
    """
    run_length = src_info[0]["burstLen"] * BLK // es
    src_sel = selected_elements(src_info[:dimValue], run_length)
    dst_sel = selected_elements(dst_info[:dimValue], run_length)
    if src_sel.size != dst_sel.size:
        raise ValueError(f"slice selects {src_sel.size} source but {dst_sel.size} destination elements")
    writer = ByteWriter(dst, dst_def, poison)
    for s, d in zip(src_sel.tolist(), dst_sel.tolist()):
        _copy(writer, src, src_def, d * es, s * es, es)
    writer.finish()
