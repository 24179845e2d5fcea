"""Speed of the moves into the cube: LoadData of a full 64 KiB L0A / L0B tile and img2col of a 1 MiB feature map,
measured interleaved with np.copyto of the bytes written and the plain-numpy way (bench/interleaved.py's method).

    python bench/cube_in.py            # also a table of bench/report.py
    python bench/cube_in.py img2col    # only the rows whose name contains a word ("repeat": the small calls,
                                       # "bare": the tile's kernels bare, without fastcopy around them)

Small calls repeated with the same parameters (the prepared-call cache of fastcopy.api) are measured beside a
cached 1 KiB DataCopy: they should cost the same.
"""

from __future__ import annotations

import itertools
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import fastcopy as fc  # noqa: E402
from interleaved import _target, measure  # noqa: E402

TILE = 64 << 10
COPY = (1.0, None)
#: how a tile row is timed (interleaved.measure): two untimed rounds first (a tile load reaches its quickest repeat
#: only after its first calls: in a process that has not loaded the numba kernels, e.g. `python bench/cube_in.py
#: ifTranspose`, the first config.CALLS_BEFORE_KERNELS = 200 transposes ran in numpy, ~10 us each, inside the first
#: two timed samples), then 128 calls a sample as every row (8 MiB). Not 512: the numpy way's batch (11 us a call)
#: then outlasts the pair helper's spin window (config.PAIR_SPIN_US, 3 ms), the helper sleeps, and the next sample
#: starts with the calls that run alone until it is awake again (ifTranspose 1.09-1.11x against 1.05-1.16x, one
#: process, 21:10 UTC): a wake-up after an idle pause, not a repeated call
TILE_TIMING = {"warm": 2}


def case_loaddata():
    pipe = fc.TPipe(product="ATLAS_A2")
    n = TILE // 2
    a1 = pipe.alloc("A1", "half", n)
    a1.numpy()[:] = np.arange(n) % 2048
    a1.set_defined()
    a2 = pipe.alloc("A2", "half", n)
    b2 = pipe.alloc("B2", "half", n)
    p = fc.LoadData2DParams(0, 128, 1)  # 128 fractals = 64 KiB
    src, out = a1.numpy().copy(), np.empty(n, np.float16)
    cp = lambda: np.copyto(out, src)  # noqa: E731
    # the golden-script way for an NZ (K1, M1, 16, 16) tile read as ZZ: one transposed copy
    nz = src.reshape(4, 32, 16, 16)
    zz = np.empty((32, 4, 16, 16), np.float16)
    yield "LoadData 2D L1->L0A 64 KiB (128 fractals)", TILE, COPY, {
        "fastcopy": lambda: fc.LoadData(a2, a1, p), "copyto": cp,
        "numpy": lambda: np.copyto(zz, nz.transpose(1, 0, 2, 3))}
    t = fc.LoadData2DParams(0, 128, 1, 0, 0, True)
    yield "LoadData 2D L1->L0B 64 KiB, ifTranspose", TILE, COPY, {
        "fastcopy": lambda: fc.LoadData(b2, a1, t), "copyto": cp,
        "numpy": lambda: np.copyto(zz.reshape(128, 16, 16), src.reshape(128, 16, 16).transpose(0, 2, 1))}
    p350 = fc.TPipe(product="ATLAS_350")
    c1 = p350.alloc("A1", "half", n)
    c1.numpy()[:] = src
    c1.set_defined()
    c2 = p350.alloc("A2", "half", n)
    v2 = fc.LoadData2DParamsV2(0, 0, 32, 4, 32, 32)
    yield "LoadData 2D V2 L1->L0A 64 KiB (32 x 4 fractals)", TILE, COPY, {
        "fastcopy": lambda: fc.LoadData(c2, c1, v2), "copyto": cp}


def case_img2col():
    C, H, W = 128, 64, 64  # 1 MiB of half
    fmap = (np.arange(C * H * W) % 2048).astype(np.float16).reshape(C, H, W)
    out = fc.img2col(fmap, 3, pad=1)
    nbytes = out.nbytes
    flat = np.empty_like(out)
    ref = out.copy()

    def numpy_way():
        padded = np.pad(fmap.reshape(8, 16, H, W).transpose(0, 2, 3, 1), ((0, 0), (1, 1), (1, 1), (0, 0)))
        win = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))  # (8, H, W, 16, 3, 3)
        np.copyto(flat.reshape(H, W, 8, 3, 3, 16), win.transpose(1, 2, 0, 4, 5, 3))

    yield "img2col helper, 1 MiB half map, 3x3 pad 1 (-> 9 MiB X)", nbytes, COPY, {
        "fastcopy": lambda: fc.img2col(fmap, 3, pad=1, out=out), "copyto": lambda: np.copyto(flat, ref),
        "numpy": numpy_way}


