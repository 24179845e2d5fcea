"""The layout kernels called directly (fastcopy.kernels.layout), bit for bit against a literal loop over their
documented ``meta``: every burst size class (32-byte blocks, 64, multiples of 32, odd), aligned and unaligned
destinations with non-temporal stores requested, tiles that do and do not divide the counts, partial thread
ranges, and dense copies with unaligned heads and tails."""

from __future__ import annotations

import importlib
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy.dma.abi import pack_transpose
from fastcopy.kernels.layout import copy_dense, copy_rows, fill_dense, transpose_blocks


def _aligned(n, shift):
    buf = np.zeros(n + 128, np.uint8)
    o = (-buf.ctypes.data) % 64 + shift
    return buf[o:o + n]


def _expected(dst, dbase, src, sbase, burst, batch, a, c, b_range, a_range):
    out = dst.copy()
    for ib in range(*b_range):
        for ia in range(*a_range):
            for ic in range(c[0]):
                s = sbase + ib * batch[1] + ia * a[1] + ic * c[1]
                d = dbase + ib * batch[2] + ia * a[2] + ic * c[2]
                out[d:d + burst] = src[s:s + burst]
    return out


@st.composite
def transposes(draw):
    burst = draw(st.sampled_from([32, 64, 96, 16, 48, 1, 2, 8, 24, 33, 40]))
    na, nc, nb = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(1, 3))
    # the classic layout transpose: a is contiguous in the source, c in the destination (either way round)
    gap_s, gap_d = draw(st.sampled_from([0, 32, 7])), draw(st.sampled_from([0, 32, 7]))
    a = (na, burst, nc * burst + gap_d)
    c = (nc, na * burst + gap_s, burst)
    if draw(st.booleans()):
        a, c = (na, nc * burst + gap_s, burst), (nc, burst, na * burst + gap_d)
    batch = (nb, na * nc * burst + 64 * gap_s, na * nc * burst + 64 * gap_d)
    tile_a, tile_c = draw(st.sampled_from([1, 2, 3, 8, 64])), draw(st.sampled_from([1, 3, 8, 64]))
    a_lo = draw(st.integers(0, na - 1))
    a_range = (a_lo, draw(st.integers(a_lo + 1, na)))
    b_lo = draw(st.integers(0, nb - 1))
    b_range = (b_lo, draw(st.integers(b_lo + 1, nb)))
    shift_d, shift_s = draw(st.sampled_from([0, 32, 16, 8, 1])), draw(st.sampled_from([0, 32, 3]))
    return burst, batch, a, c, tile_a, tile_c, b_range, a_range, shift_d, shift_s, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(transposes())
def test_transpose_matches_loops(case):
    burst, batch, a, c, tile_a, tile_c, b_range, a_range, shift_d, shift_s, nt = case
    dbase, sbase = 64, 32
    n = 128 + sum((k[0] - 1) * max(k[1], k[2]) for k in (batch, a, c)) + burst + 64
    src = _aligned(n, shift_s)
    src[:] = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
    dst = _aligned(n, shift_d)
    want = _expected(dst, dbase, src, sbase, burst, batch, a, c, b_range, a_range)
    meta = pack_transpose(burst, batch, a, c, (tile_a, tile_c), nt, b_range + a_range)
    transpose_blocks(dst, dbase, src, sbase, meta)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("nt", [False, True])
