"""The checker of the cube-in APIs: one test per error (type, message naming API / field / value / range / unit /
product; destination bytes and definedness unchanged) and per warning (result still the documented one)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from dc_util import tensor_bytes

import fastcopy as fc
from fastcopy.cube.b4 import bits_of
from fastcopy.errors import (AlignmentError, OutOfBoundsError, ParamError, ParamTypeError, RangeError,
                             UnsupportedError)

A2, P350, P910, P310P = "ATLAS_A2", "ATLAS_350", "ATLAS_TRAINING", "ATLAS_INFERENCE_AICORE"


def values(n, v, dtype):
    """``n`` elements of ``dtype``: ``v`` (None: 0, 1, 2, ...); packed 4-bit types get those numbers as bytes."""
    a = np.arange(n) if v is None else np.full(n, v)
    return (a % 251).astype(np.uint8).view(dtype) if bits_of(dtype) == 4 else a.astype(dtype)


def setup(product, src_pos, dst_pos, dtype="half", n_src=4096, n_dst=4096):
    """Source elements 0, 1, 2, ... (4-bit types: bytes); destination half defined (7s), half undefined."""
    pipe = fc.TPipe(product=product)
    dtype = fc.as_dtype(dtype)
    if src_pos == "GM":
        src = fc.GlobalTensor(values(n_src, None, dtype))
    else:
        src = pipe.alloc(src_pos, dtype, n_src)
        src.numpy()[:] = values(n_src, None, dtype)
        src.set_defined()
    if dst_pos == "GM":
        dst = fc.GlobalTensor(np.zeros(n_dst, dtype))
    else:
        dst = pipe.alloc(dst_pos, dtype, n_dst)
        dst.numpy()[:n_dst // 2] = values(n_dst // 2, 7, dtype)
        dst.set_defined(np.arange(n_dst) < n_dst // 2)
    return pipe, src, dst


L2 = fc.LoadData2DParams
V2 = fc.LoadData2DParamsV2
T1 = fc.LoadData2dTransposeParams
T2 = fc.LoadData2dTransposeParamsV2
DN = fc.Dn2NzParams

ERRORS = [
    # (id, product, src, dst, dtype, call(dst, src), error, message fragments)
    ("path", P350, "GM", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1)), UnsupportedError,
     ["LoadData(LoadData2DParams)", "GM->A2", "not supported on Atlas 350"]),
    ("dtype", P910, "A1", "A2", "float", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1)), UnsupportedError,
     ["LoadData(LoadData2DParams)", "dtype float", "Atlas training series", "supported:"]),
    ("position-c1", A2, "C1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1)), UnsupportedError,
     ["src position C1", "A1 or B1", "Atlas A2"]),
    ("ctype-product", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1)),
     UnsupportedError, ["LoadData(LoadData2DParamsV2)", "not supported on Atlas A2"]),
    ("align", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d[16], s, L2(0, 1, 1)), AlignmentError,
     ["LoadData(LoadData2DParams)", "dst start address", "512-byte aligned", "Atlas A2"]),
    ("footprint", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(15, 2, 1)), OutOfBoundsError,
     ["LoadData(LoadData2DParams)", "read span", "bytes [7680, 8704)", "8192 bytes"]),
    ("transpose-width", A2, "A1", "A2", "float", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 0, 0, True)),
     UnsupportedError, ["ifTranspose=true needs a 2-byte type", "float", "Atlas A2"]),
    ("int4", A2, "A1", "A2", "int4b_t", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 0, 0, True)),
     UnsupportedError, ["LoadData(LoadData2DParams)", "ifTranspose=true with int4b_t", "transpose off",
                        "Atlas A2"]),
    ("decrement-below-0", A2, "GM", "A1", "half", lambda d, s: fc.LoadData(d, s, L2(1, 3, 1, 0, 0, False, 1)),
     RangeError, ["addrMode=1", "startIndex=1", "= -1 fractals", "Atlas A2"]),
    ("addrmode-range", A2, "GM", "A1", "half", lambda d, s: fc.LoadData(d, s, L2(1, 3, 1, 0, 0, False, 2)),
     RangeError, ["addrMode=2 is outside [0, 1]", "Atlas A2"]),
    ("sid-range", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 16)), RangeError,
     ["sid=16 is outside [0, 15]", "Atlas A2"]),
    ("v2-srcstride", P350, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, -1, 1)),
     RangeError, ["LoadData(LoadData2DParamsV2)", "srcStride=-1 is outside [0, 32767] fractals", "Atlas 350"]),
    ("v2-mstep-range", P350, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, V2(0, 0, 256, 1, 1, 1)),
     RangeError, ["mStep=256 is outside [0, 255]", "Atlas 350"]),
    ("v2-b8-mstep", P350, "A1", "A2", "uint8", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1, True)),
     RangeError, ["mStep=1 is not a multiple of 2", "uint8_t", "Atlas 350"]),
    ("v2-b32-kstep", P350, "A1", "A2", "float", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1, True)),
     RangeError, ["kStep=1 is not a multiple of 2", "float", "Atlas 350"]),
    ("v2-int16", P350, "A1", "A2", "int16", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1)),
     UnsupportedError, ["dtype int16_t", "Atlas 350"]),
    ("ldwt-910", P910, "A1", "B2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1)),
     UnsupportedError, ["LoadDataWithTranspose(LoadData2dTransposeParams)", "not supported on Atlas training"]),
    ("ldwt-310p", P310P, "A1", "B2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1)),
     UnsupportedError, ["LoadDataWithTranspose", "not supported on Atlas inference series AI Core"]),
    ("ldwt-350-a2", P350, "A1", "A2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1)),
     UnsupportedError, ["LoadDataWithTranspose", "no LoadDataWithTranspose to A2", "Atlas 350"]),
    ("ldwt-v2-a2", A2, "B1", "B2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T2(0, 1, 1)),
     UnsupportedError, ["LoadData2dTransposeParamsV2", "not supported on Atlas A2"]),
    ("ldwt-params", A2, "B1", "B2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, L2(0, 1, 1)),
     UnsupportedError, ["LoadDataWithTranspose", "got LoadData2DParams"]),
    ("dn2nz-product", A2, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 16, 16, 1, 0)),
     UnsupportedError, ["DataCopy(Dn2NzParams)", "not supported on Atlas A2"]),
    ("dn2nz-ub", P350, "GM", "VECIN", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 16, 16, 1, 0)),
     UnsupportedError, ["DataCopy(Dn2NzParams)", "GM->VECIN", "Atlas 350"]),
    ("dn2nz-dtype", P350, "GM", "A1", "float64", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 16, 16, 1, 0)),
     UnsupportedError, ["DataCopy(Dn2NzParams)", "dtype double", "Atlas 350"]),
    ("dn2nz-srcdvalue", P350, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 0, 16, 1, 0)),
     RangeError, ["DataCopy(Dn2NzParams)", "srcDValue=0 is outside [1, 1099511627775] elements", "Atlas 350"]),
    ("dn2nz-dnnum", P350, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(4096, 16, 16, 0, 16, 16, 1, 0)),
     RangeError, ["dnNum=4096 is outside [0, 4095] matrices", "Atlas 350"]),
    ("dn2nz-c0stride", P350, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 16, 0, 1, 0)),
     RangeError, ["dstNzC0Stride=0 is outside [1, 16384] C0 blocks (32 bytes)", "Atlas 350"]),
    ("dn2nz-smallc0", P350, "GM", "A1", "half",
     lambda d, s: fc.DataCopy(d, s, DN(1, 16, 5, 0, 16, 16, 1, 0), small_c0=True),
     RangeError, ["dValue=5 is outside [0, 4] stored GM rows with enableSmallC0", "Atlas 350"]),
    ("dn2nz-footprint", P350, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 16, 0, 4096, 16, 1, 0)),
     OutOfBoundsError, ["DataCopy(Dn2NzParams)", "read span", "source"]),
    ("loaddata-form", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, fc.DataCopyParams()),
     UnsupportedError, ["LoadData: no form takes a DataCopyParams"]),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_error(case):
    _, product, sp, dp, dtype, call, exc, parts = case
    _, src, dst = setup(product, sp, dp, dtype)
    expect_error(call, dst, src, exc, parts)


def expect_warning(call, dst, src, parts) -> None:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        call(dst, src)
    text = " | ".join(str(w.message) for w in rec if issubclass(w.category, fc.FastCopyWarning))
    for part in parts:
        assert part in text, (part, text)


def expect_error(call, dst, src, exc, parts) -> None:
    """``call(dst, src)`` raises ``exc`` naming every part; the destination's bytes and definedness unchanged."""
    before = tensor_bytes(dst)
    with pytest.raises(exc) as info:
        call(dst, src)
    for part in parts:
        assert part in str(info.value), (part, str(info.value))
    after = tensor_bytes(dst)
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_ctype_overflow_at_construction():
    with pytest.raises(ParamTypeError, match=re.escape("LoadData2DParams: repeatTimes=256 does not fit uint8_t")):
        L2(0, 256)
    with pytest.raises(ParamTypeError, match="srcStride=2147483648 does not fit int32_t"):
        V2(srcStride=2**31)


