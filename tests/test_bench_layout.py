"""The layout benchmark's bare rows move the bytes their labels say (bench/bare_layout.py): every bare transpose
(1 and 2 threads, streaming and regular stores, +16 and line-aligned destinations, tiles and thread splits of its
sweep) writes exactly what the numpy way it is compared with writes, and the plain-copy ceiling rows copy the
source unchanged. A ceiling or a ratio measured against the wrong bytes would prove nothing. Small matrices: the
geometry is the 4096 x 4096 one, scaled down."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))

import bare_layout as bl  # noqa: E402

N = 256


@pytest.mark.parametrize("what", ["to_nz", "from_nz", "NZ2ND"])
@pytest.mark.parametrize("es", [2, 4])
def test_bare_rows_write_the_numpy_ways_bytes(what, es):
    burst, geo, make_src, numpy_way = bl.geometry(what, es, n=N)
    src = make_src(es)
    want = np.empty_like(src)
    numpy_way(src, want)()
    cuts = ((0, geo[0][0], 0, geo[1][0] // 3), (0, geo[0][0], geo[1][0] // 3, geo[1][0]))
    variants = [{}, {"threads": 1}, {"nt": False, "tiles": (32, 32)}, {"tiles": (16, 4)}, {"split": cuts}]
    for kw in variants:
        for offset in (0, 16, 48):
            guard = bl.aligned_empty(src.size + 128, offset=offset)
            guard[:] = 0xA5
            dst = guard[64:64 + src.size]
            bl.transpose(dst, src, burst, geo, **kw)()
            assert np.array_equal(dst, want), (kw, offset)
            assert (guard[:64] == 0xA5).all() and (guard[64 + src.size:] == 0xA5).all(), (kw, offset)
    for kw in ({}, {"nt": False}, {"threads": 1}, {"pieces": 3}):
        dst = bl.aligned_empty(src.size, offset=16)
        bl.dense(dst, src, **kw)()
        assert np.array_equal(dst, src), kw


@pytest.mark.parametrize("what", ["from_nz", "NZ2ND"])
@pytest.mark.parametrize("es", [2, 4])
def test_api_rows_write_the_matrix(what, es):
    """``--api``: the API calls (a repeat, the full path), the bare job of their plan and the numpy way each leave
    the matrix in their own output."""
    nbytes, funcs, outs = bl.api_funcs(what, es, n=N)
    for name, f in funcs.items():
        f()
        f()
    want = outs["copy"]
    for name in ("repeat", "full", "bare", "numpy"):
        assert np.array_equal(outs[name].view(np.uint8), want.view(np.uint8)), name
