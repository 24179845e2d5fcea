"""Large cases measured interleaved: each round times fastcopy, np.copyto of the same bytes and the plain-numpy
way back to back, so the ratios survive this machine's drifting memory bandwidth (pytest-benchmark times one test
after another, minutes apart).

    python bench/interleaved.py            # also the second table of bench/report.py
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


def _matrix():
    return np.random.default_rng(0).integers(0, 2**16, (N, N), dtype=np.uint16).view(np.float16)


def case_datacopy():
    src = np.random.default_rng(0).integers(0, 2**16, BIG // 2, dtype=np.uint16)
    pipe = TPipe(capacities={"UB": BIG})
    ub = pipe.alloc(TPosition.VECIN, "uint16", src.size)
    gm, out = GlobalTensor(src), np.empty_like(src)
    p = DataCopyParams(64, 32768, 0, 0)  # 64 bursts of 1 MiB
    b = np.empty_like(src)
    yield "DataCopy GM->UB 64 MiB", BIG, {"fastcopy": lambda: DataCopy(ub, gm, p), "copyto": lambda: np.copyto(b, src)}
    go = GlobalTensor(out)
    yield "DataCopy UB->GM 64 MiB", BIG, {"fastcopy": lambda: DataCopy(go, ub, p), "copyto": lambda: np.copyto(b, src)}


def _numpy_to_nz(a, out):
    np.copyto(out.reshape(N // 16, N, 16), a.reshape(N, N // 16, 16).transpose(1, 0, 2))


def case_nz():
    a = _matrix()
    nz = fc.to_nz(a)
    b, out_nz, out_nd = np.empty_like(a), np.empty_like(nz), np.empty_like(a)
    cp = lambda: np.copyto(b, a)  # noqa: E731
    yield "to_nz 4096x4096 half (out=)", a.nbytes, {
        "fastcopy": lambda: fc.to_nz(a, out=out_nz), "copyto": cp, "numpy": lambda: _numpy_to_nz(a, out_nz)}
    yield "from_nz 4096x4096 half (out=)", a.nbytes, {
        "fastcopy": lambda: fc.from_nz(nz, a.shape, out=out_nd), "copyto": cp,
        "numpy": lambda: np.copyto(out_nd.reshape(N, N // 16, 16), nz.reshape(N // 16, N, 16).transpose(1, 0, 2))}
    pipe = TPipe(capacities={"L1": 2 * a.nbytes, "UB": 2 * a.nbytes})
    l1 = pipe.alloc(TPosition.A1, "half", a.size)
    gm = GlobalTensor(a)
    p = fc.nd2nz_params(N, N, "half")
    yield "DataCopy(Nd2NzParams) GM->A1 4096x4096 half", a.nbytes, {
        "fastcopy": lambda: DataCopy(l1, gm, p), "copyto": cp, "numpy": lambda: _numpy_to_nz(a, out_nz)}
    rows = 2048  # srcNStride (the padded row count) is at most 4095: two calls of 2048 rows
    ub = pipe.alloc(TPosition.VECOUT, "half", a.size)
    ub.numpy()[:] = fc.to_nz(a.reshape(N // rows, rows, N)).reshape(-1)
    ub.set_defined()
    g_out = GlobalTensor(out_nd)
    q = fc.nz2nd_params(rows, N, "half")
    calls = [(g_out[k * N], ub[k * N]) for k in range(0, N, rows)]

    def nz2nd():
        for g, u in calls:
            DataCopy(g, u, q)
    nzb = ub.numpy().reshape(N // rows, N // 16, rows, 16)
    yield "DataCopy(Nz2NdParamsFull) VECOUT->GM 4096x4096 half", a.nbytes, {
        "fastcopy": nz2nd, "copyto": cp,
        "numpy": lambda: np.copyto(out_nd.reshape(N // rows, rows, N // 16, 16), nzb.transpose(0, 2, 1, 3))}


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
    yield "DataCopyPad GM->UB 2048 rows x 32764 B", src.nbytes, {
        "fastcopy": lambda: DataCopyPad(ub, gm, cp, pp), "copyto": lambda: np.copyto(b, flat), "numpy": numpy_in}
    go = GlobalTensor(out)
    yield "DataCopyPad UB->GM 2048 rows x 32764 B", src.nbytes, {
        "fastcopy": lambda: DataCopyPad(go, ub, cp), "copyto": lambda: np.copyto(b, flat),
        "numpy": lambda: np.copyto(out, u2d[:, :cols])}


def case_slice():
    import bench_slice

    funcs, nbytes = bench_slice.setup()
    yield "DataCopy(SliceInfo) a[::2, ::2, 64:192] of 64 MiB f32", nbytes, {
        "fastcopy": funcs["fastcopy"], "copyto": funcs["np.copyto"], "numpy": funcs["numpy index+copy"]}


def measure(funcs: dict, rounds: int = 15) -> dict:
    times = {k: [] for k in funcs}
    for f in funcs.values():
        f()  # warm-up: compile, plan, page faults
    for _ in range(rounds):
        for k, f in funcs.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def rows() -> list[str]:
    out = [f"| {'large case (interleaved medians)':56} | {'fastcopy':>9} | {'GB/s':>5} | {'x copyto':>8} | "
           f"{'x numpy':>7} |", f"|{'-' * 58}|{'-' * 11}|{'-' * 7}|{'-' * 10}|{'-' * 9}|"]
    for gen in (case_datacopy, case_nz, case_pad, case_slice):
        for name, nbytes, funcs in gen():
            m = measure(funcs)
            t = m["fastcopy"]
            r_np = f"{m['numpy'] / t:7.2f}" if "numpy" in m else f"{'-':>7}"
            out.append(f"| {name[:56]:56} | {t * 1e3:6.2f} ms | {nbytes / t / 1e9:5.2f} | {m['copyto'] / t:8.2f} | "
                       f"{r_np} |")
    return out


if __name__ == "__main__":
    print("\n".join(rows()))
