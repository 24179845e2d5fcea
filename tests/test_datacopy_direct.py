"""New ``DataCopy(DataCopyParams)`` plans go straight to the single-burst / one-loop builder (no loop mode, no
head-to-head gaps, one dtype): the Plan (kernel arguments included) or the error is the one the general dispatch
(``make_plan``) gives, on every product, path and element width."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy.dma import abi
from fastcopy.dma.steps import Move
from fastcopy.memory import TensorSig
from fastcopy.ops import datacopy
from fastcopy.products import ANY, DATACOPY_PATHS, POSITIONS, Product
from test_plan_builders import _verdict_or_plan as _verdict
from test_plan_builders import assert_general_plan, same, sig

_WIDTHS = {1: np.dtype(np.int8), 2: np.dtype(np.float16), 4: np.dtype(np.float32), 8: np.dtype(np.int64)}
#: (product, (src phys, dst phys), dtype) of every DataCopyParams path, one dtype per element width it takes
_CASES = []
for _product, _paths in DATACOPY_PATHS.items():
    for _path, _dtypes in _paths.items():
        for _dt in _WIDTHS.values():
            if _dtypes is ANY or _dt in _dtypes:
                _CASES.append((_product, _path, _dt))


def _position(product, phys):
    return next(p for p, ph in POSITIONS[product].items() if ph is phys)


def test_every_width_and_product_is_drawn():
    assert {dt.itemsize for _, _, dt in _CASES} == {1, 2, 4, 8}
    assert {p for p, _, _ in _CASES} == set(Product)


@settings(max_examples=400, deadline=None)
@given(case=st.sampled_from(_CASES), bc=st.sampled_from([0, 1, 2, 3, 7, 4095, 4096]), bl=st.integers(0, 9),
       src_gap=st.sampled_from([0, 0, 1, 2, 5, 65535]), dst_gap=st.sampled_from([0, 0, 1, 3]),
       src_n=st.integers(0, 4096), dst_n=st.integers(0, 4096), src_res=st.integers(0, 63),
       dst_res=st.integers(0, 63), src_addr=st.sampled_from([0, 0, 0, 1, 32, 64, 96]),
       dst_addr=st.sampled_from([0, 0, 0, 2, 32, 64, 128]))
def test_direct_plan_is_make_plans(case, bc, bl, src_gap, dst_gap, src_n, dst_n, src_res, dst_res,
                                   src_addr, dst_addr):
    product, (sp, dp), dt = case
    src = TensorSig(_position(product, sp), sp, dt, src_n * dt.itemsize, src_addr, src_res)
    dst = TensorSig(_position(product, dp), dp, dt, dst_n * dt.itemsize, dst_addr, dst_res)
    key = (bc, bl, src_gap, dst_gap)
    got = _verdict(datacopy._plan_params.__wrapped__, key, src, dst, product, None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(datacopy, "single_burst", lambda *args: None)  # (every plan through make_plan)
        want = _verdict(datacopy._plan_params.__wrapped__, key, src, dst, product, None)
    assert same(got, want)


@settings(max_examples=300, deadline=None)
@given(count=st.integers(0, 9), burst=st.integers(1, 600), sstride=st.one_of(st.just(None), st.integers(-700, 700)),
       dstride=st.sampled_from(["burst", "-burst", "gap"]), soff=st.integers(-40, 6000), doff=st.integers(0, 6000),
       src_res=st.integers(0, 63), dst_res=st.integers(0, 63), size=st.integers(0, 1 << 13), warn=st.booleans())
def test_one_loop_move_builder(count, burst, sstride, dstride, soff, doff, src_res, dst_res, size, warn):
    """A Move of one offset and exactly one loop (the step of a DataCopyParams: the loop folded inline): bursts
    that touch on both sides (one burst), a gather into a contiguous destination (forwards, backwards), gaps in
    the destination (the general builders), counts 0 and 1; in and out of bounds: the general lowering's plan."""
    b = {"burst": burst, "-burst": -burst, "gap": burst + 32}[dstride]
    step = Move((soff,), (doff,), burst, ((count, burst if sstride is None else sstride, b),))
    warnings = ("a warning",) if warn else ()
    assert_general_plan(step, sig(size, src_res), sig(size, dst_res), warnings)


@pytest.mark.parametrize("n, c, s, d, doff, soff", [(1, 2, 1, 1, 0, 0), (24, 7, -30, 24, 6, 200), (3, 4095, 9, -3,
                                                                                                  12345, 0)])
def test_pack_loop_is_pack(n, c, s, d, doff, soff):
    assert same(abi.pack_loop(n, c, s, d, doff, soff),
                abi.pack(n, abi.NO_LOOPS[1:] + ((c, s, d),), (0, 1, 0, 1), (doff,), (soff,)))
