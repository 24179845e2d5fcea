"""Packed 4-bit types (int4b_t, fp4x2_e2m1_t, fp4x2_e1m2_t): pack4 / unpack4, the fractal helpers, and the moves
that split bytes (transposing loads), checked against numpy's own layouts and the byte/definedness rules."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from dc_util import tensor_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy.errors import OutOfBoundsError, ParamError
from test_cube_in_helpers import page_recipe

B4 = ["int4b_t", "fp4x2_e2m1_t", "fp4x2_e1m2_t"]
LAYOUTS = ["Zz", "Zn", "Nz", "Nn"]


def values(codes, dtype):
    """4-bit values of ``dtype`` from codes 0..15 (what to_fractal takes: ml_dtypes values, codes for e1m2)."""
    codes = np.asarray(codes, np.uint8)
    if dtype == "int4b_t":
        return np.where(codes >= 8, codes.astype(np.int8) - 16, codes.astype(np.int8)).astype(ml_dtypes.int4)
    return codes.view(ml_dtypes.float4_e2m1fn) if dtype == "fp4x2_e2m1_t" else codes


# ---------------------------------------------------------------------------------------------- pack / unpack
def test_pack4_low_nibble_first():
    assert fc.pack4(np.array([6, 7], ml_dtypes.int4)).tolist() == [0x76]  # the LoadDataWithTranspose page's example
    assert fc.pack4(np.array([-1, -8, 7, 0], np.int8), "int4b_t").tolist() == [0x8F, 0x07]
    f = np.array([0.5, -6.0, 1.5, 0.0], ml_dtypes.float4_e2m1fn)
    assert fc.pack4(f).tolist() == [0xF1, 0x03]
    assert np.array_equal(fc.unpack4(fc.pack4(f), "fp4x2_e2m1_t").astype(np.float32), f.astype(np.float32))
    codes = np.arange(16, dtype=np.uint8).reshape(2, 8)
    packed = fc.pack4(codes, "fp4x2_e1m2_t")
    assert packed.shape == (2, 4) and packed[0, 0] == 0x10
    assert np.array_equal(fc.unpack4(packed, "fp4x2_e1m2_t"), codes)
    ints = np.arange(-8, 8)
    assert np.array_equal(fc.unpack4(fc.pack4(ints, "int4b_t"), "int4b_t").astype(int), ints)


def test_pack4_errors():
    with pytest.raises(ParamError, match="even number of values"):
        fc.pack4(np.zeros(3, ml_dtypes.int4))
    with pytest.raises(ParamError, match="codes"):
        fc.pack4(np.array([16, 0]), "fp4x2_e1m2_t")
    with pytest.raises(ParamError, match="not a packed 4-bit type"):
        fc.pack4(np.zeros(2, np.int8))
    with pytest.raises(ParamError, match="not a packed 4-bit type"):
        fc.unpack4(np.zeros(2, np.uint8), "half")


# ---------------------------------------------------------------------------------------------- helpers
def b4_recipe(codes, layout):
    """The page recipe with 64-value fractal rows (16 x 64; Zn 64 x 16), then two values per byte."""
    return fc.pack4(page_recipe(codes, layout, c0=64), "fp4x2_e1m2_t")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(B4), st.sampled_from(LAYOUTS), st.integers(0, 2), st.integers(1, 70), st.integers(1, 140))
def test_b4_fractal_helpers_match_the_packed_recipe(dtype, layout, batch, rows, cols):
    shape = ((batch,) if batch else ()) + (rows, cols)
    codes = np.random.default_rng(rows * cols + batch).integers(0, 16, shape).astype(np.uint8)
    a = values(codes, dtype)
    img = fc.to_fractal(a, layout, dtype=dtype if dtype == "fp4x2_e1m2_t" else None)
    want = b4_recipe(codes, layout)
    assert img.dtype == np.uint8 and img.shape == want.shape == fc.fractal_shape(shape, dtype, layout)
    assert np.array_equal(img, want)
    back = fc.from_fractal(img, shape, layout, dtype=dtype)
    assert np.array_equal(back.view(np.uint8) & 0xF, codes)


def test_b4_named_helpers_out_and_errors():
    codes = np.random.default_rng(1).integers(0, 16, (40, 130)).astype(np.uint8)
    a = values(codes, "int4b_t")
    out = np.empty(fc.fractal_shape(a.shape, "int4b_t", "Zz"), np.uint8)
    assert out.shape == (3, 3, 16, 32) and fc.to_zz(a, out=out) is out
    assert np.array_equal(fc.from_zz(out, a.shape, dtype="int4b_t").astype(int), a.astype(int))
    zn = fc.to_zn(a)
    assert zn.shape == (1, 9, 16, 32)  # B[K][N] = a (40 x 130): K1 = ceil(40/64), N1 = ceil(130/16)
    assert np.array_equal(zn.reshape(-1), fc.to_fractal(a.T, "Nz").reshape(-1))  # Zn(B) == Nz(B^T)
    res = np.empty(a.shape, ml_dtypes.int4)
    assert fc.from_zn(zn, a.shape, out=res, dtype="int4b_t") is res
    with pytest.raises(ParamError, match="Zz image of a"):
        fc.from_zz(out[:1], a.shape, dtype="int4b_t")
    with pytest.raises(ParamError, match="out= must be"):
        fc.to_zz(a, out=np.empty(out.shape, ml_dtypes.int4))


# ---------------------------------------------------------------------------------------------- moves
def b4_tensor(pipe, pos, dtype, nbytes, codes=None, defined=None):
    t = pipe.alloc(pos, dtype, nbytes)
    raw = t.numpy().view(np.uint8)
    raw[:] = 0 if codes is None else fc.pack4(codes, "fp4x2_e1m2_t").reshape(-1)[:nbytes]
    t.set_defined(defined)
    return t


def test_ldwt_int4_turns_nz_into_zn():
    """A 64 x 64 square of an Nz matrix in L1, transposed into L0B, is the Zn image the cube reads."""
    codes = np.random.default_rng(3).integers(0, 16, (64, 128)).astype(np.uint8)
    x = values(codes, "int4b_t")
    pipe = fc.TPipe(product="ATLAS_A2")
    src = b4_tensor(pipe, "B1", "int4b_t", 4096)
    src.numpy().view(np.uint8)[:] = fc.to_fractal(x, "Nz").reshape(-1)
    dst = b4_tensor(pipe, "B2", "int4b_t", 4096)
    fc.LoadDataWithTranspose(dst, src, fc.LoadData2dTransposeParams(0, 2, 1, 3, 0))
    assert np.array_equal(dst.numpy().view(np.uint8), fc.to_zn(x).reshape(-1))


def test_load2dv2_fp4_transpose_is_nz_of_the_transposed_region():
    codes = np.random.default_rng(4).integers(0, 16, (128, 128)).astype(np.uint8)
    y = values(codes, "fp4x2_e2m1_t")
    pipe = fc.TPipe(product="ATLAS_350")
    src = b4_tensor(pipe, "A1", "fp4x2_e2m1_t", 8192)
    src.numpy().view(np.uint8)[:] = fc.to_fractal(y, "Nz").reshape(-1)  # 8 fractals per column, 2 columns
    dst = b4_tensor(pipe, "A2", "fp4x2_e2m1_t", 8192)
    fc.LoadData(dst, src, fc.LoadData2DParamsV2(0, 0, 8, 2, 8, 8, True))  # Y^T: 128 x 128, 8 fractals a column
    assert np.array_equal(dst.numpy().view(np.uint8), fc.to_fractal(y.T, "Nz").reshape(-1))


def test_nibble_moves_keep_definedness_and_resolve_collisions():
    pipe = fc.TPipe(product="ATLAS_A2")
    codes = np.random.default_rng(5).integers(0, 16, 4096 * 2).astype(np.uint8)
    defined = np.ones(4096, bool)
    defined[7] = False  # source byte 7: nibbles 14, 15 of fractal 0 = Y[0][14], Y[0][15]
    src = b4_tensor(pipe, "B1", "int4b_t", 4096, codes, defined)
    dst = b4_tensor(pipe, "B2", "int4b_t", 4096)
    fc.LoadDataWithTranspose(dst, src, fc.LoadData2dTransposeParams(0, 1, 0, 3, 0))
    d = dst.defined()
    # G_0[r][c] = Y[c][r]: Y[0][14], Y[0][15] land in rows 14, 15 column 0 -> bytes 14*32 and 15*32
    assert not d[14 * 32] and not d[15 * 32] and d[:2048].sum() == 2046
    # two squares into overlapping fractals with different values: the bytes written twice differently are
    # undefined (poison), with a warning
    dst2 = b4_tensor(pipe, "B2", "int4b_t", 4096)
    with pytest.warns(fc.FastCopyWarning, match="overlap"):
        fc.LoadDataWithTranspose(dst2, src, fc.LoadData2dTransposeParams(0, 2, 1, 0, 0))
    got, ok = tensor_bytes(dst2)  # square 1's fractals 0..2 land on square 0's fractals 1..3
    assert (~ok[512:2048]).sum() > 1400 and (got[512:2048][~ok[512:2048]] == pipe.poison).all()


def test_nibble_moves_write_nothing_on_error():
    pipe = fc.TPipe(product="ATLAS_A2")
    src = b4_tensor(pipe, "B1", "int4b_t", 2048, np.arange(4096) % 16)
    dst = b4_tensor(pipe, "B2", "int4b_t", 2048)
    before = tensor_bytes(dst)
    with pytest.raises(OutOfBoundsError, match="read span"):
        fc.LoadDataWithTranspose(dst, src, fc.LoadData2dTransposeParams(0, 2, 1, 3, 0))  # 2 squares: 4096 bytes
    after = tensor_bytes(dst)
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_int4_load2d_moves_fractals_verbatim_and_img2col_counts_values():
    pipe = fc.TPipe(product="ATLAS_INFERENCE_AICORE")
    codes = np.random.default_rng(6).integers(0, 16, 4096).astype(np.uint8)
    src = b4_tensor(pipe, "A1", "int4b_t", 2048, codes)
    dst = b4_tensor(pipe, "A2", "int4b_t", 2048)
    fc.LoadData(dst, src, fc.LoadData2DParams(1, 2, 2))  # fractals 1, 3 -> 0, 1
    raw = src.numpy().view(np.uint8)
    assert np.array_equal(dst.numpy().view(np.uint8)[:1024], np.r_[raw[512:1024], raw[1536:2048]])
    # img2col: a 1 x 16 map of 64 int4 channels (32 bytes a pixel), 1x1 kernel: Zz of the map itself
    img = b4_tensor(pipe, "A2", "int4b_t", 512)
    fc.LoadData(img, src, fc.LoadData3DParamsV2((0, 0, 0, 0), 1, 16, 64, 64, 16, 0, 0))
    assert np.array_equal(img.numpy().view(np.uint8), raw[:512])


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3"])
def test_int4_matmul_operand_path_feeds_mmad(product):
    """L1 (Nz, packed) -> L0A by the sample's LoadData 2D loop and -> L0B by LoadDataWithTranspose, then Mmad:
    the 4-bit representation of the loads is the one Mmad reads."""
    from fastcopy.cube import l0c

    rng = np.random.default_rng(7)
    m, k, n = 32, 128, 64
    a, b = rng.integers(-8, 8, (m, k)), rng.integers(-8, 8, (k, n))
    pipe = fc.TPipe(product=product)
    a1 = b4_tensor(pipe, "A1", "int4b_t", m * k // 2)
    a1.numpy().view(np.uint8)[:] = fc.to_fractal(values(a & 0xF, "int4b_t"), "Nz").reshape(-1)
    b1 = b4_tensor(pipe, "B1", "int4b_t", k * n // 2)
    b1.numpy().view(np.uint8)[:] = fc.to_fractal(values(b & 0xF, "int4b_t"), "Nz").reshape(-1)
    a2 = b4_tensor(pipe, "A2", "int4b_t", m * k // 2)
    b2 = b4_tensor(pipe, "B2", "int4b_t", k * n // 2)
    k1, m1 = k // 64, m // 16
    for i in range(m1):  # one call per 16-row block: Nz -> Zz
        fc.LoadData(a2[i * k1 * 512], a1[i * 512], fc.LoadData2DParams(0, k1, m1, 0, 0))
    assert np.array_equal(a2.numpy().view(np.uint8), fc.to_zz(values(a & 0xF, "int4b_t")).reshape(-1))
    fc.LoadDataWithTranspose(b2, b1, fc.LoadData2dTransposeParams(0, k // 64, 1, 3, 0))
    assert np.array_equal(b2.numpy().view(np.uint8), fc.to_zn(values(b & 0xF, "int4b_t")).reshape(-1))
    c = pipe.alloc("CO1", "int32_t", m * n)
    fc.Mmad(c, a2, b2, fc.MmadParams(m, n, k))
    assert np.array_equal(l0c.from_l0c(c.numpy(), m, n), a @ b)
