"""Property tests: the public sliced DataCopy equals the reference oracle (fastcopy/reference/slice.py) bit for
bit, data and definedness, over random valid SliceInfo lists of 1 to 8 dimensions, every element width, every
product with the path, both directions, with and without Atlas 350 loop mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastcopy import (DataCopy, DataCopyMVType, GlobalTensor, LoopModeParams, ResetLoopModePara, SetLoopModePara,
                      SliceInfo, TPipe, TPosition)
from fastcopy.products import SLICE_PATHS, Phys, Product
from fastcopy.reference import slice as ref

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRODUCTS = [Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_INFERENCE_AICORE, Product.ATLAS_350]
HIGHER_BUDGET = 48  # product of the shapeValues of dims >= 1 on each side (keeps tensors small)


def _dtypes(product):
    return sorted(SLICE_PATHS[product][(Phys.GM, Phys.UB)], key=lambda d: (d.itemsize, str(d)))


@st.composite
def side(draw, n0, run, counts, ub, es, dims):
    """One SliceInfo list with ``n0`` runs of ``run`` elements and ``counts`` indices above dim 0."""
    q = 32 // es
    start0 = q * draw(st.integers(0, 2)) if ub else draw(st.integers(0, 40))
    stride0 = q * draw(st.integers(0, 2)) if ub else draw(st.integers(0, 20))
    end0 = start0 + n0 * run + (n0 - 1) * stride0 - 1
    shape0 = end0 + 1 + draw(st.integers(0, 9))
    if ub and dims >= 2:
        shape0 = -(-shape0 // q) * q  # rule 4 / 11.8: UB rows 32-byte aligned
    out = [SliceInfo(start0, end0, stride0, run * es // 32, shape0)]
    used = 1
    for d, n in enumerate(counts):
        rest = int(np.prod(counts[d + 1:], dtype=np.int64))
        avail = HIGHER_BUDGET // (used * rest)
        start, stride, slack = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 1))
        if start + (n - 1) * (1 + stride) + 1 + slack > avail:
            start, stride, slack = 0, 0, 0
        end = start + (n - 1) * (1 + stride)
        shape = end + 1 + slack
        out.append(SliceInfo(start, end, stride, 1, shape))
        used *= shape
    return out


@st.composite
def slice_case(draw, products=PRODUCTS):
    product = draw(st.sampled_from(products))
    dtype = draw(st.sampled_from(_dtypes(product)))
    es = dtype.itemsize
    to_gm = draw(st.booleans())
    dims = draw(st.integers(1, 8))
    run = (32 // es) * draw(st.integers(1, 3))
    n0 = draw(st.integers(1, 3))
    counts = []
    for _ in range(dims - 1):
        left = HIGHER_BUDGET // max(1, int(np.prod(counts, dtype=np.int64)))
        counts.append(draw(st.integers(1, max(1, min(3, left)))))
    # the destination pairs the same number of combinations, possibly factored differently (rule 3)
    total = int(np.prod(counts, dtype=np.int64))
    dst_counts = draw(st.sampled_from([list(counts), list(counts[::-1]),
                                       [total] + [1] * (dims - 2) if dims > 1 else []]))
    src_info = draw(side(n0, run, counts, ub=to_gm, es=es, dims=dims))
    dst_info = draw(side(n0, run, dst_counts, ub=not to_gm, es=es, dims=dims))
    seed = draw(st.integers(0, 2**32 - 1))
    return product, dtype, to_gm, dims, src_info, dst_info, seed


def _footprint(info):
    return int(np.prod([i.shapeValue for i in info], dtype=np.int64))


def _bytes(t):
    data = t.memory.data[t.offset:t.offset + t.nbytes]
    plane = t.memory.plane
    defined = np.ones(t.nbytes, bool) if plane is None else plane[t.offset:t.offset + t.nbytes].astype(bool)
    return data, defined


def _random_local(pipe, position, dtype, count, rng):
    """A LocalTensor at a random aligned address: random bytes, random elements defined."""
    t = pipe.alloc(position, dtype, count, addr=32 * int(rng.integers(0, 4)))
    t.numpy().view(np.uint8)[:] = rng.integers(0, 256, t.nbytes, dtype=np.uint8)
    t.set_defined(rng.random(count) < 0.7)
    return t


def _build(product, dtype, to_gm, src_info, dst_info, seed):
    rng = np.random.default_rng(seed)
    pipe = TPipe(product, capacities={"UB": 1 << 20})
    gm_info = dst_info if to_gm else src_info
    ub_info = src_info if to_gm else dst_info
    gm_count = _footprint(gm_info) + int(rng.integers(0, 8))
    ub_count = _footprint(ub_info) + int(rng.integers(0, 8))
    gm_arr = rng.integers(0, 256, gm_count * dtype.itemsize, dtype=np.uint8).view(dtype)
    gm = GlobalTensor(gm_arr, defined=bool(rng.integers(0, 2)))
    if to_gm:
        ub = _random_local(pipe, TPosition.VECOUT, dtype, ub_count, rng)
        return pipe, gm, ub
    ub = _random_local(pipe, TPosition.VECIN, dtype, ub_count, rng)
    return pipe, ub, gm


def _oracle(dst, src, dst_info, src_info, dims, es, shifts=((0, 0),)):
    """Expected destination bytes and definedness (the reference applied once per loop-mode repetition)."""
    want, want_def = (x.copy() for x in _bytes(dst))
    src_bytes, src_def = (x.copy() for x in _bytes(src))
    for s_shift, d_shift in shifts:
        ref.slice_copy(want[d_shift:], want_def[d_shift:], src_bytes[s_shift:], src_def[s_shift:], es=es,
                       dst_info=[i.as_dict() for i in dst_info], src_info=[i.as_dict() for i in src_info],
                       dimValue=dims)
    return want, want_def


def _check(dst, want, want_def):
    got, got_def = _bytes(dst)
    assert np.array_equal(got_def, want_def), np.flatnonzero(got_def != want_def)[:10]
    assert np.array_equal(got[want_def], want[want_def]), np.flatnonzero((got != want) & want_def)[:10]
    assert np.array_equal(got, want)  # undefined bytes too: untouched ones keep theirs, none are written here


@pytest.mark.filterwarnings("ignore:.*miscomputed by the device")  # 310P, semantics.md §9 #36: tested in test_slice.py
@SETTINGS
@given(slice_case())
def test_kernel_equals_reference(case):
    product, dtype, to_gm, dims, src_info, dst_info, seed = case
    pipe, dst, src = _build(product, dtype, to_gm, src_info, dst_info, seed)
    want, want_def = _oracle(dst, src, dst_info, src_info, dims, dtype.itemsize)
    DataCopy(dst, src, dst_info, src_info, dims)
    _check(dst, want, want_def)


@pytest.mark.filterwarnings("ignore:.*miscomputed by the device")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slice_case(products=[Product.ATLAS_350]), st.integers(1, 3), st.integers(1, 2), st.data())
def test_kernel_equals_reference_in_loop_mode(case, n1, n2, data):
    """Loop mode repeats the whole slice with shifted starts; strides chosen so repetitions do not overlap."""
    product, dtype, to_gm, dims, src_info, dst_info, seed = case
    es = dtype.itemsize
    src_fp = _footprint(src_info) * es
    dst_fp = _footprint(dst_info) * es
    align = lambda n: -(-n // 32) * 32  # noqa: E731  UB-side strides are multiples of 32
    s1 = align(src_fp) if not to_gm else align(src_fp) + 32 * data.draw(st.integers(0, 1))
    d1 = align(dst_fp) + 32 * data.draw(st.integers(0, 1))
    if not to_gm:
        s1 = src_fp + data.draw(st.integers(0, 5)) * es  # GM side: any byte stride
    else:
        d1 = dst_fp + data.draw(st.integers(0, 5)) * es
    s2, d2 = s1 * n1, d1 * n1
    rng = np.random.default_rng(seed)
    pipe = TPipe(product, capacities={"UB": 4 << 20})
    reps = n1 * n2
    src_count = (s2 * n2) // es + 8
    dst_count = (d2 * n2) // es + 8
    if to_gm:
        src = _random_local(pipe, TPosition.VECOUT, dtype, src_count, rng)
        dst = GlobalTensor(rng.integers(0, 256, dst_count * es, dtype=np.uint8).view(dtype))
    else:
        src = GlobalTensor(rng.integers(0, 256, src_count * es, dtype=np.uint8).view(dtype))
        dst = _random_local(pipe, TPosition.VECIN, dtype, dst_count, rng)
    shifts = [(l2 * s2 + l1 * s1, l2 * d2 + l1 * d1) for l2 in range(n2) for l1 in range(n1)]
    assert len(shifts) == reps
    want, want_def = _oracle(dst, src, dst_info, src_info, dims, es, shifts)
    mv = DataCopyMVType.UB_TO_OUT if to_gm else DataCopyMVType.OUT_TO_UB
    SetLoopModePara(LoopModeParams(n1, n2, s1, d1, s2, d2), mv, pipe=pipe)
    try:
        DataCopy(dst, src, dst_info, src_info, dims)
    finally:
        ResetLoopModePara(pipe=pipe)
    _check(dst, want, want_def)
