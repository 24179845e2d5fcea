"""The picture as PNG/SVG with matplotlib (optional: ``pip install "fastcopy[plot]"``)."""

from __future__ import annotations

import textwrap

import numpy as np

from ..errors import FastCopyError
from .layout import DUMMY, PAD, rgb
from .trace import COMPUTED, COPY, FILL, UNDEFINED

WHITE = (1.0, 1.0, 1.0)
UNREAD = (0.93, 0.93, 0.93)
PAD_C = (0.62, 0.62, 0.62)
DUMMY_C = (0.80, 0.80, 0.80)
FILL_C = (0.70, 0.70, 0.70)
UNDEF_C = (0.12, 0.12, 0.12)
COMPUTED_C = (0.55, 0.45, 0.70)


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise FastCopyError('explain: PNG/SVG pictures need matplotlib: pip install "fastcopy[plot]" (or use '
                            "text output: print(explanation) / fastcopy explain --format text)") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _cells(ex):
    """(source RGB grid, source labels, destination RGB grid, destination labels, destination marks)."""
    tr, sg, dg = ex.trace, ex.src_grid, ex.dst_grid
    srows = max(-(-(ex.read_span[1] if ex.read_span else 1) // sg.cols), 1)
    s_img = np.ones((sg.rows, sg.cols, 3))
    s_lab = [[""] * sg.cols for _ in range(sg.rows)]
    if sg.shown:
        i = np.arange(sg.shown)
        r, c = np.divmod(i, sg.cols)
        colors = rgb(r, c, srows, sg.cols)
        colors[~tr.read[:sg.shown]] = UNREAD
        s_img.reshape(-1, 3)[:sg.shown] = colors
        for k in range(sg.shown):
            s_lab[r[k]][c[k]] = str(k) if tr.read[k] else ""
    d_img = np.ones((dg.rows, dg.cols, 3))
    d_lab = [[""] * dg.cols for _ in range(dg.rows)]
    for k in range(dg.shown):
        rr, cc = divmod(k, dg.cols)
        kind, o, role = tr.kind[k], int(tr.origin[k]), ex.role[k]
        if kind == COPY:
            sr, sc = divmod(o, sg.cols)
            d_img[rr, cc] = rgb(sr, sc, srows, sg.cols)
            d_lab[rr][cc] = ("d:" if role == DUMMY else "") + str(o)
        elif kind == UNDEFINED:
            d_img[rr, cc] = UNDEF_C
            d_lab[rr][cc] = "?"
        elif kind == COMPUTED:
            d_img[rr, cc] = COMPUTED_C
            d_lab[rr][cc] = "c"
        elif kind == FILL:
            d_img[rr, cc] = DUMMY_C if role == DUMMY else PAD_C if role == PAD else FILL_C
            d_lab[rr][cc] = "d" if role == DUMMY else "P" if role == PAD else "="
    return s_img, s_lab, d_img, d_lab


def _grid_axes(ax, img, labels, title, start_label, fontsize):
    rows, cols = img.shape[:2]
    ax.imshow(img, interpolation="nearest", aspect="equal", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.6)
    ax.tick_params(which="minor", length=0)
    step = max(1, rows // 16)
    ax.set_yticks(range(0, rows, step))
    ax.set_yticklabels([str(r * start_label) for r in range(0, rows, step)], fontsize=7)
    xstep = max(1, cols // 16)
    ax.set_xticks(range(0, cols, xstep))
    ax.set_xticklabels([str(c) for c in range(0, cols, xstep)], fontsize=7)
    ax.set_title(title, fontsize=9, loc="left")
    if fontsize:
        for r in range(rows):
            for c in range(cols):
                if labels[r][c]:
                    color = "red" if labels[r][c] == "?" else "black"
                    ax.text(c, r, labels[r][c], ha="center", va="center", fontsize=fontsize, color=color)


def _span_axes(ax, ex, role):
    op = ex.trace.src if role == "src" else ex.trace.dst
    span = ex.read_span if role == "src" else ex.write_span
    nbytes = op.byte_span(0, op.size)[1] - op.offset
    cap = op.capacity or (op.offset + nbytes)
    lo, hi = max(0, op.offset - nbytes // 4), min(cap, op.offset + nbytes + nbytes // 4)  # zoom on the tensor
    ax.barh(0, cap, color=(0.95, 0.95, 0.95), edgecolor="grey", height=0.8)
    ax.barh(0, nbytes, left=op.offset, color=(0.75, 0.85, 1.0), height=0.8)
    if span:
        a, b = op.byte_span(*span)
        ax.barh(0, b - a, left=a, color=(0.15, 0.35, 0.8), height=0.5)
    ax.set_xlim(lo, max(hi, lo + 1))
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel(f"bytes {lo}..{hi} of {op.phys} ({cap} bytes): light = the tensor, dark = "
                  f"{'read' if role == 'src' else 'written'}", fontsize=7)


def figure(ex):
    plt = _matplotlib()
    from matplotlib.patches import Patch

    s_img, s_lab, d_img, d_lab = _cells(ex)
    sg, dg = ex.src_grid, ex.dst_grid
    maxcells = max(sg.cols, dg.cols)
    fontsize = 6 if maxcells <= 24 and max(sg.rows, dg.rows) <= 48 else (4.5 if maxcells <= 40 else 0)
    cell = 0.28 if fontsize else 0.14
    w = max(4.0, sg.cols * cell) + max(4.0, dg.cols * cell) + 1.2
    h = max(sg.rows, dg.rows, 4) * cell + 3.8
    fig = plt.figure(figsize=(min(w, 22), min(h, 26)))
    gs = fig.add_gridspec(2, 2, height_ratios=[max(sg.rows, dg.rows, 4) * cell, 0.35],
                          width_ratios=[max(sg.cols, 8), max(dg.cols, 8)], hspace=0.35, wspace=0.18)
    tr = ex.trace
    for col, (img, lab, g, role, name) in enumerate(((s_img, s_lab, sg, "src", "source"),
                                                    (d_img, d_lab, dg, "dst", "destination"))):
        ax = fig.add_subplot(gs[0, col])
        chars = max(36, int(max(g.cols * cell, 4.0) * 11))
        _grid_axes(ax, img, lab, name + "\n" + textwrap.fill(ex.span_text(role), chars), g.cols, fontsize)
        ax.set_anchor("N")
    _span_axes(fig.add_subplot(gs[1, 0]), ex, "src")
    _span_axes(fig.add_subplot(gs[1, 1]), ex, "dst")
    fig.suptitle(f"{ex.family} on {tr.product}\n" + textwrap.fill(ex.call, 130), fontsize=9, x=0.01, ha="left")
    counts = ex.counts()
    handles = [Patch(color=rgb(0, 0, 2, 2)[()], label=f"copied ({counts['copied']}): colour and number = source "
                     "element (hue: source column, shade: source row)")]
    if counts["padding"]:
        handles.append(Patch(color=PAD_C, label=f"P padding ({counts['padding']})"))
    if counts["dummy"]:
        handles.append(Patch(color=DUMMY_C, label=f"d dummy, up to 32 bytes ({counts['dummy']})"))
    other = counts["fill"] - ((tr.kind == FILL) & (ex.role != 0)).sum()
    if other:
        handles.append(Patch(color=FILL_C, label=f"= other fill ({other})"))
    if counts["computed"]:
        handles.append(Patch(color=COMPUTED_C, label=f"c computed from the source, not a copy ({counts['computed']})"))
    if counts["undefined"]:
        handles.append(Patch(color=UNDEF_C, label=f"? undefined ({counts['undefined']})"))
    handles.append(Patch(facecolor=WHITE, edgecolor="grey", label="untouched / not read"))
    fills = ex.fill_values()
    if fills:
        handles.append(Patch(color=WHITE, label="fill values: " + ", ".join(repr(v) for v in fills)))
    fig.legend(handles=handles, loc="lower left", fontsize=7, ncol=2, frameon=False)
    fig.subplots_adjust(left=0.05, right=0.98, top=1 - 1.6 / min(h, 26), bottom=1.3 / min(h, 26))
    return fig


def save(ex, path: str, dpi: int = 110) -> str:
    if not path.lower().endswith((".png", ".svg")):
        raise FastCopyError(f"explain: cannot write {path!r}: use a .png, .svg or .txt file name")
    plt = _matplotlib()
    fig = figure(ex)
    kwargs = {"metadata": {"Date": None}} if path.lower().endswith(".svg") else {}
    fig.savefig(path, dpi=dpi, **kwargs)
    plt.close(fig)
    return path
