"""numpy slices -> SliceInfo lists for the sliced DataCopy (semantics.md §7).

``slice_infos(shape, index, dtype)`` returns ``(dstSliceInfo, srcSliceInfo)`` such that::

    DataCopy(dst, src, dstSliceInfo, srcSliceInfo, len(srcSliceInfo))
    ==  dst.reshape(dst_shape)[dst_index] = src.reshape(shape)[index].reshape(dst[dst_index].shape)

with a dense destination of the sliced shape by default, or raises the error of the hardware rule that no
SliceInfo layout can meet. ``index`` is basic numpy indexing: integers, ``start:stop:step`` slices with
``step >= 1``, ``...``; innermost (contiguous) axis last, as numpy orders them.

How: each side's axes are rewritten exactly (an axis that selects one index folds into the axis below; a fully
selected axis fuses with a unit-step axis above it), then dimension 0 is either the innermost run split into
runs of ``L`` elements (stride 0), or the innermost run repeated along the next axis (runs with a gap). The two
sides must agree on ``L``, the number of runs and the number of higher combinations; every matching layout is
validated by the planner itself, the one with the fewest combinations (fewest device calls) wins.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .dtypes import as_dtype, ascend_name
from .errors import FastCopyError, OutOfBoundsError, ParamError, ParamTypeError, UnsupportedError
from .integers import as_int
from .memory import TensorSig, current_pipe
from .ops.common import Call, check_path
from .ops.slice import BLK, MAX_BURST_LEN, MAX_RUNS, plan_keys
from .params import SliceInfo
from .products import DEFAULT_PRODUCT, SLICE_PATHS, Phys, Product, TPosition

API = "slice_infos"
_MAX_TRIES = 256


class SliceInfos(NamedTuple):
    """``(dstSliceInfo, srcSliceInfo)``, destination first as DataCopy takes them; ``.dimValue`` = the length."""

    dstSliceInfo: list
    srcSliceInfo: list

    @property
    def dimValue(self) -> int:  # noqa: N802
        return len(self.srcSliceInfo)


class _Axis(NamedTuple):
    """Selected indices ``start + j*step`` (``j < count``) of an axis of ``extent`` elements."""

    start: int
    count: int
    step: int
    extent: int


class _Layout(NamedTuple):
    """One side as SliceInfo geometry: dim 0 (start, runs n0 of L with stride, shape) + higher axes."""

    run: int  # L, elements
    n0: int
    combos: int
    dim0: tuple  # SliceInfo fields
    higher: tuple  # _Axis per dimension >= 1


def slice_infos(shape, index, dtype, dst_shape=None, dst_index=(), *, direction: str = "GM->UB",
                product=None) -> SliceInfos:
    """``(dstSliceInfo, srcSliceInfo)`` copying ``src.reshape(shape)[index]`` into
    ``dst.reshape(dst_shape)[dst_index]`` (C order on both sides; default destination: dense, shaped like the
    slice). ``direction`` is ``"GM->UB"`` (gather from a GM array) or ``"UB->GM"`` (scatter into one);
    ``product`` defaults to the current TPipe's. Raises the FastCopyError of the rule no layout can meet."""
    dt = as_dtype(dtype)
    product = _product(product)
    if direction not in ("GM->UB", "UB->GM"):
        raise FastCopyError(f"{API}: direction={direction!r} must be 'GM->UB' or 'UB->GM'")
    to_gm = direction == "UB->GM"
    shape = _shape(shape, "shape")
    src_axes, sel_shape = _axes(shape, index, "index")
    dst_shape = sel_shape if dst_shape is None else _shape(dst_shape, "dst_shape")
    dst_axes, dst_sel_shape = _axes(dst_shape, () if dst_index is None else dst_index, "dst_index")
    n_src, n_dst = int(np.prod(sel_shape, dtype=np.int64)), int(np.prod(dst_sel_shape, dtype=np.int64))
    if n_src != n_dst:
        raise ParamError(f"{API}: the source slice has {n_src} elements {sel_shape} but the destination slice "
                         f"has {n_dst} {dst_sel_shape}; a sliced copy pairs elements one to one")

    src_pos, dst_pos = (TPosition.VECOUT, TPosition.GM) if to_gm else (TPosition.GM, TPosition.VECIN)
    src_sig = _sig(src_pos, dt, shape)
    dst_sig = _sig(dst_pos, dt, dst_shape)
    check_path(Call(f"{API}: DataCopy(SliceInfo)", product, src_sig, dst_sig), SLICE_PATHS, dt)

    src_layouts = _layouts(src_axes, dt, "source", shape, index)
    dst_layouts = _layouts(dst_axes, dt, "destination", dst_shape, dst_index)
    by_key = {}
    for lay in dst_layouts:
        by_key.setdefault((lay.run, lay.n0, lay.combos), []).append(lay)
    pairs = [(s, d) for s in src_layouts for d in by_key.get((s.run, s.n0, s.combos), ())]
    if not pairs:
        raise UnsupportedError(f"{API}: no common run structure: the source can be moved as (run elements, runs, "
                               f"combinations) {_keys_text(src_layouts)}, the destination as "
                               f"{_keys_text(dst_layouts)}; both sides must move the same runs")
    pairs.sort(key=lambda p: (p[0].combos, max(len(p[0].higher), len(p[1].higher)), -p[0].run))

    errors, fallback = [], None
    for s, d in pairs[:_MAX_TRIES]:
        dims = max(len(s.higher), len(d.higher)) + 1
        sinfo, dinfo = _infos(s, dims), _infos(d, dims)
        try:
            plan = plan_keys(tuple(i.key() for i in dinfo), tuple(i.key() for i in sinfo), dims, src_sig, dst_sig,
                             product, None, None)
        except FastCopyError as exc:
            errors.append(exc)
            continue
        if not plan.warnings:
            return SliceInfos(dinfo, sinfo)
        fallback = fallback or SliceInfos(dinfo, sinfo)
    if fallback is not None:
        return fallback  # DataCopy will warn about it
    first = errors[0]
    others = list(dict.fromkeys(str(e) for e in errors[1:] if str(e) != str(first)))[:2]
    more = f"; other layouts fail with: {' | '.join(others)}" if others else ""
    raise type(first)(f"{API}: no SliceInfo layout meets the hardware rules on {product} "
                      f"({len(errors)} tried): {first}{more}") from first