WARNINGS = [
    # (id, product, src, dst, dtype, call, message fragments)
    ("addrmode-ignored", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 0, 0, False, 1)),
     ["addrMode=1 has no effect", "Atlas A2"]),
    ("910-dstgap", P910, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 2, 1, 0, 3)),
     ["dstGap=3 is ignored", "Atlas training series"]),
    ("350-domain", P350, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(1, 2, 2)),
     ["startIndex=1 != 0 and srcStride=2 != 1", "2D V2 instruction", "Atlas 350"]),
    ("350-domain-gm", P350, "GM", "A1", "half", lambda d, s: fc.LoadData(d, s, L2(0, 2, 2)),
     ["srcStride=2 != 1", "Atlas 350"]),
    ("gm-transpose", A2, "GM", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 0, 0, True)),
     ["ifTranspose=true is ignored", "GM paths never transpose", "Atlas A2"]),
    ("v2-gm-transpose", P350, "GM", "A1", "half", lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1, True)),
     ["ifTranspose=true is ignored", "Atlas 350"]),
    ("sid", A2, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 3)),
     ["sid=3 is reserved", "Atlas A2"]),
    ("v2-overlap", P350, "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, V2(0, 0, 2, 2, 2, 1)),
     ["overlap", "dstStride=1 < mStep=2", "Atlas 350"]),
    ("ldwt-overlap", A2, "A1", "A2", "float", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 2, 1, 0, 0)),
     ["overlap", "dstGap=0, dstFracGap=0", "Atlas A2"]),
    ("ldwt-fracgap-b16", A2, "A1", "A2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1, 0, 2)),
     ["dstFracGap=2 is ignored for 2-byte types", "Atlas A2"]),
    ("dn2nz-matrix-stride", P350, "GM", "A1", "half",
     lambda d, s: fc.DataCopy(d, s, DN(2, 16, 16, 256, 16, 16, 1, 264)),
     ["dstNzMatrixStride=264 (528 bytes) is not a multiple of 32 bytes", "512 bytes apart", "Atlas 350"]),
    ("dn2nz-overlap", P350, "GM", "A1", "half", lambda d, s: fc.DataCopy(d, s, DN(1, 16, 32, 0, 16, 1, 1, 0)),
     ["DataCopy(Dn2NzParams)", "overlap", "Atlas 350"]),
    ("dn2nz-smallc0-experimental", P350, "GM", "A1", "half",
     lambda d, s: fc.DataCopy(d, s, DN(1, 16, 3, 0, 16, 1, 1, 0), small_c0=True),
     ["enableSmallC0 is experimental", "check it on hardware"]),
    ("ldwt-addrmode", A2, "A1", "A2", "half", lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1, 0, 0, 1)),
     ["addrMode=1 has no effect", "Atlas A2"]),
]


