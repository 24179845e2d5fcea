"""HiFloat8 (``hifloat8_t``, Atlas 350): decode and encode, whole arrays at once, bit for bit.

fastcopy has no numpy type for HiFloat8: its data are ``uint8`` bit patterns (the ``hifloat8_t`` name maps to the
1-byte container). What the bytes mean is said by the operation: an Atlas 350 Mmad with ``uint8`` x ``uint8``
operands and a ``float`` result reads them as HiFloat8; a Fixpipe with a ``(V)QF322HIF8_PRE(_HYBRID)`` mode writes
HiFloat8 codes. :func:`decode_hif8` / :func:`encode_hif8` convert between the codes and float32 values.

Code layout, values and the rounding rules (TA for "round", TA/SSR for "hybrid") are described in
:mod:`fastcopy.reference.cube_hif8`, the one-value-at-a-time oracle these functions are tested against (all 256
codes, every half value and large float32 samples per mode).
"""

from __future__ import annotations

import functools

import numpy as np

NAN_CODE = 0x80
INF_CODE = 0x6F
SAT_CODE = 0x6E
OVERFLOW = 1.25 * 2.0**15

#: binade |E| -> (prefix value, exponent bits, fraction bits) for E in [-15, 15]; denormal/zero handled apart
_CLASS = {0: (1, 0, 3), 1: (2, 1, 3), 2: (4, 2, 3), 3: (4, 2, 3), **{a: (8, 3, 2) for a in range(4, 8)},
          **{a: (12, 4, 1) for a in range(8, 16)}}


@functools.lru_cache(maxsize=2)
def _table(inf_nan: bool) -> np.ndarray:
    """float32 value of each of the 256 codes."""
    out = np.empty(256, np.float64)
    for a, (dot, ebits, fbits) in _CLASS.items():
        for e in ((a,) if a == 0 else (a, -a)):
            field = (int(e < 0) << (ebits - 1)) | (a - (1 << (ebits - 1))) if ebits else 0
            for f in range(1 << fbits):
                code = dot << 3 | field << fbits | f
                out[code] = 2.0**e * (1 + f / 2**fbits)
    out[1:8] = 2.0 ** (np.arange(1, 8) - 23)  # denormals
    out[0] = 0.0
    out[INF_CODE] = np.inf if inf_nan else 32768.0
    out[128:] = -out[:128]
    out[NAN_CODE] = np.nan if inf_nan else 0.0
    out = out.astype(np.float32)
    out.flags.writeable = False
    return out


def decode_hif8(codes, inf_nan: bool = True) -> np.ndarray:
    """float32 values of HiFloat8 ``codes`` (uint8 bit patterns). ``inf_nan=False`` (saturation mode): the NaN code
    reads as 0 and the infinity codes as +-32768."""
    return _table(bool(inf_nan))[np.asarray(codes, np.uint8)]


def encode_hif8(values, rounding: str = "round", inf_nan: bool = True) -> np.ndarray:
    """HiFloat8 codes (uint8) of ``values`` (converted to float32 first). ``rounding``: ``"round"`` (ties away from
    zero, ``QF322HIF8_PRE``) or ``"hybrid"`` (ties away below ``|E| = 4``, the SSR rule above it,
    ``QF322HIF8_PRE_HYBRID``). ``inf_nan=False`` (saturation mode): overflow gives +-32768 and NaN gives 0."""
    if rounding not in ("round", "hybrid"):
        raise ValueError(f"encode_hif8: rounding={rounding!r} is not 'round' or 'hybrid'")
    x = np.asarray(values, np.float32)
    shape = x.shape
    bits = x.reshape(-1).view(np.uint32).astype(np.int64)
    neg = (bits >> 31).astype(bool)
    expf = (bits >> 23) & 0xFF
    frac = bits & 0x7FFFFF
    nan = (expf == 0xFF) & (frac != 0)
    with np.errstate(invalid="ignore"):
        over = (expf == 0xFF) | (np.abs(x.reshape(-1)) >= OVERFLOW)
    e = np.where(expf == 0, -200, expf - 127)  # float32 subnormals and zeros: far below the smallest code
    a = np.abs(e)
    b = np.select([e < -15, a == 0, a <= 3, a <= 7], [0, 3, 3, 2], 1)
    # TA: top b+1 fraction bits, +1, drop one bit
    r = ((frac >> (22 - b)) + 1) >> 1
    ta_carry = r == (1 << b)
    f = np.where(ta_carry, 0, r)
    carry = ta_carry
    if rounding == "hybrid":
        sh = 23 - b
        hv = frac >> sh
        rest = frac & ((1 << sh) - 1)
        up = (rest >> (9 - b)) >= (rest & 0x3FFF)
        s_carry = up & (hv == (1 << b) - 1)
        use = a >= 4
        f = np.where(use, np.where(up, np.where(s_carry, 0, hv + 1), hv), f)
        carry = np.where(use, s_carry, ta_carry)
    e = e + carry
    a = np.abs(e)
    dot = np.select([a == 0, a == 1, a <= 3, a <= 7], [1, 2, 4, 8], 12)
    ebits = np.select([a == 0, a == 1, a <= 3, a <= 7], [0, 1, 2, 3], 4)
    fbits = np.select([a == 0, a <= 3, a <= 7], [3, 3, 2], 1)
    field = np.where(ebits > 0, ((e < 0).astype(np.int64) << np.maximum(ebits - 1, 0))
                     | (a - (1 << np.maximum(ebits - 1, 0))), 0)
    code = (dot << 3) | (field << fbits) | f
    code = np.where(e < -15, e + 23, code)  # denormals (E -22..-16 -> 1..7)
    code = code | np.where(neg, 0x80, 0)
    code = np.where(e < -22, 0, code)  # below the smallest code: +0
    code = np.where(over, np.where(neg, 0x80, 0) | (INF_CODE if inf_nan else SAT_CODE), code)
    code = np.where(nan, NAN_CODE if inf_nan else 0, code)
    return code.astype(np.uint8).reshape(shape)
