"""Basic DataCopy: 1 KiB, 128 KiB and 64 MiB GM -> UB, against np.copyto of the same bytes.

Run: python -m pytest bench/bench_datacopy.py --benchmark-only --benchmark-group-by=group
"""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition

SIZES = {"1KiB": 1 << 10, "128KiB": 128 << 10, "64MiB": 64 << 20}


def _params(nbytes):
    blocks = nbytes // 32
    if blocks <= 65535:
        return DataCopyParams(1, blocks)
    per = 32768  # 1 MiB bursts
    return DataCopyParams(blocks // per, per)


def _setup(nbytes):
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": max(nbytes, 192 << 10)})
    src = np.random.default_rng(0).integers(0, 2**16, nbytes // 2, dtype=np.uint16).view(np.float16)
    ub = pipe.alloc(TPosition.VECIN, "half", src.size)
    return GlobalTensor(src), ub, src


@pytest.mark.parametrize("size", SIZES)
def test_datacopy_gm_to_ub(benchmark, size):
    nbytes = SIZES[size]
    gm, ub, src = _setup(nbytes)
    params = _params(nbytes)
    DataCopy(ub, gm, params)  # warm-up: compile + plan
    benchmark.group = f"datacopy-{size}"
    benchmark.extra_info["bytes"] = nbytes
    benchmark(DataCopy, ub, gm, params)
    assert np.array_equal(ub.numpy().view(np.uint16), src.view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_datacopy_ub_to_gm(benchmark, size):
    nbytes = SIZES[size]
    gm, ub, src = _setup(nbytes)
    DataCopy(ub, gm, _params(nbytes))
    out = np.empty_like(src)
    g_out = GlobalTensor(out)
    params = _params(nbytes)
    DataCopy(g_out, ub, params)
    benchmark.group = f"datacopy-{size}"
    benchmark.extra_info["bytes"] = nbytes
    benchmark(DataCopy, g_out, ub, params)


@pytest.mark.parametrize("size", SIZES)
def test_baseline_np_copyto(benchmark, size):
    nbytes = SIZES[size]
    a = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)
    b = np.empty_like(a)
    np.copyto(b, a)
    benchmark.group = f"datacopy-{size}"
    benchmark.extra_info["bytes"] = nbytes
    benchmark(np.copyto, b, a)
