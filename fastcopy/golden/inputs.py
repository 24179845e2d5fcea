"""Input generators: seeded random, arange, constant, bit patterns, files.

Every buffer draws from its own stream, ``PCG64(SeedSequence([seed, crc32(buffer name)]))``, so adding a buffer
never changes another one's data. Floats are drawn in float64 and rounded to the buffer's dtype (round to
nearest even); integers are exact. The same seed, case and numpy version give the same bytes on every machine
(the manifest records all three and every file's sha256).
"""

from __future__ import annotations

import zlib

import numpy as np

from ..dtypes import ascend_name
from ..errors import ParamError
from ..memory import aligned_bytes, aligned_empty
from .schema import B4_TYPES, BufferSpec, CaseError, _is_float


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


#: Elements generated per step: float64/int64 temporaries stay this small whatever the buffer size.
CHUNK = 1 << 20


#: Random kinds whose first ``n`` elements are the same whatever the length drawn: each element comes from the
#: stream in order (uniform and normal doubles, bounded integers), so a shorter buffer is a prefix of a longer one.
PREFIX_KINDS = frozenset({"uniform", "normal", "integers"})
#: Streams kept per process (:func:`generate`), and the longest buffer (elements) kept of each.
KEEP_STREAMS = 8
KEEP_ELEMENTS = 1 << 16
#: A kept stream is drawn ahead: at least this many elements, and at least twice the length kept before (up to
#: KEEP_ELEMENTS), so a sweep whose buffers grow point by point draws a few times, not at every new length
DRAW_AHEAD = 1 << 10
_KEPT: dict = {}  # (seed, buffer name, init items, dtype) -> the longest array of that stream drawn so far


def generate(buf: BufferSpec, seed: int, file: str = "") -> np.ndarray:
    """The initial contents of ``buf`` (a C-contiguous array of ``buf.shape``, the caller's own); ``init`` must not
    be None. (:func:`generate_at` also gives the array's bytes and address when it made them itself.)

    Random draws are made in chunks of :data:`CHUNK` elements straight into the result (the stream is the same
    as one draw of all elements), so memory is the buffer plus a few MiB. The points of a sweep draw the same
    stream (seed, buffer name, init) at many lengths: small draws of the :data:`PREFIX_KINDS` are kept, and a
    buffer no longer than one kept is a copy of its first elements (the same bytes a new draw gives; a longer one
    is drawn, checked and kept)."""
    return generate_at(buf, seed, file)[0]


def generate_at(buf: BufferSpec, seed: int, file: str = "") -> tuple:
    """``(array, bytes, address)``: :func:`generate`'s array and, when it is a copy of a kept draw made here, its
    bytes (the 1-D uint8 array under it, from :func:`fastcopy.memory.aligned_bytes`) and their host address, for
    a GlobalTensor made over them without looking the address up again; else ``(array, None, None)``."""
    init = buf.init
    n = buf.size
    if init["kind"] in PREFIX_KINDS and n <= KEEP_ELEMENTS:
        try:  # (the values' types too: 1, 1.0 and True are equal keys)
            key = (seed, buf.name, tuple(init.items()), tuple(map(type, init.values())), buf.np_dtype)
            kept = _KEPT.get(key)
        except TypeError:  # (an unhashable init value: never kept)
            return _generate(buf, seed, file), None, None
        if kept is None or kept.size < n:
            kept = _draw_ahead(buf, seed, file, 0 if kept is None else kept.size)
            if kept is None:  # (packed 4-bit, or the longer draw failed a check: drawn exactly, errors raised)
                kept = _generate(buf, seed, file).reshape(-1)
            _KEPT.pop(key, None)
            if len(_KEPT) >= KEEP_STREAMS:
                _KEPT.pop(next(iter(_KEPT)))
            _KEPT[key] = kept
        dt = buf.np_dtype
        data, host = aligned_bytes(n * dt.itemsize)
        out = data.view(dt)
        out[...] = kept[:n]
        return out.reshape(buf.shape), data, host
    return _generate(buf, seed, file), None, None


