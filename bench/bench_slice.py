"""Sliced DataCopy: a 3-D slice ``a[::2, ::2, 64:192]`` (8 MiB) out of a 64 MiB float32 GM tensor into UB.

Baselines move the same bytes: ``np.copyto`` of 8 MiB contiguous, and the plain-numpy way (index + copy into a
preallocated array). The SliceInfo lists come from ``slice_infos``: one dimension-0 run of 128 floats per row
(512 bytes), 128 rows with a gap, 128 planes above.

    /tmp/venv/bin/python -m pytest -q -p no:cacheprovider bench/bench_slice.py --benchmark-only
    /tmp/venv/bin/python bench/bench_slice.py        # medians, GB/s and ratios
"""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, slice_infos

SHAPE = (256, 256, 256)  # float32: 64 MiB
INDEX = np.s_[::2, ::2, 64:192]
GROUP = "slice-3d-of-64MiB-f32-gm2ub-8MiB"


def setup():
    a = np.random.default_rng(0).random(SHAPE, dtype=np.float32)
    n = a[INDEX].size
    pipe = TPipe("ATLAS_A2", capacities={"UB": n * 4})
    x = pipe.alloc(TPosition.VECIN, "float", n)
    gm = GlobalTensor(a)
    dst_info, src_info = slice_infos(SHAPE, INDEX, "float", product=pipe.product)

    def fastcopy_slice():
        DataCopy(x, gm, dst_info, src_info, len(src_info))

    flat = np.ascontiguousarray(a.reshape(-1)[:n])
    out = np.empty(n, np.float32)
    out3 = out.reshape(a[INDEX].shape)

    def copyto_same_bytes():
        np.copyto(out, flat)

    def numpy_index_copy():
        np.copyto(out3, a[INDEX])

    fastcopy_slice()  # untimed warm-up: numba compile, plan cache, page faults
    assert np.array_equal(x.numpy(), a[INDEX].ravel())
    return {"fastcopy": fastcopy_slice, "np.copyto": copyto_same_bytes, "numpy index+copy": numpy_index_copy}, n * 4


@pytest.fixture(scope="module")
def cases():
    return setup()


ROLES = {"fastcopy": "fastcopy", "np.copyto": "copyto", "numpy index+copy": "numpy"}


def _bench(benchmark, cases, name):
    funcs, nbytes = cases
    funcs[name]()  # warm-up
    benchmark.group = GROUP
    benchmark.extra_info["bytes"] = nbytes
    benchmark.extra_info["role"] = ROLES[name]
    benchmark(funcs[name])
    benchmark.extra_info["GB/s"] = round(nbytes / benchmark.stats.stats.median / 1e9, 2)


def test_slice_fastcopy(benchmark, cases):
    _bench(benchmark, cases, "fastcopy")


def test_slice_baseline_copyto(benchmark, cases):
    _bench(benchmark, cases, "np.copyto")


def test_slice_baseline_numpy_index(benchmark, cases):
    _bench(benchmark, cases, "numpy index+copy")


if __name__ == "__main__":
    import time

    funcs, nbytes = setup()
    med = {}
    for name, f in funcs.items():
        f()
        times = []
        for _ in range(30):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        med[name] = float(np.median(times))
    print(f"{GROUP}: {nbytes / 2**20:.0f} MiB moved")
    for name, t in med.items():  # "x copyto" as in bench/report.py: baseline time / this time (> 1 = faster)
        print(f"  {name:18s} median {t * 1e3:7.2f} ms  {nbytes / t / 1e9:6.2f} GB/s  "
              f"x copyto {med['np.copyto'] / t:5.2f}  x numpy {med['numpy index+copy'] / t:5.2f}")
