"""Repeated cube-in loads (fastcopy.cube.recall): the quickest repeat (one kernel call, the definedness of both
tensors proved by their known-range lists) and the remembered calls give what a call that never saw a cache
gives: bytes, definedness, warnings, errors (nothing written) and registers, after any sequence of loads,
register writes (the registers a load reads, others, the same values again), source changes and definedness
changes. A 3D load is planned again exactly when a register it reads changed value; the 2D loads and the
transposes read none."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import test_cube_in_speed

import fastcopy as fc
from fastcopy.dma import kernels as K

planned = test_cube_in_speed.planned  # the fixture (counts planner calls), taken by name

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
A2, P350 = "ATLAS_A2", "ATLAS_350"
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ES = {"int8_t": 1, "half": 2, "float": 4}
NO_SET = fc.IsResetLoad3dConfig(False, False)


@pytest.fixture(autouse=True)
def numba_kernels():
    K.load()  # (the quickest repeat binds compiled kernels: load them whatever ran before)


def _p3(es: int, **kw):
    c0 = 32 // es
    fields = dict(padList=(1, 1, 1, 1), l1H=6, l1W=6, channelSize=c0, kExtension=2 * c0, mExtension=16,
                  kStartPt=0, mStartPt=0, filterW=3, filterH=3, padValue=3)
    fields.update(kw)
    return fc.LoadData3DParamsV2(**fields)


def _loads(es: int) -> list:
    """(name, make(), entry point): loads with their params built by ``make`` (the very object again, or a new
    one with the same values: the memo and the keyed path)."""
    out = [
        ("2D 1 fractal", lambda: fc.LoadData2DParams(0, 1, 1), "LoadData"),
        ("2D 3 fractals stride 2", lambda: fc.LoadData2DParams(1, 3, 2), "LoadData"),
        ("2D dstGap 1", lambda: fc.LoadData2DParams(0, 2, 1, dstGap=1), "LoadData"),
        ("transpose 2 squares", lambda: fc.LoadData2dTransposeParams(0, 2, 1, 2 if es != 2 else 0, 0, 0),
         "LoadDataWithTranspose"),
        ("transpose, colliding outputs", lambda: fc.LoadData2dTransposeParams(0, 2, 1, 0, 0, 0),
         "LoadDataWithTranspose"),
        ("3D no register set", lambda: _p3(es), NO_SET),
        ("3D sets both registers", lambda: _p3(es, padValue=5, l1H=5), None),
        ("3D sets FMATRIX", lambda: _p3(es, l1W=5), fc.IsResetLoad3dConfig(True, False)),
        ("3D rows 16..32", lambda: _p3(es, mStartPt=16, mExtension=16), NO_SET),
    ]
    if es == 2:
        out.append(("2D ifTranspose", lambda: fc.LoadData2DParams(0, 2, 1, ifTranspose=True), "LoadData"))
    return out


def _loads_350(es: int) -> list:
    """Atlas 350: the 2D V2 form, the V2 transpose, 3D loads (LoadData writes the pitch register) and
    LoadDataWithStride (reads it)."""
    out = [
        ("2D V2 2 x 1", lambda: fc.LoadData2DParamsV2(0, 0, 2, 1, 8, 2), "LoadData"),
        ("2D V2 2 x 2, dstStride 1 (overlap)", lambda: fc.LoadData2DParamsV2(0, 0, 2, 2, 4, 1), "LoadData"),
        ("2D V2 reading past the source (an error)", lambda: fc.LoadData2DParamsV2(0, 0, 2, 2, 8, 1), "LoadData"),
        ("transpose V2 2 squares", lambda: fc.LoadData2dTransposeParamsV2(0, 2, 1, 2 if es != 2 else 0, 0, 0, 0),
         "LoadDataWithTranspose"),
        ("3D no register set", lambda: _p3(es), NO_SET),
        ("3D sets both registers", lambda: _p3(es, padValue=5, l1H=5), None),
        ("3D 32 rows", lambda: _p3(es, mExtension=32), NO_SET),
        ("3D with stride", lambda: _p3(es, mExtension=32), ("stride", NO_SET)),
        ("3D with stride, sets FMATRIX", lambda: _p3(es, l1W=5), ("stride", fc.IsResetLoad3dConfig(True, False))),
    ]
    if es == 2:
        out.append(("2D V2 ifTranspose", lambda: fc.LoadData2DParamsV2(0, 0, 1, 1, 8, 1, True), "LoadData"))
    return out


_SETTERS = [
    ("SetFmatrix 6x6", lambda pipe: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)),
    ("SetFmatrix 6x6 again", lambda pipe: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)),
    ("SetFmatrix 5x6 pads", lambda pipe: fc.SetFmatrix(5, 6, (0, 1, 1, 0), pipe=pipe)),
    ("SetLoadDataPaddingValue 7", lambda pipe: fc.SetLoadDataPaddingValue(7, pipe=pipe)),
    ("SetLoadDataPaddingValue 9", lambda pipe: fc.SetLoadDataPaddingValue(9, pipe=pipe)),
    ("SetLoadDataRepeat 1", lambda pipe: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 0), pipe=pipe)),
    ("SetLoadDataRepeat 2", lambda pipe: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(1, 2, 0), pipe=pipe)),
    ("SetLoadDataBoundary 0", lambda pipe: fc.SetLoadDataBoundary(0, pipe=pipe)),
    ("SetLoadDataBoundary 1024", lambda pipe: fc.SetLoadDataBoundary(1024, pipe=pipe)),
    ("SetPadValue (DataCopyPad's register)", lambda pipe: fc.SetPadValue(np.float16(2), pipe=pipe)),
]
_SETTERS_350 = [
    ("SetFmatrix 6x6", lambda pipe: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)),
    ("SetFmatrix 6x6 again", lambda pipe: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)),
    ("SetFmatrix 5x6 pads", lambda pipe: fc.SetFmatrix(5, 6, (0, 1, 1, 0), pipe=pipe)),
    ("SetLoadDataPaddingValue 7", lambda pipe: fc.SetLoadDataPaddingValue(7, pipe=pipe)),
    ("SetLoadDataRepeatWithStride pitch 2", lambda pipe: fc.SetLoadDataRepeatWithStride(
        fc.LoadDataRepeatParamWithStride(0, 1, 0, 2), pipe=pipe)),
    ("SetLoadDataRepeatWithStride pitch 3", lambda pipe: fc.SetLoadDataRepeatWithStride(
        fc.LoadDataRepeatParamWithStride(0, 1, 0, 3), pipe=pipe)),
    ("SetLoadDataRepeat 1", lambda pipe: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 0), pipe=pipe)),
    ("SetFmatrix FMATRIX_RIGHT (never read)", lambda pipe: fc.SetFmatrix(3, 3, (0, 0, 0, 0), fc.FmatrixMode.FMATRIX_RIGHT,
                                                                        pipe=pipe)),
    ("SetPadValue (DataCopyPad's register)", lambda pipe: fc.SetPadValue(np.float16(2), pipe=pipe)),
]
#: product -> (its loads, its register writes, the writes that make the 3D loads valid)
PRODUCTS = {A2: (_loads, _SETTERS, [("set", 0), ("set", 3)]),
            P350: (_loads_350, _SETTERS_350, [("set", 0), ("set", 3), ("set", 4)])}


def _source(pipe, dtype, seed):
    src = pipe.alloc("A1", dtype, 4096 // ES[dtype])
    src.numpy().view(np.uint8)[:] = np.random.default_rng(seed).integers(0, 256, 4096, dtype=np.uint8)
    src.set_defined()
    return src


def _tensors(pipe, dtype, seed):
    src = _source(pipe, dtype, seed)
    return src, pipe.alloc("A2", dtype, 8192 // ES[dtype]), pipe.alloc("B2", dtype, 8192 // ES[dtype])


def _outcome(fn):
    """What an action did: (error type and message or None, warning messages)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except fc.FastCopyError as exc:
            err = (type(exc).__name__, str(exc))
    return err, [str(w.message) for w in got]


