"""Repeated LoadData / LoadDataWithTranspose / LoadDataWithStride calls (fastcopy.api's prepared-call cache):
a repeat skips planning, and every register write (SetFmatrix, the padding value, repeat, boundary, a call that
sets registers itself) or a different source makes the next call plan again, with the same bytes and
definedness as a call that never saw the cache."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import fastcopy as fc
from fastcopy.cube import img2col as _img2col
from fastcopy.cube import loaddata as _loaddata

A2, P350 = "ATLAS_A2", "ATLAS_350"


@pytest.fixture
def planned(monkeypatch):
    """Counts the planner calls of the cube-in entry points (a prepared repeat makes none)."""
    counts = {"n": 0}
    for mod, names in ((_loaddata, ("plan_load2d", "plan_load2dv2", "plan_transpose")), (_img2col, ("plan_load3d",))):
        for name in names:
            real = getattr(mod, name)

            def counting(*a, _real=real, **k):
                counts["n"] += 1
                return _real(*a, **k)

            monkeypatch.setattr(mod, name, counting)
    return counts


def _fmap(pipe, dtype, n, seed):
    src = pipe.alloc("A1", dtype, n)
    raw = np.random.default_rng(seed).integers(0, 255, n * src.dtype.itemsize, dtype=np.uint8)
    src.numpy().view(np.uint8)[:] = raw
    src.set_defined()
    return src


def _state(t):
    return t.numpy().view(np.uint8).copy(), t.defined().copy()


def _replay(product, dtype, src_n, dst_pos, dst_n, actions, seed=1):
    """Run ``actions`` (each ``f(pipe, dst, src)``) twice: on one pipe with the cache, and on another with the
    cache cleared before every action; return both lists of destination states after each action."""
    results = []
    for cached in (True, False):
        pipe = fc.TPipe(product=product)
        src = _fmap(pipe, dtype, src_n, seed)
        dst = pipe.alloc(dst_pos, dtype, dst_n)
        states = []
        for act in actions:
            if not cached:
                dst._prepared = None
            act(pipe, dst, src)
            states.append(_state(dst))
        results.append(states)
    return results


def _assert_same(results):
    for k, ((a, ad), (b, bd)) in enumerate(zip(*results)):
        assert np.array_equal(a, b), f"bytes differ after action {k}"
        assert np.array_equal(ad, bd), f"definedness differs after action {k}"


@pytest.mark.parametrize("dtype", ["int8_t", "half", "float"])
def test_load2d_repeat_is_prepared_and_exact(planned, dtype):
    pipe = fc.TPipe(product=A2)
    src = _fmap(pipe, dtype, 8192 // np.dtype({"int8_t": "i1", "half": "f2", "float": "f4"}[dtype]).itemsize, 3)
    dst = pipe.alloc("A2", dtype, src.size)
    p = fc.LoadData2DParams(1, 8, 1)
    fc.LoadData(dst, src, p)
    n = planned["n"]
    for _ in range(3):
        fc.LoadData(dst, src, p)
    assert planned["n"] == n  # repeats skip planning
    want = src.numpy().view(np.uint8)[512:512 + 8 * 512].copy()
    src.numpy().view(np.uint8)[:] ^= 0x5A  # new data, same tensor: the repeat copies the new bytes
    fc.LoadData(dst, src, p)
    assert planned["n"] == n
    assert np.array_equal(dst.numpy().view(np.uint8)[:8 * 512], want ^ 0x5A)


def test_load2d_undefined_source_bytes_travel_on_a_repeat():
    pipe = fc.TPipe(product=A2)
    src = _fmap(pipe, "half", 4096, 4)
    dst = pipe.alloc("A2", "half", 4096)
    p = fc.LoadData2DParams(0, 4, 1)
    fc.LoadData(dst, src, p)
    fc.LoadData(dst, src, p)
    mask = np.ones(4096, bool)
    mask[300] = False
    src.set_undefined()
    src.set_defined(mask)
    fc.LoadData(dst, src, p)
    assert not dst.defined()[300] and dst.defined()[:1024].sum() == 1023
    src.set_defined()
    fc.LoadData(dst, src, p)
    assert dst.defined()[:1024].all()


def test_load2d_other_source_or_params_plan_again(planned):
    pipe = fc.TPipe(product=A2)
    s1, s2 = _fmap(pipe, "half", 4096, 5), _fmap(pipe, "half", 4096, 6)
    dst = pipe.alloc("A2", "half", 4096)
    p = fc.LoadData2DParams(0, 4, 1)
    fc.LoadData(dst, s1, p)
    fc.LoadData(dst, s1, p)
    n = planned["n"]
    fc.LoadData(dst, s2, p)
    assert planned["n"] == n + 1
    assert np.array_equal(dst.numpy()[:1024].view(np.uint16), s2.numpy()[:1024].view(np.uint16))
    p.startIndex = 1  # a changed field is a new key
    fc.LoadData(dst, s2, p)
    assert planned["n"] == n + 2
    assert np.array_equal(dst.numpy()[:1024].view(np.uint16), s2.numpy()[256:1280].view(np.uint16))


@pytest.mark.parametrize("dtype", ["int8_t", "half", "float"])
def test_transpose_repeat_is_prepared_and_exact(planned, dtype):
    es = {"int8_t": 1, "half": 2, "float": 4}[dtype]
    p = fc.LoadData2dTransposeParams(0, 4, 1, 1, 0, 0)

    def act(pipe, dst, src):
        fc.LoadDataWithTranspose(dst, src, p)

    _assert_same(_replay(A2, dtype, 16384 // es, "B2", 16384 // es, [act] * 3))
    pipe = fc.TPipe(product=A2)
    src, dst = _fmap(pipe, dtype, 16384 // es, 2), pipe.alloc("B2", dtype, 16384 // es)
    act(pipe, dst, src)
    n = planned["n"]
    act(pipe, dst, src)
    assert planned["n"] == n


def _p3(dtype, **kw):
    c0 = 32 // np.dtype({"int8_t": "i1", "half": "f2", "float": "f4"}[dtype]).itemsize
    fields = dict(padList=(1, 1, 1, 1), l1H=6, l1W=6, channelSize=c0, kExtension=9 * c0, mExtension=16,
                  kStartPt=0, mStartPt=0, filterW=3, filterH=3, padValue=0)
    fields.update(kw)
    return fc.LoadData3DParamsV2(**fields)


# every register write a 3D load reads, each changing what the next (otherwise identical) call writes
_NO_SET = fc.IsResetLoad3dConfig(False, False)


def _load(params, config=_NO_SET):
    return lambda pipe, dst, src: fc.LoadData(dst, src, params, config=config)


def _set_fmatrix(h, w, pads):
    return lambda pipe, dst, src: fc.SetFmatrix(h, w, pads, pipe=pipe)


def _set_pad(v):
    return lambda pipe, dst, src: fc.SetLoadDataPaddingValue(v, pipe=pipe)


def _set_repeat(stride, n, mode):
    return lambda pipe, dst, src: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(stride, n, mode), pipe=pipe)


def _set_boundary(b):
    return lambda pipe, dst, src: fc.SetLoadDataBoundary(b, pipe=pipe)


REGISTER_CHANGES = {
    "SetFmatrix": [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7)],
    "SetFmatrix-pads": [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7)],
    "SetLoadDataPaddingValue": [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7)],
    "SetLoadDataRepeat": [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7), _set_repeat(1, 1, 0)],
    "SetLoadDataBoundary": [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7)],
}
CHANGE = {
    "SetFmatrix": _set_fmatrix(6, 5, (1, 1, 1, 1)),
    "SetFmatrix-pads": _set_fmatrix(6, 6, (0, 2, 1, 0)),
    "SetLoadDataPaddingValue": _set_pad(9),
    "SetLoadDataRepeat": _set_repeat(1, 2, 0),
    "SetLoadDataBoundary": _set_boundary(1024),
}


@pytest.mark.parametrize("change", sorted(CHANGE))
@pytest.mark.parametrize("dtype", ["int8_t", "half", "float"])
def test_load3d_cache_sees_every_register_write(planned, change, dtype):
    es = {"int8_t": 1, "half": 2, "float": 4}[dtype]
    p = _p3(dtype, mStartPt=16 if change == "SetLoadDataBoundary" else 0)  # (rows reading past L1 byte 1024)
    setup = REGISTER_CHANGES[change]
    actions = setup + [_load(p), _load(p), CHANGE[change], _load(p), _load(p)]
    # (repeatTime = 2 is experimental: its loads warn)
    warns = pytest.warns(fc.FastCopyWarning, match=r"repeatTime=2 on Atlas A2 is experimental") \
        if change == "SetLoadDataRepeat" else contextlib.nullcontext()
    with warns:
        results = _replay(A2, dtype, 2 * 6 * 6 * 32 // es, "A2", 16384 // es, actions)
    _assert_same(results)
    # the change made a difference (else this test could not catch a stale cache entry)
    k = len(setup)
    (before, _), (after, _) = results[0][k + 1], results[0][k + 3]
    assert not np.array_equal(before, after), change
    # and the repeats were prepared: planning ran once before the change and once after it
    pipe = fc.TPipe(product=A2)
    src, dst = _fmap(pipe, dtype, 2 * 6 * 6 * 32 // es, 1), pipe.alloc("A2", dtype, 16384 // es)
    for act in setup:
        act(pipe, dst, src)
    n = planned["n"]
    with warns:
        for act in actions[k:]:
            act(pipe, dst, src)
    assert planned["n"] == n + 2


def test_load3d_setting_registers_itself_is_prepared(planned):
    """isSetFMatrix / isSetPadding (the default config) write the registers on every call; a repeat under an
    unchanged state writes the same values, so it stays prepared; a setter in between is seen."""
    p = _p3("half", padValue=3)
    q = _p3("half", padValue=5, l1H=6, l1W=5)
    actions = [_load(p, None), _load(p, None), _load(q, None), _load(p, None), _set_fmatrix(6, 5, (0, 0, 0, 0)),
               _load(p, _NO_SET), _set_pad(11), _load(p, _NO_SET), _load(p, None)]
    with pytest.warns(fc.FastCopyWarning, match=r"rows up to 16 go beyond the Ho\*Wo = 12 output pixels"):  # (q)
        _assert_same(_replay(A2, "half", 2 * 6 * 6 * 16, "A2", 4096, actions))
    pipe = fc.TPipe(product=A2)
    src, dst = _fmap(pipe, "half", 2 * 6 * 6 * 16, 1), pipe.alloc("A2", "half", 4096)
    fc.LoadData(dst, src, p)
    n = planned["n"]
    fc.LoadData(dst, src, p)
    fc.LoadData(dst, src, p)
    assert planned["n"] == n
    assert pipe.state["FMATRIX_L"] == (6, 6, (1, 1, 1, 1))


def test_load_with_stride_cache_sees_the_pitch():
    p = _p3("half", mExtension=16)

    def stride(q):
        return lambda pipe, dst, src: fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(0, 1, 0, q),
                                                                      pipe=pipe)

    def load(pipe, dst, src):
        fc.LoadDataWithStride(dst, src, p)

    _assert_same(_replay(P350, "half", 2 * 6 * 6 * 16, "A2", 8192, [stride(1), load, load, stride(2), load, load]))


def test_loaddata_dispatch_errors():
    pipe = fc.TPipe(product=A2)
    src, dst = _fmap(pipe, "half", 1024, 1), pipe.alloc("A2", "half", 1024)
    with pytest.raises(fc.UnsupportedError, match="no form takes a DataCopyParams"):
        fc.LoadData(dst, src, fc.DataCopyParams(1, 1, 0, 0))
    with pytest.raises(fc.UnsupportedError, match="takes no keyword arguments"):
        fc.LoadData(dst, src, fc.LoadData2DParams(0, 1, 1), config=_NO_SET)
    with pytest.raises(fc.UnsupportedError, match="got LoadData2DParams"):
        fc.LoadDataWithTranspose(dst, src, fc.LoadData2DParams(0, 1, 1))
    with pytest.raises(fc.UnsupportedError, match="config= takes IsResetLoad3dConfig"):
        fc.LoadData(dst, src, _p3("half"), config=3)


# ------------------------------------------------------------------------------------- the last-call memo
def test_memo_tells_the_entry_points_apart(planned):
    """The same params object through LoadData and LoadDataWithStride on one destination (the quickest repeat
    keys on the very parameter snapshot): each entry point keeps its own meaning, as with no cache at all."""
    p = _p3("half", mExtension=32)  # (two fractal rows: the pitch matters)

    def plain(pipe, dst, src):
        fc.LoadData(dst, src, p, config=_NO_SET)

    def strided(pipe, dst, src):
        fc.LoadDataWithStride(dst, src, p, config=_NO_SET)

    pitch = lambda pipe, dst, src: fc.SetLoadDataRepeatWithStride(  # noqa: E731
        fc.LoadDataRepeatParamWithStride(0, 1, 0, 3), pipe=pipe)
    setup = [pitch, _set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7)]
    clear = lambda pipe, dst, src: dst.numpy().view(np.uint8).__setitem__(slice(None), 0)  # noqa: E731
    # (a LoadData on Atlas 350 writes the pitch register itself: the strided loads come first)
    actions = setup + [clear, strided, strided, clear, plain, plain, clear, strided]
    results = _replay(P350, "half", 2 * 6 * 6 * 16, "A2", 8192, actions)
    _assert_same(results)
    k = len(setup)
    assert not np.array_equal(results[0][k + 2][0], results[0][k + 5][0])  # the two loads write differently


def test_memo_sees_changed_fields_and_keeps_refusing_bad_calls(planned):
    """A field set on the params object between repeats (the snapshot is gone) plans again; a keyword argument
    LoadData 2D refuses is refused on a repeat too."""
    pipe = fc.TPipe(product=A2)
    src, dst = _fmap(pipe, "half", 4096, 7), pipe.alloc("A2", "half", 4096)
    p = fc.LoadData2DParams(0, 4, 1)
    fc.LoadData(dst, src, p)
    fc.LoadData(dst, src, p)
    n = planned["n"]
    fc.LoadData(dst, src, p)
    assert planned["n"] == n
    p.srcStride = 2
    fc.LoadData(dst, src, p)
    assert planned["n"] == n + 1
    want = src.numpy().view(np.uint16).reshape(-1, 256)[[0, 2, 4, 6]].reshape(-1)
    assert np.array_equal(dst.numpy().view(np.uint16)[:1024], want)
    for bad in ({"config": _NO_SET}, {"config": 3}, {"foo": 1}):
        with pytest.raises(fc.UnsupportedError, match="takes no keyword arguments"):
            fc.LoadData(dst, src, p, **bad)



def test_memo_refuses_wrong_arguments_as_a_first_call_does():
    """With a repeat's memo on the destination (its quickest form bound), a call with a third argument that is no
    params struct, a destination or source that is no tensor, or a GM destination raises what it raises with no
    memo at all (type and message), and writes nothing."""
    def attempts(dst, src, p, gm):
        out = []
        for args in ((dst, src, 5), (dst, src, fc.DataCopyParams(1, 32)), ("x", src, p), (dst, "y", p), (gm, src, p)):
            with pytest.raises(fc.FastCopyError) as err:
                fc.LoadData(*args)
            out.append((type(err.value), str(err.value)))
        return out

    from fastcopy.dma import kernels

    kernels.load()  # (the quickest form binds a numba kernel)
    got = []
    for memo in (False, True):
        pipe = fc.TPipe(product=A2)
        src, dst = _fmap(pipe, "half", 32768, 5), pipe.alloc("B2", "half", 32768)
        gm = fc.GlobalTensor(np.zeros(32768, np.float16))
        p = fc.LoadData2DParams(0, 128, 1, 0, 0, True)
        if memo:
            for _ in range(3):
                fc.LoadData(dst, src, p)
            assert dst._prepared["LoadData"][5][5]  # (the quickest form is bound)
        before = dst.numpy().view(np.uint8).copy()
        got.append(attempts(dst, src, p, gm))
        assert np.array_equal(dst.numpy().view(np.uint8), before) and not gm.numpy().view(np.uint8).any()
    assert got[0] == got[1]

@pytest.mark.parametrize("kernels", ["numba", "numpy"])
def test_small_img2col_repeat_is_one_kernel_call(kernels):
    """A small img2col load with padding (copies and fills on one view width) is prepared as one ``run_steps``
    call; its repeats write what a call that never saw the cache writes (numba kernel and numpy stand-in)."""
    from fastcopy.dma import kernels as K

    p = _p3("half")
    actions = [_set_fmatrix(6, 6, (1, 1, 1, 1)), _set_pad(7), _load(p), _load(p), _load(p)]
    K.use(kernels)
    try:
        _assert_same(_replay(A2, "half", 2 * 6 * 6 * 16, "A2", 4096, actions))
        pipe = fc.TPipe(product=A2)
        src, dst = _fmap(pipe, "half", 2 * 6 * 6 * 16, 1), pipe.alloc("A2", "half", 4096)
        for act in actions:
            act(pipe, dst, src)
        prep = next(v[4] for k, v in dst._prepared.items() if k[0] == "3d")
        assert [c[0] for c in prep[1]] == ["steps"]
    finally:
        K.use("auto")
