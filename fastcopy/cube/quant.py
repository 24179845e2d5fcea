"""Element conversions on the way out of L0C (quantisation, casts, ReLU), bit for bit.

Every Fixpipe / DataCopy-out-of-L0C element goes through :func:`convert`: the source value ``x`` (float32 or int32
from L0C), the quantisation mode, the scale word ``q`` (scalar, or one per column), ReLU and the overflow mode.
Products ``x * M1`` are formed exactly (float64 holds 24 x 11 bits) and rounded once to the destination format.

The rounding here works on float64 with the "magic add" trick: adding ``2^(E - t + 52)`` to a value of binade
``E`` leaves exactly ``t`` fraction bits, rounded to nearest-even by the FPU. The readable oracle in
:mod:`fastcopy.reference.cube_quant` writes the same rules with ``log2``/``rint`` instead.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import ml_dtypes
import numpy as np

from ..errors import UnsupportedError


class QuantMode_t(enum.Enum):  # noqa: N801 - Ascend C spelling
    """The quantisation modes of Fixpipe / DataCopyCO12DstParams (``QuantMode_t`` of Ascend C)."""

    NoQuant = "NoQuant"
    F322F16 = "F322F16"
    F322BF16 = "F322BF16"
    DEQF16 = "DEQF16"
    VDEQF16 = "VDEQF16"
    QF322B8_PRE = "QF322B8_PRE"
    VQF322B8_PRE = "VQF322B8_PRE"
    REQ8 = "REQ8"
    VREQ8 = "VREQ8"
    QF322FP8_PRE = "QF322FP8_PRE"
    VQF322FP8_PRE = "VQF322FP8_PRE"
    QF322HIF8_PRE = "QF322HIF8_PRE"
    VQF322HIF8_PRE = "VQF322HIF8_PRE"
    QF322HIF8_PRE_HYBRID = "QF322HIF8_PRE_HYBRID"
    VQF322HIF8_PRE_HYBRID = "VQF322HIF8_PRE_HYBRID"
    QS322BF16_PRE = "QS322BF16_PRE"
    VQS322BF16_PRE = "VQS322BF16_PRE"
    QF322F16_PRE = "QF322F16_PRE"
    VQF322F16_PRE = "VQF322F16_PRE"
    QF322BF16_PRE = "QF322BF16_PRE"
    VQF322BF16_PRE = "VQF322BF16_PRE"
    QF322F32_PRE = "QF322F32_PRE"
    VQF322F32_PRE = "VQF322F32_PRE"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def get(cls, value) -> "QuantMode_t":
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).split("::")[-1])
        except ValueError:
            raise UnsupportedError(f"quantPre={value!r} is not a QuantMode_t; modes: "
                                   f"{', '.join(m.value for m in cls)}") from None


F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)


class Format(NamedTuple):
    """A float destination format: stored mantissa bits, minimum normal exponent, largest finite value,
    canonical quiet NaN (positive) and the numpy dtype that stores it."""

    name: str
    t: int
    emin: int
    max: float
    nan: int
    dtype: np.dtype
    uint: np.dtype


FORMATS = {
    "F16": Format("F16", 10, -14, 65504.0, 0x7E00, F16, np.dtype(np.uint16)),
    "BF16": Format("BF16", 7, -126, float((2 - 2**-7) * 2.0**127), 0x7FC0, BF16, np.dtype(np.uint16)),
    "F32": Format("F32", 23, -126, float(np.finfo(np.float32).max), 0x7FC00000, F32, np.dtype(np.uint32)),
    "E4M3": Format("E4M3", 3, -6, 448.0, 0x7F, E4M3, np.dtype(np.uint8)),
}
FORMAT_OF = {F16: "F16", BF16: "BF16", F32: "F32", E4M3: "E4M3"}


class ModeRule(NamedTuple):
    """What a mode does: source kind, allowed destination dtypes, scale source, element function, products."""

    src: np.dtype
    dst: frozenset
    vector: bool  # one scale word per column (from a table) instead of the scalar word
    scaled: bool  # uses the scale word at all
    only_350: bool
    experimental: bool = False


def _rule(src, dst, vector=False, scaled=True, only_350=False, experimental=False):
    return ModeRule(src, frozenset(dst), vector, scaled, only_350, experimental)


Q = QuantMode_t
_B8 = (I8, U8)
#: (mode, source dtype) -> rule. A (U, T) pair accepts only the modes of its row; modes are never inferred.
MODES: dict[tuple[QuantMode_t, np.dtype], ModeRule] = {
    (Q.NoQuant, F32): _rule(F32, (F32,), scaled=False),
    (Q.NoQuant, I32): _rule(I32, (I32,), scaled=False),
    (Q.F322F16, F32): _rule(F32, (F16,), scaled=False),
    (Q.F322BF16, F32): _rule(F32, (BF16,), scaled=False),
    (Q.DEQF16, I32): _rule(I32, (F16,)),
    (Q.VDEQF16, I32): _rule(I32, (F16,), vector=True),
    (Q.QF322B8_PRE, F32): _rule(F32, _B8),
    (Q.VQF322B8_PRE, F32): _rule(F32, _B8, vector=True),
    (Q.REQ8, I32): _rule(I32, _B8),
    (Q.VREQ8, I32): _rule(I32, _B8, vector=True),
    (Q.QF322FP8_PRE, F32): _rule(F32, (E4M3,), only_350=True),
    (Q.VQF322FP8_PRE, F32): _rule(F32, (E4M3,), vector=True, only_350=True),
    (Q.QF322HIF8_PRE, F32): _rule(F32, (U8,), only_350=True, experimental=True),
    (Q.VQF322HIF8_PRE, F32): _rule(F32, (U8,), vector=True, only_350=True, experimental=True),
    (Q.QF322HIF8_PRE_HYBRID, F32): _rule(F32, (U8,), only_350=True, experimental=True),
    (Q.VQF322HIF8_PRE_HYBRID, F32): _rule(F32, (U8,), vector=True, only_350=True, experimental=True),
    (Q.QS322BF16_PRE, I32): _rule(I32, (BF16,), only_350=True),
    (Q.VQS322BF16_PRE, I32): _rule(I32, (BF16,), vector=True, only_350=True),
    (Q.QF322F16_PRE, F32): _rule(F32, (F16,), only_350=True),
    (Q.VQF322F16_PRE, F32): _rule(F32, (F16,), vector=True, only_350=True),
    (Q.QF322BF16_PRE, F32): _rule(F32, (BF16,), only_350=True),
    (Q.VQF322BF16_PRE, F32): _rule(F32, (BF16,), vector=True, only_350=True),
    (Q.QF322F32_PRE, F32): _rule(F32, (F32,), only_350=True),
    (Q.VQF322F32_PRE, F32): _rule(F32, (F32,), vector=True, only_350=True),
}


# ------------------------------------------------------------------------------------------------ scale word
class QuantWord(NamedTuple):
    """The fields of a QUANT_PRE word (arrays, one per element, or scalars)."""

    m1: np.ndarray  # float64: the (1, 8, 10) scale, low 13 mantissa bits dropped
    shift: np.ndarray  # N = field + 1 (int32 sources with MCB)
    mcb: np.ndarray  # bool
    off: np.ndarray  # int64, 9-bit two's complement
    sign: np.ndarray  # bool: 1 -> int8 output range, 0 -> uint8


M1_MASK = 0xFFFFE000


def decode_word(q, arch3510: bool) -> QuantWord:
    """Split QUANT_PRE word(s) ``q`` (uint64) into fields. Bits 12:0 are ignored (truncated, not rounded)."""
    q = np.asarray(q, dtype=np.uint64)
    with np.errstate(invalid="ignore"):  # NaN scale patterns are rejected by the checker
        m1 = (q & np.uint64(M1_MASK)).astype(np.uint32).view(np.float32).astype(np.float64)
    off = ((q >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
    off = np.where(off >= 256, off - 512, off)
    sign = ((q >> np.uint64(46)) & np.uint64(1)).astype(bool)
    if arch3510:
        shift, mcb = np.ones(q.shape, np.int64), np.zeros(q.shape, bool)
    else:
        shift = ((q >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1
        mcb = ((q >> np.uint64(36)) & np.uint64(1)).astype(bool)
    return QuantWord(m1, shift, mcb, off, sign)


def make_word(scale: float = 1.0, offset: int = 0, sign: bool = False, shift: int = 1, mcb: bool = False) -> int:
    """Build a QUANT_PRE word: ``scale`` as float32 bits (bits 31:0), ``shift`` 1..16 in bits 35:32, MCB bit 36,
    ``offset`` -256..255 in bits 45:37 (two's complement), ``sign`` bit 46. The hardware keeps only bits 31:13 of
    the scale (use :func:`scale_of` to see the value it will use)."""
    bits = int(np.float32(scale).view(np.uint32))
    if not 1 <= shift <= 16:
        raise ValueError(f"make_word: shift={shift} is outside [1, 16]")
    if not -256 <= offset <= 255:
        raise ValueError(f"make_word: offset={offset} is outside [-256, 255] (9-bit two's complement)")
    return bits | (shift - 1) << 32 | int(bool(mcb)) << 36 | (offset & 0x1FF) << 37 | int(bool(sign)) << 46


def scale_of(q: int) -> float:
    """The scale factor M1 the hardware uses for word ``q`` (bits 31:13 as a float32)."""
    return float(np.uint32(int(q) & M1_MASK).view(np.float32))


# ------------------------------------------------------------------------------------------------- rounding
def round_format(v: np.ndarray, fmt: Format) -> np.ndarray:
    """Round float64 ``v`` to the grid of ``fmt`` (RNE, gradual underflow, no range limit). NaN/inf pass."""
    a = np.abs(v)
    finite = np.isfinite(a) & (a > 0)
    _, e = np.frexp(np.where(finite, a, 1.0))  # a = m * 2^e, m in [0.5, 1): binade E = e - 1
    big = np.ldexp(1.0, np.maximum(e - 1, fmt.emin) - fmt.t + 52)
    with np.errstate(invalid="ignore"):
        r = (a + big) - big
    r = np.where(finite, r, a)
    return np.copysign(r, v)


def encode_float(v: np.ndarray, fmt: Format, ctrl48: bool, ctrl50: bool = False) -> np.ndarray:
    """Round float64 ``v`` once to ``fmt`` and apply the overflow mode; returns the unsigned bit patterns."""
    if ctrl48 and fmt.name in ("F16", "F32") and not np.isnan(v).any():
        with np.errstate(over="ignore"):  # the hardware casts round once, to nearest even, overflow to inf
            return v.astype(fmt.dtype).view(fmt.uint)
    r = round_format(v, fmt)
    nan = np.isnan(v)
    neg = np.signbit(v)
    over = np.abs(r) > fmt.max  # includes +-inf
    if fmt.name == "E4M3":
        if ctrl48:  # overflow and infinity become NaN, sign kept
            r = np.where(over, np.nan, r)
        else:
            r = np.where(over, np.copysign(fmt.max, v), r)
        with np.errstate(invalid="ignore", over="ignore"):
            bits = np.where(np.isnan(r), 0, r).astype(np.float32).astype(E4M3).view(np.uint8)
        nan_out = (nan & (ctrl48 or ctrl50)) | (over & ctrl48)
        bits = np.where(nan_out, fmt.nan | (neg.astype(np.uint8) << 7), bits)
        return np.where(nan & ~(ctrl48 or ctrl50), np.uint8(0), bits).astype(np.uint8)
    if not ctrl48:
        r = np.where(over, np.copysign(fmt.max, v), r)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt.name == "F16":
            bits = r.astype(np.float16).view(np.uint16)
        elif fmt.name == "BF16":
            bits = (r.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        else:
            bits = r.astype(np.float32).view(np.uint32)
    u = fmt.uint.type
    sign_bit = u(1 << (8 * fmt.uint.itemsize - 1))
    if ctrl48:
        canon = np.where(neg, u(fmt.nan) | sign_bit, u(fmt.nan))
        return np.where(nan, canon, bits).astype(fmt.uint)
    return np.where(nan, u(0), bits).astype(fmt.uint)


def round_hf32(bits: np.ndarray, h: int, nearest_even: bool) -> np.ndarray:
    """Round float32 patterns to HF32 with ``h`` stored mantissa bits (inf and NaN kept). ``nearest_even``:
    ties to even; else ties away from zero (the NEAREST_ZERO mode)."""
    b = np.asarray(bits, np.uint32).astype(np.uint64)
    d = 23 - h
    low = b & np.uint64((1 << d) - 1)
    kept = b & ~np.uint64((1 << d) - 1) & np.uint64(0xFFFFFFFF)
    half = np.uint64(1 << (d - 1))
    if nearest_even:
        up = (low > half) | ((low == half) & (((kept >> np.uint64(d)) & np.uint64(1)) == 1))
    else:
        up = low >= half
    out = kept + np.where(up, np.uint64(1 << d), np.uint64(0))
    special = ((b >> np.uint64(23)) & np.uint64(0xFF)) == 0xFF
    return np.where(special, b, out).astype(np.uint32)


# --------------------------------------------------------------------------------------------- element function
def _relu_float(x: np.ndarray) -> np.ndarray:
    """+0 for inputs with the sign bit set (negative, -0, -inf), NaN and the rest unchanged."""
    return np.where(np.signbit(x) & ~np.isnan(x), 0.0, x)


def _b8(t: np.ndarray, w: QuantWord) -> np.ndarray:
    """clamp(RNE_INT(clamp(t, -256, 255)) + OFF) to the int8 (SIGN) or uint8 range; NaN counts as 0."""
    t = np.where(np.isnan(t), 0.0, t)
    y = np.rint(np.clip(t, -256.0, 255.0)).astype(np.int64) + w.off
    lo = np.where(w.sign, -128, 0)
    hi = np.where(w.sign, 127, 255)
    return (np.clip(y, lo, hi) & 0xFF).astype(np.uint8)


def _int_source(x: np.ndarray, w: QuantWord) -> np.ndarray:
    """int32 -> float64 value of F32(MCB ? sat16(x >> N) : x) (DEQF16, REQ8, QS322BF16_PRE)."""
    x = x.astype(np.int64)
    shifted = np.clip(x >> w.shift, -32768, 32767)
    v = np.where(w.mcb, shifted, x)
    return v.astype(np.float32).astype(np.float64)  # int -> float32 rounds to nearest even


def convert(x: np.ndarray, mode, dst_dtype, q=None, relu: bool = False, ctrl48: bool = True,
            arch3510: bool = False, ctrl50: bool = False) -> np.ndarray:
    """Convert L0C values ``x`` (float32 or int32 array) with ``mode`` to ``dst_dtype``.

    ``q`` is the scale word (a Python int) or an array of words broadcastable to ``x`` (vector modes: one per
    column). Returns an array of ``dst_dtype`` (int8/uint8 outputs as their byte patterns). The caller has checked
    that ``(mode, x.dtype, dst_dtype)`` is a valid row of :data:`MODES`.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return _convert(QuantMode_t.get(mode), np.asarray(x), dst_dtype, q, relu, ctrl48, arch3510, ctrl50)


def _convert(mode, x, dst_dtype, q, relu, ctrl48, arch3510, ctrl50):
    dst_dtype = np.dtype(dst_dtype)
    is_int = x.dtype == I32
    if mode is Q.NoQuant:
        if not relu:
            return x.copy()
        return np.maximum(x, 0).astype(I32) if is_int else _relu_float(x).astype(F32)
    if mode in (Q.F322F16, Q.F322BF16):
        r = x.astype(np.float64)
        if relu:
            r = _relu_float(r)
        fmt = FORMATS["F16" if mode is Q.F322F16 else "BF16"]
        return encode_float(r, fmt, ctrl48).view(fmt.dtype)
    w = decode_word(np.uint64(0) if q is None else q, arch3510)
    if is_int:
        v = _int_source(x, w)
    else:
        v = x.astype(np.float64)  # MCB and N apply to int32 sources only
    t = v * w.m1  # exact in float64
    if relu:
        t = np.where(np.signbit(v) & ~np.isnan(v), 0.0, t)
    base = mode.value.lstrip("V") if mode.value.startswith("V") else mode.value
    if base in ("REQ8", "QF322B8_PRE"):
        return _b8(t, w).view(dst_dtype)
    if base in ("QF322HIF8_PRE", "QF322HIF8_PRE_HYBRID"):  # the encoder takes float32: one RNE rounding first
        from .hif8 import encode_hif8

        return encode_hif8(t.astype(np.float32), "hybrid" if base.endswith("HYBRID") else "round", inf_nan=ctrl48)
    fmt = FORMATS[{"DEQF16": "F16", "QF322F16_PRE": "F16", "QF322BF16_PRE": "BF16", "QS322BF16_PRE": "BF16",
                   "QF322F32_PRE": "F32", "QF322FP8_PRE": "E4M3"}[base]]
    return encode_float(t, fmt, ctrl48, ctrl50).view(fmt.dtype)
