"""The ``mmad`` compare rule: a matmul output within the magnitude-scaled bound of its operands.

A case names it per output, with the GM input buffers the matmul was computed from::

    outputs = [{buffer = "cGm", compare = {rule = "mmad", a = "aGm", b = "bGm"}}]

``fastcopy verify`` / :mod:`fastcopy.testing` then read ``a`` and ``b`` back from the golden folder's input files
(the manifest records the options) and allow, per element, the bound of :func:`fastcopy.cube.bound.mmad_tolerance`
plus the conversion allowance of the output type (1 ulp of half / bfloat16, 1 for 8-bit integers). Options:

==============  =================================================================================================
``a``, ``b``    GM input buffers holding A (m x k) and B (k x n) (required)
``transpose_a`` the buffer holds A transposed (k x m); ``transpose_b`` likewise for B (n x k)
``bias``        a GM input buffer with the initial value per column (n values; the BiasTable's contents)
``scale``       the quantisation factor applied before the output conversion (scales the matmul part)
``k_chunks``    the ``k`` of each Mmad call of a K loop (default: one call)
``k0``          the fractal depth of the inputs (default ``32 / sizeof(A)``: 16 half, 8 float, 32 int8)
==============  =================================================================================================

The output's defined elements, in order, must be the ``m x n`` result row by row.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import CompareError
from .rules import register_rule

NAME = "mmad"
#: option -> (kind, what is allowed); kinds: buffer (a GM input buffer), bool, number, ints (a list of integers)
OPTIONS = {
    "a": ("buffer", "the GM input buffer holding A (m x k)"),
    "b": ("buffer", "the GM input buffer holding B (k x n)"),
    "transpose_a": ("bool", "true when the buffer holds A transposed (k x m)"),
    "transpose_b": ("bool", "true when the buffer holds B transposed (n x k)"),
    "bias": ("buffer", "the GM input buffer with the initial value of each column (n values)"),
    "scale": ("number", "the quantisation factor applied before the output conversion"),
    "k_chunks": ("ints", "the k of each Mmad call of a K loop"),
    "k0": ("int", "the fractal depth of the inputs (16 half, 8 float, 32 int8)"),
}
REQUIRED = ("a", "b")


def _input(context: dict, name: str) -> np.ndarray:
    from ..dtypes import as_dtype

    manifest, folder = context.get("manifest") or {}, context.get("folder")
    entry = next((b for b in manifest.get("buffers", []) if b.get("name") == name and b.get("role") == "input"), None)
    if entry is None or folder is None:
        raise CompareError(f"compare rule {NAME!r}: no input buffer {name!r} in the golden folder's manifest (the "
                           "operands must be GM buffers with an init, written as input files)")
    path = os.path.join(folder, *entry["file"].split("/"))
    try:
        data = np.fromfile(path, as_dtype(entry["numpy_dtype"]))
    except OSError as exc:
        raise CompareError(f"compare rule {NAME!r}: cannot read {path}: {exc.strerror}") from None
    return data.reshape(entry["shape"])


def _matrix(context, opts, key) -> np.ndarray:
    arr = _input(context, opts[key])
    if arr.ndim != 2:
        arr = arr.reshape(-1, arr.shape[-1]) if arr.ndim > 2 else arr.reshape(1, -1)
    return arr.T if opts.get(f"transpose_{key}") else arr


def tolerance(opts: dict, context: dict, out_dtype) -> np.ndarray:
    """The allowed |difference| of every ``m x n`` element (flat, row-major) before the conversion allowance."""
    from ..cube.bound import mmad_tolerance

    a, b = _matrix(context, opts, "a"), _matrix(context, opts, "b")
    if a.shape[1] != b.shape[0]:
        raise CompareError(f"compare rule {NAME!r}: A is {a.shape[0]} x {a.shape[1]} and B {b.shape[0]} x "
                           f"{b.shape[1]}: k differs (set transpose_a / transpose_b?)")
    k0 = opts.get("k0") or max(1, 32 // a.dtype.itemsize)
    c0 = None
    if opts.get("bias"):
        bias = _input(context, opts["bias"]).reshape(-1).astype(np.float64)
        if bias.size < b.shape[1]:
            raise CompareError(f"compare rule {NAME!r}: bias {opts['bias']!r} has {bias.size} values, n is "
                               f"{b.shape[1]}")
        c0 = np.broadcast_to(bias[:b.shape[1]], (a.shape[0], b.shape[1]))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":  # integer Mmads are exact
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
    try:
        tol = mmad_tolerance(a64, b64, k0, c0=c0, k_chunks=opts.get("k_chunks"), scale=opts.get("scale"))
    except ValueError as exc:
        raise CompareError(f"compare rule {NAME!r}: {exc}") from None
    return tol.reshape(-1)


def _mask(context: dict, n: int):
    entry, folder = context.get("entry") or {}, context.get("folder")
    if not entry.get("mask") or folder is None:
        return None
    m = np.fromfile(os.path.join(folder, *entry["mask"].split("/")), np.uint8)
    return m != 0 if m.size == n else None


def mmad_rule(actual, expected, *, rtol=0.0, atol=0.0, context=None):
    """matmul result within the magnitude-scaled bound of its operands (options: a, b, ...)"""
    from ..cube.bound import conversion_allowance

    context = context or {}
    opts = (context.get("entry") or {}).get("compare_options")
    if not opts or not all(k in opts for k in REQUIRED):
        raise CompareError(f"compare rule {NAME!r} needs the matmul's operands: in the case write compare = "
                           "{rule = \"mmad\", a = \"aGm\", b = \"bGm\"} (GM input buffers)")
    base = tolerance(opts, context, expected.dtype)
    if expected.size != base.size:  # only the defined elements are compared: map them onto the m x n result
        mask = _mask(context, base.size)
        if mask is None or int(mask.sum()) != expected.size:
            raise CompareError(f"compare rule {NAME!r}: the output has {expected.size} compared elements, the "
                               f"matmul {base.size} (the output must be the m x n result, row by row)")
        base = base[mask]
    e = expected.astype(np.float64)
    dt = expected.dtype
    if not (dt == np.float32 or dt == np.int32):  # a conversion on the way out of L0C
        base = base + conversion_allowance(e, dt)
    tol = base + atol + rtol * np.abs(e)
    x = actual.astype(np.float64)
    same = (x == e) | (np.isnan(x) & np.isnan(e))
    with np.errstate(invalid="ignore"):
        excess = np.abs(x - e) - tol
    return np.where(same, 0.0, np.where(np.isnan(excess), np.inf, np.maximum(excess, 0.0)))


register_rule(NAME, mmad_rule, "matmul result within the magnitude-scaled bound of its operands (fastcopy.cube.bound)")
