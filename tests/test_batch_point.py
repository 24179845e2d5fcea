"""What makes a batch point cheaper must not change a byte or a check: small arrays cut from a per-thread block
(memory.aligned_bytes), fastcopy's warnings collected per thread (errors.start_collecting) instead of a
catch_warnings per program, and a small copy on new tensors run from its plan's byte views (npkernels.copy_bytes)
instead of typed views of both memories."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy import config
from fastcopy.dma import kernels as K
from fastcopy.errors import FastCopyWarning, collecting, start_collecting, stop_collecting, warn
from fastcopy.memory import GlobalTensor, Memory, aligned_bytes
from fastcopy.products import Phys

from case_text import compute_case


# ------------------------------------------------------------------------------------- small arrays from a block
def _check_disjoint(arrays) -> None:
    spans = sorted((h, h + a.size) for a, h in arrays if a.size)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 <= b0, "two arrays share bytes"


def test_small_arrays_are_disjoint_on_cache_lines_and_their_addresses_are_right():
    sizes = [1, 2, 63, 64, 65, 1000, config.ARENA_PIECE, config.ARENA_PIECE + 1, 7, 4096, 0, 3] * 40
    got = []
    for n in sizes:
        a, host = aligned_bytes(n)
        assert a.dtype == np.uint8 and a.ndim == 1 and a.size == n and a.flags.writeable and a.flags.c_contiguous
        if n:
            assert host == a.ctypes.data and host % 64 == 0
        got.append((a, host))
    _check_disjoint(got)
    for k, (a, _) in enumerate(got):  # each keeps its own bytes (blocks replaced meanwhile stay alive)
        a.fill(k % 251)
    for k, (a, _) in enumerate(got):
        assert (a == k % 251).all()
    a, _ = aligned_bytes(100, offset=16)  # (an offset: not from the block)
    assert a.ctypes.data % 64 == 16


def test_a_piece_larger_than_a_block_is_whole(monkeypatch):
    """The tunables set so that a piece may exceed a block (config.ARENA_PIECE > config.ARENA_BYTES): an array
    asked for is still all its bytes, on a cache line, apart from the others (a block made for it is its size)."""
    monkeypatch.setattr(config, "ARENA_BYTES", 1024)
    monkeypatch.setattr(config, "ARENA_PIECE", 8192)
    got = []
    for n in (100, 3000, 1024, 1025, 8192, 50, 8192):
        a, host = aligned_bytes(n)
        assert a.size == n and host == a.ctypes.data and host % 64 == 0
        got.append((a, host))
    _check_disjoint(got)


def test_memories_over_small_arrays_do_not_alias():
    (a, ha), (b, hb) = aligned_bytes(64), aligned_bytes(64)
    ma, mb = Memory(a, Phys.GM, host=ha), Memory(b, Phys.GM, host=hb)
    assert not ma.shares(mb) and not mb.shares(ma) and ma.shares(ma)
    assert not np.may_share_memory(a, b)


def test_threads_cut_small_arrays_from_their_own_blocks():
    out, lock = [], threading.Lock()

    def work():
        mine = [aligned_bytes(n) for n in range(1, 3000, 7)]
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check_disjoint(out)


# --------------------------------------------------------------------------------------- collected warnings
def test_collected_warnings_are_not_issued_and_come_back_in_order():
    got = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = start_collecting(got)
        try:
            warn("one")
            warn("two", FastCopyWarning)
        finally:
            stop_collecting(before)
        warn("three")
    assert got == [(FastCopyWarning, "one"), (FastCopyWarning, "two")]
    assert [str(w.message) for w in seen] == ["three"]


def test_a_collection_inside_a_collection_takes_its_own_warnings_not_a_catch_warnings():
    """fastcopy explain records the warnings of one call inside a running program with a collection of its own:
    what it collects is its own. A catch_warnings inside a collection sees none of fastcopy's warnings (it swaps
    the filters of every thread: it could not tell whose they are; tests/test_warnings_threads.py)."""
    got = []
    before = start_collecting(got)
    try:
        with collecting() as inner, warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            warn("inner")
        warn("outer")
    finally:
        stop_collecting(before)
    assert inner == [(FastCopyWarning, "inner")] and list(seen) == []
    assert got == [(FastCopyWarning, "outer")]


def test_collections_nest_and_belong_to_their_thread():
    outer, inner, other = [], [], []
    b1 = start_collecting(outer)
    try:
        b2 = start_collecting(inner)
        warn("in")
        stop_collecting(b2)
        warn("out")

        def elsewhere():
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                warn("thread")
            other.extend(str(w.message) for w in seen)

        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    finally:
        stop_collecting(b1)
    assert inner == [(FastCopyWarning, "in")] and outer == [(FastCopyWarning, "out")] and other == ["thread"]


def _two_copies(count: int):
    """The program of a case copying 64 halves GM -> UB (``count`` of them: 40 warns, rounded down) and back."""
    from fastcopy.golden import case_from_dict

    return case_from_dict({
        "name": "w", "product": "ATLAS_A2", "outputs": ["y"],
        "buffers": {"x": {"dtype": "half", "shape": [64], "init": {"kind": "arange"}},
                    "u": {"position": "VECIN", "dtype": "half", "count": 64},
                    "y": {"dtype": "half", "shape": [64]}},
        "ops": [{"api": "DataCopy", "dst": "u", "src": "x", "params": {"count": count}},
                {"api": "DataCopy", "dst": "y", "src": "u", "params": {"count": 64}}]}, "w.toml").point(0)


def test_an_ops_warnings_go_to_its_result_whatever_the_callers_filters():
    """As with the capture of before (an "always" filter for FastCopyWarnings): a filter that turns them into
    errors, or ignores them, changes nothing inside a program; the op's warnings are its result's."""
    from fastcopy.golden import run_program

    prog = _two_copies(40)
    for action in ("error", "ignore", "always"):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter(action, FastCopyWarning)
            result = run_program(prog, reuse=True)
        assert list(result.warnings) == [0] and "rounded down" in result.warnings[0][0], action
        assert not [w for w in seen if issubclass(w.category, FastCopyWarning)], action


def test_a_warning_issued_from_on_op_keeps_the_users_line_and_is_issued_again_after_each_program():
    """on_op runs between ops (user code, as fastcopy check and explain use it): a FastCopyWarning it issues
    belongs to no op and, as with the capture of before, is issued again after the program at the line that
    issued it (not at run_program's caller), once per program whatever the filter's registry."""
    from fastcopy.golden import run_program

    prog = _two_copies(64)

    def on_op(op, tensors):
        warn(f"before op {op.index}")  # (the line the warnings must name)

    line = on_op.__code__.co_firstlineno + 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_program(prog, on_op=on_op)
    assert result.warnings == {}
    assert [(str(w.message), w.filename, w.lineno) for w in seen] == [
        (f"before op {k}", __file__, line) for k in (0, 1)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for _ in range(3):
            run_program(prog, on_op=on_op)
    assert len(seen) == 6


# ----------------------------------------------------------------------------------- byte views of new tensors
@settings(max_examples=150, deadline=None)
@given(bc=st.integers(1, 12), bl=st.integers(1, 6), sgap=st.integers(0, 5), dgap=st.integers(0, 4),
       dt=st.sampled_from([np.float16, np.float32, np.int8, np.uint64]), goff=st.integers(0, 40),
       loff=st.integers(0, 3), back=st.integers(0, 3))
def test_new_tensors_copy_what_the_typed_views_copy(bc, bl, sgap, dgap, dt, goff, loff, back):
    """GM -> UB with gaps on both sides (plane marks with gaps), then UB -> GM of a count and of
    DataCopyParams, each call on new tensors, on the numpy kernels: the byte-view path against the typed-view
    path of before (copy_in_numpy False), byte for byte, the bytes around every destination and every plane."""
    es = np.dtype(dt).itemsize
    n_src = (bc * (bl + sgap)) * 32 // es + 64
    src = (np.arange((n_src + goff) * es) * 37 % 251).astype(np.uint8).view(dt)

    def run(views: bool):
        K.use("numpy")
        saved = K.copy_in_numpy
        if not views:
            K.copy_in_numpy = lambda nbytes: False
        try:
            pipe = fc.TPipe(product="ATLAS_A2")
            x = GlobalTensor(src)[goff]
            pad = pipe.alloc("VECIN", dt, 32 // es * (loff + 1))  # (the local tensor is not at address 0)
            u = pipe.alloc("VECIN", dt, (bc * (bl + dgap)) * 32 // es)
            fc.DataCopy(u, x, fc.DataCopyParams(bc, bl, sgap, dgap))
            out = np.full(u.size + 64, 7, dt)
            y = GlobalTensor(out, defined=False)[back]
            fc.DataCopy(y, u, bl * 32 // es)
            out2 = np.full(u.size + 64, 9, dt)
            y2 = GlobalTensor(out2, defined=False)
            fc.DataCopy(y2, u, fc.DataCopyParams(bc, bl, dgap, 0))
            ub = pipe.buffer(Phys.UB)
            return (ub.data.copy(), ub.plane_bytes(0, ub.size).copy(), out.view(np.uint8).copy(),
                    y.memory.plane_bytes(0, y.memory.size).copy(), out2.view(np.uint8).copy(),
                    y2.memory.plane_bytes(0, y2.memory.size).copy(), pad.defined().copy())
        finally:
            K.copy_in_numpy = saved
            K.use("auto")

    for a, b in zip(run(True), run(False)):
        assert np.array_equal(a, b)


def test_the_numpy_rule_of_the_stand_in_decides_the_byte_views():
    """copy_in_numpy follows the stand-in's rule: numpy while the calls are few and small, numba after (the
    stand-in loads it): a large call never takes the numpy byte views."""
    K.use("auto")
    try:
        assert K.copy_in_numpy(64)
        assert K.copy_in_numpy(config.SMALL_BYTES)
        K.use("numpy")
        assert K.copy_in_numpy(config.SMALL_BYTES + 1)  # (pinned: every call)
        K.use("numba")
        assert not K.copy_in_numpy(64)
    finally:
        K.use("auto")


# ------------------------------------------------------------------------------- the point template's specs
def test_points_with_the_same_hole_values_share_specs_and_are_the_plain_compile():
    """The point template keeps the BufferSpec / OpSpec it made per hole values (ints only): every point of the
    bench sweep, in two orders (the second from the kept specs), is the point compiled from scratch, and two
    points with equal local sizes share the local buffer's spec."""
    import pathlib

    from test_case_template import _same_points

    from fastcopy.golden import load_case

    case = load_case(pathlib.Path(__file__).resolve().parents[1] / "bench" / "cases" / "datacopy_sweep_1000.toml")
    _same_points(case, range(0, 1000, 7))
    _same_points(case, reversed(range(1000)))
    pairs = {}  # (points with equal bc * bl: equal local sizes and counts)
    for i in range(200):
        p = case.point(i)
        pairs.setdefault(p.buffers[1].shape, []).append(p)
    same = next(ps for ps in pairs.values() if len(ps) > 1)
    assert same[0].buffers[1] is same[1].buffers[1] and same[0].ops[1] is same[1].ops[1]
    assert same[0].ops[0] is not same[1].ops[0]  # (their DataCopyParams differ)


