"""How long a helper thread spins after its work (fastcopy/kernels/crew.py: serve): ``config.SPIN_US`` after a
chunk of a small job, ``config.BIG_SPIN_US`` after a chunk of a job of at least ``config.WAKE_BYTES`` (a loop of
large copies with other work between them finds it awake). The spins are set far apart here (1 us against
half a second), so the test waits for no timing of the machine's: a helper that ran a large job's chunk is
still spinning 30 ms later, and it goes to sleep again after a small job."""

from __future__ import annotations

import time

import numpy as np
import pytest

from fastcopy import config
from fastcopy.dma import abi, crew
from fastcopy.dma import kernels as K
from fastcopy.kernels import crew as KC

pytestmark = pytest.mark.skipif(not crew.SUPPORTED, reason="helper threads need x86-64 Linux")


@pytest.fixture()
def spins(monkeypatch):
    K.load()
    monkeypatch.setattr(config, "THREADS", 2)
    monkeypatch.setattr(crew, "ENABLED", True)
    monkeypatch.setattr(config, "SLOW_HELPER", float("inf"))  # (no back-off: it would stop the spinning)
    monkeypatch.setattr(config, "WAKE_BYTES", 1 << 20)
    monkeypatch.setattr(config, "SPIN_US", 1)
    monkeypatch.setattr(config, "BIG_SPIN_US", 500_000)
    crew.tune()
    crew.reset()
    yield
    monkeypatch.undo()
    crew.tune()
    crew.reset()


def _job(chunks: int = 64):
    """A copy job of ``chunks`` chunks of 64 KiB each (so that a woken helper still finds some to take)."""
    n = 64 << 10
    src = np.arange(chunks * n // 8, dtype=np.uint64)
    dst = np.zeros_like(src)
    metas = np.stack([abi.pack(n // 8, abi.NO_LOOPS, (0, 1, 0, 1), (k * n // 8,), (k * n // 8,))
                      for k in range(chunks)])
    return dst, src, metas


def _until(cond, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.001)
    return False


def test_a_helper_spins_longer_after_a_large_job(spins):
    dst, src, metas = _job()
    assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 10)  # (starts the helpers)
    box = crew._state["box"]
    assert _until(lambda: box[KC.SLEEPING] > 0)  # a small job: asleep after its 1 us of spinning
    helped = box[KC.HELPED]
    for _ in range(200):  # a large job wakes the helper for itself; until it has run one of its chunks
        dst[:] = 0
        assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 20)
        assert np.array_equal(dst, src)
        if box[KC.HELPED] > helped:
            break
    assert box[KC.HELPED] > helped
    time.sleep(0.03)
    assert box[KC.SLEEPING] == 0  # still spinning: BIG_SPIN_US, not SPIN_US
    for _ in range(3):  # small jobs again (shared while it spins): it goes back to sleep soon after
        assert crew.run(crew.COPY, dst, 0, src, 0, metas, nbytes=1 << 10)
    assert _until(lambda: box[KC.SLEEPING] > 0)