def _loaded(pipe, position, dtype, n):
    t = pipe.alloc(position, dtype, n)
    t.numpy().view(np.uint8)[:] = np.arange(t.nbytes) % 251
    t.set_defined()
    return t


def _img2col_registers(pipe, with_stride=False):
    fc.SetFmatrix(4, 4, (1, 1, 1, 1), pipe=pipe)
    fc.SetLoadDataPaddingValue(np.float16(0), pipe=pipe)
    if with_stride:
        fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(0, 1, 0, 1), pipe=pipe)


def case_repeats():
    """Small calls repeated (the prepared-call cache, fastcopy/cube/recall.py): each beside a cached 1 KiB
    DataCopy, interleaved. The first four rows are issue 14's; the others are the forms tile loops repeat."""
    pipe = fc.TPipe(product="ATLAS_A2")
    a1 = _loaded(pipe, "A1", "half", 8192)
    a2, b2 = pipe.alloc("A2", "half", 8192), pipe.alloc("B2", "half", 8192)
    gm = fc.GlobalTensor(np.zeros(512, np.float16))
    ub = pipe.alloc("VECIN", "half", 512)
    dc = fc.DataCopyParams(1, 32)
    base = lambda: fc.DataCopy(ub, gm, dc)  # noqa: E731
    one, two = fc.LoadData2DParams(0, 1, 1), fc.LoadData2DParams(0, 2, 1)
    yield "LoadData 2D L1->L0A, 1 fractal (512 B)", lambda: fc.LoadData(a2, a1, one), base
    yield "LoadData 2D L1->L0A, 2 fractals (1 KiB)", lambda: fc.LoadData(a2, a1, two), base
    tr = fc.LoadData2dTransposeParams(0, 2, 1, 0, 0, 0)
    yield "LoadDataWithTranspose b16, 2 squares (1 KiB)", lambda: fc.LoadDataWithTranspose(b2, a1, tr), base
    _img2col_registers(pipe)
    p3 = fc.LoadData3DParamsV2(padList=(1, 1, 1, 1), l1H=4, l1W=4, channelSize=16, kExtension=32, mExtension=16,
                               filterW=3, filterH=3)
    cfg = fc.IsResetLoad3dConfig(False, False)
    yield "LoadData 3D (img2col) 16 x 32 half (1 KiB)", lambda: fc.LoadData(a2, a1, p3, config=cfg), base
    # the other forms of a tile loop
    t2 = fc.LoadData2DParams(0, 2, 1, ifTranspose=True)
    yield "LoadData 2D L1->L0B ifTranspose, 2 fractals", lambda: fc.LoadData(b2, a1, t2), base
    g2 = fc.LoadData2DParams(0, 2, 1, dstGap=1)
    yield "LoadData 2D L1->L0A, 2 fractals, dstGap 1", lambda: fc.LoadData(a2, a1, g2), base
    sq = fc.LoadData2dTransposeParams(0, 1, 1, 1, 0, 0)
    for dtype, n, what in (("int8_t", 16384, "b8, 1 square (1 KiB)"), ("float", 4096, "b32, 1 square (1 KiB)"),
                           ("int4b_t", 16384, "b4, 1 square (2 KiB)")):
        src, dst = _loaded(pipe, "B1", dtype, n), pipe.alloc("B2", dtype, n)
        p = sq if dtype != "int4b_t" else fc.LoadData2dTransposeParams(0, 1, 1, 3, 0, 0)
        yield f"LoadDataWithTranspose {what}", lambda d=dst, s=src, p=p: fc.LoadDataWithTranspose(d, s, p), base
    yield "LoadData 3D, config default (writes FMATRIX, PADDING)", lambda: fc.LoadData(a2, a1, p3), base
    ps = [fc.LoadData3DParamsV2(padList=(1, 1, 1, 1), l1H=4, l1W=4, channelSize=16, kExtension=32,
                                mExtension=16, filterW=3, filterH=3) for _ in range(4)]
    turn = itertools.cycle(ps)
    yield "LoadData 3D, 4 params objects in turn", lambda: fc.LoadData(a2, a1, next(turn), config=cfg), base
    p350 = fc.TPipe(product="ATLAS_350")
    c1 = _loaded(p350, "A1", "half", 8192)
    c2, cb, cb1 = p350.alloc("A2", "half", 8192), p350.alloc("B2", "half", 8192), p350.alloc("B1", "half", 8192)
    v2 = fc.LoadData2DParamsV2(0, 0, 2, 1, 32, 2)
    yield "LoadData 2D V2 L1->L0A, 2 x 1 fractals (Atlas 350)", lambda: fc.LoadData(c2, c1, v2), base
    tv2 = fc.LoadData2dTransposeParamsV2(0, 2, 1, 0, 0, 0, 0)
    yield "LoadDataWithTranspose V2 b16, 2 squares (Atlas 350)", lambda: fc.LoadDataWithTranspose(cb, c1, tv2), base
    _img2col_registers(p350, True)
    pro = fc.LoadData3DParamsV2Pro(channelSize=16, extConfig=(16 << 16) | 32,
                                   filterConfig=(3 << 24) | (3 << 16) | (1 << 8) | 1 | (1 << 32) | (1 << 40))
    yield "LoadData 3D V2Pro 16 x 32 half (Atlas 350)", lambda: fc.LoadData(c2, c1, pro), base
    yield "LoadDataWithStride 16 x 32 half (Atlas 350)", lambda: fc.LoadDataWithStride(c2, c1, p3, config=cfg), base
    dn_src = fc.GlobalTensor(np.arange(4096, dtype=np.float16))
    dn = fc.Dn2NzParams(1, 16, 32, 0, 16, 16, 1, 0)
    yield "DataCopy(Dn2NzParams) GM->B1 32 x 16 half (Atlas 350)", lambda: fc.DataCopy(cb1, dn_src, dn), base


