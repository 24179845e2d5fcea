"""DataCopyPad: GM -> UB of 1000 ragged rows of 59 float32 (236 B rows padded to 256 B), UB -> GM back, and a
64 MiB row-wise copy (2048 rows of 8191 float32 padded to 8192), against np.copyto of the same bytes and the
plain-numpy way (2-D slice assignment + first-element dummy fill).

Run: python -m pytest bench/bench_pad.py --benchmark-only --benchmark-group-by=group -o python_files='bench_*.py'
     (or python bench/report.py -k pad for the ratio table)
"""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy import DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GlobalTensor, TPipe, TPosition

#: case -> (rows, floats per row); rows are padded to the next 32 bytes in UB
CASES = {"1000x59-f32": (1000, 59), "64MiB-2048x8191-f32": (2048, 8191)}


def _setup(rows, cols):
    width = -(-cols * 4 // 32) * 8  # floats per padded UB row
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": max(rows * width * 4, 192 << 10)})
    src = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    ub = pipe.alloc(TPosition.VECIN, "float", rows * width)
    cp = DataCopyExtParams(rows, cols * 4, 0, 0, 0)
    return src, ub, cp, width


def _numpy_in(out2d, src, cols):
    """The numpy way of GM -> UB with A2 padding: rows into a padded 2-D view, dummy = each row's first element."""
    out2d[:, :cols] = src
    out2d[:, cols:] = src[:, :1]


@pytest.mark.parametrize("case", CASES)
def test_pad_gm_to_ub(benchmark, case):
    rows, cols = CASES[case]
    src, ub, cp, width = _setup(rows, cols)
    gm = GlobalTensor(src)
    pp = DataCopyPadExtParams(False, 0, 0, 0)
    DataCopyPad(ub, gm, cp, pp)  # warm-up: compile + plan
    benchmark.group = f"pad-gm2ub-{case}"
    benchmark.extra_info["bytes"] = src.nbytes
    benchmark(DataCopyPad, ub, gm, cp, pp)
    want = np.empty((rows, width), np.float32)
    _numpy_in(want, src, cols)
    assert np.array_equal(ub.numpy().view(np.uint32), want.reshape(-1).view(np.uint32))


@pytest.mark.parametrize("case", CASES)
def test_pad_ub_to_gm(benchmark, case):
    rows, cols = CASES[case]
    src, ub, cp, width = _setup(rows, cols)
    DataCopyPad(ub, GlobalTensor(src), cp, DataCopyPadExtParams(False, 0, 0, 0))
    out = np.zeros_like(src)
    g_out = GlobalTensor(out)
    DataCopyPad(g_out, ub, cp)  # warm-up
    benchmark.group = f"pad-ub2gm-{case}"
    benchmark.extra_info["bytes"] = src.nbytes
    benchmark(DataCopyPad, g_out, ub, cp)
    assert np.array_equal(out.view(np.uint32), src.view(np.uint32))


@pytest.mark.parametrize("direction", ["gm2ub", "ub2gm"])
@pytest.mark.parametrize("case", CASES)
def test_baseline_np_copyto(benchmark, case, direction):
    rows, cols = CASES[case]
    a = np.random.default_rng(0).integers(0, 255, rows * cols * 4, dtype=np.uint8)
    b = np.empty_like(a)
    np.copyto(b, a)
    benchmark.group = f"pad-{direction}-{case}"
    benchmark.extra_info["bytes"] = a.nbytes
    benchmark.extra_info["role"] = "copyto"
    benchmark(np.copyto, b, a)


@pytest.mark.parametrize("case", CASES)
def test_baseline_numpy_gm_to_ub(benchmark, case):
    rows, cols = CASES[case]
    src, _, _, width = _setup(rows, cols)
    out2d = np.empty((rows, width), np.float32)
    _numpy_in(out2d, src, cols)
    benchmark.group = f"pad-gm2ub-{case}"
    benchmark.extra_info["bytes"] = src.nbytes
    benchmark.extra_info["role"] = "numpy"
    benchmark(_numpy_in, out2d, src, cols)


@pytest.mark.parametrize("case", CASES)
def test_baseline_numpy_ub_to_gm(benchmark, case):
    rows, cols = CASES[case]
    src, _, _, width = _setup(rows, cols)
    ub2d = np.empty((rows, width), np.float32)
    _numpy_in(ub2d, src, cols)
    out = np.empty_like(src)
    benchmark.group = f"pad-ub2gm-{case}"
    benchmark.extra_info["bytes"] = src.nbytes
    benchmark.extra_info["role"] = "numpy"
    benchmark(np.copyto, out, ub2d[:, :cols])
