"""Mmad: the worked vectors, property tests against the reference over every product and dtype combination,
and one test per validation rule."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cube_out_util import bits, array, for_product, fresh, load_a, load_b, place, products, vector
from fastcopy import (AlignmentError, FastCopyWarning, HF32Mode, HF32TransMode, Mmad, MmadParams,
                      OutOfBoundsError, Product, RangeError, SetHF32Mode, SetHF32TransMode, TPosition,
                      UnsupportedError)
from fastcopy.cube import l0c, numerics, quant
from fastcopy.cube.mmad import COMBOS, HIF8_COMBO
from fastcopy.cube.numerics import matmul_ordered
from fastcopy.reference import cube_hif8, cube_mmad

P = Product


# ---------------------------------------------------------------------------------------------------- vectors
@pytest.mark.parametrize("name", ["mmad_f16_16x16x16", "mmad_f16_tail_m18_k20_n17", "mmad_int8_bias_from_biastable",
                                  "mmad_f32_accumulate_single_rounding", "mmad_hf32_rne"])
def test_vectors(name):
    v = vector(name)
    for product in products(v):
        pipe = fresh(product)
        st_ = v.get("state", {})
        if st_.get("HF32Mode") == "ENABLE":
            SetHF32Mode(HF32Mode.ENABLE, pipe=pipe)
            SetHF32TransMode(HF32TransMode[st_.get("HF32TransMode", "NEAREST_EVEN")], pipe=pipe)
        src = for_product(v["src"], product)
        a_arr, b_arr = array(src["L0A"]), array(src["L0B"])
        exp = for_product(v["expected"], product)["L0C"]
        want = array(exp)
        if "BiasTable" in src:
            place(pipe, TPosition.C2, array(src["BiasTable"]))
        c = pipe.alloc(TPosition.CO1, want.dtype, want.size)
        if "L0C_before" in src:
            c.numpy()[:] = 1.0
            c.set_defined()
        a = place(pipe, TPosition.A2, a_arr)
        b = place(pipe, TPosition.B2, b_arr)
        Mmad(c, a, b, MmadParams(**v["params"]["MmadParams"]))
        assert np.array_equal(bits(c.numpy()), bits(want)), (name, product)
        assert c.defined().all()


# ----------------------------------------------------------------------------------------- property tests
def _combos():
    out = []
    for (u, s, t), (prods, bias) in COMBOS.items():
        if u.name == "int4":  # packed operands: test_int4_packed_operands
            continue
        for p in sorted(prods, key=lambda p: p.key):
            out.append((p, u, s, t))
    return out


COMBO_LIST = _combos()


def _random(rng, dtype, shape):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max + 1, shape).astype(dtype)
    vals = rng.standard_normal(shape) * np.exp2(rng.integers(-6, 6, shape))
    return vals.astype(np.float32).astype(dtype)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(COMBO_LIST), st.integers(1, 40), st.integers(1, 40), st.integers(1, 70), st.integers(0, 2**32 - 1),
       st.sampled_from(["zero", "accumulate", "bias"]), st.booleans())
def test_mmad_matches_reference(combo, m, n, k, seed, c0_mode, hf32):
    product, u, s, t = combo
    bias_dt = COMBOS[(u, s, t)][1]
    if c0_mode == "bias" and (bias_dt is None or product in (P.ATLAS_TRAINING, P.ATLAS_INFERENCE_AICORE)):
        c0_mode = "accumulate"
    rng = np.random.default_rng(seed)
    pipe = fresh(product)
    k0 = 32 // u.itemsize
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // k0)
    gemv = m == 1
    hf32 = hf32 and u == np.float32
    if hf32:
        SetHF32Mode(True, pipe=pipe)
        SetHF32TransMode(bool(seed % 2), pipe=pipe)
    a_flat = _random(rng, u, (m1 * k1 * 16 * k0,))
    b_flat = _random(rng, s, (k1 * n1 * 16 * k0,))
    a = place(pipe, TPosition.A2, a_flat)
    b = place(pipe, TPosition.B2, b_flat)
    c_init = _random(rng, t, (m1 * n1 * 256,)) if c0_mode == "accumulate" else None
    c = pipe.alloc(TPosition.CO1, t, m1 * n1 * 256)
    if c_init is not None:
        c.numpy()[:] = c_init
        c.set_defined()
    bias = None
    if c0_mode == "bias":
        bias = place(pipe, TPosition.C2, _random(rng, bias_dt, (16 * n1,)))
    params = MmadParams(m=m, n=n, k=k, cmatrixInitVal=c0_mode == "zero")
    before = c.numpy().copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        if bias is not None:
            Mmad(c, a, b, bias, params)
        else:
            Mmad(c, a, b, params)

    def dec(x, operand=True):
        if (u, s, t) == HIF8_COMBO and operand:  # uint8 codes of hifloat8_t
            return np.array([cube_hif8.decode(int(c)) for c in x], np.float64)
        if x.dtype.kind in "iu":
            return x.astype(np.int64)
        if hf32 and operand:
            h = 10 if product is P.ATLAS_350 else 11
            x = quant.round_hf32(x.view(np.uint32), h, seed % 2 == 0).view(np.float32)
        return x.astype(np.float64)

    out_kind = "F16" if t == np.float16 else "F32"
    int_range = (int(np.iinfo(t).min), int(np.iinfo(t).max)) if t.kind in "iu" else None
    ref = np.array(before).astype(np.float64 if int_range is None else np.int64)
    new_c, new_def = cube_mmad.mmad(ref, np.ones(ref.size, bool), dec(a_flat), np.ones(a_flat.size, bool),
                                    dec(b_flat), np.ones(b_flat.size, bool), m, n, k, k0,
                                    "Nz" if product is P.ATLAS_350 else "Zz", gemv=gemv, c0_mode=c0_mode,
                                    bias=None if bias is None else dec(bias.numpy(), False),
                                    bias_def=np.ones(16 * n1, bool), out_kind=out_kind,
                                    ctrl48=product in (P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_350), int_range=int_range)
    got_bits = bits(c.numpy())
    defined = c.defined()
    for ic, val in new_c.items():
        assert defined[ic] == new_def[ic]
        if new_def[ic]:
            want = val if int_range is None else np.array(val, np.int64).astype(t).view(got_bits.dtype)
            assert int(got_bits[ic]) == int(want) & (2 ** (8 * t.itemsize) - 1), (ic, product, u, t)


def test_ordered_sum_is_used_where_the_order_matters():
    """Cancellation: BLAS may sum in another order; the result must be the increasing-k float64 sum, rounded once."""
    pipe = fresh("A2")
    a = np.array([[2.0**24, 1.0, -2.0**24, 2.0**-30] + [0.0] * 4] + [[0.0] * 8] * 15, np.float32)
    b = np.eye(8, 16, dtype=np.float32) + np.array([[1.0] * 16] + [[0.0] * 16] * 7, np.float32)
    b[:, 1] = [1, 1, 1, 1, 0, 0, 0, 0]
    A = load_a(pipe, a, 8, np.float32)
    B = load_b(pipe, b, 8, np.float32)
    c = pipe.alloc(TPosition.CO1, "float", 256)
    Mmad(c, A, B, MmadParams(16, 16, 8))
    got = l0c.from_l0c(c.numpy(), 16, 16)
    want = matmul_ordered(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    assert np.array_equal(bits(got), bits(want))
    assert got[0, 1] == np.float32(1.0 + 2.0**-30)  # 2^24 + 1 - 2^24 + 2^-30 in float64, one rounding


def test_whole_matmul_against_numpy_128():
    pipe = fresh("A2")
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (128, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 128)).astype(np.float16)
    A, B = load_a(pipe, a, 16, np.float16), load_b(pipe, b, 16, np.float16)
    c = pipe.alloc(TPosition.CO1, "float", 128 * 128)
    Mmad(c, A, B, MmadParams(128, 128, 128))
    want = matmul_ordered(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    assert np.array_equal(bits(l0c.from_l0c(c.numpy(), 128, 128)), bits(want))


def test_gemv_rows_1_to_15_undefined():
    pipe = fresh("A2")
    a = place(pipe, TPosition.A2, np.arange(16, dtype=np.float16))
    b = place(pipe, TPosition.B2, np.ones(256, np.float16))
    c = pipe.alloc(TPosition.CO1, "float", 256)
    with pytest.warns(FastCopyWarning, match="m=1 runs in GEMV mode: A is read as 16 contiguous elements"):
        Mmad(c, a, b, MmadParams(1, 16, 16))
    d = c.defined().reshape(16, 16)
    assert d[0].all() and not d[1:].any()
    assert c.numpy()[0] == 120.0


def test_gemv_warning_and_disable_gemv_on_350():
    """GEMV (m == 1) reads L0A as a vector whatever wrote it: a warning on every GEMV call; Atlas 350's
    disableGemv=true reads row 0 from the Nz fractal instead, with no warning."""
    pipe = fresh("350")
    a_vals = np.arange(256, dtype=np.float16)
    a = place(pipe, TPosition.A2, a_vals)
    b = place(pipe, TPosition.B2, np.ones(256, np.float16))
    c = pipe.alloc(TPosition.CO1, "float", 256)
    with pytest.warns(FastCopyWarning, match="GEMV mode.*disableGemv=true turns GEMV off"):
        Mmad(c, a, b, MmadParams(1, 16, 16))
    assert c.numpy()[0] == float(np.arange(16).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        Mmad(c, a, b, MmadParams(1, 16, 16, disableGemv=True))
    assert c.numpy()[0] == float(np.arange(16).sum())  # row 0 of an Nz fractal is also elements 0..15
    assert c.numpy()[16] == float(np.arange(16, 32).sum())  # row 1 computed too (no GEMV)


# ------------------------------------------------------------------------------------------------ checker
def _setup(product="A2", u="half", t="float", m=16, n=16, k=16):
    pipe = fresh(product)
    a = place(pipe, TPosition.A2, np.zeros(256 if u != "int8_t" else 512, np.dtype(u if u != "int8_t" else "int8")
                                         if u not in ("half", "float") else {"half": np.float16,
                                                                             "float": np.float32}[u]))
    b = place(pipe, TPosition.B2, np.zeros(a.size, a.dtype))
    c = pipe.alloc(TPosition.CO1, t, 256)
    c.numpy()[:] = 7
    c.set_defined()
    return pipe, a, b, c


def _raises(exc, match, c, *args):
    before, before_def = c.numpy().copy(), c.defined().copy()
    with pytest.raises(exc, match=match):
        Mmad(c, *args)
    assert np.array_equal(bits(c.numpy()), bits(before)) and np.array_equal(c.defined(), before_def)


def test_error_dtype_combination():
    pipe, a, b, c = _setup("A2", t="int32_t")
    _raises(UnsupportedError, r"Mmad: half x half -> int32_t is not supported; supported: .*half x half -> float.* "
            r"on Atlas A2", c, a, b, MmadParams(16, 16, 16))


def test_error_bf16_on_910():
    pipe = fresh("910")
    a = place(pipe, TPosition.A2, np.zeros(256, ml_dtypes.bfloat16))
    b = place(pipe, TPosition.B2, np.zeros(256, ml_dtypes.bfloat16))
    c = pipe.alloc(TPosition.CO1, "float", 256)
    with pytest.raises(UnsupportedError, match="bfloat16_t x bfloat16_t -> float is not supported.*Atlas training"):
        Mmad(c, a, b, MmadParams(16, 16, 16))


def test_error_size_range():
    pipe, a, b, c = _setup()
    _raises(RangeError, r"MmadParams.k=4096 is outside \[0, 4095\] elements on Atlas A2", c, a, b,
            MmadParams(16, 16, 4096))


def test_error_unit_flag_value():
    pipe, a, b, c = _setup()
    _raises(RangeError, "unitFlag=1 is not one of 0, 2, 3", c, a, b, MmadParams(16, 16, 16, unitFlag=1))


def test_error_unit_flag_product():
    pipe, a, b, c = _setup("310B")
    _raises(UnsupportedError, "unit flags exist only on Atlas A2/A3/350 on Atlas 200I/500 A2", c, a, b,
            MmadParams(16, 16, 16, unitFlag=2))


def test_error_k_direction_align_half():
    pipe, a, b, c = _setup()
    _raises(RangeError, "kDirectionAlign=true is allowed only for float inputs on Atlas A2/A3 \\(input half\\)", c, a,
            b, MmadParams(16, 16, 16, kDirectionAlign=True))


def test_warning_k_direction_align_350():
    pipe, a, b, c = _setup("350")
    with pytest.warns(FastCopyWarning, match="kDirectionAlign=true is ignored on Atlas 350"):
        Mmad(c, a, b, MmadParams(16, 16, 16, kDirectionAlign=True))


def test_error_cmatrix_source_910():
    pipe, a, b, c = _setup("910")
    _raises(UnsupportedError, "cmatrixSource=true: there is no BiasTable on Atlas training", c, a, b,
            MmadParams(16, 16, 16, cmatrixSource=True, cmatrixInitVal=False))


def test_error_legacy_field_910_and_warning_a2():
    pipe, a, b, c = _setup("910")
    _raises(UnsupportedError, "fmOffset=3 has no documented effect", c, a, b, MmadParams(16, 16, 16, fmOffset=3))
    pipe, a, b, c = _setup("A2")
    with pytest.warns(FastCopyWarning, match="enWinogradA=True is a legacy field, ignored on Atlas A2"):
        Mmad(c, a, b, MmadParams(16, 16, 16, enWinogradA=True))


def test_error_bias_overload_on_910():
    pipe, a, b, c = _setup("910")
    bias = pipe.alloc(TPosition.C2, "float", 16)  # C2 is L0C there
    _raises(UnsupportedError, "the bias overload does not exist", c, a, b, bias, MmadParams(16, 16, 16))


def test_error_bias_in_co1():
    pipe, a, b, c = _setup()
    bias = pipe.alloc(TPosition.CO1, "float", 16, addr=4096)
    _raises(UnsupportedError, "the bias tensor is in L0C \\(CO1\\); it must be in the BiasTable", c, a, b, bias,
            MmadParams(16, 16, 16, cmatrixInitVal=False))


def test_error_bias_dtype():
    pipe, a, b, c = _setup()
    bias = pipe.alloc(TPosition.C2, "int32_t", 16)
    _raises(UnsupportedError, "bias dtype int32_t: half inputs take a float bias", c, a, b, bias,
            MmadParams(16, 16, 16, cmatrixInitVal=False))


def test_warning_bias_ignored_with_init_zero():
    pipe, a, b, c = _setup()
    bias = place(pipe, TPosition.C2, np.ones(16, np.float32))
    with pytest.warns(FastCopyWarning, match="cmatrixInitVal=true: the initial value is 0 and the bias is ignored"):
        Mmad(c, a, b, bias, MmadParams(16, 16, 16))
    assert (c.numpy() == 0).all()


def test_error_bias_alignment_and_warning():
    pipe, a, b, c = _setup()
    place(pipe, TPosition.C2, np.zeros(16, np.float32))
    bias = place(pipe, TPosition.C2, np.ones(16, np.float32), addr=64)
    with pytest.warns(FastCopyWarning, match="bias starts at byte 64, not a multiple of 128 bytes"):
        Mmad(c, a, b, bias, MmadParams(16, 16, 16, cmatrixInitVal=False))


def test_error_dst_alignment():
    pipe, a, b, _ = _setup()
    c = pipe.alloc(TPosition.CO1, "float", 512, addr=512)
    _raises(AlignmentError, "dst starts at byte 512 of L0C, not a multiple of 1024 bytes", c, a, b,
            MmadParams(16, 16, 16))


def test_error_operand_footprint():
    pipe, a, b, c = _setup()
    _raises(OutOfBoundsError, "fm needs 512 elements \\(1024 bytes\\), the tensor has 256", c, a, b,
            MmadParams(16, 16, 32))


def test_error_wrong_buffer():
    pipe, a, b, c = _setup()
    _raises(UnsupportedError, "fm is in L0B \\(B2\\); it must be in L0A", c, b, b, MmadParams(16, 16, 16))


def test_error_hf32_on_910():
    pipe = fresh("910")
    with pytest.raises(UnsupportedError, match="SetHF32Mode: not available on Atlas training"):
        SetHF32Mode(True, pipe=pipe)


def test_zero_size_is_a_noop_with_warning():
    pipe, a, b, c = _setup()
    with pytest.warns(FastCopyWarning, match="k=0: a zero size makes the call a no-op"):
        Mmad(c, a, b, MmadParams(16, 16, 0))
    assert (c.numpy() == 7).all()


def test_nan_inputs_warn():
    pipe, a, b, c = _setup()
    a.numpy()[0] = np.nan
    with pytest.warns(FastCopyWarning, match="NaN inputs"):
        Mmad(c, a, b, MmadParams(16, 16, 16))
    assert np.isnan(c.numpy()[:16]).all() and bits(c.numpy())[0] == 0x7FC00000


def test_unit_flag_hang_is_reported():
    """unitFlag 3 on Mmad sets the blocks' flags; a second producer would wait forever; Fixpipe 3 releases them."""
    from fastcopy import FixpipeParamsV220, Fixpipe, GlobalTensor, ParamError

    pipe, a, b, c = _setup()
    Mmad(c, a, b, MmadParams(16, 16, 16, unitFlag=3))
    before = c.numpy().copy()
    with pytest.raises(ParamError, match="unitFlag=3 waits for L0C block 0 .* to have flag 0, but it is 1 .* the "
                       "kernel would hang on Atlas A2"):
        Mmad(c, a, b, MmadParams(16, 16, 16, unitFlag=3))
    assert np.array_equal(c.numpy(), before)
    out = np.zeros(256, np.float32)
    Fixpipe(GlobalTensor(out), c, FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16, unitFlag=3))
    with pytest.raises(ParamError, match="to have flag 1, but it is 0"):
        Fixpipe(GlobalTensor(out), c, FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16, unitFlag=2))
    Mmad(c, a, b, MmadParams(16, 16, 16, unitFlag=2))  # flags are 0 again: a producer may run


