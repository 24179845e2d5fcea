"""Comparing a matmul result with a reference: the magnitude-scaled bound.

Exact emulation cannot promise the hardware's float bits: the cube adds partial sums in an unpublished order. Two
correct results of ``C = A x B + C0`` differ by at most a few rounding errors *of the magnitudes summed*, not of the
result (which may be tiny after cancellation), so a plain relative tolerance fails on correct data. The bound per
element of one Mmad call (``K0`` = fractal depth of the input type: 16 half/bfloat16, 8 float, 32 int8)::

    |x - x_ref| <= (ceil(k / K0) + 8) * 2^-23 * (|C0(i,j)| + sum_p |A(i,p) * B(p,j)|)

summed over the calls of a K loop; after a Fixpipe conversion to a float type add 1 ulp of that type, to an 8-bit
integer add 1, and for ``QF322F32_PRE`` a relative ``2^-10``. Integer Mmads are exact (bound 0).

For golden-data checks the bound is a compare rule: ``register_mmad_rule("mm_c", a, b, 16, out_dtype="half")``
adds the rule ``mm_c`` to ``fastcopy verify`` / :mod:`fastcopy.testing`, and a case output names it with
``compare = "mm_c"`` (or ``assert_golden_equal(out, folder, rule="mm_c")``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

UNIT = 2.0**-23


def mmad_tolerance(a, b, k0: int, c0=None, k_chunks=None, out_dtype=None, scale=None, relative=0.0) -> np.ndarray:
    """Allowed absolute difference per element of ``a @ b (+ c0)``.

    ``a`` (m x k) and ``b`` (k x n): the operands as the cube sees them (after HF32 rounding, if used); ``k0``:
    their fractal depth; ``k_chunks``: the ``k`` of each Mmad call of a K loop (default one call). ``out_dtype``:
    the Fixpipe output type (adds 1 ulp of a float type, 1 for 8-bit integers); ``scale``: the quantisation factor
    applied before that conversion (scales the matmul part of the bound); ``relative``: an extra relative allowance
    (2^-10 for QF322F32_PRE).
    """
    a = np.abs(np.asarray(a, np.float64))
    b = np.abs(np.asarray(b, np.float64))
    k = a.shape[1]
    chunks = [k] if k_chunks is None else list(k_chunks)
    if sum(chunks) != k:
        raise ValueError(f"mmad_tolerance: k_chunks {chunks} do not add up to k={k}")
    tol = np.zeros((a.shape[0], b.shape[1]))
    start = 0
    c_abs = np.zeros_like(tol) if c0 is None else np.abs(np.asarray(c0, np.float64))
    for kc in chunks:
        part = a[:, start:start + kc] @ b[start:start + kc]
        tol += (-(-kc // k0) + 8) * UNIT * (c_abs + part)
        c_abs = c_abs + part  # the next call starts from this call's result
        start += kc
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        tol[:] = 0
    if scale is not None:
        tol = tol * np.abs(np.asarray(scale, np.float64))
    return tol


def conversion_allowance(reference: np.ndarray, out_dtype) -> np.ndarray:
    """The extra allowance after a Fixpipe conversion: 1 ulp of a float type at the reference value, 1 for 8-bit
    integers, 0 otherwise."""
    dt = np.dtype(out_dtype)
    ref = np.asarray(reference, np.float64)
    if dt.kind == "f" or dt.name == "bfloat16":
        r = np.abs(ref).astype(dt)
        nxt = np.nextafter(r.astype(np.float32), np.float32(np.inf)) if dt == np.float32 else None
        if nxt is not None:
            return (nxt.astype(np.float64) - r.astype(np.float64))
        # spacing of the smaller formats: from their bit patterns
        bits = r.view(np.uint16).astype(np.uint32) + 1
        up = bits.astype(np.uint16).view(dt).astype(np.float64)
        return np.abs(up - r.astype(np.float64))
    if dt.itemsize == 1 and dt.kind in "iu":
        return np.ones(ref.shape)
    return np.zeros(ref.shape)


class BoundCheck(NamedTuple):
    ok: bool
    failures: int
    elements: int
    worst: float  # largest |diff| / tolerance (<= 1 passes)
    worst_index: tuple | None


def check_mmad(actual, reference, tolerance) -> BoundCheck:
    """Whether ``|actual - reference| <= tolerance`` everywhere (NaN must match NaN, inf must match inf)."""
    x = np.asarray(actual, np.float64)
    r = np.asarray(reference, np.float64)
    tol = np.broadcast_to(np.asarray(tolerance, np.float64), r.shape)
    same = (x == r) | (np.isnan(x) & np.isnan(r))
    with np.errstate(invalid="ignore"):
        diff = np.abs(x - r)
        bad = ~same & ~(diff <= tol)
        ratio = np.where(same, 0.0, np.where(tol > 0, diff / np.where(tol > 0, tol, 1), np.inf))
    worst_i = None
    worst = 0.0
    if ratio.size:
        flat = int(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio)))
        worst = float(ratio.reshape(-1)[flat])
        worst_i = tuple(int(v) for v in np.unravel_index(flat, r.shape))
    return BoundCheck(not bad.any(), int(bad.sum()), int(r.size), worst, worst_i)


def devkit_close(actual, reference, rtol: float = 1e-6, atol: float = 1e-9, ratio: float = 1e-4) -> bool:
    """The devkit example scripts' check: ``isclose(rtol, atol)`` failing on at most ``ratio`` of the elements.
    Offered for comparison with their goldens; it fails on correct data with cancellation."""
    close = np.isclose(np.asarray(actual, np.float64), np.asarray(reference, np.float64), rtol=rtol, atol=atol)
    return float((~close).mean()) <= ratio if close.size else True


def register_mmad_rule(name: str, a, b, k0: int, c0=None, k_chunks=None, out_dtype=None, scale=None) -> str:
    """Register the compare rule ``name``: an element passes when it is within :func:`mmad_tolerance` (plus the
    conversion allowance of ``out_dtype``) of the golden value. ``a``, ``b`` are the matmul operands the output was
    computed from (its elements in row-major ``m x n`` order). Returns ``name``."""
    from ..golden.rules import register_rule

    base = mmad_tolerance(a, b, k0, c0=c0, k_chunks=k_chunks, scale=scale).reshape(-1)

    def rule(actual, expected, *, rtol=0.0, atol=0.0, context=None):
        e = np.asarray(expected).astype(np.float64).reshape(-1)
        if e.size != base.size:
            raise ValueError(f"compare rule {name!r}: the output has {e.size} compared elements, the matmul "
                             f"{base.size} (the rule needs every element defined, in m x n order)")
        tol = base + (conversion_allowance(e, out_dtype) if out_dtype is not None else 0.0) + atol + rtol * np.abs(e)
        x = np.asarray(actual).astype(np.float64).reshape(-1)
        same = (x == e) | (np.isnan(x) & np.isnan(e))
        with np.errstate(invalid="ignore"):
            excess = np.abs(x - e) - tol
        return np.where(same, 0.0, np.where(np.isnan(excess), np.inf, np.maximum(excess, 0.0)))

    register_rule(name, rule, f"matmul result within the magnitude-scaled bound of its operands ({name})")
    return name
