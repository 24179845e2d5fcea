"""Tunables: every number that trades speed for something, in one place (none of them changes a result).

Read once at import; ``FASTCOPY_THREADS`` in the environment overrides the thread count.
"""

from __future__ import annotations

import os

#: worker threads for large kernel steps (1 = never split)
THREADS = max(1, min(int(os.environ.get("FASTCOPY_THREADS", "2")), os.cpu_count() or 1))
#: kernel steps moving at least this many bytes are split across the worker threads; dense plans marking a
#: smaller span set its definedness plane with numpy
PARALLEL_BYTES = 1 << 20
#: an innermost loop reading with a stride of at least TILE_STRIDE bytes and more than TILE iterations is tiled
TILE_STRIDE = 1024
TILE = 64
#: overlap analysis: above this many bursts, a plan whose writes may overlap (no analytic proof) is treated as
#: overlapping (the exact path runs, which is always correct)
OVERLAP_ENUM_BURSTS = 1 << 22
#: kernel calls moving at most this many bytes may run in numpy (no numba load: fast start for short scripts)...
SMALL_BYTES = 1 << 16
#: ... and numpy runs them only for the first CALLS_BEFORE_KERNELS kernel calls of a process; after that (or at
#: the first larger call) the numba kernels are loaded: a process making many calls benefits from them
CALLS_BEFORE_KERNELS = 200