def _draw_ahead(buf: BufferSpec, seed: int, file: str, before: int) -> np.ndarray | None:
    """The stream of ``buf`` drawn longer than ``buf`` (:data:`DRAW_AHEAD`, twice ``before``, at most
    :data:`KEEP_ELEMENTS`; the first ``buf.size`` elements are those of a draw of ``buf.size``), or None when
    that draw fails a check (an element past ``buf.size`` may be the one that does not fit the dtype) or the
    dtype is a packed 4-bit one (drawn exactly)."""
    n = max(buf.size, min(KEEP_ELEMENTS, max(DRAW_AHEAD, 2 * before)))
    if buf.np_dtype in B4_TYPES:
        return None
    try:
        return _draw(buf.init, buf.np_dtype, n, buf.name, seed, file, f"buffers.{buf.name}.init")
    except CaseError:
        return None


def _generate(buf: BufferSpec, seed: int, file: str = "") -> np.ndarray:
    """The contents of ``buf`` as drawn (packed 4-bit buffers from their values)."""
    init, dt, n = buf.init, buf.np_dtype, buf.size
    where = f"buffers.{buf.name}.init"
    if dt in B4_TYPES:
        return _generate_b4(init, dt, n, buf.name, seed, file, where).reshape(buf.shape)
    return _draw(init, dt, n, buf.name, seed, file, where).reshape(buf.shape)


def _generate_b4(init, dt, n, name: str, seed: int, file: str, where: str) -> np.ndarray:
    """A packed 4-bit buffer of ``n`` bytes: ``bits``, a file of the bytes or ``values`` with ``packed = true``
    give the bytes; every other input gives ``2n`` values (int4b_t / fp4x2_e2m1_t values, fp4x2_e1m2_t 4-bit
    codes), packed two per byte, the even one in the low nibble."""
    from ..cube.b4 import FP4_E1M2, pack4

    kind = init["kind"]
    if kind == "bits":
        return _draw(init, dt, n, name, seed, file, where)
    if kind == "values" and init.get("packed"):
        return np.array(init["values"], np.uint8).view(dt)
    if kind == "file":
        return _load_file(init["path"], dt, n, file, where, values_per_element=2)
    vt = np.dtype(np.uint8) if dt == FP4_E1M2 else dt
    vals = _draw(init, vt, 2 * n, name, seed, file, where)
    if dt == FP4_E1M2:
        vals = vals & 0xF  # (arange wraps over the 16 codes)
    return pack4(vals, dt).view(dt)


def _draw(init, dt, n, name: str, seed: int, file: str, where: str) -> np.ndarray:
    """``n`` elements of ``dt`` (flat) by ``init``."""
    kind = init["kind"]
    if kind == "file":
        return _load_file(init["path"], dt, n, file, where)
    out = aligned_empty(n * dt.itemsize, (n,), dt)
    if kind == "bits":
        rng = rng_for(seed, name)
        raw = out.reshape(-1).view(np.uint8)
        step = CHUNK * 8
        for i in range(0, raw.size, step):
            part = raw[i:i + step]
            part[:] = np.frombuffer(rng.bytes(part.size), np.uint8)
        if dt.kind == "b":
            raw &= 1
        return out
    if kind == "values":
        vals = init["values"]
        big = np.int64 if dt.kind in "iub" and all(isinstance(v, int) for v in vals) else np.float64
        if big is np.int64 and any(v > 2**63 - 1 for v in vals):
            big = np.uint64
        out[...] = _cast(np.array(vals, big), dt, file, where)
        return out
    if kind in ("zeros", "constant"):
        v = init.get("value", 0)
        one = _cast(np.array([v], np.int64 if isinstance(v, int) else np.float64), dt, file, where)
        out[...] = one[0]
        return out
    if kind == "arange":
        start, step = init["start"], init["step"]
        ints = isinstance(start, int) and isinstance(step, int)

        def draw(i, k):
            return np.arange(i, i + k, dtype=np.int64 if ints else np.float64) * step + start
        wrap = True
    elif kind == "integers":
        rng = rng_for(seed, name)
        big = np.uint64 if init["high"] > 2**63 else np.int64

        def draw(i, k):
            return rng.integers(init["low"], init["high"], k, dtype=big)
        wrap = False
    else:  # uniform / normal on float (or complex) dtypes
        rng = rng_for(seed, name)
        parts = 2 if dt.kind == "c" else 1
        if kind == "uniform":
            lo, hi = float(init["low"]), float(init["high"])

            def real(k):
                return lo + (hi - lo) * rng.random(k)
        else:
            mean, std = float(init["mean"]), float(init["std"])

            def real(k):
                return mean + std * rng.standard_normal(k)

        def draw(i, k):
            d = real(k * parts)
            return d[0::2] + 1j * d[1::2] if parts == 2 else d
        wrap = False
    for i in range(0, n, CHUNK):
        k = min(CHUNK, n - i)
        out[i:i + k] = _cast(draw(i, k), dt, file, where, wrap=wrap, first=i)
    return out