@pytest.mark.parametrize("case", WARNINGS, ids=[c[0] for c in WARNINGS])
def test_warning(case):
    _, product, sp, dp, dtype, call, parts = case
    _, src, dst = setup(product, sp, dp, dtype)
    expect_warning(call, dst, src, parts)


# ------------------------------------------------------------------------------------------------ img2col
def P3(**kw):
    base = dict(padList=(0, 0, 0, 0), l1H=4, l1W=4, channelSize=16, kExtension=16, mExtension=16, kStartPt=0,
                mStartPt=0)
    base.update(kw)
    return fc.LoadData3DParamsV2(**base)


def _rpt(pipe):
    if pipe.product.name != "ATLAS_INFERENCE_AICORE":
        fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(), pipe=pipe)


NOCFG = fc.IsResetLoad3dConfig(False, False)
ERRORS_3D = [
    ("fmatrixctrl", A2, "half", lambda d, s: fc.LoadData(d, s, P3(fMatrixCtrl=True)), UnsupportedError,
     ["LoadData(LoadData3DParamsV2)", "fMatrixCtrl=true", "Atlas A2"]),
    ("ensmallk", A2, "half", lambda d, s: fc.LoadData(d, s, P3(enSmallK=True)), UnsupportedError,
     ["enSmallK=true", "Atlas A2"]),
    ("stride0", A2, "half", lambda d, s: fc.LoadData(d, s, P3(strideW=0)), RangeError,
     ["strideW=0 is outside [1, 63] pixels", "Atlas A2"]),
    ("dilation0", A2, "half", lambda d, s: fc.LoadData(d, s, P3(dilationFilterH=0)), RangeError,
     ["dilationFilterH=0 is outside [1, 255] pixels", "Atlas A2"]),
    ("channels", A2, "half", lambda d, s: fc.LoadData(d, s, P3(channelSize=8)), UnsupportedError,
     ["channelSize=8 is not a multiple of C0=16", "not emulated", "Atlas A2"]),
    ("kstart", A2, "half", lambda d, s: fc.LoadData(d, s, P3(kStartPt=8)), RangeError,
     ["kStartPt=8 is not a multiple of C0=16 elements", "Atlas A2"]),
    ("kext", A2, "half", lambda d, s: fc.LoadData(d, s, P3(kExtension=8)), RangeError,
     ["kExtension=8 is not a multiple of C0=16 elements", "Atlas A2"]),
    ("mext", A2, "half", lambda d, s: fc.LoadData(d, s, P3(mExtension=8)), RangeError,
     ["mExtension=8 is not a multiple of 16 rows", "half", "Atlas A2"]),
    ("mstart-350", P350, "float", lambda d, s: fc.LoadData(d, s, P3(channelSize=8, kExtension=8, mStartPt=4)),
     RangeError, ["LoadData(LoadData3DParamsV2): mStartPt=4 is not a multiple of 16 rows", "float", "Atlas 350"]),
    ("kcolumns", A2, "half", lambda d, s: fc.LoadData(d, s, P3(kStartPt=16)), RangeError,
     ["kStartPt + kExtension = 32 is outside [0, 16] columns", "C1*Kh*Kw*C0 = 1*1*1*16", "Atlas A2"]),
    ("b8-transpose", A2, "int8", lambda d, s: fc.LoadData(d, s, P3(channelSize=32, kExtension=32, enTranspose=True)),
     UnsupportedError, ["enTranspose=true is not supported for int8_t", "Atlas A2"]),
    ("310p-b32-pad", P310P, "float", lambda d, s: fc.SetLoadDataPaddingValue(np.float32(1), pipe=d.pipe),
     UnsupportedError, ["SetLoadDataPaddingValue", "4-byte pad value (float)", "Atlas inference series AI Core"]),
    ("fmatrix-unset", A2, "half", lambda d, s: fc.LoadData(d, s, P3(), config=NOCFG), ParamError,
     ["FMATRIX register is read before it was written", "Atlas A2"]),
    ("padding-unset", A2, "half", lambda d, s: (fc.SetFmatrix(4, 4, (1, 0, 0, 0), pipe=d.pipe),
                                                fc.LoadData(d, s, P3(), config=NOCFG)), ParamError,
     ["PADDING register is read", "Atlas A2"]),
    ("350-no-repeat", P350, "half", lambda d, s: fc.LoadData(d, s, P3()), ParamError,
     ["Atlas 350 needs SetLoadDataRepeat", "no default"]),
    ("boundary", A2, "half", lambda d, s: fc.SetLoadDataBoundary(100, pipe=d.pipe), RangeError,
     ["SetLoadDataBoundary", "boundaryValue=100", "[1024, 4294967295] bytes", "Atlas A2"]),
    ("boundary-350", P350, "half", lambda d, s: fc.SetLoadDataBoundary(2048, pipe=d.pipe), UnsupportedError,
     ["SetLoadDataBoundary: does not exist on Atlas 350"]),
    ("repeat-310p", P310P, "half", lambda d, s: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(), pipe=d.pipe),
     UnsupportedError, ["SetLoadDataRepeat: does not exist on Atlas inference series AI Core"]),
    ("repeat-mode", A2, "half", lambda d, s: fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 1, 2), pipe=d.pipe),
     RangeError, ["repeatMode=2 is outside [0, 1]", "Atlas A2"]),
    ("fmatrix-right-310p", P310P, "half", lambda d, s: fc.SetFmatrix(4, 4, (0, 0, 0, 0), fc.FmatrixMode.FMATRIX_RIGHT,
                                                                     pipe=d.pipe), UnsupportedError,
     ["SetFmatrix: FMATRIX_RIGHT does not exist on Atlas inference series AI Core"]),
    ("fmatrix-range", A2, "half", lambda d, s: fc.SetFmatrix(0, 4, (0, 0, 0, 0), pipe=d.pipe), RangeError,
     ["SetFmatrix: l1H=0 is outside [1, 32767] pixels", "Atlas A2"]),
    ("padlist", A2, "half", lambda d, s: fc.LoadData(d, s, P3(padList=(0, 0, 300, 0))), RangeError,
     ["padList top=300 is outside [0, 255]", "Atlas A2"]),
    ("withstride-a2", A2, "half", lambda d, s: fc.LoadDataWithStride(d, s, P3()), UnsupportedError,
     ["LoadDataWithStride(LoadData3DParamsV2)", "not supported on Atlas A2"]),
    ("filter-too-big", A2, "half", lambda d, s: fc.LoadData(d, s, P3(filterW=5)), RangeError,
     ["does not fit the padded 4 x 4 feature map", "Atlas A2"]),
    ("pad-value-type", A2, "int8", lambda d, s: fc.LoadData(d, s, P3(channelSize=32, kExtension=32, padValue=300)),
     ParamTypeError, ["LoadData(LoadData3DParamsV2)", "padValue=300", "int8_t", "Atlas A2"]),
]


