"""The helper threads that share parallel kernel calls (fastcopy/dma/crew.py, fastcopy/kernels/crew.py): every
job kind bit for bit against the same kernels run chunk by chunk on the calling thread, every view width,
unaligned bases, many jobs in a row (the claim protocol), sleeping helpers woken, back-off, a forked child."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from fastcopy import config
from fastcopy.dma import abi, crew
from fastcopy.dma import kernels as K
from fastcopy.kernels import crew as KC
from fastcopy.memory import aligned_empty

pytestmark = pytest.mark.skipif(not crew.SUPPORTED, reason="helper threads need x86-64 Linux")
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture(autouse=True)
def _numba_and_threads(monkeypatch):
    K.load()
    monkeypatch.setattr(config, "THREADS", 2)
    monkeypatch.setattr(crew, "ENABLED", True)
    monkeypatch.setattr(config, "SLOW_HELPER", float("inf"))  # no back-off on a busy machine (timing-free)
    crew._state.update(skip=0, backoff=1)
    yield
    crew._state.update(skip=0, backoff=1)
    if crew._state["box"] is not None:
        crew._state["box"][KC.SPIN] = crew._state["spin"]


def _strided_job(rng, w: int, n_chunks: int):
    """A copy step over many offsets, cut into chunks of the offsets list (as the lowering does)."""
    burst = int(rng.integers(1, 40))
    n_off = int(rng.integers(n_chunks, 4 * n_chunks + 1))
    stride = burst + int(rng.integers(0, 5))
    shift = int(rng.integers(0, 3))  # (writes never overlap in a kernel step: the order of chunks is free)
    doffs = tuple(shift + k * stride for k in range(n_off))
    soffs = tuple(int(x) for x in rng.permutation(n_off) * stride)
    loops = ((1, 0, 0),) * abi.MAX_LOOPS
    cuts = np.linspace(0, n_off, n_chunks + 1).astype(int)
    metas = np.stack([abi.pack(burst, loops, (int(a), int(b), 0, 1), doffs, soffs) for a, b in zip(cuts, cuts[1:])])
    return metas, n_off * stride + 8


def _copy_case(seed: int, w: int, n_chunks: int):
    """A copy job, its source and the destination the serial kernel writes."""
    rng = np.random.default_rng(seed)
    metas, size = _strided_job(rng, w, n_chunks)
    src = rng.integers(0, 256, (size + 2) * w, dtype=np.uint8).view(UINT[w])
    want = np.zeros(size + 2, UINT[w])
    for m in metas:
        K.copy_strided(want, 0, src, 0, m)
    return metas, src, want


@pytest.mark.parametrize("w", [1, 2, 4, 8])
@pytest.mark.parametrize("n_chunks", [2, 3, 8])
def test_copy_and_fill_jobs_match_the_serial_kernels(w, n_chunks):
    rng = np.random.default_rng(w * 10 + n_chunks)
    for _ in range(20):
        metas, size = _strided_job(rng, w, n_chunks)
        src = rng.integers(0, 2**8, size * w + 8, dtype=np.uint8).view(UINT[w])
        dst, want = np.zeros(size + 2, UINT[w]), np.zeros(size + 2, UINT[w])
        dbase, sbase = int(rng.integers(0, 2)), int(rng.integers(0, 2))
        assert crew.run(crew.COPY, dst, dbase, src, sbase, metas)
        for m in metas:
            K.copy_strided(want, dbase, src, sbase, m)
        assert np.array_equal(dst, want)
        value = np.uint64(int(rng.integers(0, 2**63)))
        assert crew.run(crew.FILL, dst, dbase, dst, 0, metas, value)
        for m in metas:
            K.fill_strided(want, dbase, m, value)
        assert np.array_equal(dst, want)


@pytest.mark.parametrize("shift", [0, 16, 5])
@pytest.mark.parametrize("nt", [0, 1])
def test_dense_and_fill_dense_jobs(shift, nt):
    rng = np.random.default_rng(shift + nt)
    n = 300_001
    src = rng.integers(0, 256, n + 64, dtype=np.uint8)
    dst, want = aligned_empty(n + 64, offset=shift), np.zeros(n + 64, np.uint8)
    dst[:] = 7
    want[:] = 7
    cuts = [0, 4096, 4096 * 30, 200_000, n]
    table = np.array([(a, b - a) for a, b in zip(cuts, cuts[1:])], np.int64)
    assert crew.run(crew.DENSE, dst, 3, src, 11, table, nt=nt)
    want[3:3 + n] = src[11:11 + n]
    assert np.array_equal(dst, want)
    page = aligned_empty(4096)
    page[:] = 1
    assert crew.run(crew.FILL_DENSE, dst, 5, page, 0, table)
    want[5:5 + n] = 1
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("kind", ["transpose", "rows", "elements"])
def test_layout_jobs(kind):
    rng = np.random.default_rng(1)
    rows, blocks = 48, 24  # (rows, blocks of 32 bytes) -> (blocks, rows)
    src = rng.integers(0, 256, rows * blocks * 32, dtype=np.uint8)
    dst, want = np.zeros_like(src), np.zeros_like(src)
    if kind == "elements":  # (48, 384) uint16 elements -> (384, 48)
        w, cols = 2, blocks * 16
        a, c = (cols, w, rows * w), (rows, cols * w, w)
        chunks = [(0, 1, lo, lo + 128) for lo in range(0, cols, 128)]
        metas = np.stack([abi.pack_transpose(w, (1, 0, 0), a, c, (1, 1), False, ch) for ch in chunks])
        job, kernel = crew.ELEMENTS, K.transpose_elements
        assert crew.run(job, dst, 0, src, 0, metas)
        assert np.array_equal(dst.view(np.uint16).reshape(cols, rows), src.view(np.uint16).reshape(rows, cols).T)
    elif kind == "transpose":
        a, c = (rows, blocks * 32, 32), (blocks, 32, rows * 32)
        chunks = [(0, 1, lo, lo + 12) for lo in range(0, rows, 12)]
        metas = np.stack([abi.pack_transpose(32, (1, 0, 0), a, c, (8, 4), False, ch) for ch in chunks])
        job, kernel = crew.TRANSPOSE, K.transpose_blocks
    else:
        burst = blocks * 32
        chunks = [(lo, lo + 4, 0, 4) for lo in range(0, 12, 4)]
        metas = np.stack([abi.pack_transpose(burst, (12, 4 * burst, 4 * burst), (4, burst, burst), (1, 0, burst),
                                             (1, 1), True, ch) for ch in chunks])
        job, kernel = crew.ROWS, K.copy_rows
    assert crew.run(job, dst, 0, src, 0, metas)
    for m in metas:
        kernel(want, 0, src, 0, m)
    assert np.array_equal(dst, want)


def test_many_jobs_in_a_row_and_after_the_helpers_slept(monkeypatch):
    """The claim protocol over thousands of jobs (each chunk exactly once), then with helpers that went to
    sleep between jobs and are woken (or not) for the next one."""
    metas, src, want = _copy_case(5, 8, 4)
    for _ in range(3000):
        dst = np.zeros_like(want)
        assert crew.run(crew.COPY, dst, 0, src, 0, metas)
        assert np.array_equal(dst, want)
    import time
    for wake_bytes in (0, 1 << 60):
        monkeypatch.setattr(config, "WAKE_BYTES", wake_bytes)
        for _ in range(5):
            time.sleep((config.SPIN_US + 2000) * 1e-6)  # the helpers are asleep now
            dst = np.zeros_like(want)
            assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 20)
            assert np.array_equal(dst, want)


def test_back_off_after_a_slow_helper_runs_alone(monkeypatch):
    metas, src, want = _copy_case(6, 4, 2)
    monkeypatch.setattr(config, "SLOW_HELPER", -1.0)  # every shared call with a spinning helper counts as slow
    for _ in range(1000):  # (a call that had to wake a sleeping helper gives no verdict)
        dst = np.zeros_like(want)
        assert crew.run(crew.COPY, dst, 0, src, 0, metas)
        assert np.array_equal(dst, want)
        if crew._state["skip"]:
            break
    skip = crew._state["skip"]
    assert skip == 2 and crew._state["box"][KC.SPIN] == 0  # the helpers sleep while the caller runs alone
    for _ in range(skip):
        assert not crew.run(crew.COPY, np.zeros_like(want), 0, src, 0, metas)
    assert crew._state["box"][KC.SPIN] == crew._state["spin"]  # spinning again for the next (trial) call
    dst = np.zeros_like(want)
    assert crew.run(crew.COPY, dst, 0, src, 0, metas)
    assert np.array_equal(dst, want)
    assert crew._state["skip"] in (0, 4)  # slow again (or the helper had spun out: no verdict)


def test_disabled_or_one_thread_runs_nothing(monkeypatch):
    table = np.zeros((2, 2), np.int64)
    a = np.zeros(8, np.uint8)
    monkeypatch.setattr(crew, "ENABLED", False)
    assert not crew.run(crew.DENSE, a, 0, a, 0, table)
    monkeypatch.setattr(crew, "ENABLED", True)
    monkeypatch.setattr(config, "THREADS", 1)
    assert not crew.run(crew.DENSE, a, 0, a, 0, table)


def test_a_forked_child_starts_its_own_helpers(tmp_path):
    code = ("import os, numpy as np\n"
            "from fastcopy import config\n"
            "from fastcopy.dma import crew, kernels\n"
            "kernels.load()\n"
            "config.SLOW_HELPER = float('inf')\n"
            "t = np.array([[0, 4096], [4096, 4096], [8192, 4096]], np.int64)\n"
            "s = np.arange(12288, dtype=np.uint32).view(np.uint8)[:12288]\n"
            "d = np.zeros(12288, np.uint8)\n"
            "assert crew.run(crew.DENSE, d, 0, s, 0, t)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    d2 = np.zeros(12288, np.uint8)\n"
            "    ok = crew.run(crew.DENSE, d2, 0, s, 0, t) and np.array_equal(d2, s)\n"
            "    ok = ok and crew._state['pid'] == os.getpid() and len(crew._state['threads']) == 1\n"
            "    os._exit(0 if ok else 3)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "assert os.waitstatus_to_exitcode(status) == 0, status\n"
            "assert np.array_equal(d, s)\n"
            "crew.stop()\n"
            "print('ok')\n")
    env = dict(os.environ, FASTCOPY_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("mode", ["shared", "alone", "backing off"])
def test_repeated_large_datacopy_takes_the_prepared_shared_path(monkeypatch, mode):
    """A repeated DataCopy of a few MiB runs prepared with the crew's job header made once; with the crew off
    or backing off, the same chunks run on the calling thread: the same bytes and definedness either way."""
    from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition

    if mode == "alone":
        monkeypatch.setattr(crew, "ENABLED", False)
    elif mode == "backing off":
        crew._state.update(skip=1000, backoff=256)
    n = 3 << 18  # 3 MiB of uint32, in 3 bursts of 1 MiB: one contiguous span
    rng = np.random.default_rng(7)
    src = rng.integers(0, 2**32, n, dtype=np.uint32)
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": 4 * n + 64})
    ub = pipe.alloc(TPosition.VECIN, "uint32", n)
    out = np.zeros(n, np.uint32)
    p = DataCopyParams(3, n * 4 // 3 // 32, 0, 0)
    g_in, g_out = GlobalTensor(src), GlobalTensor(out)
    for k in range(4):
        src[k::7] += 1  # (new values each round: a stale copy would show)
        DataCopy(ub, g_in, p)
        DataCopy(g_out, ub, p)
        assert np.array_equal(ub.numpy(), src) and np.array_equal(out, src) and ub.defined().all()
    hit = ub._prepared[p.key()][4]  # prepared on the first repeat: the chunk table and the crew's job header
    assert type(hit[4]) is tuple and hit[4][0].shape[0] == 2 and (hit[4][1] is not None) == crew.SUPPORTED
    assert not pipe.buffer(ub.memory.phys).plane[4 * n:].any()  # nothing marked past the span
