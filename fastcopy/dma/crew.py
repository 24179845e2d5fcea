"""Parallel kernel calls on persistent helper threads (``config.THREADS - 1`` of them).

A call is published in a shared box and shared with the helpers chunk by chunk (:mod:`fastcopy.kernels.crew`
holds the protocol); the caller takes chunks from the front, the helpers from the back, and the caller waits only
for chunks a helper has started, so a helper that a busy machine has not scheduled costs nothing but its share.
Helpers poll the box in numba (GIL released) for ``config.SPIN_US`` after their last chunk, so calls in a row pay
no thread wake-up; then they sleep (a futex).

Which calls are shared (decided in :func:`fastcopy.kernels.crew.go`, one compiled call with no Python around it):

- a job of at least ``config.WAKE_BYTES`` always (a sleeping helper is woken for it);
- a smaller job (down to ``config.HOT_BYTES``: a repeated DataCopy of 256 KiB, a 64 KiB LoadData tile) only
  when the helpers are awake (a call came within their spin window, as in a loop of copies). With the helpers
  asleep it runs on the calling thread alone, and a sleeping helper is woken (for the calls after it) only by
  the ``config.WAKE_AFTER``-th call in a row, each less than ``config.WAKE_GAP`` after the previous one: an
  isolated call (or a pair) never pays a wake-up.

When a helper holds a call up (the caller waited for it longer than ``config.SLOW_HELPER`` times its own work:
another process has its core), the next calls run unshared, 2, 4, ... up to ``config.MAX_BACKOFF`` of them,
and the helpers sleep instead of spinning until a shared call goes well again.

Use: :func:`job` (or :func:`dense_job` for one contiguous copy) makes a job's header once; :func:`run_job` runs
it, returning False (having run nothing) when there is no crew (one thread, not x86-64 Linux, disabled): the
caller then runs the chunks itself. :func:`run` is both in one.

A job of exactly two chunks made by :func:`pair_job` (or :func:`dense_pair`) takes the box's *pair lane*
instead (:func:`fastcopy.kernels.crew.pair`: the caller runs the first chunk, a helper the second, one cache
line handed over each way): the leanest hand-off, for whole cube tiles (64 KiB) that a repeated load binds.
"""

from __future__ import annotations

import atexit
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
_start_lock = threading.Lock()
_state = {"box": None, "threads": (), "pid": None, "ticks_per_us": 0.0}
#: every box made, kept for the life of the process: a pair job's header (bound into a tile load's quickest
#: repeat) holds its box's address, not the box; a stopped box (STOP set) or a forked child's copy of the
#: parent's box (LOCK held) must stay that box, not freed memory that another array then takes (768 bytes: in
#: numpy's cache of small buffers, the next array of that size)
_BOXES = []
_K = None  # fastcopy.kernels.crew, once loaded


def _calibrate(crew) -> float:
    """TSC ticks per microsecond (the helpers' spin budget is counted in ticks)."""
    crew.ticks()  # (loaded first: the first call may compile)
    t0, c0 = time.perf_counter(), crew.ticks()
    time.sleep(0.0005)  # (the first shared call of a process waits this once; the budgets need ~1%)
    t1, c1 = time.perf_counter(), crew.ticks()
    return max((c1 - c0) / ((t1 - t0) * 1e6), 1.0)


def tune(box=None) -> None:
    """Write the policy numbers of ``config`` into the box (at start; tests that change them call it again)."""
    box = _state["box"] if box is None else box
    if box is None:
        return
    from ..kernels import crew

    ticks = _state["ticks_per_us"] or 1.0
    big = 1 << 62
    box[crew.T_SPIN] = int(config.SPIN_US * ticks)
    box[crew.SPIN] = box[crew.T_SPIN]
    box[crew.T_PAIR_SPIN] = int(max(config.PAIR_SPIN_US, config.SPIN_US) * ticks)
    box[crew.T_BIG_SPIN] = int(max(config.BIG_SPIN_US, config.SPIN_US) * ticks)
    box[crew.T_WAKE_BYTES] = min(int(config.WAKE_BYTES), big)
    box[crew.T_GAP] = int(config.WAKE_GAP * 1e6 * ticks)
    slow = config.SLOW_HELPER * 1024
    box[crew.T_SLOW] = big if slow >= big else int(slow)
    slow *= config.PAIR_SLOW_FACTOR
    box[crew.T_PAIR_SLOW] = big if slow >= big else int(slow)
    box[crew.T_MAX_BACKOFF] = max(1, int(config.MAX_BACKOFF))
    box[crew.T_POLL] = max(1, int(config.POLL_PAUSES))
    box[crew.T_WAKE_AFTER] = max(1, int(config.WAKE_AFTER))
    box[crew.T_GRACE] = max(0, int(config.PAIR_WAKE_GRACE))
    box[crew.T_REWAKE] = int(config.WAKE_AGAIN_US * ticks)
    box[crew.T_NAP] = max(1, int(config.SLEEP_BACKOFF))


