"""Repeated large ``to_nz`` / ``from_nz`` calls into ``out=`` arrays (fastcopy/formats.py: ``repeat_key``,
``run_repeat``, ``remember_job``): the same two arrays again run the remembered threads' job at once. Every
repeat is checked bit for bit against the FRACTAL_NZ definition (every element width, destinations at every
16-byte phase of a line and off it, guard bytes around the output untouched), and the cases that must take the
full path do: other arrays or shapes, a source resized in place, observers, one thread, no crew."""

from __future__ import annotations

import numpy as np
import pytest
from test_layout_paths import _aligned_array, _clear_plan_caches, _nz_oracle

from fastcopy import config, formats, from_nz, to_nz
from fastcopy.dma import crew, run

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
GUARD = 192


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    """Two threads and a 1 MiB threshold: the layout plans below are cut into chunks for the crew."""
    monkeypatch.setattr(config, "THREADS", 2)
    monkeypatch.setattr(config, "PARALLEL_BYTES", 1 << 20)
    _clear_plan_caches()
    formats._JOBS.clear()
    yield
    formats._JOBS.clear()
    _clear_plan_caches()


def _guarded(nbytes: int, shift: int, dt) -> tuple:
    """An output of ``nbytes`` starting ``shift`` bytes after a line, inside guard bytes of 0xA5."""
    buf = _aligned_array(nbytes + 2 * GUARD, 0)
    buf[:] = 0xA5
    return buf, buf[GUARD + shift - 64:][:nbytes].view(dt) if shift else buf[GUARD:GUARD + nbytes].view(dt)


def _bits(x):
    return x.view(UINT[x.dtype.itemsize])


def _matrix(es: int, rows: int, cols: int, seed: int) -> np.ndarray:
    dt = UINT[es]
    return np.random.default_rng(seed).integers(0, np.iinfo(dt).max, (rows, cols), dtype=dt, endpoint=True)


@pytest.mark.parametrize("shift", [0, 16, 32, 48, 8])
@pytest.mark.parametrize("es, rows, cols, c0", [(2, 512, 1024, None), (4, 256, 1024, None), (1, 1024, 1024, None),
                                               (8, 128, 1024, None), (4, 512, 512, 16), (2, 520, 1024, None),
                                               (2, 520, 1000, None)])
def test_repeats_match_the_definition(es, rows, cols, c0, shift):
    a = _matrix(es, rows, cols, rows + es)
    k = c0 or 32 // es
    want_nz = _nz_oracle(a, k)
    nz_buf, nz_out = _guarded(want_nz.nbytes, shift, a.dtype)
    nz_out = nz_out.reshape(want_nz.shape)
    nd_buf, nd_out = _guarded(a.nbytes, shift, a.dtype)
    nd_out = nd_out.reshape(a.shape)
    nz_in = np.ascontiguousarray(want_nz)
    for rep in range(3):
        nz_out[...] = 0
        nd_out[...] = 0
        assert to_nz(a, c0=c0, out=nz_out) is nz_out
        assert from_nz(nz_in, a.shape, c0=c0, out=nd_out) is nd_out
        assert np.array_equal(_bits(nz_out), _bits(want_nz)), rep
        assert np.array_equal(_bits(nd_out), _bits(a)), rep
        for buf, out in ((nz_buf, nz_out), (nd_buf, nd_out)):
            lo = out.ctypes.data - buf.ctypes.data
            assert (buf[:lo] == 0xA5).all() and (buf[lo + out.nbytes:] == 0xA5).all(), rep
        a[rep::7] ^= 0x5A  # new data, same arrays: the repeat reads them
        want_nz = _nz_oracle(a, k)
        nz_in[...] = want_nz
    if crew.SUPPORTED:  # the repeats ran the remembered jobs (plans of one transpose step: no pads, no part blocks)
        want = {"to_nz"} if rows % 16 == 0 and cols % k == 0 else set()
        assert {key[0] for key in formats._JOBS} == want | ({"from_nz"} if cols % k == 0 else set())


