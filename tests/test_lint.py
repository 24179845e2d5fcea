"""The package, the benchmarks and the tests stay pyflakes-clean (``python -m pyflakes fastcopy bench tests``): no
unused import or variable, no undefined name. pyflakes reads no ``# noqa``: an import kept for its side effect is
dropped with ``del`` after it, a re-export is listed in ``__all__``, a fixture taken from another test module is
bound by assignment (``planned = test_cube_in_speed.planned``)."""

from __future__ import annotations

import pathlib

from pyflakes.api import checkRecursive
from pyflakes.reporter import Reporter

ROOT = pathlib.Path(__file__).resolve().parents[1]


class _Lines:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)


def test_pyflakes_finds_nothing():
    out, err = _Lines(), _Lines()
    n = checkRecursive([str(ROOT / d) for d in ("fastcopy", "bench", "tests")], Reporter(out, err))
    found = "".join(out.lines + err.lines)
    assert n == 0 and not found.strip(), found