def reset() -> None:
    """Forget the back-off (tests)."""
    box = _state["box"]
    if box is not None:
        from ..kernels import crew

        box[crew.SKIP], box[crew.BACKOFF] = 0, 1
        box[crew.SPIN] = box[crew.T_SPIN]
        box[crew.GRACE] = box[crew.WOKE] = 0


def _new_box():
    from ..kernels import crew

    buf = np.zeros(crew.BOX_SIZE + 8, np.int64)
    start = (-buf.ctypes.data) % 64 // 8
    box = buf[start:start + crew.BOX_SIZE]
    box[crew.WORD] = crew.BUSY
    box[crew.BACKOFF] = 1
    _BOXES.append(buf)
    return box


def _start():
    """The box and the helpers (once per process; again in a forked child, which has no helper threads)."""
    global _K
    from ..kernels import crew

    with _start_lock:
        if _state["pid"] == os.getpid():
            return _state["box"]
        if not _state["ticks_per_us"]:
            _state["ticks_per_us"] = _calibrate(crew)
        box = _new_box()
        tune(box)
        threads = [threading.Thread(target=crew.serve, args=(box,), name=f"fastcopy-{k}", daemon=True)
                   for k in range(config.THREADS - 1)]
        try:
            for t in threads:
                t.start()
        except RuntimeError:  # (a thread limit, the interpreter exiting): those started stop, the caller runs alone
            crew.stop(box)
            for t in threads:
                if t.ident is not None:
                    t.join()
            raise
        _K = crew
        _state.update(box=box, threads=threads, pid=os.getpid())
        return box


def _started():
    """:func:`_start`, or None when no helper thread can start (a thread limit, the interpreter exiting): the
    calls then run on the calling thread alone."""
    try:
        return _start()
    except RuntimeError:
        return None


