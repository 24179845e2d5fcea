"""The point template (fastcopy.golden.holes): a point made by filling the holes of a compiled point is exactly
the point compiled from scratch (``repr`` compared: ``1``, ``1.0`` and ``True`` differ), and a point whose values
fail any check fails with the compiler's own error; cases it does not take are compiled as before."""

from __future__ import annotations

import pathlib
import pickle

import pytest
from test_case_template import _outcome, _plain, _same_points

from fastcopy.golden import load_case, load_case_text

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: every hole kind, with values that pass and values that fail each check (types, ranges, the byte limit)
HOLES = """\
name = "holes"
product = "ATLAS_A2"
seed = 5
outputs = ["yGm"]

[sweep]
bc = [1, 2, 2.0, 2.5, true, "2", 0, 70000, 3]
n = [16, 32.0, 0, -16, 4096000]
flag = [false, 1]

[buffers.xGm]
dtype = "half"
shape = [2, "=n * 2"]
init = {kind = "uniform", low = -1.0, high = 1.0}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = "=n * 2"

[buffers.yGm]
dtype = "half"
shape = "=n * 2 + bc * 0"

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params.DataCopyParams = {blockCount = "=bc", blockLen = "=n // 8", srcGap = 0, dstGap = 0}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {count = "=n * 2 - 4096 * flag", enableSmallC0 = "=flag"}
"""


def _holes_case(text=HOLES, **kw):
    return load_case_text(text, "holes.toml", max_bytes=1 << 20, **kw)


def test_the_bench_sweep_uses_the_template():
    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    assert case._holes is not None
    _same_points(case, range(0, 1000, 3))


def test_every_hole_kind_passes_and_fails_as_the_compiler():
    case = _holes_case()
    assert case._holes is not None and len(case._holes.buffers) == 3 and len(case._holes.ops) == 2
    outcomes = [_outcome(lambda: case.point(i)) for i in range(len(case))]
    assert sum(o.startswith("CaseError") for o in outcomes) > len(case) // 2  # (the failures are exercised)
    assert sum(not o.startswith("CaseError") for o in outcomes) >= 6  # (and the passes)
    _same_points(case, range(len(case)))
    _same_points(case, reversed(range(len(case))))


def test_a_struct_field_that_does_not_fit_the_product_is_the_compilers_error():
    text = HOLES.replace('product = "ATLAS_A2"', 'product = "ATLAS_350"')
    case = _holes_case(text)
    _same_points(case, range(len(case)))


@pytest.mark.parametrize("change", [
    ('shape = [2, "=n * 2"]', 'shape = [2, "=n * 2"]\ndescription = "=\'x\'"'),  # an expression elsewhere
    ('dst = "xLocal"', 'dst = "xLocal[0]"'),  # an operand offset
    ('dtype = "half"\nshape = "=n * 2 + bc * 0"', 'dtype = "=\'half\'"\nshape = "=n * 2 + bc * 0"'),  # a dtype
    ('{kind = "uniform", low = -1.0, high = 1.0}', '{kind = "uniform", low = "=-bc", high = 1.0}'),  # an init
    ('outputs = ["yGm"]', 'outputs = ["yGm"]\nseed = "=5"'.replace('seed = 5\n', '')),  # a top-level value
    ('srcGap = 0', 'srcGap = [0, 1]'),  # an implicit sweep
])
def test_cases_it_does_not_take_compile_as_before(change):
    text = HOLES.replace(*change)
    if "seed" in change[1]:
        text = text.replace("seed = 5\n", "")
    case = _holes_case(text)
    assert case._holes is None
    _same_points(case, range(len(case)))


def test_a_loop_or_a_values_input_is_not_taken():
    text = HOLES.replace('init = {kind = "uniform", low = -1.0, high = 1.0}',
                         f'init = {{kind = "values", values = {list(range(64))}}}')
    case = _holes_case(text.replace("n = [16, 32.0, 0, -16, 4096000]", "n = [16]"))  # (its size is checked)
    assert case._holes is None
    _same_points(case, range(len(case)))
    loop = HOLES.replace('[[ops]]\napi = "DataCopy"\ndst = "yGm"',
                         '[[ops]]\nfor = "i"\nrange = 1\nbody = [{api = "DataCopy", dst = "yGm", src = "xLocal", '
                         'params = {count = "=n * 2"}}]\n\n[[ops]]\napi = "DataCopy"\ndst = "yGm"')
    case = _holes_case(loop)
    assert case._holes is None
    _same_points(case, range(len(case)))


