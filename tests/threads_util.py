"""Running test code in two threads at once, switching between them often."""

from __future__ import annotations

import sys
import threading


def in_two_threads(work) -> None:
    """``work(0)`` and ``work(1)`` at once, from a common start, switching threads every microsecond (so they
    take turns inside calls, not between them: a lost update or a shared scratch object shows)."""
    gate = threading.Barrier(2)
    threads = [threading.Thread(target=lambda k=k: (gate.wait(), work(k))) for k in (0, 1)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(switch)
