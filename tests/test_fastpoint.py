"""A sweep point run straight through (fastcopy.golden.fastpoint): the runner written for a case's program
structure gives, at every point, exactly the Result the engine's general way gives (every array byte for byte,
placement, warnings, notes, counts), and a point on which it fails raises the engine's own error with the
engine's own warnings; programs it does not handle are run by the engine."""

from __future__ import annotations

import dataclasses
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import fastcopy
from fastcopy import config
from fastcopy.golden import CaseRunError, load_case, load_case_text, run_program
from fastcopy.golden import fastpoint
from fastcopy.golden.engine import run_general
from fastcopy.golden.work import small_calls_in_numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: DataCopyParams and count forms with values that warn (a count not a whole number of blocks), fail in the
#: planner (blockCount past 4095, a read past the source), move nothing (count 0, blockCount 0: no-ops on A2),
#: inputs of every prefix kind, an input buffer an op changes (its input kept as a copy) and an on-chip output
SWEEP = """\
name = "runner"
product = "ATLAS_A2"
seed = 7
outputs = ["yGm", "zLocal", "wGm"]

[sweep]
bc = [1, 3, 0, 5000, 2]
bl = [1, 2, 4]
extra = [0, 5, 24]

[buffers.xGm]
dtype = "half"
shape = ["=bc * bl * 16 + 16"]
init = {kind = "uniform", low = -2.0, high = 2.0}

[buffers.wGm]
dtype = "int32"
shape = ["=bl * 8 + 16"]
init = {kind = "integers", low = -100, high = 100}

[buffers.nGm]
dtype = "float"
shape = ["=bl * 8"]
init = {kind = "normal", mean = 0.0, std = 3.0}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = "=bc * bl * 16 + 16"

[buffers.zLocal]
position = "VECOUT"
dtype = "float"
count = "=bl * 8"

[buffers.wLocal]
position = "VECCALC"
dtype = "int32"
count = 64

[buffers.yGm]
dtype = "half"
shape = ["=bc * bl * 16 + 16"]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params.DataCopyParams = {blockCount = "=bc", blockLen = "=bl", srcGap = 0, dstGap = 0}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {count = "=bc * bl * 16 + extra"}

[[ops]]
api = "DataCopy"
dst = "zLocal"
src = "nGm"
params = {count = "=bl * 8"}

[[ops]]
api = "DataCopy"
dst = "wLocal"
src = "wGm"
params.DataCopyParams = {blockCount = 2, blockLen = 1, srcGap = 1, dstGap = 0}

[[ops]]
api = "DataCopy"
dst = "wGm"
src = "wLocal"
params = {count = 16}
"""


def _runner_case(text=SWEEP):
    return load_case_text(text, "runner.toml", max_bytes=1 << 20)


