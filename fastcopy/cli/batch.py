"""``fastcopy batch CASES... -o DIR [--jobs N]``: progress bar, summary table, failures with reasons."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """A one-line progress bar on a terminal (stderr), redrawn at most every 0.1 s."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream, self.width = stream, width
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int, total: int, failed: int) -> None:
        now = time.perf_counter()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        frac = done / total if total else 1.0
        fill = int(round(frac * self.width))
        bad = f", {failed} failed" if failed else ""
        self.stream.write(f"\r[{'#' * fill}{'.' * (self.width - fill)}] {done}/{total}{bad}  "
                          f"{now - self.t0:.1f} s ")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def summary_table(report) -> list:
    rows = [("case", "points", "ok", "failed", "warnings", "seconds (sum)")]
    for ci, entry in enumerate(report.cases):
        outs = [o for o in report.outcomes if o.case == ci]
        ok = sum(o.ok for o in outs)
        warns = sum(len(o.warnings) for o in outs)
        secs = sum(o.seconds for o in outs)
        rows.append((entry.path, str(len(outs)), str(ok), str(len(outs) - ok), str(warns), f"{secs:.2f}"))
    n = len(report.outcomes)
    ok = n - len(report.failed)
    rows.append(("total", str(n), str(ok), str(n - ok), str(sum(len(o.warnings) for o in report.outcomes)),
                 f"{report.seconds:.2f} wall"))
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
    show = sys.stderr.isatty() and not args.no_progress
    report = run_batch(args.cases, args.output, jobs=args.jobs, seed=args.seed, strict=args.strict,
                       progress=ProgressBar() if show else None)
    print("\n".join(summary_table(report)))
    failed = report.failed
    if failed:
        print(f"\n{len(failed)} failure{'s' if len(failed) != 1 else ''}:")
        for o in failed:
            print(f"  {o.label}: {o.error}")
    print(f"\nwrote {args.output}/ ({len(report.outcomes) - len(failed)} golden folders, summary.json) with "
          f"{report.jobs} job{'s' if report.jobs != 1 else ''}")
    return 1 if failed else 0