@pytest.mark.parametrize("product", ["310P", "A2", "310B"])
def test_int4_packed_operands(product):
    """int4b_t: K0 = 64, two values per byte (even element in the low nibble); exact int32 results."""
    import ml_dtypes as mld

    rng = np.random.default_rng(5)
    m, n, k = 16, 16, 64
    a = rng.integers(-8, 8, (m, k))
    b = rng.integers(-8, 8, (k, n))
    pipe = fresh(product)

    def pack(vals):
        v = (vals & 0xF).astype(np.uint8)
        return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)

    a_img = a.reshape(-1)  # one fractal: A(i, p) at i*64 + p
    b_img = b.T.reshape(-1)  # Zn: B(p, j) at j*64 + p
    fm = place(pipe, TPosition.A2, pack(a_img).view(mld.int4))
    fl = place(pipe, TPosition.B2, pack(b_img).view(mld.int4))
    c = pipe.alloc(TPosition.CO1, "int32_t", 256)
    Mmad(c, fm, fl, MmadParams(m, n, k))
    assert np.array_equal(l0c.from_l0c(c.numpy(), 16, 16), a @ b)
    with pytest.raises(RangeError, match="k=63 must be even for int4b_t"):
        Mmad(c, fm, fl, MmadParams(m, n, 63))


