"""Pad values are converted without touching Python's warning filters (review, with the per-thread warnings
work): the conversion used ``warnings.catch_warnings()`` + ``simplefilter("ignore")``, which for as long as it
lasted silenced every warning of every thread (a FastCopyWarning issued by another thread's call was lost) and,
two threads inside at once, could leave the process with one thread's filters for good. Now np.errstate (per
thread) covers the casts' floating-point errors, and numpy complex scalars are taken apart before any cast (the
only other warning a cast gave: ComplexWarning)."""

from __future__ import annotations

import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

from fastcopy.errors import ParamTypeError
from fastcopy.ops.padvalue import scalar_pattern
from fastcopy.products import Product

VALUES = [0, 1, 3, -2, 0.5, 1.1, 65504.0, 1e300, -1e300, float("inf"), float("nan"), 2**70, np.float32(3.0),
          np.float64(1e-300), np.int64(-5), np.uint64(2**64 - 1), np.longdouble("1e4000"), 1 + 0j, 1 + 1j,
          np.complex64(1 + 0j), np.complex64(1 + 1j), np.complex128(2 - 0j), np.float16(-0.0)]
DTYPES = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16),
          np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(np.int8), np.dtype(np.uint16), np.dtype(np.complex64),
          np.dtype([("real", np.float16), ("imag", np.float16)])]


def _pattern(v, dt):
    try:
        return scalar_pattern(v, dt, "SetPadValue", "value", Product.ATLAS_A2)
    except ParamTypeError:
        return "refused"


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_pad_values_convert_without_the_warning_filters(dt, monkeypatch):
    """Every value converts (or is refused) with every warning an error and catch_warnings unavailable."""
    real, entered = warnings.catch_warnings, []

    def guarded(*a, **k):  # (pytest's own use of it goes on)
        if sys._getframe(1).f_code.co_filename.endswith("padvalue.py"):
            entered.append(sys._getframe(1).f_code.co_name)
        return real(*a, **k)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(warnings, "catch_warnings", guarded)
        for v in VALUES:
            _pattern(v, dt)
    assert entered == []


def test_numpy_complex_scalars_convert_as_python_complex_numbers():
    half, c32 = np.dtype(np.float16), DTYPES[-1]
    assert _pattern(np.complex64(1 + 0j), half) == _pattern(1.0, half) == np.float16(1).tobytes()
    assert _pattern(np.complex64(1 + 1j), half) == "refused" == _pattern(1 + 1j, half)
    assert _pattern(np.complex64(1.5 - 2j), c32) == _pattern(1.5 - 2j, c32) == np.array(
        (1.5, -2.0), c32).tobytes()