def _forget() -> None:
    """In a forked child: the parent's helpers are not here (the next call starts the child's own). The child's
    copy of the parent's box stays locked: a pair job made in the parent (its header holds that box) runs on the
    calling thread alone, never posted to a helper that does not exist."""
    box = _state["box"]
    if box is not None:
        from ..kernels import crew

        box[crew.LOCK] = 1
    _state.update(box=None, threads=(), pid=None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def _at_exit() -> None:
    """At interpreter exit, before modules are torn down: stop and join the helpers, so no helper thread reads or
    writes the box (a numpy array freed with this module) or a job's arrays while the interpreter frees them."""
    if _state["pid"] == os.getpid():
        stop()


atexit.register(_at_exit)


def run(kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray, value=np.uint64(0), nt: int = 0,
        nbytes: int = 0) -> bool:
    """Run the job (``table``: one chunk per row) with the helpers; False (nothing run) if there is no crew."""
    if config.THREADS < 2 or not SUPPORTED or not ENABLED:
        return False
    return run_job(job(kind, dst, dbase, src, sbase, table, value, nt, nbytes))


def job(kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray, value=np.uint64(0), nt: int = 0,
        nbytes: int = 0):
    """A job's header for :func:`run_job` (prepared calls keep it; the arrays must outlive it); ``nbytes``: what
    it moves (from ``config.WAKE_BYTES`` on, a sleeping helper is woken for it)."""
    if not SUPPORTED:
        return None
    from ..kernels import crew

    return crew.job(kind, dst, dbase, src, sbase, table, value, nt, nbytes)


def dense_job(dst, dbase: int, src, sbase: int, n: int):
    """The job header of one contiguous ``n``-byte copy (byte arrays ``dst[dbase:]`` <- ``src[sbase:]``) in one
    piece per thread, cut on the destination's 64-byte lines (its chunk table inside the same array: keep the
    header, keep the job), or None when it is smaller than ``config.HOT_BYTES`` or there is no crew. Run it with
    :func:`run_job` (in a row of calls the caller keeps copying the first piece, a helper the last: each stays in
    its core's cache; the arrays must outlive the header)."""
    if n < config.HOT_BYTES or config.THREADS < 2 or not SUPPORTED:
        return None
    from ..kernels import crew

    parts = config.THREADS
    a0 = dst.ctypes.data + dbase
    cuts = [0] + [min(n, max(0, -(-(a0 + n * k // parts) // 64) * 64 - a0)) for k in range(1, parts)] + [n]
    table = np.array([[lo, hi - lo] for lo, hi in zip(cuts, cuts[1:]) if hi > lo], np.int64)
    head = np.empty(crew.HEAD + table.size, np.int64)
    head[:crew.HEAD] = job(DENSE, dst, dbase, src, sbase, table, nbytes=n)
    head[crew.HEAD:] = table.reshape(-1)
    head[crew.H_TADDR] = head.ctypes.data + 8 * crew.HEAD
    return head


def pair_job(kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray):
    """``(pair, header)``: a job of exactly two chunks (``table``'s two rows: the calling thread runs the first,
    a helper the second) for the lean hand-off of :func:`fastcopy.kernels.crew.pair` (call ``pair(header)``), or
    None when there is no crew (one thread, not x86-64 Linux, disabled). Starts the helpers. The header holds the
    box and the arrays' addresses: the arrays must outlive it."""
    if config.THREADS < 2 or not SUPPORTED or not ENABLED or len(table) != 2:
        return None
    box = _state["box"]
    if box is None:
        box = _started()
    return None if box is None else (_K.pair, _pair_head(box, kind, dst, dbase, src, sbase, table))


def _pair_head(box, kind: int, dst, dbase: int, src, sbase: int, table: np.ndarray) -> np.ndarray:
    from ..kernels import crew

    table = np.ascontiguousarray(table, np.int64)
    head = np.empty(crew.HEAD + 1 + table.size, np.int64)
    head[:crew.HEAD] = crew.job(kind, dst, dbase, src, sbase, table, np.uint64(0), 0, 0)
    head[crew.P_BOX] = box.ctypes.data
    head[crew.HEAD + 1:] = table.reshape(-1)
    head[crew.H_TADDR] = head.ctypes.data + 8 * (crew.HEAD + 1)
    return head


def dense_pair(dst, dbase: int, src, sbase: int, n: int):
    """:func:`pair_job` of one contiguous ``n``-byte copy (byte arrays ``dst[dbase:]`` <- ``src[sbase:]``): the
    calling thread copies the first ``config.PAIR_SHARE`` of it, cut on a destination line (it starts first: the
    helper's start is late by the hand-off), or None (no crew)."""
    a0 = dst.ctypes.data + dbase
    cut = min(n, max(0, -(-(a0 + int(n * config.PAIR_SHARE)) // 64) * 64 - a0))
    if not 0 < cut < n:
        return None
    return pair_job(DENSE, dst, dbase, src, sbase, np.array([[0, cut], [cut, n - cut]], np.int64))


def run_job(head) -> bool:
    """Run a job made by :func:`job` to the end (shared, or alone when sharing would not pay: see the module
    docstring); False (nothing run) when there is no crew."""
    if head is None or config.THREADS < 2 or not ENABLED:
        return False
    box = _state["box"]
    if box is None:
        box = _started()
        if box is None:
            return False
    _K.go(box, head)
    return True


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

    box = _new_box()
    box[crew.STOP] = 1
    box[crew.T_POLL] = 1
    crew.serve(box)  # (returns at once: told to stop)
    crew.ticks()
    crew.wake(box)
    meta = np.stack([abi.contiguous(1)])
    for t in (np.uint8, np.uint16, np.uint32, np.uint64):
        a = np.zeros(64, t)
        r = np.zeros(64, t)
        r.flags.writeable = False  # (read-only sources: user arrays that are not writable)
        for src in (a, r):
            crew.go(box, crew.job(COPY, a, 0, src, 0, meta, np.uint64(0), 0, 0))
        crew.go(box, crew.job(FILL, a, 0, a, 0, meta, np.uint64(0), 0, 0))
    pbox = _new_box()
    pbox[crew.STOP] = 1  # (a stopped box: pair() runs both chunks alone)
    d, s = np.zeros(128, np.uint8), np.zeros(128, np.uint8)
    crew.pair(_pair_head(pbox, DENSE, d, 0, s, 0, np.array([[0, 64], [64, 64]], np.int64)))
    b, rb = np.zeros(4096, np.uint8), np.zeros(4096, np.uint8)
    rb.flags.writeable = False
    tmeta = np.stack([abi.pack_transpose(32, (1, 0, 0), (1, 32, 32), (1, 32, 32), (1, 1), False, (0, 1, 0, 1))])
    pieces = np.array([[0, 64]], np.int64)
    for src in (b, rb):
        emeta = np.stack([abi.pack_transpose(2, (1, 0, 0), (1, 2, 32), (1, 32, 2), (1, 1), False, (0, 1, 0, 1))])
        for kind, table in ((TRANSPOSE, tmeta), (ROWS, tmeta), (DENSE, pieces), (FILL_DENSE, pieces),
                            (ELEMENTS, emeta)):
            crew.go(box, crew.job(kind, b, 0, src, 0, table, np.uint64(0), 0, 0))


# job kinds (the kernels' numbering)
COPY, FILL, TRANSPOSE, ROWS, DENSE, FILL_DENSE, ELEMENTS = range(1, 8)
__all__ = ["run", "job", "dense_job", "pair_job", "dense_pair", "run_job", "stop", "warmup", "tune", "COPY", "FILL",
           "TRANSPOSE", "ROWS", "DENSE", "FILL_DENSE", "ELEMENTS"]
