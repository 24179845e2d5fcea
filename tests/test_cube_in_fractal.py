"""fractal.py: the layout formulas against the page's pad/reshape/transpose recipes and each other."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastcopy import to_nz
from fastcopy.cube import fractal as fr
from fastcopy.errors import ParamError
from fastcopy.products import Phys, Product

BITS = (4, 8, 16, 32)


def _pad(a, r0, c0):
    rows, cols = a.shape
    out = np.zeros((-(-rows // r0) * r0, -(-cols // c0) * c0), a.dtype)
    out[:rows, :cols] = a
    return out


def _page_recipe(layout, a, dims):
    """The fractal page's recipes: pad -> reshape -> transpose."""
    r0, c0 = dims
    p = _pad(a, r0, c0)
    m1, k1 = p.shape[0] // r0, p.shape[1] // c0
    blocks = p.reshape(m1, r0, k1, c0)
    return {"Zz": blocks.transpose(0, 2, 1, 3),  # (M1, K1, M0, K0)
            "Zn": blocks.transpose(0, 2, 3, 1),  # (K1, N1, N0, K0)
            "Nz": blocks.transpose(2, 0, 1, 3),  # (K1, M1, M0, K0)
            "Nn": blocks.transpose(2, 0, 3, 1)}[layout].reshape(-1)


@given(st.sampled_from(fr.LAYOUTS), st.sampled_from(BITS), st.integers(1, 70), st.integers(1, 140))
def test_offsets_match_page_recipes(layout, bits, rows, cols):
    dims = fr.fractal_dims(layout, bits)
    a = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols) + 1
    img = np.zeros(fr.image_fractals(layout, rows, cols, dims) * dims[0] * dims[1], np.int64)
    img[fr.offsets(layout, rows, cols, dims)] = a
    assert np.array_equal(img, _page_recipe(layout, a, dims))
    assert int(np.prod(fr.image_shape(layout, rows, cols, dims))) == img.size


@given(st.sampled_from(fr.LAYOUTS), st.sampled_from(BITS), st.integers(1, 50), st.integers(1, 100), st.integers(0, 3))
def test_offsets_injective_with_pitch(layout, bits, rows, cols, extra):
    dims = fr.fractal_dims(layout, bits)
    pitch = fr.min_pitch(layout, rows, cols, dims) + extra
    off = fr.offsets(layout, rows, cols, dims, pitch)
    assert np.unique(off).size == off.size
    assert off.max() < fr.image_fractals(layout, rows, cols, dims, pitch) * dims[0] * dims[1]


@pytest.mark.parametrize("es", [1, 2, 4])
def test_spec_byte_formulas(es):
    """Byte formulas NZ / ZZ / ZN of the cube-in layouts, element form times the element size."""
    c0 = 32 // es
    rows, cols, p, q = 37, 3 * c0 + 5, 4, 8
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    nz = ((c // c0) * p + r // 16) * 512 + (r % 16) * 32 + (c % c0) * es
    zz = ((r // 16) * q + c // c0) * 512 + (r % 16) * 32 + (c % c0) * es
    zn = ((r // c0) * q + c // 16) * 512 + (c % 16) * 32 + (r % c0) * es  # B[k][n], k = r, n = c
    bits = 8 * es
    assert np.array_equal(fr.offsets("NZ", rows, cols, fr.fractal_dims("Nz", bits), p) * es, nz)
    assert np.array_equal(fr.offsets("ZZ", rows, cols, fr.fractal_dims("Zz", bits), q) * es, zz)
    assert np.array_equal(fr.offsets("zN", rows, cols, fr.fractal_dims("Zn", bits), q) * es, zn)


@given(st.sampled_from(BITS), st.integers(1, 70), st.integers(1, 70), st.integers(0, 2))
def test_zn_of_b_is_nz_of_bt(bits, k, n, extra):
    dims = fr.fractal_dims("Zn", bits)
    q = fr.min_pitch("Zn", k, n, dims) + extra
    zn = fr.offsets("Zn", k, n, dims, q)
    nz = fr.offsets(fr.transposed("Zn"), n, k, dims[::-1], q)
    assert np.array_equal(zn, nz.T)
    assert fr.transposed("Zz") == "Nn"


def test_nz_matches_to_nz():
    a = np.arange(37 * 45, dtype=np.float16).reshape(37, 45)
    dims = fr.fractal_dims("Nz", 16)
    img = np.zeros(fr.image_shape("Nz", 37, 45, dims), np.float16).reshape(-1)
    img[fr.offsets("Nz", 37, 45, dims)] = a
    assert np.array_equal(img.reshape(fr.image_shape("Nz", 37, 45, dims)).view(np.uint16),
                          to_nz(a).view(np.uint16))


def test_shapes_table():
    assert [fr.fractal_dims("Zz", b) for b in BITS] == [(16, 64), (16, 32), (16, 16), (16, 8)]
    assert [fr.fractal_dims("Zn", b) for b in BITS] == [(64, 16), (32, 16), (16, 16), (8, 16)]
    assert fr.buffer_layout(Product.ATLAS_A2, Phys.L0A) == "Zz"
    assert fr.buffer_layout(Product.ATLAS_350, Phys.L0A) == "Nz"
    assert fr.buffer_layout(Product.ATLAS_350, Phys.L0B) == "Zn"
    assert fr.image_fractals("Zz", 0, 5, (16, 16)) == 0


@pytest.mark.parametrize("bad", ["ZX", "Z", 3, "zzz"])
def test_bad_layout(bad):
    with pytest.raises(ParamError, match="not a fractal layout"):
        fr.layout_name(bad)


def test_bad_pitch_and_bits():
    with pytest.raises(ParamError, match="pitch=1 fractals is below the 2"):
        fr.offsets("Zz", 16, 32, (16, 16), 1)
    with pytest.raises(ParamError, match="12 bits"):
        fr.c0_of(12)
    with pytest.raises(ParamError, match="not a cube input buffer"):
        fr.buffer_layout(Product.ATLAS_A2, Phys.UB)