def test_only_the_same_call_repeats():
    """Another output, another shape of the same bytes, another C0: each its own key (and right)."""
    a = _matrix(2, 512, 1024, 1)
    nz = to_nz(a)
    out = np.empty_like(a)
    from_nz(nz, a.shape, out=out)
    keys = set(formats._JOBS)
    other = np.empty_like(a)
    from_nz(nz, a.shape, out=other)
    assert np.array_equal(other, a)
    a2 = a ^ 0x3C3C
    from_nz(to_nz(a2), a.shape, out=out)  # (another source into the same output)
    assert np.array_equal(out, a2)
    b = a.reshape(1024, 512)
    back = np.empty_like(b)
    from_nz(to_nz(b), b.shape, out=back)  # (a new NZ array: a new key)
    assert np.array_equal(back, b)
    c16 = to_nz(a, c0=16)
    out16 = np.empty_like(a)
    from_nz(c16, a.shape, c0=16, out=out16)
    assert np.array_equal(out16, a)
    if crew.SUPPORTED:
        assert len(formats._JOBS) > len(keys)
    assert formats.repeat_key("from_nz", nz, out, list(a.shape)) is None  # (other spellings: the full path)
    assert formats.repeat_key("from_nz", nz, out, a.shape, np.int64(16)) is None
    assert formats.repeat_key("from_nz", nz[:, :, :8], out, a.shape) is None  # (not contiguous)
    small = np.zeros((64, 64), np.uint16)
    assert formats.repeat_key("to_nz", small, to_nz(small)) is None
    ro = np.empty_like(a)
    ro.flags.writeable = False
    assert formats.repeat_key("from_nz", nz, ro, a.shape) is None


def test_a_source_resized_in_place_takes_its_new_bytes():
    """A resize can move an array's bytes: the key holds the address, so the call is planned again."""
    a = _matrix(2, 512, 1024, 2)
    nz = to_nz(a).reshape(-1).copy()
    out = np.empty_like(a)
    from_nz(nz, a.shape, out=out)
    nz.resize(nz.size * 3, refcheck=False)
    nz.resize(a.size, refcheck=False)
    out[...] = 0
    from_nz(nz, a.shape, out=out)
    assert np.array_equal(out, a)


def test_observers_see_every_repeat():
    a = _matrix(2, 512, 1024, 3)
    out = np.empty(formats.nz_shape(a.shape, a.dtype), a.dtype)
    to_nz(a, out=out)
    seen = []
    run.OBSERVERS.append(lambda plan, d, s: seen.append(plan.api))
    try:
        to_nz(a, out=out)
        to_nz(a, out=out)
    finally:
        run.OBSERVERS.pop()
    assert seen == ["to_nz", "to_nz"]
    assert np.array_equal(out, _nz_oracle(a, 16))


@pytest.mark.parametrize("how", ["one thread", "crew off"])
def test_repeats_without_the_crew_take_the_full_path(monkeypatch, how):
    a = _matrix(4, 256, 1024, 4)
    nz = to_nz(a)
    out = np.empty_like(a)
    from_nz(nz, a.shape, out=out)
    if how == "one thread":
        monkeypatch.setattr(config, "THREADS", 1)
    else:
        monkeypatch.setattr(crew, "ENABLED", False)
    out[...] = 0
    from_nz(nz, a.shape, out=out)
    assert np.array_equal(out, a)


# ------------------------------------------------------------------- DataCopy ND2NZ / NZ2ND repeated (prepared)
def _repeat_against_oracle(oracle, dst, src, params, es, change):
    """The same ``DataCopy(dst, src, params)`` three times (planned, then prepared, then the prepared job),
    each against the reference oracle, data and definedness; ``change(k)`` alters the source between calls."""
    from test_layout_paths import _against_oracle

    for k in range(3):
        _against_oracle(oracle, dst, src, params, es)
        change(k)


