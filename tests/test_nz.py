"""ND2NZ / NZ2ND through the public API: the worked examples of vectors.json, and hypothesis properties
comparing ``DataCopy`` with the reference oracle (fastcopy/reference/nz.py) bit for bit, data and definedness,
on every path, product and element width."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vectors import DTYPES, PRODUCTS, init_values, vector

import fastcopy.reference.nz as ref
from fastcopy import (DataCopy, DataCopyMVType, FastCopyWarning, GlobalTensor, LoopModeParams, Nd2NzParams,
                      Nz2NdParamsFull, ResetLoopModePara, SetLoopModePara, TPipe, TPosition)
from fastcopy.dtypes import UINT_OF_WIDTH
from fastcopy.products import ND2NZ_PATHS, NZ2ND_PATHS, Phys, Product

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POISON = 0xFF
DST_POS = {Phys.L1: TPosition.A1, Phys.UB: TPosition.VECIN}


def _bits(a):
    return np.ascontiguousarray(a).view(UINT_OF_WIDTH[a.dtype.itemsize])


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        return fn(*args, **kwargs)


def _bytes_state(t):
    """(data bytes, per-byte definedness) of a tensor."""
    data = t.memory.data[t.offset:t.offset + t.nbytes].copy()
    plane = t.memory.plane
    dfd = np.ones(t.nbytes, bool) if plane is None else plane[t.offset:t.offset + t.nbytes].astype(bool)
    return data, dfd


def _assert_same(t, want, want_def):
    got, got_def = _bytes_state(t)
    assert np.array_equal(got_def, want_def), f"definedness differs at bytes {np.flatnonzero(got_def != want_def)[:10]}"
    assert np.array_equal(got, want), f"data differs at bytes {np.flatnonzero(got != want)[:10]}"


# ------------------------------------------------------------------------------------------ worked examples
def _expected(v, dtype):
    exp = v["expected"]
    return np.array([0 if x is None else x for x in exp], dtype)


ND2NZ_CASES = [
    ("nd2nz_half_calling_example", key, path)
    for key in vector("nd2nz_half_calling_example")["products"]
    for path in ((Phys.GM, Phys.L1), (Phys.GM, Phys.UB), (Phys.UB, Phys.L1))
    if path in ND2NZ_PATHS[Product[PRODUCTS[key]]]
] + [("nd2nz_half_figure_example", key, (Phys.GM, Phys.L1))
     for key in vector("nd2nz_half_figure_example")["products"]]


@pytest.mark.parametrize("vid, key, path", ND2NZ_CASES, ids=lambda x: str(x).replace("Phys.", ""))
def test_nd2nz_vector(vid, key, path):
    v = vector(vid)
    dtype = DTYPES[v["dtype"]]
    pipe = TPipe(PRODUCTS[key])
    src_vals = init_values(v["src"]["init"], v["src"]["length"], dtype)
    if path[0] is Phys.GM:
        src = GlobalTensor(src_vals)
    else:
        src = pipe.alloc(TPosition.VECIN, dtype, src_vals.size)
        src.numpy()[:] = src_vals
        src.set_defined()
    dst_pos = TPosition.TSCM if path[0] is Phys.UB else DST_POS[path[1]]
    dst = pipe.alloc(dst_pos, dtype, v["dst"]["length"])
    dst.numpy()[:] = init_values(v["dst"]["init"], v["dst"]["length"], dtype)
    dst.set_defined()
    _quiet(DataCopy, dst, src, Nd2NzParams(**v["params"]["Nd2NzParams"]))
    assert dst.defined().all()
    assert np.array_equal(_bits(dst.numpy()), _bits(_expected(v, dtype)))


@pytest.mark.parametrize("vid", ["nz2nd_half_calling_example", "nz2nd_half_figure_example",
                                 "nz2nd_float_figure_example"])
@pytest.mark.parametrize("key", ["A2", "A3", "310P", "350"])
def test_nz2nd_vector(vid, key):
    v = vector(vid)
    assert key in v["products"]
    dtype = DTYPES[v["dtype"]]
    pipe = TPipe(PRODUCTS[key])
    src = pipe.alloc(TPosition.VECOUT, dtype, v["src"]["length"])
    src.numpy()[:] = init_values(v["src"]["init"], v["src"]["length"], dtype)
    src.set_defined()
    out = init_values(v["dst"]["init"], v["dst"]["length"], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the page's examples are inside every domain: no warning
        DataCopy(GlobalTensor(out), src, Nz2NdParamsFull(**v["params"]["Nz2NdParamsFull"]))
    assert np.array_equal(_bits(out), _bits(_expected(v, dtype)))


def test_nz2nd_co2_on_310p():
    """CO2 maps to UB on the inference AI Core: CO2 -> GM is an NZ2ND path there (semantics.md §6)."""
    v = vector("nz2nd_half_calling_example")
    pipe = TPipe("310P")
    src = pipe.alloc(TPosition.CO2, np.float16, 1024)
    src.numpy()[:] = np.arange(1, 1025)
    src.set_defined()
    out = np.zeros(1024, np.float16)
    DataCopy(GlobalTensor(out), src, Nz2NdParamsFull(**v["params"]["Nz2NdParamsFull"]))
    assert np.array_equal(_bits(out), _bits(_expected(v, np.float16)))


# --------------------------------------------------------------------------------------------- strategies
def _dtypes_of(table, product, path):
    dts = table[product][path]
    return sorted(dts, key=str)


ND2NZ_COMBOS = [(p, path) for p, paths in ND2NZ_PATHS.items() for path in paths]


@st.composite
def nd2nz_case(draw):
    product, path = draw(st.sampled_from(ND2NZ_COMBOS))
    dtype = draw(st.sampled_from(_dtypes_of(ND2NZ_PATHS, product, path)))
    es = dtype.itemsize
    c0 = 32 // es
    tscm = path == (Phys.UB, Phys.L1)
    small = product is Product.ATLAS_350 and path == (Phys.GM, Phys.L1) and draw(st.booleans())
    nd = 1 if tscm else draw(st.sampled_from([0, 1, 1, 2, 3]))
    n = draw(st.integers(1 if tscm else 0, 20))
    d = draw(st.integers(1 if tscm else 0, 4 if small else 3 * c0 + 5))
    nblk = -(-d // c0)
    p = dict(
        ndNum=nd, nValue=n, dValue=d,
        srcNdMatrixStride=draw(st.sampled_from([0, d, n * d, n * d + draw(st.integers(0, 40))])),
        srcDValue=draw(st.sampled_from([d, d + draw(st.integers(0, 20))])) or 1,
        dstNzC0Stride=draw(st.sampled_from([max(n, 1), -(-n // 16) * 16, draw(st.integers(1, 24))])),
        dstNzNStride=draw(st.sampled_from([1, 1, draw(st.integers(1, 4))])),
        dstNzMatrixStride=draw(st.sampled_from([0, draw(st.integers(0, 64 * c0)),
                                                 max(n, 1) * max(nblk, 1) * c0 * draw(st.integers(1, 3))])),
    )
    if draw(st.booleans()):  # strides narrower than the data (overlapping destination writes)
        p["srcDValue"] = draw(st.integers(1, max(d, 1)))
    return product, path, dtype, p, small


def _nd2nz_footprints(p, es, product, small):
    if p["ndNum"] == 0 or p["nValue"] == 0 or p["dValue"] == 0:
        return 0, 0
    src = ((p["ndNum"] - 1) * p["srcNdMatrixStride"] + (p["nValue"] - 1) * p["srcDValue"] + p["dValue"]) * es
    pitch = ref.dst_matrix_pitch_bytes(es, "350" if small else product.key, p["dstNzMatrixStride"])
    if small:
        dst = (p["ndNum"] - 1) * pitch + -(-p["nValue"] // 4) * 4 * 4 * es
    else:
        nblk = -(-p["dValue"] // (32 // es))
        dst = (p["ndNum"] - 1) * pitch + (p["nValue"] - 1) * p["dstNzNStride"] * 32 + (nblk - 1) * p[
            "dstNzC0Stride"] * 32 + 32
    return src, dst


def _random_bytes(rng, n):
    return rng.integers(0, 256, n, dtype=np.uint8)


def _local(pipe, position, dtype, nbytes, rng, defined_frac):
    """A LocalTensor holding random bytes, a random part of them defined."""
    count = max(1, -(-nbytes // dtype.itemsize))
    t = pipe.alloc(position, dtype, count)
    t.memory.data[t.offset:t.offset + t.nbytes] = _random_bytes(rng, t.nbytes)
    plane = t.memory.materialize_plane()
    plane[t.offset:t.offset + t.nbytes] = (rng.random(t.nbytes) < defined_frac).astype(np.uint8)
    return t


@SETTINGS
@given(case=nd2nz_case(), extra=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_nd2nz_matches_reference(case, extra, seed):
    check_nd2nz(case, extra, seed)


def check_nd2nz(case, extra, seed):
    """One drawn ND2NZ call against the oracle, data and definedness (also used with other kernel settings)."""
    product, path, dtype, p, small = case
    es = dtype.itemsize
    rng = np.random.default_rng(seed)
    src_bytes, dst_bytes = _nd2nz_footprints(p, es, product, small)
    pipe = TPipe(product)
    if path[0] is Phys.GM:
        count = max(1, -(-(src_bytes + extra) // es))
        src = GlobalTensor(_random_bytes(rng, count * es).view(dtype))
    else:
        src = _local(pipe, TPosition.VECIN, dtype, src_bytes + extra, rng, 0.9)
    dst_pos = TPosition.TSCM if path[0] is Phys.UB else DST_POS[path[1]]
    dst = _local(pipe, dst_pos, dtype, dst_bytes + extra, rng, 0.7)
    want, want_def = _bytes_state(dst)
    s_data, s_def = _bytes_state(src)
    ref.nd2nz(want, want_def, s_data, s_def, es=es, product=product.key, small_c0=small, poison=POISON, **p)
    kwargs = {"small_c0": True} if small else {}
    _quiet(DataCopy, dst, src, Nd2NzParams(**p), **kwargs)
    _assert_same(dst, want, want_def)


NZ2ND_COMBOS = [p for p in NZ2ND_PATHS]


@st.composite
def nz2nd_case(draw):
    product = draw(st.sampled_from(NZ2ND_COMBOS))
    dtype = draw(st.sampled_from(_dtypes_of(NZ2ND_PATHS, product, (Phys.UB, Phys.GM))))
    nd = draw(st.sampled_from([0, 1, 1, 2, 3]))
    n = draw(st.integers(1, 20))
    nf = draw(st.integers(1, 3))
    d = 16 * nf
    n16 = -(-n // 16)
    p = dict(
        ndNum=nd, nValue=n, dValue=d,
        srcNdMatrixStride=draw(st.sampled_from([max(1, n16 * nf), draw(st.integers(1, 4))])),
        srcNStride=draw(st.sampled_from([n, n16 * 16, draw(st.integers(0, 24))])),
        dstDStride=draw(st.sampled_from([d, d + draw(st.integers(0, 20)), draw(st.integers(16, max(16, d)))])),
        dstNdMatrixStride=draw(st.sampled_from([n * d, draw(st.integers(1, 2 * n * d))])),
    )
    return product, dtype, p


@SETTINGS
@given(case=nz2nd_case(), extra=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_nz2nd_matches_reference(case, extra, seed):
    product, dtype, p = case
    es = dtype.itemsize
    rng = np.random.default_rng(seed)
    nd, n, d = p["ndNum"], p["nValue"], p["dValue"]
    src_el = (max(nd, 1) - 1) * p["srcNdMatrixStride"] * 256 + (d // 16 - 1) * p["srcNStride"] * 16 + 16 * n
    dst_el = (max(nd, 1) - 1) * p["dstNdMatrixStride"] + (n - 1) * p["dstDStride"] + d
    pipe = TPipe(product)
    src = _local(pipe, TPosition.VECOUT, dtype, src_el * es + extra, rng, 0.9)
    gm = _random_bytes(rng, (dst_el + -(-extra // es)) * es).view(dtype)
    dst = GlobalTensor(gm, defined=bool(rng.integers(0, 2)))
    if dst.memory.plane is not None:
        dst.memory.plane[:] = (rng.random(dst.nbytes) < 0.5).astype(np.uint8)
    want, want_def = _bytes_state(dst)
    s_data, s_def = _bytes_state(src)
    ref.nz2nd(want, want_def, s_data, s_def, es=es, product=product.key, poison=POISON, **p)
    _quiet(DataCopy, dst, src, Nz2NdParamsFull(**p))
    _assert_same(dst, want, want_def)


# ------------------------------------------------------------------------------------- round trip, loop mode
@settings(max_examples=60, deadline=None)
@given(product=st.sampled_from([Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_350,
                                Product.ATLAS_INFERENCE_AICORE]),
       dtype=st.sampled_from(["half", "int16_t", "uint16_t"]), rows=st.integers(1, 40),
       cols16=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_nd2nz_then_nz2nd_returns_the_matrix(product, dtype, rows, cols16, seed):
    """2-byte types: ND2NZ (dstNzNStride=1, dstNzC0Stride=N16) then NZ2ND (srcNStride=N16) is the identity."""
    from fastcopy import nd2nz_params, nz2nd_params

    cols = 16 * cols16
    rng = np.random.default_rng(seed)
    a = _random_bytes(rng, rows * cols * 2).view(np.uint16).reshape(rows, cols)
    a = a.view({"half": np.float16, "int16_t": np.int16, "uint16_t": np.uint16}[dtype])
    pipe = TPipe(product)
    n16 = -(-rows // 16) * 16
    nz = pipe.alloc(TPosition.A1, a.dtype, n16 * cols)
    _quiet(DataCopy, nz, GlobalTensor(a), nd2nz_params(rows, cols, a.dtype))
    ub = pipe.alloc(TPosition.VECOUT, a.dtype, n16 * cols)
    ub.numpy()[:] = nz.numpy()  # L1 -> UB is not a DataCopy path on every product; move it by hand
    ub.set_defined(nz.defined())
    out = np.zeros_like(a)
    DataCopy(GlobalTensor(out), ub, nz2nd_params(rows, cols, a.dtype))
    assert np.array_equal(_bits(out), _bits(a))


LOOP_CASES = [
    dict(ndNum=1, nValue=2, dValue=16, srcNdMatrixStride=0, srcDValue=16, dstNzC0Stride=2, dstNzNStride=1,
         dstNzMatrixStride=0),
    # 3 loops of its own + the 2 of loop mode: more than the kernels' 4, folded into offset lists
    dict(ndNum=2, nValue=2, dValue=40, srcNdMatrixStride=8, srcDValue=40, dstNzC0Stride=2, dstNzNStride=1,
         dstNzMatrixStride=16 * 6),
]


@pytest.mark.parametrize("p", LOOP_CASES)
def test_loop_mode_repeats_gm_to_ub_nd2nz_on_350(p):
    """§4.8: on Atlas 350 the GM->UB ND2NZ emulation runs under loop mode (every copy repeated, shifted)."""
    pipe = TPipe("350")
    a = np.arange(1, 1025, dtype=np.int16)
    src = GlobalTensor(a)
    dst = pipe.alloc(TPosition.VECIN, np.int16, 2048)
    dst.numpy()[:] = -1
    dst.set_defined()
    SetLoopModePara(LoopModeParams(loop1Size=3, loop2Size=2, loop1SrcStride=64, loop1DstStride=512,
                                   loop2SrcStride=256, loop2DstStride=1536), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    try:
        _quiet(DataCopy, dst, src, Nd2NzParams(**p))
    finally:
        ResetLoopModePara(pipe=pipe)
    want = np.full(2048, -1, np.int16).view(np.uint8)
    want_def = np.ones(want.size, bool)
    s_data = a.view(np.uint8)
    for l2 in range(2):
        for l1 in range(3):
            so, do = l1 * 64 + l2 * 256, l1 * 512 + l2 * 1536
            ref.nd2nz(want[do:], want_def[do:], s_data[so:], np.ones(s_data.size - so, bool), es=2, product="350",
                      poison=POISON, **p)
    _assert_same(dst, want, want_def)
    # after the reset the same call is a single ND2NZ again
    dst.numpy()[:] = -1
    _quiet(DataCopy, dst, src, Nd2NzParams(**p))
    want = np.full(2048, -1, np.int16).view(np.uint8)
    ref.nd2nz(want, want_def, s_data, np.ones(s_data.size, bool), es=2, product="350", poison=POISON, **p)
    _assert_same(dst, want, want_def)


def test_overlapping_matrices_conflict_becomes_undefined():
    """dstNzMatrixStride = 0 with two different matrices: the bytes they disagree on are undefined (11.2)."""
    pipe = TPipe("A2")
    a = np.array([1, 2, 1, 9] + [0] * 60, np.uint8)
    dst = pipe.alloc(TPosition.A1, np.uint8, 32)
    with pytest.warns(FastCopyWarning, match="writes overlap"):
        DataCopy(dst, GlobalTensor(a), Nd2NzParams(2, 1, 2, 2, 2, 1, 1, 0))
    assert list(dst.numpy()[:1]) == [1] and list(dst.defined()[:3]) == [True, False, True]
    assert dst.numpy()[1] == pipe.poison and (dst.numpy()[2:] == 0).all() and dst.defined()[2:].all()


def test_large_plan_is_not_exact():
    """A whole-matrix ND2NZ with a partial C0 block runs the fast path (the overlap test is analytic)."""
    from fastcopy.ops.nz import _plan_nd2nz

    pipe = TPipe("A2", capacities={"L1": 8 << 20})
    a = np.zeros((1000, 1000), np.float16)
    dst = pipe.alloc(TPosition.A1, np.float16, 1008 * 1008)
    p = Nd2NzParams(1, 1000, 1000, 0, 1000, 1008, 1, 0)
    plan = _plan_nd2nz(p.key(), GlobalTensor(a)._sig, dst._sig, pipe.product, False, None)
    assert not plan.exact and len(plan.steps) == 3