_SOURCE_ACTIONS = ("data", "src undefined", "src defined")


def _source_action(kind: str, arg, src):
    """The action on the source tensor: new bytes ("data"), some bytes undefined ("src undefined", defined again
    by a later "src defined")."""
    if kind == "data":  # new source bytes, same tensor
        return lambda: src.numpy().view(np.uint8).__setitem__(slice(arg, None, 7), 0x5A ^ arg)
    if kind == "src defined":
        return src.set_defined

    def undefine():
        mask = np.ones(src.size, bool)
        mask[arg::97] = False
        src.set_undefined()
        src.set_defined(mask)
    return undefine


def _run(product, dtype, actions, cached: bool):
    """Run the drawn actions on a new pipe; ``cached=False`` clears every destination's cache before each action
    (each call then plans: the general path). Returns the observable state after every action."""
    es = ES[dtype]
    pipe = fc.TPipe(product=product)
    src, a2, b2 = _tensors(pipe, dtype, 11)
    other = _source(pipe, dtype, 12)  # (always defined: its loads mark bytes the first source's left undefined)
    loads, setters, _ = PRODUCTS[product]
    loads = loads(es)
    made = {}  # (load index) -> its params object, when reused
    trace = []
    for act in actions:
        if not cached:
            a2._prepared = b2._prepared = None
        kind, arg = act
        if kind == "load":
            i, new, second = arg
            name, make, how = loads[i]
            params = make() if new or i not in made else made[i]
            made.setdefault(i, params)
            s = other if second else src
            if how == "LoadDataWithTranspose":
                fn = lambda: fc.LoadDataWithTranspose(b2, s, params)  # noqa: E731
            elif how == "LoadData":
                fn = lambda: fc.LoadData(a2, s, params)  # noqa: E731
            elif type(how) is tuple:
                fn = lambda: fc.LoadDataWithStride(a2, s, params, config=how[1])  # noqa: E731
            else:
                fn = lambda: fc.LoadData(a2, s, params, config=how)  # noqa: E731
        elif kind == "set":
            fn = lambda: setters[arg][1](pipe)  # noqa: E731
        elif kind in _SOURCE_ACTIONS:
            fn = _source_action(kind, arg, src)
        else:  # "dst undefined": the destinations written undefined behind the cache's back
            def fn():
                a2.set_undefined()
                b2.set_undefined()
        err, warns = _outcome(fn)
        trace.append((act, err, warns, {k: v for k, v in pipe.state.items()},
                      a2.numpy().view(np.uint8).copy(), a2.defined().copy(),
                      b2.numpy().view(np.uint8).copy(), b2.defined().copy()))
    return trace


