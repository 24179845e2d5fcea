"""The one-dimensional slice builder (``ops/slice._one_dim``) against the general planner, rule by rule: a valid
slice, then the same slice with one rule crossed at a time (each a case of its own, so that a rule the builder
stopped testing fails here every time, not in one hypothesis run of several: review of e34bf4e, where deleting
the UB-side gap test, the destination's run count test or the 16-bit run-length test of the unaligned engine
went unnoticed by test_one_dim_slice_builder in some runs). The verdict (plan, or error type and message) must be
the general planner's."""

from __future__ import annotations

import numpy as np
import pytest
from test_plan_builders import _builder_is_the_general_way

from fastcopy.memory import TensorSig
from fastcopy.ops import slice as slice_mod
from fastcopy.products import Phys, Product, TPosition

HALF = np.dtype(np.float16)
GM, UB = (TPosition.GM, Phys.GM), (TPosition.VECIN, Phys.UB)


def key(start, stride, n, bl=1, es=2, end_by=0, shape_by=9, burst=None):
    """A SliceInfo key of ``n`` runs of ``bl`` blocks (``end_by``: the end moved off the exact fit)."""
    run = bl * 32 // es
    end = start + n * run + (n - 1) * stride - 1 + end_by
    return (start, end, stride, bl if burst is None else burst, end + shape_by)


def sig(where, k, dt=HALF, room=64):
    n_bytes = (k[1] + 1) * dt.itemsize + room
    return TensorSig(*where, dt, max(n_bytes, 0), 0, 0)


def _case(gm_key, ub_key, to_gm=False, product=Product.ATLAS_A2, gm_room=64, ub_room=64):
    src_key, dst_key = (ub_key, gm_key) if to_gm else (gm_key, ub_key)
    src = sig(UB if to_gm else GM, src_key, room=ub_room if to_gm else gm_room)
    dst = sig(GM if to_gm else UB, dst_key, room=gm_room if to_gm else ub_room)
    return (dst_key,), (src_key,), src, dst, product


CASES = {
    "valid": _case(key(5, 7, 3), key(16, 16, 3)),
    "valid UB -> GM": _case(key(5, 7, 3), key(16, 16, 3), to_gm=True),
    "valid, aligned GM stride": _case(key(5, 16, 3), key(0, 0, 3)),
    "UB start not 32-byte aligned": _case(key(5, 7, 3), key(17, 16, 3)),
    "UB stride not 32-byte aligned": _case(key(5, 7, 3), key(16, 17, 3)),
    "run counts differ": _case(key(5, 7, 3), key(16, 16, 2)),
    "burstLen differs": _case(key(5, 7, 3), key(16, 16, 3, burst=2)),
    "burstLen 0": _case(key(5, 7, 3, burst=0), key(16, 16, 3, burst=0)),
    "end past the shape": _case(key(5, 7, 3, shape_by=0), key(16, 16, 3)),
    "ends inside a run": _case(key(5, 7, 3, end_by=-1), key(16, 16, 3)),
    "both end inside a run": _case(key(5, 7, 3, end_by=-1), key(16, 16, 3, end_by=-1)),
    "both end inside a gap": _case(key(5, 7, 3, end_by=3), key(16, 16, 3, end_by=3)),
    "narrower than a run": _case((5, 10, 0, 1, 40), (0, 5, 0, 1, 40)),
    "shape 0 (the GlobalTensor's)": _case(key(5, 7, 3, shape_by=-10**9), key(16, 16, 3)),
    "UB gap past 65535 blocks": _case(key(5, 7, 2), key(0, 16 * 65536, 2)),
    "UB gap of 65535 blocks": _case(key(5, 7, 2), key(0, 16 * 65535, 2)),
    "GM gap past 65535 blocks (aligned)": _case(key(0, 16 * 65536, 2), key(0, 0, 2)),
    "GM gap of 65535 blocks (aligned)": _case(key(0, 16 * 65535, 2), key(0, 0, 2)),
    "unaligned GM stride, runs past 65535 bytes (GM -> UB)": _case(key(5, 7, 2, bl=2048), key(0, 0, 2, bl=2048)),
    "unaligned GM stride, runs of 2048 blocks (UB -> GM)": _case(key(5, 7, 2, bl=2048), key(0, 0, 2, bl=2048),
                                                                 to_gm=True),
    "unaligned GM stride past 2**32 - 1 bytes on A2": _case(key(5, 2**31 + 1, 2), key(0, 0, 2)),
    "unaligned GM stride past 2**32 - 1 bytes on 350": _case(key(5, 2**31 + 1, 2), key(0, 0, 2),
                                                            product=Product.ATLAS_350),
    "unaligned GM stride, 3 runs, inference AI Core (warns)": _case(key(5, 7, 3), key(16, 16, 3),
                                                                   product=Product.ATLAS_INFERENCE_AICORE),
    "unaligned GM stride, 2 runs, inference AI Core": _case(key(5, 7, 2), key(16, 0, 2),
                                                           product=Product.ATLAS_INFERENCE_AICORE),
    "more than 4095 runs": _case(key(0, 0, 4096), key(0, 0, 4096)),
    "4095 runs": _case(key(0, 0, 4095), key(0, 0, 4095)),
    "source too small": _case(key(5, 7, 3), key(16, 16, 3), gm_room=-2),
    "destination too small": _case(key(5, 7, 3), key(16, 16, 3), ub_room=-2),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_each_rule_of_the_one_dim_builder_is_the_general_planners(case):
    dkeys, skeys, src, dst, product = case
    _builder_is_the_general_way(slice_mod, "_one_dim", lambda *a: None, slice_mod.plan_keys.__wrapped__, dkeys,
                                skeys, 1, src, dst, product, None, None)


def test_the_valid_cases_are_built_by_the_builder():
    """(so that the cases above test the builder, not only the planner's declining path)"""
    for name in ("valid", "valid UB -> GM", "valid, aligned GM stride", "UB gap of 65535 blocks",
                 "GM gap of 65535 blocks (aligned)", "4095 runs"):
        dkeys, skeys, src, dst, product = CASES[name]
        assert slice_mod._one_dim(skeys[0], dkeys[0], src, dst, product) is not None, name
