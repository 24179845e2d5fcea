"""Reference (test-oracle) conversions out of L0C, written from the rules as stated, one formula per rule.

Rounding of a real value ``v`` to a float format with ``t`` stored mantissa bits and minimum normal exponent
``emin`` (round to nearest, ties to even, gradual underflow)::

    E = max(floor(log2 |v|), emin);   r = RNE(|v| * 2^(t - E));   result = sign(v) * r * 2^(E - t)

and the result is encoded field by field (sign, biased exponent, fraction). Overflow: INF_NAN mode (CTRL48 = 1)
gives infinity (fp8 e4m3: NaN); saturation mode (CTRL48 = 0) gives the largest finite value and NaN -> +0.

The scale word (QUANT_PRE): M1 = float32 of bits 31:13 (bits 12:0 dropped); N = bits 35:32 + 1; MCB bit 36;
OFF = bits 45:37 as 9-bit two's complement; SIGN = bit 46. On Atlas 350 N and MCB are ignored.

Per element, with ReLU sending every input whose sign bit is set (and is not NaN) to +0 before scaling::

    NoQuant        y = x (ReLU: max(x, +0))
    F322F16/BF16   y = F16/BF16(x)
    DEQF16         y = F16(F32(MCB ? sat16(x >> N) : x) * M1)
    REQ8           y = B8(F32(MCB ? sat16(x >> N) : x) * M1)
    QF322B8_PRE    y = B8(x * M1)
    QS322BF16_PRE  y = BF16(F32(x) * M1);   QF322F16/BF16/F32/FP8_PRE  y = F16/BF16/F32/E4M3(x * M1)
    QF322HIF8_PRE(_HYBRID)  y = HIF8(F32(x * M1)) with the "round" ("hybrid") rule of cube_hif8
    B8(t)          = clamp(RNE(clamp(t, -256, 255)) + OFF, SIGN ? [-128, 127] : [0, 255]),   NaN -> 0
"""

from __future__ import annotations

import math

import numpy as np

from . import cube_hif8

#: name -> (stored mantissa bits t, exponent bits, largest finite value, has infinities)
FLOATS = {
    "F16": (10, 5, 65504.0, True),
    "BF16": (7, 8, (2 - 2**-7) * 2.0**127, True),
    "F32": (23, 8, (2 - 2**-23) * 2.0**127, True),
    "E4M3": (3, 4, 448.0, False),
}


def fields(name):
    t, ebits, vmax, has_inf = FLOATS[name]
    bias = 2 ** (ebits - 1) - 1
    return t, ebits, bias, 1 - bias, vmax, has_inf


def rnd(v: float, name: str) -> float:
    """RND_f(v): the value on the format's grid, no range limit."""
    t, _, _, emin, _, _ = fields(name)
    if v == 0 or math.isnan(v) or math.isinf(v):
        return v
    E = max(math.frexp(abs(v))[1] - 1, emin)
    r = round(abs(v) * 2.0 ** (t - E))  # Python round(): ties to even
    return math.copysign(r * 2.0 ** (E - t), v)


def encode(v: float, name: str, ctrl48: bool = True, ctrl50: bool = False) -> int:
    """Bit pattern of ``v`` rounded once to format ``name`` under the overflow mode."""
    t, ebits, bias, emin, vmax, has_inf = fields(name)
    width = 1 + ebits + t
    sign = 1 << (width - 1) if math.copysign(1.0, v) < 0 else 0
    inf = ((1 << ebits) - 1) << t
    qnan = inf | (1 << (t - 1)) if has_inf else (1 << (width - 1)) - 1
    if math.isnan(v):
        if name == "E4M3":
            return sign | qnan if (ctrl48 or ctrl50) else 0
        return sign | qnan if ctrl48 else 0
    r = rnd(v, name)
    if abs(r) > vmax:
        if ctrl48:
            return sign | (inf if has_inf else qnan)
        r = math.copysign(vmax, v)
    a = abs(r)
    if a == 0:
        return sign
    E = math.frexp(a)[1] - 1
    if E < emin:
        return sign | int(a / 2.0 ** (emin - t))
    return sign | (E + bias) << t | (int(a / 2.0 ** (E - t)) - (1 << t))


def word(q: int, arch3510: bool):
    """(M1, N, MCB, OFF, SIGN) of a QUANT_PRE word."""
    m1 = float(np.uint32(q & 0xFFFFE000).view(np.float32))
    off = (q >> 37) & 0x1FF
    off = off - 512 if off >= 256 else off
    sign = (q >> 46) & 1
    if arch3510:
        return m1, 1, 0, off, sign
    return m1, ((q >> 32) & 0xF) + 1, (q >> 36) & 1, off, sign


def f32_of_int(x: int) -> float:
    """int32 -> float32, round to nearest even."""
    return rnd(float(x), "F32")


def b8(t: float, off: int, sign: int) -> int:
    if math.isnan(t):
        t = 0.0
    y = round(min(max(t, -256.0), 255.0)) + off
    lo, hi = (-128, 127) if sign else (0, 255)
    return min(max(y, lo), hi) & 0xFF


def out(x, mode: str, q: int = 0, relu: bool = False, ctrl48: bool = True, arch3510: bool = False,
        ctrl50: bool = False) -> int:
    """OUT(x): the destination bit pattern for one L0C value ``x`` (a Python float or int)."""
    is_int = isinstance(x, (int, np.integer))
    neg = (x < 0) if is_int else (math.copysign(1.0, x) < 0 and not math.isnan(x))
    if mode == "NoQuant":
        if is_int:
            return int(max(x, 0) if relu else x) & 0xFFFFFFFF
        return int(np.float32(0.0 if relu and neg else x).view(np.uint32))
    if mode in ("F322F16", "F322BF16"):
        v = 0.0 if relu and neg else float(x)
        return encode(v, "F16" if mode == "F322F16" else "BF16", ctrl48)
    base = mode[1:] if mode.startswith("V") else mode
    m1, n, mcb, off, sign = word(q, arch3510)
    if is_int:
        v = f32_of_int(max(-32768, min(32767, x >> n)) if mcb else x)
        neg = v < 0
    else:
        v = float(x)
    t = 0.0 if relu and neg else v * m1  # exact: 24 x 11 significant bits
    if base in ("REQ8", "QF322B8_PRE"):
        return b8(t, off, sign)
    if base in ("QF322HIF8_PRE", "QF322HIF8_PRE_HYBRID"):  # HIF8(F32(t)): the encoder's input is a float32
        return cube_hif8.encode(rnd(t, "F32"), hybrid=base.endswith("HYBRID"), inf_nan=ctrl48)
    name = {"DEQF16": "F16", "QF322F16_PRE": "F16", "QF322BF16_PRE": "BF16", "QS322BF16_PRE": "BF16",
            "QF322F32_PRE": "F32", "QF322FP8_PRE": "E4M3"}[base]
    return encode(t, name, ctrl48, ctrl50)


def hf32(bits: int, h: int, nearest_even: bool) -> int:
    """A float32 pattern rounded to ``h`` stored mantissa bits (NEAREST_ZERO = ties away from zero)."""
    if (bits >> 23) & 0xFF == 0xFF:
        return bits
    d = 23 - h
    r = bits & ((1 << d) - 1)
    b = bits & ~((1 << d) - 1)
    if r > 1 << (d - 1) or (r == 1 << (d - 1) and (not nearest_even or (b >> d) & 1)):
        b += 1 << d
    return b & 0xFFFFFFFF
