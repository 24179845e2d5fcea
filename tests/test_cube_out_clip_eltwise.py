"""310B DataCopy out of L0C with ClipReLU (clipReluPre, SetFixPipeClipRelu) and element-wise add/sub (eltWiseOp,
SetFixPipeAddr): property tests against the reference (quant -> ReLU -> element-wise -> ClipReLU, half outputs)
and one test per validation rule."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cube_out_util import bits, fresh, place
from fastcopy import (DataCopy, DataCopyCO12DstParams, FastCopyWarning, GlobalTensor, OutOfBoundsError, ParamError,
                      RangeError, SetFixPipeAddr, SetFixPipeClipRelu, SetFixpipeNz2ndFlag, SetFixpipePreQuantFlag,
                      TPosition, UnsupportedError)
from fastcopy.cube import quant
from fastcopy.reference import cube_fixpipe


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["F322F16", "DEQF16"]), st.sampled_from(["ND", "NZ"]), st.integers(1, 40), st.integers(1, 3),
       st.integers(0, 2, ), st.booleans(), st.booleans(), st.integers(0, 2**32 - 1))
def test_clip_eltwise_match_reference(mode, layout, m, n16, op, clip_on, relu, seed):
    rng = np.random.default_rng(seed)
    pipe = fresh("310B")
    m1 = -(-m // 16)
    n = 16 * n16 if layout == "NZ" else int(rng.integers(1, 16 * n16 + 1))
    src_stride = m1 + int(rng.integers(0, 2))  # 16-row units
    total = max(n16 * src_stride * 256, 256)
    if mode == "F322F16":
        x = (rng.standard_normal(total) * np.exp2(rng.integers(-4, 17, total))).astype(np.float32)
    else:
        x = rng.integers(-2**17, 2**17, total).astype(np.int32)
    src = place(pipe, TPosition.CO1, x)
    q = quant.make_word(float(rng.uniform(-2, 2)) if mode == "DEQF16" else 1.0) & ~0x1FFF
    SetFixpipePreQuantFlag(q, pipe=pipe)
    c0 = m + int(rng.integers(0, 3))
    e_vals = (rng.standard_normal(n16 * c0 * 16 + 16) * np.exp2(rng.integers(-2, 15, n16 * c0 * 16 + 16)))
    with np.errstate(over="ignore"):  # (values past half's range become inf on purpose: no numpy warning)
        e_vals = e_vals.astype(np.float16)
    e = place(pipe, TPosition.C1, e_vals)
    SetFixPipeAddr(e, c0, pipe=pipe)
    clip = np.float16(rng.uniform(0.01, 3000))
    SetFixPipeClipRelu(int(clip.view(np.uint16)) | (0xABCD << 16), pipe=pipe)  # bits above 15 are ignored
    if layout == "ND":
        dst_stride = n + int(rng.integers(0, 3))
        size = m * dst_stride + 16
        SetFixpipeNz2ndFlag(1, 0, 0, pipe=pipe)
    else:
        dst_stride = -(-m * 32 // 32) + int(rng.integers(0, 2))  # 32 B units; a Z column holds m * 32 B
        size = n16 * dst_stride * 16 + 64
    host = rng.integers(0, 2**16, size, dtype=np.uint64).astype(np.uint16).view(np.float16).copy()
    before = host.copy()
    params = DataCopyCO12DstParams(nSize=n, mSize=m, dstStride=dst_stride, srcStride=src_stride, quantPre=mode,
                                   reluPre=int(relu), nz2ndEn=layout == "ND", clipReluPre=int(clip_on), eltWiseOp=op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        DataCopy(GlobalTensor(host), src, params)
    want = before.copy()
    cube_fixpipe.fixpipe(want.view(np.uint8), x, layout=layout, n=n, m=m, src_stride=16 * src_stride,
                         dst_stride=dst_stride * (32 if layout == "NZ" else 1), num=1, snd=0, dnd=0, rs=1, mode=mode,
                         t=np.float16, words=[q] * n, relu=relu, ctrl48=False, arch3510=False,
                         elt=(e_vals, c0, 1 if op == 1 else -1) if op else None,
                         clip=float(clip) if clip_on else None)
    assert np.array_equal(bits(host), bits(want))


def _setup(op=1, clip=True, e_size=256, c0=1):
    pipe = fresh("310B")
    src = place(pipe, TPosition.CO1, (np.arange(256, dtype=np.float32) - 100) / 8)
    if clip:
        SetFixPipeClipRelu(0x3C00, pipe=pipe)  # 1.0, the page's example
    if op:
        SetFixPipeAddr(place(pipe, TPosition.C1, np.full(e_size, 0.5, np.float16)), c0, pipe=pipe)
    host = np.full(256, 7, np.float16)
    return pipe, src, host


def _params(**kw):
    base = dict(nSize=16, mSize=16, dstStride=16, srcStride=1, quantPre="F322F16")
    base.update(kw)
    return DataCopyCO12DstParams(**base)


def _raises(exc, match, host, src, params):
    before = host.copy()
    with pytest.raises(exc, match=match):
        DataCopy(GlobalTensor(host), src, params)
    assert np.array_equal(bits(host), bits(before))


def test_worked_example_add_then_clip():
    """ReLU -> +0.5 -> min(., 1.0): x = (r*16 + c - 100) / 8 for row r, column c (NZ, one Z column)."""
    pipe, src, host = _setup()
    with pytest.warns(FastCopyWarning, match="ClipReLU / element-wise add-sub on Atlas 200I/500 A2 are experimental"):
        DataCopy(GlobalTensor(host), src, _params(reluPre=1, clipReluPre=1, eltWiseOp=1, dstStride=16))
    x = (np.arange(256) - 100) / 8
    want = np.minimum(np.maximum(x, 0) + 0.5, 1.0).astype(np.float16)
    assert np.array_equal(host, want)


def test_sub_without_clip():
    pipe, src, host = _setup(clip=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        DataCopy(GlobalTensor(host), src, _params(eltWiseOp=2))
    assert np.array_equal(host, ((np.arange(256) - 100) / 8 - 0.5).astype(np.float16))


def test_undefined_eltwise_operand_gives_undefined_output():
    pipe = fresh("310B")
    src = place(pipe, TPosition.CO1, np.ones(256, np.float32))
    e = pipe.alloc(TPosition.C1, np.float16, 256)  # never written
    SetFixPipeAddr(e, 1, pipe=pipe)
    out = pipe.alloc(TPosition.A1, np.float16, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        DataCopy(out, src, _params(eltWiseOp=1))
    assert not out.defined().any()


def test_error_clip_relu_pre_value():
    pipe, src, host = _setup()
    _raises(RangeError, "clipReluPre=2 is not 0 \\(off\\) or 1 \\(ClipReLU\\)", host, src, _params(clipReluPre=2))


def test_error_eltwise_op_value():
    pipe, src, host = _setup()
    _raises(RangeError, "eltWiseOp=3 is not 0 \\(off\\), 1 \\(add\\) or 2 \\(sub\\)", host, src, _params(eltWiseOp=3))


def test_error_not_on_a2():
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.ones(256, np.float32))
    host = np.zeros(256, np.float16)
    _raises(UnsupportedError, "clipReluPre=1: ClipReLU and element-wise add/sub exist only on Atlas 200I/500 A2 on "
            "Atlas A2", host, src, _params(clipReluPre=1))


def test_error_not_half_output():
    pipe, src, _ = _setup()
    host = np.zeros(256, np.float32)
    _raises(UnsupportedError, "eltWiseOp=1 with a float output: fastcopy supports ClipReLU and element-wise add/sub "
            "for half outputs only", host, src, _params(quantPre="NoQuant", eltWiseOp=1))


def test_error_clip_state_unset():
    pipe, src, host = _setup(clip=False)
    _raises(ParamError, "clipReluPre=1 reads the CLIP_RELU state \\(SetFixPipeClipRelu\\), which was never set", host,
            src, _params(clipReluPre=1))


@pytest.mark.parametrize("word", [0x0000, 0x8000, 0xBC00, 0x7C00, 0x7E00])
def test_error_clip_not_positive_finite(word):
    pipe, src, host = _setup()
    SetFixPipeClipRelu(word, pipe=pipe)
    _raises(RangeError, "the ClipReLU limit .* must be positive and finite", host, src, _params(clipReluPre=1))


def test_error_eltwise_state_unset():
    pipe, src, host = _setup(op=0)
    _raises(ParamError, "eltWiseOp=2 reads the element-wise tensor of SetFixPipeAddr, which was never set", host, src,
            _params(eltWiseOp=2))


def test_error_eltwise_operand_too_small():
    pipe, src, host = _setup(e_size=128)
    _raises(OutOfBoundsError, "the element-wise tensor needs 256 halves for mSize=16, nSize=16, c0ChStride=1; it has "
            "128", host, src, _params(eltWiseOp=1))


def test_error_set_fixpipe_addr_position_dtype_stride():
    pipe = fresh("310B")
    with pytest.raises(UnsupportedError, match="eleWiseData is in UB; it must be a LocalTensor in L1"):
        SetFixPipeAddr(pipe.alloc(TPosition.VECIN, np.float16, 256), 1, pipe=pipe)
    with pytest.raises(UnsupportedError, match="eleWiseData has dtype float32; the element-wise operand is half"):
        SetFixPipeAddr(pipe.alloc(TPosition.C1, np.float32, 256), 1, pipe=pipe)
    with pytest.raises(RangeError, match="c0ChStride=65536 is outside \\[0, 65535\\]"):
        SetFixPipeAddr(pipe.alloc(TPosition.C1, np.float16, 256), 65536, pipe=pipe)


def test_error_setters_only_on_310b():
    pipe = fresh("A2")
    with pytest.raises(UnsupportedError, match="SetFixPipeClipRelu: not available on Atlas A2"):
        SetFixPipeClipRelu(0x3C00, pipe=pipe)
    with pytest.raises(RangeError, match="config=-1 does not fit uint64_t"):
        SetFixPipeClipRelu(-1, pipe=fresh("310B"))
