"""Golden-data batches on a Dask cluster: ``fastcopy batch --dask ADDRESS | local[:N]``, or
``fastcopy.golden.run_batch(..., client=dask.distributed.Client(...))``.

The work is the same as a local batch, cut into chunks of sweep points of one case. A task's inputs are the case
file's text (with its name, folder and the ``--seed`` override) and the point numbers, never arrays. A worker
rebuilds the case from the text (once per process and case), runs the points with the code of a local batch
(:func:`fastcopy.golden.batch.run_chunk`), writes their golden folders itself (whole-folder swap, manifest last)
and returns only the small per-point outcomes. So the bytes are those of ``--jobs 1``, on any worker, in any
order, and the output folder must be a path every worker sees (a shared file system on a real cluster).

Failures stay local:

- a point that raises is an outcome with its reason, like in a local batch;
- a worker that dies while running a chunk (killed, out of memory) makes the scheduler run the chunk again on
  another worker (Dask's ``distributed.scheduler.allowed-failures`` retries); a chunk of several points that
  still fails is split into one task per point, so one bad point cannot take its neighbours down; a point whose
  worker keeps dying is reported failed with the reason. No point is ever silently lost: every point submitted
  comes back as an outcome.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from dataclasses import dataclass

from ..errors import FastCopyError
from .work import Outcome, failed_outcomes, make_chunks, run_chunk
from .case import Case, parse_text

#: How to install the optional dependency (printed when it is missing).
INSTALL_HINT = 'pip install "fastcopy-ascend[dask]" (or: pip install "dask[distributed]")'

#: Points per task: at most this many, and about TASKS_PER_WORKER tasks per worker at least (bench/bench_dask.py).
MAX_CHUNK = 100
TASKS_PER_WORKER = 8
#: Dask retries of a task that raised (run_chunk itself never raises; this covers the transport).
RETRIES = 1


class DaskUnavailable(FastCopyError):
    """``--dask`` without the optional ``dask[distributed]`` installed."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable(f"running on a Dask cluster needs dask.distributed, which is not installed: "
                              f"{INSTALL_HINT}") from None
    return distributed


@dataclass(frozen=True)
class CaseSource:
    """What a worker needs to rebuild a case: the file's name (for messages and the manifest), its text, the
    folder relative input paths are read from, and the ``--seed`` override."""

    file: str
    text: str
    base_dir: str
    seed: int | None
    max_bytes: int | None = None
    allow_python: bool = False

    @classmethod
    def of(cls, case: Case) -> "CaseSource":
        return cls(case.file, case.source, os.path.abspath(case.base_dir), case.seed, case.max_bytes,
                   case.allow_python)


@functools.lru_cache(maxsize=32)
def load_source(src: CaseSource) -> Case:
    """The case of ``src``, built once per worker process."""
    return Case(parse_text(src.text, src.file), src.file, src.text, base_dir=src.base_dir, seed=src.seed,
                max_bytes=src.max_bytes, allow_python=src.allow_python)


def run_task(src: CaseSource, case_no: int, indices: list, case_dir: str, strict: bool, resume: bool) -> list:
    """One Dask task: points ``indices`` of the case, written under ``case_dir``; returns their outcomes."""
    try:
        case = load_source(src)
    except Exception as exc:  # noqa: BLE001 - e.g. a worker with another fastcopy version
        return [_lost(src, case_no, pi, f"the worker could not load the case: {type(exc).__name__}: {exc}")
                for pi in indices]
    return run_chunk(case, case_no, indices, case_dir, strict, resume)


def _lost(src, case_no, pi, reason):
    return Outcome(case_no, pi, f"{os.path.basename(src.file)}#{pi}", False, f"{src.file}: point {pi}: {reason}")


