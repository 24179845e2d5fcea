"""The 4-bit transposes on the compiled nibble gather (fastcopy/kernels/nibbles.py) and on the prepared-call cache:
bit for bit (bytes and definedness) the reference, on the kernel and on the numpy path, and a repeat under an
unchanged core state skips planning while every register write makes the next call plan again."""

from __future__ import annotations

import numpy as np
import pytest
from dc_util import tensor_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy.cube import b4 as _b4
from fastcopy.cube import loaddata as _loaddata
from fastcopy.products import Phys
from fastcopy.reference import loaddata as ref
from test_cube_in_props import run_both
import test_cube_in_speed

planned = test_cube_in_speed.planned  # the fixture (counts planner calls), taken by name

P350, A2 = "ATLAS_350", "ATLAS_A2"
F = 512
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # (path: fixed)


def tensor(pipe, pos, dtype, nbytes, rng):
    t = pipe.alloc(pos, dtype, nbytes)
    t.numpy().view(np.uint8)[:] = rng.integers(0, 256, nbytes, dtype=np.uint8)
    t.set_defined(rng.random(nbytes) < 0.9)
    return t


@pytest.fixture(params=["kernel", "numpy"])
def path(request, monkeypatch):
    """Run the nibble moves on the compiled gather or on numpy (the small first calls)."""
    monkeypatch.setattr(_b4, "compiled", lambda repeat, nbytes: request.param == "kernel")
    return request.param


def check(product, dtype, src_bytes, dst_bytes, call, oracle, seed, all_defined=False):
    run_both(product, (Phys.L1, Phys.L0B), dtype, src_bytes, dst_bytes, call, oracle, seed,
             defined=1 if all_defined else 0.9)


