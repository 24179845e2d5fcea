"""Fixpipe and DataCopy out of L0C: the worked vectors through the public API, property tests against the
reference over products, dtype rows, quantisation modes and layouts, and one test per validation rule."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cube_out_util import array, bits, for_product, fresh, place, products, VECTORS
from fastcopy import (CFG_COLUMN_MAJOR, CFG_NZ, CFG_ROW_MAJOR, AlignmentError, AscendCUtils, DataCopy,
                      DataCopyCO12DstParams, FastCopyWarning, Fixpipe, FixpipeConfig, FixpipeParamsArch3510,
                      FixpipeParamsV220, GlobalTensor, Nz2DnParams, Nz2NdParams, OutOfBoundsError, ParamError, Product,
                      RangeError, SetFixpipeNz2ndFlag, SetFixpipePreQuantFlag, TPosition, UnsupportedError, CO2Layout)
from fastcopy.cube import quant
from fastcopy.reference import cube_fixpipe

P = Product
FIXPIPE_VECTORS = [v["name"] for v in VECTORS if v["name"].startswith(("fixpipe", "datacopy"))]


def _l0c(spec, pipe):
    dt = np.dtype(np.float32 if spec["dtype"] == "float32" else np.int32)
    if "values" in spec:
        arr = array(spec)
    elif "init" in spec:
        text = spec["init"].replace(" ", "")
        base = {"arange(0,1024)+0.5": np.arange(1024) + 0.5, "arange(0,512)*0.25": np.arange(512) * 0.25,
                "arange(1,513)": np.arange(1, 513)}[text]
        arr = base.astype(dt)
    else:
        arr = np.zeros(256, dt)
        row = [float(v) if isinstance(v, str) else v for v in spec["row0"]]
        arr[:len(row)] = np.array(row, np.float64 if dt.kind == "f" else np.int64).astype(dt)
    size = max(arr.size, 256)
    return place(pipe, TPosition.CO1, arr, size=size)


def _gm(v, exp):
    want = array(exp) if ("values" in exp or "bits" in exp) else None
    init = v.get("dst_init", {}).get("GM", {})
    n = init.get("length", want.size)
    dt = want.dtype
    text = init.get("init", "zeros")
    if text.startswith("fill(bits"):
        host = np.full(n, int(text.split()[-1].rstrip(")"), 16), {1: np.uint8, 2: np.uint16, 4: np.uint32}[
            dt.itemsize]).view(dt)
    elif text.startswith("fill("):
        host = np.full(n, float(text[5:-1]), dt)
    else:
        host = np.zeros(n, dt)
    return host, want


def _params(v, product, struct):
    raw = for_product(v["params"], product)
    raw = dict(raw.get("DataCopyCO12DstParams", raw))
    raw.pop("unit", None)
    sub = raw.pop("params(Nz2DnParams)", None)
    if "deqScalar" in raw:
        raw["deqScalar"] = int(raw["deqScalar"], 16)
    if struct is FixpipeParamsArch3510:
        nd = {k: raw.pop(k) for k in ("ndNum", "srcNdStride", "dstNdStride") if k in raw}
        if sub is not None:
            raw["params"] = Nz2DnParams(**sub)
        elif nd:
            raw["params"] = Nz2NdParams(**nd)
    return struct(**raw)


def _config(v):
    api = v["api"]
    if "COLUMN_MAJOR" in api:
        return CFG_COLUMN_MAJOR
    return CFG_NZ if "CFG_NZ" in api else CFG_ROW_MAJOR


@pytest.mark.parametrize("name", FIXPIPE_VECTORS)
def test_vectors(name):
    v = next(x for x in VECTORS if x["name"] == name)
    for product in products(v):
        structs = [None] if name.startswith("datacopy") else (
            [FixpipeParamsArch3510] if (product is P.ATLAS_350 and "Arch3510" in v["api"] and "V220" not in v["api"])
            else [FixpipeParamsV220] + ([FixpipeParamsArch3510] if product is P.ATLAS_350 and "NZ" not in
                                        _config(v).format.name else []))
        for struct in structs:
            pipe = fresh(product)
            if "CTRL48" in v.get("state", {}):
                AscendCUtils.SetOverflow(v["state"]["CTRL48"], pipe=pipe)
            src_spec = for_product(v["src"], product)
            src = _l0c(src_spec["L0C"], pipe)
            exp = for_product(v["expected"], product)["GM"]
            host, want = _gm(v, exp)
            gm = GlobalTensor(host)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FastCopyWarning)
                if struct is None:
                    DataCopy(gm, src, _params(v, product, DataCopyCO12DstParams))
                else:
                    params = _params(v, product, struct)
                    if "cbufWorkspace" in src_spec:
                        words = np.array([int(h, 16) for h in src_spec["cbufWorkspace"]["hex"]], np.uint64)
                        ws = place(pipe, TPosition.C1, words)
                        Fixpipe(gm, src, ws, params, config=_config(v))
                    else:
                        cfg = _config(v)
                        Fixpipe(gm, src, params, config=cfg)
            assert np.array_equal(bits(host), bits(want)), (name, product, struct)


# ------------------------------------------------------------------------------------------------ properties
ROWS = {  # (product, L0C dtype) -> [(mode, dst dtype)]
}
for (mode, u), rule in quant.MODES.items():
    if rule.experimental:
        continue
    for t in rule.dst:
        for product in (P.ATLAS_A2, P.ATLAS_200I_500_A2, P.ATLAS_350):
            if rule.only_350 and product is not P.ATLAS_350:
                continue
            if t == np.dtype(ml_dtypes.float8_e4m3fn) and product is not P.ATLAS_350:
                continue
            if t == np.dtype(ml_dtypes.bfloat16) and u == np.int32 and product is not P.ATLAS_350:
                continue
            ROWS.setdefault(product, []).append((mode, u, t))
CASES = [(p, m, u, t) for p, rows in ROWS.items() for (m, u, t) in rows]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(CASES), st.sampled_from(["ND", "NZ", "DN"]), st.integers(1, 40), st.integers(1, 3),
       st.integers(0, 2**32 - 1), st.booleans(), st.integers(1, 3))
def test_fixpipe_matches_reference(case, layout, m, n16, seed, relu, num):
    product, mode, u, t = case
    rng = np.random.default_rng(seed)
    es_t = t.itemsize
    if layout == "DN" and product is not P.ATLAS_350:
        layout = "ND"
    n = 16 * n16 if layout == "NZ" else int(rng.integers(1, 16 * n16 + 1))
    if layout != "ND":
        num = 1 if layout == "NZ" else num
    m1 = -(-m // 16)
    src_stride = 16 * m1 + int(rng.integers(0, 3))  # 16-element rows between Z columns
    pipe = fresh(product)
    matrix = n16 * src_stride * 16  # elements of one source matrix
    if num > 1 and layout == "ND" and product is not P.ATLAS_350:
        snd_units = -(-matrix // 256)  # 1024 B units
        snd = snd_units * 256
    else:
        snd_units = matrix // 16 if num > 1 else 0  # 16-element units
        snd = snd_units * 16
    total = max((num - 1) * snd + matrix, 256)
    if u == np.float32:
        x = (rng.standard_normal(total) * np.exp2(rng.integers(-8, 12, total))).astype(np.float32)
    else:
        x = rng.integers(-2**20, 2**20, total).astype(np.int32)
    src = place(pipe, TPosition.CO1, x)
    rule = quant.MODES[(mode, u)]
    scales = rng.uniform(-3, 3, n).astype(np.float32)
    words = np.array([quant.make_word(float(s), offset=int(rng.integers(-5, 5)), sign=t == np.int8)
                      for s in scales], np.uint64)
    q = int(words[0])
    if layout == "ND":
        dst_stride = n + int(rng.integers(0, 3))
        dnd = m * dst_stride + int(rng.integers(0, 5))
        size = (num - 1) * dnd + m * dst_stride + 16
    elif layout == "DN":
        dst_stride = m + int(rng.integers(0, 3))
        dnd = n * dst_stride + int(rng.integers(0, 5))
        size = (num - 1) * dnd + n * dst_stride + 16
    else:
        w = 32 if es_t == 1 else 16
        col_bytes = m * w * es_t
        dst_stride = -(-col_bytes // 32) + int(rng.integers(0, 2))  # 32 B units (V220 on A2/310B)
        dnd = 0
        size = (n16 + 1) * dst_stride * 32 // es_t + 64
    host = rng.integers(0, 255, size * es_t, dtype=np.uint8).view(t).copy()
    before = host.copy()
    gm = GlobalTensor(host)
    arch = product is P.ATLAS_350 and layout != "NZ"
    kw = dict(nSize=n, mSize=m, srcStride=src_stride, dstStride=dst_stride, quantPre=mode.value, reluEn=relu,
              deqScalar=q if rule.scaled and not rule.vector else None)
    cfg = {"ND": CFG_ROW_MAJOR, "NZ": CFG_NZ, "DN": CFG_COLUMN_MAJOR}[layout]
    if arch:
        kw["params"] = (Nz2NdParams(num, snd_units, dnd) if layout == "ND"
                        else Nz2DnParams(num, snd // 16, dnd, 1))
        params = FixpipeParamsArch3510(**kw)
    else:
        if layout == "ND":
            kw.update(ndNum=num, srcNdStride=snd_units, dstNdStride=dnd)
        if product is P.ATLAS_350 and layout == "NZ":
            kw["dstStride"] = dst_stride * 32 // es_t  # elements of T there
        params = FixpipeParamsV220(**kw)
    args = [gm, src]
    if rule.vector:
        args.append(place(pipe, TPosition.C1, words))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        Fixpipe(*args, params, config=cfg)
    want = before.copy()
    cube_fixpipe.fixpipe(want.view(np.uint8), x, layout=layout, n=n, m=m, src_stride=16 * src_stride,
                         dst_stride=dst_stride * (32 if layout == "NZ" else 1), num=num, snd=snd, dnd=dnd, rs=1,
                         mode=mode.value, t=t, words=words if rule.vector else [q] * n, relu=relu,
                         ctrl48=product is not P.ATLAS_200I_500_A2, arch3510=product is P.ATLAS_350)
    assert np.array_equal(bits(host), bits(want)), (product, mode, u, t, layout)


# ---------------------------------------------------------------------------------------------- state + DataCopy
def test_datacopy_reads_the_state_fixpipe_left():
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.arange(512, dtype=np.int32))
    q = quant.make_word(0.5)
    out1 = np.zeros(32, np.float16)
    Fixpipe(GlobalTensor(out1), src, FixpipeParamsV220(nSize=16, mSize=2, srcStride=2, dstStride=16,
                                                       quantPre="DEQF16", deqScalar=q))
    out2 = np.zeros(32, np.float16)
    SetFixpipeNz2ndFlag(1, 0, 0, pipe=pipe)
    DataCopy(GlobalTensor(out2), src, DataCopyCO12DstParams(nSize=16, mSize=2, dstStride=16, srcStride=2,
                                                            quantPre="DEQF16", nz2ndEn=True))
    assert np.array_equal(out1, out2) and out1[17] == np.float16(8.5)


def test_datacopy_errors_on_unset_state():
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.arange(256, dtype=np.int32))
    out = np.zeros(16, np.float16)
    with pytest.raises(ParamError, match="reads QUANT_PRE \\(SetFixpipePreQuantFlag\\), which was never set"):
        DataCopy(GlobalTensor(out), src, DataCopyCO12DstParams(16, 1, 1, 1, "DEQF16"))
    SetFixpipePreQuantFlag(quant.make_word(2.0), pipe=pipe)
    with pytest.raises(ParamError, match="SetFixpipeNz2ndFlag, which were never set"):
        DataCopy(GlobalTensor(out), src, DataCopyCO12DstParams(16, 1, 16, 1, "DEQF16", nz2ndEn=True))
    assert (out == 0).all()


# --------------------------------------------------------------------------------------------------- checker
def _setup(product="A2", u=np.float32, t=np.float32, n=256):
    pipe = fresh(product)
    src = place(pipe, TPosition.CO1, np.arange(1024).astype(u))
    host = np.full(n, 3, t)
    return pipe, src, host, GlobalTensor(host)


def _raises(exc, match, host, *args, **kw):
    before = host.copy()
    with pytest.raises(exc, match=match):
        Fixpipe(*args, **kw)
    assert np.array_equal(bits(host), bits(before))


def _v(**kw):
    base = dict(nSize=16, mSize=16, srcStride=16, dstStride=16)
    base.update(kw)
    return FixpipeParamsV220(**base)


def test_error_product_without_fixpipe():
    pipe = fresh("910")
    src = place(pipe, TPosition.CO1, np.zeros(256, np.float32))
    host = np.zeros(256, np.float32)
    _raises(UnsupportedError, "Fixpipe: there is no way out of L0C here on Atlas training", host, GlobalTensor(host),
            src, _v())


def test_error_path():
    pipe, src, host, gm = _setup("A2")
    ub = pipe.alloc(TPosition.VECOUT, "float", 256)
    with pytest.raises(UnsupportedError, match="L0C -> UB is not a path \\(destinations: GM, L1\\) on Atlas A2"):
        Fixpipe(ub, src, _v())


def test_error_dtype_row():
    pipe, src, host, gm = _setup("A2", t=np.int32)
    _raises(UnsupportedError, "float -> int32_t is not supported L0C -> GM", host, gm, src, _v())


def test_error_mode_not_in_row():
    pipe, src, host, gm = _setup("A2", t=np.float16)
    _raises(UnsupportedError, "quantPre=DEQF16 does not convert float -> half on Atlas A2", host, gm, src,
            _v(quantPre="DEQF16", deqScalar=0x3F800000))


def test_error_350_only_mode():
    pipe, src, host, gm = _setup("A2", t=np.float16)
    _raises(UnsupportedError, "quantPre=QF322F16_PRE exists only on Atlas 350", host, gm, src,
            _v(quantPre="QF322F16_PRE", deqScalar=0x3F800000))


def test_error_nsize_range():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "nSize=4096 is outside \\[0, 4095\\] columns", host, gm, src, _v(nSize=4096))


def test_error_msize_nd_limit():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "mSize=8193 is outside \\[0, 8192\\] rows for an ND output with FixpipeParamsV220", host, gm,
            src, _v(mSize=8193))


def test_error_unit_flag():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "unitFlag=1 is not one of 0, 2, 3", host, gm, src, _v(unitFlag=1))


def test_error_dst_stride_zero():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "dstStride=0; it must be non-zero", host, gm, src, _v(dstStride=0))


def test_error_nz_nsize_multiple():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "nSize=24 is not a multiple of 16 \\(NZ output\\)", host, gm, src, _v(nSize=24),
            config=CFG_NZ)


def test_error_channel_split_types():
    pipe, src, host, gm = _setup(t=np.float16)
    _raises(UnsupportedError, "channel split needs float -> float, NoQuant, NZ output", host, gm, src,
            _v(isChannelSplit=True, quantPre="F322F16"), config=CFG_NZ)


def test_error_channel_split_unit_flag():
    pipe, src, host, gm = _setup()
    _raises(UnsupportedError, "channel split with unitFlag=2", host, gm, src, _v(isChannelSplit=True, unitFlag=2),
            config=CFG_NZ)


def test_error_l1_row_major_a2():
    pipe, src, host, gm = _setup(t=np.float16)
    l1 = pipe.alloc(TPosition.A1, "half", 256)
    with pytest.raises(UnsupportedError, match="L0C -> L1 writes NZ only; config=ROW_MAJOR on Atlas A2"):
        Fixpipe(l1, src, _v(quantPre="F322F16"))


def test_error_l1_noquant_a2():
    pipe, src, host, gm = _setup()
    l1 = pipe.alloc(TPosition.A1, "float", 256)
    with pytest.raises(UnsupportedError, match="float -> float is not supported L0C -> L1"):
        Fixpipe(l1, src, _v(), config=CFG_NZ)


def test_error_nz2dn_needs_arch3510():
    pipe, src, host, gm = _setup("350")
    _raises(UnsupportedError, "NZ2DN \\(CFG_COLUMN_MAJOR\\) needs FixpipeParamsArch3510", host, gm, src, _v(),
            config=CFG_COLUMN_MAJOR)


def test_error_nz2dn_c0_stride_zero():
    pipe, src, host, gm = _setup("350")
    p = FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16, params=Nz2DnParams(1, 0, 0, 0))
    _raises(RangeError, "srcNzC0Stride=0; it must be at least 1", host, gm, src, p, config=CFG_COLUMN_MAJOR)


def test_error_nz2dn_c0_stride_with_unit_flag():
    pipe, src, host, gm = _setup("350")
    p = FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16, unitFlag=3,
                              params=Nz2DnParams(1, 0, 0, 2))
    _raises(UnsupportedError, "srcNzC0Stride=2 with unitFlag=3", host, gm, src, p, config=CFG_COLUMN_MAJOR)


def test_error_arch3510_on_a2():
    pipe, src, host, gm = _setup("A2")
    _raises(UnsupportedError, "FixpipeParamsArch3510 exists only on Atlas 350", host, gm, src,
            FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16))


def _ub_pair(pipe):
    cfg = FixpipeConfig(CO2Layout.ROW_MAJOR, isToUB=True)
    return pipe.alloc(TPosition.VECOUT, "float", 4096), pipe.alloc(TPosition.VECOUT, "float", 4096), cfg


def test_error_dual_mode_3():
    pipe, src, host, gm = _setup("350")
    ub0, ub1, cfg = _ub_pair(pipe)
    with pytest.raises(RangeError, match="dualDstCtl=3 is reserved"):
        Fixpipe(ub0, src, FixpipeParamsArch3510(nSize=32, mSize=16, srcStride=16, dstStride=32, dualDstCtl=3),
                config=cfg, dst1=ub1)


def test_error_dual_with_quant():
    pipe, src, host, gm = _setup("350")
    ub0, ub1, cfg = _ub_pair(pipe)
    with pytest.raises(UnsupportedError, match="dualDstCtl=1 with quantisation or ReLU"):
        Fixpipe(ub0, src, FixpipeParamsArch3510(nSize=32, mSize=16, srcStride=16, dstStride=32, dualDstCtl=1,
                                                reluEn=True), config=cfg, dst1=ub1)


def test_error_dual_odd_rows_and_columns():
    pipe, src, host, gm = _setup("350")
    ub0, ub1, cfg = _ub_pair(pipe)
    with pytest.raises(RangeError, match="mSize=15 must be even"):
        Fixpipe(ub0, src, FixpipeParamsArch3510(nSize=32, mSize=15, srcStride=16, dstStride=32, dualDstCtl=1),
                config=cfg, dst1=ub1)
    with pytest.raises(RangeError, match="nSize=16 must be a multiple of 32"):
        Fixpipe(ub0, src, FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=32, dualDstCtl=2),
                config=cfg, dst1=ub1)


def test_dual_destination_split_n():
    pipe, src, host, gm = _setup("350")
    ub0, ub1, cfg = _ub_pair(pipe)
    Fixpipe(ub0, src, FixpipeParamsArch3510(nSize=32, mSize=16, srcStride=16, dstStride=16, dualDstCtl=2),
            config=cfg, dst1=ub1)
    x = np.arange(1024, dtype=np.float32)
    assert np.array_equal(ub0.numpy()[:256], x[:256]) and np.array_equal(ub1.numpy()[:256], x[256:512])


def test_error_vector_mode_without_workspace():
    pipe, src, host, gm = _setup(t=np.int8)
    _raises(ParamError, "VQF322B8_PRE is a vector mode: pass cbufWorkspace", host, gm, src,
            _v(quantPre="VQF322B8_PRE"))


def test_error_workspace_with_scalar_mode():
    pipe, src, host, gm = _setup(t=np.int8)
    ws = place(pipe, TPosition.C1, np.zeros(16, np.uint64))
    _raises(ParamError, "cbufWorkspace given with quantPre=QF322B8_PRE, which is not a vector mode", host, gm, src,
            ws, _v(quantPre="QF322B8_PRE", deqScalar=0x3F800000))


def test_error_scalar_word_missing():
    pipe, src, host, gm = _setup(t=np.int8)
    _raises(ParamError, "deqScalar is not set", host, gm, src, _v(quantPre="QF322B8_PRE"))


def test_error_scale_not_finite():
    pipe, src, host, gm = _setup(t=np.int8)
    _raises(RangeError, "the scale M1=.*inf, NaN or subnormal", host, gm, src,
            _v(quantPre="QF322B8_PRE", deqScalar=0x7F800000))


def test_warning_scale_low_bits_and_negative_word():
    pipe, src, host, gm = _setup(t=np.int8)
    with pytest.warns(FastCopyWarning, match="bits 12:0 of the scale are ignored"):
        Fixpipe(gm, src, _v(quantPre="QF322B8_PRE", deqScalar=0x3F800001))
    with pytest.warns(FastCopyWarning, match="deqScalar=-1082130432 is negative"):
        Fixpipe(gm, src, _v(quantPre="QF322B8_PRE", deqScalar=-1082130432))


def test_error_alignment_source():
    pipe, src, host, gm = _setup()
    _raises(AlignmentError, "the L0C source starts at byte 4, not a multiple of 64", host, gm, src[1], _v())


def test_error_alignment_nz_gm():
    pipe, src, host, gm = _setup()
    with pytest.raises(AlignmentError, match="the destination starts at byte 4 of GM, not a multiple of 32"):
        Fixpipe(gm[1], src, _v(), config=CFG_NZ)


def test_error_source_footprint():
    pipe, src, host, gm = _setup()
    _raises(OutOfBoundsError, "the source span is .* bytes from the L0C tensor start", host, gm, src,
            _v(nSize=32, srcStride=80))


def test_error_destination_footprint():
    pipe, src, host, gm = _setup(n=100)
    _raises(OutOfBoundsError, "the destination span is 1024 bytes from the GM tensor start, the tensor has 400",
            host, gm, src, _v())


def test_error_srcndstride_range():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "srcNdStride=0 is outside \\[1, 512\\]", host, gm, src, _v(ndNum=2, dstNdStride=300))


def test_warning_src_stride_overlap_and_dst_overlap():
    pipe, src, host, gm = _setup(n=1024)
    with pytest.warns(FastCopyWarning, match="srcStride=0 is below"):
        Fixpipe(gm, src, _v(nSize=32, srcStride=0, dstStride=32))
    with pytest.warns(FastCopyWarning, match="written more than once"):
        Fixpipe(gm, src, _v(nSize=32, dstStride=16))


def test_warning_v220_nz_on_350():
    pipe, src, host, gm = _setup("350")
    with pytest.warns(FastCopyWarning, match="means elements of T on Atlas 350"):
        Fixpipe(gm, src, _v(dstStride=256), config=CFG_NZ)


def test_warning_arch3510_unused_relu_fields():
    pipe, src, host, gm = _setup("350")
    with pytest.warns(FastCopyWarning, match="reluScalar=5 is not used by Fixpipe"):
        Fixpipe(gm, src, FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16, reluScalar=5))


def test_zero_size_noop_keeps_state_side_effect():
    pipe, src, host, gm = _setup(t=np.int8)
    with pytest.warns(FastCopyWarning, match="nothing is written"):
        Fixpipe(gm, src, _v(nSize=0, quantPre="QF322B8_PRE", deqScalar=0x3F800000))
    assert (host == 3).all()
    from fastcopy.cube import state

    assert pipe.state[state.QUANT_PRE] == 0x3F800000


# ------------------------------------------------------------------------------------- 310P L0C -> UB (provisional)
def test_310p_enhanced_copy_matrix_and_deq():
    from fastcopy import BlockMode, DataCopyEnhancedParams, DataCopyParams, DeqScale

    pipe = fresh("310P")
    src = place(pipe, TPosition.CO1, np.arange(-512, 512, dtype=np.int32))
    ub = pipe.alloc(TPosition.CO2, "int32_t", 1024)
    with pytest.warns(FastCopyWarning, match="emulated provisionally"):
        DataCopy(ub, src, DataCopyParams(2, 1, 1, 0), DataCopyEnhancedParams(BlockMode.BLOCK_MODE_MATRIX,
                                                                             DeqScale.DEQ_NONE, isRelu=True))
    x = np.arange(-512, 512)
    want = np.concatenate([np.maximum(x[:256], 0), np.maximum(x[512:768], 0)])
    assert np.array_equal(ub.numpy()[:512], want)
    h = pipe.alloc(TPosition.CO2, "half", 512)
    with pytest.warns(FastCopyWarning, match="provisionally"):
        DataCopy(h, src, DataCopyParams(1, 16, 0, 0), DataCopyEnhancedParams("BLOCK_MODE_VECTOR", "DEQ",
                                                                             int(np.float16(0.5).view(np.uint16))))
    assert np.array_equal(h.numpy()[:256], (x[:256] * 0.5).astype(np.float16))


def test_310p_enhanced_copy_errors():
    from fastcopy import DataCopyEnhancedParams, DataCopyParams

    pipe = fresh("310P")
    src = place(pipe, TPosition.CO1, np.zeros(256, np.int32))
    ub = pipe.alloc(TPosition.CO2, "int32_t", 256)
    with pytest.raises(UnsupportedError, match="blockMode=BLOCK_MODE_NORMAL is not supported"):
        DataCopy(ub, src, DataCopyParams(1, 1, 0, 0), DataCopyEnhancedParams())
    with pytest.raises(UnsupportedError, match="deqScale=DEQ8 is not emulated"):
        DataCopy(ub, src, DataCopyParams(1, 1, 0, 0), DataCopyEnhancedParams("BLOCK_MODE_MATRIX", "DEQ8"))
    with pytest.raises(OutOfBoundsError, match="the source span is 2048 bytes"):
        DataCopy(ub, src, DataCopyParams(2, 1, 0, 0), DataCopyEnhancedParams("BLOCK_MODE_MATRIX"))
    a2 = fresh("A2")
    with pytest.raises(UnsupportedError, match="exists only on Atlas inference series AI Core"):
        DataCopy(a2.alloc(TPosition.VECOUT, "int32_t", 256), place(a2, TPosition.CO1, np.zeros(256, np.int32)),
                 DataCopyParams(1, 1, 0, 0), DataCopyEnhancedParams("BLOCK_MODE_MATRIX"))


def test_310b_zero_sizes_are_errors_and_nd_stride_unit_warns():
    pipe, src, host, gm = _setup("310B")
    _raises(RangeError, "mSize=0 is outside its range, which starts at 1 with FixpipeParamsM300", host, gm, src,
            _v(mSize=0))
    SetFixpipeNz2ndFlag(2, 16, 64, pipe=pipe)
    out = np.zeros(512, np.float32)
    with pytest.warns(FastCopyWarning, match="srcNdStride=16 from SetFixpipeNz2ndFlag counts 16 elements"):
        DataCopy(GlobalTensor(out), src, DataCopyCO12DstParams(16, 4, 16, 16, "NoQuant", nz2ndEn=True))
    x = np.arange(1024, dtype=np.float32)
    assert np.array_equal(out[64:128], x[256:320])  # matrix 1 starts 16*16 elements later


def test_repeated_fixpipe_stays_exact():
    """Repeats of one NZ2ND Fixpipe take the prepared path: new L0C data, state written in between, undefined
    source bytes and an Mmad tile's padding must all still be seen."""
    from fastcopy.cube import state as cube_state

    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.arange(1024, dtype=np.float32))
    out = np.zeros((32, 20), np.float32)
    gm = GlobalTensor(out)
    p = FixpipeParamsV220(nSize=20, mSize=32, srcStride=32, dstStride=20)

    def want(x):
        return x.reshape(2, 32, 16).transpose(1, 0, 2).reshape(32, 32)[:, :20]

    for rnd in range(3):
        data = np.arange(1024, dtype=np.float32) * (rnd + 1)
        src[:] = data
        Fixpipe(gm, src, p)
        assert np.array_equal(out, want(data)), rnd
    SetFixpipeNz2ndFlag(3, 1, 1, pipe=pipe)
    Fixpipe(gm, src, p)
    assert pipe.state[cube_state.ND_PARA] == (1, 0, 0)  # the Fixpipe's own side effect, written again
    src.set_undefined()
    Fixpipe(gm, src, p)
    assert not gm.defined().any()