def expect_error_3d(product, dpos, dtype, call, exc, parts, n_src=1024, n_dst=1024):
    """:func:`expect_error` for a 3D load; a refused load (``parts[0]`` names it) writes no register either."""
    pipe, src, dst = setup(product, "A1", dpos, dtype, n_src=n_src, n_dst=n_dst)
    state = dict(pipe.state)
    expect_error(call, dst, src, exc, parts)
    if parts[0].startswith("LoadData"):
        assert {k: v for k, v in pipe.state.items() if state.get(k) != v} == {}


@pytest.mark.parametrize("case", ERRORS_3D, ids=[c[0] for c in ERRORS_3D])
def test_error_3d(case):
    expect_error_3d(case[1], "A2", *case[2:])


WARNINGS_3D = [
    ("l0b-transpose", A2, "B2", "half", lambda d, s: fc.LoadData(d, s, P3(enTranspose=True)),
     ["enTranspose=true is ignored", "Atlas A2"]),
    ("rows-beyond", A2, "A2", "half", lambda d, s: fc.LoadData(d, s, P3(l1H=2, l1W=4)),
     ["rows up to 16 go beyond the Ho*Wo = 8 output pixels", "Atlas A2"]),
    ("partial-b32", A2, "A2", "float", lambda d, s: fc.LoadData(d, s, P3(channelSize=8, kExtension=8, mExtension=4)),
     ["only partly covered", "left untouched", "Atlas A2"]),
    ("repeat", A2, "A2", "half", lambda d, s: (fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(0, 2, 0), pipe=d.pipe),
                                               fc.LoadData(d, s, P3())),
     ["repeatTime=2 on Atlas A2 is experimental"]),
    ("350-b2-pitch", P350, "B2", "half", lambda d, s: (_rpt(d.pipe),
                                                       fc.LoadData(d, s, P3(channelSize=32, kExtension=32))),
     ["destination pitch is 1 fractals but the Zn image of 16 x 32 needs 2", "Atlas 350"]),
    ("pad-truncated", P350, "A2", "float", lambda d, s: fc.SetLoadDataPaddingValue(np.float32(1.5), pipe=d.pipe),
     ["truncated to its low 16 bits", "Atlas 350"]),
]


@pytest.mark.parametrize("case", WARNINGS_3D, ids=[c[0] for c in WARNINGS_3D])
def test_warning_3d(case):
    _, product, dpos, dtype, call, parts = case
    _, src, dst = setup(product, "A1" if dpos == "A2" else "B1", dpos, dtype, n_src=1024, n_dst=1024)
    expect_warning(call, dst, src, parts)


def test_registers_written_by_the_call_and_read_later():
    pipe, src, dst = setup(A2, "A1", "A2", "half", n_src=1024, n_dst=1024)
    fc.LoadData(dst, src, P3(padList=(1, 1, 1, 1), padValue=np.float16(-3), kExtension=0))  # no-op, sets registers
    from fastcopy.cube.registers import FMATRIX_L, PADDING
    assert pipe.state[FMATRIX_L] == (4, 4, (1, 1, 1, 1))
    assert pipe.state[PADDING] == int(np.float16(-3).view(np.uint16))
    fc.LoadData(dst, src, P3(padList=(0, 0, 0, 0), l1H=9, padValue=np.float16(0)), config=NOCFG)
    assert dst.numpy()[0] == -3  # tap (0, 0) of output (0, 0) is padding, from the register


