"""The ceiling on this machine: the layout kernels called bare (no fastcopy planning, dispatch or definedness
around them; the thread split by hand on a one-worker pool), against np.copyto of the same bytes and the
plain-numpy way, interleaved medians (the 2-thread rows on a one-worker pool, as the executor did before its
persistent helper threads, and one on the helpers themselves). Beside each transpose, the same bytes copied
without transposing (``copy_dense``, streaming): no layout kernel can beat that row, so its "x numpy" is the most
any kernel can reach against the numpy way on this machine. Also the third table of bench/report.py.

    python bench/bare_layout.py            # the ceiling table
    python bench/bare_layout.py --tiles    # also sweep tile sizes and store kinds (slow)
"""

from __future__ import annotations

import pathlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from fastcopy import config  # noqa: E402
from fastcopy.dma import crew  # noqa: E402
from fastcopy.dma.abi import pack_transpose  # noqa: E402
from fastcopy.kernels.layout import copy_dense, transpose_blocks  # noqa: E402
from fastcopy.kernels.strided import copy_strided  # noqa: E402
from fastcopy.memory import aligned_empty  # noqa: E402

N = 4096
POOL = ThreadPoolExecutor(1)


def _two(fn, parts):
    f = POOL.submit(fn, parts[1])
    fn(parts[0])
    f.result()