def _action(n_loads: int, n_setters: int):
    return st.one_of(
        st.tuples(st.just("load"), st.tuples(st.integers(0, n_loads - 1), st.booleans(), st.booleans())),
        st.tuples(st.just("load"), st.tuples(st.integers(0, n_loads - 1), st.just(False), st.just(False))),
        st.tuples(st.just("set"), st.integers(0, n_setters - 1)),
        st.tuples(st.just("data"), st.integers(0, 6)),
        st.tuples(st.just("src undefined"), st.integers(0, 96)),
        st.tuples(st.just("src defined"), st.none()),
        st.tuples(st.just("dst undefined"), st.none()),
    )


def _assert_same(product, dtype, actions):
    fast, slow = _run(product, dtype, actions, True), _run(product, dtype, actions, False)
    for k, (a, b) in enumerate(zip(fast, slow)):
        assert a[0] == b[0]
        assert a[1] == b[1], f"action {k} {a[0]}: errors differ"
        assert a[2] == b[2], f"action {k} {a[0]}: warnings differ"
        assert a[3] == b[3], f"action {k} {a[0]}: registers differ"
        for j, what in ((4, "A2 bytes"), (5, "A2 definedness"), (6, "B2 bytes"), (7, "B2 definedness")):
            assert np.array_equal(a[j], b[j]), f"action {k} {a[0]}: {what} differ"


@pytest.mark.parametrize("product", sorted(PRODUCTS))
@pytest.mark.parametrize("dtype", sorted(ES))
@SETTINGS
@given(data=st.data())
def test_repeats_equal_calls_without_cache(product, dtype, data):
    loads, setters, setup = PRODUCTS[product]
    n = len(loads(ES[dtype]))
    setup = setup if data.draw(st.booleans()) else []
    actions = setup + data.draw(st.lists(_action(n, len(setters)), min_size=4, max_size=24))
    _assert_same(product, dtype, actions)


