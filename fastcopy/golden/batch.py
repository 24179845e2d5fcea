"""Many cases in one go: every sweep point of every case, several points per process.

Workers are a few long-lived processes (``jobs``), each running chunks of points, so numba start-up is paid once
per process, never per case. A case that fails to load, or a point that fails, is recorded with its reason and
the others go on. Output: ``DIR/<case>/`` per case (``DIR/<case>/NNNN/`` per sweep point) and
``DIR/summary.json``.

The same chunks of points run on a Dask cluster with ``client=`` (see :mod:`fastcopy.golden.distributed`); with
``resume=True`` a point whose folder is already complete (:mod:`fastcopy.golden.resume`) is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass

from .. import config
from .case import load_case
from .files import manifest_text
from .schema import CaseError
from .store import atomic_write, safe_component
from .work import (Outcome, describe, failed_outcomes, keep_small_calls_in_numpy, make_chunks, point_dir, run_chunk,
                   run_point, small_calls_in_numpy)

__all__ = ["CaseEntry", "BatchReport", "Outcome", "run_batch", "run_point", "run_chunk"]


@dataclass
class CaseEntry:
    """One case file of a batch: its name, point count and folder (or why it did not load)."""

    path: str
    name: str = ""
    points: int = 0
    directory: str = ""
    error: str = ""  # the case did not load


@dataclass
class BatchReport:
    """What a batch did: its cases, one outcome per point, time and workers."""

    cases: list
    outcomes: list
    seconds: float
    jobs: int
    dask: str = ""  # the scheduler address when the points ran on a Dask cluster
    interrupted: bool = False  # Ctrl-C: the outcomes are the points that completed
    total: int = 0  # points there were to run

    @property
    def failed(self) -> list:
        return [o for o in self.outcomes if not o.ok]

    @property
    def skipped(self) -> list:
        return [o for o in self.outcomes if o.skipped]

    @property
    def ok(self) -> bool:
        return not self.failed


# ----------------------------------------------------------------------------------------------- workers
_WORKER: dict = {}


def _worker_init(cases, case_dirs, strict, resume) -> None:
    # (a forked worker's kernel thread pool is reset by fastcopy.dma.run's at-fork hook)
    import signal

    # Ctrl-C is the parent's to handle (one line, a summary); the parent stops workers with SIGTERM, which
    # unwinds like an exception, so a folder being written is discarded, never left half-written
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    _WORKER.update(cases=cases, case_dirs=case_dirs, strict=strict, resume=resume)
    keep_small_calls_in_numpy()  # for the worker's life


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


def _worker_chunk(chunk) -> list:
    ci, indices = chunk
    w = _WORKER
    return run_chunk(w["cases"][ci], ci, indices, w["case_dirs"][ci], w["strict"], w["resume"])


def _mp_context():
    import multiprocessing as mp

    # fork inherits the imported package and compiled kernels; elsewhere the default (spawn) start method
    if sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods():
        return mp.get_context("fork")
    return mp.get_context()


def run_batch(paths, directory: str, jobs: int = 1, seed: int | None = None, strict: bool = False,
              progress=None, resume: bool = False, client=None, chunk_size: int | None = None,
              max_bytes: int | None = None, allow_python: bool = False) -> BatchReport:
    """Run every point of every case file in ``paths`` into ``directory``.

    ``progress(done, total, failed)`` is called as points finish. ``resume``: skip points whose folder is already
    complete for this case text and point. ``client``: a ``dask.distributed.Client``; the points then run on its
    workers (``jobs`` is ignored), which write their folders themselves, so ``directory`` must be a path they
    see. ``chunk_size``: points per task (default: chosen from the number of points and workers). ``max_bytes``:
    the per-buffer size limit; ``allow_python``: run the cases' compute steps. Returns a :class:`BatchReport`
    (also written to ``directory/summary.json``). Ctrl-C stops the batch: the report and summary.json then hold
    the points that completed, ``interrupted`` is set, and no folder is left half-written.
    """
    t0 = time.perf_counter()
    started = time.time() - 1.0
    entries, cases, outcomes = [], [], []
    used = set()
    for ci, path in enumerate(paths):
        entry = CaseEntry(os.fspath(path))
        try:
            case = load_case(path, seed=seed, max_bytes=max_bytes, allow_python=allow_python)
            entry.name, entry.points = case.name, len(case)
        except Exception as exc:  # noqa: BLE001 - a case that does not load is one failure
            case = None
            entry.error = str(exc) if isinstance(exc, CaseError) else f"{path}: {describe(exc)}"
            entry.name = os.path.splitext(os.path.basename(entry.path))[0]
        base = safe_component(entry.name)
        name, k = base, 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        entry.directory = os.path.join(directory, name)
        entries.append(entry)
        cases.append(case)
        if case is None:
            outcomes.append(Outcome(ci, None, entry.name, False, entry.error))
    case_dirs = [e.directory for e in entries]
    npoints = sum(len(c) for c in cases if c is not None)
    total = npoints + len(outcomes)
    failed = len(outcomes)
    done = len(outcomes)
    if progress:
        progress(done, total, failed)
    address = ""
    if client is not None:
        from .distributed import run_on_client

        address = client.scheduler.address
        case_dirs = [os.path.abspath(d) for d in case_dirs]  # the workers' working folder may differ
        results = run_on_client(client, cases, case_dirs, strict, resume, chunk_size)
        jobs = max(1, len(client.scheduler_info().get("workers", ())))
    else:
        jobs = max(1, min(int(jobs), npoints or 1))
        if jobs == 1:  # (chunks of one stage group: see config.STAGE_POINTS)
            results = (run_chunk(cases[ci], ci, indices, case_dirs[ci], strict, resume)
                       for ci, indices in make_chunks(cases, max(1, config.STAGE_POINTS)))
        else:
            results = _run_parallel(cases, case_dirs, jobs, strict, resume, chunk_size)
    interrupted = False
    try:
        # points run here (--jobs 1): small calls on numpy kernels, as in the workers (_worker_init)
        with small_calls_in_numpy() if client is None and jobs == 1 else contextlib.nullcontext():
            for chunk in results:
                outcomes += chunk
                done += len(chunk)
                failed += sum(not o.ok for o in chunk)
                if progress:
                    progress(done, total, failed)
    except KeyboardInterrupt:
        interrupted = True
        outcomes += _finished_unreported(cases, case_dirs, outcomes, started)
    outcomes.sort(key=lambda o: (o.case, -1 if o.index is None else o.index))
    report = BatchReport(entries, outcomes, time.perf_counter() - t0, jobs, address, interrupted, total)
    _write_summary(directory, report)
    return report


def _run_parallel(cases, case_dirs, jobs, strict, resume, chunk_size):
    """Chunks of points on ``jobs`` forked worker processes; yields each chunk's outcomes as it finishes."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    from importlib import import_module

    import_module("numpy.random")  # the inputs' generators (7 ms): loaded once here, not in every worker

    ctx = _mp_context()  # forked before any kernel loads: each worker loads (in parallel) the kernels it uses
    npoints = sum(len(c) for c in cases if c is not None)
    size = chunk_size or max(1, min(32, npoints // (jobs * 8)))
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init,
                               initargs=(cases, case_dirs, strict, resume))
    try:
        futures = {pool.submit(_worker_chunk, ch): ch for ch in make_chunks(cases, size)}
        for fut in as_completed(futures):
            try:
                result = fut.result()
            except (BrokenProcessPool, Exception) as exc:  # noqa: BLE001 - a worker died
                ci, indices = futures[fut]
                result = failed_outcomes(cases[ci], ci, indices, case_dirs[ci],
                                         f"worker process failed: {describe(exc)}")
            yield result
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _stop(pool) -> None:
    """Cancel what has not started and stop the workers (SIGTERM: each discards the folder it was writing)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.terminate()
        except (OSError, AttributeError):
            pass
    for p in procs:
        p.join(5)


def _finished_unreported(cases, case_dirs, outcomes, started: float) -> list:
    """Points a stopped worker finished but never reported: their folder holds a manifest of this case and point
    written since the batch started."""
    seen = {(o.case, o.index) for o in outcomes}
    out = []
    for ci, case in enumerate(cases):
        if case is None:
            continue
        for pi in range(len(case)):
            key = (ci, pi if case.is_sweep else None)
            where = point_dir(case_dirs[ci], case, pi)
            if key in seen:
                continue
            mf = os.path.join(where, "manifest.json")
            try:
                if os.stat(mf).st_mtime < started:
                    continue
                with open(mf, encoding="utf-8") as fh:
                    m = json.load(fh)["case"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if m.get("sha256") == case.sha256 and m.get("point") == key[1]:
                out.append(Outcome(ci, key[1], f"{case.name}#{pi}" if case.is_sweep else case.name, True,
                                   directory=where))
    return out


def _write_summary(directory: str, report: BatchReport) -> None:
    data = {
        "ok": report.ok and not report.interrupted,
        "interrupted": report.interrupted,
        "total": report.total,
        "points": len(report.outcomes),
        "failed": len(report.failed),
        "skipped": len(report.skipped),
        "jobs": report.jobs,
        "dask": report.dask or None,
        "cases": [dict(vars(e)) for e in report.cases],
        "outcomes": [dict(vars(o)) for o in report.outcomes],  # (flat dataclasses: their fields, in order)
    }
    # one key per line, one case / outcome per line (a manifest's layout: the C encoder, not indent=1's Python one)
    atomic_write(os.path.join(directory, "summary.json"), manifest_text(data).encode("utf-8"))
