"""The helper threads that share parallel kernel calls (fastcopy/dma/crew.py, fastcopy/kernels/crew.py): every
job kind bit for bit against the same kernels run chunk by chunk on the calling thread, every view width,
unaligned bases, many jobs in a row (the claim protocol, from both ends), sleeping helpers woken, back-off, a
forked child; the sharing of small copies with a helper that is awake (dense jobs cut on lines, the policy of
when to share and when to wake, decided on a private box without threads: no timing), through DataCopy too;
the helpers' longer spin after a large job's chunk."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from numba import njit

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
    monkeypatch.setattr(config, "WAKE_BYTES", 0)  # every job is offered to the helpers (woken if asleep)
    crew.tune()
    crew.reset()
    yield
    monkeypatch.undo()
    crew.tune()
    crew.reset()


def _box():
    """The running crew's box (started by a first job)."""
    crew.run(crew.DENSE, np.zeros(8, np.uint8), 0, np.zeros(8, np.uint8), 0, np.array([[0, 8]], np.int64))
    return crew._state["box"]


def _private_box(**policy):
    """A box with no helper threads (the caller then runs every chunk itself): the policy of go(), decided from
    the box's slots, tested without any timing. ``policy``: config values for it."""
    box = crew._new_box()
    saved = {k: getattr(config, k) for k in policy}
    try:
        for k, v in policy.items():
            setattr(config, k, v)
        crew._start()  # (the TSC calibration)
        crew.tune(box)
    finally:
        for k, v in saved.items():
            setattr(config, k, v)
    return box


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
    for wake_bytes in (0, 1 << 60):
        monkeypatch.setattr(config, "WAKE_BYTES", wake_bytes)
        for _ in range(5):
            time.sleep((max(config.SPIN_US, config.BIG_SPIN_US) + 2000) * 1e-6)  # the helpers are asleep now
            dst = np.zeros_like(want)
            assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 20)
            assert np.array_equal(dst, want)


def test_back_off_after_a_slow_helper_runs_alone(monkeypatch):
    metas, src, want = _copy_case(6, 4, 2)
    box = _box()
    monkeypatch.setattr(config, "SLOW_HELPER", -1.0)  # every shared call with a spinning helper counts as slow
    monkeypatch.setattr(config, "SLEEP_BACKOFF", 2)  # (the helpers sleep from the first back-off on)
    crew.tune()
    for _ in range(1000):  # (a call that had to wake a sleeping helper gives no verdict)
        dst = np.zeros_like(want)
        assert crew.run(crew.COPY, dst, 0, src, 0, metas)
        assert np.array_equal(dst, want)
        if box[KC.SKIP]:
            break
    skip = int(box[KC.SKIP])
    assert skip == 2 and box[KC.SPIN] == 0  # the helpers sleep while the caller runs alone
    alone = box[KC.ALONE]
    for _ in range(skip):  # backing off: run alone (and right)
        dst = np.zeros_like(want)
        assert crew.run(crew.COPY, dst, 0, src, 0, metas)
        assert np.array_equal(dst, want)
    assert box[KC.ALONE] == alone + skip
    assert box[KC.SPIN] == box[KC.T_SPIN]  # spinning again for the next (trial) call
    dst = np.zeros_like(want)
    assert crew.run(crew.COPY, dst, 0, src, 0, metas)
    assert np.array_equal(dst, want)
    assert box[KC.SKIP] in (0, 4)  # slow again (or the helper had spun out: no verdict)


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
            "s2 = np.arange(1 << 18, dtype=np.uint32).view(np.uint8)\n"  # (a small copy, shared while awake)
            "d3 = np.zeros(s2.size, np.uint8)\n"
            "h = crew.dense_job(d3, 0, s2, 0, s2.size)\n"
            "assert all(crew.run_job(h) for _ in range(50))\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    d2 = np.zeros(12288, np.uint8)\n"
            "    ok = crew.run(crew.DENSE, d2, 0, s, 0, t) and np.array_equal(d2, s)\n"
            "    d3[:] = 0\n"
            "    ok = ok and all(crew.run_job(h) for _ in range(200)) and np.array_equal(d3, s2)\n"
            "    ok = ok and crew._state['pid'] == os.getpid() and len(crew._state['threads']) == 1\n"
            "    os._exit(0 if ok else 3)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "assert os.waitstatus_to_exitcode(status) == 0, status\n"
            "assert np.array_equal(d, s)\n"
            "crew.stop()\n"
            "print('ok')\n")
    run_ok(code)


