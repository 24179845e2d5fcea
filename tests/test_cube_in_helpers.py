"""Whole-array helpers (to_zz / to_zn / to_fractal and inverses, img2col) against the readable references."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy.errors import ParamError
from fastcopy.reference import img2col as iref

DTYPES = [np.uint8, np.int8, np.float16, np.dtype(ml_dtypes.bfloat16), np.int32, np.float32]
LAYOUTS = ["Zz", "Zn", "Nz", "Nn"]


def page_recipe(a, layout, c0=None):
    """The fractal page's pad -> reshape -> transpose recipe of each layout (``c0``: values per 32 bytes)."""
    c0 = c0 or 32 // a.dtype.itemsize
    r0, cc = (16, c0) if layout[1] == "z" else (c0, 16)
    rows, cols = a.shape[-2:]
    p = np.zeros(a.shape[:-2] + (-(-rows // r0) * r0, -(-cols // cc) * cc), a.dtype)
    p[..., :rows, :cols] = a
    b = p.reshape(p.shape[:-2] + (p.shape[-2] // r0, r0, p.shape[-1] // cc, cc))
    n = b.ndim
    perm = {"Zz": (n - 4, n - 2, n - 3, n - 1), "Zn": (n - 4, n - 2, n - 1, n - 3),
            "Nz": (n - 2, n - 4, n - 3, n - 1), "Nn": (n - 2, n - 4, n - 1, n - 3)}[layout]
    return np.ascontiguousarray(b.transpose(tuple(range(n - 4)) + perm))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(LAYOUTS), st.integers(0, 2), st.integers(1, 40), st.integers(1, 70))
def test_to_from_fractal_match_page_recipes(dt, layout, batch, rows, cols):
    shape = ((batch,) if batch else ()) + (rows, cols)
    a = np.random.default_rng(rows * cols).integers(0, 100, shape).astype(dt)
    img = fc.to_fractal(a, layout)
    assert np.array_equal(img.view(np.uint8), page_recipe(a, layout).view(np.uint8))
    back = fc.from_fractal(img, shape, layout)
    assert np.array_equal(back.view(np.uint8), a.view(np.uint8))


def test_named_helpers_and_out():
    a = np.arange(40 * 56, dtype=np.float16).reshape(40, 56)
    out = np.empty(fc.fractal_shape(a.shape, a.dtype, "Zz"), a.dtype)
    assert fc.to_zz(a, out=out) is out and out.shape == (3, 4, 16, 16)
    assert np.array_equal(fc.from_zz(out, a.shape), a)
    b = np.arange(48 * 20, dtype=np.int8).reshape(48, 20)
    zn = fc.to_zn(b)
    assert zn.shape == (2, 2, 16, 32)
    assert np.array_equal(zn.reshape(-1), fc.to_nz(b.T).reshape(-1))  # Zn(B) == Nz(B^T)
    assert np.array_equal(fc.from_zn(zn, b.shape), b)
    with pytest.raises(ParamError, match="out= must be"):
        fc.to_zz(a, out=np.empty((1,), a.dtype))
    with pytest.raises(ParamError, match="has no fractal layout"):
        fc.to_zz(np.zeros((2, 2), np.float64))
    with pytest.raises(ParamError, match="Zn image of a"):
        fc.from_zn(zn[:1], b.shape)


def reference_img2col(fmap, kh, kw, sh, sw, dh, dw, pads, pad_value):
    C, H, W = fmap.shape
    es = fmap.dtype.itemsize
    c0 = 32 // es
    C1 = -(-C // c0)
    nc1hwc0 = np.zeros((C1, H, W, c0), fmap.dtype)
    for c in range(C):
        nc1hwc0[c // c0, :, :, c % c0] = fmap[c]
    flat = nc1hwc0.reshape(-1)
    Ho = (H + pads[2] + pads[3] - ((kh - 1) * dh + 1)) // sh + 1
    Wo = (W + pads[0] + pads[1] - ((kw - 1) * dw + 1)) // sw + 1
    X = np.empty((Ho * Wo, C1 * kh * kw * c0), fmap.dtype)
    for m in range(X.shape[0]):
        for k in range(X.shape[1]):
            e = iref.x_element(m, k, H=H, W=W, pads=pads, C0=c0, Kh=kh, Kw=kw, sh=sh, sw=sw, dh=dh, dw=dw)
            X[m, k] = pad_value if e is None else flat[e]
    return X


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([np.float16, np.float32, np.int8]), st.integers(1, 20), st.integers(1, 6), st.integers(1, 6),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2),
       st.tuples(*[st.integers(0, 2)] * 4), st.sampled_from([None, "Zz", "Nz", "Zn"]))
def test_img2col_matches_reference(dt, C, H, W, kh, kw, s, d, pads, layout):
    fmap = (np.arange(C * H * W) % 100).reshape(C, H, W).astype(dt)
    if (H + pads[2] + pads[3] - ((kh - 1) * d + 1)) < 0 or (W + pads[0] + pads[1] - ((kw - 1) * d + 1)) < 0:
        d = kh = kw = 1
    X = reference_img2col(fmap, kh, kw, s, s, d, d, pads, -1)
    got = fc.img2col(fmap, (kh, kw), stride=s, dilation=d, pad=pads, pad_value=-1, layout=layout)
    want = X if layout is None else fc.to_fractal(X, layout)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_img2col_errors_and_out():
    fmap = np.ones((4, 5, 5), np.float16)
    out = np.empty((25, 9 * 16), np.float16)
    assert fc.img2col(fmap, 3, pad=1, out=out) is out
    with pytest.raises(ParamError, match=r"\(C, H, W\)"):
        fc.img2col(fmap[0], 3)
    with pytest.raises(ParamError, match="does not fit"):
        fc.img2col(fmap, 7)
