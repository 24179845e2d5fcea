"""Shared helpers for the basic DataCopy tests: building tensors on a path and running the oracle."""

from __future__ import annotations

import numpy as np

from fastcopy import GlobalTensor, TPipe
from fastcopy.products import POSITIONS, Phys, Product, TPosition

#: preferred logical position for each physical buffer
_PREFERRED = [TPosition.VECIN, TPosition.VECOUT, TPosition.A1, TPosition.TSCM, TPosition.C2, TPosition.C2PIPE2GM,
              TPosition.A2, TPosition.B2, TPosition.CO1]


def position_for(product: Product, phys: Phys, avoid=None) -> TPosition:
    """A logical position that maps to ``phys`` on ``product`` (prefers the usual ones)."""
    for pos in _PREFERRED:
        if POSITIONS[product].get(pos) is phys and pos is not avoid:
            return pos
    for pos in _PREFERRED:
        if POSITIONS[product].get(pos) is phys:
            return pos
    raise LookupError(f"no position maps to {phys} on {product}")


def tensor_bytes(t):
    """(data copy, defined copy) of a tensor's bytes, as the oracles take them."""
    mem = t.memory
    data = mem.data[t.offset:t.offset + t.nbytes].copy()
    if mem.plane is None:
        return data, np.ones(data.size, bool)
    return data, mem.plane[t.offset:t.offset + t.nbytes].astype(bool)


def make_tensor(pipe: TPipe, phys: Phys, dtype, count: int, rng, defined_fraction: float = 1.0, avoid=None):
    """A tensor of ``count`` elements on ``phys``: GM over a random array, or a local tensor partly written."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8)
    if phys is Phys.GM:
        return GlobalTensor(raw.view(dtype))
    t = pipe.alloc(position_for(pipe.product, phys, avoid), dtype, count)
    t.numpy().view(np.uint8)[:] = raw
    if defined_fraction >= 1.0:
        t.set_defined()
    elif defined_fraction > 0:
        t.set_defined(rng.random(count) < defined_fraction)
    return t
