"""img2col V1: ``LoadData(dst, src, LoadData3DParamsV1)`` (Atlas training series, inference AI Core; L1 -> L0A, L0B
or UB).

Experimental: the vendor pages describe the fields but give no readable example, so the mapping below is inferred
from the field descriptions and every call warns. The feature map in L1 is NC1HWC0 as for the V2 loads (``H``,
``W`` and the padding from FMATRIX). Each repeat writes one fractal of 16 rows x C0 elements:

* rows = 16 sliding windows. The first window's top-left corner is (``leftTopH``, ``leftTopW``) in map coordinates
  (negative = inside the top / left padding); the next one is ``strideW`` pixels to the right, and a window that
  would pass the right edge of the padded map (``w + Ew > W + padRight``) wraps to (``h + strideH``, ``-padLeft``).
* columns = the C0 channels of channel block ``c``, read at kernel tap (``i``, ``j``):
  ``L1(c, h + i*dilationFilterH, w + j*dilationFilterW, c0)``, the pad element outside the map.
* mode 0: repeat ``r`` takes the ``r``-th tap after (``c1Index``, ``fetchFilterH``, ``fetchFilterW``) in the order
  of the img2col columns (kernel column fastest, then kernel row, then channel block), with the same 16 windows;
  mode 1: repeat ``r`` takes windows ``16r .. 16r+15`` of the walk, with the same tap.
* fractal ``r`` goes to destination fractal ``r*jumpStride``, rows row-major (row ``i`` at byte ``32*i``), on L0A,
  L0B and UB alike (UB: 32-byte aligned start, the fractals still 512 bytes apart per ``jumpStride``).
* ``cSize = 1``: the map holds ``CS = 8 / sizeof(T)`` channels per pixel (4 half, 8 int8: 8 bytes, the "4-channel
  aligned" map), ``L1(c, h, w, cs)`` at element ``((c*H + h)*W + w)*CS + cs``; a fractal row then packs
  ``C0 / CS = 4`` consecutive taps (column ``c``: tap ``c // CS``, channel ``c % CS``), and mode 0 advances 4 taps
  per repeat.

``SetLoadDataBoundary`` counts 32-byte units for this form.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..dma.lower import make_plan
from ..errors import RangeError, ParamError
from ..ops.common import check_range, core_of
from ..products import LOAD3D_V1_PATHS
from .common import FRACTAL, start
from .img2col import resolve_reads, struct_registers
from .params import LoadData3DParamsV1
from .registers import FMATRIX_L, L1_3D_SIZE, PADDING
from .steps import element_steps

API = "LoadData(LoadData3DParamsV1)"
#: SetLoadDataBoundary's unit for this form (bytes)
BOUNDARY_UNIT = 32
EXPERIMENTAL = (f"{API} is experimental in fastcopy: its mapping (16 sliding windows x C0 channels per repeat) is "
                "inferred from the field descriptions without a numeric example; check it on hardware")
#: bytes per pixel of the map with cSize = 1 (4 half / 8 int8 channels: the "4-channel aligned" feature map)
CSIZE1_PIXEL = 8


def windows(n: int, top: int, left: int, sh: int, sw: int, ew: int, W: int, pads: tuple) -> np.ndarray:
    """``(n, 2)`` int64: (h, w) of the top-left corner of the first ``n`` windows of the walk."""
    out = np.empty((n, 2), np.int64)
    h, w = top, left
    for k in range(n):
        out[k] = h, w
        w += sw
        if w + ew > W + pads[1]:
            h, w = h + sh, -pads[0]
    return out


def plan_load3d_v1(dst, src, params, config=None):
    """Plan a V1 3D load; writes the registers the call sets (``isSetFMatrix`` / ``isSetPadding``) first."""
    pipe = core_of(API, dst, src)
    product = pipe.product
    state = pipe.state
    new, pre_warns = struct_registers(API, params, config, src, product)
    regs = {**{k: state.get(k) for k in (FMATRIX_L, PADDING, L1_3D_SIZE)}, **new}
    boundary = (regs[L1_3D_SIZE] or 0) * BOUNDARY_UNIT
    plan = _plan(params.key(), src._sig, dst._sig, product, regs[FMATRIX_L], regs[PADDING], boundary,
                 src.offset if boundary else 0, tuple(pre_warns))
    state.update(new)  # the registers the call writes, also when it moves nothing
    return plan


#: (field, lowest, highest, unit) of the V1 fields the instruction checks
RANGES = (("c1Index", 0, 4095, "C0 channel blocks"), ("fetchFilterW", 0, 254, "taps"),
          ("fetchFilterH", 0, 254, "taps"), ("leftTopW", -255, 32767, "pixels"), ("leftTopH", -255, 32767, "pixels"),
          ("strideW", 1, 63, "pixels"), ("strideH", 1, 63, "pixels"), ("filterW", 1, 255, "taps"),
          ("filterH", 1, 255, "taps"), ("dilationFilterW", 1, 255, "pixels"), ("dilationFilterH", 1, 255, "pixels"),
          ("jumpStride", 1, 127, "fractals"), ("repeatMode", 0, 1, "(0 kernel taps, 1 windows)"),
          ("repeatTime", 0, 255, "repeats"), ("cSize", 0, 1, "(0 C0 channels per pixel, 1 8-byte pixels)"))


@lru_cache(maxsize=1024)
def _plan(pkey, src, dst, product, fmatrix, padding, boundary, src_l1, pre_warns):
    p, call, on = start(API, LoadData3DParamsV1, pkey, src, dst, product, LOAD3D_V1_PATHS)
    es = src.itemsize
    c0 = 32 // es
    warns = [EXPERIMENTAL + f" ({product})", *pre_warns]
    for field, lo, hi, unit in RANGES:
        check_range(API, field, getattr(p, field), lo, hi, unit, product)
    for tap, size in (("fetchFilterW", "filterW"), ("fetchFilterH", "filterH")):
        if getattr(p, tap) >= getattr(p, size):
            raise RangeError(f"{API}: {tap}={getattr(p, tap)} is outside [0, {size}-1 = {getattr(p, size) - 1}] "
                             f"taps (a tap of the {p.filterH} x {p.filterW} kernel) on {product}")
    if fmatrix is None:
        raise ParamError(f"{API}: the FMATRIX register is read before it was written on {product}: call SetFmatrix "
                         "first or load with isSetFMatrix=true")
    H, W, pads = fmatrix
    R = p.repeatTime
    if 0 in (H, W, R):
        return make_plan(API, (), src, dst, warns)  # no-op (registers set by the call are still written)
    Kh, Kw = p.filterH, p.filterW
    sh, sw, dh, dw = p.strideH, p.strideW, p.dilationFilterH, p.dilationFilterW
    eh, ew = (Kh - 1) * dh + 1, (Kw - 1) * dw + 1
    if W + pads[0] + pads[1] < ew or H + pads[2] + pads[3] < eh:
        raise RangeError(f"{API}: the dilated filter ({Kh} x {Kw} taps, dilation {dh} x {dw}) does not fit the padded "
                         f"{H} x {W} feature map on {product}")
    mode = p.repeatMode
    cs = CSIZE1_PIXEL // es if p.cSize else c0  # channels per pixel of the map in L1
    if p.cSize:  # (one warning per call: the experimental one says what cSize=1 reads)
        warns[0] = (f"{EXPERIMENTAL}; cSize=1 reads a map of 8-byte pixels ({cs} channels each) and packs "
                    f"{c0 // cs} kernel taps per fractal row ({on})")
    win = windows(16 * R if mode == 1 else 16, p.leftTopH, p.leftTopW, sh, sw, ew, W, pads)
    if int(win[:, 0].max()) + eh > H + pads[3]:
        warns.append(f"{API}: windows run past the bottom of the padded {H} x {W} map (rows beyond Ho*Wo) on "
                     f"{product}; they continue the walk and read padding there")
    r = np.arange(R, dtype=np.int64)[:, None, None]
    i = np.arange(16, dtype=np.int64)[None, :, None]
    c = np.arange(c0, dtype=np.int64)[None, None, :]
    t = (p.c1Index * Kh + p.fetchFilterH) * Kw + p.fetchFilterW + (r * (c0 // cs) if mode == 0 else 0 * r) + c // cs
    w_at = win[(16 * r + i) if mode == 1 else i + 0 * r]  # (R, 16, 1, 2)
    h = w_at[..., 0] + (t // Kw % Kh) * dh
    w = w_at[..., 1] + (t % Kw) * dw
    inside = (h >= 0) & (h < H) & (w >= 0) & (w < W)
    srce = np.where(inside, (((t // (Kw * Kh)) * H + h) * W + w) * cs + c % cs, -1)
    srcb, pad, pwarns = resolve_reads(API, np.where(srce >= 0, srce * es, -1), boundary, src_l1, padding,
                                      src.dtype, product)
    warns += pwarns
    dstb = r * p.jumpStride * FRACTAL + i * 32 + c * es + 0 * srcb
    steps, _ = element_steps(dstb, srcb, es, pad)  # jumpStride >= 1: fractals never overlap
    return make_plan(API, steps, src, dst, warns)

__all__ = ["plan_load3d_v1", "windows"]
