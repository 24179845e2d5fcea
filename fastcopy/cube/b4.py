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
and warnings like any plan). A map that writes every destination byte once (both nibbles: every valid transpose)
runs on the compiled nibble gather (:mod:`fastcopy.kernels.nibbles`) as runs of destination bytes; small first
calls (``config.SMALL_BYTES``, numba not loaded yet) and maps writing a nibble twice (overlap: last write wins,
differing writes undefined) run in numpy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import config
from ..dma import kernels as K
from ..dma import npkernels
from ..dma.lower import make_plan
from ..dma.run import OBSERVERS
from ..dma.steps import Move, check_in_memory
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
#: fastcopy.kernels.nibbles once loaded (it loads numba)
_KERNELS = None


class Gather(NamedTuple):
    """A nibble map that writes every destination byte once, for the kernels of :mod:`fastcopy.kernels.nibbles`:
    ``tiles`` (16 x 16 tiles of values: rows of destination and source word offsets from the tensor starts),
    ``rest`` (the bytes outside them: runs ``(d, lo, hi, n)`` of nibble step ``step``), ``runs`` (every byte as
    runs, for the definedness plane and unaligned tensors) and ``span`` (``(lo, hi)`` when the bytes written
    are one dense span)."""

    tiles: np.ndarray
    rest: np.ndarray
    runs: np.ndarray
    step: int
    span: tuple | None


