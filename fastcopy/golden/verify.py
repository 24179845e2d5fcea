"""Bit-exact comparison of a kernel's output with golden data, over the defined positions only.

Element ``i`` matches when its bit pattern equals the golden one (NaN payloads, -0.0 and every other bit count);
positions whose mask byte is 0 are skipped. Each mismatch is reported with its flat index, ND coordinate (with a
shape), byte offset, 32-byte block and both values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import UINT_OF_WIDTH, ascend_name

BLOCK = 32


@dataclass
class Mismatch:
    index: int
    coord: tuple | None
    byte: int
    block: int
    expected: object
    actual: object
    expected_bits: int
    actual_bits: int


@dataclass
class Comparison:
    dtype: np.dtype
    elements: int
    defined: int
    mismatches: int
    first: list  # Mismatch, at most ``limit``
    problem: str = ""  # the files could not be compared at all (size, mask)

    @property
    def ok(self) -> bool:
        return not self.problem and self.mismatches == 0


def compare(actual: np.ndarray, expected: np.ndarray, dtype, mask=None, shape=None, limit: int = 10) -> Comparison:
    """Compare two flat arrays of ``dtype`` bit for bit where ``mask`` (one value per element, nonzero =
    defined) says so. ``actual``/``expected`` may be raw uint8 bytes."""
    dt = np.dtype(dtype)
    es = dt.itemsize
    a, e = np.ascontiguousarray(actual).reshape(-1), np.ascontiguousarray(expected).reshape(-1)
    a_bytes, e_bytes = a.view(np.uint8), e.view(np.uint8)
    n = e_bytes.size // es
    if e_bytes.size % es or a_bytes.size % es:
        return Comparison(dt, n, 0, 0, [], f"the files are not whole {ascend_name(dt)} elements "
                                           f"({a_bytes.size} and {e_bytes.size} bytes, {es} bytes each)")
    if a_bytes.size != e_bytes.size:
        return Comparison(dt, n, 0, 0, [], f"the output has {a_bytes.size // es} elements, the golden {n} "
                                           f"({ascend_name(dt)})")
    if shape is not None and int(np.prod(shape)) != n:
        return Comparison(dt, n, 0, 0, [], f"shape {tuple(shape)} has {int(np.prod(shape))} elements, the "
                                           f"files {n}")
    if mask is None:
        defined = np.ones(n, bool)
    else:
        m = np.asarray(mask).reshape(-1)
        if m.size != n:
            return Comparison(dt, n, 0, 0, [], f"the mask has {m.size} entries, the data {n} elements")
        defined = m != 0
    ua = a_bytes.view(UINT_OF_WIDTH[es])
    ue = e_bytes.view(UINT_OF_WIDTH[es])
    bad = np.flatnonzero((ua != ue) & defined)
    first = []
    va, ve = a_bytes.view(dt), e_bytes.view(dt)
    for i in bad[:limit].tolist():
        coord = tuple(int(c) for c in np.unravel_index(i, shape)) if shape is not None else None
        first.append(Mismatch(i, coord, i * es, i * es // BLOCK, ve[i], va[i], int(ue[i]), int(ua[i])))
    return Comparison(dt, n, int(defined.sum()), int(bad.size), first)


def format_value(v, bits: int, es: int) -> str:
    """``1.5 (0x3e00)``: the value and its bit pattern."""
    try:
        text = str(v.item()) if hasattr(v, "item") and not isinstance(v, np.void) else str(v)
    except (TypeError, ValueError):
        text = str(v)
    return f"{text} (0x{bits:0{2 * es}x})"


def report(cmp: Comparison, limit: int = 10) -> str:
    """Human-readable verdict and mismatch table."""
    name = ascend_name(cmp.dtype)
    if cmp.problem:
        return f"FAIL: {cmp.problem}"
    skipped = cmp.elements - cmp.defined
    skip_text = f", {skipped} undefined position{'s' if skipped != 1 else ''} skipped" if skipped else ""
    if cmp.ok:
        return f"PASS: {cmp.defined} of {cmp.elements} {name} elements bit-exact{skip_text}"
    lines = [f"FAIL: {cmp.mismatches} of {cmp.defined} defined {name} elements differ{skip_text}"]
    rows = [("index", "coord", "byte", "block", "expected", "actual")]
    es = cmp.dtype.itemsize
    for m in cmp.first[:limit]:
        coord = "(" + ", ".join(map(str, m.coord)) + ")" if m.coord is not None else "-"
        rows.append((str(m.index), coord, str(m.byte), str(m.block), format_value(m.expected, m.expected_bits, es),
                     format_value(m.actual, m.actual_bits, es)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    if cmp.mismatches > len(cmp.first[:limit]):
        lines.append(f"  ... {cmp.mismatches - len(cmp.first[:limit])} more")
    return "\n".join(lines)
