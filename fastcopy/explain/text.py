"""The picture as text: element grids with source indices, ANSI colours when asked (no dependencies)."""

from __future__ import annotations

import numpy as np

from .layout import DUMMY, PAD, rgb
from .trace import COMPUTED, COPY, FILL, UNDEFINED

LEGEND = ("n = source element n (same colour as in the source); P = padding; d = dummy (fill up to 32 bytes); "
          "= = other fill; c = computed from the source (not a copy); ? = undefined; . = untouched / not read")


def _ansi(color, text: str) -> str:
    r, g, b = (int(round(c * 5)) for c in color)
    return f"\x1b[48;5;{16 + 36 * r + 6 * g + b}m\x1b[30m{text}\x1b[0m"


def _rows(labels, colors, cols: int, shown: int, size: int, width: int, color: bool) -> list[str]:
    lines = []
    iw = len(str(max(size - 1, 0)))
    for start in range(0, shown, cols):
        cells = []
        for i in range(start, min(start + cols, shown)):
            cell = labels[i].rjust(width)
            cells.append(_ansi(colors[i], cell) if color and colors[i] is not None else cell)
        lines.append(f"{str(start).rjust(iw)} |" + " ".join(cells))
    if shown < size:
        lines.append(f"{' ' * iw} | ... {size - shown} more elements not drawn")
    return lines


def render(ex, color: bool = False) -> str:
    tr = ex.trace
    sg, dg = ex.src_grid, ex.dst_grid
    srows = max(-(-(ex.read_span[1] if ex.read_span else 1) // sg.cols), 1)
    width = max(len(str(max(int(tr.origin.max(initial=0)), sg.shown - 1, 0))), 1)
    # source: every element labelled with its index, coloured by its own (row, col); unread ones dotted
    s_idx = np.arange(sg.shown)
    r, c = np.divmod(s_idx, sg.cols)
    s_col = rgb(r, c, srows, sg.cols) if sg.shown else np.zeros((0, 3))
    s_labels = [str(i) if tr.read[i] else "." for i in s_idx]
    s_colors = [s_col[i] if tr.read[i] else None for i in s_idx]
    # destination
    d_labels, d_colors = [], []
    for i in range(dg.shown):
        k, o, role = tr.kind[i], tr.origin[i], ex.role[i]
        colr = None
        if k == COPY:
            rr, cc = divmod(int(o), sg.cols)
            colr = rgb(rr, cc, srows, sg.cols)
            lab = "d" if role == DUMMY else str(o)
        elif k == UNDEFINED:
            lab = "?"
        elif k == COMPUTED:
            lab = "c"
        elif k == FILL:
            lab = "P" if role == PAD else "d" if role == DUMMY else "="
        else:
            lab = "."
        if k in (FILL, UNDEFINED) and role == DUMMY:
            lab = "d" if k != UNDEFINED else "?"
        d_labels.append(lab)
        d_colors.append(colr)
    counts = ex.counts()
    fills = ex.fill_values()
    out = [f"{ex.call}   [{ex.family}, {tr.product}]", LEGEND, "", ex.span_text("src"),
           *_rows(s_labels, s_colors, sg.cols, sg.shown, sg.size, width, color), "", ex.span_text("dst"),
           *_rows(d_labels, d_colors, dg.cols, dg.shown, dg.size, width, color), "",
           ", ".join(f"{v} {k}" for k, v in counts.items() if k != "untouched" and v) or "nothing written"]
    if fills:
        out.append("fill values: " + ", ".join(repr(v) for v in fills))
    out += [f"warning: {w}" for w in tr.warnings]
    return "\n".join(out)
