"""The NZ2ND planner's range rules, held to the rules themselves (``ops/nz._check_nz2nd_ranges``, one by one),
not to a reference that runs the planner's own checks: review of d65c299, whose one-matrix shortcut tests the
ranges at once; test_nz2nd_planner_is_the_general_way takes its errors from the planner, so a rule the shortcut
stopped testing (dValue not a multiple of 16, srcNStride past 4095, dstDStride under 16, dValue past 8192) let
a plan through with every test passing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from test_plan_builders import _verdict_or_plan, nz2nd_keys

from fastcopy.memory import TensorSig
from fastcopy.ops import nz as nz_mod
from fastcopy.params import Nz2NdParamsFull
from fastcopy.products import Phys, Product, TPosition


def _rules_verdict(key, product):
    """The error the type and range rules raise for ``key`` (a no-op ndNum = 0 checks types only), or None."""
    p = _verdict_or_plan(Nz2NdParamsFull.checked_key, nz_mod.NZ2ND_API, key, product)
    if type(p) is tuple and len(p) == 2 and isinstance(p[0], type):  # (a field outside its C++ type)
        return p
    if p.ndNum == 0:
        return None
    got = _verdict_or_plan(nz_mod._check_nz2nd_ranges, nz_mod.NZ2ND_API, p, product)
    return got if isinstance(got, tuple) else None


def _check(key, src, dst, product, looped=False):
    rules = _rules_verdict(key, product)
    got = _verdict_or_plan(nz_mod._plan_nz2nd.__wrapped__, key, src, dst, product, looped)
    if not hasattr(got, "steps") and got[0].__name__ == "UnsupportedError":
        return  # (the path and dtype, checked before the fields)
    if rules is not None:
        assert got == rules
    else:  # (a plan, or an error that is not a range rule's: the tensors' spans)
        assert hasattr(got, "steps") or got[0].__name__ == "OutOfBoundsError", got


@settings(max_examples=300, deadline=None)
@given(case=nz2nd_keys())
def test_the_nz2nd_planner_raises_what_its_range_rules_raise(case):
    _check(*case)


HALF = np.dtype(np.float16)
SRC = TensorSig(TPosition.VECOUT, Phys.UB, HALF, 1 << 18, 0, 0)
DST = TensorSig(TPosition.GM, Phys.GM, HALF, 1 << 24, 0, 0)
BASE = dict(ndNum=1, nValue=4, dValue=32, srcNdMatrixStride=1, srcNStride=4, dstDStride=32, dstNdMatrixStride=1)
EDGES = [{}, {"nValue": 0}, {"nValue": 8193}, {"nValue": 8192, "dstDStride": 16, "dValue": 16}, {"dValue": 0},
         {"dValue": 8193}, {"dValue": 8208, "dstDStride": 8208}, {"dValue": 35, "dstDStride": 35},
         {"dValue": 40, "dstDStride": 40}, {"srcNStride": 4096}, {"srcNStride": 4095}, {"dstDStride": 15},
         {"dstDStride": 16}, {"nValue": 1, "dstDStride": 0}, {"dValue": 16, "srcNStride": 4096},
         {"ndNum": 2, "srcNdMatrixStride": 0}, {"ndNum": 4096}]


@pytest.mark.parametrize("product", [Product.ATLAS_A2, Product.ATLAS_350])
@pytest.mark.parametrize("edge", EDGES, ids=[",".join(f"{k}={v}" for k, v in e.items()) or "base" for e in EDGES])
def test_each_nz2nd_range_rule_at_its_edge(edge, product):
    key = tuple({**BASE, **edge}[f.name] for f in Nz2NdParamsFull.FIELDS)
    _check(key, SRC, DST, product)
