"""ND2NZ / NZ2ND of a float16 matrix (4096 x 4096 and 64 x 64): through to_nz / from_nz, through DataCopy on a
TPipe (capacities raised for the large matrix), against np.copyto of the same bytes and the plain numpy
reshape/transpose/copy. ``*_out`` variants write into a preallocated array (like np.copyto); the others
return a fresh one (first-touch page faults included, like the numpy way).

Run: python -m pytest bench/bench_nz.py --benchmark-only --benchmark-group-by=group \
         --benchmark-columns=median,ops
GB/s = extra_info["bytes"] / median.
"""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, from_nz, nd2nz_params, nz2nd_params, to_nz

SIZES = {"4096": 4096, "64": 64}
#: NZ2ND srcNStride (the NZ row count) is at most 4095: the large matrix goes out in row blocks of this size
NZ2ND_ROWS = 2048


def _matrix(n):
    return np.random.default_rng(0).integers(0, 2**16, (n, n), dtype=np.uint16).view(np.float16)


def _numpy_to_nz(a):
    n, d = a.shape
    return np.ascontiguousarray(a.reshape(n // 16, 16, d // 16, 16).transpose(2, 0, 1, 3))


def _numpy_from_nz(nz, n, d):
    return np.ascontiguousarray(nz.transpose(1, 2, 0, 3)).reshape(n, d)


def _run(benchmark, group, nbytes, fn, *args):
    fn(*args)  # untimed warm-up: compile, plan
    benchmark.group = group
    benchmark.extra_info["bytes"] = nbytes
    return benchmark(fn, *args)


def _pipe(n):
    return TPipe("ATLAS_A2", capacities={"L1": 64 << 20, "UB": 64 << 20}) if n > 64 else TPipe("ATLAS_A2")


# --------------------------------------------------------------------------------------------------- ND2NZ
@pytest.mark.parametrize("size", SIZES)
def test_nd2nz_to_nz(benchmark, size):
    a = _matrix(SIZES[size])
    nz = _run(benchmark, f"nd2nz-{size}", a.nbytes, to_nz, a)
    assert np.array_equal(nz.view(np.uint16), _numpy_to_nz(a).view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_nd2nz_to_nz_out(benchmark, size):
    a = _matrix(SIZES[size])
    out = np.empty_like(_numpy_to_nz(a))
    _run(benchmark, f"nd2nz-{size}", a.nbytes, to_nz, a, None, out)
    assert np.array_equal(out.view(np.uint16), _numpy_to_nz(a).view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_nd2nz_datacopy(benchmark, size):
    n = SIZES[size]
    a = _matrix(n)
    pipe = _pipe(n)
    dst = pipe.alloc(TPosition.A1, "half", n * n)
    _run(benchmark, f"nd2nz-{size}", a.nbytes, DataCopy, dst, GlobalTensor(a), nd2nz_params(n, n, "half"))
    assert np.array_equal(dst.numpy().view(np.uint16), _numpy_to_nz(a).reshape(-1).view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_nd2nz_numpy(benchmark, size):
    a = _matrix(SIZES[size])
    _run(benchmark, f"nd2nz-{size}", a.nbytes, _numpy_to_nz, a)


@pytest.mark.parametrize("size", SIZES)
def test_nd2nz_np_copyto(benchmark, size):
    a = _matrix(SIZES[size])
    _run(benchmark, f"nd2nz-{size}", a.nbytes, np.copyto, np.empty_like(a), a)


# --------------------------------------------------------------------------------------------------- NZ2ND
@pytest.mark.parametrize("size", SIZES)
def test_nz2nd_from_nz(benchmark, size):
    n = SIZES[size]
    a = _matrix(n)
    nz = to_nz(a)
    out = _run(benchmark, f"nz2nd-{size}", a.nbytes, from_nz, nz, a.shape)
    assert np.array_equal(out.view(np.uint16), a.view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_nz2nd_from_nz_out(benchmark, size):
    a = _matrix(SIZES[size])
    nz = to_nz(a)
    out = np.empty_like(a)
    _run(benchmark, f"nz2nd-{size}", a.nbytes, from_nz, nz, a.shape, None, out)
    assert np.array_equal(out.view(np.uint16), a.view(np.uint16))


def _nz2nd_calls(calls, params):
    for gm, ub in calls:
        DataCopy(gm, ub, params)


@pytest.mark.parametrize("size", SIZES)
def test_nz2nd_datacopy(benchmark, size):
    n = SIZES[size]
    a = _matrix(n)
    rows = min(n, NZ2ND_ROWS)
    pipe = _pipe(n)
    ub = pipe.alloc(TPosition.VECOUT, "half", n * n)
    ub.numpy()[:] = to_nz(a.reshape(n // rows, rows, n)).reshape(-1)  # one NZ matrix per row block
    ub.set_defined()
    out = np.zeros_like(a)
    gm = GlobalTensor(out)
    calls = [(gm, ub)] if rows == n else [(gm[k * n], ub[k * n]) for k in range(0, n, rows)]
    _run(benchmark, f"nz2nd-{size}", a.nbytes, _nz2nd_calls, calls, nz2nd_params(rows, n, "half"))
    assert np.array_equal(out.view(np.uint16), a.view(np.uint16))


@pytest.mark.parametrize("size", SIZES)
def test_nz2nd_numpy(benchmark, size):
    n = SIZES[size]
    nz = _numpy_to_nz(_matrix(n))
    _run(benchmark, f"nz2nd-{size}", nz.nbytes, _numpy_from_nz, nz, n, n)


@pytest.mark.parametrize("size", SIZES)
def test_nz2nd_np_copyto(benchmark, size):
    a = _matrix(SIZES[size])
    _run(benchmark, f"nz2nd-{size}", a.nbytes, np.copyto, np.empty_like(a), a)
