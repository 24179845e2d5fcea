"""Conversions out of L0C: the fast element function against the readable oracle, exhaustively where the input
space allows (every half, every scale-word field) and on large samples of float32 patterns per mode."""

import ml_dtypes
import numpy as np
import pytest

from fastcopy.cube import quant
from fastcopy.cube.quant import MODES, QuantMode_t, convert, decode_word, make_word, round_hf32, scale_of
from fastcopy.reference import cube_quant as R

RNG = np.random.default_rng(15)
F32_MODES = sorted({m.value for (m, s) in MODES if s == np.float32})
I32_MODES = sorted({m.value for (m, s) in MODES if s == np.int32})


def _ref(xs, mode, q, relu, ctrl48, arch3510, ctrl50=False):
    return np.array([R.out(x, mode, q, relu, ctrl48, arch3510, ctrl50) for x in (xs.tolist() if xs.dtype == np.int32 else list(xs))], np.uint64)


def _fast(xs, mode, dst, q, relu, ctrl48, arch3510, ctrl50=False):
    y = convert(xs, mode, dst, q=q, relu=relu, ctrl48=ctrl48, arch3510=arch3510, ctrl50=ctrl50)
    return y.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[y.itemsize]).astype(np.uint64)


def _special_f32():
    bits = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F7FFFFF, 0x00000001, 0x807FFFFF,
            0x3F800000, 0xBF800000, 0x477FE000, 0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001, 0x43E00000,
            0x43E80000, 0x43F00000, 0xC3E80001]
    return np.array(bits, np.uint32).view(np.float32)


