"""Packed 4-bit types (``int4b_t``, ``fp4x2_e2m1_t``, ``fp4x2_e1m2_t``): how they are held, and the moves that
split bytes.

**Representation.** Device memory holds two 4-bit values per byte, the even-indexed value in the low nibble
(values 6, 7 form byte ``0x76``). fastcopy tensors of these types hold exactly those bytes: one tensor element is
one byte (a pair of values), so sizes, offsets and every element-unit field count bytes, like the C++ ``fp4x2``
containers. The dtype is the tag: ``int4b_t`` is ``ml_dtypes.int4``, ``fp4x2_e2m1_t`` is
``ml_dtypes.float4_e2m1fn`` and ``fp4x2_e1m2_t`` (no numpy type exists) a one-byte structured dtype; numpy's view
of such a tensor shows only the low nibble of each byte, so read and write the bytes as uint8 and convert with
:func:`pack4` / :func:`unpack4`.

**Moves.** Where a mapping never splits a byte, a 4-bit type moves exactly like a 1-byte type. The transposing
loads (LoadData 2D V2 with ``ifTranspose``, ``LoadDataWithTranspose``) move single nibbles: their planners
describe them as nibble maps and :func:`nibble_plan` turns a map into a :class:`NibblePlan` (validated byte spans
and warnings like any plan, executed here with numpy because the shared kernels move whole bytes).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..dma.lower import make_plan
from ..dma.run import OBSERVERS
from ..dma.steps import check_in_memory
from ..dtypes import ASCEND_DTYPES, as_dtype, ascend_name
from ..errors import OutOfBoundsError, ParamError
from .steps import element_steps

INT4 = ASCEND_DTYPES["int4b_t"]
FP4_E2M1 = ASCEND_DTYPES["fp4x2_e2m1_t"]
FP4_E1M2 = ASCEND_DTYPES["fp4x2_e1m2_t"]
#: the packed 4-bit types (one tensor element = one byte = two values)
B4_TYPES = frozenset({INT4, FP4_E2M1, FP4_E1M2})


def is_b4(dtype) -> bool:
    return np.dtype(dtype) in B4_TYPES


def bits_of(dtype) -> int:
    """Bits per value: 4 for the packed types, else 8 * itemsize."""
    dt = np.dtype(dtype)
    return 4 if dt in B4_TYPES else 8 * dt.itemsize


def b4_dtype(dtype, api: str) -> np.dtype:
    dt = as_dtype(dtype)
    if dt not in B4_TYPES:
        raise ParamError(f"{api}: dtype={ascend_name(dt)} is not a packed 4-bit type (int4b_t, fp4x2_e2m1_t, "
                         "fp4x2_e1m2_t)")
    return dt


def codes(values, dtype, api: str) -> np.ndarray:
    """uint8 array of the 4-bit codes (0..15) of ``values`` of the 4-bit type ``dtype``: an ``ml_dtypes.int4`` /
    ``float4_e2m1fn`` array (one value per element), numbers converted to it, or (``fp4x2_e1m2_t``, which has no
    numpy type) the codes themselves."""
    a = np.asarray(values)
    if dtype == FP4_E1M2 or a.dtype == FP4_E1M2:
        if a.dtype == FP4_E1M2:
            a = a.view(np.uint8)
        if a.dtype.kind not in "iu" or (a.size and (a.min() < 0 or a.max() > 15)):
            raise ParamError(f"{api}: fp4x2_e1m2_t values are given as their 4-bit codes (integers 0..15)")
        return a.astype(np.uint8)
    if a.dtype != dtype:
        a = a.astype(dtype)
    return a.view(np.uint8) & 0xF


def pack4(values, dtype=None) -> np.ndarray:
    """The device bytes of 4-bit values: a ``(..., 2n)`` array (``ml_dtypes.int4`` / ``float4_e2m1fn``, or codes
    0..15 with ``dtype="fp4x2_e1m2_t"``) -> ``(..., n)`` uint8, value ``2i`` in the low nibble of byte ``i``."""
    a = np.asarray(values)
    dt = b4_dtype(a.dtype if dtype is None else dtype, "pack4")
    c = codes(a, dt, "pack4")
    if c.ndim == 0 or c.shape[-1] % 2:
        raise ParamError(f"pack4: the last axis must hold an even number of values (two per byte), got shape "
                         f"{c.shape}")
    return np.ascontiguousarray(c[..., 0::2] | (c[..., 1::2] << 4))


def unpack4(packed, dtype) -> np.ndarray:
    """Inverse of :func:`pack4`: ``(..., n)`` bytes -> ``(..., 2n)`` values of ``dtype`` (the ml_dtypes type;
    uint8 codes for ``fp4x2_e1m2_t``)."""
    dt = b4_dtype(dtype, "unpack4")
    b = np.asarray(packed)
    if b.dtype != np.uint8:
        b = b.view(np.uint8)
    out = np.empty((*b.shape[:-1], 2 * b.shape[-1]) if b.ndim else (2,), np.uint8)
    out[..., 0::2] = b & 0xF
    out[..., 1::2] = b >> 4
    return from_codes(out, dt)


def from_codes(c: np.ndarray, dt) -> np.ndarray:
    """Values of the 4-bit type ``dt`` from uint8 codes 0..15 (int4: sign-extended; fp4x2_e1m2_t: the codes)."""
    if dt == FP4_E1M2:
        return c
    if dt == INT4:
        return np.where(c >= 8, c.astype(np.int8) - 16, c.astype(np.int8)).astype(dt)
    return c.view(dt).copy()


# ------------------------------------------------------------------------------------------- nibble moves
class NibblePlan(NamedTuple):
    """A validated call that moves single nibbles: destination nibble ``dst[k]`` <- source nibble ``src[k]``
    (nibble ``2b`` is the low half of byte ``b``). ``plan`` carries the checked byte spans and the warnings."""

    plan: object
    dst: np.ndarray
    src: np.ndarray
    whole: tuple | None = None  # (bytes, low-nibble sources, high-nibble sources) when each byte is written once

    @property
    def warnings(self):
        return self.plan.warnings

    def run(self, dst, src) -> None:
        """Gather every source nibble first (read before write), then write the destination bytes; a byte written
        twice with different values or definedness becomes undefined (poison), as for overlapping byte moves."""
        import warnings

        from ..errors import FastCopyWarning

        check_in_memory(self.plan, dst, src)
        for observer in OBSERVERS:  # (fastcopy check: the byte spans of the call)
            observer(self.plan, dst, src)
        for msg in self.plan.warnings:
            warnings.warn(msg, FastCopyWarning, stacklevel=3)
        if not self.dst.size:
            return
        smem = src.memory
        data = smem.data[src.offset:src.offset + src.nbytes]
        if self.whole is not None:  # every destination byte written once, both nibbles: a gather
            ub, lo_s, hi_s = self.whole
            lo = (data[lo_s // 2] >> (4 * (lo_s % 2))) & 0xF
            value = lo | (((data[hi_s // 2] >> (4 * (hi_s % 2))) & 0xF) << 4)
            defined = None
            if smem.plane is not None and not smem.known_defined(src.offset, src.offset + src.nbytes):
                plane = smem.plane[src.offset:src.offset + src.nbytes]
                defined = plane[lo_s // 2].astype(bool) & plane[hi_s // 2].astype(bool)
            self._store(dst, ub, value.astype(np.uint8), np.ones(ub.size, bool) if defined is None else defined)
            return
        nib = (data[self.src // 2] >> (4 * (self.src % 2))) & 0xF
        ok = None
        if smem.plane is not None and not smem.known_defined(src.offset, src.offset + src.nbytes):
            ok = smem.plane[src.offset + self.src // 2].astype(bool)
        order = np.argsort(self.dst, kind="stable")
        d, nib = self.dst[order], nib[order]
        ok = None if ok is None else ok[order]
        byte = d // 2
        # after sorting, the nibbles of one destination byte are adjacent: low nibbles (even d) then high ones
        ub, first = np.unique(byte, return_index=True)
        counts = np.diff(np.r_[first, byte.size])
        lo = np.zeros(ub.size, np.int64) - 1
        hi = np.zeros(ub.size, np.int64) - 1
        grp = np.repeat(np.arange(ub.size), counts)
        good = np.ones(ub.size, bool)
        val = nib.astype(np.int64) + (0 if ok is None else 16 * (~ok))  # 16: an undefined nibble
        for half, store in ((0, lo), (1, hi)):
            sel = (d % 2) == half
            g, v = grp[sel], val[sel]
            store[g] = v  # last write wins ...
            clash = np.zeros(ub.size, bool)
            np.logical_or.at(clash, g, v != store[g])  # ... unless the writes of this nibble differ
            good &= ~clash
        both = (lo >= 0) & (hi >= 0)
        old = dst.memory.data[dst.offset + ub]
        lo_v = np.where(lo >= 0, lo, old & 0xF)
        hi_v = np.where(hi >= 0, hi, old >> 4)
        defined = good & (lo_v < 16) & (hi_v < 16)
        if not both.all():  # a half-written byte keeps the other nibble, with its definedness
            plane = dst.memory.plane
            if plane is not None:
                defined &= both | plane[dst.offset + ub].astype(bool)
        value = ((lo_v & 0xF) | ((hi_v & 0xF) << 4)).astype(np.uint8)
        mem = dst.memory
        value[~good] = mem.poison  # a byte written twice with different nibbles: undefined, the poison byte
        self._store(dst, ub, value, defined)

    def _store(self, dst, ub, value, defined) -> None:
        """Write bytes ``ub`` (sorted) of ``dst``; undefined source nibbles travel as they are, marked undefined
        (like byte moves)."""
        mem = dst.memory
        if ub[0] < 0 or ub[-1] >= dst.nbytes:  # (the plan's checked spans make this impossible)
            raise OutOfBoundsError(f"internal error: {self.plan.api} writes bytes outside {dst!r}; nothing was "
                                   "written")
        pos = dst.offset + ub
        mem.data[pos] = value
        if mem.plane is not None or not defined.all():
            mem.materialize_plane()[pos] = defined
            mem.forget()


def nibbles_overlap(dst_nib) -> bool:
    """Whether a nibble map writes some destination nibble twice."""
    d = np.asarray(dst_nib).reshape(-1)
    return np.unique(d).size != d.size


def nibble_plan(api: str, dst_nib, src_nib, src_sig, dst_sig, warns) -> NibblePlan:
    """A :class:`NibblePlan` for the nibble map ``dst_nib[k] <- src_nib[k]`` (int arrays of equal shape): the byte
    spans are checked against both tensors by the shared planner (each destination byte read from the bytes that
    hold its nibbles)."""
    d = np.asarray(dst_nib, np.int64).reshape(-1)
    s = np.broadcast_to(np.asarray(src_nib, np.int64), np.shape(dst_nib)).reshape(-1)
    steps, _ = element_steps(d // 2, s // 2, 1) if d.size else ((), False)
    whole = None
    order = np.argsort(d, kind="stable")
    ds = d[order]
    if d.size and d.size % 2 == 0 and np.array_equal(ds[0::2] + 1, ds[1::2]) and not (ds[0::2] % 2).any() \
            and (ds.size < 4 or (np.diff(ds[0::2]) > 0).all()):
        ss = s[order]
        whole = (ds[0::2] // 2, ss[0::2], ss[1::2])
    return NibblePlan(make_plan(api, steps, src_sig, dst_sig, warns, exact=True), d, s, whole)


__all__ = ["B4_TYPES", "INT4", "FP4_E2M1", "FP4_E1M2", "is_b4", "bits_of", "pack4", "unpack4", "from_codes",
           "NibblePlan", "nibble_plan", "nibbles_overlap"]
