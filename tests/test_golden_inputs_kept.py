"""A sweep's points draw the same input stream at many lengths; fastcopy keeps small draws and gives a shorter
buffer the first elements of a kept one (fastcopy.golden.inputs.generate). The bytes must be exactly those of a
new draw, for every kind kept, every order of lengths, and the caller owns what it gets."""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy.golden import inputs
from fastcopy.golden.schema import BufferSpec

KINDS = [("half", {"kind": "uniform", "low": -1.0, "high": 1.0}),
         ("float", {"kind": "normal", "mean": 0.5, "std": 2.0}),
         ("bfloat16_t", {"kind": "uniform", "low": -3, "high": 3}),
         ("int8_t", {"kind": "integers", "low": -128, "high": 128}),
         ("int32_t", {"kind": "integers", "low": -5, "high": 7}),
         ("uint64_t", {"kind": "integers", "low": 0, "high": 2**64}),
         ("complex64", {"kind": "normal", "mean": 0.0, "std": 1.0})]
SIZES = [300, 17, 1, 4096, 299, 4095, 4097, 5, 8000, 32]


def _buf(dt, init, n, name="xGm", shape=None):
    return BufferSpec(name, dt, True, shape or (n,), "GM", None, dict(init), name)


@pytest.mark.parametrize("dt, init", KINDS)
def test_kept_draws_give_the_bytes_of_a_new_draw(dt, init, monkeypatch):
    monkeypatch.setattr(inputs, "_KEPT", {})
    for n in SIZES:
        got = inputs.generate(_buf(dt, init, n), 11)
        new = inputs._generate(_buf(dt, init, n), 11)
        assert got.dtype == new.dtype and got.shape == new.shape
        assert got.tobytes() == new.tobytes(), (dt, n)
    assert len(inputs._KEPT) == 1


def test_the_caller_owns_its_array_and_shapes_are_kept(monkeypatch):
    monkeypatch.setattr(inputs, "_KEPT", {})
    init = {"kind": "uniform", "low": 0.0, "high": 1.0}
    a = inputs.generate(_buf("float", init, 64), 3)
    a[:] = -7  # (an op wrote the input buffer)
    b = inputs.generate(_buf("float", init, 32, shape=(4, 8)), 3)
    assert b.shape == (4, 8) and not (b == -7).any()
    assert b.tobytes() == inputs._generate(_buf("float", init, 32), 3).tobytes()


def test_streams_are_told_apart(monkeypatch):
    """Seed, buffer name, init values (and their types) and dtype each select another stream."""
    monkeypatch.setattr(inputs, "_KEPT", {})
    base = {"kind": "uniform", "low": -1.0, "high": 1.0}
    variants = [("float", base, "x", 1), ("float", base, "x", 2), ("float", base, "y", 1),
                ("float", {**base, "high": 2.0}, "x", 1), ("half", base, "x", 1),
                ("float", {"kind": "integers", "low": -1, "high": 1}, "x", 1)]
    for dt, init, name, seed in variants:
        inputs.generate(_buf(dt, init, 100, name), seed)  # keep the longest first
    for dt, init, name, seed in variants:
        if init["kind"] == "integers" and dt == "float":
            continue
        got = inputs.generate(_buf(dt, init, 50, name), seed)
        assert got.tobytes() == inputs._generate(_buf(dt, init, 50, name), seed).tobytes()


def test_errors_are_raised_every_time(monkeypatch):
    """A draw that does not fit its dtype is never kept: the next point raises the same error."""
    from fastcopy.golden.schema import CaseError

    monkeypatch.setattr(inputs, "_KEPT", {})
    bad = {"kind": "uniform", "low": 0.0, "high": 1e6}
    for _ in range(2):
        with pytest.raises(CaseError, match="overflows"):
            inputs.generate(_buf("half", bad, 1000), 1)
    assert not inputs._KEPT


@pytest.mark.parametrize("dt, init", KINDS + [("int16_t", {"kind": "bits"}), ("float", {"kind": "constant", "value": 2.5}),
                                              ("int32_t", {"kind": "arange", "start": 3, "step": 2})])
def test_inputs_start_on_a_line(dt, init, monkeypatch):
    """Every generated input (new or a kept draw's copy) starts on a 64-byte boundary: the plan cache keys on the
    host address modulo 64, so equal sweep points then share plans whatever numpy's allocator gave."""
    monkeypatch.setattr(inputs, "_KEPT", {})
    for n in (300, 17, 299, 1):
        assert inputs.generate(_buf(dt, init, n), 5).ctypes.data % 64 == 0, (dt, n)


def test_a_stream_is_drawn_ahead_a_few_times(monkeypatch):
    """Buffers growing point by point (as in a sweep) draw their stream a few times, each draw longer than the
    buffer; every buffer still gets the bytes of its own new draw."""
    monkeypatch.setattr(inputs, "_KEPT", {})
    draws = []
    real = inputs._draw
    monkeypatch.setattr(inputs, "_draw", lambda *a: draws.append(a[2]) or real(*a))
    init = {"kind": "uniform", "low": -1.0, "high": 1.0}
    for n in range(16, 3041, 16):
        got = inputs.generate(_buf("half", init, n), 1000)
        assert got.tobytes() == real(init, got.dtype, n, "xGm", 1000, "", "").tobytes(), n
    assert draws == [1024, 2048, 4096]


def test_a_longer_draw_that_fails_never_fails_a_buffer_that_fits(monkeypatch):
    """Drawn ahead, a stream may hold a value past the buffer's length that overflows the dtype: the buffer is
    then drawn at its own length (and fits), and a buffer that reaches the bad value raises as a new draw does."""
    from fastcopy.golden.schema import CaseError

    init = {"kind": "normal", "mean": 0.0, "std": 2.0e4}  # (about 1 value in 1000 overflows half)
    seed = next(s for s in range(1000) if _first_bad(init, s) is not None and 16 <= _first_bad(init, s) < 1000)
    bad = _first_bad(init, seed)
    monkeypatch.setattr(inputs, "_KEPT", {})
    for n in (8, bad, 4, bad + 1, bad):
        if n > bad:
            with pytest.raises(CaseError, match="overflows"):
                inputs.generate(_buf("half", init, n), seed)
        else:
            got = inputs.generate(_buf("half", init, n), seed)
            assert got.tobytes() == inputs._generate(_buf("half", init, n), seed).tobytes()


def _first_bad(init, seed):
    """Index of the first element of the stream that overflows half (None when the first 1024 all fit)."""
    vals = init["mean"] + init["std"] * inputs.rng_for(seed, "xGm").standard_normal(1024)
    with np.errstate(over="ignore"):
        bad = np.flatnonzero(np.isinf(vals.astype(np.float16)))
    return int(bad[0]) if bad.size else None
