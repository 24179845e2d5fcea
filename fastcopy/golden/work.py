"""Units of work of a batch: one sweep point (:func:`run_point`), a chunk of points of one case
(:func:`run_chunk`), and the outcome each point reports. Local workers (``--jobs``) and Dask tasks run the same
chunks, so a point's folder is the same bytes wherever it runs.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field

from .case import Case
from .engine import CaseRunError, run_program
from .files import write_result
from .resume import is_complete
from .schema import CaseError


@dataclass
class Outcome:
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
    width = max(4, len(str(len(case) - 1)))
    return os.path.join(case_dir, f"{index:0{width}d}")


def run_chunk(case: Case, case_no: int, indices, case_dir: str, strict: bool = False,
              resume: bool = False) -> list:
    """Run points ``indices`` of ``case`` into their folders under ``case_dir``; one :class:`Outcome` each (never
    raises). The unit of work of ``--jobs`` workers and of Dask tasks alike."""
    out = []
    for pi in indices:
        where = point_dir(case_dir, case, pi)
        if resume and is_complete(where, case, pi):
            label = f"{case.name}#{pi}" if case.is_sweep else case.name
            out.append(Outcome(case_no, pi if case.is_sweep else None, label, True, directory=where, skipped=True))
        else:
            out.append(run_point(case, pi, where, strict, case_no))
    return out


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
    t0 = time.perf_counter()
    label = f"{case.name}#{index}" if case.is_sweep else case.name
    try:
        prog = case.point(index)
        label = prog.label
        result = run_program(prog, reuse=True)
        warns = result.all_warnings()
        result.check(strict)
        write_result(result, directory)
        return Outcome(case_no, index if case.is_sweep else None, label, True, "", warns,
                       time.perf_counter() - t0, directory)
    except (CaseError, CaseRunError) as exc:
        msg = str(exc)
    except Exception as exc:  # noqa: BLE001 - one bad point never stops the batch
        msg = f"{case.file}: {label}: {describe(exc)}"
    return Outcome(case_no, index if case.is_sweep else None, label, False, msg, [], time.perf_counter() - t0,
                   directory)


def describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` for unexpected errors (innermost frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"