@pytest.mark.parametrize("mode", [(2, True), (2, False), (1, True)])
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32])
@pytest.mark.parametrize("rows, cols, head", [(64, 512, 0), (37, 200, 3), (128, 96, 1)])
def test_nd2nz_repeats_match_reference(mode, dtype, rows, cols, head):
    """GM -> A1 repeated with the same tensors and params: the source's new values arrive every time, the
    destination's definedness stays what the oracle says (fresh L1 first, then written)."""
    from test_layout_paths import layout_config

    import fastcopy.reference.nz as ref
    from fastcopy import GlobalTensor, TPipe, TPosition, nd2nz_params

    rng = np.random.default_rng(rows * cols + head)
    es = np.dtype(dtype).itemsize
    arr = rng.integers(0, 256, (rows * cols + head) * es, dtype=np.uint8).view(dtype)
    p = nd2nz_params(rows, cols, dtype)
    with layout_config(*mode):
        pipe = TPipe("ATLAS_A2")
        n16, c0 = -(-rows // 16) * 16, 32 // es
        dst = pipe.alloc(TPosition.A1, dtype, n16 * -(-cols // c0) * c0 + 64)
        src = GlobalTensor(arr)[head]

        def change(k):
            arr.view(np.uint8)[k::5] ^= 0xA5
        _repeat_against_oracle(ref.nd2nz, dst, src, p, es, change)


@pytest.mark.parametrize("mode", [(2, True), (2, False), (1, True)])
@pytest.mark.parametrize("es, nd, n, nf, head, gap", [(2, 1, 40, 5, 0, 0), (4, 2, 33, 3, 7, 16), (2, 2, 16, 8, 1, 3)])
def test_nz2nd_repeats_match_reference(mode, es, nd, n, nf, head, gap):
    """VECOUT -> GM repeated: all defined, then part of the source undefined (the prepared job must give way to
    the path that moves its plane), then its data changed."""
    from test_layout_paths import layout_config, nz2nd_case_params
    from test_nz import _local

    import fastcopy.reference.nz as ref
    from fastcopy import GlobalTensor, TPipe, TPosition

    dtype = np.dtype({2: np.float16, 4: np.float32}[es])
    rng = np.random.default_rng(n * nf + es)
    p, frac, d = nz2nd_case_params(nd, n, nf, gap)
    with layout_config(*mode):
        pipe = TPipe("ATLAS_A2")
        src = _local(pipe, TPosition.VECOUT, dtype, nd * frac * 256 * es, rng, 1.0)
        out = rng.integers(0, 256, (head + nd * (n * (d + gap) + 5)) * es, dtype=np.uint8).view(dtype)
        dst = GlobalTensor(out)[head] if head else GlobalTensor(out)

        def change(k):
            if k == 0:
                mask = np.ones(src.size, bool)
                mask[k::3] = False
                src.set_undefined()
                src.set_defined(mask)
            else:
                src.numpy().view(np.uint8)[::7] ^= 0x5A
        _repeat_against_oracle(ref.nz2nd, dst, src, p, es, change)


def test_large_layout_repeats_take_the_prepared_job(monkeypatch):
    """With the configured thresholds, a repeated 1 MiB NZ2ND and ND2NZ run their prepared crew job (a bound
    call of dma/run.py), right every time."""
    from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, nd2nz_params, nz2nd_params
    from fastcopy.dma.run import _run_layout_job

    calls = []
    real = crew.run_job
    monkeypatch.setattr(crew, "run_job", lambda head: calls.append(1) or real(head))
    a = _matrix(2, 512, 1024, 9).view(np.float16)
    pipe = TPipe("ATLAS_A2", capacities={"UB": a.nbytes, "L1": a.nbytes})
    ub = pipe.alloc(TPosition.VECOUT, "half", a.size)
    ub.numpy()[:] = to_nz(a, c0=16).reshape(-1)
    ub.set_defined()
    l1 = pipe.alloc(TPosition.A1, "half", a.size)
    out = np.zeros_like(a)
    q, p = nz2nd_params(512, 1024, "half"), nd2nz_params(512, 1024, "half")
    g_out, g_a = GlobalTensor(out), GlobalTensor(a)
    for k in range(3):
        out[...] = 0
        DataCopy(g_out, ub, q)
        DataCopy(l1, g_a, p)
        assert np.array_equal(_bits(out), _bits(a)), k
        assert np.array_equal(_bits(l1.numpy()), _bits(to_nz(a).reshape(-1))), k
    if crew.SUPPORTED:
        hits = [h for h in list(g_out._prepared.values()) + list(l1._prepared.values())]
        assert all(h[4] is not None and h[4][2][0] is _run_layout_job for h in hits) and len(hits) == 2
        assert len(calls) >= 4
