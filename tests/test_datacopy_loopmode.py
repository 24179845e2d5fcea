"""Basic DataCopy under Atlas 350 loop mode (§4.8): every GM <-> UB move repeats loop2Size x loop1Size times
with shifted source and destination; compared with the oracle applied once per repetition (the repetitions'
destinations are disjoint here, so that is the one-call result)."""

from __future__ import annotations

import numpy as np
import pytest
from dc_util import tensor_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy import (DataCopy, DataCopyMVType, DataCopyParams, GlobalTensor, LoopModeParams, RangeError,
                      ResetLoopModePara, SetLoopModePara, TPipe, TPosition, UnsupportedError)
from fastcopy.reference.datacopy import data_copy


@settings(max_examples=60, deadline=None)
@given(bc=st.integers(1, 3), bl=st.integers(1, 2), sg=st.integers(0, 2), dg=st.integers(0, 2),
       n1=st.integers(1, 3), n2=st.integers(1, 2), to_ub=st.booleans(), seed=st.integers(0, 2**31))
def test_basic_datacopy_repeats_under_loop_mode(bc, bl, sg, dg, n1, n2, to_ub, seed):
    rng = np.random.default_rng(seed)
    src_fp, dst_fp = bc * bl * 32 + (bc - 1) * sg * 32, bc * bl * 32 + (bc - 1) * dg * 32
    def up32(x):
        return -(-x // 32) * 32

    if to_ub:  # GM source: any stride (overlapping reads are fine); UB destination: 32-aligned, disjoint
        s1 = 32 * int(rng.integers(0, 3))
        s2 = s1 * n1 + 32
        d1 = up32(dst_fp) + 32 * int(rng.integers(0, 2))
        d2 = d1 * n1 + 32 * int(rng.integers(0, 2))
    else:  # UB source: 32-aligned; GM destination: disjoint, any byte stride
        s1 = up32(src_fp)
        s2 = s1 * n1 + 32
        d1 = dst_fp + int(rng.integers(0, 5))
        d2 = (dst_fp + 8) * n1
    src_n = s2 * (n2 - 1) + s1 * (n1 - 1) + src_fp
    dst_n = d2 * (n2 - 1) + d1 * (n1 - 1) + dst_fp
    pipe = TPipe(product="ATLAS_350", capacities={"UB": 1 << 20})
    raw = rng.integers(0, 256, src_n + 64, dtype=np.uint8)
    if to_ub:
        src = GlobalTensor(raw[:src_n])
        dst = pipe.alloc(TPosition.VECIN, "uint8", dst_n + 32)
    else:
        src = pipe.alloc(TPosition.VECOUT, "uint8", src_n)
        src.numpy()[:] = raw[:src_n]
        src.set_defined()
        dst = GlobalTensor(rng.integers(0, 256, dst_n + 32, dtype=np.uint8))
    want, want_def = tensor_bytes(dst)
    s_data, s_def = tensor_bytes(src)
    path = "GM->UB" if to_ub else "UB->GM"
    for l2 in range(n2):
        for l1 in range(n1):
            so, do = l1 * s1 + l2 * s2, l1 * d1 + l2 * d2
            d_view, d_def = want[do:], want_def[do:]
            data_copy(d_view, d_def, s_data[so:], s_def[so:], path=path, product="350", blockCount=bc,
                      blockLen=bl, srcGap=sg, dstGap=dg)
    mv = DataCopyMVType.OUT_TO_UB if to_ub else DataCopyMVType.UB_TO_OUT
    SetLoopModePara(LoopModeParams(n1, n2, s1, d1, s2, d2), mv, pipe=pipe)
    DataCopy(dst, src, DataCopyParams(bc, bl, sg, dg))
    ResetLoopModePara(pipe=pipe)
    got, got_def = tensor_bytes(dst)
    assert np.array_equal(got, want) and np.array_equal(got_def, want_def)


def test_loop_mode_is_per_direction_and_resets():
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.arange(256, dtype=np.uint8))
    ub = pipe.alloc(TPosition.VECIN, "uint8", 256)
    SetLoopModePara(LoopModeParams(2, 1, 32, 64, 0, 0), DataCopyMVType.UB_TO_OUT, pipe=pipe)
    DataCopy(ub, src, 32)  # GM -> UB: the UB_TO_OUT setting does not apply
    assert ub.defined().sum() == 32
    SetLoopModePara(LoopModeParams(2, 1, 32, 64, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    DataCopy(ub, src, 32)
    assert ub.defined()[64:96].all() and np.array_equal(ub.numpy()[64:96], np.arange(32, 64))
    ResetLoopModePara(DataCopyMVType.OUT_TO_UB, pipe=pipe)
    fresh = pipe.alloc(TPosition.VECIN, "uint8", 256)
    DataCopy(fresh, src, 32)
    assert fresh.defined().sum() == 32


def test_loop_mode_rules():
    with pytest.raises(UnsupportedError, match="loop mode exists only on Atlas 350, not on Atlas A2"):
        SetLoopModePara(LoopModeParams(2, 1), DataCopyMVType.OUT_TO_UB, pipe=TPipe(product="ATLAS_A2"))
    pipe = TPipe(product="ATLAS_350")
    with pytest.raises(RangeError, match=r"loop1DstStride=33 is a UB-side stride: a multiple of 32"):
        SetLoopModePara(LoopModeParams(2, 1, 0, 33), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    with pytest.raises(RangeError, match=r"loop1Size=0 is outside \[1, 2097151\]"):
        SetLoopModePara(LoopModeParams(0, 1), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    with pytest.raises(RangeError, match=r"loop2SrcStride=1099511627776 is outside \[0, 1099511627775\] bytes"):
        SetLoopModePara(LoopModeParams(1, 2, 0, 0, 2**40, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
