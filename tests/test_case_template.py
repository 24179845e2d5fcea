"""The sweep template (fastcopy.golden.template): a point compiled through the memo is exactly the point compiled
from scratch (``repr`` compared, so ``1``, ``1.0`` and ``True`` differ), and a point that fails fails with the
same error, on every example case and on sweeps built to trip a memo."""

from __future__ import annotations

import pathlib

import pytest

from fastcopy.golden import CaseError, load_case, load_case_text

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "examples").glob("*.toml")) + [ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml"]


def _plain(case, i):
    """Point ``i`` compiled without the template (what Case.point did before it)."""
    coords = case.coordinates(i)
    names = {n: c for (n, _), c in zip(case.named, coords)}
    chosen = dict(zip(case.implicit, coords[len(case.named):]))
    return case._compile(names, lambda path, values: chosen[path], i if case.is_sweep else None, case.values(i))


def _outcome(f):
    try:
        return repr(f())
    except CaseError as exc:
        return f"CaseError: {exc}"


def _same_points(case, indices):
    for i in indices:
        assert _outcome(lambda: case.point(i)) == _outcome(lambda: _plain(case, i)), i


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_every_example_point_is_the_plain_compile(path):
    case = load_case(path, allow_python=True)
    _same_points(case, range(len(case)))
    _same_points(case, reversed(range(len(case))))  # again, from the memo, in another order


SWEEPS = """\
name = "trip"
product = "ATLAS_A2"
outputs = ["yGm"]

[sweep]
x = [1, 1.0, 2, true, 1, 2.0]
n = [16, 99999999999, 32, 16]

[buffers.xGm]
dtype = "float"
shape = ["=n"]
init = {kind = "constant", value = "=x"}

[buffers.xLocal]
position = "VECIN"
dtype = "float"
count = "=n"

[buffers.yGm]
dtype = "float"
shape = ["=n"]

[[ops]]
for = "i"
range = "=n // 16"
body = [{api = "DataCopy", dst = "xLocal[i * 16]", src = "xGm[i * 16]", params = {count = 16}}]

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {count = "=n"}
"""


def test_values_equal_across_types_are_kept_apart_and_errors_repeat():
    case = load_case_text(SWEEPS, "trip.toml")
    indices = list(range(len(case)))
    _same_points(case, indices)
    _same_points(case, indices[::-1])
    values = [case.point(i).buffers[0].init["value"] for i in (0, 4, 0)]  # x = 1, then 1.0, then 1 again
    assert [type(v) for v in values] == [int, float, int]
    with pytest.raises(CaseError):
        case.point(1)  # n = 99999999999: too large, every time


def test_swept_products_and_multi_core_points():
    text = SWEEPS.replace('product = "ATLAS_A2"', 'product = ["ATLAS_A2", "ATLAS_350", "ATLAS_A2"]\nblocks = [1, 2]')
    text = text.replace('outputs = ["yGm"]', 'outputs = [{buffer = "yGm", allow_undefined = true}]')
    case = load_case_text(text, "trip2.toml")
    _same_points(case, range(len(case)))
    _same_points(case, reversed(range(len(case))))


def test_a_section_that_never_repeats_stops_using_the_memo():
    from fastcopy.golden import template

    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    case._holes = None  # (the point template off: every point through the memo)
    _same_points(case, range(0, 1000, 7))
    for i in range(1000):
        case.point(i)
    stats = {k: v for k, v in case._memo.items() if isinstance(v, list)}
    xgm = next(v for k, v in stats.items() if k[:2] == ("buffer", "xGm"))
    local = next(v for k, v in stats.items() if k[:2] == ("buffer", "xLocal"))
    assert xgm[1] >= template.GIVE_UP_AFTER and xgm[0] == 0  # all different: gave up
    assert local[0] > local[1]  # depends on bc and bl only: mostly reused


def test_a_pickled_case_starts_with_an_empty_memo():
    import pickle

    case = load_case(ROOT / "examples" / "matmul_a_nd2nz_sweep.toml")
    for i in range(len(case)):
        case.point(i)
    assert case._memo
    copy = pickle.loads(pickle.dumps(case))
    assert copy._memo == {}
    assert [repr(copy.point(i)) for i in range(len(copy))] == [repr(case.point(i)) for i in range(len(case))]
