"""Every FastCopyWarning points at the user's line (the call into fastcopy), not at fastcopy's own code: the
warning filters' "once per location" then works per call site of the user's program, and the message a user
sees names their file and line. Checked for first calls, prepared repeats and each module that warns."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fastcopy import (DataCopy, DataCopyParams, FastCopyWarning, GlobalTensor, TPipe, TPosition)


def _caught(fn) -> list:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    ours = [w for w in got if issubclass(w.category, FastCopyWarning)]
    assert ours, "the call should warn"
    return ours


def _here(ws, line_of) -> None:
    for w in ws:
        assert w.filename == __file__, (w.filename, str(w.message))
        assert w.lineno == line_of, (w.lineno, line_of, str(w.message))


def test_datacopy_warning_points_at_the_call_first_and_repeated():
    pipe = TPipe(product="ATLAS_A2")
    gm = GlobalTensor(np.arange(64, dtype=np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 64)
    for _ in range(3):  # a first call, then prepared repeats
        line = _line() + 1
        ws = _caught(lambda: DataCopy(ub, gm, 20))
        _here(ws, line)


def test_aliasing_warning_points_at_the_call():
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "int32", 64)
    ub.numpy()[:] = np.arange(64)
    ub.set_defined()
    line = _line() + 1
    ws = _caught(lambda: DataCopy(ub[8], ub, DataCopyParams(1, 7)))
    _here(ws, line)


def test_register_setter_warning_points_at_the_call():
    from fastcopy import SetLoadDataPaddingValue
    from fastcopy.cube.registers import PADDING_LOW16

    product = sorted(PADDING_LOW16, key=str)[0]
    pipe = TPipe(product=product)
    line = _line() + 1
    ws = _caught(lambda: SetLoadDataPaddingValue(np.float32(1.5), pipe=pipe))
    _here(ws, line)


def test_the_warning_filter_works_per_user_line():
    """Under the default filter a warning shows once per location: two different user lines both show."""
    pipe = TPipe(product="ATLAS_A2")
    gm = GlobalTensor(np.arange(64, dtype=np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 64)
    with warnings.catch_warnings(record=True) as got:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        DataCopy(ub, gm, 20)
        DataCopy(ub, gm, 20)
        DataCopy(ub, gm, 20)
    lines = {w.lineno for w in got if issubclass(w.category, FastCopyWarning)}
    assert len(lines) == 3


def _line() -> int:
    import sys

    return sys._getframe(1).f_lineno


@pytest.mark.parametrize("inside", [True, False])
def test_warn_helper_skips_only_package_frames(inside):
    from fastcopy.errors import warn

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        line = _line() + 1
        warn("x") if inside else warn("y", UserWarning)
    assert got[0].filename == __file__ and got[0].lineno == line
    assert got[0].category is (FastCopyWarning if inside else UserWarning)
