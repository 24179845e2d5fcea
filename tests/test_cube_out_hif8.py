"""HiFloat8 (hifloat8_t, Atlas 350): the code table, the two encoders ("round" = ties away, "hybrid" = ties away
below |E| = 4 and the SSR rule above) against the one-value oracle, exhaustively where the input space allows, and
HiFloat8 through the public Fixpipe and Mmad."""

import numpy as np
import pytest

from cube_out_util import bits, fresh, place
from fastcopy import (FastCopyWarning, Fixpipe, FixpipeParamsV220, GlobalTensor, Mmad, MmadParams, TPosition,
                      UnsupportedError, decode_hif8, encode_hif8)
from fastcopy.cube import quant
from fastcopy.reference import cube_fixpipe, cube_hif8 as R, cube_mmad

RNG = np.random.default_rng(26)
ALL_HALF = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


def _ref_encode(xs, rounding, inf_nan):
    return np.array([R.encode(x, rounding == "hybrid", inf_nan) for x in xs], np.uint8)


@pytest.mark.parametrize("inf_nan", [True, False])
def test_every_code_decodes_like_the_reference(inf_nan):
    got = decode_hif8(np.arange(256, dtype=np.uint8), inf_nan=inf_nan)
    want = np.array([R.decode(c, inf_nan) for c in range(256)], np.float32)
    assert np.array_equal(bits(got), bits(want))


def test_code_table_landmarks():
    v = decode_hif8(np.array([0x00, 0x08, 0x0F, 0x01, 0x07, 0x6E, 0x6F, 0xEF, 0x80, 0x15, 0x7E, 0x88], np.uint8))
    assert v[0] == 0 and v[1] == 1.0 and v[2] == 1.875 and v[3] == 2.0**-22 and v[4] == 2.0**-16
    assert v[5] == 32768.0 and v[6] == np.inf and v[7] == -np.inf and np.isnan(v[8])
    assert v[9] == 3.25 and v[10] == 2.0**-15 and v[11] == -1.0
    sat = decode_hif8(np.array([0x6F, 0xEF, 0x80], np.uint8), inf_nan=False)
    assert list(sat) == [32768.0, -32768.0, 0.0]


@pytest.mark.parametrize("rounding", ["round", "hybrid"])
@pytest.mark.parametrize("inf_nan", [True, False])
def test_every_half_value_encodes_like_the_reference(rounding, inf_nan):
    got = encode_hif8(ALL_HALF, rounding, inf_nan)
    assert np.array_equal(got, _ref_encode(ALL_HALF, rounding, inf_nan))


@pytest.mark.parametrize("rounding", ["round", "hybrid"])
def test_sampled_float32_encode_like_the_reference(rounding):
    raw = RNG.integers(0, 2**32, 40000, dtype=np.uint64).astype(np.uint32)
    exps = RNG.integers(95, 150, 40000).astype(np.uint32)  # |x| about 2^-32 .. 2^22: every class and the edges
    near = (raw & np.uint32(0x807FFFFF)) | (exps << np.uint32(23))
    xs = np.concatenate([raw[:10000], near]).view(np.float32)
    for inf_nan in (True, False):
        assert np.array_equal(encode_hif8(xs, rounding, inf_nan), _ref_encode(xs, rounding, inf_nan))


def test_every_finite_code_round_trips():
    codes = np.arange(256, dtype=np.uint8)
    vals = decode_hif8(codes)
    fin = np.isfinite(vals)
    assert np.array_equal(encode_hif8(vals[fin], "round"), codes[fin])


def test_worked_encodings():
    x = np.array([1.0, 3.3, 1.0625, 1.0624, 40959.0, 40960.0, 2.0**-23, 1.5 * 2.0**-23, -2.0**-30, np.nan, -np.inf],
                 np.float32)
    # 1.0625 is the tie between 1.0 and 1.125: away from zero; 1.5 * 2^-23 rounds up into the smallest code
    assert list(encode_hif8(x, "round")) == [0x08, 0x15, 0x09, 0x08, 0x6E, 0x6F, 0x00, 0x01, 0x00, 0x80, 0xEF]
    assert list(encode_hif8(x[[4, 5, 9, 10]], "round", inf_nan=False)) == [0x6E, 0x6E, 0x00, 0xEE]
    # the hybrid rule above |E| = 4 rounds an exactly representable 16.0 up to 20.0 (the vendor encoder's SSR rule)
    assert decode_hif8(encode_hif8(np.float32(16.0), "hybrid")) == 20.0
    assert decode_hif8(encode_hif8(np.float32(3.0), "hybrid")) == 3.0
    with pytest.raises(ValueError, match="rounding='even' is not 'round' or 'hybrid'"):
        encode_hif8([1.0], "even")


