"""The ceiling on this machine: the layout kernels called bare (no fastcopy planning or dispatch around them),
against np.copyto of the same bytes and the plain-numpy way, 4096 x 4096 half and float, interleaved medians.

    python bench/bare_layout.py [--tiles]      # --tiles: also sweep tile sizes
"""

from __future__ import annotations

import pathlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from fastcopy.dma.abi import pack_transpose  # noqa: E402
from fastcopy.kernels.layout import copy_dense, transpose_blocks  # noqa: E402

N = 4096
POOL = ThreadPoolExecutor(1)


def _two(fn, metas):
    f = POOL.submit(fn, metas[1])
    fn(metas[0])
    f.result()


def aligned(n):
    """A fresh uint8 array of n bytes starting on a 64-byte boundary (numpy's large arrays start 16 bytes in)."""
    buf = np.empty(n + 64, np.uint8)
    o = (-buf.ctypes.data) % 64
    return buf[o:o + n]


def cases(es):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, N * N * es, dtype=np.uint8)
    row = N * es
    nb = row // 32
    nz, nd, b = aligned(a.size), aligned(a.size), aligned(a.size)
    c0 = 32 // es
    dt = np.float16 if es == 2 else np.float32
    av, nzv, ndv = a.view(dt).reshape(N, N), nz.view(dt), nd.view(dt)

    def numpy_to():
        np.copyto(nzv.reshape(N // c0, N, c0), av.reshape(N, N // c0, c0).transpose(1, 0, 2))

    def numpy_from():
        np.copyto(ndv.reshape(N, N // c0, c0), nzv.reshape(N // c0, N, c0).transpose(1, 0, 2))

    # to_nz: a = block column (src +32, dst +N*32), c = row (src +row, dst +32)
    to = dict(burst=32, batch=(1, 0, 0), a=(nb, 32, N * 32), c=(N, row, 32))
    # from_nz: a = row (src +32, dst +row), c = block column (src +N*32, dst +32)
    fr = dict(burst=32, batch=(1, 0, 0), a=(N, 32, row), c=(nb, N * 32, 32))
    return a, nz, nd, b, numpy_to, numpy_from, to, fr


def kern(dst, src, g, ta, tc, nt, threads):
    if threads == 1:
        m = pack_transpose(g["burst"], g["batch"], g["a"], g["c"], (ta, tc), nt, (0, 1, 0, g["a"][0]))
        return lambda: transpose_blocks(dst, 0, src, 0, m)
    na = g["a"][0]
    half = na // 2 // ta * ta
    ms = [pack_transpose(g["burst"], g["batch"], g["a"], g["c"], (ta, tc), nt, (0, 1) + r)
          for r in ((0, half), (half, na))]
    return lambda: _two(lambda m: transpose_blocks(dst, 0, src, 0, m), ms)


def dense(dst, src, nt, threads):
    n = src.size
    if threads == 1:
        return lambda: copy_dense(dst, 0, src, 0, n, nt)
    h = n // 2 // 4096 * 4096
    return lambda: _two(lambda r: copy_dense(dst, r[0], src, r[0], r[1], nt), [(0, h), (h, n - h)])


def measure(funcs, rounds=11):
    t = {k: [] for k in funcs}
    for f in funcs.values():
        f()
    for _ in range(rounds):
        for k, f in funcs.items():
            t0 = time.perf_counter()
            f()
            t[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in t.items()}


def report(title, nbytes, funcs):
    m = measure(funcs)
    print(f"{title}: copyto {m['copyto'] * 1e3:.2f} ms ({nbytes / m['copyto'] / 1e9:.1f} GB/s)"
          + (f", numpy {m['numpy'] * 1e3:.2f} ms" if "numpy" in m else ""))
    for k, v in m.items():
        if k in ("copyto", "numpy"):
            continue
        extra = f"  x numpy {m['numpy'] / v:5.2f}" if "numpy" in m else ""
        print(f"  {k:34} {v * 1e3:7.2f} ms  {nbytes / v / 1e9:5.1f} GB/s  x copyto {m['copyto'] / v:5.2f}{extra}")


def main():
    sweep = "--tiles" in sys.argv
    for es in (2, 4):
        a, nz, nd, b, numpy_to, numpy_from, to, fr = cases(es)
        name = "half" if es == 2 else "float"
        cp = lambda: np.copyto(b, a)  # noqa: E731
        tiles = [(16, 8), (64, 8), (256, 8), (64, 4), (64, 16)] if sweep else [(64, 8)]
        f = {"copyto": cp, "numpy": numpy_to}
        for ta, tc in tiles:
            for nt in (0, 1):
                for th in (1, 2):
                    f[f"to_nz tile {ta}x{tc} nt={nt} threads={th}"] = kern(nz, a, to, ta, tc, nt, th)
        report(f"to_nz {N}x{N} {name}", a.nbytes, f)
        transpose_blocks(nz, 0, a, 0, pack_transpose(32, to["batch"], to["a"], to["c"], (64, 8), 0, (0, 1, 0, nb)))
        f = {"copyto": cp, "numpy": numpy_from}
        for ta, tc in [(8, 16), (16, 16), (32, 8), (64, 8)] if sweep else [(32, 8)]:
            for nt in (0, 1):
                for th in (1, 2):
                    f[f"from_nz tile {ta}x{tc} nt={nt} threads={th}"] = kern(nd, nz, fr, ta, tc, nt, th)
        report(f"from_nz {N}x{N} {name}", a.nbytes, f)
        assert np.array_equal(nd, a)
    if '--no-dense' in sys.argv:
        return
    big = np.random.default_rng(0).integers(0, 256, 64 << 20, dtype=np.uint8)
    out = aligned(big.size)
    for size in (256 << 10, 1 << 20, 4 << 20, 32 << 20, 64 << 20):
        s, d = big[:size], out[:size]
        f = {"copyto": lambda: np.copyto(d, s)}
        for nt in (0, 1):
            for th in (1, 2):
                f[f"dense nt={nt} threads={th}"] = dense(d, s, nt, th)
        report(f"dense {size >> 10} KiB", size, f)


if __name__ == "__main__":
    main()
