"""The batch's cheaper paths give what the plain ones give: a chunk run stage by stage (compile, run, write in
groups: fastcopy.golden.work) has the outcomes and files of one point at a time; a struct made from positional
values (ParamStruct's fast constructor) is the one made from keywords; one warnings capture per program (the
engine) attributes each op's warnings to it and issues the others again."""

from __future__ import annotations

import os
import pathlib
import warnings

import numpy as np
import pytest

import fastcopy
from fastcopy import config
from fastcopy.golden import CaseError, CaseRunError, load_case, run_program, write_result
from fastcopy.golden import work
from fastcopy.params import ParamStruct

from case_text import compute_case

# 6 points, p = 0..5 (arithmetic picks them out: 1 - min(abs(p - k), 1) is 1 at p = k, else 0): point 1 warns (a
# count that rounds down, part of the output undefined), point 2 fails when compiled (a negative count), point 3
# fails when it runs (blockCount 5000 is outside [1, 4095]), points 4 and 5 have 80 KB inputs (more than 64 KiB of
# buffers: written as soon as they have run when STAGE_BYTES is 64 KiB)
SWEEP = """
name = "stages"
product = "ATLAS_A2"
seed = 5
outputs = ["yGm"]

[sweep]
p = [0, 1, 2, 3, 4, 5]

[buffers.xGm]
dtype = "half"
shape = ["=64 + 40000 * min(max(p - 3, 0), 1)"]
init = {kind = "uniform", low = -1.0, high = 1.0}

[buffers.u]
position = "VECIN"
dtype = "half"
count = "=32 - 64 * (1 - min(abs(p - 2), 1))"

[buffers.yGm]
dtype = "half"
shape = [32]

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params.DataCopyParams = {blockCount = "=1 + 4999 * (1 - min(abs(p - 3), 1))", blockLen = 2, srcGap = "=p", dstGap = 0}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {count = "=32 - 8 * (1 - min(abs(p - 1), 1))"}
"""