def test_error_nz_split_nsize_multiple_of_8():
    pipe, src, host, gm = _setup()
    _raises(RangeError, "nSize=20 is not a multiple of 8 \\(NZ output with channel split\\)", host, gm, src,
            _v(nSize=20, isChannelSplit=True), config=CFG_NZ)


def test_error_dual_with_relu_and_nz2dn():
    pipe = fresh("350")
    src = place(pipe, TPosition.CO1, np.zeros(1024, np.float32))
    ub0 = pipe.alloc(TPosition.VECOUT, "float", 512)
    ub1 = pipe.alloc(TPosition.VECOUT, "float", 512, addr=ub0.offset)
    to_ub = FixpipeConfig(CO2Layout.ROW_MAJOR, isToUB=True)
    p = FixpipeParamsArch3510(nSize=32, mSize=16, srcStride=16, dstStride=32, dualDstCtl=2, reluEn=True)
    with pytest.raises(UnsupportedError, match="dualDstCtl=2 with quantisation or ReLU on Atlas 350"):
        Fixpipe(ub0, src, p, config=to_ub, dst1=ub1)
    p = FixpipeParamsArch3510(nSize=32, mSize=16, srcStride=16, dstStride=16, dualDstCtl=1,
                              params=Nz2DnParams(1, 0, 0, 1))
    with pytest.raises(UnsupportedError, match="dualDstCtl=1 with an NZ2DN output on Atlas 350"):
        Fixpipe(ub0, src, p, config=FixpipeConfig(CO2Layout.COLUMN_MAJOR, isToUB=True), dst1=ub1)
    assert not ub0.defined().any()


