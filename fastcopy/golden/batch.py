"""Many cases in one go: every sweep point of every case, several points per process.

Workers are a few long-lived processes (``jobs``), each running chunks of points, so numba start-up is paid once
per process, never per case. A case that fails to load, or a point that fails, is recorded with its reason and
the others go on. Output: ``DIR/<case>/`` per case (``DIR/<case>/NNNN/`` per sweep point) and
``DIR/summary.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field

from .case import Case, load_case
from .engine import CaseRunError, run_program
from .files import write_result
from .schema import CaseError


@dataclass
class CaseEntry:
    path: str
    name: str = ""
    points: int = 0
    directory: str = ""
    error: str = ""  # the case did not load


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


@dataclass
class BatchReport:
    cases: list
    outcomes: list
    seconds: float
    jobs: int

    @property
    def failed(self) -> list:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return not self.failed


def _point_dir(root: str, entry: CaseEntry, case: Case, index: int) -> str:
    if not case.is_sweep:
        return entry.directory
    width = max(4, len(str(len(case) - 1)))
    return os.path.join(entry.directory, f"{index:0{width}d}")


def run_point(case: Case, index: int, directory: str, strict: bool = False, case_no: int = 0) -> Outcome:
    """Run and write one point; never raises (the failure is the outcome)."""
    t0 = time.perf_counter()
    label = f"{case.name}#{index}" if case.is_sweep else case.name
    try:
        prog = case.point(index)
        label = prog.label
        result = run_program(prog)
        warns = [f"ops[{i}]: {m}" for i, ms in sorted(result.warnings.items()) for m in ms]
        if strict and warns:
            raise CaseRunError(prog, None, RuntimeError(f"{len(warns)} warning(s) with --strict: {warns[0]}"),
                               "warnings")
        write_result(result, directory)
        return Outcome(case_no, index if case.is_sweep else None, label, True, "", warns,
                       time.perf_counter() - t0, directory)
    except (CaseError, CaseRunError) as exc:
        msg = str(exc)
    except Exception as exc:  # noqa: BLE001 - one bad point never stops the batch
        msg = f"{case.file}: {label}: {_describe(exc)}"
    return Outcome(case_no, index if case.is_sweep else None, label, False, msg, [], time.perf_counter() - t0,
                   directory)


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` for unexpected errors (innermost frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


# ----------------------------------------------------------------------------------------------- workers
_WORKER: dict = {}


def _worker_init(cases, dirs, strict) -> None:
    # (a forked worker's kernel thread pool is reset by fastcopy.execute's at-fork hook)
    _WORKER.update(cases=cases, dirs=dirs, strict=strict)


def _worker_chunk(chunk) -> list:
    cases, dirs, strict = _WORKER["cases"], _WORKER["dirs"], _WORKER["strict"]
    return [run_point(cases[ci], pi, dirs[(ci, pi)], strict, ci) for ci, pi in chunk]


def _mp_context():
    import multiprocessing as mp

    # fork inherits the imported package and compiled kernels; elsewhere the default (spawn) start method
    if sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods():
        return mp.get_context("fork")
    return mp.get_context()


def run_batch(paths, directory: str, jobs: int = 1, seed: int | None = None, strict: bool = False,
              progress=None) -> BatchReport:
    """Run every point of every case file in ``paths`` into ``directory``.

    ``progress(done, total, failed)`` is called as points finish. Returns a :class:`BatchReport` (also written to
    ``directory/summary.json``).
    """
    t0 = time.perf_counter()
    entries, cases, outcomes = [], [], []
    used = set()
    for ci, path in enumerate(paths):
        entry = CaseEntry(os.fspath(path))
        try:
            case = load_case(path, seed=seed)
            entry.name, entry.points = case.name, len(case)
        except Exception as exc:  # noqa: BLE001 - a case that does not load is one failure
            case = None
            entry.error = str(exc) if isinstance(exc, CaseError) else f"{path}: {_describe(exc)}"
            entry.name = os.path.splitext(os.path.basename(entry.path))[0]
        base = _safe(entry.name)
        name, k = base, 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        entry.directory = os.path.join(directory, name)
        entries.append(entry)
        cases.append(case)
        if case is None:
            outcomes.append(Outcome(ci, None, entry.name, False, entry.error))
    tasks = [(ci, pi) for ci, c in enumerate(cases) if c is not None for pi in range(len(c))]
    dirs = {(ci, pi): _point_dir(directory, entries[ci], cases[ci], pi) for ci, pi in tasks}
    total = len(tasks) + len(outcomes)
    failed = len(outcomes)
    done = len(outcomes)
    if progress:
        progress(done, total, failed)
    jobs = max(1, min(int(jobs), len(tasks) or 1))
    if jobs == 1:
        for ci, pi in tasks:
            o = run_point(cases[ci], pi, dirs[(ci, pi)], strict, ci)
            outcomes.append(o)
            done += 1
            failed += not o.ok
            if progress:
                progress(done, total, failed)
    else:
        for o in _run_parallel(cases, dirs, tasks, jobs, strict, progress, done, total, failed):
            outcomes.append(o)
    outcomes.sort(key=lambda o: (o.case, -1 if o.index is None else o.index))
    report = BatchReport(entries, outcomes, time.perf_counter() - t0, jobs)
    _write_summary(directory, report)
    return report


def _run_parallel(cases, dirs, tasks, jobs, strict, progress, done, total, failed):
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = _mp_context()
    if ctx.get_start_method() == "fork":
        from ..cli.warmup import warmup

        warmup()  # compile (or load) the kernels once; the forked workers inherit them
    size = max(1, min(32, len(tasks) // (jobs * 8)))
    chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init,
                             initargs=(cases, dirs, strict)) as pool:
        futures = {pool.submit(_worker_chunk, ch): ch for ch in chunks}
        for fut in as_completed(futures):
            try:
                results = fut.result()
            except (BrokenProcessPool, Exception) as exc:  # noqa: BLE001 - a worker died
                results = [Outcome(ci, pi if cases[ci].is_sweep else None, f"{cases[ci].name}#{pi}", False,
                                   f"{cases[ci].file}: point {pi}: worker process failed: {_describe(exc)}")
                           for ci, pi in futures[fut]]
            for o in results:
                done += 1
                failed += not o.ok
                yield o
            if progress:
                progress(done, total, failed)


def _safe(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".")
    return out or "case"


def _write_summary(directory: str, report: BatchReport) -> None:
    os.makedirs(directory, exist_ok=True)
    data = {
        "ok": report.ok,
        "points": len(report.outcomes),
        "failed": len(report.failed),
        "jobs": report.jobs,
        "cases": [asdict(e) for e in report.cases],
        "outcomes": [asdict(o) for o in report.outcomes],
    }
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
