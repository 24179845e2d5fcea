"""Threads: campaigns of randomised calls running concurrently in one process (shared plan caches, signature
table, worker pool), and threads sharing one core (pipe) on their own tensors; zero escapes either way."""

from __future__ import annotations

import threading

import numpy as np

from fastcopy import DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GlobalTensor, TPipe, TPosition
from fuzzlib import campaign


def test_concurrent_campaigns(switch_often):
    results = {}

    def run(k, family):
        results[k] = campaign(family, 60, 1000 + k, None)

    threads = [threading.Thread(target=run, args=(k, f)) for k, f in enumerate(["datacopy", "pad", "nz", "slice"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results.values():
        assert r["escapes"] == 0, r["escape_list"]


def test_threads_sharing_one_core(switch_often):
    pipe = TPipe(product="ATLAS_A2")
    errors = []
    barrier = threading.Barrier(4)

    def work(k):
        rng = np.random.default_rng(k)
        barrier.wait()
        for i in range(40):
            n = int(rng.integers(1, 200))
            src = rng.integers(0, 2**16, n, dtype=np.uint16).view(np.float16)
            ub = pipe.alloc(TPosition.VECIN, "half", -(-n // 16) * 16)
            out = np.zeros(n, np.float16)
            DataCopyPad(ub, GlobalTensor(src), DataCopyExtParams(1, 2 * n, 0, 0, 0),
                        DataCopyPadExtParams(False, 0, 0, 0))
            DataCopyPad(GlobalTensor(out), ub, DataCopyExtParams(1, 2 * n, 0, 0, 0))
            if not np.array_equal(out.view(np.uint16), src.view(np.uint16)):
                errors.append((k, i))
            if i % 10 == 0:
                with pipe:
                    DataCopy(ub, GlobalTensor(np.zeros(ub.size, np.float16)), ub.size)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
