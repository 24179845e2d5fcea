"""``fastcopy warmup``: compile (and cache on disk) every kernel specialisation."""

from __future__ import annotations

import time

import numpy as np


def warmup(verbose: bool = False) -> int:
    from ..dma import abi
    from ..kernels import (all_set, copy_dense, copy_rows, copy_strided, copy_tailed, fill_dense, fill_strided,
                           transpose_blocks, transpose_elements)

    t0 = time.perf_counter()
    meta = abi.contiguous(1)
    for t in (np.uint8, np.uint16, np.uint32, np.uint64):
        a = np.zeros(8, t)
        copy_strided(a, 0, a, 0, meta)
        fill_strided(a, 0, meta, np.uint64(0))
        all_set(a, 0, meta, np.uint64(0))
        copy_tailed(a, 0, a, 0, abi.pack_tailed(abi.NO_LOOPS[:2], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None), np.uint64(0))
    b = np.zeros(64, np.uint8)  # the layout kernels: one uint8 specialisation each
    meta = abi.pack_transpose(32, (1, 0, 0), (1, 32, 32), (1, 32, 32), (1, 1), False, (0, 1, 0, 1))
    transpose_blocks(b, 0, b, 0, meta)
    copy_rows(b, 0, b, 0, meta)
    copy_dense(b, 0, b, 32, 32, False)
    fill_dense(b, 0, 64, b)
    transpose_elements(b, 0, b, 0, abi.pack_transpose(2, (1, 0, 0), (1, 2, 32), (1, 32, 2), (1, 1), False,
                                                      (0, 1, 0, 1)))
    from ..kernels.nibbles import gather_nibbles, mark_runs, transpose_tiles  # the 4-bit transposes

    runs, tiles, w = np.zeros((1, 4), np.int64), np.zeros((1, 2), np.int64), np.zeros(64, np.uint64)
    transpose_tiles(w, 0, w, 0, tiles)  # (one tile: 16 words 32 bytes apart)
    gather_nibbles(b, 0, b, 0, runs, 0, False)
    mark_runs(b, 0, runs)
    from ..dma import crew  # the helper threads' kernels (parallel calls)

    crew.warmup()
    if verbose:
        print(f"fastcopy warmup: kernels ready in {time.perf_counter() - t0:.2f} s")
    return 0
