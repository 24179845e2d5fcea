"""Mmad: ``C = A x B + C0`` from L0A and L0B into L0C, with the bias overload.

Validation first (every rule below raises before anything is written), then the computation:

* operands are gathered from their fractal layouts (L0A ``Zz``, ``Nz`` on Atlas 350; L0B ``Zn``; L0C ``Nz`` with
  16 x 16 fractals), ``K`` masked exactly at ``k``, the whole ``16*M1 x 16*N1`` tile computed (padding rows and
  columns from whatever L0A/L0B hold there);
* integers: exact sums, saturated to the result type;
* floats: exact products, float64 sums in increasing ``k``, ``C0`` added, one rounding to the result type under
  the overflow mode (see :mod:`fastcopy.cube.numerics`).
"""

from __future__ import annotations

import functools

import numpy as np

from ..dtypes import ASCEND_DTYPES, ascend_name
from ..errors import AlignmentError, OutOfBoundsError, ParamError, RangeError, UnsupportedError, warn
from ..products import Phys, Product
from . import fractal, l0c, numerics, quant, state, tensorio
from .outparams import MmadParams

P = Product
D = ASCEND_DTYPES
OLD = frozenset({P.ATLAS_TRAINING, P.ATLAS_INFERENCE_AICORE})
NEW = frozenset({P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_200I_500_A2, P.ATLAS_350})
ALL = OLD | NEW
_FP8 = (D["fp8_e4m3fn_t"], D["fp8_e5m2_t"])

#: (fm dtype U, filter dtype S, dst dtype T) -> (products, bias dtype V or None)
COMBOS: dict[tuple, tuple] = {
    (D["int8_t"], D["int8_t"], D["int32_t"]): (ALL, D["int32_t"]),
    (D["uint8_t"], D["int8_t"], D["int32_t"]): (OLD, None),
    (D["uint8_t"], D["uint8_t"], D["uint32_t"]): (frozenset({P.ATLAS_TRAINING}), None),
    (D["uint8_t"], D["uint8_t"], D["int32_t"]): (frozenset({P.ATLAS_INFERENCE_AICORE}), None),
    (D["int4b_t"], D["int4b_t"], D["int32_t"]): (frozenset({P.ATLAS_INFERENCE_AICORE, P.ATLAS_A2, P.ATLAS_A3,
                                                            P.ATLAS_200I_500_A2}), None),
    (D["half"], D["half"], D["float"]): (ALL, D["float"]),
    (D["half"], D["half"], D["half"]): (OLD, None),
    (D["bfloat16_t"], D["bfloat16_t"], D["float"]): (NEW, D["float"]),
    (D["float"], D["float"], D["float"]): (NEW, D["float"]),
    **{(u, s, D["float"]): (frozenset({P.ATLAS_350}), D["float"]) for u in _FP8 for s in _FP8},
    # hifloat8_t x hifloat8_t -> float: HiFloat8 has no numpy type; its codes travel as uint8 (fastcopy.cube.hif8)
    (D["hifloat8_t"], D["hifloat8_t"], D["float"]): (frozenset({P.ATLAS_350}), D["float"]),
}
#: stored fraction bits of the float input formats (HiFloat8: at most 3), to prove sums exact
_FRACTION_BITS = {D["half"]: 10, D["bfloat16_t"]: 7, D["fp8_e4m3fn_t"]: 3, D["fp8_e5m2_t"]: 2,
                  D["hifloat8_t"]: 3, D["float"]: 23}
#: the (U, S, T) combination whose uint8 operands are HiFloat8 codes
HIF8_COMBO = (D["hifloat8_t"], D["hifloat8_t"], D["float"])
BIAS_PRODUCTS = NEW
#: int4b_t operands: two values per byte, element p in bits 3:0 (even p) or 7:4 (odd p) of byte p // 2
INT4 = D["int4b_t"]
API = "Mmad"


def _fail(exc, msg, product):
    raise exc(f"{API}: {msg} on {product}")