def test_v2pro_reads_the_registers_like_v2():
    pipe, src, dst = setup(A2, "A1", "A2", "half", n_src=2048, n_dst=2304)
    fc.SetFmatrix(4, 8, (1, 1, 1, 1), pipe=pipe)
    fc.SetLoadDataPaddingValue(np.float16(-5), pipe=pipe)
    ext = 144 | 16 << 16 | 0 << 32 | 16 << 48  # kExtension 144, mExtension 16, kStartPt 0, mStartPt 16
    filt = 1 | 1 << 8 | 3 << 16 | 3 << 24 | 1 << 32 | 1 << 40
    fc.LoadData(dst, src, fc.LoadData3DParamsV2Pro(16, extConfig=ext, filterConfig=filt))
    want = dst.numpy().copy()
    _, src2, dst2 = setup(A2, "A1", "A2", "half", n_src=2048, n_dst=2304)
    fc.LoadData(dst2, src2, P3(padList=(1, 1, 1, 1), l1H=4, l1W=8, kExtension=144, mStartPt=16, filterW=3,
                               filterH=3, padValue=np.float16(-5)))
    assert np.array_equal(want.view(np.uint16), dst2.numpy().view(np.uint16))
    assert (want == -5).any()


def test_load_data_boundary_wraps_reads_to_the_l1_start():
    from fastcopy.reference import img2col as iref

    pipe, src, dst = setup(A2, "A1", "A2", "half", n_src=2048, n_dst=1024)  # src at L1 byte 0, 4096 bytes
    fc.SetLoadDataBoundary(2048, pipe=pipe)
    fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(), pipe=pipe)
    p = P3(l1H=8, l1W=16, mExtension=32, mStartPt=64)  # rows 64..95 read L1 bytes 2048..3071 -> wrap to 0..1023
    fc.LoadData(dst, src, p)
    want, want_def = tensor_bytes(setup(A2, "A1", "A2", "half", n_src=2048, n_dst=1024)[2])
    s, s_def = tensor_bytes(src)
    iref.load3d(want, want_def, s, s_def, es=2, H=8, W=16, pads=(0, 0, 0, 0), Kh=1, Kw=1, sh=1, sw=1, dh=1, dw=1,
                mExtension=32, kExtension=16, blocks=[(64, 0)], mode=0, image="Zz", Q=1, pad_bytes=b"",
                boundary=2048, src_l1=0, poison=pipe.poison)
    got, got_def = tensor_bytes(dst)
    assert np.array_equal(got, want) and np.array_equal(got_def, want_def)
    assert dst.numpy()[0] == 0  # X row 64 = pixel 64 = L1 byte 2048 -> byte 0


# ------------------------------------------------------------------------------------------------ img2col V1
def PV1(**kw):
    base = dict(padList=(0, 0, 0, 0), l1H=4, l1W=4, c1Index=0, fetchFilterW=0, fetchFilterH=0, leftTopW=0,
                leftTopH=0, strideW=1, strideH=1, filterW=1, filterH=1, dilationFilterW=1, dilationFilterH=1,
                jumpStride=1, repeatMode=0, repeatTime=1, cSize=0, padValue=0)
    base.update(kw)
    return fc.LoadData3DParamsV1(**base)


V1API = "LoadData(LoadData3DParamsV1)"
ERRORS_V1 = [
    # (id, product, dst position, dtype, call, error, message fragments)
    ("product", A2, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1()), UnsupportedError,
     [V1API, "path A1->A2 (L1->L0A) is not supported on Atlas A2"]),
    ("dtype", P910, "A2", "float", lambda d, s: fc.LoadData(d, s, PV1()), UnsupportedError,
     [V1API, "dtype float", "Atlas training series", "supported:"]),
    ("ub-align", P910, "VECIN", "half", lambda d, s: fc.LoadData(d[1], s, PV1()), AlignmentError,
     [V1API, "dst start address (VECIN, UB) is not 32-byte aligned", "Atlas training series"]),
    ("align", P910, "A2", "half", lambda d, s: fc.LoadData(d[16], s, PV1()), AlignmentError,
     [V1API, "dst start address", "512-byte aligned", "Atlas training series"]),
    ("csize-range", P310P, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(cSize=2)), RangeError,
     [V1API, "cSize=2 is outside [0, 1]", "Atlas inference series AI Core"]),
    ("csize-footprint", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(cSize=1, repeatTime=2)),
     OutOfBoundsError, [V1API, "read span", "source"]),  # taps 4..7 of a 1x1 kernel: channel blocks 4..7
    ("jumpstride", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(jumpStride=0)), RangeError,
     [V1API, "jumpStride=0 is outside [1, 127] fractals", "Atlas training series"]),
    ("jumpstride-high", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(jumpStride=128)), RangeError,
     [V1API, "jumpStride=128 is outside [1, 127] fractals", "Atlas training series"]),
    ("repeatmode", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(repeatMode=2)), RangeError,
     [V1API, "repeatMode=2 is outside [0, 1]", "Atlas training series"]),
    ("c1index", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(c1Index=4096)), RangeError,
     [V1API, "c1Index=4096 is outside [0, 4095] C0 channel blocks", "Atlas training series"]),
    ("lefttop", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(leftTopW=-256)), RangeError,
     [V1API, "leftTopW=-256 is outside [-255, 32767] pixels", "Atlas training series"]),
    ("fetchfilter-range", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(fetchFilterH=255, filterH=255)),
     RangeError, [V1API, "fetchFilterH=255 is outside [0, 254] taps", "Atlas training series"]),
    ("fetchfilter-tap", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(fetchFilterW=2, filterW=2)),
     RangeError, [V1API, "fetchFilterW=2 is outside [0, filterW-1 = 1] taps", "Atlas training series"]),
    ("stride0", P310P, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(strideH=0)), RangeError,
     [V1API, "strideH=0 is outside [1, 63] pixels", "Atlas inference series AI Core"]),
    ("filter0", P310P, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(filterW=0)), RangeError,
     [V1API, "filterW=0 is outside [1, 255] taps", "Atlas inference series AI Core"]),
    ("dilation0", P310P, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(dilationFilterW=0)), RangeError,
     [V1API, "dilationFilterW=0 is outside [1, 255] pixels", "Atlas inference series AI Core"]),
    ("filter-too-big", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(filterW=6)), RangeError,
     [V1API, "does not fit the padded 4 x 4 feature map", "Atlas training series"]),
    ("fmatrix-unset", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(), config=NOCFG), ParamError,
     [V1API, "FMATRIX register is read before it was written", "Atlas training series"]),
    ("padding-unset", P910, "A2", "half", lambda d, s: (fc.SetFmatrix(4, 4, (1, 0, 0, 0), pipe=d.pipe),
                                                         fc.LoadData(d, s, PV1(leftTopW=-1), config=NOCFG)),
     ParamError, ["PADDING register is read", V1API, "Atlas training series"]),
    ("footprint", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(c1Index=1, l1H=8, l1W=8)),
     OutOfBoundsError, [V1API, "read span", "source"]),
    ("dst-footprint", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(repeatTime=2, jumpStride=2, repeatMode=1)),
     OutOfBoundsError, [V1API, "write span", "destination"]),
    ("pad-value-type", P910, "A2", "int8", lambda d, s: fc.LoadData(d, s, PV1(padValue=-129)), ParamTypeError,
     [V1API, "padValue=-129", "int8_t", "Atlas training series"]),
    ("padlist", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(padList=(0, 256, 0, 0))), RangeError,
     [V1API, "padList right=256 is outside [0, 255]", "Atlas training series"]),
    ("boundary-wraps-before-src", P310P, "A2", "half",
     lambda d, s: (fc.SetLoadDataBoundary(1024, pipe=d.pipe), fc.LoadData(d[0], s[16384], PV1(l1H=1, l1W=16))),
     OutOfBoundsError, ["SetLoadDataBoundary(32768)", V1API, "Atlas inference series AI Core"]),
]