def run_ok(code: str) -> None:
    """Run ``code`` in a fresh interpreter with two threads; it must print ``ok`` and exit 0."""
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
        box = _box()
        box[KC.SKIP], box[KC.BACKOFF] = 1000, 256
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


# ------------------------------------------------------------------- small copies shared with an awake helper
@njit
def _claim_order(box, sides):
    """Claim chunks of the posted job from the front (0) or the back (1), in the order of ``sides``: the
    indices claimed (-1 once none is left)."""
    out = np.empty(sides.size, np.int64)
    for i in range(sides.size):
        out[i] = KC._claim(box, sides[i] == 1)
    return out


@njit
def _post(box, head):
    return KC._publish(box, head, False)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64])
def test_chunks_claimed_from_both_ends_run_once(n):
    """The caller claims from the front, the helpers from the back: every chunk exactly once, in any
    interleaving, and nothing after the last one; a new job starts whole."""
    box = _private_box()
    table = np.zeros((n, 2), np.int64)
    head = crew.job(crew.DENSE, np.zeros(8, np.uint8), 0, np.zeros(8, np.uint8), 0, table)
    rng = np.random.default_rng(n)
    for _ in range(20):
        _post(box, head)
        got = _claim_order(box, rng.integers(0, 2, n + 3))
        assert sorted(got[:n]) == list(range(n)) and (got[n:] == -1).all()
    _post(box, head)
    assert list(_claim_order(box, np.zeros(n, np.int64))) == list(range(n))
    _post(box, head)
    assert list(_claim_order(box, np.ones(n, np.int64))) == list(range(n))[::-1]


def _dense_case(rng, n, dshift, sshift):
    src = rng.integers(0, 256, n + sshift + 64, dtype=np.uint8)
    dst = aligned_empty(n + dshift + 64, offset=int(rng.integers(0, 64)))
    dst[:] = 0xA5
    want = dst.copy()
    want[dshift:dshift + n] = src[sshift:sshift + n]
    return src, dst, want


@pytest.mark.parametrize("n", [128 << 10, (128 << 10) + 1, 300_001, 1 << 20])
@pytest.mark.parametrize("shifts", [(0, 0), (5, 11), (63, 1), (64, 3)])
def test_dense_job_of_one_copy(monkeypatch, n, shifts):
    """A small copy's job: one piece per thread, cut on the destination's lines, covering every byte once;
    the same bytes as the copy, heads and tails unaligned, shared or alone, many in a row."""
    monkeypatch.setattr(config, "WAKE_BYTES", 1 << 60)  # (a small job: shared only while the helper is awake)
    crew.tune()
    rng = np.random.default_rng(n + shifts[0])
    src, dst, want = _dense_case(rng, n, *shifts)
    head = crew.dense_job(dst, shifts[0], src, shifts[1], n)
    table = head[KC.HEAD:].reshape(-1, 2)
    assert head[KC.H_TADDR] == head.ctypes.data + 8 * KC.HEAD and head[KC.H_NBYTES] == n
    assert table.shape == (2, 2) and table[0, 0] == 0 and table[0, 1] + table[1, 1] == n
    assert (dst.ctypes.data + shifts[0] + table[1, 0]) % 64 == 0
    for k in range(300):
        if k % 3 == 0:
            dst[:] = 0xA5
        assert crew.run_job(head)
        assert np.array_equal(dst, want)


def test_dense_job_below_the_threshold_or_without_threads(monkeypatch):
    a = np.zeros(1 << 20, np.uint8)
    assert crew.dense_job(a, 0, a, 0, config.HOT_BYTES - 1) is None
    assert crew.dense_job(a, 0, a, 0, config.HOT_BYTES) is not None
    monkeypatch.setattr(config, "THREADS", 1)
    assert crew.dense_job(a, 0, a, 0, 1 << 20) is None
    assert not crew.run_job(None)