@pytest.mark.parametrize("product", sorted(PRODUCTS))
@pytest.mark.parametrize("dtype", sorted(ES))
def test_a_long_mixed_sequence(product, dtype):
    """Every action kind between repeats of every load (derandomised runs draw few examples)."""
    loads, setters, setup = PRODUCTS[product]
    n = len(loads(ES[dtype]))
    actions = list(setup)
    for i in range(n):
        actions += [("load", (i, False, False))] * 3 + [("load", (i, True, False))]
    sets = [("set", k) for k in range(len(setters))]
    for extra in [("data", 2), ("src undefined", 5), ("load", (0, False, False)), ("src defined", None),
                  ("dst undefined", None)] + sets[1:] + sets[:1]:
        actions.append(extra)
        for i in range(n):
            actions += [("load", (i, False, False)), ("load", (i, False, False))]
    # undefined source bytes written, then defined ones over them from another source and another load, then the
    # first load again: its destination bytes must take the undefined ones again
    actions += [("src undefined", 3)]
    for i in range(n):
        j = (i + 1) % n
        actions += [("load", (i, False, False))] * 2 + [("load", (j, False, True)), ("load", (i, False, False))]
    _assert_same(product, dtype, actions)


# ------------------------------------------------------------------------ which writes make a 3D load plan again
_READ = {  # per register a 3D load reads: its setter with the value the test starts from, and another value
    "SetFmatrix": (lambda p: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=p), lambda p: fc.SetFmatrix(6, 5, (1, 1, 1, 1),
                                                                                                   pipe=p)),
    "SetLoadDataPaddingValue": (lambda p: fc.SetLoadDataPaddingValue(7, pipe=p),
                                lambda p: fc.SetLoadDataPaddingValue(8, pipe=p)),
    "SetLoadDataRepeat": (lambda p: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 0), pipe=p),
                          lambda p: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 1), pipe=p)),
    "SetLoadDataBoundary": (lambda p: fc.SetLoadDataBoundary(0, pipe=p), lambda p: fc.SetLoadDataBoundary(2048,
                                                                                                          pipe=p)),
}


@pytest.mark.parametrize("setter", sorted(_READ))
def test_3d_replans_exactly_when_a_register_it_reads_changes(planned, setter):
    """The same value written again, or a register the load does not read, keeps the load remembered; another
    value of a register it reads plans it again. (The bytes are checked against uncached calls above.)"""
    same, other = _READ[setter]
    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 3)
    for setup in _READ.values():
        setup[0](pipe)
    p = _p3(2, mStartPt=16)
    fc.LoadData(a2, src, p, config=NO_SET)
    n = planned["n"]
    for keep in (same, lambda q: fc.SetPadValue(np.float16(1), pipe=q),
                 lambda q: fc.SetHF32Mode(fc.HF32Mode.ENABLE, pipe=q)):
        keep(pipe)
        fc.LoadData(a2, src, p, config=NO_SET)
        fc.LoadData(a2, src, _p3(2, mStartPt=16), config=NO_SET)  # (new params object: the keyed path)
    assert planned["n"] == n
    other(pipe)
    fc.LoadData(a2, src, p, config=NO_SET)
    assert planned["n"] == n + 1
    fc.LoadData(a2, src, p, config=NO_SET)
    assert planned["n"] == n + 1
    same(pipe)  # back to the first value: a change again
    fc.LoadData(a2, src, p, config=NO_SET)
    assert planned["n"] == n + 2


def test_load_with_stride_replans_exactly_when_its_pitch_or_a_register_changes(planned):
    """Atlas 350: the pitch register (SetLoadDataRepeatWithStride) is read by LoadDataWithStride; FMATRIX_RIGHT is
    never read; a LoadData 3D writes the pitch itself, so a stride load after it sees another value."""
    pipe = fc.TPipe(product=P350)
    src, a2, _ = _tensors(pipe, "half", 8)

    def pitch(q):
        fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(0, 1, 0, q), pipe=pipe)

    fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)
    fc.SetLoadDataPaddingValue(7, pipe=pipe)
    pitch(2)
    p = _p3(2)
    fc.LoadDataWithStride(a2, src, p, config=NO_SET)
    n = planned["n"]
    for keep in (lambda: pitch(2), lambda: fc.SetFmatrix(3, 3, (0, 0, 0, 0), fc.FmatrixMode.FMATRIX_RIGHT, pipe=pipe)):
        keep()
        fc.LoadDataWithStride(a2, src, p, config=NO_SET)
    assert planned["n"] == n
    pitch(3)
    fc.LoadDataWithStride(a2, src, p, config=NO_SET)
    assert planned["n"] == n + 1
    fc.LoadData(a2, src, p, config=NO_SET)  # (writes the pitch: its own, 1 fractal)
    fc.LoadDataWithStride(a2, src, p, config=NO_SET)
    assert planned["n"] == n + 3