def _outcome(fn, prog):
    """(Result or (error type, message), the warnings issued) of ``fn(prog)``."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            got = fn(prog)
        except CaseRunError as exc:
            got = (type(exc.cause), str(exc))
    return got, [(w.category, str(w.message)) for w in seen]


def _same_results(a, b) -> None:
    """Two Results are the same, array by array (dtype, shape, bytes) and field by field."""
    assert a.program is b.program
    for x, y in ((a.inputs, b.inputs), (a.outputs, b.outputs)):
        assert list(x) == list(y)
    for name, arr in a.inputs.items():
        _same_array(arr, b.inputs[name])
        assert arr is not b.inputs[name]
    for name, (data, mask) in a.outputs.items():
        _same_array(data, b.outputs[name][0])
        _same_array(mask, b.outputs[name][1])
    assert list(a.placement.items()) == list(b.placement.items())
    assert a.warnings == b.warnings and a.notes == b.notes and a.empty == b.empty
    assert list(a.defined.items()) == list(b.defined.items())


def _same_array(x, y) -> None:
    assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape
    assert x.flags.c_contiguous and y.flags.c_contiguous
    assert x.tobytes() == y.tobytes()


def _compare_every_point(case, monkeypatch, first=1) -> int:
    """Run every point of ``case`` with a runner made at point ``first`` and by the general way; the number of
    points the runner ran itself."""
    monkeypatch.setattr(config, "RUNNER_POINTS", first)
    ran = 0
    with small_calls_in_numpy():
        for i in range(len(case)):
            prog = case.point(i)
            runs = prog.__dict__.get("_runs")
            runner = runs.runner if runs is not None else None
            fast, fast_warns = _outcome(lambda p: run_program(p, reuse=True), prog)
            general, general_warns = _outcome(run_general, prog)
            assert fast_warns == general_warns, i
            if isinstance(general, tuple):
                assert fast == general, i
                continue
            _same_results(general, fast)
            if runner and fastpoint._try(runner, prog) is not None:
                ran += 1
    return ran


def test_the_runner_gives_the_engines_result_at_every_point(monkeypatch):
    case = _runner_case()
    ran = _compare_every_point(case, monkeypatch)
    assert callable(case._holes.runs.runner)
    # (the points that fail in the planner, 5000 bursts, are run again by the engine)
    assert 0 < ran < len(case)


def test_the_runner_gives_the_engines_errors_and_warnings(monkeypatch):
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    kinds = set()
    with small_calls_in_numpy():
        run_program(case.point(0), reuse=True)
        runner = case._holes.runs.runner
        assert callable(runner)
        for i in range(len(case)):
            prog = case.point(i)
            fast = _outcome(lambda p: run_program(p, reuse=True), prog)
            general = _outcome(lambda p: run_program(dataclasses.replace(p), reuse=True), prog)
            if isinstance(general[0], tuple):
                kinds.add("error")
                assert fast == general
                assert fastpoint._try(runner, prog) is None
            else:
                kinds.add("warned" if general[0].warnings else "quiet")
                _same_results(general[0], fast[0]) if general[0].program is fast[0].program else None
                assert fast[1] == general[1]
                assert fast[0].warnings == general[0].warnings
    assert kinds == {"error", "warned", "quiet"}


def test_the_bench_sweep_runs_straight_through(monkeypatch):
    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    ran = _compare_every_point(case, monkeypatch, first=config.RUNNER_POINTS)
    assert ran == len(case) - config.RUNNER_POINTS  # (made at that point, run by it from the next)


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_every_example_as_before(path, monkeypatch):
    case = load_case(path, allow_python=True)
    _compare_every_point(case, monkeypatch)


def test_no_runner_before_runner_points(monkeypatch):
    case = _runner_case()
    with small_calls_in_numpy():
        for i in range(config.RUNNER_POINTS - 1):
            run_program(case.point(i % 2), reuse=True)
        assert case._holes.runs.runner is None
        run_program(case.point(1), reuse=True)
    assert callable(case._holes.runs.runner)


def _failing_points(case) -> list:
    """The points of ``case`` whose run raises (the 5000-burst ones: a planner error)."""
    return [i for i in range(len(case)) if case.point(i).values["bc"] == 5000]


def test_a_point_that_fails_where_the_runner_is_made_leaves_it_to_the_next(monkeypatch):
    """The point at which the runner would be made raises (its error is the point's): the next point makes it."""
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 2)
    monkeypatch.setattr(config, "RUNNER_TRIES", 3)
    bad, good = _failing_points(case), 1
    with small_calls_in_numpy():
        run_program(case.point(good), reuse=True)
        for k in range(2):  # (two failed tries of three)
            with pytest.raises(CaseRunError, match="blockCount=5000"):
                run_program(case.point(bad[k]), reuse=True)
            assert case._holes.runs.runner is None
        expected = run_general(case.point(good))
        got = run_program(case.point(good), reuse=True)
    assert callable(case._holes.runs.runner)
    _same_results(expected, dataclasses.replace(got, program=expected.program))


def test_points_that_keep_failing_leave_the_case_without_a_runner_after_runner_tries(monkeypatch):
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    monkeypatch.setattr(config, "RUNNER_TRIES", 3)
    bad = _failing_points(case)
    with small_calls_in_numpy():
        for k in range(3):
            assert case._holes.runs.runner is None
            with pytest.raises(CaseRunError, match="blockCount=5000"):
                run_program(case.point(bad[k]), reuse=True)
        assert case._holes.runs.runner is False
        run_program(case.point(1), reuse=True)
    assert case._holes.runs.runner is False