def repeat_rows() -> list[str]:
    out = [f"| {'repeated small call (interleaved medians)':58} | {'per call':>9} | {'DataCopy 1 KiB cached':>21} | "
           f"{'ratio':>5} | {'target':>17} |",
           f"|{'-' * 60}|{'-' * 11}|{'-' * 23}|{'-' * 7}|{'-' * 19}|"]
    for name, fn, base in case_repeats():
        m = measure({"call": fn, "base": base}, 1024)
        r = m["call"] / m["base"]
        out.append(f"| {name[:58]:58} | {m['call'] * 1e6:6.2f} us | {m['base'] * 1e6:18.2f} us | {r:5.2f} | "
                   f"{'<= 1.25 ' + ('met' if r <= 1.25 else 'NOT met'):>17} |")
    return out


# ---------------------------------------------------------------------------------------------- bare tile kernels
def _line_aligned(n: int) -> np.ndarray:
    buf = np.empty(n + 64, np.uint8)
    k = (-buf.ctypes.data) % 64
    return buf[k:k + n]


def _bare_kernels():
    """The bare kernels of a 64 KiB tile (numba, no fastcopy call around them): a memcpy on one core, the same
    memcpy split over two threads with a minimal hand-off (the helper spins on a flag: what any sharing must beat),
    and fastcopy's 16x16 transpose kernel called with prepared arguments."""
    from numba import njit

    from fastcopy.kernels.crew import atomic_load, atomic_store, pause
    from fastcopy.kernels.intrinsics import memcpy_units

    @njit(nogil=True, boundscheck=False)
    def copy(d, s, lo, hi):  # (one llvm.memcpy: the C library's memcpy, as np.copyto's)
        memcpy_units(d, lo, s, lo, hi - lo)

    @njit(nogil=True, boundscheck=False)
    def helper(flag, d, s, lo, hi):  # flag: [posted, done, stop] on separate lines
        seen = 0
        while atomic_load(flag, 16) == 0:
            g = atomic_load(flag, 0)
            if g != seen:
                copy(d, s, lo, hi)
                seen = g
                atomic_store(flag, 8, g)
            else:
                pause()
        return 0

    @njit(nogil=True, boundscheck=False)
    def shared(flag, d, s, half):
        g = flag[0] + 1
        atomic_store(flag, 0, g)
        copy(d, s, 0, half)
        while atomic_load(flag, 8) != g:
            pause()
        return 0

    return copy, helper, shared


def _one_core(funcs: dict) -> dict:
    """``funcs`` with its LoadData bound to run on the calling thread alone (the crew off while the repeat binds
    its kernel: what a tile runs while the helper is away), on tensors of its own."""
    from fastcopy.dma import crew

    was, crew.ENABLED = crew.ENABLED, False
    try:
        for _ in range(3):
            funcs["fastcopy"]()
    finally:
        crew.ENABLED = was
    return funcs