def test_a_load_writing_its_registers_stays_remembered_until_another_write(planned):
    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 4)
    p = _p3(2, padValue=5)
    fc.LoadData(a2, src, p)  # isSetFMatrix / isSetPadding: writes FMATRIX and PADDING from p
    state = dict(pipe.state)
    n = planned["n"]
    fc.LoadData(a2, src, p)
    assert planned["n"] == n and dict(pipe.state) == state
    fc.SetLoadDataPaddingValue(1, pipe=pipe)  # the load writes PADDING back: planned (and writes it)
    fc.LoadData(a2, src, p)
    assert planned["n"] == n + 1 and dict(pipe.state) == state


def test_restart_forgets_the_registers(planned):
    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 5)
    fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)
    fc.SetLoadDataPaddingValue(7, pipe=pipe)
    p = _p3(2)
    fc.LoadData(a2, src, p, config=NO_SET)
    fc.LoadData(a2, src, p, config=NO_SET)
    pipe.state.clear()  # (what TPipe.restart does to the registers)
    with pytest.raises(fc.ParamError, match="FMATRIX register is read before it was written"):
        fc.LoadData(a2, src, p, config=NO_SET)


# ------------------------------------------------------------------------------- every form's quickest repeat
def _fmap(pipe, position, dtype, n):
    t = pipe.alloc(position, dtype, n)
    t.numpy().view(np.uint8)[:] = np.arange(t.nbytes) % 251
    t.set_defined()
    return t


def _forms():
    """(name, product, dtype, source position, destination position, call(dst, src), pipe setup)"""
    def regs(p, stride=False):
        fc.SetFmatrix(4, 4, (1, 1, 1, 1), pipe=p)
        fc.SetLoadDataPaddingValue(0, pipe=p)
        if stride:
            fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(0, 1, 0, 1), pipe=p)

    p3 = fc.LoadData3DParamsV2(padList=(1, 1, 1, 1), l1H=4, l1W=4, channelSize=16, kExtension=32, mExtension=16,
                               filterW=3, filterH=3)
    pro = fc.LoadData3DParamsV2Pro(channelSize=16, extConfig=(16 << 16) | 32,
                                   filterConfig=(3 << 24) | (3 << 16) | (1 << 8) | 1 | (1 << 32) | (1 << 40))
    l2, l2t = fc.LoadData2DParams(0, 2, 1), fc.LoadData2DParams(0, 2, 1, ifTranspose=True)
    v2, v2t = fc.LoadData2DParamsV2(0, 0, 2, 1, 32, 2), fc.LoadData2DParamsV2(0, 0, 1, 1, 32, 1, True)
    t = fc.LoadData2dTransposeParams(0, 1, 1, 1, 0, 0)
    t4 = fc.LoadData2dTransposeParams(0, 1, 1, 3, 0, 0)
    tv2 = fc.LoadData2dTransposeParamsV2(0, 2, 1, 0, 0, 0, 0)
    none = lambda p: None  # noqa: E731
    return [
        ("LoadData2DParams", A2, "half", "A1", "A2", lambda d, s: fc.LoadData(d, s, l2), none),
        ("LoadData2DParams ifTranspose", A2, "half", "A1", "B2", lambda d, s: fc.LoadData(d, s, l2t), none),
        ("LoadData2DParamsV2", P350, "half", "A1", "A2", lambda d, s: fc.LoadData(d, s, v2), none),
        ("LoadData2DParamsV2 ifTranspose", P350, "half", "A1", "B2", lambda d, s: fc.LoadData(d, s, v2t), none),
        ("LoadDataWithTranspose b8", A2, "int8_t", "B1", "B2", lambda d, s: fc.LoadDataWithTranspose(d, s, t), none),
        ("LoadDataWithTranspose b16", A2, "half", "B1", "B2", lambda d, s: fc.LoadDataWithTranspose(d, s, t), none),
        ("LoadDataWithTranspose b32", A2, "float", "B1", "B2", lambda d, s: fc.LoadDataWithTranspose(d, s, t), none),
        ("LoadDataWithTranspose b4", A2, "int4b_t", "B1", "B2", lambda d, s: fc.LoadDataWithTranspose(d, s, t4),
         none),
        ("LoadDataWithTranspose V2 b16", P350, "half", "B1", "B2", lambda d, s: fc.LoadDataWithTranspose(d, s, tv2),
         none),
        ("LoadData3DParamsV2", A2, "half", "A1", "A2", lambda d, s: fc.LoadData(d, s, p3, config=NO_SET), regs),
        ("LoadData3DParamsV2Pro", P350, "half", "A1", "A2", lambda d, s: fc.LoadData(d, s, pro),
         lambda p: regs(p, True)),
        ("LoadDataWithStride", P350, "half", "A1", "A2", lambda d, s: fc.LoadDataWithStride(d, s, p3, config=NO_SET),
         lambda p: regs(p, True)),
    ]


