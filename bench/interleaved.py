"""The issue-11 speed targets, measured interleaved: each round times fastcopy, np.copyto of the same bytes and
the plain-numpy way back to back, so the ratios survive this machine's drifting memory bandwidth
(pytest-benchmark times one test after another, minutes apart). Each row shows its target and whether this
run met it.

    python bench/interleaved.py            # also the second table of bench/report.py
    python bench/interleaved.py nz pad     # only the cases whose name contains one of the words
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import fastcopy as fc  # noqa: E402
from fastcopy import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams,  # noqa: E402
                      GlobalTensor, TPipe, TPosition)

N = 4096
BIG = 64 << 20
#: (x copyto, x numpy) targets of issue 11
LAYOUT = (1.2, 8.0)
COPY = (1.0, None)
DTYPES = {"half": (np.float16, np.uint16), "float": (np.float32, np.uint32)}


def _matrix(dtype: str):
    dt, ut = DTYPES[dtype]
    info = np.iinfo(ut)
    return np.random.default_rng(0).integers(0, info.max, (N, N), dtype=ut, endpoint=True).view(dt)


def _params(nbytes: int):
    blocks = nbytes // 32
    return DataCopyParams(1, blocks) if blocks <= 65535 else DataCopyParams(blocks // 32768, 32768)


def case_datacopy():
    for size in (256 << 10, 512 << 10, 1 << 20, 4 << 20, 16 << 20, BIG):
        src = np.random.default_rng(0).integers(0, 2**16, size // 2, dtype=np.uint16)
        pipe = TPipe(capacities={"UB": max(size, 256 << 10)})
        ub = pipe.alloc(TPosition.VECIN, "uint16", src.size)
        gm, go, b = GlobalTensor(src), GlobalTensor(np.empty_like(src)), np.empty_like(src)
        p = _params(size)
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        cp = lambda b=b, src=src: np.copyto(b, src)  # noqa: E731
        yield f"DataCopy GM->UB {label}", size, COPY, {"fastcopy": lambda ub=ub, gm=gm, p=p: DataCopy(ub, gm, p),
                                                       "copyto": cp}
        yield f"DataCopy UB->GM {label}", size, COPY, {"fastcopy": lambda ub=ub, go=go, p=p: DataCopy(go, ub, p),
                                                       "copyto": cp}


def _nz_views(x, c0):
    """``x`` (N, N) as (N, N/c0, c0) and an NZ array as (N/c0, N, c0): the numpy way is one transposed copy."""
    return x.reshape(N, N // c0, c0), x.reshape(N // c0, N, c0)


def _ceiling(src):
    """The same bytes copied without transposing, bare (bench/bare_layout.py: streaming stores, both threads, into
    a buffer of its own) from the array the fastcopy call reads (this VM's large L3 keeps part of a 32-64 MiB
    array that other rows read too: a hotter source would flatter the ceiling): no layout kernel beats it, so
    its "x numpy" is the most any can reach."""
    import bare_layout

    src = src.reshape(-1).view(np.uint8)
    return bare_layout.dense(bare_layout.aligned_empty(src.size), src)


def case_nz():
    for name in ("half", "float"):
        a = _matrix(name)
        es = a.itemsize
        c0 = 32 // es
        nz = fc.to_nz(a)
        b, out_nz, out_nd = np.empty_like(a), np.empty_like(nz), np.empty_like(a)
        cp = lambda b=b, a=a: np.copyto(b, a)  # noqa: E731
        a3, nz3 = _nz_views(a, c0)[0], _nz_views(nz, c0)[1]
        o_nz3, o_nd3 = _nz_views(out_nz, c0)[1], _nz_views(out_nd, c0)[0]
        yield f"to_nz {N}x{N} {name} (out=)", a.nbytes, LAYOUT, {
            "fastcopy": lambda a=a, o=out_nz: fc.to_nz(a, out=o), "copyto": cp, "ceiling": _ceiling(a),
            "numpy": lambda o=o_nz3, a3=a3: np.copyto(o, a3.transpose(1, 0, 2))}
        yield f"from_nz {N}x{N} {name} (out=)", a.nbytes, LAYOUT, {
            "fastcopy": lambda nz=nz, o=out_nd: fc.from_nz(nz, (N, N), out=o), "copyto": cp, "ceiling": _ceiling(nz),
            "numpy": lambda o=o_nd3, nz3=nz3: np.copyto(o, nz3.transpose(1, 0, 2))}
        pipe = TPipe(capacities={"L1": 2 * a.nbytes, "UB": 2 * a.nbytes})
        l1 = pipe.alloc(TPosition.A1, name, a.size)
        gm = GlobalTensor(a)
        p = fc.nd2nz_params(N, N, name)
        yield f"DataCopy(Nd2NzParams) GM->A1 {N}x{N} {name}", a.nbytes, LAYOUT, {
            "fastcopy": lambda l1=l1, gm=gm, p=p: DataCopy(l1, gm, p), "copyto": cp, "ceiling": _ceiling(a),
            "numpy": lambda o=o_nz3, a3=a3: np.copyto(o, a3.transpose(1, 0, 2))}
        # NZ2ND: 16-element fractal columns for every dtype; srcNStride (the NZ row count) is at most 4095, so
        # the matrix goes out in two calls of 2048 rows
        rows = 2048
        ub = pipe.alloc(TPosition.VECOUT, name, a.size)
        ub.numpy()[:] = fc.to_nz(a.reshape(N // rows, rows, N), c0=16).reshape(-1)
        ub.set_defined()
        g_out = GlobalTensor(out_nd)
        q = fc.nz2nd_params(rows, N, name)
        calls = [(g_out[k * N], ub[k * N]) for k in range(0, N, rows)]

        def nz2nd(calls=calls, q=q):
            for g, u in calls:
                DataCopy(g, u, q)
        nzb = ub.numpy().reshape(N // rows, N // 16, rows, 16)
        o4 = out_nd.reshape(N // rows, rows, N // 16, 16)
        yield f"DataCopy(Nz2NdParamsFull) VECOUT->GM {N}x{N} {name}", a.nbytes, LAYOUT, {
            "fastcopy": nz2nd, "copyto": cp, "ceiling": _ceiling(ub.numpy()),
            "numpy": lambda o4=o4, nzb=nzb: np.copyto(o4, nzb.transpose(0, 2, 1, 3))}


def case_pad():
    rows, cols = 2048, 8191  # float32 rows of 32764 bytes, padded to 32768
    src = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    pipe = TPipe(capacities={"UB": rows * 8192 * 4})
    ub = pipe.alloc(TPosition.VECIN, "float", rows * 8192)
    gm, out = GlobalTensor(src), np.empty_like(src)
    cp = DataCopyExtParams(rows, cols * 4, 0, 0, 0)
    pp = DataCopyPadExtParams(False, 0, 0, 0)
    flat, b = src.reshape(-1), np.empty(src.size, np.float32)
    u2d = np.empty((rows, 8192), np.float32)

    def numpy_in():
        u2d[:, :cols] = src
        u2d[:, cols:] = src[:, :1]
    yield "DataCopyPad GM->UB 2048 rows x 32764 B (64 MiB)", src.nbytes, COPY, {
        "fastcopy": lambda: DataCopyPad(ub, gm, cp, pp), "copyto": lambda: np.copyto(b, flat), "numpy": numpy_in}
    go = GlobalTensor(out)
    yield "DataCopyPad UB->GM 2048 rows x 32764 B (64 MiB)", src.nbytes, COPY, {
        "fastcopy": lambda: DataCopyPad(go, ub, cp), "copyto": lambda: np.copyto(b, flat),
        "numpy": lambda: np.copyto(out, u2d[:, :cols])}


def case_slice():
    shape = (256, 256, 256)  # float32: 64 MiB
    a = np.random.default_rng(0).random(shape, dtype=np.float32)
    gm = GlobalTensor(a)
    for index, text in ((np.s_[:, ::2, :], "a[:, ::2, :] (32 MiB) of 64 MiB f32"),
                        (np.s_[::2, ::2, 64:192], "a[::2, ::2, 64:192] (8 MiB) of 64 MiB f32")):
        sel = a[index]
        pipe = TPipe(capacities={"UB": sel.nbytes})
        x = pipe.alloc(TPosition.VECIN, "float", sel.size)
        dst_info, src_info = fc.slice_infos(shape, index, "float", product=pipe.product)
        flat, out = np.ascontiguousarray(a.reshape(-1)[:sel.size]), np.empty(sel.shape, np.float32)
        yield f"DataCopy(SliceInfo) GM->UB {text}", sel.nbytes, COPY, {
            "fastcopy": lambda x=x, d=dst_info, s=src_info: DataCopy(x, gm, d, s, len(s)),
            "copyto": lambda o=out.reshape(-1), f=flat: np.copyto(o, f),
            "numpy": lambda o=out, index=index: np.copyto(o, a[index])}


CASES = (case_datacopy, case_nz, case_pad, case_slice)


def measure(funcs: dict, nbytes: int, rounds: int = 15, warm: int = 0) -> dict:
    """Median seconds per call of each function, timed round-robin (small calls in batches), every round in a
    fresh random order (seeded): each function follows each other about equally often. (A large copy pays for the
    dirty lines the previous function left in the caches: in a fixed order fastcopy's streaming stores, which
    leave none, hand np.copyto clean caches while fastcopy always follows the numpy way's 32 MiB of regular
    stores; the 32 MiB slice measured 0.94x np.copyto in the order fastcopy, copyto, numpy and 1.05x in fastcopy,
    numpy, copyto. A rotated order keeps each function's predecessor, so it is no cure.) ``warm`` untimed rounds
    first (whole batches, after one call of each: a repeated call that settles only after many calls,
    bench/cube_in.py)."""
    number = max(1, (8 << 20) // nbytes)
    times = {k: [] for k in funcs}
    for f in funcs.values():
        f()  # warm-up: compile, plan, page faults
    order = list(funcs.items())
    rng = np.random.default_rng(0)
    for r in range(warm + rounds):
        rng.shuffle(order)  # (a rotation keeps every function's predecessor: fastcopy always ran after numpy)
        for k, f in order:
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            if r >= warm:
                times[k].append((time.perf_counter() - t0) / number)
    return {k: float(np.median(v)) for k, v in times.items()}


def _target(ratio, want) -> str:
    if want is None:
        return ""
    return f">= {want:g} {'met' if ratio >= want else 'NOT met'}"


def rows(words=()) -> list[str]:
    out = [f"| {'large case (interleaved medians)':58} | {'fastcopy':>9} | {'GB/s':>5} | {'x copyto':>8} | "
           f"{'x numpy':>7} | {'target x copyto':>17} | {'target x numpy':>15} |",
           f"|{'-' * 60}|{'-' * 11}|{'-' * 7}|{'-' * 10}|{'-' * 9}|{'-' * 19}|{'-' * 17}|"]
    for gen in CASES:
        for name, nbytes, (t_copy, t_np), funcs in gen():
            if words and not any(w in name for w in words):
                continue
            m = measure(funcs, nbytes)
            t = m["fastcopy"]
            r_copy = m["copyto"] / t
            r_np = m["numpy"] / t if "numpy" in m else None
            s_np = f"{r_np:7.2f}" if r_np is not None else f"{'-':>7}"
            tgt_np = _target(r_np, t_np) if r_np is not None else ""
            ms = f"{t * 1e3:6.2f} ms" if t >= 1e-3 else f"{t * 1e6:6.1f} us"
            out.append(f"| {name[:58]:58} | {ms:>9} | {nbytes / t / 1e9:5.2f} | {r_copy:8.2f} | {s_np} | "
                       f"{_target(r_copy, t_copy):>17} | {tgt_np:>15} |")
            print(out[-1], file=sys.stderr, flush=True)
            if "ceiling" in m:  # the same bytes, no transpose: what no kernel can beat (the proof of a limit)
                c = m["ceiling"]
                r_c = m["numpy"] / c
                verdict = "" if r_c >= t_np else f"< {t_np:g}: limit"
                out.append(f"| {'  (ceiling: same bytes copied, no transpose, bare)':58} | {c * 1e3:6.2f} ms | "
                           f"{nbytes / c / 1e9:5.2f} | {m['copyto'] / c:8.2f} | {r_c:7.2f} | {'':>17} | "
                           f"{verdict:>15} |")
                print(out[-1], file=sys.stderr, flush=True)
    return out


if __name__ == "__main__":
    print("\n".join(rows(tuple(sys.argv[1:]))))
