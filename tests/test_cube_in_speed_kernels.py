"""The element-transpose kernel (fastcopy/kernels/elements.py) and the cube-in plans that reach it, bit for bit:
the numba kernel against its numpy stand-in on every element width (whole tiles, pairs of tiles, partial tiles,
chunks as the threads share them), and LoadData ifTranspose / LoadDataWithTranspose / img2col through the public
API against the reference oracles with the layout kernels engaged (small sizes: ``config.LAYOUT_BYTES`` lowered),
one thread and two, source partly undefined (the plane moves with the same kernel)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cube_in_helpers import reference_img2col
from test_layout_paths import layout_config

import fastcopy as fc
from fastcopy import config
from fastcopy.cube import img2col as _img2col
from fastcopy.cube import loaddata as _loaddata
from fastcopy.dma import abi, npkernels
from fastcopy.reference import loaddata as ref

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
POISON = 0xFF


@SETTINGS
@given(w=st.sampled_from([1, 2, 4, 8]), nb=st.integers(1, 3), ta=st.integers(0, 4), ra=st.integers(0, 40),
       tc=st.integers(0, 3), rc=st.integers(0, 40), pad=st.integers(0, 9), split=st.booleans(), seed=st.integers(0, 99))
def test_transpose_elements_matches_numpy(w, nb, ta, ra, tc, rc, pad, split, seed):
    from fastcopy.kernels.elements import transpose_elements

    n = 32 // w
    na, nc = ta * n + ra % n, tc * n + rc % n
    sc, da = (na + pad) * w, (nc + pad) * w  # source rows of na elements, destination rows of nc
    sb, db = nc * sc + 3 * w, na * da + 5 * w
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, nb * sb + 64, dtype=np.uint8)
    got = rng.integers(0, 256, nb * db + 64, dtype=np.uint8)
    want = got.copy()
    chunks = [(0, nb, 0, na)]
    if split and na > 1:
        cut = rng.integers(1, na)
        chunks = [(0, nb, 0, int(cut)), (0, nb, int(cut), na)]
    for ch in chunks:
        meta = abi.pack_transpose(w, (nb, sb, db), (na, w, da), (nc, sc, w), (1, 1), False, ch)
        transpose_elements(got, 7, src, 3, meta)
        npkernels.transpose_elements(want, 7, src, 3, meta)
    assert np.array_equal(got, want)



def _tiles_against_numpy(w, nb, sb, db, na, chunk, seed, backward, dbase, sbase):
    """One element transpose of whole contiguous tiles (rows 32 bytes apart on both sides) into a destination of
    POISON, bit for bit the numpy kernel's (``backward``: None for ``transpose_elements``, else the flag of
    ``transpose_elements_turned``); returns the destination."""
    from fastcopy.kernels import elements

    n = 32 // w
    meta = abi.pack_transpose(w, (nb, sb, db), (na, w, 32), (n, 32, w), (1, 1), False, chunk)
    src = np.random.default_rng(seed).integers(0, 256, nb * sb + 256, dtype=np.uint8)
    got = np.full(nb * db + 256, POISON, np.uint8)
    want = got.copy()
    if backward is None:
        elements.transpose_elements(got, dbase, src, sbase, meta)
    else:
        elements.transpose_elements_turned(got, dbase, src, sbase, meta, backward)
    npkernels.transpose_elements(want, dbase, src, sbase, meta)
    assert np.array_equal(got, want)
    return got


@pytest.mark.parametrize("w", [1, 2, 4, 8])
@pytest.mark.parametrize("gap", [0, 64 + 8])
@pytest.mark.parametrize("part", [(0, 9), (0, 4), (4, 9), (8, 9), (3, 5)])
@pytest.mark.parametrize("backward", [None, False, True])
def test_whole_fractals_write_their_batches_only(w, gap, part, backward):
    """The walk over whole contiguous tiles (rows 32 bytes apart on both sides: the fractals of a transposing
    load), which asks for its destination lines ahead of its stores: a range of batches (a pair's half) writes
    exactly its fractals, bit for bit the numpy kernel's, every byte around them (gaps, the other batches, guards)
    untouched; also walked backward (``transpose_elements_turned``, the pair lane's calls in turn)."""
    n = 32 // w
    span, db = n * 32, n * 32 + gap
    got = _tiles_against_numpy(w, 9, span + 32, db, n, (part[0], part[1], 0, n), w * 10 + gap, backward, 64, 5)
    written = np.flatnonzero(got != POISON)
    assert written.min() >= 64 + part[0] * db and written.max() < 64 + (part[1] - 1) * db + span


@pytest.mark.parametrize("w", [1, 2, 4, 8])
@pytest.mark.parametrize("tile", [0, 1, 2])
@pytest.mark.parametrize("part", [(0, 5), (2, 3), (4, 5)])
@pytest.mark.parametrize("backward", [False, True])
def test_one_whole_tile_a_batch_from_any_row(w, tile, part, backward):
    """The walk's loop for one whole contiguous tile a batch (LoadData's fractals) where the tile is not the
    first of its rows (a chunk of one tile of a longer ``a`` loop, as a one-batch pair half): the destination
    rows and source columns it starts from, bit for bit the numpy kernel's, nothing else written; either way."""
    n = 32 // w
    db, lo = 3 * n * 32 + 64, tile * n  # (source rows 32 bytes apart hold n elements each: later tiles read on)
    got = _tiles_against_numpy(w, 5, 4 * n * 32 + 16, db, 3 * n, (*part, lo, lo + n), w + 7 * tile, backward, 32, 3)
    inside = np.zeros(got.size, bool)
    for ib in range(*part):
        inside[32 + ib * db + lo * 32:32 + ib * db + (lo + n) * 32] = True
    assert (got[~inside] == POISON).all()


def _fill_src(t, seed, undefined):
    raw = np.random.default_rng(seed).integers(0, 256, t.nbytes, dtype=np.uint8)
    t.numpy().view(np.uint8)[:] = raw
    mask = np.ones(t.size, bool)
    if undefined:
        mask[np.random.default_rng(seed + 1).integers(0, t.size, 5)] = False
    t.set_defined(mask)


def _bytes(t):
    plane = t.memory.plane
    data = t.memory.data[t.offset:t.offset + t.nbytes].copy()
    dfd = np.ones(t.nbytes, bool) if plane is None else plane[t.offset:t.offset + t.nbytes].astype(bool)
    return data, dfd


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("undefined", [False, True])
@pytest.mark.parametrize("repeat,stride,gap", [(8, 1, 0), (5, 2, 1), (64, 1, 0)])
def test_load2d_transpose_takes_the_element_kernel(threads, undefined, repeat, stride, gap):
    with layout_config(threads, False):
        pipe = fc.TPipe(product="ATLAS_A2")
        src = pipe.alloc("A1", "half", 256 * (repeat * stride + 1))
        _fill_src(src, repeat, undefined)
        dst = pipe.alloc("B2", "half", 256 * repeat * (gap + 1))
        p = fc.LoadData2DParams(1, repeat, stride, 0, gap, True)
        assert "elements" in [k.kind for k in _loaddata.plan_load2d(dst, src, p).ksteps]
        want, want_def = _bytes(dst)
        s, s_def = _bytes(src)
        ref.load2d(want, want_def, s, s_def, es=2, startIndex=1, repeatTimes=repeat, srcStride=stride, dstGap=gap,
                   transpose=True, poison=POISON)
        for _ in range(2):  # planned, then prepared
            fc.LoadData(dst, src, p)
            got, got_def = _bytes(dst)
            assert np.array_equal(got_def, want_def)
            assert np.array_equal(got[want_def], want[want_def])


@pytest.mark.parametrize("dtype,es", [("int8_t", 1), ("half", 2), ("float", 4)])
@pytest.mark.parametrize("threads", [1, 2])
def test_transpose_squares_match_reference(dtype, es, threads):
    with layout_config(threads, False):
        pipe = fc.TPipe(product="ATLAS_A2")
        n = {1: 2, 2: 1, 4: 2}[es]
        repeat = 12
        src = pipe.alloc("B1", dtype, (repeat * n + 2) * 512 // es)
        _fill_src(src, es, False)
        dst = pipe.alloc("B2", dtype, repeat * n * 512 // es)
        p = fc.LoadData2dTransposeParams(0, repeat, 1, n - 1, 0, 0)
        want, want_def = _bytes(dst)
        s, s_def = _bytes(src)
        ref.load2d_transpose(want, want_def, s, s_def, es=es, startIndex=0, repeatTimes=repeat, srcStride=1,
                             dstGap=n - 1, dstFracGap=0, poison=POISON)
        fc.LoadDataWithTranspose(dst, src, p)
        got, got_def = _bytes(dst)
        assert np.array_equal(got_def, want_def) and np.array_equal(got[want_def], want[want_def])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dt,C", [(np.float16, 40), (np.float16, 32), (np.int8, 70), (np.float32, 19)])
def test_img2col_stage_takes_the_element_kernel(threads, dt, C):
    H, W = 9, 7
    fmap = (np.arange(C * H * W) % 251).reshape(C, H, W).astype(dt)
    with layout_config(threads, False):
        X = fc.img2col(fmap, 3, pad=(1, 0, 2, 1), pad_value=-3)
        es = np.dtype(dt).itemsize
        kinds = [k.kind for k in fc.dma.lower.make_plan(
            "x", _img2col._stage_steps(C, H * W, es, 32 // es), fc.GlobalTensor(fmap.reshape(-1))._sig,
            fc.GlobalTensor(np.empty(-(-C // (32 // es)) * H * W * 32 // es, dt))._sig).ksteps]
        assert "elements" in kinds
    assert np.array_equal(X.view(np.uint8), reference_img2col(fmap, 3, 3, 1, 1, 1, 1, (1, 0, 2, 1), -3).view(np.uint8))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dt=st.sampled_from([np.float16, np.int8, np.float32]), C=st.integers(1, 20), H=st.integers(1, 9),
       W=st.integers(1, 9), kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       dh=st.integers(1, 3), pads=st.tuples(*[st.integers(0, 3)] * 4))
def test_img2col_interior_move_matches_reference(dt, C, H, W, kh, kw, sh, sw, dh, pads):
    """The helper's gather: one strided Move for the pixels whose taps are all inside (dilation 1 across), the
    element map for the border; every stride, height dilation, kernel and asymmetric padding."""
    if H + pads[2] + pads[3] < (kh - 1) * dh + 1 or W + pads[0] + pads[1] < kw:
        kh, kw, dh = 1, 1, 1
    fmap = (np.arange(C * H * W) % 97).reshape(C, H, W).astype(dt)
    got = fc.img2col(fmap, (kh, kw), stride=(sh, sw), dilation=(dh, 1), pad=pads, pad_value=5)
    want = reference_img2col(fmap, kh, kw, sh, sw, dh, 1, pads, 5)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def _pairs(steps, es):
    """Every (destination, source) byte pair the steps move (source -1: a fill)."""
    from fastcopy.dma.steps import Fill, read_grid, write_grid

    out = []
    for st_ in steps:
        d = write_grid(st_)
        s = np.full(d.size, -1, np.int64) if isinstance(st_, Fill) else read_grid(st_)
        out.append(np.stack([d, s], 1))
    pairs = np.concatenate(out) if out else np.zeros((0, 2), np.int64)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


@SETTINGS
@given(es=st.sampled_from([1, 2, 4]), shape=st.lists(st.integers(1, 6), min_size=1, max_size=5),
       split=st.integers(-1, 4), seed=st.integers(0, 999), shuffle=st.booleans(), fills=st.booleans(),
       natural=st.booleans())
def test_element_steps_move_exactly_the_map(es, shape, split, seed, shuffle, fills, natural):
    """element_steps (affine grids -> one Move, split axes, unrolled outer loops, folded offset lists, the
    general path) moves exactly the listed elements and reports overlap exactly."""
    from fastcopy.cube.steps import element_steps

    rng = np.random.default_rng(seed)
    grids = np.ix_(*(np.arange(n, dtype=np.int64) for n in shape))
    dstr = rng.integers(1, 5, len(shape)) * es * rng.choice([1, 2, 8], len(shape))
    sstr = rng.integers(1, 5, len(shape)) * es * rng.choice([1, 3, 16], len(shape))
    if natural:  # row-major destination, the source a transpose of it: axes that merge, contiguous bursts
        dstr = np.array([int(np.prod(shape[k + 1:])) * es for k in range(len(shape))])
        perm = rng.permutation(len(shape)) if seed % 2 else np.arange(len(shape))
        inv = np.array([int(np.prod([shape[p] for p in perm[list(perm).index(k) + 1:]])) for k in range(len(shape))])
        sstr = inv * es
    d = sum(g * k for g, k in zip(grids, dstr)) + 0 * sum(grids)
    s = sum(g * k for g, k in zip(grids, sstr)) + 0 * sum(grids)
    if split >= 0:  # a fractal boundary half way along one axis
        ax = split % len(shape)
        s = s + (grids[ax] >= shape[ax] // 2) * 1000 * es
    if shuffle:
        order = rng.permutation(d.size)
        d, s = d.reshape(-1)[order], s.reshape(-1)[order]
    if fills:
        s = np.where(rng.random(s.shape) < 0.2, -1, s)
    steps, overlap = element_steps(d, s, es, b"\x07" * es)
    want = np.stack([(d.reshape(-1)[:, None] + np.arange(es)).reshape(-1),
                     np.where(np.repeat(s.reshape(-1), es) < 0, -1,
                              (s.reshape(-1)[:, None] + np.arange(es)).reshape(-1))], 1)
    want = want[np.lexsort((want[:, 1], want[:, 0]))]
    assert np.array_equal(_pairs(steps, es), want)
    assert overlap == bool(np.unique(d).size < d.size)


@pytest.mark.parametrize("zmm, tiles", [(True, 1), (True, 2), (False, 1), (False, 2), ("adjacent", 1)])
@pytest.mark.parametrize("w", [1, 2, 4, 8])
def test_tile_transposes_both_register_widths(zmm, w, tiles):
    """Both tile transposes (64-byte registers with the butterfly, 32-byte registers with interleaves; the kernel
    takes the one the CPU suits) against numpy, on strided rows: every element lands on its transposed place.
    ``adjacent``: the 64-byte form that stores two destination rows at once (rows 32 bytes apart only)."""
    from numba import njit

    from fastcopy.kernels import elements

    if zmm == "adjacent":
        tile = elements._zmm_tile_intrinsic(w, 1, adjacent=True)
    else:
        tile = (elements._zmm_tile_intrinsic if zmm else elements._tile_intrinsic)(w, tiles)

    @njit
    def run(dst, d, da, src, s, sc):
        tile(dst, d, da, src, s, sc)

    n = 32 // w
    sc, da = 32 * tiles + 40, 32 if zmm == "adjacent" else 32 + 24
    src = np.random.default_rng(w).integers(0, 256, n * sc + 64, dtype=np.uint8)
    got = np.zeros(2 * n * da + 64, np.uint8)
    run(got, 5, da, src, 3, sc)
    want = np.zeros_like(got)
    for t in range(tiles):
        for r in range(n):  # source row r, element c of tile t -> destination row t*n + c, element r
            for c in range(n):
                d, s = 5 + (t * n + c) * da + r * w, 3 + r * sc + 32 * t + c * w
                want[d:d + w] = src[s:s + w]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("w,burst_bytes,dshift", [(w, b, d) for w in (1, 2, 4, 8) for b, d in
                                                   ((96, 0), (96, 16), (64, 8), (32, 24), (32, 0), (224, 48), (96, 3))
                                                   if d % w == 0])  # (a view of w-byte units starts on a unit)
def test_large_gather_streams_exactly(w, burst_bytes, dshift):
    """A strided copy writing more than strided.GATHER_NT_BYTES in short bursts, its innermost loop contiguous on
    the destination (the img2col gather shape) takes the streaming stores: bit for bit the numpy kernel's result,
    bursts starting on 32-byte boundaries or not (regular stores there), the bytes around untouched."""
    from fastcopy.kernels import strided

    b = burst_bytes // w
    inner, mid = 3, 8
    outer = -(-strided.GATHER_NT_BYTES // (burst_bytes * inner * mid)) + 1
    src_stride = b * 5 + 1  # scattered reads
    loops = ((outer, src_stride * inner * mid + 7, b * inner * mid), (1, 0, 0), (mid, src_stride * inner, b * inner),
             (inner, src_stride, b))
    meta = abi.pack(b, loops, (0, 1, 0, outer), (0,), (0,))
    rng = np.random.default_rng(burst_bytes + dshift)
    src = rng.integers(0, 256, (outer * (src_stride * inner * mid + 7) + b) * w + 64, dtype=np.uint8)
    raw = np.zeros(outer * b * inner * mid * w + 256, np.uint8)
    start = (-raw.ctypes.data) % 64 + dshift  # the destination's first burst dshift bytes past a line
    got = raw.view(np.uint8)
    want = got.copy()
    dview = got[start - start % w:].view(np.dtype(f"u{w}")) if w > 1 else got[start:]
    wview = want[start - start % w:].view(np.dtype(f"u{w}")) if w > 1 else want[start:]
    sview = src[:src.size // w * w].view(np.dtype(f"u{w}"))
    assert strided._streams(meta, w)
    strided.copy_strided(dview, 0, sview, 1, meta)
    npkernels.copy_strided(wview, 0, sview, 1, meta)
    assert np.array_equal(got, want)


def _numpy_img2col(fmap, k, pad, pad_value):
    """The img2col matrix the numpy way (a padded NHWC0 map and a sliding window; stride and dilation 1), checked
    against the element-wise reference below on a small map."""
    C, H, W = fmap.shape
    c0 = 32 // fmap.itemsize
    C1 = -(-C // c0)
    nc = np.zeros((C1 * c0, H, W), fmap.dtype)
    nc[:C] = fmap
    padded = np.pad(nc.reshape(C1, c0, H, W).transpose(0, 2, 3, 1), ((0, 0), (pad, pad), (pad, pad), (0, 0)),
                    constant_values=pad_value)
    win = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))  # (C1, Ho, Wo, c0, k, k)
    Ho, Wo = win.shape[1:3]
    return np.ascontiguousarray(win.transpose(1, 2, 0, 4, 5, 3)).reshape(Ho * Wo, C1 * k * k * c0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dt,C,HW", [(np.float16, 64, 48), (np.int8, 128, 48), (np.float32, 24, 64)])
def test_large_img2col_matches_numpy(threads, dt, C, HW):
    """An img2col helper call large enough that its gather streams (every thread's chunk above
    strided.GATHER_NT_BYTES), twice (the staging buffer reused), one thread and two, against the numpy way."""
    from fastcopy.formats import _raw
    from fastcopy.kernels import strided

    small = (np.arange(5 * 6 * 7) % 97).reshape(5, 6, 7).astype(dt)
    assert np.array_equal(_numpy_img2col(small, 3, 1, 7).view(np.uint8),
                          reference_img2col(small, 3, 3, 1, 1, 1, 1, (1, 1, 1, 1), 7).view(np.uint8))
    saved = config.THREADS
    config.THREADS = threads
    _img2col._helper_plans.cache_clear()
    try:
        for seed in (1, 2):
            fmap = np.random.default_rng(seed).integers(0, 100, (C, HW, HW)).astype(dt)
            want = _numpy_img2col(fmap, 3, 1, 5)
            got = fc.img2col(fmap, 3, pad=1, pad_value=5)
            es, c0 = fmap.itemsize, 32 // fmap.itemsize
            mid = np.empty(-(-C // c0) * HW * HW * c0, dt)
            gather = _img2col._helper_plans(C, HW, HW, es, c0, 3, 3, 1, 1, 1, 1, (1,) * 4, None,
                                            np.asarray(5, dt).tobytes(), _raw(fmap)._sig, _raw(mid)._sig,
                                            _raw(got)._sig)[1]
            interior = gather.ksteps[0]
            rows = interior.metas[0].base if len(interior.metas) > 1 else interior.metas
            assert len(rows) == threads and all(strided._streams(m, interior.w) for m in rows)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    finally:
        config.THREADS = saved
        _img2col._helper_plans.cache_clear()


@pytest.mark.parametrize("crew_on", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_large_transposed_tile_repeats_exactly(crew_on, transpose):
    """A 64 KiB transposed tile (LoadData ifTranspose, LoadDataWithTranspose) repeated: prepared (one element
    transpose call), with the crew on and off, bit for bit the reference, source partly undefined then defined."""
    from fastcopy.dma import crew

    pipe = fc.TPipe(product="ATLAS_A2")
    src = pipe.alloc("B1" if transpose else "A1", "half", 32768 + 256)
    dst = pipe.alloc("B2", "half", 32768)
    if transpose:
        p = fc.LoadData2dTransposeParams(1, 128, 1, 0, 0, 0)
        call = lambda: fc.LoadDataWithTranspose(dst, src, p)  # noqa: E731
    else:
        p = fc.LoadData2DParams(1, 128, 1, 0, 0, True)
        call = lambda: fc.LoadData(dst, src, p)  # noqa: E731
    saved = crew.ENABLED
    crew.ENABLED = crew_on
    try:
        for undefined in (True, False, False, False):
            _fill_src(src, 7, undefined)
            want, want_def = _bytes(dst)
            s, s_def = _bytes(src)
            if transpose:
                ref.load2d_transpose(want, want_def, s, s_def, es=2, startIndex=1, repeatTimes=128, srcStride=1,
                                     dstGap=0, dstFracGap=0, poison=POISON)
            else:
                ref.load2d(want, want_def, s, s_def, es=2, startIndex=1, repeatTimes=128, srcStride=1, dstGap=0,
                           transpose=True, poison=POISON)
            call()
            got, got_def = _bytes(dst)
            assert np.array_equal(got_def, want_def) and np.array_equal(got[want_def], want[want_def])
        prep = next(v for k, v in dst._prepared.items() if k != "last")[4]
        assert [c[0] for c in prep[1]] == ["elements"]
    finally:
        crew.ENABLED = saved


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_350"])
def test_operand_buffers_start_on_a_line(product):
    """L1 and the cube's operand buffers L0A / L0B start on a cache line (a tile load between them is a copy of
    whole lines); UB starts 16 bytes after one, where numpy's large arrays do."""
    pipe = fc.TPipe(product=product)
    for pos, residue in (("A1", 0), ("A2", 0), ("B2", 0), ("VECIN", 16)):
        t = pipe.alloc(pos, "half", 256)
        assert t.memory.data.ctypes.data % 64 == residue == t.memory.addr0


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("materialise", [False, True])
def test_tile_repeat_sees_definedness_changes(transpose, materialise):
    """A repeated 64 KiB tile skips the definedness lookups while the memories' known-defined lists are the ones
    it found its spans in: any change (source or destination bytes made undefined, a plane materialised) is
    seen by the next repeat, which then moves or marks definedness again, bit for bit the reference."""
    pipe = fc.TPipe(product="ATLAS_A2")
    src = pipe.alloc("A1", "half", 32768)
    dst = pipe.alloc("B2", "half", 32768)
    p = fc.LoadData2DParams(0, 128, 1, 0, 0, transpose)

    def state(t):  # (read without materialising a lazy plane)
        lo, hi = t.offset, t.offset + t.nbytes
        return t.memory.data[lo:hi].copy(), t.memory.plane_bytes(lo, hi).astype(bool)

    def check():
        want, want_def = state(dst)
        s, s_def = state(src)
        ref.load2d(want, want_def, s, s_def, es=2, startIndex=0, repeatTimes=128, srcStride=1, dstGap=0,
                   transpose=transpose, poison=POISON)
        fc.LoadData(dst, src, p)
        got, got_def = state(dst)
        assert np.array_equal(got_def, want_def) and np.array_equal(got[want_def], want[want_def])

    _fill_src(src, 3, False)
    for _ in range(3):
        check()
    if materialise:  # (the known-defined lists become caches of the planes)
        dst.memory.materialize_plane()
        src.memory.materialize_plane()
    assert dst.memory.lazy is not materialise
    dst.memory.mark_undefined(dst.offset + 100, dst.offset + 140)  # behind the repeat's back: marked again
    check()
    check()
    src.memory.mark_undefined(src.offset + 9000, src.offset + 9003)  # source bytes undefined: they travel
    check()
    check()
    src.set_defined()
    check()
    check()


def test_tile_repeat_is_one_numpy_copy_before_numba_loads():
    """A repeated whole-tile LoadData (one 64 KiB burst) takes the quickest repeat, a bound np.copyto, also while
    the numba kernels are not loaded (a process whose only loads are tiles never loads them), bit for bit."""
    from fastcopy.dma import kernels as K

    K.use("numpy")  # (not loaded: as in a fresh process whose calls never needed numba)
    try:
        pipe = fc.TPipe(product="ATLAS_A2")
        src = pipe.alloc("A1", "half", 32768 + 256)
        dst = pipe.alloc("A2", "half", 32768)
        p = fc.LoadData2DParams(1, 128, 1)
        for seed in range(4):
            _fill_src(src, seed, False)
            fc.LoadData(dst, src, p)
            assert np.array_equal(dst.numpy().view(np.uint16), src.numpy()[256:].view(np.uint16))
            assert dst.defined().all()
        fast = [e[5] for e in dst._prepared.values() if type(e) is list and len(e) > 5 and e[5]]
        assert fast and fast[0][0] is np.copyto
    finally:
        K.use("auto")