@pytest.mark.parametrize("form", _forms(), ids=lambda f: f[0])
def test_every_small_form_repeats_as_one_kernel_call(form):
    """Each cube-in form a tile loop repeats becomes one bound kernel call whose repeats equal fresh calls."""
    name, product, dtype, spos, dpos, call, setup = form
    pipe = fc.TPipe(product=product)
    src, dst = _fmap(pipe, spos, dtype, 8192), pipe.alloc(dpos, dtype, 8192)
    setup(pipe)
    for _ in range(3):
        call(dst, src)
    memo = next(v for k, v in dst._prepared.items() if isinstance(k, str))
    fast = memo[5][5]
    assert fast and callable(fast[0]) and fast[3] is src.memory.known and fast[5] is dst.memory.known, name
    src.numpy().view(np.uint8)[::3] ^= 0x3C
    call(dst, src)
    other = fc.TPipe(product=product)
    s2, d2 = _fmap(other, spos, dtype, 8192), other.alloc(dpos, dtype, 8192)
    s2.numpy().view(np.uint8)[:] = src.numpy().view(np.uint8)
    setup(other)
    call(d2, s2)
    assert np.array_equal(dst.numpy().view(np.uint8), d2.numpy().view(np.uint8))
    assert np.array_equal(dst.defined(), d2.defined())


def test_observers_see_every_repeat():
    """``fastcopy check`` observes calls through the runner: a remembered repeat tells it too."""
    from fastcopy.dma import run

    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 6)
    p = fc.LoadData2DParams(0, 2, 1)
    seen = []
    for _ in range(3):
        fc.LoadData(a2, src, p)
    run.OBSERVERS.append(lambda plan, d, s: seen.append(plan.api))
    try:
        fc.LoadData(a2, src, p)
    finally:
        run.OBSERVERS.pop()
    assert seen == ["LoadData(LoadData2DParams)"]


def test_a_params_object_at_a_reused_address_is_not_taken_for_the_old_one():
    """The recent calls are found by ``id(params)``, and a memo holds its params object: while it is remembered
    no new object gets its id (CPython would reuse a dead one's at once), and a new object is planned (or found
    by its values), never run as the old call."""
    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 7)
    words = src.numpy().view(np.uint16)
    reused = 0
    for k in range(40):
        p = fc.LoadData2DParams(k % 3, 1, 1)
        fc.LoadData(a2, src, p)
        fc.LoadData(a2, src, p)
        old = id(p)
        del p
        q = fc.LoadData2DParams((k + 1) % 3, 1, 1)
        reused += id(q) == old
        fc.LoadData(a2, src, q)
        start = (k + 1) % 3 * 256
        assert np.array_equal(a2.numpy().view(np.uint16)[:256], words[start:start + 256]), k
    assert not reused  # (the memos held the old objects)


def test_a_params_object_changed_between_repeats_runs_its_new_values():
    """A memo proves its params object unchanged by the object's snapshot (setting a field drops it): a field set
    right after a quickest repeat, set back, or a copy of the object (which shares the snapshot) runs what its
    values say."""
    import copy

    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 8)
    words = src.numpy().view(np.uint16)
    p = fc.LoadData2DParams(0, 1, 1)

    def check(params, start):
        a2.numpy()[:] = 0
        fc.LoadData(a2, src, params)
        assert np.array_equal(a2.numpy().view(np.uint16)[:256], words[start * 256:start * 256 + 256]), start

    for start in (0, 0, 2, 2, 1, 0, 0, 2):
        if p.startIndex != start:
            p.startIndex = start  # (after p's quickest repeats: its memo is the last one)
        check(p, start)
        check(p, start)
        assert a2._prepared["LoadData"][0] is p
    for start in (1, 2):
        p.startIndex = start
        check(copy.copy(p), start)
        check(p, start)
        check(copy.copy(p), start)