def _go(box, head):
    return KC.go(box, head)


def test_policy_small_jobs_never_wait_for_a_sleeping_helper():
    """go()'s decisions, on a box with no helper threads (the caller runs every chunk it shares itself):
    a small job with the helpers asleep runs alone, and wakes them (for the next calls) only when the previous
    call was recent; with them awake it is shared; a large one wakes them and is shared (no verdict)."""
    rng = np.random.default_rng(3)
    src, dst, want = _dense_case(rng, 200_000, 3, 5)
    box = _private_box(WAKE_BYTES=1 << 20, HOT_BYTES=1, WAKE_AFTER=2)
    head = crew.dense_job(dst, 3, src, 5, 200_000)
    box[KC.SLEEPING] = 1  # (as if a helper slept on the futex)
    box[KC.T_GAP] = 1 << 62
    box[KC.LAST] = -(1 << 62)  # long ago: an isolated call
    wakes = box[KC.WAKE]
    assert _go(box, head) == KC.ALONE_ASLEEP and np.array_equal(dst, want)
    assert box[KC.WAKE] == wakes  # an isolated small call never wakes a helper
    dst[:] = 0xA5
    assert _go(box, head) == KC.ALONE_ASLEEP and np.array_equal(dst, want)
    assert box[KC.WAKE] == wakes  # nor does the second in a row (config.WAKE_AFTER = 2)...
    dst[:] = 0xA5
    assert _go(box, head) == KC.ALONE_ASLEEP and np.array_equal(dst, want)
    assert box[KC.WAKE] == wakes + 1  # ... the third wakes it for the next ones, and runs alone
    box[KC.SLEEPING] = 0
    dst[:] = 0xA5
    assert _go(box, head) == KC.SHARED_CALL and np.array_equal(dst, want)
    big = crew.dense_job(dst, 3, src, 5, 200_000)
    big[KC.H_NBYTES] = 1 << 20
    box[KC.SLEEPING] = 1
    dst[:] = 0xA5
    assert _go(box, big) == KC.WOKEN_CALL and np.array_equal(dst, want)
    assert box[KC.WAKE] == wakes + 2 and box[KC.SKIP] == 0
    box[KC.LOCK] = 1  # another thread holds the box: this one runs alone
    dst[:] = 0xA5
    assert _go(box, head) == KC.ALONE_BUSY and np.array_equal(dst, want)


def test_policy_back_off_on_a_private_box():
    rng = np.random.default_rng(4)
    src, dst, want = _dense_case(rng, 150_000, 0, 0)
    box = _private_box(SLOW_HELPER=-1.0, MAX_BACKOFF=4, HOT_BYTES=1, SLEEP_BACKOFF=2)  # (helpers asleep meanwhile)
    head = crew.dense_job(dst, 0, src, 0, 150_000)
    skips = []
    for _ in range(12):
        dst[:] = 0xA5
        code = _go(box, head)
        assert np.array_equal(dst, want)
        skips.append((code, int(box[KC.SKIP]), int(box[KC.SPIN] == 0)))
    # slow (waited > -1 x own work) -> 2 alone, slow -> 4 alone, slow -> 4 (MAX_BACKOFF) alone ...
    assert [c for c, _, _ in skips] == [KC.SHARED_CALL] + [KC.ALONE_BACKING_OFF] * 2 + [KC.SHARED_CALL] + \
        [KC.ALONE_BACKING_OFF] * 4 + [KC.SHARED_CALL] + [KC.ALONE_BACKING_OFF] * 3
    assert skips[0][1:] == (2, 1) and skips[2][1:] == (0, 0)  # the helpers spin again for the trial call


