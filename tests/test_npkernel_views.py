"""The numpy kernels' strided views (dma/npkernels._views: one view per offset, loops of one pass left out) move
exactly the units of the index path (_index: every unit's index, in program order), for every loop shape, chunk,
offset set and element width; fills and all_set likewise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fastcopy.dma import abi, npkernels


@st.composite
def metas(draw, signed: bool = False):
    """A meta of one kernel call (``signed``: loop strides of either sign, as a backward copy lowers)."""
    burst = draw(st.integers(0, 5))
    stride = st.integers(-9, 9) if signed else st.integers(1, 9)
    loops = [tuple(draw(st.sampled_from([(1, 0, 0), (draw(st.integers(0, 4)), draw(stride), draw(stride))])))
             for _ in range(abi.MAX_LOOPS)]
    c0 = loops[0][0]
    i_lo = draw(st.integers(0, c0))
    i_hi = draw(st.integers(i_lo, c0))
    n_off = draw(st.integers(1, npkernels.VIEW_OFFSETS + 1))
    doffs = [draw(st.integers(0, 40)) for _ in range(n_off)]
    soffs = [draw(st.integers(0, 40)) for _ in range(n_off)]
    o_lo = draw(st.integers(0, n_off - 1))
    o_hi = draw(st.integers(o_lo, n_off))
    return abi.pack(burst, loops, (o_lo, o_hi, i_lo, i_hi), doffs, soffs)


@settings(max_examples=400)
@given(metas(), st.sampled_from([np.uint8, np.uint16, np.uint32, np.uint64]), st.integers(0, 7), st.integers(0, 7))
def test_views_move_the_units_of_the_index_path(meta, dt, dbase, sbase):
    n = 400
    idx = npkernels._index(dbase, meta, 2)
    if not isinstance(idx, slice):
        assume(np.unique(idx).size == idx.size)  # (a kernel call's writes never overlap: the lowering's promise)
    src = np.arange(n, dtype=dt)
    want = np.zeros(n, dt)
    want[npkernels._index(dbase, meta, 2)] = src[npkernels._index(sbase, meta, 1)]
    got = np.zeros(n, dt)
    npkernels.copy_strided(got, dbase, src, sbase, meta)
    assert np.array_equal(got, want)
    filled = np.zeros(n, dt)
    npkernels.fill_strided(filled, dbase, meta, 7)
    mask = np.zeros(n, bool)
    mask[npkernels._index(dbase, meta, 2)] = True
    assert np.array_equal(filled, np.where(mask, 7, 0).astype(dt))
    whole = meta.copy()
    whole[abi.RANGE:abi.RANGE + 4] = (0, meta[abi.NOFF], 0, meta[abi.LOOPS])
    read = np.arange(n)[npkernels._index(sbase, whole, 1)]
    units = np.zeros(n, dt)
    units[read] = 1
    assert npkernels.all_set(units, sbase, meta, 1)
    if read.size:
        units[read[-1]] = 0
        assert not npkernels.all_set(units, sbase, meta, 1)


@settings(max_examples=400)
@given(metas(), st.sampled_from([np.uint8, np.uint16, np.uint64]), st.integers(0, 7), st.integers(0, 7))
def test_a_copy_within_one_array_reads_before_it_writes(meta, dt, dbase, sbase):
    """Source and destination in one array (a UB -> UB copy), their views overlapping: the result of reading every
    source unit before writing any (what the index path gives), also now that each view is assigned directly."""
    n = 200
    idx = npkernels._index(dbase, meta, 2)
    if not isinstance(idx, slice):
        assume(np.unique(idx).size == idx.size)
    arr = np.arange(n, dtype=dt)
    want = arr.copy()
    want[npkernels._index(dbase, meta, 2)] = arr[npkernels._index(sbase, meta, 1)].copy()
    npkernels.copy_strided(arr, dbase, arr, sbase, meta)
    assert np.array_equal(arr, want)


@pytest.mark.parametrize("dt", [np.uint8, np.uint16, np.uint64])
@pytest.mark.parametrize("loop, doff, soff", [((4, 2, 1), 1, 0), ((4, 1, 2), 0, 1), ((5, 3, 2), 1, 0),
                                              ((5, 2, 3), 0, 1), ((4, 2, 2), 1, 0), ((4, 2, 2), 0, 1)])
def test_a_single_strided_view_within_one_array_reads_before_it_writes(dt, loop, doff, soff):
    """One offset, one-unit bursts and one loop of different source and destination strides: one 1-D view a
    side, overlapping, the destination after the source (numpy walks it backward) and before it (forward). numpy's
    assignment reads such a source while it writes (``a[1:5] = a[0:8:2]`` reads ``a[4]`` after writing it): the
    kernel must still give the result of reading every source unit first."""
    idle = (1, 0, 0)
    meta = abi.pack(1, [loop, idle, idle, idle], (0, 1, 0, loop[0]), [doff], [soff])
    arr = np.arange(40, dtype=dt)
    want = arr.copy()
    want[npkernels._index(0, meta, 2)] = arr[npkernels._index(0, meta, 1)].copy()
    npkernels.copy_strided(arr, 0, arr, 0, meta)
    assert np.array_equal(arr, want)


@settings(max_examples=400)
@given(metas(), st.sampled_from([1, 2, 4, 8]), st.integers(0, 63), st.integers(0, 63))
def test_byte_views_copy_the_units_of_the_typed_views(meta, w, doff, soff):
    _check_byte_views(meta, w, doff, soff)


@settings(max_examples=400)
@given(metas(signed=True), st.sampled_from([1, 2, 4, 8]), st.integers(0, 63), st.integers(0, 63))
def test_byte_views_copy_the_units_of_the_typed_views_with_strides_of_either_sign(meta, w, doff, soff):
    """As above with negative and zero strides (a backward copy: ``np.ndarray(buffer=)`` views that walk down from
    their first byte), the tensors 1600 bytes into their memories so every unit lies inside them."""
    _check_byte_views(meta, w, 1600 + doff, 1600 + soff)


def _check_byte_views(meta, w, doff, soff):
    """The plan's byte views (npkernels.byte_views, what a call on new tensors runs with copy_bytes) move exactly
    what copy_strided moves on the memories' typed views, for tensors at any host residue: two 64-byte aligned
    memories, the tensors at byte ``doff`` / ``soff`` (their residues), the typed views from byte 0."""
    from fastcopy.memory import aligned_empty

    n = 8 * 800
    idx = npkernels._index(doff // w, meta, 2)
    if not isinstance(idx, slice):
        assume(np.unique(idx).size == idx.size)
    views = npkernels.byte_views(meta.tolist(), w, doff, soff)
    if meta[abi.RANGE + 1] - meta[abi.RANGE] > npkernels.VIEW_OFFSETS:
        assert views is None
        return
    src = aligned_empty(n)
    src[:] = np.arange(n) % 251
    want, got = aligned_empty(n), aligned_empty(n)
    want[:] = 7
    got[:] = 7
    ut = np.dtype(f"u{w}")
    npkernels.copy_strided(want.view(ut), doff // w, src.view(ut), soff // w, meta)
    npkernels.copy_bytes(got, doff, src, soff, views)
    assert np.array_equal(got, want)
