"""to_nz / from_nz (FRACTAL_NZ of whole arrays) and the nd2nz_params / nz2nd_params helpers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy import (DataCopy, GlobalTensor, ParamError, TPipe, TPosition, UnsupportedError, from_nz,
                      nd2nz_params, nz2nd_params, to_nz)
from fastcopy.formats import nz_shape

DTYPES = [np.bool_, np.int8, np.uint8, ml_dtypes.float8_e4m3fn, np.int16, np.float16, ml_dtypes.bfloat16,
          np.int32, np.float32, np.uint32, np.int64, np.float64, np.complex64, np.complex128]


def _random(rng, shape, dtype):
    dt = np.dtype(dtype)
    n = int(np.prod(shape)) * dt.itemsize
    return rng.integers(0, 256, n, dtype=np.uint8).view(dt).reshape(shape)


def _same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def numpy_to_nz(a, c0):
    """The plain numpy way: pad, reshape, transpose, copy."""
    *lead, rows, cols = a.shape
    shape = nz_shape(a.shape, a.dtype, c0)
    d1, n1 = shape[-4], shape[-3]
    p = np.zeros((*lead, n1 * 16, d1 * c0), a.dtype)
    p[..., :rows, :cols] = a
    return np.ascontiguousarray(np.swapaxes(p.reshape(*lead, n1, 16, d1, c0), -4, -2).swapaxes(-3, -2))


def test_layout_by_hand():
    a = np.arange(1, 3 * 20 + 1, dtype=np.int16).reshape(3, 20)  # C0 = 16: two column blocks
    nz = to_nz(a)
    assert nz.shape == (2, 1, 16, 16)
    assert list(nz[0, 0, 0]) == list(range(1, 17)) and list(nz[0, 0, 2]) == list(range(41, 57))
    assert list(nz[1, 0, 1]) == [37, 38, 39, 40] + [0] * 12
    assert not nz[:, 0, 3:].any()  # rows 3..15 are zero pads
    assert to_nz(a, c0=4).shape == (5, 1, 16, 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (16, 32), (17, 33), (2, 3, 40, 7), (0, 5), (5, 0), (2, 0, 3)])
def test_round_trip_every_dtype(dtype, shape):
    rng = np.random.default_rng(1)
    a = _random(rng, shape, dtype)
    for c0 in (None, 16, 3):
        nz = to_nz(a, c0)
        c = c0 or 32 // np.dtype(dtype).itemsize
        assert _same_bits(nz, numpy_to_nz(a, c))
        assert _same_bits(from_nz(nz, a.shape, c0), a)


@settings(max_examples=120, deadline=None)
@given(dtype=st.sampled_from(DTYPES), lead=st.lists(st.integers(1, 3), max_size=2), rows=st.integers(1, 40),
       cols=st.integers(1, 70), c0=st.sampled_from([None, None, 1, 4, 16, 32]), seed=st.integers(0, 2**32 - 1))
def test_round_trip_property(dtype, lead, rows, cols, c0, seed):
    a = _random(np.random.default_rng(seed), (*lead, rows, cols), dtype)
    nz = to_nz(a, c0)
    assert _same_bits(nz, numpy_to_nz(a, c0 or 32 // np.dtype(dtype).itemsize))
    assert _same_bits(from_nz(nz, a.shape, c0), a)
    assert _same_bits(from_nz(nz.reshape(-1), a.shape, c0), a)  # any shape with the right size


def test_non_contiguous_and_readonly_input():
    a = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)[::2, ::3]
    a.flags.writeable = False
    nz = to_nz(a)
    assert _same_bits(from_nz(nz, a.shape), np.ascontiguousarray(a))


def test_to_nz_matches_datacopy_nd2nz():
    """to_nz is the layout DataCopy(Nd2NzParams) writes with nd2nz_params, for every ND2NZ element width."""
    rng = np.random.default_rng(2)
    for dtype in (np.int8, np.float16, np.float32):
        a = _random(rng, (3, 37, 45), dtype)
        nz = to_nz(a)
        pipe = TPipe("A2")
        dst = pipe.alloc(TPosition.A1, dtype, nz.size)
        DataCopy(dst, GlobalTensor(a), nd2nz_params(37, 45, dtype, count=3))
        got = dst.numpy().copy()
        got[~dst.defined()] = 0  # row pads (37..47) are not written by ND2NZ: compare written bytes only
        assert _same_bits(got.reshape(nz.shape), nz)


def test_from_nz_matches_datacopy_nz2nd():
    """NZ2ND reads 16-wide fractal columns for every dtype: from_nz(..., c0=16) is what it inverts."""
    rng = np.random.default_rng(3)
    for dtype, shape in ((np.float16, (2, 32, 48)), (np.float32, (2, 32, 48)), (np.float32, (1, 20, 32))):
        a = _random(rng, shape, dtype)
        nz16 = to_nz(a, c0=16)
        pipe = TPipe("A2")
        ub = pipe.alloc(TPosition.VECOUT, dtype, nz16.size)
        ub.numpy()[:] = nz16.reshape(-1)
        ub.set_defined()
        out = np.zeros_like(a)
        DataCopy(GlobalTensor(out), ub, nz2nd_params(*shape[1:], dtype, count=shape[0]))
        assert _same_bits(out, a)
        assert _same_bits(from_nz(nz16, a.shape, c0=16), a)


def test_nd2nz_params_values():
    p = nd2nz_params(37, 45, "half")
    assert p.key() == (1, 37, 45, 0, 45, 48, 1, 0)
    p = nd2nz_params(37, 45, np.float32, count=2, row_stride=50)
    assert p.key() == (2, 37, 45, 37 * 50, 50, 48, 1, 48 * 48)


def test_nz2nd_params_values():
    assert nz2nd_params(32, 32, "half").key() == (1, 32, 32, 1, 32, 32, 1)  # the page's calling example
    assert nz2nd_params(20, 48, np.float32, count=2, row_stride=64).key() == (2, 20, 48, 6, 32, 64, 20 * 64)


def test_nz2nd_params_needs_whole_fractal_columns():
    with pytest.raises(ParamError, match="cols=20 is not a multiple of 16"):
        nz2nd_params(4, 20, "half")


def test_errors():
    with pytest.raises(ParamError, match="at least 2 dimensions"):
        to_nz(np.zeros(5))
    with pytest.raises(ParamError, match="c0=0 must be a positive integer"):
        to_nz(np.zeros((2, 2)), c0=0)
    with pytest.raises(ParamError, match="no default C0"):
        to_nz(np.zeros((2, 2), "V3"))
    with pytest.raises(UnsupportedError, match="raw bytes"):
        to_nz(np.zeros((2, 2), object))
    with pytest.raises(ParamError, match=r"has shape \(1, 1, 16, 16\) \(256 elements\); got an array of shape"):
        from_nz(np.zeros(255, np.float16), (3, 5))
    with pytest.raises(ParamError, match="negative"):
        from_nz(np.zeros(256, np.float16), (3, -5))
    assert to_nz(np.zeros((2, 2), "V3"), c0=2).shape == (1, 1, 16, 2)


def test_out():
    a = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)
    buf = np.full((5, 2, 16, 8), -1, np.float32)
    assert to_nz(a, out=buf) is buf and _same_bits(buf, numpy_to_nz(a, 8))
    back = np.empty_like(a)
    assert from_nz(buf, a.shape, out=back) is back and _same_bits(back, a)
    with pytest.raises(ParamError, match=r"out= must be a writable C-contiguous \(5, 2, 16, 8\) float32 array"):
        to_nz(a, out=np.empty((5, 2, 16, 8), np.float16))
    with pytest.raises(ParamError, match="out= must be"):
        from_nz(buf, a.shape, out=np.empty((40, 20), np.float32).T)
    big = np.zeros(1280, np.float32)
    with pytest.raises(ParamError, match="shares memory"):
        to_nz(big[:800].reshape(20, 40), out=big.reshape(5, 2, 16, 8))


@settings(max_examples=100, deadline=None)
@given(dtype=st.sampled_from(DTYPES), lead=st.lists(st.integers(1, 3), max_size=1), rows=st.integers(1, 40),
       cols=st.integers(1, 70), c0=st.sampled_from([None, None, 1, 4, 16]), shift=st.integers(0, 15),
       dshift=st.integers(0, 31), seed=st.integers(0, 2**32 - 1))
def test_small_plans_on_raw_bytes_are_the_general_runner(dtype, lead, rows, cols, c0, shift, dshift, seed):
    """to_nz / from_nz run their small plans on the arrays' bytes (``run_raw``, no tensors): bit for bit what the
    general runner writes, for every dtype, shape, C0 and input address residue; into ``out=`` arrays whose
    untouched bytes would show a stray write."""
    from fastcopy import api, config
    from fastcopy.dma import run

    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    shape = (*lead, rows, cols)
    n = int(np.prod(shape)) * dt.itemsize
    a = rng.integers(0, 256, n + 16 * dt.itemsize, dtype=np.uint8)[shift * dt.itemsize % 16:][:n].view(dt)
    a = a.reshape(shape)
    def shifted_zeros(shp):  # a C-contiguous array starting (dshift * itemsize) % 64 bytes into a line
        m = int(np.prod(shp)) * dt.itemsize
        buf = np.zeros(m + 128, np.uint8)
        start = (-buf.ctypes.data) % 64 + dshift * dt.itemsize % 64
        return buf[start:start + m].view(dt).reshape(shp)

    nz_out = [shifted_zeros(nz_shape(shape, dt, c0)) for _ in range(2)]
    nd_out = [shifted_zeros(shape) for _ in range(2)]
    ran = []
    real, small = run.run_raw, config.NZ_NUMPY_BYTES
    try:
        config.NZ_NUMPY_BYTES = 0  # (the plans, not the small numpy path: tests/test_new_plans.py compares those)
        api.run_raw = lambda *args: ran.append(real(*args)) or ran[-1]
        to_nz(a, c0, out=nz_out[0])
        from_nz(nz_out[0], shape, c0, out=nd_out[0])
        api.run_raw = lambda *args: False
        to_nz(a, c0, out=nz_out[1])
        from_nz(nz_out[1], shape, c0, out=nd_out[1])
    finally:
        api.run_raw, config.NZ_NUMPY_BYTES = real, small
    assert ran == [True, True] or n * 4 >= 1 << 16  # (large plans take the layout kernels: the general runner)
    assert _same_bits(nz_out[0], nz_out[1]) and _same_bits(nd_out[0], nd_out[1]) and _same_bits(nd_out[0], a)


def test_raw_runner_refuses_what_needs_the_general_runner():
    """``run_raw`` writes nothing and answers False for a plan with warnings, effects or observers, or whose spans
    do not fit the arrays (the general runner then warns, applies or raises)."""
    from fastcopy import formats
    from fastcopy.dma import run

    a = np.arange(17 * 20, dtype=np.float16).reshape(17, 20)
    out, plan, dst, src = formats.to_nz_call(a, None, np.full(nz_shape(a.shape, a.dtype), 7, a.dtype))
    before = out.copy()
    for bad in (plan._replace(warnings=("w",)), plan._replace(effects=(object(),)), plan._replace(exact=True),
                plan._replace(write=(0, out.nbytes + 1))):
        assert run.run_raw(bad, dst.data, dst.mod, src.data, src.mod) is False
    run.OBSERVERS.append(lambda *args: None)
    try:
        assert run.run_raw(plan, dst.data, dst.mod, src.data, src.mod) is False
    finally:
        run.OBSERVERS.pop()
    assert _same_bits(out, before)
    assert run.run_raw(plan, dst.data, dst.mod, src.data, src.mod) is True
    assert _same_bits(out, numpy_to_nz(a, 16))


@pytest.mark.parametrize("mod", [0, 2, 5, 8, 13])
def test_raw_runner_views_start_on_unit_boundaries(mod):
    """Steps whose offsets, not the arrays' starts, sit on unit boundaries (wide views starting a few bytes into
    the arrays): ``run_raw`` writes exactly the bytes the steps name, nothing around them."""
    from fastcopy.dma.lower import make_plan
    from fastcopy.dma.run import run_raw
    from fastcopy.dma.steps import Fill, Move
    from fastcopy.formats import _sig

    def at(m, n):  # n bytes starting m bytes after a 64-byte boundary
        buf = np.zeros(n + 128, np.uint8)
        start = (-buf.ctypes.data) % 64 + m
        return buf[start:start + n]

    k = -mod % 8
    steps = (Move((k,), (k + 8,), 16, ((3, 24, 32),)), Fill((k + 104,), 8, (), b"\x05"))
    plan = make_plan("T", steps, _sig(200, mod), _sig(200, mod))
    assert all(ks.w == 8 for ks in plan.ksteps)  # (views one unit wide: they start 8 - mod bytes in)
    src, dst = at(mod, 200), at(mod, 200)
    src[:] = np.arange(200) % 251 + 1
    assert run_raw(plan, dst, mod, src, mod)
    want = np.zeros(200, np.uint8)
    for i in range(3):
        want[k + 8 + 32 * i:k + 24 + 32 * i] = src[k + 24 * i:k + 16 + 24 * i]
    want[k + 104:k + 112] = 5
    assert np.array_equal(dst, want)


def test_fresh_small_outputs_are_zeroed_and_their_pads_not_written():
    """to_nz allocates a small output zeroed and plans no pad fills for it; into out= (any bytes) and for large
    outputs (allocated uninitialised) the plan writes the pads."""
    from fastcopy import formats
    from fastcopy.dma.steps import Fill

    a = np.arange(17 * 20, dtype=np.float16).reshape(17, 20)
    out, plan, _, _ = formats.to_nz_call(a)
    assert not any(isinstance(s, Fill) for s in plan.steps) and _same_bits(to_nz(a), numpy_to_nz(a, 16))
    _, plan, _, _ = formats.to_nz_call(a, None, np.full(out.shape, 9, a.dtype))
    assert sum(isinstance(s, Fill) for s in plan.steps) == 2
    big = np.ones((100, 330), np.float16)  # (an output of 7 x 112 x 16 halves: above SMALL_OUT_BYTES)
    out, plan, _, _ = formats.to_nz_call(big)
    assert out.nbytes >= formats.SMALL_OUT_BYTES and any(isinstance(s, Fill) for s in plan.steps)
    assert _same_bits(to_nz(big), numpy_to_nz(big, 16))


def test_remembered_geometry_checks_every_call():
    """to_nz / from_nz remember the checks of a shape, dtype and C0: a call refused after an accepted one with
    an equal-comparing C0 (True == 1, 16.5) or a refused one repeated raises the same error every time."""
    a = np.zeros((3, 5), np.float16)
    assert to_nz(a, c0=1).shape == to_nz(a, c0=np.int64(1)).shape == (5, 1, 16, 1)
    for _ in range(2):
        with pytest.raises(ParamError, match="c0=True is a bool"):
            to_nz(a, c0=True)
        with pytest.raises(ParamError, match="c0=0 must be a positive integer"):
            to_nz(a, c0=0)
        with pytest.raises(ParamError, match="must be a tuple of integers"):
            from_nz(to_nz(a), (3.0, True))
        with pytest.raises(ParamError, match="negative"):
            from_nz(to_nz(a), (3, -5))
