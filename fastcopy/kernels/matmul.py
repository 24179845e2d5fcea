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
    the interval NaN) the ordered sum plus ``c0``, a NaN made positive. Returns the count of recomputed elements.
    ``s`` holds BLAS sums (any order)."""
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
                r = acc + c
                out[i, j] = abs(r) if r != r else r  # NaN: positive, whatever the order of the additions
                redo += 1
    return redo


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _lsb(e, t):  # pragma: no cover - compiled
    """From the lowest biased float64 exponent ``e`` of a set of values with ``t`` stored fraction bits: a lower
    bound of the exponent of their last significant bit (0 if all were zero; -4096 if one was inf or NaN)."""
    if e == -4096:
        return -4096
    if e == 4096:
        return 0
    return e - 1023 - t


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _row_stats(x, t, total, lsb):  # pragma: no cover - compiled
    """Per row of ``x`` (float64 values of a format with ``t`` stored fraction bits): ``total[i] = sum |x|``
    (4 partial sums; the caller adds a margin) and ``lsb[i]`` (see :func:`_lsb`). Branch-free inner loops: zeros
    map to an exponent above every real one, inf / NaN (exponent 0x7FF) are flagged."""
    m, k = x.shape
    bits = x.reshape(m * k).view(np.uint64)
    for i in range(m):
        s0 = s1 = s2 = s3 = 0.0
        p = 0
        while p + 4 <= k:
            s0 += abs(x[i, p])
            s1 += abs(x[i, p + 1])
            s2 += abs(x[i, p + 2])
            s3 += abs(x[i, p + 3])
            p += 4
        while p < k:
            s0 += abs(x[i, p])
            p += 1
        total[i] = (s0 + s1) + (s2 + s3)
        low = np.int64(8192)
        special = np.int64(0)
        for p in range(k):
            e = np.int64((bits[i * k + p] >> np.uint64(52)) & np.uint64(0x7FF))
            low = min(low, e + (e == 0) * 8192)
            special |= e == 0x7FF
        lsb[i] = _lsb(-4096 if special else (4096 if low >= 8192 else low), t)


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _col_stats(x, t, cmax, lsb):  # pragma: no cover - compiled
    """Per column of ``x``: ``cmax[j] = max |x|`` (NaN propagates) and ``lsb[j]`` (see :func:`_lsb`)."""
    k, n = x.shape
    bits = x.reshape(k * n).view(np.uint64)
    low = np.full(n, 8192, np.int64)
    special = np.zeros(n, np.int64)
    for j in range(n):
        cmax[j] = 0.0
    for p in range(k):
        for j in range(n):
            v = abs(x[p, j])
            cmax[j] = cmax[j] if v <= cmax[j] else v
            e = np.int64((bits[p * n + j] >> np.uint64(52)) & np.uint64(0x7FF))
            low[j] = min(low[j], e + (e == 0) * 8192)
            special[j] |= e == 0x7FF
    for j in range(n):
        lsb[j] = _lsb(-4096 if special[j] else (4096 if low[j] >= 8192 else low[j]), t)


@numba.njit(cache=True, boundscheck=False, nogil=True)
def settle_store_f32(a, b, s, c0, has_c0, scale, ra, la, cb, lb, ctrl48, dst_f, dst_u):  # pragma: no cover
    """``C = F32(sum_p a[i, p] * b[p, j] + c0[i, j])`` with the sum in float64 in increasing ``p``, from BLAS sums
    ``s`` (any order), stored straight into the L0C tile: element ``(i, j)`` of the ``16*M1 x 16*N1`` result goes
    to element ``(j // 16) * 16*M1 * 16 + i * 16 + j % 16`` (``dst_f`` / ``dst_u``: float32 / uint32 views of the
    same bytes). ``ra`` / ``cb``: row sums of ``|a|`` / column maxima of ``|b|``; ``la`` / ``lb``: lower bounds of
    the exponents of the last significant bits per row of ``a`` / column of ``b`` (-4096: inf or NaN there); see
    :func:`stats`.

    Element ``(i, j)`` keeps the BLAS value when it is provably the ordered one: either every partial sum of any
    order is exact (all products are multiples of ``2^(lsb_a[i] + lsb_b[j])`` and ``sum |a*b| < 2^(that + 53)``),
    or every value within ``scale * sum |a| * max |b|`` of it rounds to the same float32. Otherwise (and for NaN)
    the ordered sum is formed. Encoding: nearest even; INF_NAN mode (``ctrl48``): overflow -> +-inf, NaN ->
    the positive canonical quiet NaN; saturation mode: overflow and +-inf -> +-FLT_MAX, NaN -> +0. Returns the
    count of elements summed in the stated order. Pass 1 is branch-free; pass 2 runs only if needed."""
    m, k = a.shape
    n = b.shape[1]
    ra = ra.copy()
    pa = np.empty(m)
    pb = np.empty(n)
    for i in range(m):
        ra[i] *= 1.0 + 2.0**-40  # the float64 row sums may fall short by k ulps at most
        pa[i] = 2.0 ** min(la[i] + 53, 1000) if la[i] > -4096 else 0.0
    for j in range(n):
        pb[j] = 2.0 ** max(lb[j], -1000) if lb[j] > -4096 else 0.0
    bad = 0
    for i in range(m):
        ei = ra[i] * scale
        pai = pa[i]
        rai = ra[i]
        for jb in range(n // 16):
            row = (jb * m + i) * 16
            for jj in range(16):
                j = jb * 16 + jj
                e = ei * cb[j]
                v = s[i, j]
                c = c0[i, j] if has_c0 else 0.0
                dst_f[row + jj] = np.float32(v + c)
                inexact = not (rai * cb[j] < pai * pb[j])  # NaN bounds count as inexact
                bad += inexact & (np.float32((v - e) + c) != np.float32((v + e) + c))
    if bad == 0 and ctrl48:
        return 0
    redo = 0
    fmax = np.float32(3.4028234663852886e38)
    for i in range(m):
        for j in range(n):
            row = ((j // 16) * m + i) * 16 + j % 16
            e = ra[i] * scale * cb[j]
            c = c0[i, j] if has_c0 else 0.0
            v = s[i, j]
            if ra[i] * cb[j] < pa[i] * pb[j] or np.float32((v - e) + c) == np.float32((v + e) + c):
                r = v + c
            else:
                acc = 0.0
                for p in range(k):
                    acc += a[i, p] * b[p, j]
                r = acc + c
                redo += 1
            if r != r:  # the sign of a NaN sum depends on the order of the additions: always positive
                dst_u[row] = np.uint32(0x7FC00000) if ctrl48 else np.uint32(0)
            else:
                f = np.float32(r)
                if not ctrl48 and (f == np.inf or f == -np.inf):
                    f = fmax if r > 0 else -fmax
                dst_f[row] = f
    return redo


@numba.njit(cache=True, boundscheck=False, nogil=True)
def gather_half_bits(raw, offs, bf16, out):  # pragma: no cover - compiled
    """``out[i, j]`` = float64 value of the 16-bit float pattern ``raw[offs[i, j]]`` (half; ``bf16``: bfloat16),
    widened through its float32 bits (normal halves by a shift and an exponent re-bias; zeros, subnormals, inf
    and NaN on a separate path). No table: a 64K-entry one costs more in evicted cache than it saves. Returns
    True if any value is NaN."""
    nan = False
    rows, cols = offs.shape
    tmp = np.empty(cols, np.uint32)
    tf = tmp.view(np.float32)
    for i in range(rows):
        for j in range(cols):
            h = np.uint32(raw[offs[i, j]])
            if bf16:
                tmp[j] = h << np.uint32(16)
                continue
            e = h & np.uint32(0x7C00)
            if e != np.uint32(0) and e != np.uint32(0x7C00):
                tmp[j] = ((h & np.uint32(0x8000)) << np.uint32(16)) | (((h & np.uint32(0x7FFF)) << np.uint32(13))
                                                                       + np.uint32(0x38000000))
            else:
                tmp[j] = _half_special(h)
        for j in range(cols):
            v = np.float64(tf[j])
            out[i, j] = v
            if v != v:
                nan = True
    return nan


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _half_special(h):  # pragma: no cover - compiled
    """float32 bits of a half pattern that is zero, subnormal, inf or NaN (NaN payload kept, quieted)."""
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    f = h & np.uint32(0x3FF)
    if h & np.uint32(0x7C00):  # inf / NaN
        return sign | np.uint32(0x7F800000) | (f << np.uint32(13))
    if f == 0:
        return sign
    e = np.uint32(127 - 15 + 1)  # subnormal: normalise the fraction
    while not (f & np.uint32(0x400)):
        f <<= np.uint32(1)
        e -= np.uint32(1)
    return sign | (e << np.uint32(23)) | ((f & np.uint32(0x3FF)) << np.uint32(13))
