"""Text descriptions of the cube's compute steps (``fastcopy explain CASE --op N`` on an Mmad).

An Mmad is not a copy: every element of C depends on a row of A and a column of B, so there is no source element
to colour a destination element by. Its explanation says instead which bytes of L0A, L0B (and the BiasTable) it
reads in which fractal layout, which bytes of L0C it writes, where its initial value comes from and how it rounds.
"""

from __future__ import annotations

import numpy as np

from ..errors import FastCopyError


class Description:
    """What one compute step does, as text (``str()``, :meth:`text`, :meth:`save` to ``.txt``)."""

    def __init__(self, call: str, lines: list, family: str = "Mmad"):
        self.call, self.lines, self.family = call, list(lines), family

    def text(self, color: bool | None = None) -> str:
        return "\n".join([self.call, *self.lines])

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"<Description {self.call}>"

    def save(self, path, dpi: int = 110) -> str:
        path = str(path)
        if not path.lower().endswith(".txt"):
            raise FastCopyError(f"explain: {self.family} is described in text only; write -o FILE.txt (not {path})")
        with open(path, "w") as f:
            f.write(self.text() + "\n")
        return path


def _where(t, label: str) -> str:
    from ..dtypes import ascend_name

    return f"{label}: {t.position} ({t.memory.phys}) {ascend_name(t.dtype)}[{t.size}] at byte {t.offset}"


