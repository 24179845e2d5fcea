"""Speed of the 4-bit transposing loads (fastcopy/kernels/nibbles.py): a full 64 KiB fp4 L0B tile (LoadData 2D V2
with ifTranspose) and int4 LoadDataWithTranspose squares, repeated (the prepared-call cache), measured interleaved
with np.copyto of the bytes written and the plain-numpy way (unpack the values, transpose, pack again), as
bench/interleaved.py measures.

    python bench/b4_transpose.py

Also printed: the first call of new parameters (planning included; the first row also loads the nibble kernels)
and the numpy path of the same
plan (what a small first call runs before numba is loaded).
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import fastcopy as fc  # noqa: E402
from fastcopy.cube import b4  # noqa: E402
from interleaved import measure  # noqa: E402

TILE = 64 << 10


def _numpy_way(src: np.ndarray, out: np.ndarray, squares: int):
    """Unpack ``squares`` 64 x 64 squares of 4-bit values (4 stacked fractals each), transpose, pack."""
    def run():
        v = np.empty(2 * src.size, np.uint8)
        v[0::2], v[1::2] = src & 0xF, src >> 4
        t = v.reshape(squares, 64, 64).transpose(0, 2, 1).reshape(-1)
        np.bitwise_or(t[0::2], t[1::2] << 4, out=out)
    return run


def cases():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, TILE, dtype=np.uint8)
    out, cp_src = np.empty(TILE, np.uint8), raw.copy()
    p350 = fc.TPipe(product="ATLAS_350")
    b1, b2 = p350.alloc("B1", "fp4x2_e2m1_t", TILE), p350.alloc("B2", "fp4x2_e2m1_t", TILE)
    b1.numpy().view(np.uint8)[:] = raw
    b1.set_defined()
    v2 = fc.LoadData2DParamsV2(0, 0, 4, 32, 4, 1, True)  # 32 squares of 4 fractals, each to its own 4 fractals
    yield "LoadData 2D V2 fp4 ifTranspose L1->L0B 64 KiB", TILE, v2, lambda: fc.LoadData(b2, b1, v2), {
        "copyto": lambda: np.copyto(out, cp_src), "numpy": _numpy_way(raw, out, 32)}, (b2, b1)
    a2 = fc.TPipe(product="ATLAS_A2")
    s1, s2 = a2.alloc("B1", "int4b_t", TILE), a2.alloc("B2", "int4b_t", TILE)
    s1.numpy().view(np.uint8)[:] = raw
    s1.set_defined()
    t = fc.LoadData2dTransposeParams(0, 32, 1, 3, 0)
    yield "LoadDataWithTranspose int4 B1->B2 64 KiB (32 squares)", TILE, t, \
        lambda: fc.LoadDataWithTranspose(s2, s1, t), {
            "copyto": lambda: np.copyto(out, cp_src), "numpy": _numpy_way(raw, out, 32)}, (s2, s1)


def rows() -> list[str]:
    from fastcopy.dma import kernels as K

    K.load()
    out = [f"| {'4-bit transposes (interleaved medians)':52} | {'repeat':>9} | {'x copyto':>8} | {'x numpy':>7} | "
           f"{'first call':>10} | {'numpy path':>10} |",
           f"|{'-' * 54}|{'-' * 11}|{'-' * 10}|{'-' * 9}|{'-' * 12}|{'-' * 12}|"]
    for name, nbytes, params, call, others, tensors in cases():
        t0 = time.perf_counter()
        call()  # the first call of these parameters in this process: planning included
        first = time.perf_counter() - t0
        m = measure({"fastcopy": call, **others}, nbytes)
        from fastcopy.cube import loaddata

        plan = (loaddata.plan_load2dv2 if type(params).__name__.startswith("LoadData2DParams")
                else loaddata.plan_transpose)(*tensors, params)
        real = b4.compiled
        b4.compiled = lambda repeat, n: False
        try:
            t0 = time.perf_counter()
            for _ in range(5):
                plan.run(*tensors)
            nump = (time.perf_counter() - t0) / 5
        finally:
            b4.compiled = real
        t = m["fastcopy"]
        out.append(f"| {name[:52]:52} | {t * 1e6:6.1f} us | {m['copyto'] / t:8.3f} | {m['numpy'] / t:7.2f} | "
                   f"{first * 1e3:7.1f} ms | {nump * 1e3:7.2f} ms |")
    return out


if __name__ == "__main__":
    print("\n".join(rows()))