def _product(product) -> Product:
    if product is not None:
        return Product.get(product)
    pipe = current_pipe(required=False)
    return pipe.product if pipe is not None else DEFAULT_PRODUCT


def _shape(shape, what) -> tuple:
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise ParamTypeError(f"{API}: {what}={shape!r} must be a tuple of extents")
    shape = tuple(as_int(n, API, f"{what}[{k}]", "elements") for k, n in enumerate(shape))
    if not shape or any(n < 1 for n in shape):
        raise ParamError(f"{API}: {what}={shape} must have at least one axis, every extent >= 1")
    return shape


def _sig(position, dtype, shape) -> TensorSig:
    phys = Phys.GM if position is TPosition.GM else Phys.UB
    return TensorSig(position, phys, dtype, int(np.prod(shape, dtype=object)) * dtype.itemsize, 0, 0)


def _axes(shape, index, what) -> tuple[list, tuple]:
    """(axes innermost first, numpy result shape) of basic indexing ``index`` into ``shape``."""
    if not isinstance(index, tuple):
        index = (index,)
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise ParamError(f"{API}: {what} has more than one '...'")
    n_real = sum(1 for i in index if i is not Ellipsis)
    if n_real > len(shape):
        raise OutOfBoundsError(f"{API}: {what} indexes {n_real} axes but the array has {len(shape)}")
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (len(shape) - n_real) + index[k + 1:]
    index = index + (slice(None),) * (len(shape) - len(index))
    axes, result = [], []
    for ax, (i, n) in enumerate(zip(index, shape)):
        if isinstance(i, numbers.Integral) and not isinstance(i, (bool, np.bool_)):
            i = int(i)
            if not -n <= i < n:
                raise OutOfBoundsError(f"{API}: {what} axis {ax}: index {i} is out of bounds for extent {n}")
            axes.append(_Axis(i % n, 1, 1, n))
        elif isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 1:
                raise UnsupportedError(f"{API}: {what} axis {ax}: step={step}; the hardware walks every dimension "
                                       "upwards (SliceInfo strides are >= 0), so steps must be >= 1")
            count = len(range(start, stop, step))
            if count == 0:
                raise ParamError(f"{API}: {what} axis {ax}: slice {_slice_text(i)} selects nothing of extent {n}; a "
                                 "sliced copy selects at least one index per dimension (semantics.md §8.1)")
            axes.append(_Axis(start, count, step if count > 1 else 1, n))
            result.append(count)
        else:
            raise UnsupportedError(f"{API}: {what} axis {ax}: {i!r} is not an integer or a slice; only basic "
                                   "indexing (integers, start:stop:step, ...) maps to SliceInfo")
    return axes[::-1], tuple(result)


def _slice_text(s: slice) -> str:
    text = f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
    return text if s.step is None else f"{text}:{s.step}"


def _fuses(low: _Axis, a: _Axis) -> bool:
    """Whether ``a`` (the axis above ``low``) continues ``low``'s progression: ``count*step == extent``, unit step."""
    return a.step == 1 and low.count * low.step == low.extent


