"""Parallel kernels under concurrent use: several Python threads at once, and the on-disk kernel cache across
thread counts."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np

from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition
from fastcopy.config import PARALLEL_BYTES


def _job(seed: int, results: dict, errors: list) -> None:
    try:
        nbytes = 4 * PARALLEL_BYTES  # large enough to be split across the worker threads
        rng = np.random.default_rng(seed)
        src = rng.integers(0, 2**32, nbytes // 4, dtype=np.uint32)
        pipe = TPipe(product="ATLAS_A2", capacities={"UB": 2 * nbytes})
        ub = pipe.alloc(TPosition.VECIN, "uint32", src.size)
        out = np.zeros_like(src)
        p = DataCopyParams(4, nbytes // 4 // 32, 0, 0)
        for _ in range(3):
            DataCopy(ub, GlobalTensor(src), p)
            DataCopy(GlobalTensor(out), ub, p)
        results[seed] = bool(np.array_equal(out, src) and ub.defined().all())
    except Exception as exc:  # pragma: no cover - reported below
        errors.append(exc)


def test_parallel_kernels_from_four_python_threads():
    results, errors = {}, []
    threads = [threading.Thread(target=_job, args=(seed, results, errors)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {0: True, 1: True, 2: True, 3: True}


def test_kernel_cache_survives_a_change_of_thread_count(tmp_path):
    code = ("import numpy as np, fastcopy as fc\n"
            "from fastcopy.kernels import copy_strided\n"
            "p = fc.TPipe(capacities={'UB': 8 << 20})\n"
            "u = p.alloc(fc.TPosition.VECIN, 'uint32', 1 << 20)\n"
            "a = np.arange(1 << 20, dtype=np.uint32)\n"
            "fc.DataCopy(u, fc.GlobalTensor(a), fc.DataCopyParams(4, 32768, 0, 0))\n"
            "assert np.array_equal(u.numpy(), a)\n"
            "from fastcopy.kernels import crew\n"
            "ks = (copy_strided, crew.go, crew.run_chunk)\n"
            "print(sum(sum(k.stats.cache_hits.values()) for k in ks), "
            "sum(sum(k.stats.cache_misses.values()) for k in ks))\n")
    runs = []
    for threads in ("2", "1", "2"):
        env = dict(os.environ, FASTCOPY_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        runs.append(tuple(int(x) for x in out.stdout.split()))
    # after the first run the kernels (shared with the helper threads or not) come from the on-disk cache,
    # whatever the thread count
    assert all(hits >= 1 and misses == 0 for hits, misses in runs[1:]), runs
