"""Mmad float numerics: exact products, float64 sums in increasing ``k``, ``C0`` added, one final rounding.

:func:`matmul_rounded` returns ``encode(fl64(sum_{p<k} A[i,p]*B[p,j]) + C0[i,j])`` with the float64 sum formed
in increasing ``p`` (each product of two inputs is exact in float64: at most 2 x 24 significant bits).

Fast path: BLAS forms the sums in its own order. Two float64 summations of the same ``k`` products differ by at
most ``2*gamma_k*sum|a*b|`` (``gamma_k = k*2^-53/(1 - k*2^-53)``), bounded with ``rowsum|A| * colmax|B|``. Where
the final rounding maps the whole interval around the BLAS sum to one result, that result is the ordered one
(rounding is monotone); the few elements whose interval straddles a rounding boundary are recomputed in the
stated order. Non-finite inputs take the ordered path for everything.

A NaN sum is made positive before the encoding: its sign would depend on the order of the additions (x86 keeps the
first operand of NaN + NaN, inf * 0 and inf - inf give a negative NaN), so every NaN an Mmad writes is the
positive canonical quiet NaN.
"""

from __future__ import annotations

import numpy as np


#: products m*n*k up to this size run BLAS on one thread: waking BLAS threads costs more than they save, and far
#: more on a busy machine (measured: 128x128x128 float64, 0.07 ms on one thread, 1-20 ms with two woken threads)
SINGLE_THREAD_WORK = 1 << 24
_blas = None


def _blas_controllers() -> list:
    """threadpoolctl's controllers of the BLAS libraries numpy uses ([] without threadpoolctl)."""
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController

            _blas = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
        except Exception:  # noqa: BLE001 - an optional speed-up: any failure means "leave BLAS alone"
            _blas = []
    return _blas


def blas_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` through BLAS, on one thread for small products (restored afterwards)."""
    if a.shape[0] * a.shape[1] * b.shape[1] > SINGLE_THREAD_WORK:
        return a @ b
    libs = _blas_controllers()
    before = [c.get_num_threads() for c in libs]
    for c in libs:
        c.set_num_threads(1)
    try:
        return a @ b
    finally:
        for c, n in zip(libs, before):
            c.set_num_threads(n)


def matmul_ordered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The stated order, literally: one rank-1 update per ``p`` (each element rounded to float64 once)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for p in range(a.shape[1]):
            acc += a[:, p:p + 1] * b[p:p + 1, :]
    return acc


def _ordered_at(a, b, rows, cols) -> np.ndarray:
    """Ordered sums for the pairs ``(rows[q], cols[q])`` (a numba kernel: strictly left to right)."""
    from ..kernels.matmul import ordered_dots  # numba: loaded on first use (import fastcopy stays numba-free)

    out = np.empty(rows.size, np.float64)
    ordered_dots(a, np.ascontiguousarray(b.T), rows.astype(np.int64), cols.astype(np.int64), out)
    return out


def _scale(k: int) -> float:
    """Twice ``2*gamma_k``: the bound on how far two float64 summations of ``k`` products can drift apart,
    relative to ``sum |a*b|``, with a factor 2 for the roundings of the test itself."""
    return 4 * (k * 2.0**-53 / (1 - k * 2.0**-53))


def _add(s, c0):
    return s if c0 is None else s + c0


def matmul_rounded(a: np.ndarray, b: np.ndarray, c0, encode, f32: bool = False) -> np.ndarray:
    """``encode(ordered_sum(a @ b) + c0)``; ``c0`` float64 array or None; ``encode`` float64 -> bit patterns;
    ``f32``: the destination is float32 (the interval test runs in one compiled pass)."""
    with np.errstate(invalid="ignore", over="ignore"):
        if f32:  # one compiled pass; non-finite inputs make the interval NaN and take the ordered sum
            from ..kernels.matmul import settle_f32

            s = blas_matmul(a, b)
            out = np.empty_like(s)
            c = np.ascontiguousarray(c0) if c0 is not None else s
            settle_f32(np.ascontiguousarray(a), np.ascontiguousarray(b), s, c, c0 is not None, _scale(a.shape[1]), out)
            return encode(out)
        if not (np.isfinite(a).all() and np.isfinite(b).all()) or (c0 is not None and not np.isfinite(c0).all()):
            s = _add(matmul_ordered(a, b), c0)
            return encode(np.abs(s, out=s, where=np.isnan(s)))
        s = blas_matmul(a, b)
        out = encode(_add(s, c0))
        err = np.outer(np.abs(a).sum(axis=1), np.abs(b).max(axis=0, initial=0.0)) * _scale(a.shape[1])
        bad = encode(_add(s - err, c0)) != encode(_add(s + err, c0))
        if bad.any():
            rows, cols = np.nonzero(bad)
            exact = _ordered_at(a, b, rows, cols)
            out[rows, cols] = encode(_add(exact, None if c0 is None else c0[rows, cols]))
    return out


def matmul_store_f32(a: np.ndarray, b: np.ndarray, c0, ctrl48: bool, dst_f: np.ndarray, dst_u: np.ndarray,
                     t_a: int = 23, t_b: int = 23) -> int:
    """:func:`matmul_rounded` for a float32 result, stored straight into the L0C tile (``dst_f`` / ``dst_u``:
    float32 / uint32 views of its bytes; element ``(i, j)`` at ``(j // 16) * rows * 16 + i * 16 + j % 16``).
    ``t_a``, ``t_b``: stored fraction bits of the input formats (they prove sums exact). Returns how many
    elements were summed in the stated order."""
    from ..kernels.matmul import _col_stats, _row_stats, settle_store_f32

    with np.errstate(invalid="ignore", over="ignore"):
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        ra, la = np.empty(a.shape[0]), np.empty(a.shape[0], np.int64)
        cb, lb = np.empty(b.shape[1]), np.empty(b.shape[1], np.int64)
        _row_stats(a, t_a, ra, la)
        _col_stats(b, t_b, cb, lb)
        s = blas_matmul(a, b)
        c = np.ascontiguousarray(c0) if c0 is not None else s
        return settle_store_f32(a, b, s, c, c0 is not None, _scale(a.shape[1]), ra, la, cb, lb, ctrl48, dst_f,
                                dst_u)