def describe_mmad(dst, fm, filter, *args, labels: tuple = ("dst", "a", "b", "bias"), title: str = "",  # noqa: A002
                  warnings: tuple = ()) -> Description:
    """Describe ``Mmad(dst, fm, filter, [bias,] params)`` of a call that ran (``warnings``: what it warned)."""
    from ..cube import mmad

    bias, params = (None, args[0]) if len(args) == 1 else args
    product = dst.pipe.product
    m, n, k = params.m, params.n, params.k
    call = (f"{title}: " if title else "") + f"Mmad({', '.join(labels[:3 + (bias is not None)])}, " \
        f"MmadParams(m={m}, n={n}, k={k}))   [Mmad, {product}]"
    lines = [f"C[{m} x {n}] = A[{m} x {k}] x B[{k} x {n}] + C0, accumulated in L0C"]
    if not (m and n and k):
        return Description(call, lines + ["a zero size: the call is a no-op (nothing read or written)"])
    gemv, m1, n1, _, a_foot, _, b_foot = mmad._geometry(m, n, k, product, fm.dtype, params.kDirectionAlign,
                                                        params.disableGemv)
    es_a, es_b, es_c = fm.dtype.itemsize, filter.dtype.itemsize, dst.dtype.itemsize
    k0 = 64 if fm.dtype == mmad.INT4 else 32 // es_a
    k1 = -(-k // k0)
    a_bytes = -(-a_foot // 2) if fm.dtype == mmad.INT4 else a_foot * es_a
    b_bytes = -(-b_foot // 2) if fm.dtype == mmad.INT4 else b_foot * es_b
    a_layout = ("a plain vector of k elements (GEMV: m == 1)" if gemv else
                f"Nz, {m1} x {k1} fractals of 16 x {k0}" if product.name == "ATLAS_350"
                else f"Zz, {m1} x {k1} fractals of 16 x {k0} (fractal rows one after another, row-major inside)")
    lines += [
        f"  {_where(fm, labels[1])}: A as {a_layout}; reads bytes [{fm.offset}, {fm.offset + a_bytes})",
        f"  {_where(filter, labels[2])}: B as Zn, {k1} x {n1} fractals of {k0} x 16 (column-major inside); reads "
        f"bytes [{filter.offset}, {filter.offset + b_bytes})",
        f"  {_where(dst, labels[0])}: C as Nz, {n1} fractal columns of {16 * m1} rows: element (i, j) at "
        f"(j//16)*{16 * m1 * 16} + i*16 + j%16; writes the whole {16 * m1} x {16 * n1} tile, bytes "
        f"[{dst.offset}, {dst.offset + m1 * n1 * 256 * es_c})"
        + ("; rows 1..15 of each fractal become undefined (GEMV)" if gemv else ""),
    ]
    if params.cmatrixInitVal and not params.isBias:
        init = "0 (cmatrixInitVal=true)" + ("; the bias tensor is ignored" if bias is not None else "")
    elif bias is not None or params.cmatrixSource:
        init = (f"the bias {labels[3]} ({bias.position}, one value per column)" if bias is not None
                else "BiasTable byte 0 onwards (cmatrixSource=true)")
    else:
        init = "the current L0C contents (accumulate)"
    lines.append(f"  initial value C0: {init}")
    if fm.dtype.kind in "iu":
        lines.append("  numerics: exact integer products and sums, saturated once to the result type")
    else:
        lines.append("  numerics: exact products, binary64 sums in increasing k, one rounding to "
                     f"{'half' if es_c == 2 else 'float'} (compare hardware results with the mmad rule)")
    lines.append("  padding rows/columns of the tile are computed from whatever L0A/L0B hold there")
    lines += [f"  warning: {w}" for w in warnings]
    return Description(call, lines)


def _mode(args) -> str | None:
    """The conversion a Fixpipe / DataCopy-out-of-L0C call applies (None: a bit copy)."""
    for a in args:
        name = type(a).__name__
        if name == "DataCopyEnhancedParams":
            deq = str(getattr(a.deqScale, "name", a.deqScale)).split("::")[-1].split(".")[-1]
            return None if deq == "DEQ_NONE" else deq
        if hasattr(a, "quantPre") and name != "MmadParams":
            mode = str(getattr(a.quantPre, "value", a.quantPre)).split("::")[-1]
            return None if mode == "NoQuant" else mode
    return None


def mark_converted(api: str, args: tuple, tr, func=None, dst=None, src=None, kwargs=None) -> None:
    """A call out of L0C that converts values (a quantisation mode): tags cannot follow values through a scale and
    a saturation (two different tags may land on the same int8, which would read as a fill). For a GM destination
    in ND / DN layout the same call without conversion (a float32 / int32 twin of the destination, same element
    positions) gives each output element its L0C origin, drawn as for a copy; otherwise every written element is
    marked computed. A note names the mode either way. Layout-only calls are left as traced."""
    from .trace import COMPUTED, COPY, FILL

    mode = _mode(args) if api in ("Fixpipe", "DataCopy") else None
    if mode is None:
        return
    hit = (tr.kind == COPY) | (tr.kind == FILL)
    twin = _layout_twin(func, dst, src, args, kwargs or {})
    if twin is not None and twin.kind.shape == tr.kind.shape:
        known = hit & (twin.kind == COPY)
        tr.kind[hit] = COMPUTED
        tr.kind[known] = COPY
        tr.origin[:] = np.where(known, twin.origin, -1)
        tr.read[:] = twin.read
        tr.warnings.append(f"{mode}: values are converted; each number is the L0C element the output is converted "
                           "from (the layout of the same call without quantisation)")
        return
    tr.kind[hit] = COMPUTED
    tr.origin[hit] = -1
    tr.warnings.append(f"{mode}: every written element is converted from one L0C element (origins not drawn; the "
                       "layout is that of the same call without quantisation)")


def _layout_twin(func, dst, src, args, kwargs):
    """The trace of ``func`` without conversion into a GM twin of ``dst`` typed like the L0C source, or None when
    that is not the same layout (NZ outputs count bytes and merge channels) or the twin call is refused."""
    from ..memory import GlobalTensor
    from .trace import trace

    if func is None or dst is None or not dst.is_global:
        return None
    params = args[-1]
    fields = params.as_dict()
    if type(params).__name__ == "DataCopyCO12DstParams":
        if not fields.get("nz2ndEn"):
            return None
        fields.update(quantPre="NoQuant", reluPre=0)
    elif api_is_fixpipe(params):
        config = kwargs.get("config")
        if config is not None and config.format.name == "NZ":
            return None
        fields.update(quantPre="NoQuant", reluEn=False)
    else:
        return None
    es = dst.dtype.itemsize
    total = dst.memory.data.size // es
    twin_dst = GlobalTensor(np.zeros(total, src.dtype))
    twin_dst = twin_dst[dst.offset // es] if dst.offset else twin_dst
    kw = {k: v for k, v in kwargs.items() if k != "dst1"}
    try:
        return trace(func, twin_dst, src, type(params)(**fields), **kw)
    except Exception:  # noqa: BLE001 - no twin: the caller marks the elements computed
        return None


def api_is_fixpipe(params) -> bool:
    return type(params).__name__.startswith("FixpipeParams")
