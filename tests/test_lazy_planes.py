"""Lazy definedness (fastcopy/memory.py): fresh memory keeps exact ranges of defined bytes, without a byte plane,
until something needs per-byte definedness.

The property tests run one random program twice, lazily and with the eager plane of before
(``config.LAZY_PLANES = False``: every fresh memory materialises its plane at once), and compare after every op
every byte, its definedness (``defined()`` of tensors over whole buffers and of the op's own tensors), the
warnings and the errors. Small ``LAZY_RANGES`` limits make lazy memories materialise in the middle of programs.
"""

from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy import config
from fastcopy.golden import load_case, run_program
from fastcopy.memory import Memory
from fastcopy.products import Phys
from threads_util import in_two_threads

ROOT = pathlib.Path(__file__).resolve().parents[1]
UB = 8192
L1 = 16384


@pytest.fixture
def mode(monkeypatch):
    """``mode(lazy, ranges)``: set how fresh memories keep their definedness from now on."""

    def set_mode(lazy: bool, ranges: int = 16) -> None:
        monkeypatch.setattr(config, "LAZY_PLANES", lazy)
        monkeypatch.setattr(config, "LAZY_RANGES", ranges)

    return set_mode


# ------------------------------------------------------------------------------------------ random programs
class World:
    """One core (UB, L1, L0A), a defined GM source and a GM output declared undefined, whole-buffer views."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed)
        self.pipe = fc.TPipe(product="ATLAS_A2", capacities={"UB": UB, "L1": L1}, poison=0xA5)
        self.src = fc.GlobalTensor(rng.integers(0, 2**16, UB, dtype=np.uint16).view(np.float16))
        self.out = fc.GlobalTensor(np.zeros(UB // 2, np.float16), defined=False)
        self.whole = {name: self.pipe.alloc(pos, "uint8", cap, addr=0)
                      for name, pos, cap in (("UB", "VECIN", UB), ("L1", "A1", L1), ("L0A", "A2", 1024))}
        self.ub = [self.pipe.alloc("VECIN", dt, n, addr=a) for dt, n, a in
                   (("half", 512, 0), ("half", 256, 1024), ("float", 128, 1536), ("half", 1024, 2048),
                    ("int8_t", 512, 4096), ("half", 512, 4096), ("float", 256, 6144))]
        self.l1 = self.pipe.alloc("A1", "half", 4096, addr=0)
        self.l0a = self.pipe.alloc("A2", "half", 512, addr=0)

    def state(self) -> list:
        out = [(t.numpy().copy(), t.defined().copy()) for t in self.whole.values()]
        out.append((self.out.numpy().view(np.uint16).copy(), self.out.defined().copy()))
        return out + [t.defined().copy() for t in self.ub]


def op_strategy():
    k = st.integers(0, 6)
    small = st.integers(0, 3)
    lazy = st.one_of(  # ops that keep a lazy memory lazy (drawn more often)
        st.tuples(st.just("full"), k, st.integers(0, 40)),
        st.tuples(st.just("set_undefined"), k, st.integers(0, 100)),
        st.tuples(st.just("set_defined"), k, st.integers(0, 100)),
        st.tuples(st.just("setvalue"), k, st.integers(0, 2**16)),
        st.tuples(st.just("ub2gm"), k, st.integers(0, 16), st.integers(1, 32)),
    )
    return st.one_of(
        lazy, lazy, lazy,
        st.tuples(st.just("part"), k, st.integers(1, 6), st.integers(1, 8), small, small),
        st.tuples(st.just("ub2gm"), k, st.integers(0, 16), st.integers(1, 32)),
        st.tuples(st.just("ub2ub"), k, k, st.integers(1, 4), st.integers(1, 4), small, small),
        st.tuples(st.just("pad"), k, st.integers(1, 4), st.integers(1, 80), st.booleans(), st.integers(0, 8),
                  st.integers(0, 8)),
        st.tuples(st.just("set_undefined"), k, st.integers(0, 100)),
        st.tuples(st.just("set_defined"), k, st.integers(0, 100)),
        st.tuples(st.just("mask"), k, st.integers(0, 2**16)),
        st.tuples(st.just("setvalue"), k, st.integers(0, 2**16)),
        st.tuples(st.just("setitem"), k, st.integers(0, 64), st.integers(0, 64)),
        st.tuples(st.just("raw"), k, st.integers(0, 64)),
        st.tuples(st.just("l1"), st.integers(0, 48), st.integers(1, 64)),
        st.tuples(st.just("load2d"), st.integers(0, 6), st.integers(1, 2), st.integers(0, 2), st.booleans()),
    )


def apply(w: World, op) -> object:
    """Run one op; returns what to compare besides memory (the error, or the warnings)."""
    name, *a = op
    t = w.ub[a[0]] if name not in ("l1", "load2d") else None
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            if name == "full":
                t = t[min(a[1] * 32 // t.itemsize, t.size)]  # (32-byte aligned)
                fc.DataCopy(t, w.src, t.size * t.itemsize // 32 * 32 // t.itemsize)
            elif name == "part":
                fc.DataCopy(t, w.src, fc.DataCopyParams(a[1], a[2], a[3], a[4]))
            elif name == "ub2gm":
                fc.DataCopy(w.out[a[1] * 16], t, a[2] * 32 // t.itemsize)
            elif name == "ub2ub":
                if t.dtype == w.ub[a[1]].dtype:
                    fc.DataCopy(w.ub[a[1]], t, fc.DataCopyParams(a[2], a[3], a[4], a[5]))
            elif name == "pad":
                es = t.itemsize
                blen = max(a[2] // es, 1) * es
                src = w.src if es == 2 else fc.GlobalTensor(w.src.numpy().view(t.dtype))
                fc.DataCopyPad(t, src, fc.DataCopyExtParams(a[1], blen, 0, 0, 0),
                               fc.DataCopyPadExtParams(a[3], min(a[4], 32 // es), min(a[5], 32 // es), 0))
            elif name == "set_undefined":
                t[min(a[1], t.size)].set_undefined()
            elif name == "set_defined":
                t[min(a[1], t.size)].set_defined()
            elif name == "mask":
                t.set_defined(np.random.default_rng(a[1]).random(t.size) < 0.5)
            elif name == "setvalue":
                t.SetValue(a[1] % t.size, 7)
            elif name == "setitem":
                lo, hi = sorted((a[1], a[2]))
                if lo == 0 and hi == 64:
                    t[...] = 3
                else:
                    t[lo:hi] = 5
            elif name == "raw":  # data written without definedness: stays as it was
                t.numpy().view(np.uint8)[a[1]:] = 17
            elif name == "l1":
                fc.DataCopy(w.l1[a[0] * 16], w.src, a[1] * 16)
            elif name == "load2d":
                fc.LoadData(w.l0a, w.l1, fc.LoadData2DParams(a[0], a[1], a[2], 0, 0, a[3]))
        except fc.FastCopyError as exc:
            return type(exc).__name__, re.sub(r"0x[0-9a-f]+", "", str(exc))
    return sorted(str(m.message) for m in got)


def run(ops, seed: int) -> list:
    w = World(seed)
    trace = [w.state()]
    for op in ops:
        trace.append((apply(w, op), w.state()))
    # and the planes as bytes, materialised now
    trace.append([np.array(w.pipe.buffer(p).plane, copy=True) for p in (Phys.UB, Phys.L1, Phys.L0A)])
    return trace


def same(a, b, where="") -> None:
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), f"differs at {where}"
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op_strategy(), min_size=1, max_size=14), seed=st.integers(0, 2**16),
       ranges=st.sampled_from([1, 2, 4, 16]))
def test_lazy_definedness_equals_eager(mode, ops, seed, ranges):
    mode(False)
    eager = run(ops, seed)
    mode(True, ranges)
    lazy = run(ops, seed)
    same(lazy, eager)


def test_every_kind_of_op_runs_without_error(mode):
    """The program generator reaches each op (none is silently always rejected)."""
    mode(True)
    w = World(1)
    for op in [("full", 0, 0), ("part", 1, 2, 2, 1, 1), ("ub2gm", 0, 0, 4), ("ub2ub", 0, 5, 2, 2, 1, 1),
               ("pad", 2, 2, 20, True, 1, 1), ("set_undefined", 3, 4), ("set_defined", 3, 4), ("mask", 1, 3),
               ("setvalue", 4, 9), ("setitem", 0, 2, 9), ("setitem", 0, 0, 64), ("raw", 1, 3), ("l1", 0, 32),
               ("load2d", 0, 2, 1, True)]:
        res = apply(w, op)
        assert isinstance(res, list), (op, res)


# ------------------------------------------------------------------------------------------ the fast case
@pytest.mark.parametrize("nbytes", [1 << 19, 4 << 20, 16 << 20])  # numpy memset, kernel fills, streaming
def test_whole_writes_keep_a_fresh_buffer_lazy(mode, nbytes):
    """Dense writes of defined data into fresh memory record ranges, no plane (at every size, whichever way the
    plane would have been set); definedness exact; a write with gaps then materialises the plane from them."""
    mode(True)
    pipe = fc.TPipe(capacities={"UB": 2 * nbytes})
    x = pipe.alloc("VECIN", "uint16", nbytes)
    mem = x.memory
    src = fc.GlobalTensor(np.arange(nbytes // 2, dtype=np.uint16))
    fc.DataCopy(x, src, fc.DataCopyParams(16, nbytes // 16 // 32))  # dense
    fc.DataCopy(x, src, fc.DataCopyParams(16, nbytes // 16 // 32))  # (repeated: prepared)
    assert mem.lazy and mem._plane is None
    assert mem.known_defined(0, nbytes) and not mem.known_defined(0, nbytes + 1)
    d = x.defined()
    assert d[:nbytes // 2].all() and not d[nbytes // 2:].any()
    half = nbytes // 2
    fc.DataCopy(x[half], src, fc.DataCopyParams(4, 1, 1, 1))  # bursts with gaps: bytes of the plane
    assert not mem.lazy
    want = d.copy()
    for b in range(4):
        want[half + b * 32:half + b * 32 + 16] = True
    assert np.array_equal(x.defined(), want)


def test_first_call_into_fresh_pipe_then_repeat_and_golden_masks(mode):
    """A GM output declared undefined stays lazy through whole writes; its golden mask is exact."""
    mode(True)
    pipe = fc.TPipe()
    ub = pipe.alloc("VECIN", "float", 1024)
    out = fc.GlobalTensor(np.zeros(2048, np.float32), defined=False)
    fc.DataCopy(ub, fc.GlobalTensor(np.ones(1024, np.float32)), 1024)
    fc.DataCopy(out, ub, 1024)
    fc.DataCopy(out, ub, 1024)  # repeated: prepared, known defined
    assert out.memory.lazy
    d = out.defined()
    assert d[:1024].all() and not d[1024:].any()


def test_ranges_merge_split_and_limit(mode):
    mode(True, 5)
    mem = Memory(np.zeros(1000, np.uint8), Phys.UB, defined=False)
    for lo, hi in ((10, 20), (30, 40), (20, 30), (50, 60), (70, 80), (90, 100)):
        mem.mark_defined(lo, hi)
    assert mem.lazy and mem.known == [(10, 40), (50, 60), (70, 80), (90, 100)]
    mem.mark_undefined(15, 35)
    assert mem.lazy and mem.known == [(10, 15), (35, 40), (50, 60), (70, 80), (90, 100)]
    assert mem.plane_bytes(0, 1000).nonzero()[0].tolist() == (
        list(range(10, 15)) + list(range(35, 40)) + list(range(50, 60)) + list(range(70, 80)) + list(range(90, 100)))
    mem.mark_defined(200, 210)  # past the limit: the plane, from the ranges
    assert not mem.lazy
    want = np.zeros(1000, np.uint8)
    for lo, hi in ((10, 15), (35, 40), (50, 60), (70, 80), (90, 100), (200, 210)):
        want[lo:hi] = 1
    assert np.array_equal(mem.plane, want)


def test_restart_reuses_no_stale_plane(mode):
    """After restart() a buffer is all undefined again: neither its old plane (kept for reuse) nor views of it
    may show old definedness."""
    mode(True)
    pipe = fc.TPipe(poison=0x33)
    t = pipe.alloc("VECIN", "half", 256)
    t.set_defined(np.arange(256) % 2 == 0)  # materialised
    mem = t.memory
    old = mem.view(2, plane=True)[0]
    assert old.any()
    pipe.restart()
    t2 = pipe.alloc("VECIN", "half", 256)
    assert t2.memory is mem and mem.lazy
    assert not t2.defined().any() and (t2.numpy().view(np.uint16) == 0x3333).all()
    assert not mem.view(2, plane=True)[0].any()  # the same view width as before: made again, all undefined
    pipe.restart()
    t2 = pipe.alloc("VECIN", "half", 256)
    assert mem.lazy and not t2.defined().any()
    fc.DataCopy(t2, fc.GlobalTensor(np.zeros(64, np.float16)), fc.DataCopyParams(2, 1, 0, 1))  # strided
    want = np.zeros(256, bool)
    want[:16] = want[32:48] = True
    assert np.array_equal(t2.defined(), want)
    assert mem.view(2, plane=True)[0] is not old  # (views of the plane made again)
    assert np.array_equal(mem.plane[:512].astype(bool), np.repeat(want, 2))


def test_nothing_outside_memory_reads_the_hidden_state():
    """Only fastcopy/memory.py touches the hidden state (``_plane``, ``_plane_views``, ``_spare``):
    everyone else goes through ``plane`` / ``plane_bytes`` / ``mark_defined`` / ``known_defined``, so no reader
    can see a plane that the ranges have moved past."""
    bad = []
    for path in (ROOT / "fastcopy").rglob("*.py"):
        if path.name == "memory.py" and path.parent.name == "fastcopy":
            continue
        text = path.read_text()
        for name in ("._plane", "._spare", "_plane_views", "._materialize"):
            if name in text:
                bad.append(f"{path.relative_to(ROOT)}: {name}")
    assert not bad, bad


# ------------------------------------------------------------------------------------------ threads
@pytest.mark.parametrize("ranges", [2, 64])
def test_threads_marking_one_lazy_buffer(mode, ranges):
    """Two threads write disjoint tensors of one lazy buffer (whole copies, SetValue): no range is lost, also
    when the plane is materialised in the middle."""
    mode(True, ranges)
    pipe = fc.TPipe(capacities={"UB": 1 << 16})
    src = fc.GlobalTensor(np.arange(1 << 15, dtype=np.uint16))
    tiles = [pipe.alloc("VECIN", "uint16", 256) for _ in range(64)]

    def work(k: int) -> None:
        for i in range(k, 64, 2):
            if i % 3:
                fc.DataCopy(tiles[i], src, 256)
            else:
                for e in range(0, 256, 2):
                    tiles[i].SetValue(e, e)

    in_two_threads(work)
    for i, t in enumerate(tiles):
        want = np.ones(256, bool) if i % 3 else np.arange(256) % 2 == 0
        assert np.array_equal(t.defined(), want), i


def test_threads_setting_neighbours_lose_no_range(mode):
    """Two threads set alternate elements of one lazy buffer (each element's range touches the other thread's):
    every element ends up defined, also under frequent thread switches (the memory stays lazy throughout)."""
    mode(True, 1 << 20)
    pipe = fc.TPipe()
    t = pipe.alloc("VECIN", "int64_t", 4096)

    def work(k: int) -> None:
        for e in range(k, 4096, 2):
            t.SetValue(e, e)

    in_two_threads(work)
    assert t.memory.lazy and t.defined().all() and (t.numpy() == np.arange(4096)).all()


# ------------------------------------------------------------------------------------------ golden outputs
CASES = sorted((ROOT / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_golden_outputs_lazy_equal_eager(mode, path):
    """Every example case (first and last sweep point; fresh and reused pipes): output bytes, masks and notes
    equal with lazy and eager planes."""
    case = load_case(str(path), allow_python=True)
    got = {}
    for lazy in (False, True):
        mode(lazy)
        res = []
        for i in sorted({0, len(case) - 1}):
            for reuse in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = run_program(case.point(i), reuse=reuse)
                res.append(({k: (np.array(d, copy=True).view(np.uint8), np.array(m, copy=True))
                             for k, (d, m) in r.outputs.items()}, sorted(r.notes), sorted(r.empty)))
        got[lazy] = res
    same(got[True], got[False])


# ------------------------------------------------------------------------------------------ safety
@pytest.mark.parametrize("call", ["gaps", "pad", "setitem", "ub2ub"])
def test_a_plane_that_cannot_be_allocated_writes_nothing(mode, monkeypatch, call):
    """A lazy memory materialises its plane before any data byte is written: a host that cannot hold the plane
    gives a CapacityError and leaves data and definedness as they were."""
    mode(True)
    pipe = fc.TPipe(capacities={"UB": 1 << 16}, poison=0x5A)
    src = fc.GlobalTensor(np.arange(1 << 14, dtype=np.uint16))
    t = pipe.alloc("VECIN", "uint16", 1 << 12)
    u = pipe.alloc("VECIN", "uint16", 1 << 12)
    fc.DataCopy(u, src, 1 << 11)  # half defined (a range)
    mem = t.memory
    zeros = np.zeros

    def no_plane(n, *args, **kwargs):
        if n == mem.size + 128:
            raise MemoryError
        return zeros(n, *args, **kwargs)

    before = mem.data.copy()
    monkeypatch.setattr(np, "zeros", no_plane)
    with pytest.raises(fc.CapacityError, match="definedness plane of the UB buffer"):
        if call == "gaps":
            fc.DataCopy(t, src, fc.DataCopyParams(4, 2, 0, 1))
        elif call == "pad":
            fc.DataCopyPad(t, src, fc.DataCopyExtParams(2, 40, 0, 1, 0), fc.DataCopyPadExtParams(False, 0, 0, 0))
        elif call == "setitem":
            t[3:9] = 7
        else:
            fc.DataCopy(t, u, 1 << 12)  # a partly undefined source: its plane travels
    monkeypatch.setattr(np, "zeros", zeros)
    assert mem.lazy and np.array_equal(mem.data, before)
    assert u.defined()[:1 << 11].all() and not u.defined()[1 << 11:].any() and not t.defined().any()
