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
from .schema import BufferSpec, CaseError, _is_float


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


def generate(buf: BufferSpec, seed: int, file: str = "") -> np.ndarray:
    """The initial contents of ``buf`` (a C-contiguous array of ``buf.shape``); ``init`` must not be None."""
    init, dt, n = buf.init, buf.np_dtype, buf.size
    kind = init["kind"]
    where = f"buffers.{buf.name}.init"
    if kind == "file":
        values = _load_file(init["path"], dt, n, file, where)
    elif kind == "bits":
        raw = np.frombuffer(rng_for(seed, buf.name).bytes(n * dt.itemsize), np.uint8).copy()
        if dt.kind == "b":
            raw &= 1
        values = raw.view(dt)
    elif kind in ("zeros", "constant"):
        v = init.get("value", 0)
        values = _cast(np.full(n, v, np.int64 if isinstance(v, int) else np.float64), dt, file, where)
    elif kind == "arange":
        start, step = init["start"], init["step"]
        ints = isinstance(start, int) and isinstance(step, int)
        base = np.arange(n, dtype=np.int64 if ints else np.float64)
        values = _cast(base * step + start, dt, file, where, wrap=True)
    elif kind == "integers":
        rng = rng_for(seed, buf.name)
        big = np.uint64 if init["high"] > 2**63 else np.int64
        values = _cast(rng.integers(init["low"], init["high"], n, dtype=big), dt, file, where)
    else:  # uniform / normal on float (or complex) dtypes
        rng = rng_for(seed, buf.name)
        parts = 2 if dt.kind == "c" else 1
        if kind == "uniform":
            lo, hi = float(init["low"]), float(init["high"])
            draw = lo + (hi - lo) * rng.random(n * parts)
        else:
            draw = float(init["mean"]) + float(init["std"]) * rng.standard_normal(n * parts)
        if parts == 2:
            draw = draw[0::2] + 1j * draw[1::2]
        values = _cast(draw, dt, file, where)
    return np.ascontiguousarray(values).reshape(buf.shape)


def _cast(values: np.ndarray, dt: np.dtype, file: str, where: str, wrap: bool = False) -> np.ndarray:
    if dt.names:  # structured (complex32): only bit patterns and files can fill it
        raise CaseError(file, where, f"{ascend_name(dt)} buffers take \"bits\" or a file as input")
    with np.errstate(over="ignore", invalid="ignore"):
        out = values.astype(dt)
    if _is_float(dt) or dt.kind == "c":
        bad = np.isfinite(values) & ~np.isfinite(out.astype(np.complex128 if dt.kind == "c" else np.float64))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CaseError(file, where, f"value {values[i]!r} overflows {ascend_name(dt)} (element {i})")
    elif not wrap and dt.kind in "iu" and not np.array_equal(out.astype(values.dtype), values):
        raise CaseError(file, where, f"values do not fit {ascend_name(dt)}")
    return out


def _load_file(path: str, dt: np.dtype, n: int, file: str, where: str) -> np.ndarray:
    try:
        if path.lower().endswith(".npy"):
            arr = np.load(path, allow_pickle=False)
            if arr.dtype != dt:
                raise CaseError(file, f"{where}.path", f"{path}: holds {arr.dtype}, the buffer is "
                                                       f"{ascend_name(dt)} ({dt})")
        else:
            arr = np.fromfile(path, dtype=dt)
    except (OSError, ValueError) as exc:
        raise CaseError(file, f"{where}.path", f"cannot read {path}: {exc}") from None
    if arr.size != n:
        raise CaseError(file, f"{where}.path", f"{path}: holds {arr.size} elements of {ascend_name(dt)}, the "
                                               f"buffer has {n}")
    return np.ascontiguousarray(arr).reshape(-1)
