"""Options of the robustness campaign: ``--fuzz-calls N`` (calls per op family; default: the small CI budget)
and ``--fuzz-seed S`` (default 0: CI runs the same calls every time)."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

#: calls per op family in CI (the whole robustness suite stays well under a minute)
CI_CALLS = 300


def pytest_addoption(parser):
    group = parser.getgroup("fastcopy robustness")
    group.addoption("--fuzz-calls", type=int, default=CI_CALLS,
                    help=f"randomised calls per op family (default {CI_CALLS}; a long campaign: 100000)")
    group.addoption("--fuzz-seed", type=int, default=0, help="campaign seed (default 0)")


@pytest.fixture
def switch_often():
    """Make the interpreter switch threads every microsecond, so races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)