def bare_rows() -> list[str]:
    """Each bare kernel interleaved with np.copyto of the tile's bytes and with the LoadData call that runs it (on
    one core: bound with the crew off). The bare kernels are called through the compiled entry a repeated load binds
    (numba's dispatcher would type their arguments on every call: ~0.15 us for the transposes' five)."""
    import threading

    from fastcopy.cube.recall import _entry
    from fastcopy.dma import kernels as K
    from fastcopy.dma import abi

    K.load()
    copy, helper, shared = _bare_kernels()
    src, dst = _line_aligned(TILE), _line_aligned(TILE)
    src[:] = np.arange(TILE) % 251
    s64, d64 = src.view(np.uint64), dst.view(np.uint64)
    n8 = TILE // 8
    flag = np.zeros(24, np.int64)
    half = n8 // 2 // 8 * 8  # (whole 64-byte lines each)
    cases = {name: funcs for name, _, _, funcs in case_loaddata()}
    plain, tr = cases["LoadData 2D L1->L0A 64 KiB (128 fractals)"], cases["LoadData 2D L1->L0B 64 KiB, ifTranspose"]
    alone = {name: _one_core(funcs) for name, _, _, funcs in case_loaddata()}
    meta = abi.pack_transpose(2, (128, 512, 512), (16, 2, 32), (16, 32, 2), (1, 1), False, (0, 128, 0, 16))
    copy1, copy_args = _entry(copy, (d64, s64, 0, n8)), (d64, s64, 0, n8)
    tr1, tr_args = _entry(K.transpose_elements, (dst, 0, src, 0, meta)), (dst, 0, src, 0, meta)
    rows_ = [("memcpy, one core (64 KiB, line-aligned)", lambda: copy1(*copy_args),
              alone["LoadData 2D L1->L0A 64 KiB (128 fractals)"]),
             ("16x16 transposes, one core (transpose_elements)", lambda: tr1(*tr_args),
              alone["LoadData 2D L1->L0B 64 KiB, ifTranspose"])]
    keep = []  # (the destinations of the pair jobs: their headers hold addresses only)
    if fc.config.THREADS > 1:
        from fastcopy.cube.recall import _halves
        from fastcopy.dma import crew

        # fastcopy's own split (the pair lane of the helper crew, as a repeated whole-tile load runs it), each on
        # a destination of its own (a line another core wrote last must come back first)
        keep += [_line_aligned(TILE), _line_aligned(TILE)]
        pair, head = crew.dense_pair(keep[0], 0, src, 0, TILE)
        pair = _entry(pair, (head,))
        rows_.append(("memcpy split by fastcopy's pair lane (crew.pair)", lambda: pair(head), plain))
        thead = crew.pair_job(crew.ELEMENTS, keep[1], 0, src, 0, _halves(meta, 128, 16))[1]
        rows_.append(("16x16 transposes split by the pair lane", lambda: pair(thead), tr))
        # last: its helper spins without a pause or a yield from its start to its end
        rows_.append(("memcpy on two threads (spin hand-off, helper awake)",
                      lambda: shared(flag, d64, s64, half), plain))
    out = [f"| {'bare tile kernel (interleaved medians)':58} | {'bare':>9} | {'x copyto':>8} | {'LoadData':>9} | "
           f"{'x copyto':>8} |", f"|{'-' * 60}|{'-' * 11}|{'-' * 10}|{'-' * 11}|{'-' * 10}|"]
    th = None
    try:
        for name, bare, call in rows_:
            if name.startswith("memcpy on two threads"):
                th = threading.Thread(target=helper, args=(flag, d64, s64, half, n8), daemon=True)
                th.start()
            m = measure({"bare": bare, "copyto": call["copyto"], "call": call["fastcopy"]}, TILE, **TILE_TIMING)
            c = m["copyto"]
            out.append(f"| {name[:58]:58} | {m['bare'] * 1e6:6.2f} us | {c / m['bare']:8.2f} | "
                       f"{m['call'] * 1e6:6.2f} us | {c / m['call']:8.2f} |")
    finally:
        flag[16] = 1
        if th is not None:
            th.join()
    return out


def rows(words=()) -> list[str]:
    out = [f"| {'cube in (interleaved medians)':58} | {'fastcopy':>9} | {'GB/s':>5} | {'x copyto':>8} | "
           f"{'x numpy':>7} | {'target x copyto':>17} |",
           f"|{'-' * 60}|{'-' * 11}|{'-' * 7}|{'-' * 10}|{'-' * 9}|{'-' * 19}|"]
    for gen in (case_loaddata, case_img2col):
        for name, nbytes, (t_copy, _), funcs in gen():
            if words and not any(w in name for w in words):
                continue
            m = measure(funcs, nbytes, **(TILE_TIMING if nbytes == TILE else {}))
            t = m["fastcopy"]
            r_np = f"{m['numpy'] / t:7.2f}" if "numpy" in m else f"{'-':>7}"
            ms = f"{t * 1e3:6.2f} ms" if t >= 1e-3 else f"{t * 1e6:6.1f} us"
            out.append(f"| {name[:58]:58} | {ms:>9} | {nbytes / t / 1e9:5.2f} | {m['copyto'] / t:8.2f} | {r_np} | "
                       f"{_target(m['copyto'] / t, t_copy):>17} |")
    if not words or "bare" in words:
        out += [""] + bare_rows()
    if not words or "repeat" in words:
        out += [""] + repeat_rows()
    return out


if __name__ == "__main__":
    print("\n".join(rows(tuple(sys.argv[1:]))))