def _cast(values: np.ndarray, dt: np.dtype, file: str, where: str, wrap: bool = False, first: int = 0) -> np.ndarray:
    if dt.names:  # structured (complex32): only bit patterns and files can fill it
        raise CaseError(file, where, f"{ascend_name(dt)} buffers take \"bits\" or a file as input")
    with np.errstate(over="ignore", invalid="ignore"):
        out = values.astype(dt)
    if _is_float(dt) or dt.kind == "c":
        bad = np.isfinite(values) & ~np.isfinite(out.astype(np.complex128 if dt.kind == "c" else np.float64))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CaseError(file, where, f"value {values[i]!r} overflows {ascend_name(dt)} (element {first + i})")
    elif not wrap and dt.kind in "iu" and not np.array_equal(out.astype(values.dtype), values):
        raise CaseError(file, where, f"values do not fit {ascend_name(dt)}")
    return out




def _load_file(path: str, dt: np.dtype, n: int, file: str, where: str, values_per_element: int = 1) -> np.ndarray:
    """``n`` elements of ``dt`` from a raw file or a .npy; ``values_per_element == 2`` (packed 4-bit): a .npy may
    also hold the bytes as uint8, or ``2n`` values of the 4-bit type (packed here)."""
    try:
        if path.lower().endswith(".npy"):
            arr = np.load(path, allow_pickle=False)
            if values_per_element == 2:
                from ..cube.b4 import FP4_E1M2, pack4

                if arr.dtype.kind == "V" and arr.dtype.itemsize == 1 and not arr.dtype.names:
                    arr = arr.view(dt)  # (ml_dtypes' 4-bit arrays are saved as one-byte voids)
            if values_per_element == 2 and arr.dtype == np.uint8 and arr.size == n:
                arr = arr.view(dt)
            elif values_per_element == 2 and arr.size == 2 * n and (arr.dtype == dt or (dt == FP4_E1M2 and
                                                                                       arr.dtype.kind in "iu")):
                try:
                    arr = pack4(arr.reshape(-1), dt).view(dt)
                except ParamError as exc:
                    raise CaseError(file, f"{where}.path", f"{path}: {exc}") from None
            if arr.dtype != dt:
                raise CaseError(file, f"{where}.path", f"{path}: holds {arr.dtype}, the buffer is "
                                                       f"{ascend_name(dt)} ({dt})")
        else:
            arr = np.fromfile(path, dtype=dt)
    except (OSError, ValueError) as exc:
        raise CaseError(file, f"{where}.path", f"cannot read {path}: {exc}") from None
    if arr.size != n:
        extra = (f" (packed bytes; or {2 * n} 4-bit values in a .npy)" if values_per_element == 2 else "")
        raise CaseError(file, f"{where}.path", f"{path}: holds {arr.size} elements of {ascend_name(dt)}, the "
                                               f"buffer has {n}{extra}")
    return np.ascontiguousarray(arr).reshape(-1)