def _sample_f32(n):
    """Random float32 patterns, biased toward the ranges where rounding and overflow happen."""
    raw = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    exps = RNG.integers(100, 160, n).astype(np.uint32)  # |x| about 2^-27 .. 2^32
    mixed = (raw & np.uint32(0x807FFFFF)) | (exps << np.uint32(23))
    return np.concatenate([raw[: n // 4], mixed[n // 4:]]).view(np.float32)


def _dst(mode, src):
    return sorted(MODES[(QuantMode_t(mode), np.dtype(src))].dst, key=str)


WORDS = [make_word(0.3), make_word(1.5, offset=-3, sign=True), make_word(-2.75, offset=7),
         make_word(2.0**-10, offset=255, sign=True, shift=5, mcb=True), make_word(1.0, shift=16, mcb=True),
         0x00007FA03F000000, 0x3E99999A, 0xFFFFFFFFBF000000]


@pytest.mark.parametrize("mode", F32_MODES)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("ctrl48", [True, False])
def test_float_modes_match_reference(mode, relu, ctrl48):
    xs = np.concatenate([_special_f32(), _sample_f32(1500)])
    for arch3510 in (False, True):
        for dst in _dst(mode, np.float32):
            for q in WORDS[:4]:
                got = _fast(xs, mode, dst, q, relu, ctrl48, arch3510)
                want = _ref(xs, mode, q, relu, ctrl48, arch3510)
                assert np.array_equal(got, want), (mode, dst, hex(q), xs[got != want][:5])


@pytest.mark.parametrize("mode", I32_MODES)
@pytest.mark.parametrize("relu", [False, True])
def test_int_modes_match_reference(mode, relu):
    xs = np.concatenate([np.array([0, 1, -1, 2**31 - 1, -2**31, 2**24 + 1, -(2**24 + 3), 65535, -65536], np.int32),
                         RNG.integers(-2**31, 2**31, 2000, dtype=np.int64).astype(np.int32),
                         RNG.integers(-70000, 70000, 2000).astype(np.int32)])
    for ctrl48 in (True, False):
        for arch3510 in (False, True):
            for dst in _dst(mode, np.int32):
                for q in WORDS:
                    got = _fast(xs, mode, dst, q, relu, ctrl48, arch3510)
                    want = _ref(xs, mode, q, relu, ctrl48, arch3510)
                    assert np.array_equal(got, want), (mode, hex(q), xs[got != want][:5])


def test_f16_every_half_and_every_midpoint():
    """All 2^16 half values, the midpoints between neighbours (ties) and one float32 ulp either side."""
    h = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = h[np.isfinite(h)].astype(np.float64)
    hs = np.unique(h)
    mids = ((hs[1:] + hs[:-1]) / 2).astype(np.float32)
    below, above = np.nextafter(mids, np.float32(-np.inf)), np.nextafter(mids, np.float32(np.inf))
    xs = np.concatenate([h.astype(np.float32), mids, below, above, np.float32([65520.0, -65520.0, 65519.996])])
    for ctrl48 in (True, False):
        got = _fast(xs, "F322F16", np.float16, 0, False, ctrl48, False)
        want = _ref(xs, "F322F16", 0, False, ctrl48, False)
        assert np.array_equal(got, want)
    # and, independently, numpy's own correctly rounded float32 -> float16 cast (INF_NAN mode, non-NaN)
    with np.errstate(over="ignore"):
        assert np.array_equal(convert(xs, "F322F16", np.float16).view(np.uint16), xs.astype(np.float16).view(np.uint16))


def test_f16_bf16_f32_on_large_float32_samples_against_numpy_casts():
    xs = _sample_f32(1 << 20)
    xs = xs[~np.isnan(xs)]
    with np.errstate(over="ignore"):
        assert np.array_equal(convert(xs, "F322F16", np.float16).view(np.uint16), xs.astype(np.float16).view(np.uint16))
    # bfloat16 of a float32 value: RNE on the upper 16 bits of its pattern
    b = xs.view(np.uint32).astype(np.uint64)
    rne = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    assert np.array_equal(convert(xs, "F322BF16", ml_dtypes.bfloat16).view(np.uint16), rne)
    # QF322F32_PRE with scale 1.0 is the identity
    one = make_word(1.0)
    assert np.array_equal(convert(xs, "QF322F32_PRE", np.float32, q=one, arch3510=True).view(np.uint32),
                          xs.view(np.uint32))


def test_worked_bit_examples():
    x = np.float32([1 + 2**-11, 1 + 3 * 2**-11, 65519, 65520, 2**-25, 3 * 2**-26])
    assert convert(x, "F322F16", np.float16).view(np.uint16).tolist() == [0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0, 1]
    assert scale_of(0x3E99999A) == 0.2998046875
    y = convert(np.int32([3, 218555]), "DEQF16", np.float16, q=0x3E99999A).view(np.uint16)
    assert y.tolist() == [0x3B32, 0x7C00]
    q = make_word(0.5, offset=-3, sign=True)
    assert convert(np.int32([5, 7, -8, 509]), "REQ8", np.int8, q=q, relu=True).tolist() == [-1, 1, -3, 127]


def test_every_scale_word_field():
    for off in range(-256, 256):
        for sign in (False, True):
            q = make_word(1.0, offset=off, sign=sign)
            w = decode_word(q, False)
            assert int(w.off) == off and bool(w.sign) == sign and w.m1 == 1.0
            assert R.word(q, False)[3:] == (off, int(sign))
    for shift in range(1, 17):
        for mcb in (False, True):
            q = make_word(1.0, shift=shift, mcb=mcb)
            w, w350 = decode_word(q, False), decode_word(q, True)
            assert (int(w.shift), bool(w.mcb)) == (shift, mcb)
            assert (int(w350.shift), bool(w350.mcb)) == (1, False)  # ignored on Atlas 350
            x = np.clip(np.int64([-2**31, -70000 << shift, -5, 0, 5, 70000 << shift, 2**31 - 1]), -2**31, 2**31 - 1)
            x = x.astype(np.int32)
            got = convert(x, "DEQF16", np.float16, q=q).view(np.uint16).astype(np.uint64)
            assert np.array_equal(got, _ref(x, "DEQF16", q, False, True, False))
    # bits 12:0 of the scale are dropped (truncated, not rounded)
    for low in range(0, 1 << 13, 97):
        assert scale_of(0x3F800000 | low) == 1.0
    bits = np.arange(1 << 19, dtype=np.uint64) << np.uint64(13)  # every kept scale pattern, with junk below
    m1 = decode_word(bits | np.uint64(0x1ABC), False).m1.astype(np.float32)
    want = bits.astype(np.uint32).view(np.float32)
    ok = np.isnan(want)
    assert np.array_equal(np.isnan(m1), ok) and np.array_equal(m1[~ok].view(np.uint32), want[~ok].view(np.uint32))


def test_b8_offset_sign_and_nan():
    for off in (-256, -128, -3, 0, 7, 255):
        for sign in (0, 1):
            q = make_word(1.0, offset=off, sign=bool(sign))
            x = np.float32([np.nan, -np.inf, np.inf, -300, -2.5, -0.5, 0.5, 1.5, 2.5, 254.5, 300])
            for dst in (np.int8, np.uint8):
                got = convert(x, "QF322B8_PRE", dst, q=q).view(np.uint8).astype(np.uint64)
                assert np.array_equal(got, _ref(x, "QF322B8_PRE", q, False, True, False))


def test_e4m3_overflow_modes():
    q = make_word(1.0)
    x = np.float32([448, 464, 463.99, 480, -1e9, np.inf, np.nan, -np.nan, 2**-9, 2**-10, 3 * 2**-11])
    for ctrl48 in (True, False):
        for ctrl50 in (False, True):
            got = convert(x, "QF322FP8_PRE", ml_dtypes.float8_e4m3fn, q=q, ctrl48=ctrl48, arch3510=True,
                          ctrl50=ctrl50)
            want = _ref(x, "QF322FP8_PRE", q, False, ctrl48, True, ctrl50)
            assert np.array_equal(got.view(np.uint8).astype(np.uint64), want)
    sat = convert(np.float32([500, -500]), "QF322FP8_PRE", ml_dtypes.float8_e4m3fn, q=q, ctrl48=False, arch3510=True)
    assert sat.astype(np.float32).tolist() == [448, -448]


def test_nan_and_overflow_modes_for_float_outputs():
    x = np.float32([np.nan, -np.nan, np.inf, -np.inf, 1e6])
    inf_nan = convert(x, "F322F16", np.float16, ctrl48=True).view(np.uint16).tolist()
    assert inf_nan == [0x7E00, 0xFE00, 0x7C00, 0xFC00, 0x7C00]
    sat = convert(x, "F322F16", np.float16, ctrl48=False).view(np.uint16).tolist()
    assert sat == [0, 0, 0x7BFF, 0xFBFF, 0x7BFF]
    relu = convert(np.float32([-0.0, -1.0, np.nan]), "NoQuant", np.float32, relu=True).view(np.uint32).tolist()
    assert relu[:2] == [0, 0] and np.isnan(np.uint32(relu[2]).view(np.float32))


@pytest.mark.parametrize("h", [11, 10])
def test_hf32_rounding_every_low_pattern(h):
    """Every combination of the dropped bits (and the kept lsb) over several exponents, both modes."""
    d = 23 - h
    low = np.arange(1 << (d + 1), dtype=np.uint32)
    heads = np.array([0x3F800000, 0xBF800000, 0x00000000, 0x7F7FF000, 0x00400000, 0x4B7FE000], np.uint32)
    bits = (heads[:, None] | low[None, :]).reshape(-1)
    bits = np.concatenate([bits, np.uint32([0x7F800000, 0xFF800000, 0x7FC00001])])
    for ne in (True, False):
        got = round_hf32(bits, h, ne)
        want = np.array([R.hf32(int(b), h, ne) for b in bits], np.uint32)
        assert np.array_equal(got, want)
    assert round_hf32(np.uint32([0x3F800C00]), 11, True)[0] == 0x3F801000  # 1+2^-12+2^-13 -> 1+2^-11
    assert round_hf32(np.uint32([0x3F801000]), 10, True)[0] == 0x3F800000  # 1+2^-11 on 10 bits: tie -> even
    assert round_hf32(np.uint32([0x3F801000]), 10, False)[0] == 0x3F802000  # ties away from zero


def test_mode_names():
    assert QuantMode_t.get("QuantMode_t::F322F16") is QuantMode_t.F322F16
    with pytest.raises(quant.UnsupportedError, match="quantPre='F32ToF16'"):
        QuantMode_t.get("F32ToF16")
