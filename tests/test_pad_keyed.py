"""DataCopyPad GM -> local plans from the keys its repeat cache took (``ops.pad.plan_pad_in_keys``) equal the
general planner's (``plan_pad_in``, which takes them itself), errors included; ``scalar_key``'s quick int case
equals its general one."""

from __future__ import annotations

import numpy as np
import pytest

import fastcopy as fc
from fastcopy.ops import pad as P
from fastcopy.ops.common import core_of
from fastcopy.ops.padvalue import scalar_from_key, scalar_key

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")

CASES = [
    (fc.DataCopyExtParams(2, 6, 2, 1, 0), fc.DataCopyPadExtParams(True, 1, 2, 7)),
    (fc.DataCopyExtParams(1, 10, 0, 0, 0), fc.DataCopyPadExtParams(False, 0, 0, 0)),
    (fc.DataCopyParams(3, 8, 0, 0), fc.DataCopyPadParams(True, 1, 0, 0)),
    (fc.DataCopyParams(1, 6, 0, 0), fc.DataCopyPadParams(False, 0, 1, 0)),
    (fc.DataCopyExtParams(1, 6, 0, 0, 0), fc.DataCopyPadParams(False, 0, 0, 0)),  # (mismatched pair: an error)
    (fc.DataCopyParams(1, 6, 0, 0), fc.DataCopyPadExtParams(False, 0, 0, 0)),  # (the other mismatch)
    (fc.DataCopyExtParams(1, 5, 0, 0, 0), fc.DataCopyPadExtParams(False, 0, 0, 0)),  # (blockLen not whole: error)
]


def _outcome(fn):
    try:
        return fn()
    except fc.FastCopyError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_350"])
@pytest.mark.parametrize("mode", [fc.PaddingMode.Normal, fc.PaddingMode.Compact])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_keyed_plan_equals_the_general_plan(product, mode, case):
    cp, pp = CASES[case]
    pipe = fc.TPipe(product=product)
    ub = pipe.alloc("VECIN", "half", 1024)
    gm = fc.GlobalTensor(np.arange(512, dtype=np.float16))
    core = core_of(P.API, ub, gm)
    general = _outcome(lambda: P.plan_pad_in(ub, gm, cp, pp, mode, core))
    keyed = _outcome(lambda: P.plan_pad_in_keys(ub, gm, type(cp).__name__, cp.key(), type(pp).__name__, pp.key(),
                                                mode, core))
    assert keyed == general


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_350"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_datacopypad_new_calls_equal_the_general_path(product, case):
    """Through the public call: a new call (the keyed planner) and the same call spelled so that it takes the
    general path (mode given positionally) write the same bytes, definedness and pad register, or raise the same
    error with nothing written."""
    cp, pp = CASES[case]
    got = []
    for spelled in (lambda u, g: fc.DataCopyPad(u, g, cp, pp), lambda u, g: fc.DataCopyPad(u, g, cp, pp,
                                                                                           fc.PaddingMode.Normal)):
        pipe = fc.TPipe(product=product)
        ub = pipe.alloc("VECIN", "half", 1024)
        gm = fc.GlobalTensor(np.arange(512, dtype=np.float16))
        err = _outcome(lambda: spelled(ub, gm))
        got.append((err, ub.numpy().view(np.uint16).copy(), ub.defined().copy(), pipe.state.get(P.PADREG)))
    (e1, b1, d1, r1), (e2, b2, d2, r2) = got
    assert e1 == e2 and r1 == r2
    assert np.array_equal(b1, b2) and np.array_equal(d1, d2)


@pytest.mark.parametrize("value", [0, 1, -7, 2**63, -(2**70), True, False, 0.0, -0.0, float("nan"), np.int16(3),
                                   np.float16(-0.0), np.array(5), 1 + 2j])
def test_scalar_key_quick_int_case(value):
    key = scalar_key(value)
    if type(value) is int:
        assert key == ("int", value)
    got = scalar_from_key(key)
    assert type(got) is type(value[()] if isinstance(value, np.ndarray) else value)
    assert repr(got) == repr(value[()] if isinstance(value, np.ndarray) else value)
