"""Numba kernels of the Mmad numerics: float64 dot products summed strictly in increasing ``p``."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, boundscheck=False, nogil=True)
def ordered_dots(a, bt, rows, cols, out):  # pragma: no cover - compiled
    """``out[q] = sum_p a[rows[q], p] * bt[cols[q], p]``, added left to right (a: m x k, bt: n x k)."""
    k = a.shape[1]
    for q in range(rows.size):
        r = rows[q]
        c = cols[q]
        acc = 0.0
        for p in range(k):
            acc += a[r, p] * bt[c, p]
        out[q] = acc


@numba.njit(cache=True, boundscheck=False, nogil=True)
def settle_f32(a, b, s, c0, has_c0, scale, out):  # pragma: no cover - compiled
    """For float32 results: ``out = s + c0`` where the float32 rounding of every value within
    ``+-scale*rowsum|a|*colmax|b|`` of the sum agrees; elsewhere (also wherever an input is inf or NaN, which makes
    the interval NaN) the ordered sum plus ``c0``. Returns the count of recomputed elements. ``s`` holds BLAS sums
    (any order)."""
    m, k = a.shape
    n = b.shape[1]
    rs = np.empty(m)
    cm = np.zeros(n)
    for i in range(m):
        acc = 0.0
        for p in range(k):
            acc += abs(a[i, p])
        rs[i] = acc * scale
    for p in range(k):
        for j in range(n):
            v = abs(b[p, j])
            if not v <= cm[j]:  # NaN propagates (then every element of the column is recomputed)
                cm[j] = v
    redo = 0
    for i in range(m):
        for j in range(n):
            e = rs[i] * cm[j]
            c = c0[i, j] if has_c0 else 0.0
            v = s[i, j]
            lo = np.float32((v - e) + c)
            hi = np.float32((v + e) + c)
            if lo == hi:
                out[i, j] = v + c
            else:
                acc = 0.0
                for p in range(k):
                    acc += a[i, p] * b[p, j]
                out[i, j] = acc + c
                redo += 1
    return redo


@numba.njit(cache=True, boundscheck=False, nogil=True)
def gather_decode(raw, offs, lut, out):  # pragma: no cover - compiled
    """``out[i, j] = lut[raw[offs[i, j]]]`` (16-bit patterns decoded through a 65536-entry float64 table);
    returns True if any decoded value is NaN."""
    nan = False
    rows, cols = offs.shape
    for i in range(rows):
        for j in range(cols):
            v = lut[raw[offs[i, j]]]
            out[i, j] = v
            if v != v:
                nan = True
    return nan
