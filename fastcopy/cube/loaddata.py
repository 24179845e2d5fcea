"""LoadData 2D (``LoadData2DParams``), LoadData 2D V2 (``LoadData2DParamsV2``) and ``LoadDataWithTranspose``
(``LoadData2dTransposeParams`` / ``V2``): the planners (the entry points are in :mod:`fastcopy.api`).

LoadData 2D, repeat ``i`` (``repeatTimes == 0``: nothing): source fractal ``startIndex + sgn*i*srcStride``
(``sgn = -1`` only for ``addrMode = 1`` on GM->L1 of 310P/A2/A3/310B) to destination fractal ``i*(dstGap+1)``
(Atlas training: ``i``), the 512 bytes verbatim or, with ``ifTranspose`` (2-byte types, L1 -> L0A/L0B), each
16x16 fractal transposed.

LoadData 2D V2: the region ``Y`` of ``16*mStep x C0*kStep`` elements at fractal (``mStartPosition``,
``kStartPosition``) of an Nz source with ``srcStride`` fractals per column is written as Nz with ``dstStride``
fractals per column; with ``ifTranspose`` (L1 -> L0) as the Nz image of ``Y^T``.

LoadDataWithTranspose: square ``i`` (n fractals: b8 2 stacked, b16 1, b32 2 side by side) is transposed and its n
output fractals go to ``i*(dstGap+1) + j*(dstFracGap+1)``.

Plans are element maps (:mod:`fastcopy.cube.steps`) or direct fractal loops; cached on (params, tensors,
product).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..dtypes import ascend_name
from ..errors import RangeError, UnsupportedError
from ..ops.common import check_range, core_of
from ..dma.lower import make_plan
from ..dma.steps import Move
from ..products import (LOAD2D_ADDR_MODE, LOAD2D_PATHS, LOAD2D_TRANSPOSE_PATHS, LOAD2D_TRANSPOSE_V2_PATHS,
                        LOAD2DV2_PATHS, Phys, Product)
from . import fractal
from .b4 import is_b4, nibble_plan, nibbles_overlap
from .common import FRACTAL, overlap_warning, sid_warning, start
from .params import LoadData2dTransposeParams, LoadData2dTransposeParamsV2, LoadData2DParams, LoadData2DParamsV2
from .steps import element_steps

_350 = Product.ATLAS_350
_910 = Product.ATLAS_TRAINING
_GM, _L1 = Phys.GM, Phys.L1

# -------------------------------------------------------------------------------------------------- 2D
API_2D = "LoadData(LoadData2DParams)"


def plan_load2d(dst, src, params):
    pipe = core_of(API_2D, dst, src)
    return _plan_load2d(params.key(), src._sig, dst._sig, pipe.product)


@lru_cache(maxsize=4096)
def _plan_load2d(pkey, src, dst, product):
    api = API_2D
    p, call, on = start(api, LoadData2DParams, pkey, src, dst, product, LOAD2D_PATHS)
    warns = sid_warning(api, p.sid, product)
    l1_l0 = src.phys is _L1
    transpose = p.ifTranspose
    if transpose and not l1_l0:
        warns.append(f"{api}: ifTranspose=true is ignored on {on} (GM paths never transpose)")
        transpose = False
    if transpose and is_b4(src.dtype):
        raise UnsupportedError(f"{api}: ifTranspose=true with {ascend_name(src.dtype)} on {on}: the 4-bit load is "
                               "always issued with transpose off (use LoadDataWithTranspose)")
    if transpose and src.itemsize != 2:
        raise UnsupportedError(f"{api}: ifTranspose=true needs a 2-byte type; got {ascend_name(src.dtype)} "
                               f"({src.itemsize} bytes) on {on}")
    check_range(api, "addrMode", p.addrMode, 0, 1, "(0 increment, 1 decrement)", product)
    sgn = 1
    if p.addrMode:
        if call.path == (_GM, _L1) and product in LOAD2D_ADDR_MODE:
            sgn = -1
        else:
            warns.append(f"{api}: addrMode=1 has no effect on {on}: the index always increments there")
    gap = p.dstGap
    if product is _910 and gap:
        warns.append(f"{api}: dstGap={gap} is ignored on {on}: {product} writes the fractals contiguously "
                     "(dstGap is not passed to the instruction)")
        gap = 0
    if p.repeatTimes == 0:
        return make_plan(api, (), src, dst, warns)
    r = p.repeatTimes
    last = p.startIndex + sgn * (r - 1) * p.srcStride
    if last < 0:
        raise RangeError(f"{api}: addrMode=1 (decrement) takes the source fractal index below 0: startIndex="
                         f"{p.startIndex} - (repeatTimes-1)*srcStride = {last} fractals on {on}")
    if product is _350:
        warns += _350_domain(api, call, p, on)
    sstride, dstride = sgn * p.srcStride * FRACTAL, (gap + 1) * FRACTAL
    base = p.startIndex * FRACTAL
    if transpose:  # dst[c][r] = src[r][c] of each 16x16 fractal
        step = Move((base,), (0,), 2, ((r, sstride, dstride), (16, 32, 2), (16, 2, 32)))
    else:
        step = Move((base,), (0,), FRACTAL, ((r, sstride, dstride),))
    return make_plan(api, (step,), src, dst, warns)


def _350_domain(api, call, p, on) -> list:
    """Where the Atlas 350 realisation on the 2D V2 instruction agrees with the documented mapping."""
    conds = []
    if call.src.phys is _GM:
        if p.srcStride != 1:
            conds.append(f"srcStride={p.srcStride} != 1")
        if p.addrMode:
            conds.append("addrMode=1")
    elif p.ifTranspose and call.dst.phys is Phys.L0B:
        if p.startIndex:
            conds.append(f"startIndex={p.startIndex} != 0 with ifTranspose")
    else:
        if p.startIndex and p.srcStride != 1:
            conds.append(f"startIndex={p.startIndex} != 0 and srcStride={p.srcStride} != 1")
        if p.ifTranspose and p.dstGap:
            conds.append(f"dstGap={p.dstGap} != 0 with ifTranspose")
    return [f"{api}: {c}: {on} realises LoadData2DParams on the 2D V2 instruction, which moves different fractals "
            "here; fastcopy computes the documented mapping" for c in conds]


# -------------------------------------------------------------------------------------------------- 2D V2
API_V2 = "LoadData(LoadData2DParamsV2)"


def plan_load2dv2(dst, src, params):
    pipe = core_of(API_V2, dst, src)
    return _plan_load2dv2(params.key(), src._sig, dst._sig, pipe.product)


@lru_cache(maxsize=4096)
def _plan_load2dv2(pkey, src, dst, product):
    api = API_V2
    p, call, on = start(api, LoadData2DParamsV2, pkey, src, dst, product, LOAD2DV2_PATHS)
    warns = sid_warning(api, p.sid, product)
    check_range(api, "mStartPosition", p.mStartPosition, 0, 65535, "16-row fractals", product,
                "the instruction field is 16 bits")
    check_range(api, "kStartPosition", p.kStartPosition, 0, 65535, "fractal columns (32 bytes)", product,
                "the instruction field is 16 bits")
    check_range(api, "mStep", p.mStep, 0, 255, "16-row fractals", product)
    check_range(api, "kStep", p.kStep, 0, 255, "fractal columns (32 bytes)", product)
    check_range(api, "srcStride", p.srcStride, 0, 32767, "fractals", product, "the instruction field is int16")
    transpose = p.ifTranspose
    if transpose and src.phys is _GM:
        warns.append(f"{api}: ifTranspose=true is ignored on {on} (issued with transpose off)")
        transpose = False
    es = src.itemsize
    b4 = is_b4(src.dtype)
    if transpose:
        need = ("mStep", 4) if b4 else {1: ("mStep", 2), 4: ("kStep", 2)}.get(es)
        if need and getattr(p, need[0]) % need[1]:
            raise RangeError(f"{api}: {need[0]}={getattr(p, need[0])} is not a multiple of {need[1]} with "
                             f"ifTranspose=true for {ascend_name(src.dtype)} on {on} (a transposed square needs "
                             f"{need[1]} source fractals)")
    ms, ks = p.mStep, p.kStep
    if ms == 0 or ks == 0:
        return make_plan(api, (), src, dst, warns)
    base = (p.kStartPosition * p.srcStride + p.mStartPosition) * FRACTAL
    if not transpose:
        step = Move((base,), (0,), ms * FRACTAL, ((ks, p.srcStride * FRACTAL, p.dstStride * FRACTAL),))
        overlap = ks > 1 and p.dstStride < ms
        if overlap:
            warns.append(overlap_warning(api, call) + f" (dstStride={p.dstStride} < mStep={ms})")
        return make_plan(api, (step,), src, dst, warns, exact=overlap)
    u = 2 if b4 else 1  # address units per byte: nibbles for 4-bit types
    eu = 1 if b4 else es  # element size in those units
    c0 = 32 * u // eu
    kk, mm, r, c = np.ix_(np.arange(ks), np.arange(ms), np.arange(16), np.arange(c0))
    srcb = (base + (kk * p.srcStride + mm) * FRACTAL + r * 32) * u + c * eu
    i, j = mm * 16 + r, kk * c0 + c  # element (i, j) of Y is element (j, i) of Y^T
    dstb = fractal.offset("Nz", j, i, (16, c0), p.dstStride) * eu + 0 * srcb
    # b4: complete 64 x 64 squares (mStep % 4 == 0), so every destination byte gets both its nibbles
    steps, overlap = ((), nibbles_overlap(dstb)) if b4 else element_steps(dstb, srcb, es)
    if overlap:
        warns.append(overlap_warning(api, call) + f" (dstStride={p.dstStride} is below the transposed region's "
                     f"{-(-ks * c0 // 16)} fractals per column)")
    if b4:
        return nibble_plan(api, dstb, srcb, src, dst, warns)
    return make_plan(api, steps, src, dst, warns, exact=overlap)


# -------------------------------------------------------------------------------------------------- transpose
API_T = "LoadDataWithTranspose"
#: fractals per square by element size (b8: two stacked, b16: one, b32: two side by side; b4: four stacked)
SQUARE = {1: 2, 2: 1, 4: 2}
SQUARE_B4 = 4


def plan_transpose(dst, src, params):
    if not isinstance(params, (LoadData2dTransposeParams, LoadData2dTransposeParamsV2)):
        raise UnsupportedError(f"{API_T}: takes LoadData2dTransposeParams or LoadData2dTransposeParamsV2, got "
                               f"{type(params).__name__}")
    pipe = core_of(API_T, dst, src)
    return _plan_transpose(type(params), params.key(), src._sig, dst._sig, pipe.product)


@lru_cache(maxsize=4096)
def _plan_transpose(cls, pkey, src, dst, product):
    v2 = cls is LoadData2dTransposeParamsV2
    api = f"{API_T}({cls.__name__})"
    if product is _350 and dst.phys is Phys.L0A:
        raise UnsupportedError(f"{api}: {product} has no LoadDataWithTranspose to A2 (L0A); only B1 -> B2")
    p, call, on = start(api, cls, pkey, src, dst, product, LOAD2D_TRANSPOSE_V2_PATHS if v2 else LOAD2D_TRANSPOSE_PATHS)
    es = src.itemsize
    b4 = is_b4(src.dtype)
    n = SQUARE_B4 if b4 else SQUARE[es]
    warns = []
    if p.addrMode:
        warns.append(f"{api}: addrMode={p.addrMode} has no effect on {on}: every implementation increments")
    if es == 2 and p.dstFracGap:
        warns.append(f"{api}: dstFracGap={p.dstFracGap} is ignored for 2-byte types on {on} (one fractal per "
                     "square)")
    if p.repeatTimes == 0:
        return make_plan(api, (), src, dst, warns)
    u = 2 if b4 else 1  # address units per byte: nibbles for 4-bit types
    eu = 1 if b4 else es  # element size in those units
    c0 = 32 * u // eu
    i, j, r, c = np.ix_(np.arange(p.repeatTimes), np.arange(n), np.arange(16), np.arange(c0))
    if es == 1:  # b8 / b4: Y = the n fractals stacked, G_j[r][c] = Y[c][16j + r]
        f, within = c // 16, (c % 16) * 32 * u + (16 * j + r) * eu
    elif es == 2:
        f, within = 0 * c, c * 32 + r * 2
    else:
        f, within = r // 8, (8 * j + c) * 32 + (r % 8) * 4
    if v2:
        sfrac = p.startIndex + i * p.srcStride + f * (p.srcFracGap + 1)
    else:
        sfrac = (p.startIndex + i * p.srcStride) * n + f
    srcb = sfrac * FRACTAL * u + within
    dstb = ((i * (p.dstGap + 1) + j * (p.dstFracGap + 1)) * FRACTAL + r * 32) * u + c * eu + 0 * srcb
    steps, overlap = ((), nibbles_overlap(dstb)) if b4 else element_steps(dstb, srcb, es)
    if overlap:
        warns.append(overlap_warning(api, call) + f" (dstGap={p.dstGap}, dstFracGap={p.dstFracGap}: the {n} "
                     "output fractals of consecutive squares collide; dstGap = n-1 is contiguous)")
    if b4:
        return nibble_plan(api, dstb, srcb, src, dst, warns)
    return make_plan(api, steps, src, dst, warns, exact=overlap)


__all__ = ["plan_load2d", "plan_load2dv2", "plan_transpose"]