@pytest.mark.parametrize("case", ERRORS_V1, ids=[c[0] for c in ERRORS_V1])
def test_error_3d_v1(case):
    expect_error_3d(*case[1:], n_src=24576 if "boundary" in case[0] else 256, n_dst=256)


def test_v1_ctype_overflow_at_construction():
    with pytest.raises(ParamTypeError, match=re.escape("LoadData3DParamsV1: leftTopH=-32769 does not fit int16_t")):
        PV1(leftTopH=-32769)


WARNINGS_V1 = [
    ("experimental", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1()),
     [V1API, "is experimental", "check it on hardware", "Atlas training series"]),
    ("experimental-noop", P310P, "B2", "int8", lambda d, s: fc.LoadData(d, s, PV1(repeatTime=0)),
     [V1API, "is experimental", "Atlas inference series AI Core"]),
    ("rows-beyond", P910, "A2", "half", lambda d, s: fc.LoadData(d, s, PV1(l1H=2, l1W=4)),
     [V1API, "windows run past the bottom of the padded 2 x 4 map", "Atlas training series"]),
    ("experimental-csize", P310P, "A2", "int8", lambda d, s: fc.LoadData(d, s, PV1(cSize=1)),
     [V1API, "is experimental", "cSize=1 reads a map of 8-byte pixels (8 channels each) and packs 4 kernel taps "
      "per fractal row", "Atlas inference series AI Core"]),
    ("experimental-ub", P910, "VECIN", "half", lambda d, s: fc.LoadData(d, s, PV1()),
     [V1API, "is experimental", "Atlas training series"]),
]


@pytest.mark.parametrize("case", WARNINGS_V1, ids=[c[0] for c in WARNINGS_V1])
def test_warning_3d_v1(case):
    test_warning_3d(case)


def test_v1_warns_on_every_call():
    _, src, dst = setup(P910, "A1", "A2", "half", n_src=256, n_dst=256)
    for _ in range(3):
        with pytest.warns(fc.FastCopyWarning, match="is experimental"):
            fc.LoadData(dst, src, PV1())


def test_v1_registers_written_by_the_call_and_read_later():
    from fastcopy.cube.registers import FMATRIX_L, PADDING

    pipe, src, dst = setup(P310P, "A1", "A2", "half", n_src=256, n_dst=256)
    with pytest.warns(fc.FastCopyWarning):
        fc.LoadData(dst, src, PV1(padList=(1, 0, 0, 0), padValue=np.float16(-3), repeatTime=0))  # sets registers
        assert pipe.state[FMATRIX_L] == (4, 4, (1, 0, 0, 0))
        assert pipe.state[PADDING] == int(np.float16(-3).view(np.uint16))
        fc.LoadData(dst, src, PV1(l1H=9, leftTopW=-1, padValue=np.float16(0)), config=NOCFG)
    assert dst.numpy()[0] == -3 and dst.numpy()[16] == src.numpy()[0]  # row 0 is the pad column, row 1 pixel 0
    fc.SetFmatrix(2, 8, (0, 0, 0, 0), pipe=pipe)
    fc.SetLoadDataPaddingValue(np.float16(5), pipe=pipe)
    with pytest.warns(fc.FastCopyWarning):
        fc.LoadData(dst, src, PV1(leftTopH=-1), config=NOCFG)  # row -1 of the 2 x 8 map: padding from the register
    assert (dst.numpy()[:8 * 16] == 5).all() and dst.numpy()[8 * 16] == src.numpy()[0]


