"""Property tests: LoadData 2D / 2D V2 / LoadDataWithTranspose through the public API == the reference oracle
(fastcopy/reference/loaddata.py), bytes and definedness, over every product, path and element width of the
product tables."""

from __future__ import annotations

import numpy as np
import pytest
from dc_util import tensor_bytes
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fastcopy as fc
from fastcopy.dtypes import ASCEND_DTYPES
from fastcopy.products import (DN2NZ_PATHS, LOAD2D_ADDR_MODE, LOAD3D_PATHS, LOAD3D_V1_PATHS, LOAD2D_PATHS, LOAD2D_TRANSPOSE_PATHS, LOAD2D_TRANSPOSE_V2_PATHS,
                               LOAD2DV2_PATHS, Phys, Product, TPosition)
from fastcopy.cube.b4 import bits_of
from fastcopy.reference import loaddata as ref

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
F = 512
_INT4 = ASCEND_DTYPES["int4b_t"]
_POS = {Phys.L1: (TPosition.A1, TPosition.B1), Phys.L0A: (TPosition.A2,), Phys.L0B: (TPosition.B2,),
        Phys.UB: (TPosition.VECIN, TPosition.VECCALC)}


def cells(*tables):
    """Every (product, path, element width) of the product tables, with the dtypes of that width (the packed
    4-bit types are width 4): each is one parametrized test, the dtype drawn by hypothesis."""
    out = {}
    for table in tables:
        for product, paths in table.items():
            for path, dtypes in paths.items():
                for dt in sorted(dtypes, key=str):
                    out.setdefault((product, path, bits_of(dt)), []).append(dt)
    return [(product, path, tuple(dts)) for (product, path, _), dts in out.items()]


def cell_id(cell):
    product, path, dts = cell
    return f"{product.key}-{path[0]}-{path[1]}-b{bits_of(dts[0])}"