def _fuse(low: _Axis, a: _Axis) -> _Axis:
    """One axis for ``low`` and ``a`` when :func:`_fuses`: indices ``low.start + a.start*low.extent + j*low.step``."""
    return _Axis(low.start + a.start * low.extent, low.count * a.count, low.step, low.extent * a.extent)


def _coalesce(axes) -> list:
    """Fuse adjacent axes while they continue each other (numpy-style), innermost first."""
    out = []
    for a in axes:
        if out and _fuses(out[-1], a):
            out[-1] = _fuse(out[-1], a)
        else:
            out.append(a)
    return out


def _run_variants(axes) -> list:
    """Exact rewrites of ``axes`` (innermost first): count-1 axes fold into the axis below (always); the run
    (axis 0) fuses with 0, 1, ... axes above it while it is fully selected (one variant each)."""
    folded = [axes[0]]
    for a in axes[1:]:
        low = folded[-1]
        if a.count == 1:
            folded[-1] = _Axis(low.start + a.start * low.extent, low.count, low.step, low.extent * a.extent)
        else:
            folded.append(a)
    variants = [folded]
    cur = folded
    while len(cur) > 1 and cur[0].step == 1 and _fuses(cur[0], cur[1]):
        cur = [_fuse(cur[0], cur[1])] + cur[2:]
        variants.append(cur)
    return variants


def _layouts(axes, dt, what, shape, index) -> list:
    """Candidate dimension-0 layouts of one side (see the module docstring)."""
    es = dt.itemsize
    q = BLK // es  # elements per block
    out = []
    for ax in _run_variants(axes):
        a0, hi = ax[0], ax[1:]
        if a0.count > 1 and a0.step != 1:
            raise UnsupportedError(f"{API}: the innermost axis of the {what} has step {a0.step} ({a0.count} of "
                                   f"{a0.extent} elements); dimension 0 moves contiguous runs of "
                                   "burstLen*32 bytes (semantics.md §7.1), so the innermost slice needs step 1")
        c0 = a0.count
        if c0 % q:
            continue
        # A: the run split into n0 runs of L (stride 0); higher axes coalesced
        higher = tuple(_coalesce(hi))
        for n0 in _divisors(c0 // q):
            run = c0 // n0
            if n0 > MAX_RUNS or run // q > MAX_BURST_LEN:
                continue
            dim0 = (a0.start, a0.start + c0 - 1, 0, run // q, a0.extent)
            out.append(_Layout(run, n0, _prod(a.count for a in higher), dim0, higher))
        # B: the run repeated along the next axis (runs with a gap), that axis fused with m - 1 above it
        if not hi or c0 // q > MAX_BURST_LEN:
            continue
        a1 = hi[0]
        for m in range(1, len(hi) + 1):
            if m > 1:
                if not _fuses(a1, hi[m - 1]):
                    break
                a1 = _fuse(a1, hi[m - 1])
            start = a0.start + a1.start * a0.extent
            stride = a1.step * a0.extent - c0
            end = start + (a1.count - 1) * (c0 + stride) + c0 - 1
            dim0 = (start, end, stride, c0 // q, a0.extent * a1.extent)
            higher = tuple(_coalesce(hi[m:]))
            out.append(_Layout(c0, a1.count, _prod(a.count for a in higher), dim0, higher))
    if not out:
        run = _run_variants(axes)[-1][0]
        raise UnsupportedError(f"{API}: the innermost contiguous run of the {what} (shape {shape}, index "
                               f"{index!r}) is {run.count} elements = {run.count * es} bytes, not a multiple of "
                               f"32: dimension 0 moves whole runs of burstLen*32 bytes (semantics.md §7.2 rule 2), "
                               f"so it must hold a multiple of {q} elements of {ascend_name(dt)}")
    return out


def _divisors(n: int) -> list:
    """Divisors of n in increasing order (n0 candidates: fewest runs first)."""
    small, large = [], []
    k = 1
    while k * k <= n:
        if n % k == 0:
            small.append(k)
            if k * k != n:
                large.append(n // k)
        k += 1
    return small + large[::-1]


def _prod(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def _keys_text(layouts) -> str:
    keys = sorted({(lay.run, lay.n0, lay.combos) for lay in layouts}, key=lambda k: (k[2], -k[0]))
    text = ", ".join(f"({r}, {n}, {c})" for r, n, c in keys[:6])
    return text + (", ..." if len(keys) > 6 else "")


def _infos(lay: _Layout, dims: int) -> list:
    """The SliceInfo list of a layout, padded with one-index dimensions to ``dims`` entries."""
    out = [SliceInfo(*lay.dim0)]
    for a in lay.higher:
        out.append(SliceInfo(a.start, a.start + (a.count - 1) * a.step, a.step - 1, 1, a.extent))
    while len(out) < dims:
        out.append(SliceInfo(0, 0, 0, 1, 1))
    return out