def test_exporting_padding_warns():
    from fastcopy import FixpipeParamsV220, Fixpipe, GlobalTensor

    pipe, a, b, c = _setup()
    Mmad(c, a, b, MmadParams(10, 12, 16))
    out = np.zeros(256, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        Fixpipe(GlobalTensor(out), c, FixpipeParamsV220(nSize=12, mSize=10, srcStride=16, dstStride=12))
    with pytest.warns(FastCopyWarning, match="mSize=16, nSize=16 exports padding of the Mmad tile at L0C byte 0 "
                      "\\(m=10, n=12\\)"):
        Fixpipe(GlobalTensor(out), c, FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16))


@pytest.mark.parametrize("kind", ["half", "bf16", "float", "cancel", "ties", "special", "huge"])
@pytest.mark.parametrize("ctrl48", [True, False])
@pytest.mark.parametrize("with_c0", [False, True])
def test_fused_store_equals_the_ordered_sum(kind, ctrl48, with_c0):
    """The one-pass settle/encode/store kernel against the literal ordered sum, on data where BLAS order matters
    (float32 inputs, cancellation, exact ties between float32 neighbours), with NaN/inf and overflow."""
    rng = np.random.default_rng(len(kind) * 7 + ctrl48 + 2 * with_c0)
    m, k, n = 48, 96, 32
    t = {"half": 10, "bf16": 7}.get(kind, 23)
    if kind == "half":
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16).astype(np.float64)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16).astype(np.float64)
    elif kind == "bf16":
        a = (rng.standard_normal((m, k)) * 1e3).astype(ml_dtypes.bfloat16).astype(np.float64)
        b = (rng.standard_normal((k, n)) * 1e-3).astype(ml_dtypes.bfloat16).astype(np.float64)
    elif kind == "cancel":  # large terms that cancel: the sum sits far below the magnitudes
        big = rng.standard_normal((m, k // 2)).astype(np.float32)
        a = np.concatenate([big, -big], axis=1).astype(np.float64)
        a += rng.standard_normal((m, k)).astype(np.float32) * 2.0**-20
        b = np.ones((k, n)) + rng.standard_normal((k, n)).astype(np.float32) * 2.0**-12
    elif kind == "ties":  # sums exactly half-way between float32 neighbours
        a = np.zeros((m, k))
        b = np.zeros((k, n))
        a[:, 0], a[:, 1] = 1.0, 2.0**-24
        b[0], b[1] = 1.0, rng.integers(1, 4, n)
    else:
        a = rng.standard_normal((m, k)).astype(np.float32).astype(np.float64)
        b = rng.standard_normal((k, n)).astype(np.float32).astype(np.float64)
        if kind == "special":
            a[3, 5], a[7, 1], b[2, 9] = np.nan, np.inf, -np.inf
        if kind == "huge":
            a *= 2.0**100
            b *= 2.0**60
    c0 = rng.standard_normal((m, n)).astype(np.float32).astype(np.float64) if with_c0 else None
    fmt = quant.FORMATS["F32"]
    with np.errstate(invalid="ignore", over="ignore"):
        s = matmul_ordered(a, b) + (0 if c0 is None else c0)
        want = quant.encode_float(np.abs(s, out=s, where=np.isnan(s)), fmt, ctrl48)  # NaN: positive
    dst = np.zeros(m * n, np.uint32)
    numerics.matmul_store_f32(a, b, c0, ctrl48, dst.view(np.float32), dst, t, t)
    got = dst[l0c.tile_offsets(m, n)]
    assert np.array_equal(got, want), (kind, np.argwhere(got != want)[:5])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_operand_decode_every_16_bit_pattern(dtype):
    from fastcopy.kernels.matmul import gather_half_bits

    pats = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    out = np.empty((256, 256))
    nan = gather_half_bits(pats, np.arange(2**16).reshape(256, 256), dtype is ml_dtypes.bfloat16, out)
    with np.errstate(invalid="ignore"):
        want = pats.view(dtype).astype(np.float64).reshape(256, 256)
    assert nan and np.array_equal(np.isnan(out), np.isnan(want))
    fin = ~np.isnan(want)
    assert np.array_equal(out[fin].view(np.uint64), want[fin].view(np.uint64))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_last_bit_bounds_cover_every_pattern(dtype):
    """The exactness proof's per-row bound of the last significant bit is at or below the true last bit of
    every value (subnormals included)."""
    from fastcopy.kernels.matmul import _col_stats, _row_stats

    pats = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        vals = pats.view(dtype).astype(np.float64)
    vals = vals[np.isfinite(vals) & (vals != 0)]
    t = 7 if dtype is ml_dtypes.bfloat16 else 10
    total, lsb = np.empty(vals.size), np.empty(vals.size, np.int64)
    _row_stats(vals[:, None], t, total, lsb)
    m, e = np.frexp(np.abs(vals))
    mant = (m * 2**53).astype(np.int64)
    true_lsb = e - 53 + np.log2(mant & -mant).astype(np.int64)
    assert (lsb <= true_lsb).all()
    cm, lsb2 = np.empty(vals.size), np.empty(vals.size, np.int64)
    _col_stats(vals[None, :], t, cm, lsb2)
    assert np.array_equal(lsb, lsb2) and np.array_equal(cm, np.abs(vals))


# ------------------------------------------------------------------------------------- NaN results (sign)
_INF, _NAN = float("inf"), float("nan")
#: (row 0 of A, column 0 of B, C0 of element (0, 0) or None): NaN results whose sign, computed naively, depends
#: on the order of the operands of one addition (x86 keeps the first NaN of NaN + NaN; inf * 0 and inf - inf give
#: a negative NaN) or on the input NaN's sign
_NAN_CASES = {"inf*0 then NaN": ([_INF, _NAN], [0.0, 1.0], None),
              "NaN then inf*0": ([_NAN, _INF], [1.0, 0.0], None),
              "inf - inf": ([_INF, -_INF], [1.0, 1.0], None),
              "negative NaN input": ([-_NAN, 1.0], [1.0, 1.0], None),
              "C0 -inf plus inf": ([_INF], [1.0], -_INF)}
_NAN_PATHS = {"half": ("A2", np.float16, 16), "bfloat16": ("A2", ml_dtypes.bfloat16, 16),
              "float": ("A2", np.float32, 8), "HF32": ("A2", np.float32, 8), "hifloat8": ("350", np.uint8, 32),
              "half, a row undefined": ("A2", np.float16, 16), "half GEMV": ("A2", np.float16, 16)}


@pytest.mark.parametrize("case", sorted(_NAN_CASES))
@pytest.mark.parametrize("path", sorted(_NAN_PATHS))
def test_nan_results_are_the_positive_canonical_nan(case, path):
    """Every NaN an Mmad produces is written as the positive canonical quiet NaN 0x7FC00000, by the kernel and by
    the reference alike, whatever the order of the additions (regression: the kernel wrote 0xFFC00000 where the
    reference, depending on the interpreter's warm-up, had 0x7FC00000)."""
    product, dt, k0 = _NAN_PATHS[path]
    a_row, b_col, c0 = _NAN_CASES[case]
    m = 1 if path.endswith("GEMV") else 16
    hif8 = dt == np.uint8
    enc = (lambda v: np.array([cube_hif8.encode(x) for x in v], np.uint8)) if hif8 else (lambda v: np.array(v, dt))
    pipe = fresh(product)
    if path == "HF32":
        SetHF32Mode(True, pipe=pipe)
    a_flat, b_flat = np.zeros(16 * k0, dt), np.zeros(16 * k0, dt)
    a_flat[:len(a_row)], b_flat[:len(b_col)] = enc(a_row), enc(b_col)
    a = pipe.alloc(TPosition.A2, dt, a_flat.size)
    a.numpy()[:] = a_flat
    a_def = np.arange(a_flat.size) != (3 * k0 if path.endswith("undefined") else -1)  # element (3, 0)
    a.set_defined(a_def)
    b = place(pipe, TPosition.B2, b_flat)
    c = pipe.alloc(TPosition.CO1, np.float32, 256)
    c.numpy()[:] = 0.0 if c0 is None else np.where(np.arange(256) == 0, c0, 0.0)
    c.set_defined()
    before = c.numpy().astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        Mmad(c, a, b, MmadParams(m=m, n=16, k=k0, cmatrixInitVal=c0 is None))
    got = bits(c.numpy())
    assert int(got[0]) == 0x7FC00000, hex(int(got[0]))
    dec = (lambda x: np.array([cube_hif8.decode(int(v)) for v in x])) if hif8 else (lambda x: x.astype(np.float64))
    for _ in range(4):  # the interpreter specialises the reference's additions after a few runs: both states
        want, want_def = cube_mmad.mmad(before.copy(), np.ones(256, bool), dec(a_flat), a_def, dec(b_flat),
                                        np.ones(b_flat.size, bool), m, 16, k0, k0,
                                        "Nz" if product == "350" else "Zz", gemv=m == 1,
                                        c0_mode="zero" if c0 is None else "accumulate")
        assert want[0] == 0x7FC00000, hex(want[0])
        for ic, val in want.items():
            assert bool(c.defined()[ic]) == want_def[ic]
            if want_def[ic]:
                assert int(got[ic]) == val, (ic, hex(int(got[ic])), hex(val))
