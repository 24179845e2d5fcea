"""The checker of the cube-in APIs: one test per error (type, message naming API / field / value / range / unit /
product; destination bytes and definedness unchanged) and per warning (result still the documented one)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from dc_util import tensor_bytes

import fastcopy as fc
from fastcopy.errors import (AlignmentError, OutOfBoundsError, ParamTypeError, RangeError, UnsupportedError)

A2, P350, P910, P310P = "ATLAS_A2", "ATLAS_350", "ATLAS_TRAINING", "ATLAS_INFERENCE_AICORE"


def setup(product, src_pos, dst_pos, dtype="half", n_src=4096, n_dst=4096):
    pipe = fc.TPipe(product=product)
    dtype = fc.as_dtype(dtype)
    if src_pos == "GM":
        src = fc.GlobalTensor(np.arange(n_src).astype(dtype))
    else:
        src = pipe.alloc(src_pos, dtype, n_src)
        src.numpy()[:] = np.arange(n_src).astype(dtype)
        src.set_defined()
    if dst_pos == "GM":
        dst = fc.GlobalTensor(np.zeros(n_dst, dtype))
    else:
        dst = pipe.alloc(dst_pos, dtype, n_dst)
        dst.numpy()[:n_dst // 2] = 7
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
     UnsupportedError, ["int4b_t", "not emulated", "Atlas A2"]),
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
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        call(dst, src)
    text = " | ".join(str(w.message) for w in rec if issubclass(w.category, fc.FastCopyWarning))
    for part in parts:
        assert part in text, (part, text)
