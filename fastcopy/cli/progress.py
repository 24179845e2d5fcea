"""Progress bars for long commands: tqdm (the ``progress`` extra) on a terminal, with rate and ETA; nothing when
stderr is not a terminal, with ``--quiet``, or when tqdm is not installed."""

from __future__ import annotations

import sys


class TqdmProgress:
    """``progress(done, total, failed)`` callback drawing a tqdm bar on stderr."""

    def __init__(self, unit: str = "points", stream=None):
        from tqdm import tqdm

        self.bar = tqdm(total=0, unit=f" {unit}", file=stream or sys.stderr, dynamic_ncols=True, leave=True,
                        smoothing=0.1)
        self.done = 0

    def __call__(self, done: int, total: int, failed: int) -> None:
        if self.bar.total != total:
            self.bar.total = total
            self.bar.refresh()
        if failed:
            self.bar.set_postfix_str(f"{failed} failed", refresh=False)
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        self.bar.close()


def want_progress(args, stream=None) -> bool:
    stream = stream or sys.stderr
    if getattr(args, "quiet", False) or getattr(args, "no_progress", False):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def progress_for(args, unit: str = "points", stream=None):
    """A progress callback (with ``close()``), or None when there should be no bar."""
    if not want_progress(args, stream):
        return None
    try:
        return TqdmProgress(unit, stream)
    except ImportError:
        return None