def test_error_datacopy_vector_mode_without_table():
    """DataCopy's vector modes read the table of SetFixPipeConfig; never set (or left undefined by a vector-mode
    Fixpipe's staging) is an error."""
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.ones(256, np.int32))
    host = np.zeros(256, np.float16)
    p = DataCopyCO12DstParams(16, 16, 16, 16, "VDEQF16")
    with pytest.raises(ParamError, match="quantPre=VDEQF16 reads the quantisation table of SetFixPipeConfig, which "
                       "was never set"):
        DataCopy(GlobalTensor(host), src, p)
    assert not host.any()


def test_error_datacopy_l1_nd_or_split_on_a2():
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.ones(256, np.float32))
    l1 = pipe.alloc(TPosition.A1, "half", 256)
    SetFixpipeNz2ndFlag(1, 0, 0, pipe=pipe)
    for kw in (dict(nz2ndEn=True), dict(channelSplit=True)):
        with pytest.raises(UnsupportedError, match="L0C -> L1 writes NZ only: nz2ndEn and channelSplit must be "
                           "false on Atlas A2"):
            DataCopy(l1, src, DataCopyCO12DstParams(16, 16, 16, 16, "F322F16", **kw))
    assert not l1.defined().any()


def test_error_int16_destination():
    pipe, src, host, gm = _setup("A2", t=np.int16)
    _raises(UnsupportedError, "float -> int16_t is not supported L0C -> GM", host, gm, src, _v())


def test_warning_source_and_destination_share_memory():
    """A GlobalTensor over the L0C tensor's own bytes: computed with the normative semantics, with a warning."""
    pipe = fresh("A2")
    src = place(pipe, TPosition.CO1, np.arange(512, dtype=np.float32))
    alias = GlobalTensor(src.numpy()[256:].view(np.float16))
    with pytest.warns(FastCopyWarning, match="source and destination share memory"):
        Fixpipe(alias, src, _v(nSize=16, mSize=1, srcStride=1, dstStride=16, quantPre="F322F16"))
    assert np.array_equal(alias.numpy()[:16], np.arange(16, dtype=np.float16))