@pytest.mark.parametrize("mode", ["QF322HIF8_PRE", "QF322HIF8_PRE_HYBRID", "VQF322HIF8_PRE",
                                  "VQF322HIF8_PRE_HYBRID"])
@pytest.mark.parametrize("relu", [False, True])
def test_fixpipe_hif8_matches_reference(mode, relu):
    pipe = fresh("350")
    m, n = 20, 40
    x = (RNG.standard_normal(3 * 32 * 16) * np.exp2(RNG.integers(-10, 14, 3 * 32 * 16))).astype(np.float32)
    src = place(pipe, TPosition.CO1, x)
    host = np.full(m * n, 0x55, np.uint8)
    before = host.copy()
    gm = GlobalTensor(host)
    vector = mode.startswith("V")
    words = np.array([quant.make_word(float(s)) & ~0x1FFF for s in RNG.uniform(-4, 4, n).astype(np.float32)],
                     np.uint64)
    params = FixpipeParamsV220(nSize=n, mSize=m, srcStride=32, dstStride=n, quantPre=mode, reluEn=relu,
                               deqScalar=None if vector else int(words[0]))
    args = [gm, src] + ([place(pipe, TPosition.C1, words)] if vector else []) + [params]
    with pytest.warns(FastCopyWarning, match=f"quantPre={mode} writes hifloat8_t codes .* experimental"):
        Fixpipe(*args)
    want = before.copy()
    cube_fixpipe.fixpipe(want, x, layout="ND", n=n, m=m, src_stride=32 * 16, dst_stride=n, num=1, snd=0, dnd=0,
                         rs=1, mode=mode, t=np.uint8, words=words if vector else [int(words[0])] * n, relu=relu,
                         ctrl48=True, arch3510=True)
    assert np.array_equal(host, want)


def test_fixpipe_hif8_only_on_350():
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.ones(256, np.float32))
    host = np.zeros(256, np.uint8)
    with pytest.raises(UnsupportedError, match="quantPre=QF322HIF8_PRE exists only on Atlas 350 on Atlas A2"):
        Fixpipe(GlobalTensor(host), src, FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16,
                                                           quantPre="QF322HIF8_PRE", deqScalar=0x3F800000))
    assert not host.any()


def test_mmad_hif8_inputs_on_350():
    pipe = fresh("350")
    m, n, k = 18, 20, 40  # K0 = 32 for 1-byte inputs
    m1, n1, k1 = 2, 2, 2
    finite = np.nonzero(np.isfinite(decode_hif8(np.arange(256, dtype=np.uint8))))[0].astype(np.uint8)
    a_flat = RNG.choice(finite, m1 * k1 * 512)
    b_flat = RNG.choice(finite, k1 * n1 * 512)
    a = place(pipe, TPosition.A2, a_flat)
    b = place(pipe, TPosition.B2, b_flat)
    c = pipe.alloc(TPosition.CO1, np.float32, m1 * n1 * 256)
    with pytest.warns(FastCopyWarning, match="hifloat8_t inputs \\(uint8 codes\\) are experimental"):
        Mmad(c, a, b, MmadParams(m, n, k))
    dec = np.array([R.decode(int(v)) for v in range(256)])
    new_c, _ = cube_mmad.mmad(np.zeros(c.size), np.ones(c.size, bool), dec[a_flat], np.ones(a_flat.size, bool),
                              dec[b_flat], np.ones(b_flat.size, bool), m, n, k, 32, "Nz")
    got = bits(c.numpy())
    assert all(int(got[i]) == v for i, v in new_c.items())


def test_mmad_uint8_float_is_not_a_combination_elsewhere():
    pipe = fresh("A2")
    a = place(pipe, TPosition.A2, np.zeros(512, np.uint8))
    b = place(pipe, TPosition.B2, np.zeros(512, np.uint8))
    c = pipe.alloc(TPosition.CO1, np.float32, 256)
    with pytest.raises(UnsupportedError, match="uint8_t x uint8_t -> float is not supported"):
        Mmad(c, a, b, MmadParams(16, 16, 32))