def _combo_text(product):
    return "; ".join("hifloat8_t (uint8 codes) x hifloat8_t -> float" if (u, s, t) == HIF8_COMBO else
                     f"{ascend_name(u)} x {ascend_name(s)} -> {ascend_name(t)}"
                     for (u, s, t), (prods, _) in COMBOS.items() if product in prods)


@functools.lru_cache(maxsize=1024)
def _checked_params(key: tuple, product, u, has_bias: bool) -> tuple:
    """The field rules (raising) and warnings of one MmadParams value, cached by its value."""
    return tuple(_check_params(MmadParams(*key), product, u, True if has_bias else None))


def _check_params(p: MmadParams, product, u, bias) -> list:
    warns = []
    for name in ("m", "n", "k"):
        v = getattr(p, name)
        if v > 4095:
            _fail(RangeError, f"MmadParams.{name}={v} is outside [0, 4095] elements", product)
    if p.unitFlag not in (0, 2, 3):
        _fail(RangeError, f"MmadParams.unitFlag={p.unitFlag} is not one of 0, 2, 3", product)
    if p.unitFlag and product not in (P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_350):
        _fail(UnsupportedError, f"MmadParams.unitFlag={p.unitFlag}: unit flags exist only on Atlas A2/A3/350",
              product)
    if p.kDirectionAlign:
        if product is P.ATLAS_350:
            warns.append(f"{API}: MmadParams.kDirectionAlign=true is ignored on {product} (its slot carries "
                         "disableGemv)")
        elif product not in (P.ATLAS_A2, P.ATLAS_A3) or u != D["float"]:
            _fail(RangeError, "MmadParams.kDirectionAlign=true is allowed only for float inputs on Atlas A2/A3 "
                  f"(input {ascend_name(u)})", product)
    if product in OLD:
        if p.cmatrixSource:
            _fail(UnsupportedError, "MmadParams.cmatrixSource=true: there is no BiasTable", product)
        for name in ("fmOffset", "enSsparse", "enWinogradA", "enWinogradB"):
            if getattr(p, name):
                _fail(UnsupportedError, f"MmadParams.{name}={getattr(p, name)} has no documented effect", product)
    else:
        for name in ("fmOffset", "enSsparse", "enWinogradA", "enWinogradB"):
            if getattr(p, name):
                warns.append(f"{API}: MmadParams.{name}={getattr(p, name)} is a legacy field, ignored on {product}")
    if p.disableGemv and product is not P.ATLAS_350:
        _fail(UnsupportedError, "MmadParams.disableGemv exists only on Atlas 350", product)
    if p.m == 1 and p.n and p.k and not (product is P.ATLAS_350 and p.disableGemv):
        warns.append(f"{API}: m=1 runs in GEMV mode: A is read as {p.k} contiguous elements from the start of fm, "
                     "not as fractals; an L0A filled in a fractal layout (LoadData of a Zz/Nz tile) gives another "
                     "row 0 (fastcopy does not track which instruction wrote L0A, so every GEMV call warns"
                     + ("; disableGemv=true turns GEMV off" if product is P.ATLAS_350 else "") + ")")
    if bias is not None and p.cmatrixInitVal and not p.isBias:
        warns.append(f"{API}: bias overload with cmatrixInitVal=true: the initial value is 0 and the bias is "
                     "ignored (set cmatrixInitVal=false to add the bias)")
    return warns


