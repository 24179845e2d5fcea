"""``fastcopy batch CASES... -o DIR [--jobs N]``: progress bar, summary table, failures with reasons (stderr)."""

from __future__ import annotations

import sys

from .progress import progress_for


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
    kw = dict(jobs=args.jobs, seed=args.seed, strict=args.strict, resume=args.resume, chunk_size=args.chunk_size,
              max_bytes=args.max_bytes, allow_python=args.allow_python)
    bar = progress_for(args, "points")
    try:
        if args.dask is None:
            report = run_batch(args.cases, args.output, progress=bar, **kw)
        else:
            report = _run_dask(args, bar, kw)
            if report is None:
                return 2
    finally:
        if bar is not None:
            bar.close()
    if not args.quiet:
        print("\n".join(summary_table(report)))
    failed = report.failed
    if failed:
        print(f"{len(failed)} failure{'s' if len(failed) != 1 else ''}:", file=sys.stderr)
        for o in failed:
            print(f"  {o.label}: {o.error}", file=sys.stderr)
    if args.verbose:
        for o in report.outcomes:
            for w in o.warnings:
                print(f"  warning {o.label}: {w}", file=sys.stderr)
    skipped = len(report.skipped)
    written = len(report.outcomes) - len(failed) - skipped
    if report.interrupted:
        print(f"fastcopy batch: interrupted: {written} of {report.total} point(s) written to {args.output}/, "
              f"{len(failed)} failed, {report.total - len(report.outcomes)} not run (summary.json lists them; "
              "every folder with a manifest.json is complete)", file=sys.stderr)
        return 130
    if not args.quiet:
        kept = f", {skipped} already complete and skipped (--resume)" if skipped else ""
        where = (f"on the Dask cluster {report.dask} ({report.jobs} worker{'s' if report.jobs != 1 else ''})"
                 if report.dask else f"with {report.jobs} job{'s' if report.jobs != 1 else ''}")
        print(f"wrote {args.output}/ ({written} golden folders{kept}, summary.json) {where}")
    return 1 if failed else 0


def _run_dask(args, bar, kw):
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
        return run_batch(args.cases, args.output, progress=bar, client=client, **kw)
