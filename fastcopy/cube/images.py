"""Whole-array fractal images beside ``to_nz`` / ``from_nz``: ``to_zz`` / ``from_zz`` (the L0A layout on most
products), ``to_zn`` / ``from_zn`` (the L0B layout), and the general ``to_fractal`` / ``from_fractal``.

For a ``(..., rows, cols)`` array and a layout of :mod:`fastcopy.cube.fractal` the image has shape
``(..., *fractal.image_shape(layout, rows, cols, dims))`` (e.g. Zz: ``(M1, K1, 16, C0)``, Zn of ``B[K][N]``:
``(K1, N1, 16, K0)``), every matrix element at its fractal offset, padding elements 0. Both directions run as one
plan through the shared kernels.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import ParamError
from ..dma.run import execute
from ..dma.lower import make_plan
from . import fractal
from .steps import element_steps


def _geometry(layout, dtype, api):
    es = np.dtype(dtype).itemsize
    if es not in (1, 2, 4):
        raise ParamError(f"{api}: dtype {np.dtype(dtype)} ({es} bytes) has no fractal layout (1, 2 or 4-byte types)")
    name = fractal.layout_name(layout)
    return name, fractal.fractal_dims(name, 8 * es), es


def fractal_shape(shape, dtype, layout) -> tuple:
    """The image shape of a ``(..., rows, cols)`` array in ``layout``."""
    name, dims, _ = _geometry(layout, dtype, "fractal_shape")
    if len(shape) < 2:
        raise ParamError(f"fractal_shape: needs (..., rows, cols), got {tuple(shape)}")
    return (*shape[:-2], *fractal.image_shape(name, int(shape[-2]), int(shape[-1]), dims))


def to_fractal(array, layout, out=None) -> np.ndarray:
    """The ``layout`` image ("Zz", "Zn", "Nz", "Nn") of a ``(..., rows, cols)`` array; pads are 0."""
    from ..formats import _out, _raw

    a = np.ascontiguousarray(np.asarray(array))
    name, dims, es = _geometry(layout, a.dtype, "to_fractal")
    shape = fractal_shape(a.shape, a.dtype, name)
    out = _out(out, shape, a.dtype, f"to_{name.lower()}", a)
    if out.size:
        batch = math.prod(a.shape[:-2])
        plan = _to_plan(batch, a.shape[-2], a.shape[-1], es, name, _raw(a)._sig, _raw(out)._sig)
        execute(plan, _raw(out), _raw(a))
    return out


def from_fractal(array, shape, layout, out=None) -> np.ndarray:
    """The ``(..., rows, cols)`` array of ``shape`` back from its ``layout`` image (pads are not read)."""
    from ..formats import _out, _raw

    a = np.ascontiguousarray(np.asarray(array))
    shape = tuple(int(s) for s in shape)
    name, dims, es = _geometry(layout, a.dtype, "from_fractal")
    want = fractal_shape(shape, a.dtype, name)
    if a.size != math.prod(want):
        raise ParamError(f"from_{name.lower()}: the {name} image of a {shape} {a.dtype} array has shape {want} "
                         f"({math.prod(want)} elements); got {a.shape} ({a.size} elements)")
    out = _out(out, shape, a.dtype, f"from_{name.lower()}", a)
    if out.size:
        plan = _from_plan(math.prod(shape[:-2]), shape[-2], shape[-1], es, name, _raw(a)._sig, _raw(out)._sig)
        execute(plan, _raw(out), _raw(a))
    return out


def _offsets(batch, rows, cols, name, es):
    dims = fractal.fractal_dims(name, 8 * es)
    size = math.prod(fractal.image_shape(name, rows, cols, dims))
    off = fractal.offsets(name, rows, cols, dims).reshape(-1)
    return (np.arange(batch, dtype=np.int64)[:, None] * size + off[None, :]).reshape(-1), batch * size


@lru_cache(maxsize=256)
def _to_plan(batch, rows, cols, es, name, src_sig, dst_sig):
    off, size = _offsets(batch, rows, cols, name, es)
    src = np.full(size, -1, np.int64)
    src[off] = np.arange(off.size, dtype=np.int64) * es  # every image element: its source, or a zero pad
    steps, _ = element_steps(np.arange(size, dtype=np.int64) * es, src, es, b"\0" * es)
    return make_plan(f"to_{name.lower()}", steps, src_sig, dst_sig)


@lru_cache(maxsize=256)
def _from_plan(batch, rows, cols, es, name, src_sig, dst_sig):
    off, _ = _offsets(batch, rows, cols, name, es)
    steps, _ = element_steps(np.arange(off.size, dtype=np.int64) * es, off * es, es)
    return make_plan(f"from_{name.lower()}", steps, src_sig, dst_sig)


def to_zz(array, out=None) -> np.ndarray:
    """Zz image (L0A, left matrix A[M][K]): shape ``(..., M1, K1, 16, C0)``,
    ``zz[..., m // 16, k // C0, m % 16, k % C0] = a[..., m, k]``, pads 0."""
    return to_fractal(array, "Zz", out)


def from_zz(array, shape, out=None) -> np.ndarray:
    """Inverse of :func:`to_zz` for a ``(..., M, K)`` matrix of ``shape``."""
    return from_fractal(array, shape, "Zz", out)


def to_zn(array, out=None) -> np.ndarray:
    """Zn image (L0B, right matrix B[K][N]): shape ``(..., K1, N1, 16, K0)`` with ``K0 = C0``,
    ``zn[..., k // K0, n // 16, n % 16, k % K0] = b[..., k, n]``, pads 0 (byte-identical to ``to_nz(b^T)``)."""
    return to_fractal(array, "Zn", out)


def from_zn(array, shape, out=None) -> np.ndarray:
    """Inverse of :func:`to_zn` for a ``(..., K, N)`` matrix of ``shape``."""
    return from_fractal(array, shape, "Zn", out)


__all__ = ["to_fractal", "from_fractal", "fractal_shape", "to_zz", "from_zz", "to_zn", "from_zn"]