@functools.lru_cache(maxsize=256)
def _geometry(m: int, n: int, k: int, product, u, k_align: bool, disable_gemv: bool):
    """Element offsets of A in L0A and B in L0B (read-only), GEMV flag, fractal counts and footprints."""
    k0 = 64 if u == INT4 else 256 // (u.itemsize * 8)
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // k0)
    gemv = m == 1 and not (product is P.ATLAS_350 and disable_gemv)
    if gemv:
        a_offs = np.arange(k0 * k1, dtype=np.int64)[None, :]
        a_foot = k0 * k1
    elif product is P.ATLAS_350:
        a_offs = fractal.offsets("Nz", 16 * m1, k0 * k1, (16, k0), m1)
        a_foot = m1 * k1 * 16 * k0
    else:
        k1s = 2 * -(-k // 16) if (u == D["float"] and k_align) else k1
        a_offs = fractal.offsets("Zz", 16 * m1, k0 * k1, (16, k0), k1s)
        a_foot = ((m1 - 1) * k1s + k1) * 16 * k0
    b_offs = fractal.offsets("Zn", k0 * k1, 16 * n1, (k0, 16), n1)
    a_offs = np.ascontiguousarray(a_offs[:, :k])
    b_offs = np.ascontiguousarray(b_offs[:k])
    for arr in (a_offs, b_offs):
        arr.flags.writeable = False
    return gemv, m1, n1, a_offs, a_foot, b_offs, k1 * n1 * 16 * k0


@functools.lru_cache(maxsize=256)
def _read_spans(m: int, n: int, k: int, product, u, k_align: bool, disable_gemv: bool) -> tuple:
    """1 + the largest element offset :func:`_geometry` reads in L0A and in L0B (0 for none)."""
    g = _geometry(m, n, k, product, u, k_align, disable_gemv)
    return tuple(int(offs.max()) + 1 if offs.size else 0 for offs in (g[3], g[5]))


def _check_tensor(tensor, role, phys, align, warn_align, need_elems, product, warns):
    if tensor.memory.phys is not phys:
        _fail(UnsupportedError, f"{role} is in {tensor.memory.phys} ({tensor.position}); it must be in {phys}",
              product)
    if tensor.offset % align:
        _fail(AlignmentError, f"{role} starts at byte {tensor.offset} of {phys}, not a multiple of {align} bytes",
              product)
    if warn_align and tensor.offset % warn_align:
        warns.append(f"{API}: {role} starts at byte {tensor.offset}, not a multiple of {warn_align} bytes (the "
                     "debug check demands it)")
    if need_elems > tensor.size:
        _fail(OutOfBoundsError, f"{role} needs {need_elems} elements ({need_elems * tensor.itemsize} bytes), the "
              f"tensor has {tensor.size}", product)


def Mmad(dst, fm, filter, *args):  # noqa: N802, A002
    """``Mmad(dst, fm, filter, MmadParams)`` or ``Mmad(dst, fm, filter, bias, MmadParams)`` (Ascend C)."""
    if len(args) == 1:
        bias, params = None, args[0]
    elif len(args) == 2:
        bias, params = args
    else:
        raise ParamError(f"{API}: takes (dst, fm, filter, params) or (dst, fm, filter, bias, params)")
    if not isinstance(params, MmadParams):
        raise ParamError(f"{API}: params must be MmadParams, got {type(params).__name__}")
    pipe = dst.pipe
    product = pipe.product
    u, s, t = fm.dtype, filter.dtype, dst.dtype
    combo = COMBOS.get((u, s, t))
    if combo is None or product not in combo[0]:
        _fail(UnsupportedError, f"{ascend_name(u)} x {ascend_name(s)} -> {ascend_name(t)} is not supported; "
              f"supported: {_combo_text(product)}", product)
    warns = list(_checked_params(params.key(), product, u, bias is not None))
    if bias is not None:
        if product not in BIAS_PRODUCTS:
            _fail(UnsupportedError, "the bias overload does not exist (no BiasTable)", product)
        if bias.memory.phys is Phys.L0C:
            _fail(UnsupportedError, "the bias tensor is in L0C (CO1); it must be in the BiasTable (C2)", product)
        if combo[1] is None or bias.dtype != combo[1]:
            _fail(UnsupportedError, f"bias dtype {ascend_name(bias.dtype)}: {ascend_name(u)} inputs take a "
                  f"{ascend_name(combo[1]) if combo[1] is not None else 'no'} bias", product)
    m, n, k = params.m, params.n, params.k
    if m == 0 or n == 0 or k == 0:
        for msg in warns + [f"{API}: m={m}, n={n}, k={k}: a zero size makes the call a no-op"]:
            warn(msg)
        return
    gemv, m1, n1, a_offs, a_foot, b_offs, b_foot = _geometry(m, n, k, product, u, params.kDirectionAlign,
                                                               params.disableGemv)
    c_align = 512 if (product in OLD and t == D["half"]) else 1024
    _check_tensor(dst, "dst", Phys.L0C, c_align, 0, m1 * n1 * 256, product, warns)
    if u == INT4:  # footprints in bytes of packed nibbles; the tensors' elements are those bytes
        if k % 2:
            _fail(RangeError, f"MmadParams.k={k} must be even for int4b_t inputs", product)
        a_foot, b_foot = -(-a_foot // 2), -(-b_foot // 2)
    _check_tensor(fm, "fm", Phys.L0A, 512, 0, a_foot, product, warns)
    _check_tensor(filter, "filter", Phys.L0B, 512, 0, b_foot, product, warns)
    init_zero = params.cmatrixInitVal and not params.isBias
    from_bt = bias is not None or params.cmatrixSource
    if not init_zero and from_bt:
        if bias is not None:
            _check_tensor(bias, "bias", Phys.BT, 64, 128, 16 * n1, product, warns)
        elif 16 * n1 * t.itemsize > pipe.capacities.get(Phys.BT, 0):
            _fail(OutOfBoundsError, f"cmatrixSource reads {16 * n1} elements from BiasTable byte 0, beyond its "
                  "capacity", product)

    flag_update = state.unit_flag_check(API, pipe, dst.offset, dst.offset + m1 * n1 * 256 * t.itemsize,
                                        params.unitFlag, producer=True)

    # ---- compute (nothing was written before this point)
    fast = t == D["float"] and u.itemsize == 2 and s.itemsize == 2 and not gemv
    if fast:  # 16-bit float inputs: gather and decode in one compiled pass
        a_hi, b_hi = _read_spans(m, n, k, product, u, params.kDirectionAlign, params.disableGemv)
        a64, a_nan, a_def = _gather16(fm, a_offs, a_hi)
        b64, b_nan, b_def = _gather16(filter, b_offs, b_hi)
        a_vals = b_vals = None
    elif u == INT4:
        a_vals, a_def = _read_int4(fm, a_offs)
        b_vals, b_def = _read_int4(filter, b_offs)
    else:
        a_vals, a_def = tensorio.read(fm, a_offs)
        b_vals, b_def = tensorio.read(filter, b_offs)
    if gemv:
        a_vals = np.repeat(a_vals, 16 * m1, axis=0)
        a_def = None if a_def is None else np.repeat(a_def, 16 * m1, axis=0)
    c_offs = l0c.tile_offsets(16 * m1, 16 * n1)
    defined = tensorio.combine(None if a_def is None else a_def.all(axis=1)[:, None],
                               None if b_def is None else b_def.all(axis=0)[None, :])
    if init_zero:
        c0, c0_def = None, None
    elif from_bt:
        if bias is None:
            from ..memory import LocalTensor
            from ..products import TPosition

            bias = LocalTensor(pipe, TPosition.C2, pipe.buffer(Phys.BT), 0, t, 16 * n1)
        bv, bd = tensorio.read(bias, np.arange(16 * n1, dtype=np.int64))
        c0, c0_def = np.broadcast_to(bv[None, :], c_offs.shape), None if bd is None else bd[None, :]
    else:
        c0, c0_def = tensorio.read(dst, c_offs)
    defined = tensorio.combine(defined, c0_def)

    if t.kind in "iu":
        acc = (a_vals.astype(np.float64) @ b_vals.astype(np.float64)).astype(np.int64)  # exact: < 2^53
        if c0 is not None:
            acc = acc + c0.astype(np.int64)
        info = np.iinfo(t)
        out = np.clip(acc, info.min, info.max).astype(t)
    else:
        if not fast:
            hif8 = (u, s, t) == HIF8_COMBO
            if hif8:
                warns.append(f"{API}: hifloat8_t inputs (uint8 codes) are experimental")
            a64, b64 = _float_inputs(a_vals, pipe, hif8), _float_inputs(b_vals, pipe, hif8)
            a_nan, b_nan = np.isnan(a64).any(), np.isnan(b64).any()
        if a_nan or b_nan:
            warns.append(f"{API}: NaN inputs (the hardware may raise an execution error)")
        fmt = quant.FORMATS[quant.FORMAT_OF[t]]
        mode = state.ctrl48(pipe)
        c64 = None if c0 is None else c0.astype(np.float64)
        mem = dst.memory
        if fmt.name == "F32" and defined is None and not gemv and not mem.readonly:
            # one compiled pass settles, encodes and stores the tile straight into L0C
            for msg in warns:
                warn(msg)
            lo, hi = dst.offset, dst.offset + 4 * c_offs.size
            region = mem.data[lo:hi]
            numerics.matmul_store_f32(a64, b64, c64, mode, region.view(np.float32), region.view(np.uint32),
                                      _FRACTION_BITS.get(u, 23), _FRACTION_BITS.get(s, 23))
            mem.mark_defined(lo, hi)
            state.unit_flag_apply(pipe, flag_update)
            state.note_tile(pipe, dst.offset, m, n, t.itemsize)
            return
        out = numerics.matmul_rounded(a64, b64, c64, lambda v: quant.encode_float(v, fmt, mode),
                                      f32=fmt.name == "F32").view(t)
    if gemv:  # rows 1..15 of each written fractal are undefined
        defined = tensorio.combine(defined, (np.arange(16 * m1) % 16 == 0)[:, None])
    for msg in warns:
        warn(msg)
    tensorio.write(dst, c_offs, out, defined, dense=True)
    state.unit_flag_apply(pipe, flag_update)
    state.note_tile(pipe, dst.offset, m, n, t.itemsize)


def _read_int4(tensor, offs):
    """(int8 values, definedness) of packed 4-bit elements at 4-bit offsets ``offs`` (even: low nibble)."""
    byte, odd = offs // 2, (offs % 2).astype(bool)
    raw, ok = tensorio.read(tensor, byte, np.uint8)
    nib = np.where(odd, raw >> 4, raw & 0xF).astype(np.int8)
    return np.where(nib >= 8, nib - 16, nib).astype(np.int8), ok


def _gather16(tensor, offs, hi: int):
    """(float64 values, any NaN, definedness) of the 16-bit float elements at ``offs`` (all below ``hi``)."""
    from ..kernels.matmul import gather_half_bits  # numba: loaded on first use (import fastcopy stays numba-free)

    mem = tensor.memory
    raw = mem.data[tensor.offset:tensor.offset + 2 * hi].view(np.uint16)
    out = np.empty(offs.shape, np.float64)
    nan = gather_half_bits(raw, offs, tensor.dtype != D["half"], out)
    ok = tensorio.defined_elements(mem, tensor.offset, hi, 2)
    return out, nan, (None if ok is None else ok[offs])


def _float_inputs(vals: np.ndarray, pipe, hif8: bool = False) -> np.ndarray:
    """Exact float64 values of the inputs (float32 after HF32 rounding when that mode is on; HiFloat8 codes
    decoded, their NaN / infinity codes read under the overflow mode)."""
    if hif8:
        from .hif8 import decode_hif8

        return decode_hif8(vals, inf_nan=state.ctrl48(pipe)).astype(np.float64)
    if vals.dtype == D["float"]:
        enabled, nearest_even, h = state.hf32_state(pipe)
        if enabled:
            vals = quant.round_hf32(vals.view(np.uint32), h, nearest_even).view(np.float32)
    with np.errstate(invalid="ignore"):
        return vals.astype(np.float64)
