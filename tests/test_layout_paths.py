"""The dedicated layout kernels (transposes, dense copies, long rows) through the public API, bit for bit against the reference oracles
(fastcopy/reference/nz.py, and the FRACTAL_NZ definition for to_nz / from_nz): data and definedness, every
element width, aligned and unaligned heads, odd sizes, threads on and off, non-temporal stores on and off.

The tunables that decide when the kernels engage (``config.LAYOUT_BYTES``, ``NT_BYTES``, ``PARALLEL_BYTES``,
``THREADS``) are lowered here so that small inputs take every path; plan caches are cleared around each case.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_nz import _bytes_state, _local, _quiet, _random_bytes, check_nd2nz, nd2nz_case
from test_pad_props import POISON as PAD_POISON
from test_pad_props import product_dtype, run_in, run_out
from test_slice_props import _build, _check, _oracle, slice_case

import fastcopy.reference.nz as ref
from fastcopy import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams, GlobalTensor,
                      Nz2NdParamsFull, PaddingMode, TPipe, TPosition, config, formats, from_nz,
                      nd2nz_params, nz2nd_params, to_nz)
from fastcopy.ops.datacopy import plan_data_copy
from fastcopy.products import Phys

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POISON = 0xFF
DST_POS = {Phys.L1: TPosition.A1, Phys.UB: TPosition.VECIN}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _clear_plan_caches() -> None:
    for name, mod in list(sys.modules.items()):
        if name.startswith("fastcopy"):
            for obj in list(vars(mod).values()):
                if callable(getattr(obj, "cache_clear", None)):
                    obj.cache_clear()


@contextlib.contextmanager
def layout_config(threads: int, nt: bool):
    """Every transpose-shaped step takes the layout kernel, split into many chunks when ``threads`` > 1."""
    saved = {k: getattr(config, k) for k in ("LAYOUT_BYTES", "NT_BYTES", "DENSE_NT_BYTES", "PARALLEL_BYTES", "THREADS",
                                             "ROWS_BURST", "ROWS_CACHED_BURST")}
    config.LAYOUT_BYTES, config.PARALLEL_BYTES, config.THREADS, config.ROWS_BURST = 0, 1, threads, 16
    config.ROWS_CACHED_BURST = 16  # (rows with regular stores: the mode without non-temporal stores)
    config.NT_BYTES = config.DENSE_NT_BYTES = 0 if nt else 1 << 62
    _clear_plan_caches()
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(config, k, v)
        _clear_plan_caches()


MODES = st.sampled_from([(1, False), (2, False), (1, True), (2, True)])


def _aligned_array(nbytes: int, shift: int) -> np.ndarray:
    """Bytes starting ``shift`` bytes after a 64-byte boundary (0: non-temporal stores can engage)."""
    buf = np.zeros(nbytes + 128, np.uint8)
    o = (-buf.ctypes.data) % 64 + shift
    return buf[o:o + nbytes]


# ------------------------------------------------------------------------------------------------ to_nz
def _nz_oracle(a, c0):
    """FRACTAL_NZ by its definition: nz[..., c // C0, r // 16, r % 16, c % C0] = a[..., r, c], pads 0."""
    *batch, rows, cols = a.shape
    n1, d1 = -(-rows // 16), -(-cols // c0)
    padded = np.zeros((*batch, n1 * 16, d1 * c0), a.dtype)
    padded[..., :rows, :cols] = a
    nz = np.moveaxis(padded.reshape(*batch, n1 * 16, d1, c0), -2, -3)
    return np.ascontiguousarray(nz).reshape(*batch, d1, n1, 16, c0)


@SETTINGS
@given(es=st.sampled_from([1, 2, 4, 8]), batch=st.integers(1, 3), rows=st.integers(1, 40),
       cols=st.integers(1, 80), c0=st.sampled_from([None, 16, 8, 4]), shift=st.sampled_from([0, 16, 32, 48, 8, 1]),
       mode=MODES, seed=st.integers(0, 2**32 - 1))
def test_to_nz_and_from_nz_match_the_definition(es, batch, rows, cols, c0, shift, mode, seed):
    rng = np.random.default_rng(seed)
    dt = UINT[es]
    a = _aligned_array(batch * rows * cols * es + 8, shift)[:batch * rows * cols * es].view(dt)
    a[:] = rng.integers(0, np.iinfo(dt).max, a.size, dtype=dt, endpoint=True)
    a = a.reshape(batch, rows, cols)
    k = c0 or 32 // es
    with layout_config(*mode):
        nz = to_nz(a, c0=c0)
        assert np.array_equal(nz, _nz_oracle(a, k))
        out = _aligned_array(nz.nbytes, shift).view(dt).reshape(nz.shape)
        to_nz(a, c0=c0, out=out)
        assert np.array_equal(out, nz)
        back = _aligned_array(a.nbytes, shift).view(dt).reshape(a.shape)
        from_nz(nz, a.shape, c0=c0, out=back)
        assert np.array_equal(back, a)


def test_the_layout_kernels_are_chosen_for_layout_plans():
    """to_nz / from_nz of a large matrix lower to the transpose kernel (in several pieces for the threads), a
    large dense DataCopy to the dense kernel; small calls keep the generic kernel."""
    a = np.zeros((512, 512), np.float16)
    with layout_config(2, True):
        config.LAYOUT_BYTES, config.NT_BYTES, config.DENSE_NT_BYTES = 64 << 10, 256 << 10, 256 << 10
        kinds = [k.kind for k in formats.to_nz_call(a)[1].ksteps]
        assert kinds == ["transpose"] and len(formats.to_nz_call(a)[1].ksteps[0].metas) > 1
        assert [k.kind for k in formats.from_nz_call(to_nz(a), a.shape)[1].ksteps] == ["transpose"]
        assert "transpose" not in [k.kind for k in formats.to_nz_call(a[:16, :16])[1].ksteps]
        pipe = TPipe("ATLAS_A2", capacities={"UB": 2 * a.nbytes})
        ub = pipe.alloc(TPosition.VECIN, "half", a.size)
        src = np.arange(a.size, dtype=np.uint16).view(np.float16)
        plan = plan_data_copy(ub, GlobalTensor(src), DataCopyParams(4, a.nbytes // 4 // 32))
        assert [k.kind for k in plan.ksteps] == ["dense"]
        DataCopy(ub, GlobalTensor(src), DataCopyParams(4, a.nbytes // 4 // 32))  # plane: streaming fill
        assert np.array_equal(ub.numpy().view(np.uint16), src.view(np.uint16)) and ub.defined().all()
        assert not pipe.buffer(ub.memory.phys).plane[a.nbytes:].any()  # and nothing past the span


# ----------------------------------------------------------------------------------------------- ND2NZ
def _against_oracle(oracle, dst, src, params, es):
    """``DataCopy(dst, src, params)`` on Atlas A2 against the reference oracle, data and definedness."""
    want, want_def = _bytes_state(dst)
    s_data, s_def = _bytes_state(src)
    oracle(want, want_def, s_data, s_def, es=es, product="A2", poison=POISON, **params.as_dict())
    _quiet(DataCopy, dst, src, params)
    got, got_def = _bytes_state(dst)
    assert np.array_equal(got_def, want_def)
    assert np.array_equal(got, want)


@SETTINGS
@given(case=nd2nz_case(), extra=st.integers(0, 64), seed=st.integers(0, 2**32 - 1), mode=MODES)
def test_nd2nz_on_the_layout_kernel_matches_reference(case, extra, seed, mode):
    with layout_config(*mode):
        check_nd2nz(case, extra, seed)


@pytest.mark.parametrize("mode", [(1, False), (2, True)])
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32])
@pytest.mark.parametrize("rows, cols, head", [(48, 96, 0), (37, 83, 3), (16, 32, 1)])
def test_nd2nz_gm_to_a1_definedness_plane(mode, dtype, rows, cols, head):
    """GM -> A1 into fresh (undefined) L1: the written bytes become defined, the rest stays undefined; the
    source starts ``head`` elements into its array (unaligned)."""
    rng = np.random.default_rng(rows * cols)
    es = np.dtype(dtype).itemsize
    arr = _random_bytes(rng, (rows * cols + head) * es).view(dtype)
    p = nd2nz_params(rows, cols, dtype)
    with layout_config(*mode):
        pipe = TPipe("ATLAS_A2")
        n16, c0 = -(-rows // 16) * 16, 32 // es
        dst = pipe.alloc(TPosition.A1, dtype, n16 * -(-cols // c0) * c0 + 64)
        _against_oracle(ref.nd2nz, dst, GlobalTensor(arr)[head], p, es)


# ----------------------------------------------------------------------------------------------- NZ2ND
def nz2nd_case_params(nd: int, n: int, nf: int, gap: int) -> tuple:
    """``(params, fractals per matrix, d)`` of ``nd`` NZ matrices of ``n`` rows x ``nf`` 16-wide fractal columns
    (one spare fractal between matrices) out to rows ``gap`` elements wider than the data (5 more per matrix)."""
    d = 16 * nf
    n16 = -(-n // 16) * 16
    frac = n16 * d // 256 + 1
    return (Nz2NdParamsFull(ndNum=nd, nValue=n, dValue=d, srcNdMatrixStride=frac, srcNStride=n16,
                            dstDStride=d + gap, dstNdMatrixStride=n * (d + gap) + 5), frac, d)


@SETTINGS
@given(es=st.sampled_from([2, 4]), nd=st.integers(1, 2), n=st.integers(1, 40), nf=st.integers(1, 5),
       head=st.integers(0, 40), gap=st.integers(0, 24), defined=st.sampled_from([1.0, 0.8]),
       seed=st.integers(0, 2**32 - 1), mode=MODES)
def test_nz2nd_on_the_layout_kernel_matches_reference(es, nd, n, nf, head, gap, defined, seed, mode):
    """VECOUT -> GM, source partly undefined (its plane travels through the same kernel), destination rows
    ``gap`` elements wider than the data and ``head`` elements into the GM array."""
    dtype = np.dtype({2: np.float16, 4: np.float32}[es])  # NZ2ND moves 2- and 4-byte types
    rng = np.random.default_rng(seed)
    p, frac, d = nz2nd_case_params(nd, n, nf, gap)
    with layout_config(*mode):
        pipe = TPipe("ATLAS_A2")
        src = _local(pipe, TPosition.VECOUT, dtype, nd * frac * 256 * es, rng, defined)
        out = _random_bytes(rng, (head + nd * (n * (d + gap) + 5)) * es).view(dtype)
        dst = GlobalTensor(out)[head] if head else GlobalTensor(out)
        _against_oracle(ref.nz2nd, dst, src, p, es)


def test_nz2nd_params_round_trip_large():
    """A 1024 x 2048 float matrix (8 MiB) out of VECOUT with the configured thresholds (threads and
    non-temporal stores on by default), against from_nz's definition."""
    a = np.random.default_rng(3).random((1024, 2048), dtype=np.float32)
    pipe = TPipe("ATLAS_A2", capacities={"UB": a.nbytes})
    ub = pipe.alloc(TPosition.VECOUT, "float", a.size)
    ub.numpy()[:] = to_nz(a, c0=16).reshape(-1)
    ub.set_defined()
    out = np.zeros_like(a)
    DataCopy(GlobalTensor(out), ub, nz2nd_params(1024, 2048, "float"))
    assert np.array_equal(out.view(np.uint32), a.view(np.uint32))


def _into_guarded(nbytes: int, shift: int, dt, shape, guard: int = 64):
    """``(buffer, out)``: ``out`` (``shape``, ``dt``) starts ``shift`` bytes after a line, between ``guard``
    bytes of 0xA5 on each side in ``buffer``."""
    buf = _aligned_array(nbytes + 2 * guard, (shift - guard) % 64)
    buf[:] = 0xA5
    return buf, buf[guard:guard + nbytes].view(dt).reshape(shape)


def _guards_kept(buf, nbytes: int, guard: int = 64) -> bool:
    return bool((buf[:guard] == 0xA5).all() and (buf[guard + nbytes:] == 0xA5).all())


@pytest.mark.parametrize("threads, nt", [(1, True), (2, True), (2, False)])
@pytest.mark.parametrize("es, shift", [(2, 16), (4, 0), (1, 48), (8, 32), (2, 8)])
def test_layout_tiles_of_the_configured_length(threads, nt, es, shift):
    """Transposes longer than ``config.LAYOUT_TILE_A_NT`` (and ``LAYOUT_TILE_A``) along the source-contiguous
    loop, and not a multiple of either (whole tiles, then a partial one, in the threads' pieces), with the
    configured tiles, streaming stores (``nt``) or regular ones, bit for bit: from_nz and NZ2ND (rows along that
    loop), to_nz (block columns along it, a partial last block), each into a destination at a line phase of
    ``shift`` bytes (8: regular stores) between guard bytes that stay as they were."""
    dt = UINT[es]
    c0 = 32 // es
    rng = np.random.default_rng(es * 7 + shift)
    tile = max(config.LAYOUT_TILE_A_NT, config.LAYOUT_TILE_A)
    tall = rng.integers(0, np.iinfo(dt).max, (2 * tile + 83, 3 * c0), dtype=dt, endpoint=True)
    wide = rng.integers(0, np.iinfo(dt).max, (21, (2 * tile + 5) * c0 + 3), dtype=dt, endpoint=True)
    with layout_config(threads, nt):
        config.LAYOUT_BYTES = 64 << 10
        nz = to_nz(tall)
        assert np.array_equal(nz, _nz_oracle(tall, c0))
        buf, out = _into_guarded(tall.nbytes, shift, dt, tall.shape)
        from_nz(nz, tall.shape, out=out)
        assert np.array_equal(out, tall) and _guards_kept(buf, tall.nbytes)
        want = _nz_oracle(wide, c0)
        buf, out = _into_guarded(want.nbytes, shift, dt, want.shape)
        to_nz(wide, out=out)
        assert np.array_equal(out, want) and _guards_kept(buf, want.nbytes)
        if es in (2, 4):  # NZ2ND (16-element fractal columns) out of VECOUT
            name = {2: "uint16", 4: "uint32"}[es]
            x = np.ascontiguousarray(tall[:, :16])
            src = to_nz(x, c0=16).reshape(-1)
            pipe = TPipe("ATLAS_A2", capacities={"UB": src.nbytes})
            ub = pipe.alloc(TPosition.VECOUT, name, src.size)
            ub.numpy().view(dt)[:] = src
            ub.set_defined()
            buf, out = _into_guarded(x.nbytes, shift, dt, x.shape)
            DataCopy(GlobalTensor(out), ub, nz2nd_params(x.shape[0], 16, name))
            assert np.array_equal(out, x) and _guards_kept(buf, x.nbytes)


# ------------------------------------------------------------------------------- long rows: pads and slices
@pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
@pytest.mark.parametrize("to_gm", [False, True], ids=["gm_to_ub", "ub_to_gm"])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), mode=MODES)
def test_pads_on_the_row_kernel_match_reference(to_gm, data, seed, mode):
    """DataCopyPad both ways (rows plus their pad fills) with every burst of 16 bytes or more on copy_rows."""
    with layout_config(*mode):
        product, dtype = data.draw(product_dtype((Phys.UB, Phys.GM) if to_gm else (Phys.GM, Phys.UB)))
        pipe = TPipe(product=product, poison=PAD_POISON)
        rng = np.random.default_rng(seed)
        if to_gm:
            run_out(pipe, rng, data.draw, dtype, PaddingMode.Normal, None)
        else:
            run_in(pipe, rng, data.draw, dtype, Phys.UB, PaddingMode.Normal, None, None)


@pytest.mark.filterwarnings("ignore:.*miscomputed by the device")
@SETTINGS
@given(slice_case(), MODES)
def test_slices_on_the_layout_kernels_match_reference(case, mode):
    product, dtype, to_gm, dims, src_info, dst_info, seed = case
    with layout_config(*mode):
        pipe, dst, src = _build(product, dtype, to_gm, src_info, dst_info, seed)
        want, want_def = _oracle(dst, src, dst_info, src_info, dims, dtype.itemsize)
        DataCopy(dst, src, dst_info, src_info, dims)
        _check(dst, want, want_def)


def test_large_padded_rows_stream(monkeypatch):
    """A 2 x 8 MiB-ish padded copy at the configured thresholds takes the row kernel and is exact."""
    rows, cols = 256, 8191  # 32764-byte rows padded to 32768 in UB: 8 MiB
    src = np.random.default_rng(5).random((rows, cols), dtype=np.float32)
    pipe = TPipe("ATLAS_A2", capacities={"UB": rows * 8192 * 4})
    ub = pipe.alloc(TPosition.VECIN, "float", rows * 8192)
    cp = DataCopyExtParams(rows, cols * 4, 0, 0, 0)
    DataCopyPad(ub, GlobalTensor(src), cp, DataCopyPadExtParams(False, 0, 0, 0))
    got = ub.numpy().reshape(rows, 8192)
    assert np.array_equal(got[:, :cols], src)
    out = np.zeros_like(src)
    DataCopyPad(GlobalTensor(out), ub, cp)
    assert np.array_equal(out, src)
