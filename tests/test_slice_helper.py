"""The numpy-slice helper ``slice_infos``: whatever it accepts, DataCopy with its SliceInfo lists equals numpy
indexing (gather GM -> UB, scatter UB -> GM, dense or given destination layout); what it rejects it rejects
with the rule that cannot be met."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastcopy import (AlignmentError, DataCopy, FastCopyError, GlobalTensor, OutOfBoundsError, ParamError,
                      RangeError, SliceInfo, TPipe, TPosition, UnsupportedError, slice_infos)
from fastcopy.products import SLICE_PATHS, Phys, Product

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRODUCTS = [Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_INFERENCE_AICORE, Product.ATLAS_350]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
pytestmark = pytest.mark.filterwarnings("ignore:.*miscomputed by the device")  # 310P fallback layouts


def _dtypes(product):
    return sorted(SLICE_PRODUCT_DTYPES[product], key=lambda d: (d.itemsize, str(d)))


SLICE_PRODUCT_DTYPES = {p: SLICE_PATHS[p][(Phys.GM, Phys.UB)] for p in PRODUCTS}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def random_array(shape, dtype, rng):
    n = int(np.prod(shape))
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)


@st.composite
def axis_index(draw, extent, innermost, q):
    """An int or a slice of an axis; the innermost one is biased toward valid runs (step 1, q-multiple count),
    the others toward non-empty strided slices (written with negative or omitted bounds now and then)."""
    kind = draw(st.integers(0, 9))
    if innermost and kind > 1:
        count = q * draw(st.integers(1, max(1, extent // q)))
        start = draw(st.integers(0, max(0, extent - count)))
        if draw(st.booleans()):
            return slice(start, start + count)
        return slice(start - extent, start + count - extent if start + count < extent else None)
    if not innermost and kind == 0:
        return draw(st.integers(-extent, extent - 1))
    if not innermost and kind == 1:
        return slice(None)
    if kind < 8:
        start = draw(st.integers(0, extent - 1))
        step = draw(st.integers(1, 3))
        count = draw(st.integers(1, len(range(start, extent, step))))
        stop = start + (count - 1) * step + 1
        neg = draw(st.booleans())
        return slice(start - extent if neg else start, None if stop >= extent and neg else stop, step)
    start = draw(st.one_of(st.none(), st.integers(-extent, extent - 1)))
    stop = draw(st.one_of(st.none(), st.integers(-extent, extent)))
    step = draw(st.one_of(st.none(), st.integers(1, 4)))
    return slice(start, stop, step)


@st.composite
def gather_case(draw):
    product = draw(st.sampled_from(PRODUCTS))
    dtype = draw(st.sampled_from(_dtypes(product)))
    q = 32 // dtype.itemsize
    ndim = draw(st.integers(1, 5))
    shape = [draw(st.integers(1, 7)) for _ in range(ndim - 1)] + [q * draw(st.integers(1, 4)) +
                                                                   draw(st.sampled_from([0, 0, 0, 1, 3]))]
    index = tuple(draw(axis_index(n, k == ndim - 1, q)) for k, n in enumerate(shape))
    if draw(st.integers(0, 5)) == 0 and ndim > 1:
        index = (Ellipsis,) + index[1:]
    return product, dtype, tuple(shape), index, draw(st.integers(0, 2**32 - 1))


def _valid_run_class(shape, index, dtype):
    """A sufficient condition for acceptance: the innermost slice is a step-1 run of whole 32-byte blocks."""
    index = tuple(slice(None) if i is Ellipsis else i for i in index)  # gather_case: '...' stands for one axis
    last = index[-1]
    if not isinstance(last, slice):
        return False
    start, stop, step = last.indices(shape[-1])
    count = len(range(start, stop, step))
    return (step == 1 or count == 1) and count > 0 and count * dtype.itemsize % 32 == 0 and all(
        isinstance(i, int) or len(range(*i.indices(n))) > 0 for i, n in zip(index, shape))


@SETTINGS
@given(gather_case())
def test_gather_equals_numpy_indexing(case):
    product, dtype, shape, index, seed = case
    rng = np.random.default_rng(seed)
    a = random_array(shape, dtype, rng)
    try:
        want = a[index]
    except IndexError:
        return
    try:
        r = slice_infos(shape, index, dtype, product=product)
    except FastCopyError:
        assert not _valid_run_class(shape, index, dtype), (shape, index)
        return
    pipe = TPipe(product, capacities={"UB": 1 << 20})
    x = pipe.alloc(TPosition.VECIN, dtype, want.size)
    DataCopy(x, GlobalTensor(a), r.dstSliceInfo, r.srcSliceInfo, r.dimValue)
    assert np.array_equal(bits(x.numpy()), bits(want).ravel())
    assert x.defined().all()


@SETTINGS
@given(gather_case(), st.data())
def test_gather_into_a_given_layout(case, data):
    """The destination is a bigger UB array; the slice lands at an offset, the rest keeps its contents."""
    product, dtype, shape, index, seed = case
    rng = np.random.default_rng(seed)
    a = random_array(shape, dtype, rng)
    try:
        want_block = a[index]
    except IndexError:
        return
    sel = want_block.shape or (1,)
    q = 32 // dtype.itemsize
    pad = [data.draw(st.integers(0, 3)) for _ in sel]
    off = [data.draw(st.integers(0, p)) for p in pad]
    if data.draw(st.booleans()):  # make the UB rows 32-byte multiples
        pad[-1] += -(sel[-1] + pad[-1]) % q
        off[-1] = q * data.draw(st.integers(0, pad[-1] // q))
    dst_shape = tuple(n + p for n, p in zip(sel, pad))
    dst_index = tuple(slice(o, o + n) for o, n in zip(off, sel))
    try:
        r = slice_infos(shape, index, dtype, dst_shape, dst_index, product=product)
    except FastCopyError:
        return
    pipe = TPipe(product, capacities={"UB": 1 << 20})
    x = pipe.alloc(TPosition.VECIN, dtype, int(np.prod(dst_shape)))
    init = random_array(dst_shape, dtype, rng)
    x.numpy()[:] = init.ravel()
    x.set_defined()
    DataCopy(x, GlobalTensor(a), r.dstSliceInfo, r.srcSliceInfo, r.dimValue)
    want = init.copy()
    want[dst_index] = want_block.reshape(sel)
    assert np.array_equal(bits(x.numpy()), bits(want).ravel())


@SETTINGS
@given(gather_case())
def test_scatter_equals_numpy_assignment(case):
    product, dtype, shape, index, seed = case
    rng = np.random.default_rng(seed)
    out = random_array(shape, dtype, rng)
    try:
        sel = out[index].shape
    except IndexError:
        return
    try:
        r = slice_infos(sel or (1,), (), dtype, shape, index, direction="UB->GM", product=product)
    except FastCopyError:
        assert not _valid_run_class(shape, index, dtype), (shape, index)
        return
    pipe = TPipe(product, capacities={"UB": 1 << 20})
    n = int(np.prod(sel))
    x = pipe.alloc(TPosition.VECOUT, dtype, n)
    block = random_array((n,), dtype, rng)
    x.numpy()[:] = block
    x.set_defined()
    want = out.copy()
    want[index] = block.reshape(sel)
    gm = GlobalTensor(out)
    DataCopy(gm, x, r.dstSliceInfo, r.srcSliceInfo, r.dimValue)
    assert np.array_equal(bits(out), bits(want))
    assert gm.defined().all()


# ---------------------------------------------------------------------------------------------------------------
# examples and errors

def test_page_slice_as_one_dimension():
    """Rows 0 and 2, columns 16:64 of a 3 x 87 int32 array: one dimension of runs with a gap."""
    r = slice_infos((3, 87), np.s_[::2, 16:64], "int32_t", product="ATLAS_A2")
    assert [i.key() for i in r.srcSliceInfo] == [(16, 237, 126, 6, 261)]
    assert [i.key() for i in r.dstSliceInfo] == [(0, 95, 0, 6, 96)]
    assert r.dimValue == 1
    dst, src = r  # unpacks destination first, as DataCopy takes them
    assert dst is r.dstSliceInfo and src is r.srcSliceInfo


def test_three_dimensional_slice():
    a = np.arange(8 * 16 * 64, dtype=np.float32).reshape(8, 16, 64)
    index = np.s_[1::3, 2:14:2, 8:40]
    r = slice_infos(a.shape, index, np.float32, product="ATLAS_A2")
    assert r.dimValue == 2  # rows fused into dimension 0 as runs with a gap; planes above
    pipe = TPipe("ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "float", a[index].size)
    DataCopy(x, GlobalTensor(a), *r, r.dimValue)
    assert np.array_equal(x.numpy(), a[index].ravel())


def test_innermost_step_is_rejected():
    with pytest.raises(UnsupportedError, match=r"innermost axis of the source has step 2 \(32 of 64 elements\)"):
        slice_infos((4, 64), np.s_[:, ::2], "float")


def test_innermost_run_must_be_whole_blocks():
    with pytest.raises(UnsupportedError, match=r"is 4 elements = 16 bytes, not a multiple of 32.*multiple of 8 "
                                               r"elements of float"):
        slice_infos((4, 64), np.s_[:, 1:5], "float")


def test_full_rows_fuse_into_longer_runs():
    """4 floats per row are not a run, but whole rows of a contiguous block are."""
    r = slice_infos((8, 4), np.s_[2:6, :], "float", product="ATLAS_A2")
    assert [i.key() for i in r.srcSliceInfo] == [(8, 23, 0, 2, 32)]


def test_empty_and_unsupported_indices():
    with pytest.raises(ParamError, match=r"axis 1: slice 5:5 selects nothing"):
        slice_infos((4, 64), np.s_[:, 5:5], "float")
    with pytest.raises(UnsupportedError, match="step=-1"):
        slice_infos((4, 64), np.s_[::-1, :], "float")
    with pytest.raises(UnsupportedError, match="only basic indexing"):
        slice_infos((4, 64), ([0, 2], slice(None)), "float")
    with pytest.raises(OutOfBoundsError, match="index 4 is out of bounds for extent 4"):
        slice_infos((4, 64), np.s_[4, :], "float")
    with pytest.raises(OutOfBoundsError, match="indexes 3 axes but the array has 2"):
        slice_infos((4, 64), np.s_[0, 0, 0], "float")


def test_sizes_must_match():
    with pytest.raises(ParamError, match=r"source slice has 128 elements \(2, 64\) but the destination slice has "
                                         r"64"):
        slice_infos((4, 64), np.s_[:2, :], "float", (64,))


def test_dtype_must_be_supported():
    with pytest.raises(UnsupportedError, match="dtype double is not supported.*Atlas A2"):
        slice_infos((4, 64), np.s_[:2, :], "double", product="ATLAS_A2")
    slice_infos((4, 64), np.s_[:2, :], "double", product="ATLAS_350")


def test_default_product_is_the_current_pipe():
    pipe = TPipe("ATLAS_INFERENCE_AICORE")  # (kept alive: the current core is the most recent live TPipe)
    with pytest.raises(UnsupportedError, match="bfloat16_t is not supported.*Atlas inference series AI Core"):
        slice_infos((4, 64), np.s_[:2, :], "bfloat16_t")
    del pipe
    with TPipe("ATLAS_A2"):
        slice_infos((4, 64), np.s_[:2, :], "bfloat16_t")


def test_ub_layout_that_breaks_alignment_names_the_rule():
    with pytest.raises(AlignmentError, match=r"no SliceInfo layout meets the hardware rules on Atlas A2.*"
                                             r"dstSliceInfo\[0\]\.(shapeValue=50|stride=2)"):
        slice_infos((4, 64), np.s_[0:2, 0:48], "float", (2, 50), np.s_[:, 0:48], product="ATLAS_A2")


def test_too_many_combinations_names_the_rule():
    with pytest.raises(RangeError, match="more than 1536"):
        slice_infos((80, 80, 80, 2, 8), np.s_[::2, ::2, ::2, 0, :], "float", product="ATLAS_A2")


def test_unaligned_gm_run_too_long_names_the_rule():
    """A 65536-byte run with an unaligned GM gap: GM->UB cannot, the split into smaller runs can."""
    r = slice_infos((2, 16385), np.s_[:, 0:16384], "float", product="ATLAS_A2")
    src = r.srcSliceInfo[0]
    assert src.burstLen * 32 <= 65535 or src.stride * 4 % 32 == 0


def test_no_common_structure():
    """Runs of 16 floats on one side, of 24 on the other: no pairing of whole runs exists."""
    with pytest.raises(UnsupportedError, match=r"no common run structure.*\(16, 3, 1\).*\(24, 2, 1\)"):
        slice_infos((3, 32), np.s_[:, 0:16], "float", (2, 48), np.s_[:, 0:24])


def test_destination_layout_example():
    """Place a 2 x 48 block at column 8 of a 2 x 64 UB buffer."""
    a = np.arange(3 * 87, dtype=np.int32).reshape(3, 87)
    r = slice_infos(a.shape, np.s_[::2, 16:64], "int32_t", (2, 64), np.s_[:, 8:56], product="ATLAS_A2")
    pipe = TPipe("ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "int32_t", 128)
    x.numpy()[:] = -1
    x.set_defined()
    DataCopy(x, GlobalTensor(a), *r, r.dimValue)
    want = np.full((2, 64), -1, np.int32)
    want[:, 8:56] = a[::2, 16:64]
    assert np.array_equal(x.numpy().reshape(2, 64), want)


def test_returns_sliceinfo_objects():
    r = slice_infos((4, 64), np.s_[1:3, 8:40], "float")
    assert all(isinstance(i, SliceInfo) for i in r.srcSliceInfo + r.dstSliceInfo)


@pytest.mark.parametrize("index", [np.s_[1:3, ::2, 0:8], np.s_[1:3, 1::2, 8:16], np.s_[2:, 1::3, :]])
def test_strided_axis_fuses_with_the_axis_above(index):
    """Every 2nd row of all planes from plane 1 is one progression: start = row start + plane * rows."""
    a = np.arange(4 * 6 * 32, dtype=np.float32).reshape(4, 6, 32)
    r = slice_infos(a.shape, index, np.float32, product="ATLAS_A2")
    assert r.dimValue == 1
    pipe = TPipe("ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "float", a[index].size)
    DataCopy(x, GlobalTensor(a), *r, r.dimValue)
    assert np.array_equal(x.numpy(), a[index].ravel())
