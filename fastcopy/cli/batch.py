"""``fastcopy batch CASES... -o DIR [--jobs N]``: progress bar, summary table, failures with reasons."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """A one-line progress bar on a terminal (stderr), redrawn at most every 0.1 s: points done, failures, rate
    (points/s since the first report) and the estimated time left."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream, self.width = stream, width
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.first = None  # points already done at the first report (failed case files)

    def __call__(self, done: int, total: int, failed: int) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first = done
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        frac = done / total if total else 1.0
        fill = int(round(frac * self.width))
        bad = f", {failed} failed" if failed else ""
        elapsed = now - self.t0
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        speed = f"  {_rate(rate)}" if done > self.first else ""
        eta = f"  ETA {_duration((total - done) / rate)}" if done < total and rate > 0 else ""
        self.stream.write(f"\r[{'#' * fill}{'.' * (self.width - fill)}] {done}/{total}{bad}{speed}{eta}  "
                          f"{_duration(elapsed)} ")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _rate(r: float) -> str:
    return f"{r:.0f} points/s" if r >= 10 else f"{r:.2f} points/s"


def _duration(s: float) -> str:
    s = max(0.0, s)
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def summary_table(report) -> list:
    skipping = bool(report.skipped)
    rows = [("case", "points", "ok", "failed", "warnings") + (("skipped",) if skipping else ()) + ("seconds (sum)",)]

    def row(name, outs, secs):
        ok = sum(o.ok for o in outs)
        warns = sum(len(o.warnings) for o in outs)
        skip = (str(sum(o.skipped for o in outs)),) if skipping else ()
        return (name, str(len(outs)), str(ok), str(len(outs) - ok), str(warns)) + skip + (secs,)

    for ci, entry in enumerate(report.cases):
        outs = [o for o in report.outcomes if o.case == ci]
        rows.append(row(entry.path, outs, f"{sum(o.seconds for o in outs):.2f}"))
    rows.append(row("total", report.outcomes, f"{report.seconds:.2f} wall"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells))
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def main_batch(args) -> int:
    from ..golden.batch import run_batch

    if args.jobs < 1:
        print("fastcopy batch: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.chunk_size is not None and args.chunk_size < 1:
        print("fastcopy batch: --chunk-size must be at least 1", file=sys.stderr)
        return 2
    show = sys.stderr.isatty() and not args.no_progress
    kw = dict(jobs=args.jobs, seed=args.seed, strict=args.strict, resume=args.resume, chunk_size=args.chunk_size)
    if args.dask is None:
        report = run_batch(args.cases, args.output, progress=ProgressBar() if show else None, **kw)
    else:
        report = _run_dask(args, show, kw)
        if report is None:
            return 2
    print("\n".join(summary_table(report)))
    failed = report.failed
    if failed:
        print(f"\n{len(failed)} failure{'s' if len(failed) != 1 else ''}:")
        for o in failed:
            print(f"  {o.label}: {o.error}")
    skipped = len(report.skipped)
    kept = f", {skipped} already complete and skipped (--resume)" if skipped else ""
    where = (f"on the Dask cluster {report.dask} ({report.jobs} worker{'s' if report.jobs != 1 else ''})"
             if report.dask else f"with {report.jobs} job{'s' if report.jobs != 1 else ''}")
    print(f"\nwrote {args.output}/ ({len(report.outcomes) - len(failed) - skipped} golden folders{kept}, "
          f"summary.json) {where}")
    return 1 if failed else 0


def _run_dask(args, show, kw):
    import contextlib

    from ..golden.batch import run_batch
    from ..golden.distributed import DaskUnavailable, connect, dashboard_link

    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(connect(args.dask))
        except (DaskUnavailable, ValueError) as exc:
            print(f"fastcopy batch --dask: {exc}", file=sys.stderr)
            return None
        except OSError as exc:  # no scheduler at that address (TimeoutError included)
            print(f"fastcopy batch --dask {args.dask}: cannot reach the scheduler: {exc}", file=sys.stderr)
            return None
        link = dashboard_link(client)
        if link:
            print(f"Dask dashboard: {link}", file=sys.stderr)
        return run_batch(args.cases, args.output, progress=ProgressBar() if show else None, client=client, **kw)