def chunk_size(points: int, workers: int) -> int:
    """Points per task: enough tasks to keep every worker busy to the end (about TASKS_PER_WORKER each), few
    enough that the per-task overhead (~1-2 ms on the scheduler) stays small next to the points' work."""
    return max(1, min(MAX_CHUNK, points // (max(1, workers) * TASKS_PER_WORKER)))


def run_on_client(client, cases, case_dirs, strict=False, resume=False, size=None):
    """Run every point of ``cases`` (``None`` entries skipped) on ``client``'s workers; yield lists of outcomes
    as tasks finish. Every point comes back exactly once, as written, skipped or failed."""
    dist = _distributed()
    workers = len(client.scheduler_info().get("workers", ())) or 1
    points = sum(len(c) for c in cases if c is not None)
    size = size or chunk_size(points, workers)
    sources = {ci: CaseSource.of(c) for ci, c in enumerate(cases) if c is not None}
    tag = uuid.uuid4().hex[:8]
    chunks = make_chunks(cases, size)

    def key(ci, indices):
        return f"fastcopy-batch-{tag}-{ci}-{indices[0]}-{len(indices)}"

    def submit(batch):
        futs = client.map(run_task, [sources[ci] for ci, _ in batch], [ci for ci, _ in batch],
                          [ix for _, ix in batch], [case_dirs[ci] for ci, _ in batch], [strict] * len(batch),
                          [resume] * len(batch), key=[key(ci, ix) for ci, ix in batch], retries=RETRIES)
        return dict(zip(futs, batch))

    pending = submit(chunks)
    done = dist.as_completed(list(pending))
    try:
        for fut in done:
            ci, indices = pending.pop(fut)
            if fut.status == "finished":
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - lost between worker and client
                    error = exc
                else:
                    fut.release()  # the worker may drop it: a later worker death does not recompute it
                    yield result
                    continue
            else:
                error = fut.exception()
            if isinstance(error, dist.KilledWorker) and len(indices) > 1:
                split = submit([(ci, [pi]) for pi in indices])  # find the point that kills its worker
                pending.update(split)
                done.update(split)
                continue
            yield failed_outcomes(cases[ci], ci, indices, case_dirs[ci], _reason(dist, error))
    finally:
        if pending:
            client.cancel(list(pending))


def _reason(dist, error) -> str:
    if isinstance(error, dist.KilledWorker):
        return ("every Dask worker that ran this point died while running it (killed, or out of memory; the "
                f"scheduler's allowed-failures retries are used up): {error}")
    return f"the Dask task failed: {type(error).__name__}: {error}"


def parse_local(spec: str) -> int | None:
    """``local`` -> the number of cores, ``local:N`` -> N; anything else (a scheduler address) -> None."""
    if spec == "local":
        return os.cpu_count() or 1
    if spec.startswith("local:"):
        try:
            n = int(spec[6:])
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"--dask {spec}: expected local:N with N >= 1 worker processes")
        return n
    return None


@contextlib.contextmanager
def connect(spec: str, **cluster_kw):
    """A ``Client`` for ``spec``: a scheduler address (``tcp://host:8786``, a scheduler file path ending in
    ``.json``), or ``local[:N]`` for a ``LocalCluster`` of N single-threaded worker processes on this machine
    (closed on exit)."""
    import logging

    dist = _distributed()
    n = parse_local(spec)
    if n is None:
        if spec.endswith(".json") and os.path.isfile(spec):
            client = dist.Client(scheduler_file=spec)
        else:
            client = dist.Client(spec)
        with client:
            yield client
        return
    kw = dict(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
              silence_logs=logging.ERROR)
    kw.update(cluster_kw)
    with dist.LocalCluster(**kw) as cluster, dist.Client(cluster) as client:
        yield client


def dashboard_link(client) -> str | None:
    """The dashboard URL when the scheduler serves one (it needs bokeh)."""
    try:
        services = client.scheduler_info().get("services", {})
    except Exception:  # noqa: BLE001
        return None
    return client.dashboard_link if "dashboard" in services else None