@SETTINGS
@given(st.data())
def test_load2dv2_fp4_transpose_matches_reference(path, data):
    dtype = data.draw(st.sampled_from(["fp4x2_e2m1_t", "fp4x2_e1m2_t"]))
    ms, ks = 4 * data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    m0, k0 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 2))
    sstride = m0 + ms + data.draw(st.integers(0, 2))
    dstride = data.draw(st.integers(0, 5)) + (ms // 4 if data.draw(st.booleans()) else 0)
    p = fc.LoadData2DParamsV2(m0, k0, ms, ks, sstride, dstride, True)
    src_bytes = ((k0 + ks) * sstride + 1) * F
    dst_bytes = (((ks * 64 // 16 - 1) + (ms * 16 // 64 - 1) * dstride + 1) + 4) * F

    def oracle(d, d_def, s, s_def, poison):
        ref.load2d_v2_b4(d, d_def, s, s_def, mStartPosition=m0, kStartPosition=k0, mStep=ms, kStep=ks,
                         srcStride=sstride, dstStride=dstride, poison=poison)

    def call(d, s):
        with _quiet():
            fc.LoadData(d, s, p)

    check(P350, dtype, src_bytes, dst_bytes, call, oracle, data.draw(st.integers(0, 2**16)),
          all_defined=data.draw(st.booleans()))


@SETTINGS
@given(st.data())
def test_ldwt_int4_matches_reference(path, data):
    R = data.draw(st.integers(1, 4))
    start, sstride = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    gap, fgap = data.draw(st.integers(0, 5)), data.draw(st.integers(0, 2))
    p = fc.LoadData2dTransposeParams(start, R, sstride, gap, fgap)
    src_bytes = (start + (R - 1) * sstride + 1) * 4 * F
    dst_bytes = ((R - 1) * (gap + 1) + 3 * (fgap + 1) + 1) * F

    def oracle(d, d_def, s, s_def, poison):
        ref.load2d_transpose_b4(d, d_def, s, s_def, startIndex=start, repeatTimes=R, srcStride=sstride, dstGap=gap,
                                dstFracGap=fgap, poison=poison)

    def call(d, s):
        with _quiet():
            fc.LoadDataWithTranspose(d, s, p)

    check(A2, "int4b_t", src_bytes, dst_bytes, call, oracle, data.draw(st.integers(0, 2**16)),
          all_defined=data.draw(st.booleans()))


class _quiet:
    """Overlap warnings are part of the rules tested elsewhere; here only the bytes matter."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", fc.FastCopyWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def test_a_64k_fp4_tile_is_whole_tiles():
    """A full 64 KiB L0B tile transposed from an Nz source: 512 tiles of 16 x 16 values cover every destination
    byte (nothing left for the byte gather); as byte runs it is one 32-byte destination row per run (a 64-value
    column of a source square, whose 4 fractals follow each other), one nibble step (two 32-byte rows)."""
    pipe = fc.TPipe(product=P350)
    src, dst = pipe.alloc("B1", "fp4x2_e2m1_t", 65536), pipe.alloc("B2", "fp4x2_e2m1_t", 65536)
    plan = _loaddata.plan_load2dv2(dst, src, fc.LoadData2DParamsV2(0, 0, 8, 16, 8, 64, True))
    g = plan.gather
    assert g.tiles.shape == (512, 2) and g.rest.shape == (0, 4) and g.span == (0, 65536)
    assert g.step == 128 and (g.runs[:, 3] == 32).all() and g.runs[:, 3].sum() == 65536


def test_tiles_and_rest_cover_each_byte_once():
    """An odd geometry (a destination pitch that breaks the 16-row tiles, a source start off the tile grid):
    tiles and byte runs together write each destination byte exactly once, as the map says."""
    pipe = fc.TPipe(product=A2)
    src, dst = pipe.alloc("B1", "int4b_t", 16 * F), pipe.alloc("B2", "int4b_t", 40 * F)
    plan = _loaddata.plan_transpose(dst, src, fc.LoadData2dTransposeParams(1, 3, 1, 11, 2))
    g = plan.gather
    ub = plan.whole[0]
    tile_bytes = (8 * g.tiles[:, 0, None, None] + 32 * np.arange(16)[None, :, None] + np.arange(8)).reshape(-1)
    run_bytes = np.concatenate([np.arange(d, d + n) for d, _, _, n in g.rest]) if g.rest.size else np.zeros(0, int)
    both = np.sort(np.concatenate([tile_bytes, run_bytes]))
    assert np.array_equal(both, ub) and g.tiles.size
    # the byte gather over every run (unaligned tensors) writes what the tiles + rest write
    from fastcopy.kernels.nibbles import gather_nibbles, transpose_tiles

    s8 = np.random.default_rng(3).integers(0, 256, 16 * F, dtype=np.uint8)
    a, b = np.zeros(40 * F, np.uint8), np.zeros(40 * F, np.uint8)
    transpose_tiles(a.view(np.uint64), 0, s8.view(np.uint64), 0, g.tiles)
    gather_nibbles(a, 0, s8, 0, g.rest, g.step, False)
    gather_nibbles(b, 0, s8, 0, g.runs, g.step, False)
    assert np.array_equal(a, b)


# --------------------------------------------------------------------------------------- the prepared-call cache
SETTERS = {
    "SetFmatrix": lambda pipe: fc.SetFmatrix(4, 4, (0, 0, 0, 0), pipe=pipe),
    "SetLoadDataPaddingValue": lambda pipe: fc.SetLoadDataPaddingValue(np.int8(3), pipe=pipe),
    "SetLoadDataRepeat": lambda pipe: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 0), pipe=pipe),
    "SetLoadDataBoundary": lambda pipe: fc.SetLoadDataBoundary(0, pipe=pipe),
    "SetPadValue": lambda pipe: fc.SetPadValue(np.int8(1), pipe=pipe),
}
CALLS = {
    "LoadData2DParamsV2": (P350, "fp4x2_e2m1_t", 8 * F, 8 * F,
                           lambda d, s: fc.LoadData(d, s, fc.LoadData2DParamsV2(0, 0, 4, 2, 4, 1, True))),
    "LoadDataWithTranspose": (A2, "int4b_t", 8 * F, 8 * F,
                              lambda d, s: fc.LoadDataWithTranspose(d, s, fc.LoadData2dTransposeParams(0, 2, 1, 3,
                                                                                                       0))),
}


def fresh(call, product, dst, src):
    """Bytes and definedness ``call`` gives on copies of ``dst`` and ``src`` in a new TPipe (no cache)."""
    pipe = fc.TPipe(product=product)
    copies = []
    for t in (dst, src):
        c = pipe.alloc(t.position, t.dtype, t.size)
        c.numpy().view(np.uint8)[:] = t.numpy().view(np.uint8)
        c.set_defined(t.defined())
        copies.append(c)
    call(*copies)
    return tensor_bytes(copies[0])


def same(a, b) -> bool:
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("which, setter", [(w, s) for w in sorted(CALLS) for s in sorted(SETTERS)
                                            if not (CALLS[w][0] == P350 and s == "SetLoadDataBoundary")])
def test_repeats_are_prepared_and_no_state_write_replans(planned, which, setter):
    """These loads read no register of the core: a register write leaves them prepared, writing what a call that
    never saw the cache writes. (Atlas 350 has no SetLoadDataBoundary.)"""
    product, dtype, sb, db, call = CALLS[which]
    rng = np.random.default_rng(1)
    pipe = fc.TPipe(product=product)
    src, dst = tensor(pipe, "B1", dtype, sb, rng), tensor(pipe, "B2", dtype, db, rng)
    call(dst, src)
    for k in range(3):  # repeats: prepared (nothing planned), reading the source's current data
        src.numpy().view(np.uint8)[k::7] ^= 0x5A
        want = fresh(call, product, dst, src)
        n = planned["n"]
        call(dst, src)
        assert planned["n"] == n
        assert same(tensor_bytes(dst), want)
    SETTERS[setter](pipe)
    src.numpy().view(np.uint8)[3::5] ^= 0xA5
    want = fresh(call, product, dst, src)
    n = planned["n"]
    call(dst, src)  # a state write: still prepared
    assert planned["n"] == n
    assert same(tensor_bytes(dst), want)


def test_another_source_tensor_replans(planned):
    product, dtype, sb, db, call = CALLS["LoadData2DParamsV2"]
    rng = np.random.default_rng(2)
    pipe = fc.TPipe(product=product)
    src, other, dst = (tensor(pipe, "B1", dtype, sb, rng), tensor(pipe, "B1", dtype, sb, rng),
                       tensor(pipe, "B2", dtype, db, rng))
    call(dst, src)
    call(dst, src)
    n = planned["n"]
    call(dst, other)
    assert planned["n"] == n + 1


def test_compiled_choice():
    """Prepared repeats and calls above SMALL_BYTES use the kernel; small first calls wait for numba to load;
    pinned numpy kernels are never left."""
    from fastcopy import config
    from fastcopy.dma import kernels as K

    assert _b4.compiled(True, 1) or K.copy_strided is K.npkernels.copy_strided
    assert _b4.compiled(False, config.SMALL_BYTES + 1) or K.copy_strided is K.npkernels.copy_strided
    assert _b4.compiled(False, 1) == (K.loaded() and K.copy_strided is not K.npkernels.copy_strided)


def test_repeats_keep_definedness_exact_over_a_large_tile():
    """A 64 KiB tile from an all-defined source: the repeat skips re-marking a destination it knows is defined,
    and still marks it after the destination was made undefined in between."""
    pipe = fc.TPipe(product=P350)
    src, dst = pipe.alloc("B1", "fp4x2_e2m1_t", 65536), pipe.alloc("B2", "fp4x2_e2m1_t", 65536)
    src.numpy().view(np.uint8)[:] = np.random.default_rng(5).integers(0, 256, 65536, dtype=np.uint8)
    src.set_defined()
    p = fc.LoadData2DParamsV2(0, 0, 8, 16, 8, 64, True)
    for k in range(4):
        if k == 2:
            dst.set_undefined()
            assert not np.asarray(dst.defined()).any()
        fc.LoadData(dst, src, p)
        assert np.asarray(dst.defined()).all()
    want = np.empty(2 * 65536, np.uint8)
    b = src.numpy().view(np.uint8)
    want[0::2], want[1::2] = b & 15, b >> 4
    # Y = 128 rows x 1024 values (16 fractal columns of 8 fractals), the destination is Nz of Y^T (64-value rows)
    y = want.reshape(16, 8 * 16, 64).transpose(1, 0, 2).reshape(128, 1024)
    t = y.T.reshape(64, 16, 2, 64).transpose(2, 0, 1, 3).reshape(-1)  # fractal (i//64)*64 + j//16
    got = dst.numpy().view(np.uint8)
    assert np.array_equal(got & 15, t[0::2]) and np.array_equal(got >> 4, t[1::2])


def test_defined_transposes_keep_lazy_definedness_lazy():
    """From a defined source into a fresh buffer, a 4-bit transpose records the written span as defined without
    making a byte plane of either memory (a plane would send every call through the per-byte plane gather)."""
    pipe = fc.TPipe(product=P350)
    src, dst = pipe.alloc("B1", "fp4x2_e2m1_t", 65536), pipe.alloc("B2", "fp4x2_e2m1_t", 65536)
    src.set_defined()
    p = fc.LoadData2DParamsV2(0, 0, 8, 16, 8, 64, True)
    for _ in range(3):
        fc.LoadData(dst, src, p)
        assert src.memory.lazy and dst.memory.lazy
        assert dst.memory.known_defined(dst.offset, dst.offset + 65536)