@pytest.mark.parametrize("shift", [0, 16, 31, 32, 1])
@pytest.mark.parametrize("n", [0, 1, 31, 32, 255, 256, 257, 1000, 4099])
def test_copy_dense_heads_and_tails(n, shift, nt):
    src = _aligned(n + 80, 5)
    src[:] = np.random.default_rng(n).integers(0, 256, src.size, dtype=np.uint8)
    dst = _aligned(n + 80, shift)
    want = dst.copy()
    want[7:7 + n] = src[3:3 + n]
    copy_dense(dst, 7, src, 3, n, nt)
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("shift", [16, 32, 48, 0])
@pytest.mark.parametrize("burst", [32, 64, 48])
@pytest.mark.parametrize("nc, tile_c", [(37, 8), (5, 2), (64, 4), (1, 8)])
def test_transpose_streaming_into_runs_that_start_mid_line(shift, burst, nc, tile_c):
    """Streaming stores requested, destination runs starting 16/32/48 bytes into a line (every run alike): the
    tiles are cut at line boundaries; every byte still lands where the loops say."""
    na, nb = 7, 2
    a = (na, burst, -(-nc * burst // 64) * 64 + 64)  # destination rows on whole lines (plus a line of gap)
    c = (nc, na * burst + 32, burst)
    batch = (nb, na * (na * burst + 32) * nc, a[2] * na + 128)
    n = batch[2] * nb + 256
    src = _aligned(batch[1] * nb + c[1] * nc + 64, 8)
    src[:] = np.random.default_rng(nc).integers(0, 256, src.size, dtype=np.uint8)
    dst = _aligned(n, shift)
    want = _expected(dst, 0, src, 0, burst, batch, a, c, (0, nb), (0, na))
    transpose_blocks(dst, 0, src, 0, pack_transpose(burst, batch, a, c, (3, tile_c), True, (0, nb, 0, na)))
    assert np.array_equal(dst, want)


@settings(max_examples=100, deadline=None)
@given(burst=st.integers(1, 700), na=st.integers(1, 5), nb=st.integers(1, 3), gap_s=st.integers(0, 70),
       gap_d=st.sampled_from([0, 1, 16, 64, 70]), shift=st.sampled_from([0, 16, 1]), nt=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_copy_rows_matches_loops(burst, na, nb, gap_s, gap_d, shift, nt, seed):
    a = (na, burst + gap_s, burst + gap_d)
    batch = (nb, na * a[1] + 3, na * a[2] + 5)
    src = _aligned(nb * batch[1] + 64, 3)
    src[:] = np.random.default_rng(seed).integers(0, 256, src.size, dtype=np.uint8)
    dst = _aligned(nb * batch[2] + 64, shift)
    want = _expected(dst, 8, src, 4, burst, batch, a, (1, 0, burst), (0, nb), (0, na))
    copy_rows(dst, 8, src, 4, pack_transpose(burst, batch, a, (1, 0, burst), (1, 1), nt, (0, nb, 0, na)))
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("shift", [0, 16, 1])
@pytest.mark.parametrize("n", [0, 5, 64, 100, 4096 + 200, 3 * 4096 + 17])
def test_fill_dense(n, shift):
    pattern = _aligned(4096, 0)
    pattern[:] = 1
    dst = _aligned(n + 40, shift)
    dst[:] = 7
    want = dst.copy()
    want[3:3 + n] = 1
    fill_dense(dst, 3, n, pattern)
    assert np.array_equal(dst, want)


@settings(max_examples=80, deadline=None)
@given(transposes())
def test_numpy_layout_kernels_match_numba(case):
    """fastcopy/dma/npkernels.py (FASTCOPY_KERNELS=numpy, no numba) gives the same bytes as the numba kernels."""
    from fastcopy.dma import npkernels

    burst, batch, a, c, tile_a, tile_c, b_range, a_range, shift_d, shift_s, nt = case
    n = 128 + sum((k[0] - 1) * max(k[1], k[2]) for k in (batch, a, c)) + burst + 64
    src = _aligned(n, shift_s)
    src[:] = np.random.default_rng(2).integers(0, 256, n, dtype=np.uint8)
    meta = pack_transpose(burst, batch, a, c, (tile_a, tile_c), nt, b_range + a_range)
    rows = pack_transpose(burst, batch, a, (1, 0, burst), (1, 1), nt, b_range + a_range)
    for numba_kernel, numpy_kernel, m in ((transpose_blocks, npkernels.transpose_blocks, meta),
                                          (copy_rows, npkernels.copy_rows, rows)):
        want, got = _aligned(n, shift_d), _aligned(n, shift_d)
        numba_kernel(want, 64, src, 32, m)
        numpy_kernel(got, 64, src, 32, m)
        assert np.array_equal(got, want)
    want, got = _aligned(n, shift_d), _aligned(n, shift_d)
    copy_dense(want, 5, src, 3, n - 80, nt)
    npkernels.copy_dense(got, 5, src, 3, n - 80, nt)
    fill_dense(want, 7, n - 90, np.full(4096, 9, np.uint8))
    npkernels.fill_dense(got, 7, n - 90, np.full(4096, 9, np.uint8))
    assert np.array_equal(got, want)


@settings(max_examples=150, deadline=None)
@given(burst=st.sampled_from([16, 32, 48, 64, 96, 128, 256]), na=st.integers(1, 7), nc=st.integers(1, 40),
       nb=st.integers(1, 2), gap_d=st.sampled_from([0, 16, 32, 48, 64, 80]), gap_s=st.sampled_from([0, 16, 5]),
       shift_d=st.sampled_from([0, 16, 32, 48]), shift_s=st.sampled_from([0, 3, 16]),
       tile_a=st.sampled_from([1, 2, 5, 128]), tile_c=st.sampled_from([1, 2, 3, 8, 64]), flip=st.booleans(),
       data=st.data())
def test_transpose_streaming_runs_of_any_line_phase(burst, na, nc, nb, gap_d, gap_s, shift_d, shift_s, tile_a,
                                                     tile_c, flip, data):
    """Streaming stores requested, destination runs on 16-byte boundaries whose phase in a line differs from
    run to run (row strides of 16-byte multiples): each run's whole lines are gathered and streamed, its partial
    first and last lines stored regularly (or, between runs that follow each other, in one junction line);
    every byte lands where the loops say and no other byte changes."""
    a = (na, burst, nc * burst + gap_d)
    c = (nc, na * burst + gap_s, burst)
    if flip:  # the other direction: the source blocks of a run far apart, a run's neighbours adjacent
        a, c = (na, nc * burst + gap_s, nc * burst + gap_d), (nc, burst, burst)
    batch = (nb, na * nc * burst + 64 * gap_s + 16, na * (nc * burst + gap_d) + 16 * (gap_d // 16 + 1))
    a_lo = data.draw(st.integers(0, na - 1))
    a_range = (a_lo, data.draw(st.integers(a_lo + 1, na)))
    b_lo = data.draw(st.integers(0, nb - 1))
    b_range = (b_lo, data.draw(st.integers(b_lo + 1, nb)))
    n = 256 + sum((k[0] - 1) * max(k[1], k[2]) for k in (batch, a, c)) + burst
    src = _aligned(n, shift_s)
    src[:] = np.random.default_rng(burst + nc).integers(0, 256, n, dtype=np.uint8)
    dst = _aligned(n, shift_d)
    dst[:] = 0xA5
    want = _expected(dst, 48, src, 7, burst, batch, a, c, b_range, a_range)
    transpose_blocks(dst, 48, src, 7, pack_transpose(burst, batch, a, c, (tile_a, tile_c), True, b_range + a_range))
    assert np.array_equal(dst, want)


@pytest.mark.parametrize("burst, nc", [(32, 2), (32, 5), (64, 1), (64, 3), (96, 2)])
@pytest.mark.parametrize("shift_d", [0, 16, 32, 48])
@pytest.mark.parametrize("tiles", [(2, 1), (128, 8)])
def test_transpose_junction_lines_between_runs(burst, nc, shift_d, tiles):
    """Runs that follow each other in the destination (a row of from_nz / NZ2ND: ``da`` = the run's length),
    off a line: the line one run ends and the next begins in is streamed whole by the later run, inside a
    chunk only. Chunks run one after another on the same destination (as the threads share a call), each
    alone on a fresh destination: every byte right, none outside the chunk's runs written (the lines at a
    chunk's edges are shared with the neighbouring chunks' runs)."""
    na, run = 9, nc * burst
    a, c = (na, burst, run), (nc, na * burst, burst)
    n = 128 + na * run + 64
    src = _aligned(n, 0)
    src[:] = np.random.default_rng(nc).integers(0, 256, n, dtype=np.uint8)
    cuts = [(0, 9), (0, 4), (4, 9), (3, 6), (8, 9), (0, 1)]
    whole = _aligned(n, shift_d)
    whole[:] = 0xA5
    for lo, hi in ((0, 4), (4, 7), (7, 9)):
        transpose_blocks(whole, 64, src, 0, pack_transpose(burst, (1, 0, 0), a, c, tiles, True, (0, 1, lo, hi)))
    assert np.array_equal(whole, _expected(np.full(n, 0xA5, np.uint8), 64, src, 0, burst, (1, 0, 0), a, c,
                                           (0, 1), (0, na)))
    for lo, hi in cuts:
        dst = _aligned(n, shift_d)
        dst[:] = 0xA5
        want = _expected(dst, 64, src, 0, burst, (1, 0, 0), a, c, (0, 1), (lo, hi))
        transpose_blocks(dst, 64, src, 0, pack_transpose(burst, (1, 0, 0), a, c, tiles, True, (0, 1, lo, hi)))
        assert np.array_equal(dst, want), (lo, hi)


@pytest.mark.parametrize("burst, nc", [(32, 1), (32, 2), (32, 5), (32, 8), (64, 1), (64, 3), (64, 4)])
@pytest.mark.parametrize("shift_d", [0, 16, 32, 48])
@pytest.mark.parametrize("gap", [0, 64, 128])
@pytest.mark.parametrize("tiles", [(1, 1), (3, 2), (1024, 8)])
def test_transpose_runs_of_one_phase(burst, nc, shift_d, gap, tiles):
    """The streaming walk for runs that all start at the same phase of a line (row and batch strides multiples
    of 64, 32- or 64-byte blocks: from_nz, NZ2ND, to_nz of whole tiles): each run's partial lines (a junction
    where the runs follow each other, ``gap`` 0), then its whole lines from offsets fixed per tile column; run
    lengths below, at and above a line, at every phase of the first run; a batch of two; the chunks the threads
    take, one after another on one destination and each alone; no byte outside a chunk's runs written."""
    na, run = 11, nc * burst
    da = -(-run // 64) * 64 + gap if gap else run  # (gap 0 and a run not of whole lines: not one phase)
    if da % 64:
        da = run * 64 // math.gcd(run, 64)  # (a run each line multiple apart instead)
    a, c = (na, burst, da), (nc, na * burst + 32, burst)
    batch = (2, nc * (na * burst + 32) + 64, na * da + 128)
    n = 256 + batch[2] * 2 + na * da
    src = _aligned(n, 0)
    src[:] = np.random.default_rng(nc * burst + gap).integers(0, 256, n, dtype=np.uint8)
    whole = _aligned(n, shift_d)
    whole[:] = 0xA5
    for lo, hi in ((0, 4), (4, 10), (10, 11)):
        transpose_blocks(whole, 64, src, 0, pack_transpose(burst, batch, a, c, tiles, True, (0, 2, lo, hi)))
    assert np.array_equal(whole, _expected(np.full(n, 0xA5, np.uint8), 64, src, 0, burst, batch, a, c, (0, 2),
                                           (0, na)))
    for b_range, a_range in (((0, 1), (3, 7)), ((1, 2), (0, 11)), ((0, 2), (5, 6))):
        dst = _aligned(n, shift_d)
        dst[:] = 0xA5
        want = _expected(dst, 64, src, 0, burst, batch, a, c, b_range, a_range)
        transpose_blocks(dst, 64, src, 0, pack_transpose(burst, batch, a, c, tiles, True, b_range + a_range))
        assert np.array_equal(dst, want), (b_range, a_range)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("nb, na, tile_a", [(1, 256, 128), (1, 512, 128), (1, 4096, 128), (1, 200, 128),
                                            (1, 3, 128), (1, 1, 128), (3, 100, 32), (300, 2, 128), (1, 129, 1),
                                            (1, 4096, 1024), (1, 2048, 1024), (2, 2048, 1024), (1, 2600, 1024),
                                            (1, 512, 1024)])
def test_layout_chunks_cover_in_whole_tiles(monkeypatch, threads, nb, na, tile_a):
    """The threads' pieces of a transpose cover its range once, in order, each (but the last) whole tiles of
    ``tile_a`` unless that would leave a thread without a piece; a big step gives every thread one."""
    from fastcopy import config
    from fastcopy.dma import lower

    monkeypatch.setattr(config, "THREADS", threads)
    chunks = lower._layout_chunks(nb, na, 64 << 20, tile_a)
    along_b = nb > na
    spans = [(c[0], c[1]) if along_b else (c[2], c[3]) for c in chunks]
    assert spans[0][0] == 0 and spans[-1][1] == (nb if along_b else na)
    assert all(p[1] == q[0] for p, q in zip(spans, spans[1:])) and all(lo < hi for lo, hi in spans)
    assert all((0, nb) == (c[0], c[1]) for c in chunks) or all((0, na) == (c[2], c[3]) for c in chunks)
    assert len(chunks) >= min(threads, nb if along_b else na)
    if not along_b:
        unit = max(1, min(tile_a, na // threads))
        assert all((hi - lo) % unit == 0 for lo, hi in spans[:-1])


_COUNTS = re.compile(r"call [^\n]*@\"?NRT_(?:incref|decref)")


def _own_code(module, name, alone=False):
    """The LLVM function bodies of a fresh compile of ``fastcopy.kernels.<module>.<name>`` and of the functions
    of that module it calls (``alone``: its own only), on small arguments."""
    from numba import njit

    from fastcopy.dma import abi

    a, meta = _aligned(256, 0), pack_transpose(32, (1, 0, 0), (2, 32, 64), (2, 64, 32), (1, 1), True, (0, 1, 0, 2))
    one = abi.contiguous(16)
    table = np.zeros((2, 4 + len(one)), np.int64)
    table[:, 4:] = one
    table[1, 0] = 1
    elements = pack_transpose(2, (1, 0, 0), (1, 2, 32), (1, 32, 2), (1, 1), False, (0, 1, 0, 2))
    args = {"transpose_blocks": (a, 0, a, 128, meta), "copy_dense": (a, 0, a, 128, 100, True),
            "copy_rows": (a, 0, a, 128, meta), "fill_dense": (a, 0, 64, a),
            "transpose_elements": (a, 0, a, 128, elements), "copy_strided": (a, 0, a, 128, one),
            "run_steps": (a, a, table)}[name]
    source = getattr(importlib.import_module(f"fastcopy.kernels.{module}"), name).py_func
    kernel = njit(nogil=True, boundscheck=False)(source)  # (a fresh compile: its IR)
    kernel(*args)
    ir = "".join(kernel.inspect_llvm().values())
    own = rf'define [^\n]*@"?_ZN8fastcopy7kernels{len(module)}{module}{len(name) if alone else ""}{name if alone else ""}'
    own += r'[^\n]*\n.*?\n}\n'
    bodies = [m.group(0) for m in re.finditer(own, ir, re.S)]
    assert bodies
    return bodies


@pytest.mark.parametrize("module, name", [("layout", "transpose_blocks"), ("layout", "copy_dense"),
                                          ("layout", "copy_rows"), ("layout", "fill_dense"),
                                          ("strided", "run_steps")])
def test_streaming_kernels_hold_no_references(module, name):
    """The streaming kernels' own code calls no reference counting: an ``NRT_incref`` / ``NRT_decref`` inside
    their loops (numba adds them where an array is handed to an inlined helper, and its pruning pass does not
    always remove them) is an atomic instruction that waits for every streaming store in flight. One pair per
    row made a from_nz of 4096 rows 1.6x slower on one thread (4.1 against 2.5 ms); the loops take addresses.
    ``run_steps`` takes views holding no reference (``intrinsics.unowned``): a step's row of its table and the
    step kernel's arguments cost 8 atomic counts per step (a 5-step img2col repeat: 0.72 against 0.62 us)."""
    for body in _own_code(module, name, alone=module == "strided"):  # (the steps' kernels: the next test)
        assert not _COUNTS.findall(body)


def _in_a_loop(body):
    """The labels of the basic blocks of an LLVM function body that lie on a cycle of its control flow."""
    blocks, label = {}, "entry"
    for line in body.split("\n")[1:]:
        m = re.match(r'^"?([^\s":]+)"?:', line)
        if m:
            label = m.group(1)
        blocks.setdefault(label, []).append(line)
    succ = {b: set(re.findall(r'label %"?([^\s",\]]+)', "\n".join(lines))) for b, lines in blocks.items()}

    def on_cycle(b):
        seen, todo = set(), list(succ[b])
        while todo:
            x = todo.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(succ.get(x, ()))
        return False

    return {b for b in blocks if on_cycle(b)}, blocks


@pytest.mark.parametrize("module, name", [("elements", "transpose_elements"), ("strided", "copy_strided")])
def test_kernels_count_references_outside_their_loops(module, name):
    """The element transposes and strided copies count their arguments' references at entry and exit only (once a
    call, and on the crew's views, which hold none, as a test of a null pointer): no block that calls
    ``NRT_incref`` / ``NRT_decref`` is on a loop. (Taking unowned views here measured nothing: 64 KiB transposes
    alone or split by the pair lane, and the small repeated calls, within the noise.)"""
    for body in _own_code(module, name):
        looped, blocks = _in_a_loop(body)
        assert looped or "elements" in module  # (the walk's loops are in the functions it calls)
        assert not [b for b in looped if _COUNTS.findall("\n".join(blocks[b]))]