def test_the_bound_kernel_is_the_compiled_entry_for_exactly_its_arguments():
    """A quickest repeat calls the numba kernel's compiled entry for its arguments' types (what the dispatcher
    would call); arguments it was not compiled for keep the dispatcher (which types them)."""
    from numba import typeof

    from fastcopy.cube.recall import _entry

    pipe = fc.TPipe(product=A2)
    src, a2, _ = _tensors(pipe, "half", 9)
    p = _p3(2)
    fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)
    fc.SetLoadDataPaddingValue(7, pipe=pipe)
    for _ in range(3):
        fc.LoadData(a2, src, p, config=NO_SET)
    fast = a2._prepared["LoadData"][5][5]
    assert fast[0] is K.run_steps.get_overload(tuple(typeof(a) for a in fast[1]))
    odd = (np.zeros(4, np.float32), 0, np.zeros(4, np.float32), 0, np.zeros(30, np.int64))  # (views are unsigned)
    assert _entry(K.copy_strided, odd) is K.copy_strided
    assert _entry(np.copyto, (1, 2)) is np.copyto


@pytest.mark.parametrize("dtype, fields", [
    ("half", (1, 16, 32, 0, 16, 16, 1, 0)),  # one 16 x 32 Nz image, dense
    ("half", (2, 16, 20, 640, 32, 32, 1, 1024)),  # two matrices, a row pitch, rows padded to 32
    ("int8_t", (1, 32, 64, 0, 64, 32, 1, 0)),
])
def test_dn2nz_repeats_are_prepared_and_exact(monkeypatch, dtype, fields):
    """DataCopy(Dn2NzParams) (Atlas 350 GM -> L1, a tile loop's operand staging) is remembered like the other
    DataCopy forms: its repeats plan nothing and write what a call on a fresh core writes, source changes and
    undefined source bytes included."""
    from fastcopy.cube import dn2nz

    count = {"n": 0}
    real = dn2nz.plan_dn2nz

    def counting(*a, **k):
        count["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(dn2nz, "plan_dn2nz", counting)
    es = ES[dtype]
    host = np.random.default_rng(5).integers(0, 256, 4096, dtype=np.uint8)

    def run(pipe, gm, repeats):
        dst = pipe.alloc("B1", dtype, 8192 // es)
        p = fc.Dn2NzParams(*fields)
        for _ in range(repeats):
            fc.DataCopy(dst, gm, p)
        return dst

    pipe = fc.TPipe(product=P350)
    gm = fc.GlobalTensor(host.copy().view(np.dtype({1: "i1", 2: "f2"}[es])))
    dst = run(pipe, gm, 3)
    assert count["n"] == 1
    for change in ("data", "undefined"):
        if change == "data":
            gm.numpy().view(np.uint8)[::5] ^= 0x33
        else:
            mask = np.ones(gm.size, bool)
            mask[7::61] = False
            gm.set_undefined()
            gm.numpy().view(np.uint8)[:] = host
            gm.set_defined(mask)
        n = count["n"]
        fc.DataCopy(dst, gm, fc.Dn2NzParams(*fields))  # (a new object, equal values: found by value)
        assert count["n"] == n
        fresh_gm = fc.GlobalTensor(gm.numpy().copy())
        if change == "undefined":
            fresh_gm.set_undefined()
            fresh_gm.numpy().view(np.uint8)[:] = host
            fresh_gm.set_defined(mask)
        want = run(fc.TPipe(product=P350), fresh_gm, 1)
        assert np.array_equal(dst.numpy().view(np.uint8), want.numpy().view(np.uint8)), change
        assert np.array_equal(dst.defined(), want.defined()), change


# ------------------------------------------------------------------ DataCopy(Dn2NzParams): the memo's quickest repeat
_DN_FIELDS = [(1, 16, 32, 0, 16, 16, 1, 0), (2, 16, 20, 640, 32, 32, 1, 1024), (1, 32, 64, 0, 64, 32, 1, 0),
              (4, 16, 64, 2048, 64, 16, 1, 512)]  # (the last reads past the 4 KiB source: an error, any dtype)
_DN_SETTERS = [
    ("SetPadValue", lambda pipe: fc.SetPadValue(np.float16(2), pipe=pipe)),
    ("SetLoopModePara", lambda pipe: fc.SetLoopModePara(fc.LoopModeParams(2, 1, 32, 64, 0, 0),
                                                        fc.DataCopyMVType.OUT_TO_UB, pipe=pipe)),
    ("ResetLoopModePara", lambda pipe: fc.ResetLoopModePara(pipe=pipe)),
    ("SetFmatrix", lambda pipe: fc.SetFmatrix(6, 6, (1, 1, 1, 1), pipe=pipe)),
]


def _run_dn2nz(dtype, actions, cached: bool):
    """The DN2NZ counterpart of :func:`_run`: repeats of DataCopy(Dn2NzParams) (the same object, a new one with
    the same values, another source) between source changes, definedness changes and state writes."""
    es = ES[dtype]
    pipe = fc.TPipe(product=P350)
    host = np.random.default_rng(21).integers(0, 256, 4096, dtype=np.uint8)
    np_dtype = {1: "i1", 2: "f2", 4: "f4"}[es]
    gm, other = fc.GlobalTensor(host.copy().view(np_dtype)), fc.GlobalTensor(host[::-1].copy().view(np_dtype))
    dst = pipe.alloc("B1", dtype, 8192 // es)
    made, trace = {}, []
    for act in actions:
        if not cached:
            dst._prepared = None
        kind, arg = act
        if kind == "load":
            i, new, second = arg
            params = fc.Dn2NzParams(*_DN_FIELDS[i]) if new or i not in made else made[i]
            made.setdefault(i, params)
            fn = lambda s=(other if second else gm), p=params: fc.DataCopy(dst, s, p)  # noqa: E731
        elif kind == "set":
            fn = lambda: _DN_SETTERS[arg][1](pipe)  # noqa: E731
        elif kind in _SOURCE_ACTIONS:
            fn = _source_action(kind, arg, gm)
        else:
            fn = dst.set_undefined
        err, warns = _outcome(fn)
        trace.append((act, err, warns, {k: v for k, v in pipe.state.items()}, dst.numpy().view(np.uint8).copy(),
                      dst.defined().copy()))
    return trace


@pytest.mark.parametrize("dtype", sorted(ES))
@SETTINGS
@given(data=st.data())
def test_dn2nz_repeats_equal_calls_without_cache(dtype, data):
    """DataCopy(Dn2NzParams) repeats through the memo and the bound kernel (as the cube-in loads): bytes,
    definedness, warnings, errors (nothing written) and the core's state equal calls that never saw a cache."""
    actions = data.draw(st.lists(_action(len(_DN_FIELDS), len(_DN_SETTERS)), min_size=4, max_size=24))
    fast, slow = _run_dn2nz(dtype, actions, True), _run_dn2nz(dtype, actions, False)
    for k, (a, b) in enumerate(zip(fast, slow)):
        assert a[:4] == b[:4], f"action {k} {a[0]}"
        assert np.array_equal(a[4], b[4]) and np.array_equal(a[5], b[5]), f"action {k} {a[0]}: bytes/definedness"


@pytest.mark.parametrize("dtype", sorted(ES))
def test_dn2nz_a_long_mixed_sequence_takes_the_bound_kernel(dtype):
    """Every action kind between repeats of every DN2NZ call; the dense one ends as a bound kernel call."""
    n = len(_DN_FIELDS)
    actions = []
    for extra in [("data", 2), ("src undefined", 5), ("load", (0, False, True)), ("src defined", None),
                  ("dst undefined", None)] + [("set", k) for k in range(len(_DN_SETTERS))]:
        actions.append(extra)
        for i in range(n):
            actions += [("load", (i, False, False))] * 3 + [("load", (i, True, False))]
    actions += [("src undefined", 3)] + [("load", (0, False, False))] * 2 + [("load", (1, False, True)),
                                                                             ("load", (0, False, False))]
    fast, slow = _run_dn2nz(dtype, actions, True), _run_dn2nz(dtype, actions, False)
    for k, (a, b) in enumerate(zip(fast, slow)):
        assert a[:4] == b[:4], f"action {k} {a[0]}"
        assert np.array_equal(a[4], b[4]) and np.array_equal(a[5], b[5]), f"action {k} {a[0]}: bytes/definedness"
    pipe = fc.TPipe(product=P350)
    gm = fc.GlobalTensor(np.zeros(4096 // ES[dtype], {1: "i1", 2: "f2", 4: "f4"}[ES[dtype]]))
    dst, p = pipe.alloc("B1", dtype, 8192 // ES[dtype]), fc.Dn2NzParams(*_DN_FIELDS[0])
    for _ in range(3):
        fc.DataCopy(dst, gm, p)
    fast = dst._prepared["DataCopy"][5][5]
    assert fast and callable(fast[0]) and fast[3] is gm.memory.known and fast[5] is dst.memory.known
