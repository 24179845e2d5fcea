"""Element-wise reads and writes of tensors for the compute ops (Mmad, Fixpipe): values with their definedness.

Reads gather elements at element offsets; writes scatter values and mark the written bytes defined (or, for
undefined results, write the poison byte and mark them undefined). ``defined`` is ``None`` when every element
involved is defined (the common case, kept cheap). Callers check every offset against the tensor first (these
helpers never validate).
"""

from __future__ import annotations

import numpy as np

from ..errors import OutOfBoundsError, ReadOnlyError

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_ONES = {1: 0x01, 2: 0x0101, 4: 0x01010101, 8: 0x0101010101010101}


def defined_elements(mem, lo: int, n: int, es: int) -> np.ndarray | None:
    """Per-element definedness of ``n`` elements of ``es`` bytes from byte ``lo`` (None: all defined)."""
    if not mem.tracked or mem.known_defined(lo, lo + n * es):
        return None
    plane = mem.plane_bytes(lo, lo + n * es)
    if (lo % es) == 0:
        ok = plane.view(_UINT[es]) == _UINT[es](_ONES[es])
    else:
        ok = plane.reshape(n, es).all(axis=1)
    if ok.all():
        mem.note_defined(lo, lo + n * es)
        return None
    return ok


def read(tensor, offs: np.ndarray, dtype=None):
    """``(values, defined or None)`` of the elements at ``offs`` (element offsets of ``dtype``, default the
    tensor's)."""
    dt = np.dtype(dtype) if dtype is not None else tensor.dtype
    mem = tensor.memory
    es = dt.itemsize
    hi = int(offs.max()) + 1 if offs.size else 0
    values = mem.data[tensor.offset:tensor.offset + hi * es].view(dt)[offs]
    ok = defined_elements(mem, tensor.offset, hi, es)
    return values, (None if ok is None else ok[offs])


def combine(*masks):
    """AND of definedness masks (None = all defined), broadcasting."""
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else (out & m)
    return out


def _inside(tensor, offs: np.ndarray, es: int, n=None) -> None:
    """The last guard of these numpy writes (their callers validate): every element offset inside the tensor,
    the tensor writable."""
    if tensor.memory.readonly:
        raise ReadOnlyError(f"{tensor!r}: the destination is a read-only array; nothing was written")
    if offs.size:
        lo, hi = int(offs.min()), (n if n is not None else int(offs.max()) + 1)
        if lo < 0 or hi * es > tensor.nbytes:
            raise OutOfBoundsError(f"internal error: element offsets [{lo}, {hi}) of {es} bytes leave {tensor!r} "
                                   "(please report this call); nothing was written")


def write(tensor, offs: np.ndarray, values: np.ndarray, defined=None, dense: bool = False) -> None:
    """Store ``values`` at element offsets ``offs`` (of the values' width); elements whose ``defined`` is False
    get the poison byte and become undefined. ``dense``: ``offs`` is a permutation of ``range(offs.size)``."""
    mem = tensor.memory
    es = values.dtype.itemsize
    _inside(tensor, offs, es, offs.size if dense else None)
    uint = _UINT[es]
    bits = np.ascontiguousarray(values).view(uint)
    if defined is not None:
        defined = np.broadcast_to(defined, bits.shape)
        bits = np.where(defined, bits, uint(int.from_bytes(bytes([mem.poison]) * es, "little")))
    hi = offs.size if dense else (int(offs.max()) + 1 if offs.size else 0)
    lo_b, hi_b = tensor.offset, tensor.offset + hi * es
    if mem.lazy and (defined is not None or not dense):  # plane bytes to write: the plane made first
        mem.materialize_plane()
    if dense:
        flat = np.empty(hi, uint)
        flat[offs] = bits
        mem.data[lo_b:hi_b].view(uint)[:] = flat
    else:
        mem.data[lo_b:hi_b].view(uint)[offs] = bits
    if defined is None:
        if not mem.tracked:
            return
        if dense:
            mem.mark_defined(lo_b, hi_b)
            return
        mem.materialize_plane()[lo_b:hi_b].reshape(hi, es)[offs] = 1
        return
    plane = mem.materialize_plane()[lo_b:hi_b].reshape(hi, es)
    plane[offs] = np.asarray(defined, np.uint8)[..., None]
    mem.forget()