# ------------------------------------------------------------------------------------------- the current core
CURRENT = '''
import fastcopy as fc
from fastcopy.memory import _current, current_pipe

SEEN = []


def step(u):
    SEEN.append(_current.get()[-1:] == (u.pipe,))  # (made current: with pipe:)
    fc.SetPadValue(3)  # (no pipe=: the current core's register)
    SEEN.append(current_pipe().state.get("padreg", "unset"))
'''

CURRENT_CASE = compute_case("cur", 256, """
[[ops]]
api = "SetPadValue"
dtype = "half"
params = {value = 5}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {count = 256}
""")


@pytest.mark.parametrize("reuse", [False, True])
def test_a_compute_step_and_on_op_see_the_programs_core_and_api_ops_get_it(tmp_path, reuse):
    """API ops take their core from their tensors or as pipe= (the engine no longer makes it current around
    them); a compute step and on_op still run with the program's core current, and nothing stays current
    after the program."""
    from fastcopy.golden import load_case, run_program
    from fastcopy.golden.engine import _MODULES
    from fastcopy.memory import _current

    (tmp_path / "step.py").write_text(CURRENT)
    (tmp_path / "c.toml").write_text(CURRENT_CASE)
    prog = load_case(tmp_path / "c.toml", allow_python=True).point(0)
    seen_on_op = []

    def on_op(op, tensors):
        seen_on_op.append(_current.get()[-1:] == (tensors["u"].pipe,))

    before = _current.get()
    result = run_program(prog, on_op=on_op, reuse=reuse)
    assert _current.get() == before
    step = next(m for m in _MODULES.values() if m.__file__ == str(tmp_path / "step.py"))
    assert step.SEEN[0] is True and step.SEEN[1] != "unset"
    assert seen_on_op == [True] * 4
    assert result.outputs["yGm"][1].all()
