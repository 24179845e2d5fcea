"""Pictures of what one op does: ``fastcopy.explain(DataCopy, dst, src, params)`` and ``fastcopy explain CASE``.

The call runs again on tagged data in a scratch TPipe (:mod:`.trace`), so the picture shows exactly what the
emulation does: source and destination as element grids, every destination element coloured like the source
element it came from, padding, dummy and undefined elements marked, and the byte spans each buffer uses.
Output: coloured text for a terminal (:meth:`Explanation.text`, no dependencies) or PNG/SVG
(:meth:`Explanation.save`, needs matplotlib: ``pip install "fastcopy[plot]"``). Nothing is written to the
caller's tensors or TPipe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import cube, layout
from .trace import COMPUTED, COPY, FILL, UNDEFINED, UNTOUCHED, Trace, trace

__all__ = ["explain", "Explanation", "Trace"]

#: Most grid rows drawn per tensor (the rest is summarised).
MAX_ROWS = 48


@dataclass
class Grid:
    """One tensor drawn as rows of ``cols`` elements: elements ``[0, shown)`` of ``size``."""

    cols: int
    shown: int
    size: int

    @property
    def rows(self) -> int:
        return -(-self.shown // self.cols) if self.shown else 0


class Explanation:
    """What one call does, ready to draw. ``str()`` / :meth:`text` for a terminal, :meth:`save` for PNG/SVG."""

    def __init__(self, tr: Trace, family: str, call: str, src_cols: int, dst_cols: int, role: np.ndarray,
                 max_rows: int = MAX_ROWS, labels: tuple = ("dst", "src")):
        self.trace, self.family, self.call, self.role = tr, family, call, role
        self.labels = {"dst": labels[0], "src": labels[1]}
        read = np.flatnonzero(tr.read)
        touched = np.flatnonzero(tr.kind != UNTOUCHED)
        self.read_span = (int(read[0]), int(read[-1]) + 1) if read.size else None
        self.write_span = (int(touched[0]), int(touched[-1]) + 1) if touched.size else None
        self.src_grid = self._grid(src_cols, self.read_span, tr.src.size, max_rows)
        self.dst_grid = self._grid(dst_cols, self.write_span, tr.dst.size, max_rows)

    @staticmethod
    def _grid(cols: int, span, size: int, max_rows: int) -> Grid:
        end = span[1] if span else min(size, cols)
        end = min(-(-end // cols) * cols, size)
        return Grid(cols, min(end, cols * max_rows), size)

    # -- facts the renderers share ----------------------------------------------------------------------------
    def source_rc(self, i):
        """(row, column) of source element(s) ``i`` in the source grid."""
        return np.divmod(i, self.src_grid.cols)

    def span_text(self, role: str) -> str:
        op = self.trace.src if role == "src" else self.trace.dst
        span = self.read_span if role == "src" else self.write_span
        verb = "read" if role == "src" else "written"
        where = f"{op.position} ({op.phys})" if op.position != op.phys else op.phys
        name = self.labels[role]
        name = role if name == role else f"{role} {name}"
        values = " (4-bit values, two per byte)" if op.per_byte == 2 else ""
        head = f"{name}: {where} {op.dtype_name}[{op.size}]{values} at byte {op.offset}"
        if op.capacity:
            head += f" of {op.capacity}"
        if span is None:
            return f"{head}; nothing {verb}"
        lo, hi = span
        a, b = op.byte_span(lo, hi)
        return f"{head}; {verb}: elements [{lo}, {hi}) = bytes [{a}, {b}) of the buffer"

    def counts(self) -> dict:
        k, r = self.trace.kind, self.role
        return {"copied": int((k == COPY).sum()), "padding": int(((r == layout.PAD) & (k != UNTOUCHED)).sum()),
                "dummy": int(((r == layout.DUMMY) & (k != UNTOUCHED)).sum()),
                "fill": int((k == FILL).sum()), "computed": int((k == COMPUTED).sum()),
                "undefined": int((k == UNDEFINED).sum()),
                "untouched": int((k == UNTOUCHED).sum())}

    def fill_values(self) -> list:
        vals = self.trace.fill[self.trace.kind == FILL]
        if vals.size == 0:
            return []
        u = np.unique(vals.view(f"u{vals.dtype.itemsize}"))
        return [v for v in u[:4].view(vals.dtype).tolist()]

    # -- output -----------------------------------------------------------------------------------------------
    def text(self, color: bool | None = None) -> str:
        """The picture as text; ``color=None``: ANSI colours when stdout is a terminal."""
        from .text import render

        if color is None:
            import sys

            color = sys.stdout.isatty()
        return render(self, color)

    def __str__(self) -> str:
        return self.text(color=False)

    def __repr__(self) -> str:
        c = self.counts()
        return (f"<Explanation {self.call}: {c['copied']} copied, {c['padding']} padding, {c['dummy']} dummy, "
                f"{c['undefined']} undefined>")

    def figure(self):
        """A matplotlib Figure of the picture (needs matplotlib)."""
        from .plot import figure

        return figure(self)

    def save(self, path, dpi: int = 110) -> str:
        """Write the picture: ``.png`` or ``.svg`` (matplotlib), ``.txt`` (plain text). Returns the path."""
        path = str(path)
        if path.lower().endswith(".txt"):
            with open(path, "w") as f:
                f.write(self.text(color=False) + "\n")
            return path
        from .plot import save

        return save(self, path, dpi)


def call_text(api: str, dst, src, args, kwargs, labels=None) -> str:
    def tensor(t):
        return f"{t.position}" + (f"[{t.offset // t.dtype.itemsize}]" if t.is_global and t.offset else "")

    parts = list(labels) if labels else [tensor(dst), tensor(src)]
    for a in args:
        if isinstance(a, (list, tuple)):
            parts.append("[" + ", ".join(repr(x) for x in a) + "]")
        else:
            parts.append(repr(a) if not hasattr(a, "name") or not hasattr(a, "value") else f"{a}")
    parts += [f"{k}={v!r}" for k, v in kwargs.items() if k not in ("pipe", "workspace")]
    return f"{api}({', '.join(parts)})"


def explain(op, dst, src, *args, max_rows: int = MAX_ROWS, labels: tuple | None = None, title: str = "",
            **kwargs) -> Explanation:
    """Explain ``op(dst, src, *args, **kwargs)``: ``op`` is a data-moving fastcopy function (``DataCopy``,
    ``DataCopyPad``, ``LoadData``, ``Fixpipe``, ...) or its name.

    The call is validated and run exactly as ``op`` would run it (same product, addresses, pad register and loop
    mode), but on tagged scratch copies: ``dst`` and ``src`` are not read for data nor written. A call that
    would raise raises the same error here. ``print(explain(...))`` draws it as text;
    ``explain(...).save("x.png")`` (or ``.svg``) as a picture. ``labels=("yLocal", "xGm[512]")`` names the two
    tensors in the picture, ``title`` is shown before the call; ``max_rows`` limits the grid rows drawn.
    """
    import fastcopy

    func = getattr(fastcopy, op) if isinstance(op, str) else op
    api = getattr(func, "__name__", str(op))
    tr = trace(func, dst, src, *args, **kwargs)
    cube.mark_converted(api, args, tr, func, dst, src, kwargs)
    src_cols, dst_cols = layout.grid_cols(api, args, tr)
    role = layout.roles(api, args + ((kwargs["mode"],) if "mode" in kwargs else ()), tr)
    fam = layout.family(api, args)
    call = call_text(api, dst, src, args, kwargs, labels)
    return Explanation(tr, fam, f"{title}: {call}" if title else call, src_cols, dst_cols, role, max_rows,
                       labels or ("dst", "src"))