def tensor(pipe, rng, phys, dtype, nbytes, which, defined=0.9):
    """Random bytes, each element defined with probability ``defined`` (1: all, the known-defined fast paths)."""
    es = dtype.itemsize
    n = -(-nbytes // es)
    raw = rng.integers(0, 256, n * es, dtype=np.uint8)
    mask = rng.random(n) < defined
    if phys is Phys.GM:
        t = fc.GlobalTensor(raw.view(dtype), defined=False)
    else:
        t = pipe.alloc(_POS[phys][which % len(_POS[phys])], dtype, n)
        t.numpy().view(np.uint8)[:] = raw
    if defined >= 1:
        t.set_defined()
    else:
        t.set_defined(mask)
    return t


def run_both(product, path, dtype, src_bytes, dst_bytes, call, oracle, seed, defined=0.9):
    """``call`` on random tensors (``defined``: see :func:`tensor`) == ``oracle`` on their bytes and planes."""
    dtype = np.dtype(fc.as_dtype(dtype))
    rng = np.random.default_rng(seed)
    pipe = fc.TPipe(product=product)
    src = tensor(pipe, rng, path[0], dtype, src_bytes, seed, defined)
    dst = tensor(pipe, rng, path[1], dtype, dst_bytes, seed + 1, defined)
    s, s_def = tensor_bytes(src)
    want, want_def = tensor_bytes(dst)
    oracle(want, want_def, s, s_def, pipe.poison)
    call(dst, src)
    got, got_def = tensor_bytes(dst)
    bad = np.flatnonzero((got != want) | (got_def != want_def))
    assert bad.size == 0, f"{bad.size} bytes differ, first at {bad[:8]}"


@SETTINGS
@pytest.mark.parametrize("cell", cells(LOAD2D_PATHS), ids=cell_id)
@given(st.data())
def test_load2d_matches_reference(cell, data):
    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    es = dt.itemsize
    l1_l0 = path[0] is Phys.L1
    transpose = l1_l0 and es == 2 and data.draw(st.booleans())
    decrement = path == (Phys.GM, Phys.L1) and product in LOAD2D_ADDR_MODE and data.draw(st.booleans())
    r = data.draw(st.integers(0, 6))
    stride = data.draw(st.integers(0, 4))
    low = (r - 1) * stride if decrement and r else 0  # a decrementing walk starts high enough
    start = data.draw(st.integers(low, max(low, 8)))
    gap = data.draw(st.integers(0, 3))
    p = fc.LoadData2DParams(start, r, stride, 0, gap, transpose, int(decrement))
    hi = max(start, start + (r - 1) * stride) if r else 0
    honour = product is not Product.ATLAS_TRAINING
    dst_fr = ((r - 1) * ((gap if honour else 0) + 1) + 1) if r else 1

    def oracle(d, d_def, s, s_def, poison):
        ref.load2d(d, d_def, s, s_def, es=es, startIndex=start, repeatTimes=r, srcStride=stride, dstGap=gap,
                   transpose=transpose, decrement=decrement, honour_gap=honour, poison=poison)

    run_both(product, path, dt, (hi + 1) * F, dst_fr * F + data.draw(st.integers(0, 1)) * F,
             lambda d, s: fc.LoadData(d, s, p), oracle, data.draw(st.integers(0, 2**16)))


@SETTINGS
@pytest.mark.parametrize("cell", cells(LOAD2DV2_PATHS), ids=cell_id)
@given(st.data())
def test_load2dv2_matches_reference(cell, data):
    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    es, b4 = dt.itemsize, bits_of(dt) == 4
    c0 = 64 if b4 else 32 // es
    transpose = path[0] is Phys.L1 and data.draw(st.booleans())
    ms, ks = data.draw(st.integers(0, 8 if b4 and transpose else 4)), data.draw(st.integers(0, 4))
    if transpose and b4:
        ms -= ms % 4
    elif transpose and es == 1:
        ms -= ms % 2
    if transpose and es == 4:
        ks -= ks % 2
    m0, k0 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    stride = data.draw(st.integers(0, 8))
    rows_t = -(-ks * c0 // 16)  # fractals per column of the transposed image
    dstride = data.draw(st.integers(max(rows_t if transpose else ms, 0) if data.draw(st.booleans()) else 0,
                                    max(9, rows_t + 2)))
    p = fc.LoadData2DParamsV2(m0, k0, ms, ks, stride, dstride, transpose, 0)
    src_fr = ((k0 + ks - 1) * stride + m0 + ms) if ms and ks else 1
    if transpose:
        cols = -(-ms * 16 // c0)
        dst_fr = (cols - 1) * dstride + rows_t if ms and ks else 1
    else:
        dst_fr = (ks - 1) * dstride + ms if ms and ks else 1

    def oracle(d, d_def, s, s_def, poison):
        if b4 and transpose:
            ref.load2d_v2_b4(d, d_def, s, s_def, mStartPosition=m0, kStartPosition=k0, mStep=ms, kStep=ks,
                             srcStride=stride, dstStride=dstride, poison=poison)
            return
        ref.load2d_v2(d, d_def, s, s_def, es=es, mStartPosition=m0, kStartPosition=k0, mStep=ms, kStep=ks,
                      srcStride=stride, dstStride=dstride, transpose=transpose, poison=poison)

    run_both(product, path, dt, src_fr * F, max(dst_fr, 1) * F, lambda d, s: fc.LoadData(d, s, p), oracle,
             data.draw(st.integers(0, 2**16)))


@SETTINGS
@pytest.mark.parametrize("cell", cells(LOAD2D_TRANSPOSE_PATHS, LOAD2D_TRANSPOSE_V2_PATHS), ids=cell_id)
@given(st.booleans(), st.data())
def test_transpose_matches_reference(cell, v2, data):
    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    v2 = v2 and product is Product.ATLAS_350
    es, b4 = dt.itemsize, bits_of(dt) == 4
    n = 4 if b4 else {1: 2, 2: 1, 4: 2}[es]
    r = data.draw(st.integers(0, 4))
    start, stride = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    gap, fgap = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    sfg = data.draw(st.integers(0, 2))
    if v2:
        p = fc.LoadData2dTransposeParamsV2(start, r, stride, gap, fgap, sfg, 0)
        src_fr = start + (r - 1) * stride + (n - 1) * (sfg + 1) + 1 if r else 1
    else:
        p = fc.LoadData2dTransposeParams(start, r, stride, gap, fgap, 0)
        src_fr = (start + (r - 1) * stride) * n + n if r else 1
    dst_fr = (r - 1) * (gap + 1) + (n - 1) * (fgap + 1) + 1 if r else 1

    def oracle(d, d_def, s, s_def, poison):
        if b4:
            ref.load2d_transpose_b4(d, d_def, s, s_def, startIndex=start, repeatTimes=r, srcStride=stride,
                                    dstGap=gap, dstFracGap=fgap, poison=poison)
            return
        ref.load2d_transpose(d, d_def, s, s_def, es=es, startIndex=start, repeatTimes=r, srcStride=stride,
                             dstGap=gap, dstFracGap=fgap, srcFracGap=sfg if v2 else None, poison=poison)

    run_both(product, path, dt, src_fr * F, dst_fr * F, lambda d, s: fc.LoadDataWithTranspose(d, s, p), oracle,
             data.draw(st.integers(0, 2**16)))


@SETTINGS
@pytest.mark.parametrize("cell", cells(DN2NZ_PATHS), ids=cell_id)
@given(st.booleans(), st.data())
def test_dn2nz_matches_reference(cell, small, data):
    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    es = dt.itemsize
    c0 = 32 // es
    nd, n = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 20))
    if bits_of(dt) == 4:
        n -= n % 2  # fp4x2: an even number of bytes per stored row
    d = data.draw(st.integers(0, 4 if small else 3 * c0 + 3))
    sdv = data.draw(st.integers(max(n, 1), n + 5))
    sdm = data.draw(st.integers(0, 3)) + d * sdv
    nblk = -(-d // c0)
    ns = data.draw(st.integers(1, 3))
    cs = data.draw(st.integers(max(1, (n - 1) * ns + 1) if data.draw(st.booleans()) else 1, n * ns + 3))
    mst = data.draw(st.integers(0, 16384 // max(es, 1)))
    mst = min(mst, 16384)
    p = fc.Dn2NzParams(nd, n, d, sdm, sdv, cs, ns, mst)
    pitch = mst * es // 32 * 32
    if small:
        per = -(-n * 4 * es // 32) * 32
    else:
        per = ((n - 1) * ns + (nblk - 1) * cs + 1) * 32 if n and nblk else 0
    dst_bytes = max(((nd - 1) * pitch + per) if nd else 0, 32)
    src_bytes = max(((nd - 1) * sdm + n + (d - 1) * sdv) * es if nd and n and d else 0, es)

    def oracle(dd, dd_def, s, s_def, poison):
        from fastcopy.reference import dn2nz as dref
        dref.dn2nz(dd, dd_def, s, s_def, es=es, dnNum=nd, nValue=n, dValue=d, srcDnMatrixStride=sdm,
                   srcDValue=sdv, dstNzC0Stride=cs, dstNzNStride=ns, dstNzMatrixStride=mst, small_c0=small,
                   poison=poison)

    run_both(product, path, dt, src_bytes, dst_bytes, lambda dd, s: fc.DataCopy(dd, s, p, small_c0=small), oracle,
             data.draw(st.integers(0, 2**16)))


def draw_map(data) -> tuple:
    """A small feature map and kernel for the img2col tests: ``(H, W, pads, kh, kw, sh, sw, dh, dw, C1)``, the
    dilated kernel fitting the padded map."""
    H, W = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 7))
    pads = tuple(data.draw(st.integers(0, 2)) for _ in range(4))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    sh, sw, dh, dw = (data.draw(st.integers(1, 2)) for _ in range(4))
    if H + pads[2] + pads[3] < (kh - 1) * dh + 1 or W + pads[0] + pads[1] < (kw - 1) * dw + 1:
        kh = kw = dh = dw = 1
    return H, W, pads, kh, kw, sh, sw, dh, dw, data.draw(st.integers(1, 2))


@SETTINGS
@pytest.mark.parametrize("cell", cells(LOAD3D_PATHS), ids=cell_id)
@given(st.data())
def test_load3d_matches_reference(cell, data):
    from fastcopy.reference import img2col as iref

    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    es = dt.itemsize
    c0 = 32 // es  # int4b_t: drawn as the bytes it moves (C0 = 32 bytes = 64 values), K fields given in values
    b4 = bits_of(dt) == 4
    is350 = product is Product.ATLAS_350
    H, W, pads, kh, kw, sh, sw, dh, dw, C1 = draw_map(data)
    kmax = C1 * kh * kw * c0
    kext = c0 * data.draw(st.integers(1, kmax // c0))
    k0 = c0 * data.draw(st.integers(0, (kmax - kext) // c0))
    m16 = es <= 2 or is350
    mext = 16 * data.draw(st.integers(1, 3)) if m16 else data.draw(st.integers(1, 40))
    ms16 = is350 or es == 1 or dt == np.float16
    m0 = 16 * data.draw(st.integers(0, 2)) if ms16 else data.draw(st.integers(0, 20))
    tr_ok = path[1] is Phys.L0A and ((es in (1, 2, 4)) if is350 else (es == 2 if product is
                                     Product.ATLAS_INFERENCE_AICORE else es in (2, 4)))
    transpose = tr_ok and data.draw(st.booleans())
    pad_value = np.int8(0) if b4 else dt.type(data.draw(st.integers(0, 100)))
    kv = 2 if b4 else 1  # values per element of the K fields
    p = fc.LoadData3DParamsV2(pads, H, W, C1 * c0 * kv, kext * kv, mext, k0 * kv, m0, sw, sh, kw, kh, dw, dh,
                              transpose, False, 0 if b4 else pad_value)
    with_stride = is350 and data.draw(st.booleans())
    repeat = product is not Product.ATLAS_INFERENCE_AICORE and data.draw(st.integers(0, 3)) == 0
    R, mode, rstride = (data.draw(st.integers(2, 3)), data.draw(st.integers(0, 1)), data.draw(st.integers(0, 2))) \
        if repeat else (1, 0, 0)
    u = (64 if product is Product.ATLAS_200I_500_A2 else 32) // es
    blocks = [(m0 + (r * rstride * 16 if mode == 0 else 0), k0 + (r * rstride * u if mode == 1 else 0))
              for r in range(R)]
    if mode == 1 and any(b[1] + kext > kmax for b in blocks):
        R, blocks = 1, blocks[:1]
    big_m, big_k = mext * (R if mode == 0 else 1), kext * (R if mode == 1 else 1)
    if path[1] is Phys.L0B:
        image, natural = "Zn", -(-big_k // 16)
    elif is350:
        image, natural = ("Nz^T", -(-big_k // 16)) if transpose else ("Nz", -(-big_m // 16))
    else:
        image, natural = ("Zz^T", -(-big_m // c0)) if transpose else ("Zz", -(-big_k // c0))
    Q = natural
    if is350:
        Q = (-(-big_k // 16) if transpose else -(-big_m // 16)) if not with_stride else natural + \
            data.draw(st.integers(0, 1))
    src_bytes = C1 * H * W * c0 * es
    last = max(iref.place(image, a, b, es=es, Q=Q) for a in (0, big_m - 1) for b in (0, big_k - 1)) + es
    dst_bytes = -(-max(last, 512) // 512) * 512 + 512
    assume(dst_bytes <= 64 * 1024)  # the whole image must fit L0A/L0B (64 KiB on every product)

    def call(d, s):
        pipe = d.pipe
        if with_stride:
            fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(rstride, R, mode, Q), pipe=pipe)
            fc.LoadDataWithStride(d, s, p)
        else:
            if product is not Product.ATLAS_INFERENCE_AICORE:
                fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(rstride, R, mode), pipe=pipe)
            fc.LoadData(d, s, p)

    pad_bytes = pad_value.tobytes()
    if es == 4 and product in (Product.ATLAS_200I_500_A2, Product.ATLAS_350):
        pad_bytes = (int.from_bytes(pad_bytes, "little") & 0xFFFF).to_bytes(4, "little")

    def oracle(d, d_def, s, s_def, poison):
        iref.load3d(d, d_def, s, s_def, es=es, H=H, W=W, pads=pads, Kh=kh, Kw=kw, sh=sh, sw=sw, dh=dh, dw=dw,
                    mExtension=mext, kExtension=kext, blocks=blocks, mode=mode, image=image, Q=Q,
                    pad_bytes=pad_bytes, poison=poison)

    run_both(product, path, dt, src_bytes, dst_bytes, call, oracle, data.draw(st.integers(0, 2**16)))


@SETTINGS
@pytest.mark.parametrize("cell", cells(LOAD3D_V1_PATHS), ids=cell_id)
@given(st.data())
def test_load3d_v1_matches_reference(cell, data):
    from fastcopy.reference import img2col as iref

    product, path, dt = cell[0], cell[1], data.draw(st.sampled_from(cell[2]))
    es = dt.itemsize
    c0 = 32 // es
    csize = data.draw(st.integers(0, 1))
    cs = 8 // es if csize else c0  # channels per pixel of the map
    per = c0 // cs  # kernel taps per fractal row
    H, W, pads, kh, kw, sh, sw, dh, dw, C1 = draw_map(data)
    C1 = max(C1, -(-per // (kh * kw)))  # the map holds at least the taps of one fractal row
    mode, R = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 4))
    c1i = data.draw(st.integers(0, C1 - 1))
    fh, fw = data.draw(st.integers(0, kh - 1)), data.draw(st.integers(0, kw - 1))
    taps = (R if mode == 0 else 1) * per  # taps read from the start tap on
    if R and (c1i * kh + fh) * kw + fw + taps > C1 * kh * kw:  # taps past the map's channel blocks
        c1i = fh = fw = 0
        R = min(R, C1 * kh * kw // per) if mode == 0 else R
    top, left = data.draw(st.integers(-pads[2], H - 1)), data.draw(st.integers(-pads[0], W - 1))
    jump = data.draw(st.integers(1, 3))
    pad_value = dt.type(data.draw(st.integers(0, 100)))
    p = fc.LoadData3DParamsV1(pads, H, W, c1i, fw, fh, left, top, sw, sh, kw, kh, dw, dh, jump, mode, R, csize,
                              pad_value)
    src_bytes = C1 * H * W * cs * es
    dst_bytes = ((R - 1) * jump + 1) * F if R else F

    def oracle(d, d_def, s, s_def, poison):
        iref.load3d_v1(d, d_def, s, s_def, es=es, H=H, W=W, pads=pads, c1Index=c1i, fetchFilterW=fw,
                       fetchFilterH=fh, leftTopW=left, leftTopH=top, strideW=sw, strideH=sh, filterW=kw, filterH=kh,
                       dilationFilterW=dw, dilationFilterH=dh, jumpStride=jump, repeatMode=mode, repeatTime=R,
                       pad_bytes=pad_value.tobytes(), cSize=csize, poison=poison)

    run_both(product, path, dt, src_bytes, dst_bytes, lambda d, s: fc.LoadData(d, s, p), oracle,
             data.draw(st.integers(0, 2**16)))