def _files(folder: pathlib.Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_at_a_time(case, index: int, directory: str):
    """(ok, error text, warnings, label) of a point run the plain way: compiled, run, checked, written."""
    label = f"{case.name}#{index}"
    try:
        prog = case.point(index)
        label = prog.label
        result = run_program(prog)
        warns = result.all_warnings()
        result.check()
        write_result(result, directory)
        return True, "", warns, label
    except (CaseError, CaseRunError) as exc:
        return False, str(exc), [], label


def _sweep_case(tmp_path):
    path = tmp_path / "stages.toml"
    path.write_text(SWEEP)
    return load_case(path)


@pytest.mark.parametrize("group,stage_bytes", [(1, 1 << 16), (4, 1 << 16), (32, 1 << 16), (32, 0), (32, 1 << 40)])
def test_a_chunk_in_stages_gives_the_outcomes_and_files_of_one_point_at_a_time(tmp_path, monkeypatch, group,
                                                                               stage_bytes):
    case = _sweep_case(tmp_path)
    assert len(case) == 6
    want = [_one_at_a_time(case, i, str(tmp_path / "plain" / f"{i:04d}")) for i in range(len(case))]
    assert [w[0] for w in want] == [True, True, False, False, True, True]  # (the sweep fails where meant to)
    monkeypatch.setattr(config, "STAGE_POINTS", group)
    monkeypatch.setattr(config, "STAGE_BYTES", stage_bytes)
    got = work.run_chunk(case, 3, range(len(case)), str(tmp_path / "staged"))
    assert [o.index for o in got] == list(range(6)) and all(o.case == 3 for o in got)
    assert [(o.ok, o.error, o.warnings, o.label) for o in got] == want
    assert [o.directory for o in got] == [str(tmp_path / "staged" / f"{i:04d}") for i in range(6)]
    for i, (ok, *_rest) in enumerate(want):
        plain, staged = tmp_path / "plain" / f"{i:04d}", tmp_path / "staged" / f"{i:04d}"
        assert staged.exists() == ok == plain.exists()
        if ok:
            assert _files(staged) == _files(plain)


@pytest.mark.parametrize("stage_bytes,order", [
    (1 << 40, "C0 C1 C3 C4 C5 R0 R1 R4 R5 W0 W1 W4 W5"),  # (point 2 fails compiled, point 3 run)
    (0, "C0 C1 C3 C4 C5 R0 W0 R1 W1 R4 W4 R5 W5"),  # every result too large to keep: written at once
    (1 << 16, "C0 C1 C3 C4 C5 R0 R1 R4 W4 R5 W5 W0 W1"),  # only points 4 and 5 are large
])
def test_stages_compile_run_write_and_large_results_are_written_at_once(tmp_path, monkeypatch, stage_bytes,
                                                                        order):
    case = _sweep_case(tmp_path)
    events = []
    point, run, write = type(case).point, work.run_program, work.write_folder

    def logged(tag, func, key):
        def f(*args, **kwargs):
            out = func(*args, **kwargs)
            events.append(f"{tag}{key(args, out)}")
            return out
        return f

    monkeypatch.setattr(type(case), "point", logged("C", point, lambda a, out: a[1]))
    monkeypatch.setattr(work, "run_program", logged("R", run, lambda a, out: a[0].index))
    monkeypatch.setattr(work, "write_folder", logged("W", write, lambda a, out: int(a[0][-4:])))
    monkeypatch.setattr(config, "STAGE_POINTS", 32)
    monkeypatch.setattr(config, "STAGE_BYTES", stage_bytes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = work.run_chunk(case, 0, range(6), str(tmp_path / "out"))
    assert [o.ok for o in got] == [True, True, False, False, True, True]
    assert " ".join(events) == order  # (a point that raises logs no event at that stage)


def test_run_point_is_a_group_of_one(tmp_path):
    case = _sweep_case(tmp_path)
    for i in range(len(case)):
        o = work.run_point(case, i, str(tmp_path / "p" / str(i)), case_no=2)
        ok, error, warns, label = _one_at_a_time(case, i, str(tmp_path / "q" / str(i)))
        assert (o.ok, o.error, o.warnings, o.label, o.index, o.case) == (ok, error, warns, label, i, 2)


# ------------------------------------------------------------------------------------------------ structs
def _struct_classes() -> list:
    from importlib import import_module

    for name in ("enhanced", "outparams", "params", "registers"):  # (every module defining a struct)
        import_module(f"fastcopy.cube.{name}")

    out, todo = [], list(ParamStruct.__subclasses__())
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return sorted(set(out), key=lambda c: c.__name__)


def _outcome(make):
    try:
        s = make()
    except Exception as exc:  # noqa: BLE001 - the error is part of the outcome
        return type(exc), str(exc)
    return [(k, type(v), v) for k, v in s.as_dict().items()], s.key()


_VALUES = [0, 1, 7, -1, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32, -(2**31), -(2**63) - 1, 2**64,
           np.int64(5), np.uint8(200), np.int32(-3), True, False, np.bool_(True), 2.0, "3", None]


@pytest.mark.parametrize("cls", _struct_classes(), ids=lambda c: c.__name__)
def test_a_struct_from_positional_values_is_the_struct_from_keywords(cls):
    names = [f.name for f in cls.FIELDS]
    rows = [[]]  # defaults
    for k in range(len(names)):  # each field alone, then every field at once, with each value
        for v in _VALUES:
            rows.append([f.default for f in cls.FIELDS[:k]] + [v])
            rows.append([v] * len(names))
    for vals in rows:
        fast = _outcome(lambda: cls(*vals))
        plain = _outcome(lambda: cls(**dict(zip(names, vals))))
        assert fast == plain, (cls.__name__, vals)


def test_the_positional_path_still_refuses_too_many_values():
    with pytest.raises(fastcopy.ParamTypeError, match="takes at most 4 values"):
        fastcopy.DataCopyParams(1, 2, 3, 4, 5)


# ------------------------------------------------------------------------------------------------ warnings
# (a compute step's own warnings.warn calls are Python's, issued as they happen: the engine no longer swaps the
# process's filters around it; what fastcopy issues in it, errors.warn, is its op's: tests/test_warnings_threads.py)
COMPUTE = '''
import warnings
from fastcopy.errors import warn


def step(u):
    warnings.warn("a plain warning", UserWarning)
    warn("a fastcopy warning")
'''

CASE = compute_case("warns", 200, """
[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {count = 256}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {count = 40}
""")


def test_each_op_gets_its_own_warnings_and_the_others_are_issued_again(tmp_path):
    (tmp_path / "step.py").write_text(COMPUTE)
    (tmp_path / "w.toml").write_text(CASE)
    prog = load_case(tmp_path / "w.toml", allow_python=True).point(0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_program(prog)
    assert sorted(result.warnings) == [0, 1, 3]
    assert "rounded down" in result.warnings[0][0] and len(result.warnings[0]) == 1
    assert result.warnings[1] == ["a fastcopy warning"]
    assert "rounded down" in result.warnings[3][0] and "count=40" not in result.warnings[0][0]
    assert [str(w.message) for w in seen] == ["a plain warning"]  # (issued again to the caller, once)
    assert seen[0].category is UserWarning


def test_a_failed_op_takes_its_warnings_with_it_and_earlier_ones_are_issued_again(tmp_path):
    (tmp_path / "step.py").write_text(COMPUTE)
    text = CASE.replace("params = {count = 40}", "params.DataCopyParams = {blockCount = 5000, blockLen = 1}")
    (tmp_path / "w.toml").write_text(text)
    prog = load_case(tmp_path / "w.toml", allow_python=True).point(0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(CaseRunError, match="blockCount=5000"):
            run_program(prog)
    assert [str(w.message) for w in seen] == ["a plain warning"]



# ------------------------------------------------------------------------------------------------ manifests
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _manifest_is_its_text(result, folder: pathlib.Path) -> dict:
    from fastcopy.golden.files import manifest_text

    m = write_result(result, str(folder))
    assert (folder / "manifest.json").read_text(encoding="utf-8") == manifest_text(m)
    return m


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.stem)
def test_the_written_manifest_is_manifest_text_of_the_returned_one(tmp_path, path):
    """write_result joins lines it keeps per case; the file must be what manifest_text makes of the manifest."""
    case = load_case(path, allow_python=True)
    for i in sorted({0, len(case) - 1}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_program(case.point(i))
        _manifest_is_its_text(result, tmp_path / str(i))


def test_manifest_lines_kept_per_case_follow_seed_poison_and_notes(tmp_path):
    case = _sweep_case(tmp_path)
    seen = set()
    for seed, poison in ((5, 255), (6, 255), (5, 0), (5, 255)):
        text = SWEEP.replace("seed = 5", f"seed = {seed}\npoison = {poison}")
        (tmp_path / "s.toml").write_text(text)
        case = load_case(tmp_path / "s.toml")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in (0, 1):  # (point 1 has notes: the "warnings" line)
                m = _manifest_is_its_text(run_program(case.point(i)), tmp_path / f"{seed}-{poison}-{i}")
                assert (m["seed"], m["poison"]) == (seed, poison) and bool(m.get("warnings")) == (i == 1)
                seen.add((seed, poison, i))
    assert len(seen) == 6


# ------------------------------------------------------------------------------------------------ tensors
@pytest.mark.parametrize("dtype,shape,offset", [("half", (3, 5), 0), ("float", (7,), 16), ("int8_t", (2, 2, 3), 0),
                                                ("uint64_t", (1,), 0), ("bfloat16_t", (4, 0), 0)])
@pytest.mark.parametrize("defined", [False, True])
def test_a_fresh_global_tensor_is_the_one_over_its_array(dtype, shape, offset, defined):
    """GlobalTensor._fresh (the engine's output buffers) makes what GlobalTensor(array, defined) makes."""
    from fastcopy.memory import GlobalTensor, aligned_bytes

    dt = fastcopy.as_dtype(dtype)
    n = int(np.prod(shape)) * dt.itemsize
    data, host = aligned_bytes(n, offset)
    assert host == data.ctypes.data and (not n or (host - offset) % 64 == 0)  # (an empty one: numpy's address)
    data[...] = np.arange(n) % 251
    fresh = GlobalTensor._fresh(data, host, dt, shape, defined)
    plain = GlobalTensor(data.view(dt).reshape(shape), defined=defined)
    for t in (fresh, plain):
        assert t.memory.data is data or not n or np.shares_memory(t.memory.data, data)
    assert fresh._sig is plain._sig
    assert (fresh.shape, fresh.size, fresh.dtype, fresh.offset, fresh.position) == \
        (plain.shape, plain.size, plain.dtype, plain.offset, plain.position)
    fm, pm = fresh.memory, plain.memory
    assert (fm.host, fm.addr0, fm.size, fm.lazy, fm.tracked, fm.readonly, fm.phys, fm.poison) == \
        (pm.host, pm.addr0, pm.size, pm.lazy, pm.tracked, pm.readonly, pm.phys, pm.poison)
    assert np.array_equal(fresh.numpy(), plain.numpy()) and fresh.numpy().shape == shape
    assert np.array_equal(fresh.defined(), plain.defined())


def test_an_input_made_from_a_kept_draw_comes_with_its_bytes_and_address(tmp_path):
    """generate_at's (array, bytes, address) for a kept stream: the array is generate's, over those bytes at that
    address, and the engine's GlobalTensor over them is GlobalTensor(array)'s."""
    from fastcopy.golden.inputs import generate, generate_at
    from fastcopy.memory import GlobalTensor

    case = _sweep_case(tmp_path)
    for i in (0, 4, 1):  # (a short draw, a long one, a short one again: copies of the kept stream)
        prog = case.point(i)
        buf = prog.buffer("xGm")
        arr, data, host = generate_at(buf, prog.seed, prog.file)
        assert np.array_equal(arr.view(np.uint8).reshape(-1), generate(buf, prog.seed, prog.file).view(np.uint8)
                              .reshape(-1))
        assert data is not None and host == data.ctypes.data and np.shares_memory(arr, data)
        assert arr.shape == buf.shape and data.size == arr.nbytes
        fresh = GlobalTensor._fresh(data, host, buf.np_dtype, buf.shape, True)
        assert fresh._sig is GlobalTensor(arr)._sig and fresh.shape == arr.shape
        assert not fresh.memory.tracked and np.array_equal(fresh.numpy(), arr)


# ------------------------------------------------------------------------------------------------ manifest text
def _texts_cleared(monkeypatch):
    """No text kept from earlier manifests (each piece made afresh by the encoder)."""
    from fastcopy.golden import files

    for name in ("_LINES", "_KEYS", "_SHAPES", "_CASE_HEADS"):
        monkeypatch.setattr(files, name, {})
    monkeypatch.setattr(files, "_HEAD_LINES", {0: None})


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.stem)
def test_a_batch_point_is_written_as_write_result_writes_it(tmp_path, monkeypatch, path):
    """write_point (the batch's writer: the manifest's text made without its dicts) writes the bytes write_result
    writes, and that manifest is manifest_text of the returned one made with nothing kept, at every point."""
    from fastcopy.golden.files import manifest_text, write_point

    _layouts_from(monkeypatch, 2)  # (every point after the first two of a sweep by a layout)
    case = load_case(path, allow_python=True)
    for i in range(len(case)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_program(case.point(i), reuse=True)
        m = write_result(result, str(tmp_path / "r" / str(i)), allow_empty=True)
        if result.empty:
            continue
        write_point(result, str(tmp_path / "p" / str(i)))
        assert _files(tmp_path / "p" / str(i)) == _files(tmp_path / "r" / str(i))
        with monkeypatch.context() as mp:
            _texts_cleared(mp)
            assert (tmp_path / "r" / str(i) / "manifest.json").read_text(encoding="utf-8") == manifest_text(m)


ODD = [0, -7, 10 ** 30, True, False, None, 0.1, -0.0, 1e300, 5e-324, float("nan"), float("inf"), float("-inf"),
       "", "é \"q\" \\ \n\t\u2028\x01 ∑", [1, 2.5, "x", None, [True]], {"k": 1, "é": [0.5]}, {1: "one", "2": 2},
       (3, 4), np.int64(5), np.float32(0.25), np.bool_(True)]


@pytest.mark.parametrize("k", range(len(ODD)))
def test_manifest_text_pieces_are_the_encoders_for_every_kind_of_value(k):
    from fastcopy.golden import files

    v = ODD[k]
    assert files._text(v) == files._dumps(v)
    assert files._text({"v": v}) == files._dumps({"v": v})


def test_a_manifest_of_odd_values_is_written_as_the_encoder_writes_it(tmp_path, monkeypatch):
    """Every manifest field that a point can change, with values of every JSON type (and unicode, escapes,
    non-finite floats, numpy scalars): write_point and write_result write manifest_text of the manifest."""
    import dataclasses
    import json

    from fastcopy.golden.files import manifest_text, write_point
    from fastcopy.golden.schema import Arg, BufferSpec, Ref

    case = _sweep_case(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = run_program(case.point(1))
    prog = base.program
    values = {f"v{k}": v for k, v in enumerate(ODD)}
    x, u, y = prog.buffers
    op0, op1 = prog.ops
    variants = [
        dict(values=values, index=None),
        dict(values={"é": 1.5}, index=12, description="d \"é\"\n", seed=True, poison=0, blocks=3),
        dict(buffers=(dataclasses.replace(x, init={"kind": "file", "path": "/abs/x.bin", "given": "x.bin"}),
                      dataclasses.replace(u, init={"kind": "constant", "value": float("nan")}, position="VECOUT"),
                      y, BufferSpec("scr é", "float", True, (2, 3), "GM", file="scr")),
             ops=(dataclasses.replace(op0, note="n \"é\"", env=(("i", 3), ("block_idx", 0)), path="ops[0].body[1]",
                                      operands=(("b", Ref("xGm", 4), None), ("bias", Ref("u"), "bias")),
                                      dtype="half"),
                  dataclasses.replace(op1, args=(Arg("count", "int", True), Arg("x", "value", -0.0)),
                                      kwargs=(("k", Arg("k", "enum", "é")), ("count", Arg("count", "int", 3)))))),
    ]
    outs = [dict(), dict(rtol=1e-3, atol=0.0, compare="mmad", compare_options=(("a", "xGm"), ("n", 2))),
            dict(allow_undefined=True)]
    for n, (change, out) in enumerate(zip(variants, outs)):
        p = dataclasses.replace(prog, outputs=(dataclasses.replace(prog.outputs[0], **out),), **change)
        for extra in (dict(), dict(warnings={0: ["w \"1\"", "é"], 1: []}, notes=["n é"], defined={}),
                      dict(placement={**base.placement, "yGm": ("UB", 96)})):
            if "placement" in extra:  # (an output in on-chip memory: its buffer and address in the entry)
                p = dataclasses.replace(p, buffers=tuple(dataclasses.replace(b, gm=False, position="VECOUT")
                                                         if b.name == "yGm" else b for b in p.buffers))
            res = dataclasses.replace(base, program=p, **extra)
            where = tmp_path / f"{n}-{len(extra)}-{'placement' in extra}"
            m = write_result(res, str(where / "r"))
            write_point(res, str(where / "p"))
            text = (where / "r" / "manifest.json").read_text(encoding="utf-8")
            assert (where / "p" / "manifest.json").read_text(encoding="utf-8") == text
            with monkeypatch.context() as mp:
                _texts_cleared(mp)
                assert manifest_text(m) == text
            assert json.loads(text)["files"] == m["files"]


def test_nothing_is_written_when_the_manifest_text_fails(tmp_path, monkeypatch):
    from fastcopy.golden import files
    from fastcopy.golden.files import write_point

    case = _sweep_case(tmp_path)
    result = run_program(case.point(0))

    def failing(op, warns):
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "_op_text", failing)
    with pytest.raises(KeyboardInterrupt):
        write_point(result, str(tmp_path / "out" / "0000"))
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


# ------------------------------------------------------------------------------------------------ point layouts
def _layouts_from(monkeypatch, points: int) -> None:
    """No layout kept from earlier tests; a case makes one from its ``points``-th point written piece by piece."""
    from fastcopy.golden import files

    monkeypatch.setattr(files, "_LAYOUTS", {})
    monkeypatch.setattr(files, "_PIECEWISE", {})
    monkeypatch.setattr(config, "LAYOUT_POINTS", points)


def test_a_case_makes_a_layout_after_its_first_points_and_only_for_small_programs(tmp_path, monkeypatch):
    from fastcopy.golden import files
    from fastcopy.golden.files import write_point

    _layouts_from(monkeypatch, 3)
    case = _sweep_case(tmp_path)
    results = [run_program(case.point(i)) for i in (0, 4, 5, 0, 4)]
    key = (results[0].program.name, results[0].program.source_sha256)
    for n, res in enumerate(results):
        write_point(res, str(tmp_path / "a" / str(n)))
        assert files._LAYOUTS.get(key) == (None if n < 2 else [files._LAYOUTS[key][0]])
        assert _files(tmp_path / "a" / str(n)) == _files(tmp_path / "a" / str(n % 3))
    _layouts_from(monkeypatch, 1)
    monkeypatch.setattr(config, "LAYOUT_PARTS", 4)  # (the sweep's programs have 5 buffers and ops)
    for n, res in enumerate(results):
        write_point(res, str(tmp_path / "b" / str(n)))
        assert files._LAYOUTS[key] == ()
        assert _files(tmp_path / "b" / str(n)) == _files(tmp_path / "a" / str(n))


def _shared(obj, **changes):
    """A copy of a frozen spec sharing every field object but ``changes`` (as the sweep's point template makes)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def _both_ways(res, where: pathlib.Path):
    """write_point's folder (by a layout when one fits) is write_result's, whose manifest is manifest_text's."""
    from fastcopy.golden.files import manifest_text, write_point

    try:
        m = write_result(res, str(where / "r"))
    except Exception as exc:  # noqa: BLE001 - then write_point raises the same
        with pytest.raises(type(exc)) as got:
            write_point(res, str(where / "p"))
        assert str(got.value) == str(exc)
        return
    write_point(res, str(where / "p"))
    assert _files(where / "p") == _files(where / "r")
    assert (where / "r" / "manifest.json").read_text(encoding="utf-8") == manifest_text(m)


def test_a_layout_writes_the_values_that_change_whatever_their_type(tmp_path, monkeypatch):
    """Points that share the first point's objects (as the point template makes them) are written by its layout,
    with every changing value read and written as the encoder writes it."""
    from fastcopy.golden import files

    _layouts_from(monkeypatch, 1)
    case = _sweep_case(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [run_program(case.point(i)) for i in (0, 1, 4, 5)]
    key = (results[0].program.name, results[0].program.source_sha256)
    for n, res in enumerate(results):
        _both_ways(res, tmp_path / f"plain{n}")
    assert len(files._LAYOUTS[key]) == 1  # (one layout made, used by every later point)
    base = results[0]
    prog = base.program
    op0, op1 = prog.ops
    struct = op0.args[0]
    for k, odd in enumerate(ODD):
        fields = {f: odd for f in struct.value}
        ops = (_shared(op0, args=(_shared(struct, value=fields),)),
               _shared(op1, args=(_shared(op1.args[0], value=odd),)))
        p = _shared(prog, index=odd if k % 2 else k, values={"p": odd}, ops=ops)
        res = _shared(base, program=p, placement={"u": (odd if k % 3 else "é \"x\"", odd)},
                      warnings={0: [f"w{k} é"], 1: []} if k % 2 else {}, notes=[odd] if k % 4 == 1 else [],
                      defined={"yGm": odd} if k % 2 else {})
        _both_ways(res, tmp_path / f"odd{k}")
    assert len(files._LAYOUTS[key]) == 1


def test_a_program_that_differs_from_a_layout_is_written_as_it_is(tmp_path, monkeypatch):
    """Every part of the first point a layout takes as constant, changed (a new object, as a compiled point
    has): the folder is the one written piece by piece."""
    from fastcopy.golden.schema import Arg, Ref

    case = _sweep_case(tmp_path)
    base = run_program(case.point(0))
    prog = base.program
    x, u, y = prog.buffers
    op0, op1 = prog.ops
    out = prog.outputs[0]
    struct = op0.args[0]
    changes = [
        dict(description="other é"), dict(seed=True), dict(seed=5.0), dict(poison=0), dict(product="ATLAS_A3"),
        dict(name="other"), dict(file=prog.file + "x"), dict(blocks=2), dict(values={"q": 1}),
        dict(values={"p": 0, "q": 1}), dict(values={1: 0}), dict(values=[0]),
        dict(outputs=(_shared(out, rtol=0.5),)), dict(outputs=(_shared(out, file="output/o.bin"),)),
        dict(outputs=(_shared(out, compare_options=(("a", "xGm"),)),)),
        dict(buffers=(_shared(x, dtype="float16"), u, y)), dict(buffers=(_shared(x, file="x2"), u, y)),
        dict(buffers=(_shared(x, init={"kind": "zeros"}), u, y)), dict(buffers=(_shared(x, position="X"), u, y)),
        dict(buffers=(x, _shared(u, init={"kind": "zeros"}), y)), dict(buffers=(x, _shared(u, position="A1"), y)),
        dict(buffers=(x, _shared(u, dtype="float16"), y)), dict(buffers=(x, u, _shared(y, name="zGm"))),
        dict(buffers=(x, u)), dict(buffers=(x, u, y, _shared(y, name="sGm", file="s"))),
        dict(ops=(op0,)), dict(ops=(_shared(op0, api="DataCopyPad"), op1)), dict(ops=(_shared(op0, note="n"), op1)),
        dict(ops=(_shared(op0, path="ops[0].body[0]"), op1)), dict(ops=(_shared(op0, env=(("i", 1),)), op1)),
        dict(ops=(_shared(op0, dtype="half"), op1)), dict(ops=(_shared(op0, index=7), op1)),
        dict(ops=(_shared(op0, dst=Ref("u", 16)), op1)), dict(ops=(_shared(op0, src=Ref("yGm")), op1)),
        dict(ops=(_shared(op0, operands=(("b", Ref("xGm"), None),)), op1)),
        dict(ops=(_shared(op0, args=(_shared(struct, key="Other"),)), op1)),
        dict(ops=(_shared(op0, args=(_shared(struct, value=dict(reversed(list(struct.value.items())))),)), op1)),
        dict(ops=(_shared(op0, args=(_shared(struct, value={**struct.value, "extra": 1}),)), op1)),
        dict(ops=(_shared(op0, args=(struct, Arg("k", "int", 1))), op1)),
        dict(ops=(_shared(op0, kwargs=(("k", Arg("k", "int", 1)),)), op1)),
        dict(ops=(op0, _shared(op1, args=(Arg("count", "int", [1, 2]),)))),
    ]
    for k, change in enumerate(changes):
        _layouts_from(monkeypatch, 1)
        _both_ways(base, tmp_path / f"{k}-first")  # (the layout of the point as it is)
        p = _shared(prog, **change)
        inputs = {("x2" if b.file == "x2" else b.name): base.inputs["xGm"] for b in p.buffers if b.name == "xGm"}
        res = _shared(base, program=p, inputs=inputs or base.inputs)
        _both_ways(res, tmp_path / f"{k}-changed")
        _both_ways(base, tmp_path / f"{k}-again")
    for k, inputs in enumerate(({**base.inputs, "yGm": base.outputs["yGm"][0]}, {"yGm": base.inputs["xGm"]}, {})):
        _both_ways(_shared(base, inputs=inputs), tmp_path / f"inputs{k}")  # (a result with other inputs)
    data, mask = base.outputs["yGm"]
    _both_ways(_shared(base, inputs={"xGm": base.inputs["xGm"].view(np.uint16)}), tmp_path / "dtype-in")
    _both_ways(_shared(base, outputs={"yGm": (data.view(np.int16), mask)}), tmp_path / "dtype-out")
    _both_ways(_shared(base, outputs={"yGm": (data, mask, mask)}), tmp_path / "three")


@pytest.mark.parametrize("init", [None, {}, {"kind": "uniform", "low": -1.0, "high": 1.0}, {"kind": "zeros"},
                                  {"kind": "file", "path": "/abs/x.bin", "given": "x.bin"},
                                  {"kind": "file", "given": "x.bin"}, {"path": "/abs/x.bin", "kind": "file"},
                                  {"kind": "values", "values": [1, 2.5, float("nan")]}])
def test_an_init_tables_text_is_its_records(init):
    from fastcopy.golden import files

    assert files._init_text(init) == files._dumps(files._init_record(init))


def test_a_layouts_kept_init_text_holds_only_for_the_very_same_values(tmp_path, monkeypatch):
    """A layout keeps the text of a table of plain values (the sweep's points share the table): a table changed in
    place or replaced, with values equal but of another type or sign, keys reordered, added or removed, or values
    that are not plain, is written as it is (as write_result writes it)."""
    from fastcopy.golden import files

    case = _sweep_case(tmp_path)
    base = run_program(case.point(0))
    prog = base.program
    x, u, y = prog.buffers
    table = x.init
    assert table == {"kind": "uniform", "low": -1.0, "high": 1.0}
    key = (prog.name, prog.source_sha256)
    _layouts_from(monkeypatch, 1)
    _both_ways(base, tmp_path / "first")
    assert len(files._LAYOUTS[key]) == 1
    others = [{"kind": "uniform", "low": -1, "high": 1.0}, {"kind": "uniform", "low": -1.0, "high": True},
              {"kind": "uniform", "low": -0.0 - 1.0, "high": 1.0}, {"kind": "uniform", "low": -1.0, "high": 1},
              {"low": -1.0, "kind": "uniform", "high": 1.0}, {"kind": "uniform", "low": -1.0},
              {"kind": "uniform", "low": -1.0, "high": 1.0, "x": 0}, {"kind": "uniform", "low": [-1.0], "high": 1.0},
              {"kind": "uniform", "low": -1.0, "high": float("nan")}, None]
    for k, other in enumerate(others):
        p = _shared(prog, buffers=(_shared(x, init=other), u, y))
        _both_ways(_shared(base, program=p), tmp_path / f"other{k}")
    for k, (field, value) in enumerate([("low", -1), ("high", True), ("low", -1.0 + 0.0), ("high", -0.0)]):
        before = dict(table)
        table[field] = value  # (changed in place: the same dict, another value object)
        try:
            _both_ways(base, tmp_path / f"in-place{k}")
            text = (tmp_path / f"in-place{k}" / "p" / "manifest.json").read_text()
            assert f'"init": {files._dumps(table)}' in text
        finally:
            table.clear()
            table.update(before)
    table.pop("low")
    table["low"] = -1.0  # (the same keys and values, in another order)
    try:
        _both_ways(base, tmp_path / "reordered")
        assert '"init": {"kind": "uniform", "high": 1.0, "low": -1.0}' in (
            tmp_path / "reordered" / "p" / "manifest.json").read_text()
    finally:
        table.clear()
        table.update({"kind": "uniform", "low": -1.0, "high": 1.0})
    _both_ways(base, tmp_path / "again")
    assert len(files._LAYOUTS[key]) == 1


def test_a_layout_takes_an_operand_it_knows_or_one_of_the_same_parts(tmp_path, monkeypatch):
    """An op's operand is the layout's own Ref (the points share it), or an equal Ref of the same parts; any other
    (another name or offset, another type with those fields) is written as it is."""
    from fastcopy.golden import files
    from fastcopy.golden.schema import Ref

    case = _sweep_case(tmp_path)
    base = run_program(case.point(0))
    prog = base.program
    op0, op1 = prog.ops
    key = (prog.name, prog.source_sha256)
    _layouts_from(monkeypatch, 1)
    _both_ways(base, tmp_path / "first")
    fill = files._LAYOUTS[key][0]

    class Like:
        def __init__(self, name, offset):
            self.name, self.offset = name, offset

        def __str__(self):
            return "elsewhere"

    same = Ref(op0.dst.name, op0.dst.offset)
    assert same is not op0.dst
    p = _shared(prog, ops=(_shared(op0, dst=same), op1))
    assert fill(p, _shared(base, program=p)) is not None  # (taken by the layout: the same parts)
    _both_ways(_shared(base, program=p), tmp_path / "same-parts")
    for k, ref in enumerate([Ref(op0.dst.name, 16), Ref("yGm", 0), Like(op0.dst.name, op0.dst.offset)]):
        p = _shared(prog, ops=(_shared(op0, dst=ref), op1))
        assert fill(p, _shared(base, program=p)) is None
        _both_ways(_shared(base, program=p), tmp_path / f"other{k}")


@pytest.mark.parametrize("shape", [(0,), (1,), (16,), (3, 5), (1 << 16,), ((1 << 16) + 1,)])
def test_a_masks_digest_is_its_bytes_whatever_the_defined_count_says(shape):
    """mask_sha256 keeps the digest of all-ones masks by size, but only for a mask whose bytes are all ones: a
    count that says all defined over a mask holding a 0 or a 2 (a hand-made result), a strided or Fortran-order
    mask, any count, hash the bytes."""
    from fastcopy.golden.store import mask_sha256, sha256_of

    ones = np.ones(shape, np.uint8)
    for mask in (ones, np.asfortranarray(ones), np.ones(shape + (2,), np.uint8)[..., 0]):
        assert mask_sha256(mask, mask.size) == sha256_of(mask)
        assert mask_sha256(mask, 0) == sha256_of(mask)
    if ones.size:
        for value in (0, 2):
            odd = ones.copy()
            odd.reshape(-1)[ones.size // 2] = value
            assert mask_sha256(odd, odd.size) == sha256_of(odd) != sha256_of(ones)
            assert mask_sha256(ones, ones.size) == sha256_of(ones)  # (the kept digest is untouched)


@pytest.mark.parametrize("case_dir", ["out", "out/", "./out//x/..", "", ".", "/", "/tmp/../tmp/x"])
def test_a_chunks_point_folders_are_point_dir_and_its_absolute_parent(tmp_path, monkeypatch, case_dir):
    """run_chunk names each point's folder as point_dir does, and hands the writer the absolute parent and name
    os.path.split(os.path.abspath(folder)) gives, made once per chunk."""
    monkeypatch.chdir(tmp_path)
    case = _sweep_case(tmp_path)
    got = work._point_dirs(case_dir, case, [0, 3, 5])
    assert [(pi, where) for pi, where, _ in got] == [(pi, work.point_dir(case_dir, case, pi)) for pi in (0, 3, 5)]
    assert [at for _, _, at in got] == [os.path.split(os.path.abspath(where)) for _, where, _ in got]


def test_a_point_whose_files_or_folder_fail_is_an_outcome_and_the_others_are_written(tmp_path, monkeypatch):
    """Made in two steps (every point's files, then every folder), a point whose files raise, or whose folder cannot
    be written (a file of yours in its place), fails with the reason and writes nothing; the others are written."""
    case = _sweep_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "0001").write_text("mine")  # (a file where point 1's folder goes: never replaced)
    real = work.point_files

    def files(result):
        if result.program.index == 4:
            raise RuntimeError("no files for point 4")
        return real(result)

    monkeypatch.setattr(work, "point_files", files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = work.run_chunk(case, 0, range(6), str(out))
    assert [o.ok for o in got] == [True, False, False, False, False, True]
    assert "exists and is not a folder" in got[1].error
    assert got[4].error.endswith("RuntimeError: no files for point 4 (at test_batch_stages.py:"
                                 f"{files.__code__.co_firstlineno + 2})")
    assert (out / "0001").read_text() == "mine"
    assert sorted(os.listdir(out)) == ["0000", "0001", "0005"]
    for i in (0, 5):
        assert _files(out / f"{i:04d}") == _files(tmp_path / "plain" / f"{i:04d}") if (
            _one_at_a_time(case, i, str(tmp_path / "plain" / f"{i:04d}"))[0]) else False


def test_a_chunks_new_point_folders_cost_their_system_calls_and_no_more(tmp_path, monkeypatch):
    """Written by run_chunk into a new case folder, each point folder costs a getpid, three mkdirs (the hidden
    folder, input/, output/), one exclusive no-follow open per file and one rename; only the first point's target
    is lstat-ed (before the parent is listed, once)."""
    from fastcopy.golden import store

    case = _sweep_case(tmp_path)
    calls = []
    for name in ("lstat", "stat", "mkdir", "open", "rename", "replace", "getpid", "listdir", "chmod"):
        real = getattr(os, name)

        def counting(*args, _name=name, _real=real, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(store.os, name, counting)  # (store's os is os: every caller counted while it runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = work.run_chunk(case, 0, [0, 1, 4, 5], str(tmp_path / "out" / "case"))
    monkeypatch.undo()
    assert all(o.ok for o in got)
    written = [c for c in calls if c != "stat"]  # (os.makedirs of the parent, once, may stat)
    assert written.count("lstat") == 1 and written.count("listdir") == 1 and "chmod" not in written
    assert written.count("rename") == 4 and "replace" not in written and written.count("getpid") >= 4
    assert written.count("open") == 4 * 4
    assert written.count("mkdir") - 2 == 4 * 3  # (+ os.makedirs of out/ and out/case)


def test_a_chunk_removes_dead_writers_leftovers_of_every_folder_it_writes(tmp_path):
    """A case folder listed once per process: the hidden folders that writers which no longer run left for each
    point folder a chunk writes are removed (the second, third, ... folder of the chunk too, from the one
    listing), a live writer's and those of folders not written are kept."""
    case = _sweep_case(tmp_path)
    out = tmp_path / "out" / "case"
    out.mkdir(parents=True)
    dead, live = 999999999, os.getpid()
    left = {}
    for name, pid in [("0000", live), ("0001", dead), ("0003", dead), ("0004", dead), ("0005", dead)]:
        for kind in ("new", "old"):
            p = out / f".{name}.fastcopy-{kind}-{pid}-x{kind}"
            p.mkdir()
            (p / "junk").write_text("x")
            left[p] = name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = work.run_chunk(case, 0, [0, 1, 3, 4, 5], str(out))
    assert [o.ok for o in got] == [True, True, False, True, True]  # (point 3 fails: its folder is not written)
    kept = sorted(p.name for p in left if p.exists())
    assert kept == sorted(p.name for p, name in left.items() if name in ("0000", "0003")), kept
    assert sorted(n for n in os.listdir(out) if not n.startswith(".")) == ["0000", "0001", "0004", "0005"]
