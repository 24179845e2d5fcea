"""Whole-array fractal images beside ``to_nz`` / ``from_nz``: ``to_zz`` / ``from_zz`` (the L0A layout on most
products), ``to_zn`` / ``from_zn`` (the L0B layout), and the general ``to_fractal`` / ``from_fractal``.

For a ``(..., rows, cols)`` array and a layout of :mod:`fastcopy.cube.fractal` the image has shape
``(..., *fractal.image_shape(layout, rows, cols, dims))`` (e.g. Zz: ``(M1, K1, 16, C0)``, Zn of ``B[K][N]``:
``(K1, N1, 16, K0)``), every matrix element at its fractal offset, padding elements 0. Both directions run as one
plan through the shared kernels.

Packed 4-bit types (``ml_dtypes.int4`` / ``float4_e2m1fn`` arrays, or 4-bit codes with ``dtype="fp4x2_e1m2_t"``):
the fractal is 16 x 64 values (Zn: 64 x 16) and the image comes back **packed**, as the buffer holds it: uint8, the
last axis halved (two values per byte, the even one in the low nibble). ``from_*`` take that packed image and
``dtype=`` and return the values.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..dtypes import as_dtype, ascend_name
from ..errors import ParamError
from ..dma.run import execute
from ..dma.lower import make_plan
from . import b4, fractal
from .b4 import bits_of
from .steps import element_steps


def _geometry(layout, dtype, api):
    """``(layout name, fractal dims, bytes per numpy element, bits per value)``."""
    bits = bits_of(dtype)
    es = np.dtype(dtype).itemsize
    if es not in (1, 2, 4):
        raise ParamError(f"{api}: dtype {np.dtype(dtype)} ({es} bytes) has no fractal layout (1, 2 or 4-byte types, "
                         "or a packed 4-bit type)")
    name = fractal.layout_name(layout)
    return name, fractal.fractal_dims(name, bits), es, bits


def _dtype(a, dtype):
    return np.dtype(a.dtype) if dtype is None else as_dtype(dtype)


def fractal_shape(shape, dtype, layout) -> tuple:
    """The image shape of a ``(..., rows, cols)`` array in ``layout`` (4-bit types: the packed bytes' shape)."""
    name, dims, _, bits = _geometry(layout, as_dtype(dtype), "fractal_shape")
    if len(shape) < 2:
        raise ParamError(f"fractal_shape: needs (..., rows, cols), got {tuple(shape)}")
    img = fractal.image_shape(name, int(shape[-2]), int(shape[-1]), dims)
    return (*shape[:-2], *img[:-1], img[-1] // 2 if bits == 4 else img[-1])


def to_fractal(array, layout, out=None, dtype=None) -> np.ndarray:
    """The ``layout`` image ("Zz", "Zn", "Nz", "Nn") of a ``(..., rows, cols)`` array; pads are 0. 4-bit values
    (``dtype=`` names the type of integer codes): the packed uint8 image."""
    from ..formats import _out, _raw

    a = np.ascontiguousarray(np.asarray(array))
    dt = _dtype(a, dtype)
    name, dims, es, bits = _geometry(layout, dt, "to_fractal")
    api = f"to_{name.lower()}"
    shape = fractal_shape(a.shape, dt, name)
    if bits == 4:
        a = b4.codes(a, dt, api)
        out = _out(out, shape, np.dtype(np.uint8), api, a)
        img = np.empty((*shape[:-1], 2 * shape[-1]), np.uint8)
    else:
        out = img = _out(out, shape, a.dtype, api, a)
    if out.size:
        batch = math.prod(a.shape[:-2])
        plan = _to_plan(batch, a.shape[-2], a.shape[-1], es, bits, name, _raw(a)._sig, _raw(img)._sig)
        execute(plan, _raw(img), _raw(a))
        if bits == 4:
            out[...] = b4.pack4(img, b4.FP4_E1M2)
    return out


def from_fractal(array, shape, layout, out=None, dtype=None) -> np.ndarray:
    """The ``(..., rows, cols)`` array of ``shape`` back from its ``layout`` image (pads are not read). 4-bit
    types: ``array`` is the packed uint8 image and ``dtype=`` the type (values come back as ml_dtypes values,
    codes for ``fp4x2_e1m2_t``)."""
    from ..formats import _out, _raw

    a = np.ascontiguousarray(np.asarray(array))
    shape = tuple(int(s) for s in shape)
    dt = _dtype(a, dtype)
    name, dims, es, bits = _geometry(layout, dt, "from_fractal")
    api = f"from_{name.lower()}"
    want = fractal_shape(shape, dt, name)
    if a.size != math.prod(want) or (bits == 4 and a.dtype.itemsize != 1):
        raise ParamError(f"{api}: the {name} image of a {shape} {ascend_name(dt)} array has shape {want} "
                         f"({math.prod(want)} {'bytes' if bits == 4 else 'elements'}); got {a.shape} {a.dtype}")
    if bits == 4:
        a = b4.unpack4(a.reshape(want), b4.FP4_E1M2)
        out = _out(out, shape, np.dtype(np.uint8) if dt == b4.FP4_E1M2 else dt, api, a)
        res = np.empty(shape, np.uint8)
    else:
        out = res = _out(out, shape, a.dtype, api, a)
    if out.size:
        plan = _from_plan(math.prod(shape[:-2]), shape[-2], shape[-1], es, bits, name, _raw(a)._sig,
                          _raw(res)._sig)
        execute(plan, _raw(res), _raw(a))
        if bits == 4:
            out[...] = b4.from_codes(res, dt)
    return out


def _offsets(batch, rows, cols, name, bits):
    dims = fractal.fractal_dims(name, bits)
    size = math.prod(fractal.image_shape(name, rows, cols, dims))
    off = fractal.offsets(name, rows, cols, dims).reshape(-1)
    return (np.arange(batch, dtype=np.int64)[:, None] * size + off[None, :]).reshape(-1), batch * size


@lru_cache(maxsize=256)
def _to_plan(batch, rows, cols, es, bits, name, src_sig, dst_sig):
    off, size = _offsets(batch, rows, cols, name, bits)
    src = np.full(size, -1, np.int64)
    src[off] = np.arange(off.size, dtype=np.int64) * es  # every image element: its source, or a zero pad
    steps, _ = element_steps(np.arange(size, dtype=np.int64) * es, src, es, b"\0" * es)
    return make_plan(f"to_{name.lower()}", steps, src_sig, dst_sig)


@lru_cache(maxsize=256)
def _from_plan(batch, rows, cols, es, bits, name, src_sig, dst_sig):
    off, _ = _offsets(batch, rows, cols, name, bits)
    steps, _ = element_steps(np.arange(off.size, dtype=np.int64) * es, off * es, es)
    return make_plan(f"from_{name.lower()}", steps, src_sig, dst_sig)


def to_zz(array, out=None, dtype=None) -> np.ndarray:
    """Zz image (L0A, left matrix A[M][K]): shape ``(..., M1, K1, 16, C0)``,
    ``zz[..., m // 16, k // C0, m % 16, k % C0] = a[..., m, k]``, pads 0 (4-bit types: packed, ``C0/2`` bytes)."""
    return to_fractal(array, "Zz", out, dtype)


def from_zz(array, shape, out=None, dtype=None) -> np.ndarray:
    """Inverse of :func:`to_zz` for a ``(..., M, K)`` matrix of ``shape``."""
    return from_fractal(array, shape, "Zz", out, dtype)


def to_zn(array, out=None, dtype=None) -> np.ndarray:
    """Zn image (L0B, right matrix B[K][N]): shape ``(..., K1, N1, 16, K0)`` with ``K0 = C0``,
    ``zn[..., k // K0, n // 16, n % 16, k % K0] = b[..., k, n]``, pads 0 (byte-identical to ``to_nz(b^T)``;
    4-bit types: packed, ``K0/2`` bytes)."""
    return to_fractal(array, "Zn", out, dtype)


def from_zn(array, shape, out=None, dtype=None) -> np.ndarray:
    """Inverse of :func:`to_zn` for a ``(..., K, N)`` matrix of ``shape``."""
    return from_fractal(array, shape, "Zn", out, dtype)


__all__ = ["to_fractal", "from_fractal", "fractal_shape", "to_zz", "from_zz", "to_zn", "from_zn"]
