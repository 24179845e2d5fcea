"""Parallel kernel calls on persistent helper threads (``config.THREADS - 1`` of them).

A call is published in a shared box and shared with the helpers chunk by chunk (:mod:`fastcopy.kernels.crew`
holds the protocol); the caller takes chunks too and waits only for chunks a helper has started, so a helper
that a busy machine has not scheduled costs nothing but its share. Helpers spin in numba (GIL released) for
``config.SPIN_US`` after their last chunk, so calls in a row pay no thread wake-up; then they sleep (a futex). A sleeping helper is woken for a job of at least ``config.WAKE_BYTES`` or when the previous parallel
call was recent (it will be spinning for the next one); a smaller isolated job runs on the caller alone.
When a helper holds a call up (the caller waited for it longer than ``config.SLOW_HELPER`` times its own work:
another process has its core), the next calls run unshared, 2, 4, ... up to ``config.MAX_BACKOFF`` of them,
and the helpers sleep instead of spinning until a shared call goes well again.

:func:`run` returns False (and runs nothing) when the crew is in use by another Python thread or there are no
helpers: the caller then runs every chunk itself.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from .. import config
from . import abi

#: the helpers' kernels use x86-64 instructions (pause, rdtsc) and Linux futexes; elsewhere calls run unshared
SUPPORTED = sys.platform.startswith("linux") and os.uname().machine == "x86_64"  # (no `platform`: 6 ms of import)
#: False: every call runs on the calling thread alone (benchmarks compare the two)
ENABLED = True
_lock = threading.Lock()  # one job in the box at a time (other Python threads run their chunks alone)
_state = {"box": None, "threads": (), "pid": None, "ticks_per_us": 0.0, "last": 0.0, "skip": 0,
          "backoff": 1, "spin": 0}


def _calibrate(crew) -> float:
    """TSC ticks per microsecond (the helpers' spin budget is counted in ticks)."""
    crew.ticks()  # (loaded first: the first call may compile)
    t0, c0 = time.perf_counter(), crew.ticks()
    time.sleep(0.002)
    t1, c1 = time.perf_counter(), crew.ticks()
    return max((c1 - c0) / ((t1 - t0) * 1e6), 1.0)


_K = None  # fastcopy.kernels.crew, once loaded


def _start():
    """The box and the helpers (once per process; again in a forked child, which has no helper threads)."""
    global _K
    from ..kernels import crew

    _K = crew

    if _state["pid"] == os.getpid():
        return _state["box"]
    buf = np.zeros(crew.BOX_SIZE + 8, np.int64)
    start = (-buf.ctypes.data) % 64 // 8
    box = buf[start:start + crew.BOX_SIZE]
    box[crew.WORD] = crew.BUSY
    if not _state["ticks_per_us"]:
        _state["ticks_per_us"] = _calibrate(crew)
    box[crew.SPIN] = _state["spin"] = int(config.SPIN_US * _state["ticks_per_us"])
    threads = [threading.Thread(target=crew.serve, args=(box,), name=f"fastcopy-{k}", daemon=True)
               for k in range(config.THREADS - 1)]
    for t in threads:
        t.start()
    _state.update(box=box, threads=threads, pid=os.getpid())
    return box


def run(kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray, value=np.uint64(0), nt: int = 0,
        nbytes: int = 0) -> bool:
    """Run the job (``table``: one chunk per row) with the helpers; False if the crew cannot take it."""
    if config.THREADS < 2 or not SUPPORTED or not ENABLED:
        return False
    head = None if _state["skip"] else job(kind, dst, dbase, src, sbase, table, value, nt)
    return run_job(head, nbytes)


def job(kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray, value=np.uint64(0), nt: int = 0):
    """A job's header for :func:`run_job` (prepared calls keep it; the arrays must outlive it)."""
    if not SUPPORTED:
        return None
    from ..kernels import crew

    return crew.job(kind, dst, dbase, src, sbase, table, value, nt)


def run_job(head, nbytes: int = 0) -> bool:
    """:func:`run` for a job header made by :func:`job`."""
    if config.THREADS < 2 or not SUPPORTED or not ENABLED:
        return False
    if _state["skip"]:  # backing off after a call that a slow helper held up
        _state["skip"] -= 1
        if not _state["skip"]:  # the next call tries again, with helpers spinning (a fair trial)
            _state["box"][_K.SPIN] = _state["spin"]
            _K.wake(_state["box"])
        return False
    if head is None or not _lock.acquire(blocking=False):
        return False
    try:
        box = _state["box"] if _state["pid"] == os.getpid() else _start()
        now = time.perf_counter()
        wake = nbytes >= config.WAKE_BYTES or now - _state["last"] < config.WAKE_GAP
        _state["last"] = now
        asleep = _K.publish(box, head, wake)
        waited = _K.join(box)
        if asleep:  # (a helper woken for this call is late by its wake-up: no verdict on the machine)
            return True
        if waited > config.SLOW_HELPER * 1024:  # a spinning helper held the call up: the machine is busy
            _state["backoff"] = min(2 * _state["backoff"], config.MAX_BACKOFF)
            _state["skip"] = _state["backoff"]
            box[_K.SPIN] = 0  # the helpers sleep at once: no spinning against this thread meanwhile
        else:
            _state["backoff"] = 1
        return True
    finally:
        _lock.release()


def stop() -> None:
    """Stop the helpers (tests; the threads are daemons otherwise)."""
    from ..kernels import crew

    if _state["pid"] != os.getpid():
        return
    crew.stop(_state["box"])
    for t in _state["threads"]:
        t.join()
    _state.update(box=None, pid=None, threads=())


def warmup() -> None:
    """Compile (or load) every kernel of the crew: one tiny job of each kind and view width, run by this thread
    alone on a private box (``fastcopy warmup``)."""
    if not SUPPORTED:
        return
    from ..kernels import crew

    box = np.zeros(crew.BOX_SIZE, np.int64)
    box[crew.WORD] = crew.BUSY
    box[crew.STOP] = 1
    crew.serve(box)  # (returns at once: told to stop)
    crew.ticks()
    meta = np.stack([abi.contiguous(1)])
    for t in (np.uint8, np.uint16, np.uint32, np.uint64):
        a = np.zeros(64, t)
        r = np.zeros(64, t)
        r.flags.writeable = False  # (read-only sources: user arrays that are not writable)
        for src in (a, r):
            crew.publish(box, crew.job(COPY, a, 0, src, 0, meta, np.uint64(0), 0), False)
            crew.join(box)
        crew.publish(box, crew.job(FILL, a, 0, a, 0, meta, np.uint64(0), 0), False)
        crew.join(box)
    b, rb = np.zeros(4096, np.uint8), np.zeros(4096, np.uint8)
    rb.flags.writeable = False
    tmeta = np.stack([abi.pack_transpose(32, (1, 0, 0), (1, 32, 32), (1, 32, 32), (1, 1), False, (0, 1, 0, 1))])
    pieces = np.array([[0, 64]], np.int64)
    for src in (b, rb):
        emeta = np.stack([abi.pack_transpose(2, (1, 0, 0), (1, 2, 32), (1, 32, 2), (1, 1), False, (0, 1, 0, 1))])
        for kind, table in ((TRANSPOSE, tmeta), (ROWS, tmeta), (DENSE, pieces), (FILL_DENSE, pieces),
                            (ELEMENTS, emeta)):
            crew.publish(box, crew.job(kind, b, 0, src, 0, table, np.uint64(0), 0), False)
            crew.join(box)
    crew.wake(box)


# job kinds (the kernels' numbering)
COPY, FILL, TRANSPOSE, ROWS, DENSE, FILL_DENSE, ELEMENTS = range(1, 8)
__all__ = ["run", "stop", "warmup", "COPY", "FILL", "TRANSPOSE", "ROWS", "DENSE", "FILL_DENSE", "ELEMENTS"]