def test_v1_boundary_counts_32_byte_units():
    from fastcopy.reference import img2col as iref

    pipe, src, dst = setup(P310P, "A1", "A2", "half", n_src=20480, n_dst=256)  # src at L1 byte 0, 40960 bytes
    fc.SetLoadDataBoundary(1024, pipe=pipe)  # 1024 x 32 = 32768 bytes
    p = PV1(l1H=8, l1W=16, c1Index=8)  # channel block 8 starts at L1 byte 32768 -> wraps to 0
    want, want_def = tensor_bytes(dst)
    s, s_def = tensor_bytes(src)
    with pytest.warns(fc.FastCopyWarning):
        fc.LoadData(dst, src, p)
    iref.load3d_v1(want, want_def, s, s_def, es=2, H=8, W=16, pads=(0, 0, 0, 0), c1Index=8, fetchFilterW=0,
                   fetchFilterH=0, leftTopW=0, leftTopH=0, strideW=1, strideH=1, filterW=1, filterH=1,
                   dilationFilterW=1, dilationFilterH=1, jumpStride=1, repeatMode=0, repeatTime=1, pad_bytes=b"",
                   boundary=32768, src_l1=0, poison=pipe.poison)
    got, got_def = tensor_bytes(dst)
    assert np.array_equal(got, want) and np.array_equal(got_def, want_def)
    assert np.array_equal(dst.numpy()[:256].view(np.uint16), src.numpy()[:256].view(np.uint16))


# ------------------------------------------------------------------------------------------------ 4-bit types
def _b4_3d(d, s, rpt=True, **kw):
    if rpt:
        fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(), pipe=d.pipe)
    base = dict(padList=(0, 0, 0, 0), l1H=4, l1W=4, channelSize=64, kExtension=64, mExtension=16, kStartPt=0,
                mStartPt=0, padValue=0)
    base.update(kw)
    return fc.LoadData(d, s, fc.LoadData3DParamsV2(**base))


I4, E2M1, E1M2 = "int4b_t", "fp4x2_e2m1_t", "fp4x2_e1m2_t"
V2API, TAPI = "LoadData(LoadData2DParamsV2)", "LoadDataWithTranspose"
ERRORS_B4 = [
    ("2d-gm", A2, "GM", "A2", I4, lambda d, s: fc.LoadData(d, s, L2(0, 1, 1)), UnsupportedError,
     ["LoadData(LoadData2DParams)", "dtype int4b_t is not supported on GM->A2", "Atlas A2"]),
    ("2d-910", P910, "A1", "A2", I4, lambda d, s: fc.LoadData(d, s, L2(0, 1, 1)), UnsupportedError,
     ["dtype int4b_t is not supported", "Atlas training series"]),
    ("2d-transpose", P310P, "A1", "B2", I4, lambda d, s: fc.LoadData(d, s, L2(0, 1, 1, 0, 0, True)),
     UnsupportedError, ["ifTranspose=true with int4b_t", "transpose off", "Atlas inference series AI Core"]),
    ("v2-mstep", P350, "A1", "A2", E2M1, lambda d, s: fc.LoadData(d, s, V2(0, 0, 2, 1, 2, 4, True)), RangeError,
     [V2API, "mStep=2 is not a multiple of 4", "fp4x2_e2m1_t", "Atlas 350"]),
    ("v2-int4", P350, "A1", "A2", I4, lambda d, s: fc.LoadData(d, s, V2(0, 0, 1, 1, 1, 1)), UnsupportedError,
     [V2API, "dtype int4b_t is not supported", "Atlas 350"]),
    ("v2-footprint", P350, "A1", "B2", E1M2, lambda d, s: fc.LoadData(d, s, V2(0, 0, 12, 1, 12, 4, True)),
     OutOfBoundsError, [V2API, "span is bytes [0, 6144)", "has 4096 bytes"]),
    ("ldwt-a2", A2, "A1", "A2", I4, lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1, 3)), UnsupportedError,
     [TAPI, "dtype int4b_t is not supported on A1->A2", "Atlas A2"]),
    ("ldwt-350", P350, "B1", "B2", E2M1, lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 1, 1, 3)),
     UnsupportedError, [TAPI, "dtype fp4x2_e2m1_t is not supported on B1->B2", "Atlas 350"]),
    ("ldwt-align", A2, "B1", "B2", I4, lambda d, s: fc.LoadDataWithTranspose(d[32], s, T1(0, 1, 1, 3)),
     AlignmentError, [TAPI, "dst start address", "512-byte aligned", "Atlas A2"]),
    ("ldwt-footprint", A2, "B1", "B2", I4, lambda d, s: fc.LoadDataWithTranspose(d, s, T1(1, 2, 1, 3)),
     OutOfBoundsError, [TAPI, "read span", "source"]),
    ("dn2nz-odd", P350, "GM", "A1", E1M2, lambda d, s: fc.DataCopy(d, s, DN(1, 15, 4, 0, 16, 16, 1, 0)), RangeError,
     ["DataCopy(Dn2NzParams)", "nValue=15 is odd for fp4x2_e1m2_t", "Atlas 350"]),
    ("dn2nz-smallc0", P350, "GM", "B1", E2M1,
     lambda d, s: fc.DataCopy(d, s, DN(1, 16, 5, 0, 16, 16, 1, 0), small_c0=True),
     RangeError, ["dValue=5 is outside [0, 4] stored GM rows with enableSmallC0", "Atlas 350"]),
    ("dn2nz-int4", P350, "GM", "A1", I4, lambda d, s: fc.DataCopy(d, s, DN(1, 16, 4, 0, 16, 16, 1, 0)),
     UnsupportedError, ["DataCopy(Dn2NzParams)", "dtype int4b_t is not supported", "Atlas 350"]),
    ("3d-l0b", A2, "B1", "B2", I4, lambda d, s: _b4_3d(d, s), UnsupportedError,
     ["LoadData(LoadData3DParamsV2)", "dtype int4b_t is not supported on B1->B2", "Atlas A2"]),
    ("3d-350", P350, "A1", "A2", I4, lambda d, s: _b4_3d(d, s), UnsupportedError,
     ["LoadData(LoadData3DParamsV2)", "dtype int4b_t is not supported", "Atlas 350"]),
    ("3d-channels", A2, "A1", "A2", I4, lambda d, s: _b4_3d(d, s, channelSize=32), UnsupportedError,
     ["channelSize=32 is not a multiple of C0=64 channels for int4b_t", "not emulated", "Atlas A2"]),
    ("3d-kstart", A2, "A1", "A2", I4, lambda d, s: _b4_3d(d, s, channelSize=128, kStartPt=32), RangeError,
     ["kStartPt=32 is not a multiple of C0=64 elements for int4b_t", "Atlas A2"]),
    ("3d-kext", P310P, "A1", "A2", I4, lambda d, s: _b4_3d(d, s, rpt=False, kExtension=96), RangeError,
     ["kExtension=96 is not a multiple of C0=64 elements for int4b_t", "Atlas inference series AI Core"]),
    ("3d-pad", A2, "A1", "A2", I4, lambda d, s: _b4_3d(d, s, padList=(1, 0, 0, 0), padValue=1), RangeError,
     ["pad value of an int4b_t load must be 0", "Atlas A2"]),
    ("3d-transpose", A2, "A1", "A2", I4, lambda d, s: _b4_3d(d, s, enTranspose=True), UnsupportedError,
     ["enTranspose=true is not supported for int4b_t", "Atlas A2"]),
]


