"""pytest helpers: compare a kernel's (or an emulation's) output with fastcopy golden data.

    from fastcopy.testing import assert_golden_equal, compare_golden

    def test_my_kernel(tmp_path):
        out = run_my_kernel(...)                                   # numpy array, a tensor, or a .bin path
        assert_golden_equal(out, "golden/add")                     # a golden folder (its manifest says the rest)
        assert_golden_equal(out, "golden/mm", buffer="cGm", rtol=1e-3)
        assert compare_golden(out, "golden/add/output/golden.bin")  # a Comparison: truthy on PASS

The comparison is the one of ``fastcopy verify``: undefined elements (mask 0) are skipped, the golden must match
its manifest's sha256, tolerances come from the arguments or else from the case (per-output ``rtol``/``atol``/
``compare``), and the failure message is the same report of the first (or, with tolerances, the worst)
mismatches.
"""

from __future__ import annotations

import os

import numpy as np

from .golden.verify import Comparison, compare

__all__ = ["assert_golden_equal", "compare_golden", "Comparison", "GoldenMismatch"]


class GoldenMismatch(AssertionError):
    """``assert_golden_equal`` failed; ``.comparison`` is the :class:`Comparison`."""

    def __init__(self, message: str, comparison: Comparison):
        super().__init__(message)
        self.comparison = comparison


def _actual_array(actual) -> np.ndarray:
    from .memory import _Tensor

    if isinstance(actual, _Tensor):
        return np.ascontiguousarray(actual.numpy())
    if isinstance(actual, (str, os.PathLike)):
        return np.fromfile(actual, np.uint8)
    return np.ascontiguousarray(np.asarray(actual))


def compare_golden(actual, golden, *, buffer: str | None = None, rtol=None, atol=None, rule: str | None = None,
                   dtype=None, mask=None, use_mask: bool = True, limit: int = 10) -> Comparison:
    """Compare ``actual`` (an array, a Global/LocalTensor, or a raw ``.bin`` path) with ``golden`` (a golden
    folder, or a golden file inside one, or a bare file with ``dtype=``). Returns the :class:`Comparison`
    (truthy on PASS; ``str()`` is the report)."""
    from .golden.load import open_golden

    g = open_golden(golden, buffer=buffer, dtype=dtype, mask=mask, use_mask=use_mask)
    if g.dtype is None:
        arr = np.asarray(actual) if not isinstance(actual, (str, os.PathLike)) else None
        if arr is None or arr.dtype == np.uint8:
            raise ValueError(f"compare_golden: {golden} has no manifest to give the dtype; pass dtype=")
        g.dtype = arr.dtype
    arr = _actual_array(actual)
    if arr.dtype != np.uint8 and arr.dtype != g.dtype:
        raise ValueError(f"compare_golden: the output is {arr.dtype}, the golden {g.dtype}; convert it (or pass "
                         "its raw bytes)")
    rtol, atol, rule = tolerances(g.tolerance, rtol, atol, rule)
    return compare(arr, g.data, g.dtype, g.mask, g.shape, limit, rtol=rtol, atol=atol, rule=rule,
                   context={"entry": g.entry, "folder": g.folder, "manifest": g.manifest})


def tolerances(case: dict, rtol, atol, rule) -> tuple:
    """(rtol, atol, rule): what the caller gives; the case's per-output values where the caller gives nothing
    (a rule named by the caller comes without the case's tolerances)."""
    if rule is not None:
        return rtol, atol, rule
    return (rtol if rtol is not None else case.get("rtol"), atol if atol is not None else case.get("atol"),
            case.get("compare"))


def assert_golden_equal(actual, golden, *, rtol=None, atol=None, buffer: str | None = None, rule: str | None = None,
                        dtype=None, mask=None, use_mask: bool = True, limit: int = 10) -> Comparison:
    """Raise :class:`GoldenMismatch` (an AssertionError) with ``fastcopy verify``'s report unless ``actual``
    matches the golden (bit for bit, or within ``rtol``/``atol``, over the defined elements). Returns the
    Comparison on success."""
    cmp = compare_golden(actual, golden, buffer=buffer, rtol=rtol, atol=atol, rule=rule, dtype=dtype, mask=mask,
                         use_mask=use_mask, limit=limit)
    if not cmp:
        raise GoldenMismatch(f"output differs from golden {os.fspath(golden)}:\n{cmp.report(limit)}", cmp)
    return cmp
