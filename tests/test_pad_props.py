"""Property tests: the public DataCopyPad == the reference oracle (fastcopy/reference/pad.py), bit for bit, data
and definedness, over random valid parameters on every path, element width, product and mode; including
sequences of calls that set and read the pad register (SetPadValue, isPad=true) and Atlas 350 loop mode."""

from __future__ import annotations

import numpy as np
from dc_util import tensor_bytes
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastcopy import (DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams, DataCopyPadParams,
                      DataCopyParams, GlobalTensor, LoopModeParams, Nd2NzParams, PaddingMode, Product,
                      ResetLoopModePara, SetLoopModePara, SetPadValue, TPipe)
from fastcopy.products import DATACOPYPAD_PATHS, SET_PAD_VALUE, ZERO_IS_NOOP, Phys
from fastcopy.reference import pad as ref

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PRODUCTS = [Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_200I_500_A2, Product.ATLAS_350]
POISON = 0xA5


def _dtypes(product, path):
    return sorted(DATACOPYPAD_PATHS[product].get(path, ()), key=str)


def _au(x, a=32):
    return -(-x // a) * a


# --------------------------------------------------------------------------------------------- tensors / bytes


def gm_tensor(rng, dtype, nbytes, shift, defined_fraction):
    """A GlobalTensor of at least ``nbytes`` at host offset ``shift`` (odd host addresses exercise byte views)."""
    es = dtype.itemsize
    n = -(-nbytes // es) + rng.integers(0, 3)
    base = rng.integers(0, 256, n * es + 16, dtype=np.uint8)
    g = GlobalTensor(base[shift:shift + n * es].view(dtype), defined=defined_fraction >= 1)
    if defined_fraction < 1:
        g.set_defined(rng.random(n) < defined_fraction)
    return g


def local_tensor(pipe, rng, position, dtype, nbytes, defined_fraction, skip):
    es = dtype.itemsize
    if skip:
        pipe.alloc(position, "uint8_t", 32 * skip)  # start somewhere other than 0
    n = -(-nbytes // es) + int(rng.integers(0, 3))
    t = pipe.alloc(position, dtype, n)
    t.numpy().view(np.uint8)[:] = rng.integers(0, 256, n * es, dtype=np.uint8)
    t.set_defined(rng.random(n) < defined_fraction)
    return t


def assert_same(t, want, want_def, what):
    got, got_def = tensor_bytes(t)
    bad = np.flatnonzero((got != want) | (got_def != want_def))
    first = bad[:8]
    assert bad.size == 0, (f"{what}: {bad.size} bytes differ, first at {first}: got "
                           f"{list(zip(got[first], got_def[first]))}, want {list(zip(want[first], want_def[first]))}")


# --------------------------------------------------------------------------------------------- strategies
@st.composite
def copy_case(draw, product, dtype, gm_src, mode):
    """(blockCount, blockLen, srcStride, dstStride, legacy) valid for this product/direction."""
    es = dtype.itemsize
    is350 = product is Product.ATLAS_350
    legacy = draw(st.booleans()) if mode is PaddingMode.Normal else False
    zero_ok = product in ZERO_IS_NOOP
    bc = draw(st.integers(0 if zero_ok else 1, 6)) if draw(st.integers(0, 9)) == 0 else draw(st.integers(1, 6))
    bl = es * draw(st.integers(0 if zero_ok else 1, 100 // es + 2)) if draw(st.integers(0, 9)) == 0 else \
        es * draw(st.integers(1, 100 // es + 2))
    gm_lo = -bl if (is350 and not legacy and gm_src) else 0
    gm = draw(st.integers(gm_lo, 70))
    local = draw(st.integers(0, 3))
    ss, ds = (gm, local) if gm_src else (local, gm)
    return bc, bl, ss, ds, legacy


@st.composite
def pad_case(draw, dtype, legacy):
    es = dtype.itemsize
    is_pad = draw(st.booleans())
    lp = draw(st.integers(0, 32 // es)) if draw(st.booleans()) else 0
    rp = draw(st.integers(0, 32 // es)) if draw(st.booleans()) else 0
    if legacy or (es == 8 and is_pad):
        value = 0
    else:
        value = draw_value(draw, dtype)
    return is_pad, lp, rp, value


def draw_value(draw, dtype):
    """A numpy scalar of ``dtype`` with random bits (bool: 0/1)."""
    if dtype == np.bool_:
        return np.bool_(draw(st.booleans()))
    raw = draw(st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize))
    return np.frombuffer(raw, dtype)[0]


@st.composite
def loop_case(draw, gm_src):
    """A LoopModeParams for GM -> UB (``gm_src``) or UB -> GM; UB-side strides are multiples of 32."""
    n1, n2 = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    gm1, gm2 = draw(st.integers(0, 300)), draw(st.integers(0, 600))
    ub1, ub2 = 32 * draw(st.integers(0, 10)), 32 * draw(st.integers(0, 20))
    if gm_src:
        return dict(loop1Size=n1, loop2Size=n2, loop1SrcStride=gm1, loop1DstStride=ub1, loop2SrcStride=gm2,
                    loop2DstStride=ub2)
    return dict(loop1Size=n1, loop2Size=n2, loop1SrcStride=ub1, loop1DstStride=gm1, loop2SrcStride=ub2,
                loop2DstStride=gm2)


def _loop_extent(loop, col):
    if loop is None:
        return 0
    return (loop["loop1Size"] - 1) * loop[f"loop1{col}Stride"] + (loop["loop2Size"] - 1) * loop[f"loop2{col}Stride"]


def in_extents(bc, bl, ss, ds, lp, rp, es, mode):
    """(source bytes read, destination bytes written) of one GM -> local call (semantics.md §4.2, §4.4)."""
    if bc == 0 or bl == 0:
        return 0, 0
    src = (bc - 1) * (bl + ss) + bl
    if mode is PaddingMode.Compact:
        return src, _au(bc * bl)
    p = _au(lp * es + bl + rp * es)
    return src, (bc - 1) * (p + ds * 32) + p


def out_extents(bc, bl, ss, ds, mode):
    if bc == 0 or bl == 0:
        return 0, 0
    pitch = bl if mode is PaddingMode.Compact else _au(bl) + ss * 32
    return (bc - 1) * pitch + bl, (bc - 1) * (bl + ds) + bl


# --------------------------------------------------------------------------------------------- GM -> local
def run_in(pipe, rng, draw, dtype, dst_phys, mode, loop, padreg):
    """One random GM -> local call through the public API and the oracle (``padreg``: the oracle's register,
    bytes or None). Returns ``(register after the call, isPad)``."""
    product = pipe.product
    es = dtype.itemsize
    bc, bl, ss, ds, legacy = draw(copy_case(product, dtype, True, mode))
    is_pad, lp, rp, value = draw(pad_case(dtype, legacy))
    src_n, dst_n = in_extents(bc, bl, ss, ds, lp, rp, es, mode)
    src = gm_tensor(rng, dtype, src_n + _loop_extent(loop, "Src"), int(rng.integers(0, 8)),
                    draw(st.sampled_from([1.0, 0.8])))
    position = "VECIN" if dst_phys is Phys.UB else draw(st.sampled_from(["A1", "B1", "TSCM"]))
    dst = local_tensor(pipe, rng, position, dtype, dst_n + _loop_extent(loop, "Dst"), 0.7, draw(st.integers(0, 2)))
    want, want_def = tensor_bytes(dst)
    src_b, src_def = tensor_bytes(src)
    pattern = np.array(value, dtype).tobytes()
    after = ref.pad_gm_to_local(want, want_def, src_b, src_def, es=es, product=product.key, blockCount=bc,
                                blockLen=bl, srcStride=ss, dstStride=ds, isPad=is_pad, leftPadding=lp,
                                rightPadding=rp, paddingValue=pattern, mode=mode.name, padreg=padreg,
                                loop=loop if dst_phys is Phys.UB else None, poison=POISON)
    before = pipe.state.get("padreg")
    if legacy:
        DataCopyPad(dst, src, DataCopyParams(bc, bl, ss, ds), DataCopyPadParams(is_pad, lp, rp, 0))
    else:
        DataCopyPad(dst, src, DataCopyExtParams(bc, bl, ss, ds, 0), DataCopyPadExtParams(is_pad, lp, rp, value),
                    mode=mode)
    assert_same(dst, want, want_def, f"GM->{dst_phys} {product} {dtype} {mode}")
    assert pipe.state.get("padreg") == (after if is_pad else before)
    return after, is_pad


def run_out(pipe, rng, draw, dtype, mode, loop):
    product = pipe.product
    bc, bl, ss, ds, legacy = draw(copy_case(product, dtype, False, mode))
    src_n, dst_n = out_extents(bc, bl, ss, ds, mode)
    src = local_tensor(pipe, rng, "VECOUT", dtype, src_n + _loop_extent(loop, "Src"), 0.8, draw(st.integers(0, 2)))
    dst = gm_tensor(rng, dtype, dst_n + _loop_extent(loop, "Dst"), int(rng.integers(0, 8)),
                    draw(st.sampled_from([1.0, 0.5])))
    want, want_def = tensor_bytes(dst)
    src_b, src_def = tensor_bytes(src)
    ref.pad_local_to_gm(want, want_def, src_b, src_def, es=dtype.itemsize, product=product.key, blockCount=bc,
                        blockLen=bl, srcStride=ss, dstStride=ds, mode=mode.name, loop=loop, poison=POISON)
    cp = DataCopyParams(bc, bl, ss, ds) if legacy else DataCopyExtParams(bc, bl, ss, ds, 0)
    DataCopyPad(dst, src, cp, mode=mode)
    assert_same(dst, want, want_def, f"UB->GM {product} {dtype} {mode}")


@st.composite
def product_dtype(draw, path):
    product = draw(st.sampled_from([p for p in PRODUCTS if path in DATACOPYPAD_PATHS[p]]))
    dtype = draw(st.sampled_from(_dtypes(product, path)))
    return product, np.dtype(dtype)


def _mode(draw, product):
    return draw(st.sampled_from(list(PaddingMode))) if product is Product.ATLAS_350 else PaddingMode.Normal


@pytest.mark.parametrize("dst_phys", [Phys.UB, Phys.L1], ids=["gm_to_ub", "gm_to_l1"])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_gm_to_local_matches_reference(dst_phys, data, seed):
    product, dtype = data.draw(product_dtype((Phys.GM, dst_phys)))
    pipe = TPipe(product=product, poison=POISON)
    run_in(pipe, np.random.default_rng(seed), data.draw, dtype, dst_phys, _mode(data.draw, product), None, None)


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_ub_to_gm_matches_reference(data, seed):
    product, dtype = data.draw(product_dtype((Phys.UB, Phys.GM)))
    pipe = TPipe(product=product, poison=POISON)
    run_out(pipe, np.random.default_rng(seed), data.draw, dtype, _mode(data.draw, product), None)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_350_compact_matches_reference(data, seed):
    """Atlas 350 Compact mode on its three paths (also drawn above; here every example is Compact)."""
    path = data.draw(st.sampled_from([(Phys.GM, Phys.UB), (Phys.GM, Phys.L1), (Phys.UB, Phys.GM)]))
    dtype = np.dtype(data.draw(st.sampled_from(_dtypes(Product.ATLAS_350, path))))
    pipe = TPipe(product="ATLAS_350", poison=POISON)
    rng = np.random.default_rng(seed)
    if path[0] is Phys.GM:
        run_in(pipe, rng, data.draw, dtype, path[1], PaddingMode.Compact, None, None)
    else:
        run_out(pipe, rng, data.draw, dtype, PaddingMode.Compact, None)


def _number_bytes(number, dtype):
    """A plain number as one element of ``dtype`` (complex32: real part, imaginary 0)."""
    value = np.zeros((), dtype)
    if dtype.names:
        value["real"] = number
    else:
        value[()] = number
    return value.tobytes()


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_pad_register_sequences(data, seed):
    """Calls on one core: SetPadValue (typed, any width; or a plain number) and isPad=true calls set PADREG;
    later calls read it. The oracle's register is threaded through the sequence (a plain number converted to
    each copy's type)."""
    draw = data.draw
    product, _ = draw(product_dtype((Phys.GM, Phys.UB)))
    pipe = TPipe(product=product, poison=POISON)
    rng = np.random.default_rng(seed)
    typed, number = None, None  # the register: typed bytes, or a plain number (0 or 1)
    dtypes = [np.dtype(d) for d in _dtypes(product, (Phys.GM, Phys.UB))]
    for _ in range(draw(st.integers(2, 5))):
        dtype = draw(st.sampled_from(dtypes))
        if product in SET_PAD_VALUE and draw(st.integers(0, 3)) == 0:
            if draw(st.booleans()):
                number, typed = draw(st.sampled_from([0, 1])), None
                SetPadValue(number, pipe=pipe)
            else:
                value = np.zeros((), dtype)[()] if dtype.itemsize == 8 else draw_value(draw, dtype)
                SetPadValue(value, pipe=pipe)
                typed, number = np.array(value, dtype).tobytes(), None
                assert pipe.state["padreg"] == typed
            continue
        if number == 1 and dtype.itemsize == 8:
            continue  # a plain 1 cannot pad 8-byte types (an error, tested in test_pad_errors)
        pipe.reset()
        padreg = typed if number is None else _number_bytes(number, dtype)
        after, is_pad = run_in(pipe, rng, draw, dtype, Phys.UB, _mode(draw, product), None, padreg)
        if is_pad:
            typed, number = after, None


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_loop_mode_matches_reference(data, seed):
    """Atlas 350 loop mode, both directions (overlapping repetitions included: the exact path resolves them)."""
    draw = data.draw
    pipe = TPipe(product="ATLAS_350", poison=POISON)
    rng = np.random.default_rng(seed)
    gm_src = draw(st.booleans())
    path = (Phys.GM, Phys.UB) if gm_src else (Phys.UB, Phys.GM)
    dtype = np.dtype(draw(st.sampled_from(_dtypes(Product.ATLAS_350, path))))
    loop = draw(loop_case(gm_src))
    mv = DataCopyMVType.OUT_TO_UB if gm_src else DataCopyMVType.UB_TO_OUT
    SetLoopModePara(LoopModeParams(**loop), mv, pipe=pipe)
    if draw(st.booleans()):  # the other direction's loop mode must not leak into this one
        other = DataCopyMVType.UB_TO_OUT if gm_src else DataCopyMVType.OUT_TO_UB
        SetLoopModePara(LoopModeParams(2, 1, 64, 64, 0, 0), other, pipe=pipe)
    mode = _mode(draw, pipe.product)
    if gm_src:
        run_in(pipe, rng, draw, dtype, Phys.UB, mode, loop, None)
    else:
        run_out(pipe, rng, draw, dtype, mode, loop)
    ResetLoopModePara(pipe=pipe)
    pipe.reset()
    if gm_src:  # after the reset: single moves again
        run_in(pipe, rng, draw, dtype, Phys.UB, mode, None, pipe.state.get("padreg"))
    else:
        run_out(pipe, rng, draw, dtype, mode, None)


# --------------------------------------------------------------------------------------------- UB -> TSCM
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_ub_to_tscm_matches_reference(data, seed):
    draw = data.draw
    product, dtype = draw(product_dtype((Phys.UB, Phys.L1)))
    es = dtype.itemsize
    pipe = TPipe(product=product, poison=POISON)
    rng = np.random.default_rng(seed)
    c0 = 32 // es
    bc, bl = draw(st.integers(1, 5)), es * draw(st.integers(1, 96 // es))
    ss, ds = draw(st.integers(0, 2)), draw(st.sampled_from([0, 0, es, 32, 64, 7]))
    d_value = draw(st.integers(1, 3 * c0))
    nd = dict(ndNum=1, nValue=draw(st.integers(1, 5)), dValue=d_value,
              srcNdMatrixStride=draw(st.integers(0, 9)),
              srcDValue=draw(st.sampled_from([d_value, bl // es or 1, (bl + ds) // es or 1,
                                              draw(st.integers(1, 3 * c0))])),
              dstNzC0Stride=draw(st.integers(1, 6)), dstNzNStride=draw(st.integers(1, 6)),
              dstNzMatrixStride=draw(st.integers(0, 9)))
    nblk = -(-d_value // c0)
    dst_n = (nd["nValue"] - 1) * nd["dstNzNStride"] * 32 + (nblk - 1) * nd["dstNzC0Stride"] * 32 + 32
    src_n, _ = out_extents(bc, bl, ss, ds, PaddingMode.Normal)
    src = local_tensor(pipe, rng, "VECIN", dtype, src_n, 0.9, draw(st.integers(0, 2)))
    dst = local_tensor(pipe, rng, "TSCM", dtype, dst_n, 0.5, draw(st.integers(0, 2)))
    legacy = draw(st.booleans())
    cp = DataCopyParams(bc, bl, ss, ds) if legacy else DataCopyExtParams(bc, bl, ss, ds, 0)
    want, want_def = tensor_bytes(dst)
    src_b, src_def = tensor_bytes(src)
    ws = DataCopyPad(dst, src, cp, Nd2NzParams(**nd))
    ref_ws, ref_ws_def = ref.pad_ub_to_tscm(want, want_def, src_b, src_def, es=es, product=product.key,
                                            blockCount=bc, blockLen=bl, srcStride=ss, dstStride=ds, **nd,
                                            workspace_bytes=ws.nbytes, poison=POISON)
    assert_same(dst, want, want_def, f"UB->TSCM {product} {dtype}")
    assert_same(ws, ref_ws, ref_ws_def, "workspace")
