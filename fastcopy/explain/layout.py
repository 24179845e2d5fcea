"""How to lay one call's tensors out as element grids: row widths that show the op's structure (a burst, a
matrix row, a C0 block, a fractal row per grid row), and which padding / dummy regions to name.

Pure functions of the call's arguments and its :class:`~fastcopy.explain.trace.Trace`; they only choose how to
draw, never what the op did.
"""

from __future__ import annotations

import numpy as np

MAX_COLS = 64
PLAIN, PAD, DUMMY = 0, 1, 2  # role of a destination element in the op's layout


def _default_cols(es: int) -> int:
    return max(32 // es, 8) if es < 4 else 8


def _fit(cols, es: int) -> int:
    try:
        cols = int(cols)
    except (TypeError, ValueError):
        return _default_cols(es)
    return cols if 0 < cols <= MAX_COLS else _default_cols(es)


def _au(x: int, a: int) -> int:
    return -(-x // a) * a


def family(api: str, args: tuple) -> str:
    """The op family a picture is titled by: DataCopy, DataCopyPad, ND2NZ, NZ2ND, slice."""
    first = args[0] if args else None
    name = type(first).__name__
    if api == "DataCopy":
        return {"Nd2NzParams": "ND2NZ", "Nz2NdParamsFull": "NZ2ND"}.get(name, "slice" if isinstance(
            first, (list, tuple)) else "DataCopy")
    return api


def grid_cols(api: str, args: tuple, tr) -> tuple[int, int]:
    """(source, destination) elements per grid row (packed 4-bit types: values, twice the bytes of a row)."""
    s, d = _byte_cols(api, args, tr)
    return s * tr.src.per_byte, d * tr.dst.per_byte


def _byte_cols(api: str, args: tuple, tr) -> tuple[int, int]:
    """(source, destination) tensor elements per grid row (4-bit types: bytes)."""
    es_s, es_d = tr.src.dtype.itemsize, tr.dst.dtype.itemsize
    fam = family(api, args)
    p = args[0] if args else None
    if fam.startswith("LoadData"):  # cube inputs: one 32-byte fractal row (C0 elements) per grid row
        return max(32 // es_s, 1), max(32 // es_d, 1)
    if fam == "Fixpipe":  # L0C holds 16-wide fractal rows; a row-major destination shows its rows
        return 16, _fit(getattr(p, "dstStride", 0), es_d)
    if fam == "ND2NZ":
        return _fit(p.srcDValue if p.nValue > 1 else p.dValue, es_s), max(32 // es_d, 1)
    if fam == "NZ2ND":
        return 16, _fit(p.dstDStride if p.nValue > 1 else p.dValue, es_d)
    if fam == "slice":
        def width(infos, op):
            v = _field(infos[0], "shapeValue")
            if not v and op.shape:
                v = op.shape[-1]
            return _fit(v, op.dtype.itemsize)
        return width(args[1], tr.src), width(args[0], tr.dst)
    if fam == "DataCopyPad":
        bl, ss, ds = p.blockLen, p.srcStride, p.dstStride
        if tr.dst.phys == "GM":  # UB -> GM
            return _fit((_au(bl, 32) + ss * 32) / es_s if (_au(bl, 32) + ss * 32) % es_s == 0 else 0, es_s), \
                _fit((bl + ds) // es_d if (bl + ds) % es_d == 0 else 0, es_d)
        pad = args[1] if len(args) > 1 and type(args[1]).__name__.startswith("DataCopyPad") else None
        lp = pad.leftPadding * es_d if pad is not None else 0
        rp = pad.rightPadding * es_d if pad is not None else 0
        period = _au(lp + bl + rp, 32) + ds * 32
        return _fit((bl + ss) // es_s if (bl + ss) % es_s == 0 else 0, es_s), _fit(period // es_d, es_d)
    if type(p).__name__ == "DataCopyParams" and p.blockCount > 1:
        return _fit((p.blockLen * 32 + p.srcGap * 32) // es_s, es_s), _fit((p.blockLen * 32 + p.dstGap * 32) // es_d,
                                                                            es_d)
    return _default_cols(es_s), _default_cols(es_d)


def _field(info, name):
    if isinstance(info, dict):
        return info.get(name, 0)
    if isinstance(info, (list, tuple)):
        order = ("startIndex", "endIndex", "stride", "burstLen", "shapeValue")
        i = order.index(name)
        return info[i] if i < len(info) else 0
    return getattr(info, name)


def roles(api: str, args: tuple, tr) -> np.ndarray:
    """PAD / DUMMY per destination element where the op's layout names them (else PLAIN; fills are PAD)."""
    from .trace import FILL

    role = np.where(tr.kind == FILL, PAD, PLAIN).astype(np.uint8)
    fam = family(api, args)
    if fam != "DataCopyPad" or tr.dst.phys == "GM" or len(args) < 2:
        return role
    p, pad = args[0], args[1]
    if not type(pad).__name__.startswith("DataCopyPad"):
        return role
    mode = "Normal"
    for a in args[2:]:
        mode = getattr(a, "name", str(a))
    es = tr.dst.dtype.itemsize
    bl = p.blockLen
    n = tr.dst.size
    q = np.arange(n) * es
    if "Compact" in mode:
        total = p.blockCount * bl
        role[(q >= total) & (q < _au(total, 32))] = DUMMY
        return role
    lp, rp = pad.leftPadding * es, pad.rightPadding * es
    width = _au(lp + bl + rp, 32)
    period = width + p.dstStride * 32
    i, w = q // period, q % period
    inside = (i < p.blockCount) & (w < width)
    role[:] = PLAIN
    role[inside & (w < lp)] = PAD
    role[inside & (w >= lp + bl) & (w < lp + bl + rp)] = PAD
    role[inside & (w >= lp + bl + rp)] = DUMMY
    return role


def rgb(row, col, rows: int, cols: int) -> np.ndarray:
    """Colour of source element (row, col): hue by column, brightness by row; float RGB in [0, 1], shape (..., 3)."""
    import colorsys

    row, col = np.asarray(row), np.asarray(col)
    h = (col / max(cols, 1)) * 0.85
    v = 0.98 - 0.5 * (row / max(rows - 1, 1))
    flat = [colorsys.hsv_to_rgb(float(a), 0.6, float(b)) for a, b in zip(h.reshape(-1), v.reshape(-1))]
    return np.array(flat, float).reshape(row.shape + (3,))
