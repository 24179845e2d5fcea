"""The ceiling on this machine: the layout kernels called bare (no fastcopy planning, dispatch or definedness
around them: a job header made once, run on the persistent helper threads as a repeated call runs it), against
np.copyto of the same bytes and the plain-numpy way, interleaved medians. Beside each transpose, the same bytes
copied without transposing (``copy_dense``: streaming stores, and memcpy): no layout kernel can beat the faster
of those rows, so its "x numpy" is the most any kernel can reach against the numpy way on this machine. Also the
fourth table of bench/report.py; bench/interleaved.py prints the same plain-copy ceiling under each target row.

Fair to every row: each variant writes its own destination buffer (a buffer shared by a regular-store variant
and a streaming one measured the streaming one 1.7x slower right after the regular one had run: its lines were
left dirty in the cache, and a streaming store to a cached line pays for it; that, not the 16-byte phase of the
destination, was the "dst 16 B into a line" row's 2.28 ms against 1.41 ms line-aligned at 08:30), and every
round runs the variants in a fresh random order (each follows each other about equally often).

    python bench/bare_layout.py            # the ceiling table
    python bench/bare_layout.py --tiles    # also sweep tile sizes and thread splits (slow)
    python bench/bare_layout.py --api      # from_nz / NZ2ND through the API (a repeat, the full path) beside
                                           # the bare job of the same plan and the ceiling
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from fastcopy import config  # noqa: E402
from fastcopy.dma import crew  # noqa: E402
from fastcopy.dma.abi import pack_transpose  # noqa: E402
from fastcopy.dma.lower import _layout_chunks  # noqa: E402
from fastcopy.kernels.layout import copy_dense, transpose_blocks  # noqa: E402
from fastcopy.kernels.strided import copy_strided  # noqa: E402
from fastcopy.memory import aligned_empty  # noqa: E402

N = 4096
NT_DST = "dst +16 B (numpy's out=)"
LINED = "line-aligned dst"


def _job(kind, dst, src, table, nbytes, threads, nt):
    """The chunks of ``table`` (kernel metas, or (offset, length) pieces): a job header made once, run on the
    persistent helper threads as a repeated call runs it (1 thread, or no crew: the chunks here, in order)."""
    if kind == crew.TRANSPOSE:
        def alone():
            for m in table:
                transpose_blocks(dst, 0, src, 0, m)
    else:
        def alone():
            for p in table:
                copy_dense(dst, int(p[0]), src, int(p[0]), int(p[1]), nt)
    if threads == 1:
        return alone
    head = crew.job(kind, dst, 0, src, 0, table, np.uint64(0), int(nt), nbytes)
    return lambda: crew.run_job(head) or alone()


def transpose(dst, src, burst, geo, tiles=None, nt=True, threads=2, split=None):
    """``transpose_blocks`` over ``geo`` = (batch, a, c) (count, src, dst strides in bytes), cut as the lowering
    cuts it (``split``: (b_lo, b_hi, a_lo, a_hi) chunks of one's own)."""
    batch, a, c = geo
    tiles = tiles or (config.LAYOUT_TILE_A_NT if nt else config.LAYOUT_TILE_A, config.LAYOUT_TILE_C)
    nbytes = batch[0] * a[0] * c[0] * burst
    if split is None:
        split = _layout_chunks(batch[0], a[0], nbytes, tiles[0]) if threads > 1 else ((0, batch[0], 0, a[0]),)
    table = np.stack([pack_transpose(burst, batch, a, c, tiles, nt, ch) for ch in split])
    return _job(crew.TRANSPOSE, dst, src, table, nbytes, threads, nt)


def dense(dst, src, nt=True, threads=2, pieces=None):
    """The same bytes without transposing: one contiguous copy (streaming, or memcpy) in ``pieces`` (default: as
    the lowering cuts a large step, whole pages)."""
    n = src.size
    k = pieces or (threads * config.CHUNKS_PER_THREAD if threads > 1 else 1)
    size = -(-n // k // 4096) * 4096
    table = np.array([[lo, min(size, n - lo)] for lo in range(0, n, size)], np.int64)
    return _job(crew.DENSE, dst, src, table, n, threads, nt)


def _matrix(es, n=N):
    return np.random.default_rng(0).integers(0, 256, n * n * es, dtype=np.uint8)


def geometry(what, es, rows=None, n=N):
    """``(burst, (batch, a, c), source maker, numpy way maker)`` of one ``n`` x ``n`` layout case, exactly as
    bench/interleaved.py measures it through the API (NZ2ND: calls of ``rows`` rows, 16-element blocks). The
    makers: ``source(es)`` -> bytes; ``numpy_way(src, out)`` -> the plain-numpy call writing ``out``."""
    dt = {2: np.float16, 4: np.float32}[es]
    row = n * es
    if what in ("to_nz", "from_nz"):
        c0 = 32 // es
        to_geo = ((1, 0, 0), (row // 32, 32, n * 32), (n, row, 32))  # a = block column, c = row
        if what == "to_nz":
            def numpy_way(src, out):
                o, s = out.view(dt).reshape(n // c0, n, c0), src.view(dt).reshape(n, n // c0, c0)
                return lambda: np.copyto(o, s.transpose(1, 0, 2))
            return 32, to_geo, lambda es: _matrix(es, n), numpy_way

        def nz_source(es):
            a, nz = _matrix(es, n), np.empty(n * n * es, np.uint8)
            transpose_blocks(nz, 0, a, 0, pack_transpose(32, *to_geo, (64, 8), False, (0, 1, 0, row // 32)))
            return nz

        def numpy_way(src, out):
            o, s = out.view(dt).reshape(n, n // c0, c0), src.view(dt).reshape(n // c0, n, c0)
            return lambda: np.copyto(o, s.transpose(1, 0, 2))
        return 32, ((1, 0, 0), (n, 32, row), (row // 32, n * 32, 32)), nz_source, numpy_way  # a = row
    # NZ2ND (DataCopy(Nz2NdParamsFull) VECOUT->GM): n // rows calls, each (rows, n) from 16-element fractals
    rows = rows or n // 2
    burst, calls = 16 * es, n // rows
    geo = ((calls, rows * row, rows * row), (rows, burst, row), (row // burst, rows * burst, burst))

    def numpy_way(src, out):
        o = out.view(dt).reshape(calls, rows, n // 16, 16)
        s = src.view(dt).reshape(calls, n // 16, rows, 16)
        return lambda: np.copyto(o, s.transpose(0, 2, 1, 3))
    return burst, geo, lambda es: _matrix(es, n), numpy_way


CASES = (("to_nz", 2), ("from_nz", 2), ("NZ2ND", 2), ("to_nz", 4), ("from_nz", 4), ("NZ2ND", 4))


def layout_cases(sweep=False, only=()):
    for what, es in CASES:
        name = f"bare {what} {N}x{N} {'half' if es == 2 else 'float'}"
        if only and not any(w in name for w in only):
            continue
        burst, geo, make_src, numpy_way = geometry(what, es)
        src = make_src(es)
        n = src.size

        def buf(offset=16):
            return aligned_empty(n, offset=offset)  # (each variant its own: see the module docstring)
        b = buf()
        funcs = {"copyto": lambda b=b, s=src: np.copyto(b, s), "numpy": numpy_way(src, buf()),
                 f"{NT_DST}, streaming stores, 2 threads": transpose(buf(), src, burst, geo),
                 f"{NT_DST}, streaming stores, 1 thread": transpose(buf(), src, burst, geo, threads=1),
                 f"{LINED}, streaming stores, 2 threads": transpose(buf(0), src, burst, geo),
                 f"{NT_DST}, regular stores, 2 threads": transpose(
                     buf(), src, burst, geo, (config.LAYOUT_TILE_A_UNALIGNED, config.LAYOUT_TILE_C_UNALIGNED), False),
                 # the ceiling of any kernel: the same bytes copied without transposing
                 "no transpose: dense streaming copy, 2 threads": dense(buf(0), src),
                 "no transpose: dense memcpy (regular stores), 2 threads": dense(buf(), src, nt=False),
                 "no transpose: dense streaming copy, 1 thread": dense(buf(0), src, threads=1)}
        if sweep:
            for t in ((32, 8), (64, 8), (128, 8), (128, 16), (256, 8), (512, 8), (1024, 8), (1024, 16), (2048, 8),
                      (32, 32)):
                funcs[f"{NT_DST}: tiles {t}"] = transpose(buf(), src, burst, geo, t)
            a_n = geo[1][0]
            for parts in (2, 4, 8):
                step = -(-a_n // parts)
                cuts = tuple((0, geo[0][0], lo, min(lo + step, a_n)) for lo in range(0, a_n, step))
                funcs[f"{NT_DST}: {len(cuts)} chunks"] = transpose(buf(), src, burst, geo, split=cuts)
            for pieces in (2, 8):
                funcs[f"no transpose: dense streaming copy, {pieces} pieces"] = dense(buf(0), src, pieces=pieces)
        yield name, n, funcs


def dense_cases():
    big = np.random.default_rng(0).integers(0, 256, 64 << 20, dtype=np.uint8)
    out16, lined = aligned_empty(big.size, offset=16), aligned_empty(big.size)
    b = aligned_empty(big.size, offset=16)
    for size in (256 << 10, 1 << 20, 4 << 20, 64 << 20):
        s, d, dl, bb = big[:size], out16[:size], lined[:size], b[:size]
        s8, d8 = s.view(np.uint64), d.view(np.uint64)
        meta = np.array([size // 8, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0], np.int64)
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        halves = np.array([[0, size // 2], [size // 2, size - size // 2]], np.int64)
        yield f"bare dense copy {label}", size, {
            # (the job header made once, as a repeated DataCopy prepares it: one compiled call per copy)
            "memcpy, 2 threads: persistent helper (dma/crew.py)": lambda h=crew.job(
                crew.DENSE, d, 0, s, 0, halves, nbytes=size), t=halves: crew.run_job(h),
            "copyto": lambda s=s, bb=bb: np.copyto(bb, s),
            "llvm.memcpy (copy_strided), 1 thread": lambda d8=d8, s8=s8, meta=meta: copy_strided(d8, 0, s8, 0, meta),
            "streaming stores, 2 threads": _job(crew.DENSE, dl, s, halves, size, 2, True)}


def api_funcs(what: str, es: int, n: int = N) -> tuple:
    """``(nbytes, funcs, outputs)``: one layout case through the public API beside the same kernel bare: a repeat
    (``from_nz`` into the same ``out=``: its remembered crew job; NZ2ND: the same tensors and params, the prepared
    job), the full path (``from_nz`` with a list shape, which is never remembered; NZ2ND into new GlobalTensors
    each call), the bare job of the call's own plan (its header made once), the plain-copy ceiling and the numpy
    way and ``np.copyto`` of the matrix, each writing its own output. ``outputs``: the arrays they write (name ->
    array; every one of them the matrix once its function ran)."""
    import fastcopy as fc
    from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, formats
    from fastcopy.dma.run import layout_job

    name = {2: "half", 4: "float"}[es]
    burst, geo, make_src, numpy_way = geometry("from_nz" if what == "from_nz" else "NZ2ND", es, n=n)
    a = _matrix(es, n).view({2: np.float16, 4: np.float32}[es]).reshape(n, n)
    outs = {k: aligned_empty(a.nbytes, (n, n), a.dtype, offset=16) for k in ("repeat", "full", "bare", "numpy", "copy")}
    if what == "from_nz":
        src = fc.to_nz(a)
        fc.from_nz(src, (n, n), out=outs["repeat"])
        plan = formats.from_nz_call(src, (n, n), None, outs["bare"])[1]
        funcs = {"API, a repeat (its remembered job)": lambda: fc.from_nz(src, (n, n), out=outs["repeat"]),
                 "API, the full path (planned, checked)": lambda: fc.from_nz(src, [n, n], out=outs["full"])}
    else:
        rows = n // 2
        pipe = TPipe(capacities={"UB": 2 * a.nbytes})
        ub = pipe.alloc(TPosition.VECOUT, name, a.size)
        ub.numpy()[:] = fc.to_nz(a.reshape(n // rows, rows, n), c0=16).reshape(-1)
        ub.set_defined()
        src = ub.numpy()
        q = fc.nz2nd_params(rows, n, name)
        calls = [(GlobalTensor(outs["repeat"])[k * n], ub[k * n]) for k in range(0, n, rows)]

        def repeat():
            for g, u in calls:
                DataCopy(g, u, q)

        def full():
            for k in range(0, n, rows):
                DataCopy(GlobalTensor(outs["full"])[k * n], ub[k * n], q)
        funcs = {"API, a repeat (its prepared job)": repeat, "API, the full path (new tensors each call)": full}
        plan = None
    sb = src.reshape(-1).view(np.uint8)
    if plan is not None and layout_job(plan, outs["bare"].reshape(-1).view(np.uint8), sb) is not None:
        head = layout_job(plan, outs["bare"].reshape(-1).view(np.uint8), sb)
        funcs["bare job of the call's plan"] = lambda: crew.run_job(head[0])
    else:
        funcs["bare job of the call's plan"] = transpose(outs["bare"].reshape(-1).view(np.uint8), sb, burst, geo)
    funcs["no transpose: dense streaming copy, 2 threads"] = dense(aligned_empty(sb.size), sb)
    funcs["numpy"] = numpy_way(sb, outs["numpy"].reshape(-1).view(np.uint8))
    funcs["copyto"] = lambda: np.copyto(outs["copy"], a)
    return a.nbytes, funcs, outs


def api_rows() -> list[str]:
    """The table of :func:`api_funcs` for the four NZ -> ND target cases (``--api``)."""
    out = [f"| {'through the API, beside the bare kernel':84} | {'time':>9} | {'x copyto':>8} | {'x numpy':>7} |",
           f"|{'-' * 86}|{'-' * 11}|{'-' * 10}|{'-' * 9}|"]
    for what, es in (("from_nz", 2), ("NZ2ND", 2), ("from_nz", 4), ("NZ2ND", 4)):
        nbytes, funcs, _ = api_funcs(what, es)
        m = measure(funcs, nbytes)
        title = f"{what} {N}x{N} {'half' if es == 2 else 'float'}"
        for k, t in m.items():
            if k not in ("copyto", "numpy"):
                out.append(f"| {(title + ': ' + k)[:84]:84} | {t * 1e3:6.2f} ms | {m['copyto'] / t:8.2f} | "
                           f"{m['numpy'] / t:7.2f} |")
                print(out[-1], file=sys.stderr, flush=True)
        out.append(f"| {(title + ': the numpy way')[:84]:84} | {m['numpy'] * 1e3:6.2f} ms | "
                   f"{m['copyto'] / m['numpy']:8.2f} | {1:7.2f} |")
    return out


def measure(funcs: dict, nbytes: int, rounds: int = 11, seed: int = 0) -> dict:
    """Median seconds per call of each function; every round in a fresh random order (seeded)."""
    number = max(1, (8 << 20) // nbytes)
    times = {k: [] for k in funcs}
    for f in funcs.values():
        f()
    order = list(funcs)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        rng.shuffle(order)
        for k in order:
            f = funcs[k]
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[k].append((time.perf_counter() - t0) / number)
    return {k: float(np.median(v)) for k, v in times.items()}


def rows(sweep=False, only=()) -> list[str]:
    out = [f"| {'bare kernel (no fastcopy code around it)':84} | {'time':>9} | {'x copyto':>8} | {'x numpy':>7} |",
           f"|{'-' * 86}|{'-' * 11}|{'-' * 10}|{'-' * 9}|"]
    gens = [lambda: layout_cases(sweep, only)] + ([] if only else [dense_cases])
    for gen in gens:
        for title, nbytes, funcs in gen():
            m = measure(funcs, nbytes)
            for k, t in m.items():
                if k in ("copyto", "numpy"):
                    continue
                r_np = f"{m['numpy'] / t:7.2f}" if "numpy" in m else f"{'-':>7}"
                ms = f"{t * 1e3:6.2f} ms" if t >= 1e-3 else f"{t * 1e6:6.1f} us"
                out.append(f"| {(title + ': ' + k)[:84]:84} | {ms:>9} | {m['copyto'] / t:8.2f} | {r_np} |")
                print(out[-1], file=sys.stderr, flush=True)
            if "numpy" in m:
                ms = f"{m['numpy'] * 1e3:6.2f} ms"
                out.append(f"| {(title + ': the numpy way')[:84]:84} | {ms:>9} | {m['copyto'] / m['numpy']:8.2f} | "
                           f"{1:7.2f} |")
    return out


if __name__ == "__main__":
    words = tuple(a for a in sys.argv[1:] if not a.startswith("--"))
    print("\n".join(api_rows() if "--api" in sys.argv else rows("--tiles" in sys.argv, words)))
