"""Large slices of long rows on the row kernel with regular stores (``copy_rows``, ``config.ROWS_CACHED_BURST``):
the lowering's choice at the default tunables, the kernel's head / whole-line / tail split at every alignment,
and the public call bit for bit against the reference oracle (fastcopy/reference/slice.py): data and
definedness, one and two threads, a repeated call (its bound crew job) seeing a changed source."""

from __future__ import annotations

import numpy as np
import pytest

import fastcopy as fc
from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, config
from fastcopy.dma.abi import T_A_HI, T_A_LO, T_B_HI, T_B_LO, T_NT, pack_transpose
from fastcopy.kernels.layout import copy_rows
from fastcopy.ops import slice as slice_ops
from fastcopy.reference import slice as ref

SHAPE = (64, 128, 256)  # float32: 8 MiB; the slice below is 1 MiB of 512-byte rows (the bench's 8 MiB row, scaled)
SMALL = (16, 64, 256)  # its 128 KiB slice, checked against the oracle with PARALLEL_BYTES lowered to reach the path
INDEX = np.s_[::2, ::2, 64:192]


def _aligned(n, shift):
    buf = np.zeros(n + 128, np.uint8)
    o = (-buf.ctypes.data) % 64 + shift
    return buf[o:o + n]


@pytest.mark.parametrize("burst", [1, 15, 16, 17, 47, 48, 63, 64, 65, 127, 128, 512, 520, 700])
@pytest.mark.parametrize("dshift", [0, 1, 8, 16, 17, 32, 48, 63])
@pytest.mark.parametrize("sshift", [0, 3, 16])
def test_cached_rows_every_alignment(burst, dshift, sshift):
    """Regular stores: every destination residue mod 64 (head pieces of 16 bytes and a byte remainder, whole
    lines, tail), rows abutting or with gaps, a partial range of the batch and rows; nothing else written."""
    nb, na = 3, 4
    for gap in (0, 5):
        a = (na, burst + 7, burst + gap)
        batch = (nb, na * a[1] + 11, na * a[2] + 13)
        src = _aligned(nb * batch[1] + 64, sshift)
        src[:] = np.random.default_rng(burst).integers(0, 256, src.size, dtype=np.uint8)
        dst = _aligned(nb * batch[2] + 64, dshift)
        dst[:] = 0xA5
        want = dst.copy()
        for ib in range(1, nb):
            for ia in range(1, na):
                d, s = 8 + ib * batch[2] + ia * a[2], 4 + ib * batch[1] + ia * a[1]
                want[d:d + burst] = src[s:s + burst]
        copy_rows(dst, 8, src, 4, pack_transpose(burst, batch, a, (1, 0, burst), (1, 1), False, (1, nb, 1, na)))
        assert np.array_equal(dst, want)


def _slice_case(threads, monkeypatch, defined=True, shape=SHAPE):
    monkeypatch.setattr(config, "THREADS", threads)
    if shape != SHAPE:
        monkeypatch.setattr(config, "PARALLEL_BYTES", 1 << 15)
    slice_ops.plan_keys.cache_clear()
    a = np.random.default_rng(7).random(shape, dtype=np.float32)
    gm = GlobalTensor(a, defined=defined)
    sel = a[INDEX]
    pipe = TPipe(capacities={"UB": sel.nbytes + 128})
    x = pipe.alloc(TPosition.VECIN, "float", sel.size + 16, addr=32)
    d, s = fc.slice_infos(shape, INDEX, "float", product=pipe.product)
    return a, gm, sel, x, d, s


def test_lowering_picks_cached_rows_in_whole_planes(monkeypatch):
    """At the default tunables the slice's one step is ``copy_rows`` without streaming stores, its pieces whole
    planes covering every plane once."""
    a, gm, sel, x, d, s = _slice_case(2, monkeypatch)
    plan = slice_ops.plan_slice(x, gm, d, s, len(s))
    (ks,) = plan.ksteps
    assert ks.kind == "rows" and ks.burst == 512
    planes, rows = ks.loops[0][0], ks.loops[1][0]
    assert (planes, rows) == (SHAPE[0] // 2, SHAPE[1] // 2)
    assert all(m[T_NT] == 0 and (m[T_A_LO], m[T_A_HI]) == (0, rows) for m in ks.metas)
    cover = [(int(m[T_B_LO]), int(m[T_B_HI])) for m in ks.metas]
    assert len(cover) > 1 and cover[0][0] == 0 and cover[-1][1] == planes
    assert all(p[1] == q[0] for p, q in zip(cover, cover[1:]))
    monkeypatch.setattr(config, "ROWS_CACHED_BURST", 1024)  # (shorter rows: the generic kernel, as before)
    slice_ops.plan_keys.cache_clear()
    assert slice_ops.plan_slice(x, gm, d, s, len(s)).ksteps[0].kind == "copy"
    slice_ops.plan_keys.cache_clear()


def _bytes(t):
    """``t``'s bytes and their definedness (bool per byte), copies."""
    lo, hi = t.offset, t.offset + t.nbytes
    return t.memory.data[lo:hi].copy(), t.memory.plane_bytes(lo, hi).astype(bool)


def _reference(x, gm, d, s):
    """The oracle's bytes and definedness of ``x`` after the slice copy."""
    want, want_def = _bytes(x)
    src, src_def = _bytes(gm)
    ref.slice_copy(want, want_def, src, src_def, es=4, dst_info=[i.as_dict() for i in d],
                   src_info=[i.as_dict() for i in s], dimValue=len(s))
    return want, want_def


def _check(x, want, want_def):
    got, got_def = _bytes(x)
    assert np.array_equal(got_def, want_def)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_slice_matches_reference(threads, monkeypatch):
    """Data and definedness bit for bit, the repeated call too (the bound crew job reads the source again)."""
    a, gm, sel, x, d, s = _slice_case(threads, monkeypatch, shape=SMALL)
    assert slice_ops.plan_slice(x, gm, d, s, len(s)).ksteps[0].kind == "rows"
    for k in range(3):
        want, want_def = _reference(x, gm, d, s)
        DataCopy(x, gm, d, s, len(s))
        _check(x, want, want_def)
        assert np.array_equal(x.numpy()[:sel.size], sel.reshape(-1))
        a[INDEX] += 1.0  # (the next repeat must see the new values)
    slice_ops.plan_keys.cache_clear()


@pytest.mark.parametrize("threads", [1, 2])
def test_large_slice_of_partly_undefined_source(threads, monkeypatch):
    """A source with undefined bytes inside the slice: its definedness travels with the data."""
    a, gm, sel, x, d, s = _slice_case(threads, monkeypatch, defined=False, shape=SMALL)
    gm.set_defined(np.random.default_rng(3).random(a.size) < 0.999)
    for _ in range(2):  # (the repeat: the source is not known to be defined, the plane travels again)
        want, want_def = _reference(x, gm, d, s)
        assert not want_def.all() and want_def.any()
        DataCopy(x, gm, d, s, len(s))
        _check(x, want, want_def)
    slice_ops.plan_keys.cache_clear()