def test_a_runner_that_differs_is_not_kept(monkeypatch):
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)

    def wrong(prog, fresh):
        real = fastpoint._make(prog, fresh)

        def run(p):
            result = real(p)
            data, mask = result.outputs["yGm"]
            data = data.copy()
            data.view(np.uint8)[0] ^= 1
            result.outputs["yGm"] = (data, mask)
            return result
        return run

    monkeypatch.setattr(fastpoint, "make", wrong)
    with small_calls_in_numpy():
        run_program(case.point(0), reuse=True)
    assert case._holes.runs.runner is False


def test_a_wrapped_datacopy_is_called(monkeypatch):
    """fastcopy explain wraps the public functions: while DataCopy is not fastcopy's own, the engine calls it."""
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    with small_calls_in_numpy():
        expected = run_program(case.point(1), reuse=True)
        assert callable(case._holes.runs.runner)
        calls = []
        real = fastcopy.DataCopy

        def wrapped(*args, **kwargs):
            calls.append(args[2])
            return real(*args, **kwargs)

        monkeypatch.setattr(fastcopy, "DataCopy", wrapped)
        got = run_program(case.point(1), reuse=True)
    assert len(calls) == 5
    _same_results(expected, dataclasses.replace(got, program=expected.program))


def _count_calls(monkeypatch, module, name: str) -> list:
    """``module.name`` replaced by a wrapper that calls it and notes each call: the list of notes."""
    calls, real = [], getattr(module, name)

    def wrapped(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


@pytest.mark.parametrize("module,name", [("fastcopy.api", "execute"), ("fastcopy.ops.datacopy", "plan_data_copy")])
def test_what_datacopy_calls_replaced_after_the_runner_is_made_is_called(monkeypatch, module, name):
    """The runner calls DataCopy's planner and executor its own way: one of them replaced after the runner
    exists (a test's monkeypatch, a mock), the point is the engine's, through fastcopy.DataCopy, which calls it."""
    import importlib

    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    mod = importlib.import_module(module)
    with small_calls_in_numpy():
        expected = run_program(case.point(1), reuse=True)
        runner = case._holes.runs.runner
        assert callable(runner) and fastpoint._try(runner, case.point(1)) is not None
        calls = _count_calls(monkeypatch, mod, name)
        assert fastpoint._try(runner, case.point(1)) is None  # (it declines before doing anything)
        got = run_program(case.point(1), reuse=True)
    assert len(calls) == 5 and case._holes.runs.runner is runner
    _same_results(expected, dataclasses.replace(got, program=expected.program))


@pytest.mark.parametrize("name", ["gm_input", "gm_output", "_pipe", "collect_output", "start_collecting"])
def test_an_engine_helper_replaced_after_the_runner_is_made_is_the_runners_too(monkeypatch, name):
    """The runner runs in the engine's namespace: an engine helper replaced after it was made is called by the
    runner itself (as by the engine), at every point."""
    from fastcopy.golden import engine

    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    with small_calls_in_numpy():
        expected = run_program(case.point(1), reuse=True)
        runner = case._holes.runs.runner
        assert callable(runner)
        calls = _count_calls(monkeypatch, engine, name)
        got = fastpoint._try(runner, case.point(1))
    assert got is not None and calls
    _same_results(expected, dataclasses.replace(got, program=expected.program))


def test_only_template_programs_and_reused_pipes(monkeypatch):
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    calls = []
    with small_calls_in_numpy():
        run_program(case.point(0), reuse=True)
        runner = case._holes.runs.runner

        def counted(prog):
            calls.append(prog)
            return runner(prog)

        case._holes.runs.runner = counted
        prog = case.point(1)
        run_program(prog)  # (a new pipe: the engine)
        run_program(prog, reuse=True, on_op=lambda op, tensors: None)
        run_program(dataclasses.replace(prog), reuse=True)
        assert calls == []
        run_program(prog, reuse=True)
        assert calls == [prog]


def test_a_pickled_program_has_no_runner(monkeypatch):
    case = _runner_case()
    prog = case.point(1)
    assert isinstance(prog.__dict__["_runs"], fastpoint.Runs)
    copy = pickle.loads(pickle.dumps(prog))
    assert copy == prog and copy.__dict__["_runs"] is None
    with small_calls_in_numpy():
        _same_results(run_general(prog), dataclasses.replace(run_program(copy, reuse=True), program=prog))


def test_structures_without_a_runner():
    """Loops, offsets, compute steps, other APIs, local inputs and addresses: no runner (the engine runs them)."""
    base = SWEEP.replace('outputs = ["yGm", "zLocal", "wGm"]', 'outputs = ["yGm"]')
    for old, new in [('dst = "yGm"', 'dst = "yGm[16]"'),
                     ('count = 64\n', 'count = 64\naddr = 1024\n'),
                     ('count = 64\n', 'count = 64\ninit = {kind = "zeros"}\n'),
                     ('api = "DataCopy"\ndst = "wGm"', 'api = "DataCopyPad"\ndst = "wGm"')]:
        text = base.replace(old, new, 1)
        assert text != base
        try:
            case = _runner_case(text)
        except Exception:  # noqa: BLE001 - a case that does not compile at all has no runner either
            continue
        if case._holes is None:
            continue
        prog = case.point(1)
        assert fastpoint.make(prog) is None, (old, new)


@pytest.mark.parametrize("name", ["DataCopyParams", "Nd2NzParams", "DataCopyExtParams"])
def test_a_struct_key_is_the_structs_own(name):
    """The runner's key of a struct parameter (without the struct, when the struct would keep the values as they
    are) is ``make_struct(...).key()``, or that call's error, for values at and past every field's bounds."""
    from fastcopy.golden.schema import make_struct, struct_class

    cls = struct_class(name)
    space = {"make_struct": make_struct}

    def const(value, hint):
        key = f"{hint}{len(space)}"
        space[key] = value
        return key

    expr = eval(compile("lambda v: " + fastpoint._struct_key(name, "v", const), "<key>", "eval"), space)
    names = [f.name for f in cls.FIELDS]
    cases = []
    for f, lo, hi in cls._plain_fields():
        for v in ([lo - 1, lo, hi, hi + 1] if lo is not None else []) + [True, np.int64(3), 2.0, None, "1", 1]:
            cases.append({g: (v if g == f.name else 1) for g in names})
    cases += [dict(zip(names[::-1], [1] * len(names))), {n: 1 for n in names[:-1]}, {}, {**{n: 1 for n in names},
                                                                                       "extra": 1}]
    for fields in cases:
        try:
            want = make_struct(name, fields).key()
        except Exception as exc:  # noqa: BLE001
            want = (type(exc), str(exc))
        try:
            got = expr(fields)
        except Exception as exc:  # noqa: BLE001
            got = (type(exc), str(exc))
        assert got == want and [type(x) for x in got] == [type(x) for x in want], fields


def test_plans_of_new_parameters_are_planned_without_the_cache(monkeypatch):
    """An op whose parameters were new at every point the template made plans without the plan caches (the
    runner's ``cached=False``): the same plan or error as the cached planner, and nothing kept."""
    from test_plan_builders import same

    from fastcopy.ops import datacopy

    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    with small_calls_in_numpy():
        for i in range(64):
            run_program(case.point(i), reuse=True)
    assert case._holes.runs.fresh == {0}  # (the DataCopyParams differ at every point; the counts repeat)
    assert "cached=fresh" in case._holes.runs.runner.source.replace(" ", "")
    other = _runner_case()
    for i in range(40):
        other.point(i)
    assert 0 not in other._holes.runs.fresh  # (blockCount and blockLen repeat across `extra`)

    pipe = fastcopy.TPipe(product="ATLAS_A2")
    x = fastcopy.GlobalTensor(np.zeros(4096, np.float16))
    u = pipe.alloc("VECIN", np.float16, 2048)
    for arg, key in [(64, None), (100, None), (0, None), (None, (3, 2, 1, 0)), (None, (4095, 1, 0, 0)),
                     (None, (0, 1, 0, 0)), (None, (5000, 1, 0, 0)), (None, (2, 65535, 0, 0))]:
        for dst, src in ((u, x), (x, u)):
            before = (datacopy._plan_params.cache_info().currsize, datacopy._plan_count.cache_info().currsize)
            try:
                got = datacopy.plan_data_copy(dst, src, arg, key, cached=False)
            except Exception as exc:  # noqa: BLE001
                got = (type(exc), str(exc))
            assert (datacopy._plan_params.cache_info().currsize,
                    datacopy._plan_count.cache_info().currsize) == before
            try:
                want = datacopy.plan_data_copy(dst, src, arg, key)
            except Exception as exc:  # noqa: BLE001
                want = (type(exc), str(exc))
            assert same(got, want), (arg, key)


def test_a_fresh_op_uses_the_cache_once_its_plans_repeat(monkeypatch):
    from fastcopy.ops import datacopy

    f = fastpoint._Fresh()
    a, b = fastcopy.GlobalTensor(np.zeros(64, np.float16)), fastcopy.GlobalTensor(np.zeros(32, np.float16))
    n = fastpoint._FRESH_KEYS
    assert [f.cached(k, a, b) for k in range(n + 1)] == [False] * (n + 1)
    assert not f.cached(0, a, b)  # (further back than it looks: new again)
    assert not f.cached(0, b, a) and f.cached(0, a, b) and f.cached(1, a, b) and f.cached(-1, b, b)

    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    with small_calls_in_numpy():
        for i in range(64):
            run_program(case.point(i), reuse=True)
        datacopy._plan_params.cache_clear()
        for i in range(64, 128):
            run_program(case.point(i), reuse=True)
        assert datacopy._plan_params.cache_info().currsize == 0
        for i in range(64, 128):  # (the same points again: their plans repeat, and are kept from now on)
            run_program(case.point(i), reuse=True)
        assert datacopy._plan_params.cache_info().currsize >= 63


def test_on_chip_outputs_outlive_the_next_points(monkeypatch):
    """A batch runs a group of points, then writes them: an on-chip output the runner returns (zLocal) is a copy,
    not a view of the thread's pipe, which the next point restarts and fills again."""
    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    kept = []
    with small_calls_in_numpy():
        for i in range(len(case)):
            prog = case.point(i)
            try:
                kept.append((prog, run_program(prog, reuse=True)))
            except CaseRunError:  # (the 5000-burst points fail in the planner)
                continue
        runner = case._holes.runs.runner
        assert callable(runner) and len(kept) > 10
        assert all(fastpoint._try(runner, prog) is not None for prog, _ in kept[1:])  # (the runner ran them)
        for prog, result in kept:  # (the engine on a new pipe of its own, after every point has run)
            assert "zLocal" in result.outputs
            _same_results(run_program(prog), result)


def test_threads_running_one_cases_points_at_once(monkeypatch):
    """Two threads run the points of one case at once (each on its own pipe), the runner made while both run:
    every point is the engine's, and the runner is kept."""
    from threads_util import in_two_threads

    case = _runner_case()
    monkeypatch.setattr(config, "RUNNER_POINTS", 4)
    got, errors = {}, []

    def worker(k):
        indices = range(k, len(case), 2)
        try:
            with small_calls_in_numpy():
                for _ in range(10):
                    for i in indices:
                        prog = case.point(i)
                        try:  # (no catch_warnings here: it swaps the process's filters under the other thread)
                            result = run_program(prog, reuse=True)
                        except CaseRunError as exc:
                            result = (type(exc.cause), str(exc))
                        got.setdefault(i, []).append((prog, result))
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            errors.append(exc)

    in_two_threads(worker)  # (the threads take turns inside points, not between them)
    assert not errors, errors
    assert callable(case._holes.runs.runner)
    with small_calls_in_numpy():
        for i, runs in sorted(got.items()):
            for prog, fast in runs:
                general, _ = _outcome(run_program, prog)  # (a new pipe of its own)
                if isinstance(general, tuple):
                    assert fast == general, i
                else:
                    _same_results(general, fast)
