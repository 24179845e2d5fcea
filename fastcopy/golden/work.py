"""Units of work of a batch: one sweep point (:func:`run_point`), a chunk of points of one case
(:func:`run_chunk`), and the outcome each point reports. Local workers (``--jobs``) and Dask tasks run the same
chunks, so a point's folder is the same bytes wherever it runs.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import config
from .case import Case
from .engine import CaseRunError, run_program
from .files import point_files
from .resume import is_complete
from .schema import CaseError
from .store import write_folder


@dataclass
class Outcome:
    """What became of one point of a batch: written, skipped or failed (with the reason)."""

    case: int  # index into BatchReport.cases
    index: int | None  # sweep point (None: a case without sweeps, or one that did not load)
    label: str
    ok: bool
    error: str = ""
    warnings: list = field(default_factory=list)
    seconds: float = 0.0
    directory: str = ""
    skipped: bool = False  # --resume: the folder was already complete, nothing written


@contextmanager
def small_calls_in_numpy():
    """While a local batch runs in this process (a forked worker: :func:`keep_small_calls_in_numpy`): calls stay
    on the numpy kernels until one moves more than ``config.SMALL_BYTES`` (then numba loads, as usual), however
    many calls there are.

    Outside a batch the numba kernels load at the ``config.CALLS_BEFORE_KERNELS``-th call, because a process
    making that many calls usually makes many more. A batch of small points makes many calls that numpy runs
    about as fast (a strided view per burst pattern), and loading numba costs ~0.14 s of each process: more
    than a thousand small points gain from it (measured: ``python bench/bench_batch.py``)."""
    from .. import config

    with _NUMPY_CALLS_LOCK:  # (batches in several threads at once: the first in sets it, the last out restores)
        if not _numpy_calls:
            _numpy_calls.append(keep_small_calls_in_numpy())
        _numpy_calls.append(None)
    try:
        yield
    finally:
        with _NUMPY_CALLS_LOCK:
            _numpy_calls.pop()
            if len(_numpy_calls) == 1:
                config.CALLS_BEFORE_KERNELS = _numpy_calls.pop()


_NUMPY_CALLS_LOCK = threading.Lock()
_numpy_calls: list = []  # [the setting before the first batch, then one None per batch running]


def keep_small_calls_in_numpy() -> int:
    """:func:`small_calls_in_numpy` for the rest of this process (a batch worker); returns the old setting."""
    from .. import config

    before = config.CALLS_BEFORE_KERNELS
    config.CALLS_BEFORE_KERNELS = SMALL_CALLS_UNLIMITED
    return before


#: the call count that never comes (see :func:`small_calls_in_numpy`)
SMALL_CALLS_UNLIMITED = 1 << 62


def point_dir(case_dir: str, case: Case, index: int) -> str:
    """``case_dir`` for a case without sweeps, ``case_dir/NNNN`` for sweep point ``index``."""
    if not case.is_sweep:
        return case_dir
    return os.path.join(case_dir, f"{index:0{_name_width(case)}d}")


def _name_width(case: Case) -> int:
    """Digits of a sweep point's folder name: at least 4, enough for the case's last index."""
    return max(4, len(str(len(case) - 1)))


def run_chunk(case: Case, case_no: int, indices, case_dir: str, strict: bool = False,
              resume: bool = False) -> list:
    """Run points ``indices`` of ``case`` into their folders under ``case_dir``; one :class:`Outcome` each, in
    the order of ``indices`` (never raises). The unit of work of ``--jobs`` workers and of Dask tasks alike.

    The points go in groups of ``config.STAGE_POINTS``: each group's points are compiled, then run, then written
    (:func:`run_point`'s steps and outcomes, stage by stage; see config.STAGE_POINTS)."""
    points = _point_dirs(case_dir, case, indices)
    size = max(1, config.STAGE_POINTS)
    out = []
    for k in range(0, len(points), size):
        out += _run_group(case, case_no, points[k:k + size], strict, resume)
    return out


def _point_dirs(case_dir: str, case: Case, indices) -> list:
    """``(index, folder, at)`` of each point of ``indices``: its folder as :func:`point_dir` names it, and ``at``
    (the folder's absolute parent and name, see :func:`fastcopy.golden.store.write_folder`) for a sweep point,
    the parent made absolute once for the chunk."""
    if not case.is_sweep:
        return [(pi, case_dir, None) for pi in indices]
    width = _name_width(case)
    head, parent = os.path.join(case_dir, ""), os.path.abspath(case_dir)  # (join(d, n) is join(d, "") + n)
    return [(pi, head + name, (parent, name)) for pi in indices for name in (f"{pi:0{width}d}",)]


class _Staged:
    """A point between the stages of :func:`_run_group`."""

    __slots__ = ("index", "where", "at", "label", "seconds", "prog", "result", "warns", "files")

    def __init__(self, index: int, where: str, at, label: str):
        self.index, self.where, self.at, self.label, self.seconds = index, where, at, label, 0.0
        self.prog = self.result = self.warns = self.files = None


def _run_group(case: Case, case_no: int, points: list, strict: bool, resume: bool) -> list:
    """:func:`run_point` for each ``(index, folder)`` of ``points``, stage by stage: every point compiled, then
    every point run, then every point written; a point that fails at a stage gets its outcome there and skips
    the rest; a point whose buffers are large is written as soon as it has run (``config.STAGE_BYTES``)."""
    perf = time.perf_counter
    sweep = case.is_sweep
    out = []  # per point: its Outcome, or its _Staged while it is on its way
    for pi, where, at in points:
        label = f"{case.name}#{pi}" if sweep else case.name
        if resume and is_complete(where, case, pi):
            out.append(Outcome(case_no, pi if sweep else None, label, True, directory=where, skipped=True))
            continue
        st = _Staged(pi, where, at, label)
        t0 = perf()
        try:
            st.prog = case.point(pi)
            st.label = st.prog.label
        except Exception as exc:  # noqa: BLE001 - one bad point never stops the batch
            out.append(_failed(case, case_no, st, exc, perf() - t0))
            continue
        st.seconds = perf() - t0
        out.append(st)
    for k, st in enumerate(out):
        if type(st) is not _Staged:
            continue
        t0 = perf()
        try:
            result = run_program(st.prog, reuse=True)
            st.warns = result.all_warnings()
            result.check(strict)
        except Exception as exc:  # noqa: BLE001
            out[k] = _failed(case, case_no, st, exc, st.seconds + perf() - t0)
            continue
        st.result, st.seconds = result, st.seconds + perf() - t0
        if _result_bytes(result) > config.STAGE_BYTES:
            out[k] = _write(case, case_no, st)
    for k, st in enumerate(out):  # (every point's files made, then every folder written: see config.STAGE_POINTS)
        if type(st) is _Staged and not _make_files(st):
            out[k] = _failed(case, case_no, st, st.files, st.seconds)
    for k, st in enumerate(out):
        if type(st) is _Staged:
            out[k] = _write(case, case_no, st)
    return out


def _result_bytes(result) -> int:
    n = 0
    for arr in result.inputs.values():
        n += arr.nbytes
    for data, mask in result.outputs.values():
        n += data.nbytes + mask.nbytes
    return n


def _make_files(st: _Staged) -> bool:
    """The files of a point that has run (:func:`fastcopy.golden.files.point_files`) in ``st.files``; False (and
    the exception in ``st.files``) when making them raised."""
    t0 = time.perf_counter()
    result, st.result = st.result, None
    try:
        st.files = point_files(result)
    except Exception as exc:  # noqa: BLE001
        st.files = exc
        return False
    finally:
        st.seconds += time.perf_counter() - t0
    return True


def _write(case: Case, case_no: int, st: _Staged) -> Outcome:
    """The last stage of a point: its folder written (its files made first unless made); its outcome."""
    if st.files is None and not _make_files(st):
        return _failed(case, case_no, st, st.files, st.seconds)
    t0 = time.perf_counter()
    files, st.files = st.files, None
    try:
        write_folder(st.where, files, st.at)
    except Exception as exc:  # noqa: BLE001
        return _failed(case, case_no, st, exc, st.seconds + time.perf_counter() - t0)
    return Outcome(case_no, st.index if case.is_sweep else None, st.label, True, "", st.warns,
                   st.seconds + time.perf_counter() - t0, st.where)


def _failed(case: Case, case_no: int, st: _Staged, exc: Exception, seconds: float) -> Outcome:
    """The outcome of a point that raised ``exc`` (as :func:`run_point` reports it)."""
    if isinstance(exc, (CaseError, CaseRunError)):
        msg = str(exc)
    else:
        msg = f"{case.file}: {st.label}: {describe(exc)}"
    return Outcome(case_no, st.index if case.is_sweep else None, st.label, False, msg, [], seconds, st.where)


def make_chunks(cases, size: int) -> list:
    """``(case number, [point indices])`` work units of at most ``size`` points, one case per unit."""
    return [(ci, list(range(k, min(k + size, len(c))))) for ci, c in enumerate(cases) if c is not None
            for k in range(0, len(c), size)]


def failed_outcomes(case: Case, case_no: int, indices, case_dir: str, reason: str) -> list:
    """The outcomes of points that never reported (their worker died): failed, with ``reason``."""
    return [Outcome(case_no, pi if case.is_sweep else None, f"{case.name}#{pi}" if case.is_sweep else case.name,
                    False, f"{case.file}: point {pi}: {reason}", directory=point_dir(case_dir, case, pi))
            for pi in indices]


def run_point(case: Case, index: int, directory: str, strict: bool = False, case_no: int = 0) -> Outcome:
    """Run and write one point; never raises (the failure is the outcome)."""
    return _run_group(case, case_no, [(index, directory, None)], strict, False)[0]


def describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` for unexpected errors (innermost frame)."""
    import traceback

    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"