def _transpose(dst, src, geo, tiles, nt, threads):
    a, c = geo
    cuts = [(0, a[0])] if threads == 1 else [(0, a[0] // 2), (a[0] // 2, a[0])]
    metas = [pack_transpose(32, (1, 0, 0), a, c, tiles, nt, (0, 1) + r) for r in cuts]
    if threads == 1:
        return lambda: transpose_blocks(dst, 0, src, 0, metas[0])
    return lambda: _two(lambda m: transpose_blocks(dst, 0, src, 0, m), metas)


def _dense2(dst, src):
    h = src.size // 2
    return lambda: _two(lambda r: copy_dense(dst, r[0], src, r[0], r[1], True), [(0, h), (h, src.size - h)])


def layout_cases(sweep=False):
    for es, name in ((2, "half"), (4, "float")):
        rng = np.random.default_rng(0)
        a = rng.integers(0, 256, N * N * es, dtype=np.uint8)
        row, nb, c0 = N * es, N * es // 32, 32 // es
        dt = np.float16 if es == 2 else np.float32
        lined, numpy16, b = aligned_empty(a.size), aligned_empty(a.size, offset=16), aligned_empty(a.size, offset=16)
        to_geo = ((nb, 32, N * 32), (N, row, 32))  # a = block column, c = row
        from_geo = ((N, 32, row), (nb, N * 32, 32))  # a = row, c = block column
        nz = np.empty_like(a)
        transpose_blocks(nz, 0, a, 0, pack_transpose(32, (1, 0, 0), *to_geo, (64, 8), 0, (0, 1, 0, nb)))
        av, nzv = a.view(dt).reshape(N, N // c0, c0), nz.view(dt).reshape(N // c0, N, c0)
        out_nz, out_nd = np.empty_like(nzv), np.empty_like(av)
        for what, src, geo, numpy_way in (
                ("to_nz", a, to_geo, lambda: np.copyto(out_nz, av.transpose(1, 0, 2))),
                ("from_nz", nz, from_geo, lambda: np.copyto(out_nd, nzv.transpose(1, 0, 2)))):
            tiles = (config.LAYOUT_TILE_A, config.LAYOUT_TILE_C)
            funcs = {"copyto": lambda: np.copyto(b, a), "numpy": numpy_way,
                     "dst 16 B into a line, streaming stores, 2 threads": _transpose(numpy16, src, geo, tiles, 1, 2),
                     "dst 16 B into a line, streaming stores, 1 thread": _transpose(numpy16, src, geo, tiles, 1, 1),
                     "line-aligned dst, streaming stores, 2 threads": _transpose(lined, src, geo, tiles, 1, 2),
                     "line-aligned dst, streaming stores, 1 thread": _transpose(lined, src, geo, tiles, 1, 1),
                     "dst 16 B into a line, regular stores, 2 threads": _transpose(numpy16, src, geo, (32, 32), 0, 2),
                     "dst 16 B into a line, regular stores, 1 thread": _transpose(numpy16, src, geo, (32, 32), 0, 1),
                     # the ceiling of any kernel: the same bytes copied without transposing (copy_dense)
                     "no transpose: dense streaming copy, 2 threads": _dense2(lined, src),
                     "no transpose: dense streaming copy, 1 thread": lambda d=lined, s=src: copy_dense(
                         d, 0, s, 0, s.size, True)}
            if sweep:
                for t in ((16, 8), (64, 4), (64, 8), (64, 16), (128, 4), (128, 16), (256, 4), (32, 8)):
                    for dst, tag in ((lined, "lined"), (numpy16, "+16")):
                        for nt in (0, 1):
                            funcs[f"{tag} tiles {t} nt={nt} 2 threads"] = _transpose(dst, src, geo, t, nt, 2)
            yield f"bare {what} {N}x{N} {name}", a.nbytes, funcs


def dense_cases():
    big = np.random.default_rng(0).integers(0, 256, 64 << 20, dtype=np.uint8)
    out16, lined = aligned_empty(big.size, offset=16), aligned_empty(big.size)
    b = aligned_empty(big.size, offset=16)
    for size in (256 << 10, 1 << 20, 4 << 20, 64 << 20):
        s, d, dl, bb = big[:size], out16[:size], lined[:size], b[:size]
        s8, d8 = s.view(np.uint64), d.view(np.uint64)
        meta = np.array([size // 8, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0], np.int64)
        h = size // 2

        def halves(dst, nt, s=s):
            return lambda: _two(lambda r: copy_dense(dst, r[0], s, r[0], r[1], nt), [(0, h), (h, size - h)])
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        halves_table = np.array([[0, h], [h, size - h]], np.int64)
        yield f"bare dense copy {label}", size, {
            # (the job header made once, as a repeated DataCopy prepares it: one compiled call per copy)
            "memcpy, 2 threads: persistent helper (dma/crew.py)": lambda h=crew.job(
                crew.DENSE, d, 0, s, 0, halves_table, nbytes=size), t=halves_table: crew.run_job(h),
            "copyto": lambda s=s, bb=bb: np.copyto(bb, s),
            "llvm.memcpy (copy_strided), 1 thread": lambda d8=d8, s8=s8, meta=meta: copy_strided(d8, 0, s8, 0, meta),
            "memcpy, 2 threads": halves(d, False),
            "streaming stores, 2 threads": halves(dl, True)}


def measure(funcs: dict, nbytes: int, rounds: int = 11) -> dict:
    number = max(1, (8 << 20) // nbytes)
    times = {k: [] for k in funcs}
    for f in funcs.values():
        f()
    for _ in range(rounds):
        for k, f in funcs.items():
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[k].append((time.perf_counter() - t0) / number)
    return {k: float(np.median(v)) for k, v in times.items()}


def rows(sweep=False) -> list[str]:
    out = [f"| {'bare kernel (no fastcopy code around it)':78} | {'time':>9} | {'x copyto':>8} | {'x numpy':>7} |",
           f"|{'-' * 80}|{'-' * 11}|{'-' * 10}|{'-' * 9}|"]
    for gen in (lambda: layout_cases(sweep), dense_cases):
        for title, nbytes, funcs in gen():
            m = measure(funcs, nbytes)
            for k, t in m.items():
                if k in ("copyto", "numpy"):
                    continue
                r_np = f"{m['numpy'] / t:7.2f}" if "numpy" in m else f"{'-':>7}"
                ms = f"{t * 1e3:6.2f} ms" if t >= 1e-3 else f"{t * 1e6:6.1f} us"
                out.append(f"| {(title + ': ' + k)[:78]:78} | {ms:>9} | {m['copyto'] / t:8.2f} | {r_np} |")
                print(out[-1], file=sys.stderr, flush=True)
    return out


if __name__ == "__main__":
    print("\n".join(rows("--tiles" in sys.argv)))
