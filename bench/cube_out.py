"""Cube-out benchmark rows for bench/report.py: Mmad against numpy's matmul, Fixpipe NZ2ND against np.copyto.

Each pair is measured interleaved (one call of each, repeated) and reported as medians and their ratio.

    python bench/cube_out.py
"""

from __future__ import annotations

import time

import numpy as np


def _interleaved(f, g, rounds: int = 300):
    f(), g()  # untimed warm-up
    tf, tg = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        g()
        t2 = time.perf_counter()
        tf.append(t1 - t0)
        tg.append(t2 - t1)
    return float(np.median(tf)), float(np.median(tg))


def _row(name, ours, base, target=None):
    ratio = ours / base
    verdict = "" if target is None else ("met" if ratio <= target else "NOT met")
    tgt = "" if target is None else f"<= {target}x"
    return f"| {name:60} | {ours * 1e6:8.1f} us | {base * 1e6:8.1f} us | {ratio:6.2f} | {tgt:>7} | {verdict:>7} |"


def rows() -> list[str]:
    import fastcopy as fc
    from fastcopy import TPosition as Pos
    from fastcopy.cube import fractal

    rng = np.random.default_rng(0)
    pipe = fc.TPipe("ATLAS_A2")
    a = rng.uniform(-1, 1, (128, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 128)).astype(np.float16)
    l0a = pipe.alloc(Pos.A2, "half", 128 * 128)
    l0b = pipe.alloc(Pos.B2, "half", 128 * 128)
    l0a.numpy()[fractal.offsets("Zz", 128, 128, (16, 16), 8)] = a
    l0b.numpy()[fractal.offsets("Zn", 128, 128, (16, 16), 8)] = b
    l0a.set_defined()
    l0b.set_defined()
    l0c = pipe.alloc(Pos.CO1, "float", 128 * 128)
    p = fc.MmadParams(128, 128, 128)
    mm, mm_np = _interleaved(lambda: fc.Mmad(l0c, l0a, l0b, p),
                             lambda: a.astype(np.float32) @ b.astype(np.float32))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):  # numpy's matmul without the cost of waking BLAS threads
        mm1, mm_np1 = _interleaved(lambda: fc.Mmad(l0c, l0a, l0b, p),
                                   lambda: a.astype(np.float32) @ b.astype(np.float32))
    out = np.zeros((128, 128), np.float32)
    gm = fc.GlobalTensor(out)
    fp = fc.FixpipeParamsV220(nSize=128, mSize=128, srcStride=128, dstStride=128)
    src = np.zeros(128 * 128, np.float32)
    dst = np.empty_like(src)
    fx, cp = _interleaved(lambda: fc.Fixpipe(gm, l0c, fp), lambda: np.copyto(dst, src))
    head = (f"| {'cube out (interleaved medians)':60} | {'fastcopy':>11} | {'baseline':>11} | {'ratio':>6} | "
            f"{'target':>7} | {'':>7} |")
    return [head, f"|{'-' * 62}|{'-' * 13}|{'-' * 13}|{'-' * 8}|{'-' * 9}|{'-' * 9}|",
            _row("Mmad 128x128x128 half->float vs numpy f32 matmul", mm, mm_np, 3),
            _row("  same, numpy's BLAS on one thread too", mm1, mm_np1, 3),
            _row("Fixpipe NZ2ND 64 KiB L0C tile (float) vs np.copyto", fx, cp)]


if __name__ == "__main__":
    print("\n".join(rows()))