class NibblePlan(NamedTuple):
    """A validated call that moves single nibbles: destination nibble ``dst[k]`` <- source nibble ``src[k]``
    (nibble ``2b`` is the low half of byte ``b``). ``plan`` carries the checked byte spans and the warnings."""

    plan: object
    dst: np.ndarray
    src: np.ndarray
    whole: tuple | None = None  # (bytes, low-nibble sources, high-nibble sources) when each byte is written once
    gather: Gather | None = None  # ... and the same for the compiled kernels

    @property
    def warnings(self):
        return self.plan.warnings

    def run(self, dst, src, repeat: bool = False) -> None:
        """Gather every source nibble first (read before write), then write the destination bytes; a byte written
        twice with different values or definedness becomes undefined (poison), as for overlapping byte moves.
        ``repeat``: a prepared repeat (always on the compiled kernel, unless the numpy kernels are pinned)."""
        from ..errors import warn

        if not repeat:  # (a prepared repeat: the same tensors as the call that checked them)
            check_in_memory(self.plan, dst, src)
        for observer in OBSERVERS:  # (fastcopy check: the byte spans of the call)
            observer(self.plan, dst, src)
        for msg in self.plan.warnings:
            warn(msg)
        if not self.dst.size:
            return
        if self.gather is not None and not src.memory.shares(dst.memory) and compiled(repeat, self.whole[0].size):
            self._gather(dst, src)
            return
        smem = src.memory
        data = smem.data[src.offset:src.offset + src.nbytes]
        if self.whole is not None:  # every destination byte written once, both nibbles: a gather
            ub, lo_s, hi_s = self.whole
            lo = (data[lo_s // 2] >> (4 * (lo_s % 2))) & 0xF
            value = lo | (((data[hi_s // 2] >> (4 * (hi_s % 2))) & 0xF) << 4)
            defined = None
            if smem.tracked and not smem.known_defined(src.offset, src.offset + src.nbytes):
                plane = smem.plane_bytes(src.offset, src.offset + src.nbytes)
                defined = plane[lo_s // 2].astype(bool) & plane[hi_s // 2].astype(bool)
            self._store(dst, ub, value.astype(np.uint8), np.ones(ub.size, bool) if defined is None else defined)
            return
        nib = (data[self.src // 2] >> (4 * (self.src % 2))) & 0xF
        ok = None
        if smem.tracked and not smem.known_defined(src.offset, src.offset + src.nbytes):
            ok = smem.plane_bytes(src.offset, src.offset + src.nbytes)[self.src // 2].astype(bool)
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
            if dst.memory.tracked:
                defined &= both | dst.memory.plane_bytes(dst.offset, dst.offset + dst.nbytes)[ub].astype(bool)
        value = ((lo_v & 0xF) | ((hi_v & 0xF) << 4)).astype(np.uint8)
        mem = dst.memory
        value[~good] = mem.poison  # a byte written twice with different nibbles: undefined, the poison byte
        self._store(dst, ub, value, defined)

    def _gather(self, dst, src) -> None:
        """The compiled nibble moves (both tensors checked by the plan's spans, in different memories): whole
        tiles on 8-byte words where both tensors allow, the rest byte by byte."""
        global _KERNELS
        if _KERNELS is None:
            from ..kernels import nibbles as _KERNELS
        transpose_tiles, gather_nibbles, mark_runs = _KERNELS.transpose_tiles, _KERNELS.gather_nibbles, \
            _KERNELS.mark_runs
        g = self.gather
        smem, dmem = src.memory, dst.memory
        if dmem.lazy and (g.span is None or (smem.tracked and not smem.known_defined(src.offset,
                                                                                  src.offset + src.nbytes))):
            dmem.materialize_plane()  # plane bytes to write: the plane made before any data byte is
        dview, dshift = dmem.view(8)
        sview, sshift = smem.view(8)
        if g.tiles.size and (dst.offset - dshift) % 8 == 0 and (src.offset - sshift) % 8 == 0:
            transpose_tiles(dview, (dst.offset - dshift) // 8, sview, (src.offset - sshift) // 8, g.tiles)
            if g.rest.size:
                gather_nibbles(dmem.data, dst.offset, smem.data, src.offset, g.rest, g.step, False)
        else:
            gather_nibbles(dmem.data, dst.offset, smem.data, src.offset, g.runs, g.step, False)
        if smem.tracked and not smem.known_defined(src.offset, src.offset + src.nbytes):  # partly undefined
            splane = smem.plane_bytes(src.offset, src.offset + src.nbytes)
            gather_nibbles(dmem.materialize_plane(), dst.offset, splane, 0, g.runs, g.step, True)
            dmem.forget()
        elif dmem.tracked:
            if g.span is None:
                mark_runs(dmem.materialize_plane(), dst.offset, g.runs)
                return
            lo, hi = dst.offset + g.span[0], dst.offset + g.span[1]
            if not dmem.known_defined(lo, hi):  # (a repeat: already all defined)
                dmem.mark_defined(lo, hi, note=hi - lo >= config.KNOWN_BYTES)

    def _store(self, dst, ub, value, defined) -> None:
        """Write bytes ``ub`` (sorted) of ``dst``; undefined source nibbles travel as they are, marked undefined
        (like byte moves)."""
        mem = dst.memory
        if ub[0] < 0 or ub[-1] >= dst.nbytes:  # (the plan's checked spans make this impossible)
            raise OutOfBoundsError(f"internal error: {self.plan.api} writes bytes outside {dst!r}; nothing was "
                                   "written")
        pos = dst.offset + ub
        if defined.all() and (not mem.tracked or ub[-1] - ub[0] + 1 == ub.size):  # no plane needed
            mem.data[pos] = value
            if mem.tracked:  # one dense defined span
                mem.mark_defined(int(pos[0]), int(pos[-1]) + 1)
            return
        plane = mem.materialize_plane()  # (before the data: a plane the host cannot hold leaves nothing written)
        mem.data[pos] = value
        plane[pos] = defined
        mem.forget()


def compiled(repeat: bool, nbytes: int) -> bool:
    """Whether a nibble move runs on the compiled kernel: a prepared repeat, a call larger than
    ``config.SMALL_BYTES`` or any call once numba is loaded; never while the numpy kernels are pinned
    (``FASTCOPY_KERNELS=numpy``)."""
    if K.copy_strided is npkernels.copy_strided:
        return False
    return repeat or nbytes > config.SMALL_BYTES or K.loaded()


def kernel_runs(ub: np.ndarray, lo: np.ndarray, hi: np.ndarray, step: int) -> np.ndarray:
    """Destination bytes ``ub`` (sorted, distinct) taking nibbles ``lo`` / ``hi``, as maximal runs ``(d, lo, hi,
    n)`` of consecutive bytes whose two source nibbles both advance by ``step``."""
    if not ub.size:
        return np.zeros((0, 4), np.int64)
    brk = (np.diff(ub) != 1) | (np.diff(lo) != step) | (np.diff(hi) != step)
    first = np.r_[0, np.flatnonzero(brk) + 1]
    n = np.diff(np.r_[first, ub.size])
    return np.ascontiguousarray(np.stack([ub[first], lo[first], hi[first], n], axis=1), np.int64).reshape(-1, 4)


def kernel_gather(ub: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Gather:
    """The :class:`Gather` of a map writing bytes ``ub`` (sorted, distinct) from nibbles ``lo`` (low halves) and
    ``hi``. A tile is found where destination bytes ``d0 + 32r + x`` (r < 16, x < 8; ``d0`` 8-byte aligned) take
    nibbles ``L + r + 128x`` and ``L + r + 128x + 64`` (``L`` a multiple of 16): the 16 x 16 values of the
    source's 32-byte rows ``L//64 ..+15`` at values ``L%64 ..+15``, transposed."""
    step = int(lo[1] - lo[0]) if ub.size > 1 else 0
    runs = kernel_runs(ub, lo, hi, step)
    cand = np.flatnonzero((ub % 8 == 0) & (lo % 16 == 0) & (hi == lo + 64))
    r, x = np.arange(16)[:, None], np.arange(8)[None, :]
    want_ub = ub[cand][:, None, None] + 32 * r + x
    want_lo = lo[cand][:, None, None] + r + 128 * x
    at = np.minimum(np.searchsorted(ub, want_ub), ub.size - 1)
    good = ((ub[at] == want_ub) & (lo[at] == want_lo) & (hi[at] == want_lo + 64)).reshape(cand.size, -1).all(1)
    tiles = np.ascontiguousarray(np.stack([ub[cand[good]] // 8, lo[cand[good]] // 16], axis=1), np.int64)
    rest = np.ones(ub.size, bool)
    rest[at[good].reshape(-1)] = False
    span = (int(ub[0]), int(ub[-1]) + 1) if ub.size and ub[-1] - ub[0] + 1 == ub.size else None
    return Gather(tiles.reshape(-1, 2), kernel_runs(ub[rest], lo[rest], hi[rest], step), runs, step, span)


def nibbles_overlap(dst_nib) -> bool:
    """Whether a nibble map writes some destination nibble twice."""
    d = np.asarray(dst_nib).reshape(-1)
    if not d.size:
        return False
    lo, hi = int(d.min()), int(d.max())
    if hi - lo < 8 * d.size:  # (a count per nibble: cheaper than sorting)
        return bool(np.bincount(d - lo).max() > 1)
    s = np.sort(d)
    return bool((s[1:] == s[:-1]).any())


def nibble_plan(api: str, dst_nib, src_nib, src_sig, dst_sig, warns) -> NibblePlan:
    """A :class:`NibblePlan` for the nibble map ``dst_nib[k] <- src_nib[k]`` (int arrays of equal shape): the byte
    spans are checked against both tensors by the shared planner (each destination byte read from the bytes that
    hold its nibbles)."""
    d = np.asarray(dst_nib, np.int64).reshape(-1)
    s = np.broadcast_to(np.asarray(src_nib, np.int64), np.shape(dst_nib)).reshape(-1)
    order = np.argsort(d, kind="stable")
    ds = d[order]
    if d.size and d.size % 2 == 0 and np.array_equal(ds[0::2] + 1, ds[1::2]) and not (ds[0::2] % 2).any() \
            and (ds.size < 4 or (np.diff(ds[0::2]) > 0).all()):
        ss = s[order]
        whole = (ds[0::2] // 2, ss[0::2], ss[1::2])
        g = kernel_gather(*whole)
        steps = run_steps(g.runs, g.step)
        if steps is None:
            steps, _ = element_steps(d // 2, s // 2, 1)
        plan = make_plan(api, steps, src_sig, dst_sig, warns, exact=True)._replace(nbytes=int(whole[0].size))
        return NibblePlan(plan, d, s, whole, g)  # (nbytes: each byte once, not once per nibble)
    steps, _ = element_steps(d // 2, s // 2, 1) if d.size else ((), False)
    return NibblePlan(make_plan(api, steps, src_sig, dst_sig, warns, exact=True), d, s, None)


def run_steps(runs: np.ndarray, step: int) -> tuple | None:
    """The byte spans of a whole-byte nibble map as plan steps, from its kernel runs: per run length, one Move
    from the low-nibble source bytes and one from the high-nibble ones (byte for byte what the map reads and
    writes; the steps only describe the spans: NibblePlan runs the map). None when a nibble step is odd (a run
    would read alternate halves: the general lowering then)."""
    if step % 2:
        return None
    out = []
    for n in np.unique(runs[:, 3]).tolist():
        sel = runs[runs[:, 3] == n]
        for col in (1, 2):  # (an even step keeps each run's nibbles in one half: bytes lo//2 + k*step/2)
            out.append(Move(tuple((sel[:, col] // 2).tolist()), tuple(sel[:, 0].tolist()), 1,
                            ((n, step // 2, 1),)))
    return tuple(out)


__all__ = ["B4_TYPES", "INT4", "FP4_E2M1", "FP4_E1M2", "is_b4", "bits_of", "pack4", "unpack4", "from_codes",
           "NibblePlan", "Gather", "nibble_plan", "nibbles_overlap", "compiled", "kernel_gather"]