@pytest.mark.parametrize("mode", ["hot", "alone", "asleep", "stopped", "backing off"])
@pytest.mark.parametrize("size", [128 << 10, 256 << 10, (512 << 10) + 96])
def test_repeated_datacopy_of_a_few_hundred_kib(monkeypatch, mode, size):
    """A repeated single-burst DataCopy from config.HOT_BYTES on is prepared with a dense crew job (shared
    while a helper is awake, alone otherwise): the same bytes and definedness either way, GM->UB and UB->GM,
    destination offsets that split the job on different lines, the bytes around untouched."""
    from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition

    monkeypatch.setattr(config, "WAKE_BYTES", 1 << 20)
    crew.tune()
    if mode == "alone":
        monkeypatch.setattr(crew, "ENABLED", False)
    elif mode == "asleep":  # the helpers sleep as soon as they are idle: small jobs run alone (and wake them)
        monkeypatch.setattr(config, "SPIN_US", 0)
        crew.tune()
    elif mode == "backing off":
        box = _box()
        box[KC.SKIP], box[KC.BACKOFF] = 1000, 256
    n = size // 4
    rng = np.random.default_rng(size)
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": 4 * n + 4096})
    for off in (0, 8, 24):  # (uint32 elements: 32-byte aligned starts, different line phases)
        src = rng.integers(0, 2**32, n + off, dtype=np.uint32)
        ub = pipe.alloc(TPosition.VECIN, "uint32", n + 32)
        out = np.zeros(n + off + 8, np.uint32)
        p = DataCopyParams(1, n * 4 // 32, 0, 0)
        g_in, g_out = GlobalTensor(src)[off], GlobalTensor(out)[off]
        for k in range(6):
            if mode == "stopped":
                crew.stop()  # (the next job starts the helpers again)
            src[k::5] += 1
            DataCopy(ub, g_in, p)
            DataCopy(g_out, ub, p)
            assert np.array_equal(ub.numpy()[:n], src[off:]) and np.array_equal(out[off:off + n], src[off:])
            assert not out[:off].any() and not out[off + n:].any()
            assert ub.defined()[:n].all() and not ub.defined()[n:].any()
        hit = ub._prepared[p.key()][4]
        assert hit[0] is None and (hit[4] is not None) == crew.SUPPORTED  # (the job is made even while disabled)
        pipe = TPipe(product="ATLAS_A2", capacities={"UB": 4 * n + 4096})


def _spin_job(chunks: int = 64):
    """A copy job of ``chunks`` chunks of 64 KiB each (so that a woken helper still finds some to take)."""
    n = 64 << 10
    src = np.arange(chunks * n // 8, dtype=np.uint64)
    dst = np.zeros_like(src)
    metas = np.stack([abi.pack(n // 8, abi.NO_LOOPS, (0, 1, 0, 1), (k * n // 8,), (k * n // 8,))
                      for k in range(chunks)])
    return dst, src, metas


def _until(cond, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.001)
    return False


def test_a_helper_spins_longer_after_a_large_job(monkeypatch):
    """``config.SPIN_US`` after a chunk of a small job, ``config.BIG_SPIN_US`` after a chunk of a job of at least
    ``config.WAKE_BYTES`` (a loop of large copies with other work between them finds the helper awake). The spins
    are set far apart (1 us against half a second), so the test waits for no timing of the machine's: a helper
    that ran a large job's chunk is still spinning 30 ms later, and goes to sleep again after small jobs (fails
    with BIG_SPIN_US = SPIN_US)."""
    monkeypatch.setattr(config, "WAKE_BYTES", 1 << 20)
    monkeypatch.setattr(config, "SPIN_US", 1)
    monkeypatch.setattr(config, "BIG_SPIN_US", 500_000)
    crew.tune()
    dst, src, metas = _spin_job()
    assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 10)  # (starts the helpers)
    box = crew._state["box"]
    assert _until(lambda: box[KC.SLEEPING] > 0)  # a small job: asleep after its 1 us of spinning
    helped = box[KC.HELPED]
    for _ in range(200):  # a large job wakes the helper for itself; until it has run one of its chunks
        dst[:] = 0
        assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 20)
        assert np.array_equal(dst, src)
        if box[KC.HELPED] > helped:
            break
    assert box[KC.HELPED] > helped
    time.sleep(0.03)
    assert box[KC.SLEEPING] == 0  # still spinning: BIG_SPIN_US, not SPIN_US
    for _ in range(3):  # small jobs again (shared while it spins): it goes back to sleep soon after
        assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 10)
    assert _until(lambda: box[KC.SLEEPING] > 0)