def test_a_pickled_case_makes_its_template_again():
    case = _holes_case()
    copy = pickle.loads(pickle.dumps(case))
    assert [_outcome(lambda: copy.point(i)) for i in range(len(copy))] == \
        [_outcome(lambda: _plain(case, i)) for i in range(len(case))]
    assert copy._holes is not None and not isinstance(copy._holes, str)


def test_a_struct_from_every_field_in_order_is_the_struct_from_keywords():
    import fastcopy
    from fastcopy.golden.schema import make_struct, struct_class

    names = [n for n in fastcopy.__all__ if struct_class(n) is not None]
    assert "DataCopyParams" in names and "Nd2NzParams" in names and len(names) > 20
    for name in names:
        cls = struct_class(name)
        fields = cls().as_dict()
        if any(isinstance(v, dict) for v in fields.values()):
            continue
        fields = {k: (v if isinstance(v, bool) or not isinstance(v, int) else v + 1 if v < 200 else v)
                  for k, v in fields.items()}  # (values other than the defaults, where they are small integers)
        try:
            want = cls(**fields)
        except Exception as exc:  # noqa: BLE001 - the same error either way
            with pytest.raises(type(exc)):
                make_struct(name, fields)
            continue
        got = make_struct(name, fields)
        assert type(got) is cls and got.key() == want.key() and repr(got) == repr(want)


#: (n = 262144: only the byte limit fails)
_LIMITS = HOLES.replace("n = [16, 32.0, 0, -16, 4096000]", "n = [16, 32.0, 0, -16, 4096000, 262144]")


@pytest.mark.parametrize("text", [_LIMITS, _LIMITS.replace('product = "ATLAS_A2"', 'product = "ATLAS_350"')])
def test_the_straight_line_point_is_the_templates(text, monkeypatch):
    """The template's point written out as one function (at the RUNNER_POINTS-th point) gives what the
    template's own loop gives: the same program, sharing the same specs, or the loop decides (every value that is
    not an int), or None where the loop gives None; and every point is still the compiler's."""
    from fastcopy import config
    from fastcopy.golden import holes

    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    case = _holes_case(text)
    case.point(0)
    template = case._holes
    straight = template.straight
    assert callable(straight)
    kinds = set()
    for i in list(range(len(case))) * 2:
        coords = case.coordinates(i)
        names = {n: c for (n, _), c in zip(case.named, coords)}
        values = case.values(i)
        try:
            fast = straight(names, i, values)
        except Exception as exc:  # noqa: BLE001 - the template's point() turns it into None, as the loop's
            fast = type(exc)
        try:
            loop = template._point(names, i, values)
        except Exception as exc:  # noqa: BLE001
            loop = type(exc)
        if fast is holes._GENERIC:
            kinds.add("generic")
            continue
        if isinstance(fast, type) or fast is None:
            kinds.add("none")
            assert loop is None or isinstance(loop, type), i
            continue
        kinds.add("program")
        assert repr(fast) == repr(loop), i
        assert all(a is b for a, b in zip(fast.buffers, loop.buffers)) and len(fast.buffers) == len(loop.buffers)
        assert fast.ops[0] is loop.ops[0]  # (op 1 has a bool hole: made at every point, as the loop does)
        assert fast.__dict__["_runs"] is loop.__dict__["_runs"] is template.runs
    assert kinds == {"generic", "none", "program"}
    _same_points(case, range(len(case)))
    _same_points(case, reversed(range(len(case))))


def test_the_bench_sweep_straight_line(monkeypatch):
    from fastcopy import config

    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    case.point(0)
    assert callable(case._holes.straight)
    _same_points(case, range(0, 1000, 3))


#: an int parameter hole (a count, uint32_t) that leaves its range at later points
_COUNTS = """\
name = "counts"
product = "ATLAS_A2"
seed = 5
outputs = ["yGm"]

[sweep]
c = [16, 32, -16, 4294967296, 4294967295, 64, -1, 48]

[buffers.xGm]
dtype = "half"
shape = [128]
init = {kind = "uniform", low = -1.0, high = 1.0}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = 128

[buffers.yGm]
dtype = "half"
shape = [128]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params = {count = "=c"}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {count = 128}
"""


def test_the_straight_line_point_checks_an_int_parameters_range(monkeypatch):
    """An int parameter outside its C++ type's range (count: uint32_t) at a point made by the straight-line
    function is the compiler's error, as it is at a point made by the template's loop."""
    from fastcopy import config

    monkeypatch.setattr(config, "RUNNER_POINTS", 1)
    case = _holes_case(_COUNTS)
    assert case._holes is not None
    case.point(0)
    assert callable(case._holes.straight)
    outcomes = [_outcome(lambda: case.point(i)) for i in range(len(case))]
    assert sum(o.startswith("CaseError") for o in outcomes) == 3
    _same_points(case, range(len(case)))