@pytest.mark.parametrize("case", ERRORS_B4, ids=[c[0] for c in ERRORS_B4])
def test_error_b4(case):
    test_error(case)


WARNINGS_B4 = [
    ("ldwt-overlap", A2, "B1", "B2", I4, lambda d, s: fc.LoadDataWithTranspose(d, s, T1(0, 2, 1, 0, 0)),
     [TAPI, "overlap", "dstGap=0, dstFracGap=0: the 4 output fractals", "Atlas A2"]),
    ("v2-overlap", P350, "A1", "A2", E2M1, lambda d, s: fc.LoadData(d, s, V2(0, 0, 8, 1, 8, 1, True)),
     [V2API, "overlap", "dstStride=1 is below the transposed region's 4 fractals per column", "Atlas 350"]),
    ("v2-gm-transpose", P350, "GM", "A1", E1M2, lambda d, s: fc.LoadData(d, s, V2(0, 0, 4, 1, 4, 4, True)),
     [V2API, "ifTranspose=true is ignored", "Atlas 350"]),
    ("dn2nz-smallc0", P350, "GM", "A1", E2M1,
     lambda d, s: fc.DataCopy(d, s, DN(1, 16, 3, 0, 16, 1, 1, 0), small_c0=True),
     ["enableSmallC0 is experimental", "check it on hardware"]),
]


@pytest.mark.parametrize("case", WARNINGS_B4, ids=[c[0] for c in WARNINGS_B4])
def test_warning_b4(case):
    test_warning(case)


def test_v1_csize1_is_im2col_of_a_four_channel_map():
    """cSize = 1 (half): a map of 4-channel pixels; a fractal row is one window's 2 x 2 kernel taps x 4 channels
    (channels fastest, then kernel column, then kernel row), as a plain im2col of the map would give; mode 0 then
    moves 4 taps per repeat."""
    H = W = 4
    pipe, src, dst = setup(P310P, "A1", "A2", "half", n_src=H * W * 4 * 2, n_dst=512)
    fmap = src.numpy()[:H * W * 4].reshape(H, W, 4)
    with pytest.warns(fc.FastCopyWarning, match="cSize=1 reads a map of 8-byte pixels"), \
            pytest.warns(fc.FastCopyWarning, match="windows run past the bottom of the padded 4 x 4 map"):
        fc.LoadData(dst, src, PV1(l1H=H, l1W=W, filterW=2, filterH=2, cSize=1, padList=(0, 0, 0, 1),
                                  padValue=np.float16(-1)))
    padded = np.concatenate([fmap, np.full((1, W, 4), -1, np.float16)])  # padBottom 1: row 4 is padding
    wins = [(h, w) for h in range(4) for w in range(3)][:16]  # 3 windows per row (w + 2 > 4 wraps), 12 < 16 ...
    wins += [(4, 0), (4, 1), (4, 2), (5, 0)]  # ... then the walk goes on below the map (warned), reading padding
    rows = [np.concatenate([padded[h + kh, w + kw] if h + kh < 5 else np.full(4, -1, np.float16)
                            for kh in range(2) for kw in range(2)]) for h, w in wins[:16]]
    assert np.array_equal(dst.numpy()[:256].reshape(16, 16), np.array(rows))


def test_v1_to_ub_writes_what_l0a_gets():
    """The L1 -> UB form writes the fractals L0A would get, from any 32-byte aligned UB start."""
    p = PV1(l1H=4, l1W=8, filterW=3, filterH=3, padList=(1, 1, 1, 1), leftTopW=-1, leftTopH=-1, repeatTime=3,
            jumpStride=2, padValue=np.float16(2))
    got = []
    for dpos, at in (("A2", 0), ("VECCALC", 16)):
        _, src, dst = setup(P910, "A1", dpos, "half", n_src=512, n_dst=3072)
        with pytest.warns(fc.FastCopyWarning, match="is experimental"):
            fc.LoadData(dst[at], src, p)
        b, d = tensor_bytes(dst)
        got.append((b[2 * at:2 * at + 5 * 512], d[2 * at:2 * at + 5 * 512]))
    assert np.array_equal(got[0][0], got[1][0]) and np.array_equal(got[0][1], got[1][1])
    assert got[0][1].all() and (got[0][0][512:1024].view(np.float16) == 7).all()  # fractal 1 untouched (jump 2)
